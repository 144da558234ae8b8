//! RSAN's benchmarks (`c11check_bench::rsan`): the robust versions pass a
//! robustness check, the others are reported, each with the cycle.

use c11check::model::{Builder, FailureKind};

#[test]
fn rsan_benchmarks_have_their_verdicts() {
    let mut wrong = Vec::new();
    for p in c11check_bench::rsan::programs() {
        // Verdicts only (the repairs are tested in c11check's tests).
        let mut b = Builder::new().robustness();
        b.repair = false;
        let result = b.explore(p.run);
        let ok = match (&result, p.robust) {
            (Ok(_), true) => true,
            (Err(r), false) => r.failure.kind == FailureKind::NotRobust,
            _ => false,
        };
        if !ok {
            wrong.push(format!(
                "{} (robust: {}): {}",
                p.name,
                p.robust,
                match &result {
                    Ok(s) => format!("passed, {} executions", s.stats.executions),
                    Err(r) => r.to_string(),
                }
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
