//! `loom::sync`.

pub mod atomic;
pub mod mpsc {
    //! `loom::sync::mpsc`.
    pub use c11check::sync::mpsc::*;
}

pub use c11check::sync::{
    Arc, Barrier, BarrierWaitResult, Condvar, LockResult, Mutex, MutexGuard, PoisonError, RwLock,
    RwLockReadGuard, RwLockWriteGuard, TryLockError, TryLockResult, WaitTimeoutResult, Weak,
};

use c11check::sync::atomic::{AtomicBool, Ordering};

/// loom's `Notify`: `wait` returns once `notify` has been called (and
/// consumes it). Waiting is a loop the model cuts.
#[derive(Debug, Default)]
pub struct Notify {
    notified: AtomicBool,
}

impl Notify {
    pub fn new() -> Notify {
        Notify::default()
    }
    #[track_caller]
    pub fn notify(&self) {
        self.notified.store(true, Ordering::Release);
    }
    #[track_caller]
    pub fn wait(&self) {
        loop {
            if self
                .notified
                .compare_exchange(true, false, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
            c11check::thread::yield_now();
        }
    }
}
