//! Small C programs of our own, each showing one thing the runtime must get
//! right: thread-local storage, mutexes, barriers, reports in the program's
//! terms, exit statuses, per-execution clean starts, loops.

mod common;

use common::{assert_passes, build, executions, run};
use std::process::Command;

#[test]
fn message_passing_has_three_executions_and_relaxed_flag_races() {
    let src = |order: &str| {
        format!(
            r#"#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
int data;
atomic_int flag;
void *producer(void *a) {{ data = 42; atomic_store_explicit(&flag, 1, {order}); return 0; }}
int main() {{
  pthread_t t; pthread_create(&t, 0, producer, 0);
  if (atomic_load_explicit(&flag, memory_order_acquire)) printf("got %d\n", data);
  pthread_join(t, 0);
  return 0;
}}
"#
        )
    };
    let ok = build("mp_ok", &src("memory_order_release"));
    let (code, err) = run(&ok, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(executions(&err), 2, "{err}");

    let racy = build("mp_racy", &src("memory_order_relaxed"));
    let (code, err) = run(&racy, &[]);
    assert_eq!(code, 1, "{err}");
    // In the program's terms: its file and lines, its functions.
    assert!(err.contains("c11check found a data race"), "{err}");
    // Globals are called by their names (from the symbol table), and
    // described in C's terms.
    assert!(err.contains("data race on data:"), "{err}");
    assert!(err.contains("  data: plain data first used at "), "{err}");
    assert!(!err.contains("UnsafeCell"), "{err}");
    assert!(err.contains("load(Acquire) flag = "), "{err}");
    assert!(err.contains("mp_racy.c:6:"), "{err}");
    assert!(err.contains("in producer()"), "{err}");
    assert!(err.contains("make the store T1.1 at"), "{err}");
    // The failing execution is replayed with the program's output, and
    // the replay line re-runs it.
    assert!(err.contains("replayed with the program's output"), "{err}");
    let replay = err
        .lines()
        .find_map(|l| l.strip_prefix("Replay it with: C11CHECK_REPLAY='"))
        .and_then(|l| l.split('\'').next())
        .unwrap_or_else(|| panic!("{err}"))
        .to_string();
    // The live engine's report names both accesses' lines too.
    let (code, live) = run(&racy, &[("C11CHECK_ITERATIONS", "500")]);
    assert_eq!(code, 1, "{live}");
    // The message: its first line, and the earlier access's place on the
    // next one.
    let message: Vec<&str> = live
        .lines()
        .skip_while(|l| !l.contains("data race on data:"))
        .take(2)
        .collect();
    assert!(
        message.len() == 2
            && message[0].contains("mp_racy.c:9:")
            && message[1].contains("the earlier access: thread 1 at ")
            && message[1].contains("mp_racy.c:6:"),
        "{live}"
    );
    let (code, again) = run(&racy, &[("C11CHECK_REPLAY", &replay)]);
    assert_eq!(code, 1, "{again}");
    assert!(
        again.contains("c11check found a data race in execution 1"),
        "{again}"
    );
}

#[test]
fn each_thread_has_its_own_thread_locals_and_errno() {
    let exe = build(
        "tls",
        r#"#include <pthread.h>
#include <assert.h>
#include <errno.h>
#include <sched.h>
__thread int tid = 7;
_Thread_local int twice;
void *w(void *a) {
  assert(tid == 7);
  tid = (int)(long)a; twice = tid * 2; errno = tid;
  sched_yield();
  assert(tid == (int)(long)a && twice == tid * 2 && errno == tid);
  return 0;
}
int main() {
  tid = 100;
  pthread_t t[3];
  for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, w, (void *)(i + 1));
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  assert(tid == 100);
  return 0;
}
"#,
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{err}");
    // Thread-locals are not shared locations: nothing to interleave.
    assert_eq!(executions(&err), 1, "{err}");
}

#[test]
fn mutexes_order_critical_sections_and_a_lost_update_is_found() {
    let src = |lock: bool| {
        let (l, u) = if lock {
            ("pthread_mutex_lock(&m);", "pthread_mutex_unlock(&m);")
        } else {
            ("", "")
        };
        format!(
            r#"#include <pthread.h>
#include <assert.h>
#include <stdatomic.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
atomic_int counter;
void *w(void *a) {{ {l} int v = atomic_load_explicit(&counter, memory_order_relaxed);
  atomic_store_explicit(&counter, v + 1, memory_order_relaxed); {u} return 0; }}
int main() {{
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, w, 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  assert(atomic_load(&counter) == 2);
  return 0;
}}
"#
        )
    };
    let (code, err) = run(&build("locked", &src(true)), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(executions(&err), 2, "{err}");
    let (code, err) = run(&build("unlocked", &src(false)), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("assertion `atomic_load(&counter) == 2` failed"),
        "{err}"
    );
}

#[test]
fn a_location_first_written_plainly_starts_with_what_memory_held_before() {
    // `slot` is zeroed by memset (clang turns a zeroing loop into one),
    // which makes no event: the location's first event is the writer's
    // plain store, and its initial value is the 0 memory held before that
    // store, not the 42 it wrote. main reads it racily (races off) after a
    // relaxed flag, so it may read either. (Taking the written value made
    // the 0 unreachable whenever the write came first in real time, and
    // made GenMC's buf_ring, built with clang -O1, a "nondeterministic
    // test": which thread touched the ring first differs between runs of
    // one execution.)
    let exe = build(
        "first_plain_write",
        r#"#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
long *slot;
atomic_int flag;
void *writer(void *a) {
  *slot = 42;
  atomic_store_explicit(&flag, 1, memory_order_relaxed);
  return 0;
}
int main() {
  slot = malloc(sizeof *slot);
  memset(slot, 0, sizeof *slot);
  pthread_t t;
  pthread_create(&t, 0, writer, 0);
  while (!atomic_load_explicit(&flag, memory_order_relaxed))
    ;
  long v = __atomic_load_n(slot, __ATOMIC_RELAXED);
  pthread_join(t, 0);
  assert(v == 42);
  free(slot);
  return 0;
}
"#,
    );
    let (code, err) = run(&exe, &[("C11CHECK_RACES", "0")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("assertion `v == 42` failed"), "{err}");
}

#[test]
fn globals_and_heap_start_afresh_in_every_execution() {
    // Each execution increments a global and a heap counter once: if
    // anything survived from the execution before, the assertions fail.
    let exe = build(
        "fresh",
        r#"#include <pthread.h>
#include <assert.h>
#include <stdlib.h>
#include <stdatomic.h>
int runs;
atomic_int x;
void *w(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed); return 0; }
int main() {
  int *p = malloc(sizeof *p);
  assert(runs == 0);
  runs++;
  *p = 5;
  pthread_t t; pthread_create(&t, 0, w, 0);
  (void)atomic_load_explicit(&x, memory_order_relaxed);
  pthread_join(t, 0);
  free(p);
  return 0;
}
"#,
    );
    assert_passes(&exe, &[], 2);
}

#[test]
fn spin_waits_are_cut_and_counting_loops_are_not() {
    // A flag wait with no hint ends; a bounded loop that re-reads the same
    // value 50 times (its counter changes) runs to its end.
    let exe = build(
        "loops",
        r#"#include <pthread.h>
#include <assert.h>
#include <stdatomic.h>
atomic_int flag, seen;
void *setter(void *a) { atomic_store_explicit(&flag, 1, memory_order_release); return 0; }
void *counter(void *a) {
  int sum = 0;
  for (int i = 0; i < 50; i++) sum += atomic_load_explicit(&seen, memory_order_relaxed);
  atomic_store_explicit(&seen, sum + 1, memory_order_relaxed);
  return 0;
}
int main() {
  pthread_t a, b;
  pthread_create(&a, 0, setter, 0);
  pthread_create(&b, 0, counter, 0);
  while (!atomic_load_explicit(&flag, memory_order_acquire)) ;
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(atomic_load(&seen) == 1);
  return 0;
}
"#,
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("it loops"), "{err}");
    // The counting loop reads only the initial value, so only main's wait
    // branches: the flag read at once, or a wait cut after the turn that
    // re-read the first turn's value (blocked, as GenMC's spin-assume).
    assert_eq!(executions(&err), 2, "{err}");
    assert!(err.contains("(1 blocked)"), "{err}");
}

#[test]
fn a_helper_called_from_several_places_is_no_loop() {
    // `probe()` reads `x` through `get()`; main calls it from five places
    // in a row, and each call does the same as the one before (the same
    // read, of the same store, in the same frames). Its big frame keeps
    // main's return address far from `get()`'s: only the calls in
    // progress tell the calls apart. Taken for a wait loop (doctest's
    // option parsing, which calls one parser for every option), the third
    // call was cut and reported as a livelock that nothing could end.
    let source = r#"#include <pthread.h>
#include <stdatomic.h>
atomic_int x;
__attribute__((noinline)) static int get(void) {
  return atomic_load_explicit(&x, memory_order_relaxed);
}
__attribute__((noinline)) static int probe(void) {
  volatile char pad[2048];
  pad[0] = 0;
  return get() + pad[0];
}
void *other(void *a) { return a; }
int main() {
  pthread_t t;
  pthread_create(&t, 0, other, 0);
  if (probe() == 5) return 1;
  if (probe() == 6) return 2;
  if (probe() == 7) return 3;
  if (probe() == 8) return 4;
  if (probe() == 9) return 5;
  pthread_join(t, 0);
  return 0;
}
"#;
    for opt in ["-O0", "-O1"] {
        let exe = common::build_with(&format!("helper{opt}"), source, common::Lang::C, &[opt]);
        let err = assert_passes(&exe, &[], 1);
        assert!(err.contains("(0 blocked)"), "{opt}: {err}");
    }
}

#[test]
fn an_abba_deadlock_of_compare_exchange_spinlocks_is_reported_at_once() {
    // Each thread takes one spinlock and spins on the other's: the first
    // execution where both hold one is reported (it ran past 300 s).
    let source = r#"#include <pthread.h>
#include <stdatomic.h>
atomic_int a, b;
static void lock(atomic_int *l) { int e = 0; while (!atomic_compare_exchange_strong(l, &e, 1)) e = 0; }
static void unlock(atomic_int *l) { atomic_store(l, 0); }
void *t1(void *p) { lock(&a); lock(&b); unlock(&b); unlock(&a); return 0; }
void *t2(void *p) { lock(&b); lock(&a); unlock(&a); unlock(&b); return 0; }
int main() {
  pthread_t x, y;
  pthread_create(&x, 0, t1, 0);
  pthread_create(&y, 0, t2, 0);
  pthread_join(x, 0);
  pthread_join(y, 0);
  return 0;
}
"#;
    for opt in ["-O0", "-O1"] {
        let exe = common::build_with(&format!("abba{opt}"), source, common::Lang::C, &[opt]);
        // One worker: the execution's number is the exploration order's,
        // whatever a busy machine's clock says (a run over a second forks).
        let (code, err) = run(&exe, &[("C11CHECK_JOBS", "1")]);
        assert_eq!(code, 1, "{opt}: {err}");
        let n: u64 = err
            .split("c11check found a livelock in execution ")
            .nth(1)
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{opt}: {err}"));
        assert!(n <= 20, "{opt}: found only in execution {n}: {err}");
        assert!(
            err.contains("thread 1, thread 2 spin forever"),
            "{opt}: {err}"
        );
        assert!(err.contains(&format!("abba{opt}.c:4:")), "{opt}: {err}");
        assert!(err.contains("in lock()"), "{opt}: {err}");
    }
}

#[test]
fn a_wait_inside_a_loop_is_cut_in_every_round() {
    // A three-round hand-off: each round's wait is a loop inside the round
    // loop. With one loop head per thread, a wait whose round loop was
    // found first went uncut for 128 turns: 198,288 executions (189 s).
    // Now each wait is cut after its first turn that read what the turn
    // before read: one complete execution (the program has one outcome),
    // as GenMC's spin-assume counts it. With STALE, main publishes `x` after the flag, and
    // the other thread's check of it fails in some round.
    let source = r#"#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
atomic_int flag, x;
void *other(void *a) {
  for (int r = 1; r <= 3; r++) {
    while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * r - 1)
      ;
    assert(atomic_load_explicit(&x, memory_order_relaxed) >= r);
    atomic_store_explicit(&flag, 2 * r, memory_order_release);
  }
  return 0;
}
int main() {
  pthread_t t;
  pthread_create(&t, 0, other, 0);
  for (int r = 1; r <= 3; r++) {
#ifndef STALE
    atomic_store_explicit(&x, r, memory_order_relaxed);
#endif
    atomic_store_explicit(&flag, 2 * r - 1, memory_order_release);
#ifdef STALE
    atomic_store_explicit(&x, r, memory_order_relaxed);
#endif
    while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * r)
      ;
  }
  pthread_join(t, 0);
  return 0;
}
"#;
    let exe = common::build_with("rounds", source, common::Lang::C, &[]);
    let err = assert_passes(&exe, &[("C11CHECK_MAX_EXECUTIONS", "5000")], 64);
    assert!(err.contains("(63 blocked)"), "{err}");
    let exe = common::build_with("rounds_stale", source, common::Lang::C, &["-DSTALE"]);
    let (code, err) = run(&exe, &[("C11CHECK_MAX_EXECUTIONS", "5000")]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("assertion `atomic_load_explicit(&x, memory_order_relaxed) >= r` failed"),
        "{err}"
    );
}

#[test]
fn a_wait_that_refreshes_a_plain_cache_is_cut() {
    // As SPSCQueue's `front()`: each turn reads a plain cache of the
    // producer's index (the turn before's store), and refreshes it with
    // what it loads, the same value. It was never cut: the first
    // execution ran on without end.
    let source = r#"#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
struct queue { atomic_int write; int write_cache; int slot; } q;
void *producer(void *a) {
  q.slot = 7;
  atomic_store_explicit(&q.write, 1, memory_order_release);
  return 0;
}
static int front(void) {
  if (q.write_cache == 0) {
    q.write_cache = atomic_load_explicit(&q.write, memory_order_acquire);
    if (q.write_cache == 0)
      return 0;
  }
  return 1;
}
int main() {
  pthread_t t;
  pthread_create(&t, 0, producer, 0);
  while (!front())
    ;
  assert(q.slot == 7);
  pthread_join(t, 0);
  return 0;
}
"#;
    for opt in ["-O0", "-O1"] {
        let exe = common::build_with(&format!("cache_wait{opt}"), source, common::Lang::C, &[opt]);
        let err = assert_passes(&exe, &[("C11CHECK_MAX_EXECUTIONS", "1000")], 3);
        assert!(err.contains("(1 blocked)"), "{opt}: {err}");
    }
}

#[test]
fn a_wait_no_write_can_end_is_a_livelock_at_every_optimization_level() {
    // The only writer of `x` writes only if it saw `go`: in the execution
    // where it did not, main's wait can never end. At -O0 each turn
    // writes the loaded value to a temporary and reads it back: the older
    // turns' reads of it read older stores, which is no way out (they
    // made the wait look endable, "3 executions (2 blocked)", no bug).
    let source = r#"#include <pthread.h>
#include <stdatomic.h>
atomic_int x, go;
void *writer(void *a) {
  if (atomic_load_explicit(&go, memory_order_relaxed))
    atomic_store_explicit(&x, 1, memory_order_relaxed);
  return 0;
}
void *setter(void *a) { atomic_store_explicit(&go, 1, memory_order_relaxed); return 0; }
int main() {
  pthread_t a, b;
  pthread_create(&a, 0, writer, 0);
  pthread_create(&b, 0, setter, 0);
  while (!atomic_load_explicit(&x, memory_order_relaxed))
    ;
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
"#;
    for opt in ["-O0", "-O1"] {
        let exe = common::build_with(
            &format!("endless_wait{opt}"),
            source,
            common::Lang::C,
            &[opt],
        );
        let (code, err) = run(&exe, &[]);
        assert_eq!(code, 1, "{opt}: {err}");
        assert!(
            err.contains("thread 0 spins forever: every other thread is finished or blocked"),
            "{opt}: {err}"
        );
        assert!(err.contains("(thread 0 last read at "), "{opt}: {err}");
        assert!(
            err.contains(&format!("endless_wait{opt}.c:14:")),
            "{opt}: {err}"
        );
    }
}

#[test]
fn an_os_thread_outside_the_model_does_not_change_which_turns_are_cut() {
    // A wait loop whose turns look alike is cut after its second turn.
    // Each turn, a real OS thread (started by a constructor, so not
    // modelled) reads the clock through the entry point the program would
    // use, with another counter in its frame each time; then the waiting
    // thread calls `syscall` (a futex wake), the loop's head. The state a
    // turn is judged by is what the thread's own call kept: not what the
    // other OS thread's call left, nor the runtime's own clock reads
    // between two of the thread's calls. (Before, `syscall` kept none and
    // its turns were judged by whatever call came last: never cut here,
    // or cut in one run and not in its replay, a "nondeterministic test";
    // any call could be overtaken that way by the watchdog's clock read.)
    let source = r#"#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>
static volatile int asked, answered;
__attribute__((noinline)) static void read_clock(long n) {
  volatile long turn = n;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  (void)turn;
}
__attribute__((no_sanitize_thread)) static void *clock_reader(void *a) {
  for (long n = 0;; n++) {
    while (!asked) ;
    asked = 0;
    read_clock(n);
    answered = 1;
  }
  return 0;
}
__attribute__((constructor)) static void start_reader(void) {
  pthread_t t;
  pthread_create(&t, 0, clock_reader, 0);
}
/* Has the other thread read the clock once (a real wait, unseen). */
__attribute__((no_sanitize_thread)) static void ask_reader(void) {
  asked = 1;
  while (!answered) ;
  answered = 0;
}
atomic_int flag, word;
void *setter(void *a) { atomic_store(&flag, 1); return 0; }
int main() {
  pthread_t t;
  pthread_create(&t, 0, setter, 0);
  do {
    ask_reader();
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
  } while (!atomic_load_explicit(&flag, memory_order_relaxed));
  pthread_join(t, 0);
  return 0;
}
"#;
    let exe = build("foreign_thread", source);
    // One worker: a run that takes over a second (a busy machine) would
    // fork workers, and a fork has no clock reader to hand off to.
    let (code, err) = run(&exe, &[("C11CHECK_LIVELOCKS", "0"), ("C11CHECK_JOBS", "1")]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("it loops"), "{err}");
    assert_eq!(executions(&err), 2, "{err}");
    assert!(err.contains("(1 blocked)"), "{err}");
}

#[test]
fn a_counting_loop_that_yields_runs_to_its_end_and_a_yielding_wait_is_cut() {
    // `counter` re-reads the same value each turn and yields, but counts
    // its turns: cut as a wait, its store after the loop would never run
    // and main's assertion never be checked. `waiter` yields until the
    // flag is set: a wait, cut when the flag is not set.
    let src = r#"#include <pthread.h>
#include <sched.h>
#include <assert.h>
#include <stdatomic.h>
atomic_int x, done, flag;
void *counter(void *a) {
  for (int i = 0; i < 3; i++) {
    (void)atomic_load_explicit(&x, memory_order_relaxed);
    sched_yield();
  }
  atomic_store_explicit(&done, 1, memory_order_relaxed);
  return 0;
}
void *waiter(void *a) {
  while (!atomic_load_explicit(&flag, memory_order_acquire)) sched_yield();
  return 0;
}
int main() {
  pthread_t c, w;
  pthread_create(&c, 0, counter, 0);
  pthread_create(&w, 0, waiter, 0);
  pthread_join(c, 0);
  assert(atomic_load(&done) == 1);
  atomic_store_explicit(&flag, 1, memory_order_release);
  pthread_join(w, 0);
  return 0;
}
"#;
    for opt in ["-O0", "-O1"] {
        let exe = common::build_with(&format!("yield_count{opt}"), src, common::Lang::C, &[opt]);
        let (code, err) = run(&exe, &[]);
        assert_eq!(code, 0, "{opt}: {err}");
        // Main's assertion is reached only after the counting loop ends.
        // The waiter sees the flag at once, or waits and sees it when main
        // sets it; the endless wait (reading 0 forever) is cut, blocked.
        assert_eq!(executions(&err), 2, "{opt}: {err}");
        assert!(err.contains("(1 blocked)"), "{opt}: {err}");
    }
}

#[test]
fn a_yield_in_a_counting_loop_is_a_free_switch_for_the_preemption_bound() {
    // With no preemption, the reader runs its loop whole before or after
    // the writer: (0, 0, 0) or (1, 1, 1). A `sched_yield` in the loop lets
    // the writer run there without a preemption (as loom and CHESS count),
    // so (0, 0, 1) is within the bound 0 too, although from its second
    // turn on the loop counts (it is no wait, nothing is cut).
    let src = |pause: &str| {
        format!(
            r#"#include <pthread.h>
#include <sched.h>
#include <assert.h>
#include <stdatomic.h>
atomic_int x;
int r[3];
void *reader(void *a) {{
  for (int i = 0; i < 3; i++) {{
    r[i] = atomic_load(&x);
    {pause};
  }}
  return 0;
}}
void *writer(void *a) {{
  atomic_store(&x, 1);
  return 0;
}}
int main() {{
  pthread_t a, b;
  pthread_create(&a, 0, reader, 0);
  pthread_create(&b, 0, writer, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(!(r[0] == 0 && r[1] == 0 && r[2] == 1));
  return 0;
}}
"#
        )
    };
    let env = [("C11CHECK_MODEL", "sc"), ("C11CHECK_PREEMPTIONS", "0")];
    let yielding = build("yield_bound", &src("sched_yield()"));
    let (code, err) = run(&yielding, &env);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("assert"), "{err}");
    let plain = build("yield_bound_plain", &src("(void)0"));
    let (code, err) = run(&plain, &env);
    assert_eq!(code, 0, "{err}");
    // Without the bound both programs fail.
    for exe in [&yielding, &plain] {
        let (code, err) = run(exe, &[("C11CHECK_MODEL", "sc")]);
        assert_ne!(code, 0, "{err}");
    }
}

#[test]
fn barriers_order_every_arrival_before_every_departure() {
    let exe = build(
        "barrier",
        r#"#include <pthread.h>
#include <assert.h>
pthread_barrier_t b;
int slot[3];
void *w(void *a) {
  long i = (long)a;
  slot[i] = 1;
  int r = pthread_barrier_wait(&b);
  for (int j = 0; j < 3; j++) assert(slot[j] == 1);
  return (void *)(long)(r == PTHREAD_BARRIER_SERIAL_THREAD);
}
int main() {
  pthread_barrier_init(&b, 0, 3);
  pthread_t t[3];
  for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, w, (void *)i);
  long serial = 0;
  for (int i = 0; i < 3; i++) { void *r; pthread_join(t[i], &r); serial += (long)r; }
  assert(serial == 1);
  return 0;
}
"#,
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{err}");
    // Each thread that may arrive last, times the two orders the two
    // others take their permits in.
    assert_eq!(executions(&err), 6, "{err}");
}

/// The hardware models on C programs: message passing with relaxed
/// atomics fails under `cpp20` and on ARMv8 (`mca`), not on x86 (`tso`);
/// IRIW with acquire loads fails under `cpp20` only, exhaustively and in
/// random runs (the live memory's store buffers under `tso`, ARMv8's views under
/// `mca`).
#[test]
fn hardware_models_hide_what_the_hardware_cannot_do() {
    let mp = build(
        "hw-mp",
        r#"
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
atomic_int data, flag;
void *producer(void *arg) {
  atomic_store_explicit(&data, 1, memory_order_relaxed);
  atomic_store_explicit(&flag, 1, memory_order_relaxed);
  return 0;
}
int main() {
  pthread_t t;
  pthread_create(&t, 0, producer, 0);
  if (atomic_load_explicit(&flag, memory_order_relaxed) == 1)
    assert(atomic_load_explicit(&data, memory_order_relaxed) == 1);
  pthread_join(t, 0);
  return 0;
}
"#,
    );
    let iriw = build(
        "hw-iriw",
        r#"
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
atomic_int x, y;
int a, b, c, d;
void *wx(void *p) { atomic_store_explicit(&x, 1, memory_order_release); return 0; }
void *wy(void *p) { atomic_store_explicit(&y, 1, memory_order_release); return 0; }
void *r1(void *p) {
  a = atomic_load_explicit(&x, memory_order_acquire);
  b = atomic_load_explicit(&y, memory_order_acquire);
  return 0;
}
void *r2(void *p) {
  c = atomic_load_explicit(&y, memory_order_acquire);
  d = atomic_load_explicit(&x, memory_order_acquire);
  return 0;
}
int main() {
  pthread_t t[4];
  pthread_create(&t[0], 0, wx, 0);
  pthread_create(&t[1], 0, wy, 0);
  pthread_create(&t[2], 0, r1, 0);
  pthread_create(&t[3], 0, r2, 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  assert(!(a == 1 && b == 0 && c == 1 && d == 0));
  return 0;
}
"#,
    );
    for (exe, fails_under) in [(&mp, ["cpp20", "mca"]), (&iriw, ["cpp20", "cpp20"])] {
        for model in ["cpp20", "mca", "tso"] {
            let (code, err) = run(exe, &[("C11CHECK_MODEL", model)]);
            let expected = if fails_under.contains(&model) { 1 } else { 0 };
            assert_eq!(code, expected, "{} under {model}: {err}", exe.display());
            // Random runs never show what the model forbids.
            if expected == 0 {
                let env = [("C11CHECK_MODEL", model), ("C11CHECK_ITERATIONS", "2000")];
                let (code, err) = run(exe, &env);
                assert_eq!(code, 0, "{} random under {model}: {err}", exe.display());
            }
        }
    }
}

#[test]
fn bad_settings_exit_with_status_2() {
    let exe = build("settings", "int main() { return 0; }\n");
    let (code, err) = run(&exe, &[("C11CHECK_MODEL", "power")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown C11CHECK_MODEL"), "{err}");
}

#[test]
fn json_verdicts_for_a_pass_and_a_bug() {
    let exe = build(
        "json",
        r#"#include <pthread.h>
#include <stdatomic.h>
#include <assert.h>
#include <stdio.h>
atomic_int x;
void *w(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed); return 0; }
int main(int argc, char **argv) {
  pthread_t t; pthread_create(&t, 0, w, 0);
  int v = atomic_load_explicit(&x, memory_order_relaxed);
  pthread_join(t, 0);
  printf("the program says v=%d\n", v);
  assert(argc == 1 || v == 0);
  return 0;
}
"#,
    );
    let last_line = |args: &[&str]| {
        let out = Command::new(&exe)
            .args(args)
            .env("C11CHECK_JSON", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        // Stdout holds the verdict alone; the replayed execution's own
        // output goes to stderr, beside the report.
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        if out.status.code() == Some(1) {
            assert!(stderr.contains("the program says v=1"), "{stderr}");
        }
        (
            out.status.code(),
            stdout.lines().last().unwrap_or("").to_string(),
        )
    };
    let (code, line) = last_line(&[]);
    assert_eq!(code, Some(0));
    assert!(
        line.starts_with(r#"{"verdict":"pass","executions":2,"blocked":0,"#),
        "{line}"
    );
    let (code, line) = last_line(&["fail"]);
    assert_eq!(code, Some(1));
    assert!(
        line.starts_with(r#"{"verdict":"bug","kind":"panic","message":"the model's main thread panicked: assertion `argc == 1 || v == 0` failed"#),
        "{line}"
    );
    assert!(line.contains(r#""replay":"c1:"#), "{line}");
}

#[test]
fn a_crash_is_reported_with_the_execution_that_led_there() {
    // The pointer is null until the thread publishes it: reading and
    // writing through it crash in the executions where main goes first.
    let src = |deref: &str| {
        format!(
            r#"#include <pthread.h>
#include <stdatomic.h>
int storage = 5;
int *_Atomic p;
void *w(void *a) {{ atomic_store(&p, &storage); return 0; }}
int main() {{
  pthread_t t; pthread_create(&t, 0, w, 0);
  {deref}
  pthread_join(t, 0);
  return 0;
}}
"#
        )
    };
    for (name, deref, column) in [
        (
            "crash_read",
            "volatile int r = *atomic_load(&p); (void)r;",
            "8:20",
        ),
        ("crash_write", "*atomic_load(&p) = 7;", "8:20"),
    ] {
        let exe = build(name, &src(deref));
        let (code, err) = run(&exe, &[]);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains("a segmentation fault (SIGSEGV) accessing address 0x0 (a null pointer)"),
            "{err}"
        );
        assert!(
            err.contains(&format!("{name}.c:{column} in main()")),
            "{err}"
        );
        assert!(err.contains("(reads the initial value)"), "{err}");
    }
    // A division by the null pointer's value: SIGFPE, reported too.
    let exe = build(
        "crash_div",
        &src("volatile long r = 100 / (long)atomic_load(&p); (void)r;"),
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("an arithmetic fault (SIGFPE: an integer division by zero or overflow) at "),
        "{err}"
    );
    assert!(err.contains("crash_div.c:8:"), "{err}");
}

#[test]
fn time_and_rand_are_the_same_in_every_execution() {
    // Each branches on what `rand()` and the clock return, before the
    // load the explorer revisits: were they to change between executions,
    // the second execution's replay would ask for another operation than
    // the first made ("nondeterministic test"). Every branch has the two
    // executions of the load of `x`.
    let exe = build(
        "clock",
        r#"#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <assert.h>
atomic_int x, y;
void *w(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed); return 0; }
static void act(int how) {
  if (how == 0) (void)atomic_load_explicit(&y, memory_order_relaxed);
  else if (how == 1) atomic_store_explicit(&y, 2, memory_order_relaxed);
  else atomic_thread_fence(memory_order_seq_cst);
}
int main() {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pthread_t t; pthread_create(&t, 0, w, 0);
  act(rand() % 2);
  act((a.tv_nsec / 1000) % 3);
  (void)atomic_load_explicit(&x, memory_order_relaxed);
  clock_gettime(CLOCK_MONOTONIC, &b);
  assert(b.tv_sec > a.tv_sec || b.tv_nsec > a.tv_nsec);
  pthread_join(t, 0);
  return 0;
}
"#,
    );
    assert_passes(&exe, &[], 2);
}

#[test]
fn exit_ends_the_program_from_any_thread_and_return_from_main_does_not() {
    // A waiter spins on a flag nobody sets; main ends with `end`.
    let src = |end: &str| {
        format!(
            r#"#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <assert.h>
atomic_int ready;
int data;
void *waiter(void *a) {{ while (!atomic_load(&ready)) ; return 0; }}
void *quitter(void *a) {{ data = 1; exit(3); }}
int main() {{
  pthread_t t, q; pthread_create(&t, 0, waiter, 0);
  {end}
}}
"#
        )
    };
    // exit() in main: the waiter stops with the program (no livelock).
    let exe = build("exit_main", &src("exit(0);"));
    for env in [&[][..], &[("C11CHECK_ITERATIONS", "200")][..]] {
        let (code, err) = run(&exe, env);
        assert_eq!(code, 0, "{env:?}: {err}");
        assert!(err.contains("no bug found in "), "{env:?}: {err}");
    }
    let (_, err) = run(&exe, &[]);
    assert_eq!(executions(&err), 1, "{err}");
    // A return from main lets the waiter run on: it spins forever.
    let exe = build("return_main", &src("return 0;"));
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("spins forever"), "{err}");
    // exit() in another thread ends the program too: main's join of it
    // never returns, so the assertion after it is unreachable.
    let exe = build(
        "exit_thread",
        &src("pthread_create(&q, 0, quitter, 0);\n  pthread_join(q, 0);\n  assert(0 && \"unreachable\");"),
    );
    for env in [&[][..], &[("C11CHECK_ITERATIONS", "200")][..]] {
        let (code, err) = run(&exe, env);
        assert_eq!(code, 0, "{env:?}: {err}");
    }
    // What happens before the exit is checked: main's read races with the
    // quitter's write.
    let exe = build(
        "exit_after_race",
        &src("pthread_create(&q, 0, quitter, 0);\n  if (data) exit(1);\n  pthread_join(q, 0);"),
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("data race on data"), "{err}");
}

#[test]
fn a_run_that_finished_no_execution_says_nothing_was_checked() {
    // A budget that ends the run inside its first execution, and a loop
    // bound that cuts every execution: neither run is a pass (the second
    // was `{"verdict":"pass","executions":0}`).
    let exe = build(
        "long_first",
        r#"#include <pthread.h>
#include <stdatomic.h>
atomic_long n;
void *w(void *a) { for (int i = 0; i < 300000; i++) atomic_fetch_add_explicit(&n, 1, memory_order_relaxed); return 0; }
int main() { pthread_t t; pthread_create(&t, 0, w, 0); w(0); pthread_join(t, 0); return 0; }
"#,
    );
    for (setting, said) in [
        (
            ("C11CHECK_MAX_DURATION", "0.05"),
            "was finished when the budget ended the run",
        ),
        (
            ("C11CHECK_LOOP_BOUND", "5"),
            "got past the loop bound (C11CHECK_LOOP_BOUND=5;",
        ),
    ] {
        let out = Command::new(&exe)
            .env(setting.0, setting.1)
            .env("C11CHECK_JSON", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let json = String::from_utf8_lossy(&out.stdout);
        assert!(err.contains(said), "{err}");
        assert!(err.contains("nothing was checked"), "{err}");
        assert!(!err.contains("no bug found"), "{err}");
        assert!(json.contains("\"verdict\":\"unchecked\""), "{json}");
    }
}

#[test]
fn sixteen_byte_atomics_keep_their_values_and_a_lost_update_is_found() {
    // A tagged counter: (tag << 64) | count, both bumped by each update.
    let src = |update: &str| {
        format!(
            r#"#include <pthread.h>
#include <assert.h>
unsigned __int128 top;
const unsigned __int128 ONE = ((unsigned __int128)1 << 64) + 1;
void *w(void *a) {{
  unsigned __int128 old = __atomic_load_n(&top, __ATOMIC_ACQUIRE);
  {update}
  return 0;
}}
int main() {{
  pthread_t t; pthread_create(&t, 0, w, 0); w(0); pthread_join(t, 0);
  unsigned __int128 v = __atomic_load_n(&top, __ATOMIC_SEQ_CST);
  assert(v == 2 * ONE);
  assert(__atomic_exchange_n(&top, 5, __ATOMIC_SEQ_CST) == 2 * ONE);
  __atomic_store_n(&top, (unsigned __int128)7 << 64, __ATOMIC_RELEASE);
  assert(__atomic_load_n(&top, __ATOMIC_RELAXED) == (unsigned __int128)7 << 64);
  return 0;
}}
"#
        )
    };
    let cas = "while (!__atomic_compare_exchange_n(&top, &old, old + ONE, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) ;";
    let exe = common::build_with("wide_cas", &src(cas), common::Lang::C, &["-mcx16"]);
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{err}");
    // gcc's weak compare-exchange may fail spuriously (explored); clang
    // emits a strong one.
    let n = executions(&err);
    if common::compiler().contains("clang") {
        assert_eq!(n, 4, "{err}");
    } else {
        assert_eq!(n, 24, "{err}");
    }
    let (code, err) = run(&exe, &[("C11CHECK_ITERATIONS", "300")]);
    assert_eq!(code, 0, "{err}");

    // A load and a store instead of one compare-exchange: an update is lost.
    let lost = "__atomic_store_n(&top, old + ONE, __ATOMIC_RELEASE);";
    let exe = common::build_with("wide_lost", &src(lost), common::Lang::C, &["-mcx16"]);
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("assertion `v == 2 * ONE` failed"), "{err}");

    // Arithmetic on 16 bytes is refused, saying so.
    if !common::compiler().contains("clang") {
        let add = "__atomic_fetch_add(&top, ONE, __ATOMIC_ACQ_REL);";
        let exe = common::build_with("wide_add", &src(add), common::Lang::C, &["-mcx16"]);
        let (code, err) = run(&exe, &[]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("16-byte atomic fetch-and-modify"), "{err}");
        assert!(err.contains("wide_add.c:7:"), "{err}");
    }
}

#[test]
fn reports_name_the_members_of_globals() {
    // From the debug information: struct members, array elements, nested
    // down to the member that starts at the byte; a mutex keeps its name.
    let exe = build(
        "members",
        r#"#include <pthread.h>
#include <stdatomic.h>
struct slot { atomic_int seq; int value; };
struct queue { atomic_long head; atomic_long tail; struct slot slots[4]; char name[8]; } queue;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
void *w(void *a) {
  queue.slots[2].value = 1;
  atomic_store_explicit(&queue.slots[3].seq, 1, memory_order_relaxed);
  atomic_store_explicit(&queue.tail, 1, memory_order_relaxed);
  queue.name[3] = 'x';
  return 0;
}
int main() {
  pthread_t t; pthread_create(&t, 0, w, 0);
  if (atomic_load_explicit(&queue.tail, memory_order_relaxed)) { volatile int v = queue.slots[2].value; (void)v; }
  pthread_mutex_lock(&m); pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return queue.name[3];
}
"#,
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("data race on queue.slots[2].value: "), "{err}");
    for name in [
        "  queue.tail: an atomic",
        "  queue.slots[3].seq: an atomic",
        "  queue.name[3]: plain data",
        "  m: a lock",
    ] {
        assert!(err.contains(name), "{name}: {err}");
    }
    let exe = common::build_with(
        "members_cc",
        r#"#include <atomic>
#include <thread>
namespace ns {
struct Node { std::atomic<int> flag{0}; int data = 0; };
struct Ring { std::atomic<unsigned> head{0}; Node nodes[3]; };
Ring ring;
}
int main() {
  std::thread t([] { ns::ring.nodes[1].data = 5; ns::ring.nodes[1].flag.store(1, std::memory_order_relaxed); });
  if (ns::ring.nodes[1].flag.load(std::memory_order_relaxed)) { volatile int v = ns::ring.nodes[1].data; (void)v; }
  t.join();
}
"#,
        common::Lang::Cxx,
        &[],
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("data race on ns::ring.nodes[1].data: "),
        "{err}"
    );
    assert!(err.contains("  ns::ring.nodes[1].flag: an atomic"), "{err}");
}

#[test]
fn a_fix_hint_names_the_call_of_a_wrapper_not_the_wrapper() {
    // A library's atomic whose orders are fixed inside (as
    // readerwriterqueue's `weak_atomic`), in a header of its own: the
    // message passing through it races. The fix is at the two calls (or
    // fences next to them); changing the wrapper's order would change
    // every use of it. The trace still shows where each access is made.
    let dir = std::env::temp_dir().join(format!("c11check-programs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("relaxed_atomic.h"),
        r#"#include <atomic>
template <class T> struct relaxed_atomic {
  std::atomic<T> value{};
  T load() const { return value.load(std::memory_order_relaxed); }
  void store(T v) { value.store(v, std::memory_order_relaxed); }
};
"#,
    )
    .unwrap();
    let exe = common::build_with(
        "wrapper_hint",
        r#"#include "relaxed_atomic.h"
#include <thread>
int payload;
relaxed_atomic<int> ready;
int main() {
  std::thread t([] {
    payload = 42;
    ready.store(1);
  });
  while (!ready.load()) {
  }
  int v = payload;
  t.join();
  return v == 42 ? 0 : 1;
}
"#,
        common::Lang::Cxx,
        &[],
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    let hint = err
        .lines()
        .find(|l| l.contains("does not synchronise with it"))
        .unwrap_or_else(|| panic!("no fix hint: {err}"));
    // In this order (columns differ between gcc and clang).
    let mut rest = hint;
    for wanted in [
        "the store ",
        "wrapper_hint.cc:8:",
        " (its call of relaxed_atomic<int>::store(int), ",
        "relaxed_atomic.h:5:",
        ") Release and the load ",
        "wrapper_hint.cc:10:",
        " in main() (its call of relaxed_atomic<int>::load() const, ",
        "relaxed_atomic.h:4:",
        ") Acquire",
    ] {
        let at = rest
            .find(wanted)
            .unwrap_or_else(|| panic!("{wanted:?} in order: {hint}"));
        rest = &rest[at + wanted.len()..];
    }
    assert!(
        err.lines().any(|l| l.contains("load(Relaxed) ready = 0")
            && l.contains("relaxed_atomic.h:4:")
            && l.ends_with(" in relaxed_atomic<int>::load() const")),
        "{err}"
    );
}

#[test]
fn a_thread_that_hangs_outside_the_model_is_named_by_the_watchdog() {
    // After its store, thread 1 loops where nothing is instrumented: the
    // runtime never hears from it again, and says so.
    let exe = build(
        "hang",
        r#"#include <pthread.h>
#include <stdatomic.h>
atomic_int x;
void *spin(void *a) {
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  for (;;) { }
  return 0;
}
int main() { pthread_t t; pthread_create(&t, 0, spin, 0); pthread_join(t, 0); return 0; }
"#,
    );
    let mut child = Command::new(&exe)
        .env("C11CHECK_WATCHDOG_SECS", "1")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read until the watchdog has spoken (however busy the machine), then
    // stop the program, which spins for ever.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut err = String::new();
    // (Ten minutes of silence is a guard against a hang, not a speed.)
    while let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(600)) {
        err.push_str(&line);
        err.push('\n');
        if line.contains("no progress for") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        err.contains(
            "c11check: no progress for 1 s: modelled thread 1 is running, after its operation at "
        ),
        "{err}"
    );
    assert!(err.contains("hang.c:5:"), "{err}");
    assert!(err.contains("Build that code with `c11check cc`"), "{err}");
}

#[test]
fn robustness_reports_store_buffering_and_passes_waits_for_each_others_flags() {
    let sb = build(
        "rob_sb",
        r#"#include <pthread.h>
#include <stdatomic.h>
atomic_int x, y;
int a, b;
void *other(void *p) {
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  b = atomic_load_explicit(&x, memory_order_relaxed);
  return 0;
}
int main() {
  pthread_t t; pthread_create(&t, 0, other, 0);
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  a = atomic_load_explicit(&y, memory_order_relaxed);
  pthread_join(t, 0);
  return 0;
}
"#,
    );
    assert_passes(&sb, &[], 4);
    let (code, err) = run(&sb, &[("C11CHECK_ROBUSTNESS", "1")]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("c11check found a robustness violation"),
        "{err}"
    );
    // The cycle in the program's terms: its variables and lines.
    assert!(err.contains("store(Relaxed) y := 1 at "), "{err}");
    assert!(
        err.contains("load(Relaxed) x = 0 (reads the initial value) at "),
        "{err}"
    );
    assert!(err.contains("rob_sb.c:7:"), "{err}");
    assert!(err.contains("-fr->"), "{err}");
    // The repair, found by re-running the program with it.
    assert!(err.contains("Repair (re-run with it"), "{err}");
    assert_eq!(
        err.matches("put fence(SeqCst) right before the access at ")
            .count(),
        2,
        "{err}"
    );
    assert!(
        err.contains("rob_sb.c:7:7 in other()") && err.contains("rob_sb.c:13:7 in main()"),
        "{err}"
    );

    // Each thread raises its flag and waits for the other's, one with an
    // empty loop, one yielding: the turns that saw 0 do not count.
    let barrier = build(
        "rob_barrier",
        r#"#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
atomic_int x, y;
void *other(void *p) {
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  while (atomic_load_explicit(&x, memory_order_relaxed) != 1) sched_yield();
  return 0;
}
int main() {
  pthread_t t; pthread_create(&t, 0, other, 0);
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  while (atomic_load_explicit(&y, memory_order_relaxed) != 1) ;
  pthread_join(t, 0);
  return 0;
}
"#,
    );
    assert_passes(&barrier, &[("C11CHECK_ROBUSTNESS", "1")], 4);

    // A loop that reads twice, counting, is no wait: its first read counts.
    let counting = build(
        "rob_counting",
        r#"#include <pthread.h>
#include <stdatomic.h>
atomic_int x, y;
int a, b;
void *other(void *p) {
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 2, memory_order_relaxed);
  b = atomic_load_explicit(&x, memory_order_relaxed);
  return 0;
}
int main() {
  pthread_t t; pthread_create(&t, 0, other, 0);
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  for (int i = 0; i < 2; i++) a += atomic_load_explicit(&y, memory_order_relaxed);
  pthread_join(t, 0);
  return 0;
}
"#,
    );
    let (code, err) = run(&counting, &[("C11CHECK_ROBUSTNESS", "1")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("robustness violation"), "{err}");
    // A scan over two flags (the other's and one nobody sets): no turn
    // repeats the one before, so with sched_yield the turns that read 0
    // count and the barrier is not robust; ended with the marker, they are
    // left out.
    let scan = |end_turn: &str| {
        format!(
            r#"#include <c11check.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
atomic_int flags[3];
void wait(int mine, int other) {{
  atomic_store_explicit(&flags[mine], 1, memory_order_relaxed);
  for (int turn = 0; turn < 4; turn++) {{
    if (atomic_load_explicit(&flags[turn % 2 ? 2 : other], memory_order_relaxed) == 1) break;
    {end_turn};
  }}
}}
void *other(void *p) {{ wait(1, 0); return 0; }}
int main() {{
  pthread_t t; pthread_create(&t, 0, other, 0);
  wait(0, 1);
  pthread_join(t, 0);
  return 0;
}}
"#
        )
    };
    let yielding = build("rob_scan_yield", &scan("sched_yield()"));
    let (code, err) = run(&yielding, &[("C11CHECK_ROBUSTNESS", "1")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("robustness violation"), "{err}");
    let marked = build("rob_scan_marked", &scan("c11check_failed_wait_turn()"));
    let (code, err) = run(&marked, &[("C11CHECK_ROBUSTNESS", "1")]);
    assert_eq!(code, 0, "{err}");

    // Live random runs: SC runs watched by location clocks.
    let live = [
        ("C11CHECK_ROBUSTNESS", "1"),
        ("C11CHECK_ITERATIONS", "2000"),
    ];
    let (code, err) = run(&sb, &live);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("found by location clocks"), "{err}");
    assert!(err.contains("rob_sb.c:"), "{err}");
    let (code, err) = run(&barrier, &live);
    assert_eq!(code, 0, "{err}");
    let (code, err) = run(&marked, &live);
    assert_eq!(code, 0, "{err}");
    let (code, err) = run(&counting, &live);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("may read the stale value"), "{err}");
}

#[test]
fn worker_processes_explore_the_executions_one_does_and_report_one_bug() {
    // Three threads adding to one counter (1,680 orders of their RMWs),
    // explored by one process and by C11CHECK_JOBS forked workers, each a
    // shard of the executions: the same count.
    let counter = build(
        "jobs_counter",
        r#"#include <pthread.h>
#include <stdatomic.h>
atomic_int x;
void *add(void *p) {
  for (int i = 0; i < 3; i++) atomic_fetch_add_explicit(&x, 1, memory_order_relaxed);
  return 0;
}
int main() {
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, add, 0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  return atomic_load_explicit(&x, memory_order_relaxed) == 9 ? 0 : 1;
}
"#,
    );
    let one = executions(&assert_passes(&counter, &[("C11CHECK_JOBS", "1")], 1680));
    for jobs in ["2", "3"] {
        assert_passes(&counter, &[("C11CHECK_JOBS", jobs)], one);
    }
    // A bug: each worker explores its shard in order, so the report is the
    // same on every run with the same number of workers, and it replays.
    let racy = build(
        "jobs_race",
        r#"#include <pthread.h>
#include <stdatomic.h>
#include <assert.h>
atomic_int x, y;
void *other(void *p) {
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  return 0;
}
int main() {
  pthread_t t; pthread_create(&t, 0, other, 0);
  if (atomic_load_explicit(&y, memory_order_relaxed) == 1)
    assert(atomic_load_explicit(&x, memory_order_relaxed) == 1);
  pthread_join(t, 0);
  return 0;
}
"#,
    );
    let (code, first) = run(&racy, &[("C11CHECK_JOBS", "2")]);
    assert_eq!(code, 1, "{first}");
    let (_, again) = run(&racy, &[("C11CHECK_JOBS", "2")]);
    let replay = |e: &str| {
        e.lines()
            .find(|l| l.starts_with("Replay it with"))
            .map(str::to_string)
    };
    assert_eq!(replay(&first), replay(&again), "{first}\n{again}");
    assert!(first.contains("assertion"), "{first}");
    // Random runs: the workers take every Nth chunk of iterations and the
    // report is one process's: the same first iteration, replay and (live)
    // hit count on any number of workers.
    let verdict = |e: &str| {
        e.lines()
            .filter(|l| {
                l.starts_with("c11check found")
                    || l.contains("(hit in")
                    || l.starts_with("Replay it with")
                    || l.starts_with("c11check: no bug found")
            })
            // Not the time a passing run took.
            .map(|l| l.split(" of /").next().unwrap_or(l).to_string())
            .collect::<Vec<_>>()
    };
    for live in ["1", "0"] {
        let env = |jobs| {
            [
                ("C11CHECK_ITERATIONS", "300"),
                ("C11CHECK_LIVE", live),
                ("C11CHECK_JOBS", jobs),
            ]
        };
        let (code, one) = run(&racy, &env("1"));
        assert_eq!(code, 1, "{one}");
        assert!(one.contains("in random iteration"), "{one}");
        assert_eq!(one.contains("(hit in"), live == "1", "{one}");
        for jobs in ["2", "3"] {
            let (_, many) = run(&racy, &env(jobs));
            assert_eq!(
                verdict(&many),
                verdict(&one),
                "{jobs} jobs:\n{many}\none:\n{one}"
            );
        }
        let (code, one) = run(&counter, &env("1"));
        assert_eq!(code, 0, "{one}");
        let (_, two) = run(&counter, &env("2"));
        assert_eq!(verdict(&two), verdict(&one), "{two}\n{one}");
    }
}
