//! The README and the user guide (`docs/`) against the code: the counts
//! they quote, the links between them, the settings they name.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn pages() -> Vec<(PathBuf, String)> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// The README is short, says how many tests the bundled suite has, and
/// promises nothing already done.
#[test]
fn the_readme_is_short_and_its_counts_are_the_code_s() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 120,
        "the README grew past 120 lines"
    );
    let suite = std::fs::read_dir(root().join("litmus"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "litmus")
        })
        .count();
    assert!(
        readme.contains(&format!("the litmus suite ({suite} tests")),
        "the README does not say the suite has {suite} tests"
    );
    for (path, text) in pages() {
        for stale in ["comes next", "Still to come", "still to come"] {
            assert!(!text.contains(stale), "{}: `{stale}`", path.display());
        }
    }
}

/// Every relative link of the README and the guide leads to a file.
#[test]
fn links_lead_to_files() {
    for (path, text) in pages() {
        let dir = path.parent().unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let target = &rest[..rest.find(')').unwrap()];
            if target.starts_with("http") || target.starts_with('#') {
                continue;
            }
            let file = target.split('#').next().unwrap();
            assert!(
                dir.join(file).exists(),
                "{}: link to {target} leads nowhere",
                path.display()
            );
        }
    }
}

/// Every `C11CHECK_*` variable the pages name is one c11check reads.
#[test]
fn the_settings_named_are_settings() {
    let known = std::fs::read_to_string(root().join("crates/runtime/src/settings.rs")).unwrap();
    for (path, text) in pages() {
        for (i, _) in text.match_indices("C11CHECK_") {
            let name: String = text[i..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if name.ends_with('_') || name.starts_with("C11CHECK_TEST_") {
                continue;
            }
            assert!(
                known.contains(&format!("\"{name}\"")),
                "{}: {name} is not a setting c11check knows",
                path.display()
            );
        }
    }
}

/// `c11check run --help` names every memory model there is.
#[test]
fn run_help_names_every_model() {
    let out = Command::new(env!("CARGO_BIN_EXE_c11check"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for m in ["cpp20", "rc11", "sc", "mca", "tso"] {
        assert!(help.contains(m), "run --help does not name {m}:\n{help}");
    }
}
