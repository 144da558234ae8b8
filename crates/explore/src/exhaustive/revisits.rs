//! Revisits: a new write offered to the earlier reads that may take it,
//! each kept only when the graph it makes is the one this write's branch
//! must explore (the maximal extension, the canonical sources).

use super::*;
use c11check_model::Loc;

impl<D: Driver, V: Visitor> Explorer<'_, D, V> {
    /// Pushes every allowed backward revisit of the reads added before write
    /// `w` (last in its thread, and read by nothing).
    pub(super) fn calc_revisits(&mut self, g: &ExecutionGraph, w: EventId) {
        self.calc_revisits_with(g, w, false);
    }

    /// Like [`Self::calc_revisits`]; `stealing` says `g` is an intermediate graph
    /// where RMW `w` reads the source of another, still revisitable RMW.
    pub(super) fn calc_revisits_with(&mut self, g: &ExecutionGraph, w: EventId, stealing: bool) {
        let model = self.config.model;
        let loc = g.loc_of(w).unwrap();
        let commute = self.commute;
        if !stealing {
            debug_assert!(
                is_consistent(g, model),
                "revisits computed on an inconsistent graph"
            );
        }
        let mut reads = revisitable_reads(g, w, loc, commute);
        // Most writes have no read to revisit: the prefix is computed only
        // for those that do.
        if reads.is_empty() {
            return;
        }
        let prefix = if commute {
            g.porf_prefix_commuting(w)
        } else {
            g.porf_prefix(w)
        };
        reads.retain(|&r| !prefix.contains(r));
        let needs_sc = std::cell::OnceCell::new();
        // The reference counts' chains in `g`, for every read revisited.
        let counts = std::cell::OnceCell::new();
        // Whether `w` ends modification order in some witness of the
        // consistency of `g` (not stealing): when `w` is last in its thread
        // and read by nothing, the graph without it is consistent (a
        // restriction of `g`), and `w` can follow all of it, a store
        // always, an RMW when its source is forced last there.
        let ends_mo = std::cell::OnceCell::new();
        let w_ends_mo = || {
            *ends_mo.get_or_init(|| {
                g.thread_len(w.thread) == w.index + 1
                    && !g.events().any(|(_, e)| e.rf == Some(w))
                    && (!g.event(w).is_read()
                        || source_forced_last_without(g, &g.full_view(), w, model))
            })
        };
        for r in reads {
            if self.tick() {
                return;
            }
            let keep = kept_by_revisit(g, r, &prefix);
            // Where `w` stole `r`'s source: whether that write is forced last
            // in the kept events without `r` and `w` (asked at most once).
            let stolen_last = std::cell::OnceCell::new();
            let stolen_source_last = || {
                *stolen_last.get_or_init(|| {
                    stealing && {
                        let mut part = keep.clone();
                        part.0[r.thread as usize] = r.index;
                        source_forced_last_without(g, &part, w, model)
                    }
                })
            };
            let counts = counts.get_or_init(|| CountChains::of(g, commute));
            if !self.maximal_extension(g, &keep, r, w, !stealing, &stolen_source_last, counts) {
                continue;
            }
            // The kept events but `r`, which is last in its thread, and
            // which nothing kept reads (what reads it came after it, or is
            // in the prefix of `w`, which `r` is not).
            let mut without_r = keep.clone();
            without_r.0[r.thread as usize] = r.index;
            let mut base = Some(g.restrict(&without_r));
            let spurious = spurious_outcomes(g, r, w, loc);
            // A lock acquisition revisited by a write that holds the lock
            // (a take, by one that leaves too few permits) would find it
            // held and wait: instead it is taken back, and its thread tries
            // again once the lock is released (see `runnable`).
            let action = g.event(r).action;
            let waits = matches!(action, Action::Cas { lock: true, .. })
                && action.cas_succeeds(g.written_value(w)) == Some(false);
            // Where an RMW stole a source, the kept part is judged at `w`'s
            // location only. Coherent there, it is coherent everywhere (the
            // rest of it is a part of `g`, coherent with `w` loose), but its
            // seq_cst axiom was never checked: where that matters, a
            // consistent verdict says coherent only.
            let sc_matters = stealing && *needs_sc.get_or_init(|| needs_sc_search(g, model));
            for (k, &sp) in spurious.iter().enumerate() {
                // Judged before `base` becomes the last revisit graph (it
                // counts only if no source changes below).
                let quick = {
                    let read = (!waits).then(|| read_writes(&action, g.written_value(w), sp));
                    let kept = base.as_ref().expect("kept until the last");
                    let verdict = match self
                        .revisit_extension_consistent(kept, r, w, read, stealing, &action)
                    {
                        ExtensionVerdict::Consistent if sc_matters => ExtensionVerdict::Coherent,
                        v => v,
                    };
                    // Some witness of the kept part's consistency has `w`
                    // last in modification order: a witness of `g`'s where
                    // it is (the part is closed under po and rf), or, where
                    // `w` stole the source, one of the part without `w`
                    // (the restriction of a consistent graph), where that
                    // source is last, followed by `w`. `r`, last in its
                    // thread and read by nothing kept, reads `w` (and, when
                    // it writes, follows it): no edge of any relation the
                    // seq_cst axiom closes over leaves `r`, and none leaves
                    // `w` but to `r`, so no cycle goes through them, and
                    // coherence is all there is to check.
                    let w_last = verdict == ExtensionVerdict::Coherent
                        && match stealing {
                            false => w_ends_mo(),
                            true => stolen_source_last(),
                        };
                    match verdict {
                        ExtensionVerdict::Coherent if w_last => ExtensionVerdict::Consistent,
                        v => v,
                    }
                };
                let mut g2 = match k + 1 == spurious.len() {
                    true => base.take().expect("kept until the last"),
                    false => base.clone().expect("kept until the last"),
                };
                if !waits {
                    let mut e = g.event(r).clone();
                    e.spurious_fail = sp;
                    g2.push_event(r.thread, e);
                    g2.set_rf(r, w);
                }
                // Counts' chains change only where the cut removed an update.
                let removes_update = || {
                    (0..g.num_threads() as u32).any(|t| {
                        let kept = (without_r.0.get(t as usize).copied().unwrap_or(0) as usize)
                            .min(g.thread_len(t) as usize);
                        g.thread_events(t)[kept..].iter().any(|e| e.is_refcount())
                    })
                };
                let relinked = match commute && removes_update() {
                    true => match relink_refcounts(g, counts, &mut g2) {
                        Some(changed) => changed,
                        None => continue,
                    },
                    false => false,
                };
                let Some(repaired) = repair_dangling_reads(&mut g2, r, model, &mut self.canonical)
                else {
                    continue;
                };
                g2.settle(&prefix);
                let quick = match relinked || repaired {
                    true => ExtensionVerdict::Unknown,
                    false => quick,
                };
                if !judged_in_full(&g2, model, quick) {
                    continue;
                }
                self.stats.revisits += 1;
                let written = (!waits && g2.event(r).is_write()).then_some(r);
                let path = self.child_path();
                let mut schedule = self.schedule_kept(&without_r.0);
                if !waits {
                    schedule.push(r.thread);
                }
                self.stack.push(Pending::Graph(Item {
                    g: g2,
                    written,
                    path,
                    schedule,
                }));
            }
        }
    }

    /// Whether the revisit graph of read `r` by write `w` is consistent,
    /// judged from `base`, its events but `r` (closed under po and rf, no
    /// source changed), with `r` appended reading `w` (`Some(writes)`:
    /// writing too, when `writes`), or left out (`None`: it waits), as far
    /// as `r`'s location tells (see `read_extension_verdict`). `base` is part of a consistent
    /// graph, so consistent itself, unless `stealing` (`w` reads a source
    /// another RMW read): then `w` alone may break coherence or atomicity at
    /// its location, which the location check finds, and nothing checked
    /// its seq_cst axiom (where that matters the caller takes a consistent
    /// verdict as coherent only).
    pub(super) fn revisit_extension_consistent(
        &self,
        base: &ExecutionGraph,
        r: EventId,
        w: EventId,
        read: Option<bool>,
        stealing: bool,
        action: &Action,
    ) -> ExtensionVerdict {
        let model = self.config.model;
        if !stealing && read.is_none() {
            return ExtensionVerdict::Consistent;
        }
        let Some(loc) = base.loc_of(w) else {
            return ExtensionVerdict::Unknown;
        };
        // Incoherent at `w`'s location, the kept part is inconsistent, which
        // only `w` stealing a source can make it.
        let Ok(lc) = LocationCoherence::new(base, model, loc) else {
            return match stealing {
                true => ExtensionVerdict::Inconsistent,
                false => ExtensionVerdict::Unknown,
            };
        };
        match read {
            None => ExtensionVerdict::Consistent,
            Some(writes) => {
                lc.read_extension_verdict(r.thread, read_order(action, writes), writes, loc, w)
            }
        }
    }

    /// Whether `g` is the one graph, among those that agree on the kept part,
    /// that performs the revisit of `r` by `w`.
    ///
    /// The events the revisit discards (`r` and those added after it outside
    /// `w`'s prefix) must be the canonical extension of the kept part: taken in
    /// the order they were added, each read reads the write [`canonical_source`]
    /// picks in the graph made of the kept events (`w` included, as a constraint
    /// but not as a source) and the discarded events before it. That choice does
    /// not depend on how the discarded events were chosen, so at most one graph
    /// passes; and since a read of a write that is last in modification order
    /// (but for `w`) keeps a graph consistent, the canonical extension exists.
    /// `consistent` says whether `g` is (it is not when an RMW stole a source);
    /// `counts` are `g`'s reference-count chains (see [`CountChains`]).
    // What the caller knows of `g` comes in three arguments of its own.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn maximal_extension(
        &mut self,
        g: &ExecutionGraph,
        keep: &View,
        r: EventId,
        w: EventId,
        consistent: bool,
        stolen_source_last: &dyn Fn() -> bool,
        counts: &CountChains,
    ) -> bool {
        let mut discarded: Vec<(u32, EventId)> = g
            .events()
            .filter(|(id, _)| *id == r || !keep.contains(*id))
            .map(|(id, e)| (e.stamp, id))
            .collect();
        if discarded.iter().any(|&(_, id)| !g.event(id).revisitable) {
            return false;
        }
        discarded.sort_unstable();
        let mut view = keep.clone();
        view.0[r.thread as usize] = r.index;
        let refcount_locs = &counts.locs;
        let refcount_chains = &counts.chains;
        // The counts' chains relinked over the events present, without `w`.
        let relink = |h: &mut ExecutionGraph| {
            for chain in refcount_chains {
                let order: RmwChain = chain.iter().copied().filter(|&x| x != w).collect();
                h.relink_chain(&order);
                if let Some(i) = chain.iter().position(|&x| x == w) {
                    let before = chain[..i]
                        .iter()
                        .rev()
                        .find(|&&x| x.is_init() || h.contains(x));
                    h.set_rf(w, *before.unwrap());
                }
            }
        };
        // The graph of the kept events and of the discarded ones that passed
        // so far (in stamp order each thread's discarded events come in
        // program order, after its kept ones): the reference counts
        // relinked, and `w` reduced to its read half.
        let graph_of = |view: &View| {
            let mut h = g.restrict_uncached(view);
            relink(&mut h);
            match g.event(w).action.read_half() {
                Some(load) => {
                    let half = h.event_mut(w);
                    half.action = load;
                }
                None => h.truncate_thread(w.thread, w.index),
            }
            h
        };
        // The graph is built only when a canonical source needs it: where no
        // seq_cst event is around, each is read off `g` (see
        // `highest_write_ending_mo`), unless the kept part's reference
        // counts are relinked (their happens-before may differ). The part is
        // consistent even where an RMW stole a source: `g` is then
        // consistent with `w` held to no atomicity, and the part has only
        // its read half.
        let mut h: Option<ExecutionGraph> = None;
        let relinked_counts = |view: &View| {
            refcount_chains.iter().any(|chain| {
                chain.contains(&w)
                    || chain
                        .iter()
                        .skip_while(|&&x| x.is_init() || view.contains(x))
                        .any(|&x| view.contains(x))
            })
        };
        // Appending canonical reads (and writes, which can go last) keeps a
        // consistent graph consistent. When `g` is not known to be, `h` is
        // checked once, when a canonical source is first needed, if that can
        // spare seq_cst searches.
        let model = self.config.model;
        let mut h_consistent = consistent.then_some(true);
        // Whether `view` is still the kept part (no discarded event added).
        let mut kept_only = true;
        for (_, e) in discarded {
            let ev = g.event(e);
            if self.commute && ev.is_refcount() {
                // Re-run, it would extend the count's chain: what it tells its
                // thread is fixed by the updates before it, in any order.
                let loc = ev.loc().unwrap();
                let mut count = g.init_value(loc);
                for (id, u) in g.events() {
                    if id != w && view.contains(id) && u.loc() == Some(loc) && u.is_refcount() {
                        let Action::Rmw { op, operand, .. } = u.action else {
                            unreachable!()
                        };
                        count = op.apply(count, operand);
                    }
                }
                let mut appended = ev.clone();
                appended.read_val = count;
                if appended.refcount_class() != ev.refcount_class() {
                    return false;
                }
            } else if let Some(src) = ev.rf {
                if ev.spurious_fail || !(src.is_init() || view.contains(src)) || src == w {
                    return false;
                }
                let loc = ev.loc().expect("a read has a location");
                let quick = (!refcount_locs.contains(&loc) && !relinked_counts(&view))
                    .then(|| highest_write_ending_mo(g, model, &view, Some(w), loc, canonical_rank))
                    .flatten();
                let mut full = |h: &mut Option<ExecutionGraph>,
                                canonical: &mut CanonicalScratch| {
                    let h = h.get_or_insert_with(|| graph_of(&view));
                    let known = *h_consistent.get_or_insert_with(|| {
                        needs_sc_search(g, model) && {
                            // `g` is coherent with `w` not held to atomicity
                            // (the loose check before a steal); restricted,
                            // with `w` a read, so is `h`, unless reference
                            // counts were relinked: only psc is left. Built
                            // before any discarded event is added, `h` is the
                            // kept part without `w` (consistent) and `w`'s
                            // read: where the source `w` stole is forced last
                            // in that part, `w` reads the last write, which
                            // keeps it consistent.
                            let restriction = !relinked_counts(&view);
                            let sc = restriction
                                && ((kept_only && stolen_source_last())
                                    || is_sc_consistent_given_coherence(h, model));
                            debug_assert!(
                                !restriction || sc == is_consistent(h, model),
                                "the kept part of a steal is not coherent"
                            );
                            match restriction {
                                true => sc,
                                false => is_consistent(h, model),
                            }
                        }
                    });
                    let found = canonical_source(h, e, ev, model, known, canonical);
                    // It was left reading some candidate.
                    h.truncate_thread(e.thread, e.index);
                    found
                };
                let canonical = match quick {
                    Some(x) => {
                        debug_assert_eq!(
                            Some(x),
                            full(&mut h, &mut self.canonical),
                            "quick canonical source disagrees with the full search"
                        );
                        x
                    }
                    None => match full(&mut h, &mut self.canonical) {
                        Some(x) => x,
                        None => return false,
                    },
                };
                if canonical != src {
                    return false;
                }
            }
            view.include(e);
            kept_only = false;
            if let Some(h) = &mut h {
                h.push_event(e.thread, ev.clone());
                // Only an update of a count changes the counts' chains.
                if self.commute && ev.is_refcount() {
                    relink(h);
                }
            }
        }
        true
    }
}

/// The reads `w` may revisit: revisitable reads of its location (a
/// commuting reference count's are never revisited) not before it in its
/// thread (those are in its prefix).
fn revisitable_reads(g: &ExecutionGraph, w: EventId, loc: Loc, commute: bool) -> Vec<EventId> {
    let mut reads = Vec::new();
    for t in 0..g.num_threads() as u32 {
        let from = if t == w.thread {
            w.index as usize + 1
        } else {
            0
        };
        let events = g.thread_events(t);
        for (i, e) in events.iter().enumerate().skip(from) {
            if e.revisitable && e.loc() == Some(loc) && e.is_read() && !(commute && e.is_refcount())
            {
                reads.push(EventId::new(t, i as u32));
            }
        }
    }
    reads
}

/// The events a revisit of `r` keeps: those added before `r`, `r`, and the
/// revisiting write's porf-prefix.
pub(super) fn kept_by_revisit(g: &ExecutionGraph, r: EventId, prefix: &View) -> View {
    let rstamp = g.event(r).stamp;
    let mut keep = View(
        (0..g.num_threads() as u32)
            .map(|t| {
                g.thread_events(t)
                    .iter()
                    .take_while(|e| e.stamp < rstamp)
                    .count() as u32
            })
            .collect(),
    );
    keep.include(r);
    for (t, &n) in prefix.0.iter().enumerate() {
        keep.0[t] = keep.0[t].max(n);
    }
    keep
}

/// Whether `r` reading `w` fails spuriously, for each outcome explored: a
/// weak compare-exchange that would succeed may also fail.
fn spurious_outcomes(g: &ExecutionGraph, r: EventId, w: EventId, loc: Loc) -> &'static [bool] {
    match g.event(r).action {
        Action::Cas {
            weak: true,
            expected,
            ..
        } if expected == g.written_value(w) && crate::step::may_fail_spuriously(g, r, loc, w) => {
            &[false, true]
        }
        _ => &[false],
    }
}

/// `canonical_source`'s candidate writes and their quick verdicts, kept
/// between calls (a revisit check asks for several).
#[derive(Default)]
pub(super) struct CanonicalScratch {
    cands: Vec<EventId>,
    quick: Vec<Option<bool>>,
    ranked: Vec<WriteRef>,
}

/// Whether the source of RMW `w` is forced last in modification order,
/// every other write of its location forced before it, in the part `part`
/// of `g` (closed under po and rf, `w` last in its thread there and read by
/// nothing in it) without `w`.
pub(super) fn source_forced_last_without(
    g: &ExecutionGraph,
    part: &View,
    w: EventId,
    model: Model,
) -> bool {
    let (Some(src), Some(loc)) = (g.event(w).rf, g.loc_of(w)) else {
        return false;
    };
    let mut view = part.clone();
    view.0[w.thread as usize] = w.index;
    let forced = forced_last_in_part(g, model, &view, loc, src) == Some(true);
    debug_assert_eq!(
        forced,
        LocationCoherence::new(&g.restrict_uncached(&view), model, loc)
            .is_ok_and(|lc| lc.is_forced_last(src)),
        "the part's constraints built in place differ from its copy's"
    );
    forced
}

/// Gives every read whose source was removed by a revisit (other than `r`) its
/// canonical source ([`canonical_source`]) again. Such reads are always last in their thread.
/// Returns whether there was one, or `None` when one has no source left.
pub(super) fn repair_dangling_reads(
    g: &mut ExecutionGraph,
    r: EventId,
    model: c11check_model::Model,
    scratch: &mut CanonicalScratch,
) -> Option<bool> {
    let mut dangling: Vec<(u32, c11check_model::Event)> = Vec::new();
    for t in 0..g.num_threads() as u32 {
        let len = g.thread_len(t);
        if len == 0 || (t == r.thread && len - 1 == r.index) {
            continue;
        }
        let last = g.event(EventId::new(t, len - 1));
        if let Some(w) = last.rf {
            if !g.contains(w) {
                dangling.push((t, last.clone()));
            }
        }
    }
    if dangling.is_empty() {
        return Some(false);
    }
    for (t, _) in &dangling {
        let len = g.thread_len(*t);
        g.truncate_thread(*t, len - 1);
    }
    dangling.sort_by_key(|(_, e)| e.stamp);
    for (t, mut e) in dangling {
        e.rf = None;
        e.spurious_fail = false;
        let id = EventId::new(t, g.thread_len(t));
        match canonical_source(g, id, &e, model, false, scratch) {
            Some(w) => g.set_rf(id, w),
            None => return None,
        }
    }
    Some(true)
}

/// The canonical source of read `e` (`ev`, appended to its thread in `h`): of
/// the writes `e` can read consistently while ending modification order (or,
/// for a successful RMW, while the RMW ends it), the highest ranked (see
/// [`canonical_rank`]). Leaves `e` reading an arbitrary candidate.
/// `consistent` says whether `h` is known to be consistent: only then does
/// a read of a write forced last need no seq_cst search.
pub(super) fn canonical_source(
    h: &mut ExecutionGraph,
    e: EventId,
    ev: &c11check_model::Event,
    model: c11check_model::Model,
    consistent: bool,
    scratch: &mut CanonicalScratch,
) -> Option<EventId> {
    let loc = ev.loc()?;
    let CanonicalScratch {
        cands,
        quick,
        ranked,
    } = scratch;
    quick.clear();
    // Most candidates are judged from one analysis of the graph before `e`
    // (see `LocationCoherence::read_extension_verdict`); the rest in full.
    // The search stops at the first candidate judged good, so none after it
    // is judged.
    match LocationCoherence::new(h, model, loc) {
        Ok(base) => {
            base.writes_into(ranked);
            ranked.sort_unstable_by_key(|x| std::cmp::Reverse(canonical_rank(x.id)));
            cands.clear();
            cands.extend(ranked.iter().map(|x| x.id));
            for &xref in ranked.iter() {
                let x = xref.id;
                let writes = read_writes(&ev.action, h.written_value(x), false);
                let ord = read_order(&ev.action, writes);
                let q = match base
                    .read_extension_verdict(e.thread, ord, writes, loc, xref)
                    .known()
                {
                    None => None,
                    Some(false) => Some(false),
                    Some(true) if !base.could_end_mo(xref) => Some(false),
                    Some(true) => (!base.sc_search_needed()
                        || (consistent && base.is_forced_last(xref)))
                    .then_some(true),
                };
                quick.push(q);
                if q == Some(true) {
                    break;
                }
            }
        }
        Err(_) => {
            cands.clear();
            cands.extend(h.writes_to(loc));
            cands.sort_unstable_by_key(|&x| std::cmp::Reverse(canonical_rank(x)));
            quick.resize(cands.len(), None);
        }
    }
    h.push_event(e.thread, ev.clone());
    cands.iter().zip(quick.iter()).find_map(|(&x, &q)| {
        h.set_rf(e, x);
        h.update_event(e, |x| x.spurious_fail = false);
        let last = if h.event(e).is_write() { e } else { x };
        let full = || Analysis::new(h, model).is_ok_and(|a| a.find_mo(&[(loc, last)]).is_some());
        debug_assert!(
            q.is_none_or(|v| v == full()),
            "quick canonical check disagrees"
        );
        q.unwrap_or_else(full).then_some(x)
    })
}

/// The order in which [`canonical_source`] prefers writes: by position (thread,
/// then program order), the initial writes first. It must not depend on when
/// events were added, which differs between graphs that agree on their events.
pub(super) fn canonical_rank(w: EventId) -> (u64, u32) {
    if w.is_init() {
        (0, 0)
    } else {
        (w.thread as u64 + 1, w.index)
    }
}
