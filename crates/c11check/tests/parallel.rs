//! Runs on several worker threads (`Builder::jobs`): exhaustive runs
//! explore the same executions as one worker, random and live runs report
//! the same bug, hits and counts as one worker, shards of a random run
//! split its iterations, bugs replay on one worker, and objects that would
//! be shared between workers are refused with what to do.

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
    // Random runs too, live and graph-based.
    for graph in [false, true] {
        let mut b = Builder::new().random(200).jobs(2);
        if graph {
            b = b.graph_random();
        }
        let r = b.explore(body).unwrap_err();
        assert!(r.to_string().contains("(`jobs(1)`)"), "{r}");
    }
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

/// A bug a random run hits in some iterations only: a reader that sees
/// the flag before the data (relaxed), with a second, rarer bug (both
/// values seen stale) told apart by its message.
fn sometimes_broken() {
    let data = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicUsize::new(0));
    let (d, f) = (data.clone(), flag.clone());
    let t = thread::spawn(move || {
        d.store(1, Relaxed);
        f.store(1, Relaxed);
    });
    thread::yield_now();
    if flag.load(Relaxed) == 1 {
        let seen = data.load(Relaxed);
        let again = data.load(Relaxed);
        assert!(seen == 1 || again == 1, "both reads stale");
        assert_eq!(seen, 1, "first read stale");
    }
    t.join().unwrap();
}

#[test]
fn random_runs_on_workers_report_what_one_worker_does() {
    // Graph-based random runs stop at the first bug: the same iteration
    // on any number of workers, whichever finishes first.
    for seed in 0..4 {
        let run = |jobs| {
            Builder::new()
                .random(400)
                .graph_random()
                .seed(seed)
                .jobs(jobs)
                .explore(sometimes_broken)
                .unwrap_err()
        };
        let one = run(1);
        for jobs in [2, 3] {
            let many = run(jobs);
            assert_eq!(many.random_iteration, one.random_iteration, "{many}");
            assert_eq!(many.replay, one.replay, "{many}");
            assert_eq!(many.failure.message, one.failure.message);
            assert_eq!(many.execution_number, one.execution_number);
        }
    }
    let one = Builder::new()
        .random(300)
        .graph_random()
        .explore(stack_program)
        .unwrap();
    let two = Builder::new()
        .random(300)
        .graph_random()
        .jobs(2)
        .explore(stack_program)
        .unwrap();
    assert_eq!(
        (two.stats.executions, two.blocked),
        (one.stats.executions, one.blocked)
    );
    assert_eq!(one.stats.executions + one.blocked, 300);
}

#[test]
fn live_runs_on_workers_count_the_hits_one_worker_does() {
    // Live runs run every iteration and count how often each bug is hit.
    for seed in 0..3 {
        let run = |jobs| {
            Builder::new()
                .random(500)
                .seed(seed)
                .jobs(jobs)
                .explore(sometimes_broken)
                .unwrap_err()
        };
        let one = run(1);
        let (hits, of) = one.hits.expect("a live report counts hits");
        assert!(hits > 0 && hits < 500 && of == 500, "{one}");
        for jobs in [2, 4] {
            let many = run(jobs);
            assert_eq!(many.random_iteration, one.random_iteration, "{many}");
            assert_eq!(many.hits, one.hits, "{many}");
            assert_eq!(many.others, one.others, "{many}");
            assert_eq!(many.operations, one.operations, "{many}");
            assert_eq!(many.replay, one.replay, "{many}");
        }
        // The report's replay runs its iteration alone.
        let again = Builder::new()
            .replay(&one.replay)
            .explore(sometimes_broken)
            .unwrap_err();
        assert_eq!(again.failure.message, one.failure.message);
    }
    let one = Builder::new().random(500).explore(stack_program).unwrap();
    let two = Builder::new()
        .random(500)
        .jobs(2)
        .explore(stack_program)
        .unwrap();
    assert_eq!(one.stats.executions, 500);
    assert_eq!(
        (two.stats.executions, two.behaviours, two.operations),
        (one.stats.executions, one.behaviours, one.operations)
    );
}

#[test]
fn random_shards_run_each_iteration_once() {
    // Shards of a random run split its chunks of iterations: their counts
    // add up to the whole run's, and a bug the whole run reports is the
    // one of the shard holding its iteration.
    let whole = Builder::new().random(1000).explore(stack_program).unwrap();
    for n in 1..=4u32 {
        let (mut executions, mut operations) = (0, 0);
        for i in 1..=n {
            let s = Builder::new()
                .random(1000)
                .shard(i, n)
                .explore(stack_program)
                .unwrap();
            executions += s.stats.executions;
            operations += s.operations.unwrap();
        }
        assert_eq!(executions, whole.stats.executions, "{n} shards");
        assert_eq!(Some(operations), whole.operations, "{n} shards");
    }
    let first = Builder::new()
        .random(400)
        .graph_random()
        .explore(sometimes_broken)
        .unwrap_err();
    let (i, _) = first.random_iteration.unwrap();
    let chunk = i / c11check_explore::random::CHUNK;
    let owner = (chunk % 3) as u32 + 1;
    let sharded = Builder::new()
        .random(400)
        .graph_random()
        .shard(owner, 3)
        .explore(sometimes_broken)
        .unwrap_err();
    assert_eq!(sharded.random_iteration, first.random_iteration);
    assert_eq!(sharded.replay, first.replay);
}
