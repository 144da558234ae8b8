//! The memory model of c11check: events, execution graphs, happens-before,
//! modification-order constraints and the consistency rules of each model.
//!
//! Nothing here knows how programs run: the explorer (`c11check-explore`)
//! builds graphs from the actions a front end reports, and asks this crate
//! whether they are consistent.

pub mod bits;
pub mod consistency;
pub mod event;
pub mod graph;
pub mod live_memory;
pub mod models;
pub mod robust;

pub use consistency::coherence::{
    forced_last_in_part, highest_write_ending_mo, ExtensionVerdict, LocWrite, LocationCoherence,
    WriteRef,
};
pub use consistency::{
    check, is_consistent, is_sc_consistent_given_coherence, needs_sc_search, Analysis,
    Inconsistency, Model,
};
pub use event::{
    Action, BlockReason, Event, EventId, Loc, MemOrder, RmwOp, Value, Width, INIT_THREAD,
};
pub use graph::{ExecutionGraph, RmwChain, View};
