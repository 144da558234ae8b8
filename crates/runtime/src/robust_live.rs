//! Robustness against SC on live random runs (`RunConfig::robustness` with
//! live executions): the run is sequentially consistent (every read reads
//! the latest write) and location clocks (`c11check_model::robust::monitor`)
//! watch each access for one the model would let go weak, in memory that
//! does not grow with the run.
//!
//! Wait loops. Every stretch of reads opens a turn; a spin hint ends it as
//! a failed turn, which counts for nothing SC (as the exhaustive check
//! leaves failed turns out); a write or the thread's end keeps it. A read
//! that could return a stale value is a witness unless that value keeps a
//! wait waiting, which only the run can tell: a read site whose failed
//! turns read that value. So a stale read is held as a candidate until the
//! run ends and dropped if a failed turn at its site read its value in any
//! iteration; otherwise its iteration is run again taking the stale value
//! (a probe): a spin hint before any write of the thread makes it a failed
//! turn, anything else a violation, reported from a third run that stops
//! at the witness. A write that could go before a newer one is reported at
//! once.

use crate::report::{Failure, FailureKind};
use crate::Site;
use c11check_model::robust::monitor::{LocationClocks, NextAccess, WeakStep, Witness};
use c11check_model::{Action, Loc, MemOrder, RmwOp};
use std::collections::{HashMap, HashSet};

/// Reads a turn may hold back before it is kept anyway.
const MAX_TURN_READS: usize = 64;

/// What the iterations of a run learn, and the stale reads they hold.
#[derive(Default)]
pub(crate) struct Learned {
    /// The values each read site returned in failed wait turns.
    waits: HashMap<Site, HashSet<i64>>,
    /// Stale reads not yet judged: the first iteration (and its seed) that
    /// had each (site, value).
    pub(crate) candidates: Vec<Candidate>,
}

#[derive(Clone)]
pub(crate) struct Candidate {
    pub(crate) site: Site,
    pub(crate) val: i64,
    pub(crate) iteration: u64,
    pub(crate) seed: u64,
    /// PCT's step count then (for the replay).
    pub(crate) steps: u64,
}

impl Learned {
    /// The candidates that no failed turn explains, to report.
    pub(crate) fn confirmed(&self) -> Vec<Candidate> {
        self.candidates
            .iter()
            .filter(|c| !self.waits.get(&c.site).is_some_and(|v| v.contains(&c.val)))
            .cloned()
            .collect()
    }
}

/// The robustness state of one live execution.
pub(crate) struct LiveRobustness {
    clocks: LocationClocks,
    /// Each thread's reads in its open turn.
    turn_reads: Vec<Vec<(Site, i64)>>,
    /// Writers and sites of writes, by the tags the clocks keep (each
    /// pair once: memory stays independent of the run's length).
    sites: Vec<(u32, Site)>,
    site_tags: HashMap<(u32, Site), u64>,
    /// Re-running a candidate's iteration: stop at its stale read, or
    /// (`probe`) take it and see whether it ends a failed wait turn.
    pub(crate) stop_at: Option<(Site, i64)>,
    pub(crate) probe: bool,
    /// Probing: the value to read stale at the next access, the thread
    /// that read it, and the verdict (`Some(true)`: a violation).
    pub(crate) force: Option<i64>,
    probing: Option<u32>,
    pub(crate) verdict: Option<bool>,
    iteration: u64,
    seed: u64,
    steps: u64,
}

impl LiveRobustness {
    pub(crate) fn new(iteration: u64, seed: u64, steps: u64, stop_at: Option<(Site, i64)>) -> Self {
        LiveRobustness {
            clocks: LocationClocks::new(),
            turn_reads: Vec::new(),
            sites: Vec::new(),
            site_tags: HashMap::new(),
            stop_at,
            probe: false,
            force: None,
            probing: None,
            verdict: None,
            iteration,
            seed,
            steps,
        }
    }

    pub(crate) fn add_loc(&mut self, loc: Loc, init: i64) {
        self.clocks.add_loc(loc, init);
    }

    pub(crate) fn spawn(&mut self, parent: u32, child: u32) {
        self.clocks.turn_kept(parent);
        self.clocks.spawn(parent, child);
    }

    pub(crate) fn join(&mut self, t: u32, child: u32) {
        self.clocks.turn_kept(t);
        self.clocks.join(t, child);
    }

    /// Thread `t` finished: its open turn counts.
    pub(crate) fn finish(&mut self, t: u32) {
        self.keep(t);
    }

    fn keep(&mut self, t: u32) {
        if self.probing == Some(t) && self.verdict.is_none() {
            // The stale read's turn counts: it is a violation.
            self.verdict = Some(true);
        }
        self.clocks.turn_kept(t);
        if let Some(r) = self.turn_reads.get_mut(t as usize) {
            r.clear();
        }
    }

    /// Thread `t` gave a spin hint: its open turn, if it only read, failed.
    pub(crate) fn spin(&mut self, t: u32, learned: &mut Learned) {
        if !self.clocks.in_turn(t) {
            return;
        }
        if self.probing == Some(t) && self.verdict.is_none() {
            // The stale value kept the wait waiting.
            self.verdict = Some(false);
        }
        self.clocks.turn_failed(t);
        if let Some(reads) = self.turn_reads.get_mut(t as usize) {
            for (site, v) in reads.drain(..) {
                learned.waits.entry(site).or_default().insert(v);
            }
        }
    }

    /// Checks thread `t`'s next access, before it is performed: a failure
    /// for a write that could go weak, a candidate (or, re-running one, the
    /// failure) for a stale read.
    pub(crate) fn before(
        &mut self,
        t: u32,
        action: &Action,
        site: Site,
        learned: &mut Learned,
    ) -> Option<Failure> {
        let (access, seq_cst) = match *action {
            Action::Load { ord, .. } => (NextAccess::Load, ord.is_sc()),
            Action::Store { ord, .. } => (NextAccess::Write, ord.is_sc()),
            Action::Rmw { op, ord, .. } => {
                if matches!(op, RmwOp::RefInc | RmwOp::RefDec) {
                    return None;
                }
                (NextAccess::Write, ord.is_sc())
            }
            Action::Cas {
                expected,
                weak,
                take: false,
                success,
                failure,
                ..
            } => (
                NextAccess::Cas { expected, weak },
                success.is_sc() || failure.is_sc(),
            ),
            _ => return None,
        };
        let loc = action.loc()?;
        let ord = match *action {
            Action::Load { ord, .. } | Action::Store { ord, .. } | Action::Rmw { ord, .. } => ord,
            _ => MemOrder::Relaxed,
        };
        if !ord.is_atomic() {
            return None;
        }
        if !matches!(action, Action::Store { .. } | Action::Rmw { .. }) && !self.clocks.in_turn(t) {
            self.clocks.turn_start(t);
        }
        // A lock acquisition that fails waits its turn.
        let lock = matches!(action, Action::Cas { lock: true, .. });
        let waits = learned.waits.get(&site);
        let keeps = |v: i64| lock || waits.is_some_and(|w| w.contains(&v));
        let w = self.clocks.check(t, loc, access, seq_cst, &keeps)?;
        match w.step {
            WeakStep::EarlyWrite => Some(self.failure(&w, action, site)),
            WeakStep::StaleRead => {
                let val = w.val.unwrap_or(0);
                if self.stop_at == Some((site, val)) {
                    if self.probe {
                        if self.probing.is_none() {
                            self.force = Some(val);
                            self.probing = Some(t);
                        }
                        return None;
                    }
                    return Some(self.failure(&w, action, site));
                }
                if !learned
                    .candidates
                    .iter()
                    .any(|c| c.site == site && c.val == val)
                {
                    learned.candidates.push(Candidate {
                        site,
                        val,
                        iteration: self.iteration,
                        seed: self.seed,
                        steps: self.steps,
                    });
                }
                None
            }
        }
    }

    /// Probing: whether the forced stale read was taken (`None`: no read
    /// was forced at this access).
    pub(crate) fn forced(&mut self, taken: Option<bool>) {
        if taken == Some(false) {
            // The live memory would not read it: judge it as found.
            self.verdict = Some(true);
        }
    }

    /// Thread `t` performed `action`, which read `val` and wrote `written`.
    pub(crate) fn after(
        &mut self,
        t: u32,
        action: &Action,
        site: Site,
        val: i64,
        written: Option<i64>,
    ) {
        let Some(loc) = action.loc() else {
            if let Action::Fence { ord } = *action {
                self.clocks.fence(t, ord);
            }
            return;
        };
        let tag = if action.may_write() {
            self.site_tag(t, site)
        } else {
            0
        };
        match *action {
            Action::Load { ord, .. } => {
                self.clocks.load(t, loc, ord);
                if ord.is_atomic() && self.clocks.in_turn(t) {
                    self.read_in_turn(t, site, val);
                }
            }
            Action::Store { ord, val, .. } => {
                if ord.is_atomic() {
                    self.keep(t);
                }
                self.clocks.write(t, loc, ord, val, false, tag);
            }
            Action::Rmw { ord, op, .. } => {
                let new = written.unwrap_or(val);
                if matches!(op, RmwOp::RefInc | RmwOp::RefDec) {
                    self.clocks.write_unordered(t, loc, ord, new);
                } else {
                    self.keep(t);
                    self.clocks.write(t, loc, ord, new, true, tag);
                }
            }
            Action::Cas {
                success, failure, ..
            } => match written {
                Some(new) => {
                    self.keep(t);
                    self.clocks.write(t, loc, success, new, true, tag);
                }
                None => {
                    self.clocks.load(t, loc, failure);
                    if self.clocks.in_turn(t) {
                        self.read_in_turn(t, site, val);
                    }
                }
            },
            _ => {}
        }
    }

    /// The tag of writes by `t` at `site` (each pair once).
    fn site_tag(&mut self, t: u32, site: Site) -> u64 {
        if let Some(&tag) = self.site_tags.get(&(t, site)) {
            return tag;
        }
        let tag = self.sites.len() as u64;
        self.sites.push((t, site));
        self.site_tags.insert((t, site), tag);
        tag
    }

    fn read_in_turn(&mut self, t: u32, site: Site, val: i64) {
        let i = t as usize;
        if self.turn_reads.len() <= i {
            self.turn_reads.resize_with(i + 1, Vec::new);
        }
        self.turn_reads[i].push((site, val));
        if self.turn_reads[i].len() > MAX_TURN_READS {
            self.keep(t);
        }
    }

    fn write_site(&self, loc: Loc, ts: u32) -> Option<(u32, Site)> {
        let w = self.clocks.recent(loc, ts)?;
        self.sites.get(w.tag as usize).copied()
    }

    /// The report of witness `w` at `action`.
    fn failure(&self, w: &Witness, action: &Action, site: Site) -> Failure {
        let loc = w.loc;
        let name = format!("loc{}", loc.0);
        let describe = |ts: u32| match (ts, self.write_site(loc, ts)) {
            (0, _) => "its initial value".to_string(),
            (_, Some((t, s))) => format!("thread {t}'s write at {s}"),
            (_, None) => "an earlier write".to_string(),
        };
        let newer = describe(w.sc_before);
        let t = w.thread;
        let what = match action {
            Action::Load { .. } => "load",
            Action::Store { .. } => "store",
            Action::Rmw { .. } => "read-modify-write",
            _ => "compare-exchange",
        };
        let step = match w.step {
            WeakStep::StaleRead => format!(
                "may read the stale value {} of {name} ({}), although {newer} comes before it in \
                 every interleaving that got here",
                w.val.unwrap_or(0),
                describe(w.at)
            ),
            WeakStep::EarlyWrite => format!(
                "may be ordered before {} in {name}'s modification order, although {newer} comes \
                 before it in every interleaving that got here",
                describe(w.at)
            ),
        };
        let mut threads = vec![t];
        if let Some((u, _)) = self.write_site(loc, w.sc_before) {
            if u != t {
                threads.push(u);
            }
        }
        Failure {
            kind: FailureKind::NotRobust,
            message: format!(
                "not robust against SC: thread {t}'s {what} at {site} {step}: the model allows an \
                 execution no interleaving of the threads produces (found by location clocks on \
                 an SC run; an exhaustive run shows the whole cycle and a repair)"
            ),
            threads,
            events: vec![],
        }
    }
}
