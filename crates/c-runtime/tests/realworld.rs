//! Real C++ code, unchanged: ConorWilliams/ConcurrentDeque (a C++20
//! Chase–Lev work-stealing deque, `../shared/realworld/ConcurrentDeque`)
//! with its own doctest test suite, built into one program as its CMake
//! file does. Its small tests are explored exhaustively; the suite as a
//! whole (100,000-item tests, up to eight thieves) runs one random
//! execution, which finds the data race its `steal` accepts by design: a
//! thief reads the slot with a plain load before its compare-exchange,
//! and when it loses, the owner may overwrite the slot with nothing
//! ordering the two (undefined behaviour in C++; the deque's comment says
//! the value is then discarded).

mod common;

use common::{build_sources, shared_dir, Lang};
use std::path::{Path, PathBuf};

/// `../shared/realworld/ConcurrentDeque` (or `$C11CHECK_REALWORLD`/…);
/// panics loudly when it or doctest's header is missing.
fn deque_sources() -> (PathBuf, Vec<PathBuf>) {
    let dir = shared_dir(
        "C11CHECK_REALWORLD",
        "realworld",
        "ConcurrentDeque/include/riften/deque.hpp",
        "The real-world programs (ConcurrentDeque)",
    )
    .join("ConcurrentDeque");
    assert!(
        Path::new("/usr/include/doctest/doctest.h").is_file(),
        "doctest's header is missing: install Debian's doctest-dev (apt-get install doctest-dev)"
    );
    let mut tests: Vec<PathBuf> = std::fs::read_dir(dir.join("test"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .collect();
    tests.sort();
    (dir, tests)
}

#[test]
fn concurrent_deque_with_its_own_doctest_suite() {
    let (dir, tests) = deque_sources();
    let include = format!("-I{}", dir.join("include").display());
    let exe = build_sources("riften", &tests, Lang::Cxx, &[&include]);
    let verdict = |args: &[&str], env: &[(&str, &str)]| {
        let out = std::process::Command::new(&exe)
            .args(args)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Four thieves steal from a deque of one item: exactly one gets it, in
    // every execution (doctest's filters take `*`; its names hold commas).
    let (code, err) = verdict(&["--test-case=multiple steals*"], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no bug found in 32 executions"), "{err}");
    let (code, err) = verdict(&["--test-case=basic operations*"], &[]);
    assert_eq!(code, 0, "{err}");

    // The whole suite, one random execution: the race in `steal`.
    let (code, err) = verdict(
        &[],
        &[
            ("C11CHECK_ITERATIONS", "1"),
            ("C11CHECK_SEED", "1"),
            ("C11CHECK_MAX_STEPS", "100000000"),
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("c11check found a data race"), "{err}");
    assert!(err.contains("deque.hpp:43"), "{err}");
    assert!(err.contains("riften::Deque<int>::steal()"), "{err}");
}
