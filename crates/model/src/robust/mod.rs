//! Robustness against sequential consistency, one execution at a time.
//!
//! A program is robust under a model M when every M-consistent execution
//! graph it has (reads-from *and* modification order) is SC-consistent:
//! `po ∪ rf ∪ mo ∪ fr` is acyclic over its atomic accesses (Lahav and
//! Margalit's execution-graph robustness, which RSAN checks). The explorer
//! visits each reads-from graph once and never fixes modification orders
//! nothing observes, so [`sc_violation`] asks, for one graph, whether *some*
//! modification order that M allows makes it non-SC: it orders unordered
//! RMW chains one pair at a time, both ways, and stops at the first order
//! with a cycle that M can still complete consistently. Relations only grow
//! as the order is fixed (fr is rf⁻¹;mo), so a cycle found on a partial
//! order is a cycle of every completion.
//!
//! Edges through events a front end leaves out (the failed turns of wait
//! loops, which robustness treats as if the loop had waited without
//! looking) and non-atomic accesses are not drawn; program order still
//! passes through them.

pub mod monitor;
pub mod psc_reach;

use crate::bits::BitMatrix;
use crate::consistency::{add_closed_edge, Analysis};
use crate::event::{Action, EventId, Loc};

/// The kind of an edge of an SC cycle.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Edge {
    /// Program order (with thread creation and join).
    Po,
    /// Reads-from.
    Rf,
    /// Modification order.
    Mo,
    /// From-read: a read to a write modification-order after its source.
    Fr,
}

impl Edge {
    pub fn name(self) -> &'static str {
        match self {
            Edge::Po => "po",
            Edge::Rf => "rf",
            Edge::Mo => "mo",
            Edge::Fr => "fr",
        }
    }
}

/// A cycle of `po ∪ rf ∪ mo ∪ fr`: an execution the model allows that no
/// interleaving produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScCycle {
    /// The cycle's accesses, each with the edge to the next one (the last
    /// one's edge leads back to the first). Consecutive program-order steps
    /// are one `Po` step.
    pub steps: Vec<(EventId, Edge)>,
}

/// The verdict on one execution graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Robustness {
    /// Every modification order the model allows is SC-consistent.
    Robust,
    /// Some modification order the model allows has this cycle.
    Violation(ScCycle),
    /// More modification orders than [`MAX_ORDERS`] would have to be tried.
    Undecided,
}

/// How many (partial) modification orders one graph's check tries at most.
pub const MAX_ORDERS: usize = 1 << 16;

/// Whether some modification order that `a`'s model allows, with the
/// writes of `maxima` ending it at their locations, makes `a`'s graph
/// non-SC. `ignored` events take part in program order only. `a` must be a
/// full analysis (not [`Analysis::happens_before`]).
pub fn sc_violation(
    a: &Analysis<'_>,
    ignored: &dyn Fn(EventId) -> bool,
    maxima: &[(Loc, EventId)],
) -> Robustness {
    assert!(
        !a.is_partial(),
        "robustness needs every location's constraints"
    );
    let Some(orders) = a.orders_with_maxima(maxima) else {
        return Robustness::Robust;
    };
    let base = Base::new(a, ignored);
    let mut budget = MAX_ORDERS;
    match search(a, &base, orders, &mut budget) {
        Some(cycle) => Robustness::Violation(cycle),
        None if budget == 0 => Robustness::Undecided,
        None => Robustness::Robust,
    }
}

/// The edges that do not depend on modification order, and which events
/// take part in rf, mo and fr.
struct Base {
    /// Adjacency over the analysis's dense events: po (consecutive events,
    /// spawn to the child's first, the child's last to its join) and rf.
    fixed: Vec<Vec<(usize, Edge)>>,
    /// Whether each dense event is an atomic access robustness counts.
    counted: Vec<bool>,
}

impl Base {
    fn new(a: &Analysis<'_>, ignored: &dyn Fn(EventId) -> bool) -> Self {
        let g = a.g;
        let n = a.num_nodes();
        let mut fixed: Vec<Vec<(usize, Edge)>> = vec![Vec::new(); n];
        let mut counted = vec![false; n];
        for (d, slot) in counted.iter_mut().enumerate() {
            let id = a.id(d);
            *slot = id.is_init() || {
                let e = g.event(id);
                e.is_atomic_access() && !ignored(id)
            };
        }
        for t in 0..g.num_threads() as u32 {
            let len = g.thread_len(t);
            for i in 1..len {
                fixed[a.dense(EventId::new(t, i - 1))]
                    .push((a.dense(EventId::new(t, i)), Edge::Po));
            }
            if len > 0 {
                if let Some(parent) = g.thread(t).parent {
                    if !parent.is_init() && g.contains(parent) {
                        fixed[a.dense(parent)].push((a.dense(EventId::new(t, 0)), Edge::Po));
                    }
                }
            }
            for i in 0..len {
                let id = EventId::new(t, i);
                let e = g.event(id);
                if let Action::Join { child } = e.action {
                    let clen = g.thread_len(child);
                    if clen > 0 {
                        fixed[a.dense(EventId::new(child, clen - 1))].push((a.dense(id), Edge::Po));
                    }
                }
                if let Some(w) = e.rf {
                    let (dw, dr) = (a.dense(w), a.dense(id));
                    if counted[dw] && counted[dr] {
                        fixed[dw].push((dr, Edge::Rf));
                    }
                }
            }
        }
        Base { fixed, counted }
    }

    /// Every edge with the modification order as far as `orders` fixes it.
    fn edges(&self, a: &Analysis<'_>, orders: &[BitMatrix]) -> Vec<Vec<(usize, Edge)>> {
        let mut adj = self.fixed.clone();
        for l in &a.locs {
            let writes: Vec<(usize, usize)> = l
                .writes
                .iter()
                .enumerate()
                .map(|(i, &w)| (i, a.dense(w)))
                .filter(|&(_, d)| self.counted[d])
                .collect();
            for &(i, di) in &writes {
                for &(j, dj) in &writes {
                    if i != j && a.mo_with(orders, l, i, j) {
                        adj[di].push((dj, Edge::Mo));
                    }
                }
            }
            for (k, &r) in l.reads.iter().enumerate() {
                let dr = a.dense(r);
                if !self.counted[dr] {
                    continue;
                }
                let src = l.read_src[k];
                for &(j, dj) in &writes {
                    if dj != dr && a.mo_with(orders, l, src, j) {
                        adj[dr].push((dj, Edge::Fr));
                    }
                }
            }
        }
        adj
    }
}

/// Depth-first over the orientations of unordered chain pairs.
fn search(
    a: &Analysis<'_>,
    base: &Base,
    orders: Vec<BitMatrix>,
    budget: &mut usize,
) -> Option<ScCycle> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let adj = base.edges(a, &orders);
    if let Some(cycle) = shortest_cycle(&adj) {
        // Every completion keeps the cycle; the model must allow one.
        return a.complete_sc(orders).map(|_| compress(a, &cycle));
    }
    for (li, l) in a.locs.iter().enumerate() {
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
                    if let Some(c) = search(a, base, next, budget) {
                        return Some(c);
                    }
                }
                return None;
            }
        }
    }
    None
}

/// A shortest cycle of `adj` (as its nodes with the edge to the next), if
/// it has one.
fn shortest_cycle(adj: &[Vec<(usize, Edge)>]) -> Option<Vec<(usize, Edge)>> {
    let n = adj.len();
    let on_cycle = nodes_on_cycles(adj);
    let mut best: Option<Vec<(usize, Edge)>> = None;
    let mut prev: Vec<Option<(usize, Edge)>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut queue = std::collections::VecDeque::new();
    for s in (0..n).filter(|&s| on_cycle[s]) {
        prev.iter_mut().for_each(|p| *p = None);
        seen.iter_mut().for_each(|x| *x = false);
        queue.clear();
        queue.push_back(s);
        seen[s] = true;
        let mut closing: Option<(usize, Edge)> = None;
        'bfs: while let Some(u) = queue.pop_front() {
            for &(v, k) in &adj[u] {
                if v == s {
                    closing = Some((u, k));
                    break 'bfs;
                }
                if !seen[v] && on_cycle[v] {
                    seen[v] = true;
                    prev[v] = Some((u, k));
                    queue.push_back(v);
                }
            }
        }
        let Some((last, k)) = closing else { continue };
        let mut path = vec![(last, k)];
        let mut v = last;
        while let Some((u, k)) = prev[v] {
            path.push((u, k));
            v = u;
        }
        path.reverse();
        if best.as_ref().is_none_or(|b| path.len() < b.len()) {
            best = Some(path);
        }
    }
    best
}

/// The nodes of `adj` that lie on some cycle (in a strongly connected
/// component with an edge inside it).
fn nodes_on_cycles(adj: &[Vec<(usize, Edge)>]) -> Vec<bool> {
    let n = adj.len();
    // Kosaraju: finishing order on adj, then components on the reverse.
    let mut order = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    for s in 0..n {
        if visited[s] {
            continue;
        }
        visited[s] = true;
        let mut stack = vec![(s, 0usize)];
        while let Some(&mut (u, ref mut i)) = stack.last_mut() {
            if let Some(&(v, _)) = adj[u].get(*i) {
                *i += 1;
                if !visited[v] {
                    visited[v] = true;
                    stack.push((v, 0));
                }
            } else {
                order.push(u);
                stack.pop();
            }
        }
    }
    let mut rev: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (u, out) in adj.iter().enumerate() {
        for &(v, _) in out {
            rev[v].push(u);
        }
    }
    let mut comp = vec![usize::MAX; n];
    let mut sizes = Vec::new();
    for &s in order.iter().rev() {
        if comp[s] != usize::MAX {
            continue;
        }
        let c = sizes.len();
        let mut size = 0;
        comp[s] = c;
        let mut stack = vec![s];
        while let Some(u) = stack.pop() {
            size += 1;
            for &v in &rev[u] {
                if comp[v] == usize::MAX {
                    comp[v] = c;
                    stack.push(v);
                }
            }
        }
        sizes.push(size);
    }
    (0..n)
        .map(|u| sizes[comp[u]] > 1 || adj[u].iter().any(|&(v, _)| v == u))
        .collect()
}

/// The cycle over events, each run of program-order steps one step (its
/// inner events dropped).
fn compress(a: &Analysis<'_>, cycle: &[(usize, Edge)]) -> ScCycle {
    let n = cycle.len();
    // Start after a non-po edge, so that no po run wraps around the start
    // (po alone is acyclic, so there is one).
    let start = (0..n)
        .find(|&i| cycle[i].1 != Edge::Po)
        .map_or(0, |i| (i + 1) % n);
    let mut steps = Vec::with_capacity(n);
    let mut k = 0;
    while k < n {
        let (d, e) = cycle[(start + k) % n];
        steps.push((a.id(d), e));
        k += 1;
        if e == Edge::Po {
            while k < n && cycle[(start + k) % n].1 == Edge::Po {
                k += 1;
            }
        }
    }
    ScCycle { steps }
}
