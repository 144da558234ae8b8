//! Random executions of a litmus test on the live memory
//! (`c11check_model::live_memory`, C11Tester's operational model): each thread is
//! interpreted step by step and every operation is answered at once.

use crate::ast::*;
use crate::interp::{run_thread, Reply, ThreadEnd};
use crate::states::{observed_locs, state_keys, state_of};
use c11check_explore::random::{iteration_seed, SplitMix64};
use c11check_model::live_memory::LiveMemory;
use c11check_model::{Action, BlockReason, Loc, Model, Value};
use std::collections::BTreeMap;

/// What the live iterations of a test found.
#[derive(Default)]
pub struct LiveOutcome {
    pub states: BTreeMap<Vec<Value>, u64>,
    pub positive: u64,
    pub negative: u64,
    pub race: bool,
    pub executions: u64,
    pub blocked: u64,
}

/// The next operation of thread `t` after the replies it got so far, or its end.
pub(crate) fn next(
    test: &LitmusTest,
    t: usize,
    loop_bound: u32,
    replies: &[Reply],
) -> Result<ThreadEnd, Action> {
    let mut i = 0;
    let mut pending = None;
    let r = run_thread(test, t, loop_bound, &mut |a| match replies.get(i) {
        Some(r) => {
            i += 1;
            Some(*r)
        }
        None => {
            pending = Some(a);
            None
        }
    });
    r.map_err(|_| pending.expect("a pending operation"))
}

impl LiveOutcome {
    /// Adds what `other`'s iterations found.
    pub fn merge(&mut self, other: LiveOutcome) {
        for (state, n) in other.states {
            *self.states.entry(state).or_insert(0) += n;
        }
        self.positive += other.positive;
        self.negative += other.negative;
        self.race |= other.race;
        self.executions += other.executions;
        self.blocked += other.blocked;
    }
}

/// Runs the live iterations `iterations` of `test` from `seed` (iteration
/// `i` depends on `seed` and `i` only).
pub fn run_live(
    test: &LitmusTest,
    model: Model,
    loop_bound: u32,
    iterations: std::ops::Range<u64>,
    seed: u64,
) -> LiveOutcome {
    let keys = state_keys(test);
    let observed = observed_locs(test, &keys);
    let n = test.threads.len();
    let mut out = LiveOutcome {
        states: BTreeMap::new(),
        positive: 0,
        negative: 0,
        race: false,
        executions: 0,
        blocked: 0,
    };
    for i in iterations {
        let mut rng = SplitMix64::new(iteration_seed(seed, i));
        let mut mem = LiveMemory::for_model(model);
        for &v in &test.init {
            mem.add_loc(v);
        }
        let tids: Vec<u32> = (0..n)
            .map(|t| if t == 0 { 0 } else { mem.add_thread(None) })
            .collect();
        let mut replies: Vec<Vec<Reply>> = vec![Vec::new(); n];
        let mut ends: Vec<Option<ThreadEnd>> = (0..n).map(|_| None).collect();
        // A lock wait: the lock and how many stores it had.
        let mut waits: Vec<Option<(Loc, u64)>> = vec![None; n];
        let mut last_cas: Vec<Option<(Loc, Value)>> = vec![None; n];
        let mut stores: Vec<(u64, Value)> = vec![(0, 0); test.init.len()];
        let mut blocked = false;
        loop {
            let ready: Vec<usize> = (0..n)
                .filter(|&t| ends[t].is_none())
                .filter(|&t| waits[t].is_none_or(|(l, k)| stores[l.0 as usize].0 > k))
                .collect();
            if ready.is_empty() {
                // Everything ended, or lock waits nothing will release.
                blocked |= ends.iter().any(Option::is_none);
                break;
            }
            let t = ready[rng.below(ready.len())];
            waits[t] = None;
            let tid = tids[t];
            let action = match next(test, t, loop_bound, &replies[t]) {
                Ok(end) => {
                    blocked |= end.blocked;
                    ends[t] = Some(end);
                    mem.finish(tid);
                    continue;
                }
                Err(a) => a,
            };
            let reply = match action {
                Action::Load { .. }
                | Action::Store { .. }
                | Action::Rmw { .. }
                | Action::Cas { .. }
                | Action::Fence { .. } => {
                    let spurious = rng.below(4) == 0;
                    let p = mem
                        .perform(tid, action, spurious, &mut |k| rng.below(k))
                        .expect("a memory action");
                    out.race |= p.race.is_some();
                    if let (Some(v), Some(loc)) = (p.written, action.loc()) {
                        stores[loc.0 as usize] = (stores[loc.0 as usize].0 + 1, v);
                    }
                    if let Action::Cas { loc, .. } = action {
                        last_cas[t] = Some((loc, p.val));
                    }
                    Reply {
                        val: p.val,
                        wrote: p.written.is_some(),
                    }
                }
                Action::Block {
                    reason: BlockReason::LockHeld,
                } => {
                    // Take the failed acquisition back and retry it once the
                    // lock is written again (at once if it read an old value).
                    replies[t].pop();
                    if let Some((loc, read)) = last_cas[t] {
                        let (k, last) = stores[loc.0 as usize];
                        let stale = k > 0 && last != read;
                        waits[t] = Some((loc, if stale { k - 1 } else { k }));
                    }
                    continue;
                }
                Action::Block { .. } => {
                    blocked = true;
                    break;
                }
                other => panic!("c11check: a litmus thread asked for {other}"),
            };
            replies[t].push(reply);
        }
        if blocked {
            out.blocked += 1;
            continue;
        }
        out.executions += 1;
        let locals = |t: u32, r: &str| -> Value {
            let th = &test.threads[t as usize];
            th.locals
                .iter()
                .position(|l| l == r)
                .and_then(|i| {
                    ends[t as usize]
                        .as_ref()
                        .and_then(|e| e.locals.get(i).copied())
                })
                .unwrap_or(0)
        };
        mem.drain_all(&mut |k| rng.below(k));
        let finals: Vec<(Loc, Value)> = observed
            .iter()
            .map(|&l| (l, mem.final_value(l, &mut |k| rng.below(k))))
            .collect();
        let final_loc = |l: Loc| finals.iter().find(|(x, _)| *x == l).map_or(0, |(_, v)| *v);
        let vals = state_of(test, &keys, &locals, &final_loc);
        let holds = test.condition.prop.eval(&|k: &Key| {
            let i = keys.iter().position(|x| x == k).unwrap();
            vals[i]
        });
        if holds {
            out.positive += 1;
        } else {
            out.negative += 1;
        }
        *out.states.entry(vals).or_insert(0) += 1;
    }
    out
}
