//! Property test: random small programs run through the Rust API (fibers,
//! replay, lazily bound locations) reach exactly the outcomes the litmus
//! front end computes for the same programs.

use c11check::model::Builder;
use c11check::sync::atomic::{fence, AtomicI64, Ordering};
use c11check::thread;
use c11check_litmus::parser::parse;
use c11check_litmus::{run_test, RunOptions};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

/// Creation tracking on (see `tests/creation.rs`): no test here may report
/// an access to an object as unordered with its creation.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

#[derive(Clone, Copy, Debug)]
enum Op {
    Load(u8, u8),
    Store(u8, i64, u8),
    FetchAdd(u8, u8),
    Xchg(u8, i64, u8),
    Cas(u8, i64, i64, u8),
    Fence(u8),
    StoreIf(u8, i64, u8, i64),
}

const LIT: [&str; 5] = [
    "memory_order_relaxed",
    "memory_order_acquire",
    "memory_order_release",
    "memory_order_acq_rel",
    "memory_order_seq_cst",
];
const RUST: [Ordering; 5] = [
    Ordering::Relaxed,
    Ordering::Acquire,
    Ordering::Release,
    Ordering::AcqRel,
    Ordering::SeqCst,
];
const LOAD: [usize; 3] = [0, 1, 4];
const STORE: [usize; 3] = [0, 2, 4];
const LOCS: [&str; 2] = ["x", "y"];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..2u8, 0..3u8).prop_map(|(l, o)| Op::Load(l, o)),
        3 => (0..2u8, 1..3i64, 0..3u8).prop_map(|(l, v, o)| Op::Store(l, v, o)),
        1 => (0..2u8, 0..5u8).prop_map(|(l, o)| Op::FetchAdd(l, o)),
        1 => (0..2u8, 1..3i64, 0..5u8).prop_map(|(l, v, o)| Op::Xchg(l, v, o)),
        1 => (0..2u8, 0..2i64, 1..3i64, 0..5u8).prop_map(|(l, e, n, o)| Op::Cas(l, e, n, o)),
        1 => (1..5u8).prop_map(Op::Fence),
        1 => (0..2u8, 1..3i64, 0..3u8, 0..3i64).prop_map(|(l, v, o, c)| Op::StoreIf(l, v, o, c)),
    ]
}

/// Whether the op leaves a value in a register (as the litmus rendering does).
fn has_reg(op: &Op) -> bool {
    matches!(
        op,
        Op::Load(..) | Op::FetchAdd(..) | Op::Xchg(..) | Op::Cas(..)
    )
}

fn render(threads: &[Vec<Op>]) -> (String, Vec<String>) {
    let mut s = String::from("C random\n{ [x] = 0; [y] = 0; [e0] = 0; [e1] = 0; [e2] = 0; }\n");
    let mut keys = vec!["[x]".to_string(), "[y]".to_string()];
    for (t, ops) in threads.iter().enumerate() {
        s += &format!("P{t} (atomic_int* x, atomic_int* y, atomic_int* e{t}) {{\n");
        let mut last: Option<String> = None;
        for (i, op) in ops.iter().enumerate() {
            let r = format!("r{i}");
            let line = match *op {
                Op::Load(l, o) => format!("int {r} = atomic_load_explicit({}, {});", LOCS[l as usize], LIT[LOAD[o as usize]]),
                Op::Store(l, v, o) => format!("atomic_store_explicit({}, {v}, {});", LOCS[l as usize], LIT[STORE[o as usize]]),
                Op::FetchAdd(l, o) => format!("int {r} = atomic_fetch_add_explicit({}, 1, {});", LOCS[l as usize], LIT[o as usize]),
                Op::Xchg(l, v, o) => format!("int {r} = atomic_exchange_explicit({}, {v}, {});", LOCS[l as usize], LIT[o as usize]),
                Op::Cas(l, e, n, o) => format!(
                    "*e{t} = {e}; int {r} = atomic_compare_exchange_strong_explicit({}, e{t}, {n}, {}, {});",
                    LOCS[l as usize],
                    LIT[o as usize],
                    LIT[LOAD[o as usize % 3]]
                ),
                Op::Fence(o) => format!("atomic_thread_fence({});", LIT[o as usize]),
                Op::StoreIf(l, v, o, c) => {
                    let store = format!("atomic_store_explicit({}, {v}, {});", LOCS[l as usize], LIT[STORE[o as usize]]);
                    match &last {
                        Some(reg) => format!("if ({reg} == {c}) {{ {store} }}"),
                        None => store,
                    }
                }
            };
            if has_reg(op) {
                keys.push(format!("{t}:{r}"));
                last = Some(r);
            }
            s += &format!("  {line}\n");
        }
        s += "}\n";
    }
    let locs: Vec<String> = keys
        .iter()
        .map(|k| k.trim_matches(|c| c == '[' || c == ']').to_string())
        .collect();
    s += &format!("locations [{}]\nexists (x=0)\n", locs.join("; "));
    (s, keys)
}

/// One thread of the program through the Rust API; returns its registers.
fn run_thread(ops: &[Op], locs: &[AtomicI64; 2]) -> Vec<i64> {
    let mut regs = Vec::new();
    let mut last: Option<i64> = None;
    for op in ops {
        match *op {
            Op::Load(l, o) => {
                let v = locs[l as usize].load(RUST[LOAD[o as usize]]);
                regs.push(v);
                last = Some(v);
            }
            Op::Store(l, v, o) => locs[l as usize].store(v, RUST[STORE[o as usize]]),
            Op::FetchAdd(l, o) => {
                let v = locs[l as usize].fetch_add(1, RUST[o as usize]);
                regs.push(v);
                last = Some(v);
            }
            Op::Xchg(l, v, o) => {
                let old = locs[l as usize].swap(v, RUST[o as usize]);
                regs.push(old);
                last = Some(old);
            }
            Op::Cas(l, e, n, o) => {
                let ok = locs[l as usize]
                    .compare_exchange(e, n, RUST[o as usize], RUST[LOAD[o as usize % 3]])
                    .is_ok() as i64;
                regs.push(ok);
                last = Some(ok);
            }
            Op::Fence(o) => fence(RUST[o as usize]),
            Op::StoreIf(l, v, o, c) => {
                if last.is_none_or(|r| r == c) {
                    locs[l as usize].store(v, RUST[STORE[o as usize]]);
                }
            }
        }
    }
    regs
}

fn check(threads: Vec<Vec<Op>>) -> Result<(), TestCaseError> {
    let (src, keys) = render(&threads);
    let test = parse(&src).map_err(|e| TestCaseError::fail(format!("{e:?}\n{src}")))?;
    let report = run_test(&test, &RunOptions::default());
    let names: Vec<String> = report.keys.iter().map(|k| k.herd_name()).collect();
    let litmus: BTreeSet<Vec<i64>> = report
        .states
        .keys()
        .map(|vals| {
            keys.iter()
                .map(|k| vals[names.iter().position(|n| n == k).unwrap()])
                .collect()
        })
        .collect();
    let seen = std::sync::Arc::new(StdMutex::new(BTreeSet::new()));
    let s2 = seen.clone();
    let program = threads.clone();
    Builder::new()
        .explore(move || {
            let locs = [AtomicI64::new(0), AtomicI64::new(0)];
            let regs: Vec<Vec<i64>> = thread::scope(|s| {
                let hs: Vec<_> = program
                    .iter()
                    .map(|ops| s.spawn(|| run_thread(ops, &locs)))
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let mut out = vec![
                locs[0].load(Ordering::Relaxed),
                locs[1].load(Ordering::Relaxed),
            ];
            out.extend(regs.into_iter().flatten());
            s2.lock().unwrap().insert(out);
        })
        .map_err(|r| TestCaseError::fail(format!("{r}\n{src}")))?;
    let rust = std::mem::take(&mut *seen.lock().unwrap());
    prop_assert_eq!(rust, litmus, "Rust API and litmus differ on\n{}", src);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xC11C),
        ..ProptestConfig::default()
    })]

    #[test]
    fn rust_api_equals_litmus(threads in prop::collection::vec(prop::collection::vec(op(), 1..4), 2..4)) {
        check(threads)?;
    }
}
