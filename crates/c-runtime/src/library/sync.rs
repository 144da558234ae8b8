//! Condition variables, read-write locks, `pthread_once`, spin locks, timed
//! lock acquisitions and sleeping, as the program calls them.
//!
//! Each is built from the model's actions on locations at the object's
//! address, the way the Rust API's `Condvar` and `RwLock` are:
//! - a condition variable is `c11check_runtime::condvar`'s protocol on
//!   the location at `c` (the Rust API's `Condvar` is too): a signal wakes
//!   one of the threads waiting at that moment (the explorer tries each),
//!   a broadcast all of them, and a wait may also wake spuriously (not
//!   twice in a row at one wait), a timed one time out;
//! - a read-write lock is a count of `PERMITS` shares at its address: a
//!   reader takes one, a writer all (acquire), an unlock gives them back
//!   (release);
//! - `pthread_once` runs its routine under a lock at the flag's address,
//!   so every caller happens after the routine;
//! - a spin lock is a mutex; a timed acquisition that would have to wait
//!   either times out or waits, both explored;
//! - sleeping is yielding: a loop that sleeps until something changes is
//!   a wait, cut as a spin loop is.
//!
//! Only the objects' addresses are used, never their contents (glibc's
//! static initializers are all zeros), so an object is ready at its
//! first use in each execution.

use crate::library::lifetimes;
use crate::library::pthread::{lock_addr, lock_mutex, may_unlock, unlock_mutex};
use crate::memory;
use c11check_model::{Action, MemOrder, Value};
use c11check_runtime::condvar::{self, WaitEnd, Woken};
use c11check_runtime::{access, Site};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};

pub(crate) use c11check_runtime::condvar::explored_choice;

/// Takes `n` from the count at `addr` (which starts at `init`), waiting
/// while it is below `n` when `waits`; whether it took them.
fn take(addr: usize, init: Value, n: Value, ord: MemOrder, waits: bool, site: Site) -> bool {
    c11check_runtime::locks::take(memory::lock_cell(addr), init, n, ord, waits, site)
}

// ---- condition variables -----------------------------------------------------

/// How a wait on a condition variable may end besides a notification.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitKind {
    /// `pthread_cond_wait`: spuriously.
    Untimed,
    /// A timed wait: by timing out.
    Timed,
}

/// Waits on condition variable `c` with mutex `m` held; 0 or `ETIMEDOUT`.
pub(crate) fn cond_wait(
    c: usize,
    m: *mut libc::pthread_mutex_t,
    kind: WaitKind,
    site: Site,
) -> c_int {
    memory::begin(site);
    lifetimes::use_(lifetimes::Kind::Cond, c, site, "waits on");
    if !may_unlock(m) {
        return libc::EPERM;
    }
    memory::internal(|| {
        let end = match kind {
            WaitKind::Untimed => WaitEnd::Untimed,
            WaitKind::Timed => WaitEnd::Timed,
        };
        let woken = condvar::wait(
            memory::lock_cell(c),
            end,
            "a condition variable's notification",
            || {
                unlock_mutex(m, site);
            },
            site,
        );
        lock_mutex(m, Acquire::Wait, site);
        if woken == Woken::TimedOut {
            libc::ETIMEDOUT
        } else {
            0
        }
    })
}

/// Wakes one waiter of `c`, if there is one.
pub(crate) fn cond_signal(c: usize, site: Site) {
    memory::begin(site);
    lifetimes::use_(lifetimes::Kind::Cond, c, site, "signals");
    memory::internal(|| condvar::notify_one(memory::lock_cell(c), site))
}

/// Wakes every waiter of `c`.
pub(crate) fn cond_broadcast(c: usize, site: Site) {
    memory::begin(site);
    lifetimes::use_(lifetimes::Kind::Cond, c, site, "broadcasts on");
    memory::internal(|| condvar::notify_all(memory::lock_cell(c), site))
}

extern "C" fn cond_wait_impl(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_cond_wait"; fn(*mut libc::pthread_cond_t, *mut libc::pthread_mutex_t) -> c_int, c, m);
    }
    cond_wait(c as usize, m, WaitKind::Untimed, memory::site(pc))
}
with_pc!(pthread_cond_wait(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t) -> c_int, "rdx", cond_wait_impl);

extern "C" fn cond_timedwait_impl(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
    t: *const libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_cond_timedwait"; fn(*mut libc::pthread_cond_t, *mut libc::pthread_mutex_t, *const libc::timespec) -> c_int, c, m, t);
    }
    cond_wait(c as usize, m, WaitKind::Timed, memory::site(pc))
}
with_pc!(pthread_cond_timedwait(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t, t: *const libc::timespec) -> c_int, "rcx", cond_timedwait_impl);

extern "C" fn cond_clockwait_impl(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
    clock: libc::clockid_t,
    t: *const libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_cond_clockwait"; fn(*mut libc::pthread_cond_t, *mut libc::pthread_mutex_t, libc::clockid_t, *const libc::timespec) -> c_int, c, m, clock, t);
    }
    cond_wait(c as usize, m, WaitKind::Timed, memory::site(pc))
}
with_pc!(pthread_cond_clockwait(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, t: *const libc::timespec) -> c_int, "r8", cond_clockwait_impl);

extern "C" fn cond_signal_impl(c: *mut libc::pthread_cond_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_cond_signal"; fn(*mut libc::pthread_cond_t) -> c_int, c);
    }
    cond_signal(c as usize, memory::site(pc));
    0
}
with_pc!(pthread_cond_signal(c: *mut libc::pthread_cond_t) -> c_int, "rsi", cond_signal_impl);

extern "C" fn cond_broadcast_impl(c: *mut libc::pthread_cond_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_cond_broadcast"; fn(*mut libc::pthread_cond_t) -> c_int, c);
    }
    cond_broadcast(c as usize, memory::site(pc));
    0
}
with_pc!(pthread_cond_broadcast(c: *mut libc::pthread_cond_t) -> c_int, "rsi", cond_broadcast_impl);

// ---- read-write locks ----------------------------------------------------------

/// A read-write lock's shares: a writer takes them all, a reader one.
use c11check_runtime::locks::PERMITS;

/// Per read-write lock and thread, in which execution: read holds, and
/// whether it holds the lock for writing.
type RwHolds = HashMap<(usize, u32), (u32, u32, bool)>;

thread_local! {
    static RW_HOLDS: RefCell<RwHolds> = RefCell::new(RwHolds::new());
}

/// The calling thread's holds of `l`: (reads, writing).
fn rw_holds(l: usize) -> (u32, bool) {
    let g = c11check_runtime::generation();
    let me = crate::process::tls::current_thread();
    RW_HOLDS.with(|h| {
        h.borrow()
            .get(&(l, me))
            .filter(|e| e.0 == g)
            .map_or((0, false), |e| (e.1, e.2))
    })
}

fn set_rw_holds(l: usize, reads: u32, writing: bool) {
    let g = c11check_runtime::generation();
    let me = crate::process::tls::current_thread();
    RW_HOLDS.with(|h| h.borrow_mut().insert((l, me), (g, reads, writing)));
}

/// How an acquisition that would wait goes on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Acquire {
    /// It waits (`lock`).
    Wait,
    /// It fails at once (`trylock`).
    Try,
    /// It times out or waits, both explored (`timedlock`).
    Timed,
}

/// Takes `n` shares of the lock at `addr` (starting at `init`) as `how`
/// says; 0, `EBUSY` or `ETIMEDOUT`.
pub(crate) fn acquire_shares(
    addr: usize,
    init: Value,
    n: Value,
    how: Acquire,
    site: Site,
) -> c_int {
    match how {
        Acquire::Wait => {
            take(addr, init, n, MemOrder::Acquire, true, site);
            0
        }
        Acquire::Try => {
            if take(addr, init, n, MemOrder::Acquire, false, site) {
                0
            } else {
                libc::EBUSY
            }
        }
        Acquire::Timed => {
            if take(addr, init, n, MemOrder::Acquire, false, site) {
                forget_time_out();
                return 0;
            }
            // A thread's timed wait that timed out at this site last time
            // waits this time: a loop around a timed wait would otherwise
            // time out at every turn, without end.
            if !timed_out_here_last(site) && explored_choice(site) {
                note_time_out(site);
                return libc::ETIMEDOUT;
            }
            forget_time_out();
            c11check_runtime::set_waiting(Some(c11check_runtime::TIMED_WAIT));
            take(addr, init, n, MemOrder::Acquire, true, site);
            c11check_runtime::set_waiting(None);
            0
        }
    }
}

thread_local! {
    /// Per modelled thread: the execution and site of its last timed
    /// acquisition that timed out, while it has taken nothing since.
    static TIMED_OUT: RefCell<HashMap<u32, (u32, Site)>> = RefCell::new(HashMap::new());
}

fn timed_out_here_last(site: Site) -> bool {
    let (me, g) = (
        c11check_runtime::current_thread(),
        c11check_runtime::generation(),
    );
    TIMED_OUT.with(|t| t.borrow().get(&me) == Some(&(g, site)))
}

fn note_time_out(site: Site) {
    let (me, g) = (
        c11check_runtime::current_thread(),
        c11check_runtime::generation(),
    );
    TIMED_OUT.with(|t| t.borrow_mut().insert(me, (g, site)));
}

fn forget_time_out() {
    let me = c11check_runtime::current_thread();
    TIMED_OUT.with(|t| t.borrow_mut().remove(&me));
}

fn rw_lock(l: *mut libc::pthread_rwlock_t, write: bool, how: Acquire, site: Site) -> c_int {
    memory::begin(site);
    let l = l as usize;
    lifetimes::use_(lifetimes::Kind::RwLock, l, site, "locks");
    let (reads, writing) = rw_holds(l);
    if writing || (write && reads > 0) {
        // glibc's answer to a lock the thread already holds for writing
        // (and to an upgrade, which would deadlock).
        return libc::EDEADLK;
    }
    let n = if write { PERMITS } else { 1 };
    let r = memory::internal(|| acquire_shares(l, PERMITS, n, how, site));
    if r == 0 {
        set_rw_holds(l, reads + !write as u32, write);
    }
    r
}

fn rw_unlock(l: *mut libc::pthread_rwlock_t, site: Site) -> c_int {
    memory::begin(site);
    let l = l as usize;
    lifetimes::use_(lifetimes::Kind::RwLock, l, site, "unlocks");
    let (reads, writing) = rw_holds(l);
    let n = if writing {
        set_rw_holds(l, 0, false);
        PERMITS
    } else if reads > 0 {
        set_rw_holds(l, reads - 1, false);
        1
    } else {
        return libc::EPERM;
    };
    c11check_runtime::locks::give(memory::lock_cell(l), PERMITS, n, site);
    0
}

macro_rules! rwlock_entry {
    ($name:ident, $imp:ident, $write:expr, $how:expr) => {
        extern "C" fn $imp(l: *mut libc::pthread_rwlock_t, pc: usize) -> c_int {
            runtime_entry!();
            if !crate::memory::program_call(pc) {
                passed_on!(const_cstr!($name); fn(*mut libc::pthread_rwlock_t) -> c_int, l);
            }
            rw_lock(l, $write, $how, memory::site(pc))
        }
        with_pc!($name(l: *mut libc::pthread_rwlock_t) -> c_int, "rsi", $imp);
    };
}

macro_rules! rwlock_timed_entry {
    ($name:ident, $imp:ident, $write:expr) => {
        extern "C" fn $imp(l: *mut libc::pthread_rwlock_t, t: *const libc::timespec, pc: usize) -> c_int {
            runtime_entry!();
            if !crate::memory::program_call(pc) {
                passed_on!(const_cstr!($name); fn(*mut libc::pthread_rwlock_t, *const libc::timespec) -> c_int, l, t);
            }
            rw_lock(l, $write, Acquire::Timed, memory::site(pc))
        }
        with_pc!($name(l: *mut libc::pthread_rwlock_t, t: *const libc::timespec) -> c_int, "rdx", $imp);
    };
}

macro_rules! rwlock_clock_entry {
    ($name:ident, $imp:ident, $write:expr) => {
        extern "C" fn $imp(
            l: *mut libc::pthread_rwlock_t,
            c: libc::clockid_t,
            t: *const libc::timespec,
            pc: usize,
        ) -> c_int {
            runtime_entry!();
            if !crate::memory::program_call(pc) {
                passed_on!(const_cstr!($name); fn(*mut libc::pthread_rwlock_t, libc::clockid_t, *const libc::timespec) -> c_int, l, c, t);
            }
            rw_lock(l, $write, Acquire::Timed, memory::site(pc))
        }
        with_pc!($name(l: *mut libc::pthread_rwlock_t, c: libc::clockid_t, t: *const libc::timespec) -> c_int, "rcx", $imp);
    };
}

rwlock_entry!(pthread_rwlock_rdlock, rdlock_impl, false, Acquire::Wait);
rwlock_entry!(pthread_rwlock_wrlock, wrlock_impl, true, Acquire::Wait);
rwlock_entry!(
    pthread_rwlock_tryrdlock,
    tryrdlock_impl,
    false,
    Acquire::Try
);
rwlock_entry!(pthread_rwlock_trywrlock, trywrlock_impl, true, Acquire::Try);
rwlock_timed_entry!(pthread_rwlock_timedrdlock, timedrdlock_impl, false);
rwlock_timed_entry!(pthread_rwlock_timedwrlock, timedwrlock_impl, true);
rwlock_clock_entry!(pthread_rwlock_clockrdlock, clockrdlock_impl, false);
rwlock_clock_entry!(pthread_rwlock_clockwrlock, clockwrlock_impl, true);

extern "C" fn rw_unlock_impl(l: *mut libc::pthread_rwlock_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_rwlock_unlock"; fn(*mut libc::pthread_rwlock_t) -> c_int, l);
    }
    rw_unlock(l, memory::site(pc))
}
with_pc!(pthread_rwlock_unlock(l: *mut libc::pthread_rwlock_t) -> c_int, "rsi", rw_unlock_impl);

/// `pthread_{cond,rwlock}_{init,destroy}`: the object's lifetime (see
/// `lifetimes`), then glibc's own function (which sets up the bytes a
/// library may read; the model keeps its state elsewhere).
macro_rules! lifetime_entry {
    ($name:ident, $imp:ident, $ty:ty, init, $kind:expr) => {
        extern "C" fn $imp(o: *mut $ty, a: *const c_void, pc: usize) -> c_int {
            runtime_entry!();
            if crate::memory::modelled() {
                let site = memory::site(pc);
                if crate::memory::program_call(pc) {
                    memory::begin(site);
                }
                lifetimes::init($kind, o as usize, site);
            }
            passed_on!(const_cstr!($name); fn(*mut $ty, *const c_void) -> c_int, o, a);
        }
        with_pc!($name(o: *mut $ty, a: *const c_void) -> c_int, "rdx", $imp);
    };
    ($name:ident, $imp:ident, $ty:ty, destroy, $kind:expr) => {
        extern "C" fn $imp(o: *mut $ty, pc: usize) -> c_int {
            runtime_entry!();
            if crate::memory::program_call(pc) {
                let site = memory::site(pc);
                memory::begin(site);
                lifetimes::destroy($kind, o as usize, site);
                return 0;
            }
            passed_on!(const_cstr!($name); fn(*mut $ty) -> c_int, o);
        }
        with_pc!($name(o: *mut $ty) -> c_int, "rsi", $imp);
    };
}

lifetime_entry!(
    pthread_cond_init,
    cond_init_impl,
    libc::pthread_cond_t,
    init,
    lifetimes::Kind::Cond
);
lifetime_entry!(
    pthread_cond_destroy,
    cond_destroy_impl,
    libc::pthread_cond_t,
    destroy,
    lifetimes::Kind::Cond
);
lifetime_entry!(
    pthread_rwlock_init,
    rwlock_init_impl,
    libc::pthread_rwlock_t,
    init,
    lifetimes::Kind::RwLock
);
lifetime_entry!(
    pthread_rwlock_destroy,
    rwlock_destroy_impl,
    libc::pthread_rwlock_t,
    destroy,
    lifetimes::Kind::RwLock
);

// ---- once ------------------------------------------------------------------------

/// Per once flag: the execution in which its routine ran.
type OnceDone = HashMap<usize, u32>;

thread_local! {
    static ONCE_DONE: RefCell<OnceDone> = RefCell::new(OnceDone::new());
}

/// Runs `routine` once per flag at `flag` and execution; every caller
/// returns after it ran (they wait for a lock it held meanwhile).
pub(crate) fn once(flag: usize, routine: unsafe extern "C" fn(), site: Site) {
    memory::begin(site);
    let cell = memory::lock_cell(flag);
    let me = crate::process::tls::current_thread();
    let run = || {
        let g = c11check_runtime::generation();
        if ONCE_DONE.with(|d| d.borrow().get(&flag) == Some(&g)) {
            return;
        }
        // The routine runs as the calling thread: libstdc++'s
        // `std::call_once` hands its callable to `__once_proxy` in the
        // thread's own thread-locals.
        // SAFETY: the program's routine, as it asked.
        crate::process::tls::as_program(me, || unsafe { routine() });
        ONCE_DONE.with(|d| d.borrow_mut().insert(flag, g));
        memory::flush_pending();
    };
    // The lock's own accesses are the runtime's, the routine's the
    // program's.
    c11check_runtime::once::run_locked(cell, site, run);
}

extern "C" fn once_impl(
    flag: *mut libc::pthread_once_t,
    routine: unsafe extern "C" fn(),
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_once"; fn(*mut libc::pthread_once_t, unsafe extern "C" fn()) -> c_int, flag, routine);
    }
    once(flag as usize, routine, memory::site(pc));
    0
}
with_pc!(pthread_once(f: *mut libc::pthread_once_t, r: unsafe extern "C" fn()) -> c_int, "rdx", once_impl);

// ---- spin locks and timed mutexes -------------------------------------------------

/// Takes spin lock `l` (a plain `int`, no kind to look at).
fn lock_spin(l: *mut libc::pthread_spinlock_t, how: Acquire, site: Site) -> c_int {
    memory::begin(site);
    memory::internal(|| lock_addr(l as usize, how, site))
}

extern "C" fn spin_lock_impl(l: *mut libc::pthread_spinlock_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_spin_lock"; fn(*mut libc::pthread_spinlock_t) -> c_int, l);
    }
    lock_spin(l, Acquire::Wait, memory::site(pc))
}
with_pc!(pthread_spin_lock(l: *mut libc::pthread_spinlock_t) -> c_int, "rsi", spin_lock_impl);

extern "C" fn spin_trylock_impl(l: *mut libc::pthread_spinlock_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_spin_trylock"; fn(*mut libc::pthread_spinlock_t) -> c_int, l);
    }
    lock_spin(l, Acquire::Try, memory::site(pc))
}
with_pc!(pthread_spin_trylock(l: *mut libc::pthread_spinlock_t) -> c_int, "rsi", spin_trylock_impl);

extern "C" fn spin_unlock_impl(l: *mut libc::pthread_spinlock_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_spin_unlock"; fn(*mut libc::pthread_spinlock_t) -> c_int, l);
    }
    // A spin lock is a plain int: no kind to look at.
    let site = memory::site(pc);
    memory::begin(site);
    access(memory::lock_cell(l as usize), 0, Action::lock_release, site);
    0
}
with_pc!(pthread_spin_unlock(l: *mut libc::pthread_spinlock_t) -> c_int, "rsi", spin_unlock_impl);

/// Sets up a spin lock: nothing to do (only its address is used).
#[unsafe(no_mangle)]
pub extern "C" fn pthread_spin_init(_l: *mut libc::pthread_spinlock_t, _shared: c_int) -> c_int {
    runtime_entry!();
    0
}

/// Nothing to free.
#[unsafe(no_mangle)]
pub extern "C" fn pthread_spin_destroy(_l: *mut libc::pthread_spinlock_t) -> c_int {
    runtime_entry!();
    0
}

extern "C" fn mutex_timedlock_impl(
    m: *mut libc::pthread_mutex_t,
    t: *const libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_mutex_timedlock"; fn(*mut libc::pthread_mutex_t, *const libc::timespec) -> c_int, m, t);
    }
    lock_mutex(m, Acquire::Timed, memory::site(pc))
}
with_pc!(pthread_mutex_timedlock(m: *mut libc::pthread_mutex_t, t: *const libc::timespec) -> c_int, "rdx", mutex_timedlock_impl);

extern "C" fn mutex_clocklock_impl(
    m: *mut libc::pthread_mutex_t,
    c: libc::clockid_t,
    t: *const libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"pthread_mutex_clocklock"; fn(*mut libc::pthread_mutex_t, libc::clockid_t, *const libc::timespec) -> c_int, m, c, t);
    }
    lock_mutex(m, Acquire::Timed, memory::site(pc))
}
with_pc!(pthread_mutex_clocklock(m: *mut libc::pthread_mutex_t, c: libc::clockid_t, t: *const libc::timespec) -> c_int, "rcx", mutex_clocklock_impl);

// ---- sleeping ----------------------------------------------------------------------

/// Time does not pass in the model: a sleep is a yield (a loop that sleeps
/// until something changes is a wait).
pub(crate) fn sleep_now(site: Site, kept: Option<u64>) {
    memory::program_spin_hint(site, kept);
}

extern "C" fn usleep_impl(us: libc::useconds_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"usleep"; fn(libc::useconds_t) -> c_int, us);
    }
    sleep_now(memory::site(pc), Some(crate::process::caller_state()));
    0
}
with_pc!(usleep(us: libc::useconds_t) -> c_int, "rsi", usleep_impl);

extern "C" fn sleep_impl(s: u32, pc: usize) -> u32 {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"sleep"; fn(u32) -> u32, s);
    }
    sleep_now(memory::site(pc), Some(crate::process::caller_state()));
    0
}
with_pc!(sleep(s: u32) -> u32, "rsi", sleep_impl);

extern "C" fn nanosleep_impl(
    t: *const libc::timespec,
    rem: *mut libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"nanosleep"; fn(*const libc::timespec, *mut libc::timespec) -> c_int, t, rem);
    }
    sleep_now(memory::site(pc), Some(crate::process::caller_state()));
    0
}
with_pc!(nanosleep(t: *const libc::timespec, rem: *mut libc::timespec) -> c_int, "rdx", nanosleep_impl);

extern "C" fn clock_nanosleep_impl(
    c: libc::clockid_t,
    flags: c_int,
    t: *const libc::timespec,
    rem: *mut libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"clock_nanosleep"; fn(libc::clockid_t, c_int, *const libc::timespec, *mut libc::timespec) -> c_int, c, flags, t, rem);
    }
    sleep_now(memory::site(pc), Some(crate::process::caller_state()));
    0
}
with_pc!(clock_nanosleep(c: libc::clockid_t, f: c_int, t: *const libc::timespec, rem: *mut libc::timespec) -> c_int, "r8", clock_nanosleep_impl);

// ---- futexes (C++20 `atomic::wait`) ----------------------------------------------

const FUTEX_CMD_MASK: c_int = !(libc::FUTEX_PRIVATE_FLAG | libc::FUTEX_CLOCK_REALTIME);

/// The caller's address of the `syscall` call being handled (all modelled
/// threads run on one OS thread; read before anything can switch; another
/// thread's call leaves it alone, see `on_model_thread_asm!`).
static mut SYSCALL_PC: usize = 0;

/// `syscall(n, ...)`: notes the caller's kept state (as `with_pc!`) and
/// address, and goes on to `syscall_impl` with the same arguments (the
/// seventh on the stack).
///
/// # Safety
/// Called by the program, as libc's `syscall` (a variadic function whose
/// integer arguments arrive in these registers).
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn syscall(
    n: libc::c_long,
    a1: libc::c_long,
    a2: libc::c_long,
    a3: libc::c_long,
    a4: libc::c_long,
    a5: libc::c_long,
    a6: libc::c_long,
) -> libc::c_long {
    core::arch::naked_asm!(
        on_model_thread_asm!(),
        kept_state_asm!(),
        "mov rax, [rsp]",
        "mov qword ptr [rip + {pc}], rax",
        "5:",
        "jmp {f}",
        in_fiber = sym crate::process::tls::IN_FIBER,
        runtime_tp = sym crate::process::tls::RUNTIME_TP,
        helpers = sym crate::process::tls::HELPER_REGION,
        state = sym crate::process::CALLER_STATE,
        sp = sym crate::process::CALLER_SP,
        pc = sym SYSCALL_PC,
        f = sym syscall_impl,
    )
}

/// `syscall(SYS_futex, ...)` as libstdc++'s `atomic::wait`/`notify`,
/// `std::future` and `std::promise` make it; every other system call is
/// passed on. A futex wait reads the word (a relaxed load: the kernel's
/// check orders nothing) and returns if it no longer holds the value the
/// caller saw; else it waits there for another store to it, as a spin
/// loop the runtime cuts (a wait with a time-out returns at once, as one
/// that timed out or woke spuriously, which futexes allow: its caller
/// checks again). A wake wakes nobody: waiters wait for the store.
/// Waits until the futex word at `addr` holds another value than `val`.
fn futex_wait(addr: usize, val: u32, site: Site) {
    while memory::load(addr, 4, 0, site) as u32 == val {
        memory::program_spin_hint(site, None);
    }
}

extern "C" fn syscall_impl(
    n: libc::c_long,
    a1: libc::c_long,
    a2: libc::c_long,
    a3: libc::c_long,
    a4: libc::c_long,
    a5: libc::c_long,
    a6: libc::c_long,
) -> libc::c_long {
    runtime_entry!();
    // SAFETY: written by the trampoline of this call, on this thread.
    let pc = unsafe { std::ptr::addr_of!(SYSCALL_PC).read() };
    if n == libc::SYS_futex && memory::program_call(pc) {
        let site = memory::site(pc);
        match a2 as c_int & FUTEX_CMD_MASK {
            libc::FUTEX_WAIT | libc::FUTEX_WAIT_BITSET if a4 == 0 => {
                futex_wait(a1 as usize, a3 as u32, site);
                return 0;
            }
            libc::FUTEX_WAIT | libc::FUTEX_WAIT_BITSET => {
                sleep_now(site, None);
                return 0;
            }
            libc::FUTEX_WAKE | libc::FUTEX_WAKE_BITSET => {
                memory::begin(site);
                return 0;
            }
            _ => {}
        }
    }
    let f = real!(c"syscall"; unsafe extern "C" fn(libc::c_long, libc::c_long, libc::c_long, libc::c_long, libc::c_long, libc::c_long, libc::c_long) -> libc::c_long);
    // SAFETY: passed on.
    unsafe { f(n, a1, a2, a3, a4, a5, a6) }
}
