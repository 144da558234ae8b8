//! The bundled examples: each correct version passes exhaustively, each buggy
//! one fails with the expected kind of report, and the report's replay string
//! re-runs exactly the failing execution.

#[path = "../examples/seqlock.rs"]
mod seqlock;
#[path = "../examples/spinlock.rs"]
mod spinlock;
#[path = "../examples/spsc.rs"]
mod spsc;

use c11check::model::{Builder, FailureKind, Report, Summary};
use c11check::sync::atomic::Ordering;

/// Creation tracking on (see `tests/creation.rs`): no test here may report
/// an access to an object as unordered with its creation.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

fn passes(r: Result<Summary, Box<Report>>) -> Summary {
    let s = r.unwrap_or_else(|rep| panic!("unexpected report:\n{rep}"));
    assert!(!s.stats.cut);
    assert!(s.stats.executions > 0);
    s
}

fn fails(r: Result<Summary, Box<Report>>, kind: FailureKind) -> Box<Report> {
    let rep = r.expect_err("the bug is found");
    assert_eq!(rep.failure.kind, kind, "{rep}");
    let text = rep.to_string();
    assert!(
        text.contains("examples/"),
        "the report names the example's lines:\n{text}"
    );
    assert!(text.contains("C11CHECK_REPLAY="), "{text}");
    rep
}

/// Replaying `rep` through `run` (which builds its model from the builder it
/// is given) gives the same failure on the same execution.
fn replays_to_same(rep: &Report, run: impl Fn(Builder) -> Result<Summary, Box<Report>>) {
    let again = run(Builder::new().replay(&rep.replay)).expect_err("the replay fails again");
    assert_eq!(again.failure.kind, rep.failure.kind);
    assert_eq!(again.failure.message, rep.failure.message);
    assert_eq!(again.replay, rep.replay);
    assert_eq!(again.execution_number, 1);
}

#[test]
fn spsc_queue() {
    passes(spsc::check(Ordering::Release));
    let rep = fails(spsc::check(Ordering::Relaxed), FailureKind::DataRace);
    replays_to_same(&rep, |b| spsc::check_with(b, Ordering::Relaxed));
}

#[test]
fn seqlock() {
    passes(seqlock::check(true));
    let rep = fails(seqlock::check(false), FailureKind::Panic);
    assert!(rep.failure.message.contains("torn pair"));
    replays_to_same(&rep, |b| seqlock::check_with(b, false));
}

#[test]
fn spinlock() {
    passes(spinlock::check(Ordering::Acquire));
    let rep = fails(spinlock::check(Ordering::Relaxed), FailureKind::DataRace);
    replays_to_same(&rep, |b| spinlock::check_with(b, Ordering::Relaxed));
}
