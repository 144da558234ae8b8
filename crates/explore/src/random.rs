//! The random explorer: one execution at a time, each built by choosing at
//! random which thread takes the next step and which write each read reads
//! (among the consistent ones). Every execution it produces is consistent;
//! it does not remember what it has visited, so an execution may come twice
//! and rare ones may be missed — the price of scaling to long programs.
//!
//! Iteration `i` of a run with seed `s` depends only on `(s, i)`, so a report
//! names the seed of the failing iteration and it can be run again alone.

use crate::{Config, Driver, Ending, Execution, Stats, Visitor};
use c11check_model::{is_consistent, Action, Analysis, EventId, ExecutionGraph};
use std::time::Instant;

/// A small, fast generator (SplitMix64); good enough for choosing steps.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The seed of iteration `i` of a run seeded with `seed`.
pub fn iteration_seed(seed: u64, i: u64) -> u64 {
    SplitMix64::new(seed ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

/// Runs `iterations` random executions (or until `config`'s budgets run out).
/// `on_iteration` is told the seed of each iteration before it starts.
pub fn explore<D: Driver, V: Visitor>(
    driver: &mut D,
    config: &Config,
    seed: u64,
    iterations: u64,
    on_iteration: &mut dyn FnMut(u64, u64),
    visitor: &mut V,
) -> Stats {
    let start = Instant::now();
    let mut stats = Stats::default();
    let mut last_progress = std::time::Duration::ZERO;
    for i in 0..iterations {
        let now = start.elapsed();
        if now - last_progress >= std::time::Duration::from_secs(1) {
            last_progress = now;
            stats.elapsed = now;
            visitor.progress(&stats);
        }
        let s = iteration_seed(seed, i);
        on_iteration(i, s);
        let mut rng = SplitMix64::new(s);
        let mut g = driver.initial_graph();
        driver.begin(&mut g);
        let ending = loop {
            match step(driver, config, &mut g, &mut rng) {
                Step::Continue => {}
                Step::Done(e) => break Some(e),
                Step::DeadEnd => break None,
            }
        };
        let Some(ending) = ending else {
            stats.dead_ends += 1;
            continue;
        };
        let Ok(analysis) = Analysis::new(&g, config.model) else {
            stats.dead_ends += 1;
            continue;
        };
        match ending {
            Ending::Complete => stats.executions += 1,
            _ => {
                stats.blocked += 1;
                if crate::cut_by_bound(&g) {
                    stats.bound_hits += 1;
                }
            }
        }
        // For observed locations, one of the writes that can end mo there.
        let mut finals = Vec::new();
        if ending == Ending::Complete && !config.observed.is_empty() {
            let mut combos = crate::final_combinations(&analysis, &config.observed);
            while !combos.is_empty() {
                let c = combos.swap_remove(rng.below(combos.len()));
                if analysis.find_mo(&c).is_some() {
                    finals = c;
                    break;
                }
            }
        }
        let exec = Execution {
            graph: &g,
            analysis: &analysis,
            finals: &finals,
            ending,
        };
        let keep_going = visitor.visit(&exec);
        let over_count = config
            .max_executions
            .is_some_and(|m| stats.executions + stats.blocked >= m);
        let over_time = config.time_budget.is_some_and(|b| start.elapsed() >= b);
        if !keep_going || over_count || over_time {
            stats.cut = i + 1 < iterations;
            break;
        }
    }
    stats.elapsed = start.elapsed();
    stats
}

enum Step {
    Continue,
    Done(Ending),
    DeadEnd,
}

fn step<D: Driver>(
    driver: &mut D,
    config: &Config,
    g: &mut ExecutionGraph,
    rng: &mut SplitMix64,
) -> Step {
    let enabled = match crate::runnable(driver, g, false) {
        Ok(steps) => steps,
        Err(ending) => return Step::Done(ending),
    };
    let (t, action) = enabled[rng.below(enabled.len())];
    if action.reads() {
        let loc = action.loc().expect("a read has a location");
        let mut writes = g.writes_to(loc);
        let id = g.push(t, action);
        // Try the sources in a random order; the first consistent one wins.
        while !writes.is_empty() {
            let w = writes.swap_remove(rng.below(writes.len()));
            g.set_rf(id, w);
            let weak_match = matches!(action, Action::Cas { weak: true, expected, .. } if expected == g.written_value(w));
            let spurious = weak_match
                && crate::exhaustive::may_fail_spuriously(g, id, loc, w)
                && rng.below(4) == 0;
            g.update_event(id, |e| e.spurious_fail = spurious);
            if is_consistent(g, config.model) {
                return Step::Continue;
            }
            g.update_event(id, |e| e.spurious_fail = false);
        }
        return Step::DeadEnd;
    }
    match action {
        Action::Spawn { .. } => {
            let id = g.push(t, action);
            let child = spawn_child(g, id);
            g.update_event(id, |e| e.action = Action::Spawn { child });
        }
        _ => {
            g.push(t, action);
        }
    }
    Step::Continue
}

/// The thread a spawn event starts (made if the graph has none yet).
pub(crate) fn spawn_child(g: &mut ExecutionGraph, spawn: EventId) -> u32 {
    (0..g.num_threads() as u32)
        .find(|&c| g.thread(c).parent == Some(spawn))
        .unwrap_or_else(|| g.add_thread(Some(spawn)))
}
