//! The random explorer: one execution at a time, each built by choosing at
//! random which thread takes the next step and which write each read reads
//! (among the consistent ones). Every execution it produces is consistent;
//! it does not remember what it has visited, so an execution may come twice
//! and rare ones may be missed — the price of scaling to long programs.
//!
//! Iteration `i` of a run with seed `s` depends only on `(s, i)`, so a report
//! names the seed of the failing iteration and it can be run again alone.

use crate::{Config, Driver, Ending, Execution, Shard, Stats, Visitor};
use c11check_model::{is_consistent, Action, Analysis, ExecutionGraph};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
    explore_range(
        driver,
        config,
        seed,
        0..iterations,
        start,
        on_iteration,
        visitor,
    )
}

/// [`explore`] over the iterations `range` of a run that started at
/// `start` (a chunk of a parallel run, see [`deal`]).
pub fn explore_range<D: Driver, V: Visitor>(
    driver: &mut D,
    config: &Config,
    seed: u64,
    range: Range<u64>,
    start: Instant,
    on_iteration: &mut dyn FnMut(u64, u64),
    visitor: &mut V,
) -> Stats {
    let chunk_start = Instant::now();
    let mut stats = Stats::default();
    let mut last_progress = std::time::Duration::ZERO;
    let end = range.end;
    for i in range {
        let now = chunk_start.elapsed();
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
                if crate::step::cut_by_bound(&g) {
                    stats.bound_hits += 1;
                }
            }
        }
        // For observed locations, one of the writes that can end mo there.
        let mut finals = Vec::new();
        if ending == Ending::Complete && !config.observed.is_empty() {
            let mut combos = crate::step::final_combinations(&analysis, &config.observed);
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
            stats.cut = i + 1 < end;
            break;
        }
    }
    stats.elapsed = start.elapsed();
    stats
}

/// Random runs deal their iterations to workers (and shards) in chunks of
/// this many consecutive ones. (Live runs' PCT also learns the length of
/// executions anew in each chunk, so that no iteration depends on another
/// chunk's.)
pub const CHUNK: u64 = 16;

/// The iterations of chunk `k` of a run of `iterations`.
pub fn chunk_range(k: u64, iterations: u64) -> Range<u64> {
    k.saturating_mul(CHUNK).min(iterations)
        ..(k.saturating_add(1)).saturating_mul(CHUNK).min(iterations)
}

/// Whether `shard` (all of them when `None`) owns chunk `k`: chunks are
/// dealt round-robin, so every shard gets iterations from the whole run.
pub fn shard_owns_chunk(shard: Option<Shard>, k: u64) -> bool {
    shard.is_none_or(|s| k % u64::from(s.count) == u64::from(s.index))
}

/// Runs one chunk of iterations on a worker: its result, and whether the
/// run stops there (see [`deal`]).
pub type RunChunk<'a, W, R> = dyn Fn(&mut W, Range<u64>) -> (R, bool) + Sync + 'a;

/// Runs the iterations `0..iterations` (with `shard`, its chunks only) on
/// `jobs` worker threads, a chunk ([`CHUNK`] consecutive iterations) at a
/// time. `run_chunk` runs one chunk on a worker (made by `make_worker`,
/// numbered from 0) and says whether the run stops there (a bug, a spent
/// budget). `merge` gets the chunks' results on the calling thread in
/// iteration order, up to and including the first that stops or that
/// `merge` answers `false` to; `tick` is called there about once a second.
/// Whatever the timing, `merge` sees what one worker running the chunks in
/// order would produce: chunks run past the stop are dropped. With one job
/// everything runs on the calling thread.
#[allow(clippy::too_many_arguments)]
pub fn deal<W, R: Send>(
    jobs: usize,
    iterations: u64,
    shard: Option<Shard>,
    make_worker: &(dyn Fn(usize) -> W + Sync),
    run_chunk: &RunChunk<'_, W, R>,
    merge: &mut dyn FnMut(R) -> bool,
    tick: &mut dyn FnMut(),
) {
    let chunks = iterations.div_ceil(CHUNK);
    let owned = move |j: u64| match shard {
        None => j,
        Some(s) => j * u64::from(s.count) + u64::from(s.index),
    };
    if jobs <= 1 {
        let mut worker = make_worker(0);
        let mut last = Instant::now();
        for k in (0..).map(owned).take_while(|&k| k < chunks) {
            let (r, stop) = run_chunk(&mut worker, chunk_range(k, iterations));
            if !merge(r) || stop {
                return;
            }
            if last.elapsed() >= Duration::from_secs(1) {
                last = Instant::now();
                tick();
            }
        }
        return;
    }
    let next = AtomicU64::new(0);
    let stop_at = AtomicU64::new(u64::MAX);
    let (send, receive) = mpsc::channel::<(u64, R, bool)>();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|w| {
                let (next, stop_at, send) = (&next, &stop_at, send.clone());
                scope.spawn(move || {
                    let mut worker = make_worker(w);
                    loop {
                        let k = owned(next.fetch_add(1, SeqCst));
                        if k >= chunks || k > stop_at.load(SeqCst) {
                            break;
                        }
                        let (r, stop) = run_chunk(&mut worker, chunk_range(k, iterations));
                        if stop {
                            stop_at.fetch_min(k, SeqCst);
                        }
                        if send.send((k, r, stop)).is_err() {
                            break;
                        }
                    }
                })
            })
            .collect();
        drop(send);
        // Results wait here until every chunk before theirs is merged.
        let mut waiting: BTreeMap<u64, (R, bool)> = BTreeMap::new();
        let mut expected = (0..).map(owned);
        let mut want = expected.next().unwrap_or(u64::MAX);
        let mut stopped = false;
        let mut last = Instant::now();
        loop {
            match receive.recv_timeout(Duration::from_millis(200)) {
                Ok((k, r, stop)) => {
                    if !stopped {
                        waiting.insert(k, (r, stop));
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            while let Some((r, stop)) = waiting.remove(&want) {
                if !merge(r) || stop {
                    stopped = true;
                    stop_at.fetch_min(want, SeqCst);
                    waiting.clear();
                    break;
                }
                want = expected.next().unwrap_or(u64::MAX);
            }
            if last.elapsed() >= Duration::from_secs(1) {
                last = Instant::now();
                tick();
            }
        }
        for w in workers {
            if let Err(p) = w.join() {
                std::panic::resume_unwind(p);
            }
        }
    });
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
    let enabled = match crate::step::runnable(driver, g, false) {
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
            let spurious =
                weak_match && crate::step::may_fail_spuriously(g, id, loc, w) && rng.below(4) == 0;
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
            let child = crate::step::spawn_child(g, id);
            g.update_event(id, |e| e.action = Action::Spawn { child });
        }
        _ => {
            g.push(t, action);
        }
    }
    Step::Continue
}
