//! The explorer against the independent brute-force checker: on every test of
//! both suites, the set of executions (reads-from plus observed mo-last writes)
//! must be exactly the brute-force set, with no execution visited twice, and
//! every visited execution must pass the axioms directly.

mod common;

use c11check_axiomatic::{enumerate, graph_consistent, graph_key, AxModel};
use c11check_litmus::interp::LitmusProgram;
use c11check_litmus::states::{observed_locs, state_keys};
use c11check_litmus::{load, run_test_with, RunOptions};
use c11check_model::{Loc, Model};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn files() -> Vec<PathBuf> {
    let mut v = common::litmus_files(&common::conformance_dir().join("dat3m-c11/litmus"));
    v.extend(common::litmus_files(
        &common::workspace_root().join("litmus"),
    ));
    v
}

fn crosscheck(model: Model, ax: AxModel) {
    let mut failures = Vec::new();
    let mut compared = 0;
    for f in files() {
        let Ok(test) = load(&f) else { continue };
        let opts = RunOptions {
            model,
            ..Default::default()
        };
        let mut keys = Vec::new();
        let mut complete = BTreeSet::new();
        let mut bad = Vec::new();
        let report = run_test_with(&test, &opts, &mut |ex, _| {
            keys.push(graph_key(ex.graph, ex.finals));
            // The brute-force engine enumerates complete executions; blocked
            // ones (a thread waiting for a lock) are checked one by one.
            if ex.ending == c11check_explore::Ending::Complete {
                complete.insert(graph_key(ex.graph, ex.finals));
            }
            let v = graph_consistent(ex.graph, ex.finals, ax);
            match v {
                None => bad.push("an explored execution violates the axioms".to_string()),
                Some(v) if v.race == ex.analysis.races().is_empty() => {
                    bad.push("race verdicts differ on an execution".to_string())
                }
                _ => {}
            }
        });
        let set: BTreeSet<_> = keys.iter().cloned().collect();
        // Where reference-count updates are explored in every order (the sc
        // model, or a file that can observe their order), executions that
        // differ only in that order share a key.
        let exact_refcounts = opts.model == Model::Sc || test.refcount_order_observable;
        let has_refcounts =
            std::fs::read_to_string(&f).is_ok_and(|s| s.contains("atomic_refcount_"));
        if set.len() != keys.len() && !(has_refcounts && exact_refcounts) {
            bad.push(format!(
                "{} executions visited twice",
                keys.len() - set.len()
            ));
        }
        let observed: Vec<Loc> = observed_locs(&test, &state_keys(&test));
        let program = LitmusProgram {
            test: &test,
            loop_bound: opts.loop_bound,
        };
        if common::has_loop(&test) {
            // Partial executions of bounded loops are too many for the brute-force
            // enumeration; each explored execution was still checked above.
            if !bad.is_empty() {
                failures.push(format!("{}: {}", f.display(), bad.join("; ")));
            }
            continue;
        }
        match enumerate(&program, ax, &observed, 2_000_000) {
            Ok(e) => {
                compared += 1;
                if e.executions != complete {
                    let missing = e.executions.difference(&complete).count();
                    let extra = complete.difference(&e.executions).count();
                    bad.push(format!(
                        "explorer misses {missing} and adds {extra} executions (brute force: {})",
                        e.executions.len()
                    ));
                }
                if e.race != report.race {
                    bad.push(format!(
                        "race flag {} vs brute force {}",
                        report.race, e.race
                    ));
                }
            }
            Err(err) => bad.push(format!("brute force failed: {err:?}")),
        }
        if !bad.is_empty() {
            failures.push(format!("{}: {}", f.display(), bad.join("; ")));
        }
    }
    assert!(compared > 100, "only {compared} tests compared");
    assert!(
        failures.is_empty(),
        "{} tests disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn explorer_matches_brute_force_rc11() {
    crosscheck(Model::Rc11, AxModel::Rc11);
}

#[test]
fn explorer_matches_brute_force_cpp20() {
    crosscheck(Model::Cpp20, AxModel::Cpp20);
}

#[test]
fn explorer_matches_brute_force_sc() {
    crosscheck(Model::Sc, AxModel::Sc);
}
