//! Threads and synchronization as C and C++ programs use them: condition
//! variables (spurious wake-ups and time-outs explored), read-write locks,
//! `pthread_once`, spin locks, thread-specific data, sleeping, C11
//! `<threads.h>`, and libstdc++'s `std::thread`, `std::mutex`,
//! `std::condition_variable`, `std::shared_mutex`, `std::call_once`,
//! `thread_local` and C++20 `atomic::wait`. Each correct program passes;
//! each broken one is reported as the bug it has.

mod common;

use common::{assert_passes, build, build_with, executions, run, Lang};

const CONDVAR: &str = r#"#include <pthread.h>
#include <assert.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int ready, data;
void *producer(void *a) {
  pthread_mutex_lock(&m); data = 42; ready = 1; pthread_cond_signal(&c); pthread_mutex_unlock(&m);
  return 0;
}
int main() {
  pthread_t t; pthread_create(&t, 0, producer, 0);
  pthread_mutex_lock(&m);
  WAIT
  assert(data == 42);
  pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return 0;
}
"#;

#[test]
fn a_condition_variable_wait_in_a_loop_passes_and_one_in_an_if_fails() {
    let looped = build(
        "cv_loop",
        &CONDVAR.replace("WAIT", "while (!ready) pthread_cond_wait(&c, &m);"),
    );
    let (code, err) = run(&looped, &[]);
    assert_eq!(code, 0, "{err}");
    // The producer first (no wait); or main waits and wakes by the signal,
    // or spuriously before or after the producer ran (then, not spurious
    // twice in a row at that wait, it waits for the signal).
    assert_eq!(executions(&err), 4, "{err}");

    let once = build(
        "cv_if",
        &CONDVAR.replace("WAIT", "if (!ready) pthread_cond_wait(&c, &m);"),
    );
    let (code, err) = run(&once, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("assertion `data == 42` failed"), "{err}");
    assert!(
        err.contains("c11check chooses a spurious wake-up or a time-out here: yes"),
        "{err}"
    );
}

#[test]
fn a_signal_before_the_wait_is_a_lost_wake_up() {
    let exe = build(
        "cv_lost",
        r#"#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
void *signaller(void *a) { pthread_mutex_lock(&m); pthread_cond_signal(&c); pthread_mutex_unlock(&m); return 0; }
int main() {
  pthread_t t; pthread_create(&t, 0, signaller, 0);
  pthread_mutex_lock(&m);
  pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return 0;
}
"#,
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("a condition variable's notification"), "{err}");
}

#[test]
fn a_timed_wait_may_time_out_or_wake_spuriously_and_is_no_deadlock() {
    // Nobody signals: the wait times out or wakes spuriously (returning 0,
    // as POSIX allows), so no bug; an assertion on either result fails.
    let src = |check: &str| {
        format!(
            r#"#include <pthread.h>
#include <assert.h>
#include <errno.h>
#include <time.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int main() {{
  struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts); ts.tv_sec += 1;
  pthread_mutex_lock(&m);
  int r = pthread_cond_timedwait(&c, &m, &ts);
  {check}
  pthread_mutex_unlock(&m);
  return 0;
}}
"#
        )
    };
    let either = "assert(r == ETIMEDOUT || r == 0);";
    let (code, err) = run(&build("cv_timed", &src(either)), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(executions(&err), 2, "{err}");
    let (code, err) = run(&build("cv_timed_bad", &src("assert(r == 0);")), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("assertion `r == 0` failed"), "{err}");
    let (code, err) = run(
        &build("cv_timed_spurious", &src("assert(r == ETIMEDOUT);")),
        &[],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("assertion `r == ETIMEDOUT` failed"), "{err}");
}

/// One condition variable for a hand-over both ways (issue 51): `main`'s
/// signal must wake the thread waiting when it is made; `main`, waiting
/// later, cannot take that wake-up for itself (reported as a deadlock
/// before).
#[test]
fn a_signal_wakes_a_thread_waiting_when_it_was_made() {
    let c = build(
        "cv_handoff",
        r#"#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int a, b;
void *t(void *arg) {
  pthread_mutex_lock(&m);
  while (!a) pthread_cond_wait(&c, &m);
  b = 1; pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  return 0;
}
int main() {
  pthread_t th; pthread_create(&th, 0, t, 0);
  pthread_mutex_lock(&m); a = 1; pthread_cond_signal(&c); pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m); while (!b) pthread_cond_wait(&c, &m); pthread_mutex_unlock(&m);
  pthread_join(th, 0);
  return 0;
}
"#,
    );
    let (code, err) = run(&c, &[]);
    assert_eq!(code, 0, "{err}");
    let cxx = build_with(
        "cxx_cv_handoff",
        r#"#include <thread>
#include <mutex>
#include <condition_variable>
struct S { std::mutex m; std::condition_variable cv; bool a = false, b = false; } s;
int main() {
  std::thread t([] {
    std::unique_lock<std::mutex> g(s.m);
    while (!s.a) s.cv.wait(g);
    s.b = true; s.cv.notify_one();
  });
  { std::lock_guard<std::mutex> g(s.m); s.a = true; s.cv.notify_one(); }
  { std::unique_lock<std::mutex> g(s.m); while (!s.b) s.cv.wait(g); }
  t.join();
  return 0;
}
"#,
        Lang::Cxx,
        &[],
    );
    let (code, err) = run(&cxx, &[]);
    assert_eq!(code, 0, "{err}");
}

const RWLOCK: &str = r#"#include <pthread.h>
#include <assert.h>
pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
int x, y;
void *writer(void *a) { WRLOCK(&l); x++; y++; pthread_rwlock_unlock(&l); return 0; }
void *reader(void *a) { pthread_rwlock_rdlock(&l); int a1 = x, b1 = y; pthread_rwlock_unlock(&l); assert(a1 == b1); return 0; }
int main() {
  pthread_t t[4];
  pthread_create(&t[0], 0, writer, 0); pthread_create(&t[1], 0, writer, 0);
  pthread_create(&t[2], 0, reader, 0); pthread_create(&t[3], 0, reader, 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  assert(x == 2);
  return 0;
}
"#;

#[test]
fn read_write_locks_exclude_writers_and_a_writer_under_a_read_lock_races() {
    let ok = build("rw_ok", &RWLOCK.replace("WRLOCK", "pthread_rwlock_wrlock"));
    let (code, err) = run(&ok, &[]);
    assert_eq!(code, 0, "{err}");
    // The orders of the critical sections (readers may share theirs).
    assert_eq!(executions(&err), 48, "{err}");
    let bad = build("rw_bad", &RWLOCK.replace("WRLOCK", "pthread_rwlock_rdlock"));
    let (code, err) = run(&bad, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("data race"), "{err}");
}

#[test]
fn c11_threads_once_keys_spin_locks_and_sleeps() {
    let exe = build(
        "c11",
        r#"#include <pthread.h>
#include <threads.h>
#include <assert.h>
#include <unistd.h>
#include <stdatomic.h>
pthread_once_t o = PTHREAD_ONCE_INIT;
once_flag f = ONCE_FLAG_INIT;
int inits, inits2, data, n1, n2;
mtx_t mx; pthread_spinlock_t s; pthread_key_t k; atomic_int dtors, flag;
void init(void) { inits++; data = 7; }
void init2(void) { inits2++; }
void dtor(void *p) { atomic_fetch_add(&dtors, 1); }
int worker(void *a) {
  pthread_once(&o, init); call_once(&f, init2); assert(data == 7);
  pthread_setspecific(k, a);
  pthread_spin_lock(&s); n1++; pthread_spin_unlock(&s);
  mtx_lock(&mx); n2++; mtx_unlock(&mx);
  assert(pthread_getspecific(k) == a);
  return (int)(long)a;
}
int waiter(void *a) { while (!atomic_load(&flag)) usleep(10); return 0; }
int main() {
  mtx_init(&mx, mtx_plain); pthread_spin_init(&s, 0); pthread_key_create(&k, dtor);
  thrd_t t[3];
  thrd_create(&t[0], worker, (void *)1); thrd_create(&t[1], worker, (void *)2);
  thrd_create(&t[2], waiter, 0);
  atomic_store(&flag, 1);
  int r0, r1; thrd_join(t[0], &r0); thrd_join(t[1], &r1); thrd_join(t[2], 0);
  assert(r0 == 1 && r1 == 2);
  assert(inits == 1 && inits2 == 1 && n1 == 2 && n2 == 2);
  assert(dtors == 2 && pthread_getspecific(k) == 0);
  assert(thrd_current() != t[0] && pthread_self() != 0);
  return 0;
}
"#,
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{err}");
}

const CXX: &str = r#"#include <thread>
#include <mutex>
#include <shared_mutex>
#include <condition_variable>
#include <atomic>
#include <cassert>
std::mutex m; std::condition_variable cv; bool ready; int data;
std::shared_mutex sm; int a, b;
std::once_flag of; int inits;
std::atomic<int> flag{0};
thread_local int tl = 5;
int main() {
  std::thread p([] { { std::lock_guard<std::mutex> g(m); data = 42; ready = true; } cv.notify_one(); tl = 1; });
  std::thread w([] { std::unique_lock<std::shared_mutex> g(sm); a++; b++; std::call_once(of, [] { inits++; }); tl = 2; });
  std::thread r([] { { std::shared_lock<std::shared_mutex> g(sm); assert(a == b); } std::call_once(of, [] { inits++; }); NOTIFY });
  {
    std::unique_lock<std::mutex> g(m);
    WAIT;
    assert(data == 42);
  }
  flag.wait(0);
  assert(flag.load() == 1);
  p.join(); w.join(); r.join();
  assert(inits == 1 && tl == 5);
  assert(std::this_thread::get_id() != p.get_id());
  return 0;
}
"#;

#[test]
fn cxx_threads_locks_condition_variables_and_atomic_wait() {
    let notify = "flag.store(1); flag.notify_one();";
    let ok = build_with(
        "cxx_ok",
        &CXX.replace("NOTIFY", notify)
            .replace("WAIT", "cv.wait(g, [] { return ready; })"),
        Lang::Cxx,
        &[],
    );
    let (code, err) = run(&ok, &[]);
    assert_eq!(code, 0, "{err}");

    // A wait without its condition wakes spuriously: the assertion fails,
    // reported at the program's line (not in libstdc++'s headers).
    let bare = build_with(
        "cxx_bare_wait",
        &CXX.replace("NOTIFY", notify).replace("WAIT", "cv.wait(g)"),
        Lang::Cxx,
        &[],
    );
    let (code, err) = run(&bare, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("assertion `data == 42` failed"), "{err}");
    assert!(err.contains("cxx_bare_wait.cc:19"), "{err}");

    // `atomic::wait` with nobody changing the value waits forever.
    let never = build_with(
        "cxx_no_notify",
        &CXX.replace("NOTIFY", "")
            .replace("WAIT", "cv.wait(g, [] { return ready; })"),
        Lang::Cxx,
        &[],
    );
    let (code, err) = run(&never, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("livelock"), "{err}");
}

#[test]
fn cxx_futures_promises_async_and_shared_ptr() {
    // std::promise/future, std::async and std::packaged_task (libstdc++
    // waits on a futex word and hands call_once's callable over in its
    // thread-locals), and shared_ptr's reference counts (plain in a
    // process libc believes single-threaded).
    let src = |after: &str| {
        format!(
            r#"#include <future>
#include <thread>
#include <memory>
#include <cassert>
int data;
int main() {{
  std::promise<int> p;
  std::future<int> f = p.get_future();
  std::thread t([&p] {{ data = 1; p.set_value(42); {after} }});
  assert(f.get() == 42);
  assert(data >= 1);
  t.join();
  auto a = std::async(std::launch::async, [] {{ return 7; }});
  assert(a.get() == 7);
  std::packaged_task<int(int)> task([](int x) {{ return x * 2; }});
  auto tf = task.get_future();
  std::thread t2(std::move(task), 21);
  assert(tf.get() == 42);
  t2.join();
  auto sp = std::make_shared<int>(5);
  std::thread t3([sp] {{ assert(*sp == 5); }});
  std::shared_ptr<int> copy = sp;
  t3.join();
  return 0;
}}
"#
        )
    };
    let exe = build_with("futures", &src(""), Lang::Cxx, &[]);
    assert_passes(&exe, &[], 96);
    let (code, err) = run(&exe, &[("C11CHECK_ITERATIONS", "1000")]);
    assert_eq!(code, 0, "{err}");
    // A write after set_value is not ordered before main's read.
    let exe = build_with("futures_race", &src("data = 2;"), Lang::Cxx, &[]);
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("data race on data"), "{err}");
}

const SEMAPHORE: &str = r#"#include <pthread.h>
#include <semaphore.h>
#include <assert.h>
#include <errno.h>
sem_t items;
int data;
void *producer(void *a) {
  data = 42;
  sem_post(&items);
  return 0;
}
int main() {
  sem_init(&items, 0, 0);
  pthread_t t; pthread_create(&t, 0, producer, 0);
  TAKE
  assert(data == 42);
  int v = -1; sem_getvalue(&items, &v); assert(v == 0);
  pthread_join(t, 0);
  sem_destroy(&items);
  return 0;
}
"#;

/// POSIX semaphores: a wait takes what a post gave, and the post happens
/// before it (the producer's plain write is seen, no race); a wait costs
/// no execution of its own. `sem_trywait` fails with `EAGAIN` where the
/// count is 0 (then the plain read races with the write), a timed wait
/// may time out (both explored; in a loop, not twice in a row at one
/// place, so the loop ends), and a wait nothing posts is a deadlock.
#[test]
fn semaphores_order_a_post_before_the_wait_that_takes_it() {
    let waits = build("sem_wait", &SEMAPHORE.replace("TAKE", "sem_wait(&items);"));
    assert_passes(&waits, &[], 1);

    let tries = build(
        "sem_trywait",
        &SEMAPHORE.replace(
            "TAKE",
            "if (sem_trywait(&items) != 0) { assert(errno == EAGAIN); sem_wait(&items); }",
        ),
    );
    assert_passes(&tries, &[], 2);

    let timed = build(
        "sem_timedwait",
        &SEMAPHORE.replace(
            "TAKE",
            "struct timespec ts = {0, 0}; while (sem_timedwait(&items, &ts) != 0) assert(errno == ETIMEDOUT);",
        ),
    );
    // The post came first; or the wait found nothing and waited, or timed
    // out, and then the next turn found the post or waited for it.
    assert_passes(&timed, &[], 4);

    let racy = build(
        "sem_racy",
        &SEMAPHORE.replace(
            "TAKE",
            "if (sem_trywait(&items) != 0 && data != 42) { pthread_join(t, 0); return 0; }",
        ),
    );
    let (code, err) = run(&racy, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("data race"), "{err}");

    let stuck = build(
        "sem_stuck",
        &SEMAPHORE.replace("TAKE", "sem_wait(&items); sem_wait(&items);"),
    );
    let (code, err) = run(&stuck, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("deadlock"), "{err}");
}

const ANNOTATED: &str = r#"#include <pthread.h>
#include <stdatomic.h>
#include <assert.h>
void AnnotateHappensBefore(const char *f, int l, void *addr);
void AnnotateHappensAfter(const char *f, int l, void *addr);
void AnnotateBenignRaceSized(const char *f, int l, const volatile void *mem, long size, const char *desc);
void AnnotateIgnoreReadsBegin(const char *f, int l);
void AnnotateIgnoreReadsEnd(const char *f, int l);
void AnnotateRWLockCreate(const char *f, int l, void *m);
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
int data, hits, unchecked;
atomic_int flag;
void *producer(void *a) {
  data = 42;
  AnnotateHappensBefore(__FILE__, __LINE__, &flag);
  __tsan_release(&data);
  atomic_store_explicit(&flag, 1, memory_order_release);
  unchecked = 1;
  hits++;
  return 0;
}
int main() {
  BENIGN
  AnnotateRWLockCreate(__FILE__, __LINE__, &data);
  pthread_t t; pthread_create(&t, 0, producer, 0);
  while (!atomic_load_explicit(&flag, memory_order_acquire)) ;
  AnnotateHappensAfter(__FILE__, __LINE__, &flag);
  __tsan_acquire(&data);
  assert(data == 42);
  IGNORE_BEGIN
  int u = unchecked;
  IGNORE_END
  assert(u == 0 || u == 1);
  hits++;
  pthread_join(t, 0);
  return 0;
}
"#;

/// ThreadSanitizer's annotations link and mean what they say: a program
/// built for ThreadSanitizer that annotates its synchronization
/// (happens-before/after, `__tsan_acquire`/`release`), declares a
/// statistics counter's race benign and reads a racy flag inside an
/// ignore region passes; without the benign-race annotation the counter's
/// race is reported, without the ignore region the flag's.
#[test]
fn thread_sanitizer_annotations_are_honoured() {
    let benign = "AnnotateBenignRaceSized(__FILE__, __LINE__, &hits, sizeof hits, \"statistics\");";
    let ignore_begin = "AnnotateIgnoreReadsBegin(__FILE__, __LINE__);";
    let ignore_end = "AnnotateIgnoreReadsEnd(__FILE__, __LINE__);";
    let program = |b: &str, i: &str, e: &str| {
        ANNOTATED
            .replace("BENIGN", b)
            .replace("IGNORE_BEGIN", i)
            .replace("IGNORE_END", e)
    };
    let annotated = build("annotated", &program(benign, ignore_begin, ignore_end));
    let (code, err) = run(&annotated, &[]);
    assert_eq!(code, 0, "{err}");

    let racy = build("annotated_racy", &program("", ignore_begin, ignore_end));
    let (code, err) = run(&racy, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("data race") && err.contains("hits"), "{err}");

    let checked = build("annotated_checked", &program(benign, "", ""));
    let (code, err) = run(&checked, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("data race") && err.contains("unchecked"),
        "{err}"
    );
}

/// A program that misuses a pthread object as `BODY` says.
const LIFETIME: &str = r#"#include <pthread.h>
#include <stdlib.h>
pthread_mutex_t m;
pthread_cond_t c;
pthread_barrier_t b;
void *locker(void *a) {
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  return 0;
}
int main() {
  pthread_t t;
  BODY
  return 0;
}
"#;

#[test]
fn pthread_objects_used_after_destroy_or_never_initialized_are_reported() {
    // (body, what the report says, the lines it names: parts split at `|`)
    let cases: [(&str, &str, &str); 7] = [
        (
            "pthread_mutex_init(&m, 0);\n  pthread_mutex_lock(&m);\n  pthread_mutex_unlock(&m);\n  pthread_mutex_destroy(&m);\n  pthread_mutex_lock(&m);",
            "main locks the mutex at 0x",
            "{f}:17:3 in main()), which main destroyed at |{f}:16:3 in main()",
        ),
        (
            "pthread_mutex_init(&m, 0);\n  pthread_create(&t, 0, locker, 0);\n  pthread_mutex_destroy(&m);\n  pthread_join(t, 0);",
            // (Destroyed while thread 1 holds it, or before it locks it:
            // whichever execution comes first.)
            "the mutex at 0x",
            "{f}:15:3 in main()",
        ),
        (
            "pthread_mutex_init(&m, 0);\n  pthread_mutex_lock(&m);\n  pthread_mutex_init(&m, 0);",
            "main initializes the mutex at 0x",
            "{f}:15:3 in main()), which main holds (it took it at |{f}:14:3 in main())",
        ),
        (
            "pthread_mutex_t *h = malloc(sizeof *h);\n  pthread_mutex_lock(h);",
            "main locks the mutex at 0x",
            "{f}:14:3 in main()), which was never initialized",
        ),
        (
            "pthread_barrier_wait(&b);",
            "main waits at the barrier at 0x",
            "{f}:13:3 in main()), which was never initialized",
        ),
        (
            "pthread_barrier_init(&b, 0, 1);\n  pthread_barrier_wait(&b);\n  pthread_barrier_destroy(&b);\n  pthread_barrier_wait(&b);",
            "main waits at the barrier at 0x",
            "{f}:16:3 in main()), which main destroyed at |{f}:15:3 in main()",
        ),
        (
            "pthread_cond_init(&c, 0);\n  pthread_cond_destroy(&c);\n  pthread_cond_signal(&c);",
            "main signals the condition variable at 0x",
            "{f}:15:3 in main()), which main destroyed at |{f}:14:3 in main()",
        ),
    ];
    for opt in ["-O0", "-O1"] {
        for (i, (body, what, other)) in cases.iter().enumerate() {
            let name = format!("lifetime{i}{opt}");
            let exe = build_with(&name, &LIFETIME.replace("BODY", body), Lang::C, &[opt]);
            let (code, err) = run(&exe, &[]);
            assert_eq!(code, 1, "{name}: {err}");
            assert!(
                err.contains("c11check found a misuse of a synchronization object"),
                "{name}: {err}"
            );
            let file = format!("{name}.c");
            assert!(err.contains(&what.replace("{f}", &file)), "{name}: {err}");
            for part in other.split('|') {
                assert!(err.contains(&part.replace("{f}", &file)), "{name}: {err}");
            }
        }
    }
    // Used as they should be, with static initializers and `_init`, on the
    // heap and in globals: no report.
    let exe = build(
        "lifetime_ok",
        &LIFETIME.replace(
            "BODY",
            "pthread_mutex_t *h = calloc(1, sizeof *h);\n  pthread_mutex_init(&m, 0);\n  pthread_create(&t, 0, locker, 0);\n  pthread_mutex_lock(h); pthread_mutex_unlock(h);\n  pthread_join(t, 0);\n  pthread_mutex_destroy(&m);\n  pthread_mutex_init(&m, 0);\n  pthread_mutex_lock(&m); pthread_mutex_unlock(&m);\n  pthread_barrier_init(&b, 0, 1); pthread_barrier_wait(&b); pthread_barrier_destroy(&b);\n  free(h);",
        ),
    );
    assert_passes(&exe, &[], 1);
}
