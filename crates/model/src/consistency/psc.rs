//! RC11's seq_cst axiom (psc acyclic), computed over the seq_cst events only.
//!
//! psc relates seq_cst events, so it is built as a k × k matrix for the k
//! seq_cst events instead of from relations over the whole graph. The part
//! that does not depend on modification order (program order, the
//! `po≠loc;hb;po≠loc` and `hb|loc` parts of scb) is computed once per
//! search ([`PscFrame::new`]); each completion of the modification order
//! the search tries only adds the edges that come from `mo`, `rb` and
//! `eco`, read off rows of eco (bit sets over the graph's events).
//!
//! Edges, for seq_cst events `a` and `b`, with `c*` the first event after
//! `a` in its thread at another location and `d*` the last one before `b`
//! (events without a location are at no location):
//! * access → access: `po`, `hb(c*, d*)` (it stands for every
//!   `po≠loc;hb;po≠loc` path), `hb` at one location, or `mo`/`rb` (b is a
//!   write that a's eco row reaches).
//! * fence → access: an access the fence happens before reaches write `b`
//!   by eco.
//! * access → fence: a's eco row reaches a write that happens before the
//!   fence.
//! * fence → fence: an access after the first reaches by eco one before the
//!   second (psc_F).
//!
//! psc also has edges from a fence to what it happens before, and to a
//! fence from what happens before it (`hb` between fences, the `hb?` ends
//! of psc_base). They never close a cycle the edges above do not: follow a
//! cycle from fence `f` along events `f` happens before until the first
//! edge that leaves them; every edge kind that leaves them is an eco step,
//! which gives `f` an edge above to the same event (and symmetrically for
//! edges into a fence). Returning to `f` itself that way would put an eco
//! edge against hb, which coherence (checked before) excludes. The
//! bundled `PSC+*` litmus tests exercise the edges kept.

use super::Analysis;
use crate::bits::{iter_bits, set_range_in, BitMatrix};
use crate::EventId;
use smallvec::{smallvec, SmallVec};

/// A bit set over the graph's events (a few words: graphs are small, and
/// a search builds several per check).
type Bits = SmallVec<[u64; 4]>;
/// Bit sets, one per event or per write, side by side.
type Rows = SmallVec<[u64; 64]>;

/// What psc needs that modification order does not change.
pub(crate) struct PscFrame {
    /// Words of a bit set over the graph's events (dense ids).
    words: usize,
    /// Dense ids of the seq_cst events.
    sc: SmallVec<[usize; 32]>,
    /// For each seq_cst event: its location's index in `Analysis::locs` if
    /// it is an access, else its position among the fences.
    place: SmallVec<[Place; 32]>,
    /// The edges between seq_cst events that hold whatever modification
    /// order is.
    fixed: BitMatrix,
    /// The locations whose eco rows psc reads: those with seq_cst accesses,
    /// or every one when there are seq_cst fences.
    locs: SmallVec<[usize; 8]>,
    /// Whether eco rows are needed from every access (with fences) or only
    /// from the seq_cst ones.
    all_rows: bool,
    /// The writes, as a set.
    writes: Bits,
    /// Per fence (`words` each): the events it happens before, and those
    /// that happen before it.
    after: Vec<u64>,
    before: Vec<u64>,
}

#[derive(Clone, Copy)]
enum Place {
    Access(usize),
    Fence(usize),
}

fn bit(m: &[u64], i: usize) -> bool {
    m[i / 64] >> (i % 64) & 1 == 1
}

fn set(m: &mut [u64], i: usize) {
    m[i / 64] |= 1 << (i % 64);
}

fn or(dst: &mut [u64], src: &[u64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d |= s;
    }
}

impl<'g> Analysis<'g> {
    /// Happens-before between dense ids.
    fn hb_dense(&self, a: usize, b: usize) -> bool {
        self.hb(self.id(a), self.id(b))
    }

    /// The first event after `d` in its thread at another location.
    fn next_other_loc(&self, d: usize) -> Option<usize> {
        let g = self.g;
        let id = self.id(d);
        let loc = g.loc_of(id);
        let len = g.thread_len(id.thread) as usize;
        let mut j = id.index as usize + 1;
        while j < len && loc.is_some() && g.loc_of(EventId::new(id.thread, j as u32)) == loc {
            j += 1;
        }
        (j < len).then(|| d + (j - id.index as usize))
    }

    /// The last event before `d` in its thread at another location.
    fn prev_other_loc(&self, d: usize) -> Option<usize> {
        let g = self.g;
        let id = self.id(d);
        let loc = g.loc_of(id);
        let mut j = id.index as usize;
        while j > 0 && loc.is_some() && g.loc_of(EventId::new(id.thread, j as u32 - 1)) == loc {
            j -= 1;
        }
        (j > 0).then(|| d - (id.index as usize - j) - 1)
    }

    /// Fills `out` with the events `d` happens before (`after`) or that
    /// happen before it: per thread a suffix or a prefix, read off clocks.
    fn hb_set(&self, d: usize, after: bool, out: &mut [u64]) {
        let g = self.g;
        let id = self.id(d);
        for t in 0..g.num_threads() {
            let base = self.dense(EventId::new(t as u32, 0));
            let len = g.thread_len(t as u32) as usize;
            if after {
                set_range_in(out, base + self.first_hb_after(id, t), base + len);
            } else {
                let upto = if t == id.thread as usize {
                    id.index as usize
                } else {
                    self.clock(id)[t] as usize
                };
                set_range_in(out, base, base + upto.min(len));
            }
        }
        if !after {
            // Initialisation writes happen before everything.
            set_range_in(out, 0, self.dense(EventId::new(0, 0)).min(self.num_nodes()));
        }
    }
}

impl PscFrame {
    /// Collects the seq_cst events and the edges between them that hold
    /// under every modification order.
    pub(crate) fn new(a: &Analysis<'_>) -> PscFrame {
        let g = a.g;
        let n = a.num_nodes();
        let words = n.div_ceil(64).max(1);
        let mut sc = SmallVec::new();
        let mut place = SmallVec::new();
        let mut nfences = 0;
        for d in 0..n {
            let id = a.id(d);
            if id.is_init() {
                continue;
            }
            let e = g.event(id);
            if !e.is_sc() {
                continue;
            }
            sc.push(d);
            place.push(match e.loc() {
                Some(l) => Place::Access(l.0 as usize),
                None => {
                    nfences += 1;
                    Place::Fence(nfences - 1)
                }
            });
        }
        let all_rows = nfences > 0;
        let locs: SmallVec<[usize; 8]> = (0..a.locs.len())
            .filter(|&l| !a.locs[l].writes.is_empty() && (all_rows || a.locs[l].has_sc))
            .collect();
        let mut writes: Bits = smallvec![0u64; words];
        for &l in &locs {
            for &w in &a.locs[l].writes {
                set(&mut writes, a.dense(w));
            }
        }
        let mut after = vec![0u64; nfences * words];
        let mut before = vec![0u64; nfences * words];
        for (i, &d) in sc.iter().enumerate() {
            if let Place::Fence(f) = place[i] {
                a.hb_set(d, true, &mut after[f * words..(f + 1) * words]);
                a.hb_set(d, false, &mut before[f * words..(f + 1) * words]);
            }
        }
        let mut frame = PscFrame {
            words,
            sc,
            place,
            fixed: BitMatrix::new(0),
            locs,
            all_rows,
            writes,
            after,
            before,
        };
        frame.fixed = frame.fixed_edges(a);
        frame
    }

    /// The edges that do not depend on modification order (between
    /// accesses only).
    fn fixed_edges(&self, a: &Analysis<'_>) -> BitMatrix {
        let mut m = BitMatrix::new(self.sc.len());
        // Per access: its location, id, and the nearest events at other
        // locations after and before it.
        type AccessInfo = (usize, EventId, Option<usize>, Option<usize>);
        let info: SmallVec<[Option<AccessInfo>; 32]> = self
            .sc
            .iter()
            .zip(&self.place)
            .map(|(&d, p)| match *p {
                Place::Access(l) => Some((l, a.id(d), a.next_other_loc(d), a.prev_other_loc(d))),
                Place::Fence(_) => None,
            })
            .collect();
        for (ia, x) in info.iter().enumerate() {
            let Some((la, da, next, _)) = *x else {
                continue;
            };
            for (ib, y) in info.iter().enumerate() {
                let Some((lb, db, _, prev)) = *y else {
                    continue;
                };
                if ia == ib {
                    continue;
                }
                let po = da.thread == db.thread && da.index < db.index;
                if po
                    || matches!((next, prev), (Some(c), Some(d)) if a.hb_dense(c, d))
                    || (la == lb && a.hb(da, db))
                {
                    m.set(ia, ib);
                }
            }
        }
        m
    }

    /// eco = (rf ∪ mo ∪ rb)+ from each access of the frame's locations, as
    /// rows over dense ids (`words` each; other rows stay empty). A write
    /// reaches the writes after it in mo, their readers and its own readers;
    /// a read reaches the writes after its source (rb) other than itself,
    /// and their readers.
    fn eco_rows(&self, a: &Analysis<'_>, orders: &[BitMatrix]) -> Rows {
        let words = self.words;
        let mut rows: Rows = smallvec![0u64; a.num_nodes() * words];
        let mut readers: Rows = SmallVec::new();
        let mut down: Rows = SmallVec::new();
        for &l in &self.locs {
            let lm = &a.locs[l];
            let nw = lm.writes.len();
            // Per write: its readers, and everything eco-after it but them.
            readers.clear();
            readers.resize(nw * words, 0);
            for &r in &lm.reads {
                let s = a.write_index_of(a.g.event(r).rf.unwrap());
                set(&mut readers[s * words..(s + 1) * words], a.dense(r));
            }
            down.clear();
            down.resize(nw * words, 0);
            for i in 0..nw {
                for j in 0..nw {
                    if i != j && a.mo_with(orders, lm, i, j) {
                        let di = &mut down[i * words..(i + 1) * words];
                        set(di, a.dense(lm.writes[j]));
                        or(di, &readers[j * words..(j + 1) * words]);
                    }
                }
            }
            let wanted = |d: usize| self.all_rows || a.g.event(a.id(d)).is_sc();
            for (i, &w) in lm.writes.iter().enumerate().skip(1) {
                let d = a.dense(w);
                if wanted(d) {
                    let row = &mut rows[d * words..(d + 1) * words];
                    or(row, &down[i * words..(i + 1) * words]);
                    or(row, &readers[i * words..(i + 1) * words]);
                }
            }
            for &r in &lm.reads {
                let d = a.dense(r);
                if wanted(d) {
                    let s = a.write_index_of(a.g.event(r).rf.unwrap());
                    let row = &mut rows[d * words..(d + 1) * words];
                    or(row, &down[s * words..(s + 1) * words]);
                    // An RMW's row also has its write part's (above).
                    row[d / 64] &= !(1 << (d % 64));
                }
            }
        }
        rows
    }

    /// Whether psc has a cycle when modification order is `orders` (as far
    /// as it fixes it).
    pub(crate) fn has_cycle(&self, a: &Analysis<'_>, orders: &[BitMatrix]) -> bool {
        let k = self.sc.len();
        if k == 0 {
            return false;
        }
        let words = self.words;
        let rows = self.eco_rows(a, orders);
        let row = |d: usize| &rows[d * words..(d + 1) * words];
        let mut psc = self.fixed.clone();
        // From accesses: mo and rb to a seq_cst write of the same location,
        // and to a fence that a write they reach happens before.
        let mut reached_writes: Bits = smallvec![0u64; words];
        for ia in 0..k {
            let Place::Access(la) = self.place[ia] else {
                continue;
            };
            for (m, (r, w)) in reached_writes
                .iter_mut()
                .zip(row(self.sc[ia]).iter().zip(&self.writes))
            {
                *m = r & w;
            }
            for ib in 0..k {
                let edge = match self.place[ib] {
                    Place::Access(lb) => lb == la && bit(&reached_writes, self.sc[ib]),
                    Place::Fence(f) => {
                        meets(&reached_writes, &self.before[f * words..(f + 1) * words])
                    }
                };
                if edge {
                    psc.set(ia, ib);
                }
            }
        }
        // From fences: what the accesses after the fence reach by eco.
        let mut reach: Bits = smallvec![0u64; words];
        for ia in 0..k {
            let Place::Fence(fa) = self.place[ia] else {
                continue;
            };
            reach.fill(0);
            for x in iter_bits(&self.after[fa * words..(fa + 1) * words]) {
                or(&mut reach, row(x));
            }
            for ib in 0..k {
                let edge = match self.place[ib] {
                    Place::Access(_) => {
                        let d = self.sc[ib];
                        bit(&self.writes, d) && bit(&reach, d)
                    }
                    Place::Fence(fb) => meets(&reach, &self.before[fb * words..(fb + 1) * words]),
                };
                if edge {
                    psc.set(ia, ib);
                }
            }
        }
        psc.has_cycle()
    }
}

fn meets(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}
