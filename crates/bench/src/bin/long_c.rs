//! Long executions of a C program: the cost of one random execution as it
//! grows, against the program run natively and under ThreadSanitizer, in
//! one run (issue: real applications run at sanitizer cost).
//!
//! ```sh
//! cargo build --release -p c11check-cli -p c11check-c-runtime -p c11check-bench
//! target/release/long-c                       # 10^4, 10^5, 10^6 iterations
//! target/release/long-c --sizes 10000,20000   # these sizes
//! target/release/long-c --runs 3              # best of 3 (default 1)
//! ```
//!
//! The program is `benchmarks/long/spsc_ring.c`, a ring buffer's producer
//! and consumer with its test driver; each size is one execution
//! (`c11check run --random 1`), each run a child process under
//! `/usr/bin/time`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One timed child run: (wall seconds, peak KiB, its stderr), or what
/// went wrong.
fn timed(cmd: &Path, args: &[String]) -> Result<(f64, u64), String> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "long-c-time %e %M"])
        .arg(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("/usr/bin/time: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let line = err
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("long-c-time "))
        .ok_or_else(|| format!("no timing in:\n{err}"))?;
    if !out.status.success() {
        let last: Vec<&str> = err
            .lines()
            .filter(|l| !l.starts_with("long-c-time"))
            .collect();
        let tail = last[last.len().saturating_sub(3)..].join(" / ");
        return Err(format!("failed: {tail}"));
    }
    let mut parts = line.split_whitespace();
    let secs = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let kib = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    Ok((secs, kib))
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the workspace")
        .to_path_buf()
}

fn build(compiler: &[&str], src: &Path, exe: &Path, extra: &[&str]) {
    let status = Command::new(compiler[0])
        .args(&compiler[1..])
        .args(["-O1", "-g"])
        .args(extra)
        .arg(src)
        .arg("-o")
        .arg(exe)
        .arg("-lpthread")
        .status()
        .unwrap_or_else(|e| panic!("{}: {e}", compiler[0]));
    assert!(
        status.success(),
        "building {} with {compiler:?}",
        src.display()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize =
        c11check_bench::flag_value(&args, "--runs").map_or(1, |v| v.parse().expect("--runs N"));
    let sizes: Vec<u64> = c11check_bench::flag_value(&args, "--sizes")
        .unwrap_or_else(|| "10000,100000,1000000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("--sizes N,N,..."))
        .collect();
    let (c11check, dir) = c11check_bench::c11check_and_scratch("long-c");
    let src = workspace().join("benchmarks/long/spsc_ring.c");
    let native = dir.join("native");
    let tsan = dir.join("tsan");
    let checked = dir.join("checked");
    build(&["cc"], &src, &native, &[]);
    build(&["cc"], &src, &tsan, &["-fsanitize=thread"]);
    build(&[c11check.to_str().unwrap(), "cc"], &src, &checked, &[]);
    println!("Machine: {}", c11check_bench::machine());
    println!(
        "benchmarks/long/spsc_ring.c, gcc -O1; best of {runs}; one execution per size (`c11check run --random 1`)\n"
    );
    println!("| iterations | native | ThreadSanitizer | c11check | c11check / TSan | c11check µs per iteration |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for &n in &sizes {
        let arg = vec![n.to_string()];
        let mut checked_args = vec!["run".to_string(), "--random".into(), "1".into()];
        checked_args.push(checked.display().to_string());
        checked_args.push(n.to_string());
        let mut best: [Option<Result<(f64, u64), String>>; 3] = [None, None, None];
        for _ in 0..runs {
            let got = [
                timed(&native, &arg),
                timed(&tsan, &arg),
                timed(&c11check, &checked_args),
            ];
            for (b, g) in best.iter_mut().zip(got) {
                let better = match (&b, &g) {
                    (None, _) => true,
                    (Some(Ok(x)), Ok(y)) => y.0 < x.0,
                    (Some(Err(_)), Ok(_)) => true,
                    _ => false,
                };
                if better {
                    *b = Some(g);
                }
            }
        }
        let cell = |r: &Option<Result<(f64, u64), String>>| match r {
            Some(Ok((s, k))) => format!("{s:.2} s, {:.0} MiB", *k as f64 / 1024.0),
            Some(Err(e)) => e.clone(),
            None => "-".into(),
        };
        let (ratio, per) = match (&best[1], &best[2]) {
            (Some(Ok(t)), Some(Ok(c))) => (
                format!("{:.1}x", c.0 / t.0.max(0.01)),
                format!("{:.2}", c.0 * 1e6 / n as f64),
            ),
            _ => ("-".into(), "-".into()),
        };
        println!(
            "| {n} | {} | {} | {} | {ratio} | {per} |",
            cell(&best[0]),
            cell(&best[1]),
            cell(&best[2])
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
