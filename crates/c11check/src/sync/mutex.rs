//! `Mutex` under the model: lock and unlock are events on the mutex's
//! location (an acquire compare-exchange and a release store), so they order
//! the critical sections exactly as a real lock does.

use c11check_runtime::{locks, LocCell};
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

/// A lock's poison flag. It holds the execution in which the lock was
/// poisoned, so a poisoned `static` lock is healthy again in the next one.
#[derive(Debug, Default)]
pub(crate) struct Poison(std::sync::atomic::AtomicU32);

impl Poison {
    pub(crate) const fn new() -> Self {
        Poison(std::sync::atomic::AtomicU32::new(0))
    }
    pub(crate) fn get(&self) -> bool {
        c11check_runtime::in_model()
            && self.0.load(std::sync::atomic::Ordering::Relaxed) == c11check_runtime::generation()
    }
    pub(crate) fn set(&self) {
        if c11check_runtime::in_model() {
            self.0.store(
                c11check_runtime::generation(),
                std::sync::atomic::Ordering::Relaxed,
            );
        }
    }
    pub(crate) fn clear(&self) {
        self.0.store(0, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `std::sync::Mutex` under the model, with std's poisoning.
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized> {
    cell: LocCell,
    poisoned: Poison,
    data: UnsafeCell<T>,
}

// SAFETY: as std's Mutex: the lock (modelled) gives exclusive access to `data`.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

/// The guard of a locked [`Mutex`].
pub struct MutexGuard<'a, T: ?Sized> {
    lock: &'a Mutex<T>,
    panicking: bool,
    /// Where the lock was taken: reports show the release there (a guard's
    /// drop has no caller to point at).
    site: c11check_runtime::Site,
}

impl<T> Mutex<T> {
    /// Makes a new one, as `std`'s `new` does.
    #[track_caller]
    pub const fn new(t: T) -> Self {
        Mutex {
            cell: LocCell::described("Mutex", c11check_runtime::Site::caller()),
            poisoned: Poison::new(),
            data: UnsafeCell::new(t),
        }
    }
    /// Consumes this and returns the value inside, as `std`'s `into_inner` does.
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = self.poisoned.get();
        let t = self.data.into_inner();
        if poisoned {
            Err(PoisonError::new(t))
        } else {
            Ok(t)
        }
    }
}

impl<T: ?Sized> Mutex<T> {
    #[track_caller]
    fn guard(&self) -> LockResult<MutexGuard<'_, T>> {
        let g = MutexGuard {
            lock: self,
            panicking: std::thread::panicking(),
            site: c11check_runtime::Site::caller(),
        };
        if self.poisoned.get() {
            Err(PoisonError::new(g))
        } else {
            Ok(g)
        }
    }

    /// Takes the lock. The exhaustive explorer runs the acquisition only once
    /// the lock is free; if it finds the lock held (only when no other thread
    /// can run: a deadlock), the thread waits, and the execution stops there.
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        locks::lock(&self.cell, c11check_runtime::Site::caller());
        self.guard()
    }

    /// Takes the lock if it is free, else returns `WouldBlock` at once; the model explores both outcomes.
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        if !locks::try_lock(&self.cell, c11check_runtime::Site::caller()) {
            return Err(TryLockError::WouldBlock);
        }
        self.guard().map_err(TryLockError::Poisoned)
    }

    /// Whether a thread panicked while holding this, as in `std`.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.get()
    }
    /// Clears the poisoned flag, as in `std`.
    pub fn clear_poison(&self) {
        self.poisoned.clear()
    }
    /// Exclusive access to the value through `&mut self` (no synchronisation needed), as in `std`.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        let poisoned = self.is_poisoned();
        let t = self.data.get_mut();
        if poisoned {
            Err(PoisonError::new(t))
        } else {
            Ok(t)
        }
    }

    fn unlock(&self, site: c11check_runtime::Site) {
        locks::unlock(&self.cell, site);
    }
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// The mutex this guard holds (for `Condvar`).
    pub(crate) fn mutex(&self) -> &'a Mutex<T> {
        self.lock
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves the modelled lock is held by this thread.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; the guard is borrowed mutably.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        if !self.panicking && std::thread::panicking() {
            self.lock.poisoned.set();
        }
        if c11check_runtime::in_model() {
            self.lock.unlock(self.site);
        }
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}
