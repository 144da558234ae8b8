//! The memory models, one file each, behind one interface.
//!
//! A model is a [`Rules`] value in its own file (what sets it apart from
//! C++20, and for a hardware model the program order it keeps), made a
//! [`Model`]; listing it in [`Model::ALL`] offers it by name on the
//! command line and puts it in every test that compares the explorer with
//! the brute-force checker. `crates/litmus/tests/custom_model.rs` defines
//! one (`pso`) in a test file alone and checks it with both checkers.
//!
//! Every model is C++20's consistency (coherence, atomicity, no thin air and
//! the seq_cst axiom over happens-before) adjusted by a few rules, and the
//! rest of the crate asks [`Model`] for them instead of naming models:
//!
//! * [`Model::all_seq_cst`]: every atomic access behaves as seq_cst (SC);
//! * [`Model::rc11_release_sequences`]: a release sequence also starts at the
//!   thread's last release write to the location (RC11, before P0982R1);
//! * [`Model::total_order`]: the seq_cst axiom is one total order over every
//!   access (SC) instead of RC11's psc;
//! * [`Model::preserved_order`]: the program order a multi-copy-atomic
//!   machine keeps (`mca`, `tso`), whose union with `rfe`, `mo` and `rb` must
//!   be acyclic as well (see `consistency/global_order.rs`);
//! * [`Model::orders_every_location`]: whether the axioms beyond coherence
//!   can depend on the order of any location's writes, not only those of
//!   locations with seq_cst accesses (SC's total order and the hardware
//!   models' global order do), so that no quick per-location verdict is the
//!   whole answer.

mod cpp20;
mod mca;
mod rc11;
mod sc;
mod tso;

use crate::event::Event;
use std::fmt;

/// A memory model c11check can check executions against: the rules that
/// set it apart from C++20, defined in the model's own file. The models
/// c11check offers are listed once, in [`Model::ALL`]; [`Model::custom`]
/// makes one that is not listed (an experiment, a test's).
#[derive(Copy, Clone)]
pub struct Model(&'static Rules);

#[allow(non_upper_case_globals)]
impl Model {
    /// C++20 (RC11 with release sequences of P0982R1): the default.
    pub const Cpp20: Model = Model(&cpp20::RULES);
    /// RC11 as in herd's rc11.cat (C++11 release sequences).
    pub const Rc11: Model = Model(&rc11::RULES);
    /// Sequential consistency: every access takes part in one total order.
    pub const Sc: Model = Model(&sc::RULES);
    /// C++20 restricted to what a multi-copy-atomic machine (ARMv8) can
    /// show of the program compiled with the standard mapping.
    pub const Mca: Model = Model(&mca::RULES);
    /// C++20 restricted to what x86-TSO can show of the program compiled
    /// with the standard mapping: store buffering only.
    pub const Tso: Model = Model(&tso::RULES);

    /// Every model, the default first: a new model is its own file and a
    /// line here. The command line, the brute-force checker and the tests
    /// that compare the two take every model from this list.
    pub const ALL: &'static [Model] =
        &[Model::Cpp20, Model::Rc11, Model::Sc, Model::Mca, Model::Tso];

    /// A model with these rules that is not in [`Model::ALL`].
    pub const fn custom(rules: &'static Rules) -> Model {
        Model(rules)
    }
}

/// Models are the same when their names are.
impl PartialEq for Model {
    fn eq(&self, other: &Model) -> bool {
        self.0.name == other.0.name
    }
}
impl Eq for Model {}
impl std::hash::Hash for Model {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.name.hash(h)
    }
}
impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

/// One half of a memory access: its read or its write (a read-modify-write
/// has both, and a hardware model may order them apart; a failed
/// compare-exchange only reads).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Half {
    /// The access's index in its thread.
    pub index: usize,
    pub write: bool,
}

/// The halves of access `e` at `index` in its thread.
pub fn halves(e: &Event, index: usize) -> impl Iterator<Item = Half> {
    let read = e.is_read().then_some(Half {
        index,
        write: false,
    });
    let write = e.is_write().then_some(Half { index, write: true });
    read.into_iter().chain(write)
}

/// The memory accesses of `events`, with their indices, after keeping each
/// RMW's read before its write (the first of a hardware model's orders).
pub fn accesses_keeping_rmw_order<'e>(
    events: &'e [Event],
    keep: &mut dyn FnMut(Half, Half),
) -> Vec<(usize, &'e Event)> {
    let accesses: Vec<(usize, &Event)> = (events.iter().enumerate())
        .filter(|(_, e)| e.loc().is_some())
        .collect();
    for &(j, b) in &accesses {
        if b.is_read() && b.is_write() {
            keep(
                Half {
                    index: j,
                    write: false,
                },
                Half {
                    index: j,
                    write: true,
                },
            );
        }
    }
    accesses
}

/// The program order a hardware model keeps in one thread: calls
/// `keep(a, b)` for each pair of halves of memory accesses, `a` of an
/// earlier access than `b` or the read before the write of one RMW, that
/// the machine performs in that order (see `consistency/global_order.rs`). Fences are never
/// passed: an order through one is given as the pairs of accesses it
/// separates.
pub type PreservedOrder = fn(events: &[Event], keep: &mut dyn FnMut(Half, Half));

/// How the live memory runs a model: C11Tester's memory alone, or with a
/// hardware machine on top that decides what reads take.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LiveMachine {
    /// C11Tester's memory (the C++ models).
    Cpp,
    /// x86-TSO's store buffers (`live_memory/store_buffers.rs`).
    StoreBuffers,
    /// ARMv8's view machine (`live_memory/arm_views.rs`).
    ArmViews,
}

/// What distinguishes one model from C++20: one value per model, in the
/// model's file.
#[derive(Debug)]
pub struct Rules {
    pub name: &'static str,
    /// Other names `--model` accepts.
    pub aliases: &'static [&'static str],
    pub all_seq_cst: bool,
    pub rc11_release_sequences: bool,
    pub total_order: bool,
    pub preserved_order: Option<PreservedOrder>,
    /// How the live memory (`live_memory/`) runs the model, if it can (a
    /// model without takes its random runs as execution graphs).
    pub live: Option<LiveMachine>,
}

impl Model {
    /// The models' names, for messages: `cpp20, rc11, sc, mca or tso`.
    pub fn names() -> String {
        let names: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
        match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }

    fn rules(self) -> &'static Rules {
        self.0
    }

    /// The listed model with this name or alias (any case).
    pub fn from_name(s: &str) -> Option<Model> {
        let s = s.to_ascii_lowercase();
        Model::ALL
            .iter()
            .copied()
            .find(|m| m.rules().name == s || m.rules().aliases.contains(&s.as_str()))
    }

    pub fn name(self) -> &'static str {
        self.rules().name
    }

    /// The other names [`Model::from_name`] takes.
    pub fn aliases(self) -> &'static [&'static str] {
        self.rules().aliases
    }

    /// Every atomic access behaves as seq_cst.
    #[inline]
    pub fn all_seq_cst(self) -> bool {
        self.rules().all_seq_cst
    }

    /// Release sequences also start at the thread's last release write.
    #[inline]
    pub fn rc11_release_sequences(self) -> bool {
        self.rules().rc11_release_sequences
    }

    /// The seq_cst axiom is one total order over all accesses.
    #[inline]
    pub fn total_order(self) -> bool {
        self.rules().total_order
    }

    /// The program order the model's hardware keeps, if it is one.
    #[inline]
    pub fn preserved_order(self) -> Option<PreservedOrder> {
        self.rules().preserved_order
    }

    /// Whether this is a hardware model (an extra global-order axiom).
    #[inline]
    pub fn is_hardware(self) -> bool {
        self.rules().preserved_order.is_some()
    }

    /// Whether the live memory can run the model (see [`Rules::live`]).
    #[inline]
    pub fn has_live_memory(self) -> bool {
        self.rules().live.is_some()
    }

    /// How the live memory runs the model (see [`Rules::live`]).
    #[inline]
    pub fn live_machine(self) -> Option<LiveMachine> {
        self.rules().live
    }

    /// Whether the axioms beyond coherence can depend on the order of any
    /// location's writes (see the module doc).
    #[inline]
    pub fn orders_every_location(self) -> bool {
        self.total_order() || self.is_hardware()
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
