//! The fibers both drivers run modelled threads on: making one, retiring
//! one, and forgetting what an abandoned execution leaves behind.

pub(crate) mod overflow;

use crate::panics::take_last_panic;
use crate::protocol::{FiberYielder, Outcome, Request, ThreadMain, ThreadResult};
use crate::shared::Shared;
use corosensei::stack::DefaultStack;
use corosensei::Coroutine;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

pub(crate) type Fiber = Coroutine<Outcome, Request, (), DefaultStack>;

/// Fiber stacks kept for reuse (making one is a syscall), one per thread
/// number: thread `t` runs on the same stack in every execution, so the
/// addresses of its locals are the same (a compiled program may store
/// them in atomics, and a replay must see the same values).
#[derive(Default)]
pub(crate) struct StackPool {
    by_thread: Vec<Option<DefaultStack>>,
}

impl StackPool {
    /// Thread `t`'s stack, if one was kept.
    fn take(&mut self, t: usize) -> Option<DefaultStack> {
        self.by_thread.get_mut(t).and_then(Option::take)
    }
    /// Keeps thread `t`'s stack for its next run.
    pub(crate) fn put(&mut self, t: usize, s: DefaultStack) {
        if self.by_thread.len() <= t {
            self.by_thread.resize_with(t + 1, || None);
        }
        self.by_thread[t] = Some(s);
    }
}

/// A fiber running `body` as modelled thread `t`, on a pooled stack (making
/// one is a syscall) or a new one of `stack_size` bytes. The thread's
/// result, or its panic, ends up in `shared`.
pub(crate) fn new_fiber(
    shared: &Rc<RefCell<Shared>>,
    t: usize,
    body: ThreadMain,
    stacks: &mut StackPool,
    stack_size: usize,
) -> Fiber {
    crate::fiber::overflow::install();
    let stack = stacks.take(t).unwrap_or_else(|| {
        DefaultStack::new(stack_size).expect("c11check: cannot allocate a fiber stack")
    });
    let shared = shared.clone();
    Fiber::with_stack(stack, move |y: &FiberYielder, _first: Outcome| {
        {
            let mut s = shared.borrow_mut();
            if s.yielders.len() <= t {
                s.yielders.resize(t + 1, None);
            }
            s.yielders[t] = Some(y as *const FiberYielder);
        }
        let result: ThreadResult = catch_unwind(AssertUnwindSafe(body));
        crate::operations::run_before_op_hook();
        let mut s = shared.borrow_mut();
        if let Err(payload) = &result {
            let (msg, place) =
                take_last_panic().unwrap_or_else(|| (crate::panic_message(payload.as_ref()), None));
            s.panics.push((t as u32, msg, place));
        }
        if s.results.len() <= t {
            s.results.resize_with(t + 1, || None);
        }
        s.results[t] = Some(result);
    })
}

/// Gives a fiber's stack back to the pool; a fiber suspended mid-thread is
/// reset first.
pub(crate) fn retire(mut f: Fiber, t: usize, stacks: &mut StackPool) {
    if f.started() && !f.done() {
        // SAFETY: the fiber is suspended inside user code that must never run
        // again (its execution is over). Resetting leaks the objects on its
        // stack instead of unwinding through user destructors that could call
        // back into the model.
        unsafe { f.force_reset() };
    }
    stacks.put(t, f.into_stack());
}

/// Forgets the yielders and thread results of an abandoned execution: they
/// hold user values whose destructors may use modelled types, and no
/// modelled thread runs any more, so they are leaked, not dropped.
pub(crate) fn forget_results(shared: &Rc<RefCell<Shared>>) {
    let mut s = shared.borrow_mut();
    s.yielders.clear();
    for r in s.results.drain(..) {
        std::mem::forget(r);
    }
}
