//! `memcpy`, `memmove` and `memset`, which the instrumentation leaves as
//! calls: the program's calls are plain stores to the locations they
//! overwrite ([`crate::memory::store_range`]).
//!
//! The copies themselves are `rep movsb`/`rep stosb`: every call of these
//! names in the process lands here (the runtime's own too), and a copy
//! written in Rust would be compiled back into a call to `memcpy`.

use crate::memory;

/// Copies `n` bytes forwards.
///
/// # Safety
/// The ranges must be valid; overlapping only with `dst` below `src`.
unsafe fn copy_forward(dst: *mut u8, src: *const u8, n: usize) {
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
    n > 0 && crate::heap::from_program(pc) && memory::modelled()
}

extern "C" fn memcpy_impl(dst: *mut u8, src: *const u8, n: usize, pc: usize) -> *mut u8 {
    // SAFETY: the caller's ranges, which memcpy requires not to overlap.
    unsafe { copy_forward(dst, src, n) };
    if tracked(pc, n) {
        memory::store_range(dst as usize, dst as usize + n, crate::memory::site_of(pc));
    }
    dst
}

extern "C" fn memmove_impl(dst: *mut u8, src: *const u8, n: usize, pc: usize) -> *mut u8 {
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
