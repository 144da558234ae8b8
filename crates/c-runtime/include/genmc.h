/*
 * c11check's stand-in for GenMC's <genmc.h>: the verifier functions GenMC's
 * test programs call, mapped onto c11check's runtime (libc11check_rt.so).
 *
 * - __VERIFIER_assume(c): when c is false the execution is cut (counted as
 *   blocked, not as a bug).
 * - __VERIFIER_spin_end(c) with c false marks a loop turn that waits: the
 *   runtime cuts the thread if the turn read nothing new.
 * - Hazard pointers: protect is an acquire load; retire keeps the node
 *   (never freed, so never used after its free).
 * - The annotations GenMC uses for its own optimisations are no-ops.
 * - __VERIFIER_nondet_int() returns 0 (c11check does not explore input
 *   values).
 */
#ifndef C11CHECK_GENMC_H
#define C11CHECK_GENMC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void __VERIFIER_assume(int cond);
int __VERIFIER_nondet_int(void);
void __VERIFIER_loop_begin(void);
void __VERIFIER_spin_start(void);
void __VERIFIER_spin_end(int cond);

#ifdef __cplusplus
}
#endif

typedef pthread_t __VERIFIER_thread_t;

static inline __VERIFIER_thread_t __VERIFIER_spawn(void *(*start)(void *), void *arg)
{
	pthread_t t;
	pthread_create(&t, NULL, start, arg);
	return t;
}
#define __VERIFIER_spawn_symmetric(start, arg, th) __VERIFIER_spawn(start, arg)
static inline void *__VERIFIER_join(__VERIFIER_thread_t t)
{
	void *r = NULL;
	pthread_join(t, &r);
	return r;
}
#define __VERIFIER_join_symmetric(t) ((void)__VERIFIER_join(t))

#define __VERIFIER_local_write(s) do { s; } while (0)
#define __VERIFIER_final_write(s) do { s; } while (0)
#define __VERIFIER_helped_CAS(c) do { c; } while (0)
#define __VERIFIER_helping_CAS(c) do { c; } while (0)
#define __VERIFIER_final_CAS(c) (c)
#define __VERIFIER_optional(x) x

typedef struct { int unused; } __VERIFIER_hp_t;
static __VERIFIER_hp_t __c11check_hp;
#define __VERIFIER_hp_alloc() (&__c11check_hp)
#define __VERIFIER_hp_protect(hp, p) atomic_load_explicit((p), memory_order_acquire)
#define __VERIFIER_hp_clear(hp) ((void)(hp))
#define __VERIFIER_hp_free(hp) ((void)(hp))
#define __VERIFIER_hp_retire(p) ((void)(p))

#endif
