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
//!   choices); memory is set to the value the model chose before the
//!   program reads it.
//! - `memset`, `memcpy` and `memmove` called by the program are plain
//!   stores to the locations in use that they overwrite ([`store_range`]).
//!
//! Locations are keyed by the access's first byte: accesses of different
//! sizes or overlapping at other addresses are not related (as in GenMC,
//! mixed-size accesses are not modelled).

pub mod bytes;
pub mod calls;
pub mod heap;
pub mod wide;

use c11check_model::{Action, MemOrder, RmwOp, Value, Width};
use c11check_runtime::{access, LocCell, Site};
use std::cell::RefCell;

/// What the runtime keeps per address.
struct Entry {
    cell: LocCell,
    /// The size of the access that made it (1, 2, 4 or 8 bytes; 16 for a
    /// 16-byte atomic, whose values are coded, see [`crate::memory::wide`]).
    size: u8,
    /// What memory held at this address when the runtime last wrote or
    /// read it in execution `.0`: if memory holds something else when the
    /// program next reads it, a store the instrumentation did not report
    /// happened in between (gcc expands a small `memset` into plain moves).
    shadow: std::cell::Cell<(u32, Value)>,
    /// The program's name for it, when it is (in) a global: `x`, `queue+8`.
    name: Option<&'static str>,
}

impl Entry {
    fn set_shadow(&self, v: Value) {
        self.shadow.set((generation(), v));
    }
    fn shadow(&self) -> Option<Value> {
        let (g, v) = self.shadow.get();
        (g == generation()).then_some(v)
    }
}

thread_local! {
    /// The locations, by address. Entries are boxed: the runtime keeps
    /// pointers to cells while an operation is pending.
    static TABLE: RefCell<c11check_runtime::addr_table::AddrTable<Entry>> = RefCell::new(Default::default());
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
    /// The loops the thread is in, outermost first: a wait inside a loop
    /// has a head of its own (with one head per thread, a wait whose
    /// outer loop was found first went uncut for `4 * LOOP_WINDOW` turns).
    heads: Vec<LoopHead>,
    /// Whether the current turn started or joined a thread (a loop that
    /// makes threads is not a retry loop).
    turn_made_threads: bool,
}

/// How many nested loops a thread's tracker follows.
const MAX_LOOP_DEPTH: usize = 4;

/// A loop's head: the first operation found again in the thread's recent
/// ones (and, for an inner loop, found again within one turn of the
/// loop around it).
struct LoopHead {
    pc: usize,
    /// When it was last reached.
    seen: u64,
    /// The caller's kept state (registers, top of its frame) when it was
    /// last reached: a turn that changed it (a counter went up) is not a
    /// wait, whatever it read.
    state: u64,
    /// Turns taken at it so far.
    turns: u64,
}

/// Whether some thread waited at a barrier in some execution: the summary
/// says so (GenMC's barrier-aware exploration counts one execution where
/// c11check counts one per thread that may arrive last).
pub static BARRIERS_SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether some thread went round a loop that makes no threads (a retry
/// or wait loop) in some execution: the summary says so, since the
/// execution count of such a program depends on how loops are cut.
pub static LOOPS_SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The current thread starts or joins a thread.
pub fn note_thread_op() {
    let t = crate::process::tls::current_thread() as usize;
    with_thread(t, |s| s.loops.turn_made_threads = true);
}

const LOOP_WINDOW: usize = 32;

/// A plain write the program announced and made (it becomes an event at
/// the thread's next operation, when memory holds its value).
#[derive(Clone, Copy)]
struct PendingWrite {
    addr: usize,
    size: usize,
    /// The location's entry (looked up once, when the write is announced).
    entry: &'static Entry,
    site: Site,
    /// What memory held before, if the location had no access yet in this
    /// execution: its initial value. (Not the value written: which thread
    /// touches a location first in real time, and so whether memory held
    /// the write already, differs between runs of one execution.)
    before: Option<Value>,
}

/// What the runtime keeps per modelled thread between its operations.
struct ThreadState {
    /// A plain write announced but not yet an event.
    pending: Option<PendingWrite>,
    /// The thread's loops.
    loops: LoopTracker,
    /// Set while the runtime performs the several operations one library
    /// call is made of (a barrier's wait): they are not loop turns.
    internal: bool,
    /// Whether its last request was a spin hint of the program's
    /// (`sched_yield`, a sleep), with no operation since.
    just_spun: bool,
    /// Where its last yield or sleep was called from, and its caller's
    /// kept state then (see [`program_spin_hint`]).
    last_yield: Option<(usize, u64)>,
    /// How deep it is in regions whose plain accesses the program asked
    /// not to check (ThreadSanitizer's `AnnotateIgnore*Begin`).
    ignoring: u32,
}

impl ThreadState {
    fn new() -> Self {
        ThreadState {
            pending: None,
            loops: LoopTracker {
                recent: [0; LOOP_WINDOW],
                count: 0,
                heads: Vec::new(),
                turn_made_threads: false,
            },
            internal: false,
            just_spun: false,
            last_yield: None,
            ignoring: 0,
        }
    }
}

/// Whether some thread ever entered an ignored region (the plain-access
/// path looks no further otherwise).
static ANY_IGNORED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The calling modelled thread enters (`true`) or leaves a region whose
/// plain accesses are not events: they read and write memory natively and
/// take part in no race (ThreadSanitizer's ignore annotations).
pub fn ignore_accesses(enter: bool) {
    ANY_IGNORED.store(true, std::sync::atomic::Ordering::Relaxed);
    let t = crate::process::tls::current_thread() as usize;
    with_thread(t, |s| {
        s.ignoring = if enter {
            s.ignoring + 1
        } else {
            s.ignoring.saturating_sub(1)
        }
    });
}

/// Whether the calling modelled thread is in an ignored region.
#[inline]
pub fn ignoring_accesses() -> bool {
    ANY_IGNORED.load(std::sync::atomic::Ordering::Relaxed)
        && with_thread(crate::process::tls::current_thread() as usize, |s| {
            s.ignoring > 0
        })
}

thread_local! {
    /// Per modelled thread (all run on this OS thread): its state. One
    /// thread-local for all of it: each lookup is a call into the loader.
    static THREADS: RefCell<Vec<ThreadState>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on thread `t`'s state.
#[inline]
fn with_thread<R>(t: usize, f: impl FnOnce(&mut ThreadState) -> R) -> R {
    THREADS.with(|th| {
        let mut th = th.borrow_mut();
        if th.len() <= t {
            th.resize_with(t + 1, ThreadState::new);
        }
        f(&mut th[t])
    })
}

/// Whether the thread whose loops `tr` tracks starts, with its operation
/// at `pc`, a new turn of a loop that may be a wait (`state`: what the
/// caller kept across the call, see `with_pc!`).
fn loop_turn(tr: &mut LoopTracker, pc: usize, state: u64, stack: impl FnOnce() -> u64) -> Turn {
    tr.count += 1;
    let now = tr.count;
    // Loops left long ago are forgotten (found again if they come back).
    tr.heads.retain(|h| now - h.seen <= 4 * LOOP_WINDOW as u64);
    // A head found just now has no turn before this one to compare with.
    let mut first = false;
    let known = tr.heads.iter().position(|h| h.pc == pc);
    let found = known.is_none() && tr.heads.len() < MAX_LOOP_DEPTH && recurs_within_turn(tr, pc);
    // At a loop's head, the state includes the stack above the caller's
    // frame: the same function reached again through another call (a
    // helper called twice in a row) is no turn of a loop in it.
    let state = if known.is_some() || found {
        state ^ stack().rotate_left(17)
    } else {
        state
    };
    let at = if let Some(i) = known {
        // A turn of loop `i`: the loops inside it were left.
        tr.heads.truncate(i + 1);
        Some(i)
    } else if found {
        tr.heads.push(LoopHead {
            pc,
            seen: now,
            state,
            turns: 0,
        });
        first = true;
        Some(tr.heads.len() - 1)
    } else {
        None
    };
    tr.recent[(now as usize) % LOOP_WINDOW] = pc;
    let Some(i) = at else {
        return Turn::None;
    };
    let retry = !tr.turn_made_threads;
    if retry {
        LOOPS_SEEN.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    tr.turn_made_threads = false;
    let head = &mut tr.heads[i];
    head.seen = now;
    head.turns += 1;
    let bound = LOOP_BOUND.load(std::sync::atomic::Ordering::Relaxed);
    if retry && bound > 0 && head.turns >= bound {
        BOUND_CUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return Turn::OverBound;
    }
    // A turn that changed what the loop keeps in registers or in its
    // frame is progress (a bounded loop counting), not a wait. (Compared
    // with another loop's last turn, a first turn could look like a wait
    // by chance, or by bytes of its frame the program never wrote.)
    if first {
        Turn::Found
    } else if std::mem::replace(&mut head.state, state) == state {
        Turn::MayWait
    } else {
        Turn::Progress
    }
}

/// How much of the stack above the running call's caller a loop's head
/// takes into its state (see [`stack_state`]).
const STACK_STATE_BYTES: usize = 1024;

/// A hash of thread `t`'s stack from its caller's frame up (at most
/// `STACK_STATE_BYTES`, and not above where the thread started): the
/// callers' frames, their locals and return addresses; and of where its
/// instrumented calls in progress were made (see [`calls`]: the return
/// addresses of frames further up).
fn stack_state(t: usize) -> u64 {
    let lo = crate::process::caller_sp();
    let (bottom, top) = STACKS.with(|s| {
        s.borrow()
            .get(t)
            .map_or((0, 0), |e| (e.0, e.1.saturating_sub(4096)))
    });
    // (A call that came through no entry point of ours leaves another
    // call's stack pointer: nothing of this stack to read then.)
    if !lo.is_multiple_of(8) || lo < bottom || lo >= top {
        return calls::chain();
    }
    let hi = top.min(lo + STACK_STATE_BYTES) & !7;
    let mut h: u64 = calls::chain();
    let mut a = lo;
    while a < hi {
        // SAFETY: live frames of this thread's stack, below where it started.
        let w = unsafe { (a as *const u64).read() };
        h = (h.rotate_left(11) ^ w).wrapping_mul(0x9E3779B97F4A7C15);
        a += 8;
    }
    h
}

/// Whether `pc` is among the thread's recent operations since the
/// innermost loop's head was last reached (within one turn of it: the
/// head of a loop inside it), or among the recent ones at all when the
/// thread is in no loop.
fn recurs_within_turn(tr: &LoopTracker, pc: usize) -> bool {
    let inner = tr.heads.last().map(|h| h.pc);
    let now = tr.count as usize;
    for back in 1..LOOP_WINDOW {
        let p = tr.recent[(now % LOOP_WINDOW + LOOP_WINDOW - back) % LOOP_WINDOW];
        if p == pc {
            return true;
        }
        if Some(p) == inner {
            return false;
        }
    }
    false
}

/// What reaching an instruction address means for a thread's loops.
enum Turn {
    /// Not the head of a loop.
    None,
    /// A new turn whose caller kept the same state as the turn before.
    MayWait,
    /// The head of a loop, found just now: the turn that ends here is the
    /// loop's first (the explorer compares the next one with it).
    Found,
    /// A new turn that changed the caller's state.
    Progress,
    /// A turn past the loop bound (`C11CHECK_LOOP_BOUND`).
    OverBound,
}

/// Threads cut by the loop bound so far (the summary says how many).
pub static BOUND_CUTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The most turns a loop may take (0: no bound); a thread past it is cut
/// and the execution not counted, as GenMC's `-unroll` does.
pub static LOOP_BOUND: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn set_internal(t: usize, on: bool) -> bool {
    with_thread(t, |s| std::mem::replace(&mut s.internal, on))
}

/// The program's own hint that it waits (`sched_yield`, a sleep): a
/// place where a spinning turn may be cut. The loop tracker's hint at the
/// next operation is left out then: two hints with nothing between would
/// make an empty turn. A yield whose caller changed what it keeps since
/// its last yield from the same place is not a hint: the loop counts
/// (`for (i = 0; i < 3; i++) { load; sched_yield(); }`), and cut as a
/// wait, what follows it would never run. `kept`: the caller's kept state
/// when the program called (`crate::process::caller_state()` read at the entry
/// point, before anything could switch threads); `None` for a wait the
/// runtime makes in a loop of its own (a futex wait), always a hint.
pub fn program_spin_hint(site: Site, kept: Option<u64>) {
    let t = crate::process::tls::current_thread() as usize;
    let counting = match (site, kept) {
        (Site::Pc(pc), Some(state)) => with_thread(t, |s| {
            s.last_yield
                .replace((pc, state))
                .is_some_and(|(p, kept)| p == pc && kept != state)
        }),
        _ => false,
    };
    flush_pending();
    if counting {
        c11check_runtime::yielded(site);
        return;
    }
    c11check_runtime::spin_hint(site);
    with_thread(t, |s| s.just_spun = true);
}

/// `c11check_failed_wait_turn()`: the program says the wait-loop turn
/// that ends here found nothing (whatever its loop keeps: an explicit
/// marker is never a counting loop's yield).
pub fn program_failed_turn(site: Site) {
    let t = crate::process::tls::current_thread() as usize;
    flush_pending();
    c11check_runtime::failed_turn_hint(site);
    with_thread(t, |s| s.just_spun = true);
}

/// Runs `f`, whose operations belong to one library call at one site.
pub fn internal<R>(f: impl FnOnce() -> R) -> R {
    let t = crate::process::tls::current_thread() as usize;
    let was = set_internal(t, true);
    let r = f();
    set_internal(t, was);
    r
}

/// Every operation of the program starts here: a pending plain write
/// becomes an event, and a loop's turn is marked (see `LoopTracker`).
pub fn begin(site: Site) {
    // Read before anything that may switch threads (the flush below).
    let state = crate::process::caller_state();
    let t = crate::process::tls::current_thread() as usize;
    // The loop turn this operation starts, if any, and whether the thread
    // just gave a hint of its own.
    let turn_of = |s: &mut ThreadState| {
        if s.internal {
            return None;
        }
        let spun = std::mem::replace(&mut s.just_spun, false);
        match site {
            Site::Pc(pc) => Some((loop_turn(&mut s.loops, pc, state, || stack_state(t)), spun)),
            _ => None,
        }
    };
    // One look at the thread's state when no write is pending (the
    // common case); a pending write becomes an event first.
    let turn = match with_thread(t, |s| match s.pending.take() {
        Some(p) => Err(p),
        None => Ok(turn_of(s)),
    }) {
        Ok(turn) => turn,
        Err(p) => {
            store_pending(p);
            with_thread(t, turn_of)
        }
    };
    if let Some((turn, spun)) = turn {
        match turn {
            Turn::MayWait if !spun => c11check_runtime::loop_hint(site),
            Turn::Found if !spun => c11check_runtime::loop_found_hint(site),
            Turn::MayWait | Turn::Found => {}
            // Cut without a report, as a failed assumption: GenMC does not
            // count executions that go past `-unroll` either.
            Turn::OverBound => c11check_runtime::block(c11check_model::BlockReason::Assume, site),
            Turn::None | Turn::Progress => {}
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
    calls::start(t);
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
                if let Some(e) = tb.get(a) {
                    e.cell.unbind();
                }
            }
        });
    }
}

/// Whether `addr` is on the running thread's stack.
fn on_own_stack(addr: usize) -> bool {
    let t = crate::process::tls::current_thread() as usize;
    STACKS.with(|s| {
        s.borrow()
            .get(t)
            .is_some_and(|e| (e.0..e.1).contains(&addr))
    })
}

/// Records `addr` as a location on the current thread's stack, if it is.
fn note_if_on_stack(addr: usize) {
    let t = crate::process::tls::current_thread() as usize;
    STACKS.with(|s| {
        if let Some(e) = s.borrow_mut().get_mut(t) {
            if (e.0..e.1).contains(&addr) {
                e.2.push(addr);
            }
        }
    });
}

/// The cell of the location at `addr` (made on first use).
fn entry(addr: usize, size: usize) -> *const Entry {
    entry_fresh(addr, size).0
}

/// The cell of the location at `addr` (made on first use), and whether it
/// is unbound in this execution (its next access binds it: its initial
/// value is taken to be determinate unless the caller says otherwise).
fn entry_fresh(addr: usize, size: usize) -> (*const Entry, bool) {
    let e = TABLE.with(|t| {
        let mut t = t.borrow_mut();
        let e = t.get_or_insert_with(addr, || Entry {
            cell: LocCell::at(addr),
            size: if size == 16 { 16 } else { size.min(8) as u8 },
            shadow: std::cell::Cell::new((0, 0)),
            // Leaked once per address: entries live as long as the run.
            name: crate::image::symbols::global_name(addr).map(|n| &*Box::leak(n.into_boxed_str())),
        });
        e as *const Entry
    });
    // SAFETY: entries are boxed and never removed.
    let fresh = unsafe { &(*e).cell }.bound_in(generation()).is_none();
    if fresh {
        // First use in this execution: reports call a global by its name.
        note_if_on_stack(addr);
        // SAFETY: as above.
        unsafe { (*e).cell.set_indeterminate(false) };
        // SAFETY: as above.
        // (A heap location is named when a report shows it, see
        // `heap::init`.)
        if let Some(name) = unsafe { (*e).name } {
            c11check_runtime::name_object(addr, 1, std::borrow::Cow::Borrowed(name));
        }
    }
    (e, fresh)
}

/// The entry of a location the program is about to read `size` bytes of
/// (`uninit`: a first use reading bytes nothing wrote has an indeterminate
/// initial value), after the heap's checks.
fn read_entry(addr: usize, size: usize, uninit: bool, what: &str, site: Site) -> &'static Entry {
    crate::memory::heap::check_access(addr, size, what, site);
    let (e, fresh) = entry_fresh(addr, size);
    // SAFETY: entries are boxed and never removed.
    let e = unsafe { &*e };
    if fresh && uninit && crate::memory::heap::indeterminate(addr, size) {
        e.cell.set_indeterminate(true);
    }
    e
}

/// The program's memory at `addr`, read for its access made at `site`: a
/// fault here (a null pointer) is reported at that access (see
/// `c11check_runtime::set_access_site`), not in the runtime.
///
/// # Safety
/// As [`read_mem`]'s: the program asked for this access.
unsafe fn read_program(addr: usize, size: usize, site: Site) -> Value {
    note_access_site(site);
    // SAFETY: guaranteed by the caller.
    let v = unsafe { read_mem(addr, size) };
    c11check_runtime::set_access_site(0);
    v
}

/// Writes the program's memory for its access made at `site` (as
/// [`read_program`]).
///
/// # Safety
/// As [`write_mem`]'s.
unsafe fn write_program(addr: usize, size: usize, v: Value, site: Site) {
    note_access_site(site);
    // SAFETY: guaranteed by the caller.
    unsafe { write_mem(addr, size, v) };
    c11check_runtime::set_access_site(0);
}

#[inline]
fn note_access_site(site: Site) {
    if let Site::Pc(pc) = site {
        c11check_runtime::set_access_site(pc);
    }
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
            16 => crate::memory::wide::encode((addr as *const u128).read_unaligned()),
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
            16 => (addr as *mut u128).write_unaligned(crate::memory::wide::decode(v)),
            _ => (addr as *mut u64).write_unaligned(v as u64),
        }
    }
}

/// The site of a call whose return address is `pc`.
pub fn site_of(pc: usize) -> Site {
    Site::Pc(pc)
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
    crate::process::running() && crate::process::tls::in_fiber()
}

/// The site to show for a call with return address `pc`: itself when the
/// executable made the call; when a library did (libstdc++'s
/// `std::thread` calling `pthread_create`), the innermost frame of the
/// executable on the stack, where the program called into the library.
pub fn site(pc: usize) -> Site {
    if crate::image::regions::from_program(pc) {
        return Site::Pc(pc);
    }
    unsafe extern "C" {
        fn _Unwind_Backtrace(
            trace: extern "C" fn(*mut std::ffi::c_void, *mut std::ffi::c_void) -> i32,
            arg: *mut std::ffi::c_void,
        ) -> i32;
        fn _Unwind_GetIP(ctx: *mut std::ffi::c_void) -> usize;
    }
    extern "C" fn visit(ctx: *mut std::ffi::c_void, out: *mut std::ffi::c_void) -> i32 {
        // SAFETY: the unwinder passes a valid context.
        let ip = unsafe { _Unwind_GetIP(ctx) };
        if crate::image::regions::from_program(ip) {
            // SAFETY: `out` is the `usize` below.
            unsafe { *(out as *mut usize) = ip };
            return 5; // _URC_END_OF_STACK: stop here.
        }
        0 // _URC_NO_REASON: go on.
    }
    let mut found = pc;
    // SAFETY: walks this thread's stack; the callback only reads it.
    unsafe { _Unwind_Backtrace(visit, &mut found as *mut usize as *mut std::ffi::c_void) };
    Site::Pc(found)
}

/// Whether a call with return address `pc` is the program's, in a
/// modelled thread: not libc's, the loader's, the unwinder's or this
/// runtime's own use of a pthread function.
#[inline]
pub fn program_call(pc: usize) -> bool {
    modelled() && !crate::image::regions::from_system(pc)
}

/// Turns the current thread's announced plain write, if any, into an event
/// now that memory holds its value. Every operation starts with this.
pub fn flush_pending() {
    let t = crate::process::tls::current_thread() as usize;
    let pending = with_thread(t, |s| s.pending.take());
    // The store is shown where the program wrote it.
    if let Some(p) = pending {
        store_pending(p);
    }
}

/// An announced plain write, now in memory, becomes an event.
fn store_pending(p: PendingWrite) {
    // SAFETY: the program wrote `size` bytes at `addr` just now.
    let val = unsafe { read_mem(p.addr, p.size) };
    plain_store(p.entry, val, p.before, p.site);
}

/// A plain store of `val` (already in memory) to the location of entry
/// `e`, which held `before` if the store is its first access in the
/// execution (else memory held what the model knows).
fn plain_store(e: &Entry, val: Value, before: Option<Value>, site: Site) {
    // Memory holds `val` already: other threads may run before the store
    // is an event, and must not take it for a store nobody reported.
    e.set_shadow(val);
    access(
        &e.cell,
        before.unwrap_or(val),
        |loc| Action::Store {
            loc,
            ord: MemOrder::NonAtomic,
            val,
        },
        site,
    );
}

/// The current execution's generation (see `c11check_runtime::generation`),
/// noted when it starts: asked at every access.
static GENERATION: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

#[inline]
fn generation() -> u32 {
    GENERATION.load(std::sync::atomic::Ordering::Relaxed)
}

/// Forgets announced writes (a new execution starts).
pub fn reset() {
    GENERATION.store(
        c11check_runtime::generation(),
        std::sync::atomic::Ordering::Relaxed,
    );
    THREADS.with(|t| t.borrow_mut().clear());
    STACKS.with(|s| s.borrow_mut().clear());
    calls::reset();
}

/// The program is about to write `size` bytes at `addr` without atomics.
pub fn plain_write(addr: usize, size: usize, site: Site) {
    begin(site);
    crate::memory::heap::check_access(addr, size, "writes", site);
    let t = crate::process::tls::current_thread() as usize;
    // SAFETY: entries are never removed.
    let entry = unsafe { &*entry(addr, size) };
    let first = entry.cell.bound_in(generation()).is_none();
    // SAFETY: the program is about to write there.
    let before = first.then(|| unsafe { read_program(addr, size, site) });
    with_thread(t, |s| {
        s.pending = Some(PendingWrite {
            addr,
            size,
            entry,
            site,
            before,
        })
    });
}

/// The program is about to read `size` bytes at `addr` without atomics.
pub fn plain_read(addr: usize, size: usize, site: Site) {
    plain_read_as(addr, size, true, site)
}

/// The program copies memory starting at `addr` (gcc's struct copies):
/// a plain read of its first `size` bytes, which may be uninitialized
/// (padding, a field not set yet) without the copy being wrong.
pub fn copy_read(addr: usize, size: usize, site: Site) {
    plain_read_as(addr, size, false, site)
}

fn plain_read_as(addr: usize, size: usize, uninit: bool, site: Site) {
    begin(site);
    let e = read_entry(addr, size, uninit, "reads", site);
    // SAFETY: the program reads this memory.
    let now = unsafe { read_program(addr, size, site) };
    let unseen = e.shadow().is_some_and(|v| v != now);
    // On the thread's own stack, an unreported change is not taken for a
    // store: calls and register spills, which are not instrumented,
    // overwrite slots that were locals a moment ago, with values as
    // arbitrary as the registers spilled. And the program reads what
    // memory holds there: only a racy read (reported as such) could read
    // another value, and an uninstrumented library (libstdc++'s string
    // code) writes the program's locals. So it does where the location
    // was first used with another size (a char buffer where a pointer is
    // now): the model's value is the other size's.
    let trust_memory = on_own_stack(addr) || e.size as usize != size.min(8);
    if unseen && !trust_memory {
        // Written behind the instrumentation's back: a plain store of this
        // thread (the likeliest writer: gcc's expansion of its memset).
        plain_store(e, now, None, site);
    }
    let o = access(
        &e.cell,
        now,
        |loc| Action::Load {
            loc,
            ord: MemOrder::NonAtomic,
        },
        site,
    );
    // Memory as it is now: other threads may have run while the read was
    // decided, and their accesses wrote memory (the value read above is
    // stale then).
    // SAFETY: as above.
    let now = unsafe { read_mem(addr, size) };
    if trust_memory {
        e.set_shadow(now);
        return;
    }
    // The model's value is the one read: memory may hold another store's
    // (an atomic store later in modification order ran first, or a racy
    // write ran last).
    if now != o.val {
        // SAFETY: the program is about to read this memory.
        unsafe { write_program(addr, size, o.val, site) };
    }
    e.set_shadow(o.val);
}

/// The program wrote `[lo, hi)` with something the instrumentation does
/// not see access by access (`memset`, `memcpy`): each location there that
/// is in use in this execution gets a plain store of what memory now holds
/// (others are bound from memory on their first use).
pub fn store_range(lo: usize, hi: usize, site: Site) {
    store_range_as(lo, hi, site, true)
}

/// [`store_range`] for a write the runtime made on the program's behalf in
/// the middle of an operation (a failed compare-exchange's expected value,
/// a joined thread's result): not a new operation of the program, so not a
/// loop turn (and the caller's state read at its start is long gone).
pub fn runtime_stored(lo: usize, hi: usize, site: Site) {
    store_range_as(lo, hi, site, false)
}

fn store_range_as(lo: usize, hi: usize, site: Site, program_call: bool) {
    let mut hit: Vec<(usize, usize)> = TABLE.with(|t| {
        let t = t.borrow();
        let g = generation();
        let bound = |e: &Entry| e.cell.bound_in(g).is_some();
        if hi - lo <= 256 {
            (lo..hi)
                .filter_map(|a| t.get(a).filter(|e| bound(e)).map(|e| (a, e.size as usize)))
                .collect()
        } else {
            t.iter()
                .filter(|(a, e)| (lo..hi).contains(a) && bound(e))
                .map(|(a, e)| (a, e.size as usize))
                .collect()
        }
    });
    hit.sort_unstable();
    if program_call {
        begin(site);
    } else {
        flush_pending();
    }
    for (addr, size) in hit {
        // SAFETY: inside the range the program just wrote.
        let val = unsafe { read_mem(addr, size.min(hi - addr)) };
        // SAFETY: entries are never removed.
        plain_store(unsafe { &*entry(addr, size) }, val, None, site);
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
    let e = read_entry(addr, size, true, "accesses", site);
    // SAFETY: the program accesses this memory.
    let init = unsafe { read_program(addr, size, site) };
    let o = access(&e.cell, init, action, site);
    if e.shadow().is_none() {
        e.set_shadow(init);
    }
    if let Some(v) = stored(&o) {
        // SAFETY: as above.
        unsafe { write_program(addr, size, v, site) };
        e.set_shadow(v);
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
    // (A lock's state starts free whatever its memory holds: the cell is
    // never bound indeterminate, only `read_entry` makes it so.)
    unsafe { &(*entry(addr, 8)).cell }
}
