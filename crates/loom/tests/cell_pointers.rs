//! loom's `ConstPtr`/`MutPtr` are accesses that last until the pointer is
//! dropped: a conflicting access of another thread must be ordered after
//! the pointer's end, not only after `get`.

use loom::cell::{ConstPtr, MutPtr, UnsafeCell};
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

/// A pointer of either kind.
enum Ptr {
    Const(ConstPtr<u32>),
    Mut(MutPtr<u32>),
}

impl Ptr {
    /// Reads through a shared pointer, writes through a unique one.
    fn touch(&self) {
        match self {
            // SAFETY: what is under test: the writer may be writing.
            Ptr::Const(p) => {
                let _ = p.with(|p| unsafe { *p });
            }
            // SAFETY: as above.
            Ptr::Mut(p) => p.with(|p| unsafe { *p = 2 }),
        }
    }
}

/// The main thread takes a pointer with `get` (or `get_mut`), then lets a
/// writer in (a release store it acquires) and uses the pointer after that,
/// unless `drop_first`, where the pointer is dropped before the writer is let in.
fn pointer_across_a_handoff(mutable: bool, drop_first: bool) {
    loom::model(move || {
        let cell = Arc::new(UnsafeCell::new(0u32));
        let go = Arc::new(AtomicBool::new(false));
        let writer = {
            let (cell, go) = (cell.clone(), go.clone());
            thread::spawn(move || {
                while !go.load(Ordering::Acquire) {
                    thread::yield_now();
                }
                // SAFETY: the model checks this write for races.
                cell.with_mut(|p| unsafe { *p = 1 });
            })
        };
        let ptr = if mutable {
            Ptr::Mut(cell.get_mut())
        } else {
            Ptr::Const(cell.get())
        };
        if drop_first {
            drop(ptr);
            go.store(true, Ordering::Release);
        } else {
            go.store(true, Ordering::Release);
            ptr.touch();
            drop(ptr);
        }
        writer.join().unwrap();
    });
}

#[test]
#[should_panic(expected = "data race")]
fn a_const_ptr_used_after_a_writer_is_let_in_races() {
    pointer_across_a_handoff(false, false);
}

#[test]
#[should_panic(expected = "data race")]
fn a_mut_ptr_used_after_a_writer_is_let_in_races() {
    pointer_across_a_handoff(true, false);
}

#[test]
fn pointers_dropped_before_the_writer_is_let_in_do_not_race() {
    pointer_across_a_handoff(false, true);
    pointer_across_a_handoff(true, true);
}
