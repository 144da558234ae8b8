//! `Condvar` and `Barrier` under the model.
//!
//! A waiter registers, releases the mutex and waits for a wake-up token; a
//! notification hands out tokens (one, or one per registered waiter), and a
//! waiter takes one ([`Action::take`]: a decrement when the count is
//! positive). The counters are seq_cst modelled atomics, so
//! condition-variable operations are totally ordered as the standard
//! requires. A take waits like a lock acquisition: the exhaustive explorer
//! schedules it only while a token is there, a live execution runs the
//! waiter again once the count changes, so waiting costs no execution of
//! its own. A waiter that no token can reach any more (a lost wake-up) is
//! reported as a deadlock.
//!
//! [`Action::take`]: c11check_model::Action::take
//!
//! Spurious wake-ups are explored: a wait may return without a token, but not
//! twice in a row in the same thread (a second one in a row brings nothing
//! new and would let a waiting loop spin forever). Extra tokens left by
//! waiters that woke spuriously wake later waiters early, which is also a
//! spurious wake-up, so no behaviour std forbids is produced.

use super::atomic::{AtomicU64, AtomicUsize, Ordering};
use super::{LockResult, MutexGuard, PoisonError};
use std::cell::RefCell;

/// `std::sync::Condvar` under the model.
#[derive(Debug, Default)]
pub struct Condvar {
    waiters: AtomicUsize,
    tokens: AtomicUsize,
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

thread_local! {
    /// Per execution: the threads whose last wait woke spuriously.
    static LAST_SPURIOUS: RefCell<(u32, Vec<bool>)> = const { RefCell::new((0, Vec::new())) };
}

/// Reads and updates whether thread `t`'s last wait woke spuriously.
fn last_wait_spurious(update: Option<bool>) -> bool {
    let generation = c11check_runtime::generation();
    let t = c11check_runtime::current_thread() as usize;
    LAST_SPURIOUS.with(|l| {
        let mut l = l.borrow_mut();
        if l.0 != generation {
            *l = (generation, Vec::new());
        }
        if l.1.len() <= t {
            l.1.resize(t + 1, false);
        }
        let was = l.1[t];
        if let Some(v) = update {
            l.1[t] = v;
        }
        was
    })
}

/// A choice the explorer makes both ways: a weak compare-exchange on a fresh
/// location fails spuriously or not (whatever `Builder::spurious_failures`
/// says of the program's own weak compare-exchanges).
#[track_caller]
pub(crate) fn explored_choice() -> bool {
    // The value it would write marks it for reports (see
    // `c11check_runtime::CHOICE_MARK`).
    AtomicU64::inner(0)
        .cas(
            0,
            c11check_runtime::CHOICE_MARK as u64,
            Ordering::Relaxed,
            Ordering::Relaxed,
            true,
        )
        .is_err()
}

impl Condvar {
    /// Makes a new one, as `std`'s `new` does.
    pub const fn new() -> Self {
        Condvar {
            waiters: AtomicUsize::inner(0),
            tokens: AtomicUsize::inner(0),
        }
    }

    /// Whether this wait may wake spuriously (not right after another one).
    #[track_caller]
    fn may_wake_spuriously(&self) -> bool {
        if last_wait_spurious(None) {
            last_wait_spurious(Some(false));
            return false;
        }
        let spurious = explored_choice();
        last_wait_spurious(Some(spurious));
        spurious
    }

    /// Takes a wake-up token, waiting while there is none. The take is one
    /// action the explorer schedules only while a token is there, so a wait
    /// costs no execution of its own (as a lock acquisition).
    #[track_caller]
    fn take_token(&self) {
        while !self
            .tokens
            .take(1, Ordering::SeqCst, Ordering::SeqCst, true)
        {
            c11check_runtime::wait_lock(self.tokens.loc_cell(), c11check_runtime::Site::caller());
        }
    }

    /// Releases the guard's mutex, waits for a notification (or wakes
    /// spuriously) and takes the mutex again.
    #[track_caller]
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        let mutex = guard.mutex();
        self.waiters.fetch_add(1, Ordering::SeqCst);
        drop(guard);
        if !self.may_wake_spuriously() {
            c11check_runtime::set_waiting(Some("a condition variable's notification"));
            self.take_token();
            c11check_runtime::set_waiting(None);
        }
        mutex.lock()
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
        let mutex = guard.mutex();
        self.waiters.fetch_add(1, Ordering::SeqCst);
        drop(guard);
        let timed_out = explored_choice();
        if !timed_out {
            // The execution where this wait times out is explored too, so a
            // notification that never comes is not a bug here.
            c11check_runtime::set_waiting(Some(c11check_runtime::TIMED_WAIT));
            self.take_token();
            c11check_runtime::set_waiting(None);
        }
        match mutex.lock() {
            Ok(g) => Ok((g, WaitTimeoutResult(timed_out))),
            Err(p) => Err(PoisonError::new((
                p.into_inner(),
                WaitTimeoutResult(timed_out),
            ))),
        }
    }

    /// Wakes one waiting thread, if any.
    #[track_caller]
    pub fn notify_one(&self) {
        loop {
            let n = self.waiters.load(Ordering::SeqCst);
            if n == 0 {
                return;
            }
            if self
                .waiters
                .compare_exchange(n, n - 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                self.tokens.fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        let n = self.waiters.swap(0, Ordering::SeqCst);
        if n > 0 {
            self.tokens.fetch_add(n, Ordering::SeqCst);
        }
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
