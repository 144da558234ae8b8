//! `RwLock` under the model: the runtime's reader-writer lock (a semaphore
//! of `PERMITS` shares, see `c11check_runtime::locks`), with std's API and
//! poisoning.

use c11check_model::MemOrder;
use c11check_runtime::locks::{self, PERMITS};
use c11check_runtime::LocCell;
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

/// `std::sync::RwLock` under the model, with std's poisoning.
#[derive(Debug, Default)]
pub struct RwLock<T: ?Sized> {
    cell: LocCell,
    poison: super::mutex::Poison,
    data: UnsafeCell<T>,
}

// SAFETY: as std's RwLock.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: as std's RwLock.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

/// A shared hold of an [`RwLock`]; released when dropped.
pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
}

/// An exclusive hold of an [`RwLock`]; released when dropped.
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    panicking: bool,
}

impl<T> RwLock<T> {
    /// Makes a new one, as `std`'s `new` does.
    #[track_caller]
    pub const fn new(t: T) -> Self {
        RwLock {
            cell: LocCell::described("RwLock", c11check_runtime::Site::caller()),
            poison: super::mutex::Poison::new(),
            data: UnsafeCell::new(t),
        }
    }
    /// Consumes this and returns the value inside, as `std`'s `into_inner` does.
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = self.poison.get();
        let t = self.data.into_inner();
        if poisoned {
            Err(PoisonError::new(t))
        } else {
            Ok(t)
        }
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Takes `n` shares: waits for them when `waits`, else one attempt.
    #[track_caller]
    fn take(&self, n: i64, waits: bool) -> bool {
        let site = c11check_runtime::Site::caller();
        locks::take(&self.cell, PERMITS, n, MemOrder::Acquire, waits, site)
    }

    /// Gives `n` shares back (a guard's drop: no caller to point at, the
    /// release shows here).
    fn give(&self, n: i64) {
        let site = c11check_runtime::Site::caller();
        locks::give(&self.cell, PERMITS, n, site);
    }

    fn poisoned<G>(&self, g: G) -> LockResult<G> {
        if self.poison.get() {
            Err(PoisonError::new(g))
        } else {
            Ok(g)
        }
    }

    /// Shared access; waits while a writer holds it.
    #[track_caller]
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        self.take(1, true);
        self.poisoned(RwLockReadGuard { lock: self })
    }

    /// Takes a shared lock if no writer holds it, else returns `WouldBlock` at once.
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        if !self.take(1, false) {
            return Err(TryLockError::WouldBlock);
        }
        self.poisoned(RwLockReadGuard { lock: self })
            .map_err(TryLockError::Poisoned)
    }

    /// Exclusive access; waits while anyone holds it.
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        self.take(PERMITS, true);
        self.poisoned(RwLockWriteGuard {
            lock: self,
            panicking: std::thread::panicking(),
        })
    }

    /// Takes the lock exclusively if nobody holds it, else returns `WouldBlock` at once.
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        if !self.take(PERMITS, false) {
            return Err(TryLockError::WouldBlock);
        }
        self.poisoned(RwLockWriteGuard {
            lock: self,
            panicking: std::thread::panicking(),
        })
        .map_err(TryLockError::Poisoned)
    }

    /// Whether a thread panicked while holding this, as in `std`.
    pub fn is_poisoned(&self) -> bool {
        self.poison.get()
    }
    /// Clears the poisoned flag, as in `std`.
    pub fn clear_poison(&self) {
        self.poison.clear()
    }
    /// Exclusive access to the value through `&mut self` (no synchronisation needed), as in `std`.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        let poisoned = self.poison.get();
        let t = self.data.get_mut();
        if poisoned {
            Err(PoisonError::new(t))
        } else {
            Ok(t)
        }
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves a read lock is held.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves the write lock is held.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as above; the guard is borrowed mutably.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        if c11check_runtime::in_model() {
            self.lock.give(1);
        }
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        if !self.panicking && std::thread::panicking() {
            self.lock.poison.set();
        }
        if c11check_runtime::in_model() {
            self.lock.give(PERMITS);
        }
    }
}
