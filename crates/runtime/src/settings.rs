//! The `C11CHECK_*` environment variables c11check knows: a misspelled one
//! would otherwise be ignored without a word.

/// How the program being checked raises the step bound, for messages: a
/// front end sets it once (C programs: `C11CHECK_MAX_STEPS`).
static STEP_BOUND_SETTING: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Says how the program being checked raises the step bound (see
/// [`step_bound_setting`]); the first call wins.
pub fn set_step_bound_setting(how: &'static str) {
    let _ = STEP_BOUND_SETTING.set(how);
}

/// How the step bound is raised, as messages say it.
pub fn step_bound_setting() -> &'static str {
    STEP_BOUND_SETTING
        .get()
        .copied()
        .unwrap_or("`Builder::max_steps` or C11CHECK_MAX_STEPS")
}

/// Every variable some part of c11check reads (the Rust API, the C
/// runtime, `c11check cc`, the test suites and benchmarks).
pub const KNOWN: &[&str] = &[
    "C11CHECK_BENCH",
    "C11CHECK_CC",
    "C11CHECK_CDSCHECKER",
    "C11CHECK_CONFORMANCE",
    "C11CHECK_CXX",
    "C11CHECK_DEADLOCKS",
    "C11CHECK_DOT",
    "C11CHECK_FRESH",
    "C11CHECK_FULL_TRACE",
    "C11CHECK_GENMC_ONLY",
    "C11CHECK_GENMC_TESTS",
    "C11CHECK_GENMC_TIMEOUT",
    "C11CHECK_ITERATIONS",
    "C11CHECK_JOBS",
    "C11CHECK_JSON",
    "C11CHECK_LD",
    "C11CHECK_LIVE",
    "C11CHECK_LIVE_ITERATIONS",
    "C11CHECK_LIVELOCKS",
    "C11CHECK_LOG",
    "C11CHECK_LOOP_BOUND",
    "C11CHECK_MAX_DURATION",
    "C11CHECK_MAX_EXECUTIONS",
    "C11CHECK_MAX_STEPS",
    "C11CHECK_MODEL",
    "C11CHECK_PARK_LOADS",
    "C11CHECK_PCT",
    "C11CHECK_PREEMPTIONS",
    "C11CHECK_PROPTEST_SEED",
    "C11CHECK_PROPTEST_VERBOSE",
    "C11CHECK_PRUNE_WINDOW",
    "C11CHECK_RACES",
    "C11CHECK_REALWORLD",
    "C11CHECK_REPAIR",
    "C11CHECK_REPLAY",
    "C11CHECK_ROBUSTNESS",
    "C11CHECK_ROBUST_TALLY",
    "C11CHECK_RUNTIME_DIR",
    "C11CHECK_SEED",
    "C11CHECK_SHARD",
    "C11CHECK_SHARED",
    "C11CHECK_SHOW_OUTPUT",
    "C11CHECK_SPURIOUS_FAILURES",
    "C11CHECK_STACK_SIZE",
    "C11CHECK_STARTED_FILE",
    "C11CHECK_STATIC_RUNTIME",
    "C11CHECK_WATCHDOG_SECS",
];

/// Prefixes of variables the test suites set for their own children.
const KNOWN_PREFIXES: &[&str] = &["C11CHECK_TEST_"];

/// The unknown `C11CHECK_*` names among `names`, each with the known name
/// it most likely meant (if one is close).
pub fn unknown<'a>(names: impl Iterator<Item = &'a str>) -> Vec<(String, Option<&'static str>)> {
    let mut out: Vec<(String, Option<&'static str>)> = names
        .filter(|n| n.starts_with("C11CHECK_"))
        .filter(|n| !KNOWN.contains(n) && !KNOWN_PREFIXES.iter().any(|p| n.starts_with(p)))
        .map(|n| {
            let best = KNOWN
                .iter()
                .map(|k| (distance(n, k), *k))
                .min()
                .filter(|(d, _)| *d <= 3)
                .map(|(_, k)| k);
            (n.to_string(), best)
        })
        .collect();
    out.sort();
    out
}

/// Levenshtein distance (names are short).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Says once per process, past the test harness's capture, which
/// `C11CHECK_*` variables in the environment c11check does not know.
pub fn warn_unknown() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let names: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .collect();
        for (name, meant) in unknown(names.iter().map(String::as_str)) {
            let hint = meant
                .map(|m| format!(" (did you mean {m}?)"))
                .unwrap_or_default();
            crate::tell_user(&format!(
                "c11check: warning: {name} is not a c11check setting{hint}; it is ignored"
            ));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelled_setting_is_named_with_the_one_meant() {
        let got = unknown(
            [
                "C11CHECK_ITERATION",
                "C11CHECK_MODEL",
                "PATH",
                "C11CHECK_TEST_CC",
                "C11CHECK_FROBNICATE",
            ]
            .into_iter(),
        );
        assert_eq!(
            got,
            vec![
                ("C11CHECK_FROBNICATE".to_string(), None),
                (
                    "C11CHECK_ITERATION".to_string(),
                    Some("C11CHECK_ITERATIONS")
                ),
            ]
        );
    }
}
