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
//!   revisit).
//! * A write (or an RMW) may be read by reads added before it (a backward
//!   revisit): for such a read `r`, the graph is cut to the events added before
//!   `r` plus the porf-prefix of the write, and `r` reads from the write.
//!   Several graphs differ only in the part a revisit removes; exactly one of
//!   them performs it (`maximal_extension`): the one whose removed reads each
//!   read the *canonical* source given the kept part, in the order they were
//!   added. The canonical source is the highest-ranked write (by thread, then
//!   program order) that the read can take while that write ends modification
//!   order, judged in a graph of the kept events, with the revisiting write
//!   reduced to its read half (it constrains the order but cannot be read).
//!   Such a choice is always consistent, so the representative exists; and it
//!   depends only on the kept part, so it is unique. Events in the prefix of a
//!   write that already revisited are never removed again.
//!
//! Lock acquisitions (a compare-exchange whose thread waits when it fails)
//! are scheduled only while their lock is free, read only writes that leave
//! it free, and a revisit that would make one find the lock held takes it
//! back instead: its thread tries again after the release. An execution where
//! a thread waits for a lock that a later release hands over shows nothing
//! the one where it waits its turn does not, so none is explored; a thread
//! still finds a lock held when no other thread can run (a deadlock).
//!
//! Memory is one graph per pending branch on a stack (polynomial in the
//! program); nothing is remembered about visited executions.
//!
//! This file holds the branch loop (a branch runs threads until it ends or
//! a choice point, leaving the other choices as pending branches); the
//! choices themselves are in `reads` (forward: the sources of a new read),
//! `revisits` (backward: earlier reads a new write may feed), `refcounts`
//! (reference counts, one order of their updates), `bounded` (the
//! preemption bound) and `parallel` (workers and shards).

mod bounded;
mod parallel;
mod reads;
mod refcounts;
mod revisits;

use self::{bounded::*, parallel::*, reads::*, refcounts::*, revisits::*};
use crate::{Config, Driver, Ending, Execution, Stats, Visitor};
use c11check_model::{
    forced_last_in_part, highest_write_ending_mo, is_consistent, is_sc_consistent_given_coherence,
    needs_sc_search, Action, Analysis, EventId, ExecutionGraph, ExtensionVerdict,
    LocationCoherence, Model, RmwChain, RmwOp, View, WriteRef,
};
use crossbeam_deque::{Injector, Steal};
use crossbeam_utils::Backoff;
pub use parallel::explore_parallel;
use smallvec::SmallVec;
use std::rc::Rc;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::time::Instant;

/// A branch to run: a graph to continue, and possibly a write whose backward
/// revisits have still to be computed.
struct Item {
    g: ExecutionGraph,
    written: Option<EventId>,
    path: Path,
    /// With a preemption bound: a schedule of the parent's graph, cut to
    /// what this one kept, to start the bound's witness from (see
    /// [`crate::bound::Witness::adopt`]).
    schedule: Vec<u32>,
}

/// Where a branch sits in the tree of branches: how many branchings lie
/// above it, and a hash of which child it is at each. The tree is the
/// same in every run of a program, so this names a branch across runs
/// (what shards split by).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Path {
    depth: u32,
    hash: u64,
    /// The share of the whole tree the branch stands for, in units of
    /// 2^-63 (Knuth's estimate: a branch's share is split evenly between
    /// the execution it runs to and the children it makes; see
    /// [`Explorer::run_branch`]).
    weight: u64,
}

/// The whole tree's weight (see [`Path::weight`]).
pub(crate) const WHOLE: u64 = 1 << 63;

impl Default for Path {
    fn default() -> Self {
        Path {
            depth: 0,
            hash: 0,
            weight: WHOLE,
        }
    }
}

impl Path {
    /// The path of the `serial`th child pushed by the branch at `self`.
    fn child(self, serial: u32) -> Path {
        let mut h = self.hash ^ (serial as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 31;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 29;
        Path {
            depth: self.depth + 1,
            hash: h,
            weight: 0,
        }
    }
}

/// A pending branch. (Graphs are most of the stack, held inline as before:
/// boxing them would cost an allocation per branch.)
#[allow(clippy::large_enum_variant)]
enum Pending {
    Graph(Item),
    /// The sources of `read` still to try (the last first), each a branch:
    /// one copy of the graph for all of them, made into a graph of its own
    /// when its turn comes. (A read with many possible sources would
    /// otherwise hold a copy per source.)
    Sources {
        base: Rc<ExecutionGraph>,
        read: EventId,
        sources: Vec<(EventId, bool, Path)>,
        schedule: Vec<u32>,
    },
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
    stack: Vec<Pending>,
    start: Instant,
    stop: bool,
    /// Steps and revisit checks since the clock was last read (see
    /// [`Explorer::tick`]).
    ticks: u32,
    /// When the visitor was last told of progress (time since `start`).
    last_progress: std::time::Duration,
    /// Reference-count updates commute (their order is not explored) until
    /// the program could observe that order: a plain access to a count, or a
    /// SeqCst fence (whose order follows theirs) in the same execution, or the
    /// SC or a hardware model (their global orders follow every RMW order).
    /// Then the exploration restarts with them as plain RMWs.
    commute: bool,
    /// Locations that some graph updated as a reference count.
    refcount_locs: Vec<bool>,
    /// Locations some action other than a reference-count update accessed,
    /// and whether some action was a seq_cst fence, in any graph (see
    /// `refcount_order_observable`).
    plain_locs: Vec<bool>,
    sc_fence_seen: bool,
    restart: bool,
    /// The buffer `pick` asks for runnable threads in.
    steps: Vec<(u32, Action)>,
    /// The buffers `add_read` lists a location's writes, the sources worth
    /// trying (with their quick verdicts) and the consistent ones in.
    writes: Vec<WriteRef>,
    candidates: Vec<Candidate>,
    options: Vec<(EventId, bool)>,
    /// The buffers `canonical_source` ranks candidates in.
    canonical: CanonicalScratch,
    /// The other workers of a parallel exploration, if any.
    shared: Option<&'a Shared>,
    /// Executions and blocked ones already added to `Shared::ended`.
    counted: u64,
    /// This worker's number in a parallel exploration (0 alone).
    worker: usize,
    /// The running branch's place in the tree, and how many children it
    /// pushed so far.
    path: Path,
    children: u32,
    /// While a sharded run splits the tree (see [`Explorer::split_for`]):
    /// executions count only in the shard their branch's hash names.
    splitting: bool,
    /// The running branch's schedule within the preemption bound, kept as
    /// its graph grows (see [`crate::bound::Witness`]).
    witness: crate::bound::Witness,
}

/// Explores every consistent execution of the program `driver` describes.
pub fn explore<D: Driver, V: Visitor>(driver: &mut D, config: &Config, visitor: &mut V) -> Stats {
    let start = Instant::now();
    let g = driver.initial_graph();
    let mut ex = Explorer::new(driver, config, visitor, None, start);
    ex.start_from(g);
    while let Some(item) = ex.next_branch() {
        ex.run_branch(item);
        if ex.restart {
            let g = ex.driver.initial_graph();
            ex.start_from(g);
            continue;
        }
        if ex.stop {
            // A budget that ran out inside an execution abandoned it.
            ex.stats.cut |= !ex.stack.is_empty();
            break;
        }
    }
    ex.stats.elapsed = start.elapsed();
    ex.stats
}

impl<'a, D: Driver, V: Visitor> Explorer<'a, D, V> {
    fn new(
        driver: &'a mut D,
        config: &'a Config,
        visitor: &'a mut V,
        shared: Option<&'a Shared>,
        start: Instant,
    ) -> Self {
        Explorer {
            driver,
            config,
            visitor,
            stats: Stats::default(),
            stack: Vec::new(),
            start,
            stop: false,
            ticks: 0,
            last_progress: std::time::Duration::ZERO,
            commute: config.commute_refcounts && !config.model.orders_every_location(),
            refcount_locs: Vec::new(),
            plain_locs: Vec::new(),
            sc_fence_seen: false,
            restart: false,
            steps: Vec::new(),
            writes: Vec::new(),
            candidates: Vec::new(),
            options: Vec::new(),
            canonical: CanonicalScratch::default(),
            shared,
            counted: 0,
            worker: 0,
            path: Path::default(),
            children: 0,
            splitting: false,
            witness: crate::bound::Witness::default(),
        }
    }

    /// Runs a branch and passes its weight on (Knuth's estimate of the
    /// tree's size, in the order the run made its choices): where it
    /// pushed `m` alternatives, each gets an even share of what the run
    /// carried there with the run's own continuation; what the run still
    /// carries at its end is its own execution's, now done.
    fn run_branch(&mut self, item: Item) {
        let base = self.stack.len();
        let mut carried = item.path.weight;
        self.run(item);
        let base = base.min(self.stack.len());
        for p in &mut self.stack[base..] {
            match p {
                Pending::Graph(item) => {
                    let share = carried / 2;
                    item.path.weight = share;
                    carried -= share;
                }
                Pending::Sources { sources, .. } => {
                    let share = carried / (sources.len() as u64 + 1);
                    for s in sources.iter_mut() {
                        s.2.weight = share;
                    }
                    carried -= share * sources.len() as u64;
                }
            }
        }
        self.stats.done += carried;
    }

    /// Starts the exploration from the initial graph `g` (the whole tree,
    /// or this shard's part), and again, without commuting reference
    /// counts, while a branch finds their order observed (see `commute`).
    fn start_from(&mut self, mut g: ExecutionGraph) {
        loop {
            if self.restart {
                self.restart = false;
                self.commute = false;
                self.stack.clear();
                self.stats = Stats::default();
                self.visitor.restart();
            }
            match self.config.shard {
                Some(shard) => self.split_for(shard, g),
                None => self.push_root(g),
            }
            if !self.restart {
                return;
            }
            g = self.driver.initial_graph();
        }
    }

    /// Pushes the root branch: the initial graph.
    fn push_root(&mut self, g: ExecutionGraph) {
        self.stack.push(Pending::Graph(Item {
            g,
            written: None,
            path: Path::default(),
            schedule: Vec::new(),
        }));
    }

    /// The path of the next child the running branch pushes.
    fn child_path(&mut self) -> Path {
        let p = self.path.child(self.children);
        self.children += 1;
        p
    }

    /// Whether an execution that ends in the running branch is this
    /// shard's: while the tree is split, by its branch's hash (every shard
    /// runs it); after, every execution of the branches this shard got.
    fn owns_running_branch(&self) -> bool {
        match self.config.shard {
            Some(s) if self.splitting => self.path.hash % s.count as u64 == s.index as u64,
            _ => true,
        }
    }
}

impl<D: Driver, V: Visitor> Explorer<'_, D, V> {
    /// The branch on top of the stack, taken off it.
    fn next_branch(&mut self) -> Option<Item> {
        let (read, (w, sp, path), mut g, schedule) = match self.stack.pop()? {
            Pending::Graph(item) => return Some(item),
            Pending::Sources {
                base,
                read,
                mut sources,
                schedule,
            } => {
                let next = sources.pop().expect("a source left");
                let (g, schedule) = match sources.is_empty() {
                    true => (
                        Rc::try_unwrap(base).unwrap_or_else(|shared| (*shared).clone()),
                        schedule,
                    ),
                    false => {
                        let g = (*base).clone();
                        let mine = schedule.clone();
                        self.stack.push(Pending::Sources {
                            base,
                            read,
                            sources,
                            schedule,
                        });
                        (g, mine)
                    }
                };
                (read, next, g, schedule)
            }
        };
        g.set_rf(read, w);
        g.update_event(read, |e| e.spurious_fail = sp);
        let written = g.event(read).is_write().then_some(read);
        Some(Item {
            g,
            written,
            path,
            schedule,
        })
    }

    /// Called at every step and revisit check: every 256th reads the clock,
    /// stops the exploration when its time budget is spent (inside an
    /// execution too: one execution of a program with many threads, with
    /// the revisits it prepares, can take longer than the budget), and
    /// lets the visitor show progress once a second. Returns whether to
    /// stop.
    fn tick(&mut self) -> bool {
        self.ticks += 1;
        if self.ticks < 256 {
            return self.stop;
        }
        self.ticks = 0;
        let now = self.start.elapsed();
        if self.config.time_budget.is_some_and(|b| now >= b) {
            self.stop = true;
            self.stats.cut = true;
        }
        if now - self.last_progress >= std::time::Duration::from_secs(1) {
            self.last_progress = now;
            self.stats.elapsed = now;
            match self.shared {
                // Every worker records its statistics; the first reports
                // the sum.
                Some(shared) => {
                    let mut all = shared.progress.lock().unwrap_or_else(|e| e.into_inner());
                    all[self.worker] = self.stats.clone();
                    if self.worker == 0 {
                        let mut sum = Stats::default();
                        all.iter().for_each(|s| sum.add(s));
                        sum.elapsed = now;
                        drop(all);
                        self.visitor.progress(&sum);
                    }
                }
                None => self.visitor.progress(&self.stats),
            }
        }
        self.stop
    }

    fn run(&mut self, item: Item) {
        let Item {
            mut g,
            written,
            path,
            schedule,
        } = item;
        self.path = path;
        self.children = 0;
        // A revisit fixes the part of the graph no later revisit removes:
        // if that part is already beyond the bound, so is everything this
        // branch leads to (its own revisits included).
        let mut ahead = Ahead::default();
        // The schedule kept for the bound starts from the parent's, cut to
        // what this branch kept.
        if self.config.preemption_bound.is_some() {
            let rules = self.bound_rules();
            self.witness.restart(&g, &schedule, rules);
        }
        if self.partial_over_bound(&g, &mut ahead) || self.ahead_over_bound(&g, &mut ahead) {
            self.stats.bound_pruned += 1;
            return;
        }
        if let Some(w) = written {
            self.calc_revisits(&g, w);
        }
        self.driver.begin(&mut g);
        loop {
            if self.tick() {
                return;
            }
            match self.pick(&mut g, ahead.last()) {
                Pick::Done(ending) => {
                    self.finish(&g, ending);
                    return;
                }
                Pick::Run(_, action)
                    if self.commute && self.refcount_order_observable(&g, &action) =>
                {
                    self.restart = true;
                    return;
                }
                Pick::Run(t, action) => match action {
                    Action::Load { .. } | Action::Rmw { .. } | Action::Cas { .. } => {
                        match self.add_read(&mut g, t, action) {
                            Some(id) => {
                                if g.event(id).is_write() {
                                    if self.ahead_over_bound(&g, &mut ahead) {
                                        self.stats.bound_pruned += 1;
                                        return;
                                    }
                                    self.calc_revisits(&g, id);
                                }
                                if self.commute && g.event(id).refcount_class() == Some(true) {
                                    self.calc_refcount_swaps(&g, id);
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
                        if self.ahead_over_bound(&g, &mut ahead) {
                            self.stats.bound_pruned += 1;
                            return;
                        }
                        self.calc_revisits(&g, id);
                    }
                    Action::Spawn { .. } => {
                        let id = g.push(t, action);
                        let child = crate::step::spawn_child(&mut g, id);
                        g.update_event(id, |e| e.action = Action::Spawn { child });
                    }
                    Action::Finish | Action::Join { .. } => {
                        g.push(t, action);
                        if self.partial_over_bound(&g, &mut ahead)
                            || self.ahead_over_bound(&g, &mut ahead)
                        {
                            self.stats.bound_pruned += 1;
                            return;
                        }
                    }
                    _ => {
                        g.push(t, action);
                    }
                },
            }
        }
    }

    /// The lowest thread that can take a step, and its action.
    fn pick(&mut self, g: &mut ExecutionGraph, last: &[bool]) -> Pick {
        match crate::step::runnable_into(self.driver, g, true, last, &mut self.steps) {
            Ok(()) => Pick::Run(self.steps[0].0, self.steps[0].1),
            Err(ending) => Pick::Done(ending),
        }
    }

    fn finish(&mut self, g: &ExecutionGraph, ending: Ending) {
        if !self.owns_running_branch() {
            return;
        }

        let model = self.config.model;
        if let Some(k) = self.config.preemption_bound {
            let rules = self.bound_rules();
            if !self.witness.within(g, k, rules) {
                self.stats.over_bound += 1;
                return;
            }
        }
        // Every step kept the graph consistent: a complete execution with no
        // observed location needs happens-before (races) and nothing per
        // location, not even the seq_cst search.
        let analysis = if ending == Ending::Complete && self.config.observed.is_empty() {
            Analysis::happens_before(g, model)
        } else {
            Analysis::new(g, model)
        };
        let a = match analysis {
            Ok(a) => a,
            Err(_) => {
                self.stats.dead_ends += 1;
                return;
            }
        };
        let mut keep_going = true;
        if ending == Ending::Complete {
            let combos = crate::step::final_combinations(&a, &self.config.observed);
            for finals in combos {
                // With no location observed the graph is consistent as it
                // is (every step kept it so): no search is needed.
                debug_assert!(!finals.is_empty() || is_consistent(g, model));
                if !finals.is_empty() && a.find_mo(&finals).is_none() {
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
            if crate::step::cut_by_bound(g) {
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
        let ended = match self.shared {
            Some(shared) => {
                let n = self.stats.executions + self.stats.blocked - self.counted;
                self.counted += n;
                shared.ended.fetch_add(n, Relaxed) + n
            }
            None => self.stats.executions + self.stats.blocked,
        };
        let over_count = self.config.max_executions.is_some_and(|m| ended >= m);
        let over_time = self
            .config
            .time_budget
            .is_some_and(|b| self.start.elapsed() >= b);
        if !keep_going || over_count || over_time {
            self.stop = true;
        }
    }
}
