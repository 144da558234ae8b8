//! `std::sync::mpsc` under the model, built directly on modelled atomics:
//! a sender claims the next slot with a fetch_add, fills it (plain memory)
//! and publishes it with a release store; the receiver waits for the slot's
//! flag with an acquire load (a wait loop the model cuts). So a message's
//! contents happen before its receipt, the order of messages is the order of
//! the claims, and nothing else (no internal lock) multiplies executions.

use super::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::collections::HashMap;
pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use std::sync::{Arc as StdArc, Mutex as StdMutex};

struct Slot<T> {
    ready: AtomicBool,
    value: StdMutex<Option<T>>,
}

struct Chan<T> {
    /// Slots claimed by senders.
    claimed: AtomicUsize,
    /// Slots the receiver has emptied (bounded channels wait on it).
    taken: AtomicUsize,
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
                        ready: AtomicBool::new(false),
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
        let i = match self.bound {
            None => self.claimed.fetch_add(1, Ordering::Relaxed),
            Some(b) => loop {
                let i = self.claimed.load(Ordering::Relaxed);
                if i >= self.taken.load(Ordering::Acquire) + b {
                    if !block {
                        return Err(TrySendError::Full(t));
                    }
                    if !self.receiver.load(Ordering::Acquire) {
                        return Err(TrySendError::Disconnected(t));
                    }
                    crate::thread::yield_now();
                    continue;
                }
                if self
                    .claimed
                    .compare_exchange(i, i + 1, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    break i;
                }
            },
        };
        let slot = self.slot(i);
        *slot.value.lock().unwrap() = Some(t);
        slot.ready.store(true, Ordering::Release);
        Ok(())
    }

    /// `Ok(Some)` a message, `Ok(None)` nothing yet, `Err` disconnected.
    fn poll(&self) -> Result<Option<T>, ()> {
        let mut next = self.next.lock().unwrap();
        let slot = self.slot(*next);
        if slot.ready.load(Ordering::Acquire) {
            *next += 1;
            let n = *next;
            drop(next);
            let v = slot.value.lock().unwrap().take();
            if self.bound.is_some() {
                self.taken.store(n, Ordering::Release);
            }
            return Ok(v);
        }
        drop(next);
        if self.senders.load(Ordering::Acquire) == 0 {
            // Every sender is gone; their sends happen before this load.
            return if slot.ready.load(Ordering::Acquire) {
                self.poll()
            } else {
                Err(())
            };
        }
        Ok(None)
    }
}

fn make<T>(bound: Option<usize>) -> StdArc<Chan<T>> {
    StdArc::new(Chan {
        claimed: AtomicUsize::new(0),
        taken: AtomicUsize::new(0),
        senders: AtomicUsize::new(1),
        receiver: AtomicBool::new(true),
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

fn drop_sender<T>(chan: &Chan<T>) {
    if c11check_runtime::in_model() {
        chan.senders.fetch_sub(1, Ordering::Release);
    }
}

impl<T> Sender<T> {
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
    #[track_caller]
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        self.chan.send(t, true).map_err(|e| match e {
            TrySendError::Disconnected(t) | TrySendError::Full(t) => SendError(t),
        })
    }
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
        loop {
            match self.chan.poll() {
                Ok(Some(t)) => return Ok(t),
                Ok(None) => crate::thread::yield_now(),
                Err(()) => return Err(RecvError),
            }
        }
    }
    #[track_caller]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        match self.chan.poll() {
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
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.recv().ok())
    }
    pub fn try_iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.try_recv().ok())
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if c11check_runtime::in_model() {
            self.chan.receiver.store(false, Ordering::Release);
        }
    }
}
