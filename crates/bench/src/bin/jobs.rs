//! `jobs`: runs on 1 and 2 workers (or those given with `--jobs`) in the
//! same run, each in a child process of its own (time, executions, peak
//! RSS): exhaustive runs of fib_bench and lastzero as C programs (forked
//! worker processes), rmw-4x3 on the explorer, and the larger programs of
//! the benchmark suite through the Rust API; then random runs (live and
//! graph-based, iterations dealt in chunks).
//!
//! Usage: `jobs [--jobs 1,2] [--runs N] [NAME...]`; needs `c11check` and
//! the C runtime built (`cargo build --release -p c11check-cli -p
//! c11check-c-runtime`) and ../shared for the C sources.

use c11check::model::Builder;
use c11check_explore::straight::StraightLine;
use c11check_explore::{exhaustive, Config, Execution};
use c11check_model::{Action, Loc, MemOrder, Model, RmwOp, Width};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Object creation tracking, as the other benchmarks install it.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

/// The programs measured: name, what it is.
const PROGRAMS: &[(&str, &str)] = &[
    ("fib_bench-c", "GenMC's fib_bench (C, forked workers)"),
    ("lastzero-c", "GenMC's lastzero N=15 (C, forked workers)"),
    ("rmw-4x3", "4 threads x 3 fetch_add (explorer)"),
    ("mpmc", "CDSChecker's mpmc queue (Rust API)"),
    ("seqlock", "seqlock, two writers (Rust API)"),
    ("mcs-lock", "MCS lock (Rust API)"),
    ("linuxrw", "Linux reader-writer lock (Rust API)"),
    (
        "fib_bench-c-live",
        "fib_bench, 200,000 live iterations (C, forked workers)",
    ),
    (
        "seqlock-live",
        "seqlock, 100,000 live iterations (Rust API)",
    ),
    (
        "mpmc-graph",
        "mpmc, 20,000 graph-based random iterations (Rust API)",
    ),
];

/// Iterations of the random rows' runs (`C11CHECK_ITERATIONS` for C).
fn random_iterations(name: &str) -> Option<u64> {
    match name {
        "fib_bench-c-live" => Some(200_000),
        "seqlock-live" => Some(100_000),
        "mpmc-graph" => Some(20_000),
        _ => None,
    }
}

/// Runs one program in this (child) process on `jobs` workers: executions.
fn child(name: &str, jobs: usize) -> u64 {
    match name {
        "rmw-4x3" => {
            let rmw = Action::Rmw {
                loc: Loc(0),
                ord: MemOrder::Relaxed,
                op: RmwOp::Add,
                operand: 1,
                width: Width::I64,
            };
            let program = || StraightLine {
                init: vec![0],
                threads: vec![vec![rmw; 3]; 4],
            };
            let mut config = Config::new(Model::Cpp20);
            config.observed = vec![Loc(0)];
            let make = || (program(), |_: &Execution<'_>| true);
            let (stats, _) = exhaustive::explore_parallel(jobs, &config, &make, &|_| ());
            stats.executions
        }
        _ => {
            let program = name
                .strip_suffix("-live")
                .or_else(|| name.strip_suffix("-graph"))
                .unwrap_or(name);
            let f = c11check_bench::c11::program(program)
                .unwrap_or_else(|| panic!("no program {name}"));
            let mut b = Builder::new().jobs(jobs);
            if let Some(n) = random_iterations(name) {
                b = b.random(n);
                if name.ends_with("-graph") {
                    b = b.graph_random();
                }
            }
            let s = b.explore(f).unwrap_or_else(|r| panic!("{name}: {r}"));
            s.stats.executions
        }
    }
}

/// A GenMC program compiled with `c11check cc -O1` into `dir`.
fn c_program(c11check: &Path, dir: &Path, name: &str) -> PathBuf {
    let shared =
        std::env::var("C11CHECK_SHARED").map_or_else(|_| PathBuf::from("../shared"), PathBuf::from);
    let (src, flags): (PathBuf, &[&str]) = match name {
        "fib_bench-c" | "fib_bench-c-live" => (
            shared.join("genmc-tests/correct/synthetic/fib_bench/variants/fib_bench0.c"),
            &[],
        ),
        _ => (
            shared.join("genmc-tests/correct/synthetic/lastzero/variants/lastzero0.c"),
            &["-DN=15"],
        ),
    };
    let out = dir.join(name);
    let status = Command::new(c11check)
        .arg("cc")
        .arg("-O1")
        .arg(format!(
            "-I{}",
            src.parent().unwrap().parent().unwrap().display()
        ))
        .arg(format!(
            "-I{}",
            shared.join("genmc-tests/include").display()
        ))
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("c11check cc");
    assert!(status.success(), "c11check cc {}", src.display());
    out
}

/// Time (s), executions and peak RSS (MiB) of one run on `jobs` workers.
fn measure(me: &Path, c: &Option<PathBuf>, name: &str, jobs: usize) -> (f64, u64, f64) {
    let start = Instant::now();
    let mut cmd = match c {
        Some(exe) => {
            let mut cmd = Command::new("/usr/bin/time");
            cmd.args(["-f", "peak-kib %M"])
                .arg(exe)
                .env("C11CHECK_JOBS", jobs.to_string());
            if let Some(n) = random_iterations(name) {
                cmd.env("C11CHECK_ITERATIONS", n.to_string());
            }
            cmd
        }
        None => {
            let mut cmd = Command::new("/usr/bin/time");
            cmd.args(["-f", "peak-kib %M"])
                .arg(me)
                .args(["--child", name, &jobs.to_string()]);
            cmd
        }
    };
    let out = cmd.output().expect("a child run");
    let secs = start.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    let executions = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("jobs-executions ")
                .map(|n| n.trim().parse().unwrap())
                .or_else(|| {
                    l.split("no bug found in ")
                        .nth(1)
                        .and_then(|r| r.split(' ').next())
                        .and_then(|n| n.parse().ok())
                })
        })
        .unwrap_or_else(|| panic!("{name} on {jobs}: no count in\n{err}"));
    // /usr/bin/time counts the largest process (a forked worker, for C).
    let kib: f64 = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("peak-kib ")
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0.0);
    (secs, executions, kib / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let n = child(&args[1], args[2].parse().expect("jobs"));
        eprintln!("jobs-executions {n}");
        return;
    }
    let jobs: Vec<usize> = c11check_bench::flag_value(&args, "--jobs").map_or(vec![1, 2], |v| {
        v.split(',')
            .map(|j| j.parse().expect("--jobs 1,2"))
            .collect()
    });
    let runs: usize =
        c11check_bench::flag_value(&args, "--runs").map_or(1, |v| v.parse().expect("--runs N"));
    let names = c11check_bench::plain_args(&args, &["--jobs", "--runs"]);
    let me = std::env::current_exe().expect("own path");
    let c11check = me.with_file_name("c11check");
    let dir = std::env::temp_dir().join(format!("c11check-jobs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    println!("{}", c11check_bench::machine());
    println!("best of {runs} runs; each run a child process\n");
    let head: Vec<String> = jobs
        .iter()
        .map(|j| format!("{j} job{}", if *j == 1 { "" } else { "s" }))
        .collect();
    println!(
        "| program | executions | {} | speed-up | peak MiB ({}) |",
        head.join(" | "),
        head.join(", ")
    );
    println!("|---|---:|{}---:|---:|", "---:|".repeat(jobs.len()));
    for &(name, what) in PROGRAMS {
        if !names.is_empty() && !names.contains(&name) {
            continue;
        }
        let c = name
            .contains("-c")
            .then(|| c_program(&c11check, &dir, name));
        let mut times = Vec::new();
        let mut counts = Vec::new();
        let mut peaks = Vec::new();
        for &j in &jobs {
            let mut best = f64::MAX;
            let mut peak = 0.0;
            for _ in 0..runs {
                let (t, n, m) = measure(&me, &c, name, j);
                counts.push(n);
                if t < best {
                    best = t;
                    peak = m;
                }
            }
            times.push(best);
            peaks.push(peak);
        }
        assert!(
            counts.windows(2).all(|w| w[0] == w[1]),
            "{name}: counts differ: {counts:?}"
        );
        let speedup = times[0] / times[times.len() - 1];
        println!(
            "| {name} ({what}) | {} | {} | {speedup:.2}x | {} |",
            counts[0],
            times
                .iter()
                .map(|t| format!("{t:.2} s"))
                .collect::<Vec<_>>()
                .join(" | "),
            peaks
                .iter()
                .map(|m| format!("{m:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}
