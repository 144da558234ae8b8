//! ThreadSanitizer's annotations (`AnnotateHappensBefore` and the rest of
//! the family, `__tsan_acquire`/`__tsan_release`, the `__tsan_mutex_*`
//! hooks of annotated locks), which programs built for ThreadSanitizer
//! call to describe synchronization it cannot see:
//!
//! * a happens-before annotation on an address releases, and a
//!   happens-after one acquires, through a location of their own for that
//!   address: each is a read-modify-write of it (release, acquire), so a
//!   happens-after synchronises with every happens-before that precedes it
//!   in that location's order, as ThreadSanitizer's vector clocks do; an
//!   annotated lock's acquisition is a happens-after and its release a
//!   happens-before;
//! * a benign race annotation keeps races on the range out of reports;
//! * an ignore region (`AnnotateIgnoreReadsBegin` … `End`, and the inside
//!   of an annotated lock's own code) makes the thread's plain accesses
//!   native and unchecked;
//! * the rest (condition variable, memory publishing and tracing hints,
//!   thread names, expected races) change nothing, as in ThreadSanitizer.

use crate::memory;
use c11check_model::{Action, MemOrder, RmwOp, Width};
use c11check_runtime::{access, LocCell, Site};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_long, c_void};

thread_local! {
    /// Per annotated address, the location its annotations synchronise
    /// through (never freed: a handful per program).
    static SYNC_CELLS: RefCell<HashMap<usize, &'static LocCell>> = RefCell::new(HashMap::new());
}

fn sync_cell(addr: usize) -> &'static LocCell {
    SYNC_CELLS.with(|c| {
        *c.borrow_mut().entry(addr).or_insert_with(|| {
            Box::leak(Box::new(LocCell::described(
                "happens-before annotation",
                Site::Pc(0),
            )))
        })
    })
}

/// A release (`release`) or an acquire through `addr`'s annotation location.
fn sync(addr: usize, release: bool, site: Site) {
    if !memory::modelled() {
        return;
    }
    memory::begin(site);
    let ord = if release {
        MemOrder::Release
    } else {
        MemOrder::Acquire
    };
    memory::internal(|| {
        access(
            sync_cell(addr),
            0,
            |loc| Action::Rmw {
                loc,
                ord,
                op: RmwOp::Add,
                operand: 0,
                width: Width::U64,
            },
            site,
        )
    });
}

fn ignore(enter: bool) {
    if memory::modelled() {
        memory::ignore_accesses(enter);
    }
}

extern "C" fn happens_before_impl(_f: *const c_char, _l: c_int, addr: usize, pc: usize) {
    runtime_entry!();
    sync(addr, true, memory::site(pc));
}
with_pc!(AnnotateHappensBefore(f: *const c_char, l: c_int, addr: usize), "rcx", happens_before_impl);

extern "C" fn happens_after_impl(_f: *const c_char, _l: c_int, addr: usize, pc: usize) {
    runtime_entry!();
    sync(addr, false, memory::site(pc));
}
with_pc!(AnnotateHappensAfter(f: *const c_char, l: c_int, addr: usize), "rcx", happens_after_impl);

extern "C" fn tsan_release_impl(addr: usize, pc: usize) {
    runtime_entry!();
    sync(addr, true, memory::site(pc));
}
with_pc!(__tsan_release(addr: usize), "rsi", tsan_release_impl);

extern "C" fn tsan_acquire_impl(addr: usize, pc: usize) {
    runtime_entry!();
    sync(addr, false, memory::site(pc));
}
with_pc!(__tsan_acquire(addr: usize), "rsi", tsan_acquire_impl);

extern "C" fn rwlock_acquired_impl(_f: *const c_char, _l: c_int, m: usize, _w: usize, pc: usize) {
    runtime_entry!();
    sync(m, false, memory::site(pc));
}
with_pc!(AnnotateRWLockAcquired(f: *const c_char, l: c_int, m: usize, w: usize), "r8", rwlock_acquired_impl);

extern "C" fn rwlock_released_impl(_f: *const c_char, _l: c_int, m: usize, _w: usize, pc: usize) {
    runtime_entry!();
    sync(m, true, memory::site(pc));
}
with_pc!(AnnotateRWLockReleased(f: *const c_char, l: c_int, m: usize, w: usize), "r8", rwlock_released_impl);

/// ThreadSanitizer's flag for a try-lock that failed (`tsan_interface.h`).
const MUTEX_TRY_LOCK_FAILED: u32 = 1 << 5;

#[unsafe(no_mangle)]
pub extern "C" fn __tsan_mutex_pre_lock(_m: *mut c_void, _flags: u32) {
    runtime_entry!();
    ignore(true);
}

extern "C" fn mutex_post_lock_impl(m: usize, flags: u32, _recursion: c_int, pc: usize) {
    runtime_entry!();
    ignore(false);
    if flags & MUTEX_TRY_LOCK_FAILED == 0 {
        sync(m, false, memory::site(pc));
    }
}
with_pc!(__tsan_mutex_post_lock(m: usize, flags: u32, recursion: c_int), "rcx", mutex_post_lock_impl);

extern "C" fn mutex_pre_unlock_impl(m: usize, _flags: u32, pc: usize) -> c_int {
    runtime_entry!();
    sync(m, true, memory::site(pc));
    ignore(true);
    0
}
with_pc!(__tsan_mutex_pre_unlock(m: usize, flags: u32) -> c_int, "rdx", mutex_pre_unlock_impl);

#[unsafe(no_mangle)]
pub extern "C" fn __tsan_mutex_post_unlock(_m: *mut c_void, _flags: u32) {
    runtime_entry!();
    ignore(false);
}

#[unsafe(no_mangle)]
pub extern "C" fn __tsan_mutex_pre_signal(_m: *mut c_void, _flags: u32) {
    runtime_entry!();
    ignore(true);
}

#[unsafe(no_mangle)]
pub extern "C" fn __tsan_mutex_post_signal(_m: *mut c_void, _flags: u32) {
    runtime_entry!();
    ignore(false);
}

#[unsafe(no_mangle)]
pub extern "C" fn __tsan_mutex_pre_divert(_m: *mut c_void, _flags: u32) {
    runtime_entry!();
    ignore(false);
}

#[unsafe(no_mangle)]
pub extern "C" fn __tsan_mutex_post_divert(_m: *mut c_void, _flags: u32) {
    runtime_entry!();
    ignore(true);
}

#[unsafe(no_mangle)]
pub extern "C" fn __tsan_mutex_create(_m: *mut c_void, _flags: u32) {}

#[unsafe(no_mangle)]
pub extern "C" fn __tsan_mutex_destroy(_m: *mut c_void, _flags: u32) {}

#[unsafe(no_mangle)]
pub extern "C" fn AnnotateIgnoreReadsBegin(_f: *const c_char, _l: c_int) {
    runtime_entry!();
    ignore(true);
}

#[unsafe(no_mangle)]
pub extern "C" fn AnnotateIgnoreReadsEnd(_f: *const c_char, _l: c_int) {
    runtime_entry!();
    ignore(false);
}

#[unsafe(no_mangle)]
pub extern "C" fn AnnotateIgnoreWritesBegin(_f: *const c_char, _l: c_int) {
    runtime_entry!();
    ignore(true);
}

#[unsafe(no_mangle)]
pub extern "C" fn AnnotateIgnoreWritesEnd(_f: *const c_char, _l: c_int) {
    runtime_entry!();
    ignore(false);
}

#[unsafe(no_mangle)]
pub extern "C" fn AnnotateBenignRaceSized(
    _f: *const c_char,
    _l: c_int,
    mem: usize,
    size: c_long,
    _desc: *const c_char,
) {
    runtime_entry!();
    c11check_runtime::annotate_benign_race(mem, size.max(1) as usize);
}

#[unsafe(no_mangle)]
pub extern "C" fn WTFAnnotateBenignRaceSized(
    f: *const c_char,
    l: c_int,
    mem: usize,
    size: c_long,
    desc: *const c_char,
) {
    runtime_entry!();
    AnnotateBenignRaceSized(f, l, mem, size, desc);
}

#[unsafe(no_mangle)]
pub extern "C" fn AnnotateBenignRace(
    _f: *const c_char,
    _l: c_int,
    mem: usize,
    _desc: *const c_char,
) {
    runtime_entry!();
    c11check_runtime::annotate_benign_race(mem, 1);
}

/// Annotations that change nothing here, as in ThreadSanitizer (or, for
/// synchronization ignored on purpose, that c11check models anyway).
macro_rules! no_op_annotations {
    ($($name:ident($($a:ident: $t:ty),*);)*) => {
        $(
            #[unsafe(no_mangle)]
            pub extern "C" fn $name($($a: $t),*) {
                $(let _ = $a;)*
            }
        )*
    };
}

no_op_annotations! {
    AnnotateCondVarSignal(f: *const c_char, l: c_int, cv: usize);
    AnnotateCondVarSignalAll(f: *const c_char, l: c_int, cv: usize);
    AnnotateCondVarWait(f: *const c_char, l: c_int, cv: usize, lock: usize);
    AnnotateMutexIsNotPHB(f: *const c_char, l: c_int, mu: usize);
    AnnotateMutexIsUsedAsCondVar(f: *const c_char, l: c_int, mu: usize);
    AnnotateRWLockCreate(f: *const c_char, l: c_int, m: usize);
    AnnotateRWLockCreateStatic(f: *const c_char, l: c_int, m: usize);
    AnnotateRWLockDestroy(f: *const c_char, l: c_int, m: usize);
    AnnotateTraceMemory(f: *const c_char, l: c_int, mem: usize);
    AnnotateFlushState(f: *const c_char, l: c_int);
    AnnotateNewMemory(f: *const c_char, l: c_int, mem: usize, size: usize);
    AnnotateNoOp(f: *const c_char, l: c_int, mem: usize);
    AnnotateFlushExpectedRaces(f: *const c_char, l: c_int);
    AnnotateEnableRaceDetection(f: *const c_char, l: c_int, enable: c_int);
    AnnotatePCQGet(f: *const c_char, l: c_int, pcq: usize);
    AnnotatePCQPut(f: *const c_char, l: c_int, pcq: usize);
    AnnotatePCQDestroy(f: *const c_char, l: c_int, pcq: usize);
    AnnotatePCQCreate(f: *const c_char, l: c_int, pcq: usize);
    AnnotateExpectRace(f: *const c_char, l: c_int, mem: usize, desc: *const c_char);
    AnnotateIgnoreSyncBegin(f: *const c_char, l: c_int);
    AnnotateIgnoreSyncEnd(f: *const c_char, l: c_int);
    AnnotatePublishMemoryRange(f: *const c_char, l: c_int, addr: usize, size: usize);
    AnnotateUnpublishMemoryRange(f: *const c_char, l: c_int, addr: usize, size: usize);
    AnnotateThreadName(f: *const c_char, l: c_int, name: *const c_char);
    WTFAnnotateHappensBefore(f: *const c_char, l: c_int, addr: usize);
    WTFAnnotateHappensAfter(f: *const c_char, l: c_int, addr: usize);
    AnnotateMemoryIsInitialized(f: *const c_char, l: c_int, mem: usize, size: usize);
    AnnotateMemoryIsUninitialized(f: *const c_char, l: c_int, mem: usize, size: usize);
}

/// Not under Valgrind.
#[unsafe(no_mangle)]
pub extern "C" fn RunningOnValgrind() -> c_int {
    runtime_entry!();
    0
}

/// ThreadSanitizer's answer to its one query.
///
/// # Safety
/// `query` is null or a C string, as the program passes it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ThreadSanitizerQuery(query: *const c_char) -> *const c_char {
    runtime_entry!();
    if !query.is_null()
        // SAFETY: the program's C string (see above).
        && unsafe { std::ffi::CStr::from_ptr(query) }.to_bytes() == b"pure_happens_before"
    {
        c"1".as_ptr()
    } else {
        c"0".as_ptr()
    }
}
