//! `robustness [--random N] [--live N]`: RSAN's benchmarks
//! (`c11check_bench::rsan`) and the Chase-Lev deques of the benchmark suite
//! checked for robustness against SC, each in a child process of its own:
//! verdict, executions (to the first violation, or all), time, peak memory;
//! with `--random N` also N random executions as graphs (the iteration of
//! the first violation); with `--live N` N live random executions watched
//! by location clocks (the dynamic check), beside N plain live executions
//! (its overhead). The tables of BENCHMARKS.md.

use c11check::model::{Builder, FailureKind};
use c11check_bench::peak_rss_kib;
use std::process::Command;
use std::time::Instant;

fn program(name: &str) -> Option<fn()> {
    if let Some(p) = c11check_bench::rsan::programs()
        .into_iter()
        .find(|p| p.name == name)
    {
        return Some(p.run);
    }
    c11check_bench::c11::program(name)
}

/// How a child runs its program.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Exhaustive,
    /// Random executions as graphs, each checked.
    Graphs(u64),
    /// Live random executions with location clocks.
    Live(u64),
    /// Live random executions, no robustness (the baseline).
    Plain(u64),
}

/// Runs one check and prints `RESULT verdict|executions|secs|kib|repair`
/// (the repair's edits, found in a second run, and its time).
fn child(name: &str, mode: Mode) {
    let p = program(name).expect("program");
    let mut b = Builder::new().robustness();
    b.repair = false;
    let random = match mode {
        Mode::Exhaustive => None,
        Mode::Graphs(n) => {
            b.live = false;
            Some(n)
        }
        Mode::Live(n) => {
            b.live = true;
            Some(n)
        }
        Mode::Plain(n) => {
            b.live = true;
            b.robustness = false;
            Some(n)
        }
    };
    if let Some(n) = random {
        b.random_iterations = Some(n);
    }
    // A live run (plain or not) goes through all N executions, reporting at
    // the end: what is timed is the whole run either way.
    let start = Instant::now();
    let (verdict, runs) = match b.explore(p) {
        Ok(s) => ("robust", s.stats.executions + s.stats.blocked),
        Err(r) if r.failure.kind == FailureKind::NotRobust => (
            "not robust",
            r.random_iteration
                .map_or(r.execution_number, |(i, _)| i + 1),
        ),
        Err(r) => {
            eprintln!("{r}");
            ("other bug", r.execution_number)
        }
    };
    let secs = start.elapsed().as_secs_f64();
    let kib = peak_rss_kib();
    let mut repair = "-".to_string();
    if verdict == "not robust" && random.is_none() {
        let start = Instant::now();
        if let Err(r) = Builder::new().robustness().explore(p) {
            let text = r.failure.message;
            repair = match text.split("Repair (").nth(1) {
                Some(fix) => {
                    let fences = fix.matches("put fence(SeqCst)").count();
                    let orders: Vec<&str> = fix
                        .lines()
                        .filter_map(|l| l.trim().strip_prefix("make the access at "))
                        .filter_map(|l| l.rsplit(' ').next())
                        .collect();
                    let mut parts = Vec::new();
                    if fences > 0 {
                        parts.push(format!("{fences} fence(SeqCst)"));
                    }
                    if !orders.is_empty() {
                        parts.push(orders.join(", "));
                    }
                    format!(
                        "{} ({:.2} s)",
                        parts.join(" + "),
                        start.elapsed().as_secs_f64()
                    )
                }
                None => "none found".to_string(),
            };
        }
    }
    println!("RESULT {verdict}|{runs}|{secs:.3}|{kib}|{repair}");
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        let n = || args[3].parse().expect("iterations");
        let mode = match args[2].as_str() {
            "graphs" => Mode::Graphs(n()),
            "live" => Mode::Live(n()),
            "plain" => Mode::Plain(n()),
            _ => Mode::Exhaustive,
        };
        child(&args[1], mode);
        return;
    }
    let flag = |name: &str| -> Option<u64> {
        args.iter()
            .position(|a| a == name)
            .map(|i| args[i + 1].parse().unwrap_or_else(|_| panic!("{name} N")))
    };
    let random = flag("--random");
    let live = flag("--live");
    let mut names: Vec<(String, Option<bool>, String)> = c11check_bench::rsan::programs()
        .into_iter()
        .map(|p| (p.name.to_string(), Some(p.robust), p.what.to_string()))
        .collect();
    for n in ["chase-lev-fixed", "chase-lev"] {
        names.push((
            n.to_string(),
            None,
            "CDSChecker's Chase-Lev deque port".into(),
        ));
    }
    let exe = std::env::current_exe().expect("own path");
    let run = |name: &str, mode: Mode| -> Vec<String> {
        let mut cmd = Command::new(&exe);
        cmd.args(["--child", name]);
        match mode {
            Mode::Exhaustive => cmd.args(["exhaustive", "0"]),
            Mode::Graphs(n) => cmd.args(["graphs", &n.to_string()]),
            Mode::Live(n) => cmd.args(["live", &n.to_string()]),
            Mode::Plain(n) => cmd.args(["plain", &n.to_string()]),
        };
        let out = cmd.output().expect("child");
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .map(|l| l.split('|').map(String::from).collect())
            .unwrap_or_else(|| {
                vec![
                    "crashed".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                ]
            })
    };
    print!("| program | expected | exhaustive: verdict | executions | time (s) | peak KiB | repair found (its time) |");
    if random.is_some() {
        print!(" random: verdict | to first violation | time (s) |");
    }
    if live.is_some() {
        print!(" live: verdict | first violation at | time (s) | peak KiB | plain live (s) | overhead |");
    }
    println!();
    print!("|---|---|---|---:|---:|---:|---|");
    if random.is_some() {
        print!("---|---:|---:|");
    }
    if live.is_some() {
        print!("---|---:|---:|---:|---:|---:|");
    }
    println!();
    for (name, robust, _) in &names {
        let e = run(name, Mode::Exhaustive);
        let expected = match robust {
            Some(true) => "robust",
            Some(false) => "not robust",
            None => "-",
        };
        print!(
            "| {name} | {expected} | {} | {} | {} | {} | {} |",
            e[0], e[1], e[2], e[3], e[4]
        );
        if let Some(n) = random {
            let r = run(name, Mode::Graphs(n));
            let first = if r[0] == "not robust" {
                r[1].clone()
            } else {
                "-".into()
            };
            print!(" {} | {} | {} |", r[0], first, r[2]);
        }
        if let Some(n) = live {
            let r = run(name, Mode::Live(n));
            let plain = run(name, Mode::Plain(n));
            let first = if r[0] == "not robust" {
                r[1].clone()
            } else {
                "-".into()
            };
            let ratio = match (r[2].parse::<f64>(), plain[2].parse::<f64>()) {
                (Ok(a), Ok(b)) if b > 0.0 => format!("{:.2}x", a / b),
                _ => "-".into(),
            };
            print!(
                " {} | {} | {} | {} | {} | {ratio} |",
                r[0], first, r[2], r[3], plain[2]
            );
        }
        println!();
    }
}
