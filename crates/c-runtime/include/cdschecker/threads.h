/* c11check's stand-in for CDSChecker's <threads.h>, so that programs
 * written for CDSChecker build unchanged with `c11check cc --cdschecker`:
 * its `thrd_t`, a `thrd_create` whose routine returns nothing, a
 * `thrd_join` that takes the thread by value, and `user_main`, which the
 * checker calls in place of `main`. The threads are pthreads, which the
 * c11check runtime models. (C11's own <threads.h> is glibc's, also
 * modelled; this one replaces it only under --cdschecker.) */
#ifndef C11CHECK_CDSCHECKER_THREADS_H
#define C11CHECK_CDSCHECKER_THREADS_H

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*thrd_start_t)(void *);
typedef struct {
	pthread_t priv;
} thrd_t;

/* The routine and argument a new thread starts with. Handed over outside
 * the instrumentation: this is the checker's plumbing, not the program's
 * memory. */
struct c11check_cds_start {
	thrd_start_t fn;
	void *arg;
};

__attribute__((no_sanitize_thread, unused)) static void *c11check_cds_run(void *p)
{
	struct c11check_cds_start s = *(struct c11check_cds_start *)p;
	free(p);
	s.fn(s.arg);
	return NULL;
}

__attribute__((no_sanitize_thread, unused)) static int thrd_create(thrd_t *t, thrd_start_t fn, void *arg)
{
	struct c11check_cds_start *s = (struct c11check_cds_start *)malloc(sizeof *s);
	s->fn = fn;
	s->arg = arg;
	return pthread_create(&t->priv, NULL, c11check_cds_run, s);
}

__attribute__((unused)) static int thrd_join(thrd_t t)
{
	return pthread_join(t.priv, NULL);
}

__attribute__((unused)) static void thrd_yield(void)
{
	sched_yield();
}

__attribute__((unused)) static thrd_t thrd_current(void)
{
	thrd_t t;
	t.priv = pthread_self();
	return t;
}

int user_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

/* The program's entry: CDSChecker's programs define `user_main`. Weak, so
 * that every file including this header may define it. */
__attribute__((weak)) int main(int argc, char **argv)
{
	return user_main(argc, argv);
}

#endif
