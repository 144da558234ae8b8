//! `loom::sync::atomic`: c11check's atomics plus loom's extra methods.

pub use c11check::sync::atomic::{compiler_fence, fence, Ordering};

/// The deprecated std hint loom keeps: a turn of a wait loop.
#[track_caller]
pub fn spin_loop_hint() {
    c11check::thread::yield_now();
}

/// The failure order std's deprecated `compare_and_swap` derives from its
/// one order.
fn cas_failure(order: Ordering) -> Ordering {
    match order {
        Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
        Ordering::AcqRel | Ordering::Acquire => Ordering::Acquire,
        _ => Ordering::SeqCst,
    }
}

macro_rules! loom_atomic {
    ($name:ident, $t:ty) => {
        #[doc = concat!("loom's `", stringify!($name), "`: c11check's, plus `with_mut` and `unsync_load`.")]
        #[derive(Debug, Default)]
        pub struct $name(c11check::sync::atomic::$name);

        impl $name {
            #[track_caller]
            pub const fn new(v: $t) -> Self {
                $name(c11check::sync::atomic::$name::new(v))
            }
            /// Reads without synchronizing: a plain read, so a data race with
            /// any store it is not ordered with.
            ///
            /// # Safety
            /// As loom's: no concurrent store may race with it.
            #[track_caller]
            pub unsafe fn unsync_load(&self) -> $t {
                self.0.unsync_load()
            }
            /// Exclusive access to the value.
            #[track_caller]
            pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut $t) -> R) -> R {
                let mut v = self.0.load(Ordering::Relaxed);
                let r = f(&mut v);
                self.0.store(v, Ordering::Relaxed);
                r
            }
            #[track_caller]
            pub fn into_inner(self) -> $t {
                self.0.into_inner()
            }
            /// The deprecated std method, as loom keeps it.
            #[track_caller]
            pub fn compare_and_swap(&self, current: $t, new: $t, order: Ordering) -> $t {
                match self.0.compare_exchange(current, new, order, cas_failure(order)) {
                    Ok(v) | Err(v) => v,
                }
            }
        }

        impl std::ops::Deref for $name {
            type Target = c11check::sync::atomic::$name;
            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }

        impl From<$t> for $name {
            fn from(v: $t) -> Self {
                Self::new(v)
            }
        }
    };
}

loom_atomic!(AtomicBool, bool);
loom_atomic!(AtomicU8, u8);
loom_atomic!(AtomicU16, u16);
loom_atomic!(AtomicU32, u32);
loom_atomic!(AtomicU64, u64);
loom_atomic!(AtomicUsize, usize);
loom_atomic!(AtomicI8, i8);
loom_atomic!(AtomicI16, i16);
loom_atomic!(AtomicI32, i32);
loom_atomic!(AtomicI64, i64);
loom_atomic!(AtomicIsize, isize);

/// loom's `AtomicPtr`.
#[derive(Debug, Default)]
pub struct AtomicPtr<T>(c11check::sync::atomic::AtomicPtr<T>);

impl<T> AtomicPtr<T> {
    #[track_caller]
    pub const fn new(p: *mut T) -> Self {
        AtomicPtr(c11check::sync::atomic::AtomicPtr::new(p))
    }
    /// # Safety
    /// As loom's: no concurrent store may race with it.
    #[track_caller]
    pub unsafe fn unsync_load(&self) -> *mut T {
        self.0.unsync_load()
    }
    #[track_caller]
    pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut *mut T) -> R) -> R {
        let mut v = self.0.load(Ordering::Relaxed);
        let r = f(&mut v);
        self.0.store(v, Ordering::Relaxed);
        r
    }
    #[track_caller]
    pub fn into_inner(self) -> *mut T {
        self.0.into_inner()
    }
    /// The deprecated std method, as loom keeps it.
    #[track_caller]
    pub fn compare_and_swap(&self, current: *mut T, new: *mut T, order: Ordering) -> *mut T {
        match self
            .0
            .compare_exchange(current, new, order, cas_failure(order))
        {
            Ok(v) | Err(v) => v,
        }
    }
}

impl<T> std::ops::Deref for AtomicPtr<T> {
    type Target = c11check::sync::atomic::AtomicPtr<T>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}
