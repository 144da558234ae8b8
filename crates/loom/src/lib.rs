//! loom 0.7's public API, implemented with c11check.
//!
//! Patch loom with it and a project's loom tests run under c11check
//! unchanged, in every crate of the dependency graph that uses loom:
//!
//! ```toml
//! [patch.crates-io]
//! loom = { path = ".../c11check/crates/loom" }
//! ```
//!
//! Differences from loom, all in the direction of the C/C++ model: SeqCst is
//! SeqCst (loom treats it as AcqRel, so its SeqCst tests that fail under
//! loom pass here); executions are explored once each by reads-from, so the
//! bounds of `model::Builder` that tame loom's own search (`max_branches`,
//! `max_permutations`, checkpoints) are accepted and ignored;
//! `preemption_bound` (`LOOM_MAX_PREEMPTIONS`) bounds the exploration as in
//! loom (every execution loom reaches within it is explored, each once),
//! and `max_duration` and `max_threads` are honoured.

pub mod alloc;
pub mod cell;
pub mod hint;
pub mod lazy_static;
pub mod model;
pub mod sync;
pub mod thread;

pub mod future;

pub use model::model;

/// loom's limit on threads; c11check has none, this is only for code that reads it.
pub const MAX_THREADS: usize = 64;

/// Makes the current execution stop here without being reported (loom's
/// `skip_branch`): the thread waits forever, as a failed assumption.
#[track_caller]
pub fn skip_branch() {
    c11check_runtime::block(
        c11check_model::BlockReason::Assume,
        c11check_runtime::Site::caller(),
    );
}

/// Accepted for compatibility: c11check always explores.
pub fn explore() {}
/// Accepted for compatibility: c11check always explores.
pub fn stop_exploring() {}

#[doc(hidden)]
pub use c11check as __c11check;

/// `thread_local!`: each modelled thread gets its own value.
#[macro_export]
macro_rules! thread_local {
    ($($t:tt)*) => { $crate::__c11check::thread_local!($($t)*); };
}

/// `lazy_static!`: the value is made on first use in each execution.
#[macro_export]
macro_rules! lazy_static {
    () => {};
    ($(#[$attr:meta])* static ref $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::lazy_static!(@one [$(#[$attr])*] [] $name, $t, $init);
        $crate::lazy_static!($($rest)*);
    };
    ($(#[$attr:meta])* pub static ref $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::lazy_static!(@one [$(#[$attr])*] [pub] $name, $t, $init);
        $crate::lazy_static!($($rest)*);
    };
    ($(#[$attr:meta])* pub ($($vis:tt)+) static ref $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::lazy_static!(@one [$(#[$attr])*] [pub($($vis)+)] $name, $t, $init);
        $crate::lazy_static!($($rest)*);
    };
    (@one [$(#[$attr:meta])*] [$($vis:tt)*] $name:ident, $t:ty, $init:expr) => {
        $(#[$attr])*
        $($vis)* static $name: $crate::lazy_static::Lazy<$t> = $crate::lazy_static::Lazy::new({
            fn __init() -> $t {
                $init
            }
            __init
        });
    };
}
