//! Support for `loom::lazy_static!`.

/// A value made on first use in each execution.
pub struct Lazy<T: 'static> {
    inner: c11check::sync::LazyLock<T, fn() -> T>,
}

impl<T: 'static> Lazy<T> {
    #[doc(hidden)]
    pub const fn new(init: fn() -> T) -> Self {
        Lazy {
            inner: c11check::sync::LazyLock::new(init),
        }
    }
}

impl<T: 'static> std::ops::Deref for Lazy<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}
