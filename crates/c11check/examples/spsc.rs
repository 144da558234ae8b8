//! A bounded single-producer single-consumer ring buffer, correct and with
//! its classic bug: publishing the tail with `Relaxed`, so the consumer may
//! read a slot before the producer's write to it is visible (a data race).
//!
//! `cargo run --release -p c11check --example spsc`

use c11check::cell::UnsafeCell;
use c11check::model::{Builder, Report, Summary};
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::thread;

const CAP: usize = 2;

pub struct Spsc {
    slots: [UnsafeCell<u32>; CAP],
    head: AtomicUsize,
    tail: AtomicUsize,
    publish: Ordering,
}

// SAFETY: one producer writes a slot before publishing it, one consumer reads
// it after seeing it published; the model checks exactly that.
unsafe impl Sync for Spsc {}

impl Spsc {
    pub fn new(publish: Ordering) -> Self {
        Spsc {
            slots: [UnsafeCell::new(0), UnsafeCell::new(0)],
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            publish,
        }
    }
    /// Producer side; `false` when full.
    pub fn push(&self, v: u32) -> bool {
        let tail = self.tail.load(Ordering::Relaxed);
        if tail - self.head.load(Ordering::Acquire) == CAP {
            return false;
        }
        self.slots[tail % CAP].with_mut(|p| unsafe { *p = v });
        self.tail.store(tail + 1, self.publish);
        true
    }
    /// Consumer side; `None` when empty.
    pub fn pop(&self) -> Option<u32> {
        let head = self.head.load(Ordering::Relaxed);
        if self.tail.load(Ordering::Acquire) == head {
            return None;
        }
        let v = self.slots[head % CAP].with(|p| unsafe { *p });
        self.head.store(head + 1, Ordering::Release);
        Some(v)
    }
}

/// Three items through a queue of two slots; the consumer checks the order.
pub fn check(publish: Ordering) -> Result<Summary, Box<Report>> {
    check_with(Builder::new(), publish)
}

/// [`check`] with the given settings (a replay, for instance).
pub fn check_with(b: Builder, publish: Ordering) -> Result<Summary, Box<Report>> {
    b.explore(move || {
        let q = Spsc::new(publish);
        thread::scope(|s| {
            s.spawn(|| {
                for i in 1..=3 {
                    while !q.push(i) {
                        thread::yield_now();
                    }
                }
            });
            for i in 1..=3 {
                let v = loop {
                    match q.pop() {
                        Some(v) => break v,
                        None => thread::yield_now(),
                    }
                };
                assert_eq!(v, i, "items came out of order");
            }
        });
    })
}

#[allow(dead_code)]
fn main() {
    match check(Ordering::Release) {
        Ok(s) => println!(
            "correct SPSC queue: no bug in {} executions ({} blocked)",
            s.stats.executions, s.blocked
        ),
        Err(r) => println!("correct SPSC queue: unexpected report\n{r}"),
    }
    match check(Ordering::Relaxed) {
        Ok(_) => println!("buggy SPSC queue: the bug was not found"),
        Err(r) => println!("buggy SPSC queue (tail published with Relaxed):\n{r}"),
    }
}
