//! What the explorers and a front end say to each other: the front end is
//! a [`Driver`] (what each thread does next), the explorer hands each
//! execution it finds to a [`Visitor`].

use crate::config::Stats;
use c11check_model::{Action, Analysis, EventId, ExecutionGraph, Loc};

/// A program under test, as seen by the explorers.
pub trait Driver {
    /// The graph before any thread has run: locations with initial values and the root threads.
    fn initial_graph(&mut self) -> ExecutionGraph;
    /// What thread `t` does next, given the events it has already performed in `g`
    /// (in program order, with the values its reads returned). A front end that
    /// discovers locations as the program runs may add them to `g`.
    fn next_action(&mut self, g: &mut ExecutionGraph, t: u32) -> Action;
    /// Called before the explorer continues a graph other than the one it was
    /// building (a pending branch or a revisit): a front end that keeps running
    /// threads between calls must bring them to the state `g` describes.
    fn begin(&mut self, _g: &mut ExecutionGraph) {}
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every thread finished.
    Complete,
    /// Some thread stopped on a failed assume or an exceeded bound.
    Blocked,
    /// Every remaining thread waits for another (join cycle or lock).
    Deadlock,
}

/// One execution handed to the visitor.
pub struct Execution<'a> {
    pub graph: &'a ExecutionGraph,
    pub analysis: &'a Analysis<'a>,
    /// For each observed location, the write that is last in modification order.
    pub finals: &'a [(Loc, EventId)],
    pub ending: Ending,
}

/// Receives executions; returning `false` stops the exploration.
pub trait Visitor {
    fn visit(&mut self, exec: &Execution<'_>) -> bool;
    /// The exploration starts over (it found the order of reference-count
    /// updates observable, see [`crate::exhaustive`]): executions visited so far will
    /// be visited again. Each was a real execution.
    fn restart(&mut self) {}
    /// Called about once a second while the exploration runs, inside long
    /// executions too (`stats` so far, `elapsed` set): for progress lines.
    fn progress(&mut self, _stats: &Stats) {}
}

impl<F: FnMut(&Execution<'_>) -> bool> Visitor for F {
    fn visit(&mut self, exec: &Execution<'_>) -> bool {
        self(exec)
    }
}
