//! c11check's verdict on every CDSChecker/C11Tester benchmark port matches the
//! bug the benchmark documents (or its absence), exhaustively.

use c11check::model::{Builder, FailureKind};
use c11check_bench::suite::{Verdict, BENCHMARKS};
use std::time::Instant;

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
    let only = std::env::var("C11CHECK_BENCH").ok();
    let mut wrong = Vec::new();
    for b in BENCHMARKS {
        if only.as_deref().is_some_and(|o| o != b.name) {
            continue;
        }
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
        if found != Some(b.verdict) {
            wrong.push(format!(
                "{}: expected {:?}, got {found:?} ({what})",
                b.name, b.verdict
            ));
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}
