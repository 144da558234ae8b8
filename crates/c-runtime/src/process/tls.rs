//! Each modelled thread's thread-local storage. All fibers run on one OS
//! thread, but a modelled thread's code runs with a thread pointer
//! (`%fs` base) of its own, as in a real thread: its `__thread`,
//! `_Thread_local` and `thread_local` variables (the executable's TLS
//! segment and every library's), libstdc++'s (`std::call_once` hands its
//! callable over in one, exceptions in flight live in another) and libc's
//! `errno` are its own, at their own addresses (a queue that takes
//! `&thread_local_var` as a thread's identity sees two threads as two).
//!
//! `main` keeps the OS thread's own. Every other modelled thread gets the
//! thread control block of a *helper*: a real pthread made once per
//! thread number, parked for good, whose stack lies in one region of
//! ours (so an address tells whether it is a helper's). glibc builds a
//! helper's TLS (all modules' blocks, its DTV) as for any thread; before
//! the modelled thread starts, the program's blocks are set to their
//! initial images, as a new pthread's are.
//!
//! The runtime's own thread-locals (and Rust's) are the OS thread's: every
//! entry point from the program switches the thread pointer to the OS
//! thread's for its duration ([`RuntimeTls`]), carrying `errno` across,
//! and the runtime switches to a program thread's around the program's
//! code it calls (start routines, once routines, destructors:
//! [`as_program`]). The invariant: runtime code runs with the OS thread's
//! thread pointer; a modelled thread's code with its own.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// The static TLS area's range (start, end) of the OS thread (`main`'s):
/// accesses there are each thread's own and are not events (see
/// [`contains`]).
static RANGE: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// The helpers' region (start, length): their stacks, thread control
/// blocks and static TLS, nothing else.
pub(crate) static HELPER_REGION: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// How many helpers the region holds (modelled threads 1..=HELPERS).
const HELPERS: usize = 1024;

/// Each helper's thread pointer (0: not made yet), by modelled thread - 1.
static HELPER_TP: [AtomicUsize; HELPERS] = [const { AtomicUsize::new(0) }; HELPERS];

/// The thread pointer of the OS thread that runs the modelled threads.
pub(crate) static RUNTIME_TP: AtomicUsize = AtomicUsize::new(0);

/// `errno`'s distance below the thread pointer (the same in every thread:
/// libc's static TLS).
static ERRNO_BELOW_TP: AtomicUsize = AtomicUsize::new(0);

/// Whether the CPU and kernel let user code write the `%fs` base
/// (`wrfsbase`); else `arch_prctl`, a system call.
static FSGSBASE: AtomicBool = AtomicBool::new(false);

/// Whether `addr` is thread-local storage: in the OS thread's static TLS
/// area or a helper's. No other thread reaches it by name; the model does
/// not judge accesses there. (A pointer to one handed to another thread
/// reaches the right variable, unjudged.)
#[inline]
pub fn contains(addr: usize) -> bool {
    (addr >= RANGE[0].load(Relaxed) && addr < RANGE[1].load(Relaxed)) || in_helpers(addr)
}

/// Whether `addr` lies in the helpers' region.
#[inline]
fn in_helpers(addr: usize) -> bool {
    addr.wrapping_sub(HELPER_REGION[0].load(Relaxed)) < HELPER_REGION[1].load(Relaxed)
}

/// Where one module's TLS block is, and its image.
struct Block {
    /// Its distance below the thread pointer (static TLS, the same in
    /// every thread).
    below_tp: usize,
    /// The initial contents of a new thread's block.
    image: Vec<u8>,
    /// `main`'s contents when exploration started.
    main: Vec<u8>,
}

thread_local! {
    /// The program's blocks reset at a thread's start: the executable's,
    /// then libstdc++'s.
    static BLOCKS: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
}

/// Whether the module named `name` (the loader's path; empty for the
/// executable) has its TLS reset per modelled thread and execution: the
/// program's (the executable, its libraries built for ThreadSanitizer) and
/// libstdc++'s.
fn reset_per_thread(name: &[u8]) -> bool {
    name.is_empty()
        || name.windows(9).any(|w| w == b"libstdc++")
        || crate::image::regions::program_libraries()
            .iter()
            .any(|l| l.path.as_bytes() == name)
}

/// Finds the program's TLS blocks and the OS thread's static TLS area;
/// reserves the helpers' region; installs the fiber hooks.
pub fn init() {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        out: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid entry; `out` is our list.
        let (info, out) = unsafe { (&*info, &mut *(out as *mut Found)) };
        let name = if info.dlpi_name.is_null() {
            &[][..]
        } else {
            // SAFETY: the loader's C string.
            unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }.to_bytes()
        };
        if !reset_per_thread(name) {
            return 0;
        }
        // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        for h in headers {
            if h.p_type == libc::PT_TLS && !info.dlpi_tls_data.is_null() {
                let base = info.dlpi_addr as usize;
                let mut image = vec![0u8; h.p_memsz as usize];
                // SAFETY: the segment's initialised part is mapped in the file image.
                let init = unsafe {
                    std::slice::from_raw_parts(
                        (base + h.p_vaddr as usize) as *const u8,
                        h.p_filesz as usize,
                    )
                };
                image[..init.len()].copy_from_slice(init);
                let addr = info.dlpi_tls_data as usize;
                // SAFETY: this OS thread's block of the segment.
                let main =
                    unsafe { std::slice::from_raw_parts(addr as *const u8, h.p_memsz as usize) }
                        .to_vec();
                out.push((addr, image, main));
            }
        }
        0
    }
    // Known before the loader's entries are visited (it visits them too).
    let _ = crate::image::regions::program_libraries();
    let tp = thread_pointer();
    RUNTIME_TP.store(tp, Relaxed);
    ERRNO_BELOW_TP.store(tp.wrapping_sub(errno() as usize), Relaxed);
    // SAFETY: reads the auxiliary vector.
    let hwcap2 = unsafe { libc::getauxval(libc::AT_HWCAP2) };
    FSGSBASE.store(hwcap2 & HWCAP2_FSGSBASE != 0, Relaxed);
    let mut found: Found = Vec::new();
    // SAFETY: the callback only reads the loader's entries.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut found as *mut _ as *mut libc::c_void) };
    if let Some(own) = crate::image::linked() {
        found = without_runtime(found, own.tls);
    }
    if let Some(lo) = found.iter().map(|b| b.0).min() {
        let hi = found.iter().map(|b| b.0 + b.1.len()).max().unwrap_or(lo);
        RANGE[0].store(lo, Relaxed);
        RANGE[1].store(hi, Relaxed);
    }
    // Every module's static TLS (libc's `errno` among it) lies just below
    // the thread pointer: the whole area is thread-local.
    let size = static_tls_size();
    if tp != 0 && size != 0 {
        let lo = RANGE[0].load(Relaxed);
        let lo = if lo == 0 {
            tp - size
        } else {
            lo.min(tp - size)
        };
        RANGE[0].store(lo, Relaxed);
        RANGE[1].store(RANGE[1].load(Relaxed).max(tp), Relaxed);
    }
    let blocks = found
        .into_iter()
        .map(|(addr, image, main)| Block {
            below_tp: tp - addr,
            image,
            main,
        })
        .collect();
    BLOCKS.with(|b| *b.borrow_mut() = blocks);
    reserve_helpers(size);
    c11check_runtime::set_fiber_hooks(enter, leave);
    c11check_runtime::set_signal_context_hooks(runtime_context, program_context);
}

/// `HWCAP2_FSGSBASE` in the auxiliary vector's `AT_HWCAP2` (Linux, x86).
const HWCAP2_FSGSBASE: u64 = 1 << 1;

/// The modules' TLS blocks `init` finds: each one's address in this OS
/// thread, its initial image, and what this thread's block holds now.
type Found = Vec<(usize, Vec<u8>, Vec<u8>)>;

/// The blocks without the runtime's own thread-locals `(start, end)`,
/// which are in the executable's block when it is linked statically: they
/// are the OS thread's, not a modelled thread's.
fn without_runtime(blocks: Found, own: (usize, usize)) -> Found {
    let mut out = Vec::new();
    for (addr, image, main) in blocks {
        let kept = crate::image::without(vec![(addr, addr + image.len())], &[own]);
        for (s, e) in kept {
            let (i, j) = (s - addr, e - addr);
            out.push((s, image[i..j].to_vec(), main[i..j].to_vec()));
        }
    }
    out
}

/// One helper's share of the region: a small stack for the parked thread,
/// glibc's thread control block and the static TLS area.
static SLOT: AtomicUsize = AtomicUsize::new(0);

/// Reserves the helpers' region (address space only: pages are touched
/// as helpers are made).
fn reserve_helpers(static_tls: usize) {
    const PAGE: usize = 4096;
    let slot = (64 * 1024 + static_tls + 16 * 1024).next_multiple_of(PAGE);
    let len = slot * HELPERS;
    // SAFETY: a fresh private anonymous mapping, ours for good.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return;
    }
    SLOT.store(slot, Relaxed);
    HELPER_REGION[0].store(p as usize, Relaxed);
    HELPER_REGION[1].store(len, Relaxed);
}

/// A helper's body: parked for good, all signals blocked (it must never
/// run the program's or the runtime's code; its thread control block is
/// lent to a modelled thread).
extern "C" fn parked(_: *mut libc::c_void) -> *mut libc::c_void {
    loop {
        // SAFETY: `pause(2)` as a raw system call (libc's wrappers may be
        // the runtime's own).
        unsafe {
            std::arch::asm!("syscall", inlateout("rax") libc::SYS_pause => _,
                lateout("rcx") _, lateout("r11") _, options(nostack))
        };
    }
}

/// Modelled thread `t`'s thread pointer (`t` ≥ 1): its helper's, made now
/// if it is the first time.
fn helper(t: u32) -> usize {
    let i = t as usize - 1;
    if i >= HELPERS || SLOT.load(Relaxed) == 0 {
        too_many_threads(t);
    }
    let tp = HELPER_TP[i].load(Relaxed);
    if tp != 0 {
        return tp;
    }
    let slot = SLOT.load(Relaxed);
    let stack = HELPER_REGION[0].load(Relaxed) + i * slot;
    type Create = unsafe extern "C" fn(
        *mut libc::pthread_t,
        *const libc::pthread_attr_t,
        extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
        *mut libc::c_void,
    ) -> libc::c_int;
    // libc's own, not the runtime's (the next definition after ours).
    // SAFETY: dlsym with a valid C string.
    let create = unsafe { libc::dlsym(libc::RTLD_NEXT, c"pthread_create".as_ptr()) };
    if create.is_null() {
        eprintln!("c11check: libc has no pthread_create");
        std::process::exit(2);
    }
    // SAFETY: libc's `pthread_create`, of this type.
    let create = unsafe { std::mem::transmute::<*mut libc::c_void, Create>(create) };
    // SAFETY: an attribute object set to our stack; every signal blocked
    // in the new thread (it inherits this thread's mask, put back after).
    let tp = unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setstack(&mut attr, stack as *mut libc::c_void, slot);
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let mut id: libc::pthread_t = 0;
        let r = create(&mut id, &attr, parked, std::ptr::null_mut());
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        libc::pthread_attr_destroy(&mut attr);
        if r != 0 {
            eprintln!(
                "c11check: could not make thread-local storage for modelled thread {t}: {}",
                std::io::Error::from_raw_os_error(r)
            );
            std::process::exit(2);
        }
        // glibc's `pthread_t` is the thread's control block, at its
        // thread pointer (x86-64).
        id as usize
    };
    HELPER_TP[i].store(tp, Relaxed);
    tp
}

#[cold]
fn too_many_threads(t: u32) -> ! {
    eprintln!(
        "c11check: the program made more than {HELPERS} threads in one execution (thread {t}), more than c11check gives thread-local storage to"
    );
    std::process::exit(2)
}

/// Modelled thread `t` starts: its thread-local blocks get their initial
/// images and its `errno` is 0, as in a new pthread. Its thread pointer
/// (0 for `main`, which keeps the OS thread's).
pub fn thread_starts(t: u32) -> usize {
    if t == 0 {
        return 0;
    }
    let tp = helper(t);
    fill_blocks(tp, |b| &b.image);
    // SAFETY: the helper's `errno`.
    unsafe { *errno_at(tp) = 0 };
    tp
}

/// Sets the program's blocks of the thread whose thread pointer is `tp`
/// to `contents` (the initial image, or `main`'s saved values).
fn fill_blocks(tp: usize, contents: impl Fn(&Block) -> &[u8]) {
    BLOCKS.with(|b| {
        for b in b.borrow().iter() {
            let bytes = contents(b);
            // SAFETY: that thread's block of the module (static TLS lies at
            // the same distance below every thread pointer).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    (tp - b.below_tp) as *mut u8,
                    bytes.len(),
                )
            };
        }
    });
}

/// Modelled thread `t`'s thread pointer, if it has one of its own.
fn program_tp(t: u32) -> usize {
    if t == 0 {
        return 0;
    }
    HELPER_TP
        .get(t as usize - 1)
        .map_or(0, |tp| tp.load(Relaxed))
}

/// Runs the program's code `f` as modelled thread `t`: with its thread
/// pointer, `errno` carried over and back. `f` must not touch the
/// runtime's thread-locals (it calls the program; the program's calls
/// into the runtime switch back themselves).
#[inline(never)]
pub fn as_program<R>(t: u32, f: impl FnOnce() -> R) -> R {
    let tp = program_tp(t);
    if tp == 0 {
        return f();
    }
    let rt = thread_pointer();
    // SAFETY: both threads' `errno`; the thread pointer of a thread
    // control block glibc made.
    unsafe {
        let e = *errno_at(rt);
        set_thread_pointer(tp);
        *errno_at(tp) = e;
    }
    let r = f();
    // SAFETY: as above, back.
    unsafe {
        let e = *errno_at(tp);
        set_thread_pointer(rt);
        *errno_at(rt) = e;
    }
    r
}

/// The OS thread's thread pointer for the runtime's code while an entry
/// point called by a modelled thread runs (see the module's
/// documentation). Made first in every entry point.
pub struct RuntimeTls(usize);

impl RuntimeTls {
    /// Switches to the OS thread's thread pointer if a modelled thread's
    /// own is in place.
    #[inline(always)]
    pub fn enter() -> Self {
        let tp = thread_pointer();
        if !in_helpers(tp) {
            return RuntimeTls(0);
        }
        let rt = RUNTIME_TP.load(Relaxed);
        // SAFETY: both threads' `errno`; the OS thread's thread pointer.
        unsafe {
            let e = *errno_at(tp);
            set_thread_pointer(rt);
            *errno_at(rt) = e;
        }
        RuntimeTls(tp)
    }
}

impl Drop for RuntimeTls {
    #[inline(always)]
    fn drop(&mut self) {
        // An entry point left by unwinding (a fiber's stack unwound by
        // the runtime) stays in the runtime's context.
        if self.0 != 0 && !std::thread::panicking() {
            let rt = thread_pointer();
            // SAFETY: as in `enter`, back.
            unsafe {
                let e = *errno_at(rt);
                set_thread_pointer(self.0);
                *errno_at(self.0) = e;
            }
        }
    }
}

/// For the runtime's signal handlers: switches to the OS thread's thread
/// pointer; the one that was in place (0: it was already).
fn runtime_context() -> usize {
    let tp = thread_pointer();
    if !in_helpers(tp) {
        return 0;
    }
    // SAFETY: the OS thread's thread pointer.
    unsafe { set_thread_pointer(RUNTIME_TP.load(Relaxed)) };
    tp
}

/// Puts back what [`runtime_context`] replaced.
fn program_context(tp: usize) {
    if tp != 0 {
        // SAFETY: a thread pointer that was in place before.
        unsafe { set_thread_pointer(tp) };
    }
}

/// Where `errno` is for the thread whose thread pointer is `tp`.
#[inline(always)]
fn errno_at(tp: usize) -> *mut i32 {
    (tp - ERRNO_BELOW_TP.load(Relaxed)) as *mut i32
}

/// Sets this OS thread's thread pointer (`%fs` base).
///
/// # Safety
/// `tp` must be a thread control block glibc made, and the code that runs
/// until it is changed again must be the code its thread may run.
#[inline(always)]
unsafe fn set_thread_pointer(tp: usize) {
    if FSGSBASE.load(Relaxed) {
        // SAFETY: the kernel allows it (`HWCAP2_FSGSBASE`); see above.
        unsafe { std::arch::asm!("wrfsbase {}", in(reg) tp, options(nostack, preserves_flags)) };
    } else {
        const ARCH_SET_FS: usize = 0x1002;
        // SAFETY: `arch_prctl(ARCH_SET_FS, tp)` as a raw system call.
        unsafe {
            std::arch::asm!("syscall", inlateout("rax") libc::SYS_arch_prctl => _,
                in("rdi") ARCH_SET_FS, in("rsi") tp,
                lateout("rcx") _, lateout("r11") _, options(nostack))
        };
    }
}

/// The thread pointer (`%fs:0` holds its own address on x86-64).
#[inline(always)]
fn thread_pointer() -> usize {
    let tp: usize;
    // SAFETY: reads the TCB's self pointer, which glibc always sets.
    unsafe {
        std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags))
    };
    tp
}

/// The size of the static TLS area (glibc's `_dl_get_tls_static_info`), or 0.
fn static_tls_size() -> usize {
    // SAFETY: looks the loader's function up by name.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_dl_get_tls_static_info".as_ptr()) };
    if f.is_null() {
        return 0;
    }
    let (mut size, mut align) = (0usize, 0usize);
    // SAFETY: glibc's function of this type.
    unsafe {
        let f: unsafe extern "C" fn(*mut usize, *mut usize) = std::mem::transmute(f);
        f(&mut size, &mut align);
    }
    size
}

/// A new execution: `main` (running now) gets the values it had when
/// exploration started (the other threads' are set when they start).
pub fn reset() {
    RUNTIME_TP.store(thread_pointer(), Relaxed);
    fill_blocks(thread_pointer(), |b| &b.main);
    // SAFETY: errno is this OS thread's.
    unsafe { *errno() = 0 };
    SAVED_ERRNO.iter().for_each(|e| e.store(0, Relaxed));
}

fn errno() -> *mut i32 {
    // SAFETY: glibc's per-thread errno location.
    unsafe { libc::__errno_location() }
}

/// The modelled thread whose fiber runs now, whether one does, and the
/// OS thread the fibers run on (its thread pointer): kept here at each
/// switch, so that the runtime's hot paths ask a static, not the Rust
/// runtime's thread-local state (a call into the loader from a shared
/// library).
static RUNNING_THREAD: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
pub(crate) static IN_FIBER: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);
static MODEL_THREAD: AtomicUsize = AtomicUsize::new(0);

/// Whether a modelled thread's code is running on this OS thread now.
#[inline]
pub fn in_fiber() -> bool {
    if !IN_FIBER.load(Relaxed) {
        return false;
    }
    let tp = thread_pointer();
    if tp == MODEL_THREAD.load(Relaxed) {
        return true;
    }
    if in_helpers(tp) {
        runtime_entered_as_program();
    }
    false
}

/// The runtime's code runs with a modelled thread's thread pointer: an
/// entry point without [`RuntimeTls`]. Its thread-locals would be another
/// thread's; stop loudly.
#[cold]
fn runtime_entered_as_program() -> ! {
    let msg = b"c11check: internal error: the runtime was entered without its thread pointer (an entry point lacks `runtime_entry!`)\n";
    // SAFETY: write(2) of a static message, then abort.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::abort()
    }
}

/// The modelled thread running now (as `c11check_runtime::current_thread`).
#[inline]
pub fn current_thread() -> u32 {
    if in_fiber() {
        RUNNING_THREAD.load(Relaxed)
    } else {
        c11check_runtime::current_thread()
    }
}

/// Each modelled thread's `errno` as the runtime's code sees it while the
/// thread is in an entry point: the OS thread's `errno` is the running
/// thread's, kept aside while the thread waits (the other threads' calls
/// change it meanwhile) and put back before it goes on. An entry point
/// carries it from the thread's own `errno` and back (see [`RuntimeTls`]).
static SAVED_ERRNO: [std::sync::atomic::AtomicI32; HELPERS + 1] =
    [const { std::sync::atomic::AtomicI32::new(0) }; HELPERS + 1];

/// Thread `t` is about to run.
fn enter(t: u32) {
    MODEL_THREAD.store(thread_pointer(), Relaxed);
    RUNNING_THREAD.store(t, Relaxed);
    IN_FIBER.store(true, Relaxed);
    if let Some(e) = SAVED_ERRNO.get(t as usize) {
        // SAFETY: the OS thread's `errno`.
        unsafe { *errno() = e.load(Relaxed) };
    }
}

/// Thread `t` stopped.
fn leave(t: u32) {
    IN_FIBER.store(false, Relaxed);
    if let Some(e) = SAVED_ERRNO.get(t as usize) {
        // SAFETY: the OS thread's `errno`.
        e.store(unsafe { *errno() }, Relaxed);
    }
}
