//! Object creation tracking (opt-in): which modelled thread allocated the
//! memory an atomic or a cell lives in, and when.
//!
//! Creating an object writes it, non-atomically. A thread that reaches a
//! fresh object without being ordered after its creation (a pointer
//! published with a relaxed store, say) races with that write, whatever it
//! then reads: CDSChecker reports such loads as uninitialised, loom and
//! C11Tester as races. `const fn` constructors cannot tell the model when an
//! object is made, but its memory's allocation can: with
//! [`TrackingAllocator`] installed as the global allocator, an allocation
//! made by a modelled thread is recorded with the thread and its position,
//! and an object first used inside such a block gets that creation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A global allocator that records the allocations modelled threads make
/// (forwarding to the system allocator). Install it in the test crate:
///
/// ```ignore
/// #[global_allocator]
/// static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;
/// ```
pub struct TrackingAllocator;

#[derive(Clone, Copy)]
struct Block {
    end: usize,
    generation: u32,
    thread: u32,
    stamp: u64,
}

thread_local! {
    /// Set while the tracker itself runs (its map allocates).
    static BUSY: Cell<bool> = const { Cell::new(false) };
    /// Set while a modelled thread runs: allocations elsewhere (the
    /// explorer's own) are not looked at.
    static IN_FIBER: Cell<bool> = const { Cell::new(false) };
    /// How many blocks `BLOCKS` holds (frees skip the map when none).
    static COUNT: Cell<usize> = const { Cell::new(0) };
    /// Live blocks allocated by modelled threads, by start address (of the
    /// current execution only).
    static BLOCKS: RefCell<BTreeMap<usize, Block>> = const { RefCell::new(BTreeMap::new()) };
    /// The start addresses `BLOCKS` holds: every free (the explorer's too)
    /// asks whether it ends a tracked block, and a hash set answers faster.
    static STARTS: RefCell<HashSet<usize, BuildHasherDefault<AddrHasher>>> =
        RefCell::new(HashSet::default());
    /// How many of `STARTS`' addresses fall in each bucket of [`bucket`]: a
    /// free whose bucket is empty (nearly all of the explorer's own) needs
    /// no lookup.
    static FILTER: [Cell<u32>; FILTER_BUCKETS] = const { [const { Cell::new(0) }; FILTER_BUCKETS] };
}

const FILTER_BUCKETS: usize = 4096;

/// The `FILTER` bucket of an address.
fn bucket(addr: usize) -> usize {
    let h = (addr as u64 >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 52) as usize % FILTER_BUCKETS
}

/// Whether `addr` may start a tracked block (false: it certainly does not).
fn maybe_tracked(addr: usize) -> bool {
    FILTER.try_with(|f| f[bucket(addr)].get()).unwrap_or(1) != 0
}

/// Adds `by` to the `FILTER` count of `addr`'s bucket.
fn filter_add(addr: usize, by: i32) {
    let _ = FILTER.try_with(|f| {
        let c = &f[bucket(addr)];
        c.set(c.get().wrapping_add_signed(by));
    });
}

/// A hasher for addresses (aligned: the low bits carry nothing).
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        let h = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = n as u64;
    }
}

/// Tells the tracker whether a modelled thread is running on this thread.
pub(crate) fn set_in_fiber(on: bool) {
    let _ = IN_FIBER.try_with(|f| f.set(on));
}

/// Whether this OS thread is running user code in a fiber now.
pub(crate) fn in_fiber() -> bool {
    IN_FIBER.try_with(Cell::get).unwrap_or(false)
}

/// Runs `f` unless the tracker is already running on this thread (or the
/// thread is being torn down).
fn guarded<R>(f: impl FnOnce() -> R) -> Option<R> {
    let entered = BUSY
        .try_with(|b| {
            if b.get() {
                false
            } else {
                b.set(true);
                true
            }
        })
        .unwrap_or(false);
    if !entered {
        return None;
    }
    let r = f();
    let _ = BUSY.try_with(|b| b.set(false));
    Some(r)
}

fn note_alloc(addr: usize, size: usize) {
    if !in_fiber() {
        return;
    }
    guarded(|| {
        if let Some((generation, thread, stamp)) = crate::creation_stamp() {
            let _ = BLOCKS.try_with(|b| {
                let mut b = b.borrow_mut();
                // Blocks of earlier executions are of no use any more.
                let _ = STARTS.try_with(|st| {
                    let mut st = st.borrow_mut();
                    if b.first_key_value()
                        .is_some_and(|(_, blk)| blk.generation != generation)
                    {
                        b.retain(|_, blk| blk.generation == generation);
                        for &a in st.iter() {
                            filter_add(a, -1);
                        }
                        st.clear();
                        st.extend(b.keys().copied());
                        for &a in st.iter() {
                            filter_add(a, 1);
                        }
                    }
                    if st.insert(addr) {
                        filter_add(addr, 1);
                    }
                });
                b.insert(
                    addr,
                    Block {
                        end: addr + size.max(1),
                        generation,
                        thread,
                        stamp,
                    },
                );
                let _ = COUNT.try_with(|c| c.set(b.len()));
            });
        }
    });
}

fn note_free(addr: usize) {
    if COUNT.try_with(Cell::get).unwrap_or(0) == 0 || !maybe_tracked(addr) {
        return;
    }
    guarded(|| {
        let tracked = STARTS
            .try_with(|st| st.borrow_mut().remove(&addr))
            .unwrap_or(false);
        if tracked {
            filter_add(addr, -1);
            let _ = BLOCKS.try_with(|b| {
                let mut b = b.borrow_mut();
                b.remove(&addr);
                let _ = COUNT.try_with(|c| c.set(b.len()));
            });
        }
    });
}

/// Runs `f` without recording its allocations: for a facade's own objects
/// that real (unmodelled) synchronisation hands between threads, such as a
/// channel's slots, which behave as if they had existed from the start.
pub fn untracked<R>(f: impl FnOnce() -> R) -> R {
    let was = BUSY.try_with(|b| b.replace(true)).unwrap_or(true);
    let r = f();
    let _ = BUSY.try_with(|b| b.set(was));
    r
}

/// The creation (thread, position) of the object at `addr`, if a modelled
/// thread of execution `generation` allocated the memory it lives in.
pub(crate) fn creation_of(addr: usize, generation: u32) -> Option<(u32, u64)> {
    guarded(|| {
        BLOCKS
            .try_with(|b| {
                let b = b.borrow();
                let (_, blk) = b.range(..=addr).next_back()?;
                (addr < blk.end && blk.generation == generation).then_some((blk.thread, blk.stamp))
            })
            .ok()
            .flatten()
    })
    .flatten()
}

// SAFETY: every method forwards to `System` with the caller's arguments,
// which satisfy `GlobalAlloc`'s contract; the bookkeeping around it never
// touches the returned memory.
unsafe impl GlobalAlloc for TrackingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note_alloc(p as usize, layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note_alloc(p as usize, layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        note_free(p as usize);
        // SAFETY: as above.
        unsafe { System.dealloc(p, layout) }
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            // Moved or grown: objects first used in it from now on were
            // created no earlier than now.
            note_free(p as usize);
            note_alloc(q as usize, new_size);
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every address counted in the filter is reported as maybe tracked,
    /// and once all are taken out again no bucket keeps a count.
    #[test]
    fn filter_counts_what_it_holds() {
        let addrs: Vec<usize> = (0..20_000u64)
            .map(|i| (i.wrapping_mul(0x2545_F491_4F6C_DD1D) as usize) & !0xf)
            .collect();
        assert!(addrs.iter().all(|&a| !maybe_tracked(a)));
        for &a in &addrs {
            filter_add(a, 1);
        }
        assert!(addrs.iter().all(|&a| maybe_tracked(a)));
        for &a in &addrs[..10_000] {
            filter_add(a, -1);
        }
        assert!(addrs[10_000..].iter().all(|&a| maybe_tracked(a)));
        for &a in &addrs[10_000..] {
            filter_add(a, -1);
        }
        assert!(FILTER.with(|f| f.iter().all(|c| c.get() == 0)));
        // Neighbouring allocations spread over the buckets.
        let used: HashSet<usize> = (0..4096).map(|i| bucket(0x7f00_0000 + 16 * i)).collect();
        assert!(used.len() > 2000, "{} buckets", used.len());
    }
}
