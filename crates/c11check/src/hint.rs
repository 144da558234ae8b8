//! `std::hint` under the model.

/// Marks one turn of a busy-wait loop. The model cuts a loop turn that read
/// nothing new (the execution where something new arrives is explored).
#[track_caller]
pub fn spin_loop() {
    c11check_runtime::spin_hint(c11check_runtime::Site::caller());
}

pub use std::hint::black_box;
