//! C11's `<threads.h>`: glibc implements it on its internal pthread
//! functions, out of this library's reach, so each function is defined
//! here on the modelled ones. `mtx_init`, `cnd_init` and their `destroy`
//! stay glibc's (they only write the object, which is laid out as its
//! pthread counterpart and whose kind the lock functions read).

use crate::library::pthread::{
    end_thread, join_thread, lock_mutex, spawn_thread, thread_handle, unlock_mutex,
};
use crate::library::sync::{
    cond_broadcast, cond_signal, cond_wait, once, sleep_now, Acquire, WaitKind,
};
use crate::memory::{self, modelled};

use std::ffi::{c_int, c_void};

const THRD_SUCCESS: c_int = 0;
const THRD_BUSY: c_int = 1;
const THRD_ERROR: c_int = 2;
const THRD_TIMEDOUT: c_int = 4;

type ThrdStart = unsafe extern "C-unwind" fn(*mut c_void) -> c_int;
type Mtx = libc::pthread_mutex_t;
type Cnd = libc::pthread_cond_t;

/// The `thrd_*` result for a pthread error number.
fn result(e: c_int) -> c_int {
    match e {
        0 => THRD_SUCCESS,
        libc::EBUSY => THRD_BUSY,
        libc::ETIMEDOUT => THRD_TIMEDOUT,
        _ => THRD_ERROR,
    }
}

extern "C" fn thrd_create_impl(
    t: *mut u64,
    start: ThrdStart,
    arg: *mut c_void,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"thrd_create"; fn(*mut u64, ThrdStart, *mut c_void) -> c_int, t, start, arg);
    }
    let arg = arg as usize;
    // SAFETY: the program's start routine, with its argument.
    spawn_thread(
        t,
        move || unsafe { start(arg as *mut c_void) } as u32 as usize,
        memory::site(pc),
    );
    THRD_SUCCESS
}
with_pc!(thrd_create(t: *mut u64, s: ThrdStart, a: *mut c_void) -> c_int, "rcx", thrd_create_impl);

extern "C" fn thrd_join_impl(t: u64, res: *mut c_int, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"thrd_join"; fn(u64, *mut c_int) -> c_int, t, res);
    }
    let site = memory::site(pc);
    match join_thread(t, site) {
        Err(_) => THRD_ERROR,
        Ok(v) => {
            if !res.is_null() {
                // SAFETY: the program passes where to put the result.
                unsafe { *res = v as c_int };
                crate::memory::runtime_stored(res as usize, res as usize + 4, site);
            }
            THRD_SUCCESS
        }
    }
}
with_pc!(thrd_join(t: u64, r: *mut c_int) -> c_int, "rdx", thrd_join_impl);

/// The calling thread's handle.
#[unsafe(no_mangle)]
pub extern "C" fn thrd_current() -> u64 {
    runtime_entry!();
    if !modelled() {
        let f = real!(c"thrd_current"; unsafe extern "C" fn() -> u64);
        // SAFETY: no arguments.
        return unsafe { f() };
    }
    thread_handle(crate::process::tls::current_thread())
}

/// A detached thread runs on; nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn thrd_detach(t: u64) -> c_int {
    runtime_entry!();
    if !modelled() {
        passed_on!(c"thrd_detach"; fn(u64) -> c_int, t);
    }
    THRD_SUCCESS
}

/// Ends the calling thread with `res`.
#[unsafe(no_mangle)]
pub extern "C-unwind" fn thrd_exit(res: c_int) -> ! {
    runtime_entry!();
    if !modelled() {
        let f = real!(c"thrd_exit"; unsafe extern "C" fn(c_int) -> !);
        // SAFETY: passed on.
        unsafe { f(res) }
    }
    end_thread(res as u32 as usize)
}

extern "C" fn thrd_yield_impl(pc: usize) {
    runtime_entry!();
    if modelled() {
        sleep_now(memory::site(pc), Some(crate::process::caller_state()));
    }
}
with_pc!(thrd_yield(), "rdi", thrd_yield_impl);

extern "C" fn thrd_sleep_impl(
    d: *const libc::timespec,
    rem: *mut libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"thrd_sleep"; fn(*const libc::timespec, *mut libc::timespec) -> c_int, d, rem);
    }
    sleep_now(memory::site(pc), Some(crate::process::caller_state()));
    0
}
with_pc!(thrd_sleep(d: *const libc::timespec, r: *mut libc::timespec) -> c_int, "rdx", thrd_sleep_impl);

macro_rules! mtx_entry {
    ($name:ident, $imp:ident, $how:expr) => {
        extern "C" fn $imp(m: *mut Mtx, pc: usize) -> c_int {
            runtime_entry!();
            if !crate::memory::program_call(pc) {
                passed_on!(const_cstr!($name); fn(*mut Mtx) -> c_int, m);
            }
            result(lock_mutex(m, $how, memory::site(pc)))
        }
        with_pc!($name(m: *mut Mtx) -> c_int, "rsi", $imp);
    };
}

mtx_entry!(mtx_lock, mtx_lock_impl, Acquire::Wait);
mtx_entry!(mtx_trylock, mtx_trylock_impl, Acquire::Try);

extern "C" fn mtx_timedlock_impl(m: *mut Mtx, t: *const libc::timespec, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"mtx_timedlock"; fn(*mut Mtx, *const libc::timespec) -> c_int, m, t);
    }
    result(lock_mutex(m, Acquire::Timed, memory::site(pc)))
}
with_pc!(mtx_timedlock(m: *mut Mtx, t: *const libc::timespec) -> c_int, "rdx", mtx_timedlock_impl);

extern "C" fn mtx_unlock_impl(m: *mut Mtx, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"mtx_unlock"; fn(*mut Mtx) -> c_int, m);
    }
    result(unlock_mutex(m, memory::site(pc)))
}
with_pc!(mtx_unlock(m: *mut Mtx) -> c_int, "rsi", mtx_unlock_impl);

extern "C" fn cnd_wait_impl(c: *mut Cnd, m: *mut Mtx, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"cnd_wait"; fn(*mut Cnd, *mut Mtx) -> c_int, c, m);
    }
    result(cond_wait(
        c as usize,
        m,
        WaitKind::Untimed,
        memory::site(pc),
    ))
}
with_pc!(cnd_wait(c: *mut Cnd, m: *mut Mtx) -> c_int, "rdx", cnd_wait_impl);

extern "C" fn cnd_timedwait_impl(
    c: *mut Cnd,
    m: *mut Mtx,
    t: *const libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"cnd_timedwait"; fn(*mut Cnd, *mut Mtx, *const libc::timespec) -> c_int, c, m, t);
    }
    result(cond_wait(c as usize, m, WaitKind::Timed, memory::site(pc)))
}
with_pc!(cnd_timedwait(c: *mut Cnd, m: *mut Mtx, t: *const libc::timespec) -> c_int, "rcx", cnd_timedwait_impl);

extern "C" fn cnd_signal_impl(c: *mut Cnd, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"cnd_signal"; fn(*mut Cnd) -> c_int, c);
    }
    cond_signal(c as usize, memory::site(pc));
    THRD_SUCCESS
}
with_pc!(cnd_signal(c: *mut Cnd) -> c_int, "rsi", cnd_signal_impl);

extern "C" fn cnd_broadcast_impl(c: *mut Cnd, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        passed_on!(c"cnd_broadcast"; fn(*mut Cnd) -> c_int, c);
    }
    cond_broadcast(c as usize, memory::site(pc));
    THRD_SUCCESS
}
with_pc!(cnd_broadcast(c: *mut Cnd) -> c_int, "rsi", cnd_broadcast_impl);

extern "C" fn call_once_impl(flag: *mut c_int, f: unsafe extern "C" fn(), pc: usize) {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        let g = real!(c"call_once"; unsafe extern "C" fn(*mut c_int, unsafe extern "C" fn()));
        // SAFETY: passed on.
        unsafe { g(flag, f) };
        return;
    }
    once(flag as usize, f, memory::site(pc));
}
with_pc!(call_once(flag: *mut c_int, f: unsafe extern "C" fn()), "rdx", call_once_impl);

type Dtor = Option<unsafe extern "C" fn(*mut c_void)>;

/// Makes a thread-specific storage key (a pthread key).
///
/// # Safety
/// Called by the program, as libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tss_create(key: *mut libc::pthread_key_t, d: Dtor) -> c_int {
    runtime_entry!();
    // SAFETY: passed on.
    result(unsafe { crate::library::keys::pthread_key_create(key, d) })
}

/// The calling thread's value for `key`.
#[unsafe(no_mangle)]
pub extern "C" fn tss_get(key: libc::pthread_key_t) -> *mut c_void {
    runtime_entry!();
    crate::library::keys::pthread_getspecific(key)
}

/// Sets the calling thread's value for `key`.
///
/// # Safety
/// Called by the program, as libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tss_set(key: libc::pthread_key_t, v: *mut c_void) -> c_int {
    runtime_entry!();
    // SAFETY: passed on, as the program called it.
    result(unsafe { crate::library::keys::pthread_setspecific(key, v) })
}

/// Deletes `key`.
#[unsafe(no_mangle)]
pub extern "C" fn tss_delete(key: libc::pthread_key_t) {
    runtime_entry!();
    crate::library::keys::pthread_key_delete(key);
}
