//! Retry loops around `compare_exchange_weak`, written as users write them:
//! each may fail spuriously, but only once per store it reads, so every
//! loop shape ends and none is reported as a livelock; a program that takes
//! one spurious failure as proof of a change is still caught.

use c11check::model::{Builder, FailureKind};
use c11check::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use c11check::sync::Arc;
use c11check::thread;
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

/// The most common lock-free loop: load, then a weak compare-exchange of
/// what was loaded.
fn increment(a: &AtomicUsize) {
    loop {
        let h = a.load(Ordering::Relaxed);
        if a.compare_exchange_weak(h, h + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            break;
        }
    }
}

#[test]
fn single_thread_weak_cas_increment_explores_two_executions() {
    // Success at once, or one spurious failure on the initial value and then
    // success: the second attempt reads the same store and may not fail
    // spuriously again.
    let summary = Builder::new()
        .explore(|| {
            let a = AtomicUsize::new(0);
            increment(&a);
            assert_eq!(a.load(Ordering::Relaxed), 1);
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(summary.stats.executions, 2);
}

#[test]
fn weak_cas_counter_with_two_threads_is_exact() {
    let seen = std::sync::Arc::new(StdMutex::new(BTreeSet::new()));
    let s2 = seen.clone();
    let summary = Builder::new()
        .explore(move || {
            let a = Arc::new(AtomicUsize::new(0));
            let a2 = a.clone();
            let t = thread::spawn(move || increment(&a2));
            increment(&a);
            t.join().unwrap();
            s2.lock().unwrap().insert(a.load(Ordering::Relaxed));
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(*seen.lock().unwrap(), BTreeSet::from([2]));
    println!(
        "two-thread weak-CAS counter: {} executions",
        summary.stats.executions
    );
    assert_eq!(summary.stats.executions, 32);
}

/// What happens between two attempts must not matter: a plain write, a load
/// of another location, a second compare-exchange site on the same
/// location.
#[test]
fn every_loop_shape_ends() {
    // Plain write and another location between the attempts.
    let summary = Builder::new()
        .explore(|| {
            let a = AtomicUsize::new(0);
            let other = AtomicUsize::new(7);
            let mut scratch = c11check::cell::UnsafeCell::new(0usize);
            loop {
                let h = a.load(Ordering::Relaxed);
                scratch.with_mut(|p| unsafe { *p = h });
                let _ = other.load(Ordering::Acquire);
                if a.compare_exchange_weak(h, h + 1, Ordering::Release, Ordering::Relaxed)
                    .is_ok()
                {
                    break;
                }
            }
            let _ = scratch.get_mut();
        })
        .unwrap_or_else(|r| panic!("{r}"));
    // Success at once, or one spurious failure on the initial value.
    assert_eq!(summary.stats.executions, 2);
    // Two compare-exchange sites in one loop, taking turns.
    let summary = Builder::new()
        .explore(|| {
            let a = AtomicUsize::new(0);
            let mut turn = 0;
            loop {
                let h = a.load(Ordering::Relaxed);
                let r = if turn % 2 == 0 {
                    a.compare_exchange_weak(h, h + 1, Ordering::Relaxed, Ordering::Relaxed)
                } else {
                    a.compare_exchange_weak(h, h + 1, Ordering::SeqCst, Ordering::Relaxed)
                };
                if r.is_ok() {
                    break;
                }
                turn += 1;
            }
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(summary.stats.executions, 2);
    // Retrying with the value the failure returned.
    let summary = Builder::new()
        .explore(|| {
            let a = AtomicUsize::new(0);
            let mut h = a.load(Ordering::Relaxed);
            while let Err(v) =
                a.compare_exchange_weak(h, h + 1, Ordering::Relaxed, Ordering::Relaxed)
            {
                h = v;
            }
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(summary.stats.executions, 2);
}

struct Node {
    value: usize,
    next: *mut Node,
}

/// A Treiber stack's push, as everyone writes it.
fn push(head: &AtomicPtr<Node>, value: usize) {
    let node = Box::into_raw(Box::new(Node {
        value,
        next: std::ptr::null_mut(),
    }));
    loop {
        let h = head.load(Ordering::Relaxed);
        // SAFETY: `node` is ours until the exchange publishes it.
        unsafe { (*node).next = h };
        if head
            .compare_exchange_weak(h, node, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            break;
        }
    }
}

/// Pushes from `threads` threads, then checks that the stack holds each
/// value once; returns the number of executions.
fn treiber(threads: usize) -> u64 {
    let summary = Builder::new()
        .explore(move || {
            let head = Arc::new(AtomicPtr::new(std::ptr::null_mut::<Node>()));
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let head = head.clone();
                    thread::spawn(move || push(&head, i))
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            let mut values = Vec::new();
            let mut p = head.load(Ordering::Acquire);
            while !p.is_null() {
                // SAFETY: every thread has finished; the nodes are leaked boxes.
                let n = unsafe { Box::from_raw(p) };
                values.push(n.value);
                p = n.next;
            }
            values.sort();
            assert_eq!(values, (0..threads).collect::<Vec<_>>());
        })
        .unwrap_or_else(|r| panic!("{r}"));
    summary.stats.executions
}

#[test]
fn treiber_push_with_two_and_three_threads_passes() {
    let two = treiber(2);
    let three = treiber(3);
    println!("Treiber push: 2 threads {two} executions, 3 threads {three} executions");
    assert_eq!((two, three), (32, 3456));
}

/// One spurious failure still matters: code that takes a failed weak
/// exchange as proof that another thread changed the value is wrong.
#[test]
fn one_spurious_failure_is_still_explored() {
    let r = Builder::new()
        .explore(|| {
            let a = AtomicUsize::new(0);
            let h = a.load(Ordering::Relaxed);
            if a.compare_exchange_weak(h, h + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {
                assert_ne!(a.load(Ordering::Relaxed), h, "failed, yet nobody wrote");
            }
        })
        .expect_err("the spurious failure is explored");
    assert_eq!(r.failure.kind, FailureKind::Panic, "{r}");
    assert!(r.failure.message.contains("yet nobody wrote"), "{r}");
}

/// The random engines run the same loops: as graphs and on the live memory,
/// no iteration is cut as a livelock.
#[test]
fn random_engines_end_retry_loops() {
    for live in [false, true] {
        let b = Builder::new().random(300).seed(11);
        let b = if live { b.live() } else { b.graph_random() };
        b.explore(|| {
            let a = Arc::new(AtomicUsize::new(0));
            let a2 = a.clone();
            let t = thread::spawn(move || increment(&a2));
            increment(&a);
            t.join().unwrap();
            assert_eq!(a.load(Ordering::Relaxed), 2);
        })
        .unwrap_or_else(|r| panic!("live={live}: {r}"));
    }
}
