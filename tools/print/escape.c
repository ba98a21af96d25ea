/*
 * escape.c - a trace's strings as text may show them. Names, paths, the
 * command line and the environment in a trace are the traced process's
 * bytes: any of them may hold a terminal's control sequences (a title
 * change, a clear screen) or bytes that are not UTF-8. Text, Markdown and
 * table cells show them through dt_text(); JSON, HTML, CSV and SQLite have
 * their own rules (json.c, html.c, export-csv.c). Not a sanitizer of
 * what dnntrace prints itself: its colours are its own.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

int dt_char_shown(const char *s, size_t n)
{
	unsigned char c = (unsigned char)s[0];

	if (c < 0x80)
		return c >= 0x20 && c != 0x7f;
	/* U+0080..U+009F, the C1 controls, are 0xc2 0x80..0x9f: some
	 * terminals act on them (U+009B is CSI) */
	if (c == 0xc2 && n > 1 && (unsigned char)s[1] < 0xa0)
		return 0;
	return dt_utf8_len(s, n);
}

/* Bytes of s that dt_text() writes as they are, from the start. */
static size_t shown_span(const char *s, size_t n, bool keep_nl)
{
	size_t i = 0;
	int len;

	while (i < n) {
		if (keep_nl && s[i] == '\n')
			len = 1;
		else if (!(len = dt_char_shown(s + i, n - i)))
			break;
		i += (size_t)len;
	}
	return i;
}

/* s, n bytes, escaped into out. */
static void put_escaped(FILE *out, const char *s, size_t n, bool keep_nl)
{
	size_t i = 0;

	while (i < n) {
		size_t k = shown_span(s + i, n - i, keep_nl);
		fwrite(s + i, 1, k, out);
		i += k;
		if (i < n)
			fprintf(out, "\\x%02x", (unsigned char)s[i++]);
	}
}

void dt_put_text(FILE *out, const char *s, bool keep_nl)
{
	if (s)
		put_escaped(out, s, strlen(s), keep_nl);
}

void dt_put_textn(FILE *out, const char *s, size_t n)
{
	put_escaped(out, s, strnlen(s, n), false);
}

char *dt_text_dup(const char *s)
{
	char *copy = NULL;
	size_t size = 0;
	FILE *m;

	if (!s)
		return NULL;
	if (!(m = open_memstream(&copy, &size)))
		return NULL;
	put_escaped(m, s, strlen(s), false);
	if (fclose(m)) {
		free(copy);
		return NULL;
	}
	return copy;
}

const char *dt_text(const char *s)
{
	/* the last copies made, so that a printf may take several */
	static char *ring[DT_TEXT_RING];
	static unsigned next;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	if (shown_span(s, n, false) == n)
		return s;
	char *copy = dt_text_dup(s);
	if (!copy)
		return "(unprintable)";
	free(ring[next]);
	ring[next] = copy;
	next = (next + 1) % DT_TEXT_RING;
	return copy;
}

void dt_vprint_text(FILE *out, bool keep_nl, const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return;
	dt_put_text(out, s, keep_nl);
	free(s);
}

/* ------------------------------------------------------------------ CSV */

/* Whether s is a decimal number: a sign, digits with one point, an
 * exponent ("-3", "+1.5e-3"). */
static bool is_number(const char *s, size_t n)
{
	size_t i = s[0] == '-' || s[0] == '+', digits = 0, points = 0;

	for (; i < n && (isdigit((unsigned char)s[i]) || s[i] == '.'); i++)
		s[i] == '.' ? points++ : digits++;
	if (!digits || points > 1)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i += i + 1 < n && (s[i + 1] == '-' || s[i + 1] == '+');
		size_t from = ++i;
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
		if (i == from)
			return false;
	}
	return i == n;
}

/* Whether a spreadsheet would read the text as a formula: it starts with
 * '=', '+', '-', '@', a tab or a carriage return (OWASP's CSV injection)
 * and is no number, which stays one ("-3"). */
bool dt_csv_formula(const char *s, size_t n)
{
	return n && memchr("=+-@\t\r", s[0], 6) && !is_number(s, n);
}
