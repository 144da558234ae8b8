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

/// The code of the libraries whose own locking is not the program's: libc,
/// the dynamic loader, libgcc's unwinder and this runtime. Their calls to
/// `pthread_mutex_lock` and the like (the unwinder's lock while a thread
/// ends, say) go to libc's functions, not the model. Code of other
/// libraries (libstdc++'s `condition_variable::wait`) is the program's.
pub fn system_text() -> Vec<(usize, usize)> {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        out: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid entry; `out` is our vector.
        let (info, out) = unsafe { (&*info, &mut *(out as *mut Vec<(usize, usize)>)) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: a C string of the loader's.
        let name = unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }.to_string_lossy();
        let file = name.rsplit('/').next().unwrap_or("");
        let system = ["libc.so", "ld-linux", "libgcc_s.so", "libc11check_rt.so"]
            .iter()
            .any(|s| file.starts_with(s));
        if !system {
            return 0;
        }
        let base = info.dlpi_addr as usize;
        // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        for h in headers {
            if h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0 {
                out.push((
                    base + h.p_vaddr as usize,
                    base + (h.p_vaddr + h.p_memsz) as usize,
                ));
            }
        }
        0
    }
    let mut out: Vec<(usize, usize)> = Vec::new();
    // SAFETY: the callback only reads the loader's entries.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut out as *mut _ as *mut libc::c_void) };
    out
}

/// The name of the library holding `pc` and of the symbol before it.
fn library_symbol(pc: usize) -> Option<String> {
    // SAFETY: a zeroed `Dl_info` is a valid place for dladdr's answer.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(pc as *const libc::c_void, &mut info) } == 0
        || info.dli_fname.is_null()
    {
        return None;
    }
    // SAFETY: C strings of the loader's.
    let file = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    let file = file.rsplit('/').next().unwrap_or("").to_string();
    if info.dli_sname.is_null() {
        return Some(format!("{pc:#x} in {file}"));
    }
    // SAFETY: as above.
    let sym = unsafe { std::ffi::CStr::from_ptr(info.dli_sname) }.to_string_lossy();
    Some(format!("{pc:#x} in {} of {file}", function_name(&sym)))
}

/// A source position of a frame: file, line, column, function.
type FrameLine = (String, Option<u32>, Option<u32>, Option<String>);

/// A function's name as its source calls it: C++ names demangled (with
/// their parameter types), C names followed by `()`.
pub fn function_name(symbol: &str) -> String {
    // Only mangled names (a C function `w` would demangle as `wchar_t`).
    let name: std::borrow::Cow<str> = if symbol.starts_with("_Z") {
        addr2line::demangle_auto(symbol.into(), None)
    } else {
        symbol.into()
    };
    if name.contains('(') {
        name.into_owned()
    } else {
        format!("{name}()")
    }
}

/// The executable's debug information, read on first use.
static LOADER: Mutex<Option<Option<addr2line::Loader>>> = Mutex::new(None);

/// `file:line` (and the function) of the call whose return address is
/// `pc`, from the debug information of the executable or of the shared
/// library it lies in; the library's symbol, or the bare address, when
/// there is none.
pub fn describe(pc: usize) -> String {
    describe_as(pc, false)
}

/// Where a fix hint sends the user for the operation whose call returns to
/// `pc`: as [`describe`], but for an operation in a wrapper inlined into
/// its caller (a function named after the operation it makes, such as a
/// library's `weak_atomic::load()` or `fence(order)`, in another file than
/// that caller), the caller's line, naming the wrapper: changing the
/// wrapper would change every use of it. (A wrapper that was not inlined,
/// as at -O0, is seen only from inside.)
pub fn describe_change(pc: usize) -> String {
    describe_as(pc, true)
}

fn describe_as(pc: usize, for_change: bool) -> String {
    if !crate::image::regions::from_executable(pc) {
        if let Some(line) = library_line(pc, for_change) {
            return line;
        }
        if let Some(s) = library_symbol(pc) {
            return s;
        }
    }
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
    source_line(loader, probe, for_change).unwrap_or_else(|symbol| {
        format!(
            "{pc:#x}{}",
            symbol.map(|s| format!(" in {s}")).unwrap_or_default()
        )
    })
}

/// The file (as the loader names it) and load address of the module
/// (executable or shared library) `addr` lies in.
pub fn module_of(addr: usize) -> Option<(String, usize)> {
    // SAFETY: a zeroed `Dl_info` is a valid place for dladdr's answer.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(addr as *const libc::c_void, &mut info) } == 0
        || info.dli_fname.is_null()
    {
        return None;
    }
    // SAFETY: a C string of the loader's.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    Some((path, info.dli_fbase as usize))
}

/// Per shared library (its path), its debug information, read on first
/// use (`None`: it has none).
static LIBRARY_LOADERS: Mutex<Vec<(String, Option<addr2line::Loader>)>> = Mutex::new(Vec::new());

/// `file:line in function of library.so` for `pc` in a shared library
/// with debug information, which is not libc's or the runtime's.
fn library_line(pc: usize, for_change: bool) -> Option<String> {
    let (path, base) = module_of(pc)?;
    let file = path.rsplit('/').next().unwrap_or("").to_string();
    let system = [
        "libc.so",
        "ld-linux",
        "libgcc_s.so",
        "libc11check_rt.so",
        "libstdc++",
    ];
    if system.iter().any(|s| file.starts_with(s)) {
        return None;
    }
    let mut loaders = LIBRARY_LOADERS.lock().unwrap_or_else(|e| e.into_inner());
    let i = match loaders.iter().position(|(p, _)| *p == path) {
        Some(i) => i,
        None => {
            loaders.push((path.clone(), addr2line::Loader::new(&path).ok()));
            loaders.len() - 1
        }
    };
    let loader = loaders[i].1.as_ref()?;
    let probe = (pc - 1).wrapping_sub(base) as u64;
    let line = source_line(loader, probe, for_change).ok()?;
    Some(format!("{line} of {file}"))
}

/// `file:line:column in function` for `probe` (a link-time address) in
/// `loader`'s debug information: of the frames inlined there, the
/// innermost one in the program's own sources (not a system header such as
/// libstdc++'s); `for_change`: its caller's if it is a wrapper (see
/// [`describe_change`]). `Err` with the symbol's name when it has no line.
fn source_line(
    loader: &addr2line::Loader,
    probe: u64,
    for_change: bool,
) -> Result<String, Option<String>> {
    let symbol = loader.find_symbol(probe).map(function_name);
    // The frames from the innermost own one outwards (or the innermost
    // one, when none is the program's own).
    let mut chosen: Vec<FrameLine> = Vec::new();
    if let Ok(mut frames) = loader.find_frames(probe) {
        while let Ok(Some(frame)) = frames.next() {
            let Some(loc) = frame.location else { continue };
            let Some(file) = loc.file else { continue };
            let function = frame
                .function
                .and_then(|f| f.raw_name().ok().map(|n| function_name(&n)));
            let own = !file.starts_with("/usr/");
            let seen_own = chosen.last().is_some_and(|f| !f.0.starts_with("/usr/"));
            if chosen.is_empty() || (own && !seen_own) {
                chosen = vec![(file.to_string(), loc.line, loc.column, function)];
            } else if own && seen_own {
                chosen.push((file.to_string(), loc.line, loc.column, function));
            }
            if chosen.len() == 2 {
                break;
            }
        }
    }
    let wrapper = match &chosen[..] {
        [inner, outer, ..] if for_change && inner.0 != outer.0 => inner
            .3
            .as_deref()
            .filter(|f| names_an_operation(f))
            .map(|f| {
                let at = (inner.0.clone(), inner.1, inner.2, None);
                format!("{f}, {}", frame_text(&at, None))
            }),
        _ => None,
    };
    let Some(first) = chosen.first() else {
        return Err(symbol);
    };
    Ok(match wrapper {
        Some(w) => format!("{} (its call of {w})", frame_text(&chosen[1], None)),
        None => frame_text(first, symbol),
    })
}

/// `file:line:column in function`, the file relative to the current
/// directory when it lies below it; `symbol` stands in for a frame's
/// missing function name.
fn frame_text(frame: &FrameLine, symbol: Option<String>) -> String {
    let (file, line, column, function) = frame;
    let function = (function.clone())
        .or(symbol)
        .map(|f| format!(" in {f}"))
        .unwrap_or_default();
    let file = std::env::current_dir()
        .ok()
        .and_then(|d| {
            std::path::Path::new(file)
                .strip_prefix(d)
                .ok()
                .map(|p| p.display().to_string())
        })
        .unwrap_or_else(|| file.clone());
    match (line, column) {
        (Some(l), Some(c)) if *c > 0 => format!("{file}:{l}:{c}{function}"),
        (Some(l), _) => format!("{file}:{l}{function}"),
        _ => format!("{file}{function}"),
    }
}

/// Whether a function (as [`function_name`] shows it) is named after an
/// atomic operation, as a wrapper of one is: one of the words of its name
/// is `load`, `store`, `read`, `write`, `exchange`, `xchg`, `cmpxchg`,
/// `cas`, `fence` or `barrier` (`weak_atomic::load`, `ck_pr_load_int`,
/// `vatomic32_read_acq`, `compiler_fence`), it starts with
/// `compare_exchange` or `fetch_`, or it is an operator (`operator=`).
fn names_an_operation(function: &str) -> bool {
    // The last component of `ns::type<args>::name(params) const`.
    let head = function.split('(').next().unwrap_or(function);
    let name = head.rsplit("::").next().unwrap_or(head);
    let name = name.split('<').next().unwrap_or(name).trim();
    const WORDS: [&str; 10] = [
        "load", "store", "read", "write", "exchange", "xchg", "cmpxchg", "cas", "fence", "barrier",
    ];
    name.split('_').any(|w| WORDS.contains(&w))
        || name.starts_with("compare_exchange")
        || name.starts_with("fetch_")
        || name.starts_with("operator")
}

/// The executable's file, mapped read-only once for the run (its symbol
/// table and debug information are read from it; mapped rather than read,
/// only the pages looked at take memory).
pub fn executable_image() -> Option<&'static [u8]> {
    static IMAGE: std::sync::OnceLock<Option<&'static [u8]>> = std::sync::OnceLock::new();
    *IMAGE.get_or_init(|| {
        let file = std::fs::File::open("/proc/self/exe").ok()?;
        let len = file.metadata().ok()?.len() as usize;
        if len == 0 {
            return None;
        }
        use std::os::fd::AsRawFd;
        // SAFETY: a private read-only mapping of a file we opened; the
        // executable is not written while it runs.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: the mapping above, kept for the rest of the process.
        Some(unsafe { std::slice::from_raw_parts(p as *const u8, len) })
    })
}

/// The executable's data objects (globals, statics): (start, size, name),
/// at their run-time addresses, sorted; read on first use.
static DATA: std::sync::OnceLock<Vec<(usize, usize, &'static str)>> = std::sync::OnceLock::new();

fn data_objects() -> &'static [(usize, usize, &'static str)] {
    DATA.get_or_init(|| {
        let bias = BIAS.load(Relaxed);
        executable_image()
            .map(|bytes| data_symbols(bytes, bias))
            .unwrap_or_default()
    })
}

/// The data objects (globals, statics) an ELF image's symbol tables list:
/// (start, size, name) at their run-time addresses (`base` added), sorted.
/// Names are leaked once per symbol: reports borrow them for the run.
fn data_symbols(bytes: &[u8], base: usize) -> Vec<(usize, usize, &'static str)> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let Ok(file) = object::File::parse(bytes) else {
        return Vec::new();
    };
    let mut out: Vec<(usize, usize, &'static str)> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.kind() == SymbolKind::Data && s.size() > 0 && s.is_definition())
        .filter_map(|s| {
            let name = s.name().ok()?;
            let name: &'static str = Box::leak(
                function_name(name)
                    .trim_end_matches("()")
                    .to_string()
                    .into_boxed_str(),
            );
            Some((base + s.address() as usize, s.size() as usize, name))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The program's name for the global at `addr`: `x`, or inside one its
/// member (`queue.tail`, `slots[2].seq`, from the debug information; see
/// [`crate::image::fields`]) or else its offset (`queue+8`); `None` outside the
/// executable's globals.
pub fn global_name(addr: usize) -> Option<String> {
    let data = data_objects();
    let Some(i) = data.partition_point(|d| d.0 <= addr).checked_sub(1) else {
        return library_global_name(addr);
    };
    if addr >= data[i].0 + data[i].1 {
        return library_global_name(addr);
    }
    let (start, size, name) = data[i];
    (addr < start + size).then(|| {
        let offset = addr - start;
        if offset == 0 {
            return name.to_string();
        }
        let link = start.wrapping_sub(BIAS.load(Relaxed)) as u64;
        match crate::image::fields::member_path(link, offset as u64) {
            Some(path) => format!("{name}{path}"),
            None => format!("{name}+{offset}"),
        }
    })
}

/// Per shared library (its path), its data objects as [`data_objects`]
/// lists the executable's, at their run-time addresses.
type LibraryData = Vec<(String, Vec<(usize, usize, &'static str)>)>;
static LIBRARY_DATA: Mutex<LibraryData> = Mutex::new(Vec::new());

/// The name of the global at `addr` in a shared library's data (`x`, or
/// `x+8` inside it), from the library's symbol table.
fn library_global_name(addr: usize) -> Option<String> {
    let (path, base) = module_of(addr)?;
    let mut all = LIBRARY_DATA.lock().unwrap_or_else(|e| e.into_inner());
    let i = match all.iter().position(|(p, _)| *p == path) {
        Some(i) => i,
        None => {
            let objects = std::fs::read(&path)
                .map(|bytes| data_symbols(&bytes, base))
                .unwrap_or_default();
            all.push((path, objects));
            all.len() - 1
        }
    };
    let data = &all[i].1;
    let j = data.partition_point(|d| d.0 <= addr).checked_sub(1)?;
    let (start, size, name) = data[j];
    (addr < start + size).then(|| match addr - start {
        0 => name.to_string(),
        offset => format!("{name}+{offset}"),
    })
}

/// The type a block made by the call returning to `pc` (a call of
/// `operator new`) holds, when the code right after the call passes the
/// block to a constructor (`new T(...)` compiles to the allocation, then
/// `T::T(block, ...)`): the type's qualified name and the module that
/// defines the constructor (where its debug information is).
pub fn constructed_type(pc: usize) -> Option<(String, String)> {
    const WINDOW: usize = 96;
    let (_, base) = module_of(pc)?;
    if module_of(pc + WINDOW).is_none_or(|(_, b)| b != base) {
        return None;
    }
    // SAFETY: code of a loaded module, readable (the call returning to
    // `pc` is followed by more of its function's code).
    let code = unsafe { std::slice::from_raw_parts(pc as *const u8, WINDOW) };
    let mut i = 0;
    while i + 5 <= code.len() {
        if code[i] == 0xe8 {
            let rel = i32::from_le_bytes(code[i + 1..i + 5].try_into().ok()?);
            let target = (pc + i + 5).wrapping_add(rel as isize as usize);
            if let Some(found) = constructor_at(resolve_plt(target)) {
                return Some(found);
            }
        }
        i += 1;
    }
    None
}

/// The function a PLT entry at `target` jumps to (`endbr64`, then `jmp
/// *slot(%rip)`, maybe `bnd`-prefixed), or `target` itself.
fn resolve_plt(target: usize) -> usize {
    if module_of(target).is_none() {
        return target;
    }
    // SAFETY: code of a loaded module (just checked).
    let code = unsafe { std::slice::from_raw_parts(target as *const u8, 16) };
    let mut at = 0;
    if code[..4] == [0xf3, 0x0f, 0x1e, 0xfa] {
        at += 4;
    }
    if code[at] == 0xf2 {
        at += 1;
    }
    if code[at] == 0xff && code[at + 1] == 0x25 {
        let disp = i32::from_le_bytes([code[at + 2], code[at + 3], code[at + 4], code[at + 5]]);
        let slot = (target + at + 6).wrapping_add(disp as isize as usize);
        if module_of(slot).is_some() {
            // SAFETY: the GOT slot of a loaded module.
            return unsafe { *(slot as *const usize) };
        }
    }
    target
}

/// The executable's functions: (run-time address, mangled name), sorted;
/// read on first use (the loader's `dladdr` knows only exported ones).
static FUNCTIONS: std::sync::OnceLock<Vec<(usize, &'static str)>> = std::sync::OnceLock::new();

/// The symbol of the function starting exactly at `addr`, and the path of
/// its module.
fn function_starting_at(addr: usize) -> Option<(String, String)> {
    let functions = FUNCTIONS.get_or_init(|| {
        use object::{Object, ObjectSymbol, SymbolKind};
        let bias = BIAS.load(Relaxed);
        let Some(file) = executable_image().and_then(|b| object::File::parse(b).ok()) else {
            return Vec::new();
        };
        let mut out: Vec<(usize, &'static str)> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.is_definition())
            .filter_map(|s| {
                let name = s.name().ok()?;
                Some((bias + s.address() as usize, &*Box::leak(name.into())))
            })
            .collect();
        out.sort_unstable();
        out
    });
    if crate::image::regions::from_executable(addr) {
        let i = functions.binary_search_by_key(&addr, |f| f.0).ok()?;
        let exe = std::fs::read_link("/proc/self/exe").ok()?;
        return Some((
            functions[i].1.to_string(),
            exe.to_string_lossy().into_owned(),
        ));
    }
    // SAFETY: a zeroed `Dl_info` is a valid place for dladdr's answer.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(addr as *const libc::c_void, &mut info) } == 0
        || info.dli_sname.is_null()
        || info.dli_saddr as usize != addr
        || info.dli_fname.is_null()
    {
        return None;
    }
    // SAFETY: C strings of the loader's.
    unsafe {
        Some((
            std::ffi::CStr::from_ptr(info.dli_sname)
                .to_string_lossy()
                .into_owned(),
            std::ffi::CStr::from_ptr(info.dli_fname)
                .to_string_lossy()
                .into_owned(),
        ))
    }
}

/// `(T, module)` when the function at `addr` is a constructor `T::T`.
fn constructor_at(addr: usize) -> Option<(String, String)> {
    let (symbol, module) = function_starting_at(addr)?;
    if !symbol.starts_with("_Z") {
        return None;
    }
    let name = function_name(&symbol);
    let name = name.split('(').next()?;
    let (ty, ctor) = name.rsplit_once("::")?;
    let last = ty.rsplit("::").next()?;
    (last == ctor && !ty.contains('<')).then(|| (ty.to_string(), module))
}
