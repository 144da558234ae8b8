//! `loom::cell`: `UnsafeCell` with loom's interface (`with`, `with_mut`,
//! `get` -> `ConstPtr`, `get_mut` -> `MutPtr`) and `Cell`. Every access is a
//! plain read or write of the model, checked for data races; an access made
//! through `ConstPtr`/`MutPtr` lasts, as in loom, from `get`/`get_mut` until
//! the pointer is dropped (a read or write at each end).

/// loom's `UnsafeCell`.
#[derive(Debug, Default)]
pub struct UnsafeCell<T: ?Sized>(c11check::cell::UnsafeCell<T>);

// SAFETY: as loom's: Sync is up to the user's wrapper type.
unsafe impl<T: ?Sized + Send> Send for UnsafeCell<T> {}

impl<T> UnsafeCell<T> {
    #[track_caller]
    pub const fn new(data: T) -> Self {
        UnsafeCell(c11check::cell::UnsafeCell::new(data))
    }
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    #[track_caller]
    pub fn with<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*const T) -> R,
    {
        self.0.with(f)
    }
    #[track_caller]
    pub fn with_mut<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*mut T) -> R,
    {
        self.0.with_mut(f)
    }
    /// A shared pointer: a read of the cell from now until it is dropped.
    #[track_caller]
    pub fn get(&self) -> ConstPtr<T> {
        let (ptr, span) = self.0.span(false);
        ConstPtr { ptr, _span: span }
    }
    /// A unique pointer: a write of the cell from now until it is dropped.
    #[track_caller]
    pub fn get_mut(&self) -> MutPtr<T> {
        let (ptr, span) = self.0.span(true);
        MutPtr { ptr, _span: span }
    }
}

/// loom's shared pointer into an `UnsafeCell`.
#[derive(Debug)]
pub struct ConstPtr<T: ?Sized> {
    ptr: *const T,
    /// Ends the read when the pointer is dropped.
    _span: Option<c11check::cell::AccessSpan>,
}

impl<T: ?Sized> ConstPtr<T> {
    /// # Safety
    /// As loom's: the cell must not be written meanwhile.
    pub unsafe fn deref(&self) -> &T {
        // SAFETY: guaranteed by the caller.
        unsafe { &*self.ptr }
    }
    pub fn with<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*const T) -> R,
    {
        f(self.ptr)
    }
}

/// loom's unique pointer into an `UnsafeCell`.
#[derive(Debug)]
pub struct MutPtr<T: ?Sized> {
    ptr: *mut T,
    /// Ends the write when the pointer is dropped.
    _span: Option<c11check::cell::AccessSpan>,
}

impl<T: ?Sized> MutPtr<T> {
    /// # Safety
    /// As loom's: no other access to the cell meanwhile.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn deref(&self) -> &mut T {
        // SAFETY: guaranteed by the caller.
        unsafe { &mut *self.ptr }
    }
    pub fn with<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*mut T) -> R,
    {
        f(self.ptr)
    }
}

/// loom's `Cell`: a `std::cell::Cell` whose accesses are checked for races.
#[derive(Debug, Default)]
pub struct Cell<T>(UnsafeCell<T>);

impl<T> Cell<T> {
    #[track_caller]
    pub const fn new(v: T) -> Self {
        Cell(UnsafeCell::new(v))
    }
    #[track_caller]
    pub fn set(&self, val: T) {
        drop(self.replace(val));
    }
    #[track_caller]
    pub fn replace(&self, val: T) -> T {
        // SAFETY: the write is recorded; `Cell` is not Sync, as std's.
        self.0
            .with_mut(|p| unsafe { std::mem::replace(&mut *p, val) })
    }
    #[track_caller]
    pub fn swap(&self, other: &Self) {
        if std::ptr::eq(self, other) {
            return;
        }
        let a = self.0.get_mut();
        let b = other.0.get_mut();
        // SAFETY: two different cells, both recorded as written.
        unsafe { std::mem::swap(a.deref(), b.deref()) }
    }
    #[track_caller]
    pub fn get(&self) -> T
    where
        T: Copy,
    {
        // SAFETY: the read is recorded.
        self.0.with(|p| unsafe { *p })
    }
    #[track_caller]
    pub fn take(&self) -> T
    where
        T: Default,
    {
        self.replace(T::default())
    }
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }
}
