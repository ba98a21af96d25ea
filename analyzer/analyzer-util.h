/*
 * analyzer-util.h - helpers shared by analyzer/'s printers. Private.
 */
#ifndef DT_ANALYZER_UTIL_H
#define DT_ANALYZER_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-args.h"

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

/* v as printf's "%g" prints it. An integer below 10^6 in magnitude is
 * its digits there (no point, no exponent): printed without printf,
 * which took most of the time of a call's arguments, alpha and beta
 * being 1 and 0 in almost every call. */
static inline void dt_put_g(char *buf, size_t size, int *plen, double v)
{
	int len = *plen;

	/* -0 is "-0" there */
	if (v > -1e6 && v < 1e6 && v == (double)(int32_t)v &&
	    (v != 0 || !signbit(v)))
		dt_put_i64(buf, size, &len, (int32_t)v);
	else
		APPEND("%g", v);
	*plen = len;
}

/* dt_arg_format() appending to buf (analyzer-args.c). */
void dt_arg_put(const struct dt_arg *a, char *buf, size_t size, int *len);

/* A growable string; { 0 } is empty. */
struct dt_sbuf {
	char *p; /* NULL until something is written */
	size_t len, cap;
};

/* Room for n more bytes and a NUL; false when memory is short. */
bool dt_sb_reserve(struct dt_sbuf *b, size_t n);
void dt_sb_printf(struct dt_sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* An item of a list: sep first, unless it is the first. */
void dt_sb_item(struct dt_sbuf *b, const char *sep, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The string (malloc'ed, "" when empty); b is empty again. */
char *dt_sb_take(struct dt_sbuf *b);

/* p (an array of *cap elements of elem bytes) grown to hold `need`, by
 * doubling, new elements zeroed; NULL when memory is short (p is then
 * still valid). */
void *dt_grow_array(void *p, size_t *cap, size_t need, size_t elem);

/* Bins of a histogram over time (n, even) made half as many, each twice
 * as wide: pairs summed into the first half, the second half zeroed. */
void dt_bins_fold(uint64_t *bins, size_t n);

/* strdup that passes NULL through. */
static inline char *dt_xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* A formatted string, malloc'ed; NULL when memory is short. */
static inline char *dt_xasprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline char *dt_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

#endif /* DT_ANALYZER_UTIL_H */
