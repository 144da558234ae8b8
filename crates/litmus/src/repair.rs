//! A repair for a test that is not robust against SC: a smallest set of
//! strengthenings (an access's memory order raised, or a seq_cst fence put
//! before an access) after which the test is robust, found by checking
//! candidate sets, smallest first.
//!
//! Candidates come from the witness's cycle first (its accesses raised one
//! or two steps, a fence before each access a po step leads to), then, when
//! no set of those is enough, from every atomic access of the test (raised
//! to seq_cst, a fence before it).

use crate::ast::{Expr, LitmusTest, Stmt};
use crate::robust::{check_robustness, RobustnessReport, Verdict, MAX_EDITS};
use crate::run::RunOptions;
use c11check_model::robust::Edge;
use c11check_model::MemOrder;

/// One strengthening of a test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Access `access` (in `accesses` order) of thread `thread` gets
    /// order `ord` (a compare-exchange: as its success order, and the
    /// matching failure order).
    Order {
        thread: usize,
        access: usize,
        ord: MemOrder,
    },
    /// `atomic_thread_fence(memory_order_seq_cst)` before the statement
    /// holding access `access` of thread `thread`.
    FenceBefore { thread: usize, access: usize },
}

/// Sets of edits tried at most.
pub const MAX_CHECKS: usize = 3000;

/// What [`repair`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Repair {
    /// These edits make the test robust, and no smaller set of candidates does.
    Found(Vec<Edit>),
    /// No set of at most [`MAX_EDITS`] candidates (or none within
    /// [`MAX_CHECKS`] checks) does.
    NotFound,
}

/// Where an access sits: its thread, its number there, its expression's
/// address, and the path to the statement holding it (index in the body,
/// then per nested block which branch and index).
struct Site {
    thread: usize,
    access: usize,
    addr: usize,
    stmt: Vec<(u8, usize)>,
}

/// Every atomic access of `test` (loads, stores, RMWs, compare-exchanges),
/// in a fixed order: statements in order, and within one, its expressions
/// outside in.
fn accesses(test: &LitmusTest) -> Vec<Site> {
    fn expr(e: &Expr, thread: usize, stmt: &[(u8, usize)], out: &mut Vec<Site>) {
        if matches!(
            e,
            Expr::Load { .. } | Expr::Store { .. } | Expr::Rmw { .. } | Expr::Cas { .. }
        ) {
            let access = out.iter().filter(|s| s.thread == thread).count();
            out.push(Site {
                thread,
                access,
                addr: e as *const Expr as usize,
                stmt: stmt.to_vec(),
            });
        }
        match e {
            Expr::Unary(_, a) => expr(a, thread, stmt, out),
            Expr::Binary(_, a, b) => {
                expr(a, thread, stmt, out);
                expr(b, thread, stmt, out);
            }
            Expr::Store { val, .. } | Expr::Rmw { val, .. } => expr(val, thread, stmt, out),
            Expr::Cas { desired, .. } => expr(desired, thread, stmt, out),
            Expr::Take { n, .. } => expr(n, thread, stmt, out),
            _ => {}
        }
    }
    fn block(ss: &[Stmt], thread: usize, path: &mut Vec<(u8, usize)>, out: &mut Vec<Site>) {
        for (i, s) in ss.iter().enumerate() {
            let branch = path.pop().map_or(0, |(b, _)| b);
            path.push((branch, i));
            match s {
                Stmt::Assign(_, e) | Stmt::StoreNa(_, e) | Stmt::Expr(e) => {
                    expr(e, thread, path, out)
                }
                Stmt::If(c, a, b) => {
                    expr(c, thread, path, out);
                    path.push((0, 0));
                    block(a, thread, path, out);
                    path.pop();
                    path.push((1, 0));
                    block(b, thread, path, out);
                    path.pop();
                }
                Stmt::While(c, body) => {
                    expr(c, thread, path, out);
                    path.push((0, 0));
                    block(body, thread, path, out);
                    path.pop();
                }
            }
        }
    }
    let mut out = Vec::new();
    for (t, th) in test.threads.iter().enumerate() {
        let mut path = vec![(0, 0)];
        block(&th.body, t, &mut path, &mut out);
    }
    out
}

/// The access expression `n` of thread `t`, to change.
fn access_mut(test: &mut LitmusTest, t: usize, n: usize) -> Option<&mut Expr> {
    let addr = accesses(test)
        .into_iter()
        .find(|s| s.thread == t && s.access == n)?
        .addr;
    fn find_expr(e: &mut Expr, addr: usize) -> Option<&mut Expr> {
        if e as *const Expr as usize == addr {
            return Some(e);
        }
        match e {
            Expr::Unary(_, a) => find_expr(a, addr),
            Expr::Binary(_, a, b) => match find_expr(a, addr) {
                Some(x) => Some(x),
                None => find_expr(b, addr),
            },
            Expr::Store { val, .. } | Expr::Rmw { val, .. } => find_expr(val, addr),
            Expr::Cas { desired, .. } => find_expr(desired, addr),
            Expr::Take { n, .. } => find_expr(n, addr),
            _ => None,
        }
    }
    fn find_block(ss: &mut [Stmt], addr: usize) -> Option<&mut Expr> {
        for s in ss {
            let found = match s {
                Stmt::Assign(_, e) | Stmt::StoreNa(_, e) | Stmt::Expr(e) => find_expr(e, addr),
                Stmt::If(c, a, b) => find_expr(c, addr)
                    .or_else(|| find_block(a, addr))
                    .or_else(|| find_block(b, addr)),
                Stmt::While(c, body) => find_expr(c, addr).or_else(|| find_block(body, addr)),
            };
            if found.is_some() {
                return found;
            }
        }
        None
    }
    find_block(&mut test.threads[t].body, addr)
}

/// `test` with `edits` applied; `None` when one does not apply.
pub fn apply(test: &LitmusTest, edits: &[Edit]) -> Option<LitmusTest> {
    let mut out = test.clone();
    // Orders first (fences shift no access numbers, but statement paths).
    for e in edits {
        if let &Edit::Order {
            thread,
            access,
            ord,
        } = e
        {
            match access_mut(&mut out, thread, access)? {
                Expr::Load { ord: o, .. }
                | Expr::Store { ord: o, .. }
                | Expr::Rmw { ord: o, .. } => *o = ord,
                Expr::Cas {
                    success, failure, ..
                } => {
                    *success = ord;
                    *failure = ord.read_half();
                }
                _ => return None,
            }
        }
    }
    // Fences from the last statement to the first, so that paths stay valid.
    let sites = accesses(test);
    let mut fences: Vec<(usize, Vec<(u8, usize)>)> = edits
        .iter()
        .filter_map(|e| match *e {
            Edit::FenceBefore { thread, access } => sites
                .iter()
                .find(|s| s.thread == thread && s.access == access)
                .map(|s| (thread, s.stmt.clone())),
            _ => None,
        })
        .collect();
    fences.sort();
    fences.dedup();
    for (thread, path) in fences.into_iter().rev() {
        // Each component is a block's (branch of its statement, index).
        let mut block = &mut out.threads[thread].body;
        for k in 0..path.len() - 1 {
            let (i, branch) = (path[k].1, path[k + 1].0);
            block = match &mut block[i] {
                Stmt::If(_, a, b) => {
                    if branch == 0 {
                        a
                    } else {
                        b
                    }
                }
                Stmt::While(_, body) => body,
                _ => return None,
            };
        }
        let at = path.last()?.1;
        block.insert(at, Stmt::Expr(Expr::Fence(MemOrder::SeqCst)));
    }
    Some(out)
}

/// The orders one step and two steps stronger than an access's (as far as
/// seq_cst).
fn stronger(e: &Expr) -> Vec<MemOrder> {
    use MemOrder::*;
    let (ord, ladder): (MemOrder, &[MemOrder]) = match e {
        Expr::Load { ord, .. } => (*ord, &[Acquire, SeqCst]),
        Expr::Store { ord, .. } => (*ord, &[Release, SeqCst]),
        Expr::Rmw { ord, .. } => (*ord, &[AcqRel, SeqCst]),
        Expr::Cas { success, .. } => (*success, &[AcqRel, SeqCst]),
        _ => return Vec::new(),
    };
    let rank = |o: MemOrder| match o {
        NonAtomic | Relaxed => 0,
        Acquire | Release => 1,
        AcqRel => 2,
        SeqCst => 3,
    };
    ladder
        .iter()
        .copied()
        .filter(|&o| rank(o) > rank(ord))
        .collect()
}

/// Finds a smallest repair of `test` under `opts.model`. `witness_nodes`
/// are the cycle's access expressions (addresses in `test`) with the edge
/// that leaves each, as [`crate::robust::Witness::nodes`] gives them.
pub fn repair(test: &LitmusTest, opts: &RunOptions, witness_nodes: &[(usize, Edge)]) -> Repair {
    let sites = accesses(test);
    let site_of = |addr: usize| sites.iter().find(|s| s.addr == addr);
    let expr_of = |s: &Site| -> Option<Expr> {
        let mut copy = test.clone();
        access_mut(&mut copy, s.thread, s.access).cloned()
    };
    // The cycle's candidates: raises of its accesses, and a fence before
    // each access a po step leads to.
    let mut first: Vec<Edit> = Vec::new();
    let mut fences: Vec<Edit> = Vec::new();
    let n = witness_nodes.len();
    for (i, &(addr, edge)) in witness_nodes.iter().enumerate() {
        let Some(s) = site_of(addr) else { continue };
        if let Some(e) = expr_of(s) {
            for ord in stronger(&e) {
                first.push(Edit::Order {
                    thread: s.thread,
                    access: s.access,
                    ord,
                });
            }
        }
        if edge == Edge::Po {
            if let Some(next) = site_of(witness_nodes[(i + 1) % n].0) {
                if next.thread == s.thread && next.stmt != s.stmt {
                    fences.push(Edit::FenceBefore {
                        thread: next.thread,
                        access: next.access,
                    });
                }
            }
        }
    }
    // Weaker strengthenings first: acquire/release before seq_cst.
    first.sort_by_key(|e| matches!(e, Edit::Order { ord, .. } if *ord == MemOrder::SeqCst));
    first.extend(fences);
    let mut checks = 0;
    if let Some(found) = search(test, opts, &first, &mut checks) {
        return Repair::Found(found);
    }
    // Every access of the test, raised to seq_cst or fenced.
    let mut all = first.clone();
    for s in &sites {
        let sc = Edit::Order {
            thread: s.thread,
            access: s.access,
            ord: MemOrder::SeqCst,
        };
        let is_sc = expr_of(s).is_some_and(|e| stronger(&e).is_empty());
        if !is_sc && !all.contains(&sc) {
            all.push(sc);
        }
        let fence = Edit::FenceBefore {
            thread: s.thread,
            access: s.access,
        };
        if s.access > 0 && !all.contains(&fence) {
            all.push(fence);
        }
    }
    match search(test, opts, &all, &mut checks) {
        Some(found) => Repair::Found(found),
        None => Repair::NotFound,
    }
}

/// The first set of candidates (smallest first, each access ordered once)
/// that makes `test` robust.
fn search(
    test: &LitmusTest,
    opts: &RunOptions,
    pool: &[Edit],
    checks: &mut usize,
) -> Option<Vec<Edit>> {
    for size in 1..=MAX_EDITS.min(pool.len()) {
        let mut idx: Vec<usize> = (0..size).collect();
        loop {
            let set: Vec<Edit> = idx.iter().map(|&i| pool[i].clone()).collect();
            let orders_distinct = {
                let mut seen = Vec::new();
                set.iter().all(|e| match e {
                    Edit::Order { thread, access, .. } => {
                        let k = (*thread, *access);
                        !seen.contains(&k) && {
                            seen.push(k);
                            true
                        }
                    }
                    Edit::FenceBefore { .. } => true,
                })
            };
            if orders_distinct {
                if *checks >= MAX_CHECKS {
                    return None;
                }
                *checks += 1;
                if let Some(t2) = apply(test, &set) {
                    if check_robustness(&t2, opts).verdict == Verdict::Robust {
                        return Some(set);
                    }
                }
            }
            // The next combination of `size` indices.
            let mut k = size;
            loop {
                if k == 0 {
                    break;
                }
                k -= 1;
                if idx[k] < pool.len() - size + k {
                    idx[k] += 1;
                    for j in k + 1..size {
                        idx[j] = idx[j - 1] + 1;
                    }
                    break;
                }
                if k == 0 {
                    k = usize::MAX;
                    break;
                }
            }
            if k == usize::MAX {
                break;
            }
        }
    }
    None
}

/// An edit in the file's terms: `make P0's load of y (its access 2)
/// memory_order_seq_cst`.
pub fn describe(test: &LitmusTest, e: &Edit) -> String {
    let sites = accesses(test);
    let what = |t: usize, n: usize| {
        let site = sites.iter().find(|s| s.thread == t && s.access == n);
        let mut copy = test.clone();
        let kind = match site.and_then(|s| access_mut(&mut copy, s.thread, s.access)) {
            Some(Expr::Load { loc, .. }) => {
                format!("load of {}", test.locations[loc.base as usize])
            }
            Some(Expr::Store { loc, .. }) => {
                format!("store to {}", test.locations[loc.base as usize])
            }
            Some(Expr::Rmw { loc, .. }) => {
                format!("read-modify-write of {}", test.locations[loc.base as usize])
            }
            Some(Expr::Cas { loc, .. }) => {
                format!("compare-exchange of {}", test.locations[loc.base as usize])
            }
            _ => "access".to_string(),
        };
        format!("P{t}'s {kind} (its atomic access {})", n + 1)
    };
    match *e {
        Edit::Order {
            thread,
            access,
            ord,
        } => format!(
            "make {} memory_order_{}",
            what(thread, access),
            order_name(ord)
        ),
        Edit::FenceBefore { thread, access } => format!(
            "insert atomic_thread_fence(memory_order_seq_cst) before {}",
            what(thread, access)
        ),
    }
}

fn order_name(o: MemOrder) -> &'static str {
    match o {
        MemOrder::NonAtomic | MemOrder::Relaxed => "relaxed",
        MemOrder::Acquire => "acquire",
        MemOrder::Release => "release",
        MemOrder::AcqRel => "acq_rel",
        MemOrder::SeqCst => "seq_cst",
    }
}

/// Whether `verdict` calls for a repair.
pub fn needed(verdict: Verdict) -> bool {
    matches!(verdict, Verdict::NotRobust | Verdict::NotRobustUnobservable)
}

/// [`check_robustness`], and for a test that is not robust a smallest
/// repair ([`repair`]), checked under the same options.
pub fn check_and_repair(test: &LitmusTest, opts: &RunOptions) -> RobustnessReport {
    let start = std::time::Instant::now();
    let mut r = check_robustness(test, opts);
    if let (true, Some(w)) = (needed(r.verdict), &r.witness) {
        r.repair = Some(match repair(test, opts, &w.nodes) {
            Repair::Found(edits) => Some(edits.iter().map(|e| describe(test, e)).collect()),
            Repair::NotFound => None,
        });
    }
    r.stats.elapsed = start.elapsed();
    r
}
