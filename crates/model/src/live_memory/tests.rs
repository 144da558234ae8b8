//! The live memory on its own: coherence and bounded memory over long runs,
//! the hardware machines' orders.

use super::*;

fn rng(seed: u64) -> impl FnMut(usize) -> usize {
    let mut r = seed;
    move |n| {
        r = r
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((r >> 33) as usize) % n
    }
}

/// A writer stores 1, 2, 3, ... relaxed while a reader reads: the reader
/// never goes back (read-read coherence) and memory stays bounded.
#[test]
fn long_writer_reader_is_coherent_and_bounded() {
    let mut m = LiveMemory::new(false);
    let last_read = writer_and_reader(&mut m, 20_000, false);
    let s = m.stats();
    assert!(s.peak_stores < 20_000, "{s:?}");
    assert!(last_read > 0);
}

/// Thread 0 stores 1..=`stores` to a new location while a new thread
/// loads it, each step to one of them at random; the reader must never
/// read backwards. With `idle`, a third thread that never touches the
/// location runs throughout. Returns the reader's last value.
fn writer_and_reader(m: &mut LiveMemory, stores: Value, idle: bool) -> Value {
    let x = m.add_loc(0);
    let (w, r) = (0, m.add_thread(Some(0)));
    if idle {
        m.add_thread(Some(0));
    }
    let mut choose = rng(5);
    let mut sched = rng(6);
    let (mut next, mut last_read) = (1, 0);
    while next <= stores {
        if sched(2) == 0 {
            m.store(w, x, MemOrder::Relaxed, next);
            next += 1;
        } else {
            let v = m.load(r, x, MemOrder::Relaxed, &mut choose);
            assert!(v >= last_read, "read {v} after {last_read}");
            last_read = v;
        }
    }
    last_read
}

/// A writer, a reader, and a thread that never touches the location
/// (so it could still read any store): conservative pruning must keep
/// every store for it; the aggressive window keeps a few, and the
/// reader still never reads backwards (its last read may be pruned).
#[test]
fn pruning_window_bounds_memory_and_keeps_coherence() {
    for window in [None, Some(1), Some(3)] {
        let mut m = LiveMemory::new(false);
        m.set_prune_interval(if window.is_some() { 1 } else { 64 });
        m.set_prune_window(window);
        writer_and_reader(&mut m, 5_000, true);
        let peak = m.stats().peak_stores;
        match window {
            None => assert!(peak > 4_000, "{peak}"),
            Some(_) => assert!(peak < 50, "window {window:?}: {peak}"),
        }
    }
}

/// SeqCst operations on different locations order what may be read but
/// create no happens-before: a plain write before one and a plain read
/// after another still race (the waiter of a barrier whose last
/// increment is relaxed).
#[test]
fn seq_cst_order_alone_does_not_prevent_a_race() {
    let mut m = LiveMemory::new(false);
    let (x, a, b) = (m.add_loc(0), m.add_loc(0), m.add_loc(0));
    let t1 = m.add_thread(Some(0));
    let t2 = m.add_thread(Some(0));
    let mut choose = rng(1);
    assert_eq!(m.race_check(t1, x, true, false), None);
    m.store(t1, a, MemOrder::SeqCst, 1);
    m.load(t2, b, MemOrder::SeqCst, &mut choose);
    assert_eq!(m.race_check(t2, x, false, false), Some(t1));
    // A release/acquire pair does order them.
    let y = m.add_loc(0);
    let f = m.add_loc(0);
    assert_eq!(m.race_check(t1, y, true, false), None);
    m.store(t1, f, MemOrder::Release, 1);
    let mut always_newest = |n: usize| n - 1;
    while m.load(t2, f, MemOrder::Acquire, &mut always_newest) != 1 {}
    assert_eq!(m.race_check(t2, y, false, false), None);
}

/// Message passing through a release/acquire flag, 100,000 times: a
/// reader that sees flag `i` sees data of at least `i`, pruning or not.
#[test]
fn long_message_passing_keeps_synchronisation() {
    for interval in [1, 4096] {
        let mut m = LiveMemory::new(false);
        m.set_prune_interval(interval);
        let (data, flag) = (m.add_loc(0), m.add_loc(0));
        let (w, r) = (0, m.add_thread(Some(0)));
        let mut choose = rng(3);
        let mut sched = rng(4);
        let mut i = 1;
        let mut seen = 0;
        while i <= 20_000 {
            if sched(2) == 0 {
                m.store(w, data, MemOrder::Relaxed, i);
                m.store(w, flag, MemOrder::Release, i);
                i += 1;
            } else {
                let f = m.load(r, flag, MemOrder::Acquire, &mut choose);
                let d = m.load(r, data, MemOrder::Relaxed, &mut choose);
                assert!(d >= f, "flag {f} but data {d}");
                seen = seen.max(f);
            }
        }
        assert!(seen > 0);
        assert!(m.stats().peak_stores < 20_000, "{:?}", m.stats());
    }
}
/// Store buffering under `tso`, pruning after every store: both loads
/// can miss the other thread's store (buffered), but not with an SC
/// fence between store and load, and a thread always reads its own
/// buffered store.
#[test]
fn tso_buffers_stores_until_a_fence() {
    for fenced in [false, true] {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..400 {
            let mut choose = rng(seed);
            let mut m = LiveMemory::new(false);
            m.set_store_buffers();
            m.set_prune_interval(1);
            let (x, y) = (m.add_loc(0), m.add_loc(0));
            let t1 = m.add_thread(None);
            let store = |t: u32| Action::Store {
                loc: if t == 0 { x } else { y },
                ord: MemOrder::Relaxed,
                val: 1,
            };
            let load = |t: u32, own: bool| Action::Load {
                loc: if (t == 0) == own { x } else { y },
                ord: MemOrder::Relaxed,
            };
            let fence = Action::Fence {
                ord: MemOrder::SeqCst,
            };
            let mut r = [0, 0];
            let mut steps = [0usize; 2];
            let program = |t: u32| -> Vec<Action> {
                let mut p = vec![store(t), load(t, true)];
                if fenced {
                    p.push(fence);
                }
                p.push(load(t, false));
                p
            };
            while steps[0] < program(0).len() || steps[1] < program(t1).len() {
                let t = match (steps[0] < program(0).len(), steps[1] < program(1).len()) {
                    (true, true) => choose(2) as u32,
                    (true, false) => 0,
                    _ => 1,
                };
                let action = program(t)[steps[t as usize]];
                let p = m.perform(t, action, false, &mut choose).unwrap();
                if steps[t as usize] == 1 {
                    assert_eq!(p.val, 1, "a thread reads its own store");
                }
                if matches!(action, Action::Load { .. }) {
                    r[t as usize] = p.val;
                }
                steps[t as usize] += 1;
            }
            seen.insert(r);
        }
        let weak = seen.contains(&[0, 0]);
        assert_eq!(weak, !fenced, "fenced: {fenced}, outcomes {seen:?}");
        assert!(seen.len() >= 3 - fenced as usize, "{seen:?}");
    }
}
/// ARMv8's view machine, pruning after every store: relaxed message
/// passing shows a stale read, also with an acquire flag load (the
/// stores become visible out of order), not with a release flag store
/// too; IRIW with acquire loads does not (the readers agree on the order
/// of the writes).
#[test]
fn arm_views_keep_acquire_reads_in_order() {
    let rlx = MemOrder::Relaxed;
    let acq = MemOrder::Acquire;
    // Each thread's program, over locations x (0) and y (1): (store,
    // location, order), run in a random interleaving; what the loads
    // read.
    type Op = (bool, usize, MemOrder);
    let run = |programs: &[Vec<Op>], seed: u64| -> Vec<Value> {
        let mut choose = rng(seed);
        let mut m = LiveMemory::for_model(crate::Model::Mca);
        m.set_prune_interval(1);
        let locs = [m.add_loc(0), m.add_loc(0)];
        let tids: Vec<u32> = (0..programs.len())
            .map(|t| if t == 0 { 0 } else { m.add_thread(None) })
            .collect();
        let mut next = vec![0usize; programs.len()];
        let mut read = Vec::new();
        while let Some(t) = {
            let ready: Vec<usize> = (0..programs.len())
                .filter(|&t| next[t] < programs[t].len())
                .collect();
            (!ready.is_empty()).then(|| ready[choose(ready.len())])
        } {
            let (store, l, ord) = programs[t][next[t]];
            let action = match store {
                true => Action::Store {
                    loc: locs[l],
                    ord,
                    val: 1,
                },
                false => Action::Load { loc: locs[l], ord },
            };
            let p = m.perform(tids[t], action, false, &mut choose).unwrap();
            if !store {
                read.push((t, next[t], p.val));
            }
            next[t] += 1;
        }
        read.sort();
        read.into_iter().map(|x| x.2).collect()
    };
    let mp = |store: MemOrder, load: MemOrder| {
        vec![
            vec![(true, 0, rlx), (true, 1, store)],
            vec![(false, 1, load), (false, 0, rlx)],
        ]
    };
    let seen = |programs: &[Vec<Op>]| -> std::collections::BTreeSet<Vec<Value>> {
        (0..2000).map(|seed| run(programs, seed)).collect()
    };
    assert!(seen(&mp(rlx, rlx)).contains(&vec![1, 0]));
    // The data store may become visible after the flag's.
    assert!(seen(&mp(rlx, acq)).contains(&vec![1, 0]));
    assert!(!seen(&mp(MemOrder::Release, acq)).contains(&vec![1, 0]));
    let iriw = vec![
        vec![(true, 0, rlx)],
        vec![(true, 1, rlx)],
        vec![(false, 0, acq), (false, 1, acq)],
        vec![(false, 1, acq), (false, 0, acq)],
    ];
    let outcomes = seen(&iriw);
    assert!(!outcomes.contains(&vec![1, 0, 1, 0]), "{outcomes:?}");
    assert!(outcomes.len() >= 8, "{outcomes:?}");
}

/// Plain data stays out of the mo-graph (no store node) while no atomic
/// access and no race touches it; a plain read then reads the newest plain
/// store, an atomic access later takes that store for the location's
/// initial value, and a race hands the location to the mo-graph.
#[test]
fn plain_data_skips_the_mo_graph_until_an_atomic_access_or_a_race() {
    let mut m = LiveMemory::new(false);
    m.set_plain_fast(true);
    let (x, flag, y) = (m.add_loc(0), m.add_loc(0), m.add_loc(0));
    let reader = m.add_thread(Some(0));
    let mut newest = |n: usize| n - 1;
    let plain_store = |loc, val| Action::Store {
        loc,
        ord: MemOrder::NonAtomic,
        val,
    };
    let plain_load = |loc| Action::Load {
        loc,
        ord: MemOrder::NonAtomic,
    };
    for v in [1, 2] {
        let p = m.perform(0, plain_store(x, v), false, &mut newest).unwrap();
        assert_eq!((p.written, p.race), (Some(v), None));
    }
    let second = m.last_seq(0);
    assert_eq!(m.stats().live_stores, 0, "no store node yet");
    m.store(0, flag, MemOrder::Release, 1);
    assert_eq!(m.load(reader, flag, MemOrder::Acquire, &mut newest), 1);
    let p = m
        .perform(reader, plain_load(x), false, &mut newest)
        .unwrap();
    assert_eq!(p.val, 2);
    assert_eq!(p.race, None);
    assert_eq!(
        p.read_from,
        Some(ReadFrom::Store {
            thread: 0,
            seq: second
        })
    );
    assert_eq!(m.load(reader, x, MemOrder::Relaxed, &mut newest), 2);
    // Unsynchronised: a race, and y's later stores are store nodes.
    m.perform(0, plain_store(y, 5), false, &mut newest).unwrap();
    let p = m
        .perform(reader, plain_load(y), false, &mut newest)
        .unwrap();
    assert_eq!((p.val, p.race), (5, Some(0)));
    let before = m.stats().live_stores;
    m.perform(0, plain_store(y, 6), false, &mut newest).unwrap();
    assert_eq!(m.stats().live_stores, before + 1);
}
