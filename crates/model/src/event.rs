//! Events: the visible operations a thread performs, and the identifiers that name them.

use std::fmt;

/// The value stored in a memory location. Every location holds one machine word.
pub type Value = i64;

/// A shared memory location. Front ends map their own names (litmus variables,
/// addresses of Rust atomics) onto dense `Loc` numbers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc(pub u32);

/// Thread number used for the initialisation writes (one per location).
pub const INIT_THREAD: u32 = u32::MAX;

/// Names one event: its thread and its position in that thread's program order.
/// Initialisation writes live on the pseudo thread [`INIT_THREAD`] with `index` = location.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    pub thread: u32,
    pub index: u32,
}

impl EventId {
    #[inline]
    pub const fn new(thread: u32, index: u32) -> Self {
        EventId { thread, index }
    }
    /// The initialisation write of `loc`.
    #[inline]
    pub const fn init(loc: Loc) -> Self {
        EventId {
            thread: INIT_THREAD,
            index: loc.0,
        }
    }
    #[inline]
    pub const fn is_init(self) -> bool {
        self.thread == INIT_THREAD
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_init() {
            write!(f, "init[{}]", self.index)
        } else {
            write!(f, "T{}.{}", self.thread, self.index)
        }
    }
}

/// Memory orders of C/C++20 (consume is treated as acquire by the front ends).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemOrder {
    /// A plain (non-atomic) access.
    NonAtomic,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl MemOrder {
    #[inline]
    pub fn is_atomic(self) -> bool {
        self != MemOrder::NonAtomic
    }
    /// Acquire semantics when the event reads (or is a fence).
    #[inline]
    pub fn is_acquire(self) -> bool {
        matches!(
            self,
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
    /// Release semantics when the event writes (or is a fence).
    #[inline]
    pub fn is_release(self) -> bool {
        matches!(
            self,
            MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
    #[inline]
    pub fn is_sc(self) -> bool {
        self == MemOrder::SeqCst
    }
    /// The ordering of the read half of a read-modify-write with this ordering.
    #[inline]
    pub fn read_half(self) -> MemOrder {
        match self {
            MemOrder::Release => MemOrder::Relaxed,
            MemOrder::AcqRel => MemOrder::Acquire,
            o => o,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            MemOrder::NonAtomic => "na",
            MemOrder::Relaxed => "rlx",
            MemOrder::Acquire => "acq",
            MemOrder::Release => "rel",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "sc",
        }
    }
}

/// The integer type a location holds; values are kept normalized to it
/// (sign- or zero-extended), so that wrapping arithmetic and comparisons on
/// narrow types behave as in the program.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

impl Width {
    /// `v` truncated to the type and extended back to a [`Value`].
    pub fn normalize(self, v: Value) -> Value {
        match self {
            Width::I8 => v as i8 as Value,
            Width::I16 => v as i16 as Value,
            Width::I32 => v as i32 as Value,
            Width::I64 | Width::U64 => v,
            Width::U8 => v as u8 as Value,
            Width::U16 => v as u16 as Value,
            Width::U32 => v as u32 as Value,
        }
    }
}

/// The arithmetic of a read-modify-write.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Nand,
    Max,
    Min,
    /// Unsigned maximum (Rust's `fetch_max` on unsigned atomics).
    UMax,
    /// Unsigned minimum.
    UMin,
    /// Exchange: the new value is the operand.
    Xchg,
    /// A reference-count increment (adds one). Reference-count updates
    /// commute: the explorer does not tell apart executions that differ only
    /// in their order, so a front end may use them only where the program looks
    /// at nothing but whether a decrement read 1 (see [`Event::refcount_class`]).
    RefInc,
    /// A reference-count decrement (subtracts one); see [`RmwOp::RefInc`].
    RefDec,
}

impl RmwOp {
    /// The value written when `old` is read.
    pub fn apply(self, old: Value, operand: Value) -> Value {
        match self {
            RmwOp::Add => old.wrapping_add(operand),
            RmwOp::Sub => old.wrapping_sub(operand),
            RmwOp::And => old & operand,
            RmwOp::Or => old | operand,
            RmwOp::Xor => old ^ operand,
            RmwOp::Nand => !(old & operand),
            RmwOp::Max => old.max(operand),
            RmwOp::Min => old.min(operand),
            RmwOp::UMax => (old as u64).max(operand as u64) as i64,
            RmwOp::UMin => (old as u64).min(operand as u64) as i64,
            RmwOp::Xchg => operand,
            RmwOp::RefInc => old.wrapping_add(1),
            RmwOp::RefDec => old.wrapping_sub(1),
        }
    }
    /// A reference-count update ([`RmwOp::RefInc`], [`RmwOp::RefDec`]).
    #[inline]
    pub fn is_refcount(self) -> bool {
        matches!(self, RmwOp::RefInc | RmwOp::RefDec)
    }
    pub fn name(self) -> &'static str {
        match self {
            RmwOp::Add => "add",
            RmwOp::Sub => "sub",
            RmwOp::And => "and",
            RmwOp::Or => "or",
            RmwOp::Xor => "xor",
            RmwOp::Nand => "nand",
            RmwOp::Max => "max",
            RmwOp::Min => "min",
            RmwOp::UMax => "umax",
            RmwOp::UMin => "umin",
            RmwOp::Xchg => "xchg",
            RmwOp::RefInc => "refinc",
            RmwOp::RefDec => "refdec",
        }
    }
}

/// Why a thread stopped without finishing.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BlockReason {
    /// An `assume`-style condition failed: the execution is not a real one.
    Assume,
    /// A loop or step bound was reached: exploration was cut here.
    Bound,
    /// A lock acquisition read the lock as held: the thread waits for a release
    /// (the execution where it reads that release is explored separately).
    LockHeld,
    /// A spin loop's turn read nothing new: the thread waits for a store
    /// (the execution where it reads one is explored separately). If none
    /// can come, the execution is a livelock.
    Wait,
    /// The program called `exit()`: the thread stops there, and the
    /// execution ends when the other threads have run as far as they can
    /// (a schedule that delays the exit); none of them is stuck then.
    Exit,
}

impl BlockReason {
    pub fn name(self) -> &'static str {
        match self {
            BlockReason::Assume => "assume failed",
            BlockReason::Bound => "bound reached",
            BlockReason::LockHeld => "waiting for a lock",
            BlockReason::Wait => "spinning: waits for a new value",
            BlockReason::Exit => "called exit(): the program ends",
        }
    }
}

/// What a thread asks to do next. Front ends produce actions; the explorer turns
/// each into an event of the execution graph and answers reads with a value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Load {
        loc: Loc,
        ord: MemOrder,
    },
    Store {
        loc: Loc,
        ord: MemOrder,
        val: Value,
    },
    /// fetch_op / exchange: always writes.
    Rmw {
        loc: Loc,
        ord: MemOrder,
        op: RmwOp,
        operand: Value,
        width: Width,
    },
    /// compare_exchange: writes `new` only when it reads `expected`.
    /// A `weak` one may also fail spuriously, which the explorer explores.
    Cas {
        loc: Loc,
        expected: Value,
        new: Value,
        success: MemOrder,
        failure: MemOrder,
        weak: bool,
        /// A lock acquisition ([`Action::lock_acquire`]): when it fails, its
        /// thread waits for the lock instead of going on, so the explorer
        /// schedules it only once the lock is free (see `c11check-explore`).
        lock: bool,
        /// A take ([`Action::take`]): it succeeds when it reads at least
        /// `expected` and then writes what it read minus `expected` (`new` is
        /// unused), as a semaphore's acquire.
        take: bool,
    },
    Fence {
        ord: MemOrder,
    },
    /// Starts thread `child` (which must already be declared to the graph).
    Spawn {
        child: u32,
    },
    /// Waits for thread `child` to finish; enabled only once it has.
    Join {
        child: u32,
    },
    /// The thread cannot continue (a failed assume or an exceeded bound).
    Block {
        reason: BlockReason,
    },
    /// The thread has finished.
    Finish,
}

impl Action {
    #[inline]
    pub fn loc(&self) -> Option<Loc> {
        match *self {
            Action::Load { loc, .. }
            | Action::Store { loc, .. }
            | Action::Rmw { loc, .. }
            | Action::Cas { loc, .. } => Some(loc),
            _ => None,
        }
    }
    /// Taking a lock at `loc`: a compare-exchange 0 -> 1, acquire when it
    /// succeeds. Front ends make a thread that reads the lock held wait with
    /// `Block { reason: LockHeld }`.
    pub fn lock_acquire(loc: Loc) -> Action {
        Action::Cas {
            loc,
            expected: 0,
            new: 1,
            success: MemOrder::Acquire,
            failure: MemOrder::Relaxed,
            weak: false,
            lock: true,
            take: false,
        }
    }
    /// Taking `n` of the permits counted at `loc` (a semaphore's acquire: a
    /// condition variable's wake-up tokens, a reader-writer lock's shares):
    /// a decrement by `n` when the count is at least `n`, else a read. When
    /// `waits`, a thread whose take finds too few waits, as a lock
    /// acquisition does (front ends block it with `Block { reason: LockHeld
    /// }`), so the explorer schedules it only while enough are there; else
    /// the failure is a result (`try_lock`).
    pub fn take(loc: Loc, n: Value, success: MemOrder, failure: MemOrder, waits: bool) -> Action {
        Action::Cas {
            loc,
            expected: n,
            new: 0,
            success,
            failure,
            weak: false,
            lock: waits,
            take: true,
        }
    }
    /// Whether a compare-exchange (or take) that reads `read` writes,
    /// spurious failures aside; `None` for other actions.
    #[inline]
    pub fn cas_succeeds(&self, read: Value) -> Option<bool> {
        match *self {
            Action::Cas { expected, take, .. } => Some(if take {
                read >= expected
            } else {
                read == expected
            }),
            _ => None,
        }
    }
    /// The value a successful compare-exchange (or take) that read
    /// `read` writes.
    pub fn cas_new(&self, read: Value) -> Option<Value> {
        match *self {
            Action::Cas {
                expected,
                new,
                take,
                ..
            } => Some(if take { read - expected } else { new }),
            _ => None,
        }
    }
    /// Trying to take a lock at `loc` (`try_lock`): the same compare-exchange,
    /// but a failure is a result the thread goes on with, not a wait.
    pub fn lock_try(loc: Loc) -> Action {
        let mut action = Action::lock_acquire(loc);
        if let Action::Cas { lock, .. } = &mut action {
            *lock = false;
        }
        action
    }
    /// Releasing a lock at `loc`: a release store of 0.
    pub fn lock_release(loc: Loc) -> Action {
        Action::Store {
            loc,
            ord: MemOrder::Release,
            val: 0,
        }
    }
    /// The load that an RMW or CAS performs before writing (a successful CAS
    /// reads with its success ordering).
    pub fn read_half(&self) -> Option<Action> {
        match *self {
            Action::Rmw { loc, ord, .. } => Some(Action::Load {
                loc,
                ord: ord.read_half(),
            }),
            Action::Cas { loc, success, .. } => Some(Action::Load {
                loc,
                ord: success.read_half(),
            }),
            _ => None,
        }
    }
    /// Whether the event reads a value from some write.
    #[inline]
    pub fn reads(&self) -> bool {
        matches!(
            self,
            Action::Load { .. } | Action::Rmw { .. } | Action::Cas { .. }
        )
    }
    /// Whether the event may write (a CAS writes only when it succeeds).
    #[inline]
    pub fn may_write(&self) -> bool {
        matches!(
            self,
            Action::Store { .. } | Action::Rmw { .. } | Action::Cas { .. }
        )
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::Load { loc, ord } => write!(f, "R{}(x{})", ord.name(), loc.0),
            Action::Store { loc, ord, val } => write!(f, "W{}(x{}, {})", ord.name(), loc.0, val),
            Action::Rmw {
                loc,
                ord,
                op,
                operand,
                ..
            } => write!(
                f,
                "RMW{}(x{}, {} {})",
                ord.name(),
                loc.0,
                op.name(),
                operand
            ),
            Action::Cas {
                loc,
                expected,
                take: true,
                ..
            } => write!(f, "take{}(x{})", expected, loc.0),
            Action::Cas {
                loc, lock: true, ..
            } => write!(f, "lock(x{})", loc.0),
            Action::Cas {
                loc,
                expected,
                new,
                success,
                failure,
                weak,
                lock: false,
                take: false,
            } => write!(
                f,
                "CAS{}{}/{}(x{}, {} -> {})",
                if weak { "weak-" } else { "" },
                success.name(),
                failure.name(),
                loc.0,
                expected,
                new
            ),
            Action::Fence { ord } => write!(f, "F{}", ord.name()),
            Action::Spawn { child } => write!(f, "spawn T{child}"),
            Action::Join { child } => write!(f, "join T{child}"),
            Action::Block { reason } => write!(f, "block ({})", reason.name()),
            Action::Finish => write!(f, "finish"),
        }
    }
}

/// One event of an execution graph: the action plus what the explorer decided for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub action: Action,
    /// Position in the order events were added to the graph (drives revisits).
    pub stamp: u32,
    /// The write this event reads from (reads only).
    pub rf: Option<EventId>,
    /// The value read (reads only; cached from `rf`).
    pub read_val: Value,
    /// A weak CAS that failed although it read the expected value.
    pub spurious_fail: bool,
    /// False once the event is in the prefix of a write that revisited a read:
    /// such events may never be removed again.
    pub revisitable: bool,
    /// The thread yielded right after this event (`yield_now`, a spin-loop
    /// hint): a switch there preempts nothing (see the explorer's bound).
    pub yields: bool,
    /// A spin hint came right after this event (a yield, or a C loop's
    /// head): a turn of a wait loop may end here (see robustness's failed
    /// turns).
    pub spins: bool,
    /// The program said the wait-loop turn ending here found nothing
    /// (`hint::failed_wait_turn`): robustness leaves it out, whatever the
    /// turns around it do.
    pub failed_turn: bool,
}

impl Event {
    pub fn new(action: Action, stamp: u32) -> Self {
        Event {
            action,
            stamp,
            rf: None,
            read_val: 0,
            spurious_fail: false,
            revisitable: true,
            yields: false,
            spins: false,
            failed_turn: false,
        }
    }
    #[inline]
    pub fn loc(&self) -> Option<Loc> {
        self.action.loc()
    }
    #[inline]
    pub fn is_read(&self) -> bool {
        self.action.reads()
    }
    /// Whether this event writes memory, given what it read.
    #[inline]
    pub fn is_write(&self) -> bool {
        match self.action {
            Action::Store { .. } | Action::Rmw { .. } => true,
            Action::Cas { .. } => {
                !self.spurious_fail && self.action.cas_succeeds(self.read_val) == Some(true)
            }
            _ => false,
        }
    }
    /// An event that both reads and writes (a successful RMW).
    #[inline]
    pub fn is_rmw(&self) -> bool {
        self.is_read() && self.is_write()
    }
    /// The value written, when this event writes.
    #[inline]
    pub fn written_value(&self) -> Option<Value> {
        match self.action {
            Action::Store { val, .. } => Some(val),
            Action::Rmw {
                op, operand, width, ..
            } => Some(width.normalize(op.apply(self.read_val, operand))),
            Action::Cas { .. } if self.is_write() => self.action.cas_new(self.read_val),
            _ => None,
        }
    }
    /// A reference-count update (see [`RmwOp::RefInc`]).
    #[inline]
    pub fn is_refcount(&self) -> bool {
        matches!(self.action, Action::Rmw { op, .. } if op.is_refcount())
    }
    /// All a program may learn from a reference-count update: whether a
    /// decrement released the last reference (read 1), or an increment
    /// revived a count that was zero. `None` for other events.
    pub fn refcount_class(&self) -> Option<bool> {
        match self.action {
            Action::Rmw {
                op: RmwOp::RefDec, ..
            } => Some(self.read_val == 1),
            Action::Rmw {
                op: RmwOp::RefInc, ..
            } => Some(self.read_val == 0),
            _ => None,
        }
    }
    /// The memory order in force (a CAS uses its failure order when it fails).
    #[inline]
    pub fn ord(&self) -> MemOrder {
        match self.action {
            Action::Load { ord, .. }
            | Action::Store { ord, .. }
            | Action::Rmw { ord, .. }
            | Action::Fence { ord } => ord,
            Action::Cas {
                success, failure, ..
            } => {
                if self.is_write() {
                    success
                } else {
                    failure
                }
            }
            _ => MemOrder::Relaxed,
        }
    }
    #[inline]
    pub fn is_fence(&self) -> bool {
        matches!(self.action, Action::Fence { .. })
    }
    #[inline]
    pub fn is_sc(&self) -> bool {
        (self.loc().is_some() || self.is_fence()) && self.ord().is_sc()
    }
    #[inline]
    pub fn is_atomic_access(&self) -> bool {
        self.loc().is_some() && self.ord().is_atomic()
    }
}
