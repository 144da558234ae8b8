//! loom's `preemption_bound` (and `LOOM_MAX_PREEMPTIONS`, read by
//! `Builder::new`) bounds the exploration: a bug that needs one preemption
//! is missed within none and found within one.

use loom::sync::{Arc, Mutex};
use loom::thread;

/// Reads a counter in one critical section and writes it in the next: an
/// increment is lost only when a thread is preempted between the two.
fn lost_update() {
    let x = Arc::new(Mutex::new(0));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let x = x.clone();
            thread::spawn(move || {
                let v = *x.lock().unwrap();
                *x.lock().unwrap() = v + 1;
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*x.lock().unwrap(), 2, "an increment was lost");
}

fn bounded(k: usize) -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(k);
    b
}

#[test]
fn within_no_preemption_the_lost_update_is_not_reached() {
    bounded(0).check(lost_update);
}

#[test]
#[should_panic(expected = "an increment was lost")]
fn within_one_preemption_the_lost_update_is_found() {
    bounded(1).check(lost_update);
}
