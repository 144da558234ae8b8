//! The live memory (C11Tester's operational model) on every bundled and
//! conformance litmus test: the states its random executions find are always
//! among the exhaustive ones, and with enough iterations they are all of
//! them, except where SeqCst order matters (the live memory orders SeqCst
//! operations as they execute, C11Tester's fragment): those tests are listed
//! and counted, not failed.

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
fn live_states_are_exhaustive_states() {
    let mut outside = Vec::new();
    let mut incomplete = Vec::new();
    let mut incomplete_sc = Vec::new();
    let mut compared = 0;
    for f in files() {
        let Ok(test) = load(&f) else { continue };
        let src = std::fs::read_to_string(&f).unwrap_or_default();
        let all = run_test(&test, &RunOptions::default());
        let sample = |iterations| {
            run_test(
                &test,
                &RunOptions {
                    random: Some((iterations, 7)),
                    live: true,
                    ..Default::default()
                },
            )
        };
        let mut live = sample(400);
        if live.states.len() != all.states.len() {
            live = sample(20_000);
        }
        compared += 1;
        for s in live.states.keys() {
            if !all.states.contains_key(s) {
                outside.push(format!("{}: {:?}", f.display(), s));
            }
        }
        if live.states.len() != all.states.len() {
            let line = format!(
                "{}: {} of {} states",
                f.display(),
                live.states.len(),
                all.states.len()
            );
            // SeqCst operations (explicit, or C11's default order).
            let sc = src.contains("seq_cst")
                || src.contains("atomic_load(")
                || src.contains("atomic_store(")
                || src.contains("atomic_fetch_add(")
                || src.contains("atomic_exchange(")
                || src.contains("atomic_compare_exchange_strong(");
            if sc {
                incomplete_sc.push(line);
            } else {
                incomplete.push(line);
            }
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
        "20,000 live executions missed states of tests without SeqCst:\n{}",
        incomplete.join("\n")
    );
    eprintln!(
        "live memory: {compared} tests; {} with SeqCst miss states (C11Tester's SeqCst fragment):\n{}",
        incomplete_sc.len(),
        incomplete_sc.join("\n")
    );
}
