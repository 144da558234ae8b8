//! The data-structure benchmarks CDSChecker and C11Tester were evaluated on,
//! ported to Rust against the names c11check, loom and shuttle share
//! (`sync::atomic`, `sync::{Arc, Mutex, Condvar}`, `thread`,
//! `cell::UnsafeCell`), so one source runs under all three.
//!
//! Each port keeps its original test driver's shape: the threads, the
//! operations each performs, the memory orders, and where non-atomic data is
//! touched. Sources: CDSChecker's benchmark repository (the originals, with the
//! bugs CDSChecker reported), the versions modified for tsan11 on which
//! C11Tester measured its race-detection rates (a memory order weakened in each
//! data structure), and C11Tester's two injected bugs (§8.1). Where the source
//! of a weakened variant is not known, the comment on it says which order we
//! weakened.
//!
//! [`BENCHMARKS`] lists every program with the verdict a correct checker must
//! give; the programs themselves are in `suite_programs.rs`, included once per
//! tool (see [`crate::c11`]).

/// What a checker must report on a benchmark.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No execution has a bug.
    NoBug,
    /// Some execution has a data race on non-atomic data.
    Race,
    /// Some execution fails an assertion of the test driver.
    Assertion,
    /// Some execution ends with every thread blocked.
    Deadlock,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::NoBug => "no bug",
            Verdict::Race => "data race",
            Verdict::Assertion => "assertion",
            Verdict::Deadlock => "deadlock",
        }
    }
}

/// One benchmark: its name, where it comes from, and its documented bug.
#[derive(Copy, Clone, Debug)]
pub struct Benchmark {
    pub name: &'static str,
    /// `CDSChecker` (the original and its published bugs), `tsan11/C11Tester`
    /// (a weakened memory order), or `C11Tester §8.1` (an injected bug).
    pub origin: &'static str,
    pub verdict: Verdict,
    /// The bug in one line, or why there is none.
    pub bug: &'static str,
    /// The bug needs weak memory: a checker of sequentially consistent
    /// interleavings (shuttle) cannot see it.
    pub weak_memory: bool,
    /// A second symptom of the same bug some executions show instead.
    pub also: Option<Verdict>,
}

impl Benchmark {
    /// Whether a report of kind `v` is this benchmark's documented bug.
    pub fn is_documented(&self, v: Verdict) -> bool {
        v == self.verdict || Some(v) == self.also
    }
}

const fn b(
    name: &'static str,
    origin: &'static str,
    verdict: Verdict,
    weak_memory: bool,
    bug: &'static str,
) -> Benchmark {
    Benchmark {
        name,
        origin,
        verdict,
        bug,
        weak_memory,
        also: None,
    }
}

/// [`b`] with a second symptom.
const fn b2(
    name: &'static str,
    origin: &'static str,
    verdict: Verdict,
    also: Verdict,
    bug: &'static str,
) -> Benchmark {
    let mut x = b(name, origin, verdict, true, bug);
    x.also = Some(also);
    x
}

/// Every benchmark, in the order of CDSChecker's Fig. 11, then C11Tester's.
pub const BENCHMARKS: &[Benchmark] = &[
    b2("chase-lev", "CDSChecker", Verdict::Assertion, Verdict::Race,
      "published bug: a push that resizes stores into the old array; a take or steal reads a slot of the new one that was never written (the new array is also published relaxed: a steal can reach it unsynchronized, a race on its creation)"),
    b("chase-lev-fixed", "CDSChecker", Verdict::NoBug, false,
      "fixed: push reloads the array after a resize, which is published release/acquire"),
    b("spsc", "CDSChecker", Verdict::Deadlock, true,
      "known bug: the producer's relaxed signal misses the consumer's waiter flag; the consumer sleeps forever"),
    b("spsc-fixed", "CDSChecker", Verdict::NoBug, false,
      "fixed: the producer signals with a seq_cst read-modify-write"),
    b("barrier", "CDSChecker", Verdict::NoBug, false, "none: a seq_cst spinning barrier"),
    b("dekker", "CDSChecker", Verdict::NoBug, false,
      "none: Dekker's critical section with seq_cst, release and acquire fences"),
    b("mcs-lock", "CDSChecker", Verdict::NoBug, false, "none: MCS queue lock"),
    b("mpmc", "CDSChecker", Verdict::NoBug, false,
      "none: bounded multi-producer multi-consumer queue"),
    b("ms-queue", "CDSChecker", Verdict::NoBug, false,
      "none: Michael-Scott queue with tagged indices"),
    b("linuxrw", "CDSChecker", Verdict::NoBug, false, "none: Linux reader-writer spinlock"),
    b("barrier-weak", "tsan11/C11Tester", Verdict::Race, true,
      "the last thread's step increment is relaxed: a waiter leaves without synchronizing and its read of `var` races (C11Tester's driver: three readers)"),
    b2("chase-lev-weak", "tsan11/C11Tester", Verdict::Assertion, Verdict::Race,
      "the resized array is published with relaxed orders: a steal reads a slot whose copy does not happen before it; a tool that tracks object creation (loom; C11Tester on the C version's calloc'd array) reports the unsynchronized access to the new array as a race"),
    b("dekker-weak", "tsan11/C11Tester", Verdict::Race, true,
      "p0's first seq_cst fence is removed: both threads enter the critical section"),
    b("linuxrw-weak", "tsan11/C11Tester", Verdict::Race, true,
      "the retried lock acquisitions are relaxed: a writer that retried does not synchronize with the reader it waited for (C11Tester's driver: a yield inside the write lock)"),
    b("mcs-lock-weak", "tsan11/C11Tester", Verdict::Race, true,
      "(our weakening) the hand-over store to the successor's gate is relaxed: the successor's critical section races with ours"),
    b("mpmc-weak", "tsan11/C11Tester", Verdict::Race, true,
      "write_publish is relaxed: a reader reads the slot without synchronizing with its writer"),
    b2("ms-queue-weak", "tsan11/C11Tester", Verdict::Race, Verdict::Assertion,
      "(our weakening) the CAS that links a new node is relaxed: a dequeuer reads the node's value without synchronizing (or sees the node's `next` before its initialization: the driver's poison check fails)"),
    b("ms-queue-c11tester", "C11Tester", Verdict::Race, false,
      "the driver's, not the queue's: C11Tester's four-thread driver has three threads write `input[1]` unsynchronized, a race in every execution"),
    b("seqlock", "C11Tester §8.1", Verdict::NoBug, false,
      "none: seqlock (Boehm, MSPC'12, Fig. 5) with two writers and release data stores"),
    b("seqlock-relaxed-inc", "C11Tester §8.1", Verdict::Assertion, true,
      "injected: the writers' counter increment is relaxed; two writers' data stores are unordered and a reader sees a torn pair"),
    b("rwlock", "C11Tester §8.1", Verdict::NoBug, false,
      "none: reader-writer lock guarding a pair of atomics"),
    b("rwlock-relaxed-write", "C11Tester §8.1", Verdict::Assertion, true,
      "injected: write_lock is relaxed; two writers' stores are unordered and a reader sees a torn pair"),
    b("seqlock-c11tester", "C11Tester §8.1", Verdict::Assertion, true,
      "injected, C11Tester's driver (two writers and a reader thread, acquire data loads, relaxed recheck): the writers' counter load and CAS are relaxed; a reader accepts a torn pair"),
    b("rwlock-c11tester", "C11Tester §8.1", Verdict::Assertion, true,
      "injected, C11Tester's driver (three threads, each read-write-read-write): write_lock is relaxed; a reader sees a torn pair"),
];

/// The benchmark of that name.
pub fn benchmark(name: &str) -> Option<&'static Benchmark> {
    BENCHMARKS.iter().find(|b| b.name == name)
}
