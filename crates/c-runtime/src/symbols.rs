//! Source lines for the program's instruction addresses, from its DWARF
//! debug information (`-g`, which `c11check cc` adds).

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// The executable's load address (0 for a non-PIE executable).
static BIAS: AtomicUsize = AtomicUsize::new(0);

/// The executable's code segment (start, end), noting its load address.
pub fn executable_text() -> (usize, usize) {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        out: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid entry; `out` is our pair.
        let (info, out) = unsafe { (&*info, &mut *(out as *mut (usize, usize))) };
        let base = info.dlpi_addr as usize;
        BIAS.store(base, Relaxed);
        // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        for h in headers {
            if h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0 {
                *out = (
                    base + h.p_vaddr as usize,
                    base + (h.p_vaddr + h.p_memsz) as usize,
                );
            }
        }
        // The first entry is the executable.
        1
    }
    let mut out = (0usize, 0usize);
    // SAFETY: the callback only reads the loader's entries.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut out as *mut _ as *mut libc::c_void) };
    out
}

/// The executable's debug information, read on first use.
static LOADER: Mutex<Option<Option<addr2line::Loader>>> = Mutex::new(None);

/// `file:line` (and the function) of the call whose return address is
/// `pc`; the bare address when the program has no debug information.
pub fn describe(pc: usize) -> String {
    let mut loader = LOADER.lock().unwrap_or_else(|e| e.into_inner());
    let loader = loader.get_or_insert_with(|| {
        let exe = std::fs::read_link("/proc/self/exe").ok()?;
        addr2line::Loader::new(exe).ok()
    });
    let Some(loader) = loader.as_ref() else {
        return format!("{pc:#x}");
    };
    // The call instruction ends just before the return address.
    let probe = (pc - 1).wrapping_sub(BIAS.load(Relaxed)) as u64;
    let function = loader
        .find_symbol(probe)
        .map(|s| format!(" in {}()", s))
        .unwrap_or_default();
    match loader.find_location(probe) {
        Ok(Some(loc)) => {
            let file = loc.file.unwrap_or("?");
            let file = std::env::current_dir()
                .ok()
                .and_then(|d| {
                    std::path::Path::new(file)
                        .strip_prefix(d)
                        .ok()
                        .map(|p| p.display().to_string())
                })
                .unwrap_or_else(|| file.to_string());
            match (loc.line, loc.column) {
                (Some(l), Some(c)) if c > 0 => format!("{file}:{l}:{c}{function}"),
                (Some(l), _) => format!("{file}:{l}{function}"),
                _ => format!("{file}{function}"),
            }
        }
        _ => format!("{pc:#x}{function}"),
    }
}
