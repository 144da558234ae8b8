//! `loom::future`: `block_on` and `AtomicWaker`.

use c11check::sync::atomic::{AtomicBool, Ordering};
use c11check::sync::Mutex;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

/// Wakes by setting a modelled flag the blocked thread waits on.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: StdArc<Self>) {
        self.wake_by_ref()
    }
    fn wake_by_ref(self: &StdArc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// Polls `f` to completion on the current modelled thread; between polls it
/// waits for a wake-up (a wait loop the model cuts).
#[track_caller]
pub fn block_on<F: Future>(f: F) -> F::Output {
    let flag = StdArc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        // A wait that only reads (a turn that read nothing new is cut),
        // then the wake-up taken by a swap: a wake-up after it sets the
        // flag again, and the swap reads the latest one, so the next poll
        // sees what its waker published.
        while !flag.0.load(Ordering::Acquire) {
            c11check::thread::yield_now();
        }
        flag.0.swap(false, Ordering::Acquire);
    }
}

/// loom's `AtomicWaker`: a waker slot behind a modelled mutex.
#[derive(Debug, Default)]
pub struct AtomicWaker {
    slot: Mutex<Option<Waker>>,
}

impl AtomicWaker {
    pub fn new() -> AtomicWaker {
        AtomicWaker::default()
    }
    #[track_caller]
    pub fn register(&self, waker: Waker) {
        *self.slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(waker);
    }
    #[track_caller]
    pub fn register_by_ref(&self, waker: &Waker) {
        self.register(waker.clone())
    }
    #[track_caller]
    pub fn wake(&self) {
        if let Some(w) = self.take_waker() {
            w.wake();
        }
    }
    #[track_caller]
    pub fn take_waker(&self) -> Option<Waker> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}
