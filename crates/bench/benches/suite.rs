//! The CDSChecker/C11Tester benchmark ports under c11check, loom 0.7.2 and
//! shuttle 0.9.9: one table.
//!
//! `cargo bench -p c11check-bench --features peers --bench suite [-- [--quick] [--budget SECS] [--seeds N] [NAME...]]`
//!
//! Columns: c11check exhaustive (executions explored, of which blocked, time,
//! peak memory, verdict); c11check random (the live engine: the share of
//! single executions, one per seed, that hit the documented bug, the time
//! per execution and per visible operation); loom (iterations, time,
//! verdict; cut by the budget); shuttle random (share of seeds that hit the
//! bug, time per execution) and PCT (depth 3). A second table sets
//! c11check's exhaustive runs on CDSChecker's eight programs against
//! CDSChecker's published figures (median time of five runs, with weak
//! compare-exchanges that may fail spuriously, and without, as CDSChecker
//! treats them). Every
//! (tool, benchmark) pair runs in a child process of its own, so the peak
//! resident memory is its own.

use c11check::model::{Builder, FailureKind};
use c11check_bench::suite::{benchmark, Benchmark, Verdict, BENCHMARKS};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};
use std::time::{Duration, Instant};

/// Object creation tracking (a fresh object reached without synchronization
/// is a race), as a user of c11check would install it.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

/// Executions started (loom and shuttle report no count of their own).
static STARTED: AtomicU64 = AtomicU64::new(0);

#[allow(clippy::new_without_default)]
mod lm {
    mod facade {
        pub use loom::{cell, sync, thread};
    }
    include!("../src/suite_programs.rs");
}

#[allow(clippy::new_without_default)]
mod sh {
    mod facade {
        pub use c11check_bench::plain_cell as cell;
        pub use shuttle::{sync, thread};
    }
    include!("../src/suite_programs.rs");
}

/// The verdict a failure message of loom or shuttle stands for.
fn classify(msg: &str) -> &'static str {
    if msg.contains("Causality violation") || msg.contains("data race") {
        "data race"
    } else if msg.contains("deadlock") {
        "deadlock"
    } else if msg.contains("exceeded maximum number of branches") || msg.contains("max_branches") {
        "branch limit"
    } else {
        "assertion"
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn c11_verdict(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::DataRace => "data race",
        FailureKind::Panic => "assertion",
        FailureKind::Deadlock => "deadlock",
        FailureKind::Livelock => "livelock",
        FailureKind::Leak => "leak",
        _ => "error",
    }
}

/// One (tool, benchmark) run; prints `RESULT runs extra complete secs kib
/// verdict ops` (`ops`: visible operations of a c11check random run, else 0).
/// For exhaustive tools `runs` counts executions and `extra` the blocked
/// ones; for sampling tools `runs` is the number of seeds and `extra` how
/// many hit the documented bug.
fn child(tool: &str, name: &str, budget: Duration, seeds: u64) {
    let expected = benchmark(name).expect("benchmark").verdict;
    let start = Instant::now();
    let mut ops = 0;
    let (runs, extra, complete, verdict): (u64, u64, bool, String) = match tool {
        "c11check" | "c11check-strong" => {
            let p = c11check_bench::c11::program(name).unwrap();
            let b = Builder::new()
                .max_duration(budget)
                .spurious_failures(tool == "c11check");
            match b.explore(p) {
                Ok(s) => (
                    s.stats.executions + s.stats.blocked,
                    s.stats.blocked,
                    !s.stats.cut,
                    "no bug".into(),
                ),
                Err(r) => (
                    r.execution_number,
                    0,
                    true,
                    c11_verdict(r.failure.kind).into(),
                ),
            }
        }
        "c11check-random" | "c11check-pct" => {
            let p = c11check_bench::c11::program(name).unwrap();
            let b = Builder::new().random(seeds).live().seed(1);
            let b = if tool == "c11check-pct" { b.pct(3) } else { b };
            match b.explore(p) {
                Ok(s) => {
                    ops = s.operations.unwrap_or(0);
                    (seeds, 0, true, "no bug".into())
                }
                Err(r) => {
                    ops = r.operations.unwrap_or(0);
                    // Hits of the documented bug; any other kind of report
                    // is named in the verdict column.
                    let doc = benchmark(name).unwrap();
                    let mut hits = 0;
                    let mut other = None;
                    let mut kinds = vec![(c11_verdict(r.failure.kind), r.hits.map_or(1, |h| h.0))];
                    for (msg, n) in &r.others {
                        let v = if msg.contains("data race") {
                            "data race"
                        } else if msg.contains("deadlock") {
                            "deadlock"
                        } else if msg.contains("panicked") {
                            "assertion"
                        } else {
                            "livelock"
                        };
                        kinds.push((v, *n));
                    }
                    for (v, n) in kinds {
                        let documented = [Verdict::Race, Verdict::Assertion, Verdict::Deadlock]
                            .into_iter()
                            .any(|k| k.as_str() == v && doc.is_documented(k));
                        if documented {
                            hits += n;
                        } else {
                            other = other.or(Some(v));
                        }
                    }
                    let verdict = match other {
                        Some(o) if hits == 0 => o.to_string(),
                        Some(o) => format!("{} + {o}", expected.as_str()),
                        None => expected.as_str().to_string(),
                    };
                    (seeds, hits, true, verdict)
                }
            }
        }
        "loom" => {
            let p = lm::program(name).unwrap();
            let mut b = loom::model::Builder::new();
            b.max_duration = Some(budget);
            let r = catch_unwind(AssertUnwindSafe(|| {
                b.check(move || {
                    STARTED.fetch_add(1, StdOrdering::Relaxed);
                    p()
                })
            }));
            let n = STARTED.load(StdOrdering::Relaxed);
            match r {
                Ok(()) => (n, 0, start.elapsed() < budget, "no bug".into()),
                Err(e) => (n, 0, true, classify(&panic_text(&*e)).into()),
            }
        }
        "shuttle-random" | "shuttle-pct" => {
            let p = sh::program(name).unwrap();
            let mut hits = 0;
            let mut what = None;
            for seed in 0..seeds {
                let cfg = shuttle::Config::new();
                let r = catch_unwind(AssertUnwindSafe(|| {
                    if tool == "shuttle-pct" {
                        let s = shuttle::scheduler::PctScheduler::new_from_seed(seed, 3, 1);
                        shuttle::Runner::new(s, cfg).run(p)
                    } else {
                        let s = shuttle::scheduler::RandomScheduler::new_from_seed(seed, 1);
                        shuttle::Runner::new(s, cfg).run(p)
                    }
                }));
                if let Err(e) = r {
                    hits += 1;
                    what.get_or_insert_with(|| classify(&panic_text(&*e)));
                }
            }
            let verdict = what.unwrap_or("no bug").to_string();
            (seeds, hits, true, verdict)
        }
        _ => panic!("unknown tool {tool}"),
    };
    println!(
        "RESULT {runs} {extra} {complete} {} {} {} {ops}",
        start.elapsed().as_secs_f64(),
        c11check_bench::peak_rss_kib(),
        verdict.replace(' ', "_")
    );
}

struct Row {
    runs: u64,
    extra: u64,
    complete: bool,
    secs: f64,
    kib: u64,
    verdict: String,
    /// Visible operations (c11check random runs).
    ops: u64,
}

fn run_child(exe: &std::path::Path, tool: &str, name: &str, budget: f64, seeds: u64) -> Row {
    let out = Command::new(exe)
        .args([
            "--child",
            tool,
            name,
            &budget.to_string(),
            &seeds.to_string(),
        ])
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&out.stdout);
    match text.lines().find(|l| l.starts_with("RESULT ")) {
        Some(line) => {
            let f: Vec<&str> = line.split_whitespace().collect();
            Row {
                runs: f[1].parse().unwrap(),
                extra: f[2].parse().unwrap(),
                complete: f[3] == "true",
                secs: f[4].parse().unwrap(),
                kib: f[5].parse().unwrap(),
                verdict: f[6].replace('_', " "),
                ops: f.get(7).map_or(0, |o| o.parse().unwrap()),
            }
        }
        None => {
            // The tool died (loom aborts on a panic in a destructor while
            // unwinding from the deadlock it reports): classify its message.
            let err = String::from_utf8_lossy(&out.stderr);
            let lines: Vec<&str> = err.lines().collect();
            let verdict = match lines.iter().position(|l| l.contains("panicked at")) {
                Some(i) => format!(
                    "{} (then {})",
                    classify(lines.get(i + 1).unwrap_or(&"")),
                    out.status
                ),
                None => format!("crashed ({})", out.status),
            };
            Row {
                runs: 0,
                extra: 0,
                complete: true,
                secs: 0.0,
                kib: 0,
                verdict,
                ops: 0,
            }
        }
    }
}

fn mark(verdict: &str, b: &Benchmark) -> &'static str {
    let v = verdict.split(" (then").next().unwrap_or("");
    let kinds = [
        Verdict::NoBug,
        Verdict::Race,
        Verdict::Assertion,
        Verdict::Deadlock,
    ];
    if kinds.iter().any(|&k| k.as_str() == v && b.is_documented(k)) {
        "✓"
    } else {
        "✗"
    }
}

fn main() {
    let args = c11check_bench::bench_args();
    if let Some((tool, name, budget, seeds)) = c11check_bench::child_request(&args) {
        child(tool, name, budget, seeds);
        return;
    }
    let (budget, quick) = c11check_bench::budget_and_quick(&args);
    let seeds: u64 = c11check_bench::flag_value(&args, "--seeds")
        .map_or(if quick { 100 } else { 1000 }, |v| {
            v.parse().expect("--seeds N")
        });
    let names = c11check_bench::plain_args(&args, &["--budget", "--seeds"]);
    let exe = std::env::current_exe().unwrap();
    println!("CDSChecker/C11Tester benchmarks: c11check vs loom 0.7.2 vs shuttle 0.9.9 (exhaustive budget {budget} s; {seeds} seeds per sampling tool, one execution each)");
    println!("Machine: {}", c11check_bench::machine());
    println!();
    println!("| benchmark | documented | c11check: executions (blocked) | time (s) | peak MiB | verdict | c11check random: hit rate | µs/exec | ns/op | c11check PCT(3) | loom: iterations | time (s) | verdict | shuttle random | µs/exec | shuttle PCT(3) |");
    println!("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|");
    for b in BENCHMARKS {
        if !names.is_empty() && !names.contains(&b.name) {
            continue;
        }
        let ex = run_child(&exe, "c11check", b.name, budget, seeds);
        let rnd = run_child(&exe, "c11check-random", b.name, budget, seeds);
        let pct = run_child(&exe, "c11check-pct", b.name, budget, seeds);
        let lo = run_child(&exe, "loom", b.name, budget, seeds);
        let sr = run_child(&exe, "shuttle-random", b.name, budget, seeds);
        let sp = run_child(&exe, "shuttle-pct", b.name, budget, seeds);
        let rate = |r: &Row| {
            if b.verdict == Verdict::NoBug {
                match r.verdict.as_str() {
                    "no bug" => "0 (no bug) ✓".to_string(),
                    v => format!("{v} ✗"),
                }
            } else {
                let pct = 100.0 * r.extra as f64 / r.runs.max(1) as f64;
                let other = r
                    .verdict
                    .strip_prefix(b.verdict.as_str())
                    .filter(|rest| !rest.is_empty())
                    .unwrap_or("");
                if r.verdict == "no bug" || r.extra == 0 {
                    format!("0% ({})", r.verdict)
                } else {
                    format!("{pct:.1}%{other}")
                }
            }
        };
        let exec_count = if ex.verdict == "no bug" {
            format!("{} ({})", ex.runs, ex.extra)
        } else {
            format!("bug in execution {}", ex.runs)
        };
        println!(
            "| {} | {} | {}{} | {:.3} | {:.1} | {} {} | {} | {:.1} | {:.0} | {} | {}{} | {:.2} | {} {} | {} | {:.1} | {} |",
            b.name,
            b.verdict.as_str(),
            exec_count,
            if ex.complete { "" } else { " (budget)" },
            ex.secs,
            ex.kib as f64 / 1024.0,
            ex.verdict,
            mark(&ex.verdict, b),
            rate(&rnd),
            rnd.secs * 1e6 / rnd.runs.max(1) as f64,
            rnd.secs * 1e9 / rnd.ops.max(1) as f64,
            rate(&pct),
            lo.runs,
            if lo.complete { "" } else { " (budget)" },
            lo.secs,
            lo.verdict,
            if lo.complete || lo.verdict != "no bug" {
                mark(&lo.verdict, b)
            } else {
                "?"
            },
            rate(&sr),
            sr.secs * 1e6 / sr.runs.max(1) as f64,
            rate(&sp),
        );
    }
    cdschecker_table(&exe, &names, budget);
}

/// CDSChecker's figures (2013 release, `-y -m 2 -u 3`, this kind of
/// machine): our program, executions, feasible ones, CPU seconds.
const CDSCHECKER: [(&str, u64, u64, f64); 8] = [
    ("chase-lev-fixed", 748, 81, 0.07),
    ("spsc-fixed", 18, 11, 0.01),
    ("barrier", 10, 10, 0.00),
    ("dekker", 19_319, 2_313, 2.01),
    ("mcs-lock", 18_035, 14_017, 2.42),
    ("mpmc", 40_148, 13_028, 5.11),
    ("ms-queue", 272, 114, 0.03),
    ("linuxrw", 54_761, 1_366, 6.61),
];

/// c11check's exhaustive runs against CDSChecker's, each timed five times
/// (this machine's single runs vary by up to 50%): the median.
fn cdschecker_table(exe: &std::path::Path, names: &[&str], budget: f64) {
    let picked = |name: &str| names.is_empty() || names.contains(&name);
    if !CDSCHECKER.iter().any(|c| picked(c.0)) {
        return;
    }
    println!();
    println!("Against CDSChecker: median of five exhaustive runs; \"strong\" treats a weak compare-exchange as strong (no spurious failure), as CDSChecker does");
    println!();
    println!("| benchmark | CDSChecker executions | feasible | CPU (s) | c11check executions | time (s) | speed-up | strong: executions | time (s) | speed-up |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, total, feasible, cpu) in CDSCHECKER {
        if !picked(name) {
            continue;
        }
        let median = |tool: &str| {
            let mut rows: Vec<Row> = (0..5)
                .map(|_| run_child(exe, tool, name, budget, 1))
                .collect();
            rows.sort_by(|a, b| a.secs.total_cmp(&b.secs));
            rows.swap_remove(2)
        };
        let speedup = |r: &Row| {
            if cpu == 0.0 {
                "—".to_string()
            } else {
                format!("{:.1}×", cpu / r.secs)
            }
        };
        let (weak, strong) = (median("c11check"), median("c11check-strong"));
        println!(
            "| {name} | {total} | {feasible} | {cpu:.2} | {} | {:.4} | {} | {} | {:.4} | {} |",
            weak.runs,
            weak.secs,
            speedup(&weak),
            strong.runs,
            strong.secs,
            speedup(&strong),
        );
    }
}
