/*
 * c11check's own annotations for C and C++ programs (`c11check cc` puts
 * this header on the include path; outside c11check, define them away).
 *
 * - c11check_failed_wait_turn(): call it (in place of sched_yield()) at the
 *   end of a wait-loop turn that found nothing, in a loop c11check cannot
 *   recognise by repetition (each turn reads other places, as a scan over
 *   several flags does). Robustness checking then leaves the turn's accesses
 *   (since the thread's previous hint) out if it wrote nothing atomic, as it
 *   does with the turns of loops it recognises.
 */
#ifndef C11CHECK_H
#define C11CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

void c11check_failed_wait_turn(void);

#ifdef __cplusplus
}
#endif

#endif
