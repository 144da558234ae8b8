// The benchmark programs (see `suite.rs` for the list and the documented
// bugs). This file is `include!`d into a module that defines `facade` (the
// tool's `cell`, `sync` and `thread`), once per tool, so that one source runs
// under c11check, loom and shuttle and reports point into this file.

use facade::cell::UnsafeCell;
use facade::sync::atomic::Ordering::{self, AcqRel, Acquire, Relaxed, Release, SeqCst};
use facade::sync::atomic::{
    fence, AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize,
};
use facade::sync::{Arc, Condvar, Mutex};
use facade::thread;

/// The program called `name`.
pub fn program(name: &str) -> Option<fn()> {
    Some(match name {
        "chase-lev" => chase_lev,
        "chase-lev-fixed" => chase_lev_fixed,
        "chase-lev-weak" => chase_lev_weak,
        "spsc" => spsc,
        "spsc-fixed" => spsc_fixed,
        "barrier" => barrier,
        "barrier-weak" => barrier_weak,
        "dekker" => dekker,
        "dekker-weak" => dekker_weak,
        "mcs-lock" => mcs_lock,
        "mcs-lock-weak" => mcs_lock_weak,
        "mpmc" => mpmc,
        "mpmc-weak" => mpmc_weak,
        "ms-queue" => ms_queue,
        "ms-queue-weak" => ms_queue_weak,
        "ms-queue-c11tester" => ms_queue_c11tester,
        "linuxrw" => linuxrw,
        "linuxrw-weak" => linuxrw_weak,
        "seqlock" => seqlock,
        "seqlock-relaxed-inc" => seqlock_relaxed_inc,
        "rwlock" => rwlock,
        "rwlock-relaxed-write" => rwlock_relaxed_write,
        "seqlock-c11tester" => seqlock_c11tester,
        "rwlock-c11tester" => rwlock_c11tester,
        _ => return None,
    })
}

/// Non-atomic data shared between threads: the benchmark's own
/// synchronization is what makes sharing it sound, and that is
/// what the checkers check.
struct Racy<T>(UnsafeCell<T>);

// SAFETY: every access goes through `with`/`with_mut`, which the
// checkers watch for data races.
unsafe impl<T: Send> Sync for Racy<T> {}

impl<T> Racy<T> {
    fn new(t: T) -> Self {
        Racy(UnsafeCell::new(t))
    }
    #[track_caller]
    fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.0.with(f)
    }
    #[track_caller]
    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.0.with_mut(f)
    }
}

fn spawn<F: FnOnce() + Send + 'static>(f: F) -> thread::JoinHandle<()> {
    thread::spawn(f)
}

// ---------------------------------------------------------------
// Chase-Lev work-stealing deque (Lê et al., PPoPP'13, C11 version).
// Driver: the owner pushes 1, 2, 4 and takes twice while one
// thief steals once; every value comes out at most once.

const EMPTY: i32 = -1;
const ABORT: i32 = -2;

/// Which version of the deque.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Deq {
    /// As published: push keeps using the array it loaded
    /// before resizing.
    Published,
    /// CDSChecker's fix: reload after resizing; release/acquire
    /// on the array pointer.
    Fixed,
    /// tsan11's version: reload, but the pointer stays relaxed.
    Weak,
}

struct Array {
    size: AtomicUsize,
    buffer: Vec<AtomicI32>,
}

impl Array {
    fn alloc(size: usize) -> *mut Array {
        Box::into_raw(Box::new(Array {
            size: AtomicUsize::new(size),
            buffer: (0..size).map(|_| AtomicI32::new(0)).collect(),
        }))
    }
}

struct Deque {
    top: AtomicUsize,
    bottom: AtomicUsize,
    array: AtomicPtr<Array>,
    /// Every array allocated, freed with the deque (the owner
    /// alone adds to it; a real mutex, invisible to the model).
    arrays: std::sync::Mutex<Vec<usize>>,
    version: Deq,
}

impl Drop for Deque {
    fn drop(&mut self) {
        for &a in self.arrays.lock().unwrap().iter() {
            // SAFETY: each address came from `Array::alloc` and is
            // freed once, here, when no thread uses the deque.
            drop(unsafe { Box::from_raw(a as *mut Array) });
        }
    }
}

impl Deque {
    fn new(version: Deq) -> Self {
        let a = Array::alloc(2);
        Deque {
            top: AtomicUsize::new(0),
            bottom: AtomicUsize::new(0),
            array: AtomicPtr::new(a),
            arrays: std::sync::Mutex::new(vec![a as usize]),
            version,
        }
    }
    fn arr(&self, ord: Ordering) -> &Array {
        // SAFETY: arrays live as long as the deque.
        unsafe { &*self.array.load(ord) }
    }
    fn take(&self) -> i32 {
        let b = self.bottom.load(Relaxed).wrapping_sub(1);
        let a = self.arr(Relaxed);
        self.bottom.store(b, Relaxed);
        fence(SeqCst);
        let t = self.top.load(Relaxed);
        if t <= b {
            let mut x = a.buffer[b % a.size.load(Relaxed)].load(Relaxed);
            if t == b {
                if self
                    .top
                    .compare_exchange(t, t + 1, SeqCst, Relaxed)
                    .is_err()
                {
                    x = EMPTY;
                }
                self.bottom.store(b.wrapping_add(1), Relaxed);
            }
            x
        } else {
            self.bottom.store(b.wrapping_add(1), Relaxed);
            EMPTY
        }
    }
    fn resize(&self) {
        let a = self.arr(Relaxed);
        let size = a.size.load(Relaxed);
        let new_size = size << 1;
        let new_a = Array::alloc(new_size);
        self.arrays.lock().unwrap().push(new_a as usize);
        // SAFETY: just allocated, freed with the deque.
        let na = unsafe { &*new_a };
        let top = self.top.load(Relaxed);
        let bottom = self.bottom.load(Relaxed);
        for i in top..bottom {
            na.buffer[i % new_size].store(a.buffer[i % size].load(Relaxed), Relaxed);
        }
        let publish = if self.version == Deq::Fixed {
            Release
        } else {
            Relaxed
        };
        self.array.store(new_a, publish);
    }
    fn push(&self, x: i32) {
        let b = self.bottom.load(Relaxed);
        let t = self.top.load(Acquire);
        let mut a = self.arr(Relaxed);
        if b.wrapping_sub(t) > a.size.load(Relaxed) - 1 {
            self.resize();
            if self.version != Deq::Published {
                a = self.arr(Relaxed);
            }
        }
        a.buffer[b % a.size.load(Relaxed)].store(x, Relaxed);
        fence(Release);
        self.bottom.store(b + 1, Relaxed);
    }
    fn steal(&self) -> i32 {
        let t = self.top.load(Acquire);
        fence(SeqCst);
        let b = self.bottom.load(Acquire);
        if t < b {
            let a = self.arr(if self.version == Deq::Fixed {
                Acquire
            } else {
                Relaxed
            });
            let x = a.buffer[t % a.size.load(Relaxed)].load(Relaxed);
            if self
                .top
                .compare_exchange(t, t + 1, SeqCst, Relaxed)
                .is_err()
            {
                return ABORT;
            }
            return x;
        }
        EMPTY
    }
}

fn chase_lev_with(version: Deq) {
    let q = Arc::new(Deque::new(version));
    let q2 = q.clone();
    let thief = thread::spawn(move || q2.steal());
    q.push(1);
    q.push(2);
    q.push(4);
    let b = q.take();
    let c = q.take();
    let a = thief.join().unwrap();
    let items: Vec<i32> = [a, b, c]
        .into_iter()
        .filter(|v| *v != EMPTY && *v != ABORT)
        .collect();
    for v in &items {
        assert!(
            matches!(v, 1 | 2 | 4),
            "the deque returned {v}, which was never pushed (a={a} b={b} c={c})"
        );
    }
    let mut sorted = items.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        items.len(),
        "an item came out twice (a={a} b={b} c={c})"
    );
}

/// Bug (CDSChecker's find): after a resize, `push` stores into the old
/// array; a later take or steal reads a never-written slot of the new one.
pub fn chase_lev() {
    chase_lev_with(Deq::Published)
}
/// No bug: `push` reloads the array; the pointer is published release/acquire.
pub fn chase_lev_fixed() {
    chase_lev_with(Deq::Fixed)
}
/// Bug (tsan11's version): the new array's pointer is relaxed, so a steal
/// can read a slot whose copy does not happen before it.
pub fn chase_lev_weak() {
    chase_lev_with(Deq::Weak)
}

// ---------------------------------------------------------------
// SPSC queue with an eventcount (Vyukov). Driver: one thread
// enqueues 11, the other dequeues (sleeping on the eventcount when
// empty) and checks it got 11.

struct EventCount {
    count: AtomicU32,
    /// The waiter count, under the eventcount's mutex.
    guard: Mutex<u32>,
    cv: Condvar,
}

const WAITING: u32 = 0x8000_0000;

impl EventCount {
    fn new() -> Self {
        EventCount {
            count: AtomicU32::new(0),
            guard: Mutex::new(0),
            cv: Condvar::new(),
        }
    }
    fn signal_relaxed(&self) {
        let cmp = self.count.load(Relaxed);
        self.signal_impl(cmp);
    }
    fn signal(&self) {
        let cmp = self.count.fetch_add(0, SeqCst);
        self.signal_impl(cmp);
    }
    fn get(&self) -> u32 {
        self.count.fetch_or(WAITING, SeqCst) & !WAITING
    }
    fn wait(&self, cmp: u32) {
        let ec = self.count.load(SeqCst);
        if cmp == ec & !WAITING {
            let mut g = self.guard.lock().unwrap();
            let ec = self.count.load(SeqCst);
            if cmp == ec & !WAITING {
                *g += 1;
                g = self.cv.wait(g).unwrap();
            }
            drop(g);
        }
    }
    fn signal_impl(&self, mut cmp: u32) {
        if cmp & WAITING != 0 {
            let mut g = self.guard.lock().unwrap();
            while let Err(now) =
                self.count
                    .compare_exchange_weak(cmp, (cmp + 1) & !WAITING, Relaxed, Relaxed)
            {
                cmp = now;
            }
            let w = *g;
            *g = 0;
            drop(g);
            if w != 0 {
                self.cv.notify_all();
            }
        }
    }
}

struct SpscNode {
    next: AtomicUsize,
    data: Racy<i32>,
}

/// Nodes are indices into a pool (node 0 is the initial dummy);
/// `head` belongs to the producer, `tail` to the consumer.
struct Spsc {
    nodes: Vec<SpscNode>,
    head: Racy<usize>,
    tail: Racy<usize>,
    allocated: Racy<usize>,
    ec: EventCount,
    fixed: bool,
}

impl Spsc {
    fn new(capacity: usize, fixed: bool) -> Self {
        Spsc {
            nodes: (0..capacity + 1)
                .map(|_| SpscNode {
                    next: AtomicUsize::new(0),
                    data: Racy::new(0),
                })
                .collect(),
            head: Racy::new(0),
            tail: Racy::new(0),
            allocated: Racy::new(0),
            ec: EventCount::new(),
            fixed,
        }
    }
    fn enqueue(&self, data: i32) {
        // SAFETY (all cells here): producer-private state.
        let n = self.allocated.with_mut(|p| unsafe {
            *p += 1;
            *p
        });
        self.nodes[n].data.with_mut(|p| unsafe { *p = data });
        self.nodes[n].next.store(0, SeqCst);
        let head = self.head.with(|p| unsafe { *p });
        self.nodes[head].next.store(n, Release);
        self.head.with_mut(|p| unsafe { *p = n });
        if self.fixed {
            self.ec.signal();
        } else {
            self.ec.signal_relaxed();
        }
    }
    fn dequeue(&self) -> i32 {
        let mut data = self.try_dequeue();
        while data == 0 {
            let cmp = self.ec.get();
            data = self.try_dequeue();
            if data != 0 {
                break;
            }
            self.ec.wait(cmp);
            data = self.try_dequeue();
        }
        data
    }
    fn try_dequeue(&self) -> i32 {
        // SAFETY (cells): `tail` is consumer-private; a node's
        // data is written before it is published with release.
        let t = self.tail.with(|p| unsafe { *p });
        let n = self.nodes[t].next.load(Acquire);
        if n == 0 {
            return 0;
        }
        let data = self.nodes[n].data.with(|p| unsafe { *p });
        self.tail.with_mut(|p| unsafe { *p = n });
        data
    }
}

fn spsc_with(fixed: bool) {
    let q = Arc::new(Spsc::new(1, fixed));
    let (q1, q2) = (q.clone(), q.clone());
    let a = spawn(move || q1.enqueue(11));
    let b = thread::spawn(move || q2.dequeue());
    a.join().unwrap();
    let d = b.join().unwrap();
    assert_eq!(d, 11);
}

/// Bug (known): the producer's relaxed `signal_relaxed` can miss the waiter
/// flag the consumer set; the consumer sleeps forever (deadlock).
pub fn spsc() {
    spsc_with(false)
}
/// No bug: the producer signals with a seq_cst read-modify-write.
pub fn spsc_fixed() {
    spsc_with(true)
}

// ---------------------------------------------------------------
// Spinning barrier. Driver: thread A writes `var` then waits;
// the readers wait then read `var`.

struct SpinBarrier {
    n: u32,
    nwait: AtomicU32,
    step: AtomicU32,
    step_order: Ordering,
}

impl SpinBarrier {
    fn wait(&self) -> bool {
        let step = self.step.load(SeqCst);
        if self.nwait.fetch_add(1, SeqCst) == self.n - 1 {
            self.nwait.store(0, SeqCst);
            self.step.fetch_add(1, self.step_order);
            true
        } else {
            while self.step.load(SeqCst) == step {
                thread::yield_now();
            }
            false
        }
    }
}

/// A writes `var` and waits at the barrier; `readers` threads wait, then
/// read `var`.
fn barrier_with(step_order: Ordering, readers: u32) {
    let bar = Arc::new(SpinBarrier {
        n: readers + 1,
        nwait: AtomicU32::new(0),
        step: AtomicU32::new(0),
        step_order,
    });
    let var = Arc::new(Racy::new(0u32));
    let (b1, v1) = (bar.clone(), var.clone());
    let a = spawn(move || {
        // SAFETY: the barrier orders this write before the readers' reads.
        v1.with_mut(|p| unsafe { *p = 1 });
        b1.wait();
    });
    let bs: Vec<_> = (0..readers)
        .map(|_| {
            let (b2, v2) = (bar.clone(), var.clone());
            spawn(move || {
                b2.wait();
                // SAFETY: as above.
                let v = v2.with(|p| unsafe { *p });
                std::hint::black_box(v);
            })
        })
        .collect();
    for b in bs {
        b.join().unwrap();
    }
    a.join().unwrap();
}

/// No bug: a seq_cst barrier orders A's write before B's read.
/// CDSChecker's driver: one reader.
pub fn barrier() {
    barrier_with(SeqCst, 1)
}
/// Bug (tsan11's version): the last arrival's step increment is relaxed,
/// so a waiter leaves without synchronizing: its read of `var` races.
/// C11Tester's driver: three readers (a race unless A arrives first).
pub fn barrier_weak() {
    barrier_with(Relaxed, 3)
}

// ---------------------------------------------------------------
// Dekker's critical section with fences. Driver: two threads
// each write `var` inside the critical section.

struct Dekker {
    flag: [AtomicBool; 2],
    turn: AtomicU32,
    var: Racy<u32>,
}

fn dekker_enter_exit(d: &Dekker, me: usize, first_fence: bool) {
    let other = 1 - me;
    d.flag[me].store(true, Relaxed);
    if first_fence {
        fence(SeqCst);
    }
    while d.flag[other].load(Relaxed) {
        if d.turn.load(Relaxed) != me as u32 {
            d.flag[me].store(false, Relaxed);
            while d.turn.load(Relaxed) != me as u32 {
                thread::yield_now();
            }
            d.flag[me].store(true, Relaxed);
            fence(SeqCst);
        } else {
            thread::yield_now();
        }
    }
    fence(Acquire);
    // SAFETY: the critical section.
    d.var.with_mut(|p| unsafe { *p = me as u32 + 1 });
    d.turn.store(other as u32, Relaxed);
    fence(Release);
    d.flag[me].store(false, Relaxed);
}

fn dekker_with(p0_first_fence: bool) {
    let d = Arc::new(Dekker {
        flag: [AtomicBool::new(false), AtomicBool::new(false)],
        turn: AtomicU32::new(0),
        var: Racy::new(0),
    });
    let (d0, d1) = (d.clone(), d.clone());
    let a = spawn(move || dekker_enter_exit(&d0, 0, p0_first_fence));
    let b = spawn(move || dekker_enter_exit(&d1, 1, true));
    a.join().unwrap();
    b.join().unwrap();
}

/// No bug: fences make the critical sections exclusive and ordered.
pub fn dekker() {
    dekker_with(true)
}
/// Bug (tsan11's version): p0 lacks its first seq_cst fence; both threads
/// can enter the critical section: the writes to `var` race.
pub fn dekker_weak() {
    dekker_with(false)
}

// ---------------------------------------------------------------
// MCS queue lock; each thread's queue node is its slot in
// `nodes` (0 is null, i + 1 is thread i's node). Driver: A
// writes then reads `shared`, B reads then writes it, each
// access under the lock, released in between.

struct McsNode {
    next: AtomicUsize,
    gate: AtomicU32,
}

struct Mcs {
    tail: AtomicUsize,
    nodes: [McsNode; 2],
    handover: Ordering,
    shared: Racy<u32>,
}

impl Mcs {
    fn lock(&self, me: usize) {
        let n = &self.nodes[me];
        n.next.store(0, Relaxed);
        n.gate.store(1, Relaxed);
        let pred = self.tail.swap(me + 1, AcqRel);
        if pred != 0 {
            self.nodes[pred - 1].next.store(me + 1, Release);
            while n.gate.load(Acquire) != 0 {
                thread::yield_now();
            }
        }
    }
    fn unlock(&self, me: usize) {
        let n = &self.nodes[me];
        let mut next = n.next.load(Acquire);
        if next == 0 {
            if self
                .tail
                .compare_exchange(me + 1, 0, AcqRel, Acquire)
                .is_ok()
            {
                return;
            }
            loop {
                next = n.next.load(Acquire);
                if next != 0 {
                    break;
                }
                thread::yield_now();
            }
        }
        self.nodes[next - 1].gate.store(0, self.handover);
    }
}

fn mcs_with(handover: Ordering) {
    let m = Arc::new(Mcs {
        tail: AtomicUsize::new(0),
        nodes: [
            McsNode {
                next: AtomicUsize::new(0),
                gate: AtomicU32::new(0),
            },
            McsNode {
                next: AtomicUsize::new(0),
                gate: AtomicU32::new(0),
            },
        ],
        handover,
        shared: Racy::new(0),
    });
    let (ma, mb) = (m.clone(), m.clone());
    // SAFETY (cells): every access is inside the lock.
    let a = spawn(move || {
        ma.lock(0);
        ma.shared.with_mut(|p| unsafe { *p = 17 });
        ma.unlock(0);
        ma.lock(0);
        std::hint::black_box(ma.shared.with(|p| unsafe { *p }));
        ma.unlock(0);
    });
    let b = spawn(move || {
        mb.lock(1);
        std::hint::black_box(mb.shared.with(|p| unsafe { *p }));
        mb.unlock(1);
        mb.lock(1);
        mb.shared.with_mut(|p| unsafe { *p = 17 });
        mb.unlock(1);
    });
    a.join().unwrap();
    b.join().unwrap();
}

/// No bug: the MCS lock orders the critical sections.
pub fn mcs_lock() {
    mcs_with(Release)
}
/// Bug (our weakening): the hand-over store to the successor's gate is
/// relaxed; the successor's critical section races with ours.
pub fn mcs_lock_weak() {
    mcs_with(Relaxed)
}

// ---------------------------------------------------------------
// Bounded MPMC queue (Vyukov's mpmc_boundq_1_alt), 4 slots.

const MPMC_SIZE: u32 = 4;

struct Mpmc {
    array: [Racy<i32>; MPMC_SIZE as usize],
    rdwr: AtomicU32,
    read: AtomicU32,
    written: AtomicU32,
    fetch_cas: Ordering,
    publish: Ordering,
}

impl Mpmc {
    fn new(fetch_cas: Ordering, publish: Ordering) -> Self {
        Mpmc {
            array: [Racy::new(0), Racy::new(0), Racy::new(0), Racy::new(0)],
            rdwr: AtomicU32::new(0),
            read: AtomicU32::new(0),
            written: AtomicU32::new(0),
            fetch_cas,
            publish,
        }
    }
    fn read_fetch(&self) -> Option<usize> {
        let mut rdwr = self.rdwr.load(Acquire);
        let (rd, wr) = loop {
            let (rd, wr) = ((rdwr >> 16) & 0xFFFF, rdwr & 0xFFFF);
            if wr == rd {
                return None;
            }
            match self
                .rdwr
                .compare_exchange_weak(rdwr, rdwr + (1 << 16), self.fetch_cas, Acquire)
            {
                Ok(_) => break (rd, wr),
                Err(now) => {
                    rdwr = now;
                    thread::yield_now();
                }
            }
        };
        while (self.written.load(Acquire) & 0xFFFF) != wr {
            thread::yield_now();
        }
        Some((rd % MPMC_SIZE) as usize)
    }
    fn read_consume(&self) {
        self.read.fetch_add(1, Release);
    }
    fn write_prepare(&self) -> Option<usize> {
        let mut rdwr = self.rdwr.load(Acquire);
        let (rd, wr) = loop {
            let (rd, wr) = ((rdwr >> 16) & 0xFFFF, rdwr & 0xFFFF);
            if wr == ((rd + MPMC_SIZE) & 0xFFFF) {
                return None;
            }
            match self.rdwr.compare_exchange_weak(
                rdwr,
                (rd << 16) | ((wr + 1) & 0xFFFF),
                AcqRel,
                Acquire,
            ) {
                Ok(_) => break (rd, wr),
                Err(now) => {
                    rdwr = now;
                    thread::yield_now();
                }
            }
        };
        while (self.read.load(Acquire) & 0xFFFF) != rd {
            thread::yield_now();
        }
        Some((wr % MPMC_SIZE) as usize)
    }
    fn write_publish(&self) {
        self.written.fetch_add(1, self.publish);
    }
    fn write(&self, v: i32) {
        let bin = self.write_prepare().expect("the queue is never full here");
        // SAFETY: the slot is ours between prepare and publish.
        self.array[bin].with_mut(|p| unsafe { *p = v });
        self.write_publish();
    }
    fn drain(&self) {
        while let Some(bin) = self.read_fetch() {
            // SAFETY: the slot is ours between fetch and consume.
            std::hint::black_box(self.array[bin].with(|p| unsafe { *p }));
            self.read_consume();
        }
    }
}

/// No bug. CDSChecker's driver: two identical threads, each enqueues an
/// item, then dequeues one (if it finds one).
pub fn mpmc() {
    let q = Arc::new(Mpmc::new(AcqRel, Release));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let q = q.clone();
            spawn(move || {
                q.write(1);
                if let Some(bin) = q.read_fetch() {
                    // SAFETY: the slot is ours between fetch and consume.
                    std::hint::black_box(q.array[bin].with(|p| unsafe { *p }));
                    q.read_consume();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// Bug (tsan11's version): `write_publish` is relaxed; a reader reads a
/// slot without synchronizing with its writer. tsan11's driver: an initial
/// element, two writers, two readers that drain the queue.
pub fn mpmc_weak() {
    let q = Arc::new(Mpmc::new(Acquire, Relaxed));
    q.write(17);
    let mut hs = Vec::new();
    for _ in 0..2 {
        let q = q.clone();
        hs.push(spawn(move || q.write(1)));
    }
    for _ in 0..2 {
        let q = q.clone();
        hs.push(spawn(move || q.drain()));
    }
    for h in hs {
        h.join().unwrap();
    }
}

// ---------------------------------------------------------------
// Michael-Scott queue over a node pool with tagged indices
// (index in the low 32 bits, a modification count above), each
// thread allocating from a free list of its own. Driver: two
// threads each enqueue a value, then dequeue one.

/// The dummy, then `MS_FREE` nodes per thread (up to four threads).
const MS_NODES: usize = 2 + 4 * MS_FREE;
const POISON: u64 = 0x666;
const MS_FREE: usize = 4;

fn ptr(p: u64) -> u64 {
    p & 0xFFFF_FFFF
}
fn count(p: u64) -> u64 {
    p >> 32
}
fn make(ptr: u64, count: u64) -> u64 {
    (count << 32) | ptr
}

struct MsNode {
    value: Racy<u32>,
    next: AtomicU64,
}

struct MsQueue {
    head: AtomicU64,
    tail: AtomicU64,
    nodes: Vec<MsNode>,
    link: Ordering,
}

impl MsQueue {
    fn new(threads: usize, link: Ordering) -> Self {
        let nodes = (0..MS_NODES)
            .map(|i| {
                let free = i >= 2 && (i - 2) % MS_FREE < 2 && (i - 2) / MS_FREE < threads;
                MsNode {
                    value: Racy::new(0),
                    next: AtomicU64::new(if free { make(POISON, 0) } else { 0 }),
                }
            })
            .collect();
        MsQueue {
            head: AtomicU64::new(make(1, 0)),
            tail: AtomicU64::new(make(1, 0)),
            nodes,
            link,
        }
    }
    fn next_of(&self, p: u64) -> &AtomicU64 {
        &self.nodes[ptr(p) as usize].next
    }
    fn enqueue(&self, free: &mut Vec<u64>, val: u32) {
        let node = free.pop().expect("free list is empty");
        // SAFETY: the node is ours until it is linked.
        self.nodes[node as usize]
            .value
            .with_mut(|p| unsafe { *p = val });
        let tmp = self.nodes[node as usize].next.load(Relaxed);
        self.nodes[node as usize]
            .next
            .store(make(0, count(tmp)), Relaxed);
        let mut tail;
        loop {
            tail = self.tail.load(Acquire);
            let next = self.next_of(tail).load(Acquire);
            if tail == self.tail.load(Relaxed) {
                assert_ne!(ptr(next), POISON, "uninitialized next");
                if ptr(next) == 0
                    && self
                        .next_of(tail)
                        .compare_exchange(next, make(node, count(next) + 1), self.link, Relaxed)
                        .is_ok()
                {
                    break;
                }
                let p = ptr(self.next_of(tail).load(Acquire));
                let _ =
                    self.tail
                        .compare_exchange(tail, make(p, count(tail) + 1), Release, Relaxed);
                thread::yield_now();
            }
        }
        let _ = self
            .tail
            .compare_exchange(tail, make(node, count(tail) + 1), Release, Relaxed);
    }
    fn dequeue(&self, free: &mut Vec<u64>) -> Option<u32> {
        loop {
            let head = self.head.load(Acquire);
            let tail = self.tail.load(Relaxed);
            let next = self.next_of(head).load(Acquire);
            if self.head.load(Relaxed) == head {
                if ptr(head) == ptr(tail) {
                    assert_ne!(ptr(next), POISON, "uninitialized next");
                    if ptr(next) == 0 {
                        return None;
                    }
                    let _ = self.tail.compare_exchange(
                        tail,
                        make(ptr(next), count(tail) + 1),
                        Release,
                        Relaxed,
                    );
                    thread::yield_now();
                } else {
                    // SAFETY: published by the CAS that linked it.
                    let v = self.nodes[ptr(next) as usize].value.with(|p| unsafe { *p });
                    if self
                        .head
                        .compare_exchange(head, make(ptr(next), count(head) + 1), Release, Relaxed)
                        .is_ok()
                    {
                        free.push(ptr(head));
                        return Some(v);
                    }
                    thread::yield_now();
                }
            }
        }
    }
}

fn ms_queue_with(link: Ordering) {
    let q = Arc::new(MsQueue::new(2, link));
    let hs: Vec<_> = (0..2u64)
        .map(|t| {
            let q = q.clone();
            thread::spawn(move || {
                let mut free: Vec<u64> = (0..2).map(|j| 2 + t * MS_FREE as u64 + j).rev().collect();
                let input = [17, 37][t as usize];
                q.enqueue(&mut free, input);
                (input, q.dequeue(&mut free))
            })
        })
        .collect();
    let (mut ins, mut outs) = (0, 0);
    for h in hs {
        let (i, o) = h.join().unwrap();
        ins += i;
        outs += o.expect("a dequeue after an enqueue found the queue empty");
    }
    assert_eq!(ins, outs, "the values dequeued are not those enqueued");
}

/// No bug: two threads each enqueue, then dequeue.
pub fn ms_queue() {
    ms_queue_with(Release)
}
/// Bug (our weakening): the CAS linking a new node is relaxed; a dequeuer
/// reads the node's value without synchronizing with the enqueuer.
pub fn ms_queue_weak() {
    ms_queue_with(Relaxed)
}

/// Bug (the driver's): C11Tester's driver, four threads; thread 0 enqueues
/// `input[0]`, the others each write `input[1]` with no synchronization
/// (a race every execution has) and enqueue it; then each dequeues. The
/// queue itself is correct.
pub fn ms_queue_c11tester() {
    let q = Arc::new(MsQueue::new(4, Release));
    let input = Arc::new([Racy::new(0u32), Racy::new(0u32)]);
    let hs: Vec<_> = (0..4u64)
        .map(|t| {
            let (q, input) = (q.clone(), input.clone());
            thread::spawn(move || {
                let mut free: Vec<u64> = (0..2).map(|j| 2 + t * MS_FREE as u64 + j).rev().collect();
                let (slot, v) = if t == 0 { (0, 17) } else { (1, 37) };
                // SAFETY: not sound, and that is the point: threads 1-3 all
                // write `input[1]`; the checker reports it as a data race.
                input[slot].with_mut(|p| unsafe { *p = v });
                // SAFETY: as above.
                let v = input[slot].with(|p| unsafe { *p });
                q.enqueue(&mut free, v);
                q.dequeue(&mut free)
            })
        })
        .collect();
    for h in hs {
        std::hint::black_box(h.join().unwrap());
    }
}

// ---------------------------------------------------------------
// Linux reader-writer spinlock (ported from the kernel's
// architecture code by CDSChecker's authors).

const BIAS: i32 = 0x0010_0000;

struct RwSpin {
    lock: AtomicI32,
    /// Order of a reader's retried acquisition.
    read_retry: Ordering,
    /// Order of the writer's first and retried acquisitions.
    write_first: Ordering,
    write_retry: Ordering,
}

impl RwSpin {
    fn new(read_retry: Ordering, write_first: Ordering, write_retry: Ordering) -> Self {
        RwSpin {
            lock: AtomicI32::new(BIAS),
            read_retry,
            write_first,
            write_retry,
        }
    }
    fn read_lock(&self) {
        let mut prior = self.lock.fetch_sub(1, Acquire);
        while prior <= 0 {
            self.lock.fetch_add(1, Relaxed);
            while self.lock.load(Relaxed) <= 0 {
                thread::yield_now();
            }
            prior = self.lock.fetch_sub(1, self.read_retry);
        }
    }
    fn write_lock(&self) {
        let mut prior = self.lock.fetch_sub(BIAS, self.write_first);
        while prior != BIAS {
            self.lock.fetch_add(BIAS, Relaxed);
            while self.lock.load(Relaxed) != BIAS {
                thread::yield_now();
            }
            prior = self.lock.fetch_sub(BIAS, self.write_retry);
        }
    }
    fn read_unlock(&self) {
        self.lock.fetch_add(1, Release);
    }
    fn write_unlock(&self) {
        self.lock.fetch_add(BIAS, Release);
    }
}

/// CDSChecker's driver: two identical threads, each reads
/// `shared` under the read lock, then writes it under the write lock.
/// C11Tester's driver (`yield_in_write`) also yields inside the write lock.
fn linuxrw_with(retry: Ordering, yield_in_write: bool) {
    let l = Arc::new((RwSpin::new(retry, Acquire, retry), Racy::new(0u32)));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let l = l.clone();
            spawn(move || {
                for i in 0..2u32 {
                    if i % 2 == 0 {
                        l.0.read_lock();
                        // SAFETY: under the read lock.
                        std::hint::black_box(l.1.with(|p| unsafe { *p }));
                        l.0.read_unlock();
                    } else {
                        l.0.write_lock();
                        if yield_in_write {
                            thread::yield_now();
                        }
                        // SAFETY: under the write lock.
                        l.1.with_mut(|p| unsafe { *p = i });
                        l.0.write_unlock();
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// No bug: the Linux reader-writer spinlock.
pub fn linuxrw() {
    linuxrw_with(Acquire, false)
}
/// Bug (tsan11's version): the retried lock acquisitions are relaxed; a
/// writer that waited for the reader does not synchronize with it.
pub fn linuxrw_weak() {
    linuxrw_with(Relaxed, true)
}

/// C11Tester's driver: two writers store a pair of atomics under
/// the write lock; a reader loads it under the read lock.
fn rwlock_with(write: Ordering) {
    let l = Arc::new((
        RwSpin::new(Acquire, write, write),
        AtomicU32::new(0),
        AtomicU32::new(0),
    ));
    let writers: Vec<_> = (1..=2u32)
        .map(|v| {
            let l = l.clone();
            spawn(move || {
                l.0.write_lock();
                l.1.store(v, Relaxed);
                l.2.store(v, Relaxed);
                l.0.write_unlock();
            })
        })
        .collect();
    l.0.read_lock();
    let (x, y) = (l.1.load(Relaxed), l.2.load(Relaxed));
    l.0.read_unlock();
    assert_eq!(x, y, "the reader saw a torn pair");
    for h in writers {
        h.join().unwrap();
    }
}

/// No bug: the write lock is acquired with acquire orders.
pub fn rwlock() {
    rwlock_with(Acquire)
}
/// Bug (C11Tester's injected one): `write_lock` is relaxed; two writers'
/// stores are unordered and the reader sees a torn pair.
pub fn rwlock_relaxed_write() {
    rwlock_with(Relaxed)
}

// ---------------------------------------------------------------
// Seqlock (Boehm, MSPC'12, Fig. 5, writers using release data
// stores as in C11Tester). Driver: two writers write the pairs
// (1, 1) and (2, 2); the main thread reads a pair.

struct SeqLock {
    seq: AtomicU32,
    d1: AtomicU32,
    d2: AtomicU32,
    inc: Ordering,
}

impl SeqLock {
    fn write(&self, v: u32) {
        let mut s = self.seq.load(Relaxed);
        loop {
            if s & 1 == 0 {
                match self.seq.compare_exchange(s, s + 1, self.inc, Relaxed) {
                    Ok(_) => break,
                    Err(now) => s = now,
                }
            } else {
                thread::yield_now();
                s = self.seq.load(Relaxed);
            }
        }
        self.d1.store(v, Release);
        self.d2.store(v, Release);
        self.seq.store(s + 2, Release);
    }
    fn read(&self) -> (u32, u32) {
        loop {
            let s0 = self.seq.load(Acquire);
            let r1 = self.d1.load(Relaxed);
            let r2 = self.d2.load(Relaxed);
            fence(Acquire);
            let s1 = self.seq.load(Relaxed);
            if s0 == s1 && s0 & 1 == 0 {
                return (r1, r2);
            }
            thread::yield_now();
        }
    }
}

fn seqlock_with(inc: Ordering) {
    let l = Arc::new(SeqLock {
        seq: AtomicU32::new(0),
        d1: AtomicU32::new(0),
        d2: AtomicU32::new(0),
        inc,
    });
    let writers: Vec<_> = (1..=2u32)
        .map(|v| {
            let l = l.clone();
            spawn(move || l.write(v))
        })
        .collect();
    let (r1, r2) = l.read();
    assert_eq!(r1, r2, "the reader saw a torn pair");
    for h in writers {
        h.join().unwrap();
    }
}

/// No bug: the writers' counter increment is an acquire CAS.
pub fn seqlock() {
    seqlock_with(Acquire)
}
/// Bug (C11Tester's injected one): the increment is relaxed; two writers'
/// data stores are unordered and the reader accepts a torn pair.
pub fn seqlock_relaxed_inc() {
    seqlock_with(Relaxed)
}

// ---------------------------------------------------------------
// C11Tester's own drivers for its two injected bugs (§8.1), as in its
// benchmark repository (`tsan11-missingbug/seqlock-test.cc` and
// `rwlock-test.cc`). Where the C++ spins with `continue`, the port
// yields, so that exhaustive exploration terminates; the random engine
// treats a yield as one more scheduling point.

/// Bug (C11Tester's injected one): writers read the counter and take it
/// with relaxed orders, so two writers' data stores are unordered; a
/// reader (acquire loads of the data, a relaxed recheck) accepts a torn
/// pair. Three threads: writers of (3, 3) and (2, 2), and a reader.
pub fn seqlock_c11tester() {
    struct Seq {
        seq: AtomicI32,
        d1: AtomicI32,
        d2: AtomicI32,
    }
    let l = Arc::new(Seq {
        seq: AtomicI32::new(0),
        d1: AtomicI32::new(0),
        d2: AtomicI32::new(0),
    });
    let writer = |l: Arc<Seq>, v: i32| {
        move || {
            loop {
                let old = l.seq.load(Relaxed); // should be acquire
                if old % 2 == 1 {
                    thread::yield_now();
                    continue;
                }
                if l.seq
                    .compare_exchange(old, old + 1, Relaxed, Relaxed)
                    .is_ok()
                {
                    break;
                }
            }
            l.d1.store(v, Release);
            l.d2.store(v, Release);
            l.seq.fetch_add(1, Release);
        }
    };
    let reader = {
        let l = l.clone();
        move || loop {
            let old = l.seq.load(Acquire);
            if old % 2 == 1 {
                thread::yield_now();
                continue;
            }
            let r1 = l.d1.load(Acquire);
            let r2 = l.d2.load(Acquire);
            if l.seq.load(Relaxed) == old {
                assert_eq!(r1, r2, "the reader saw a torn pair");
                return;
            }
            thread::yield_now();
        }
    };
    let hs = [
        spawn(writer(l.clone(), 3)),
        spawn(writer(l.clone(), 2)),
        spawn(reader),
    ];
    for h in hs {
        h.join().unwrap();
    }
}

/// Bug (C11Tester's injected one): `write_lock`'s acquisitions are
/// relaxed. Three identical threads each read the pair under the read
/// lock, write it under the write lock, and do both again; a reader that
/// follows a writer without synchronizing sees a torn pair.
pub fn rwlock_c11tester() {
    let l = Arc::new((
        RwSpin::new(Acquire, Relaxed, Relaxed),
        AtomicI32::new(0),
        AtomicI32::new(0),
    ));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let l = l.clone();
            spawn(move || {
                for i in 0..4 {
                    if i % 2 == 0 {
                        l.0.read_lock();
                        let d1 = l.1.load(Relaxed);
                        let d2 = l.2.load(Relaxed);
                        assert_eq!(d1, d2, "a reader saw a torn pair");
                        l.0.read_unlock();
                    } else {
                        l.0.write_lock();
                        l.1.store(i, Relaxed);
                        l.2.store(i, Relaxed);
                        l.0.write_unlock();
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}
