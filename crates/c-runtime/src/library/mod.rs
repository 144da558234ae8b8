//! The C and C++ library calls a program makes that the model must see:
//! threads, locks, condition variables and the calls that end a thread or
//! the program ([`pthread`], [`sync`]), C11 threads ([`threads`]), clocks
//! and sleeping ([`clock`]), thread-specific keys ([`keys`]), POSIX
//! semaphores ([`semaphores`]), the C++ runtime's ([`cxx`]) and
//! ThreadSanitizer's annotations ([`annotations`]), and the calls that
//! wait for files and sockets ([`blocking`]). Outside a modelled thread each goes to libc's.

#[macro_use]
pub mod pthread;
pub mod annotations;
pub mod blocking;
pub mod clock;
pub mod cxx;
pub mod keys;
pub(crate) mod lifetimes;
pub mod semaphores;
pub mod sync;
pub mod threads;
