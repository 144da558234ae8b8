//! Exploration of the executions of a program under a memory model.
//!
//! A front end implements [`Driver`]: given an execution graph, it says what a
//! thread does next (replaying the thread against the values its earlier reads
//! returned). An exploration strategy decides which thread runs and what each
//! read reads from, and hands every complete execution to a [`Visitor`].
//!
//! [`exhaustive`] visits every consistent execution once (reads-from
//! equivalence); see its module documentation for the algorithm.

pub mod bound;
mod config;
pub mod exhaustive;
mod program;
pub mod random;
mod step;
pub mod straight;

pub use config::{Config, Shard, Stats};
pub use program::{Driver, Ending, Execution, Visitor};
