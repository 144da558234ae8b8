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
//!
//! Each execution's blocks are recorded, which makes three checks cheap:
//! an access to a freed block (a use after free, whatever the schedule:
//! blocks are never reused within an execution), an access outside every
//! block (an overflow), and a free of something that is not a live block.
//! `malloc`'s and `new`'s blocks are filled with [`POISON`]: a location
//! first used while its bytes still hold it has an indeterminate initial
//! value, and a load that reads that value is reported (a write the
//! instrumentation does not see, `read(2)` into the block, say, changes the
//! bytes and so counts as initialization).

use crate::memory::modelled;
use c11check_runtime::{FailureKind, Site};
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// What fresh `malloc` memory holds (see the module's documentation).
pub const POISON: u8 = 0xa5;

/// A block the program allocated in the current execution.
#[derive(Clone, Copy)]
struct Block {
    start: usize,
    /// Its size as asked for.
    size: usize,
    /// Where it was allocated.
    made: Site,
    /// Whether it came zeroed (`calloc`).
    zeroed: bool,
    /// Its number among the blocks made at `made` in this execution (1, 2...).
    ordinal: u32,
    /// The thread that freed it and where, once freed.
    freed: Option<(u32, Site)>,
}

thread_local! {
    /// The arena and index of the block [`block_at`] found last.
    static LAST_BLOCK: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((usize::MAX, 0)) };
    /// Per arena: the blocks of this execution, in address order (each
    /// thread's arena grows upwards).
    static BLOCKS: RefCell<Vec<Vec<Block>>> = const { RefCell::new(Vec::new()) };
    /// Blocks made at each allocation site in this execution.
    static MADE_AT: RefCell<std::collections::HashMap<usize, u32>> = RefCell::new(Default::default());
    /// The function of each allocation site (reports name blocks after it).
    static SITE_FUNCTIONS: RefCell<std::collections::HashMap<usize, std::rc::Rc<str>>> = RefCell::new(Default::default());
    /// Per allocation site: the type `new` constructed there, and the
    /// module defining it (see `image::symbols::constructed_type`).
    static BLOCK_TYPES: RefCell<std::collections::HashMap<usize, Option<(String, String)>>> = RefCell::new(Default::default());
}

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
/// One more than the highest arena used in this execution (0: none).
static ARENAS_USED: AtomicUsize = AtomicUsize::new(0);
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
    c11check_runtime::set_heap_namer(in_arena, location_name);
    crate::image::regions::note();
}

/// Empties every arena (zeroing what was used) for a new execution.
pub fn reset() {
    // Most executions of most programs allocate nothing: nothing to do.
    let arenas = ARENAS_USED.swap(0, Relaxed);
    if arenas == 0 {
        return;
    }
    BLOCKS.with(|b| b.borrow_mut().iter_mut().for_each(Vec::clear));
    MADE_AT.with(|m| m.borrow_mut().clear());
    let base = BASE.load(Relaxed);
    if base == 0 {
        return;
    }
    for (t, used) in USED.iter().enumerate().take(arenas) {
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

/// Whether a call with return address `pc` is the program's own, made in a
/// modelled thread that has an arena.
fn programs(pc: usize) -> bool {
    crate::image::regions::from_program(pc)
        && BASE.load(Relaxed) != 0
        && modelled()
        && (crate::process::tls::current_thread() as usize) < THREADS
}

/// A block of `size` bytes aligned to `align` from the current thread's
/// arena (null if it is full), made at `pc`: zero if `zeroed`, else
/// [`POISON`].
fn arena_alloc(size: usize, align: usize, zeroed: bool, pc: usize) -> *mut c_void {
    let p = arena_block(size, align);
    if !p.is_null() {
        ARENAS_USED.fetch_max(crate::process::tls::current_thread() as usize + 1, Relaxed);
        if !zeroed {
            // SAFETY: the block was just carved out of this thread's arena.
            unsafe { std::ptr::write_bytes(p as *mut u8, POISON, size) };
        }
        let t = crate::process::tls::current_thread() as usize;
        let ordinal = MADE_AT.with(|m| {
            let mut m = m.borrow_mut();
            let n = m.entry(pc).or_insert(0);
            *n += 1;
            *n
        });
        BLOCKS.with(|b| {
            let mut b = b.borrow_mut();
            if b.len() <= t {
                b.resize_with(t + 1, Vec::new);
            }
            b[t].push(Block {
                start: p as usize,
                size,
                made: Site::Pc(pc),
                zeroed,
                ordinal,
                freed: None,
            });
        });
        c11check_runtime::alloc::track_block(p as usize, size.max(1));
    }
    p
}

/// Carves a block of `size` bytes aligned to `align` out of the current
/// thread's arena (null if it is full).
fn arena_block(size: usize, align: usize) -> *mut c_void {
    let t = crate::process::tls::current_thread() as usize;
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
    runtime_entry!();
    if programs(pc) {
        let p = arena_alloc(size, HEADER, false, pc);
        if !p.is_null() {
            return p;
        }
    }
    // SAFETY: glibc's allocator.
    unsafe { __libc_malloc(size) }
}

extern "C" fn calloc_impl(n: usize, size: usize, pc: usize) -> *mut c_void {
    runtime_entry!();
    let Some(total) = n.checked_mul(size) else {
        return std::ptr::null_mut();
    };
    if programs(pc) {
        // Arena memory is zero until used in this execution, and used
        // memory is never handed out twice: the block is zero already.
        let p = arena_alloc(total, HEADER, true, pc);
        if !p.is_null() {
            return p;
        }
    }
    // SAFETY: glibc's allocator.
    unsafe { __libc_calloc(n, size) }
}

extern "C" fn memalign_impl(align: usize, size: usize, pc: usize) -> *mut c_void {
    runtime_entry!();
    if programs(pc) && align.is_power_of_two() {
        let p = arena_alloc(size, align, false, pc);
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
    runtime_entry!();
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
    runtime_entry!();
    if p.is_null() {
        return malloc_impl(size, pc);
    }
    let old = p as usize;
    if in_arena(old) && modelled() {
        arena_free(old, crate::memory::site(pc), "realloc");
    }
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
            arena_alloc(size, HEADER, false, pc)
        } else {
            // SAFETY: glibc's allocator.
            unsafe { __libc_malloc(size) }
        };
        if !q.is_null() {
            // Not `copy_nonoverlapping`: it may become a tail call to the
            // interposed `memcpy`, which would take it for the program's.
            // SAFETY: both blocks hold at least the bytes copied.
            unsafe {
                crate::memory::bytes::copy_forward(q as *mut u8, p as *const u8, old_size.min(size))
            };
        }
        return q;
    }
    // SAFETY: glibc's block, resized by glibc.
    unsafe { __libc_realloc(p, size) }
}

extern "C" fn free_impl(p: *mut c_void, pc: usize) {
    runtime_entry!();
    if p.is_null() {
        return;
    }
    if in_arena(p as usize) {
        if modelled() {
            arena_free(p as usize, crate::memory::site(pc), "free");
        }
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
    runtime_entry!();
    free_impl(p, pc)
}

extern "C" fn aligned_new_impl(size: usize, align: usize, pc: usize) -> *mut c_void {
    runtime_entry!();
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

/// The block of this execution holding `addr`, with its arena and index.
fn block_at(addr: usize) -> Option<(usize, usize, Block)> {
    let t = (addr - BASE.load(Relaxed)) / ARENA;
    BLOCKS.with(|b| {
        let b = b.borrow();
        let blocks = b.get(t)?;
        // Accesses come in runs over one block (a constructor filling an
        // array): try the block found last first.
        let holds = |i: usize| {
            blocks.get(i).is_some_and(|x| x.start <= addr)
                && blocks.get(i + 1).is_none_or(|x| x.start > addr)
        };
        let last = LAST_BLOCK.get();
        let i = if last.0 == t && holds(last.1) {
            last.1
        } else {
            let i = blocks.partition_point(|x| x.start <= addr).checked_sub(1)?;
            LAST_BLOCK.set((t, i));
            i
        };
        Some((t, i, blocks[i]))
    })
}

/// "1 byte", "4 bytes".
fn bytes(n: usize) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

/// How reports call a thread.
fn thread_name(t: u32) -> String {
    if t == 0 {
        "the main thread".to_string()
    } else {
        format!("thread {t}")
    }
}

/// The current thread frees the arena block at `p` at `site` (`how`:
/// `free`, `realloc`, `delete`): a block freed twice, or a pointer that
/// is not a block's start, fails the execution.
fn arena_free(p: usize, site: Site, how: &str) {
    // A plain write announced before the call becomes an event now, before
    // the free (it would otherwise be taken for a write after it).
    crate::memory::flush_pending();
    let me = crate::process::tls::current_thread();
    let found = block_at(p).filter(|&(_, _, b)| b.start == p);
    let Some((t, i, b)) = found else {
        let what = match block_at(p).filter(|(_, _, b)| p < b.start + b.size.max(1)) {
            Some((_, _, b)) => format!(
                "a pointer {} bytes into a {}-byte block allocated at {}",
                p - b.start,
                b.size,
                b.made
            ),
            None => "a pointer that no allocation returned".to_string(),
        };
        heap_bug(
            FailureKind::Panic,
            format!(
                "invalid free: {} passes {what} to {how} at {site}",
                thread_name(me)
            ),
        );
    };
    if let Some((by, at)) = b.freed {
        heap_bug(
            FailureKind::UseAfterFree,
            format!(
                "double free: {} frees at {site} the {}-byte block allocated at {}, which {} freed already at {at}",
                thread_name(me),
                b.size,
                b.made,
                thread_name(by)
            ),
        );
    }
    BLOCKS.with(|bl| bl.borrow_mut()[t][i].freed = Some((me, site)));
    c11check_runtime::alloc::untrack_block(p);
}

/// Fails the execution at a heap bug of the running thread.
fn heap_bug(kind: FailureKind, message: String) -> ! {
    crate::memory::flush_pending();
    c11check_runtime::fail_execution(kind, message)
}

/// Checks the program's access of `size` bytes at `addr` (made at `site`;
/// `what`: "reads", "writes") against this execution's heap blocks: an
/// access to a freed block or outside every block fails the execution.
#[inline]
pub fn check_access(addr: usize, size: usize, what: &str, site: Site) {
    if in_arena(addr) {
        check_block_access(addr, size, what, site);
    }
}

#[inline(never)]
fn check_block_access(addr: usize, size: usize, what: &str, site: Site) {
    let block = block_at(addr).map(|(_, _, b)| b);
    if block.is_some_and(|b| b.freed.is_none() && addr + size <= b.start + b.size) {
        return;
    }
    // A bug: only now is the report's text made.
    let me = thread_name(crate::process::tls::current_thread());
    let near = match block {
        Some(b) => {
            if let Some((by, at)) = b.freed.filter(|_| addr < b.start + b.size.max(1)) {
                heap_bug(
                    FailureKind::UseAfterFree,
                    format!(
                        "use after free: {me} {what} {} at offset {} of the {}-byte block allocated at {}, which {} freed at {at}; the access is at {site}",
                        bytes(size),
                        addr - b.start,
                        b.size,
                        b.made,
                        thread_name(by)
                    ),
                );
            }
            format!(
                "{} bytes past the start of the {}-byte block allocated at {}",
                addr - b.start,
                b.size,
                b.made
            )
        }
        None => "before the first block of its heap arena".to_string(),
    };
    heap_bug(
        FailureKind::Panic,
        format!(
            "heap buffer overflow: {me} {what} {} {near}; the access is at {site}",
            bytes(size)
        ),
    );
}

/// How reports call the heap location at `addr`: `push()'s block 2+8`,
/// the second block `push()` allocated (at that line) in this execution,
/// 8 bytes in.
pub fn location_name(addr: usize) -> Option<String> {
    if !in_arena(addr) {
        return None;
    }
    let (_, _, b) = block_at(addr)?;
    let Site::Pc(pc) = b.made else { return None };
    let function = SITE_FUNCTIONS.with(|f| {
        f.borrow_mut()
            .entry(pc)
            .or_insert_with(|| {
                let text = crate::image::symbols::describe(pc);
                let f = text.rsplit_once(" in ").map_or("the program", |(_, f)| f);
                f.into()
            })
            .clone()
    });
    let off = addr - b.start;
    // The object's type, when the block was made by `new T(...)`: its
    // member by name (`main()'s block 1 (mabain::DB).status`).
    let ty = BLOCK_TYPES.with(|t| {
        t.borrow_mut()
            .entry(pc)
            .or_insert_with(|| crate::image::symbols::constructed_type(pc))
            .clone()
    });
    if let Some((ty, module)) = ty {
        if let Some(member) =
            crate::image::fields::type_member_path(&module, &ty, off as u64, b.size as u64)
        {
            return Some(format!("{function}'s block {} ({ty}){member}", b.ordinal));
        }
    }
    Some(if off == 0 {
        format!("{function}'s block {}", b.ordinal)
    } else {
        format!("{function}'s block {}+{off}", b.ordinal)
    })
}

/// Whether the `size` bytes at `addr` are memory `malloc` handed out in
/// this execution that nothing has written yet (they hold [`POISON`]).
pub fn indeterminate(addr: usize, size: usize) -> bool {
    if !in_arena(addr) {
        return false;
    }
    let Some((_, _, b)) = block_at(addr) else {
        return false;
    };
    if b.zeroed || b.freed.is_some() || addr + size > b.start + b.size {
        return false;
    }
    // SAFETY: inside a live block of this execution.
    let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, size) };
    bytes.iter().all(|&x| x == POISON)
}

/// The runtime's own allocations go straight to glibc's allocator, never
/// through the `malloc` this library defines for the program.
struct LibcAllocator;

use libc_heap::{__libc_calloc, __libc_free, __libc_malloc, __libc_memalign, __libc_realloc};

// SAFETY: glibc's allocator functions meet `GlobalAlloc`'s contract: blocks
// are at least 16-byte aligned (larger alignments go through memalign) and
// stay valid until freed.
unsafe impl std::alloc::GlobalAlloc for LibcAllocator {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        // SAFETY: plain calls into glibc.
        unsafe {
            if l.align() <= 16 {
                __libc_malloc(l.size()).cast()
            } else {
                __libc_memalign(l.align(), l.size()).cast()
            }
        }
    }
    unsafe fn alloc_zeroed(&self, l: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as in `alloc`; memalign'd blocks are zeroed by hand.
        unsafe {
            if l.align() <= 16 {
                __libc_calloc(1, l.size()).cast()
            } else {
                let p: *mut u8 = __libc_memalign(l.align(), l.size()).cast();
                if !p.is_null() {
                    std::ptr::write_bytes(p, 0, l.size());
                }
                p
            }
        }
    }
    unsafe fn dealloc(&self, p: *mut u8, _: std::alloc::Layout) {
        // SAFETY: `p` came from one of the functions above.
        unsafe { __libc_free(p.cast()) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, size: usize) -> *mut u8 {
        // SAFETY: as in `alloc`; over-aligned blocks are moved by hand.
        unsafe {
            if l.align() <= 16 {
                __libc_realloc(p.cast(), size).cast()
            } else {
                let q: *mut u8 = __libc_memalign(l.align(), size).cast();
                if !q.is_null() {
                    std::ptr::copy_nonoverlapping(p, q, l.size().min(size));
                    __libc_free(p.cast());
                }
                q
            }
        }
    }
}

#[global_allocator]
static ALLOCATOR: LibcAllocator = LibcAllocator;
