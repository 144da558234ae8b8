//! The heap checks: uses after free (and races with a free), reads of
//! uninitialized heap memory, double and invalid frees, overflows; and no
//! false alarm on the ordinary uses of the heap (realloc, calloc, libc
//! writing into a block, struct copies with padding).

mod common;

use common::{assert_passes, build, build_with, executions, run, Lang};

/// Runs `exe` exhaustively, then with the live (random) engine; both must
/// report `title` with `text` in the message.
fn both_engines_report(exe: &std::path::Path, title: &str, text: &str) {
    for env in [&[][..], &[("C11CHECK_ITERATIONS", "2000")][..]] {
        let (code, err) = run(exe, env);
        assert_eq!(code, 1, "{env:?}: {err}");
        assert!(
            err.contains(&format!("c11check found a {title}")),
            "{env:?}: {err}"
        );
        assert!(err.contains(text), "{env:?}: {err}");
    }
}

#[test]
fn a_node_freed_while_a_reader_may_still_use_it_is_reported() {
    // main publishes a node, unpublishes it and frees it at once; the
    // reader may have loaded the pointer before and reads through it.
    let src = |before_free: &str| {
        format!(
            r#"#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
struct node {{ int value; struct node *next; }};
struct node *_Atomic head;
void *reader(void *a) {{
  struct node *n = atomic_load_explicit(&head, memory_order_acquire);
  if (n) {{ volatile int v = n->value; (void)v; }}
  return 0;
}}
int main() {{
  struct node *n = malloc(sizeof *n);
  n->value = 1; n->next = 0;
  pthread_t t; pthread_create(&t, 0, reader, 0);
  atomic_store_explicit(&head, n, memory_order_release);
  atomic_store_explicit(&head, 0, memory_order_relaxed);
  {before_free}
  free(n);
  return 0;
}}
"#
        )
    };
    let exe = build("uaf_reader", &src(""));
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    // The free runs first in the first execution explored.
    assert!(err.contains("c11check found a use after free"), "{err}");
    assert!(
        err.contains(
            "use after free: thread 1 reads 4 bytes at offset 0 of the 16-byte block allocated at "
        ),
        "{err}"
    );
    assert!(err.contains("uaf_reader.c:12:"), "{err}");
    assert!(err.contains("which the main thread freed at "), "{err}");
    assert!(err.contains("uaf_reader.c:18:"), "{err}");
    assert!(err.contains("the access is at "), "{err}");
    assert!(err.contains("in reader()"), "{err}");

    // The reader reads before the free in the schedule but nothing orders
    // its read before the free: a race with the free.
    let (code, err) = run(
        &exe,
        &[("C11CHECK_ITERATIONS", "2000"), ("C11CHECK_SEED", "3")],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("c11check found a use after free") || err.contains("data race with a free"),
        "{err}"
    );

    // Joining the reader first orders its read before the free.
    let exe = build("uaf_joined", &src("pthread_join(t, 0);"));
    assert_passes(&exe, &[], 3);
}

#[test]
fn a_load_before_the_initializing_store_reads_uninitialized_memory() {
    // The node is published before its field is set: the reader may read
    // the field before anything wrote it.
    let src = |order: &str| {
        format!(
            r#"#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
struct node {{ atomic_int value; }};
struct node *_Atomic head;
void *reader(void *a) {{
  struct node *n;
  while (!(n = atomic_load_explicit(&head, memory_order_acquire))) ;
  return (void*)(long)atomic_load_explicit(&n->value, memory_order_relaxed);
}}
int main() {{
  struct node *n = malloc(sizeof *n);
  pthread_t t; pthread_create(&t, 0, reader, 0);
  {order}
  pthread_join(t, 0);
  free(n);
  return 0;
}}
"#
        )
    };
    let exe = build(
        "uninit_published",
        &src("atomic_store_explicit(&head, n, memory_order_release);\n  atomic_store_explicit(&n->value, 1, memory_order_relaxed);"),
    );
    both_engines_report(
        &exe,
        "read of uninitialized memory",
        "which nothing wrote before",
    );
    let (_, err) = run(&exe, &[]);
    assert!(err.contains("in reader()"), "{err}");
    assert!(err.contains("(reads the initial value)"), "{err}");

    // Initialized before publication: every read is of the store.
    let exe = build(
        "uninit_fixed",
        &src("atomic_store_explicit(&n->value, 1, memory_order_relaxed);\n  atomic_store_explicit(&head, n, memory_order_release);"),
    );
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{err}");
    // The reader reads the pointer at once, or waits for it (cut, blocked).
    assert_eq!(executions(&err), 2, "{err}");
}

#[test]
fn a_plain_read_of_a_field_never_set_is_reported_and_calloc_is_zero() {
    let src = |alloc: &str| {
        format!(
            r#"#include <stdlib.h>
#include <stdio.h>
int main() {{
  int *p = {alloc};
  p[0] = 1;
  printf("%d\n", p[0] + p[1]);
  free(p);
  return 0;
}}
"#
        )
    };
    let exe = build("uninit_plain", &src("malloc(2 * sizeof(int))"));
    let (code, err) = run(&exe, &[]);
    assert_eq!(code, 1, "{err}");
    // gcc folds `p[0]`, clang does not; the read reported is `p[1]`'s, named after
    // the block (the first made in `main`) and its offset.
    assert!(err.contains("read of uninitialized memory: T0."), "{err}");
    assert!(err.contains("uninit_plain.c:6:"), "{err}");
    assert!(
        err.contains("reads main()'s block 1+4, which nothing wrote before"),
        "{err}"
    );
    let exe = build("calloc_zero", &src("calloc(2, sizeof(int))"));
    assert_passes(&exe, &[], 1);
}

#[test]
fn ordinary_heap_use_is_no_alarm() {
    // realloc keeps the contents; libc writes into a block; a struct copy
    // reads padding; strlen reads what snprintf wrote; calloc is zero.
    let exe = build(
        "heap_ok",
        r#"#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
struct node { atomic_int value; char tag; char name[16]; struct node *next; };
struct node *_Atomic head;
void *reader(void *a) {
  struct node *n;
  while (!(n = atomic_load_explicit(&head, memory_order_acquire))) ;
  int v = atomic_load_explicit(&n->value, memory_order_relaxed);
  struct node copy = *n;
  printf("%d %s %d\n", v, copy.name, (int)strlen(n->name));
  return 0;
}
int main() {
  struct node *n = malloc(sizeof *n);
  atomic_init(&n->value, 3);
  n->tag = 'x';
  snprintf(n->name, sizeof n->name, "x%d", 7);
  n->next = 0;
  n = realloc(n, sizeof *n * 2);
  char *buf = calloc(4, 1);
  pthread_t t; pthread_create(&t, 0, reader, 0);
  atomic_store_explicit(&head, n, memory_order_release);
  pthread_join(t, 0);
  int r = buf[0] + n[0].tag - 'x';
  free(n); free(buf);
  return r;
}
"#,
    );
    assert_passes(&exe, &[], 2);
    let (code, err) = run(&exe, &[("C11CHECK_ITERATIONS", "200")]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_write_just_before_its_free_is_not_taken_for_a_use_after_free() {
    // A plain write becomes an event at the thread's next operation (its
    // value is in memory then): here that is the free, and the location is
    // in use (bound) already.
    let exe = build(
        "write_then_free",
        r#"#include <stdlib.h>
int main() {
  int *p = malloc(8);
  int *volatile q = p;
  *q = 1;
  *q = *q + 1;
  free(p);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  return 0;
}
"#,
    );
    assert_passes(&exe, &[], 1);
}

#[test]
fn double_and_invalid_frees_and_overflows_are_reported() {
    let src = |body: &str| {
        format!(
            r#"#include <stdlib.h>
int main() {{
  // volatile: the compiler must not elide the allocation.
  char *volatile p = malloc(8);
  {body}
  return 0;
}}
"#
        )
    };
    for (name, body, text) in [
        (
            "double_free",
            "free(p); free(p);",
            "double free: the main thread frees at ",
        ),
        (
            "inner_free",
            "free(p + 4);",
            "invalid free: the main thread passes a pointer 4 bytes into a 8-byte block allocated at ",
        ),
        (
            "overflow",
            "p[8] = 1; return p[8];",
            "heap buffer overflow: the main thread writes 1 byte 8 bytes past the start of the 8-byte block allocated at ",
        ),
    ] {
        let exe = build(name, &src(body));
        let (code, err) = run(&exe, &[]);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(err.contains(text), "{name}: {err}");
        assert!(err.contains(&format!("{name}.c:")), "{name}: {err}");
    }
}

#[test]
fn a_treiber_stack_that_deletes_popped_nodes_at_once_is_reported() {
    // The classic bug lock-free reclamation schemes exist for: a popper
    // reads the top node's `next` while another pops and deletes it.
    let src = r#"#include <atomic>
#include <thread>
#include <cassert>
struct Node { int value; Node *next; };
std::atomic<Node *> top{nullptr};
void push(int v) {
  Node *n = new Node{v, top.load(std::memory_order_relaxed)};
  while (!top.compare_exchange_weak(n->next, n, std::memory_order_release,
                                    std::memory_order_relaxed)) {}
}
int pop() {
  Node *n = top.load(std::memory_order_acquire);
  while (n && !top.compare_exchange_weak(n, n->next, std::memory_order_acquire,
                                         std::memory_order_acquire)) {}
  if (!n) return -1;
  int v = n->value;
  delete n;
  return v;
}
int main() {
  push(1); push(2);
  std::thread a([] { pop(); }), b([] { pop(); });
  a.join(); b.join();
  return 0;
}
"#;
    let exe = build_with("treiber_delete", src, Lang::Cxx, &[]);
    let (code, err) = run(&exe, &[("C11CHECK_JOBS", "1")]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("use after free: thread ") || err.contains("data race with a free"),
        "{err}"
    );
    assert!(err.contains("in pop()"), "{err}");
    assert!(err.contains("treiber_delete.cc:"), "{err}");
    // The report's replay line, run in a fresh process (whose heap reused
    // nothing yet, so the freed node is met sooner), shows the bug again.
    let replay = err
        .lines()
        .find_map(|l| l.split("C11CHECK_REPLAY='").nth(1))
        .and_then(|r| r.split('\'').next())
        .expect("a replay line");
    let (code, again) = run(&exe, &[("C11CHECK_REPLAY", replay)]);
    assert_eq!(code, 1, "{again}");
    assert!(!again.contains("nondeterministic"), "{again}");
    assert!(
        again.contains("use after free: thread ") || again.contains("data race with a free"),
        "{again}"
    );
}
