//! RC11 as herd's `rc11.cat` has it: C++11's release sequences, which also
//! start at the thread's last release write to the location.

use super::{LiveMachine, Rules};

pub const RULES: Rules = Rules {
    name: "rc11",
    aliases: &[],
    all_seq_cst: false,
    rc11_release_sequences: true,
    total_order: false,
    preserved_order: None,
    live: Some(LiveMachine::Cpp),
};
