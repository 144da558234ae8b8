//! The modelled one-time initialization, written once for every front end
//! (the Rust API's `Once`, `OnceLock`, `LazyLock`; `pthread_once`,
//! `call_once`, C++'s `std::call_once`): the callers take the once's lock
//! in turn and the first one to find it not done runs the routine, so the
//! routine happens before every caller's return, and a caller that finds
//! another running it waits as at a lock (no spin, no execution of its
//! own). Whether it is done is the front end's: a modelled state the Rust
//! API reads without the lock (`is_completed`), a per-execution flag for C.

use crate::{locks, LocCell, Site};

/// Runs `body` holding the lock in `lock`; `body` decides whether the
/// routine still has to run and runs it. The lock is given back also when
/// `body` unwinds (a panicking initializer: the front end marks it
/// poisoned first).
pub fn run_locked<R>(lock: &LocCell, site: Site, body: impl FnOnce() -> R) -> R {
    struct Unlock<'a>(&'a LocCell, Site);
    impl Drop for Unlock<'_> {
        fn drop(&mut self) {
            locks::unlock(self.0, self.1);
        }
    }
    locks::lock(lock, site);
    let _unlock = Unlock(lock, site);
    body()
}
