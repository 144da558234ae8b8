//! The hardware restrictions of C++20 (`mca`, `tso`) only remove
//! executions: on every test of both suites, the final states the
//! brute-force engine finds under `tso` are among those under `mca`, and
//! those among the ones under `cpp20`, and the explorer finds the same
//! states as the brute-force engine; and the tests written for them
//! (`litmus/MCA+*`) say, per model, which outcome each hardware keeps.

mod common;

use c11check_axiomatic::AxModel;
use c11check_litmus::expect::own_expectation;
use c11check_litmus::load;
use c11check_litmus::run::{run_test, run_test_brute, RunOptions};
use c11check_model::Model;
use std::collections::BTreeSet;

/// The final states the explorer finds under `model`.
fn explored_states(test: &c11check_litmus::LitmusTest, model: Model) -> BTreeSet<Vec<i64>> {
    let opts = RunOptions {
        model,
        ..Default::default()
    };
    run_test(test, &opts)
        .states
        .keys()
        .map(|v| v.to_vec())
        .collect()
}

fn states(test: &c11check_litmus::LitmusTest, ax: AxModel) -> Option<BTreeSet<Vec<i64>>> {
    let r = run_test_brute(test, ax, 3).ok()?;
    Some(r.states.keys().map(|v| v.to_vec()).collect())
}

#[test]
fn tso_within_mca_within_cpp20_on_every_suite_test() {
    let mut files = common::litmus_files(&common::conformance_dir().join("dat3m-c11/litmus"));
    files.extend(common::litmus_files(
        &common::workspace_root().join("litmus"),
    ));
    let (mut compared, mut narrower, mut failures) = (0, 0, Vec::new());
    for f in &files {
        let Ok(test) = load(f) else { continue };
        // Loops multiply the candidates the brute-force engine tries.
        if common::has_loop(&test) {
            continue;
        }
        let Some(cpp20) = states(&test, AxModel::Cpp20) else {
            continue;
        };
        let (Some(mca), Some(tso)) = (states(&test, AxModel::Mca), states(&test, AxModel::Tso))
        else {
            failures.push(format!(
                "{}: mca or tso gave up where cpp20 did not",
                f.display()
            ));
            continue;
        };
        compared += 1;
        narrower += (mca.len() < cpp20.len()) as u32;
        if !mca.is_subset(&cpp20) {
            failures.push(format!(
                "{}: mca has states cpp20 does not: {:?}",
                f.display(),
                mca.difference(&cpp20).collect::<Vec<_>>()
            ));
        }
        if !tso.is_subset(&mca) {
            failures.push(format!(
                "{}: tso has states mca does not: {:?}",
                f.display(),
                tso.difference(&mca).collect::<Vec<_>>()
            ));
        }
        if tso.is_empty() {
            failures.push(format!("{}: no execution under tso", f.display()));
        }
        for (model, brute) in [(Model::Mca, &mca), (Model::Tso, &tso)] {
            let explored = explored_states(&test, model);
            if &explored != brute {
                failures.push(format!(
                    "{}: under {model} the explorer finds {:?}, the brute-force engine {:?}",
                    f.display(),
                    explored,
                    brute
                ));
            }
        }
    }
    eprintln!("{compared} tests compared; mca narrower than cpp20 on {narrower}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared >= 150, "only {compared} tests compared");
}

/// Each test's `@observation.mca` / `@observation.tso` line (and the plain
/// one, for `cpp20`) is what the brute-force engine and the explorer find
/// under that model.
#[test]
fn hardware_tests_have_their_expected_outcomes() {
    let dir = common::workspace_root().join("litmus");
    let mut checked = 0;
    let mut failures = Vec::new();
    for f in common::litmus_files(&dir) {
        let src = std::fs::read_to_string(&f).unwrap();
        if !src.contains("@observation.mca") {
            continue;
        }
        let test = load(&f).unwrap_or_else(|e| panic!("{e}"));
        for (ax, name) in [
            (AxModel::Cpp20, "cpp20"),
            (AxModel::Mca, "mca"),
            (AxModel::Tso, "tso"),
        ] {
            let report = run_test_brute(&test, ax, 3).unwrap();
            let m = own_expectation(&src, name).mismatches(&report);
            checked += 1;
            if !m.is_empty() {
                failures.push(format!("{} under {name}: {}", f.display(), m.join("; ")));
            }
            let opts = RunOptions {
                model: Model::from_name(name).unwrap(),
                ..Default::default()
            };
            let m = own_expectation(&src, name).mismatches(&run_test(&test, &opts));
            checked += 1;
            if !m.is_empty() {
                failures.push(format!(
                    "{} under {name} (explorer): {}",
                    f.display(),
                    m.join("; ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 66, "only {checked} checks");
}

/// Random runs on the live memory never show a state outside the model
/// (x86-TSO's store buffers under `tso`, ARMv8's view machine under `mca`),
/// nor do random runs as graphs under `mca`; on the tests written for the
/// hardware models enough runs show every state `tso` allows (ARMv8's
/// machine reorders no write, so under `mca` it is not complete).
#[test]
fn random_runs_stay_within_the_hardware_models() {
    let mut files = common::litmus_files(&common::conformance_dir().join("dat3m-c11/litmus"));
    let own = common::litmus_files(&common::workspace_root().join("litmus"));
    files.extend(own.iter().cloned());
    let (mut compared, mut failures) = (0, Vec::new());
    for f in &files {
        let Ok(test) = load(f) else { continue };
        if common::has_loop(&test) {
            continue;
        }
        let hardware_test = f
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("MCA+"));
        let runs = [(Model::Tso, true), (Model::Mca, true), (Model::Mca, false)];
        for (model, live) in runs {
            let ax = AxModel::from(model);
            let Some(brute) = states(&test, ax) else {
                continue;
            };
            let iterations = match (hardware_test, live) {
                (true, _) => 3000,
                (false, true) => 200,
                (false, false) => 30,
            };
            let opts = RunOptions {
                model,
                random: Some((iterations, 7)),
                live,
                ..Default::default()
            };
            let found: BTreeSet<Vec<i64>> = run_test(&test, &opts)
                .states
                .keys()
                .map(|v| v.to_vec())
                .collect();
            compared += 1;
            if !found.is_subset(&brute) {
                failures.push(format!(
                    "{}: random runs under {model} (live: {live}) show {:?}, outside {:?}",
                    f.display(),
                    found.difference(&brute).collect::<Vec<_>>(),
                    brute
                ));
            }
            if hardware_test && model == Model::Tso && found != brute {
                failures.push(format!(
                    "{}: {iterations} random runs under {model} show {:?} of {:?}",
                    f.display(),
                    found,
                    brute
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared >= 450, "only {compared} runs compared");
}

/// The mismatches of every test under `dir` with its `@` lines under each
/// of `models` (explorer, `loop_bound`), and how many runs were checked.
fn expectation_mismatches(
    dir: &std::path::Path,
    models: &[Model],
    loop_bound: u32,
) -> (Vec<String>, usize) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in common::litmus_files(dir) {
        let src = std::fs::read_to_string(&f).unwrap();
        let test = load(&f).unwrap_or_else(|e| panic!("{e}"));
        for &model in models {
            let opts = RunOptions {
                model,
                loop_bound,
                ..Default::default()
            };
            let m = own_expectation(&src, model.name()).mismatches(&run_test(&test, &opts));
            checked += 1;
            if !m.is_empty() {
                failures.push(format!("{} under {model}: {}", f.display(), m.join("; ")));
            }
        }
    }
    (failures, checked)
}

/// The programs named after MoCA's benchmarks (`benchmarks/moca/`) show
/// their bug exactly under the models their `@` lines say.
#[test]
fn moca_programs_meet_their_expectations() {
    let dir = common::workspace_root().join("benchmarks/moca");
    let (failures, checked) =
        expectation_mismatches(&dir, &[Model::Cpp20, Model::Mca, Model::Tso], 20);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, 60, "20 programs, 3 models");
}

/// Every test of the bundled suite meets its expectations under `mca` and
/// `tso` (the `@observation.mca`/`.tso` lines where the hardware removes
/// an outcome, derived by hand; the plain lines where it does not).
#[test]
fn the_bundled_suite_meets_its_expectations_under_mca_and_tso() {
    let dir = common::workspace_root().join("litmus");
    let (failures, checked) = expectation_mismatches(&dir, &[Model::Mca, Model::Tso], 3);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 230, "only {checked} checks");
}
