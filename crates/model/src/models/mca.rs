//! `mca`: C++20 restricted to the executions a multi-copy-atomic machine
//! (ARMv8) can show of the program compiled with the standard mapping
//! (acquire loads `LDAR`, release stores `STLR`, seq_cst fences `DMB ISH`,
//! acquire fences `DMB ISHLD`, release fences `DMB ISH`). On top of
//! C++20's axioms, `ppo ∪ rfe ∪ mo ∪ rb` must be acyclic: writes become
//! visible to all other threads at once (one global order), and a thread
//! performs in order what `ppo` below relates.
//!
//! ppo, for accesses `a` before `b` in one thread, each an access's read or
//! write (a read-modify-write is both, performed as two):
//! * `[R⊒acq];po`: nothing after an `LDAR` is performed before it;
//! * `po;[W⊒rel]`: an `STLR` is performed after everything before it;
//! * `[SC];po;[SC]`: `STLR` then `LDAR` stay in order (RCsc), as do
//!   seq_cst accesses and fences among themselves;
//! * `po;[F_sc];po`: `DMB ISH` orders everything around it;
//! * `[R];po;[F⊒acq];po`: `DMB ISHLD` orders earlier reads before later
//!   accesses;
//! * `po;[F⊒rel];po;[W]`: a release fence orders earlier accesses before
//!   later writes;
//! * an RMW's read before its write; the write of an acquire RMW is *not*
//!   ordered before later accesses (a `LDAXR`/`STXR` pair or `CASA` orders
//!   them after its read only), which is why a spin lock taken with an
//!   acquire compare-exchange and followed by a load is store buffering on
//!   ARMv8 (Linux's `smp_mb__after_spinlock`);
//! * same-location order but a write before a read: coherence keeps
//!   same-address accesses in order, except that a load may take its value
//!   from the thread's own store before that store is visible (store
//!   forwarding), so `W;po;R` at one location is not ordered.
//!
//! ARMv8's `po;[L];coi` (a release store before a later same-thread write of
//! it) needs no edge here: `po;[W⊒rel]` and `mo` already give it. Reads are
//! reordered freely (IRIW with relaxed reads is allowed, as on ARMv8; MoCA's
//! prototype never reorders reads), and there are no dependencies: C++
//! has none to keep.

use super::{accesses_keeping_rmw_order, halves, Half, LiveMachine, Rules};
use crate::event::{Event, MemOrder};

pub const RULES: Rules = Rules {
    name: "mca",
    aliases: &["armv8"],
    all_seq_cst: false,
    rc11_release_sequences: false,
    total_order: false,
    preserved_order: Some(preserved),
    live: Some(LiveMachine::ArmViews),
};

fn acquires(o: MemOrder) -> bool {
    matches!(o, MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst)
}

fn releases(o: MemOrder) -> bool {
    matches!(o, MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst)
}

fn preserved(events: &[Event], keep: &mut dyn FnMut(Half, Half)) {
    for (j, b) in accesses_keeping_rmw_order(events, keep) {
        let loc_b = b.loc();
        let b_release = releases(b.ord());
        let b_sc = b.ord() == MemOrder::SeqCst;
        // The fences strictly between the candidate `a` and `b`, as `a`
        // walks back from `b`.
        let (mut full_fence, mut acq_fence, mut rel_fence) = (false, false, false);
        for i in (0..j).rev() {
            let a = &events[i];
            let Some(loc_a) = a.loc() else {
                if a.is_fence() {
                    let o = a.ord();
                    full_fence |= o == MemOrder::SeqCst;
                    acq_fence |= acquires(o);
                    rel_fence |= releases(o);
                }
                continue;
            };
            let a_sc = a.ord() == MemOrder::SeqCst;
            for ha in halves(a, i) {
                for hb in halves(b, j) {
                    let kept = (hb.write && b_release)
                        || (!ha.write && acquires(a.ord()))
                        || (a_sc && b_sc)
                        || full_fence
                        || (!ha.write && acq_fence)
                        || (hb.write && rel_fence)
                        || (Some(loc_a) == loc_b && (hb.write || !ha.write));
                    if kept {
                        keep(ha, hb);
                    }
                }
            }
        }
    }
}
