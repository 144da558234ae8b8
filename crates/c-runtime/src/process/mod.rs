//! The process around the program: whether `main` has been taken over,
//! each modelled thread's thread-local storage ([`tls`]), and the copy of
//! the program's globals each execution starts from ([`snapshot`]), and
//! the directories it starts from as they were ([`fresh`]).

pub mod fresh;
pub mod snapshot;
pub mod tls;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Whether the exploration has started (instrumented code run before it,
/// in constructors, runs natively).
static RUNNING: AtomicBool = AtomicBool::new(false);

/// Whether `main` has been taken over and is being explored.
#[inline]
pub fn running() -> bool {
    RUNNING.load(Relaxed)
}

/// `main` has been taken over: the exploration starts.
pub fn start_running() {
    RUNNING.store(true, Relaxed);
}

/// A hash of the state the last instrumented call's caller kept across
/// it (see `with_pc!`). All modelled threads run on one OS thread, and
/// each reads it at the start of the call that set it; calls of other OS
/// threads and of the runtime itself leave it alone.
pub(crate) static mut CALLER_STATE: u64 = 0;

/// The stack pointer of the last instrumented call's caller (see
/// `with_pc!`): where its frame starts.
pub(crate) static mut CALLER_SP: usize = 0;

/// The stack pointer of the entry point now running's caller.
pub fn caller_sp() -> usize {
    // SAFETY: as `caller_state`.
    unsafe { std::ptr::addr_of!(CALLER_SP).read() }
}

/// The state left by the entry point now running (see `with_pc!`).
pub fn caller_state() -> u64 {
    // SAFETY: written by the trampoline of the call being handled, on
    // this OS thread, the only one running the program.
    unsafe { std::ptr::addr_of!(CALLER_STATE).read() }
}
