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
    let part = whole(g);
    Search::new(g, &part, rules).fits(budget)
}

/// Every event of `g`, as a part (see [`part_within`]).
fn whole(g: &ExecutionGraph) -> Vec<u32> {
    (0..g.num_threads() as u32)
        .map(|t| g.thread_len(t))
        .collect()
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
/// run's time. Each step of the schedule is checked and costed as the
/// search would (a read after its source, under SC after no other write to
/// its location; a switch away from a thread that could go on costs one).
/// Events added since go in as early as they may (see `Witness::extend`);
/// a thread switched away from when it had no next event, that has one
/// now, costs one more, counted without asking whether that event would
/// have waited, so the cost is an upper bound. Only when a step is not
/// allowed or the budget would be exceeded does the search run again. A
/// branch that starts from a revisit or another source of a read starts
/// from its parent's schedule, cut to the events it kept (see
/// [`Witness::restart`]).
#[derive(Clone, Debug, Default)]
pub struct Witness {
    /// The schedule's events, in order.
    order: Vec<EventId>,
    /// The locations some lock or permit acquisition placed accesses.
    locks: SmallVec<[Loc; 4]>,
    /// Events of each thread in the schedule.
    placed: Vec<u32>,
    /// The thread of the schedule's last event.
    last: Option<u32>,
    /// Threads switched away from after their last placed event while
    /// they had no next event (a free switch that a later event of theirs
    /// may make a preemption).
    switched_away: Vec<bool>,
    /// The latest write placed at each location written so far, with the
    /// value it left.
    latest: HashMap<Loc, (EventId, Value)>,
    /// The schedule's preemptions (an upper bound).
    cost: u32,
    /// The graph this grew from was found beyond the budget: so is every
    /// graph it grows into.
    over: bool,
}

impl Witness {
    /// The order of the schedule kept (the thread of each event), for a
    /// branch to start from (see [`Witness::adopt`]): of the graph, or,
    /// once that is beyond the budget, of part of it.
    pub fn order(&self) -> impl Iterator<Item = u32> + '_ {
        self.order.iter().map(|id| id.thread)
    }

    /// A witness for `g` starting from `order`, a schedule of a graph `g`
    /// was made from (a revisit keeps part of its parent's events, another
    /// source of a read changes one): its longest part that is a schedule
    /// of part of `g` is kept, and the rest of `g` is appended when asked
    /// (see [`Witness::within`]).
    pub fn adopt(g: &ExecutionGraph, order: &[u32], rules: Rules) -> Witness {
        let mut w = Witness::default();
        w.restart(g, order, rules);
        w
    }

    /// Makes this the witness [`Witness::adopt`] makes, in the buffers it
    /// has (a witness is remade at every branch).
    pub fn restart(&mut self, g: &ExecutionGraph, order: &[u32], rules: Rules) {
        self.order.clear();
        self.locks.clear();
        self.placed.clear();
        self.switched_away.clear();
        self.latest.clear();
        self.last = None;
        self.cost = 0;
        self.over = false;
        for &t in order {
            if !self.step(g, t, rules, u32::MAX) {
                break;
            }
        }
    }

    /// Whether `g` has a schedule with at most `budget` preemptions, as
    /// [`within`] says, reusing and updating the schedule kept for the
    /// graph `g` grew from (start it afresh with [`Witness::restart`] when
    /// the graph changes otherwise, as at a revisit). Once a graph is
    /// beyond the budget, the graphs it grows into are too, without a
    /// search.
    pub fn within(&mut self, g: &ExecutionGraph, budget: u32, rules: Rules) -> bool {
        if self.over {
            return false;
        }
        if self.cost <= budget && self.extend(g, budget, rules) {
            return true;
        }
        let part = whole(g);
        let mut search = Search::new(g, &part, rules);
        if !search.fits(budget) {
            // The schedule kept (of the graph before) stays, for the
            // branches made from this graph to start from.
            self.over = true;
            return false;
        }
        self.restart(g, &search.path, rules);
        debug_assert_eq!(
            self.order.len(),
            search.path.len(),
            "a found schedule is one"
        );
        debug_assert_eq!(self.cost, budget - search.left, "a found schedule's cost");
        true
    }

    /// Appends thread `t`'s next event of `g` if a schedule may place it
    /// here and the cost stays within `budget`; false (and nothing changed)
    /// otherwise.
    fn step(&mut self, g: &ExecutionGraph, t: u32, rules: Rules, budget: u32) -> bool {
        let n = g.num_threads();
        if self.placed.len() < n {
            self.placed.resize(n, 0);
            self.switched_away.resize(n, false);
        }
        let ti = t as usize;
        let i = self.placed[ti];
        if i >= g.thread_len(t) {
            return false;
        }
        let is_placed =
            |w: &Witness, id: EventId| id.is_init() || w.placed[id.thread as usize] > id.index;
        if i == 0 && g.thread(t).parent.is_some_and(|p| !is_placed(self, p)) {
            return false;
        }
        let id = EventId::new(t, i);
        let e = g.event(id);
        match e.action {
            Action::Join { child } if self.placed[child as usize] < g.thread_len(child) => {
                return false
            }
            _ => {}
        }
        if e.is_read() && !(rules.refcounts_commute && e.is_refcount()) {
            if let Some(w) = e.rf {
                if !is_placed(self, w) {
                    return false;
                }
                if rules.sc && self.latest_write(g, e.loc().unwrap()).0 != w {
                    return false;
                }
            }
        }
        let mut cost = self.cost;
        // A switch after this thread's last event, free when it had no
        // next event, now leaves this one behind, unless it yielded there.
        if self.switched_away[ti] && !(i > 0 && g.event(EventId::new(t, i - 1)).yields) {
            cost += 1;
        }
        if let Some(l) = self.last.filter(|&l| l != t) {
            cost += u32::from(self.could_go_on(g, l));
        }
        if cost > budget {
            return false;
        }
        self.cost = cost;
        if let Some(l) = self.last.filter(|&l| l != t) {
            self.switched_away[l as usize] = self.placed[l as usize] >= g.thread_len(l);
        }
        self.switched_away[ti] = false;
        self.placed[ti] += 1;
        self.last = Some(t);
        self.order.push(id);
        if let Action::Cas {
            loc, lock: true, ..
        } = e.action
        {
            if !self.locks.contains(&loc) {
                self.locks.push(loc);
            }
        }
        if e.is_write() {
            if let Some(loc) = e.loc() {
                self.latest
                    .insert(loc, (id, e.written_value().unwrap_or(0)));
            }
        }
        true
    }

    fn latest_write(&self, g: &ExecutionGraph, loc: Loc) -> (EventId, Value) {
        self.latest
            .get(&loc)
            .copied()
            .unwrap_or_else(|| (EventId::init(loc), g.init_value(loc)))
    }

    /// Whether switching away from thread `t` now takes the processor from
    /// a thread that could go on (as [`Search::could_go_on`] says).
    fn could_go_on(&self, g: &ExecutionGraph, t: u32) -> bool {
        let i = self.placed[t as usize];
        if i >= g.thread_len(t) || (i > 0 && g.event(EventId::new(t, i - 1)).yields) {
            return false;
        }
        let e = g.event(EventId::new(t, i));
        match e.action {
            Action::Join { child } => self.placed[child as usize] == g.thread_len(child),
            Action::Cas {
                loc, lock: true, ..
            } => e.action.cas_succeeds(self.latest_write(g, loc).1) != Some(false),
            _ => true,
        }
    }

    /// Adds the events `g` has beyond the schedule, in the order they were
    /// added, each as early as it may go: right after its thread's event
    /// before it (or its spawn), its source and, for a join, the joined
    /// thread's end. Right after its thread's event it costs nothing: its
    /// thread ran there, and the switch that followed stays free (it has
    /// no next event still). Placed later, after another thread's event,
    /// it may cost two preemptions, counted as if it did (an upper bound).
    /// Only an event that may change what a step placed later finds (a
    /// lock acquisition, a write to a lock, under SC any access), or that
    /// would exceed `budget`, has the schedule checked and counted afresh;
    /// false when it is then not one or costs more than `budget` (or the
    /// graph is not one this schedule's graph grew into).
    fn extend(&mut self, g: &ExecutionGraph, budget: u32, rules: Rules) -> bool {
        let n = g.num_threads();
        let mut new: SmallVec<[(u32, EventId); 8]> = SmallVec::new();
        for t in 0..n as u32 {
            let len = g.thread_len(t);
            let placed = self.placed.get(t as usize).copied().unwrap_or(0);
            if len < placed {
                return false;
            }
            for i in placed..len {
                let id = EventId::new(t, i);
                new.push((g.event(id).stamp, id));
            }
        }
        if new.is_empty() {
            return true;
        }
        if self.placed.len() < n {
            self.placed.resize(n, 0);
            self.switched_away.resize(n, false);
        }
        new.sort_unstable();
        let mut afresh = false;
        for (_, id) in new {
            let e = g.event(id);
            let mut after: SmallVec<[EventId; 3]> = SmallVec::new();
            if id.index > 0 {
                after.push(EventId::new(id.thread, id.index - 1));
            } else if let Some(p) = g.thread(id.thread).parent {
                after.push(p);
            }
            if let (true, Some(w)) = (e.is_read(), e.rf) {
                if !(w.is_init() || rules.refcounts_commute && e.is_refcount()) {
                    after.push(w);
                }
            }
            if let Action::Join { child } = e.action {
                if let Some(end) = g.thread_len(child).checked_sub(1) {
                    after.push(EventId::new(child, end));
                }
            }
            let at = self
                .order
                .iter()
                .rposition(|o| after.contains(o))
                .map_or(0, |p| p + 1);
            if afresh || at == self.order.len() {
                if !afresh && self.step(g, id.thread, rules, budget) {
                    continue;
                }
                afresh = true;
                self.order.insert(at, id);
                continue;
            }
            let writes_lock = e.is_write() && e.loc().is_some_and(|l| self.locks.contains(&l));
            // A revisited read keeps its stamp, older than its source's: it
            // comes before its source here, and cannot go in yet.
            let unplaced = after
                .iter()
                .any(|a| self.placed[a.thread as usize] <= a.index);
            if unplaced
                || matches!(e.action, Action::Cas { lock: true, .. })
                || writes_lock
                || (rules.sc && (e.is_write() || e.is_read()))
            {
                afresh = true;
                self.order.insert(at, id);
                continue;
            }
            // Placed at `at`, right after `anchor` (the latest event it
            // must follow) and before another event. The switch after it is free:
            // its thread has no next event there (the thread's end too: a
            // join of it comes after it). Right after its thread's event
            // before it, it costs nothing (that switch moves after it). Else
            // it may cost two preemptions, counted without asking whether
            // they are: the switch after its thread's event before it,
            // free while that was the thread's last (see `switched_away`),
            // and the switch after `anchor` when the event that followed it
            // is of `anchor`'s thread.
            let Some(&anchor) = at.checked_sub(1).map(|a| &self.order[a]) else {
                afresh = true;
                self.order.insert(at, id);
                continue;
            };
            let at_own = id.index > 0 && anchor == EventId::new(id.thread, id.index - 1);
            if !at_own {
                let ti = id.thread as usize;
                let before_free = id.index > 0
                    && self.switched_away[ti]
                    && !g.event(EventId::new(id.thread, id.index - 1)).yields;
                let anchor_goes_on =
                    self.order[at].thread == anchor.thread && !g.event(anchor).yields;
                let cost = self.cost + u32::from(before_free) + u32::from(anchor_goes_on);
                if cost > budget {
                    // Counted, it may cost less: a search finds whether
                    // some schedule is within (checking this one afresh
                    // first saves fewer searches than it costs).
                    return false;
                }
                self.cost = cost;
            }
            self.order.insert(at, id);
            self.placed[id.thread as usize] += 1;
            self.switched_away[id.thread as usize] = true;
            if let (true, Some(loc)) = (e.is_write(), e.loc()) {
                // The latest write placed at the location stays so if it
                // comes after this one.
                let later = self
                    .latest
                    .get(&loc)
                    .is_some_and(|&(l, _)| self.order[at + 1..].contains(&l));
                if !later {
                    self.latest
                        .insert(loc, (id, e.written_value().unwrap_or(0)));
                }
            }
        }
        if afresh {
            let threads: Vec<u32> = self.order.iter().map(|id| id.thread).collect();
            // Remade in place: when that fails the search remakes it again.
            self.restart(g, &threads, rules);
            if self.order.len() != threads.len() || self.cost > budget {
                return false;
            }
        }
        true
    }
}

/// The smallest number of preemptions of a schedule of `g`, or `None` when
/// it has no schedule (an SC schedule of a graph that is not SC).
pub fn preemptions(g: &ExecutionGraph, rules: Rules) -> Option<u32> {
    let part = whole(g);
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
