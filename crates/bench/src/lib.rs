//! Helpers shared by the benchmark binaries, and the CDSChecker/C11Tester
//! benchmark programs ([`suite`]), instantiated for c11check in [`c11`].

pub mod rsan;
pub mod suite;

/// The command line of a bench binary, without the `--bench` cargo adds.
pub fn bench_args() -> Vec<String> {
    std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect()
}

/// `--child TOOL NAME BUDGET N`: the one (tool, program) run a bench binary
/// does in a child process of its own, if that is what it was asked.
pub fn child_request(args: &[String]) -> Option<(&str, &str, std::time::Duration, u64)> {
    (args.first().map(String::as_str) == Some("--child")).then(|| {
        (
            args[1].as_str(),
            args[2].as_str(),
            std::time::Duration::from_secs_f64(args[3].parse().expect("budget")),
            args[4].parse().expect("count"),
        )
    })
}

/// `--budget SECS` (default 5 s with `--quick`, else 60 s) and whether
/// `--quick` was given.
pub fn budget_and_quick(args: &[String]) -> (f64, bool) {
    let quick = args.iter().any(|a| a == "--quick");
    let budget = flag_value(args, "--budget").map_or(if quick { 5.0 } else { 60.0 }, |v| {
        v.parse().expect("--budget SECS")
    });
    (budget, quick)
}

/// The value after `flag` on the command line, if it is there.
pub fn flag_value(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The words of the command line that are neither flags nor the values of
/// `valued` flags: benchmark names.
pub fn plain_args<'a>(args: &'a [String], valued: &[&str]) -> Vec<&'a str> {
    args.iter()
        .enumerate()
        .filter(|&(i, a)| {
            let value_of_flag = i > 0 && valued.contains(&args[i - 1].as_str());
            !a.starts_with("--") && !value_of_flag
        })
        .map(|(_, a)| a.as_str())
        .collect()
}

/// This process's peak resident memory (VmHWM), in KiB (0 where unknown).
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The processor the benchmarks run on, as `/proc/cpuinfo` names it, with
/// the number of CPUs and the clock it reports. The machines of one kind
/// differ from day to day (an AMD EPYC one day, a 2 GHz Intel Xeon
/// another), and times are only comparable on the same processor.
pub fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let cpus = info.lines().filter(|l| l.starts_with("processor")).count();
    match field("model name") {
        Some(model) => {
            let mhz = field("cpu MHz")
                .and_then(|m| m.parse::<f64>().ok())
                .map(|m| format!(" at {m:.0} MHz"))
                .unwrap_or_default();
            format!("{model}, {cpus} CPUs{mhz}")
        }
        None => "an unknown processor".to_string(),
    }
}

/// The benchmark programs under c11check.
#[allow(clippy::new_without_default)]
pub mod c11 {
    /// The names the programs are written against.
    mod facade {
        pub use c11check::{cell, sync, thread};
    }
    include!("suite_programs.rs");
}

/// A cell with loom's `UnsafeCell` interface and no checking, for tools that
/// have none (shuttle).
pub mod plain_cell {
    #[derive(Debug, Default)]
    pub struct UnsafeCell<T>(std::cell::UnsafeCell<T>);
    impl<T> UnsafeCell<T> {
        pub fn new(t: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(t))
        }
        pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }
        pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

/// The `c11check` binary beside the running bench binary, and a fresh
/// scratch directory named after `tool`; exits with a message saying how
/// to build `c11check` when it is missing.
pub fn c11check_and_scratch(tool: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let me = std::env::current_exe().expect("own path");
    let c11check = me.with_file_name("c11check");
    if !c11check.exists() {
        eprintln!(
            "{tool}: {} is missing: cargo build --release -p c11check-cli -p c11check-c-runtime",
            c11check.display()
        );
        std::process::exit(2);
    }
    let dir = std::env::temp_dir().join(format!("{tool}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    (c11check, dir)
}
