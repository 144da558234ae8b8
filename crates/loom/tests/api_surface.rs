//! Every public item of loom 0.7.2, used once as loom's users use it:
//! this file compiles only if the compatibility crate provides the whole
//! API (a missing item is a compile error), and runs under the model.

use loom::cell::{Cell, ConstPtr, MutPtr, UnsafeCell};
use loom::sync::atomic::{
    fence, spin_loop_hint, AtomicBool, AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicIsize,
    AtomicPtr, AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use loom::sync::{
    mpsc, Arc, Barrier, Condvar, LockResult, Mutex, MutexGuard, Notify, RwLock, RwLockReadGuard,
    RwLockWriteGuard, TryLockResult, WaitTimeoutResult,
};
use loom::thread::{self, JoinHandle, LocalKey, Thread, ThreadId};
use std::borrow::Borrow;
use std::time::Duration;

macro_rules! every_int {
    ($($t:ident: $v:ty),*) => {$({
        let a = $t::new(1 as $v);
        a.store(2, Ordering::SeqCst);
        let _ = a.load(Ordering::Acquire);
        let _ = a.swap(3, Ordering::AcqRel);
        #[allow(deprecated)]
        let _ = a.compare_and_swap(3, 4, Ordering::SeqCst);
        let _ = a.compare_exchange(4, 5, Ordering::SeqCst, Ordering::Relaxed);
        // Expecting what is not there: no spurious failure to explore.
        let _ = a.compare_exchange_weak(99, 6, Ordering::SeqCst, Ordering::Relaxed);
        let _ = a.fetch_add(1, Ordering::Relaxed);
        let _ = a.fetch_sub(1, Ordering::Relaxed);
        let _ = a.fetch_and(7, Ordering::Relaxed);
        let _ = a.fetch_nand(7, Ordering::Relaxed);
        let _ = a.fetch_or(1, Ordering::Relaxed);
        let _ = a.fetch_xor(1, Ordering::Relaxed);
        let _ = a.fetch_max(9, Ordering::Relaxed);
        let _ = a.fetch_min(0, Ordering::Relaxed);
        let _ = a.fetch_update(Ordering::SeqCst, Ordering::Relaxed, |x| Some(x));
        // SAFETY: no other thread touches `a`.
        let _: $v = unsafe { a.unsync_load() };
        let mut a = a;
        a.with_mut(|v: &mut $v| *v = 1);
        let _: $v = a.into_inner();
        let _ = $t::default();
    })*};
}

fn everything() {
    // sync::atomic
    every_int!(AtomicI8: i8, AtomicI16: i16, AtomicI32: i32, AtomicI64: i64, AtomicIsize: isize,
        AtomicU8: u8, AtomicU16: u16, AtomicU32: u32, AtomicU64: u64, AtomicUsize: usize);
    let b = AtomicBool::new(false);
    b.store(true, Ordering::Release);
    let _ = b.load(Ordering::Acquire);
    let _ = b.swap(false, Ordering::AcqRel);
    #[allow(deprecated)]
    let _ = b.compare_and_swap(false, true, Ordering::SeqCst);
    let _ = b.compare_exchange(true, false, Ordering::SeqCst, Ordering::Relaxed);
    let now = b.load(Ordering::Relaxed);
    let _ = b.compare_exchange_weak(!now, true, Ordering::SeqCst, Ordering::Relaxed);
    let _ = b.fetch_and(true, Ordering::Relaxed);
    let _ = b.fetch_nand(true, Ordering::Relaxed);
    let _ = b.fetch_or(true, Ordering::Relaxed);
    let _ = b.fetch_xor(true, Ordering::Relaxed);
    let _ = b.fetch_update(Ordering::SeqCst, Ordering::Relaxed, |x| Some(!x));
    // SAFETY: no other thread touches `b`.
    let _: bool = unsafe { b.unsync_load() };
    let mut b = b;
    b.with_mut(|v: &mut bool| *v = true);
    let _: bool = b.into_inner();
    let mut x = 5u32;
    let p = AtomicPtr::new(&mut x as *mut u32);
    let _ = p.load(Ordering::Acquire);
    p.store(&mut x, Ordering::Release);
    let _ = p.swap(&mut x, Ordering::AcqRel);
    #[allow(deprecated)]
    let _ = p.compare_and_swap(&mut x, &mut x, Ordering::SeqCst);
    let _ = p.compare_exchange(&mut x, &mut x, Ordering::SeqCst, Ordering::Relaxed);
    let _ = p.compare_exchange_weak(
        std::ptr::null_mut(),
        &mut x,
        Ordering::SeqCst,
        Ordering::Relaxed,
    );
    let _ = p.fetch_update(Ordering::SeqCst, Ordering::Relaxed, Some);
    // SAFETY: no other thread touches `p`.
    let _: *mut u32 = unsafe { p.unsync_load() };
    let mut p = p;
    p.with_mut(|v: &mut *mut u32| *v = std::ptr::null_mut());
    let _: *mut u32 = p.into_inner();
    let _ = AtomicPtr::<u32>::default();
    fence(Ordering::SeqCst);
    #[allow(deprecated)]
    spin_loop_hint();

    // sync
    let a = Arc::new(1u8);
    let _ = Arc::pin(2u8);
    let _ = Arc::strong_count(&a);
    let c = a.clone();
    let _ = Arc::ptr_eq(&a, &c);
    let raw = Arc::into_raw(c);
    // SAFETY: `raw` came from `into_raw`.
    unsafe {
        Arc::increment_strong_count(raw);
        Arc::decrement_strong_count(raw);
        drop(Arc::from_raw(raw));
    }
    let _ = Arc::as_ptr(&a);
    let mut u = Arc::new(3u8);
    let _ = Arc::get_mut(&mut u);
    let _ = Arc::try_unwrap(u);
    let _ = Arc::from_std(std::sync::Arc::new(4u8));
    let _: Arc<[u8]> = Arc::from_std(std::sync::Arc::from(vec![4u8]));
    let f: Arc<u8> = Arc::from(5u8);
    let _: &u8 = f.as_ref();
    let _: &u8 = f.borrow();
    let _ = Arc::<u8>::default();

    let m = Mutex::new(0u32);
    {
        let g: LockResult<MutexGuard<'_, u32>> = m.lock();
        *g.unwrap() += 1;
    }
    let t: TryLockResult<MutexGuard<'_, u32>> = m.try_lock();
    drop(t);
    let mut m = m;
    let _ = m.get_mut();
    let _ = m.into_inner();

    let rw = RwLock::new(0u32);
    {
        let _r: LockResult<RwLockReadGuard<'_, u32>> = rw.read();
    }
    {
        let _w: LockResult<RwLockWriteGuard<'_, u32>> = rw.write();
    }
    drop(rw.try_read());
    drop(rw.try_write());
    let mut rw = rw;
    let _ = rw.get_mut();
    let _ = rw.into_inner();

    let cv = Condvar::new();
    let m = Mutex::new(false);
    cv.notify_one();
    cv.notify_all();
    let g = m.lock().unwrap();
    let (g, r): (_, WaitTimeoutResult) = cv.wait_timeout(g, Duration::from_millis(1)).unwrap();
    let _ = r.timed_out();
    drop(g);

    let _ = Barrier::new(1).wait();
    let n = Notify::new();
    n.notify();
    n.wait();

    let (tx, rx) = mpsc::channel::<u8>();
    tx.send(1).unwrap();
    let _ = rx.recv();
    let _ = rx.try_recv();
    tx.send(2).unwrap();
    let _ = rx.recv_timeout(Duration::from_millis(1));

    // cell
    let cell = UnsafeCell::new(1u32);
    cell.with(|p: *const u32| {
        // SAFETY: no writer.
        let _ = unsafe { *p };
    });
    cell.with_mut(|p: *mut u32| {
        // SAFETY: the only access.
        unsafe { *p = 2 };
    });
    let cp: ConstPtr<u32> = cell.get();
    // SAFETY: no writer while `cp` is used.
    let _ = unsafe { *cp.deref() };
    cp.with(|p: *const u32| {
        // SAFETY: as above.
        let _ = unsafe { *p };
    });
    let mp: MutPtr<u32> = cell.get_mut();
    // SAFETY: the only access.
    unsafe { *mp.deref() = 3 };
    mp.with(|p: *mut u32| {
        // SAFETY: as above.
        unsafe { *p = 4 };
    });
    let _: u32 = cell.into_inner();
    let c = Cell::new(1u32);
    c.set(2);
    let _ = c.get();
    let _ = c.replace(3);
    let _ = c.take();
    let d = Cell::new(9u32);
    c.swap(&d);
    let _ = c.into_inner();

    // thread
    let me: Thread = thread::current();
    let _: ThreadId = me.id();
    let _ = me.name();
    me.unpark();
    thread::park();
    thread::yield_now();
    let h: JoinHandle<u8> = thread::spawn(|| 1);
    let _: &Thread = h.thread();
    let _ = h.join();
    let h = thread::Builder::new()
        .name("named".into())
        .stack_size(1 << 16)
        .spawn(|| 2u8)
        .unwrap();
    let _ = h.join();
    loom::thread_local! { static LOCAL: std::cell::Cell<u32> = std::cell::Cell::new(0); }
    let key: &'static LocalKey<std::cell::Cell<u32>> = &LOCAL;
    key.with(|v| v.set(1));
    let _ = key.try_with(|v| v.get());

    // hint, alloc, lazy_static, future
    loom::hint::spin_loop();
    let layout = std::alloc::Layout::new::<u64>();
    // SAFETY: a non-zero-sized layout; freed with the same layout.
    unsafe {
        let p = loom::alloc::alloc(layout);
        loom::alloc::dealloc(p, layout);
        let p = loom::alloc::alloc_zeroed(layout);
        loom::alloc::dealloc(p, layout);
    }
    let mut track = loom::alloc::Track::new(1u8);
    let _ = track.get_ref();
    *track.get_mut() = 2;
    let _ = track.into_inner();
    loom::lazy_static! { static ref LAZY: u32 = 7; }
    assert_eq!(*LAZY, 7);
    let w = loom::future::AtomicWaker::new();
    w.wake();
    let _ = w.take_waker();
    assert_eq!(loom::future::block_on(async { 3 }), 3);
    let _ = loom::MAX_THREADS;
    // loom's exploration controls (c11check explores each execution once).
    loom::explore();
    loom::stop_exploring();
    let _: fn() = loom::skip_branch;
}

#[test]
fn every_item_of_loom_0_7_is_there_and_runs() {
    let mut b = loom::model::Builder::new();
    b.max_threads = 4;
    b.max_branches = 1_000;
    b.max_permutations = Some(10);
    b.max_duration = Some(Duration::from_secs(60));
    b.preemption_bound = Some(3);
    b.checkpoint_interval = 100;
    b.expect_explicit_explore = false;
    b.location = false;
    b.log = false;
    b.checkpoint_file("loom-api-checkpoint.json");
    b.checkpoint_file = None;
    b.check(everything);
    loom::model(|| {
        let a = Arc::new(AtomicUsize::new(0));
        let a2 = a.clone();
        thread::spawn(move || a2.fetch_add(1, Ordering::Relaxed))
            .join()
            .unwrap();
    });
    loom::model::model(|| {});
}
