//! The fiber protocol: what a modelled thread's fiber asks of the driver
//! when it suspends ([`Request`]) and what it is resumed with
//! ([`Outcome`]); the hooks run around a fiber; and the strengthenings a
//! candidate robustness repair applies to requests.

use crate::{LocCell, Site};
use c11check_model::{Action, MemOrder, Value};
use corosensei::Yielder;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a visible operation returns to the thread that performed it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The value read (loads, RMWs, CASes), or the new thread's number (spawn).
    pub val: Value,
    /// Whether a CAS succeeded.
    pub ok: bool,
}

/// The result a thread's closure produced: its return value or its panic.
pub type ThreadResult = Result<Box<dyn Any + Send>, Box<dyn Any + Send>>;

/// The body of a spawned thread.
pub type ThreadMain = Box<dyn FnOnce() -> Box<dyn Any + Send>>;

/// What a fiber asks of the driver when it suspends.
pub(crate) enum Request {
    /// A memory access, fence, join or block. `bind` names the location cell
    /// of an object whose location is not known in this execution yet.
    Act {
        action: Action,
        bind: Option<(*const LocCell, Value)>,
        site: Site,
    },
    /// Start a thread running `main`.
    Spawn { main: ThreadMain, site: Site },
    /// `yield_now` / `spin_loop`: a place where a spinning thread may be cut
    /// (unless not `cut`: a loop that counts); `yields` when the program
    /// itself yielded there; `failed` when it said the turn ending there
    /// found nothing (`failed_turn_hint`).
    Spin {
        site: Site,
        yields: bool,
        failed: bool,
        cut: bool,
        /// The head of a loop found just now (see [`crate::loop_found_hint`]):
        /// the thread's turns before it are no turns of this loop.
        fresh: bool,
    },
    /// The thread ended without returning (see [`finish_thread`]): its
    /// result is recorded, its fiber is never resumed.
    Finish,
}

pub(crate) type FiberYielder = Yielder<Outcome, Request>;

/// Functions run when a modelled thread's fiber is entered and left (see
/// [`set_fiber_hooks`]).
pub(crate) static FIBER_HOOKS: std::sync::OnceLock<(FiberHook, FiberHook)> =
    std::sync::OnceLock::new();

/// A function told a modelled thread's number.
pub type FiberHook = fn(u32);

/// Sets functions run just before modelled thread `t`'s fiber runs and
/// just after it stops: a runtime for compiled programs keeps which
/// thread runs and its `errno` there (all fibers share one OS thread).
/// Set once.
pub fn set_fiber_hooks(enter: FiberHook, leave: FiberHook) {
    let _ = FIBER_HOOKS.set((enter, leave));
}

/// Functions a signal handler of the runtime calls first and last (see
/// [`set_signal_context_hooks`]).
pub(crate) static SIGNAL_CONTEXT_HOOKS: std::sync::OnceLock<SignalContextHooks> =
    std::sync::OnceLock::new();

/// To the runtime's context (returning what was in place), and back.
pub(crate) type SignalContextHooks = (fn() -> usize, fn(usize));

/// Sets the functions the runtime's signal handlers call on entry (to put
/// the runtime's own context in place: a compiled program's threads run
/// with thread pointers of their own) and before returning to the code
/// they interrupted (with what the first returned). Set once.
pub fn set_signal_context_hooks(to_runtime: fn() -> usize, back: fn(usize)) {
    let _ = SIGNAL_CONTEXT_HOOKS.set((to_runtime, back));
}

/// Loop turns cut as waits so far in this process (see [`wait_cuts`]).
pub(crate) static WAIT_CUTS: AtomicU64 = AtomicU64::new(0);

/// How many times a thread's loop turn re-read what the turn before read
/// and the thread was stopped there as waiting, in this process so far.
pub fn wait_cuts() -> u64 {
    WAIT_CUTS.load(Ordering::Relaxed)
}

/// A strengthening of the accesses made at one site (a candidate repair of
/// a robustness violation, see `robust::repair`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Strengthen {
    /// The access takes this order (a compare-exchange: as its success
    /// order, with the matching failure order).
    Order(MemOrder),
    /// A seq_cst fence comes right before the access.
    FenceBefore,
}

/// Whether some run checks a candidate repair (`Shared::strengthen` is not
/// empty somewhere): the hot path looks no further otherwise.
pub(crate) static STRENGTHENING: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// `action` with the strengthenings given for `site` that change its order.
pub(crate) fn strengthened(action: Action, how: Strengthen) -> Action {
    let Strengthen::Order(ord) = how else {
        return action;
    };
    match action {
        Action::Load { loc, ord: o } if o.is_atomic() => Action::Load { loc, ord },
        Action::Store { loc, val, ord: o } if o.is_atomic() => Action::Store { loc, val, ord },
        Action::Rmw {
            loc,
            op,
            operand,
            width,
            ..
        } => Action::Rmw {
            loc,
            op,
            operand,
            width,
            ord,
        },
        Action::Cas {
            loc,
            expected,
            new,
            weak,
            lock: false,
            take: false,
            ..
        } => Action::Cas {
            loc,
            expected,
            new,
            success: ord,
            failure: ord.read_half(),
            weak,
            lock: false,
            take: false,
        },
        other => other,
    }
}
