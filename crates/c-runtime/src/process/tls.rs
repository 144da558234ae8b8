//! Each modelled thread's thread-local storage. All fibers run on one OS
//! thread, so they share its TLS blocks: the program's `__thread`,
//! `_Thread_local` and `thread_local` variables (the executable's TLS
//! segment), libstdc++'s (`std::call_once` hands its callable over in
//! one, exceptions in flight live in another) and libc's `errno`. When a
//! fiber stops, its values are saved; before it runs again they are put
//! back. A new thread starts from each segment's initial image (`.tdata`,
//! then zeros), as a new pthread does; `main` from the values it had when
//! `main` was taken over.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The static TLS area's range (start, end): accesses there are each
/// thread's own and are not events (see [`contains`]).
static RANGE: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// Whether `addr` is in this OS thread's static TLS area: a thread-local
/// variable, which no other thread can reach by name. (A pointer to one
/// handed to another thread reaches that thread's own copy here: such
/// programs are not supported.)
#[inline]
pub fn contains(addr: usize) -> bool {
    addr >= RANGE[0].load(Relaxed) && addr < RANGE[1].load(Relaxed)
}

/// Where one module's TLS block is in this OS thread, and its image.
struct Block {
    addr: usize,
    /// The initial contents of a new thread's block.
    image: Vec<u8>,
    /// `main`'s contents when exploration started.
    main: Vec<u8>,
}

thread_local! {
    /// The blocks swapped at fiber switches: the executable's, then
    /// libstdc++'s.
    static BLOCKS: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
    /// Per modelled thread: its saved blocks (one after the other) and
    /// `errno`, and whether they were saved in this execution (the
    /// buffers are reused).
    static SAVED: RefCell<Vec<(Vec<u8>, i32, bool)>> = const { RefCell::new(Vec::new()) };
}

/// Whether the module named `name` (the loader's path; empty for the
/// executable) has its TLS swapped per modelled thread.
fn swapped(name: &[u8]) -> bool {
    name.is_empty() || name.windows(9).any(|w| w == b"libstdc++")
}

/// Finds the executable's TLS segment; installs the fiber hooks.
pub fn init() {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        out: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid entry; `out` is our list.
        let (info, out) = unsafe { (&*info, &mut *(out as *mut Vec<Block>)) };
        let name = if info.dlpi_name.is_null() {
            &[][..]
        } else {
            // SAFETY: the loader's C string.
            unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }.to_bytes()
        };
        if !swapped(name) {
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
                out.push(Block { addr, image, main });
            }
        }
        0
    }
    let mut blocks: Vec<Block> = Vec::new();
    // SAFETY: the callback only reads the loader's entries.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut blocks as *mut _ as *mut libc::c_void) };
    if let Some(own) = crate::image::linked() {
        blocks = without_runtime(blocks, own.tls);
    }
    if let Some(lo) = blocks.iter().map(|b| b.addr).min() {
        let hi = blocks
            .iter()
            .map(|b| b.addr + b.image.len())
            .max()
            .unwrap_or(lo);
        RANGE[0].store(lo, Relaxed);
        RANGE[1].store(hi, Relaxed);
    }
    // Every module's static TLS (libc's `errno` among it) lies just below
    // the thread pointer: the whole area is thread-local.
    let tp = thread_pointer();
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
    BLOCKS.with(|b| *b.borrow_mut() = blocks);
    c11check_runtime::set_fiber_hooks(enter, leave);
}

/// The blocks without the runtime's own thread-locals `(start, end)`,
/// which are in the executable's block when it is linked statically: they
/// are the OS thread's, not a modelled thread's.
fn without_runtime(blocks: Vec<Block>, own: (usize, usize)) -> Vec<Block> {
    let mut out = Vec::new();
    for b in blocks {
        let kept = crate::image::without(vec![(b.addr, b.addr + b.image.len())], &[own]);
        for (s, e) in kept {
            let (i, j) = (s - b.addr, e - b.addr);
            out.push(Block {
                addr: s,
                image: b.image[i..j].to_vec(),
                main: b.main[i..j].to_vec(),
            });
        }
    }
    out
}

/// The thread pointer (`%fs:0` holds its own address on x86-64).
#[inline]
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

/// A new execution: every thread starts afresh, and `main` (running now)
/// gets the values it had when exploration started.
pub fn reset() {
    SAVED.with(|s| s.borrow_mut().iter_mut().for_each(|e| e.2 = false));
    BLOCKS.with(|b| {
        for b in b.borrow().iter() {
            // SAFETY: this OS thread's TLS block of that module.
            unsafe {
                std::ptr::copy_nonoverlapping(b.main.as_ptr(), b.addr as *mut u8, b.main.len())
            };
        }
    });
    // SAFETY: errno is this OS thread's.
    unsafe { *errno() = 0 };
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
static IN_FIBER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static MODEL_THREAD: AtomicUsize = AtomicUsize::new(0);

/// Whether a modelled thread's code is running on this OS thread now.
#[inline]
pub fn in_fiber() -> bool {
    IN_FIBER.load(Relaxed) && thread_pointer() == MODEL_THREAD.load(Relaxed)
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

/// Thread `t` is about to run: put its values in place.
fn enter(t: u32) {
    MODEL_THREAD.store(thread_pointer(), Relaxed);
    RUNNING_THREAD.store(t, Relaxed);
    IN_FIBER.store(true, Relaxed);
    BLOCKS.with(|b| {
        let blocks = b.borrow();
        SAVED.with(|s| {
            let s = s.borrow();
            let saved = s.get(t as usize).filter(|e| e.2);
            let mut at = 0;
            for b in blocks.iter() {
                let n = b.image.len();
                let bytes: &[u8] = match saved {
                    Some((v, _, _)) => &v[at..at + n],
                    None if t == 0 => &b.main,
                    None => &b.image,
                };
                at += n;
                // SAFETY: this OS thread's TLS block of that module.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.addr as *mut u8, n) };
            }
            let err = saved.map_or(0, |e| e.1);
            // SAFETY: errno is this OS thread's.
            unsafe { *errno() = err };
        })
    });
}

/// Thread `t` stopped: keep its values.
fn leave(t: u32) {
    IN_FIBER.store(false, Relaxed);
    // SAFETY: errno is this OS thread's.
    let err = unsafe { *errno() };
    BLOCKS.with(|b| {
        let blocks = b.borrow();
        SAVED.with(|s| {
            let mut s = s.borrow_mut();
            let t = t as usize;
            if s.len() <= t {
                s.resize_with(t + 1, || (Vec::new(), 0, false));
            }
            let e = &mut s[t];
            e.0.clear();
            for b in blocks.iter() {
                // SAFETY: this OS thread's TLS block of that module.
                e.0.extend_from_slice(unsafe {
                    std::slice::from_raw_parts(b.addr as *const u8, b.image.len())
                });
            }
            e.1 = err;
            e.2 = true;
        })
    });
}
