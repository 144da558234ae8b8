//! Random executions on the live memory (`Builder::live`) through the Rust
//! API: outcomes among the exhaustive ones and all reached on SB, the same
//! seed gives the same executions, locks wait and retry, races and the
//! seqlock bug are found and replayed by seed, and a long execution runs.

#[path = "../examples/seqlock.rs"]
mod seqlock;

mod common;

use c11check::cell::UnsafeCell;
use c11check::model::{Builder, FailureKind, Report};
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::sync::{Arc, Condvar, Mutex};
use c11check::thread;
use common::outcomes;
use std::collections::BTreeSet;

/// Creation tracking on (see `tests/creation.rs`): no test here may report
/// an access to an object as unordered with its creation.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

#[test]
fn live_outcomes_are_exhaustive_ones_and_reach_them_all() {
    let (all, _) = outcomes(Builder::new());
    let all: BTreeSet<_> = all.into_iter().collect();
    let (sampled, n) = outcomes(Builder::new().random(300).seed(7).live());
    assert_eq!(n, 300);
    let sampled: BTreeSet<_> = sampled.into_iter().collect();
    assert_eq!(sampled, all);
}

#[test]
fn live_same_seed_same_executions() {
    let (a, _) = outcomes(Builder::new().random(50).seed(42).live());
    let (b, _) = outcomes(Builder::new().random(50).seed(42).live());
    let (c, _) = outcomes(Builder::new().random(50).seed(43).live());
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// Three threads increment a counter under a mutex.
fn three_lockers() {
    let m = Arc::new(Mutex::new(0));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let m = m.clone();
            thread::spawn(move || *m.lock().unwrap() += 1)
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 3);
}

#[test]
fn live_locks_wait_and_retry() {
    Builder::new().random(300).live().check(three_lockers);
}

/// A condition-variable wait in a live execution: the waiter sleeps until a
/// notification leaves a token (it is not run meanwhile), then takes it.
#[test]
fn live_condvar_hands_over_a_flag() {
    Builder::new().random(300).live().check(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p2 = pair.clone();
        let h = thread::spawn(move || {
            *p2.0.lock().unwrap() = true;
            p2.1.notify_one();
        });
        let mut ready = pair.0.lock().unwrap();
        while !*ready {
            ready = pair.1.wait(ready).unwrap();
        }
        drop(ready);
        h.join().unwrap();
    });
}

/// Channels, barriers and reader-writer locks wait by taking permits in
/// live executions too: a waiter sleeps until the count changes, and none
/// of these waits is taken for a hang.
#[test]
fn live_channel_barrier_and_rwlock_waits() {
    Builder::new().random(300).live().check(|| {
        let (tx, rx) = c11check::sync::mpsc::sync_channel(1);
        let barrier = Arc::new(c11check::sync::Barrier::new(2));
        let lock = Arc::new(c11check::sync::RwLock::new(0));
        let (b2, l2) = (barrier.clone(), lock.clone());
        let h = thread::spawn(move || {
            for v in 1..=3 {
                tx.send(v).unwrap();
            }
            // (Kept until the barrier, it would leave `rx.iter()` waiting
            // forever: a deadlock, which the checker reports.)
            drop(tx);
            *l2.write().unwrap() += 1;
            b2.wait();
        });
        let got: Vec<i32> = rx.iter().collect();
        assert_eq!(got, vec![1, 2, 3]);
        barrier.wait();
        assert_eq!(*lock.read().unwrap(), 1);
        h.join().unwrap();
    });
}

/// A notification sent before the wait began is lost: the waiter sleeps
/// forever, a deadlock named as a wait for the condition variable. A timed
/// wait in its place ends by timing out.
#[test]
fn live_lost_wakeup_is_a_deadlock_and_a_timed_wait_times_out() {
    let lost = |timed: bool| {
        move || {
            let pair = Arc::new((Mutex::new(()), Condvar::new()));
            let p2 = pair.clone();
            let h = thread::spawn(move || p2.1.notify_one());
            h.join().unwrap();
            let g = pair.0.lock().unwrap();
            if timed {
                let _g = pair.1.wait_timeout(g, std::time::Duration::from_millis(1));
            } else {
                let _g = pair.1.wait(g).unwrap();
            }
        }
    };
    let rep = Builder::new()
        .random(100)
        .live()
        .explore(lost(false))
        .expect_err("the wake-up is lost");
    common::assert_deadlock(&rep, "waits for a condition variable's notification");
    Builder::new().random(100).live().check(lost(true));
}

struct Racy(UnsafeCell<i32>);
// SAFETY: not safe at all: the test wants the race reported.
unsafe impl Sync for Racy {}

#[test]
fn live_finds_a_data_race() {
    let rep = Builder::new()
        .random(200)
        .live()
        .explore(|| {
            let c = Arc::new(Racy(UnsafeCell::new(0)));
            let c2 = c.clone();
            // SAFETY: the race is what is being tested (the model reports it).
            let h = thread::spawn(move || c2.0.with_mut(|p| unsafe { *p = 1 }));
            // SAFETY: as above.
            c.0.with(|p| unsafe { *p });
            h.join().unwrap();
        })
        .expect_err("the unsynchronised accesses race");
    assert_eq!(rep.failure.kind, FailureKind::DataRace, "{rep}");
}

#[test]
fn live_finds_the_seqlock_bug_and_replays_its_seed() {
    let rep = seqlock::check_with(Builder::new().random(2000).seed(1).live(), false)
        .expect_err("the torn read is found");
    assert_eq!(rep.failure.kind, FailureKind::Panic);
    assert!(rep.replay.starts_with("l1:"), "{}", rep.replay);
    // Reported once, with how many of the 2,000 iterations hit it.
    let (hits, of) = rep.hits.expect("a live run counts hits");
    assert_eq!(of, 2000);
    assert!(hits >= 1 && hits <= of);
    assert!(rep
        .to_string()
        .contains(&format!("hit in {hits} of 2000 iterations")));
    // The report shows every operation that led there (the execution is run
    // again from its seed to record them all), with source lines.
    assert!(rep.trace[0].starts_with("(all "), "{rep}");
    assert!(rep.trace.len() > 5, "{rep}");
    assert!(
        rep.trace
            .iter()
            .any(|l| l.starts_with("T1 #") && l.contains(": store(") && l.contains("seqlock.rs")),
        "{rep}"
    );
    let again = seqlock::check_with(Builder::new().replay(&rep.replay), false)
        .expect_err("the replay fails the same way");
    assert_eq!(again.failure.message, rep.failure.message);
}

/// A writer stores 1..=`stores` relaxed while a reader keeps loading (it
/// must never read backwards); with `idle`, a third thread touches the
/// location only at the end, after synchronizing, and must see the last store.
fn writer_and_reader(stores: usize, idle: bool) {
    let x = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let (x2, d2) = (x.clone(), done.clone());
    let (x3, d3) = (x.clone(), done.clone());
    let reader = thread::spawn(move || {
        let mut last = 0;
        while d2.load(Ordering::Relaxed) == 0 {
            let v = x2.load(Ordering::Relaxed);
            assert!(v >= last);
            last = v;
            thread::yield_now();
        }
    });
    let idle = idle.then(|| {
        thread::spawn(move || {
            while d3.load(Ordering::Acquire) == 0 {
                thread::yield_now();
            }
            assert_eq!(x3.load(Ordering::Relaxed), stores);
        })
    });
    for i in 1..=stores {
        x.store(i, Ordering::Relaxed);
    }
    done.store(1, Ordering::Release);
    reader.join().unwrap();
    if let Some(h) = idle {
        h.join().unwrap();
    }
}

/// 200,000 relaxed stores against a reader in one execution: the reader
/// never reads backwards.
#[test]
fn live_long_execution() {
    Builder::new()
        .random(1)
        .live()
        .max_steps(1_000_000)
        .check(|| writer_and_reader(200_000, false));
}

/// The main thread spawns a writer and a reader and joins them: while it
/// waits to join, it will read nothing before it has seen all the writer
/// did, so the memory keeps only what the reader may still read. 100,000
/// stores peak at a few thousand in memory (before, every store stayed:
/// the waiting main thread could have read any of them).
#[test]
fn a_thread_waiting_to_join_keeps_no_stores_alive() {
    const STORES: usize = 100_000;
    let summary = Builder::new()
        .random(1)
        .live()
        .max_steps(1_000_000)
        .explore(|| {
            let x = Arc::new(AtomicUsize::new(0));
            let stop = Arc::new(AtomicUsize::new(0));
            let (wx, rx, ws) = (x.clone(), x.clone(), stop.clone());
            // A load between stores ends each run of stores (which the
            // live scheduler lets go on uninterrupted), so the reader runs
            // along.
            let writer = thread::spawn(move || {
                for i in 1..=STORES {
                    wx.store(i, Ordering::Relaxed);
                    if ws.load(Ordering::Relaxed) != 0 {
                        break;
                    }
                }
            });
            let reader = thread::spawn(move || {
                let mut last = 0;
                while last < STORES {
                    let v = rx.load(Ordering::Relaxed);
                    assert!(v >= last);
                    last = v;
                }
            });
            writer.join().unwrap();
            reader.join().unwrap();
        })
        .unwrap_or_else(|r| panic!("{r}"));
    let peak = summary.peak_stores.expect("a live run reports its peak");
    assert!(peak < 20_000, "{peak} stores at once");
}

/// A long run that keeps writing is no livelock: the step bound counts a
/// thread's operations since it last wrote, while no thread writes. A
/// writer of 50,000 stores passes under a bound of 10,000, and so does a
/// thread watching another write 20,000 times under a bound of 1,000; a
/// reader that spins (no hint) on a flag nobody sets is still stopped at
/// the bound.
#[test]
fn the_live_step_bound_counts_operations_since_the_last_write() {
    Builder::new().random(2).live().max_steps(10_000).check(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let wx = x.clone();
        let writer = thread::spawn(move || {
            for i in 1..=50_000 {
                wx.store(i, Ordering::Relaxed);
            }
        });
        writer.join().unwrap();
        assert_eq!(x.load(Ordering::Relaxed), 50_000);
    });
    // A thread that watches the others work (it only reads, and what it
    // reads keeps changing) waits; it does not livelock while they write
    // (`main` polling a database's writers: a false livelock at 1,000 keys).
    Builder::new().random(3).live().max_steps(1_000).check(|| {
        let work = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let (w, d) = (work.clone(), done.clone());
        let worker = thread::spawn(move || {
            for _ in 0..20_000 {
                w.fetch_add(1, Ordering::Relaxed);
            }
            d.store(1, Ordering::Release);
        });
        let mut seen = 0;
        while done.load(Ordering::Acquire) == 0 {
            seen = work.load(Ordering::Relaxed);
        }
        assert!(seen <= 20_000);
        worker.join().unwrap();
    });
    let r = Builder::new()
        .random(1)
        .live()
        .max_steps(10_000)
        .explore(|| {
            let flag = AtomicUsize::new(0);
            let mut n = 0u64;
            while flag.load(Ordering::Relaxed) == 0 {
                n += 1;
            }
            assert!(n > 0);
        })
        .expect_err("a spin nothing ends");
    assert_eq!(r.failure.kind, FailureKind::Livelock, "{r}");
    assert!(
        r.failure.message.contains("since it last wrote"),
        "{}",
        r.failure.message
    );
}

/// A long failing run's report shows an excerpt of its trace (the last
/// operations, each thread's last ones, the failing thread's location's),
/// not its thousands of operations; `C11CHECK_FULL_TRACE=1` would show them.
#[test]
fn a_long_failing_run_shows_an_excerpt_of_its_trace() {
    let r = Builder::new()
        .random(1)
        .live()
        .max_steps(100_000)
        .explore(|| {
            let n = Arc::new(AtomicUsize::new(0));
            let n2 = n.clone();
            let h = thread::spawn(move || {
                for _ in 0..3000 {
                    n2.fetch_add(1, Ordering::Relaxed);
                }
            });
            for _ in 0..3000 {
                n.fetch_add(1, Ordering::Relaxed);
            }
            h.join().unwrap();
            assert_eq!(n.load(Ordering::Relaxed), 0, "the end of a long run");
        })
        .expect_err("the assertion fails");
    assert!(r.trace.len() < 150, "{} lines", r.trace.len());
    assert!(
        r.trace[0].contains("C11CHECK_FULL_TRACE=1"),
        "{}",
        r.trace[0]
    );
    assert!(
        r.trace[0].contains("of the execution's 600"),
        "{}",
        r.trace[0]
    );
}

/// PCT scheduling (depth 2) finds the seqlock bug too, and its replay string
/// (seed, depth, steps) reproduces it.
#[test]
fn pct_finds_the_seqlock_bug_and_replays() {
    let rep = seqlock::check_with(Builder::new().random(2000).seed(3).pct(2), false)
        .expect_err("the torn read is found");
    assert_eq!(rep.failure.kind, FailureKind::Panic);
    assert_eq!(rep.replay.split(':').count(), 4, "{}", rep.replay);
    let again = seqlock::check_with(Builder::new().replay(&rep.replay), false)
        .expect_err("the replay fails the same way");
    assert_eq!(again.failure.message, rep.failure.message);
}

/// Under PCT every lock test still passes (no false alarm from priorities).
#[test]
fn pct_locks_wait_and_retry() {
    Builder::new().random(300).pct(3).check(three_lockers);
}

/// `random(n)` alone runs the live engine (replay strings start with `l1:`);
/// `graph_random()` runs execution graphs (`c1:`).
#[test]
fn live_is_the_default_random_engine() {
    let live = seqlock::check_with(Builder::new().random(2000).seed(1), false)
        .expect_err("the torn read is found");
    assert!(live.replay.starts_with("l1:"), "{}", live.replay);
    let graph = seqlock::check_with(Builder::new().graph_random().random(2000).seed(1), false)
        .expect_err("the torn read is found");
    assert!(!graph.replay.starts_with("l1:"), "{}", graph.replay);
}

/// A long execution where one thread never reads the written location until
/// the end, with the aggressive pruning window: the reader stays coherent
/// and the run completes (the window's memory bound is checked in
/// `model::live_memory`'s tests).
#[test]
fn pruning_window_through_the_api() {
    Builder::new()
        .random(2)
        .prune_window(4)
        .max_steps(1_000_000)
        .check(|| writer_and_reader(50_000, true));
}

/// A live run counts distinct behaviours (executions differing in some
/// value a thread read): store buffering has four.
#[test]
fn live_run_counts_distinct_behaviours() {
    let s = Builder::new()
        .random(400)
        .seed(5)
        .explore(|| {
            common::sb();
        })
        .unwrap();
    assert_eq!(s.behaviours, Some(4));
}

/// Threads a loop spawns (cloning an `Arc` for each) start together: each
/// of four arrives first at a shared counter in about a quarter of the
/// executions, and every one of the 24 arrival orders occurs. (Before
/// spawns and clones ran at once, the first thread spawned arrived first
/// in 94% of these executions.)
#[test]
fn live_spawned_threads_start_together() {
    use std::sync::Mutex as StdMutex;
    let orders: std::sync::Arc<StdMutex<Vec<Vec<usize>>>> = Default::default();
    let seen = orders.clone();
    Builder::new().random(2000).seed(3).live().check(move || {
        let arrivals = Arc::new(AtomicUsize::new(0));
        let order = Arc::new(StdMutex::new(vec![0; 4]));
        let hs: Vec<_> = (0..4)
            .map(|i| {
                let (arrivals, order) = (arrivals.clone(), order.clone());
                thread::spawn(move || {
                    let k = arrivals.fetch_add(1, Ordering::Relaxed);
                    order.lock().unwrap()[k] = i;
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        seen.lock().unwrap().push(order.lock().unwrap().clone());
    });
    let orders = orders.lock().unwrap();
    assert_eq!(orders.len(), 2000);
    for i in 0..4 {
        let first = orders.iter().filter(|o| o[0] == i).count();
        assert!(
            (300..=700).contains(&first),
            "thread {i} arrived first in {first} of 2000 executions"
        );
    }
    let distinct: BTreeSet<_> = orders.iter().collect();
    assert_eq!(distinct.len(), 24);
}

/// The writer stores `flag` after 24 other operations; the reader loads it
/// once, at once. The reader asserts it read 0.
fn late_store() {
    let flag = Arc::new(AtomicUsize::new(0));
    let other = Arc::new(AtomicUsize::new(0));
    flag.store(0, Ordering::Relaxed);
    let f2 = flag.clone();
    let reader = thread::spawn(move || {
        assert_eq!(
            f2.load(Ordering::Relaxed),
            0,
            "the reader met the late store"
        );
    });
    for i in 0..12 {
        other.store(i, Ordering::Relaxed);
        other.load(Ordering::Relaxed);
    }
    flag.store(1, Ordering::Relaxed);
    reader.join().unwrap();
}

/// A load with nothing new to read may wait for a store (the default):
/// then a reader meets a store made 25 steps after it started. Without
/// it, the reader runs at once in practically every execution. The replay
/// string says which policy ran.
#[test]
fn live_parked_loads_meet_late_stores() {
    let rep = Builder::new()
        .random(2000)
        .seed(5)
        .live()
        .explore(late_store)
        .expect_err("the reader waits for the store");
    let (hits, _) = rep.hits.unwrap();
    assert!(hits >= 100, "met in {hits} of 2000");
    assert!(rep.replay.starts_with("l1:") && !rep.replay.contains(":uniform"));
    let again = Builder::new()
        .replay(&rep.replay)
        .explore(late_store)
        .expect_err("the replay meets the store too");
    assert_eq!(again.failure.message, rep.failure.message);

    let plain = Builder::new()
        .random(2000)
        .seed(5)
        .live()
        .park_loads(false)
        .explore(late_store);
    assert!(plain.is_ok(), "without parking: {}", plain.unwrap_err());
}

/// A panic a `join` takes and handles is the program's business, not a
/// failure, in random mode as in exhaustive mode.
#[test]
fn live_joined_panic_is_not_a_failure() {
    let r = Builder::new().random(200).seed(3).live().explore(|| {
        let t = thread::spawn(|| panic!("boom"));
        assert!(t.join().is_err());
    });
    assert!(r.is_ok(), "{}", r.unwrap_err());
}

/// A thread's failed assertion that reaches the main thread through
/// `join().unwrap()` is reported as that thread's, where the bug is, with
/// the main thread's panic after it; in both engines.
#[test]
fn a_passed_on_panic_names_the_thread_that_panicked() {
    fn program() {
        let t = thread::spawn(|| assert_eq!(1 + 1, 3, "the real bug"));
        t.join().unwrap();
    }
    for b in [Builder::new(), Builder::new().random(20).seed(1).live()] {
        let rep = b.explore(program).expect_err("the assertion fails");
        let m = &rep.failure.message;
        assert!(m.starts_with("thread 1 panicked at "), "{m}");
        assert!(m.lines().any(|l| l.contains("the real bug")), "{m}");
        assert!(
            m.contains("passed on through `join`: the model's main thread panicked"),
            "{m}"
        );
        assert_eq!(rep.failure.threads, vec![1, 0]);
    }
}

/// A wait loop that can only read what it read (nobody will store what it
/// waits for) is reported as soon as every thread is in such a loop or
/// waits for one, not at the step bound.
#[test]
fn live_endless_spin_is_reported_at_once() {
    let rep = Builder::new()
        .random(20)
        .seed(2)
        .live()
        .explore(|| {
            let flag = Arc::new(AtomicUsize::new(0));
            let f2 = flag.clone();
            let t = thread::spawn(move || {
                while f2.load(Ordering::Acquire) != 5 {
                    thread::yield_now();
                }
            });
            flag.store(1, Ordering::Relaxed);
            flag.store(2, Ordering::Relaxed);
            t.join().unwrap();
        })
        .expect_err("nobody stores 5");
    assert_livelock_reported_at_once(&rep, "a load loop");
}

/// Every one of 20 iterations ends in the livelock `rep` reports, within a
/// few turns of the loop (`what`), not at the step bound.
fn assert_livelock_reported_at_once(rep: &Report, what: &str) {
    assert_eq!(rep.failure.kind, FailureKind::Livelock, "{what}: {rep}");
    assert!(
        rep.failure.message.contains("spins forever"),
        "{what}: {rep}"
    );
    assert_eq!(rep.hits.map(|h| h.0), Some(20), "{what}");
    assert!(
        rep.trace.len() < 60,
        "{what}: {} operations: {rep}",
        rep.trace.len()
    );
}

/// Takes `lock` (0 free, 1 held) with a weak compare-exchange loop that
/// yields between tries.
fn spin_lock_weak(lock: &AtomicUsize) {
    while lock
        .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        thread::yield_now();
    }
}

/// No false alarm: a spinner whose flag comes only after another thread's
/// long run of loads (no store among them) and stores to other locations.
#[test]
fn live_spin_until_a_late_store_is_not_a_livelock() {
    let r = Builder::new().random(300).seed(4).live().explore(|| {
        let flag = Arc::new(AtomicUsize::new(0));
        let other = Arc::new(AtomicUsize::new(0));
        let f2 = flag.clone();
        let t = thread::spawn(move || {
            while f2.load(Ordering::Acquire) == 0 {
                thread::yield_now();
            }
        });
        for _ in 0..100 {
            other.load(Ordering::Relaxed);
        }
        for i in 0..20 {
            other.store(i, Ordering::Relaxed);
        }
        flag.store(1, Ordering::Release);
        t.join().unwrap();
    });
    assert!(r.is_ok(), "{}", r.unwrap_err());
}

/// A compare-exchange loop that can only fail (nobody stores the value it
/// expects) is a wait loop like a load loop: reported at once, strong or
/// weak (a weak one that failed spuriously is not taken as stuck, but its
/// next turns are).
#[test]
fn live_endless_compare_exchange_spin_is_reported_at_once() {
    for weak in [false, true] {
        let rep = Builder::new()
            .random(20)
            .seed(3)
            .live()
            .explore(move || {
                let lock = Arc::new(AtomicUsize::new(1));
                let l2 = lock.clone();
                let t = thread::spawn(move || loop {
                    let r = if weak {
                        l2.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
                    } else {
                        l2.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                    };
                    if r.is_ok() {
                        break;
                    }
                    thread::yield_now();
                });
                t.join().unwrap();
            })
            .expect_err("nobody releases the lock");
        assert_livelock_reported_at_once(&rep, &format!("weak {weak}"));
    }
}

/// No false alarm: a compare-exchange loop on a lock that its holder
/// releases only after a long run of loads, and a weak compare-exchange
/// loop on a free lock (it fails only spuriously, and succeeds later).
#[test]
fn live_compare_exchange_spin_until_a_late_release_is_not_a_livelock() {
    let r = Builder::new().random(300).seed(6).live().explore(|| {
        let lock = Arc::new(AtomicUsize::new(0));
        let l2 = lock.clone();
        let t = thread::spawn(move || spin_lock_weak(&l2));
        t.join().unwrap();
    });
    assert!(r.is_ok(), "{}", r.unwrap_err());
    let r = Builder::new().random(300).seed(5).live().explore(|| {
        let lock = Arc::new(AtomicUsize::new(1));
        let other = Arc::new(AtomicUsize::new(0));
        let l2 = lock.clone();
        let t = thread::spawn(move || spin_lock_weak(&l2));
        for _ in 0..100 {
            other.load(Ordering::Relaxed);
        }
        lock.store(0, Ordering::Release);
        t.join().unwrap();
    });
    assert!(r.is_ok(), "{}", r.unwrap_err());
}

/// No false alarm: a compare-exchange loop that retries with the value its
/// failure read (the usual increment loop) does not repeat its turn even
/// when no store came during it; three threads make one fail twice in a row.
#[test]
fn live_compare_exchange_retry_with_the_value_read_is_not_a_livelock() {
    let r = Builder::new().random(300).seed(7).live().explore(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let x = x.clone();
                thread::spawn(move || {
                    let mut v = x.load(Ordering::Relaxed);
                    while let Err(now) =
                        x.compare_exchange_weak(v, v + 1, Ordering::Relaxed, Ordering::Relaxed)
                    {
                        v = now;
                        thread::yield_now();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(x.load(Ordering::Relaxed), 3);
    });
    assert!(r.is_ok(), "{}", r.unwrap_err());
}

/// A live report names, for each load, the store it read (by thread and
/// sequence number, or the initial value), and `Report::dot` draws the
/// execution: a cluster per thread and an rf edge per load.
#[test]
fn live_report_names_the_stores_read_and_draws_them() {
    let rep = Builder::new()
        .random(50)
        .seed(9)
        .live()
        .explore(|| {
            let x = Arc::new(AtomicUsize::new(0));
            let x2 = x.clone();
            let t = thread::spawn(move || x2.store(1, Ordering::Relaxed));
            let a = x.load(Ordering::Relaxed);
            t.join().unwrap();
            assert_eq!(a, 0, "read the store");
        })
        .expect_err("some seed reads 1");
    let store = rep
        .trace
        .iter()
        .find(|l| l.starts_with("T1 #") && l.contains(": store(Relaxed) loc1 := 1 at "))
        .unwrap_or_else(|| panic!("no store line: {rep}"));
    let num = store[4..].split(':').next().unwrap();
    let read = format!(": load(Relaxed) loc1 = 1 (reads T1 #{num}) at ");
    assert!(
        rep.trace
            .iter()
            .any(|l| l.starts_with("T0 #") && l.contains(&read)),
        "{rep}"
    );
    assert!(rep.dot.starts_with("digraph execution {"), "{}", rep.dot);
    assert!(rep.dot.contains("subgraph cluster_t0") && rep.dot.contains("subgraph cluster_t1"));
    assert!(
        rep.dot.contains("[label=rf, color=darkgreen]"),
        "{}",
        rep.dot
    );
    assert!(rep.dot.contains("initial value of x"), "{}", rep.dot);
}
