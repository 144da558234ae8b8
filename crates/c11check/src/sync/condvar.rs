//! `Condvar` and `Barrier` under the model.
//!
//! A `Condvar` is `c11check_runtime::condvar`'s protocol, which the C
//! runtime's condition variables share: a `notify_one` wakes one of the
//! threads waiting at that moment (the explorer tries each), `notify_all`
//! all of them, and a wait may also wake spuriously (not twice in a row at
//! one wait) or, timed, time out; a thread that starts waiting after a
//! notification cannot take its wake-up. Waiting costs no execution of its
//! own, and a waiter no notification can reach any more (a lost wake-up)
//! is reported as a deadlock.

use super::atomic::AtomicU64;
use super::{LockResult, MutexGuard, PoisonError};
use c11check_model::Value;
use c11check_runtime::barrier::{self, BarrierCounts};
use c11check_runtime::condvar::{self as protocol, WaitEnd, Woken};
use c11check_runtime::{LocCell, Site};

/// `std::sync::Condvar` under the model.
#[derive(Debug, Default)]
pub struct Condvar {
    /// The waiters' set (see `c11check_runtime::condvar`).
    waiters: AtomicU64,
}

/// Whether `wait` timed out (the model lets any timed wait time out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// Whether the wait ended by timing out (the model explores both).
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

/// A choice the explorer makes both ways (whatever
/// `Builder::spurious_failures` says of the program's own weak
/// compare-exchanges).
#[track_caller]
pub(crate) fn explored_choice() -> bool {
    protocol::explored_choice(Site::caller())
}

impl Condvar {
    /// Makes a new one, as `std`'s `new` does.
    pub const fn new() -> Self {
        Condvar {
            waiters: AtomicU64::inner(0),
        }
    }

    /// Releases the guard's mutex, waits as `end` allows and takes the
    /// mutex again.
    #[track_caller]
    fn wait_as<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        end: WaitEnd,
    ) -> (LockResult<MutexGuard<'a, T>>, Woken) {
        let site = Site::caller();
        let mutex = guard.mutex();
        let woken = protocol::wait(
            self.waiters.loc_cell(),
            end,
            "a condition variable's notification",
            || drop(guard),
            site,
        );
        (mutex.lock(), woken)
    }

    /// Releases the guard's mutex, waits for a notification (or wakes
    /// spuriously) and takes the mutex again.
    #[track_caller]
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        self.wait_as(guard, WaitEnd::Untimed).0
    }

    /// Waits while `condition` holds.
    #[track_caller]
    pub fn wait_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        while condition(&mut *guard) {
            guard = self.wait(guard)?;
        }
        Ok(guard)
    }

    /// Time does not pass in the model: the wait may end by a notification,
    /// spuriously, or by timing out; all are explored.
    #[track_caller]
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        _dur: std::time::Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let (relocked, woken) = self.wait_as(guard, WaitEnd::Timed);
        let timed_out = WaitTimeoutResult(woken == Woken::TimedOut);
        match relocked {
            Ok(g) => Ok((g, timed_out)),
            Err(p) => Err(PoisonError::new((p.into_inner(), timed_out))),
        }
    }

    /// Wakes one waiting thread, if any.
    #[track_caller]
    pub fn notify_one(&self) {
        protocol::notify_one(self.waiters.loc_cell(), Site::caller());
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        protocol::notify_all(self.waiters.loc_cell(), Site::caller());
    }
}

/// `std::sync::Barrier` under the model: the runtime's barrier
/// (`c11check_runtime::barrier`, which `pthread_barrier_t` shares): the
/// last arrival of a round leads it and lets the others go, every arrival
/// happens before every departure, and waiting costs no execution.
#[derive(Debug)]
pub struct Barrier {
    /// Per round parity, the arrival counts (starting at `n`) and the
    /// permit counts (see `c11check_runtime::barrier`).
    arrivals: [LocCell; 2],
    permits: [LocCell; 2],
    n: usize,
    /// Rounds completed by each thread (real memory, per thread).
    rounds: std::sync::Mutex<Vec<(u32, u32, usize)>>,
}

/// Returned by [`Barrier::wait`]: one thread per round is the leader.
#[derive(Debug)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this waiter is the round's leader (exactly one per round).
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// Makes a new one, as `std`'s `new` does.
    pub const fn new(n: usize) -> Self {
        Barrier {
            arrivals: [LocCell::new(), LocCell::new()],
            permits: [LocCell::new(), LocCell::new()],
            n,
            rounds: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// This thread's round number, counted per execution.
    fn next_round(&self) -> usize {
        let me = (
            c11check_runtime::generation(),
            c11check_runtime::current_thread(),
        );
        let mut r = self.rounds.lock().unwrap();
        r.retain(|e| e.0 == me.0);
        match r.iter_mut().find(|e| e.1 == me.1) {
            Some(e) => {
                e.2 += 1;
                e.2
            }
            None => {
                r.push((me.0, me.1, 0));
                0
            }
        }
    }

    /// Waits until every party has arrived, as `std::sync::Barrier::wait` does.
    #[track_caller]
    pub fn wait(&self) -> BarrierWaitResult {
        let round = self.next_round();
        let counts = BarrierCounts {
            arrivals: [&self.arrivals[0], &self.arrivals[1]],
            permits: [&self.permits[0], &self.permits[1]],
        };
        let n = self.n.max(1) as Value;
        BarrierWaitResult(barrier::wait(&counts, n, round as u64, Site::caller()))
    }
}
