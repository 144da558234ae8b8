//! Preemption bounding: how many times a schedule of an execution must take
//! the processor from a thread that could have gone on.
//!
//! An execution graph fixes each thread's events and what each read reads
//! from, not the order the threads ran in. A *schedule* of it is an order of
//! all its events that keeps each thread's program order, starts a thread
//! after its spawn, a join after the joined thread's end, and a read after
//! the write it reads from (under SC also: a read after no other write to
//! its location since, so the order is one SC run). A switch from thread `t`
//! to another is a *preemption* when `t` could have taken its next step
//! there: it has one, and that step would not wait (a join of a thread
//! still running, a lock or permit acquisition that the lock's value at
//! that point makes fail). A switch after `t`'s last event, while it waits,
//! or right after it yields (`yield_now`, a spin-loop hint), is free, as in
//! loom. The graph's preemption count is the
//! smallest over its schedules; bounded exploration keeps the graphs whose
//! count is at most the bound (as loom's `preemption_bound`, CHESS and
//! GenMC's `--bound` do).
//!
//! Under RC11 and the weaker models a read may take an older write, so a
//! schedule only orders a read after its source: every execution a
//! schedule-driven tool such as loom reaches within `k` preemptions has a
//! schedule here with at most `k`, and is explored.
//!
//! The count is found by a search over schedules that runs the current
//! thread on for as long as its next event can go, except at events whose
//! place can decide whether a later switch is free (a thread's end, a write
//! to a lock, a join or an acquisition, a yield, and under SC any write): moving any
//! other event earlier never adds a preemption. It branches only at those
//! and where the thread cannot go on, remembering the states already shown
//! to need more than the budget.

use c11check_model::{Action, EventId, ExecutionGraph, Loc, Value};
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

/// Which schedules count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// SC schedules: a read after no other write to its location since its
    /// source (the SC model).
    pub sc: bool,
    /// Reference-count updates commute (the explorer keeps one order of them
    /// for all, see `exhaustive`): a schedule may place them in any order,
    /// so what they read does not order them.
    pub refcounts_commute: bool,
}

/// Whether `g` has a schedule with at most `budget` preemptions (see the
/// module documentation); `sc` asks for SC schedules.
pub fn within(g: &ExecutionGraph, budget: u32, rules: Rules) -> bool {
    let part: Vec<u32> = (0..g.num_threads() as u32)
        .map(|t| g.thread_len(t))
        .collect();
    Search::new(g, &part, rules).fits(budget)
}

/// [`within`] for the part of `g` made of the first `part[t]` events of each
/// thread `t`, a part closed under program order and reads-from. An
/// execution that contains such a part as it is in `g` never needs fewer
/// preemptions than the part: a schedule of it, less the events outside
/// the part, is one of the part with no more. (Whether a switch is free
/// depends on the switching thread's next event and, for an acquisition,
/// on the lock's writes before it, which all lie in the part: each reads or
/// follows the one before, back from the write the acquisition takes.)
pub fn part_within(g: &ExecutionGraph, part: &[u32], budget: u32, rules: Rules) -> bool {
    Search::new(g, part, rules).fits(budget)
}

/// A schedule of a graph within a preemption budget, kept while the graph
/// grows: the explorer asks after every write whether the graph so far is
/// still within the bound, and a search for each was most of a bounded
/// run's time. Events added since are appended to the schedule; that costs
/// at most one more preemption per thread that had run before and now has
/// a new event (the switch after its last event took the processor from
/// nothing then, from the new event now). Only when the budget would be
/// exceeded, or under SC schedules (where a read at the end may not see its
/// write), does the search run again.
#[derive(Clone, Debug, Default)]
pub struct Witness {
    /// Events of each thread in the schedule.
    placed: Vec<u32>,
    /// The thread of the schedule's last event.
    last: Option<u32>,
    /// Threads whose last placed event is followed by another thread's.
    switched_away: Vec<bool>,
    /// The schedule's preemptions (an upper bound).
    cost: u32,
    /// Whether this is a schedule of a graph at all (else: none yet).
    valid: bool,
    /// The graph this grew from was found beyond the budget: so is every
    /// graph it grows into.
    over: bool,
}

impl Witness {
    /// Whether `g` has a schedule with at most `budget` preemptions, as
    /// [`within`] says, reusing and updating the schedule kept for the
    /// graph `g` grew from (forget it with `Witness::default()` when the
    /// graph changes otherwise, as at a revisit). Once a graph is beyond
    /// the budget, the graphs it grows into are too, without a search.
    pub fn within(&mut self, g: &ExecutionGraph, budget: u32, rules: Rules) -> bool {
        if self.over {
            return false;
        }
        if self.valid && !rules.sc && self.extend(g, budget) {
            return true;
        }
        let part: Vec<u32> = (0..g.num_threads() as u32)
            .map(|t| g.thread_len(t))
            .collect();
        let mut search = Search::new(g, &part, rules);
        if !search.fits(budget) {
            *self = Witness {
                over: true,
                ..Witness::default()
            };
            return false;
        }
        let n = g.num_threads();
        let mut w = Witness {
            placed: vec![0; n],
            last: None,
            switched_away: vec![false; n],
            cost: budget - search.left,
            valid: true,
            over: false,
        };
        for &t in &search.path {
            w.append(t);
        }
        *self = w;
        true
    }

    fn append(&mut self, t: u32) {
        let t = t as usize;
        if self.placed.len() <= t {
            self.placed.resize(t + 1, 0);
            self.switched_away.resize(t + 1, false);
        }
        if let Some(l) = self.last {
            if l as usize != t {
                self.switched_away[l as usize] = true;
            }
        }
        self.switched_away[t] = false;
        self.placed[t] += 1;
        self.last = Some(t as u32);
    }

    /// Appends the events `g` has beyond the schedule, in the order they
    /// were added; false when that may exceed `budget` (or the graph is not
    /// one this schedule's graph grew into).
    fn extend(&mut self, g: &ExecutionGraph, budget: u32) -> bool {
        let n = g.num_threads();
        if self.placed.len() < n {
            self.placed.resize(n, 0);
            self.switched_away.resize(n, false);
        }
        let mut new: SmallVec<[(u32, EventId); 8]> = SmallVec::new();
        for t in 0..n as u32 {
            let len = g.thread_len(t);
            if len < self.placed[t as usize] {
                return false;
            }
            for i in self.placed[t as usize]..len {
                let id = EventId::new(t, i);
                new.push((g.event(id).stamp, id));
            }
        }
        new.sort_unstable();
        let mut cost = self.cost;
        for &(_, id) in &new {
            let t = id.thread as usize;
            // The switch after this thread's last event now leaves an
            // event behind, unless the thread yielded there.
            let yielded =
                self.placed[t] > 0 && g.event(EventId::new(id.thread, self.placed[t] - 1)).yields;
            if self.switched_away[t] && !yielded {
                cost += 1;
                if cost > budget {
                    return false;
                }
            }
            self.append(id.thread);
        }
        self.cost = cost;
        true
    }
}

/// The smallest number of preemptions of a schedule of `g`, or `None` when
/// it has no schedule (an SC schedule of a graph that is not SC).
pub fn preemptions(g: &ExecutionGraph, rules: Rules) -> Option<u32> {
    let part: Vec<u32> = (0..g.num_threads() as u32)
        .map(|t| g.thread_len(t))
        .collect();
    let mut s = Search::new(g, &part, rules);
    let limit: u32 = g.events().count() as u32 + 1;
    (0..=limit).find(|&k| s.fits(k))
}

/// The state of a schedule being built: how many events of each thread
/// it has placed, which thread ran last, the value the latest placed write
/// left in each lock (a location some lock or permit acquisition accesses,
/// in the order of `locks`), and under SC the latest write placed at each
/// location written so far (by location).
#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    placed: SmallVec<[u32; 8]>,
    current: Option<u32>,
    lock_values: SmallVec<[Value; 4]>,
    latest: SmallVec<[(Loc, EventId); 4]>,
}

struct Search<'a> {
    g: &'a ExecutionGraph,
    /// How many events of each thread the schedules place.
    len: &'a [u32],
    sc: bool,
    refcounts_commute: bool,
    /// Under SC: how many reads each write has, and (while searching) how
    /// many of them are placed and the latest write placed per location.
    readers: HashMap<EventId, u32>,
    /// The locations lock and permit acquisitions access (sorted).
    locks: Vec<Loc>,
    /// States from which a schedule was shown to need more than the budget
    /// kept here (the largest such budget).
    failed: HashMap<State, u32>,
    /// The threads of the events placed on the way to the current state
    /// (the schedule found, once the search succeeds), and the budget left
    /// at its end.
    path: Vec<u32>,
    left: u32,
}

/// How many of each write's reads a schedule has placed, under SC (it
/// follows from the events placed, so it is not part of the state).
type ReadCount = HashMap<EventId, u32>;

impl<'a> Search<'a> {
    fn new(g: &'a ExecutionGraph, len: &'a [u32], rules: Rules) -> Self {
        let sc = rules.sc;
        let mut readers = HashMap::default();
        if sc {
            for (id, e) in g.events() {
                if id.index >= len[id.thread as usize] {
                    continue;
                }
                if let (true, Some(w)) = (e.is_read(), e.rf) {
                    *readers.entry(w).or_insert(0) += 1;
                }
            }
        }
        let mut locks: Vec<Loc> = g
            .events()
            .filter(|(_, e)| matches!(e.action, Action::Cas { lock: true, .. }))
            .filter_map(|(_, e)| e.loc())
            .collect();
        locks.sort();
        locks.dedup();
        Search {
            g,
            len,
            sc,
            refcounts_commute: rules.refcounts_commute,
            readers,
            locks,
            failed: HashMap::default(),
            path: Vec::new(),
            left: 0,
        }
    }

    fn fits(&mut self, budget: u32) -> bool {
        let n = self.g.num_threads();
        let state = State {
            placed: smallvec::smallvec![0; n],
            current: None,
            lock_values: self.locks.iter().map(|&l| self.g.init_value(l)).collect(),
            latest: SmallVec::new(),
        };
        self.search(state, ReadCount::default(), budget)
    }

    fn is_placed(&self, s: &State, id: EventId) -> bool {
        id.is_init() || s.placed[id.thread as usize] > id.index
    }

    fn latest(s: &State, loc: Loc) -> EventId {
        match s.latest.binary_search_by_key(&loc, |l| l.0) {
            Ok(i) => s.latest[i].1,
            Err(_) => EventId::init(loc),
        }
    }

    /// Whether thread `t`'s next event can be placed now.
    fn can_place(&self, s: &State, mem: &ReadCount, t: u32) -> bool {
        let g = self.g;
        let i = s.placed[t as usize];
        if i >= self.len[t as usize] {
            return false;
        }
        if i == 0 {
            if let Some(p) = g.thread(t).parent {
                if !self.is_placed(s, p) {
                    return false;
                }
            }
        }
        let e = g.event(EventId::new(t, i));
        if let Action::Join { child } = e.action {
            return s.placed[child as usize] == self.len[child as usize];
        }
        if e.is_read() && !(self.refcounts_commute && e.is_refcount()) {
            let Some(w) = e.rf else { return true };
            if !self.is_placed(s, w) {
                return false;
            }
            if self.sc && Self::latest(s, e.loc().unwrap()) != w {
                return false;
            }
        }
        if self.sc && e.is_write() {
            // The write ends the reads of the latest write: all must be placed
            // (a read-modify-write is one of them itself).
            let latest = Self::latest(s, e.loc().unwrap());
            let total = self.readers.get(&latest).copied().unwrap_or(0);
            let done = mem.get(&latest).copied().unwrap_or(0);
            let own = u32::from(e.is_read() && e.rf == Some(latest));
            if done + own < total {
                return false;
            }
        }
        true
    }

    /// Whether thread `t`'s next event waits in state `s`: a join of a
    /// thread not yet ended, or a lock or permit acquisition that the lock's
    /// value would make fail (a lock's writes are ordered by what they
    /// read, so that value is the one the latest placed write left).
    fn waits(&self, s: &State, t: u32) -> bool {
        let e = self.g.event(EventId::new(t, s.placed[t as usize]));
        match e.action {
            Action::Join { child } => s.placed[child as usize] < self.len[child as usize],
            Action::Cas {
                loc, lock: true, ..
            } => match self.locks.binary_search(&loc) {
                Ok(i) => e.action.cas_succeeds(s.lock_values[i]) == Some(false),
                Err(_) => false,
            },
            _ => false,
        }
    }

    /// Whether switching away from thread `t` now takes the processor from a
    /// thread that could go on: it has a next event, and it does not wait.
    fn could_go_on(&self, s: &State, t: u32) -> bool {
        let i = s.placed[t as usize];
        i < self.len[t as usize] && !self.yielded(s, t) && !self.waits(s, t)
    }

    /// Whether thread `t` yielded after its latest placed event.
    fn yielded(&self, s: &State, t: u32) -> bool {
        let i = s.placed[t as usize];
        i > 0 && self.g.event(EventId::new(t, i - 1)).yields
    }

    /// Whether placing thread `t`'s next event now may cost preemptions
    /// later that placing it later would not: it ends the thread (a join of
    /// it stops waiting), writes a lock (an acquisition starts or stops
    /// waiting), may wait itself, or, under SC, writes (it may hide the
    /// write a read of another thread must see). There the search tries
    /// both; elsewhere it runs the thread on.
    fn is_choice(&self, s: &State, t: u32) -> bool {
        if self.yielded(s, t) {
            return true;
        }
        let e = self.g.event(EventId::new(t, s.placed[t as usize]));
        match e.action {
            Action::Finish | Action::Join { .. } | Action::Cas { lock: true, .. } => true,
            _ => {
                e.is_write()
                    && (self.sc
                        || e.loc()
                            .is_some_and(|l| self.locks.binary_search(&l).is_ok()))
            }
        }
    }

    fn place(&self, s: &mut State, mem: &mut ReadCount, t: u32) {
        let id = EventId::new(t, s.placed[t as usize]);
        s.placed[t as usize] += 1;
        let e = self.g.event(id);
        let Some(loc) = e.loc() else { return };
        if e.is_write() {
            if let Ok(i) = self.locks.binary_search(&loc) {
                s.lock_values[i] = e.written_value().unwrap_or(0);
            }
        }
        if !self.sc {
            return;
        }
        if let (true, Some(w)) = (e.is_read(), e.rf) {
            *mem.entry(w).or_insert(0) += 1;
        }
        if e.is_write() {
            match s.latest.binary_search_by_key(&loc, |l| l.0) {
                Ok(i) => s.latest[i].1 = id,
                Err(i) => s.latest.insert(i, (loc, id)),
            }
        }
    }

    fn search(&mut self, mut s: State, mut mem: ReadCount, budget: u32) -> bool {
        let g = self.g;
        let entry = self.path.len();
        // Run the current thread on while it can, up to a choice.
        if let Some(t) = s.current {
            while self.can_place(&s, &mem, t) && !self.is_choice(&s, t) {
                self.place(&mut s, &mut mem, t);
                self.path.push(t);
            }
        }
        let n = g.num_threads() as u32;
        if (0..n).all(|t| s.placed[t as usize] == self.len[t as usize]) {
            self.left = budget;
            return true;
        }
        if self.failed.get(&s).is_some_and(|&b| b >= budget) {
            self.path.truncate(entry);
            return false;
        }
        let cost = match s.current {
            Some(t) => u32::from(self.could_go_on(&s, t)),
            None => 0,
        };
        let mut found = false;
        // The current thread first: going on is free, and most graphs have a
        // schedule that switches little.
        let order = s
            .current
            .into_iter()
            .chain((0..n).filter(|&u| Some(u) != s.current));
        for u in order {
            // At a choice the current thread may go on too, for free.
            let c = if Some(u) == s.current { 0 } else { cost };
            if c > budget || !self.can_place(&s, &mem, u) {
                continue;
            }
            let (mut next, mut next_mem) = (s.clone(), mem.clone());
            self.place(&mut next, &mut next_mem, u);
            next.current = Some(u);
            self.path.push(u);
            if self.search(next, next_mem, budget - c) {
                found = true;
                break;
            }
            self.path.pop();
        }
        if !found {
            self.path.truncate(entry);
            let b = self.failed.entry(s).or_insert(budget);
            *b = (*b).max(budget);
        }
        found
    }
}
