//! Directories every execution starts from as they were (`c11check run
//! --fresh DIR`, `C11CHECK_FRESH=DIR:DIR`): a program that keeps state in
//! files (a database directory, a log) would otherwise find the last
//! execution's files in the next one. Each directory is copied aside
//! before the first execution and put back, exactly, before every
//! execution (a directory that did not exist is removed). Executions then
//! run in this one process, one after the other.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Each fresh directory and its copy (`None`: it did not exist).
static DIRS: Mutex<Vec<(PathBuf, Option<PathBuf>)>> = Mutex::new(Vec::new());

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

/// Whether `C11CHECK_FRESH` names directories (a run then stays on one
/// worker: parallel workers would share them).
pub fn wanted() -> bool {
    std::env::var_os("C11CHECK_FRESH").is_some_and(|v| !v.is_empty())
}

/// Copies the directories `C11CHECK_FRESH` names aside; an error names the
/// directory and stops the run.
pub fn init() -> Result<(), String> {
    let Some(list) = std::env::var_os("C11CHECK_FRESH") else {
        return Ok(());
    };
    let mut dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    for (i, dir) in std::env::split_paths(&list).enumerate() {
        if dir.as_os_str().is_empty() {
            continue;
        }
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        let copy = if dir.is_dir() {
            let copy =
                std::env::temp_dir().join(format!("c11check-fresh-{}-{i}", std::process::id()));
            let _ = std::fs::remove_dir_all(&copy);
            copy_tree(&dir, &copy)
                .map_err(|e| format!("cannot copy {} aside (--fresh): {e}", dir.display()))?;
            Some(copy)
        } else if dir.exists() {
            return Err(format!("--fresh {}: not a directory", dir.display()));
        } else {
            None
        };
        dirs.push((dir, copy));
    }
    Ok(())
}

/// Puts every fresh directory back as it was before the first execution.
pub fn restore() {
    let dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    for (dir, copy) in dirs.iter() {
        let _ = std::fs::remove_dir_all(dir);
        if let Some(copy) = copy {
            if let Err(e) = copy_tree(copy, dir) {
                eprintln!("c11check: cannot put {} back (--fresh): {e}", dir.display());
            }
        }
    }
}

/// Leaves each directory as the last execution left it and removes the
/// copies.
pub fn finish() {
    let dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    for (_, copy) in dirs.iter() {
        if let Some(copy) = copy {
            let _ = std::fs::remove_dir_all(copy);
        }
    }
}
