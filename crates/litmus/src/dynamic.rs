//! Robustness decided on SC runs with location clocks
//! (`c11check_model::robust::monitor`, the dynamic check RSAN does on one
//! run at a time): every SC interleaving of a test, each state checked for
//! a thread whose next access could be weak. Exhaustively, it is a third
//! decision procedure, checked against the other two on the suite and on
//! random programs; on random interleavings it is the dynamic check.
//!
//! Wait loops: an empty-bodied `while`'s condition that held and wrote
//! nothing is a failed turn (as in [`crate::interp::WaitTurns`]) and counts
//! for nothing SC; a stale value its read could return counts only if it
//! would end the turn otherwise.

use crate::ast::LitmusTest;
use crate::interp::{last_wait_conditions, Reply, ThreadEnd, WaitCondition};
use c11check_model::robust::monitor::{LocationClocks, NextAccess, Witness};
use c11check_model::{Action, BlockReason, Loc, MemOrder, Value};
use std::collections::HashSet;

/// A witness found, with the thread interleaving that reached it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub witness: Witness,
    /// The threads in the order they ran.
    pub schedule: Vec<u32>,
}

/// What a thread's interpretation says after the replies it got.
struct Next {
    step: Result<ThreadEnd, Action>,
    conditions: Vec<WaitCondition>,
    in_condition: Option<u32>,
}

fn next(test: &LitmusTest, t: usize, loop_bound: u32, replies: &[Reply]) -> Next {
    let step = crate::live_run::next(test, t, loop_bound, replies);
    let (conditions, in_condition) = last_wait_conditions();
    Next {
        step,
        conditions,
        in_condition,
    }
}

/// One SC run in progress.
#[derive(Clone)]
struct ScRun {
    replies: Vec<Vec<Reply>>,
    done: Vec<bool>,
    mem: Vec<Value>,
    clocks: LocationClocks,
    /// Per location, the accesses in execution order (thread, index): with
    /// the replies, the SC execution graph so far.
    history: Vec<Vec<(u32, u32)>>,
    schedule: Vec<u32>,
    /// Writes so far per location (which names the latest one), and the
    /// (thread, location, write) of each spurious compare-exchange failure:
    /// as the explorer, a thread fails spuriously at most once on a write
    /// (see `exhaustive::may_fail_spuriously`).
    writes: Vec<u32>,
    spurious: Vec<(u32, Loc, u32)>,
}

struct Ctx<'t> {
    test: &'t LitmusTest,
    loop_bound: u32,
}

fn sc_order(a: &Action) -> bool {
    match *a {
        Action::Load { ord, .. } | Action::Store { ord, .. } | Action::Rmw { ord, .. } => {
            ord == MemOrder::SeqCst
        }
        Action::Cas {
            success, failure, ..
        } => success == MemOrder::SeqCst || failure == MemOrder::SeqCst,
        _ => false,
    }
}

impl Ctx<'_> {
    fn next(&self, run: &ScRun, t: usize) -> Next {
        next(self.test, t, self.loop_bound, &run.replies[t])
    }

    /// Whether reading `val` ends thread `t`'s current turn as a failed one.
    fn keeps_waiting(&self, run: &ScRun, t: usize, val: Value) -> bool {
        let i = run.replies[t].len() as u32;
        let mut replies = run.replies[t].clone();
        replies.push(Reply { val, wrote: false });
        let n = next(self.test, t, self.loop_bound, &replies);
        n.conditions.iter().any(|c| c.end == i + 1 && c.failed)
    }

    /// A witness at thread `t`'s next action, if it is one.
    fn witness(&self, run: &mut ScRun, t: usize, action: &Action) -> Option<Witness> {
        let access = match *action {
            Action::Load { ord, .. } | Action::Store { ord, .. } | Action::Rmw { ord, .. }
                if !ord.is_atomic() =>
            {
                return None
            }
            Action::Load { .. } => NextAccess::Load,
            Action::Store { .. } | Action::Rmw { .. } => NextAccess::Write,
            Action::Cas {
                expected,
                weak,
                lock,
                take,
                ..
            } => {
                if take {
                    // Takes (semaphores) succeed on a range of values.
                    return None;
                }
                let _ = lock;
                NextAccess::Cas { expected, weak }
            }
            _ => return None,
        };
        let loc = action.loc()?;
        let lock = matches!(action, Action::Cas { lock: true, .. });
        // A lock acquisition that fails waits its turn: no stale failure.
        let mut clocks = std::mem::take(&mut run.clocks);
        let keeps = |v: Value| lock || self.keeps_waiting(run, t, v);
        let w = clocks.check(t as u32, loc, access, sc_order(action), &keeps);
        run.clocks = clocks;
        w
    }

    /// The runs that follow from thread `t` performing `action` (two for a
    /// weak compare-exchange that may fail spuriously; none for a lock
    /// acquisition that would wait).
    fn step(&self, run: &ScRun, t: usize, action: Action, starts_turn: bool) -> Vec<ScRun> {
        let tid = t as u32;
        let i = run.replies[t].len() as u32;
        let mut base = run.clone();
        base.schedule.push(tid);
        if starts_turn {
            base.clocks.turn_start(tid);
        }
        let mut outs = Vec::new();
        let wrote = |r: &mut ScRun, loc: Loc| {
            let w = &mut r.writes;
            if w.len() <= loc.0 as usize {
                w.resize(loc.0 as usize + 1, 0);
            }
            w[loc.0 as usize] += 1;
        };
        let touch = |r: &mut ScRun, loc: Loc| {
            let h = &mut r.history;
            if h.len() <= loc.0 as usize {
                h.resize(loc.0 as usize + 1, Vec::new());
            }
            h[loc.0 as usize].push((tid, i));
        };
        match action {
            Action::Load { loc, ord } => {
                let v = base.mem[loc.0 as usize];
                base.clocks.load(tid, loc, ord);
                touch(&mut base, loc);
                base.replies[t].push(Reply {
                    val: v,
                    wrote: false,
                });
                outs.push(base);
            }
            Action::Store { loc, ord, val } => {
                base.mem[loc.0 as usize] = val;
                wrote(&mut base, loc);
                base.clocks.write(tid, loc, ord, val, false, 0);
                touch(&mut base, loc);
                base.replies[t].push(Reply {
                    val: 0,
                    wrote: true,
                });
                outs.push(base);
            }
            Action::Rmw {
                loc,
                ord,
                op,
                operand,
                width,
            } => {
                let old = base.mem[loc.0 as usize];
                let new = width.normalize(op.apply(old, operand));
                base.mem[loc.0 as usize] = new;
                wrote(&mut base, loc);
                base.clocks.write(tid, loc, ord, new, true, 0);
                touch(&mut base, loc);
                base.replies[t].push(Reply {
                    val: old,
                    wrote: true,
                });
                outs.push(base);
            }
            Action::Cas {
                loc,
                success,
                failure,
                weak,
                lock,
                ..
            } => {
                let old = base.mem[loc.0 as usize];
                let ok = action.cas_succeeds(old) == Some(true);
                if lock && !ok {
                    return Vec::new();
                }
                if ok {
                    let mut r = base.clone();
                    let new = action.cas_new(old).expect("a compare-exchange");
                    r.mem[loc.0 as usize] = new;
                    wrote(&mut r, loc);
                    r.clocks.write(tid, loc, success, new, true, 0);
                    touch(&mut r, loc);
                    r.replies[t].push(Reply {
                        val: old,
                        wrote: true,
                    });
                    outs.push(r);
                }
                let write = (
                    tid,
                    loc,
                    base.writes.get(loc.0 as usize).copied().unwrap_or(0),
                );
                let spurious = ok && weak && !base.spurious.contains(&write);
                if spurious {
                    base.spurious.push(write);
                }
                if !ok || spurious {
                    base.clocks.load(tid, loc, failure);
                    touch(&mut base, loc);
                    base.replies[t].push(Reply {
                        val: old,
                        wrote: false,
                    });
                    outs.push(base);
                }
            }
            Action::Fence { ord } => {
                base.clocks.fence(tid, ord);
                base.replies[t].push(Reply::default());
                outs.push(base);
            }
            _ => unreachable!("not a memory action: {action}"),
        }
        // A wait condition that this action completed: failed or kept.
        for r in &mut outs {
            let n = self.next(r, t);
            if let Some(c) = n.conditions.iter().find(|c| c.end == i + 1) {
                if c.failed {
                    r.clocks.turn_failed(tid);
                } else {
                    r.clocks.turn_kept(tid);
                }
            }
        }
        outs
    }
}

/// Whether `test` is robust against SC under C++20, by every SC
/// interleaving with location clocks: `None` if robust, the witness
/// otherwise. Exact (it agrees with the explorer-based check) where the
/// program has no non-atomic write (one has no place in the clocks'
/// modification order) and no racy non-atomic read: race detection reports
/// those.
pub fn robust_by_location_clocks(test: &LitmusTest, loop_bound: u32) -> Option<Found> {
    let ctx = Ctx { test, loop_bound };
    let n = test.threads.len();
    let mut clocks = LocationClocks::new();
    for (i, &v) in test.init.iter().enumerate() {
        clocks.add_loc(Loc(i as u32), v);
    }
    for t in 1..n as u32 {
        clocks.spawn(0, t);
    }
    let start = ScRun {
        replies: vec![Vec::new(); n],
        done: vec![false; n],
        mem: test.init.clone(),
        clocks,
        history: Vec::new(),
        schedule: Vec::new(),
        writes: vec![0; test.init.len()],
        spurious: Vec::new(),
    };
    // An SC graph: each thread's replies, each location's accesses.
    type Graph = (Vec<Vec<Reply>>, Vec<Vec<(u32, u32)>>);
    let mut seen: HashSet<Graph> = HashSet::new();
    let mut stack = vec![start];
    while let Some(mut run) = stack.pop() {
        if !seen.insert((run.replies.clone(), run.history.clone())) {
            continue;
        }
        // Every thread's next action: checked, then each run in turn.
        let mut nexts = Vec::new();
        for t in 0..n {
            if run.done[t] {
                continue;
            }
            let nx = ctx.next(&run, t);
            match nx.step {
                Ok(_)
                | Err(Action::Finish)
                | Err(Action::Block {
                    reason: BlockReason::Bound | BlockReason::Assume,
                }) => run.done[t] = true,
                Err(Action::Block { .. }) => run.done[t] = true,
                Err(a) => {
                    if let Some(w) = ctx.witness(&mut run, t, &a) {
                        let mut schedule = run.schedule.clone();
                        schedule.push(t as u32);
                        return Some(Found {
                            witness: w,
                            schedule,
                        });
                    }
                    let starts = nx.in_condition == Some(run.replies[t].len() as u32);
                    nexts.push((t, a, starts));
                }
            }
        }
        for (t, a, starts) in nexts {
            stack.extend(ctx.step(&run, t, a, starts));
        }
    }
    None
}
