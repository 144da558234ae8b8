//! `UnsafeCell` whose every access is checked for data races.

use c11check_model::{Action, Loc, MemOrder};
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

/// The plain access of `loc` a read or write is.
fn plain(write: bool) -> impl FnOnce(Loc) -> Action {
    move |loc| {
        if write {
            Action::Store {
                loc,
                ord: MemOrder::NonAtomic,
                val: 0,
            }
        } else {
            Action::Load {
                loc,
                ord: MemOrder::NonAtomic,
            }
        }
    }
}

/// An access through a pointer that lasts until this is dropped (loom's
/// `ConstPtr` and `MutPtr`): it began with a read or write of the cell, and
/// ends with another, so that a conflicting access of another thread must
/// be ordered after the end, not only after the start, to be race-free.
#[derive(Debug)]
pub struct AccessSpan {
    generation: u32,
    loc: Loc,
    write: bool,
    site: c11check_runtime::Site,
}

impl Drop for AccessSpan {
    fn drop(&mut self) {
        c11check_runtime::access_bound(self.generation, self.loc, plain(self.write), self.site);
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    #[track_caller]
    fn event(&self, write: bool) {
        access(
            &self.cell,
            0,
            plain(write),
            c11check_runtime::Site::caller(),
        );
    }

    /// A pointer to the data and an access that lasts until the returned
    /// span is dropped (a read, or a write if `write`); no span outside the
    /// model.
    #[track_caller]
    pub fn span(&self, write: bool) -> (*mut T, Option<AccessSpan>) {
        if !c11check_runtime::in_model() {
            return (self.data.get(), None);
        }
        self.event(write);
        let span = c11check_runtime::bound_loc(&self.cell).map(|(generation, loc)| AccessSpan {
            generation,
            loc,
            write,
            site: c11check_runtime::Site::caller(),
        });
        (self.data.get(), span)
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
