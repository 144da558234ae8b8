//! The preemption bound as the explorer uses it: whether a branch can
//! still lead to an execution within it, which threads run last while the
//! graph is beyond it, and the schedule a child branch starts from.

use super::*;

impl<D: Driver, V: Visitor> Explorer<'_, D, V> {
    /// Whether no execution that `g` leads to, by adding events or by
    /// revisits, can be within the preemption bound. A revisit of a read
    /// changes what it reads and removes only events added after it, and
    /// never the prefix of a write that revisited before: the events added
    /// before the first read that may still be revisited, with those
    /// prefixes, are part of every execution `g` leads to, as they are here.
    /// When that part already needs more preemptions, so do they all (see
    /// [`crate::bound::part_within`]). Checked when a branch starts (a
    /// revisit changes that part) and where a thread ends or joins one (the
    /// part grows while no read may be revisited).
    pub(super) fn partial_over_bound(&mut self, g: &ExecutionGraph, ahead: &mut Ahead) -> bool {
        let Some(k) = self.config.preemption_bound else {
            return false;
        };
        let rules = self.bound_rules();
        // A part of a graph within the bound is within it (the schedule
        // kept for the graph usually says so at no cost).
        if self.witness.within(g, k, rules) {
            return false;
        }
        !ahead.part_within(g, &Self::fixed_part(g), k, rules)
    }

    /// The part of `g` every graph its branch leads to holds as it is here:
    /// the events added before the first read that may still be revisited,
    /// and those a revisit settled (see [`Self::partial_over_bound`]).
    pub(super) fn fixed_part(g: &ExecutionGraph) -> Vec<u32> {
        let first_open_read = g
            .events()
            .filter(|(_, e)| e.revisitable && e.is_read())
            .map(|(_, e)| e.stamp)
            .min()
            .unwrap_or(u32::MAX);
        (0..g.num_threads() as u32)
            .map(|t| {
                g.thread_events(t)
                    .iter()
                    .take_while(|e| e.stamp < first_open_read || !e.revisitable)
                    .count() as u32
            })
            .collect()
    }

    /// Whether nothing the branch of `g` can still lead to is within the
    /// preemption bound, although the part [`Self::partial_over_bound`]
    /// asks about may be. Its graphs are the completions of `g`, which
    /// contain `g` as it is, and the graphs a write added later makes by
    /// revisiting, with everything they lead to: those keep the fixed part
    /// and the write's prefix as they are here (the revisit settles the
    /// prefix), and the prefix contains what its thread has done so far.
    /// So when `g` is beyond the bound, and so is, for every thread that
    /// has not ended, the fixed part with its prefix, no graph ahead is
    /// within it. `ahead` remembers that `g` is beyond it, the threads
    /// already shown to be (for the rest of the branch: the parts only
    /// grow), and where the others were shown not to be; every thread is
    /// asked, so that the live ones run first (see [`Ahead::last`]).
    pub(super) fn ahead_over_bound(&mut self, g: &ExecutionGraph, ahead: &mut Ahead) -> bool {
        let Some(k) = self.config.preemption_bound else {
            return false;
        };
        let rules = self.bound_rules();
        if !ahead.whole_over {
            if self.witness.within(g, k, rules) {
                return false;
            }
            ahead.whole_over = true;
        }
        let n = g.num_threads();
        ahead.dead.resize(n, false);
        ahead.live_at.resize(n, None);
        let fixed = Self::fixed_part(g);
        let fixed_size: u32 = fixed.iter().sum();
        let mut live = false;
        for t in 0..n as u32 {
            let ti = t as usize;
            if ahead.dead[ti] {
                continue;
            }
            let len = g.thread_len(t);
            // The part asked about grows only with the thread's events and
            // the fixed part: asked again only when one of them did.
            if ahead.live_at[ti] == Some((len, fixed_size)) {
                live = true;
                continue;
            }
            let ended = g
                .thread_events(t)
                .last()
                .is_some_and(|e| matches!(e.action, Action::Finish));
            if !ended {
                if len == 0 {
                    live = true;
                    continue;
                }
                let last = EventId::new(t, len - 1);
                let mut part = if self.commute {
                    g.porf_prefix_commuting(last)
                } else {
                    g.porf_prefix(last)
                };
                for (p, &f) in part.0.iter_mut().zip(&fixed) {
                    *p = (*p).max(f);
                }
                if ahead.part_within(g, &part.0, k, rules) {
                    ahead.live_at[ti] = Some((len, fixed_size));
                    live = true;
                    continue;
                }
            }
            ahead.dead[ti] = true;
        }
        !live
    }

    /// With a preemption bound, the running branch's schedule cut to the
    /// first `keep[t]` events of each thread `t` (all, when `keep` is
    /// empty), for a branch made from its graph to start from.
    pub(super) fn schedule_kept(&self, keep: &[u32]) -> Vec<u32> {
        if self.config.preemption_bound.is_none() {
            return Vec::new();
        }
        let order = self.witness.order();
        if keep.is_empty() {
            return order.collect();
        }
        let mut seen = vec![0u32; keep.len()];
        order
            .filter(|&t| {
                let Some(n) = seen.get_mut(t as usize) else {
                    return false;
                };
                *n += 1;
                *n <= keep[t as usize]
            })
            .collect()
    }

    /// The schedules the preemption bound counts (see [`crate::bound`]).
    pub(super) fn bound_rules(&self) -> crate::bound::Rules {
        crate::bound::Rules {
            sc: self.config.model.all_seq_cst(),
            refcounts_commute: self.commute,
        }
    }
}

/// What the running branch knows of the graphs it leads to, with a
/// preemption bound (see `Explorer::ahead_over_bound`).
#[derive(Default)]
pub(super) struct Ahead {
    /// The graph is beyond the bound (so are its completions).
    whole_over: bool,
    /// Threads whose revisits lead only to graphs beyond it (for the rest
    /// of the branch: the parts asked about only grow).
    dead: Vec<bool>,
    /// For a thread found not to be: its length and the fixed part's size
    /// then.
    live_at: Vec<Option<(u32, u32)>>,
    /// Parts of the graph asked about (see `bound::part_within`), with the
    /// answer: a part within the bound holds its own parts within it, a
    /// part beyond it is held beyond it by every part holding it.
    known: Vec<(Vec<u32>, bool)>,
}

impl Ahead {
    /// [`crate::bound::part_within`], answered from the parts already
    /// asked about when one holds the answer.
    fn part_within(
        &mut self,
        g: &ExecutionGraph,
        part: &[u32],
        k: u32,
        rules: crate::bound::Rules,
    ) -> bool {
        // `a` inside `b` (a thread past either's end has no events in it).
        let inside = |a: &[u32], b: &[u32]| {
            a.iter()
                .enumerate()
                .all(|(t, &x)| x <= b.get(t).copied().unwrap_or(0))
        };
        for (known, within) in &self.known {
            if *within && inside(part, known) {
                return true;
            }
            if !*within && inside(known, part) {
                return false;
            }
        }
        let within = crate::bound::part_within(g, part, k, rules);
        self.known.push((part.to_vec(), within));
        within
    }
}

impl Ahead {
    /// The threads to run after the others: while the graph is beyond the
    /// bound, those whose revisits all lead beyond it. Once only such
    /// threads are left the branch ends; running the others first gets
    /// there before their choices branch. (Any choice of the next thread
    /// that depends on the graph alone keeps the exploration complete and
    /// optimal, and this one does: the flags only follow the graph.)
    pub(super) fn last(&self) -> &[bool] {
        if self.whole_over {
            &self.dead
        } else {
            &[]
        }
    }
}
