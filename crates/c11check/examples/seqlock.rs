//! A sequence lock (one writer, readers retry while a write is in progress),
//! correct (after Boehm, "Can seqlocks get along with programming language
//! memory models?") and with C11Tester's injected bug: the writer's first
//! counter increment is not followed by a release fence, so a reader can see
//! new data with an old, even counter and accept a torn pair.
//!
//! `cargo run --release -p c11check --example seqlock`

use c11check::model::{Builder, Report, Summary};
use c11check::sync::atomic::{fence, AtomicUsize, Ordering};
use c11check::thread;

pub struct SeqLock {
    seq: AtomicUsize,
    a: AtomicUsize,
    b: AtomicUsize,
    fenced: bool,
}

impl SeqLock {
    pub fn new(fenced: bool) -> Self {
        SeqLock {
            seq: AtomicUsize::new(0),
            a: AtomicUsize::new(0),
            b: AtomicUsize::new(0),
            fenced,
        }
    }
    /// Writes the pair `(v, v)` (single writer).
    pub fn write(&self, v: usize) {
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Relaxed);
        if self.fenced {
            fence(Ordering::Release);
        }
        self.a.store(v, Ordering::Relaxed);
        self.b.store(v, Ordering::Relaxed);
        self.seq.store(s + 2, Ordering::Release);
    }
    /// Reads a consistent pair.
    pub fn read(&self) -> (usize, usize) {
        loop {
            let s1 = self.seq.load(Ordering::Acquire);
            if s1.is_multiple_of(2) {
                let a = self.a.load(Ordering::Relaxed);
                let b = self.b.load(Ordering::Relaxed);
                fence(Ordering::Acquire);
                let s2 = self.seq.load(Ordering::Relaxed);
                if s1 == s2 {
                    return (a, b);
                }
            }
            thread::yield_now();
        }
    }
}

/// One writer writing twice, one reader; the reader must never see a torn pair.
pub fn check(fenced: bool) -> Result<Summary, Box<Report>> {
    check_with(Builder::new(), fenced)
}

/// [`check`] with the given settings (a replay, for instance).
pub fn check_with(b: Builder, fenced: bool) -> Result<Summary, Box<Report>> {
    b.explore(move || {
        let l = SeqLock::new(fenced);
        thread::scope(|s| {
            s.spawn(|| {
                l.write(1);
                l.write(2);
            });
            let (a, b) = l.read();
            assert_eq!(a, b, "the reader saw a torn pair");
        });
    })
}

#[allow(dead_code)]
fn main() {
    match check(true) {
        Ok(s) => println!(
            "correct seqlock: no bug in {} executions ({} blocked)",
            s.stats.executions, s.blocked
        ),
        Err(r) => println!("correct seqlock: unexpected report\n{r}"),
    }
    match check(false) {
        Ok(_) => println!("buggy seqlock: the bug was not found"),
        Err(r) => println!("buggy seqlock (no fence after the first increment):\n{r}"),
    }
}
