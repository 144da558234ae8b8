//! RwLock, Once, OnceLock, LazyLock, thread_local!, poisoning.

mod common;

use c11check::model::{Builder, FailureKind};
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::sync::{LazyLock, Mutex, Once, OnceLock, RwLock};
use c11check::thread;
use common::assert_deadlock;
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

fn outcomes<T: Ord + Send + 'static>(f: impl Fn() -> T + Send + Sync + 'static) -> BTreeSet<T> {
    common::explore_set(Builder::new(), f).0
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

/// A thread that finds another running the initializer waits as at a lock
/// (`c11check_runtime::once`): two callers make 4 executions (either runs
/// the initializer; the other finds it complete on its lock-free first
/// look or under the lock) and no blocked one. (With a spin on the state:
/// 10 executions and 4 blocked ones.)
#[test]
fn once_waits_are_no_executions_of_their_own() {
    let summary = Builder::new()
        .explore(|| {
            let once = Once::new();
            thread::scope(|s| {
                s.spawn(|| once.call_once(|| {}));
                once.call_once(|| {});
            });
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!((summary.stats.executions, summary.blocked), (4, 0));
}

/// A panicking initializer poisons the once; `call_once` then panics and
/// `call_once_force` runs, told so.
#[test]
fn once_poisoned_by_a_panic_runs_only_when_forced() {
    let set = outcomes(|| {
        let once = Once::new();
        let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            once.call_once(|| panic!("initializer fails"))
        }));
        let again =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| once.call_once(|| {})));
        let mut saw_poison = false;
        once.call_once_force(|st| saw_poison = st.is_poisoned());
        (
            first.is_err(),
            again.is_err(),
            saw_poison,
            once.is_completed(),
        )
    });
    assert_eq!(set, BTreeSet::from([(true, true, true, true)]));
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

use c11check::sync::{mpsc, Barrier, Condvar};

/// Creation tracking on (see `tests/creation.rs`): no test here may report
/// an access to an object as unordered with its creation.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

#[test]
fn condvar_hands_over_a_flag() {
    let set = outcomes(|| {
        let pair = (Mutex::new(false), Condvar::new());
        thread::scope(|s| {
            s.spawn(|| {
                *pair.0.lock().unwrap() = true;
                pair.1.notify_one();
            });
            let mut ready = pair.0.lock().unwrap();
            while !*ready {
                ready = pair.1.wait(ready).unwrap();
            }
            *ready
        })
    });
    assert_eq!(set, BTreeSet::from([true]));
}

#[test]
fn condvar_wait_without_a_loop_is_caught_by_a_spurious_wakeup() {
    // Also when weak compare-exchanges are strong: the two are separate.
    for spurious_cas in [true, false] {
        condvar_wait_without_a_loop(Builder::new().spurious_failures(spurious_cas));
    }
}

fn condvar_wait_without_a_loop(b: Builder) {
    let r = b.explore(|| {
        let pair = (Mutex::new(false), Condvar::new());
        thread::scope(|s| {
            s.spawn(|| {
                *pair.0.lock().unwrap() = true;
                pair.1.notify_one();
            });
            let ready = pair.0.lock().unwrap();
            if !*ready {
                let ready = pair.1.wait(ready).unwrap();
                assert!(*ready, "woke up without the flag");
            }
        });
    });
    let rep = r.expect_err("a spurious wake-up breaks it");
    assert_eq!(rep.failure.kind, FailureKind::Panic, "{rep}");
    // The trace says so, in those words, at the test's wait.
    assert!(
        rep.trace.iter().any(|l| l
            .contains("c11check chooses a spurious wake-up or a time-out here: yes")
            && l.contains("at crates/c11check/tests/sync_types.rs:")),
        "{rep}"
    );
}

#[test]
fn lost_wakeup_is_a_deadlock() {
    // The notifier does not set a flag under the mutex: if it notifies before
    // the waiter waits, the waiter sleeps forever.
    let r = Builder::new().explore(|| {
        let pair = (Mutex::new(()), Condvar::new());
        thread::scope(|s| {
            s.spawn(|| pair.1.notify_one());
            let g = pair.0.lock().unwrap();
            let _g = pair.1.wait(g).unwrap();
        });
    });
    let rep = r.expect_err("the wake-up can be lost");
    assert!(
        matches!(
            rep.failure.kind,
            FailureKind::Deadlock | FailureKind::Livelock
        ),
        "{rep}"
    );
}

#[test]
fn barrier_has_one_leader_and_orders_phases() {
    let set = outcomes(|| {
        let b = Barrier::new(2);
        let x = AtomicUsize::new(0);
        thread::scope(|s| {
            let h = s.spawn(|| {
                x.store(1, Ordering::Relaxed);
                b.wait().is_leader()
            });
            let me = b.wait().is_leader();
            let seen = x.load(Ordering::Relaxed);
            (me ^ h.join().unwrap(), seen)
        })
    });
    assert_eq!(set, BTreeSet::from([(true, 1)]));
}

/// A barrier wait is one take of a permit the round's last arrival gives, run
/// only once it is there, and arrivals are reference-count decrements whose
/// order is not told apart: three threads make 6 executions (which of the 3
/// arrives last, times the 2 orders in which the two waiters take their
/// permits) and no blocked one. (With arrivals as `fetch_add`s: 12; with a
/// spin on the arrival count: 48 executions and 78 blocked ones.)
#[test]
fn barrier_waits_are_no_executions_of_their_own() {
    let summary = Builder::new()
        .explore(|| {
            let b = Barrier::new(3);
            thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| {
                        b.wait();
                    });
                }
                b.wait();
            });
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!((summary.stats.executions, summary.blocked), (6, 0));
}

/// Three rounds of one barrier: after each, every thread sees every other
/// one's progress from before it (so no thread passed a round early, for
/// instance by taking a permit of the round before).
#[test]
fn barrier_rounds_do_not_mix() {
    Builder::new()
        .explore(|| {
            let b = Barrier::new(2);
            let phase = [AtomicUsize::new(0), AtomicUsize::new(0)];
            thread::scope(|s| {
                for me in 0..2 {
                    let (b, phase) = (&b, &phase);
                    s.spawn(move || {
                        for round in 1..=3 {
                            phase[me].store(round, Ordering::Relaxed);
                            b.wait();
                            let other = phase[1 - me].load(Ordering::Relaxed);
                            assert!(other >= round, "round {round} passed early");
                        }
                    });
                }
            });
        })
        .unwrap_or_else(|r| panic!("{r}"));
}

/// Too few threads for a barrier: the one that came waits forever.
#[test]
fn barrier_short_of_threads_is_a_deadlock() {
    let r = Builder::new()
        .explore(|| {
            Barrier::new(2).wait();
        })
        .unwrap_err();
    assert_deadlock(
        &r,
        "the other threads of a barrier, which can no longer come",
    );
}

#[test]
fn channel_delivers_in_order_and_disconnects() {
    let set = outcomes(|| {
        let (tx, rx) = mpsc::channel();
        thread::scope(|s| {
            s.spawn(move || {
                tx.send(1).unwrap();
                tx.send(2).unwrap();
            });
            let a = rx.recv().unwrap();
            let b = rx.recv().unwrap();
            (a, b, rx.recv().is_err())
        })
    });
    assert_eq!(set, BTreeSet::from([(1, 2, true)]));
}

#[test]
fn sync_channel_blocks_when_full() {
    let set = outcomes(|| {
        let (tx, rx) = mpsc::sync_channel(1);
        thread::scope(|s| {
            s.spawn(move || {
                tx.send(1).unwrap();
                tx.send(2).unwrap();
                tx.try_send(3).is_err()
            });
            let got: Vec<i32> = rx.iter().collect();
            got
        })
    });
    assert!(set.iter().all(|v| v.starts_with(&[1, 2])), "{set:?}");
    assert!(set.contains(&vec![1, 2]), "{set:?}");
}

/// A receive is one take of its slot's permit, run only once the message
/// (or the last sender's going) left it. Before, a wait loop on the slot's
/// flag: 14 executions and 7 blocked for the unbounded channel below, 16
/// and 7 for the bounded one, 164 and 104 for two senders.
#[test]
fn channel_waits_are_no_executions_of_their_own() {
    let count = |f: fn()| {
        let s = Builder::new().explore(f).unwrap_or_else(|r| panic!("{r}"));
        (s.stats.executions, s.blocked)
    };
    fn two_messages(bound: Option<usize>) {
        let (tx, rx): (Box<dyn Fn(i32) + Send>, _) = match bound {
            None => {
                let (tx, rx) = mpsc::channel();
                (Box::new(move |v| tx.send(v).unwrap()), rx)
            }
            Some(b) => {
                let (tx, rx) = mpsc::sync_channel(b);
                (Box::new(move |v| tx.send(v).unwrap()), rx)
            }
        };
        thread::scope(|s| {
            s.spawn(move || {
                tx(1);
                tx(2);
            });
            let got = (rx.recv().unwrap(), rx.recv().unwrap(), rx.recv().is_err());
            assert_eq!(got, (1, 2, true));
        });
    }
    assert_eq!(count(|| two_messages(None)), (1, 0));
    assert_eq!(count(|| two_messages(Some(1))), (1, 0));
    // Two senders: the orders of their claims and of their going.
    let two_senders = || {
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        thread::scope(|s| {
            s.spawn(move || tx.send(1).unwrap());
            s.spawn(move || tx2.send(2).unwrap());
            let mut got: Vec<i32> = rx.iter().collect();
            got.sort();
            assert_eq!(got, vec![1, 2]);
        });
    };
    assert_eq!(count(two_senders), (4, 0));
}

/// `try_recv` finds the message or nothing while the sender runs; once the
/// sender is joined, the message is there, then the disconnection.
#[test]
fn try_recv_sees_a_message_or_nothing_then_the_disconnection() {
    let set = outcomes(|| {
        let (tx, rx) = mpsc::channel();
        let h = thread::spawn(move || tx.send(7).unwrap());
        let first = rx.try_recv().ok();
        h.join().unwrap();
        let second = rx.try_recv().ok();
        let third = matches!(rx.try_recv(), Err(mpsc::TryRecvError::Disconnected));
        (first, second, third)
    });
    assert_eq!(
        set,
        BTreeSet::from([(None, Some(7), true), (Some(7), None, true)])
    );
}

/// A receive nothing can answer (the sender is kept but never sends) is a
/// deadlock named as such.
#[test]
fn recv_with_a_silent_sender_is_a_deadlock() {
    let r = Builder::new()
        .explore(|| {
            let (tx, rx) = mpsc::channel::<i32>();
            let _ = rx.recv();
            drop(tx);
        })
        .unwrap_err();
    assert_deadlock(&r, "a message on a channel, which can no longer come");
}

/// A sender waiting for room in a full bounded channel goes on when the
/// receiver goes, and finds it gone.
#[test]
fn a_full_channel_s_sender_goes_on_when_the_receiver_goes() {
    let set = outcomes(|| {
        let (tx, rx) = mpsc::sync_channel(1);
        let h = thread::spawn(move || (tx.send(1).is_ok(), tx.send(2).is_ok()));
        drop(rx);
        h.join().unwrap()
    });
    assert_eq!(set, BTreeSet::from([(false, false), (true, false)]));
}

#[test]
fn forgotten_arc_is_a_leak() {
    let r = Builder::new().explore(|| {
        let a = c11check::sync::Arc::new(5);
        std::mem::forget(a.clone());
    });
    let rep = r.expect_err("one reference is never dropped");
    assert_eq!(rep.failure.kind, FailureKind::Leak, "{rep}");
    assert!(rep.failure.message.contains("sync_types.rs"), "{rep}");
}

static SHARED_ARC: LazyLock<c11check::sync::Arc<u32>> =
    LazyLock::new(|| c11check::sync::Arc::new(3));

#[test]
fn arcs_in_statics_are_not_leaks() {
    let set = outcomes(|| {
        let a = c11check::sync::Arc::clone(&SHARED_ARC);
        let t = thread::spawn(move || *a);
        t.join().unwrap()
    });
    assert_eq!(set, BTreeSet::from([3]));
}

/// A wait nobody will ever notify is a deadlock, named as one.
#[test]
fn condvar_wait_without_notifier_is_a_deadlock() {
    let r = Builder::new()
        .explore(|| {
            let m = Mutex::new(false);
            let cv = Condvar::new();
            let mut g = m.lock().unwrap();
            while !*g {
                g = cv.wait(g).unwrap();
            }
        })
        .unwrap_err();
    assert_eq!(r.failure.kind, FailureKind::Deadlock, "{r}");
    assert!(r.failure.message.contains("condition variable"), "{r}");
}

/// A timed wait nobody notifies may time out: the execution where it waits
/// forever is not a bug.
#[test]
fn condvar_timed_wait_without_notifier_is_not_a_bug() {
    for spurious_cas in [true, false] {
        condvar_timed_wait_without_notifier(Builder::new().spurious_failures(spurious_cas));
    }
}

fn condvar_timed_wait_without_notifier(b: Builder) {
    let timed_out = std::sync::Arc::new(StdMutex::new(BTreeSet::new()));
    let seen = timed_out.clone();
    b.explore(move || {
        let m = Mutex::new(());
        let cv = Condvar::new();
        let g = m.lock().unwrap();
        let (_g, r) = cv
            .wait_timeout(g, std::time::Duration::from_millis(1))
            .unwrap();
        seen.lock().unwrap().insert(r.timed_out());
    })
    .unwrap();
    // A timed wait may also wake spuriously (std says so) and report no
    // time-out; the wait that neither times out nor wakes waits forever: a
    // cut execution, not an outcome.
    assert_eq!(*timed_out.lock().unwrap(), BTreeSet::from([false, true]));
}

/// One condition variable for a hand-over both ways (issue 51): the
/// thread waits for `a`, sets `b` and notifies; `main` sets `a`, notifies,
/// then waits for `b`. `main`'s `notify_one` must wake the thread waiting
/// at that moment: `main`, waiting later (after a spurious wake-up, say),
/// cannot take that wake-up for itself. Reported as a deadlock before.
#[test]
fn a_notification_wakes_a_thread_waiting_when_it_was_made() {
    let summary = Builder::new()
        .explore(|| {
            #[derive(Default)]
            struct Flags {
                a: bool,
                b: bool,
            }
            let s = std::sync::Arc::new((Mutex::new(Flags::default()), Condvar::new()));
            let s2 = s.clone();
            let t = thread::spawn(move || {
                let (m, cv) = &*s2;
                let mut g = m.lock().unwrap();
                while !g.a {
                    g = cv.wait(g).unwrap();
                }
                g.b = true;
                cv.notify_one();
            });
            let (m, cv) = &*s;
            {
                let mut g = m.lock().unwrap();
                g.a = true;
                cv.notify_one();
            }
            {
                let mut g = m.lock().unwrap();
                while !g.b {
                    g = cv.wait(g).unwrap();
                }
            }
            t.join().unwrap();
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(summary.blocked, 0);
}

/// The hand-over of `condvar_hands_over_a_flag`, counted.
fn hand_over(notify_all: bool) {
    let pair = (Mutex::new(false), Condvar::new());
    thread::scope(|s| {
        s.spawn(|| {
            *pair.0.lock().unwrap() = true;
            if notify_all {
                pair.1.notify_all();
            } else {
                pair.1.notify_one();
            }
        });
        let mut ready = pair.0.lock().unwrap();
        while !*ready {
            ready = pair.1.wait(ready).unwrap();
        }
    });
}

/// A wait is one token take that the explorer schedules only once a
/// notification has left a token (as a lock acquisition waits for the
/// release): no execution stops inside a wait that a later notification
/// ends, and no execution differs from another only in how often a waiter
/// looked for a token before one came. The four: the notifier runs first;
/// the waiter is woken; it wakes spuriously and finds the flag set, or not
/// and waits again. (Before, 6 executions and 2 blocked ones.)
#[test]
fn condvar_waits_are_no_executions_of_their_own() {
    for notify_all in [false, true] {
        let summary = Builder::new()
            .explore(move || hand_over(notify_all))
            .unwrap_or_else(|r| panic!("{r}"));
        assert_eq!((summary.stats.executions, summary.blocked), (4, 0));
    }
}

/// Two threads wait for one flag: `notify_all` wakes both (each takes one of
/// the two tokens it leaves), `notify_one` only one of them, and the other
/// then sleeps forever, which is reported.
fn two_waiters(notify_all: bool) -> Result<c11check::model::Summary, Box<c11check::model::Report>> {
    Builder::new().explore(move || {
        let pair = (Mutex::new(false), Condvar::new());
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    let mut ready = pair.0.lock().unwrap();
                    while !*ready {
                        ready = pair.1.wait(ready).unwrap();
                    }
                });
            }
            *pair.0.lock().unwrap() = true;
            if notify_all {
                pair.1.notify_all();
            } else {
                pair.1.notify_one();
            }
        });
    })
}

#[test]
fn notify_all_wakes_every_waiter() {
    let summary = two_waiters(true).unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(summary.blocked, 0);
}

#[test]
fn notify_one_with_two_waiters_loses_one() {
    let r = two_waiters(false).expect_err("the second waiter is never woken");
    assert_deadlock(
        &r,
        "a condition variable's notification, which can no longer come",
    );
}

/// Two readers and a writer: the orders in which they take the lock.
fn readers_and_writer() -> (u32, u32) {
    let l = RwLock::new(0u32);
    thread::scope(|s| {
        let r1 = s.spawn(|| *l.read().unwrap());
        let r2 = s.spawn(|| *l.read().unwrap());
        *l.write().unwrap() += 1;
        (r1.join().unwrap(), r2.join().unwrap())
    })
}

/// A reader takes one share of the lock, a writer all of them, each in one
/// action the explorer runs only while enough shares are there: the
/// executions are the 14 orders of the six takes and releases in which the
/// writer holds the lock alone (the readers' four steps interleave in 6 ways;
/// the writer fits where no reader holds it: 3 places when the readers do
/// not overlap, 2 when they do). Before, a reader's load and compare-exchange
/// and the stops at a held lock made 192 executions and 82 blocked ones.
#[test]
fn rwlock_waits_are_no_executions_of_their_own() {
    let (seen, summary) = common::explore_set(Builder::new(), readers_and_writer);
    assert_eq!((summary.stats.executions, summary.blocked), (14, 0));
    assert_eq!(seen, BTreeSet::from([(0, 0), (0, 1), (1, 0), (1, 1)]));
}

/// `try_read` fails only while the writer holds the lock, `try_write` while
/// anyone does; both are results, not waits.
#[test]
fn rwlock_try_fails_only_while_held() {
    let set = outcomes(|| {
        let l = RwLock::new(0u32);
        thread::scope(|s| {
            let w = s.spawn(|| {
                let g = l.write().unwrap();
                drop(g);
            });
            let r = match l.try_read() {
                Ok(g) => Some(*g),
                Err(_) => None,
            };
            let tw = l.try_write().is_ok();
            w.join().unwrap();
            (r.is_some(), tw)
        })
    });
    assert_eq!(
        set,
        BTreeSet::from([(true, true), (true, false), (false, true), (false, false)])
    );
}

#[test]
fn arc_raw_pointers_give_up_and_take_back_shares() {
    use c11check::sync::Arc;
    // std's raw-pointer API (event-listener's loom tests use it): shares
    // given up by `into_raw` and the strong-count functions are modelled
    // reference-count updates, so the value is dropped exactly once, by
    // the last owner, after every other owner's uses, and none leaks.
    let dropped = std::sync::Arc::new(AtomicUsizeStd::new(0));
    let d2 = dropped.clone();
    let summary = Builder::new()
        .explore(move || {
            struct Counted(std::sync::Arc<AtomicUsizeStd>, u32);
            impl Drop for Counted {
                fn drop(&mut self) {
                    self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
            let a = Arc::new(Counted(d2.clone(), 7));
            let p = Arc::into_raw(a.clone());
            // SAFETY: `p` came from `into_raw` and stands for one share.
            unsafe { Arc::increment_strong_count(p) };
            assert_eq!(Arc::strong_count(&a), 3);
            let p = p as usize;
            let t = thread::spawn(move || {
                // SAFETY: one of the two shares `p` stands for.
                let b = unsafe { Arc::from_raw(p as *const Counted) };
                assert_eq!(b.1, 7);
            });
            // SAFETY: the other share.
            unsafe { Arc::decrement_strong_count(p as *const Counted) };
            t.join().unwrap();
            assert_eq!(Arc::strong_count(&a), 1);
            drop(a);
            let pinned = Arc::pin(5u32);
            assert_eq!(*pinned, 5);
            let f: Arc<u8> = Arc::from(7u8);
            assert_eq!(*f.as_ref(), 7);
            assert_eq!(*std::borrow::Borrow::<u8>::borrow(&f), 7);
            assert_eq!(*Arc::from_std(std::sync::Arc::new(9u8)), 9);
        })
        .unwrap_or_else(|r| panic!("{r}"));
    // The spawned thread's last use before or after main's strong_count:
    // two executions, none blocked.
    assert_eq!((summary.stats.executions, summary.blocked), (2, 0));
    // Once per execution.
    assert_eq!(
        dropped.load(std::sync::atomic::Ordering::Relaxed) as u64,
        summary.stats.executions + summary.blocked
    );
}

#[test]
fn arc_from_std_adopts_unsized_values() {
    use c11check::sync::Arc;
    // loom's `Arc::from_std` is how its users share a `dyn Trait` or a
    // slice: the value is adopted as it is, its count modelled, and the
    // raw-pointer API finds the count from the (fat) value pointer.
    let summary = Builder::new()
        .explore(|| {
            struct Counted(std::sync::Arc<AtomicUsizeStd>);
            impl Drop for Counted {
                fn drop(&mut self) {
                    self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
            trait Speak: Send + Sync {
                fn word(&self) -> u32;
            }
            impl Speak for Counted {
                fn word(&self) -> u32 {
                    11
                }
            }
            let dropped = std::sync::Arc::new(AtomicUsizeStd::new(0));
            let std_dyn: std::sync::Arc<dyn Speak> = std::sync::Arc::new(Counted(dropped.clone()));
            let a: Arc<dyn Speak> = Arc::from_std(std_dyn);
            let b = a.clone();
            let t = thread::spawn(move || assert_eq!(b.word(), 11));
            let p = Arc::into_raw(a);
            // SAFETY: `p` came from `into_raw` and stands for one share.
            let a = unsafe { Arc::from_raw(p) };
            assert_eq!(a.word(), 11);
            drop(a);
            t.join().unwrap();
            // Dropped once, by whichever owner was last.
            assert_eq!(dropped.load(std::sync::atomic::Ordering::Relaxed), 1);
            let slice: Arc<[u32]> = Arc::from_std(std::sync::Arc::from(vec![1, 2, 3]));
            let p = Arc::into_raw(slice.clone());
            // SAFETY: as above.
            unsafe { Arc::decrement_strong_count(p) };
            assert_eq!((slice.len(), Arc::strong_count(&slice)), (3, 1));
        })
        .unwrap_or_else(|r| panic!("{r}"));
    // The last owner is main's or the thread's.
    assert_eq!((summary.stats.executions, summary.blocked), (2, 0));
}

#[test]
#[should_panic(expected = "not unique")]
fn arc_from_std_refuses_a_shared_value() {
    let std = std::sync::Arc::new(1u8);
    let _other = std.clone();
    let _ = c11check::sync::Arc::from_std(std);
}

use std::sync::atomic::AtomicUsize as AtomicUsizeStd;
