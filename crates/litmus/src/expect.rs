//! Expectations recorded inside litmus files of our own suite, and herd's
//! expected outputs found beside a conformance suite.
//!
//! An own test states what it must show in `@` lines inside a comment:
//!
//! ```text
//! (* @observation Never
//!    @observation.rc11 Sometimes      -- per-model override
//!    @states 1:r0=0; 1:r1=0 | 1:r0=1; 1:r1=1
//!    @race no
//!    @robust no                       -- yes, no, or unobservable
//!    @why release/acquire on y orders the store to x before the read *)
//! ```

use crate::herd::{parse_herd_output, parse_state_line};
use crate::run::TestReport;
use c11check_model::Model;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What a test is expected to show under one model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expectation {
    pub observation: Option<String>,
    pub ok: Option<bool>,
    pub states: Option<BTreeSet<Vec<String>>>,
    pub race: Option<bool>,
    /// `@robust`: `yes`, `no` or `unobservable` (see
    /// [`crate::robust::Verdict::name`]).
    pub robust: Option<String>,
    /// Executions herd counted (positive + negative), when it ran the test.
    pub herd_executions: Option<u64>,
    /// Where the expectation came from (for messages).
    pub source: String,
}

impl Expectation {
    pub fn is_empty(&self) -> bool {
        self.observation.is_none()
            && self.ok.is_none()
            && self.states.is_none()
            && self.race.is_none()
            && self.robust.is_none()
    }

    /// How a robustness check differs from the `@robust` line (`None`
    /// when they agree or the test has none).
    pub fn robust_mismatch(&self, r: &crate::robust::RobustnessReport) -> Option<String> {
        let want = self.robust.as_deref()?;
        let got = r.verdict.name();
        (want != got).then(|| format!("robust {got} (expected {want})"))
    }

    /// Differences between the expectation and a report (empty when they agree).
    pub fn mismatches(&self, r: &TestReport) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(o) = &self.observation {
            if o != r.observation() {
                out.push(format!("observation {} (expected {o})", r.observation()));
            }
        }
        if let Some(ok) = self.ok {
            if ok != r.ok {
                out.push(format!(
                    "{} (expected {})",
                    if r.ok { "Ok" } else { "No" },
                    if ok { "Ok" } else { "No" }
                ));
            }
        }
        if let Some(race) = self.race {
            if race != r.race {
                out.push(format!("race flag {} (expected {})", r.race, race));
            }
        }
        if let Some(states) = &self.states {
            let got: BTreeSet<Vec<String>> = r
                .states
                .keys()
                .map(|v| parse_state_line(&r.state_line(v)))
                .collect();
            if &got != states {
                let missing: Vec<String> = states.difference(&got).map(|s| s.join(" ")).collect();
                let extra: Vec<String> = got.difference(states).map(|s| s.join(" ")).collect();
                out.push(format!(
                    "states differ: missing [{}], unexpected [{}]",
                    missing.join(" | "),
                    extra.join(" | ")
                ));
            }
        }
        out
    }
}

/// Reads the `@` expectation lines of a litmus source for `model`.
pub fn own_expectation(src: &str, model: &str) -> Expectation {
    let mut e = Expectation {
        source: "@ lines".into(),
        ..Default::default()
    };
    let mut specific: Vec<(String, String)> = Vec::new();
    for line in src.lines() {
        let l = line
            .trim()
            .trim_start_matches("(*")
            .trim_end_matches("*)")
            .trim();
        let Some(rest) = l.strip_prefix('@') else {
            continue;
        };
        let (key, val) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let val = val.trim().to_string();
        let (base, m) = key.split_once('.').unwrap_or((key, ""));
        if !m.is_empty() {
            if m == model || Model::from_name(m).is_some_and(|m| m.name() == model) {
                specific.push((base.to_string(), val));
            }
            continue;
        }
        apply(&mut e, base, &val);
    }
    for (k, v) in specific {
        apply(&mut e, &k, &v);
    }
    // Under SC every execution is SC.
    if model == "sc" && e.robust.is_some() && !src.contains("@robust.sc") {
        e.robust = Some("yes".into());
    }
    e
}

fn apply(e: &mut Expectation, key: &str, val: &str) {
    match key {
        "observation" => e.observation = Some(val.to_string()),
        "race" => e.race = Some(matches!(val, "yes" | "true")),
        "robust" => e.robust = Some(val.to_string()),
        "states" => {
            e.states = Some(
                val.split('|')
                    .map(parse_state_line)
                    .filter(|s| !s.is_empty())
                    .collect(),
            )
        }
        _ => {}
    }
}

/// herd's expected output for `test_path` (found under `expect_root` at the same
/// relative path from `input_root`, with `.txt` for `.litmus`).
pub fn herd_expectation(
    input_root: &Path,
    test_path: &Path,
    expect_root: &Path,
) -> Option<Result<Expectation, String>> {
    let rel = test_path.strip_prefix(input_root).ok()?;
    let mut p: PathBuf = expect_root.join(rel);
    p.set_extension("txt");
    if !p.is_file() {
        // A file given on its own: look for its name anywhere below the root.
        let name = p.file_name()?.to_os_string();
        p = find_file(expect_root, &name)?;
    }
    let text = std::fs::read_to_string(&p).ok()?;
    Some(match parse_herd_output(&text) {
        Ok(h) => Ok(Expectation {
            observation: None,
            ok: h.ok,
            states: Some(h.states),
            race: Some(h.race),
            robust: None,
            herd_executions: Some(h.positive + h.negative),
            source: p.display().to_string(),
        }),
        Err(msg) => Err(msg),
    })
}

fn find_file(dir: &Path, name: &std::ffi::OsStr) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(f) = find_file(&p, name) {
                return Some(f);
            }
        } else if p.file_name() == Some(name) {
            return Some(p);
        }
    }
    None
}
