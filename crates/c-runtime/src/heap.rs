//! The program's heap: `malloc`, `calloc`, `realloc`, `free` and their
//! relatives (and C++'s `operator new`/`delete`).
//!
//! During an execution each modelled thread allocates from its own arena,
//! a slice of one large reservation, by bumping a pointer; nothing is
//! reused before the execution ends, and every arena is emptied (and
//! zeroed) before the next one. So the address a thread's `k`-th
//! allocation gets depends only on that thread's own allocations, the same
//! in every execution that replays them, whatever the other threads do:
//! pointers stored in atomics compare equal across executions.
//!
//! Only the program's own calls use the arenas: a call whose return
//! address is outside the executable (libc allocating a stdio buffer, the
//! runtime itself) or made outside a modelled thread goes to glibc's
//! allocator. A block glibc made (before `main`, say) and the program frees
//! during an execution is kept: the next execution starts from the same
//! globals and may free it again.

use crate::memory::modelled;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Threads with an arena; later ones allocate from glibc.
const THREADS: usize = 256;
/// Each thread's arena (reserved, not committed).
const ARENA: usize = 256 << 20;
/// Every block starts with a header holding its size, and is aligned so.
const HEADER: usize = 16;

/// Start of the reservation (0 until made).
static BASE: AtomicUsize = AtomicUsize::new(0);
/// Bytes used in each thread's arena.
static USED: [AtomicUsize; THREADS] = [const { AtomicUsize::new(0) }; THREADS];
/// The executable's code (start, end): calls from there are the program's.
static TEXT: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// Reserves the arenas and notes where the program's code is. Called when
/// `main` is taken over.
pub fn init() {
    // SAFETY: an anonymous private mapping; no memory is committed until used.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            THREADS * ARENA,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p != libc::MAP_FAILED {
        BASE.store(p as usize, Relaxed);
    }
    let (s, e) = crate::symbols::executable_text();
    TEXT[0].store(s, Relaxed);
    TEXT[1].store(e, Relaxed);
    let _ = SYSTEM_TEXT.set(crate::symbols::system_text());
}

/// The code of libc, the loader, the unwinder and this runtime (see
/// [`crate::symbols::system_text`]).
static SYSTEM_TEXT: std::sync::OnceLock<Vec<(usize, usize)>> = std::sync::OnceLock::new();

/// Whether the call with return address `pc` comes from libc, the loader,
/// the unwinder or this runtime: its locks are not the program's.
pub fn from_system(pc: usize) -> bool {
    SYSTEM_TEXT
        .get()
        .is_some_and(|r| r.iter().any(|&(s, e)| (s..e).contains(&pc)))
}

/// Empties every arena (zeroing what was used) for a new execution.
pub fn reset() {
    let base = BASE.load(Relaxed);
    if base == 0 {
        return;
    }
    for (t, used) in USED.iter().enumerate() {
        let n = used.swap(0, Relaxed);
        if n > 0 {
            // SAFETY: the first `n` bytes of arena `t` were handed out.
            unsafe { std::ptr::write_bytes((base + t * ARENA) as *mut u8, 0, n) };
        }
    }
}

/// Whether `p` lies in an arena.
fn in_arena(p: usize) -> bool {
    let base = BASE.load(Relaxed);
    base != 0 && (base..base + THREADS * ARENA).contains(&p)
}

/// Whether the call with return address `pc` comes from the program's own
/// code (not libc's or the runtime's).
#[inline]
pub fn from_program(pc: usize) -> bool {
    (TEXT[0].load(Relaxed)..TEXT[1].load(Relaxed)).contains(&pc)
}

/// Whether a call with return address `pc` is the program's own, made in a
/// modelled thread that has an arena.
fn programs(pc: usize) -> bool {
    from_program(pc)
        && BASE.load(Relaxed) != 0
        && modelled()
        && (c11check_runtime::current_thread() as usize) < THREADS
}

/// A block of `size` bytes aligned to `align` from the current thread's
/// arena (null if it is full).
fn arena_alloc(size: usize, align: usize) -> *mut c_void {
    let t = c11check_runtime::current_thread() as usize;
    let start = BASE.load(Relaxed) + t * ARENA;
    let used = USED[t].load(Relaxed);
    let align = align.max(HEADER);
    // The block starts after its header, aligned.
    let block = (start + used + HEADER).next_multiple_of(align);
    let end = block + size.max(1);
    if end > start + ARENA {
        return std::ptr::null_mut();
    }
    // SAFETY: the header lies inside this thread's arena, before the block.
    unsafe { *((block - HEADER) as *mut usize) = size };
    USED[t].store(end.next_multiple_of(HEADER) - start, Relaxed);
    block as *mut c_void
}

/// The size of an arena block.
fn arena_size(p: usize) -> usize {
    // SAFETY: every arena block is preceded by its header.
    unsafe { *((p - HEADER) as *const usize) }
}

/// glibc's allocator under its own names.
pub(crate) mod libc_heap {
    use std::ffi::c_void;
    extern "C" {
        pub fn __libc_malloc(size: usize) -> *mut c_void;
        pub fn __libc_free(p: *mut c_void);
        pub fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
        pub fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
        pub fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
        pub fn malloc_usable_size(p: *mut c_void) -> usize;
    }
}
use libc_heap::*;

extern "C" fn malloc_impl(size: usize, pc: usize) -> *mut c_void {
    if programs(pc) {
        let p = arena_alloc(size, HEADER);
        if !p.is_null() {
            return p;
        }
    }
    // SAFETY: glibc's allocator.
    unsafe { __libc_malloc(size) }
}

extern "C" fn calloc_impl(n: usize, size: usize, pc: usize) -> *mut c_void {
    let Some(total) = n.checked_mul(size) else {
        return std::ptr::null_mut();
    };
    if programs(pc) {
        // Arena memory is zero until used in this execution, and used
        // memory is never handed out twice: the block is zero already.
        let p = arena_alloc(total, HEADER);
        if !p.is_null() {
            return p;
        }
    }
    // SAFETY: glibc's allocator.
    unsafe { __libc_calloc(n, size) }
}

extern "C" fn memalign_impl(align: usize, size: usize, pc: usize) -> *mut c_void {
    if programs(pc) && align.is_power_of_two() {
        let p = arena_alloc(size, align);
        if !p.is_null() {
            return p;
        }
    }
    // SAFETY: glibc's allocator.
    unsafe { __libc_memalign(align, size) }
}

extern "C" fn posix_memalign_impl(
    out: *mut *mut c_void,
    align: usize,
    size: usize,
    pc: usize,
) -> libc::c_int {
    if !align.is_power_of_two() || align < std::mem::size_of::<usize>() {
        return libc::EINVAL;
    }
    let p = memalign_impl(align, size, pc);
    if p.is_null() {
        return libc::ENOMEM;
    }
    // SAFETY: the caller passes where to put the block.
    unsafe { *out = p };
    0
}

extern "C" fn realloc_impl(p: *mut c_void, size: usize, pc: usize) -> *mut c_void {
    if p.is_null() {
        return malloc_impl(size, pc);
    }
    let old = p as usize;
    if in_arena(old) || (programs(pc) && modelled()) {
        // A new block; the old one is left as it is (arena blocks are not
        // reused, glibc's may be freed again by the next execution).
        let old_size = if in_arena(old) {
            arena_size(old)
        } else {
            // SAFETY: a block of glibc's.
            unsafe { malloc_usable_size(p) }
        };
        let q = if programs(pc) {
            arena_alloc(size, HEADER)
        } else {
            // SAFETY: glibc's allocator.
            unsafe { __libc_malloc(size) }
        };
        if !q.is_null() {
            // SAFETY: both blocks hold at least the bytes copied.
            unsafe {
                std::ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, old_size.min(size))
            };
        }
        return q;
    }
    // SAFETY: glibc's block, resized by glibc.
    unsafe { __libc_realloc(p, size) }
}

extern "C" fn free_impl(p: *mut c_void, pc: usize) {
    if p.is_null() || in_arena(p as usize) {
        return;
    }
    if programs(pc) {
        // A block made before the execution started: the next execution
        // frees it again, so it must stay.
        return;
    }
    // SAFETY: a block of glibc's, freed by whoever allocated it.
    unsafe { __libc_free(p) }
}

extern "C" fn sized_free_impl(p: *mut c_void, _size: usize, pc: usize) {
    free_impl(p, pc)
}

extern "C" fn aligned_new_impl(size: usize, align: usize, pc: usize) -> *mut c_void {
    memalign_impl(align, size, pc)
}

with_pc!(malloc(size: usize) -> *mut c_void, "rsi", malloc_impl);
with_pc!(calloc(n: usize, size: usize) -> *mut c_void, "rdx", calloc_impl);
with_pc!(realloc(p: *mut c_void, size: usize) -> *mut c_void, "rdx", realloc_impl);
with_pc!(free(p: *mut c_void), "rsi", free_impl);
with_pc!(memalign(align: usize, size: usize) -> *mut c_void, "rdx", memalign_impl);
with_pc!(aligned_alloc(align: usize, size: usize) -> *mut c_void, "rdx", memalign_impl);
with_pc!(posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> libc::c_int, "rcx", posix_memalign_impl);
// C++: operator new(size_t), new[](size_t), delete(void*), delete[](void*),
// the sized deletes, and the aligned forms.
with_pc!(_Znwm(size: usize) -> *mut c_void, "rsi", malloc_impl);
with_pc!(_Znam(size: usize) -> *mut c_void, "rsi", malloc_impl);
with_pc!(_ZdlPv(p: *mut c_void), "rsi", free_impl);
with_pc!(_ZdaPv(p: *mut c_void), "rsi", free_impl);
with_pc!(_ZdlPvm(p: *mut c_void, size: usize), "rdx", sized_free_impl);
with_pc!(_ZdaPvm(p: *mut c_void, size: usize), "rdx", sized_free_impl);
with_pc!(_ZnwmSt11align_val_t(size: usize, align: usize) -> *mut c_void, "rdx", aligned_new_impl);
with_pc!(_ZnamSt11align_val_t(size: usize, align: usize) -> *mut c_void, "rdx", aligned_new_impl);
with_pc!(_ZdlPvSt11align_val_t(p: *mut c_void, align: usize), "rdx", sized_free_impl);
with_pc!(_ZdaPvSt11align_val_t(p: *mut c_void, align: usize), "rdx", sized_free_impl);
