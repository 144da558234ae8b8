//! What real programs do besides their threads' synchronization: throw and
//! catch C++ exceptions (an uncaught one is `std::terminate`, reported with
//! its type).

mod common;

use common::{build_with, run, Lang};

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
        err.contains("an uncaught C++ exception of type `std::runtime_error`"),
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
