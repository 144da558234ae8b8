//! Replaying recorded events: when the graph driver moves to another graph
//! it runs the program again, and each thread's recorded events give it
//! their results (`FiberDriver::feed`), or, on the fiber's own stack, the
//! thread takes them itself without a switch ([`replay_inline`]).

use crate::protocol::Outcome;
use crate::shared::Shared;
use crate::Site;
use c11check_model::{Action, EventId, ExecutionGraph, Loc};

/// Whether two actions are the same operation, values aside.
pub(crate) fn same_shape(a: &Action, b: &Action) -> bool {
    match (a, b) {
        (
            Action::Store { loc, ord, .. },
            Action::Store {
                loc: l2, ord: o2, ..
            },
        ) => loc == l2 && ord == o2,
        (
            Action::Rmw {
                loc,
                ord,
                op,
                width,
                ..
            },
            Action::Rmw {
                loc: l2,
                ord: o2,
                op: op2,
                width: w2,
                ..
            },
        ) => loc == l2 && ord == o2 && op == op2 && width == w2,
        (
            Action::Cas {
                loc,
                success,
                failure,
                weak,
                ..
            },
            Action::Cas {
                loc: l2,
                success: s2,
                failure: f2,
                weak: k2,
                ..
            },
        ) => loc == l2 && success == s2 && failure == f2 && weak == k2,
        (a, b) => a == b,
    }
}

/// Replays recorded event `id` of `g` as the operation `asked`, which the
/// thread asks for now: the program's values replace the recorded ones (a
/// pointer from a fresh allocation may differ from the run that recorded
/// the event) and a read takes the value its source writes in this run
/// (sources are replayed first). Returns what the thread gets, or `None`,
/// leaving `g` as it was, when the thread does not repeat the event: another
/// operation, or a compare-exchange that now fails where it succeeded (or
/// the reverse).
pub(crate) fn replayed(g: &mut ExecutionGraph, id: EventId, asked: Action) -> Option<Outcome> {
    let e = g.event(id);
    // Usually the very same operation (values included).
    let same = e.action == asked;
    if !same && !same_shape(&asked, &e.action) {
        return None;
    }
    let val = match e.rf {
        Some(w) => g.written_value(w),
        None => e.read_val,
    };
    // Usually nothing changed.
    if same && e.read_val == val {
        return Some(Outcome {
            val,
            ok: e.is_write(),
        });
    }
    let mut now = e.clone();
    now.action = asked;
    now.read_val = val;
    let ok = now.is_write();
    if ok != e.is_write() {
        return None;
    }
    // The source stays, so `update_event` forgets no remembered clock.
    g.update_event(id, |e| *e = now);
    Some(Outcome { val, ok })
}

/// Runs on a fiber's stack (from `suspend`) while the graph driver has
/// handed it the graph (`Shared::replay`): when the access the running
/// thread asks for is its next recorded event and what that reads has been
/// replayed, the thread takes the recorded result as [`FiberDriver::feed`]
/// would give it, without switching to the driver and back. `None` leaves
/// the request to the driver: the thread is past the graph, the event is a
/// join or a block (the driver decides when those run), its source is not
/// replayed yet, or the thread does not repeat it (which the driver
/// reports).
pub(crate) fn replay_inline(
    s: &mut Shared,
    action: Action,
    bind: Option<(*const crate::LocCell, i64)>,
    site: Site,
) -> Option<Outcome> {
    let mut graph = s.replay?;
    // SAFETY: `resume` sets `replay` from the graph it was given and clears it
    // once the fiber suspends; the driver does not touch the graph while the
    // fiber runs, and this is the only reference made from the pointer.
    let g = unsafe { graph.as_mut() };
    let t = s.current;
    let done = *s.replay_done.get(t as usize)?;
    if done >= g.thread_len(t) {
        return None;
    }
    let id = EventId::new(t, done);
    let e = g.event(id);
    if matches!(e.action, Action::Join { .. } | Action::Block { .. }) {
        return None;
    }
    if let Some(w) = e.rf.filter(|w| !w.is_init()) {
        if s.replay_done
            .get(w.thread as usize)
            .is_none_or(|&d| d <= w.index)
        {
            return None;
        }
    }
    // An object first used here gets the location the graph gives it, with
    // its initial value of this run (before a read of it takes its value;
    // the driver binds it the same way if the thread is handed over).
    let action = match bind {
        Some((cell, init)) => {
            let loc = e.loc()?;
            g.set_init(loc, init);
            s.note_binding(loc, cell);
            // SAFETY: as below.
            let addr = unsafe { (*cell).object_addr() };
            s.note_creation(loc, addr, crate::alloc::creation_of(addr, s.generation));
            // SAFETY: as in `FiberDriver::set_cell`; the cell's object is
            // borrowed by the code asking for this operation.
            unsafe { (*cell).set(s.generation, loc) };
            with_loc(action, loc)
        }
        None => action,
    };
    let outcome = replayed(g, id, action)?;
    s.record_site(id, site);
    s.replay_done[t as usize] = done + 1;
    s.set_stamp(t, done as u64 + 1);
    Some(outcome)
}

/// `action` with its location set.
#[inline]
pub(crate) fn with_loc(action: Action, l: Loc) -> Action {
    match action {
        Action::Load { ord, .. } => Action::Load { loc: l, ord },
        Action::Store { ord, val, .. } => Action::Store { loc: l, ord, val },
        Action::Rmw {
            ord,
            op,
            operand,
            width,
            ..
        } => Action::Rmw {
            loc: l,
            ord,
            op,
            operand,
            width,
        },
        Action::Cas {
            expected,
            new,
            success,
            failure,
            weak,
            lock,
            take,
            ..
        } => Action::Cas {
            loc: l,
            expected,
            new,
            success,
            failure,
            weak,
            lock,
            take,
        },
        other => other,
    }
}
