//! Time and pseudo-random numbers the same in every execution: an execution
//! must be a function of its schedule and reads-from choices, or its replay
//! differs from it (a skiplist seeding its node heights from `time(0)`
//! would make every execution a different program).
//!
//! The program's clock reads (`time`, `clock_gettime`, `gettimeofday`)
//! see a clock that starts at one fixed instant, [`START_SECS`], in every
//! execution of every run, and advances one microsecond per read (time does
//! not pass in the model: sleeping is yielding). Not the real start time: a
//! replay is a new process, and a program whose data depends on the time
//! (a database stamping its files) would make it another execution. `rand`/`random` start from glibc's default seed
//! in every execution (`srand`/`srandom` reseed them). Calls from libc and
//! the runtime get the real ones.

use crate::memory::{self, program_call};
use std::ffi::{c_int, c_long, c_uint};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Where the program's clock starts: 2026-01-01 00:00:00 UTC, in seconds
/// since the epoch.
pub const START_SECS: u64 = 1_767_225_600;
/// Clock reads in this execution.
static TICKS: AtomicU64 = AtomicU64::new(0);
/// The state of `rand`/`random` in this execution.
static RAND_STATE: AtomicU64 = AtomicU64::new(1);

/// Starts the clock and the generator afresh (a new execution).
pub fn reset() {
    TICKS.store(0, Relaxed);
    RAND_STATE.store(1, Relaxed);
}

/// The next reading of the execution's clock, in nanoseconds.
fn now_ns() -> u64 {
    START_SECS * 1_000_000_000 + TICKS.fetch_add(1, Relaxed) * 1_000
}

unsafe fn real_clock_gettime(clock: libc::clockid_t, ts: *mut libc::timespec) -> c_int {
    let f = real!(c"clock_gettime"; unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> c_int);
    // SAFETY: passed on.
    unsafe { f(clock, ts) }
}

/// Writes `value` at `p` as the program's store.
fn store<T>(p: *mut T, value: T, pc: usize) {
    // SAFETY: the program passes where it wants the result.
    unsafe { p.write(value) };
    memory::runtime_stored(
        p as usize,
        p as usize + std::mem::size_of::<T>(),
        memory::site(pc),
    );
}

extern "C" fn time_impl(t: *mut libc::time_t, pc: usize) -> libc::time_t {
    runtime_entry!();
    if !program_call(pc) {
        passed_on!(c"time"; fn(*mut libc::time_t) -> libc::time_t, t);
    }
    memory::begin(memory::site(pc));
    let secs = (now_ns() / 1_000_000_000) as libc::time_t;
    if !t.is_null() {
        store(t, secs, pc);
    }
    secs
}
with_pc!(time(t: *mut libc::time_t) -> libc::time_t, "rsi", time_impl);

extern "C" fn clock_gettime_impl(
    clock: libc::clockid_t,
    ts: *mut libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !program_call(pc) {
        // SAFETY: passed on.
        return unsafe { real_clock_gettime(clock, ts) };
    }
    memory::begin(memory::site(pc));
    let ns = now_ns();
    let value = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as c_long,
    };
    store(ts, value, pc);
    0
}
with_pc!(clock_gettime(c: libc::clockid_t, ts: *mut libc::timespec) -> c_int, "rdx", clock_gettime_impl);

extern "C" fn gettimeofday_impl(tv: *mut libc::timeval, tz: *mut libc::c_void, pc: usize) -> c_int {
    runtime_entry!();
    if !program_call(pc) {
        passed_on!(c"gettimeofday"; fn(*mut libc::timeval, *mut libc::c_void) -> c_int, tv, tz);
    }
    memory::begin(memory::site(pc));
    let ns = now_ns();
    if !tv.is_null() {
        let value = libc::timeval {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_usec: ((ns % 1_000_000_000) / 1_000) as libc::suseconds_t,
        };
        store(tv, value, pc);
    }
    0
}
with_pc!(gettimeofday(tv: *mut libc::timeval, tz: *mut libc::c_void) -> c_int, "rdx", gettimeofday_impl);

/// The next number of the execution's generator (31 bits, as `rand`'s).
fn next_rand() -> c_int {
    // A 64-bit linear congruential step (Knuth's MMIX constants); the high
    // bits are the result.
    let s = RAND_STATE
        .load(Relaxed)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    RAND_STATE.store(s, Relaxed);
    (s >> 33) as c_int
}

extern "C" fn rand_impl(pc: usize) -> c_int {
    runtime_entry!();
    if !program_call(pc) {
        passed_on!(c"rand"; fn() -> c_int,);
    }
    next_rand()
}
with_pc!(rand() -> c_int, "rdi", rand_impl);

extern "C" fn random_impl(pc: usize) -> c_long {
    runtime_entry!();
    if !program_call(pc) {
        passed_on!(c"random"; fn() -> c_long,);
    }
    next_rand() as c_long
}
with_pc!(random() -> c_long, "rdi", random_impl);

extern "C" fn srand_impl(seed: c_uint, pc: usize) {
    runtime_entry!();
    if !program_call(pc) {
        let f = real!(c"srand"; unsafe extern "C" fn(c_uint));
        // SAFETY: passed on.
        unsafe { f(seed) };
        return;
    }
    RAND_STATE.store(seed as u64, Relaxed);
}
with_pc!(srand(s: c_uint), "rsi", srand_impl);
with_pc!(srandom(s: c_uint), "rsi", srand_impl);
