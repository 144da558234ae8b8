//! The hardware models' global-order axiom: `ppo ∪ rfe ∪ mo ∪ rb` acyclic.
//!
//! On a multi-copy-atomic machine a write reaches every other thread at
//! once, so the accesses of an execution can be put in one order in which
//! each read takes the latest write of its location (but for reads of the
//! thread's own buffered stores), respecting the program order the machine
//! keeps (`ppo`, per model: see `models/mca.rs`, `models/tso.rs`). The
//! relation is over the halves of memory accesses (a read-modify-write's
//! read and write are two nodes, as the hardware performs them): an order
//! through a fence is in `ppo` as the pairs of accesses the fence
//! separates, and initialisation writes have no edge into them. Starting a
//! thread and joining it order everything before the spawn (after the
//! join) with everything the thread does, as every implementation's thread
//! start and join do.
//!
//! Modification order is not enumerated (see `consistency.rs`): the search
//! over its completions asks [`HardwareFrame::propagate`] at each step,
//! which fixes every pair of chains that one orientation would put on a
//! cycle and fails when both would, before the search branches on a pair
//! that is still free.

use super::{add_closed_edge, Analysis};
use crate::bits::BitMatrix;
use crate::event::{Action, EventId};
use crate::models::{halves, Half};

/// What the axiom needs that modification order does not change.
pub(crate) struct HardwareFrame {
    /// Each dense event's node as a read and as a write (`u32::MAX`: not a
    /// memory access of a thread, or not that half of one): a
    /// read-modify-write is two nodes, its read ordered before its write.
    read_node: Vec<u32>,
    write_node: Vec<u32>,
    /// `ppo ∪ rfe` and the thread start and join order, over nodes.
    fixed: BitMatrix,
}

const NONE: u32 = u32::MAX;

impl HardwareFrame {
    pub(crate) fn new(a: &Analysis<'_>) -> HardwareFrame {
        let g = a.g;
        let preserved = a
            .model
            .preserved_order()
            .expect("a hardware model keeps some program order");
        let mut read_node = vec![NONE; a.num_nodes()];
        let mut write_node = vec![NONE; a.num_nodes()];
        let mut count = 0u32;
        for t in 0..g.num_threads() as u32 {
            for (i, e) in g.thread_events(t).iter().enumerate() {
                let d = a.dense(EventId::new(t, i as u32));
                for h in halves(e, i) {
                    match h.write {
                        false => read_node[d] = count,
                        true => write_node[d] = count,
                    }
                    count += 1;
                }
            }
        }
        let node = |t: u32, h: Half| -> usize {
            let d = a.dense(EventId::new(t, h.index as u32));
            (if h.write { write_node[d] } else { read_node[d] }) as usize
        };
        // The nodes of thread `t`'s accesses among its events `range`.
        let accesses = |t: u32, range: std::ops::Range<usize>| -> Vec<usize> {
            let events = g.thread_events(t);
            range
                .flat_map(|i| halves(&events[i], i))
                .map(|h| node(t, h))
                .collect()
        };
        let mut fixed = BitMatrix::new(count as usize);
        for t in 0..g.num_threads() as u32 {
            let events = g.thread_events(t);
            preserved(events, &mut |x, y| fixed.set(node(t, x), node(t, y)));
            for (i, e) in events.iter().enumerate() {
                match e.action {
                    Action::Join { child } => {
                        // What the joined thread did, before what follows.
                        let after = accesses(t, i + 1..events.len());
                        for x in accesses(child, 0..g.thread_len(child) as usize) {
                            for &y in &after {
                                fixed.set(x, y);
                            }
                        }
                    }
                    _ if e.is_read() => {
                        let w = e.rf.expect("a read with a source");
                        if !w.is_init() && w.thread != t {
                            let r = Half {
                                index: i,
                                write: false,
                            };
                            fixed.set(write_node[a.dense(w)] as usize, node(t, r));
                        }
                    }
                    _ => {}
                }
            }
            // What the parent did up to the spawn, before the thread.
            if let Some(p) = g.thread(t).parent.filter(|&p| g.contains(p)) {
                let all = accesses(t, 0..events.len());
                for x in accesses(p.thread, 0..p.index as usize) {
                    for &y in &all {
                        fixed.set(x, y);
                    }
                }
            }
        }
        HardwareFrame {
            read_node,
            write_node,
            fixed,
        }
    }

    /// The node of write `id`'s write, of read `id`'s read.
    fn write_of(&self, a: &Analysis<'_>, id: EventId) -> Option<usize> {
        self.node_in(&self.write_node, a, id)
    }
    fn read_of(&self, a: &Analysis<'_>, id: EventId) -> Option<usize> {
        self.node_in(&self.read_node, a, id)
    }
    fn node_in(&self, nodes: &[u32], a: &Analysis<'_>, id: EventId) -> Option<usize> {
        if id.is_init() {
            return None;
        }
        let n = nodes[a.dense(id)];
        (n != NONE).then_some(n as usize)
    }

    /// The relation with `mo` and `rb` as far as `orders` fixes them.
    fn relation(&self, a: &Analysis<'_>, orders: &[BitMatrix]) -> BitMatrix {
        let mut rel = self.fixed.clone();
        for l in &a.locs {
            let nodes: Vec<Option<usize>> = l.writes.iter().map(|&w| self.write_of(a, w)).collect();
            for (i, &x) in nodes.iter().enumerate() {
                let Some(x) = x else { continue };
                for (j, &y) in nodes.iter().enumerate() {
                    if let Some(y) = y.filter(|_| i != j && a.mo_with(orders, l, i, j)) {
                        rel.set(x, y);
                    }
                }
            }
            for (k, &r) in l.reads.iter().enumerate() {
                let Some(x) = self.read_of(a, r) else {
                    continue;
                };
                let src = l.read_src[k];
                for (j, &y) in nodes.iter().enumerate() {
                    if let Some(y) = y.filter(|_| l.writes[j] != r && a.mo_with(orders, l, src, j))
                    {
                        rel.set(x, y);
                    }
                }
            }
        }
        rel
    }

    /// Whether the axiom fails with `mo` as far as `orders` fixes it.
    pub(crate) fn has_cycle(&self, a: &Analysis<'_>, orders: &[BitMatrix]) -> bool {
        self.relation(a, orders).has_cycle()
    }

    /// Orders every unordered pair of chains (at any location) that one
    /// orientation would put on a cycle, until none is left; false when the
    /// relation is cyclic already or some pair would be either way.
    pub(crate) fn propagate(&self, a: &Analysis<'_>, orders: &mut [BitMatrix]) -> bool {
        // With every pair of chains ordered there is nothing to fix: only
        // the cycle check is left (the common case, and a cheaper one).
        let unordered = a.locs.iter().enumerate().any(|(li, l)| {
            let nc = l.num_chains();
            (0..nc).any(|c| (c + 1..nc).any(|d| !orders[li].get(c, d) && !orders[li].get(d, c)))
        });
        if !unordered {
            return !self.relation(a, orders).has_cycle();
        }
        loop {
            let mut reach = self.relation(a, orders);
            reach.close();
            if (0..reach.len()).any(|x| reach.get(x, x)) {
                return false;
            }
            let mut changed = false;
            for (li, l) in a.locs.iter().enumerate() {
                let nc = l.num_chains();
                if nc < 2 {
                    continue;
                }
                // Per chain: the node of its first write, of its last, and
                // of the reads of its writes.
                let first: Vec<Option<usize>> = (0..nc)
                    .map(|c| self.write_of(a, l.writes[l.chain(c)[0]]))
                    .collect();
                let last: Vec<Option<usize>> = (0..nc)
                    .map(|c| self.write_of(a, l.writes[*l.chain(c).last().unwrap()]))
                    .collect();
                let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nc];
                for (k, &r) in l.reads.iter().enumerate() {
                    if let Some(x) = self.read_of(a, r) {
                        readers[l.chain_of[l.read_src[k]]].push(x);
                    }
                }
                // Whether putting chain `c` before chain `d` closes a cycle:
                // the new edges go from `c`'s last write and the reads of
                // its writes to `d`'s first write.
                let closes = |c: usize, d: usize| match (first[d], last[c]) {
                    (Some(f), Some(z)) => {
                        reach.get(f, z) || readers[c].iter().any(|&r| reach.get(f, r))
                    }
                    _ => false,
                };
                for c in 0..nc {
                    for d in c + 1..nc {
                        let o = &orders[li];
                        if o.get(c, d) || o.get(d, c) {
                            continue;
                        }
                        match (closes(c, d), closes(d, c)) {
                            (true, true) => return false,
                            (true, false) => add_closed_edge(&mut orders[li], d, c),
                            (false, true) => add_closed_edge(&mut orders[li], c, d),
                            (false, false) => continue,
                        }
                        changed = true;
                    }
                }
            }
            if !changed {
                return true;
            }
        }
    }
}
