//! The hardware machines the live memory runs on top of C11Tester's memory
//! for the hardware models (`tso`: [`StoreBuffers`], `mca`: [`ArmViews`]):
//! they decide which of the stores the C++ memory allows a read may take,
//! and when a thread's stores become visible to the others. The memory
//! asks its machine at fixed points of every operation; under the C++
//! models it has none.
//!
//! [`StoreBuffers`]: super::store_buffers::StoreBuffers
//! [`ArmViews`]: super::arm_views::ArmViews

use super::{NodeId, SeqBuild};
use crate::{Loc, MemOrder};
use std::collections::HashSet;

/// A hardware machine under the live memory (see the module doc).
pub(super) trait Machine {
    /// A new thread, started by `parent` (after all `parent` did).
    fn add_thread(&mut self, parent: Option<u32>);

    /// Thread `t` joined `child`, which has finished.
    fn join(&mut self, t: u32, child: u32);

    /// Before a plain store of thread `t` (`ord`) begins.
    fn before_store(&mut self, t: u32, ord: MemOrder);

    /// Before a read-modify-write or compare-exchange of thread `t` at
    /// `loc` begins (`release`: its write releases).
    fn before_rmw(&mut self, t: u32, loc: Loc, release: bool);

    /// Thread `t` is about to read `loc` (`sc`: a seq_cst read; `latest`:
    /// an RMW's read, whose write becomes visible right after it): notes
    /// what it may take. `stores` are the location's stores the memory
    /// still holds.
    fn aim_read(
        &mut self,
        t: u32,
        loc: Loc,
        sc: bool,
        latest: bool,
        stores: &mut dyn Iterator<Item = NodeId>,
    );

    /// Of the stores the memory lets the aimed read take, keeps those the
    /// machine allows; or names the one store it takes.
    fn restrict(&mut self, candidates: &mut super::Stores) -> Option<NodeId>;

    /// Thread `t` read store `s` of `loc` with ordering `ord`.
    fn read(&mut self, t: u32, loc: Loc, s: NodeId, ord: MemOrder);

    /// Thread `t` stored `id` to `loc` (`rmw`: an RMW's write).
    fn write(&mut self, t: u32, loc: Loc, id: NodeId, ord: MemOrder, rmw: bool);

    /// A fence of thread `t`, before its clocks move.
    fn fence(&mut self, t: u32, ord: MemOrder);

    /// The stores that may become visible next, as (thread, index in its
    /// buffer).
    fn flushable(&self) -> Vec<(u32, usize)>;

    /// Makes thread `t`'s `i`-th buffered store visible (one `flushable`
    /// named).
    fn flush(&mut self, t: u32, i: usize);

    /// The one store a compare-exchange of `loc` may read if it writes
    /// (`None`: any the memory allows).
    fn store_a_cas_must_read(&self, loc: Loc) -> Option<NodeId>;

    /// Adds the stores the machine still refers to (pruning keeps them).
    fn pin(&self, kept: &mut HashSet<NodeId, SeqBuild>);

    /// Forgets what it knows of stores pruning dropped.
    fn forget_unless(&mut self, referenced: &HashSet<NodeId, SeqBuild>);

    /// The store `loc` ends with once every buffer is empty.
    fn final_store(&self, loc: Loc) -> NodeId;
}
