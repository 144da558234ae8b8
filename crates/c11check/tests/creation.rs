//! Object creation tracking: with the tracking allocator installed, reaching
//! a freshly allocated object without being ordered after its creation is a
//! data race, in exhaustive and in live random mode; reaching it through
//! synchronization is not.

use c11check::model::{Builder, FailureKind};
use c11check::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use c11check::sync::{Arc, Mutex};
use c11check::thread;

#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

/// A thread publishes a fresh `Box<AtomicUsize>` through `slot` with
/// `publish`; the other reads it through a load with `read`.
fn publication(publish: Ordering, read: Ordering) -> impl Fn() + Send + Sync + 'static {
    move || {
        let slot = Arc::new(AtomicPtr::new(std::ptr::null_mut::<AtomicUsize>()));
        let s2 = slot.clone();
        let t = thread::spawn(move || {
            let fresh = Box::into_raw(Box::new(AtomicUsize::new(7)));
            s2.store(fresh, publish);
        });
        let p = slot.load(read);
        if !p.is_null() {
            // SAFETY: the box is freed below, after the join.
            let v = unsafe { (*p).load(Ordering::Relaxed) };
            assert_eq!(v, 7);
        }
        t.join().unwrap();
        let p = slot.load(Ordering::Relaxed);
        if !p.is_null() {
            // SAFETY: made by `Box::into_raw` above, freed once.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

#[test]
fn relaxed_publication_of_a_fresh_object_is_a_race() {
    let r = Builder::new()
        .explore(publication(Ordering::Relaxed, Ordering::Relaxed))
        .unwrap_err();
    assert_eq!(r.failure.kind, FailureKind::DataRace, "{r}");
    assert!(r.failure.message.contains("created"), "{r}");
    let r = Builder::new()
        .random(200)
        .explore(publication(Ordering::Relaxed, Ordering::Relaxed))
        .unwrap_err();
    assert_eq!(r.failure.kind, FailureKind::DataRace, "{r}");
}

#[test]
fn release_acquire_publication_is_not_a_race() {
    Builder::new().check(publication(Ordering::Release, Ordering::Acquire));
    Builder::new()
        .random(300)
        .check(publication(Ordering::Release, Ordering::Acquire));
}

/// Objects made before a spawn, or handed over under a mutex (a vector that
/// grows, moving its atomics), are ordered after their creation.
#[test]
fn objects_reached_through_synchronization_are_not_races() {
    let body = || {
        let shared = Arc::new(Mutex::new(Vec::<Arc<AtomicUsize>>::new()));
        let s2 = shared.clone();
        let made = Arc::new(AtomicUsize::new(1));
        let m2 = made.clone();
        let t = thread::spawn(move || {
            m2.fetch_add(1, Ordering::Relaxed);
            for i in 0..3 {
                s2.lock().unwrap().push(Arc::new(AtomicUsize::new(i)));
            }
        });
        for _ in 0..2 {
            if let Some(a) = shared.lock().unwrap().last() {
                a.fetch_add(10, Ordering::Relaxed);
            }
        }
        t.join().unwrap();
        assert!(made.load(Ordering::Relaxed) == 2);
    };
    Builder::new().check(body);
    Builder::new().random(300).check(body);
}

/// A Treiber stack node whose fields are modelled types.
struct Node {
    next: AtomicPtr<Node>,
    value: AtomicUsize,
}

/// Two threads pop from a stack of two nodes; `free` says whether a popped
/// node is freed at once (wrong without a reclamation scheme: the other
/// thread may still read its `next`) or only after both threads are done.
fn treiber_pops(free_at_once: bool) -> impl Fn() + Send + Sync + 'static {
    move || {
        let second = Box::into_raw(Box::new(Node {
            next: AtomicPtr::new(std::ptr::null_mut()),
            value: AtomicUsize::new(2),
        }));
        let first = Box::into_raw(Box::new(Node {
            next: AtomicPtr::new(second),
            value: AtomicUsize::new(1),
        }));
        let head = Arc::new(AtomicPtr::new(first));
        let pop = move |head: &AtomicPtr<Node>| -> *mut Node {
            loop {
                let h = head.load(Ordering::Acquire);
                if h.is_null() {
                    return h;
                }
                // SAFETY: the point of the test: `h` may have been freed.
                let next = unsafe { (*h).next.load(Ordering::Relaxed) };
                if head
                    .compare_exchange(h, next, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    // SAFETY: popped: only this thread owns `h` now.
                    let _ = unsafe { (*h).value.load(Ordering::Relaxed) };
                    if free_at_once {
                        drop(unsafe { Box::from_raw(h) });
                    }
                    return h;
                }
            }
        };
        let h2 = head.clone();
        let t = thread::spawn(move || pop(&h2) as usize);
        let mine = pop(&head) as usize;
        let theirs = t.join().unwrap();
        if !free_at_once {
            for p in [mine, theirs] {
                if p != 0 {
                    // SAFETY: each popped node is freed once, after both pops.
                    drop(unsafe { Box::from_raw(p as *mut Node) });
                }
            }
        }
    }
}

#[test]
fn a_node_freed_while_another_thread_reads_it_is_reported() {
    let r = Builder::new()
        .explore(treiber_pops(true))
        .expect_err("the other thread may read the freed node's next");
    assert!(
        matches!(
            r.failure.kind,
            FailureKind::UseAfterFree | FailureKind::DataRace
        ),
        "{r}"
    );
    assert!(r.failure.message.contains("free"), "{r}");
    // Freed only after both threads are done: no report.
    Builder::new()
        .explore(treiber_pops(false))
        .unwrap_or_else(|r| panic!("{r}"));
}

#[test]
fn the_live_engine_reports_a_use_after_free() {
    let r = Builder::new()
        .random(2000)
        .seed(5)
        .live()
        .explore(treiber_pops(true))
        .expect_err("some schedule reads the freed node");
    assert!(
        matches!(
            r.failure.kind,
            FailureKind::UseAfterFree | FailureKind::DataRace
        ),
        "{r}"
    );
    Builder::new()
        .random(2000)
        .seed(5)
        .live()
        .explore(treiber_pops(false))
        .unwrap_or_else(|r| panic!("{r}"));
}
