//! Failures and the reports that explain them, and the replay string that
//! re-runs one execution.

use crate::Site;
use c11check_model::{Action, Analysis, EventId, ExecutionGraph, Loc};
use std::fmt;

/// What kind of bug an execution shows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// A thread panicked (a failed assertion included) and nobody joined it.
    Panic,
    /// Two accesses to the same non-atomic data, one a write, not ordered by
    /// happens-before.
    DataRace,
    /// Every live thread waits for something that never comes.
    Deadlock,
    /// A thread spins forever, or exceeded its step bound.
    Livelock,
    /// A thread reached its step bound repeating a turn of a loop that
    /// only reads, without `spin_loop()` or `yield_now()`: c11check cannot
    /// tell a wait another thread ends from one nothing ends, nor explore
    /// every number of turns up to the bound in reasonable time.
    SpinWithoutHint,
    /// An `Arc` was never released by the end of an execution.
    Leak,
    /// An access to an object in memory that was already freed (with the
    /// tracking allocator installed).
    UseAfterFree,
    /// A load read memory nothing had written: a C program's fresh heap
    /// block (`malloc`, `new`), read before it was initialized.
    UninitializedRead,
    /// An execution the model allows that no interleaving of the threads
    /// produces (robustness against SC, `RunConfig::robustness`).
    NotRobust,
    /// A pthread object (mutex, condition variable, read-write lock,
    /// barrier) used after it was destroyed or without being initialized,
    /// or initialized or destroyed while a thread holds it.
    Misuse,
    /// The code under test did not do the same thing when re-run.
    Nondeterminism,
    /// A bug of c11check itself.
    Internal,
}

impl FailureKind {
    /// The title with its article: "a data race", "an internal error".
    pub fn with_article(self) -> String {
        // Only "internal error" starts with a vowel sound.
        let article = if self == FailureKind::Internal {
            "an"
        } else {
            "a"
        };
        format!("{article} {}", self.title())
    }
    pub fn title(self) -> &'static str {
        match self {
            FailureKind::Panic => "panic",
            FailureKind::DataRace => "data race",
            FailureKind::Deadlock => "deadlock",
            FailureKind::Livelock => "livelock",
            FailureKind::SpinWithoutHint => "spin loop without a hint",
            FailureKind::Leak => "leak",
            FailureKind::UseAfterFree => "use after free",
            FailureKind::UninitializedRead => "read of uninitialized memory",
            FailureKind::NotRobust => "robustness violation",
            FailureKind::Misuse => "misuse of a synchronization object",
            FailureKind::Nondeterminism => "nondeterministic test",
            FailureKind::Internal => "internal error",
        }
    }
}

/// A bug found in one execution.
#[derive(Clone, Debug)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
    /// Threads involved.
    pub threads: Vec<u32>,
    /// Events involved (highlighted in the trace).
    pub events: Vec<EventId>,
}

/// A failure together with the execution that shows it.
#[derive(Clone, Debug)]
pub struct Report {
    pub failure: Failure,
    /// One line per event, in an order that respects program order and reads-from.
    pub trace: Vec<String>,
    /// What each location of the trace is: `loc1: an atomic first used at
    /// src/lib.rs:10:5`.
    pub locations: Vec<String>,
    /// Feed to `Builder::replay` (or `C11CHECK_REPLAY`) to re-run this execution.
    pub replay: String,
    /// The execution graph in Graphviz syntax.
    pub dot: String,
    /// Executions explored before this one (this one included).
    pub execution_number: u64,
    /// In a random run: the iteration and its seed.
    pub random_iteration: Option<(u64, u64)>,
    /// In a live random run: how many iterations hit this bug, of how many.
    pub hits: Option<(u64, u64)>,
    /// Other distinct bugs of the same run, with how many iterations hit each.
    pub others: Vec<(String, u64)>,
    /// Random runs: visible operations performed in all iterations.
    pub operations: Option<u64>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.random_iteration {
            Some((i, seed)) => writeln!(
                f,
                "c11check found {} in random iteration {i} (seed {seed}):",
                self.failure.kind.with_article()
            )?,
            None => writeln!(
                f,
                "c11check found {} in execution {}:",
                self.failure.kind.with_article(),
                self.execution_number
            )?,
        }
        writeln!(f, "  {}", self.failure.message)?;
        if let Some((hits, of)) = self.hits {
            writeln!(f, "  (hit in {hits} of {of} iterations)")?;
        }
        for (what, hits) in &self.others {
            writeln!(f, "  also: {what} (hit in {hits} iterations)")?;
        }
        writeln!(f)?;
        writeln!(f, "The execution (each load names the store it read):")?;
        for line in &self.trace {
            writeln!(f, "  {line}")?;
        }
        if !self.locations.is_empty() {
            writeln!(f, "Locations:")?;
            for line in &self.locations {
                writeln!(f, "  {line}")?;
            }
        }
        writeln!(f)?;
        writeln!(
            f,
            "Replay it with `c11check::model::Builder::new().replay(\"{}\")`",
            self.replay
        )?;
        write!(f, "or by setting C11CHECK_REPLAY={}", self.replay)
    }
}

/// One event, for humans: `T1.3 load(acquire) x2 = 1 (reads T0.4) at src/lib.rs:10:5`.
/// One operation in words, the same in every engine's reports:
/// `load(Acquire) loc1 = 0`, `compare_exchange_weak(..) loc2 0 -> 1: read
/// 0, failed spuriously`. `wrote`: whether a read-modify-write wrote.
pub fn describe_action(
    action: &Action,
    read_val: c11check_model::Value,
    wrote: bool,
    spurious: bool,
) -> String {
    match *action {
        Action::Cas {
            weak: true,
            new: crate::CHOICE_MARK,
            ..
        } => format!(
            "c11check chooses a spurious wake-up or a time-out here: {}",
            if spurious { "yes" } else { "no" }
        ),
        // An `UnsafeCell` access: the value is the program's own, which
        // c11check does not see.
        Action::Load {
            loc,
            ord: c11check_model::MemOrder::NonAtomic,
        } => format!("read(plain) loc{}", loc.0),
        Action::Store {
            loc,
            ord: c11check_model::MemOrder::NonAtomic,
            ..
        } => format!("write(plain) loc{}", loc.0),
        Action::Load { loc, ord } => {
            format!("load({}) loc{} = {}", ord_name(ord), loc.0, read_val)
        }
        Action::Store { loc, ord, val } => {
            format!("store({}) loc{} := {}", ord_name(ord), loc.0, val)
        }
        Action::Rmw { loc, op, .. } if op.is_refcount() => {
            let inc = matches!(op, c11check_model::RmwOp::RefInc);
            format!(
                "{} loc{} {} -> {}{}",
                if inc {
                    "reference count +1 (clone)"
                } else {
                    "reference count -1 (drop of the handle made here)"
                },
                loc.0,
                read_val,
                if inc {
                    read_val + 1
                } else {
                    read_val.wrapping_sub(1)
                },
                if !inc && read_val == 1 {
                    ", the last"
                } else {
                    ""
                }
            )
        }
        Action::Rmw {
            loc,
            ord,
            op,
            operand,
            ..
        } => format!(
            "fetch_{}({}) loc{} {} -> {}",
            op.name(),
            ord_name(ord),
            loc.0,
            operand,
            read_val
        ),
        Action::Cas {
            loc,
            expected,
            take: true,
            ..
        } => format!(
            "take {} from loc{}: read {}, {}",
            expected,
            loc.0,
            read_val,
            if wrote { "took" } else { "too few" }
        ),
        Action::Cas {
            loc, lock: true, ..
        } => format!(
            "lock loc{}: {}",
            loc.0,
            if wrote { "took it" } else { "found it held" }
        ),
        Action::Cas {
            loc,
            expected,
            new,
            success,
            failure,
            weak,
            lock: false,
            take: false,
        } => format!(
            "compare_exchange{}({}/{}) loc{} {} -> {}: read {}, {}",
            if weak { "_weak" } else { "" },
            ord_name(success),
            ord_name(failure),
            loc.0,
            expected,
            new,
            read_val,
            if wrote {
                "succeeded"
            } else if spurious {
                "failed spuriously"
            } else {
                "failed"
            }
        ),
        Action::Fence { ord } => format!("fence({})", ord_name(ord)),
        Action::Spawn { child } => format!("spawn thread {child}"),
        Action::Join { child } => format!("join thread {child}"),
        Action::Block { reason } => format!("blocked ({})", reason.name()),
        Action::Finish => "finished".to_string(),
    }
}

pub fn describe_event(g: &ExecutionGraph, id: EventId, site: Option<Site>) -> String {
    let e = g.event(id);
    let what = describe_action(&e.action, e.read_val, e.is_write(), e.spurious_fail);
    let from = match e.rf {
        Some(w) if w.is_init() => " (reads the initial value)".to_string(),
        Some(w) => format!(" (reads {w})"),
        None => String::new(),
    };
    let at = site.map(|s| format!(" at {s}")).unwrap_or_default();
    format!("{id} {what}{from}{at}")
}

fn ord_name(o: c11check_model::MemOrder) -> &'static str {
    use c11check_model::MemOrder::*;
    match o {
        NonAtomic => "plain",
        Relaxed => "Relaxed",
        Acquire => "Acquire",
        Release => "Release",
        AcqRel => "AcqRel",
        SeqCst => "SeqCst",
    }
}

/// A line per location of `g`: what kind of object it is (read off its
/// first access) and where the program first used it.
pub(crate) fn location_legend(
    g: &ExecutionGraph,
    site: &dyn Fn(EventId) -> Option<Site>,
    names: &[crate::report::LocationName],
) -> Vec<String> {
    use c11check_model::{Loc, MemOrder, RmwOp};
    let mut first: Vec<Option<EventId>> = vec![None; g.num_locs()];
    for id in replay_order(g) {
        if let Some(Loc(l)) = g.event(id).loc() {
            if let Some(slot @ None) = first.get_mut(l as usize) {
                *slot = Some(id);
            }
        }
    }
    first
        .iter()
        .enumerate()
        .filter_map(|(l, id)| {
            let id = (*id)?;
            let e = g.event(id);
            let what = match e.action {
                Action::Cas {
                    weak: true,
                    new: crate::CHOICE_MARK,
                    ..
                } => "a choice c11check explores both ways",
                Action::Cas {
                    lock: true,
                    take: false,
                    ..
                } => "a lock",
                Action::Cas { take: true, .. } => {
                    "a count of permits (a wait of a Condvar, RwLock, Barrier or channel)"
                }
                Action::Rmw {
                    op: RmwOp::RefInc | RmwOp::RefDec,
                    ..
                } => "a reference count (Arc)",
                // A compiled program's plain access is no UnsafeCell.
                _ if e.ord() == MemOrder::NonAtomic && matches!(site(id), Some(Site::Pc(_))) => {
                    "plain data"
                }
                _ if e.ord() == MemOrder::NonAtomic => "plain data (an UnsafeCell)",
                _ => "an atomic",
            };
            let at = site(id)
                .map(|s| format!(" first used at {s}"))
                .unwrap_or_default();
            Some(match made_text(names, l as u32) {
                Some(made) => format!("loc{l}: {made},{at}"),
                None => format!("loc{l}: {what}{at}"),
            })
        })
        .collect()
}

/// `an AtomicUsize made at src/lib.rs:4:9` for a location whose object
/// says what it is.
fn made_text(names: &[crate::report::LocationName], loc: u32) -> Option<String> {
    // `names` is in location order (see `Shared::location_names`).
    let i = names.binary_search_by_key(&loc, |n| n.loc.0).ok()?;
    made_of(&names[i])
}

/// [`made_text`] of one location's name.
fn made_of(name: &crate::report::LocationName) -> Option<String> {
    let (what, at) = name.made?;
    let article = if what.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    Some(format!("{article} {what} made at {at}"))
}

/// The legend of a report whose engine keeps no graph (the live one): a
/// line per location whose object says what it is, of those `shown`.
pub(crate) fn legend_from_names(
    names: &[crate::report::LocationName],
    shown: impl Fn(u32) -> bool,
) -> Vec<String> {
    names
        .iter()
        .filter(|n| shown(n.loc.0))
        .filter_map(|n| Some(format!("loc{}: {}", n.loc.0, made_of(n)?)))
        .collect()
}

/// `text` with the locations the program named called by their names.
pub(crate) fn renamed(text: &str, names: &[crate::report::LocationName]) -> String {
    rename_locations(text, &name_map(names))
}

/// The numbers `N` of the whole words `locN` in `text`.
pub(crate) fn mentioned_locations(text: &str) -> std::collections::HashSet<u32> {
    loc_words(text).map(|(_, n)| n).collect()
}

/// Each whole word `locN` of `text`: its byte range and `N`.
fn loc_words(text: &str) -> impl Iterator<Item = (std::ops::Range<usize>, u32)> + '_ {
    let bytes = text.as_bytes();
    // (A byte of a non-ASCII character counts as a letter.)
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || !b.is_ascii();
    text.match_indices("loc").filter_map(move |(i, _)| {
        let digits = bytes[i + 3..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = i + 3 + digits;
        let whole = (i == 0 || !word(bytes[i - 1])) && bytes.get(end).is_none_or(|&b| !word(b));
        let n = text[i + 3..end]
            .parse()
            .ok()
            .filter(|_| digits > 0 && whole)?;
        Some((i..end, n))
    })
}

fn name_map(names: &[crate::report::LocationName]) -> std::collections::HashMap<u32, &str> {
    names
        .iter()
        .filter_map(|n| Some((n.loc.0, n.name.as_ref()?.1.as_str())))
        .collect()
}

/// Calls the locations the program named by their names throughout `r`
/// (message, trace, legend, graph): `loc3` becomes `head`.
pub(crate) fn apply_names(r: &mut Report, names: &[crate::report::LocationName]) {
    let map = name_map(names);
    if map.is_empty() {
        return;
    }
    let rename = |text: &mut String| *text = rename_locations(text, &map);
    rename(&mut r.failure.message);
    r.trace.iter_mut().for_each(rename);
    r.locations.iter_mut().for_each(rename);
    rename(&mut r.dot);
}

/// `text` with each whole word `locN` whose `N` is in `names` replaced.
fn rename_locations(text: &str, names: &std::collections::HashMap<u32, &str>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (range, n) in loc_words(text) {
        if let Some(name) = names.get(&n) {
            out.push_str(&text[rest..range.start]);
            out.push_str(name);
            rest = range.end;
        }
    }
    out.push_str(&text[rest..]);
    out
}

/// The events of `g` in an order that respects program order, reads-from and
/// thread creation: the lowest thread whose next event is ready goes first.
pub fn replay_order(g: &ExecutionGraph) -> Vec<EventId> {
    let n = g.num_threads();
    let mut done = vec![0u32; n];
    let mut out = Vec::with_capacity(g.num_events());
    loop {
        let mut progress = false;
        for t in 0..n as u32 {
            if !g.is_started(t) && g.thread(t).parent.is_some() {
                let p = g.thread(t).parent.unwrap();
                if done[p.thread as usize] <= p.index {
                    continue;
                }
            }
            while done[t as usize] < g.thread_len(t) {
                let id = EventId::new(t, done[t as usize]);
                let e = g.event(id);
                let ready_rf =
                    e.rf.is_none_or(|w| w.is_init() || done[w.thread as usize] > w.index);
                let ready_join = match e.action {
                    Action::Join { child } => done[child as usize] == g.thread_len(child),
                    _ => true,
                };
                if !(ready_rf && ready_join) {
                    break;
                }
                out.push(id);
                done[t as usize] += 1;
                progress = true;
            }
        }
        if !progress {
            return out;
        }
    }
}

/// Encodes the choices of execution `g`: its events in replay order, each
/// read with the write it reads (`r` = the initial value, `!` = a weak CAS
/// that failed spuriously), each spawn with the number of its thread.
pub fn encode_replay(g: &ExecutionGraph) -> String {
    let mut parts = Vec::new();
    for id in replay_order(g) {
        let e = g.event(id);
        let mut s = id.thread.to_string();
        if let Some(w) = e.rf {
            if w.is_init() {
                s.push_str("<i");
            } else {
                s.push_str(&format!("<{}.{}", w.thread, w.index));
            }
            if e.spurious_fail {
                s.push('!');
            }
        }
        if let Action::Spawn { child } = e.action {
            s.push_str(&format!("^{child}"));
        }
        parts.push(s);
    }
    format!("c1:{}", compress_steps(&parts))
}

/// The longest group of steps [`compress_steps`] looks for repeats of.
const MAX_REPEATED_GROUP: usize = 8;

/// Joins replay steps with commas, writing a step repeated `n` times in a
/// row as `step*n` and a repeated group of steps as `(a,b)*n`: a thread
/// that spins until its step bound gives a string of a few dozen
/// characters, not tens of kilobytes.
fn compress_steps(parts: &[String]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        // The group length that covers the most steps from `i` (at least
        // three repeats; the shortest group on a tie).
        let mut best = (1, 1);
        for len in 1..=MAX_REPEATED_GROUP.min((parts.len() - i) / 3) {
            let group = &parts[i..i + len];
            let mut n = 1;
            while parts.get(i + n * len..i + (n + 1) * len) == Some(group) {
                n += 1;
            }
            if n >= 3 && len * n > best.0 * best.1 {
                best = (len, n);
            }
        }
        match best {
            (_, 1) => out.push(parts[i].clone()),
            (1, n) => out.push(format!("{}*{n}", parts[i])),
            (len, n) => out.push(format!("({})*{n}", parts[i..i + len].join(","))),
        }
        i += best.0 * best.1;
    }
    out.join(",")
}

/// Expands what [`compress_steps`] wrote into single steps.
fn expand_steps(body: &str) -> Result<Vec<&str>, String> {
    let mut steps = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let (group, after) = match rest.strip_prefix('(') {
            Some(inner) => {
                let close = inner
                    .find(')')
                    .ok_or_else(|| format!("replay string: `({inner}` has no closing `)`"))?;
                (&inner[..close], &inner[close + 1..])
            }
            None => {
                let end = rest.find([',', '*']).unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            }
        };
        let (count, after) = match after.strip_prefix('*') {
            Some(n) => {
                let end = n.find(',').unwrap_or(n.len());
                let count = n[..end]
                    .parse::<usize>()
                    .map_err(|_| format!("replay string: bad repeat count `*{}`", &n[..end]))?;
                (count, &n[end..])
            }
            None => (1, after),
        };
        for _ in 0..count {
            steps.extend(group.split(','));
        }
        rest = match after.strip_prefix(',') {
            Some(r) => r,
            None if after.is_empty() => after,
            None => return Err(format!("replay string: expected `,` before `{after}`")),
        };
    }
    Ok(steps)
}

/// A run of identical turns at the end of a thread's events (a loop that
/// repeats the same operations at the same source lines, reading the same
/// stores): what a spin loop that never tells c11check it waits does until
/// the step bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RepeatedTurn {
    /// The index of the first event of the first repeated turn.
    pub start: u32,
    /// Events per turn.
    pub len: u32,
    /// How many turns (at least three).
    pub turns: u32,
}

/// The longest run of at least three identical turns (of at most 64
/// events) that ends thread `t`'s events before index `end`.
pub fn repeated_turn(
    g: &ExecutionGraph,
    t: u32,
    end: u32,
    site: &dyn Fn(EventId) -> Option<Site>,
) -> Option<RepeatedTurn> {
    let events = &g.thread_events(t)[..end as usize];
    let sites: Vec<Option<Site>> = (0..end).map(|i| site(EventId::new(t, i))).collect();
    // Reading the same store, or the thread's own store as many events
    // back (a loop that stores and reads its store back).
    let same_source = |i: usize, j: usize| match (events[i].rf, events[j].rf) {
        (Some(a), Some(b)) if a.thread == t && b.thread == t && !a.is_init() && !b.is_init() => {
            i as i64 - a.index as i64 == j as i64 - b.index as i64
        }
        (a, b) => a == b,
    };
    let same = |i: usize, j: usize| {
        let (a, b) = (&events[i], &events[j]);
        a.action == b.action
            && same_source(i, j)
            && a.spurious_fail == b.spurious_fail
            && sites[i] == sites[j]
    };
    let n = events.len();
    let mut best: Option<RepeatedTurn> = None;
    for len in 1..=64.min(n / 3) {
        // The periodic stretch ends at `n`: it starts where an event first
        // differs from the one `len` later.
        let mut s = n - len;
        while s > 0 && same(s - 1, s - 1 + len) {
            s -= 1;
        }
        let turns = ((n - s) / len) as u32;
        if turns >= 3 && best.is_none_or(|b| turns * len as u32 > b.turns * b.len) {
            best = Some(RepeatedTurn {
                start: (n - turns as usize * len) as u32,
                len: len as u32,
                turns,
            });
        }
    }
    best
}

/// One step of a replay string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayStep {
    pub thread: u32,
    /// For a read: `None` = the initial value, else the write.
    pub source: Option<Option<EventId>>,
    pub spurious: bool,
    pub child: Option<u32>,
}

/// Parses a replay string made by [`encode_replay`].
/// Checks a replay string before a run uses it: an exhaustive run's
/// (`c1:...`) or a live random run's (`l1:<seed>[:uniform | :<depth>:<steps>][:strong]`).
pub fn check_replay(s: &str) -> Result<(), String> {
    let s = s.trim();
    if let Some(live) = s.strip_prefix("l1:") {
        let mut parts: Vec<&str> = live.split(':').collect();
        if parts.last() == Some(&"strong") {
            parts.pop();
        }
        let number = |p: &str| p.parse::<u64>().is_ok();
        let ok = match parts.as_slice() {
            [seed] => number(seed),
            [seed, "uniform"] => number(seed),
            [seed, depth, steps] => number(seed) && number(depth) && number(steps),
            _ => false,
        };
        return if ok {
            Ok(())
        } else {
            Err(
                "a random run's replay string is `l1:` and the iteration's seed (with \
                 `:uniform`, or PCT's `:<depth>:<steps>`, and `:strong` after it)"
                    .to_string(),
            )
        };
    }
    if !s.starts_with("c1:") {
        return Err(
            "a replay string starts with `c1:` (an exhaustive run's) or `l1:` \
                    (a random run's)"
                .to_string(),
        );
    }
    decode_replay(s).map(|_| ())
}

pub fn decode_replay(s: &str) -> Result<Vec<ReplayStep>, String> {
    let body = s
        .trim()
        .strip_prefix("c1:")
        .ok_or_else(|| "a replay string starts with `c1:`".to_string())?;
    let mut steps = Vec::new();
    if body.is_empty() {
        return Ok(steps);
    }
    for (i, part) in expand_steps(body)?.into_iter().enumerate() {
        let bad = || format!("replay string: step {} (`{part}`) is malformed", i + 1);
        let (head, child) = match part.split_once('^') {
            Some((h, c)) => (h, Some(c.parse::<u32>().map_err(|_| bad())?)),
            None => (part, None),
        };
        let (t, src) = match head.split_once('<') {
            Some((t, src)) => (t, Some(src)),
            None => (head, None),
        };
        let thread = t.parse::<u32>().map_err(|_| bad())?;
        let (source, spurious) = match src {
            None => (None, false),
            Some(src) => {
                let (src, spurious) = match src.strip_suffix('!') {
                    Some(s) => (s, true),
                    None => (src, false),
                };
                if src == "i" {
                    (Some(None), spurious)
                } else {
                    let (a, b) = src.split_once('.').ok_or_else(bad)?;
                    let id =
                        EventId::new(a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                    (Some(Some(id)), spurious)
                }
            }
        };
        steps.push(ReplayStep {
            thread,
            source,
            spurious,
            child,
        });
    }
    Ok(steps)
}

/// The execution graph as Graphviz: one cluster per thread (sb edges), rf
/// edges in green, synchronizes-with in blue (bold), mo between writes in red.
pub fn to_dot(
    g: &ExecutionGraph,
    a: Option<&Analysis<'_>>,
    site: &dyn Fn(EventId) -> Option<Site>,
) -> String {
    let name = |id: EventId| {
        if id.is_init() {
            format!("init{}", id.index)
        } else {
            format!("e{}_{}", id.thread, id.index)
        }
    };
    let mut s = String::from(
        "digraph execution {\n  rankdir=TB;\n  node [shape=box, fontname=monospace];\n",
    );
    for t in 0..g.num_threads() as u32 {
        s.push_str(&format!(
            "  subgraph cluster_t{t} {{\n    label=\"thread {t}\";\n"
        ));
        for i in 0..g.thread_len(t) {
            let id = EventId::new(t, i);
            let label = describe_event(g, id, site(id)).replace('"', "'");
            s.push_str(&format!("    {} [label=\"{}\"];\n", name(id), label));
            if i > 0 {
                s.push_str(&format!(
                    "    {} -> {} [label=sb];\n",
                    name(EventId::new(t, i - 1)),
                    name(id)
                ));
            }
        }
        s.push_str("  }\n");
    }
    for (id, e) in g.events() {
        if let Some(w) = e.rf {
            if w.is_init() {
                s.push_str(&format!(
                    "  {} [label=\"init loc{} = {}\"];\n",
                    name(w),
                    w.index,
                    g.init_value(c11check_model::Loc(w.index))
                ));
            }
            s.push_str(&format!(
                "  {} -> {} [label=rf, color=darkgreen];\n",
                name(w),
                name(id)
            ));
        }
    }
    if let Some(a) = a {
        for lm in &a.locs {
            for ci in 0..lm.num_chains() {
                let chain = lm.chain(ci);
                for pair in chain.windows(2) {
                    s.push_str(&format!(
                        "  {} -> {} [label=mo, color=red];\n",
                        name(lm.writes[pair[0]]),
                        name(lm.writes[pair[1]])
                    ));
                }
                // Forced order between chains, transitively reduced, without
                // the initial write (it is first anyway).
                let succ: Vec<usize> = lm.order.iter_row(ci).collect();
                for &cj in &succ {
                    let implied = succ.iter().any(|&ck| ck != cj && lm.order.get(ck, cj));
                    let last = lm.writes[*chain.last().unwrap()];
                    let first = lm.writes[lm.chain(cj)[0]];
                    if !implied && !last.is_init() {
                        s.push_str(&format!(
                            "  {} -> {} [label=mo, color=red, style=dashed];\n",
                            name(last),
                            name(first)
                        ));
                    }
                }
            }
        }
        for (id, e) in g.events() {
            if let Some(w) = e.rf {
                if !w.is_init()
                    && w.thread != id.thread
                    && a.hb(w, id)
                    && e.ord().is_acquire()
                    && g.event(w).ord().is_release()
                {
                    s.push_str(&format!(
                        "  {} -> {} [label=sw, color=blue, style=bold];\n",
                        name(w),
                        name(id)
                    ));
                }
            }
        }
    }
    s.push_str("}\n");
    s
}

/// "thread 1, thread 3": the threads a message names.
pub(crate) fn thread_list(threads: &[u32]) -> String {
    threads
        .iter()
        .map(|t| format!("thread {t}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a thread that reached its step bound repeating `turn` is doing, and
/// what to do about it.
pub(crate) fn spin_message(
    g: &ExecutionGraph,
    t: u32,
    turn: RepeatedTurn,
    site: &dyn Fn(EventId) -> Option<crate::Site>,
) -> String {
    let first = EventId::new(t, turn.start);
    let at = site(first).map(|s| format!(" at {s}")).unwrap_or_default();
    let ops: Vec<String> = (turn.start..turn.start + turn.len.min(4))
        .map(|i| {
            let id = EventId::new(t, i);
            let d = describe_event(g, id, site(id));
            // Without the event's name: it is the same in every turn.
            d.split_once(' ')
                .map(|(_, rest)| rest.to_string())
                .unwrap_or(d)
        })
        .collect();
    let more = if turn.len > 4 { "\n      ..." } else { "" };
    let writes =
        (turn.start..turn.start + turn.len).any(|i| g.event(EventId::new(t, i)).is_write());
    format!(
        "thread {t} {}{at} without `spin_loop()` or `yield_now()`: the same turn repeated {} times{}:\n      {}{more}\n  {}",
        if writes { "loops" } else { "spins" },
        turn.turns,
        if writes {
            ", up to the step bound"
        } else {
            " (c11check stops a loop that only reads after a hundredth of the step bound of identical turns)"
        },
        ops.join("\n      "),
        SPIN_ADVICE
    )
}

/// What a loop that ran into the step bound repeating one turn may be, and
/// what to do about it.
const SPIN_ADVICE: &str = "Either nothing will ever end this loop (a livelock), or another thread will, and c11check, which cannot tell that the loop waits, would explore every number of turns up to the step bound. Call `c11check::hint::spin_loop()` (or `c11check::thread::yield_now()`) in the loop: c11check then cuts each turn that only reads again what the turn before read, explores the executions where another thread's store ends the wait, and reports a wait nothing can end as a livelock. If the loop is just long, raise the bound (`Builder::max_steps`, C11CHECK_MAX_STEPS).";

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn repeated_steps_are_written_once_with_a_count() {
        let mut parts = steps(&["0<i", "0^1"]);
        parts.extend(std::iter::repeat_n("0<i".to_string(), 9998));
        parts.extend(steps(&["0", "1<0.0"]));
        for _ in 0..5 {
            parts.extend(steps(&["1<i", "1<0.3!"]));
        }
        parts.push("1".into());
        let body = compress_steps(&parts);
        assert_eq!(body, "0<i,0^1,0<i*9998,0,1<0.0,(1<i,1<0.3!)*5,1");
        assert_eq!(expand_steps(&body).unwrap(), parts);
        // Two repeats are left as they are.
        let twice = steps(&["2<i", "2<i", "3"]);
        assert_eq!(compress_steps(&twice), "2<i,2<i,3");
        assert_eq!(expand_steps("2<i,2<i,3").unwrap(), twice);
        assert!(decode_replay("c1:0<i*x").is_err());
        assert!(decode_replay("c1:(0<i,1").is_err());
        assert_eq!(decode_replay("c1:0*3").unwrap().len(), 3);
    }
}

/// What reports know of one location beyond its number.
#[derive(Clone, Debug)]
pub(crate) struct LocationName {
    pub loc: Loc,
    /// The name the program gave it (with the label's index), if any.
    pub name: Option<(usize, String)>,
    /// Its type and where it was made, if its cell says.
    pub made: Option<Made>,
}

/// What an object is (a type name: `AtomicUsize`) and where it was made.
pub(crate) type Made = (&'static str, Site);

/// What the weak compare-exchange of a choice the facade lets the explorer
/// make both ways (a condition variable's spurious wake-up, a timed wait's
/// time-out) would write: reports show it as that choice, not as a
/// compare-exchange the program never made.
pub const CHOICE_MARK: c11check_model::Value = 0x0C11_C0C4_01CE;
