//! Reports read like the user's code: source lines of the test (not of
//! c11check's own types), and for a data race, what would order the two
//! accesses.

use c11check::cell::UnsafeCell;
use c11check::model::{Builder, FailureKind};
use c11check::sync::atomic::{AtomicBool, Ordering};
use c11check::sync::{Arc, Mutex};
use c11check::thread;

/// Shared data, as a user's queue or cell type wraps it.
struct Data(UnsafeCell<i32>);
// SAFETY: the test's point is the unsynchronised access c11check reports.
unsafe impl Sync for Data {}

/// Message passing whose flag is published with `store` and read with
/// `load` orders.
fn message_passing(store: Ordering, load: Ordering) -> Box<c11check::model::Report> {
    Builder::new()
        .explore(move || {
            let data = Arc::new(Data(UnsafeCell::new(0)));
            let flag = Arc::new(AtomicBool::new(false));
            let (d2, f2) = (data.clone(), flag.clone());
            let t = thread::spawn(move || {
                d2.0.with_mut(|p| unsafe { *p = 42 });
                f2.store(true, store);
            });
            if flag.load(load) {
                data.0.with(|p| unsafe { assert_eq!(*p, 42) });
            }
            t.join().unwrap();
        })
        .expect_err("the data race is found")
}

#[test]
fn a_race_says_which_orders_would_fix_it() {
    let r = message_passing(Ordering::Relaxed, Ordering::Relaxed);
    assert_eq!(r.failure.kind, FailureKind::DataRace, "{r}");
    let m = &r.failure.message;
    assert!(
        m.contains("but does not synchronise with it: make the store T1."),
        "{m}"
    );
    assert!(
        m.contains("tests/report_lines.rs:26:20 Release and the load T0."),
        "{m}"
    );
    assert!(m.contains("tests/report_lines.rs:28:21 Acquire"), "{m}");
    // The cell's accesses show no value (c11check does not see it), and
    // the legend says what each location is.
    let text = r.to_string();
    assert!(text.contains("write(plain) loc"), "{text}");
    assert!(
        text.contains(
            "loc3: an UnsafeCell made at crates/c11check/tests/report_lines.rs:21:38, first used at crates/c11check/tests/report_lines.rs:25:22"
        ),
        "{text}"
    );
    assert!(
        text.contains("loc2: an AtomicBool made at crates/c11check/tests/report_lines.rs:22:33, first used at crates/c11check/tests/report_lines.rs:26:20"),
        "{text}"
    );
    assert!(
        text.contains(
            "loc0: an Arc's reference count made at crates/c11check/tests/report_lines.rs:21:24,"
        ),
        "{text}"
    );
    let r = message_passing(Ordering::Release, Ordering::Relaxed);
    let m = &r.failure.message;
    assert!(!m.contains("Release and"), "{m}");
    assert!(m.contains("make the load T0."), "{m}");
}

#[test]
fn mutex_and_arc_events_point_at_the_test() {
    let r = Builder::new()
        .explore(|| {
            let m = Arc::new(Mutex::new(0));
            let m2 = m.clone();
            let t = thread::spawn(move || {
                *m2.lock().unwrap() += 1;
            });
            let seen = *m.lock().unwrap(); // LOCK
            t.join().unwrap();
            assert_eq!(seen, 0, "the main thread went first");
        })
        .expect_err("the other thread may lock first");
    let text = r.to_string();
    assert!(!text.contains("src/sync/"), "{text}");
    // The line of the main thread's lock, found in this file's source.
    let line = include_str!("report_lines.rs")
        .lines()
        .position(|l| l.ends_with("// LOCK"))
        .unwrap()
        + 1;
    assert!(
        text.contains(&format!("tests/report_lines.rs:{line}:27")),
        "{text}"
    );
    assert!(
        text.contains("reference count -1 (drop of the handle made here)"),
        "{text}"
    );
}

/// A queue whose two fields are modelled objects (in this order in memory).
#[repr(C)]
struct Queue {
    head: AtomicBool,
    slot: Data,
}
// SAFETY: as `Data`.
unsafe impl Sync for Queue {}

/// Message passing through a `Queue` with relaxed orders: a race on the
/// slot. `name_fields` names each field; otherwise the queue as a whole.
fn named_race(builder: Builder, name_fields: bool) -> Box<c11check::model::Report> {
    builder
        .explore(move || {
            let q = Arc::new(Queue {
                head: AtomicBool::new(false),
                slot: Data(UnsafeCell::new(0)),
            });
            if name_fields {
                c11check::name(&q.head, "q.head");
                c11check::name(&q.slot, format!("q.{}", "slot"));
            } else {
                c11check::name(&*q, "queue");
            }
            let q2 = q.clone();
            let t = thread::spawn(move || {
                q2.slot.0.with_mut(|p| unsafe { *p = 1 });
                q2.head.store(true, Ordering::Relaxed);
            });
            if q.head.load(Ordering::Relaxed) {
                q.slot.0.with(|p| unsafe { assert_eq!(*p, 1) });
            }
            t.join().unwrap();
        })
        .expect_err("the data race is found")
}

#[test]
fn named_objects_are_called_by_their_names() {
    let r = named_race(Builder::new(), true);
    assert_eq!(r.failure.kind, FailureKind::DataRace, "{r}");
    assert!(
        r.failure.message.starts_with("data race on q.slot: "),
        "{r}"
    );
    let text = r.to_string();
    assert!(text.contains("store(Relaxed) q.head := 1"), "{text}");
    assert!(text.contains("write(plain) q.slot "), "{text}");
    assert!(
        text.contains("\n  q.head: an AtomicBool made at crates/c11check/tests/report_lines.rs:"),
        "{text}"
    );
    assert!(!text.contains("loc2") && !text.contains("loc3"), "{text}");
    assert!(r.dot.contains("q.head"), "{}", r.dot);

    // One name for a struct of two objects numbers them by first use.
    let r = named_race(Builder::new(), false);
    let text = r.to_string();
    assert!(text.contains("write(plain) queue.2 "), "{text}");
    assert!(text.contains("store(Relaxed) queue.1 := 1"), "{text}");
    assert!(
        r.failure.message.starts_with("data race on queue.2: "),
        "{r}"
    );

    // The live engine uses the same names and gives a legend.
    let r = named_race(Builder::new().random(500).live(), true);
    assert_eq!(r.failure.kind, FailureKind::DataRace, "{r}");
    assert!(
        r.failure.message.starts_with("data race on q.slot: "),
        "{r}"
    );
    let text = r.to_string();
    assert!(text.contains("q.head: an AtomicBool made at"), "{text}");
}
