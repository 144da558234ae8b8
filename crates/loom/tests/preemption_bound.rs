//! loom's `preemption_bound` (and `LOOM_MAX_PREEMPTIONS`, read by
//! `Builder::new`) bounds the exploration: a bug that needs one preemption
//! is missed within none and found within one.

use loom::sync::{Arc, Mutex};
use loom::thread;

/// Two threads each claim a slot if it is free, checking in one critical
/// section and claiming in the next: both claim it only when one is
/// preempted between the two.
fn double_claim() {
    let slot = Arc::new(Mutex::new(None));
    let claimers: Vec<_> = [1, 2]
        .into_iter()
        .map(|id| {
            let slot = slot.clone();
            thread::spawn(move || {
                let free = slot.lock().unwrap().is_none();
                if free {
                    assert_eq!(
                        slot.lock().unwrap().replace(id),
                        None,
                        "a claimed slot was claimed again"
                    );
                }
            })
        })
        .collect();
    for c in claimers {
        c.join().unwrap();
    }
}

fn bounded(k: usize) -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(k);
    b
}

#[test]
fn within_no_preemption_the_double_claim_is_not_reached() {
    bounded(0).check(double_claim);
}

#[test]
#[should_panic(expected = "a claimed slot was claimed again")]
fn within_one_preemption_the_double_claim_is_found() {
    bounded(1).check(double_claim);
}
