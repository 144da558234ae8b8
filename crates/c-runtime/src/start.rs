//! Taking over `main`: the program's start-up code calls
//! `__libc_start_main(main, ...)`, which this library defines; it passes
//! glibc's own a `main` of its own that explores the program's `main`
//! under the settings of the `C11CHECK_*` environment variables, prints
//! what it found, and ends the process with status 0 (no bug), 1 (a bug)
//! or 2 (bad settings).

use crate::library::pthread::next_symbol;
use c11check_model::Model;
use c11check_runtime::{run, FailureKind, RunConfig, RuntimeOptions, Strategy};
use std::ffi::{c_char, c_int, c_void};
use std::str::FromStr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

/// The program's `main`.
type MainFn = unsafe extern "C-unwind" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

type StartMain = unsafe extern "C" fn(
    extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int,
    c_int,
    *mut *mut c_char,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
) -> c_int;

static mut USER_MAIN: Option<MainFn> = None;

/// glibc's program start, with the program's `main` replaced by
/// `checked_main`.
///
/// # Safety
/// Called once, by the program's `_start`, with glibc's arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __libc_start_main(
    main: MainFn,
    argc: c_int,
    argv: *mut *mut c_char,
    init: *mut c_void,
    fini: *mut c_void,
    rtld_fini: *mut c_void,
    stack_end: *mut c_void,
) -> c_int {
    // SAFETY: written once, before any other thread exists.
    unsafe { USER_MAIN = Some(main) };
    let real = next_symbol(c"__libc_start_main");
    // SAFETY: glibc's function, with the arguments it was meant to get.
    unsafe {
        let real: StartMain = std::mem::transmute(real);
        real(checked_main, argc, argv, init, fini, rtld_fini, stack_end)
    }
}

/// A setting from the environment: `None` when unset; exits with status 2
/// when it does not parse.
fn setting<T: FromStr>(name: &str) -> Option<T> {
    let v = std::env::var(name).ok()?;
    match v.trim().parse() {
        Ok(x) => Some(x),
        Err(_) => usage_error(&format!("{name}={v:?} is not a valid value")),
    }
}

fn usage_error(msg: &str) -> ! {
    eprintln!("c11check: {msg}");
    // SAFETY: ends the process.
    unsafe { libc::_exit(2) }
}

/// The run's settings from the `C11CHECK_*` variables.
/// The step bound of a modelled thread of a C program (see `config`).
const C_MAX_STEPS: u32 = 1_000_000;

fn config() -> RunConfig {
    c11check_runtime::settings::set_step_bound_setting("C11CHECK_MAX_STEPS");
    let model = match std::env::var("C11CHECK_MODEL") {
        Ok(name) => Model::from_name(name.trim()).unwrap_or_else(|| {
            usage_error(&format!(
                "unknown C11CHECK_MODEL={name:?} ({})",
                Model::names()
            ))
        }),
        Err(_) => Model::Cpp20,
    };
    let defaults = RuntimeOptions::default();
    if let Some(n) = setting::<u64>("C11CHECK_LOOP_BOUND") {
        crate::memory::LOOP_BOUND.store(n, Relaxed);
    }
    let seed = setting("C11CHECK_SEED").unwrap_or(0xC11C);
    let pct_depth: Option<u32> = setting("C11CHECK_PCT");
    let live = std::env::var("C11CHECK_LIVE").map_or(true, |v| v.trim() != "0");
    if setting::<u32>("C11CHECK_PREEMPTIONS").is_some()
        && setting::<u64>("C11CHECK_ITERATIONS").is_some()
    {
        usage_error(
            "C11CHECK_PREEMPTIONS and C11CHECK_ITERATIONS are both set: the preemption bound applies to exhaustive exploration; unset one",
        );
    }
    if let Ok(r) = std::env::var("C11CHECK_REPLAY") {
        if let Err(e) = c11check_runtime::check_replay(&r) {
            usage_error(&format!(
                "cannot use C11CHECK_REPLAY={r:?}: {e}. Copy it whole from the last lines of a report"
            ));
        }
    }
    RunConfig {
        strategy: match setting("C11CHECK_ITERATIONS") {
            Some(iterations) if live || pct_depth.is_some() => Strategy::Live { iterations, seed },
            Some(iterations) => Strategy::Random { iterations, seed },
            None => Strategy::Exhaustive,
        },
        model,
        max_executions: setting("C11CHECK_MAX_EXECUTIONS"),
        time_budget: setting::<f64>("C11CHECK_MAX_DURATION").map(Duration::from_secs_f64),
        runtime: RuntimeOptions {
            // The program's frames are C's: give them room.
            stack_size: crate::memory::set_stack_size(
                setting("C11CHECK_STACK_SIZE").unwrap_or(defaults.stack_size.max(1 << 20)),
            ),
            // Every plain access is an operation, and C programs set up
            // arrays element by element (libvsync's hash table: over 10,000
            // before its threads start): a larger bound than Rust's.
            max_steps: setting("C11CHECK_MAX_STEPS").unwrap_or(C_MAX_STEPS.max(defaults.max_steps)),
        },
        replay: std::env::var("C11CHECK_REPLAY").ok(),
        progress: std::env::var("C11CHECK_LOG").is_ok_and(|v| v != "0"),
        pct_depth,
        park_loads: std::env::var("C11CHECK_PARK_LOADS").map_or(true, |v| v.trim() != "0"),
        prune_window: setting("C11CHECK_PRUNE_WINDOW"),
        spurious_failures: std::env::var("C11CHECK_SPURIOUS_FAILURES")
            .map_or(true, |v| v.trim() != "0"),
        report_races: std::env::var("C11CHECK_RACES").map_or(true, |v| v.trim() != "0"),
        report_livelocks: std::env::var("C11CHECK_LIVELOCKS").map_or(true, |v| v.trim() != "0"),
        report_deadlocks: std::env::var("C11CHECK_DEADLOCKS").map_or(true, |v| v.trim() != "0"),
        preemption_bound: setting("C11CHECK_PREEMPTIONS"),
        robustness: std::env::var("C11CHECK_ROBUSTNESS").is_ok_and(|v| v.trim() != "0"),
        repair: std::env::var("C11CHECK_REPAIR").map_or(true, |v| v.trim() != "0"),
        strengthen: Vec::new(),
        // The program's globals are one copy in this process: its workers
        // would share them.
        jobs: 1,
        shard: setting("C11CHECK_SHARD"),
        quiet_progress: false,
    }
}

/// The program's `main` and its arguments (set once, before exploring).
static MAIN_CALL: std::sync::OnceLock<(usize, c_int, usize, usize)> = std::sync::OnceLock::new();

/// The program's `main` as a thread start routine.
unsafe extern "C-unwind" fn call_main(_: *mut c_void) -> *mut c_void {
    let &(main, argc, argv, envp) = MAIN_CALL.get().expect("c11check: main is set");
    // SAFETY: `main` is the program's `main`, called with its own arguments.
    unsafe {
        let main: MainFn = std::mem::transmute(main);
        main(argc, argv as *mut *mut c_char, envp as *mut *mut c_char) as usize as *mut c_void
    }
}

/// Stands in for the program's `main`: explores it, reports, and exits.
extern "C" fn checked_main(argc: c_int, argv: *mut *mut c_char, envp: *mut *mut c_char) -> c_int {
    // SAFETY: written before this runs.
    let Some(main) = (unsafe { USER_MAIN }) else {
        usage_error("the program's main was not found")
    };
    if let Some(f) = std::env::var_os("C11CHECK_STARTED_FILE") {
        let _ = std::fs::write(f, "started\n");
    }
    c11check_runtime::set_pc_resolver(crate::image::symbols::describe);
    c11check_runtime::set_pc_change_resolver(crate::image::symbols::describe_change);
    crate::memory::heap::init();
    crate::process::tls::init();
    not_single_threaded();
    let snapshot = Arc::new(crate::process::snapshot::Snapshot::take());
    let cfg = config();
    if let Err(e) = crate::process::fresh::init() {
        usage_error(&e);
    }
    let _ = MAIN_CALL.set((main as usize, argc, argv as usize, envp as usize));
    let body = {
        let snapshot = snapshot.clone();
        Arc::new(move || {
            snapshot.restore();
            crate::process::fresh::restore();
            crate::memory::heap::reset();
            crate::memory::reset();
            crate::library::pthread::reset();
            crate::process::tls::reset();
            crate::library::clock::reset();
            // A `pthread_exit` or `exit` in `main` ends it like a return.
            crate::library::pthread::run_thread(call_main, 0);
        })
    };
    // The program's output is shown once, for the execution that failed
    // (replayed below), not once per execution explored.
    let quiet = std::env::var("C11CHECK_SHOW_OUTPUT").map_or(true, |v| v.trim() == "0");
    let saved_stdout = quiet.then(silence_stdout).flatten();
    crate::process::start_running();
    let started = std::time::Instant::now();
    let result = match jobs(&cfg) {
        1 => run(body.clone(), &cfg),
        // A live run counts how often each bug is hit over all iterations:
        // a first second's run would not.
        n if std::env::var_os("C11CHECK_JOBS").is_some()
            || matches!(cfg.strategy, Strategy::Live { .. }) =>
        {
            run_in_processes(
                &(body.clone() as Arc<dyn Fn() + Send + Sync>),
                &cfg,
                n,
                started,
            )
        }
        n => {
            // Most programs are explored within a second: forking workers
            // (each of which runs the top of the tree again) is for the
            // rest, unless C11CHECK_JOBS asks for them.
            let first = RunConfig {
                time_budget: Some(Duration::from_secs(1)),
                ..cfg.clone()
            };
            match run(body.clone(), &first) {
                Ok(summary) if summary.stats.cut => {
                    for seen in [&crate::memory::LOOPS_SEEN, &crate::memory::BARRIERS_SEEN] {
                        seen.store(false, Relaxed);
                    }
                    crate::memory::BOUND_CUTS.store(0, Relaxed);
                    run_in_processes(
                        &(body.clone() as Arc<dyn Fn() + Send + Sync>),
                        &cfg,
                        n,
                        started,
                    )
                }
                done => done,
            }
        }
    };
    // What the program left in stdio's buffers goes out now (to /dev/null
    // when silenced): the process ends with `_exit`, which flushes nothing.
    // SAFETY: flushes C's stdio buffers.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    restore_stdout(saved_stdout);
    let program = std::env::args()
        .next()
        .unwrap_or_else(|| "the program".into());
    // `c11check run --json`: the verdict as one JSON object on stdout.
    let json = std::env::var("C11CHECK_JSON").is_ok_and(|v| v.trim() != "0");
    match result {
        Ok(summary) => {
            let s = &summary.stats;
            let cut = if s.cut {
                " (stopped early: a budget was reached)"
            } else {
                ""
            };
            let loops = if crate::memory::LOOPS_SEEN.load(Relaxed) {
                "; it loops (a turn that only re-read what the turn before read is cut as a wait)"
            } else {
                ""
            };
            let bound_cuts = crate::memory::BOUND_CUTS.load(Relaxed);
            let bounded = if bound_cuts > 0 {
                format!(
                    "; the loop bound (C11CHECK_LOOP_BOUND={}) cut {bound_cuts} loops: each cut execution counts as blocked and is not checked past the cut",
                    crate::memory::LOOP_BOUND.load(Relaxed)
                )
            } else {
                String::new()
            };
            let preemptions = match cfg.preemption_bound {
                Some(k) if s.over_bound + s.bound_pruned > 0 => format!(
                    "; the preemption bound (C11CHECK_PREEMPTIONS={k}) left out {} executions \
                     and {} partial ones: they were not checked",
                    s.over_bound, s.bound_pruned
                ),
                Some(k) => format!("; the preemption bound ({k}) left nothing out"),
                None => String::new(),
            };
            let barriers = if crate::memory::BARRIERS_SEEN.load(Relaxed) {
                "; it waits at barriers (each thread that may arrive last is an execution)"
            } else {
                ""
            };
            // Not a pass: nothing was checked.
            // (Executions cut at the loop bound count as blocked: none
            // finished if none is counted as an execution.)
            let unchecked =
                (s.executions + s.blocked == 0 && s.cut) || (s.executions == 0 && bound_cuts > 0);
            if unchecked && s.cut {
                eprintln!(
                    "c11check: no execution of {program} was finished when the budget ended the run ({:.2}s): nothing was checked; give it more time (C11CHECK_MAX_DURATION, `c11check run --timeout`){loops}",
                    s.elapsed.as_secs_f64()
                );
            } else if unchecked {
                eprintln!(
                    "c11check: no execution of {program} got past the loop bound (C11CHECK_LOOP_BOUND={}; {} executions cut, in {:.2}s): nothing was checked; raise the bound, or set it to 0 for none",
                    crate::memory::LOOP_BOUND.load(Relaxed),
                    s.blocked,
                    s.elapsed.as_secs_f64()
                );
            } else {
                eprintln!(
                    "c11check: no bug found in {} executions ({} blocked) of {program} in {:.2}s{cut}{loops}{barriers}{bounded}{preemptions}",
                    s.executions,
                    s.blocked,
                    s.elapsed.as_secs_f64()
                );
            }
            if json {
                println!(
                    "{{\"verdict\":\"{}\",\"executions\":{},\"blocked\":{},\"seconds\":{:.3},\"cut\":{},\"over_preemption_bound\":{}}}",
                    if unchecked { "unchecked" } else { "pass" },
                    s.executions,
                    s.blocked,
                    s.elapsed.as_secs_f64(),
                    s.cut,
                    s.over_bound
                );
            }
            crate::process::fresh::finish();
            // SAFETY: ends the process; the program's atexit handlers,
            // registered once per execution, are not run.
            unsafe { libc::_exit(0) }
        }
        Err(report) => {
            if quiet && cfg.replay.is_none() {
                // Replay the failing execution with the program's output.
                eprintln!("c11check: the failing execution, replayed with the program's output:");
                let mut again = cfg.clone();
                again.replay = Some(report.replay.clone());
                again.strategy = Strategy::Exhaustive;
                // With `--json`, stdout carries the verdict alone: the
                // program's output goes to stderr with the report.
                let saved = if json { stdout_to_stderr() } else { None };
                let _ = run(body, &again);
                // SAFETY: flushes C's stdio buffers.
                unsafe { libc::fflush(std::ptr::null_mut()) };
                restore_stdout(saved);
            }
            // The report, with the replay said the way a program takes it.
            let text = report.to_string();
            let text = text
                .split("\nReplay it with `c11check::model::Builder")
                .next()
                .unwrap_or(&text);
            eprintln!("{}", text.trim_end());
            eprintln!(
                "\nReplay it with: C11CHECK_REPLAY='{}' {program}",
                report.replay
            );
            if json {
                println!(
                    "{{\"verdict\":\"bug\",\"kind\":{},\"message\":{},\"execution\":{},\"replay\":{}}}",
                    json_string(report.failure.kind.title()),
                    json_string(&report.failure.message),
                    report.execution_number,
                    json_string(&report.replay)
                );
            }
            crate::process::fresh::finish();
            // SAFETY: ends the process.
            unsafe { libc::_exit(1) }
        }
    }
}

/// Worker processes for a run that takes more than a second:
/// `C11CHECK_JOBS`, else the machine's available parallelism (1 for a
/// replay, a run already given one shard, one with an execution or time
/// budget, which shards would each spend, or a live robustness run, whose
/// iterations learn wait loops from those before them).
fn jobs(cfg: &RunConfig) -> u32 {
    if crate::process::fresh::wanted()
        || cfg.replay.is_some()
        || cfg.shard.is_some()
        || cfg.max_executions.is_some()
        || cfg.time_budget.is_some()
        || cfg.robustness && matches!(cfg.strategy, Strategy::Live { .. })
    {
        return 1;
    }
    let n = setting::<u32>("C11CHECK_JOBS")
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    if n == 0 {
        usage_error("C11CHECK_JOBS=0: a run needs at least one worker");
    }
    n.min(c11check_runtime::MAX_JOBS)
}

/// What a worker process reports to the parent: its counts, or the bug it
/// found first (with, for a live run, how often it and the others were hit).
enum WorkerResult {
    Pass {
        stats: c11check_explore::Stats,
        loops: bool,
        barriers: bool,
        bound_cuts: u64,
        /// Live runs: the operations of all iterations.
        operations: Option<u64>,
    },
    Bug(WorkerBug),
}

/// A worker's first bug: its replay string, and for random runs the
/// iteration and the fields of a live report that add up across workers.
struct WorkerBug {
    replay: String,
    iteration: Option<(u64, u64)>,
    hits: Option<(u64, u64)>,
    operations: Option<u64>,
    /// What names the bug among others (see [`bug_key`]).
    key: String,
    /// The worker's other bugs, with their hits.
    others: Vec<(String, u64)>,
}

/// The line that tells a live report's bug from another's (the kind and the
/// message's first line, as `Report::others` shows them).
fn bug_key(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

/// `text` with tabs, newlines and backslashes escaped (a field of a
/// worker's message).
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(c) => out.push(c),
                None => {}
            },
            (c, false) => out.push(c),
        }
    }
    out
}

/// A number field, `-` for none.
fn opt(n: Option<u64>) -> String {
    n.map_or("-".into(), |n| n.to_string())
}

impl WorkerResult {
    fn encode(&self) -> String {
        match self {
            WorkerResult::Pass {
                stats: s,
                loops,
                barriers,
                bound_cuts,
                operations,
            } => format!(
                "pass\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{bound_cuts}\t{}",
                s.executions,
                s.blocked,
                s.cut as u8,
                s.over_bound,
                s.bound_pruned,
                s.elapsed.as_nanos(),
                *loops as u8,
                *barriers as u8,
                opt(*operations),
            ),
            WorkerResult::Bug(b) => {
                let mut text = format!(
                    "bug\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    opt(b.iteration.map(|i| i.0)),
                    opt(b.iteration.map(|i| i.1)),
                    opt(b.hits.map(|h| h.0)),
                    opt(b.hits.map(|h| h.1)),
                    opt(b.operations),
                    escape(&b.replay),
                    escape(&b.key)
                );
                for (what, hits) in &b.others {
                    text.push_str(&format!("\nother\t{hits}\t{}", escape(what)));
                }
                text
            }
        }
    }
    fn decode(text: &str) -> Option<WorkerResult> {
        let mut lines = text.lines();
        let f: Vec<&str> = lines.next()?.split('\t').collect();
        let num = |x: &str| -> Option<Option<u64>> {
            match x {
                "-" => Some(None),
                x => x.parse().ok().map(Some),
            }
        };
        if let ["bug", iteration, seed, hits, of, operations, replay, key] = f[..] {
            let pair = |a, b| Some(num(a)?.zip(num(b)?));
            let mut others = Vec::new();
            for line in lines {
                let (hits, what) = line.strip_prefix("other\t")?.split_once('\t')?;
                others.push((unescape(what), hits.parse().ok()?));
            }
            return Some(WorkerResult::Bug(WorkerBug {
                replay: unescape(replay),
                iteration: pair(iteration, seed)?,
                hits: pair(hits, of)?,
                operations: num(operations)?,
                key: unescape(key),
                others,
            }));
        }
        let ["pass", rest @ ..] = &f[..] else {
            return None;
        };
        let n: Vec<Option<u64>> = rest.iter().map(|x| num(x)).collect::<Option<_>>()?;
        let [Some(executions), Some(blocked), Some(cut), Some(over_bound), Some(bound_pruned), Some(ns), Some(loops), Some(barriers), Some(bound_cuts), operations] =
            n[..]
        else {
            return None;
        };
        Some(WorkerResult::Pass {
            stats: c11check_explore::Stats {
                executions,
                blocked,
                cut: cut != 0,
                over_bound,
                bound_pruned,
                elapsed: Duration::from_nanos(ns),
                ..Default::default()
            },
            loops: loops != 0,
            barriers: barriers != 0,
            bound_cuts,
            operations,
        })
    }
}

/// The run on `n` worker processes, each forked from this one (the
/// program's memory is per process) and running shard `i/n`: of the
/// executions (exhaustive), or of the chunks of iterations (random). Each
/// shard runs in order, so the bug reported is, whatever the timing, the
/// first of the lowest shard that has one (exhaustive) or the one of the
/// earliest iteration (random; a live run adds up how often each bug was
/// hit): this process then replays it (`cfg.replay`) for the report. A
/// worker that dies without reporting makes this process run everything
/// itself.
fn run_in_processes(
    body: &Arc<dyn Fn() + Send + Sync>,
    cfg: &RunConfig,
    n: u32,
    start: std::time::Instant,
) -> Result<c11check_runtime::Summary, Box<c11check_runtime::Report>> {
    let mut workers = Vec::new();
    for index in 0..n {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return run(body.clone(), cfg);
        }
        // SAFETY: this process runs one OS thread here (the program's own
        // have not started: `not_single_threaded` checked), so the child
        // is a whole copy.
        match unsafe { libc::fork() } {
            0 => {
                // SAFETY: the read end is the parent's.
                unsafe { libc::close(fds[0]) };
                let mut mine = cfg.clone();
                mine.shard = Some(c11check_explore::Shard { index, count: n });
                // One worker shows progress (its shard's).
                mine.quiet_progress = index > 0;
                let result = match run(body.clone(), &mine) {
                    Ok(summary) => WorkerResult::Pass {
                        stats: summary.stats,
                        loops: crate::memory::LOOPS_SEEN.load(Relaxed),
                        barriers: crate::memory::BARRIERS_SEEN.load(Relaxed),
                        bound_cuts: crate::memory::BOUND_CUTS.load(Relaxed),
                        operations: summary.operations,
                    },
                    Err(r) => WorkerResult::Bug(WorkerBug {
                        replay: r.replay.clone(),
                        iteration: r.random_iteration,
                        hits: r.hits,
                        operations: r.operations,
                        key: bug_key(&format!(
                            "{}: {}",
                            r.failure.kind.title(),
                            r.failure.message
                        )),
                        others: r.others.clone(),
                    }),
                };
                let text = result.encode();
                // SAFETY: writes the buffer to the pipe, then ends the
                // worker without running the program's exit handlers.
                unsafe {
                    let mut written = 0;
                    while written < text.len() {
                        let got = libc::write(
                            fds[1],
                            text[written..].as_ptr().cast(),
                            text.len() - written,
                        );
                        if got <= 0 {
                            break;
                        }
                        written += got as usize;
                    }
                    libc::_exit(0)
                }
            }
            pid if pid > 0 => {
                // SAFETY: the write end is the child's.
                unsafe { libc::close(fds[1]) };
                workers.push((pid, fds[0]));
            }
            _ => {
                // SAFETY: closing the pipe made above.
                unsafe {
                    libc::close(fds[0]);
                    libc::close(fds[1]);
                }
                break;
            }
        }
    }
    let mut results = Vec::new();
    for (pid, fd) in workers {
        let mut text = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: reads into `buf`, within its length.
            let got = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if got <= 0 {
                break;
            }
            text.extend_from_slice(&buf[..got as usize]);
        }
        let mut status = 0;
        // SAFETY: the descriptor and the child are this process's.
        unsafe {
            libc::close(fd);
            libc::waitpid(pid, &mut status, 0);
        }
        results.push(WorkerResult::decode(&String::from_utf8_lossy(&text)));
    }
    if results.len() != n as usize || results.iter().any(Option::is_none) {
        eprintln!("c11check: a worker process ended without reporting; exploring in this process");
        return run(body.clone(), cfg);
    }
    let results: Vec<WorkerResult> = results.into_iter().flatten().collect();
    let mut stats = c11check_explore::Stats::default();
    let mut operations = None::<u64>;
    // Live runs: every worker's iterations, and each distinct bug's hits.
    let mut iterations = 0u64;
    let mut hits: Vec<(String, u64)> = Vec::new();
    let mut first: Option<&WorkerBug> = None;
    let mut add_hits = |key: String, n: u64| match hits.iter_mut().find(|(k, _)| *k == key) {
        Some(h) => h.1 += n,
        None => hits.push((key, n)),
    };
    for r in &results {
        match r {
            WorkerResult::Bug(b) => {
                let earlier = match (first.and_then(|f| f.iteration), b.iteration) {
                    (Some(f), Some(i)) => i.0 < f.0,
                    _ => first.is_none(),
                };
                if earlier {
                    first = Some(b);
                }
                if let Some((n, of)) = b.hits {
                    iterations += of;
                    add_hits(b.key.clone(), n);
                    for (what, n) in &b.others {
                        add_hits(bug_key(what), *n);
                    }
                }
                if let Some(ops) = b.operations {
                    *operations.get_or_insert(0) += ops;
                }
            }
            WorkerResult::Pass {
                stats: s,
                loops,
                barriers,
                bound_cuts,
                operations: ops,
            } => {
                stats.add(s);
                iterations += s.executions + s.blocked;
                if let Some(ops) = ops {
                    *operations.get_or_insert(0) += ops;
                }
                crate::memory::LOOPS_SEEN.fetch_or(*loops, Relaxed);
                crate::memory::BARRIERS_SEEN.fetch_or(*barriers, Relaxed);
                crate::memory::BOUND_CUTS.fetch_add(*bound_cuts, Relaxed);
            }
        }
    }
    if let Some(bug) = first {
        let again = RunConfig {
            replay: Some(bug.replay.clone()),
            ..cfg.clone()
        };
        return match run(body.clone(), &again) {
            // A replay this process cannot follow (its heap had no earlier
            // executions, say): the bug again, found the way one process
            // finds it.
            Err(r) if r.failure.kind == FailureKind::Nondeterminism => run(body.clone(), cfg),
            Err(mut r) => {
                if let Some((i, seed)) = bug.iteration {
                    r.random_iteration = Some((i, seed));
                    r.execution_number = i + 1;
                }
                if bug.hits.is_some() {
                    let key = bug_key(&format!(
                        "{}: {}",
                        r.failure.kind.title(),
                        r.failure.message
                    ));
                    let of = |k: &str| hits.iter().find(|(h, _)| h == k).map_or(1, |h| h.1);
                    r.hits = Some((of(&bug.key), iterations));
                    r.operations = operations;
                    // The other bugs: every worker's, each once, in the
                    // order the workers found them.
                    let mut others: Vec<(String, u64)> = Vec::new();
                    for w in results.iter().filter_map(|r| match r {
                        WorkerResult::Bug(b) => Some(b),
                        WorkerResult::Pass { .. } => None,
                    }) {
                        let theirs = std::iter::once(&w.key)
                            .chain(w.others.iter().map(|(what, _)| what))
                            .zip(std::iter::once(None).chain(w.others.iter().map(Some)));
                        for (k, whole) in theirs {
                            let k = bug_key(k);
                            if k == bug.key
                                || k == key
                                || others.iter().any(|(o, _)| bug_key(o) == k)
                            {
                                continue;
                            }
                            let what = whole.map_or(k.clone(), |(what, _)| what.clone());
                            others.push((what, of(&k)));
                        }
                    }
                    r.others = others;
                }
                Err(r)
            }
            other => other,
        };
    }
    stats.elapsed = start.elapsed();
    Ok(c11check_runtime::Summary {
        blocked: stats.blocked,
        stats,
        behaviours: None,
        operations,
        // Worker processes do not report it.
        peak_stores: None,
    })
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Points the program's stdout at /dev/null; the saved descriptor.
fn silence_stdout() -> Option<c_int> {
    // SAFETY: plain descriptor calls.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        let saved = libc::dup(1);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
        if saved < 0 || null < 0 {
            return None;
        }
        libc::dup2(null, 1);
        libc::close(null);
        Some(saved)
    }
}

/// Points stdout at stderr until [`restore_stdout`]; the old stdout.
fn stdout_to_stderr() -> Option<c_int> {
    // SAFETY: plain descriptor calls.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        let saved = libc::dup(1);
        if saved < 0 {
            return None;
        }
        libc::dup2(2, 1);
        Some(saved)
    }
}

fn restore_stdout(saved: Option<c_int>) {
    if let Some(fd) = saved {
        // SAFETY: plain descriptor calls; drops what the program left
        // buffered before the descriptor comes back.
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::dup2(fd, 1);
            libc::close(fd);
        }
    }
}

/// Tells libc the process has several threads (glibc's
/// `__libc_single_threaded`, which a real `pthread_create` clears): the
/// modelled threads are fibers glibc does not see, and libstdc++ reads the
/// flag to make `shared_ptr`'s reference counts plain, not atomic, in a
/// single-threaded process, which would be races between modelled threads.
fn not_single_threaded() {
    // SAFETY: looks a glibc variable up by name (absent before 2.32).
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__libc_single_threaded".as_ptr()) };
    if !p.is_null() {
        // SAFETY: glibc's `char __libc_single_threaded`.
        unsafe { *(p as *mut libc::c_char) = 0 };
    }
}
