//! Debug aid: compares the explorer with the brute-force checker on litmus files
//! and prints the executions one of them lacks.
//! `cargo run --release -p c11check-litmus --example crosscheck_file -- cpp20 FILE...`
use c11check_axiomatic::{enumerate, graph_key, AxModel};
use c11check_litmus::interp::LitmusProgram;
use c11check_litmus::states::{observed_locs, state_keys};
use c11check_litmus::{load, run_test_with, RunOptions};
use c11check_model::{Loc, Model};
use std::collections::BTreeSet;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().expect("model");
    let model = Model::from_name(&name).expect("model");
    let ax = AxModel::from_name(&name).expect("model");
    for f in args {
        let test = load(std::path::Path::new(&f)).unwrap_or_else(|e| panic!("{e}"));
        let mut keys = Vec::new();
        run_test_with(
            &test,
            &RunOptions {
                model,
                ..Default::default()
            },
            &mut |ex, _| keys.push(graph_key(ex.graph, ex.finals)),
        );
        let set: BTreeSet<_> = keys.iter().cloned().collect();
        let observed: Vec<Loc> = observed_locs(&test, &state_keys(&test));
        let e = enumerate(
            &LitmusProgram {
                test: &test,
                loop_bound: 3,
            },
            ax,
            &observed,
            10_000_000,
        )
        .unwrap();
        println!(
            "{f}: explorer {} ({} distinct), brute force {}",
            keys.len(),
            set.len(),
            e.executions.len()
        );
        for (i, k) in keys.iter().enumerate() {
            if keys[..i].contains(k) {
                println!("  twice: {k:?}");
            }
        }
        for k in e.executions.difference(&set) {
            println!("  missing: {k:?}");
        }
        for k in set.difference(&e.executions) {
            println!("  extra: {k:?}");
        }
    }
}
