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
            // Too large for the execution budget: listed, not failed.
            Outcome::Budget { .. } => unfinished.push(r.case.name.clone()),
            // Both tools bound the loops (GenMC's `-unroll`), differently.
            Outcome::AllCut if r.case.loops => {}
            other => bad.push(format!("{}: {other:?}", r.case.name)),
        }
    }
    println!(
        "{} cases, {} not finished within the execution budget ({}): {}",
        results.len(),
        unfinished.len(),
        common::genmc_budget(),
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

/// Where c11check's preemption count and GenMC's context bound differ on
/// purpose.
const BOUND_DIFFERENCES: &[(&str, &str)] = &[
    (
        "synthetic/barrier",
        "a thread waiting at a barrier is at a wait point for c11check, where a switch is free; GenMC's counts need 5 switches or more before any execution of these programs",
    ),
];

/// The largest full count (GenMC's) of a configuration whose bounded
/// counts are compared.
const MAX_BOUNDED_COUNT: u64 = 2_000;

/// Preemption-bounded exploration against GenMC's context-bounded counts
/// (`expected.cb.in`, SC): for every program and configuration whose full
/// count c11check and GenMC agree on, the count within each bound 0, 1, ...
/// is GenMC's. (The full counts differ where GenMC tells apart executions
/// that differ only in modification order or bounds loops with `-unroll`;
/// those are listed, not compared.) Two programs at a time.
#[test]
fn preemption_bounded_counts_are_genmcs_context_bounded_counts() {
    // CI runs this file again with clang for some categories (the filter):
    // the bound does not depend on the compiler, and one run of this test
    // takes minutes.
    if std::env::var_os("C11CHECK_GENMC_ONLY").is_some() {
        println!("C11CHECK_GENMC_ONLY is set: the context-bounded counts are compared in the unfiltered run");
        return;
    }
    let root = genmc_tests();
    let mut cases = Vec::new();
    let mut large = Vec::new();
    for category in ["litmus", "synthetic"] {
        for (case, genmc) in Case::context_bounded(&root, category) {
            // Each configuration runs once per bound: those whose full
            // count is large are listed, not run (a choice by the expected
            // counts, not by the machine's speed). With the limit at
            // 100,000, 177 configurations (346 bounds) compare equal, in
            // 13 minutes on 2 cores (2026-11-29).
            if genmc.last().is_some_and(|&n| n > MAX_BOUNDED_COUNT) {
                large.push(format!("{} ({genmc:?})", case.name));
            } else {
                cases.push((case, genmc));
            }
        }
    }
    println!(
        "not run: {} configurations with more than {MAX_BOUNDED_COUNT} executions: {}",
        large.len(),
        large.join(", ")
    );
    let dir = std::env::temp_dir().join(format!("c11check-cb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((case, genmc)) = cases.get(i) else {
                    break;
                };
                let verdict = bounded_counts(case, &dir.join(format!("case{i}")), genmc.len());
                results.lock().unwrap().push((i, verdict));
            });
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    let (mut compared, mut bounds, mut skipped, mut bad) = (0, 0, Vec::new(), Vec::new());
    for (i, verdict) in results {
        let (case, genmc) = &cases[i];
        let ours = match verdict {
            Ok(ours) => ours,
            Err(why) => {
                skipped.push(format!("{}: {why}", case.name));
                continue;
            }
        };
        if let Some((_, why)) = BOUND_DIFFERENCES
            .iter()
            .find(|(n, _)| case.name.contains(n))
        {
            skipped.push(format!(
                "{} (c11check {ours:?}, GenMC {genmc:?}): {why}",
                case.name
            ));
            continue;
        }
        if ours.last() != genmc.last() || case.loops {
            skipped.push(format!(
                "{}: full counts differ (c11check {ours:?}, GenMC {genmc:?})",
                case.name
            ));
            continue;
        }
        compared += 1;
        bounds += genmc.len();
        if &ours != genmc {
            bad.push(format!("{}: c11check {ours:?}, GenMC {genmc:?}", case.name));
        }
    }
    for s in &skipped {
        println!("not compared: {s}");
    }
    println!(
        "{compared} configurations compared ({bounds} bounds), {} not compared",
        skipped.len()
    );
    assert_none_wrong(&bad, compared);
    // The comparison must not pass by comparing nothing.
    assert!(
        compared >= 150,
        "only {compared} configurations compared:\n{}",
        skipped.join("\n")
    );
}

/// `case`'s execution counts under SC within the preemption bounds
/// `0..bounds`, built into `exe`; or why there are none.
fn bounded_counts(case: &Case, exe: &std::path::Path, bounds: usize) -> Result<Vec<u64>, String> {
    common::build_case(case, exe).map_err(|e| format!("does not compile here ({e})"))?;
    let races = if case.genmc_flags.contains("-disable-race-detection") {
        "0"
    } else {
        "1"
    };
    let timeout = common::hang_guard();
    // Within the same execution budget as the suite: which programs are
    // compared does not depend on the machine's speed.
    let budget = common::genmc_budget();
    (0..bounds)
        .map(|k| {
            let k = k.to_string();
            let env = [
                ("C11CHECK_MODEL", "sc"),
                ("C11CHECK_PREEMPTIONS", k.as_str()),
                ("C11CHECK_RACES", races),
                ("C11CHECK_MAX_EXECUTIONS", budget.as_str()),
            ];
            match common::run_program(exe, &env, timeout) {
                Outcome::Pass { executions, .. } => Ok(executions),
                other => Err(format!("bound {k}: {other:?}")),
            }
        })
        .collect()
}
