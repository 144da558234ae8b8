//! `bound`: what a preemption bound costs. Each program of the benchmark
//! suite that passes (and a 3-thread counter) is explored with no bound and
//! within bounds 0..=3 in the same run: executions, time, and the time as a
//! ratio to the unbounded run's. A bound must make exploration cheaper: it
//! explores a subset of the executions.
//!
//! Usage: `bound [--runs N] [--jobs N] [--bound K|none] [NAME...]` (the best of N
//! runs, 3; only bound K, for profiling; `BOUND_STATS=1` prints each
//! run's counters: revisits, branches pruned, executions beyond the bound).

use c11check::model::Builder;
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::thread;
use std::time::{Duration, Instant};

/// Object creation tracking, as the other benchmarks install it.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

/// Three threads, each two `fetch_add`s with an acquire load after each
/// and a release store at the end.
fn counters() {
    let n = AtomicUsize::new(0);
    let m = AtomicUsize::new(0);
    thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..2 {
                    n.fetch_add(1, Ordering::Relaxed);
                    m.load(Ordering::Acquire);
                }
                m.store(1, Ordering::Release);
            });
        }
    });
}

fn program(name: &str) -> fn() {
    if name == "counters" {
        return counters;
    }
    c11check_bench::c11::program(name).unwrap_or_else(|| {
        eprintln!(
            "bound: no program `{name}` (usage: bound [--runs N] [--jobs N] [--bound K|none] [NAME...])"
        );
        std::process::exit(2)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 3;
    let mut names = Vec::new();
    let mut only: Option<Option<u32>> = None;
    let mut jobs = 1;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--runs" {
            runs = args[i + 1].parse().expect("--runs N");
            i += 2;
        } else if args[i] == "--jobs" {
            jobs = args[i + 1].parse().expect("--jobs N");
            i += 2;
        } else if args[i] == "--bound" {
            let k = &args[i + 1];
            only = Some((k != "none").then(|| k.parse().expect("--bound K|none")));
            i += 2;
        } else {
            names.push(args[i].clone());
            i += 1;
        }
    }
    if names.is_empty() {
        names = [
            "counters", "mpmc", "seqlock", "mcs-lock", "linuxrw", "ms-queue",
        ]
        .map(String::from)
        .to_vec();
    }
    let programs: Vec<(&String, fn())> = names.iter().map(|n| (n, program(n))).collect();
    println!(
        "{:<12} {:>6} {:>10} {:>10} {:>8}",
        "program", "bound", "executions", "time", "vs none"
    );
    for (name, p) in programs {
        let mut unbounded = None;
        for bound in [None, Some(0), Some(1), Some(2), Some(3)] {
            if only.is_some_and(|o| o != bound) {
                continue;
            }
            let mut best = Duration::MAX;
            let mut executions = 0;
            for _ in 0..runs {
                let mut b = Builder::new().jobs(jobs);
                if let Some(k) = bound {
                    b = b.preemption_bound(k);
                }
                let start = Instant::now();
                let s = b.explore(p).unwrap_or_else(|r| panic!("{name}: {r}"));
                best = best.min(start.elapsed());
                executions = s.stats.executions;
                if std::env::var_os("BOUND_STATS").is_some() {
                    eprintln!("{:?}", s.stats);
                }
            }
            let base = *unbounded.get_or_insert(best);
            println!(
                "{:<12} {:>6} {:>10} {:>9.3}s {:>7.2}x",
                name,
                bound.map_or("none".to_string(), |k| k.to_string()),
                executions,
                best.as_secs_f64(),
                best.as_secs_f64() / base.as_secs_f64()
            );
        }
    }
}
