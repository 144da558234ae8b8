//! Random executions of a Rust closure on the live memory
//! (`c11check_model::live_memory`): the fibers run one at a time, each visible
//! operation is answered at once, nothing is replayed and no execution graph
//! is kept, so executions can be millions of operations long in bounded
//! memory. Each iteration has its own seed; the same seed gives the same
//! execution (`l1:<seed>` replays it).

use crate::config::{RunConfig, Summary};
use crate::protocol::{Outcome, Request, ThreadMain};
use crate::report::{Failure, FailureKind, Report};
use crate::shared::{install_shared, Shared};
use crate::{LocCell, Site};
use c11check_explore::random::{self, iteration_seed, SplitMix64};
use c11check_explore::Stats;
use c11check_model::live_memory::{LiveMemory, ReadFrom};
use c11check_model::{Action, BlockReason};
use corosensei::CoroutineResult;
use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fiber::{forget_results, new_fiber, retire, Fiber};
use crate::robust_live::{Learned, LiveRobustness};

/// The schedule and the reads-from choices of one iteration.
pub(crate) type Rng = SplitMix64;

/// Probabilistic concurrency testing (Burckhardt et al.): threads get random
/// distinct priorities, the highest runnable one runs, and at `depth - 1`
/// random steps the running thread drops below all others. A bug that needs
/// `depth` ordering constraints is found with probability at least
/// 1/(n·k^(depth-1)) per execution (n threads, k steps).
pub(crate) struct Pct {
    depth: u32,
    priorities: Vec<u64>,
    change_points: Vec<u64>,
    step: u64,
}

impl Pct {
    pub(crate) fn new(depth: u32, expected_steps: u64, rng: &mut Rng) -> Pct {
        let k = expected_steps.max(1);
        Pct {
            depth,
            priorities: Vec::new(),
            change_points: (1..depth.max(1)).map(|_| 1 + rng.next_u64() % k).collect(),
            step: 0,
        }
    }
    fn pick(&mut self, ready: &[usize], rng: &mut Rng) -> usize {
        for &t in ready {
            if self.priorities.len() <= t {
                self.priorities.resize(t + 1, u64::MAX);
            }
            if self.priorities[t] == u64::MAX {
                // A new thread: a random priority above every change point.
                self.priorities[t] = self.depth as u64 + 1 + rng.next_u64() % (1 << 40);
            }
        }
        // Ties (threads that spun, all at priority 0) go to a random one:
        // always the same would starve the others, and with them whatever
        // the spinner waits for.
        let top = ready.iter().map(|&t| self.priorities[t]).max().unwrap();
        let tied: Vec<usize> = ready
            .iter()
            .copied()
            .filter(|&t| self.priorities[t] == top)
            .collect();
        tied[rng.below(tied.len())]
    }
}

/// What a suspended thread waits to do.
enum Pending {
    Act(Action, Option<(*const LocCell, i64)>, Site),
    Spawn(ThreadMain),
    /// A wait loop's turn ended (at this hint): run others first.
    Spin(Site),
    Finished,
    /// Stopped for good (a failed assume): the execution is not a real one.
    Dead,
}

impl Pending {
    /// Whether the step commutes with every other thread's, so taking it
    /// at once loses no behaviour: spawning (the child starts only then)
    /// and `Arc::clone`'s increment (no owner can see the count reach zero
    /// while the cloning thread holds a reference).
    fn runs_at_once(&self) -> bool {
        matches!(
            self,
            Pending::Spawn(_)
                | Pending::Act(
                    Action::Rmw {
                        op: c11check_model::RmwOp::RefInc,
                        ..
                    },
                    ..
                )
        )
    }
}

struct Thread {
    fiber: Option<Fiber>,
    pending: Option<Pending>,
    steps: u64,
    /// `steps` when the thread last changed memory (a store, or a
    /// read-modify-write or compare-exchange that wrote another value):
    /// the live step bound counts the steps since.
    steps_at_write: u64,
    /// A lock wait: the location and how many stores it had when the
    /// thread found it held (it retries once another store comes).
    lock_wait: Option<(c11check_model::Loc, u64)>,
    /// The value its last compare-exchange read.
    last_cas_read: Option<i64>,
    /// Parked before a load until the location gets a new store: the
    /// location, its store count then, and the step at which the thread
    /// goes on anyway.
    parked: Option<(c11check_model::Loc, u64, u64)>,
    /// Whether its pending operation was already considered for parking.
    park_considered: bool,
    /// A hash of the values its loads and read-modify-writes returned, in
    /// order: two executions differ in behaviour if some thread's differs.
    reads_hash: u64,
    /// Whether its current wait-loop turn (since its last `yield_now`) did
    /// only fences, and loads and failed compare-exchanges that had a single
    /// store to read (a compare-exchange that may have failed spuriously
    /// does not count).
    turn_clean: bool,
    /// Whether it performed an operation since its last `yield_now`: two
    /// hints in a row (a C loop's `sched_yield` and the runtime's hint at
    /// the loop's head) make no turn, and tell nothing about the next.
    turn_ops: bool,
    /// A hash of the accesses of its current turn (where each read, what it
    /// read, what a compare-exchange expected), and of its turn before: a
    /// turn is stuck only when it repeats the one before. A loop that feeds
    /// the value a failed compare-exchange read into its next attempt does
    /// not repeat a turn, nor does a scan whose turns read other places
    /// (the next turn may find what this one did not).
    turn_reads: u64,
    last_turn_reads: u64,
    /// Where its last wait-loop turn ended (see `turn_reads`).
    last_hint: Option<Site>,
    /// `Execution::progress` when that turn began.
    turn_start: u64,
    /// Set when a clean turn ended with no progress since it began: the
    /// progress count then. While the count stays there, every later turn
    /// reads the same and does the same (the contract of `yield_now`).
    stuck_at: Option<u64>,
}

/// One live execution.
struct Execution<'a> {
    cfg: &'a RunConfig,
    shared: Rc<RefCell<Shared>>,
    mem: LiveMemory,
    threads: Vec<Thread>,
    bodies: Vec<Option<ThreadMain>>,
    rng: Rng,
    /// What the scheduler knows of each location (lock waits and parked
    /// loads go on after a new store).
    stores: Vec<LocSched>,
    stacks: &'a mut crate::fiber::StackPool,
    ops: u64,
    /// `ops` when some thread last changed memory.
    ops_at_write: u64,
    pct: Option<Pct>,
    /// The last operations, for the report: a live execution keeps no graph.
    recent: std::collections::VecDeque<LiveOp>,
    /// How many of the last operations `recent` keeps.
    trace_cap: usize,
    /// Operations recorded in all (`recent` keeps the last ones).
    recorded: u64,
    /// A location whose accesses are watched: each thread's last site
    /// there (a race's earlier access, when `recent` no longer holds it).
    watch: Option<(c11check_model::Loc, Vec<Option<Site>>)>,
    /// The location of the data race this execution ended with, if any.
    race_loc: Option<c11check_model::Loc>,
    /// Whether loads park (see [`Execution::consider_parking`]).
    park_loads: bool,
    /// Whether plain accesses run on without a scheduling choice (see
    /// [`PLAIN_RUN`]; not under PCT, whose change points count steps, nor
    /// in robustness checking's SC runs).
    plain_runs: bool,
    /// Events another thread could notice: stores and successful
    /// read-modify-writes, spawns, finished threads.
    progress: u64,
    /// With robustness: the location clocks of this run, and what the
    /// run's iterations learn (see `crate::robust_live`).
    robust: Option<(LiveRobustness, &'a mut Learned)>,
}

/// The scheduler's view of one location.
#[derive(Clone, Copy)]
struct LocSched {
    /// Stores so far.
    stores: u64,
    /// The last value stored.
    last: i64,
    /// The thread that stored last (or read-modify-wrote, or created the
    /// object, or accessed the location first); `u32::MAX` when unknown.
    writer: u32,
    /// The sequence number of the last store (0: none yet).
    store_seq: u64,
    /// Threads (below 64) that accessed the location since its last store.
    seen: u64,
    /// The thread that made the object the location is in, and its
    /// operation's sequence number then (see [`crate::alloc`]).
    created: Option<(u32, u64)>,
}

impl Default for LocSched {
    fn default() -> Self {
        LocSched {
            stores: 0,
            last: 0,
            writer: u32::MAX,
            store_seq: 0,
            seen: 0,
            created: None,
        }
    }
}

/// A parked load goes on after at most this many other steps, whether or
/// not a store came (the writer may never come, or it may be the thread
/// itself later).
const PARK_STEPS: usize = 32;

/// A thread's plain accesses are no scheduling points: it goes on with the
/// next one at once, up to this many in a row (then the scheduler chooses,
/// so that nothing runs unchecked for long). In an execution without data
/// races a plain access commutes with every other thread's step (no other
/// thread can see it but through a race, which race detection finds in
/// any order of the two), so the schedules this skips give nothing new;
/// C11Tester schedules only at atomic and synchronisation operations too.
const PLAIN_RUN: u32 = 64;

/// What the scheduler chose (see [`Execution::choose`]).
enum Choice {
    /// Step this thread.
    Run(usize),
    /// Choose again (a parked thread was woken, or the chosen one parked).
    Again,
    /// No thread can go on: the execution ends so.
    End(End),
}

/// A 64-bit mixing step (splitmix64's finaliser).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
    z ^ (z >> 31)
}

/// A live run's thread that keeps writing is stopped at this many times
/// the step bound (see `Execution::over_step_bound`).
const TOTAL_STEPS_FACTOR: u64 = 1000;

/// Operations each live execution keeps for a report (the last ones).
const RECENT: usize = 40;

/// A long execution's report shows an excerpt (see [`trace_excerpt`]):
/// the last operations, each thread's last ones and the last ones at the
/// failing threads' locations.
const TAIL_SHOWN: usize = 60;
const PER_THREAD_SHOWN: usize = 8;
const AT_LOCATION_SHOWN: usize = 20;
/// Traces up to this long are shown whole.
const WHOLE_TRACE: usize = 300;

/// The operations of a long trace that matter for a failure of `threads`
/// (in order): the last [`TAIL_SHOWN`], each thread's last
/// [`PER_THREAD_SHOWN`], and the last [`AT_LOCATION_SHOWN`] at each
/// location a failing thread touched last (a race's pair, a lock's
/// history). `None` when the trace is short enough to show whole.
fn trace_excerpt(ops: &[LiveOp], threads: &[u32]) -> Option<Vec<LiveOp>> {
    if ops.len() <= WHOLE_TRACE {
        return None;
    }
    let mut keep = vec![false; ops.len()];
    for k in keep.iter_mut().rev().take(TAIL_SHOWN) {
        *k = true;
    }
    let mut per_thread: std::collections::HashMap<u32, usize> = Default::default();
    let mut locations = Vec::new();
    for (i, op) in ops.iter().enumerate().rev() {
        let n = per_thread.entry(op.thread).or_insert(0);
        if *n < PER_THREAD_SHOWN {
            keep[i] = true;
            if *n == 0 && threads.contains(&op.thread) {
                locations.extend(op.action.loc());
            }
            *n += 1;
        }
    }
    for loc in locations {
        let at: Vec<usize> = (0..ops.len())
            .rev()
            .filter(|&i| ops[i].action.loc() == Some(loc))
            .take(AT_LOCATION_SHOWN)
            .collect();
        for i in at {
            keep[i] = true;
        }
    }
    Some(
        ops.iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(op, _)| op.clone())
            .collect(),
    )
}

/// Operations a report shows: the failing execution is run again from its
/// seed keeping this many (all of them, unless it is very long).
const FULL_TRACE: usize = 100_000;

/// How an execution ended.
enum End {
    Complete,
    Blocked,
    Failed(Failure),
}

impl<'a> Execution<'a> {
    fn start_thread(&mut self, t: usize, body: ThreadMain) {
        let fiber = new_fiber(
            &self.shared,
            t,
            body,
            self.stacks,
            self.cfg.runtime.stack_size,
        );
        if self.threads.len() <= t {
            self.threads.resize_with(t + 1, || Thread {
                fiber: None,
                pending: None,
                steps: 0,
                steps_at_write: 0,
                lock_wait: None,
                last_cas_read: None,
                parked: None,
                park_considered: false,
                reads_hash: 0,
                turn_clean: true,
                turn_ops: false,
                turn_reads: 0,
                last_turn_reads: 0,
                last_hint: None,
                turn_start: 0,
                stuck_at: None,
            });
        }
        self.progress += 1;
        self.threads[t].turn_start = self.progress;
        self.threads[t].fiber = Some(fiber);
        self.resume(t, Outcome::default());
    }

    fn resume(&mut self, t: usize, input: Outcome) {
        {
            let stamp = self.mem.last_seq(t as u32);
            let mut s = self.shared.borrow_mut();
            s.current = t as u32;
            s.in_fiber = true;
            s.set_stamp(t as u32, stamp);
        }
        crate::alloc::set_in_fiber(true);
        crate::watchdog::set_in_fiber(true);
        let size = self.cfg.runtime.stack_size;
        let fiber = self.threads[t].fiber.as_mut().expect("fiber");
        let res = crate::fiber::overflow::resume(fiber, t as u32, size, input);
        crate::alloc::set_in_fiber(false);
        crate::watchdog::set_in_fiber(false);
        self.shared.borrow_mut().in_fiber = false;
        let pending = match res {
            CoroutineResult::Return(()) => {
                if let Some(f) = self.threads[t].fiber.take() {
                    self.stacks.put(t, f.into_stack());
                }
                Pending::Finished
            }
            CoroutineResult::Yield(Request::Finish) => {
                if let Some(f) = self.threads[t].fiber.take() {
                    crate::fiber::retire(f, t, self.stacks);
                }
                Pending::Finished
            }
            CoroutineResult::Yield(Request::Spawn { main, .. }) => Pending::Spawn(main),
            // A yield in a loop that counts is no scheduling point here,
            // nor the head of a loop found just now (its first turn's end
            // is no wait's yet).
            CoroutineResult::Yield(Request::Spin { cut: false, .. })
            | CoroutineResult::Yield(Request::Spin { fresh: true, .. }) => {
                return self.resume(t, Outcome::default());
            }
            CoroutineResult::Yield(Request::Spin { site, .. }) => Pending::Spin(site),
            CoroutineResult::Yield(Request::Act { action, bind, site }) => {
                Pending::Act(action, bind, site)
            }
        };
        // A thread that waits to join another reads nothing before it has
        // seen all that thread did: the memory need not keep, for it, the
        // stores that thread has passed.
        if let Pending::Act(Action::Join { child }, ..) = pending {
            self.mem.wait_join(t as u32, child);
        }
        self.threads[t].pending = Some(pending);
        self.threads[t].park_considered = false;
    }

    /// Whether thread `t` waits to make a plain access (see [`PLAIN_RUN`]).
    fn pending_plain(&self, t: usize) -> bool {
        matches!(
            self.threads[t].pending,
            Some(Pending::Act(Action::Load { ord, .. } | Action::Store { ord, .. }, ..)) if !ord.is_atomic()
        ) && self.runnable(t)
    }

    fn runnable(&self, t: usize) -> bool {
        let th = &self.threads[t];
        if let Some((loc, n, until)) = th.parked {
            if self.loc_sched(loc).stores <= n && self.ops < until {
                return false;
            }
        }
        match &th.pending {
            Some(Pending::Act(Action::Join { child }, ..)) => {
                matches!(
                    self.threads
                        .get(*child as usize)
                        .and_then(|c| c.pending.as_ref()),
                    Some(Pending::Finished)
                )
            }
            Some(Pending::Act(
                Action::Block {
                    reason: BlockReason::LockHeld,
                },
                ..,
            )) => th
                .lock_wait
                .is_some_and(|(loc, n)| self.loc_sched(loc).stores > n),
            Some(Pending::Finished) | Some(Pending::Dead) | None => false,
            _ => true,
        }
    }

    fn location(&mut self, bind: Option<(*const LocCell, i64)>, action: Action) -> Action {
        let Some((cell, init)) = bind else {
            return action;
        };
        let generation = self.shared.borrow().generation;
        // SAFETY: the cell belongs to an object the suspended fiber borrows for
        // the duration of the operation it asked for.
        let loc = match unsafe { (*cell).get(generation) } {
            Some(l) => l,
            None => {
                let l = self.mem.add_loc(init);
                if let Some((r, _)) = &mut self.robust {
                    r.add_loc(l, init);
                }
                // SAFETY: as above.
                unsafe { (*cell).set(generation, l) };
                self.shared.borrow_mut().note_binding(l, cell);
                // SAFETY: as above.
                let addr = unsafe { (*cell).object_addr() };
                if let Some(c) = crate::alloc::creation_of(addr, generation) {
                    self.shared.borrow_mut().bind_object(l, addr);
                    let sched = self.loc_sched_mut(l);
                    sched.writer = c.0;
                    sched.created = Some(c);
                }
                l
            }
        };
        crate::replay::with_loc(action, loc)
    }

    /// Whether thread `t` waits to make a non-SeqCst atomic store (one that
    /// may start or continue a run of stores, see [`Self::choose`]).
    fn pending_store_run(&self, t: usize) -> bool {
        matches!(
            self.threads[t].pending,
            Some(Pending::Act(Action::Store { ord, .. }, ..)) if ord.is_atomic() && !ord.is_sc()
        )
    }

    /// The scheduler's choice of the next thread to step, among the
    /// runnable ones (`ready`, reused), given which ones just ended a wait
    /// turn (`spinning`) and which one is in a run of stores (`last`).
    fn choose(
        &mut self,
        ready: &mut Vec<usize>,
        spinning: &mut Vec<bool>,
        last: &mut Option<usize>,
    ) -> Choice {
        ready.clear();
        ready.extend((0..self.threads.len()).filter(|&t| self.runnable(t)));
        if ready.is_empty() {
            // Everyone else waits: a parked thread goes on.
            let parked: Vec<usize> = (0..self.threads.len())
                .filter(|&t| self.threads[t].parked.is_some())
                .collect();
            if parked.is_empty() {
                return Choice::End(self.stuck());
            }
            let t = parked[self.rng.below(parked.len())];
            self.threads[t].parked = None;
            return Choice::Again;
        }
        // A thread that just ended a wait-loop turn goes last.
        spinning.resize(self.threads.len(), false);
        if ready.iter().any(|&t| !spinning[t]) {
            ready.retain(|&t| !spinning[t]);
        }
        // A thread's run of consecutive non-SeqCst stores goes on without
        // interruption (c11tester.md Fig. 4: otherwise the first stores of
        // a run are far more likely to be read than the last ones).
        let store_run = last.filter(|&u| ready.contains(&u) && self.pending_store_run(u));
        // A thread creation or a reference-count increment runs at once
        // (C11Tester's rule for creation): neither can change what any
        // other thread observes, and otherwise the threads a loop spawns
        // start one by one, the first ones far ahead of the last.
        let eager = ready.iter().copied().find(|&u| {
            self.threads[u]
                .pending
                .as_ref()
                .is_some_and(Pending::runs_at_once)
        });
        let t = match &mut self.pct {
            _ if eager.is_some() => eager.unwrap(),
            None if store_run.is_some() => store_run.unwrap(),
            None => ready[self.rng.below(ready.len())],
            Some(p) => {
                p.step += 1;
                let t = p.pick(ready, &mut self.rng);
                if let Some(i) = p.change_points.iter().position(|&c| c == p.step) {
                    // The i-th change point: the running thread drops below
                    // every initial priority.
                    p.priorities[t] = i as u64 + 1;
                }
                t
            }
        };
        spinning[t] = false;
        if self.park_loads && eager.is_none() && self.consider_parking(t) {
            return Choice::Again;
        }
        *last = self.pending_store_run(t).then_some(t);
        Choice::Run(t)
    }

    /// Runs the execution to its end.
    fn run(&mut self, main: Arc<dyn Fn() + Send + Sync>) -> End {
        let body: ThreadMain = Box::new(move || {
            main();
            Box::new(()) as Box<dyn Any + Send>
        });
        self.start_thread(0, body);
        let mut spinning: Vec<bool> = Vec::new();
        let mut last: Option<usize> = None;
        // Reused: a step must not allocate.
        let mut ready: Vec<usize> = Vec::new();
        // The thread that made the last step, and how many plain accesses
        // it has made in a row since it was chosen.
        let (mut last_plain, mut plain_run): (Option<usize>, u32) = (None, 0);
        loop {
            // A plain access goes on at once (see `PLAIN_RUN`).
            let continued = last_plain
                .filter(|&u| plain_run < PLAIN_RUN && self.plain_runs && self.pending_plain(u));
            plain_run = if continued.is_some() {
                plain_run + 1
            } else {
                0
            };
            let t = match continued {
                Some(u) => {
                    last = None;
                    u
                }
                None => match self.choose(&mut ready, &mut spinning, &mut last) {
                    Choice::Run(t) => t,
                    Choice::Again => continue,
                    Choice::End(end) => return end,
                },
            };
            last_plain = Some(t);
            self.threads[t].steps += 1;
            if let Some(end) = self.over_step_bound(t) {
                return end;
            }
            self.ops += 1;
            let pending = self.threads[t]
                .pending
                .take()
                .expect("a runnable thread waits");
            let tid = t as u32;
            match pending {
                Pending::Spin(_) if !self.threads[t].turn_ops => {
                    // No operation since the last hint: not a turn.
                    spinning[t] = true;
                    self.resume(t, Outcome::default());
                }
                Pending::Spin(site) => {
                    spinning[t] = true;
                    if let Some((r, learned)) = &mut self.robust {
                        r.spin(tid, learned);
                    }
                    let th = &mut self.threads[t];
                    th.turn_ops = false;
                    // A turn repeats the one before when it read the same
                    // and ended at the same hint (the head of one loop):
                    // two sleeps in a row at different places are no loop.
                    let same_hint = th.last_hint.replace(site) == Some(site);
                    let repeats = th.turn_reads == th.last_turn_reads && same_hint;
                    th.stuck_at = (th.turn_clean && repeats && th.turn_start == self.progress)
                        .then_some(self.progress);
                    th.last_turn_reads = std::mem::take(&mut th.turn_reads);
                    th.turn_clean = true;
                    th.turn_start = self.progress;
                    let stuck = th.stuck_at.is_some();
                    if let Some(p) = &mut self.pct {
                        // A waiting thread must not keep the top priority.
                        p.priorities[t] = 0;
                    }
                    self.resume(t, Outcome::default());
                    if stuck {
                        if let Some(end) = self.spinning_forever() {
                            return end;
                        }
                    }
                }
                Pending::Spawn(body) => {
                    let child = self.mem.add_thread(Some(tid));
                    if let Some((r, _)) = &mut self.robust {
                        r.spawn(tid, child);
                    }
                    self.bodies.resize_with(child as usize + 1, || None);
                    self.start_thread(child as usize, body);
                    self.resume(
                        t,
                        Outcome {
                            val: child as i64,
                            ok: true,
                        },
                    );
                }
                Pending::Act(action, bind, site) => {
                    let action = self.location(bind, action);
                    if let Some(f) = self.perform(t, action, site) {
                        return End::Failed(f);
                    }
                }
                Pending::Finished | Pending::Dead => unreachable!(),
            }
            if self
                .robust
                .as_ref()
                .is_some_and(|(r, _)| r.probe && r.verdict.is_some())
            {
                // A probe has its answer: the rest of the run does not matter.
                return End::Complete;
            }
            if let Some(Pending::Finished) = self.threads[t].pending {
                if self.threads[t].fiber.is_none() && self.threads[t].steps > 0 {
                    self.mem.finish(tid);
                    if let Some((r, _)) = &mut self.robust {
                        r.finish(tid);
                    }
                    self.progress += 1;
                    self.threads[t].steps = 0;
                    self.threads[t].steps_at_write = 0;
                }
            }
        }
    }

    /// Whether thread `t` went past the step bound, and how the execution
    /// ends then. A long run that keeps changing memory is no livelock:
    /// the bound counts the steps since the thread last wrote, and only
    /// while no other thread wrote either (a loop that only reads while
    /// nothing changes; a thread polling while the others work for long,
    /// as `main` waiting for a database's writers, is waiting, not stuck);
    /// a thread that goes on all along is stopped only at
    /// [`TOTAL_STEPS_FACTOR`] times the bound (a program that never ends).
    fn over_step_bound(&self, t: usize) -> Option<End> {
        let bound = self.cfg.runtime.max_steps;
        let th = &self.threads[t];
        let how = crate::settings::step_bound_setting();
        if th.steps - th.steps_at_write > bound as u64
            && self.ops - self.ops_at_write > bound as u64
        {
            return Some(self.endless_wait(
                t,
                &format!("in {bound} steps (the step bound)"),
                &format!("performed {bound} visible operations since it last wrote to memory (the step bound; raise it with {how} if the thread just reads for that long)"),
            ));
        }
        let total = (bound as u64).saturating_mul(TOTAL_STEPS_FACTOR);
        if th.steps > total {
            return Some(self.endless_wait(
                t,
                &format!("in {total} steps ({TOTAL_STEPS_FACTOR} times the step bound)"),
                &format!("performed {total} visible operations without finishing ({TOTAL_STEPS_FACTOR} times the step bound; raise it with {how} if the program is just that long)"),
            ));
        }
        None
    }

    /// How an execution ends when thread `t` waits forever: a timed wait
    /// times out (other seeds explore that), a wait for a notification is a
    /// lost wake-up, a plain wait loop a livelock. `when` and `livelock`
    /// say how we know.
    fn endless_wait(&self, t: usize, when: &str, livelock: &str) -> End {
        let waiting = self.shared.borrow().waits.get(t).copied().flatten();
        if waiting == Some(crate::TIMED_WAIT) {
            return End::Blocked;
        }
        if waiting.is_some() && self.shared.borrow().ignore_deadlocks {
            return End::Blocked;
        }
        let (kind, message) = match waiting {
            Some(what) => (
                FailureKind::Deadlock,
                format!("deadlock: thread {t} waits for {what} that did not come {when}: a lost wake-up"),
            ),
            None => (FailureKind::Livelock, format!("thread {t} {livelock}")),
        };
        End::Failed(Failure {
            kind,
            message,
            threads: vec![t as u32],
            events: vec![],
        })
    }

    /// Whether the execution can no longer change: every unfinished thread
    /// either turns in a wait loop that reads only what it read last turn,
    /// with no progress since, or waits (a join, a lock) for one of them.
    /// Ends it then, as the step bound would have, without the wait.
    fn spinning_forever(&self) -> Option<End> {
        let mut first = None;
        // The thread that called exit() writes nothing more.
        let exited = self.shared.borrow().exited.map(|(t, _)| t as usize);
        for (u, th) in self.threads.iter().enumerate() {
            match th.pending {
                Some(Pending::Finished) | None => continue,
                Some(Pending::Dead) if exited == Some(u) => continue,
                Some(Pending::Dead) => return None,
                _ => {}
            }
            if th.stuck_at == Some(self.progress) {
                first.get_or_insert(u);
            } else if th.parked.is_some() || self.runnable(u) {
                return None;
            }
        }
        let t = first?;
        Some(self.endless_wait(
            t,
            "and no thread can send it",
            "spins forever: its wait loop reads only values no thread will change (every other thread has finished, waits, or spins too)",
        ))
    }

    fn loc_sched(&self, loc: c11check_model::Loc) -> LocSched {
        self.stores.get(loc.0 as usize).copied().unwrap_or_default()
    }

    fn loc_sched_mut(&mut self, loc: c11check_model::Loc) -> &mut LocSched {
        let i = loc.0 as usize;
        if self.stores.len() <= i {
            self.stores.resize(i + 1, LocSched::default());
        }
        &mut self.stores[i]
    }

    /// Whether thread `t`, chosen to load a location another thread wrote
    /// and that no store reached since `t` last accessed it, parks (half of
    /// the time) until a store comes or [`PARK_STEPS`] steps pass. Such a
    /// load has nothing new to read now; later it may read a newer store,
    /// or still the old one. Uniform scheduling rarely lets a reader wait
    /// for a writer many steps ahead (chase-lev's thief reading the resized
    /// array). Scheduling only: no execution becomes possible or impossible.
    fn consider_parking(&mut self, t: usize) -> bool {
        let th = &mut self.threads[t];
        th.parked = None;
        if std::mem::replace(&mut th.park_considered, true) {
            return false;
        }
        let Some(Pending::Act(action @ Action::Load { .. }, bind, site)) = th.pending else {
            return false;
        };
        let action = self.location(bind, action);
        let Action::Load { loc, .. } = action else {
            unreachable!()
        };
        self.threads[t].pending = Some(Pending::Act(action, None, site));
        let l = self.loc_sched(loc);
        // Whether `t` may not have met the last store yet: it has not
        // accessed the location since, and the store does not happen before.
        let new_store = l.stores > 0
            && (t >= 64 || l.seen & (1 << t) == 0)
            && self.mem.hb_entry(t as u32, l.writer) < l.store_seq;
        if new_store || l.writer == u32::MAX || l.writer == t as u32 || self.rng.below(2) == 0 {
            return false;
        }
        let until = self.ops + 1 + self.rng.below(PARK_STEPS) as u64;
        self.threads[t].parked = Some((loc, l.stores, until));
        true
    }

    /// Performs a memory operation of thread `t` and resumes it; a data race
    /// comes back as a failure.
    fn perform(&mut self, t: usize, action: Action, site: Site) -> Option<Failure> {
        let tid = t as u32;
        self.threads[t].turn_ops = true;
        let (mut seq, mut read_from) = (None, None);
        // A compare-exchange that fails is a load, and a read-modify-write
        // that writes back what it read changes nothing (judged below).
        if !matches!(
            action,
            Action::Load { .. } | Action::Fence { .. } | Action::Cas { .. } | Action::Rmw { .. }
        ) {
            self.threads[t].turn_clean = false;
        }
        let outcome = match action {
            Action::Load { loc, .. }
            | Action::Store { loc, .. }
            | Action::Rmw { loc, .. }
            | Action::Cas { loc, .. } => {
                let created = self.stores.get(loc.0 as usize).and_then(|l| l.created);
                if let Some((creator, stamp)) = created {
                    if creator != tid
                        && self.mem.hb_entry(tid, creator) <= stamp
                        && !self.shared.borrow().ignore_races
                    {
                        let mut f = crate::judge::creation_race(tid, creator, loc);
                        f.message.push_str(&format!(" (at {site})"));
                        return Some(f);
                    }
                    // Freed already, in execution order: a use after free.
                    if let Some((f, _)) = self.shared.borrow().freed(loc) {
                        return Some(Failure {
                            kind: FailureKind::UseAfterFree,
                            message: format!(
                                "use after free: thread {tid} accesses loc{}, an object in memory thread {f} freed",
                                loc.0
                            ),
                            threads: vec![tid, f],
                            events: vec![],
                        });
                    }
                }
                if self.park_loads {
                    let l = self.loc_sched_mut(loc);
                    if l.writer == u32::MAX || !matches!(action, Action::Load { .. }) {
                        l.writer = tid;
                    }
                    if tid < 64 {
                        l.seen |= 1 << tid;
                    }
                }
                crate::watchdog::beat();
                if let Some((r, learned)) = &mut self.robust {
                    if let Some(f) = r.before(tid, &action, site, learned) {
                        return Some(f);
                    }
                    if let Some(v) = r.force.take() {
                        self.mem.force_stale_read(v);
                    }
                }
                let spurious = self.rng.below(4) == 0;
                let rng = &mut self.rng;
                let mut most = 0;
                let mut choose = |n: usize| {
                    most = most.max(n);
                    rng.below(n)
                };
                let p = self
                    .mem
                    .perform(tid, action, spurious, &mut choose)
                    .expect("a memory action");
                // A failed compare-exchange that could not have succeeded
                // reads the same next turn while no store comes (and does
                // the same if it expects the same, see `turn_reads`); one that
                // may have failed spuriously may succeed then.
                // A swap of `false` that found `false`: the next turn's
                // reads what this one wrote, the same value.
                let changed = match action {
                    Action::Rmw { .. } | Action::Cas { .. } => {
                        p.written.is_some_and(|w| w != p.val)
                    }
                    _ => p.written.is_some(),
                };
                let th = &mut self.threads[t];
                th.turn_reads = mix(th.turn_reads ^ mix(loc.0 as u64) ^ p.val as u64);
                let may_change = match action {
                    Action::Cas { weak, expected, .. } => {
                        th.turn_reads = mix(th.turn_reads ^ mix(expected as u64));
                        changed || weak && spurious
                    }
                    Action::Rmw { .. } => changed,
                    _ => false,
                };
                if most > 1 || may_change {
                    self.threads[t].turn_clean = false;
                }
                if changed {
                    self.progress += 1;
                    self.ops_at_write = self.ops;
                    let th = &mut self.threads[t];
                    th.steps_at_write = th.steps;
                }
                seq = Some(self.mem.last_seq(tid));
                read_from = p.read_from;
                if p.read_from == Some(c11check_model::live_memory::ReadFrom::Init) {
                    let s = self.shared.borrow();
                    if !s.indeterminate.is_empty() && s.is_indeterminate(loc) {
                        drop(s);
                        return Some(crate::judge::uninitialized_failure(
                            tid,
                            loc,
                            &format!("thread {tid} at {site}"),
                            vec![],
                        ));
                    }
                }
                let reported = |s: &Shared| !s.ignore_races && !s.benign_race(loc);
                if let Some(other) = p.race.filter(|_| reported(&self.shared.borrow())) {
                    // The other access, if the recent operations still
                    // hold it, or the watch on this location saw it.
                    let earlier = self
                        .recent
                        .iter()
                        .rev()
                        .find(|op| op.thread == other && op.action.loc() == Some(loc))
                        .map(|op| op.site)
                        .or_else(|| {
                            let (watched, sites) = self.watch.as_ref()?;
                            (*watched == loc)
                                .then(|| sites.get(other as usize).copied().flatten())?
                        });
                    self.race_loc = Some(loc);
                    return Some(race_failure(
                        (tid, site),
                        (other, earlier),
                        loc,
                        !matches!(action, Action::Load { .. }),
                    ));
                }
                if let Some((r, _)) = &mut self.robust {
                    r.forced(self.mem.forced.take());
                    r.after(tid, &action, site, p.val, p.written);
                }
                if let Some(v) = p.written {
                    self.count_store(tid, loc, v);
                }
                if matches!(action, Action::Cas { .. }) {
                    self.threads[t].last_cas_read = Some(p.val);
                }
                // Reference counts' order is not observable (see `Arc`).
                let refcount = matches!(
                    action,
                    Action::Rmw {
                        op: c11check_model::RmwOp::RefInc | c11check_model::RmwOp::RefDec,
                        ..
                    }
                );
                if !matches!(action, Action::Store { .. }) && !refcount {
                    let h = &mut self.threads[t].reads_hash;
                    *h = mix(*h ^ p.val as u64);
                }
                Outcome {
                    val: p.val,
                    ok: p.written.is_some(),
                }
            }
            Action::Fence { ord } => {
                self.mem.fence(tid, ord);
                if let Some((r, _)) = &mut self.robust {
                    r.after(tid, &action, site, 0, None);
                }
                Outcome::default()
            }
            Action::Join { child } => {
                self.mem.join(tid, child);
                if let Some((r, _)) = &mut self.robust {
                    r.join(tid, child);
                }
                Outcome::default()
            }
            Action::Block {
                reason: BlockReason::LockHeld,
            } => {
                // Retried: the runtime's lock loops call `wait_lock` again if
                // the lock is still held.
                self.threads[t].lock_wait = None;
                Outcome::default()
            }
            Action::Block { .. } => {
                self.threads[t].pending = Some(Pending::Dead);
                return None;
            }
            Action::Spawn { .. } | Action::Finish => Outcome::default(),
        };
        if self.recent.len() == self.trace_cap {
            self.recent.pop_front();
        }
        if let Some((watched, sites)) = &mut self.watch {
            if action.loc() == Some(*watched) {
                let t = tid as usize;
                if sites.len() <= t {
                    sites.resize(t + 1, None);
                }
                sites[t] = Some(site);
            }
        }
        self.recorded += 1;
        self.recent.push_back(LiveOp {
            thread: tid,
            seq,
            action,
            val: outcome.val,
            ok: outcome.ok,
            read_from,
            site,
        });
        self.resume(t, outcome);
        // A lock wait: remember how many stores the lock had.
        if let Some(Pending::Act(
            Action::Block {
                reason: BlockReason::LockHeld,
            },
            ..,
        )) = &self.threads[t].pending
        {
            let loc = self.shared.borrow().last_lock;
            if let Some(loc) = loc {
                let LocSched {
                    stores: n, last, ..
                } = self.loc_sched(loc);
                // It read an older value than the last store: retry at once.
                let stale = n > 0 && self.threads[t].last_cas_read != Some(last);
                self.threads[t].lock_wait = Some((loc, if stale { n - 1 } else { n }));
            }
        }
        None
    }

    fn count_store(&mut self, t: u32, loc: c11check_model::Loc, val: i64) {
        let seq = self.mem.last_seq(t);
        let l = self.loc_sched_mut(loc);
        l.store_seq = seq;
        l.stores += 1;
        l.last = val;
        l.writer = t;
        l.seen = if t < 64 { 1 << t } else { 0 };
    }

    /// No thread can run: finished, a failed assume, or a deadlock.
    fn stuck(&self) -> End {
        let waiting: Vec<u32> = (0..self.threads.len())
            .filter(|&t| {
                !matches!(
                    self.threads[t].pending,
                    Some(Pending::Finished) | Some(Pending::Dead) | None
                )
            })
            .map(|t| t as u32)
            .collect();
        let dead = self
            .threads
            .iter()
            .filter(|t| matches!(t.pending, Some(Pending::Dead)))
            .count();
        // The program called exit() (its thread is the one dead): the
        // threads still waiting stop with it.
        if dead == 1 && self.shared.borrow().exited.is_some() {
            return End::Complete;
        }
        if dead > 0 {
            return End::Blocked;
        }
        if waiting.is_empty() {
            return End::Complete;
        }
        // Threads inside a facade's wait (the permit take of a condition
        // variable, a barrier or a channel) say what they wait for; a timed
        // one times out instead.
        let labels: Vec<Option<&'static str>> = {
            let shared = self.shared.borrow();
            waiting
                .iter()
                .map(|&t| shared.waits.get(t as usize).copied().flatten())
                .collect()
        };
        if labels.contains(&Some(crate::TIMED_WAIT)) || self.shared.borrow().ignore_deadlocks {
            return End::Blocked;
        }
        let plain: Vec<u32> = (waiting.iter().zip(&labels))
            .filter(|(_, l)| l.is_none())
            .map(|(&t, _)| t)
            .collect();
        let mut parts: Vec<String> = (waiting.iter().zip(&labels))
            .filter_map(|(&t, l)| {
                l.map(|what| format!("thread {t} waits for {what}, which never comes"))
            })
            .collect();
        if !plain.is_empty() {
            parts.push(format!(
                "{} wait for a lock or a thread that never comes",
                crate::report::thread_list(&plain)
            ));
        }
        End::Failed(Failure {
            kind: FailureKind::Deadlock,
            message: format!("deadlock: {}", parts.join("; ")),
            threads: waiting,
            events: vec![],
        })
    }

    fn teardown(&mut self) {
        for (t, th) in self.threads.iter_mut().enumerate() {
            if let Some(f) = th.fiber.take() {
                retire(f, t, self.stacks);
            }
            if let Some(Pending::Spawn(main)) = th.pending.take() {
                std::mem::forget(main);
            }
        }
        for b in self.bodies.drain(..) {
            std::mem::forget(b);
        }
        forget_results(&self.shared);
    }
}

/// The report of a data race between thread `t`'s access and `other`'s.
fn race_failure(
    (t, site): (u32, Site),
    (other, earlier): (u32, Option<Site>),
    loc: c11check_model::Loc,
    write: bool,
) -> Failure {
    // The earlier access's place on a line of its own: the first line
    // names the bug (iterations that hit it are counted by it), whether
    // the place is known or not.
    let earlier = earlier
        .map(|s| format!("\n  the earlier access: thread {other} at {s}"))
        .unwrap_or_default();
    Failure {
        kind: FailureKind::DataRace,
        message: format!(
            "data race on loc{}: a {} by thread {t} at {site} and an earlier access by thread {other} are not ordered by happens-before{earlier}",
            loc.0,
            if write { "write" } else { "read" }
        ),
        threads: vec![other, t],
        events: vec![],
    }
}

/// How a live run picks its schedules (the same for every iteration), and
/// how its replay strings say so.
#[derive(Clone, Copy)]
struct Scheduling {
    pct_depth: Option<u32>,
    park_loads: bool,
    strong_cas: bool,
}

impl Scheduling {
    /// The replay string of iteration seed `s` (PCT's `steps`): `l1:<seed>`
    /// (uniform, loads park), `l1:<seed>:uniform` (loads do not park) or
    /// `l1:<seed>:<pct depth>:<pct steps>`, each followed by `:strong` when
    /// weak compare-exchanges never fail spuriously.
    fn replay(&self, s: u64, steps: u64) -> String {
        let strong = if self.strong_cas { ":strong" } else { "" };
        match self.pct_depth {
            Some(d) => format!("l1:{s}:{d}:{steps}{strong}"),
            None if self.park_loads => format!("l1:{s}{strong}"),
            None => format!("l1:{s}:uniform{strong}"),
        }
    }
}

/// One OS thread's live runtime: the fibers' state and stacks, installed
/// on the thread while it lives.
struct LiveWorker {
    shared: Rc<RefCell<Shared>>,
    stacks: crate::fiber::StackPool,
    /// With robustness: what the iterations learn of wait loops, and the
    /// stale reads they hold (see `crate::robust_live`; one worker runs
    /// every iteration then, as each learns from those before it).
    learned: Learned,
}

impl LiveWorker {
    fn new(sched: Scheduling, cfg: &RunConfig) -> Self {
        crate::panics::install_panic_hook();
        let shared = Rc::new(RefCell::new(Shared::default()));
        install_shared(Some(shared.clone()));
        crate::panics::MODELLING.with(|m| m.set(true));
        crate::shared::count_run(true);
        shared.borrow_mut().strong_cas = sched.strong_cas;
        shared.borrow_mut().ignore_races = !cfg.report_races;
        LiveWorker {
            shared,
            stacks: crate::fiber::StackPool::default(),
            learned: Learned::default(),
        }
    }
}

impl Drop for LiveWorker {
    fn drop(&mut self) {
        install_shared(None);
        crate::panics::MODELLING.with(|m| m.set(false));
        crate::shared::count_run(false);
        crate::alloc::release_quarantine();
        crate::cell::set_worker(None);
    }
}

/// What a chunk of live iterations found (see [`LiveChunk::merge`]).
#[derive(Default)]
struct LiveChunk {
    stats: Stats,
    /// Each distinct bug with how many iterations hit it, in the order of
    /// the iterations that first hit them.
    found: Vec<(Box<Report>, u64)>,
    /// Distinct behaviours seen (see `Thread::reads_hash`).
    behaviours: std::collections::HashSet<u64>,
    iterations: u64,
    ops: u64,
    /// The most stores the live memory held at once in one iteration.
    peak_stores: usize,
}

/// Whether two failures are the same bug: the same kind and first line of
/// the message (an assertion's `left`/`right` values may differ).
fn same_bug(a: &Failure, b: &Failure) -> bool {
    let first = |m: &str| m.lines().next().unwrap_or("").to_string();
    a.kind == b.kind && first(&a.message) == first(&b.message)
}

impl LiveChunk {
    /// Adds the iterations of `later` (which come after these).
    fn merge(&mut self, later: LiveChunk) {
        self.stats.add(&later.stats);
        for (r, hits) in later.found {
            match self
                .found
                .iter_mut()
                .find(|(f, _)| same_bug(&f.failure, &r.failure))
            {
                Some(f) => f.1 += hits,
                None => self.found.push((r, hits)),
            }
        }
        self.behaviours.extend(later.behaviours);
        self.iterations += later.iterations;
        self.ops += later.ops;
        self.peak_stores = self.peak_stores.max(later.peak_stores);
    }
}

/// Progress of a live run, shared by its workers: a line a second once the
/// run is longer than a second.
struct LiveProgress {
    start: Instant,
    /// A replay: its bug is no news.
    replaying: bool,
    last: std::sync::Mutex<Instant>,
    iterations: std::sync::atomic::AtomicU64,
    ops: std::sync::atomic::AtomicU64,
    /// Of the chunks merged so far.
    behaviours: std::sync::atomic::AtomicU64,
    bugs: std::sync::atomic::AtomicU64,
}

impl LiveProgress {
    /// Random iteration `i` found a new bug.
    fn bug_found(&self, i: u64) {
        if self.replaying {
            return;
        }
        eprintln!(
            "c11check: random execution {} found a bug, {:.2}s into the run; running it again for the report",
            i + 1,
            self.start.elapsed().as_secs_f64()
        );
    }

    fn iteration_done(&self, ops: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let n = self.iterations.fetch_add(1, Relaxed) + 1;
        let ops = self.ops.fetch_add(ops, Relaxed) + ops;
        if self.start.elapsed() < Duration::from_secs(1) {
            return;
        }
        let Ok(mut last) = self.last.try_lock() else {
            return;
        };
        if last.elapsed() < Duration::from_secs(1) {
            return;
        }
        *last = Instant::now();
        let secs = self.start.elapsed().as_secs_f64();
        eprintln!(
            "c11check: {n} random executions in {secs:.1}s ({:.0}/s, {:.1} M operations/s), {} distinct behaviours, {} distinct bugs",
            n as f64 / secs,
            ops as f64 / secs / 1e6,
            self.behaviours.load(Relaxed),
            self.bugs.load(Relaxed),
        );
    }
}

/// Runs `iterations` live executions of `main` (or replays one seed). The
/// iterations go in chunks to `cfg.jobs` worker threads, each with its own
/// runtime (`random::deal`; with `cfg.shard`, that shard's chunks only),
/// and what they find is merged in iteration order, so that any number of
/// workers reports the same bugs, hit counts and behaviours. With
/// robustness one worker runs them all (each iteration learns wait loops
/// from those before it).
pub(crate) fn run_live(
    main: Arc<dyn Fn() + Send + Sync>,
    cfg: &RunConfig,
    iterations: u64,
    seed: u64,
) -> Result<Summary, Box<Report>> {
    let _watchdog = crate::watchdog::watch();
    let start = Instant::now();
    let replay: Option<Vec<&str>> = cfg
        .replay
        .as_deref()
        .and_then(|s| s.strip_prefix("l1:"))
        .map(|s| s.split(':').collect());
    let mut sched = Scheduling {
        pct_depth: cfg.pct_depth,
        park_loads: cfg.park_loads,
        strong_cas: !cfg.spurious_failures,
    };
    let progress = LiveProgress {
        start,
        replaying: replay.is_some(),
        last: std::sync::Mutex::new(start),
        iterations: Default::default(),
        ops: Default::default(),
        behaviours: Default::default(),
        bugs: Default::default(),
    };
    let mut whole = LiveChunk::default();
    // Runs the chunk of iterations `range` on `worker`.
    let chunk = |worker: &mut LiveWorker, range: std::ops::Range<u64>| {
        let seeds: Vec<(u64, u64)> = range.map(|i| (i, iteration_seed(seed, i))).collect();
        let found = run_chunk(&main, cfg, sched, worker, &seeds, 100, start, &progress);
        let stop = found.stats.cut;
        (found, stop)
    };
    let worker = match replay {
        Some(mut r) => {
            sched.strong_cas = r.last() == Some(&"strong");
            if sched.strong_cas {
                r.pop();
            }
            sched.park_loads = r.len() == 1;
            let mut steps = 100;
            if r.len() == 3 {
                sched.pct_depth = Some(r[1].parse().unwrap_or(1));
                steps = r[2].parse().unwrap_or(100);
            }
            let mut worker = LiveWorker::new(sched, cfg);
            let seeds = [(0, r[0].parse().unwrap_or(0))];
            whole = run_chunk(
                &main,
                cfg,
                sched,
                &mut worker,
                &seeds,
                steps,
                start,
                &progress,
            );
            Some(worker)
        }
        None if cfg.robustness => {
            let mut worker = LiveWorker::new(sched, cfg);
            let chunks = iterations.div_ceil(random::CHUNK);
            for k in (0..chunks).filter(|&k| random::shard_owns_chunk(cfg.shard, k)) {
                let (c, stop) = chunk(&mut worker, random::chunk_range(k, iterations));
                whole.merge(c);
                if stop {
                    break;
                }
            }
            Some(worker)
        }
        None => {
            let jobs = cfg.jobs.clamp(1, crate::MAX_JOBS as usize);
            let make = |w: usize| {
                if jobs > 1 {
                    crate::cell::set_worker(Some(w as u32));
                }
                LiveWorker::new(sched, cfg)
            };
            random::deal(
                jobs,
                iterations,
                cfg.shard,
                &make,
                &chunk,
                &mut |c: LiveChunk| {
                    use std::sync::atomic::Ordering::Relaxed;
                    whole.merge(c);
                    progress
                        .behaviours
                        .store(whole.behaviours.len() as u64, Relaxed);
                    progress.bugs.store(whole.found.len() as u64, Relaxed);
                    true
                },
                &mut || {},
            );
            None
        }
    };
    let LiveChunk {
        mut stats,
        mut found,
        behaviours,
        iterations: iterations_run,
        ops,
        peak_stores,
    } = whole;
    if let Some(mut worker) = worker {
        confirm_stale_reads(&main, cfg, sched, &mut worker, &mut found);
    }
    stats.elapsed = start.elapsed();
    let mut found = found.into_iter();
    match found.next() {
        Some((mut r, hits)) => {
            r.hits = Some((hits, iterations_run));
            r.operations = Some(ops);
            r.others = found
                .map(|(o, h)| {
                    (
                        format!("{}: {}", o.failure.kind.title(), o.failure.message),
                        h,
                    )
                })
                .collect();
            Err(r)
        }
        None => Ok(Summary {
            blocked: stats.blocked,
            stats,
            behaviours: Some(behaviours.len() as u64),
            operations: Some(ops),
            peak_stores: Some(peak_stores),
        }),
    }
}

/// The report of `failure` in iteration `i` (seed `s`, PCT's `steps`),
/// shown by the operations `ops_shown` (of `total`), in the names of the
/// execution `worker` ran last.
fn new_report(
    worker: &LiveWorker,
    sched: Scheduling,
    failure: Failure,
    ops_shown: Vec<LiveOp>,
    total: u64,
    (i, s, steps): (u64, u64, u64),
) -> Box<Report> {
    let full = std::env::var("C11CHECK_FULL_TRACE").is_ok_and(|v| v.trim() != "0");
    let (ops_shown, header) = match (full, trace_excerpt(&ops_shown, &failure.threads)) {
        (false, Some(kept)) => {
            let header = format!(
                "({} of the execution's {total} operations, in the order they ran: the last {TAIL_SHOWN}, each thread's last {PER_THREAD_SHOWN}, and the last {AT_LOCATION_SHOWN} at the locations the failing threads touched last; C11CHECK_FULL_TRACE=1 shows the last {})",
                kept.len(),
                ops_shown.len()
            );
            (kept, header)
        }
        _ if ops_shown.len() as u64 >= total => (
            ops_shown,
            format!("(all {total} operations of this execution, in the order they ran)"),
        ),
        _ => {
            let header = format!(
                "(the last {} of the execution's {total} operations, in the order they ran)",
                ops_shown.len()
            );
            (ops_shown, header)
        }
    };
    let mut trace = vec![header];
    trace.extend(ops_shown.iter().map(LiveOp::line));
    let shown: std::collections::HashSet<u32> = ops_shown
        .iter()
        .filter_map(|o| o.action.loc())
        .map(|l| l.0)
        .collect();
    let mentioned = crate::report::mentioned_locations(&failure.message);
    let names = (worker.shared.borrow())
        .location_names_where(&|l| shown.contains(&l.0) || mentioned.contains(&l.0));
    let mut report = Box::new(Report {
        locations: crate::report::legend_from_names(&names, |l| shown.contains(&l)),
        failure,
        trace,
        replay: sched.replay(s, steps),
        dot: live_dot(&ops_shown),
        execution_number: i + 1,
        random_iteration: Some((i, s)),
        hits: None,
        others: Vec::new(),
        operations: None,
    });
    crate::report::apply_names(&mut report, &names);
    report
}

/// Runs the live iterations `seeds` (number, seed) on `worker`; PCT's
/// change points are drawn among the steps of the longest execution of the
/// chunk so far (`steps` at first).
#[allow(clippy::too_many_arguments)]
fn run_chunk(
    main: &Arc<dyn Fn() + Send + Sync>,
    cfg: &RunConfig,
    sched: Scheduling,
    worker: &mut LiveWorker,
    seeds: &[(u64, u64)],
    mut steps: u64,
    start: Instant,
    progress: &LiveProgress,
) -> LiveChunk {
    let mut out = LiveChunk::default();
    for &(i, s) in seeds {
        if cfg.time_budget.is_some_and(|b| start.elapsed() >= b) {
            out.stats.cut = true;
            break;
        }
        let steps_now = steps;
        // This seed's execution, keeping the last `keep` operations.
        let run_seed = |worker: &mut LiveWorker, keep, watch| {
            let LiveWorker {
                shared,
                stacks,
                learned,
            } = worker;
            run_iteration(
                main,
                cfg,
                shared,
                stacks,
                (s, sched.pct_depth, steps_now, sched.park_loads),
                (keep, watch),
                cfg.robustness.then_some((learned, i, None)),
            )
        };
        let it = run_seed(worker, RECENT, None);
        let (end, recent, it_ops, it_recorded) = (it.end, it.trace, it.ops, it.recorded);
        let race_loc = it.race_loc;
        out.ops += it.ops;
        out.peak_stores = out.peak_stores.max(it.peak_stores);
        progress.iteration_done(it.ops);
        steps = steps.max(it.ops);
        out.behaviours.insert(it.behaviour);
        let shared = &worker.shared;
        let panic = || {
            // A bug a thread stopped at (`fail_execution`) says what it is.
            let stopped = shared.borrow_mut().failure.take();
            if stopped.is_some() {
                return stopped;
            }
            shared
                .borrow()
                .panic_failure()
                .map(|(threads, message)| Failure {
                    kind: FailureKind::Panic,
                    message,
                    threads,
                    events: vec![],
                })
        };
        // After exit() nothing waits: the program is gone.
        let end = match end {
            End::Failed(f)
                if matches!(f.kind, FailureKind::Livelock | FailureKind::Deadlock)
                    && shared.borrow().exited.is_some() =>
            {
                End::Complete
            }
            end => end,
        };
        let failure = match end {
            // A thread that panicked holding a spin lock leaves the others
            // spinning: the panic is the bug, the hang its consequence.
            End::Failed(f) if matches!(f.kind, FailureKind::Livelock | FailureKind::Deadlock) => {
                Some(match panic() {
                    Some(mut p) => {
                        p.message
                            .push_str(&format!("\n  (after it, {})", f.message));
                        p
                    }
                    None => f,
                })
            }
            End::Failed(f) => Some(f),
            End::Blocked => {
                out.stats.blocked += 1;
                panic()
            }
            End::Complete => {
                out.stats.executions += 1;
                panic().or_else(|| {
                    let sh = shared.borrow();
                    let (_, what, site) = sh.live.first()?;
                    Some(Failure {
                        kind: FailureKind::Leak,
                        message: format!("{what} allocation never released; made at {site}"),
                        threads: vec![],
                        events: vec![],
                    })
                })
            }
        };
        out.iterations += 1;
        let Some(mut failure) = failure else {
            continue;
        };
        // Messages name locations as the report will (the same bug in two
        // iterations may bind its objects in another order).
        failure.message = shared.borrow().renamed(&failure.message);
        // Each distinct bug is reported once, with how many iterations hit it.
        if let Some(f) = out
            .found
            .iter_mut()
            .find(|(r, _)| same_bug(&r.failure, &failure))
        {
            f.1 += 1;
            continue;
        }
        // A new bug: say when it was found (the report's runs come on top),
        // then run its execution again from its seed, keeping every
        // operation (up to FULL_TRACE) for the report.
        progress.bug_found(i);
        let full = run_seed(worker, FULL_TRACE, race_loc);
        let same = matches!(&full.end, End::Failed(f) if f.kind == failure.kind)
            || !matches!(full.end, End::Failed(_)) && full.ops == it_ops;
        let (ops_shown, total) = if same {
            // Run again watching the race's location, the report can say
            // where the earlier access was.
            if let End::Failed(f) = &full.end {
                if f.kind == FailureKind::DataRace {
                    let message = worker.shared.borrow().renamed(&f.message);
                    let first = |m: &str| m.lines().next().unwrap_or("").to_string();
                    if first(&message) == first(&failure.message) {
                        failure.message = message;
                    }
                }
            }
            (full.trace, full.recorded)
        } else {
            (recent, it_recorded)
        };
        let report = new_report(worker, sched, failure, ops_shown, total, (i, s, steps_now));
        out.found.push((report, 1));
    }
    out
}

/// Stale reads no failed wait turn explains: each iteration that had one
/// first is run again taking the stale value (a probe: if a wait then
/// waits on, the read was a failed turn); if it was no failed turn, run
/// again stopping at it, for the report.
fn confirm_stale_reads(
    main: &Arc<dyn Fn() + Send + Sync>,
    cfg: &RunConfig,
    sched: Scheduling,
    worker: &mut LiveWorker,
    found: &mut Vec<(Box<Report>, u64)>,
) {
    for c in worker.learned.confirmed() {
        // `probe`: take the stale value; else stop at it, keeping every
        // operation for the report.
        let rerun = |worker: &mut LiveWorker, probe: bool| {
            let LiveWorker {
                shared,
                stacks,
                learned,
            } = worker;
            run_iteration(
                main,
                cfg,
                shared,
                stacks,
                (c.seed, sched.pct_depth, c.steps, sched.park_loads),
                (if probe { RECENT } else { FULL_TRACE }, None),
                Some((learned, c.iteration, Some((c.site, c.val, probe)))),
            )
        };
        if rerun(worker, true).robust_verdict == Some(false) {
            continue;
        }
        let it = rerun(worker, false);
        if let End::Failed(mut f) = it.end {
            f.message = worker.shared.borrow().renamed(&f.message);
            let first = |m: &str| m.lines().next().unwrap_or("").to_string();
            if found
                .iter()
                .any(|(r, _)| first(&r.failure.message) == first(&f.message))
            {
                continue;
            }
            let report = new_report(
                worker,
                sched,
                f,
                it.trace,
                it.recorded,
                (c.iteration, c.seed, c.steps),
            );
            found.push((report, 1));
        }
    }
}

/// One operation of a live execution, as a report shows it.
#[derive(Clone)]
struct LiveOp {
    thread: u32,
    /// Its sequence number (memory accesses), which names it as a store.
    seq: Option<u64>,
    action: Action,
    val: i64,
    /// Whether a compare-exchange succeeded.
    ok: bool,
    read_from: Option<ReadFrom>,
    site: Site,
}

impl LiveOp {
    /// `T1 #7: load(Relaxed) loc2 = 1 (reads T0 #3) at src/lib.rs:4:9`:
    /// the operation in the exhaustive engine's words; a live run names
    /// its operations by thread and sequence number.
    fn line(&self) -> String {
        let LiveOp {
            thread: t,
            action: a,
            val: v,
            site,
            ..
        } = self;
        let num = self.seq.map(|n| format!(" #{n}")).unwrap_or_default();
        let read = match self.read_from {
            Some(ReadFrom::Init) => " (reads the initial value)".to_string(),
            Some(ReadFrom::Store { thread, seq }) => format!(" (reads T{thread} #{seq})"),
            None => String::new(),
        };
        let wrote = match a {
            Action::Cas { .. } => self.ok,
            _ => a.may_write(),
        };
        let spurious = matches!(a, Action::Cas { weak: true, .. })
            && !self.ok
            && a.cas_succeeds(*v) == Some(true);
        let what = crate::report::describe_action(a, *v, wrote, spurious);
        format!("T{t}{num}: {what}{read} at {site}")
    }
}

/// The operations of a live execution as Graphviz: one cluster per thread
/// with its operations in order, and an edge from each store to the loads
/// that read it (from the location's initial value, or from a store the
/// operations shown do not include, drawn as a separate node).
fn live_dot(ops: &[LiveOp]) -> String {
    use std::fmt::Write;
    let mut s = String::from(
        "digraph execution {\n  rankdir=TB;\n  node [shape=box, fontname=monospace];\n",
    );
    let name = |i: usize| format!("o{i}");
    let threads: std::collections::BTreeSet<u32> = ops.iter().map(|o| o.thread).collect();
    for &t in &threads {
        let _ = writeln!(s, "  subgraph cluster_t{t} {{\n    label=\"thread {t}\";");
        let mut prev = None;
        for (i, o) in ops.iter().enumerate().filter(|(_, o)| o.thread == t) {
            let _ = writeln!(
                s,
                "    {} [label=\"{}\"];",
                name(i),
                o.line().replace('"', "'")
            );
            if let Some(p) = prev {
                let _ = writeln!(s, "    {} -> {} [label=sb];", name(p), name(i));
            }
            prev = Some(i);
        }
        s.push_str("  }\n");
    }
    let by_seq: std::collections::HashMap<u64, usize> = ops
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.seq.map(|n| (n, i)))
        .collect();
    for (i, o) in ops.iter().enumerate() {
        let from = match o.read_from {
            None => continue,
            Some(ReadFrom::Init) => {
                let loc = o.action.loc().map_or(0, |l| l.0);
                let _ = writeln!(s, "  init{loc} [label=\"initial value of x{loc}\"];");
                format!("init{loc}")
            }
            Some(ReadFrom::Store { thread, seq }) => match by_seq.get(&seq) {
                Some(&j) => name(j),
                None => {
                    let _ = writeln!(s, "  s{seq} [label=\"T{thread} #{seq} (not shown)\"];");
                    format!("s{seq}")
                }
            },
        };
        let _ = writeln!(s, "  {from} -> {} [label=rf, color=darkgreen];", name(i));
    }
    s.push_str("}\n");
    s
}

/// What one live execution did.
struct Iteration {
    end: End,
    /// Its last operations (at most the `cap` given).
    trace: Vec<LiveOp>,
    /// Memory operations performed (what the trace would show in full).
    recorded: u64,
    ops: u64,
    /// The most stores its live memory held at once.
    peak_stores: usize,
    /// Which behaviour it showed (see `Thread::reads_hash`).
    behaviour: u64,
    /// A probe's answer (see `LiveRobustness::probe`).
    robust_verdict: Option<bool>,
    /// The location of the data race it ended with, if any.
    race_loc: Option<c11check_model::Loc>,
}

/// With robustness: what the run learned, the iteration's number, and the
/// stale read (site, value) to stop at when re-running a candidate.
/// (`true`: probe it, see `LiveRobustness::probe`).
type RobustIteration<'l> = (&'l mut Learned, u64, Option<(Site, i64, bool)>);

/// Runs one live execution of `main` from `(seed, pct depth, pct steps)`,
/// keeping its last `cap` operations for the report and each thread's last
/// access to the location `watch` (a race's, when it is run again).
fn run_iteration(
    main: &Arc<dyn Fn() + Send + Sync>,
    cfg: &RunConfig,
    shared: &Rc<RefCell<Shared>>,
    stacks: &mut crate::fiber::StackPool,
    (s, pct_depth, steps_now, park_loads): (u64, Option<u32>, u64, bool),
    (cap, watch): (usize, Option<c11check_model::Loc>),
    robust: Option<RobustIteration<'_>>,
) -> Iteration {
    {
        let mut sh = shared.borrow_mut();
        sh.generation = crate::cell::next_generation();
        sh.reset_execution();
    }
    crate::alloc::release_quarantine();
    let mut ex = Execution {
        cfg,
        shared: shared.clone(),
        mem: {
            let mut m = LiveMemory::for_model(cfg.model);
            // Robustness watches SC runs; races are judged on them with the
            // model's happens-before.
            m.set_read_latest(robust.is_some());
            m.set_prune_window(cfg.prune_window);
            m.set_plain_fast(true);
            m
        },
        threads: Vec::new(),
        bodies: Vec::new(),
        rng: Rng::new(s),
        stores: Vec::new(),
        stacks,
        ops: 0,
        ops_at_write: 0,
        pct: None,
        recent: std::collections::VecDeque::new(),
        trace_cap: cap,
        recorded: 0,
        watch: watch.map(|l| (l, Vec::new())),
        race_loc: None,
        park_loads: park_loads && pct_depth.is_none(),
        plain_runs: pct_depth.is_none() && robust.is_none(),
        progress: 0,
        robust: robust.map(|(learned, i, stop)| {
            let mut r = LiveRobustness::new(i, s, steps_now, stop.map(|(site, v, _)| (site, v)));
            r.probe = stop.is_some_and(|(_, _, probe)| probe);
            (r, learned)
        }),
    };
    if let Some(depth) = pct_depth {
        ex.pct = Some(Pct::new(depth, steps_now, &mut ex.rng));
    }
    let end = ex.run(main.clone());
    let peak_stores = ex.mem.stats().peak_stores;
    let robust_verdict = ex.robust.as_ref().and_then(|(r, _)| r.verdict);
    let recent: Vec<LiveOp> = ex.recent.drain(..).collect();
    let behaviour = ex.threads.iter().fold(0u64, |h, th| mix(h ^ th.reads_hash));
    let (ops, recorded, race_loc) = (ex.ops, ex.recorded, ex.race_loc);
    ex.teardown();
    Iteration {
        end,
        trace: recent,
        recorded,
        ops,
        peak_stores,
        behaviour,
        robust_verdict,
        race_loc,
    }
}
