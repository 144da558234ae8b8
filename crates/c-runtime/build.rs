//! The runtime's own calls of `memcpy`, `memmove` and `memset` go to
//! glibc's directly, not through the ones it defines for the program (see
//! `src/bytes.rs`). The static archive gets the same options from
//! `c11check-c-link`.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset");
}
