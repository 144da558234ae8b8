#!/usr/bin/env python3
"""Writes c11check's own litmus suite (litmus/*.litmus).

Each test records what it must show (@observation, optionally per model, @race,
@states, @robust) and why, in `@` lines the test suite checks. Expectations come from
the memory-model rules, not from running c11check. Run from the repository
root: python3 tools/gen_litmus.py
"""
import os

O = {"rlx": "memory_order_relaxed", "rel": "memory_order_release", "acq": "memory_order_acquire",
     "sc": "memory_order_seq_cst", "ar": "memory_order_acq_rel", "con": "memory_order_consume"}

def W(x, v, o): return f"atomic_store_explicit({x}, {v}, {O[o]});"
def R(r, x, o): return f"int {r} = atomic_load_explicit({x}, {O[o]});"
def F(o): return f"atomic_thread_fence({O[o]});"
def LOCK(l): return f"spin_lock({l});"
def UNLOCK(l): return f"spin_unlock({l});"

TESTS = []

def test(name, threads, cond, obs, why, race=None, states=None, init=None, obs_model=None, locs_na=(),
         robust=None):
    TESTS.append(dict(name=name, threads=threads, cond=cond, obs=obs, why=why, race=race,
                      states=states, init=init, obs_model=obs_model or {}, locs_na=locs_na,
                      robust=robust or {}))

# The classic shapes: their only cycle of po, rf, mo and fr over atomic
# accesses is the one the condition names, so a shape is robust against SC
# exactly when its condition is never observed (and a violation is visible
# in the final state).
SHAPES = ("SB", "MP", "LB", "IRIW", "WRC", "ISA2", "RWC", "WWC", "R", "S", "2")

def robust_of(t, obs):
    """@robust for a test whose observation is `obs`: the shape rule, else yes
    (the other families' accesses are to one location, where coherence
    forbids a cycle, or non-atomic, which robustness leaves to race
    detection, or ordered by locks), unless the test says otherwise."""
    if t["name"].split("+")[0] in SHAPES:
        return "yes" if obs == "Never" else "no"
    return "yes"

def used_locations(lines, candidates=("x", "y", "z", "w", "d", "zero", "zero2", "l", "m")):
    """Locations named (as whole words) in `lines`, register names aside."""
    import re
    text = "\n".join(l.replace("int r", "int _r") for l in lines)
    return [v for v in candidates if re.search(r"\b" + v + r"\b", text)]

# --- Store buffering
for a, b, obs, why in [
    ("rlx", "rlx", "Sometimes", "relaxed stores may be seen late by the other thread"),
    ("rel", "acq", "Sometimes", "release/acquire does not order a store before a later load"),
    ("sc", "sc", "Never", "seq_cst accesses are totally ordered (psc acyclic)"),
    ("sc", "rlx", "Sometimes", "relaxed loads are not in psc: the cycle needs seq_cst on both sides"),
    ("rlx", "sc", "Sometimes", "relaxed stores are not in psc: the cycle needs seq_cst on both sides"),
]:
    test(f"SB+{a}+{b}", [[W("x", 1, a), R("r0", "y", b)], [W("y", 1, a), R("r0", "x", b)]],
         "0:r0=0 /\\ 1:r0=0", obs, why)
test("SB+fencescs", [[W("x", 1, "rlx"), F("sc"), R("r0", "y", "rlx")], [W("y", 1, "rlx"), F("sc"), R("r0", "x", "rlx")]],
     "0:r0=0 /\\ 1:r0=0", "Never", "two seq_cst fences are ordered by psc, forbidding both stale reads")
test("SB+fencesc+po", [[W("x", 1, "rlx"), F("sc"), R("r0", "y", "rlx")], [W("y", 1, "rlx"), R("r0", "x", "rlx")]],
     "0:r0=0 /\\ 1:r0=0", "Sometimes", "one seq_cst fence alone orders nothing across threads")
test("SB+sc+fencesc", [[W("x", 1, "sc"), R("r0", "y", "sc")], [W("y", 1, "rlx"), F("sc"), R("r0", "x", "rlx")]],
     "0:r0=0 /\\ 1:r0=0", "Never", "a seq_cst fence is ordered with seq_cst accesses of the other thread (RC11 psc)")
test("SB+rlx", [[W("x", 1, "rlx"), R("r0", "y", "rlx")], [W("y", 1, "rlx"), R("r0", "x", "rlx")]],
     "0:r0=0 /\\ 1:r0=0", "Sometimes", "plain relaxed store buffering", states="0:r0=0; 1:r0=0 | 0:r0=0; 1:r0=1 | 0:r0=1; 1:r0=0 | 0:r0=1; 1:r0=1")

# --- Message passing
for a, b, obs, why in [
    ("rlx", "rlx", "Sometimes", "no synchronisation: the flag may be seen before the data"),
    ("rel", "acq", "Never", "the acquire load synchronises with the release store"),
    ("rel", "rlx", "Sometimes", "a relaxed flag load does not acquire"),
    ("rlx", "acq", "Sometimes", "a relaxed flag store does not release"),
    ("sc", "sc", "Never", "seq_cst accesses release and acquire"),
    ("rel", "con", "Never", "consume is treated as acquire"),
    ("rel", "sc", "Never", "a seq_cst load acquires"),
    ("sc", "acq", "Never", "a seq_cst store releases"),
]:
    test(f"MP+{a}+{b}", [[W("x", 1, "rlx"), W("y", 1, a)], [R("r0", "y", b), R("r1", "x", "rlx")]],
         "1:r0=1 /\\ 1:r1=0", obs, why)
test("MP+fences", [[W("x", 1, "rlx"), F("rel"), W("y", 1, "rlx")], [R("r0", "y", "rlx"), F("acq"), R("r1", "x", "rlx")]],
     "1:r0=1 /\\ 1:r1=0", "Never", "release fence before the flag store, acquire fence after the flag load synchronise")
test("MP+fencerel+po", [[W("x", 1, "rlx"), F("rel"), W("y", 1, "rlx")], [R("r0", "y", "rlx"), R("r1", "x", "rlx")]],
     "1:r0=1 /\\ 1:r1=0", "Sometimes", "a release fence needs an acquire on the reading side")
test("MP+rel+fenceacq", [[W("x", 1, "rlx"), W("y", 1, "rel")], [R("r0", "y", "rlx"), F("acq"), R("r1", "x", "rlx")]],
     "1:r0=1 /\\ 1:r1=0", "Never", "collapsed form: release store synchronises with relaxed load + acquire fence")
test("MP+fencerel+acq", [[W("x", 1, "rlx"), F("rel"), W("y", 1, "rlx")], [R("r0", "y", "acq"), R("r1", "x", "rlx")]],
     "1:r0=1 /\\ 1:r1=0", "Never", "collapsed form: release fence + relaxed store synchronises with an acquire load")
test("MP+fenceacq-before", [[W("x", 1, "rlx"), W("y", 1, "rel")], [F("acq"), R("r0", "y", "rlx"), R("r1", "x", "rlx")]],
     "1:r0=1 /\\ 1:r1=0", "Sometimes", "an acquire fence before the flag load does not acquire it")
test("MP+na+rel+acq", [["*x = 1;", W("y", 1, "rel")], [R("r0", "y", "acq"), "int r1 = -1;", "if (r0 == 1) { r1 = *x; }"]],
     "1:r0=1 /\\ 1:r1=0", "Never", "guarded non-atomic read after synchronisation: no race",
     race=False, locs_na=("x",), states="1:r0=0; 1:r1=-1 | 1:r0=1; 1:r1=1")
test("MP+na+rlx", [["*x = 1;", W("y", 1, "rlx")], [R("r0", "y", "rlx"), "int r1 = -1;", "if (r0 == 1) { r1 = *x; }"]],
     "1:r0=1 /\\ 1:r1=0", "Sometimes", "relaxed flag: the non-atomic read races with the write", race=True, locs_na=("x",),
     robust={"": "yes"})  # its one atomic location cannot close a cycle; the race is reported as such
test("MP+na+unguarded", [["*x = 1;", W("y", 1, "rel")], [R("r0", "y", "acq"), "int r1 = *x;"]],
     "1:r0=1 /\\ 1:r1=0", "Never", "when the flag is not seen, the unguarded read races", race=True, locs_na=("x",))

# --- Load buffering (no out-of-thin-air: po ∪ rf acyclic)
for a, b in [("rlx", "rlx"), ("acq", "rel"), ("sc", "sc")]:
    test(f"LB+{a}+{b}", [[R("r0", "x", a), W("y", 1, b)], [R("r0", "y", a), W("x", 1, b)]],
         "0:r0=1 /\\ 1:r0=1", "Never", "po ∪ rf must be acyclic: a load cannot read a store that depends on it")
test("LB+datas", [[R("r0", "x", "rlx"), "atomic_store_explicit(y, r0, memory_order_relaxed);"],
                  [R("r0", "y", "rlx"), "atomic_store_explicit(x, r0, memory_order_relaxed);"]],
     "0:r0=42 /\\ 1:r0=42", "Never", "out-of-thin-air value", states="0:r0=0; 1:r0=0")

# --- IRIW
def iriw(o_w, o_r, fence=None):
    mid = [F(fence)] if fence else []
    return [[W("x", 1, o_w)], [W("y", 1, o_w)],
            [R("r0", "x", o_r)] + mid + [R("r1", "y", o_r)],
            [R("r0", "y", o_r)] + mid + [R("r1", "x", o_r)]]
IRIW_C = "2:r0=1 /\\ 2:r1=0 /\\ 3:r0=1 /\\ 3:r1=0"
test("IRIW+sc", iriw("sc", "sc"), IRIW_C, "Never", "seq_cst: all threads agree on the order of the two stores")
test("IRIW+rel+acq", iriw("rel", "acq"), IRIW_C, "Sometimes", "release/acquire is not multi-copy atomic")
test("IRIW+rlx", iriw("rlx", "rlx"), IRIW_C, "Sometimes", "relaxed readers may disagree")
test("IRIW+fencescs", iriw("rlx", "rlx", "sc"), IRIW_C, "Never", "seq_cst fences between the reads restore agreement")
test("IRIW+sc+acqreads", iriw("sc", "acq"), IRIW_C, "Sometimes", "acquire reads are not in psc")

# --- WRC, ISA2, RWC, WWC, R, S, 2+2W
test("WRC+rlx", [[W("x", 1, "rlx")], [R("r0", "x", "rlx"), W("y", 1, "rlx")], [R("r1", "y", "rlx"), R("r2", "x", "rlx")]],
     "1:r0=1 /\\ 2:r1=1 /\\ 2:r2=0", "Sometimes", "relaxed: no causality")
test("WRC+rel+acq", [[W("x", 1, "rlx")], [R("r0", "x", "rlx"), W("y", 1, "rel")], [R("r1", "y", "acq"), R("r2", "x", "rlx")]],
     "1:r0=1 /\\ 2:r1=1 /\\ 2:r2=0", "Never", "CoRR: P1's read of x happens before P2's, which cannot read an older write")
test("ISA2+rel+acq", [[W("x", 1, "rlx"), W("y", 1, "rel")], [R("r0", "y", "acq"), W("z", 1, "rel")], [R("r1", "z", "acq"), R("r2", "x", "rlx")]],
     "1:r0=1 /\\ 2:r1=1 /\\ 2:r2=0", "Never", "happens-before is transitive across two synchronisations")
test("ISA2+rlx", [[W("x", 1, "rlx"), W("y", 1, "rlx")], [R("r0", "y", "rlx"), W("z", 1, "rlx")], [R("r1", "z", "rlx"), R("r2", "x", "rlx")]],
     "1:r0=1 /\\ 2:r1=1 /\\ 2:r2=0", "Sometimes", "relaxed: no happens-before")
test("RWC+sc", [[W("x", 1, "sc")], [R("r0", "x", "sc"), R("r1", "y", "sc")], [W("y", 1, "sc"), R("r2", "x", "sc")]],
     "1:r0=1 /\\ 1:r1=0 /\\ 2:r2=0", "Never", "seq_cst forbids the cycle")
test("RWC+rlx", [[W("x", 1, "rlx")], [R("r0", "x", "rlx"), R("r1", "y", "rlx")], [W("y", 1, "rlx"), R("r2", "x", "rlx")]],
     "1:r0=1 /\\ 1:r1=0 /\\ 2:r2=0", "Sometimes", "relaxed allows it")
test("RWC+fencescs", [[W("x", 1, "rlx")], [R("r0", "x", "rlx"), F("sc"), R("r1", "y", "rlx")], [W("y", 1, "rlx"), F("sc"), R("r2", "x", "rlx")]],
     "1:r0=1 /\\ 1:r1=0 /\\ 2:r2=0", "Never", "pscF orders the fences both ways through eco")
test("WWC+rel+acq", [[W("x", 2, "rel")], [R("r0", "x", "acq"), W("y", 1, "rel")], [R("r1", "y", "acq"), W("x", 1, "rlx")]],
     "x=2 /\\ 1:r0=2 /\\ 2:r1=1", "Never", "x=2 happens before x=1, so it is earlier in mo")
test("WWC+rlx", [[W("x", 2, "rlx")], [R("r0", "x", "rlx"), W("y", 1, "rlx")], [R("r1", "y", "rlx"), W("x", 1, "rlx")]],
     "x=2 /\\ 1:r0=2 /\\ 2:r1=1", "Sometimes", "no happens-before between the two stores to x")
test("R+sc", [[W("x", 1, "sc"), W("y", 1, "sc")], [W("y", 2, "sc"), R("r0", "x", "sc")]],
     "y=2 /\\ 1:r0=0", "Never", "seq_cst: mo and rb edges close a psc cycle")
test("R+rel+acq", [[W("x", 1, "rel"), W("y", 1, "rel")], [W("y", 2, "rel"), R("r0", "x", "acq")]],
     "y=2 /\\ 1:r0=0", "Sometimes", "release/acquire allows R (no seq_cst)")
test("S+rel+acq", [[W("x", 2, "rlx"), W("y", 1, "rel")], [R("r0", "y", "acq"), W("x", 1, "rlx")]],
     "x=2 /\\ 1:r0=1", "Never", "x=2 happens before x=1 (CoWW)")
test("S+rlx", [[W("x", 2, "rlx"), W("y", 1, "rlx")], [R("r0", "y", "rlx"), W("x", 1, "rlx")]],
     "x=2 /\\ 1:r0=1", "Sometimes", "relaxed: the stores to x are unordered")
test("2+2W+rlx", [[W("x", 1, "rlx"), W("y", 2, "rlx")], [W("y", 1, "rlx"), W("x", 2, "rlx")]],
     "x=1 /\\ y=1", "Sometimes", "relaxed stores to different locations are unordered")
test("2+2W+rel", [[W("x", 1, "rel"), W("y", 2, "rel")], [W("y", 1, "rel"), W("x", 2, "rel")]],
     "x=1 /\\ y=1", "Sometimes", "release stores alone create no happens-before")
test("2+2W+sc", [[W("x", 1, "sc"), W("y", 2, "sc")], [W("y", 1, "sc"), W("x", 2, "sc")]],
     "x=1 /\\ y=1", "Never", "seq_cst: mo agrees with psc")

# --- Coherence
test("CoRR", [[W("x", 1, "rlx")], [R("r0", "x", "rlx"), R("r1", "x", "rlx")]],
     "1:r0=1 /\\ 1:r1=0", "Never", "read-read coherence", states="1:r0=0; 1:r1=0 | 1:r0=0; 1:r1=1 | 1:r0=1; 1:r1=1")
test("CoRR2", [[W("x", 1, "rlx"), W("x", 2, "rlx")], [R("r0", "x", "rlx"), R("r1", "x", "rlx")]],
     "1:r0=2 /\\ 1:r1=1", "Never", "reads of one thread follow modification order")
test("CoRR+2W", [[W("x", 1, "rlx")], [W("x", 2, "rlx")], [R("r0", "x", "rlx"), R("r1", "x", "rlx")], [R("r0", "x", "rlx"), R("r1", "x", "rlx")]],
     "2:r0=1 /\\ 2:r1=2 /\\ 3:r0=2 /\\ 3:r1=1", "Never", "all threads see one modification order per location")
test("CoWR", [[W("x", 1, "rlx"), R("r0", "x", "rlx")], [W("x", 2, "rlx")]],
     "0:r0=2 /\\ x=1", "Never", "a thread reads its own store or a later one")
test("CoRW", [[R("r0", "x", "rlx"), W("x", 1, "rlx")], [W("x", 2, "rlx")]],
     "0:r0=2 /\\ x=2", "Never", "a store after a read is later in mo than what was read")
test("CoWW", [[W("x", 1, "rlx"), W("x", 2, "rlx")]], "x=1", "Never", "program order of stores to one location is mo",
     states="[x]=2")
test("CoWR+own", [[W("x", 1, "rlx"), R("r0", "x", "rlx")]], "0:r0=0", "Never", "a thread never reads past its own store")

# --- RMW atomicity
test("RMW+fetch_add", [["int r0 = atomic_fetch_add_explicit(x, 1, memory_order_relaxed);"]] * 2,
     "x=1", "Never", "fetch_add is atomic: no update is lost",
     states="0:r0=0; 1:r0=1; [x]=2 | 0:r0=1; 1:r0=0; [x]=2")
TESTS[-1]["cond"] = "x=1"
TESTS[-1]["extra_locs"] = "0:r0; 1:r0;"
test("RMW+exchange", [["int r0 = atomic_exchange_explicit(x, 1, memory_order_relaxed);"], ["int r0 = atomic_exchange_explicit(x, 2, memory_order_relaxed);"]],
     "0:r0=0 /\\ 1:r0=0", "Never", "two exchanges cannot both read the initial value")
test("RMW+cas", [["int r0 = atomic_compare_exchange_strong_explicit(x, zero, 1, memory_order_relaxed, memory_order_relaxed);"],
                 ["int r0 = atomic_compare_exchange_strong_explicit(x, zero2, 2, memory_order_relaxed, memory_order_relaxed);"]],
     "0:r0=1 /\\ 1:r0=1", "Never", "at most one CAS from 0 can succeed", states="0:r0=0; 1:r0=1 | 0:r0=1; 1:r0=0",
     init="[x] = 0; [zero] = 0; [zero2] = 0;")
test("RMW+cas+weak", [["int r0 = atomic_compare_exchange_weak_explicit(x, zero, 1, memory_order_relaxed, memory_order_relaxed);"]],
     "0:r0=0", "Sometimes", "a weak CAS may fail although it reads the expected value",
     states="0:r0=0; [x]=0 | 0:r0=1; [x]=1", init="[x] = 0; [zero] = 0;")
TESTS[-1]["extra_locs"] = "x;"
test("RMW+cas+weak+race", [["int r0 = atomic_compare_exchange_weak_explicit(x, zero, 1, memory_order_relaxed, memory_order_relaxed);"],
                           ["int r0 = atomic_compare_exchange_weak_explicit(x, zero2, 2, memory_order_relaxed, memory_order_relaxed);"]],
     "0:r0=1 /\\ 1:r0=1", "Never", "spurious failures aside, at most one CAS from 0 succeeds",
     states="0:r0=0; 1:r0=0 | 0:r0=0; 1:r0=1 | 0:r0=1; 1:r0=0", init="[x] = 0; [zero] = 0; [zero2] = 0;")
test("RMW+fetch_add+store", [["int r0 = atomic_fetch_add_explicit(x, 1, memory_order_relaxed);"], [W("x", 5, "rlx")]],
     "0:r0=0 /\\ x=1", "Never", "an RMW reading 0 is next after the initial write in mo, so the store ends last",
     states="0:r0=0; [x]=5 | 0:r0=5; [x]=6")
test("RMW+steal+SB+sc", [[W("x", 5, "sc"), R("r0", "y", "sc")],
                         ["int r0 = atomic_fetch_add_explicit(x, 1, memory_order_relaxed);"],
                         [W("y", 1, "sc"), "int r0 = atomic_fetch_add_explicit(x, 1, memory_order_seq_cst);"]],
     "0:r0=0 /\\ 1:r0=1 /\\ 2:r0=0 /\\ x=5", "Never",
     "P2's RMW before the store of 5 in mo, and the load of y before the store of 1, close a psc cycle "
     "(x=5, the store before the load, the store of 1, the RMW); P1's relaxed RMW changes nothing of it. "
     "Two of the outcomes are reached only by P2's RMW stealing the source of P1's (revisit graphs that "
     "the seq_cst search judges)",
     states="0:r0=0; 1:r0=0; 2:r0=5; [x]=6 | 0:r0=0; 1:r0=5; 2:r0=6; [x]=7 | 0:r0=0; 1:r0=6; 2:r0=5; [x]=7 | "
            "0:r0=1; 1:r0=0; 2:r0=1; [x]=5 | 0:r0=1; 1:r0=0; 2:r0=5; [x]=6 | 0:r0=1; 1:r0=1; 2:r0=0; [x]=5 | "
            "0:r0=1; 1:r0=5; 2:r0=0; [x]=6 | 0:r0=1; 1:r0=5; 2:r0=6; [x]=7 | 0:r0=1; 1:r0=6; 2:r0=5; [x]=7")
test("RMW+3x+fetch_add", [["int r0 = atomic_fetch_add_explicit(x, 1, memory_order_relaxed);"]] * 3,
     "x=3", "Always", "three atomic increments always sum up")

# --- Release sequences
test("RS+rmw", [["*d = 1;", W("y", 1, "rel")], ["int r0 = atomic_fetch_add_explicit(y, 1, memory_order_relaxed);"],
                [R("r0", "y", "acq"), "int r1 = -1;", "if (r0 == 2) { r1 = *d; }"]],
     "2:r0=2 /\\ 2:r1=0", "Never", "an RMW reading the release store continues its release sequence", race=False, locs_na=("d",))
test("RS+samethread", [["*d = 1;", W("y", 1, "rel"), W("y", 2, "rlx")], [R("r0", "y", "acq"), "int r1 = -1;", "if (r0 == 2) { r1 = *d; }"]],
     "1:r0=2 /\\ 1:r1=0", "Sometimes", "C++20: a later relaxed store of the same thread does not continue the release sequence",
     race=True, locs_na=("d",), obs_model={"rc11": ("Never", False)})
test("RS+otherthread", [["*d = 1;", W("y", 1, "rel")], [W("y", 2, "rlx")], [R("r0", "y", "acq"), "int r1 = -1;", "if (r0 == 2) { r1 = *d; }"]],
     "2:r0=2 /\\ 2:r1=0", "Sometimes", "a store of another thread never continues a release sequence", race=True, locs_na=("d",))
test("RS+fence+rmw", [["*d = 1;", F("rel"), W("y", 1, "rlx")], ["int r0 = atomic_fetch_add_explicit(y, 1, memory_order_relaxed);"],
                      [R("r0", "y", "acq"), "int r1 = -1;", "if (r0 == 2) { r1 = *d; }"]],
     "2:r0=2 /\\ 2:r1=0", "Never", "a release fence heads the sequence of the relaxed store, continued by the RMW", race=False, locs_na=("d",))
test("RS+rmw+chain", [["*d = 1;", W("y", 1, "rel")], ["int r0 = atomic_fetch_add_explicit(y, 1, memory_order_relaxed);"],
                      ["int r0 = atomic_fetch_add_explicit(y, 1, memory_order_relaxed);"],
                      [R("r0", "y", "acq"), "int r1 = -1;", "if (r0 == 3) { r1 = *d; }"]],
     "3:r0=3 /\\ 3:r1=0", "Never", "RMWs reading RMWs continue the release sequence transitively", race=False, locs_na=("d",))
test("RS+rmw+acqfence", [["*d = 1;", W("y", 1, "rel")], ["int r0 = atomic_fetch_add_explicit(y, 1, memory_order_relaxed);"],
                         [R("r0", "y", "rlx"), F("acq"), "int r1 = -1;", "if (r0 == 2) { r1 = *d; }"]],
     "2:r0=2 /\\ 2:r1=0", "Never", "collapsed acquire side on a release sequence", race=False, locs_na=("d",))

# --- Non-atomic races
test("Race+WR", [["*x = 1;"], ["int r0 = *x;"]], "1:r0=1", "Sometimes", "unordered non-atomic write and read race",
     race=True, locs_na=("x",))
test("Race+WW", [["*x = 1;"], ["*x = 2;"]], "x=1", "Sometimes", "unordered non-atomic writes race", race=True, locs_na=("x",))
test("Race+mixed", [["*x = 1;"], [R("r0", "x", "rlx")]], "1:r0=1", "Sometimes",
     "a non-atomic write races with an atomic read", race=True, locs_na=())
test("NoRace+samethread", [["*x = 1;", "int r0 = *x;"]], "0:r0=1", "Always", "accesses of one thread never race",
     race=False, locs_na=("x",))
test("NoRace+atomics", [[W("x", 1, "rlx")], [R("r0", "x", "rlx")]], "1:r0=1", "Sometimes",
     "atomic accesses never race", race=False)
test("NoRace+lock-like", [["*d = 1;", W("y", 1, "rel")],
                          ["int r0 = atomic_exchange_explicit(y, 2, memory_order_acq_rel);", "int r1 = -1;", "if (r0 == 1) { r1 = *d; }"]],
     "1:r0=1 /\\ 1:r1=0", "Never", "acq_rel exchange acquires the release store", race=False, locs_na=("d",))

def render(t):
    init = t.get("init")
    body_all = [l for th in t["threads"] for l in th]
    if init is None:
        init = " ".join(f"[{v}] = 0;" for v in used_locations(body_all))
    out = [f"C {t['name']}", ""]
    lines = [f"@observation {t['obs']}"]
    for m, (o, race) in t["obs_model"].items():
        lines.append(f"@observation.{m} {o}")
        lines.append(f"@race.{m} {'yes' if race else 'no'}")
    if t["race"] is not None:
        lines.append(f"@race {'yes' if t['race'] else 'no'}")
    elif not t["obs_model"]:
        lines.append("@race no")
    if t["states"]:
        lines.append(f"@states {t['states']}")
    lines.append(f"@robust {t['robust'].get('', robust_of(t, t['obs']))}")
    for m, (o, _) in t["obs_model"].items():
        if m not in t["robust"]:
            lines.append(f"@robust.{m} {robust_of(t, o)}")
    for m, r in t["robust"].items():
        if m:
            lines.append(f"@robust.{m} {r}")
    lines.append(f"@why {t['why']}")
    out.append("(* " + "\n   ".join(lines) + " *)")
    out.append("")
    out.append("{ " + init + " }")
    out.append("")
    for i, th in enumerate(t["threads"]):
        names = used_locations(th)
        ps = ", ".join((f"volatile int* {v}" if v in t["locs_na"] else f"atomic_int* {v}") for v in names)
        out.append(f"P{i} ({ps}) {{")
        for l in th:
            out.append("  " + l)
        out.append("}")
        out.append("")
    if t.get("extra_locs"):
        out.append(f"locations [{t['extra_locs']}]")
    out.append(f"exists ({t['cond']})")
    return "\n".join(out) + "\n"

# --- Locks (spin_lock = acquire compare-exchange 0 -> 1 that waits while held,
# spin_unlock = release store of 0)
test("LOCK+counter", [[LOCK("l"), "int r0 = *x;", "*x = r0 + 1;", UNLOCK("l")]] * 2,
     "[x]=1", "Never", "critical sections are ordered, so no increment is lost",
     race=False, states="[x]=2", locs_na=("x",))
test("LOCK+MP", [[LOCK("l"), "*x = 1;", UNLOCK("l")], [LOCK("l"), "int r0 = *x;", UNLOCK("l")]],
     "1:r0=0", "Sometimes", "either critical section may come first; each sees all of the other",
     race=False, states="1:r0=0 | 1:r0=1", locs_na=("x",))
test("LOCK+unprotected", [["*x = 1;"], [LOCK("l"), "int r0 = *x;", UNLOCK("l")]],
     "1:r0=0", "Sometimes", "a lock only orders accesses made under it",
     race=True, locs_na=("x",))
test("LOCK+trylock", [["int r0 = spin_trylock(l);"], ["int r0 = spin_trylock(l);"]],
     "0:r0=1 /\\ 1:r0=1", "Never", "two trylocks cannot both take a free lock",
     states="0:r0=0; 1:r0=1 | 0:r0=1; 1:r0=0")
test("LOCK+ABBA", [[LOCK("l"), LOCK("m"), UNLOCK("m"), UNLOCK("l")], [LOCK("m"), LOCK("l"), UNLOCK("l"), UNLOCK("m")]],
     "[l]=0 /\\ [m]=0", "Always", "executions that deadlock never complete; every complete one releases both locks")

# --- Robustness against SC (checked with `c11check litmus --robustness`; the
# observation lines are for the ordinary run)
def WAIT(x, v): return f"while (atomic_load_explicit({x}, memory_order_relaxed) != {v}) {{}}"
test("ROB+wait+SB-flags", [[W("x", 1, "rlx"), WAIT("y", 1)], [W("y", 1, "rlx"), WAIT("x", 1)]],
     "x=1 /\\ y=1", "Always",
     "each thread waits for the other's flag: the turns that saw 0 are left out, and what is left is SC",
     robust={"": "yes"})
test("ROB+wait+SB-zero", [[W("x", 1, "rlx"), WAIT("y", 0)], [W("y", 1, "rlx"), WAIT("x", 0)]],
     "x=1 /\\ y=1", "Always",
     "both waits end only by reading 0 after their own store: store buffering (blocked executions leave no state)",
     robust={"": "no"})
test("ROB+WW-unobserved", [[W("x", 1, "rlx"), W("y", 1, "rlx")], [W("y", 1, "rlx"), W("x", 1, "rlx")]],
     "x=1 /\\ y=1", "Always",
     "2+2W with equal values: a non-SC modification order that no read and no final value shows",
     robust={"": "unobservable"})
test("ROB+RS-samethread", [[W("x", 1, "rlx"), W("y", 1, "rel"), W("y", 2, "rlx")],
                           [R("r0", "y", "acq"), R("r1", "x", "rlx")]],
     "1:r0=2 /\\ 1:r1=0", "Sometimes",
     "C++20's release sequence holds RMWs only: reading the later relaxed store does not synchronise; RC11's "
     "(C++11's) holds the thread's later stores too",
     race=False, obs_model={"rc11": ("Never", False)}, robust={"": "no", "rc11": "yes"})
test("ROB+RS-rmw", [[W("x", 1, "rlx"), W("y", 1, "rel")], ["int r0 = atomic_fetch_add_explicit(y, 1, memory_order_relaxed);"],
                    [R("r1", "y", "acq"), R("r2", "x", "rlx")]],
     "2:r1=2 /\\ 2:r2=0", "Never",
     "an RMW continues the release sequence: reading it synchronises with the release store")
test("ROB+RMW-atomicity", [["int r0 = atomic_fetch_add_explicit(x, 1, memory_order_relaxed);", R("r1", "y", "rlx")],
                           ["int r0 = atomic_fetch_add_explicit(y, 1, memory_order_relaxed);", R("r1", "x", "rlx")]],
     "0:r1=0 /\\ 1:r1=0", "Sometimes",
     "store buffering with RMWs as the stores: relaxed RMWs do not order the later load",
     robust={"": "no"})
test("ROB+RMW-sc-fence", [["int r0 = atomic_fetch_add_explicit(x, 1, memory_order_relaxed);", F("sc"), R("r1", "y", "rlx")],
                          ["int r0 = atomic_fetch_add_explicit(y, 1, memory_order_relaxed);", F("sc"), R("r1", "x", "rlx")]],
     "0:r1=0 /\\ 1:r1=0", "Never",
     "seq_cst fences between each RMW and the load restore SC")

if __name__ == "__main__":
    os.makedirs("litmus", exist_ok=True)
    for t in TESTS:
        with open(os.path.join("litmus", t["name"] + ".litmus"), "w") as f:
            f.write(render(t))
    print(len(TESTS), "tests written")
