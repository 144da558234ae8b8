//! What an exploration is asked to do ([`Config`], [`Shard`]) and what it
//! reports ([`Stats`]).

use c11check_model::{Loc, Model};
use std::time::Duration;

/// Limits and choices for one exploration.
#[derive(Clone, Debug)]
pub struct Config {
    pub model: Model,
    /// Locations whose final value is part of the outcome: executions that differ
    /// only in which write is mo-last there are counted separately.
    pub observed: Vec<Loc>,
    /// Stop after this many executions (the report says the run was cut).
    pub max_executions: Option<u64>,
    /// Stop after this much time.
    pub time_budget: Option<Duration>,
    /// Explore one order of reference-count updates per choice of the last
    /// decrement (see [`crate::exhaustive`]); a front end that knows the order is
    /// observable turns this off (the explorer also finds out by itself, and
    /// starts over).
    pub commute_refcounts: bool,
    /// Explore only the executions with a schedule that preempts a thread at
    /// most this many times (see [`crate::bound`]); the exhaustive explorer only.
    pub preemption_bound: Option<u32>,
    /// Explore only this shard's share of the executions (see [`Shard`]).
    pub shard: Option<Shard>,
}

/// Shard `index` of `count` (0-based): a deterministic share of a run's
/// executions such that the shards `0..count` together explore each
/// execution exactly once (exhaustive runs; see `exhaustive::Path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;
    /// `I/N` with `1 <= I <= N` (shards are numbered from 1 on the command
    /// line, as CI matrices and `--partition` count).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a shard: write I/N with 1 <= I <= N (e.g. 2/4)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let i: u32 = i.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        if i == 0 || n == 0 || i > n {
            return Err(bad());
        }
        Ok(Shard {
            index: i - 1,
            count: n,
        })
    }
}

impl Config {
    pub fn new(model: Model) -> Self {
        Config {
            model,
            observed: Vec::new(),
            max_executions: None,
            time_budget: None,
            commute_refcounts: true,
            preemption_bound: None,
            shard: None,
        }
    }
}

/// What the explorer reports at the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Complete, consistent executions visited.
    pub executions: u64,
    /// Executions where some thread could not go on (failed assume, exceeded
    /// bound, deadlock); they are visited too, flagged as blocked.
    pub blocked: u64,
    /// Executions cut by a loop or step bound (a subset of `blocked`).
    pub bound_hits: u64,
    /// Graphs whose exploration stopped because no consistent choice remained
    /// (zero on correct runs; kept as a diagnostic).
    pub dead_ends: u64,
    /// Backward revisits performed.
    pub revisits: u64,
    /// With a preemption bound: complete executions found to need more
    /// preemptions (not visited, not counted), and partial ones abandoned
    /// because every execution they lead to would.
    pub over_bound: u64,
    pub bound_pruned: u64,
    /// The share of the tree explored so far, in units of 2^-63 (an
    /// estimate: see `Stats::done_fraction`).
    pub done: u64,
    /// Exploration stopped early (execution or time budget).
    pub cut: bool,
    pub elapsed: Duration,
}

impl Stats {
    /// The estimated share of an exhaustive run's executions explored so
    /// far (Knuth's estimator over the tree of branches: exact at the end,
    /// rough early on, while the first subtrees stand for the rest).
    pub fn done_fraction(&self) -> f64 {
        self.done as f64 / (1u64 << 63) as f64
    }
    /// Adds `other`'s counts to these (the longer time; cut if either was).
    pub fn add(&mut self, other: &Stats) {
        self.executions += other.executions;
        self.blocked += other.blocked;
        self.bound_hits += other.bound_hits;
        self.dead_ends += other.dead_ends;
        self.revisits += other.revisits;
        self.over_bound += other.over_bound;
        self.bound_pruned += other.bound_pruned;
        self.done = self.done.saturating_add(other.done);
        self.cut |= other.cut;
        self.elapsed = self.elapsed.max(other.elapsed);
    }
}
