//! Sequential consistency: every atomic access is seq_cst and all accesses
//! take part in one total order (`po ∪ rf ∪ mo ∪ rb` acyclic).

use super::{LiveMachine, Rules};

pub const RULES: Rules = Rules {
    name: "sc",
    aliases: &[],
    all_seq_cst: true,
    rc11_release_sequences: false,
    total_order: true,
    preserved_order: None,
    live: Some(LiveMachine::Cpp),
};
