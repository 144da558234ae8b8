//! Robustness against SC decided on the fly, during an SC run, with
//! *location clocks* (the instrumentation of RSAN, rsan-robustness.md §3–4
//! and Appendix A, rebuilt from its definitions rather than its pseudo-code).
//!
//! The run itself is sequentially consistent: every read reads the latest
//! write, and modification order is execution order. Before each access
//! of a thread to `x`, the monitor asks whether the thread could perform it
//! *weakly* instead (read an older write, or put its write before a newer
//! one) in a way the model allows but no SC run produces: that is a
//! non-robustness witness (Lahav and Margalit), and a program has one in
//! some SC run iff it is not robust.
//!
//! A location clock maps each location to a [`Stamp`]: a write's position
//! in modification order (`ts`, 0 for the initial value) and the number of
//! writes up to it that are not read-modify-writes (`plain`, which decides
//! whether a write may go right before another: not before an RMW, which
//! must stay right after the write it read). Both grow along modification
//! order, so the stamp with the larger `ts` is the larger one in both.
//!
//! * Happens-before (C++20, release sequences through RMWs only): each
//!   thread's *current* view (the writes it is hb-aware of, or that it or
//!   an event hb-before it read), *acquire* view (what an acquire fence
//!   would add: what relaxed reads saw released) and *release* view (its
//!   view at its last release fence, which relaxed writes release); each
//!   location's release view of its latest write. A view is updated on
//!   every access of the location, whatever its order; only the joins with
//!   other views depend on the order. A relaxed write releases its own
//!   stamp too.
//! * SC happens-before (po ∪ rf ∪ mo ∪ fr over atomic accesses): each
//!   thread's SC view, each location's SC view of its latest write (what a
//!   read of it adds) and of all its accesses (what a write after them adds,
//!   by mo and fr).
//! * SC fences synchronise with each other in execution order (an acq-rel
//!   RMW of an otherwise unused location, as RC20 defines them) for
//!   happens-before only: they are not accesses, so they add no SC edge.
//!
//! A read may read stale iff its current view at `x` is behind its SC view
//! (some write hb_SC-before the thread is newer than every write it is
//! aware of); a write may go before a newer write iff a non-RMW write lies
//! between the two views. Which stale writes matter depends on the values
//! they hold when the access is a compare-exchange (success needs the
//! expected value) or a wait-loop turn (a value that keeps it waiting makes
//! the turn a failed one, which robustness leaves out): the monitor keeps
//! the last [`RECENT`] writes of each location and reports only a value it
//! knows.
//!
//! Failed wait-loop turns are left out of SC happens-before: the caller
//! opens a turn ([`LocationClocks::turn_start`]) and either drops it
//! ([`LocationClocks::turn_failed`], which restores the thread's SC view)
//! or keeps it. A turn's reads reach the location's SC view only once it
//! is kept, so a write of another thread in between misses that fr edge:
//! this run then reports less, never more (the schedule that runs the
//! turn first reports it).
//!
//! SeqCst accesses are acquire/release accesses for happens-before; their
//! psc constraints are judged by whether a psc cycle is possible at all.
//! Every psc edge between the run's events follows the run's order, and so
//! does every edge into the weak step; an edge against it must go from the
//! step (when it is SeqCst) or an SC fence hb-before it (once the run has
//! had a SeqCst access: without one, SC fences are exact as RC20 fences)
//! through the step's eco to a SeqCst write of the location (one the step
//! would come before in modification order) or to an SC fence after such a
//! write or a read of it. Where no such edge exists, psc stays acyclic and
//! the witness is reported; where one does, a cycle is possible but not
//! certain, and the step is left unjudged (counted in
//! [`LocationClocks::unjudged`]). So no false alarm comes of SeqCst
//! accesses, but a witness whose step has such an edge and no cycle is
//! missed (6 of 193 non-robust random programs with SeqCst accesses);
//! without SeqCst accesses the monitor is exact.
//!
//! Memory is independent of the run's length: clocks have an entry per
//! location the thread (or write) knows of, and the recent writes are a
//! bounded ring per location.

use crate::{Loc, MemOrder, Value};
use std::collections::VecDeque;

/// How many recent writes of each location keep their value (for the
/// compare-exchange and wait-turn questions).
pub const RECENT: usize = 64;

/// A write's place in its location's modification order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp {
    /// Writes up to and including it, the initial one not counted.
    pub ts: u32,
    /// Of those, the ones that are not read-modify-writes.
    pub plain: u32,
}

/// A location clock: a stamp per location, sorted by location; absent
/// means the initial write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clock(Vec<(u32, Stamp)>);

impl Clock {
    pub fn get(&self, loc: Loc) -> Stamp {
        match self.0.binary_search_by_key(&loc.0, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => Stamp::default(),
        }
    }
    /// Raises the entry of `loc` to `s`.
    fn raise(&mut self, loc: Loc, s: Stamp) {
        match self.0.binary_search_by_key(&loc.0, |e| e.0) {
            Ok(i) => {
                if s.ts > self.0[i].1.ts {
                    self.0[i].1 = s;
                }
            }
            Err(i) => self.0.insert(i, (loc.0, s)),
        }
    }
    fn join(&mut self, other: &Clock) {
        if other.0.is_empty() {
            return;
        }
        if self.0.is_empty() {
            self.0.clone_from(&other.0);
            return;
        }
        let (a, b) = (&self.0, &other.0);
        let mut out = Vec::with_capacity(a.len().max(b.len()));
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            use std::cmp::Ordering::*;
            match a[i].0.cmp(&b[j].0) {
                Less => {
                    out.push(a[i]);
                    i += 1;
                }
                Greater => {
                    out.push(b[j]);
                    j += 1;
                }
                Equal => {
                    out.push(if b[j].1.ts > a[i].1.ts { b[j] } else { a[i] });
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        self.0 = out;
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A recent write of a location.
#[derive(Clone, Copy, Debug)]
pub struct RecentWrite {
    pub val: Value,
    pub rmw: bool,
    pub thread: u32,
    /// The caller's tag (a source site, an operation number).
    pub tag: u64,
}

#[derive(Clone, Debug, Default)]
struct LocState {
    last: Stamp,
    init: Value,
    /// What an acquire read of the latest write synchronises with.
    released: Clock,
    /// SC view of the latest write, and of all accesses so far.
    sc_last: Clock,
    sc_all: Clock,
    /// The last writes, oldest first; the back one has stamp `last`.
    recent: VecDeque<RecentWrite>,
    /// The position (`ts`) of the newest SeqCst write, 0 if none.
    sc_write: u32,
}

#[derive(Clone, Debug, Default)]
struct ThreadState {
    cur: Clock,
    acq: Clock,
    rel: Clock,
    sc: Clock,
    /// An open wait-loop turn: the SC view before it, and its reads'
    /// contributions to their locations (held back until it is kept).
    turn: Option<(Clock, Vec<(Loc, Clock)>)>,
}

/// The kind of access a witness is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeakStep {
    /// A read (or failed compare-exchange) of an older write.
    StaleRead,
    /// A write (or read-modify-write) ordered before a newer write.
    EarlyWrite,
}

/// A non-robustness witness: thread `thread`'s next access of `loc` can
/// be performed weakly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Witness {
    pub thread: u32,
    pub loc: Loc,
    pub step: WeakStep,
    /// The newest write of `loc` the thread is aware of (hb).
    pub aware: u32,
    /// The newest write of `loc` that is SC-before the thread.
    pub sc_before: u32,
    /// The write a stale read would read (its `ts`) and its value, or the
    /// write an early write would go right before.
    pub at: u32,
    pub val: Option<Value>,
}

/// The access a thread is about to perform, for [`LocationClocks::check`].
#[derive(Clone, Copy, Debug)]
pub enum NextAccess {
    Load,
    /// A store or an unconditional read-modify-write.
    Write,
    /// A compare-exchange expecting `expected` (`weak`: it may fail
    /// whatever it reads).
    Cas {
        expected: Value,
        weak: bool,
    },
}

/// The location-clock state of one SC run.
#[derive(Clone, Debug, Default)]
pub struct LocationClocks {
    locs: Vec<LocState>,
    threads: Vec<ThreadState>,
    /// The release view of the last SC fence (RC20's fence location).
    fences: Clock,
    /// Whether the run has had a SeqCst access.
    sc_accesses: bool,
    /// Per location, the newest write an SC fence came after: that the
    /// fence's thread was aware of, or had read (see [`Self::check`]).
    fenced_writes: Clock,
    /// Weak steps not reported because psc might forbid them.
    pub unjudged: u64,
}

/// A pseudo-location whose entry in a thread's current view is set once an
/// SC fence happens before it (the entry travels with happens-before).
const FENCED: Loc = Loc(u32::MAX);

impl LocationClocks {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds location `loc` with initial value `init` (locations are dense
    /// from 0; adding one beyond the end adds those before it with 0).
    pub fn add_loc(&mut self, loc: Loc, init: Value) {
        let i = loc.0 as usize;
        if self.locs.len() <= i {
            self.locs.resize_with(i + 1, LocState::default);
        }
        self.locs[i] = LocState {
            init,
            ..LocState::default()
        };
    }

    fn loc(&mut self, loc: Loc) -> &mut LocState {
        let i = loc.0 as usize;
        if self.locs.len() <= i {
            self.locs.resize_with(i + 1, LocState::default);
        }
        &mut self.locs[i]
    }

    fn thread(&mut self, t: u32) -> &mut ThreadState {
        let i = t as usize;
        if self.threads.len() <= i {
            self.threads.resize_with(i + 1, ThreadState::default);
        }
        &mut self.threads[i]
    }

    /// Thread `child` starts, hb- and SC-after `parent`'s events so far.
    pub fn spawn(&mut self, parent: u32, child: u32) {
        let p = self.thread(parent).clone();
        let c = self.thread(child);
        c.cur = p.cur.clone();
        c.acq = p.cur;
        c.rel = Clock::default();
        c.sc = p.sc;
        c.turn = None;
    }

    /// Thread `t` joins `child`.
    pub fn join(&mut self, t: u32, child: u32) {
        let c = self.thread(child).clone();
        let th = self.thread(t);
        th.cur.join(&c.cur);
        th.acq.join(&c.cur);
        th.sc.join(&c.sc);
    }

    /// The stamp of the newest write of `loc`.
    pub fn last(&self, loc: Loc) -> Stamp {
        self.locs
            .get(loc.0 as usize)
            .map_or(Stamp::default(), |l| l.last)
    }

    /// The recent write of `loc` with `ts`, if still kept (`None` for the
    /// initial write too; see [`Self::value_at`]).
    pub fn recent(&self, loc: Loc, ts: u32) -> Option<&RecentWrite> {
        let l = self.locs.get(loc.0 as usize)?;
        let back = l.last.ts;
        let age = back.checked_sub(ts)? as usize;
        if ts == 0 || age >= l.recent.len() {
            return None;
        }
        l.recent.get(l.recent.len() - 1 - age)
    }

    /// The value of the write of `loc` with `ts`, if known.
    pub fn value_at(&self, loc: Loc, ts: u32) -> Option<Value> {
        if ts == 0 {
            return self.locs.get(loc.0 as usize).map(|l| l.init).or(Some(0));
        }
        self.recent(loc, ts).map(|w| w.val)
    }

    /// Whether the write of `loc` with `ts` is a read-modify-write, if known.
    fn rmw_at(&self, loc: Loc, ts: u32) -> Option<bool> {
        if ts == 0 {
            return Some(false);
        }
        self.recent(loc, ts).map(|w| w.rmw)
    }

    /// Whether thread `t`'s next access of `loc` is a witness: it could be
    /// performed weakly, against SC. `keeps_waiting(v)`: reading `v` would
    /// make the thread's current wait-loop turn a failed one (always false
    /// outside wait loops); such a read is no witness. `seq_cst`: the
    /// access is SeqCst (see the module's note).
    pub fn check(
        &mut self,
        t: u32,
        loc: Loc,
        access: NextAccess,
        seq_cst: bool,
        keeps_waiting: &dyn Fn(Value) -> bool,
    ) -> Option<Witness> {
        let th = self.threads.get(t as usize)?;
        let aware = th.cur.get(loc);
        let sc = th.sc.get(loc);
        if aware.ts >= sc.ts {
            return None;
        }
        // The sources a psc edge against the run's order could start from:
        // the step itself, or an SC fence before it (see the module's note).
        let psc_sources = seq_cst || self.sc_accesses && th.cur.get(FENCED).ts > 0;
        let witness = |step, at, val| Witness {
            thread: t,
            loc,
            step,
            aware: aware.ts,
            sc_before: sc.ts,
            at,
            val,
        };
        // A stale read of the write with `ts` in [aware, sc): its value, if
        // it matters and is known.
        let stale_read = |accept: &dyn Fn(Value) -> bool| {
            (aware.ts..sc.ts).rev().find_map(|ts| {
                let v = self.value_at(loc, ts)?;
                accept(v).then(|| witness(WeakStep::StaleRead, ts, Some(v)))
            })
        };
        let found = match access {
            NextAccess::Load => stale_read(&|v| !keeps_waiting(v)),
            NextAccess::Write => (aware.plain < sc.plain).then(|| {
                // Right before the newest non-RMW write in (aware, sc].
                let at = (aware.ts + 1..=sc.ts)
                    .rev()
                    .find(|&ts| self.rmw_at(loc, ts) == Some(false))
                    .unwrap_or(sc.ts);
                witness(WeakStep::EarlyWrite, at, None)
            }),
            NextAccess::Cas { expected, weak } => {
                // Success: reads a stale `expected` and goes right after it,
                // before a write that is not an RMW.
                let success = (aware.ts..sc.ts).rev().find_map(|ts| {
                    let ok = self.value_at(loc, ts) == Some(expected)
                        && self.rmw_at(loc, ts + 1) == Some(false);
                    ok.then(|| witness(WeakStep::EarlyWrite, ts + 1, Some(expected)))
                });
                success.or_else(|| {
                    // Failure: reads a stale other value (any, if weak).
                    stale_read(&|v| (weak || v != expected) && !keeps_waiting(v))
                })
            }
        }?;
        if psc_sources && self.psc_edge_back(&found) {
            self.unjudged += 1;
            return None;
        }
        Some(found)
    }

    /// Whether the weak step of `w` could add a psc edge against the run's
    /// order, from the step (if SeqCst) or an SC fence before it: to a
    /// SeqCst write the step's eco reaches (one after the write a stale
    /// read takes, or at or after the place of an early write), or to an
    /// SC fence after such a write or a read of it. Every other psc edge of
    /// the run with the step follows the run's order, so without one of
    /// these psc stays acyclic. With one, psc may still be acyclic: the
    /// step is then left unjudged.
    fn psc_edge_back(&self, w: &Witness) -> bool {
        let first = match w.step {
            WeakStep::StaleRead => w.at + 1,
            WeakStep::EarlyWrite => w.at,
        };
        let sc_write = self.locs.get(w.loc.0 as usize).map_or(0, |l| l.sc_write);
        sc_write >= first || self.fenced_writes.get(w.loc).ts >= first
    }

    /// Thread `t` read the latest write of `loc` with order `ord` (a load,
    /// or a compare-exchange that failed).
    pub fn load(&mut self, t: u32, loc: Loc, ord: MemOrder) {
        if !ord.is_atomic() {
            return;
        }
        self.sc_accesses |= ord.is_sc();
        self.loc(loc);
        let th = self.thread_mut_init(t);
        let l = &self.locs[loc.0 as usize];
        let th = &mut self.threads[th];
        th.cur.raise(loc, l.last);
        th.acq.raise(loc, l.last);
        if ord.is_acquire() {
            th.cur.join(&l.released);
        }
        th.acq.join(&l.released);
        th.sc.join(&l.sc_last);
        match &mut th.turn {
            Some((_, held)) => held.push((loc, th.sc.clone())),
            None => self.locs[loc.0 as usize].sc_all.join(&th.sc),
        }
    }

    fn thread_mut_init(&mut self, t: u32) -> usize {
        self.thread(t);
        t as usize
    }

    /// Thread `t` wrote `val` to `loc` with order `ord`; `rmw`: a
    /// read-modify-write (of the latest write). `tag` is kept with it.
    pub fn write(&mut self, t: u32, loc: Loc, ord: MemOrder, val: Value, rmw: bool, tag: u64) {
        self.write_with(t, loc, ord, val, rmw, tag, true);
    }

    /// A read-modify-write that robustness leaves out (a reference count,
    /// whose order is not observable): it synchronises, but adds no SC
    /// edge.
    pub fn write_unordered(&mut self, t: u32, loc: Loc, ord: MemOrder, val: Value) {
        self.write_with(t, loc, ord, val, true, 0, false);
    }

    #[allow(clippy::too_many_arguments)]
    fn write_with(
        &mut self,
        t: u32,
        loc: Loc,
        ord: MemOrder,
        val: Value,
        rmw: bool,
        tag: u64,
        sc_edges: bool,
    ) {
        if !ord.is_atomic() {
            return;
        }
        self.sc_accesses |= ord.is_sc();
        self.turn_kept(t);
        self.loc(loc);
        let i = t as usize;
        self.thread(t);
        let l = &mut self.locs[loc.0 as usize];
        let th = &mut self.threads[i];
        if rmw {
            if ord.is_acquire() {
                th.cur.join(&l.released);
            }
            th.acq.join(&l.released);
        }
        l.last = Stamp {
            ts: l.last.ts + 1,
            plain: l.last.plain + (!rmw) as u32,
        };
        let s = l.last;
        th.cur.raise(loc, s);
        th.acq.raise(loc, s);
        let mut released = if ord.is_release() {
            th.cur.clone()
        } else {
            th.rel.clone()
        };
        released.raise(loc, s);
        if rmw {
            l.released.join(&released);
        } else {
            l.released = released;
        }
        if sc_edges {
            th.sc.join(&l.sc_all);
            th.sc.raise(loc, s);
            l.sc_last.clone_from(&th.sc);
            l.sc_all.clone_from(&th.sc);
        }
        if ord.is_sc() {
            l.sc_write = s.ts;
        }
        if l.recent.len() == RECENT {
            l.recent.pop_front();
        }
        l.recent.push_back(RecentWrite {
            val,
            rmw,
            thread: t,
            tag,
        });
    }

    /// Thread `t` performs a fence.
    pub fn fence(&mut self, t: u32, ord: MemOrder) {
        let i = self.thread_mut_init(t);
        let th = &mut self.threads[i];
        if ord.is_acquire() {
            let acq = th.acq.clone();
            th.cur.join(&acq);
        }
        if ord == MemOrder::SeqCst {
            th.cur.raise(FENCED, Stamp { ts: 1, plain: 1 });
            th.acq.raise(FENCED, Stamp { ts: 1, plain: 1 });
            th.cur.join(&self.fences);
            th.acq.join(&self.fences);
            self.fences.join(&th.cur);
            self.fenced_writes.join(&th.cur);
        }
        if ord.is_release() {
            th.rel = th.cur.clone();
        }
    }

    /// Thread `t` starts a turn of a wait loop (closing one still open as
    /// kept).
    pub fn turn_start(&mut self, t: u32) {
        self.turn_kept(t);
        let i = self.thread_mut_init(t);
        let th = &mut self.threads[i];
        th.turn = Some((th.sc.clone(), Vec::new()));
    }

    /// Thread `t`'s open turn failed: it counts for nothing SC.
    pub fn turn_failed(&mut self, t: u32) {
        if let Some(th) = self.threads.get_mut(t as usize) {
            if let Some((before, _)) = th.turn.take() {
                th.sc = before;
            }
        }
    }

    /// Thread `t`'s open turn, if any, counts.
    pub fn turn_kept(&mut self, t: u32) {
        let Some(th) = self.threads.get_mut(t as usize) else {
            return;
        };
        let Some((_, held)) = th.turn.take() else {
            return;
        };
        for (loc, view) in held {
            self.locs[loc.0 as usize].sc_all.join(&view);
        }
    }

    /// Whether thread `t` has a turn open.
    pub fn in_turn(&self, t: u32) -> bool {
        self.threads
            .get(t as usize)
            .is_some_and(|th| th.turn.is_some())
    }

    /// Entries held by all clocks: the monitor's size, for benchmarks.
    pub fn entries(&self) -> usize {
        let threads: usize = self
            .threads
            .iter()
            .map(|t| {
                t.cur.len()
                    + t.acq.len()
                    + t.rel.len()
                    + t.sc.len()
                    + t.turn.as_ref().map_or(0, |(c, h)| {
                        c.len() + h.iter().map(|x| x.1.len()).sum::<usize>()
                    })
            })
            .sum();
        let locs: usize = self
            .locs
            .iter()
            .map(|l| l.released.len() + l.sc_last.len() + l.sc_all.len() + l.recent.len())
            .sum();
        threads + locs + self.fences.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemOrder::*;

    fn never(_: Value) -> bool {
        false
    }

    #[test]
    fn store_buffering_is_a_witness_once_a_read_has_passed_a_write() {
        // x = 1; r1 = y  ||  y = 1; r2 = x, run T0 first, then T1's write.
        let (x, y) = (Loc(0), Loc(1));
        let mut m = LocationClocks::new();
        m.add_loc(x, 0);
        m.add_loc(y, 0);
        m.write(0, x, Relaxed, 1, false, 0);
        assert_eq!(m.check(0, y, NextAccess::Load, false, &never), None);
        m.load(0, y, Relaxed);
        m.write(1, y, Relaxed, 1, false, 0);
        // T1 is SC-after x = 1 (by T0's read of y, fr), but not aware of it.
        let w = m
            .check(1, x, NextAccess::Load, false, &never)
            .expect("a witness");
        assert_eq!(
            (w.step, w.aware, w.sc_before, w.val),
            (WeakStep::StaleRead, 0, 1, Some(0))
        );
    }

    #[test]
    fn message_passing_with_release_acquire_is_no_witness() {
        let (x, y) = (Loc(0), Loc(1));
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.write(0, y, Release, 1, false, 0);
        m.load(1, y, Acquire);
        assert_eq!(m.check(1, x, NextAccess::Load, false, &never), None);
        // With a relaxed flag read, the data read may be stale.
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.write(0, y, Release, 1, false, 0);
        m.load(1, y, Relaxed);
        assert!(m.check(1, x, NextAccess::Load, false, &never).is_some());
    }

    #[test]
    fn single_location_reads_are_coherent() {
        // CoRR: a thread that read x = 1 may not read x = 0 after it.
        let x = Loc(0);
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.load(1, x, Relaxed);
        assert_eq!(m.check(1, x, NextAccess::Load, false, &never), None);
        assert_eq!(m.check(1, x, NextAccess::Write, false, &never), None);
    }

    #[test]
    fn a_write_never_goes_before_an_rmw() {
        // T0: fetch_add(x); r = y  ||  T1: y = 1; x = 2 — T1's store may not
        // go before the RMW, which read the initial write.
        let (x, y) = (Loc(0), Loc(1));
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, true, 0);
        m.load(0, y, Relaxed);
        m.write(1, y, Relaxed, 1, false, 0);
        assert_eq!(m.check(1, x, NextAccess::Write, false, &never), None);
        // A plain store in its place may be ordered first.
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.load(0, y, Relaxed);
        m.write(1, y, Relaxed, 1, false, 0);
        assert!(m.check(1, x, NextAccess::Write, false, &never).is_some());
    }

    #[test]
    fn a_failed_turn_leaves_no_sc_trace() {
        // x = 1; while y != 1 {}  ||  y = 1; r = x: the failed turn's read
        // of y = 0 orders nothing.
        let (x, y) = (Loc(0), Loc(1));
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.turn_start(0);
        m.load(0, y, Relaxed);
        m.write(1, y, Relaxed, 1, false, 0);
        m.turn_failed(0);
        assert_eq!(m.check(1, x, NextAccess::Load, false, &never), None);
        // Kept, it does.
        let mut m = LocationClocks::new();
        m.write(0, x, Relaxed, 1, false, 0);
        m.turn_start(0);
        m.load(0, y, Relaxed);
        m.turn_kept(0);
        m.write(1, y, Relaxed, 1, false, 0);
        assert!(m.check(1, x, NextAccess::Load, false, &never).is_some());
    }
}
