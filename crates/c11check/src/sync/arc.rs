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
use c11check_runtime::Site;
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::ops::Deref;

/// One shared value: the modelled count beside a std `Arc` that holds the
/// value. Two allocations rather than one so that [`Arc::from_std`] adopts
/// a std `Arc`'s value as it is, unsized (`dyn Trait`, `[T]`, `str`) too.
struct Inner<T: ?Sized> {
    strong: Word,
    value: std::sync::Arc<UnsafeCell<ManuallyDrop<T>>>,
    /// Whether [`Arc::into_raw`] entered this block in [`RAW_BLOCKS`].
    raw: std::sync::atomic::AtomicBool,
}

/// The blocks behind the pointers [`Arc::into_raw`] gave out, by the
/// value's address: [`Arc::from_raw`] finds the count there, which no
/// offset from an unsized value's address can. An entry lives until its
/// block is freed.
static RAW_BLOCKS: std::sync::LazyLock<std::sync::Mutex<HashMap<usize, usize>>> =
    std::sync::LazyLock::new(Default::default);

fn raw_blocks() -> std::sync::MutexGuard<'static, HashMap<usize, usize>> {
    RAW_BLOCKS.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T: ?Sized> Inner<T> {
    fn value_addr(&self) -> usize {
        std::sync::Arc::as_ptr(&self.value) as *const u8 as usize
    }
}

impl<T: ?Sized> Drop for Inner<T> {
    fn drop(&mut self) {
        if *self.raw.get_mut() {
            let (addr, me) = (self.value_addr(), self as *const Self as *const u8 as usize);
            let mut blocks = raw_blocks();
            if blocks.get(&addr) == Some(&me) {
                blocks.remove(&addr);
            }
        }
    }
}

/// `std::sync::Arc` under the model.
pub struct Arc<T: ?Sized> {
    inner: std::sync::Arc<Inner<T>>,
    /// Where this handle was made (`new`, `clone`, `upgrade`): a report
    /// shows its drop there, since a drop has no caller to point at.
    site: Site,
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
        let made = Site::caller();
        let inner = c11check_runtime::alloc::untracked(|| {
            std::sync::Arc::new(UnsafeCell::new(ManuallyDrop::new(value)))
        });
        Arc::around(inner, made)
    }
    /// The value, if this is the only owner.
    #[track_caller]
    pub fn try_unwrap(this: Self) -> Result<T, Self> {
        let site = Site::caller();
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
        // SAFETY: `this` is wrapped in ManuallyDrop; its std handle is moved
        // out once and dropped, which frees the blocks (not the value).
        drop(unsafe { std::ptr::read(&this.inner) });
        Ok(value)
    }
    /// Consumes this and returns the value inside, as `std`'s `into_inner` does.
    #[track_caller]
    pub fn into_inner(this: Self) -> Option<T> {
        Arc::try_unwrap(this).ok()
    }
    /// A new pinned shared value.
    #[track_caller]
    pub fn pin(value: T) -> std::pin::Pin<Arc<T>> {
        // SAFETY: the value is never moved out of its shared block while
        // an `Arc` to it lives (as std's `Arc::pin`).
        unsafe { std::pin::Pin::new_unchecked(Arc::new(value)) }
    }
}

impl<T: ?Sized> Arc<T> {
    /// A modelled `Arc` owning `value`'s value, with a count of one.
    fn around(value: std::sync::Arc<UnsafeCell<ManuallyDrop<T>>>, made: Site) -> Self {
        let inner = c11check_runtime::alloc::untracked(|| {
            std::sync::Arc::new(Inner {
                strong: Word::new(1, Width::U64, Some(("Arc's reference count", made))),
                value,
                raw: std::sync::atomic::AtomicBool::new(false),
            })
        });
        let a = Arc { inner, site: made };
        if c11check_runtime::in_model() && !super::once::initializing_static() {
            c11check_runtime::track_alloc(a.key(), "Arc", made);
        }
        a
    }
    /// loom's `Arc::from_std`: the value of a `std::sync::Arc` that has no
    /// other owner (unsized values too), now shared by a modelled `Arc`.
    ///
    /// # Panics
    /// If the `std::sync::Arc` has other owners (as loom's).
    #[track_caller]
    pub fn from_std(mut std: std::sync::Arc<T>) -> Self {
        assert!(
            std::sync::Arc::get_mut(&mut std).is_some(),
            "Arc provided to `from_std` is not unique"
        );
        let ptr = std::sync::Arc::into_raw(std) as *const UnsafeCell<ManuallyDrop<T>>;
        // SAFETY: `UnsafeCell` and `ManuallyDrop` are `repr(transparent)`:
        // the block std made for `T` is the block for the wrapped `T`.
        let value = unsafe { std::sync::Arc::from_raw(ptr) };
        Arc::around(value, Site::caller())
    }
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
        let site = Site::caller();
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
        std::sync::Arc::as_ptr(&this.inner.value) as *const T
    }
    /// Gives up this handle without releasing its share: the pointer to the
    /// value, for [`Arc::from_raw`] (or the strong-count functions) later.
    pub fn into_raw(this: Self) -> *const T {
        let p = Arc::as_ptr(&this);
        let this = ManuallyDrop::new(this);
        // SAFETY: `this` is never dropped: its std handle is moved out once
        // and kept alive as a raw pointer.
        let inner = unsafe { std::ptr::read(&this.inner) };
        inner.raw.store(true, std::sync::atomic::Ordering::Relaxed);
        let block = std::sync::Arc::into_raw(inner) as usize;
        raw_blocks().insert(p as *const u8 as usize, block);
        p
    }
    /// Takes back a handle given up by [`Arc::into_raw`].
    ///
    /// # Safety
    /// `ptr` must come from `Arc::into_raw` of an `Arc<T>` (as std's), and
    /// each such pointer be taken back at most once per share given up.
    #[track_caller]
    pub unsafe fn from_raw(ptr: *const T) -> Self {
        let block = raw_blocks().get(&(ptr as *const u8 as usize)).copied();
        let block = block.expect("`Arc::from_raw` of a pointer `Arc::into_raw` did not give out");
        Arc {
            // SAFETY: the std handle `into_raw` gave up for this value.
            inner: unsafe { std::sync::Arc::from_raw(block as *const Inner<T>) },
            site: Site::caller(),
        }
    }
    /// Adds an owner to the value at `ptr` (a modelled increment, as a
    /// clone's), leaving the pointer given up.
    ///
    /// # Safety
    /// As [`Arc::from_raw`]'s, and the value must have an owner.
    #[track_caller]
    pub unsafe fn increment_strong_count(ptr: *const T) {
        // SAFETY: guaranteed by the caller.
        let this = ManuallyDrop::new(unsafe { Arc::from_raw(ptr) });
        let _more = ManuallyDrop::new(Arc::clone(&this));
    }
    /// Removes an owner of the value at `ptr` (a modelled decrement, as a
    /// drop's; the last one drops the value).
    ///
    /// # Safety
    /// As [`Arc::from_raw`]'s: `ptr` stands for one share given up.
    #[track_caller]
    pub unsafe fn decrement_strong_count(ptr: *const T) {
        // SAFETY: guaranteed by the caller.
        drop(unsafe { Arc::from_raw(ptr) });
    }
}

impl<T> From<T> for Arc<T> {
    #[track_caller]
    fn from(value: T) -> Self {
        Arc::new(value)
    }
}

impl<T: ?Sized> AsRef<T> for Arc<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T: ?Sized> std::borrow::Borrow<T> for Arc<T> {
    fn borrow(&self) -> &T {
        self
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
        let site = Site::caller();
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
        let site = Site::caller();
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
