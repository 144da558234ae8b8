//! The operational memory of C11Tester (c11tester.md §4, §6), for long random
//! executions: no execution graph is kept, each access is answered at once.
//!
//! * Happens-before is tracked with vector clocks per thread, plus a
//!   release-fence and an acquire-fence clock per thread and a *release view*
//!   per store (what an acquire reading it, or reading an RMW that continues
//!   its release sequence, synchronises with; C++20 release sequences).
//! * Modification order is a constraint graph (the *mo-graph*): nodes are
//!   stores, edges are the constraints coherence imposes, and each node has a
//!   clock vector that answers "is `a` mo-before `b`" in one comparison. An
//!   RMW is linked to the store it read so nothing comes between them.
//! * A load picks at random among the stores its thread's view does not hide
//!   (the may-read-from set, Fig. 12) one whose *prior set* (the stores that
//!   must precede it once read, Fig. 13) it does not precede: no rollback.
//! * SeqCst operations are ordered by execution order (C11Tester's fragment:
//!   hb ∪ sc ∪ rf is acyclic), which is stronger than C++20's psc: some
//!   SeqCst behaviours the exhaustive explorer finds are not produced.
//! * Memory stays bounded: [`LiveMemory::prune`] drops the stores no thread
//!   can read any more (each thread's *floor* at a location, the stores it
//!   must not read older than, is after them in mo) and the access records no
//!   view can reach, so a writer doing millions of stores while a reader
//!   reads needs memory for the stores the reader has not passed yet.

mod arm_views;
mod machine;
mod nodes;
mod store_buffers;

use crate::models::LiveMachine;
use crate::{Action, Loc, MemOrder, RmwOp, Value, Width};
use arm_views::ArmViews;
use machine::Machine;
use nodes::NodeStore;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use store_buffers::StoreBuffers;

type NodeId = u64;

/// A few stores (candidates, floors, prior sets: about one per thread),
/// kept off the heap: these lists are made at every access.
type Stores = smallvec::SmallVec<[NodeId; 8]>;

/// A vector clock (one entry per thread, and the initial values' slot):
/// inline for up to three threads, so that a store's views and mo clock
/// cost no allocation in small programs.
type Clock = smallvec::SmallVec<[u64; 4]>;

/// A hasher for integer keys (sequence numbers, addresses): a
/// multiplicative hash is enough, and several times faster than the
/// default one (which dominated the live memory's profile).
#[derive(Default)]
pub struct IntHasher(u64);
impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01B3);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// Builds [`IntHasher`]s, for `HashMap`s with integer keys.
pub type IntBuild = BuildHasherDefault<IntHasher>;
type SeqBuild = IntBuild;

/// Where a store comes in execution order: initial values (numbered down
/// from `u64::MAX`, see [`LiveMemory::add_loc`]) first, then by number.
fn execution_order(id: NodeId) -> u64 {
    if id > u64::MAX / 2 {
        0
    } else {
        id
    }
}

/// The store of `loc`'s initial value (see [`LiveMemory::add_loc`]).
fn initial_store(loc: Loc) -> NodeId {
    u64::MAX - loc.0 as u64
}

/// Clock slot of initial values; thread `t` uses slot `t + 1`.
const INIT_SLOT: usize = 0;

fn get(v: &[u64], i: usize) -> u64 {
    v.get(i).copied().unwrap_or(0)
}

fn join_into(dst: &mut Clock, src: &[u64]) -> bool {
    if dst.len() < src.len() {
        dst.resize(src.len(), 0);
    }
    let mut changed = false;
    for (d, &s) in dst.iter_mut().zip(src) {
        if s > *d {
            *d = s;
            changed = true;
        }
    }
    changed
}

fn leq(a: &[u64], b: &[u64]) -> bool {
    a.iter().enumerate().all(|(i, &x)| x <= get(b, i))
}

/// A store (or RMW, or initial value) in the mo-graph.
struct Node {
    slot: usize,
    seq: u64,
    val: Value,
    sc: bool,
    /// What an acquire that reads this store synchronises with.
    release_view: Option<Clock>,
    /// The same in plain happens-before (see [`ThreadState::hb`]).
    hb_release: Option<Clock>,
    /// The storing thread's clock (SeqCst stores only: for "X hb S").
    hb_view: Option<Clock>,
    /// mo-graph clock vector: `a` is mo-before-or-equal `b` iff
    /// `a.seq <= b.cv[a.slot]`.
    cv: Clock,
    edges: smallvec::SmallVec<[NodeId; 2]>,
    /// The RMW that read this store (it follows immediately in mo).
    rmw: Option<NodeId>,
}

/// One access of a thread to a location.
#[derive(Clone, Copy)]
struct Entry {
    seq: u64,
    /// The store written (stores, RMWs) or read (loads).
    write: NodeId,
    store: bool,
    sc: bool,
}

struct LocState {
    /// The initial value, and while the location has no mo-graph state
    /// (see [`LiveMemory::set_plain_fast`]) the value plain stores left.
    value: Value,
    /// Per clock slot, the accesses in execution order (pruned).
    per_slot: Vec<VecDeque<Entry>>,
    /// The store entries of `per_slot` alone (what may-read-from scans).
    stores: Vec<VecDeque<Entry>>,
    /// The SeqCst store entries alone (what the SeqCst rules look up).
    sc_stores: Vec<VecDeque<Entry>>,
    last_sc_store: Option<NodeId>,
    /// Race detection (FastTrack-like): the last write (thread, seq,
    /// atomic) and each thread's last read since.
    last_write: Option<(u32, u64, bool)>,
    reads: smallvec::SmallVec<[(u32, u64, bool); 2]>,
    /// Aggressive pruning (see [`LiveMemory::set_prune_window`]): stores
    /// every thread reads as if it had seen them, at most one per slot.
    forced: Vec<NodeId>,
    /// The location has its mo-graph state (see [`LiveMemory::model_loc`]):
    /// an atomic access or a race touched it (see
    /// [`LiveMemory::set_plain_fast`]), or plain accesses are not fast.
    modelled: bool,
}

struct ThreadState {
    /// What the thread may not read before: happens-before, strengthened
    /// by the global SeqCst clock (see [`LiveMemory::sc_sync`]).
    clock: Clock,
    frel: Clock,
    facq: Clock,
    /// Happens-before as C++20 defines it (no SeqCst strengthening), with
    /// its fence views: what race detection compares against, so that two
    /// accesses ordered only by SeqCst operations still race.
    hb: Clock,
    hb_frel: Clock,
    hb_facq: Clock,
    /// Sequence numbers of the thread's SeqCst fences.
    sc_fences: Vec<u64>,
    running: bool,
    /// Waiting to join this thread: it will only read after it has seen all
    /// that thread did, so pruning need not keep what it could read now.
    joining: Option<u32>,
    /// Per location, the store this thread's last spurious compare-exchange
    /// failure there read: it may not fail spuriously on it again (see
    /// [`LiveMemory::cas_with`]).
    spurious_fails: Vec<(Loc, NodeId)>,
}

/// Counts for benchmarks and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveStats {
    /// Events performed.
    pub events: u64,
    /// Stores currently in the mo-graph.
    pub live_stores: usize,
    /// Most stores ever in the mo-graph at once.
    pub peak_stores: usize,
    /// Stores dropped by pruning.
    pub pruned: u64,
}

/// What [`LiveMemory::perform`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Performed {
    /// The value read (0 for stores and fences).
    pub val: Value,
    /// The value written, if the action wrote.
    pub written: Option<Value>,
    /// The thread of an earlier access this one races with.
    pub race: Option<u32>,
    /// The store a load, read-modify-write or compare-exchange read.
    pub read_from: Option<ReadFrom>,
}

/// The store an access read: the location's initial value, or an access of
/// a thread, named by its sequence number (what [`LiveMemory::last_seq`]
/// reports right after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadFrom {
    Init,
    Store { thread: u32, seq: u64 },
}

/// The state of one random execution under C11Tester's operational model.
pub struct LiveMemory {
    /// `add_edge`'s work list, kept to save an allocation per edge.
    edge_queue: Vec<NodeId>,
    seq: u64,
    sc_model: bool,
    threads: Vec<ThreadState>,
    locs: Vec<LocState>,
    nodes: NodeStore,
    stats: LiveStats,
    /// The clock SeqCst operations synchronise through (see [`Self::sc_sync`]).
    sc_clock: Clock,
    /// Prune when the mo-graph has this many stores (see [`Self::prune`]).
    prune_at: usize,
    /// Smallest `prune_at` (pruning at least this often keeps memory flat).
    prune_min: usize,
    /// Aggressive pruning: keep each thread's newest `window` stores per
    /// location readable and forget the older ones (see
    /// [`Self::set_prune_window`]).
    window: Option<usize>,
    /// The store the current access read (see [`Performed::read_from`]).
    last_read: Option<NodeId>,
    /// Reads read the newest store (see [`Self::set_read_latest`]).
    read_latest: bool,
    /// Known far points of RMW chains: from a store, a store further along
    /// the chain of RMWs that follows it (chains only grow at their end,
    /// and their stores are in execution order). Cleared when pruning may
    /// cut a chain. Without it a counter's `fetch_add`s walk their whole
    /// chain from the initial store at every access.
    chain_skip: std::cell::RefCell<HashMap<NodeId, NodeId, SeqBuild>>,
    /// The next read reads an older store holding this value, if it may
    /// (see [`Self::force_stale_read`]); then whether it did.
    force_stale: Option<Value>,
    pub forced: Option<bool>,
    /// The hardware machine under a hardware model (see `machine.rs`).
    machine: Option<Box<dyn Machine>>,
    /// Plain accesses to locations no atomic access touched skip the
    /// mo-graph (see [`Self::set_plain_fast`]).
    plain_fast: bool,
}

impl LiveMemory {
    /// An empty memory with one thread (0). With `sc_model` every access is
    /// SeqCst.
    pub fn new(sc_model: bool) -> Self {
        let mut m = LiveMemory {
            edge_queue: Vec::new(),
            seq: 0,
            sc_model,
            threads: Vec::new(),
            locs: Vec::new(),
            nodes: NodeStore::new(),
            stats: LiveStats::default(),
            prune_at: 4096,
            prune_min: 4096,
            sc_clock: Clock::new(),
            window: None,
            last_read: None,
            read_latest: false,
            chain_skip: Default::default(),
            force_stale: None,
            forced: None,
            machine: None,
            plain_fast: false,
        };
        m.add_thread(None);
        m
    }

    /// An empty memory for `model`: every access SeqCst under SC, x86's
    /// store buffers under `tso`, ARMv8's views under `mca` (the machine
    /// its rules name).
    pub fn for_model(model: crate::Model) -> Self {
        let mut m = LiveMemory::new(model.all_seq_cst());
        match model.live_machine() {
            Some(LiveMachine::StoreBuffers) => m.set_store_buffers(),
            Some(LiveMachine::ArmViews) => m.set_arm_views(),
            Some(LiveMachine::Cpp) | None => {}
        }
        m
    }

    /// Runs x86-TSO's machine (see `store_buffers.rs`): reads take what it
    /// says, and seq_cst operations no longer synchronise through one clock
    /// (x86's locked instructions and `mfence` give the order C++20 asks
    /// of them). Call it before adding threads and locations.
    pub fn set_store_buffers(&mut self) {
        self.machine = Some(Box::new(StoreBuffers::new(self.threads.len())));
    }

    /// Runs ARMv8's view machine (see `arm_views.rs`): reads take only
    /// what its views allow. Call it before adding threads and locations.
    pub fn set_arm_views(&mut self) {
        self.machine = Some(Box::new(ArmViews::new(self.threads.len())));
    }

    /// Under a hardware model, notes what thread `t`'s read of `loc` may
    /// take (see [`Machine::aim_read`]).
    fn aim_read(&mut self, t: u32, loc: Loc, sc: bool, latest: bool) {
        if let Some(m) = &mut self.machine {
            let l = &self.locs[loc.0 as usize];
            let mut stores = l.stores.iter().flatten().map(|e| e.write);
            m.aim_read(t, loc, sc, latest, &mut stores);
        }
    }

    /// Under a hardware model, thread `t` read `s`.
    fn machine_read(&mut self, t: u32, loc: Loc, s: NodeId, ord: MemOrder) {
        if let Some(m) = &mut self.machine {
            m.read(t, loc, s, ord);
        }
    }

    /// Under a hardware model, thread `t` stored `id` (`rmw`: an RMW's
    /// write).
    fn machine_write(&mut self, t: u32, loc: Loc, id: NodeId, ord: MemOrder, rmw: bool) {
        if let Some(m) = &mut self.machine {
            m.write(t, loc, id, ord, rmw);
        }
    }

    /// Lets buffered stores become visible, chosen at random among those
    /// the machine says may go next; with `may_stop`, each time stopping
    /// with the same chance as going on with one of them, else until every
    /// buffer is empty.
    fn random_flushes(&mut self, choose: &mut dyn FnMut(usize) -> usize, may_stop: bool) {
        let Some(m) = &mut self.machine else { return };
        loop {
            let options = m.flushable();
            if options.is_empty() {
                return;
            }
            let k = choose(options.len() + may_stop as usize);
            let Some(&(t, i)) = options.get(k) else {
                return;
            };
            m.flush(t, i);
        }
    }

    /// Empties every buffer, the threads' stores interleaved at random: the
    /// end of a run under `tso` or `mca`, before its final values are asked
    /// (a no-op under the other models).
    pub fn drain_all(&mut self, choose: &mut dyn FnMut(usize) -> usize) {
        self.random_flushes(choose, false);
    }

    /// Every read reads the newest store of its location (the last one
    /// performed), so the run is sequentially consistent while
    /// happens-before (and with it race detection) stays the model's: the
    /// SC runs robustness checking watches, on which races are judged as
    /// RSAN's Appendix B does for robust programs.
    pub fn set_read_latest(&mut self, on: bool) {
        self.read_latest = on;
    }

    /// The next read (with [`Self::set_read_latest`]) reads the newest
    /// store older than the newest one that holds `val`, if the model lets
    /// it (`forced` tells whether it did): the weak step a robustness
    /// witness names, taken to see what the program does with it.
    pub fn force_stale_read(&mut self, val: Value) {
        self.force_stale = Some(val);
        self.forced = None;
    }

    /// Plain accesses to a location that no atomic access and no data race
    /// has touched yet are answered from its one value, without the
    /// mo-graph: a plain store replaces the location's initial value, a
    /// plain load reads it. While no access to the location races, every
    /// plain store before a plain access happens before it, so the newest
    /// one is the one store it may read; and it happens before any later
    /// atomic access, which may therefore take it for the location's
    /// initial value. The first atomic access or race (when races are not
    /// reported) hands the location to the mo-graph from then on (so the
    /// racing access itself reads the newest value, as a racy read on the
    /// hardware mostly does). Locations of plain data, most of a real
    /// program's, then cost a race check per access, not a store node. Not
    /// under SC, a hardware machine or SC runs (their plain accesses are
    /// ordered through the machine or the SeqCst clock).
    pub fn set_plain_fast(&mut self, on: bool) {
        self.plain_fast = on && !self.sc_model && self.machine.is_none() && !self.read_latest;
    }

    /// A plain load (`store: None`) or store of thread `t` to a location
    /// still outside the mo-graph (see [`Self::set_plain_fast`]); `None`
    /// (and the location joins the mo-graph) if it races.
    fn plain_access(&mut self, t: u32, loc: Loc, store: Option<Value>) -> Option<Performed> {
        if self.race_check(t, loc, store.is_some(), false).is_some() {
            self.model_loc(loc);
            return None;
        }
        self.tick(t);
        let l = &mut self.locs[loc.0 as usize];
        let read_from = match (store, l.last_write) {
            (Some(_), _) => None,
            (None, None) => Some(ReadFrom::Init),
            (None, Some((thread, seq, _))) => Some(ReadFrom::Store { thread, seq }),
        };
        if let Some(v) = store {
            l.value = v;
        }
        Some(Performed {
            val: if store.is_some() { 0 } else { l.value },
            written: store,
            race: None,
            read_from,
        })
    }

    /// Prunes whenever the mo-graph holds `n` stores more than after the last
    /// pruning (`1` prunes after every store: for tests).
    pub fn set_prune_interval(&mut self, n: usize) {
        self.prune_min = n.max(1);
        self.prune_at = self.nodes.len() + self.prune_min;
    }

    /// Aggressive pruning (c11tester.md §7.1): once a thread has more than
    /// `window` stores to a location, every thread reads that location as
    /// if it had seen the thread's `window`-th newest one, so the older ones
    /// can go even while some thread that never synchronised could still
    /// read them. Every execution produced stays one the model allows (a
    /// load chooses among fewer stores, never outside its may-read-from
    /// set); some are no longer produced. `None` (the default) prunes
    /// conservatively only.
    pub fn set_prune_window(&mut self, window: Option<usize>) {
        self.window = window.map(|w| w.max(1));
    }

    /// Moves each location's forced floors up to the pruning window.
    fn advance_window(&mut self, window: usize) {
        for l in &mut self.locs {
            for (slot, list) in l.stores.iter().enumerate() {
                if slot == INIT_SLOT || list.len() <= window {
                    continue;
                }
                let k = list[list.len() - window].write;
                if !self.nodes.contains(k) {
                    continue;
                }
                let ks = self.nodes[k].slot;
                // The newest forced store of a slot replaces the older one
                // (a slot's stores are mo-ordered).
                l.forced
                    .retain(|&f| self.nodes.get(f).is_some_and(|n| n.slot != ks));
                l.forced.push(k);
            }
        }
    }

    fn maybe_prune(&mut self) {
        if self.nodes.len() >= self.prune_at {
            self.prune();
            // A pruning costs time in the number of locations too (every
            // one is looked at): waiting for as many new stores keeps its
            // cost per store bounded when a program touches many locations
            // (a deque's slots). An interval of 1 is kept exactly (tests).
            let step = if self.prune_min == 1 {
                1
            } else {
                self.prune_min.max(self.nodes.len()).max(self.locs.len())
            };
            self.prune_at = self.nodes.len() + step;
        }
    }

    pub fn stats(&self) -> LiveStats {
        let mut s = self.stats;
        s.live_stores = self.nodes.len();
        s
    }

    /// A new location holding `init`. Its mo-graph state (the initial
    /// store's node, the access lists) is made when it is first needed
    /// (see [`Self::model_loc`]): a real program's plain data never needs it.
    pub fn add_loc(&mut self, init: Value) -> Loc {
        let loc = Loc(self.locs.len() as u32);
        self.locs.push(LocState {
            value: init,
            stores: Vec::new(),
            sc_stores: Vec::new(),
            per_slot: Vec::new(),
            last_sc_store: None,
            last_write: None,
            reads: Default::default(),
            forced: Vec::new(),
            modelled: false,
        });
        loc
    }

    /// Gives `loc` its mo-graph state, if it has none yet: its initial
    /// store (holding the value plain stores left, see
    /// [`Self::set_plain_fast`]), which every later access comes after.
    fn model_loc(&mut self, loc: Loc) {
        let l = &mut self.locs[loc.0 as usize];
        if l.modelled {
            return;
        }
        l.modelled = true;
        let id = initial_store(loc);
        let mut per_slot = vec![VecDeque::new()];
        per_slot[INIT_SLOT].push_back(Entry {
            seq: 0,
            write: id,
            store: true,
            sc: false,
        });
        l.stores = per_slot.clone();
        l.sc_stores = vec![VecDeque::new()];
        l.per_slot = per_slot;
        let val = l.value;
        self.nodes.insert(
            id,
            Node {
                slot: INIT_SLOT,
                // Every store gets an explicit edge from it (so an RMW that
                // reads it stays first); 1 so that this edge is not implied.
                seq: 1,
                val,
                sc: false,
                release_view: None,
                hb_release: None,
                hb_view: None,
                cv: smallvec::smallvec![1],
                edges: Default::default(),
                rmw: None,
            },
        );
    }

    pub fn num_locs(&self) -> usize {
        self.locs.len()
    }

    /// A new thread; it starts after everything `parent` did so far.
    pub fn add_thread(&mut self, parent: Option<u32>) -> u32 {
        let t = self.threads.len() as u32;
        if let Some(m) = &mut self.machine {
            m.add_thread(parent);
        }
        let (clock, hb) = match parent {
            Some(p) => {
                self.tick(p);
                let th = &self.threads[p as usize];
                (th.clock.clone(), th.hb.clone())
            }
            None => (Clock::new(), Clock::new()),
        };
        self.threads.push(ThreadState {
            clock,
            frel: Clock::new(),
            facq: Clock::new(),
            hb,
            hb_frel: Clock::new(),
            hb_facq: Clock::new(),
            sc_fences: Vec::new(),
            running: true,
            joining: None,
            spurious_fails: Vec::new(),
        });
        self.tick(t);
        t
    }

    /// Thread `t` ended.
    pub fn finish(&mut self, t: u32) {
        self.tick(t);
        self.threads[t as usize].running = false;
    }

    /// Thread `t` waits to join `child`: it will read only after it has seen
    /// all `child` did, so pruning need not keep what it could read now.
    pub fn wait_join(&mut self, t: u32, child: u32) {
        self.threads[t as usize].joining = Some(child);
    }

    /// Thread `t` joined `child` (which has finished).
    pub fn join(&mut self, t: u32, child: u32) {
        if let Some(m) = &mut self.machine {
            m.join(t, child);
        }
        self.threads[t as usize].joining = None;
        self.tick(t);
        let c = self.threads[child as usize].clock.clone();
        join_into(&mut self.threads[t as usize].clock, &c);
        let h = self.threads[child as usize].hb.clone();
        join_into(&mut self.threads[t as usize].hb, &h);
    }

    fn tick(&mut self, t: u32) -> u64 {
        self.seq += 1;
        self.stats.events += 1;
        let slot = t as usize + 1;
        let th = &mut self.threads[t as usize];
        for c in [&mut th.clock, &mut th.hb] {
            if c.len() <= slot {
                c.resize(slot + 1, 0);
            }
            c[slot] = self.seq;
        }
        self.seq
    }

    fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// Whether `a` is mo-before `b` or is `b`.
    fn reaches(&self, a: NodeId, b: NodeId) -> bool {
        let (na, nb) = (self.node(a), self.node(b));
        na.seq <= get(&nb.cv, na.slot)
    }

    /// Whether store `x` happens before the point `clock` describes
    /// (initial values happen before everything).
    fn hb_in(x: &Node, clock: &[u64]) -> bool {
        x.slot == INIT_SLOT || x.seq <= get(clock, x.slot)
    }

    fn merge(&mut self, dst: NodeId, src: NodeId) -> bool {
        let Some(s) = self.nodes.get(src) else {
            return false;
        };
        let cv = s.cv.clone();
        let Some(d) = self.nodes.get_mut(dst) else {
            return false;
        };
        if leq(&cv, &d.cv) {
            return false;
        }
        join_into(&mut d.cv, &cv);
        true
    }

    /// Where an edge from `a` really starts: the end of the chain of RMWs
    /// that follow `a` immediately (stopping before `to`).
    fn rmw_end(&self, a: NodeId, to: NodeId) -> NodeId {
        if self.node(a).rmw.is_none() {
            return a;
        }
        let start = a;
        let mut a = a;
        // A known far point, unless `to` may lie between (chains run in
        // execution order).
        if let Some(&far) = self.chain_skip.borrow().get(&a) {
            let (lo, hi, t) = (
                execution_order(a),
                execution_order(far),
                execution_order(to),
            );
            if !(lo < t && t <= hi) && self.nodes.contains(far) {
                a = far;
            }
        }
        while let Some(next) = self.node(a).rmw {
            if next == to || !self.nodes.contains(next) {
                break;
            }
            a = next;
        }
        if a != start {
            self.chain_skip.borrow_mut().insert(start, a);
        }
        a
    }

    /// Fig. 6 ADDEDGE: `from` is mo-before `to`.
    fn add_edge(&mut self, mut from: NodeId, to: NodeId) {
        if from == to || !self.nodes.contains(from) {
            return;
        }
        let must = self.node(from).rmw == Some(to)
            || (self.node(from).slot == self.node(to).slot && self.node(from).slot != INIT_SLOT);
        if !must && self.reaches(from, to) {
            return;
        }
        from = self.rmw_end(from, to);
        let f = self.nodes.get_mut(from).unwrap();
        if !f.edges.contains(&to) {
            f.edges.push(to);
        }
        if self.merge(to, from) {
            let mut queue = std::mem::take(&mut self.edge_queue);
            queue.push(to);
            while let Some(n) = queue.pop() {
                // `merge` changes clocks, never edges: index, do not copy.
                for i in 0..self.node(n).edges.len() {
                    let d = self.node(n).edges[i];
                    if self.nodes.contains(d) && self.merge(d, n) {
                        queue.push(d);
                    }
                }
            }
            self.edge_queue = queue;
        }
    }

    /// Fig. 6 ADDRMWEDGE: RMW `rmw` read `from`.
    fn add_rmw_edge(&mut self, loc: Loc, from: NodeId, rmw: NodeId) {
        let mut moved: Vec<NodeId> = {
            let f = self.nodes.get_mut(from).unwrap();
            f.rmw = Some(rmw);
            std::mem::take(&mut f.edges).into_vec()
        };
        if self.node(from).slot == INIT_SLOT {
            // Stores after the initial value only implicitly come after the
            // RMW that read it.
            moved.extend(
                self.locs[loc.0 as usize]
                    .stores
                    .iter()
                    .flatten()
                    .map(|e| e.write)
                    .filter(|&w| w != from && self.nodes.contains(w)),
            );
        }
        let r = self.nodes.get_mut(rmw).unwrap();
        r.edges.extend(moved.into_iter().filter(|&d| d != rmw));
        self.add_edge(from, rmw);
    }

    /// The stores a load (or RMW) of thread `t` may read (Fig. 12), newest
    /// first per thread; the prior-set check decides among them.
    fn may_read_from(&self, t: u32, loc: Loc, sc: bool, rmw: bool) -> Stores {
        let l = &self.locs[loc.0 as usize];
        let last_sc = if sc { l.last_sc_store } else { None };
        let clock = &self.threads[t as usize].clock;
        // The stores this thread must not read older than (its own last
        // access, and each thread's last access it has seen): a slot's
        // stores are mo-ordered, so the scan stops at the first one before
        // any of them.
        let floors: Stores = l
            .per_slot
            .iter()
            .enumerate()
            .filter_map(|(slot, list)| Self::last_before(list, get(clock, slot), false))
            .map(|e| e.write)
            .chain(l.forced.iter().copied())
            .filter(|w| self.nodes.contains(*w))
            .collect();
        let mut out = Stores::new();
        for list in &l.stores {
            for e in list.iter().rev() {
                let x = self.node(e.write);
                if floors
                    .iter()
                    .any(|&f| f != e.write && x.seq <= get(&self.node(f).cv, x.slot))
                {
                    break;
                }
                let hidden_by_sc = last_sc.is_some_and(|s| {
                    let s = self.node(s);
                    s.seq != x.seq
                        && ((x.sc && x.seq < s.seq)
                            || s.hb_view.as_ref().is_some_and(|v| Self::hb_in(x, v)))
                });
                if !(hidden_by_sc || rmw && x.rmw.is_some()) {
                    out.push(e.write);
                }
                if Self::hb_in(x, &self.threads[t as usize].clock) {
                    break;
                }
            }
        }
        out
    }

    /// The latest entry of `list` with `seq` at most `bound` (`strict`: below).
    #[inline]
    fn last_before(list: &VecDeque<Entry>, bound: u64, strict: bool) -> Option<Entry> {
        let below = |e: &Entry| {
            if strict {
                e.seq < bound
            } else {
                e.seq <= bound
            }
        };
        // Most lookups are by a thread that has seen the whole list (its
        // own accesses, a writer it synchronised with): no search.
        let last = list.back()?;
        if below(last) {
            return Some(*last);
        }
        let (a, b) = list.as_slices();
        let in_slice = |s: &[Entry]| match s.partition_point(below) {
            0 => None,
            n => Some(s[n - 1]),
        };
        match b.first() {
            Some(first) if below(first) => in_slice(b),
            _ => in_slice(a),
        }
    }

    /// Fig. 13: the stores that must precede the store read (`read = Some`)
    /// or written by an access of thread `t` to `loc`.
    fn prior_set(&self, t: u32, loc: Loc, sc: bool, read: Option<NodeId>) -> Stores {
        let l = &self.locs[loc.0 as usize];
        let me = &self.threads[t as usize];
        let own_fence = me.sc_fences.last().copied();
        let mut out = Stores::new();
        if read.is_none() && sc {
            out.extend(l.last_sc_store);
        }
        for (slot, list) in l.per_slot.iter().enumerate() {
            // The slot's stores and SeqCst stores alone: lookups of the
            // latest one below a bound are binary searches.
            let (stores, sc_stores) = (&l.stores[slot], &l.sc_stores[slot]);
            let mut best: Option<Entry> = None;
            let mut consider = |e: Option<Entry>| {
                if let Some(e) = e {
                    if best.is_none_or(|b| e.seq > b.seq) {
                        best = Some(e);
                    }
                }
            };
            if slot != INIT_SLOT {
                let u = &self.threads[slot - 1];
                let ft = u.sc_fences.last().copied();
                // S1: a SeqCst access is after u's stores before u's last SeqCst fence.
                if let (true, Some(f)) = (sc, ft) {
                    consider(Self::last_before(stores, f, true));
                }
                if let Some(fl) = own_fence {
                    // S2: u's SeqCst stores before my last SeqCst fence.
                    consider(Self::last_before(sc_stores, fl, true));
                    // S3: u's stores before u's last fence before mine.
                    let fb = u.sc_fences.iter().rev().find(|&&f| f < fl).copied();
                    if let Some(fb) = fb {
                        consider(Self::last_before(stores, fb, true));
                    }
                }
            }
            // S4: u's last access that happens before this one.
            let bound = get(&me.clock, slot);
            consider(Self::last_before(list, bound, false));
            if let Some(e) = best {
                if Some(e.write) != read && self.nodes.contains(e.write) {
                    out.push(e.write);
                }
            }
        }
        out
    }

    /// Picks the store a read of thread `t` reads among `cands` (removing
    /// those that fail), adds the mo edges reading it implies, and applies
    /// the read's synchronisation. Returns the store.
    /// For an RMW (`writes`), the stores its write must follow may not
    /// follow the store read either (nothing comes between the two).
    #[allow(clippy::too_many_arguments)]
    fn read_from(
        &mut self,
        t: u32,
        loc: Loc,
        ord: MemOrder,
        sc: bool,
        writes: &dyn Fn(NodeId, Value) -> bool,
        mut cands: Stores,
        choose: &mut dyn FnMut(usize) -> usize,
    ) -> NodeId {
        loop {
            assert!(
                !cands.is_empty(),
                "c11check: no store can be read (live memory invariant broken)"
            );
            let newest = (0..cands.len())
                .max_by_key(|&i| execution_order(cands[i]))
                .unwrap_or(0);
            let stale = self.force_stale.take().and_then(|v| {
                let newest = cands[newest];
                let i = (0..cands.len())
                    .filter(|&i| cands[i] != newest && self.node(cands[i]).val == v)
                    .max_by_key(|&i| execution_order(cands[i]));
                self.forced = Some(i.is_some());
                i
            });
            let forcing = stale.is_some();
            let target = (self.machine.as_mut()).and_then(|m| m.restrict(&mut cands));
            let aimed = target.and_then(|x| cands.iter().position(|&c| c == x));
            debug_assert!(
                target.is_none() || aimed.is_some(),
                "x86-TSO's store is not one the memory lets the read take"
            );
            let i = if let Some(i) = aimed {
                i
            } else if let Some(i) = stale {
                i
            } else if self.read_latest {
                newest
            } else {
                choose(cands.len())
            };
            let s = cands.swap_remove(i);
            let prior = self.prior_set(t, loc, sc, Some(s));
            if prior.iter().any(|&a| self.reaches(s, self.rmw_end(a, s))) {
                debug_assert!(aimed.is_none(), "x86-TSO's store closes a cycle");
                continue;
            }
            if writes(s, self.node(s).val)
                && self.prior_set(t, loc, sc, None).iter().any(|&a| {
                    let end = self.rmw_end(a, s);
                    end != s && self.reaches(s, end)
                })
            {
                continue;
            }
            for a in prior {
                self.add_edge(a, s);
            }
            self.synchronise(t, s, ord.is_acquire());
            self.last_read = Some(s);
            if self.forced.is_some() {
                self.forced = Some(forcing);
            }
            return s;
        }
    }

    /// Thread `t` read store `s`: an acquire synchronises with its release
    /// view now, a relaxed read keeps it for a later acquire fence.
    fn synchronise(&mut self, t: u32, s: NodeId, acquire: bool) {
        let n = &self.nodes[s];
        let th = &mut self.threads[t as usize];
        let (clock, hb) = if acquire {
            (&mut th.clock, &mut th.hb)
        } else {
            (&mut th.facq, &mut th.hb_facq)
        };
        if let Some(v) = &n.release_view {
            join_into(clock, v);
        }
        if let Some(v) = &n.hb_release {
            join_into(hb, v);
        }
    }

    fn effective(&self, ord: MemOrder) -> MemOrder {
        if self.sc_model && ord.is_atomic() {
            MemOrder::SeqCst
        } else {
            ord
        }
    }

    fn push_entry(&mut self, t: u32, loc: Loc, e: Entry) {
        let slot = t as usize + 1;
        let l = &mut self.locs[loc.0 as usize];
        if l.per_slot.len() <= slot {
            l.per_slot.resize_with(slot + 1, VecDeque::new);
            l.stores.resize_with(slot + 1, VecDeque::new);
            l.sc_stores.resize_with(slot + 1, VecDeque::new);
        }
        l.per_slot[slot].push_back(e);
        if e.store {
            l.stores[slot].push_back(e);
            if e.sc {
                l.sc_stores[slot].push_back(e);
            }
        }
    }

    /// A new store node of thread `t` (its mo edges still to add).
    fn new_store(
        &mut self,
        t: u32,
        seq: u64,
        val: Value,
        ord: MemOrder,
        read: Option<NodeId>,
    ) -> NodeId {
        let th = &self.threads[t as usize];
        let (mut view, mut hb): (Clock, Clock) = if ord.is_release() {
            (th.clock.clone(), th.hb.clone())
        } else {
            (th.frel.clone(), th.hb_frel.clone())
        };
        if let Some(r) = read {
            let rn = self.node(r);
            if let Some(v) = &rn.release_view {
                join_into(&mut view, v);
            }
            if let Some(v) = &rn.hb_release {
                join_into(&mut hb, v);
            }
        }
        let slot = t as usize + 1;
        let mut cv: Clock = smallvec::smallvec![0; slot + 1];
        cv[slot] = seq;
        let node = Node {
            slot,
            seq,
            val,
            sc: ord.is_sc(),
            release_view: view.iter().any(|&x| x > 0).then_some(view),
            hb_release: hb.iter().any(|&x| x > 0).then_some(hb),
            hb_view: ord.is_sc().then(|| th.clock.clone()),
            cv,
            edges: Default::default(),
            rmw: None,
        };
        self.nodes.insert(seq, node);
        self.stats.peak_stores = self.stats.peak_stores.max(self.nodes.len());
        seq
    }

    /// Adds the edges a new store `id` of thread `t` gets (Fig. 13) and records it.
    fn finish_store(&mut self, t: u32, loc: Loc, id: NodeId, sc: bool) {
        // After the initial value: implicit (cv) while no RMW has read it,
        // else an edge from the end of the RMWs that follow it.
        let init = initial_store(loc);
        if self.node(init).rmw.is_none() {
            let n = self.nodes.get_mut(id).unwrap();
            n.cv[INIT_SLOT] = n.cv[INIT_SLOT].max(1);
        } else {
            self.add_edge(init, id);
        }
        for a in self.prior_set(t, loc, sc, None) {
            self.add_edge(a, id);
        }
        if sc {
            self.locs[loc.0 as usize].last_sc_store = Some(id);
        }
        self.push_entry(
            t,
            loc,
            Entry {
                seq: id,
                write: id,
                store: true,
                sc,
            },
        );
    }

    /// Thread `t`'s last operation's sequence number (what it has done so far).
    pub fn last_seq(&self, t: u32) -> u64 {
        get(&self.threads[t as usize].clock, t as usize + 1)
    }

    /// The last operation of thread `of` that happens before thread `t`'s
    /// next one (plain happens-before; 0 when none).
    pub fn hb_entry(&self, t: u32, of: u32) -> u64 {
        get(&self.threads[t as usize].hb, of as usize + 1)
    }

    /// SeqCst operations (and fences) synchronise through one global clock
    /// in execution order, as if each were an acq_rel RMW of one location,
    /// before and after their access. This is stronger than C++20's SC
    /// axiom (psc acyclic; C11Tester's own C++11 fence rules are weaker than
    /// it and let IRIW with SeqCst fences show its forbidden outcome): no
    /// execution the model forbids is produced, some it allows are not.
    fn sc_sync(&mut self, t: u32) {
        // The hardware machines give seq_cst operations their order.
        if self.machine.is_some() {
            return;
        }
        let th = &mut self.threads[t as usize];
        join_into(&mut th.clock, &self.sc_clock);
        self.sc_clock.clone_from(&th.clock);
    }

    /// What every access of thread `t` starts with: prune if due, tick its
    /// clock, and for a SeqCst access (`sc`) synchronise through the SeqCst
    /// clock. Returns the access's sequence number.
    fn begin_access(&mut self, t: u32, sc: bool) -> u64 {
        self.maybe_prune();
        let seq = self.tick(t);
        if sc {
            self.sc_sync(t);
        }
        seq
    }

    /// An atomic (or plain) load; `choose(n)` picks one of `n` candidates.
    pub fn load(
        &mut self,
        t: u32,
        loc: Loc,
        ord: MemOrder,
        choose: &mut dyn FnMut(usize) -> usize,
    ) -> Value {
        self.model_loc(loc);
        let ord = self.effective(ord);
        let sc = ord.is_sc();
        let seq = self.begin_access(t, sc);
        self.aim_read(t, loc, sc, false);
        let cands = self.may_read_from(t, loc, sc, false);
        let s = self.read_from(t, loc, ord, sc, &|_, _| false, cands, choose);
        self.machine_read(t, loc, s, ord);
        self.push_entry(
            t,
            loc,
            Entry {
                seq,
                write: s,
                store: false,
                sc,
            },
        );
        if sc {
            self.sc_sync(t);
        }
        self.node(s).val
    }

    pub fn store(&mut self, t: u32, loc: Loc, ord: MemOrder, val: Value) {
        self.model_loc(loc);
        let ord = self.effective(ord);
        if let Some(m) = &mut self.machine {
            m.before_store(t, ord);
        }
        let seq = self.begin_access(t, ord.is_sc());
        let id = self.new_store(t, seq, val, ord, None);
        self.finish_store(t, loc, id, ord.is_sc());
        self.machine_write(t, loc, id, ord, false);
        if ord.is_sc() {
            self.sc_sync(t);
        }
    }

    /// The write half of an RMW of thread `t` that read `s` (at `seq`).
    fn rmw_write(&mut self, t: u32, loc: Loc, seq: u64, s: NodeId, val: Value, ord: MemOrder) {
        let id = self.new_store(t, seq, val, ord, Some(s));
        self.add_rmw_edge(loc, s, id);
        self.finish_store(t, loc, id, ord.is_sc());
        self.machine_write(t, loc, id, ord, true);
    }

    /// fetch_op / exchange: returns the value read.
    #[allow(clippy::too_many_arguments)]
    pub fn rmw(
        &mut self,
        t: u32,
        loc: Loc,
        ord: MemOrder,
        op: RmwOp,
        operand: Value,
        width: Width,
        choose: &mut dyn FnMut(usize) -> usize,
    ) -> Value {
        self.model_loc(loc);
        let ord = self.effective(ord);
        let sc = ord.is_sc();
        if let Some(m) = &mut self.machine {
            m.before_rmw(t, loc, ord.is_release());
        }
        let seq = self.begin_access(t, sc);
        self.aim_read(t, loc, sc, true);
        let cands = self.may_read_from(t, loc, sc, true);
        let s = self.read_from(t, loc, ord.read_half(), sc, &|_, _| true, cands, choose);
        self.machine_read(t, loc, s, ord.read_half());
        let old = self.node(s).val;
        self.rmw_write(t, loc, seq, s, width.normalize(op.apply(old, operand)), ord);
        if sc {
            self.sc_sync(t);
        }
        old
    }

    /// compare_exchange: returns the value read and whether it wrote. A weak
    /// one fails spuriously when `spurious` says so.
    #[allow(clippy::too_many_arguments)]
    pub fn cas(
        &mut self,
        t: u32,
        loc: Loc,
        expected: Value,
        new: Value,
        success: MemOrder,
        failure: MemOrder,
        spurious: bool,
        choose: &mut dyn FnMut(usize) -> usize,
    ) -> (Value, bool) {
        let outcome = |v: Value| (v == expected).then_some(new);
        let (old, written) = self.cas_with(t, loc, &outcome, success, failure, spurious, choose);
        (old, written.is_some())
    }

    /// A compare-exchange in general: `outcome` says what it writes when it
    /// reads a value (`None`: it fails). Returns the value read and what it
    /// wrote. With `spurious` a weak one fails even if the value matches,
    /// but, as in the exhaustive explorer, a thread fails spuriously at most
    /// once on the same store (a thread reads a location's stores in
    /// modification order, so remembering the last such store per location
    /// is enough): retry loops stay finite and fair.
    #[allow(clippy::too_many_arguments)]
    pub fn cas_with(
        &mut self,
        t: u32,
        loc: Loc,
        outcome: &dyn Fn(Value) -> Option<Value>,
        success: MemOrder,
        failure: MemOrder,
        spurious: bool,
        choose: &mut dyn FnMut(usize) -> usize,
    ) -> (Value, Option<Value>) {
        self.model_loc(loc);
        let (success, failure) = (self.effective(success), self.effective(failure));
        let sc = success.is_sc() || failure.is_sc();
        if let Some(m) = &mut self.machine {
            m.before_rmw(t, loc, success.is_release());
        }
        let seq = self.begin_access(t, sc);
        self.aim_read(t, loc, sc, false);
        // Under `mca` a CAS that writes reads the newest visible store (its
        // store becomes visible right after it).
        let newest = (self.machine.as_ref()).and_then(|m| m.store_a_cas_must_read(loc));
        let failed_on = self.threads[t as usize]
            .spurious_fails
            .iter()
            .find(|f| f.0 == loc)
            .map(|f| f.1);
        let fails_spuriously = |x: NodeId| spurious && failed_on != Some(x);
        // A CAS that reads the expected value writes, so it may only read a
        // store no other RMW has read; any other store it reads as a load.
        let cands: Stores = self
            .may_read_from(t, loc, sc, false)
            .into_iter()
            .filter(|&x| {
                let n = self.node(x);
                let fails = outcome(n.val).is_none() || fails_spuriously(x);
                fails || (n.rmw.is_none() && newest.is_none_or(|id| x == id))
            })
            .collect();
        // The read's ordering depends on the outcome: take the success one for
        // the choice (an acquire failure order is applied below).
        let writes = |x: NodeId, v: Value| outcome(v).is_some() && !fails_spuriously(x);
        let s = self.read_from(t, loc, MemOrder::Relaxed, sc, &writes, cands, choose);
        let old = self.node(s).val;
        let written = outcome(old).filter(|_| !fails_spuriously(s));
        if written.is_none() && outcome(old).is_some() {
            let fails = &mut self.threads[t as usize].spurious_fails;
            match fails.iter_mut().find(|f| f.0 == loc) {
                Some(f) => f.1 = s,
                None => fails.push((loc, s)),
            }
        }
        let wrote = written.is_some();
        let read_ord = if wrote { success.read_half() } else { failure };
        if read_ord.is_acquire() {
            self.synchronise(t, s, true);
        }
        self.machine_read(t, loc, s, read_ord);
        if let Some(new) = written {
            self.rmw_write(t, loc, seq, s, new, success);
        } else {
            self.push_entry(
                t,
                loc,
                Entry {
                    seq,
                    write: s,
                    store: false,
                    sc: failure.is_sc(),
                },
            );
        }
        if sc {
            self.sc_sync(t);
        }
        (old, written)
    }

    pub fn fence(&mut self, t: u32, ord: MemOrder) {
        let ord = self.effective(ord);
        if let Some(m) = &mut self.machine {
            m.fence(t, ord);
        }
        let seq = self.tick(t);
        let th = &mut self.threads[t as usize];
        if ord.is_acquire() {
            let facq = th.facq.clone();
            join_into(&mut th.clock, &facq);
            let facq = th.hb_facq.clone();
            join_into(&mut th.hb, &facq);
        }
        if ord.is_release() {
            th.frel = th.clock.clone();
            th.hb_frel = th.hb.clone();
        }
        if ord.is_sc() {
            th.sc_fences.push(seq);
            self.sc_sync(t);
        }
    }

    /// Performs a memory action (load, store, RMW, compare-exchange, fence)
    /// of thread `t`, race-checking it first; plain accesses then act as
    /// relaxed ones. A weak compare-exchange fails if `spurious`. `None` for
    /// actions that are not memory operations.
    pub fn perform(
        &mut self,
        t: u32,
        action: Action,
        spurious: bool,
        choose: &mut dyn FnMut(usize) -> usize,
    ) -> Option<Performed> {
        self.last_read = None;
        if let Some(loc) = action.loc() {
            let plain = match action {
                Action::Load { ord, .. } | Action::Store { ord, .. } => !ord.is_atomic(),
                _ => false,
            };
            if plain && self.plain_fast && !self.locs[loc.0 as usize].modelled {
                let store = match action {
                    Action::Store { val, .. } => Some(val),
                    _ => None,
                };
                if let Some(p) = self.plain_access(t, loc, store) {
                    return Some(p);
                }
            }
            self.model_loc(loc);
        }
        self.random_flushes(choose, true);
        let race = action.loc().and_then(|loc| {
            let (write, atomic) = match action {
                Action::Load { ord, .. } => (false, ord.is_atomic()),
                Action::Store { ord, .. } => (true, ord.is_atomic()),
                _ => (true, true),
            };
            self.race_check(t, loc, write, atomic)
        });
        let atomic = |o: MemOrder| if o.is_atomic() { o } else { MemOrder::Relaxed };
        let (val, written) = match action {
            Action::Load { loc, ord } => (self.load(t, loc, atomic(ord), choose), None),
            Action::Store { loc, ord, val } => {
                self.store(t, loc, atomic(ord), val);
                (0, Some(val))
            }
            Action::Rmw {
                loc,
                ord,
                op,
                operand,
                width,
            } => {
                let old = self.rmw(t, loc, ord, op, operand, width, choose);
                (old, Some(width.normalize(op.apply(old, operand))))
            }
            Action::Cas {
                loc,
                success,
                failure,
                weak,
                ..
            } => {
                let outcome = |v: Value| {
                    (action.cas_succeeds(v) == Some(true))
                        .then(|| action.cas_new(v))
                        .flatten()
                };
                self.cas_with(t, loc, &outcome, success, failure, weak && spurious, choose)
            }
            Action::Fence { ord } => {
                self.fence(t, ord);
                (0, None)
            }
            _ => return None,
        };
        let read_from = self.last_read.map(|s| match self.node(s).slot {
            INIT_SLOT => ReadFrom::Init,
            slot => ReadFrom::Store {
                thread: slot as u32 - 1,
                seq: s,
            },
        });
        Some(Performed {
            val,
            written,
            race,
            read_from,
        })
    }

    /// Checks the access thread `t` is about to make to `loc` (call it just
    /// before the access): a conflicting earlier access (a write and the
    /// other a plain access, or both plain and one a write) that does not
    /// happen before it is a data race; returns the other thread.
    pub fn race_check(&mut self, t: u32, loc: Loc, write: bool, atomic: bool) -> Option<u32> {
        let clock = &self.threads[t as usize].hb;
        let hb = |u: u32, seq: u64| u == t || seq <= get(clock, u as usize + 1);
        let l = &mut self.locs[loc.0 as usize];
        if let Some((u, seq, a)) = l.last_write {
            if !(hb(u, seq) || atomic && a) {
                return Some(u);
            }
        }
        if write {
            if let Some(&(u, ..)) = l
                .reads
                .iter()
                .find(|&&(u, seq, a)| !(hb(u, seq) || atomic && a))
            {
                return Some(u);
            }
            l.last_write = Some((t, self.seq + 1, atomic));
            l.reads.clear();
        } else {
            l.reads.retain(|r| r.0 != t);
            l.reads.push((t, self.seq + 1, atomic));
        }
        None
    }

    /// Drops the stores no running thread can read any more and the access
    /// records no present or future view can reach (c11tester.md §7.1,
    /// conservative mode): every execution the unpruned memory could still
    /// produce, it still produces.
    pub fn prune(&mut self) {
        if let Some(w) = self.window {
            self.advance_window(w);
        }
        let running: Vec<usize> = (0..self.threads.len())
            .filter(|&t| self.threads[t].running)
            .collect();
        // Threads whose floors bound what some thread can read: a thread
        // waiting to join a running one will see at least that one's.
        let readers: Vec<usize> = running
            .iter()
            .copied()
            .filter(|&t| {
                self.threads[t]
                    .joining
                    .is_none_or(|c| !self.threads[c as usize].running)
            })
            .collect();
        let nslots = self.threads.len() + 1;
        // Per location and slot, the newest store of that slot some running
        // thread may still read is after `threshold[w]`: older ones are
        // mo-before a store every running thread has seen (its floor).
        let mut thresholds: Vec<Vec<u64>> = Vec::with_capacity(self.locs.len());
        for l in &self.locs {
            if !l.modelled {
                // Plain data: nothing of it in the mo-graph.
                thresholds.push(Vec::new());
                continue;
            }
            let mut threshold = vec![u64::MAX; nslots];
            for &t in &readers {
                let clock = &self.threads[t].clock;
                let mut tt = vec![0u64; nslots];
                let floors = l
                    .per_slot
                    .iter()
                    .enumerate()
                    .filter_map(|(slot, list)| Self::last_before(list, get(clock, slot), false))
                    .map(|e| e.write)
                    .chain(l.forced.iter().copied());
                for f in floors {
                    if let Some(f) = self.nodes.get(f) {
                        for (w, x) in tt.iter_mut().enumerate() {
                            let mut c = get(&f.cv, w);
                            if f.slot == w {
                                c = c.min(f.seq.saturating_sub(1));
                            }
                            *x = (*x).max(c);
                        }
                    }
                }
                for w in 0..nslots {
                    threshold[w] = threshold[w].min(tt[w]);
                }
            }
            if readers.is_empty() {
                threshold.iter_mut().for_each(|x| *x = 0);
            }
            thresholds.push(threshold);
        }
        let readable = |li: usize, slot: usize, e: &Entry| {
            e.store && (slot == INIT_SLOT || e.seq > thresholds[li][slot])
        };
        // Bounds a lookup into a slot's accesses may use, now or later: the
        // clocks of running threads, the views of stores that can still be
        // read, the last SeqCst store's clock, SeqCst fences.
        let mut bounds: Vec<Vec<u64>> = vec![Vec::new(); nslots];
        let add_view = |bounds: &mut Vec<Vec<u64>>, v: &[u64]| {
            for (i, &x) in v.iter().enumerate() {
                if x > 0 && i < bounds.len() {
                    bounds[i].push(x);
                }
            }
        };
        for &t in &running {
            let th = &self.threads[t];
            add_view(&mut bounds, &th.clock);
            add_view(&mut bounds, &th.frel);
            add_view(&mut bounds, &th.facq);
        }
        for (li, l) in self.locs.iter().enumerate() {
            for (slot, list) in l.per_slot.iter().enumerate() {
                for e in list.iter().filter(|e| readable(li, slot, e)) {
                    if let Some(v) = self
                        .nodes
                        .get(e.write)
                        .and_then(|n| n.release_view.as_ref())
                    {
                        add_view(&mut bounds, v);
                    }
                }
            }
            if let Some(v) = l
                .last_sc_store
                .and_then(|s| self.nodes.get(s))
                .and_then(|n| n.hb_view.as_ref())
            {
                add_view(&mut bounds, v);
            }
        }
        let mut fences: Vec<u64> = Vec::new();
        for th in &self.threads {
            fences.extend(th.sc_fences.iter().copied());
        }
        for b in &mut bounds {
            b.extend(fences.iter().copied());
            // The bound every lookup may start from.
            b.push(0);
            b.sort_unstable();
            b.dedup();
        }
        // The stores the hardware machine refers to stay.
        let mut pinned: HashSet<NodeId, SeqBuild> = HashSet::default();
        if let Some(m) = &self.machine {
            m.pin(&mut pinned);
        }
        let mut referenced: HashSet<NodeId, SeqBuild> = HashSet::default();
        for (l, threshold) in self.locs.iter_mut().zip(&thresholds) {
            if !l.modelled {
                continue;
            }
            for (slot, list) in l.per_slot.iter_mut().enumerate() {
                let n = list.len();
                let mut keep = vec![false; n];
                if n > 0 {
                    keep[n - 1] = true;
                }
                let b = &bounds[slot];
                // Lookups: the latest access, store, SeqCst store at or below
                // (or just below) each bound. A lookup's answer depends only
                // on how many entries lie at or below the bound (its end),
                // so each end some bound reaches is looked at once: end `k`
                // is reached when a bound lies in `[s(k-1), s(k))` (or in
                // `(s(k-1), s(k)]` for the strict lookup), found by binary
                // search in the sorted bounds. Then the latest entry of each
                // kind before the end is kept, from running indexes.
                let mut last = [usize::MAX; 3];
                let mut latest: Vec<[usize; 3]> = Vec::with_capacity(n);
                for (i, e) in list.iter().enumerate() {
                    let kinds = [true, e.store, e.store && e.sc];
                    for k in 0..3 {
                        if kinds[k] {
                            last[k] = i;
                        }
                    }
                    latest.push(last);
                }
                let seq = |i: usize| list[i].seq;
                for end in 1..=n {
                    let (lo, hi) = (seq(end - 1), (end < n).then(|| seq(end)));
                    // Non-strict: some bound `v` with lo <= v < hi.
                    let at = b.partition_point(|&x| x < lo);
                    let reached = at < b.len() && hi.is_none_or(|h| b[at] < h);
                    // Strict: some bound `v` with lo < v <= hi.
                    let above = b.partition_point(|&x| x <= lo);
                    let reached_strict = above < b.len() && hi.is_none_or(|h| b[above] <= h);
                    if reached || reached_strict {
                        for &i in &latest[end - 1] {
                            if i != usize::MAX {
                                keep[i] = true;
                            }
                        }
                    }
                }
                for (i, e) in list.iter().enumerate() {
                    if e.store
                        && (slot == INIT_SLOT
                            || e.seq > threshold[slot]
                            || pinned.contains(&e.write))
                    {
                        keep[i] = true;
                    }
                }
                let mut i = 0;
                list.retain(|_| {
                    i += 1;
                    keep[i - 1]
                });
                referenced.extend(list.iter().map(|e| e.write));
                // Refilled in place: their room is needed again at once.
                let (stores, sc_stores) = (&mut l.stores[slot], &mut l.sc_stores[slot]);
                stores.clear();
                stores.extend(list.iter().filter(|e| e.store).copied());
                sc_stores.clear();
                sc_stores.extend(list.iter().filter(|e| e.store && e.sc).copied());
            }
            referenced.extend(l.last_sc_store);
        }
        // Init nodes stay (one per location); RMWs that follow kept stores stay.
        let before = self.nodes.len();
        let mut keep_ids: Vec<NodeId> = referenced.iter().copied().collect();
        let mut i = 0;
        while i < keep_ids.len() {
            if let Some(n) = self.nodes.get(keep_ids[i]) {
                if let Some(r) = n.rmw {
                    if referenced.insert(r) {
                        keep_ids.push(r);
                    }
                }
            }
            i += 1;
        }
        self.nodes
            .retain(|id, n| n.slot == INIT_SLOT || referenced.contains(&id));
        if let Some(m) = &mut self.machine {
            m.forget_unless(&referenced);
        }
        self.chain_skip.borrow_mut().clear();
        for n in self.nodes.values_mut() {
            n.edges.retain(|d| referenced.contains(d));
        }
        self.stats.pruned += (before - self.nodes.len()) as u64;
    }

    /// The value a location ends with: that of a store nothing is mo-after
    /// (any such store can be last).
    pub fn final_value(&self, loc: Loc, choose: &mut dyn FnMut(usize) -> usize) -> Value {
        // Under a hardware model, the store its machine ends with.
        if let Some(m) = &self.machine {
            if let Some(n) = self.nodes.get(m.final_store(loc)) {
                return n.val;
            }
        }
        let l = &self.locs[loc.0 as usize];
        if !l.modelled {
            return l.value;
        }
        let stores: Vec<NodeId> = l
            .per_slot
            .iter()
            .flat_map(|list| list.iter().filter(|e| e.store).map(|e| e.write))
            .filter(|id| self.nodes.contains(*id))
            .collect();
        let maximal: Vec<NodeId> = stores
            .iter()
            .copied()
            .filter(|&a| !stores.iter().any(|&b| b != a && self.reaches(a, b)))
            .collect();
        if self.read_latest {
            let last = maximal.iter().copied().max_by_key(|&a| execution_order(a));
            return self.node(last.expect("a store")).val;
        }
        self.node(maximal[choose(maximal.len())]).val
    }
}

#[cfg(test)]
mod tests;
