//! The command line: exit codes and messages on good and bad input.

use std::process::Command;

fn c11check(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_c11check"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bundled_suite_runs_with_no_mismatch() {
    let (code, out, err) = c11check(&["litmus", "litmus/", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(" 0 mismatches, 0 errors"), "{out}");
}

#[test]
fn malformed_file_reports_file_line_column_and_exits_2() {
    let dir = std::env::temp_dir().join(format!("c11check-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.litmus");
    std::fs::write(&f, "C bad\n{ x = 0; }\nP0 (atomic_int* x) {\n  atomic_store_explicit(x 1, memory_order_relaxed);\n}\nexists (x=1)\n").unwrap();
    let (code, _, err) = c11check(&["litmus", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.litmus:4:27: expected ',', found '1'"),
        "{err}"
    );
    std::fs::write(
        &f,
        "C bad\n{ x = 0; }\nP0 (atomic_int* x) {\n  for (;;) {}\n}\nexists (x=1)\n",
    )
    .unwrap();
    let (code, _, err) = c11check(&["litmus", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unsupported construct: 'for' statements"),
        "{err}"
    );
    let (code, _, err) = c11check(&["litmus", "litmus/SB+rlx.litmus", "--model", "power"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown model 'power'"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn json_output_uses_herd_key_spellings() {
    let (code, out, _) = c11check(&["litmus", "litmus/MP+rel+acq.litmus", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["name"], "MP+rel+acq");
    assert_eq!(v["observation"], "Never");
    assert_eq!(v["ok"], false);
    assert_eq!(v["states"].as_array().unwrap().len(), 3);
    assert!(v["states"][0].get("1:r0").is_some());
}

/// Every model, by its name and each alias, runs on the engine asked for:
/// the explorer, or with `--brute-force` the brute-force checker's
/// definition of the same model (no model falls back to the explorer), and
/// the report names the model by its name. A new model is covered here
/// without an edit.
#[test]
fn every_model_name_runs_on_the_engine_asked_for() {
    for &model in c11check_model::Model::ALL {
        for name in std::iter::once(model.name()).chain(model.aliases().iter().copied()) {
            for (flag, engine) in [(None, "explorer"), (Some("--brute-force"), "brute force")] {
                let mut args = vec!["litmus", "litmus/SB+rlx.litmus", "--json", "--model", name];
                args.extend(flag);
                // (The file expects SB's weak outcome, which `sc` forbids:
                // exit status 1 there.)
                let (code, out, err) = c11check(&args);
                assert!(code == 0 || code == 1, "{args:?}: {err}");
                let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
                assert_eq!(v["engine"], engine, "{args:?}");
                assert_eq!(v["model"], model.name(), "{args:?}");
            }
        }
    }
    let (code, _, err) = c11check(&[
        "litmus",
        "litmus/SB+rlx.litmus",
        "--brute-force",
        "--model",
        "power",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown model 'power'"), "{err}");
}

#[test]
fn json_prints_an_error_object_for_a_malformed_file() {
    let dir = std::env::temp_dir().join(format!("c11check-cli-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.litmus");
    std::fs::write(&f, "C bad\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  atomic_store_explicit(x, 1 memory_order_relaxed);\n}\nexists (x=1)\n").unwrap();
    let (code, out, _) = c11check(&["litmus", "--json", f.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .ends_with("bad.litmus:4:30: expected ',', found 'memory_order_relaxed'"),
        "{v}"
    );
    assert!(v["file"].as_str().unwrap().ends_with("bad.litmus"), "{v}");
}

#[test]
fn a_race_names_the_racing_accesses() {
    let (code, out, err) = c11check(&["litmus", "litmus/Race+WR.litmus"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Race P0's plain write of x (its memory access 1) and P1's plain read of x (its memory access 1)"),
        "{out}"
    );
    let (_, out, _) = c11check(&["litmus", "--json", "litmus/Race+WR.litmus"]);
    assert!(
        out.contains("\"race_between\":\"P0's plain write of x"),
        "{out}"
    );
}

#[test]
fn cc_links_the_runtime_shared_or_static_and_run_checks_the_program() {
    let dir = std::env::temp_dir().join(format!("c11check-cli-cc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("mp.c");
    std::fs::write(
        &src,
        "#include <pthread.h>\n#include <stdatomic.h>\nint data;\natomic_int flag;\n\
         void *w(void *a) { data = 1; atomic_store_explicit(&flag, 1, memory_order_relaxed); return 0; }\n\
         int main() { pthread_t t; pthread_create(&t, 0, w, 0);\n\
         if (atomic_load_explicit(&flag, memory_order_acquire)) return data;\n\
         pthread_join(t, 0); return 0; }\n",
    )
    .unwrap();
    // Static by default (the runtime inside makes a program of megabytes);
    // `--shared-runtime`: `libc11check_rt.so`.
    for (how, flag) in [("static", None), ("shared", Some("--shared-runtime"))] {
        let exe = dir.join(format!("mp_{how}"));
        let mut args = vec!["cc"];
        args.extend(flag);
        args.extend([src.to_str().unwrap(), "-o", exe.to_str().unwrap()]);
        let (code, _, err) = c11check(&args);
        assert_eq!(code, 0, "{how}: {err}");
        let size = std::fs::metadata(&exe).unwrap().len();
        assert_eq!(size > 1 << 20, how == "static", "{how}: {size} bytes");
        // `--` before the program is optional.
        let (code, _, err) = c11check(&["run", exe.to_str().unwrap()]);
        assert_eq!(code, 1, "{how}: {err}");
        let (code, _, err2) = c11check(&["run", "--model", "rc11", "--", exe.to_str().unwrap()]);
        assert_eq!(code, 1, "{how}: {err2}");
        // A malformed replay string is a usage error, not a bug.
        let (code, _, err3) = c11check(&["run", "--replay", "garbage", exe.to_str().unwrap()]);
        assert_eq!(code, 2, "{how}: {err3}");
        assert!(
            err3.contains(
                "cannot use C11CHECK_REPLAY=\"garbage\": a replay string starts with `c1:`"
            ),
            "{how}: {err3}"
        );
        assert!(err.contains("data race on data:"), "{how}: {err}");
        assert!(
            err.contains("mp.c:7:") && err.contains("mp.c:5:"),
            "{how}: {err}"
        );
    }
    let (code, out, err) = c11check(&["static-runtime"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        std::path::Path::new(out.trim()).is_file(),
        "{out} is not the archive"
    );
    assert!(err.contains("-lgcc_s"), "{err}");
}

#[test]
fn preemption_bound_leaves_out_the_deadlock_that_needs_a_preemption() {
    // Two threads take two locks in opposite orders: they deadlock only
    // when one is preempted between its two acquisitions.
    let abba = |k: &str| c11check(&["litmus", "--preemption-bound", k, "litmus/LOCK+ABBA.litmus"]);
    let (code, out, err) = abba("0");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Executions 2 Blocked 0"), "{out}");
    assert!(
        out.contains("the preemption bound left out 1 executions"),
        "{out}"
    );
    let (code, out, err) = abba("1");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Executions 2 Blocked 1"), "{out}");
    assert!(!out.contains("left out"), "{out}");
    let (code, _, err) = c11check(&[
        "litmus",
        "--preemption-bound",
        "1",
        "--random",
        "5",
        "litmus/LOCK+ABBA.litmus",
    ]);
    assert_eq!(code, 2, "the bound is for exhaustive exploration: {err}");
}

#[test]
fn robustness_reports_the_cycle_as_json_and_fails_a_non_robust_test() {
    let (code, out, err) = c11check(&[
        "litmus",
        "--robustness",
        "--json",
        "litmus/SB+rlx.litmus",
        "litmus/MP+rel+acq.litmus",
    ]);
    // Both match their `@robust` lines.
    assert_eq!(code, 0, "{err}");
    let v: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v[0]["robust"], false);
    assert_eq!(v[0]["robustness"], "no");
    let cycle = v[0]["witness"]["cycle"].as_array().unwrap();
    let edges: Vec<&str> = cycle.iter().map(|s| s["edge"].as_str().unwrap()).collect();
    assert_eq!(edges, ["po", "fr", "po", "fr"], "{out}");
    assert_eq!(v[0]["witness"]["observable"], true);
    // The repair: a seq_cst fence in each thread.
    let repair = v[0]["repair"].as_array().unwrap();
    assert_eq!(repair.len(), 2, "{out}");
    assert!(repair[0]
        .as_str()
        .unwrap()
        .contains("atomic_thread_fence(memory_order_seq_cst)"));
    assert_eq!(v[1]["robust"], true);
    assert!(v[1]["witness"].is_null());
    // A test with no `@robust` line that is not robust fails the run.
    let dir = std::env::temp_dir().join(format!("c11check-cli-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("sb.litmus");
    let src = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../litmus/SB+rlx.litmus"),
    )
    .unwrap();
    let bare: String = src
        .lines()
        .filter(|l| !l.contains("@robust"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&f, bare).unwrap();
    let (code, out, _) = c11check(&["litmus", "--robustness", f.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Not robust"), "{out}");
    let (code, _, err) = c11check(&[
        "litmus",
        "--robustness",
        "--random",
        "5",
        "litmus/SB+rlx.litmus",
    ]);
    assert_eq!(code, 2, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_lists_the_outcomes_only_one_model_allows() {
    let iriw = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../litmus/MCA+IRIW+acqs.litmus"
    );
    let mp = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../litmus/MP+rlx+rlx.litmus"
    );
    let (code, out, err) = c11check(&["litmus", "--model", "cpp20", "--compare", "mca", iriw]);
    assert_eq!(code, 0, "{err}");
    // IRIW's non-MCA outcome (both readers disagree on the order of the
    // writes), and it satisfies the condition.
    assert!(
        out.contains("only under cpp20:\n  * 2:r0=1; 2:r1=0; 3:r0=1; 3:r1=0;"),
        "{out}"
    );
    assert!(!out.contains("only under mca"), "{out}");
    let (code, out, err) =
        c11check(&["litmus", "--model", "mca", "--compare", "tso", "--json", mp]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["only_mca"][0]["state"], "1:r0=1; 1:r1=0;", "{out}");
    assert_eq!(v["only_tso"].as_array().map(Vec::len), Some(0), "{out}");
    let (code, _, err) = c11check(&["litmus", "--compare", "power", mp]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown model 'power'"), "{err}");
}

/// The JSON lines of a run, by test name.
fn by_name(out: &str) -> std::collections::BTreeMap<String, serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .map(|v| (v["name"].as_str().unwrap().to_string(), v))
        .collect()
}

#[test]
fn merged_shards_are_the_whole_run() {
    let dir = std::env::temp_dir().join(format!("c11check-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let suite = "litmus/".to_string();
    let args = |fs: &[&String]| {
        let mut a = vec!["merge", "--json"];
        a.extend(fs.iter().map(|s| s.as_str()));
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let mut files = Vec::new();
    // Exhaustive runs, and random ones on the live memory and as graphs
    // (whose shards split the chunks of iterations).
    for mode in [
        &[][..],
        &["--random", "1500"],
        &["--random", "1500", "--graph"],
    ] {
        let run = |extra: &[&str]| {
            let mut a = vec!["litmus", "--json"];
            a.extend(mode.iter().copied());
            a.extend(extra.iter().copied());
            a.push(&suite);
            c11check(&a)
        };
        let (_, whole, err) = run(&["-j", "1"]);
        assert!(!whole.is_empty(), "{mode:?}: {err}");
        let whole = by_name(&whole);
        files.clear();
        for i in 1..=3 {
            let shard = format!("{i}/3");
            let (_, out, err) = run(&["-j", "2", "--shard", &shard]);
            assert!(!out.is_empty(), "{mode:?}: {err}");
            let f = dir.join(format!("shard{i}.json"));
            std::fs::write(&f, out).unwrap();
            files.push(f.display().to_string());
        }
        let all: Vec<&String> = files.iter().collect();
        let a = args(&all);
        let (code, merged, err) = c11check(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "{mode:?}: {err}");
        let merged = by_name(&merged);
        assert_eq!(merged.len(), whole.len());
        for (name, w) in &whole {
            let m = &merged[name];
            for k in [
                "executions",
                "blocked",
                "states",
                "state_counts",
                "ok",
                "observation",
                "race",
                "race_between",
            ] {
                assert_eq!(m[k], w[k], "{mode:?} {name}: {k}");
            }
            assert_eq!(m["shards"], 3, "{name}");
        }
    }
    // A shard missing, or one given twice: no merged counts, and why.
    let a = args(&[&files[0], &files[2]]);
    let (code, _, err) = c11check(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shard 2/3 missing"), "{err}");
    let a = args(&[&files[0], &files[1], &files[2], &files[1]]);
    let (code, _, err) = c11check(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shard 2/3 given twice"), "{err}");
    // Not a shard spec.
    let (code, _, err) = c11check(&["litmus", "--shard", "4/3", &suite]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not a shard"), "{err}");
}

/// `c11check cc --help` is c11check's help, not the compiler's.
#[test]
fn cc_help_is_c11checks() {
    for (cmd, var) in [("cc", "C11CHECK_CC"), ("c++", "C11CHECK_CXX")] {
        let (code, out, err) = c11check(&[cmd, "--help"]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.starts_with(&format!("c11check {cmd}: compile and link")),
            "{out}"
        );
        assert!(
            out.contains(var) && out.contains("--shared-runtime"),
            "{out}"
        );
    }
}

/// `c11check cc` runs `$C11CHECK_CC`, else `$CC` (a command with
/// arguments), unless `$CC` is c11check itself (as after `export
/// CC="c11check cc"`), else `cc`.
#[test]
fn cc_runs_the_compiler_cc_names_unless_it_is_c11check() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("c11check-cli-cc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A compiler that says which it is and with what it was called.
    let fake = |name: &str| {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho \"{name} $*\"\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    };
    let (cc, other) = (fake("fake-cc"), fake("other-cc"));
    let compile = |env: &[(&str, &str)]| {
        let out = Command::new(env!("CARGO_BIN_EXE_c11check"))
            .args(["cc", "-c", "x.c"])
            .env_remove("C11CHECK_CC")
            .env_remove("CC")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = compile(&[("CC", &format!("{cc} --first"))]);
    assert!(out.starts_with("fake-cc --first "), "{out}");
    assert!(
        out.contains("-fsanitize=thread") && out.contains("x.c"),
        "{out}"
    );
    let out = compile(&[("CC", &cc), ("C11CHECK_CC", &other)]);
    assert!(out.starts_with("other-cc "), "{out}");
    // c11check itself in $CC: the usual compiler (`cc` on the PATH), not
    // a loop.
    fake("cc");
    let me = env!("CARGO_BIN_EXE_c11check");
    let out = compile(&[("CC", &format!("{me} cc")), ("PATH", dir.to_str().unwrap())]);
    assert!(out.starts_with("cc "), "{out}");
}

/// A program not built with `c11check cc` is refused before it runs (it
/// would run once, unchecked): this one would leave a file behind.
#[test]
fn run_refuses_a_program_without_the_runtime_before_running_it() {
    let dir = std::env::temp_dir().join(format!("c11check-cli-plain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("plain.c");
    let mark = dir.join("ran");
    std::fs::write(
        &src,
        format!(
            "#include <stdio.h>\nint main() {{ FILE *f = fopen(\"{}\", \"w\"); if (f) fclose(f); return 0; }}\n",
            mark.display()
        ),
    )
    .unwrap();
    let exe = dir.join("plain");
    let cc = std::env::var("C11CHECK_TEST_CC").unwrap_or_else(|_| "cc".into());
    let st = Command::new(cc)
        .args([src.to_str().unwrap(), "-o", exe.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(st.success());
    let (code, _, err) = c11check(&["run", exe.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("was not built with c11check's runtime: build it with `c11check cc`")
            && err.contains("nothing was run"),
        "{err}"
    );
    assert!(!mark.exists(), "the program ran");
    let _ = std::fs::remove_dir_all(&dir);
}
