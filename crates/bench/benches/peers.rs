//! c11check against loom 0.7.2 and shuttle 0.9.9 on the same programs.
//!
//! `cargo bench -p c11check-bench --features peers --bench peers [-- [--quick] [--budget SECS] [NAME...]]`
//!
//! Every (tool, program) pair runs in a child process of its own, so the peak
//! resident memory (VmHWM) printed is its own. The programs are written once,
//! against the names the three crates share (`sync::atomic`, `sync::Arc`,
//! `thread`, `cell::UnsafeCell`), and instantiated for each tool.

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};
use std::time::{Duration, Instant};

/// Executions started (loom and shuttle report no count of their own).
static STARTED: AtomicU64 = AtomicU64::new(0);

mod c11 {
    pub use c11check::{cell, sync, thread};
}
mod lm {
    pub use loom::{cell, sync, thread};
}
mod sh {
    pub use c11check_bench::plain_cell as cell;
    pub use shuttle::{sync, thread};
}

macro_rules! programs {
    ($m:ident, $k:ident) => {
        pub mod $m {
            use super::$k::cell::UnsafeCell;
            use super::$k::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
            use super::$k::sync::Arc;
            use super::$k::thread;

            /// 3 threads × 3 relaxed fetch_add on one counter.
            pub fn rmw_3x3() {
                let n = Arc::new(AtomicUsize::new(0));
                let hs: Vec<_> = (0..3)
                    .map(|_| {
                        let n = n.clone();
                        thread::spawn(move || {
                            for _ in 0..3 {
                                n.fetch_add(1, Ordering::Relaxed);
                            }
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
                assert_eq!(n.load(Ordering::Relaxed), 9);
            }

            /// Store buffering with SeqCst: both loads cannot read 0.
            pub fn sb_sc() {
                let x = Arc::new(AtomicUsize::new(0));
                let y = Arc::new(AtomicUsize::new(0));
                let (x2, y2) = (x.clone(), y.clone());
                let t = thread::spawn(move || {
                    x2.store(1, Ordering::SeqCst);
                    y2.load(Ordering::SeqCst)
                });
                y.store(1, Ordering::SeqCst);
                let a = x.load(Ordering::SeqCst);
                let b = t.join().unwrap();
                assert!(a == 1 || b == 1);
            }

            struct Node {
                val: usize,
                next: *mut Node,
            }

            /// A Treiber stack (nodes are never freed, so no ABA).
            struct Stack {
                head: AtomicPtr<Node>,
            }
            // SAFETY: nodes are published with release CASes and never freed.
            unsafe impl Send for Stack {}
            // SAFETY: as above.
            unsafe impl Sync for Stack {}

            impl Stack {
                fn push(&self, val: usize) {
                    let node = Box::into_raw(Box::new(Node {
                        val,
                        next: std::ptr::null_mut(),
                    }));
                    loop {
                        let head = self.head.load(Ordering::Relaxed);
                        // SAFETY: `node` is ours until the CAS publishes it.
                        unsafe { (*node).next = head };
                        if self
                            .head
                            .compare_exchange(head, node, Ordering::Release, Ordering::Relaxed)
                            .is_ok()
                        {
                            return;
                        }
                    }
                }
                fn pop(&self) -> Option<usize> {
                    loop {
                        let head = self.head.load(Ordering::Acquire);
                        if head.is_null() {
                            return None;
                        }
                        // SAFETY: published nodes are never freed.
                        let next = unsafe { (*head).next };
                        if self
                            .head
                            .compare_exchange(head, next, Ordering::Acquire, Ordering::Relaxed)
                            .is_ok()
                        {
                            // SAFETY: as above.
                            return Some(unsafe { (*head).val });
                        }
                    }
                }
            }

            /// Two pushers and a concurrent popper; every item comes out once.
            pub fn treiber() {
                let s = Arc::new(Stack {
                    head: AtomicPtr::new(std::ptr::null_mut()),
                });
                let hs: Vec<_> = (1..=2)
                    .map(|i| {
                        let s = s.clone();
                        thread::spawn(move || s.push(i))
                    })
                    .collect();
                let first = s.pop();
                for h in hs {
                    h.join().unwrap();
                }
                let mut got: Vec<usize> = first.into_iter().collect();
                while let Some(v) = s.pop() {
                    got.push(v);
                }
                got.sort();
                assert_eq!(got, vec![1, 2]);
            }

            struct Spsc {
                slots: [UnsafeCell<usize>; 2],
                head: AtomicUsize,
                tail: AtomicUsize,
            }
            // SAFETY: one producer, one consumer, slots handed over by release/acquire.
            unsafe impl Sync for Spsc {}
            // SAFETY: as above.
            unsafe impl Send for Spsc {}

            /// A 2-slot SPSC ring buffer carrying 3 items.
            pub fn spsc() {
                let q = Arc::new(Spsc {
                    slots: [UnsafeCell::new(0), UnsafeCell::new(0)],
                    head: AtomicUsize::new(0),
                    tail: AtomicUsize::new(0),
                });
                let p = q.clone();
                let producer = thread::spawn(move || {
                    for i in 1..=3 {
                        loop {
                            let tail = p.tail.load(Ordering::Relaxed);
                            if tail - p.head.load(Ordering::Acquire) < 2 {
                                p.slots[tail % 2].with_mut(|s| unsafe { *s = i });
                                p.tail.store(tail + 1, Ordering::Release);
                                break;
                            }
                            thread::yield_now();
                        }
                    }
                });
                for i in 1..=3 {
                    loop {
                        let head = q.head.load(Ordering::Relaxed);
                        if q.tail.load(Ordering::Acquire) != head {
                            let v = q.slots[head % 2].with(|s| unsafe { *s });
                            assert_eq!(v, i);
                            q.head.store(head + 1, Ordering::Release);
                            break;
                        }
                        thread::yield_now();
                    }
                }
                producer.join().unwrap();
            }
        }
    };
}

programs!(pc, c11);
programs!(pl, lm);
programs!(ps, sh);

const PROGRAMS: [&str; 4] = ["rmw-3x3", "sb-sc", "treiber", "spsc"];
const TOOLS: [&str; 7] = [
    "c11check",
    "loom",
    "shuttle-dfs",
    "c11check-live",
    "c11check-random",
    "shuttle-random",
    "shuttle-pct",
];

fn program(tool: &str, name: &str) -> fn() {
    macro_rules! pick {
        ($m:ident) => {
            match name {
                "rmw-3x3" => $m::rmw_3x3,
                "sb-sc" => $m::sb_sc,
                "treiber" => $m::treiber,
                "spsc" => $m::spsc,
                _ => panic!("unknown program {name}"),
            }
        };
    }
    match tool {
        "c11check" | "c11check-live" | "c11check-random" => pick!(pc),
        "loom" => pick!(pl),
        _ => pick!(ps),
    }
}

/// Runs one (tool, program) pair; prints `executions complete seconds`.
fn child(tool: &str, name: &str, budget: Duration, samples: usize) {
    let p = program(tool, name);
    let start = Instant::now();
    let (executions, complete) = match tool {
        "c11check" => {
            let s = c11check::model::Builder::new()
                .max_duration(budget)
                .explore(p)
                .unwrap_or_else(|r| panic!("{r}"));
            (s.stats.executions + s.stats.blocked, !s.stats.cut)
        }
        "c11check-live" | "c11check-random" => {
            let b = c11check::model::Builder::new().random(samples as u64);
            let b = if tool == "c11check-live" {
                b.live()
            } else {
                b.graph_random()
            };
            let s = b.explore(p).unwrap_or_else(|r| panic!("{r}"));
            (s.stats.executions + s.stats.blocked, true)
        }
        "loom" => {
            let mut b = loom::model::Builder::new();
            b.max_duration = Some(budget);
            b.check(move || {
                STARTED.fetch_add(1, StdOrdering::Relaxed);
                p()
            });
            (STARTED.load(StdOrdering::Relaxed), start.elapsed() < budget)
        }
        "shuttle-dfs" => {
            let mut cfg = shuttle::Config::new();
            cfg.max_time = Some(budget);
            let runner =
                shuttle::Runner::new(shuttle::scheduler::DfsScheduler::new(None, false), cfg);
            runner.run(move || {
                STARTED.fetch_add(1, StdOrdering::Relaxed);
                p()
            });
            (STARTED.load(StdOrdering::Relaxed), start.elapsed() < budget)
        }
        "shuttle-random" => {
            shuttle::check_random(
                move || {
                    STARTED.fetch_add(1, StdOrdering::Relaxed);
                    p()
                },
                samples,
            );
            (STARTED.load(StdOrdering::Relaxed), true)
        }
        "shuttle-pct" => {
            shuttle::check_pct(
                move || {
                    STARTED.fetch_add(1, StdOrdering::Relaxed);
                    p()
                },
                samples,
                3,
            );
            (STARTED.load(StdOrdering::Relaxed), true)
        }
        _ => panic!("unknown tool {tool}"),
    };
    let secs = start.elapsed().as_secs_f64();
    println!(
        "RESULT {executions} {complete} {secs} {}",
        c11check_bench::peak_rss_kib()
    );
}

fn main() {
    let args = c11check_bench::bench_args();
    if let Some((tool, name, budget, samples)) = c11check_bench::child_request(&args) {
        child(tool, name, budget, samples as usize);
        return;
    }
    let (budget, quick) = c11check_bench::budget_and_quick(&args);
    let samples = if quick { 1000 } else { 10_000 };
    let names = c11check_bench::plain_args(&args, &["--budget"]);
    let exe = std::env::current_exe().unwrap();
    println!("c11check vs loom 0.7.2 vs shuttle 0.9.9 (budget {budget} s per exhaustive run, {samples} samples for random/PCT)");
    println!("Machine: {}", c11check_bench::machine());
    println!();
    println!("| program | tool | executions | complete | time (s) | per execution (µs) | peak RSS (MiB) | time vs c11check |");
    println!("|---|---|---:|---|---:|---:|---:|---:|");
    for prog in PROGRAMS {
        if !names.is_empty() && !names.contains(&prog) {
            continue;
        }
        let mut base = None;
        let mut base_live = None;
        for tool in TOOLS {
            let out = Command::new(&exe)
                .args([
                    "--child",
                    tool,
                    prog,
                    &budget.to_string(),
                    &samples.to_string(),
                ])
                .output()
                .expect("run child");
            let text = String::from_utf8_lossy(&out.stdout);
            let Some(line) = text.lines().find(|l| l.starts_with("RESULT ")) else {
                let err = String::from_utf8_lossy(&out.stderr);
                let lines: Vec<&str> = err.lines().collect();
                let why = lines
                    .iter()
                    .position(|l| l.contains("panicked at"))
                    .and_then(|i| lines.get(i + 1))
                    .unwrap_or(&"?");
                println!(
                    "| {prog} | {tool} | reports a failure: {} | | | | | |",
                    why.trim()
                );
                continue;
            };
            let f: Vec<&str> = line.split_whitespace().collect();
            let (n, complete, secs, kib): (u64, bool, f64, u64) = (
                f[1].parse().unwrap(),
                f[2] == "true",
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            );
            if tool == "c11check" {
                base = Some(secs);
            }
            if tool == "c11check-live" {
                base_live = Some(secs);
            }
            // Exhaustive tools against c11check, sampling ones against
            // c11check's live random mode (same number of samples).
            let sampled = matches!(
                tool,
                "shuttle-random" | "shuttle-pct" | "c11check-live" | "c11check-random"
            );
            let ratio = if sampled { base_live } else { base }
                .map(|b| format!("{:.1}x", secs / b.max(1e-6)))
                .unwrap_or_default();
            let complete = match tool {
                _ if sampled => "sampled",
                _ if complete => "yes",
                _ => "no (budget)",
            };
            println!(
                "| {prog} | {tool} | {n} | {complete} | {secs:.3} | {:.1} | {:.1} | {ratio} |",
                secs * 1e6 / n.max(1) as f64,
                kib as f64 / 1024.0
            );
        }
    }
}
