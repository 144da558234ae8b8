//! A straight-line program given as a list of actions per thread: for tests,
//! benchmarks and generated workloads (reads ignore the values they return).

use crate::Driver;
use c11check_model::{Action, ExecutionGraph, Value};

/// Threads that each perform a fixed sequence of actions.
#[derive(Clone, Debug)]
pub struct StraightLine {
    pub init: Vec<Value>,
    pub threads: Vec<Vec<Action>>,
}

impl Driver for StraightLine {
    fn initial_graph(&mut self) -> ExecutionGraph {
        ExecutionGraph::new(self.init.clone(), self.threads.len())
    }
    fn next_action(&mut self, g: &mut ExecutionGraph, t: u32) -> Action {
        self.threads[t as usize]
            .get(g.thread_len(t) as usize)
            .copied()
            .unwrap_or(Action::Finish)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{exhaustive, Config, Execution};
    use c11check_model::{Loc, MemOrder, Model, RmwOp, Width};

    fn fetch_adds(threads: usize, each: usize, ord: MemOrder) -> StraightLine {
        StraightLine {
            init: vec![0],
            threads: vec![
                vec![
                    Action::Rmw {
                        loc: Loc(0),
                        ord,
                        op: RmwOp::Add,
                        operand: 1,
                        width: Width::I64,
                    };
                    each
                ];
                threads
            ],
        }
    }

    /// 3 threads x 3 fetch_add: the 9!/(3!3!3!) = 1680 orders of the RMW chain, each once.
    #[test]
    fn three_by_three_fetch_add_is_1680() {
        for model in [Model::Cpp20, Model::Rc11, Model::Sc] {
            for ord in [MemOrder::Relaxed, MemOrder::SeqCst] {
                let mut p = fetch_adds(3, 3, ord);
                let mut finals = std::collections::BTreeSet::new();
                let mut config = Config::new(model);
                config.observed = vec![Loc(0)];
                let stats = exhaustive::explore(&mut p, &config, &mut |ex: &Execution<'_>| {
                    finals.insert(ex.graph.written_value(ex.finals[0].1));
                    true
                });
                assert_eq!(stats.executions, 1680, "{model} {ord:?}");
                assert_eq!(stats.blocked, 0);
                assert_eq!(stats.dead_ends, 0);
                assert_eq!(finals.into_iter().collect::<Vec<_>>(), vec![9]);
            }
        }
    }

    /// Stores nobody reads: their modification order is not observed, so one execution.
    #[test]
    fn unobserved_store_orders_do_not_multiply() {
        let st = |v| Action::Store {
            loc: Loc(0),
            ord: MemOrder::Relaxed,
            val: v,
        };
        let mut p = StraightLine {
            init: vec![0],
            threads: vec![vec![st(1), st(2)], vec![st(3), st(4)]],
        };
        let stats =
            exhaustive::explore(&mut p, &Config::new(Model::Cpp20), &mut |_: &Execution<
                '_,
            >| true);
        assert_eq!(stats.executions, 1);
        // Observing the final value distinguishes the two possible last stores.
        let mut config = Config::new(Model::Cpp20);
        config.observed = vec![Loc(0)];
        let stats = exhaustive::explore(&mut p, &config, &mut |_: &Execution<'_>| true);
        assert_eq!(stats.executions, 2);
    }

    /// The execution budget stops exploration and says so.
    #[test]
    fn budget_cuts_and_reports() {
        let mut p = fetch_adds(3, 3, MemOrder::Relaxed);
        let mut config = Config::new(Model::Cpp20);
        config.max_executions = Some(100);
        let stats = exhaustive::explore(&mut p, &config, &mut |_: &Execution<'_>| true);
        assert_eq!(stats.executions, 100);
        assert!(stats.cut);
    }
}
