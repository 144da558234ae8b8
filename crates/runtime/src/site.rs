//! Where a visible operation comes from: a line of Rust source or an
//! instruction of a compiled program, as reports show it.

use std::panic::Location;

/// Where a visible operation comes from (for reports): a line of Rust
/// source, or the address of an instruction of a compiled C/C++ program
/// (shown as `file:line` through [`set_pc_resolver`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Site {
    /// A Rust source location (`#[track_caller]`).
    Rust(&'static Location<'static>),
    /// A return address in a compiled program.
    Pc(usize),
}

impl Site {
    /// The source location of the caller (through `#[track_caller]`
    /// functions, the first caller that is not one).
    #[track_caller]
    #[inline]
    pub const fn caller() -> Site {
        Site::Rust(Location::caller())
    }

    /// Where a fix hint tells the user to change this operation: the site
    /// itself, or for an operation inside a small wrapper inlined into the
    /// code that called it (a library's `load()` that always loads
    /// relaxed), that call, naming the wrapper (see
    /// [`set_pc_change_resolver`]). Changing the wrapper would change
    /// every use of it.
    pub fn to_change(&self) -> String {
        match (self, PC_CHANGE_RESOLVER.get()) {
            (Site::Pc(pc), Some(resolve)) => resolve(*pc),
            _ => self.to_string(),
        }
    }
}

impl From<&'static Location<'static>> for Site {
    fn from(l: &'static Location<'static>) -> Site {
        Site::Rust(l)
    }
}

/// How [`Site::Pc`] sites are shown: set once by a runtime for compiled
/// programs (which reads the program's debug information).
static PC_RESOLVER: std::sync::OnceLock<fn(usize) -> String> = std::sync::OnceLock::new();

/// Sets how instruction addresses are shown in reports (`file:line`).
pub fn set_pc_resolver(f: fn(usize) -> String) {
    let _ = PC_RESOLVER.set(f);
}

/// How [`Site::to_change`] shows [`Site::Pc`] sites (set with the resolver).
static PC_CHANGE_RESOLVER: std::sync::OnceLock<fn(usize) -> String> = std::sync::OnceLock::new();

/// Sets how fix hints show instruction addresses (see [`Site::to_change`]).
pub fn set_pc_change_resolver(f: fn(usize) -> String) {
    let _ = PC_CHANGE_RESOLVER.set(f);
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Site::Rust(l) => write!(f, "{l}"),
            Site::Pc(pc) => match PC_RESOLVER.get() {
                Some(resolve) => f.write_str(&resolve(*pc)),
                None => write!(f, "{pc:#x}"),
            },
        }
    }
}
