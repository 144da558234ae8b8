//! Where code lies: the program's (the executable's own code and that of
//! the shared libraries built for ThreadSanitizer, as `c11check cc
//! -shared` builds them), the runtime's, and that of libc, the loader and
//! the unwinder. A call's return address says whose call it is (the
//! program's calls are modelled, the others passed on).

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The executable's code (start, end): calls from there are the program's.
static TEXT: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
/// The runtime's own code when it is linked into the executable (see
/// [`crate::image`]); empty otherwise.
static RUNTIME_TEXT: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// A shared library that is part of the program: built for
/// ThreadSanitizer (it imports `__tsan_init`), so its accesses are
/// instrumented. Its allocations are the program's (checked, per-thread
/// arenas), its globals are put back before each execution and its
/// thread-locals start afresh in each thread, as the executable's.
#[derive(Clone, Debug)]
pub struct ProgramLibrary {
    /// Its path, as the loader names it.
    pub path: String,
    /// Its load address.
    pub base: usize,
    /// Its code (start, end).
    pub text: Vec<(usize, usize)>,
}

static PROGRAM_LIBRARIES: std::sync::OnceLock<Vec<ProgramLibrary>> = std::sync::OnceLock::new();

/// The shared libraries loaded with the program that are part of it (see
/// [`ProgramLibrary`]).
pub fn program_libraries() -> &'static [ProgramLibrary] {
    PROGRAM_LIBRARIES.get_or_init(find_program_libraries)
}

fn find_program_libraries() -> Vec<ProgramLibrary> {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        out: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid entry; `out` is our vector.
        let (info, out) = unsafe { (&*info, &mut *(out as *mut Vec<ProgramLibrary>)) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: a C string of the loader's.
        let path = unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned();
        if path.is_empty() || path.contains("libc11check_rt.so") || path.contains("linux-vdso") {
            return 0;
        }
        let base = info.dlpi_addr as usize;
        // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let text = headers
            .iter()
            .filter(|h| h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0)
            .map(|h| {
                (
                    base + h.p_vaddr as usize,
                    base + (h.p_vaddr + h.p_memsz) as usize,
                )
            })
            .collect();
        out.push(ProgramLibrary { path, base, text });
        0
    }
    let mut all: Vec<ProgramLibrary> = Vec::new();
    // SAFETY: the callback only reads the loader's entries.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut all as *mut _ as *mut libc::c_void) };
    all.retain(|l| built_for_tsan(&l.path));
    all
}

/// Whether the ELF file at `path` imports ThreadSanitizer's entry points.
fn built_for_tsan(path: &str) -> bool {
    use object::{Object, ObjectSymbol};
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let Ok(file) = object::File::parse(&*bytes) else {
        return false;
    };
    file.dynamic_symbols()
        .any(|s| s.is_undefined() && s.name() == Ok("__tsan_init"))
}

/// Notes where the program's, the runtime's and the system's code lie.
/// Called when `main` is taken over.
pub fn note() {
    let (s, e) = super::symbols::executable_text();
    TEXT[0].store(s, Relaxed);
    TEXT[1].store(e, Relaxed);
    let libraries = program_libraries();
    let _ = LIBRARY_TEXT.set(
        libraries
            .iter()
            .flat_map(|l| l.text.iter().copied())
            .collect(),
    );
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

/// The program libraries' code (see [`ProgramLibrary`]).
static LIBRARY_TEXT: std::sync::OnceLock<Vec<(usize, usize)>> = std::sync::OnceLock::new();

/// Whether the call with return address `pc` comes from the program's own
/// code: the executable's (not the runtime's, linked in) or a program
/// library's.
#[inline]
pub fn from_program(pc: usize) -> bool {
    from_executable(pc)
        || LIBRARY_TEXT
            .get()
            .is_some_and(|r| r.iter().any(|&(s, e)| (s..e).contains(&pc)))
}

/// Whether `pc` lies in the executable's own code (not the runtime's).
#[inline]
pub fn from_executable(pc: usize) -> bool {
    (TEXT[0].load(Relaxed)..TEXT[1].load(Relaxed)).contains(&pc)
        && !(RUNTIME_TEXT[0].load(Relaxed)..RUNTIME_TEXT[1].load(Relaxed)).contains(&pc)
}
