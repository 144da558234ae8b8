//! GenMC's own test programs (`../shared/genmc-tests`), compiled with the
//! system's C compiler and run on the runtime: every `correct` program
//! passes, with GenMC's execution count under RC11 where it has no loops;
//! every `wrong` one reports its bug. Prints a table; `C11CHECK_GENMC_ONLY`
//! narrows it to names containing a string, `C11CHECK_TEST_CC` picks the
//! compiler.

mod common;

use common::{genmc_tests, run_suite, Case, Outcome};

#[test]
fn genmc_correct_tests_pass_with_genmc_execution_counts() {
    let root = genmc_tests();
    let mut cases = Vec::new();
    for category in ["litmus", "synthetic", "data-structures"] {
        cases.extend(Case::correct(&root, category));
    }
    let results = run_suite(&root, cases);
    let mut bad = Vec::new();
    for r in &results {
        match &r.outcome {
            Outcome::Pass { executions, loops } => {
                if let Some(e) = r.case.expected {
                    if *executions != e && !r.case.loops && !loops {
                        bad.push(format!(
                            "{}: {executions} executions, GenMC {e}",
                            r.case.name
                        ));
                    }
                }
            }
            other => bad.push(format!("{}: {other:?}", r.case.name)),
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} cases wrong:\n  {}",
        bad.len(),
        results.len(),
        bad.join("\n  ")
    );
}
