//! Runs Rust closures under the c11check explorers.
//!
//! Each modelled thread is a stackful coroutine (a fiber, from `corosensei`)
//! running on the test's OS thread. A fiber runs until its next visible
//! operation (an atomic access, a fence, a spawn, a join, ...), hands that
//! operation to the explorer as an [`Action`](c11check_model::Action) and is suspended; it is resumed
//! with the operation's result once the explorer has added the event to the
//! execution graph and decided what it reads.
//!
//! The explorer moves between graphs (pending branches, revisits). When it
//! does, `FiberDriver::begin` throws the fibers away and runs the program
//! again from the start, feeding every thread the results recorded in the
//! graph, in an order that respects program order and reads-from (so plain
//! memory, which the fibers really read and write, evolves as in the modelled
//! execution).
//!
//! Facade types (`c11check::sync::atomic`, ...) talk to the runtime through
//! the free functions of this crate ([`access`], [`spawn`], [`join`], ...).

pub mod addr_table;
mod cell;
mod console;
mod operations;
mod panics;
mod protocol;
mod replay;
mod shared;
mod site;

pub mod alloc;
pub mod barrier;
pub mod condvar;
mod config;
mod driver;
mod fiber;
mod judge;
mod live_run;
pub mod locks;
pub mod once;
mod report;
mod robust;
mod robust_live;
mod run;
pub mod settings;
mod watchdog;

pub use c11check_explore::Shard;
pub use cell::{LocCell, MAX_JOBS};
pub use config::{RunConfig, Strategy, Summary};
pub use console::tell_user;
pub use driver::{ExecutionState, FiberDriver, RuntimeOptions};
pub use fiber::overflow::set_access_site;
pub use operations::{
    access, access_bound, block, bound_loc, exit_program, fail_execution, failed_turn_hint, fence,
    finish_thread, join, join_wait, loop_found_hint, loop_hint, set_before_op_hook, set_waiting,
    spawn, spin_hint, store_to, track_alloc, track_free, wait_lock, yielded, TIMED_WAIT,
};
pub use panics::panic_message;
pub use protocol::{
    set_fiber_hooks, set_signal_context_hooks, wait_cuts, FiberHook, Outcome, Strengthen,
    ThreadMain, ThreadResult,
};
pub use report::CHOICE_MARK;
pub use report::{
    check_replay, decode_replay, describe_event, encode_replay, Failure, FailureKind, Report,
};
pub use run::run;
pub use shared::{
    annotate_benign_race, bound_location, current_thread, generation, in_model, name_object,
    set_heap_namer, weak_cas_may_fail, SCOPE_PANIC,
};
pub use site::{set_pc_change_resolver, set_pc_resolver, Site};
