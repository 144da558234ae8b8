//! `Once`, `OnceLock` and `LazyLock` under the model: the runtime's
//! one-time initialization (`c11check_runtime::once`, which `pthread_once`
//! shares): callers take the once's lock in turn, and a thread that finds
//! another initializing waits as at a lock. The state is a modelled atomic
//! as well (release when initialization completes, acquire when it is
//! seen), so `is_completed` and a caller that finds it complete need no
//! lock, and whoever uses the value happens after its initialization.

use super::atomic::{AtomicU8, Ordering};
use c11check_runtime::{once, LocCell, Site};
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

const INCOMPLETE: u8 = 0;
const COMPLETE: u8 = 2;
const POISONED: u8 = 3;

/// `std::sync::Once` under the model. Its state is per execution.
#[derive(Debug, Default)]
pub struct Once {
    state: AtomicU8,
    /// The lock callers take in turn (see `c11check_runtime::once`).
    lock: LocCell,
}

/// The state of a `Once` when [`Once::call_once_force`] runs its closure.
#[derive(Debug)]
pub struct OnceState {
    poisoned: bool,
}

impl OnceState {
    /// Whether a thread panicked while holding this, as in `std`.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

impl Once {
    /// Makes a new one, as `std`'s `new` does.
    pub const fn new() -> Self {
        Once {
            state: AtomicU8::inner(INCOMPLETE),
            lock: LocCell::new(),
        }
    }

    /// Whether the initialisation has run to its end.
    pub fn is_completed(&self) -> bool {
        self.state.load(Ordering::Acquire) == COMPLETE
    }

    /// Runs `f` once; panics if an earlier `f` panicked (poisoning).
    #[track_caller]
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        self.run(false, |_| f());
    }

    /// Like `call_once`, but runs `f` even if the `Once` was poisoned.
    #[track_caller]
    pub fn call_once_force<F: FnOnce(&OnceState)>(&self, f: F) {
        self.run(true, f);
    }

    #[track_caller]
    fn run<F: FnOnce(&OnceState)>(&self, force: bool, f: F) {
        if self.state.load(Ordering::Acquire) == COMPLETE {
            return;
        }
        once::run_locked(&self.lock, Site::caller(), || {
            let s = self.state.load(Ordering::Relaxed);
            match s {
                COMPLETE => {}
                POISONED if !force => panic!("Once instance has previously been poisoned"),
                _ => {
                    let st = OnceState {
                        poisoned: s == POISONED,
                    };
                    match catch_unwind(AssertUnwindSafe(|| f(&st))) {
                        Ok(()) => self.state.store(COMPLETE, Ordering::Release),
                        Err(p) => {
                            self.state.store(POISONED, Ordering::Release);
                            resume_unwind(p);
                        }
                    }
                }
            }
        });
    }
}

thread_local! {
    /// The modelled threads (execution, thread) running a `OnceLock`
    /// initializer, innermost last.
    static STATIC_INIT: std::cell::RefCell<Vec<(u32, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn me() -> (u32, u32) {
    (
        c11check_runtime::generation(),
        c11check_runtime::current_thread(),
    )
}

/// Runs a `OnceLock` initializer; what it allocates belongs to the lock
/// (usually a static, alive for good) and is not checked for leaks.
fn in_static_init<T>(f: impl FnOnce() -> T) -> T {
    struct Leave((u32, u32));
    impl Drop for Leave {
        fn drop(&mut self) {
            STATIC_INIT.with(|v| {
                let mut v = v.borrow_mut();
                if let Some(i) = v.iter().rposition(|e| *e == self.0) {
                    v.remove(i);
                }
            });
        }
    }
    let id = me();
    STATIC_INIT.with(|v| {
        let mut v = v.borrow_mut();
        v.retain(|e| e.0 == id.0);
        v.push(id);
    });
    let _leave = Leave(id);
    f()
}

/// Whether the running modelled thread is inside a `OnceLock` initializer.
pub(crate) fn initializing_static() -> bool {
    let id = me();
    STATIC_INIT.with(|v| v.borrow().contains(&id))
}

/// `std::sync::OnceLock` under the model.
pub struct OnceLock<T> {
    once: Once,
    value: UnsafeCell<Option<T>>,
}

// SAFETY: as std's OnceLock: the value is written once, before the release
// that every reader acquires.
unsafe impl<T: Sync + Send> Sync for OnceLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for OnceLock<T> {}

impl<T> Default for OnceLock<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> OnceLock<T> {
    /// Makes a new one, as `std`'s `new` does.
    pub const fn new() -> Self {
        OnceLock {
            once: Once::new(),
            value: UnsafeCell::new(None),
        }
    }
    /// The value, if initialized in this execution.
    pub fn get(&self) -> Option<&T> {
        if self.once.is_completed() {
            // SAFETY: completed: written before the release we acquired.
            unsafe { (*self.value.get()).as_ref() }
        } else {
            None
        }
    }
    /// The value, made by `f` in the first caller (others wait for it).
    pub fn get_or_init<F: FnOnce() -> T>(&self, f: F) -> &T {
        self.once.call_once(|| {
            let v = in_static_init(f);
            // SAFETY: only the thread running the Once writes the value. A
            // value already there is from an earlier execution (a static):
            // it is leaked, since dropping it would run code that did not
            // run when this execution was first explored.
            std::mem::forget(unsafe { (*self.value.get()).replace(v) });
        });
        self.get().expect("OnceLock initialized")
    }
    /// Sets the value if empty; gives `value` back otherwise.
    pub fn set(&self, value: T) -> Result<(), T> {
        let mut value = Some(value);
        self.get_or_init(|| value.take().unwrap());
        match value {
            None => Ok(()),
            Some(v) => Err(v),
        }
    }
    /// Consumes this and returns the value inside, as `std`'s `into_inner` does.
    pub fn into_inner(self) -> Option<T> {
        if self.once.is_completed() {
            self.value.into_inner()
        } else {
            None
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("OnceLock").field(&self.get()).finish()
    }
}

/// `std::sync::LazyLock` under the model.
pub struct LazyLock<T, F = fn() -> T> {
    cell: OnceLock<T>,
    make: F,
}

// SAFETY: as std's LazyLock.
unsafe impl<T: Sync + Send, F: Send> Sync for LazyLock<T, F> {}

impl<T, F: Fn() -> T> LazyLock<T, F> {
    /// Unlike std, `F` must be `Fn` (the model runs the program many times;
    /// a static's initializer must be callable in each execution).
    pub const fn new(f: F) -> Self {
        LazyLock {
            cell: OnceLock::new(),
            make: f,
        }
    }
    /// The value, made on first use.
    pub fn force(this: &Self) -> &T {
        this.cell.get_or_init(|| (this.make)())
    }
}

impl<T, F: Fn() -> T> std::ops::Deref for LazyLock<T, F> {
    type Target = T;
    fn deref(&self) -> &T {
        LazyLock::force(self)
    }
}
