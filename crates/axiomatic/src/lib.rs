//! An independent, deliberately simple axiomatic checker.
//!
//! It shares no consistency code with the explorer: it enumerates candidate
//! executions (a trace per thread with guessed read values, every reads-from
//! map, every modification order) and evaluates each model's axioms as written
//! in herd's cat files (`rc11.cat`, its C++20 variant, `c11_simp.cat`) on
//! plain relations. Exponential, so only for litmus-sized programs: the tests
//! use it to confirm that each execution the explorer visits is consistent and
//! that the explorer misses none; the CLI uses it for the `c11` model, whose
//! load buffering (po ∪ rf cycles) the explorer does not construct.

pub mod rel;

use c11check_model::{Action, EventId, ExecutionGraph, Loc, MemOrder, RmwOp, Value};
use rel::Rel;
use std::collections::{BTreeMap, BTreeSet};

/// The models this checker knows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AxModel {
    Cpp20,
    Rc11,
    /// herd's `c11_simp.cat`: original C11, load buffering allowed.
    C11,
    Sc,
    /// C++20 restricted to what multi-copy-atomic hardware shows: also
    /// `ppo ∪ rfe ∪ mo ∪ rb` acyclic (see `mca_keeps`).
    Mca,
    /// C++20 programs compiled for x86-64 (the standard mapping) under
    /// x86-TSO: also `ppo ∪ rfe ∪ mo ∪ rb` acyclic with x86's ppo (see
    /// `tso_keeps`).
    Tso,
    /// A model this checker has no definition of its own for (one made
    /// with `Model::custom`, say): C++20's axioms adjusted by the model's
    /// rules (RC11's release sequences, one total order, the program order
    /// its hardware keeps), checked here by enumeration as for the others.
    Custom(c11check_model::Model),
}

impl AxModel {
    /// The definition of a model by its name or any alias `--model` takes
    /// (the explorer's names, and `c11`, which only this checker has).
    pub fn from_name(s: &str) -> Option<AxModel> {
        if s.eq_ignore_ascii_case("c11") {
            return Some(AxModel::C11);
        }
        c11check_model::Model::from_name(s).map(AxModel::from)
    }

    /// The model's name (the explorer's, or `c11`).
    pub fn name(self) -> &'static str {
        match self {
            AxModel::C11 => "c11",
            AxModel::Custom(m) => m.name(),
            known => KNOWN
                .iter()
                .find(|(_, ax)| *ax == known)
                .map_or("", |(m, _)| m.name()),
        }
    }

    // Which axioms apply: the listed models' are this checker's own facts
    // (an oracle shares nothing with what it checks but the names); a
    // custom model's come from its rules.

    /// Every atomic access behaves as seq_cst.
    fn all_seq_cst(self) -> bool {
        match self {
            AxModel::Sc => true,
            AxModel::Custom(m) => m.all_seq_cst(),
            _ => false,
        }
    }

    /// Release sequences also start at the thread's last release write.
    fn rc11_release_sequences(self) -> bool {
        match self {
            AxModel::Rc11 => true,
            AxModel::Custom(m) => m.rc11_release_sequences(),
            _ => false,
        }
    }

    /// One total order over every access (`po ∪ rf ∪ mo ∪ rb` acyclic).
    fn total_order(self) -> bool {
        match self {
            AxModel::Sc => true,
            AxModel::Custom(m) => m.total_order(),
            _ => false,
        }
    }

    /// A hardware model: `ppo ∪ rfe ∪ mo ∪ rb` acyclic too.
    fn hardware(self) -> bool {
        match self {
            AxModel::Mca | AxModel::Tso => true,
            AxModel::Custom(m) => m.is_hardware(),
            _ => false,
        }
    }
}

/// The brute-force definition of each model the explorer checks, to
/// compare the two on the same model: this checker's own for the listed
/// models, the model's rules for any other.
impl From<c11check_model::Model> for AxModel {
    fn from(m: c11check_model::Model) -> AxModel {
        KNOWN
            .iter()
            .find(|(known, _)| *known == m)
            .map_or(AxModel::Custom(m), |&(_, ax)| ax)
    }
}

/// The listed models this checker has its own definitions of.
const KNOWN: [(c11check_model::Model, AxModel); 5] = [
    (c11check_model::Model::Cpp20, AxModel::Cpp20),
    (c11check_model::Model::Rc11, AxModel::Rc11),
    (c11check_model::Model::Sc, AxModel::Sc),
    (c11check_model::Model::Mca, AxModel::Mca),
    (c11check_model::Model::Tso, AxModel::Tso),
];

/// One event of a candidate execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ev {
    /// `None` for initialisation writes.
    pub thread: Option<u32>,
    pub index: u32,
    pub action: Action,
    pub loc: Option<Loc>,
    pub mode: MemOrder,
    pub reads: bool,
    pub writes: bool,
    pub rval: Value,
    pub wval: Value,
    /// A weak CAS that failed although the value matched.
    pub spurious: bool,
}

impl Ev {
    fn is_fence(&self) -> bool {
        matches!(self.action, Action::Fence { .. })
    }
    fn atomic(&self) -> bool {
        self.loc.is_some() && self.mode != MemOrder::NonAtomic
    }
    fn id(&self) -> EventId {
        match self.thread {
            Some(t) => EventId::new(t, self.index),
            None => EventId::init(self.loc.unwrap()),
        }
    }
}

/// Whether compare-exchange `a` writes when it reads `v` (spurious failures
/// aside). Written out here rather than taken from the model crate, so that
/// this checker stays independent of the explorer's semantics: a take
/// (`Action::take`) needs at least `expected`, a compare-exchange exactly it.
fn cas_succeeds(a: &Action, v: Value) -> bool {
    match *a {
        Action::Cas { expected, take, .. } => {
            if take {
                v >= expected
            } else {
                v == expected
            }
        }
        _ => false,
    }
}

/// What compare-exchange `a` writes when it succeeds after reading `v`: a
/// take leaves what it read minus what it took.
fn cas_written(a: &Action, v: Value) -> Value {
    match *a {
        Action::Cas {
            expected,
            new,
            take,
            ..
        } => {
            if take {
                v - expected
            } else {
                new
            }
        }
        _ => 0,
    }
}

/// Builds the event of `action` given what it read (and, for a CAS, whether it wrote).
pub fn make_event(thread: u32, index: u32, action: Action, rval: Value, wrote: bool) -> Ev {
    let (loc, reads, writes, wval, mode) = match action {
        Action::Load { loc, ord } => (Some(loc), true, false, 0, ord),
        Action::Store { loc, ord, val } => (Some(loc), false, true, val, ord),
        Action::Rmw {
            loc,
            ord,
            op,
            operand,
            width,
        } => (
            Some(loc),
            true,
            true,
            width.normalize(op.apply(rval, operand)),
            ord,
        ),
        Action::Cas {
            loc,
            success,
            failure,
            ..
        } => (
            Some(loc),
            true,
            wrote,
            if wrote { cas_written(&action, rval) } else { 0 },
            if wrote { success } else { failure },
        ),
        Action::Fence { ord } => (None, false, false, 0, ord),
        _ => (None, false, false, 0, MemOrder::Relaxed),
    };
    let spurious = !wrote && cas_succeeds(&action, rval);
    Ev {
        thread: Some(thread),
        index,
        action,
        loc,
        mode,
        reads,
        writes,
        rval,
        wval,
        spurious,
    }
}

/// A candidate execution: events (initialisation writes first), reads-from and
/// a total modification order per location.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub evs: Vec<Ev>,
    /// For each event, the write it reads from.
    pub rf: Vec<Option<usize>>,
    /// For each location, its writes in modification order.
    pub mo: BTreeMap<Loc, Vec<usize>>,
}

/// Verdict on one candidate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub consistent: bool,
    pub race: bool,
}

fn mode_in(m: MemOrder, set: &[MemOrder]) -> bool {
    set.contains(&m)
}

/// Which half of an access a node of the hardware relation is: a
/// read-modify-write is performed as a read and then a write, which the
/// hardware may order apart from other accesses.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Part {
    Read,
    Write,
}

/// Whether a multi-copy-atomic machine (ARMv8) keeps part `pa` of access
/// `a` before part `pb` of the later access `b` of its thread, for a C++20
/// program compiled with the usual mapping (ldar/ldapr, stlr, dmb ish, dmb
/// ishld). `fences` are the orders of the fences between them. Kept: after
/// an acquire read (`[R⊒acq];po`, the read half of an acquire RMW only),
/// before a release write (`po;[W⊒rel]`), between SeqCst accesses
/// (`[SC];po;[SC]`), around an SC fence (`po;[Fsc];po`), a read before an
/// acquire fence and what follows (`[R];po;[F⊒acq];po`), what precedes a
/// release fence and a write after it (`po;[F⊒rel];po;[W]`), and program
/// order at one location but a write before a read (store forwarding).
/// Relaxed accesses to different locations stay unordered (no dependencies
/// are tracked). ARMv8's `po;[L];coi` needs no edge: `po;[W⊒rel]` and `mo`
/// give it.
fn mca_keeps(a: &Ev, pa: Part, b: &Ev, pb: Part, fences: &[MemOrder]) -> bool {
    let acq = [MemOrder::Acquire, MemOrder::AcqRel, MemOrder::SeqCst];
    let rel = [MemOrder::Release, MemOrder::AcqRel, MemOrder::SeqCst];
    (pa == Part::Read && mode_in(a.mode, &acq))
        || (pb == Part::Write && mode_in(b.mode, &rel))
        || (a.mode == MemOrder::SeqCst && b.mode == MemOrder::SeqCst)
        || fences.contains(&MemOrder::SeqCst)
        || (pa == Part::Read && fences.iter().any(|&f| mode_in(f, &acq)))
        || (pb == Part::Write && fences.iter().any(|&f| mode_in(f, &rel)))
        || (a.loc == b.loc && !(pa == Part::Write && pb == Part::Read))
}

/// Whether x86-TSO keeps part `pa` of access `a` before part `pb` of the
/// later access `b`, for a C++20 program compiled with the standard
/// mapping (loads and non-SeqCst stores `mov`, SeqCst stores `xchg`,
/// read-modify-writes and compare-exchanges `lock`-prefixed, a failing one
/// too, SeqCst fences `mfence`, other fences nothing): everything but a
/// plain store before a plain load, unless an `mfence` or a locked
/// instruction lies between them (`barrier`).
fn tso_keeps(a: &Ev, pa: Part, b: &Ev, pb: Part, barrier: bool) -> bool {
    let locked = |e: &Ev| {
        (e.reads && (e.writes || matches!(e.action, Action::Cas { .. })))
            || (e.writes && e.mode == MemOrder::SeqCst)
    };
    let buffered = pa == Part::Write && !locked(a);
    let passes = pb == Part::Read && !locked(b);
    !(buffered && passes) || barrier
}

/// The pairs of access halves (event, is the write half) in program order
/// that `model`'s hardware keeps, as the model's own `preserved_order`
/// says, per thread.
fn model_keeps(
    evs: &[Ev],
    model: c11check_model::Model,
) -> std::collections::HashSet<(usize, bool, usize, bool)> {
    let mut kept = std::collections::HashSet::new();
    let Some(ppo) = model.preserved_order() else {
        return kept;
    };
    let threads: BTreeSet<u32> = evs.iter().filter_map(|e| e.thread).collect();
    for t in threads {
        let mut mine: Vec<usize> = (0..evs.len())
            .filter(|&i| evs[i].thread == Some(t))
            .collect();
        mine.sort_by_key(|&i| evs[i].index);
        let events: Vec<c11check_model::Event> = mine
            .iter()
            .map(|&i| {
                let mut e = c11check_model::Event::new(evs[i].action, 0);
                e.read_val = evs[i].rval;
                e.spurious_fail = evs[i].spurious;
                e
            })
            .collect();
        ppo(&events, &mut |a, b| {
            kept.insert((mine[a.index], a.write, mine[b.index], b.write));
        });
    }
    kept
}

/// Whether the hardware models' global order, `ppo ∪ rfe ∪ mo ∪ rb` plus
/// thread start and join, is acyclic, over the halves of the accesses.
fn hardware_acyclic(
    evs: &[Ev],
    model: AxModel,
    rf: &Rel,
    mo: &Rel,
    rb: &Rel,
    start_join: &Rel,
) -> bool {
    let n = evs.len();
    let access = |i: usize| evs[i].loc.is_some() && evs[i].thread.is_some();
    let has = |i: usize, p: Part| {
        access(i)
            && match p {
                Part::Read => evs[i].reads,
                Part::Write => evs[i].writes,
            }
    };
    let node = |i: usize, p: Part| 2 * i + (p == Part::Write) as usize;
    let parts = [Part::Read, Part::Write];
    let custom_kept = match model {
        AxModel::Custom(m) => model_keeps(evs, m),
        _ => Default::default(),
    };
    let mut g = Rel::empty(2 * n);
    for a in 0..n {
        if has(a, Part::Read) && has(a, Part::Write) {
            g.set(node(a, Part::Read), node(a, Part::Write));
        }
        for b in 0..n {
            let (ea, eb) = (&evs[a], &evs[b]);
            let same_thread = ea.thread.is_some() && ea.thread == eb.thread;
            if same_thread && ea.index < eb.index && access(a) && access(b) {
                let between: Vec<&Ev> = evs
                    .iter()
                    .filter(|e| e.thread == ea.thread && e.index > ea.index && e.index < eb.index)
                    .collect();
                let fences: Vec<MemOrder> = between
                    .iter()
                    .filter(|e| e.is_fence())
                    .map(|e| e.mode)
                    .collect();
                let barrier = between.iter().any(|e| {
                    (e.is_fence() && e.mode == MemOrder::SeqCst)
                        || (e.loc.is_some()
                            && ((e.reads && (e.writes || matches!(e.action, Action::Cas { .. })))
                                || (e.writes && e.mode == MemOrder::SeqCst)))
                });
                for pa in parts.into_iter().filter(|&p| has(a, p)) {
                    for pb in parts.into_iter().filter(|&p| has(b, p)) {
                        let kept = match model {
                            AxModel::Mca => mca_keeps(ea, pa, eb, pb, &fences),
                            AxModel::Tso => tso_keeps(ea, pa, eb, pb, barrier),
                            _ => {
                                custom_kept.contains(&(a, pa == Part::Write, b, pb == Part::Write))
                            }
                        };
                        if kept {
                            g.set(node(a, pa), node(b, pb));
                        }
                    }
                }
            }
            if start_join.get(a, b) {
                for pa in parts.into_iter().filter(|&p| has(a, p)) {
                    for pb in parts.into_iter().filter(|&p| has(b, p)) {
                        g.set(node(a, pa), node(b, pb));
                    }
                }
            }
            if rf.get(a, b) && has(a, Part::Write) && ea.thread != eb.thread {
                g.set(node(a, Part::Write), node(b, Part::Read));
            }
            if mo.get(a, b) && has(a, Part::Write) && has(b, Part::Write) {
                g.set(node(a, Part::Write), node(b, Part::Write));
            }
            if rb.get(a, b) && has(a, Part::Read) && has(b, Part::Write) {
                g.set(node(a, Part::Read), node(b, Part::Write));
            }
        }
    }
    g.acyclic()
}

/// Evaluates the axioms of `model` on `c`.
pub fn check(c: &Candidate, model: AxModel) -> Verdict {
    hb_and_consistency(c, model).0
}

fn hb_and_consistency(c: &Candidate, model: AxModel) -> (Verdict, Rel) {
    let evs = &c.evs;
    let n = evs.len();
    let sc_model = model.all_seq_cst();
    let mode = |i: usize| -> MemOrder {
        let m = evs[i].mode;
        if sc_model && m != MemOrder::NonAtomic && (evs[i].loc.is_some() || evs[i].is_fence()) {
            MemOrder::SeqCst
        } else {
            m
        }
    };
    let is_init = |i: usize| evs[i].thread.is_none();
    let po = Rel::from_fn(n, |a, b| {
        evs[a].thread.is_some() && evs[a].thread == evs[b].thread && evs[a].index < evs[b].index
    });
    // Thread creation and join order events like program order does (asw).
    let mut spawn_join = Rel::empty(n);
    for (a, ea) in evs.iter().enumerate() {
        match ea.action {
            Action::Spawn { child } => {
                for (b, eb) in evs.iter().enumerate() {
                    if eb.thread == Some(child) {
                        spawn_join.set(a, b);
                    }
                }
            }
            Action::Join { child } => {
                for (b, eb) in evs.iter().enumerate() {
                    if eb.thread == Some(child) {
                        spawn_join.set(b, a);
                    }
                }
            }
            _ => {}
        }
    }
    let sb = po.union(&spawn_join);
    let rf = Rel::from_fn(n, |a, b| c.rf[b] == Some(a));
    let mut mo = Rel::empty(n);
    for order in c.mo.values() {
        for (i, &a) in order.iter().enumerate() {
            for &b in &order[i + 1..] {
                mo.set(a, b);
            }
        }
    }
    let same_loc = Rel::from_fn(n, |a, b| evs[a].loc.is_some() && evs[a].loc == evs[b].loc);
    let ext = Rel::from_fn(n, |a, b| evs[a].thread != evs[b].thread);
    let id = Rel::from_fn(n, |a, b| a == b);
    let is_w = |i: usize| evs[i].writes || is_init(i);
    let is_r = |i: usize| evs[i].reads;
    let is_rmw = |i: usize| evs[i].reads && evs[i].writes;
    let atomic = |i: usize| evs[i].atomic() && !is_init(i);
    let w_ = Rel::id_on(n, is_w);
    let conflict = Rel::from_fn(n, |a, b| (is_w(a) || is_w(b)) && same_loc.get(a, b));

    let (consistent, hb) = match model {
        AxModel::Cpp20
        | AxModel::Rc11
        | AxModel::Sc
        | AxModel::Mca
        | AxModel::Tso
        | AxModel::Custom(_) => {
            let rb = rf.inverse().seq(&mo).minus(&id);
            let eco = rf.union(&mo).union(&rb).plus();
            let rmw_id = Rel::id_on(n, is_rmw);
            let rs = if model.rc11_release_sequences() {
                // [W]; (sb & loc)?; [W & atomic]; (rf; rmw)*
                w_.seq(&sb.inter(&same_loc).opt())
                    .seq(&Rel::id_on(n, |i| is_w(i) && atomic(i)))
                    .seq(&rf.seq(&rmw_id).star())
            } else {
                // [W & atomic]; (rf; rmw)*
                Rel::id_on(n, |i| is_w(i) && atomic(i)).seq(&rf.seq(&rmw_id).star())
            };
            let rel_modes = [MemOrder::Release, MemOrder::AcqRel, MemOrder::SeqCst];
            let acq_modes = [MemOrder::Acquire, MemOrder::AcqRel, MemOrder::SeqCst];
            let f_ = Rel::id_on(n, |i| evs[i].is_fence());
            let sw = Rel::id_on(n, |i| {
                (evs[i].loc.is_some() || evs[i].is_fence()) && mode_in(mode(i), &rel_modes)
            })
            .seq(&f_.seq(&sb).opt())
            .seq(&rs)
            .seq(&rf)
            .seq(&Rel::id_on(n, |i| is_r(i) && atomic(i)))
            .seq(&sb.seq(&f_).opt())
            .seq(&Rel::id_on(n, |i| {
                (evs[i].loc.is_some() || evs[i].is_fence()) && mode_in(mode(i), &acq_modes)
            }));
            let hb = sb.union(&sw).plus();
            let coherence = hb.seq(&eco.opt()).irreflexive();
            let coh_rmw = rmw_id.seq(&eco).irreflexive();
            let atomicity = rmw_id.inter(&rb.seq(&mo)).is_empty();
            let no_thin_air = sb.union(&rf).acyclic();
            let sc_ok = if model.total_order() {
                sb.union(&rf).union(&mo).union(&rb).acyclic()
            } else {
                let sc = |i: usize| {
                    (evs[i].loc.is_some() || evs[i].is_fence())
                        && mode(i) == MemOrder::SeqCst
                        && !is_init(i)
                };
                let sc_ = Rel::id_on(n, sc);
                let fsc = Rel::id_on(n, |i| sc(i) && evs[i].is_fence());
                let sbl = sb.minus(&same_loc);
                let hbl = hb.inter(&same_loc);
                let scb = sb
                    .union(&sbl.seq(&hb).seq(&sbl))
                    .union(&hbl)
                    .union(&mo)
                    .union(&rb);
                let pscb = sc_
                    .union(&fsc.seq(&hb.opt()))
                    .seq(&scb)
                    .seq(&sc_.union(&hb.opt().seq(&fsc)));
                let pscf = fsc.seq(&hb.union(&hb.seq(&eco).seq(&hb))).seq(&fsc);
                pscb.union(&pscf).acyclic()
            };
            let hardware_ok = !model.hardware() || {
                // Starting and joining a thread order everything before
                // (after) them with everything the thread does.
                let start_join = po.opt().seq(&spawn_join).seq(&po.opt());
                hardware_acyclic(evs, model, &rf, &mo, &rb, &start_join)
            };
            (
                coherence && coh_rmw && atomicity && no_thin_air && sc_ok && hardware_ok,
                hb,
            )
        }
        AxModel::C11 => {
            let m_ = |i: usize| evs[i].loc.is_some();
            // asw: initial writes synchronise with every other memory event.
            let asw = Rel::from_fn(n, |a, b| is_init(a) && m_(b) && !is_init(b)).union(&spawn_join);
            let cacq = |i: usize| {
                let m = evs[i].mode;
                m == MemOrder::Acquire
                    || m == MemOrder::AcqRel
                    || (m == MemOrder::SeqCst && (evs[i].reads || evs[i].is_fence()))
            };
            let crel = |i: usize| {
                let m = evs[i].mode;
                m == MemOrder::Release
                    || m == MemOrder::AcqRel
                    || (m == MemOrder::SeqCst && (is_w(i) || evs[i].is_fence()))
            };
            let fr = rf.inverse().seq(&mo);
            let fsb = Rel::from_fn(n, |a, b| po.get(a, b) && evs[a].is_fence());
            let sbf = Rel::from_fn(n, |a, b| po.get(a, b) && evs[b].is_fence());
            let int = Rel::from_fn(n, |a, b| evs[a].thread == evs[b].thread);
            let rs_prime = int.union(&Rel::from_fn(n, |_, b| is_rmw(b)));
            let rs = mo.inter(&rs_prime).minus(&mo.minus(&rs_prime).seq(&mo));
            let swra = ext.inter(
                &Rel::id_on(n, |i| (m_(i) || evs[i].is_fence()) && crel(i))
                    .seq(&fsb.opt())
                    .seq(&Rel::id_on(n, |i| atomic(i) && is_w(i)))
                    .seq(&rs.opt())
                    .seq(&rf)
                    .seq(&Rel::id_on(n, |i| is_r(i) && atomic(i)))
                    .seq(&sbf.opt())
                    .seq(&Rel::id_on(n, |i| (m_(i) || evs[i].is_fence()) && cacq(i))),
            );
            let pp_asw = asw.minus(&asw.seq(&po));
            let sw = pp_asw.union(&swra);
            let ithbr = sw.union(&sw.seq(&po));
            let ithb = ithbr.union(&po.seq(&ithbr)).plus();
            let hb = po.union(&ithb);
            let hbl = hb.inter(&same_loc);
            let hb_ok = hb.acyclic();
            let coh = rf
                .inverse()
                .opt()
                .seq(&mo)
                .seq(&rf.opt())
                .seq(&hb)
                .irreflexive();
            let w_to_r = Rel::from_fn(n, |a, b| is_w(a) && is_r(b));
            let vis = hbl.inter(&w_to_r).minus(&hbl.seq(&w_).seq(&hbl));
            let rf_ok = rf.seq(&hb).irreflexive();
            let na_reads = Rel::id_on(n, |i| is_r(i) && !atomic(i));
            let narf = rf.seq(&na_reads).minus(&vis).is_empty();
            let final_na = |i: usize| {
                is_w(i) && !atomic(i) && !is_init(i) && c.mo.values().any(|o| o.last() == Some(&i))
            };
            let narf2 = Rel::id_on(n, final_na).seq(&hbl).seq(&w_).is_empty();
            let rmw = rf
                .union(&mo.seq(&mo).seq(&rf.inverse()))
                .union(&mo.seq(&rf))
                .irreflexive();
            let sc = |i: usize| {
                (m_(i) || evs[i].is_fence()) && evs[i].mode == MemOrder::SeqCst && !is_init(i)
            };
            let scp = Rel::from_fn(n, |a, b| sc(a) && sc(b))
                .inter(&fsb.opt().seq(&mo.union(&fr).union(&hb)).seq(&sbf.opt()))
                .minus(&id);
            let ssimp = scp.acyclic();
            (hb_ok && coh && rf_ok && narf && narf2 && rmw && ssimp, hb)
        }
    };
    let race = consistent && {
        let both_atomic = Rel::from_fn(n, |a, b| atomic(a) && atomic(b));
        let not_init = Rel::from_fn(n, |a, b| !is_init(a) && !is_init(b));
        !conflict
            .inter(&ext)
            .inter(&not_init)
            .minus(&hb)
            .minus(&hb.inverse())
            .minus(&both_atomic)
            .is_empty()
    };
    (Verdict { consistent, race }, hb)
}

/// A program the checker can enumerate: threads run against an answering oracle.
pub trait TraceProgram {
    fn init(&self) -> Vec<Value>;
    fn num_threads(&self) -> usize;
    /// Runs thread `t`, calling `answer` for every action in order; `answer`
    /// returns the value read and whether a CAS wrote, or `None` to stop the run
    /// at that action.
    fn run(&self, t: usize, answer: &mut dyn FnMut(Action) -> Option<(Value, bool)>) -> RunEnd;
    /// Values worth guessing for reads besides the initial ones (the constants
    /// of the program): `c11` executions may read values that only a
    /// self-justifying cycle of writes produces.
    fn value_hints(&self) -> Vec<Value> {
        Vec::new()
    }
}

/// How a thread run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// The thread finished with these registers.
    Finished(Vec<Value>),
    /// The thread reached a loop bound.
    Blocked,
    /// `answer` declined an action.
    Stopped,
}

/// One thread's trace: its events (with values) and final registers.
#[derive(Clone, Debug)]
pub struct Trace {
    pub evs: Vec<Ev>,
    pub regs: Vec<Value>,
}

/// Every trace of thread `t` whose reads return values from `domains` (per
/// location) or from the thread's own earlier writes.
pub fn thread_traces(p: &dyn TraceProgram, t: usize, domains: &[BTreeSet<Value>]) -> Vec<Trace> {
    let mut out = Vec::new();
    let mut prefix: Vec<usize> = Vec::new();
    loop {
        let mut sizes: Vec<usize> = Vec::new();
        let mut chosen: Vec<usize> = Vec::new();
        let mut evs: Vec<Ev> = Vec::new();
        let end = p.run(t, &mut |a: Action| {
            let values = |loc: Loc| -> BTreeSet<Value> {
                let mut d = domains[loc.0 as usize].clone();
                d.extend(
                    evs.iter()
                        .filter(|e| e.writes && e.loc == Some(loc))
                        .map(|e| e.wval),
                );
                d
            };
            let options: Vec<(Value, bool)> = match a {
                Action::Load { loc, .. } | Action::Rmw { loc, .. } => {
                    values(loc).into_iter().map(|v| (v, true)).collect()
                }
                Action::Cas { loc, weak, .. } => {
                    let mut o = Vec::new();
                    for v in values(loc) {
                        let ok = cas_succeeds(&a, v);
                        o.push((v, ok));
                        if weak && ok {
                            o.push((v, false));
                        }
                    }
                    o
                }
                _ => vec![(0, false)],
            };
            let k = chosen.len();
            let idx = prefix.get(k).copied().unwrap_or(0);
            chosen.push(idx);
            sizes.push(options.len());
            let (v, wrote) = options[idx];
            let wrote = match a {
                Action::Cas { .. } => wrote,
                _ => a.may_write(),
            };
            evs.push(make_event(t as u32, evs.len() as u32, a, v, wrote));
            Some((v, wrote))
        });
        if let RunEnd::Finished(regs) = end {
            out.push(Trace { evs, regs });
        }
        // Advance the odometer.
        prefix = chosen;
        loop {
            match prefix.pop() {
                None => return out,
                Some(i) => {
                    let k = prefix.len();
                    if i + 1 < sizes[k] {
                        prefix.push(i + 1);
                        break;
                    }
                }
            }
        }
    }
}

/// The key that identifies an execution up to reads-from equivalence: each read's
/// source, weak-CAS spurious failures, and the mo-last write of observed locations.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExecKey {
    pub rf: Vec<(EventId, EventId)>,
    /// Reference-count updates are identified by what they tell the program
    /// (their class), not by their source: executions that differ only in the
    /// order of the updates are one execution (see `RmwOp::RefInc`).
    pub refcount: Vec<(EventId, bool)>,
    /// Other reads of a reference count, by the value they read.
    pub count_reads: Vec<(EventId, Value)>,
    pub spurious: Vec<EventId>,
    pub finals: Vec<(Loc, EventId)>,
    pub thread_lens: Vec<u32>,
}

/// Result of enumerating a program.
#[derive(Clone, Debug, Default)]
pub struct Enumeration {
    /// Distinct executions (reads-from classes with observed finals).
    pub executions: BTreeSet<ExecKey>,
    /// Final states: registers of every thread, then the observed locations' final values.
    pub states: BTreeSet<(Vec<Vec<Value>>, Vec<Value>)>,
    pub race: bool,
    /// Candidates examined (for curiosity and limits).
    pub candidates: u64,
    /// `c11` only: guessed read values were cut after [`MAX_VALUE_ROUNDS`] rounds of
    /// propagation (values flowing round a dependency cycle).
    pub domain_capped: bool,
}

/// Rounds of value propagation the `c11` enumeration performs at most.
pub const MAX_VALUE_ROUNDS: usize = 6;

/// Why enumeration gave up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnumError {
    /// Read values kept growing (an unbounded counter).
    DomainDiverged,
    /// More candidates than the limit.
    TooLarge,
}

/// Enumerates every consistent execution of `p` under `model`.
///
/// Models that forbid po ∪ rf cycles are enumerated by building executions in
/// porf order (each read picks an existing write); `c11` needs reads to see
/// writes that do not exist yet, so there each thread's traces are generated
/// with guessed values (closed under what the other threads can write).
pub fn enumerate(
    p: &dyn TraceProgram,
    model: AxModel,
    observed: &[Loc],
    limit: u64,
) -> Result<Enumeration, EnumError> {
    if model != AxModel::C11 {
        return enumerate_porf(p, model, observed, limit);
    }
    let init = p.init();
    let nt = p.num_threads();
    let hints = p.value_hints();
    let initial: Vec<BTreeSet<Value>> = init
        .iter()
        .map(|&v| {
            let mut d = BTreeSet::from([v]);
            d.extend(hints.iter().copied());
            d
        })
        .collect();
    let mut domains: Vec<Vec<BTreeSet<Value>>> = vec![initial.clone(); nt];
    let mut traces: Vec<Vec<Trace>>;
    let mut rounds = 0;
    let mut capped = false;
    loop {
        traces = (0..nt).map(|t| thread_traces(p, t, &domains[t])).collect();
        let mut grew = false;
        for (t, dom) in domains.iter_mut().enumerate() {
            let mut d = initial.clone();
            for (u, tr) in traces.iter().enumerate() {
                if u == t {
                    continue;
                }
                for e in tr.iter().flat_map(|tr| &tr.evs) {
                    if e.writes {
                        d[e.loc.unwrap().0 as usize].insert(e.wval);
                    }
                }
            }
            if d != *dom {
                grew = true;
                *dom = d;
            }
        }
        if !grew {
            break;
        }
        rounds += 1;
        if rounds >= MAX_VALUE_ROUNDS || domains.iter().flatten().any(|d| d.len() > 16) {
            // Values keep growing through a cycle of dependent reads; such
            // values are never justified by a write, so stop guessing here and
            // say so: executions needing values from more rounds are not seen.
            capped = true;
            traces = (0..nt).map(|t| thread_traces(p, t, &domains[t])).collect();
            break;
        }
    }
    let mut out = Enumeration {
        domain_capped: capped,
        ..Enumeration::default()
    };
    let mut pick = vec![0usize; nt];
    if traces.iter().any(|t| t.is_empty()) {
        return Ok(out);
    }
    loop {
        let mut evs = init_events(&init);
        for (t, &i) in pick.iter().enumerate() {
            evs.extend(traces[t][i].evs.iter().cloned());
        }
        let regs: Vec<Vec<Value>> = pick
            .iter()
            .enumerate()
            .map(|(t, &i)| traces[t][i].regs.clone())
            .collect();
        combine(evs, regs, model, observed, limit, &mut out)?;
        // next combination
        let mut k = nt;
        loop {
            if k == 0 {
                return Ok(out);
            }
            k -= 1;
            pick[k] += 1;
            if pick[k] < traces[k].len() {
                break;
            }
            pick[k] = 0;
        }
    }
}

/// One step of a thread in the porf-ordered enumeration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Step {
    action: Action,
    rval: Value,
    wrote: bool,
    rf: Option<EventId>,
}

enum Next {
    Pending(Action),
    Finished(Vec<Value>),
    Blocked,
}

fn next_of(p: &dyn TraceProgram, t: usize, steps: &[Step]) -> Next {
    let mut i = 0;
    let mut pending = None;
    match p.run(t, &mut |a| {
        if let Some(s) = steps.get(i) {
            i += 1;
            Some((s.rval, s.wrote))
        } else {
            pending = Some(a);
            None
        }
    }) {
        RunEnd::Finished(regs) => Next::Finished(regs),
        RunEnd::Blocked => Next::Blocked,
        RunEnd::Stopped => Next::Pending(pending.unwrap()),
    }
}

fn enumerate_porf(
    p: &dyn TraceProgram,
    model: AxModel,
    observed: &[Loc],
    limit: u64,
) -> Result<Enumeration, EnumError> {
    let init = p.init();
    let nt = p.num_threads();
    let mut out = Enumeration::default();
    let mut seen: std::collections::HashSet<Vec<Vec<Step>>> = std::collections::HashSet::new();
    let mut stack: Vec<Vec<Vec<Step>>> = vec![vec![Vec::new(); nt]];
    while let Some(state) = stack.pop() {
        if !seen.insert(state.clone()) {
            continue;
        }
        if seen.len() as u64 > limit {
            return Err(EnumError::TooLarge);
        }
        let mut any_pending = false;
        let mut blocked = false;
        let mut regs: Vec<Vec<Value>> = vec![Vec::new(); nt];
        let nexts: Vec<Next> = (0..nt).map(|t| next_of(p, t, &state[t])).collect();
        // Events that read nothing can be added as soon as they are next, in a
        // fixed thread order: this prunes interleavings without losing any
        // porf-ordered construction of an execution.
        let eager = nexts
            .iter()
            .position(|n| matches!(n, Next::Pending(a) if !a.reads()));
        for (t, next) in nexts.into_iter().enumerate() {
            if eager.is_some_and(|e| e != t) {
                any_pending = true;
                continue;
            }
            match next {
                Next::Finished(r) => regs[t] = r,
                Next::Blocked => blocked = true,
                Next::Pending(a) => {
                    any_pending = true;
                    stack.extend(successors(&init, &state, t, a));
                }
            }
        }
        if any_pending || blocked {
            continue;
        }
        // A complete execution: events and rf are fixed; try every mo.
        let (evs, rf) = candidate_of(&init, &state);
        // Coherence is per location and, in these models, hb does not depend on
        // mo: keep only the per-location orders that pass `hb;eco?` and atomicity
        // before trying their combinations against all axioms.
        let probe = Candidate {
            evs: evs.clone(),
            rf: rf.clone(),
            mo: BTreeMap::new(),
        };
        let hb = happens_before(&probe, model);
        for_each_mo_filtered(&evs, &|l, order| coherent_at(&probe, &hb, l, order), |mo| {
            let cand = Candidate {
                evs: evs.clone(),
                rf: rf.clone(),
                mo,
            };
            out.candidates += 1;
            record(&cand, &regs, model, observed, &mut out);
        });
    }
    Ok(out)
}

/// The states that follow `state` when thread `t` performs `a`: one per
/// write it can read (and, for a weak CAS, per spurious failure).
fn successors(init: &[Value], state: &[Vec<Step>], t: usize, a: Action) -> Vec<Vec<Vec<Step>>> {
    let mut choices: Vec<(Value, bool, Option<EventId>)> = Vec::new();
    if let Some(loc) = a.loc().filter(|_| a.reads()) {
        let mut writes = vec![(EventId::init(loc), init[loc.0 as usize])];
        for (u, th) in state.iter().enumerate() {
            for (i, s) in th.iter().enumerate() {
                if s.wrote && s.action.loc() == Some(loc) {
                    let ev = make_event(u as u32, i as u32, s.action, s.rval, true);
                    writes.push((EventId::new(u as u32, i as u32), ev.wval));
                }
            }
        }
        for (w, v) in writes {
            match a {
                Action::Cas { weak, .. } => {
                    let ok = cas_succeeds(&a, v);
                    choices.push((v, ok, Some(w)));
                    // A thread fails spuriously at most once on the same
                    // write (the explorer's fairness rule).
                    let failed_on_w = state[t].iter().any(|s| {
                        s.rf == Some(w)
                            && !s.wrote
                            && s.action.loc() == Some(loc)
                            && cas_succeeds(&s.action, s.rval)
                            && matches!(s.action, Action::Cas { weak: true, .. })
                    });
                    if weak && ok && !failed_on_w {
                        choices.push((v, false, Some(w)));
                    }
                }
                _ => choices.push((v, a.may_write(), Some(w))),
            }
        }
    } else {
        choices.push((0, a.may_write(), None));
    }
    choices
        .into_iter()
        .map(|(v, wrote, rf)| {
            let mut next = state.to_vec();
            next[t].push(Step {
                action: a,
                rval: v,
                wrote,
                rf,
            });
            next
        })
        .collect()
}

/// The events (initialisation writes first) and reads-from of a state.
fn candidate_of(init: &[Value], state: &[Vec<Step>]) -> (Vec<Ev>, Vec<Option<usize>>) {
    let mut evs = init_events(init);
    let mut index_of: BTreeMap<EventId, usize> = BTreeMap::new();
    for l in 0..init.len() {
        index_of.insert(EventId::init(Loc(l as u32)), l);
    }
    for (t, th) in state.iter().enumerate() {
        for (i, s) in th.iter().enumerate() {
            index_of.insert(EventId::new(t as u32, i as u32), evs.len());
            evs.push(make_event(t as u32, i as u32, s.action, s.rval, s.wrote));
        }
    }
    let mut rf = vec![None; evs.len()];
    for (t, th) in state.iter().enumerate() {
        for (i, s) in th.iter().enumerate() {
            if let Some(w) = s.rf {
                rf[index_of[&EventId::new(t as u32, i as u32)]] = Some(index_of[&w]);
            }
        }
    }
    (evs, rf)
}

/// Whether `p` is robust against SC under `model`: every consistent
/// candidate (reads-from and modification order) of every reachable state,
/// partial ones included, is SC, i.e. po ∪ rf ∪ mo ∪ fr is acyclic over its
/// atomic accesses. The definition itself, by brute force: every state and
/// every modification order (the explorer's check visits complete and
/// blocked graphs only and orders chains lazily).
pub fn robust(p: &dyn TraceProgram, model: AxModel, limit: u64) -> Result<bool, EnumError> {
    let init = p.init();
    let nt = p.num_threads();
    let mut seen: std::collections::HashSet<Vec<Vec<Step>>> = std::collections::HashSet::new();
    let mut stack: Vec<Vec<Vec<Step>>> = vec![vec![Vec::new(); nt]];
    while let Some(state) = stack.pop() {
        if !seen.insert(state.clone()) {
            continue;
        }
        if seen.len() as u64 > limit {
            return Err(EnumError::TooLarge);
        }
        for t in 0..nt {
            if let Next::Pending(a) = next_of(p, t, &state[t]) {
                stack.extend(successors(&init, &state, t, a));
            }
        }
        let (evs, rf) = candidate_of(&init, &state);
        let probe = Candidate {
            evs: evs.clone(),
            rf: rf.clone(),
            mo: BTreeMap::new(),
        };
        let hb = happens_before(&probe, model);
        let mut non_sc = false;
        for_each_mo_filtered(&evs, &|l, order| coherent_at(&probe, &hb, l, order), |mo| {
            if non_sc {
                return;
            }
            let cand = Candidate {
                evs: evs.clone(),
                rf: rf.clone(),
                mo,
            };
            // The SC test first: it is the cheaper one and nearly always passes.
            if !sc_acyclic(&cand) && check(&cand, model).consistent {
                non_sc = true;
            }
        });
        if non_sc {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether po ∪ rf ∪ mo ∪ fr is acyclic over the atomic accesses of `c`
/// (initialisation writes count as atomic). fr is taken over every write
/// before the restriction: an atomic read of a plain store still comes
/// before the atomic stores after that one.
fn sc_acyclic(c: &Candidate) -> bool {
    let evs = &c.evs;
    let n = evs.len();
    let counted = |i: usize| evs[i].thread.is_none() || evs[i].atomic();
    let po = Rel::from_fn(n, |a, b| {
        evs[a].thread.is_some() && evs[a].thread == evs[b].thread && evs[a].index < evs[b].index
    });
    let mut rf = Rel::empty(n);
    for (r, w) in c.rf.iter().enumerate() {
        if let Some(w) = *w {
            rf.set(w, r);
        }
    }
    let mut mo = Rel::empty(n);
    for order in c.mo.values() {
        for (i, &a) in order.iter().enumerate() {
            for &b in &order[i + 1..] {
                mo.set(a, b);
            }
        }
    }
    let fr = rf.inverse().seq(&mo).minus(&Rel::id_on(n, |_| true));
    let keep = Rel::id_on(n, counted);
    let only = |r: &Rel| keep.seq(r).seq(&keep);
    only(&po)
        .union(&only(&rf))
        .union(&only(&mo))
        .union(&only(&fr))
        .acyclic()
}

/// `hb` of the rc11-style models (it does not depend on mo there).
fn happens_before(c: &Candidate, model: AxModel) -> Rel {
    hb_and_consistency(c, model).1
}

/// Whether `order` (the writes to `l` in modification order) is coherent at `l`
/// given `hb`: `hb;eco?` irreflexive and RMW atomicity, on `l`'s events only.
fn coherent_at(c: &Candidate, hb: &Rel, l: Loc, order: &[usize]) -> bool {
    let n = c.evs.len();
    let at = |i: usize| c.evs[i].loc == Some(l);
    let mut mo = Rel::empty(n);
    for (i, &a) in order.iter().enumerate() {
        for &b in &order[i + 1..] {
            mo.set(a, b);
        }
    }
    let rf = Rel::from_fn(n, |a, b| at(b) && c.rf[b] == Some(a));
    let id = Rel::from_fn(n, |a, b| a == b);
    let rb = rf.inverse().seq(&mo).minus(&id);
    let eco = rf.union(&mo).union(&rb).plus();
    let hbl = Rel::from_fn(n, |a, b| at(a) && at(b) && hb.get(a, b));
    let rmw = Rel::id_on(n, |i| at(i) && c.evs[i].reads && c.evs[i].writes);
    hbl.seq(&eco.opt()).irreflexive() && rmw.inter(&rb.seq(&mo)).is_empty()
}

/// Like [`for_each_mo`], with per-location orders filtered by `keep`.
fn for_each_mo_filtered(
    evs: &[Ev],
    keep: &dyn Fn(Loc, &[usize]) -> bool,
    mut f: impl FnMut(BTreeMap<Loc, Vec<usize>>),
) {
    let n = evs.len();
    let locs: BTreeSet<Loc> = evs.iter().filter_map(|e| e.loc).collect();
    let per_loc: Vec<(Loc, Vec<Vec<usize>>)> = locs
        .iter()
        .map(|&l| {
            let ws: Vec<usize> = (0..n)
                .filter(|&w| evs[w].writes && evs[w].thread.is_some() && evs[w].loc == Some(l))
                .collect();
            let orders = permutations(&ws)
                .into_iter()
                .map(|p| {
                    let mut o = vec![l.0 as usize];
                    o.extend(p);
                    o
                })
                .filter(|o| keep(l, o))
                .collect();
            (l, orders)
        })
        .collect();
    if per_loc
        .iter()
        .any(|(_, o): &(Loc, Vec<Vec<usize>>)| o.is_empty())
    {
        return;
    }
    let mut pick = vec![0usize; per_loc.len()];
    loop {
        let mo: BTreeMap<Loc, Vec<usize>> = per_loc
            .iter()
            .enumerate()
            .map(|(k, (l, o))| (*l, o[pick[k]].clone()))
            .collect();
        f(mo);
        let mut k = per_loc.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            pick[k] += 1;
            if pick[k] < per_loc[k].1.len() {
                break;
            }
            pick[k] = 0;
        }
    }
}

/// Calls `f` with every modification order of the writes in `evs`.
fn for_each_mo(evs: &[Ev], f: impl FnMut(BTreeMap<Loc, Vec<usize>>)) {
    for_each_mo_filtered(evs, &|_, _| true, f)
}

fn record(
    cand: &Candidate,
    regs: &[Vec<Value>],
    model: AxModel,
    observed: &[Loc],
    out: &mut Enumeration,
) {
    let v = check(cand, model);
    if !v.consistent {
        return;
    }
    out.race |= v.race;
    let finals: Vec<(Loc, EventId)> = observed
        .iter()
        .map(|&l| (l, cand.evs[*cand.mo[&l].last().unwrap()].id()))
        .collect();
    let vals: Vec<Value> = observed
        .iter()
        .map(|&l| cand.evs[*cand.mo[&l].last().unwrap()].wval)
        .collect();
    out.executions.insert(exec_key(cand, finals));
    out.states.insert((regs.to_vec(), vals));
}

fn init_events(init: &[Value]) -> Vec<Ev> {
    init.iter()
        .enumerate()
        .map(|(l, &v)| Ev {
            thread: None,
            index: l as u32,
            action: Action::Store {
                loc: Loc(l as u32),
                ord: MemOrder::NonAtomic,
                val: v,
            },
            loc: Some(Loc(l as u32)),
            mode: MemOrder::NonAtomic,
            reads: false,
            writes: true,
            rval: 0,
            wval: v,
            spurious: false,
        })
        .collect()
}

fn combine(
    evs: Vec<Ev>,
    regs: Vec<Vec<Value>>,
    model: AxModel,
    observed: &[Loc],
    limit: u64,
    out: &mut Enumeration,
) -> Result<(), EnumError> {
    let n = evs.len();
    // Possible sources of each read: same location, same value, not itself.
    let mut sources: Vec<Vec<usize>> = vec![Vec::new(); n];
    for r in 0..n {
        if !evs[r].reads {
            continue;
        }
        sources[r] = (0..n)
            .filter(|&w| {
                w != r && evs[w].writes && evs[w].loc == evs[r].loc && evs[w].wval == evs[r].rval
            })
            .collect();
        if sources[r].is_empty() {
            return Ok(());
        }
    }
    let reads: Vec<usize> = (0..n).filter(|&r| evs[r].reads).collect();
    let mut choice = vec![0usize; reads.len()];
    loop {
        let mut rf = vec![None; n];
        for (k, &r) in reads.iter().enumerate() {
            rf[r] = Some(sources[r][choice[k]]);
        }
        let mut too_large = false;
        for_each_mo(&evs, |mo| {
            out.candidates += 1;
            if out.candidates > limit {
                too_large = true;
                return;
            }
            let cand = Candidate {
                evs: evs.clone(),
                rf: rf.clone(),
                mo,
            };
            record(&cand, &regs, model, observed, out);
        });
        if too_large {
            return Err(EnumError::TooLarge);
        }
        // next rf
        let mut k = reads.len();
        loop {
            if k == 0 {
                return Ok(());
            }
            k -= 1;
            choice[k] += 1;
            if choice[k] < sources[reads[k]].len() {
                break;
            }
            choice[k] = 0;
        }
    }
}

/// Splits reads into plain reads-from edges, reference-count classes and
/// values read from reference counts (see [`ExecKey`]). Each read is given as
/// (id, action, location, source, value read).
#[allow(clippy::type_complexity)]
fn split_reads(
    reads: Vec<(EventId, Action, Option<Loc>, EventId, Value)>,
) -> (
    Vec<(EventId, EventId)>,
    Vec<(EventId, bool)>,
    Vec<(EventId, Value)>,
) {
    let counters: BTreeSet<Loc> = reads
        .iter()
        .filter(|r| matches!(r.1, Action::Rmw { op, .. } if op.is_refcount()))
        .filter_map(|r| r.2)
        .collect();
    let (mut rf, mut refcount, mut count_reads) = (Vec::new(), Vec::new(), Vec::new());
    for (id, action, loc, src, val) in reads {
        match action {
            Action::Rmw {
                op: RmwOp::RefDec, ..
            } => refcount.push((id, val == 1)),
            Action::Rmw {
                op: RmwOp::RefInc, ..
            } => refcount.push((id, val == 0)),
            _ if loc.is_some_and(|l| counters.contains(&l)) => count_reads.push((id, val)),
            _ => rf.push((id, src)),
        }
    }
    rf.sort();
    refcount.sort();
    count_reads.sort();
    (rf, refcount, count_reads)
}

fn exec_key(c: &Candidate, finals: Vec<(Loc, EventId)>) -> ExecKey {
    let (rf, refcount, count_reads) = split_reads(
        c.rf.iter()
            .enumerate()
            .filter_map(|(r, w)| {
                let e = &c.evs[r];
                w.map(|w| (e.id(), e.action, e.loc, c.evs[w].id(), e.rval))
            })
            .collect(),
    );
    let spurious = c
        .evs
        .iter()
        .filter(|e| e.spurious)
        .map(|e| e.id())
        .collect();
    let mut lens: BTreeMap<u32, u32> = BTreeMap::new();
    for e in &c.evs {
        if let Some(t) = e.thread {
            *lens.entry(t).or_default() += 1;
        }
    }
    ExecKey {
        rf,
        refcount,
        count_reads,
        spurious,
        finals,
        thread_lens: lens.values().copied().collect(),
    }
}

fn permutations(xs: &[usize]) -> Vec<Vec<usize>> {
    if xs.is_empty() {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for i in 0..xs.len() {
        let mut rest = xs.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

/// The key of an execution graph the explorer produced (same shape as the
/// enumeration's), for comparing the two.
pub fn graph_key(g: &ExecutionGraph, finals: &[(Loc, EventId)]) -> ExecKey {
    let (rf, refcount, count_reads) = split_reads(
        g.events()
            .filter_map(|(id, e)| e.rf.map(|w| (id, e.action, e.loc(), w, e.read_val)))
            .collect(),
    );
    let spurious = g
        .events()
        .filter(|(_, e)| e.spurious_fail)
        .map(|(id, _)| id)
        .collect();
    ExecKey {
        rf,
        refcount,
        count_reads,
        spurious,
        finals: finals.to_vec(),
        thread_lens: (0..g.num_threads() as u32)
            .map(|t| {
                g.thread_events(t)
                    .iter()
                    .filter(|e| !matches!(e.action, Action::Finish))
                    .count() as u32
            })
            .collect(),
    }
}

/// Whether some modification order makes the explorer's graph consistent under
/// `model` with the given mo-last writes: the independent check of one execution.
pub fn graph_consistent(
    g: &ExecutionGraph,
    finals: &[(Loc, EventId)],
    model: AxModel,
) -> Option<Verdict> {
    let mut evs = init_events(
        &(0..g.num_locs())
            .map(|l| g.init_value(Loc(l as u32)))
            .collect::<Vec<_>>(),
    );
    let mut index_of: BTreeMap<EventId, usize> = BTreeMap::new();
    for l in 0..g.num_locs() {
        index_of.insert(EventId::init(Loc(l as u32)), l);
    }
    for (id, e) in g.events() {
        if matches!(e.action, Action::Finish) {
            continue;
        }
        index_of.insert(id, evs.len());
        evs.push(make_event(
            id.thread,
            id.index,
            e.action,
            e.read_val,
            e.is_write(),
        ));
    }
    let n = evs.len();
    let mut rf = vec![None; n];
    for (id, e) in g.events() {
        if let Some(w) = e.rf {
            rf[index_of[&id]] = Some(index_of[&w]);
        }
    }
    let mut found: Option<Verdict> = None;
    let last_ok = |l: Loc, order: &[usize]| match finals.iter().find(|(fl, _)| *fl == l) {
        Some((_, w)) => order.last() == Some(&index_of[w]),
        None => true,
    };
    for_each_mo_filtered(&evs, &last_ok, |mo| {
        if found.is_none() {
            let cand = Candidate {
                evs: evs.clone(),
                rf: rf.clone(),
                mo,
            };
            let v = check(&cand, model);
            if v.consistent {
                found = Some(v);
            }
        }
    });
    found
}
