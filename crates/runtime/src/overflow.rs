//! A modelled thread that overflows its stack runs into its fiber's guard
//! page. Nothing can go on after that (the thread stopped in the middle of an
//! operation, possibly inside the checker), so, as std does for its own
//! threads, the process says which modelled thread overflowed and how to give
//! threads more stack, and aborts, instead of dying of a bare SIGSEGV.

use crate::fiber::Fiber;
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

/// The SIGSEGV and SIGBUS handlers found when ours was installed.
static PREVIOUS: OnceLock<[libc::sigaction; 2]> = OnceLock::new();

/// Resumes fiber `f`, modelled thread `t` (on a stack of `size` bytes),
/// watching its guard page.
pub(crate) fn resume(
    f: &mut Fiber,
    t: u32,
    size: usize,
    input: crate::Outcome,
) -> CoroutineResult<crate::Request, ()> {
    let running = Running {
        stack: f.trap_handler(),
        thread: t,
        size,
    };
    RUNNING.with(|r| r.set(Some(running)));
    let hooks = crate::FIBER_HOOKS.get();
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
        let mut previous: [libc::sigaction; 2] =
            // SAFETY: sigaction is plain data; all-zero is a valid value.
            unsafe { std::mem::zeroed() };
        for (i, sig) in [libc::SIGSEGV, libc::SIGBUS].into_iter().enumerate() {
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

/// The signal handler: reports an overflow of the running fiber's stack and
/// aborts; any other fault goes to the handler that was there before.
extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    // Within the fiber's stack only the guard page faults.
    let running = RUNNING.try_with(|r| r.get()).ok().flatten();
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
        return;
    };
    let prev = previous[usize::from(sig != libc::SIGSEGV)];
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
