//! ARMv8's view machine (the `mca` model), after Promising-ARM without
//! promises. A store becomes visible to the other threads when it leaves
//! its thread's buffer, at a random point, possibly before an earlier store
//! of the thread to another location (never before one to its location; a
//! release store, a read-modify-write and `dmb ish` first empty the
//! buffer), and its timestamp is when. A read takes the thread's own newest
//! buffered store of its location (forwarding), or else a visible store no
//! older than the newest one at `max(coh[x], vpre)`, where `vpre` holds
//! what the thread's acquire reads and fences ordered after them (and, for
//! a seq_cst load, its last release store). Reads never take a store not
//! yet performed, so load buffering is not produced; every execution that
//! is stays within `mca` (a read choice must also be one the C++ memory
//! allows).

use super::machine::Machine;
use super::{execution_order, initial_store, NodeId, SeqBuild};
use crate::{Loc, MemOrder};
use std::collections::{HashMap, HashSet, VecDeque};

/// ARMv8's views and buffers (see the module doc).
#[derive(Default)]
pub(super) struct ArmViews {
    threads: Vec<ArmThread>,
    /// The oldest timestamp the read being performed may take.
    bound: Option<u64>,
    /// The thread's own buffered store the read being performed takes.
    forward: Option<NodeId>,
    /// Per thread, its buffered stores, oldest first (with their order).
    pending: Vec<VecDeque<(Loc, NodeId, MemOrder)>>,
    /// Each visible store's timestamp (initial values: 0, not listed).
    visible_at: HashMap<NodeId, u64, SeqBuild>,
    /// Per location, the newest visible store and its timestamp.
    newest: Vec<Option<(u64, NodeId)>>,
    /// The last timestamp given.
    clock: u64,
}

/// One thread's views (timestamps; see [`ArmViews`]).
#[derive(Clone, Default)]
struct ArmThread {
    /// Per location, the newest timestamp the thread has read or written.
    coh: Vec<u64>,
    /// The newest timestamps of its reads and writes so far.
    r_old: u64,
    w_old: u64,
    /// What later reads must not read before (acquire reads, fences).
    r_new: u64,
    /// Its newest release store's timestamp (a seq_cst load waits for it).
    rel: u64,
}

impl ArmThread {
    fn coh(&self, loc: Loc) -> u64 {
        self.coh.get(loc.0 as usize).copied().unwrap_or(0)
    }

    fn raise_coh(&mut self, loc: Loc, t: u64) {
        let l = loc.0 as usize;
        if self.coh.len() <= l {
            self.coh.resize(l + 1, 0);
        }
        self.coh[l] = self.coh[l].max(t);
    }

    /// The newest of all the thread has read, written and been ordered
    /// after: where a thread it starts or joins stands.
    fn end(&self) -> u64 {
        self.r_old.max(self.w_old).max(self.r_new)
    }
}

impl ArmViews {
    /// Views and buffers for `threads` threads.
    pub(super) fn new(threads: usize) -> Self {
        ArmViews {
            threads: vec![ArmThread::default(); threads],
            pending: vec![VecDeque::new(); threads],
            ..Default::default()
        }
    }

    /// Store `id`'s timestamp, if it is visible.
    fn visible_at(&self, id: NodeId) -> Option<u64> {
        if execution_order(id) == 0 {
            return Some(0);
        }
        self.visible_at.get(&id).copied()
    }

    /// Makes thread `t`'s `i`-th buffered store visible now.
    fn make_visible(&mut self, t: u32, i: usize) {
        let Some((loc, id, ord)) = self.pending[t as usize].remove(i) else {
            return;
        };
        self.clock += 1;
        let ts = self.clock;
        self.visible_at.insert(id, ts);
        let l = loc.0 as usize;
        if self.newest.len() <= l {
            self.newest.resize(l + 1, None);
        }
        self.newest[l] = Some((ts, id));
        let th = &mut self.threads[t as usize];
        th.raise_coh(loc, ts);
        th.w_old = th.w_old.max(ts);
        if ord.is_release() {
            th.rel = th.rel.max(ts);
        }
    }

    /// Empties thread `t`'s buffer, oldest first.
    fn flush_all(&mut self, t: u32) {
        while !self.pending[t as usize].is_empty() {
            self.make_visible(t, 0);
        }
    }

    /// Makes thread `t`'s buffered stores to `loc` visible, oldest first.
    fn flush_loc(&mut self, t: u32, loc: Loc) {
        while let Some(i) = self.pending[t as usize].iter().position(|e| e.0 == loc) {
            self.make_visible(t, i);
        }
    }
}

impl Machine for ArmViews {
    fn add_thread(&mut self, parent: Option<u32>) {
        if let Some(p) = parent {
            self.flush_all(p);
        }
        self.pending.push(VecDeque::new());
        let start = parent.map(|p| self.threads[p as usize].end());
        self.threads.push(ArmThread {
            r_new: start.unwrap_or(0),
            ..Default::default()
        });
    }

    fn join(&mut self, t: u32, child: u32) {
        self.flush_all(child);
        let end = self.threads[child as usize].end();
        let th = &mut self.threads[t as usize];
        th.r_new = th.r_new.max(end);
    }

    fn before_store(&mut self, _t: u32, _ord: MemOrder) {}

    /// Its earlier stores at `loc` (and, releasing, all of them) become
    /// visible.
    fn before_rmw(&mut self, t: u32, loc: Loc, release: bool) {
        match release {
            true => self.flush_all(t),
            false => self.flush_loc(t, loc),
        }
    }

    /// Its own newest buffered store there; or else (`latest`: an RMW, whose
    /// store becomes visible right after it, reads the newest visible
    /// store) the visible stores no older than the newest one at
    /// `max(coh, vpre)`.
    fn aim_read(
        &mut self,
        t: u32,
        loc: Loc,
        sc: bool,
        latest: bool,
        stores: &mut dyn Iterator<Item = NodeId>,
    ) {
        let own = self.pending[t as usize]
            .iter()
            .rev()
            .find(|e| e.0 == loc)
            .map(|e| e.1);
        if let Some(id) = own {
            self.forward = Some(id);
            return;
        }
        let th = &self.threads[t as usize];
        let vpre = if sc { th.r_new.max(th.rel) } else { th.r_new };
        let newest = self.newest.get(loc.0 as usize).copied().flatten();
        let floor = match (latest, newest) {
            (_, None) => 0,
            (true, Some((ts, _))) => ts,
            (false, Some(_)) => {
                let view = vpre.max(th.coh(loc));
                // The newest visible store at `view`, among the location's
                // stores the memory still has.
                stores
                    .filter_map(|id| self.visible_at(id))
                    .filter(|&ts| ts <= view)
                    .max()
                    .unwrap_or(0)
            }
        };
        self.bound = Some(floor);
    }

    fn restrict(&mut self, candidates: &mut super::Stores) -> Option<NodeId> {
        let (bound, forward) = (self.bound.take(), self.forward.take());
        let before = candidates.len();
        let newest = candidates
            .iter()
            .copied()
            .max_by_key(|&c| execution_order(c));
        match forward {
            Some(own) => candidates.retain(|c| *c == own),
            None => {
                let bound = bound.unwrap_or(0);
                candidates.retain(|c| self.visible_at(*c).is_some_and(|ts| ts >= bound));
            }
        }
        debug_assert!(
            before == 0 || !candidates.is_empty(),
            "ARMv8's views leave the read nothing the memory allows"
        );
        if candidates.is_empty() {
            candidates.extend(newest);
        }
        None
    }

    /// A forwarded read (its own buffered store) orders nothing after it.
    fn read(&mut self, t: u32, loc: Loc, s: NodeId, ord: MemOrder) {
        let ts = self.visible_at(s);
        let th = &mut self.threads[t as usize];
        let vpre = if ord.is_sc() {
            th.r_new.max(th.rel)
        } else {
            th.r_new
        };
        let post = match ts {
            Some(ts) => ts.max(vpre),
            None => vpre,
        };
        th.raise_coh(loc, post);
        th.r_old = th.r_old.max(post);
        if ord.is_acquire() {
            th.r_new = th.r_new.max(post);
        }
    }

    /// Buffered, or (a release store, or an RMW's write) visible at once
    /// after the buffer.
    fn write(&mut self, t: u32, loc: Loc, id: NodeId, ord: MemOrder, rmw: bool) {
        if ord.is_release() {
            self.flush_all(t);
        }
        self.pending[t as usize].push_back((loc, id, ord));
        if ord.is_release() || rmw {
            let i = self.pending[t as usize].len() - 1;
            self.make_visible(t, i);
        }
    }

    /// `dmb ishld` (acquire) orders earlier reads before later reads,
    /// `dmb ish` (release or seq_cst) earlier reads and writes.
    fn fence(&mut self, t: u32, ord: MemOrder) {
        if ord.is_release() {
            self.flush_all(t);
        }
        let th = &mut self.threads[t as usize];
        if ord.is_release() {
            th.r_new = th.r_new.max(th.r_old).max(th.w_old);
        } else if ord.is_acquire() {
            th.r_new = th.r_new.max(th.r_old);
        }
    }

    /// Each thread's oldest buffered store to each location.
    fn flushable(&self) -> Vec<(u32, usize)> {
        let mut out = Vec::new();
        for (t, buf) in self.pending.iter().enumerate() {
            for (i, e) in buf.iter().enumerate() {
                if !buf.iter().take(i).any(|f| f.0 == e.0) {
                    out.push((t as u32, i));
                }
            }
        }
        out
    }

    fn flush(&mut self, t: u32, i: usize) {
        self.make_visible(t, i);
    }

    /// A compare-exchange that writes reads the newest visible store (its
    /// store becomes visible right after it).
    fn store_a_cas_must_read(&self, loc: Loc) -> Option<NodeId> {
        let newest = self.newest.get(loc.0 as usize).copied().flatten();
        Some(newest.map_or(initial_store(loc), |(_, id)| id))
    }

    /// The buffered stores and each location's newest.
    fn pin(&self, kept: &mut HashSet<NodeId, SeqBuild>) {
        kept.extend(self.pending.iter().flatten().map(|e| e.1));
        kept.extend(self.newest.iter().flatten().map(|e| e.1));
    }

    fn forget_unless(&mut self, referenced: &HashSet<NodeId, SeqBuild>) {
        self.visible_at.retain(|id, _| referenced.contains(id));
    }

    /// The newest visible store stays.
    fn final_store(&self, loc: Loc) -> NodeId {
        let newest = self.newest.get(loc.0 as usize).copied().flatten();
        newest.map_or(initial_store(loc), |(_, id)| id)
    }
}
