//! Parallel exploration: branches given away to idle workers through a
//! shared queue, shards, and the flags that end the exploration.

use super::*;

impl<D: Driver, V: Visitor> Explorer<'_, D, V> {
    /// Splits the tree from the root `g` for `shard`: level by level, every
    /// shard runs the same branches (the same program gives the same tree)
    /// until a level has at least 256 branches per shard (or none); then the
    /// level's branches, in the order they were made, go round-robin to the
    /// shards, and this shard's are pushed to explore. Executions that end
    /// on the way count in one shard, by their branch's hash. Many more
    /// branches than shards, dealt in turn, keep the shards' work even
    /// (fib_bench: 32 per shard split 525,630 executions 60:40 between two
    /// shards, 256 per shard 46:54).
    pub(super) fn split_for(&mut self, shard: crate::Shard, g: ExecutionGraph) {
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
    pub(super) fn give_away(&mut self) {
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

/// What the workers of a parallel exploration share: branches given away
/// for idle workers to take, and the flags that end the exploration.
pub(crate) struct Shared {
    pub(super) given: Injector<Given>,
    pub(super) jobs: usize,
    /// Workers with no branch of their own (they wait for one given away).
    pub(super) idle: AtomicUsize,
    /// A visitor asked to stop, or a budget ran out.
    pub(super) stop: AtomicBool,
    /// Some worker found that the program observes the order of reference
    /// counts: the exploration starts over with them as plain RMWs.
    pub(super) restart: AtomicBool,
    /// Executions and blocked executions of all workers (for
    /// `max_executions`).
    pub(super) ended: AtomicU64,
    /// The workers' statistics so far, for progress reports.
    pub(super) progress: std::sync::Mutex<Vec<Stats>>,
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
pub(super) fn worker<D: Driver, V: Visitor, R>(
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

/// A branch given away to another worker, its graph detached from this
/// worker's caches.
pub(super) struct Given(Item);

// SAFETY: an `ExecutionGraph` is not `Send` only for the `Rc`s of its
// per-location caches, which `detach_caches` dropped before the branch was
// wrapped; nothing else in it is shared with the giving thread.
unsafe impl Send for Given {}
