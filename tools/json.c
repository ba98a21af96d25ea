/*
 * json.c - the one JSON writer of the dnntrace commands: values escaped
 * and numbers formatted one way, separators and nesting kept by the
 * writer. Layout stays the caller's choice (which members start a line),
 * so the schemas keep the shape analyzer/REPORT.md and DIFF.md show.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tools.h"

/* A writer is one thread's: stdio's per-character locking is most of what
 * a large export costs. */
#define fputc fputc_unlocked
#define fwrite fwrite_unlocked
#define fputs fputs_unlocked

void dt_json_init(struct dt_json *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

static void indent(FILE *out, int n)
{
	fputc('\n', out);
	while (n-- > 0)
		fputc(' ', out);
}

/* What comes before the next member or element of the open container. */
static void separate(struct dt_json *j, int nl)
{
	struct dt_json_level *l = &j->lv[j->depth];

	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->depth)
		return;
	if (nl < 0)
		nl = l->items;
	if (l->any)
		fputc(',', j->out);
	if (nl >= 0)
		indent(j->out, nl);
	else if (l->any && !j->compact)
		fputc(' ', j->out);
	l->any = true;
}

void dt_json_open(struct dt_json *j, char bracket, int items)
{
	separate(j, -1);
	fputc(bracket, j->out);
	if (j->depth + 1 < DT_JSON_DEPTH)
		j->depth++;
	j->lv[j->depth] =
		(struct dt_json_level){ .items = items, .bracket = bracket };
}

void dt_json_close(struct dt_json *j, int nl)
{
	char bracket = j->lv[j->depth].bracket;

	if (nl >= 0)
		indent(j->out, nl);
	fputc(bracket == '[' ? ']' : '}', j->out);
	if (j->depth)
		j->depth--;
}

void dt_json_key(struct dt_json *j, const char *key)
{
	dt_json_key_nl(j, key, -1);
}

static void quote_n(FILE *out, const char *s, size_t n)
{
	size_t i, from = 0; /* s[from..i) needs no escape: written at once */

	fputc('"', out);
	for (i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c != '"' && c != '\\' && c >= 0x20)
			continue;
		fwrite(s + from, 1, i - from, out);
		from = i + 1;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else
			fprintf(out, "\\u%04x", c);
	}
	fwrite(s + from, 1, i - from, out);
	fputc('"', out);
}

static void put_key(struct dt_json *j, const char *k, size_t n, int nl)
{
	struct dt_json_level *l = &j->lv[j->depth];

	if (l->any)
		fputc(',', j->out);
	if (nl >= 0)
		indent(j->out, nl);
	else if (l->any && !j->compact)
		fputc(' ', j->out);
	l->any = true;
	quote_n(j->out, k, n);
	fputs(j->compact ? ":" : ": ", j->out);
	j->after_key = true;
}

void dt_json_key_nl(struct dt_json *j, const char *k, int nl)
{
	put_key(j, k, strlen(k), nl);
}

void dt_json_keyn(struct dt_json *j, const char *k, size_t n)
{
	put_key(j, k, n, -1);
}

void dt_json_quote(FILE *out, const char *s)
{
	if (s)
		quote_n(out, s, strlen(s));
	else
		fputs("null", out);
}

void dt_json_str(struct dt_json *j, const char *s)
{
	separate(j, -1);
	dt_json_quote(j->out, s);
}

void dt_json_strn(struct dt_json *j, const char *s, size_t n)
{
	separate(j, -1);
	quote_n(j->out, s, n);
}

/* v in decimal, without printf: exports write millions of numbers */
static void put_u64(FILE *out, uint64_t v)
{
	char buf[20], *p = buf + sizeof(buf);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), out);
}

void dt_json_u64(struct dt_json *j, uint64_t v)
{
	separate(j, -1);
	put_u64(j->out, v);
}

void dt_json_milli(struct dt_json *j, uint64_t v)
{
	char frac[4] = { (char)('0' + v / 100 % 10), (char)('0' + v / 10 % 10),
			 (char)('0' + v % 10), 0 };

	separate(j, -1);
	put_u64(j->out, v / 1000);
	fputc('.', j->out);
	fwrite(frac, 1, 3, j->out);
}

void dt_json_i64(struct dt_json *j, int64_t v)
{
	separate(j, -1);
	fprintf(j->out, "%" PRId64, v);
}

void dt_json_num(struct dt_json *j, double v)
{
	separate(j, -1);
	if (!isfinite(v))
		fputs("null", j->out);
	else if (v == floor(v) && fabs(v) < 1e18)
		fprintf(j->out, "%.0f", v);
	else
		fprintf(j->out, "%.6g", v);
}

void dt_json_g(struct dt_json *j, double v)
{
	separate(j, -1);
	if (!isfinite(v))
		fputs("null", j->out);
	else
		fprintf(j->out, "%.6g", v);
}

void dt_json_opt(struct dt_json *j, double v)
{
	if (v < 0)
		dt_json_null(j);
	else
		dt_json_num(j, v);
}

void dt_json_bool(struct dt_json *j, bool v)
{
	separate(j, -1);
	fputs(v ? "true" : "false", j->out);
}

void dt_json_tri(struct dt_json *j, int v)
{
	if (v < 0)
		dt_json_null(j);
	else
		dt_json_bool(j, v != 0);
}

void dt_json_null(struct dt_json *j)
{
	separate(j, -1);
	fputs("null", j->out);
}

void dt_json_raw(struct dt_json *j, const char *fmt, ...)
{
	va_list ap;

	separate(j, -1);
	va_start(ap, fmt);
	vfprintf(j->out, fmt, ap);
	va_end(ap);
}

void dt_json_hex(struct dt_json *j, uint64_t v)
{
	separate(j, -1);
	fprintf(j->out, "\"0x%" PRIx64 "\"", v);
}

void dt_json_ku(struct dt_json *j, const char *key, uint64_t v)
{
	dt_json_key(j, key);
	dt_json_u64(j, v);
}

void dt_json_ks(struct dt_json *j, const char *key, const char *v)
{
	dt_json_key(j, key);
	dt_json_str(j, v);
}
