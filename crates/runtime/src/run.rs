//! Running a closure under an explorer and judging each execution.

use crate::driver::{ExecutionState, FiberDriver, RuntimeOptions};
use crate::report::{
    decode_replay, describe_event, encode_replay, repeated_turn, replay_order, to_dot, Failure,
    FailureKind, RepeatedTurn, Report,
};
use c11check_explore::{exhaustive, Config, Driver, Ending, Execution, Stats};
use c11check_model::{Action, Analysis, BlockReason, EventId, ExecutionGraph, Loc, Model};
use smallvec::{smallvec, SmallVec};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which explorer runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Every execution once.
    Exhaustive,
    /// `iterations` random executions from `seed`.
    Random { iterations: u64, seed: u64 },
    /// `iterations` random executions from `seed` on the live memory (no
    /// graph: long executions in bounded memory, see `c11check_model::live`).
    Live { iterations: u64, seed: u64 },
}

/// How to explore.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub strategy: Strategy,
    pub model: Model,
    pub max_executions: Option<u64>,
    pub time_budget: Option<Duration>,
    pub runtime: RuntimeOptions,
    /// Re-run only the execution this replay string describes.
    pub replay: Option<String>,
    /// Print a progress line to stderr every second (without it, every 10 s
    /// once the run is that long).
    pub progress: bool,
    /// Live random mode: schedule with PCT of this depth instead of
    /// uniformly at random.
    pub pct_depth: Option<u32>,
    /// Live random mode, uniform scheduling: a load with nothing new to
    /// read may wait for a store first (see `live.rs`).
    pub park_loads: bool,
    /// Live random mode: the aggressive pruning window (see
    /// `LiveMemory::set_prune_window`).
    pub prune_window: Option<usize>,
    /// Whether the program's weak compare-exchanges may fail spuriously
    /// (off: the facade issues them as strong ones, see
    /// [`crate::weak_cas_may_fail`]).
    pub spurious_failures: bool,
    /// Whether data races are reported (GenMC's `-disable-race-detection`
    /// turns it off for programs whose races are intended).
    pub report_races: bool,
    /// Whether an execution where a thread spins forever (its loop can only
    /// read what it read) is reported as a livelock (off: it is cut, as
    /// GenMC does unless asked to check liveness).
    pub report_livelocks: bool,
    /// Whether an execution where threads wait forever (a lock never
    /// released, a lost wake-up, a join of a thread that never ends) is
    /// reported as a deadlock (off: it is cut, and exploration goes on
    /// past it).
    pub report_deadlocks: bool,
    /// Exhaustive mode: explore only the executions some schedule reaches
    /// preempting threads at most this many times (see
    /// `c11check_explore::bound`).
    pub preemption_bound: Option<u32>,
    /// Report an execution the model allows that is not sequentially
    /// consistent (robustness against SC; `crate::robust`). Exhaustive and
    /// graph-based random runs only.
    pub robustness: bool,
    /// With `robustness`: when a violation is found, look for a smallest
    /// set of strengthenings that removes every violation, by re-running
    /// with candidates (`crate::robust::repair`), and name it in the report.
    pub repair: bool,
    /// Strengthenings applied to accesses by site (a candidate repair).
    pub strengthen: Vec<(crate::Site, crate::Strengthen)>,
    /// Worker threads (1: this thread alone; at most [`crate::MAX_JOBS`]).
    /// See `explore_parallel` and `run_random_parallel`.
    pub jobs: usize,
    /// Explore one shard's share of the executions (random runs: of the
    /// chunks of iterations).
    pub shard: Option<c11check_explore::Shard>,
    /// No progress lines or bar (a worker process whose sibling shows
    /// them).
    pub quiet_progress: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            strategy: Strategy::Exhaustive,
            model: Model::Cpp20,
            max_executions: None,
            time_budget: None,
            runtime: RuntimeOptions::default(),
            replay: None,
            progress: false,
            pct_depth: None,
            park_loads: true,
            prune_window: None,
            spurious_failures: true,
            report_races: true,
            report_livelocks: true,
            report_deadlocks: true,
            preemption_bound: None,
            robustness: false,
            repair: true,
            strengthen: Vec::new(),
            jobs: 1,
            shard: None,
            quiet_progress: false,
        }
    }
}

/// What a run that found no bug explored.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub stats: Stats,
    /// Executions cut because a spinning thread re-read old values or a
    /// condition variable's waiter was not woken (the executions where they
    /// go on are explored separately); not bugs.
    pub blocked: u64,
    /// Live random runs: how many distinct behaviours the executions showed
    /// (they differ when some thread read a different sequence of values).
    pub behaviours: Option<u64>,
    /// Live random runs: visible operations performed, all iterations
    /// together (for throughput).
    pub operations: Option<u64>,
}

impl Summary {
    /// The summary of an exploration of execution graphs (no live-run
    /// counts).
    fn of_graphs(stats: Stats) -> Summary {
        Summary {
            blocked: stats.blocked,
            stats,
            behaviours: None,
            operations: None,
        }
    }
}

/// Explores every execution of `main` (or replays one) and returns the first
/// bug found, as a report.
pub fn run(main: Arc<dyn Fn() + Send + Sync>, cfg: &RunConfig) -> Result<Summary, Box<Report>> {
    crate::refuse_nested_model();
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
            return crate::live::run_live(main, cfg, iterations, seed)
        }
        _ if live_replay => return crate::live::run_live(main, cfg, 1, 0),
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
            crate::STRENGTHENING.store(true, std::sync::atomic::Ordering::Relaxed);
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
        crate::set_worker(None);
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
        crate::set_worker(Some(
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
            crate::set_worker(Some(w as u32));
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
            r.failure
                .message
                .push_str(&crate::robust::repair_text(main, cfg, &candidates));
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

/// The report of `failure` in execution number `count`, `ex`. A report
/// draws modification order: every location is analysed.
fn report_of(ex: &Execution<'_>, failure: Failure, state: &ExecutionState, count: u64) -> Report {
    let full = ex
        .analysis
        .is_partial()
        .then(|| Analysis::new(ex.graph, ex.analysis.model).ok())
        .flatten();
    let a = full.as_ref().unwrap_or(ex.analysis);
    make_report(ex.graph, Some(a), failure, state, count)
}

/// The bug execution `ex` shows, if any.
fn judge(ex: &Execution<'_>, state: &ExecutionState) -> Option<Failure> {
    if let Some(f) = state.take_failure() {
        return Some(f);
    }
    let g = ex.graph;
    if let Some((threads, message)) = state.panic_failure() {
        return Some(Failure {
            kind: FailureKind::Panic,
            message,
            events: threads
                .iter()
                .filter_map(|&t| g.thread_len(t).checked_sub(1).map(|i| EventId::new(t, i)))
                .collect(),
            threads,
        });
    }
    let races = if state.0.borrow().ignore_races {
        Vec::new()
    } else {
        ex.analysis.races()
    };
    if let Some((a, b)) = races.into_iter().next() {
        let site = |id: EventId| {
            state
                .site(id)
                .map(|s| format!(" at {s}"))
                .unwrap_or_default()
        };
        let kind = |id: EventId| {
            if g.event(id).is_write() {
                "write"
            } else {
                "read"
            }
        };
        return Some(Failure {
            kind: FailureKind::DataRace,
            message: format!(
                "data race on loc{}: {} {}{} and {} {}{} are not ordered by happens-before\n  {}",
                g.event(a).loc().map(|l| l.0).unwrap_or(0),
                kind(a),
                a,
                site(a),
                kind(b),
                b,
                site(b),
                race_fix(g, a, b, &site)
            ),
            threads: vec![a.thread, b.thread],
            events: vec![a, b],
        });
    }
    // An access to an object made in a tracked allocation must come after
    // the object's creation: the first event its creator did after it.
    // One pass over the events finds, for each creation, its first access
    // that is not ordered after it. Such an access races with the
    // creation: not reported when races are not.
    let creations = state.creations();
    if !creations.is_empty() && !state.0.borrow().ignore_races {
        let mut creation_of_loc: SmallVec<[usize; 32]> = smallvec![usize::MAX; g.num_locs()];
        for (i, &(loc, ..)) in creations.iter().enumerate() {
            if let Some(slot) = creation_of_loc.get_mut(loc.0 as usize) {
                *slot = i;
            }
        }
        let mut unordered: SmallVec<[Option<EventId>; 16]> = smallvec![None; creations.len()];
        for (id, e) in g.events() {
            let Some(&c) = e.loc().and_then(|l| creation_of_loc.get(l.0 as usize)) else {
                continue;
            };
            if c == usize::MAX || unordered[c].is_some() {
                continue;
            }
            let (_, creator, done) = creations[c];
            let first_after = EventId::new(creator, done as u32);
            let made = done < g.thread_len(creator) as u64;
            if id.thread != creator && !(made && ex.analysis.hb(first_after, id)) {
                unordered[c] = Some(id);
            }
        }
        let first = (creations.iter().zip(&unordered)).find_map(|(c, id)| id.map(|id| (c, id)));
        if let Some((&(loc, creator, _), id)) = first {
            let mut f = crate::live::creation_race(id.thread, creator, loc);
            if let Some(s) = state.site(id) {
                f.message.push_str(&format!(" ({id} at {s})"));
            }
            f.events = vec![id];
            return Some(f);
        }
    }
    if let Some(f) = freed_access(ex, state) {
        return Some(f);
    }
    if let Some(f) = uninitialized_read(ex, state) {
        return Some(f);
    }
    if state.0.borrow().check_robustness {
        if let Some(f) = crate::robust::violation(ex, state) {
            return Some(f);
        }
    }
    // The program called exit(): whatever the others wait for, they stop.
    if ex.ending != Ending::Complete && state.0.borrow().exited.is_some() {
        return None;
    }
    let failure = match ex.ending {
        Ending::Complete => {
            let leaks = state.leaks();
            let (what, site) = leaks.first()?;
            Some(Failure {
                kind: FailureKind::Leak,
                message: format!(
                    "{} {what} allocation{} never released; the first was made at {site}",
                    leaks.len(),
                    if leaks.len() == 1 { " was" } else { "s were" }
                ),
                threads: vec![],
                events: vec![],
            })
        }
        Ending::Deadlock => {
            let waiting: Vec<u32> = (0..g.num_threads() as u32)
                .filter(|&t| g.is_started(t) && !g.is_finished(t) && !g.is_blocked(t))
                .collect();
            Some(Failure {
                kind: FailureKind::Deadlock,
                message: format!(
                    "deadlock: {} wait for threads that never finish",
                    crate::report::thread_list(&waiting)
                ),
                threads: waiting,
                events: vec![],
            })
        }
        Ending::Blocked => judge_blocked(ex, state),
    };
    failure.filter(|f| !(f.kind == FailureKind::Deadlock && state.0.borrow().ignore_deadlocks))
}

/// A load that read the initial value of a location whose initial value
/// is indeterminate (heap memory nothing wrote before it).
fn uninitialized_read(ex: &Execution<'_>, state: &ExecutionState) -> Option<Failure> {
    let s = state.0.borrow();
    if s.indeterminate.is_empty() {
        return None;
    }
    let (id, e) = ex.graph.events().find(|(_, e)| {
        e.rf.is_some_and(|w| w.is_init()) && e.loc().is_some_and(|l| s.is_indeterminate(l))
    })?;
    drop(s);
    let at = state
        .site(id)
        .map(|s| format!(" at {s}"))
        .unwrap_or_default();
    Some(uninitialized_failure(
        id.thread,
        e.loc()?,
        &format!("{id}{at}"),
        vec![id],
    ))
}

/// The report of thread `t`'s read (`who`: the event and where) of
/// `loc`'s indeterminate initial value.
pub(crate) fn uninitialized_failure(t: u32, loc: Loc, who: &str, events: Vec<EventId>) -> Failure {
    Failure {
        kind: FailureKind::UninitializedRead,
        message: format!(
            "read of uninitialized memory: {who} reads loc{}, which nothing wrote before: it holds no value yet (initialize it before the object is published, or order the read after the write that does)",
            loc.0
        ),
        threads: vec![t],
        events,
    }
}

/// An access to an object whose tracked allocation was freed, that does not
/// happen before the free: after it (a use after free) or unordered with
/// it (a race with the free). The free happened in thread `f` after its
/// first `n` events.
fn freed_access(ex: &Execution<'_>, state: &ExecutionState) -> Option<Failure> {
    let frees = state.frees();
    if frees.is_empty() {
        return None;
    }
    let g = ex.graph;
    for (id, e) in g.events() {
        let Some(loc) = e.loc() else { continue };
        let Some(&(_, f, n)) = frees.iter().find(|x| x.0 == loc) else {
            continue;
        };
        let n = n as u32;
        let before_free = if id.thread == f {
            id.index < n
        } else {
            n > 0 && ex.analysis.hb(id, EventId::new(f, n - 1))
        };
        if before_free {
            continue;
        }
        let after_free =
            id.thread == f || (n < g.thread_len(f) && ex.analysis.hb(EventId::new(f, n), id));
        let at = state
            .site(id)
            .map(|s| format!(" at {s}"))
            .unwrap_or_default();
        let what = if e.is_write() { "writes" } else { "reads" };
        let message = if after_free {
            format!(
                "use after free: {id}{at} {what} loc{}, an object in memory thread {f} freed after its operation {} (T{f}.{})",
                loc.0,
                n,
                n.saturating_sub(1)
            )
        } else {
            format!(
                "data race with a free: {id}{at} {what} loc{}, an object in memory thread {f} frees after its operation {} (T{f}.{}), and nothing orders the access before the free: the memory may be gone (or reused) when it runs",
                loc.0,
                n,
                n.saturating_sub(1)
            )
        };
        return Some(Failure {
            kind: if after_free {
                FailureKind::UseAfterFree
            } else {
                FailureKind::DataRace
            },
            message,
            threads: vec![id.thread, f],
            events: vec![id],
        });
    }
    None
}

/// What would order racing accesses `a` and `b`, as a reviewer would say it:
/// where one thread, after its access, stores what the other reads before
/// its own, the orders that store and load need (release, acquire) for the
/// read to synchronise with the store; otherwise what to add.
fn race_fix(
    g: &ExecutionGraph,
    a: EventId,
    b: EventId,
    site: &dyn Fn(EventId) -> String,
) -> String {
    use c11check_model::MemOrder;
    for (first, second) in [(a, b), (b, a)] {
        // The last read before `second` in its thread that reads a store
        // its thread made after `first`.
        let link = (0..second.index).rev().find_map(|i| {
            let r = EventId::new(second.thread, i);
            let e = g.event(r);
            let w =
                e.rf.filter(|w| !w.is_init() && w.thread == first.thread && w.index > first.index)?;
            (e.ord() != MemOrder::NonAtomic).then_some((w, r))
        });
        let Some((w, r)) = link else { continue };
        let mut fixes = Vec::new();
        if !g.event(w).ord().is_release() {
            fixes.push(format!("the store {w}{} Release", site(w)));
        }
        if !g.event(r).ord().is_acquire() {
            fixes.push(format!("the load {r}{} Acquire", site(r)));
        }
        if fixes.is_empty() {
            break;
        }
        return format!(
            "{r} reads what {w} stored after {first}, but does not synchronise with it: make {} (or add a fence of that order after the store or before the load), and {first} happens before {second}.",
            fixes.join(" and ")
        );
    }
    format!(
        "Nothing orders them in this execution: after {a}, store with Release a value that {b}'s thread loads with Acquire before {b} (or the other way round), or make both accesses under one Mutex."
    )
}

/// An execution that ended with blocked threads is a bug only when no other
/// execution can unblock them: each waits on reads of writes that can stay
/// last in modification order (a lock whose holder never releases it, a spin
/// loop that can only ever read what it read), or a thread is over its step
/// bound. Otherwise a write that would unblock a thread exists, and the
/// execution where the thread reads it is explored separately.
fn judge_blocked(ex: &Execution<'_>, state: &ExecutionState) -> Option<Failure> {
    let g = ex.graph;
    let a = ex.analysis;
    let can_stay_last = |w: EventId| {
        g.loc_of(w)
            .is_some_and(|l| a.mo_max_candidates(l).contains(&w))
    };
    let mut lock_waits = Vec::new();
    let mut spins = Vec::new();
    // The writes the spinning threads keep reading: all of them must be
    // able to end modification order together (two threads that each
    // keep reading their own store to one location cannot both go on
    // reading it: one of the stores is the later, and that thread's
    // other reader sees it).
    let mut lasts: Vec<(c11check_model::Loc, EventId)> = Vec::new();
    for t in 0..g.num_threads() as u32 {
        let Some(Action::Block { reason }) = g.last_event(t).map(|e| e.action) else {
            continue;
        };
        let len = g.thread_len(t) - 1;
        match reason {
            BlockReason::Bound => {
                let site = |id: EventId| state.site(id);
                let (message, events) = match repeated_turn(g, t, len, &site) {
                    Some(turn) => (
                        spin_message(g, t, turn, &site),
                        vec![EventId::new(t, turn.start)],
                    ),
                    None => (
                        format!(
                            "thread {t} performed {len} visible operations without finishing (the step bound; raise it with `Builder::max_steps` or C11CHECK_MAX_STEPS if the test is just long)"
                        ),
                        vec![],
                    ),
                };
                return Some(Failure {
                    kind: FailureKind::Livelock,
                    message,
                    threads: vec![t],
                    events,
                });
            }
            BlockReason::LockHeld => {
                // The read that found the lock held comes just before the block.
                let wait = EventId::new(t, len - 1);
                let holder = g.event(wait).rf.expect("a lock wait is a read");
                if !can_stay_last(holder) {
                    return None;
                }
                if state.waiting_on(t).is_some() {
                    // A facade's wait (the permit take of a condition
                    // variable, a barrier or a channel), told apart below
                    // like a spin inside one.
                    spins.push(t);
                } else {
                    lock_waits.push((t, holder, wait));
                }
            }
            // A failed assumption is not a bug: the execution is cut.
            BlockReason::Assume | BlockReason::Exit => {}
            BlockReason::Wait => {
                // The loads of the spin loop's last turn.
                let mut i = len;
                while i > 0 {
                    i -= 1;
                    let e = g.event(EventId::new(t, i));
                    // As in the turn comparison (`spin_is_idle`): fences
                    // and plain stores of the same values add nothing.
                    if matches!(
                        e.action,
                        Action::Fence { .. }
                            | Action::Store {
                                ord: c11check_model::MemOrder::NonAtomic,
                                ..
                            }
                    ) {
                        continue;
                    }
                    // A read-modify-write that wrote back what it read (a
                    // swap of `false` that found `false`): the next turn's
                    // reads its write, unless another write comes after
                    // it in modification order.
                    if e.is_rmw() && e.written_value() == Some(e.read_val) {
                        let id = EventId::new(t, i);
                        if !can_stay_last(id) {
                            return None;
                        }
                        lasts.extend(e.loc().map(|l| (l, id)));
                        continue;
                    }
                    if !e.is_read() || e.is_write() {
                        break;
                    }
                    // A weak CAS does not fail spuriously forever.
                    if e.spurious_fail || !can_stay_last(e.rf.unwrap()) {
                        return None;
                    }
                    lasts.extend(e.loc().map(|l| (l, e.rf.unwrap())));
                }
                spins.push(t);
            }
        }
    }
    if lock_waits.is_empty() && spins.is_empty() {
        return None;
    }
    lasts.sort_unstable();
    lasts.dedup();
    if lasts.len() > 1 && !a.is_partial() && a.find_mo(&lasts).is_none() {
        return None;
    }
    // A spin inside a facade's wait (a condition variable, a barrier) that
    // nothing can end is a thread blocked forever, not a busy loop.
    let (waits, mut spins): (Vec<u32>, Vec<u32>) = spins
        .into_iter()
        .partition(|&t| state.waiting_on(t).is_some());
    if state.0.borrow().ignore_livelocks {
        // Busy loops that can never end are cut like a failed assumption.
        spins.clear();
        if lock_waits.is_empty() && waits.is_empty() {
            return None;
        }
    }
    if waits
        .iter()
        .any(|&t| state.waiting_on(t) == Some(crate::TIMED_WAIT))
    {
        return None;
    }
    if lock_waits.is_empty() && waits.is_empty() {
        return Some(Failure {
            kind: FailureKind::Livelock,
            message: format!(
                "{} spin{} forever: every other thread is finished or blocked and nothing it waits for can still be written",
                crate::report::thread_list(&spins),
                if spins.len() == 1 { "s" } else { "" }
            ),
            threads: spins,
            events: vec![],
        });
    }
    let mut parts: Vec<String> = lock_waits
        .iter()
        .map(|(t, holder, _)| {
            let by = if holder.is_init() {
                "a lock that was never released".to_string()
            } else if g.is_finished(holder.thread) {
                format!(
                    "a lock that thread {} took at {} and never released",
                    holder.thread, holder
                )
            } else {
                format!(
                    "a lock held by thread {} (taken at {})",
                    holder.thread, holder
                )
            };
            format!("thread {t} waits for {by}")
        })
        .collect();
    parts.extend(waits.iter().map(|&t| {
        format!(
            "thread {t} waits for {}, which can no longer come",
            state.waiting_on(t).unwrap_or("a wake-up")
        )
    }));
    parts.extend(spins.iter().map(|t| format!("thread {t} spins forever")));
    Some(Failure {
        kind: FailureKind::Deadlock,
        message: format!("deadlock: {}", parts.join("; ")),
        threads: lock_waits
            .iter()
            .map(|w| w.0)
            .chain(waits.iter().copied())
            .chain(spins.iter().copied())
            .collect(),
        events: lock_waits.iter().map(|w| w.2).collect(),
    })
}

fn make_report(
    g: &ExecutionGraph,
    a: Option<&Analysis<'_>>,
    failure: Failure,
    state: &ExecutionState,
    n: u64,
) -> Report {
    let site = |id: EventId| state.site(id);
    // A thread's run of identical turns (a spin loop up to the step bound)
    // shows its first and last turn, and a line for those in between.
    let hidden: Vec<Option<(u32, u32, u32)>> = (0..g.num_threads() as u32)
        .map(|t| {
            let end = g.thread_len(t)
                - g.last_event(t)
                    .is_some_and(|e| matches!(e.action, Action::Block { .. }))
                    as u32;
            let turn = repeated_turn(g, t, end, &site).filter(|r| r.turns >= 4)?;
            let from = turn.start + turn.len;
            Some((
                from,
                turn.start + (turn.turns - 1) * turn.len,
                turn.turns - 2,
            ))
        })
        .collect();
    // A run stopped at a spin loop stops the other threads where they are:
    // their stops are not part of the story.
    let stopped_others = failure.kind == FailureKind::SpinWithoutHint;
    let trace = replay_order(g)
        .into_iter()
        .filter(|id| !matches!(g.event(*id).action, Action::Finish))
        .filter(|id| {
            !(stopped_others
                && !failure.threads.contains(&id.thread)
                && matches!(g.event(*id).action, Action::Block { .. }))
        })
        .filter_map(|id| {
            if let Some((from, to, turns)) = hidden[id.thread as usize] {
                if id.index == from {
                    let t = id.thread;
                    return Some(format!(
                        "   ... T{t}.{from} to T{t}.{}: the same turn {turns} more times ...",
                        to - 1
                    ));
                }
                if (from..to).contains(&id.index) {
                    return None;
                }
            }
            let mark = if failure.events.contains(&id) {
                ">> "
            } else {
                "   "
            };
            Some(format!("{mark}{}", describe_event(g, id, site(id))))
        })
        .collect();
    let names = state.0.borrow().location_names();
    let mut report = Report {
        locations: crate::report::location_legend(g, &site, &names),
        replay: encode_replay(g),
        dot: to_dot(g, a, &site),
        trace,
        failure,
        execution_number: n,
        random_iteration: None,
        hits: None,
        others: Vec::new(),
        operations: None,
    };
    crate::report::apply_names(&mut report, &names);
    report
}

/// What a thread that reached its step bound repeating `turn` is doing, and
/// what to do about it.
pub(crate) fn spin_message(
    g: &ExecutionGraph,
    t: u32,
    turn: RepeatedTurn,
    site: &dyn Fn(EventId) -> Option<crate::Site>,
) -> String {
    let first = EventId::new(t, turn.start);
    let at = site(first).map(|s| format!(" at {s}")).unwrap_or_default();
    let ops: Vec<String> = (turn.start..turn.start + turn.len.min(4))
        .map(|i| {
            let id = EventId::new(t, i);
            let d = describe_event(g, id, site(id));
            // Without the event's name: it is the same in every turn.
            d.split_once(' ')
                .map(|(_, rest)| rest.to_string())
                .unwrap_or(d)
        })
        .collect();
    let more = if turn.len > 4 { "\n      ..." } else { "" };
    let writes =
        (turn.start..turn.start + turn.len).any(|i| g.event(EventId::new(t, i)).is_write());
    format!(
        "thread {t} {}{at} without `spin_loop()` or `yield_now()`: the same turn repeated {} times{}:\n      {}{more}\n  {}",
        if writes { "loops" } else { "spins" },
        turn.turns,
        if writes {
            ", up to the step bound"
        } else {
            " (c11check stops a loop that only reads after a hundredth of the step bound of identical turns)"
        },
        ops.join("\n      "),
        SPIN_ADVICE
    )
}

/// What a loop that ran into the step bound repeating one turn may be, and
/// what to do about it.
const SPIN_ADVICE: &str = "Either nothing will ever end this loop (a livelock), or another thread will, and c11check, which cannot tell that the loop waits, would explore every number of turns up to the step bound. Call `c11check::hint::spin_loop()` (or `c11check::thread::yield_now()`) in the loop: c11check then cuts each turn that only reads again what the turn before read, explores the executions where another thread's store ends the wait, and reports a wait nothing can end as a livelock. If the loop is just long, raise the bound (`Builder::max_steps`, C11CHECK_MAX_STEPS).";

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
