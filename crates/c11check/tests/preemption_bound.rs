//! `Builder::preemption_bound`: executions that need more preemptions than
//! the bound are left out, and the summary counts them.

use c11check::model::Builder;
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::sync::{Arc, Mutex};
use c11check::thread;

/// Two threads increment a counter under a lock, reading it in one critical
/// section and writing it in the next: an update is lost only when one
/// thread is preempted between the two (where it could take the lock again
/// at once).
fn lost_update() {
    let x = Arc::new(Mutex::new(0));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let x = x.clone();
            thread::spawn(move || {
                let v = *x.lock().unwrap();
                *x.lock().unwrap() = v + 1;
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*x.lock().unwrap(), 2, "an increment was lost");
}

#[test]
fn a_bug_that_needs_one_preemption_is_found_within_one_and_not_within_none() {
    let none = Builder::new()
        .preemption_bound(0)
        .explore(lost_update)
        .expect("no execution without preemptions loses an update");
    // Each thread runs alone from its load to its store: one order of the
    // two threads, or the other.
    assert_eq!(none.stats.executions, 2);
    assert!(none.stats.over_bound + none.stats.bound_pruned > 0);

    let report = Builder::new()
        .preemption_bound(1)
        .explore(lost_update)
        .expect_err("one preemption between a load and its store loses an update");
    assert!(
        report.to_string().contains("an increment was lost"),
        "{report}"
    );

    // Without a bound, every execution is explored and none is left out.
    let all = Builder::new()
        .explore(|| {
            let x = Arc::new(AtomicUsize::new(0));
            let x2 = x.clone();
            let t = thread::spawn(move || x2.store(1, Ordering::SeqCst));
            x.load(Ordering::SeqCst);
            t.join().unwrap();
        })
        .unwrap();
    assert_eq!((all.stats.over_bound, all.stats.bound_pruned), (0, 0));
    assert_eq!(all.stats.executions, 2);
}

#[test]
fn the_bound_comes_from_the_environment_too() {
    // Builder::new reads C11CHECK_PREEMPTIONS (tests in this file run in
    // one process: the variable is set and read here only).
    std::env::set_var("C11CHECK_PREEMPTIONS", "0");
    let b = Builder::new();
    std::env::remove_var("C11CHECK_PREEMPTIONS");
    assert_eq!(b.preemption_bound, Some(0));
    let summary = b
        .explore(lost_update)
        .expect("no bug within no preemptions");
    assert_eq!(summary.stats.executions, 2);
}

/// A thread that spins with `yield_now` until a flag is set.
fn spin_until_set() {
    let flag = Arc::new(AtomicUsize::new(0));
    let f = flag.clone();
    let t = thread::spawn(move || {
        while f.load(Ordering::Acquire) == 0 {
            thread::yield_now();
        }
    });
    flag.store(1, Ordering::Release);
    t.join().unwrap();
}

#[test]
fn a_switch_right_after_a_yield_is_free() {
    // Under SC a schedule is an SC run (under the weak models the spinner
    // could read the clear flag after it was set, with no preemption).
    let sc = || Builder::new().memory_model(c11check::model::Model::Sc);
    // Within no preemption, the flag is set before the spinner looks.
    let none = sc().preemption_bound(0).explore(spin_until_set).unwrap();
    assert_eq!(none.stats.executions, 1);
    // One preemption lets the spinner run first: it sees the flag clear,
    // yields, and the switch back to the main thread is free (as in loom),
    // so the execution where it spins once is within one preemption.
    let one = sc().preemption_bound(1).explore(spin_until_set).unwrap();
    let all = sc().explore(spin_until_set).unwrap();
    assert_eq!(all.stats.executions, 2);
    assert_eq!(one.stats.executions, 2);
}

#[test]
#[should_panic(expected = "the bound applies to exhaustive exploration")]
fn a_bound_with_random_executions_is_refused() {
    let _ = Builder::new()
        .preemption_bound(1)
        .random(10)
        .explore(lost_update);
}

/// A seqlock: a writer makes the sequence number odd, writes two words and
/// makes it even again, twice; a reader retries (up to three times) until
/// it reads one even number around both words.
fn seqlock() {
    let seq = Arc::new(AtomicUsize::new(0));
    let data = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let (s2, d2) = (seq.clone(), data.clone());
    let writer = thread::spawn(move || {
        for v in 1..3 {
            let s = s2.load(Ordering::Relaxed);
            s2.store(s + 1, Ordering::Relaxed);
            c11check::sync::atomic::fence(Ordering::Release);
            d2[0].store(v, Ordering::Relaxed);
            d2[1].store(v, Ordering::Relaxed);
            s2.store(s + 2, Ordering::Release);
        }
    });
    for _ in 0..3 {
        let before = seq.load(Ordering::Acquire);
        let a = data[0].load(Ordering::Relaxed);
        let b = data[1].load(Ordering::Relaxed);
        c11check::sync::atomic::fence(Ordering::Acquire);
        if before.is_multiple_of(2) && seq.load(Ordering::Relaxed) == before {
            assert_eq!(a, b, "a torn read");
            break;
        }
    }
    writer.join().unwrap();
}

/// A bound makes the exploration smaller, not only the set of executions
/// kept (issue 51): at bound 0 the seqlock's branches whose every
/// continuation needs a preemption end early, so far fewer revisits are
/// made than without a bound. (Counted, not timed.)
#[test]
fn a_bound_cuts_the_tree_not_only_the_executions() {
    let all = Builder::new()
        .explore(seqlock)
        .expect("the seqlock is correct");
    let zero = Builder::new()
        .preemption_bound(0)
        .explore(seqlock)
        .expect("the seqlock is correct");
    // Unbounded: every interleaving of the reader's tries with the
    // writer's two updates. Within 0 preemptions only the one where `main`
    // reads before the writer runs (a switch right after the spawn would
    // take the processor from `main`).
    assert_eq!(all.stats.executions, 1323);
    assert_eq!(zero.stats.executions, 1);
    assert!(
        zero.stats.revisits * 20 < all.stats.revisits,
        "bound 0: {} revisits for {} executions; unbounded: {} for {}",
        zero.stats.revisits,
        zero.stats.executions,
        all.stats.revisits,
        all.stats.executions
    );
}
