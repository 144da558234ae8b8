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

/// A global allocator that records the allocations modelled threads make
/// (forwarding to the system allocator). Install it in the test crate:
///
/// ```ignore
/// #[global_allocator]
/// static ALLOC: c11check::alloc::TrackingAllocator = c11check::alloc::TrackingAllocator;
/// ```
///
/// Every allocation of the process passes through it, the explorer's own
/// included, so the common case (no modelled thread running, or a free of
/// memory no modelled thread allocated) costs one or two thread-local reads.
pub struct TrackingAllocator;

/// A live allocation a modelled thread made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    start: usize,
    end: usize,
    thread: u32,
    stamp: u64,
}

/// The live blocks of one execution, by start address. A tree: a real
/// program holds hundreds of thousands (Mabain's free lists), where a
/// sorted vector's move per insertion and removal dominated the run.
#[derive(Default)]
struct BlockTable {
    generation: u32,
    blocks: std::collections::BTreeMap<usize, Block>,
}

impl BlockTable {
    /// Records `block`, made in execution `generation`; blocks of earlier
    /// executions are of no use any more and are dropped (their starts are
    /// passed to `dropped`). A block already recorded at the same start (its
    /// free went unseen, inside [`untracked`]) is replaced. Returns whether
    /// the start is new to the table.
    fn insert(&mut self, generation: u32, block: Block, mut dropped: impl FnMut(usize)) -> bool {
        if self.generation != generation {
            for start in std::mem::take(&mut self.blocks).into_keys() {
                dropped(start);
            }
            self.generation = generation;
        }
        self.blocks.insert(block.start, block).is_none()
    }

    /// Forgets the block starting at `start`; whether there was one.
    #[cfg(test)]
    fn remove(&mut self, start: usize) -> bool {
        self.take(start).is_some()
    }

    /// Removes and returns the block that starts at `start`.
    fn take(&mut self, start: usize) -> Option<Block> {
        self.blocks.remove(&start)
    }

    /// The block of execution `generation` that holds `addr`.
    fn holding(&self, addr: usize, generation: u32) -> Option<&Block> {
        if self.generation != generation {
            return None;
        }
        let (_, b) = self.blocks.range(..=addr).next_back()?;
        (addr < b.end).then_some(b)
    }
}

thread_local! {
    /// Tracked blocks freed by modelled threads in the current execution,
    /// held back from the system allocator until it ends (as
    /// AddressSanitizer's quarantine): a dangling access then still finds
    /// its object's location cell, and is reported, instead of reading
    /// memory the allocator reused.
    static QUARANTINE: RefCell<Vec<(usize, Layout)>> = const { RefCell::new(Vec::new()) };
    /// Set while the tracker itself runs (its table allocates).
    static BUSY: Cell<bool> = const { Cell::new(false) };
    /// Set while a modelled thread runs: allocations elsewhere (the
    /// explorer's own) are not looked at.
    static IN_FIBER: Cell<bool> = const { Cell::new(false) };
    /// How many blocks `BLOCKS` holds (frees skip the table when none).
    static COUNT: Cell<usize> = const { Cell::new(0) };
    /// Live blocks allocated by modelled threads (of the current execution
    /// only).
    static BLOCKS: RefCell<BlockTable> = const {
        RefCell::new(BlockTable { generation: 0, blocks: std::collections::BTreeMap::new() })
    };
    /// How many of `BLOCKS`' start addresses fall in each bucket of
    /// [`bucket`]: every free (the explorer's too) asks whether it ends a
    /// tracked block, and for nearly all of them the bucket is empty.
    static FILTER: [Cell<u32>; FILTER_BUCKETS] = const { [const { Cell::new(0) }; FILTER_BUCKETS] };
}

const FILTER_BUCKETS: usize = 4096;

/// The `FILTER` bucket of an address.
fn bucket(addr: usize) -> usize {
    let h = (addr as u64 >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 52) as usize % FILTER_BUCKETS
}

/// Whether `addr` may start a tracked block (false: it certainly does not).
#[inline]
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

/// Tells the tracker whether a modelled thread is running on this thread.
pub(crate) fn set_in_fiber(on: bool) {
    let _ = IN_FIBER.try_with(|f| f.set(on));
}

/// Whether this OS thread is running user code in a fiber now.
#[inline]
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

#[inline]
fn note_alloc(addr: usize, size: usize) {
    if in_fiber() {
        track_alloc(addr, size);
    }
}

#[inline(never)]
fn track_alloc(addr: usize, size: usize) {
    guarded(|| {
        let Some((generation, thread, stamp)) = crate::shared::creation_stamp() else {
            return;
        };
        let block = Block {
            start: addr,
            end: addr + size.max(1),
            thread,
            stamp,
        };
        let _ = BLOCKS.try_with(|t| {
            let mut t = t.borrow_mut();
            if t.insert(generation, block, |a| filter_add(a, -1)) {
                filter_add(addr, 1);
            }
            let _ = COUNT.try_with(|c| c.set(t.blocks.len()));
        });
    });
}

/// Notes the free of `addr`; returns whether it was a tracked block a
/// modelled thread frees now (to be quarantined).
#[inline]
fn note_free(addr: usize) -> bool {
    COUNT.try_with(Cell::get).unwrap_or(0) != 0 && maybe_tracked(addr) && track_free(addr)
}

/// Gives the blocks quarantined in this execution back to the system (at
/// the start of the next one, and at the end of a run).
pub(crate) fn release_quarantine() {
    let held = QUARANTINE
        .try_with(|q| std::mem::take(&mut *q.borrow_mut()))
        .unwrap_or_default();
    for (p, layout) in held {
        // SAFETY: each was allocated by `System` with this layout, and
        // its owner freed it (its free was only held back).
        unsafe { System.dealloc(p as *mut u8, layout) };
    }
}

#[inline(never)]
fn track_free(addr: usize) -> bool {
    guarded(|| {
        let freed = BLOCKS
            .try_with(|t| {
                let mut t = t.borrow_mut();
                let b = t.take(addr)?;
                filter_add(addr, -1);
                let _ = COUNT.try_with(|c| c.set(t.blocks.len()));
                Some(b)
            })
            .ok()
            .flatten();
        // The objects bound in the block die with it (only objects of this
        // execution, in blocks of this execution, were bound in one).
        if let Some(b) = freed {
            crate::shared::block_freed(b.start, b.end);
        }
        freed.is_some() && in_fiber()
    })
    .unwrap_or(false)
}

/// Records a block of `len` bytes at `start` that the running modelled
/// thread allocated by other means than the global allocator (a C
/// program's `malloc`): objects first used in it are created now.
pub fn track_block(start: usize, len: usize) {
    note_alloc(start, len);
}

/// The running modelled thread freed the block recorded at `start` (see
/// [`track_block`]): the objects bound in it are gone. Whether it was
/// recorded.
pub fn untrack_block(start: usize) -> bool {
    note_free(start)
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
    if COUNT.try_with(Cell::get).unwrap_or(0) == 0 {
        return None;
    }
    guarded(|| {
        BLOCKS
            .try_with(|t| {
                let t = t.borrow();
                t.holding(addr, generation).map(|b| (b.thread, b.stamp))
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
        if note_free(p as usize) {
            let held = guarded(|| {
                QUARANTINE
                    .try_with(|q| q.borrow_mut().push((p as usize, layout)))
                    .is_ok()
            });
            if held == Some(true) {
                return;
            }
        }
        // SAFETY: as above.
        unsafe { System.dealloc(p, layout) }
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            // Moved or grown: objects first used in it from now on were
            // created no earlier than now.
            let _ = note_free(p as usize);
            note_alloc(q as usize, new_size);
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashSet};

    /// The sorted table answers as a map from start to block would, over
    /// random insertions (some at a start already held), removals, lookups
    /// inside and between blocks, and changes of execution.
    #[test]
    fn block_table_answers_as_a_map_would() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut table = BlockTable::default();
        let mut model: BTreeMap<usize, Block> = BTreeMap::new();
        let mut generation = 0;
        let (mut inserted, mut found) = (0, 0);
        for step in 0..20_000u64 {
            match next(10) {
                0 if next(50) == 0 => generation += 1,
                0..=3 => {
                    let start = 64 * next(200) as usize;
                    let block = Block {
                        start,
                        end: start + 1 + next(100) as usize,
                        thread: next(4) as u32,
                        stamp: step,
                    };
                    let mut dropped = Vec::new();
                    let changed = table.generation != generation;
                    let fresh = table.insert(generation, block, |a| dropped.push(a));
                    if changed {
                        let mut old: Vec<usize> = model.keys().copied().collect();
                        old.sort_unstable();
                        dropped.sort_unstable();
                        assert_eq!(dropped, old);
                        model.clear();
                    } else {
                        assert!(dropped.is_empty());
                    }
                    assert_eq!(fresh, model.insert(start, block).is_none());
                    inserted += usize::from(fresh);
                }
                4..=6 => {
                    let start = 64 * next(200) as usize;
                    let held = table.generation == generation && model.remove(&start).is_some();
                    if table.generation == generation {
                        assert_eq!(table.remove(start), held);
                    }
                }
                _ => {
                    let addr = next(64 * 200 + 100) as usize;
                    let expected = model
                        .range(..=addr)
                        .next_back()
                        .map(|(_, b)| *b)
                        .filter(|b| addr < b.end && table.generation == generation);
                    let got = table.holding(addr, generation).copied();
                    assert_eq!(got, expected);
                    found += usize::from(got.is_some());
                }
            }
            if table.generation == generation {
                assert_eq!(table.blocks.len(), model.len());
            }
            assert!(table.blocks.iter().all(|(&start, b)| start == b.start));
        }
        // The run exercised every answer.
        assert!(inserted > 1_000 && found > 1_000, "{inserted} {found}");
        assert!(generation > 10);
    }

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
