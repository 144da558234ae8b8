//! What the location clocks carry to decide psc exactly for SeqCst
//! accesses (see `location_clocks`): for each SeqCst event, which *targets*
//! reach it in psc. A target is an event a weak step's new edges could lead
//! to against the run's order, named by its place at a location:
//!
//! * [`TargetKind::Write`]: a SeqCst write, by its position (`ts`);
//! * [`TargetKind::FenceAfterWrite`]: an SC fence, by the newest write of
//!   the location that happens before it;
//! * [`TargetKind::FenceAfterAccess`]: an SC fence, by the newest write of
//!   the location that it, or an event before it, is aware of (wrote or
//!   read: the location clocks' current view).
//!
//! A [`Reach`] maps (location, kind) to the largest position of a target of
//! that kind reaching the event: the question asked of it is whether some
//! target at or after a position reaches a source, which the largest
//! answers.
//!
//! Reaches travel with happens-before inside [`Payload`]s, which join
//! exactly like the views they ride with. A payload holds several reaches
//! side by side (see [`Part`]), and one reach per location for the
//! `hb|loc` part of psc.

/// The kind of a target (see the module note).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    Write = 0,
    FenceAfterWrite = 1,
    FenceAfterAccess = 2,
}

/// Locations up to this many are keyed exactly; beyond, the location
/// clocks leave SeqCst questions unjudged.
pub const MAX_LOCS: u32 = 1 << 26;

/// The key of a target: its location and kind.
pub fn target(loc: u32, kind: TargetKind) -> u64 {
    (u64::from(loc) << 2) | kind as u64
}

/// A sorted map from keys to positions: the one data structure of this
/// module (a [`Reach`] uses target keys, a [`Payload`] part keys over
/// them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyClock(Vec<(u64, u32)>);

/// Targets reaching an event: target key → largest position.
pub type Reach = KeyClock;

/// What rides with a happens-before view: several reaches, each under the
/// key range of its [`Part`].
pub type Payload = KeyClock;

/// The parts of a [`Payload`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The reaches of SC fences that happen before (they reach every
    /// SeqCst event after them in happens-before).
    Fences = 1,
    /// What reaches an SC fence through happens-before alone: SeqCst
    /// accesses before it, writes after which the accesses eco-before them
    /// come, accesses after fences that are eco-before them.
    IntoFences = 2,
    /// `po≠loc; hb; po≠loc`: the reaches of SeqCst accesses released at the
    /// first event of their thread at another location.
    OtherLocation = 3,
    /// Writes that happen before, by location (not a reach: position
    /// only, kind 0), for fences' [`TargetKind::FenceAfterWrite`].
    WritesBefore = 4,
    /// `hb|loc`: per location `l`, the reaches of SeqCst accesses of `l`
    /// that happen before.
    SameLocation = 5,
}

const PART_SHIFT: u32 = 60;
const SOURCE_SHIFT: u32 = 32;

/// The first key of `part` (for [`Part::SameLocation`], of location `l`'s
/// reach).
fn base(part: Part, l: u32) -> u64 {
    let b = (part as u64) << PART_SHIFT;
    if part == Part::SameLocation {
        b | (u64::from(l) << SOURCE_SHIFT)
    } else {
        b
    }
}

/// One past the last key of `part` (for `l`).
fn end(part: Part, l: u32) -> u64 {
    if part == Part::SameLocation {
        base(part, l) + (1 << SOURCE_SHIFT)
    } else {
        (part as u64 + 1) << PART_SHIFT
    }
}

impl KeyClock {
    pub fn get(&self, key: u64) -> u32 {
        match self.0.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => 0,
        }
    }

    pub fn raise(&mut self, key: u64, v: u32) {
        if v == 0 {
            return;
        }
        match self.0.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => self.0[i].1 = self.0[i].1.max(v),
            Err(i) => self.0.insert(i, (key, v)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn join(&mut self, other: &KeyClock) {
        self.join_entries(&other.0, 0, 0);
    }

    /// Joins `src` (sorted, keys at least `from`) re-keyed from `from` to
    /// `to` (a shift that keeps the order). In place: keys already present
    /// are raised, and new ones merged in from the back after one resize
    /// (joins run on every access; an allocation each would dominate).
    fn join_entries(&mut self, src: &[(u64, u32)], from: u64, to: u64) {
        if src.is_empty() {
            return;
        }
        let map = |k: u64| k - from + to;
        // Raise what exists; count what does not.
        let mut new = 0;
        let mut i = 0;
        for &(k, v) in src {
            let k = map(k);
            while i < self.0.len() && self.0[i].0 < k {
                i += 1;
            }
            if i < self.0.len() && self.0[i].0 == k {
                self.0[i].1 = self.0[i].1.max(v);
            } else {
                new += 1;
            }
        }
        if new == 0 {
            return;
        }
        let old = self.0.len();
        self.0.resize(old + new, (0, 0));
        let (mut i, mut j, mut k) = (old, src.len(), old + new);
        while j > 0 {
            let (kb, vb) = (map(src[j - 1].0), src[j - 1].1);
            k -= 1;
            if i > 0 && self.0[i - 1].0 > kb {
                self.0[k] = self.0[i - 1];
                i -= 1;
            } else if i > 0 && self.0[i - 1].0 == kb {
                // Raised above already.
                self.0[k] = self.0[i - 1];
                i -= 1;
                j -= 1;
            } else {
                self.0[k] = (kb, vb);
                j -= 1;
            }
        }
    }

    /// The entries of `part` (for `l`).
    fn part(&self, part: Part, l: u32) -> &[(u64, u32)] {
        let (lo, hi) = (base(part, l), end(part, l));
        let from = self.0.partition_point(|e| e.0 < lo);
        let to = self.0.partition_point(|e| e.0 < hi);
        &self.0[from..to]
    }

    /// Adds `reach` to the payload's `part` (for `l`).
    pub fn add_to(&mut self, part: Part, l: u32, reach: &Reach) {
        self.join_entries(&reach.0, 0, base(part, l));
    }

    /// Adds the payload's `part` (for `l`) to `reach`.
    pub fn take_part(&self, part: Part, l: u32, reach: &mut Reach) {
        let b = base(part, l);
        reach.join_entries(self.part(part, l), b, 0);
    }

    /// The position of `key` in the payload's `part` (for `l`).
    pub fn get_in(&self, part: Part, l: u32, key: u64) -> u32 {
        self.get(base(part, l) + key)
    }

    /// Raises `key` in the payload's `part` (for `l`).
    pub fn raise_in(&mut self, part: Part, l: u32, key: u64, v: u32) {
        self.raise(base(part, l) + key, v);
    }

    /// The entries of `part` (for `l`), keys relative to the part.
    pub fn iter_part(&self, part: Part, l: u32) -> impl Iterator<Item = (u64, u32)> + '_ {
        let b = base(part, l);
        self.part(part, l).iter().map(move |&(k, v)| (k - b, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_raise_and_merge_in_order() {
        let clock = |e: &[(u64, u32)]| KeyClock(e.to_vec());
        for (a, b, want) in [
            (vec![], vec![(1, 1)], vec![(1, 1)]),
            (
                vec![(1, 5), (4, 1)],
                vec![(1, 2), (4, 3)],
                vec![(1, 5), (4, 3)],
            ),
            (
                vec![(2, 1), (5, 5), (9, 1)],
                vec![(0, 7), (5, 6), (6, 1), (10, 2)],
                vec![(0, 7), (2, 1), (5, 6), (6, 1), (9, 1), (10, 2)],
            ),
            (
                vec![(3, 3)],
                vec![(1, 1), (2, 2)],
                vec![(1, 1), (2, 2), (3, 3)],
            ),
        ] {
            let mut x = clock(&a);
            x.join(&clock(&b));
            assert_eq!(x, clock(&want), "{a:?} + {b:?}");
        }
    }

    #[test]
    fn parts_are_kept_apart_and_joined_by_key() {
        let mut r = Reach::default();
        r.raise(target(3, TargetKind::Write), 5);
        r.raise(target(1, TargetKind::FenceAfterAccess), 2);
        let mut p = Payload::default();
        p.add_to(Part::Fences, 0, &r);
        p.add_to(Part::SameLocation, 7, &r);
        p.raise_in(Part::WritesBefore, 0, 3, 9);
        let mut back = Reach::default();
        p.take_part(Part::Fences, 0, &mut back);
        assert_eq!(back, r);
        let mut same = Reach::default();
        p.take_part(Part::SameLocation, 7, &mut same);
        assert_eq!(same, r);
        let mut other = Reach::default();
        p.take_part(Part::SameLocation, 6, &mut other);
        assert!(other.is_empty());
        assert_eq!(p.get_in(Part::WritesBefore, 0, 3), 9);
        let mut q = Payload::default();
        q.raise_in(Part::Fences, 0, target(3, TargetKind::Write), 7);
        p.join(&q);
        assert_eq!(p.get_in(Part::Fences, 0, target(3, TargetKind::Write)), 7);
        assert_eq!(
            p.get_in(Part::SameLocation, 7, target(3, TargetKind::Write)),
            5
        );
    }
}
