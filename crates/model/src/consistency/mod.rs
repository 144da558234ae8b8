//! Consistency of an execution graph under a memory model.
//!
//! Happens-before is computed with vector clocks (release views carried by
//! writes implement release sequences and fences). Modification order is not
//! enumerated: per location it is a constraint graph over "RMW chains" (a
//! write followed by the RMWs that read from it, which must stay adjacent),
//! with the edges coherence forces. A graph is coherent iff that graph is
//! acyclic. Only the seq_cst axiom (RC11's psc) depends on how unordered
//! writes are ordered; for it we search the completions of the constraint
//! graph at the locations that can matter.

mod clocks;
pub mod coherence;
mod global_order;
mod psc;

use crate::bits::BitMatrix;
use crate::event::{Action, EventId, Loc, MemOrder};
use crate::graph::ExecutionGraph;
use clocks::ClockMemo;
use global_order::HardwareFrame;
use psc::PscFrame;
use std::cell::RefCell;

pub use crate::models::Model;

/// Why a graph is inconsistent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inconsistency {
    /// po ∪ rf has a cycle (out-of-thin-air).
    ThinAir,
    /// Two RMWs read from the same write, or a write sits between an RMW and its source.
    Atomicity(Loc),
    /// hb;eco? is not irreflexive: no modification order fits.
    Coherence(Loc),
    /// No modification order makes psc (or SC's total order) acyclic.
    SeqCst,
}

/// Modification-order constraints of one location.
#[derive(Debug)]
pub struct LocMo {
    pub loc: Loc,
    /// Writes to the location; index 0 is the initialisation write.
    pub writes: Vec<EventId>,
    /// Reads of the location (successful and failed RMWs included).
    pub reads: Vec<EventId>,
    /// The index in `writes` of each read's source.
    pub read_src: Vec<usize>,
    /// The chain each write belongs to, and its position in it.
    pub chain_of: Vec<usize>,
    pub pos: Vec<usize>,
    /// The chains' write indices, chain after chain, each in modification
    /// order; chain `c` is `chain_items[chain_start[c]..chain_start[c + 1]]`.
    chain_items: Vec<usize>,
    chain_start: Vec<usize>,
    /// Transitive closure of the forced order between chains.
    pub order: BitMatrix,
    /// Whether seq_cst accesses to this location exist.
    pub has_sc: bool,
}

impl Clone for LocMo {
    fn clone(&self) -> Self {
        let mut lm = LocMo::empty(self.loc);
        lm.clone_from(self);
        lm
    }
    /// Reuses `self`'s buffers (see `coherence.rs`, which copies caches
    /// into pooled ones).
    fn clone_from(&mut self, src: &Self) {
        self.loc = src.loc;
        self.writes.clone_from(&src.writes);
        self.reads.clone_from(&src.reads);
        self.read_src.clone_from(&src.read_src);
        self.chain_of.clone_from(&src.chain_of);
        self.pos.clone_from(&src.pos);
        self.chain_items.clone_from(&src.chain_items);
        self.chain_start.clone_from(&src.chain_start);
        self.order.clone_from(&src.order);
        self.has_sc = src.has_sc;
    }
}

impl LocMo {
    pub(crate) fn empty(loc: Loc) -> Self {
        // Room for a location's usual accesses: the buffers are pooled and
        // reused (see `coherence.rs`), and a copy extended by a few accesses
        // then grows none of them.
        const ROOM: usize = 16;
        let mut chain_start = Vec::with_capacity(ROOM);
        chain_start.push(0);
        LocMo {
            loc,
            writes: Vec::with_capacity(ROOM),
            reads: Vec::with_capacity(ROOM),
            read_src: Vec::with_capacity(ROOM),
            chain_of: Vec::with_capacity(ROOM),
            pos: Vec::with_capacity(ROOM),
            chain_items: Vec::with_capacity(ROOM),
            chain_start,
            order: BitMatrix::with_capacity(ROOM),
            has_sc: false,
        }
    }
    /// Empties it for `loc`, keeping its buffers.
    pub(crate) fn clear(&mut self, loc: Loc) {
        self.loc = loc;
        self.writes.clear();
        self.reads.clear();
        self.read_src.clear();
        self.chain_of.clear();
        self.pos.clear();
        self.chain_items.clear();
        self.chain_start.clear();
        self.chain_start.push(0);
        self.order.reset(0);
        self.has_sc = false;
    }
    /// How many RMW chains the location's writes form.
    pub fn num_chains(&self) -> usize {
        self.chain_start.len() - 1
    }
    /// Chain `c`'s write indices in modification order.
    pub fn chain(&self, c: usize) -> &[usize] {
        &self.chain_items[self.chain_start[c]..self.chain_start[c + 1]]
    }
    /// The write ending chain `c`.
    #[inline]
    fn chain_last(&self, c: usize) -> usize {
        self.chain_items[self.chain_start[c + 1] - 1]
    }
    /// Whether write `a` is forced before write `b` (write indices).
    #[inline]
    pub fn mo(&self, a: usize, b: usize) -> bool {
        let (ca, cb) = (self.chain_of[a], self.chain_of[b]);
        if ca == cb {
            self.pos[a] < self.pos[b]
        } else {
            self.order.get(ca, cb)
        }
    }
    /// Chains that nothing is forced after.
    pub fn sink_chains(&self) -> Vec<usize> {
        (0..self.num_chains())
            .filter(|&c| self.order.iter_row(c).next().is_none())
            .collect()
    }
    /// Builds the chains of the location's writes and the order coherence
    /// forces between them, from its accesses (`writes`, `reads`, `has_sc`
    /// filled), happens-before and each write's index in `writes`. `loose`
    /// is an RMW not held to atomicity (see [`Analysis::new_with_loose_rmw`]).
    pub(crate) fn constrain(
        &mut self,
        g: &ExecutionGraph,
        sc: &mut Scratch,
        loose: Option<EventId>,
        hb: impl Fn(EventId, EventId) -> bool,
        write_index: impl Fn(&[EventId], EventId) -> usize,
    ) -> Result<(), Inconsistency> {
        let loc = self.loc;
        let LocMo {
            writes: ws,
            reads: rs,
            read_src,
            chain_of,
            pos,
            chain_items,
            chain_start,
            order,
            ..
        } = self;
        let nw = ws.len();
        read_src.clear();
        read_src.extend(rs.iter().map(|&r| write_index(ws, g.event(r).rf.unwrap())));
        // Chains: a write followed by the RMWs that read from it.
        let Scratch {
            next,
            is_rmw,
            stolen,
            ..
        } = sc;
        reset(next, nw, usize::MAX);
        reset(is_rmw, nw, false);
        stolen.clear();
        for (i, &w) in ws.iter().enumerate().skip(1) {
            let e = g.event(w);
            if e.is_rmw() {
                let src = write_index(ws, e.rf.unwrap());
                if loose == Some(w) {
                    stolen.push((src, i));
                    continue;
                }
                if next[src] != usize::MAX {
                    return Err(Inconsistency::Atomicity(loc));
                }
                is_rmw[i] = true;
                next[src] = i;
            }
        }
        reset(chain_of, nw, usize::MAX);
        reset(pos, nw, 0);
        for (i, &rmw) in is_rmw.iter().enumerate() {
            if rmw {
                continue;
            }
            let c = chain_start.len() - 1;
            let start = chain_items.len();
            let mut cur = i;
            while cur != usize::MAX {
                chain_of[cur] = c;
                pos[cur] = chain_items.len() - start;
                chain_items.push(cur);
                cur = next[cur];
            }
            chain_start.push(chain_items.len());
        }
        if chain_of.contains(&usize::MAX) {
            return Err(Inconsistency::ThinAir);
        }
        let nc = chain_start.len() - 1;
        order.reset(nc);
        let mut edge = |a: usize, b: usize| -> Result<(), Inconsistency> {
            let (ca, cb) = (chain_of[a], chain_of[b]);
            if ca == cb {
                if pos[a] >= pos[b] {
                    return Err(Inconsistency::Atomicity(loc));
                }
            } else {
                order.set(ca, cb);
            }
            Ok(())
        };
        for b in 1..nw {
            edge(0, b)?;
        }
        for &(src, i) in stolen.iter() {
            edge(src, i)?;
        }
        for a in 1..nw {
            for b in 1..nw {
                if a != b && hb(ws[a], ws[b]) {
                    edge(a, b)?;
                }
            }
        }
        for (ri, &r) in rs.iter().enumerate() {
            let w = read_src[ri];
            for (a, &wa) in ws.iter().enumerate() {
                if a == w || wa == r {
                    continue;
                }
                if hb(wa, r) {
                    edge(a, w)?; // CoWR
                }
                if hb(r, wa) {
                    edge(w, a)?; // CoRW
                }
            }
            for (r2i, &r2) in rs.iter().enumerate() {
                if r2 == r || !hb(r, r2) {
                    continue;
                }
                let w2 = read_src[r2i];
                if w2 != w {
                    edge(w, w2)?; // CoRR
                }
            }
        }
        order.close();
        if (0..nc).any(|c| order.get(c, c)) {
            return Err(Inconsistency::Coherence(loc));
        }
        Ok(())
    }

    /// The writes (indices) that the source of a new po-maximal access of
    /// the location may not come before in modification order: those that
    /// happen before the access (`before`) and the sources of the reads
    /// that do (its coherence edges all go into it). They depend on the
    /// access's thread only, not on its source.
    pub(crate) fn no_later_than_new_read(
        &self,
        before: impl Fn(EventId) -> bool,
        out: &mut smallvec::SmallVec<[usize; 16]>,
    ) {
        out.clear();
        // Each write once: a read whose source is listed already is not
        // looked at (a thread re-reading one write many times costs little).
        let mut bits: smallvec::SmallVec<[u64; 4]> =
            smallvec::smallvec![0; self.writes.len().div_ceil(64)];
        let listed: &mut [u64] = &mut bits;
        for (a, &x) in self.writes.iter().enumerate() {
            if before(x) {
                listed[a / 64] |= 1 << (a % 64);
                out.push(a);
            }
        }
        for (&r, &s) in self.reads.iter().zip(&self.read_src) {
            if out.len() == self.writes.len() {
                // Every write is listed (a location read many times and
                // written rarely).
                break;
            }
            if listed[s / 64] >> (s % 64) & 1 == 0 && before(r) {
                listed[s / 64] |= 1 << (s % 64);
                out.push(s);
            }
        }
    }

    /// Whether the new access keeps coherence reading write `wi` (and
    /// being a write too when `writes`: a successful RMW), given the
    /// writes its source may not come before
    /// ([`Self::no_later_than_new_read`]):
    /// `Some(forced)` when it does, where `forced` says those orders held
    /// already (so no seq_cst search over them can change).
    pub(crate) fn accepts_read_after(
        &self,
        wi: usize,
        writes: bool,
        no_later: &[usize],
    ) -> Option<bool> {
        if writes && self.chain_last(self.chain_of[wi]) != wi {
            return None;
        }
        let mut forced = true;
        // Newest first: a write forced after `wi` is usually a recent one.
        for &a in no_later.iter().rev() {
            if a == wi {
                continue;
            }
            if self.mo(wi, a) {
                return None;
            }
            forced &= self.mo(a, wi);
        }
        Some(forced)
    }

    /// Whether write `wi` could be last in modification order as far as the
    /// constraints go: it ends its RMW chain and no chain is forced after
    /// that one.
    pub(crate) fn could_end(&self, wi: usize) -> bool {
        let c = self.chain_of[wi];
        self.chain_last(c) == wi && self.order.iter_row(c).next().is_none()
    }

    /// Whether every other write of the location is forced before write
    /// `wi` (so it is last in every modification order).
    pub(crate) fn is_forced_last(&self, wi: usize) -> bool {
        let c = self.chain_of[wi];
        self.chain_last(c) == wi
            && (0..self.num_chains()).all(|other| other == c || self.order.get(other, c))
    }

    #[inline]
    fn write_index(&self, id: EventId) -> Option<usize> {
        self.writes.iter().position(|&w| w == id)
    }

    /// The index of write `w` in `writes` (which an extended `LocMo` no
    /// longer lists in graph order).
    #[inline]
    pub(crate) fn index_of(&self, w: EventId) -> usize {
        self.write_index(w).expect("a write of the location")
    }

    /// Adds write-index edge `a` → `b` to an order that is closed, keeping
    /// it closed; fails when it closes a cycle or breaks an RMW chain.
    fn add_closed_edge(&mut self, a: usize, b: usize) -> Result<(), Inconsistency> {
        let (ca, cb) = (self.chain_of[a], self.chain_of[b]);
        if ca == cb {
            return match self.pos[a] < self.pos[b] {
                true => Ok(()),
                false => Err(Inconsistency::Atomicity(self.loc)),
            };
        }
        if self.order.get(ca, cb) {
            return Ok(());
        }
        if self.order.get(cb, ca) {
            return Err(Inconsistency::Coherence(self.loc));
        }
        for x in 0..self.num_chains() {
            if x == ca || self.order.get(x, ca) {
                self.order.set(x, cb);
                self.order.or_row(x, cb);
            }
        }
        Ok(())
    }

    /// Extends a built `LocMo` (see [`Self::constrain`]) with write `w`, an
    /// RMW reading the write of index `src` or else a plain write: its
    /// place in the chains and its coherence edges with every access
    /// already there, both ways (it need not be the latest), but for the
    /// accesses of `old`: nothing new happens before those (see
    /// [`OldAccesses`]).
    pub(crate) fn push_write(
        &mut self,
        w: EventId,
        src: Option<usize>,
        old: OldAccesses,
        hb: impl Fn(EventId, EventId) -> bool,
    ) -> Result<(), Inconsistency> {
        let b = self.writes.len();
        self.writes.push(w);
        match src {
            Some(s) => {
                let c = self.chain_of[s];
                if self.chain_last(c) != s {
                    return Err(Inconsistency::Atomicity(self.loc));
                }
                self.chain_items.insert(self.chain_start[c + 1], b);
                for start in &mut self.chain_start[c + 1..] {
                    *start += 1;
                }
                self.chain_of.push(c);
                self.pos.push(self.pos[s] + 1);
            }
            None => {
                let c = self.num_chains();
                self.chain_items.push(b);
                self.chain_start.push(self.chain_items.len());
                self.chain_of.push(c);
                self.pos.push(0);
                self.order.grow(c + 1);
            }
        }
        self.add_closed_edge(0, b)?;
        // Newest first: once an edge from the latest write before `w` is
        // in, the older ones are implied and cost nothing (oldest first,
        // each would update the closure again).
        for a in (1..b).rev() {
            let x = self.writes[a];
            if hb(x, w) {
                self.add_closed_edge(a, b)?; // CoWW
            }
            if old.may_follow_write(a, || hb(w, x)) {
                self.add_closed_edge(b, a)?;
            }
        }
        for ri in (0..self.reads.len()).rev() {
            let (r, src) = (self.reads[ri], self.read_src[ri]);
            if hb(r, w) {
                self.add_closed_edge(src, b)?; // CoRW
            }
            if old.may_follow_read(ri, || hb(w, r)) {
                self.add_closed_edge(b, src)?; // CoWR
            }
        }
        Ok(())
    }

    /// Extends a built `LocMo` with read `r` of the write of index `src`
    /// (an RMW's write half first, with [`Self::push_write`]): its coherence
    /// edges with every access already there, both ways but for the
    /// accesses of `old`, from them only.
    pub(crate) fn push_read(
        &mut self,
        r: EventId,
        src: usize,
        old: OldAccesses,
        hb: impl Fn(EventId, EventId) -> bool,
    ) -> Result<(), Inconsistency> {
        for a in 0..self.writes.len() {
            let x = self.writes[a];
            if a == src || x == r {
                continue;
            }
            if hb(x, r) {
                self.add_closed_edge(a, src)?; // CoWR
            }
            if old.may_follow_write(a, || hb(r, x)) {
                self.add_closed_edge(src, a)?; // CoRW
            }
        }
        for ri in 0..self.reads.len() {
            let (r2, w2) = (self.reads[ri], self.read_src[ri]);
            if w2 == src {
                continue;
            }
            if hb(r2, r) {
                self.add_closed_edge(w2, src)?; // CoRR
            }
            if old.may_follow_read(ri, || hb(r, r2)) {
                self.add_closed_edge(src, w2)?;
            }
        }
        self.reads.push(r);
        self.read_src.push(src);
        Ok(())
    }
}

/// How many of a [`LocMo`]'s writes and reads it held before an extension
/// (by index, they come first). A new access never happens before one of
/// those: the constraints are extended only while the events they cover
/// keep their clocks, and every event that happens before a covered one
/// was there, and covered, when it was (the graph grows after its events,
/// and a cut keeps what the events it keeps depend on). So the pushes ask
/// only whether the old accesses happen before the new one (debug builds
/// check the other way too).
#[derive(Clone, Copy)]
pub(crate) struct OldAccesses {
    pub writes: usize,
    pub reads: usize,
}

impl OldAccesses {
    /// Whether the new access happens before write `a` (`new_hb`, asked
    /// only when `a` is new).
    #[inline]
    fn may_follow_write(self, a: usize, new_hb: impl FnOnce() -> bool) -> bool {
        Self::may_follow(a < self.writes, new_hb)
    }
    /// Whether the new access happens before read `ri` (as above).
    #[inline]
    fn may_follow_read(self, ri: usize, new_hb: impl FnOnce() -> bool) -> bool {
        Self::may_follow(ri < self.reads, new_hb)
    }
    #[inline]
    fn may_follow(old: bool, new_hb: impl FnOnce() -> bool) -> bool {
        if old {
            debug_assert!(!new_hb(), "a new access happens before an old one");
            false
        } else {
            new_hb()
        }
    }
}

/// Empties `v` and fills it with `len` copies of `x`, keeping its buffer.
fn reset<T: Copy>(v: &mut Vec<T>, len: usize, x: T) {
    v.clear();
    v.resize(len, x);
}

/// `dst` := `dst` ⊔ `src`, pointwise.
#[inline]
fn join_slice(dst: &mut [u32], src: &[u32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = (*d).max(*s);
    }
}

/// Adds `a -> b` to a closed chain order (the caller ensures `b -> a` is absent).
pub(crate) fn add_closed_edge(order: &mut BitMatrix, a: usize, b: usize) {
    let n = order.len();
    let mut row_b: Vec<u64> = order.row(b).to_vec();
    let w = b / 64;
    row_b[w] |= 1 << (b % 64);
    for i in 0..n {
        if i == a || order.get(i, a) {
            order.or_into(i, &row_b);
        }
    }
}

/// Everything derived from a graph that consistency and reports need.
pub struct Analysis<'g> {
    pub g: &'g ExecutionGraph,
    pub model: Model,
    offsets: Vec<usize>,
    ids: Vec<EventId>,
    /// hb clock of each event (including itself), `stride` entries per event:
    /// entry t = events of thread t before or at it.
    clocks: Vec<u32>,
    stride: usize,
    pub locs: Vec<LocMo>,
    /// Each write's index in its location's `LocMo::writes`.
    widx: Vec<u32>,
    has_sc_event: bool,
    has_sc_fence: bool,
    /// Built for one location (see [`Analysis::for_location`]).
    partial: bool,
    scratch: Scratch,
}

/// Temporaries of [`LocMo::constrain`], kept with the analysis so that they
/// go back to the pool with it.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Per write of a location: the RMW that reads it (`usize::MAX`: none).
    next: Vec<usize>,
    is_rmw: Vec<bool>,
    stolen: Vec<(usize, usize)>,
    /// An analysis's locations whose constraints came from the memo.
    cached: Vec<bool>,
}

/// The buffers of a dropped analysis. The explorer builds an analysis for
/// nearly every event it adds; allocating their dozen vectors afresh each
/// time was a quarter of its run time.
#[derive(Default)]
struct Buffers {
    offsets: Vec<usize>,
    ids: Vec<EventId>,
    clocks: Vec<u32>,
    widx: Vec<u32>,
    locs: Vec<LocMo>,
    scratch: Scratch,
}

/// How many dropped analyses' buffers a thread keeps (analyses nest only a
/// few deep).
const POOL_SIZE: usize = 4;

thread_local! {
    static POOL: RefCell<Vec<Buffers>> = const { RefCell::new(Vec::new()) };
}

impl Drop for Analysis<'_> {
    fn drop(&mut self) {
        let buffers = Buffers {
            offsets: std::mem::take(&mut self.offsets),
            ids: std::mem::take(&mut self.ids),
            clocks: std::mem::take(&mut self.clocks),
            widx: std::mem::take(&mut self.widx),
            locs: std::mem::take(&mut self.locs),
            scratch: std::mem::take(&mut self.scratch),
        };
        // During thread teardown the pool may be gone: then the buffers are freed.
        let _ = POOL.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut() {
                if pool.len() < POOL_SIZE {
                    pool.push(buffers);
                }
            }
        });
    }
}

/// What an analysis is built for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Happens-before and every location's constraints.
    Full,
    /// Happens-before alone ([`Analysis::happens_before`]).
    HappensBefore,
    /// Happens-before and the constraints of the locations the seq_cst axiom
    /// looks at, for a graph known to be coherent at every location
    /// ([`is_sc_consistent_given_coherence`]).
    SeqCstLocations,
}

impl<'g> Analysis<'g> {
    /// Computes happens-before and the coherence constraints; fails when po ∪ rf is
    /// cyclic or no coherent modification order exists.
    pub fn new(g: &'g ExecutionGraph, model: Model) -> Result<Self, Inconsistency> {
        Self::build(g, model, None, Scope::Full)
    }

    /// Like [`Analysis::new`], but the RMW `loose` is not held to atomicity: it
    /// is merely ordered after the write it reads, which another RMW may read
    /// too. The explorer uses it for intermediate graphs in which `loose`
    /// "steals" the source of an RMW that it is about to revisit.
    pub fn new_with_loose_rmw(
        g: &'g ExecutionGraph,
        model: Model,
        loose: EventId,
    ) -> Result<Self, Inconsistency> {
        Self::build(g, model, Some(loose), Scope::Full)
    }

    /// Happens-before alone, with no modification-order constraints: what a
    /// race check of a graph known to be consistent needs. No location is
    /// checked, and [`Analysis::find_mo`] may not be asked (it panics when
    /// the seq_cst axiom would need a search).
    pub fn happens_before(g: &'g ExecutionGraph, model: Model) -> Result<Self, Inconsistency> {
        Self::build(g, model, None, Scope::HappensBefore)
    }

    /// Built without modification-order constraints
    /// ([`Analysis::happens_before`]): every location's `locs` is empty.
    pub fn is_partial(&self) -> bool {
        self.partial
    }

    fn build(
        g: &'g ExecutionGraph,
        model: Model,
        loose: Option<EventId>,
        scope: Scope,
    ) -> Result<Self, Inconsistency> {
        let hb_only = scope == Scope::HappensBefore;
        let nl = g.num_locs();
        let nt = g.num_threads();
        let b = POOL
            .try_with(|pool| pool.try_borrow_mut().ok().and_then(|mut p| p.pop()))
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut a = Analysis {
            g,
            model,
            offsets: b.offsets,
            ids: b.ids,
            clocks: b.clocks,
            stride: nt,
            locs: b.locs,
            widx: b.widx,
            has_sc_event: false,
            has_sc_fence: false,
            partial: hb_only,
            scratch: b.scratch,
        };
        a.offsets.clear();
        a.ids.clear();
        a.ids.extend((0..nl as u32).map(|l| EventId::init(Loc(l))));
        for t in 0..nt as u32 {
            a.offsets.push(a.ids.len());
            a.ids
                .extend((0..g.thread_len(t)).map(|i| EventId::new(t, i)));
        }
        a.compute_clocks()?;
        a.compute_mo(loose, scope == Scope::SeqCstLocations)?;
        Ok(a)
    }

    /// A write's index in its location's [`LocMo::writes`].
    #[inline]
    pub(crate) fn write_index_of(&self, id: EventId) -> usize {
        self.widx[self.dense(id)] as usize
    }

    #[inline]
    pub fn dense(&self, id: EventId) -> usize {
        if id.is_init() {
            id.index as usize
        } else {
            self.offsets[id.thread as usize] + id.index as usize
        }
    }
    #[inline]
    pub fn num_nodes(&self) -> usize {
        self.ids.len()
    }
    #[inline]
    pub fn id(&self, dense: usize) -> EventId {
        self.ids[dense]
    }

    /// The order an access behaves with under this model.
    #[inline]
    fn eff_ord(&self, ord: MemOrder) -> MemOrder {
        effective_order(self.model, ord)
    }

    #[inline(never)]
    fn compute_clocks(&mut self) -> Result<(), Inconsistency> {
        let g = self.g;
        let nt = g.num_threads();
        let n = self.ids.len();
        // Initialisation writes keep the zero clock and release nothing.
        let mut clocks = std::mem::take(&mut self.clocks);
        reset(&mut clocks, n * nt, 0);
        let mut memo = clocks::remembered_mut(g);
        #[cfg(debug_assertions)]
        let reused = memo.model == Some(self.model) && (0..nt).any(|t| memo.known(t) > 0);
        let complete = extend_clocks(g, self.model, &mut memo);
        // Once every event has its clock, the memo knows whether any is a
        // seq_cst access or fence.
        (self.has_sc_event, self.has_sc_fence) = memo.seq_cst();
        for t in 0..nt {
            let th = &memo.threads[t];
            let base = self.offsets[t];
            for i in 0..th.len() {
                let d = base + i;
                clocks[d * nt..(d + 1) * nt].copy_from_slice(th.clock(i, nt));
            }
        }
        drop(memo);
        #[cfg(debug_assertions)]
        if reused && complete {
            // The remembered clocks (and release views) must be the ones
            // computed afresh.
            let fresh_graph = g.without_memo();
            let fresh = Analysis::happens_before(&fresh_graph, self.model);
            debug_assert!(
                !matches!(fresh, Err(Inconsistency::ThinAir)),
                "remembered clocks hid a po ∪ rf cycle"
            );
            if let Ok(fresh) = fresh {
                let memo = clocks::remembered(g);
                let fresh_memo = clocks::remembered(&fresh_graph);
                let same = (0..nt).all(|t| {
                    let (a, b) = (&memo.threads[t], &fresh_memo.threads[t]);
                    (0..a.len()).all(|i| {
                        a.clock(i, nt) == b.clock(i, nt)
                            && a.has_relview(i, nt) == b.has_relview(i, nt)
                            && (!a.has_relview(i, nt) || a.relview(i, nt) == b.relview(i, nt))
                    })
                });
                debug_assert!(
                    fresh.clocks == clocks && same,
                    "remembered clocks differ from fresh ones"
                );
            }
        }
        self.clocks = clocks;
        if !complete {
            return Err(Inconsistency::ThinAir);
        }
        Ok(())
    }

    /// Strict happens-before. Initialisation writes happen before every event.
    #[inline]
    pub fn hb(&self, a: EventId, b: EventId) -> bool {
        if a == b || b.is_init() {
            return false;
        }
        if a.is_init() {
            return true;
        }
        self.clocks[self.dense(b) * self.stride + a.thread as usize] > a.index
    }

    /// The hb clock of an event (for reports and the revisit logic).
    #[inline]
    pub fn clock(&self, id: EventId) -> &[u32] {
        let d = self.dense(id);
        &self.clocks[d * self.stride..(d + 1) * self.stride]
    }

    #[inline(never)]
    fn compute_mo(&mut self, loose: Option<EventId>, sc_only: bool) -> Result<(), Inconsistency> {
        let g = self.g;
        let nl = g.num_locs();
        let mut locs = std::mem::take(&mut self.locs);
        locs.truncate(nl);
        while locs.len() < nl {
            locs.push(LocMo::empty(Loc(locs.len() as u32)));
        }
        // A partial analysis leaves every location empty.
        for (l, lm) in locs.iter_mut().enumerate() {
            let loc = Loc(l as u32);
            lm.clear(loc);
            if !self.partial {
                lm.writes.push(EventId::init(loc));
            }
        }
        if self.partial {
            self.locs = locs;
            return Ok(());
        }
        // The memo keeps the constraints of the locations the explorer asked
        // about (see `coherence.rs`): those are copied, the others built.
        let mut cached = std::mem::take(&mut self.scratch.cached);
        reset(&mut cached, nl, false);
        // Locations the seq_cst axiom does not look at are left empty when
        // only it is checked (marked as if copied, so nothing builds them).
        if sc_only && !self.model.orders_every_location() && !self.has_sc_fence {
            cached.fill(true);
            for (_, e) in g.events() {
                if let Some(l) = e.loc().filter(|_| self.eff_ord(e.ord()).is_sc()) {
                    cached[l.0 as usize] = false;
                }
            }
            for (lm, _) in locs.iter_mut().zip(&cached).filter(|(_, &c)| c) {
                lm.writes.clear();
            }
        }
        if loose.is_none() {
            let mut memo = clocks::remembered_mut(g);
            for (l, lm) in locs.iter_mut().enumerate() {
                if cached[l] {
                    continue;
                }
                let copied = coherence::copy_cached(g, self.model, &mut memo, Loc(l as u32), lm);
                if let Some(result) = copied {
                    if let Err(e) = result {
                        self.scratch.cached = cached;
                        return Err(e);
                    }
                    cached[l] = true;
                }
            }
        }
        for (id, e) in g.events() {
            if let Some(l) = e.loc().filter(|l| !cached[l.0 as usize]) {
                let lm = &mut locs[l.0 as usize];
                if e.is_write() {
                    lm.writes.push(id);
                }
                if e.is_read() {
                    lm.reads.push(id);
                }
                if self.eff_ord(e.ord()).is_sc() {
                    lm.has_sc = true;
                }
            }
        }
        let mut widx = std::mem::take(&mut self.widx);
        reset(&mut widx, self.ids.len(), u32::MAX);
        let mut sc = std::mem::take(&mut self.scratch);
        let result = self.constrain_mo(&mut locs, &mut widx, &mut sc, loose, &cached);
        self.locs = locs;
        self.widx = widx;
        self.scratch = sc;
        self.scratch.cached = cached;
        result
    }

    /// The chains and the forced order between them at each location (`locs`
    /// holds their accesses).
    #[inline(never)]
    fn constrain_mo(
        &self,
        locs: &mut [LocMo],
        widx: &mut [u32],
        sc: &mut Scratch,
        loose: Option<EventId>,
        cached: &[bool],
    ) -> Result<(), Inconsistency> {
        for (lm, &cached) in locs.iter_mut().zip(cached) {
            for (i, &w) in lm.writes.iter().enumerate() {
                widx[self.dense(w)] = i as u32;
            }
            if cached {
                continue;
            }
            let widx = &*widx;
            lm.constrain(
                self.g,
                sc,
                loose,
                |a, b| self.hb(a, b),
                |_, w| widx[self.dense(w)] as usize,
            )?;
        }
        Ok(())
    }

    /// Whether the seq_cst part of the model can be satisfied by some completion of
    /// the modification-order constraints.
    pub fn is_consistent(&self) -> bool {
        self.find_mo(&[]).is_some()
    }

    /// Searches a completion of the modification order (chain orders per location)
    /// satisfying the model, where each `(loc, write)` in `maxima` is mo-maximal.
    /// Returns the chain orders found.
    pub fn find_mo(&self, maxima: &[(Loc, EventId)]) -> Option<Vec<BitMatrix>> {
        assert!(
            !(self.partial && self.needs_sc_search()),
            "the seq_cst axiom needs the analysis of every location"
        );
        let orders = self.orders_with_maxima(maxima)?;
        self.complete_sc(orders)
    }

    /// The forced chain orders of every location, with each `(loc, write)`
    /// of `maxima` ordered last; `None` when one cannot be.
    pub(crate) fn orders_with_maxima(&self, maxima: &[(Loc, EventId)]) -> Option<Vec<BitMatrix>> {
        let mut orders: Vec<BitMatrix> = self.locs.iter().map(|l| l.order.clone()).collect();
        for &(loc, w) in maxima {
            let lm = &self.locs[loc.0 as usize];
            let wi = lm.write_index(w)?;
            let c = lm.chain_of[wi];
            if lm.chain_last(c) != wi {
                return None;
            }
            for other in 0..lm.num_chains() {
                if other == c {
                    continue;
                }
                let ord = &mut orders[loc.0 as usize];
                if ord.get(c, other) {
                    return None;
                }
                if !ord.get(other, c) {
                    add_closed_edge(ord, other, c);
                }
            }
        }
        Some(orders)
    }

    /// Completes `orders` (chain orders per location, transitively closed)
    /// at the locations the seq_cst axiom looks at so that it holds, or
    /// `None` when no completion satisfies it.
    pub(crate) fn complete_sc(&self, mut orders: Vec<BitMatrix>) -> Option<Vec<BitMatrix>> {
        if !self.needs_sc_search() {
            return Some(orders);
        }
        let frame = (!self.model.total_order()).then(|| PscFrame::new(self));
        let hardware = self.model.is_hardware().then(|| HardwareFrame::new(self));
        if self.search(&mut orders, frame.as_ref(), hardware.as_ref()) {
            Some(orders)
        } else {
            None
        }
    }

    pub(crate) fn needs_sc_search(&self) -> bool {
        self.model.orders_every_location() || self.has_sc_event || self.has_sc_fence
    }

    fn relevant(&self, l: &LocMo) -> bool {
        self.model.orders_every_location() || self.has_sc_fence || l.has_sc
    }

    /// Completes `orders` at the locations that matter to the seq_cst
    /// axiom, one unordered pair of chains at a time, until psc (or, under
    /// SC, the total order) is acyclic, and so is the hardware models'
    /// global order. `frame` holds psc's fixed part (every model but SC),
    /// `hardware` the global order's (the hardware models).
    fn search(
        &self,
        orders: &mut Vec<BitMatrix>,
        frame: Option<&PscFrame>,
        hardware: Option<&HardwareFrame>,
    ) -> bool {
        if let Some(h) = hardware {
            if !h.propagate(self, orders) {
                return false;
            }
            debug_assert!(!h.has_cycle(self, orders), "propagation left a cycle");
        }
        let cyclic = match frame {
            Some(f) => f.has_cycle(self, orders),
            None => self.sc_relation(orders).has_cycle(),
        };
        debug_assert!(
            frame.is_none() || cyclic == self.sc_relation(orders).has_cycle(),
            "the psc of the seq_cst events disagrees with the one over the graph"
        );
        if cyclic {
            return false;
        }
        for (li, l) in self.locs.iter().enumerate() {
            if !self.relevant(l) {
                continue;
            }
            let nc = l.num_chains();
            for c1 in 0..nc {
                for c2 in c1 + 1..nc {
                    let o = &orders[li];
                    if o.get(c1, c2) || o.get(c2, c1) {
                        continue;
                    }
                    for (x, y) in [(c1, c2), (c2, c1)] {
                        let mut next = orders.clone();
                        add_closed_edge(&mut next[li], x, y);
                        if self.search(&mut next, frame, hardware) {
                            *orders = next;
                            return true;
                        }
                    }
                    return false;
                }
            }
        }
        true
    }

    /// Whether write `a` precedes write `b` of `l` (write indices) in mo as
    /// far as `orders` fixes it.
    pub(crate) fn mo_with(&self, orders: &[BitMatrix], l: &LocMo, a: usize, b: usize) -> bool {
        let (ca, cb) = (l.chain_of[a], l.chain_of[b]);
        if ca == cb {
            l.pos[a] < l.pos[b]
        } else {
            orders[l.loc.0 as usize].get(ca, cb)
        }
    }

    /// Builds the relation whose acyclicity the seq_cst axiom demands, using the
    /// modification order as far as `orders` fixes it.
    fn sc_relation(&self, orders: &[BitMatrix]) -> BitMatrix {
        let n = self.ids.len();
        let words = n.div_ceil(64).max(1);
        let (hb, hb_from) = self.hb_matrix();
        // mo, rb, rf over the whole graph; eco = (rf | mo | rb)+, closed per
        // location (all three relate accesses of one location).
        let mut mo = BitMatrix::new(n);
        let mut rb = BitMatrix::new(n);
        let mut rf = BitMatrix::new(n);
        let mut eco = BitMatrix::new(n);
        for l in &self.locs {
            for (a, &wa) in l.writes.iter().enumerate() {
                for (b, &wb) in l.writes.iter().enumerate() {
                    if a != b && self.mo_with(orders, l, a, b) {
                        mo.set(self.dense(wa), self.dense(wb));
                    }
                }
            }
            for &r in &l.reads {
                let src = self.g.event(r).rf.unwrap();
                rf.set(self.dense(src), self.dense(r));
                let w = l.write_index(src).unwrap();
                for (b, &wb) in l.writes.iter().enumerate() {
                    if wb != r && self.mo_with(orders, l, w, b) {
                        rb.set(self.dense(r), self.dense(wb));
                    }
                }
            }
            if !self.model.total_order() {
                self.close_eco_at(l, &mo, &rb, &rf, &mut eco);
            }
        }
        if self.model.total_order() {
            let mut rel = hb;
            for i in 0..n {
                rel.or_into(i, mo.row(i));
                rel.or_into(i, rb.row(i));
                rel.or_into(i, rf.row(i));
            }
            return rel;
        }
        let mut is_sc = vec![false; n];
        let mut fsc = vec![0u64; words];
        let mut loc: Vec<Option<Loc>> = vec![None; n];
        for (d, &id) in self.ids.iter().enumerate() {
            loc[d] = self.g.loc_of(id);
            if id.is_init() {
                continue;
            }
            let e = self.g.event(id);
            is_sc[d] = e.is_sc();
            if e.is_fence() && e.is_sc() {
                fsc[d / 64] |= 1 << (d % 64);
            }
        }
        let is_fsc = |d: usize| fsc[d / 64] >> (d % 64) & 1 == 1;
        // The events of each location, as a mask over the n events (a row
        // of `words` words per location, not a square matrix: n ≥ 64
        // events at fewer locations would not fit).
        let mut at_loc = vec![0u64; self.locs.len().max(1) * words];
        for (d, l) in loc.iter().enumerate() {
            if let Some(l) = l {
                at_loc[l.0 as usize * words + d / 64] |= 1 << (d % 64);
            }
        }
        let at_loc = |l: Loc| &at_loc[l.0 as usize * words..(l.0 as usize + 1) * words];
        // po, the first po≠loc successor of each event (po restricted to
        // different locations), and where the run of same-location events
        // starting at each event ends (its thread index).
        let nt = self.g.num_threads();
        let mut po = BitMatrix::new(n);
        let mut first_nl: Vec<Option<usize>> = vec![None; n];
        let mut run_end = vec![0usize; n];
        for t in 0..nt {
            let len = self.g.thread_len(t as u32) as usize;
            let base = self.offsets[t];
            for i in (0..len).rev() {
                let a = base + i;
                po.set_range(a, a + 1, base + len);
                let same_next = i + 1 < len && loc[a].is_some() && loc[a + 1] == loc[a];
                run_end[a] = if same_next { run_end[a + 1] } else { i + 1 };
                first_nl[a] = (run_end[a] < len).then(|| base + run_end[a]);
            }
        }
        // scb = po | po≠loc;hb;po≠loc | hb&loc | mo | rb.
        // po≠loc;hb;po≠loc from `a`: the first po≠loc successor `c` suffices
        // (hb of any later one is inside c's hb); c's hb is a suffix of each
        // thread, from index k, and the po≠loc successors of that suffix are
        // the thread's events from the end of the same-location run at k.
        let mut scb = po;
        let mut out = vec![0u64; words];
        for a in 0..n {
            out.fill(0);
            if let Some(c) = first_nl[a] {
                for t in 0..nt {
                    let base = self.offsets[t];
                    let len = self.g.thread_len(t as u32) as usize;
                    let k = hb_from[c * nt + t];
                    if k < len {
                        crate::bits::set_range_in(&mut out, base + run_end[base + k], base + len);
                    }
                }
            }
            if let Some(l) = loc[a] {
                for ((m, h), s) in out.iter_mut().zip(hb.row(a)).zip(at_loc(l)) {
                    *m |= h & s;
                }
            }
            scb.or_into(a, &out);
            scb.or_into(a, mo.row(a));
            scb.or_into(a, rb.row(a));
        }
        // right[d] = {d | d SC} ∪ {b F_SC | d hb b}
        let mut right = BitMatrix::new(n);
        let mut fences_after = vec![0u64; words];
        for (d, &sc) in is_sc.iter().enumerate() {
            if sc {
                right.set(d, d);
            }
            for (m, (h, f)) in fences_after.iter_mut().zip(hb.row(d).iter().zip(&fsc)) {
                *m = h & f;
            }
            right.or_into(d, &fences_after);
        }
        let mut psc = BitMatrix::new(n);
        let mut mid = vec![0u64; words];
        for a in (0..n).filter(|&a| is_sc[a]) {
            // psc_base: ([SC] | [F_SC];hb?) ; scb ; ([SC] | hb?;[F_SC])
            mid.copy_from_slice(scb.row(a));
            if is_fsc(a) {
                for c in hb.iter_row(a) {
                    for (m, v) in mid.iter_mut().zip(scb.row(c)) {
                        *m |= v;
                    }
                }
            }
            for d in crate::bits::iter_bits(&mid) {
                psc.or_into(a, right.row(d));
            }
            if is_fsc(a) {
                // pscf: [F_SC]; (hb | hb;eco;hb); [F_SC]
                let mut after_eco = vec![0u64; words];
                for c in hb.iter_row(a) {
                    for (m, v) in after_eco.iter_mut().zip(eco.row(c)) {
                        *m |= v;
                    }
                }
                let mut reach = hb.row(a).to_vec();
                for d in crate::bits::iter_bits(&after_eco) {
                    for (m, v) in reach.iter_mut().zip(hb.row(d)) {
                        *m |= v;
                    }
                }
                for (m, f) in reach.iter_mut().zip(&fsc) {
                    *m &= f;
                }
                psc.or_into(a, &reach);
            }
        }
        psc
    }

    /// Happens-before as a matrix over dense indices. Clocks only grow along
    /// program order, so the events of a thread that some event happens
    /// before are a suffix of that thread, found by binary search.
    /// Also returns, for each event and thread, the index in that thread
    /// where the suffix starts (`n * threads` entries).
    /// The index in thread `t` from which on its events are happened
    /// before by `a` (a suffix, as clocks only grow along program order).
    pub(crate) fn first_hb_after(&self, a: EventId, t: usize) -> usize {
        let len = self.g.thread_len(t as u32) as usize;
        if t == a.thread as usize {
            return a.index as usize + 1;
        }
        let base = self.offsets[t];
        let (mut lo, mut hi) = (0, len);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.clocks[(base + mid) * self.stride + a.thread as usize] <= a.index {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn hb_matrix(&self) -> (BitMatrix, Vec<usize>) {
        let n = self.ids.len();
        let nt = self.g.num_threads();
        let inits = self.offsets.first().copied().unwrap_or(n);
        let mut hb = BitMatrix::new(n);
        let mut from_at = vec![0usize; n * nt];
        for a in 0..inits {
            hb.set_range(a, inits, n);
        }
        for u in 0..nt {
            for j in 0..self.g.thread_len(u as u32) as usize {
                let a = self.offsets[u] + j;
                for t in 0..nt {
                    let base = self.offsets[t];
                    let len = self.g.thread_len(t as u32) as usize;
                    let from = self.first_hb_after(EventId::new(u as u32, j as u32), t);
                    hb.set_range(a, base + from, base + len);
                    from_at[a * nt + t] = from;
                }
            }
        }
        (hb, from_at)
    }

    /// Adds to `eco` the transitive closure of `rf | mo | rb` among the
    /// accesses of location `l`. With mo transitive, a path is one of
    /// mo, rb, then optionally rf: a write reaches the writes mo-after it
    /// and their readers (and its own); a read reaches the writes mo-after
    /// the one it read (rb) and their readers.
    fn close_eco_at(
        &self,
        l: &LocMo,
        mo: &BitMatrix,
        rb: &BitMatrix,
        rf: &BitMatrix,
        eco: &mut BitMatrix,
    ) {
        let mut row = vec![0u64; eco.row(0).len()];
        let mut extend = |x: usize, succ: &[u64], eco: &mut BitMatrix| {
            row.copy_from_slice(succ);
            for w in crate::bits::iter_bits(succ) {
                for (m, v) in row.iter_mut().zip(rf.row(w)) {
                    *m |= v;
                }
            }
            eco.or_into(x, &row);
        };
        for &w in &l.writes {
            let x = self.dense(w);
            extend(x, mo.row(x), eco);
            eco.or_into(x, rf.row(x));
        }
        for &r in &l.reads {
            let x = self.dense(r);
            extend(x, rb.row(x), eco);
        }
        #[cfg(debug_assertions)]
        {
            let mut members: Vec<usize> = l
                .writes
                .iter()
                .chain(&l.reads)
                .map(|&e| self.dense(e))
                .collect();
            members.sort_unstable();
            members.dedup();
            let m = members.len();
            let mut local = BitMatrix::new(m);
            for (i, &x) in members.iter().enumerate() {
                for (j, &y) in members.iter().enumerate() {
                    if mo.get(x, y) || rb.get(x, y) || rf.get(x, y) {
                        local.set(i, j);
                    }
                }
            }
            local.close();
            for (i, &x) in members.iter().enumerate() {
                for (j, &y) in members.iter().enumerate() {
                    debug_assert_eq!(
                        local.get(i, j),
                        eco.get(x, y),
                        "eco closed form at {:?}",
                        l.loc
                    );
                }
            }
        }
    }

    /// Writes that some consistent completion could put last in modification order
    /// at `loc`, ignoring seq_cst: the last writes of chains nothing is forced after.
    pub fn mo_max_candidates(&self, loc: Loc) -> Vec<EventId> {
        let l = &self.locs[loc.0 as usize];
        l.sink_chains()
            .into_iter()
            .map(|c| l.writes[l.chain_last(c)])
            .collect()
    }

    /// Data races: pairs of conflicting accesses from different threads, at least one
    /// non-atomic, unordered by happens-before, in graph order.
    pub fn races(&self) -> Vec<(EventId, EventId)> {
        let mut out = Vec::new();
        // Only locations with a non-atomic access can race.
        let mut plain: smallvec::SmallVec<[bool; 64]> = smallvec::SmallVec::new();
        for (_, e) in self.g.events() {
            if let Some(l) = e.loc().filter(|_| !e.ord().is_atomic()) {
                let l = l.0 as usize;
                if plain.len() <= l {
                    plain.resize(l + 1, false);
                }
                plain[l] = true;
            }
        }
        if plain.is_empty() {
            return out;
        }
        // Their accesses grouped by location (then in graph order), so that
        // only those of one location are paired.
        let mut evs: smallvec::SmallVec<[(Loc, EventId, bool, bool); 32]> = self
            .g
            .events()
            .filter_map(|(id, e)| e.loc().map(|l| (l, id, e.is_write(), e.ord().is_atomic())))
            .filter(|&(l, ..)| plain.get(l.0 as usize) == Some(&true))
            .collect();
        evs.sort_by_key(|&(l, ..)| l.0);
        for group in evs.chunk_by(|x, y| x.0 == y.0) {
            for (i, &(_, a, wa, aa)) in group.iter().enumerate() {
                for &(_, b, wb, ab) in &group[i + 1..] {
                    if a.thread == b.thread || !(wa || wb) || (aa && ab) {
                        continue;
                    }
                    if !self.hb(a, b) && !self.hb(b, a) {
                        out.push((a, b));
                    }
                }
            }
        }
        // In graph order, whatever the locations.
        out.sort_unstable();
        out
    }
}

/// The order an access behaves with under `model`: SC makes every atomic
/// access seq_cst.
#[inline]
pub(crate) fn effective_order(model: Model, ord: MemOrder) -> MemOrder {
    if model.all_seq_cst() && ord.is_atomic() {
        MemOrder::SeqCst
    } else {
        ord
    }
}

thread_local! {
    /// The four per-event vectors [`extend_clocks`] works in.
    static CLOCK_SCRATCH: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Computes, in `memo`, the clocks of the events of `g` it lacks: an
/// event's happens-before clock, the view it releases, the release views
/// its thread's relaxed reads have gathered so far (what an acquire fence
/// takes) and its thread's last release fence. Every input comes from the
/// records of earlier events, so only new events cost anything. False when
/// some event is never reached (po ∪ rf is cyclic); those stay unknown.
pub(crate) fn extend_clocks(g: &ExecutionGraph, model: Model, memo: &mut ClockMemo) -> bool {
    let nt = g.num_threads();
    memo.prepare(model, nt);
    let mut missing = 0;
    let mut cut = false;
    for t in 0..nt {
        let len = g.thread_len(t as u32) as usize;
        cut |= memo.known(t) > len;
        memo.threads[t].truncate(len, nt);
        missing += len - memo.known(t);
    }
    if cut {
        let lens: Vec<usize> = (0..nt).map(|t| memo.known(t)).collect();
        memo.locs.forget_beyond(&lens);
    }
    if missing == 0 {
        return true;
    }
    let mut taken = CLOCK_SCRATCH
        .try_with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)).ok())
        .ok()
        .flatten()
        .unwrap_or_default();
    // One record, laid out as the memo keeps them: clock, release view,
    // pending acquire views, whether it releases, last release fence.
    reset(&mut taken, 3 * nt + 2, 0);
    let mut progress = true;
    while progress && missing > 0 {
        progress = false;
        for t in 0..nt {
            loop {
                let i = memo.known(t);
                if i == g.thread_len(t as u32) as usize {
                    break;
                }
                let id = EventId::new(t as u32, i as u32);
                let e = g.event(id);
                let known =
                    |x: EventId| x.is_init() || (x.index as usize) < memo.known(x.thread as usize);
                let parent = if i == 0 {
                    g.thread(t as u32).parent
                } else {
                    None
                };
                if parent.is_some_and(|p| !known(p)) || e.rf.is_some_and(|w| !known(w)) {
                    break;
                }
                let joined = match e.action {
                    Action::Join { child } => match g.thread_len(child) {
                        0 => break,
                        n => Some(EventId::new(child, n - 1)),
                    },
                    _ => None,
                };
                if joined.is_some_and(|j| !known(j)) {
                    break;
                }
                let clock_of =
                    |x: EventId| memo.threads[x.thread as usize].clock(x.index as usize, nt);
                let relview_of = |x: EventId| {
                    if x.is_init() {
                        return None;
                    }
                    let th = &memo.threads[x.thread as usize];
                    th.has_relview(x.index as usize, nt)
                        .then(|| th.relview(x.index as usize, nt))
                };
                // The thread's previous event gives the clock so far, the
                // pending release views and the last release fence.
                if i == 0 {
                    taken.fill(0);
                } else {
                    taken.copy_from_slice(memo.threads[t].record(i - 1, nt));
                }
                let (clock, rest) = taken.split_at_mut(nt);
                let (relview, rest) = rest.split_at_mut(nt);
                let (pending, tail) = rest.split_at_mut(nt);
                let mut last_fence = tail[1];
                clock[t] = i as u32 + 1;
                for x in parent.into_iter().chain(joined) {
                    join_slice(clock, clock_of(x));
                }
                let ord = effective_order(model, e.ord());
                if e.is_read() && ord.is_atomic() {
                    if let Some(v) = relview_of(e.rf.expect("read without rf")) {
                        join_slice(if ord.is_acquire() { clock } else { pending }, v);
                    }
                }
                let fence_before = last_fence;
                if e.is_fence() {
                    if ord.is_acquire() {
                        join_slice(clock, pending);
                    }
                    if ord.is_release() {
                        last_fence = i as u32 + 1;
                    }
                }
                relview.fill(0);
                let mut releases = false;
                if e.is_write() && ord.is_atomic() {
                    let mut add = |v: &[u32]| {
                        join_slice(relview, v);
                        releases = true;
                    };
                    if ord.is_release() {
                        add(clock);
                    }
                    if let Some(f) = fence_before.checked_sub(1) {
                        add(clock_of(EventId::new(t as u32, f)));
                    }
                    if model.rc11_release_sequences() {
                        // RC11's release sequences start at the thread's
                        // last release write to the location as well.
                        let loc = e.loc();
                        let last_release_write =
                            g.thread_events(t as u32)[..i].iter().rposition(|x| {
                                let o = effective_order(model, x.ord());
                                x.is_write() && o.is_atomic() && o.is_release() && x.loc() == loc
                            });
                        if let Some(k) = last_release_write {
                            add(clock_of(EventId::new(t as u32, k as u32)));
                        }
                    }
                    if e.is_rmw() {
                        // An RMW passes on its source's release view.
                        if let Some(v) = relview_of(e.rf.unwrap()) {
                            add(v);
                        }
                    }
                }
                if ord.is_sc() && (e.is_fence() || e.loc().is_some()) {
                    memo.threads[t].note_sc(e.is_fence());
                }
                tail[0] = releases as u32;
                tail[1] = last_fence;
                memo.threads[t].push(&taken);
                missing -= 1;
                progress = true;
            }
        }
    }
    let _ = CLOCK_SCRATCH.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            *s = taken;
        }
    });
    missing == 0
}

/// Whether `g` is consistent under `model`.
pub fn is_consistent(g: &ExecutionGraph, model: Model) -> bool {
    match Analysis::new(g, model) {
        Ok(a) => a.is_consistent(),
        Err(_) => false,
    }
}

/// Whether `g` is consistent under `model`, given that it is coherent at
/// every location (what the explorer knows of a consistent graph to which
/// it added one access that it judged at its location): only the seq_cst
/// axiom is left, and it looks at the locations with seq_cst accesses
/// alone, unless a seq_cst fence (whose psc edges pass through any
/// location) or the SC model makes every location matter.
pub fn is_sc_consistent_given_coherence(g: &ExecutionGraph, model: Model) -> bool {
    match Analysis::build(g, model, None, Scope::SeqCstLocations) {
        Ok(a) => a.is_consistent(),
        Err(_) => false,
    }
}

/// Whether the seq_cst axiom of `model` takes a search over modification
/// orders in `g` (the model is SC, or `g` has seq_cst accesses or fences);
/// without one, coherence per location is the whole check.
pub fn needs_sc_search(g: &ExecutionGraph, model: Model) -> bool {
    model.orders_every_location()
        || g.events().any(|(_, e)| {
            (e.is_fence() || e.loc().is_some()) && effective_order(model, e.ord()).is_sc()
        })
}

/// Test support: whether the seq_cst check over psc's fixed part and the
/// relation built over the whole graph agree on `g` with its forced
/// modification order. Debug builds assert this at every search step;
/// release-built tests call it to guard the whole-graph builder too.
#[doc(hidden)]
pub fn psc_checks_agree(g: &ExecutionGraph, model: Model) -> bool {
    let Ok(a) = Analysis::new(g, model) else {
        return true;
    };
    if model.total_order() || !a.needs_sc_search() {
        return true;
    }
    let Some(orders) = a.orders_with_maxima(&[]) else {
        return true;
    };
    PscFrame::new(&a).has_cycle(&a, &orders) == a.sc_relation(&orders).has_cycle()
}

/// Why `g` is inconsistent under `model`, if it is.
pub fn check(g: &ExecutionGraph, model: Model) -> Result<(), Inconsistency> {
    let a = Analysis::new(g, model)?;
    if a.is_consistent() {
        Ok(())
    } else {
        Err(Inconsistency::SeqCst)
    }
}
