//! Condition variables on the model's actions, for every front end (the
//! Rust API's `Condvar`, a C program's `pthread_cond_*`, `cnd_*` and what
//! libstdc++'s `std::condition_variable` compiles to).
//!
//! What a condition variable must do: a `notify_one` wakes one of the
//! threads blocked on it *at the moment of the call* (if there is one), a
//! `notify_all` wakes all of them, and any waiter may also wake
//! spuriously (a timed one may also time out). A waiter that starts
//! waiting after a notification cannot take that wake-up.
//!
//! So the wake-ups are addressed. The waiters' set is one seq_cst word (a
//! bit per *slot*: the threads that waited on this condition variable in
//! this execution, numbered in the order they first did, kept by the
//! object's address), and each slot
//! has its own wake-up flag, a seq_cst count. A waiter sets its bit,
//! releases the mutex and takes its flag ([`Action::take`]: the explorer
//! schedules it only once the flag is raised, so waiting costs no
//! execution). A notifier reads the set, picks a waiter (the explorer
//! tries each one: a chain of binary choices), clears its bit and raises
//! its flag; `notify_all` swaps the set for the empty one and raises every
//! flag in it. A spurious wake-up or a time-out is taken before the
//! thread registers (see [`wait`] for why that loses nothing).
//!
//! A thread does not wake spuriously twice in a row at the same wait (the
//! same call site): in a loop that waits for a condition, the second
//! spurious wake-up reads the condition again and brings nothing the first
//! did not (the thread could have stayed blocked until the later moment),
//! and allowing it would let the loop run for ever. Waits at other sites
//! (one after another in straight-line code) each may. `crates/c11check/tests/condvar_definition.rs` checks all this
//! against the definition above, enumerated by brute force, on random
//! programs.

use crate::{access, fail_execution, set_waiting, wait_lock, FailureKind, LocCell, Site};
use c11check_model::{Action, MemOrder, RmwOp, Value, Width};
use std::cell::RefCell;
use std::rc::Rc;

/// How a wait may end besides a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitEnd {
    /// An untimed wait: it may also wake spuriously.
    Untimed,
    /// A timed wait: it may also time out, or wake spuriously before.
    Timed,
}

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// A notification woke it.
    Notified,
    /// It woke without one.
    Spuriously,
    /// Its time ran out (a timed wait).
    TimedOut,
}

/// The most threads that may wait on one condition variable in one
/// execution (a bit each in the waiters' word, whose sign bit is not used).
pub const MAX_WAITERS: usize = 63;

/// A condition variable's slots: each waiting thread and its flag.
type SlotList = Vec<(u32, Rc<LocCell>)>;

/// Per execution: each condition variable's slots (by the object's
/// address), and where each thread's last wait woke spuriously.
#[derive(Default)]
struct Slots {
    generation: u32,
    /// `(the object's address, the threads of its slots, their flags)`.
    condvars: Vec<(usize, SlotList)>,
    last_spurious: Vec<Option<Site>>,
}

thread_local! {
    static SLOTS: RefCell<Slots> = RefCell::new(Slots::default());
}

/// Runs `f` on this execution's slot table.
fn with_slots<R>(f: impl FnOnce(&mut Slots) -> R) -> R {
    let generation = crate::generation();
    SLOTS.with(|s| {
        let mut s = s.borrow_mut();
        if s.generation != generation {
            *s = Slots {
                generation,
                ..Slots::default()
            };
        }
        f(&mut s)
    })
}

/// The slot of thread `t` on the condition variable whose waiters' word
/// is `waiters` (bound), made on its first wait, and the slot's flag.
fn slot_of(waiters: &LocCell, t: u32) -> (usize, Rc<LocCell>) {
    let w = waiters.object_addr();
    let slot = with_slots(|s| {
        let i = match s.condvars.iter().position(|c| c.0 == w) {
            Some(i) => i,
            None => {
                s.condvars.push((w, Vec::new()));
                s.condvars.len() - 1
            }
        };
        let slots = &mut s.condvars[i].1;
        match slots.iter().position(|e| e.0 == t) {
            Some(k) => Some((k, slots[k].1.clone())),
            None if slots.len() < MAX_WAITERS => {
                slots.push((t, Rc::new(LocCell::at(waiters.object_addr()))));
                Some((slots.len() - 1, slots[slots.len() - 1].1.clone()))
            }
            None => None,
        }
    });
    slot.unwrap_or_else(|| {
        fail_execution(
            // (Not a bug of c11check, but what it cannot model.)
            FailureKind::Internal,
            format!(
                "more than {MAX_WAITERS} threads waited on one condition variable in one \
                 execution, which c11check does not model: use fewer threads in the test"
            ),
        )
    })
}

/// The flag of `slot` on the condition variable whose waiters' word is
/// `waiters` (the slot exists: its bit was set).
fn flag_of(waiters: &LocCell, slot: usize) -> Rc<LocCell> {
    let w = waiters.object_addr();
    with_slots(|s| {
        s.condvars
            .iter()
            .find(|c| c.0 == w)
            .and_then(|c| c.1.get(slot))
            .map(|e| e.1.clone())
    })
    .expect("c11check: a condition variable's waiter bit without a slot")
}

/// A seq_cst read-modify-write of the waiters' word.
fn waiters_rmw(waiters: &LocCell, op: RmwOp, operand: Value, site: Site) -> Value {
    access(
        waiters,
        0,
        |loc| Action::Rmw {
            loc,
            ord: MemOrder::SeqCst,
            op,
            operand,
            width: Width::U64,
        },
        site,
    )
    .val
}

/// A choice the explorer makes both ways: a weak compare-exchange on a
/// fresh location fails or not (marked for reports as such a choice).
pub fn explored_choice(site: Site) -> bool {
    let cell = LocCell::new();
    !access(
        &cell,
        0,
        |loc| Action::Cas {
            loc,
            expected: 0,
            new: crate::CHOICE_MARK,
            success: MemOrder::Relaxed,
            failure: MemOrder::Relaxed,
            weak: true,
            lock: false,
            take: false,
        },
        site,
    )
    .ok
}

/// Whether thread `t` may wake spuriously at `site` now: not right after
/// a spurious wake-up at the same site.
fn spurious_allowed(t: u32, site: Site) -> bool {
    with_slots(|s| s.last_spurious.get(t as usize).copied().flatten() != Some(site))
}

/// Records whether thread `t`'s wait at `site` woke spuriously.
fn set_last_spurious(t: u32, site: Site, spurious: bool) {
    with_slots(|s| {
        let t = t as usize;
        if s.last_spurious.len() <= t {
            s.last_spurious.resize(t + 1, None);
        }
        s.last_spurious[t] = spurious.then_some(site);
    });
}

/// Waits on the condition variable whose waiters' word is `waiters`:
/// registers the calling thread, calls `release` (which releases the
/// caller's mutex) and waits until a notification comes; or, explored
/// besides, wakes spuriously or (`Timed`) times out. The caller then
/// takes its mutex again. `what` is what a deadlock report says the
/// thread waits for.
///
/// A spurious wake-up (a time-out) is taken at once, before registering:
/// the thread's next steps (taking the mutex) can be scheduled as late as
/// any, and a notification it could have taken while registered is one
/// the explorer gives it on the branch where it waits. So a wake-up is
/// never both spurious and notified, and no notifier finds a waiter gone.
pub fn wait(
    waiters: &LocCell,
    end: WaitEnd,
    what: &'static str,
    release: impl FnOnce(),
    site: Site,
) -> Woken {
    let t = crate::current_thread();
    let early = match end {
        WaitEnd::Timed if explored_choice(site) => Some(Woken::TimedOut),
        _ if spurious_allowed(t, site) && explored_choice(site) => Some(Woken::Spuriously),
        _ => None,
    };
    set_last_spurious(t, site, early == Some(Woken::Spuriously));
    if let Some(how) = early {
        release();
        return how;
    }
    let (slot, flag) = slot_of(waiters, t);
    waiters_rmw(waiters, RmwOp::Or, 1 << slot, site);
    release();
    set_waiting(Some(match end {
        WaitEnd::Untimed => what,
        // The execution where it times out is explored too, so a
        // notification that never comes is not a bug here.
        WaitEnd::Timed => crate::TIMED_WAIT,
    }));
    take_flag(&flag, site);
    set_waiting(None);
    Woken::Notified
}

/// Takes the wake-up raised on `flag`, waiting (at no cost of an
/// execution) until it is.
fn take_flag(flag: &LocCell, site: Site) {
    while !access(
        flag,
        0,
        |loc| Action::take(loc, 1, MemOrder::SeqCst, MemOrder::SeqCst, true),
        site,
    )
    .ok
    {
        wait_lock(flag, site);
    }
}

/// Raises the wake-up flag of `slot`.
fn raise(waiters: &LocCell, slot: usize, site: Site) {
    let flag = flag_of(waiters, slot);
    access(
        &flag,
        0,
        |loc| Action::Rmw {
            loc,
            ord: MemOrder::SeqCst,
            op: RmwOp::Add,
            operand: 1,
            width: Width::U64,
        },
        site,
    );
}

/// Wakes one of the threads waiting on the condition variable whose
/// waiters' word is `waiters`, if one is; the explorer tries each.
pub fn notify_one(waiters: &LocCell, site: Site) {
    loop {
        let set = access(
            waiters,
            0,
            |loc| Action::Load {
                loc,
                ord: MemOrder::SeqCst,
            },
            site,
        )
        .val;
        if set == 0 {
            return;
        }
        // Which waiter: each but the last is taken or passed by a choice.
        let mut slots = (0..MAX_WAITERS).filter(|s| set & (1 << s) != 0).peekable();
        let mut chosen = 0;
        while let Some(s) = slots.next() {
            chosen = s;
            if slots.peek().is_none() || !explored_choice(site) {
                break;
            }
        }
        let before = waiters_rmw(waiters, RmwOp::And, !(1 << chosen), site);
        if before & (1 << chosen) != 0 {
            raise(waiters, chosen, site);
            return;
        }
        // Another notifier woke the chosen waiter meanwhile: look again.
    }
}

/// Wakes every thread waiting on the condition variable whose waiters'
/// word is `waiters`.
pub fn notify_all(waiters: &LocCell, site: Site) {
    let set = waiters_rmw(waiters, RmwOp::Xchg, 0, site);
    for slot in (0..MAX_WAITERS).filter(|s| set & (1 << s) != 0) {
        raise(waiters, slot, site);
    }
}
