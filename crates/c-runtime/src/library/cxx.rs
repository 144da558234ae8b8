//! libstdc++'s out-of-line functions that write the program's memory
//! behind the instrumentation's back, defined here so that the model sees
//! those writes: `std::thread::join` and `detach` clear the thread's id (a
//! plain read of it afterwards would otherwise get the model's older
//! value, the thread's handle, and `~thread` would call `terminate`).
//!
//! What libstdc++ does out of line with its own (uninstrumented) atomics
//! is not modelled: `std::future`/`std::promise` and `std::counting_semaphore`
//! of libstdc++ 12 are among them.

use crate::library::pthread::join_thread;
use crate::memory;
use c11check_runtime::Site;

/// `std::thread`'s one field, its `pthread_t` (0: no thread).
type ThreadObject = u64;

/// The thread's id as the model has it (the program's last store to it).
fn thread_id(this: *mut ThreadObject, site: Site) -> u64 {
    memory::plain_read(this as usize, 8, site);
    // SAFETY: the program passes its `std::thread`.
    unsafe { *this }
}

/// Clears the thread's id, as a store of the program's.
fn clear_thread_id(this: *mut ThreadObject, site: Site) {
    // SAFETY: the program passes its `std::thread`.
    unsafe { *this = 0 };
    memory::runtime_stored(this as usize, this as usize + 8, site);
}

extern "C" fn thread_join_impl(this: *mut ThreadObject, pc: usize) {
    runtime_entry!();
    let site = Site::Pc(pc);
    if memory::program_call(pc) {
        let id = thread_id(this, site);
        if id != 0 && join_thread(id, site).is_ok() {
            clear_thread_id(this, site);
            return;
        }
    }
    // Not a joinable thread of this execution: libstdc++ throws.
    let f = real!(c"_ZNSt6thread4joinEv"; unsafe extern "C" fn(*mut ThreadObject));
    // SAFETY: passed on.
    unsafe { f(this) }
}
with_pc!(#[unsafe(export_name = "_ZNSt6thread4joinEv")] thread_join(t: *mut ThreadObject), "rsi", thread_join_impl);

extern "C" fn thread_detach_impl(this: *mut ThreadObject, pc: usize) {
    runtime_entry!();
    let site = Site::Pc(pc);
    if memory::program_call(pc) && thread_id(this, site) != 0 {
        clear_thread_id(this, site);
        return;
    }
    let f = real!(c"_ZNSt6thread6detachEv"; unsafe extern "C" fn(*mut ThreadObject));
    // SAFETY: passed on.
    unsafe { f(this) }
}
with_pc!(#[unsafe(export_name = "_ZNSt6thread6detachEv")] thread_detach(t: *mut ThreadObject), "rsi", thread_detach_impl);
