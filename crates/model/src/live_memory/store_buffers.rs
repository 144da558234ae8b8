//! x86-TSO's machine (the `tso` model): each thread's stores wait in a FIFO
//! buffer until they are flushed to memory, at random points; a load takes
//! its thread's newest buffered store to the location, else the last one
//! flushed. Locked instructions (read-modify-writes, compare-exchanges,
//! seq_cst stores) and seq_cst fences drain their thread's buffer first and
//! write to memory at once; starting and joining a thread drain the
//! parent's and the child's. Every run is an x86-TSO execution of the
//! program compiled with the standard mapping, and every such execution is
//! one some run produces.

use super::machine::Machine;
use super::{initial_store, NodeId, SeqBuild};
use crate::{Loc, MemOrder};
use std::collections::{HashSet, VecDeque};

/// x86-TSO's store buffers and memory (see the module doc).
#[derive(Default)]
pub(super) struct StoreBuffers {
    /// Per thread, its stores not yet in memory, oldest first.
    pending: Vec<VecDeque<(Loc, NodeId)>>,
    /// Per location, the last store flushed (`None`: the initial value).
    memory: Vec<Option<NodeId>>,
    /// The store the access being performed reads, as the machine says.
    target: Option<NodeId>,
}

impl StoreBuffers {
    /// Buffers for `threads` threads.
    pub(super) fn new(threads: usize) -> Self {
        StoreBuffers {
            pending: vec![VecDeque::new(); threads],
            ..Default::default()
        }
    }

    fn write_to_memory(&mut self, loc: Loc, id: NodeId) {
        let l = loc.0 as usize;
        if self.memory.len() <= l {
            self.memory.resize(l + 1, None);
        }
        self.memory[l] = Some(id);
    }

    /// Flushes thread `t`'s oldest buffered store to memory.
    fn flush_oldest(&mut self, t: u32) {
        if let Some((loc, id)) = self.pending[t as usize].pop_front() {
            self.write_to_memory(loc, id);
        }
    }

    /// Flushes every store thread `t` buffered.
    fn drain(&mut self, t: u32) {
        while !self.pending[t as usize].is_empty() {
            self.flush_oldest(t);
        }
    }
}

impl Machine for StoreBuffers {
    fn add_thread(&mut self, parent: Option<u32>) {
        if let Some(p) = parent {
            self.drain(p);
        }
        self.pending.push(VecDeque::new());
    }

    fn join(&mut self, _t: u32, child: u32) {
        self.drain(child);
    }

    fn before_store(&mut self, t: u32, ord: MemOrder) {
        if ord.is_sc() {
            // `xchg`
            self.drain(t);
        }
    }

    fn before_rmw(&mut self, t: u32, _loc: Loc, _release: bool) {
        self.drain(t);
    }

    /// The thread's newest buffered store to `loc`, else memory's.
    fn aim_read(
        &mut self,
        t: u32,
        loc: Loc,
        _sc: bool,
        _latest: bool,
        _stores: &mut dyn Iterator<Item = NodeId>,
    ) {
        let own = self.pending[t as usize]
            .iter()
            .rev()
            .find(|(l, _)| *l == loc)
            .map(|&(_, id)| id);
        let memory = self.memory.get(loc.0 as usize).copied().flatten();
        self.target = Some(own.or(memory).unwrap_or(initial_store(loc)));
    }

    fn restrict(&mut self, _candidates: &mut super::Stores) -> Option<NodeId> {
        self.target.take()
    }

    fn read(&mut self, _t: u32, _loc: Loc, _s: NodeId, _ord: MemOrder) {}

    /// To the buffer, or to memory at once when locked (an RMW's write or
    /// a seq_cst store, `xchg`).
    fn write(&mut self, t: u32, loc: Loc, id: NodeId, ord: MemOrder, rmw: bool) {
        if rmw || ord.is_sc() {
            self.write_to_memory(loc, id);
        } else {
            self.pending[t as usize].push_back((loc, id));
        }
    }

    fn fence(&mut self, t: u32, ord: MemOrder) {
        if ord.is_sc() {
            // `mfence`
            self.drain(t);
        }
    }

    /// Each thread's oldest buffered store.
    fn flushable(&self) -> Vec<(u32, usize)> {
        (0..self.pending.len() as u32)
            .filter(|&u| !self.pending[u as usize].is_empty())
            .map(|u| (u, 0))
            .collect()
    }

    fn flush(&mut self, t: u32, _i: usize) {
        self.flush_oldest(t);
    }

    fn store_a_cas_must_read(&self, _loc: Loc) -> Option<NodeId> {
        None
    }

    /// What memory and the buffers hold.
    fn pin(&self, kept: &mut HashSet<NodeId, SeqBuild>) {
        kept.extend(self.memory.iter().flatten().copied());
        kept.extend(self.pending.iter().flatten().map(|&(_, id)| id));
    }

    fn forget_unless(&mut self, _referenced: &HashSet<NodeId, SeqBuild>) {}

    fn final_store(&self, loc: Loc) -> NodeId {
        let m = self.memory.get(loc.0 as usize).copied().flatten();
        m.unwrap_or(initial_store(loc))
    }
}
