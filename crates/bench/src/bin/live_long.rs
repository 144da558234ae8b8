//! `live-long [STORES] [SEED]`: one long random execution on the live
//! (C11Tester-style) memory: a writer does STORES relaxed stores (default
//! 10,000,000) to one location while a reader keeps loading it, each step
//! given to a thread picked at random. Prints time, operations per second
//! and peak memory (compare C11Tester's 6.3 GB on this test, RSAN Ex. 7.2).
//!
//! `--idle`: a third thread that never reads the location runs throughout,
//! so it could still read any store and conservative pruning keeps them
//! all; `--window K` prunes aggressively, keeping each thread's newest K.

use c11check_bench::peak_rss_kib;
use c11check_model::live_memory::LiveMemory;
use c11check_model::MemOrder;
use std::time::Instant;

fn main() {
    let all: Vec<String> = std::env::args().collect();
    let idle = all.iter().any(|a| a == "--idle");
    let window: Option<usize> = all
        .iter()
        .position(|a| a == "--window")
        .map(|i| all[i + 1].parse().expect("--window K"));
    let args: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|&(i, a)| {
            let value_of_window = i > 0 && all[i - 1] == "--window";
            !a.starts_with("--") && !value_of_window
        })
        .map(|(_, a)| a.clone())
        .collect();
    let stores: i64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let mut seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut next = move || {
        seed = seed.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    };
    let start = Instant::now();
    let mut m = LiveMemory::new(false);
    m.set_prune_window(window);
    let x = m.add_loc(0);
    let (writer, reader) = (0, m.add_thread(Some(0)));
    if idle {
        m.add_thread(Some(0));
    }
    let (mut written, mut loads, mut last) = (0i64, 0u64, 0i64);
    while written < stores {
        if next() & 1 == 0 {
            written += 1;
            m.store(writer, x, MemOrder::Relaxed, written);
        } else {
            let r = next();
            let v = m.load(reader, x, MemOrder::Relaxed, &mut |n| {
                (r % n as u64) as usize
            });
            assert!(v >= last, "the reader went back from {last} to {v}");
            last = v;
            loads += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let ops = written as u64 + loads;
    let s = m.stats();
    println!(
        "stores {written} loads {loads} last value read {last}\ntime {secs:.2} s, {:.1} M atomic operations/s (one core)\nmo-graph: peak {} stores, {} pruned\npeak RSS {:.1} MiB",
        ops as f64 / secs / 1e6,
        s.peak_stores,
        s.pruned,
        peak_rss_kib() as f64 / 1024.0
    );
}
