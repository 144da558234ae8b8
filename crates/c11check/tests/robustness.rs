//! Robustness against SC through the Rust API (`Builder::robustness`): an
//! execution the model allows that no interleaving produces is reported,
//! with the cycle; wait loops' failed turns do not count.

use c11check::hint::spin_loop;
use c11check::model::Builder;
use c11check::sync::atomic::{AtomicBool, AtomicUsize, Ordering, Ordering::*};
use c11check::sync::Arc;
use c11check::thread;
use c11check_runtime::FailureKind;

/// Two threads, each storing its flag and then reading the other's.
fn store_buffering(
    store: c11check::sync::atomic::Ordering,
    load: c11check::sync::atomic::Ordering,
) {
    let x = Arc::new(AtomicUsize::new(0));
    let y = Arc::new(AtomicUsize::new(0));
    let (x2, y2) = (x.clone(), y.clone());
    let t = thread::spawn(move || {
        y2.store(1, store);
        x2.load(load)
    });
    x.store(1, store);
    let _ = y.load(load);
    t.join().unwrap();
}

#[test]
fn store_buffering_is_not_robust_and_the_report_shows_the_cycle() {
    let r = Builder::new()
        .robustness()
        .explore(|| store_buffering(Relaxed, Relaxed))
        .unwrap_err();
    assert_eq!(r.failure.kind, FailureKind::NotRobust, "{r}");
    let text = r.to_string();
    if std::env::var_os("SHOW").is_some() {
        eprintln!("{text}");
    }
    assert!(text.contains("-fr->") && text.contains("-po->"), "{text}");
    assert!(text.contains("no interleaving"), "{text}");
    // The repair, checked by re-running: a SeqCst fence before each load.
    let repair = text
        .split("Repair (")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        repair.matches("put fence(SeqCst) right before").count(),
        2,
        "{text}"
    );
    // The cycle names both threads' store and load.
    assert_eq!(r.failure.events.len(), 4, "{text}");
    // Without the option the same test passes: nothing in it is a bug.
    Builder::new()
        .explore(|| store_buffering(Relaxed, Relaxed))
        .unwrap();
    // SeqCst restores SC.
    Builder::new()
        .robustness()
        .explore(|| store_buffering(SeqCst, SeqCst))
        .unwrap();
}

/// Data, then a flag; the reader reads the data when it sees the flag.
fn message_passing(store: Ordering, load: Ordering) {
    let data = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicBool::new(false));
    let (d2, f2) = (data.clone(), flag.clone());
    let t = thread::spawn(move || {
        d2.store(1, Relaxed);
        f2.store(true, store);
    });
    if flag.load(load) {
        let _ = data.load(Relaxed);
    }
    t.join().unwrap();
}

#[test]
fn message_passing_with_release_and_acquire_is_robust() {
    Builder::new()
        .robustness()
        .explore(|| message_passing(Release, Acquire))
        .unwrap();
    // With a relaxed flag it is not.
    let r = Builder::new()
        .robustness()
        .explore(|| message_passing(Relaxed, Relaxed))
        .unwrap_err();
    assert_eq!(r.failure.kind, FailureKind::NotRobust, "{r}");
    // Release the flag, acquire it.
    let text = r.to_string();
    let repair = text
        .split("Repair (")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    let repair = repair.split("\n\n").next().unwrap();
    assert!(
        repair.contains(" Release") && repair.contains(" Acquire"),
        "{text}"
    );
    assert_eq!(repair.matches("make the access at").count(), 2, "{text}");
}

/// Each thread raises its flag and waits for the other's.
fn flags_barrier(want: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    let y = Arc::new(AtomicUsize::new(0));
    let (x2, y2) = (x.clone(), y.clone());
    let t = thread::spawn(move || {
        y2.store(1, Relaxed);
        while x2.load(Relaxed) != want {
            spin_loop();
        }
    });
    x.store(1, Relaxed);
    while y.load(Relaxed) != want {
        spin_loop();
    }
    t.join().unwrap();
}

#[test]
fn a_wait_loops_stale_turns_do_not_count() {
    // Both wait for the other's 1: the turns that saw 0 are left out, and
    // what remains is SC (RSAN needs `wait(x == 1)` annotations for this).
    Builder::new()
        .robustness()
        .explore(|| flags_barrier(1))
        .unwrap();
}

#[test]
fn a_wait_that_ends_on_a_stale_value_still_counts() {
    // Thread 0 waits while y is 1; thread 1 sets y to 1, then 2, then reads
    // x. Only the turns that saw 1 are left out: the turn that ends the wait
    // on y's stale 0 while thread 1 reads x's stale 0 is store buffering.
    let r = Builder::new()
        .robustness()
        .explore(|| {
            let x = Arc::new(AtomicUsize::new(0));
            let y = Arc::new(AtomicUsize::new(0));
            let (x2, y2) = (x.clone(), y.clone());
            let t = thread::spawn(move || {
                y2.store(1, Relaxed);
                y2.store(2, Relaxed);
                x2.load(Relaxed)
            });
            x.store(1, Relaxed);
            while y.load(Relaxed) == 1 {
                spin_loop();
            }
            t.join().unwrap();
        })
        .unwrap_err();
    assert_eq!(r.failure.kind, FailureKind::NotRobust, "{r}");
}

/// `n` threads increment a counter under a spin lock taken with a
/// compare-exchange loop (`weak` or strong).
fn spin_lock(n: usize, weak: bool) -> impl Fn() + Send + Sync + 'static {
    move || {
        let lock = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let (lock, count) = (lock.clone(), count.clone());
                thread::spawn(move || {
                    let take = || {
                        if weak {
                            lock.compare_exchange_weak(false, true, Acquire, Relaxed)
                        } else {
                            lock.compare_exchange(false, true, Acquire, Relaxed)
                        }
                    };
                    while take().is_err() {
                        spin_loop();
                    }
                    let v = count.load(Relaxed);
                    count.store(v + 1, Relaxed);
                    lock.store(false, Release);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(count.load(Relaxed), n);
    }
}

/// Each thread raises its flag, then scans its two inbox flags (the
/// other's flag and one nobody sets), at most four turns, until one is 1,
/// ending each turn that found nothing with `end_turn`.
fn scanning_barrier(end_turn: fn()) -> impl Fn() + Send + Sync + 'static {
    move || {
        let flags: Arc<[AtomicUsize; 3]> = Arc::new(std::array::from_fn(|_| AtomicUsize::new(0)));
        let wait = move |flags: &[AtomicUsize; 3], mine: usize, other: usize| {
            flags[mine].store(1, Relaxed);
            for turn in 0..4 {
                if flags[[other, 2][turn % 2]].load(Relaxed) == 1 {
                    break;
                }
                end_turn();
            }
        };
        let f2 = flags.clone();
        let t = thread::spawn(move || wait(&f2, 1, 0));
        wait(&flags, 0, 1);
        t.join().unwrap();
    }
}

#[test]
fn a_wait_loop_whose_turns_differ_needs_the_marker() {
    // Turns alternate between two flags, so no turn repeats the one before:
    // with `spin_loop` the stale turns count, and the barrier is reported.
    let r = Builder::new()
        .robustness()
        .explore(scanning_barrier(spin_loop))
        .unwrap_err();
    assert_eq!(r.failure.kind, FailureKind::NotRobust, "{r}");
    // Marked as failed turns, they are left out: robust.
    Builder::new()
        .robustness()
        .explore(scanning_barrier(c11check::hint::failed_wait_turn))
        .unwrap();
}

#[test]
fn a_spin_lock_with_a_compare_exchange_loop_is_robust() {
    Builder::new()
        .robustness()
        .explore(spin_lock(2, false))
        .unwrap();
}

/// The same programs on live random runs (location clocks on SC runs),
/// with uniform and PCT scheduling: the same verdicts.
mod live {
    use super::*;

    fn live(pct: bool) -> Builder {
        let b = Builder::new().robustness().random(3000);
        if pct {
            b.pct(2)
        } else {
            b.live()
        }
    }

    /// The run's report, which names a robustness violation (first, or
    /// among the other bugs found: an SC run may also livelock).
    fn not_robust(pct: bool, f: impl Fn() + Send + Sync + 'static) -> String {
        let r = live(pct).explore(f).unwrap_err();
        let text = r.to_string();
        assert!(
            r.failure.kind == FailureKind::NotRobust || text.contains("robustness violation:"),
            "{text}"
        );
        if std::env::var_os("SHOW").is_some() {
            eprintln!("{text}");
        }
        text
    }

    #[test]
    fn store_buffering_is_found() {
        for pct in [false, true] {
            let text = not_robust(pct, || super::store_buffering(Relaxed, Relaxed));
            assert!(text.contains("location clocks"), "{text}");
            assert!(text.contains("robustness.rs:"), "{text}");
            // Replays: the report's string re-runs the iteration.
            assert!(text.contains("l1:"), "{text}");
        }
        // SeqCst restores SC, and SeqCst stores alone do not.
        live(false)
            .explore(|| super::store_buffering(SeqCst, SeqCst))
            .unwrap();
        not_robust(false, || super::store_buffering(SeqCst, Relaxed));
    }

    /// A relaxed compare-exchange against two SeqCst stores: it may write
    /// before the store it misses in modification order, which no
    /// interleaving does (psc does not forbid it: the compare-exchange is
    /// no SeqCst access). With SeqCst everywhere, psc forbids every weak
    /// step: robust. The location clocks decide both through psc.
    fn cas_against_seq_cst_stores(cas: Ordering) {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let (x2, y2) = (x.clone(), y.clone());
        let t = thread::spawn(move || {
            y2.store(1, SeqCst);
            x2.store(1, SeqCst);
        });
        let _ = x.compare_exchange(0, 1, cas, cas);
        let _ = y.load(SeqCst);
        t.join().unwrap();
    }

    #[test]
    fn seq_cst_accesses_are_judged_through_psc() {
        Builder::new()
            .robustness()
            .explore(|| cas_against_seq_cst_stores(Relaxed))
            .unwrap_err();
        Builder::new()
            .robustness()
            .explore(|| cas_against_seq_cst_stores(SeqCst))
            .unwrap();
        for pct in [false, true] {
            not_robust(pct, || cas_against_seq_cst_stores(Relaxed));
            live(pct)
                .explore(|| cas_against_seq_cst_stores(SeqCst))
                .unwrap();
        }
    }

    #[test]
    fn message_passing_is_judged_by_its_orders() {
        for pct in [false, true] {
            live(pct)
                .explore(|| super::message_passing(Release, Acquire))
                .unwrap();
            not_robust(pct, || super::message_passing(Relaxed, Relaxed));
        }
    }

    #[test]
    fn wait_loops_are_judged_by_what_ends_them() {
        for pct in [false, true] {
            live(pct).explore(|| flags_barrier(1)).unwrap();
            not_robust(pct, || flags_barrier(0));
        }
    }

    #[test]
    fn a_scan_marked_as_failed_turns_is_robust_and_no_livelock() {
        // A turn that read a flag nobody sets is no sign of a livelock:
        // the next turn reads the other flag. (Unmarked, the live monitor
        // takes each stale read that keeps the loop going for a failed
        // turn, and misses the violation the exhaustive check reports.)
        for pct in [false, true] {
            live(pct)
                .explore(scanning_barrier(c11check::hint::failed_wait_turn))
                .unwrap();
        }
        // Nor without robustness, with a plain spin hint.
        Builder::new()
            .random(3000)
            .live()
            .explore(scanning_barrier(spin_loop))
            .unwrap();
    }

    #[test]
    fn a_stale_value_that_keeps_a_wait_waiting_is_no_violation() {
        // Once thread 1 read z = 1 it is SC-after y = 1 and may read y's
        // stale 0; but 0 keeps it waiting, and failed turns do not count.
        let keeps = |want_one: bool| {
            move || {
                let y = Arc::new(AtomicUsize::new(0));
                let z = Arc::new(AtomicUsize::new(0));
                let (y2, z2) = (y.clone(), z.clone());
                let t = thread::spawn(move || {
                    let _ = z2.load(Relaxed);
                    if want_one {
                        while y2.load(Relaxed) != 1 {
                            spin_loop();
                        }
                    } else {
                        while y2.load(Relaxed) == 1 {
                            spin_loop();
                        }
                    }
                });
                y.store(1, Relaxed);
                z.store(1, Relaxed);
                if !want_one {
                    y.store(2, Relaxed);
                }
                t.join().unwrap();
            }
        };
        for pct in [false, true] {
            live(pct).explore(keeps(true)).unwrap();
            // Waiting while y is 1, a stale 0 ends the wait.
            not_robust(pct, keeps(false));
        }
    }

    #[test]
    fn a_wait_that_never_waits_on_sc_runs_is_probed() {
        // Thread 1 waits for y only once it read z = 1, when y is already 1
        // on every SC run: no run waits there, so the stale 0 is taken in a
        // re-run of the iteration, which then waits: a failed turn.
        for pct in [false, true] {
            live(pct)
                .explore(|| {
                    let y = Arc::new(AtomicUsize::new(0));
                    let z = Arc::new(AtomicUsize::new(0));
                    let (y2, z2) = (y.clone(), z.clone());
                    let t = thread::spawn(move || {
                        if z2.load(Relaxed) == 1 {
                            while y2.load(Relaxed) != 1 {
                                spin_loop();
                            }
                        }
                    });
                    y.store(1, Relaxed);
                    z.store(1, Relaxed);
                    t.join().unwrap();
                })
                .unwrap();
        }
    }

    struct Data(c11check::cell::UnsafeCell<i32>);
    // SAFETY: the flag orders the accesses in the synchronised version; the
    // other is the race the test wants reported.
    unsafe impl Sync for Data {}

    /// Plain data published by a flag: on the SC runs robustness watches,
    /// races are still judged by the model's happens-before (RSAN's
    /// Appendix B), so a relaxed flag is a race although every SC run
    /// reads the data after it was written.
    fn publish(store: Ordering, load: Ordering) -> impl Fn() + Send + Sync + 'static {
        move || {
            let data = Arc::new(Data(c11check::cell::UnsafeCell::new(0)));
            let flag = Arc::new(AtomicBool::new(false));
            let (d2, f2) = (data.clone(), flag.clone());
            let t = thread::spawn(move || {
                // SAFETY: see `Data`.
                d2.0.with_mut(|p| unsafe { *p = 1 });
                f2.store(true, store);
            });
            while !flag.load(load) {
                spin_loop();
            }
            // SAFETY: see `Data`.
            assert_eq!(data.0.with(|p| unsafe { *p }), 1);
            t.join().unwrap();
        }
    }

    #[test]
    fn races_are_judged_on_the_sc_runs() {
        live(false).explore(publish(Release, Acquire)).unwrap();
        let r = live(false).explore(publish(Relaxed, Relaxed)).unwrap_err();
        let text = r.to_string();
        assert_eq!(r.failure.kind, FailureKind::DataRace, "{text}");
        // The atomics alone are robust (one flag, and a stale `false` keeps
        // the wait waiting): the race is the only bug.
        assert!(!text.contains("robustness violation:"), "{text}");
    }

    #[test]
    fn a_spin_lock_is_robust() {
        live(false).explore(super::spin_lock(3, true)).unwrap();
    }
}
