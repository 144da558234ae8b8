//! A real application as C11Tester runs it: Mabain (a key-value store,
//! `../shared/realworld/mabain`, unchanged) built with `make
//! CPP="c11check c++"` into `libmabain.so`, and its multi-threaded insert
//! driver built with `c11check c++`, run with `c11check run --fresh DIR
//! --random N`: every execution starts from the same (empty) database
//! directory. It finds what C11Tester found: the data race on the
//! database's status (read by a reader while `main` writes it), named by
//! both accesses' lines inside the library, and, with races off, the
//! driver's failed lookup (the async writer stops before its queue
//! drains). Its `while (!stop_processing) usleep(5);` is no livelock.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `../shared/realworld/mabain` (or `$C11CHECK_REALWORLD/mabain`), loudly.
fn mabain_sources() -> PathBuf {
    let root = std::env::var_os("C11CHECK_REALWORLD")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/realworld"));
    let dir = root.join("mabain");
    assert!(
        dir.join("src/db.cpp").is_file(),
        "Mabain's sources are missing at {} (the shared real-world programs; set C11CHECK_REALWORLD)",
        dir.display()
    );
    assert!(
        Path::new("/usr/include/openssl/sha.h").is_file(),
        "OpenSSL's headers are missing: install Debian's libssl-dev (apt-get install libssl-dev)"
    );
    dir
}

/// Runs `cmd`, asserting it succeeds.
fn run_ok(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds the library and the driver in a copy under the temporary
/// directory; the driver's path.
fn build() -> PathBuf {
    let c11check = env!("CARGO_BIN_EXE_c11check");
    let work = std::env::temp_dir().join(format!("c11check-mabain-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    run_ok(
        Command::new("cp")
            .arg("-r")
            .arg(mabain_sources())
            .arg(&work),
    );
    run_ok(
        Command::new("make")
            .args(["-C", "src", "-j2"])
            .arg(format!("CPP={c11check} c++"))
            .current_dir(&work),
    );
    // The headers as `make install` lays them out.
    let include = work.join("include");
    std::fs::create_dir_all(include.join("mabain")).unwrap();
    for h in [
        "db.h",
        "mb_data.h",
        "mabain_consts.h",
        "lock.h",
        "error.h",
        "integer_4b_5b.h",
    ] {
        std::fs::copy(work.join("src").join(h), include.join("mabain").join(h)).unwrap();
    }
    let driver = work.join("examples/mb_multi_thread_insert_test");
    run_ok(
        Command::new(c11check)
            .args(["c++", "-I.", "-g", "-O0", "-std=c++11"])
            .arg(format!("-I{}", include.display()))
            .arg("mb_multi_thread_insert_test.cpp")
            .arg("-o")
            .arg(&driver)
            .arg(format!("-L{}", work.join("src").display()))
            .arg(format!("-Wl,-rpath,{}", work.join("src").display()))
            .args(["-lmabain", "-lcrypto", "-lpthread"])
            .current_dir(work.join("examples")),
    );
    driver
}

/// The queue files Mabain keeps in `/dev/shm`, named by an inode number.
const QUEUES: &str = "/dev/shm/_mabain_q*";

/// `c11check run --fresh DB --fresh QUEUES --random N --seed 1 DRIVER DB/
/// 100` (with `env`), from a `/dev/shm` without Mabain's queues: its exit
/// code and standard error.
fn check(driver: &Path, n: &str, env: &[(&str, &str)]) -> (i32, String) {
    let db = driver.with_file_name(format!("db-{n}-{}", env.len()));
    std::fs::create_dir_all(&db).unwrap();
    for old in std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
    {
        if old.file_name().to_string_lossy().starts_with("_mabain_q") {
            let _ = std::fs::remove_file(old.path());
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_c11check"))
        .arg("run")
        .arg("--fresh")
        .arg(&db)
        .args(["--fresh", QUEUES])
        .args(["--random", n, "--seed", "1"])
        .arg(driver)
        .arg(format!("{}/", db.display()))
        .arg("100")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn mabains_driver_shows_its_race_and_its_failed_lookup() {
    let driver = build();
    let (code, err) = check(&driver, "1", &[]);
    assert_eq!(code, 1, "{err}");
    let race = err
        .lines()
        .skip_while(|l| !l.starts_with("c11check found a data race"))
        .take(3)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        race.contains("db.cpp:416:12 in mabain::DB::is_open() const of libmabain.so")
            && race.contains("the earlier access: thread 0 at ")
            && race.contains(" of libmabain.so"),
        "{err}"
    );
    assert!(!err.contains("livelock"), "{err}");
    let (code, err) = check(&driver, "2", &[("C11CHECK_RACES", "0")]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("assertion `db_r->Find(kv, mbd) == MBError::SUCCESS` failed at mb_multi_thread_insert_test.cpp:82"),
        "{err}"
    );
    assert!(
        !err.contains("livelock") && !err.contains("SIGABRT"),
        "{err}"
    );
}
