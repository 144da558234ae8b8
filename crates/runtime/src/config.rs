//! How a run is asked for ([`RunConfig`], [`Strategy`]) and what it
//! reports when it passes ([`Summary`]).

use crate::driver::RuntimeOptions;
use c11check_explore::Stats;
use c11check_model::Model;
use std::time::Duration;

/// Which explorer runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Every execution once.
    Exhaustive,
    /// `iterations` random executions from `seed`.
    Random { iterations: u64, seed: u64 },
    /// `iterations` random executions from `seed` on the live memory (no
    /// graph: long executions in bounded memory, see `c11check_model::live_memory`).
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
    /// read may wait for a store first (see `live_run.rs`).
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
    /// Live random runs: the most stores the live memory held at once in
    /// one execution (flat in an execution's length while its threads keep
    /// reading newer stores; see `model::live_memory`'s pruning).
    pub peak_stores: Option<usize>,
}

impl Summary {
    /// The summary of an exploration of execution graphs (no live-run
    /// counts).
    pub(crate) fn of_graphs(stats: Stats) -> Summary {
        Summary {
            blocked: stats.blocked,
            stats,
            behaviours: None,
            operations: None,
            peak_stores: None,
        }
    }
}
