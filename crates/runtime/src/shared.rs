//! The state the driver (on the main stack) and the running fiber share,
//! one per run and OS thread, and what the facades ask of it directly
//! (which thread runs, which execution this is).

use crate::protocol::{FiberYielder, Strengthen, ThreadResult};
use crate::report::{Failure, LocationName, Made};
use crate::{LocCell, Site};
use c11check_model::{EventId, Loc};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;

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
    pub failure: Option<Failure>,
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
    /// Objects of this execution bound in a tracked allocation, by the
    /// address of their location cell, until the allocation is freed (a
    /// free takes out a range: long executions bind 10^5 objects).
    pub objects: std::collections::BTreeSet<(usize, Loc)>,
    /// Each object of `objects`: its cell's address.
    /// (By location number, 0 for none: locations are numbered densely.)
    pub object_addr: Vec<usize>,
    /// Objects whose allocation a modelled thread freed in this execution:
    /// location, freeing thread, its position then (as in `stamps`).
    pub frees: Vec<(Loc, u32, u64)>,
    /// `frees` by location (the first free of each), asked at every access.
    /// (By location number.)
    pub freed_at: Vec<Option<(u32, u64)>>,
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
        self.object_addr.clear();
        self.frees.clear();
        self.freed_at.clear();
        self.indeterminate.clear();
        self.exited = None;
        self.bound.clear();
        self.labels.clear();
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
    /// `text` with the locations it mentions named as reports name them.
    pub(crate) fn renamed(&self, text: &str) -> String {
        let mentioned = crate::report::mentioned_locations(text);
        let names = self.location_names_where(&|l| mentioned.contains(&l.0));
        crate::report::renamed(text, &names)
    }
    /// How reports call each location the program described or named: the
    /// innermost [`name_object`] range holding its cell (several locations
    /// in one named object get `name.1`, `name.2`... in address order),
    /// and what the object is and where it was made; in location order.
    pub(crate) fn location_names(&self) -> Vec<LocationName> {
        self.location_names_where(&|_| true)
    }
    /// [`Self::location_names`] of the locations `wanted` accepts (their
    /// numbers under a shared name count every location): a report names
    /// a few of a long run's 10^5 locations.
    pub(crate) fn location_names_where(&self, wanted: &dyn Fn(Loc) -> bool) -> Vec<LocationName> {
        // Locations in address order, swept past the labels in order of
        // their start: the labels holding an address are those started and
        // not yet ended; the innermost is the shortest (the latest made
        // among equals). A long execution binds 10^5 locations and labels
        // 10^4 blocks: this is n log n, where trying every label on every
        // location was not.
        let mut bound: Vec<(usize, usize, Option<Made>)> = self
            .bound
            .iter()
            .enumerate()
            .filter_map(|(l, b)| b.map(|(addr, made)| (addr, l, made)))
            .collect();
        bound.sort_unstable_by_key(|b| (b.0, b.1));
        let mut by_start: Vec<usize> = (0..self.labels.len()).collect();
        by_start.sort_unstable_by_key(|&i| self.labels[i].0);
        let mut next_label = 0;
        let mut active = std::collections::BTreeSet::new();
        // Per label, the locations under it so far; per location shown, its
        // rank under its label.
        let mut per_label: std::collections::HashMap<usize, usize> = Default::default();
        let mut out: Vec<(usize, LocationName)> = Vec::new();
        for (addr, l, made) in bound {
            while next_label < by_start.len() && self.labels[by_start[next_label]].0 <= addr {
                let i = by_start[next_label];
                let (s, e, _) = &self.labels[i];
                active.insert((e - s, usize::MAX - i));
                next_label += 1;
            }
            let label = loop {
                let Some(&(len, key)) = active.first() else {
                    break None;
                };
                let i = usize::MAX - key;
                if self.labels[i].1 > addr {
                    break Some(i);
                }
                // The shortest label started is the innermost if it holds
                // the address; if it ended before, it ends before every
                // later address too.
                active.remove(&(len, key));
            };
            // A heap location is named by its block (see
            // [`set_heap_namer`]), as a label of its own byte would.
            let namer = HEAP_NAMER
                .get()
                .filter(|(owns, _)| owns(addr))
                .filter(|_| label.is_none_or(|i| self.labels[i].1 - self.labels[i].0 > 1));
            if label.is_none() && made.is_none() && namer.is_none() {
                continue;
            }
            // Several locations under one label: number them in address
            // order (the same in every execution, whatever the schedule).
            let rank = label.filter(|_| namer.is_none()).map(|i| {
                let n = per_label.entry(i).or_insert(0);
                *n += 1;
                *n
            });
            if !wanted(Loc(l as u32)) {
                continue;
            }
            let name = match namer.and_then(|(_, name)| name(addr)) {
                Some(own) => Some((usize::MAX, own)),
                None => label.map(|i| (i, self.labels[i].2.to_string())),
            };
            out.push((
                rank.unwrap_or(0),
                LocationName {
                    loc: Loc(l as u32),
                    name,
                    made,
                },
            ));
        }
        for (rank, n) in &mut out {
            if let Some((label, name)) = &mut n.name {
                if per_label.get(label).is_some_and(|&n| n > 1) {
                    *name = format!("{name}.{rank}");
                }
            }
        }
        let mut out: Vec<LocationName> = out.into_iter().map(|(_, n)| n).collect();
        out.sort_unstable_by_key(|n| n.loc.0);
        out
    }
    /// Records the creation of the object bound to `loc` whose location cell
    /// is at `addr`, if it lives in a tracked allocation (`creation`: the
    /// thread that made it and its position then, as `alloc::creation_of`
    /// says).
    pub(crate) fn note_creation(&mut self, loc: Loc, addr: usize, creation: Option<(u32, u64)>) {
        if let Some((t, stamp)) = creation {
            self.creations.retain(|c| c.0 != loc);
            self.creations.push((loc, t, stamp));
            self.bind_object(loc, addr);
        }
    }
    /// The object bound to `loc` has its location cell at `addr`, in a
    /// tracked allocation.
    pub(crate) fn bind_object(&mut self, loc: Loc, addr: usize) {
        let l = loc.0 as usize;
        if self.object_addr.len() <= l {
            self.object_addr.resize(l + 1, 0);
        }
        let old = std::mem::replace(&mut self.object_addr[l], addr);
        if old != 0 {
            self.objects.remove(&(old, loc));
        }
        self.objects.insert((addr, loc));
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
        if start >= end {
            return;
        }
        let gone: Vec<(usize, Loc)> = self
            .objects
            .range((start, Loc(0))..(end, Loc(0)))
            .copied()
            .collect();
        for (addr, loc) in gone {
            self.objects.remove(&(addr, loc));
            self.object_addr[loc.0 as usize] = 0;
            self.frees.push((loc, t, stamp));
            let l = loc.0 as usize;
            if self.freed_at.len() <= l {
                self.freed_at.resize(l + 1, None);
            }
            self.freed_at[l].get_or_insert((t, stamp));
        }
    }
    /// Where the allocation holding the object at `loc` was freed, if it was.
    pub(crate) fn freed(&self, loc: Loc) -> Option<(u32, u64)> {
        self.freed_at.get(loc.0 as usize).copied().flatten()
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
}

pub(crate) fn install_shared(s: Option<Rc<RefCell<Shared>>>) {
    SHARED.with(|cell| *cell.borrow_mut() = s);
}

pub(crate) fn with_shared<R>(f: impl FnOnce(&mut Shared) -> R) -> R {
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
pub(crate) fn outside_model_message() -> &'static str {
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

/// The number of the modelled thread that is running (0 is the model's closure).
#[inline]
pub fn current_thread() -> u32 {
    with_shared(|s| s.current)
}

/// Whether an address is in a heap whose locations have names of their own,
/// and that name (asked only for the locations a report shows).
type HeapNamer = (fn(usize) -> bool, fn(usize) -> Option<String>);
static HEAP_NAMER: std::sync::OnceLock<HeapNamer> = std::sync::OnceLock::new();

/// Names the locations of a heap by their blocks (`push()'s block 2+8`) when
/// a report shows them: `owns` says whether an address is in that heap,
/// `name` what to call it, as long as the execution that used it has not
/// been followed by another. Naming each of a long run's 10^5 heap
/// locations as it was first used cost a tenth of the run.
pub fn set_heap_namer(owns: fn(usize) -> bool, name: fn(usize) -> Option<String>) {
    let _ = HEAP_NAMER.set((owns, name));
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

/// What a scope panics with when one of its threads panicked (as std's
/// does): reports lead with that thread's panic instead.
pub const SCOPE_PANIC: &str = "a scoped thread panicked";

/// Address ranges whose races the program declared benign
/// (ThreadSanitizer's `AnnotateBenignRaceSized`): for the whole process, as
/// ThreadSanitizer keeps them.
static BENIGN_RACES: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

/// Declares races on `[start, start + len)` benign: a race on an object
/// there is not reported.
pub fn annotate_benign_race(start: usize, len: usize) {
    let mut b = BENIGN_RACES.lock().unwrap_or_else(|e| e.into_inner());
    let range = (start, start + len.max(1));
    if !b.contains(&range) {
        b.push(range);
    }
}

impl Shared {
    /// Whether a race on `loc` was declared benign (its object lies in a
    /// range given to [`annotate_benign_race`]).
    pub(crate) fn benign_race(&self, loc: Loc) -> bool {
        let b = BENIGN_RACES.lock().unwrap_or_else(|e| e.into_inner());
        if b.is_empty() {
            return false;
        }
        let Some(Some((addr, _))) = self.bound.get(loc.0 as usize) else {
            return false;
        };
        b.iter().any(|&(s, e)| (s..e).contains(addr))
    }
}
