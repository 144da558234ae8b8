//! Reference counts: their updates commute, so one order is explored per
//! choice of the last decrement; the swaps that choice needs, and the
//! check that the program does not observe the order after all.

use super::*;

impl<D: Driver, V: Visitor> Explorer<'_, D, V> {
    /// Whether adding `action` to `g` would let the program observe the order
    /// of reference-count updates (see `commute`).
    pub(super) fn refcount_order_observable(
        &mut self,
        g: &ExecutionGraph,
        action: &Action,
    ) -> bool {
        let has_sc_fence =
            |g: &ExecutionGraph| g.events().any(|(_, e)| e.is_fence() && e.ord().is_sc());
        // Every event of every graph was asked about here before it was
        // added: where no action of a kind was ever asked about, no graph
        // has such an event, and the search for one is skipped.
        match *action {
            Action::Fence { ord } if ord.is_sc() => self.sc_fence_seen = true,
            Action::Rmw { op, .. } if op.is_refcount() => {}
            _ => {
                if let Some(loc) = action.loc() {
                    mark(&mut self.plain_locs, loc);
                }
            }
        }
        match *action {
            Action::Fence { ord } if ord.is_sc() => {
                let counts = |g: &ExecutionGraph| g.events().any(|(_, e)| e.is_refcount());
                debug_assert!(self.refcount_locs.contains(&true) || !counts(g));
                self.refcount_locs.contains(&true) && counts(g)
            }
            Action::Rmw { loc, op, .. } if op.is_refcount() => {
                mark(&mut self.refcount_locs, loc);
                let plain = |g: &ExecutionGraph| {
                    g.events()
                        .any(|(_, e)| e.loc() == Some(loc) && !e.is_refcount())
                };
                let plain_seen = self.plain_locs.get(loc.0 as usize) == Some(&true);
                debug_assert!(self.sc_fence_seen || !has_sc_fence(g));
                debug_assert!(plain_seen || !plain(g));
                (self.sc_fence_seen && has_sc_fence(g)) || (plain_seen && plain(g))
            }
            _ => action.loc().is_some_and(|loc| {
                self.refcount_locs.get(loc.0 as usize) == Some(&true)
                    && g.events()
                        .any(|(_, e)| e.loc() == Some(loc) && e.is_refcount())
            }),
        }
    }

    /// Reference-count decrement `d` released the last reference. Each earlier
    /// decrement `e` that `d` does not depend on could have been the last one
    /// instead: that execution moves `e` to the end of the count's
    /// modification order (it reads `d`), keeps the events added before `e`
    /// and `d`'s prefix (with every other update), and re-runs the rest. Updates between `e` and `d`
    /// only see their count shift, which they cannot observe, so this is the
    /// only reordering of updates explored: one execution per choice of the
    /// last decrement, not one per order.
    pub(super) fn calc_refcount_swaps(&mut self, g: &ExecutionGraph, d: EventId) {
        let model = self.config.model;
        let loc = g.loc_of(d).unwrap();
        let Some(chain) = g.rmw_chain(loc) else {
            return;
        };
        if chain.last() != Some(&d) {
            return;
        }
        // A value someone else reads must not shift: stop at the first update
        // (from the end) that is not a reference-count update or that a plain
        // read or CAS reads.
        let observed = |x: EventId| g.events().any(|(_, r)| r.rf == Some(x) && !r.is_refcount());
        // What `d` depends on in any order of the updates: an update in it
        // cannot be the last one, and needs no relinked copy to tell. Built
        // on first need: an update of a thread `d`'s thread joined before
        // `d` (the usual last drop, after the joins) is in it at once.
        let joined_before_d: SmallVec<[u32; 4]> = g.thread_events(d.thread)[..d.index as usize]
            .iter()
            .filter_map(|e| match e.action {
                Action::Join { child } => Some(child),
                _ => None,
            })
            .collect();
        let mut fixed: Option<View> = None;
        let counts = std::cell::OnceCell::new();
        for i in (1..chain.len() - 1).rev() {
            let e = chain[i];
            let ev = g.event(e);
            if !ev.is_refcount() || observed(e) {
                break;
            }
            if !matches!(
                ev.action,
                Action::Rmw {
                    op: RmwOp::RefDec,
                    ..
                }
            ) || !ev.revisitable
                || joined_before_d.contains(&e.thread)
                || fixed
                    .get_or_insert_with(|| g.porf_prefix_without_counts(d))
                    .contains(e)
            {
                continue;
            }
            // Every other update stays before `d`: its prefix is taken with the
            // chain relinked without `e`.
            let order: Vec<EventId> = chain.iter().copied().filter(|&x| x != e).collect();
            let mut relinked = g.clone();
            relinked.relink_chain(&order);
            let prefix = relinked.porf_prefix(d);
            if prefix.contains(e) {
                continue;
            }
            let keep = super::revisits::kept_by_revisit(g, e, &prefix);
            let counts = counts.get_or_init(|| CountChains::of(g, self.commute));
            if !self.maximal_extension(g, &keep, e, d, true, &|| false, counts) {
                continue;
            }
            let mut g2 = g.restrict(&keep);
            g2.relink_chain(&order);
            g2.set_rf(e, d);
            if g2.event(e).refcount_class() != Some(true)
                || g2.event(d).refcount_class() != Some(false)
                || !classes_kept(g, &g2, e)
                || repair_dangling_reads(&mut g2, e, model, &mut self.canonical).is_none()
            {
                continue;
            }
            // Only what `d` really depends on is settled; the other updates
            // were kept for their count alone.
            let settled = g2.porf_prefix_commuting(d);
            g2.settle(&settled);
            if !is_consistent(&g2, model) {
                continue;
            }
            self.stats.revisits += 1;
            let path = self.child_path();
            self.stack.push(Pending::Graph(Item {
                g: g2,
                written: Some(e),
                path,
                schedule: Vec::new(),
            }));
        }
    }
}

/// Sets `loc`'s flag in `flags` (indexed by location).
pub(super) fn mark(flags: &mut Vec<bool>, loc: c11check_model::Loc) {
    let i = loc.0 as usize;
    if flags.len() <= i {
        flags.resize(i + 1, false);
    }
    flags[i] = true;
}

/// The locations of a graph's reference counts, and the chains of those
/// whose updates form one (the others are plain RMWs by now). A revisit
/// check asks for them once per read it revisits, of the same graph.
pub(super) struct CountChains {
    pub(super) locs: SmallVec<[c11check_model::Loc; 4]>,
    pub(super) chains: Vec<RmwChain>,
}

impl CountChains {
    /// Those of `g`; none when updates do not commute.
    pub(super) fn of(g: &ExecutionGraph, commute: bool) -> Self {
        let locs = match commute {
            true => g.refcount_locs(),
            false => SmallVec::new(),
        };
        let chains = locs.iter().filter_map(|&l| g.rmw_chain(l)).collect();
        CountChains { locs, chains }
    }
}

/// Relinks the reference-count chains of `g2` (a restriction of `g`, where
/// updates may have been removed) in `g`'s order (`counts`, `g`'s chains):
/// whether a source changed, or `None` when that changes what an update
/// that something kept depends on told its thread (see [`classes_kept`]).
pub(super) fn relink_refcounts(
    g: &ExecutionGraph,
    counts: &CountChains,
    g2: &mut ExecutionGraph,
) -> Option<bool> {
    let mut changed = false;
    for chain in &counts.chains {
        changed |= g2.relink_chain(chain);
    }
    classes_kept(g, g2, EventId::init(c11check_model::Loc(0))).then_some(changed)
}

/// Whether every reference-count update of `g2` other than `moved` that is
/// not last in its thread tells its thread what it did in `g` (updates whose
/// class changes are re-run, like reads whose source was removed).
pub(super) fn classes_kept(g: &ExecutionGraph, g2: &ExecutionGraph, moved: EventId) -> bool {
    g2.events().all(|(id, e)| {
        id == moved
            || !e.is_refcount()
            || id.index + 1 == g2.thread_len(id.thread)
            || e.refcount_class() == g.event(id).refcount_class()
    })
}
