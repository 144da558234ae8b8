//! Linking C and C++ programs against c11check's runtime statically.
//!
//! The runtime (`crates/c-runtime`) is built by cargo as a shared library
//! (`libc11check_rt.so`) and a Rust static library (`libc11check_rt.a`).
//! The latter cannot be linked into a program as it is: the runtime must
//! find its own code, data and thread-locals inside the executable, in one
//! piece each (see `c11check_rt::image`). [`static_archive`] makes the
//! archive that can: one relocatable object linked by `ld -r` under the
//! runtime's `static.ld`. `c11check cc --static-runtime`, `c11check
//! static-runtime` and the runtime's tests use it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What a program linked with the static runtime also needs (the Rust
/// standard library's system libraries).
pub const STATIC_LIBS: &[&str] = &["-pthread", "-ldl", "-lgcc_s", "-lm", "-lrt", "-lutil"];

/// The linker script that makes the runtime one relocatable object.
const STATIC_SCRIPT: &str = include_str!("../../c-runtime/static.ld");

/// The runtime's static library: cargo's `libc11check_rt.a` (the Rust
/// static library, in `dir`) linked by `ld -r` under `STATIC_SCRIPT` into
/// one object, keeping only what the runtime's entry points (the shared
/// library's exported symbols) reach. Made once per build of the runtime,
/// under the temporary directory.
pub fn static_archive(dir: &Path) -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let rust_lib = dir.join("libc11check_rt.a");
    let shared = dir.join("libc11check_rt.so");
    let stamp = |p: &Path| -> Result<(u64, std::time::SystemTime), String> {
        let m = std::fs::metadata(p).map_err(|e| {
            format!(
                "cannot read {} ({e}): build it with `cargo build --release -p c11check-c-runtime`",
                p.display()
            )
        })?;
        Ok((m.len(), m.modified().unwrap_or(std::time::UNIX_EPOCH)))
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (STATIC_SCRIPT, &rust_lib, stamp(&rust_lib)?, stamp(&shared)?).hash(&mut h);
    let out_dir = std::env::temp_dir().join(format!("c11check-rt-{:016x}", h.finish()));
    let archive = out_dir.join("libc11check_rt.a");
    if archive.is_file() {
        return Ok(archive);
    }
    // The roots: every symbol the shared library exports.
    let bytes =
        std::fs::read(&shared).map_err(|e| format!("cannot read {}: {e}", shared.display()))?;
    let roots = exported_symbols(&bytes)
        .map_err(|e| format!("cannot read the symbols of {}: {e}", shared.display()))?;
    // Made beside and renamed into place: builds may run in parallel.
    static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let part = out_dir.with_extension(format!(
        "part{}-{}",
        std::process::id(),
        MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let make = || -> Result<(), String> {
        std::fs::create_dir_all(&part)
            .map_err(|e| format!("cannot make {}: {e}", part.display()))?;
        let script = part.join("static.ld");
        std::fs::write(&script, STATIC_SCRIPT).map_err(|e| e.to_string())?;
        let object = part.join("c11check_rt.o");
        let ld = std::env::var_os("C11CHECK_LD").unwrap_or_else(|| "ld".into());
        let mut cmd = Command::new(&ld);
        // `--wrap`: the runtime's own copies go straight to glibc (as
        // its build.rs has it for the shared library).
        cmd.args(["-r", "--strip-debug", "--gc-sections"]).args([
            "--wrap=memcpy",
            "--wrap=memmove",
            "--wrap=memset",
        ]);
        for r in &roots {
            cmd.arg("-u").arg(r);
        }
        cmd.arg("-T")
            .arg(&script)
            .arg("--whole-archive")
            .arg(&rust_lib)
            .arg("-o")
            .arg(&object);
        tool(&mut cmd, &ld)?;
        let mut ar = Command::new("ar");
        ar.arg("rcs")
            .arg(part.join("libc11check_rt.a"))
            .arg(&object);
        tool(&mut ar, "ar".as_ref())?;
        let _ = std::fs::remove_file(&object);
        let _ = std::fs::remove_file(&script);
        Ok(())
    };
    let result = make().and_then(|()| {
        std::fs::rename(&part, &out_dir).or_else(|e| {
            if archive.is_file() {
                Ok(()) // another build made it meanwhile
            } else {
                Err(format!("cannot make {}: {e}", out_dir.display()))
            }
        })
    });
    let _ = std::fs::remove_dir_all(&part);
    result.map(|()| archive)
}

/// Runs a build tool, its failure an error naming it.
fn tool(cmd: &mut Command, name: &std::ffi::OsStr) -> Result<(), String> {
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "{} failed making the static runtime:\n{}",
            name.to_string_lossy(),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Err(format!(
            "cannot run {} (binutils) to make the static runtime: {e}",
            name.to_string_lossy()
        )),
    }
}

/// The names of the functions and objects a shared library exports.
fn exported_symbols(bytes: &[u8]) -> Result<Vec<String>, object::Error> {
    use object::{Object, ObjectSymbol};
    let file = object::File::parse(bytes)?;
    Ok(file
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect())
}
