//! What a user who forgets `spin_loop()` sees: a short report at the first
//! execution whose loop repeated one read-only turn a hundredth of the step
//! bound times (or reached the bound), naming the loop and what to do, with
//! a replay string that is short and replays.

use c11check::model::{Builder, FailureKind, Report};
use c11check::sync::atomic::{AtomicBool, Ordering};
use c11check::sync::Arc;
use c11check::thread;

/// Spins on a flag; the other thread sets it when `sets` says so.
fn flag_wait(sets: bool, hint: bool) -> impl Fn() + Send + Sync + 'static {
    move || {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = flag.clone();
        let t = thread::spawn(move || {
            if sets {
                f2.store(true, Ordering::Release);
            }
        });
        while !flag.load(Ordering::Acquire) {
            if hint {
                c11check::hint::spin_loop();
            }
        }
        t.join().unwrap();
    }
}

fn check_spin_report(r: &Report) {
    assert_eq!(r.failure.kind, FailureKind::SpinWithoutHint, "{r}");
    assert_eq!(r.execution_number, 1, "{r}");
    let text = r.to_string();
    let first: Vec<&str> = text.lines().take(4).collect();
    assert_eq!(
        first[0],
        "c11check found a spin loop without a hint in execution 1:"
    );
    assert!(
        first[1].starts_with("  thread 0 spins at crates/c11check/tests/spin_reports.rs:")
            && first[1].contains(
                "without `spin_loop()` or `yield_now()`: the same turn repeated 126 times"
            ),
        "{}",
        first[1]
    );
    assert!(
        first[2].trim_start().starts_with("load(Acquire) loc"),
        "{}",
        first[2]
    );
    assert!(
        first[3].contains("c11check::hint::spin_loop()"),
        "{}",
        first[3]
    );
    // The turns in between are one line, the replay string a few steps.
    assert!(text.lines().count() < 20, "{text}");
    assert!(text.contains("the same turn 124 more times"), "{text}");
    assert!(r.replay.len() < 40, "{}", r.replay);
}

#[test]
fn a_spin_without_a_hint_is_reported_at_once_whether_or_not_it_would_end() {
    for sets in [false, true] {
        let r = Builder::new()
            .explore(flag_wait(sets, false))
            .expect_err("stops at the step bound");
        check_spin_report(&r);
        // The replay string re-runs it.
        let again = Builder::new()
            .replay(&r.replay)
            .explore(flag_wait(sets, false))
            .expect_err("replays");
        assert_eq!(again.failure.message, r.failure.message);
    }
}

#[test]
fn with_a_hint_the_same_loops_pass_or_are_livelocks() {
    let ok = Builder::new()
        .explore(flag_wait(true, true))
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(ok.stats.executions, 2);
    let r = Builder::new()
        .explore(flag_wait(false, true))
        .expect_err("nothing sets the flag");
    assert_eq!(r.failure.kind, FailureKind::Livelock, "{r}");
    assert_eq!(r.execution_number, 1, "{r}");
}

/// A loop that stores in every turn is not a spin: it is reported as a
/// loop over the step bound, with its repeating turn shown once.
#[test]
fn a_loop_that_writes_runs_into_the_bound_as_a_livelock() {
    let r = Builder::new()
        .max_steps(300)
        .explore(|| {
            let flag = AtomicBool::new(false);
            while !flag.load(Ordering::Acquire) {
                flag.store(false, Ordering::Relaxed);
            }
        })
        .expect_err("never ends");
    assert_eq!(r.failure.kind, FailureKind::Livelock, "{r}");
    let text = r.to_string();
    assert!(
        text.contains("thread 0 loops at crates/c11check/tests/spin_reports.rs:"),
        "{text}"
    );
    assert!(text.lines().count() < 25, "{text}");
}

#[test]
fn a_wait_loop_that_swaps_is_cut_as_one_that_loads() {
    // `while !flag.swap(false, Acquire) { yield_now() }`: an idle turn
    // writes back the `false` it found, which changes nothing; cut as a
    // wait, exploration ends (each execution would otherwise run to the
    // step bound) and no livelock is reported, in both engines.
    let body = || {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = flag.clone();
        let t = thread::spawn(move || f2.store(true, Ordering::Release));
        while !flag.swap(false, Ordering::Acquire) {
            thread::yield_now();
        }
        t.join().unwrap();
    };
    let s = Builder::new()
        .explore(body)
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!((s.stats.executions, s.blocked), (2, 1));
    let s = Builder::new()
        .random(200)
        .seed(3)
        .explore(body)
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(s.stats.executions, 200);
}

/// Peterson's lock with seq_cst: each thread may read its own `turn` store
/// on a turn of its wait, but not both forever, since one of the two stores
/// is later in modification order and its reader's partner then sees it.
/// (Judged one thread at a time, each read could stay last, and this was
/// reported as a livelock.)
#[test]
fn two_waits_on_their_own_stores_to_one_location_are_no_livelock() {
    use c11check::hint::spin_loop;
    use c11check::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    let summary = Builder::new()
        .explore(|| {
            let flag = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
            let turn = Arc::new(AtomicUsize::new(0));
            let inside = Arc::new(AtomicUsize::new(0));
            let handles: Vec<_> = (0..2)
                .map(|i| {
                    let (flag, turn, inside) = (flag.clone(), turn.clone(), inside.clone());
                    thread::spawn(move || {
                        flag[i].store(true, SeqCst);
                        turn.store(1 - i, SeqCst);
                        while flag[1 - i].load(SeqCst) && turn.load(SeqCst) == 1 - i {
                            spin_loop();
                        }
                        assert_eq!(inside.fetch_add(1, SeqCst), 0, "both inside");
                        inside.fetch_sub(1, SeqCst);
                        flag[i].store(false, SeqCst);
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert!(summary.stats.executions > 0);
}

/// A spin lock taken with a compare-exchange loop without a hint (issue
/// 51): each execution the explorer makes adds one failed turn, so the
/// step bound would come after ~10,000 executions; the loop is stopped
/// after a hundred identical turns, with the short report.
#[test]
fn a_compare_exchange_lock_loop_without_a_hint_is_stopped_early() {
    use c11check::cell::UnsafeCell;
    struct SpinLock {
        locked: AtomicBool,
        data: UnsafeCell<usize>,
    }
    // SAFETY: `data` is accessed only with `locked` taken.
    unsafe impl Sync for SpinLock {}
    for weak in [false, true] {
        let r = Builder::new()
            .explore(move || {
                let l = Arc::new(SpinLock {
                    locked: AtomicBool::new(false),
                    data: UnsafeCell::new(0),
                });
                let hs: Vec<_> = (0..2)
                    .map(|_| {
                        let l = l.clone();
                        thread::spawn(move || {
                            let take = |l: &SpinLock| {
                                if weak {
                                    l.locked.compare_exchange_weak(
                                        false,
                                        true,
                                        Ordering::Acquire,
                                        Ordering::Relaxed,
                                    )
                                } else {
                                    l.locked.compare_exchange(
                                        false,
                                        true,
                                        Ordering::Acquire,
                                        Ordering::Relaxed,
                                    )
                                }
                            };
                            while take(&l).is_err() {}
                            // SAFETY: the lock is held.
                            l.data.with_mut(|d| unsafe { *d += 1 });
                            l.locked.store(false, Ordering::Release);
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
            })
            .expect_err("stopped");
        assert_eq!(r.failure.kind, FailureKind::SpinWithoutHint, "{r}");
        assert!(r.execution_number < 1000, "{}", r.execution_number);
        assert!(r.to_string().lines().count() < 30, "{r}");
        assert!(
            r.failure.message.contains("compare_exchange")
                && r.failure.message.contains("spin_loop()"),
            "{r}"
        );
    }
}
