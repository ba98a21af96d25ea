/*
 * analyzer-util.c - a growable string, for the descriptions, evidence and
 * notes the analyzer writes, and growable arrays (analyzer-util.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-util.h"

bool dt_sb_reserve(struct dt_sbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap * 2 : 256;

	while (cap < b->len + n + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p)
		return false;
	b->p = p;
	b->cap = cap;
	return true;
}

static void sb_vprintf(struct dt_sbuf *b, const char *fmt, va_list ap)
{
	for (;;) {
		size_t room = b->cap - b->len;
		va_list aq;
		va_copy(aq, ap);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, aq);
		va_end(aq);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		if (!dt_sb_reserve(b, (size_t)n))
			return;
	}
}

void dt_sb_printf(struct dt_sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

void dt_sb_item(struct dt_sbuf *b, const char *sep, const char *fmt, ...)
{
	va_list ap;

	if (b->len)
		dt_sb_printf(b, "%s", sep);
	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

char *dt_sb_take(struct dt_sbuf *b)
{
	char *p = b->p ? b->p : strdup("");
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

void *dt_grow_array(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * elem);
	if (!q)
		return NULL;
	memset((char *)q + *cap * elem, 0, (c - *cap) * elem);
	*cap = c;
	return q;
}

void dt_bins_fold(uint64_t *bins, size_t n)
{
	for (size_t i = 0; i < n / 2; i++)
		bins[i] = bins[2 * i] + bins[2 * i + 1];
	memset(bins + n / 2, 0, (n - n / 2) * sizeof(*bins));
}
