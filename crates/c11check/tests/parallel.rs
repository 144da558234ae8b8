//! Exhaustive runs on several worker threads (`Builder::jobs`): the same
//! executions as one worker, bugs found and replayed on one, and objects
//! that would be shared between workers refused with what to do.

use c11check::model::Builder;
use c11check::sync::atomic::{AtomicUsize, Ordering::*};
use c11check::sync::{Arc, Mutex};
use c11check::thread;
use c11check_runtime::FailureKind;

/// Treiber-style pushes and a pop on a CAS-linked stack of indices, with a
/// `Mutex` counter and `Arc`s: each worker runs its own fibers, tracking
/// allocator and reference counts.
fn stack_program() {
    let head = Arc::new(AtomicUsize::new(0));
    let pushed = Arc::new(Mutex::new(0u32));
    let handles: Vec<_> = (1..=3)
        .map(|v| {
            let (head, pushed) = (head.clone(), pushed.clone());
            thread::spawn(move || {
                let mut cur = head.load(Relaxed);
                while let Err(now) = head.compare_exchange_weak(cur, v, Release, Relaxed) {
                    cur = now;
                }
                *pushed.lock().unwrap() += 1;
            })
        })
        .collect();
    let top = head.load(Acquire);
    for h in handles {
        h.join().unwrap();
    }
    assert!(top <= 3);
    assert_eq!(*pushed.lock().unwrap(), 3);
}

/// Message passing with a relaxed flag: the reader may see the flag and
/// miss the data, a failed assertion.
fn broken_message_passing() {
    let data = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicUsize::new(0));
    let (d, f) = (data.clone(), flag.clone());
    let t = thread::spawn(move || {
        d.store(1, Relaxed);
        f.store(1, Relaxed);
    });
    let x = data.load(Relaxed);
    let y = data.load(Relaxed);
    if flag.load(Relaxed) == 1 {
        assert_eq!(data.load(Relaxed), 1, "read {x} {y}");
    }
    t.join().unwrap();
}

#[test]
fn workers_explore_the_executions_one_worker_does() {
    let one = Builder::new().explore(stack_program).unwrap();
    assert!(one.stats.executions > 100, "{:?}", one.stats);
    for jobs in [2, 3, 4] {
        let many = Builder::new().jobs(jobs).explore(stack_program).unwrap();
        assert_eq!(
            (many.stats.executions, many.blocked),
            (one.stats.executions, one.blocked),
            "on {jobs} workers"
        );
    }
}

#[test]
fn a_bug_found_by_a_worker_replays_on_one() {
    let r = Builder::new()
        .jobs(2)
        .explore(broken_message_passing)
        .unwrap_err();
    assert_eq!(r.failure.kind, FailureKind::Panic, "{r}");
    let again = Builder::new()
        .replay(&r.replay)
        .explore(broken_message_passing)
        .unwrap_err();
    assert_eq!(again.failure.message, r.failure.message);
    assert_eq!(again.replay, r.replay);
}

static SHARED_COUNT: AtomicUsize = AtomicUsize::new(0);

#[test]
fn a_static_used_by_several_workers_is_refused_with_what_to_do() {
    let body = || {
        let t = thread::spawn(|| {
            SHARED_COUNT.fetch_add(1, Relaxed);
        });
        SHARED_COUNT.fetch_add(1, Relaxed);
        t.join().unwrap();
    };
    // One worker: fine (the static is bound afresh in each execution).
    Builder::new().explore(body).unwrap();
    let r = Builder::new().jobs(2).explore(body).unwrap_err();
    assert!(
        r.to_string()
            .contains("run this test on one worker (`jobs(1)`)"),
        "{r}"
    );
}

c11check::thread_local! {
    static VISITS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

#[test]
fn thread_locals_and_leak_tracking_are_per_worker() {
    // Each modelled thread, on whichever worker, starts from its own value.
    let body = || {
        let t = thread::spawn(|| {
            VISITS.with(|v| v.set(v.get() + 1));
            VISITS.with(|v| assert_eq!(v.get(), 1));
        });
        let flag = AtomicUsize::new(0);
        flag.store(1, Relaxed);
        VISITS.with(|v| v.set(v.get() + 1));
        VISITS.with(|v| assert_eq!(v.get(), 1));
        t.join().unwrap();
    };
    let one = Builder::new().explore(body).unwrap();
    let many = Builder::new().jobs(2).explore(body).unwrap();
    assert_eq!(many.stats.executions, one.stats.executions);
    // A leak is found in every execution, by whichever worker runs it; no
    // worker takes another's allocations for its own.
    let leaky = || {
        let a = Arc::new(AtomicUsize::new(1));
        let b = a.clone();
        let t = thread::spawn(move || b.fetch_add(1, Relaxed));
        if a.load(Relaxed) == 2 {
            std::mem::forget(a);
        }
        t.join().unwrap();
    };
    let r = Builder::new().jobs(2).explore(leaky).unwrap_err();
    assert_eq!(r.failure.kind, FailureKind::Leak, "{r}");
    Builder::new().jobs(2).explore(stack_program).unwrap();
}
