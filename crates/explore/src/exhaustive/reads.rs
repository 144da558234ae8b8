//! A new read: the writes it may read from, each checked as the graph
//! extended by it, and the branches for the ones not taken now.

use super::*;

impl<D: Driver, V: Visitor> Explorer<'_, D, V> {
    /// Adds a read of thread `t`, branching over every consistent source; continues
    /// with one of them. Returns `None` when no source is consistent.
    pub(super) fn add_read(
        &mut self,
        g: &mut ExecutionGraph,
        t: u32,
        action: Action,
    ) -> Option<EventId> {
        let loc = action.loc().unwrap();
        let model = self.config.model;
        // Whether the read (a successful RMW) writes, given the source.
        let writes_when =
            |g: &ExecutionGraph, w: EventId, sp: bool| read_writes(&action, g.written_value(w), sp);
        let weak_expected = match action {
            Action::Cas {
                weak: true,
                expected,
                ..
            } => Some(expected),
            _ => None,
        };
        let id = EventId::new(t, g.thread_len(t));
        // Whether the read fails spuriously, as far as it may.
        let spurious = |g: &ExecutionGraph, w: EventId| -> &'static [bool] {
            if weak_expected == Some(g.written_value(w))
                && crate::step::may_fail_spuriously(g, id, loc, w)
            {
                &[false, true]
            } else {
                &[false]
            }
        };
        let is_rmw = matches!(action, Action::Rmw { .. } | Action::Cas { .. });
        // Each source (with whether the read fails spuriously) is judged from
        // one analysis of the graph before the read, the full check being
        // needed only where the seq_cst axiom could change: the verdict for
        // how the access ends with it, and, for an RMW that could steal
        // another's source, the verdict when it writes but is not held to
        // atomicity (then it is a read with its success order, and a write
        // nothing is forced after). Sources ruled out both ways are not
        // tried at all.
        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.clear();
        match LocationCoherence::new(g, model, loc) {
            Err(_) => candidates.extend(g.writes_to(loc).into_iter().flat_map(|w| {
                spurious(g, w)
                    .iter()
                    .map(move |&sp| (w, sp, ExtensionVerdict::Unknown, None))
            })),
            Ok(base) => {
                let judge = |w: WriteRef, ord_of_write: bool, wr: bool| {
                    let ord = read_order(&action, ord_of_write);
                    base.read_extension_verdict(t, ord, wr, loc, w)
                };
                let mut writes = std::mem::take(&mut self.writes);
                base.writes_into(&mut writes);
                for &wref in &writes {
                    let w = wref.id;
                    for &sp in spurious(g, w) {
                        let wr = writes_when(g, w, sp);
                        let verdict = judge(wref, wr, wr);
                        let loose = (is_rmw && wr && verdict != ExtensionVerdict::Consistent)
                            .then(|| judge(wref, true, false).known())
                            .flatten();
                        let ruled_out = verdict == ExtensionVerdict::Inconsistent
                            && (!is_rmw || !wr || loose == Some(false));
                        if !ruled_out {
                            candidates.push((w, sp, verdict, loose));
                        }
                    }
                }
                self.writes = writes;
            }
        }
        let id = g.push(t, action);
        // The consistent sources (with whether the read fails spuriously):
        // each but the last continues in a copy of the graph, the last in
        // the graph itself.
        let mut options = std::mem::take(&mut self.options);
        options.clear();
        // A lock acquisition that finds the lock held only waits: when it
        // can take the lock instead (it is scheduled while the lock is free,
        // see `runnable`), waiting is not explored. So its sources that take
        // the lock are judged first, and the others only if none can.
        let lock = matches!(action, Action::Cas { lock: true, .. });
        for taking in [true, false] {
            if !taking && (!lock || !options.is_empty()) {
                break;
            }
            for &(w, sp, verdict, loose) in &candidates {
                if lock && writes_when(g, w, sp) != taking {
                    continue;
                }
                // Try the source in place (a source judged good needs no graph,
                // but for the debug builds' full check); copy the graph only to
                // keep it.
                if verdict != ExtensionVerdict::Consistent || cfg!(debug_assertions) {
                    g.set_rf(id, w);
                    g.update_event(id, |e| e.spurious_fail = sp);
                }
                if judged_in_full(g, model, verdict) {
                    options.push((w, sp));
                } else if g.event(id).is_rmw()
                    && steals_from_unsettled_rmw(g, id, w, self.commute)
                    && {
                        let full = || Analysis::new_with_loose_rmw(g, model, id).is_ok();
                        debug_assert!(
                            loose.is_none_or(|v| v == full()),
                            "quick loose-RMW check disagrees with the full one"
                        );
                        loose.unwrap_or_else(full)
                    }
                {
                    // The RMW reads a write another, still revisitable RMW read:
                    // this graph is dropped, but its backward revisits (which make
                    // that RMW read from this one) are executions to explore.
                    self.calc_revisits_with(g, id, true);
                }
            }
        }
        self.candidates = candidates;
        let Some((&chosen, others)) = options.split_last() else {
            self.options = options;
            return None;
        };
        let sources: Vec<_> = others
            .iter()
            .map(|&(w, sp)| (w, sp, self.child_path()))
            .collect();
        if !sources.is_empty() {
            let schedule = self.schedule_kept(&[]);
            self.stack.push(Pending::Sources {
                base: Rc::new(g.clone()),
                read: id,
                sources,
                schedule,
            });
        }
        g.set_rf(id, chosen.0);
        g.update_event(id, |e| e.spurious_fail = chosen.1);
        self.options = options;
        Some(id)
    }
}

/// A source a new read may take: the write, whether the read fails
/// spuriously, and the quick verdicts for how the access ends with it and,
/// for an RMW, for writing without being held to atomicity (see `add_read`).
pub(super) type Candidate = (EventId, bool, ExtensionVerdict, Option<bool>);

/// Whether `action`, a read, also writes when it reads `value`: an RMW, or a
/// compare-exchange that finds its expected value (and does not fail
/// spuriously).
pub(super) fn read_writes(action: &Action, value: c11check_model::Value, spurious: bool) -> bool {
    match *action {
        Action::Rmw { .. } => true,
        Action::Cas { .. } => !spurious && action.cas_succeeds(value) == Some(true),
        _ => false,
    }
}

/// Whether a graph extended by one access is consistent, given what the
/// quick check at the access's location found (debug builds compare every
/// verdict with the full check).
pub(super) fn judged_in_full(g: &ExecutionGraph, model: Model, verdict: ExtensionVerdict) -> bool {
    let consistent = match verdict {
        ExtensionVerdict::Consistent => true,
        ExtensionVerdict::Inconsistent => false,
        ExtensionVerdict::Coherent => is_sc_consistent_given_coherence(g, model),
        ExtensionVerdict::Unknown => return is_consistent(g, model),
    };
    debug_assert_eq!(
        consistent,
        is_consistent(g, model),
        "the quick check of an access ({verdict:?}) disagrees with the full one"
    );
    consistent
}

/// The order `action`, a read, reads with: a compare-exchange's failure
/// order when it does not write.
#[inline]
pub(super) fn read_order(action: &Action, writes: bool) -> c11check_model::MemOrder {
    match *action {
        Action::Cas {
            success, failure, ..
        } => {
            if writes {
                success
            } else {
                failure
            }
        }
        Action::Load { ord, .. } | Action::Rmw { ord, .. } => ord,
        _ => unreachable!("a read"),
    }
}

/// Whether RMW `e` reading `w` conflicts only with another RMW that read `w` and
/// may still be revisited (it is revisitable and not in `e`'s prefix).
/// Reference-count updates never take each other's place (their order is not
/// explored).
pub(super) fn steals_from_unsettled_rmw(
    g: &ExecutionGraph,
    e: EventId,
    w: EventId,
    commute: bool,
) -> bool {
    let refcount = commute && g.event(e).is_refcount();
    let mut rivals = g.events().filter(|&(id, x)| {
        id != e && x.rf == Some(w) && x.is_rmw() && !(refcount && x.is_refcount()) && x.revisitable
    });
    let Some((first, _)) = rivals.next() else {
        return false;
    };
    let prefix = if commute {
        g.porf_prefix_commuting(e)
    } else {
        g.porf_prefix(e)
    };
    !prefix.contains(first) || rivals.any(|(id, _)| !prefix.contains(id))
}
