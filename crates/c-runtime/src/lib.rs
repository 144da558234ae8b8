//! The runtime of compiled C and C++ programs: `libc11check_rt.so`.
//!
//! `gcc`/`clang -fsanitize=thread` instrument every atomic operation, fence
//! and plain memory access of a program with calls to `__tsan_*` functions.
//! Linked against this library instead of libtsan, such a program runs
//! under c11check's explorers: `main` is taken over at start-up
//! ([`start`]), each execution re-runs it from a clean copy of the
//! program's globals ([`process::snapshot`]) with fresh per-thread heaps
//! ([`memory::heap`]), threads are fibers of the Rust runtime
//! ([`library::pthread`]) and every instrumented access is an event of the
//! model ([`memory`], [`tsan`]).
//!
//! Its rooms, from the bottom up: [`image`] (the executable: symbols, debug
//! information, where code lies), [`process`] (thread-local storage, the
//! globals' snapshot), [`memory`] (accesses, the heap), [`library`] (the C
//! and C++ calls modelled), and on top [`start`] (taking `main` over) and
//! [`tsan`] (the instrumentation's entry points).
//!
//! The library also defines `pthread_*`, `malloc`/`free`, `__assert_fail`,
//! `abort` and `exit`: a program linked against it calls these instead of
//! libc's (the dynamic linker looks in this library before libc). Calls
//! made outside a modelled thread (by libc itself, before `main`, by the
//! runtime) are passed on to libc.
//!
//! Only x86-64 Linux with glibc is supported: the entry points that need
//! their caller's address are written in assembly.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

/// Defines the C function `$name($args) -> $ret` as a trampoline to the Rust
/// function `$imp($args, pc)`, `pc` being the caller's return address: the
/// entry point is `mov REG, [rsp]; jmp imp`, `REG` the System V argument
/// register after the function's own arguments (all integers or pointers).
///
/// Before that it leaves in `process::CALLER_STATE` a hash of the caller's
/// callee-saved registers and of the caller's frame (up to its frame
/// pointer, else the words just above the return address): what a loop
/// keeps across the call (a counter, a running sum). A loop turn is taken
/// for a wait only if that state is the same as the turn before's (see
/// `memory::loop_turn`). `rax`, `r10` and `r11` are free to use: they are neither
/// an argument nor preserved.
macro_rules! with_pc {
    ($name:ident ( $($a:ident : $t:ty),* ) $(-> $r:ty)?, $reg:literal, $imp:path) => {
        with_pc!(#[unsafe(no_mangle)] $name($($a: $t),*) $(-> $r)?, $reg, $imp);
    };
    (#[$attr:meta] $name:ident ( $($a:ident : $t:ty),* ) $(-> $r:ty)?, $reg:literal, $imp:path) => {
        #[unsafe(naked)]
        #[$attr]
        /// An entry point the program calls (see the module's documentation).
        ///
        /// # Safety
        /// Called by the program, with the arguments of the C function of
        /// this name.
        pub unsafe extern "C" fn $name($($a: $t),*) $(-> $r)? {
            core::arch::naked_asm!(
                caller_state_asm!(),
                concat!("mov ", $reg, ", [rsp]"),
                "jmp {f}",
                state = sym crate::process::CALLER_STATE,
                sp = sym crate::process::CALLER_SP,
                in_fiber = sym crate::process::tls::IN_FIBER,
                runtime_tp = sym crate::process::tls::RUNTIME_TP,
                helpers = sym crate::process::tls::HELPER_REGION,
                f = sym $imp,
            )
        }
    };
}

/// The instructions that go on (at label `4`) only for a call from a
/// modelled thread (the runtime runs one, and the thread pointer is the
/// OS thread's own, `main`'s, or a helper's), else jump to label `5`
/// (operands `in_fiber`, `runtime_tp`, `helpers`). What an entry point
/// leaves in a static for its own code to read must not be overwritten
/// meanwhile by a call of another OS thread (the watchdog reads the clock
/// every 250 ms), nor be one the runtime made between two of a thread's
/// calls (the explorer reads the clock now and then): either made a
/// wait's turn look like progress now and then, and the exploration differ
/// from run to run. Uses `r10`.
macro_rules! on_model_thread_asm {
    () => {
        concat!(
            "cmp byte ptr [rip + {in_fiber}], 0\n",
            "je 5f\n",
            "mov r10, qword ptr fs:0\n",
            "cmp r10, qword ptr [rip + {runtime_tp}]\n",
            "je 4f\n",
            "sub r10, qword ptr [rip + {helpers}]\n",
            "cmp r10, qword ptr [rip + {helpers} + 8]\n",
            "jae 5f\n",
            "4:\n",
        )
    };
}

/// The instructions that leave the caller's kept state in
/// `process::CALLER_STATE` (operand `state`; see `with_pc!`), at an entry point's
/// first instruction, for a modelled thread's call only (see
/// `on_model_thread_asm!`).
macro_rules! caller_state_asm {
    () => {
        concat!(on_model_thread_asm!(), kept_state_asm!(), "5:\n")
    };
}

/// The instructions that hash the caller's kept state (see `with_pc!`)
/// into `process::CALLER_STATE` (operand `state`), and leave the caller's
/// stack pointer in `process::CALLER_SP` (operand `sp`). Uses `rax`,
/// `r10`, `r11`.
macro_rules! kept_state_asm {
    () => {
        concat!(
            "mov rax, rbx\n",
            "rol rax, 11\n",
            "xor rax, rbp\n",
            "rol rax, 11\n",
            "xor rax, r12\n",
            "rol rax, 11\n",
            "xor rax, r13\n",
            "rol rax, 11\n",
            "xor rax, r14\n",
            "rol rax, 11\n",
            "xor rax, r15\n",
            // The caller's frame: up to its frame pointer when `rbp` is
            // one (-O0 keeps every local there, a loop's counter among
            // them), else its lowest 32 bytes.
            "lea r10, [rsp + 8]\n",
            "mov qword ptr [rip + {sp}], r10\n",
            "mov r11, rbp\n",
            "sub r11, r10\n",
            "cmp r11, 1024\n",
            "jbe 2f\n",
            "mov r11, 32\n",
            "2:\n",
            "cmp r11, 8\n",
            "jb 3f\n",
            "rol rax, 11\n",
            "xor rax, [r10]\n",
            "add r10, 8\n",
            "sub r11, 8\n",
            "jmp 2b\n",
            "3:\n",
            "mov qword ptr [rip + {state}], rax\n",
        )
    };
}

/// As `with_pc!`, for a function whose register arguments are all taken
/// (a 16-byte compare-exchange): `pc` goes on the stack, after the
/// function's own `$stack` stack arguments (0 or 1), through a call that
/// keeps the stack aligned.
macro_rules! with_pc_on_stack {
    ($name:ident ( $($a:ident : $t:ty),* ) $(-> $r:ty)?, 0, $imp:path) => {
        with_pc_on_stack!(@def $name($($a: $t),*) $(-> $r)?, $imp,
            "mov rax, [rsp]", "push rax", "call {f}", "add rsp, 8", "ret");
    };
    ($name:ident ( $($a:ident : $t:ty),* ) $(-> $r:ty)?, 1, $imp:path) => {
        with_pc_on_stack!(@def $name($($a: $t),*) $(-> $r)?, $imp,
            "mov rax, [rsp]", "sub rsp, 8", "push rax", "push qword ptr [rsp + 24]",
            "call {f}", "add rsp, 24", "ret");
    };
    (@def $name:ident ( $($a:ident : $t:ty),* ) $(-> $r:ty)?, $imp:path, $($line:literal),*) => {
        #[unsafe(naked)]
        #[unsafe(no_mangle)]
        /// An entry point the program calls (see the module's documentation).
        ///
        /// # Safety
        /// Called by the program, with the arguments of the C function of
        /// this name.
        pub unsafe extern "C" fn $name($($a: $t),*) $(-> $r)? {
            core::arch::naked_asm!(
                caller_state_asm!(),
                $($line),*,
                state = sym crate::process::CALLER_STATE,
                sp = sym crate::process::CALLER_SP,
                in_fiber = sym crate::process::tls::IN_FIBER,
                runtime_tp = sym crate::process::tls::RUNTIME_TP,
                helpers = sym crate::process::tls::HELPER_REGION,
                f = sym $imp,
            )
        }
    };
}

/// The first statement of every function the program (or a library on its
/// behalf) calls: the runtime's code runs with the OS thread's thread
/// pointer, whatever modelled thread called (see `process::tls`).
macro_rules! runtime_entry {
    () => {
        let _runtime_tls = $crate::process::tls::RuntimeTls::enter();
    };
}

/// The C string of an identifier (a libc function's name).
macro_rules! const_cstr {
    ($name:ident) => {
        match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
            Ok(s) => s,
            Err(_) => unreachable!(),
        }
    };
}

pub mod image;
pub mod memory;
pub mod process;
#[macro_use]
pub mod library;
pub mod start;
pub mod tsan;
