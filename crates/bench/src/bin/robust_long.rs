//! `robust-long [OPS]`: one long live execution through the Rust API, with
//! and without the dynamic robustness check (location clocks), each in a
//! child process: time, operations per second, peak memory (RSAN: ~19 MB
//! on a run of 10^7 operations). Three threads share three locations: a
//! writer stores to two of them, a reader loads the first and a counter
//! thread counts in the third while loading the second (all relaxed; no
//! thread reads two locations another thread writes, so the program is
//! robust and the check runs to the end; reading both would make it
//! message passing with relaxed reads, which the check reports).
//! Both runs prune the live memory to each thread's newest 64 stores per
//! location (`Builder::prune_window`), or a reader that lags far behind the
//! writer makes each load choose among all the stores since.

use c11check::model::Builder;
use c11check::sync::atomic::{AtomicUsize, Ordering::*};
use c11check::sync::Arc;
use c11check::thread;
use c11check_bench::peak_rss_kib;
use std::process::Command;
use std::time::Instant;

fn program(ops: u64) -> impl Fn() + Send + Sync + 'static {
    move || {
        let n = (ops / 6) as usize;
        let locs: Arc<[AtomicUsize; 3]> = Arc::new(std::array::from_fn(|_| AtomicUsize::new(0)));
        let (w, r, c) = (locs.clone(), locs.clone(), locs.clone());
        let writer = thread::spawn(move || {
            for i in 1..=n {
                w[0].store(i, Relaxed);
                w[1].store(i, Release);
            }
        });
        let reader = thread::spawn(move || {
            let mut seen = 0;
            for _ in 0..2 * n {
                let a = r[0].load(Relaxed);
                assert!(a >= seen, "coherence");
                seen = a;
            }
        });
        let counter = thread::spawn(move || {
            for i in 1..=n {
                c[2].store(i, Relaxed);
                let _ = c[1].load(Relaxed);
            }
        });
        writer.join().unwrap();
        reader.join().unwrap();
        counter.join().unwrap();
    }
}

fn child(ops: u64, robust: bool) {
    let mut b = Builder::new()
        .random(1)
        .live()
        .prune_window(64)
        .max_steps(u32::MAX);
    b.robustness = robust;
    let start = Instant::now();
    let r = b.explore(program(ops));
    let secs = start.elapsed().as_secs_f64();
    let (verdict, done) = match r {
        Ok(s) => ("passed", s.operations.unwrap_or(0)),
        Err(rep) => {
            eprintln!("{rep}");
            ("failed", rep.operations.unwrap_or(0))
        }
    };
    println!("RESULT {verdict}|{done}|{secs:.2}|{}", peak_rss_kib());
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        child(args[1].parse().unwrap(), args[2] == "robust");
        return;
    }
    let ops: u64 = args
        .first()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let exe = std::env::current_exe().expect("own path");
    println!("| run | result | operations | time (s) | M ops/s | peak MiB |");
    println!("|---|---|---:|---:|---:|---:|");
    for (name, mode) in [("live", "plain"), ("live + robustness", "robust")] {
        let out = Command::new(&exe)
            .args(["--child", &ops.to_string(), mode])
            .output()
            .expect("child");
        let text = String::from_utf8_lossy(&out.stdout);
        let Some(line) = text.lines().find_map(|l| l.strip_prefix("RESULT ")) else {
            println!("| {name} | crashed | | | | |");
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
            continue;
        };
        let f: Vec<&str> = line.split('|').collect();
        let (done, secs, kib): (f64, f64, f64) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        println!(
            "| {name} | {} | {} | {secs:.2} | {:.2} | {:.1} |",
            f[0],
            f[1],
            done / secs / 1e6,
            kib / 1024.0
        );
    }
}
