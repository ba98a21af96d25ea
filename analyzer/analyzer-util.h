/*
 * analyzer-util.h - helpers shared by analyzer/'s printers. Private.
 */
#ifndef DT_ANALYZER_UTIL_H
#define DT_ANALYZER_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Append to buf (size bytes) with snprintf semantics; `len` is the length
 * written so far, or that would have been written had buf been large
 * enough. Needs `buf`, `size` and an int `len` in scope. */
#define APPEND(...)                                                          \
	do {                                                                 \
		int k_ = snprintf(buf + (len < (int)size ? len : (int)size), \
				  len < (int)size ? size - (size_t)len : 0,  \
				  __VA_ARGS__);                              \
		if (k_ > 0)                                                  \
			len += k_;                                           \
	} while (0)

/* A 64-bit hash of n bytes, eight at a time: kernel names are hashed for
 * every kernel record read. Not for adversarial input. */
static inline uint64_t dt_hash(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull), v;

	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&v, s, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	v = 0;
	memcpy(&v, s, n);
	h = (h ^ v) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

#endif /* DT_ANALYZER_UTIL_H */
