//! `c11check-bench`: measures the exhaustive explorer.
//!
//! Each benchmark runs in a child process of its own so that its peak resident
//! memory (VmHWM) is its own. Usage: `c11check-bench [--quick] [NAME...]`.

use c11check_explore::straight::StraightLine;
use c11check_explore::{exhaustive, Config, Execution};
use c11check_litmus::{load, run_test, RunOptions};
use c11check_model::{Action, Loc, MemOrder, Model, RmwOp, Width};
use std::path::{Path, PathBuf};
use std::time::Instant;

struct Result {
    executions: u64,
    blocked: u64,
    secs: f64,
}

fn explore(mut p: StraightLine, observed: Vec<Loc>) -> Result {
    let mut config = Config::new(Model::Cpp20);
    config.observed = observed;
    let start = Instant::now();
    let stats = exhaustive::explore(&mut p, &config, &mut |_: &Execution<'_>| true);
    Result {
        executions: stats.executions,
        blocked: stats.blocked,
        secs: start.elapsed().as_secs_f64(),
    }
}

fn rmw(loc: u32) -> Action {
    Action::Rmw {
        loc: Loc(loc),
        ord: MemOrder::Relaxed,
        op: RmwOp::Add,
        operand: 1,
        width: Width::I64,
    }
}
fn store(loc: u32, ord: MemOrder) -> Action {
    Action::Store {
        loc: Loc(loc),
        ord,
        val: 1,
    }
}
fn load_(loc: u32, ord: MemOrder) -> Action {
    Action::Load { loc: Loc(loc), ord }
}

/// n threads, each doing k fetch_add on one location: (nk)!/(k!^n) executions.
fn rmws(n: usize, k: usize) -> StraightLine {
    StraightLine {
        init: vec![0],
        threads: vec![vec![rmw(0); k]; n],
    }
}

/// Store buffering around a ring of n threads: thread i stores x_i, loads x_{i+1}.
fn sb_ring(n: usize, ord: MemOrder) -> StraightLine {
    StraightLine {
        init: vec![0; n],
        threads: (0..n)
            .map(|i| vec![store(i as u32, ord), load_(((i + 1) % n) as u32, ord)])
            .collect(),
    }
}

/// IRIW generalised: n writers of distinct locations, two readers reading all of them in opposite orders.
fn iriw(n: usize, ord: MemOrder) -> StraightLine {
    let mut threads: Vec<Vec<Action>> = (0..n).map(|i| vec![store(i as u32, ord)]).collect();
    threads.push((0..n).map(|i| load_(i as u32, ord)).collect());
    threads.push((0..n).rev().map(|i| load_(i as u32, ord)).collect());
    StraightLine {
        init: vec![0; n],
        threads,
    }
}

/// One long thread: `n` relaxed stores to `x`, then store buffering on
/// `x` and `y` with a second thread. The second thread's load of `x` may
/// read the initial value or any of the `n + 1` stores, and the first
/// thread's load of `y` either value, so there are `2(n + 2)` executions
/// (2,004 for n = 1,000), each with the long prefix.
fn prefix_sb(n: usize) -> StraightLine {
    let mut t0 = vec![store(0, MemOrder::Relaxed); n];
    t0.extend([store(0, MemOrder::Relaxed), load_(1, MemOrder::Relaxed)]);
    let t1 = vec![store(1, MemOrder::Relaxed), load_(0, MemOrder::Relaxed)];
    StraightLine {
        init: vec![0; 2],
        threads: vec![t0, t1],
    }
}

fn litmus_dir(dir: &Path) -> Result {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "litmus") {
                files.push(p);
            }
        }
    }
    let start = Instant::now();
    let (mut executions, mut blocked) = (0, 0);
    for f in files {
        if let Ok(t) = load(&f) {
            for model in [Model::Cpp20, Model::Rc11] {
                let r = run_test(
                    &t,
                    &RunOptions {
                        model,
                        ..Default::default()
                    },
                );
                executions += r.stats.executions;
                blocked += r.stats.blocked;
            }
        }
    }
    Result {
        executions,
        blocked,
        secs: start.elapsed().as_secs_f64(),
    }
}

fn benchmarks(quick: bool) -> Vec<(String, String)> {
    let mut v = vec![
        (
            "suite-own".to_string(),
            "litmus/ (cpp20 + rc11)".to_string(),
        ),
        (
            "suite-conformance".to_string(),
            "../shared/conformance/dat3m-c11 (cpp20 + rc11)".to_string(),
        ),
        (
            "rmw-3x3".to_string(),
            "3 threads x 3 fetch_add, one location".to_string(),
        ),
        ("rmw-2x6".to_string(), "2 threads x 6 fetch_add".to_string()),
        ("rmw-3x4".to_string(), "3 threads x 4 fetch_add".to_string()),
        (
            "sb-ring-6-rlx".to_string(),
            "SB ring of 6 threads, relaxed".to_string(),
        ),
        (
            "sb-ring-6-sc".to_string(),
            "SB ring of 6 threads, seq_cst".to_string(),
        ),
        (
            "iriw-3-rlx".to_string(),
            "IRIW with 3 writers, relaxed".to_string(),
        ),
        (
            "iriw-3-sc".to_string(),
            "IRIW with 3 writers, seq_cst".to_string(),
        ),
    ];
    v.push((
        "long-rmw-1000".to_string(),
        "1 thread x 1,000 fetch_add (one long execution)".to_string(),
    ));
    v.push((
        "long-prefix-1000".to_string(),
        "1,000 relaxed stores to x, then SB on x, y".to_string(),
    ));
    if !quick {
        v.push(("rmw-4x3".to_string(), "4 threads x 3 fetch_add".to_string()));
        v.push((
            "sb-ring-8-rlx".to_string(),
            "SB ring of 8 threads, relaxed".to_string(),
        ));
    }
    v
}

fn run_one(name: &str) -> Result {
    use MemOrder::*;
    match name {
        "suite-own" => litmus_dir(Path::new("litmus")),
        "suite-conformance" => litmus_dir(
            &std::env::var("C11CHECK_CONFORMANCE")
                .map(PathBuf::from)
                .unwrap_or_else(|_| PathBuf::from("../shared/conformance"))
                .join("dat3m-c11/litmus"),
        ),
        "rmw-3x3" => explore(rmws(3, 3), vec![Loc(0)]),
        "rmw-2x6" => explore(rmws(2, 6), vec![Loc(0)]),
        "rmw-4x3" => explore(rmws(4, 3), vec![Loc(0)]),
        "rmw-3x4" => explore(rmws(3, 4), vec![Loc(0)]),
        "sb-ring-6-rlx" => explore(sb_ring(6, Relaxed), vec![]),
        "sb-ring-6-sc" => explore(sb_ring(6, SeqCst), vec![]),
        "sb-ring-8-rlx" => explore(sb_ring(8, Relaxed), vec![]),
        "iriw-3-rlx" => explore(iriw(3, Relaxed), vec![]),
        "iriw-3-sc" => explore(iriw(3, SeqCst), vec![]),
        "long-rmw-1000" => explore(rmws(1, 1000), vec![Loc(0)]),
        "long-prefix-1000" => explore(prefix_sb(1000), vec![]),
        _ => panic!("unknown benchmark {name}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let r = run_one(&args[1]);
        println!(
            "{} {} {} {}",
            r.executions,
            r.blocked,
            r.secs,
            c11check_bench::peak_rss_kib()
        );
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let only: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let exe = std::env::current_exe().expect("own path");
    println!("Machine: {}", c11check_bench::machine());
    println!();
    println!(
        "| benchmark | what | executions | blocked | time (s) | executions/s | peak RSS (MiB) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (name, what) in benchmarks(quick) {
        if !only.is_empty() && !only.iter().any(|o| **o == name) {
            continue;
        }
        let out = std::process::Command::new(&exe)
            .args(["--child", &name])
            .output()
            .expect("child");
        let text = String::from_utf8_lossy(&out.stdout);
        let f: Vec<&str> = text.split_whitespace().collect();
        if !out.status.success() || f.len() < 4 {
            println!("| {name} | {what} | failed | | | | |");
            continue;
        }
        let (ex, bl, secs, kib): (u64, u64, f64, u64) = (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        println!(
            "| {name} | {what} | {ex} | {bl} | {secs:.3} | {:.0} | {:.1} |",
            ex as f64 / secs.max(1e-9),
            kib as f64 / 1024.0
        );
    }
}
