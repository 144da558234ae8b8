//! Robustness against SC decided on the fly, during an SC run, with
//! *location clocks* (the instrumentation of RSAN, rsan-robustness.md §3–4
//! and Appendix A, rebuilt from its definitions rather than its pseudo-code).
//!
//! The run itself is sequentially consistent: every read reads the latest
//! write, and modification order is execution order. Before each access
//! of a thread to `x`, the monitor asks whether the thread could perform it
//! *weakly* instead (read an older write, or put its write before a newer
//! one) in a way the model allows but no SC run produces: that is a
//! non-robustness witness (Lahav and Margalit), and a program has one in
//! some SC run iff it is not robust.
//!
//! A location clock maps each location to a [`Stamp`]: a write's position
//! in modification order (`ts`, 0 for the initial value) and the number of
//! writes up to it that are not read-modify-writes (`plain`, which decides
//! whether a write may go right before another: not before an RMW, which
//! must stay right after the write it read). Both grow along modification
//! order, so the stamp with the larger `ts` is the larger one in both.
//!
//! * Happens-before (C++20, release sequences through RMWs only): each
//!   thread's *current* view (the writes it is hb-aware of, or that it or
//!   an event hb-before it read), *acquire* view (what an acquire fence
//!   would add: what relaxed reads saw released) and *release* view (its
//!   view at its last release fence, which relaxed writes release); each
//!   location's release view of its latest write. A view is updated on
//!   every access of the location, whatever its order; only the joins with
//!   other views depend on the order. A relaxed write releases its own
//!   stamp too.
//! * SC happens-before (po ∪ rf ∪ mo ∪ fr over atomic accesses): each
//!   thread's SC view, each location's SC view of its latest write (what a
//!   read of it adds) and of all its accesses (what a write after them adds,
//!   by mo and fr).
//! * SC fences synchronise with each other in execution order (an acq-rel
//!   RMW of an otherwise unused location, as RC20 defines them) for
//!   happens-before only: they are not accesses, so they add no SC edge.
//!
//! A read may read stale iff its current view at `x` is behind its SC view
//! (some write hb_SC-before the thread is newer than every write it is
//! aware of); a write may go before a newer write iff a non-RMW write lies
//! between the two views. Which stale writes matter depends on the values
//! they hold when the access is a compare-exchange (success needs the
//! expected value) or a wait-loop turn (a value that keeps it waiting makes
//! the turn a failed one, which robustness leaves out): the monitor keeps
//! the last [`RECENT`] writes of each location and reports only a value it
//! knows.
//!
//! Failed wait-loop turns are left out of SC happens-before: the caller
//! opens a turn ([`LocationClocks::turn_start`]) and either drops it
//! ([`LocationClocks::turn_failed`], which restores the thread's SC view)
//! or keeps it. A turn's reads reach the location's SC view only once it
//! is kept, so a write of another thread in between misses that fr edge:
//! this run then reports less, never more (the schedule that runs the
//! turn first reports it).
//!
//! SeqCst accesses are acquire/release accesses for happens-before, and
//! psc (C++20's SC order, over SeqCst accesses and SC fences) is decided
//! exactly. Every psc edge between the run's events follows the run's
//! order, and so does every edge into the weak step; only the step's
//! `eco` goes against it: to the writes of its location at or after the
//! first one it comes before, and to reads of those. So a psc cycle runs
//! through such an edge, from the step (if SeqCst) to a SeqCst write there
//! or an SC fence after one, or from an SC fence before the step to a
//! SeqCst write there or an SC fence after an access of one; and it exists
//! iff that *target* already reaches its *source* in the run's psc. (An
//! older write the step would read or follow adds only edges from events
//! before it, which reach no target.) Each SeqCst event's reach, the
//! largest position of each kind of target reaching it
//! (`psc_reach::Reach`), is built as the run goes, through the channels
//! psc's edges use: program order (per thread), `po≠loc; hb; po≠loc` (a
//! pending reach released at the thread's next event at another location,
//! read as of the event before a run of same-location events), `hb|loc`
//! (per location, riding with happens-before), `mo`/`rb` into a SeqCst
//! write (per location), SC fences before an access and accesses `eco`
//! before a write before an SC fence (riding with happens-before); SC
//! fences after each other are ordered by their synchronisation. Checked
//! against the explorer-based check on the suite and random programs;
//! without SeqCst accesses nothing of this is needed (SC fences alone are
//! exact as RC20 fences).
//!
//! Memory is independent of the run's length: clocks have an entry per
//! location the thread (or write) knows of, and the recent writes are a
//! bounded ring per location.

use super::psc_reach::{target, Part, Payload, Reach, TargetKind, MAX_LOCS};
use crate::{Loc, MemOrder, Value};
use std::collections::VecDeque;

/// How many recent writes of each location keep their value (for the
/// compare-exchange and wait-turn questions).
pub const RECENT: usize = 64;

/// A write's place in its location's modification order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp {
    /// Writes up to and including it, the initial one not counted.
    pub ts: u32,
    /// Of those, the ones that are not read-modify-writes.
    pub plain: u32,
}

/// A location clock: a stamp per location, sorted by location; absent
/// means the initial write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clock(Vec<(u32, Stamp)>);

impl Clock {
    pub fn get(&self, loc: Loc) -> Stamp {
        match self.0.binary_search_by_key(&loc.0, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => Stamp::default(),
        }
    }
    /// Raises the entry of `loc` to `s`.
    fn raise(&mut self, loc: Loc, s: Stamp) {
        match self.0.binary_search_by_key(&loc.0, |e| e.0) {
            Ok(i) => {
                if s.ts > self.0[i].1.ts {
                    self.0[i].1 = s;
                }
            }
            Err(i) => self.0.insert(i, (loc.0, s)),
        }
    }
    fn join(&mut self, other: &Clock) {
        if other.0.is_empty() {
            return;
        }
        if self.0.is_empty() {
            self.0.clone_from(&other.0);
            return;
        }
        let (a, b) = (&self.0, &other.0);
        let mut out = Vec::with_capacity(a.len().max(b.len()));
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            use std::cmp::Ordering::*;
            match a[i].0.cmp(&b[j].0) {
                Less => {
                    out.push(a[i]);
                    i += 1;
                }
                Greater => {
                    out.push(b[j]);
                    j += 1;
                }
                Equal => {
                    out.push(if b[j].1.ts > a[i].1.ts { b[j] } else { a[i] });
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        self.0 = out;
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A recent write of a location.
#[derive(Clone, Copy, Debug)]
pub struct RecentWrite {
    pub val: Value,
    pub rmw: bool,
    pub thread: u32,
    /// The caller's tag (a source site, an operation number).
    pub tag: u64,
}

#[derive(Clone, Debug, Default)]
struct LocState {
    last: Stamp,
    init: Value,
    /// What an acquire read of the latest write synchronises with.
    released: Clock,
    /// SC view of the latest write, and of all accesses so far.
    sc_last: Clock,
    sc_all: Clock,
    /// The last writes, oldest first; the back one has stamp `last`.
    recent: VecDeque<RecentWrite>,
    /// The position (`ts`) of the newest SeqCst write, 0 if none.
    sc_write: u32,
    /// psc (see the module note): the payload `released` carries; what
    /// reaches the SeqCst accesses of the location so far (a later write
    /// is psc-after them: `mo`/`rb`); what reaches the SC fences before
    /// the accesses of the location so far (`eco` from those reaches a
    /// later write).
    released_reach: Payload,
    sc_reach: Reach,
    fenced_reach: Reach,
}

/// Where a thread's last event was, for `po≠loc; hb; po≠loc`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum LastEvent {
    /// None yet.
    #[default]
    Start,
    /// At no location (a fence, spawn or join).
    Nowhere,
    At(u32),
}

#[derive(Clone, Debug, Default)]
struct ThreadState {
    cur: Clock,
    acq: Clock,
    rel: Clock,
    sc: Clock,
    /// An open wait-loop turn (see [`Turn`]).
    turn: Option<Turn>,
    /// psc: the payloads riding with `cur`, `acq` and `rel`; what reaches
    /// the thread's SeqCst events so far (`po`); what reaches those since
    /// its last event at another location (released at its next one);
    /// where its last event was, and its `OtherLocation` reach as of its
    /// last event at another location than `last`.
    cur_reach: Payload,
    acq_reach: Payload,
    rel_reach: Payload,
    po_reach: Reach,
    pending_reach: Reach,
    last: LastEvent,
    before_run: Reach,
}

/// An open wait-loop turn of a thread: what a failed turn restores, and
/// what its reads add to their locations, held back until it is kept.
#[derive(Clone, Debug, Default)]
struct Turn {
    /// The thread's SC view, `po_reach` and `pending_reach` before it.
    sc: Clock,
    po_reach: Reach,
    pending_reach: Reach,
    /// Per read: its location, and what it adds to the location's
    /// `sc_all`, `sc_reach` and `fenced_reach`.
    held: Vec<(Loc, Clock, Reach, Reach)>,
}

/// The kind of access a witness is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeakStep {
    /// A read (or failed compare-exchange) of an older write.
    StaleRead,
    /// A write (or read-modify-write) ordered before a newer write.
    EarlyWrite,
}

/// A non-robustness witness: thread `thread`'s next access of `loc` can
/// be performed weakly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Witness {
    pub thread: u32,
    pub loc: Loc,
    pub step: WeakStep,
    /// The newest write of `loc` the thread is aware of (hb).
    pub aware: u32,
    /// The newest write of `loc` that is SC-before the thread.
    pub sc_before: u32,
    /// The write a stale read would read (its `ts`) and its value, or the
    /// write an early write would go right before.
    pub at: u32,
    pub val: Option<Value>,
}

/// The access a thread is about to perform, for [`LocationClocks::check`].
#[derive(Clone, Copy, Debug)]
pub enum NextAccess {
    Load,
    /// A store or an unconditional read-modify-write.
    Write,
    /// A compare-exchange expecting `expected` (`weak`: it may fail
    /// whatever it reads).
    Cas {
        expected: Value,
        weak: bool,
    },
}

/// The location-clock state of one SC run.
#[derive(Clone, Debug)]
pub struct LocationClocks {
    locs: Vec<LocState>,
    threads: Vec<ThreadState>,
    /// The release view of the last SC fence (RC20's fence location).
    fences: Clock,
    /// Whether the run has had a SeqCst access.
    sc_accesses: bool,
    /// Per location, the newest write an SC fence came after: that the
    /// fence's thread was aware of, or had read (see [`Self::check`]).
    fenced_writes: Clock,
    /// Weak steps not reported because psc might forbid them (only with
    /// locations beyond `psc_reach::MAX_LOCS`).
    pub unjudged: u64,
    /// The payload of the last SC fence (see `fences`).
    fences_reach: Payload,
    /// Whether every location has been within `MAX_LOCS`: psc is then
    /// decided exactly.
    psc_exact: bool,
}

/// A pseudo-location whose entry in a thread's current view is set once an
/// SC fence happens before it (the entry travels with happens-before).
const FENCED: Loc = Loc(u32::MAX);

impl Default for LocationClocks {
    fn default() -> Self {
        LocationClocks {
            locs: Vec::new(),
            threads: Vec::new(),
            fences: Clock::default(),
            sc_accesses: false,
            fenced_writes: Clock::default(),
            unjudged: 0,
            fences_reach: Payload::default(),
            psc_exact: true,
        }
    }
}

impl LocationClocks {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds location `loc` with initial value `init` (locations are dense
    /// from 0; adding one beyond the end adds those before it with 0).
    pub fn add_loc(&mut self, loc: Loc, init: Value) {
        self.psc_exact &= loc.0 < MAX_LOCS;
        let i = loc.0 as usize;
        if self.locs.len() <= i {
            self.locs.resize_with(i + 1, LocState::default);
        }
        self.locs[i] = LocState {
            init,
            ..LocState::default()
        };
    }

    fn loc(&mut self, loc: Loc) -> &mut LocState {
        self.psc_exact &= loc.0 < MAX_LOCS;
        let i = loc.0 as usize;
        if self.locs.len() <= i {
            self.locs.resize_with(i + 1, LocState::default);
        }
        &mut self.locs[i]
    }

    fn thread(&mut self, t: u32) -> &mut ThreadState {
        let i = t as usize;
        if self.threads.len() <= i {
            self.threads.resize_with(i + 1, ThreadState::default);
        }
        &mut self.threads[i]
    }

    /// Thread `child` starts, hb- and SC-after `parent`'s events so far.
    pub fn spawn(&mut self, parent: u32, child: u32) {
        self.thread(parent);
        self.enter(parent as usize, None);
        let p = self.thread(parent).clone();
        let c = self.thread(child);
        *c = ThreadState {
            cur: p.cur.clone(),
            acq: p.cur,
            sc: p.sc,
            cur_reach: p.cur_reach.clone(),
            acq_reach: p.cur_reach,
            ..ThreadState::default()
        };
    }

    /// Thread `t` joins `child`.
    pub fn join(&mut self, t: u32, child: u32) {
        self.thread(t);
        self.thread(child);
        // The child's end and the join are events at no location.
        self.enter(child as usize, None);
        self.enter(t as usize, None);
        let c = self.thread(child).clone();
        let th = self.thread(t);
        th.cur.join(&c.cur);
        th.acq.join(&c.cur);
        th.sc.join(&c.sc);
        th.cur_reach.join(&c.cur_reach);
        th.acq_reach.join(&c.cur_reach);
    }

    /// Thread `t`'s next event is at `at` (`None`: at no location). For
    /// `po≠loc; hb; po≠loc`: an event at another location than the last
    /// one releases what reached the SeqCst accesses before it at that
    /// location (it is their `c*`), and a run of events at one location
    /// keeps the thread's `OtherLocation` reach as of the event before the
    /// run (their `d*`).
    fn enter(&mut self, t: usize, at: Option<u32>) {
        let th = &mut self.threads[t];
        let moved = match (th.last, at) {
            (LastEvent::At(m), Some(l)) if m == l => return,
            (LastEvent::Start, Some(_)) => {
                th.before_run.clear();
                false
            }
            (_, Some(_)) => {
                th.before_run.clear();
                th.cur_reach
                    .take_part(Part::OtherLocation, 0, &mut th.before_run);
                true
            }
            (_, None) => true,
        };
        if moved && !th.pending_reach.is_empty() {
            th.cur_reach
                .add_to(Part::OtherLocation, 0, &th.pending_reach);
            th.acq_reach
                .add_to(Part::OtherLocation, 0, &th.pending_reach);
            th.pending_reach.clear();
        }
        th.last = match at {
            Some(l) => LastEvent::At(l),
            None => LastEvent::Nowhere,
        };
    }

    /// What reaches thread `t`'s SeqCst access of `l` if it comes next,
    /// through program order, `po≠loc; hb; po≠loc` and `hb|loc` (its
    /// `mo`/`rb` predecessors are the caller's). SC fences that happen
    /// before it are left out: what they reach is in the thread's
    /// `Fences` part, which every later event the access reaches sees too
    /// (it happens after them), and `psc_cycle` reads it first.
    fn access_reach(&self, t: usize, l: u32) -> Reach {
        let th = &self.threads[t];
        let mut r = th.po_reach.clone();
        match th.last {
            LastEvent::At(m) if m == l => r.join(&th.before_run),
            LastEvent::Start => {}
            _ => th.cur_reach.take_part(Part::OtherLocation, 0, &mut r),
        }
        th.cur_reach.take_part(Part::SameLocation, l, &mut r);
        r
    }

    /// Thread `t`'s SeqCst access of `l`, reached by `r`, happened: it
    /// reaches the thread's later SeqCst events, those after its next
    /// event elsewhere (`po≠loc; hb; po≠loc`), accesses of `l` after it in
    /// happens-before, SC fences after it, and later writes of `l` (held
    /// back for a read in a wait-loop turn, see [`Self::turn_kept`]).
    fn add_access_reach(&mut self, t: usize, l: u32, r: &Reach) {
        let th = &mut self.threads[t];
        th.po_reach.join(r);
        th.pending_reach.join(r);
        for p in [&mut th.cur_reach, &mut th.acq_reach] {
            p.add_to(Part::SameLocation, l, r);
            p.add_to(Part::IntoFences, 0, r);
        }
        match &mut th.turn {
            Some(turn) => turn
                .held
                .push((Loc(l), Clock::default(), r.clone(), Reach::default())),
            None => self.locs[l as usize].sc_reach.join(r),
        }
    }

    /// Whether a psc cycle forbids thread `t`'s next access of `loc` to be
    /// performed weakly so that it comes before the write at position
    /// `first` in `eco` (a stale read of `first - 1`, or a write placed
    /// right before `first`). The step's new edges against the run's order
    /// go from the step (if `seq_cst`) to SeqCst writes of `loc` at or
    /// after `first` and to SC fences after such a write, and from an SC
    /// fence before the step to SeqCst writes at or after `first` and SC
    /// fences after an access of one; a cycle exists iff such a target
    /// already reaches its source in psc.
    fn psc_cycle(&self, t: u32, loc: Loc, first: u32, seq_cst: bool) -> bool {
        let Some(th) = self.threads.get(t as usize) else {
            return false;
        };
        let l = loc.0;
        let fences = |kind| th.cur_reach.get_in(Part::Fences, 0, target(l, kind));
        if fences(TargetKind::Write) >= first || fences(TargetKind::FenceAfterAccess) >= first {
            return true;
        }
        if !seq_cst {
            return false;
        }
        let r = self.access_reach(t as usize, l);
        r.get(target(l, TargetKind::Write)) >= first
            || r.get(target(l, TargetKind::FenceAfterWrite)) >= first
    }

    /// The stamp of the newest write of `loc`.
    pub fn last(&self, loc: Loc) -> Stamp {
        self.locs
            .get(loc.0 as usize)
            .map_or(Stamp::default(), |l| l.last)
    }

    /// The recent write of `loc` with `ts`, if still kept (`None` for the
    /// initial write too; see [`Self::value_at`]).
    pub fn recent(&self, loc: Loc, ts: u32) -> Option<&RecentWrite> {
        let l = self.locs.get(loc.0 as usize)?;
        let back = l.last.ts;
        let age = back.checked_sub(ts)? as usize;
        if ts == 0 || age >= l.recent.len() {
            return None;
        }
        l.recent.get(l.recent.len() - 1 - age)
    }

    /// The value of the write of `loc` with `ts`, if known.
    pub fn value_at(&self, loc: Loc, ts: u32) -> Option<Value> {
        if ts == 0 {
            return self.locs.get(loc.0 as usize).map(|l| l.init).or(Some(0));
        }
        self.recent(loc, ts).map(|w| w.val)
    }

    /// Whether the write of `loc` with `ts` is a read-modify-write, if known.
    fn rmw_at(&self, loc: Loc, ts: u32) -> Option<bool> {
        if ts == 0 {
            return Some(false);
        }
        self.recent(loc, ts).map(|w| w.rmw)
    }

    /// Whether thread `t`'s next access of `loc` is a witness: it could be
    /// performed weakly, against SC. `keeps_waiting(v)`: reading `v` would
    /// make the thread's current wait-loop turn a failed one (always false
    /// outside wait loops); such a read is no witness. `seq_cst`: the
    /// access is SeqCst (see the module's note).
    pub fn check(
        &mut self,
        t: u32,
        loc: Loc,
        access: NextAccess,
        seq_cst: bool,
        keeps_waiting: &dyn Fn(Value) -> bool,
    ) -> Option<Witness> {
        let th = self.threads.get(t as usize)?;
        let aware = th.cur.get(loc);
        let sc = th.sc.get(loc);
        if aware.ts >= sc.ts {
            return None;
        }
        // The sources a psc edge against the run's order could start from:
        // the step itself, or an SC fence before it (see the module's note).
        let psc_sources = seq_cst || self.sc_accesses && th.cur.get(FENCED).ts > 0;
        let witness = |step, at, val| Witness {
            thread: t,
            loc,
            step,
            aware: aware.ts,
            sc_before: sc.ts,
            at,
            val,
        };
        // A stale read of the write with `ts` in [aware, sc): its value, if
        // it matters and is known.
        let stale_read = |accept: &dyn Fn(Value) -> bool| {
            (aware.ts..sc.ts).rev().find_map(|ts| {
                let v = self.value_at(loc, ts)?;
                accept(v).then(|| witness(WeakStep::StaleRead, ts, Some(v)))
            })
        };
        // Whether psc forbids the weak step `w` (see `psc_cycle`): the
        // newest candidate is tried first, and an older one only adds
        // targets, so one forbidden means every older one is too.
        let exact = self.psc_exact;
        let forbidden = |w: &Witness| {
            let first = match w.step {
                WeakStep::StaleRead => w.at + 1,
                WeakStep::EarlyWrite => w.at,
            };
            exact && self.psc_cycle(t, loc, first, seq_cst)
        };
        let allowed = |w: Option<Witness>| w.filter(|w| !forbidden(w));
        let found = match access {
            NextAccess::Load => allowed(stale_read(&|v| !keeps_waiting(v))),
            NextAccess::Write => allowed((aware.plain < sc.plain).then(|| {
                // Right before the newest non-RMW write in (aware, sc].
                let at = (aware.ts + 1..=sc.ts)
                    .rev()
                    .find(|&ts| self.rmw_at(loc, ts) == Some(false))
                    .unwrap_or(sc.ts);
                witness(WeakStep::EarlyWrite, at, None)
            })),
            NextAccess::Cas { expected, weak } => {
                // Success: reads a stale `expected` and goes right after it,
                // before a write that is not an RMW.
                let success = (aware.ts..sc.ts).rev().find_map(|ts| {
                    let ok = self.value_at(loc, ts) == Some(expected)
                        && self.rmw_at(loc, ts + 1) == Some(false);
                    ok.then(|| witness(WeakStep::EarlyWrite, ts + 1, Some(expected)))
                });
                allowed(success).or_else(|| {
                    // Failure: reads a stale other value (any, if weak).
                    allowed(stale_read(&|v| {
                        (weak || v != expected) && !keeps_waiting(v)
                    }))
                })
            }
        }?;
        // Beyond `MAX_LOCS` locations psc is not tracked exactly: a step a
        // psc edge could forbid is left unjudged.
        if !exact && psc_sources && self.psc_edge_back(&found) {
            self.unjudged += 1;
            return None;
        }
        Some(found)
    }

    /// Whether the weak step of `w` could add a psc edge against the run's
    /// order, from the step (if SeqCst) or an SC fence before it: to a
    /// SeqCst write the step's eco reaches (one after the write a stale
    /// read takes, or at or after the place of an early write), or to an
    /// SC fence after such a write or a read of it. Every other psc edge of
    /// the run with the step follows the run's order, so without one of
    /// these psc stays acyclic. With one, psc may still be acyclic: the
    /// step is then left unjudged.
    fn psc_edge_back(&self, w: &Witness) -> bool {
        let first = match w.step {
            WeakStep::StaleRead => w.at + 1,
            WeakStep::EarlyWrite => w.at,
        };
        let sc_write = self.locs.get(w.loc.0 as usize).map_or(0, |l| l.sc_write);
        sc_write >= first || self.fenced_writes.get(w.loc).ts >= first
    }

    /// Thread `t` read the latest write of `loc` with order `ord` (a load,
    /// or a compare-exchange that failed).
    pub fn load(&mut self, t: u32, loc: Loc, ord: MemOrder) {
        self.loc(loc);
        let i = self.thread_mut_init(t);
        self.enter(i, Some(loc.0));
        if !ord.is_atomic() {
            // A plain read takes no part in SC order, and the thread does
            // not become aware of what it read: a racy plain read may read
            // an older write than the run's (a step these runs do not
            // take), so later reads stay free to (see the note on
            // non-atomics in docs/robustness.md).
            return;
        }
        self.sc_accesses |= ord.is_sc();
        let l = &self.locs[loc.0 as usize];
        let th = &mut self.threads[i];
        th.cur.raise(loc, l.last);
        th.acq.raise(loc, l.last);
        if ord.is_acquire() {
            th.cur.join(&l.released);
            th.cur_reach.join(&l.released_reach);
        }
        th.acq.join(&l.released);
        th.acq_reach.join(&l.released_reach);
        th.sc.join(&l.sc_last);
        match &mut th.turn {
            Some(turn) => turn
                .held
                .push((loc, th.sc.clone(), Reach::default(), Reach::default())),
            None => self.locs[loc.0 as usize].sc_all.join(&th.sc),
        }
        if ord.is_sc() {
            let r = self.access_reach(i, loc.0);
            self.add_access_reach(i, loc.0, &r);
        }
        // Fences before this read reach SeqCst writes after it (`eco`).
        let l = &mut self.locs[loc.0 as usize];
        let th = &mut self.threads[i];
        match &mut th.turn {
            Some(turn) => {
                let mut fenced = Reach::default();
                th.cur_reach.take_part(Part::Fences, 0, &mut fenced);
                if !fenced.is_empty() {
                    turn.held
                        .push((loc, Clock::default(), Reach::default(), fenced));
                }
            }
            None => th.cur_reach.take_part(Part::Fences, 0, &mut l.fenced_reach),
        }
    }

    fn thread_mut_init(&mut self, t: u32) -> usize {
        self.thread(t);
        t as usize
    }

    /// Thread `t` wrote `val` to `loc` with order `ord`; `rmw`: a
    /// read-modify-write (of the latest write). `tag` is kept with it.
    pub fn write(&mut self, t: u32, loc: Loc, ord: MemOrder, val: Value, rmw: bool, tag: u64) {
        self.write_with(t, loc, ord, val, rmw, tag, true);
    }

    /// A read-modify-write that robustness leaves out (a reference count,
    /// whose order is not observable): it synchronises, but adds no SC
    /// edge.
    pub fn write_unordered(&mut self, t: u32, loc: Loc, ord: MemOrder, val: Value) {
        self.write_with(t, loc, ord, val, true, 0, false);
    }

    #[allow(clippy::too_many_arguments)]
    fn write_with(
        &mut self,
        t: u32,
        loc: Loc,
        ord: MemOrder,
        val: Value,
        rmw: bool,
        tag: u64,
        sc_edges: bool,
    ) {
        self.loc(loc);
        let i = self.thread_mut_init(t);
        self.enter(i, Some(loc.0));
        if !ord.is_atomic() {
            return;
        }
        self.sc_accesses |= ord.is_sc();
        self.turn_kept(t);
        let l = &mut self.locs[loc.0 as usize];
        let th = &mut self.threads[i];
        if rmw {
            if ord.is_acquire() {
                th.cur.join(&l.released);
                th.cur_reach.join(&l.released_reach);
            }
            th.acq.join(&l.released);
            th.acq_reach.join(&l.released_reach);
        }
        l.last = Stamp {
            ts: l.last.ts + 1,
            plain: l.last.plain + (!rmw) as u32,
        };
        let s = l.last;
        th.cur.raise(loc, s);
        th.acq.raise(loc, s);
        // psc: the SeqCst accesses of `loc` before this write reach the
        // SC fences it happens before (`eco` into a write before them); a
        // SeqCst write is reached by them (`mo`, `rb`) and by the fences
        // before any access of `loc` before it, besides what reaches any
        // SeqCst access. (Fence-to-fence edges need nothing here: SC fences
        // synchronise in the run's order, see `fence`.)
        for p in [&mut th.cur_reach, &mut th.acq_reach] {
            p.raise_in(Part::WritesBefore, 0, u64::from(loc.0), s.ts);
            p.add_to(Part::IntoFences, 0, &l.sc_reach);
        }
        if ord.is_sc() {
            let mut r = self.access_reach(i, loc.0);
            let l = &self.locs[loc.0 as usize];
            r.join(&l.sc_reach);
            r.join(&l.fenced_reach);
            r.raise(target(loc.0, TargetKind::Write), s.ts);
            self.add_access_reach(i, loc.0, &r);
        }
        let l = &mut self.locs[loc.0 as usize];
        let th = &mut self.threads[i];
        th.cur_reach.take_part(Part::Fences, 0, &mut l.fenced_reach);
        let mut released = if ord.is_release() {
            th.cur.clone()
        } else {
            th.rel.clone()
        };
        released.raise(loc, s);
        let released_reach = if ord.is_release() {
            th.cur_reach.clone()
        } else {
            th.rel_reach.clone()
        };
        if rmw {
            l.released.join(&released);
            l.released_reach.join(&released_reach);
        } else {
            l.released = released;
            l.released_reach = released_reach;
        }
        if sc_edges {
            th.sc.join(&l.sc_all);
            th.sc.raise(loc, s);
            l.sc_last.clone_from(&th.sc);
            l.sc_all.clone_from(&th.sc);
        }
        if ord.is_sc() {
            l.sc_write = s.ts;
        }
        if l.recent.len() == RECENT {
            l.recent.pop_front();
        }
        l.recent.push_back(RecentWrite {
            val,
            rmw,
            thread: t,
            tag,
        });
    }

    /// Thread `t` performs a fence.
    pub fn fence(&mut self, t: u32, ord: MemOrder) {
        let i = self.thread_mut_init(t);
        self.enter(i, None);
        let th = &mut self.threads[i];
        if ord.is_acquire() {
            let acq = th.acq.clone();
            th.cur.join(&acq);
            let acq = th.acq_reach.clone();
            th.cur_reach.join(&acq);
        }
        if ord == MemOrder::SeqCst {
            th.cur.raise(FENCED, Stamp { ts: 1, plain: 1 });
            th.acq.raise(FENCED, Stamp { ts: 1, plain: 1 });
            th.cur.join(&self.fences);
            th.acq.join(&self.fences);
            th.cur_reach.join(&self.fences_reach);
            th.acq_reach.join(&self.fences_reach);
            // What reaches the fence: the thread's SeqCst events, SC
            // fences and SeqCst accesses before it, and the SeqCst accesses
            // `eco`-before writes before it; it is a target by the writes
            // it comes after.
            let mut r = th.po_reach.clone();
            th.cur_reach.take_part(Part::Fences, 0, &mut r);
            th.cur_reach.take_part(Part::IntoFences, 0, &mut r);
            for &(l, stamp) in &th.cur.0 {
                if l != FENCED.0 {
                    r.raise(target(l, TargetKind::FenceAfterAccess), stamp.ts);
                }
            }
            for (l, ts) in th.cur_reach.iter_part(Part::WritesBefore, 0) {
                r.raise(target(l as u32, TargetKind::FenceAfterWrite), ts);
            }
            th.po_reach.join(&r);
            th.cur_reach.add_to(Part::Fences, 0, &r);
            th.acq_reach.add_to(Part::Fences, 0, &r);
            self.fences.join(&th.cur);
            self.fences_reach.join(&th.cur_reach);
            self.fenced_writes.join(&th.cur);
        }
        if ord.is_release() {
            th.rel = th.cur.clone();
            th.rel_reach = th.cur_reach.clone();
        }
    }

    /// Thread `t` starts a turn of a wait loop (closing one still open as
    /// kept).
    pub fn turn_start(&mut self, t: u32) {
        self.turn_kept(t);
        let i = self.thread_mut_init(t);
        let th = &mut self.threads[i];
        th.turn = Some(Turn {
            sc: th.sc.clone(),
            po_reach: th.po_reach.clone(),
            pending_reach: th.pending_reach.clone(),
            held: Vec::new(),
        });
    }

    /// Thread `t`'s open turn failed: it counts for nothing SC (what its
    /// reads added to the thread's views stays: at most an edge more, so
    /// a witness less, never a false one).
    pub fn turn_failed(&mut self, t: u32) {
        if let Some(th) = self.threads.get_mut(t as usize) {
            if let Some(turn) = th.turn.take() {
                th.sc = turn.sc;
                th.po_reach = turn.po_reach;
                th.pending_reach = turn.pending_reach;
            }
        }
    }

    /// Thread `t`'s open turn, if any, counts.
    pub fn turn_kept(&mut self, t: u32) {
        let Some(th) = self.threads.get_mut(t as usize) else {
            return;
        };
        let Some(turn) = th.turn.take() else {
            return;
        };
        for (loc, view, sc, fenced) in turn.held {
            let l = &mut self.locs[loc.0 as usize];
            l.sc_all.join(&view);
            l.sc_reach.join(&sc);
            l.fenced_reach.join(&fenced);
        }
    }

    /// Whether thread `t` has a turn open.
    pub fn in_turn(&self, t: u32) -> bool {
        self.threads
            .get(t as usize)
            .is_some_and(|th| th.turn.is_some())
    }

    /// Entries held by all clocks: the monitor's size, for benchmarks.
    pub fn entries(&self) -> usize {
        let threads: usize = self
            .threads
            .iter()
            .map(|t| {
                t.cur.len()
                    + t.acq.len()
                    + t.rel.len()
                    + t.sc.len()
                    + t.turn.as_ref().map_or(0, |turn| {
                        turn.sc.len()
                            + turn.po_reach.len()
                            + turn.pending_reach.len()
                            + turn
                                .held
                                .iter()
                                .map(|h| h.1.len() + h.2.len() + h.3.len())
                                .sum::<usize>()
                    })
                    + [&t.cur_reach, &t.acq_reach, &t.rel_reach]
                        .iter()
                        .map(|p| p.len())
                        .sum::<usize>()
                    + t.po_reach.len()
                    + t.pending_reach.len()
                    + t.before_run.len()
            })
            .sum();
        let locs: usize = self
            .locs
            .iter()
            .map(|l| {
                l.released.len()
                    + l.sc_last.len()
                    + l.sc_all.len()
                    + l.recent.len()
                    + l.released_reach.len()
                    + l.sc_reach.len()
                    + l.fenced_reach.len()
            })
            .sum();
        threads + locs + self.fences.len() + self.fences_reach.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemOrder::*;

    fn never(_: Value) -> bool {
        false
    }

    #[test]
    fn store_buffering_is_a_witness_once_a_read_has_passed_a_write() {
        // x = 1; r1 = y  ||  y = 1; r2 = x, run T0 first, then T1's write.
        let (x, y) = (Loc(0), Loc(1));
        let mut m = LocationClocks::new();
        m.add_loc(x, 0);
        m.add_loc(y, 0);
        m.write(0, x, Relaxed, 1, false, 0);
        assert_eq!(m.check(0, y, NextAccess::Load, false, &never), None);
        m.load(0, y, Relaxed);
        m.write(1, y, Relaxed, 1, false, 0);
        // T1 is SC-after x = 1 (by T0's read of y, fr), but not aware of it.
        let w = m
            .check(1, x, NextAccess::Load, false, &never)
            .expect("a witness");
        assert_eq!(
            (w.step, w.aware, w.sc_before, w.val),
            (WeakStep::StaleRead, 0, 1, Some(0))
        );
    }

    #[test]
    fn message_passing_with_release_acquire_is_no_witness() {
        let (x, y) = (Loc(0), Loc(1));
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.write(0, y, Release, 1, false, 0);
        m.load(1, y, Acquire);
        assert_eq!(m.check(1, x, NextAccess::Load, false, &never), None);
        // With a relaxed flag read, the data read may be stale.
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.write(0, y, Release, 1, false, 0);
        m.load(1, y, Relaxed);
        assert!(m.check(1, x, NextAccess::Load, false, &never).is_some());
    }

    #[test]
    fn single_location_reads_are_coherent() {
        // CoRR: a thread that read x = 1 may not read x = 0 after it.
        let x = Loc(0);
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.load(1, x, Relaxed);
        assert_eq!(m.check(1, x, NextAccess::Load, false, &never), None);
        assert_eq!(m.check(1, x, NextAccess::Write, false, &never), None);
    }

    #[test]
    fn a_write_never_goes_before_an_rmw() {
        // T0: fetch_add(x); r = y  ||  T1: y = 1; x = 2 — T1's store may not
        // go before the RMW, which read the initial write.
        let (x, y) = (Loc(0), Loc(1));
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, true, 0);
        m.load(0, y, Relaxed);
        m.write(1, y, Relaxed, 1, false, 0);
        assert_eq!(m.check(1, x, NextAccess::Write, false, &never), None);
        // A plain store in its place may be ordered first.
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.load(0, y, Relaxed);
        m.write(1, y, Relaxed, 1, false, 0);
        assert!(m.check(1, x, NextAccess::Write, false, &never).is_some());
    }

    #[test]
    fn a_failed_turn_leaves_no_sc_trace() {
        // x = 1; while y != 1 {}  ||  y = 1; r = x: the failed turn's read
        // of y = 0 orders nothing.
        let (x, y) = (Loc(0), Loc(1));
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.turn_start(0);
        m.load(0, y, Relaxed);
        m.write(1, y, Relaxed, 1, false, 0);
        m.turn_failed(0);
        assert_eq!(m.check(1, x, NextAccess::Load, false, &never), None);
        // Kept, it does.
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.turn_start(0);
        m.load(0, y, Relaxed);
        m.turn_kept(0);
        m.write(1, y, Relaxed, 1, false, 0);
        assert!(m.check(1, x, NextAccess::Load, false, &never).is_some());
    }
}
