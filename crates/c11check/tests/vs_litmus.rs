//! The same programs through the Rust API and through the litmus front end
//! give the same sets of outcomes, for every ordering (SB, MP, IRIW, 2+2W).

use c11check::model::Builder;
use c11check::sync::atomic::{AtomicUsize, Ordering};
use c11check::thread;
use c11check_litmus::parser::parse;
use c11check_litmus::{run_test, RunOptions};
use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

/// Creation tracking on (see `tests/creation.rs`): no test here may report
/// an access to an object as unordered with its creation.
#[global_allocator]
static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;

/// (litmus name, Rust ordering) for stores and for loads.
const STORES: [(&str, Ordering); 3] = [
    ("memory_order_relaxed", Ordering::Relaxed),
    ("memory_order_release", Ordering::Release),
    ("memory_order_seq_cst", Ordering::SeqCst),
];
const LOADS: [(&str, Ordering); 3] = [
    ("memory_order_relaxed", Ordering::Relaxed),
    ("memory_order_acquire", Ordering::Acquire),
    ("memory_order_seq_cst", Ordering::SeqCst),
];

/// The litmus outcomes of `src`, as values of `keys` in order.
fn litmus_outcomes(src: &str, keys: &[&str]) -> BTreeSet<Vec<i64>> {
    let test = parse(src).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
    let report = run_test(&test, &RunOptions::default());
    let names: Vec<String> = report.keys.iter().map(|k| k.herd_name()).collect();
    report
        .states
        .keys()
        .map(|vals| {
            keys.iter()
                .map(|k| {
                    vals[names
                        .iter()
                        .position(|n| n == k)
                        .unwrap_or_else(|| panic!("no key {k} in {names:?}"))]
                })
                .collect()
        })
        .collect()
}

/// The outcomes the Rust closure reports across all executions.
fn rust_outcomes(f: impl Fn() -> Vec<usize> + Send + Sync + 'static) -> BTreeSet<Vec<i64>> {
    let seen = std::sync::Arc::new(StdMutex::new(BTreeSet::new()));
    let s2 = seen.clone();
    Builder::new()
        .explore(move || {
            let v = f().into_iter().map(|x| x as i64).collect();
            s2.lock().unwrap().insert(v);
        })
        .unwrap_or_else(|r| panic!("{r}"));
    let out = std::mem::take(&mut *seen.lock().unwrap());
    out
}

#[test]
fn store_buffering() {
    for (sn, so) in STORES {
        for (ln, lo) in LOADS {
            let src = format!(
                "C SB\n{{ [x] = 0; [y] = 0; }}\nP0 (atomic_int* x, atomic_int* y) {{ atomic_store_explicit(x, 1, {sn}); int r0 = atomic_load_explicit(y, {ln}); }}\nP1 (atomic_int* x, atomic_int* y) {{ atomic_store_explicit(y, 1, {sn}); int r0 = atomic_load_explicit(x, {ln}); }}\nexists (0:r0=0 /\\ 1:r0=0)\n"
            );
            let lit = litmus_outcomes(&src, &["0:r0", "1:r0"]);
            let rust = rust_outcomes(move || {
                let (x, y) = (AtomicUsize::new(0), AtomicUsize::new(0));
                thread::scope(|s| {
                    let a = s.spawn(|| {
                        x.store(1, so);
                        y.load(lo)
                    });
                    let b = s.spawn(|| {
                        y.store(1, so);
                        x.load(lo)
                    });
                    vec![a.join().unwrap(), b.join().unwrap()]
                })
            });
            assert_eq!(rust, lit, "SB with {sn}/{ln}");
        }
    }
}

#[test]
fn message_passing() {
    for (sn, so) in STORES {
        for (ln, lo) in LOADS {
            let src = format!(
                "C MP\n{{ [x] = 0; [y] = 0; }}\nP0 (atomic_int* x, atomic_int* y) {{ atomic_store_explicit(x, 1, memory_order_relaxed); atomic_store_explicit(y, 1, {sn}); }}\nP1 (atomic_int* x, atomic_int* y) {{ int r0 = atomic_load_explicit(y, {ln}); int r1 = atomic_load_explicit(x, memory_order_relaxed); }}\nexists (1:r0=1 /\\ 1:r1=0)\n"
            );
            let lit = litmus_outcomes(&src, &["1:r0", "1:r1"]);
            let rust = rust_outcomes(move || {
                let (x, y) = (AtomicUsize::new(0), AtomicUsize::new(0));
                thread::scope(|s| {
                    s.spawn(|| {
                        x.store(1, Ordering::Relaxed);
                        y.store(1, so);
                    });
                    let b = s.spawn(|| {
                        let r0 = y.load(lo);
                        vec![r0, x.load(Ordering::Relaxed)]
                    });
                    b.join().unwrap()
                })
            });
            assert_eq!(rust, lit, "MP with {sn}/{ln}");
        }
    }
}

#[test]
fn iriw() {
    for (sn, so) in STORES {
        for (ln, lo) in LOADS {
            let src = format!(
                "C IRIW\n{{ [x] = 0; [y] = 0; }}\nP0 (atomic_int* x) {{ atomic_store_explicit(x, 1, {sn}); }}\nP1 (atomic_int* y) {{ atomic_store_explicit(y, 1, {sn}); }}\nP2 (atomic_int* x, atomic_int* y) {{ int r0 = atomic_load_explicit(x, {ln}); int r1 = atomic_load_explicit(y, {ln}); }}\nP3 (atomic_int* x, atomic_int* y) {{ int r0 = atomic_load_explicit(y, {ln}); int r1 = atomic_load_explicit(x, {ln}); }}\nexists (2:r0=1 /\\ 2:r1=0 /\\ 3:r0=1 /\\ 3:r1=0)\n"
            );
            let lit = litmus_outcomes(&src, &["2:r0", "2:r1", "3:r0", "3:r1"]);
            let rust = rust_outcomes(move || {
                let (x, y) = (AtomicUsize::new(0), AtomicUsize::new(0));
                thread::scope(|s| {
                    s.spawn(|| x.store(1, so));
                    s.spawn(|| y.store(1, so));
                    let c = s.spawn(|| vec![x.load(lo), y.load(lo)]);
                    let d = s.spawn(|| vec![y.load(lo), x.load(lo)]);
                    let mut v = c.join().unwrap();
                    v.extend(d.join().unwrap());
                    v
                })
            });
            assert_eq!(rust, lit, "IRIW with {sn}/{ln}");
        }
    }
}

#[test]
fn two_plus_two_writes() {
    for (sn, so) in STORES {
        let src = format!(
            "C 2+2W\n{{ [x] = 0; [y] = 0; }}\nP0 (atomic_int* x, atomic_int* y) {{ atomic_store_explicit(x, 1, {sn}); atomic_store_explicit(y, 2, {sn}); }}\nP1 (atomic_int* x, atomic_int* y) {{ atomic_store_explicit(y, 1, {sn}); atomic_store_explicit(x, 2, {sn}); }}\nexists ([x]=1 /\\ [y]=1)\n"
        );
        let lit = litmus_outcomes(&src, &["[x]", "[y]"]);
        let rust = rust_outcomes(move || {
            let (x, y) = (AtomicUsize::new(0), AtomicUsize::new(0));
            thread::scope(|s| {
                s.spawn(|| {
                    x.store(1, so);
                    y.store(2, so);
                });
                s.spawn(|| {
                    y.store(1, so);
                    x.store(2, so);
                });
            });
            vec![x.load(Ordering::Relaxed), y.load(Ordering::Relaxed)]
        });
        assert_eq!(rust, lit, "2+2W with {sn}");
    }
}
