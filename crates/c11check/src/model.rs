//! Entry points: [`model`] and [`Builder`].

use c11check_runtime::{run, RunConfig, RuntimeOptions, Strategy};

/// The memory models [`Builder::memory_model`] chooses from.
pub use c11check_model::Model;
pub use c11check_runtime::{FailureKind, Report, Summary};
use std::sync::Arc;
use std::time::Duration;

/// Explores every execution of `f` under the C/C++20 memory model and panics
/// with a report on the first bug. Settings come from [`Builder::new`] (and
/// so from the `C11CHECK_*` environment variables). The panic points at the
/// caller (the test), not at c11check.
#[track_caller]
pub fn model<F>(f: F)
where
    F: Fn() + Send + Sync + 'static,
{
    Builder::new().check(f)
}

/// Exploration settings. Every field can also be set by an environment
/// variable, read by [`Builder::new`], so CI can change them without code.
#[derive(Clone, Debug)]
pub struct Builder {
    /// Memory model: `cpp20` (default), `rc11`, `sc`, `mca` or `tso`.
    /// `C11CHECK_MODEL`.
    pub memory_model: Model,
    /// `Some(n)`: run `n` random executions instead of exploring every one.
    /// `C11CHECK_ITERATIONS`.
    pub random_iterations: Option<u64>,
    /// Seed of a random run (each iteration's own seed derives from it and
    /// is printed in a report). `C11CHECK_SEED`.
    pub seed: u64,
    /// Stop after this many executions (the summary says the run was cut).
    /// `C11CHECK_MAX_EXECUTIONS`.
    pub max_executions: Option<u64>,
    /// Stop after this much time. `C11CHECK_MAX_DURATION` (seconds).
    pub max_duration: Option<Duration>,
    /// Visible operations one thread may perform in one execution before it
    /// is reported as a livelock. `C11CHECK_MAX_STEPS`.
    pub max_steps: u32,
    /// Fiber stack size in bytes. `C11CHECK_STACK_SIZE`.
    pub stack_size: usize,
    /// Re-run only this execution (from a report). `C11CHECK_REPLAY`.
    pub replay: Option<String>,
    /// Write the failing execution as Graphviz to this file. `C11CHECK_DOT`.
    pub dot: Option<std::path::PathBuf>,
    /// Print progress and a summary to stderr. `C11CHECK_LOG=1`.
    pub log: bool,
    /// Random executions run on the live memory (C11Tester's model: no
    /// execution graph, pruned, for long executions; the default) rather
    /// than as execution graphs. `C11CHECK_LIVE=0` picks the graphs.
    pub live: bool,
    /// Live random mode: prune aggressively, keeping each thread's newest
    /// `n` stores per location readable (see [`Builder::prune_window`]).
    /// `C11CHECK_PRUNE_WINDOW`.
    pub prune_window: Option<usize>,
    /// Live random mode schedules with PCT of this depth (the number of
    /// ordering constraints a bug needs) instead of uniformly.
    /// `C11CHECK_PCT=<depth>`.
    pub pct_depth: Option<u32>,
    /// Live random mode, uniform scheduling: half of the loads that have
    /// nothing new to read (another thread wrote the location last, and
    /// this one accessed it since or is ordered after that store) wait for a
    /// store or up to 32 steps first, so readers also meet stores made long
    /// after they started. Scheduling only: no outcome is added or lost.
    /// On by default; `C11CHECK_PARK_LOADS=0` turns it off.
    pub park_loads: bool,
    /// Whether `compare_exchange_weak` may fail although it read the
    /// expected value, as the language allows and LL/SC hardware (ARM,
    /// POWER, RISC-V) does. On by default: code that takes one failure of a
    /// weak CAS as proof of a change is wrong there. Off treats it as
    /// strong, as CDSChecker and loom do, and explores fewer
    /// executions. `C11CHECK_SPURIOUS_FAILURES=0` turns it off.
    pub spurious_failures: bool,
    /// `Some(k)`: explore only the executions a schedule reaches preempting
    /// threads at most `k` times (a switch away from a thread that could go
    /// on; switching at its end, or where it joins or takes a lock, is
    /// free), as loom's `preemption_bound`: for tests too large to explore
    /// whole. Most bugs need few preemptions; the summary says how many
    /// executions the bound left out. `C11CHECK_PREEMPTIONS`.
    pub preemption_bound: Option<u32>,
    /// Also report an execution the memory model allows that no
    /// interleaving of the threads produces (robustness against SC): the
    /// code is then not safe to reason about one thread step at a time.
    /// Every modification order the model allows counts; the failed turns
    /// of wait loops with `spin_loop()` or `yield_now()` do not. Exhaustive
    /// and graph-based random runs check each execution; live random runs
    /// run sequentially consistent and watch each access with location
    /// clocks, SeqCst accesses and fences included (a stale read is
    /// reported at the end of the run, unless a failed wait turn at its
    /// site read that value). `C11CHECK_ROBUSTNESS=1`.
    pub robustness: bool,
    /// With [`Builder::robustness`]: when a violation is found, re-run with
    /// candidate strengthenings of the cycle's accesses (an order raised, a
    /// SeqCst fence before an access), smallest sets first, and name in the
    /// report one with which the whole check passes (at most 256 re-runs and
    /// 30 s). On by default; `C11CHECK_REPAIR=0` turns it off.
    pub repair: bool,
    /// Worker threads of a run (at most 64): an exhaustive run hands them
    /// pending branches, a random one chunks of 16 iterations. 1 by default:
    /// workers run the closure at once on several OS threads, so a test may
    /// run on more only if nothing in it outlives an execution: no static
    /// c11check object (atomic, `OnceLock`, `LazyLock`, `lazy_static!`) and
    /// none captured by the closure (c11check stops with a report naming
    /// `jobs(1)` when workers share one), and no std static or thread-local
    /// the closure's code changes. The same executions are explored with
    /// any number; with a bug, the one an exhaustive run reports may differ
    /// (its replay runs on one worker), a random run reports the same bug
    /// (the earliest iteration's; live runs: the same hit counts). A live
    /// robustness run uses one worker. `C11CHECK_JOBS`.
    pub jobs: usize,
    /// Explore only shard `I/N` of the executions (of an exhaustive run;
    /// of a random run, every Nth chunk of 16 iterations): the shards `1/N`
    /// … `N/N`, run anywhere (a CI matrix, `cargo nextest
    /// --partition`-style jobs), together explore each execution (each
    /// iteration) exactly once. `C11CHECK_SHARD=I/N`.
    pub shard: Option<c11check_runtime::Shard>,
    /// Whether an execution whose threads wait forever (a lock never
    /// released, a lost wake-up, a join of a thread that never ends) is
    /// reported as a deadlock. Off, it is cut as a blocked execution and
    /// exploration goes on past it (to see the outcomes of the others).
    /// On by default; `C11CHECK_DEADLOCKS=0` turns it off.
    pub report_deadlocks: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    let v = std::env::var(name).ok()?;
    match v.trim().parse() {
        Ok(x) => Some(x),
        Err(_) => panic!("c11check: cannot understand {name}={v:?}"),
    }
}

impl Builder {
    /// Defaults, overridden by the `C11CHECK_*` environment variables.
    pub fn new() -> Self {
        let memory_model = match std::env::var("C11CHECK_MODEL") {
            Ok(name) => Model::from_name(name.trim()).unwrap_or_else(|| {
                panic!(
                    "c11check: unknown C11CHECK_MODEL={name:?} ({})",
                    Model::names()
                )
            }),
            Err(_) => Model::Cpp20,
        };
        let defaults = RuntimeOptions::default();
        Builder {
            memory_model,
            random_iterations: env("C11CHECK_ITERATIONS"),
            seed: env("C11CHECK_SEED").unwrap_or(0xC11C),
            max_executions: env("C11CHECK_MAX_EXECUTIONS"),
            max_duration: env::<f64>("C11CHECK_MAX_DURATION").map(Duration::from_secs_f64),
            max_steps: env("C11CHECK_MAX_STEPS").unwrap_or(defaults.max_steps),
            stack_size: env("C11CHECK_STACK_SIZE").unwrap_or(defaults.stack_size),
            replay: std::env::var("C11CHECK_REPLAY").ok(),
            dot: std::env::var_os("C11CHECK_DOT").map(Into::into),
            log: std::env::var("C11CHECK_LOG").is_ok_and(|v| v != "0"),
            live: std::env::var("C11CHECK_LIVE").map_or(true, |v| v.trim() != "0"),
            prune_window: env("C11CHECK_PRUNE_WINDOW"),
            pct_depth: env("C11CHECK_PCT"),
            park_loads: std::env::var("C11CHECK_PARK_LOADS").map_or(true, |v| v.trim() != "0"),
            spurious_failures: std::env::var("C11CHECK_SPURIOUS_FAILURES")
                .map_or(true, |v| v.trim() != "0"),
            preemption_bound: env("C11CHECK_PREEMPTIONS"),
            robustness: std::env::var("C11CHECK_ROBUSTNESS").is_ok_and(|v| v.trim() != "0"),
            repair: std::env::var("C11CHECK_REPAIR").map_or(true, |v| v.trim() != "0"),
            jobs: env("C11CHECK_JOBS").unwrap_or(1),
            shard: std::env::var("C11CHECK_SHARD").ok().map(|v| {
                v.parse()
                    .unwrap_or_else(|e| panic!("c11check: C11CHECK_SHARD: {e}"))
            }),
            report_deadlocks: std::env::var("C11CHECK_DEADLOCKS").map_or(true, |v| v.trim() != "0"),
        }
    }

    /// Chooses the memory model.
    pub fn memory_model(mut self, m: Model) -> Self {
        self.memory_model = m;
        self
    }
    /// Runs `iterations` random executions (each consistent, each from its
    /// own seed) instead of every execution: for programs too large to
    /// explore exhaustively.
    pub fn random(mut self, iterations: u64) -> Self {
        self.random_iterations = Some(iterations);
        self
    }
    /// Runs the random executions on the live memory (the default): each
    /// operation is answered at once and memory stays bounded however long
    /// an execution is (millions of operations); the order SeqCst
    /// operations execute in bounds what later reads see (stronger than
    /// C++20: a few SeqCst outcomes are not produced). A report gives the
    /// iteration's seed as its replay string (`l1:<seed>`) and the last
    /// operations of the execution.
    pub fn live(mut self) -> Self {
        self.live = true;
        self
    }
    /// Runs the random executions as execution graphs instead, each checked
    /// for consistency and replayed from the start: slower, but every
    /// outcome of a small test is reachable and a report shows the whole
    /// execution.
    pub fn graph_random(mut self) -> Self {
        self.live = false;
        self.pct_depth = None;
        self
    }
    /// Live random mode: prunes aggressively (c11tester.md §7.1), keeping
    /// only each thread's newest `n` stores per location readable once it
    /// has more, so memory stays bounded even while a thread that never
    /// synchronises could read old stores. Executions stay ones the model
    /// allows; some become unreachable. Without it pruning is conservative.
    pub fn prune_window(mut self, n: usize) -> Self {
        self.prune_window = Some(n.max(1));
        self
    }
    /// Live random mode with PCT scheduling of depth `depth` (see
    /// [`Builder::live`]): favours executions where a few threads are
    /// preempted at a few random points, which finds bugs of small depth with
    /// a guaranteed probability per execution.
    pub fn pct(mut self, depth: u32) -> Self {
        self.live = true;
        self.pct_depth = Some(depth.max(1));
        self
    }
    /// Live random mode, uniform scheduling: whether loads with nothing new
    /// to read may wait for a store (see the field [`Builder::park_loads`]).
    pub fn park_loads(mut self, on: bool) -> Self {
        self.park_loads = on;
        self
    }
    /// Whether a weak compare-exchange may fail spuriously (see the field
    /// [`Builder::spurious_failures`]).
    pub fn spurious_failures(mut self, on: bool) -> Self {
        self.spurious_failures = on;
        self
    }
    /// The seed of a random run.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// Sets [`Builder::max_executions`].
    pub fn max_executions(mut self, n: u64) -> Self {
        self.max_executions = Some(n);
        self
    }
    /// Sets [`Builder::max_duration`].
    pub fn max_duration(mut self, d: Duration) -> Self {
        self.max_duration = Some(d);
        self
    }
    /// Sets [`Builder::preemption_bound`].
    pub fn preemption_bound(mut self, k: u32) -> Self {
        self.preemption_bound = Some(k);
        self
    }
    /// Sets [`Builder::jobs`].
    ///
    /// # Panics
    /// With 0, or more than 64.
    pub fn jobs(mut self, n: usize) -> Self {
        assert!(
            (1..=64).contains(&n),
            "c11check: jobs({n}): a run takes 1 to 64 worker threads"
        );
        self.jobs = n;
        self
    }
    /// Sets [`Builder::shard`]: shard `index` (from 1) of `count`.
    ///
    /// # Panics
    /// Unless `1 <= index <= count`.
    pub fn shard(mut self, index: u32, count: u32) -> Self {
        assert!(
            index >= 1 && index <= count,
            "c11check: shard({index}, {count}): shards are 1 to count"
        );
        self.shard = Some(c11check_runtime::Shard {
            index: index - 1,
            count,
        });
        self
    }
    /// Sets [`Builder::robustness`].
    pub fn robustness(mut self) -> Self {
        self.robustness = true;
        self
    }
    /// Sets [`Builder::max_steps`].
    pub fn max_steps(mut self, n: u32) -> Self {
        self.max_steps = n;
        self
    }
    /// Re-runs only the execution a report's replay string describes.
    pub fn replay(mut self, s: &str) -> Self {
        self.replay = Some(s.to_string());
        self
    }
    /// Reports executions whose threads wait forever as deadlocks (on by
    /// default), or cuts them and explores on.
    pub fn report_deadlocks(mut self, on: bool) -> Self {
        self.report_deadlocks = on;
        self
    }
    /// Writes the failing execution's graph (Graphviz) to `path`.
    pub fn dot(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.dot = Some(path.into());
        self
    }

    fn config(&self) -> RunConfig {
        RunConfig {
            strategy: match self.random_iterations {
                Some(iterations) if self.live || self.pct_depth.is_some() => Strategy::Live {
                    iterations,
                    seed: self.seed,
                },
                Some(iterations) => Strategy::Random {
                    iterations,
                    seed: self.seed,
                },
                None => Strategy::Exhaustive,
            },
            model: self.memory_model,
            max_executions: self.max_executions,
            time_budget: self.max_duration,
            runtime: RuntimeOptions {
                stack_size: self.stack_size,
                max_steps: self.max_steps,
            },
            replay: self.replay.clone(),
            progress: self.log,
            pct_depth: self.pct_depth,
            park_loads: self.park_loads,
            prune_window: self.prune_window,
            spurious_failures: self.spurious_failures,
            report_races: true,
            report_livelocks: true,
            report_deadlocks: self.report_deadlocks,
            preemption_bound: self.preemption_bound,
            robustness: self.robustness,
            repair: self.repair,
            strengthen: Vec::new(),
            jobs: self.jobs,
            shard: self.shard,
            quiet_progress: false,
        }
    }

    /// Explores `f`; returns what was explored, or the report of the first bug.
    ///
    /// # Panics
    ///
    /// With both a preemption bound and random executions: the bound
    /// applies to exhaustive exploration only.
    #[track_caller]
    pub fn explore<F>(&self, f: F) -> Result<Summary, Box<Report>>
    where
        F: Fn() + Send + Sync + 'static,
    {
        if let (Some(k), Some(n)) = (self.preemption_bound, self.random_iterations) {
            panic!(
                "c11check: a preemption bound ({k}) and random executions ({n}) were both asked \
                 for; the bound applies to exhaustive exploration: drop one \
                 (C11CHECK_PREEMPTIONS / C11CHECK_ITERATIONS)"
            );
        }
        if let Some(r) = &self.replay {
            if let Err(e) = c11check_runtime::check_replay(r) {
                panic!(
                    "c11check: cannot use the replay string {r:?} (`Builder::replay` or \
                     C11CHECK_REPLAY): {e}. Copy it whole from the last lines of a report."
                );
            }
        }
        c11check_runtime::set_before_op_hook(crate::sync::atomic::publish_exclusive_writes);
        let main = move || {
            f();
            crate::thread::destroy_thread_locals();
        };
        let result = run(Arc::new(main), &self.config());
        if let (Err(report), Some(path)) = (&result, &self.dot) {
            if let Err(e) = std::fs::write(path, &report.dot) {
                eprintln!("c11check: cannot write {}: {e}", path.display());
            }
        }
        result
    }

    /// Explores `f` and panics with the report of the first bug (the panic
    /// points at the caller). A run that a budget cut short says so on
    /// stderr: it passed only the executions it explored.
    #[track_caller]
    pub fn check<F>(&self, f: F)
    where
        F: Fn() + Send + Sync + 'static,
    {
        let caller = std::panic::Location::caller();
        match self.explore(f) {
            Ok(summary) => {
                let s = &summary.stats;
                // Past the test harness's capture: a plain `ok` would say
                // the test checked what it did not.
                if s.over_bound + s.bound_pruned > 0 && !self.log {
                    c11check_runtime::tell_user(&format!(
                        "c11check ({caller}): the preemption bound ({}) left out {} executions (and {} partial ones): \
                         they were not checked; raise or unset it to explore them",
                        self.preemption_bound.unwrap_or(0),
                        s.over_bound,
                        s.bound_pruned
                    ));
                }
                if summary.stats.cut && !self.log {
                    c11check_runtime::tell_user(&format!(
                        "c11check ({caller}): stopped by a budget after {} executions: the rest were not explored",
                        summary.stats.executions + summary.stats.blocked
                    ));
                }
                if self.log {
                    let s = &summary.stats;
                    let behaviours = summary
                        .behaviours
                        .map(|b| format!(" ({b} distinct behaviours)"))
                        .unwrap_or_default();
                    let bounded = match self.preemption_bound {
                        Some(k) if s.over_bound + s.bound_pruned > 0 => format!(
                            " (preemption bound {k}: {} executions and {} partial ones beyond it \
                             were left out)",
                            s.over_bound, s.bound_pruned
                        ),
                        Some(k) => format!(" (preemption bound {k}: it left nothing out)"),
                        None => String::new(),
                    };
                    eprintln!(
                        "c11check: {} executions{behaviours}, {} blocked, {:.3}s{}{bounded}",
                        s.executions,
                        s.blocked,
                        s.elapsed.as_secs_f64(),
                        if s.cut {
                            " (cut by a budget: not every execution was explored)"
                        } else {
                            ""
                        }
                    );
                }
            }
            Err(report) => panic!("{report}"),
        }
    }
}
