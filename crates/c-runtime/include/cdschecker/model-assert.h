/* c11check's stand-in for CDSChecker's <model-assert.h>: MODEL_ASSERT
 * fails the execution when its condition is false (with or without
 * NDEBUG). */
#ifndef C11CHECK_CDSCHECKER_MODEL_ASSERT_H
#define C11CHECK_CDSCHECKER_MODEL_ASSERT_H

#ifdef __cplusplus
extern "C"
#endif
void c11check_assert_fail(const char *expr, const char *file, unsigned int line, const char *function)
	__attribute__((noreturn));

#define MODEL_ASSERT(expr) \
	((expr) ? (void)0 : c11check_assert_fail(#expr, __FILE__, __LINE__, __func__))

#endif
