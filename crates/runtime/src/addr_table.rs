//! The runtime's entries by address, as a shadow memory: pages of 512
//! slots for eight-byte-aligned addresses (a program's accesses come in
//! runs over neighbouring words, so the page found last usually holds the
//! next one), a hash map for the other addresses.

use c11check_model::live_memory::IntBuild;
use std::cell::Cell;
use std::collections::HashMap;

const SLOTS: usize = 512;

type Page<V> = Box<[Option<Box<V>>]>;

/// Values by address, boxed: a value stays where it is until the table is
/// dropped (nothing is ever removed).
pub struct AddrTable<V> {
    pages: HashMap<usize, Page<V>, IntBuild>,
    odd: HashMap<usize, Box<V>, IntBuild>,
    /// The page number and the slots of the page looked up last.
    last: Cell<(usize, *const Option<Box<V>>)>,
}

impl<V> Default for AddrTable<V> {
    fn default() -> Self {
        AddrTable {
            pages: HashMap::default(),
            odd: HashMap::default(),
            last: Cell::new((usize::MAX, std::ptr::null())),
        }
    }
}

/// An aligned address's page number and slot.
fn place(addr: usize) -> (usize, usize) {
    (addr / (8 * SLOTS), (addr / 8) % SLOTS)
}

impl<V> AddrTable<V> {
    /// The slots of page `page`, if it exists.
    fn page(&self, page: usize) -> Option<&[Option<Box<V>>]> {
        let (n, slots) = self.last.get();
        if n == page {
            // SAFETY: `slots` points into a page of `self.pages`, boxed and
            // never dropped while `self` lives.
            return Some(unsafe { std::slice::from_raw_parts(slots, SLOTS) });
        }
        let slots = self.pages.get(&page)?;
        self.last.set((page, slots.as_ptr()));
        Some(slots)
    }

    /// The value at `addr`, if there is one.
    pub fn get(&self, addr: usize) -> Option<&V> {
        if !addr.is_multiple_of(8) {
            return self.odd.get(&addr).map(|b| &**b);
        }
        let (page, slot) = place(addr);
        self.page(page)?[slot].as_deref()
    }

    /// The value at `addr`, made by `make` if there is none yet.
    pub fn get_or_insert_with(&mut self, addr: usize, make: impl FnOnce() -> V) -> &V {
        if !addr.is_multiple_of(8) {
            return self.odd.entry(addr).or_insert_with(|| Box::new(make()));
        }
        let (page, slot) = place(addr);
        if self.get(addr).is_none() {
            let slots =
                (self.pages.entry(page)).or_insert_with(|| (0..SLOTS).map(|_| None).collect());
            slots[slot] = Some(Box::new(make()));
            self.last.set((page, slots.as_ptr()));
        }
        self.get(addr).expect("just made")
    }

    /// Every address and its value, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &V)> {
        let aligned = self.pages.iter().flat_map(|(&page, slots)| {
            (slots.iter().enumerate())
                .filter_map(move |(i, v)| Some((page * 8 * SLOTS + 8 * i, v.as_deref()?)))
        });
        aligned.chain(self.odd.iter().map(|(&a, v)| (a, &**v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Aligned and unaligned addresses, across pages, against a map.
    #[test]
    fn finds_what_was_put_and_nothing_else() {
        let mut t: AddrTable<usize> = AddrTable::default();
        let mut model = std::collections::BTreeMap::new();
        let mut x: u64 = 7;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let addr = (x % 40_000) as usize * if x.is_multiple_of(3) { 1 } else { 8 };
            if x.is_multiple_of(2) {
                let v = *t.get_or_insert_with(addr, || addr * 3);
                model.entry(addr).or_insert(addr * 3);
                assert_eq!(v, addr * 3);
            } else {
                assert_eq!(t.get(addr).copied(), model.get(&addr).copied(), "{addr}");
            }
        }
        let mut all: Vec<(usize, usize)> = t.iter().map(|(a, &v)| (a, v)).collect();
        all.sort_unstable();
        assert_eq!(all, model.into_iter().collect::<Vec<_>>());
    }
}
