//! The modelled barrier, written once for every front end (the Rust API's
//! `Barrier`, `pthread_barrier_t`). A barrier of `count` threads keeps two
//! arrival counts and two permit counts, one of each per round parity. An
//! arrival takes one from its round's arrival count as a reference-count
//! decrement (acquire-release): the explorer does not tell apart the orders
//! the threads arrive in, only which of them arrived last. The last one
//! puts the count back for the round after next, gives `count - 1`
//! permits and leads the round; the others each take a permit (acquire),
//! waiting, as at a lock, until there is one. So every arrival happens
//! before every departure, waiting costs no execution, and a round cannot
//! take another's permits (a round begins only after every waiter of the
//! round two before took its permit).

use crate::{access, set_waiting, wait_lock, LocCell, Site};
use c11check_model::{Action, MemOrder, RmwOp, Value, Width};

/// A barrier's four counts, by round parity (see the module doc); each
/// arrival count starts at the barrier's `count`, each permit count at 0.
pub struct BarrierCounts<'a> {
    pub arrivals: [&'a LocCell; 2],
    pub permits: [&'a LocCell; 2],
}

/// What a wait shows where the model reports a thread that waits forever.
pub const WAITING_FOR: &str = "the other threads of a barrier";

/// One wait of the calling thread in its round `round` (0, 1, … per thread
/// and execution) at a barrier of `count` threads; whether it leads the
/// round (exactly one thread per round does).
pub fn wait(counts: &BarrierCounts, count: Value, round: u64, site: Site) -> bool {
    let parity = round as usize % 2;
    let (arrivals, permits) = (counts.arrivals[parity], counts.permits[parity]);
    let rmw = |cell: &LocCell, op: RmwOp, operand: Value, ord: MemOrder| {
        access(
            cell,
            if std::ptr::eq(cell, arrivals) {
                count
            } else {
                0
            },
            |loc| Action::Rmw {
                loc,
                ord,
                op,
                operand,
                width: Width::U64,
            },
            site,
        )
        .val
    };
    if rmw(arrivals, RmwOp::RefDec, 1, MemOrder::AcqRel) == 1 {
        for _ in 0..count {
            rmw(arrivals, RmwOp::RefInc, 1, MemOrder::Relaxed);
        }
        if count > 1 {
            rmw(permits, RmwOp::Add, count - 1, MemOrder::Release);
        }
        return true;
    }
    set_waiting(Some(WAITING_FOR));
    let take = |loc| Action::take(loc, 1, MemOrder::Acquire, MemOrder::Relaxed, true);
    while !access(permits, 0, take, site).ok {
        wait_lock(permits, site);
    }
    set_waiting(None);
    false
}
