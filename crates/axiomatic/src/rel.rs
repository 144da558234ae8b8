//! Binary relations over a small set of events, as plain boolean matrices.
//! Written for obviousness, not speed.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rel {
    pub n: usize,
    m: Vec<bool>,
}

impl Rel {
    pub fn empty(n: usize) -> Rel {
        Rel {
            n,
            m: vec![false; n * n],
        }
    }
    pub fn from_fn(n: usize, f: impl Fn(usize, usize) -> bool) -> Rel {
        let mut r = Rel::empty(n);
        for a in 0..n {
            for b in 0..n {
                if f(a, b) {
                    r.set(a, b);
                }
            }
        }
        r
    }
    /// The identity restricted to the events satisfying `p`: herd's `[p]`.
    pub fn id_on(n: usize, p: impl Fn(usize) -> bool) -> Rel {
        Rel::from_fn(n, |a, b| a == b && p(a))
    }
    pub fn get(&self, a: usize, b: usize) -> bool {
        self.m[a * self.n + b]
    }
    pub fn set(&mut self, a: usize, b: usize) {
        self.m[a * self.n + b] = true;
    }
    pub fn union(&self, o: &Rel) -> Rel {
        Rel::from_fn(self.n, |a, b| self.get(a, b) || o.get(a, b))
    }
    pub fn inter(&self, o: &Rel) -> Rel {
        Rel::from_fn(self.n, |a, b| self.get(a, b) && o.get(a, b))
    }
    pub fn minus(&self, o: &Rel) -> Rel {
        Rel::from_fn(self.n, |a, b| self.get(a, b) && !o.get(a, b))
    }
    pub fn inverse(&self) -> Rel {
        Rel::from_fn(self.n, |a, b| self.get(b, a))
    }
    pub fn seq(&self, o: &Rel) -> Rel {
        let n = self.n;
        let mut r = Rel::empty(n);
        for a in 0..n {
            for c in 0..n {
                if self.get(a, c) {
                    for b in 0..n {
                        if o.get(c, b) {
                            r.set(a, b);
                        }
                    }
                }
            }
        }
        r
    }
    /// `r?`
    pub fn opt(&self) -> Rel {
        Rel::from_fn(self.n, |a, b| a == b || self.get(a, b))
    }
    /// `r+` (Warshall: after round `k`, paths through intermediates below
    /// `k + 1` are edges).
    pub fn plus(&self) -> Rel {
        let n = self.n;
        let mut r = self.clone();
        for k in 0..n {
            for a in 0..n {
                if r.get(a, k) {
                    for b in 0..n {
                        if r.get(k, b) {
                            r.set(a, b);
                        }
                    }
                }
            }
        }
        r
    }
    /// `r*`
    pub fn star(&self) -> Rel {
        self.plus().opt()
    }
    pub fn irreflexive(&self) -> bool {
        (0..self.n).all(|a| !self.get(a, a))
    }
    pub fn acyclic(&self) -> bool {
        self.plus().irreflexive()
    }
    pub fn is_empty(&self) -> bool {
        !self.m.iter().any(|&x| x)
    }
}
