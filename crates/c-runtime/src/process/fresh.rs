//! Directories and files every execution starts from as they were
//! (`c11check run --fresh PATH`, `C11CHECK_FRESH=PATH:PATH`): a program that
//! keeps state in files (a database directory, a log) would otherwise find
//! the last execution's files in the next one. Each path is copied aside
//! before the first execution and put back, exactly, before every
//! execution (one that did not exist is removed). A path whose last
//! component has `*` or `?` in it is a pattern: every path it matches is
//! treated so, and one made by an execution is removed before the next
//! (Mabain names its queue `/dev/shm/_mabain_q` and a file's inode number,
//! which changes from one execution to the next: `--fresh
//! '/dev/shm/_mabain_q*'`). Executions then run in this one process, one
//! after the other.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a fresh path held before the first execution.
enum Saved {
    /// A directory, copied to this path.
    Dir(PathBuf),
    /// A file (or symbolic link), copied to this path.
    File(PathBuf),
    /// Nothing.
    Missing,
}

/// One `--fresh` entry: the paths it names, each with what it held.
struct Fresh {
    /// A pattern's directory and last component (`None`: a plain path).
    pattern: Option<(PathBuf, String)>,
    saved: Vec<(PathBuf, Saved)>,
}

static FRESH: Mutex<Vec<Fresh>> = Mutex::new(Vec::new());

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// Whether `name` matches `pattern` (`*`: any run of characters, `?`: one).
fn matches(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            matches(&pattern[1..], name) || (!name.is_empty() && matches(pattern, &name[1..]))
        }
        (Some(b'?'), Some(_)) => matches(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => matches(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// The paths in `dir` whose names match `pattern`, in name order.
fn matching(dir: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| matches(pattern.as_bytes(), e.file_name().as_encoded_bytes()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Removes whatever is at `path`.
fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Copies what `path` holds aside (to `copy` if it is something).
fn save(path: &Path, copy: PathBuf) -> Result<Saved, String> {
    let failed = |e: std::io::Error| format!("cannot copy {} aside (--fresh): {e}", path.display());
    // A copy left by an earlier run of this process number goes first.
    remove(&copy);
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            copy_tree(path, &copy).map_err(failed)?;
            Ok(Saved::Dir(copy))
        }
        Ok(m) if m.file_type().is_symlink() => {
            let target = std::fs::read_link(path).map_err(failed)?;
            std::os::unix::fs::symlink(target, &copy).map_err(failed)?;
            Ok(Saved::File(copy))
        }
        Ok(_) => {
            std::fs::copy(path, &copy).map_err(failed)?;
            Ok(Saved::File(copy))
        }
        Err(_) => Ok(Saved::Missing),
    }
}

/// Puts `saved` back at `path`.
fn put_back(path: &Path, saved: &Saved) {
    let result = match saved {
        Saved::Dir(copy) => copy_tree(copy, path),
        Saved::File(copy) => match std::fs::read_link(copy) {
            Ok(target) => std::os::unix::fs::symlink(target, path),
            Err(_) => std::fs::copy(copy, path).map(|_| ()),
        },
        Saved::Missing => Ok(()),
    };
    if let Err(e) = result {
        eprintln!(
            "c11check: cannot put {} back (--fresh): {e}",
            path.display()
        );
    }
}

/// Whether `C11CHECK_FRESH` names paths (a run then stays on one worker:
/// parallel workers would share them).
pub fn wanted() -> bool {
    std::env::var_os("C11CHECK_FRESH").is_some_and(|v| !v.is_empty())
}

/// Copies the paths `C11CHECK_FRESH` names aside; an error names the path
/// and stops the run.
pub fn init() -> Result<(), String> {
    let Some(list) = std::env::var_os("C11CHECK_FRESH") else {
        return Ok(());
    };
    let mut fresh = FRESH.lock().unwrap_or_else(|e| e.into_inner());
    let copy_of = |i: usize, j: usize| {
        std::env::temp_dir().join(format!("c11check-fresh-{}-{i}-{j}", std::process::id()))
    };
    for (i, path) in std::env::split_paths(&list).enumerate() {
        if path.as_os_str().is_empty() {
            continue;
        }
        let path = std::path::absolute(&path).unwrap_or(path);
        let last = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let pattern = last
            .filter(|n| n.contains(['*', '?']))
            .map(|n| (path.parent().unwrap_or(Path::new("/")).to_path_buf(), n));
        let paths = match &pattern {
            Some((dir, glob)) => matching(dir, glob),
            None => vec![path],
        };
        let mut saved = Vec::new();
        for (j, p) in paths.into_iter().enumerate() {
            let s = save(&p, copy_of(i, j))?;
            saved.push((p, s));
        }
        fresh.push(Fresh { pattern, saved });
    }
    Ok(())
}

/// Puts every fresh path back as it was before the first execution.
pub fn restore() {
    let fresh = FRESH.lock().unwrap_or_else(|e| e.into_inner());
    for f in fresh.iter() {
        if let Some((dir, glob)) = &f.pattern {
            for p in matching(dir, glob) {
                remove(&p);
            }
        }
        for (path, saved) in &f.saved {
            remove(path);
            put_back(path, saved);
        }
    }
}

/// Leaves each path as the last execution left it and removes the copies.
pub fn finish() {
    let fresh = FRESH.lock().unwrap_or_else(|e| e.into_inner());
    for (_, saved) in fresh.iter().flat_map(|f| &f.saved) {
        if let Saved::Dir(copy) | Saved::File(copy) = saved {
            remove(copy);
        }
    }
}
