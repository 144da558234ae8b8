//! CDSChecker's benchmark programs (`../shared/cdschecker-benchmarks`, the
//! original sources), built unchanged through the compatibility headers
//! (`include/cdschecker`: `threads.h` with `user_main`, `stdatomic.h`,
//! `model-assert.h`, `librace.h`, `condition_variable`), each with the
//! verdict it must get and the executions c11check explores. The buggy
//! originals (chase-lev-deque, spsc-queue) report their known bugs; their
//! fixed versions pass.

mod common;

use common::{build_sources, compiler, executions, run, shared_dir, Lang};
use std::path::{Path, PathBuf};

/// `../shared/cdschecker-benchmarks` (or `$C11CHECK_CDSCHECKER`).
fn benchmarks() -> PathBuf {
    shared_dir(
        "C11CHECK_CDSCHECKER",
        "cdschecker-benchmarks",
        "include/unrelacy.h",
        "CDSChecker's benchmarks",
    )
}

/// What a benchmark must get.
enum Verdict {
    /// No bug, in exactly this many executions.
    Pass(u64),
    /// No bug, in this many executions built by gcc, and by clang (clang
    /// lowers a weak compare-exchange to a strong one, so its spurious
    /// failures are not there to explore).
    PassGccClang(u64, u64),
    /// No bug within this many executions (the budget ends the run).
    PassWithin(u64),
    /// A bug whose report contains this.
    Bug(&'static str),
}

struct Bench {
    name: &'static str,
    lang: Lang,
    sources: &'static [&'static str],
    flags: &'static [&'static str],
    verdict: Verdict,
}

const BENCHES: &[Bench] = &[
    Bench {
        name: "barrier",
        lang: Lang::Cxx,
        sources: &["barrier/barrier.cc"],
        flags: &[],
        verdict: Verdict::Pass(4),
    },
    Bench {
        name: "chase-lev-deque",
        lang: Lang::C,
        sources: &["chase-lev-deque/main.c", "chase-lev-deque/deque.c"],
        flags: &[],
        // CDSChecker's paper: a steal reads the array a concurrent push's
        // resize made, before anything initialized it (reported here as
        // a race with the array's creation, as CDSChecker's
        // "uninitialized load").
        verdict: Verdict::Bug(
            "accesses an object thread 0 created, without being ordered after its creation",
        ),
    },
    Bench {
        name: "chase-lev-deque-bugfix",
        lang: Lang::C,
        sources: &[
            "chase-lev-deque-bugfix/main.c",
            "chase-lev-deque-bugfix/deque.c",
        ],
        flags: &[],
        verdict: Verdict::Pass(26),
    },
    Bench {
        name: "dekker-fences",
        lang: Lang::Cxx,
        sources: &["dekker-fences/dekker-fences.cc"],
        flags: &[],
        verdict: Verdict::Pass(18),
    },
    Bench {
        name: "linuxrwlocks",
        lang: Lang::C,
        sources: &["linuxrwlocks/linuxrwlocks.c"],
        flags: &[],
        verdict: Verdict::Pass(524),
    },
    Bench {
        name: "mcs-lock",
        lang: Lang::Cxx,
        sources: &["mcs-lock/mcs-lock.cc"],
        flags: &[],
        verdict: Verdict::Pass(798),
    },
    Bench {
        name: "mpmc-queue",
        lang: Lang::Cxx,
        sources: &["mpmc-queue/mpmc-queue.cc"],
        // `return false` from a function returning a pointer is ill-formed
        // since C++11: the one flag this 2013 source needs (no edit).
        flags: &[
            "-Dfalse=0",
            "-DCONFIG_MPMC_READERS=2",
            "-DCONFIG_MPMC_WRITERS=2",
        ],
        verdict: Verdict::PassWithin(20_000),
    },
    Bench {
        name: "ms-queue",
        lang: Lang::C,
        sources: &["ms-queue/main.c", "ms-queue/my_queue.c"],
        flags: &[],
        verdict: Verdict::Pass(178),
    },
    Bench {
        name: "spsc-queue",
        lang: Lang::Cxx,
        sources: &["spsc-queue/spsc-queue.cc"],
        flags: &[],
        verdict: Verdict::Bug("deadlock"),
    },
    Bench {
        name: "spsc-bugfix",
        lang: Lang::Cxx,
        sources: &["spsc-bugfix/spsc-queue.cc"],
        flags: &[],
        verdict: Verdict::PassGccClang(54, 27),
    },
];

#[test]
fn cdscheckers_benchmarks_build_unchanged_and_get_their_verdicts() {
    let dir = benchmarks();
    let compat = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/cdschecker");
    let includes = [
        format!("-I{}", compat.display()),
        format!("-I{}", dir.join("include").display()),
    ];
    let mut failures = Vec::new();
    for b in BENCHES {
        let sources: Vec<PathBuf> = b.sources.iter().map(|s| dir.join(s)).collect();
        let mut flags: Vec<&str> = includes.iter().map(String::as_str).collect();
        flags.extend(b.flags);
        let exe = build_sources(&format!("cds-{}", b.name), &sources, b.lang, &flags);
        let budget = match b.verdict {
            Verdict::PassWithin(n) => n.to_string(),
            _ => "0".into(),
        };
        let env: Vec<(&str, &str)> = if budget == "0" {
            vec![]
        } else {
            vec![("C11CHECK_MAX_EXECUTIONS", budget.as_str())]
        };
        let (code, err) = run(&exe, &env);
        let verdict = err
            .lines()
            .find(|l| l.starts_with("c11check found") || l.starts_with("c11check: no bug"))
            .unwrap_or("(no verdict)")
            .to_string();
        println!("{:<24} {verdict}", b.name);
        let ok = match b.verdict {
            Verdict::Pass(n) => code == 0 && executions(&err) == n,
            Verdict::PassGccClang(gcc, clang) => {
                let n = if compiler().contains("clang") {
                    clang
                } else {
                    gcc
                };
                code == 0 && executions(&err) == n
            }
            Verdict::PassWithin(_) => code == 0 && err.contains("a budget was reached"),
            Verdict::Bug(what) => code == 1 && err.contains(what),
        };
        if !ok {
            failures.push(format!("{}: exit {code}\n{err}", b.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
