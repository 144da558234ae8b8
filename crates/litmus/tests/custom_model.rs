//! A model defined outside the model crate, in this file alone: `pso`, a
//! partial-store-order machine (SPARC PSO's rule on top of x86-TSO's, for
//! programs compiled with x86's mapping): plain stores to different
//! locations may also become visible out of order, not only a plain store
//! before a plain load. It is a `Rules` value and its preserved program
//! order, made a model with `Model::custom`; nothing else changes. (Offering
//! it on the command line is one more line, in `Model::ALL`.) Both
//! checkers take it as it is: the explorer finds the final states the
//! brute-force checker finds on every suite test without loops, `tso`'s
//! are among them and they are among `cpp20`'s, and the tests that tell
//! the machines apart come out as PSO says.

mod common;

use c11check_axiomatic::AxModel;
use c11check_litmus::load;
use c11check_litmus::run::{run_test, run_test_brute, RunOptions};
use c11check_model::models::{accesses_keeping_rmw_order, halves, Half, Rules};
use c11check_model::{Action, Event, MemOrder, Model};
use std::collections::BTreeSet;

static PSO_RULES: Rules = Rules {
    name: "pso",
    aliases: &[],
    all_seq_cst: false,
    rc11_release_sequences: false,
    total_order: false,
    preserved_order: Some(pso_preserved),
    live: None,
};

const PSO: Model = Model::custom(&PSO_RULES);

/// A `lock`-prefixed instruction or `xchg` (x86's mapping): it drains the
/// store buffers.
fn locked(e: &Event) -> bool {
    matches!(e.action, Action::Rmw { .. } | Action::Cas { .. })
        || (e.is_write() && e.ord() == MemOrder::SeqCst)
}

/// What PSO keeps: everything but a buffered (plain) store before a plain
/// load, or before a plain store to another location, unless a locked
/// instruction or an `mfence` lies between them.
fn pso_preserved(events: &[Event], keep: &mut dyn FnMut(Half, Half)) {
    for (j, b) in accesses_keeping_rmw_order(events, keep) {
        let mut drained = false;
        for i in (0..j).rev() {
            let a = &events[i];
            if a.loc().is_none() {
                drained |= a.is_fence() && a.ord() == MemOrder::SeqCst;
                continue;
            }
            for ha in halves(a, i) {
                for hb in halves(b, j) {
                    let buffered = ha.write && !locked(a);
                    let passes = !locked(b) && (!hb.write || a.loc() != b.loc());
                    if !(buffered && passes) || drained {
                        keep(ha, hb);
                    }
                }
            }
            drained |= locked(a);
        }
    }
}

fn explored(test: &c11check_litmus::LitmusTest, model: Model) -> BTreeSet<Vec<i64>> {
    let opts = RunOptions {
        model,
        ..Default::default()
    };
    run_test(test, &opts).states.into_keys().collect()
}

fn brute(test: &c11check_litmus::LitmusTest, model: Model) -> Option<BTreeSet<Vec<i64>>> {
    let r = run_test_brute(test, AxModel::from(model), 3).ok()?;
    Some(r.states.into_keys().collect())
}

#[test]
fn a_model_defined_in_one_file_is_checked_by_both_checkers() {
    assert_eq!(AxModel::from(PSO), AxModel::Custom(PSO));
    assert!(Model::from_name("pso").is_none(), "not listed, not offered");
    let (mut compared, mut failures) = (0, Vec::new());
    for f in common::litmus_files(&common::workspace_root().join("litmus")) {
        let Ok(test) = load(&f) else { continue };
        if common::has_loop(&test) {
            continue;
        }
        let Some(pso) = brute(&test, PSO) else {
            continue;
        };
        let name = f.display();
        if explored(&test, PSO) != pso {
            failures.push(format!(
                "{name}: the explorer's states differ from brute force's"
            ));
        }
        if let (Some(tso), Some(cpp20)) = (brute(&test, Model::Tso), brute(&test, Model::Cpp20)) {
            if !tso.is_subset(&pso) || !pso.is_subset(&cpp20) {
                failures.push(format!("{name}: not tso ⊆ pso ⊆ cpp20"));
            }
        }
        compared += 1;
    }
    assert!(compared >= 100, "only {compared} tests compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The weak outcome of two stores to different locations seen out of
/// order: PSO shows it, TSO does not (and the store-buffering outcome both
/// show).
#[test]
fn pso_lets_stores_to_different_locations_pass_each_other() {
    let root = common::workspace_root().join("litmus");
    let weak = |file: &str, model: Model| {
        let test = load(&root.join(file)).unwrap();
        let opts = RunOptions {
            model,
            ..Default::default()
        };
        run_test(&test, &opts).positive > 0
    };
    for file in ["MCA+2+2W+rlx.litmus", "MP+rlx+rlx.litmus"] {
        assert!(weak(file, PSO), "{file}: pso allows it");
        assert!(!weak(file, Model::Tso), "{file}: tso forbids it");
    }
    assert!(weak("SB+rlx.litmus", PSO) && weak("SB+rlx.litmus", Model::Tso));
}
