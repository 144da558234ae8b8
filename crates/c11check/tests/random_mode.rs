//! The random explorer through the Rust API: its outcomes are always among
//! the exhaustive ones, reach all of them on small tests, are reproducible
//! from the seed, and it finds the examples' bugs.

#[path = "../examples/seqlock.rs"]
mod seqlock;

mod common;

use c11check::model::{Builder, FailureKind};
use common::outcomes;
use std::collections::BTreeSet;

/// Creation tracking on (see `tests/creation.rs`): no test here may report
/// an access to an object as unordered with its creation.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

#[test]
fn random_outcomes_are_exhaustive_ones_and_reach_them_all() {
    let (all, _) = outcomes(Builder::new());
    let all: BTreeSet<_> = all.into_iter().collect();
    let (sampled, n) = outcomes(Builder::new().graph_random().random(300).seed(7));
    assert_eq!(n, 300);
    let sampled: BTreeSet<_> = sampled.into_iter().collect();
    assert_eq!(
        sampled, all,
        "300 random executions of SB reach its four outcomes"
    );
}

#[test]
fn same_seed_same_executions() {
    let (a, _) = outcomes(Builder::new().graph_random().random(50).seed(42));
    let (b, _) = outcomes(Builder::new().graph_random().random(50).seed(42));
    let (c, _) = outcomes(Builder::new().graph_random().random(50).seed(43));
    assert_eq!(a, b);
    assert_ne!(a, c, "another seed gives another sequence (this one does)");
}

#[test]
fn random_mode_finds_the_seqlock_bug_and_names_the_seed() {
    let rep = seqlock::check_with(Builder::new().graph_random().random(2000).seed(1), false)
        .expect_err("the torn read is found");
    assert_eq!(rep.failure.kind, FailureKind::Panic);
    let text = rep.to_string();
    assert!(text.contains("random iteration"), "{text}");
    let again = seqlock::check_with(Builder::new().replay(&rep.replay), false)
        .expect_err("the replay fails the same way");
    assert_eq!(again.failure.message, rep.failure.message);
}
