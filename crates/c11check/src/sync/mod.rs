//! `std::sync` under the model.

pub mod atomic;
mod mutex;

pub use mutex::{Mutex, MutexGuard};
pub use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

mod arc;
pub use arc::{Arc, Weak};
