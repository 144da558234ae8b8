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

use super::atomic::{AtomicU64, AtomicUsize, Ordering};
use super::{LockResult, MutexGuard, PoisonError};
use c11check_runtime::condvar::{self as protocol, WaitEnd, Woken};
use c11check_runtime::Site;

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

/// `std::sync::Barrier` under the model: arrivals are a fetch_add on a
/// modelled counter (acquire-release); the last arrival of a round, the
/// leader, gives the others one permit each (a release `fetch_add`) and
/// each of them takes one ([`c11check_model::Action::take`], acquire),
/// waiting, as at a lock, until the leader came. So everything before the
/// barrier in any thread happens before everything after it (the leader's
/// arrival reads the others' through the counter's release sequence), and
/// waiting costs no execution. Rounds alternate between two permit counts:
/// a round cannot begin before every waiter of the round two before took
/// its permit, so no thread takes another round's.
#[derive(Debug)]
pub struct Barrier {
    arrived: AtomicUsize,
    released: [AtomicUsize; 2],
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
            arrived: AtomicUsize::inner(0),
            released: [AtomicUsize::inner(0), AtomicUsize::inner(0)],
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
        let n = self.n.max(1);
        let round = self.next_round();
        let me = self.arrived.fetch_add(1, Ordering::AcqRel);
        let target = (round + 1) * n;
        let leader = me + 1 == target;
        let released = &self.released[round % 2];
        if leader {
            if n > 1 {
                released.fetch_add(n - 1, Ordering::Release);
            }
        } else {
            c11check_runtime::set_waiting(Some("the other threads of a barrier"));
            while !released.take(1, Ordering::Acquire, Ordering::Relaxed, true) {
                c11check_runtime::wait_lock(released.loc_cell(), c11check_runtime::Site::caller());
            }
            c11check_runtime::set_waiting(None);
        }
        BarrierWaitResult(leader)
    }
}
