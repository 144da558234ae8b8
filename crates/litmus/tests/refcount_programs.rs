//! Property test for reference counts (`atomic_refcount_inc/dec`, what `Arc`
//! uses): on random programs where threads own references, clone and drop
//! them, and the last owner touches the shared data, the explorer visits one
//! execution per class of the brute-force checker's executions, where
//! executions that differ only in the order of the count's updates are one
//! class (the key of `graph_key`), and no class twice. Programs that can see
//! the updates' order (a read of the count, a SeqCst fence) are explored
//! exactly and must still reach every class.

mod common;

use c11check_axiomatic::{enumerate, graph_key, AxModel};
use c11check_litmus::interp::LitmusProgram;
use c11check_litmus::parser::parse;
use c11check_litmus::{run_test_inspecting, run_test_with, RunOptions};
use c11check_model::{Loc, Model};
use proptest::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;

#[derive(Clone, Debug)]
enum Op {
    /// Clone a reference (when the thread owns one).
    Inc,
    /// Drop a reference; the last owner then (after an acquire fence) writes
    /// the shared data non-atomically (`true`) or stores to `x`.
    Dec(bool),
    /// Read the shared data non-atomically (when the thread owns a reference).
    ReadData,
    Load(u8, bool),
    Store(u8, u8, bool),
    FetchAdd(u8),
    /// A SeqCst fence (the updates' order then matters: explored exactly).
    ScFence,
    /// A read of the count (like `Arc::strong_count`): explored exactly.
    LoadCount,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Inc),
        4 => any::<bool>().prop_map(Op::Dec),
        1 => Just(Op::ReadData),
        2 => (0..2u8, any::<bool>()).prop_map(|(l, a)| Op::Load(l, a)),
        2 => (0..2u8, 1..3u8, any::<bool>()).prop_map(|(l, v, r)| Op::Store(l, v, r)),
        1 => (0..2u8).prop_map(Op::FetchAdd),
        1 => Just(Op::ScFence),
        1 => Just(Op::LoadCount),
    ]
}

const LOCS: [&str; 2] = ["x", "y"];

/// Renders the program; `owned[t]` references start with thread `t`, and ops a
/// thread cannot do (cloning or dropping without owning) are left out.
fn render(threads: &[(u8, Vec<Op>)]) -> String {
    let total: u32 = threads.iter().map(|(o, _)| *o as u32).sum();
    let mut s = format!("C refcount\n{{ [x] = 0; [y] = 0; [d] = 0; [c] = {total}; }}\n");
    let mut keys = vec!["x".to_string(), "y".to_string()];
    // At most five updates of the count, so that brute force stays quick.
    let mut updates = 0;
    for (t, (owned, ops)) in threads.iter().enumerate() {
        s += &format!("P{t} (atomic_int* x, atomic_int* y, int* d, atomic_int* c) {{\n");
        let mut held = *owned as u32;
        let mut emitted = 0;
        for (i, op) in ops.iter().enumerate() {
            let r = format!("r{i}");
            let line = match *op {
                Op::Inc if held > 0 && updates < 5 => {
                    updates += 1;
                    held += 1;
                    "atomic_refcount_inc(c);".to_string()
                }
                Op::Dec(data) if held > 0 && updates < 5 => {
                    updates += 1;
                    held -= 1;
                    let body = if data {
                        "*d = 1;".to_string()
                    } else {
                        format!("atomic_store_explicit(x, {}, memory_order_relaxed);", t + 3)
                    };
                    format!("int {r} = atomic_refcount_dec(c); if ({r} == 1) {{ atomic_thread_fence(memory_order_acquire); {body} }}")
                }
                Op::ReadData if held > 0 => format!("int {r} = *d;"),
                Op::ScFence => "atomic_thread_fence(memory_order_seq_cst);".to_string(),
                Op::LoadCount => {
                    format!("int {r} = atomic_load_explicit(c, memory_order_relaxed);")
                }
                Op::Load(l, acq) => format!(
                    "int {r} = atomic_load_explicit({}, {});",
                    LOCS[l as usize],
                    if acq {
                        "memory_order_acquire"
                    } else {
                        "memory_order_relaxed"
                    }
                ),
                Op::Store(l, v, rel) => format!(
                    "atomic_store_explicit({}, {v}, {});",
                    LOCS[l as usize],
                    if rel {
                        "memory_order_release"
                    } else {
                        "memory_order_relaxed"
                    }
                ),
                Op::FetchAdd(l) => format!(
                    "int {r} = atomic_fetch_add_explicit({}, 1, memory_order_relaxed);",
                    LOCS[l as usize]
                ),
                _ => continue,
            };
            if line.starts_with("int ") {
                keys.push(format!("{t}:{r}"));
            }
            s += &format!("  {line}\n");
            emitted += 1;
        }
        if emitted == 0 {
            // (The brute-force checker does not count empty threads.)
            s += "  atomic_store_explicit(y, 1, memory_order_relaxed);\n";
        }
        s += "}\n";
    }
    s += &format!("locations [{}]\nexists (x=0)\n", keys.join("; "));
    s
}

fn check(src: &str, model: Model, ax: AxModel) -> Result<(), TestCaseError> {
    if std::env::var_os("C11CHECK_PROPTEST_VERBOSE").is_some() {
        eprintln!("--- {model:?}\n{src}");
    }
    let test = parse(src).map_err(|e| TestCaseError::fail(format!("parse: {e:?}\n{src}")))?;
    let program = LitmusProgram {
        test: &test,
        loop_bound: 3,
    };
    let e = enumerate(&program, ax, &[Loc(0), Loc(1)], 2_000_000)
        .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
    // Whether updates may commute is decided from the file (a read of the
    // count or a seq_cst fence in it), or by the explorer as it goes, as for
    // the Rust API: it starts over exploring every order once a graph shows
    // it.
    for from_file in [true, false] {
        let opts = RunOptions {
            model,
            refcount_order_from_file: from_file,
            ..Default::default()
        };
        let keys = RefCell::new(Vec::new());
        let restarted = Cell::new(false);
        run_test_inspecting(
            &test,
            &opts,
            &mut |ex, _| keys.borrow_mut().push(graph_key(ex.graph, ex.finals)),
            &mut || {
                keys.borrow_mut().clear();
                restarted.set(true);
            },
        );
        let keys = keys.into_inner();
        let set: BTreeSet<_> = keys.iter().cloned().collect();
        // Only where the updates commute is each class visited once.
        let commuting = match from_file {
            true => !test.refcount_order_observable,
            false => !restarted.get(),
        };
        if !model.orders_every_location() && commuting {
            prop_assert_eq!(
                set.len(),
                keys.len(),
                "duplicate executions under {:?} (order from the file: {})\n{}",
                model,
                from_file,
                src
            );
        }
        prop_assert!(
            e.executions == set,
            "{:?} (order from the file: {}): explorer {} vs brute force {} classes (missing {}, extra {})\n{}\nmissing: {:#?}",
            model,
            from_file,
            set.len(),
            e.executions.len(),
            e.executions.difference(&set).count(),
            set.difference(&e.executions).count(),
            src,
            e.executions.difference(&set).take(2).collect::<Vec<_>>()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(300, 0xA8C))]

    #[test]
    fn one_execution_per_refcount_class(
        threads in prop::collection::vec((1..3u8, prop::collection::vec(op(), 1..5)), 2..4)
    ) {
        let src = render(&threads);
        check(&src, Model::Cpp20, AxModel::Cpp20)?;
        check(&src, Model::Rc11, AxModel::Rc11)?;
        check(&src, Model::Sc, AxModel::Sc)?;
        check(&src, Model::Mca, AxModel::Mca)?;
        check(&src, Model::Tso, AxModel::Tso)?;
    }
}

/// Three owners dropping concurrently: three executions (one per last owner),
/// not the six orders of the decrements.
#[test]
fn three_drops_three_executions() {
    let src = render(&[
        (1, vec![Op::Dec(false)]),
        (1, vec![Op::Dec(false)]),
        (1, vec![Op::Dec(false)]),
    ]);
    let test = parse(&src).unwrap();
    let mut n = 0;
    run_test_with(&test, &RunOptions::default(), &mut |_, _| n += 1);
    assert_eq!(n, 3, "{src}");
}
