//! Happens-before clocks remembered with a graph.
//!
//! The explorer analyses a graph, adds an event, and analyses it again: the
//! clocks of the events already there do not change (an event's clock
//! depends only on the events before it in po ∪ rf), so [`Analysis`]
//! computes only those of new events and keeps them here. The graph forgets
//! the clocks of an event, and of everything after it in po ∪ rf, when
//! something they depend on changes (see `ExecutionGraph::update_event`).
//! What is remembered is always closed under po ∪ rf (and spawn and join):
//! an event that is not remembered has no remembered successor.
//!
//! [`Analysis`]: crate::Analysis

use crate::graph::Memo;
use crate::models::Model;
use crate::ExecutionGraph;
use std::any::Any;
use std::cell::{Ref, RefMut};

/// The clocks of the first `len()` events of one thread, one record per
/// event in one vector (a graph is cloned at every branch: one allocation
/// per thread). A record, with `stride` = the number of threads, holds the
/// event's happens-before clock, the view it releases, the release views of
/// the thread's relaxed reads up to it (what a later acquire fence takes),
/// whether it releases anything, and 1 + the index of the thread's last
/// release fence up to it (0: none).
#[derive(Default)]
pub(crate) struct ThreadClocks {
    records: Vec<u32>,
    len: usize,
    /// The index of the first seq_cst access, and of the first seq_cst
    /// fence, among the remembered events (whether the seq_cst axiom needs
    /// a search is a question about the whole graph; see `ClockMemo::seq_cst`).
    first_sc: [Option<u32>; 2],
}

/// Records a cloned thread has room for without reallocating (the copy of
/// a graph goes on growing, like its events).
const CLONE_HEADROOM: usize = 8;

impl Clone for ThreadClocks {
    fn clone(&self) -> Self {
        let per = self.records.len().checked_div(self.len).unwrap_or(0);
        self.prefix(self.len, per)
    }
}

/// The size of one record.
#[inline]
fn record(stride: usize) -> usize {
    3 * stride + 2
}

impl ThreadClocks {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn truncate(&mut self, n: usize, stride: usize) {
        if n < self.len {
            self.len = n;
            self.records.truncate(n * record(stride));
            for first in &mut self.first_sc {
                *first = first.filter(|&i| (i as usize) < n);
            }
        }
    }
    /// Event `i`'s whole record (`3 * stride + 2` entries).
    #[inline]
    pub fn record(&self, i: usize, stride: usize) -> &[u32] {
        let r = record(stride);
        &self.records[i * r..(i + 1) * r]
    }
    /// Entry `u` of event `i`'s clock: how many of thread `u`'s events
    /// happen before it or are it.
    #[inline]
    pub fn clock_entry(&self, i: usize, stride: usize, u: usize) -> u32 {
        self.records[i * record(stride) + u]
    }
    #[inline]
    pub fn clock(&self, i: usize, stride: usize) -> &[u32] {
        &self.record(i, stride)[..stride]
    }
    #[inline]
    pub fn relview(&self, i: usize, stride: usize) -> &[u32] {
        &self.record(i, stride)[stride..2 * stride]
    }
    #[inline]
    pub fn has_relview(&self, i: usize, stride: usize) -> bool {
        self.record(i, stride)[3 * stride] != 0
    }
    /// Notes that the next event (whose record comes next) is a seq_cst
    /// access, or a seq_cst fence when `fence`.
    pub fn note_sc(&mut self, fence: bool) {
        self.first_sc[fence as usize].get_or_insert(self.len as u32);
    }
    /// A copy of the records (`r` entries each) of the first `n` events,
    /// with room to grow.
    fn prefix(&self, n: usize, r: usize) -> ThreadClocks {
        let n = n.min(self.len);
        let mut records = Vec::with_capacity((n + CLONE_HEADROOM) * r);
        records.extend_from_slice(&self.records[..n * r]);
        ThreadClocks {
            records,
            len: n,
            first_sc: self.first_sc.map(|f| f.filter(|&i| (i as usize) < n)),
        }
    }
    /// Appends the record of the next event, laid out as [`Self::record`]
    /// returns them (clock, release view, pending acquire views, whether
    /// it releases, last release fence).
    pub fn push(&mut self, record: &[u32]) {
        self.records.extend_from_slice(record);
        self.len += 1;
    }
    /// Widens every record from `old` to `new` threads (the new threads'
    /// entries are 0: nothing of theirs came before).
    fn restride(&mut self, old: usize, new: usize) {
        let mut wide = Vec::with_capacity(self.len * record(new));
        for i in 0..self.len {
            let r = self.record(i, old);
            for part in 0..3 {
                wide.extend_from_slice(&r[part * old..(part + 1) * old]);
                wide.resize(wide.len() + new - old, 0);
            }
            wide.extend_from_slice(&r[3 * old..]);
        }
        self.records = wide;
    }
}

/// The remembered clocks of a graph, valid for one model.
#[derive(Clone, Default)]
pub(crate) struct ClockMemo {
    pub model: Option<Model>,
    /// Entries per clock (the number of threads when they were computed).
    pub stride: usize,
    pub threads: Vec<ThreadClocks>,
    /// Per location, the coherence constraints over events with clocks.
    pub locs: super::coherence::LocCaches,
}

impl ClockMemo {
    /// Makes it hold clocks for `model` with `nt` threads: forgets
    /// everything when the model differs, widens the clocks to new threads.
    pub fn prepare(&mut self, model: Model, nt: usize) {
        if self.model != Some(model) || self.stride > nt || self.threads.len() > nt {
            self.model = Some(model);
            self.stride = nt;
            self.threads.clear();
            self.locs.clear();
        }
        if self.stride < nt {
            for th in &mut self.threads {
                th.restride(self.stride, nt);
            }
            self.stride = nt;
        }
        self.threads.resize_with(nt, ThreadClocks::default);
    }
    /// Whether the remembered events hold a seq_cst access, and a seq_cst
    /// fence.
    #[inline]
    pub fn seq_cst(&self) -> (bool, bool) {
        let any = |k: usize| self.threads.iter().any(|th| th.first_sc[k].is_some());
        (any(0), any(1))
    }
    /// A copy holding the clocks of the first `cut[t]` events of each
    /// thread `t`, and (with `caches`) the location constraints over those
    /// events.
    pub fn prefix(&self, cut: &[usize], caches: bool) -> ClockMemo {
        ClockMemo {
            model: self.model,
            stride: self.stride,
            threads: (self.threads.iter().enumerate())
                .map(|(t, th)| th.prefix(cut.get(t).copied().unwrap_or(0), record(self.stride)))
                .collect(),
            locs: match caches {
                true => self.locs.prefix(Some(cut)),
                false => Default::default(),
            },
        }
    }
    /// How many of thread `t`'s first events have clocks.
    #[inline]
    pub fn known(&self, t: usize) -> usize {
        self.threads.get(t).map_or(0, |th| th.len())
    }
}

/// The graph sees the clocks through [`Memo`] (it depends on nothing
/// above it).
impl Memo for ClockMemo {
    fn known(&self, t: usize) -> usize {
        ClockMemo::known(self, t)
    }
    fn forget_beyond(&mut self, cut: &[usize]) {
        let stride = self.stride;
        for (th, &n) in self.threads.iter_mut().zip(cut) {
            th.truncate(n, stride);
        }
        self.locs.forget_beyond(cut);
    }
    fn prefix(&self, cut: &[usize], shared: bool) -> Box<dyn Memo> {
        Box::new(ClockMemo::prefix(self, cut, shared))
    }
    fn detach(&mut self) {
        self.locs = Default::default();
    }
    fn clone_box(&self) -> Box<dyn Memo> {
        Box::new(self.clone())
    }
}

/// The clocks remembered with `g` (none yet: an empty memo), to extend.
pub(crate) fn remembered_mut(g: &ExecutionGraph) -> RefMut<'_, ClockMemo> {
    RefMut::map(g.memo.0.borrow_mut(), |m| {
        let m: &mut dyn Any = m
            .get_or_insert_with(|| Box::new(ClockMemo::default()))
            .as_mut();
        m.downcast_mut::<ClockMemo>()
            .expect("a graph's memo holds clocks")
    })
}

/// The clocks remembered with `g`, to read.
pub(crate) fn remembered(g: &ExecutionGraph) -> Ref<'_, ClockMemo> {
    if g.memo.0.borrow().is_none() {
        drop(remembered_mut(g));
    }
    Ref::map(g.memo.0.borrow(), |m| {
        m.as_deref()
            .and_then(|m| (m as &dyn Any).downcast_ref::<ClockMemo>())
            .expect("a graph's memo holds clocks")
    })
}

#[cfg(test)]
mod tests {
    use crate::{Action, Analysis, EventId, ExecutionGraph, Loc, MemOrder, Model};

    const X: Loc = Loc(0);
    const Y: Loc = Loc(1);

    /// Message passing: thread 0 writes x then releases y; thread 1
    /// acquires y then reads x, both from the initial writes.
    fn message_passing() -> ExecutionGraph {
        let mut g = ExecutionGraph::new(vec![0, 0], 2);
        g.push(
            0,
            Action::Store {
                loc: X,
                ord: MemOrder::Relaxed,
                val: 1,
            },
        );
        g.push(
            0,
            Action::Store {
                loc: Y,
                ord: MemOrder::Release,
                val: 1,
            },
        );
        for (loc, ord) in [(Y, MemOrder::Acquire), (X, MemOrder::Relaxed)] {
            let r = g.push(1, Action::Load { loc, ord });
            g.set_rf(r, EventId::init(loc));
        }
        g
    }

    fn known(g: &ExecutionGraph) -> Vec<usize> {
        let memo = super::remembered(g);
        (0..g.num_threads()).map(|t| memo.known(t)).collect()
    }

    /// The clocks an analysis reports, event by event.
    fn clocks(g: &ExecutionGraph) -> Vec<Vec<u32>> {
        let a = Analysis::happens_before(g, Model::Cpp20).unwrap();
        g.events().map(|(id, _)| a.clock(id).to_vec()).collect()
    }

    /// An analysis remembers every clock; a change that clocks do not
    /// depend on keeps them, and the next analysis reuses them.
    #[test]
    fn clocks_are_remembered_and_reused() {
        let mut g = message_passing();
        assert_eq!(known(&g), vec![0, 0]);
        let first = clocks(&g);
        assert_eq!(known(&g), vec![2, 2]);
        g.update_event(EventId::new(1, 0), |e| e.revisitable = false);
        assert_eq!(known(&g), vec![2, 2]);
        assert_eq!(clocks(&g), first);
        assert_eq!(clocks(&g), clocks(&g.without_memo()));
    }

    /// A new source forgets the reader's clock and what comes after it, and
    /// the next analysis gives the clocks a fresh one does.
    #[test]
    fn a_new_source_forgets_what_depends_on_it() {
        let mut g = message_passing();
        let before = clocks(&g);
        g.set_rf(EventId::new(1, 0), EventId::new(0, 1));
        assert_eq!(known(&g), vec![2, 0]);
        let after = clocks(&g);
        assert_eq!(after, clocks(&g.without_memo()));
        // The read of x now happens after both writes of thread 0.
        assert_eq!(before[3], vec![0, 2]);
        assert_eq!(after[3], vec![2, 2]);
        // Reading from thread 1 makes thread 0's later events depend on it.
        g.set_rf(EventId::new(1, 0), EventId::init(Y));
        let r = g.push(
            0,
            Action::Load {
                loc: X,
                ord: MemOrder::Acquire,
            },
        );
        g.set_rf(r, EventId::init(X));
        clocks(&g);
        assert_eq!(known(&g), vec![3, 2]);
        g.truncate_thread(1, 1);
        assert_eq!(known(&g), vec![3, 1]);
        let w = g.push(
            1,
            Action::Store {
                loc: X,
                ord: MemOrder::Release,
                val: 2,
            },
        );
        clocks(&g);
        g.set_rf(r, w);
        assert_eq!(known(&g), vec![2, 2]);
        assert_eq!(clocks(&g), clocks(&g.without_memo()));
        g.truncate_thread(1, 0);
        assert_eq!(known(&g), vec![2, 0]);
    }

    /// A restricted graph keeps the clocks of the events it keeps, and
    /// forgets those that read from removed events.
    #[test]
    fn restricting_keeps_what_is_kept() {
        let mut g = message_passing();
        g.set_rf(EventId::new(1, 0), EventId::new(0, 1));
        clocks(&g);
        let h = g.restrict(&crate::View(vec![1, 2]));
        assert_eq!(known(&h), vec![1, 0]);
        let h = g.restrict(&crate::View(vec![2, 1]));
        assert_eq!(known(&h), vec![2, 1]);
        assert_eq!(clocks(&h), clocks(&h.without_memo()));
    }
}
