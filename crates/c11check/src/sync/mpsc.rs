//! `std::sync::mpsc` under the model, built directly on modelled atomics:
//! a sender claims the next slot with a fetch_add, fills it (plain memory)
//! and publishes it by giving the slot a permit (a release `fetch_add`); the
//! receiver takes the permit of its next slot ([`c11check_model::Action::take`],
//! acquire), waiting, as at a lock, until it is there, so a wait costs no
//! execution. The last sender to go gives a permit to the first slot no one
//! claimed, which the receiver then finds empty: disconnected. A bounded
//! channel also counts free places the same way (a sender takes one, the
//! receiver gives it back; a receiver that goes gives senders plenty). So a
//! message's contents happen before its receipt, the order of messages is
//! the order of the claims, and nothing else (no internal lock) multiplies
//! executions.

use super::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::collections::HashMap;
pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use std::sync::{Arc as StdArc, Mutex as StdMutex};

struct Slot<T> {
    /// 1 once the slot is published (or, for the first slot no one claimed,
    /// once every sender is gone).
    ready: AtomicUsize,
    value: StdMutex<Option<T>>,
}

/// What a receiver that went gives a bounded channel's free places: more
/// than senders can take, so none waits again.
const PLENTY: usize = 1 << 40;

struct Chan<T> {
    /// Slots claimed by senders.
    claimed: AtomicUsize,
    /// Free places of a bounded channel (a permit count).
    free: AtomicUsize,
    senders: AtomicUsize,
    receiver: AtomicBool,
    bound: Option<usize>,
    /// Slot objects by index, made by whichever side needs one first (their
    /// modelled state lives in the graph; this map only holds the objects).
    slots: StdMutex<HashMap<usize, StdArc<Slot<T>>>>,
    /// The receiver's next slot (only the receiver uses it).
    next: StdMutex<usize>,
}

impl<T> Chan<T> {
    /// Slot `i`, made by whichever side asks first; the std mutex (which the
    /// model does not see) hands it over, so it is not tracked as created by
    /// that thread (see `c11check::alloc`).
    fn slot(&self, i: usize) -> StdArc<Slot<T>> {
        c11check_runtime::alloc::untracked(|| {
            self.slots
                .lock()
                .unwrap()
                .entry(i)
                .or_insert_with(|| {
                    StdArc::new(Slot {
                        ready: AtomicUsize::inner(0),
                        value: StdMutex::new(None),
                    })
                })
                .clone()
        })
    }

    fn send(&self, t: T, block: bool) -> Result<(), TrySendError<T>> {
        if !self.receiver.load(Ordering::Acquire) {
            return Err(TrySendError::Disconnected(t));
        }
        if self.bound.is_some() {
            // A free place; a receiver that went leaves plenty.
            loop {
                if self
                    .free
                    .take(1, Ordering::Acquire, Ordering::Relaxed, block)
                {
                    break;
                }
                if !block {
                    return Err(TrySendError::Full(t));
                }
                c11check_runtime::wait_lock(self.free.loc_cell(), c11check_runtime::Site::caller());
            }
            if !self.receiver.load(Ordering::Acquire) {
                return Err(TrySendError::Disconnected(t));
            }
        }
        let i = self.claimed.fetch_add(1, Ordering::Relaxed);
        let slot = self.slot(i);
        *slot.value.lock().unwrap() = Some(t);
        slot.ready.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// `Ok(Some)` a message, `Ok(None)` nothing yet (only when not
    /// `block`ing: else it waits), `Err` disconnected.
    #[track_caller]
    fn poll(&self, block: bool) -> Result<Option<T>, ()> {
        // (The guard is not held across a wait: a fiber may be dropped there.)
        let i = *self.next.lock().unwrap();
        let slot = self.slot(i);
        while !slot
            .ready
            .take(1, Ordering::Acquire, Ordering::Relaxed, block)
        {
            if !block {
                return Ok(None);
            }
            c11check_runtime::wait_lock(slot.ready.loc_cell(), c11check_runtime::Site::caller());
        }
        let Some(v) = slot.value.lock().unwrap().take() else {
            // The mark of the last sender's going: leave it for the next
            // receive.
            slot.ready.fetch_add(1, Ordering::Relaxed);
            return Err(());
        };
        *self.next.lock().unwrap() = i + 1;
        if self.bound.is_some() {
            self.free.fetch_add(1, Ordering::Release);
        }
        Ok(Some(v))
    }
}

fn make<T>(bound: Option<usize>) -> StdArc<Chan<T>> {
    // Untracked: std's reference count, which c11check does not model,
    // decides which endpoint frees the channel.
    c11check_runtime::alloc::untracked(|| make_tracked(bound))
}

fn make_tracked<T>(bound: Option<usize>) -> StdArc<Chan<T>> {
    StdArc::new(Chan {
        claimed: AtomicUsize::inner(0),
        free: AtomicUsize::inner(bound.unwrap_or(0)),
        senders: AtomicUsize::inner(1),
        receiver: AtomicBool::inner(true),
        bound,
        slots: StdMutex::new(HashMap::new()),
        next: StdMutex::new(0),
    })
}

/// The sending half (cloneable).
pub struct Sender<T> {
    chan: StdArc<Chan<T>>,
}

/// The sending half of a bounded channel.
pub struct SyncSender<T> {
    chan: StdArc<Chan<T>>,
}

/// The receiving half.
pub struct Receiver<T> {
    chan: StdArc<Chan<T>>,
}

// SAFETY: values move between threads only through the slots, published with
// release stores and taken after acquire loads, as in std's channels.
unsafe impl<T: Send> Send for Sender<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SyncSender<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SyncSender<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Receiver<T> {}

/// An unbounded channel.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let chan = make(None);
    (Sender { chan: chan.clone() }, Receiver { chan })
}

/// A bounded channel (`bound` 0 is treated as 1: the model has no rendezvous).
pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let chan = make(Some(bound.max(1)));
    (SyncSender { chan: chan.clone() }, Receiver { chan })
}

/// A sender goes; the last one marks the first slot no one claimed (every
/// claim happens before its sender's going, so this one sees them all).
fn drop_sender<T>(chan: &Chan<T>) {
    if c11check_runtime::in_model() && chan.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
        let end = chan.claimed.load(Ordering::Acquire);
        chan.slot(end).ready.fetch_add(1, Ordering::Release);
    }
}

impl<T> Sender<T> {
    /// Sends a value; fails only when the receiver is gone, as in `std`.
    #[track_caller]
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        self.chan.send(t, true).map_err(|e| match e {
            TrySendError::Disconnected(t) | TrySendError::Full(t) => SendError(t),
        })
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.senders.fetch_add(1, Ordering::Relaxed);
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        drop_sender(&self.chan);
    }
}

impl<T> SyncSender<T> {
    /// Sends a value; fails only when the receiver is gone, as in `std`.
    #[track_caller]
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        self.chan.send(t, true).map_err(|e| match e {
            TrySendError::Disconnected(t) | TrySendError::Full(t) => SendError(t),
        })
    }
    /// Sends a value if there is room, else returns `Full` at once.
    #[track_caller]
    pub fn try_send(&self, t: T) -> Result<(), TrySendError<T>> {
        self.chan.send(t, false)
    }
}

impl<T> Clone for SyncSender<T> {
    fn clone(&self) -> Self {
        self.chan.senders.fetch_add(1, Ordering::Relaxed);
        SyncSender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for SyncSender<T> {
    fn drop(&mut self) {
        drop_sender(&self.chan);
    }
}

impl<T> Receiver<T> {
    /// Waits for a message; `Err` once every sender is gone and none is left.
    #[track_caller]
    pub fn recv(&self) -> Result<T, RecvError> {
        c11check_runtime::set_waiting(Some("a message on a channel"));
        let r = self.chan.poll(true);
        c11check_runtime::set_waiting(None);
        match r {
            Ok(Some(t)) => Ok(t),
            _ => Err(RecvError),
        }
    }
    /// A message if one is there, else `Empty` (or `Disconnected`) at once.
    #[track_caller]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        match self.chan.poll(false) {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err(TryRecvError::Empty),
            Err(()) => Err(TryRecvError::Disconnected),
        }
    }
    /// Time does not pass in the model: when no message is there, the
    /// receive may time out or go on waiting (both are explored).
    #[track_caller]
    pub fn recv_timeout(&self, _d: std::time::Duration) -> Result<T, RecvTimeoutError> {
        match self.try_recv() {
            Ok(t) => Ok(t),
            Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {
                if super::condvar::explored_choice() {
                    Err(RecvTimeoutError::Timeout)
                } else {
                    self.recv().map_err(|_| RecvTimeoutError::Disconnected)
                }
            }
        }
    }
    /// Receives messages until every sender is gone.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.recv().ok())
    }
    /// The messages already there, without waiting.
    pub fn try_iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.try_recv().ok())
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if c11check_runtime::in_model() {
            self.chan.receiver.store(false, Ordering::Release);
            if self.chan.bound.is_some() {
                // Senders waiting for a free place go on and find it gone.
                self.chan.free.fetch_add(PLENTY, Ordering::Release);
            }
        }
    }
}
