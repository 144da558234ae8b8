//! `c11check cc`/`c11check c++` (a compiler wrapper) and `c11check run`
//! (checks a program built with it).
//!
//! A program is built with `-fsanitize=thread -g` and linked against
//! `libc11check_rt.so` instead of libtsan; run, it explores itself (see
//! the `c11check-c-runtime` crate) under the settings of the `C11CHECK_*`
//! variables, which `c11check run` sets from its options.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The runtime library's file name.
const RUNTIME: &str = "libc11check_rt.so";

/// The directory holding the runtime library: `$C11CHECK_RUNTIME_DIR`, or
/// next to this executable (a cargo build puts both in `target/<profile>`),
/// or `../lib` from it.
pub fn runtime_dir() -> Result<PathBuf, String> {
    if let Some(d) = std::env::var_os("C11CHECK_RUNTIME_DIR") {
        let d = PathBuf::from(d);
        return if d.join(RUNTIME).is_file() {
            Ok(d)
        } else {
            Err(format!(
                "C11CHECK_RUNTIME_DIR={} has no {RUNTIME}",
                d.display()
            ))
        };
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let here = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    // Test binaries live one level down, in `deps/`, where `cargo test`
    // also leaves the library.
    for d in [
        here.clone(),
        here.join("deps"),
        here.join("../lib"),
        here.join(".."),
    ] {
        if d.join(RUNTIME).is_file() {
            return Ok(d.canonicalize().unwrap_or(d));
        }
    }
    Err(format!(
        "cannot find {RUNTIME} next to {} (build it with `cargo build --release -p c11check-c-runtime`, or set C11CHECK_RUNTIME_DIR)",
        exe.display()
    ))
}

/// Whether `c11check cc` links the runtime statically unless told
/// otherwise: yes (it runs programs faster: no calls into the loader for
/// the runtime's thread-locals), unless `C11CHECK_STATIC_RUNTIME=0`.
fn static_by_default() -> bool {
    std::env::var_os("C11CHECK_STATIC_RUNTIME").is_none_or(|v| v != "0")
}

/// `c11check static-runtime [-o FILE]`.
pub fn static_runtime_command(output: Option<PathBuf>) -> ExitCode {
    let archive = match runtime_dir().and_then(|d| c11check_c_link::static_archive(&d)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("c11check: {e}");
            return ExitCode::from(2);
        }
    };
    match output {
        None => println!("{}", archive.display()),
        Some(o) => {
            if let Err(e) = std::fs::copy(&archive, &o) {
                eprintln!("c11check: cannot write {}: {e}", o.display());
                return ExitCode::from(2);
            }
        }
    }
    eprintln!(
        "c11check: link programs compiled with `-fsanitize=thread -g` against it, without -fsanitize=thread: cc prog.o libc11check_rt.a {}",
        c11check_c_link::STATIC_LIBS.join(" ")
    );
    ExitCode::SUCCESS
}

/// The compiler to run for `c11check cc` (`c++`: `cxx`), with its own
/// leading arguments: `$C11CHECK_CC` (`$C11CHECK_CXX`), else `$CC`
/// (`$CXX`) unless it is c11check itself (`export CC="c11check cc"` before
/// a configure script), else the first of `cc`, `gcc`, `clang` (`c++`,
/// `g++`, `clang++`) on the PATH. A variable may hold a command with
/// arguments (`ccache clang`).
fn compiler(cxx: bool) -> Result<Vec<OsString>, String> {
    let (own, usual) = if cxx {
        ("C11CHECK_CXX", "CXX")
    } else {
        ("C11CHECK_CC", "CC")
    };
    let words = |v: OsString| -> Vec<OsString> {
        v.to_string_lossy()
            .split_whitespace()
            .map(OsString::from)
            .collect()
    };
    let is_c11check = |w: &OsString| {
        Path::new(w)
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("c11check"))
    };
    if let Some(c) = std::env::var_os(own).map(words).filter(|w| !w.is_empty()) {
        return Ok(c);
    }
    if let Some(c) =
        (std::env::var_os(usual).map(words)).filter(|w| !w.is_empty() && !w.iter().any(is_c11check))
    {
        return Ok(c);
    }
    let names: &[&str] = if cxx {
        &["c++", "g++", "clang++"]
    } else {
        &["cc", "gcc", "clang"]
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    for n in names {
        if std::env::split_paths(&path).any(|d| d.join(n).is_file()) {
            return Ok(vec![n.into()]);
        }
    }
    Err(format!(
        "no C{} compiler found (tried {}; set {own} or {usual})",
        if cxx { "++" } else { "" },
        names.join(", ")
    ))
}

/// A command running `cc` (a compiler and its leading arguments).
fn command(cc: &[OsString]) -> Command {
    let mut c = Command::new(&cc[0]);
    c.args(&cc[1..]);
    c
}

fn is_source(a: &str) -> bool {
    [".c", ".cc", ".cpp", ".cxx", ".C", ".c++", ".i", ".ii"]
        .iter()
        .any(|e| a.ends_with(e))
        && !a.starts_with('-')
}

/// Options that matter only when linking (left out when compiling a
/// source on its own).
fn link_only(a: &str) -> bool {
    a.starts_with("-l") || a.starts_with("-L") || a.starts_with("-Wl,") || a == "-static"
}

fn run(cmd: &mut Command) -> Result<(), ExitCode> {
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(ExitCode::from(s.code().unwrap_or(1).clamp(1, 255) as u8)),
        Err(e) => {
            eprintln!("c11check: cannot run {:?}: {e}", cmd.get_program());
            Err(ExitCode::from(2))
        }
    }
}

/// The headers c11check offers programs, by path under the include
/// directory: c11check's own `c11check.h`, GenMC's `genmc.h`, and under
/// `cdschecker/` CDSChecker's.
const HEADERS: &[(&str, &str)] = &[
    (
        "c11check.h",
        include_str!("../../c-runtime/include/c11check.h"),
    ),
    ("genmc.h", include_str!("../../c-runtime/include/genmc.h")),
    (
        "cdschecker/threads.h",
        include_str!("../../c-runtime/include/cdschecker/threads.h"),
    ),
    (
        "cdschecker/stdatomic.h",
        include_str!("../../c-runtime/include/cdschecker/stdatomic.h"),
    ),
    (
        "cdschecker/model-assert.h",
        include_str!("../../c-runtime/include/cdschecker/model-assert.h"),
    ),
    (
        "cdschecker/condition_variable",
        include_str!("../../c-runtime/include/cdschecker/condition_variable"),
    ),
    (
        "cdschecker/librace.h",
        include_str!("../../c-runtime/include/cdschecker/librace.h"),
    ),
];

/// The directory holding [`HEADERS`]: written once per version of them
/// under the temporary directory (this binary carries them, so an
/// installed `c11check` needs no source tree).
pub fn include_dir() -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    HEADERS.hash(&mut h);
    let dir = std::env::temp_dir().join(format!("c11check-include-{:016x}", h.finish()));
    if HEADERS.iter().all(|(p, _)| dir.join(p).is_file()) {
        return Ok(dir);
    }
    // Written beside and renamed into place: builds may run in parallel.
    let part = dir.with_extension(format!("part{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        for (p, text) in HEADERS {
            let f = part.join(p);
            std::fs::create_dir_all(f.parent().unwrap_or(&part))?;
            std::fs::write(f, text)?;
        }
        Ok(())
    };
    let result = write().and_then(|()| std::fs::rename(&part, &dir));
    let _ = std::fs::remove_dir_all(&part);
    match result {
        Ok(()) => Ok(dir),
        // Another build put them there meanwhile.
        Err(_) if HEADERS.iter().all(|(p, _)| dir.join(p).is_file()) => Ok(dir),
        Err(e) => Err(format!(
            "cannot write c11check's headers to {}: {e}",
            dir.display()
        )),
    }
}

/// `c11check cc ARGS...`: the compiler with `-fsanitize=thread -g` when
/// compiling and the runtime when linking. In one command that compiles
/// and links, each source is compiled on its own first (given
/// `-fsanitize=thread`, the link would pull in libtsan).
pub fn cc(mut args: Vec<String>, cxx: bool) -> ExitCode {
    // `--help` alone is a question about c11check, not about the compiler
    // (`c11check cc -v --help` still reaches it).
    if args.len() == 1 && matches!(args[0].as_str(), "--help" | "-h") {
        print!("{}", cc_help(cxx));
        return ExitCode::SUCCESS;
    }
    let cc = match compiler(cxx) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("c11check: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut cdschecker, mut static_runtime) = (false, static_by_default());
    while let Some(a) = args.first() {
        match a.as_str() {
            "--cdschecker" => cdschecker = true,
            "--static-runtime" => static_runtime = true,
            "--shared-runtime" => static_runtime = false,
            _ => break,
        }
        args.remove(0);
    }
    let include = match include_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("c11check: {e}");
            return ExitCode::from(2);
        }
    };
    let mut instrument: Vec<OsString> = vec!["-fsanitize=thread".into(), "-g".into()];
    if cdschecker {
        let mut i = OsString::from("-I");
        i.push(include.join("cdschecker"));
        instrument.push(i);
    }
    // After the program's own -I options: `genmc.h` is found only when the
    // program has none of its own.
    let mut idirafter = vec![OsString::from("-idirafter"), include.into_os_string()];
    let compile_only = args
        .iter()
        .any(|a| a == "-c" || a == "-S" || a == "-E" || a == "-M" || a == "-MM");
    if compile_only {
        return match run(command(&cc)
            .args(&instrument)
            .args(&args)
            .args(idirafter.drain(..)))
        {
            Ok(()) => ExitCode::SUCCESS,
            Err(c) => c,
        };
    }
    let dir = match runtime_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("c11check: {e}");
            return ExitCode::from(2);
        }
    };
    // Compile the sources to objects in a scratch directory.
    let scratch = std::env::temp_dir().join(format!("c11check-cc-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&scratch) {
        eprintln!("c11check: cannot make {}: {e}", scratch.display());
        return ExitCode::from(2);
    }
    let mut compile_flags: Vec<&String> = Vec::new();
    let mut skip_next = false;
    for a in &args {
        if skip_next {
            skip_next = false;
            continue;
        }
        if a == "-o" {
            skip_next = true;
            continue;
        }
        if is_source(a)
            || link_only(a)
            || a.ends_with(".o")
            || a.ends_with(".a")
            || a.ends_with(".so")
        {
            continue;
        }
        compile_flags.push(a);
    }
    let mut link_args: Vec<OsString> = Vec::new();
    let mut k = 0;
    let result = (|| {
        let mut skip = false;
        for a in &args {
            if skip {
                skip = false;
                link_args.push(a.into());
                continue;
            }
            if a == "-o" {
                skip = true;
                link_args.push(a.into());
                continue;
            }
            if is_source(a) {
                k += 1;
                let obj = scratch.join(format!("{k}.o"));
                run(command(&cc)
                    .args(&instrument)
                    .args(&compile_flags)
                    .args(&idirafter)
                    .arg("-c")
                    .arg(a)
                    .arg("-o")
                    .arg(&obj))?;
                link_args.push(obj.into());
            } else {
                link_args.push(a.into());
            }
        }
        // A shared library gets `libc11check_rt.so` as a dependency: linked
        // into it too, the runtime would be there twice. So does a program
        // linked against such a library.
        let checked_library = (static_runtime && !args.iter().any(|a| a == "-shared"))
            .then(|| library_needing_the_runtime(&args))
            .flatten();
        if let Some(lib) = &checked_library {
            eprintln!(
                "c11check: linking the shared runtime (libc11check_rt.so): {} was built with `c11check cc -shared`",
                lib.display()
            );
        }
        if static_runtime && checked_library.is_none() && !args.iter().any(|a| a == "-shared") {
            let archive = c11check_c_link::static_archive(&dir).map_err(|e| {
                eprintln!("c11check: {e}");
                ExitCode::from(2)
            })?;
            return run(command(&cc)
                .args(&link_args)
                .arg(archive)
                .args(c11check_c_link::STATIC_LIBS));
        }
        let mut dir_arg = OsString::from("-Wl,-rpath,");
        dir_arg.push(&dir);
        let mut l_arg = OsString::from("-L");
        l_arg.push(&dir);
        run(command(&cc)
            .args(&link_args)
            .arg(l_arg)
            .arg("-Wl,--no-as-needed")
            .arg("-lc11check_rt")
            .arg(dir_arg)
            .args(["-pthread", "-ldl"]))
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(c) => c,
    }
}

/// What `c11check cc --help` prints.
fn cc_help(cxx: bool) -> String {
    let (me, var, default) = if cxx {
        ("c++", "CXX", "c++")
    } else {
        ("cc", "CC", "cc")
    };
    format!(
        "c11check {me}: compile and link a {lang} program for checking: a drop-in {var}.

Usage: c11check {me} [--cdschecker] [--shared-runtime | --static-runtime] COMPILER-ARGS...

It runs the compiler (${{C11CHECK_{var}}}, else ${var} unless that is c11check, else
{default}) with -fsanitize=thread -g and
c11check's headers (<c11check.h>, <genmc.h>) added, and links c11check's runtime
in place of ThreadSanitizer's. Every other argument goes to the compiler.

  --cdschecker       also CDSChecker's headers (threads.h with user_main,
                     model-assert.h, librace.h)
  --shared-runtime   link libc11check_rt.so instead of the static runtime
                     (needed when the program loads shared libraries built
                     with `c11check {me} -shared`; also C11CHECK_STATIC_RUNTIME=0)
  --static-runtime   link the runtime statically (the default)

Then run the program as usual (settings from C11CHECK_* variables), or with
`c11check run [OPTIONS] ./prog` (see `c11check run --help`). Exit status 0: no
bug, 1: a bug, 2: bad usage. For the compiler's own help: c11check {me} -v --help.

Example: make CC=\"c11check cc\" && c11check run ./prog
",
        lang = if cxx { "C++" } else { "C" },
    )
}

/// Whether `path` is an ELF executable that cannot hold c11check's runtime
/// (no static copy of it, no need of its shared library): such a program
/// would run once, unchecked. `false` when it cannot tell (a script).
fn lacks_runtime(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    if !bytes.starts_with(b"\x7fELF") {
        return false;
    }
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    // The shared runtime's name in the dynamic section, or a string of the
    // runtime itself linked in.
    !(has(RUNTIME.as_bytes()) || has(b"C11CHECK_STARTED_FILE"))
}

/// Finds `program` as the shell would (a path, or a name on `PATH`).
fn find_program(program: &std::ffi::OsStr) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 {
        return Some(p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(p))
            .find(|c| c.is_file())
    })
}

/// `c11check run`'s options.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Run this many random executions (the live engine) instead of all of them.
    #[arg(long, value_name = "N")]
    random: Option<u64>,
    /// Seed of a random run.
    #[arg(long)]
    seed: Option<u64>,
    /// Schedule random executions with PCT of this depth.
    #[arg(long, value_name = "D")]
    pct: Option<u32>,
    /// Memory model: cpp20 (default), rc11, sc, mca (C++20 on
    /// multi-copy-atomic hardware such as ARMv8) or tso (C++20 compiled for
    /// x86-64, under x86-TSO).
    #[arg(long)]
    model: Option<String>,
    /// Stop after this many executions.
    #[arg(long)]
    max_executions: Option<u64>,
    /// Explore only the executions a schedule reaches preempting threads at
    /// most this many times (a switch at a thread's end, join or lock is
    /// free).
    #[arg(long, value_name = "K", conflicts_with = "random")]
    preemption_bound: Option<u32>,
    /// Stop after this many seconds.
    #[arg(long)]
    timeout: Option<f64>,
    /// Also report an execution the model allows that no interleaving of
    /// the threads produces (robustness against SC).
    #[arg(long, conflicts_with = "random")]
    robustness: bool,
    /// Re-run only the execution of this replay string (from a report).
    #[arg(long)]
    replay: Option<String>,
    /// Print the verdict as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Start every execution with this directory or file as it was before
    /// the first (copied aside, put back before each execution; one that
    /// did not exist is removed): for a program that keeps state in files.
    /// `*` or `?` in the last component make it a pattern (quote it): the
    /// paths it matches, those an execution makes removed before the next.
    /// May be given more than once.
    #[arg(long, value_name = "PATH")]
    fresh: Vec<PathBuf>,
    /// The program and its arguments (`--` before them is optional; the
    /// options go before the program).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    program: Vec<OsString>,
}

/// `c11check run [OPTIONS] [--] PROGRAM ARGS...`: runs the program with the
/// options as `C11CHECK_*` variables; its exit status is ours (0: no bug,
/// 1: a bug, 2: a usage error).
pub fn run_program(a: RunArgs) -> ExitCode {
    if let Some(m) = &a.model {
        if c11check_model::Model::from_name(m).is_none() {
            eprintln!(
                "c11check: unknown model '{m}' (expected {})",
                c11check_model::Model::names()
            );
            return ExitCode::from(2);
        }
    }
    if find_program(&a.program[0]).is_some_and(|p| lacks_runtime(&p)) {
        eprintln!(
            "c11check: {} was not built with c11check's runtime: build it with `c11check cc` (or `c11check c++`), e.g. `make CC=\"c11check cc\"`; nothing was run",
            a.program[0].to_string_lossy()
        );
        return ExitCode::from(2);
    }
    let mut cmd = Command::new(&a.program[0]);
    cmd.args(&a.program[1..]);
    let mut set = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    };
    set("C11CHECK_ITERATIONS", a.random.map(|n| n.to_string()));
    set("C11CHECK_SEED", a.seed.map(|n| n.to_string()));
    set("C11CHECK_PCT", a.pct.map(|n| n.to_string()));
    set("C11CHECK_MODEL", a.model.clone());
    set(
        "C11CHECK_MAX_EXECUTIONS",
        a.max_executions.map(|n| n.to_string()),
    );
    set("C11CHECK_MAX_DURATION", a.timeout.map(|n| n.to_string()));
    set(
        "C11CHECK_PREEMPTIONS",
        a.preemption_bound.map(|n| n.to_string()),
    );
    set("C11CHECK_ROBUSTNESS", a.robustness.then(|| "1".to_string()));
    set("C11CHECK_REPLAY", a.replay.clone());
    set("C11CHECK_JSON", a.json.then(|| "1".to_string()));
    if !a.fresh.is_empty() {
        match std::env::join_paths(&a.fresh) {
            Ok(list) => {
                cmd.env("C11CHECK_FRESH", list);
            }
            Err(e) => {
                eprintln!("c11check: --fresh: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if a.pct.is_some() && a.random.is_none() {
        cmd.env("C11CHECK_ITERATIONS", "1000");
    }
    // The runtime writes to this file when it takes over `main`: a program
    // not built with `c11check cc` would otherwise "pass" unchecked.
    let marker = std::env::temp_dir().join(format!("c11check-run-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    cmd.env("C11CHECK_STARTED_FILE", &marker);
    let status = cmd.status();
    let started = marker.exists();
    let _ = std::fs::remove_file(&marker);
    if status.is_ok() && !started {
        eprintln!(
            "c11check: {} ran without c11check's runtime: build it with `c11check cc` (or `c11check c++`)",
            a.program[0].to_string_lossy()
        );
        return ExitCode::from(2);
    }
    match status {
        Ok(s) => match s.code() {
            Some(c) => ExitCode::from(c.clamp(0, 255) as u8),
            None => {
                eprintln!(
                    "c11check: {} was killed by a signal ({s}); was it built with `c11check cc`?",
                    a.program[0].to_string_lossy()
                );
                ExitCode::from(1)
            }
        },
        Err(e) => {
            eprintln!(
                "c11check: cannot run {}: {e}",
                a.program[0].to_string_lossy()
            );
            ExitCode::from(2)
        }
    }
}

/// A shared library among the link's inputs (`lib.so` given as it is, or
/// `-lNAME` found as `libNAME.so` in a `-L` directory) that needs
/// `libc11check_rt.so`: one built with `c11check cc -shared`.
fn library_needing_the_runtime(args: &[String]) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-L" {
            dirs.extend(it.next().map(PathBuf::from));
        } else if let Some(d) = a.strip_prefix("-L") {
            dirs.push(PathBuf::from(d));
        } else if a == "-l" {
            names.extend(it.next().cloned());
        } else if let Some(n) = a.strip_prefix("-l") {
            names.push(n.to_string());
        } else if a.ends_with(".so") || a.contains(".so.") {
            candidates.push(PathBuf::from(a));
        }
    }
    for n in &names {
        candidates.extend(dirs.iter().map(|d| d.join(format!("lib{n}.so"))));
    }
    // Its dynamic string table names the runtime (a `DT_NEEDED` entry).
    let needle = b"libc11check_rt.so\0";
    candidates.into_iter().find(|p| {
        std::fs::read(p).is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
    })
}
