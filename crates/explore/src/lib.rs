//! Exploration of the executions of a program under a memory model.
//!
//! A front end implements [`Driver`]: given an execution graph, it says what a
//! thread does next (replaying the thread against the values its earlier reads
//! returned). An exploration strategy decides which thread runs and what each
//! read reads from, and hands every complete execution to a [`Visitor`].
//!
//! [`exhaustive`] visits every consistent execution once (reads-from
//! equivalence); see its module documentation for the algorithm.

pub mod bound;
pub mod exhaustive;
pub mod random;
pub mod straight;

use c11check_model::{Action, Analysis, EventId, ExecutionGraph, Loc, Model};
use std::time::Duration;

/// A program under test, as seen by the explorers.
pub trait Driver {
    /// The graph before any thread has run: locations with initial values and the root threads.
    fn initial_graph(&mut self) -> ExecutionGraph;
    /// What thread `t` does next, given the events it has already performed in `g`
    /// (in program order, with the values its reads returned). A front end that
    /// discovers locations as the program runs may add them to `g`.
    fn next_action(&mut self, g: &mut ExecutionGraph, t: u32) -> Action;
    /// Called before the explorer continues a graph other than the one it was
    /// building (a pending branch or a revisit): a front end that keeps running
    /// threads between calls must bring them to the state `g` describes.
    fn begin(&mut self, _g: &mut ExecutionGraph) {}
}

/// Every combination of possible mo-last writes at the observed locations.
pub(crate) fn final_combinations(a: &Analysis<'_>, observed: &[Loc]) -> Vec<Vec<(Loc, EventId)>> {
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

/// The threads that can take a step in `g` (in thread order, with their next
/// action), or, when none can, how the execution ends.
///
/// With `first_only`, only the first one, passing over a thread whose next
/// step takes a lock that is held ([`lock_held`]) or permits that are not
/// there ([`permits_missing`]): that step could only fail and wait, an
/// execution that shows nothing the one where it waits its turn does not.
/// It runs once the lock is free (the permits there), or when no other
/// thread can run (then it fails, and the execution shows the deadlock).
pub(crate) fn runnable<D: Driver>(
    driver: &mut D,
    g: &mut ExecutionGraph,
    first_only: bool,
) -> Result<Vec<(u32, Action)>, Ending> {
    let mut steps = Vec::new();
    runnable_into(driver, g, first_only, &[], &mut steps).map(|()| steps)
}

/// [`runnable`] into `steps` (emptied first), which the caller keeps; the
/// threads `last` marks come after the others.
pub(crate) fn runnable_into<D: Driver>(
    driver: &mut D,
    g: &mut ExecutionGraph,
    first_only: bool,
    last: &[bool],
    steps: &mut Vec<(u32, Action)>,
) -> Result<(), Ending> {
    steps.clear();
    let mut waits_for_lock = None;
    let (mut blocked, mut waiting) = (false, false);
    // A thread that ended the program (`exit()`), and whether a thread is
    // blocked for good (a failed assumption, a bound) rather than waiting.
    let (mut exited, mut cut) = (false, false);
    let n = g.num_threads() as u32;
    // Every step asks: without threads to put last, one pass in order.
    let is_last = |t: u32| last.get(t as usize).copied().unwrap_or(false);
    let second = if last.is_empty() { 0..0 } else { 0..n };
    let order = (0..n)
        .filter(|&t| !is_last(t))
        .chain(second.filter(|&t| is_last(t)));
    for t in order {
        if !g.is_started(t) || g.is_finished(t) {
            continue;
        }
        if g.is_blocked(t) {
            blocked = true;
            match g.last_event(t).map(|e| e.action) {
                Some(Action::Block {
                    reason: c11check_model::BlockReason::Exit,
                }) => exited = true,
                Some(Action::Block {
                    reason: c11check_model::BlockReason::Assume | c11check_model::BlockReason::Bound,
                }) => cut = true,
                _ => {}
            }
            continue;
        }
        let action = driver.next_action(g, t);
        if let Action::Join { child } = action {
            if !g.is_finished(child) {
                waiting = true;
                continue;
            }
        }
        if first_only {
            if let Action::Cas {
                loc,
                lock: true,
                take,
                expected,
                ..
            } = action
            {
                let waits = if take {
                    permits_missing(g, loc, expected)
                } else {
                    lock_held(g, loc)
                };
                if waits {
                    waits_for_lock.get_or_insert((t, action));
                    continue;
                }
            }
            steps.push((t, action));
            break;
        }
        steps.push((t, action));
    }
    if steps.is_empty() {
        steps.extend(waits_for_lock);
    }
    if !steps.is_empty() {
        Ok(())
    } else if exited && !cut {
        // The program ended: threads still waiting stop with it.
        Err(Ending::Complete)
    } else if blocked {
        Err(Ending::Blocked)
    } else if waiting {
        Err(Ending::Deadlock)
    } else {
        Err(Ending::Complete)
    }
}

/// Whether the lock at `loc` is held in `g`: some thread's last write to it
/// took it (a lock acquisition or a `try_lock` that succeeded; a release is
/// a store).
pub(crate) fn lock_held(g: &ExecutionGraph, loc: Loc) -> bool {
    (0..g.num_threads() as u32).any(|t| {
        g.thread_events(t)
            .iter()
            .rev()
            .find(|e| e.loc() == Some(loc) && e.is_write())
            .is_some_and(|e| matches!(e.action, Action::Cas { .. }))
    })
}

/// Whether no take of `expected` permits at `loc` can succeed in `g`: every
/// write to `loc` that no read-modify-write has read yet (for a count only
/// read-modify-writes update, the one that ends modification order) holds
/// fewer than `expected`.
pub(crate) fn permits_missing(
    g: &ExecutionGraph,
    loc: Loc,
    expected: c11check_model::Value,
) -> bool {
    let mut consumed: Vec<EventId> = Vec::new();
    let mut writes: Vec<EventId> = vec![EventId::init(loc)];
    for (id, e) in g.events() {
        if e.loc() != Some(loc) {
            continue;
        }
        if e.is_rmw() {
            consumed.extend(e.rf);
        }
        if e.is_write() {
            writes.push(id);
        }
    }
    writes
        .iter()
        .all(|w| consumed.contains(w) || g.written_value(*w) < expected)
}

/// Whether some thread of `g` stopped at a loop or step bound.
pub(crate) fn cut_by_bound(g: &ExecutionGraph) -> bool {
    (0..g.num_threads() as u32).any(|t| {
        matches!(
            g.last_event(t).map(|e| e.action),
            Some(Action::Block {
                reason: c11check_model::BlockReason::Bound
            })
        )
    })
}

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
    /// decrement (see [`exhaustive`]); a front end that knows the order is
    /// observable turns this off (the explorer also finds out by itself, and
    /// starts over).
    pub commute_refcounts: bool,
    /// Explore only the executions with a schedule that preempts a thread at
    /// most this many times (see [`bound`]); the exhaustive explorer only.
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

/// Why an execution is not a normal complete one.
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

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every thread finished.
    Complete,
    /// Some thread stopped on a failed assume or an exceeded bound.
    Blocked,
    /// Every remaining thread waits for another (join cycle or lock).
    Deadlock,
}

/// One execution handed to the visitor.
pub struct Execution<'a> {
    pub graph: &'a ExecutionGraph,
    pub analysis: &'a Analysis<'a>,
    /// For each observed location, the write that is last in modification order.
    pub finals: &'a [(Loc, EventId)],
    pub ending: Ending,
}

/// Receives executions; returning `false` stops the exploration.
pub trait Visitor {
    fn visit(&mut self, exec: &Execution<'_>) -> bool;
    /// The exploration starts over (it found the order of reference-count
    /// updates observable, see [`exhaustive`]): executions visited so far will
    /// be visited again. Each was a real execution.
    fn restart(&mut self) {}
    /// Called about once a second while the exploration runs, inside long
    /// executions too (`stats` so far, `elapsed` set): for progress lines.
    fn progress(&mut self, _stats: &Stats) {}
}

impl<F: FnMut(&Execution<'_>) -> bool> Visitor for F {
    fn visit(&mut self, exec: &Execution<'_>) -> bool {
        self(exec)
    }
}
