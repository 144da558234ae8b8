//! The runtime linked statically (the archive `c11check static-runtime`
//! makes) checks a program exactly as the shared library does: the same
//! executions, the same reports. Inside the executable the runtime must
//! leave its own globals, thread-locals and code out of what it does to the
//! program's; a mistake there shows as a different count, a false alarm or
//! a crash.

mod common;

use common::{build_sources_linked, executions, run, Lang};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A C++ program with a global that must start at 0 in every execution,
/// a thread-local per thread, a `std::mutex`, `new`/`delete` and message
/// passing; `-DRACY` makes the message a relaxed one and the payload a race.
const PROGRAM: &str = r#"#include <atomic>
#include <cassert>
#include <mutex>
#include <thread>
#ifdef RACY
#define PUBLISH std::memory_order_relaxed
#else
#define PUBLISH std::memory_order_release
#endif
int runs;
thread_local int mine = 7;
std::mutex m;
int counter;
std::atomic<int> flag;
int *payload;
void worker(int k) {
  assert(mine == 7);
  mine = k;
  { std::lock_guard<std::mutex> g(m); counter++; }
  int *p = new int(k);
  delete p;
  if (flag.load(std::memory_order_acquire)) assert(*payload == 5);
}
int main() {
  assert(++runs == 1);
  std::thread a(worker, 1), b(worker, 2);
  payload = new int(5);
  flag.store(1, PUBLISH);
  a.join();
  b.join();
  assert(counter == 2 && mine == 7);
  delete payload;
  return 0;
}
"#;

fn source() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("c11check-linking-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("linking.cc");
    std::fs::write(&src, PROGRAM).unwrap();
    src
}

/// Compiles the C file `src` for checking into an object beside it.
fn compile(src: &Path) -> PathBuf {
    let obj = src.with_extension("o");
    let o = Command::new(common::compiler())
        .args(["-fsanitize=thread", "-g", "-c"])
        .arg(src)
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    obj
}

/// Whether the executable names `libc11check_rt.so` among the libraries it needs.
fn needs_shared_runtime(exe: &Path) -> bool {
    use object::{Object, ObjectSection};
    let bytes = std::fs::read(exe).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    file.section_by_name(".dynstr")
        .and_then(|s| s.data().ok())
        .is_some_and(|d| d.windows(18).any(|w| w == b"libc11check_rt.so\0"))
}

#[test]
fn the_static_runtime_finds_what_the_shared_one_finds() {
    let src = source();
    let mut counts = Vec::new();
    let mut reports = Vec::new();
    for statically in [false, true] {
        let tag = if statically { "static" } else { "shared" };
        let ok = build_sources_linked(
            &format!("linking_ok_{tag}"),
            std::slice::from_ref(&src),
            Lang::Cxx,
            &[],
            statically,
        );
        assert_eq!(needs_shared_runtime(&ok), !statically, "{tag}");
        let (code, err) = run(&ok, &[]);
        assert_eq!(code, 0, "{tag}: {err}");
        counts.push(executions(&err));

        let racy = build_sources_linked(
            &format!("linking_racy_{tag}"),
            std::slice::from_ref(&src),
            Lang::Cxx,
            &["-DRACY"],
            statically,
        );
        let (code, err) = run(&racy, &[]);
        assert_eq!(code, 1, "{tag}: {err}");
        let report: Vec<String> = err
            .lines()
            .skip_while(|l| !l.starts_with("c11check found a "))
            .take(3)
            .map(str::to_string)
            .collect();
        assert!(
            report.first().is_some_and(|l| l.contains("data race")),
            "{tag}: {err}"
        );
        reports.push(report);
    }
    // The same exact count both ways (gcc and clang alike): the two
    // workers' lock orders and where main's publication falls.
    assert_eq!(counts, [8, 8], "shared, static");
    assert_eq!(reports[0], reports[1]);
}

#[test]
fn cargos_static_library_linked_as_it_is_is_refused_with_a_clear_error() {
    // Cargo's `libc11check_rt.a` has the runtime's parts scattered: the
    // runtime must say so rather than copy its own state over.
    let dir = std::env::temp_dir().join(format!("c11check-linking-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("raw.c");
    std::fs::write(&src, "int main() { return 0; }\n").unwrap();
    let obj = compile(&src);
    let exe = dir.join("raw");
    let cc = common::compiler();
    let o = Command::new(&cc)
        .arg(&obj)
        .arg(common::runtime_dir().join("libc11check_rt.a"))
        .args(c11check_c_link::STATIC_LIBS)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("c11check static-runtime"), "{err}");
}

#[test]
fn the_runtime_twice_static_and_shared_is_refused_with_a_clear_error() {
    // An instrumented shared library needs `libc11check_rt.so`; a program
    // that also has the runtime linked in would run two of them.
    let dir = std::env::temp_dir().join(format!("c11check-linking-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cc = common::compiler();
    let lib_src = dir.join("twice_lib.c");
    std::fs::write(
        &lib_src,
        "int shared_counter;\nvoid bump(void) { shared_counter++; }\n",
    )
    .unwrap();
    let lib = dir.join("libtwice.so");
    let o = common::link_runtime_as(
        Command::new(&cc)
            .args(["-fsanitize=thread", "-g", "-fPIC", "-shared"])
            .arg(&lib_src)
            .arg("-o")
            .arg(&lib),
        false,
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let src = dir.join("twice.c");
    std::fs::write(&src, "void bump(void);\nint main() { bump(); return 0; }\n").unwrap();
    let obj = compile(&src);
    let exe = dir.join("twice");
    let o = common::link_runtime_as(
        Command::new(&cc)
            .arg(&obj)
            .arg(&lib)
            .arg(format!("-Wl,-rpath,{}", dir.display()))
            .arg("-o")
            .arg(&exe),
        true,
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--shared-runtime"), "{err}");
}
