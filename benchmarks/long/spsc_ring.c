/* A single-producer single-consumer ring buffer and its test driver, the
 * shape of C11Tester's long-running application benchmarks: a producer
 * pushes N numbers, a consumer pops them and checks they come in order.
 * Acquire/release publication; both sides spin while the ring is full or
 * empty, as such code does.
 *
 *   spsc_ring [N]      (default 10000)
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 64

struct ring {
    long slot[SLOTS];
    atomic_size_t head; /* next slot to pop: the consumer's */
    atomic_size_t tail; /* next slot to push: the producer's */
};

static struct ring ring;
static long iterations = 10000;

static void push(struct ring *r, long v) {
    size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    while (t - atomic_load_explicit(&r->head, memory_order_acquire) == SLOTS) {
        /* full */
    }
    r->slot[t % SLOTS] = v;
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
}

static long pop(struct ring *r) {
    size_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    while (atomic_load_explicit(&r->tail, memory_order_acquire) == h) {
        /* empty */
    }
    long v = r->slot[h % SLOTS];
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return v;
}

static void *producer(void *arg) {
    (void)arg;
    for (long i = 0; i < iterations; i++)
        push(&ring, i);
    return NULL;
}

static void *consumer(void *arg) {
    long *sum = arg;
    for (long i = 0; i < iterations; i++) {
        long v = pop(&ring);
        assert(v == i);
        *sum += v;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1)
        iterations = atol(argv[1]);
    long sum = 0;
    pthread_t p, c;
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, &sum);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    assert(sum == iterations * (iterations - 1) / 2);
    printf("%ld\n", sum);
    return 0;
}
