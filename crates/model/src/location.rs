//! Judging a new access of one location without analysing the whole graph.
//!
//! For each read it adds, the explorer asks which writes the read can take.
//! Nothing happens after a new po-maximal access and nothing reads from it
//! yet, so the answer needs happens-before (remembered with the graph, see
//! `memo.rs`, so only events added since the last question cost anything)
//! and the coherence constraints of that one location, not an [`Analysis`]
//! of every event with its clocks copied out: [`LocationCoherence`] builds
//! just those.
//!
//! [`Analysis`]: crate::Analysis

use crate::consistency::{effective_order, extend_clocks, Inconsistency, LocMo, Model, Scratch};
use crate::event::{Action, EventId, Loc, MemOrder};
use crate::graph::ExecutionGraph;
use crate::memo::ClockMemo;
use std::cell::{Ref, RefCell};

thread_local! {
    /// Buffers of dropped [`LocationCoherence`]s: one is built per read the
    /// explorer adds.
    static POOL: RefCell<Vec<(LocMo, Scratch)>> = const { RefCell::new(Vec::new()) };
}

/// How many dropped buffers a thread keeps.
const POOL_SIZE: usize = 4;

/// The coherence constraints of one location in a graph known to be
/// consistent, with the graph's remembered clocks: what judging a new access
/// of that location takes.
pub struct LocationCoherence<'g> {
    g: &'g ExecutionGraph,
    model: Model,
    /// Borrowed for as long as this lives: no analysis of the same graph may
    /// be built meanwhile.
    memo: Ref<'g, ClockMemo>,
    lm: LocMo,
    scratch: Scratch,
    has_sc_event: bool,
    has_sc_fence: bool,
}

impl Drop for LocationCoherence<'_> {
    fn drop(&mut self) {
        let buffers = (
            std::mem::replace(&mut self.lm, LocMo::empty(Loc(0))),
            std::mem::take(&mut self.scratch),
        );
        let _ = POOL.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut() {
                if pool.len() < POOL_SIZE {
                    pool.push(buffers);
                }
            }
        });
    }
}

/// Strict happens-before from remembered clocks (both events known).
fn memo_hb(memo: &ClockMemo, a: EventId, b: EventId) -> bool {
    if a == b || b.is_init() {
        return false;
    }
    if a.is_init() {
        return true;
    }
    memo.threads[b.thread as usize].clock_entry(b.index as usize, memo.stride, a.thread as usize)
        > a.index
}

/// The index of write `w` in `writes`, which lists a location's writes as
/// [`ExecutionGraph::events`] does, after the initialisation write.
fn index_in(writes: &[EventId], w: EventId) -> usize {
    let key = |x: &EventId| (!x.is_init(), x.thread, x.index);
    writes
        .binary_search_by_key(&key(&w), key)
        .expect("a source among the location's writes")
}

impl<'g> LocationCoherence<'g> {
    /// The constraints of `loc` in `g`; fails when po ∪ rf is cyclic or the
    /// location is incoherent.
    pub fn new(g: &'g ExecutionGraph, model: Model, loc: Loc) -> Result<Self, Inconsistency> {
        if !extend_clocks(g, model, &mut g.memo.0.borrow_mut()) {
            return Err(Inconsistency::ThinAir);
        }
        let (mut lm, mut scratch) = POOL
            .try_with(|pool| pool.try_borrow_mut().ok().and_then(|mut p| p.pop()))
            .ok()
            .flatten()
            .unwrap_or_else(|| (LocMo::empty(loc), Scratch::default()));
        lm.clear(loc);
        lm.writes.push(EventId::init(loc));
        let (mut has_sc_event, mut has_sc_fence) = (false, false);
        for t in 0..g.num_threads() as u32 {
            for (i, e) in g.thread_events(t).iter().enumerate() {
                let l = match e.action {
                    Action::Fence { ord } => {
                        has_sc_fence |= effective_order(model, ord).is_sc();
                        continue;
                    }
                    Action::Load { loc, .. }
                    | Action::Store { loc, .. }
                    | Action::Rmw { loc, .. }
                    | Action::Cas { loc, .. } => loc,
                    _ => continue,
                };
                let sc = effective_order(model, e.ord()).is_sc();
                has_sc_event |= sc;
                if l == loc {
                    let id = EventId::new(t, i as u32);
                    if e.is_write() {
                        lm.writes.push(id);
                    }
                    if e.is_read() {
                        lm.reads.push(id);
                    }
                    lm.has_sc |= sc;
                }
            }
        }
        let memo = g.memo.0.borrow();
        let built = lm.constrain(g, &mut scratch, None, |a, b| memo_hb(&memo, a, b), index_in);
        let lc = LocationCoherence {
            g,
            model,
            memo,
            lm,
            scratch,
            has_sc_event,
            has_sc_fence,
        };
        built.map(|()| lc)
    }

    /// Whether the graph stays consistent when thread `t` appends an access
    /// of this location with order `ord` that reads from `w` (and is a
    /// write too when `writes`: a successful RMW).
    ///
    /// Only the coherence edges into the new access and RMW atomicity can
    /// fail (see `LocMo::accepts_read`), and their failure is final under
    /// every model. Success is `None` when the seq_cst axiom could change
    /// with them (the caller then checks in full): under SC, with a seq_cst
    /// fence in the graph (a fence before the read can gain psc edges
    /// through it), for a seq_cst access, or when the new edges are not
    /// already forced at a location with seq_cst accesses; but never when
    /// `w` is forced last (then the access has no edge out of it).
    pub fn read_extension_consistent(
        &self,
        t: u32,
        ord: MemOrder,
        writes: bool,
        loc: Loc,
        w: EventId,
    ) -> Option<bool> {
        let g = self.g;
        let nt = self.memo.stride;
        if loc != self.lm.loc || t as usize >= nt {
            return None;
        }
        let ord = effective_order(self.model, ord);
        let clock_of =
            |x: EventId| self.memo.threads[x.thread as usize].clock(x.index as usize, nt);
        // What happens before the new access: everything of its own thread,
        // what its last event (or its spawn) has, and for an acquire what its
        // source releases.
        let len = g.thread_len(t);
        let prior: Option<&[u32]> = if len > 0 {
            Some(clock_of(EventId::new(t, len - 1)))
        } else {
            g.thread(t).parent.filter(|&p| g.contains(p)).map(clock_of)
        };
        let acquired: Option<&[u32]> = if ord.is_atomic() && ord.is_acquire() && !w.is_init() {
            let th = &self.memo.threads[w.thread as usize];
            th.has_relview(w.index as usize, nt)
                .then(|| th.relview(w.index as usize, nt))
        } else {
            None
        };
        let has = |v: Option<&[u32]>, x: EventId| v.is_some_and(|v| v[x.thread as usize] > x.index);
        let before = |x: EventId| x.is_init() || x.thread == t || has(prior, x) || has(acquired, x);
        let wi = index_in(&self.lm.writes, w);
        let Some(forced) = self.lm.accepts_read(wi, writes, before) else {
            return Some(false);
        };
        // Reading the write every other one is forced before, the access
        // has no edge out of it in any relation the seq_cst axiom closes
        // over (no rb, no later event, nothing reads it yet, and written it
        // would stay last): it closes no cycle, and the graph before it is
        // consistent, so no search is needed.
        if self.lm.is_forced_last(wi) {
            return Some(true);
        }
        let sc_may_change = self.model == Model::Sc
            || self.has_sc_fence
            || ord.is_sc()
            || (!forced && self.lm.has_sc);
        (!sc_may_change).then_some(true)
    }

    /// Whether write `w` of this location could be last in modification
    /// order as far as the constraints go (seq_cst aside): it ends its RMW
    /// chain and no other chain is forced after that one. New reads of `w`
    /// keep that so.
    pub fn could_end_mo(&self, w: EventId) -> bool {
        self.lm.could_end(index_in(&self.lm.writes, w))
    }

    /// Whether every other write of this location is forced before `w`:
    /// it is last in every modification order, and a new read of it needs
    /// no seq_cst search (see [`Self::read_extension_consistent`]).
    pub fn is_forced_last(&self, w: EventId) -> bool {
        self.lm.is_forced_last(index_in(&self.lm.writes, w))
    }

    /// The location's writes, the initialisation write first, then in the
    /// order of [`ExecutionGraph::events`] (as [`ExecutionGraph::writes_to`]
    /// lists them).
    pub fn writes(&self) -> &[EventId] {
        &self.lm.writes
    }

    /// Whether the seq_cst axiom takes a search over modification orders
    /// (the graph has seq_cst events, or the model is SC): then a verdict on
    /// a new access of this location alone may not be the whole answer.
    pub fn sc_search_needed(&self) -> bool {
        self.model == Model::Sc || self.has_sc_event || self.has_sc_fence
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
        let writes = lc.writes().to_vec();
        let quick: Vec<Option<bool>> = writes
            .iter()
            .map(|&w| {
                let rmw = matches!(action, Action::Rmw { .. });
                lc.read_extension_consistent(t, ord, rmw, X, w)
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
        assert_eq!(lc.writes(), &g.writes_to(X)[..]);
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
            lc.read_extension_consistent(2, MemOrder::SeqCst, true, X, u),
            Some(true)
        );
        assert_eq!(
            lc.read_extension_consistent(2, MemOrder::SeqCst, true, X, w1),
            Some(false)
        );
    }

    /// Two writes no order relates: a seq_cst read of either leaves the
    /// verdict to the full check (neither is forced last); once one thread
    /// has read both, the second is forced last and a seq_cst read of it is
    /// judged at once, in agreement with the full check.
    #[test]
    fn seq_cst_reads_of_a_write_forced_last() {
        let mut g = ExecutionGraph::new(vec![0], 4);
        let a = store(&mut g, 0, 1);
        let b = store(&mut g, 1, 2);
        let sc_load = Action::Load {
            loc: X,
            ord: MemOrder::SeqCst,
        };
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
