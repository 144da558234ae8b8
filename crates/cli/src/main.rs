//! `c11check`: the command line.

use c11check_axiomatic::AxModel;
use c11check_litmus::expect::{herd_expectation, own_expectation, Expectation};
use c11check_litmus::run::run_test_brute;
use c11check_litmus::{load, run_test, RunOptions};
use c11check_model::Model;
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

mod merge;
mod programs;

#[derive(Parser)]
#[command(
    name = "c11check",
    version,
    about = "Finds concurrency bugs under the C/C++20 memory model"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run herd7-style C litmus tests (files, or directories searched for *.litmus).
    Litmus(LitmusArgs),
    /// Compile and/or link a C program for checking (a drop-in `CC`): adds
    /// `-fsanitize=thread -g` and c11check's headers (`genmc.h`), and links
    /// c11check's runtime. `--cdschecker` first: CDSChecker's headers
    /// (`threads.h` with `user_main`, `model-assert.h`, `librace.h`);
    /// The runtime is linked statically (faster), except into a shared
    /// library; `--shared-runtime` first (or `C11CHECK_STATIC_RUNTIME=0`)
    /// links `libc11check_rt.so` instead (needed when the program loads
    /// shared libraries built with `c11check cc -shared`).
    #[command(name = "cc", disable_help_flag = true)]
    Cc {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The same for C++ (a drop-in `CXX`).
    #[command(name = "c++", disable_help_flag = true)]
    Cxx {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Check a program built with `c11check cc`: explore its executions and
    /// report the first bug. Exit status 0: no bug, 1: a bug, 2: bad usage.
    Run(programs::RunArgs),
    /// Add up the `--json` summaries of a run's shards (`--shard I/N` on
    /// several machines) into the one summary of the whole run. Exit
    /// status 2 when a shard is missing, given twice, or not a summary.
    Merge(merge::MergeArgs),
    /// Make the runtime's static library (for linking by hand: `cc prog.o
    /// libc11check_rt.a -pthread -ldl -lgcc_s -lm`) and print its path.
    StaticRuntime {
        /// Copy it here instead of printing where it is.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct LitmusArgs {
    /// Litmus files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Memory model: cpp20 (default), rc11, sc, mca (C++20 on
    /// multi-copy-atomic hardware such as ARMv8), tso (C++20 compiled for
    /// x86-64, under x86-TSO); or c11 (original C11 with load buffering,
    /// brute-force engine only).
    #[arg(long, default_value = "cpp20")]
    model: String,
    /// Enumerate every candidate execution and judge it by the model's
    /// axioms, written independently of the explorer (an oracle for
    /// litmus-sized tests; exponential beyond them).
    #[arg(long)]
    brute_force: bool,
    /// Print one JSON object per test instead of herd-style text.
    #[arg(long)]
    json: bool,
    /// Iterations a `while` loop may run before the thread is cut.
    #[arg(long, default_value_t = 3)]
    loop_bound: u32,
    /// Stop each test after this many executions.
    #[arg(long)]
    max_executions: Option<u64>,
    /// Explore only the executions a schedule reaches preempting threads at
    /// most this many times (loom's and GenMC's context bound).
    #[arg(long, value_name = "K", conflicts_with = "random")]
    preemption_bound: Option<u32>,
    /// Explore only shard I of N (from 1): the shards 1/N … N/N, run on
    /// as many machines (a CI matrix), together explore each execution
    /// exactly once; `c11check merge` adds up their `--json` summaries.
    /// With `--random`, a shard runs every Nth chunk of 16 iterations (the
    /// shards together run the whole run's iterations, each once).
    /// Default: `C11CHECK_SHARD`.
    #[arg(long, value_name = "I/N", conflicts_with = "robustness")]
    shard: Option<c11check_litmus::Shard>,
    /// Worker threads (default: `C11CHECK_JOBS`, else the machine's
    /// available parallelism): an exhaustive run hands pending graphs to
    /// them, a random run chunks of 16 iterations. Counts and states are
    /// the same with any number.
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Run this many random executions instead of all of them (each
    /// consistent; the states found are a subset of the exhaustive ones).
    #[arg(long, value_name = "N")]
    random: Option<u64>,
    /// Run the random executions on the live memory (C11Tester's
    /// operational model: no execution graph, bounded memory; SeqCst
    /// operations ordered as executed). The default; kept for scripts.
    #[arg(long, requires = "random", conflicts_with = "graph")]
    live: bool,
    /// Run the random executions as execution graphs instead of on the
    /// live memory (slower; every outcome of a small test reachable).
    #[arg(long, requires = "random")]
    graph: bool,
    /// Seed of a random run.
    #[arg(long, default_value_t = 0xC11C)]
    seed: u64,
    /// Stop each test after this many seconds.
    #[arg(long)]
    timeout: Option<f64>,
    /// Directory of herd7 outputs to compare with (same relative paths, `.txt`);
    /// without it, `@` expectation lines inside the tests are used.
    #[arg(long)]
    expected: Option<PathBuf>,
    /// Print only the summary table.
    #[arg(long, short)]
    quiet: bool,
    /// Check robustness against SC instead: whether every execution the
    /// model allows (with every modification order it allows) is
    /// sequentially consistent; a violation is shown as a po/rf/mo/fr cycle.
    /// Exits with 1 when a test is not robust (or differs from its
    /// `@robust` line).
    #[arg(long, conflicts_with_all = ["random", "preemption_bound"])]
    robustness: bool,
    /// List, per test, the final states `--model` allows and this model
    /// does not, and the other way round (e.g. `--model cpp20 --compare
    /// mca`: the outcomes a multi-copy-atomic machine cannot show).
    #[arg(
        long,
        value_name = "MODEL",
        conflicts_with_all = ["random", "robustness", "brute_force"]
    )]
    compare: Option<String>,
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            if e.is_dir() || e.extension().is_some_and(|x| x == "litmus") {
                collect(&e, out)?;
            }
        }
    } else {
        out.push(path.to_path_buf());
    }
    Ok(())
}

struct Row {
    name: String,
    verdict: String,
    states: usize,
    executions: u64,
    blocked: u64,
    ms: f64,
    check: String,
}

fn litmus(args: LitmusArgs) -> ExitCode {
    let unknown = || {
        eprintln!(
            "error: unknown model '{}' (expected {}, or c11 for the brute-force engine)",
            args.model,
            Model::names()
        );
        ExitCode::from(2)
    };
    // `c11` exists only as a brute-force definition.
    let brute_model = if args.brute_force || args.model.eq_ignore_ascii_case("c11") {
        match AxModel::from_name(&args.model) {
            Some(m) => Some(m),
            None => return unknown(),
        }
    } else {
        None
    };
    let brute = brute_model.is_some();
    let model = if brute {
        Model::Rc11
    } else if let Some(m) = Model::from_name(&args.model) {
        m
    } else {
        return unknown();
    };
    let opts = RunOptions {
        model,
        loop_bound: args.loop_bound,
        max_executions: args.max_executions,
        time_budget: args.timeout.map(Duration::from_secs_f64),
        random: args.random.map(|n| (n, args.seed)),
        live: !args.graph,
        refcount_order_from_file: true,
        preemption_bound: args.preemption_bound,
        shard: match args.shard {
            Some(s) => Some(s),
            None => match std::env::var("C11CHECK_SHARD") {
                Ok(v) => match v.parse() {
                    Ok(s) => Some(s),
                    Err(e) => {
                        eprintln!("c11check: C11CHECK_SHARD: {e}");
                        return ExitCode::from(2);
                    }
                },
                Err(_) => None,
            },
        },
        jobs: match jobs(args.jobs) {
            Ok(n) => n,
            Err(e) => {
                eprintln!("c11check: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
    for p in &args.paths {
        let mut v = Vec::new();
        if let Err(e) = collect(p, &mut v) {
            eprintln!("{}: cannot read: {e}", p.display());
            return ExitCode::from(2);
        }
        let root = if p.is_dir() {
            p.clone()
        } else {
            p.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        files.extend(v.into_iter().map(|f| (root.clone(), f)));
    }
    if let Some(other) = &args.compare {
        let Some(other) = Model::from_name(other) else {
            eprintln!(
                "error: unknown model '{other}' to compare with (expected {})",
                Model::names()
            );
            return ExitCode::from(2);
        };
        return compare_models(&files, &opts, other, args.json);
    }
    let mut rows = Vec::new();
    let (mut errors, mut mismatches, mut checked) = (0, 0, 0);
    let many = files.len() > 1;
    for (root, f) in &files {
        let test = match load(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{e}");
                if args.json {
                    // One object per file, the malformed ones included.
                    println!(
                        "{}",
                        serde_json::json!({ "file": f.display().to_string(), "error": e.to_string() })
                    );
                }
                errors += 1;
                rows.push(Row {
                    name: f.display().to_string(),
                    verdict: "error".into(),
                    states: 0,
                    executions: 0,
                    blocked: 0,
                    ms: 0.0,
                    check: "parse error".into(),
                });
                continue;
            }
        };
        if args.robustness {
            if brute {
                eprintln!("error: --robustness needs cpp20, rc11 or sc, not c11");
                return ExitCode::from(2);
            }
            let r = c11check_litmus::repair::check_and_repair(&test, &opts);
            let check = match std::fs::read_to_string(f)
                .ok()
                .map(|src| own_expectation(&src, &args.model))
                .filter(|e| e.robust.is_some())
            {
                // With no `@robust` line to compare with, a test that is not
                // (or not known to be) robust fails the run.
                None if r.robust() != Some(true) => {
                    mismatches += 1;
                    "not robust".to_string()
                }
                None => "-".to_string(),
                Some(e) => {
                    checked += 1;
                    match e.robust_mismatch(&r) {
                        None => "match".to_string(),
                        Some(m) => {
                            mismatches += 1;
                            eprintln!("MISMATCH {}: {m}", f.display());
                            format!("MISMATCH: {m}")
                        }
                    }
                }
            };
            if args.json {
                println!("{}", r.json());
            } else if !args.quiet {
                print!("{}", r.text());
                if many {
                    println!();
                }
            }
            rows.push(Row {
                name: r.name.clone(),
                verdict: format!("robust {}", r.verdict.name()),
                states: 0,
                executions: r.executions,
                blocked: 0,
                ms: r.stats.elapsed.as_secs_f64() * 1e3,
                check,
            });
            continue;
        }
        let report = if brute {
            match run_test_brute(
                &test,
                brute_model.expect("a brute-force model"),
                args.loop_bound,
            ) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{}: {e}", f.display());
                    errors += 1;
                    continue;
                }
            }
        } else {
            run_test(&test, &opts)
        };
        let expectation: Option<Result<Expectation, String>> = match &args.expected {
            // A shard sees part of the states: `c11check merge` adds them up.
            _ if opts.shard.is_some() => None,
            Some(dir) => herd_expectation(root, f, dir),
            None => std::fs::read_to_string(f)
                .ok()
                .map(|src| own_expectation(&src, &args.model))
                .filter(|e| !e.is_empty())
                .map(Ok),
        };
        let check = match &expectation {
            None => "-".to_string(),
            Some(Err(_)) => "no reference".to_string(),
            Some(Ok(e)) => {
                checked += 1;
                let m = e.mismatches(&report);
                if m.is_empty() {
                    "match".to_string()
                } else {
                    mismatches += 1;
                    eprintln!("MISMATCH {}: {}", f.display(), m.join("; "));
                    format!("MISMATCH: {}", m.join("; "))
                }
            }
        };
        if args.json {
            println!("{}", report.json());
        } else if !args.quiet {
            print!("{}", report.herd_text());
            if many {
                println!();
            }
        }
        rows.push(Row {
            name: report.name.clone(),
            verdict: format!(
                "{}{}",
                if report.ok { "Ok" } else { "No" },
                if report.race { " +race" } else { "" }
            ),
            states: report.states.len(),
            executions: report.stats.executions,
            blocked: report.stats.blocked,
            ms: report.stats.elapsed.as_secs_f64() * 1e3,
            check,
        });
    }
    if many && !args.json {
        let w = rows.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
        println!(
            "{:<w$}  {:<10} {:>6} {:>10} {:>7} {:>9}  check",
            "test", "verdict", "states", "executions", "blocked", "ms"
        );
        for r in &rows {
            println!(
                "{:<w$}  {:<10} {:>6} {:>10} {:>7} {:>9.2}  {}",
                r.name, r.verdict, r.states, r.executions, r.blocked, r.ms, r.check
            );
        }
        let total_exec: u64 = rows.iter().map(|r| r.executions).sum();
        let total_ms: f64 = rows.iter().map(|r| r.ms).sum();
        println!(
            "{} tests, {} checked against expectations, {} mismatches, {} errors; {} executions in {:.1} ms ({:.0} executions/s); model {}",
            rows.len(),
            checked,
            mismatches,
            errors,
            total_exec,
            total_ms,
            total_exec as f64 / (total_ms / 1e3).max(1e-9),
            args.model
        );
    }
    if errors > 0 {
        ExitCode::from(2)
    } else if mismatches > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Litmus(a) => litmus(a),
        Command::Cc { args } => programs::cc(args, false),
        Command::Cxx { args } => programs::cc(args, true),
        Command::Run(a) => programs::run_program(a),
        Command::Merge(a) => merge::merge(a),
        Command::StaticRuntime { output } => programs::static_runtime_command(output),
    }
}

/// `--compare`: each test's final states under `opts.model` and under
/// `other`, and those only one of them allows (marked `*` when they satisfy
/// the test's condition). Exits with 2 when a file cannot be read, else 0.
fn compare_models(
    files: &[(PathBuf, PathBuf)],
    opts: &RunOptions,
    other: Model,
    json: bool,
) -> ExitCode {
    let mine = opts.model;
    let other_opts = RunOptions {
        model: other,
        ..opts.clone()
    };
    let mut errors = 0;
    let mut differing = 0;
    for (_, f) in files {
        let test = match load(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{e}");
                errors += 1;
                continue;
            }
        };
        let a = run_test(&test, opts);
        let b = run_test(&test, &other_opts);
        let holds = |vals: &Vec<i64>| {
            a.condition.prop.eval(&|k| {
                let i = a.keys.iter().position(|x| x == k).expect("a key");
                vals[i]
            })
        };
        let only = |x: &c11check_litmus::run::TestReport, y: &c11check_litmus::run::TestReport| {
            x.states
                .keys()
                .filter(|v| !y.states.contains_key(*v))
                .cloned()
                .collect::<Vec<_>>()
        };
        let (only_a, only_b) = (only(&a, &b), only(&b, &a));
        differing += (!only_a.is_empty() || !only_b.is_empty()) as u32;
        if json {
            let list = |v: &[Vec<i64>]| -> Vec<serde_json::Value> {
                v.iter()
                    .map(|s| serde_json::json!({ "state": a.state_line(s), "condition": holds(s) }))
                    .collect()
            };
            println!(
                "{}",
                serde_json::json!({
                    "name": a.name,
                    "file": f.display().to_string(),
                    "models": [mine.name(), other.name()],
                    "states": [a.states.len(), b.states.len()],
                    "executions": [a.stats.executions, b.stats.executions],
                    format!("only_{}", mine.name()): list(&only_a),
                    format!("only_{}", other.name()): list(&only_b),
                })
            );
            continue;
        }
        println!(
            "{}: {} states under {mine} ({} executions), {} under {other} ({} executions)",
            a.name,
            a.states.len(),
            a.stats.executions,
            b.states.len(),
            b.stats.executions
        );
        for (model, states) in [(mine, &only_a), (other, &only_b)] {
            if states.is_empty() {
                continue;
            }
            println!("  only under {model}:");
            for v in states {
                let mark = if holds(v) { "*" } else { " " };
                println!("  {mark} {}", a.state_line(v));
            }
        }
    }
    if !json {
        println!(
            "{} tests, {differing} with states only one of {mine} and {other} allows{}",
            files.len(),
            if differing > 0 {
                " (* the test's condition holds)"
            } else {
                ""
            }
        );
    }
    if errors > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The worker threads to use: `--jobs`, else `C11CHECK_JOBS`, else the
/// machine's available parallelism.
fn jobs(flag: Option<usize>) -> Result<usize, String> {
    let n = match flag {
        Some(n) => n,
        None => match std::env::var("C11CHECK_JOBS") {
            Ok(v) => v
                .trim()
                .parse()
                .map_err(|_| format!("C11CHECK_JOBS={v:?} is not a number of worker threads"))?,
            Err(_) => std::thread::available_parallelism().map_or(1, |n| n.get()),
        },
    };
    if n == 0 {
        return Err("the number of jobs must be at least 1".into());
    }
    Ok(n)
}
