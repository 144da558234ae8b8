//! Thread-specific data (`pthread_key_create`, `pthread_getspecific`, C11's
//! `tss_*`): a value per modelled thread and key. libc keeps these in the
//! OS thread, which every modelled thread shares, so the runtime keeps
//! them itself, per execution, and runs a thread's destructors when it
//! ends (as glibc does for threads other than `main`).
//!
//! Keys made in a modelled thread are numbered from `FIRST_KEY`; keys
//! made before `main` (by libc or a library's constructor) stay libc's.

use crate::memory::modelled;
use std::cell::RefCell;
use std::ffi::{c_int, c_void};

/// The first key this runtime hands out (libc's are below 1024).
const FIRST_KEY: libc::pthread_key_t = 1 << 20;

/// glibc's bound on destructor rounds at a thread's end.
const DESTRUCTOR_ROUNDS: usize = 4;

type Destructor = Option<unsafe extern "C" fn(*mut c_void)>;

#[derive(Default)]
struct Keys {
    /// Per key (from `FIRST_KEY`): whether it exists, and its destructor.
    keys: Vec<(bool, Destructor)>,
    /// Per thread, per key: its value.
    values: Vec<Vec<usize>>,
}

thread_local! {
    static KEYS: RefCell<Keys> = RefCell::new(Keys::default());
}

/// Forgets the last execution's keys and values.
pub fn reset() {
    KEYS.with(|k| *k.borrow_mut() = Keys::default());
}

fn our_key(key: libc::pthread_key_t) -> Option<usize> {
    key.checked_sub(FIRST_KEY).map(|k| k as usize)
}

/// Runs the calling thread's destructors (for its non-null values).
pub(crate) fn run_destructors() {
    let t = crate::process::tls::current_thread() as usize;
    for _ in 0..DESTRUCTOR_ROUNDS {
        let due: Vec<(unsafe extern "C" fn(*mut c_void), usize)> = KEYS.with(|k| {
            let mut k = k.borrow_mut();
            let k = &mut *k;
            let Some(values) = k.values.get_mut(t) else {
                return Vec::new();
            };
            let mut due = Vec::new();
            for (i, v) in values.iter_mut().enumerate() {
                if let Some((true, Some(d))) = k.keys.get(i) {
                    if *v != 0 {
                        due.push((*d, std::mem::take(v)));
                    }
                }
            }
            due
        });
        if due.is_empty() {
            return;
        }
        for (d, v) in due {
            // SAFETY: the program's destructor, with the value it set, run
            // as the thread.
            crate::process::tls::as_program(t as u32, || unsafe { d(v as *mut c_void) });
        }
    }
}

/// Makes a key.
///
/// # Safety
/// Called by the program, as libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_key_create(
    key: *mut libc::pthread_key_t,
    destructor: Destructor,
) -> c_int {
    runtime_entry!();
    if !modelled() {
        let f = real!(c"pthread_key_create"; unsafe extern "C" fn(*mut libc::pthread_key_t, Destructor) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(key, destructor) };
    }
    let k = KEYS.with(|k| {
        let mut k = k.borrow_mut();
        k.keys.push((true, destructor));
        k.keys.len() - 1
    });
    // SAFETY: the program passes where to put the key.
    unsafe { *key = FIRST_KEY + k as libc::pthread_key_t };
    0
}

/// Deletes a key (its values are dropped, no destructor runs).
#[unsafe(no_mangle)]
pub extern "C" fn pthread_key_delete(key: libc::pthread_key_t) -> c_int {
    runtime_entry!();
    let Some(i) = our_key(key) else {
        let f = real!(c"pthread_key_delete"; unsafe extern "C" fn(libc::pthread_key_t) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(key) };
    };
    KEYS.with(|k| {
        let mut k = k.borrow_mut();
        match k.keys.get_mut(i) {
            Some(e) if e.0 => {
                e.0 = false;
                for v in &mut k.values {
                    if let Some(v) = v.get_mut(i) {
                        *v = 0;
                    }
                }
                0
            }
            _ => libc::EINVAL,
        }
    })
}

/// The calling thread's value for `key`.
#[unsafe(no_mangle)]
pub extern "C" fn pthread_getspecific(key: libc::pthread_key_t) -> *mut c_void {
    runtime_entry!();
    let (Some(i), true) = (our_key(key), modelled()) else {
        let f =
            real!(c"pthread_getspecific"; unsafe extern "C" fn(libc::pthread_key_t) -> *mut c_void);
        // SAFETY: passed on.
        return unsafe { f(key) };
    };
    let t = crate::process::tls::current_thread() as usize;
    KEYS.with(|k| {
        k.borrow()
            .values
            .get(t)
            .and_then(|v| v.get(i))
            .copied()
            .unwrap_or(0) as *mut c_void
    })
}

/// Sets the calling thread's value for `key`.
///
/// # Safety
/// Called by the program, as libc's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_setspecific(
    key: libc::pthread_key_t,
    value: *const c_void,
) -> c_int {
    runtime_entry!();
    let (Some(i), true) = (our_key(key), modelled()) else {
        let f = real!(c"pthread_setspecific"; unsafe extern "C" fn(libc::pthread_key_t, *const c_void) -> c_int);
        // SAFETY: passed on.
        return unsafe { f(key, value) };
    };
    let t = crate::process::tls::current_thread() as usize;
    KEYS.with(|k| {
        let mut k = k.borrow_mut();
        if !k.keys.get(i).is_some_and(|e| e.0) {
            return libc::EINVAL;
        }
        if k.values.len() <= t {
            k.values.resize(t + 1, Vec::new());
        }
        let v = &mut k.values[t];
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        v[i] = value as usize;
        0
    })
}
