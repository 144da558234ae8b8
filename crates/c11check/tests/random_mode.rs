//! The random explorer through the Rust API: its outcomes are always among
//! the exhaustive ones, reach all of them on small tests, are reproducible
//! from the seed, and it finds the examples' bugs.

#[path = "../examples/seqlock.rs"]
mod seqlock;

use c11check::model::{Builder, FailureKind};
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::thread;
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

fn sb() -> Vec<usize> {
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

fn outcomes(b: Builder) -> (Vec<Vec<usize>>, u64) {
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

#[test]
fn random_outcomes_are_exhaustive_ones_and_reach_them_all() {
    let (all, _) = outcomes(Builder::new());
    let all: BTreeSet<_> = all.into_iter().collect();
    let (sampled, n) = outcomes(Builder::new().random(300).seed(7));
    assert_eq!(n, 300);
    let sampled: BTreeSet<_> = sampled.into_iter().collect();
    assert_eq!(
        sampled, all,
        "300 random executions of SB reach its four outcomes"
    );
}

#[test]
fn same_seed_same_executions() {
    let (a, _) = outcomes(Builder::new().random(50).seed(42));
    let (b, _) = outcomes(Builder::new().random(50).seed(42));
    let (c, _) = outcomes(Builder::new().random(50).seed(43));
    assert_eq!(a, b);
    assert_ne!(a, c, "another seed gives another sequence (this one does)");
}

#[test]
fn random_mode_finds_the_seqlock_bug_and_names_the_seed() {
    let rep = seqlock::check_with(Builder::new().random(2000).seed(1), false)
        .expect_err("the torn read is found");
    assert_eq!(rep.failure.kind, FailureKind::Panic);
    let text = rep.to_string();
    assert!(text.contains("random iteration"), "{text}");
    let again = seqlock::check_with(Builder::new().replay(&rep.replay), false)
        .expect_err("the replay fails the same way");
    assert_eq!(again.failure.message, rep.failure.message);
}
