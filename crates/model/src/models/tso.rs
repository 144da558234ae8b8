//! `tso`: C++20 restricted to the executions x86-TSO can show of the
//! program compiled with the standard mapping: loads and non-seq_cst stores
//! are `mov`, seq_cst stores `xchg`, read-modify-writes and
//! compare-exchanges (failing ones too) `lock`-prefixed, seq_cst fences
//! `mfence`, other fences nothing. Each thread's stores go through a FIFO
//! buffer, so the one order x86 does not keep is a plain store before a
//! plain load (store buffering, with forwarding of the thread's own
//! stores), unless a locked instruction or an `mfence` lies between them.
//! On top of C++20's axioms, `ppo ∪ rfe ∪ mo ∪ rb` must be acyclic with
//! that `ppo`.

use super::{accesses_keeping_rmw_order, halves, Half, LiveMachine, Rules};
use crate::event::{Action, Event, MemOrder};

pub const RULES: Rules = Rules {
    name: "tso",
    aliases: &["x86", "x86-tso"],
    all_seq_cst: false,
    rc11_release_sequences: false,
    total_order: false,
    preserved_order: Some(preserved),
    live: Some(LiveMachine::StoreBuffers),
};

/// A `lock`-prefixed instruction or `xchg`: it drains the store buffer.
fn locked(e: &Event) -> bool {
    matches!(e.action, Action::Rmw { .. } | Action::Cas { .. })
        || (e.is_write() && e.ord() == MemOrder::SeqCst)
}

fn preserved(events: &[Event], keep: &mut dyn FnMut(Half, Half)) {
    for (j, b) in accesses_keeping_rmw_order(events, keep) {
        // Whether a barrier lies strictly between the candidate and `b`.
        let mut drained = false;
        for i in (0..j).rev() {
            let a = &events[i];
            if a.loc().is_none() {
                drained |= a.is_fence() && a.ord() == MemOrder::SeqCst;
                continue;
            }
            for ha in halves(a, i) {
                for hb in halves(b, j) {
                    // A buffered store, and a load that may pass it.
                    let buffered = ha.write && !locked(a);
                    let passes = !hb.write && !locked(b);
                    if !(buffered && passes) || drained {
                        keep(ha, hb);
                    }
                }
            }
            drained |= locked(a);
        }
    }
}
