//! `Mutex` under the model: lock and unlock are events on the mutex's
//! location (an acquire compare-exchange and a release store), so they order
//! the critical sections exactly as a real lock does.

use c11check_model::{Action, BlockReason, MemOrder};
use c11check_runtime::{access, block, LocCell};
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

/// `std::sync::Mutex` under the model, with std's poisoning.
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized> {
    cell: LocCell,
    poisoned: std::sync::atomic::AtomicBool,
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
}

impl<T> Mutex<T> {
    pub const fn new(t: T) -> Self {
        Mutex {
            cell: LocCell::new(),
            poisoned: std::sync::atomic::AtomicBool::new(false),
            data: UnsafeCell::new(t),
        }
    }
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = self.poisoned.load(std::sync::atomic::Ordering::Relaxed);
        let t = self.data.into_inner();
        if poisoned {
            Err(PoisonError::new(t))
        } else {
            Ok(t)
        }
    }
}

impl<T: ?Sized> Mutex<T> {
    fn try_acquire(&self) -> bool {
        access(
            &self.cell,
            0,
            |loc| Action::Cas {
                loc,
                expected: 0,
                new: 1,
                success: MemOrder::Acquire,
                failure: MemOrder::Relaxed,
                weak: false,
            },
            Location::caller(),
        )
        .ok
    }

    fn guard(&self) -> LockResult<MutexGuard<'_, T>> {
        let g = MutexGuard {
            lock: self,
            panicking: std::thread::panicking(),
        };
        if self.poisoned.load(std::sync::atomic::Ordering::Relaxed) {
            Err(PoisonError::new(g))
        } else {
            Ok(g)
        }
    }

    /// Takes the lock. If the explorer makes this acquisition read the lock as
    /// held, the thread waits: that execution stops here, and the one where
    /// it reads the holder's release is explored on its own.
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        if !self.try_acquire() {
            block(BlockReason::LockHeld, Location::caller());
        }
        self.guard()
    }

    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        if !self.try_acquire() {
            return Err(TryLockError::WouldBlock);
        }
        self.guard().map_err(TryLockError::Poisoned)
    }

    pub fn is_poisoned(&self) -> bool {
        self.poisoned.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn clear_poison(&self) {
        self.poisoned
            .store(false, std::sync::atomic::Ordering::Relaxed)
    }
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        let poisoned = self.is_poisoned();
        let t = self.data.get_mut();
        if poisoned {
            Err(PoisonError::new(t))
        } else {
            Ok(t)
        }
    }

    #[track_caller]
    fn unlock(&self) {
        access(
            &self.cell,
            0,
            |loc| Action::Store {
                loc,
                ord: MemOrder::Release,
                val: 0,
            },
            Location::caller(),
        );
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
            self.lock
                .poisoned
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if c11check_runtime::in_model() {
            self.lock.unlock();
        }
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}
