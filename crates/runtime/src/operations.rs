//! The visible operations a facade performs on a modelled thread's behalf
//! (accesses, fences, spawns, joins, waits, the end of a thread): each
//! suspends the thread's fiber with a [`Request`] and returns the
//! driver's [`Outcome`], or takes it from the graph being replayed without
//! a switch (`replay::replay_inline`).

use crate::cell::refuse_shared_object;
use crate::panics::panic_message;
use crate::protocol::{
    strengthened, Outcome, Request, Strengthen, ThreadMain, ThreadResult, STRENGTHENING,
};
use crate::shared::{generation, in_model, with_shared};
use crate::{Failure, FailureKind, LocCell, Site};
use c11check_model::{Action, BlockReason, Loc, MemOrder, Value};

/// A function the facade runs in a thread before each of its visible
/// operations and when it ends (to publish values written through `get_mut`).
static BEFORE_OP: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Registers the facade's hook (see `BEFORE_OP`); the first one wins.
pub fn set_before_op_hook(f: fn()) {
    let _ = BEFORE_OP.set(f);
}

/// Runs the hook. It may perform visible operations itself (which run it
/// again): it must reach a state where it has nothing left to do.
pub(crate) fn run_before_op_hook() {
    if let Some(f) = BEFORE_OP.get() {
        f();
    }
}

/// A visible store to a location known by number (for values the facade
/// publishes on a thread's behalf).
pub fn store_to(loc: Loc, val: Value, site: Site) {
    suspend(Request::Act {
        action: Action::Store {
            loc,
            ord: MemOrder::Relaxed,
            val,
        },
        bind: None,
        site,
    });
}

fn suspend(mut req: Request) -> Outcome {
    if !matches!(req, Request::Spin { .. }) {
        run_before_op_hook();
    }
    // A candidate repair: the access made here strengthened.
    if let Request::Act { action, site, .. } = &mut req {
        if STRENGTHENING.load(std::sync::atomic::Ordering::Relaxed) && action.loc().is_some() {
            let hows: smallvec::SmallVec<[Strengthen; 2]> = with_shared(|s| {
                s.strengthen
                    .iter()
                    .filter(|(at, _)| at == site)
                    .map(|&(_, how)| how)
                    .collect()
            });
            for how in hows {
                if how == Strengthen::FenceBefore {
                    fence(MemOrder::SeqCst, *site);
                }
                *action = strengthened(*action, how);
            }
        }
    }
    let y = with_shared(|s| {
        assert!(
            s.in_fiber,
            "c11check: a modelled type was used outside the model's threads"
        );
        if let Request::Act { action, bind, site } = req {
            if let Some(outcome) = crate::replay::replay_inline(s, action, bind, site) {
                return Err(outcome);
            }
        }
        Ok(s.yielders[s.current as usize])
    });
    let y = match y {
        Ok(y) => y.expect("c11check: no running fiber"),
        Err(outcome) => return outcome,
    };
    // SAFETY: the pointer was taken from the `Yielder` the running coroutine
    // received; that coroutine is the one executing this code, so the yielder
    // is alive and used from its own stack.
    unsafe { (*y).suspend(req) }
}

/// Fails the execution with a bug of `kind` the running modelled thread
/// ran into (a C program's use after free): the thread ends there, as at
/// [`finish_thread`], and the report says `message`.
pub fn fail_execution(kind: FailureKind, message: String) -> ! {
    with_shared(|s| {
        let t = s.current;
        s.failure.get_or_insert(Failure {
            kind,
            message: message.clone(),
            threads: vec![t],
            events: vec![],
        });
    });
    finish_thread(Err(Box::new(message)))
}

/// Ends the calling modelled thread at once with `result`, as if its body
/// had returned it (a panic payload fails the execution), without
/// unwinding its stack: a C program's `abort()` or `exit()` runs no
/// destructor of the frames it leaves, and C++ frames would not let a Rust
/// panic through them (a joinable `std::thread` on the way terminates).
pub fn finish_thread(result: ThreadResult) -> ! {
    run_before_op_hook();
    let y = with_shared(|s| {
        assert!(
            s.in_fiber,
            "c11check: a modelled thread ended outside the model's threads"
        );
        let t = s.current as usize;
        if let Err(payload) = &result {
            let msg = panic_message(payload.as_ref());
            s.panics.push((t as u32, msg, None));
        }
        if s.results.len() <= t {
            s.results.resize_with(t + 1, || None);
        }
        s.results[t] = Some(result);
        s.yielders[t]
    });
    let y = y.expect("c11check: no running fiber");
    // SAFETY: as in `suspend`: the yielder of the coroutine running this.
    unsafe { (*y).suspend(Request::Finish) };
    unreachable!("c11check: a finished thread was resumed")
}

/// Records that modelled thread `t` crashed (a fault in its code): its
/// failure, as a panic's. Its fiber returns next.
pub(crate) fn record_crash(t: u32, msg: String) {
    with_shared(|s| {
        s.panics.push((t, msg.clone(), None));
        let t = t as usize;
        if s.results.len() <= t {
            s.results.resize_with(t + 1, || None);
        }
        s.results[t] = Some(Err(Box::new(msg)));
    });
}

/// Performs a visible memory access on the object whose location is `cell`
/// (first bound with initial value `init`). `action` receives the location.
pub fn access(
    cell: &LocCell,
    init: Value,
    action: impl FnOnce(Loc) -> Action,
    site: Site,
) -> Outcome {
    let generation = with_shared(|s| s.generation);
    match cell.get(generation) {
        Some(loc) => suspend(Request::Act {
            action: action(loc),
            bind: None,
            site,
        }),
        None => {
            refuse_shared_object(cell);
            suspend(Request::Act {
                action: action(Loc(u32::MAX)),
                bind: Some((cell as *const LocCell, init)),
                site,
            })
        }
    }
}

/// The location `cell` is bound to in the current execution, with the
/// execution's number, if the cell was accessed in it.
pub fn bound_loc(cell: &LocCell) -> Option<(u32, Loc)> {
    let generation = with_shared(|s| s.generation);
    cell.get(generation).map(|loc| (generation, loc))
}

/// An access of `loc`, bound in execution `generation` (see [`bound_loc`]),
/// if that execution is still the current one (an access left over from
/// an earlier execution is dropped).
pub fn access_bound(
    generation: u32,
    loc: Loc,
    action: impl FnOnce(Loc) -> Action,
    site: Site,
) -> Option<Outcome> {
    if !in_model() || with_shared(|s| s.generation) != generation {
        return None;
    }
    Some(suspend(Request::Act {
        action: action(loc),
        bind: None,
        site,
    }))
}

/// Records that an object the model checks for leaks (an `Arc` allocation)
/// was made; it must be released with [`track_free`] before the execution ends.
pub fn track_alloc(key: usize, what: &'static str, site: Site) {
    with_shared(|s| s.live.push((key, what, site)));
}

/// Records that a tracked object was released.
pub fn track_free(key: usize) {
    with_shared(|s| {
        if let Some(i) = s.live.iter().position(|l| l.0 == key) {
            s.live.swap_remove(i);
        }
    });
}

/// Marks the calling thread as waiting for `what` (a facade's wait loop,
/// e.g. "a condition variable's notification"), or no longer waiting: if the
/// loop can never end, the execution is reported as a deadlock naming it.
pub fn set_waiting(what: Option<&'static str>) {
    with_shared(|s| {
        let t = s.current as usize;
        if s.waits.len() <= t {
            s.waits.resize(t + 1, None);
        }
        s.waits[t] = what;
    });
}

/// What [`set_waiting`] is given for a wait that may also time out: when
/// nothing ends it, the execution is not a bug (the timeout is explored).
pub const TIMED_WAIT: &str = "a timed wait";

/// A fence with ordering `ord`.
pub fn fence(ord: MemOrder, site: Site) {
    suspend(Request::Act {
        action: Action::Fence { ord },
        bind: None,
        site,
    });
}

/// Blocks the calling thread for good in this execution (a failed assume).
pub fn block(reason: BlockReason, site: Site) -> ! {
    suspend(Request::Act {
        action: Action::Block { reason },
        bind: None,
        site,
    });
    unreachable!("c11check: a blocked thread was resumed")
}

/// The running modelled thread ends the program with `status` (a C
/// program's `exit()`): it stops here, the other threads run as far as
/// they can (the exit is delayed, as a scheduler may), and then the
/// execution ends; a thread left waiting or spinning is no deadlock or
/// livelock then, and nobody's `join` of the exiting thread returns.
pub fn exit_program(status: i32, site: Site) -> ! {
    with_shared(|s| {
        let t = s.current;
        s.exited.get_or_insert((t, status));
    });
    block(BlockReason::Exit, site)
}

/// A lock acquisition found the lock at `cell` held. Exhaustive exploration
/// stops the thread here (it schedules an acquisition while the lock is held
/// only when no other thread can run, so this shows a deadlock); a live
/// random execution resumes it once the lock has been written again, and the
/// caller retries.
pub fn wait_lock(cell: &LocCell, site: Site) {
    let loc = cell.get(generation());
    with_shared(|s| s.last_lock = loc);
    suspend(Request::Act {
        action: Action::Block {
            reason: BlockReason::LockHeld,
        },
        bind: None,
        site,
    });
}

/// Starts a modelled thread; returns its number.
pub fn spawn(main: ThreadMain, site: Site) -> u32 {
    suspend(Request::Spawn { main, site }).val as u32
}

/// Waits for thread `child` to finish and takes its result.
/// Waits for thread `child` to finish, leaving its result for another join
/// (a C program's `pthread_join`, which keeps results itself); whether it
/// finished without a panic. Its panic, if any, still fails the execution.
pub fn join_wait(child: u32, site: Site) -> bool {
    suspend(Request::Act {
        action: Action::Join { child },
        bind: None,
        site,
    });
    with_shared(|s| {
        s.results
            .get(child as usize)
            .and_then(|r| r.as_ref())
            .is_some_and(|r| r.is_ok())
    })
}

/// Waits for thread `child` to finish and takes its result.
pub fn join(child: u32, site: Site) -> ThreadResult {
    suspend(Request::Act {
        action: Action::Join { child },
        bind: None,
        site,
    });
    with_shared(|s| {
        let r = s.results[child as usize]
            .take()
            .expect("c11check: a thread was joined twice");
        if r.is_err() {
            s.joined_panics.push(child);
        }
        r
    })
}

/// `yield_now` / `spin_loop`: marks the end of one iteration of a wait loop.
/// An iteration that only read what the previous one read is cut (that
/// execution is blocked; the one where a newer value arrives is explored).
/// The program yielded there: a preemption bound counts no preemption for
/// a switch right after it.
pub fn spin_hint(site: Site) {
    suspend(Request::Spin {
        site,
        yields: true,
        failed: false,
        cut: true,
        fresh: false,
    });
}

/// [`spin_hint`] where the program says the wait-loop turn that ends here
/// found nothing (`hint::failed_wait_turn`): robustness leaves the turn's
/// accesses (since the thread's previous hint) out if it wrote nothing
/// atomic, whether or not the next turn repeats it.
pub fn failed_turn_hint(site: Site) {
    suspend(Request::Spin {
        site,
        yields: true,
        failed: true,
        cut: true,
        fresh: false,
    });
}

/// The program yielded where its loop is no wait (it counts, see the C
/// runtime's `program_spin_hint`): nothing is cut, but a preemption bound
/// counts no preemption for a switch right after it.
pub fn yielded(site: Site) {
    suspend(Request::Spin {
        site,
        yields: true,
        failed: false,
        cut: false,
        fresh: false,
    });
}

/// [`loop_hint`] at a loop's head the runtime found just now: the turn
/// that ends here is the loop's first, which the next turn is compared
/// with; the thread's earlier hints at this place (the same code run in
/// an earlier call) mark no turns of this loop.
pub fn loop_found_hint(site: Site) {
    suspend(Request::Spin {
        site,
        yields: false,
        failed: false,
        cut: true,
        fresh: true,
    });
}

/// [`spin_hint`] for a place the runtime chose itself (a C loop's head),
/// where the program did not yield: a switch there is a preemption.
pub fn loop_hint(site: Site) {
    suspend(Request::Spin {
        site,
        yields: false,
        failed: false,
        cut: true,
        fresh: false,
    });
}
