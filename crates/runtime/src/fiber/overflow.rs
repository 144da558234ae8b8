//! A modelled thread that overflows its stack runs into its fiber's guard
//! page. Nothing can go on after that (the thread stopped in the middle of an
//! operation, possibly inside the checker), so, as std does for its own
//! threads, the process says which modelled thread overflowed and how to give
//! threads more stack, and aborts, instead of dying of a bare SIGSEGV.

use super::Fiber;
use corosensei::trap::CoroutineTrapHandler;
use corosensei::CoroutineResult;
use std::cell::Cell;
use std::sync::OnceLock;

/// The fiber running on this OS thread: where its stack is (guard page
/// included), its modelled thread and its stack size.
#[derive(Clone, Copy)]
struct Running {
    stack: CoroutineTrapHandler<()>,
    thread: u32,
    size: usize,
}

thread_local! {
    static RUNNING: Cell<Option<Running>> = const { Cell::new(None) };
    /// Whether this OS thread has an alternate signal stack (the handler
    /// cannot run on the stack that overflowed).
    static ALT_STACK: Cell<bool> = const { Cell::new(false) };
}

/// The signals a fault in a modelled thread raises, whose handlers we take.
const FAULTS: [libc::c_int; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL];

/// The handlers of [`FAULTS`] found when ours was installed.
static PREVIOUS: OnceLock<[libc::sigaction; 4]> = OnceLock::new();

/// Resumes fiber `f`, modelled thread `t` (on a stack of `size` bytes),
/// watching its guard page.
pub(crate) fn resume(
    f: &mut Fiber,
    t: u32,
    size: usize,
    input: crate::Outcome,
) -> CoroutineResult<crate::protocol::Request, ()> {
    let running = Running {
        stack: f.trap_handler(),
        thread: t,
        size,
    };
    RUNNING.with(|r| r.set(Some(running)));
    let hooks = crate::protocol::FIBER_HOOKS.get();
    if let Some((enter, _)) = hooks {
        enter(t);
    }
    let res = f.resume(input);
    if let Some((_, leave)) = hooks {
        leave(t);
    }
    RUNNING.with(|r| r.set(None));
    res
}

/// Installs the handler (once per process) and an alternate signal stack
/// (once per OS thread, unless the thread has one). Called when a fiber is
/// made, not on every resume (that is every visible operation).
pub(crate) fn install() {
    PREVIOUS.get_or_init(|| {
        let mut previous: [libc::sigaction; 4] =
            // SAFETY: sigaction is plain data; all-zero is a valid value.
            unsafe { std::mem::zeroed() };
        for (i, sig) in FAULTS.into_iter().enumerate() {
            // SAFETY: a zeroed sigaction with our handler, SA_SIGINFO (the
            // handler takes three arguments) and SA_ONSTACK; `previous[i]`
            // receives the old action.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, &mut previous[i]);
            }
        }
        previous
    });
    if ALT_STACK.with(|a| a.replace(true)) {
        return;
    }
    // SAFETY: stack_t is plain data; all-zero is a valid value.
    let mut current: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: only queries the current alternate stack (the new one is null).
    unsafe { libc::sigaltstack(std::ptr::null(), &mut current) };
    if current.ss_flags & libc::SS_DISABLE == 0 {
        return;
    }
    const SIZE: usize = 64 * 1024;
    // SAFETY: a fresh anonymous mapping, leaked on purpose: the OS thread
    // may take a signal at any time until it exits.
    unsafe {
        let mem = libc::mmap(
            std::ptr::null_mut(),
            SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if mem != libc::MAP_FAILED {
            let stack = libc::stack_t {
                ss_sp: mem,
                ss_flags: 0,
                ss_size: SIZE,
            };
            libc::sigaltstack(&stack, std::ptr::null_mut());
        }
    }
}

/// The site of the program's access the runtime performs now (0: none),
/// for a fault inside it: see [`set_access_site`].
static ACCESS_SITE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Says that the runtime now touches memory for the program's access made
/// at instruction address `pc` (0: done), so that a fault there is
/// reported at the program's access.
#[inline]
pub fn set_access_site(pc: usize) {
    ACCESS_SITE.store(pc, std::sync::atomic::Ordering::Relaxed);
}

/// A fault of the running modelled thread: the signal, the address it
/// touched, the instruction (set by the handler, read by [`crashed`]).
static CRASH: [std::sync::atomic::AtomicUsize; 4] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; 4];

/// Runs on the crashed fiber's stack once the signal handler returned: the
/// thread ends with the crash as its failure, and its fiber returns.
fn crashed() {
    use std::sync::atomic::Ordering::Relaxed;
    let (sig, addr, pc, t) = (
        CRASH[0].load(Relaxed),
        CRASH[1].load(Relaxed),
        CRASH[2].load(Relaxed),
        CRASH[3].load(Relaxed),
    );
    let what = match sig as libc::c_int {
        libc::SIGBUS => "a bus error (SIGBUS)",
        libc::SIGFPE => "an arithmetic fault (SIGFPE: an integer division by zero or overflow)",
        libc::SIGILL => "an illegal instruction (SIGILL)",
        _ => "a segmentation fault (SIGSEGV)",
    };
    // Where: the program's access the runtime was performing (a compiled
    // program's plain access reads memory in the runtime), or the faulting
    // instruction itself (sites are return addresses, one past a call:
    // hence the + 1).
    let access = ACCESS_SITE.load(Relaxed);
    let at = if access != 0 {
        crate::Site::Pc(access)
    } else {
        crate::Site::Pc(pc + 1)
    };
    let msg = if matches!(sig as libc::c_int, libc::SIGSEGV | libc::SIGBUS) {
        let null = if addr < 4096 { " (a null pointer)" } else { "" };
        format!("{what} accessing address {addr:#x}{null} at {at}")
    } else {
        // The address is the instruction's own.
        format!("{what} at {}", crate::Site::Pc(pc + 1))
    };
    crate::operations::record_crash(t as u32, msg);
}

/// The signal handler: reports an overflow of the running fiber's stack and
/// aborts; a fault elsewhere in a modelled thread ends that thread with the
/// crash as its failure; any other fault goes to the handler that was
/// there before.
extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // A compiled program's thread may have been interrupted with a thread
    // pointer of its own: the runtime's is put in place first, and put
    // back unless the thread goes on in the runtime (`crashed`).
    let hooks = crate::protocol::SIGNAL_CONTEXT_HOOKS.get();
    let interrupted = hooks.map_or(0, |h| (h.0)());
    if !handle_fault(sig, info, ctx) {
        if let Some(h) = hooks {
            (h.1)(interrupted);
        }
    }
}

/// [`on_fault`] in the runtime's context: whether the faulting thread goes
/// on in `crashed`.
fn handle_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) -> bool {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    // Within the fiber's stack only the guard page faults.
    let running = RUNNING.try_with(|r| r.get()).ok().flatten();
    let uc = ctx as *mut libc::ucontext_t;
    // SAFETY: the kernel passes the interrupted context for SA_SIGINFO.
    let (sp, pc) = unsafe {
        let g = &(*uc).uc_mcontext.gregs;
        (
            g[libc::REG_RSP as usize] as usize,
            g[libc::REG_RIP as usize] as usize,
        )
    };
    if let Some(r) =
        running.filter(|r| !r.stack.stack_ptr_in_bounds(addr) && r.stack.stack_ptr_in_bounds(sp))
    {
        use std::sync::atomic::Ordering::Relaxed;
        for (slot, v) in CRASH
            .iter()
            .zip([sig as usize, addr, pc, r.thread as usize])
        {
            slot.store(v, Relaxed);
        }
        // SAFETY: the interrupted context's stack pointer lies in the
        // running fiber (checked); its registers are set as corosensei
        // says, so that returning from this handler runs `crashed` on the
        // fiber's (reset) stack, and the fiber then returns.
        unsafe {
            let regs = r.stack.setup_trap_handler(crashed);
            let g = &mut (*uc).uc_mcontext.gregs;
            g[libc::REG_RIP as usize] = regs.rip as i64;
            g[libc::REG_RSP as usize] = regs.rsp as i64;
            g[libc::REG_RBP as usize] = regs.rbp as i64;
            g[libc::REG_RDI as usize] = regs.rdi as i64;
            g[libc::REG_RSI as usize] = regs.rsi as i64;
        }
        return true;
    }
    if let Some(r) = running.filter(|r| r.stack.stack_ptr_in_bounds(addr)) {
        let mut msg = Message::default();
        msg.push(b"\nc11check: thread ");
        msg.number(r.thread as usize);
        msg.push(b" of the program under test overflowed its stack (");
        msg.number(r.size / 1024);
        msg.push(
            b" KiB). Give modelled threads more with `Builder::stack_size` or \
C11CHECK_STACK_SIZE (in bytes; the default is 1 MiB).\n",
        );
        // SAFETY: write and abort are async-signal-safe.
        unsafe {
            libc::write(2, msg.buf.as_ptr().cast(), msg.len);
            libc::abort();
        }
    }
    // Not a fiber's overflow: hand it to the handler we replaced (std's own
    // stack-overflow report, say), or restore the default action, and the
    // fault happens again when this returns.
    let Some(previous) = PREVIOUS.get() else {
        return false;
    };
    let Some(i) = FAULTS.iter().position(|&f| f == sig) else {
        return false;
    };
    let prev = previous[i];
    // SAFETY: calling or reinstating the previously installed action, as the
    // kernel would have.
    unsafe {
        if prev.sa_sigaction == libc::SIG_DFL || prev.sa_sigaction == libc::SIG_IGN {
            libc::sigaction(sig, &prev, std::ptr::null_mut());
        } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(prev.sa_sigaction);
            f(sig, info, ctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(prev.sa_sigaction);
            f(sig);
        }
    }
    false
}

/// A message built without allocating (the handler runs on a small stack,
/// possibly in the middle of the allocator).
struct Message {
    buf: [u8; 512],
    len: usize,
}

impl Default for Message {
    fn default() -> Self {
        Message {
            buf: [0; 512],
            len: 0,
        }
    }
}

impl Message {
    fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }
    fn number(&mut self, mut n: usize) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }
}
