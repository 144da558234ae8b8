//! One step of a program, as both explorers take it: which threads can run
//! and how an execution ends when none can, the thread a spawn starts,
//! which compare-exchanges may fail spuriously, and the final writes an
//! outcome may observe.

use crate::program::{Driver, Ending};
use c11check_model::{Action, Analysis, EventId, ExecutionGraph, Loc};

/// Every combination of possible mo-last writes at the observed locations.
pub(crate) fn final_combinations(a: &Analysis<'_>, observed: &[Loc]) -> Vec<Vec<(Loc, EventId)>> {
    let mut combos: Vec<Vec<(Loc, EventId)>> = vec![Vec::new()];
    for &loc in observed {
        if loc.0 as usize >= a.g.num_locs() {
            continue;
        }
        let cands = a.mo_max_candidates(loc);
        combos = combos
            .into_iter()
            .flat_map(|c| {
                cands.iter().map(move |&w| {
                    let mut c2 = c.clone();
                    c2.push((loc, w));
                    c2
                })
            })
            .collect();
    }
    combos
}

/// The threads that can take a step in `g` (in thread order, with their next
/// action), or, when none can, how the execution ends.
///
/// With `first_only`, only the first one, passing over a thread whose next
/// step takes a lock that is held ([`lock_held`]) or permits that are not
/// there ([`permits_missing`]): that step could only fail and wait, an
/// execution that shows nothing the one where it waits its turn does not.
/// It runs once the lock is free (the permits there), or when no other
/// thread can run (then it fails, and the execution shows the deadlock).
pub(crate) fn runnable<D: Driver>(
    driver: &mut D,
    g: &mut ExecutionGraph,
    first_only: bool,
) -> Result<Vec<(u32, Action)>, Ending> {
    let mut steps = Vec::new();
    runnable_into(driver, g, first_only, &[], &mut steps).map(|()| steps)
}

/// [`runnable`] into `steps` (emptied first), which the caller keeps; the
/// threads `last` marks come after the others.
pub(crate) fn runnable_into<D: Driver>(
    driver: &mut D,
    g: &mut ExecutionGraph,
    first_only: bool,
    last: &[bool],
    steps: &mut Vec<(u32, Action)>,
) -> Result<(), Ending> {
    steps.clear();
    let mut waits_for_lock = None;
    let (mut blocked, mut waiting) = (false, false);
    // A thread that ended the program (`exit()`), and whether a thread is
    // blocked for good (a failed assumption, a bound) rather than waiting.
    let (mut exited, mut cut) = (false, false);
    let n = g.num_threads() as u32;
    // Every step asks: without threads to put last, one pass in order.
    let is_last = |t: u32| last.get(t as usize).copied().unwrap_or(false);
    let second = if last.is_empty() { 0..0 } else { 0..n };
    let order = (0..n)
        .filter(|&t| !is_last(t))
        .chain(second.filter(|&t| is_last(t)));
    for t in order {
        if !g.is_started(t) || g.is_finished(t) {
            continue;
        }
        if g.is_blocked(t) {
            blocked = true;
            match g.last_event(t).map(|e| e.action) {
                Some(Action::Block {
                    reason: c11check_model::BlockReason::Exit,
                }) => exited = true,
                Some(Action::Block {
                    reason: c11check_model::BlockReason::Assume | c11check_model::BlockReason::Bound,
                }) => cut = true,
                _ => {}
            }
            continue;
        }
        let action = driver.next_action(g, t);
        if let Action::Join { child } = action {
            if !g.is_finished(child) {
                waiting = true;
                continue;
            }
        }
        if first_only {
            if let Action::Cas {
                loc,
                lock: true,
                take,
                expected,
                ..
            } = action
            {
                let waits = if take {
                    permits_missing(g, loc, expected)
                } else {
                    lock_held(g, loc)
                };
                if waits {
                    waits_for_lock.get_or_insert((t, action));
                    continue;
                }
            }
            steps.push((t, action));
            break;
        }
        steps.push((t, action));
    }
    if steps.is_empty() {
        steps.extend(waits_for_lock);
    }
    if !steps.is_empty() {
        Ok(())
    } else if exited && !cut {
        // The program ended: threads still waiting stop with it.
        Err(Ending::Complete)
    } else if blocked {
        Err(Ending::Blocked)
    } else if waiting {
        Err(Ending::Deadlock)
    } else {
        Err(Ending::Complete)
    }
}

/// Whether the lock at `loc` is held in `g`: some thread's last write to it
/// took it (a lock acquisition or a `try_lock` that succeeded; a release is
/// a store).
pub(crate) fn lock_held(g: &ExecutionGraph, loc: Loc) -> bool {
    (0..g.num_threads() as u32).any(|t| {
        g.thread_events(t)
            .iter()
            .rev()
            .find(|e| e.loc() == Some(loc) && e.is_write())
            .is_some_and(|e| matches!(e.action, Action::Cas { .. }))
    })
}

/// Whether no take of `expected` permits at `loc` can succeed in `g`: every
/// write to `loc` that no read-modify-write has read yet (for a count only
/// read-modify-writes update, the one that ends modification order) holds
/// fewer than `expected`.
pub(crate) fn permits_missing(
    g: &ExecutionGraph,
    loc: Loc,
    expected: c11check_model::Value,
) -> bool {
    let mut consumed: Vec<EventId> = Vec::new();
    let mut writes: Vec<EventId> = vec![EventId::init(loc)];
    for (id, e) in g.events() {
        if e.loc() != Some(loc) {
            continue;
        }
        if e.is_rmw() {
            consumed.extend(e.rf);
        }
        if e.is_write() {
            writes.push(id);
        }
    }
    writes
        .iter()
        .all(|w| consumed.contains(w) || g.written_value(*w) < expected)
}

/// Whether some thread of `g` stopped at a loop or step bound.
pub(crate) fn cut_by_bound(g: &ExecutionGraph) -> bool {
    (0..g.num_threads() as u32).any(|t| {
        matches!(
            g.last_event(t).map(|e| e.action),
            Some(Action::Block {
                reason: c11check_model::BlockReason::Bound
            })
        )
    })
}

/// The thread a spawn event starts (made if the graph has none yet).
pub(crate) fn spawn_child(g: &mut ExecutionGraph, spawn: EventId) -> u32 {
    (0..g.num_threads() as u32)
        .find(|&c| g.thread(c).parent == Some(spawn))
        .unwrap_or_else(|| g.add_thread(Some(spawn)))
}

/// Whether weak CAS `e` (of `loc`) may fail spuriously when it reads `w`: not
/// when its thread already failed spuriously reading `w`, whatever came in
/// between (loads of the same write, plain accesses, other locations,
/// another compare-exchange site). One spurious failure per write and
/// thread shows everything a failure without a change can lead to; a run of
/// them on the same write is an unfair execution (LL/SC fails spuriously
/// only now and then), and allowing one after each reload made the most
/// common retry loop (`load`, then `compare_exchange_weak` of what it read)
/// fail forever. A retry loop is then finite: its thread reads each write
/// of the location at most twice before it must succeed or see a newer one.
/// (A loop that counts its failures sees fewer of them.)
///
/// By coherence a thread's accesses to `loc` see its writes in modification
/// order, so the scan back from `e` stops at the first access to `loc` that
/// is not a read of `w`: `e` reading `w` after it is inconsistent anyway.
pub(crate) fn may_fail_spuriously(
    g: &ExecutionGraph,
    e: EventId,
    loc: c11check_model::Loc,
    w: EventId,
) -> bool {
    for prev in g.thread_events(e.thread)[..e.index as usize].iter().rev() {
        if prev.loc() != Some(loc) {
            continue;
        }
        if !prev.is_read() || prev.rf != Some(w) {
            return true;
        }
        if prev.spurious_fail {
            return false;
        }
    }
    true
}
