//! Running a litmus test and reporting like herd7.

use crate::ast::*;
use crate::interp::LitmusProgram;
use crate::states::{condition_text, observed_locs, state_keys, state_line, state_of};
use c11check_explore::{exhaustive, random, Config, Ending, Execution, Stats, Visitor};
use c11check_model::{Loc, Model, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// How to run a test.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub model: Model,
    /// Iterations a `while` loop may run before the thread is cut (blocked).
    pub loop_bound: u32,
    pub max_executions: Option<u64>,
    pub time_budget: Option<Duration>,
    /// `Some((iterations, seed))`: random executions instead of all of them.
    pub random: Option<(u64, u64)>,
    /// Random executions run on the live memory (C11Tester's model; the
    /// default) rather than as execution graphs.
    pub live: bool,
    /// Whether the order of reference-count updates is judged observable
    /// from the file (a read of a count or a seq_cst fence anywhere in it),
    /// so that every order is explored from the start (the default); or
    /// left to the exhaustive explorer, which keeps updates commuting until
    /// a graph shows their order and then starts over, as it does for the
    /// Rust API.
    pub refcount_order_from_file: bool,
    /// Explore only the executions some schedule reaches with at most this
    /// many preemptions (see `c11check_explore::bound`).
    pub preemption_bound: Option<u32>,
    /// Worker threads (`run_test` only; 1: this thread alone). The counts
    /// and states do not depend on it.
    pub jobs: usize,
    /// Explore one shard's share of the executions (random runs: of the
    /// chunks of iterations).
    pub shard: Option<c11check_explore::Shard>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            model: Model::Cpp20,
            loop_bound: 3,
            max_executions: None,
            time_budget: None,
            random: None,
            live: true,
            refcount_order_from_file: true,
            preemption_bound: None,
            jobs: 1,
            shard: None,
        }
    }
}

/// The outcome of running one test.
#[derive(Clone, Debug)]
pub struct TestReport {
    pub name: String,
    /// The model's name (`cpp20`, `rc11`, `sc`, `mca`, `tso`, or `c11`,
    /// which only the brute-force engine has).
    pub model: String,
    /// Which engine found the states.
    pub engine: Engine,
    /// The keys of a state, sorted as herd prints them.
    pub keys: Vec<Key>,
    /// Each reachable final state (values in `keys` order) and how many executions reach it.
    pub states: BTreeMap<Vec<Value>, u64>,
    pub ok: bool,
    pub positive: u64,
    pub negative: u64,
    /// Some execution has a data race.
    pub race: bool,
    /// The first race found, in the file's terms: which threads' accesses
    /// to which location (exhaustive and graph runs).
    pub race_between: Option<String>,
    pub stats: Stats,
    pub condition: Condition,
    /// The shard this run explored, if only one.
    pub shard: Option<c11check_explore::Shard>,
}

impl TestReport {
    pub fn observation(&self) -> &'static str {
        if self.positive == 0 {
            "Never"
        } else if self.negative == 0 {
            "Always"
        } else {
            "Sometimes"
        }
    }

    /// herd's verdict line: `Undef` when some execution races, else `Ok` or `No`.
    pub fn verdict(&self) -> &'static str {
        if self.race {
            "Undef"
        } else if self.ok {
            "Ok"
        } else {
            "No"
        }
    }

    /// A state as herd prints it: `0:r0=1; [x]=2;`.
    pub fn state_line(&self, vals: &[Value]) -> String {
        state_line(&self.keys, vals)
    }

    /// The report in herd7's layout, plus c11check's own counters.
    pub fn herd_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Test {} Allowed", self.name);
        let _ = writeln!(s, "States {}", self.states.len());
        for vals in self.states.keys() {
            let _ = writeln!(s, "{}", self.state_line(vals));
        }
        let _ = writeln!(s, "{}", self.verdict());
        let _ = writeln!(s, "Witnesses");
        let _ = writeln!(s, "Positive: {} Negative: {}", self.positive, self.negative);
        if self.race {
            let _ = writeln!(s, "Flag *undef*");
            if let Some(between) = &self.race_between {
                let _ = writeln!(s, "Race {between}");
            }
        }
        let _ = writeln!(s, "Condition {}", condition_text(&self.condition));
        let _ = writeln!(
            s,
            "Observation {} {} {} {}",
            self.name,
            self.observation(),
            self.positive,
            self.negative
        );
        let _ = writeln!(
            s,
            "Model {} Executions {} Blocked {}{} Time {:.2} ms",
            self.model,
            self.stats.executions,
            self.stats.blocked,
            if self.stats.bound_hits > 0 {
                format!(" (loop bound reached in {})", self.stats.bound_hits)
            } else {
                String::new()
            },
            self.stats.elapsed.as_secs_f64() * 1e3
        );
        if self.stats.cut {
            let _ = writeln!(s, "Warning: exploration stopped early (budget reached); the states above may be incomplete");
        }
        if self.stats.over_bound + self.stats.bound_pruned > 0 {
            let _ = writeln!(
                s,
                "Warning: the preemption bound left out {} executions (and abandoned {} partial \
                 ones); the states above are those within it",
                self.stats.over_bound, self.stats.bound_pruned
            );
        }
        s
    }

    /// One JSON object with herd's key spellings.
    pub fn json(&self) -> serde_json::Value {
        let states: Vec<serde_json::Value> = self
            .states
            .keys()
            .map(|vals| {
                let mut m = serde_json::Map::new();
                for (k, v) in self.keys.iter().zip(vals) {
                    m.insert(k.herd_name(), serde_json::json!(v));
                }
                serde_json::Value::Object(m)
            })
            .collect();
        let quantifier = match self.condition.quantifier {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        };
        serde_json::json!({
            "name": self.name,
            "model": self.model,
            "engine": self.engine.name(),
            "states": states,
            "state_counts": self.states.values().collect::<Vec<_>>(),
            "quantifier": quantifier,
            "shard": self.shard.map(|s| format!("{}/{}", s.index + 1, s.count)),
            "ok": self.ok,
            "observation": self.observation(),
            "positive": self.positive,
            "negative": self.negative,
            "race": self.race,
            "race_between": self.race_between,
            "executions": self.stats.executions,
            "blocked": self.stats.blocked,
            "bound_hits": self.stats.bound_hits,
            "cut": self.stats.cut,
            "over_preemption_bound": self.stats.over_bound,
            "pruned_by_preemption_bound": self.stats.bound_pruned,
            "time_ms": self.stats.elapsed.as_secs_f64() * 1e3,
        })
    }
}

/// The engine a report comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The explorers (exhaustive, random or live).
    Explorer,
    /// The brute-force axiomatic checker (`--brute-force`, `c11`).
    BruteForce,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Explorer => "explorer",
            Engine::BruteForce => "brute force",
        }
    }
}

/// Explores every execution of `test` and summarises them.
pub fn run_test(test: &LitmusTest, opts: &RunOptions) -> TestReport {
    if let Some((iterations, seed)) = opts.random {
        return run_test_random(test, opts, iterations, seed);
    }
    if opts.jobs > 1 && opts.shard.is_none() {
        return run_test_parallel(test, opts);
    }
    run_test_with(test, opts, &mut |_, _| {})
}

/// [`run_test`]'s random run: chunks of iterations dealt to `opts.jobs`
/// workers (`random::deal`; with `opts.shard`, that shard's chunks), the
/// tallies merged in iteration order, so that every number of jobs counts
/// the same. A budget of executions stops the run at the end of the chunk
/// that reaches it.
fn run_test_random(test: &LitmusTest, opts: &RunOptions, iterations: u64, seed: u64) -> TestReport {
    let start = std::time::Instant::now();
    let keys = state_keys(test);
    let within_budget = |executions: u64| opts.max_executions.is_none_or(|m| executions < m);
    if opts.live && opts.model.has_live_memory() {
        let mut whole = crate::live_run::LiveOutcome::default();
        let run_chunk = |_: &mut (), range| {
            let o = crate::live_run::run_live(test, opts.model, opts.loop_bound, range, seed);
            (o, opts.time_budget.is_some_and(|b| start.elapsed() >= b))
        };
        random::deal(
            opts.jobs,
            iterations,
            opts.shard,
            &|_| (),
            &run_chunk,
            &mut |o| {
                whole.merge(o);
                within_budget(whole.executions + whole.blocked)
            },
            &mut || {},
        );
        return live_report(test, opts, keys, whole, start.elapsed());
    }
    let mut config = explorer_config(test, opts, &keys);
    config.max_executions = None;
    let make = |_| tally_worker(test, opts, &keys);
    let run_chunk = |(program, visitor): &mut (LitmusProgram, TallyVisitor), range| {
        let stats = random::explore_range(
            program,
            &config,
            seed,
            range,
            start,
            &mut |_, _| {},
            visitor,
        );
        let tally = std::mem::take(&mut visitor.tally);
        ((tally, stats.clone()), stats.cut)
    };
    let (mut tally, mut stats) = (Tally::default(), Stats::default());
    random::deal(
        opts.jobs,
        iterations,
        opts.shard,
        &make,
        &run_chunk,
        &mut |(t, s)| {
            tally.merge(t);
            stats.add(&s);
            within_budget(stats.executions + stats.blocked)
        },
        &mut || {},
    );
    stats.cut |= !within_budget(stats.executions + stats.blocked);
    stats.elapsed = start.elapsed();
    report(test, opts, keys, tally, stats)
}

/// The explorer's configuration for `test` under `opts`.
fn explorer_config(test: &LitmusTest, opts: &RunOptions, keys: &[Key]) -> Config {
    let mut config = Config::new(opts.model);
    config.observed = observed_locs(test, keys);
    config.max_executions = opts.max_executions;
    config.time_budget = opts.time_budget;
    config.commute_refcounts = !(opts.refcount_order_from_file && test.refcount_order_observable);
    config.preemption_bound = opts.preemption_bound;
    config.shard = opts.shard;
    config
}

/// [`run_test`]'s exhaustive run on `opts.jobs` worker threads, each with
/// its own interpreter and tally, merged at the end.
fn run_test_parallel(test: &LitmusTest, opts: &RunOptions) -> TestReport {
    let keys = state_keys(test);
    let config = explorer_config(test, opts, &keys);
    let make = || tally_worker(test, opts, &keys);
    let (stats, tallies) =
        exhaustive::explore_parallel(opts.jobs, &config, &make, &|v: TallyVisitor| v.tally);
    let mut tally = Tally::default();
    for t in tallies {
        tally.merge(t);
    }
    report(test, opts, keys.clone(), tally, stats)
}

/// Like [`run_test`], also handing each execution and its state to `inspect`
/// (the tests use it to cross-check executions).
pub fn run_test_with(
    test: &LitmusTest,
    opts: &RunOptions,
    inspect: &mut dyn FnMut(&Execution<'_>, &[Value]),
) -> TestReport {
    run_test_inspecting(test, opts, inspect, &mut || {})
}

/// Like [`run_test_with`]; `restarted` is told when the exploration starts
/// over (see [`RunOptions::refcount_order_from_file`]): the executions
/// handed to `inspect` so far will be handed again. The report counts
/// those of the last start only.
pub fn run_test_inspecting(
    test: &LitmusTest,
    opts: &RunOptions,
    inspect: &mut dyn FnMut(&Execution<'_>, &[Value]),
    restarted: &mut dyn FnMut(),
) -> TestReport {
    let keys = state_keys(test);
    let config = explorer_config(test, opts, &keys);
    let mut program = LitmusProgram {
        test,
        loop_bound: opts.loop_bound,
    };
    let replayer = LitmusProgram {
        test,
        loop_bound: opts.loop_bound,
    };
    let tally = RefCell::new(Tally::default());
    let visit = |ex: &Execution<'_>| {
        let vals = tally.borrow_mut().count(test, &keys, &replayer, ex);
        inspect(ex, &vals);
        true
    };
    let mut visit = Restartable {
        visit,
        tally: &tally,
        restarted,
    };
    let live = opts.live && opts.model.has_live_memory();
    if let (true, Some((iterations, seed))) = (live, opts.random) {
        let start = std::time::Instant::now();
        let o = crate::live_run::run_live(test, opts.model, opts.loop_bound, 0..iterations, seed);
        return live_report(test, opts, keys, o, start.elapsed());
    }
    let stats = match opts.random {
        None => exhaustive::explore(&mut program, &config, &mut visit),
        Some((iterations, seed)) => c11check_explore::random::explore(
            &mut program,
            &config,
            seed,
            iterations,
            &mut |_, _| {},
            &mut visit,
        ),
    };
    report(test, opts, keys, tally.into_inner(), stats)
}

/// The report of a live run that found `o`.
fn live_report(
    test: &LitmusTest,
    opts: &RunOptions,
    keys: Vec<Key>,
    o: crate::live_run::LiveOutcome,
    elapsed: std::time::Duration,
) -> TestReport {
    let ok = match test.condition.quantifier {
        Quantifier::Exists => o.positive > 0,
        Quantifier::NotExists => o.positive == 0,
        Quantifier::Forall => o.negative == 0,
    };
    TestReport {
        name: test.name.clone(),
        model: opts.model.name().to_string(),
        engine: Engine::Explorer,
        keys,
        states: o.states,
        ok,
        positive: o.positive,
        negative: o.negative,
        race: o.race,
        race_between: None,
        stats: Stats {
            executions: o.executions,
            blocked: o.blocked,
            elapsed,
            ..Stats::default()
        },
        condition: test.condition.clone(),
        shard: opts.shard,
    }
}

/// The report of a run that counted `tally`.
fn report(
    test: &LitmusTest,
    opts: &RunOptions,
    keys: Vec<Key>,
    tally: Tally,
    stats: Stats,
) -> TestReport {
    let Tally {
        states,
        positive,
        negative,
        race,
        race_between,
    } = tally;
    let ok = match test.condition.quantifier {
        Quantifier::Exists => positive > 0,
        Quantifier::NotExists => positive == 0,
        Quantifier::Forall => negative == 0,
    };
    TestReport {
        name: test.name.clone(),
        model: opts.model.name().to_string(),
        engine: Engine::Explorer,
        keys,
        states,
        ok,
        positive,
        negative,
        race,
        race_between,
        stats,
        condition: test.condition.clone(),
        shard: opts.shard,
    }
}

/// Racing accesses `a` and `b` in the file's terms: `P1's plain read of x
/// (its access 2) and P0's plain write of x (its access 1)`.
fn describe_race(
    test: &LitmusTest,
    g: &c11check_model::ExecutionGraph,
    a: c11check_model::EventId,
    b: c11check_model::EventId,
) -> String {
    let one = |id: c11check_model::EventId| {
        let e = g.event(id);
        let loc = e
            .loc()
            .and_then(|l| test.locations.get(l.0 as usize))
            .map_or("?", |s| s.as_str());
        let plain = if e.ord() == c11check_model::MemOrder::NonAtomic {
            "plain "
        } else {
            ""
        };
        let kind = if e.is_write() { "write" } else { "read" };
        // The how-manieth event of its thread that accesses memory.
        let nth = g.thread_events(id.thread)[..=id.index as usize]
            .iter()
            .filter(|x| x.loc().is_some())
            .count();
        format!(
            "P{}'s {plain}{kind} of {loc} (its memory access {nth})",
            id.thread
        )
    };
    format!("{} and {}", one(a), one(b))
}

/// What an exploration of a test counts (reset when it starts over).
#[derive(Default)]
struct Tally {
    states: BTreeMap<Vec<Value>, u64>,
    positive: u64,
    negative: u64,
    race: bool,
    race_between: Option<String>,
}

impl Tally {
    /// Counts one execution: its final state (empty for one that did not
    /// complete), whether the condition holds there, the first race.
    fn count(
        &mut self,
        test: &LitmusTest,
        keys: &[Key],
        replayer: &LitmusProgram<'_>,
        ex: &Execution<'_>,
    ) -> Vec<Value> {
        // The race named is the first in text order of all executions',
        // whatever order they were explored in (by one worker or several).
        if let Some(&(a, b)) = ex.analysis.races().first() {
            self.race = true;
            let this = describe_race(test, ex.graph, a, b);
            if self.race_between.as_ref().is_none_or(|r| this < *r) {
                self.race_between = Some(this);
            }
        }
        if ex.ending != Ending::Complete {
            return Vec::new();
        }
        let ends: Vec<Vec<Value>> = (0..test.threads.len() as u32)
            .map(|t| {
                replayer
                    .replay(ex.graph, t)
                    .map(|e| e.locals)
                    .unwrap_or_default()
            })
            .collect();
        let locals = |t: u32, r: &str| -> Value {
            let th = &test.threads[t as usize];
            th.locals
                .iter()
                .position(|l| l == r)
                .and_then(|i| ends[t as usize].get(i).copied())
                .unwrap_or(0)
        };
        let final_loc = |l: Loc| -> Value {
            let w = ex
                .finals
                .iter()
                .find(|(fl, _)| *fl == l)
                .map(|(_, w)| *w)
                .unwrap();
            ex.graph.written_value(w)
        };
        let vals = state_of(test, keys, &locals, &final_loc);
        let holds = test.condition.prop.eval(&|k: &Key| {
            let i = keys.iter().position(|x| x == k).unwrap();
            vals[i]
        });
        match holds {
            true => self.positive += 1,
            false => self.negative += 1,
        }
        *self.states.entry(vals.clone()).or_insert(0) += 1;
        vals
    }

    /// Adds another worker's tally.
    fn merge(&mut self, other: Tally) {
        for (state, n) in other.states {
            *self.states.entry(state).or_insert(0) += n;
        }
        self.positive += other.positive;
        self.negative += other.negative;
        self.race |= other.race;
        self.race_between = match (self.race_between.take(), other.race_between) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// A worker of a parallel run of `test`: its interpreter and its tally.
fn tally_worker<'a>(
    test: &'a LitmusTest,
    opts: &RunOptions,
    keys: &'a [Key],
) -> (LitmusProgram<'a>, TallyVisitor<'a>) {
    let program = || LitmusProgram {
        test,
        loop_bound: opts.loop_bound,
    };
    let visitor = TallyVisitor {
        tally: Tally::default(),
        test,
        keys,
        replayer: program(),
    };
    (program(), visitor)
}

/// One worker's visitor in a parallel run: its tally.
struct TallyVisitor<'a> {
    tally: Tally,
    test: &'a LitmusTest,
    keys: &'a [Key],
    replayer: LitmusProgram<'a>,
}

impl Visitor for TallyVisitor<'_> {
    fn visit(&mut self, ex: &Execution<'_>) -> bool {
        self.tally.count(self.test, self.keys, &self.replayer, ex);
        true
    }
}

/// A visitor that forgets what it counted when the exploration starts over
/// (and says so to `restarted`).
struct Restartable<'a, F> {
    visit: F,
    tally: &'a RefCell<Tally>,
    restarted: &'a mut dyn FnMut(),
}

impl<F: FnMut(&Execution<'_>) -> bool> Visitor for Restartable<'_, F> {
    fn visit(&mut self, ex: &Execution<'_>) -> bool {
        (self.visit)(ex)
    }
    fn restart(&mut self) {
        *self.tally.borrow_mut() = Tally::default();
        (self.restarted)();
    }
}

/// Runs `test` on the brute-force axiomatic engine (`c11check-axiomatic`): every
/// candidate execution is enumerated and tested against the model's axioms.
/// Needed for `c11`, whose load buffering the explorer does not construct;
/// exponential, so meant for litmus-sized tests. Counts are of distinct
/// executions (reads-from plus observed final writes).
pub fn run_test_brute(
    test: &LitmusTest,
    model: c11check_axiomatic::AxModel,
    loop_bound: u32,
) -> Result<TestReport, String> {
    let start = std::time::Instant::now();
    let keys = state_keys(test);
    let observed = observed_locs(test, &keys);
    let program = LitmusProgram { test, loop_bound };
    let e = c11check_axiomatic::enumerate(&program, model, &observed, 20_000_000)
        .map_err(|e| format!("{}: the brute-force engine gave up ({e:?})", test.name))?;
    if e.domain_capped {
        eprintln!(
            "{}: note: read values guessed for {} rounds of propagation only (a dependency cycle keeps producing new values)",
            test.name,
            c11check_axiomatic::MAX_VALUE_ROUNDS
        );
    }
    let mut states: BTreeMap<Vec<Value>, u64> = BTreeMap::new();
    let (mut positive, mut negative) = (0, 0);
    for (regs, finals) in &e.states {
        let locals = |t: u32, r: &str| -> Value {
            test.threads[t as usize]
                .locals
                .iter()
                .position(|l| l == r)
                .and_then(|i| regs[t as usize].get(i).copied())
                .unwrap_or(0)
        };
        let final_loc = |l: Loc| -> Value {
            let i = observed.iter().position(|o| *o == l).unwrap();
            finals[i]
        };
        let vals = state_of(test, &keys, &locals, &final_loc);
        let holds = test
            .condition
            .prop
            .eval(&|k: &Key| vals[keys.iter().position(|x| x == k).unwrap()]);
        if holds {
            positive += 1;
        } else {
            negative += 1;
        }
        *states.entry(vals).or_insert(0) += 1;
    }
    let ok = match test.condition.quantifier {
        Quantifier::Exists => positive > 0,
        Quantifier::NotExists => positive == 0,
        Quantifier::Forall => negative == 0,
    };
    Ok(TestReport {
        name: test.name.clone(),
        model: model.name().to_string(),
        engine: Engine::BruteForce,
        keys,
        states,
        ok,
        positive,
        negative,
        race: e.race,
        race_between: None,
        stats: Stats {
            executions: e.executions.len() as u64,
            elapsed: start.elapsed(),
            ..Stats::default()
        },
        condition: test.condition.clone(),
        shard: None,
    })
}
