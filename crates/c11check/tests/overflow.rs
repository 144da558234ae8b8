//! A modelled thread that overflows its stack ends the process with a message
//! that names the thread and says how to give threads more stack (not with a
//! bare SIGSEGV). The overflow runs in a child process: this test binary
//! again, told by an environment variable to overflow.

use c11check::model::Builder;
use c11check::thread;
use std::hint::black_box;
use std::process::Command;

const CHILD: &str = "C11CHECK_TEST_OVERFLOW_CHILD";

/// Recursion with a kilobyte frame that no optimisation removes.
fn deep(n: u64) -> u64 {
    let frame = black_box([n as u8; 1024]);
    if n == 0 {
        return frame[0] as u64;
    }
    deep(black_box(n - 1)) + frame[1] as u64
}

fn overflow_in(engine: &str) {
    let mut b = Builder::new();
    if engine == "random" {
        b = b.random(3);
    }
    b.stack_size = 256 * 1024;
    b.check(|| {
        let t = thread::spawn(|| black_box(deep(black_box(10_000))));
        t.join().unwrap();
    });
}

#[test]
fn stack_overflow_in_a_modelled_thread_is_named() {
    if let Ok(engine) = std::env::var(CHILD) {
        overflow_in(&engine);
        return;
    }
    for engine in ["exhaustive", "random"] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "stack_overflow_in_a_modelled_thread_is_named",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, engine)
            .output()
            .expect("the test binary runs again");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{engine}: the child succeeded");
        assert!(
            stderr.contains(
                "c11check: thread 1 of the program under test overflowed its stack (256 KiB)"
            ) && stderr.contains("C11CHECK_STACK_SIZE"),
            "{engine}: no overflow message in:\n{stderr}"
        );
    }
}

/// A fault that is not a fiber's overflow still reaches the handler that was
/// there before (std's report of a thread's own stack overflow).
#[test]
fn other_stack_overflows_keep_their_std_report() {
    if std::env::var(CHILD).as_deref() == Ok("std") {
        // Install the handler first, then overflow a plain thread's stack.
        Builder::new().check(|| {});
        let t = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| black_box(deep(black_box(10_000))))
            .unwrap();
        let _ = t.join();
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "other_stack_overflows_keep_their_std_report",
            "--nocapture",
        ])
        .env(CHILD, "std")
        .output()
        .expect("the test binary runs again");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("has overflowed its stack") && !stderr.contains("c11check: thread"),
        "{stderr}"
    );
}
