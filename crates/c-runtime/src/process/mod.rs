//! The process around the program: whether `main` has been taken over,
//! each modelled thread's thread-local storage ([`tls`]), and the copy of
//! the program's globals each execution starts from ([`snapshot`]).

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
