//! Judging a new access of one location without analysing the whole graph.
//!
//! For each read it adds, the explorer asks which writes the read can take.
//! Nothing happens after a new po-maximal access and nothing reads from it
//! yet, so the answer needs happens-before (remembered with the graph, see
//! `clocks.rs`, so only events added since the last question cost anything)
//! and the coherence constraints of that one location, not an [`Analysis`]
//! of every event with its clocks copied out: [`LocationCoherence`] builds
//! just those. It keeps them with the remembered clocks, and the next
//! question about the location extends them with the accesses added since
//! (each gets its edges to the others; see `LocMo::push_write`), until the
//! clocks of the events they cover are forgotten.
//!
//! [`Analysis`]: crate::Analysis

use super::clocks::{self, ClockMemo, ThreadClocks};
use super::{effective_order, extend_clocks, Inconsistency, LocMo, Model, OldAccesses, Scratch};
use crate::event::{EventId, Loc, MemOrder};
use crate::graph::ExecutionGraph;
use smallvec::SmallVec;
use std::cell::{Ref, RefCell};
use std::rc::Rc;

thread_local! {
    /// Buffers of dropped [`LocCache`]s, for constraints built afresh or
    /// copied out of a shared cache before an extension (kept in their
    /// `Rc`, whose allocation is reused too).
    static POOL: RefCell<Vec<Rc<LocMo>>> = const { RefCell::new(Vec::new()) };
}

/// How many dropped buffers a thread keeps.
const POOL_SIZE: usize = 64;

/// An unshared, empty `LocMo` for `loc`, from the pool if it has one.
fn pooled(loc: Loc) -> Rc<LocMo> {
    let mut lm = POOL
        .try_with(|pool| pool.try_borrow_mut().ok().and_then(|mut p| p.pop()))
        .ok()
        .flatten()
        .unwrap_or_else(|| Rc::new(LocMo::empty(loc)));
    Rc::get_mut(&mut lm).expect("pooled unshared").clear(loc);
    lm
}

/// Gives `lm`'s buffers back to the pool (when no graph copy shares it).
fn recycle(mut lm: Rc<LocMo>) {
    if Rc::get_mut(&mut lm).is_none() {
        return;
    }
    let _ = POOL.try_with(|pool| {
        if let Ok(mut pool) = pool.try_borrow_mut() {
            if pool.len() < POOL_SIZE {
                pool.push(lm);
            }
        }
    });
}

/// What [`LocationCoherence`] built for one location, kept with the
/// graph's remembered clocks: the next question about the location extends
/// it with the accesses added since instead of building it again.
///
/// Copies of the graph share the constraints until one of them extends
/// them (see [`LocCache::lm_mut`]).
#[derive(Clone)]
struct LocCache {
    lm: Rc<LocMo>,
    seen: Seen,
}

/// The events a [`LocCache`] covers: how many of each thread, and where
/// the location's accesses among them end.
#[derive(Clone, Default)]
struct Seen {
    counted: SmallVec<[u32; 8]>,
    /// One past the last covered access of the location in each thread
    /// (0: none): forgetting events from there on leaves the cache valid.
    accessed: SmallVec<[u32; 8]>,
}

impl Seen {
    /// Calls `found` with each event of `g` not covered yet that accesses
    /// `loc` (and whether it is seq_cst under `model`), and then covers
    /// every event.
    fn scan(
        &mut self,
        g: &ExecutionGraph,
        model: Model,
        loc: Loc,
        mut found: impl FnMut(EventId, &crate::Event, bool),
    ) {
        self.counted.resize(g.num_threads(), 0);
        self.accessed.resize(g.num_threads(), 0);
        for t in 0..g.num_threads() as u32 {
            let from = self.counted[t as usize] as usize;
            for (i, e) in g.thread_events(t).iter().enumerate().skip(from) {
                if e.loc() == Some(loc) {
                    let sc = effective_order(model, e.ord()).is_sc();
                    found(EventId::new(t, i as u32), e, sc);
                    self.accessed[t as usize] = i as u32 + 1;
                }
            }
            self.counted[t as usize] = g.thread_len(t);
        }
    }

    fn clear(&mut self) {
        self.counted.clear();
        self.accessed.clear();
    }

    /// Covers only the first `cut[t]` events of each thread `t`; false
    /// when that would uncover one of the location's accesses (then the
    /// constraints built from it no longer hold).
    fn cut_to(&mut self, cut: &[usize]) -> bool {
        let limit = |t: usize| cut.get(t).copied().unwrap_or(0) as u32;
        if (self.accessed.iter().enumerate()).any(|(t, &a)| a > limit(t)) {
            return false;
        }
        for (t, n) in self.counted.iter_mut().enumerate() {
            *n = (*n).min(limit(t));
        }
        true
    }
}

/// The [`LocCache`]s of a graph, by location. They are valid while the
/// accesses they cover keep their clocks, so the memo cuts or drops them
/// with those (see [`Self::forget_beyond`]); a copy of the graph shares
/// them.
#[derive(Default)]
pub(crate) struct LocCaches {
    by_loc: Vec<Option<LocCache>>,
    scratch: Scratch,
    /// The new accesses an extension adds.
    new: Vec<EventId>,
}

/// A copy of the graph keeps them (shared): they hold for it as they do
/// for the original.
impl Clone for LocCaches {
    fn clone(&self) -> Self {
        self.prefix(None)
    }
}

impl Drop for LocCaches {
    fn drop(&mut self) {
        self.clear();
    }
}

impl LocCaches {
    pub fn clear(&mut self) {
        for c in self.by_loc.drain(..).flatten() {
            recycle(c.lm);
        }
    }
    /// Makes the caches cover only the first `cut[t]` events of each
    /// thread `t` (whose clocks are forgotten beyond): a cache with none
    /// of its location's accesses there keeps its constraints, which
    /// depend only on those accesses, their sources and happens-before
    /// between them; the others are dropped.
    pub fn forget_beyond(&mut self, cut: &[usize]) {
        for slot in &mut self.by_loc {
            if slot.as_mut().is_some_and(|c| !c.seen.cut_to(cut)) {
                recycle(slot.take().unwrap().lm);
            }
        }
    }

    /// Copies of the caches (sharing their constraints), cut to the first
    /// `cut[t]` events of each thread `t` when given (see
    /// [`Self::forget_beyond`]).
    pub fn prefix(&self, cut: Option<&[usize]>) -> LocCaches {
        let by_loc = (self.by_loc.iter())
            .map(|slot| {
                let mut c = slot.as_ref()?.clone();
                match cut {
                    Some(cut) if !c.seen.cut_to(cut) => None,
                    _ => Some(c),
                }
            })
            .collect();
        LocCaches {
            by_loc,
            scratch: Scratch::default(),
            new: Vec::new(),
        }
    }
}

/// What [`LocationCoherence::read_extension_verdict`] finds of a graph
/// extended by one access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtensionVerdict {
    /// Inconsistent under every model (coherence or atomicity fails).
    Inconsistent,
    /// Consistent.
    Consistent,
    /// Coherent at every location: only the seq_cst axiom is left to check
    /// (see [`crate::is_sc_consistent_given_coherence`]).
    Coherent,
    /// Not judged: the full check decides.
    Unknown,
}

impl ExtensionVerdict {
    /// The verdict, when it is final.
    #[inline]
    pub fn known(self) -> Option<bool> {
        match self {
            ExtensionVerdict::Inconsistent => Some(false),
            ExtensionVerdict::Consistent => Some(true),
            ExtensionVerdict::Coherent | ExtensionVerdict::Unknown => None,
        }
    }
}

/// A write of the location as [`LocationCoherence::writes_into`] lists it,
/// with its place in the constraints: asked about by this handle, it needs
/// no search among the location's writes (which, asked for each write at
/// each new access, grows with the square of a long RMW chain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteRef {
    pub id: EventId,
    index: usize,
}

/// A write of the location asked about: its id, or a [`WriteRef`].
pub trait LocWrite: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn index_in(self, lm: &LocMo) -> usize;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::EventId {}
    impl Sealed for super::WriteRef {}
}

impl LocWrite for EventId {
    #[inline]
    fn index_in(self, lm: &LocMo) -> usize {
        lm.index_of(self)
    }
}

impl LocWrite for WriteRef {
    #[inline]
    fn index_in(self, lm: &LocMo) -> usize {
        debug_assert_eq!(
            lm.writes[self.index], self.id,
            "a handle of another location"
        );
        self.index
    }
}

/// The coherence constraints of one location in a graph known to be
/// consistent, with the graph's remembered clocks: what judging a new access
/// of that location takes.
pub struct LocationCoherence<'g> {
    g: &'g ExecutionGraph,
    model: Model,
    /// Borrowed for as long as this lives: no analysis of the same graph may
    /// be built meanwhile. It holds the location's constraints.
    memo: Ref<'g, ClockMemo>,
    loc: Loc,
    /// The writes the source of a new access of a thread may not come
    /// before (see `read_extension_verdict`), for the last thread asked
    /// about.
    no_later: RefCell<Option<(u32, SmallVec<[usize; 16]>)>>,
}

/// Strict happens-before from remembered clocks (both events known).
#[inline]
fn memo_hb(threads: &[ThreadClocks], stride: usize, a: EventId, b: EventId) -> bool {
    if a == b || b.is_init() {
        return false;
    }
    if a.is_init() {
        return true;
    }
    threads[b.thread as usize].clock_entry(b.index as usize, stride, a.thread as usize) > a.index
}

/// The index of write `w` in `writes`, which lists a location's writes as
/// [`ExecutionGraph::events`] does, after the initialisation write.
#[inline]
fn index_in(writes: &[EventId], w: EventId) -> usize {
    let key = |x: &EventId| (!x.is_init(), x.thread, x.index);
    writes
        .binary_search_by_key(&key(&w), key)
        .expect("a source among the location's writes")
}

impl LocCache {
    /// The constraints of `loc` over every event of `g`, built afresh in
    /// `slot` (reusing the buffers of what it held); the slot is left empty
    /// when they cannot be built.
    fn build_in(
        slot: &mut Option<LocCache>,
        g: &ExecutionGraph,
        model: Model,
        loc: Loc,
        memo: (&[ThreadClocks], usize),
        scratch: &mut Scratch,
    ) -> Result<(), Inconsistency> {
        let c = slot.get_or_insert_with(|| LocCache {
            lm: pooled(loc),
            seen: Seen::default(),
        });
        if Rc::get_mut(&mut c.lm).is_none() {
            c.lm = pooled(loc);
        }
        let lm = Rc::get_mut(&mut c.lm).expect("not shared");
        lm.clear(loc);
        c.seen.clear();
        lm.writes.push(EventId::init(loc));
        c.seen.scan(g, model, loc, |id, e, sc| {
            if e.is_write() {
                lm.writes.push(id);
            }
            if e.is_read() {
                lm.reads.push(id);
            }
            lm.has_sc |= sc;
        });
        let (threads, stride) = memo;
        let built = lm.constrain(
            g,
            scratch,
            None,
            |a, b| memo_hb(threads, stride, a, b),
            index_in,
        );
        if built.is_err() {
            if let Some(c) = slot.take() {
                recycle(c.lm);
            }
        }
        built
    }

    /// Debug builds: panics unless the constraints, however extended, cut
    /// and shared, are those a fresh build over every event gives.
    #[cfg(debug_assertions)]
    fn assert_as_built(&self, g: &ExecutionGraph, model: Model, memo: (&[ThreadClocks], usize)) {
        let loc = self.lm.loc;
        for t in 0..g.num_threads() {
            assert_eq!(
                self.seen.counted.get(t).copied(),
                Some(g.thread_len(t as u32)),
                "events of thread {t} the constraints of {loc:?} cover"
            );
        }
        let mut fresh = None;
        LocCache::build_in(&mut fresh, g, model, loc, memo, &mut Scratch::default())
            .expect("a kept cache of a location that is not coherent");
        let fresh = &fresh.expect("built").lm;
        let (lm, n) = (&self.lm, fresh.writes.len());
        assert_eq!(lm.has_sc, fresh.has_sc, "seq_cst accesses of {loc:?}");
        assert_eq!(lm.writes.len(), n, "writes of {loc:?}");
        let at: Vec<usize> = lm.writes.iter().map(|&w| fresh.index_of(w)).collect();
        for a in 0..n {
            for b in 0..n {
                assert_eq!(lm.mo(a, b), fresh.mo(at[a], at[b]), "order of {loc:?}");
            }
        }
        let mut reads: Vec<_> = (lm.reads.iter().zip(&lm.read_src))
            .map(|(&r, &s)| (r, lm.writes[s]))
            .collect();
        let mut fresh_reads: Vec<_> = (fresh.reads.iter().zip(&fresh.read_src))
            .map(|(&r, &s)| (r, fresh.writes[s]))
            .collect();
        reads.sort_unstable();
        fresh_reads.sort_unstable();
        assert_eq!(reads, fresh_reads, "reads of {loc:?}");
    }

    /// The constraints, to change: copied first (into pooled buffers) when
    /// a copy of the graph shares them.
    fn lm_mut(&mut self) -> &mut LocMo {
        if Rc::get_mut(&mut self.lm).is_none() {
            let mut lm = pooled(self.lm.loc);
            Rc::get_mut(&mut lm)
                .expect("pooled unshared")
                .clone_from(&self.lm);
            self.lm = lm;
        }
        Rc::get_mut(&mut self.lm).expect("not shared")
    }

    /// Extends it with the events `g` added since it was built; `Ok(false)`
    /// when a new access reads a write it does not know of (then it is
    /// built afresh).
    fn extend(
        &mut self,
        g: &ExecutionGraph,
        model: Model,
        memo: (&[ThreadClocks], usize),
        new: &mut Vec<EventId>,
    ) -> Result<bool, Inconsistency> {
        new.clear();
        let mut has_sc = false;
        self.seen.scan(g, model, self.lm.loc, |id, _, sc| {
            new.push(id);
            has_sc |= sc;
        });
        if new.is_empty() {
            return Ok(true);
        }
        self.lm_mut().has_sc |= has_sc;
        let (threads, stride) = memo;
        let hb = |a, b| memo_hb(threads, stride, a, b);
        let index = |lm: &LocMo, w: EventId| lm.writes.iter().position(|&x| x == w);
        // Writes first, each RMW after its source (the bits of `pending`
        // are the writes of `new` not added yet).
        if new.len() > 64 {
            return Ok(false);
        }
        let old = OldAccesses {
            writes: self.lm.writes.len(),
            reads: self.lm.reads.len(),
        };
        let mut pending: u64 = 0;
        for (i, &x) in new.iter().enumerate() {
            if g.event(x).is_write() {
                pending |= 1 << i;
            }
        }
        while pending != 0 {
            let before = pending;
            for (i, &w) in new.iter().enumerate() {
                if pending >> i & 1 == 0 {
                    continue;
                }
                let e = g.event(w);
                let src = match e.is_rmw() {
                    true => match index(&self.lm, e.rf.unwrap()) {
                        Some(s) => Some(s),
                        None => continue,
                    },
                    false => None,
                };
                self.lm_mut().push_write(w, src, old, hb)?;
                pending &= !(1 << i);
            }
            if pending == before {
                return Ok(false);
            }
        }
        for &r in new.iter() {
            let e = g.event(r);
            if e.is_read() {
                let Some(src) = index(&self.lm, e.rf.unwrap()) else {
                    return Ok(false);
                };
                self.lm_mut().push_read(r, src, old, hb)?;
            }
        }
        Ok(true)
    }
}

/// Makes the memo's constraints of `loc` cover every event of `g` (whose
/// clocks the memo must know): extended where possible, else built afresh,
/// in place.
fn ensure_cache(
    g: &ExecutionGraph,
    model: Model,
    memo: &mut ClockMemo,
    loc: Loc,
) -> Result<(), Inconsistency> {
    let ClockMemo {
        threads,
        stride,
        locs,
        ..
    } = memo;
    let memo = (&threads[..], *stride);
    let l = loc.0 as usize;
    if locs.by_loc.len() <= l {
        locs.by_loc.resize_with(l + 1, || None);
    }
    let slot = &mut locs.by_loc[l];
    let extended = match slot {
        Some(c) => c.extend(g, model, memo, &mut locs.new),
        None => Ok(false),
    };
    match extended {
        Ok(true) => {}
        Ok(false) => LocCache::build_in(slot, g, model, loc, memo, &mut locs.scratch)?,
        Err(e) => {
            if let Some(c) = slot.take() {
                recycle(c.lm);
            }
            return Err(e);
        }
    }
    #[cfg(debug_assertions)]
    if let Some(c) = &locs.by_loc[l] {
        c.assert_as_built(g, model, memo);
    }
    Ok(())
}

/// For a full analysis of `g` (whose clocks `memo` knows): copies into
/// `out` the constraints of `loc` the memo keeps, brought up to date; `None`
/// when it keeps none (building them the analysis's way, together with the
/// other locations', costs less than building a cache).
pub(crate) fn copy_cached(
    g: &ExecutionGraph,
    model: Model,
    memo: &mut ClockMemo,
    loc: Loc,
    out: &mut LocMo,
) -> Option<Result<(), Inconsistency>> {
    memo.locs.by_loc.get(loc.0 as usize)?.as_ref()?;
    if let Err(e) = ensure_cache(g, model, memo, loc) {
        return Some(Err(e));
    }
    let c = memo.locs.by_loc[loc.0 as usize].as_ref().expect("ensured");
    out.clone_from(&c.lm);
    Some(Ok(()))
}

/// The highest-ranked write of `loc` (by `rank`) that could end
/// modification order in the part `part` of `g`: the events `part` holds
/// (closed under po and rf), with `demoted` (an RMW or a store of `g` that
/// nothing reads, if given) reduced to its read half, which must be
/// consistent. `None` when the seq_cst axiom may matter (the SC model, or
/// any seq_cst event in `g`). A new read of the write returned keeps the
/// part consistent: the write can be last, every other one before it.
///
/// Why the part needs no analysis of its own: happens-before between its
/// events is that of `g` (every path between them stays in the part, and
/// nothing reads `demoted`), and a write can end modification order iff
/// no write of its RMW chain has a coherence edge (write-write,
/// write-read, read-write, read-read, atomicity) to a write outside the
/// chain: an order forced after the chain starts with such an edge.
pub fn highest_write_ending_mo<K: Ord>(
    g: &ExecutionGraph,
    model: Model,
    part: &crate::View,
    demoted: Option<EventId>,
    loc: Loc,
    rank: impl Fn(EventId) -> K,
) -> Option<EventId> {
    let mut memo = clocks::remembered_mut(g);
    if model.orders_every_location()
        || !extend_clocks(g, model, &mut memo)
        || memo.seq_cst() != (false, false)
    {
        return None;
    }
    let (threads, stride) = (&memo.threads[..], memo.stride);
    let hb = |a: EventId, b: EventId| memo_hb(threads, stride, a, b);
    // The part's accesses of `loc`: writes (with the source of an RMW)
    // and reads (with their sources).
    let mut writes: SmallVec<[(EventId, Option<EventId>); 16]> = SmallVec::new();
    let mut reads: SmallVec<[(EventId, EventId); 16]> = SmallVec::new();
    writes.push((EventId::init(loc), None));
    for t in 0..g.num_threads() as u32 {
        let n = part.0.get(t as usize).map_or(0, |&n| n as usize);
        for (i, e) in g.thread_events(t).iter().take(n).enumerate() {
            if e.loc() != Some(loc) {
                continue;
            }
            let id = EventId::new(t, i as u32);
            let src = e.is_read().then(|| e.rf.expect("a read with a source"));
            if e.is_write() && Some(id) != demoted {
                writes.push((id, src));
            }
            if let Some(src) = src {
                reads.push((id, src));
            }
        }
    }
    let source_of = |w: EventId| writes.iter().find(|x| x.0 == w).and_then(|x| x.1);
    // Each write's readers, found by a binary search of the reads sorted
    // by source (a location of a long spin has hundreds of each).
    reads.sort_unstable_by_key(|&(r, s)| (s, r));
    let readers = |w: EventId| -> &[(EventId, EventId)] {
        let lo = reads.partition_point(|&(_, s)| s < w);
        let hi = lo + reads[lo..].partition_point(|&(_, s)| s == w);
        &reads[lo..hi]
    };
    let can_end = |x: EventId| {
        // Nothing may read `x` and write (atomicity puts that after it).
        if writes.iter().any(|&(y, s)| s == Some(x) && y != x) {
            return false;
        }
        let mut chain: SmallVec<[EventId; 8]> = SmallVec::new();
        let mut cur = Some(x);
        while let Some(c) = cur {
            chain.push(c);
            cur = if c.is_init() { None } else { source_of(c) };
        }
        let edge_out = |a: EventId, y: EventId| {
            let (ra, ry) = (readers(a), readers(y));
            hb(a, y)
                || ry.iter().any(|&(r, _)| hb(a, r))
                || ra.iter().any(|&(r, _)| hb(r, y))
                || ra
                    .iter()
                    .any(|&(r1, _)| ry.iter().any(|&(r2, _)| hb(r1, r2)))
        };
        // The writes outside the chain, listed once (on a location of
        // RMWs the chain holds most of them).
        let outside: SmallVec<[EventId; 16]> = (writes.iter())
            .map(|&(y, _)| y)
            .filter(|y| !chain.contains(y))
            .collect();
        !chain
            .iter()
            .any(|&a| outside.iter().any(|&y| edge_out(a, y)))
    };
    // Highest rank first (graph order backwards is already that order for
    // a rank by position).
    let mut order: SmallVec<[EventId; 16]> = writes.iter().rev().map(|x| x.0).collect();
    order.sort_by_key(|&x| std::cmp::Reverse(rank(x)));
    order.into_iter().find(|&x| can_end(x))
}

/// Whether write `w` of `loc` is forced last in modification order in the
/// part `part` of `g` (closed under po and rf, so happens-before among its
/// events is `g`'s): coherence and atomicity put every other write of the
/// part before it. The part's constraints at `loc` are built from its
/// accesses without copying the graph; `None` when po ∪ rf is cyclic, the
/// part is incoherent at `loc`, or `w` is not one of its writes.
pub fn forced_last_in_part(
    g: &ExecutionGraph,
    model: Model,
    part: &crate::View,
    loc: Loc,
    w: EventId,
) -> Option<bool> {
    let mut memo = clocks::remembered_mut(g);
    if !extend_clocks(g, model, &mut memo) {
        return None;
    }
    let mut lm = pooled(loc);
    let m = Rc::get_mut(&mut lm).expect("pooled unshared");
    m.writes.push(EventId::init(loc));
    for t in 0..g.num_threads() as u32 {
        let n = part.0.get(t as usize).map_or(0, |&n| n as usize);
        for (i, e) in g.thread_events(t).iter().take(n).enumerate() {
            if e.loc() == Some(loc) {
                let id = EventId::new(t, i as u32);
                if e.is_write() {
                    m.writes.push(id);
                }
                if e.is_read() {
                    m.reads.push(id);
                }
                m.has_sc |= effective_order(model, e.ord()).is_sc();
            }
        }
    }
    let ClockMemo {
        threads,
        stride,
        locs,
        ..
    } = &mut *memo;
    let (threads, stride) = (&threads[..], *stride);
    let hb = |a: EventId, b: EventId| memo_hb(threads, stride, a, b);
    let forced = m
        .constrain(g, &mut locs.scratch, None, hb, index_in)
        .ok()
        .and_then(|()| m.writes.iter().position(|&x| x == w))
        .map(|wi| m.is_forced_last(wi));
    drop(memo);
    recycle(lm);
    forced
}

impl<'g> LocationCoherence<'g> {
    /// The constraints of `loc` in `g`; fails when po ∪ rf is cyclic or the
    /// location is incoherent.
    pub fn new(g: &'g ExecutionGraph, model: Model, loc: Loc) -> Result<Self, Inconsistency> {
        let mut guard = clocks::remembered_mut(g);
        if !extend_clocks(g, model, &mut guard) {
            return Err(Inconsistency::ThinAir);
        }
        ensure_cache(g, model, &mut guard, loc)?;
        drop(guard);
        Ok(LocationCoherence {
            g,
            model,
            memo: clocks::remembered(g),
            loc,
            no_later: RefCell::new(None),
        })
    }

    fn cache(&self) -> &LocCache {
        self.memo.locs.by_loc[self.loc.0 as usize]
            .as_ref()
            .expect("built by `new`")
    }

    /// Whether the graph stays consistent when thread `t` appends an access
    /// of this location with order `ord` that reads from `w` (and is a
    /// write too when `writes`: a successful RMW).
    ///
    /// Only the coherence edges into the new access and RMW atomicity can
    /// fail (see `LocMo::accepts_read_after`), and their failure is final
    /// under every model. Success is only `Coherent` (the seq_cst axiom is
    /// left to check) when that axiom could change with them: under SC,
    /// with a seq_cst fence in the graph (a fence before the read can gain
    /// psc edges through it), when the new edges are not already forced at
    /// a location with seq_cst accesses, or for a seq_cst access that a
    /// seq_cst write may follow in modification order (its only way onto a
    /// psc cycle); but never when `w` is forced last (then the access has no
    /// edge out of it).
    pub fn read_extension_verdict(
        &self,
        t: u32,
        ord: MemOrder,
        writes: bool,
        loc: Loc,
        w: impl LocWrite,
    ) -> ExtensionVerdict {
        let g = self.g;
        let nt = self.memo.stride;
        let cache = self.cache();
        let lm = &cache.lm;
        if loc != self.loc || t as usize >= nt {
            return ExtensionVerdict::Unknown;
        }
        let ord = effective_order(self.model, ord);
        // The writes the source may not come before: what happens before
        // the new access (everything of its own thread and what its last
        // event, or its spawn, has), the same for every source. An acquire
        // also gets what its source releases, but that happens before the
        // source or a write forced before it (its release sequence), so it
        // adds no write the source could come before.
        let mut cached = self.no_later.borrow_mut();
        if cached.as_ref().is_none_or(|c| c.0 != t) {
            let clock_of =
                |x: EventId| self.memo.threads[x.thread as usize].clock(x.index as usize, nt);
            let len = g.thread_len(t);
            let prior: Option<&[u32]> = if len > 0 {
                Some(clock_of(EventId::new(t, len - 1)))
            } else {
                g.thread(t).parent.filter(|&p| g.contains(p)).map(clock_of)
            };
            let before = |x: EventId| {
                x.is_init()
                    || x.thread == t
                    || prior.is_some_and(|v| v[x.thread as usize] > x.index)
            };
            let (_, list) = cached.get_or_insert_with(|| (t, SmallVec::new()));
            lm.no_later_than_new_read(before, list);
            cached.as_mut().expect("just set").0 = t;
        }
        let no_later = &cached.as_ref().expect("computed above").1;
        let wi = w.index_in(lm);
        let Some(forced) = lm.accepts_read_after(wi, writes, no_later) else {
            return ExtensionVerdict::Inconsistent;
        };
        // Reading the write every other one is forced before, the access
        // has no edge out of it in any relation the seq_cst axiom closes
        // over (no rb, no later event, nothing reads it yet, and written it
        // would stay last): it closes no cycle, and the graph before it is
        // consistent, so no search is needed.
        if lm.is_forced_last(wi) {
            return ExtensionVerdict::Consistent;
        }
        // Otherwise, with no seq_cst fence, a seq_cst access whose orders
        // held already (`forced`: no order between the other writes
        // changes) is on a psc cycle only through an edge out of it, and
        // it has one only to a seq_cst write that may follow its source in
        // modification order (an rb or mo edge: it is last in its thread,
        // nothing reads it and nothing happens after it).
        let sc_write_may_follow = || {
            lm.writes.iter().enumerate().any(|(i, &x)| {
                i != wi
                    && !x.is_init()
                    && effective_order(self.model, g.event(x).ord()).is_sc()
                    && !lm.mo(i, wi)
            })
        };
        let sc_may_change = self.model.orders_every_location()
            || self.memo.seq_cst().1
            || (!forced && lm.has_sc)
            || (ord.is_sc() && sc_write_may_follow());
        match sc_may_change {
            true => ExtensionVerdict::Coherent,
            false => ExtensionVerdict::Consistent,
        }
    }

    /// Whether write `w` of this location could be last in modification
    /// order as far as the constraints go (seq_cst aside): it ends its RMW
    /// chain and no other chain is forced after that one. New reads of `w`
    /// keep that so.
    pub fn could_end_mo(&self, w: impl LocWrite) -> bool {
        let lm = &self.cache().lm;
        lm.could_end(w.index_in(lm))
    }

    /// Whether every other write of this location is forced before `w`:
    /// it is last in every modification order, and a new read of it needs
    /// no seq_cst search (see [`Self::read_extension_verdict`]).
    pub fn is_forced_last(&self, w: impl LocWrite) -> bool {
        let lm = &self.cache().lm;
        lm.is_forced_last(w.index_in(lm))
    }

    /// The location's writes, the initialisation write first, then in the
    /// order of [`ExecutionGraph::events`] (as [`ExecutionGraph::writes_to`]
    /// lists them).
    pub fn writes(&self) -> Vec<EventId> {
        let mut writes = Vec::new();
        self.writes_into(&mut writes);
        writes.into_iter().map(|w| w.id).collect()
    }

    /// [`Self::writes`] into `out` (replacing what it held): a caller
    /// asking for every new read keeps one buffer.
    pub fn writes_into(&self, out: &mut Vec<WriteRef>) {
        out.clear();
        let writes = self.cache().lm.writes.iter().enumerate();
        out.extend(writes.map(|(index, &id)| WriteRef { id, index }));
        out.sort_unstable_by_key(|x| (!x.id.is_init(), x.id.thread, x.id.index));
    }

    /// Whether the seq_cst axiom takes a search over modification orders
    /// (the graph has seq_cst events, or the model is SC): then a verdict on
    /// a new access of this location alone may not be the whole answer.
    pub fn sc_search_needed(&self) -> bool {
        let (access, fence) = self.memo.seq_cst();
        self.model.orders_every_location() || access || fence
    }
}

#[cfg(test)]
mod tests {
    use super::LocationCoherence;
    use crate::{
        is_consistent, Action, EventId, ExecutionGraph, Loc, MemOrder, Model, RmwOp, Width,
    };

    const X: Loc = Loc(0);

    fn store(g: &mut ExecutionGraph, t: u32, val: i64) -> EventId {
        g.push(
            t,
            Action::Store {
                loc: X,
                ord: MemOrder::Relaxed,
                val,
            },
        )
    }

    fn load(g: &mut ExecutionGraph, t: u32, from: EventId) -> EventId {
        let r = g.push(
            t,
            Action::Load {
                loc: X,
                ord: MemOrder::Relaxed,
            },
        );
        g.set_rf(r, from);
        r
    }

    fn x_load(ord: MemOrder) -> Action {
        Action::Load { loc: X, ord }
    }

    fn fetch_add(ord: MemOrder) -> Action {
        Action::Rmw {
            loc: X,
            ord,
            op: RmwOp::Add,
            operand: 1,
            width: Width::I64,
        }
    }

    /// The verdict on thread `t` appending `action` that reads each of `g`'s
    /// writes to x, with the one a full check of the extended graph gives.
    fn verdicts(g: &ExecutionGraph, t: u32, action: Action) -> Vec<(Option<bool>, bool)> {
        let ord = match action {
            Action::Load { ord, .. } | Action::Rmw { ord, .. } => ord,
            _ => unreachable!("a load or an RMW"),
        };
        let lc = LocationCoherence::new(g, Model::Cpp20, X).unwrap();
        let writes = lc.writes();
        let quick: Vec<Option<bool>> = writes
            .iter()
            .map(|&w| {
                let rmw = matches!(action, Action::Rmw { .. });
                lc.read_extension_verdict(t, ord, rmw, X, w).known()
            })
            .collect();
        drop(lc);
        writes
            .iter()
            .zip(quick)
            .map(|(&w, q)| {
                let mut h = g.clone();
                let r = h.push(t, action);
                h.set_rf(r, w);
                (q, is_consistent(&h, Model::Cpp20))
            })
            .collect()
    }

    /// Everything a `LocationCoherence` of x in `g` says about new accesses
    /// of thread `t`: per write, the verdicts on a relaxed load and a relaxed
    /// fetch_add of it, and whether it could end, or must end, modification
    /// order.
    fn judgements(g: &ExecutionGraph, t: u32) -> Vec<(EventId, [Option<bool>; 2], bool, bool)> {
        let lc = LocationCoherence::new(g, Model::Cpp20, X).unwrap();
        lc.writes()
            .into_iter()
            .map(|w| {
                let load = lc
                    .read_extension_verdict(t, MemOrder::Relaxed, false, X, w)
                    .known();
                let rmw = lc
                    .read_extension_verdict(t, MemOrder::Relaxed, true, X, w)
                    .known();
                (w, [load, rmw], lc.could_end_mo(w), lc.is_forced_last(w))
            })
            .collect()
    }

    /// A consistent graph (C++20) of 3 threads and 2 locations, with
    /// stores, loads and fetch_adds of random orders and sources;
    /// `next(n)` draws below `n`.
    fn random_graph(next: &mut impl FnMut(u64) -> u64) -> ExecutionGraph {
        random_graph_with(next, false)
    }

    /// A random graph; with `sc`, some of its accesses are seq_cst and it
    /// may have seq_cst fences.
    fn random_graph_with(next: &mut impl FnMut(u64) -> u64, sc: bool) -> ExecutionGraph {
        let ords = [
            MemOrder::Relaxed,
            MemOrder::Acquire,
            MemOrder::Release,
            MemOrder::AcqRel,
            MemOrder::SeqCst,
        ];
        let mut g = ExecutionGraph::new(vec![0, 0], 3);
        for step in 0..(4 + next(6)) {
            let t = next(3) as u32;
            let loc = Loc(next(2) as u32);
            // With `sc`, two accesses in five are seq_cst.
            let ord = match sc && next(5) < 2 {
                true => MemOrder::SeqCst,
                false => ords[next(4) as usize],
            };
            if sc && next(8) == 0 {
                g.push(
                    t,
                    Action::Fence {
                        ord: MemOrder::SeqCst,
                    },
                );
                continue;
            }
            let action = match next(3) {
                0 => Action::Store {
                    loc,
                    ord: match ord {
                        MemOrder::SeqCst => MemOrder::SeqCst,
                        o if o.is_release() => MemOrder::Release,
                        _ => MemOrder::Relaxed,
                    },
                    val: step as i64 + 1,
                },
                1 => Action::Load {
                    loc,
                    ord: match ord {
                        MemOrder::SeqCst => MemOrder::SeqCst,
                        o if o.is_acquire() => MemOrder::Acquire,
                        _ => MemOrder::Relaxed,
                    },
                },
                _ => Action::Rmw {
                    loc,
                    ord,
                    op: RmwOp::Add,
                    operand: 1,
                    width: Width::I64,
                },
            };
            let id = g.push(t, action);
            if g.event(id).is_read() {
                let writes = g.writes_to(loc);
                let options: Vec<EventId> = writes.into_iter().filter(|&w| w != id).collect();
                let start = next(options.len() as u64) as usize;
                let ok = (0..options.len()).any(|k| {
                    g.set_rf(id, options[(start + k) % options.len()]);
                    is_consistent(&g, Model::Cpp20)
                });
                if !ok {
                    g.truncate_thread(t, id.index);
                }
            }
        }
        g
    }

    /// A pseudo-random draw below `n`, from `seed`.
    fn draw(seed: &mut u64, n: u64) -> u64 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 33) % n
    }

    /// On random graphs, every verdict the constraints give on a new
    /// access (a load, acquire or not, and a fetch_add, of each write, by
    /// each thread) is the one a full check of the extended graph gives.
    #[test]
    fn read_verdicts_on_random_graphs_match_the_full_check() {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: u64| draw(&mut seed, n);
        let mut judged = 0;
        for _ in 0..1500 {
            let g = random_graph(&mut next);
            for t in 0..3 {
                for action in [
                    x_load(MemOrder::Acquire),
                    x_load(MemOrder::Relaxed),
                    fetch_add(MemOrder::AcqRel),
                ] {
                    for (quick, full) in verdicts(&g, t, action) {
                        assert!(
                            quick.is_none_or(|q| q == full),
                            "{g:?}\nthread {t}, {action:?}"
                        );
                        judged += quick.is_some() as usize;
                    }
                }
            }
        }
        assert!(judged > 10_000, "{judged} verdicts");
    }

    /// The same with seq_cst accesses and fences, under C++20 and RC11:
    /// every final verdict is the full check's, and where the constraints
    /// leave only the seq_cst axiom to check, the graph is coherent and
    /// the check of that axiom alone agrees with the full one.
    #[test]
    fn seq_cst_verdicts_on_random_graphs_match_the_full_check() {
        use crate::{is_sc_consistent_given_coherence, Analysis, ExtensionVerdict};
        let mut seed: u64 = 0x5851_F42D_4C95_7F2D;
        let mut next = |n: u64| draw(&mut seed, n);
        let (mut final_sc, mut left) = (0, 0);
        for round in 0..6000 {
            let g = random_graph_with(&mut next, true);
            let model = [Model::Cpp20, Model::Rc11][round % 2];
            let lc = LocationCoherence::new(&g, model, X).unwrap();
            let writes = lc.writes();
            for t in 0..3 {
                for action in [
                    x_load(MemOrder::SeqCst),
                    x_load(MemOrder::Acquire),
                    fetch_add(MemOrder::SeqCst),
                    fetch_add(MemOrder::Relaxed),
                ] {
                    let (ord, rmw) = match action {
                        Action::Load { ord, .. } => (ord, false),
                        Action::Rmw { ord, .. } => (ord, true),
                        _ => unreachable!(),
                    };
                    for &w in &writes {
                        let verdict = lc.read_extension_verdict(t, ord, rmw, X, w);
                        let mut h = g.clone();
                        let r = h.push(t, action);
                        h.set_rf(r, w);
                        let full = is_consistent(&h, model);
                        let what = format!("{g:?}\nthread {t}, {action:?} of {w:?}: {verdict:?}");
                        match verdict {
                            ExtensionVerdict::Consistent | ExtensionVerdict::Inconsistent => {
                                assert_eq!(verdict.known(), Some(full), "{what}");
                                final_sc += usize::from(ord.is_sc() && full);
                            }
                            ExtensionVerdict::Coherent => {
                                assert!(Analysis::new(&h, model).is_ok(), "{what}");
                                assert_eq!(
                                    is_sc_consistent_given_coherence(&h, model),
                                    full,
                                    "{what}"
                                );
                                left += 1;
                            }
                            ExtensionVerdict::Unknown => {}
                        }
                    }
                }
            }
        }
        assert!(
            final_sc > 2_000 && left > 2_000,
            "{final_sc} final, {left} left"
        );
    }

    /// Two seq_cst writes of x that psc orders (a store-buffering shape:
    /// a, then a seq_cst load of y that reads 0, in one thread; y := 1,
    /// then b, in the other): a relaxed read of a after b in b's thread
    /// would force b before a. Its location check finds it coherent, not
    /// consistent, and the seq_cst check rejects it; a seq_cst read of a
    /// there is rejected the same way.
    #[test]
    fn a_read_that_forces_an_order_psc_forbids_is_left_to_the_seq_cst_check() {
        use crate::{is_sc_consistent_given_coherence, ExtensionVerdict};
        let y = Loc(1);
        let sc = MemOrder::SeqCst;
        let mut g = ExecutionGraph::new(vec![0, 0], 2);
        let a = g.push(
            0,
            Action::Store {
                loc: X,
                ord: sc,
                val: 1,
            },
        );
        let r0 = g.push(0, Action::Load { loc: y, ord: sc });
        g.set_rf(r0, EventId::init(y));
        g.push(
            1,
            Action::Store {
                loc: y,
                ord: sc,
                val: 1,
            },
        );
        g.push(
            1,
            Action::Store {
                loc: X,
                ord: sc,
                val: 2,
            },
        );
        assert!(is_consistent(&g, Model::Cpp20));
        for ord in [MemOrder::Relaxed, sc] {
            let lc = LocationCoherence::new(&g, Model::Cpp20, X).unwrap();
            let verdict = lc.read_extension_verdict(1, ord, false, X, a);
            drop(lc);
            assert_eq!(verdict, ExtensionVerdict::Coherent, "{ord:?}");
            let mut h = g.clone();
            let r = h.push(1, Action::Load { loc: X, ord });
            h.set_rf(r, a);
            assert!(!is_consistent(&h, Model::Cpp20));
            assert!(!is_sc_consistent_given_coherence(&h, Model::Cpp20));
        }
    }

    /// A part of `g` closed under po and rf: the porf-prefix of a few
    /// events.
    fn random_part(g: &ExecutionGraph, next: &mut impl FnMut(u64) -> u64) -> crate::View {
        let mut part = crate::View(vec![0; g.num_threads()]);
        for _ in 0..2 {
            let t = next(g.num_threads() as u64) as u32;
            let n = g.thread_len(t);
            if n > 0 {
                let p = g.porf_prefix(EventId::new(t, next(n as u64) as u32));
                for (u, &k) in p.0.iter().enumerate() {
                    part.0[u] = part.0[u].max(k);
                }
            }
        }
        part
    }

    /// `highest_write_ending_mo` on parts of random graphs (closed under
    /// po and rf, a write nothing reads sometimes reduced to its read
    /// half) names the write a search over modification orders of the
    /// part, built as a graph of its own, finds first in rank order.
    #[test]
    fn writes_ending_mo_in_a_part_match_a_search() {
        use crate::{highest_write_ending_mo, Analysis};
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |n: u64| draw(&mut seed, n);
        let rank = |w: EventId| (!w.is_init(), w.thread, w.index);
        let (mut checked, mut demoted_checked) = (0, 0);
        for _ in 0..3000 {
            let g = random_graph(&mut next);
            let part = random_part(&g, &mut next);
            // Sometimes the last write of a thread in the part, unread
            // there, reduced to its read half.
            let demoted = (0..3u32).find_map(|t| {
                let n = part.0[t as usize];
                let w = EventId::new(t, n.checked_sub(1)?);
                let unread = g
                    .events()
                    .all(|(id, e)| !part.contains(id) || e.rf != Some(w));
                (next(2) == 0 && g.event(w).is_write() && unread).then_some(w)
            });
            let mut h = g.restrict_uncached(&part);
            if let Some(w) = demoted {
                match g.event(w).action.read_half() {
                    Some(load) => h.event_mut(w).action = load,
                    None => h.truncate_thread(w.thread, w.index),
                }
                demoted_checked += 1;
            }
            let a = Analysis::new(&h, Model::Cpp20).expect("a part of a consistent graph");
            for loc in [X, Loc(1)] {
                let mut writes = h.writes_to(loc);
                writes.sort_by_key(|&w| std::cmp::Reverse(rank(w)));
                let searched = writes
                    .into_iter()
                    .find(|&w| a.find_mo(&[(loc, w)]).is_some());
                let quick = highest_write_ending_mo(&g, Model::Cpp20, &part, demoted, loc, rank);
                assert_eq!(
                    quick, searched,
                    "{g:?}\npart {part:?}, demoted {demoted:?}, {loc:?}"
                );
                checked += 1;
            }
        }
        assert!(
            checked == 6000 && demoted_checked > 300,
            "{demoted_checked} demoted"
        );
    }

    /// `forced_last_in_part` on parts of random graphs (closed under po
    /// and rf) says a write is forced last exactly when a search over the
    /// modification orders of the part, built as a graph of its own, finds
    /// it the only write that can end them, and agrees with the
    /// constraints of that graph.
    #[test]
    fn forced_last_in_a_part_matches_a_search() {
        use crate::{forced_last_in_part, Analysis};
        let mut seed: u64 = 0x3C6E_F372_FE94_F82B;
        let mut next = |n: u64| draw(&mut seed, n);
        let (mut forced, mut not_forced) = (0, 0);
        for _ in 0..2000 {
            let g = random_graph(&mut next);
            let part = random_part(&g, &mut next);
            let h = g.restrict_uncached(&part);
            let a = Analysis::new(&h, Model::Cpp20).expect("a part of a consistent graph");
            for loc in [X, Loc(1)] {
                let writes = h.writes_to(loc);
                let can_end: Vec<bool> = (writes.iter())
                    .map(|&w| a.find_mo(&[(loc, w)]).is_some())
                    .collect();
                let lc = LocationCoherence::new(&h, Model::Cpp20, loc).unwrap();
                for (i, &w) in writes.iter().enumerate() {
                    let only = can_end[i] && can_end.iter().filter(|&&c| c).count() == 1;
                    let what = format!("{g:?}\npart {part:?}, {w:?}");
                    assert_eq!(
                        forced_last_in_part(&g, Model::Cpp20, &part, loc, w),
                        Some(only),
                        "{what}"
                    );
                    assert_eq!(lc.is_forced_last(w), only, "{what}");
                    match only {
                        true => forced += 1,
                        false => not_forced += 1,
                    }
                }
            }
        }
        assert!(
            forced > 1000 && not_forced > 1000,
            "{forced} forced, {not_forced} not"
        );
    }

    /// Whether `g` remembers constraints of x (the next question extends them).
    fn cached(g: &ExecutionGraph) -> bool {
        let memo = super::clocks::remembered(g);
        memo.locs.by_loc.first().is_some_and(|c| c.is_some())
    }

    /// The constraints remembered with a graph and extended with each new
    /// access (writes, RMWs after their sources, reads, in several threads)
    /// judge every new access as constraints built afresh do; a new source
    /// for a read they cover drops them.
    #[test]
    fn extended_constraints_judge_as_fresh_ones() {
        let mut g = ExecutionGraph::new(vec![0], 4);
        let check = |g: &ExecutionGraph| {
            for t in 0..4 {
                assert_eq!(
                    judgements(g, t),
                    judgements(&g.without_memo(), t),
                    "thread {t}"
                );
            }
        };
        let w1 = store(&mut g, 0, 1);
        check(&g);
        let u = g.push(1, fetch_add(MemOrder::Relaxed));
        g.set_rf(u, w1);
        assert!(cached(&g));
        check(&g);
        let r = load(&mut g, 2, w1);
        let w2 = store(&mut g, 0, 2);
        assert!(cached(&g));
        check(&g);
        // Thread 2 reads a write of thread 3 after w1: w1 comes first (CoRR),
        // so it may not read w1 again.
        let w3 = store(&mut g, 3, 3);
        load(&mut g, 2, w3);
        let v = g.push(1, fetch_add(MemOrder::Relaxed));
        g.set_rf(v, u);
        assert!(cached(&g));
        check(&g);
        let got = judgements(&g, 2);
        assert!(got.contains(&(w1, [Some(false); 2], false, false)));
        assert!(got.contains(&(w3, [Some(true), Some(true)], true, false)));
        load(&mut g, 3, w2);
        assert!(cached(&g));
        check(&g);
        g.set_rf(r, EventId::init(X));
        assert!(!cached(&g));
        check(&g);
    }

    /// Orders found one access at a time compose: b before c (thread 3 read
    /// b, then wrote c) and then a before b (thread 4 read a, then b) put a
    /// before c, so thread 2, which read c, may not read a.
    #[test]
    fn extended_constraints_are_closed() {
        let mut g = ExecutionGraph::new(vec![0], 5);
        let a = store(&mut g, 0, 1);
        let b = store(&mut g, 1, 2);
        judgements(&g, 0);
        load(&mut g, 3, b);
        let c = store(&mut g, 3, 3);
        load(&mut g, 2, c);
        load(&mut g, 4, a);
        load(&mut g, 4, b);
        assert!(cached(&g));
        let got = judgements(&g, 2);
        assert_eq!(got, judgements(&g.without_memo(), 2));
        assert!(got.contains(&(a, [Some(false); 2], false, false)));
        assert!(got.contains(&(c, [Some(true); 2], true, true)));
    }

    /// Thread 0 writes x = 1 then x = 2; thread 1 has read 2. A second read
    /// of thread 1 may read only 2 (CoRR); a read of thread 2, which knows
    /// nothing, any of the three writes.
    #[test]
    fn coherence_limits_what_a_read_can_take() {
        let mut g = ExecutionGraph::new(vec![0], 3);
        store(&mut g, 0, 1);
        let w2 = store(&mut g, 0, 2);
        load(&mut g, 1, w2);
        let load_action = Action::Load {
            loc: X,
            ord: MemOrder::Relaxed,
        };
        let lc = LocationCoherence::new(&g, Model::Cpp20, X).unwrap();
        assert_eq!(lc.writes(), g.writes_to(X));
        drop(lc);
        let same_thread = verdicts(&g, 1, load_action);
        assert_eq!(
            same_thread,
            vec![
                (Some(false), false),
                (Some(false), false),
                (Some(true), true)
            ]
        );
        let other_thread = verdicts(&g, 2, load_action);
        assert_eq!(other_thread, vec![(Some(true), true); 3]);
    }

    /// An RMW may not read a write another RMW read (atomicity); a seq_cst
    /// access of the write every other one is forced before is judged at
    /// once.
    #[test]
    fn atomicity_and_seq_cst() {
        let mut g = ExecutionGraph::new(vec![0], 3);
        let w1 = store(&mut g, 0, 1);
        let u = g.push(1, fetch_add(MemOrder::Relaxed));
        g.set_rf(u, w1);
        let got = verdicts(&g, 2, fetch_add(MemOrder::Relaxed));
        // Reading the initial write puts the new RMW before w1 in
        // modification order, which nothing forbids.
        assert_eq!(
            got,
            vec![(Some(true), true), (Some(false), false), (Some(true), true)]
        );
        let lc = LocationCoherence::new(&g, Model::Cpp20, X).unwrap();
        assert!(lc.could_end_mo(u) && !lc.could_end_mo(w1));
        assert!(!lc.sc_search_needed());
        assert!(lc.is_forced_last(u) && !lc.is_forced_last(w1));
        assert_eq!(
            lc.read_extension_verdict(2, MemOrder::SeqCst, true, X, u)
                .known(),
            Some(true)
        );
        assert_eq!(
            lc.read_extension_verdict(2, MemOrder::SeqCst, true, X, w1)
                .known(),
            Some(false)
        );
    }

    /// Two seq_cst writes no order relates: a seq_cst read of either leaves
    /// the verdict to the full check (neither is forced last, and the other
    /// may follow it in modification order, a psc edge out of the read);
    /// once one thread has read both, the second is forced last and a
    /// seq_cst read of it is judged at once, in agreement with the full
    /// check. Were the writes relaxed, no seq_cst write could follow either
    /// and every verdict would be given at once.
    #[test]
    fn seq_cst_reads_of_a_write_forced_last() {
        let sc_load = Action::Load {
            loc: X,
            ord: MemOrder::SeqCst,
        };
        let mut relaxed = ExecutionGraph::new(vec![0], 4);
        store(&mut relaxed, 0, 1);
        store(&mut relaxed, 1, 2);
        assert_eq!(verdicts(&relaxed, 2, sc_load), vec![(Some(true), true); 3]);
        let mut g = ExecutionGraph::new(vec![0], 4);
        let sc_store = |val| Action::Store {
            loc: X,
            ord: MemOrder::SeqCst,
            val,
        };
        let a = g.push(0, sc_store(1));
        let b = g.push(1, sc_store(2));
        let got = verdicts(&g, 2, sc_load);
        assert_eq!(got, vec![(None, true); 3]);
        load(&mut g, 3, a);
        load(&mut g, 3, b);
        let got = verdicts(&g, 3, sc_load);
        assert_eq!(
            got,
            vec![
                (Some(false), false),
                (Some(false), false),
                (Some(true), true)
            ]
        );
    }
}
