//! A watchdog for runs that stop moving: a modelled thread blocked in
//! something c11check does not model (most often a `std::sync::Mutex` held
//! across a c11check operation, which blocks the one OS thread all modelled
//! threads share) would otherwise hang without a word.

use std::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed,
};
use std::sync::Arc;
use std::time::Duration;

/// Bumped at every visible operation and every progress call of the
/// explorer.
static BEAT: AtomicU64 = AtomicU64::new(0);
/// The modelled thread that ran last, and where its last operation was.
static THREAD: AtomicU32 = AtomicU32::new(0);
static SITE: AtomicPtr<std::panic::Location<'static>> = AtomicPtr::new(std::ptr::null_mut());
/// Or, for a compiled program, the address of its last operation.
static PC: AtomicUsize = AtomicUsize::new(0);

/// Whether a modelled thread runs now (else the explorer does).
static IN_FIBER: AtomicBool = AtomicBool::new(false);

/// A modelled thread starts (`true`) or stops (`false`) running.
#[inline]
pub(crate) fn set_in_fiber(on: bool) {
    IN_FIBER.store(on, Relaxed);
}

/// The run makes progress.
#[inline]
pub(crate) fn beat() {
    BEAT.fetch_add(1, Relaxed);
}

/// Thread `t` performed an operation at `site`.
#[inline]
pub(crate) fn at(t: u32, site: crate::Site) {
    beat();
    THREAD.store(t, Relaxed);
    match site {
        crate::Site::Rust(l) => SITE.store(l as *const _ as *mut _, Relaxed),
        crate::Site::Pc(pc) => {
            SITE.store(std::ptr::null_mut(), Relaxed);
            PC.store(pc, Relaxed);
        }
    }
}

/// How long a run may stand still before the watchdog speaks: 10 s, or
/// `C11CHECK_WATCHDOG_SECS`.
fn quiet() -> Duration {
    std::env::var("C11CHECK_WATCHDOG_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .map_or(Duration::from_secs(10), Duration::from_secs)
}

/// Watches a run until the returned guard is dropped: if no operation
/// happens for [`quiet`], says once on stderr which thread is stuck where,
/// and what usually causes it.
pub(crate) fn watch() -> Guard {
    let quiet = quiet();
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let spawned = std::thread::Builder::new()
        .name("c11check-watchdog".into())
        .spawn(move || {
            let mut last = BEAT.load(Relaxed);
            let mut still = Duration::ZERO;
            let tick = Duration::from_millis(250);
            while !d2.load(Relaxed) {
                std::thread::park_timeout(tick);
                let now = BEAT.load(Relaxed);
                if now != last {
                    last = now;
                    still = Duration::ZERO;
                    continue;
                }
                still += tick;
                if still >= quiet && still < quiet + tick {
                    crate::tell_user(&stuck_message(quiet));
                }
            }
        });
    Guard {
        done,
        thread: spawned.ok(),
    }
}

fn stuck_message(quiet: Duration) -> String {
    if !IN_FIBER.load(Relaxed) {
        return format!(
            "c11check: no progress for {} s: c11check itself is computing (the consistency of a large execution, or the next one to explore), not the program. \
The run goes on; a time budget takes effect once this step ends.",
            quiet.as_secs()
        );
    }
    let t = THREAD.load(Relaxed);
    let site = SITE.load(Relaxed);
    // SAFETY: the pointer is null or was made from a `&'static Location`.
    let at = match unsafe { site.as_ref() } {
        Some(s) => format!(", after its operation at {s}"),
        None => match PC.load(Relaxed) {
            0 => String::new(),
            pc => format!(", after its operation at {}", crate::Site::Pc(pc)),
        },
    };
    // A compiled program's operations are known by address, a Rust test's
    // by source location: the advice differs.
    let advice = if site.is_null() && PC.load(Relaxed) != 0 {
        "If it waits on something c11check does not see, the program hangs: all modelled threads share one OS thread, so a wait in code not built with `c11check cc` (a spin loop in an uninstrumented library, a lock or system call c11check does not intercept) that needs another modelled thread to move never ends. Build that code with `c11check cc`, or wait with atomics, pthread or C11 calls. (If the thread is just computing, ignore this.)"
    } else {
        "If it waits on something c11check does not model, the test hangs: all modelled threads share one OS thread, so a `std::sync::Mutex` (or `RwLock`, `Condvar`, channel) held across a c11check operation, or a blocking call that waits for another modelled thread, never returns. Use `c11check::sync` types there. (If the thread is just computing, ignore this.)"
    };
    format!(
        "c11check: no progress for {} s: modelled thread {t} is running{at} and has not reached its next c11check operation. {advice}",
        quiet.as_secs()
    )
}

/// Stops the watchdog when dropped.
pub(crate) struct Guard {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.done.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}
