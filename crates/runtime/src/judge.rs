//! Judging one execution: the bug it shows (a panic, a race, a
//! deadlock, a read of freed or uninitialised memory, a robustness
//! violation, a livelock), and the report of it.

use crate::driver::ExecutionState;
use crate::report::{
    describe_event, encode_replay, repeated_turn, replay_order, to_dot, Failure, FailureKind,
    Report,
};
use c11check_explore::{Ending, Execution};
use c11check_model::{Action, Analysis, BlockReason, EventId, ExecutionGraph, Loc};
use smallvec::{smallvec, SmallVec};

/// The report of `failure` in execution number `count`, `ex`. A report
/// draws modification order: every location is analysed.
pub(crate) fn report_of(
    ex: &Execution<'_>,
    failure: Failure,
    state: &ExecutionState,
    count: u64,
) -> Report {
    let full = ex
        .analysis
        .is_partial()
        .then(|| Analysis::new(ex.graph, ex.analysis.model).ok())
        .flatten();
    let a = full.as_ref().unwrap_or(ex.analysis);
    make_report(ex.graph, Some(a), failure, state, count)
}

/// The bug execution `ex` shows, if any.
pub(crate) fn judge(ex: &Execution<'_>, state: &ExecutionState) -> Option<Failure> {
    if let Some(f) = state.take_failure() {
        return Some(f);
    }
    let g = ex.graph;
    if let Some((threads, message)) = state.panic_failure() {
        return Some(Failure {
            kind: FailureKind::Panic,
            message,
            events: threads
                .iter()
                .filter_map(|&t| g.thread_len(t).checked_sub(1).map(|i| EventId::new(t, i)))
                .collect(),
            threads,
        });
    }
    let races = if state.0.borrow().ignore_races {
        Vec::new()
    } else {
        ex.analysis.races()
    };
    let benign = |a: EventId| {
        g.event(a)
            .loc()
            .is_some_and(|l| state.0.borrow().benign_race(l))
    };
    if let Some((a, b)) = races.into_iter().find(|&(a, _)| !benign(a)) {
        let site = |id: EventId| {
            state
                .site(id)
                .map(|s| format!(" at {s}"))
                .unwrap_or_default()
        };
        // Where the fix goes: a wrapper's caller (see `Site::to_change`).
        let change = |id: EventId| {
            state
                .site(id)
                .map(|s| format!(" at {}", s.to_change()))
                .unwrap_or_default()
        };
        let kind = |id: EventId| {
            if g.event(id).is_write() {
                "write"
            } else {
                "read"
            }
        };
        return Some(Failure {
            kind: FailureKind::DataRace,
            message: format!(
                "data race on loc{}: {} {}{} and {} {}{} are not ordered by happens-before\n  {}",
                g.event(a).loc().map(|l| l.0).unwrap_or(0),
                kind(a),
                a,
                site(a),
                kind(b),
                b,
                site(b),
                race_fix(g, a, b, &change)
            ),
            threads: vec![a.thread, b.thread],
            events: vec![a, b],
        });
    }
    // An access to an object made in a tracked allocation must come after
    // the object's creation: the first event its creator did after it.
    // One pass over the events finds, for each creation, its first access
    // that is not ordered after it. Such an access races with the
    // creation: not reported when races are not.
    let creations = state.creations();
    if !creations.is_empty() && !state.0.borrow().ignore_races {
        let mut creation_of_loc: SmallVec<[usize; 32]> = smallvec![usize::MAX; g.num_locs()];
        for (i, &(loc, ..)) in creations.iter().enumerate() {
            if let Some(slot) = creation_of_loc.get_mut(loc.0 as usize) {
                *slot = i;
            }
        }
        let mut unordered: SmallVec<[Option<EventId>; 16]> = smallvec![None; creations.len()];
        for (id, e) in g.events() {
            let Some(&c) = e.loc().and_then(|l| creation_of_loc.get(l.0 as usize)) else {
                continue;
            };
            if c == usize::MAX || unordered[c].is_some() {
                continue;
            }
            let (_, creator, done) = creations[c];
            let first_after = EventId::new(creator, done as u32);
            let made = done < g.thread_len(creator) as u64;
            if id.thread != creator && !(made && ex.analysis.hb(first_after, id)) {
                unordered[c] = Some(id);
            }
        }
        let first = (creations.iter().zip(&unordered)).find_map(|(c, id)| id.map(|id| (c, id)));
        if let Some((&(loc, creator, _), id)) = first {
            let mut f = creation_race(id.thread, creator, loc);
            if let Some(s) = state.site(id) {
                f.message.push_str(&format!(" ({id} at {s})"));
            }
            f.events = vec![id];
            return Some(f);
        }
    }
    if let Some(f) = freed_access(ex, state) {
        return Some(f);
    }
    if let Some(f) = uninitialized_read(ex, state) {
        return Some(f);
    }
    if state.0.borrow().check_robustness {
        if let Some(f) = crate::robust::violation(ex, state) {
            return Some(f);
        }
    }
    // The program called exit(): whatever the others wait for, they stop.
    if ex.ending != Ending::Complete && state.0.borrow().exited.is_some() {
        return None;
    }
    let failure = match ex.ending {
        Ending::Complete => {
            let leaks = state.leaks();
            let (what, site) = leaks.first()?;
            Some(Failure {
                kind: FailureKind::Leak,
                message: format!(
                    "{} {what} allocation{} never released; the first was made at {site}",
                    leaks.len(),
                    if leaks.len() == 1 { " was" } else { "s were" }
                ),
                threads: vec![],
                events: vec![],
            })
        }
        Ending::Deadlock => {
            let waiting: Vec<u32> = (0..g.num_threads() as u32)
                .filter(|&t| g.is_started(t) && !g.is_finished(t) && !g.is_blocked(t))
                .collect();
            Some(Failure {
                kind: FailureKind::Deadlock,
                message: format!(
                    "deadlock: {} wait for threads that never finish",
                    crate::report::thread_list(&waiting)
                ),
                threads: waiting,
                events: vec![],
            })
        }
        Ending::Blocked => judge_blocked(ex, state),
    };
    failure.filter(|f| !(f.kind == FailureKind::Deadlock && state.0.borrow().ignore_deadlocks))
}

/// A load that read the initial value of a location whose initial value
/// is indeterminate (heap memory nothing wrote before it).
fn uninitialized_read(ex: &Execution<'_>, state: &ExecutionState) -> Option<Failure> {
    let s = state.0.borrow();
    if s.indeterminate.is_empty() {
        return None;
    }
    let (id, e) = ex.graph.events().find(|(_, e)| {
        e.rf.is_some_and(|w| w.is_init()) && e.loc().is_some_and(|l| s.is_indeterminate(l))
    })?;
    drop(s);
    let at = state
        .site(id)
        .map(|s| format!(" at {s}"))
        .unwrap_or_default();
    Some(uninitialized_failure(
        id.thread,
        e.loc()?,
        &format!("{id}{at}"),
        vec![id],
    ))
}

/// The report of thread `t`'s read (`who`: the event and where) of
/// `loc`'s indeterminate initial value.
pub(crate) fn uninitialized_failure(t: u32, loc: Loc, who: &str, events: Vec<EventId>) -> Failure {
    Failure {
        kind: FailureKind::UninitializedRead,
        message: format!(
            "read of uninitialized memory: {who} reads loc{}, which nothing wrote before: it holds no value yet (initialize it before the object is published, or order the read after the write that does)",
            loc.0
        ),
        threads: vec![t],
        events,
    }
}

/// An access to an object whose tracked allocation was freed, that does not
/// happen before the free: after it (a use after free) or unordered with
/// it (a race with the free). The free happened in thread `f` after its
/// first `n` events.
fn freed_access(ex: &Execution<'_>, state: &ExecutionState) -> Option<Failure> {
    let frees = state.frees();
    if frees.is_empty() {
        return None;
    }
    let g = ex.graph;
    for (id, e) in g.events() {
        let Some(loc) = e.loc() else { continue };
        let Some(&(_, f, n)) = frees.iter().find(|x| x.0 == loc) else {
            continue;
        };
        let n = n as u32;
        let before_free = if id.thread == f {
            id.index < n
        } else {
            n > 0 && ex.analysis.hb(id, EventId::new(f, n - 1))
        };
        if before_free {
            continue;
        }
        let after_free =
            id.thread == f || (n < g.thread_len(f) && ex.analysis.hb(EventId::new(f, n), id));
        let at = state
            .site(id)
            .map(|s| format!(" at {s}"))
            .unwrap_or_default();
        let what = if e.is_write() { "writes" } else { "reads" };
        let message = if after_free {
            format!(
                "use after free: {id}{at} {what} loc{}, an object in memory thread {f} freed after its operation {} (T{f}.{})",
                loc.0,
                n,
                n.saturating_sub(1)
            )
        } else {
            format!(
                "data race with a free: {id}{at} {what} loc{}, an object in memory thread {f} frees after its operation {} (T{f}.{}), and nothing orders the access before the free: the memory may be gone (or reused) when it runs",
                loc.0,
                n,
                n.saturating_sub(1)
            )
        };
        return Some(Failure {
            kind: if after_free {
                FailureKind::UseAfterFree
            } else {
                FailureKind::DataRace
            },
            message,
            threads: vec![id.thread, f],
            events: vec![id],
        });
    }
    None
}

/// What would order racing accesses `a` and `b`, as a reviewer would say it:
/// where one thread, after its access, stores what the other reads before
/// its own, the orders that store and load need (release, acquire) for the
/// read to synchronise with the store; otherwise what to add. `site` says
/// where each access is to be changed.
fn race_fix(
    g: &ExecutionGraph,
    a: EventId,
    b: EventId,
    site: &dyn Fn(EventId) -> String,
) -> String {
    use c11check_model::MemOrder;
    for (first, second) in [(a, b), (b, a)] {
        // The last read before `second` in its thread that reads a store
        // its thread made after `first`.
        let link = (0..second.index).rev().find_map(|i| {
            let r = EventId::new(second.thread, i);
            let e = g.event(r);
            let w =
                e.rf.filter(|w| !w.is_init() && w.thread == first.thread && w.index > first.index)?;
            (e.ord() != MemOrder::NonAtomic).then_some((w, r))
        });
        let Some((w, r)) = link else { continue };
        let mut fixes = Vec::new();
        if !g.event(w).ord().is_release() {
            fixes.push(format!("the store {w}{} Release", site(w)));
        }
        if !g.event(r).ord().is_acquire() {
            fixes.push(format!("the load {r}{} Acquire", site(r)));
        }
        if fixes.is_empty() {
            break;
        }
        return format!(
            "{r} reads what {w} stored after {first}, but does not synchronise with it: make {} (or add a fence of that order after the store or before the load), and {first} happens before {second}.",
            fixes.join(" and ")
        );
    }
    format!(
        "Nothing orders them in this execution: after {a}, store with Release a value that {b}'s thread loads with Acquire before {b} (or the other way round), or make both accesses under one Mutex."
    )
}

/// An execution that ended with blocked threads is a bug only when no other
/// execution can unblock them: each waits on reads of writes that can stay
/// last in modification order (a lock whose holder never releases it, a spin
/// loop that can only ever read what it read), or a thread is over its step
/// bound. Otherwise a write that would unblock a thread exists, and the
/// execution where the thread reads it is explored separately.
fn judge_blocked(ex: &Execution<'_>, state: &ExecutionState) -> Option<Failure> {
    let g = ex.graph;
    let a = ex.analysis;
    let can_stay_last = |w: EventId| {
        g.loc_of(w)
            .is_some_and(|l| a.mo_max_candidates(l).contains(&w))
    };
    let mut lock_waits = Vec::new();
    let mut spins = Vec::new();
    // Where each busy-waiting thread last read (its loop).
    let mut spin_reads: Vec<(u32, EventId)> = Vec::new();
    // The writes the spinning threads keep reading: all of them must be
    // able to end modification order together (two threads that each
    // keep reading their own store to one location cannot both go on
    // reading it: one of the stores is the later, and that thread's
    // other reader sees it).
    let mut lasts: Vec<(c11check_model::Loc, EventId)> = Vec::new();
    for t in 0..g.num_threads() as u32 {
        let Some(Action::Block { reason }) = g.last_event(t).map(|e| e.action) else {
            continue;
        };
        let len = g.thread_len(t) - 1;
        match reason {
            BlockReason::Bound => {
                let site = |id: EventId| state.site(id);
                let (message, events) = match repeated_turn(g, t, len, &site) {
                    Some(turn) => (
                        crate::report::spin_message(g, t, turn, &site),
                        vec![EventId::new(t, turn.start)],
                    ),
                    None => (
                        format!(
                            "thread {t} performed {len} visible operations without finishing (the step bound; raise it with {} if the test is just long)",
                            crate::settings::step_bound_setting()
                        ),
                        vec![],
                    ),
                };
                return Some(Failure {
                    kind: FailureKind::Livelock,
                    message,
                    threads: vec![t],
                    events,
                });
            }
            BlockReason::LockHeld => {
                // The read that found the lock held comes just before the block.
                let wait = EventId::new(t, len - 1);
                let holder = g.event(wait).rf.expect("a lock wait is a read");
                if !can_stay_last(holder) {
                    return None;
                }
                if state.waiting_on(t).is_some() {
                    // A facade's wait (the permit take of a condition
                    // variable, a barrier or a channel), told apart below
                    // like a spin inside one.
                    spins.push(t);
                } else {
                    lock_waits.push((t, holder, wait));
                }
            }
            // A failed assumption is not a bug: the execution is cut.
            BlockReason::Assume | BlockReason::Exit => {}
            BlockReason::Wait => {
                // The loads of the spin loop's last turn: for each location
                // the newest read (an older turn's read of it read an older
                // store, which need not stay last: a -O0 loop's temporary,
                // written and read again each turn).
                let mut seen: SmallVec<[c11check_model::Loc; 8]> = SmallVec::new();
                let mut i = len;
                while i > 0 {
                    i -= 1;
                    let e = g.event(EventId::new(t, i));
                    if let Some(l) = e.loc().filter(|_| e.is_read()) {
                        if seen.contains(&l) {
                            continue;
                        }
                        if seen.is_empty() {
                            spin_reads.push((t, EventId::new(t, i)));
                        }
                        seen.push(l);
                    }
                    // As in the turn comparison (`spin_is_idle`): fences
                    // and plain stores of the same values add nothing.
                    if matches!(
                        e.action,
                        Action::Fence { .. }
                            | Action::Store {
                                ord: c11check_model::MemOrder::NonAtomic,
                                ..
                            }
                    ) {
                        continue;
                    }
                    // A read-modify-write that wrote back what it read (a
                    // swap of `false` that found `false`): the next turn's
                    // reads its write, unless another write comes after
                    // it in modification order.
                    if e.is_rmw() && e.written_value() == Some(e.read_val) {
                        let id = EventId::new(t, i);
                        if !can_stay_last(id) {
                            return None;
                        }
                        lasts.extend(e.loc().map(|l| (l, id)));
                        continue;
                    }
                    if !e.is_read() || e.is_write() {
                        break;
                    }
                    // A weak CAS does not fail spuriously forever.
                    if e.spurious_fail || !can_stay_last(e.rf.unwrap()) {
                        return None;
                    }
                    lasts.extend(e.loc().map(|l| (l, e.rf.unwrap())));
                }
                spins.push(t);
            }
        }
    }
    if lock_waits.is_empty() && spins.is_empty() {
        return None;
    }
    lasts.sort_unstable();
    lasts.dedup();
    if lasts.len() > 1 && !a.is_partial() && a.find_mo(&lasts).is_none() {
        return None;
    }
    // A spin inside a facade's wait (a condition variable, a barrier) that
    // nothing can end is a thread blocked forever, not a busy loop.
    let (waits, mut spins): (Vec<u32>, Vec<u32>) = spins
        .into_iter()
        .partition(|&t| state.waiting_on(t).is_some());
    if state.0.borrow().ignore_livelocks {
        // Busy loops that can never end are cut like a failed assumption.
        spins.clear();
        if lock_waits.is_empty() && waits.is_empty() {
            return None;
        }
    }
    if waits
        .iter()
        .any(|&t| state.waiting_on(t) == Some(crate::TIMED_WAIT))
    {
        return None;
    }
    if lock_waits.is_empty() && waits.is_empty() {
        let at: Vec<EventId> = (spin_reads.iter())
            .filter(|(t, _)| spins.contains(t))
            .map(|&(_, id)| id)
            .collect();
        let loops: Vec<String> = (at.iter())
            .filter_map(|&id| {
                Some(format!(
                    "thread {} last read at {}",
                    id.thread,
                    state.site(id)?
                ))
            })
            .collect();
        let loops = if loops.is_empty() {
            String::new()
        } else {
            format!(" ({})", loops.join("; "))
        };
        return Some(Failure {
            kind: FailureKind::Livelock,
            message: format!(
                "{} spin{} forever: every other thread is finished or blocked and nothing it waits for can still be written{loops}",
                crate::report::thread_list(&spins),
                if spins.len() == 1 { "s" } else { "" }
            ),
            threads: spins,
            events: at,
        });
    }
    let mut parts: Vec<String> = lock_waits
        .iter()
        .map(|(t, holder, _)| {
            let by = if holder.is_init() {
                "a lock that was never released".to_string()
            } else if g.is_finished(holder.thread) {
                format!(
                    "a lock that thread {} took at {} and never released",
                    holder.thread, holder
                )
            } else {
                format!(
                    "a lock held by thread {} (taken at {})",
                    holder.thread, holder
                )
            };
            format!("thread {t} waits for {by}")
        })
        .collect();
    parts.extend(waits.iter().map(|&t| {
        format!(
            "thread {t} waits for {}, which can no longer come",
            state.waiting_on(t).unwrap_or("a wake-up")
        )
    }));
    parts.extend(spins.iter().map(|t| format!("thread {t} spins forever")));
    Some(Failure {
        kind: FailureKind::Deadlock,
        message: format!("deadlock: {}", parts.join("; ")),
        threads: lock_waits
            .iter()
            .map(|w| w.0)
            .chain(waits.iter().copied())
            .chain(spins.iter().copied())
            .collect(),
        events: lock_waits.iter().map(|w| w.2).collect(),
    })
}

fn make_report(
    g: &ExecutionGraph,
    a: Option<&Analysis<'_>>,
    failure: Failure,
    state: &ExecutionState,
    n: u64,
) -> Report {
    let site = |id: EventId| state.site(id);
    // A thread's run of identical turns (a spin loop up to the step bound)
    // shows its first and last turn, and a line for those in between.
    let hidden: Vec<Option<(u32, u32, u32)>> = (0..g.num_threads() as u32)
        .map(|t| {
            let end = g.thread_len(t)
                - g.last_event(t)
                    .is_some_and(|e| matches!(e.action, Action::Block { .. }))
                    as u32;
            let turn = repeated_turn(g, t, end, &site).filter(|r| r.turns >= 4)?;
            let from = turn.start + turn.len;
            Some((
                from,
                turn.start + (turn.turns - 1) * turn.len,
                turn.turns - 2,
            ))
        })
        .collect();
    // A run stopped at a spin loop stops the other threads where they are:
    // their stops are not part of the story.
    let stopped_others = failure.kind == FailureKind::SpinWithoutHint;
    let trace = replay_order(g)
        .into_iter()
        .filter(|id| !matches!(g.event(*id).action, Action::Finish))
        .filter(|id| {
            !(stopped_others
                && !failure.threads.contains(&id.thread)
                && matches!(g.event(*id).action, Action::Block { .. }))
        })
        .filter_map(|id| {
            if let Some((from, to, turns)) = hidden[id.thread as usize] {
                if id.index == from {
                    let t = id.thread;
                    return Some(format!(
                        "   ... T{t}.{from} to T{t}.{}: the same turn {turns} more times ...",
                        to - 1
                    ));
                }
                if (from..to).contains(&id.index) {
                    return None;
                }
            }
            let mark = if failure.events.contains(&id) {
                ">> "
            } else {
                "   "
            };
            Some(format!("{mark}{}", describe_event(g, id, site(id))))
        })
        .collect();
    let names = state.0.borrow().location_names();
    let mut report = Report {
        locations: crate::report::location_legend(g, &site, &names),
        replay: encode_replay(g),
        dot: to_dot(g, a, &site),
        trace,
        failure,
        execution_number: n,
        random_iteration: None,
        hits: None,
        others: Vec::new(),
        operations: None,
    };
    crate::report::apply_names(&mut report, &names);
    report
}

/// Thread `t` reached an object `creator` made without being ordered after
/// its creation (see [`crate::alloc`]).
pub(crate) fn creation_race(t: u32, creator: u32, loc: c11check_model::Loc) -> Failure {
    Failure {
        kind: FailureKind::DataRace,
        message: format!(
            "data race on loc{}: thread {t} accesses an object thread {creator} created, without being ordered after its creation (the object's initialization races with the access; it may read uninitialized memory)",
            loc.0
        ),
        threads: vec![creator, t],
        events: vec![],
    }
}
