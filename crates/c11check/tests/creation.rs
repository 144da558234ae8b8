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
