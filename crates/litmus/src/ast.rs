//! The parsed form of a C litmus test.

use c11check_model::{MemOrder, RmwOp, Value};

/// A whole litmus test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LitmusTest {
    pub name: String,
    /// Location names; a location's index is its `Loc` number.
    pub locations: Vec<String>,
    /// Initial value of each location.
    pub init: Vec<Value>,
    pub threads: Vec<Thread>,
    pub condition: Condition,
    /// Extra keys named by a `locations [...]` line.
    pub extra_keys: Vec<Key>,
    /// Whether the order of reference-count updates (`atomic_refcount_*`) can
    /// matter: a count is also accessed another way, or a SeqCst fence is
    /// ordered with them. The explorer then explores their orders.
    pub refcount_order_observable: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    /// Local variable names; a local's index is its slot.
    pub locals: Vec<String>,
    pub body: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// `x = e;` or `int x = e;` (a declaration without value assigns 0).
    Assign(usize, Expr),
    /// `*p = e;`: a non-atomic store.
    StoreNa(u32, Expr),
    /// An expression evaluated for its effects (an atomic call).
    Expr(Expr),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    While(Expr, Vec<Stmt>),
}

/// The location an atomic call accesses: a location, or an array element
/// `base + offset` (elements of an array are consecutive locations).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocRef {
    pub base: u32,
    pub len: u32,
    pub offset: Option<Box<Expr>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Int(Value),
    Local(usize),
    /// `*p`: a non-atomic load.
    LoadNa(u32),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Load {
        loc: LocRef,
        ord: MemOrder,
    },
    Store {
        loc: LocRef,
        val: Box<Expr>,
        ord: MemOrder,
    },
    Rmw {
        loc: LocRef,
        op: RmwOp,
        val: Box<Expr>,
        ord: MemOrder,
    },
    /// compare_exchange: `expected` names the location holding the expected value.
    Cas {
        loc: LocRef,
        expected: u32,
        desired: Box<Expr>,
        success: MemOrder,
        failure: MemOrder,
        weak: bool,
    },
    Fence(MemOrder),
    /// `spin_lock(l)`: an acquire compare-exchange 0 -> 1; when it reads the
    /// lock held, the thread waits (that execution is blocked; the one where
    /// it reads the release is explored separately).
    Lock(LocRef),
    /// `spin_unlock(l)`: a release store of 0.
    Unlock(LocRef),
    /// `spin_trylock(l)`: the compare-exchange alone; 1 when it took the lock.
    TryLock(LocRef),
    /// `sem_take(s, n)`: an acquire take of `n` permits from the count at `s`
    /// (a decrement by `n` when it holds at least `n`); with too few, the
    /// thread waits as at a held lock. `sem_trytake(s, n)` (`waits` false):
    /// the take alone, 1 when it took them. (`sem_give(s, n)` is a release
    /// `fetch_add`.)
    Take {
        loc: LocRef,
        n: Box<Expr>,
        waits: bool,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// What a final state mentions: a thread's register or a location.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Reg(u32, String),
    Loc(String),
}

impl Key {
    /// The key as herd prints it in states: `0:r0` or `[x]`.
    pub fn herd_name(&self) -> String {
        match self {
            Key::Reg(t, r) => format!("{t}:{r}"),
            Key::Loc(l) => format!("[{l}]"),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Quantifier {
    Exists,
    NotExists,
    Forall,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub quantifier: Quantifier,
    pub prop: Prop,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prop {
    True,
    False,
    Eq(Key, Value),
    Not(Box<Prop>),
    And(Box<Prop>, Box<Prop>),
    Or(Box<Prop>, Box<Prop>),
}

impl Prop {
    /// Every key the proposition mentions, in order of appearance.
    pub fn keys(&self, out: &mut Vec<Key>) {
        match self {
            Prop::True | Prop::False => {}
            Prop::Eq(k, _) => {
                if !out.contains(k) {
                    out.push(k.clone())
                }
            }
            Prop::Not(p) => p.keys(out),
            Prop::And(a, b) | Prop::Or(a, b) => {
                a.keys(out);
                b.keys(out);
            }
        }
    }
    pub fn eval(&self, get: &dyn Fn(&Key) -> Value) -> bool {
        match self {
            Prop::True => true,
            Prop::False => false,
            Prop::Eq(k, v) => get(k) == *v,
            Prop::Not(p) => !p.eval(get),
            Prop::And(a, b) => a.eval(get) && b.eval(get),
            Prop::Or(a, b) => a.eval(get) || b.eval(get),
        }
    }
}
