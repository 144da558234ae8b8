//! A spinlock built on `compare_exchange_weak`, correct and with the bug of
//! taking the lock with `Relaxed`: the critical sections then do not
//! synchronize, and the counter they share is accessed in a data race.
//!
//! `cargo run --release -p c11check --example spinlock`

use c11check::cell::UnsafeCell;
use c11check::model::{Builder, Report, Summary};
use c11check::sync::atomic::{AtomicBool, Ordering};
use c11check::thread;

pub struct SpinLock<T> {
    locked: AtomicBool,
    data: UnsafeCell<T>,
    acquire: Ordering,
}

// SAFETY: the lock serializes access to `data` (which is what the model checks).
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    pub fn new(data: T, acquire: Ordering) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            data: UnsafeCell::new(data),
            acquire,
        }
    }
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        while self
            .locked
            .compare_exchange_weak(false, true, self.acquire, Ordering::Relaxed)
            .is_err()
        {
            c11check::hint::spin_loop();
        }
        let r = self.data.with_mut(|p| f(unsafe { &mut *p }));
        self.locked.store(false, Ordering::Release);
        r
    }
}

/// Two threads increment a counter under the lock.
pub fn check(acquire: Ordering) -> Result<Summary, Box<Report>> {
    check_with(Builder::new(), acquire)
}

/// [`check`] with the given settings (a replay, for instance).
pub fn check_with(b: Builder, acquire: Ordering) -> Result<Summary, Box<Report>> {
    b.explore(move || {
        let l = SpinLock::new(0usize, acquire);
        thread::scope(|s| {
            s.spawn(|| l.with(|n| *n += 1));
            l.with(|n| *n += 1);
        });
        assert_eq!(l.with(|n| *n), 2);
    })
}

#[allow(dead_code)]
fn main() {
    match check(Ordering::Acquire) {
        Ok(s) => println!(
            "correct spinlock: no bug in {} executions ({} blocked)",
            s.stats.executions, s.blocked
        ),
        Err(r) => println!("correct spinlock: unexpected report\n{r}"),
    }
    match check(Ordering::Relaxed) {
        Ok(_) => println!("buggy spinlock: the bug was not found"),
        Err(r) => println!("buggy spinlock (lock taken with Relaxed):\n{r}"),
    }
}
