//! The fiber driver: runs the threads of a Rust closure for the explorer.

use crate::protocol::{Outcome, Request, ThreadMain};
use crate::replay::{replayed, with_loc};
use crate::report::{Failure, FailureKind};
use crate::shared::{install_shared, Shared};
use crate::Site;
use c11check_explore::Driver;
use c11check_model::{Action, BlockReason, EventId, ExecutionGraph, Loc, MemOrder};
use corosensei::CoroutineResult;
use std::any::Any;
use std::cell::RefCell;
use std::ptr::NonNull;
use std::rc::Rc;
use std::sync::Arc;

use crate::fiber::{forget_results, new_fiber, retire, Fiber};

/// Limits of the runtime.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    /// Stack size of each fiber, in bytes.
    pub stack_size: usize,
    /// Visible operations one thread may perform in one execution; a thread
    /// that reaches it is cut (reported as a livelock).
    pub max_steps: u32,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            stack_size: 1024 * 1024,
            max_steps: 10_000,
        }
    }
}

/// What a suspended fiber waits to do.
enum Pending {
    /// A visible operation (the explorer turns it into an event).
    Act(Action, Site),
    /// A spawn: the action plus the new thread's body.
    Spawn(ThreadMain, Site),
    /// The thread returned.
    Finished,
}

/// An object whose location a pending operation still has to get: bound only
/// once the graph has been replayed, so that a fresh number never takes the
/// place of one the graph gives to an object later in the replay.
type Unbound = Option<(*const crate::LocCell, i64)>;

#[derive(Default)]
struct Slot {
    fiber: Option<Fiber>,
    pending: Option<Pending>,
    /// The location the pending operation waits for (see [`Unbound`]).
    unbound: Unbound,
    /// Events of the graph this fiber has performed.
    done: u32,
    /// Event counts at the thread's spin hints, and where each hint was
    /// made (for cutting spin loops).
    spin_marks: Vec<(u32, Site)>,
}

/// Runs a closure's threads as fibers; implements the explorer's [`Driver`].
pub struct FiberDriver {
    main: Arc<dyn Fn() + Send + Sync>,
    options: RuntimeOptions,
    slots: Vec<Slot>,
    /// Bodies of spawned threads whose fibers are not created yet.
    bodies: Vec<Option<ThreadMain>>,
    pub(crate) shared: Rc<RefCell<Shared>>,
    /// Locations used by events of the current graph, by index (fresh ones
    /// avoid them).
    used_locs: Vec<bool>,
    /// Fiber stacks of finished fibers, reused (allocating one is a syscall).
    stacks: crate::fiber::StackPool,
}

impl FiberDriver {
    pub fn new(main: Arc<dyn Fn() + Send + Sync>, options: RuntimeOptions) -> Self {
        crate::panics::install_panic_hook();
        FiberDriver {
            main,
            options,
            slots: Vec::new(),
            bodies: Vec::new(),
            shared: Rc::new(RefCell::new(Shared::default())),
            used_locs: Vec::new(),
            stacks: Default::default(),
        }
    }

    /// Thread `t` reached the step bound: if it was repeating one turn of a
    /// loop that only reads (a spin loop without `spin_loop()` or
    /// `yield_now()`), the run stops here with a report that says so. Going
    /// on would explore every number of turns up to the bound (hours for a
    /// flag another thread sets), and could only end in a report of the
    /// bound anyway.
    ///
    /// With `min_turns`, only a loop that repeated its turn that many times
    /// is stopped (checked as the thread runs, before the bound): the
    /// explorer adds one turn per execution to a loop whose exit reads
    /// another thread's store (a compare-exchange lock taken in a loop, a
    /// flag read in a loop), so the bound would be reached only after
    /// thousands of executions. Returns whether it stopped the run.
    fn stop_at_unmarked_spin(&mut self, g: &ExecutionGraph, t: u32, min_turns: u32) -> bool {
        let state = ExecutionState(self.shared.clone());
        let site = |id: EventId| state.site(id);
        let len = g.thread_len(t);
        let Some(turn) = crate::report::repeated_turn(g, t, len, &site) else {
            return false;
        };
        if turn.turns < min_turns {
            return false;
        }
        let turn_events = turn.start + (turn.turns - 1) * turn.len..len;
        if turn_events.clone().any(|i| {
            let e = g.event(EventId::new(t, i));
            e.is_write() || !(e.is_read() || matches!(e.action, Action::Fence { .. }))
        }) {
            return false;
        }
        let message = crate::report::spin_message(g, t, turn, &site);
        self.shared.borrow_mut().failure.get_or_insert(Failure {
            kind: FailureKind::SpinWithoutHint,
            message,
            threads: vec![t],
            events: vec![EventId::new(t, turn.start)],
        });
        true
    }

    /// Makes the runtime functions of this crate reach this driver while it runs.
    pub fn enter(&self) {
        install_shared(Some(self.shared.clone()));
        crate::panics::MODELLING.with(|m| m.set(true));
        crate::shared::count_run(true);
    }
    /// Undoes [`Self::enter`] and drops the fibers of the last execution.
    pub fn leave(&mut self) {
        self.teardown();
        install_shared(None);
        crate::panics::MODELLING.with(|m| m.set(false));
        crate::shared::count_run(false);
        crate::alloc::release_quarantine();
    }

    /// What the visitor of an exploration needs to judge an execution.
    pub fn state(&self) -> ExecutionState {
        ExecutionState(self.shared.clone())
    }

    fn teardown(&mut self) {
        for (t, slot) in self.slots.iter_mut().enumerate() {
            if let Some(f) = slot.fiber.take() {
                retire(f, t, &mut self.stacks);
            }
        }
        // Thread bodies that never ran, pending spawns and thread results hold
        // user values whose destructors may use modelled types: they are
        // leaked, not dropped, since no modelled thread runs any more.
        for slot in self.slots.drain(..) {
            if let Some(Pending::Spawn(main, _)) = slot.pending {
                std::mem::forget(main);
            }
        }
        for b in self.bodies.drain(..) {
            std::mem::forget(b);
        }
        forget_results(&self.shared);
        self.shared.borrow_mut().reset_execution();
        crate::alloc::release_quarantine();
    }

    #[inline]
    fn slot(&mut self, t: u32) -> &mut Slot {
        let t = t as usize;
        if self.slots.len() <= t {
            self.slots.resize_with(t + 1, Slot::default);
        }
        &mut self.slots[t]
    }

    /// Creates thread `t`'s fiber if its body is known, and runs it to its
    /// first visible operation.
    fn ensure_started(&mut self, g: &mut ExecutionGraph, t: u32) -> bool {
        if self.slot(t).fiber.is_some() || self.slot(t).pending.is_some() {
            return true;
        }
        let body: ThreadMain = if t == 0 {
            let main = self.main.clone();
            Box::new(move || {
                main();
                Box::new(()) as Box<dyn Any + Send>
            })
        } else {
            if self.bodies.get(t as usize).is_none_or(Option::is_none) {
                // The parent may not have been told yet that its spawn happened.
                if let Some(p) = g.thread(t).parent.filter(|&p| g.contains(p)) {
                    if self.ensure_started(g, p.thread) {
                        while self.slot(p.thread).done <= p.index {
                            self.feed(g, p.thread);
                        }
                    }
                }
            }
            match self.bodies.get_mut(t as usize).and_then(Option::take) {
                Some(b) => b,
                None => return false,
            }
        };
        let fiber = new_fiber(
            &self.shared,
            t as usize,
            body,
            &mut self.stacks,
            self.options.stack_size,
        );
        self.slot(t).fiber = Some(fiber);
        self.resume(g, t, Outcome::default());
        true
    }

    /// Resumes thread `t` with `outcome` and records what it asks next.
    fn resume(&mut self, g: &mut ExecutionGraph, t: u32, outcome: Outcome) {
        let mut input = outcome;
        loop {
            {
                let done = self.slot(t).done as u64;
                let mut s = self.shared.borrow_mut();
                s.current = t;
                s.in_fiber = true;
                s.set_stamp(t, done);
                // A thread with recorded events left replays what it can of
                // them itself (see `replay_inline`); `g` is not touched until
                // it suspends.
                if (done as u32) < g.thread_len(t) {
                    s.replay = Some(NonNull::from(&mut *g));
                    let counts = self.slots.iter().map(|slot| slot.done);
                    s.replay_done.clear();
                    s.replay_done.extend(counts);
                }
            }
            let size = self.options.stack_size;
            let fiber = self.slot(t).fiber.as_mut().expect("fiber");
            crate::alloc::set_in_fiber(true);
            crate::watchdog::set_in_fiber(true);
            let res = crate::fiber::overflow::resume(fiber, t, size, input);
            crate::alloc::set_in_fiber(false);
            crate::watchdog::set_in_fiber(false);
            {
                let mut s = self.shared.borrow_mut();
                s.in_fiber = false;
                if s.replay.take().is_some() {
                    self.slots[t as usize].done = s.replay_done[t as usize];
                }
            }
            let pending = match res {
                CoroutineResult::Return(()) => {
                    if let Some(f) = self.slot(t).fiber.take() {
                        self.stacks.put(t as usize, f.into_stack());
                    }
                    Pending::Finished
                }
                CoroutineResult::Yield(Request::Finish) => {
                    if let Some(f) = self.slot(t).fiber.take() {
                        crate::fiber::retire(f, t as usize, &mut self.stacks);
                    }
                    Pending::Finished
                }
                CoroutineResult::Yield(Request::Spawn { main, site }) => Pending::Spawn(main, site),
                CoroutineResult::Yield(Request::Spin {
                    site,
                    yields,
                    failed,
                    cut,
                    fresh,
                }) => {
                    let idle = cut && self.spin_is_idle(g, t, site, fresh);
                    if idle {
                        crate::protocol::WAIT_CUTS
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        Pending::Act(
                            Action::Block {
                                reason: BlockReason::Wait,
                            },
                            site,
                        )
                    } else {
                        // Recorded on the event before the hint (the same
                        // on every replay: the thread is deterministic).
                        let done = self.slot(t).done;
                        if done > 0 && done <= g.thread_len(t) {
                            let id = EventId::new(t, done - 1);
                            let e = g.event(id);
                            // A yield in a loop that counts (not `cut`) is
                            // no wait turn's end: only the bound sees it.
                            if (cut && !e.spins)
                                || (yields && !e.yields)
                                || (failed && !e.failed_turn)
                            {
                                g.update_event(id, |e| {
                                    e.spins |= cut;
                                    e.yields |= yields;
                                    e.failed_turn |= failed;
                                });
                            }
                        }
                        input = Outcome::default();
                        continue;
                    }
                }
                CoroutineResult::Yield(Request::Act { action, bind, site }) => {
                    let replaying = self.slot(t).done < g.thread_len(t);
                    let action = match bind {
                        Some((cell, init)) if replaying => {
                            let loc = self.bind_location(g, t, init);
                            self.set_cell(cell, loc);
                            with_loc(action, loc)
                        }
                        Some(b) => {
                            self.slot(t).unbound = Some(b);
                            action
                        }
                        None => action,
                    };
                    Pending::Act(action, site)
                }
            };
            self.slot(t).pending = Some(pending);
            return;
        }
    }

    fn set_cell(&self, cell: *const crate::LocCell, loc: Loc) {
        let mut shared = self.shared.borrow_mut();
        shared.note_binding(loc, cell);
        // SAFETY: as below.
        let addr = unsafe { (*cell).object_addr() };
        let generation = shared.generation;
        shared.note_creation(loc, addr, crate::alloc::creation_of(addr, generation));
        drop(shared);
        let generation = self.shared.borrow().generation;
        // SAFETY: the cell belongs to an object the suspended fiber borrows for
        // the duration of the operation it asked for.
        unsafe { (*cell).set(generation, loc) };
    }

    /// The location for the next event of thread `t`: the one the graph records
    /// when replaying, otherwise a fresh one with initial value `init`.
    fn bind_location(&mut self, g: &mut ExecutionGraph, t: u32, init: i64) -> Loc {
        let done = self.slot(t).done;
        if done < g.thread_len(t) {
            if let Some(loc) = g.event(EventId::new(t, done)).loc() {
                // The object is new in this run: its initial value (a pointer
                // to a fresh allocation, say) may differ from the recorded one.
                g.set_init(loc, init);
                return loc;
            }
        }
        let loc = (0..g.num_locs() as u32)
            .map(Loc)
            .find(|l| self.used_locs.get(l.0 as usize) != Some(&true));
        let loc = match loc {
            Some(l) => {
                g.set_init(l, init);
                l
            }
            None => g.add_loc(init),
        };
        mark_used(&mut self.used_locs, loc);
        loc
    }

    /// Whether thread `t`, at a spin hint made at `site`, has just done an
    /// iteration that only read what the previous iteration read: the
    /// events since the last hint, made at the same place, repeat the same
    /// number of events before it (the first iteration of a loop is the
    /// tail of the events before its first hint). By `yield_now`'s contract
    /// the thread would do the same again, so the explorer cuts it there
    /// and explores it reading something new in the earlier iteration.
    fn spin_is_idle(&mut self, g: &ExecutionGraph, t: u32, site: Site, fresh: bool) -> bool {
        let done = self.slot(t).done;
        let marks = &mut self.slot(t).spin_marks;
        if fresh {
            // A loop found just now: hints made here before belong to
            // another run of this code (an earlier call).
            marks.retain(|m| m.1 != site);
            marks.push((done, site));
            return false;
        }
        marks.push((done, site));
        let n = marks.len();
        // The hints made at this place before: the iteration before this
        // hint's began at the last one. (Hints made elsewhere, such as a C
        // loop's `sched_yield` and the runtime's hint at the loop's head,
        // may sit in between; only the last few are looked at.)
        let mut same_site = marks[..n - 1]
            .iter()
            .rev()
            .take(64)
            .filter(|m| m.1 == site)
            .map(|m| m.0);
        let Some(b) = same_site.next() else {
            return false;
        };
        let c = done;
        if b == c || c - b > b {
            return false;
        }
        let a = b - (c - b);
        // The earlier iteration lies after the hint at this place before it.
        if same_site.next().is_some_and(|before| a < before) {
            return false;
        }
        // Fences may sit in the loop (a seqlock reader's acquire fence): the
        // same fence after the same reads adds nothing new. So may plain
        // stores of the same values (a C loop resetting a local whose
        // address it passes to a compare-exchange: `r = 0`).
        // So may read-modify-writes that wrote back what they read (a swap
        // of `false` that found `false`, a compare-exchange of a value for
        // itself): each such turn reads the one the turn before made.
        (0..b - a).all(|i| {
            let e1 = g.event(EventId::new(t, a + i));
            let e2 = g.event(EventId::new(t, b + i));
            let unchanged_rmw = e1.is_rmw() && e1.written_value() == Some(e1.read_val);
            let quiet = matches!(e1.action, Action::Fence { .. })
                || (e1.is_read() && !e1.is_write())
                || unchanged_rmw
                || matches!(
                    e1.action,
                    Action::Store {
                        ord: MemOrder::NonAtomic,
                        ..
                    }
                );
            // A read of a store the same turn made (a C temporary at -O0)
            // matches the same read of the turn before; so does a read of
            // the store the turn before made at the same place, of the same
            // value (a plain cache the wait refreshes with what it loaded,
            // read at the next turn's start: SPSCQueue's `front()`).
            let same_rf = e1.rf == e2.rf
                || matches!((e1.rf, e2.rf), (Some(r1), Some(r2))
                    if r1.thread == t && r2.thread == t
                        && ((a..b).contains(&r1.index)
                            || (r1.index + (b - a) >= a && e1.read_val == e2.read_val))
                        && r2.index == r1.index + (b - a))
                || (unchanged_rmw
                    && e2.rf == Some(EventId::new(t, a + i))
                    && e2.read_val == e1.read_val);
            quiet && e1.action == e2.action && same_rf && e1.spurious_fail == e2.spurious_fail
        })
    }

    /// Feeds thread `t` the result of its next event in `g` (which must exist).
    fn feed(&mut self, g: &mut ExecutionGraph, t: u32) {
        let done = self.slot(t).done;
        let id = EventId::new(t, done);
        let recorded = g.event(id).action;
        let pending = self.slot(t).pending.take();
        let site = match &pending {
            Some(Pending::Act(_, s)) | Some(Pending::Spawn(_, s)) => Some(*s),
            _ => None,
        };
        self.record_site(id, site);
        self.slot(t).done += 1;
        match (pending, recorded) {
            (_, Action::Block { .. }) => {}
            (Some(Pending::Finished), Action::Finish) => {}
            (Some(Pending::Spawn(main, _)), Action::Spawn { child }) => {
                let c = child as usize;
                if self.bodies.len() <= c {
                    self.bodies.resize_with(c + 1, || None);
                }
                self.bodies[c] = Some(main);
                self.resume(
                    g,
                    t,
                    Outcome {
                        val: child as i64,
                        ok: true,
                    },
                );
            }
            (Some(Pending::Act(a, _)), _) => match replayed(g, id, a) {
                Some(outcome) => self.resume(g, t, outcome),
                None => {
                    let asked = a.to_string();
                    self.nondeterministic(g, t, id, &asked);
                }
            },
            (p, _) => {
                let asked = match p {
                    Some(Pending::Act(a, _)) => a.to_string(),
                    Some(Pending::Spawn(..)) => "spawn".to_string(),
                    Some(Pending::Finished) => "finish".to_string(),
                    None => "nothing".to_string(),
                };
                self.nondeterministic(g, t, id, &asked);
            }
        }
    }

    /// Records that thread `t` did not repeat event `id` (it now asks for
    /// `asked`) and parks the thread; the execution is reported.
    fn nondeterministic(&mut self, g: &ExecutionGraph, t: u32, id: EventId, asked: &str) {
        let was = g.event(id).action;
        // The re-run stopped at an object another parallel worker bound (a
        // static): that refusal is what the user must read.
        let refused = self
            .shared
            .borrow()
            .panics
            .iter()
            .find(|p| p.0 == t && p.1.starts_with(crate::cell::SHARED_OBJECT_REFUSED))
            .map(|p| p.1.clone());
        if let Some(message) = refused {
            self.shared.borrow_mut().failure.get_or_insert(Failure {
                kind: FailureKind::Panic,
                message,
                threads: vec![t],
                events: vec![],
            });
        }
        self.shared.borrow_mut().failure.get_or_insert(Failure {
            kind: FailureKind::Nondeterminism,
            message: format!(
                "thread {t} behaved differently when re-run with the same values: its operation {} was `{was}`, now it is `{asked}`. The code under test must be deterministic apart from what it reads from modelled types (no real time, randomness, std atomics shared between executions, or comparisons of addresses that depend on the allocator).",
                id.index + 1
            ),
            threads: vec![t],
            events: vec![id],
        });
        self.slot(t).pending = Some(Pending::Act(
            Action::Block {
                reason: BlockReason::Assume,
            },
            internal_site(),
        ));
    }

    fn record_site(&mut self, id: EventId, site: Option<Site>) {
        let site = site.unwrap_or_else(internal_site);
        crate::watchdog::at(id.thread, site);
        self.shared.borrow_mut().record_site(id, site);
    }

    /// Whether event `id` of `g` can be replayed now: what it reads and the
    /// thread it joins have been replayed.
    fn ready(&self, g: &ExecutionGraph, id: EventId) -> bool {
        let e = g.event(id);
        let replayed = |x: EventId| {
            x.is_init()
                || self
                    .slots
                    .get(x.thread as usize)
                    .is_some_and(|s| s.done > x.index)
        };
        if let Some(w) = e.rf {
            if !replayed(w) {
                return false;
            }
        }
        if let Action::Join { child } = e.action {
            return self
                .slots
                .get(child as usize)
                .is_some_and(|s| s.done == g.thread_len(child));
        }
        true
    }
}

/// A handle on the runtime state of the current execution, for visitors.
#[derive(Clone)]
pub struct ExecutionState(pub(crate) Rc<RefCell<Shared>>);

impl ExecutionState {
    /// The source location of event `id` of the current execution.
    pub fn site(&self, id: EventId) -> Option<Site> {
        self.0
            .borrow()
            .sites
            .get(id.thread as usize)
            .and_then(|v| v.get(id.index as usize))
            .copied()
    }
    /// The panic this execution fails with, if any (see
    /// `Shared::panic_failure`): threads involved, message.
    pub fn panic_failure(&self) -> Option<(Vec<u32>, String)> {
        self.0.borrow().panic_failure()
    }
    /// What thread `t` waits for in a facade wait loop, if it is in one.
    pub fn waiting_on(&self, t: u32) -> Option<&'static str> {
        self.0.borrow().waits.get(t as usize).copied().flatten()
    }
    /// Objects created in tracked allocations: location, creating thread,
    /// events it had done then (see [`crate::alloc`]).
    pub fn creations(&self) -> std::cell::Ref<'_, [(Loc, u32, u64)]> {
        std::cell::Ref::map(self.0.borrow(), |s| s.creations.as_slice())
    }
    /// Objects whose tracked allocation was freed in this execution:
    /// location, freeing thread, its events before the free.
    pub fn frees(&self) -> std::cell::Ref<'_, [(Loc, u32, u64)]> {
        std::cell::Ref::map(self.0.borrow(), |s| s.frees.as_slice())
    }
    /// Tracked objects still alive (what, where made).
    pub fn leaks(&self) -> Vec<(&'static str, Site)> {
        self.0.borrow().live.iter().map(|l| (l.1, l.2)).collect()
    }
    /// A problem the runtime found (nondeterminism, internal error).
    pub fn take_failure(&self) -> Option<Failure> {
        self.0.borrow_mut().failure.take()
    }
}

/// The site recorded for events the runtime makes up (blocks, finishes).
fn internal_site() -> Site {
    Site::caller()
}

impl Driver for FiberDriver {
    fn initial_graph(&mut self) -> ExecutionGraph {
        ExecutionGraph::new(Vec::new(), 1)
    }

    fn begin(&mut self, g: &mut ExecutionGraph) {
        self.teardown();
        self.shared.borrow_mut().generation = crate::cell::next_generation();
        self.used_locs.clear();
        for loc in g.events().filter_map(|(_, e)| e.loc()) {
            mark_used(&mut self.used_locs, loc);
        }
        // Each thread's sites are rewritten from the start (keeping the
        // buffers).
        for sites in &mut self.shared.borrow_mut().sites {
            sites.clear();
        }
        // Replay every event of `g` in an order that respects po and rf.
        loop {
            let mut progress = false;
            let mut complete = true;
            for t in 0..g.num_threads() as u32 {
                while self.slot(t).done < g.thread_len(t) {
                    complete = false;
                    if !self.ensure_started(g, t) {
                        break;
                    }
                    // Starting the fiber may have replayed events (inline).
                    let done = self.slot(t).done;
                    if done >= g.thread_len(t) {
                        progress = true;
                        break;
                    }
                    let id = EventId::new(t, done);
                    if !self.ready(g, id) {
                        break;
                    }
                    self.feed(g, t);
                    progress = true;
                }
            }
            if complete || !progress {
                if !complete {
                    self.shared.borrow_mut().failure.get_or_insert(Failure {
                        kind: FailureKind::Internal,
                        message: "the execution graph could not be replayed (no thread can make progress)".into(),
                        threads: vec![],
                        events: vec![],
                    });
                }
                return;
            }
        }
    }

    fn next_action(&mut self, g: &mut ExecutionGraph, t: u32) -> Action {
        // A failure found while running (see `stop_at_unmarked_spin`) ends
        // the execution: every thread stops where it is.
        if self.shared.borrow().failure.is_some() {
            return Action::Block {
                reason: BlockReason::Bound,
            };
        }
        if !self.ensure_started(g, t) {
            return Action::Block {
                reason: BlockReason::Assume,
            };
        }
        while self.slot(t).done < g.thread_len(t) {
            self.feed(g, t);
        }
        let len = g.thread_len(t);
        if len >= self.options.max_steps {
            self.stop_at_unmarked_spin(g, t, 3);
            return Action::Block {
                reason: BlockReason::Bound,
            };
        }
        // A loop without a hint that repeated one read-only turn a
        // hundredth of the step bound times is stopped there (looked at
        // every 64 operations of a thread).
        // Only where the last 64 operations wrote nothing (a read-only turn
        // is at most 64 long): a long loop that writes is never scanned,
        // which would cost its length at every look.
        let idle_turns = (self.options.max_steps / 100).max(3);
        if len >= idle_turns
            && len.is_multiple_of(64)
            && (len - 64..len).all(|i| !g.event(EventId::new(t, i)).is_write())
            && self.stop_at_unmarked_spin(g, t, idle_turns)
        {
            return Action::Block {
                reason: BlockReason::Bound,
            };
        }
        if let Some((cell, init)) = self.slot(t).unbound.take() {
            // The object may have been bound meanwhile by another thread.
            let generation = self.shared.borrow().generation;
            // SAFETY: as in `set_cell`.
            let loc = match unsafe { (*cell).get(generation) } {
                Some(l) => l,
                None => {
                    let l = self.bind_location(g, t, init);
                    self.set_cell(cell, l);
                    l
                }
            };
            if let Some(Pending::Act(a, _)) = &mut self.slot(t).pending {
                *a = with_loc(*a, loc);
            }
        }
        if let Some(Pending::Act(_, site)) | Some(Pending::Spawn(_, site)) = &self.slot(t).pending {
            let site = *site;
            self.record_site(EventId::new(t, g.thread_len(t)), Some(site));
        }
        match &self.slot(t).pending {
            Some(Pending::Act(a, _)) => *a,
            Some(Pending::Spawn(..)) => Action::Spawn { child: 0 },
            Some(Pending::Finished) | None => Action::Finish,
        }
    }
}

/// Marks `loc` used in `used` (indexed by location).
fn mark_used(used: &mut Vec<bool>, loc: Loc) {
    let i = loc.0 as usize;
    if used.len() <= i {
        used.resize(i + 1, false);
    }
    used[i] = true;
}
