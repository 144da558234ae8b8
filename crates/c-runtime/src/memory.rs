//! The program's memory as the model sees it: every address an instrumented
//! access touches is a location (bound afresh in each execution, with the
//! value memory holds then as its initial value), and each access an event.
//!
//! - Atomic operations get their values from the model and write what they
//!   store to memory too, so later plain reads see it.
//! - A plain write is announced before it happens (`__tsan_write4(p)`, then
//!   the store instruction), so its value is not known yet: it becomes an
//!   event at the thread's next operation, when memory holds it (no other
//!   thread runs in between: threads switch only inside operations).
//! - A plain read is an event (for race detection and for the reads-from
//!   choices); the value the program reads is the one in memory, which in a
//!   race-free execution is the one the model chose. Where the location
//!   was also used atomically in this execution, memory is set to the
//!   model's value first (an atomic store may be later in modification
//!   order than one that ran after it).
//!
//! Locations are keyed by the access's first byte: accesses of different
//! sizes or overlapping at other addresses are not related (as in GenMC,
//! mixed-size accesses are not modelled).

use c11check_model::{Action, MemOrder, RmwOp, Value, Width};
use c11check_runtime::{access, LocCell, Site};
use std::cell::RefCell;
use std::collections::HashMap;

/// What the runtime keeps per address.
struct Entry {
    cell: LocCell,
    /// The execution generation in which an atomic operation used it.
    atomic_in: u32,
}

/// A hasher for addresses (std's SipHash is several times slower here).
#[derive(Default)]
struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

type AddrMap<V> = HashMap<usize, V, std::hash::BuildHasherDefault<AddrHasher>>;

thread_local! {
    /// The locations, by address. Entries are boxed: the runtime keeps
    /// pointers to cells while an operation is pending.
    static TABLE: RefCell<AddrMap<Box<Entry>>> = RefCell::new(AddrMap::default());
    /// Per modelled thread: a plain write announced but not yet an event
    /// (address, size).
    static PENDING: RefCell<Vec<Option<(usize, usize)>>> = const { RefCell::new(Vec::new()) };
    /// Per running thread: its stack's range and the addresses on it bound
    /// to locations in this execution.
    static STACKS: RefCell<Vec<(usize, usize, Vec<usize>)>> = const { RefCell::new(Vec::new()) };
}

/// Loops that wait: C spin loops call nothing c11check could take as a
/// hint, so the runtime marks them itself. The first instruction address a
/// thread reaches again (within the last `LOOP_WINDOW` operations) is taken
/// as the head of a loop; each time the thread is back there, the runtime
/// is told it may be spinning (as at Rust's `spin_loop()`): if the turn
/// just done only re-read, from the same stores, what the turn before read,
/// the thread waits there for a new store instead of looping on.
struct LoopTracker {
    /// Addresses of the thread's recent operations.
    recent: [usize; LOOP_WINDOW],
    /// Operations done in this execution.
    count: u64,
    /// The loop head and when it was last reached.
    head: Option<(usize, u64)>,
}

const LOOP_WINDOW: usize = 32;

thread_local! {
    static LOOPS: RefCell<Vec<LoopTracker>> = const { RefCell::new(Vec::new()) };
}

/// Whether thread `t`'s operation at `pc` starts a new turn of a loop.
fn loop_turn(t: usize, pc: usize) -> bool {
    LOOPS.with(|l| {
        let mut l = l.borrow_mut();
        if l.len() <= t {
            l.resize_with(t + 1, || LoopTracker {
                recent: [0; LOOP_WINDOW],
                count: 0,
                head: None,
            });
        }
        let tr = &mut l[t];
        tr.count += 1;
        let now = tr.count;
        let turn = match tr.head {
            Some((h, _)) if h == pc => {
                tr.head = Some((h, now));
                true
            }
            // A loop left long ago: look for a new one.
            Some((_, seen)) if now - seen > 4 * LOOP_WINDOW as u64 => {
                tr.head = None;
                false
            }
            Some(_) => false,
            None => {
                if tr.recent.contains(&pc) {
                    tr.head = Some((pc, now));
                    true
                } else {
                    false
                }
            }
        };
        tr.recent[(now as usize) % LOOP_WINDOW] = pc;
        turn
    })
}

/// Whether some thread went round a loop in some execution (the summary
/// says so: execution counts of programs with loops depend on how loops
/// are cut).
pub static LOOPS_SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Every operation of the program starts here: a pending plain write
/// becomes an event, and a loop's turn is marked (see [`LoopTracker`]).
pub fn begin(site: Site) {
    flush_pending(site);
    if let Site::Pc(pc) = site {
        let t = c11check_runtime::current_thread() as usize;
        if loop_turn(t, pc) {
            LOOPS_SEEN.store(true, std::sync::atomic::Ordering::Relaxed);
            c11check_runtime::spin_hint(site);
        }
    }
}

/// The fibers' stack size (from the settings).
static STACK_SIZE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1 << 20);

/// Notes the fibers' stack size; returns it.
pub fn set_stack_size(n: usize) -> usize {
    STACK_SIZE.store(n, std::sync::atomic::Ordering::Relaxed);
    n
}

/// Thread `t` starts: its stack is the `STACK_SIZE` bytes below here.
pub fn note_stack(t: usize) {
    let here = &t as *const usize as usize;
    let size = STACK_SIZE.load(std::sync::atomic::Ordering::Relaxed);
    STACKS.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() <= t {
            s.resize_with(t + 1, || (0, 0, Vec::new()));
        }
        s[t] = (here.saturating_sub(size), here + 4096, Vec::new());
    });
}

/// Thread `t` ends: the locations on its stack are gone. A later thread
/// running on the same stack (the runtime reuses them) gets new ones at
/// the same addresses, unrelated to these.
pub fn forget_stack(t: usize) {
    let addrs = STACKS.with(|s| {
        s.borrow_mut()
            .get_mut(t)
            .map(|e| {
                e.0 = 0;
                e.1 = 0;
                std::mem::take(&mut e.2)
            })
            .unwrap_or_default()
    });
    if !addrs.is_empty() {
        TABLE.with(|tb| {
            let tb = tb.borrow();
            for a in addrs {
                if let Some(e) = tb.get(&a) {
                    e.cell.unbind();
                }
            }
        });
    }
}

/// Records `addr` as a location on the current thread's stack, if it is.
fn note_if_on_stack(addr: usize) {
    let t = c11check_runtime::current_thread() as usize;
    STACKS.with(|s| {
        if let Some(e) = s.borrow_mut().get_mut(t) {
            if (e.0..e.1).contains(&addr) {
                e.2.push(addr);
            }
        }
    });
}

/// The cell of the location at `addr` (made on first use).
fn entry(addr: usize) -> *const Entry {
    let e = TABLE.with(|t| {
        let mut t = t.borrow_mut();
        let e = t.entry(addr).or_insert_with(|| {
            Box::new(Entry {
                cell: LocCell::new(),
                atomic_in: 0,
            })
        });
        &**e as *const Entry
    });
    // SAFETY: entries are boxed and never removed.
    if c11check_runtime::bound_location(unsafe { &(*e).cell }).is_none() {
        // First use in this execution.
        note_if_on_stack(addr);
    }
    e
}

/// The `size`-byte unsigned value at `addr`.
///
/// # Safety
/// `addr` must be readable for `size` bytes.
unsafe fn read_mem(addr: usize, size: usize) -> Value {
    // SAFETY: guaranteed by the caller; unaligned reads are allowed.
    unsafe {
        match size {
            1 => *(addr as *const u8) as Value,
            2 => (addr as *const u16).read_unaligned() as Value,
            4 => (addr as *const u32).read_unaligned() as Value,
            _ => (addr as *const u64).read_unaligned() as Value,
        }
    }
}

/// Writes the low `size` bytes of `v` at `addr`.
///
/// # Safety
/// `addr` must be writable for `size` bytes.
unsafe fn write_mem(addr: usize, size: usize, v: Value) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        match size {
            1 => *(addr as *mut u8) = v as u8,
            2 => (addr as *mut u16).write_unaligned(v as u16),
            4 => (addr as *mut u32).write_unaligned(v as u32),
            _ => (addr as *mut u64).write_unaligned(v as u64),
        }
    }
}

/// The model's width of a `size`-byte access (values are unsigned).
pub fn width(size: usize) -> Width {
    match size {
        1 => Width::U8,
        2 => Width::U16,
        4 => Width::U32,
        _ => Width::U64,
    }
}

/// Whether the calling code runs as a modelled thread (outside one, before
/// `main` or in the runtime, accesses are not events).
#[inline]
pub fn modelled() -> bool {
    crate::start::running() && c11check_runtime::in_model()
}

/// Turns the current thread's announced plain write, if any, into an event
/// now that memory holds its value. Every operation starts with this.
pub fn flush_pending(site: Site) {
    let t = c11check_runtime::current_thread() as usize;
    let pending = PENDING.with(|p| p.borrow_mut().get_mut(t).and_then(Option::take));
    if let Some((addr, size)) = pending {
        // SAFETY: the program wrote `size` bytes at `addr` just now.
        let val = unsafe { read_mem(addr, size) };
        let e = entry(addr);
        // SAFETY: entries are never removed.
        let cell = unsafe { &(*e).cell };
        access(
            cell,
            val,
            |loc| Action::Store {
                loc,
                ord: MemOrder::NonAtomic,
                val,
            },
            site,
        );
    }
}

/// Forgets announced writes (a new execution starts).
pub fn reset() {
    PENDING.with(|p| p.borrow_mut().clear());
    LOOPS.with(|l| l.borrow_mut().clear());
    STACKS.with(|s| s.borrow_mut().clear());
}

/// The program is about to write `size` bytes at `addr` without atomics.
pub fn plain_write(addr: usize, size: usize, site: Site) {
    begin(site);
    let t = c11check_runtime::current_thread() as usize;
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() <= t {
            p.resize(t + 1, None);
        }
        p[t] = Some((addr, size));
    });
}

/// The program is about to read `size` bytes at `addr` without atomics.
pub fn plain_read(addr: usize, size: usize, site: Site) {
    begin(site);
    let e = entry(addr);
    // SAFETY: entries are never removed; the program reads this memory.
    let (cell, init) = unsafe { (&(*e).cell, read_mem(addr, size)) };
    let o = access(
        cell,
        init,
        |loc| Action::Load {
            loc,
            ord: MemOrder::NonAtomic,
        },
        site,
    );
    // SAFETY: as above.
    if unsafe { (*e).atomic_in } == c11check_runtime::generation() {
        // SAFETY: the program is about to read it.
        unsafe { write_mem(addr, size, o.val) };
    }
}

/// An atomic operation on the `size`-byte location at `addr`: `action`
/// receives the location. Returns the outcome; `stored` says what memory
/// should hold afterwards, given it.
pub fn atomic(
    addr: usize,
    size: usize,
    action: impl FnOnce(c11check_model::Loc) -> Action,
    stored: impl FnOnce(&c11check_runtime::Outcome) -> Option<Value>,
    site: Site,
) -> c11check_runtime::Outcome {
    begin(site);
    let e = entry(addr);
    // SAFETY: entries are never removed; the program accesses this memory.
    let (cell, init) = unsafe { (&(*e).cell, read_mem(addr, size)) };
    let o = access(cell, init, action, site);
    // SAFETY: as above.
    unsafe {
        (*(e as *mut Entry)).atomic_in = c11check_runtime::generation();
        if let Some(v) = stored(&o) {
            write_mem(addr, size, v);
        }
    }
    o
}

/// Memory order numbers as the instrumentation passes them.
pub fn order(mo: i32) -> MemOrder {
    match mo {
        0 => MemOrder::Relaxed,
        1 | 2 => MemOrder::Acquire,
        3 => MemOrder::Release,
        4 => MemOrder::AcqRel,
        _ => MemOrder::SeqCst,
    }
}

/// The order of a compare-exchange's failure (never release).
pub fn failure_order(mo: i32) -> MemOrder {
    match order(mo) {
        MemOrder::Release => MemOrder::Relaxed,
        MemOrder::AcqRel => MemOrder::Acquire,
        o => o,
    }
}

/// An atomic load.
pub fn load(addr: usize, size: usize, mo: i32, site: Site) -> Value {
    let ord = order(mo);
    atomic(addr, size, |loc| Action::Load { loc, ord }, |_| None, site).val
}

/// An atomic store.
pub fn store(addr: usize, size: usize, val: Value, mo: i32, site: Site) {
    let ord = order(mo);
    let val = width(size).normalize(val);
    atomic(
        addr,
        size,
        |loc| Action::Store { loc, ord, val },
        |_| Some(val),
        site,
    );
}

/// An atomic read-modify-write; returns the value read.
pub fn rmw(addr: usize, size: usize, op: RmwOp, operand: Value, mo: i32, site: Site) -> Value {
    let ord = order(mo);
    let w = width(size);
    let operand = w.normalize(operand);
    atomic(
        addr,
        size,
        |loc| Action::Rmw {
            loc,
            ord,
            op,
            operand,
            width: w,
        },
        |o| Some(w.normalize(op.apply(o.val, operand))),
        site,
    )
    .val
}

/// An atomic compare-exchange: whether it succeeded, and the value read.
pub fn cas(
    addr: usize,
    size: usize,
    (expected, new): (Value, Value),
    (mo, fail_mo): (i32, i32),
    weak: bool,
    site: Site,
) -> (bool, Value) {
    let w = width(size);
    let (expected, new) = (w.normalize(expected), w.normalize(new));
    let (success, failure) = (order(mo), failure_order(fail_mo));
    let weak = weak && c11check_runtime::weak_cas_may_fail();
    let o = atomic(
        addr,
        size,
        |loc| Action::Cas {
            loc,
            expected,
            new,
            success,
            failure,
            weak,
            lock: false,
            take: false,
        },
        |o| o.ok.then_some(new),
        site,
    );
    (o.ok, o.val)
}

/// A fence.
pub fn fence(mo: i32, site: Site) {
    begin(site);
    if mo != 0 {
        c11check_runtime::fence(order(mo), site);
    }
}

/// The cell of the lock at `addr` (a `pthread_mutex_t`, say).
pub fn lock_cell(addr: usize) -> &'static LocCell {
    // SAFETY: entries are boxed and never removed.
    unsafe { &(*entry(addr)).cell }
}
