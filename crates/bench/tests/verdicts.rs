//! c11check's verdict on every CDSChecker/C11Tester benchmark port matches the
//! bug the benchmark documents (or its absence), exhaustively.

use c11check::model::{Builder, FailureKind};
use c11check_bench::suite::{Benchmark, Verdict, BENCHMARKS};
use std::time::Instant;

/// Object creation tracking (a fresh object reached without synchronization
/// is a race), as a user of c11check would install it.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

/// The benchmarks to check: all, or the one `C11CHECK_BENCH` names.
fn selected() -> impl Iterator<Item = &'static Benchmark> {
    let only = std::env::var("C11CHECK_BENCH").ok();
    BENCHMARKS
        .iter()
        .filter(move |b| only.as_deref().is_none_or(|o| o == b.name))
}

fn verdict_of(kind: FailureKind) -> Option<Verdict> {
    match kind {
        FailureKind::DataRace => Some(Verdict::Race),
        FailureKind::Panic => Some(Verdict::Assertion),
        FailureKind::Deadlock => Some(Verdict::Deadlock),
        _ => None,
    }
}

#[test]
fn exhaustive_verdicts_match_the_documented_bugs() {
    let mut wrong = Vec::new();
    for b in selected() {
        let p = c11check_bench::c11::program(b.name).unwrap();
        let start = Instant::now();
        let (found, what) = match Builder::new().explore(p) {
            Ok(s) => (
                Some(Verdict::NoBug),
                format!(
                    "{} executions, {} blocked",
                    s.stats.executions, s.stats.blocked
                ),
            ),
            Err(r) => (
                verdict_of(r.failure.kind),
                r.to_string()
                    .lines()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" / "),
            ),
        };
        eprintln!(
            "{:<22} {:>8.3}s {:?}: {what}",
            b.name,
            start.elapsed().as_secs_f64(),
            found
        );
        if !found.is_some_and(|v| b.is_documented(v)) {
            wrong.push(format!(
                "{}: expected {:?}, got {found:?} ({what})",
                b.name, b.verdict
            ));
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

/// The kinds of bug a live random run reports, with their hit counts.
fn live_kinds(b: Builder, p: fn()) -> Vec<(Option<Verdict>, u64)> {
    match b.explore(p) {
        Ok(_) => Vec::new(),
        Err(r) => {
            let mut kinds = vec![(verdict_of(r.failure.kind), r.hits.map_or(1, |h| h.0))];
            for (msg, n) in &r.others {
                let k = if msg.contains("data race") {
                    Some(Verdict::Race)
                } else if msg.contains("deadlock") {
                    Some(Verdict::Deadlock)
                } else if msg.contains("panicked") {
                    Some(Verdict::Assertion)
                } else {
                    None
                };
                kinds.push((k, *n));
            }
            kinds
        }
    }
}

/// The live random engine never reports a bug in a correct benchmark, and
/// on each buggy one reports only its documented bug and finds it, with
/// uniform scheduling or PCT (the Chase-Lev variant needs PCT: its bug
/// wants the thief preempted for most of the owner's run).
#[test]
fn random_verdicts_match_the_documented_bugs() {
    let mut wrong = Vec::new();
    for b in selected() {
        let p = c11check_bench::c11::program(b.name).unwrap();
        let mut found = live_kinds(Builder::new().random(500).live().seed(7), p);
        found.extend(live_kinds(
            Builder::new().random(1000).live().pct(3).seed(7),
            p,
        ));
        eprintln!("{:<22} {found:?}", b.name);
        let ok = if b.verdict == Verdict::NoBug {
            found.is_empty()
        } else {
            !found.is_empty()
                && found
                    .iter()
                    .all(|(k, _)| k.is_some_and(|k| b.is_documented(k)))
        };
        if !ok {
            wrong.push(format!(
                "{}: expected {:?}, found {found:?}",
                b.name, b.verdict
            ));
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}
