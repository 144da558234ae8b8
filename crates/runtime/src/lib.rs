//! Runs Rust closures under the c11check explorers.
//!
//! Each modelled thread is a stackful coroutine (a fiber, from `corosensei`)
//! running on the test's OS thread. A fiber runs until its next visible
//! operation (an atomic access, a fence, a spawn, a join, ...), hands that
//! operation to the explorer as an [`Action`] and is suspended; it is resumed
//! with the operation's result once the explorer has added the event to the
//! execution graph and decided what it reads.
//!
//! The explorer moves between graphs (pending branches, revisits). When it
//! does, `FiberDriver::begin` throws the fibers away and runs the program
//! again from the start, feeding every thread the results recorded in the
//! graph, in an order that respects program order and reads-from (so plain
//! memory, which the fibers really read and write, evolves as in the modelled
//! execution).
//!
//! Facade types (`c11check::sync::atomic`, ...) talk to the runtime through
//! the free functions of this crate ([`access`], [`spawn`], [`join`], ...).

pub mod alloc;
pub mod barrier;
pub mod condvar;
mod config;
mod driver;
mod fiber;
mod judge;
mod live_run;
pub mod locks;
pub mod once;
mod report;
mod robust;
mod robust_live;
mod run;
pub mod settings;
mod watchdog;

pub use c11check_explore::Shard;
pub use config::{RunConfig, Strategy, Summary};
pub use driver::{ExecutionState, FiberDriver, RuntimeOptions};
pub use report::{
    check_replay, decode_replay, describe_event, encode_replay, Failure, FailureKind, Report,
};
pub use run::run;

use c11check_model::{Action, BlockReason, EventId, Loc, MemOrder, Value};
use corosensei::Yielder;
use std::any::Any;
use std::cell::RefCell;
use std::panic::Location;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Where a visible operation comes from (for reports): a line of Rust
/// source, or the address of an instruction of a compiled C/C++ program
/// (shown as `file:line` through [`set_pc_resolver`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Site {
    /// A Rust source location (`#[track_caller]`).
    Rust(&'static Location<'static>),
    /// A return address in a compiled program.
    Pc(usize),
}

impl Site {
    /// The source location of the caller (through `#[track_caller]`
    /// functions, the first caller that is not one).
    #[track_caller]
    #[inline]
    pub const fn caller() -> Site {
        Site::Rust(Location::caller())
    }
}

impl From<&'static Location<'static>> for Site {
    fn from(l: &'static Location<'static>) -> Site {
        Site::Rust(l)
    }
}

/// Functions run when a modelled thread's fiber is entered and left (see
/// [`set_fiber_hooks`]).
pub(crate) static FIBER_HOOKS: std::sync::OnceLock<(FiberHook, FiberHook)> =
    std::sync::OnceLock::new();

/// A function told a modelled thread's number.
pub type FiberHook = fn(u32);

/// Sets functions run just before modelled thread `t`'s fiber runs and
/// just after it stops: a runtime for compiled programs swaps each
/// thread's thread-local storage in and out there (all fibers share one
/// OS thread). Set once.
pub fn set_fiber_hooks(enter: FiberHook, leave: FiberHook) {
    let _ = FIBER_HOOKS.set((enter, leave));
}

/// Loop turns cut as waits so far in this process (see [`wait_cuts`]).
pub(crate) static WAIT_CUTS: AtomicU64 = AtomicU64::new(0);

/// How many times a thread's loop turn re-read what the turn before read
/// and the thread was stopped there as waiting, in this process so far.
pub fn wait_cuts() -> u64 {
    WAIT_CUTS.load(Ordering::Relaxed)
}

/// How [`Site::Pc`] sites are shown: set once by a runtime for compiled
/// programs (which reads the program's debug information).
static PC_RESOLVER: std::sync::OnceLock<fn(usize) -> String> = std::sync::OnceLock::new();

/// Sets how instruction addresses are shown in reports (`file:line`).
pub fn set_pc_resolver(f: fn(usize) -> String) {
    let _ = PC_RESOLVER.set(f);
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Site::Rust(l) => write!(f, "{l}"),
            Site::Pc(pc) => match PC_RESOLVER.get() {
                Some(resolve) => f.write_str(&resolve(*pc)),
                None => write!(f, "{pc:#x}"),
            },
        }
    }
}

/// A strengthening of the accesses made at one site (a candidate repair of
/// a robustness violation, see `robust::repair`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Strengthen {
    /// The access takes this order (a compare-exchange: as its success
    /// order, with the matching failure order).
    Order(MemOrder),
    /// A seq_cst fence comes right before the access.
    FenceBefore,
}

/// Whether some run checks a candidate repair (`Shared::strengthen` is not
/// empty somewhere): the hot path looks no further otherwise.
pub(crate) static STRENGTHENING: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// `action` with the strengthenings given for `site` that change its order.
fn strengthened(action: Action, how: Strengthen) -> Action {
    let Strengthen::Order(ord) = how else {
        return action;
    };
    match action {
        Action::Load { loc, ord: o } if o.is_atomic() => Action::Load { loc, ord },
        Action::Store { loc, val, ord: o } if o.is_atomic() => Action::Store { loc, val, ord },
        Action::Rmw {
            loc,
            op,
            operand,
            width,
            ..
        } => Action::Rmw {
            loc,
            op,
            operand,
            width,
            ord,
        },
        Action::Cas {
            loc,
            expected,
            new,
            weak,
            lock: false,
            take: false,
            ..
        } => Action::Cas {
            loc,
            expected,
            new,
            success: ord,
            failure: ord.read_half(),
            weak,
            lock: false,
            take: false,
        },
        other => other,
    }
}

/// What a visible operation returns to the thread that performed it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The value read (loads, RMWs, CASes), or the new thread's number (spawn).
    pub val: Value,
    /// Whether a CAS succeeded.
    pub ok: bool,
}

/// The result a thread's closure produced: its return value or its panic.
pub type ThreadResult = Result<Box<dyn Any + Send>, Box<dyn Any + Send>>;

/// The body of a spawned thread.
pub type ThreadMain = Box<dyn FnOnce() -> Box<dyn Any + Send>>;

/// What a fiber asks of the driver when it suspends.
pub(crate) enum Request {
    /// A memory access, fence, join or block. `bind` names the location cell
    /// of an object whose location is not known in this execution yet.
    Act {
        action: Action,
        bind: Option<(*const LocCell, Value)>,
        site: Site,
    },
    /// Start a thread running `main`.
    Spawn { main: ThreadMain, site: Site },
    /// `yield_now` / `spin_loop`: a place where a spinning thread may be cut
    /// (unless not `cut`: a loop that counts); `yields` when the program
    /// itself yielded there; `failed` when it said the turn ending there
    /// found nothing (`failed_turn_hint`).
    Spin {
        site: Site,
        yields: bool,
        failed: bool,
        cut: bool,
    },
    /// The thread ended without returning (see [`finish_thread`]): its
    /// result is recorded, its fiber is never resumed.
    Finish,
}

pub(crate) type FiberYielder = Yielder<Outcome, Request>;

/// The location of a facade object in the current execution. Objects are
/// bound lazily, on their first visible use, so `const fn` constructors (and
/// statics) work; a binding is valid for one execution only.
#[derive(Debug, Default)]
pub struct LocCell {
    /// `(generation << 32) | loc`, zero when unbound.
    packed: AtomicU64,
    /// What the object is and where the program made it, for reports.
    made: Option<Made>,
    /// The address of the object in the program's memory, when the cell
    /// lives elsewhere (a C program's location, kept in a table); 0: the
    /// cell's own address is the object's.
    object: usize,
    /// Whether the value the object holds when it is next bound is
    /// indeterminate (heap memory nothing wrote yet): a load reading that
    /// initial value reads uninitialized memory.
    indeterminate: std::sync::atomic::AtomicBool,
}

/// What an object is (a type name: `AtomicUsize`) and where it was made.
pub(crate) type Made = (&'static str, Site);

/// Execution generations: a binding made in another execution is stale.
static GENERATION: AtomicU32 = AtomicU32::new(1);

/// The most workers of a parallel exploration.
pub const MAX_JOBS: u32 = 64;

thread_local! {
    /// This OS thread's number when it is a worker of a parallel
    /// exploration.
    static WORKER: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// Makes this OS thread worker `w` of a parallel exploration (`None`: no
/// longer one).
pub(crate) fn set_worker(w: Option<u32>) {
    WORKER.with(|c| c.set(w));
}

pub(crate) fn next_generation() -> u32 {
    GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// Panics with what to do when a parallel worker uses an object bound in
/// an earlier execution: one that outlives executions (a static, or one
/// captured by the model's closure), which the workers would share. (On
/// its first use in a run it is unbound: the second execution that uses it
/// stops, on whichever worker, so the verdict does not depend on which
/// worker ran what.)
fn refuse_shared_object(cell: &LocCell) {
    if WORKER.with(|c| c.get()).is_none() {
        return;
    }
    if cell.packed.load(Ordering::Relaxed) >> 32 != 0 {
        panic!(
            "{SHARED_OBJECT_REFUSED} (a static atomic, `OnceLock`, `LazyLock`, \
             `lazy_static!`, or one captured by the model's closure) is used by several \
             parallel workers (`Builder::jobs` / C11CHECK_JOBS above 1), which would share \
             its state: run this test on one worker (`jobs(1)`), or make the object inside \
             the closure"
        );
    }
}

/// How the refusal of an object shared by parallel workers begins (a
/// re-run that meets it reports it, not a nondeterministic test).
pub(crate) const SHARED_OBJECT_REFUSED: &str =
    "c11check: a c11check object made outside the model's executions";

impl LocCell {
    pub const fn new() -> Self {
        LocCell {
            packed: AtomicU64::new(0),
            made: None,
            object: 0,
            indeterminate: std::sync::atomic::AtomicBool::new(false),
        }
    }
    /// The cell of the object at `addr` in the program's memory (the cell
    /// itself lives elsewhere): creations, frees and names go by `addr`.
    pub const fn at(addr: usize) -> Self {
        LocCell {
            packed: AtomicU64::new(0),
            made: None,
            object: addr,
            indeterminate: std::sync::atomic::AtomicBool::new(false),
        }
    }
    /// Says whether the object's value is indeterminate at its next
    /// binding (memory nothing initialized): a load that reads the initial
    /// value is then reported.
    pub fn set_indeterminate(&self, on: bool) {
        self.indeterminate.store(on, Ordering::Relaxed);
    }
    /// The object's address in the program's memory.
    pub(crate) fn object_addr(&self) -> usize {
        if self.object != 0 {
            self.object
        } else {
            self as *const LocCell as usize
        }
    }
    /// The cell of a `what` (a type name: `AtomicUsize`) made at `site`;
    /// reports name the location after them.
    pub const fn described(what: &'static str, site: Site) -> Self {
        LocCell {
            packed: AtomicU64::new(0),
            made: Some((what, site)),
            object: 0,
            indeterminate: std::sync::atomic::AtomicBool::new(false),
        }
    }
    /// The location bound to this cell in execution `generation`, if any
    /// (a front end that keeps the current generation itself asks this
    /// instead of [`bound_location`]).
    #[inline]
    pub fn bound_in(&self, generation: u32) -> Option<Loc> {
        self.get(generation)
    }
    #[inline]
    pub(crate) fn get(&self, generation: u32) -> Option<Loc> {
        let p = self.packed.load(Ordering::Relaxed);
        ((p >> 32) as u32 == generation).then_some(Loc(p as u32))
    }
    /// Forgets the binding: the next use binds a new location (a C
    /// program's stack slot reused by another thread).
    pub fn unbind(&self) {
        self.packed.store(0, Ordering::Relaxed);
    }
    pub(crate) fn set(&self, generation: u32, loc: Loc) {
        self.packed.store(
            ((generation as u64) << 32) | loc.0 as u64,
            Ordering::Relaxed,
        );
    }
}

/// State shared by the driver (on the main stack) and the fibers. Borrowed
/// briefly by either side, never across a switch.
#[derive(Default)]
pub(crate) struct Shared {
    pub generation: u32,
    /// The thread whose fiber is running.
    pub current: u32,
    /// Whether a fiber is running (false on the driver's stack).
    pub in_fiber: bool,
    /// Each running fiber's yielder.
    pub yielders: Vec<Option<*const FiberYielder>>,
    /// Results of finished threads, taken by `join`.
    pub results: Vec<Option<ThreadResult>>,
    /// Panics of this execution: thread, message, where.
    pub panics: Vec<(u32, String, Option<String>)>,
    /// Threads whose panic was taken by a `join`.
    pub joined_panics: Vec<u32>,
    /// Source location of each event of the current graph, per thread.
    pub sites: Vec<Vec<Site>>,
    /// A problem found while running threads (nondeterminism, internal error).
    pub failure: Option<report::Failure>,
    /// Allocations the facade tracks for leaks: key, what, where made.
    pub live: Vec<(usize, &'static str, Site)>,
    /// The lock the last `wait_lock` waits for.
    pub last_lock: Option<Loc>,
    /// Per thread: what a facade wait loop it is in waits for (a condition
    /// variable's notification, say), so a wait nothing ends is a deadlock.
    pub waits: Vec<Option<&'static str>>,
    /// Per thread: its position, in the engine's terms (events done in the
    /// graph engine, its last operation's sequence number in the live
    /// one): what an allocation it makes now is stamped with.
    pub stamps: Vec<u64>,
    /// Objects of this execution created in a tracked allocation (see
    /// [`alloc`]): location, creating thread, its position then.
    pub creations: Vec<(Loc, u32, u64)>,
    /// Objects of this execution bound in a tracked allocation, with the
    /// address of their location cell, until the allocation is freed.
    pub objects: Vec<(Loc, usize)>,
    /// Objects whose allocation a modelled thread freed in this execution:
    /// location, freeing thread, its position then (as in `stamps`).
    pub frees: Vec<(Loc, u32, u64)>,
    /// Locations whose initial value in this execution is indeterminate
    /// (see [`LocCell::set_indeterminate`]).
    pub indeterminate: Vec<Loc>,
    /// The thread that called `exit()` in this execution, and its status.
    pub exited: Option<(u32, i32)>,
    /// The program's weak compare-exchanges are issued as strong ones
    /// (`RunConfig::spurious_failures` off).
    pub strong_cas: bool,
    /// Data races are not reported (`RunConfig::report_races` off).
    pub ignore_races: bool,
    /// Spins that can never end are not reported (`RunConfig::report_livelocks` off).
    pub ignore_livelocks: bool,
    /// Threads that wait forever are not reported (`RunConfig::report_deadlocks` off).
    pub ignore_deadlocks: bool,
    /// Executions that are not sequentially consistent are reported
    /// (`RunConfig::robustness`).
    pub check_robustness: bool,
    /// Strengthenings applied to the program's accesses by site, to check a
    /// candidate repair (`RunConfig::strengthen`).
    pub strengthen: Vec<(Site, Strengthen)>,
    /// Per location of this execution: the address of the cell it was bound
    /// through and what that cell says of its object (for reports).
    pub bound: Vec<Option<(usize, Option<Made>)>>,
    /// Names the program gave objects in this execution ([`name_object`]):
    /// the object's address range and its name.
    pub labels: Vec<(usize, usize, std::borrow::Cow<'static, str>)>,
    /// While the graph driver runs a fiber: the graph it replays, so that the
    /// fiber takes the recorded results of its next events itself, without a
    /// switch to the driver and back (see `driver::replay_inline`).
    pub replay: Option<std::ptr::NonNull<c11check_model::ExecutionGraph>>,
    /// Events of the graph each thread has performed (the driver's counts,
    /// handed over while a fiber runs, with `replay`).
    pub replay_done: Vec<u32>,
}

impl Shared {
    /// Forgets what the last execution left (its panics, failure, tracked
    /// objects, waits, creations) before the next one.
    pub(crate) fn reset_execution(&mut self) {
        self.panics.clear();
        self.joined_panics.clear();
        self.failure = None;
        self.live.clear();
        self.waits.clear();
        self.stamps.clear();
        self.creations.clear();
        self.objects.clear();
        self.frees.clear();
        self.indeterminate.clear();
        self.exited = None;
        self.bound.clear();
        self.labels.clear();
        alloc::release_quarantine();
    }
    /// The panic an execution fails with, if any (threads, message): the
    /// first one no `join` took; the model's main thread's always counts.
    /// When that panic only passes on a joined thread's (`join().unwrap()`
    /// of its `Err`, whose payload prints as `Any { .. }`), the joined
    /// thread's panic leads the message, since that is where the bug is.
    pub(crate) fn panic_failure(&self) -> Option<(Vec<u32>, String)> {
        let describe = |(t, msg, place): &(u32, String, Option<String>)| {
            let who = if *t == 0 {
                "the model's main thread".to_string()
            } else {
                format!("thread {t}")
            };
            let at = place
                .as_ref()
                .map(|p| format!(" at {p}"))
                .unwrap_or_default();
            format!("{who} panicked{at}: {msg}")
        };
        let joined = |t: u32| self.joined_panics.contains(&t);
        let p = self.panics.iter().find(|(t, ..)| *t == 0 || !joined(*t))?;
        let through = if p.1.contains("Any { .. }") {
            Some("through `join`")
        } else if p.1 == SCOPE_PANIC {
            Some("by `thread::scope`")
        } else {
            None
        };
        let cause = through.and_then(|how| {
            let c = self.panics.iter().find(|(t, ..)| *t != p.0 && joined(*t))?;
            Some((how, c))
        });
        Some(match cause {
            Some((how, c)) => (
                vec![c.0, p.0],
                format!("{}\n  (passed on {how}: {})", describe(c), describe(p)),
            ),
            None => (vec![p.0], describe(p)),
        })
    }
    /// Records where event `id` was made (the thread's later ones are
    /// rewritten as it runs again).
    #[inline]
    pub(crate) fn record_site(&mut self, id: EventId, site: Site) {
        let t = id.thread as usize;
        if self.sites.len() <= t {
            self.sites.resize_with(t + 1, Vec::new);
        }
        let v = &mut self.sites[t];
        v.truncate(id.index as usize);
        v.push(site);
    }
    pub(crate) fn set_stamp(&mut self, t: u32, stamp: u64) {
        let t = t as usize;
        if self.stamps.len() <= t {
            self.stamps.resize(t + 1, 0);
        }
        self.stamps[t] = stamp;
    }
    /// Records that `loc` was bound through `cell` (for reports' names).
    pub(crate) fn note_binding(&mut self, loc: Loc, cell: *const LocCell) {
        let l = loc.0 as usize;
        if self.bound.len() <= l {
            self.bound.resize(l + 1, None);
        }
        // SAFETY: the cell belongs to an object the suspended fiber borrows
        // for the duration of the operation being bound.
        let cell = unsafe { &*cell };
        self.bound[l] = Some((cell.object_addr(), cell.made));
        if cell.indeterminate.load(Ordering::Relaxed) {
            self.indeterminate.push(loc);
        }
    }
    /// Whether `loc`'s initial value in this execution is indeterminate.
    pub(crate) fn is_indeterminate(&self, loc: Loc) -> bool {
        self.indeterminate.contains(&loc)
    }
    /// How reports call each location the program described or named: the
    /// innermost [`name_object`] range holding its cell (several locations
    /// in one named object get `name.1`, `name.2`... in address order),
    /// and what the object is and where it was made.
    pub(crate) fn location_names(&self) -> Vec<LocationName> {
        let mut out: Vec<LocationName> = Vec::new();
        for (l, b) in self.bound.iter().enumerate() {
            let Some((addr, made)) = *b else { continue };
            let label = self
                .labels
                .iter()
                .enumerate()
                .filter(|(_, (s, e, _))| (*s..*e).contains(&addr))
                .min_by_key(|(i, (s, e, _))| (e - s, usize::MAX - i))
                .map(|(i, _)| i);
            if label.is_none() && made.is_none() {
                continue;
            }
            out.push(LocationName {
                loc: Loc(l as u32),
                name: label.map(|i| (i, self.labels[i].2.to_string())),
                made,
            });
        }
        // Several locations under one label: number them in address order
        // (the same in every execution, whatever the schedule).
        let addr = |n: &LocationName| self.bound[n.loc.0 as usize].map_or(0, |b| b.0);
        for i in 0..out.len() {
            let Some((label, _)) = out[i].name else {
                continue;
            };
            let mine = addr(&out[i]);
            let same: Vec<usize> = out
                .iter()
                .filter(|n| n.name.as_ref().is_some_and(|m| m.0 == label))
                .map(addr)
                .collect();
            if same.len() > 1 {
                let k = same.iter().filter(|&&a| a < mine).count() + 1;
                if let Some((_, name)) = &mut out[i].name {
                    *name = format!("{}.{k}", self.labels[label].2);
                }
            }
        }
        out
    }
    /// Records the creation of the object bound to `loc` whose location cell
    /// is at `addr`, if it lives in a tracked allocation.
    pub(crate) fn note_creation(&mut self, loc: Loc, addr: usize) {
        if let Some((t, stamp)) = alloc::creation_of(addr, self.generation) {
            self.creations.retain(|c| c.0 != loc);
            self.creations.push((loc, t, stamp));
            self.objects.retain(|o| o.0 != loc);
            self.objects.push((loc, addr));
        }
    }
    /// The running thread freed the tracked allocation `[start, end)`: the
    /// objects bound in it are gone (an access to one afterwards, or not
    /// ordered before the free, is a bug).
    pub(crate) fn note_free(&mut self, start: usize, end: usize) {
        if !self.in_fiber {
            return;
        }
        let (t, stamp) = (
            self.current,
            self.stamps.get(self.current as usize).copied().unwrap_or(0),
        );
        let frees = &mut self.frees;
        self.objects.retain(|&(loc, addr)| {
            let inside = (start..end).contains(&addr);
            if inside {
                frees.push((loc, t, stamp));
            }
            !inside
        });
    }
    /// Where the allocation holding the object at `loc` was freed, if it was.
    pub(crate) fn freed(&self, loc: Loc) -> Option<(u32, u64)> {
        self.frees
            .iter()
            .find(|f| f.0 == loc)
            .map(|&(_, t, stamp)| (t, stamp))
    }
}

/// A modelled thread freed the tracked allocation `[start, end)` (see
/// [`Shared::note_free`]); skipped when the state is borrowed (a free in
/// c11check's own code, which frees no user object).
pub(crate) fn block_freed(start: usize, end: usize) {
    let _ = SHARED.try_with(|cell| {
        let Ok(installed) = cell.try_borrow() else {
            return;
        };
        if let Some(rc) = installed.as_ref() {
            if let Ok(mut s) = rc.try_borrow_mut() {
                s.note_free(start, end);
            }
        }
    });
}

/// What an allocation made now is stamped with: (execution, thread, its
/// position), when a modelled thread is running.
pub(crate) fn creation_stamp() -> Option<(u32, u32, u64)> {
    SHARED
        .try_with(|cell| {
            let installed = cell.try_borrow().ok()?;
            let s = installed.as_ref()?.try_borrow().ok()?;
            s.in_fiber.then(|| {
                (
                    s.generation,
                    s.current,
                    s.stamps.get(s.current as usize).copied().unwrap_or(0),
                )
            })
        })
        .ok()
        .flatten()
}

thread_local! {
    static SHARED: RefCell<Option<Rc<RefCell<Shared>>>> = const { RefCell::new(None) };
    static LAST_PANIC: RefCell<Option<(String, Option<String>)>> = const { RefCell::new(None) };
}

pub(crate) fn install_shared(s: Option<Rc<RefCell<Shared>>>) {
    SHARED.with(|cell| *cell.borrow_mut() = s);
}

fn with_shared<R>(f: impl FnOnce(&mut Shared) -> R) -> R {
    // The state is borrowed in place (not cloned out): nothing run under
    // `f` installs another.
    SHARED.with(|cell| {
        let installed = cell.borrow();
        let rc = installed
            .as_ref()
            .unwrap_or_else(|| panic!("{}", outside_model_message()));
        let mut s = rc.borrow_mut();
        f(&mut s)
    })
}

/// What the weak compare-exchange of a choice the facade lets the explorer
/// make both ways (a condition variable's spurious wake-up, a timed wait's
/// time-out) would write: reports show it as that choice, not as a
/// compare-exchange the program never made.
pub const CHOICE_MARK: c11check_model::Value = 0x0C11_C0C4_01CE;

/// How many runs (`c11check::model` and friends) are going on in the
/// process: a modelled type used on an OS thread that runs none while one
/// runs elsewhere was most likely handed to a `std::thread::spawn`ed thread.
static ACTIVE_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts a run in [`ACTIVE_RUNS`] (`+1` when it starts, `-1` when it ends).
pub(crate) fn count_run(start: bool) {
    use std::sync::atomic::Ordering::Relaxed;
    if start {
        ACTIVE_RUNS.fetch_add(1, Relaxed);
    } else {
        ACTIVE_RUNS.fetch_sub(1, Relaxed);
    }
}

/// What to tell a caller that uses a modelled type where no model runs.
fn outside_model_message() -> &'static str {
    if ACTIVE_RUNS.load(std::sync::atomic::Ordering::Relaxed) > 0 {
        "c11check: a c11check type was used on a thread c11check does not run (one made with `std::thread::spawn`?) while a model runs on another thread: inside `c11check::model`, start threads with `c11check::thread::spawn` or `c11check::thread::scope`, so that c11check can run and explore them"
    } else {
        "c11check: a c11check type was used outside `c11check::model`: run the code that uses it inside `c11check::model(|| { ... })` (or `c11check::model::Builder::new().check(...)`)"
    }
}

/// Panics with a clear message when a model is started from inside a
/// modelled thread (a `model` call nested in another).
pub(crate) fn refuse_nested_model() {
    if in_model() {
        panic!("c11check: `c11check::model` was called inside a model (from a modelled thread): a model explores one closure, so call it once, around the whole test body");
    }
}

/// Whether the calling code runs inside a modelled thread.
#[inline]
pub fn in_model() -> bool {
    SHARED.with(|cell| cell.borrow().as_ref().is_some_and(|s| s.borrow().in_fiber))
}

/// The current execution's number (changes every time the program restarts).
#[inline]
pub fn generation() -> u32 {
    with_shared(|s| s.generation)
}

/// Whether the program's `compare_exchange_weak` may fail spuriously in
/// this run (the facade issues a strong compare-exchange when not).
pub fn weak_cas_may_fail() -> bool {
    with_shared(|s| !s.strong_cas)
}

/// Writes a line the user must see to the process's stderr itself, past
/// the test harness's output capture (which takes `eprintln!`, also from
/// threads a test spawns): a budget that cut a run short, a run that stands
/// still. `cargo test` would otherwise show a plain `ok`, or nothing.
pub fn tell_user(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

/// What a scope panics with when one of its threads panicked (as std's
/// does): reports lead with that thread's panic instead.
pub const SCOPE_PANIC: &str = "a scoped thread panicked";

/// The number of the modelled thread that is running (0 is the model's closure).
#[inline]
pub fn current_thread() -> u32 {
    with_shared(|s| s.current)
}

/// A function the facade runs in a thread before each of its visible
/// operations and when it ends (to publish values written through `get_mut`).
static BEFORE_OP: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Registers the facade's hook (see `BEFORE_OP`); the first one wins.
pub fn set_before_op_hook(f: fn()) {
    let _ = BEFORE_OP.set(f);
}

/// Runs the hook. It may perform visible operations itself (which run it
/// again): it must reach a state where it has nothing left to do.
pub(crate) fn run_before_op_hook() {
    if let Some(f) = BEFORE_OP.get() {
        f();
    }
}

/// A visible store to a location known by number (for values the facade
/// publishes on a thread's behalf).
pub fn store_to(loc: Loc, val: Value, site: Site) {
    suspend(Request::Act {
        action: Action::Store {
            loc,
            ord: MemOrder::Relaxed,
            val,
        },
        bind: None,
        site,
    });
}

/// What reports know of one location beyond its number.
#[derive(Clone, Debug)]
pub(crate) struct LocationName {
    pub loc: Loc,
    /// The name the program gave it (with the label's index), if any.
    pub name: Option<(usize, String)>,
    /// Its type and where it was made, if its cell says.
    pub made: Option<Made>,
}

/// Names the object at `[start, start + len)` in reports of the current
/// execution: locations whose cells lie in it are called `name` instead of
/// `loc3`. Outside a model it does nothing.
pub fn name_object(start: usize, len: usize, name: std::borrow::Cow<'static, str>) {
    let _ = SHARED.try_with(|cell| {
        if let Some(rc) = cell.borrow().as_ref() {
            rc.borrow_mut()
                .labels
                .push((start, start + len.max(1), name));
        }
    });
}

/// The location a cell is bound to in the current execution, if any.
pub fn bound_location(cell: &LocCell) -> Option<Loc> {
    cell.get(generation())
}

fn suspend(mut req: Request) -> Outcome {
    if !matches!(req, Request::Spin { .. }) {
        run_before_op_hook();
    }
    // A candidate repair: the access made here strengthened.
    if let Request::Act { action, site, .. } = &mut req {
        if STRENGTHENING.load(std::sync::atomic::Ordering::Relaxed) && action.loc().is_some() {
            let hows: smallvec::SmallVec<[Strengthen; 2]> = with_shared(|s| {
                s.strengthen
                    .iter()
                    .filter(|(at, _)| at == site)
                    .map(|&(_, how)| how)
                    .collect()
            });
            for how in hows {
                if how == Strengthen::FenceBefore {
                    fence(MemOrder::SeqCst, *site);
                }
                *action = strengthened(*action, how);
            }
        }
    }
    let y = with_shared(|s| {
        assert!(
            s.in_fiber,
            "c11check: a modelled type was used outside the model's threads"
        );
        if let Request::Act { action, bind, site } = req {
            if let Some(outcome) = driver::replay_inline(s, action, bind, site) {
                return Err(outcome);
            }
        }
        Ok(s.yielders[s.current as usize])
    });
    let y = match y {
        Ok(y) => y.expect("c11check: no running fiber"),
        Err(outcome) => return outcome,
    };
    // SAFETY: the pointer was taken from the `Yielder` the running coroutine
    // received; that coroutine is the one executing this code, so the yielder
    // is alive and used from its own stack.
    unsafe { (*y).suspend(req) }
}

/// Fails the execution with a bug of `kind` the running modelled thread
/// ran into (a C program's use after free): the thread ends there, as at
/// [`finish_thread`], and the report says `message`.
pub fn fail_execution(kind: FailureKind, message: String) -> ! {
    with_shared(|s| {
        let t = s.current;
        s.failure.get_or_insert(Failure {
            kind,
            message: message.clone(),
            threads: vec![t],
            events: vec![],
        });
    });
    finish_thread(Err(Box::new(message)))
}

/// Ends the calling modelled thread at once with `result`, as if its body
/// had returned it (a panic payload fails the execution), without
/// unwinding its stack: a C program's `abort()` or `exit()` runs no
/// destructor of the frames it leaves, and C++ frames would not let a Rust
/// panic through them (a joinable `std::thread` on the way terminates).
pub fn finish_thread(result: ThreadResult) -> ! {
    run_before_op_hook();
    let y = with_shared(|s| {
        assert!(
            s.in_fiber,
            "c11check: a modelled thread ended outside the model's threads"
        );
        let t = s.current as usize;
        if let Err(payload) = &result {
            let msg = panic_message(payload.as_ref());
            s.panics.push((t as u32, msg, None));
        }
        if s.results.len() <= t {
            s.results.resize_with(t + 1, || None);
        }
        s.results[t] = Some(result);
        s.yielders[t]
    });
    let y = y.expect("c11check: no running fiber");
    // SAFETY: as in `suspend`: the yielder of the coroutine running this.
    unsafe { (*y).suspend(Request::Finish) };
    unreachable!("c11check: a finished thread was resumed")
}

pub use fiber::overflow::set_access_site;

/// Records that modelled thread `t` crashed (a fault in its code): its
/// failure, as a panic's. Its fiber returns next.
pub(crate) fn record_crash(t: u32, msg: String) {
    with_shared(|s| {
        s.panics.push((t, msg.clone(), None));
        let t = t as usize;
        if s.results.len() <= t {
            s.results.resize_with(t + 1, || None);
        }
        s.results[t] = Some(Err(Box::new(msg)));
    });
}

/// Performs a visible memory access on the object whose location is `cell`
/// (first bound with initial value `init`). `action` receives the location.
pub fn access(
    cell: &LocCell,
    init: Value,
    action: impl FnOnce(Loc) -> Action,
    site: Site,
) -> Outcome {
    let generation = with_shared(|s| s.generation);
    match cell.get(generation) {
        Some(loc) => suspend(Request::Act {
            action: action(loc),
            bind: None,
            site,
        }),
        None => {
            refuse_shared_object(cell);
            suspend(Request::Act {
                action: action(Loc(u32::MAX)),
                bind: Some((cell as *const LocCell, init)),
                site,
            })
        }
    }
}

/// The location `cell` is bound to in the current execution, with the
/// execution's number, if the cell was accessed in it.
pub fn bound_loc(cell: &LocCell) -> Option<(u32, Loc)> {
    let generation = with_shared(|s| s.generation);
    cell.get(generation).map(|loc| (generation, loc))
}

/// An access of `loc`, bound in execution `generation` (see [`bound_loc`]),
/// if that execution is still the current one (an access left over from
/// an earlier execution is dropped).
pub fn access_bound(
    generation: u32,
    loc: Loc,
    action: impl FnOnce(Loc) -> Action,
    site: Site,
) -> Option<Outcome> {
    if !in_model() || with_shared(|s| s.generation) != generation {
        return None;
    }
    Some(suspend(Request::Act {
        action: action(loc),
        bind: None,
        site,
    }))
}

/// Records that an object the model checks for leaks (an `Arc` allocation)
/// was made; it must be released with [`track_free`] before the execution ends.
pub fn track_alloc(key: usize, what: &'static str, site: Site) {
    with_shared(|s| s.live.push((key, what, site)));
}

/// Records that a tracked object was released.
pub fn track_free(key: usize) {
    with_shared(|s| {
        if let Some(i) = s.live.iter().position(|l| l.0 == key) {
            s.live.swap_remove(i);
        }
    });
}

/// Marks the calling thread as waiting for `what` (a facade's wait loop,
/// e.g. "a condition variable's notification"), or no longer waiting: if the
/// loop can never end, the execution is reported as a deadlock naming it.
pub fn set_waiting(what: Option<&'static str>) {
    with_shared(|s| {
        let t = s.current as usize;
        if s.waits.len() <= t {
            s.waits.resize(t + 1, None);
        }
        s.waits[t] = what;
    });
}

/// What [`set_waiting`] is given for a wait that may also time out: when
/// nothing ends it, the execution is not a bug (the timeout is explored).
pub const TIMED_WAIT: &str = "a timed wait";

/// A fence with ordering `ord`.
pub fn fence(ord: MemOrder, site: Site) {
    suspend(Request::Act {
        action: Action::Fence { ord },
        bind: None,
        site,
    });
}

/// Blocks the calling thread for good in this execution (a failed assume).
pub fn block(reason: BlockReason, site: Site) -> ! {
    suspend(Request::Act {
        action: Action::Block { reason },
        bind: None,
        site,
    });
    unreachable!("c11check: a blocked thread was resumed")
}

/// The running modelled thread ends the program with `status` (a C
/// program's `exit()`): it stops here, the other threads run as far as
/// they can (the exit is delayed, as a scheduler may), and then the
/// execution ends; a thread left waiting or spinning is no deadlock or
/// livelock then, and nobody's `join` of the exiting thread returns.
pub fn exit_program(status: i32, site: Site) -> ! {
    with_shared(|s| {
        let t = s.current;
        s.exited.get_or_insert((t, status));
    });
    block(BlockReason::Exit, site)
}

/// A lock acquisition found the lock at `cell` held. Exhaustive exploration
/// stops the thread here (it schedules an acquisition while the lock is held
/// only when no other thread can run, so this shows a deadlock); a live
/// random execution resumes it once the lock has been written again, and the
/// caller retries.
pub fn wait_lock(cell: &LocCell, site: Site) {
    let loc = cell.get(generation());
    with_shared(|s| s.last_lock = loc);
    suspend(Request::Act {
        action: Action::Block {
            reason: BlockReason::LockHeld,
        },
        bind: None,
        site,
    });
}

/// Starts a modelled thread; returns its number.
pub fn spawn(main: ThreadMain, site: Site) -> u32 {
    suspend(Request::Spawn { main, site }).val as u32
}

/// Waits for thread `child` to finish and takes its result.
/// Waits for thread `child` to finish, leaving its result for another join
/// (a C program's `pthread_join`, which keeps results itself); whether it
/// finished without a panic. Its panic, if any, still fails the execution.
pub fn join_wait(child: u32, site: Site) -> bool {
    suspend(Request::Act {
        action: Action::Join { child },
        bind: None,
        site,
    });
    with_shared(|s| {
        s.results
            .get(child as usize)
            .and_then(|r| r.as_ref())
            .is_some_and(|r| r.is_ok())
    })
}

/// Waits for thread `child` to finish and takes its result.
pub fn join(child: u32, site: Site) -> ThreadResult {
    suspend(Request::Act {
        action: Action::Join { child },
        bind: None,
        site,
    });
    with_shared(|s| {
        let r = s.results[child as usize]
            .take()
            .expect("c11check: a thread was joined twice");
        if r.is_err() {
            s.joined_panics.push(child);
        }
        r
    })
}

/// `yield_now` / `spin_loop`: marks the end of one iteration of a wait loop.
/// An iteration that only read what the previous one read is cut (that
/// execution is blocked; the one where a newer value arrives is explored).
/// The program yielded there: a preemption bound counts no preemption for
/// a switch right after it.
pub fn spin_hint(site: Site) {
    suspend(Request::Spin {
        site,
        yields: true,
        failed: false,
        cut: true,
    });
}

/// [`spin_hint`] where the program says the wait-loop turn that ends here
/// found nothing (`hint::failed_wait_turn`): robustness leaves the turn's
/// accesses (since the thread's previous hint) out if it wrote nothing
/// atomic, whether or not the next turn repeats it.
pub fn failed_turn_hint(site: Site) {
    suspend(Request::Spin {
        site,
        yields: true,
        failed: true,
        cut: true,
    });
}

/// The program yielded where its loop is no wait (it counts, see the C
/// runtime's `program_spin_hint`): nothing is cut, but a preemption bound
/// counts no preemption for a switch right after it.
pub fn yielded(site: Site) {
    suspend(Request::Spin {
        site,
        yields: true,
        failed: false,
        cut: false,
    });
}

/// [`spin_hint`] for a place the runtime chose itself (a C loop's head),
/// where the program did not yield: a switch there is a preemption.
pub fn loop_hint(site: Site) {
    suspend(Request::Spin {
        site,
        yields: false,
        failed: false,
        cut: true,
    });
}

/// Records the panic the hook saw last (the hook keeps messages of modelled
/// threads out of the test output; the report shows them).
pub(crate) fn take_last_panic() -> Option<(String, Option<String>)> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}

/// Installs (once) a panic hook that stays silent for panics of modelled
/// threads and remembers their message and place.
pub(crate) fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A panic outside user code (the checker's own) is printed.
            let modelled = MODELLING.with(|m| m.get()) && crate::alloc::in_fiber();
            if !modelled {
                previous(info);
                return;
            }
            let msg = panic_message(info.payload());
            let place = info.location().map(|l| l.to_string());
            LAST_PANIC.with(|p| *p.borrow_mut() = Some((msg, place)));
        }));
    });
}

thread_local! {
    /// Whether this OS thread is running a model (panics are then recorded).
    pub(crate) static MODELLING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic with a non-string payload)".to_string()
    }
}
