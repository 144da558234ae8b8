//! The location cell of a facade object: which location of the current
//! execution the object is bound to (lazily, on first use), and the
//! execution generations that make a binding from another run stale.

use crate::report::Made;
use crate::Site;
use c11check_model::Loc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The location of a facade object in the current execution. Objects are
/// bound lazily, on their first visible use, so `const fn` constructors (and
/// statics) work; a binding is valid for one execution only.
#[derive(Debug, Default)]
pub struct LocCell {
    /// `(generation << 32) | loc`, zero when unbound.
    pub(crate) packed: AtomicU64,
    /// What the object is and where the program made it, for reports.
    pub(crate) made: Option<Made>,
    /// The address of the object in the program's memory, when the cell
    /// lives elsewhere (a C program's location, kept in a table); 0: the
    /// cell's own address is the object's.
    pub(crate) object: usize,
    /// Whether the value the object holds when it is next bound is
    /// indeterminate (heap memory nothing wrote yet): a load reading that
    /// initial value reads uninitialized memory.
    pub(crate) indeterminate: std::sync::atomic::AtomicBool,
}

/// Execution generations: a binding made in another execution is stale.
static GENERATION: AtomicU32 = AtomicU32::new(1);

/// The most workers of a parallel exploration.
pub const MAX_JOBS: u32 = 64;

thread_local! {
    /// This OS thread's number when it is a worker of a parallel
    /// exploration.
    static WORKER: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// Makes this OS thread worker `w` of a parallel exploration (`None`: no
/// longer one).
pub(crate) fn set_worker(w: Option<u32>) {
    WORKER.with(|c| c.set(w));
}

pub(crate) fn next_generation() -> u32 {
    GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// Panics with what to do when a parallel worker uses an object bound in
/// an earlier execution: one that outlives executions (a static, or one
/// captured by the model's closure), which the workers would share. (On
/// its first use in a run it is unbound: the second execution that uses it
/// stops, on whichever worker, so the verdict does not depend on which
/// worker ran what.)
pub(crate) fn refuse_shared_object(cell: &LocCell) {
    if WORKER.with(|c| c.get()).is_none() {
        return;
    }
    if cell.packed.load(Ordering::Relaxed) >> 32 != 0 {
        panic!(
            "{SHARED_OBJECT_REFUSED} (a static atomic, `OnceLock`, `LazyLock`, \
             `lazy_static!`, or one captured by the model's closure) is used by several \
             parallel workers (`Builder::jobs` / C11CHECK_JOBS above 1), which would share \
             its state: run this test on one worker (`jobs(1)`), or make the object inside \
             the closure"
        );
    }
}

/// How the refusal of an object shared by parallel workers begins (a
/// re-run that meets it reports it, not a nondeterministic test).
pub(crate) const SHARED_OBJECT_REFUSED: &str =
    "c11check: a c11check object made outside the model's executions";

impl LocCell {
    pub const fn new() -> Self {
        LocCell {
            packed: AtomicU64::new(0),
            made: None,
            object: 0,
            indeterminate: std::sync::atomic::AtomicBool::new(false),
        }
    }
    /// The cell of the object at `addr` in the program's memory (the cell
    /// itself lives elsewhere): creations, frees and names go by `addr`.
    pub const fn at(addr: usize) -> Self {
        LocCell {
            packed: AtomicU64::new(0),
            made: None,
            object: addr,
            indeterminate: std::sync::atomic::AtomicBool::new(false),
        }
    }
    /// Says whether the object's value is indeterminate at its next
    /// binding (memory nothing initialized): a load that reads the initial
    /// value is then reported.
    pub fn set_indeterminate(&self, on: bool) {
        self.indeterminate.store(on, Ordering::Relaxed);
    }
    /// The object's address in the program's memory.
    pub(crate) fn object_addr(&self) -> usize {
        if self.object != 0 {
            self.object
        } else {
            self as *const LocCell as usize
        }
    }
    /// The cell of a `what` (a type name: `AtomicUsize`) made at `site`;
    /// reports name the location after them.
    pub const fn described(what: &'static str, site: Site) -> Self {
        LocCell {
            packed: AtomicU64::new(0),
            made: Some((what, site)),
            object: 0,
            indeterminate: std::sync::atomic::AtomicBool::new(false),
        }
    }
    /// The location bound to this cell in execution `generation`, if any
    /// (a front end that keeps the current generation itself asks this
    /// instead of [`bound_location`](crate::bound_location)).
    #[inline]
    pub fn bound_in(&self, generation: u32) -> Option<Loc> {
        self.get(generation)
    }
    #[inline]
    pub(crate) fn get(&self, generation: u32) -> Option<Loc> {
        let p = self.packed.load(Ordering::Relaxed);
        ((p >> 32) as u32 == generation).then_some(Loc(p as u32))
    }
    /// Forgets the binding: the next use binds a new location (a C
    /// program's stack slot reused by another thread).
    pub fn unbind(&self) {
        self.packed.store(0, Ordering::Relaxed);
    }
    pub(crate) fn set(&self, generation: u32, loc: Loc) {
        self.packed.store(
            ((generation as u64) << 32) | loc.0 as u64,
            Ordering::Relaxed,
        );
    }
}
