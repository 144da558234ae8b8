//! c11check: run concurrent Rust code under a model checker for the C/C++20
//! memory model.
//!
//! Replace `std::sync::atomic`, `std::sync`, `std::thread` and
//! `std::cell::UnsafeCell` with the types of the same names under
//! `c11check::`, and wrap the test body in [`model`]:
//!
//! ```
//! use c11check::sync::atomic::{AtomicUsize, Ordering};
//! use c11check::sync::Arc;
//! use c11check::thread;
//!
//! c11check::model(|| {
//!     let n = Arc::new(AtomicUsize::new(0));
//!     let n2 = n.clone();
//!     let t = thread::spawn(move || n2.fetch_add(1, Ordering::Relaxed));
//!     n.fetch_add(1, Ordering::Relaxed);
//!     t.join().unwrap();
//!     assert_eq!(n.load(Ordering::Relaxed), 2);
//! });
//! ```
//!
//! Every execution the memory model allows is explored once (executions that
//! differ only in the order of independent steps count once); a panic, a data
//! race on an [`cell::UnsafeCell`], a deadlock or a livelock fails the test
//! with a report that shows the execution and a string that replays it.

pub mod cell;
pub mod hint;
pub mod model;
pub mod sync;
pub mod thread;

pub use model::model;

/// `std::thread_local!` under the model: each modelled thread gets its own
/// value, made on first use and dropped when the thread ends.
#[macro_export]
macro_rules! thread_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr }; $($rest:tt)*) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init; $($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr }) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init;);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => {
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> = {
            fn __init() -> $t {
                $init
            }
            $crate::thread::LocalKey::new(__init)
        };
        $crate::thread_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init;);
    };
}

/// Object creation tracking: install [`alloc::TrackingAllocator`] as the
/// global allocator of a test crate and an access that is not ordered after
/// the creation of the object it reaches (a fresh allocation published with
/// a relaxed store, say) is reported as a data race.
pub mod alloc {
    pub use c11check_runtime::alloc::TrackingAllocator;
}
