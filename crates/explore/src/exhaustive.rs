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

use crate::{Config, Driver, Ending, Execution, Stats, Visitor};
use c11check_model::{
    forced_last_in_part, highest_write_ending_mo, is_consistent, is_sc_consistent_given_coherence,
    needs_sc_search, Action, Analysis, EventId, ExecutionGraph, ExtensionVerdict,
    LocationCoherence, Model, RmwChain, RmwOp, View, WriteRef,
};
use crossbeam_deque::{Injector, Steal};
use crossbeam_utils::Backoff;
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

/// What the running branch knows of the graphs it leads to, with a
/// preemption bound (see `Explorer::ahead_over_bound`).
#[derive(Default)]
struct Ahead {
    /// The graph is beyond the bound (so are its completions).
    whole_over: bool,
    /// Threads whose revisits lead only to graphs beyond it (for the rest
    /// of the branch: the parts asked about only grow).
    dead: Vec<bool>,
    /// For a thread found not to be: its length and the fixed part's size
    /// then.
    live_at: Vec<Option<(u32, u32)>>,
    /// Parts of the graph asked about (see `bound::part_within`), with the
    /// answer: a part within the bound holds its own parts within it, a
    /// part beyond it is held beyond it by every part holding it.
    known: Vec<(Vec<u32>, bool)>,
}

impl Ahead {
    /// [`crate::bound::part_within`], answered from the parts already
    /// asked about when one holds the answer.
    fn part_within(
        &mut self,
        g: &ExecutionGraph,
        part: &[u32],
        k: u32,
        rules: crate::bound::Rules,
    ) -> bool {
        // `a` inside `b` (a thread past either's end has no events in it).
        let inside = |a: &[u32], b: &[u32]| {
            a.iter()
                .enumerate()
                .all(|(t, &x)| x <= b.get(t).copied().unwrap_or(0))
        };
        for (known, within) in &self.known {
            if *within && inside(part, known) {
                return true;
            }
            if !*within && inside(known, part) {
                return false;
            }
        }
        let within = crate::bound::part_within(g, part, k, rules);
        self.known.push((part.to_vec(), within));
        within
    }
}

impl Ahead {
    /// The threads to run after the others: while the graph is beyond the
    /// bound, those whose revisits all lead beyond it. Once only such
    /// threads are left the branch ends; running the others first gets
    /// there before their choices branch. (Any choice of the next thread
    /// that depends on the graph alone keeps the exploration complete and
    /// optimal, and this one does: the flags only follow the graph.)
    fn last(&self) -> &[bool] {
        if self.whole_over {
            &self.dead
        } else {
            &[]
        }
    }
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

/// `canonical_source`'s candidate writes and their quick verdicts, kept
/// between calls (a revisit check asks for several).
#[derive(Default)]
struct CanonicalScratch {
    cands: Vec<EventId>,
    quick: Vec<Option<bool>>,
    ranked: Vec<WriteRef>,
}

/// A source a new read may take: the write, whether the read fails
/// spuriously, and the quick verdicts for how the access ends with it and,
/// for an RMW, for writing without being held to atomicity (see `add_read`).
type Candidate = (EventId, bool, ExtensionVerdict, Option<bool>);

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

/// What the workers of a parallel exploration share: branches given away
/// for idle workers to take, and the flags that end the exploration.
pub(crate) struct Shared {
    given: Injector<Given>,
    jobs: usize,
    /// Workers with no branch of their own (they wait for one given away).
    idle: AtomicUsize,
    /// A visitor asked to stop, or a budget ran out.
    stop: AtomicBool,
    /// Some worker found that the program observes the order of reference
    /// counts: the exploration starts over with them as plain RMWs.
    restart: AtomicBool,
    /// Executions and blocked executions of all workers (for
    /// `max_executions`).
    ended: AtomicU64,
    /// The workers' statistics so far, for progress reports.
    progress: std::sync::Mutex<Vec<Stats>>,
}

impl Shared {
    /// A branch given away, waiting while every other worker still runs
    /// some; `None` once every worker is idle and nothing is left (or the
    /// exploration stops).
    fn take(&self) -> Option<Item> {
        let backoff = Backoff::new();
        self.idle.fetch_add(1, SeqCst);
        loop {
            if self.stop.load(SeqCst) || self.restart.load(SeqCst) {
                return None;
            }
            // Busy while it looks, so that the others do not end early.
            self.idle.fetch_sub(1, SeqCst);
            loop {
                match self.given.steal() {
                    Steal::Success(Given(item)) => return Some(item),
                    Steal::Retry => continue,
                    Steal::Empty => break,
                }
            }
            self.idle.fetch_add(1, SeqCst);
            if self.given.is_empty() && self.idle.load(SeqCst) == self.jobs {
                return None;
            }
            if backoff.is_completed() {
                std::thread::sleep(std::time::Duration::from_micros(50));
            } else {
                backoff.snooze();
            }
        }
    }
}

/// [`explore`] on `jobs` worker threads: each makes its own driver and
/// visitor with `make` and explores branches; a worker whose branches run
/// out takes one another worker gave away (a worker gives away its oldest
/// pending branch, the root of its largest subtree, while some worker is
/// idle). Each branch is a graph of its own, so every execution is still
/// explored exactly once, by one worker: the counts are a sequential run's.
/// Returns the summed statistics and what `finish` made of each worker's
/// visitor (on the worker's thread, before its driver is dropped), to be
/// merged by the caller. With a visitor that stops or `max_executions`, which
/// executions were explored depends on the workers' timing.
pub fn explore_parallel<D: Driver, V: Visitor, R: Send>(
    jobs: usize,
    config: &Config,
    make: &(dyn Fn() -> (D, V) + Sync),
    finish: &(dyn Fn(V) -> R + Sync),
) -> (Stats, Vec<R>) {
    let start = Instant::now();
    let mut config = config.clone();
    loop {
        let shared = Shared {
            given: Injector::new(),
            jobs: jobs.max(1),
            idle: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            restart: AtomicBool::new(false),
            ended: AtomicU64::new(0),
            progress: std::sync::Mutex::new(vec![Stats::default(); jobs.max(1)]),
        };
        let results: Vec<(Stats, R)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..jobs.max(1))
                .map(|w| {
                    let (shared, config) = (&shared, &config);
                    scope.spawn(move || worker(w, shared, config, make, finish, start))
                })
                .collect();
            workers
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        if shared.restart.load(SeqCst) {
            config.commute_refcounts = false;
            continue;
        }
        let mut stats = Stats::default();
        let mut visitors = Vec::with_capacity(results.len());
        for (s, v) in results {
            stats.add(&s);
            visitors.push(v);
        }
        stats.cut |= shared.stop.load(SeqCst) && !shared.given.is_empty();
        stats.elapsed = start.elapsed();
        return (stats, visitors);
    }
}

/// One worker of [`explore_parallel`]; the first starts from the initial
/// graph.
fn worker<D: Driver, V: Visitor, R>(
    w: usize,
    shared: &Shared,
    config: &Config,
    make: &(dyn Fn() -> (D, V) + Sync),
    finish: &(dyn Fn(V) -> R + Sync),
    start: Instant,
) -> (Stats, R) {
    let (mut driver, mut visitor) = make();
    let mut ex = Explorer::new(&mut driver, config, &mut visitor, Some(shared), start);
    ex.worker = w;
    if w == 0 {
        let g = ex.driver.initial_graph();
        ex.push_root(g);
    }
    loop {
        let item = match ex.next_branch() {
            Some(item) => item,
            None => match shared.take() {
                Some(item) => item,
                None => break,
            },
        };
        ex.run_branch(item);
        if ex.restart {
            shared.restart.store(true, SeqCst);
            break;
        }
        if ex.stop || shared.stop.load(SeqCst) || shared.restart.load(SeqCst) {
            ex.stats.cut |= !ex.stack.is_empty();
            shared.stop.store(!shared.restart.load(SeqCst), SeqCst);
            break;
        }
        ex.give_away();
    }
    ex.stats.elapsed = start.elapsed();
    let stats = ex.stats.clone();
    drop(ex);
    let result = finish(visitor);
    drop(driver);
    (stats, result)
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

    /// Splits the tree from the root `g` for `shard`: level by level, every
    /// shard runs the same branches (the same program gives the same tree)
    /// until a level has at least 256 branches per shard (or none); then the
    /// level's branches, in the order they were made, go round-robin to the
    /// shards, and this shard's are pushed to explore. Executions that end
    /// on the way count in one shard, by their branch's hash. Many more
    /// branches than shards, dealt in turn, keep the shards' work even
    /// (fib_bench: 32 per shard split 525,630 executions 60:40 between two
    /// shards, 256 per shard 46:54).
    fn split_for(&mut self, shard: crate::Shard, g: ExecutionGraph) {
        let want = 256 * shard.count as usize;
        let mut level = vec![Item {
            g,
            written: None,
            path: Path::default(),
            schedule: Vec::new(),
        }];
        self.splitting = true;
        while level.len() < want && !level.is_empty() && !self.stop && !self.restart {
            let mut next = Vec::new();
            for item in level {
                self.run_branch(item);
                if self.stop || self.restart {
                    break;
                }
                while let Some(child) = self.next_branch() {
                    next.push(child);
                }
            }
            level = next;
        }
        self.splitting = false;
        if self.stop || self.restart {
            return;
        }
        let mut mine: Vec<Item> = level
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % shard.count as usize == shard.index as usize)
            .map(|(_, item)| item)
            .collect();
        // This shard's tree: what it did so far and its branches, whose
        // weights are scaled to the rest of the whole.
        let kept: u128 = mine.iter().map(|i| i.path.weight as u128).sum();
        let rest = (WHOLE - self.stats.done.min(WHOLE)) as u128;
        for item in &mut mine {
            item.path.weight = (item.path.weight as u128 * rest / kept.max(1)) as u64;
        }
        for item in mine.into_iter().rev() {
            self.stack.push(Pending::Graph(item));
        }
    }

    /// While some worker is idle, gives away the oldest pending branch (if
    /// another is left to continue with).
    fn give_away(&mut self) {
        let Some(shared) = self.shared else {
            return;
        };
        if shared.idle.load(Relaxed) == 0 || !shared.given.is_empty() || self.stack.len() < 2 {
            return;
        }
        let item = match &mut self.stack[0] {
            Pending::Graph(_) => match self.stack.remove(0) {
                Pending::Graph(item) => item,
                Pending::Sources { .. } => unreachable!(),
            },
            Pending::Sources {
                base,
                read,
                sources,
                schedule,
            } => {
                // The first source to try last: a branch of its own.
                let (w, sp, path) = sources.remove(0);
                let mut g = (**base).clone();
                let read = *read;
                let schedule = schedule.clone();
                if sources.is_empty() {
                    self.stack.remove(0);
                }
                g.set_rf(read, w);
                g.update_event(read, |e| e.spurious_fail = sp);
                let written = g.event(read).is_write().then_some(read);
                Item {
                    g,
                    written,
                    path,
                    schedule,
                }
            }
        };
        let mut item = item;
        item.g.detach_caches();
        shared.given.push(Given(item));
    }
}

/// A branch given away to another worker, its graph detached from this
/// worker's caches.
struct Given(Item);

// SAFETY: an `ExecutionGraph` is not `Send` only for the `Rc`s of its
// per-location caches, which `detach_caches` dropped before the branch was
// wrapped; nothing else in it is shared with the giving thread.
unsafe impl Send for Given {}

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
                        let child = crate::random::spawn_child(&mut g, id);
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

    /// Whether adding `action` to `g` would let the program observe the order
    /// of reference-count updates (see `commute`).
    fn refcount_order_observable(&mut self, g: &ExecutionGraph, action: &Action) -> bool {
        let has_sc_fence =
            |g: &ExecutionGraph| g.events().any(|(_, e)| e.is_fence() && e.ord().is_sc());
        // Every event of every graph was asked about here before it was
        // added: where no action of a kind was ever asked about, no graph
        // has such an event, and the search for one is skipped.
        match *action {
            Action::Fence { ord } if ord.is_sc() => self.sc_fence_seen = true,
            Action::Rmw { op, .. } if op.is_refcount() => {}
            _ => {
                if let Some(loc) = action.loc() {
                    mark(&mut self.plain_locs, loc);
                }
            }
        }
        match *action {
            Action::Fence { ord } if ord.is_sc() => {
                let counts = |g: &ExecutionGraph| g.events().any(|(_, e)| e.is_refcount());
                debug_assert!(self.refcount_locs.contains(&true) || !counts(g));
                self.refcount_locs.contains(&true) && counts(g)
            }
            Action::Rmw { loc, op, .. } if op.is_refcount() => {
                mark(&mut self.refcount_locs, loc);
                let plain = |g: &ExecutionGraph| {
                    g.events()
                        .any(|(_, e)| e.loc() == Some(loc) && !e.is_refcount())
                };
                let plain_seen = self.plain_locs.get(loc.0 as usize) == Some(&true);
                debug_assert!(self.sc_fence_seen || !has_sc_fence(g));
                debug_assert!(plain_seen || !plain(g));
                (self.sc_fence_seen && has_sc_fence(g)) || (plain_seen && plain(g))
            }
            _ => action.loc().is_some_and(|loc| {
                self.refcount_locs.get(loc.0 as usize) == Some(&true)
                    && g.events()
                        .any(|(_, e)| e.loc() == Some(loc) && e.is_refcount())
            }),
        }
    }

    /// The lowest thread that can take a step, and its action.
    fn pick(&mut self, g: &mut ExecutionGraph, last: &[bool]) -> Pick {
        match crate::runnable_into(self.driver, g, true, last, &mut self.steps) {
            Ok(()) => Pick::Run(self.steps[0].0, self.steps[0].1),
            Err(ending) => Pick::Done(ending),
        }
    }

    /// Adds a read of thread `t`, branching over every consistent source; continues
    /// with one of them. Returns `None` when no source is consistent.
    fn add_read(&mut self, g: &mut ExecutionGraph, t: u32, action: Action) -> Option<EventId> {
        let loc = action.loc().unwrap();
        let model = self.config.model;
        // Whether the read (a successful RMW) writes, given the source.
        let writes_when =
            |g: &ExecutionGraph, w: EventId, sp: bool| read_writes(&action, g.written_value(w), sp);
        let weak_expected = match action {
            Action::Cas {
                weak: true,
                expected,
                ..
            } => Some(expected),
            _ => None,
        };
        let id = EventId::new(t, g.thread_len(t));
        // Whether the read fails spuriously, as far as it may.
        let spurious = |g: &ExecutionGraph, w: EventId| -> &'static [bool] {
            if weak_expected == Some(g.written_value(w)) && may_fail_spuriously(g, id, loc, w) {
                &[false, true]
            } else {
                &[false]
            }
        };
        let is_rmw = matches!(action, Action::Rmw { .. } | Action::Cas { .. });
        // Each source (with whether the read fails spuriously) is judged from
        // one analysis of the graph before the read, the full check being
        // needed only where the seq_cst axiom could change: the verdict for
        // how the access ends with it, and, for an RMW that could steal
        // another's source, the verdict when it writes but is not held to
        // atomicity (then it is a read with its success order, and a write
        // nothing is forced after). Sources ruled out both ways are not
        // tried at all.
        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.clear();
        match LocationCoherence::new(g, model, loc) {
            Err(_) => candidates.extend(g.writes_to(loc).into_iter().flat_map(|w| {
                spurious(g, w)
                    .iter()
                    .map(move |&sp| (w, sp, ExtensionVerdict::Unknown, None))
            })),
            Ok(base) => {
                let judge = |w: WriteRef, ord_of_write: bool, wr: bool| {
                    let ord = read_order(&action, ord_of_write);
                    base.read_extension_verdict(t, ord, wr, loc, w)
                };
                let mut writes = std::mem::take(&mut self.writes);
                base.writes_into(&mut writes);
                for &wref in &writes {
                    let w = wref.id;
                    for &sp in spurious(g, w) {
                        let wr = writes_when(g, w, sp);
                        let verdict = judge(wref, wr, wr);
                        let loose = (is_rmw && wr && verdict != ExtensionVerdict::Consistent)
                            .then(|| judge(wref, true, false).known())
                            .flatten();
                        let ruled_out = verdict == ExtensionVerdict::Inconsistent
                            && (!is_rmw || !wr || loose == Some(false));
                        if !ruled_out {
                            candidates.push((w, sp, verdict, loose));
                        }
                    }
                }
                self.writes = writes;
            }
        }
        let id = g.push(t, action);
        // The consistent sources (with whether the read fails spuriously):
        // each but the last continues in a copy of the graph, the last in
        // the graph itself.
        let mut options = std::mem::take(&mut self.options);
        options.clear();
        // A lock acquisition that finds the lock held only waits: when it
        // can take the lock instead (it is scheduled while the lock is free,
        // see `runnable`), waiting is not explored. So its sources that take
        // the lock are judged first, and the others only if none can.
        let lock = matches!(action, Action::Cas { lock: true, .. });
        for taking in [true, false] {
            if !taking && (!lock || !options.is_empty()) {
                break;
            }
            for &(w, sp, verdict, loose) in &candidates {
                if lock && writes_when(g, w, sp) != taking {
                    continue;
                }
                // Try the source in place (a source judged good needs no graph,
                // but for the debug builds' full check); copy the graph only to
                // keep it.
                if verdict != ExtensionVerdict::Consistent || cfg!(debug_assertions) {
                    g.set_rf(id, w);
                    g.update_event(id, |e| e.spurious_fail = sp);
                }
                if judged_in_full(g, model, verdict) {
                    options.push((w, sp));
                } else if g.event(id).is_rmw()
                    && steals_from_unsettled_rmw(g, id, w, self.commute)
                    && {
                        let full = || Analysis::new_with_loose_rmw(g, model, id).is_ok();
                        debug_assert!(
                            loose.is_none_or(|v| v == full()),
                            "quick loose-RMW check disagrees with the full one"
                        );
                        loose.unwrap_or_else(full)
                    }
                {
                    // The RMW reads a write another, still revisitable RMW read:
                    // this graph is dropped, but its backward revisits (which make
                    // that RMW read from this one) are executions to explore.
                    self.calc_revisits_with(g, id, true);
                }
            }
        }
        self.candidates = candidates;
        let Some((&chosen, others)) = options.split_last() else {
            self.options = options;
            return None;
        };
        let sources: Vec<_> = others
            .iter()
            .map(|&(w, sp)| (w, sp, self.child_path()))
            .collect();
        if !sources.is_empty() {
            let schedule = self.schedule_kept(&[]);
            self.stack.push(Pending::Sources {
                base: Rc::new(g.clone()),
                read: id,
                sources,
                schedule,
            });
        }
        g.set_rf(id, chosen.0);
        g.update_event(id, |e| e.spurious_fail = chosen.1);
        self.options = options;
        Some(id)
    }

    /// Pushes every allowed backward revisit of the reads added before write
    /// `w` (last in its thread, and read by nothing).
    fn calc_revisits(&mut self, g: &ExecutionGraph, w: EventId) {
        self.calc_revisits_with(g, w, false);
    }

    /// Like [`Self::calc_revisits`]; `stealing` says `g` is an intermediate graph
    /// where RMW `w` reads the source of another, still revisitable RMW.
    fn calc_revisits_with(&mut self, g: &ExecutionGraph, w: EventId, stealing: bool) {
        let model = self.config.model;
        let loc = g.loc_of(w).unwrap();
        let commute = self.commute;
        if !stealing {
            debug_assert!(
                is_consistent(g, model),
                "revisits computed on an inconsistent graph"
            );
        }
        // Reads before `w` in its thread are in its prefix.
        let mut reads: Vec<EventId> = Vec::new();
        for t in 0..g.num_threads() as u32 {
            let from = if t == w.thread {
                w.index as usize + 1
            } else {
                0
            };
            let events = g.thread_events(t);
            for (i, e) in events.iter().enumerate().skip(from) {
                if e.revisitable
                    && e.loc() == Some(loc)
                    && e.is_read()
                    && !(commute && e.is_refcount())
                {
                    reads.push(EventId::new(t, i as u32));
                }
            }
        }
        // Most writes have no read to revisit: the prefix is computed only
        // for those that do.
        if reads.is_empty() {
            return;
        }
        let prefix = if commute {
            g.porf_prefix_commuting(w)
        } else {
            g.porf_prefix(w)
        };
        reads.retain(|&r| !prefix.contains(r));
        let needs_sc = std::cell::OnceCell::new();
        // The reference counts' chains in `g`, for every read revisited.
        let counts = std::cell::OnceCell::new();
        // Whether `w` ends modification order in some witness of the
        // consistency of `g` (not stealing): when `w` is last in its thread
        // and read by nothing, the graph without it is consistent (a
        // restriction of `g`), and `w` can follow all of it, a store
        // always, an RMW when its source is forced last there.
        let ends_mo = std::cell::OnceCell::new();
        let w_ends_mo = || {
            *ends_mo.get_or_init(|| {
                g.thread_len(w.thread) == w.index + 1
                    && !g.events().any(|(_, e)| e.rf == Some(w))
                    && (!g.event(w).is_read()
                        || source_forced_last_without(g, &g.full_view(), w, model))
            })
        };
        for r in reads {
            if self.tick() {
                return;
            }
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
            // Where `w` stole `r`'s source: whether that write is forced last
            // in the kept events without `r` and `w` (asked at most once).
            let stolen_last = std::cell::OnceCell::new();
            let stolen_source_last = || {
                *stolen_last.get_or_init(|| {
                    stealing && {
                        let mut part = keep.clone();
                        part.0[r.thread as usize] = r.index;
                        source_forced_last_without(g, &part, w, model)
                    }
                })
            };
            let counts = counts.get_or_init(|| CountChains::of(g, commute));
            if !self.maximal_extension(g, &keep, r, w, !stealing, &stolen_source_last, counts) {
                continue;
            }
            // The kept events but `r`, which is last in its thread, and
            // which nothing kept reads (what reads it came after it, or is
            // in the prefix of `w`, which `r` is not).
            let mut without_r = keep.clone();
            without_r.0[r.thread as usize] = r.index;
            let mut base = Some(g.restrict(&without_r));
            let spurious: &[bool] = match g.event(r).action {
                Action::Cas {
                    weak: true,
                    expected,
                    ..
                } if expected == g.written_value(w) && may_fail_spuriously(g, r, loc, w) => {
                    &[false, true]
                }
                _ => &[false],
            };
            // A lock acquisition revisited by a write that holds the lock
            // (a take, by one that leaves too few permits) would find it
            // held and wait: instead it is taken back, and its thread tries
            // again once the lock is released (see `runnable`).
            let action = g.event(r).action;
            let waits = matches!(action, Action::Cas { lock: true, .. })
                && action.cas_succeeds(g.written_value(w)) == Some(false);
            // Where an RMW stole a source, the kept part is judged at `w`'s
            // location only. Coherent there, it is coherent everywhere (the
            // rest of it is a part of `g`, coherent with `w` loose), but its
            // seq_cst axiom was never checked: where that matters, a
            // consistent verdict says coherent only.
            let sc_matters = stealing && *needs_sc.get_or_init(|| needs_sc_search(g, model));
            for (k, &sp) in spurious.iter().enumerate() {
                // Judged before `base` becomes the last revisit graph (it
                // counts only if no source changes below).
                let quick = {
                    let read = (!waits).then(|| read_writes(&action, g.written_value(w), sp));
                    let kept = base.as_ref().expect("kept until the last");
                    let verdict = match self
                        .revisit_extension_consistent(kept, r, w, read, stealing, &action)
                    {
                        ExtensionVerdict::Consistent if sc_matters => ExtensionVerdict::Coherent,
                        v => v,
                    };
                    // Some witness of the kept part's consistency has `w`
                    // last in modification order: a witness of `g`'s where
                    // it is (the part is closed under po and rf), or, where
                    // `w` stole the source, one of the part without `w`
                    // (the restriction of a consistent graph), where that
                    // source is last, followed by `w`. `r`, last in its
                    // thread and read by nothing kept, reads `w` (and, when
                    // it writes, follows it): no edge of any relation the
                    // seq_cst axiom closes over leaves `r`, and none leaves
                    // `w` but to `r`, so no cycle goes through them, and
                    // coherence is all there is to check.
                    let w_last = verdict == ExtensionVerdict::Coherent
                        && match stealing {
                            false => w_ends_mo(),
                            true => stolen_source_last(),
                        };
                    match verdict {
                        ExtensionVerdict::Coherent if w_last => ExtensionVerdict::Consistent,
                        v => v,
                    }
                };
                let mut g2 = match k + 1 == spurious.len() {
                    true => base.take().expect("kept until the last"),
                    false => base.clone().expect("kept until the last"),
                };
                if !waits {
                    let mut e = g.event(r).clone();
                    e.spurious_fail = sp;
                    g2.push_event(r.thread, e);
                    g2.set_rf(r, w);
                }
                // Counts' chains change only where the cut removed an update.
                let removes_update = || {
                    (0..g.num_threads() as u32).any(|t| {
                        let kept = (without_r.0.get(t as usize).copied().unwrap_or(0) as usize)
                            .min(g.thread_len(t) as usize);
                        g.thread_events(t)[kept..].iter().any(|e| e.is_refcount())
                    })
                };
                let relinked = match commute && removes_update() {
                    true => match relink_refcounts(g, counts, &mut g2) {
                        Some(changed) => changed,
                        None => continue,
                    },
                    false => false,
                };
                let Some(repaired) = repair_dangling_reads(&mut g2, r, model, &mut self.canonical)
                else {
                    continue;
                };
                g2.settle(&prefix);
                let quick = match relinked || repaired {
                    true => ExtensionVerdict::Unknown,
                    false => quick,
                };
                if !judged_in_full(&g2, model, quick) {
                    continue;
                }
                self.stats.revisits += 1;
                let written = (!waits && g2.event(r).is_write()).then_some(r);
                let path = self.child_path();
                let mut schedule = self.schedule_kept(&without_r.0);
                if !waits {
                    schedule.push(r.thread);
                }
                self.stack.push(Pending::Graph(Item {
                    g: g2,
                    written,
                    path,
                    schedule,
                }));
            }
        }
    }

    /// Whether the revisit graph of read `r` by write `w` is consistent,
    /// judged from `base`, its events but `r` (closed under po and rf, no
    /// source changed), with `r` appended reading `w` (`Some(writes)`:
    /// writing too, when `writes`), or left out (`None`: it waits), as far
    /// as `r`'s location tells (see `read_extension_verdict`). `base` is part of a consistent
    /// graph, so consistent itself, unless `stealing` (`w` reads a source
    /// another RMW read): then `w` alone may break coherence or atomicity at
    /// its location, which the location check finds, and nothing checked
    /// its seq_cst axiom (where that matters the caller takes a consistent
    /// verdict as coherent only).
    fn revisit_extension_consistent(
        &self,
        base: &ExecutionGraph,
        r: EventId,
        w: EventId,
        read: Option<bool>,
        stealing: bool,
        action: &Action,
    ) -> ExtensionVerdict {
        let model = self.config.model;
        if !stealing && read.is_none() {
            return ExtensionVerdict::Consistent;
        }
        let Some(loc) = base.loc_of(w) else {
            return ExtensionVerdict::Unknown;
        };
        // Incoherent at `w`'s location, the kept part is inconsistent, which
        // only `w` stealing a source can make it.
        let Ok(lc) = LocationCoherence::new(base, model, loc) else {
            return match stealing {
                true => ExtensionVerdict::Inconsistent,
                false => ExtensionVerdict::Unknown,
            };
        };
        match read {
            None => ExtensionVerdict::Consistent,
            Some(writes) => {
                lc.read_extension_verdict(r.thread, read_order(action, writes), writes, loc, w)
            }
        }
    }

    /// Whether `g` is the one graph, among those that agree on the kept part,
    /// that performs the revisit of `r` by `w`.
    ///
    /// The events the revisit discards (`r` and those added after it outside
    /// `w`'s prefix) must be the canonical extension of the kept part: taken in
    /// the order they were added, each read reads the write [`canonical_source`]
    /// picks in the graph made of the kept events (`w` included, as a constraint
    /// but not as a source) and the discarded events before it. That choice does
    /// not depend on how the discarded events were chosen, so at most one graph
    /// passes; and since a read of a write that is last in modification order
    /// (but for `w`) keeps a graph consistent, the canonical extension exists.
    /// `consistent` says whether `g` is (it is not when an RMW stole a source);
    /// `counts` are `g`'s reference-count chains (see [`CountChains`]).
    // What the caller knows of `g` comes in three arguments of its own.
    #[allow(clippy::too_many_arguments)]
    fn maximal_extension(
        &mut self,
        g: &ExecutionGraph,
        keep: &View,
        r: EventId,
        w: EventId,
        consistent: bool,
        stolen_source_last: &dyn Fn() -> bool,
        counts: &CountChains,
    ) -> bool {
        let mut discarded: Vec<(u32, EventId)> = g
            .events()
            .filter(|(id, _)| *id == r || !keep.contains(*id))
            .map(|(id, e)| (e.stamp, id))
            .collect();
        if discarded.iter().any(|&(_, id)| !g.event(id).revisitable) {
            return false;
        }
        discarded.sort_unstable();
        let mut view = keep.clone();
        view.0[r.thread as usize] = r.index;
        let refcount_locs = &counts.locs;
        let refcount_chains = &counts.chains;
        // The counts' chains relinked over the events present, without `w`.
        let relink = |h: &mut ExecutionGraph| {
            for chain in refcount_chains {
                let order: RmwChain = chain.iter().copied().filter(|&x| x != w).collect();
                h.relink_chain(&order);
                if let Some(i) = chain.iter().position(|&x| x == w) {
                    let before = chain[..i]
                        .iter()
                        .rev()
                        .find(|&&x| x.is_init() || h.contains(x));
                    h.set_rf(w, *before.unwrap());
                }
            }
        };
        // The graph of the kept events and of the discarded ones that passed
        // so far (in stamp order each thread's discarded events come in
        // program order, after its kept ones): the reference counts
        // relinked, and `w` reduced to its read half.
        let graph_of = |view: &View| {
            let mut h = g.restrict_uncached(view);
            relink(&mut h);
            match g.event(w).action.read_half() {
                Some(load) => {
                    let half = h.event_mut(w);
                    half.action = load;
                }
                None => h.truncate_thread(w.thread, w.index),
            }
            h
        };
        // The graph is built only when a canonical source needs it: where no
        // seq_cst event is around, each is read off `g` (see
        // `highest_write_ending_mo`), unless the kept part's reference
        // counts are relinked (their happens-before may differ). The part is
        // consistent even where an RMW stole a source: `g` is then
        // consistent with `w` held to no atomicity, and the part has only
        // its read half.
        let mut h: Option<ExecutionGraph> = None;
        let relinked_counts = |view: &View| {
            refcount_chains.iter().any(|chain| {
                chain.contains(&w)
                    || chain
                        .iter()
                        .skip_while(|&&x| x.is_init() || view.contains(x))
                        .any(|&x| view.contains(x))
            })
        };
        // Appending canonical reads (and writes, which can go last) keeps a
        // consistent graph consistent. When `g` is not known to be, `h` is
        // checked once, when a canonical source is first needed, if that can
        // spare seq_cst searches.
        let model = self.config.model;
        let mut h_consistent = consistent.then_some(true);
        // Whether `view` is still the kept part (no discarded event added).
        let mut kept_only = true;
        for (_, e) in discarded {
            let ev = g.event(e);
            if self.commute && ev.is_refcount() {
                // Re-run, it would extend the count's chain: what it tells its
                // thread is fixed by the updates before it, in any order.
                let loc = ev.loc().unwrap();
                let mut count = g.init_value(loc);
                for (id, u) in g.events() {
                    if id != w && view.contains(id) && u.loc() == Some(loc) && u.is_refcount() {
                        let Action::Rmw { op, operand, .. } = u.action else {
                            unreachable!()
                        };
                        count = op.apply(count, operand);
                    }
                }
                let mut appended = ev.clone();
                appended.read_val = count;
                if appended.refcount_class() != ev.refcount_class() {
                    return false;
                }
            } else if let Some(src) = ev.rf {
                if ev.spurious_fail || !(src.is_init() || view.contains(src)) || src == w {
                    return false;
                }
                let loc = ev.loc().expect("a read has a location");
                let quick = (!refcount_locs.contains(&loc) && !relinked_counts(&view))
                    .then(|| highest_write_ending_mo(g, model, &view, Some(w), loc, canonical_rank))
                    .flatten();
                let mut full = |h: &mut Option<ExecutionGraph>,
                                canonical: &mut CanonicalScratch| {
                    let h = h.get_or_insert_with(|| graph_of(&view));
                    let known = *h_consistent.get_or_insert_with(|| {
                        needs_sc_search(g, model) && {
                            // `g` is coherent with `w` not held to atomicity
                            // (the loose check before a steal); restricted,
                            // with `w` a read, so is `h`, unless reference
                            // counts were relinked: only psc is left. Built
                            // before any discarded event is added, `h` is the
                            // kept part without `w` (consistent) and `w`'s
                            // read: where the source `w` stole is forced last
                            // in that part, `w` reads the last write, which
                            // keeps it consistent.
                            let restriction = !relinked_counts(&view);
                            let sc = restriction
                                && ((kept_only && stolen_source_last())
                                    || is_sc_consistent_given_coherence(h, model));
                            debug_assert!(
                                !restriction || sc == is_consistent(h, model),
                                "the kept part of a steal is not coherent"
                            );
                            match restriction {
                                true => sc,
                                false => is_consistent(h, model),
                            }
                        }
                    });
                    let found = canonical_source(h, e, ev, model, known, canonical);
                    // It was left reading some candidate.
                    h.truncate_thread(e.thread, e.index);
                    found
                };
                let canonical = match quick {
                    Some(x) => {
                        debug_assert_eq!(
                            Some(x),
                            full(&mut h, &mut self.canonical),
                            "quick canonical source disagrees with the full search"
                        );
                        x
                    }
                    None => match full(&mut h, &mut self.canonical) {
                        Some(x) => x,
                        None => return false,
                    },
                };
                if canonical != src {
                    return false;
                }
            }
            view.include(e);
            kept_only = false;
            if let Some(h) = &mut h {
                h.push_event(e.thread, ev.clone());
                // Only an update of a count changes the counts' chains.
                if self.commute && ev.is_refcount() {
                    relink(h);
                }
            }
        }
        true
    }

    /// Reference-count decrement `d` released the last reference. Each earlier
    /// decrement `e` that `d` does not depend on could have been the last one
    /// instead: that execution moves `e` to the end of the count's
    /// modification order (it reads `d`), keeps the events added before `e`
    /// and `d`'s prefix (with every other update), and re-runs the rest. Updates between `e` and `d`
    /// only see their count shift, which they cannot observe, so this is the
    /// only reordering of updates explored: one execution per choice of the
    /// last decrement, not one per order.
    fn calc_refcount_swaps(&mut self, g: &ExecutionGraph, d: EventId) {
        let model = self.config.model;
        let loc = g.loc_of(d).unwrap();
        let Some(chain) = g.rmw_chain(loc) else {
            return;
        };
        if chain.last() != Some(&d) {
            return;
        }
        // A value someone else reads must not shift: stop at the first update
        // (from the end) that is not a reference-count update or that a plain
        // read or CAS reads.
        let observed = |x: EventId| g.events().any(|(_, r)| r.rf == Some(x) && !r.is_refcount());
        // What `d` depends on in any order of the updates: an update in it
        // cannot be the last one, and needs no relinked copy to tell. Built
        // on first need: an update of a thread `d`'s thread joined before
        // `d` (the usual last drop, after the joins) is in it at once.
        let joined_before_d: SmallVec<[u32; 4]> = g.thread_events(d.thread)[..d.index as usize]
            .iter()
            .filter_map(|e| match e.action {
                Action::Join { child } => Some(child),
                _ => None,
            })
            .collect();
        let mut fixed: Option<View> = None;
        let counts = std::cell::OnceCell::new();
        for i in (1..chain.len() - 1).rev() {
            let e = chain[i];
            let ev = g.event(e);
            if !ev.is_refcount() || observed(e) {
                break;
            }
            if !matches!(
                ev.action,
                Action::Rmw {
                    op: RmwOp::RefDec,
                    ..
                }
            ) || !ev.revisitable
                || joined_before_d.contains(&e.thread)
                || fixed
                    .get_or_insert_with(|| g.porf_prefix_without_counts(d))
                    .contains(e)
            {
                continue;
            }
            // Every other update stays before `d`: its prefix is taken with the
            // chain relinked without `e`.
            let order: Vec<EventId> = chain.iter().copied().filter(|&x| x != e).collect();
            let mut relinked = g.clone();
            relinked.relink_chain(&order);
            let prefix = relinked.porf_prefix(d);
            if prefix.contains(e) {
                continue;
            }
            let estamp = ev.stamp;
            let mut keep = View(
                (0..g.num_threads() as u32)
                    .map(|t| {
                        g.thread_events(t)
                            .iter()
                            .take_while(|x| x.stamp < estamp)
                            .count() as u32
                    })
                    .collect(),
            );
            keep.include(e);
            for (t, &n) in prefix.0.iter().enumerate() {
                keep.0[t] = keep.0[t].max(n);
            }
            let counts = counts.get_or_init(|| CountChains::of(g, self.commute));
            if !self.maximal_extension(g, &keep, e, d, true, &|| false, counts) {
                continue;
            }
            let mut g2 = g.restrict(&keep);
            g2.relink_chain(&order);
            g2.set_rf(e, d);
            if g2.event(e).refcount_class() != Some(true)
                || g2.event(d).refcount_class() != Some(false)
                || !classes_kept(g, &g2, e)
                || repair_dangling_reads(&mut g2, e, model, &mut self.canonical).is_none()
            {
                continue;
            }
            // Only what `d` really depends on is settled; the other updates
            // were kept for their count alone.
            let settled = g2.porf_prefix_commuting(d);
            g2.settle(&settled);
            if !is_consistent(&g2, model) {
                continue;
            }
            self.stats.revisits += 1;
            let path = self.child_path();
            self.stack.push(Pending::Graph(Item {
                g: g2,
                written: Some(e),
                path,
                schedule: Vec::new(),
            }));
        }
    }

    /// Whether no execution that `g` leads to, by adding events or by
    /// revisits, can be within the preemption bound. A revisit of a read
    /// changes what it reads and removes only events added after it, and
    /// never the prefix of a write that revisited before: the events added
    /// before the first read that may still be revisited, with those
    /// prefixes, are part of every execution `g` leads to, as they are here.
    /// When that part already needs more preemptions, so do they all (see
    /// [`crate::bound::part_within`]). Checked when a branch starts (a
    /// revisit changes that part) and where a thread ends or joins one (the
    /// part grows while no read may be revisited).
    fn partial_over_bound(&mut self, g: &ExecutionGraph, ahead: &mut Ahead) -> bool {
        let Some(k) = self.config.preemption_bound else {
            return false;
        };
        let rules = self.bound_rules();
        // A part of a graph within the bound is within it (the schedule
        // kept for the graph usually says so at no cost).
        if self.witness.within(g, k, rules) {
            return false;
        }
        !ahead.part_within(g, &Self::fixed_part(g), k, rules)
    }

    /// The part of `g` every graph its branch leads to holds as it is here:
    /// the events added before the first read that may still be revisited,
    /// and those a revisit settled (see [`Self::partial_over_bound`]).
    fn fixed_part(g: &ExecutionGraph) -> Vec<u32> {
        let first_open_read = g
            .events()
            .filter(|(_, e)| e.revisitable && e.is_read())
            .map(|(_, e)| e.stamp)
            .min()
            .unwrap_or(u32::MAX);
        (0..g.num_threads() as u32)
            .map(|t| {
                g.thread_events(t)
                    .iter()
                    .take_while(|e| e.stamp < first_open_read || !e.revisitable)
                    .count() as u32
            })
            .collect()
    }

    /// Whether nothing the branch of `g` can still lead to is within the
    /// preemption bound, although the part [`Self::partial_over_bound`]
    /// asks about may be. Its graphs are the completions of `g`, which
    /// contain `g` as it is, and the graphs a write added later makes by
    /// revisiting, with everything they lead to: those keep the fixed part
    /// and the write's prefix as they are here (the revisit settles the
    /// prefix), and the prefix contains what its thread has done so far.
    /// So when `g` is beyond the bound, and so is, for every thread that
    /// has not ended, the fixed part with its prefix, no graph ahead is
    /// within it. `ahead` remembers that `g` is beyond it, the threads
    /// already shown to be (for the rest of the branch: the parts only
    /// grow), and where the others were shown not to be; every thread is
    /// asked, so that the live ones run first (see [`Ahead::last`]).
    fn ahead_over_bound(&mut self, g: &ExecutionGraph, ahead: &mut Ahead) -> bool {
        let Some(k) = self.config.preemption_bound else {
            return false;
        };
        let rules = self.bound_rules();
        if !ahead.whole_over {
            if self.witness.within(g, k, rules) {
                return false;
            }
            ahead.whole_over = true;
        }
        let n = g.num_threads();
        ahead.dead.resize(n, false);
        ahead.live_at.resize(n, None);
        let fixed = Self::fixed_part(g);
        let fixed_size: u32 = fixed.iter().sum();
        let mut live = false;
        for t in 0..n as u32 {
            let ti = t as usize;
            if ahead.dead[ti] {
                continue;
            }
            let len = g.thread_len(t);
            // The part asked about grows only with the thread's events and
            // the fixed part: asked again only when one of them did.
            if ahead.live_at[ti] == Some((len, fixed_size)) {
                live = true;
                continue;
            }
            let ended = g
                .thread_events(t)
                .last()
                .is_some_and(|e| matches!(e.action, Action::Finish));
            if !ended {
                if len == 0 {
                    live = true;
                    continue;
                }
                let last = EventId::new(t, len - 1);
                let mut part = if self.commute {
                    g.porf_prefix_commuting(last)
                } else {
                    g.porf_prefix(last)
                };
                for (p, &f) in part.0.iter_mut().zip(&fixed) {
                    *p = (*p).max(f);
                }
                if ahead.part_within(g, &part.0, k, rules) {
                    ahead.live_at[ti] = Some((len, fixed_size));
                    live = true;
                    continue;
                }
            }
            ahead.dead[ti] = true;
        }
        !live
    }

    /// With a preemption bound, the running branch's schedule cut to the
    /// first `keep[t]` events of each thread `t` (all, when `keep` is
    /// empty), for a branch made from its graph to start from.
    fn schedule_kept(&self, keep: &[u32]) -> Vec<u32> {
        if self.config.preemption_bound.is_none() {
            return Vec::new();
        }
        let order = self.witness.order();
        if keep.is_empty() {
            return order.collect();
        }
        let mut seen = vec![0u32; keep.len()];
        order
            .filter(|&t| {
                let Some(n) = seen.get_mut(t as usize) else {
                    return false;
                };
                *n += 1;
                *n <= keep[t as usize]
            })
            .collect()
    }

    /// The schedules the preemption bound counts (see [`crate::bound`]).
    fn bound_rules(&self) -> crate::bound::Rules {
        crate::bound::Rules {
            sc: self.config.model.all_seq_cst(),
            refcounts_commute: self.commute,
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
            let combos = crate::final_combinations(&a, &self.config.observed);
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
            if crate::cut_by_bound(g) {
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

/// Sets `loc`'s flag in `flags` (indexed by location).
fn mark(flags: &mut Vec<bool>, loc: c11check_model::Loc) {
    let i = loc.0 as usize;
    if flags.len() <= i {
        flags.resize(i + 1, false);
    }
    flags[i] = true;
}

/// The locations of a graph's reference counts, and the chains of those
/// whose updates form one (the others are plain RMWs by now). A revisit
/// check asks for them once per read it revisits, of the same graph.
struct CountChains {
    locs: SmallVec<[c11check_model::Loc; 4]>,
    chains: Vec<RmwChain>,
}

impl CountChains {
    /// Those of `g`; none when updates do not commute.
    fn of(g: &ExecutionGraph, commute: bool) -> Self {
        let locs = match commute {
            true => g.refcount_locs(),
            false => SmallVec::new(),
        };
        let chains = locs.iter().filter_map(|&l| g.rmw_chain(l)).collect();
        CountChains { locs, chains }
    }
}

/// Relinks the reference-count chains of `g2` (a restriction of `g`, where
/// updates may have been removed) in `g`'s order (`counts`, `g`'s chains):
/// whether a source changed, or `None` when that changes what an update
/// that something kept depends on told its thread (see [`classes_kept`]).
fn relink_refcounts(
    g: &ExecutionGraph,
    counts: &CountChains,
    g2: &mut ExecutionGraph,
) -> Option<bool> {
    let mut changed = false;
    for chain in &counts.chains {
        changed |= g2.relink_chain(chain);
    }
    classes_kept(g, g2, EventId::init(c11check_model::Loc(0))).then_some(changed)
}

/// Whether every reference-count update of `g2` other than `moved` that is
/// not last in its thread tells its thread what it did in `g` (updates whose
/// class changes are re-run, like reads whose source was removed).
fn classes_kept(g: &ExecutionGraph, g2: &ExecutionGraph, moved: EventId) -> bool {
    g2.events().all(|(id, e)| {
        id == moved
            || !e.is_refcount()
            || id.index + 1 == g2.thread_len(id.thread)
            || e.refcount_class() == g.event(id).refcount_class()
    })
}

/// Whether the source of RMW `w` is forced last in modification order,
/// every other write of its location forced before it, in the part `part`
/// of `g` (closed under po and rf, `w` last in its thread there and read by
/// nothing in it) without `w`.
fn source_forced_last_without(g: &ExecutionGraph, part: &View, w: EventId, model: Model) -> bool {
    let (Some(src), Some(loc)) = (g.event(w).rf, g.loc_of(w)) else {
        return false;
    };
    let mut view = part.clone();
    view.0[w.thread as usize] = w.index;
    let forced = forced_last_in_part(g, model, &view, loc, src) == Some(true);
    debug_assert_eq!(
        forced,
        LocationCoherence::new(&g.restrict_uncached(&view), model, loc)
            .is_ok_and(|lc| lc.is_forced_last(src)),
        "the part's constraints built in place differ from its copy's"
    );
    forced
}

/// Whether `action`, a read, also writes when it reads `value`: an RMW, or a
/// compare-exchange that finds its expected value (and does not fail
/// spuriously).
fn read_writes(action: &Action, value: c11check_model::Value, spurious: bool) -> bool {
    match *action {
        Action::Rmw { .. } => true,
        Action::Cas { .. } => !spurious && action.cas_succeeds(value) == Some(true),
        _ => false,
    }
}

/// Whether a graph extended by one access is consistent, given what the
/// quick check at the access's location found (debug builds compare every
/// verdict with the full check).
fn judged_in_full(g: &ExecutionGraph, model: Model, verdict: ExtensionVerdict) -> bool {
    let consistent = match verdict {
        ExtensionVerdict::Consistent => true,
        ExtensionVerdict::Inconsistent => false,
        ExtensionVerdict::Coherent => is_sc_consistent_given_coherence(g, model),
        ExtensionVerdict::Unknown => return is_consistent(g, model),
    };
    debug_assert_eq!(
        consistent,
        is_consistent(g, model),
        "the quick check of an access ({verdict:?}) disagrees with the full one"
    );
    consistent
}

/// The order `action`, a read, reads with: a compare-exchange's failure
/// order when it does not write.
#[inline]
fn read_order(action: &Action, writes: bool) -> c11check_model::MemOrder {
    match *action {
        Action::Cas {
            success, failure, ..
        } => {
            if writes {
                success
            } else {
                failure
            }
        }
        Action::Load { ord, .. } | Action::Rmw { ord, .. } => ord,
        _ => unreachable!("a read"),
    }
}

/// Gives every read whose source was removed by a revisit (other than `r`) its
/// canonical source ([`canonical_source`]) again. Such reads are always last in their thread.
/// Returns whether there was one, or `None` when one has no source left.
fn repair_dangling_reads(
    g: &mut ExecutionGraph,
    r: EventId,
    model: c11check_model::Model,
    scratch: &mut CanonicalScratch,
) -> Option<bool> {
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
        return Some(false);
    }
    for (t, _) in &dangling {
        let len = g.thread_len(*t);
        g.truncate_thread(*t, len - 1);
    }
    dangling.sort_by_key(|(_, e)| e.stamp);
    for (t, mut e) in dangling {
        e.rf = None;
        e.spurious_fail = false;
        let id = EventId::new(t, g.thread_len(t));
        match canonical_source(g, id, &e, model, false, scratch) {
            Some(w) => g.set_rf(id, w),
            None => return None,
        }
    }
    Some(true)
}

/// The canonical source of read `e` (`ev`, appended to its thread in `h`): of
/// the writes `e` can read consistently while ending modification order (or,
/// for a successful RMW, while the RMW ends it), the highest ranked (see
/// [`canonical_rank`]). Leaves `e` reading an arbitrary candidate.
/// `consistent` says whether `h` is known to be consistent: only then does
/// a read of a write forced last need no seq_cst search.
fn canonical_source(
    h: &mut ExecutionGraph,
    e: EventId,
    ev: &c11check_model::Event,
    model: c11check_model::Model,
    consistent: bool,
    scratch: &mut CanonicalScratch,
) -> Option<EventId> {
    let loc = ev.loc()?;
    let CanonicalScratch {
        cands,
        quick,
        ranked,
    } = scratch;
    quick.clear();
    // Most candidates are judged from one analysis of the graph before `e`
    // (see `LocationCoherence::read_extension_verdict`); the rest in full.
    // The search stops at the first candidate judged good, so none after it
    // is judged.
    match LocationCoherence::new(h, model, loc) {
        Ok(base) => {
            base.writes_into(ranked);
            ranked.sort_unstable_by_key(|x| std::cmp::Reverse(canonical_rank(x.id)));
            cands.clear();
            cands.extend(ranked.iter().map(|x| x.id));
            for &xref in ranked.iter() {
                let x = xref.id;
                let writes = read_writes(&ev.action, h.written_value(x), false);
                let ord = read_order(&ev.action, writes);
                let q = match base
                    .read_extension_verdict(e.thread, ord, writes, loc, xref)
                    .known()
                {
                    None => None,
                    Some(false) => Some(false),
                    Some(true) if !base.could_end_mo(xref) => Some(false),
                    Some(true) => (!base.sc_search_needed()
                        || (consistent && base.is_forced_last(xref)))
                    .then_some(true),
                };
                quick.push(q);
                if q == Some(true) {
                    break;
                }
            }
        }
        Err(_) => {
            cands.clear();
            cands.extend(h.writes_to(loc));
            cands.sort_unstable_by_key(|&x| std::cmp::Reverse(canonical_rank(x)));
            quick.resize(cands.len(), None);
        }
    }
    h.push_event(e.thread, ev.clone());
    cands.iter().zip(quick.iter()).find_map(|(&x, &q)| {
        h.set_rf(e, x);
        h.update_event(e, |x| x.spurious_fail = false);
        let last = if h.event(e).is_write() { e } else { x };
        let full = || Analysis::new(h, model).is_ok_and(|a| a.find_mo(&[(loc, last)]).is_some());
        debug_assert!(
            q.is_none_or(|v| v == full()),
            "quick canonical check disagrees"
        );
        q.unwrap_or_else(full).then_some(x)
    })
}

/// The order in which [`canonical_source`] prefers writes: by position (thread,
/// then program order), the initial writes first. It must not depend on when
/// events were added, which differs between graphs that agree on their events.
fn canonical_rank(w: EventId) -> (u64, u32) {
    if w.is_init() {
        (0, 0)
    } else {
        (w.thread as u64 + 1, w.index)
    }
}

/// Whether weak CAS `e` (of `loc`) may fail spuriously when it reads `w`: not
/// when its thread already failed spuriously reading `w`, whatever came in
/// between (loads of the same write, plain accesses, other locations,
/// another compare-exchange site). One spurious failure per write and
/// thread shows everything a failure without a change can lead to; a run of
/// them on the same write is an unfair execution (LL/SC fails spuriously
/// only now and then), and allowing one after each reload made the most
/// common retry loop (`load`, then `compare_exchange_weak` of what it read)
/// fail forever. A retry loop is then finite: its thread reads each write
/// of the location at most twice before it must succeed or see a newer one.
/// (A loop that counts its failures sees fewer of them.)
///
/// By coherence a thread's accesses to `loc` see its writes in modification
/// order, so the scan back from `e` stops at the first access to `loc` that
/// is not a read of `w`: `e` reading `w` after it is inconsistent anyway.
pub(crate) fn may_fail_spuriously(
    g: &ExecutionGraph,
    e: EventId,
    loc: c11check_model::Loc,
    w: EventId,
) -> bool {
    for prev in g.thread_events(e.thread)[..e.index as usize].iter().rev() {
        if prev.loc() != Some(loc) {
            continue;
        }
        if !prev.is_read() || prev.rf != Some(w) {
            return true;
        }
        if prev.spurious_fail {
            return false;
        }
    }
    true
}

/// Whether RMW `e` reading `w` conflicts only with another RMW that read `w` and
/// may still be revisited (it is revisitable and not in `e`'s prefix).
/// Reference-count updates never take each other's place (their order is not
/// explored).
fn steals_from_unsettled_rmw(g: &ExecutionGraph, e: EventId, w: EventId, commute: bool) -> bool {
    let refcount = commute && g.event(e).is_refcount();
    let mut rivals = g.events().filter(|&(id, x)| {
        id != e && x.rf == Some(w) && x.is_rmw() && !(refcount && x.is_refcount()) && x.revisitable
    });
    let Some((first, _)) = rivals.next() else {
        return false;
    };
    let prefix = if commute {
        g.porf_prefix_commuting(e)
    } else {
        g.porf_prefix(e)
    };
    !prefix.contains(first) || rivals.any(|(id, _)| !prefix.contains(id))
}
