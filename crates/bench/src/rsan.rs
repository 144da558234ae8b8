//! RSAN's robustness benchmarks, ported to c11check's Rust API: Dekker,
//! Peterson, Lamport's fast mutex, a sequence lock and event counters, each
//! in a version that is robust against SC (seq_cst where the algorithm
//! needs it) and one that is not (release/acquire, or a missing fence).
//! The algorithms follow their classic formulations (RSAN's own sources are
//! in its TPL dialect); the critical sections count entries with an RMW.

use c11check::hint::spin_loop;
use c11check::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering, Ordering::*};
use c11check::sync::Arc;
use c11check::thread;

/// One benchmark: its name, whether it is robust, and the program.
pub struct Program {
    pub name: &'static str,
    pub robust: bool,
    pub run: fn(),
    pub what: &'static str,
}

/// Every port, robust and not.
pub fn programs() -> Vec<Program> {
    vec![
        Program {
            name: "dekker-sc",
            robust: true,
            run: || dekker(SeqCst, SeqCst),
            what: "Dekker's mutual exclusion, seq_cst flags and turn",
        },
        Program {
            name: "dekker-ra",
            robust: false,
            run: || dekker(Release, Acquire),
            what: "Dekker with release stores and acquire loads: each thread may miss the other's flag",
        },
        Program {
            name: "peterson-sc",
            robust: true,
            run: || peterson(SeqCst, SeqCst),
            what: "Peterson's algorithm, seq_cst",
        },
        Program {
            name: "peterson-ra",
            robust: false,
            run: || peterson(Release, Acquire),
            what: "Peterson with release/acquire: the flag store and the turn store are not ordered before the other's loads",
        },
        Program {
            name: "lamport2-sc",
            robust: true,
            run: || lamport(2, SeqCst, SeqCst),
            what: "Lamport's fast mutex, two threads, seq_cst",
        },
        Program {
            name: "lamport2-ra",
            robust: false,
            run: || lamport(2, Release, Acquire),
            what: "Lamport's fast mutex, two threads, release/acquire",
        },
        Program {
            name: "lamport3-ra",
            robust: false,
            run: || lamport(3, Release, Acquire),
            what: "Lamport's fast mutex, three threads (Rocker runs out of memory here), release/acquire",
        },
        Program {
            name: "seqlock-fenced",
            robust: true,
            run: || seqlock(true),
            what: "sequence lock after Boehm: relaxed data bracketed by a release fence (writer) and an acquire fence (reader)",
        },
        Program {
            name: "seqlock-unfenced",
            robust: false,
            run: || seqlock(false),
            what: "sequence lock without the fences: a reader may take a new value between two equal even counts",
        },
        Program {
            name: "counters3-sc",
            robust: true,
            run: || event_counters(3, SeqCst),
            what: "three event counters, each thread counts its own and reads the others', seq_cst",
        },
        Program {
            name: "counters3-rlx",
            robust: false,
            run: || event_counters(3, Relaxed),
            what: "three event counters, relaxed: every thread may miss every other's event",
        },
    ]
}

/// Two threads enter a critical section once each.
fn dekker(store: Ordering, load: Ordering) {
    let want = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let turn = Arc::new(AtomicUsize::new(0));
    let inside = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let (want, turn, inside) = (want.clone(), turn.clone(), inside.clone());
            thread::spawn(move || {
                let j = 1 - i;
                want[i].store(true, store);
                while want[j].load(load) {
                    if turn.load(load) != i {
                        want[i].store(false, store);
                        while turn.load(load) != i {
                            spin_loop();
                        }
                        want[i].store(true, store);
                    } else {
                        spin_loop();
                    }
                }
                inside.fetch_add(1, Relaxed);
                turn.store(j, store);
                want[i].store(false, store);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

fn peterson(store: Ordering, load: Ordering) {
    let flag = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let turn = Arc::new(AtomicUsize::new(0));
    let inside = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let (flag, turn, inside) = (flag.clone(), turn.clone(), inside.clone());
            thread::spawn(move || {
                let j = 1 - i;
                flag[i].store(true, store);
                turn.store(j, store);
                while flag[j].load(load) && turn.load(load) == j {
                    spin_loop();
                }
                inside.fetch_add(1, Relaxed);
                flag[i].store(false, store);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Lamport's fast mutex for `n` threads (ids 1..=n; 0 is "nobody").
fn lamport(n: usize, store: Ordering, load: Ordering) {
    let x = Arc::new(AtomicUsize::new(0));
    let y = Arc::new(AtomicUsize::new(0));
    let b: Arc<Vec<AtomicBool>> = Arc::new((0..=n).map(|_| AtomicBool::new(false)).collect());
    let inside = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (1..=n)
        .map(|i| {
            let (x, y, b, inside) = (x.clone(), y.clone(), b.clone(), inside.clone());
            thread::spawn(move || {
                loop {
                    b[i].store(true, store);
                    x.store(i, store);
                    if y.load(load) != 0 {
                        b[i].store(false, store);
                        while y.load(load) != 0 {
                            spin_loop();
                        }
                        continue;
                    }
                    y.store(i, store);
                    if x.load(load) != i {
                        b[i].store(false, store);
                        for j in 1..=n {
                            while b[j].load(load) {
                                spin_loop();
                            }
                        }
                        if y.load(load) != i {
                            while y.load(load) != 0 {
                                spin_loop();
                            }
                            continue;
                        }
                    }
                    break;
                }
                inside.fetch_add(1, Relaxed);
                y.store(0, store);
                b[i].store(false, store);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// One writer updates two data words under the sequence count; one reader
/// reads a consistent pair (retrying while a write is under way).
fn seqlock(fenced: bool) {
    let seq = Arc::new(AtomicUsize::new(0));
    let data = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let (s2, d2) = (seq.clone(), data.clone());
    let writer = thread::spawn(move || {
        let s = s2.load(Relaxed);
        s2.store(s + 1, Relaxed);
        if fenced {
            fence(Release);
        }
        d2[0].store(1, Relaxed);
        d2[1].store(1, Relaxed);
        s2.store(s + 2, Release);
    });
    loop {
        let s1 = seq.load(Acquire);
        if s1 % 2 == 1 {
            spin_loop();
            continue;
        }
        let a = data[0].load(Relaxed);
        let b = data[1].load(Relaxed);
        if fenced {
            fence(Acquire);
        }
        if seq.load(Relaxed) == s1 {
            let _ = (a, b);
            break;
        }
        spin_loop();
    }
    writer.join().unwrap();
}

/// `n` threads each count an event of their own, then read the others'.
fn event_counters(n: usize, ord: Ordering) {
    let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let counts = counts.clone();
            thread::spawn(move || {
                counts[i].fetch_add(1, ord);
                (0..n)
                    .filter(|&j| j != i)
                    .map(|j| counts[j].load(ord))
                    .sum::<usize>()
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
