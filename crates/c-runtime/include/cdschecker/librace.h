/* c11check's stand-in for CDSChecker's <librace.h>: plain (non-atomic)
 * loads and stores of 1, 2, 4 and 8 bytes. They are ordinary accesses,
 * instrumented as every other one, so races on them are reported. */
#ifndef C11CHECK_CDSCHECKER_LIBRACE_H
#define C11CHECK_CDSCHECKER_LIBRACE_H

#include <stdint.h>

#define C11CHECK_LIBRACE_ACCESS(bits) \
	__attribute__((always_inline, unused)) static inline void store_##bits(void *addr, uint##bits##_t val) \
	{ \
		*(volatile uint##bits##_t *)addr = val; \
	} \
	__attribute__((always_inline, unused)) static inline uint##bits##_t load_##bits(const void *addr) \
	{ \
		return *(const volatile uint##bits##_t *)addr; \
	}

C11CHECK_LIBRACE_ACCESS(8)
C11CHECK_LIBRACE_ACCESS(16)
C11CHECK_LIBRACE_ACCESS(32)
C11CHECK_LIBRACE_ACCESS(64)

#undef C11CHECK_LIBRACE_ACCESS

#endif
