//! The random explorer on every litmus test: the states it finds are always
//! among the exhaustive ones, and with enough iterations (400, or 20,000
//! for tests with a rare state) they are all of them.

mod common;

use c11check_litmus::{load, run_test, RunOptions};
use std::path::PathBuf;

fn files() -> Vec<PathBuf> {
    let mut v = common::litmus_files(&common::workspace_root().join("litmus"));
    v.extend(common::litmus_files(
        &common::conformance_dir().join("dat3m-c11/litmus"),
    ));
    v
}

#[test]
fn random_states_are_exhaustive_states() {
    let mut outside = Vec::new();
    let mut incomplete = Vec::new();
    let mut compared = 0;
    for f in files() {
        let Ok(test) = load(&f) else { continue };
        let all = run_test(&test, &RunOptions::default());
        let sample = |iterations| {
            run_test(
                &test,
                &RunOptions {
                    random: Some((iterations, 7)),
                    ..Default::default()
                },
            )
        };
        // Most tests show every state within 400 executions; rare states
        // (one interleaving among many) get more.
        let mut random = sample(400);
        if random.states.len() != all.states.len() {
            random = sample(20_000);
        }
        compared += 1;
        for s in random.states.keys() {
            if !all.states.contains_key(s) {
                outside.push(format!("{}: {:?}", f.display(), s));
            }
        }
        if random.states.len() != all.states.len() {
            incomplete.push(format!(
                "{}: {} of {} states",
                f.display(),
                random.states.len(),
                all.states.len()
            ));
        }
    }
    assert!(compared > 200, "only {compared} tests");
    assert!(
        outside.is_empty(),
        "states no execution has:\n{}",
        outside.join("\n")
    );
    assert!(
        incomplete.is_empty(),
        "20,000 random executions missed states:\n{}",
        incomplete.join("\n")
    );
}
