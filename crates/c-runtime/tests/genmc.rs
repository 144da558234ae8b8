//! GenMC's own test programs (`../shared/genmc-tests`), compiled with the
//! system's C compiler and run on the runtime: every `correct` program
//! passes, with GenMC's execution count under RC11 where it has no loops;
//! every `wrong` one reports its bug. Prints a table; `C11CHECK_GENMC_ONLY`
//! narrows it to names containing a string, `C11CHECK_TEST_CC` picks the
//! compiler.

mod common;

use common::{assert_none_wrong, genmc_tests, run_suite, Case, Outcome};

/// Where c11check and GenMC differ on purpose, with the reason; a case
/// matching a name here is shown with its reason instead of failing.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "data-structures/qspinlock/",
        "its barrier() is atomic_signal_fence: GenMC treats a signal fence as a thread fence, C11 (and c11check) orders nothing between threads with it, so the lock's handover is a data race under RC11 (with signal fences as thread fences c11check finds no bug and 10 executions)",
    ),
    (
        "litmus/WWmerge1/",
        "compiled with -O0 c11check explores 17 executions (GenMC's count with every modification order told apart), with -O1 18 (GenMC's wb count)",
    ),
];

#[test]
fn genmc_correct_tests_pass_with_genmc_execution_counts() {
    let root = genmc_tests();
    let mut cases = Vec::new();
    for category in ["litmus", "synthetic", "data-structures"] {
        cases.extend(Case::correct(&root, category));
    }
    let results = run_suite(&root, cases);
    let mut bad = Vec::new();
    let mut unfinished = Vec::new();
    for r in &results {
        if let Some((_, why)) = KNOWN_DIFFERENCES
            .iter()
            .find(|(n, _)| r.case.name.contains(n))
        {
            println!("known difference, {}: {why}", r.case.name);
            continue;
        }
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
            // Too large for the time limit (`C11CHECK_GENMC_TIMEOUT`, 60 s):
            // listed, not failed.
            Outcome::Timeout => unfinished.push(r.case.name.clone()),
            other => bad.push(format!("{}: {other:?}", r.case.name)),
        }
    }
    println!(
        "{} cases, {} not finished in the time limit: {}",
        results.len(),
        unfinished.len(),
        unfinished.join(", ")
    );
    assert_none_wrong(&bad, results.len());
}

/// The c11check report title for GenMC's error line.
fn expected_title(genmc_error: &str) -> &'static str {
    if genmc_error.contains("race") {
        "data race"
    } else {
        // "Safety violation!": a failed assertion.
        "panic"
    }
}

#[test]
fn genmc_wrong_tests_report_the_expected_bug() {
    let root = genmc_tests();
    let mut cases = Vec::new();
    for category in ["safety", "racy"] {
        cases.extend(Case::wrong(&root, category));
    }
    let results = run_suite(&root, cases);
    let mut bad = Vec::new();
    for r in &results {
        let want = expected_title(r.case.expected_error.as_deref().unwrap_or(""));
        match &r.outcome {
            Outcome::Bug { title, .. } if title.contains(want) => {}
            other => bad.push(format!("{}: expected a {want}, got {other:?}", r.case.name)),
        }
    }
    assert_none_wrong(&bad, results.len());
}
