//! `memcpy`, `memmove` and `memset`, which the instrumentation leaves as
//! calls: the program's calls are plain stores to the locations they
//! overwrite ([`crate::memory::store_range`]).
//!
//! Every call of these names from the program and the other libraries
//! lands here: calls from outside the program go to glibc's. The runtime's
//! own calls (the compiler makes one of every copy of a slice) skip that
//! test: the runtime is linked with `--wrap=memcpy` and the like (build.rs,
//! and `ld -r` for the static archive), which makes them calls of
//! `__wrap_memcpy`, a jump to glibc's (below). The program's copies are
//! `rep movsb`/`rep stosb` (a copy written in Rust would be compiled back
//! into a call to `memcpy`).

use crate::memory;

/// Copies `n` bytes forwards.
///
/// # Safety
/// The ranges must be valid; overlapping only with `dst` below `src`.
pub(crate) unsafe fn copy_forward(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: guaranteed by the caller; the direction flag is clear (ABI).
    unsafe {
        std::arch::asm!("rep movsb", inout("rcx") n => _, inout("rdi") dst => _, inout("rsi") src => _, options(nostack, preserves_flags))
    };
}

/// Copies `n` bytes backwards (for `memmove` with `dst` above `src`).
///
/// # Safety
/// The ranges must be valid.
unsafe fn copy_backward(dst: *mut u8, src: *const u8, n: usize) {
    if n == 0 {
        return;
    }
    // SAFETY: guaranteed by the caller; the direction flag is set for the
    // copy and cleared again, as the ABI requires.
    unsafe {
        std::arch::asm!(
            "std",
            "rep movsb",
            "cld",
            inout("rcx") n => _,
            inout("rdi") dst.add(n - 1) => _,
            inout("rsi") src.add(n - 1) => _,
            options(nostack)
        )
    };
}

/// Whether a call from `pc` writes memory the model tracks.
fn tracked(pc: usize, n: usize) -> bool {
    n > 0 && crate::image::regions::from_program(pc) && memory::modelled()
}

/// Checks a program's copy of `n` bytes to `dst` (from `src`) against
/// the heap's blocks before it happens (see [`crate::memory::heap::check_access`]).
fn check_copy(dst: *mut u8, src: Option<*const u8>, n: usize, pc: usize) {
    if tracked(pc, n) {
        let site = crate::memory::site_of(pc);
        if let Some(src) = src {
            crate::memory::heap::check_access(src as usize, n, "reads", site);
        }
        crate::memory::heap::check_access(dst as usize, n, "writes", site);
    }
}

type CopyFn = unsafe extern "C" fn(*mut u8, *const u8, usize) -> *mut u8;
type SetFn = unsafe extern "C" fn(*mut u8, i32, usize) -> *mut u8;

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// glibc's definitions of memcpy, memmove and memset, found on first use
/// (0: not yet; 1: being looked up, when a call made meanwhile copies
/// itself).
static LIBC: [AtomicUsize; 3] = [const { AtomicUsize::new(0) }; 3];

/// glibc's definition of function `i` of [`LIBC`], if known.
fn libc_fn(i: usize, name: &std::ffi::CStr) -> Option<usize> {
    match LIBC[i].load(Relaxed) {
        0 => {
            LIBC[i].store(1, Relaxed);
            // SAFETY: dlsym with a valid C string.
            let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize;
            LIBC[i].store(if p == 0 { 1 } else { p }, Relaxed);
            (p != 0).then_some(p)
        }
        1 => None,
        p => Some(p),
    }
}

extern "C" fn memcpy_impl(dst: *mut u8, src: *const u8, n: usize, pc: usize) -> *mut u8 {
    runtime_entry!();
    if !crate::image::regions::from_program(pc) {
        // libc's, the runtime's own copies: glibc's (faster on small sizes).
        if let Some(f) = libc_fn(0, c"memcpy") {
            // SAFETY: glibc's memcpy, with the caller's arguments.
            return unsafe { std::mem::transmute::<usize, CopyFn>(f)(dst, src, n) };
        }
    }
    check_copy(dst, Some(src), n, pc);
    // SAFETY: the caller's ranges, which memcpy requires not to overlap.
    unsafe { copy_forward(dst, src, n) };
    if tracked(pc, n) {
        memory::store_range(dst as usize, dst as usize + n, crate::memory::site_of(pc));
    }
    dst
}

extern "C" fn memmove_impl(dst: *mut u8, src: *const u8, n: usize, pc: usize) -> *mut u8 {
    runtime_entry!();
    if !crate::image::regions::from_program(pc) {
        if let Some(f) = libc_fn(1, c"memmove") {
            // SAFETY: glibc's memmove, with the caller's arguments.
            return unsafe { std::mem::transmute::<usize, CopyFn>(f)(dst, src, n) };
        }
    }
    check_copy(dst, Some(src), n, pc);
    // SAFETY: the caller's ranges; the direction avoids clobbering.
    unsafe {
        if (dst as usize) > (src as usize) && (dst as usize) < src as usize + n {
            copy_backward(dst, src, n)
        } else {
            copy_forward(dst, src, n)
        }
    };
    if tracked(pc, n) {
        memory::store_range(dst as usize, dst as usize + n, crate::memory::site_of(pc));
    }
    dst
}

extern "C" fn memset_impl(dst: *mut u8, c: i32, n: usize, pc: usize) -> *mut u8 {
    runtime_entry!();
    if !crate::image::regions::from_program(pc) {
        if let Some(f) = libc_fn(2, c"memset") {
            // SAFETY: glibc's memset, with the caller's arguments.
            return unsafe { std::mem::transmute::<usize, SetFn>(f)(dst, c, n) };
        }
    }
    check_copy(dst, None, n, pc);
    // SAFETY: the caller's range.
    unsafe {
        std::arch::asm!("rep stosb", inout("rcx") n => _, inout("rdi") dst => _, in("al") c as u8, options(nostack, preserves_flags))
    };
    if tracked(pc, n) {
        memory::store_range(dst as usize, dst as usize + n, crate::memory::site_of(pc));
    }
    dst
}

with_pc!(memcpy(d: *mut u8, s: *const u8, n: usize) -> *mut u8, "rcx", memcpy_impl);
with_pc!(memmove(d: *mut u8, s: *const u8, n: usize) -> *mut u8, "rcx", memmove_impl);
with_pc!(memset(d: *mut u8, c: i32, n: usize) -> *mut u8, "rcx", memset_impl);

// The runtime's own calls of memcpy, memmove and memset (renamed by the
// linker's `--wrap`) jump through `c11check_own_mem`: at first to the
// functions below, which look glibc's up and put them there. (glibc's
// cannot be named by symbol version: the loader would take this library's
// unversioned `memcpy` for `memcpy@GLIBC_2.14`.)
std::arch::global_asm!(
    ".pushsection .data.c11check_own_mem,\"aw\",@progbits",
    ".p2align 3",
    ".globl c11check_own_mem",
    ".hidden c11check_own_mem",
    "c11check_own_mem:",
    ".quad {memcpy}",
    ".quad {memmove}",
    ".quad {memset}",
    ".popsection",
    ".globl __wrap_memcpy",
    ".hidden __wrap_memcpy",
    "__wrap_memcpy: jmp qword ptr [rip + c11check_own_mem]",
    ".globl __wrap_memmove",
    ".hidden __wrap_memmove",
    "__wrap_memmove: jmp qword ptr [rip + c11check_own_mem + 8]",
    ".globl __wrap_memset",
    ".hidden __wrap_memset",
    "__wrap_memset: jmp qword ptr [rip + c11check_own_mem + 16]",
    memcpy = sym own_memcpy,
    memmove = sym own_memmove,
    memset = sym own_memset,
);

extern "C" {
    /// Where the runtime's own memcpy, memmove and memset calls go.
    static c11check_own_mem: [AtomicUsize; 3];
}

/// glibc's function `i` of [`LIBC`], put in `c11check_own_mem` for the
/// runtime's later calls.
fn own(i: usize, name: &std::ffi::CStr) -> Option<usize> {
    let f = libc_fn(i, name)?;
    // SAFETY: the table above, of atomics.
    unsafe { c11check_own_mem[i].store(f, Relaxed) };
    Some(f)
}

/// The runtime's first memcpy (and any made while glibc's is looked up).
extern "C" fn own_memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    runtime_entry!();
    match own(0, c"memcpy") {
        // SAFETY: glibc's memcpy, with the caller's arguments.
        Some(f) => unsafe { std::mem::transmute::<usize, CopyFn>(f)(dst, src, n) },
        None => {
            // SAFETY: the caller's non-overlapping ranges.
            unsafe { copy_forward(dst, src, n) };
            dst
        }
    }
}

/// The runtime's first memmove.
extern "C" fn own_memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    runtime_entry!();
    match own(1, c"memmove") {
        // SAFETY: glibc's memmove, with the caller's arguments.
        Some(f) => unsafe { std::mem::transmute::<usize, CopyFn>(f)(dst, src, n) },
        None => {
            // SAFETY: the caller's ranges; the direction avoids clobbering.
            unsafe {
                if (dst as usize) > (src as usize) && (dst as usize) < src as usize + n {
                    copy_backward(dst, src, n)
                } else {
                    copy_forward(dst, src, n)
                }
            };
            dst
        }
    }
}

/// The runtime's first memset.
extern "C" fn own_memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
    runtime_entry!();
    match own(2, c"memset") {
        // SAFETY: glibc's memset, with the caller's arguments.
        Some(f) => unsafe { std::mem::transmute::<usize, SetFn>(f)(dst, c, n) },
        None => {
            // SAFETY: the caller's range.
            unsafe {
                std::arch::asm!("rep stosb", inout("rcx") n => _, inout("rdi") dst => _, in("al") c as u8, options(nostack, preserves_flags))
            };
            dst
        }
    }
}
