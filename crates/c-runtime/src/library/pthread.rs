//! Threads, locks and the libc calls that end a thread or the program, as
//! the program calls them: `pthread_*`, `sched_yield`, `__assert_fail`,
//! `abort`, `exit`, and GenMC's `__VERIFIER_assume`.
//!
//! A modelled thread is a fiber of the Rust runtime; its `pthread_t` is its
//! thread number (0 for `main`). A mutex is a location (its address) locked
//! and unlocked with the model's lock actions, as the Rust `Mutex` does.
//! Outside a modelled thread every call goes to libc's function.

use crate::library::lifetimes;
use crate::library::sync::Acquire;
use crate::memory::{self, modelled};
use c11check_model::{BlockReason, Value};
use c11check_runtime::Site;
use c11check_runtime::{barrier, locks};
use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// libc's own definition of `name` (the next one after this library's).
pub(crate) fn next_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with a valid C string.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    assert!(!p.is_null(), "c11check: libc has no {name:?}");
    p
}

/// Calls libc's `name` with the given function type.
macro_rules! real {
    ($name:expr ; $ty:ty) => {{
        static P: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let p = *P.get_or_init(|| crate::library::pthread::next_symbol($name) as usize);
        // SAFETY: `p` is libc's definition of the symbol, of this type.
        unsafe { std::mem::transmute::<usize, $ty>(p) }
    }};
}

/// Returns libc's `name` called with the program's arguments (from a
/// function whose caller is not the program's modelled code).
macro_rules! passed_on {
    ($name:expr ; fn($($t:ty),*) -> $r:ty, $($a:expr),*) => {{
        let f = real!($name; unsafe extern "C" fn($($t),*) -> $r);
        // SAFETY: the program's arguments, passed on to libc.
        return unsafe { f($($a),*) };
    }};
}

type StartRoutine = unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void;

// The program's start routine is called through a frame without unwind
// information: a C++ exception the program does not catch finds no handler
// there (the runtime's Rust frames below would take it and abort the
// process: Rust cannot catch foreign exceptions), so the C++ runtime calls
// `std::terminate`, as in a real thread, whose `abort()` fails the
// execution with the exception's type. The frame keeps the frame-pointer
// chain, which the runtime walks to name the program's frames.
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl c11check_call_start_routine",
    ".hidden c11check_call_start_routine",
    ".type c11check_call_start_routine, @function",
    "c11check_call_start_routine:",
    "push rbp",
    "mov rbp, rsp",
    "mov rax, rdi",
    "mov rdi, rsi",
    "call rax",
    "pop rbp",
    "ret",
    ".size c11check_call_start_routine, . - c11check_call_start_routine",
);

unsafe extern "C" {
    /// Calls `start(arg)` through a frame no exception unwinds past.
    fn c11check_call_start_routine(start: StartRoutine, arg: *mut c_void) -> *mut c_void;
}

/// Runs a thread's start routine; its result (or `pthread_exit`'s value).
/// A failed assertion, `abort` or an uncaught C++ exception ends the
/// thread in the runtime, which reports it.
pub(crate) fn run_thread(start: StartRoutine, arg: usize) -> usize {
    run_body(start_routine(start, arg))
}

/// A thread's body that calls `start(arg)`.
fn start_routine(start: StartRoutine, arg: usize) -> impl FnOnce() -> usize + Send + 'static {
    // SAFETY: the program's start routine, with the argument it was given,
    // called as a C function (see `c11check_call_start_routine`).
    move || unsafe { c11check_call_start_routine(start, arg as *mut c_void) as usize }
}

/// Runs a thread's body (a start routine and its argument): its result.
/// A thread that ends otherwise (`pthread_exit`, `exit`, `abort`, a failed
/// assertion) does not come back here: see [`end_thread`] and [`fail`].
pub(crate) fn run_body(body: impl FnOnce() -> usize) -> usize {
    let t = crate::process::tls::current_thread();
    memory::note_stack(t as usize);
    crate::process::tls::thread_starts(t);
    let v = crate::process::tls::as_program(t, body);
    thread_ended(v);
    v
}

/// What the end of a thread leaves: its thread-specific data destroyed,
/// its last write an event, its result for `pthread_join`.
fn thread_ended(v: usize) {
    let t = crate::process::tls::current_thread() as usize;
    if t != 0 {
        crate::library::keys::run_destructors();
    }
    memory::flush_pending();
    RESULTS.with(|r| {
        let mut r = r.borrow_mut();
        if r.len() <= t {
            r.resize(t + 1, 0);
        }
        r[t] = v;
    });
    memory::forget_stack(t);
}

/// Ends the calling thread with result `v` where it stands (no frame of
/// the program is unwound: C++ destructors do not run, as with libc's
/// `exit`).
pub(crate) fn end_thread(v: usize) -> ! {
    thread_ended(v);
    // The result is in `RESULTS`; the runtime's slot gets a unit, which
    // allocates nothing (the runtime leaks unjoined results on purpose).
    c11check_runtime::finish_thread(Ok(Box::new(())))
}

/// Fails the execution: the calling thread stops with `msg`.
pub(crate) fn fail(msg: String) -> ! {
    memory::flush_pending();
    c11check_runtime::finish_thread(Err(Box::new(msg)))
}

thread_local! {
    /// Each finished thread's result in this execution.
    static RESULTS: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    /// Threads spawned in this execution (main included).
    static THREADS_SPAWNED: std::cell::Cell<usize> = const { std::cell::Cell::new(1) };
}

/// Forgets the last execution's threads.
pub fn reset() {
    RESULTS.with(|r| r.borrow_mut().clear());
    THREADS_SPAWNED.with(|n| n.set(1));
    crate::library::keys::reset();
}

/// A modelled thread's `pthread_t`/`thrd_t`: its number plus one, so that
/// no thread's id is 0 (what `std::thread::id()` means by "no thread").
pub(crate) fn thread_handle(t: u32) -> u64 {
    t as u64 + 1
}

/// The thread a handle names, if it names one of this execution's.
fn handle_thread(h: u64) -> Option<u32> {
    let t = h.checked_sub(1)?;
    (t < THREADS_SPAWNED.with(|n| n.get()) as u64).then_some(t as u32)
}

/// Starts a modelled thread running `body`; its handle, written at
/// `handle` as a store of the program's.
pub(crate) fn spawn_thread(
    handle: *mut u64,
    body: impl FnOnce() -> usize + Send + 'static,
    site: Site,
) -> u64 {
    memory::begin(site);
    // The thread's result goes to `RESULTS` (see `thread_ended`); the
    // runtime gets a unit, which allocates nothing: it leaks the results
    // nobody joined, on purpose, and a C program's are never joined
    // through it (a box per thread and execution was leaked).
    let main: c11check_runtime::ThreadMain = Box::new(move || {
        run_body(body);
        Box::new(()) as Box<dyn Any + Send>
    });
    memory::note_thread_op();
    let id = c11check_runtime::spawn(main, site);
    THREADS_SPAWNED.with(|n| n.set(n.get().max(id as usize + 1)));
    let h = thread_handle(id);
    // SAFETY: the program passes where to put the new thread's handle.
    unsafe { *handle = h };
    memory::runtime_stored(handle as usize, handle as usize + 8, site);
    h
}

extern "C" fn create_impl(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: StartRoutine,
    arg: *mut c_void,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        let f = real!(c"pthread_create"; unsafe extern "C" fn(*mut libc::pthread_t, *const libc::pthread_attr_t, StartRoutine, *mut c_void) -> c_int);
        // SAFETY: the program's arguments, passed on.
        return unsafe { f(thread, attr, start, arg) };
    }
    let arg = arg as usize;
    spawn_thread(thread, start_routine(start, arg), memory::site(pc));
    0
}
with_pc!(pthread_create(t: *mut libc::pthread_t, a: *const libc::pthread_attr_t, s: StartRoutine, arg: *mut c_void) -> c_int, "r8", create_impl);

/// Waits for the thread of handle `h` to end: its result, or an error
/// number (`EDEADLK` for the calling thread, `ESRCH` for no thread).
pub(crate) fn join_thread(h: u64, site: Site) -> Result<usize, c_int> {
    memory::begin(site);
    let Some(t) = handle_thread(h) else {
        return Err(libc::ESRCH);
    };
    if t == crate::process::tls::current_thread() {
        return Err(libc::EDEADLK);
    }
    memory::note_thread_op();
    // A thread may be joined more than once (POSIX leaves it undefined;
    // GenMC's tests do it): each join waits for it and reads its result.
    c11check_runtime::join_wait(t, site);
    Ok(RESULTS.with(|r| r.borrow().get(t as usize).copied().unwrap_or(0)))
}

extern "C" fn join_impl(thread: libc::pthread_t, ret: *mut *mut c_void, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        let f = real!(c"pthread_join"; unsafe extern "C" fn(libc::pthread_t, *mut *mut c_void) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(thread, ret) };
    }
    let site = memory::site(pc);
    match join_thread(thread, site) {
        Err(e) => e,
        Ok(v) => {
            if !ret.is_null() {
                // SAFETY: the program passes where to put the thread's result.
                unsafe { *ret = v as *mut c_void };
                // A store of the program's (the model must not give an
                // older one to its next read of it).
                memory::runtime_stored(ret as usize, ret as usize + 8, site);
            }
            0
        }
    }
}
with_pc!(pthread_join(t: libc::pthread_t, r: *mut *mut c_void) -> c_int, "rdx", join_impl);

/// A detached thread runs on; nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn pthread_detach(thread: libc::pthread_t) -> c_int {
    runtime_entry!();
    if !modelled() {
        let f = real!(c"pthread_detach"; unsafe extern "C" fn(libc::pthread_t) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(thread) };
    }
    0
}

/// The calling thread's id.
#[unsafe(no_mangle)]
pub extern "C" fn pthread_self() -> libc::pthread_t {
    runtime_entry!();
    if !modelled() {
        let f = real!(c"pthread_self"; unsafe extern "C" fn() -> libc::pthread_t);
        // SAFETY: no arguments.
        return unsafe { f() };
    }
    thread_handle(crate::process::tls::current_thread())
}

/// Whether two thread ids are the same thread.
#[unsafe(no_mangle)]
pub extern "C" fn pthread_equal(a: libc::pthread_t, b: libc::pthread_t) -> c_int {
    runtime_entry!();
    (a == b) as c_int
}

/// Ends the calling thread with `value`.
///
/// # Safety
/// Called by the program, as libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn pthread_exit(value: *mut c_void) -> ! {
    runtime_entry!();
    if !modelled() {
        let f = real!(c"pthread_exit"; unsafe extern "C" fn(*mut c_void) -> !);
        // SAFETY: passed on.
        unsafe { f(value) }
    }
    end_thread(value as usize)
}

// ---- mutexes ------------------------------------------------------------------

/// Per recursive or error-checking mutex: the execution, its holder and how
/// many times it holds it.
type Holders = std::collections::HashMap<usize, (u32, u32, u32)>;

thread_local! {
    static HOLDERS: RefCell<Holders> = RefCell::new(Holders::new());
}

/// glibc's mutex kind (`__kind`, the fifth int of `pthread_mutex_t`).
fn kind(m: *mut libc::pthread_mutex_t) -> c_int {
    // SAFETY: glibc's layout: `__lock, __count, __owner, __nusers, __kind`.
    unsafe { *(m as *const c_int).add(4) & 3 }
}

const RECURSIVE: c_int = 1;
const ERRORCHECK: c_int = 2;

/// The holder record of mutex `m` in this execution: (holder, count).
fn holder(m: usize) -> Option<(u32, u32)> {
    let g = c11check_runtime::generation();
    HOLDERS.with(|h| {
        h.borrow()
            .get(&m)
            .filter(|e| e.0 == g && e.2 > 0)
            .map(|e| (e.1, e.2))
    })
}

fn set_holder(m: usize, t: u32, count: u32) {
    let g = c11check_runtime::generation();
    HOLDERS.with(|h| h.borrow_mut().insert(m, (g, t, count)));
}

/// Takes the lock at `addr` as `how` says: 0, `EBUSY` or `ETIMEDOUT`.
pub(crate) fn lock_addr(addr: usize, how: Acquire, site: Site) -> c_int {
    let cell = memory::lock_cell(addr);
    match how {
        Acquire::Wait => locks::lock(cell, site),
        Acquire::Try | Acquire::Timed => {
            if !locks::try_lock(cell, site) {
                if how == Acquire::Try {
                    return libc::EBUSY;
                }
                if crate::library::sync::explored_choice(site) {
                    return libc::ETIMEDOUT;
                }
                // The execution where it times out is explored too.
                c11check_runtime::set_waiting(Some(c11check_runtime::TIMED_WAIT));
                locks::lock(cell, site);
                c11check_runtime::set_waiting(None);
            }
        }
    }
    0
}

/// Locks mutex `m` as `how` says, minding its kind: 0 or an error number.
pub(crate) fn lock_mutex(m: *mut libc::pthread_mutex_t, how: Acquire, site: Site) -> c_int {
    memory::begin(site);
    let r = lock_mutex_checked(m, how, site);
    if r == 0 {
        lifetimes::held(m as usize, Some(site));
    }
    r
}

fn lock_mutex_checked(m: *mut libc::pthread_mutex_t, how: Acquire, site: Site) -> c_int {
    lifetimes::use_(lifetimes::Kind::Mutex, m as usize, site, "locks");
    let me = crate::process::tls::current_thread();
    let k = kind(m);
    if k == RECURSIVE || k == ERRORCHECK {
        if let Some((t, n)) = holder(m as usize) {
            if t == me {
                if k == ERRORCHECK {
                    return libc::EDEADLK;
                }
                set_holder(m as usize, me, n + 1);
                return 0;
            }
        }
    }
    let r = memory::internal(|| lock_addr(m as usize, how, site));
    if r == 0 && (k == RECURSIVE || k == ERRORCHECK) {
        set_holder(m as usize, me, 1);
    }
    r
}

/// Whether the calling thread may unlock `m` (a recursive or
/// error-checking mutex must be held by it; other kinds are not checked).
pub(crate) fn may_unlock(m: *mut libc::pthread_mutex_t) -> bool {
    let k = kind(m);
    if k != RECURSIVE && k != ERRORCHECK {
        return true;
    }
    matches!(holder(m as usize), Some((t, _)) if t == crate::process::tls::current_thread())
}

/// Unlocks mutex `m`, minding its kind: 0 or `EPERM`.
pub(crate) fn unlock_mutex(m: *mut libc::pthread_mutex_t, site: Site) -> c_int {
    memory::begin(site);
    lifetimes::use_(lifetimes::Kind::Mutex, m as usize, site, "unlocks");
    let r = unlock_mutex_checked(m, site);
    if r == 0 && holder(m as usize).is_none() {
        lifetimes::held(m as usize, None);
    }
    r
}

fn unlock_mutex_checked(m: *mut libc::pthread_mutex_t, site: Site) -> c_int {
    let k = kind(m);
    if k == RECURSIVE || k == ERRORCHECK {
        let me = crate::process::tls::current_thread();
        match holder(m as usize) {
            Some((t, n)) if t == me && n > 1 => {
                set_holder(m as usize, me, n - 1);
                return 0;
            }
            Some((t, _)) if t == me => set_holder(m as usize, me, 0),
            _ => return libc::EPERM,
        }
    }
    locks::unlock(memory::lock_cell(m as usize), site);
    0
}

extern "C" fn lock_impl(m: *mut libc::pthread_mutex_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        let f =
            real!(c"pthread_mutex_lock"; unsafe extern "C" fn(*mut libc::pthread_mutex_t) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(m) };
    }
    lock_mutex(m, Acquire::Wait, memory::site(pc))
}
with_pc!(pthread_mutex_lock(m: *mut libc::pthread_mutex_t) -> c_int, "rsi", lock_impl);

extern "C" fn trylock_impl(m: *mut libc::pthread_mutex_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        let f = real!(c"pthread_mutex_trylock"; unsafe extern "C" fn(*mut libc::pthread_mutex_t) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(m) };
    }
    lock_mutex(m, Acquire::Try, memory::site(pc))
}
with_pc!(pthread_mutex_trylock(m: *mut libc::pthread_mutex_t) -> c_int, "rsi", trylock_impl);

extern "C" fn unlock_impl(m: *mut libc::pthread_mutex_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        let f = real!(c"pthread_mutex_unlock"; unsafe extern "C" fn(*mut libc::pthread_mutex_t) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(m) };
    }
    unlock_mutex(m, memory::site(pc))
}
with_pc!(pthread_mutex_unlock(m: *mut libc::pthread_mutex_t) -> c_int, "rsi", unlock_impl);

extern "C" fn mutex_init_impl(
    m: *mut libc::pthread_mutex_t,
    attr: *const libc::pthread_mutexattr_t,
    pc: usize,
) -> c_int {
    runtime_entry!();
    let f = real!(c"pthread_mutex_init"; unsafe extern "C" fn(*mut libc::pthread_mutex_t, *const libc::pthread_mutexattr_t) -> c_int);
    if crate::memory::program_call(pc) {
        let site = memory::site(pc);
        memory::begin(site);
        lifetimes::init(lifetimes::Kind::Mutex, m as usize, site);
    } else if modelled() {
        // A library's own mutex: initialized, whatever its bytes say.
        lifetimes::init(lifetimes::Kind::Mutex, m as usize, memory::site(pc));
    }
    // SAFETY: passed on (the kind it writes is what the runtime reads).
    unsafe { f(m, attr) }
}
with_pc!(pthread_mutex_init(m: *mut libc::pthread_mutex_t, a: *const libc::pthread_mutexattr_t) -> c_int, "rdx", mutex_init_impl);

extern "C" fn mutex_destroy_impl(m: *mut libc::pthread_mutex_t, pc: usize) -> c_int {
    runtime_entry!();
    if crate::memory::program_call(pc) {
        let site = memory::site(pc);
        memory::begin(site);
        lifetimes::destroy(lifetimes::Kind::Mutex, m as usize, site);
        // (The model's lock needs no freeing; glibc's destroy only checks.)
        return 0;
    }
    let f =
        real!(c"pthread_mutex_destroy"; unsafe extern "C" fn(*mut libc::pthread_mutex_t) -> c_int);
    // SAFETY: passed on.
    unsafe { f(m) }
}
with_pc!(pthread_mutex_destroy(m: *mut libc::pthread_mutex_t) -> c_int, "rsi", mutex_destroy_impl);

// ---- yielding, sleeping ---------------------------------------------------------

extern "C" fn yield_impl(pc: usize) -> c_int {
    runtime_entry!();
    let kept = crate::process::caller_state();
    if modelled() {
        memory::program_spin_hint(memory::site(pc), Some(kept));
    }
    0
}
with_pc!(sched_yield() -> c_int, "rdi", yield_impl);
with_pc!(pthread_yield() -> c_int, "rdi", yield_impl);

// ---- assertions and the end of the program ----------------------------------------

/// A failed `assert`: the execution fails with the assertion's text.
#[unsafe(no_mangle)]
pub extern "C-unwind" fn __assert_fail(
    expr: *const c_char,
    file: *const c_char,
    line: u32,
    func: *const c_char,
) -> ! {
    runtime_entry!();
    let text = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: assert passes C strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let msg = format!(
        "assertion `{}` failed at {}:{line} in {}",
        text(expr),
        text(file),
        crate::image::symbols::function_name(&text(func))
    );
    if !modelled() {
        eprintln!("c11check: {msg} (outside the model)");
        // SAFETY: ends the process.
        unsafe { libc::_exit(134) }
    }
    fail(msg)
}

/// CDSChecker's `MODEL_ASSERT` (see `include/cdschecker/model-assert.h`):
/// as a failed `assert`, also under `NDEBUG`.
#[unsafe(no_mangle)]
pub extern "C-unwind" fn c11check_assert_fail(
    expr: *const c_char,
    file: *const c_char,
    line: u32,
    func: *const c_char,
) -> ! {
    runtime_entry!();
    __assert_fail(expr, file, line, func)
}

/// `abort()`: the execution fails.
#[unsafe(no_mangle)]
pub extern "C-unwind" fn abort() -> ! {
    runtime_entry!();
    if !modelled() {
        let f = real!(c"abort"; unsafe extern "C" fn() -> !);
        // SAFETY: no arguments.
        unsafe { f() }
    }
    match handled_cxx_exception() {
        Some(ty) => {
            let what = match handled_exception_what() {
                Some(w) => format!(", what(): \"{w}\""),
                None => String::new(),
            };
            fail(format!(
                "an uncaught C++ exception of type `{ty}`{what}: std::terminate was called, which called abort()"
            ))
        }
        None => fail("the program called abort()".to_string()),
    }
}

/// `what()` of the C++ exception the calling thread is handling, when it
/// is a `std::exception`: found as a `catch (const std::exception &)`
/// would (the catch type's `__do_catch` adjusts the object to its base),
/// then its virtual `what()`, through the Itanium C++ ABI's layouts as
/// libstdc++ has them on x86-64: `__cxa_get_globals()` starts with the
/// innermost handled exception's header, whose first word is its type and
/// which the thrown object follows ([`CXA_EXCEPTION_SIZE`] bytes on);
/// `type_info`'s fifth virtual function is `__do_catch`, and
/// `std::exception`'s third is `what()`.
fn handled_exception_what() -> Option<String> {
    type CurrentType = unsafe extern "C" fn() -> *const c_void;
    type Globals = unsafe extern "C" fn() -> *const *const c_void;
    type DoCatch =
        unsafe extern "C" fn(*const c_void, *const c_void, *mut *mut c_void, c_uint) -> bool;
    type What = unsafe extern "C" fn(*const c_void) -> *const c_char;
    /// `sizeof(__cxa_exception)` in libstdc++ on x86-64.
    const CXA_EXCEPTION_SIZE: usize = 112;
    let look = |n: &CStr| {
        // SAFETY: dlsym with a valid C string.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, n.as_ptr()) };
        (!p.is_null()).then_some(p)
    };
    let (current, globals, exception_info) = (
        look(c"__cxa_current_exception_type")?,
        look(c"__cxa_get_globals")?,
        look(c"_ZTISt9exception")?,
    );
    // The exception is the thread's: libstdc++ keeps it in the thread's
    // thread-locals.
    let me = crate::process::tls::current_thread();
    // SAFETY: libstdc++'s functions and layouts (see the doc); the header
    // is checked against the handled exception's type before use.
    let w = crate::process::tls::as_program(me, || unsafe {
        let thrown_type = std::mem::transmute::<*mut c_void, CurrentType>(current)();
        if thrown_type.is_null() {
            return None;
        }
        let g = std::mem::transmute::<*mut c_void, Globals>(globals)();
        if g.is_null() || (*g).is_null() {
            return None;
        }
        let header = *g as *const u8;
        if *(header as *const *const c_void) != thrown_type {
            return None;
        }
        let mut object = header.add(CXA_EXCEPTION_SIZE) as *mut c_void;
        let vtable = *(exception_info as *const *const usize);
        let do_catch = std::mem::transmute::<usize, DoCatch>(*vtable.add(4));
        if !do_catch(exception_info, thrown_type, &mut object, 1) || object.is_null() {
            return None;
        }
        let vtable = *(object as *const *const usize);
        let what = std::mem::transmute::<usize, What>(*vtable.add(2));
        Some(what(object))
    })?;
    // SAFETY: `what()`'s C string.
    (!w.is_null()).then(|| unsafe { CStr::from_ptr(w) }.to_string_lossy().into_owned())
}

/// The (demangled) type of the C++ exception the calling thread is
/// handling, if any: at `abort()` from `std::terminate`, the one nothing
/// caught. `None` when the program has no C++ runtime.
fn handled_cxx_exception() -> Option<String> {
    type CurrentType = unsafe extern "C" fn() -> *const c_void;
    type Demangle =
        unsafe extern "C" fn(*const c_char, *mut c_char, *mut usize, *mut c_int) -> *mut c_char;
    let look = |n: &CStr| {
        // SAFETY: dlsym with a valid C string.
        unsafe { libc::dlsym(libc::RTLD_DEFAULT, n.as_ptr()) }
    };
    let current = look(c"__cxa_current_exception_type");
    if current.is_null() {
        return None;
    }
    // SAFETY: libstdc++'s `__cxa_current_exception_type`, no arguments,
    // asked as the thread (the exception is in its thread-locals).
    let info = crate::process::tls::as_program(crate::process::tls::current_thread(), || unsafe {
        std::mem::transmute::<*mut c_void, CurrentType>(current)()
    });
    if info.is_null() {
        return None;
    }
    // A `std::type_info` is its vtable pointer, then its mangled name.
    // SAFETY: `info` points to the exception's `type_info`.
    let name = unsafe { *(info as *const *const c_char).add(1) };
    if name.is_null() {
        return None;
    }
    // SAFETY: the type's name, a C string (a leading `*` marks a local type).
    let mangled = unsafe { CStr::from_ptr(name) };
    let mangled = mangled
        .to_bytes()
        .strip_prefix(b"*")
        .unwrap_or(mangled.to_bytes());
    let raw = String::from_utf8_lossy(mangled).into_owned();
    let demangle = look(c"__cxa_demangle");
    if demangle.is_null() {
        return Some(raw);
    }
    let c = std::ffi::CString::new(raw.clone()).ok()?;
    let mut status: c_int = -1;
    // SAFETY: `__cxa_demangle` with a C string, letting it allocate.
    let out = unsafe {
        std::mem::transmute::<*mut c_void, Demangle>(demangle)(
            c.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut status,
        )
    };
    if status != 0 || out.is_null() {
        return Some(raw);
    }
    // SAFETY: a C string `__cxa_demangle` allocated with malloc.
    let s = unsafe { CStr::from_ptr(out) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: as above.
    unsafe { libc::free(out.cast()) };
    Some(s)
}

/// `exit(status)`, `_exit`, `_Exit` in a modelled thread (any thread,
/// `main` too) end the program: the thread stops there, the others run as
/// far as they can (the exit is delayed, as a scheduler may) and are then
/// stopped, none of them stuck or spinning; a `join` of the exiting thread
/// never returns. No `atexit` handler runs, nothing is flushed. Outside
/// the model: the process.
extern "C" fn exit_impl(status: c_int, pc: usize) {
    runtime_entry!();
    if !modelled() {
        let f = real!(c"exit"; unsafe extern "C" fn(c_int) -> !);
        // SAFETY: passed on.
        unsafe { f(status) }
    }
    exit_program(status, pc)
}

extern "C" fn quick_exit_impl(status: c_int, pc: usize) {
    runtime_entry!();
    if !modelled() {
        // The runtime's own last step, or the program outside the model.
        let f = real!(c"_exit"; unsafe extern "C" fn(c_int) -> !);
        // SAFETY: passed on.
        unsafe { f(status) }
    }
    exit_program(status, pc)
}

/// The calling modelled thread ends the program (see [`exit_impl`]).
fn exit_program(status: c_int, pc: usize) -> ! {
    let site = memory::site(pc);
    memory::flush_pending();
    c11check_runtime::exit_program(status, site)
}
with_pc!(exit(status: c_int), "rsi", exit_impl);
with_pc!(_exit(status: c_int), "rsi", quick_exit_impl);
with_pc!(_Exit(status: c_int), "rsi", quick_exit_impl);

// ---- GenMC's verifier functions ----------------------------------------------------

extern "C" fn assume_impl(cond: c_int, pc: usize) {
    runtime_entry!();
    if modelled() && cond == 0 {
        memory::flush_pending();
        c11check_runtime::block(BlockReason::Assume, memory::site(pc));
    }
}
with_pc!(__VERIFIER_assume(c: c_int), "rsi", assume_impl);

/// Input values are not explored: 0.
#[unsafe(no_mangle)]
pub extern "C" fn __VERIFIER_nondet_int() -> c_int {
    runtime_entry!();
    0
}

/// A loop's turn begins (GenMC's marker): nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn __VERIFIER_loop_begin() {}

/// A spinning turn begins (GenMC's marker): nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn __VERIFIER_spin_start() {}

extern "C" fn spin_end_impl(cond: c_int, pc: usize) {
    runtime_entry!();
    let kept = crate::process::caller_state();
    if modelled() && cond == 0 {
        memory::program_spin_hint(memory::site(pc), Some(kept));
    }
}
with_pc!(__VERIFIER_spin_end(c: c_int), "rsi", spin_end_impl);

extern "C" fn failed_turn_impl(pc: usize) {
    runtime_entry!();
    if modelled() {
        memory::program_failed_turn(memory::site(pc));
    }
}
with_pc!(c11check_failed_wait_turn(), "rdi", failed_turn_impl);

// ---- barriers -------------------------------------------------------------------

/// Per barrier (by address): the execution it was set up in and its count;
/// per barrier and thread: how many times the thread passed it.
type BarrierCounts = std::collections::HashMap<usize, (u32, u64)>;
type BarrierRounds = std::collections::HashMap<(usize, u32), (u32, u64)>;

thread_local! {
    static BARRIERS: RefCell<BarrierCounts> = RefCell::new(BarrierCounts::new());
    static ROUNDS: RefCell<BarrierRounds> = RefCell::new(BarrierRounds::new());
}

extern "C" fn barrier_init_impl(
    b: *mut libc::pthread_barrier_t,
    attr: *const libc::pthread_barrierattr_t,
    count: u32,
    pc: usize,
) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        let f = real!(c"pthread_barrier_init"; unsafe extern "C" fn(*mut libc::pthread_barrier_t, *const libc::pthread_barrierattr_t, u32) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(b, attr, count) };
    }
    if count == 0 {
        return libc::EINVAL;
    }
    let site = memory::site(pc);
    memory::begin(site);
    lifetimes::init(lifetimes::Kind::Barrier, b as usize, site);
    let g = c11check_runtime::generation();
    BARRIERS.with(|m| m.borrow_mut().insert(b as usize, (g, count as u64)));
    // The two arrival counts start at `count`, the permits at 0: written
    // in memory (locations are bound from it on their first use), and as
    // plain stores to those already in use (a barrier set up again).
    let words = b as *mut u64;
    // SAFETY: a `pthread_barrier_t` is 32 bytes.
    unsafe {
        *words = count as u64;
        *words.add(1) = count as u64;
        *words.add(2) = 0;
        *words.add(3) = 0;
    }
    memory::store_range(b as usize, b as usize + 32, memory::site(pc));
    0
}
with_pc!(pthread_barrier_init(b: *mut libc::pthread_barrier_t, a: *const libc::pthread_barrierattr_t, n: u32) -> c_int, "rcx", barrier_init_impl);

/// Waits until `count` threads have arrived in this round: the runtime's
/// barrier (`c11check_runtime::barrier`) over the barrier's four words, two
/// arrival counts (`b`, `b + 8`) and two permit counts (`b + 16`,
/// `b + 24`). The round's leader returns `PTHREAD_BARRIER_SERIAL_THREAD`.
extern "C" fn barrier_wait_impl(b: *mut libc::pthread_barrier_t, pc: usize) -> c_int {
    runtime_entry!();
    if !crate::memory::program_call(pc) {
        let f = real!(c"pthread_barrier_wait"; unsafe extern "C" fn(*mut libc::pthread_barrier_t) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(b) };
    }
    let g = c11check_runtime::generation();
    let count = BARRIERS.with(|m| {
        m.borrow()
            .get(&(b as usize))
            .filter(|e| e.0 == g)
            .map(|e| e.1)
    });
    // A barrier has no static initializer: one `_init` never made is used
    // uninitialized (and one destroyed since, after its end).
    lifetimes::use_if(
        lifetimes::Kind::Barrier,
        b as usize,
        memory::site(pc),
        "waits at",
        || count.is_some(),
    );
    let Some(count) = count else {
        return libc::EINVAL;
    };
    let me = crate::process::tls::current_thread();
    let round = ROUNDS.with(|r| {
        let mut r = r.borrow_mut();
        let e = r.entry((b as usize, me)).or_insert((g, 0));
        if e.0 != g {
            *e = (g, 0);
        }
        e.1 += 1;
        e.1
    });
    let site = memory::site(pc);
    memory::begin(site);
    memory::BARRIERS_SEEN.store(true, std::sync::atomic::Ordering::Relaxed);
    memory::internal(|| barrier_wait(b as usize, count, round, site))
}

/// The modelled part of `pthread_barrier_wait` (see above).
fn barrier_wait(b: usize, count: u64, round: u64, site: Site) -> c_int {
    let counts = barrier::BarrierCounts {
        arrivals: [memory::lock_cell(b), memory::lock_cell(b + 8)],
        permits: [memory::lock_cell(b + 16), memory::lock_cell(b + 24)],
    };
    match barrier::wait(&counts, count as Value, round, site) {
        true => libc::PTHREAD_BARRIER_SERIAL_THREAD,
        false => 0,
    }
}
with_pc!(pthread_barrier_wait(b: *mut libc::pthread_barrier_t) -> c_int, "rsi", barrier_wait_impl);

/// Nothing to free; a barrier used afterwards is the program's bug.
extern "C" fn barrier_destroy_impl(b: *mut libc::pthread_barrier_t, pc: usize) -> c_int {
    runtime_entry!();
    if crate::memory::program_call(pc) {
        let g = c11check_runtime::generation();
        let made = BARRIERS.with(|m| m.borrow().get(&(b as usize)).is_some_and(|e| e.0 == g));
        let site = memory::site(pc);
        memory::begin(site);
        lifetimes::destroy_if(lifetimes::Kind::Barrier, b as usize, site, || made);
    }
    0
}
with_pc!(pthread_barrier_destroy(b: *mut libc::pthread_barrier_t) -> c_int, "rsi", barrier_destroy_impl);
