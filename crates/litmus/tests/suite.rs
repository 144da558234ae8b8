//! The bundled suite (litmus/): every test states what it must show under each
//! model in `@` lines; all must hold, for cpp20, rc11 and sc.

mod common;

use c11check_litmus::expect::own_expectation;
use c11check_litmus::robust::check_robustness;
use c11check_litmus::{load, run_test, RunOptions};
use c11check_model::Model;

fn suite(model: Model) {
    let dir = common::workspace_root().join("litmus");
    let files = common::litmus_files(&dir);
    assert!(
        files.len() >= 60,
        "the bundled suite has only {} tests",
        files.len()
    );
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let test = load(f).unwrap_or_else(|e| panic!("{e}"));
        let report = run_test(
            &test,
            &RunOptions {
                model,
                ..Default::default()
            },
        );
        // Straight-line code explores no blocked execution; a lock wait is an
        // execution blocked on purpose (the one reading the release is
        // explored), and a wait loop one that waited to its bound.
        let waits = src.contains("while (");
        if !src.contains("spin_lock(") && !waits {
            assert_eq!(
                report.stats.blocked,
                0,
                "{}: blocked executions on straight-line code",
                f.display()
            );
        }
        if !waits {
            assert_eq!(report.stats.bound_hits, 0, "{}", f.display());
        }
        if model == Model::Sc {
            // Under SC only the executions of interleavings exist: the weak
            // outcomes the tests look for never appear.
            if report.positive > 0 && src.contains("@observation Never") {
                failures.push(format!(
                    "{}: SC reaches an outcome the weaker models forbid",
                    f.display()
                ));
            }
            continue;
        }
        let e = own_expectation(&src, model.name());
        assert!(
            e.observation.is_some() && e.race.is_some(),
            "{}: no @observation/@race lines",
            f.display()
        );
        let m = e.mismatches(&report);
        if !m.is_empty() {
            failures.push(format!("{}: {}", f.display(), m.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bundled_suite_cpp20() {
    suite(Model::Cpp20);
}

#[test]
fn bundled_suite_rc11() {
    suite(Model::Rc11);
}

#[test]
fn bundled_suite_sc_never_weaker() {
    suite(Model::Sc);
}

/// Every test's `@robust` line (per model; under SC every test is robust)
/// holds for the robustness check.
fn robustness_suite(model: Model) {
    let dir = common::workspace_root().join("litmus");
    let mut failures = Vec::new();
    let mut verdicts = std::collections::BTreeMap::new();
    for f in &common::litmus_files(&dir) {
        let src = std::fs::read_to_string(f).unwrap();
        let test = load(f).unwrap_or_else(|e| panic!("{e}"));
        let e = own_expectation(&src, model.name());
        assert!(e.robust.is_some(), "{}: no @robust line", f.display());
        let report = check_robustness(
            &test,
            &RunOptions {
                model,
                ..Default::default()
            },
        );
        *verdicts.entry(report.verdict.name()).or_insert(0) += 1;
        if let Some(m) = e.robust_mismatch(&report) {
            failures.push(format!("{}: {m}\n{}", f.display(), report.text()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if model != Model::Sc {
        // The suite has robust tests, observable violations and one a
        // final state does not show.
        for v in ["yes", "no", "unobservable"] {
            assert!(
                verdicts.contains_key(v),
                "no test is robust={v}: {verdicts:?}"
            );
        }
    }
}

#[test]
fn robustness_cpp20() {
    robustness_suite(Model::Cpp20);
}

#[test]
fn robustness_rc11() {
    robustness_suite(Model::Rc11);
}

#[test]
fn robustness_sc() {
    robustness_suite(Model::Sc);
}

/// The SB and IRIW families must be weaker than SC exactly where expected: under
/// SC, SB+rlx's weak outcome disappears.
#[test]
fn sc_forbids_store_buffering() {
    let dir = common::workspace_root().join("litmus");
    let t = load(&dir.join("SB+rlx.litmus")).unwrap();
    let sc = run_test(
        &t,
        &RunOptions {
            model: Model::Sc,
            ..Default::default()
        },
    );
    let weak = run_test(
        &t,
        &RunOptions {
            model: Model::Cpp20,
            ..Default::default()
        },
    );
    assert_eq!(sc.positive, 0);
    assert!(weak.positive > 0);
    assert_eq!(sc.states.len(), 3);
    assert_eq!(weak.states.len(), 4);
}

/// Every test of the suite that is not robust gets a repair that makes it
/// robust, from which no edit can be dropped; the classic ones get the
/// classic fixes.
#[test]
fn repairs_make_tests_robust_and_drop_nothing_needed() {
    use c11check_litmus::repair::{apply, repair, Edit, Repair};
    use c11check_litmus::robust::Verdict;
    let dir = common::workspace_root().join("litmus");
    let opts = RunOptions::default();
    let mut repaired = 0;
    for f in &common::litmus_files(&dir) {
        let test = load(f).unwrap_or_else(|e| panic!("{e}"));
        let r = check_robustness(&test, &opts);
        let Some(w) = r.witness.as_ref() else {
            continue;
        };
        let Repair::Found(edits) = repair(&test, &opts, &w.nodes) else {
            panic!("{}: no repair found", f.display());
        };
        let fixed = apply(&test, &edits).unwrap();
        assert_eq!(
            check_robustness(&fixed, &opts).verdict,
            Verdict::Robust,
            "{}: {edits:?}",
            f.display()
        );
        for i in 0..edits.len() {
            let mut fewer = edits.clone();
            fewer.remove(i);
            let t = apply(&test, &fewer).unwrap();
            assert_ne!(
                check_robustness(&t, &opts).verdict,
                Verdict::Robust,
                "{}: {:?} is enough without {:?}",
                f.display(),
                fewer,
                edits[i]
            );
        }
        let name = test.name.as_str();
        if name == "SB+rlx" {
            // A seq_cst fence between each thread's store and load.
            assert_eq!(edits.len(), 2, "{edits:?}");
            assert!(
                edits.iter().all(|e| matches!(e, Edit::FenceBefore { .. })),
                "{edits:?}"
            );
        }
        if name == "MP+rlx+rlx" {
            // Release the flag, acquire it.
            assert_eq!(edits.len(), 2, "{edits:?}");
            assert!(
                edits.iter().all(|e| matches!(e, Edit::Order { ord, .. }
                    if matches!(ord, c11check_model::MemOrder::Acquire | c11check_model::MemOrder::Release))),
                "{edits:?}"
            );
        }
        repaired += 1;
    }
    assert!(repaired >= 20, "only {repaired} tests repaired");
}

/// The two ways of deciding robustness agree on every test of the suite:
/// every execution the model allows checked with every modification order,
/// and SC executions alone with one weak step (`robust_by_sc_runs`).
#[test]
fn robustness_from_sc_runs_agrees_on_the_suite() {
    use c11check_litmus::robust::robust_by_sc_runs;
    let dir = common::workspace_root().join("litmus");
    let mut failures = Vec::new();
    for model in [Model::Cpp20, Model::Rc11] {
        let opts = RunOptions {
            model,
            ..Default::default()
        };
        for f in &common::litmus_files(&dir) {
            let test = load(f).unwrap_or_else(|e| panic!("{e}"));
            let a = check_robustness(&test, &opts).robust();
            let b = robust_by_sc_runs(&test, &opts);
            if a != b {
                failures.push(format!("{} under {model}: {a:?} vs {b:?}", f.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Location clocks on every SC interleaving (the dynamic check, run
/// exhaustively) agree with the explorer-based check on every test of the
/// suite, under C++20: SeqCst accesses and fences (psc) included.
#[test]
fn robustness_by_location_clocks_agrees_on_the_suite() {
    use c11check_litmus::dynamic::robust_by_location_clocks;
    let dir = common::workspace_root().join("litmus");
    let opts = RunOptions::default();
    let (mut failures, mut checked, mut robust, mut seq_cst) = (Vec::new(), 0, 0, 0);
    for f in &common::litmus_files(&dir) {
        let test = load(f).unwrap_or_else(|e| panic!("{e}"));
        let found = robust_by_location_clocks(&test, opts.loop_bound);
        checked += 1;
        seq_cst += std::fs::read_to_string(f)
            .unwrap()
            .replace("atomic_thread_fence(memory_order_seq_cst)", "")
            .contains("memory_order_seq_cst") as u32;
        let a = check_robustness(&test, &opts).robust();
        let b = found.is_none();
        robust += b as u32;
        if a != Some(b) {
            failures.push(format!(
                "{}: explorer {a:?}, clocks {b} ({found:?})",
                f.display()
            ));
        }
    }
    eprintln!("{checked} tests checked, {robust} robust, {seq_cst} with SeqCst accesses");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        checked >= 100 && robust >= 10 && seq_cst >= 15,
        "{checked} checked, {robust} robust"
    );
}

#[test]
fn parallel_runs_equal_the_sequential_run() {
    // Every test of the bundled suite and of the conformance suite, under
    // each model, on 2 to 4 workers: the same executions (by count, also
    // blocked ones), the same final states with the same multiplicities,
    // the same race. Workers give branches away only while another is
    // idle, so 4 workers on this 2-core machine hand work back and forth
    // more than 2 do.
    let dirs = [
        common::workspace_root().join("litmus"),
        common::conformance_dir(),
    ];
    let mut compared = 0;
    for dir in dirs {
        for f in common::litmus_files(&dir) {
            let Ok(test) = load(&f) else { continue };
            for model in [Model::Cpp20, Model::Rc11, Model::Sc] {
                let opts = RunOptions {
                    model,
                    ..Default::default()
                };
                let one = run_test(&test, &opts);
                for jobs in 2..=4 {
                    let many = run_test(
                        &test,
                        &RunOptions {
                            jobs,
                            ..opts.clone()
                        },
                    );
                    let what = format!("{} under {model:?} on {jobs} workers", f.display());
                    assert_eq!(
                        (many.stats.executions, many.stats.blocked),
                        (one.stats.executions, one.stats.blocked),
                        "{what}"
                    );
                    assert_eq!(many.states, one.states, "{what}");
                    assert_eq!(many.race_between, one.race_between, "{what}");
                    // The progress estimate's weights add up to the whole
                    // tree, however the workers shared it.
                    assert_eq!(many.stats.done, 1 << 63, "{what}");
                }
                assert_eq!(one.stats.done, 1 << 63, "{}", f.display());
                compared += 1;
            }
        }
    }
    assert!(compared > 600, "only {compared} runs compared");
    // Programs big enough that every worker gets branches given away: 3 x 4
    // fetch_adds (34,650 orders of the RMW chain), and a message-passing
    // ring with races on plain data.
    let rmw = |n: usize, k: usize| {
        let mut s = String::from("C rmw\n{ [x] = 0; }\n");
        for t in 0..n {
            s += &format!("P{t} (atomic_int* x) {{\n");
            for i in 0..k {
                s += &format!(
                    "  int r{i} = atomic_fetch_add_explicit(x, 1, memory_order_relaxed);\n"
                );
            }
            s += "}\n";
        }
        s + "exists (x=0)\n"
    };
    let ring = "C ring\n{ [x] = 0; [y] = 0; [z] = 0; [d] = 0; }\n\
        P0 (atomic_int* x, atomic_int* y, int* d) {\n  *d = 1;\n  atomic_store_explicit(x, 1, memory_order_relaxed);\n  int r0 = atomic_load_explicit(y, memory_order_relaxed);\n  int r1 = atomic_load_explicit(y, memory_order_relaxed);\n}\n\
        P1 (atomic_int* y, atomic_int* z, int* d) {\n  atomic_store_explicit(y, 1, memory_order_release);\n  int r0 = atomic_load_explicit(z, memory_order_acquire);\n  int r1 = *d;\n}\n\
        P2 (atomic_int* z, atomic_int* x) {\n  atomic_store_explicit(z, 1, memory_order_relaxed);\n  int r0 = atomic_load_explicit(x, memory_order_relaxed);\n  atomic_store_explicit(z, 2, memory_order_release);\n}\n\
        exists (x=1)\n";
    for src in [rmw(3, 4), ring.to_string()] {
        let test = c11check_litmus::parser::parse(&src).unwrap_or_else(|e| panic!("{e:?}"));
        let opts = RunOptions::default();
        let one = run_test(&test, &opts);
        for jobs in [2, 3] {
            let many = run_test(
                &test,
                &RunOptions {
                    jobs,
                    ..opts.clone()
                },
            );
            assert_eq!(many.stats.executions, one.stats.executions, "{src}");
            assert_eq!(many.states, one.states, "{src}");
            assert_eq!(many.race_between, one.race_between, "{src}");
        }
    }
}
