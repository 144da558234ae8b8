#!/usr/bin/env python3
"""Regenerates BENCHMARKS.md's measured tables and says how they moved.

Each generated block in BENCHMARKS.md sits between

    <!-- generated: ID -->
    ...
    <!-- end: ID -->

and is rewritten with a line naming the machine, the date and the commit,
then the tables the block's command prints (its lines that start with `|`).
The prose around the blocks is written by hand.

    python3 tools/benchmarks.py                 # every block
    python3 tools/benchmarks.py main jobs       # these blocks
    python3 tools/benchmarks.py --list          # the blocks and commands
    python3 tools/benchmarks.py --dry-run main  # compare, leave the file

For every row that is in both the old and the new table, the columns that
hold a time are compared, and the ratio new/old is printed, marked when it
is outside ±5 %. Rows whose execution counts changed are marked too: a
count is a fact about the explorer, not a measurement.
"""

import datetime
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILE = os.path.join(ROOT, "BENCHMARKS.md")

# Binaries the commands below run directly.
BUILD = [
    "cargo", "build", "--release", "-q",
    "-p", "c11check-cli", "-p", "c11check-c-runtime", "-p", "c11check-bench",
]

SUITE = "cargo bench -q -p c11check-bench --features peers --bench suite -- --budget 60 --seeds 1000"

# Each block: the command that measures it and which of the tables it
# prints go in (`None`: all of them).
BLOCKS = {
    "main": ("cargo run --release -q -p c11check-bench", None),
    "jobs": ("target/release/jobs", None),
    "jobs-random": ("target/release/jobs --runs 2 fib_bench-c-live seqlock-live mpmc-graph", None),
    "c-vs-rust": ("target/release/c-vs-rust --runs 3", None),
    # GenMC's binary from $GENMC (GenMC v0.10.3, built with LLVM 14).
    "genmc-vs": ("target/release/genmc-vs --runs 3", None),
    "long-c": ("target/release/long-c --runs 2", None),
    "mabain": ("bash benchmarks/mabain/run.sh", None),
    "robustness": ("target/release/robustness --random 1000 --live 10000", None),
    "robust-long": ("target/release/robust-long 1000000 && target/release/robust-long 10000000", None),
    "peers": ("cargo bench -q -p c11check-bench --features peers --bench peers", None),
    "suite": (SUITE, 0),
    "suite-cdschecker": (SUITE, 1),
}


def blocks_in(text):
    """(id, start, end) of each generated block's body in `text`."""
    out = []
    for m in re.finditer(r"<!-- generated: ([\w-]+) -->\n", text):
        ident = m.group(1)
        end = text.find(f"<!-- end: {ident} -->", m.end())
        if end < 0:
            sys.exit(f"BENCHMARKS.md: the block `{ident}` has no `<!-- end: {ident} -->`")
        out.append((ident, m.end(), end))
    return out


def tables(text):
    """The markdown tables in `text`, each a list of rows (lists of cells)."""
    found, cur = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            cur.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif cur:
            found.append(cur)
            cur = []
    if cur:
        found.append(cur)
    return found


def processor():
    """The processor, as `c11check_bench::machine` names it."""
    info = open("/proc/cpuinfo").read().splitlines()
    field = lambda k: next((l.split(":", 1)[1].strip() for l in info if l.split(":")[0].strip() == k), None)
    cpus = sum(1 for l in info if l.startswith("processor"))
    mhz = field("cpu MHz")
    return f"{field('model name') or 'an unknown processor'}, {cpus} CPUs" + (f" at {float(mhz):.0f} MHz" if mhz else "")


def number(cell):
    m = re.match(r"^\**([\d,]+(?:\.\d+)?)", cell.replace("**", ""))
    return float(m.group(1).replace(",", "")) if m else None


def compare(ident, old, new):
    """Prints how the times of rows in both `old` and `new` moved."""
    worst = []
    for t_old, t_new in zip(tables(old), tables(new)):
        header = t_new[0]
        timed = [
            i
            for i, h in enumerate(header)
            if ("time" in h.lower() or h.endswith(" job") or h.endswith(" jobs") or "(s)" in h)
            and "repair" not in h
        ]
        counted = [i for i, h in enumerate(header) if "executions" in h.lower() and "/s" not in h]
        def keyed(rows):
            # A row is known by its first cell and, where that repeats
            # (one program's tools, one run's sizes), by its place among
            # the rows that share it.
            seen, out = {}, {}
            for r in rows:
                n = seen.get(r[0], 0)
                seen[r[0]] = n + 1
                out[(r[0], n)] = r
            return out

        rows_old = keyed(t_old[2:])
        for key, r in keyed(t_new[2:]).items():
            o = rows_old.get(key)
            if o is None or len(o) != len(r):
                continue
            notes = []
            for i in counted:
                if o[i] != r[i]:
                    notes.append(f"{header[i]} {o[i]} -> {r[i]} (COUNT CHANGED)")
            for i in timed:
                a, b = number(o[i]), number(r[i])
                if a and b and a >= 0.01:
                    ratio = b / a
                    flag = "" if 0.95 <= ratio <= 1.05 else " *"
                    notes.append(f"{header[i]} {a:g} -> {b:g} ({ratio:.2f}x){flag}")
                    worst.append(ratio)
            if notes:
                print(f"  {ident}: {r[0]} {r[1] if len(r) > 1 else ''}: " + "; ".join(notes))
    if worst:
        inside = sum(1 for x in worst if 0.95 <= x <= 1.05)
        print(f"  {ident}: {inside} of {len(worst)} times within ±5 %")


OUTPUTS = {}


def run(ident):
    cmd, which = BLOCKS[ident]
    if cmd not in OUTPUTS:
        print(f"== {ident}: {cmd}", flush=True)
        p = subprocess.run(cmd, shell=True, cwd=ROOT, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{ident}: `{cmd}` failed ({p.returncode}):\n{p.stderr[-2000:]}")
        OUTPUTS[cmd] = p.stdout
    out = OUTPUTS[cmd]
    machine = next((l for l in out.splitlines() if l.startswith("Machine:")), None)
    found = tables(out)
    if not found:
        sys.exit(f"{ident}: `{cmd}` printed no table")
    if which is not None:
        found = [found[which]]
    body = "\n\n".join("\n".join("| " + " | ".join(r) + " |" for r in t) for t in found)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    where = (machine or "Machine: " + processor()).rstrip(".")
    changes = " (with uncommitted changes)" if dirty else ""
    stamp = f"{where}, {datetime.date.today()}, commit {commit}{changes}: `{cmd}`."
    return stamp + "\n\n" + body + "\n"


def main(argv):
    dry = "--dry-run" in argv
    argv = [a for a in argv if a != "--dry-run"]
    if "--list" in argv:
        for k, v in BLOCKS.items():
            print(f"{k:18} {v[0]}" + (f"  (table {v[1] + 1})" if v[1] is not None else ""))
        return
    text = open(FILE).read()
    present = {b[0] for b in blocks_in(text)}
    wanted = argv or [k for k in BLOCKS if k in present]
    for w in wanted:
        if w not in BLOCKS:
            sys.exit(f"no block `{w}` (see --list)")
        if w not in present:
            sys.exit(f"BENCHMARKS.md has no `<!-- generated: {w} -->` block")
    subprocess.run(BUILD, cwd=ROOT, check=True)
    for w in wanted:
        new = run(w)
        text = open(FILE).read()
        (_, start, end) = next(b for b in blocks_in(text) if b[0] == w)
        compare(w, text[start:end], new)
        if not dry:
            open(FILE, "w").write(text[:start] + new + text[end:])


if __name__ == "__main__":
    main(sys.argv[1:])
