//! `std::hint` under the model.

/// Marks one turn of a busy-wait loop. The model cuts a loop turn that read
/// nothing new (the execution where something new arrives is explored).
#[track_caller]
pub fn spin_loop() {
    c11check_runtime::spin_hint(c11check_runtime::Site::caller());
}

pub use std::hint::black_box;

/// Marks the end of a wait-loop turn that found nothing, as [`spin_loop`]
/// does, and says so for robustness checking (`Builder::robustness`): the
/// turn's accesses since the thread's previous hint are left out if they
/// wrote nothing atomic, as those of a recognised wait loop are. For wait
/// loops c11check cannot recognise by repetition (each turn reads other
/// places, as a scan over several flags does).
#[track_caller]
pub fn failed_wait_turn() {
    c11check_runtime::failed_turn_hint(c11check_runtime::Site::caller());
}
