//! A clean start for every execution: the program's writable data (its
//! `.data` and `.bss`: every global and static) is copied when `main` is
//! taken over, after the program's constructors ran, and copied back
//! before each execution.
//!
//! The copy covers the writable segments of the executable and of the
//! shared libraries built for ThreadSanitizer (the program's own), without the part
//! made read-only after relocation (`PT_GNU_RELRO`). The runtime's own
//! state lives in this library's segments (or, linked statically, in a
//! range of the executable's that is left out), which are not touched; nor
//! are libc's (its stdio buffers, `errno`, `rand`'s state).

use std::ffi::c_void;

/// One writable range of the program and its contents at start-up.
struct Region {
    start: usize,
    saved: Vec<u8>,
}

/// The program's writable data as it was when `main` was taken over.
pub struct Snapshot {
    regions: Vec<Region>,
}

/// The executable's writable ranges (start, end).
/// The executable's `.got.plt` (start, end): `DT_PLTGOT` and three
/// reserved words plus one per `DT_JMPREL` relocation.
fn plt_got(info: &libc::dl_phdr_info, headers: &[libc::Elf64_Phdr]) -> Option<(usize, usize)> {
    let base = info.dlpi_addr as usize;
    let dynamic = headers.iter().find(|h| h.p_type == libc::PT_DYNAMIC)?;
    // Elf64_Dyn entries: (tag, value) pairs; DT_NULL 0, DT_PLTRELSZ 2,
    // DT_PLTGOT 3 (elf.h).
    let mut p = (base + dynamic.p_vaddr as usize) as *const [u64; 2];
    let (mut got, mut relsz) = (None, 0usize);
    // SAFETY: the dynamic section, terminated by DT_NULL; the loader has
    // relocated the address entries already.
    unsafe {
        while (*p)[0] != 0 {
            match (*p)[0] {
                3 => got = Some((*p)[1] as usize),
                2 => relsz = (*p)[1] as usize,
                _ => {}
            }
            p = p.add(1);
        }
    }
    let got = got?;
    // Each relocation is an Elf64_Rela (24 bytes).
    Some((got, got + (3 + relsz / 24) * 8))
}

/// What [`writable_ranges`] collects: the ranges, the program libraries'
/// load addresses, and whether the executable (the loader's first entry)
/// was seen.
struct Collect {
    out: Vec<(usize, usize)>,
    libraries: Vec<usize>,
    past_executable: bool,
}

/// The writable ranges of the executable and of the program libraries
/// (see [`crate::image::regions::ProgramLibrary`]).
fn writable_ranges() -> Vec<(usize, usize)> {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        collect: *mut c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid entry; `collect` is ours.
        let (info, collect) = unsafe { (&*info, &mut *(collect as *mut Collect)) };
        let base = info.dlpi_addr as usize;
        let executable = !std::mem::replace(&mut collect.past_executable, true);
        if !executable && !collect.libraries.contains(&base) {
            return 0;
        }
        let out = &mut collect.out;
        // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let mut relro = None;
        for h in headers {
            if h.p_type == libc::PT_GNU_RELRO {
                relro = Some((
                    base + h.p_vaddr as usize,
                    base + (h.p_vaddr + h.p_memsz) as usize,
                ));
            }
        }
        for h in headers {
            if h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_W != 0 {
                let (mut s, e) = (
                    base + h.p_vaddr as usize,
                    base + (h.p_vaddr + h.p_memsz) as usize,
                );
                if let Some((rs, re)) = relro {
                    if rs <= s && re > s {
                        s = re.min(e);
                    }
                }
                if s < e {
                    out.push((s, e));
                }
            }
        }
        // Not the lazy-binding table (`.got.plt`): put back as it was at
        // `main`, every call through the PLT would be resolved again in
        // every execution.
        if let Some(got) = plt_got(info, headers) {
            *out = crate::image::without(std::mem::take(out), &[got]);
        }
        0
    }
    let mut collect = Collect {
        out: Vec::new(),
        libraries: crate::image::regions::program_libraries()
            .iter()
            .map(|l| l.base)
            .collect(),
        past_executable: false,
    };
    // SAFETY: the callback only reads the loader's entries.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut collect as *mut _ as *mut c_void) };
    let out = collect.out;
    // Linked statically, the runtime's own globals are among the
    // program's: they are not put back.
    match crate::image::linked() {
        Some(own) => crate::image::without(out, &own.data),
        None => out,
    }
}

impl Snapshot {
    /// Copies the program's writable data now.
    pub fn take() -> Snapshot {
        let regions = writable_ranges()
            .into_iter()
            .map(|(s, e)| Region {
                start: s,
                // SAFETY: the range is a mapped, writable segment.
                saved: unsafe { std::slice::from_raw_parts(s as *const u8, e - s) }.to_vec(),
            })
            .collect();
        Snapshot { regions }
    }

    /// Puts the program's writable data back as it was.
    pub fn restore(&self) {
        for r in &self.regions {
            // SAFETY: the same mapped, writable segment the copy came from.
            unsafe {
                std::ptr::copy_nonoverlapping(r.saved.as_ptr(), r.start as *mut u8, r.saved.len())
            };
        }
    }

    /// Bytes copied back per execution.
    pub fn size(&self) -> usize {
        self.regions.iter().map(|r| r.saved.len()).sum()
    }
}
