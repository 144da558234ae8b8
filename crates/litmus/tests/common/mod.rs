//! Helpers shared by the litmus integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The conformance suite: `$C11CHECK_CONFORMANCE` or `../shared/conformance` from the
/// workspace root. Panics loudly when it is missing: the tests must not pass silently.
pub fn conformance_dir() -> PathBuf {
    if let Ok(d) = std::env::var("C11CHECK_CONFORMANCE") {
        let p = PathBuf::from(d);
        assert!(
            p.is_dir(),
            "C11CHECK_CONFORMANCE={} is not a directory",
            p.display()
        );
        return p;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = root.join("../shared/conformance");
    assert!(
        p.is_dir(),
        "conformance suite not found at {} (set C11CHECK_CONFORMANCE to its directory)",
        p.display()
    );
    p
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `*.litmus` file below `dir`, sorted.
pub fn litmus_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "litmus") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The property-test seed: `default` (fixed, for CI), or
/// `C11CHECK_PROPTEST_SEED` to search elsewhere.
pub fn proptest_seed(default: u64) -> u64 {
    std::env::var("C11CHECK_PROPTEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A property test's settings: `cases` programs from a fixed seed (see
/// [`proptest_seed`]), no failure file.
pub fn proptest_config(cases: u32, seed: u64) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(proptest_seed(seed)),
        ..proptest::test_runner::Config::default()
    }
}

/// Whether a thread of `test` has a loop (loops multiply the candidates the
/// brute-force engine tries).
pub fn has_loop(test: &c11check_litmus::LitmusTest) -> bool {
    use c11check_litmus::ast::Stmt;
    fn in_stmts(stmts: &[Stmt]) -> bool {
        stmts.iter().any(|s| match s {
            Stmt::While(..) => true,
            Stmt::If(_, a, b) => in_stmts(a) || in_stmts(b),
            _ => false,
        })
    }
    test.threads.iter().any(|t| in_stmts(&t.body))
}
