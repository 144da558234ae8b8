//! `std::thread` under the model: threads are fibers the explorer schedules.

use c11check_runtime as rt;
use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc as StdArc;

/// A modelled thread's identity.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(u64);

/// A handle on a modelled thread.
#[derive(Clone, Debug)]
pub struct Thread {
    id: u32,
    name: Option<StdArc<str>>,
}

impl Thread {
    /// The thread's identifier, unique in the execution.
    pub fn id(&self) -> ThreadId {
        ThreadId(self.id as u64)
    }
    /// The thread's name, as in `std`.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    /// Makes a `park` of this thread return (at the latest, the next one).
    #[track_caller]
    pub fn unpark(&self) {
        park_token(self.id).store(true, crate::sync::atomic::Ordering::Release);
    }
}

/// Per-execution bookkeeping the facade keeps next to the runtime.
mod registry {
    use super::*;
    use std::cell::RefCell;

    #[derive(Default)]
    pub(super) struct Registry {
        pub generation: u32,
        pub names: Vec<Option<StdArc<str>>>,
        pub tokens: Vec<Option<Box<crate::sync::atomic::AtomicBool>>>,
    }

    thread_local! {
        pub(super) static REGISTRY: RefCell<Registry> = RefCell::new(Registry::default());
    }

    pub(super) fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
        REGISTRY.with(|r| {
            let mut r = r.borrow_mut();
            let generation = rt::generation();
            if r.generation != generation {
                // Kept allocated from one execution to the next.
                r.generation = generation;
                r.names.clear();
                r.tokens.clear();
            }
            f(&mut r)
        })
    }
}

/// Thread `t`'s park token (set by `unpark`, consumed by `park`), made by
/// whichever side asks first; it behaves as if it had existed from the start
/// (not tracked as created by that thread, see `c11check::alloc`).
fn park_token(t: u32) -> &'static crate::sync::atomic::AtomicBool {
    let p: *const crate::sync::atomic::AtomicBool = registry::with(|r| {
        let i = t as usize;
        if r.tokens.len() <= i {
            r.tokens.resize_with(i + 1, || None);
        }
        c11check_runtime::alloc::untracked(|| {
            &**r.tokens[i]
                .get_or_insert_with(|| Box::new(crate::sync::atomic::AtomicBool::inner(false)))
                as *const _
        })
    });
    // SAFETY: the token is boxed (its address is stable) and the registry keeps
    // it until the execution ends; no modelled thread runs across executions,
    // so the reference is never used after the box is freed.
    unsafe { &*p }
}

/// The calling modelled thread.
pub fn current() -> Thread {
    let id = rt::current_thread();
    let name = registry::with(|r| r.names.get(id as usize).cloned().flatten());
    // The model's own closure runs as an unnamed thread (as in loom).
    Thread { id, name }
}

/// Gives other threads a chance to run; in the model, the end of one turn of
/// a wait loop (a turn that read nothing new is cut).
#[track_caller]
pub fn yield_now() {
    rt::spin_hint(c11check_runtime::Site::caller());
}

/// Time does not pass in the model: sleeping is yielding.
#[track_caller]
pub fn sleep(_d: std::time::Duration) {
    yield_now();
}

/// Waits for an `unpark`, or returns spuriously (std allows both; the model
/// explores both, so callers must re-check their condition in a loop).
#[track_caller]
pub fn park() {
    let token = park_token(rt::current_thread());
    if token.load(crate::sync::atomic::Ordering::Acquire) {
        token.store(false, crate::sync::atomic::Ordering::Relaxed);
    }
    yield_now();
}

/// A modelled thread that can be joined.
#[derive(Debug)]
pub struct JoinHandle<T> {
    thread: Thread,
    _marker: PhantomData<T>,
}

impl<T: 'static> JoinHandle<T> {
    /// Waits for the thread; its panic comes back as `Err`, as with std.
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        rt::join(self.thread.id, c11check_runtime::Site::caller())
            .map(|b| *b.downcast::<T>().expect("c11check: thread result type"))
    }
    /// The thread this handle joins.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }
}

/// Thread factory, as std's: a name; the stack size is the model's.
#[derive(Debug, Default)]
pub struct Builder {
    name: Option<String>,
}

impl Builder {
    /// Makes a new one, as `std`'s `new` does.
    pub fn new() -> Self {
        Builder::default()
    }
    /// Names the thread.
    pub fn name(mut self, name: String) -> Self {
        self.name = Some(name);
        self
    }
    /// Accepted for compatibility; fibers use `model::Builder::stack_size`.
    pub fn stack_size(self, _size: usize) -> Self {
        self
    }
    /// Spawns a modelled thread with this builder's settings.
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        Ok(spawn_named(self.name, f, c11check_runtime::Site::caller()))
    }
}

fn spawn_named<F, T>(name: Option<String>, f: F, site: rt::Site) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let main: rt::ThreadMain = Box::new(move || {
        let v = f();
        destroy_thread_locals();
        Box::new(v) as Box<dyn Any + Send>
    });
    let id = rt::spawn(main, site);
    let name: Option<StdArc<str>> = name.map(StdArc::from);
    // Unnamed threads need no entry: `current` finds none and says so.
    if name.is_some() {
        registry::with(|r| {
            let i = id as usize;
            if r.names.len() <= i {
                r.names.resize(i + 1, None);
            }
            r.names[i] = name.clone();
        });
    }
    JoinHandle {
        thread: Thread { id, name },
        _marker: PhantomData,
    }
}

/// Starts a modelled thread.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    spawn_named(None, f, c11check_runtime::Site::caller())
}

/// Scoped threads, as `std::thread::scope`: every thread spawned in the scope
/// is joined before `scope` returns, and a panic in one of them makes `scope`
/// panic.
#[track_caller]
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    let s = Scope {
        spawned: std::cell::RefCell::new(Vec::new()),
        _marker: PhantomData,
    };
    // Scoped threads borrow from this frame: join them all, even if `f`
    // panics, before the frame can go away.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&s)));
    let mut panicked = false;
    let pending: Vec<_> = s.spawned.borrow_mut().drain(..).collect();
    for slot in pending {
        let id = slot.swap(JOINED, std::sync::atomic::Ordering::Relaxed);
        if id != JOINED {
            panicked |= rt::join(id, c11check_runtime::Site::caller()).is_err();
        }
    }
    let result = match result {
        Ok(r) => r,
        Err(payload) => std::panic::resume_unwind(payload),
    };
    if panicked {
        panic!("{}", c11check_runtime::SCOPE_PANIC);
    }
    result
}

/// Marks a scoped thread as joined (real bookkeeping, not modelled).
const JOINED: u32 = u32::MAX;

/// A scope for [`scope`].
pub struct Scope<'scope, 'env: 'scope> {
    spawned: std::cell::RefCell<Vec<StdArc<std::sync::atomic::AtomicU32>>>,
    _marker: PhantomData<(&'scope (), &'env ())>,
}

/// A scoped thread that can be joined.
pub struct ScopedJoinHandle<'scope, T> {
    id: u32,
    slot: StdArc<std::sync::atomic::AtomicU32>,
    out: StdArc<std::sync::Mutex<Option<T>>>,
    _marker: PhantomData<&'scope T>,
}

impl<'scope> Scope<'scope, '_> {
    /// Spawns a modelled thread that may borrow from outside the scope; the
    /// scope joins it before it ends.
    #[track_caller]
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let out = StdArc::new(std::sync::Mutex::new(None));
        let out2 = out.clone();
        let main: Box<dyn FnOnce() -> Box<dyn Any + Send> + 'scope> = Box::new(move || {
            let v = f();
            destroy_thread_locals();
            *out2.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
            Box::new(()) as Box<dyn Any + Send>
        });
        // SAFETY: `scope` joins every thread spawned here before returning, so
        // the closure never outlives the borrows it captures ('scope); only the
        // lifetime is erased.
        let main: rt::ThreadMain = unsafe {
            std::mem::transmute::<Box<dyn FnOnce() -> Box<dyn Any + Send> + 'scope>, rt::ThreadMain>(
                main,
            )
        };
        let id = rt::spawn(main, c11check_runtime::Site::caller());
        let slot = StdArc::new(std::sync::atomic::AtomicU32::new(id));
        self.spawned.borrow_mut().push(slot.clone());
        ScopedJoinHandle {
            id,
            slot,
            out,
            _marker: PhantomData,
        }
    }
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the thread to end; its panic is an `Err`, as in `std`.
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        self.slot
            .store(JOINED, std::sync::atomic::Ordering::Relaxed);
        rt::join(self.id, c11check_runtime::Site::caller()).map(|_| {
            self.out
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .expect("c11check: scoped thread result")
        })
    }
}

/// Per-thread values of `thread_local!` keys: one per modelled thread and
/// execution (std's thread-locals would be shared by every fiber of the OS
/// thread).
mod locals {
    use super::rt;
    use std::any::Any;
    use std::cell::RefCell;
    use std::collections::HashMap;

    #[derive(Default)]
    pub(super) struct Locals {
        generation: u32,
        values: HashMap<(usize, u32), Box<dyn Any>>,
    }

    thread_local! {
        pub(super) static LOCALS: RefCell<Locals> = RefCell::new(Locals::default());
    }

    /// The value of `key` for the running thread, made by `init` on first use.
    pub(super) fn get<T: 'static>(key: usize, init: fn() -> T) -> *const T {
        let t = rt::current_thread();
        let generation = rt::generation();
        let existing = LOCALS.with(|l| {
            let mut l = l.borrow_mut();
            if l.generation != generation {
                // Values of earlier executions: their threads are gone.
                let old = std::mem::take(&mut l.values);
                std::mem::forget(old);
                l.generation = generation;
            }
            l.values
                .get(&(key, t))
                .map(|b| b.downcast_ref::<T>().expect("thread_local type") as *const T)
        });
        if let Some(p) = existing {
            return p;
        }
        // `init` may itself use modelled types: no borrow is held meanwhile.
        let v: Box<dyn Any> = Box::new(init());
        LOCALS.with(|l| {
            let mut l = l.borrow_mut();
            let b = l.values.entry((key, t)).or_insert(v);
            b.downcast_ref::<T>().expect("thread_local type") as *const T
        })
    }

    /// Drops the running thread's values (at its end, as std does).
    pub(crate) fn destroy_current() {
        if !rt::in_model() {
            return;
        }
        let t = rt::current_thread();
        let generation = rt::generation();
        let mine: Vec<Box<dyn Any>> = LOCALS.with(|l| {
            let mut l = l.borrow_mut();
            if l.generation != generation {
                return Vec::new();
            }
            let keys: Vec<(usize, u32)> = l.values.keys().filter(|k| k.1 == t).copied().collect();
            keys.into_iter()
                .filter_map(|k| l.values.remove(&k))
                .collect()
        });
        drop(mine);
    }
}

pub(crate) use locals::destroy_current as destroy_thread_locals;

/// A `thread_local!` key: each modelled thread sees its own value.
pub struct LocalKey<T: 'static> {
    init: fn() -> T,
}

/// The error of [`LocalKey::try_with`] (never returned by the model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessError;

impl<T: 'static> LocalKey<T> {
    /// Makes a new one, as `std`'s `new` does.
    #[doc(hidden)]
    pub const fn new(init: fn() -> T) -> Self {
        LocalKey { init }
    }
    /// Calls `f` with the running thread's value.
    pub fn with<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        let p = locals::get(self as *const Self as usize, self.init);
        // SAFETY: the value is boxed (stable address) and dropped only when
        // its thread ends or the execution is over, neither of which can
        // happen while that thread runs `f`.
        f(unsafe { &*p })
    }
    /// Runs `f` with this thread's value, or fails after the value was destroyed.
    pub fn try_with<F, R>(&'static self, f: F) -> Result<R, AccessError>
    where
        F: FnOnce(&T) -> R,
    {
        Ok(self.with(f))
    }
}

impl<T: 'static> LocalKey<std::cell::Cell<T>> {
    /// Sets this thread's value.
    pub fn set(&'static self, value: T) {
        self.with(|c| c.set(value))
    }
    /// A copy of this thread's value.
    pub fn get(&'static self) -> T
    where
        T: Copy,
    {
        self.with(|c| c.get())
    }
    /// Takes this thread's value, leaving the default.
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(|c| c.take())
    }
    /// Sets this thread's value and returns the old one.
    pub fn replace(&'static self, value: T) -> T {
        self.with(|c| c.replace(value))
    }
}

impl<T: 'static> LocalKey<std::cell::RefCell<T>> {
    /// Runs `f` with a shared borrow of this thread's value.
    pub fn with_borrow<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        self.with(|c| f(&c.borrow()))
    }
    /// Runs `f` with a mutable borrow of this thread's value.
    pub fn with_borrow_mut<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&mut T) -> R,
    {
        self.with(|c| f(&mut c.borrow_mut()))
    }
    /// Sets this thread's value.
    pub fn set(&'static self, value: T) {
        self.with(|c| *c.borrow_mut() = value)
    }
}
