//! Building and running C test programs against the runtime.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `../shared/<rel>`, or `$<var>`: the shared test material, read in place;
/// panics loudly, naming `what`, when `probe` is not in it.
pub fn shared_dir(var: &str, rel: &str, probe: &str, what: &str) -> PathBuf {
    let dir = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared")
            .join(rel)
    });
    assert!(
        dir.join(probe).exists(),
        "{what} are missing: expected them at {} (set {var})",
        dir.display()
    );
    dir
}

/// `../shared/genmc-tests` (or `$C11CHECK_GENMC_TESTS`).
pub fn genmc_tests() -> PathBuf {
    shared_dir(
        "C11CHECK_GENMC_TESTS",
        "genmc-tests",
        "correct",
        "GenMC's test programs",
    )
}

/// The directory holding `libc11check_rt.so`, built with this test: cargo
/// leaves it beside the test binary (`target/<profile>/deps`), and copies
/// it to `target/<profile>` when the library is built on its own.
pub fn runtime_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    [deps.clone(), deps.parent().unwrap().to_path_buf()]
        .into_iter()
        .find(|d| d.join("libc11check_rt.so").is_file())
        .unwrap_or_else(|| {
            panic!(
                "libc11check_rt.so is not in {} nor above it",
                deps.display()
            )
        })
}

/// Whether the tests link the runtime statically, as `c11check cc` does,
/// or as `libc11check_rt.so` (`C11CHECK_TEST_LINK=shared`).
pub fn static_link() -> bool {
    std::env::var("C11CHECK_TEST_LINK").map_or(true, |v| v != "shared")
}

/// Adds the runtime to a link command: the shared library, or with
/// [`static_link`] the static archive.
pub fn link_runtime(cmd: &mut Command) -> &mut Command {
    link_runtime_as(cmd, static_link())
}

/// Adds the runtime to a link command: the static archive if `statically`,
/// else the shared library.
pub fn link_runtime_as(cmd: &mut Command, statically: bool) -> &mut Command {
    let dir = runtime_dir();
    if statically {
        let archive = c11check_c_link::static_archive(&dir).unwrap_or_else(|e| panic!("{e}"));
        return cmd.arg(archive).args(c11check_c_link::STATIC_LIBS);
    }
    cmd.arg(format!("-L{}", dir.display()))
        .args(["-Wl,--no-as-needed", "-lc11check_rt"])
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .args(["-pthread", "-ldl"])
}

/// The compiler the tests use: `$C11CHECK_TEST_CC`, else `cc`.
pub fn compiler() -> String {
    std::env::var("C11CHECK_TEST_CC").unwrap_or_else(|_| "cc".into())
}

/// The C++ compiler the tests use: `$C11CHECK_TEST_CXX`, else the C++
/// driver of the C compiler (`clang++` for `clang`), else `c++`.
pub fn cxx_compiler() -> String {
    std::env::var("C11CHECK_TEST_CXX").unwrap_or_else(|_| {
        let cc = compiler();
        match cc.as_str() {
            "clang" => "clang++".into(),
            "gcc" => "g++".into(),
            _ => "c++".into(),
        }
    })
}

/// The compatibility headers (`genmc.h`).
pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// One program to build and run.
#[derive(Clone, Debug)]
pub struct Case {
    /// `litmus/MP/mp0.c` plus the flags, for the table.
    pub name: String,
    pub source: PathBuf,
    pub cflags: Vec<String>,
    /// GenMC's flags for this configuration.
    pub genmc_flags: String,
    /// GenMC's execution count (RC11, `wb`: modification orders no read
    /// observes are not told apart, as c11check does), when it has one.
    pub expected: Option<u64>,
    /// GenMC's count with every modification order told apart (`mo`).
    pub expected_mo: Option<u64>,
    /// GenMC bounded the program's loops (`-unroll`), so counts differ.
    pub loops: bool,
    /// For a `wrong` test: the error GenMC reports.
    pub expected_error: Option<String>,
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

fn variants(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("variants"))
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "c"));
    v.sort();
    v
}

/// `args.rc11.mo.in`'s configurations: (GenMC flags, compiler flags).
fn configurations(dir: &Path) -> Vec<(String, Vec<String>)> {
    configurations_in(dir, "args.rc11.mo.in")
}

/// The configurations of one of a test's `args.*.in` files.
fn configurations_in(dir: &Path, file: &str) -> Vec<(String, Vec<String>)> {
    match read(&dir.join(file)) {
        None => vec![(String::new(), Vec::new())],
        Some(text) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let (g, c) = l.split_once('|').unwrap_or((l, ""));
                (
                    g.trim().to_string(),
                    // Paths are GenMC's (`-I./tests/correct/...`).
                    c.split_whitespace()
                        .map(|a| match a.strip_prefix("-I./tests/") {
                            Some(rest) => format!(
                                "-I{}",
                                dir.ancestors().nth(3).unwrap().join(rest).display()
                            ),
                            None => a.to_string(),
                        })
                        .collect(),
                )
            })
            .collect(),
    }
}

/// The test directories of `<kind>/<category>`, sorted.
fn test_dirs(root: &Path, kind: &str, category: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join(kind).join(category))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Fails listing `bad` (one line per wrong case) if it is not empty.
pub fn assert_none_wrong(bad: &[String], of: usize) {
    assert!(
        bad.is_empty(),
        "{} of {of} cases wrong:\n  {}",
        bad.len(),
        bad.join("\n  ")
    );
}

impl Case {
    /// The `correct/<category>` cases, one per variant and configuration.
    pub fn correct(root: &Path, category: &str) -> Vec<Case> {
        let only = std::env::var("C11CHECK_GENMC_ONLY").ok();
        let mut out = Vec::new();
        for dir in test_dirs(root, "correct", category) {
            let vs = variants(&dir);
            let configs = configurations(&dir);
            let counts = |f: &str| -> Vec<u64> {
                read(&dir.join(f))
                    .unwrap_or_default()
                    .split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect()
            };
            let (expected, expected_mo) =
                (counts("expected.rc11.wb.in"), counts("expected.rc11.mo.in"));
            // One count per configuration (the variants are the same
            // program), or one per variant and configuration.
            let pick = |counts: &[u64], ci: usize, vi: usize| {
                if counts.len() == configs.len() {
                    counts.get(ci).copied()
                } else {
                    counts.get(ci * vs.len() + vi).copied()
                }
            };
            for (ci, (gflags, cflags)) in configs.iter().enumerate() {
                for (vi, v) in vs.iter().enumerate() {
                    let name = format!(
                        "{category}/{}/{}{}",
                        dir.file_name().unwrap().to_string_lossy(),
                        v.file_name().unwrap().to_string_lossy(),
                        if cflags.is_empty() {
                            String::new()
                        } else {
                            format!(" {}", cflags.join(" "))
                        }
                    );
                    if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
                        continue;
                    }
                    out.push(Case {
                        name,
                        source: v.clone(),
                        cflags: cflags.clone(),
                        genmc_flags: gflags.clone(),
                        expected: pick(&expected, ci, vi),
                        expected_mo: pick(&expected_mo, ci, vi),
                        loops: gflags.contains("-unroll"),
                        expected_error: None,
                    });
                }
            }
        }
        out
    }
}

impl Case {
    /// The `correct/<category>` cases GenMC counts under SC with a context
    /// (preemption) bound, `expected.cb.in`: one per variant and
    /// configuration of `args.sc.mo.in` (GenMC's bound tests use the SC
    /// model), each with its counts for the bounds 0, 1, 2, ...
    pub fn context_bounded(root: &Path, category: &str) -> Vec<(Case, Vec<u64>)> {
        let mut out = Vec::new();
        for dir in test_dirs(root, "correct", category) {
            let Some(text) = read(&dir.join("expected.cb.in")) else {
                continue;
            };
            let lines: Vec<Vec<u64>> = text
                .lines()
                .map(|l| {
                    l.split_whitespace()
                        .filter_map(|w| w.parse().ok())
                        .collect()
                })
                .collect();
            for (ci, (gflags, cflags)) in
                configurations_in(&dir, "args.sc.mo.in").iter().enumerate()
            {
                let Some(counts) = lines.get(ci).filter(|c| !c.is_empty()) else {
                    continue;
                };
                for v in variants(&dir) {
                    let name = format!(
                        "{category}/{}/{} {}",
                        dir.file_name().unwrap().to_string_lossy(),
                        v.file_name().unwrap().to_string_lossy(),
                        cflags.join(" ")
                    );
                    let case = Case {
                        name,
                        source: v,
                        cflags: cflags.clone(),
                        genmc_flags: gflags.clone(),
                        expected: None,
                        expected_mo: None,
                        loops: gflags.contains("-unroll"),
                        expected_error: None,
                    };
                    out.push((case, counts.clone()));
                }
            }
        }
        out
    }

    /// The `wrong/<category>` cases: one per variant, with the error GenMC
    /// reports for it (from its RC11 trace).
    pub fn wrong(root: &Path, category: &str) -> Vec<Case> {
        let only = std::env::var("C11CHECK_GENMC_ONLY").ok();
        let mut out = Vec::new();
        for dir in test_dirs(root, "wrong", category) {
            let flags = read(&dir.join("genmc.rc11.wb.in")).unwrap_or_default();
            for v in variants(&dir) {
                let stem = v.file_stem().unwrap().to_string_lossy().to_string();
                let trace = ["rc11.wb", "rc11.mo", "imm.wb"]
                    .iter()
                    .find_map(|m| read(&v.with_file_name(format!("{stem}.{m}.trace"))));
                let error = trace
                    .and_then(|t| t.lines().next().map(|l| l.trim().to_string()))
                    .unwrap_or_default();
                let name = format!(
                    "wrong/{category}/{}/{}",
                    dir.file_name().unwrap().to_string_lossy(),
                    v.file_name().unwrap().to_string_lossy()
                );
                if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
                    continue;
                }
                out.push(Case {
                    name,
                    source: v,
                    cflags: Vec::new(),
                    genmc_flags: flags.trim().to_string(),
                    expected: None,
                    expected_mo: None,
                    loops: false,
                    expected_error: Some(error),
                });
            }
        }
        out
    }
}

/// What a run gave.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// No bug; whether the program looped or waited at barriers (its
    /// count then depends on how loops are cut: c11check cuts a turn that
    /// re-read what the turn before read, GenMC bounds or assumes; and on
    /// how barriers are explored: GenMC's barrier-aware exploration counts
    /// one execution where c11check counts one per possible last arrival).
    Pass {
        executions: u64,
        loops: bool,
    },
    /// The report's first line (`c11check found a data race in execution 2:`) and the next.
    Bug {
        title: String,
        message: String,
    },
    CompileError(String),
    /// Every execution was cut at the loop bound (`C11CHECK_LOOP_BOUND`,
    /// set from GenMC's `-unroll`): no execution finished, so nothing was
    /// checked (GenMC's count may still be above 0: its bound counts
    /// iterations, c11check's the turns of a loop it recognised).
    AllCut,
    /// No bug within the execution budget (`C11CHECK_GENMC_BUDGET`), which
    /// stopped the run: too large to finish here, listed, not failed.
    Budget {
        executions: u64,
    },
    /// No verdict within the hang guard (`C11CHECK_GENMC_TIMEOUT`, 30
    /// minutes): the program hangs.
    Timeout,
    /// Anything else (a crash, an unreadable verdict): status and output.
    Other(String),
}

pub struct Run {
    pub case: Case,
    pub outcome: Outcome,
    pub secs: f64,
}

/// Builds `case` into `out` (an executable); the compiler's complaint if it fails.
pub fn build_case(case: &Case, out: &Path) -> Result<(), String> {
    let cc = compiler();
    let obj = out.with_extension("o");
    let o = Command::new(&cc)
        // GenMC keeps every access the source makes (an unused read of a
        // racy variable included): -O0 does too. `C11CHECK_TEST_OPT`
        // picks another level.
        .arg(std::env::var("C11CHECK_TEST_OPT").unwrap_or_else(|_| "-O0".into()))
        .args(["-fsanitize=thread", "-g", "-w", "-c"])
        // GenMC's include directory gives every program <stdint.h>'s types.
        .args(["-include", "stdint.h"])
        .arg("-I")
        .arg(include_dir())
        .args(&case.cflags)
        .arg(&case.source)
        .arg("-o")
        .arg(&obj)
        .output()
        .map_err(|e| format!("{cc}: {e}"))?;
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr)
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join(" / "));
    }
    let o = link_runtime(Command::new(&cc).arg(&obj).arg("-o").arg(out))
        .output()
        .map_err(|e| format!("{cc}: {e}"))?;
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr)
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join(" / "));
    }
    Ok(())
}

/// How many executions a GenMC program may take here
/// (`C11CHECK_GENMC_BUDGET`, 600,000: above the largest count that
/// finishes, fib_bench's 525,630): a program over it is listed, not failed.
/// An execution budget, not a time limit, so that which programs are
/// checked does not depend on how busy the machine is.
pub fn genmc_budget() -> String {
    std::env::var("C11CHECK_GENMC_BUDGET").unwrap_or_else(|_| "600000".into())
}

/// How long a program may run before it is taken for hung
/// (`C11CHECK_GENMC_TIMEOUT`, 30 minutes): a guard against hangs only, far
/// above what the budget takes on a busy machine.
pub fn hang_guard() -> Duration {
    Duration::from_secs_f64(
        std::env::var("C11CHECK_GENMC_TIMEOUT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1800.0),
    )
}

/// Runs a built program with `env`, killing it after `timeout`.
pub fn run_program(exe: &Path, env: &[(&str, &str)], timeout: Duration) -> Outcome {
    let mut child = match Command::new(exe)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return Outcome::Other(e.to_string()),
    };
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut { stderr }, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break Some(s);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let err = reader.join().unwrap_or_default();
    let Some(status) = status else {
        return Outcome::Timeout;
    };
    if let Some(line) = err
        .lines()
        .find(|l| l.starts_with("c11check: no bug found in "))
    {
        let n = line["c11check: no bug found in ".len()..]
            .split_whitespace()
            .next()
            .and_then(|w| w.parse().ok());
        if let (Some(n), Some(0)) = (n, status.code()) {
            if line.contains("(stopped early: a budget was reached)") {
                return Outcome::Budget { executions: n };
            }
            return Outcome::Pass {
                executions: n,
                loops: line.contains("it loops") || line.contains("at barriers"),
            };
        }
    }
    if status.code() == Some(0)
        && err.lines().any(|l| {
            l.starts_with("c11check: no execution of ") && l.contains("got past the loop bound")
        })
    {
        return Outcome::AllCut;
    }
    let mut lines = err
        .lines()
        .skip_while(|l| !l.starts_with("c11check found a "));
    if let (Some(title), Some(1)) = (lines.next(), status.code()) {
        return Outcome::Bug {
            title: title.to_string(),
            message: lines.next().unwrap_or("").trim().to_string(),
        };
    }
    Outcome::Other(format!(
        "status {status}: {}",
        err.lines().rev().take(4).collect::<Vec<_>>().join(" / ")
    ))
}

/// Builds and runs every case (two at a time), printing a table.
pub fn run_suite(_root: &Path, cases: Vec<Case>) -> Vec<Run> {
    let timeout = hang_guard();
    let budget = genmc_budget();
    // One directory per suite (the tests of a binary run side by side).
    static SUITES: AtomicUsize = AtomicUsize::new(0);
    let scratch = std::env::temp_dir().join(format!(
        "c11check-genmc-{}-{}",
        std::process::id(),
        SUITES.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&scratch).unwrap();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Run>>> = Mutex::new((0..cases.len()).map(|_| None).collect());
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let exe = scratch.join(format!("t{i}"));
                let start = Instant::now();
                let outcome = match build_case(case, &exe) {
                    Err(e) => Outcome::CompileError(e),
                    Ok(()) => {
                        // GenMC checks safety, not liveness (unless asked to).
                        let mut env = vec![
                            ("C11CHECK_MODEL", "rc11"),
                            ("C11CHECK_LIVELOCKS", "0"),
                            ("C11CHECK_MAX_EXECUTIONS", budget.as_str()),
                        ];
                        if case.genmc_flags.contains("-disable-race-detection") {
                            env.push(("C11CHECK_RACES", "0"));
                        }
                        let unroll = case
                            .genmc_flags
                            .split_whitespace()
                            .find_map(|f| f.strip_prefix("-unroll="))
                            .map(String::from);
                        if let Some(n) = &unroll {
                            env.push(("C11CHECK_LOOP_BOUND", n.as_str()));
                        }
                        run_program(&exe, &env, timeout)
                    }
                };
                results.lock().unwrap()[i] = Some(Run {
                    case: case.clone(),
                    outcome,
                    secs: start.elapsed().as_secs_f64(),
                });
            });
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let runs: Vec<Run> = results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect();
    println!(
        "{:<60} {:>10} {:>10} {:>10} {:>8}  verdict",
        "program", "GenMC mo", "GenMC wb", "c11check", "secs"
    );
    for r in &runs {
        let exp = r.case.expected.map_or("-".to_string(), |e| e.to_string());
        let mo = r
            .case
            .expected_mo
            .map_or("-".to_string(), |e| e.to_string());
        let (ours, verdict) = match &r.outcome {
            Outcome::Pass { executions, loops } => (
                executions.to_string(),
                match r.case.expected {
                    Some(e) if e == *executions => "same".to_string(),
                    Some(_) if r.case.loops || *loops => format!(
                        "loops (GenMC: {})",
                        if r.case.genmc_flags.is_empty() {
                            "spin-assume"
                        } else {
                            &r.case.genmc_flags
                        }
                    ),
                    Some(_) => "MISMATCH".to_string(),
                    None => "pass".to_string(),
                },
            ),
            Outcome::Bug { title, message } => ("-".into(), format!("{title} {message}")),
            Outcome::CompileError(e) => ("-".into(), format!("compile error: {e}")),
            Outcome::AllCut => (
                "0".into(),
                format!(
                    "every execution cut at the loop bound (GenMC: {})",
                    r.case.genmc_flags
                ),
            ),
            Outcome::Budget { executions } => {
                (executions.to_string(), "over the execution budget".into())
            }
            Outcome::Timeout => ("-".into(), "hung (no verdict within the hang guard)".into()),
            Outcome::Other(e) => ("-".into(), e.clone()),
        };
        println!(
            "{:<60} {:>10} {:>10} {:>10} {:>8.2}  {verdict}",
            r.case.name, mo, exp, ours, r.secs
        );
    }
    runs
}

/// Builds `source` (C) with `-O1` into a fresh executable: compiled with
/// `-fsanitize=thread`, then linked against the runtime without it (with
/// it, libtsan would be linked in too).
pub fn build(name: &str, source: &str) -> PathBuf {
    build_with(name, source, Lang::C, &[])
}

/// The language of a test program.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    C,
    /// C++20.
    Cxx,
}

/// Builds `source` as [`build`] does, in `lang`, with `flags` added when
/// compiling.
pub fn build_with(name: &str, source: &str, lang: Lang, flags: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("c11check-programs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ext = if lang == Lang::Cxx { "cc" } else { "c" };
    let src = dir.join(format!("{name}.{ext}"));
    std::fs::write(&src, source).unwrap();
    build_sources(name, &[src], lang, flags)
}

/// Compiles `sources` (each on its own) and links them against the
/// runtime into `name` in a scratch directory.
pub fn build_sources(name: &str, sources: &[PathBuf], lang: Lang, flags: &[&str]) -> PathBuf {
    build_sources_linked(name, sources, lang, flags, static_link())
}

/// [`build_sources`] with the runtime linked statically or not.
pub fn build_sources_linked(
    name: &str,
    sources: &[PathBuf],
    lang: Lang,
    flags: &[&str],
    statically: bool,
) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("c11check-programs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(name);
    let cc = if lang == Lang::Cxx {
        cxx_compiler()
    } else {
        compiler()
    };
    let mut steps = Vec::new();
    let mut objects = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let obj = dir.join(format!("{name}.{i}.o"));
        let mut c = Command::new(&cc);
        c.args(["-fsanitize=thread", "-g", "-O1", "-w", "-c"]);
        if lang == Lang::Cxx {
            c.arg("-std=c++20");
        }
        c.args(flags).arg("-idirafter").arg(include_dir());
        steps.push(c.arg(src).arg("-o").arg(&obj).output().unwrap());
        objects.push(obj);
    }
    steps.push(
        link_runtime_as(
            Command::new(&cc).args(&objects).arg("-o").arg(&exe),
            statically,
        )
        .output()
        .unwrap(),
    );
    assert_succeeded(steps);
    exe
}

/// Asserts that every build step succeeded (showing the first failure's
/// error output).
pub fn assert_succeeded(steps: impl IntoIterator<Item = std::process::Output>) {
    for out in steps {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Runs `exe` with `env`; its exit status and stderr.
pub fn run(exe: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let out = Command::new(exe)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The number of executions a passing run reports.
pub fn executions(err: &str) -> u64 {
    let line = err
        .lines()
        .find(|l| l.starts_with("c11check: no bug found in "))
        .unwrap_or_else(|| panic!("no verdict in:\n{err}"));
    line["c11check: no bug found in ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Runs `exe` with `env`, asserts it finds no bug in exactly `n`
/// executions, and returns its stderr.
#[allow(dead_code)]
pub fn assert_passes(exe: &Path, env: &[(&str, &str)], n: u64) -> String {
    let (code, err) = run(exe, env);
    assert_eq!(code, 0, "{err}");
    assert_eq!(executions(&err), n, "{err}");
    err
}
