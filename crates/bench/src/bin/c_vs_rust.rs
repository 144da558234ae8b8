//! The C front end against the Rust API on the same programs: GenMC's
//! `synthetic/fib_bench` and `synthetic/lastzero`, each run as the C
//! program (`c11check cc -O1`, run as it is) and as its Rust port (the
//! same threads and operations through `c11check`'s API), each in a child
//! process under `/usr/bin/time` for its wall time and peak memory. Prints
//! executions, times, time per execution and the C/Rust ratio.
//!
//! ```sh
//! cargo build --release -p c11check-cli -p c11check-c-runtime -p c11check-bench
//! target/release/c-vs-rust [--runs N]     # best of N runs each (default 3)
//! ```
//!
//! Needs `../shared/genmc-tests` (or `C11CHECK_GENMC_TESTS`), gcc (or
//! `C11CHECK_CC`) and `/usr/bin/time`.

use c11check::model::Builder;
use c11check::sync::atomic::{AtomicI32, Ordering::*};
use c11check::thread;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// `fib_bench` with `NUM` = 5: two threads add `x` and `y` into one of
/// them five times, a third checks neither passed 144.
fn fib_bench() -> (u64, u64) {
    run(|| {
        let x = Arc::new(AtomicI32::new(1));
        let y = Arc::new(AtomicI32::new(1));
        let (x1, y1, x2, y2, x3, y3) = (x.clone(), y.clone(), x.clone(), y.clone(), x, y);
        let a = thread::spawn(move || {
            for _ in 0..5 {
                let (px, py) = (x1.load(Acquire), y1.load(Acquire));
                x1.store(px + py, Release);
            }
        });
        let b = thread::spawn(move || {
            for _ in 0..5 {
                let (px, py) = (x2.load(Acquire), y2.load(Acquire));
                y2.store(px + py, Release);
            }
        });
        let c = thread::spawn(move || {
            assert!(x3.load(Acquire) <= 144 && y3.load(Acquire) <= 144);
        });
        for t in [a, b, c] {
            t.join().unwrap();
        }
    })
}

/// `lastzero` with `N` = 15: a reader looks for the last 0 in an array
/// from the end; writer `j` sets element `j` to element `j - 1` plus one.
fn lastzero() -> (u64, u64) {
    const N: usize = 15;
    run(|| {
        let array: Arc<Vec<AtomicI32>> = Arc::new((0..=N).map(|_| AtomicI32::new(0)).collect());
        let mut threads = Vec::new();
        let a = array.clone();
        threads.push(thread::spawn(move || {
            let mut i = N;
            while a[i].load(Acquire) != 0 {
                i -= 1;
            }
        }));
        for j in 1..=N {
            let a = array.clone();
            threads.push(thread::spawn(move || {
                a[j].store(a[j - 1].load(Acquire) + 1, Release);
            }));
        }
        for t in threads {
            t.join().unwrap();
        }
    })
}

/// Explores `f` exhaustively: (executions, blocked).
fn run(f: impl Fn() + Send + Sync + 'static) -> (u64, u64) {
    let s = Builder::new().explore(f).unwrap_or_else(|r| panic!("{r}"));
    (s.stats.executions, s.blocked)
}

/// The programs: name, GenMC test directory, variant, `-D` flag.
const PROGRAMS: &[(&str, &str, &str, &str)] = &[
    (
        "fib_bench",
        "synthetic/fib_bench",
        "fib_bench0.c",
        "-DNUM=5",
    ),
    ("lastzero", "synthetic/lastzero", "lastzero0.c", "-DN=15"),
];

fn genmc_tests() -> PathBuf {
    std::env::var_os("C11CHECK_GENMC_TESTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/genmc-tests/correct")
        })
}

/// A program to time: its path, arguments, and how to read its count of
/// executions from its stderr.
type Contender<'a> = (&'a Path, &'a [&'a str], &'a dyn Fn(&str) -> u64);

/// One timed child run: (wall seconds, peak KiB, its stderr).
fn timed(cmd: &Path, args: &[&str]) -> (f64, u64, String) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "c-vs-rust-time %e %M"])
        .arg(cmd)
        .args(args)
        .output()
        .expect("/usr/bin/time");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let line = err
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("c-vs-rust-time "))
        .unwrap_or_else(|| panic!("no timing in:\n{err}"));
    let mut parts = line.split_whitespace();
    let secs = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let kib = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    (secs, kib, err)
}

/// The executions a C program's summary line reports.
fn c_executions(err: &str) -> u64 {
    err.lines()
        .find_map(|l| l.strip_prefix("c11check: no bug found in "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no verdict in:\n{err}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let (n, b) = match args[1].as_str() {
            "fib_bench" => fib_bench(),
            "lastzero" => lastzero(),
            other => panic!("unknown program {other}"),
        };
        eprintln!("c-vs-rust-executions {n} {b}");
        return;
    }
    let runs: usize =
        c11check_bench::flag_value(&args, "--runs").map_or(3, |v| v.parse().expect("--runs N"));
    let me = std::env::current_exe().expect("own path");
    let (c11check, dir) = c11check_bench::c11check_and_scratch("c-vs-rust");
    println!("{}", c11check_bench::machine());
    println!("best of {runs} runs each, taken in turns; C built with `c11check cc -O1`, the runtime static (the default) or shared (`--shared-runtime`)\n");
    println!("| program | executions | C shared: time, peak | C static: time, peak | Rust port: time, peak | µs/execution C shared, static, Rust | C / Rust: shared, static |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for &(name, test, variant, define) in PROGRAMS {
        let src = genmc_tests().join(test).join("variants").join(variant);
        let build = |exe: &Path, extra: &[&str]| {
            let built = Command::new(&c11check)
                .arg("cc")
                .args(extra)
                .args(["-O1", define])
                .arg(&src)
                .arg("-o")
                .arg(exe)
                .status()
                .expect("c11check cc");
            assert!(built.success(), "building {}", src.display());
        };
        let shared = dir.join(name);
        let statik = dir.join(format!("{name}-static"));
        build(&shared, &["--shared-runtime"]);
        build(&statik, &[]);
        let rust_count = |err: &str| {
            err.lines()
                .find_map(|l| l.strip_prefix("c-vs-rust-executions "))
                .and_then(|l| l.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no count in:\n{err}"))
        };
        // (program, arguments, how to read its count): run in turns, so
        // that a slow minute of a shared machine hits all three alike.
        let child = ["--child", name];
        let contenders: [Contender; 3] = [
            (&shared, &[], &c_executions),
            (&statik, &[], &c_executions),
            (&me, &child, &rust_count),
        ];
        let mut best: [Option<(f64, u64, u64)>; 3] = [None; 3];
        for _ in 0..runs {
            for (i, (cmd, args, count)) in contenders.iter().enumerate() {
                let (secs, kib, err) = timed(cmd, args);
                let n = count(&err);
                if best[i].is_none_or(|b| secs < b.0) {
                    best[i] = Some((secs, kib, n));
                }
            }
        }
        let [(c_secs, c_kib, c_n), (s_secs, s_kib, s_n), (r_secs, r_kib, r_n)] =
            best.map(|b| b.expect("at least one run"));
        assert_eq!(c_n, s_n, "shared and static runtimes disagree on {name}");
        let per = |secs: f64, n: u64| secs * 1e6 / n.max(1) as f64;
        let mb = |kib: u64| kib as f64 / 1024.0;
        println!(
            "| `{name}` ({define}) | {c_n} (Rust: {r_n}) | {c_secs:.2} s, {:.0} MB | {s_secs:.2} s, {:.0} MB | {r_secs:.2} s, {:.0} MB | {:.1}, {:.1}, {:.1} | {:.2}, {:.2} |",
            mb(c_kib),
            mb(s_kib),
            mb(r_kib),
            per(c_secs, c_n),
            per(s_secs, s_n),
            per(r_secs, r_n),
            per(c_secs, c_n) / per(r_secs, r_n),
            per(s_secs, s_n) / per(r_secs, r_n)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
