//! The `__tsan_*` entry points the compilers' `-fsanitize=thread`
//! instrumentation calls, as gcc 12 and clang 14/15 emit them.
//!
//! Each entry point that reports a source line needs its caller's address:
//! it is a two-instruction trampoline that passes the return address as an
//! extra last argument to the Rust function doing the work (`mov REG,
//! [rsp]; jmp impl`; `REG` is the argument register after the entry's own
//! arguments in the System V calling convention).

use crate::memory::{self, modelled};
use c11check_model::{RmwOp, Value};
use c11check_runtime::Site;

/// The site of a call whose return address is `pc`.
#[inline]
fn site(pc: usize) -> Site {
    Site::Pc(pc)
}

// ---- set-up and function entry ------------------------------------------

/// Called by the instrumentation's module constructors; the runtime sets
/// itself up when `main` is taken over.
#[unsafe(no_mangle)]
pub extern "C" fn __tsan_init() {}

/// Function entry (`pc`: where its caller called it): a modelled thread's
/// calls in progress are kept (see `memory::calls`).
#[unsafe(no_mangle)]
pub extern "C" fn __tsan_func_entry(pc: usize) {
    runtime_entry!();
    if crate::process::tls::in_fiber() {
        memory::calls::enter(pc);
    }
}

/// Function exit.
#[unsafe(no_mangle)]
pub extern "C" fn __tsan_func_exit() {
    runtime_entry!();
    if crate::process::tls::in_fiber() {
        memory::calls::exit();
    }
}

/// A C++ object's virtual table pointer is written (in constructors and
/// destructors): not an access the model judges.
#[unsafe(no_mangle)]
pub extern "C" fn __tsan_vptr_update(_p: *mut usize, _new: usize) {}

/// A C++ object's virtual table pointer is read.
#[unsafe(no_mangle)]
pub extern "C" fn __tsan_vptr_read(_p: *mut usize) {}

// ---- plain accesses -------------------------------------------------------

/// Whether an access to `addr` is an event: made by a modelled thread, not
/// to its thread-local storage, and not in a region the program asked not
/// to check (`AnnotateIgnoreReadsBegin`).
#[inline]
fn shared(addr: usize) -> bool {
    runtime_entry!();
    modelled() && !crate::process::tls::contains(addr) && !memory::ignoring_accesses()
}

extern "C" fn read_impl<const N: usize>(addr: usize, pc: usize) {
    runtime_entry!();
    if shared(addr) {
        memory::plain_read(addr, N, site(pc));
    }
}

extern "C" fn write_impl<const N: usize>(addr: usize, pc: usize) {
    runtime_entry!();
    if shared(addr) {
        memory::plain_write(addr, N, site(pc));
    }
}

extern "C" fn read_range_impl(addr: usize, size: usize, pc: usize) {
    runtime_entry!();
    if shared(addr) && size > 0 {
        crate::memory::heap::check_access(addr, size, "reads", site(pc));
        memory::copy_read(addr, size.min(8), site(pc));
    }
}

extern "C" fn write_range_impl(addr: usize, size: usize, pc: usize) {
    runtime_entry!();
    if shared(addr) && size > 0 {
        crate::memory::heap::check_access(addr, size, "writes", site(pc));
        memory::plain_write(addr, size.min(8), site(pc));
    }
}

with_pc!(__tsan_read1(a: usize), "rsi", read_impl::<1>);
with_pc!(__tsan_read2(a: usize), "rsi", read_impl::<2>);
with_pc!(__tsan_read4(a: usize), "rsi", read_impl::<4>);
with_pc!(__tsan_read8(a: usize), "rsi", read_impl::<8>);
with_pc!(__tsan_read16(a: usize), "rsi", read_impl::<8>);
with_pc!(__tsan_write1(a: usize), "rsi", write_impl::<1>);
with_pc!(__tsan_write2(a: usize), "rsi", write_impl::<2>);
with_pc!(__tsan_write4(a: usize), "rsi", write_impl::<4>);
with_pc!(__tsan_write8(a: usize), "rsi", write_impl::<8>);
with_pc!(__tsan_write16(a: usize), "rsi", write_impl::<8>);
with_pc!(__tsan_unaligned_read2(a: usize), "rsi", read_impl::<2>);
with_pc!(__tsan_unaligned_read4(a: usize), "rsi", read_impl::<4>);
with_pc!(__tsan_unaligned_read8(a: usize), "rsi", read_impl::<8>);
with_pc!(__tsan_unaligned_read16(a: usize), "rsi", read_impl::<8>);
with_pc!(__tsan_unaligned_write2(a: usize), "rsi", write_impl::<2>);
with_pc!(__tsan_unaligned_write4(a: usize), "rsi", write_impl::<4>);
with_pc!(__tsan_unaligned_write8(a: usize), "rsi", write_impl::<8>);
with_pc!(__tsan_unaligned_write16(a: usize), "rsi", write_impl::<8>);
with_pc!(__tsan_read_range(a: usize, n: usize), "rdx", read_range_impl);
with_pc!(__tsan_write_range(a: usize, n: usize), "rdx", write_range_impl);

// ---- atomics ----------------------------------------------------------------

/// An atomic operation reached outside a modelled thread (in a constructor,
/// say) runs natively with sequentially consistent atomics.
mod native {
    use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::SeqCst};

    /// # Safety
    /// `addr` must be a live, aligned atomic of `size` bytes.
    pub unsafe fn load(addr: usize, size: usize) -> u64 {
        // SAFETY: guaranteed by the caller.
        unsafe {
            match size {
                1 => (*(addr as *const AtomicU8)).load(SeqCst) as u64,
                2 => (*(addr as *const AtomicU16)).load(SeqCst) as u64,
                4 => (*(addr as *const AtomicU32)).load(SeqCst) as u64,
                _ => (*(addr as *const AtomicU64)).load(SeqCst),
            }
        }
    }
    /// # Safety
    /// As [`load`].
    pub unsafe fn cas(addr: usize, size: usize, old: u64, new: u64) -> Result<u64, u64> {
        // SAFETY: guaranteed by the caller.
        unsafe {
            match size {
                1 => (*(addr as *const AtomicU8))
                    .compare_exchange(old as u8, new as u8, SeqCst, SeqCst)
                    .map(u64::from)
                    .map_err(u64::from),
                2 => (*(addr as *const AtomicU16))
                    .compare_exchange(old as u16, new as u16, SeqCst, SeqCst)
                    .map(u64::from)
                    .map_err(u64::from),
                4 => (*(addr as *const AtomicU32))
                    .compare_exchange(old as u32, new as u32, SeqCst, SeqCst)
                    .map(u64::from)
                    .map_err(u64::from),
                _ => (*(addr as *const AtomicU64)).compare_exchange(old, new, SeqCst, SeqCst),
            }
        }
    }
    /// A read-modify-write done as a compare-exchange loop; the old value.
    ///
    /// # Safety
    /// As [`load`].
    pub unsafe fn rmw(addr: usize, size: usize, f: impl Fn(u64) -> u64) -> u64 {
        // SAFETY: guaranteed by the caller.
        unsafe {
            let mut old = load(addr, size);
            loop {
                match cas(addr, size, old, f(old)) {
                    Ok(v) => return v,
                    Err(v) => old = v,
                }
            }
        }
    }
}

fn mask(size: usize, v: u64) -> u64 {
    if size >= 8 {
        v
    } else {
        v & ((1u64 << (size * 8)) - 1)
    }
}

fn load_any(addr: usize, size: usize, mo: i32, pc: usize) -> u64 {
    if shared(addr) {
        memory::load(addr, size, mo, site(pc)) as u64
    } else {
        // SAFETY: the program passes an atomic object.
        unsafe { native::load(addr, size) }
    }
}

fn store_any(addr: usize, size: usize, v: u64, mo: i32, pc: usize) {
    if shared(addr) {
        memory::store(addr, size, v as Value, mo, site(pc));
    } else {
        // SAFETY: the program passes an atomic object.
        unsafe { native::rmw(addr, size, |_| v) };
    }
}

fn rmw_any(addr: usize, size: usize, op: RmwOp, v: u64, mo: i32, pc: usize) -> u64 {
    if shared(addr) {
        memory::rmw(addr, size, op, v as Value, mo, site(pc)) as u64
    } else {
        // SAFETY: the program passes an atomic object.
        unsafe {
            native::rmw(addr, size, |old| {
                mask(size, op.apply(old as Value, v as Value) as u64)
            })
        }
    }
}

/// A compare-exchange: whether it succeeded, and the value read.
fn cas_any(
    addr: usize,
    size: usize,
    exp: u64,
    new: u64,
    mo: (i32, i32),
    weak: bool,
    pc: usize,
) -> (bool, u64) {
    if shared(addr) {
        let (ok, v) = memory::cas(addr, size, (exp as Value, new as Value), mo, weak, site(pc));
        (ok, v as u64)
    } else {
        // SAFETY: the program passes an atomic object.
        match unsafe { native::cas(addr, size, mask(size, exp), mask(size, new)) } {
            Ok(v) => (true, v),
            Err(v) => (false, v),
        }
    }
}

/// The entry points of one atomic size: `$t` is the C type, `$n` its size.
macro_rules! atomics {
    ($t:ty, $n:literal, $load:ident, $store:ident, $xchg:ident, $add:ident, $sub:ident,
     $and:ident, $or:ident, $xor:ident, $nand:ident, $strong:ident, $weak:ident, $val:ident) => {
        mod $load {
            use super::*;
            pub extern "C" fn load(a: usize, mo: i32, pc: usize) -> $t {
                runtime_entry!();
                load_any(a, $n, mo, pc) as $t
            }
            pub extern "C" fn store(a: usize, v: $t, mo: i32, pc: usize) {
                runtime_entry!();
                store_any(a, $n, v as u64, mo, pc)
            }
            pub extern "C" fn xchg(a: usize, v: $t, mo: i32, pc: usize) -> $t {
                runtime_entry!();
                rmw_any(a, $n, RmwOp::Xchg, v as u64, mo, pc) as $t
            }
            pub extern "C" fn add(a: usize, v: $t, mo: i32, pc: usize) -> $t {
                runtime_entry!();
                rmw_any(a, $n, RmwOp::Add, v as u64, mo, pc) as $t
            }
            pub extern "C" fn sub(a: usize, v: $t, mo: i32, pc: usize) -> $t {
                runtime_entry!();
                rmw_any(a, $n, RmwOp::Sub, v as u64, mo, pc) as $t
            }
            pub extern "C" fn and(a: usize, v: $t, mo: i32, pc: usize) -> $t {
                runtime_entry!();
                rmw_any(a, $n, RmwOp::And, v as u64, mo, pc) as $t
            }
            pub extern "C" fn or(a: usize, v: $t, mo: i32, pc: usize) -> $t {
                runtime_entry!();
                rmw_any(a, $n, RmwOp::Or, v as u64, mo, pc) as $t
            }
            pub extern "C" fn xor(a: usize, v: $t, mo: i32, pc: usize) -> $t {
                runtime_entry!();
                rmw_any(a, $n, RmwOp::Xor, v as u64, mo, pc) as $t
            }
            pub extern "C" fn nand(a: usize, v: $t, mo: i32, pc: usize) -> $t {
                runtime_entry!();
                rmw_any(a, $n, RmwOp::Nand, v as u64, mo, pc) as $t
            }
            /// gcc's form: `expected` is updated on failure; returns success.
            pub extern "C" fn strong(a: usize, c: *mut $t, v: $t, mo: i32, fmo: i32, pc: usize) -> i32 {
                runtime_entry!();
                cas_ptr(a, c, v, (mo, fmo), false, pc)
            }
            pub extern "C" fn weak(a: usize, c: *mut $t, v: $t, mo: i32, fmo: i32, pc: usize) -> i32 {
                runtime_entry!();
                cas_ptr(a, c, v, (mo, fmo), true, pc)
            }
            fn cas_ptr(a: usize, c: *mut $t, v: $t, mo: (i32, i32), weak: bool, pc: usize) -> i32 {
                // SAFETY: the instrumentation passes the address of the
                // expected value, a local of the caller.
                let exp = unsafe { *c };
                let (ok, old) = cas_any(a, $n, exp as u64, v as u64, mo, weak, pc);
                if !ok {
                    // SAFETY: as above.
                    unsafe { *c = old as $t };
                    if shared(c as usize) {
                        memory::runtime_stored(c as usize, c as usize + $n, site(pc));
                    }
                }
                ok as i32
            }
            /// clang's form: returns the value read (strong and weak alike).
            pub extern "C" fn val(a: usize, c: $t, v: $t, mo: i32, fmo: i32, pc: usize) -> $t {
                runtime_entry!();
                cas_any(a, $n, c as u64, v as u64, (mo, fmo), false, pc).1 as $t
            }
        }
        with_pc!($load(a: usize, mo: i32) -> $t, "rdx", $load::load);
        with_pc!($store(a: usize, v: $t, mo: i32), "rcx", $load::store);
        with_pc!($xchg(a: usize, v: $t, mo: i32) -> $t, "rcx", $load::xchg);
        with_pc!($add(a: usize, v: $t, mo: i32) -> $t, "rcx", $load::add);
        with_pc!($sub(a: usize, v: $t, mo: i32) -> $t, "rcx", $load::sub);
        with_pc!($and(a: usize, v: $t, mo: i32) -> $t, "rcx", $load::and);
        with_pc!($or(a: usize, v: $t, mo: i32) -> $t, "rcx", $load::or);
        with_pc!($xor(a: usize, v: $t, mo: i32) -> $t, "rcx", $load::xor);
        with_pc!($nand(a: usize, v: $t, mo: i32) -> $t, "rcx", $load::nand);
        with_pc!($strong(a: usize, c: *mut $t, v: $t, mo: i32, fmo: i32) -> i32, "r9", $load::strong);
        with_pc!($weak(a: usize, c: *mut $t, v: $t, mo: i32, fmo: i32) -> i32, "r9", $load::weak);
        with_pc!($val(a: usize, c: $t, v: $t, mo: i32, fmo: i32) -> $t, "r9", $load::val);
    };
}

atomics!(
    u8,
    1,
    __tsan_atomic8_load,
    __tsan_atomic8_store,
    __tsan_atomic8_exchange,
    __tsan_atomic8_fetch_add,
    __tsan_atomic8_fetch_sub,
    __tsan_atomic8_fetch_and,
    __tsan_atomic8_fetch_or,
    __tsan_atomic8_fetch_xor,
    __tsan_atomic8_fetch_nand,
    __tsan_atomic8_compare_exchange_strong,
    __tsan_atomic8_compare_exchange_weak,
    __tsan_atomic8_compare_exchange_val
);
atomics!(
    u16,
    2,
    __tsan_atomic16_load,
    __tsan_atomic16_store,
    __tsan_atomic16_exchange,
    __tsan_atomic16_fetch_add,
    __tsan_atomic16_fetch_sub,
    __tsan_atomic16_fetch_and,
    __tsan_atomic16_fetch_or,
    __tsan_atomic16_fetch_xor,
    __tsan_atomic16_fetch_nand,
    __tsan_atomic16_compare_exchange_strong,
    __tsan_atomic16_compare_exchange_weak,
    __tsan_atomic16_compare_exchange_val
);
atomics!(
    u32,
    4,
    __tsan_atomic32_load,
    __tsan_atomic32_store,
    __tsan_atomic32_exchange,
    __tsan_atomic32_fetch_add,
    __tsan_atomic32_fetch_sub,
    __tsan_atomic32_fetch_and,
    __tsan_atomic32_fetch_or,
    __tsan_atomic32_fetch_xor,
    __tsan_atomic32_fetch_nand,
    __tsan_atomic32_compare_exchange_strong,
    __tsan_atomic32_compare_exchange_weak,
    __tsan_atomic32_compare_exchange_val
);
atomics!(
    u64,
    8,
    __tsan_atomic64_load,
    __tsan_atomic64_store,
    __tsan_atomic64_exchange,
    __tsan_atomic64_fetch_add,
    __tsan_atomic64_fetch_sub,
    __tsan_atomic64_fetch_and,
    __tsan_atomic64_fetch_or,
    __tsan_atomic64_fetch_xor,
    __tsan_atomic64_fetch_nand,
    __tsan_atomic64_compare_exchange_strong,
    __tsan_atomic64_compare_exchange_weak,
    __tsan_atomic64_compare_exchange_val
);

// ---- fences -------------------------------------------------------------------

extern "C" fn fence_impl(mo: i32, pc: usize) {
    runtime_entry!();
    if modelled() {
        memory::fence(mo, site(pc));
    } else {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }
}

with_pc!(__tsan_atomic_thread_fence(mo: i32), "rsi", fence_impl);

/// A signal fence orders nothing between threads.
#[unsafe(no_mangle)]
pub extern "C" fn __tsan_atomic_signal_fence(_mo: i32) {}

// ---- 16-byte atomics ------------------------------------------------------------

/// 16-byte atomics (see [`crate::memory::wide`]): loads, stores, exchanges and
/// compare-exchanges are modelled; an arithmetic read-modify-write fails
/// the execution with a report saying so.
mod wide {
    use super::*;
    use crate::memory::wide::{decode, encode};

    /// Outside a modelled thread: a native 16-byte compare-exchange
    /// (`lock cmpxchg16b`); the value found.
    ///
    /// # Safety
    /// `a` must be a live, 16-byte aligned object.
    unsafe fn native_cas(a: usize, old: u128, new: u128) -> u128 {
        let (mut lo, mut hi) = (old as u64, (old >> 64) as u64);
        // SAFETY: `a` is as the caller says; `rbx` (which Rust does not let
        // an operand use) is swapped in and back out around the instruction.
        unsafe {
            std::arch::asm!(
                "xchg {new_lo}, rbx",
                "lock cmpxchg16b [{p}]",
                "mov rbx, {new_lo}",
                new_lo = inout(reg) new as u64 => _,
                p = in(reg) a,
                inout("rax") lo,
                inout("rdx") hi,
                in("rcx") (new >> 64) as u64,
                options(nostack)
            )
        };
        (hi as u128) << 64 | lo as u128
    }

    pub extern "C" fn load(a: usize, mo: i32, pc: usize) -> u128 {
        runtime_entry!();
        if shared(a) {
            decode(memory::load(a, 16, mo, site(pc)))
        } else {
            // SAFETY: the program passes an atomic object.
            unsafe { native_cas(a, 0, 0) }
        }
    }

    pub extern "C" fn store(a: usize, v: u128, mo: i32, pc: usize) {
        runtime_entry!();
        if shared(a) {
            memory::store(a, 16, encode(v), mo, site(pc));
        } else {
            let _ = xchg(a, v, mo, pc);
        }
    }

    pub extern "C" fn xchg(a: usize, v: u128, mo: i32, pc: usize) -> u128 {
        runtime_entry!();
        if shared(a) {
            return decode(memory::rmw(a, 16, RmwOp::Xchg, encode(v), mo, site(pc)));
        }
        // SAFETY: the program passes an atomic object.
        let mut old = unsafe { native_cas(a, 0, 0) };
        loop {
            // SAFETY: as above.
            let seen = unsafe { native_cas(a, old, v) };
            if seen == old {
                return old;
            }
            old = seen;
        }
    }

    /// A compare-exchange: whether it succeeded, and the value read.
    fn cas(a: usize, exp: u128, new: u128, mo: (i32, i32), weak: bool, pc: usize) -> (bool, u128) {
        if shared(a) {
            let (ok, v) = memory::cas(a, 16, (encode(exp), encode(new)), mo, weak, site(pc));
            (ok, decode(v))
        } else {
            // SAFETY: the program passes an atomic object.
            let seen = unsafe { native_cas(a, exp, new) };
            (seen == exp, seen)
        }
    }

    /// gcc's form: `expected` is updated on failure; returns success.
    fn cas_ptr(a: usize, c: *mut u128, v: u128, mo: (i32, i32), weak: bool, pc: usize) -> i32 {
        // SAFETY: the instrumentation passes the address of the expected
        // value, a local of the caller.
        let exp = unsafe { c.read_unaligned() };
        let (ok, old) = cas(a, exp, v, mo, weak, pc);
        if !ok {
            // SAFETY: as above.
            unsafe { c.write_unaligned(old) };
            if shared(c as usize) {
                memory::runtime_stored(c as usize, c as usize + 16, site(pc));
            }
        }
        ok as i32
    }

    pub extern "C" fn strong(a: usize, c: *mut u128, v: u128, mo: i32, fmo: i32, pc: usize) -> i32 {
        runtime_entry!();
        cas_ptr(a, c, v, (mo, fmo), false, pc)
    }

    pub extern "C" fn weak(a: usize, c: *mut u128, v: u128, mo: i32, fmo: i32, pc: usize) -> i32 {
        runtime_entry!();
        cas_ptr(a, c, v, (mo, fmo), true, pc)
    }

    /// clang's form: returns the value read.
    pub extern "C" fn val(a: usize, c: u128, v: u128, mo: i32, fmo: i32, pc: usize) -> u128 {
        runtime_entry!();
        cas(a, c, v, (mo, fmo), false, pc).1
    }

    /// An arithmetic read-modify-write: not modelled on 16 bytes.
    pub extern "C" fn arith(_a: usize, _v: u128, _mo: i32, pc: usize) -> u128 {
        runtime_entry!();
        let what = "a 16-byte atomic fetch-and-modify (fetch_add, fetch_sub, fetch_and, fetch_or, fetch_xor, fetch_nand)";
        if !modelled() {
            eprintln!("c11check: {what} at {} is not supported", site(pc));
            // SAFETY: ends the process.
            unsafe { libc::_exit(2) }
        }
        c11check_runtime::fail_execution(
            c11check_runtime::FailureKind::Internal,
            format!(
                "{what} at {} is not modelled: c11check models 16-byte loads, stores, exchanges and compare-exchanges only (write the update as a compare-exchange loop)",
                site(pc)
            ),
        )
    }
}

with_pc!(__tsan_atomic128_load(a: usize, mo: i32) -> u128, "rdx", wide::load);
with_pc!(__tsan_atomic128_store(a: usize, v: u128, mo: i32), "r8", wide::store);
with_pc!(__tsan_atomic128_exchange(a: usize, v: u128, mo: i32) -> u128, "r8", wide::xchg);
with_pc!(__tsan_atomic128_fetch_add(a: usize, v: u128, mo: i32) -> u128, "r8", wide::arith);
with_pc!(__tsan_atomic128_fetch_sub(a: usize, v: u128, mo: i32) -> u128, "r8", wide::arith);
with_pc!(__tsan_atomic128_fetch_and(a: usize, v: u128, mo: i32) -> u128, "r8", wide::arith);
with_pc!(__tsan_atomic128_fetch_or(a: usize, v: u128, mo: i32) -> u128, "r8", wide::arith);
with_pc!(__tsan_atomic128_fetch_xor(a: usize, v: u128, mo: i32) -> u128, "r8", wide::arith);
with_pc!(__tsan_atomic128_fetch_nand(a: usize, v: u128, mo: i32) -> u128, "r8", wide::arith);
with_pc_on_stack!(__tsan_atomic128_compare_exchange_strong(a: usize, c: *mut u128, v: u128, mo: i32, fmo: i32) -> i32, 0, wide::strong);
with_pc_on_stack!(__tsan_atomic128_compare_exchange_weak(a: usize, c: *mut u128, v: u128, mo: i32, fmo: i32) -> i32, 0, wide::weak);
with_pc_on_stack!(__tsan_atomic128_compare_exchange_val(a: usize, c: u128, v: u128, mo: i32, fmo: i32) -> u128, 1, wide::val);
