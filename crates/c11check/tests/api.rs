//! The Rust API on small programs whose set of outcomes is known.

mod common;

use c11check::model::Builder;
use c11check::sync::atomic::{fence, AtomicBool, AtomicU8, AtomicUsize, Ordering};
use c11check::sync::{Arc, Mutex};
use c11check::thread;
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

/// Creation tracking on (see `tests/creation.rs`): no test here may report
/// an access to an object as unordered with its creation.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

/// Runs `f` under the model and collects the outcomes it reports.
fn outcomes<T: Ord + Send + 'static>(
    f: impl Fn() -> T + Send + Sync + 'static,
) -> (BTreeSet<T>, u64) {
    let (set, summary) = common::explore_set(Builder::new(), f);
    (set, summary.stats.executions)
}

fn sb(ord: Ordering) -> (BTreeSet<(usize, usize)>, u64) {
    outcomes(move || {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let (x2, y2) = (x.clone(), y.clone());
        let t = thread::spawn(move || {
            x2.store(1, ord);
            y2.load(if ord == Ordering::SeqCst {
                ord
            } else {
                Ordering::Relaxed
            })
        });
        y.store(1, ord);
        let a = x.load(if ord == Ordering::SeqCst {
            ord
        } else {
            Ordering::Relaxed
        });
        let b = t.join().unwrap();
        (a, b)
    })
}

#[test]
fn store_buffering_relaxed_shows_both_zero() {
    let (set, _) = sb(Ordering::Relaxed);
    assert_eq!(set, BTreeSet::from([(0, 0), (0, 1), (1, 0), (1, 1)]));
}

#[test]
fn store_buffering_seq_cst_forbids_both_zero() {
    let (set, _) = sb(Ordering::SeqCst);
    assert_eq!(set, BTreeSet::from([(0, 1), (1, 0), (1, 1)]));
}

/// The model is chosen through the API with the type the crate exports:
/// under `Model::Sc` relaxed store buffering loses its weak outcome, under
/// `Model::Rc11` it keeps it.
#[test]
fn memory_model_is_chosen_through_the_api() {
    use c11check::model::Model;
    let sb_under = |m: Model| common::explore_set(Builder::new().memory_model(m), common::sb).0;
    let interleavings = BTreeSet::from([vec![0, 1], vec![1, 0], vec![1, 1]]);
    assert_eq!(sb_under(Model::Sc), interleavings);
    let mut weak = interleavings;
    weak.insert(vec![0, 0]);
    assert_eq!(sb_under(Model::Rc11), weak);
}

/// P2's seq_cst RMW reaches P1's outcomes by stealing the source of P1's
/// relaxed RMW (the revisit graphs, where seq_cst events are around, go
/// through the seq_cst search); P2's RMW before the store of 5 in mo with
/// P0's load of `y` reading 0 closes a psc cycle (the RMW, the store, the
/// load, the store of 1). The final load is relaxed: it observes `x` as
/// any read would, with no full check at the end. The outcomes are those
/// of the sequentially consistent interleavings (P1's order changes none).
/// Fails if a steal's revisit is dropped (two outcomes go missing).
#[test]
fn rmw_steals_under_seq_cst_give_exactly_the_sc_outcomes() {
    let (set, _) = outcomes(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let (x0, y0, x1, x2, y2) = (x.clone(), y.clone(), x.clone(), x.clone(), y.clone());
        let p0 = thread::spawn(move || {
            x0.store(5, Ordering::SeqCst);
            y0.load(Ordering::SeqCst)
        });
        let p1 = thread::spawn(move || x1.fetch_add(1, Ordering::Relaxed));
        let p2 = thread::spawn(move || {
            y2.store(1, Ordering::SeqCst);
            x2.fetch_add(1, Ordering::SeqCst)
        });
        let r0 = p0.join().unwrap();
        let r1 = p1.join().unwrap();
        let r2 = p2.join().unwrap();
        (r0, r1, r2, x.load(Ordering::Relaxed))
    });
    assert!(!set.contains(&(0, 1, 0, 5)), "{set:?}");
    assert_eq!(
        set,
        BTreeSet::from([
            (0, 0, 5, 6),
            (0, 5, 6, 7),
            (0, 6, 5, 7),
            (1, 0, 1, 5),
            (1, 0, 5, 6),
            (1, 1, 0, 5),
            (1, 5, 0, 6),
            (1, 5, 6, 7),
            (1, 6, 5, 7),
        ])
    );
}

fn message_passing(store: Ordering, load: Ordering) -> BTreeSet<(bool, usize)> {
    outcomes(move || {
        let data = Arc::new(AtomicUsize::new(0));
        let flag = Arc::new(AtomicBool::new(false));
        let (d2, f2) = (data.clone(), flag.clone());
        let t = thread::spawn(move || {
            d2.store(42, Ordering::Relaxed);
            f2.store(true, store);
        });
        let seen = flag.load(load);
        let v = data.load(Ordering::Relaxed);
        t.join().unwrap();
        (seen, v)
    })
    .0
}

#[test]
fn message_passing_release_acquire() {
    assert_eq!(
        message_passing(Ordering::Release, Ordering::Acquire),
        BTreeSet::from([(false, 0), (false, 42), (true, 42)])
    );
}

#[test]
fn message_passing_relaxed_can_see_stale_data() {
    assert!(message_passing(Ordering::Relaxed, Ordering::Relaxed).contains(&(true, 0)));
}

#[test]
fn fences_make_relaxed_message_passing_safe() {
    let (set, _) = outcomes(|| {
        let data = Arc::new(AtomicUsize::new(0));
        let flag = Arc::new(AtomicBool::new(false));
        let (d2, f2) = (data.clone(), flag.clone());
        let t = thread::spawn(move || {
            d2.store(42, Ordering::Relaxed);
            fence(Ordering::Release);
            f2.store(true, Ordering::Relaxed);
        });
        let seen = flag.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let v = data.load(Ordering::Relaxed);
        t.join().unwrap();
        (seen, v)
    });
    assert!(!set.contains(&(true, 0)));
    assert!(set.contains(&(true, 42)) && set.contains(&(false, 0)));
}

#[test]
fn three_threads_fetch_add_explore_each_order_once() {
    let (set, executions) = outcomes(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let n = n.clone();
                thread::spawn(move || n.fetch_add(1, Ordering::Relaxed))
            })
            .collect();
        let mine = n.fetch_add(1, Ordering::Relaxed);
        let mut got: Vec<usize> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        got.push(mine);
        got.sort();
        (got, n.load(Ordering::Relaxed))
    });
    assert_eq!(set, BTreeSet::from([(vec![0, 1, 2], 3)]));
    // 3! orders of the increments; the Arc reference counts multiply this
    // (each clone and drop is a modelled RMW).
    assert!(executions >= 6);
}

#[test]
fn narrow_atomics_wrap_like_std() {
    let (set, _) = outcomes(|| {
        let a = AtomicU8::new(255);
        let old = a.fetch_add(1, Ordering::Relaxed);
        let cas = a.compare_exchange(0, 7, Ordering::Relaxed, Ordering::Relaxed);
        let max = a.fetch_max(200, Ordering::Relaxed);
        (old, cas, max, a.load(Ordering::Relaxed))
    });
    assert_eq!(set, BTreeSet::from([(255u8, Ok(0u8), 7u8, 200u8)]));
}

#[test]
fn mutex_gives_mutual_exclusion() {
    let (set, _) = outcomes(|| {
        let m = Arc::new(Mutex::new(0usize));
        let m2 = m.clone();
        let t = thread::spawn(move || {
            let mut g = m2.lock().unwrap();
            let v = *g;
            *g = v + 1;
        });
        {
            let mut g = m.lock().unwrap();
            let v = *g;
            *g = v + 1;
        }
        t.join().unwrap();
        let v = *m.lock().unwrap();
        v
    });
    assert_eq!(set, BTreeSet::from([2]));
}

/// Each order of three critical sections is one execution, and none ends with
/// a thread stopped at a held lock: an acquisition is scheduled once the lock
/// is free, so lock contention costs no blocked executions.
#[test]
fn contended_mutex_explores_each_order_once_without_blocked_executions() {
    let orders = std::sync::Arc::new(StdMutex::new(Vec::new()));
    let seen = orders.clone();
    let summary = Builder::new()
        .explore(move || {
            let m = Arc::new(Mutex::new(Vec::new()));
            let hs: Vec<_> = (1..3)
                .map(|t| {
                    let m = m.clone();
                    thread::spawn(move || m.lock().unwrap().push(t))
                })
                .collect();
            m.lock().unwrap().push(0);
            for h in hs {
                h.join().unwrap();
            }
            let order = m.lock().unwrap().clone();
            seen.lock().unwrap().push(order);
        })
        .expect("no bug");
    let orders = orders.lock().unwrap();
    let distinct: BTreeSet<_> = orders.iter().cloned().collect();
    assert_eq!(distinct.len(), 6, "{orders:?}");
    assert_eq!(orders.len(), 6, "an order explored twice: {orders:?}");
    assert_eq!((summary.stats.executions, summary.blocked), (6, 0));
}

/// `try_lock` is not a wait: failing while another thread holds the lock is
/// one of its outcomes, next to succeeding before or after.
#[test]
fn try_lock_fails_while_the_lock_is_held() {
    let (set, _) = outcomes(|| {
        let m = Arc::new(Mutex::new(()));
        let m2 = m.clone();
        let t = thread::spawn(move || drop(m2.lock().unwrap()));
        let got = m.try_lock().is_ok();
        t.join().unwrap();
        got
    });
    assert_eq!(set, BTreeSet::from([false, true]));
}

#[test]
fn panics_are_reported_with_a_replay_string() {
    let report = Builder::new()
        .explore(|| {
            let x = Arc::new(AtomicUsize::new(0));
            let x2 = x.clone();
            let t = thread::spawn(move || x2.store(1, Ordering::Relaxed));
            assert_eq!(x.load(Ordering::Relaxed), 0, "saw the store");
            t.join().unwrap();
        })
        .expect_err("the assertion can fail");
    let text = report.to_string();
    assert!(text.contains("panic"), "{text}");
    assert!(text.contains("saw the store"), "{text}");
    assert!(
        text.contains("api.rs"),
        "the trace names source lines: {text}"
    );
    // Replaying the string reproduces the same failure in one execution.
    let again = Builder::new()
        .replay(&report.replay)
        .explore(|| {
            let x = Arc::new(AtomicUsize::new(0));
            let x2 = x.clone();
            let t = thread::spawn(move || x2.store(1, Ordering::Relaxed));
            assert_eq!(x.load(Ordering::Relaxed), 0, "saw the store");
            t.join().unwrap();
        })
        .expect_err("replay reproduces the failure");
    assert_eq!(
        again.failure.kind, report.failure.kind,
        "{}\n---\n{again}",
        report.replay
    );
    assert_eq!(again.replay, report.replay);
}

#[test]
fn data_race_on_unsafe_cell_is_reported() {
    use c11check::cell::UnsafeCell;
    struct Shared(UnsafeCell<usize>);
    // SAFETY: the test wants the race to be found.
    unsafe impl Sync for Shared {}
    let report = Builder::new()
        .explore(|| {
            let s = Arc::new(Shared(UnsafeCell::new(0)));
            let s2 = s.clone();
            let t = thread::spawn(move || s2.0.with_mut(|p| unsafe { *p = 1 }));
            let _v = s.0.with(|p| unsafe { *p });
            t.join().unwrap();
        })
        .expect_err("racy");
    assert_eq!(
        report.failure.kind,
        c11check_runtime::FailureKind::DataRace,
        "{report}"
    );
}

#[test]
fn synchronized_unsafe_cell_is_not_a_race() {
    use c11check::cell::UnsafeCell;
    struct Shared(UnsafeCell<usize>, AtomicBool);
    // SAFETY: accesses are ordered by the flag.
    unsafe impl Sync for Shared {}
    let (set, _) = outcomes(|| {
        let s = Arc::new(Shared(UnsafeCell::new(0), AtomicBool::new(false)));
        let s2 = s.clone();
        let t = thread::spawn(move || {
            s2.0.with_mut(|p| unsafe { *p = 1 });
            s2.1.store(true, Ordering::Release);
        });
        let v = if s.1.load(Ordering::Acquire) {
            s.0.with(|p| unsafe { *p })
        } else {
            9
        };
        t.join().unwrap();
        v
    });
    assert_eq!(set, BTreeSet::from([1, 9]));
}

#[test]
fn lock_order_inversion_is_a_deadlock() {
    let report = Builder::new()
        .explore(|| {
            let a = Arc::new(Mutex::new(()));
            let b = Arc::new(Mutex::new(()));
            let (a2, b2) = (a.clone(), b.clone());
            let t = thread::spawn(move || {
                let _x = a2.lock().unwrap();
                let _y = b2.lock().unwrap();
            });
            {
                let _y = b.lock().unwrap();
                let _x = a.lock().unwrap();
            }
            t.join().unwrap();
        })
        .expect_err("ABBA deadlock");
    assert_eq!(
        report.failure.kind,
        c11check_runtime::FailureKind::Deadlock,
        "{report}"
    );
}

#[test]
fn spin_loop_waits_for_the_flag() {
    let (set, _) = outcomes(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = flag.clone();
        let t = thread::spawn(move || f2.store(true, Ordering::Release));
        while !flag.load(Ordering::Acquire) {
            thread::yield_now();
        }
        t.join().unwrap();
        true
    });
    assert_eq!(set, BTreeSet::from([true]));
}

#[test]
fn a_spin_turn_that_repeats_the_one_before_is_cut() {
    // The waiter reads the flag set (one execution), unset then set (one),
    // or unset twice in a row at the same yield: that second turn repeats
    // the first, so the execution is cut there (blocked, not a bug; the
    // first turn reading the store covers what would follow).
    let reads = std::sync::Arc::new(StdMutex::new(BTreeSet::new()));
    let seen = reads.clone();
    let summary = Builder::new()
        .explore(move || {
            let flag = Arc::new(AtomicBool::new(false));
            let f2 = flag.clone();
            let t = thread::spawn(move || f2.store(true, Ordering::Release));
            let mut turns = 1;
            while !flag.load(Ordering::Acquire) {
                thread::yield_now();
                turns += 1;
            }
            t.join().unwrap();
            seen.lock().unwrap().insert(turns);
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(*reads.lock().unwrap(), BTreeSet::from([1, 2]));
    assert_eq!((summary.stats.executions, summary.blocked), (2, 1));
    // Two reads at two different yields are not a loop's turns: both
    // orders of reading are explored to the end.
    let reads = std::sync::Arc::new(StdMutex::new(BTreeSet::new()));
    let seen = reads.clone();
    Builder::new()
        .explore(move || {
            let flag = Arc::new(AtomicBool::new(false));
            let f2 = flag.clone();
            let t = thread::spawn(move || f2.store(true, Ordering::Release));
            let a = flag.load(Ordering::Acquire);
            thread::yield_now();
            let b = flag.load(Ordering::Acquire);
            thread::yield_now();
            t.join().unwrap();
            seen.lock().unwrap().insert((a, b));
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(
        *reads.lock().unwrap(),
        BTreeSet::from([(false, false), (false, true), (true, true)])
    );
}

#[test]
fn spinning_on_a_flag_nobody_sets_is_a_livelock() {
    let report = Builder::new()
        .explore(|| {
            let flag = AtomicBool::new(false);
            while !flag.load(Ordering::Acquire) {
                c11check::hint::spin_loop();
            }
        })
        .expect_err("never set");
    assert_eq!(
        report.failure.kind,
        c11check_runtime::FailureKind::Livelock,
        "{report}"
    );
}

#[test]
fn joined_panic_is_an_err_not_a_failure() {
    let (set, _) = outcomes(|| {
        let t = thread::spawn(|| panic!("boom"));
        t.join().is_err()
    });
    assert_eq!(set, BTreeSet::from([true]));
}

#[test]
fn scoped_threads_borrow_locals() {
    let (set, _) = outcomes(|| {
        let n = AtomicUsize::new(0);
        thread::scope(|s| {
            s.spawn(|| n.fetch_add(1, Ordering::Relaxed));
            s.spawn(|| n.fetch_add(2, Ordering::Relaxed));
        });
        n.load(Ordering::Relaxed)
    });
    assert_eq!(set, BTreeSet::from([3]));
}

#[test]
fn sixty_four_threads() {
    // Independent stores in 64 threads (each to its own atomic) and joins:
    // one execution, whatever the interleaving.
    let (set, executions) = outcomes(|| {
        let cells: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
        thread::scope(|s| {
            for (i, c) in cells.iter().enumerate() {
                s.spawn(move || c.store(i + 1, Ordering::Relaxed));
            }
        });
        cells
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum::<usize>()
    });
    assert_eq!(set, BTreeSet::from([64 * 65 / 2]));
    assert_eq!(executions, 1);
}

#[test]
fn three_by_three_fetch_add_is_1680_executions() {
    // (9)! / (3!)^3 orders of the increments; scoped threads need no Arc, whose
    // reference counts would add executions of their own.
    let summary = Builder::new()
        .explore(|| {
            let n = AtomicUsize::new(0);
            thread::scope(|s| {
                for _ in 0..3 {
                    s.spawn(|| {
                        for _ in 0..3 {
                            n.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
            });
            assert_eq!(n.load(Ordering::Relaxed), 9);
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(summary.stats.executions, 1680);
    assert_eq!(summary.blocked, 0);
}

/// The same through `Arc` (as in loom's tests): the clones' and drops'
/// orders are not executions of their own, so the count stays 1,680.
#[test]
fn arc_reference_counts_do_not_multiply_executions() {
    let summary = Builder::new()
        .explore(|| {
            let n = Arc::new(AtomicUsize::new(0));
            let handles: Vec<_> = (0..3)
                .map(|_| {
                    let n = n.clone();
                    thread::spawn(move || {
                        for _ in 0..3 {
                            n.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            assert_eq!(n.load(Ordering::Relaxed), 9);
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(summary.stats.executions, 1680);
    assert_eq!(summary.blocked, 0);
}

/// Which owner drops last is explored: the main thread or any of three
/// threads can run the destructor.
#[test]
fn arc_last_owner_is_explored() {
    c11check::thread_local! {
        static ME: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
    struct Mark(Arc<AtomicUsize>);
    impl Drop for Mark {
        fn drop(&mut self) {
            self.0.store(ME.with(|m| m.get()) + 10, Ordering::Relaxed);
        }
    }
    static SEEN: StdMutex<BTreeSet<usize>> = StdMutex::new(BTreeSet::new());
    let summary = Builder::new()
        .explore(|| {
            let ran_by = Arc::new(AtomicUsize::new(0));
            let shared = Arc::new(Mark(ran_by.clone()));
            let handles: Vec<_> = (1..=3)
                .map(|i| {
                    let mine = shared.clone();
                    thread::spawn(move || {
                        ME.with(|m| m.set(i));
                        drop(mine);
                    })
                })
                .collect();
            drop(shared);
            for h in handles {
                h.join().unwrap();
            }
            SEEN.lock().unwrap().insert(ran_by.load(Ordering::Relaxed));
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(*SEEN.lock().unwrap(), BTreeSet::from([10, 11, 12, 13]));
    // One execution per last owner.
    assert_eq!(summary.stats.executions, 4);
}

#[test]
fn weak_compare_exchange_may_fail_spuriously_but_retry_loops_end() {
    let (set, _) = outcomes(|| {
        let a = AtomicUsize::new(5);
        let once = a.compare_exchange_weak(5, 6, Ordering::Relaxed, Ordering::Relaxed);
        // A retry loop (what fetch_update does) always ends.
        let looped = a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| Some(v + 10));
        (once, looped, a.load(Ordering::Relaxed))
    });
    assert_eq!(
        set,
        BTreeSet::from([(Ok(5), Ok(6), 16), (Err(5), Ok(5), 15)])
    );
}

#[test]
fn failing_execution_is_written_as_graphviz() {
    let path = std::env::temp_dir().join(format!("c11check-dot-{}.dot", std::process::id()));
    let r = Builder::new().dot(&path).explore(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let x2 = x.clone();
        let t = thread::spawn(move || x2.store(1, Ordering::Release));
        assert_eq!(x.load(Ordering::Acquire), 0);
        t.join().unwrap();
    });
    assert!(r.is_err());
    let dot = std::fs::read_to_string(&path).expect("the dot file is written");
    let _ = std::fs::remove_file(&path);
    assert!(dot.starts_with("digraph execution {"), "{dot}");
    assert!(
        dot.contains("label=rf") && dot.contains("label=sb"),
        "{dot}"
    );
    assert!(dot.contains("thread 1"), "{dot}");
}

#[test]
fn get_mut_writes_are_stores_of_the_owner() {
    // The owner writes through get_mut, then hands the atomic over with a
    // spawn: the new thread must see the value. And a later &self use by
    // the owner sees its own write.
    let (set, _) = outcomes(|| {
        let mut a = AtomicUsize::new(1);
        *a.get_mut() += 41;
        // No use of `a` before the hand-over: the write is published by the
        // owner's next visible operation (the clone's reference count).
        let a = Arc::new(a);
        let a2 = a.clone();
        let other = thread::spawn(move || a2.load(Ordering::Relaxed))
            .join()
            .unwrap();
        let seen_by_owner = a.load(Ordering::Relaxed);
        let mut flag = AtomicBool::new(false);
        *flag.get_mut() = true;
        let mut slot = 7u8;
        let mut p = c11check::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
        *p.get_mut() = &mut slot as *mut u8;
        let p_is_set = !p.load(Ordering::Relaxed).is_null();
        (seen_by_owner, other, flag.into_inner(), p_is_set)
    });
    assert_eq!(set, BTreeSet::from([(42, 42, true, true)]));
}

/// An atomic created in the model holds a value of this run (a pointer to a
/// fresh allocation): an execution that replays the access which first
/// touches it must see this run's value, not the recorded run's.
#[test]
fn initial_values_of_new_objects_are_this_runs() {
    use c11check::sync::atomic::AtomicPtr;
    let (seen, executions) = outcomes(|| {
        // A different address in every execution (the boxes are leaked).
        let fresh: *mut u64 = Box::leak(Box::new(7u64));
        let p = Arc::new(AtomicPtr::new(fresh));
        let x = Arc::new(AtomicUsize::new(0));
        let (p2, x2) = (p.clone(), x.clone());
        let t = thread::spawn(move || {
            let got = p2.load(Ordering::Relaxed) as usize;
            x2.store(1, Ordering::Relaxed);
            got
        });
        let r = x.load(Ordering::Relaxed);
        let got = t.join().unwrap();
        (r, got == fresh as usize)
    });
    assert_eq!(executions, 2);
    assert_eq!(seen, BTreeSet::from([(0, true), (1, true)]));
}

/// A weak compare-exchange taken once, without a retry loop, as if one
/// failure proved a change: wrong where LL/SC can fail spuriously.
fn single_weak_cas() {
    let a = AtomicUsize::new(5);
    let r = a.compare_exchange_weak(5, 6, Ordering::Relaxed, Ordering::Relaxed);
    assert!(r.is_ok(), "the value was 5, yet the exchange failed");
}

#[test]
fn spurious_failures_can_be_turned_off_in_every_engine() {
    // Exhaustive: two executions (success, spurious failure), the second
    // reported; off, one execution and no report.
    let rep = Builder::new()
        .explore(single_weak_cas)
        .expect_err("a spurious failure is explored");
    assert!(
        rep.failure.message.contains("yet the exchange failed"),
        "{rep}"
    );
    let off = Builder::new()
        .spurious_failures(false)
        .explore(single_weak_cas)
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(off.stats.executions, 1);
    // The same program with a retry loop has two executions with them on.
    let on = Builder::new()
        .explore(|| {
            let a = AtomicUsize::new(5);
            while a
                .compare_exchange_weak(5, 6, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {}
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(on.stats.executions, 2);
    // Random graphs and live memory: found on, never off.
    for live in [false, true] {
        let b = || {
            let b = Builder::new().random(200).seed(3);
            if live {
                b.live()
            } else {
                b.graph_random()
            }
        };
        let rep = b()
            .explore(single_weak_cas)
            .expect_err("found in 200 iterations");
        assert!(rep.failure.message.contains("yet the exchange failed"));
        b().spurious_failures(false)
            .explore(single_weak_cas)
            .unwrap_or_else(|r| panic!("live={live}: {r}"));
    }
    // A live report made with them off replays with them off: twenty weak
    // compare-exchanges, any of which a replay with them on would fail
    // (each draws a spurious failure one time in four), then a panic.
    let twenty_then_panic = || {
        for _ in 0..20 {
            single_weak_cas();
        }
        panic!("always");
    };
    let rep = Builder::new()
        .random(200)
        .seed(3)
        .live()
        .spurious_failures(false)
        .explore(twenty_then_panic)
        .expect_err("always fails");
    assert!(rep.replay.ends_with(":strong"), "{}", rep.replay);
    let again = Builder::new()
        .replay(&rep.replay)
        .explore(twenty_then_panic)
        .expect_err("fails again");
    assert_eq!(again.failure.message, rep.failure.message, "{again}");
    assert!(again.failure.message.contains("always"), "{again}");
}

/// The report on a program whose main thread starts with `first(is the
/// first run, x)` and then branches (a spawned store races with a load of
/// `x`), so that its second run replays the first's graph: a program that
/// does not repeat itself when re-run is reported, not explored.
fn report_of_a_program_that_changes(
    first: impl Fn(bool, &AtomicUsize) + Send + Sync + 'static,
) -> c11check::model::Report {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let report = Builder::new()
        .explore(move || {
            let n = runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let x = Arc::new(AtomicUsize::new(0));
            first(n == 0, &x);
            let x2 = x.clone();
            let t = thread::spawn(move || x2.store(3, Ordering::Relaxed));
            x.load(Ordering::Relaxed);
            t.join().unwrap();
        })
        .expect_err("the second run differs from the first");
    assert_eq!(
        report.failure.kind,
        c11check::model::FailureKind::Nondeterminism,
        "{report}"
    );
    let text = &report.failure.message;
    assert!(text.contains("thread 0 behaved differently"), "{text}");
    *report
}

/// Another operation: the first one loads one atomic in one run and
/// another in the next.
#[test]
fn a_thread_doing_another_operation_when_replayed_is_reported() {
    let report = report_of_a_program_that_changes(|first_run, x| {
        let y = AtomicUsize::new(0);
        y.load(Ordering::Relaxed);
        if first_run {
            x.load(Ordering::Relaxed);
        } else {
            y.load(Ordering::Relaxed);
        }
    });
    let text = &report.failure.message;
    assert!(text.contains("operation 2 was `R"), "{text}");
}

/// The same operation with another outcome: a compare-exchange that
/// succeeded when the graph was recorded and fails when it is replayed,
/// because the program expects another value.
#[test]
fn a_compare_exchange_that_fails_when_replayed_is_reported() {
    let report = report_of_a_program_that_changes(|first_run, x| {
        let expected = if first_run { 0 } else { 5 };
        let _ = x.compare_exchange(expected, 1, Ordering::Relaxed, Ordering::Relaxed);
    });
    let text = &report.failure.message;
    assert!(text.contains("0 -> 1)`, now it is `CAS"), "{text}");
    assert!(text.contains("5 -> 1)`"), "{text}");
}

/// A read of a reference count that comes before any update of it (in the
/// order the explorer adds events) still makes the updates' order
/// observable: the read may take any of them (nothing orders it with the
/// two threads that clone and drop), and what it reads depends on which
/// came before. So every order is explored: the 6 interleavings of the two
/// threads' increment-decrement pairs, times the 5 writes the read can
/// take (the initial count and the four updates; the main thread's last
/// drop comes after the scope's joins). Fails if the explorer keeps the
/// updates commuting here (it would explore one order per last owner).
#[test]
fn a_count_read_before_any_update_makes_their_order_observable() {
    let (set, n) = outcomes(|| {
        let a = Arc::new(());
        thread::scope(|s| {
            let read = s.spawn(|| Arc::strong_count(&a));
            s.spawn(|| drop(a.clone()));
            s.spawn(|| drop(a.clone()));
            read.join().unwrap()
        })
    });
    assert_eq!(set, BTreeSet::from([1, 2, 3]));
    assert_eq!(n, 6 * 5);
}

/// Message passing with relaxed atomics, threads spawned and joined: what
/// the reader saw of the flag and the data.
fn mp() -> (usize, usize) {
    let (data, flag) = (AtomicUsize::new(0), AtomicUsize::new(0));
    thread::scope(|s| {
        s.spawn(|| {
            data.store(1, Ordering::Relaxed);
            flag.store(1, Ordering::Relaxed);
        });
        let r = s.spawn(|| {
            let f = flag.load(Ordering::Relaxed);
            (f, data.load(Ordering::Relaxed))
        });
        r.join().unwrap()
    })
}

/// The hardware models through the API: x86-TSO keeps store buffering but
/// not relaxed message passing's stale read, which ARMv8 (`mca`) shows;
/// random runs (x86's store buffers in the live memory, ARMv8's views under
/// `mca`) never show what the model forbids.
#[test]
fn hardware_models_through_the_api() {
    use c11check::model::Model;
    let all = BTreeSet::from([(0, 0), (0, 1), (1, 0), (1, 1)]);
    let mut tso_mp = all.clone();
    tso_mp.remove(&(1, 0));
    let under = |m: Model| common::explore_set(Builder::new().memory_model(m), mp).0;
    assert_eq!(under(Model::Cpp20), all);
    assert_eq!(under(Model::Mca), all);
    assert_eq!(under(Model::Tso), tso_mp);
    let sb_tso = common::explore_set(Builder::new().memory_model(Model::Tso), common::sb).0;
    assert!(sb_tso.contains(&vec![0, 0]), "{sb_tso:?}");
    for (model, allowed) in [(Model::Tso, &tso_mp), (Model::Mca, &all)] {
        let b = Builder::new()
            .memory_model(model)
            .random(300)
            .live()
            .seed(5);
        let (seen, _) = common::explore_set(b, mp);
        assert!(seen.is_subset(allowed), "{model}: {seen:?}");
        assert!(seen.len() >= 2, "{model}: {seen:?}");
    }
}
