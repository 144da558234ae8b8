//! Misuse and budgets: each becomes a clear message or a cut summary, never
//! a hang or a silent pass.

use c11check::model::{Builder, FailureKind};
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::sync::Arc;
use c11check::thread;
use std::time::Duration;

#[test]
fn a_model_inside_a_model_is_refused() {
    let r = Builder::new()
        .explore(|| {
            c11check::model(|| {});
        })
        .expect_err("a nested model is an error");
    assert_eq!(r.failure.kind, FailureKind::Panic, "{r}");
    assert!(
        r.failure
            .message
            .contains("`c11check::model` was called inside a model"),
        "{r}"
    );
}

#[test]
fn a_std_thread_inside_a_model_is_told_what_to_use() {
    Builder::new()
        .explore(|| {
            let a = AtomicUsize::new(0);
            let err = std::thread::scope(|s| s.spawn(|| a.load(Ordering::Relaxed)).join())
                .expect_err("the std thread cannot use a c11check type");
            let msg = err
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            assert!(msg.contains("`std::thread::spawn`"), "{msg}");
            assert!(msg.contains("`c11check::thread::spawn`"), "{msg}");
        })
        .unwrap_or_else(|r| panic!("{r}"));
}

#[test]
fn outside_a_model_the_message_says_to_wrap_the_test() {
    let err = std::panic::catch_unwind(|| AtomicUsize::new(0).load(Ordering::Relaxed))
        .expect_err("no model runs");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    // Another test of this binary may run a model meanwhile: either message
    // names the fix.
    assert!(
        msg.contains("c11check::model(|| { ... })") || msg.contains("`std::thread::spawn`"),
        "{msg}"
    );
}

/// Many threads racing on one counter: the first execution alone (with the
/// revisits its writes prepare) takes seconds, far over this budget, which
/// must stop the run inside it.
#[test]
fn a_time_budget_stops_inside_a_long_execution() {
    let summary = Builder::new()
        .max_duration(Duration::from_millis(100))
        .explore(|| {
            let c = Arc::new(AtomicUsize::new(0));
            let handles: Vec<_> = (0..80)
                .map(|_| {
                    let c = c.clone();
                    thread::spawn(move || {
                        c.fetch_add(1, Ordering::Relaxed);
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        })
        .unwrap_or_else(|r| panic!("{r}"));
    assert!(summary.stats.cut);
    assert_eq!(summary.stats.executions, 0);
}
