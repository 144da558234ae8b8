//! The lifetimes of a program's pthread objects (mutexes, condition
//! variables, read-write locks, barriers), as glibc's error-checking
//! builds and GenMC judge them: an object used after its `_destroy`,
//! used without ever being initialized (a fresh heap block's bytes, or a
//! barrier `_init` never made), initialized again or destroyed while a
//! thread holds it, is the program's bug, reported with both lines. Kept
//! per execution (entries of an older execution are ignored).

use c11check_runtime::{FailureKind, Site};
use std::cell::RefCell;
use std::collections::HashMap;

/// What kind of object lives at an address.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Mutex,
    Cond,
    RwLock,
    Barrier,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Mutex => "mutex",
            Kind::Cond => "condition variable",
            Kind::RwLock => "read-write lock",
            Kind::Barrier => "barrier",
        }
    }
}

/// An object's state in one execution.
#[derive(Copy, Clone)]
enum Life {
    /// Initialized, and held by a thread (where it took it), if anyone
    /// holds it.
    Live { held: Option<(u32, Site)> },
    /// Destroyed, by a thread, at a place.
    Destroyed(u32, Site),
}

thread_local! {
    /// Per address: the execution's generation, the kind, the state.
    static OBJECTS: RefCell<HashMap<usize, (u32, Kind, Life)>> = RefCell::new(HashMap::new());
}

fn me() -> u32 {
    crate::process::tls::current_thread()
}

/// The state of the object at `addr` in this execution.
fn life(addr: usize) -> Option<(Kind, Life)> {
    let g = c11check_runtime::generation();
    OBJECTS.with(|o| {
        o.borrow()
            .get(&addr)
            .filter(|e| e.0 == g)
            .map(|e| (e.1, e.2))
    })
}

fn set(addr: usize, kind: Kind, l: Life) {
    let g = c11check_runtime::generation();
    OBJECTS.with(|o| o.borrow_mut().insert(addr, (g, kind, l)));
}

/// Fails the execution with a misuse of the object at `addr`.
fn misuse(message: String) -> ! {
    crate::memory::flush_pending();
    c11check_runtime::fail_execution(FailureKind::Misuse, message)
}

/// Thread `t` as reports name it.
fn thread(t: u32) -> String {
    if t == 0 {
        "main".into()
    } else {
        format!("thread {t}")
    }
}

/// `pthread_*_init` of the `kind` at `addr`, at `site`.
pub(crate) fn init(kind: Kind, addr: usize, site: Site) {
    if let Some((
        k,
        Life::Live {
            held: Some((t, at)),
            ..
        },
    )) = life(addr)
    {
        misuse(format!(
            "{} initializes the {} at {addr:#x} (at {site}), which {} holds (it took it at {at}): initializing an object in use is undefined",
            thread(me()),
            k.name(),
            thread(t)
        ));
    }
    set(addr, kind, Life::Live { held: None });
}

/// `pthread_*_destroy` of the `kind` at `addr`, at `site` (an object
/// this execution has not seen must look initialized, see
/// [`may_be_initialized`]).
pub(crate) fn destroy(kind: Kind, addr: usize, site: Site) {
    destroy_if(kind, addr, site, || may_be_initialized(addr));
}

/// [`destroy`], with what tells whether an unseen object was initialized.
pub(crate) fn destroy_if(kind: Kind, addr: usize, site: Site, initialized: impl FnOnce() -> bool) {
    match life(addr) {
        Some((
            k,
            Life::Live {
                held: Some((t, at)),
            },
        )) => misuse(format!(
            "{} destroys the {} at {addr:#x} (at {site}), which {} holds (it took it at {at})",
            thread(me()),
            k.name(),
            thread(t)
        )),
        Some((k, Life::Destroyed(t, at))) => misuse(format!(
            "{} destroys the {} at {addr:#x} (at {site}) again: {} destroyed it at {at}",
            thread(me()),
            k.name(),
            thread(t)
        )),
        None if !initialized() => never_initialized(kind, addr, site, "destroys"),
        _ => {}
    }
    set(addr, kind, Life::Destroyed(me(), site));
}

fn never_initialized(kind: Kind, addr: usize, site: Site, what: &str) -> ! {
    misuse(format!(
        "{} {what} the {} at {addr:#x} (at {site}), which was never initialized (no static initializer, no pthread_{}_init)",
        thread(me()),
        kind.name(),
        match kind {
            Kind::Mutex => "mutex",
            Kind::Cond => "cond",
            Kind::RwLock => "rwlock",
            Kind::Barrier => "barrier",
        }
    ))
}

/// A use (`what`: "locks", "waits on", ...) of the `kind` at `addr`, at
/// `site` (an object this execution has not seen must look initialized,
/// see [`may_be_initialized`]).
pub(crate) fn use_(kind: Kind, addr: usize, site: Site, what: &str) {
    use_if(kind, addr, site, what, || may_be_initialized(addr));
}

/// [`use_`], with what tells whether an unseen object was initialized.
pub(crate) fn use_if(
    kind: Kind,
    addr: usize,
    site: Site,
    what: &str,
    initialized: impl FnOnce() -> bool,
) {
    match life(addr) {
        Some((k, Life::Destroyed(t, at))) => misuse(format!(
            "{} {what} the {} at {addr:#x} (at {site}), which {} destroyed at {at}",
            thread(me()),
            k.name(),
            thread(t)
        )),
        Some(_) => {}
        None if initialized() => set(addr, kind, Life::Live { held: None }),
        None => never_initialized(kind, addr, site, what),
    }
}

/// The lock at `addr` was taken (`Some`, by the running thread at the
/// site) or given back (`None`).
pub(crate) fn held(addr: usize, by: Option<Site>) {
    if let Some((k, Life::Live { .. })) = life(addr) {
        set(
            addr,
            k,
            Life::Live {
                held: by.map(|s| (me(), s)),
            },
        );
    }
}

/// Whether the object at `addr` may have been initialized: not a fresh
/// heap block's bytes ([`crate::memory::heap::POISON`] in its first 8
/// bytes, which nothing has written). (Static initializers are zeros, but
/// memory that something else set up, a shared mapping another process
/// initialized, need not be: only memory certainly never written counts.)
fn may_be_initialized(addr: usize) -> bool {
    // SAFETY: the program passes an object of at least 8 bytes at `addr`.
    let head = unsafe { (addr as *const [u8; 8]).read_unaligned() };
    head != [crate::memory::heap::POISON; 8]
}
