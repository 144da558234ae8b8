//! `std::sync` under the model.

pub mod atomic;
mod condvar;
pub mod mpsc;
mod mutex;
mod once;
mod rwlock;

pub use condvar::{Barrier, BarrierWaitResult, Condvar, WaitTimeoutResult};
pub use mutex::{Mutex, MutexGuard};
pub use once::{LazyLock, Once, OnceLock, OnceState};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

mod arc;
pub use arc::{Arc, Weak};
