//! POSIX semaphores (`sem_t`): a count taken and given as the runtime's
//! reader-writer lock takes its shares (`c11check_runtime::locks::take`,
//! `give`): `sem_wait` takes one with acquire, waiting (as at a lock, no
//! execution of its own) while the count is 0; `sem_post` gives one back
//! with a release `fetch_add`, so every post happens before the wait that
//! takes what it gave. `sem_trywait` fails with `EAGAIN` where the count
//! is 0, a timed wait either times out or waits (both explored). Named
//! semaphores (`sem_open`) are libc's.

use crate::library::sync::{acquire_shares, Acquire};
use crate::memory;
use c11check_model::{Action, MemOrder, Value};
use c11check_runtime::{access, Site};
use std::ffi::{c_int, c_uint};

/// Sets the calling thread's `errno` and returns -1, as the `sem_*` calls
/// report errors.
fn fail(errno: c_int) -> c_int {
    // SAFETY: this thread's errno.
    unsafe { *libc::__errno_location() = errno };
    -1
}

fn init(sem: usize, value: Value, site: Site) -> c_int {
    memory::begin(site);
    let cell = memory::lock_cell(sem);
    memory::internal(|| {
        access(
            cell,
            value,
            |loc| Action::Store {
                loc,
                ord: MemOrder::Release,
                val: value,
            },
            site,
        )
    });
    0
}

fn wait(sem: usize, how: Acquire, site: Site) -> c_int {
    memory::begin(site);
    match memory::internal(|| acquire_shares(sem, 0, 1, how, site)) {
        0 => 0,
        libc::EBUSY => fail(libc::EAGAIN),
        e => fail(e),
    }
}

fn post(sem: usize, site: Site) -> c_int {
    memory::begin(site);
    memory::internal(|| c11check_runtime::locks::give(memory::lock_cell(sem), 0, 1, site));
    0
}

fn get_value(sem: usize, out: *mut c_int, site: Site) -> c_int {
    memory::begin(site);
    let cell = memory::lock_cell(sem);
    let v = memory::internal(|| {
        access(
            cell,
            0,
            |loc| Action::Load {
                loc,
                ord: MemOrder::Relaxed,
            },
            site,
        )
        .val
    });
    if !out.is_null() {
        // SAFETY: the program's pointer for the value.
        unsafe { *out = v as c_int };
    }
    0
}

extern "C" fn sem_init_impl(
    sem: *mut libc::sem_t,
    shared: c_int,
    value: c_uint,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !memory::program_call(pc) {
        passed_on!(c"sem_init"; fn(*mut libc::sem_t, c_int, c_uint) -> c_int, sem, shared, value);
    }
    init(sem as usize, value as Value, memory::site(pc))
}
with_pc!(sem_init(s: *mut libc::sem_t, shared: c_int, value: c_uint) -> c_int, "rcx", sem_init_impl);

extern "C" fn sem_wait_impl(sem: *mut libc::sem_t, pc: usize) -> c_int {
    runtime_entry!();
    if !memory::program_call(pc) {
        passed_on!(c"sem_wait"; fn(*mut libc::sem_t) -> c_int, sem);
    }
    wait(sem as usize, Acquire::Wait, memory::site(pc))
}
with_pc!(sem_wait(s: *mut libc::sem_t) -> c_int, "rsi", sem_wait_impl);

extern "C" fn sem_trywait_impl(sem: *mut libc::sem_t, pc: usize) -> c_int {
    runtime_entry!();
    if !memory::program_call(pc) {
        passed_on!(c"sem_trywait"; fn(*mut libc::sem_t) -> c_int, sem);
    }
    wait(sem as usize, Acquire::Try, memory::site(pc))
}
with_pc!(sem_trywait(s: *mut libc::sem_t) -> c_int, "rsi", sem_trywait_impl);

extern "C" fn sem_timedwait_impl(
    sem: *mut libc::sem_t,
    t: *const libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !memory::program_call(pc) {
        passed_on!(c"sem_timedwait"; fn(*mut libc::sem_t, *const libc::timespec) -> c_int, sem, t);
    }
    wait(sem as usize, Acquire::Timed, memory::site(pc))
}
with_pc!(sem_timedwait(s: *mut libc::sem_t, t: *const libc::timespec) -> c_int, "rdx", sem_timedwait_impl);

extern "C" fn sem_clockwait_impl(
    sem: *mut libc::sem_t,
    clock: libc::clockid_t,
    t: *const libc::timespec,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !memory::program_call(pc) {
        passed_on!(c"sem_clockwait"; fn(*mut libc::sem_t, libc::clockid_t, *const libc::timespec) -> c_int, sem, clock, t);
    }
    wait(sem as usize, Acquire::Timed, memory::site(pc))
}
with_pc!(sem_clockwait(s: *mut libc::sem_t, c: libc::clockid_t, t: *const libc::timespec) -> c_int, "rcx", sem_clockwait_impl);

extern "C" fn sem_post_impl(sem: *mut libc::sem_t, pc: usize) -> c_int {
    runtime_entry!();
    if !memory::program_call(pc) {
        passed_on!(c"sem_post"; fn(*mut libc::sem_t) -> c_int, sem);
    }
    post(sem as usize, memory::site(pc))
}
with_pc!(sem_post(s: *mut libc::sem_t) -> c_int, "rsi", sem_post_impl);

extern "C" fn sem_getvalue_impl(sem: *mut libc::sem_t, out: *mut c_int, pc: usize) -> c_int {
    runtime_entry!();
    if !memory::program_call(pc) {
        passed_on!(c"sem_getvalue"; fn(*mut libc::sem_t, *mut c_int) -> c_int, sem, out);
    }
    get_value(sem as usize, out, memory::site(pc))
}
with_pc!(sem_getvalue(s: *mut libc::sem_t, out: *mut c_int) -> c_int, "rdx", sem_getvalue_impl);

extern "C" fn sem_destroy_impl(sem: *mut libc::sem_t, pc: usize) -> c_int {
    runtime_entry!();
    if !memory::program_call(pc) {
        passed_on!(c"sem_destroy"; fn(*mut libc::sem_t) -> c_int, sem);
    }
    0
}
with_pc!(sem_destroy(s: *mut libc::sem_t) -> c_int, "rsi", sem_destroy_impl);
