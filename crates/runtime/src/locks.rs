//! The modelled locks, written once for every front end: a mutex (the Rust
//! API's `Mutex`, `pthread_mutex_t`, C11's `mtx_t`) is a location taken
//! with an acquire compare-exchange and given back with a release store; a
//! reader-writer lock (`RwLock`, `pthread_rwlock_t`) is a semaphore of
//! [`PERMITS`] shares, a reader taking one and a writer all of them, given
//! back with a release `fetch_add`, so a writer synchronizes through the
//! count's release sequence with every reader before it. An acquisition
//! that would wait is run by the exhaustive explorer only once it can
//! succeed (see `Action::lock_acquire`, `Action::take`): waiting costs no
//! execution. The front ends add what their API says on top (poisoning,
//! recursive and error-checking kinds, timeouts).

use crate::{access, wait_lock, LocCell, Site};
use c11check_model::{Action, MemOrder, RmwOp, Value, Width};

/// The shares of a reader-writer lock: a writer takes them all, a reader
/// one.
pub const PERMITS: Value = 1 << 32;

/// Takes the mutex in `cell`, waiting while another thread holds it.
pub fn lock(cell: &LocCell, site: Site) {
    while !access(cell, 0, Action::lock_acquire, site).ok {
        wait_lock(cell, site);
    }
}

/// One attempt to take the mutex in `cell`; whether it took it (both
/// outcomes are explored where both can happen).
pub fn try_lock(cell: &LocCell, site: Site) -> bool {
    access(cell, 0, Action::lock_try, site).ok
}

/// Gives the mutex in `cell` back.
pub fn unlock(cell: &LocCell, site: Site) {
    access(cell, 0, Action::lock_release, site);
}

/// Takes `n` shares from the count in `cell` (which starts at `init`) with
/// order `ord`, waiting while it holds fewer when `waits`; whether it took
/// them.
pub fn take(cell: &LocCell, init: Value, n: Value, ord: MemOrder, waits: bool, site: Site) -> bool {
    let failure = if ord == MemOrder::SeqCst {
        MemOrder::SeqCst
    } else {
        MemOrder::Relaxed
    };
    loop {
        if access(
            cell,
            init,
            |loc| Action::take(loc, n, ord, failure, waits),
            site,
        )
        .ok
        {
            return true;
        }
        if !waits {
            return false;
        }
        wait_lock(cell, site);
    }
}

/// Gives `n` shares back to the count in `cell` (which starts at `init`).
pub fn give(cell: &LocCell, init: Value, n: Value, site: Site) {
    access(
        cell,
        init,
        |loc| Action::Rmw {
            loc,
            ord: MemOrder::Release,
            op: RmwOp::Add,
            operand: n,
            width: Width::U64,
        },
        site,
    );
}
