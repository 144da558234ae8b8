//! The exhaustive explorer: every consistent execution exactly once.
//!
//! Executions are identified by their events and reads-from edges (plus, for
//! observed locations, the write that ends modification order); modification
//! order itself is never enumerated, only constrained.
//!
//! The algorithm follows the execution-graph exploration of GenMC (TruSt):
//! threads are run one event at a time in a fixed order (the lowest enabled
//! thread), so the graph alone determines what is added next.
//!
//! * A read is added once per write it can consistently read from (a forward
//!   revisit). One of these choices is canonical: the latest-added write that
//!   could still be last in modification order. The event remembers whether it
//!   was added canonically (`added_max`).
//! * A write (or an RMW) may be read by reads added before it (a backward
//!   revisit): for such a read `r`, the graph is cut to the events added before
//!   `r` plus the porf-prefix of the write, and `r` reads from the write. The
//!   revisit is performed only if `r` and every removed event were added
//!   canonically and are not in the prefix of an earlier revisiting write. This
//!   maximality condition picks one representative among graphs that differ
//!   only in the removed part, so no execution is produced twice, while the
//!   removed part is re-explored from scratch afterwards.
//!
//! Memory is one graph per pending branch on a stack (polynomial in the
//! program); nothing is remembered about visited executions.

use crate::{Config, Driver, Ending, Execution, Stats, Visitor};
use c11check_model::{
    is_consistent, Action, Analysis, BlockReason, EventId, ExecutionGraph, Loc, View,
};
use std::time::Instant;

/// A pending branch: a graph to continue, and possibly a write whose backward
/// revisits have still to be computed.
struct Item {
    g: ExecutionGraph,
    written: Option<EventId>,
}

enum Pick {
    Run(u32, Action),
    Done(Ending),
}

struct Explorer<'a, D, V> {
    driver: &'a mut D,
    config: &'a Config,
    visitor: &'a mut V,
    stats: Stats,
    stack: Vec<Item>,
    start: Instant,
    stop: bool,
}

/// Explores every consistent execution of the program `driver` describes.
pub fn explore<D: Driver, V: Visitor>(driver: &mut D, config: &Config, visitor: &mut V) -> Stats {
    let start = Instant::now();
    let g = driver.initial_graph();
    let mut ex = Explorer {
        driver,
        config,
        visitor,
        stats: Stats::default(),
        stack: vec![Item { g, written: None }],
        start,
        stop: false,
    };
    while let Some(item) = ex.stack.pop() {
        ex.run(item.g, item.written);
        if ex.stop {
            ex.stats.cut = !ex.stack.is_empty();
            break;
        }
    }
    ex.stats.elapsed = start.elapsed();
    ex.stats
}

impl<D: Driver, V: Visitor> Explorer<'_, D, V> {
    fn run(&mut self, mut g: ExecutionGraph, written: Option<EventId>) {
        if let Some(w) = written {
            self.calc_revisits(&g, w);
        }
        loop {
            match self.pick(&g) {
                Pick::Done(ending) => {
                    self.finish(&g, ending);
                    return;
                }
                Pick::Run(t, action) => match action {
                    Action::Load { .. } | Action::Rmw { .. } | Action::Cas { .. } => {
                        match self.add_read(&mut g, t, action) {
                            Some(id) => {
                                if g.event(id).is_write() {
                                    self.calc_revisits(&g, id);
                                }
                            }
                            None => {
                                self.stats.dead_ends += 1;
                                return;
                            }
                        }
                    }
                    Action::Store { .. } => {
                        let id = g.push(t, action);
                        self.calc_revisits(&g, id);
                    }
                    Action::Spawn { .. } => {
                        let id = g.push(t, action);
                        let child = (0..g.num_threads() as u32)
                            .find(|&c| g.thread(c).parent == Some(id))
                            .unwrap_or_else(|| g.add_thread(Some(id)));
                        g.event_mut(id).action = Action::Spawn { child };
                    }
                    _ => {
                        g.push(t, action);
                    }
                },
            }
        }
    }

    /// The lowest thread that can take a step, and its action.
    fn pick(&mut self, g: &ExecutionGraph) -> Pick {
        let mut waiting = false;
        let mut blocked = false;
        for t in 0..g.num_threads() as u32 {
            if !g.is_started(t) || g.is_finished(t) {
                continue;
            }
            if g.is_blocked(t) {
                blocked = true;
                continue;
            }
            let action = self.driver.next_action(g, t);
            if let Action::Join { child } = action {
                if !g.is_finished(child) {
                    waiting = true;
                    continue;
                }
            }
            return Pick::Run(t, action);
        }
        Pick::Done(if blocked {
            Ending::Blocked
        } else if waiting {
            Ending::Deadlock
        } else {
            Ending::Complete
        })
    }

    /// Adds a read of thread `t`, branching over every consistent source; continues
    /// with the canonical one. Returns `None` when no source is consistent.
    fn add_read(&mut self, g: &mut ExecutionGraph, t: u32, action: Action) -> Option<EventId> {
        let loc = action.loc().unwrap();
        let model = self.config.model;
        let tails = Analysis::new(g, model)
            .map(|a| a.mo_max_candidates(loc))
            .unwrap_or_default();
        let writes = g.writes_to(loc);
        let id = g.push(t, action);
        let weak_expected = match action {
            Action::Cas {
                weak: true,
                expected,
                ..
            } => Some(expected),
            _ => None,
        };
        let mut options: Vec<(ExecutionGraph, EventId, bool)> = Vec::new();
        for &w in &writes {
            let spurious: &[bool] = if weak_expected == Some(g.written_value(w)) {
                &[false, true]
            } else {
                &[false]
            };
            for &sp in spurious {
                let mut g2 = g.clone();
                g2.set_rf(id, w);
                g2.event_mut(id).spurious_fail = sp;
                if is_consistent(&g2, model) {
                    options.push((g2, w, sp));
                } else if g2.event(id).is_rmw()
                    && steals_from_unsettled_rmw(&g2, id, w)
                    && Analysis::new_tolerating_atomicity(&g2, model).is_ok()
                {
                    // The RMW reads a write another, still revisitable RMW read:
                    // this graph is dropped, but its backward revisits (which make
                    // that RMW read from this one) are executions to explore.
                    g2.event_mut(id).added_max = false;
                    self.calc_revisits_with(&g2, id, true);
                }
            }
        }
        let canonical = options
            .iter()
            .enumerate()
            .filter(|(_, (_, w, sp))| !sp && tails.contains(w))
            .max_by_key(|(_, (g2, w, _))| g2.stamp(*w))
            .map(|(i, _)| i)?;
        let (chosen, _, _) = options.swap_remove(canonical);
        for (mut g2, _, _) in options {
            g2.event_mut(id).added_max = false;
            let written = g2.event(id).is_write().then_some(id);
            self.stack.push(Item { g: g2, written });
        }
        *g = chosen;
        g.event_mut(id).added_max = true;
        Some(id)
    }

    /// Pushes every allowed backward revisit of the reads added before write `w`.
    fn calc_revisits(&mut self, g: &ExecutionGraph, w: EventId) {
        self.calc_revisits_with(g, w, false);
    }

    /// Like [`Self::calc_revisits`]; `stealing` says `g` is an intermediate graph
    /// where RMW `w` reads the source of another, still revisitable RMW.
    fn calc_revisits_with(&mut self, g: &ExecutionGraph, w: EventId, stealing: bool) {
        let model = self.config.model;
        let loc = g.loc_of(w).unwrap();
        let prefix = g.porf_prefix(w);
        let reads: Vec<EventId> = g
            .events()
            .filter(|(id, e)| {
                *id != w
                    && e.loc() == Some(loc)
                    && e.is_read()
                    && e.revisitable
                    && !prefix.contains(*id)
            })
            .map(|(id, _)| id)
            .collect();
        let analysis = if stealing {
            Analysis::new_tolerating_atomicity(g, model)
        } else {
            Analysis::new(g, model)
        };
        let Ok(analysis) = analysis else {
            debug_assert!(false, "revisits computed on an inconsistent graph");
            return;
        };
        for r in reads {
            let rstamp = g.event(r).stamp;
            let mut keep = View(
                (0..g.num_threads() as u32)
                    .map(|t| {
                        g.thread_events(t)
                            .iter()
                            .take_while(|e| e.stamp < rstamp)
                            .count() as u32
                    })
                    .collect(),
            );
            keep.include(r);
            for (t, &n) in prefix.0.iter().enumerate() {
                keep.0[t] = keep.0[t].max(n);
            }
            let maximal = g
                .events()
                .filter(|(id, _)| *id == r || !keep.contains(*id))
                .all(|(_, e)| {
                    e.revisitable
                        && e.added_max
                        && !(e.is_read()
                            && reads_non_maximally(&analysis, e.rf.unwrap(), &keep, r, w))
                });
            if !maximal {
                continue;
            }
            let base = g.restrict(&keep);
            let spurious: &[bool] = match g.event(r).action {
                Action::Cas {
                    weak: true,
                    expected,
                    ..
                } if expected == g.written_value(w) => &[false, true],
                _ => &[false],
            };
            for &sp in spurious {
                let mut g2 = base.clone();
                g2.set_rf(r, w);
                g2.event_mut(r).spurious_fail = sp;
                if !repair_dangling_reads(&mut g2, r, model) {
                    continue;
                }
                for (id, _) in g.events() {
                    if prefix.contains(id) {
                        g2.event_mut(id).revisitable = false;
                    }
                }
                let added_max = match Analysis::new(&g2, model) {
                    Ok(a) if a.is_consistent() => {
                        let tails = a.mo_max_candidates(loc);
                        !sp && (tails.contains(&w) || (g2.event(r).is_rmw() && tails.contains(&r)))
                    }
                    _ => continue,
                };
                g2.event_mut(r).added_max = added_max;
                self.stats.revisits += 1;
                let written = g2.event(r).is_write().then_some(r);
                self.stack.push(Item { g: g2, written });
            }
        }
    }

    fn finish(&mut self, g: &ExecutionGraph, ending: Ending) {
        let a = match Analysis::new(g, self.config.model) {
            Ok(a) => a,
            Err(_) => {
                self.stats.dead_ends += 1;
                return;
            }
        };
        let mut keep_going = true;
        if ending == Ending::Complete {
            let combos = final_combinations(&a, &self.config.observed);
            for finals in combos {
                if a.find_mo(&finals).is_none() {
                    continue;
                }
                self.stats.executions += 1;
                let exec = Execution {
                    graph: g,
                    analysis: &a,
                    finals: &finals,
                    ending,
                };
                keep_going &= self.visitor.visit(&exec);
            }
        } else {
            self.stats.blocked += 1;
            let bound = (0..g.num_threads() as u32).any(|t| {
                matches!(
                    g.last_event(t).map(|e| e.action),
                    Some(Action::Block {
                        reason: BlockReason::Bound
                    })
                )
            });
            if bound {
                self.stats.bound_hits += 1;
            }
            let exec = Execution {
                graph: g,
                analysis: &a,
                finals: &[],
                ending,
            };
            keep_going &= self.visitor.visit(&exec);
        }
        let over_count = self
            .config
            .max_executions
            .is_some_and(|m| self.stats.executions + self.stats.blocked >= m);
        let over_time = self
            .config
            .time_budget
            .is_some_and(|b| self.start.elapsed() >= b);
        if !keep_going || over_count || over_time {
            self.stop = true;
        }
    }
}

/// Every combination of possible mo-last writes at the observed locations.
fn final_combinations(a: &Analysis<'_>, observed: &[Loc]) -> Vec<Vec<(Loc, EventId)>> {
    let mut combos: Vec<Vec<(Loc, EventId)>> = vec![Vec::new()];
    for &loc in observed {
        if loc.0 as usize >= a.g.num_locs() {
            continue;
        }
        let cands = a.mo_max_candidates(loc);
        combos = combos
            .into_iter()
            .flat_map(|c| {
                cands.iter().map(move |&w| {
                    let mut c2 = c.clone();
                    c2.push((loc, w));
                    c2
                })
            })
            .collect();
    }
    combos
}

/// Gives every read whose source was removed by a revisit (other than `r`) its
/// canonical source again. Such reads are always last in their thread.
fn repair_dangling_reads(g: &mut ExecutionGraph, r: EventId, model: c11check_model::Model) -> bool {
    let mut dangling: Vec<(u32, c11check_model::Event)> = Vec::new();
    for t in 0..g.num_threads() as u32 {
        let len = g.thread_len(t);
        if len == 0 || (t == r.thread && len - 1 == r.index) {
            continue;
        }
        let last = g.event(EventId::new(t, len - 1));
        if let Some(w) = last.rf {
            if !g.contains(w) {
                dangling.push((t, last.clone()));
            }
        }
    }
    if dangling.is_empty() {
        return true;
    }
    for (t, _) in &dangling {
        let len = g.thread_len(*t);
        g.truncate_thread(*t, len - 1);
    }
    dangling.sort_by_key(|(_, e)| e.stamp);
    for (t, mut e) in dangling {
        let loc = e.loc().unwrap();
        let tails = match Analysis::new(g, model) {
            Ok(a) => a.mo_max_candidates(loc),
            Err(_) => return false,
        };
        let mut tails_by_stamp: Vec<EventId> = tails;
        tails_by_stamp.sort_by_key(|&w| std::cmp::Reverse(g.stamp(w)));
        e.rf = None;
        e.spurious_fail = false;
        e.added_max = true;
        let id = g.push_event(t, e);
        let mut found = false;
        for w in tails_by_stamp {
            g.set_rf(id, w);
            if is_consistent(g, model) {
                found = true;
                break;
            }
        }
        if !found {
            return false;
        }
    }
    true
}

/// Whether a read from `src` is not the canonical ("maximal") choice with
/// respect to the saved part of a revisit (the kept events other than the
/// revisited read `r` and the revisiting write `w`): either `src` is forced
/// before a saved write, or another saved write that could also be last in
/// modification order was added later. Exactly one of the graphs that differ
/// only in the removed part reads maximally everywhere, so only that one
/// performs the revisit.
fn reads_non_maximally(
    a: &Analysis<'_>,
    src: EventId,
    keep: &View,
    r: EventId,
    w: EventId,
) -> bool {
    let Some(loc) = a.g.loc_of(src) else {
        return false;
    };
    let lm = &a.locs[loc.0 as usize];
    let Some(si) = lm.writes.iter().position(|&x| x == src) else {
        return false;
    };
    let saved: Vec<usize> = lm
        .writes
        .iter()
        .enumerate()
        .filter(|&(xi, &x)| xi == si || (x != w && x != r && (x.is_init() || keep.contains(x))))
        .map(|(xi, _)| xi)
        .collect();
    let maximal = |xi: usize| saved.iter().all(|&yi| yi == xi || !lm.mo(xi, yi));
    if !maximal(si) {
        return true;
    }
    let stamp = |xi: usize| a.g.stamp(lm.writes[xi]);
    saved
        .iter()
        .any(|&yi| yi != si && maximal(yi) && stamp(yi) > stamp(si))
}

/// Whether RMW `e` reading `w` conflicts only with another RMW that read `w` and
/// may still be revisited (it is revisitable and not in `e`'s prefix).
fn steals_from_unsettled_rmw(g: &ExecutionGraph, e: EventId, w: EventId) -> bool {
    let prefix = g.porf_prefix(e);
    g.events().any(|(id, x)| {
        id != e && x.rf == Some(w) && x.is_rmw() && x.revisitable && !prefix.contains(id)
    })
}
