//! Condition variables against their definition, on random programs.
//!
//! The definition, enumerated by brute force over every interleaving of
//! the threads' steps: a `notify_one` wakes one of the threads blocked on
//! the condition variable at that moment (any one), a `notify_all` all of
//! them, any blocked waiter may also wake spuriously, and a timed one may
//! time out. A wait releases the mutex and blocks in one step; a woken
//! thread takes the mutex again before it goes on. An execution deadlocks
//! when some thread has not finished and nothing but a spurious wake-up
//! could move any thread.
//!
//! The programs use a mutex-protected pair of variables and one condition
//! variable: set a variable (notifying inside or outside the critical
//! section, or not), wait in a loop until a variable has a value, wait
//! once (timed or not) and record what the thread then sees, record a
//! variable, notify. Each thread's records and the final variables are an
//! outcome. c11check (the Rust API's `Condvar`, whose protocol the C
//! runtime shares) must report a deadlock exactly when the definition has
//! one, and, exploring past deadlocks (`report_deadlocks(false)`), find
//! exactly the definition's outcomes.

use c11check::model::{Builder, FailureKind};
use c11check::sync::{Condvar, Mutex, MutexGuard};
use c11check::thread;
use proptest::prelude::*;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Notify {
    One,
    All,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    /// Lock; `vars[v] = k`; notify inside or after the critical section.
    Set {
        v: usize,
        k: u8,
        notify: Option<Notify>,
        inside: bool,
    },
    /// Lock; `while vars[v] != k { wait }`; unlock.
    Await { v: usize, k: u8 },
    /// Lock; wait once (timed: record whether it timed out); record
    /// `vars[v]`; unlock.
    WaitOnce { v: usize, timed: bool },
    /// Lock; record `vars[v]`; unlock.
    Observe { v: usize },
    /// Notify without the mutex.
    Notify(Notify),
}

type Program = Vec<Vec<Op>>;
/// Each thread's records, and the final variables.
type Outcome = (Vec<Vec<u8>>, [u8; 2]);

/// An op. Variables only ever go from 0 to 1 (a flag each), so a wait
/// for one ends once it is set and a notification follows: most programs
/// do not deadlock, and where they do, it is a notification that woke
/// the wrong thread or came too early.
fn op() -> impl Strategy<Value = Op> {
    let notify = prop_oneof![Just(Notify::One), Just(Notify::All)];
    prop_oneof![
        4 => (0..2usize, proptest::option::weighted(0.8, notify.clone()), any::<bool>())
            .prop_map(|(v, notify, inside)| Op::Set { v, k: 1, notify, inside }),
        4 => (0..2usize).prop_map(|v| Op::Await { v, k: 1 }),
        1 => (0..2usize, any::<bool>()).prop_map(|(v, timed)| Op::WaitOnce { v, timed }),
        1 => (0..2usize).prop_map(|v| Op::Observe { v }),
        1 => notify.prop_map(Op::Notify),
    ]
}

/// Two or three threads of one to three ops, five at most in all (the
/// executions of mutex-heavy programs grow fast with their critical
/// sections).
fn program() -> impl Strategy<Value = Program> {
    proptest::collection::vec(proptest::collection::vec(op(), 1..4), 2..4)
        .prop_filter("five ops at most", |p| {
            p.iter().map(Vec::len).sum::<usize>() <= 5
        })
}

// ---- the definition, by brute force --------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Instr {
    Lock,
    Unlock,
    Set(usize, u8),
    Record(usize),
    /// Go to the target when `vars[v] == k`.
    JumpIfEq(usize, u8, usize),
    Jump(usize),
    Notify(Notify),
    Wait {
        timed: bool,
    },
}

fn compile(ops: &[Op]) -> Vec<Instr> {
    let mut code = Vec::new();
    for op in ops {
        match *op {
            Op::Set {
                v,
                k,
                notify,
                inside,
            } => {
                code.push(Instr::Lock);
                code.push(Instr::Set(v, k));
                if let (Some(n), true) = (notify, inside) {
                    code.push(Instr::Notify(n));
                }
                code.push(Instr::Unlock);
                if let (Some(n), false) = (notify, inside) {
                    code.push(Instr::Notify(n));
                }
            }
            Op::Await { v, k } => {
                code.push(Instr::Lock);
                let top = code.len();
                code.push(Instr::JumpIfEq(v, k, top + 3));
                code.push(Instr::Wait { timed: false });
                code.push(Instr::Jump(top));
                code.push(Instr::Unlock);
            }
            Op::WaitOnce { v, timed } => {
                code.extend([
                    Instr::Lock,
                    Instr::Wait { timed },
                    Instr::Record(v),
                    Instr::Unlock,
                ]);
            }
            Op::Observe { v } => code.extend([Instr::Lock, Instr::Record(v), Instr::Unlock]),
            Op::Notify(n) => code.push(Instr::Notify(n)),
        }
    }
    code
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Thread {
    Running(usize),
    /// Blocked on the condition variable; goes on at the pc.
    Blocked {
        pc: usize,
        timed: bool,
    },
    /// Woken; takes the mutex, records whether it timed out (a timed
    /// wait), and goes on at the pc.
    Woken {
        pc: usize,
        timed_out: Option<bool>,
    },
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    threads: Vec<Thread>,
    mutex: Option<usize>,
    vars: [u8; 2],
    records: Vec<Vec<u8>>,
    /// Spurious wake-ups each thread may still take (a bound that keeps
    /// the enumeration finite; above what these programs need).
    spurious_left: Vec<u8>,
}

/// What the definition allows: the outcomes, and whether some execution
/// deadlocks.
fn by_definition(program: &Program) -> (BTreeSet<Outcome>, bool) {
    let code: Vec<Vec<Instr>> = program.iter().map(|ops| compile(ops)).collect();
    let start = State {
        threads: vec![Thread::Running(0); code.len()],
        mutex: None,
        vars: [0; 2],
        records: vec![Vec::new(); code.len()],
        spurious_left: vec![3; code.len()],
    };
    let mut seen = HashSet::new();
    let mut stack = vec![start];
    let (mut outcomes, mut deadlock) = (BTreeSet::new(), false);
    while let Some(s) = stack.pop() {
        if !seen.insert(s.clone()) {
            continue;
        }
        if s.threads.iter().all(|t| *t == Thread::Done) {
            outcomes.insert((s.records.clone(), s.vars));
            continue;
        }
        let (strong, weak) = successors(&s, &code);
        if strong.is_empty() {
            deadlock = true;
        }
        stack.extend(strong);
        stack.extend(weak);
    }
    (outcomes, deadlock)
}

/// The states one step of one thread leads to: the steps that are not
/// spurious wake-ups, and those that are.
fn successors(s: &State, code: &[Vec<Instr>]) -> (Vec<State>, Vec<State>) {
    let (mut strong, mut weak) = (Vec::new(), Vec::new());
    for (i, t) in s.threads.iter().enumerate() {
        match *t {
            Thread::Done => {}
            Thread::Running(pc) if pc == code[i].len() => {
                let mut n = s.clone();
                n.threads[i] = Thread::Done;
                strong.push(n);
            }
            Thread::Running(pc) => {
                let mut n = s.clone();
                n.threads[i] = Thread::Running(pc + 1);
                match code[i][pc] {
                    Instr::Lock => {
                        if s.mutex.is_some() {
                            continue;
                        }
                        n.mutex = Some(i);
                    }
                    Instr::Unlock => n.mutex = None,
                    Instr::Set(v, k) => n.vars[v] = k,
                    Instr::Record(v) => n.records[i].push(s.vars[v]),
                    Instr::JumpIfEq(v, k, to) => {
                        if s.vars[v] == k {
                            n.threads[i] = Thread::Running(to);
                        }
                    }
                    Instr::Jump(to) => n.threads[i] = Thread::Running(to),
                    Instr::Wait { timed } => {
                        n.mutex = None;
                        n.threads[i] = Thread::Blocked { pc: pc + 1, timed };
                    }
                    Instr::Notify(how) => {
                        let blocked: Vec<usize> = (0..s.threads.len())
                            .filter(|&j| matches!(s.threads[j], Thread::Blocked { .. }))
                            .collect();
                        let wake = |n: &mut State, j: usize| {
                            if let Thread::Blocked { pc, timed } = n.threads[j] {
                                n.threads[j] = Thread::Woken {
                                    pc,
                                    timed_out: timed.then_some(false),
                                };
                            }
                        };
                        match how {
                            Notify::All => blocked.iter().for_each(|&j| wake(&mut n, j)),
                            Notify::One if blocked.is_empty() => {}
                            Notify::One => {
                                for &j in &blocked {
                                    let mut m = n.clone();
                                    wake(&mut m, j);
                                    strong.push(m);
                                }
                                continue;
                            }
                        }
                    }
                }
                strong.push(n);
            }
            Thread::Blocked { pc, timed } => {
                if timed {
                    let mut n = s.clone();
                    n.threads[i] = Thread::Woken {
                        pc,
                        timed_out: Some(true),
                    };
                    strong.push(n);
                }
                if s.spurious_left[i] > 0 {
                    let mut n = s.clone();
                    n.spurious_left[i] -= 1;
                    n.threads[i] = Thread::Woken {
                        pc,
                        timed_out: timed.then_some(false),
                    };
                    weak.push(n);
                }
            }
            Thread::Woken { pc, timed_out } => {
                if s.mutex.is_none() {
                    let mut n = s.clone();
                    n.mutex = Some(i);
                    if let Some(t) = timed_out {
                        n.records[i].push(t as u8);
                    }
                    n.threads[i] = Thread::Running(pc);
                    strong.push(n);
                }
            }
        }
    }
    (strong, weak)
}

// ---- the same programs under c11check ----------------------------------

type Shared = (Mutex<[u8; 2]>, Condvar);

/// Waits at a call site of the op's own (waits of different ops are
/// different waits in the program, as they would be in real code).
fn wait_at<'a>(cv: &Condvar, g: MutexGuard<'a, [u8; 2]>, op: usize) -> MutexGuard<'a, [u8; 2]> {
    match op {
        0 => cv.wait(g).unwrap(),
        1 => cv.wait(g).unwrap(),
        _ => cv.wait(g).unwrap(),
    }
}

fn wait_timeout_at<'a>(
    cv: &Condvar,
    g: MutexGuard<'a, [u8; 2]>,
    op: usize,
) -> (MutexGuard<'a, [u8; 2]>, bool) {
    let d = std::time::Duration::from_millis(1);
    let (g, r) = match op {
        0 => cv.wait_timeout(g, d).unwrap(),
        1 => cv.wait_timeout(g, d).unwrap(),
        _ => cv.wait_timeout(g, d).unwrap(),
    };
    (g, r.timed_out())
}

fn notify(cv: &Condvar, how: Option<Notify>) {
    match how {
        Some(Notify::One) => cv.notify_one(),
        Some(Notify::All) => cv.notify_all(),
        None => {}
    }
}

fn run_thread(s: &Shared, ops: &[Op]) -> Vec<u8> {
    let (m, cv) = s;
    let mut records = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Set {
                v,
                k,
                notify: how,
                inside,
            } => {
                let mut g = m.lock().unwrap();
                g[v] = k;
                if inside {
                    notify(cv, how);
                }
                drop(g);
                if !inside {
                    notify(cv, how);
                }
            }
            Op::Await { v, k } => {
                let mut g = m.lock().unwrap();
                while g[v] != k {
                    g = wait_at(cv, g, i);
                }
            }
            Op::WaitOnce { v, timed } => {
                let g = m.lock().unwrap();
                let g = if timed {
                    let (g, timed_out) = wait_timeout_at(cv, g, i);
                    records.push(timed_out as u8);
                    g
                } else {
                    wait_at(cv, g, i)
                };
                records.push(g[v]);
            }
            Op::Observe { v } => records.push(m.lock().unwrap()[v]),
            Op::Notify(how) => notify(cv, Some(how)),
        }
    }
    records
}

/// What c11check finds with deadlocks reported or not: the outcomes, and
/// whether it reported a deadlock.
fn by_c11check(program: &Program, report_deadlocks: bool) -> (BTreeSet<Outcome>, bool) {
    let seen = Arc::new(std::sync::Mutex::new(BTreeSet::new()));
    let (p, s2) = (program.clone(), seen.clone());
    let b = Builder::new().report_deadlocks(report_deadlocks);
    let r = b.explore(move || {
        let shared = Arc::new((Mutex::new([0u8; 2]), Condvar::new()));
        // Thread 0's ops run on the model's main thread, after it spawned
        // the others.
        let handles: Vec<_> = p[1..]
            .iter()
            .map(|ops| {
                let (s, ops) = (shared.clone(), ops.clone());
                thread::spawn(move || run_thread(&s, &ops))
            })
            .collect();
        let mut records = vec![run_thread(&shared, &p[0])];
        records.extend(handles.into_iter().map(|h| h.join().unwrap()));
        let vars = *shared.0.lock().unwrap();
        s2.lock().unwrap().insert((records, vars));
    });
    let deadlock = match r {
        Ok(_) => false,
        Err(rep) if rep.failure.kind == FailureKind::Deadlock => true,
        Err(rep) => panic!("{rep}"),
    };
    let outcomes = std::mem::take(&mut *seen.lock().unwrap());
    (outcomes, deadlock)
}

fn agree(program: &Program) -> Result<(), TestCaseError> {
    let (expected, expected_deadlock) = by_definition(program);
    let (_, deadlock) = by_c11check(program, true);
    prop_assert_eq!(
        deadlock,
        expected_deadlock,
        "deadlock reported: {}, by the definition: {}",
        deadlock,
        expected_deadlock
    );
    let (found, _) = by_c11check(program, false);
    prop_assert_eq!(found, expected);
    Ok(())
}

/// The fixed seed, or `C11CHECK_PROPTEST_SEED` to search elsewhere
/// (`PROPTEST_CASES` sets how many programs).
fn seed() -> u64 {
    std::env::var("C11CHECK_PROPTEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xC0_4D7A)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(300),
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed()),
        ..ProptestConfig::default()
    })]
    #[test]
    fn condition_variables_follow_their_definition(program in program()) {
        agree(&program)?;
    }
}

/// The first hour's hand-over (issue 51) as a program of this test: the
/// definition has no deadlock, and neither has c11check.
#[test]
fn the_hand_over_both_ways_follows_the_definition() {
    let program: Program = vec![
        vec![
            Op::Set {
                v: 0,
                k: 1,
                notify: Some(Notify::One),
                inside: true,
            },
            Op::Await { v: 1, k: 1 },
        ],
        vec![
            Op::Await { v: 0, k: 1 },
            Op::Set {
                v: 1,
                k: 1,
                notify: Some(Notify::One),
                inside: true,
            },
        ],
    ];
    assert!(!by_definition(&program).1);
    agree(&program).unwrap();
}

/// Two threads wait for one flag; one `notify_one`: one of them is never
/// woken (a deadlock by the definition and for c11check); `notify_all`
/// wakes both.
#[test]
fn one_notification_wakes_one_of_two_waiters() {
    for (how, deadlock) in [(Notify::One, true), (Notify::All, false)] {
        let program: Program = vec![
            vec![Op::Set {
                v: 0,
                k: 1,
                notify: Some(how),
                inside: true,
            }],
            vec![Op::Await { v: 0, k: 1 }],
            vec![Op::Await { v: 0, k: 1 }],
        ];
        assert_eq!(by_definition(&program).1, deadlock);
        agree(&program).unwrap();
    }
}
