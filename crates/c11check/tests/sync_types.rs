//! RwLock, Once, OnceLock, LazyLock, thread_local!, poisoning.

use c11check::model::{Builder, FailureKind};
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::sync::{LazyLock, Mutex, Once, OnceLock, RwLock};
use c11check::thread;
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

fn outcomes<T: Ord + Send + 'static>(f: impl Fn() -> T + Send + Sync + 'static) -> BTreeSet<T> {
    let seen = std::sync::Arc::new(StdMutex::new(BTreeSet::new()));
    let s2 = seen.clone();
    Builder::new()
        .explore(move || {
            let v = f();
            s2.lock().unwrap().insert(v);
        })
        .unwrap_or_else(|r| panic!("{r}"));
    let out = std::mem::take(&mut *seen.lock().unwrap());
    out
}

#[test]
fn rwlock_writers_exclude_readers() {
    let set = outcomes(|| {
        let l = RwLock::new((0, 0));
        thread::scope(|s| {
            s.spawn(|| {
                let mut g = l.write().unwrap();
                g.0 = 1;
                g.1 = 1;
            });
            s.spawn(|| {
                let g = l.read().unwrap();
                assert_eq!(g.0, g.1, "a reader saw half a write");
            });
        });
        let v = *l.read().unwrap();
        v
    });
    assert_eq!(set, BTreeSet::from([(1, 1)]));
}

#[test]
fn rwlock_readers_share() {
    // Two readers hold the lock at once: the second does not wait.
    let set = outcomes(|| {
        let l = RwLock::new(5);
        let a = l.read().unwrap();
        let b = l.try_read().map(|g| *g).ok();
        let v = (*a, b);
        drop(a);
        v
    });
    assert_eq!(set, BTreeSet::from([(5, Some(5))]));
}

#[test]
fn rwlock_write_while_reading_deadlocks() {
    let r = Builder::new().explore(|| {
        let l = RwLock::new(0);
        let _g = l.read().unwrap();
        let _w = l.write().unwrap();
    });
    assert_eq!(
        r.expect_err("self-deadlock").failure.kind,
        FailureKind::Deadlock
    );
}

#[test]
fn once_runs_exactly_once() {
    let set = outcomes(|| {
        let once = Once::new();
        let n = AtomicUsize::new(0);
        thread::scope(|s| {
            s.spawn(|| {
                once.call_once(|| {
                    n.fetch_add(1, Ordering::Relaxed);
                })
            });
            once.call_once(|| {
                n.fetch_add(1, Ordering::Relaxed);
            });
            assert!(once.is_completed());
        });
        n.load(Ordering::Relaxed)
    });
    assert_eq!(set, BTreeSet::from([1]));
}

#[test]
fn once_lock_value_is_seen_initialized() {
    let set = outcomes(|| {
        let cell: OnceLock<Vec<u32>> = OnceLock::new();
        thread::scope(|s| {
            let h = s.spawn(|| cell.get_or_init(|| vec![1, 2]).len());
            let mine = cell.get_or_init(|| vec![3]).len();
            (h.join().unwrap() == mine, cell.get().cloned())
        })
    });
    assert_eq!(
        set,
        BTreeSet::from([(true, Some(vec![1, 2])), (true, Some(vec![3]))])
    );
}

static LAZY: LazyLock<usize> = LazyLock::new(|| 40 + 2);
static STATIC_COUNTER: AtomicUsize = AtomicUsize::new(0);

#[test]
fn statics_start_fresh_in_every_execution() {
    let set = outcomes(|| {
        let before = STATIC_COUNTER.fetch_add(1, Ordering::Relaxed);
        thread::scope(|s| {
            s.spawn(|| STATIC_COUNTER.fetch_add(1, Ordering::Relaxed));
        });
        (before, *LAZY)
    });
    assert_eq!(set, BTreeSet::from([(0, 42)]));
}

c11check::thread_local! {
    static MINE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

#[test]
fn thread_locals_are_per_thread() {
    let set = outcomes(|| {
        MINE.set(1);
        let other = thread::scope(|s| {
            s.spawn(|| {
                let before = MINE.get();
                MINE.set(7);
                before
            })
            .join()
            .unwrap()
        });
        (MINE.get(), other)
    });
    assert_eq!(set, BTreeSet::from([(1, 0)]));
}

static POISONED: Mutex<u32> = Mutex::new(0);

#[test]
fn mutex_poisoning_and_reset_between_executions() {
    let set = outcomes(|| {
        let fresh = !POISONED.is_poisoned();
        let r = thread::spawn(|| {
            let _g = POISONED.lock().unwrap();
            panic!("poison it");
        })
        .join();
        (
            fresh,
            r.is_err(),
            POISONED.is_poisoned(),
            POISONED.lock().is_err(),
        )
    });
    assert_eq!(set, BTreeSet::from([(true, true, true, true)]));
}
