//! The execution graph: events per thread in program order, reads-from edges,
//! and the order in which the explorer added events.

mod memo;

pub use memo::Memo;

use crate::event::{Action, Event, EventId, Loc, Value};
use memo::MemoCell;
use smallvec::SmallVec;

/// The writes of one location in modification order, as
/// [`ExecutionGraph::rmw_chain`] finds them (a reference count's few
/// updates fit inline).
pub type RmwChain = SmallVec<[EventId; 8]>;

/// A downward-closed set of events: for each thread, how many of its first events it holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct View(pub Vec<u32>);

impl View {
    #[inline]
    pub fn contains(&self, id: EventId) -> bool {
        !id.is_init()
            && self
                .0
                .get(id.thread as usize)
                .is_some_and(|&n| id.index < n)
    }
    /// Grows the view to include `id` and its program-order predecessors.
    pub fn include(&mut self, id: EventId) -> bool {
        if id.is_init() {
            return false;
        }
        let t = id.thread as usize;
        if self.0.len() <= t {
            self.0.resize(t + 1, 0);
        }
        if self.0[t] <= id.index {
            self.0[t] = id.index + 1;
            true
        } else {
            false
        }
    }
}

/// One thread's events and the spawn event that started it (none for root threads).
#[derive(Debug, PartialEq, Eq)]
pub struct ThreadEvents {
    pub events: Vec<Event>,
    pub parent: Option<EventId>,
}

/// Events a cloned thread has room for without reallocating: the explorer
/// clones a graph at each branch and goes on adding events to the copy.
const CLONE_HEADROOM: usize = 8;

impl Clone for ThreadEvents {
    fn clone(&self) -> Self {
        let mut events = Vec::with_capacity(self.events.len() + CLONE_HEADROOM);
        events.extend_from_slice(&self.events);
        ThreadEvents {
            events,
            parent: self.parent,
        }
    }
}

/// The work list of a prefix computation starting at `id`, with room for a
/// typical one (growing it one push at a time showed in profiles).
fn start_work(id: EventId) -> Vec<EventId> {
    let mut work = Vec::with_capacity(32);
    work.push(id);
    work
}

/// What an event's happens-before clock and release view are computed from
/// (besides its thread's earlier events and its spawn).
fn clock_inputs(e: &Event) -> impl PartialEq {
    let joins = match e.action {
        Action::Join { child } => Some(child),
        _ => None,
    };
    (
        e.rf,
        e.is_read(),
        e.is_write(),
        e.is_fence(),
        e.loc(),
        e.ord(),
        joins,
    )
}

/// An execution graph (events, program order, reads-from); modification order is
/// not stored: it is kept as constraints derived by the consistency check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionGraph {
    threads: Vec<ThreadEvents>,
    init: Vec<Value>,
    next_stamp: u32,
    /// What analyses remember of it (see [`Memo`]).
    pub(crate) memo: MemoCell,
}

impl ExecutionGraph {
    /// A graph with `init.len()` locations holding these initial values and
    /// `roots` threads that exist from the start.
    pub fn new(init: Vec<Value>, roots: usize) -> Self {
        ExecutionGraph {
            threads: (0..roots)
                .map(|_| ThreadEvents {
                    events: Vec::new(),
                    parent: None,
                })
                .collect(),
            init,
            next_stamp: 0,
            memo: MemoCell::default(),
        }
    }

    /// Drops the per-location caches of the consistency memo (kept
    /// behind `Rc`s shared with other graphs of this thread): what is left
    /// belongs to this graph alone, and the caches are rebuilt on demand.
    /// The parallel explorer does this before a graph changes threads.
    pub fn detach_caches(&mut self) {
        if let Some(m) = self.memo.0.get_mut() {
            m.detach();
        }
    }

    #[inline]
    pub fn num_locs(&self) -> usize {
        self.init.len()
    }
    pub fn init_value(&self, loc: Loc) -> Value {
        self.init[loc.0 as usize]
    }
    /// Gives location `loc` a new initial value (a front end reusing the number
    /// of a location no event of the graph accesses any more).
    pub fn set_init(&mut self, loc: Loc, init: Value) {
        self.init[loc.0 as usize] = init;
    }
    /// Adds a location with an initial value (front ends that discover locations lazily).
    pub fn add_loc(&mut self, init: Value) -> Loc {
        self.init.push(init);
        Loc(self.init.len() as u32 - 1)
    }

    #[inline]
    pub fn num_threads(&self) -> usize {
        self.threads.len()
    }
    /// Declares a new thread started by `parent`.
    pub fn add_thread(&mut self, parent: Option<EventId>) -> u32 {
        self.threads.push(ThreadEvents {
            events: Vec::new(),
            parent,
        });
        self.threads.len() as u32 - 1
    }
    /// Sets the spawn event that starts thread `t`.
    pub fn set_parent(&mut self, t: u32, parent: Option<EventId>) {
        if self.threads[t as usize].parent != parent {
            self.forget_clocks_from(EventId::new(t, 0));
        }
        self.threads[t as usize].parent = parent;
    }
    #[inline]
    pub fn thread(&self, t: u32) -> &ThreadEvents {
        &self.threads[t as usize]
    }
    #[inline]
    pub fn thread_events(&self, t: u32) -> &[Event] {
        &self.threads[t as usize].events
    }
    #[inline]
    pub fn thread_len(&self, t: u32) -> u32 {
        self.threads[t as usize].events.len() as u32
    }
    #[inline]
    pub fn last_event(&self, t: u32) -> Option<&Event> {
        self.threads[t as usize].events.last()
    }
    #[inline]
    pub fn is_finished(&self, t: u32) -> bool {
        matches!(self.last_event(t).map(|e| e.action), Some(Action::Finish))
    }
    #[inline]
    pub fn is_blocked(&self, t: u32) -> bool {
        matches!(
            self.last_event(t).map(|e| e.action),
            Some(Action::Block { .. })
        )
    }
    /// Whether a thread has been started (root threads always are).
    #[inline]
    pub fn is_started(&self, t: u32) -> bool {
        match self.threads[t as usize].parent {
            None => true,
            Some(p) => self.contains(p),
        }
    }

    #[inline]
    pub fn contains(&self, id: EventId) -> bool {
        if id.is_init() {
            (id.index as usize) < self.init.len()
        } else {
            (id.thread as usize) < self.threads.len()
                && (id.index as usize) < self.threads[id.thread as usize].events.len()
        }
    }
    /// The event `id` (not for initialisation writes).
    #[inline]
    pub fn event(&self, id: EventId) -> &Event {
        &self.threads[id.thread as usize].events[id.index as usize]
    }
    /// The event `id`, to change as the caller likes: its remembered clock,
    /// and those of everything after it, are forgotten. [`Self::update_event`]
    /// forgets them only if the change can affect them.
    #[inline]
    pub fn event_mut(&mut self, id: EventId) -> &mut Event {
        self.forget_clocks_from(id);
        &mut self.threads[id.thread as usize].events[id.index as usize]
    }
    /// Changes event `id` with `f`. The remembered clocks are kept unless the
    /// change touches what clocks depend on (the source, the kind, location
    /// and order, whether it writes, the thread it joins).
    pub fn update_event(&mut self, id: EventId, f: impl FnOnce(&mut Event)) {
        let known = self.memo.known(id.thread as usize) > id.index as usize;
        let e = &mut self.threads[id.thread as usize].events[id.index as usize];
        if !known {
            // No clock of it (so none after it) is remembered.
            f(e);
            return;
        }
        let before = clock_inputs(e);
        f(e);
        if clock_inputs(e) != before {
            self.forget_clocks_from(id);
        }
    }
    /// Forgets the remembered clocks of `id` and of every event after it in
    /// po ∪ rf (with spawn and join): the ones that could depend on it.
    fn forget_clocks_from(&mut self, id: EventId) {
        let t = id.thread as usize;
        if id.is_init() || self.memo.known(t) <= id.index as usize {
            return;
        }
        let mut cut: Vec<usize> = (0..self.threads.len())
            .map(|u| self.memo.known(u).min(self.threads[u].events.len()))
            .collect();
        let threads = &self.threads;
        cut[t] = id.index as usize;
        let lens: Vec<usize> = threads.iter().map(|th| th.events.len()).collect();
        self.forget_clocks_beyond(cut, &lens);
    }

    /// Forgets the clocks of the events at or after `cut[t]` in each thread
    /// `t`, and of every event whose clock depends on one of them (through
    /// rf, a spawn, or a join of a thread that had `lens[child]` events when
    /// the clock was computed).
    fn forget_clocks_beyond(&mut self, mut cut: Vec<usize>, lens: &[usize]) {
        let Some(memo) = self.memo.0.get_mut() else {
            return;
        };
        let threads = &self.threads;
        let lost = |x: EventId, cut: &[usize]| {
            !x.is_init() && x.index as usize >= cut.get(x.thread as usize).copied().unwrap_or(0)
        };
        let mut changed = true;
        while changed {
            changed = false;
            for u in 0..threads.len() {
                for j in 0..cut[u] {
                    let e = &threads[u].events[j];
                    let joined_lost = |child: u32| {
                        let n = lens[child as usize] as u32;
                        n > 0 && lost(EventId::new(child, n - 1), &cut)
                    };
                    let depends = (j == 0 && threads[u].parent.is_some_and(|p| lost(p, &cut)))
                        || e.rf.is_some_and(|w| lost(w, &cut))
                        || matches!(e.action, Action::Join { child } if joined_lost(child));
                    if depends {
                        cut[u] = j;
                        changed = true;
                        break;
                    }
                }
            }
        }
        memo.forget_beyond(&cut);
    }
    /// Marks the events of `view` that the graph holds as no longer
    /// revisitable (clocks do not depend on it).
    pub fn settle(&mut self, view: &View) {
        for (th, &n) in self.threads.iter_mut().zip(&view.0) {
            let n = (n as usize).min(th.events.len());
            for e in &mut th.events[..n] {
                e.revisitable = false;
            }
        }
    }
    /// All events, thread by thread in program order.
    #[inline]
    pub fn events(&self) -> impl Iterator<Item = (EventId, &Event)> {
        self.threads.iter().enumerate().flat_map(|(t, th)| {
            th.events
                .iter()
                .enumerate()
                .map(move |(i, e)| (EventId::new(t as u32, i as u32), e))
        })
    }
    #[inline]
    pub fn num_events(&self) -> usize {
        self.threads.iter().map(|t| t.events.len()).sum()
    }

    /// Appends an event to thread `t` and gives it the next stamp.
    pub fn push(&mut self, t: u32, action: Action) -> EventId {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let th = &mut self.threads[t as usize];
        th.events.push(Event::new(action, stamp));
        EventId::new(t, th.events.len() as u32 - 1)
    }

    /// Appends an already-built event (keeping its stamp) to thread `t`.
    pub fn push_event(&mut self, t: u32, e: Event) -> EventId {
        let th = &mut self.threads[t as usize];
        th.events.push(e);
        EventId::new(t, th.events.len() as u32 - 1)
    }

    /// Removes the events of thread `t` from position `len` on.
    pub fn truncate_thread(&mut self, t: u32, len: u32) {
        if len < self.thread_len(t) {
            self.forget_clocks_from(EventId::new(t, len));
        }
        self.threads[t as usize].events.truncate(len as usize);
    }

    /// Whether `id` is a write (initialisation writes included).
    #[inline]
    pub fn is_write(&self, id: EventId) -> bool {
        id.is_init() || self.event(id).is_write()
    }
    /// The value written by `id`.
    #[inline]
    pub fn written_value(&self, id: EventId) -> Value {
        if id.is_init() {
            self.init[id.index as usize]
        } else {
            self.event(id).written_value().expect("not a write")
        }
    }
    /// The location a memory event accesses.
    #[inline]
    pub fn loc_of(&self, id: EventId) -> Option<Loc> {
        if id.is_init() {
            Some(Loc(id.index))
        } else {
            self.event(id).loc()
        }
    }
    #[inline]
    pub fn stamp(&self, id: EventId) -> u32 {
        if id.is_init() {
            0
        } else {
            self.event(id).stamp
        }
    }

    /// Makes read `r` read from write `w`, updating the cached value.
    pub fn set_rf(&mut self, r: EventId, w: EventId) {
        let val = self.written_value(w);
        let e = &mut self.threads[r.thread as usize].events[r.index as usize];
        // Of what clocks depend on (see `clock_inputs`), only the source and
        // whether a compare-exchange writes (and so its order) can change.
        let (old_rf, was_write) = (e.rf, e.is_write());
        e.rf = Some(w);
        e.read_val = val;
        if old_rf != Some(w) || e.is_write() != was_write {
            self.forget_clocks_from(r);
        }
    }

    /// Every write to `loc`, the initialisation write first.
    pub fn writes_to(&self, loc: Loc) -> Vec<EventId> {
        let mut out = vec![EventId::init(loc)];
        out.extend(
            self.events()
                .filter(|(_, e)| e.loc() == Some(loc) && e.is_write())
                .map(|(id, _)| id),
        );
        out
    }

    /// The porf-prefix of `id` (events before it in program order or reads-from,
    /// transitively, including thread creation and join), as a view containing `id`.
    pub fn porf_prefix(&self, id: EventId) -> View {
        self.prefix_view(View(vec![0; self.threads.len()]), start_work(id), true)
    }

    /// Like [`Self::porf_prefix`], but a reference-count update reading
    /// another one does not pull it in: their order is not a dependency (the
    /// explorer leaves it open, see `RmwOp::RefInc`). Except that an update
    /// whose class is `true` (a decrement that released the last reference)
    /// depends on every update before it: all of them make its count.
    pub fn porf_prefix_commuting(&self, id: EventId) -> View {
        let mut view = self.prefix_view(View(vec![0; self.threads.len()]), start_work(id), false);
        loop {
            let mut more = Vec::new();
            for (x, e) in self.events() {
                if !view.contains(x) || e.refcount_class() != Some(true) {
                    continue;
                }
                let mut src = e.rf;
                while let Some(w) = src.filter(|w| !w.is_init()) {
                    if !view.contains(w) {
                        more.push(w);
                    }
                    src = self.event(w).rf.filter(|_| self.event(w).is_refcount());
                }
            }
            if more.is_empty() {
                return view;
            }
            view = self.prefix_view(view, more, false);
        }
    }

    /// The porf-prefix of `id` without any reference-count update reading
    /// another: part of the prefix whatever order the updates take.
    pub fn porf_prefix_without_counts(&self, id: EventId) -> View {
        self.prefix_view(View(vec![0; self.threads.len()]), start_work(id), false)
    }

    fn prefix_view(&self, mut view: View, mut work: Vec<EventId>, refcount_rf: bool) -> View {
        while let Some(x) = work.pop() {
            let t = x.thread as usize;
            let from = view.0[t];
            if !view.include(x) {
                continue;
            }
            if from == 0 {
                if let Some(p) = self.threads[t].parent {
                    work.push(p);
                }
            }
            for i in from..=x.index {
                let e = &self.threads[t].events[i as usize];
                if let Some(w) = e.rf {
                    if !w.is_init()
                        && (refcount_rf || !(e.is_refcount() && self.event(w).is_refcount()))
                    {
                        work.push(w);
                    }
                }
                if let Action::Join { child } = e.action {
                    let n = self.thread_len(child);
                    if n > 0 {
                        work.push(EventId::new(child, n - 1));
                    }
                }
            }
        }
        view
    }

    /// The writes to `loc` in modification order when they form one chain of
    /// RMWs (the initial write, then each RMW reading the one before); `None`
    /// when some write to `loc` is not in such a chain.
    pub fn rmw_chain(&self, loc: Loc) -> Option<RmwChain> {
        let mut writes = 0;
        let mut next: SmallVec<[(EventId, EventId); 8]> = SmallVec::new();
        for (id, e) in self.events() {
            if e.loc() == Some(loc) && e.is_write() {
                writes += 1;
                next.push((e.rf?, id));
            }
        }
        let mut chain = RmwChain::new();
        chain.push(EventId::init(loc));
        while let Some(&(_, n)) = next.iter().find(|(src, _)| *src == *chain.last().unwrap()) {
            chain.push(n);
        }
        (chain.len() == writes + 1).then_some(chain)
    }

    /// Makes the events of `order` (an RMW chain, see [`Self::rmw_chain`])
    /// that are in the graph each read the previous one present, the initial
    /// write first, and recomputes the values they read. Returns whether
    /// some event's source changed.
    pub fn relink_chain(&mut self, order: &[EventId]) -> bool {
        let mut prev = order[0];
        let mut changed = false;
        for &e in &order[1..] {
            if self.contains(e) {
                changed |= self.event(e).rf != Some(prev);
                self.set_rf(e, prev);
                prev = e;
            }
        }
        changed
    }

    /// The locations that reference-count updates touch.
    pub fn refcount_locs(&self) -> SmallVec<[Loc; 4]> {
        let mut locs: SmallVec<[Loc; 4]> = self
            .events()
            .filter(|(_, e)| e.is_refcount())
            .filter_map(|(_, e)| e.loc())
            .collect();
        locs.sort_unstable();
        locs.dedup();
        locs
    }

    /// The graph restricted to the events of `keep` (stamps and flags
    /// unchanged), with the remembered clocks and location constraints
    /// that still hold for it.
    pub fn restrict(&self, keep: &View) -> ExecutionGraph {
        self.restrict_with(keep, true)
    }

    /// [`Self::restrict`] without location constraints: for a graph that
    /// is asked a few questions and dropped, copying them costs more than
    /// building the ones it needs.
    pub fn restrict_uncached(&self, keep: &View) -> ExecutionGraph {
        self.restrict_with(keep, false)
    }

    fn restrict_with(&self, keep: &View, caches: bool) -> ExecutionGraph {
        let lens: Vec<usize> = self.threads.iter().map(|th| th.events.len()).collect();
        let kept = |t: usize| (keep.0.get(t).copied().unwrap_or(0) as usize).min(lens[t]);
        // Only the kept events, and the clocks of kept events, are copied.
        let threads = self
            .threads
            .iter()
            .enumerate()
            .map(|(t, th)| {
                let mut events = Vec::with_capacity(kept(t) + CLONE_HEADROOM);
                events.extend_from_slice(&th.events[..kept(t)]);
                ThreadEvents {
                    events,
                    parent: th.parent,
                }
            })
            .collect();
        let memo = self.memo.0.borrow();
        let known = |t: usize| memo.as_ref().map_or(0, |m| m.known(t));
        let cut: Vec<usize> = (0..lens.len()).map(|t| known(t).min(kept(t))).collect();
        let mut g = ExecutionGraph {
            threads,
            init: self.init.clone(),
            next_stamp: self.next_stamp,
            memo: match memo.as_ref() {
                Some(m) => MemoCell::new(m.prefix(&cut, caches)),
                None => MemoCell::default(),
            },
        };
        drop(memo);
        g.forget_clocks_beyond(cut, &lens);
        g
    }

    /// The same graph with no remembered clocks (to check them).
    #[cfg(any(test, debug_assertions))]
    pub(crate) fn without_memo(&self) -> ExecutionGraph {
        let mut g = self.clone();
        g.memo = MemoCell::default();
        g
    }

    /// The view holding every event of the graph.
    pub fn full_view(&self) -> View {
        View(self.threads.iter().map(|t| t.events.len() as u32).collect())
    }
}
