//! Running a closure under an explorer and judging each execution.

use crate::config::{RunConfig, Strategy, Summary};
use crate::driver::{ExecutionState, FiberDriver};
use crate::judge::{judge, report_of};
use crate::report::{decode_replay, Failure, FailureKind, Report};
use c11check_explore::{exhaustive, Config, Driver, Ending, Execution, Stats};
use c11check_model::{Action, Analysis, EventId, Model};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Explores every execution of `main` (or replays one) and returns the first
/// bug found, as a report.
pub fn run(main: Arc<dyn Fn() + Send + Sync>, cfg: &RunConfig) -> Result<Summary, Box<Report>> {
    crate::shared::refuse_nested_model();
    crate::settings::warn_unknown();
    // A model the live memory cannot run would take its random runs as
    // execution graphs; so does robustness under a hardware model (the
    // location clocks judge weak steps by C++20's rules).
    let graph_cfg;
    let graphs_only = !cfg.model.has_live_memory() || (cfg.robustness && cfg.model.is_hardware());
    let cfg = match cfg.strategy {
        Strategy::Live { iterations, seed } if graphs_only => {
            graph_cfg = RunConfig {
                strategy: Strategy::Random { iterations, seed },
                ..cfg.clone()
            };
            &graph_cfg
        }
        _ => cfg,
    };
    let live_replay = cfg.replay.as_deref().is_some_and(|r| r.starts_with("l1:"));
    match cfg.strategy {
        Strategy::Live { iterations, seed } => {
            return crate::live_run::run_live(main, cfg, iterations, seed)
        }
        _ if live_replay => return crate::live_run::run_live(main, cfg, 1, 0),
        _ => {}
    }
    let _watchdog = crate::watchdog::watch();
    if cfg.jobs > 1
        && cfg.strategy == Strategy::Exhaustive
        && cfg.replay.is_none()
        && cfg.shard.is_none()
    {
        return run_parallel(main, cfg);
    }
    if let Strategy::Random { iterations, seed } = cfg.strategy {
        if (cfg.jobs > 1 || cfg.shard.is_some()) && cfg.replay.is_none() {
            return run_random_parallel(main, cfg, iterations, seed);
        }
    }
    let mut driver = new_driver(&main, cfg);
    driver.enter();
    let state = driver.state();
    let mut found: Option<Box<Report>> = None;
    let iteration = std::cell::Cell::new(None::<(u64, u64)>);
    let mut count = 0u64;
    let visitor = |ex: &Execution<'_>| -> bool {
        count += 1;
        match judge(ex, &state) {
            Some(failure) => {
                let mut r = report_of(ex, failure, &state, count);
                r.random_iteration = iteration.get();
                found = Some(Box::new(r));
                false
            }
            None => true,
        }
    };
    let mut visitor = ProgressVisitor::new(visitor, cfg);
    let result = match &cfg.replay {
        Some(s) => replay(&mut driver, s, cfg.model, &mut visitor.judge).map(Summary::of_graphs),
        None => {
            let config = explorer_config(cfg);
            let stats = match cfg.strategy {
                Strategy::Exhaustive => exhaustive::explore(&mut driver, &config, &mut visitor),
                Strategy::Live { .. } => unreachable!("handled above"),
                Strategy::Random { iterations, seed } => c11check_explore::random::explore(
                    &mut driver,
                    &config,
                    seed,
                    iterations,
                    &mut |i, s| iteration.set(Some((i, s))),
                    &mut visitor,
                ),
            };
            Ok(Summary::of_graphs(stats))
        }
    };
    drop(visitor);
    let candidates = crate::robust::take_candidates();
    driver.leave();
    finish_run(&main, cfg, found, candidates, result)
}

/// The explorer's configuration for a run of `cfg`.
fn explorer_config(cfg: &RunConfig) -> Config {
    Config {
        model: cfg.model,
        observed: Vec::new(),
        max_executions: cfg.max_executions,
        time_budget: cfg.time_budget,
        commute_refcounts: true,
        preemption_bound: cfg.preemption_bound,
        shard: cfg.shard,
    }
}

/// A driver for `main` set up as `cfg` asks (not yet entered).
fn new_driver(main: &Arc<dyn Fn() + Send + Sync>, cfg: &RunConfig) -> FiberDriver {
    let driver = FiberDriver::new(main.clone(), cfg.runtime.clone());
    {
        let mut s = driver.shared.borrow_mut();
        s.strong_cas = !cfg.spurious_failures;
        s.ignore_races = !cfg.report_races;
        s.ignore_livelocks = !cfg.report_livelocks;
        s.ignore_deadlocks = !cfg.report_deadlocks;
        s.check_robustness = cfg.robustness;
        if !cfg.strengthen.is_empty() {
            crate::protocol::STRENGTHENING.store(true, std::sync::atomic::Ordering::Relaxed);
            s.strengthen = cfg.strengthen.clone();
        }
    }
    driver
}

/// The driver of one worker of a parallel run: entered on the worker's
/// thread when made, left when dropped there.
struct WorkerDriver(FiberDriver);

impl c11check_explore::Driver for WorkerDriver {
    fn initial_graph(&mut self) -> c11check_model::ExecutionGraph {
        self.0.initial_graph()
    }
    fn next_action(
        &mut self,
        g: &mut c11check_model::ExecutionGraph,
        t: u32,
    ) -> c11check_model::Action {
        self.0.next_action(g, t)
    }
    fn begin(&mut self, g: &mut c11check_model::ExecutionGraph) {
        self.0.begin(g)
    }
}

impl Drop for WorkerDriver {
    fn drop(&mut self) {
        self.0.leave();
        crate::cell::set_worker(None);
    }
}

/// One worker's visitor: the bug it found, if any, and progress lines
/// (worker 0's, with every worker's counts).
struct WorkerVisitor {
    state: ExecutionState,
    found: Option<Box<Report>>,
    count: u64,
    progress: ProgressVisitor<fn(&Execution<'_>) -> bool>,
}

impl c11check_explore::Visitor for WorkerVisitor {
    fn visit(&mut self, ex: &Execution<'_>) -> bool {
        self.count += 1;
        let Some(failure) = judge(ex, &self.state) else {
            return true;
        };
        self.found = Some(Box::new(report_of(ex, failure, &self.state, self.count)));
        false
    }
    fn progress(&mut self, stats: &Stats) {
        self.progress.progress(stats);
    }
}

/// [`run`]'s exhaustive exploration on `cfg.jobs` worker threads, each
/// with its own fiber runtime. When workers find bugs, the report kept is
/// the one whose replay string is first in text order (which one is found
/// first depends on timing; each replays on one worker). Its execution
/// number counts that worker's executions only.
fn run_parallel(
    main: Arc<dyn Fn() + Send + Sync>,
    cfg: &RunConfig,
) -> Result<Summary, Box<Report>> {
    let jobs = cfg.jobs.min(crate::MAX_JOBS as usize);
    let config = explorer_config(cfg);
    let next_worker = std::sync::atomic::AtomicU32::new(0);
    let make = || {
        crate::cell::set_worker(Some(
            next_worker.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        ));
        let driver = new_driver(&main, cfg);
        driver.enter();
        let visitor = WorkerVisitor {
            state: driver.state(),
            found: None,
            count: 0,
            progress: ProgressVisitor::new((|_| true) as fn(&Execution<'_>) -> bool, cfg),
        };
        (WorkerDriver(driver), visitor)
    };
    let finish = |v: WorkerVisitor| (v.found, crate::robust::take_candidates());
    let (stats, results) = exhaustive::explore_parallel(jobs, &config, &make, &finish);
    let (found, candidates) = results
        .into_iter()
        .filter(|(found, _)| found.is_some())
        .min_by(|a, b| {
            a.0.as_ref()
                .map(|r| &r.replay)
                .cmp(&b.0.as_ref().map(|r| &r.replay))
        })
        .unwrap_or_default();
    let summary = Summary::of_graphs(stats);
    finish_run(&main, cfg, found, candidates, Ok(summary))
}

/// What a chunk of a parallel random run found: its counts, the
/// executions it visited, and its first bug with the robustness candidates
/// of that execution.
type ChunkFound = (
    Stats,
    u64,
    Option<Box<Report>>,
    Vec<(crate::Site, crate::Strengthen)>,
);

/// [`run`]'s random run on `cfg.jobs` worker threads (each with its own
/// fiber runtime), or one shard's chunks of the iterations: chunks of
/// iterations are dealt to the workers (`random::deal`) and merged in
/// iteration order, so that the bug reported is the first iteration's that
/// has one, as on one worker, with its execution number counted over the
/// iterations before it. An execution budget stops the run at the end of
/// the chunk that reaches it.
fn run_random_parallel(
    main: Arc<dyn Fn() + Send + Sync>,
    cfg: &RunConfig,
    iterations: u64,
    seed: u64,
) -> Result<Summary, Box<Report>> {
    let jobs = cfg.jobs.clamp(1, crate::MAX_JOBS as usize);
    let start = std::time::Instant::now();
    let mut config = explorer_config(cfg);
    config.max_executions = None;
    let make = |w: usize| {
        if jobs > 1 {
            crate::cell::set_worker(Some(w as u32));
        }
        let driver = new_driver(&main, cfg);
        driver.enter();
        let state = driver.state();
        (WorkerDriver(driver), state)
    };
    let run_chunk = |(driver, state): &mut (WorkerDriver, ExecutionState), range| {
        let iteration = std::cell::Cell::new(None::<(u64, u64)>);
        let mut found = None;
        let mut count = 0u64;
        let mut visitor = |ex: &Execution<'_>| -> bool {
            count += 1;
            let Some(failure) = judge(ex, state) else {
                return true;
            };
            let mut r = report_of(ex, failure, state, count);
            r.random_iteration = iteration.get();
            found = Some(Box::new(r));
            false
        };
        let stats = c11check_explore::random::explore_range(
            driver,
            &config,
            seed,
            range,
            start,
            &mut |i, s| iteration.set(Some((i, s))),
            &mut visitor,
        );
        let candidates = crate::robust::take_candidates();
        let stop = found.is_some() || stats.cut;
        ((stats, count, found, candidates), stop)
    };
    // The merged counts and chunks, shared by the merge and the ticks.
    let merged = std::cell::RefCell::new((Stats::default(), 0u64));
    let mut visited = 0u64;
    let (mut found, mut candidates) = (None, Vec::new());
    let mut progress = ProgressVisitor::new((|_| true) as fn(&Execution<'_>) -> bool, cfg);
    let share = iterations.div_ceil(c11check_explore::random::CHUNK) as f64
        / f64::from(cfg.shard.map_or(1, |s| s.count));
    c11check_explore::random::deal(
        jobs,
        iterations,
        cfg.shard,
        &make,
        &run_chunk,
        &mut |(s, count, bug, cands): ChunkFound| {
            let (stats, chunks) = &mut *merged.borrow_mut();
            stats.add(&s);
            *chunks += 1;
            if let Some(mut r) = bug {
                r.execution_number += visited;
                found = Some(r);
                candidates = cands;
            }
            visited += count;
            cfg.max_executions
                .is_none_or(|m| stats.executions + stats.blocked < m)
        },
        &mut || {
            let (stats, chunks) = &mut *merged.borrow_mut();
            stats.elapsed = start.elapsed();
            stats.done = ((*chunks as f64 / share).min(1.0) * (1u64 << 63) as f64) as u64;
            c11check_explore::Visitor::progress(&mut progress, stats);
        },
    );
    let (mut stats, _) = merged.into_inner();
    drop(progress);
    stats.cut |= found.is_none()
        && cfg
            .max_executions
            .is_some_and(|m| stats.executions + stats.blocked >= m);
    stats.elapsed = start.elapsed();
    let summary = Summary::of_graphs(stats);
    finish_run(&main, cfg, found, candidates, Ok(summary))
}

/// The end of a run: the report with its repair, or the summary.
fn finish_run(
    main: &Arc<dyn Fn() + Send + Sync>,
    cfg: &RunConfig,
    found: Option<Box<Report>>,
    candidates: Vec<(crate::Site, crate::Strengthen)>,
    result: Result<Summary, String>,
) -> Result<Summary, Box<Report>> {
    if let Some(mut r) = found {
        if r.failure.kind == FailureKind::NotRobust && cfg.repair && cfg.replay.is_none() {
            r.failure.message.push_str(&crate::robust::repair_text(
                &mut |strengthen| {
                    // The same run with these accesses strengthened.
                    let mut again = cfg.clone();
                    again.repair = false;
                    again.progress = false;
                    again.strengthen = strengthen;
                    run(main.clone(), &again)
                        .map(|_| ())
                        .map_err(|r| r.failure.kind)
                },
                &candidates,
            ));
        } else {
            // A repair's re-run: its caller learns the new cycle's candidates.
            crate::robust::stash_candidates(candidates);
        }
        return Err(r);
    }
    result.map_err(|msg| {
        Box::new(Report {
            locations: Vec::new(),
            failure: Failure {
                kind: FailureKind::Nondeterminism,
                message: msg,
                threads: vec![],
                events: vec![],
            },
            trace: vec![],
            replay: cfg.replay.clone().unwrap_or_default(),
            dot: String::new(),
            execution_number: 1,
            random_iteration: None,
            hits: None,
            others: Vec::new(),
            operations: None,
        })
    })
}

/// The run's visitor: `judge` looks at each execution; a progress line
/// goes to stderr after 2 s, then every 10 s (every second with
/// `RunConfig::progress`), from inside a long execution too, so that no
/// run is silent for long.
struct ProgressVisitor<F> {
    judge: F,
    every: Duration,
    last: Duration,
    /// Whether a line was printed yet (the first comes sooner).
    printed: bool,
    /// On a terminal (and not under CI), a progress bar instead of lines,
    /// made at the first report.
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
}

impl<F> ProgressVisitor<F> {
    fn new(judge: F, cfg: &RunConfig) -> Self {
        ProgressVisitor {
            judge,
            every: Duration::from_secs(if cfg.progress { 1 } else { 10 }),
            last: Duration::ZERO,
            printed: false,
            bar: None,
            quiet: cfg.quiet_progress,
        }
    }
}

/// Whether progress goes to a person at a terminal rather than to a log.
fn on_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

impl<F> Drop for ProgressVisitor<F> {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl<F: FnMut(&Execution<'_>) -> bool> c11check_explore::Visitor for ProgressVisitor<F> {
    fn visit(&mut self, ex: &Execution<'_>) -> bool {
        (self.judge)(ex)
    }
    fn progress(&mut self, stats: &Stats) {
        crate::watchdog::beat();
        if self.quiet {
            return;
        }
        let n = stats.executions + stats.blocked;
        if stats.elapsed >= Duration::from_secs(2) && (self.bar.is_some() || on_terminal()) {
            let bar = self.bar.get_or_insert_with(|| {
                let bar = indicatif::ProgressBar::new(1000);
                bar.set_style(
                    indicatif::ProgressStyle::with_template("c11check [{bar:30}] {msg}")
                        .expect("a valid template")
                        .progress_chars("=> "),
                );
                bar
            });
            bar.set_position((stats.done_fraction() * 1000.0) as u64);
            bar.set_message(format!(
                "{n} executions, {:.0}/s{}",
                n as f64 / stats.elapsed.as_secs_f64().max(1e-9),
                remaining(stats)
            ));
            return;
        }
        let every = if self.printed {
            self.every
        } else {
            self.every.min(Duration::from_secs(2))
        };
        if stats.elapsed - self.last >= every {
            self.last = stats.elapsed;
            self.printed = true;
            let n = stats.executions + stats.blocked;
            let bounded = match stats.over_bound + stats.bound_pruned {
                0 => String::new(),
                _ => format!(
                    "; beyond the preemption bound: {} executions, {} partial ones",
                    stats.over_bound, stats.bound_pruned
                ),
            };
            eprintln!(
                "c11check: {n} executions explored in {:.1}s ({:.0}/s), execution {} running{}{bounded}",
                stats.elapsed.as_secs_f64(),
                n as f64 / stats.elapsed.as_secs_f64().max(1e-9),
                n + 1,
                remaining(stats)
            );
        }
    }
}

/// An exhaustive run's rough estimate of what is left
/// (`Stats::done_fraction`): `; roughly 40% done, 1m30s left`. Knuth's
/// estimator in depth-first order is often off by a factor of several
/// (fib_bench: 82% at a quarter of the run; 3 x 4 fetch_adds: 53% at 87%),
/// so the line says "rough estimate".
pub fn remaining(stats: &Stats) -> String {
    let f = stats.done_fraction();
    if !(0.001..1.0).contains(&f) {
        return String::new();
    }
    let left = stats.elapsed.as_secs_f64() * (1.0 - f) / f;
    let left = if left >= 3600.0 {
        format!("{:.1}h", left / 3600.0)
    } else if left >= 60.0 {
        format!("{}m{:02}s", (left / 60.0) as u64, (left % 60.0) as u64)
    } else {
        format!("{left:.0}s")
    };
    format!(
        "; roughly {:.0}% done, {left} left (rough estimate)",
        f * 100.0
    )
}

/// Re-runs the one execution a replay string describes.
fn replay(
    driver: &mut FiberDriver,
    s: &str,
    model: Model,
    visitor: &mut dyn FnMut(&Execution<'_>) -> bool,
) -> Result<Stats, String> {
    let steps = decode_replay(s)?;
    let mut g = driver.initial_graph();
    driver.begin(&mut g);
    let start = Instant::now();
    for (i, step) in steps.iter().enumerate() {
        let t = step.thread;
        while g.num_threads() as u32 <= t {
            g.add_thread(None);
        }
        let action = driver.next_action(&mut g, t);
        // A failure found while running (a C program's access to freed
        // memory, say) ends the execution here: it is the bug, met sooner
        // than in the run that made the string (a process that ran other
        // executions first may have reused that memory).
        if driver.shared.borrow().failure.is_some() {
            break;
        }
        let diverged = || {
            format!("replay step {} does not match the program (thread {t} now does `{action}`): the replay string is from another version of the test", i + 1)
        };
        match (action, step.source, step.child) {
            (Action::Spawn { .. }, None, Some(child)) => {
                let id = g.push(t, Action::Spawn { child });
                while g.num_threads() as u32 <= child {
                    g.add_thread(None);
                }
                g.set_parent(child, Some(id));
            }
            (a, Some(src), None) if a.reads() => {
                let id = g.push(t, a);
                let w = src.unwrap_or_else(|| EventId::init(a.loc().unwrap()));
                if !g.contains(w) || !g.is_write(w) || g.loc_of(w) != a.loc() {
                    return Err(diverged());
                }
                g.set_rf(id, w);
                g.update_event(id, |e| e.spurious_fail = step.spurious);
            }
            (a, None, None) if !a.reads() && !matches!(a, Action::Spawn { .. }) => {
                g.push(t, a);
            }
            _ => return Err(diverged()),
        }
    }
    let analysis = Analysis::new(&g, model)
        .map_err(|e| format!("the replayed execution is not consistent under {model:?}: {e:?}"))?;
    if !analysis.is_consistent() {
        return Err(format!(
            "the replayed execution is not consistent under {model:?}"
        ));
    }
    let ending = if (0..g.num_threads() as u32).all(|t| g.is_finished(t)) {
        Ending::Complete
    } else if (0..g.num_threads() as u32).any(|t| g.is_blocked(t)) {
        Ending::Blocked
    } else {
        Ending::Deadlock
    };
    visitor(&Execution {
        graph: &g,
        analysis: &analysis,
        finals: &[],
        ending,
    });
    Ok(Stats {
        executions: 1,
        elapsed: start.elapsed(),
        ..Stats::default()
    })
}
