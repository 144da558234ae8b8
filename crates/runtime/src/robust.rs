//! Robustness against SC for programs run on fibers: an execution the
//! model allows that no interleaving of the threads produces is reported
//! (`RunConfig::robustness`). The check itself is `c11check_model::robust`.
//!
//! Failed turns of wait loops do not count: a wait that saw stale values
//! before the one it waited for is the wait that saw it at once. A turn
//! that ends at a spin hint (`hint::spin_loop`, `thread::yield_now`, a C
//! loop's head; the event before it has `spins` set) and is followed by the
//! same accesses at the same places (the loop's next turn; a store's value
//! is part of its access, so a loop that counts in memory never matches),
//! or that repeats the turn before it where the runtime cut an idle wait
//! (`Block` for `Wait`), and that writes nothing atomic, is left out, with
//! the same turns before it (a C loop's first turns come before its first
//! hint). A plain store of a value its turn read (a C temporary at -O0)
//! matches one of another value read the same way. The shortest such turn
//! is taken, so that nothing but the wait's own accesses is left out.
//!
//! A turn the program marks (`hint::failed_wait_turn`, the events since
//! the previous hint) is left out too if it wrote nothing atomic, for
//! loops whose turns differ (a scan over several flags).
//!
//! Reference-count updates (`Arc`) do not count either: the explorer treats
//! their order as unobservable (it explores one order of commuting
//! updates).

use crate::driver::ExecutionState;
use crate::report::{describe_event, Failure, FailureKind};
use c11check_explore::Execution;
use c11check_model::robust::{sc_violation, Robustness};
use c11check_model::{Action, Analysis, BlockReason, EventId, ExecutionGraph, MemOrder};

/// Turns are compared up to this many events.
const MAX_TURN: u32 = 64;

/// For each thread and event: whether it belongs to a failed wait turn.
pub(crate) fn wait_turns(g: &ExecutionGraph, state: &ExecutionState) -> Vec<Vec<bool>> {
    (0..g.num_threads() as u32)
        .map(|t| {
            let evs = g.thread_events(t);
            let n = evs.len() as u32;
            let mut out = vec![false; n as usize];

            // A plain store of a value a read of its turn (from `start`)
            // returned: a C temporary at -O0, which holds what the turn read
            // (the turn that ends the wait stores another value there).
            let copy_of_read = |k: u32, start: u32| match evs[k as usize].action {
                Action::Store {
                    ord: MemOrder::NonAtomic,
                    val,
                    ..
                } => {
                    (start..k).any(|m| evs[m as usize].is_read() && evs[m as usize].read_val == val)
                }
                _ => false,
            };
            // Whether the turns of `len` events from `a` and from `b` are the
            // same accesses at the same places.
            let same_turn = |a: u32, b: u32, len: u32| {
                (0..len).all(|k| {
                    let (i, j) = (a + k, b + k);
                    let (x, y) = (&evs[i as usize].action, &evs[j as usize].action);
                    let same_access =
                        x == y || (x.loc() == y.loc() && copy_of_read(i, a) && copy_of_read(j, b));
                    same_access && state.site(EventId::new(t, i)) == state.site(EventId::new(t, j))
                })
            };
            // A turn that writes nothing atomic: plain stores (a C loop's
            // temporaries at -O0) take no part in robustness.
            let quiet = |from: u32, to: u32| {
                (from..to).all(|i| {
                    let e = &evs[i as usize];
                    !e.is_write() || e.ord() == MemOrder::NonAtomic
                })
            };
            // Marks the failed turn `[c - len, c)` and the same turns
            // before it (a loop's first turns come before its first hint).
            let mut mark = |c: u32, len: u32| {
                let mut s = c - len;
                out[s as usize..c as usize].fill(true);
                while s >= len && same_turn(s - len, s, len) && quiet(s - len, s) {
                    s -= len;
                    out[s as usize..(s + len) as usize].fill(true);
                }
            };
            // Where the turn ending at the event at `i` began: after the
            // last hint, atomic write or thread operation before it (at most
            // `MAX_TURN` events back): a failed turn only reads.
            let turn_start = |i: u32| {
                let from = i.saturating_sub(MAX_TURN);
                (from..i)
                    .rev()
                    .find(|&k| {
                        let e = &evs[k as usize];
                        e.spins
                            || e.is_write() && e.ord() != MemOrder::NonAtomic
                            || e.loc().is_none() && !matches!(e.action, Action::Fence { .. })
                    })
                    .map_or(from, |k| k + 1)
            };
            for (i, e) in evs.iter().enumerate() {
                let i = i as u32;
                // The program said this turn found nothing.
                if e.failed_turn {
                    let s = turn_start(i);
                    if quiet(s, i + 1) {
                        mark(i + 1, i + 1 - s);
                    }
                }
                // A turn ends at `c`, and the turn from `c` repeats it.
                // (A C loop's head hint may come after the first access of
                // the turn it starts: its turn may end before `i` too.)
                if e.spins {
                    for c in [i + 1, i] {
                        let turn = (1..=MAX_TURN.min(c).min(n - c))
                            .find(|&l| same_turn(c - l, c, l) && quiet(c - l, c));
                        if let Some(l) = turn {
                            mark(c, l);
                            break;
                        }
                    }
                }
                // The runtime cut an idle wait here: the turn before the cut
                // repeats the one before it.
                if matches!(
                    e.action,
                    Action::Block {
                        reason: BlockReason::Wait
                    }
                ) {
                    let c = i;
                    let turn = (1..=MAX_TURN.min(c / 2))
                        .find(|&l| same_turn(c - 2 * l, c - l, l) && quiet(c - l, c));
                    if let Some(l) = turn {
                        mark(c, l);
                    }
                }
            }
            out
        })
        .collect()
}

/// The failure of an execution the model allows with some modification
/// order that makes it non-SC, if it is one.
pub(crate) fn violation(ex: &Execution<'_>, state: &ExecutionState) -> Option<Failure> {
    let full;
    let a = if ex.analysis.is_partial() {
        full = Analysis::new(ex.graph, ex.analysis.model).ok()?;
        &full
    } else {
        ex.analysis
    };
    let g = ex.graph;
    let turns = wait_turns(g, state);
    // Reference-count updates (`Arc`) are explored as commuting: their order
    // is not the program's to observe, and not explored either.
    let ignored =
        |id: EventId| turns[id.thread as usize][id.index as usize] || g.event(id).is_refcount();
    let cycle = match sc_violation(a, &ignored, &[]) {
        Robustness::Robust => return None,
        Robustness::Undecided => {
            return Some(Failure {
                kind: FailureKind::NotRobust,
                message: format!(
                    "robustness undecided: an execution has more than {} modification orders \
                     to try; the check cannot say whether it is sequentially consistent",
                    c11check_model::robust::MAX_ORDERS
                ),
                threads: vec![],
                events: vec![],
            })
        }
        Robustness::Violation(c) => c,
    };
    let mut lines = Vec::new();
    for &(id, edge) in &cycle.steps {
        lines.push(format!(
            "    {}\n      -{}->",
            describe_event(g, id, state.site(id)),
            edge.name()
        ));
    }
    lines.push("    (back to the first)".to_string());
    let repairs = candidates(g, state, &cycle.steps);
    CANDIDATES.with(|c| *c.borrow_mut() = repairs);
    let mut threads: Vec<u32> = cycle.steps.iter().map(|(id, _)| id.thread).collect();
    threads.sort_unstable();
    threads.dedup();
    Some(Failure {
        kind: FailureKind::NotRobust,
        message: format!(
            "not robust: {} allows this execution, but no interleaving of the threads produces \
             it (po, rf, mo and fr form a cycle, so it is not sequentially consistent):\n{}\n  \
             Reasoning about the code as if it ran one thread step at a time misses it. Making \
             the accesses on the cycle SeqCst, or putting fence(SeqCst) between each po step's \
             two accesses, rules the cycle out.",
            ex.analysis.model,
            lines.join("\n")
        ),
        threads,
        events: cycle.steps.iter().map(|&(id, _)| id).collect(),
    })
}

/// The candidate strengthenings for a violation's cycle: its accesses'
/// orders raised one or two steps (acquire or release before SeqCst), and
/// a SeqCst fence before each access a po step leads to, weaker first.
fn candidates(
    g: &ExecutionGraph,
    state: &ExecutionState,
    steps: &[(EventId, c11check_model::robust::Edge)],
) -> Vec<(crate::Site, crate::Strengthen)> {
    use crate::Strengthen;
    use MemOrder::*;
    let rank = |o: MemOrder| match o {
        NonAtomic | Relaxed => 0,
        Acquire | Release => 1,
        AcqRel => 2,
        SeqCst => 3,
    };
    let (mut weak, mut fences, mut strong) = (Vec::new(), Vec::new(), Vec::new());
    for (i, &(id, edge)) in steps.iter().enumerate() {
        if id.is_init() {
            continue;
        }
        let Some(site) = state.site(id) else { continue };
        let e = g.event(id);
        let (ord, ladder): (MemOrder, &[MemOrder]) = match e.action {
            Action::Load { ord, .. } => (ord, &[Acquire, SeqCst]),
            Action::Store { ord, .. } => (ord, &[Release, SeqCst]),
            Action::Rmw { ord, .. } => (ord, &[AcqRel, SeqCst]),
            Action::Cas {
                success,
                lock: false,
                take: false,
                ..
            } => (success, &[AcqRel, SeqCst]),
            _ => (SeqCst, &[]),
        };
        for &o in ladder.iter().filter(|&&o| rank(o) > rank(ord)) {
            let c = (site, Strengthen::Order(o));
            let list = if o == SeqCst { &mut strong } else { &mut weak };
            if !list.contains(&c) {
                list.push(c);
            }
        }
        let (next, _) = steps[(i + 1) % steps.len()];
        if edge == c11check_model::robust::Edge::Po && !next.is_init() && next.thread == id.thread {
            if let Some(at) = state.site(next).filter(|&at| at != site) {
                let c = (at, Strengthen::FenceBefore);
                if !fences.contains(&c) {
                    fences.push(c);
                }
            }
        }
    }
    weak.extend(fences);
    weak.extend(strong);
    weak
}

thread_local! {
    /// The candidate repairs of the violation reported last on this thread.
    static CANDIDATES: std::cell::RefCell<Vec<(crate::Site, crate::Strengthen)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Keeps `c` as the candidate repairs of the violation reported last.
pub(crate) fn stash_candidates(c: Vec<(crate::Site, crate::Strengthen)>) {
    CANDIDATES.with(|slot| *slot.borrow_mut() = c);
}

/// Takes the candidate repairs of the violation reported last.
pub(crate) fn take_candidates() -> Vec<(crate::Site, crate::Strengthen)> {
    CANDIDATES.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

/// Re-runs checked with a candidate repair at most this many times.
const MAX_REPAIR_RUNS: usize = 256;
/// ... and for at most this long.
const MAX_REPAIR_TIME: std::time::Duration = std::time::Duration::from_secs(30);
/// The largest set of strengthenings tried.
const MAX_REPAIR_EDITS: usize = 4;

/// A smallest set of strengthenings (each site's order changed once) with
/// which `main` passes the whole check, as report lines. The candidates
/// start as those of the reported cycle; a re-run that shows another cycle
/// adds that cycle's (as a programmer fixing one violation at a time would
/// meet the next), and the sizes are tried again.
pub(crate) fn repair_text(
    rerun: &mut dyn FnMut(Vec<(crate::Site, crate::Strengthen)>) -> Result<(), FailureKind>,
    candidates: &[(crate::Site, crate::Strengthen)],
) -> String {
    let start = std::time::Instant::now();
    let mut pool: Vec<(crate::Site, crate::Strengthen)> = candidates.to_vec();
    let mut runs = 0;
    let mut size = 1;
    while size <= MAX_REPAIR_EDITS.min(pool.len()) {
        let mut learned = Vec::new();
        let mut idx: Vec<usize> = (0..size).collect();
        loop {
            let set: Vec<_> = idx.iter().map(|&i| pool[i]).collect();
            let distinct = set.iter().enumerate().all(|(i, a)| {
                !matches!(a.1, crate::Strengthen::Order(_))
                    || set[..i]
                        .iter()
                        .all(|b| !(b.0 == a.0 && matches!(b.1, crate::Strengthen::Order(_))))
            });
            if distinct {
                if runs >= MAX_REPAIR_RUNS || start.elapsed() > MAX_REPAIR_TIME {
                    return format!(
                        "\n  No repair found within {runs} re-runs with candidate strengthenings."
                    );
                }
                runs += 1;
                match rerun(set.clone()) {
                    Ok(()) => return repair_lines(&set),
                    Err(FailureKind::NotRobust) => {
                        for c in take_candidates() {
                            if !pool.contains(&c) && !learned.contains(&c) {
                                learned.push(c);
                            }
                        }
                    }
                    Err(_) => {}
                }
            }
            if !next_combination(&mut idx, pool.len()) {
                break;
            }
        }
        if learned.is_empty() {
            size += 1;
        } else {
            // The same sizes again, with the new cycles' candidates.
            pool.extend(learned);
            size = 1;
        }
    }
    format!(
        "\n  No set of at most {MAX_REPAIR_EDITS} of the candidate strengthenings removes every \
         violation."
    )
}

/// Advances `idx` (increasing indices below `n`) to the next combination.
fn next_combination(idx: &mut [usize], n: usize) -> bool {
    let size = idx.len();
    let mut k = size;
    while k > 0 {
        k -= 1;
        if idx[k] < n - size + k {
            idx[k] += 1;
            for j in k + 1..size {
                idx[j] = idx[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

/// The report lines of a repair.
fn repair_lines(set: &[(crate::Site, crate::Strengthen)]) -> String {
    let edits: Vec<String> = set
        .iter()
        .map(|(site, how)| match how {
            crate::Strengthen::Order(o) => {
                format!("    make the access at {} {o:?}", site.to_change())
            }
            crate::Strengthen::FenceBefore => {
                format!(
                    "    put fence(SeqCst) right before the access at {}",
                    site.to_change()
                )
            }
        })
        .collect();
    format!(
        "\n  Repair (re-run with it, the whole check passes; no smaller set of these \
         strengthenings does):\n{}",
        edits.join("\n")
    )
}
