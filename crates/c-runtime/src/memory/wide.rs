//! 16-byte atomics (gcc's `__tsan_atomic128_*`: a tagged pointer's
//! double-width compare-exchange, say) in a model whose values are 64-bit.
//!
//! The model only copies and compares the values of loads, stores,
//! exchanges and compare-exchanges, so a 16-byte value can stand for
//! itself under any one-to-one code: a value below 2^63 is its own code
//! (reports show it as it is), a larger one gets the code `-k`, the `k`-th
//! such value seen in the run (its codes never change within a run, so
//! executions agree on them). Arithmetic read-modify-writes would need the
//! values themselves and are refused with a clear report. (Tested through
//! programs: `tests/programs.rs`, 16-byte atomics.)

use c11check_model::Value;
use std::cell::RefCell;
use std::collections::HashMap;

thread_local! {
    /// The large values seen so far and their codes (`-1 - index`).
    static CODES: RefCell<(HashMap<u128, Value>, Vec<u128>)> = RefCell::new(Default::default());
}

/// The model's value for the 16-byte value `v`.
pub fn encode(v: u128) -> Value {
    if v < 1 << 63 {
        return v as Value;
    }
    CODES.with(|c| {
        let (map, list) = &mut *c.borrow_mut();
        *map.entry(v).or_insert_with(|| {
            list.push(v);
            -(list.len() as Value)
        })
    })
}

/// The 16-byte value the model's value `x` stands for.
pub fn decode(x: Value) -> u128 {
    if x >= 0 {
        return x as u128;
    }
    CODES.with(|c| {
        c.borrow()
            .1
            .get((-x - 1) as usize)
            .copied()
            .expect("c11check: a 16-byte value the runtime never encoded")
    })
}
