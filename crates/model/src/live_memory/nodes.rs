//! The mo-graph's stores by id, without hashing for the ones an access
//! asks about most: initial stores by location, the newest stores by
//! sequence number in a window that moves with the execution, and the
//! older ones that pruning kept in a hash map. Every access looks up a
//! dozen stores; a hash lookup each was a fifth of a long run's time.

use super::{Node, NodeId, SeqBuild};
use std::collections::{HashMap, VecDeque};

/// How many sequence numbers the window of newest stores spans. Stores
/// older than that move to the hash map (most are pruned before).
const WINDOW: usize = 512;

pub(super) struct NodeStore {
    /// Initial stores, by location (their ids count down from `u64::MAX`).
    init: Vec<Option<Node>>,
    /// `recent[i]`: the store numbered `base + i`, if it is one and is kept.
    recent: VecDeque<Option<Node>>,
    base: u64,
    /// Kept stores numbered below `base`.
    older: HashMap<NodeId, Node, SeqBuild>,
    len: usize,
}

/// Where the store `id` lives.
enum Place {
    Init(usize),
    Recent(usize),
    Older,
}

impl NodeStore {
    pub(super) fn new() -> Self {
        NodeStore {
            init: Vec::new(),
            recent: VecDeque::new(),
            base: 1,
            older: HashMap::default(),
            len: 0,
        }
    }

    #[inline]
    fn place(&self, id: NodeId) -> Place {
        if id > u64::MAX / 2 {
            Place::Init((u64::MAX - id) as usize)
        } else if id >= self.base {
            Place::Recent((id - self.base) as usize)
        } else {
            Place::Older
        }
    }

    /// How many stores the graph holds.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn get(&self, id: NodeId) -> Option<&Node> {
        match self.place(id) {
            Place::Init(i) => self.init.get(i)?.as_ref(),
            Place::Recent(i) => self.recent.get(i)?.as_ref(),
            Place::Older => self.older.get(&id),
        }
    }

    #[inline]
    pub(super) fn get_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        match self.place(id) {
            Place::Init(i) => self.init.get_mut(i)?.as_mut(),
            Place::Recent(i) => self.recent.get_mut(i)?.as_mut(),
            Place::Older => self.older.get_mut(&id),
        }
    }

    #[inline]
    pub(super) fn contains(&self, id: NodeId) -> bool {
        self.get(id).is_some()
    }

    /// Adds store `id`: an initial store, or one numbered above every
    /// store added before.
    pub(super) fn insert(&mut self, id: NodeId, node: Node) {
        let slot = match self.place(id) {
            Place::Init(i) => {
                if self.init.len() <= i {
                    self.init.resize_with(i + 1, || None);
                }
                &mut self.init[i]
            }
            Place::Recent(i) => {
                if self.recent.len() <= i {
                    self.recent.resize_with(i + 1, || None);
                }
                &mut self.recent[i]
            }
            Place::Older => {
                self.len += usize::from(self.older.insert(id, node).is_none());
                return;
            }
        };
        self.len += usize::from(slot.is_none());
        *slot = Some(node);
        // The window moves on: what falls out of it, if kept, moves over.
        while self.recent.len() > WINDOW {
            if let Some(n) = self.recent.pop_front().flatten() {
                self.older.insert(self.base, n);
            }
            self.base += 1;
        }
    }

    /// Keeps the stores for which `keep` holds.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(NodeId, &mut Node) -> bool) {
        let mut len = 0;
        for (i, s) in self.init.iter_mut().enumerate() {
            if s.as_mut().is_some_and(|n| !keep(u64::MAX - i as u64, n)) {
                *s = None;
            }
            len += usize::from(s.is_some());
        }
        for (i, s) in self.recent.iter_mut().enumerate() {
            if s.as_mut().is_some_and(|n| !keep(self.base + i as u64, n)) {
                *s = None;
            }
            len += usize::from(s.is_some());
        }
        self.older.retain(|&id, n| keep(id, n));
        self.len = len + self.older.len();
    }

    /// Every store.
    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut Node> {
        (self.init.iter_mut().flatten())
            .chain(self.recent.iter_mut().flatten())
            .chain(self.older.values_mut())
    }
}

impl std::ops::Index<NodeId> for NodeStore {
    type Output = Node;
    #[inline]
    fn index(&self, id: NodeId) -> &Node {
        self.get(id).expect("a store of the mo-graph")
    }
}
