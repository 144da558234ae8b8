//! Small dense bit sets and bit matrices for relations over events.

/// A square boolean matrix stored as rows of 64-bit words.
#[derive(Debug, PartialEq, Eq)]
pub struct BitMatrix {
    n: usize,
    words: usize,
    bits: Vec<u64>,
}

impl Clone for BitMatrix {
    fn clone(&self) -> Self {
        BitMatrix {
            n: self.n,
            words: self.words,
            bits: self.bits.clone(),
        }
    }
    /// Reuses `self`'s buffer (caches copied into pooled ones).
    fn clone_from(&mut self, src: &Self) {
        self.n = src.n;
        self.words = src.words;
        self.bits.clone_from(&src.bits);
    }
}

impl BitMatrix {
    pub fn new(n: usize) -> Self {
        let words = n.div_ceil(64).max(1);
        BitMatrix {
            n,
            words,
            bits: vec![0; n * words],
        }
    }
    /// The empty 0 × 0 matrix, with room to grow to `n × n` (`n` ≤ 64)
    /// without reallocating.
    pub fn with_capacity(n: usize) -> Self {
        BitMatrix {
            n: 0,
            words: 1,
            bits: Vec::with_capacity(n * n.div_ceil(64).max(1)),
        }
    }
    /// Makes it the empty `n × n` matrix, keeping its buffer.
    pub fn reset(&mut self, n: usize) {
        self.n = n;
        self.words = n.div_ceil(64).max(1);
        self.bits.clear();
        self.bits.resize(n * self.words, 0);
    }
    /// Makes it `n × n` (`n` at least its size), keeping its relation.
    pub fn grow(&mut self, n: usize) {
        let words = n.div_ceil(64).max(1);
        if words == self.words {
            self.bits.resize(n * words, 0);
        } else {
            let mut bits = vec![0; n * words];
            for i in 0..self.n {
                bits[i * words..i * words + self.words].copy_from_slice(self.row(i));
            }
            self.bits = bits;
            self.words = words;
        }
        self.n = n;
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> bool {
        self.bits[i * self.words + j / 64] >> (j % 64) & 1 == 1
    }
    #[inline]
    pub fn set(&mut self, i: usize, j: usize) {
        self.bits[i * self.words + j / 64] |= 1 << (j % 64);
    }
    #[inline]
    pub fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.words..(i + 1) * self.words]
    }
    /// `row(dst) |= row(src)`; returns whether `dst` changed.
    pub fn or_row(&mut self, dst: usize, src: usize) -> bool {
        if dst == src {
            return false;
        }
        let w = self.words;
        let (d, s) = (dst * w, src * w);
        let mut changed = false;
        for k in 0..w {
            let v = self.bits[d + k] | self.bits[s + k];
            changed |= v != self.bits[d + k];
            self.bits[d + k] = v;
        }
        changed
    }
    /// `row(dst) |= words`.
    pub fn or_into(&mut self, dst: usize, words: &[u64]) {
        let w = self.words;
        for (k, v) in words.iter().enumerate().take(w) {
            self.bits[dst * w + k] |= v;
        }
    }
    /// Sets columns `from..to` of row `i`.
    pub fn set_range(&mut self, i: usize, from: usize, to: usize) {
        set_range_in(
            &mut self.bits[i * self.words..(i + 1) * self.words],
            from,
            to,
        );
    }
    /// Iterates the set columns of row `i`.
    pub fn iter_row(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        iter_bits(self.row(i))
    }
    /// Transitive closure. Past one word per row, an acyclic relation (as
    /// a coherence order is) is closed along a topological order, each row
    /// from its successors' closed rows, nearest first, skipping one that a
    /// nearer successor reaches already: about n² / 64 word operations
    /// where the relation is nearly a total order, for which Warshall's
    /// takes n³ / 128. Cyclic ones are closed by Warshall's.
    pub fn close(&mut self) {
        if self.n <= 64 || !self.close_acyclic() {
            self.close_warshall();
        }
    }

    /// [`Self::close`] for an acyclic relation; false (leaving it as it
    /// was) for a cyclic one.
    fn close_acyclic(&mut self) -> bool {
        let (n, words) = (self.n, self.words);
        // Kahn's algorithm: a topological order, if there is one.
        let mut indegree = vec![0u32; n];
        for i in 0..n {
            for j in self.iter_row(i) {
                indegree[j] += 1;
            }
        }
        let mut ready: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
        let mut topo = Vec::with_capacity(n);
        while let Some(v) = ready.pop() {
            topo.push(v);
            for j in iter_bits(&self.bits[v * words..(v + 1) * words]) {
                indegree[j] -= 1;
                if indegree[j] == 0 {
                    ready.push(j);
                }
            }
        }
        if topo.len() < n {
            return false;
        }
        // Last first: every successor of a row's node is closed already.
        let mut acc = vec![0u64; words];
        for p in (0..n).rev() {
            let v = topo[p];
            acc.fill(0);
            for &j in &topo[p + 1..] {
                if self.get(v, j) && acc[j / 64] >> (j % 64) & 1 == 0 {
                    acc[j / 64] |= 1 << (j % 64);
                    for (a, &b) in acc.iter_mut().zip(self.row(j)) {
                        *a |= b;
                    }
                }
            }
            self.bits[v * words..(v + 1) * words].copy_from_slice(&acc);
        }
        true
    }

    /// Transitive closure (Warshall, one row-or per pair).
    fn close_warshall(&mut self) {
        for k in 0..self.n {
            for i in 0..self.n {
                if i != k && self.get(i, k) {
                    self.or_row(i, k);
                }
            }
        }
    }
    /// Whether the relation has a cycle (reachability from a node back to itself).
    pub fn has_cycle(&self) -> bool {
        // Iterative DFS with colours (0 new, 1 on the stack, 2 done); each
        // stack entry walks its node's row word by word.
        let mut colour: smallvec::SmallVec<[u8; 64]> = smallvec::smallvec![0u8; self.n];
        let mut stack: smallvec::SmallVec<[(usize, usize, u64); 16]> = smallvec::SmallVec::new();
        for s in 0..self.n {
            if colour[s] != 0 {
                continue;
            }
            colour[s] = 1;
            stack.push((s, 0, self.bits[s * self.words]));
            while let Some(top) = stack.last_mut() {
                let (v, word, rest) = *top;
                if rest == 0 {
                    if word + 1 < self.words {
                        *top = (v, word + 1, self.bits[v * self.words + word + 1]);
                    } else {
                        colour[v] = 2;
                        stack.pop();
                    }
                    continue;
                }
                top.2 = rest & (rest - 1);
                let u = word * 64 + rest.trailing_zeros() as usize;
                match colour[u] {
                    0 => {
                        colour[u] = 1;
                        stack.push((u, 0, self.bits[u * self.words]));
                    }
                    1 => return true,
                    _ => {}
                }
            }
        }
        false
    }
}

/// Sets bits `from..to` of a word slice.
pub fn set_range_in(words: &mut [u64], from: usize, to: usize) {
    let mut j = from;
    while j < to {
        let (w, b) = (j / 64, j % 64);
        let span = (64 - b).min(to - j);
        let mask = if span == 64 {
            !0
        } else {
            ((1u64 << span) - 1) << b
        };
        words[w] |= mask;
        j += span;
    }
}

/// Iterates the indices of the set bits of a word slice.
pub fn iter_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(k, &w)| {
        let mut w = w;
        std::iter::from_fn(move || {
            if w == 0 {
                None
            } else {
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(k * 64 + b)
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every range, across and at word boundaries, sets exactly its bits.
    #[test]
    fn set_range_sets_exactly_the_range() {
        for from in 0..150 {
            for to in from..150 {
                let mut m = BitMatrix::new(150);
                m.set_range(1, from, to);
                let set: Vec<usize> = m.iter_row(1).collect();
                assert_eq!(set, (from..to).collect::<Vec<_>>(), "{from}..{to}");
                assert_eq!(m.iter_row(0).count() + m.iter_row(2).count(), 0);
            }
        }
    }

    /// A xorshift generator: random relations, the same on every run.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// `has_cycle` agrees with the transitive closure's diagonal on random
    /// sparse relations of one and several words per row, self-loops included.
    #[test]
    fn has_cycle_matches_closure() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let (mut cyclic, mut acyclic) = (0, 0);
        for round in 0..400 {
            let n = [3, 9, 40, 70, 130][round % 5];
            let mut m = BitMatrix::new(n);
            for _ in 0..n + (next() as usize % n) {
                let (i, j) = (next() as usize % n, next() as usize % n);
                // Mostly forward edges, so that both answers occur.
                if i < j || next().is_multiple_of(8) {
                    m.set(i, j);
                }
            }
            let mut c = m.clone();
            c.close();
            let expected = (0..n).any(|i| c.get(i, i));
            assert_eq!(m.has_cycle(), expected, "n = {n}, round {round}");
            if expected {
                cyclic += 1;
            } else {
                acyclic += 1;
            }
        }
        assert!(
            cyclic > 50 && acyclic > 50,
            "{cyclic} cyclic, {acyclic} acyclic"
        );
    }

    /// The closure along a topological order equals Warshall's on random
    /// relations of several words per row: sparse, dense, nearly total
    /// orders, and cyclic ones (which take Warshall's).
    #[test]
    fn close_equals_warshall() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut acyclic_large = 0;
        for round in 0..300 {
            let n = [65, 70, 128, 129, 200][round % 5];
            let mut m = BitMatrix::new(n);
            let edges = match round % 3 {
                0 => n,
                1 => n * 4,
                _ => n * n / 3,
            };
            for _ in 0..edges {
                let (i, j) = (next() as usize % n, next() as usize % n);
                if i < j || next().is_multiple_of(64) {
                    m.set(i, j);
                }
            }
            let mut fast = m.clone();
            fast.close();
            let mut slow = m.clone();
            slow.close_warshall();
            assert_eq!(fast, slow, "n = {n}, round {round}");
            if !m.has_cycle() {
                acyclic_large += 1;
            }
        }
        assert!(
            acyclic_large > 100,
            "only {acyclic_large} acyclic relations"
        );
    }

    #[test]
    fn closure_and_cycles() {
        let mut m = BitMatrix::new(70);
        m.set(0, 1);
        m.set(1, 65);
        m.close();
        assert!(m.get(0, 65));
        assert!(!m.has_cycle());
        m.set(65, 0);
        assert!(m.has_cycle());
        assert_eq!(m.iter_row(0).collect::<Vec<_>>(), vec![1, 65]);
    }
}
