//! What real programs do besides their threads' synchronization: throw and
//! catch C++ exceptions (an uncaught one is `std::terminate`, reported with
//! its type), keep code and data in their own shared libraries (reported by
//! file:line and name from the library's debug information), keep state in
//! files (each execution can start from the same directory), wait for pipes
//! and sockets (without stopping the other threads), keep per-thread
//! state in thread-locals (each thread's at its own address).

mod common;

use common::{build_with, compiler, link_runtime_as, run, Lang};
use std::process::Command;

const EXCEPTIONS: &str = r#"#include <thread>
#include <stdexcept>
#include <cstdio>
int caught = 0;
void worker(int n) {
  try { if (n > 0) throw std::runtime_error("caught one"); } catch (const std::exception &e) { caught++; }
  if (n > 1) throw std::runtime_error("invalid dmm write");
}
int main(int argc, char **argv) {
  std::thread t(worker, argc);
  t.join();
  printf("caught %d\n", caught);
  return caught == 1 ? 0 : 2;
}
"#;

/// An exception caught inside the program works as natively; one nothing
/// catches ends the program through `std::terminate`, reported with the
/// exception's type (it was a Rust runtime abort: "Rust cannot catch
/// foreign exceptions").
#[test]
fn cxx_exceptions_caught_work_and_an_uncaught_one_is_reported() {
    let exe = build_with("exceptions", EXCEPTIONS, Lang::Cxx, &[]);
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{err}");
    let out = std::process::Command::new(&exe)
        .arg("uncaught")
        .output()
        .expect("the program runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "an uncaught C++ exception of type `std::runtime_error`, what(): \"invalid dmm write\""
        ),
        "{err}"
    );
    assert!(
        !err.contains("Rust cannot catch foreign exceptions"),
        "{err}"
    );
}

const THROWING_ROUTINES: &str = r#"#include <pthread.h>
#include <stdexcept>
extern "C" void *worker(void *) { throw std::logic_error("from a pthread"); }
int main(int argc, char **argv) {
  if (argc > 2) throw std::out_of_range("from main");
  pthread_t t; pthread_create(&t, 0, worker, 0); pthread_join(t, 0);
  return 0;
}
"#;

/// An exception out of a `pthread_create` start routine or out of `main`
/// is `std::terminate` too, each reported with its type and thread.
#[test]
fn an_exception_out_of_a_start_routine_or_main_is_reported() {
    let exe = build_with("throwing_routines", THROWING_ROUTINES, Lang::Cxx, &[]);
    for (args, thread, ty) in [
        (&["a"][..], "thread 1 panicked", "std::logic_error"),
        (
            &["a", "b"][..],
            "the model's main thread panicked",
            "std::out_of_range",
        ),
    ] {
        let out = std::process::Command::new(&exe)
            .args(args)
            .output()
            .expect("the program runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "{thread}: an uncaught C++ exception of type `{ty}`"
            )),
            "{err}"
        );
    }
}

const LIBRARY: &str = r#"int shared_counter;
void lib_bump(void) { shared_counter++; }
"#;

const LIBRARY_USER: &str = r#"#include <pthread.h>
void lib_bump(void);
void *w(void *a) { lib_bump(); return 0; }
int main() {
  pthread_t t; pthread_create(&t, 0, w, 0); lib_bump(); pthread_join(t, 0);
  return 0;
}
"#;

/// A race inside a shared library of the program (built with `c11check cc
/// -shared`) names the library's source lines and its global, from the
/// library's debug information (they were bare addresses and `loc0`).
#[test]
fn a_race_in_a_shared_library_is_shown_in_its_sources() {
    let exe = library_program("demo", LIBRARY, LIBRARY_USER);
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("data race on shared_counter")
            && err.contains("demo.c:2")
            && err.contains("in lib_bump() of libdemo.so"),
        "{err}"
    );
}

const DATABASE: &str = r#"#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>
#include <unistd.h>
#include <stdatomic.h>
atomic_int x;
void *w(void *a) { atomic_store(&x, 1); return 0; }
int main() {
  char seed[4096], data[4096];
  snprintf(seed, sizeof seed, "%s/seed", getenv("DB"));
  snprintf(data, sizeof data, "%s/data", getenv("DB"));
  /* Opening the database: its file must not be there yet. */
  assert(access(seed, F_OK) == 0);
  assert(access(data, F_OK) != 0);
  FILE *f = fopen(data, "w"); fputs("x", f); fclose(f);
  pthread_t t; pthread_create(&t, 0, w, 0); int v = atomic_load(&x); pthread_join(t, 0);
  return v > 1;
}
"#;

/// A program that keeps state in a directory: without `--fresh` its second
/// execution finds the first one's file (and c11check reports the run as
/// nondeterministic); with the directory restored before each execution
/// (`C11CHECK_FRESH`, `c11check run --fresh DIR`) every execution starts
/// from the same files, and the directory is left as the last one left it.
#[test]
fn fresh_directories_give_every_execution_the_same_files() {
    let exe = build_with("database", DATABASE, Lang::C, &[]);
    let db = std::env::temp_dir().join(format!("c11check-db-{}", std::process::id()));
    let fresh_db = || {
        let _ = std::fs::remove_dir_all(&db);
        std::fs::create_dir_all(&db).unwrap();
        std::fs::write(db.join("seed"), "seed").unwrap();
    };
    let db_env = db.to_str().unwrap();
    fresh_db();
    let (code, err) = run(&exe, &[("DB", db_env)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("nondeterministic"), "{err}");

    fresh_db();
    let (code, err) = run(&exe, &[("DB", db_env), ("C11CHECK_FRESH", db_env)]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no bug found in 2 executions"), "{err}");
    assert!(db.join("data").exists() && db.join("seed").exists());
    let _ = std::fs::remove_dir_all(&db);
}

const QUEUE_FILES: &str = r#"#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <assert.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/stat.h>
#include <stdatomic.h>
atomic_int x;
void *w(void *a) { atomic_store(&x, 1); return 0; }
int main() {
  const char *log = getenv("LOG"), *q = getenv("Q");
  char path[4096], buf[64] = {0};
  /* The log starts as it was. */
  FILE *f = fopen(log, "r"); assert(f && fgets(buf, sizeof buf, f)); fclose(f);
  assert(strcmp(buf, "start") == 0);
  f = fopen(log, "a"); fputs("+", f); fclose(f);
  /* No queue of an earlier execution. */
  DIR *d = opendir(q); struct dirent *e;
  while ((e = readdir(d))) assert(strncmp(e->d_name, "queue", 5) != 0);
  closedir(d);
  /* A queue named by a new file's inode number, as Mabain names its own. */
  snprintf(path, sizeof path, "%s/header", q);
  f = fopen(path, "w"); fclose(f);
  struct stat st; stat(path, &st); unlink(path);
  snprintf(path, sizeof path, "%s/queue%lu", q, (unsigned long)st.st_ino);
  f = fopen(path, "w"); fputs("x", f); fclose(f);
  pthread_t t; pthread_create(&t, 0, w, 0); int v = atomic_load(&x); pthread_join(t, 0);
  return v > 1;
}
"#;

/// `--fresh` also takes a file (put back as it was) and a pattern (the
/// paths it matches, those an execution made removed before the next): a
/// queue file named by an inode number, as Mabain keeps in `/dev/shm`,
/// has another name in every execution.
#[test]
fn fresh_files_and_patterns_give_every_execution_the_same_files() {
    let exe = build_with("queue-files", QUEUE_FILES, Lang::C, &[]);
    let dir = std::env::temp_dir().join(format!("c11check-queues-{}", std::process::id()));
    let (log, q) = (dir.join("log"), dir.join("shm"));
    let start = || {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&q).unwrap();
        std::fs::write(&log, "start").unwrap();
    };
    let env = |fresh: &str| {
        vec![
            ("LOG", log.to_str().unwrap().to_string()),
            ("Q", q.to_str().unwrap().to_string()),
            ("C11CHECK_FRESH", fresh.to_string()),
        ]
    };
    let run_with = |vars: Vec<(&str, String)>| {
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        run(&exe, &vars)
    };
    start();
    let (code, err) = run_with(env(log.to_str().unwrap()));
    assert_eq!(code, 1, "the queue of the first execution stays: {err}");
    start();
    let both = format!("{}:{}/queue*", log.display(), q.display());
    let (code, err) = run_with(env(&both));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no bug found in 2 executions"), "{err}");
    // Left as the last execution left them.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "start+");
    assert_eq!(std::fs::read_dir(&q).unwrap().count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

const POLLING: &str = r#"#include <pthread.h>
#include <poll.h>
#include <sys/select.h>
#include <unistd.h>
#include <assert.h>
int fds[2];
void *writer(void *a) { char c = 'x'; assert(write(fds[1], &c, 1) == 1); return 0; }
int main() {
  assert(pipe(fds) == 0);
  struct pollfd p = { fds[0], POLLIN, 0 };
  /* Nothing written yet: a finite wait times out. */
  assert(poll(&p, 1, 1000) == 0);
  fd_set r; FD_ZERO(&r); FD_SET(fds[0], &r);
  struct timeval tv = { 1, 0 };
  assert(select(fds[0] + 1, &r, 0, 0, &tv) == 0);
  pthread_t t; pthread_create(&t, 0, writer, 0);
  /* Waits (the writer runs meanwhile) until the byte is there. */
  assert(poll(&p, 1, -1) == 1 && (p.revents & POLLIN));
  FD_ZERO(&r); FD_SET(fds[0], &r);
  assert(select(fds[0] + 1, &r, 0, 0, 0) == 1 && FD_ISSET(fds[0], &r));
  char c; assert(read(fds[0], &c, 1) == 1 && c == 'x');
  pthread_join(t, 0);
  close(fds[0]); close(fds[1]);
  return 0;
}
"#;

/// `poll` and `select` on a pipe: a finite wait with nothing ready times
/// out at once, and an endless one waits while the other threads run (the
/// writer's byte arrives) instead of blocking the process, which would
/// stop every modelled thread (the run hung). Random runs see every wait
/// end; the exploration, which does not see the pipe, cuts the execution
/// at the wait (blocked, no false livelock).
#[test]
fn poll_and_select_wait_without_blocking_the_other_threads() {
    let exe = build_with("polling", POLLING, Lang::C, &[]);
    let (code, err) = run(&exe, &[("C11CHECK_ITERATIONS", "20")]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("no bug found in 20 executions (0 blocked)"),
        "{err}"
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("no bug found in 0 executions (1 blocked)"),
        "{err}"
    );
}

const SLEEPS: &str = r#"#include <unistd.h>
int x;
int main() { int a = x; usleep(1); int b = x; usleep(1); int c = x; usleep(1); return a + b + c; }
"#;

/// Sleeps one after the other at different places are no wait loop: a
/// random run took two turns that read the same between sleeps for a
/// thread stuck in a loop (a false livelock, depending on what the
/// caller's stack held: here on an empty environment).
#[test]
fn sleeps_in_a_row_are_no_livelock() {
    let exe = build_with("sleeps", SLEEPS, Lang::C, &[]);
    for pad in [0usize, 8, 24, 40] {
        let mut cmd = Command::new(&exe);
        cmd.env_clear().env("C11CHECK_ITERATIONS", "5");
        if pad > 0 {
            cmd.env("PAD", "x".repeat(pad));
        }
        let out = cmd.output().expect("the program runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(
            err.contains("no bug found in 5 executions (0 blocked)"),
            "{err}"
        );
    }
}

const THREAD_LOCALS_C: &str = r#"#include <pthread.h>
#include <assert.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
_Thread_local int tls = 7;
_Atomic(int *) seen[2];
void *worker(void *arg) {
  int i = (int)(long)arg;
  assert(tls == 7);
  tls = 10 + i;
  atomic_store(&seen[i], &tls);
  errno = 100 + i;
  sched_yield();
  assert(errno == 100 + i && tls == 10 + i);
  return 0;
}
int main() {
  pthread_t a;
  pthread_create(&a, 0, worker, (void *)1);
  worker((void *)0);
  pthread_join(a, 0);
  assert(atomic_load(&seen[0]) != atomic_load(&seen[1]));
  return 0;
}
"#;

const THREAD_LOCALS_CXX: &str = r#"#include <cassert>
#include <cerrno>
#include <mutex>
#include <string>
#include <thread>
#include <atomic>
thread_local std::string name = "fresh";
static int id_of_thread() { static thread_local int x; return (int)(long)&x; }
std::atomic<int> ids[3];
std::once_flag flag;
int once_runs = 0;
void work(int i) {
  assert(name == "fresh");
  name += std::to_string(i);
  ids[i].store(id_of_thread());
  std::call_once(flag, [] { once_runs++; });
  try { throw i; } catch (int j) { assert(j == i); }
  std::this_thread::yield();
  assert(name == "fresh" + std::to_string(i));
}
int main() {
  std::thread a(work, 1), b(work, 2);
  work(0);
  a.join(); b.join();
  assert(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
  assert(once_runs == 1);
  return 0;
}
"#;

/// Each thread's thread-locals are its own, at their own addresses, as
/// natively: a `_Thread_local`/`thread_local` variable (with a
/// constructor and destructor in C++), `errno`, the address of a
/// function-local `thread_local` as a thread's identity (moodycamel's
/// ConcurrentQueue does this; every thread had one address, so two
/// threads were taken for one: a false race), `std::call_once` (which
/// hands its callable over in libstdc++'s thread-locals) and an exception
/// in flight in each thread. Every execution passes, exhaustively and at
/// random.
#[test]
fn each_thread_has_its_own_thread_locals_at_their_own_addresses() {
    // The C program's threads share nothing but two atomics written once
    // each: one execution. The C++ one's count depends on the library.
    for (name, src, lang, verdict) in [
        (
            "thread_locals_c",
            THREAD_LOCALS_C,
            Lang::C,
            "no bug found in 1 executions (0 blocked)",
        ),
        (
            "thread_locals_cxx",
            THREAD_LOCALS_CXX,
            Lang::Cxx,
            "c11check: no bug found in ",
        ),
    ] {
        let exe = build_with(name, src, lang, &[]);
        let (code, err) = run(&exe, &[]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(err.contains(verdict), "{name}: {err}");
        let (code, err) = run(&exe, &[("C11CHECK_ITERATIONS", "30")]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(
            err.contains("no bug found in 30 executions (0 blocked)"),
            "{name}: {err}"
        );
    }
}

/// Builds the shared library `lib{name}.so` from `library` and a program
/// using it from `user`, both instrumented (as `c11check cc -shared` and
/// `c11check cc` build them); the program's path.
fn library_program(name: &str, library: &str, user: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("c11check-solib-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (lib_src, main_src) = (dir.join(format!("{name}.c")), dir.join("user.c"));
    std::fs::write(&lib_src, library).unwrap();
    std::fs::write(&main_src, user).unwrap();
    let lib = dir.join(format!("lib{name}.so"));
    let exe = dir.join("user");
    let (lib_obj, main_obj) = (dir.join(format!("{name}.o")), dir.join("user.o"));
    // Compiled with ThreadSanitizer's instrumentation, linked against the
    // runtime without it (with it, libtsan would be linked in too).
    let compile = |src: &std::path::Path, obj: &std::path::Path| {
        let mut c = Command::new(compiler());
        c.args(["-fsanitize=thread", "-g", "-O1", "-fPIC", "-c"])
            .arg(src)
            .arg("-o")
            .arg(obj);
        c
    };
    let mut build_lib = Command::new(compiler());
    build_lib.arg("-shared").arg(&lib_obj).arg("-o").arg(&lib);
    let mut build_exe = Command::new(compiler());
    build_exe
        .arg(&main_obj)
        .arg(format!("-L{}", dir.display()))
        .arg(format!("-l{name}"))
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-o")
        .arg(&exe);
    common::assert_succeeded([
        compile(&lib_src, &lib_obj).output().unwrap(),
        compile(&main_src, &main_obj).output().unwrap(),
        link_runtime_as(&mut build_lib, false).output().unwrap(),
        link_runtime_as(&mut build_exe, false).output().unwrap(),
    ]);
    exe
}

const HEAP_LIBRARY: &str = r#"#include <stdlib.h>
int calls;
static char *cache;
int lib_calls(void) { return ++calls; }
void lib_make(void) { cache = malloc(16); }
void lib_release(void) { free(cache); }
"#;

const HEAP_LIBRARY_USER: &str = r#"#include <pthread.h>
#include <assert.h>
#include <stdatomic.h>
int lib_calls(void); void lib_make(void); void lib_release(void);
atomic_int flag;
void *w(void *a) { lib_release(); return 0; }
void *setter(void *a) { atomic_store(&flag, 1); return 0; }
int main(int argc, char **argv) {
  assert(lib_calls() == 1);
  lib_make();
  pthread_t t;
  if (argc > 1) { pthread_create(&t, 0, w, 0); lib_release(); pthread_join(t, 0); }
  else { pthread_create(&t, 0, setter, 0); (void)atomic_load(&flag); pthread_join(t, 0); lib_release(); }
  return 0;
}
"#;

/// A shared library built for ThreadSanitizer is part of the program: its
/// globals start every execution as they were at `main` (the second
/// execution found `calls` at 1 and failed), and its heap blocks are the
/// program's, so a double free inside it is c11check's report with the
/// library's source line (it was glibc's `free(): double free detected`
/// and a SIGABRT, no report).
#[test]
fn a_shared_librarys_globals_and_heap_are_the_programs() {
    let exe = library_program("heaplib", HEAP_LIBRARY, HEAP_LIBRARY_USER);
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("no bug found in 2 executions (0 blocked)"),
        "{err}"
    );
    let out = Command::new(&exe).arg("twice").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("double free: ")
            && err.contains("heaplib.c:6")
            && err.contains("in lib_release() of libheaplib.so")
            && err.contains("allocated at ")
            && err.contains("heaplib.c:5"),
        "{err}"
    );
    assert!(!err.contains("SIGABRT"), "{err}");
}

const LONG_AGO: &str = r#"#include <pthread.h>
#include <stdatomic.h>
int x;
atomic_int y;
void *w(void *a) { x = 1; for (int i = 0; i < 3000; i++) atomic_fetch_add_explicit(&y, 1, memory_order_relaxed); return 0; }
int main() {
  pthread_t t; pthread_create(&t, 0, w, 0);
  while (atomic_load_explicit(&y, memory_order_relaxed) < 3000) ;
  int v = x;
  pthread_join(t, 0);
  return v - 1;
}
"#;

/// A random run's race whose earlier access lies thousands of operations
/// back (a database's field written when it opened) names both accesses:
/// the report's run again watches the location (the earlier one had no
/// place: only the last operations are kept).
#[test]
fn a_race_with_an_access_long_ago_names_both_places() {
    let exe = build_with("long_ago", LONG_AGO, Lang::C, &[]);
    let (code, err) = run(&exe, &[("C11CHECK_ITERATIONS", "1")]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("data race on x: a read by thread 0 at ")
            && err.contains("long_ago.c:9:")
            && err.contains("the earlier access: thread 1 at ")
            && err.contains("long_ago.c:5:"),
        "{err}"
    );
}

const CONSTRUCTED: &str = r#"#include <thread>
namespace bank {
struct Account {
  long id;
  int status;
  Account(long i);
};
__attribute__((noinline)) Account::Account(long i) : id(i), status(0) {}
}
int main() {
  bank::Account *a = new bank::Account(7);
  std::thread t([a] { a->status = 1; });
  int s = a->status;
  t.join();
  delete a;
  return s;
}
"#;

/// A heap object made by `new T(...)` is named by its type and member
/// (`main()'s block 1 (bank::Account).status`), from the constructor the
/// allocation is passed to and the type's debug information; it was
/// `main()'s block 1+8`.
#[test]
fn a_heap_object_made_by_new_is_named_by_its_type_and_member() {
    let exe = build_with("constructed", CONSTRUCTED, Lang::Cxx, &[]);
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("data race on main()'s block 1 (bank::Account).status: "),
        "{err}"
    );
}
