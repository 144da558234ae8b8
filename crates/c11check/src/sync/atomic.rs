//! `std::sync::atomic` under the model: every access is an event of the
//! execution graph, and what a load returns is chosen by the explorer among
//! the stores the memory model allows.

pub use std::sync::atomic::Ordering;

use c11check_model::{Action, MemOrder, RmwOp, Value, Width};
use c11check_runtime::{access, LocCell, Site};

/// Whether the program's `compare_exchange_weak` is issued as weak (it
/// may fail spuriously) in this run: see `Builder::spurious_failures`.
fn weak() -> bool {
    c11check_runtime::weak_cas_may_fail()
}

/// A load's ordering; panics, as std does, on orderings loads cannot have.
pub(crate) fn load_order(o: Ordering) -> MemOrder {
    match o {
        Ordering::Release => panic!("there is no such thing as a release load"),
        Ordering::AcqRel => panic!("there is no such thing as an acquire-release load"),
        o => rmw_order(o),
    }
}

/// A store's ordering; panics, as std does, on orderings stores cannot have.
pub(crate) fn store_order(o: Ordering) -> MemOrder {
    match o {
        Ordering::Acquire => panic!("there is no such thing as an acquire store"),
        Ordering::AcqRel => panic!("there is no such thing as an acquire-release store"),
        o => rmw_order(o),
    }
}

pub(crate) fn rmw_order(o: Ordering) -> MemOrder {
    match o {
        Ordering::Relaxed => MemOrder::Relaxed,
        Ordering::Release => MemOrder::Release,
        Ordering::Acquire => MemOrder::Acquire,
        Ordering::AcqRel => MemOrder::AcqRel,
        _ => MemOrder::SeqCst,
    }
}

fn failure_order(o: Ordering) -> MemOrder {
    match o {
        Ordering::Release => panic!("there is no such thing as a release failure ordering"),
        Ordering::AcqRel => panic!("there is no such thing as an acquire-release failure ordering"),
        o => load_order(o),
    }
}

/// The location of one atomic object plus its initial value: the part every
/// atomic type shares.
#[derive(Debug)]
pub(crate) struct Word {
    cell: LocCell,
    /// The value the location starts with (a std atomic only so that `Word`
    /// can be set up lazily and live in statics).
    init: std::sync::atomic::AtomicI64,
    width: Width,
}

impl Word {
    /// A `what` made at `site` (reports name its location after them), or
    /// a facade's inner word (reports say what it is from its first use).
    pub(crate) const fn new(init: Value, width: Width, made: Option<(&'static str, Site)>) -> Self {
        Word {
            cell: match made {
                Some((what, site)) => LocCell::described(what, site),
                None => LocCell::new(),
            },
            init: std::sync::atomic::AtomicI64::new(init),
            width,
        }
    }
    fn init(&self) -> Value {
        self.init.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub(crate) fn plain_load(&self, site: Site) -> Value {
        access(
            &self.cell,
            self.init(),
            |loc| Action::Load {
                loc,
                ord: MemOrder::NonAtomic,
            },
            site,
        )
        .val
    }
    pub(crate) fn load(&self, ord: MemOrder, site: Site) -> Value {
        access(
            &self.cell,
            self.init(),
            |loc| Action::Load { loc, ord },
            site,
        )
        .val
    }
    pub(crate) fn store(&self, val: Value, ord: MemOrder, site: Site) {
        let val = self.width.normalize(val);
        access(
            &self.cell,
            self.init(),
            |loc| Action::Store { loc, ord, val },
            site,
        );
    }
    pub(crate) fn rmw(&self, op: RmwOp, operand: Value, ord: MemOrder, site: Site) -> Value {
        let width = self.width;
        access(
            &self.cell,
            self.init(),
            |loc| Action::Rmw {
                loc,
                ord,
                op,
                operand: width.normalize(operand),
                width,
            },
            site,
        )
        .val
    }
    /// Takes `n` permits if the count here has them (see [`Action::take`]);
    /// whether it did.
    pub(crate) fn take(
        &self,
        n: Value,
        success: MemOrder,
        failure: MemOrder,
        waits: bool,
        site: Site,
    ) -> bool {
        let n = self.width.normalize(n);
        access(
            &self.cell,
            self.init(),
            |loc| Action::take(loc, n, success, failure, waits),
            site,
        )
        .ok
    }
    pub(crate) fn cas(
        &self,
        expected: Value,
        new: Value,
        success: MemOrder,
        failure: MemOrder,
        weak: bool,
        site: Site,
    ) -> Result<Value, Value> {
        let (expected, new) = (self.width.normalize(expected), self.width.normalize(new));
        let o = access(
            &self.cell,
            self.init(),
            |loc| Action::Cas {
                loc,
                expected,
                new,
                success,
                failure,
                weak,
                lock: false,
                take: false,
            },
            site,
        );
        if o.ok {
            Ok(o.val)
        } else {
            Err(o.val)
        }
    }
}

/// The value of an atomic as the model stores it.
pub(crate) trait ToValue: Copy {
    fn to_value(self) -> Value;
}

macro_rules! to_value {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(self) -> Value {
                self as Value
            }
        }
    )*};
}
to_value!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl ToValue for bool {
    fn to_value(self) -> Value {
        self as Value
    }
}

impl<T> ToValue for *mut T {
    fn to_value(self) -> Value {
        self as usize as Value
    }
}

/// `get_mut` support: the value handed out lives in a box the atomic owns;
/// what the thread writes through it is published as a store by that thread
/// before its next visible operation (so it happens before anything the
/// thread synchronizes with afterwards), and when the atomic is next used or
/// dropped.
pub(crate) struct Exclusive<T> {
    shadow: std::cell::UnsafeCell<Option<Box<T>>>,
}

impl<T> std::fmt::Debug for Exclusive<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Exclusive")
    }
}

/// # Safety
/// `p` must point to a live `T`.
unsafe fn read_as<T: ToValue>(p: *const u8) -> Value {
    // SAFETY: guaranteed by the caller (`pending` keeps only live boxes).
    unsafe { (*(p as *const T)).to_value() }
}

impl<T: ToValue> Exclusive<T> {
    pub(crate) const fn new() -> Self {
        Exclusive {
            shadow: std::cell::UnsafeCell::new(None),
        }
    }

    /// The `get_mut` of an atomic whose current value is `now`.
    pub(crate) fn get_mut(&mut self, word: &Word, now: T) -> &mut T {
        let boxed = self.shadow.get_mut().get_or_insert_with(|| Box::new(now));
        **boxed = now;
        let p = &**boxed as *const T as *const u8;
        if let Some(loc) = c11check_runtime::bound_location(&word.cell) {
            pending::register(p as usize, loc, read_as::<T>, now.to_value());
        }
        boxed
    }
}

impl<T> Exclusive<T> {
    /// Called by every `&self` operation: an exclusive borrow is over.
    pub(crate) fn settle(&self) {
        // SAFETY: only `get_mut` (through `&mut self`) writes the option; no
        // exclusive borrow can be alive while `&self` is used.
        if let Some(b) = unsafe { &*self.shadow.get() } {
            pending::settle(&**b as *const T as *const u8 as usize);
        }
    }
}

impl<T> Drop for Exclusive<T> {
    fn drop(&mut self) {
        if let Some(b) = self.shadow.get_mut() {
            if c11check_runtime::in_model() {
                pending::settle(&**b as *const T as *const u8 as usize);
            }
        }
    }
}

/// Values written through `get_mut` that are not published yet.
mod pending {
    use c11check_model::{Loc, Value};
    use std::cell::RefCell;

    struct Entry {
        generation: u32,
        thread: u32,
        key: usize,
        loc: Loc,
        read: unsafe fn(*const u8) -> Value,
        published: Value,
    }

    thread_local! {
        static PENDING: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
    }

    fn me() -> (u32, u32) {
        (
            c11check_runtime::generation(),
            c11check_runtime::current_thread(),
        )
    }

    pub(super) fn register(
        key: usize,
        loc: Loc,
        read: unsafe fn(*const u8) -> Value,
        published: Value,
    ) {
        let (generation, thread) = me();
        PENDING.with(|p| {
            let mut p = p.borrow_mut();
            p.retain(|e| e.generation == generation && e.key != key);
            p.push(Entry {
                generation,
                thread,
                key,
                loc,
                read,
                published,
            });
        });
    }

    /// The stores the running thread owes, (location, value); with `only`,
    /// just for that box, which is then forgotten.
    fn owed(only: Option<usize>) -> Vec<(Loc, Value)> {
        let (generation, thread) = me();
        PENDING.with(|p| {
            let mut p = p.borrow_mut();
            p.retain(|e| e.generation == generation);
            let mut out = Vec::new();
            for e in p.iter_mut() {
                if e.thread == thread && only.is_none_or(|k| k == e.key) {
                    // SAFETY: an entry goes before its box does (`settle` from
                    // the atomic's drop), and with its execution.
                    let v = unsafe { (e.read)(e.key as *const u8) };
                    if v != e.published {
                        e.published = v;
                        out.push((e.loc, v));
                    }
                }
            }
            if let Some(k) = only {
                p.retain(|e| e.key != k);
            }
            out
        })
    }

    /// Run by the runtime before each visible operation of a thread (so it
    /// must be cheap when nothing is pending). Entries are marked published
    /// before their stores are made, so the stores' own calls find nothing.
    pub(crate) fn publish_current() {
        if !PENDING.with(|p| p.borrow().is_empty()) {
            publish_owed();
        }
    }

    #[cold]
    #[inline(never)]
    fn publish_owed() {
        for (loc, v) in owed(None) {
            c11check_runtime::store_to(loc, v, c11check_runtime::Site::caller());
        }
    }

    /// The atomic owning box `key` is used through `&self` again, or dropped.
    pub(super) fn settle(key: usize) {
        for (loc, v) in owed(Some(key)) {
            c11check_runtime::store_to(loc, v, c11check_runtime::Site::caller());
        }
    }
}

pub(crate) use pending::publish_current as publish_exclusive_writes;

macro_rules! atomic_int {
    ($name:ident, $t:ty, $width:ident, $max:ident, $min:ident) => {
        #[doc = concat!("`std::sync::atomic::", stringify!($name), "` under the model.")]
        #[derive(Debug)]
        pub struct $name {
            word: Word,
            exclusive: Exclusive<$t>,
        }

        // SAFETY: the exclusive box is only written through `&mut self`.
        unsafe impl Sync for $name {}

        impl Default for $name {
            fn default() -> Self {
                Self::new(0)
            }
        }

        impl From<$t> for $name {
            fn from(v: $t) -> Self {
                Self::new(v)
            }
        }

        impl $name {
            /// The location cell (for lock waits on this atomic).
            #[allow(dead_code)]
            pub(crate) fn loc_cell(&self) -> &c11check_runtime::LocCell {
                &self.word.cell
            }
            /// Takes `n` permits if the count has them (a semaphore's
            /// acquire, see `Action::take`); when `waits`, a thread that
            /// finds too few then waits with `wait_lock` on
            /// [`Self::loc_cell`], and the explorer runs it only once enough
            /// are there.
            #[allow(dead_code)]
            #[track_caller]
            pub(crate) fn take(
                &self,
                n: $t,
                success: Ordering,
                failure: Ordering,
                waits: bool,
            ) -> bool {
                self.w().take(
                    n as Value,
                    rmw_order(success),
                    failure_order(failure),
                    waits,
                    c11check_runtime::Site::caller(),
                )
            }
            /// The word, once any `get_mut` borrow is over.
            fn w(&self) -> &Word {
                self.exclusive.settle();
                &self.word
            }
            /// Exclusive access to the value. What is written through it
            /// becomes a store of this thread before its next operation.
            #[track_caller]
            pub fn get_mut(&mut self) -> &mut $t {
                let now = self
                    .w()
                    .load(MemOrder::Relaxed, c11check_runtime::Site::caller())
                    as $t;
                self.exclusive.get_mut(&self.word, now)
            }
            /// Makes a new one, as `std`'s `new` does.
            #[track_caller]
            pub const fn new(v: $t) -> Self {
                $name {
                    word: Word::new(
                        v as Value,
                        Width::$width,
                        Some((stringify!($name), c11check_runtime::Site::caller())),
                    ),
                    exclusive: Exclusive::new(),
                }
            }
            /// A facade's inner atomic (a lock's state, say), which reports
            /// describe by its use.
            #[allow(dead_code)]
            pub(crate) const fn inner(v: $t) -> Self {
                $name {
                    word: Word::new(v as Value, Width::$width, None),
                    exclusive: Exclusive::new(),
                }
            }
            /// Loads the value with `order`: the model explores every store this load may read.
            #[track_caller]
            pub fn load(&self, order: Ordering) -> $t {
                self.w()
                    .load(load_order(order), c11check_runtime::Site::caller()) as $t
            }
            /// A non-atomic read of the value (loom's `unsync_load`): a data
            /// race with any store it is not ordered with.
            #[doc(hidden)]
            #[track_caller]
            pub fn unsync_load(&self) -> $t {
                self.w().plain_load(c11check_runtime::Site::caller()) as $t
            }
            /// Stores `val` with `order`.
            #[track_caller]
            pub fn store(&self, val: $t, order: Ordering) {
                self.word.store(
                    val as Value,
                    store_order(order),
                    c11check_runtime::Site::caller(),
                )
            }
            /// Stores `val` and returns the previous value, as one read-modify-write with `order`.
            #[track_caller]
            pub fn swap(&self, val: $t, order: Ordering) -> $t {
                self.w().rmw(
                    RmwOp::Xchg,
                    val as Value,
                    rmw_order(order),
                    c11check_runtime::Site::caller(),
                ) as $t
            }
            /// The compare-exchange; `weak` ones may fail spuriously.
            #[track_caller]
            pub(crate) fn cas(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
                weak: bool,
            ) -> Result<$t, $t> {
                self.w()
                    .cas(
                        current as Value,
                        new as Value,
                        rmw_order(success),
                        failure_order(failure),
                        weak,
                        c11check_runtime::Site::caller(),
                    )
                    .map(|v| v as $t)
                    .map_err(|v| v as $t)
            }
            /// Stores `new` if the value is `current`, as one read-modify-write; returns the value read (`Ok` when it matched). `failure` orders the read when it does not match.
            #[track_caller]
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.cas(current, new, success, failure, false)
            }
            /// Like [`Self::compare_exchange`], but may fail although the value
            /// matched; the model explores that spurious failure.
            #[track_caller]
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.cas(current, new, success, failure, weak())
            }
            /// Adds `val` (wrapping) and returns the previous value, as one read-modify-write with `order`.
            #[track_caller]
            pub fn fetch_add(&self, val: $t, order: Ordering) -> $t {
                self.w().rmw(
                    RmwOp::Add,
                    val as Value,
                    rmw_order(order),
                    c11check_runtime::Site::caller(),
                ) as $t
            }
            /// Subtracts `val` (wrapping) and returns the previous value, as one read-modify-write with `order`.
            #[track_caller]
            pub fn fetch_sub(&self, val: $t, order: Ordering) -> $t {
                self.w().rmw(
                    RmwOp::Sub,
                    val as Value,
                    rmw_order(order),
                    c11check_runtime::Site::caller(),
                ) as $t
            }
            /// Bitwise and with `val`; returns the previous value (one read-modify-write with `order`).
            #[track_caller]
            pub fn fetch_and(&self, val: $t, order: Ordering) -> $t {
                self.w().rmw(
                    RmwOp::And,
                    val as Value,
                    rmw_order(order),
                    c11check_runtime::Site::caller(),
                ) as $t
            }
            /// Bitwise nand with `val`; returns the previous value (one read-modify-write with `order`).
            #[track_caller]
            pub fn fetch_nand(&self, val: $t, order: Ordering) -> $t {
                self.w().rmw(
                    RmwOp::Nand,
                    val as Value,
                    rmw_order(order),
                    c11check_runtime::Site::caller(),
                ) as $t
            }
            /// Bitwise or with `val`; returns the previous value (one read-modify-write with `order`).
            #[track_caller]
            pub fn fetch_or(&self, val: $t, order: Ordering) -> $t {
                self.w().rmw(
                    RmwOp::Or,
                    val as Value,
                    rmw_order(order),
                    c11check_runtime::Site::caller(),
                ) as $t
            }
            /// Bitwise xor with `val`; returns the previous value (one read-modify-write with `order`).
            #[track_caller]
            pub fn fetch_xor(&self, val: $t, order: Ordering) -> $t {
                self.w().rmw(
                    RmwOp::Xor,
                    val as Value,
                    rmw_order(order),
                    c11check_runtime::Site::caller(),
                ) as $t
            }
            /// Stores the maximum of the value and `val`; returns the previous value (one read-modify-write with `order`).
            #[track_caller]
            pub fn fetch_max(&self, val: $t, order: Ordering) -> $t {
                self.w().rmw(
                    RmwOp::$max,
                    val as Value,
                    rmw_order(order),
                    c11check_runtime::Site::caller(),
                ) as $t
            }
            /// Stores the minimum of the value and `val`; returns the previous value (one read-modify-write with `order`).
            #[track_caller]
            pub fn fetch_min(&self, val: $t, order: Ordering) -> $t {
                self.w().rmw(
                    RmwOp::$min,
                    val as Value,
                    rmw_order(order),
                    c11check_runtime::Site::caller(),
                ) as $t
            }
            /// std's loop: load, compute, `compare_exchange_weak` until it sticks.
            #[track_caller]
            pub fn fetch_update<F>(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                mut f: F,
            ) -> Result<$t, $t>
            where
                F: FnMut($t) -> Option<$t>,
            {
                let mut prev = self.load(fetch_order);
                while let Some(next) = f(prev) {
                    match self.compare_exchange_weak(prev, next, set_order, fetch_order) {
                        Ok(x) => return Ok(x),
                        Err(next_prev) => prev = next_prev,
                    }
                }
                Err(prev)
            }
            /// Consumes the atomic and returns its value (the last one written:
            /// whoever owns the atomic has synchronized with every writer).
            #[track_caller]
            pub fn into_inner(self) -> $t {
                self.w()
                    .load(MemOrder::Relaxed, c11check_runtime::Site::caller()) as $t
            }
        }
    };
}

atomic_int!(AtomicI8, i8, I8, Max, Min);
atomic_int!(AtomicI16, i16, I16, Max, Min);
atomic_int!(AtomicI32, i32, I32, Max, Min);
atomic_int!(AtomicI64, i64, I64, Max, Min);
atomic_int!(AtomicIsize, isize, I64, Max, Min);
atomic_int!(AtomicU8, u8, U8, UMax, UMin);
atomic_int!(AtomicU16, u16, U16, UMax, UMin);
atomic_int!(AtomicU32, u32, U32, UMax, UMin);
atomic_int!(AtomicU64, u64, U64, UMax, UMin);
atomic_int!(AtomicUsize, usize, U64, UMax, UMin);

/// `std::sync::atomic::AtomicBool` under the model.
#[derive(Debug)]
pub struct AtomicBool {
    word: Word,
    exclusive: Exclusive<bool>,
}

// SAFETY: the exclusive box is only written through `&mut self`.
unsafe impl Sync for AtomicBool {}

impl Default for AtomicBool {
    fn default() -> Self {
        Self::new(false)
    }
}

impl From<bool> for AtomicBool {
    fn from(v: bool) -> Self {
        Self::new(v)
    }
}

impl AtomicBool {
    fn w(&self) -> &Word {
        self.exclusive.settle();
        &self.word
    }
    /// Exclusive access to the value (see the integer atomics' `get_mut`).
    #[track_caller]
    pub fn get_mut(&mut self) -> &mut bool {
        let now = self
            .w()
            .load(MemOrder::Relaxed, c11check_runtime::Site::caller())
            != 0;
        self.exclusive.get_mut(&self.word, now)
    }
    /// Makes a new one, as `std`'s `new` does.
    #[track_caller]
    pub const fn new(v: bool) -> Self {
        AtomicBool {
            word: Word::new(
                v as Value,
                Width::U8,
                Some(("AtomicBool", c11check_runtime::Site::caller())),
            ),
            exclusive: Exclusive::new(),
        }
    }
    /// A facade's inner flag, which reports describe by its use.
    pub(crate) const fn inner(v: bool) -> Self {
        AtomicBool {
            word: Word::new(v as Value, Width::U8, None),
            exclusive: Exclusive::new(),
        }
    }
    /// Loads the value with `order`: the model explores every store this load may read.
    #[track_caller]
    pub fn load(&self, order: Ordering) -> bool {
        self.w()
            .load(load_order(order), c11check_runtime::Site::caller())
            != 0
    }
    #[doc(hidden)]
    #[track_caller]
    pub fn unsync_load(&self) -> bool {
        self.w().plain_load(c11check_runtime::Site::caller()) != 0
    }
    /// Stores `val` with `order`.
    #[track_caller]
    pub fn store(&self, val: bool, order: Ordering) {
        self.word.store(
            val as Value,
            store_order(order),
            c11check_runtime::Site::caller(),
        )
    }
    /// Stores `val` and returns the previous value, as one read-modify-write with `order`.
    #[track_caller]
    pub fn swap(&self, val: bool, order: Ordering) -> bool {
        self.w().rmw(
            RmwOp::Xchg,
            val as Value,
            rmw_order(order),
            c11check_runtime::Site::caller(),
        ) != 0
    }
    #[track_caller]
    fn cas(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
        weak: bool,
    ) -> Result<bool, bool> {
        self.w()
            .cas(
                current as Value,
                new as Value,
                rmw_order(success),
                failure_order(failure),
                weak,
                c11check_runtime::Site::caller(),
            )
            .map(|v| v != 0)
            .map_err(|v| v != 0)
    }
    /// Stores `new` if the value is `current`, as one read-modify-write; returns the value read (`Ok` when it matched). `failure` orders the read when it does not match.
    #[track_caller]
    pub fn compare_exchange(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
    ) -> Result<bool, bool> {
        self.cas(current, new, success, failure, false)
    }
    /// Like `compare_exchange`, but may fail although the value matched; the model explores one such failure per store read.
    #[track_caller]
    pub fn compare_exchange_weak(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
    ) -> Result<bool, bool> {
        self.cas(current, new, success, failure, weak())
    }
    /// Bitwise and with `val`; returns the previous value (one read-modify-write with `order`).
    #[track_caller]
    pub fn fetch_and(&self, val: bool, order: Ordering) -> bool {
        self.w().rmw(
            RmwOp::And,
            val as Value,
            rmw_order(order),
            c11check_runtime::Site::caller(),
        ) != 0
    }
    /// `!(old & val)`, kept to one bit as std does.
    #[track_caller]
    pub fn fetch_nand(&self, val: bool, order: Ordering) -> bool {
        // On one bit, nand is xor with `val` after an and... use a CAS loop so the
        // stored value stays 0 or 1.
        let mut prev = self.load(Ordering::Relaxed);
        loop {
            let next = !(prev && val);
            match self.compare_exchange_weak(prev, next, order, Ordering::Relaxed) {
                Ok(x) => return x,
                Err(x) => prev = x,
            }
        }
    }
    /// Bitwise or with `val`; returns the previous value (one read-modify-write with `order`).
    #[track_caller]
    pub fn fetch_or(&self, val: bool, order: Ordering) -> bool {
        self.w().rmw(
            RmwOp::Or,
            val as Value,
            rmw_order(order),
            c11check_runtime::Site::caller(),
        ) != 0
    }
    /// Bitwise xor with `val`; returns the previous value (one read-modify-write with `order`).
    #[track_caller]
    pub fn fetch_xor(&self, val: bool, order: Ordering) -> bool {
        self.w().rmw(
            RmwOp::Xor,
            val as Value,
            rmw_order(order),
            c11check_runtime::Site::caller(),
        ) != 0
    }
    /// Negates the value; returns the previous value (one read-modify-write with `order`).
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        self.fetch_xor(true, order)
    }
    /// std's loop: load, compute, `compare_exchange_weak` until it sticks.
    #[track_caller]
    pub fn fetch_update<F>(
        &self,
        set_order: Ordering,
        fetch_order: Ordering,
        mut f: F,
    ) -> Result<bool, bool>
    where
        F: FnMut(bool) -> Option<bool>,
    {
        let mut prev = self.load(fetch_order);
        while let Some(next) = f(prev) {
            match self.compare_exchange_weak(prev, next, set_order, fetch_order) {
                Ok(x) => return Ok(x),
                Err(next_prev) => prev = next_prev,
            }
        }
        Err(prev)
    }
    /// Consumes this and returns the value inside, as `std`'s `into_inner` does.
    #[track_caller]
    pub fn into_inner(self) -> bool {
        self.w()
            .load(MemOrder::Relaxed, c11check_runtime::Site::caller())
            != 0
    }
}

/// `std::sync::atomic::AtomicPtr` under the model (the pointer's address is
/// the value).
#[derive(Debug)]
pub struct AtomicPtr<T> {
    word: Word,
    /// The initial pointer (a `const fn` cannot turn it into an integer).
    initial: *mut T,
    exclusive: Exclusive<*mut T>,
}

// SAFETY: like std's AtomicPtr, the type only hands out the raw pointer value;
// all accesses go through the model, which runs one thread at a time.
unsafe impl<T> Send for AtomicPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for AtomicPtr<T> {}

impl<T> Default for AtomicPtr<T> {
    fn default() -> Self {
        Self::new(std::ptr::null_mut())
    }
}

fn ptr_value<T>(p: *mut T) -> Value {
    p as usize as Value
}

fn value_ptr<T>(v: Value) -> *mut T {
    v as usize as *mut T
}

impl<T> AtomicPtr<T> {
    /// Makes a new one, as `std`'s `new` does.
    #[track_caller]
    pub const fn new(p: *mut T) -> Self {
        AtomicPtr {
            word: Word::new(
                0,
                Width::U64,
                Some(("AtomicPtr", c11check_runtime::Site::caller())),
            ),
            initial: p,
            exclusive: Exclusive::new(),
        }
    }
    /// Exclusive access to the pointer (see the integer atomics' `get_mut`).
    #[track_caller]
    pub fn get_mut(&mut self) -> &mut *mut T {
        let now = value_ptr(
            self.word()
                .load(MemOrder::Relaxed, c11check_runtime::Site::caller()),
        );
        self.exclusive.get_mut(&self.word, now)
    }
    fn word(&self) -> &Word {
        self.exclusive.settle();
        if !self.initial.is_null() {
            self.word.init.store(
                ptr_value(self.initial),
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        &self.word
    }
    /// Loads the value with `order`: the model explores every store this load may read.
    #[track_caller]
    pub fn load(&self, order: Ordering) -> *mut T {
        value_ptr(
            self.word()
                .load(load_order(order), c11check_runtime::Site::caller()),
        )
    }
    #[doc(hidden)]
    #[track_caller]
    pub fn unsync_load(&self) -> *mut T {
        value_ptr(self.word().plain_load(c11check_runtime::Site::caller()))
    }
    /// Stores `val` with `order`.
    #[track_caller]
    pub fn store(&self, p: *mut T, order: Ordering) {
        self.word().store(
            ptr_value(p),
            store_order(order),
            c11check_runtime::Site::caller(),
        )
    }
    /// Stores `val` and returns the previous value, as one read-modify-write with `order`.
    #[track_caller]
    pub fn swap(&self, p: *mut T, order: Ordering) -> *mut T {
        value_ptr(self.word().rmw(
            RmwOp::Xchg,
            ptr_value(p),
            rmw_order(order),
            c11check_runtime::Site::caller(),
        ))
    }
    #[track_caller]
    fn cas(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
        weak: bool,
    ) -> Result<*mut T, *mut T> {
        self.word()
            .cas(
                ptr_value(current),
                ptr_value(new),
                rmw_order(success),
                failure_order(failure),
                weak,
                c11check_runtime::Site::caller(),
            )
            .map(value_ptr)
            .map_err(value_ptr)
    }
    /// Stores `new` if the value is `current`, as one read-modify-write; returns the value read (`Ok` when it matched). `failure` orders the read when it does not match.
    #[track_caller]
    pub fn compare_exchange(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        self.cas(current, new, success, failure, false)
    }
    /// Like `compare_exchange`, but may fail although the value matched; the model explores one such failure per store read.
    #[track_caller]
    pub fn compare_exchange_weak(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        self.cas(current, new, success, failure, weak())
    }
    /// std's loop: load, compute, `compare_exchange_weak` until it sticks.
    #[track_caller]
    pub fn fetch_update<F>(
        &self,
        set_order: Ordering,
        fetch_order: Ordering,
        mut f: F,
    ) -> Result<*mut T, *mut T>
    where
        F: FnMut(*mut T) -> Option<*mut T>,
    {
        let mut prev = self.load(fetch_order);
        while let Some(next) = f(prev) {
            match self.compare_exchange_weak(prev, next, set_order, fetch_order) {
                Ok(x) => return Ok(x),
                Err(next_prev) => prev = next_prev,
            }
        }
        Err(prev)
    }
    /// Consumes this and returns the value inside, as `std`'s `into_inner` does.
    #[track_caller]
    pub fn into_inner(self) -> *mut T {
        value_ptr(
            self.word()
                .load(MemOrder::Relaxed, c11check_runtime::Site::caller()),
        )
    }
}

/// A memory fence.
#[track_caller]
pub fn fence(order: Ordering) {
    let ord = match order {
        Ordering::Relaxed => panic!("there is no such thing as a relaxed fence"),
        o => rmw_order(o),
    };
    c11check_runtime::fence(ord, c11check_runtime::Site::caller());
}

/// A compiler fence orders nothing between threads; the model treats it as a
/// no-op (it cannot create synchronization).
pub fn compiler_fence(order: Ordering) {
    if order == Ordering::Relaxed {
        panic!("there is no such thing as a relaxed compiler fence");
    }
}
