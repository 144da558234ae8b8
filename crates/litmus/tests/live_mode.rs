//! The live (C11Tester-style) memory against the exhaustive explorer: on
//! random small programs, every outcome a random live execution produces is
//! one the exhaustive explorer finds (soundness), and without SeqCst
//! operations (whose order the live memory ties to execution order) enough
//! random executions find all of them.

mod common;

use c11check_litmus::ast::Key;
use c11check_litmus::parser::parse;
use c11check_litmus::{run_test, RunOptions};
use c11check_model::live_memory::LiveMemory;
use c11check_model::{Loc, MemOrder, RmwOp, Value, Width};
use proptest::prelude::*;
use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug)]
enum Op {
    Load(u8, u8),
    Store(u8, i64, u8),
    FetchAdd(u8, u8),
    Xchg(u8, i64, u8),
    Cas(u8, i64, i64, u8),
    Fence(u8),
}

const LIT: [&str; 5] = [
    "memory_order_relaxed",
    "memory_order_acquire",
    "memory_order_release",
    "memory_order_acq_rel",
    "memory_order_seq_cst",
];
const ORD: [MemOrder; 5] = [
    MemOrder::Relaxed,
    MemOrder::Acquire,
    MemOrder::Release,
    MemOrder::AcqRel,
    MemOrder::SeqCst,
];
const LOAD: [usize; 3] = [0, 1, 4];
const STORE: [usize; 3] = [0, 2, 4];
const LOCS: [&str; 2] = ["x", "y"];

fn op(sc: bool) -> impl Strategy<Value = Op> {
    // Without SeqCst: orders 0..2 of loads/stores, 0..4 of RMWs and fences.
    let (lo, ro) = if sc { (3u8, 5u8) } else { (2u8, 4u8) };
    prop_oneof![
        3 => (0..2u8, 0..lo).prop_map(|(l, o)| Op::Load(l, o)),
        3 => (0..2u8, 1..3i64, 0..lo).prop_map(|(l, v, o)| Op::Store(l, v, o)),
        1 => (0..2u8, 0..ro).prop_map(|(l, o)| Op::FetchAdd(l, o)),
        1 => (0..2u8, 1..3i64, 0..ro).prop_map(|(l, v, o)| Op::Xchg(l, v, o)),
        1 => (0..2u8, 0..2i64, 1..3i64, 0..ro).prop_map(|(l, e, n, o)| Op::Cas(l, e, n, o)),
        1 => (1..ro).prop_map(Op::Fence),
    ]
}

fn has_reg(op: &Op) -> bool {
    !matches!(op, Op::Store(..) | Op::Fence(..))
}

fn render(threads: &[Vec<Op>]) -> String {
    let mut s = String::from("C live\n{ [x] = 0; [y] = 0; [e0] = 0; [e1] = 0; [e2] = 0; }\n");
    let mut keys = vec!["x".to_string(), "y".to_string()];
    for (t, ops) in threads.iter().enumerate() {
        s += &format!("P{t} (atomic_int* x, atomic_int* y, atomic_int* e{t}) {{\n");
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
            };
            if has_reg(op) {
                keys.push(format!("{t}:{r}"));
            }
            s += &format!("  {line}\n");
        }
        s += "}\n";
    }
    s += &format!("locations [{}]\nexists (x=0)\n", keys.join("; "));
    s
}

/// SplitMix64: a small deterministic generator for the schedules.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One random live execution; the state in `keys` order.
fn run_live(threads: &[Vec<Op>], keys: &[Key], rng: &mut Rng, window: Option<usize>) -> Vec<Value> {
    let mut m = LiveMemory::new(false);
    // Prune after every store: pruning must not change what can happen
    // (aggressive pruning, with a window, may only make less happen).
    m.set_prune_interval(1);
    m.set_prune_window(window);
    let locs = [m.add_loc(0), m.add_loc(0)];
    let tids: Vec<u32> = (0..threads.len())
        .map(|i| if i == 0 { 0 } else { m.add_thread(None) })
        .collect();
    let mut pc = vec![0usize; threads.len()];
    let mut regs: Vec<Vec<Value>> = threads.iter().map(|ops| vec![0; ops.len()]).collect();
    loop {
        let runnable: Vec<usize> = (0..threads.len())
            .filter(|&t| pc[t] < threads[t].len())
            .collect();
        if runnable.is_empty() {
            break;
        }
        let i = runnable[rng.below(runnable.len())];
        let t = tids[i];
        let k = pc[i];
        pc[i] += 1;
        let mut choose = |n: usize| rng.below(n);
        let loc = |l: u8| locs[l as usize];
        regs[i][k] = match threads[i][k] {
            Op::Load(l, o) => m.load(t, loc(l), ORD[LOAD[o as usize]], &mut choose),
            Op::Store(l, v, o) => {
                m.store(t, loc(l), ORD[STORE[o as usize]], v);
                0
            }
            Op::FetchAdd(l, o) => m.rmw(
                t,
                loc(l),
                ORD[o as usize],
                RmwOp::Add,
                1,
                Width::I64,
                &mut choose,
            ),
            Op::Xchg(l, v, o) => m.rmw(
                t,
                loc(l),
                ORD[o as usize],
                RmwOp::Xchg,
                v,
                Width::I64,
                &mut choose,
            ),
            Op::Cas(l, e, n, o) => {
                let (_, wrote) = m.cas(
                    t,
                    loc(l),
                    e,
                    n,
                    ORD[o as usize],
                    ORD[LOAD[o as usize % 3]],
                    false,
                    &mut choose,
                );
                wrote as Value
            }
            Op::Fence(o) => {
                m.fence(t, ORD[o as usize]);
                0
            }
        };
    }
    keys.iter()
        .map(|k| match k {
            Key::Reg(t, r) => regs[*t as usize][r[1..].parse::<usize>().unwrap()],
            Key::Loc(n) => {
                let l = if n == "x" { Loc(0) } else { Loc(1) };
                m.final_value(l, &mut |n| rng.below(n))
            }
        })
        .collect()
}

fn check(
    threads: &[Vec<Op>],
    iterations: usize,
    seed: u64,
    complete: bool,
    window: Option<usize>,
) -> Result<(), TestCaseError> {
    let src = render(threads);
    let test = parse(&src).map_err(|e| TestCaseError::fail(format!("{e:?}\n{src}")))?;
    let report = run_test(&test, &RunOptions::default());
    let exhaustive: BTreeSet<Vec<Value>> = report.states.keys().cloned().collect();
    let mut rng = Rng(seed);
    let mut found = BTreeSet::new();
    for _ in 0..iterations {
        let s = run_live(threads, &report.keys, &mut rng, window);
        prop_assert!(
            exhaustive.contains(&s),
            "live execution reached {:?}, which the exhaustive explorer does not (keys {:?})\n{}",
            s,
            report.keys,
            src
        );
        found.insert(s);
        if found.len() == exhaustive.len() {
            break;
        }
    }
    if complete {
        prop_assert!(
            found == exhaustive,
            "live executions found {} of {} outcomes in {} runs; missing {:?} (keys {:?})\n{}",
            found.len(),
            exhaustive.len(),
            iterations,
            exhaustive.difference(&found).collect::<Vec<_>>(),
            report.keys,
            src
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(200, 0x11FE))]

    #[test]
    fn live_outcomes_are_exhaustive_outcomes(threads in prop::collection::vec(prop::collection::vec(op(true), 1..4), 2..4)) {
        check(&threads, 3_000, 7, false, None)?;
    }

    #[test]
    fn live_outcomes_with_a_pruning_window_are_exhaustive_outcomes(threads in prop::collection::vec(prop::collection::vec(op(true), 1..4), 2..4), window in 1usize..3) {
        check(&threads, 3_000, 13, false, Some(window))?;
    }

    #[test]
    fn live_finds_every_outcome_without_seq_cst(threads in prop::collection::vec(prop::collection::vec(op(false), 1..4), 2..4)) {
        let n = std::env::var("C11CHECK_LIVE_ITERATIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000);
        check(&threads, n, 11, true, None)?;
    }
}
