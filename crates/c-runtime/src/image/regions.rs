//! Where code lies: the executable's own code, the runtime's, and that
//! of libc, the loader and the unwinder. A call's return address says
//! whose call it is (the program's calls are modelled, the others passed
//! on).

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The executable's code (start, end): calls from there are the program's.
static TEXT: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
/// The runtime's own code when it is linked into the executable (see
/// [`crate::image`]); empty otherwise.
static RUNTIME_TEXT: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// Notes where the program's, the runtime's and the system's code lie.
/// Called when `main` is taken over.
pub fn note() {
    let (s, e) = super::symbols::executable_text();
    TEXT[0].store(s, Relaxed);
    TEXT[1].store(e, Relaxed);
    let mut system = super::symbols::system_text();
    if let Some(own) = super::linked() {
        RUNTIME_TEXT[0].store(own.text.0, Relaxed);
        RUNTIME_TEXT[1].store(own.text.1, Relaxed);
        system.push(own.text);
    }
    let _ = SYSTEM_TEXT.set(system);
}

/// The code of libc, the loader, the unwinder and this runtime (see
/// [`crate::image::symbols::system_text`]).
static SYSTEM_TEXT: std::sync::OnceLock<Vec<(usize, usize)>> = std::sync::OnceLock::new();

/// Whether the call with return address `pc` comes from libc, the loader,
/// the unwinder or this runtime: its locks are not the program's.
pub fn from_system(pc: usize) -> bool {
    SYSTEM_TEXT
        .get()
        .is_some_and(|r| r.iter().any(|&(s, e)| (s..e).contains(&pc)))
}

/// Whether the call with return address `pc` comes from the program's own
/// code (not libc's or the runtime's).
#[inline]
pub fn from_program(pc: usize) -> bool {
    (TEXT[0].load(Relaxed)..TEXT[1].load(Relaxed)).contains(&pc)
        && !(RUNTIME_TEXT[0].load(Relaxed)..RUNTIME_TEXT[1].load(Relaxed)).contains(&pc)
}
