#!/usr/bin/env python3
"""Writes benchmarks/moca/*.litmus: programs named after MoCA's Table II
(see benchmarks/moca/README.md). Run from that directory."""
R="memory_order_relaxed"; A="memory_order_acquire"; L="memory_order_release"
def ld(x,o=R): return f"atomic_load_explicit({x}, {o})"
def st(x,v,o=R): return f"atomic_store_explicit({x}, {v}, {o});"
# Expected per model: (observation cpp20, mca, tso), (race cpp20, mca, tso).
EXPECT = {
    "mutex": ("NNN", "nnn"), "peterson": ("SSS", "yyy"), "peterson+sc": ("NNN", "nnn"),
    "rwlock": ("SSS", "yyn"), "spinlock": ("NNN", "nnn"),
    "fibonacci": ("SSS", "nnn"), "counter": ("SSN", "nnn"), "flipper": ("SNN", "nnn"),
    "prod-cons": ("SSN", "nnn"), "prod-cons+rel": ("NNN", "nnn"),
}
def expectation(name):
    import re
    base = re.sub(r"-\d+", "", name)
    obs, race = EXPECT[base]
    word = {"N": "Never", "S": "Sometimes", "A": "Always"}
    yn = {"y": "yes", "n": "no"}
    lines = [f"@observation {word[obs[0]]}"]
    lines += [f"@observation.{m} {word[o]}" for m, o in zip(["mca", "tso"], obs[1:])]
    lines += [f"@race {yn[race[0]]}"]
    lines += [f"@race.{m} {yn[r]}" for m, r in zip(["mca", "tso"], race[1:])]
    return "\n   ".join(lines)

def write(name, why, init, threads, cond):
    s = f"C {name}\n\n(* {expectation(name)}\n   {why} *)\n\n{{ {init} }}\n\n"
    for i,(args,body) in enumerate(threads):
        s += f"P{i} ({args}) {{\n" + "".join("  "+l+"\n" for l in body) + "}\n\n"
    s += cond + "\n"
    open(name+".litmus","w").write(s)

# mutex
args="atomic_int* m, int* c"
body=["spin_lock(m);", "*c = *c + 1;", "spin_unlock(m);"]
write("mutex", "Two threads increment a plain counter under a compare-exchange spin\n   lock (acquire) released by a release store: it always ends at 2, without a\n   race, under every model",
      "[m] = 0; [c] = 0;", [(args,body),(args,body)], "exists (~c=2)")

# peterson: one entry attempt per thread (a spin that exits is an attempt
# whose check passed: for mutual exclusion the two are the same).
def pet(me, other, t, o):
    return [st(f"flag{me}",1,o[0]), st("turn",t,o[0]),
            "int in = 0;",
            f"if ({ld(f'flag{other}',o[1])} == 0 || {ld('turn',o[1])} != {t}) {{ in = 1; *c = *c + 1; }}",
            st(f"flag{me}",0,L)]
args="atomic_int* flag0, atomic_int* flag1, atomic_int* turn, int* c"
init="[flag0] = 0; [flag1] = 0; [turn] = 0; [c] = 0;"
write("peterson", "Peterson's lock with release stores and acquire loads, one entry\n   attempt per thread (the last turn of its spin). A thread's flag store and its\n   load of the other's flag are store buffering: both can enter, racing on c,\n   under cpp20, on multi-copy-atomic hardware (ARMv8 keeps a release store\n   before an acquire load in order only for seq_cst ones) and under x86-TSO",
      init, [(args,pet(0,1,1,(L,A))),(args,pet(1,0,0,(L,A)))], "exists (0:in=1 /\\ 1:in=1 /\\ ~c=2)")
sc="memory_order_seq_cst"
write("peterson+sc", "Peterson's lock with seq_cst flag and turn accesses, one entry attempt\n   per thread: never both inside, under every model",
      init, [(args,pet(0,1,1,(sc,sc))),(args,pet(1,0,0,(sc,sc)))], "exists (0:in=1 /\\ 1:in=1 /\\ ~c=2)")

# rwlock: the writer takes a spin lock and enters if no reader is in; a
# reader announces itself and enters if the lock is free.
args="atomic_int* lock, atomic_int* readers, int* data"
init="[lock] = 0; [readers] = 0; [data] = 0;"
writer=["spin_lock(lock);", "int in = 0;", f"if ({ld('readers',A)} == 0) {{ in = 1; *data = 1; }}", "spin_unlock(lock);"]
def reader():
    return [f"atomic_fetch_add_explicit(readers, 1, {A});", "int in = 0;", "int r0 = 0;",
            f"if ({ld('lock',A)} == 0) {{ in = 1; r0 = *data; }}",
            f"atomic_fetch_sub_explicit(readers, 1, {L});"]
write("rwlock", "A reader-writer lock, one entry attempt per thread: the writer takes\n   a spin lock and enters if the reader count is 0; a reader increments the\n   count (acquire) and enters if the lock is free. Count increment and lock\n   load against lock take and count load are store buffering: a reader and the\n   writer can both be inside (a data race on data: the violation) under cpp20\n   and mca; x86's locked instructions are full barriers, so never under tso.\n   (The condition only asks whether all three get in at some time.)",
      init, [(args,writer),(args,reader()),(args,reader())], "exists (0:in=1 /\\ 1:in=1 /\\ 2:in=1)")

# spinlock: three threads, a spin lock, a relaxed counter.
args="atomic_int* l, atomic_int* c"
body=["spin_lock(l);", f"int r0 = {ld('c')};", st("c","r0 + 1"), "spin_unlock(l);"]
write("spinlock", "Three threads increment a relaxed counter with a load and a store\n   under a spin lock (acquire compare-exchange, release unlock): no update is\n   lost under any model",
      "[l] = 0; [c] = 0;", [(args,body)]*3, "exists (~c=3)")

# fibonacci-N: SV-COMP's fib_bench with relaxed atomics.
def fib(n):
    a,b=1,1
    seq=[]
    i,j=1,1
    # SC maximum: alternate perfectly
    for _ in range(n):
        i=i+j; j=j+i
    return max(i,j)
for n in [2,3,4]:
    mx=fib(n)
    args="atomic_int* i, atomic_int* j"
    t0=["int k = 0;", f"while (k < {n}) {{ int a = {ld('i')}; int b = {ld('j')}; {st('i','a + b')} k = k + 1; }}"]
    t1=["int k = 0;", f"while (k < {n}) {{ int a = {ld('j')}; int b = {ld('i')}; {st('j','a + b')} k = k + 1; }}"]
    write(f"fibonacci-{n}", f"SV-COMP's fib_bench with relaxed atomics, {n} rounds per thread: i\n   and j reach {mx} only when the threads alternate perfectly (the assertion\n   fib_bench_bad makes fail, under every model, SC included)",
          "[i] = 1; [j] = 1;", [(args,t0),(args,t1)], f"exists (i={mx} \\/ j={mx})")

# counter-N: a thread increments two counters, x then y, N times
# (relaxed fetch_add); another reads y, then x (acquire loads). Finding y
# ahead of x needs the increments reordered: cpp20 and ARMv8 allow it, x86
# (locked increments) does not.
for n in [5,10,15]:
    args="atomic_int* x, atomic_int* y"
    inc=["int k = 0;", f"while (k < {n}) {{ atomic_fetch_add_explicit(x, 1, {R}); atomic_fetch_add_explicit(y, 1, {R}); k = k + 1; }}"]
    obs=[f"int r0 = {ld('y',A)};", f"int r1 = {ld('x',A)};", "int ahead = 0;", "if (r0 > r1) { ahead = 1; }"]
    write(f"counter-{n}", f"A thread increments x, then y, {n} times (relaxed fetch_add); another\n   reads y, then x (acquire loads). Seeing y ahead of x needs two increments\n   reordered: cpp20 and ARMv8 (the relaxed increments are unordered) allow\n   it, x86 (locked increments) does not",
          "[x] = 0; [y] = 0;", [(args,inc),(args,obs)], "exists (1:ahead=1)")

# flipper-N: two writers each flip their own flag N times with release
# stores; two observers read both flags with acquire loads, in opposite
# orders. Observers disagreeing on which writer moved first is IRIW:
# cpp20 allows it, multi-copy-atomic hardware does not.
for n in [5,10,15]:
    args="atomic_int* x, atomic_int* y"
    w0=["int k = 1;", f"while (k <= {n}) {{ {st('x','k',L)} k = k + 1; }}"]
    w1=["int k = 1;", f"while (k <= {n}) {{ {st('y','k',L)} k = k + 1; }}"]
    o0=[f"int r0 = {ld('x',A)};", f"int r1 = {ld('y',A)};"]
    o1=[f"int r0 = {ld('y',A)};", f"int r1 = {ld('x',A)};"]
    write(f"flipper-{n}", f"Two writers flip their own flag {n} times (release stores); two\n   observers read both flags (acquire loads) in opposite orders. One seeing x\n   move before y and the other y before x (IRIW) happens under cpp20, never on\n   multi-copy-atomic hardware",
          "[x] = 0; [y] = 0;", [(args,w0),(args,w1),(args,o0),(args,o1)],
          f"exists (2:r0={n} /\\ 2:r1=0 /\\ 3:r0={n} /\\ 3:r1=0)")

# prod-cons-N: a producer fills N slots and publishes each with a store of
# the count; the consumer reads the count, then the last slot it covers.
for n in [10,15,20]:
    for (suffix, o, why) in [("", R, "relaxed store of the count: the consumer can find the slot empty\n   under cpp20 and on ARMv8 (message passing), never on x86-TSO, which keeps\n   stores in order and loads in order"),
                             ("+rel", L, "release store of the count, read with an acquire load: the slot is\n   always full, under every model")]:
        args="atomic_int* buf, atomic_int* count"
        prod=["int k = 0;", f"while (k < {n}) {{ {st('buf + k','k + 1')} {st('count','k + 1',o)} k = k + 1; }}"]
        ro = A if o == L else R
        cons=[f"int n = {ld('count',ro)};", "int v = 1;", f"if (n > 0) {{ v = {ld('buf + (n - 1)')}; }}"]
        write(f"prod-cons-{n}{suffix}", f"A producer fills {n} slots (relaxed stores) and publishes each with a\n   {why}",
              f"int buf[{n}]; [count] = 0;", [(args,prod),(args,cons)], "exists (1:v=0)")
