//! Whether a litmus test is robust against SC under a model: every
//! execution the model allows (every reads-from graph the explorer visits,
//! blocked ones included, with every modification order the model allows
//! for it) is sequentially consistent. See `c11check_model::robust`.
//!
//! The failed turns of empty-bodied `while` loops are left out
//! ([`crate::interp::WaitTurns`]): a spin that waits for a value does not
//! make a test non-robust by the stale values it saw while waiting.

use crate::ast::LitmusTest;
use crate::interp::LitmusProgram;
use crate::run::{run_test, run_test_inspecting, RunOptions};
use c11check_explore::{Ending, Execution, Stats};
use c11check_model::robust::{sc_violation, Edge, Robustness};
use c11check_model::{Analysis, EventId, ExecutionGraph, MemOrder, Model, Value};
use std::cell::RefCell;
use std::collections::BTreeSet;

/// The most strengthenings a repair (`crate::repair`) tries at once.
pub const MAX_EDITS: usize = 4;

/// The verdict on a test.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every execution the model allows is SC.
    Robust,
    /// Some execution is not SC, and one of those ends in a state no SC
    /// execution reaches.
    NotRobust,
    /// Some execution is not SC, but each such one ends in a state SC
    /// reaches too (for example a modification order no read observes).
    NotRobustUnobservable,
    /// No violation found, but some execution had more modification orders
    /// than the check tries ([`c11check_model::robust::MAX_ORDERS`]).
    Undecided,
}

impl Verdict {
    /// The spelling of `@robust` lines and of the JSON `robustness` field.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Robust => "yes",
            Verdict::NotRobust => "no",
            Verdict::NotRobustUnobservable => "unobservable",
            Verdict::Undecided => "undecided",
        }
    }
}

/// A non-SC execution, in the file's terms.
#[derive(Clone, Debug)]
pub struct Witness {
    /// The cycle: each access with the edge to the next (the last leads
    /// back to the first).
    pub cycle: Vec<(String, Edge)>,
    /// The access expression (its address in the checked test; 0 for an
    /// initial value) of each step, with the edge that leaves it: what
    /// [`crate::repair::repair`] starts from.
    pub nodes: Vec<(usize, Edge)>,
    /// The final state it ends in (herd's spelling), when it completes.
    pub state: Option<String>,
    /// Whether no SC execution ends in that state.
    pub observable: bool,
}

impl Witness {
    /// `P0: W x=1 (relaxed) -po-> P0: R y=0 (relaxed) -fr-> ... -fr-> back`.
    pub fn cycle_text(&self) -> String {
        let mut s = String::new();
        for (ev, edge) in &self.cycle {
            s.push_str(ev);
            s.push_str(&format!(" -{}-> ", edge.name()));
        }
        s.push_str("(the first)");
        s
    }
}

/// The outcome of a robustness check of one test.
#[derive(Clone, Debug)]
pub struct RobustnessReport {
    pub name: String,
    pub model: String,
    pub verdict: Verdict,
    /// Executions checked (complete and blocked).
    pub executions: u64,
    /// Of those, the ones some allowed modification order makes non-SC.
    pub violations: u64,
    /// Executions with too many modification orders to check.
    pub undecided: u64,
    /// An observable violation when there is one, else the first found.
    pub witness: Option<Witness>,
    /// For a test that is not robust, when asked for
    /// ([`crate::repair::check_and_repair`]): the edits of a smallest repair found, in
    /// the file's terms, or `None` when none was found.
    pub repair: Option<Option<Vec<String>>>,
    pub stats: Stats,
}

impl RobustnessReport {
    pub fn robust(&self) -> Option<bool> {
        match self.verdict {
            Verdict::Robust => Some(true),
            Verdict::NotRobust | Verdict::NotRobustUnobservable => Some(false),
            Verdict::Undecided => None,
        }
    }

    /// A few lines for people.
    pub fn text(&self) -> String {
        let mut s = format!("Robustness {} ({})\n", self.name, self.model);
        match self.verdict {
            Verdict::Robust => s.push_str(&format!(
                "Robust: all {} executions are sequentially consistent\n",
                self.executions
            )),
            Verdict::Undecided => s.push_str(&format!(
                "Undecided: no violation in {} executions, but {} had too many \
                 modification orders to try\n",
                self.executions, self.undecided
            )),
            Verdict::NotRobust | Verdict::NotRobustUnobservable => {
                s.push_str(&format!(
                    "Not robust: {} of {} executions are not sequentially consistent\n",
                    self.violations, self.executions
                ));
                if let Some(w) = &self.witness {
                    s.push_str(&format!("Cycle: {}\n", w.cycle_text()));
                    match (&w.state, w.observable) {
                        (Some(st), true) => {
                            s.push_str(&format!("Observable: no SC execution ends in {st}\n"))
                        }
                        (Some(st), false) => s.push_str(&format!(
                            "Not observable in the final state: SC executions end in {st} \
                             too\n"
                        )),
                        (None, _) => s.push_str("It does not complete (a thread blocks)\n"),
                    }
                }
                match &self.repair {
                    Some(Some(edits)) => {
                        s.push_str(
                            "Repair (a smallest set of strengthenings that makes it robust):\n",
                        );
                        for e in edits {
                            s.push_str(&format!("  {e}\n"));
                        }
                    }
                    Some(None) => s.push_str(&format!(
                        "Repair: no set of at most {} strengthenings found\n",
                        MAX_EDITS
                    )),
                    None => {}
                }
            }
        }
        s
    }

    pub fn json(&self) -> serde_json::Value {
        let witness = self.witness.as_ref().map(|w| {
            serde_json::json!({
                "cycle": w.cycle.iter().map(|(e, k)| serde_json::json!({
                    "access": e,
                    "edge": k.name(),
                })).collect::<Vec<_>>(),
                "state": w.state,
                "observable": w.observable,
            })
        });
        serde_json::json!({
            "name": self.name,
            "model": self.model,
            "robust": self.robust(),
            "robustness": self.verdict.name(),
            "executions": self.executions,
            "violations": self.violations,
            "undecided": self.undecided,
            "witness": witness,
            "repair": self.repair.clone().flatten(),
            "time_ms": self.stats.elapsed.as_secs_f64() * 1e3,
        })
    }
}

/// Checks `test` for robustness against SC under `opts.model` (exhaustive;
/// `opts.random` and `opts.preemption_bound` are not used).
pub fn check_robustness(test: &LitmusTest, opts: &RunOptions) -> RobustnessReport {
    let start = std::time::Instant::now();
    let exhaustive = RunOptions {
        random: None,
        preemption_bound: None,
        ..opts.clone()
    };
    // The states SC reaches, to tell observable violations from others.
    let sc_states: BTreeSet<Vec<Value>> = run_test(
        test,
        &RunOptions {
            model: Model::Sc,
            ..exhaustive.clone()
        },
    )
    .states
    .into_keys()
    .collect();
    let keys = crate::states::state_keys(test);
    let program = LitmusProgram {
        test,
        loop_bound: opts.loop_bound,
    };
    #[derive(Default)]
    struct Found {
        executions: u64,
        violations: u64,
        undecided: u64,
        witness: Option<Witness>,
    }
    let found = RefCell::new(Found::default());
    let mut inspect = |ex: &Execution<'_>, vals: &[Value]| {
        let mut f = found.borrow_mut();
        f.executions += 1;
        let fresh;
        let a = if ex.analysis.is_partial() {
            match Analysis::new(ex.graph, ex.analysis.model) {
                Ok(a) => {
                    fresh = a;
                    &fresh
                }
                Err(_) => return,
            }
        } else {
            ex.analysis
        };
        let turns: Vec<_> = (0..ex.graph.num_threads() as u32)
            .map(|t| program.wait_turns(ex.graph, t))
            .collect();
        let ignored = |id: EventId| {
            turns[id.thread as usize]
                .iter()
                .any(|&(s, e)| (s..e).contains(&id.index))
        };
        match sc_violation(a, &ignored, ex.finals) {
            Robustness::Robust => {}
            Robustness::Undecided => f.undecided += 1,
            Robustness::Violation(cycle) => {
                f.violations += 1;
                let complete = ex.ending == Ending::Complete;
                let observable = complete && !sc_states.contains(vals);
                let better = match &f.witness {
                    None => true,
                    Some(w) => observable && !w.observable,
                };
                if better {
                    let state = crate::states::state_line(&keys, vals);
                    let nodes: Vec<Vec<usize>> = (0..ex.graph.num_threads() as u32)
                        .map(|t| program.event_nodes(ex.graph, t))
                        .collect();
                    f.witness = Some(Witness {
                        nodes: cycle
                            .steps
                            .iter()
                            .map(|&(id, k)| {
                                let node = if id.is_init() {
                                    0
                                } else {
                                    nodes[id.thread as usize]
                                        .get(id.index as usize)
                                        .copied()
                                        .unwrap_or(0)
                                };
                                (node, k)
                            })
                            .collect(),
                        cycle: cycle
                            .steps
                            .iter()
                            .map(|&(id, k)| (describe_event(test, ex.graph, id), k))
                            .collect(),
                        state: complete.then_some(state),
                        observable,
                    });
                }
            }
        }
    };
    let run = run_test_inspecting(test, &exhaustive, &mut inspect, &mut || {
        *found.borrow_mut() = Found::default();
    });
    let f = found.into_inner();
    let verdict = match (&f.witness, f.undecided) {
        (Some(w), _) if w.observable => Verdict::NotRobust,
        (Some(_), _) => Verdict::NotRobustUnobservable,
        (None, 0) => Verdict::Robust,
        (None, _) => Verdict::Undecided,
    };
    let mut stats = run.stats;
    stats.elapsed = start.elapsed();
    RobustnessReport {
        name: test.name.clone(),
        model: opts.model.name().to_string(),
        verdict,
        executions: f.executions,
        violations: f.violations,
        undecided: f.undecided,
        witness: f.witness,
        repair: None,
        stats,
    }
}

/// An access in the file's terms: `P0: W x=1 (relaxed)`.
pub fn describe_event(test: &LitmusTest, g: &ExecutionGraph, id: EventId) -> String {
    let name = |l: c11check_model::Loc| {
        test.locations
            .get(l.0 as usize)
            .map_or_else(|| format!("x{}", l.0), |s| s.clone())
    };
    if id.is_init() {
        let l = c11check_model::Loc(id.index);
        return format!("init {}={}", name(l), g.init_value(l));
    }
    let e = g.event(id);
    let Some(l) = e.loc() else {
        return format!("P{}: {}", id.thread, e.action);
    };
    let what = if e.is_rmw() {
        format!(
            "RMW {} {}->{}",
            name(l),
            e.read_val,
            e.written_value().unwrap_or(0)
        )
    } else if e.is_write() {
        format!("W {}={}", name(l), e.written_value().unwrap_or(0))
    } else {
        format!("R {}={}", name(l), e.read_val)
    };
    let ord = if e.ord() == MemOrder::NonAtomic {
        "plain"
    } else {
        e.ord().name()
    };
    format!("P{}: {what} ({ord})", id.thread)
}

/// Robustness decided the other way, from SC executions alone (Lahav and
/// Margalit's witnesses): a program is not robust iff some graph it reaches
/// under SC, extended by the next step of one of its threads in some way
/// the model allows, is not SC (a smallest non-SC graph, less a last event,
/// is such a graph, since the model's consistency holds for prefixes).
/// Every prefix of every SC execution is extended by every thread's next
/// access, reading every write of its location (and failing spuriously,
/// for a weak compare-exchange). Quadratic in the prefixes, so for litmus
/// tests: the cross-check of [`check_robustness`]. `None`: undecided (an
/// extension with too many modification orders).
pub fn robust_by_sc_runs(test: &LitmusTest, opts: &RunOptions) -> Option<bool> {
    use c11check_model::{Action, View};
    let model = opts.model;
    let program = LitmusProgram {
        test,
        loop_bound: opts.loop_bound,
    };
    let sc = RunOptions {
        model: Model::Sc,
        random: None,
        preemption_bound: None,
        ..opts.clone()
    };
    let mut graphs: Vec<ExecutionGraph> = Vec::new();
    run_test_inspecting(
        test,
        &sc,
        &mut |ex, _| graphs.push(ex.graph.clone()),
        &mut || {},
    );
    let mut seen = std::collections::HashSet::new();
    let mut undecided = false;
    for g in &graphs {
        let lens: Vec<u32> = (0..g.num_threads() as u32)
            .map(|t| g.thread_len(t))
            .collect();
        let mut view = vec![0u32; lens.len()];
        loop {
            // Closed under reads-from: every kept read's source is kept.
            let closed = g.events().all(|(id, e)| {
                id.index >= view[id.thread as usize]
                    || e.rf
                        .is_none_or(|w| w.is_init() || w.index < view[w.thread as usize])
            });
            let key: Vec<(EventId, Option<EventId>, bool)> = g
                .events()
                .filter(|(id, _)| id.index < view[id.thread as usize])
                .map(|(id, e)| (id, e.rf, e.spurious_fail))
                .collect();
            if closed && seen.insert(key) {
                let prefix = g.restrict_uncached(&View(view.clone()));
                for t in 0..prefix.num_threads() as u32 {
                    let Err(action) = program.replay(&prefix, t) else {
                        continue;
                    };
                    for ext in extensions(&prefix, t, action) {
                        if !c11check_model::is_consistent(&ext, model) {
                            continue;
                        }
                        let Ok(a) = Analysis::new(&ext, model) else {
                            continue;
                        };
                        let turns: Vec<_> = (0..ext.num_threads() as u32)
                            .map(|u| program.wait_turns(&ext, u))
                            .collect();
                        let ignored = |id: EventId| {
                            turns[id.thread as usize]
                                .iter()
                                .any(|&(s, e)| (s..e).contains(&id.index))
                        };
                        match sc_violation(&a, &ignored, &[]) {
                            Robustness::Violation(_) => return Some(false),
                            Robustness::Undecided => undecided = true,
                            Robustness::Robust => {}
                        }
                    }
                }
            }
            // The next view (an odometer over the thread lengths).
            let mut k = 0;
            while k < view.len() && view[k] == lens[k] {
                view[k] = 0;
                k += 1;
            }
            if k == view.len() {
                break;
            }
            view[k] += 1;
        }
    }
    /// `g` extended by thread `t`'s `action`, once per way it can read.
    fn extensions(g: &ExecutionGraph, t: u32, action: Action) -> Vec<ExecutionGraph> {
        if matches!(
            action,
            Action::Block { .. } | Action::Finish | Action::Fence { .. }
        ) {
            // No access: nothing a cycle of accesses could go through.
            return Vec::new();
        }
        let Some(loc) = action.loc() else {
            return Vec::new();
        };
        if !action.reads() {
            let mut g2 = g.clone();
            g2.push(t, action);
            return vec![g2];
        }
        let mut out = Vec::new();
        for w in g.writes_to(loc) {
            let mut g2 = g.clone();
            let id = g2.push(t, action);
            g2.set_rf(id, w);
            // An acquisition that waits does not fail: it waits its turn
            // (the explorer runs it once the lock is free; in a deadlock it
            // reads the last write, which closes no cycle).
            if matches!(action, Action::Cas { lock: true, .. }) && !g2.event(id).is_write() {
                continue;
            }
            let spurious =
                matches!(action, Action::Cas { weak: true, .. }) && g2.event(id).is_write();
            out.push(g2.clone());
            if spurious {
                g2.update_event(id, |e| e.spurious_fail = true);
                out.push(g2);
            }
        }
        out
    }
    if undecided {
        None
    } else {
        Some(true)
    }
}
