//! GenMC's data-structure programs with spin loops and locks, and two
//! without loops, under GenMC and c11check in the same run: complete and
//! blocked executions, wall time (median of `--runs`, taken in turns) and
//! peak memory.
//!
//! `target/release/genmc-vs --genmc PATH/TO/genmc [--runs N] [NAME...]`
//! (or `GENMC=...`). GenMC runs with the flags its own test suite gives
//! each program (`args.rc11.mo.in`) and `-rc11`; c11check runs the program
//! built with `c11check cc -O1`, with `C11CHECK_MODEL=rc11` and liveness
//! off (GenMC's default), no loop bound, and a budget of 60 s. GenMC's
//! wall time includes its clang front end (about 0.05 s); c11check's,
//! loading the runtime.

use std::path::{Path, PathBuf};
use std::process::Command;

/// (name, directory under `correct/`, variant, compiler flags, GenMC flags).
const PROGRAMS: &[(&str, &str, &str, &str, &str)] = &[
    ("spinlock", "data-structures/spinlock", "main0.c", "", ""),
    (
        "spinlock N=4",
        "data-structures/spinlock",
        "main0.c",
        "-DN=4",
        "",
    ),
    (
        "ttaslock",
        "data-structures/ttaslock",
        "ttaslock0.c",
        "",
        "-disable-ipr -disable-sr",
    ),
    (
        "ticketlock",
        "data-structures/ticketlock",
        "main0.c",
        "",
        "",
    ),
    ("twalock", "data-structures/twalock", "main0.c", "", ""),
    (
        "twalock N=3",
        "data-structures/twalock",
        "main0.c",
        "-DN=3",
        "",
    ),
    (
        "mcs_spinlock",
        "data-structures/mcs_spinlock",
        "main0.c",
        "-DN=2",
        "-disable-ipr -disable-sr -unroll=3",
    ),
    (
        "mcs_spinlock N=3",
        "data-structures/mcs_spinlock",
        "main0.c",
        "-DN=3",
        "-disable-ipr -disable-sr -unroll=3",
    ),
    ("mutex", "data-structures/mutex", "main0.c", "", ""),
    ("mutex N=3", "data-structures/mutex", "main0.c", "-DN=3", ""),
    (
        "linuxrwlocks RDWR=2",
        "data-structures/linuxrwlocks",
        "linuxrwlocks0.c",
        "-DCONFIG_RWLOCK_READERS=0 -DCONFIG_RWLOCK_WRITERS=0 -DCONFIG_RWLOCK_RDWR=2",
        "-unroll=3",
    ),
    (
        "mpmc-queue",
        "data-structures/mpmc-queue",
        "main0.c",
        "",
        "-unroll=3",
    ),
    (
        "fcombiner-async",
        "data-structures/fcombiner-async",
        "main0.c",
        "",
        "",
    ),
    (
        "treiber-stack",
        "data-structures/treiber-stack",
        "main0.c",
        "",
        "",
    ),
    (
        "ms-queue-dynamic RDWR=2",
        "data-structures/ms-queue-dynamic",
        "main0.c",
        "-DCONFIG_QUEUE_WRITERS=0 -DCONFIG_QUEUE_READERS=0 -DCONFIG_QUEUE_RDWR=2",
        "-unroll=3",
    ),
    (
        "barrier",
        "data-structures/barrier",
        "barrier0.c",
        "",
        "-unroll=3",
    ),
    ("big0 (no loops)", "synthetic/big0", "big00.c", "", ""),
    (
        "fib_bench NUM=5 (no loops)",
        "synthetic/fib_bench",
        "fib_bench0.c",
        "-DNUM=5",
        "",
    ),
];

/// c11check's time budget per program (`C11CHECK_MAX_DURATION`): a run
/// cut short says so in the table.
const LIMIT_SECS: &str = "60";

fn genmc_tests() -> PathBuf {
    std::env::var_os("C11CHECK_GENMC_TESTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/genmc-tests/correct")
        })
}

/// One timed child run: (wall seconds, peak KiB, its output); the peak
/// from `/usr/bin/time`, the time (to the millisecond) around it.
fn timed(cmd: &mut Command) -> (f64, u64, String) {
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
    let envs: Vec<_> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .collect();
    let started = std::time::Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "genmc-vs-time %e %M"])
        .arg(program)
        .args(args)
        .envs(envs)
        .output()
        .expect("/usr/bin/time");
    let wall = started.elapsed().as_secs_f64();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("genmc-vs-time "))
        .unwrap_or_else(|| panic!("no timing in:\n{text}"));
    let kib = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (wall, kib, text)
}

/// The number after `prefix` on the line that starts with it.
fn number_after(text: &str, prefix: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(prefix))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.trim_end_matches(',').parse().ok())
}

/// (complete, blocked) as GenMC reports them.
fn genmc_counts(text: &str) -> (u64, u64) {
    let complete = number_after(text, "Number of complete executions explored:")
        .unwrap_or_else(|| panic!("no GenMC verdict in:\n{text}"));
    (
        complete,
        number_after(text, "Number of blocked executions seen:").unwrap_or(0),
    )
}

/// (complete, blocked) as c11check reports them: "N executions (M blocked)".
fn c11check_counts(text: &str) -> (u64, u64) {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("c11check: no bug found in "))
        .unwrap_or_else(|| panic!("no c11check verdict in:\n{text}"));
    let complete = line.split_whitespace().next().and_then(|n| n.parse().ok());
    let blocked = line
        .split_once('(')
        .and_then(|(_, r)| r.split_whitespace().next())
        .and_then(|n| n.parse().ok());
    (complete.unwrap_or(0), blocked.unwrap_or(0))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize =
        c11check_bench::flag_value(&args, "--runs").map_or(3, |v| v.parse().expect("--runs N"));
    let genmc = c11check_bench::flag_value(&args, "--genmc")
        .or_else(|| std::env::var("GENMC").ok())
        .map(PathBuf::from);
    let Some(genmc) = genmc.filter(|g| g.is_file()) else {
        eprintln!("genmc-vs: give GenMC's binary with --genmc PATH (or GENMC=PATH); GenMC v0.10.3 builds with LLVM 14 (autoreconf; ./configure; make)");
        std::process::exit(2);
    };
    let names = c11check_bench::plain_args(&args, &["--runs", "--genmc"]);
    let (c11check, dir) = c11check_bench::c11check_and_scratch("genmc-vs");
    let include = genmc
        .parent()
        .map(|p| p.join("include"))
        .unwrap_or_default();
    println!("{}", c11check_bench::machine());
    println!("median of {runs} runs each, the two tools in turns\n");
    println!("| program | GenMC flags | GenMC: complete (blocked) | c11check: complete (blocked) | GenMC time, peak | c11check time, peak | c11check / GenMC time |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (i, &(name, test, variant, defines, flags)) in PROGRAMS.iter().enumerate() {
        if !names.is_empty() && !names.iter().any(|n| name.contains(n)) {
            continue;
        }
        let test_dir = genmc_tests().join(test);
        let src = test_dir.join("variants").join(variant);
        let defines: Vec<&str> = defines.split_whitespace().collect();
        let exe = dir.join(format!("p{i}"));
        let built = Command::new(&c11check)
            .args(["cc", "-O1", "-w", "-include", "stdint.h"])
            .arg(format!("-I{}", test_dir.display()))
            .args(&defines)
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .status()
            .expect("c11check cc");
        assert!(built.success(), "building {}", src.display());
        let mut genmc_cmd = Command::new(&genmc);
        genmc_cmd
            .arg("-rc11")
            .args(flags.split_whitespace())
            .arg("--")
            .arg(format!("-I{}", include.display()))
            .arg(format!("-I{}", test_dir.display()))
            .args(&defines)
            .arg(&src);
        let mut ours = Command::new(&exe);
        ours.envs([
            ("C11CHECK_MODEL", "rc11"),
            ("C11CHECK_LIVELOCKS", "0"),
            ("C11CHECK_JOBS", "1"),
            ("C11CHECK_MAX_DURATION", LIMIT_SECS),
        ]);
        let (mut g_secs, mut c_secs) = (Vec::new(), Vec::new());
        let (mut g_kib, mut c_kib) = (0, 0);
        let (mut g_n, mut c_n) = ((0, 0), (0, 0));
        let mut cut_short = false;
        for _ in 0..runs {
            let (s, k, text) = timed(&mut genmc_cmd);
            g_n = genmc_counts(&text);
            g_secs.push(s);
            g_kib = g_kib.max(k);
            let (s, k, text) = timed(&mut ours);
            c_n = c11check_counts(&text);
            cut_short |= text.contains("stopped early");
            c_secs.push(s);
            c_kib = c_kib.max(k);
        }
        let (g, c) = (median(g_secs), median(c_secs));
        let more = if cut_short {
            format!(" (unfinished at {LIMIT_SECS} s)")
        } else {
            String::new()
        };
        println!(
            "| {name} | `{}` | {} ({}) | {}{more} ({}) | {g:.3} s, {} MiB | {c:.3} s, {} MiB | {:.2} |",
            if flags.is_empty() { "-rc11" } else { flags },
            g_n.0,
            g_n.1,
            c_n.0,
            c_n.1,
            g_kib / 1024,
            c_kib / 1024,
            c / g
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
