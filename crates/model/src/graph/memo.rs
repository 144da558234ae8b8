//! What analyses remember with a graph.
//!
//! The consistency check computes happens-before clocks and per-location
//! constraints that stay valid while the events they cover do not change.
//! It keeps them in the graph (a graph is copied at every branch, and so
//! is what was computed for it), but their types are the check's own: the
//! graph sees them through [`Memo`], only to say how far each thread is
//! covered and to cut them when events change or a graph is restricted.
//! So the graph depends on nothing above it.

use std::any::Any;
use std::cell::RefCell;
use std::fmt;

/// What an analysis remembers of a graph, as the graph needs it: what it
/// covers (the first [`Memo::known`] events of each thread) and how to
/// cover less.
pub trait Memo: Any {
    /// How many of thread `t`'s first events it covers.
    fn known(&self, t: usize) -> usize;
    /// Covers only the first `cut[t]` events of each thread `t` (events
    /// there changed, or something before them did).
    fn forget_beyond(&mut self, cut: &[usize]);
    /// A copy covering the first `cut[t]` events of each thread `t`; with
    /// `shared`, the parts kept in common with other graphs too.
    fn prefix(&self, cut: &[usize], shared: bool) -> Box<dyn Memo>;
    /// Drops the parts kept in common with other graphs (see
    /// [`crate::ExecutionGraph::detach_caches`]).
    fn detach(&mut self);
    fn clone_box(&self) -> Box<dyn Memo>;
}

/// The memo as a field of [`crate::ExecutionGraph`]: shared-access
/// analyses fill it, and it takes no part in comparing graphs.
#[derive(Default)]
pub(crate) struct MemoCell(pub RefCell<Option<Box<dyn Memo>>>);

impl MemoCell {
    pub fn new(memo: Box<dyn Memo>) -> Self {
        MemoCell(RefCell::new(Some(memo)))
    }
    /// How many of thread `t`'s first events are covered.
    pub fn known(&mut self, t: usize) -> usize {
        self.0.get_mut().as_ref().map_or(0, |m| m.known(t))
    }
}

impl Clone for MemoCell {
    fn clone(&self) -> Self {
        MemoCell(RefCell::new(
            self.0.borrow().as_ref().map(|m| m.clone_box()),
        ))
    }
}

impl PartialEq for MemoCell {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for MemoCell {}

impl fmt::Debug for MemoCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Memo")
    }
}
