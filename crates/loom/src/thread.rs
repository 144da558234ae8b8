//! `loom::thread`. As in loom, spawned closures and their results need not
//! be `Send`: every modelled thread runs on the test's OS thread.

pub use c11check::thread::{
    current, park, scope, sleep, yield_now, AccessError, LocalKey, Scope, ScopedJoinHandle, Thread,
    ThreadId,
};

/// Carries a value that is not `Send` to another modelled thread.
struct OneOsThread<T>(T);

// SAFETY: modelled threads are fibers of one OS thread; a value never
// crosses an OS thread boundary.
unsafe impl<T> Send for OneOsThread<T> {}

impl<T> OneOsThread<T> {
    fn into_inner(self) -> T {
        self.0
    }
}

/// A modelled thread that can be joined.
#[derive(Debug)]
pub struct JoinHandle<T> {
    inner: c11check::thread::JoinHandle<OneOsThreadResult<T>>,
}

#[doc(hidden)]
pub struct OneOsThreadResult<T>(T);
// SAFETY: as `OneOsThread`.
unsafe impl<T> Send for OneOsThreadResult<T> {}
impl<T> std::fmt::Debug for OneOsThreadResult<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OneOsThreadResult")
    }
}

impl<T: 'static> JoinHandle<T> {
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        self.inner.join().map(|r| r.0)
    }
    pub fn thread(&self) -> &Thread {
        self.inner.thread()
    }
}

/// Starts a modelled thread.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + 'static,
    T: 'static,
{
    let f = OneOsThread(f);
    JoinHandle {
        inner: c11check::thread::spawn(move || {
            let f = f.into_inner();
            OneOsThreadResult(f())
        }),
    }
}

/// Thread factory (name; stack size is the model's).
#[derive(Debug, Default)]
pub struct Builder {
    inner: c11check::thread::Builder,
}

impl Builder {
    pub fn new() -> Self {
        Builder::default()
    }
    pub fn name(self, name: String) -> Self {
        Builder {
            inner: self.inner.name(name),
        }
    }
    pub fn stack_size(self, size: usize) -> Self {
        Builder {
            inner: self.inner.stack_size(size),
        }
    }
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + 'static,
        T: 'static,
    {
        let f = OneOsThread(f);
        self.inner
            .spawn(move || {
                let f = f.into_inner();
                OneOsThreadResult(f())
            })
            .map(|inner| JoinHandle { inner })
    }
}
