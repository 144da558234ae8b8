//! `Arc` under the model: the reference count is a modelled atomic (clones
//! are relaxed increments, drops release decrements, and the last one is
//! followed by an acquire fence, as in std), so the destructor of the shared
//! value happens after every other owner's last use.
//!
//! Clones and drops are reference-count updates (`RmwOp::RefInc/RefDec`):
//! the explorer runs one order of them per choice of the last owner, not
//! every order (which nothing in the program can tell apart). Reading the
//! count (`strong_count`, `get_mut`, `try_unwrap`, `Weak::upgrade`) makes
//! the order observable; the explorer then starts over exploring every order.

use super::atomic::{fence, Ordering, Word};
use c11check_model::{MemOrder, RmwOp, Width};
use std::cell::UnsafeCell;
use std::mem::ManuallyDrop;
use std::ops::Deref;

struct Inner<T: ?Sized> {
    strong: Word,
    value: UnsafeCell<ManuallyDrop<T>>,
}

/// `std::sync::Arc` under the model.
pub struct Arc<T: ?Sized> {
    inner: std::sync::Arc<Inner<T>>,
    /// Where this handle was made (`new`, `clone`, `upgrade`): a report
    /// shows its drop there, since a drop has no caller to point at.
    site: c11check_runtime::Site,
}

/// `std::sync::Weak` under the model.
pub struct Weak<T: ?Sized> {
    inner: std::sync::Weak<Inner<T>>,
}

// SAFETY: as std's Arc.
unsafe impl<T: ?Sized + Sync + Send> Send for Arc<T> {}
// SAFETY: as std's Arc.
unsafe impl<T: ?Sized + Sync + Send> Sync for Arc<T> {}
// SAFETY: as std's Weak.
unsafe impl<T: ?Sized + Sync + Send> Send for Weak<T> {}
// SAFETY: as std's Weak.
unsafe impl<T: ?Sized + Sync + Send> Sync for Weak<T> {}

impl<T> Arc<T> {
    /// A new shared value. Inside the model it is checked for leaks: every
    /// `Arc` made during an execution must be released by its end (values
    /// made by a `OnceLock`/`LazyLock` initializer, statics, are exempt).
    #[track_caller]
    pub fn new(value: T) -> Self {
        // The shared block is made untracked: std's own reference count,
        // which c11check does not model, decides which handle frees it
        // (the last `Weak`, say), so its free is no user's free.
        let made = c11check_runtime::Site::caller();
        let inner = c11check_runtime::alloc::untracked(|| {
            std::sync::Arc::new(Inner {
                strong: Word::new(1, Width::U64, Some(("Arc's reference count", made))),
                value: UnsafeCell::new(ManuallyDrop::new(value)),
            })
        });
        let a = Arc {
            inner,
            site: c11check_runtime::Site::caller(),
        };
        if c11check_runtime::in_model() && !super::once::initializing_static() {
            c11check_runtime::track_alloc(a.key(), "Arc", c11check_runtime::Site::caller());
        }
        a
    }
    /// The value, if this is the only owner.
    #[track_caller]
    pub fn try_unwrap(this: Self) -> Result<T, Self> {
        let site = c11check_runtime::Site::caller();
        let strong = &this.inner.strong;
        if strong
            .cas(1, 0, MemOrder::Relaxed, MemOrder::Relaxed, false, site)
            .is_err()
        {
            return Err(this);
        }
        fence(Ordering::Acquire);
        c11check_runtime::track_free(this.key());
        let this = ManuallyDrop::new(this);
        // SAFETY: the count went from 1 to 0: nobody else can reach the value,
        // and `this` is not dropped again.
        let value = unsafe { ManuallyDrop::take(&mut *this.inner.value.get()) };
        // SAFETY: `this` is wrapped in ManuallyDrop; release its allocation.
        unsafe { std::ptr::drop_in_place(&mut (*(&*this as *const Self as *mut Self)).inner) };
        Ok(value)
    }
    /// Consumes this and returns the value inside, as `std`'s `into_inner` does.
    #[track_caller]
    pub fn into_inner(this: Self) -> Option<T> {
        Arc::try_unwrap(this).ok()
    }
}

impl<T: ?Sized> Arc<T> {
    fn key(&self) -> usize {
        std::sync::Arc::as_ptr(&self.inner) as *const u8 as usize
    }
    /// A `Weak` handle to the same value.
    pub fn downgrade(this: &Self) -> Weak<T> {
        Weak {
            inner: std::sync::Arc::downgrade(&this.inner),
        }
    }
    /// Whether the two point to the same allocation.
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        std::sync::Arc::ptr_eq(&a.inner, &b.inner)
    }
    /// The number of owners: a read of the reference count, which makes the order of clones and drops observable (the model then explores every order).
    #[track_caller]
    pub fn strong_count(this: &Self) -> usize {
        let site = c11check_runtime::Site::caller();
        this.inner.strong.load(MemOrder::Acquire, site) as usize
    }
    /// Mutable access if this is the only owner.
    #[track_caller]
    pub fn get_mut(this: &mut Self) -> Option<&mut T> {
        if Arc::strong_count(this) == 1 {
            // SAFETY: the only owner; `this` is borrowed mutably.
            Some(unsafe { &mut **this.inner.value.get() })
        } else {
            None
        }
    }
    /// A pointer to the value.
    pub fn as_ptr(this: &Self) -> *const T {
        // SAFETY: the value lives as long as `this`.
        unsafe { &**this.inner.value.get() as *const T }
    }
}

impl<T: ?Sized> Deref for Arc<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the value is alive while a strong owner exists.
        unsafe { &*self.inner.value.get() }
    }
}

impl<T: ?Sized> Clone for Arc<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        let site = c11check_runtime::Site::caller();
        (self.inner.strong).rmw(RmwOp::RefInc, 1, MemOrder::Relaxed, site);
        Arc {
            inner: self.inner.clone(),
            site,
        }
    }
}

impl<T: ?Sized> Drop for Arc<T> {
    fn drop(&mut self) {
        if !c11check_runtime::in_model() {
            // Dropped outside the model (a value captured by the model's
            // closure): nothing to check; the shared value is leaked.
            return;
        }
        let site = self.site;
        if (self.inner.strong).rmw(RmwOp::RefDec, 1, MemOrder::Release, site) == 1 {
            c11check_runtime::fence(MemOrder::Acquire, site);
            c11check_runtime::track_free(self.key());
            // SAFETY: the modelled count reached zero: this is the last owner
            // in the execution, and every other owner's uses happen before.
            unsafe { ManuallyDrop::drop(&mut *self.inner.value.get()) };
        }
    }
}

impl<T: ?Sized> Weak<T> {
    /// An `Arc` if some owner is still alive.
    #[track_caller]
    pub fn upgrade(&self) -> Option<Arc<T>> {
        let inner = self.inner.upgrade()?;
        let site = c11check_runtime::Site::caller();
        let mut n = inner.strong.load(MemOrder::Relaxed, site);
        loop {
            if n == 0 {
                return None;
            }
            match (inner.strong).cas(n, n + 1, MemOrder::Acquire, MemOrder::Relaxed, true, site) {
                Ok(_) => return Some(Arc { inner, site }),
                Err(m) => n = m,
            }
        }
    }
}

impl<T: ?Sized> Clone for Weak<T> {
    fn clone(&self) -> Self {
        Weak {
            inner: self.inner.clone(),
        }
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for Arc<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: Default> Default for Arc<T> {
    fn default() -> Self {
        Arc::new(T::default())
    }
}
