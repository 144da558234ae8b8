//! C++20: RC11 with the release sequences of P0982R1 (only RMWs continue
//! one), the default. Every other model is this one adjusted.

use super::{LiveMachine, Rules};

pub const RULES: Rules = Rules {
    name: "cpp20",
    aliases: &["c++20", "rc20"],
    all_seq_cst: false,
    rc11_release_sequences: false,
    total_order: false,
    preserved_order: None,
    live: Some(LiveMachine::Cpp),
};
