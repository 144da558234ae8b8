//! Calls that wait for files, sockets and pipes (`poll`, `ppoll`,
//! `select`, `pselect`, `epoll_wait`, `epoll_pwait`): all modelled threads
//! run on one OS thread, so one that really blocked would stop them all.
//! Each call looks without waiting (libc's call with a zero time-out);
//! when nothing is ready, a finite time-out has passed (the call returns
//! 0, as when it times out, after a yield) while an endless wait sleeps as
//! at `usleep` (the other threads run: one of them may write to the pipe)
//! and looks again. Each look of an endless wait is a load of one
//! location (no value of the program's), so that a wait whose looks keep
//! finding nothing is cut as any wait loop is, instead of turning without
//! an operation (the exhaustive explorer would never get the thread back).
//! The files and sockets themselves are the kernel's, outside the model:
//! the exhaustive explorer runs a program again for each execution and does
//! not see a write to a pipe as an event, so threads that talk through
//! pipes or sockets are checked with random runs (`--random N`), where each
//! execution runs once; in an exploration, an endless wait its looks never
//! end cuts the execution (as a timed wait's that nothing ends: not a bug).

use crate::library::sync::sleep_now;
use crate::memory;
use c11check_model::{Action, MemOrder};
use c11check_runtime::{access, LocCell, Site};
use std::ffi::c_int;

/// How long a call may wait.
#[derive(Clone, Copy)]
enum Wait {
    /// A zero time-out: it only looks.
    No,
    Finite,
    Forever,
}

/// Runs `look` (libc's call, not waiting) until something is ready or it
/// fails, sleeping between looks; a finite wait ends after one sleep.
fn wait_for(site: Site, kept: u64, wait: Wait, mut look: impl FnMut() -> c_int) -> c_int {
    let mut waiting = false;
    loop {
        let r = look();
        if r != 0 {
            if waiting {
                c11check_runtime::set_waiting(None);
            }
            return r;
        }
        match wait {
            Wait::No => return 0,
            Wait::Finite => {
                // The time-out passes: a yield that is no wait-loop turn
                // (two time-outs in a row are not a thread stuck).
                memory::flush_pending();
                c11check_runtime::yielded(site);
                return 0;
            }
            Wait::Forever => {
                // What the kernel may end: a wait nothing in the program
                // ends is not reported (the execution is cut there).
                if !waiting {
                    c11check_runtime::set_waiting(Some(c11check_runtime::TIMED_WAIT));
                    waiting = true;
                }
                look_marker(site);
                sleep_now(site, Some(kept));
            }
        }
    }
}

/// The location each look of an endless wait loads (see the module doc).
static WAIT_MARKER: LocCell = LocCell::new();

fn look_marker(site: Site) {
    memory::internal(|| {
        access(
            &WAIT_MARKER,
            0,
            |loc| Action::Load {
                loc,
                ord: MemOrder::Relaxed,
            },
            site,
        )
    });
}

fn wait_ms(ms: c_int) -> Wait {
    match ms {
        0 => Wait::No,
        t if t < 0 => Wait::Forever,
        _ => Wait::Finite,
    }
}

/// How long a time-out given as a pointer waits: null is forever; `zero`
/// says whether the time-out it points to is zero.
fn wait_pointed<T>(t: *const T, zero: impl FnOnce(&T) -> bool) -> Wait {
    if t.is_null() {
        return Wait::Forever;
    }
    // SAFETY: the program's time-out.
    if zero(unsafe { &*t }) {
        Wait::No
    } else {
        Wait::Finite
    }
}

fn wait_timespec(t: *const libc::timespec) -> Wait {
    wait_pointed(t, |t| t.tv_sec == 0 && t.tv_nsec == 0)
}

fn wait_timeval(t: *const libc::timeval) -> Wait {
    wait_pointed(t, |t| t.tv_sec == 0 && t.tv_usec == 0)
}

extern "C" fn poll_impl(fds: *mut libc::pollfd, n: libc::nfds_t, ms: c_int, pc: usize) -> c_int {
    runtime_entry!();
    let kept = crate::process::caller_state();
    let real =
        real!(c"poll"; unsafe extern "C" fn(*mut libc::pollfd, libc::nfds_t, c_int) -> c_int);
    if !memory::program_call(pc) {
        // SAFETY: passed on.
        return unsafe { real(fds, n, ms) };
    }
    let site = memory::site(pc);
    memory::begin(site);
    // SAFETY: the program's descriptors, looked at without waiting.
    wait_for(site, kept, wait_ms(ms), || unsafe { real(fds, n, 0) })
}
with_pc!(poll(fds: *mut libc::pollfd, n: libc::nfds_t, ms: c_int) -> c_int, "rcx", poll_impl);

extern "C" fn ppoll_impl(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    t: *const libc::timespec,
    mask: *const libc::sigset_t,
    pc: usize,
) -> c_int {
    runtime_entry!();
    let kept = crate::process::caller_state();
    let real = real!(c"ppoll"; unsafe extern "C" fn(*mut libc::pollfd, libc::nfds_t, *const libc::timespec, *const libc::sigset_t) -> c_int);
    if !memory::program_call(pc) {
        // SAFETY: passed on.
        return unsafe { real(fds, n, t, mask) };
    }
    let site = memory::site(pc);
    memory::begin(site);
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: as in `poll`.
    wait_for(site, kept, wait_timespec(t), || unsafe {
        real(fds, n, &zero, mask)
    })
}
with_pc!(ppoll(fds: *mut libc::pollfd, n: libc::nfds_t, t: *const libc::timespec, mask: *const libc::sigset_t) -> c_int, "r8", ppoll_impl);

/// `select`'s three sets, kept so that each look starts from the
/// program's (a look overwrites them with what is ready).
struct Sets {
    given: [Option<libc::fd_set>; 3],
    ptrs: [*mut libc::fd_set; 3],
}

impl Sets {
    fn new(ptrs: [*mut libc::fd_set; 3]) -> Sets {
        // SAFETY: the program's sets, or null.
        let given = ptrs.map(|p| (!p.is_null()).then(|| unsafe { *p }));
        Sets { given, ptrs }
    }
    fn reset(&self) {
        for (p, g) in self.ptrs.iter().zip(&self.given) {
            if let Some(g) = g {
                // SAFETY: as above.
                unsafe { **p = *g };
            }
        }
    }
}

extern "C" fn select_impl(
    n: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    t: *mut libc::timeval,
    pc: usize,
) -> c_int {
    runtime_entry!();
    let kept = crate::process::caller_state();
    let real = real!(c"select"; unsafe extern "C" fn(c_int, *mut libc::fd_set, *mut libc::fd_set, *mut libc::fd_set, *mut libc::timeval) -> c_int);
    if !memory::program_call(pc) {
        // SAFETY: passed on.
        return unsafe { real(n, r, w, e, t) };
    }
    let site = memory::site(pc);
    memory::begin(site);
    let sets = Sets::new([r, w, e]);
    let wait = wait_timeval(t);
    let got = wait_for(site, kept, wait, || {
        sets.reset();
        let mut zero = libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        };
        // SAFETY: the program's sets, looked at without waiting.
        unsafe { real(n, r, w, e, &mut zero) }
    });
    if got == 0 && !t.is_null() {
        // Linux's select leaves the time not slept: none.
        // SAFETY: the program's time-out.
        unsafe {
            (*t).tv_sec = 0;
            (*t).tv_usec = 0;
        }
    }
    got
}
with_pc!(select(n: c_int, r: *mut libc::fd_set, w: *mut libc::fd_set, e: *mut libc::fd_set, t: *mut libc::timeval) -> c_int, "r9", select_impl);

extern "C" fn epoll_wait_impl(
    ep: c_int,
    events: *mut libc::epoll_event,
    max: c_int,
    ms: c_int,
    pc: usize,
) -> c_int {
    runtime_entry!();
    let kept = crate::process::caller_state();
    let real = real!(c"epoll_wait"; unsafe extern "C" fn(c_int, *mut libc::epoll_event, c_int, c_int) -> c_int);
    if !memory::program_call(pc) {
        // SAFETY: passed on.
        return unsafe { real(ep, events, max, ms) };
    }
    let site = memory::site(pc);
    memory::begin(site);
    // SAFETY: as in `poll`.
    wait_for(site, kept, wait_ms(ms), || unsafe {
        real(ep, events, max, 0)
    })
}
with_pc!(epoll_wait(ep: c_int, events: *mut libc::epoll_event, max: c_int, ms: c_int) -> c_int, "r8", epoll_wait_impl);
