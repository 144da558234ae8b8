//! c11check: run concurrent Rust code under a model checker for the C/C++20
//! memory model.
//!
//! Replace `std::sync::atomic`, `std::sync`, `std::thread` and
//! `std::cell::UnsafeCell` with the types of the same names under
//! `c11check::`, and wrap the test body in [`model()`]:
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
//!
//! # Settings
//!
//! `c11check::model::Builder` sets the explorer (every execution, or
//! `random(n)` executions from a `seed`, each consistent; a report names the
//! seed of the failing iteration), the memory model
//! (`memory_model(Model::Rc11)`, with `c11check::model::Model`: `Cpp20`, `Rc11`, `Sc`),
//! budgets (`max_executions`, `max_duration`), the per-thread step bound, the
//! fiber stack size, a replay string and a Graphviz file for the failing
//! execution (`dot`); each can also be set by an environment variable
//! (`C11CHECK_ITERATIONS`, `C11CHECK_SEED`, `C11CHECK_MODEL`, `C11CHECK_MAX_EXECUTIONS`, `C11CHECK_MAX_DURATION`,
//! `C11CHECK_MAX_STEPS`, `C11CHECK_STACK_SIZE`, `C11CHECK_REPLAY`, `C11CHECK_DOT`,
//! `C11CHECK_LOG=1` for progress and a summary; a run longer than 10 s prints a progress line every 10 s anyway, from inside a long execution too). Budgets are honoured inside an execution; a run they cut short passes what it explored and says so on stderr.
//!
//! # What is modelled
//!
//! Provided today: all integer atomics, `AtomicBool` and `AtomicPtr` (every
//! std method but `as_ptr`; what a thread writes through `get_mut` becomes its
//! store before its next operation), `fence`, `compiler_fence`; `thread::{spawn,
//! Builder, scope, JoinHandle, current, yield_now, park, sleep}` (a joined
//! panic is an `Err` as in std) and `thread_local!`; `sync::{Arc, Weak, Mutex,
//! RwLock, Condvar, Barrier, Once, OnceLock, LazyLock, mpsc}` with std's
//! poisoning (`Condvar` explores spurious wake-ups, `wait_timeout` and
//! `recv_timeout` explore timing out; a `Condvar` or `Barrier` waiter, an
//! `mpsc` receive or bounded send, an `RwLock` reader or writer and a
//! `Mutex::lock` run only once they can go on, so waiting costs no
//! execution); `cell::UnsafeCell` with loom's
//! `with`/`with_mut`; `hint::spin_loop`. Statics built with these `const fn`
//! constructors start fresh in every execution. Each modelled thread runs on a
//! 1 MiB fiber stack; deeper recursion overflows it, and the process stops
//! with a message that names the modelled thread and its stack size (as std
//! does for its own threads, it cannot go on); raise `C11CHECK_STACK_SIZE` or
//! `Builder::stack_size` for such tests. Spin loops must call
//! `yield_now` or `spin_loop`, which tell the checker that the thread waits for
//! another: a turn of the loop (from one call at a place to the next call at
//! the same place) that only repeats the reads of the turn before, from the
//! same stores, is cut, so waiting terminates. A loop that gives up after a
//! fixed number of such turns should therefore not call them. A loop without
//! the hint that reaches the step bound repeating a turn that only reads stops
//! the run with a report of kind `FailureKind::SpinWithoutHint`. A weak
//! compare-exchange fails spuriously at most once per store its thread reads,
//! whatever the thread does between two attempts, so every retry loop ends
//! (`Builder::spurious_failures(false)`, `C11CHECK_SPURIOUS_FAILURES=0`, treats
//! it as strong, as CDSChecker and loom do: fewer executions, but a caller that
//! takes one failure as proof of a change is no longer caught). An `Arc` made during an execution and
//! never released is reported as a leak. `Arc` clones and drops do not
//! multiply executions: the explorer runs one order of the reference-count
//! updates per choice of the owner that drops last (3 × 3 `fetch_add` through
//! `Arc` is 1,680 executions, as with scoped threads; loom explores every
//! order). A test that reads a count (`strong_count`, `get_mut`,
//! `try_unwrap`, `Weak::upgrade`) or has a `SeqCst` fence can observe that
//! order; the exploration then starts over and explores every order.
//!
//! # Object creation
//!
//! Creating an object writes it. A thread that reaches a fresh object without
//! being ordered after its creation (a `Box` published through a relaxed
//! `AtomicPtr` store, say) races with that write, and may read uninitialized
//! memory in C or C++; CDSChecker, C11Tester and loom report it. `const fn`
//! constructors cannot tell the model when an object is made, but the
//! allocation of its memory can: install the tracking allocator in the test
//! crate and such accesses are reported as data races, in both engines:
//!
//! ```rust,no_run
//! #[global_allocator]
//! static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;
//! ```
//!
//! It costs about 5–10% of exhaustive exploration time on the benchmark
//! suite (allocations made outside modelled threads are not looked at).
//!
//! # Speed
//!
//! Long explorations run faster when the test binary is built with
//! whole-program optimisation, as the benchmark harness is (about 9% fewer
//! instructions on the suite's programs): add a profile to the test crate's
//! workspace and run `cargo test --profile check`.
//!
//! ```toml
//! [profile.check]
//! inherits = "release"
//! lto = "fat"
//! codegen-units = 1
//! ```
//!
//! # Random mode
//!
//! Random mode (`Builder::random(n)`, or `C11CHECK_ITERATIONS=n`) runs `n`
//! random executions on the live memory, C11Tester's operational model:
//! nothing is replayed and memory stays bounded however long an execution is
//! (10 million stores against a reader: 6 MiB, see `BENCHMARKS.md`). The order
//! SeqCst operations execute in bounds what later reads may return, which is
//! stronger than C++20 (never a forbidden execution; on six of the 221 litmus
//! tests a SeqCst outcome is not produced), but race detection uses C++20's
//! happens-before, in which SeqCst operations on different locations order
//! nothing. A report carries the iteration's seed as its replay string
//! (`l1:<seed>`) and every operation of the failing execution with its value,
//! the store it read (`T1 #7: load(Relaxed) loc2 = 1 (reads T0 #3)`, in the
//! exhaustive engine's words) and source line, and
//! `dot` draws them (a live run keeps no graph: the execution is run again from
//! its seed to record them, up to 100,000). A run goes through all its iterations and reports each distinct
//! bug once, with how many iterations hit it. A wait loop that can only read
//! again what it read (nothing is left to store what it waits for) ends its
//! execution as soon as every other thread has finished, waits or spins too,
//! rather than at the step bound; a compare-exchange that fails in such a
//! loop counts as a read, once a turn repeats the turn before (a loop that
//! retries with the value its failure read has not repeated itself), and one
//! that may have failed spuriously does not; a thread's panic outranks the hang it
//! leaves behind (a lock it never released). `Builder::pct(d)` (or
//! `C11CHECK_PCT=d`) schedules with PCT of depth `d` instead of uniformly at
//! random. Either way a thread creation and an `Arc::clone` are taken at once
//! rather than being scheduling points (they commute with every other
//! thread's step), so the threads a loop spawns start together. Under
//! uniform scheduling a load with nothing new to read (another thread wrote
//! the location, and not since this thread last accessed it or before it
//! synchronised) waits, half of the time, until a store comes or for up to
//! 32 steps: readers also meet stores made long after they started (a steal
//! reaching a resized deque). It is scheduling only, no outcome is added or
//! lost; `Builder::park_loads(false)` (`C11CHECK_PARK_LOADS=0`) turns it
//! off, and the replay string then ends in `:uniform`. Pruning is conservative (every execution stays reachable); a thread
//! that never synchronises can keep every store of a location alive, and
//! `Builder::prune_window(k)` (`C11CHECK_PRUNE_WINDOW=k`) then bounds memory by
//! keeping each thread's newest `k` stores per location readable (C11Tester's
//! aggressive mode: some executions become unreachable, none forbidden
//! appears). `Builder::graph_random()` (`C11CHECK_LIVE=0`) runs the random
//! executions as execution graphs instead: each checked for consistency and
//! replayed, slower, complete for small tests, with full traces. `c11check
//! litmus --random N` runs litmus files on the live memory (`--graph` for
//! graphs).
//!
//!
//! # Memory reclamation: what is and is not checked
//!
//! c11check sees the operations of its own types and, with the tracking
//! allocator installed, the allocation and the free of the blocks they live
//! in. An access through a modelled type (an `AtomicPtr` or `AtomicUsize`
//! field, an `UnsafeCell`) to an object whose block a modelled thread freed
//! is reported: after the free, as a use after free
//! (`FailureKind::UseAfterFree`); not ordered before it, as a data race with
//! the free (a Treiber pop that frees a node another thread is still about
//! to read). Freed blocks are held back from the system allocator until the
//! execution ends, so the dangling access still finds its object. Not
//! checked: accesses through plain fields and raw pointers (c11check does
//! not see them; run the test under Miri or AddressSanitizer for those), a
//! block grown or moved by `realloc`, and frees without the tracking
//! allocator. Free nodes with a scheme whose safety does not depend on
//! timing (hazard pointers, epochs, reference counts), and test that scheme
//! with c11check.
//!
//! # Misuse
//!
//! A model started inside a model, a c11check type used on a thread made with
//! `std::thread::spawn` or outside any model, panic with a message that says
//! what to use instead. All modelled threads share one OS thread: a
//! `std::sync::Mutex` (or other std blocking type) held across a c11check
//! operation blocks it for good; when a run stands still for 10 s, c11check
//! says which modelled thread was running where.
//!
//! # How the cost grows
//!
//! One execution of a program with many threads costs more than its number of
//! operations: each write checks the earlier reads of its location for
//! backward revisits (the executions where they read it instead), and keeps a
//! copy of the graph for each one allowed. With n threads updating one
//! location that is O(n²) checks and graphs for the first execution, work the
//! later executions then do not repeat (80 threads × one `fetch_add`: several
//! seconds and hundreds of MiB before the first execution ends). Budgets
//! (`max_duration`) are checked inside this work, and a progress line comes
//! every 10 s.
//!

#![deny(missing_docs)]

pub mod cell;
pub mod hint;
pub mod model;
pub mod sync;
pub mod thread;

pub use model::model;

/// Calls `object` `name` in the reports of the current execution: its
/// locations show as `head` instead of `loc3` (a struct holding several
/// modelled objects numbers them in the order they lie in memory:
/// `queue.1`, `queue.2`; a name given to a field wins over its struct's).
/// Without a name, a location's line in the report's legend still says
/// which type it is and where it was made. Call it in the model's closure
/// (each execution starts unnamed); outside a model it does nothing.
///
/// ```
/// use c11check::sync::atomic::{AtomicUsize, Ordering};
/// c11check::model(|| {
///     let head = AtomicUsize::new(0);
///     c11check::name(&head, "head");
///     head.store(1, Ordering::Relaxed);
/// });
/// ```
pub fn name<T: ?Sized>(object: &T, name: impl Into<std::borrow::Cow<'static, str>>) {
    c11check_runtime::name_object(
        object as *const T as *const u8 as usize,
        std::mem::size_of_val(object),
        name.into(),
    );
}

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
