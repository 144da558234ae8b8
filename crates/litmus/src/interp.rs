//! Runs one litmus thread against an oracle that answers its visible operations.
//!
//! The same interpreter serves the exhaustive explorer (the oracle replays the
//! events the graph already holds) and the brute-force checker (the oracle
//! guesses values).

use crate::ast::*;
use c11check_explore::Driver;
use c11check_model::{Action, BlockReason, ExecutionGraph, Loc, MemOrder, RmwOp, Value, Width};

/// What the oracle answers for a visible operation.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Reply {
    /// The value read (0 for operations that read nothing).
    pub val: Value,
    /// For a compare-exchange: whether it wrote (succeeded).
    pub wrote: bool,
}

/// The oracle declined to answer: the operation is the thread's next step.
#[derive(Debug)]
pub struct Pending;

/// How a thread run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadEnd {
    pub locals: Vec<Value>,
    /// The loop bound was reached (the thread emitted a `Block`).
    pub blocked: bool,
}

/// The turns of empty-bodied `while` loops whose condition held (the loop
/// went round again) and wrote nothing: each as the range of the thread's
/// event indices its condition performed. Robustness leaves them out, as if
/// the loop had waited without looking (see `c11check_model::robust`).
pub type WaitTurns = Vec<(u32, u32)>;

/// Why interpretation stopped early.
enum Halt {
    /// The oracle declined to answer.
    Pending,
    /// The thread blocked (loop bound or invalid access) and emitted `Block`.
    Blocked,
}

struct Interp<'o> {
    locals: Vec<Value>,
    oracle: &'o mut dyn FnMut(Action) -> Option<Reply>,
    loop_bound: u32,
    blocked: bool,
    /// Events the oracle answered so far, and how many of them wrote.
    asked: u32,
    wrote: u32,
    wait_turns: WaitTurns,
    /// The access expression the next answered action comes from (its
    /// address in the test; 0 for other actions), and that of each action
    /// answered so far (see [`LitmusProgram::event_nodes`]).
    node: usize,
    nodes: Vec<usize>,
    /// Each condition evaluation of an empty-bodied `while` so far (see
    /// [`WaitCondition`]), and the start of the one being evaluated.
    conditions: Vec<WaitCondition>,
    in_condition: Option<u32>,
}

/// One evaluation of an empty-bodied `while` loop's condition: the range of
/// the thread's event indices it performed, and whether it was a failed
/// turn (it held and wrote nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitCondition {
    pub start: u32,
    pub end: u32,
    pub failed: bool,
}

/// Runs thread `t` of `test` from its start. Loops run at most `loop_bound` times
/// before the thread blocks.
pub fn run_thread(
    test: &LitmusTest,
    t: usize,
    loop_bound: u32,
    oracle: &mut dyn FnMut(Action) -> Option<Reply>,
) -> Result<ThreadEnd, Pending> {
    run_thread_turns(test, t, loop_bound, oracle).0
}

/// [`run_thread`], also returning the failed turns of its wait loops (as
/// far as it ran).
pub fn run_thread_turns(
    test: &LitmusTest,
    t: usize,
    loop_bound: u32,
    oracle: &mut dyn FnMut(Action) -> Option<Reply>,
) -> (Result<ThreadEnd, Pending>, WaitTurns) {
    let th = &test.threads[t];
    let mut it = Interp {
        locals: vec![0; th.locals.len()],
        oracle,
        loop_bound,
        blocked: false,
        asked: 0,
        wrote: 0,
        wait_turns: Vec::new(),
        node: 0,
        nodes: Vec::new(),
        conditions: Vec::new(),
        in_condition: None,
    };
    let r = it.block(&th.body);
    LAST_NODES.with(|n| *n.borrow_mut() = std::mem::take(&mut it.nodes));
    LAST_CONDITIONS
        .with(|c| *c.borrow_mut() = (std::mem::take(&mut it.conditions), it.in_condition));
    match r {
        Ok(()) => {}
        Err(Halt::Pending) => return (Err(Pending), it.wait_turns),
        Err(Halt::Blocked) => it.blocked = true,
    }
    let end = ThreadEnd {
        locals: it.locals,
        blocked: it.blocked,
    };
    (Ok(end), it.wait_turns)
}

thread_local! {
    /// The nodes of the last thread run (see [`LitmusProgram::event_nodes`]).
    static LAST_NODES: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The wait conditions of the last thread run, and the start of the one
    /// it stopped in (see [`last_wait_conditions`]).
    static LAST_CONDITIONS: std::cell::RefCell<(Vec<WaitCondition>, Option<u32>)> =
        const { std::cell::RefCell::new((Vec::new(), None)) };
}

/// The wait-loop condition evaluations of the last [`run_thread`] on this
/// OS thread, and where the one it stopped in (pending) started.
pub fn last_wait_conditions() -> (Vec<WaitCondition>, Option<u32>) {
    LAST_CONDITIONS.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

impl Interp<'_> {
    /// Resolves a location reference; an out-of-bounds element blocks the thread.
    fn loc(&mut self, l: &LocRef) -> Result<Loc, Halt> {
        let off = match &l.offset {
            Some(e) => self.eval(e)?,
            None => 0,
        };
        if off < 0 || off >= l.len as Value {
            self.ask(Action::Block {
                reason: BlockReason::Assume,
            })?;
            return Err(Halt::Blocked);
        }
        Ok(Loc(l.base + off as u32))
    }

    fn ask(&mut self, a: Action) -> Result<Reply, Halt> {
        let node = std::mem::take(&mut self.node);
        let r = (self.oracle)(a).ok_or(Halt::Pending)?;
        self.nodes.push(node);
        self.asked += 1;
        let wrote = match a {
            Action::Cas { .. } => r.wrote,
            _ => a.may_write(),
        };
        self.wrote += wrote as u32;
        Ok(r)
    }

    fn block(&mut self, stmts: &[Stmt]) -> Result<(), Halt> {
        for s in stmts {
            if self.blocked {
                return Ok(());
            }
            match s {
                Stmt::Assign(slot, e) => {
                    let v = self.eval(e)?;
                    self.locals[*slot] = v;
                }
                Stmt::StoreNa(loc, e) => {
                    let val = self.eval(e)?;
                    self.ask(Action::Store {
                        loc: Loc(*loc),
                        ord: MemOrder::NonAtomic,
                        val,
                    })?;
                }
                Stmt::Expr(e) => {
                    self.eval(e)?;
                }
                Stmt::If(c, a, b) => {
                    if self.eval(c)? != 0 {
                        self.block(a)?;
                    } else {
                        self.block(b)?;
                    }
                }
                Stmt::While(c, body) => {
                    let mut n = 0;
                    loop {
                        let (asked, wrote) = (self.asked, self.wrote);
                        if body.is_empty() {
                            self.in_condition = Some(asked);
                        }
                        let held = self.eval(c)? != 0;
                        let failed = held && body.is_empty() && self.wrote == wrote;
                        if body.is_empty() {
                            self.in_condition = None;
                            self.conditions.push(WaitCondition {
                                start: asked,
                                end: self.asked,
                                failed,
                            });
                        }
                        if !held {
                            break;
                        }
                        if failed {
                            self.wait_turns.push((asked, self.asked));
                        }
                        if n == self.loop_bound {
                            self.ask(Action::Block {
                                reason: BlockReason::Bound,
                            })?;
                            return Err(Halt::Blocked);
                        }
                        n += 1;
                        self.block(body)?;
                        if self.blocked {
                            return Ok(());
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn eval(&mut self, e: &Expr) -> Result<Value, Halt> {
        Ok(match e {
            Expr::Int(v) => *v,
            Expr::Local(i) => self.locals[*i],
            Expr::LoadNa(loc) => {
                self.ask(Action::Load {
                    loc: Loc(*loc),
                    ord: MemOrder::NonAtomic,
                })?
                .val
            }
            Expr::Unary(op, a) => {
                let a = self.eval(a)?;
                match op {
                    UnOp::Neg => a.wrapping_neg(),
                    UnOp::Not => (a == 0) as Value,
                    UnOp::BitNot => !a,
                }
            }
            Expr::Binary(op, a, b) => {
                let a = self.eval(a)?;
                // Short-circuit like C.
                match op {
                    BinOp::And if a == 0 => return Ok(0),
                    BinOp::Or if a != 0 => return Ok(1),
                    _ => {}
                }
                let b = self.eval(b)?;
                match op {
                    BinOp::Add => a.wrapping_add(b),
                    BinOp::Sub => a.wrapping_sub(b),
                    BinOp::Mul => a.wrapping_mul(b),
                    BinOp::Div => a.checked_div(b).unwrap_or(0),
                    BinOp::Rem => a.checked_rem(b).unwrap_or(0),
                    BinOp::Shl => a.wrapping_shl(b as u32),
                    BinOp::Shr => a.wrapping_shr(b as u32),
                    BinOp::BitAnd => a & b,
                    BinOp::BitOr => a | b,
                    BinOp::BitXor => a ^ b,
                    BinOp::Eq => (a == b) as Value,
                    BinOp::Ne => (a != b) as Value,
                    BinOp::Lt => (a < b) as Value,
                    BinOp::Le => (a <= b) as Value,
                    BinOp::Gt => (a > b) as Value,
                    BinOp::Ge => (a >= b) as Value,
                    BinOp::And | BinOp::Or => (b != 0) as Value,
                }
            }
            Expr::Load { loc, ord } => {
                let loc = self.loc(loc)?;
                self.node = e as *const Expr as usize;
                self.ask(Action::Load { loc, ord: *ord })?.val
            }
            Expr::Store { loc, val, ord } => {
                let loc = self.loc(loc)?;
                let val = self.eval(val)?;
                self.node = e as *const Expr as usize;
                self.ask(Action::Store {
                    loc,
                    ord: *ord,
                    val,
                })?;
                0
            }
            Expr::Rmw { loc, op, val, ord } => {
                let loc = self.loc(loc)?;
                let operand = self.eval(val)?;
                self.node = e as *const Expr as usize;
                let read = self
                    .ask(Action::Rmw {
                        loc,
                        ord: *ord,
                        op: *op,
                        operand,
                        width: Width::I64,
                    })?
                    .val;
                match op {
                    RmwOp::RefDec => (read == 1) as Value,
                    RmwOp::RefInc => (read == 0) as Value,
                    _ => read,
                }
            }
            Expr::Cas {
                loc,
                expected,
                desired,
                success,
                failure,
                weak,
            } => {
                let loc = self.loc(loc)?;
                let exp = self
                    .ask(Action::Load {
                        loc: Loc(*expected),
                        ord: MemOrder::NonAtomic,
                    })?
                    .val;
                let new = self.eval(desired)?;
                self.node = e as *const Expr as usize;
                let r = self.ask(Action::Cas {
                    loc,
                    expected: exp,
                    new,
                    success: *success,
                    failure: *failure,
                    weak: *weak,
                    lock: false,
                    take: false,
                })?;
                if !r.wrote {
                    self.ask(Action::Store {
                        loc: Loc(*expected),
                        ord: MemOrder::NonAtomic,
                        val: r.val,
                    })?;
                }
                r.wrote as Value
            }
            Expr::Fence(ord) => {
                self.node = e as *const Expr as usize;
                self.ask(Action::Fence { ord: *ord })?;
                0
            }
            Expr::Lock(l) | Expr::TryLock(l) => {
                let loc = self.loc(l)?;
                let r = self.ask(match e {
                    Expr::Lock(_) => Action::lock_acquire(loc),
                    _ => Action::lock_try(loc),
                })?;
                if !r.wrote && matches!(e, Expr::Lock(_)) {
                    self.ask(Action::Block {
                        reason: BlockReason::LockHeld,
                    })?;
                    return Err(Halt::Blocked);
                }
                r.wrote as Value
            }
            Expr::Unlock(l) => {
                let loc = self.loc(l)?;
                self.ask(Action::lock_release(loc))?;
                0
            }
            Expr::Take { loc, n, waits } => {
                let loc = self.loc(loc)?;
                let n = self.eval(n)?;
                let r = self.ask(Action::take(
                    loc,
                    n,
                    MemOrder::Acquire,
                    MemOrder::Relaxed,
                    *waits,
                ))?;
                if !r.wrote && *waits {
                    self.ask(Action::Block {
                        reason: BlockReason::LockHeld,
                    })?;
                    return Err(Halt::Blocked);
                }
                r.wrote as Value
            }
        })
    }
}

/// A litmus test as a program for the explorers.
pub struct LitmusProgram<'a> {
    pub test: &'a LitmusTest,
    pub loop_bound: u32,
}

impl LitmusProgram<'_> {
    /// Replays thread `t` against the events `g` holds for it; returns the
    /// thread's end state when it has run to completion.
    pub fn replay(&self, g: &ExecutionGraph, t: u32) -> Result<ThreadEnd, Action> {
        let evs = g.thread_events(t);
        let mut i = 0;
        let mut pending = None;
        let r = run_thread(self.test, t as usize, self.loop_bound, &mut |a| {
            if let Some(e) = evs.get(i) {
                debug_assert_eq!(e.action, a, "litmus thread replay diverged");
                i += 1;
                Some(Reply {
                    val: e.read_val,
                    wrote: e.is_write(),
                })
            } else {
                pending = Some(a);
                None
            }
        });
        match r {
            Ok(end) => Ok(end),
            Err(Pending) => Err(pending.expect("pending action")),
        }
    }
}

impl LitmusProgram<'_> {
    /// For each event of thread `t` in `g`: the address of the access
    /// expression of `self.test` it comes from (0 for others).
    pub fn event_nodes(&self, g: &ExecutionGraph, t: u32) -> Vec<usize> {
        let _ = self.wait_turns(g, t);
        LAST_NODES.with(|n| std::mem::take(&mut *n.borrow_mut()))
    }

    /// The failed wait-loop turns of thread `t` in `g` (see [`WaitTurns`]).
    pub fn wait_turns(&self, g: &ExecutionGraph, t: u32) -> WaitTurns {
        let evs = g.thread_events(t);
        let mut i = 0;
        run_thread_turns(self.test, t as usize, self.loop_bound, &mut |_| {
            let e = evs.get(i)?;
            i += 1;
            Some(Reply {
                val: e.read_val,
                wrote: e.is_write(),
            })
        })
        .1
    }
}

impl Driver for LitmusProgram<'_> {
    fn initial_graph(&mut self) -> ExecutionGraph {
        ExecutionGraph::new(self.test.init.clone(), self.test.threads.len())
    }
    fn next_action(&mut self, g: &mut ExecutionGraph, t: u32) -> Action {
        match self.replay(g, t) {
            Err(a) => a,
            Ok(_) => Action::Finish,
        }
    }
}

impl c11check_axiomatic::TraceProgram for LitmusProgram<'_> {
    fn init(&self) -> Vec<Value> {
        self.test.init.clone()
    }
    fn num_threads(&self) -> usize {
        self.test.threads.len()
    }
    fn value_hints(&self) -> Vec<Value> {
        fn expr(e: &Expr, out: &mut Vec<Value>) {
            match e {
                Expr::Int(v) => out.push(*v),
                Expr::Unary(_, a) => expr(a, out),
                Expr::Binary(_, a, b) => {
                    expr(a, out);
                    expr(b, out);
                }
                Expr::Store { val, .. } | Expr::Rmw { val, .. } => expr(val, out),
                Expr::Cas { desired, .. } => expr(desired, out),
                Expr::Lock(_) | Expr::Unlock(_) | Expr::TryLock(_) => out.extend([0, 1]),
                Expr::Take { n, .. } => {
                    out.extend([0, 1]);
                    expr(n, out);
                }
                _ => {}
            }
        }
        fn stmts(ss: &[Stmt], out: &mut Vec<Value>) {
            for s in ss {
                match s {
                    Stmt::Assign(_, e) | Stmt::StoreNa(_, e) | Stmt::Expr(e) => expr(e, out),
                    Stmt::If(c, a, b) => {
                        expr(c, out);
                        stmts(a, out);
                        stmts(b, out);
                    }
                    Stmt::While(c, b) => {
                        expr(c, out);
                        stmts(b, out);
                    }
                }
            }
        }
        let mut out = Vec::new();
        for th in &self.test.threads {
            stmts(&th.body, &mut out);
        }
        out.sort();
        out.dedup();
        out
    }
    fn run(
        &self,
        t: usize,
        answer: &mut dyn FnMut(Action) -> Option<(Value, bool)>,
    ) -> c11check_axiomatic::RunEnd {
        use c11check_axiomatic::RunEnd;
        let r = run_thread(self.test, t, self.loop_bound, &mut |a| {
            answer(a).map(|(val, wrote)| Reply { val, wrote })
        });
        match r {
            Ok(end) if !end.blocked => RunEnd::Finished(end.locals),
            Ok(_) => RunEnd::Blocked,
            Err(Pending) => RunEnd::Stopped,
        }
    }
}
