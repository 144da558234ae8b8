//! Where this runtime's own code, data and thread-locals lie.
//!
//! As a shared library (`libc11check_rt.so`) they are a module of their
//! own, apart from the executable. Linked statically (the archive `c11check
//! static-runtime` makes, see `static.ld`) they are inside the executable:
//! the runtime's code sits among the program's, its globals among the
//! program's globals and its thread-locals in the executable's TLS block.
//! The runtime then has to leave itself out of what it does to the
//! program's memory — the globals copied back before each execution, the
//! thread-locals swapped at each fiber switch — and tell its own calls from
//! the program's. The archive is linked from one relocatable object in
//! which `static.ld` gathered each kind into one section, bracketed by the
//! markers below; in the final link each such section stays in one piece.

pub mod fields;
pub mod regions;
pub mod symbols;

use std::sync::atomic::AtomicUsize;
use std::sync::OnceLock;

// The markers: one byte each at the start and end of the runtime's code,
// data, zero-initialised data and thread-locals. `static.ld` puts the
// `begin` sections first and the `end` ones last; in the shared library
// they are wherever the linker puts them, and unused.
std::arch::global_asm!(
    ".pushsection .c11check_text_begin,\"ax\",@progbits",
    ".globl c11check_text_begin",
    ".hidden c11check_text_begin",
    "c11check_text_begin: .byte 0",
    ".popsection",
    ".pushsection .c11check_text_end,\"ax\",@progbits",
    ".globl c11check_text_end",
    ".hidden c11check_text_end",
    "c11check_text_end: .byte 0",
    ".popsection",
    ".pushsection .c11check_data_begin,\"aw\",@progbits",
    ".globl c11check_data_begin",
    ".hidden c11check_data_begin",
    "c11check_data_begin: .byte 0",
    ".popsection",
    ".pushsection .c11check_data_end,\"aw\",@progbits",
    ".globl c11check_data_end",
    ".hidden c11check_data_end",
    "c11check_data_end: .byte 0",
    ".popsection",
    ".pushsection .c11check_bss_begin,\"aw\",@nobits",
    ".globl c11check_bss_begin",
    ".hidden c11check_bss_begin",
    "c11check_bss_begin: .skip 1",
    ".popsection",
    ".pushsection .c11check_bss_end,\"aw\",@nobits",
    ".globl c11check_bss_end",
    ".hidden c11check_bss_end",
    "c11check_bss_end: .skip 1",
    ".popsection",
    ".pushsection .c11check_tls_begin,\"awT\",@progbits",
    ".globl c11check_tls_begin",
    ".hidden c11check_tls_begin",
    ".type c11check_tls_begin, @object",
    ".size c11check_tls_begin, 1",
    "c11check_tls_begin: .byte 0",
    ".popsection",
    ".pushsection .c11check_tls_end,\"awT\",@progbits",
    ".globl c11check_tls_end",
    ".hidden c11check_tls_end",
    ".type c11check_tls_end, @object",
    ".size c11check_tls_end, 1",
    "c11check_tls_end: .byte 0",
    ".popsection",
);

extern "C" {
    static c11check_text_begin: u8;
    static c11check_text_end: u8;
    static c11check_data_begin: u8;
    static c11check_data_end: u8;
    static c11check_bss_begin: u8;
    static c11check_bss_end: u8;
}

/// The runtime's parts inside the executable, when it is linked statically.
#[derive(Clone, Copy, Debug)]
pub struct Linked {
    /// Its code (start, end).
    pub text: (usize, usize),
    /// Its writable data and zero-initialised data (start, end).
    pub data: [(usize, usize); 2],
    /// Its thread-locals in this OS thread's TLS block (start, end).
    pub tls: (usize, usize),
}

static LINKED: OnceLock<Option<Linked>> = OnceLock::new();

/// Sentinels: one of the runtime's statics with a value (in `.data`), one
/// zeroed (in `.bss`) and a thread-local.
static WITH_VALUE: AtomicUsize = AtomicUsize::new(1);
static ZEROED: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static THREAD_LOCAL: std::cell::Cell<usize> = const { std::cell::Cell::new(1) };
}

/// The address of a thread-local marker in this OS thread (initial-exec
/// access: the runtime is loaded with the program, never by `dlopen`).
macro_rules! tls_address {
    ($sym:literal) => {{
        let a: usize;
        // SAFETY: reads the marker's offset from the GOT and adds the
        // thread pointer: the address of this thread's copy.
        unsafe {
            std::arch::asm!(
                concat!("mov {a}, qword ptr [rip + ", $sym, "@gottpoff]"),
                "add {a}, qword ptr fs:0",
                a = out(reg) a,
                options(nostack, readonly, preserves_flags),
            )
        };
        a
    }};
}

/// Where the runtime's own parts are when it is linked into the
/// executable; `None` when it is a shared library of its own.
pub fn linked() -> Option<Linked> {
    *LINKED.get_or_init(|| {
        let exe_text = crate::image::symbols::executable_text();
        let at = |s: &u8| s as *const u8 as usize;
        // SAFETY: only the markers' addresses are taken.
        let (text, data, bss) = unsafe {
            (
                (at(&c11check_text_begin), at(&c11check_text_end) + 1),
                (at(&c11check_data_begin), at(&c11check_data_end) + 1),
                (at(&c11check_bss_begin), at(&c11check_bss_end) + 1),
            )
        };
        if !(exe_text.0..exe_text.1).contains(&text.0) {
            return None;
        }
        let tls = (
            tls_address!("c11check_tls_begin"),
            tls_address!("c11check_tls_end") + 1,
        );
        // Each part bracketed by `static.ld` (a function, a static with a
        // value, one without and a thread-local of the runtime's between
        // the markers), or carrying on would copy the runtime's own state
        // over.
        let inside = |r: (usize, usize), a: usize| r.0 < a && a < r.1;
        let ordered = inside(text, linked as fn() -> Option<Linked> as usize)
            && inside(data, &WITH_VALUE as *const _ as usize)
            && inside(bss, &ZEROED as *const _ as usize)
            && inside(tls, THREAD_LOCAL.with(|t| t as *const _ as usize));
        if !ordered {
            eprintln!(
                "c11check: this program links c11check's runtime statically, but not the archive `c11check static-runtime` makes (the runtime's parts are not in one piece); link that archive or libc11check_rt.so"
            );
            std::process::exit(2);
        }
        if shared_library_loaded() {
            eprintln!(
                "c11check: this program has c11check's runtime twice: linked in, and as libc11check_rt.so (which a shared library built with `c11check cc -shared` needs); build the program with `c11check cc --shared-runtime` (or C11CHECK_STATIC_RUNTIME=0)"
            );
            std::process::exit(2);
        }
        Some(Linked {
            text,
            data: [data, bss],
            tls,
        })
    })
}

/// Removes the ranges `holes` from `ranges` (each a list of (start, end)).
pub fn without(ranges: Vec<(usize, usize)>, holes: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out = ranges;
    for &(hs, he) in holes {
        let mut kept = Vec::with_capacity(out.len() + 1);
        for (s, e) in out {
            if he <= s || hs >= e {
                kept.push((s, e));
                continue;
            }
            if s < hs {
                kept.push((s, hs));
            }
            if he < e {
                kept.push((he, e));
            }
        }
        out = kept;
    }
    out
}

/// Whether `libc11check_rt.so` is loaded in the process.
fn shared_library_loaded() -> bool {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        found: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid entry; `found` is our flag.
        let (info, found) = unsafe { (&*info, &mut *(found as *mut bool)) };
        if !info.dlpi_name.is_null() {
            // SAFETY: a C string of the loader's.
            let name = unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }.to_bytes();
            *found |= name.ends_with(b"/libc11check_rt.so") || name == b"libc11check_rt.so";
        }
        0
    }
    let mut found = false;
    // SAFETY: the callback only reads the loader's entries.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut found as *mut bool as *mut libc::c_void) };
    found
}
