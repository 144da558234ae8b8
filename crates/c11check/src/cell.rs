//! `UnsafeCell` whose every access is checked for data races.

use c11check_model::{Action, MemOrder};
use c11check_runtime::{access, LocCell};

/// An `UnsafeCell` whose accesses are events (plain reads and writes): two of
/// them in different threads, at least one a write, not ordered by
/// happens-before, are reported as a data race.
///
/// Offers loom's `with`/`with_mut` and std's `get`/`get_mut`. `get` returns
/// the raw pointer and counts as a write (the model cannot see what is done
/// with the pointer later).
#[derive(Debug, Default)]
pub struct UnsafeCell<T: ?Sized> {
    cell: LocCell,
    data: std::cell::UnsafeCell<T>,
}

// SAFETY: as std's UnsafeCell is `Send` when T is; `Sync` is up to the user's
// wrapper type, exactly as with std.
unsafe impl<T: ?Sized + Send> Send for UnsafeCell<T> {}

impl<T> UnsafeCell<T> {
    /// Makes a new one, as `std`'s `new` does.
    #[track_caller]
    pub const fn new(data: T) -> Self {
        Self::made(data, "UnsafeCell", c11check_runtime::Site::caller())
    }
    /// The data of a `what` (`Mutex`) made at `site`, as reports call it.
    pub(crate) const fn made(data: T, what: &'static str, site: c11check_runtime::Site) -> Self {
        UnsafeCell {
            cell: LocCell::described(what, site),
            data: std::cell::UnsafeCell::new(data),
        }
    }
    /// Consumes this and returns the value inside, as `std`'s `into_inner` does.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    #[track_caller]
    fn event(&self, write: bool) {
        let site = c11check_runtime::Site::caller();
        if write {
            access(
                &self.cell,
                0,
                |loc| Action::Store {
                    loc,
                    ord: MemOrder::NonAtomic,
                    val: 0,
                },
                site,
            );
        } else {
            access(
                &self.cell,
                0,
                |loc| Action::Load {
                    loc,
                    ord: MemOrder::NonAtomic,
                },
                site,
            );
        }
    }

    /// Reads through a shared pointer (a plain read for race detection).
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.event(false);
        f(self.data.get())
    }
    /// Writes through a unique pointer (a plain write for race detection).
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.event(true);
        f(self.data.get())
    }
    /// The raw pointer, as std's `get`; counted as a write.
    #[track_caller]
    pub fn get(&self) -> *mut T {
        self.event(true);
        self.data.get()
    }
    /// Exclusive access needs no check.
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }
}
