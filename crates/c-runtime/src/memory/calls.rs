//! Each modelled thread's instrumented calls in progress, from
//! ThreadSanitizer's function entry and exit hooks: which call of a
//! function a loop turn runs in. Optimised code keeps no frame pointers,
//! so the return addresses on the stack cannot be found cheaply; a
//! helper called several times in a row by one function (each call the
//! same instructions, reading the same) is no loop, and its calls differ
//! only in where they were made from.

use std::cell::RefCell;

/// Calls deeper than this are not kept (a recursion that deep is no wait
/// loop's; the count goes on, so that exits match their entries).
const MAX_DEPTH: usize = 1024;

thread_local! {
    /// Per modelled thread: where its calls in progress were made, outermost
    /// first, and how deep it is.
    static CALLS: RefCell<Vec<(Vec<usize>, usize)>> = const { RefCell::new(Vec::new()) };
}

fn with_calls<R>(f: impl FnOnce(&mut (Vec<usize>, usize)) -> R) -> R {
    let t = crate::process::tls::current_thread() as usize;
    CALLS.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() <= t {
            c.resize_with(t + 1, Default::default);
        }
        f(&mut c[t])
    })
}

/// The running thread called a function from `pc`.
pub fn enter(pc: usize) {
    with_calls(|(pcs, depth)| {
        if *depth < MAX_DEPTH {
            pcs.push(pc);
        }
        *depth += 1;
    });
}

/// The running thread's innermost call returned.
pub fn exit() {
    with_calls(|(pcs, depth)| {
        if *depth == 0 {
            return;
        }
        *depth -= 1;
        if *depth < MAX_DEPTH {
            pcs.pop();
        }
    });
}

/// A hash of where the running thread's calls in progress were made.
pub fn chain() -> u64 {
    with_calls(|(pcs, depth)| {
        pcs.iter().fold(*depth as u64, |h, &pc| {
            (h.rotate_left(13) ^ pc as u64).wrapping_mul(0x9E3779B97F4A7C15)
        })
    })
}

/// Thread `t` starts (or an execution starts over): no calls in progress.
pub fn start(t: usize) {
    CALLS.with(|c| {
        if let Some(e) = c.borrow_mut().get_mut(t) {
            e.0.clear();
            e.1 = 0;
        }
    });
}

/// A new execution: no thread has calls in progress.
pub fn reset() {
    CALLS.with(|c| {
        for e in c.borrow_mut().iter_mut() {
            e.0.clear();
            e.1 = 0;
        }
    });
}
