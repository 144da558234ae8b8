//! `loom::alloc`: allocation passes through to the global allocator.

pub use std::alloc::Layout;

/// # Safety
/// As `std::alloc::alloc`.
pub unsafe fn alloc(layout: Layout) -> *mut u8 {
    // SAFETY: forwarded with the caller's guarantees.
    unsafe { std::alloc::alloc(layout) }
}

/// # Safety
/// As `std::alloc::alloc_zeroed`.
pub unsafe fn alloc_zeroed(layout: Layout) -> *mut u8 {
    // SAFETY: forwarded with the caller's guarantees.
    unsafe { std::alloc::alloc_zeroed(layout) }
}

/// # Safety
/// As `std::alloc::dealloc`.
pub unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
    // SAFETY: forwarded with the caller's guarantees.
    unsafe { std::alloc::dealloc(ptr, layout) }
}

/// A value loom tracks for leaks (here: just the value).
#[derive(Debug, Default)]
pub struct Track<T>(T);

impl<T> Track<T> {
    pub fn new(value: T) -> Self {
        Track(value)
    }
    pub fn get_ref(&self) -> &T {
        &self.0
    }
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.0
    }
    pub fn into_inner(self) -> T {
        self.0
    }
}
