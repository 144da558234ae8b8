//! `loom::hint`.

pub use c11check::hint::spin_loop;

/// # Safety
/// As `std::hint::unreachable_unchecked`; the model panics instead of
/// invoking undefined behaviour, so the report shows how it was reached.
pub unsafe fn unreachable_unchecked() -> ! {
    panic!("unreachable_unchecked was reached")
}
