//! Helpers shared by the integration tests.
#![allow(dead_code)]

use c11check::model::{Builder, Summary};
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::thread;
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

/// Explores `f` with `b` and collects the values its executions return,
/// with the exploration's summary.
pub fn explore_set<T: Ord + Send + 'static>(
    b: Builder,
    f: impl Fn() -> T + Send + Sync + 'static,
) -> (BTreeSet<T>, Summary) {
    let seen = std::sync::Arc::new(StdMutex::new(BTreeSet::new()));
    let s2 = seen.clone();
    let summary = b
        .explore(move || {
            let v = f();
            s2.lock().unwrap().insert(v);
        })
        .unwrap_or_else(|r| panic!("{r}"));
    let set = std::mem::take(&mut *seen.lock().unwrap());
    (set, summary)
}

/// Store buffering; returns what each thread read.
pub fn sb() -> Vec<usize> {
    let (x, y) = (AtomicUsize::new(0), AtomicUsize::new(0));
    thread::scope(|s| {
        let a = s.spawn(|| {
            x.store(1, Ordering::Relaxed);
            y.load(Ordering::Relaxed)
        });
        let b = s.spawn(|| {
            y.store(1, Ordering::Relaxed);
            x.load(Ordering::Relaxed)
        });
        vec![a.join().unwrap(), b.join().unwrap()]
    })
}

pub fn outcomes(b: Builder) -> (Vec<Vec<usize>>, u64) {
    let seen = std::sync::Arc::new(StdMutex::new(Vec::new()));
    let s2 = seen.clone();
    let summary = b
        .explore(move || {
            let v = sb();
            s2.lock().unwrap().push(v);
        })
        .unwrap_or_else(|r| panic!("{r}"));
    let v = std::mem::take(&mut *seen.lock().unwrap());
    (v, summary.stats.executions)
}

/// Asserts that `r` reports a deadlock whose message contains `what` (what
/// the stuck thread waits for).
pub fn assert_deadlock(r: &c11check::model::Report, what: &str) {
    assert_eq!(
        r.failure.kind,
        c11check::model::FailureKind::Deadlock,
        "{r}"
    );
    assert!(r.failure.message.contains(what), "{r}");
}
