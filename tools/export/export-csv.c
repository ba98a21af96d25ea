/*
 * export-csv.c - `dnntrace export --format csv`: the back end that writes
 * the tables' rows as CSV files (RFC 4180), one per table in a folder,
 * numbers and texts encoded here rather than by printf, which the
 * export's time went to.
 *
 * It knows the rows (export-tables.h), never the traces they came from.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export-tables.h"
#include "tools.h"

/* The file of table t in the output folder (static storage). */
static const char *csv_path(const struct exporter *x, int t)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s.csv", x->o->output,
		 xt_tables[t].name);
	return path;
}

static int csv_error(struct exporter *x, int t)
{
	snprintf(x->err, sizeof(x->err), "cannot write %.400s: %s",
		 csv_path(x, t), strerror(errno));
	return -1;
}

/* Lines are written when a table's reach this many bytes. */
#define CSV_WRITE (1u << 20)

/* What table t holds so far, into its file. 0, or -1 with a sentence. */
static int csv_write(struct exporter *x, int t)
{
	struct pb *o = &x->csv_out[t];

	for (size_t at = 0; at < o->len;) {
		ssize_t k = write(x->csv[t], o->b + at, o->len - at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (!k)
				errno = ENOSPC;
			return csv_error(x, t);
		}
		at += (size_t)k;
	}
	o->len = 0;
	return 0;
}

static int csv_open(struct exporter *x)
{
	const char *dir = x->o->output;
	struct stat st;

	for (int t = 0; t < XT_N_TABLES; t++)
		x->csv[t] = -1;
	if (!mkdir(dir, 0777)) {
		x->made_dir = true;
	} else if (errno != EEXIST || lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		x->exists = errno == EEXIST;
		snprintf(x->err, sizeof(x->err),
			 x->exists ? "%s exists and is no folder: --format csv "
				     "writes a folder of tables"
				   : "cannot create the folder %s: %s",
			 dir, strerror(errno));
		return -1;
	}
	for (int t = 0; t < XT_N_TABLES; t++) {
		const struct xt_table *tb = &xt_tables[t];
		struct pb *o = &x->csv_out[t];
		int fd = xt_create_new(x, csv_path(x, t), &x->csv_tmp[t]);
		if (fd < 0)
			return -1;
		x->csv_made[t] = true;
		x->csv[t] = fd;
		if (!pb_room(o, CSV_WRITE + 4096)) {
			snprintf(x->err, sizeof(x->err), "out of memory");
			return -1;
		}
		for (unsigned c = 0; c < tb->n_cols; c++) {
			size_t n = strlen(tb->cols[c].name);
			if (c)
				o->b[o->len++] = ',';
			memcpy(o->b + o->len, tb->cols[c].name, n);
			o->len += n;
		}
		o->b[o->len++] = '\n';
	}
	return 0;
}

/* The decimal digits of u. */
static inline size_t digits(uint64_t u)
{
	static const uint64_t pow10[] = {
		1ull,
		10ull,
		100ull,
		1000ull,
		10000ull,
		100000ull,
		1000000ull,
		10000000ull,
		100000000ull,
		1000000000ull,
		10000000000ull,
		100000000000ull,
		1000000000000ull,
		10000000000000ull,
		100000000000000ull,
		1000000000000000ull,
		10000000000000000ull,
		100000000000000000ull,
		1000000000000000000ull,
		10000000000000000000ull,
	};
	/* log10(2) is about 1233 / 4096; u | 1 has u's digits, and 0 one */
	u |= 1;
	size_t d = (size_t)(64 - __builtin_clzll(u)) * 1233 >> 12;

	return d + (u >= pow10[d]);
}

static const char digit_pairs[] = "00010203040506070809"
				  "10111213141516171819"
				  "20212223242526272829"
				  "30313233343536373839"
				  "40414243444546474849"
				  "50515253545556575859"
				  "60616263646566676869"
				  "70717273747576777879"
				  "80818283848586878889"
				  "90919293949596979899";

/* u (below 10^8) as eight digits, leading zeros too, ending at e. */
static inline void put_eight(char *e, uint32_t u)
{
	for (int i = 0; i < 4; i++, u /= 100) {
		e -= 2;
		memcpy(e, digit_pairs + 2 * (u % 100), 2);
	}
}

/* v in decimal, in place, two digits at a time from the last: most of
 * what CSV files hold. Eight digits at a time are split off first, so
 * that the pairs are worked out in 32 bits. */
static size_t put_int(char *p, int64_t v)
{
	if ((uint64_t)v < 10) { /* flags, kinds, many a count */
		*p = (char)('0' + v);
		return 1;
	}
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	size_t n = (v < 0) + digits(u);
	char *e = p + n;

	for (; u >= 100000000; u /= 100000000, e -= 8)
		put_eight(e, (uint32_t)(u % 100000000));
	uint32_t w = (uint32_t)u;
	for (; w >= 100; w /= 100) {
		e -= 2;
		memcpy(e, digit_pairs + 2 * (w % 100), 2);
	}
	if (w >= 10)
		memcpy(e - 2, digit_pairs + 2 * w, 2);
	else
		e[-1] = (char)('0' + w);
	if (v < 0)
		p[0] = '-';
	return n;
}

/* v as put_int() writes it, from the text of the column's last number:
 * copied when v is that number again (a process, a thread, a device, a
 * stream, a launch's shape repeat row after row), its last eight digits
 * made again when only they differ (times). Up to 23 bytes after the
 * number are written over. */
static inline size_t put_int_again(char *p, int64_t v, struct csv_last *l)
{
	if ((uint64_t)v < 10) {
		*p = (char)('0' + v);
		return 1;
	}
	if (v != l->v || !l->n) {
		uint64_t hi = v >= 100000000 ? (uint64_t)v / 100000000 : 0;
		if (hi && hi == l->hi)
			put_eight(l->s + l->n,
				  (uint32_t)((uint64_t)v % 100000000));
		else
			l->n = put_int(l->s, v);
		l->v = v;
		l->hi = hi;
	}
	memcpy(p, l->s, sizeof(l->s));
	return l->n;
}

/* A REAL: exactly, in as few digits as round-trip (integers as such) */
static size_t put_real(char *p, double v)
{
	if (v == (double)(int64_t)v && v > -9e15 && v < 9e15)
		return put_int(p, (int64_t)v);
	return (size_t)snprintf(p, 32, "%.17g", v);
}

/* Whether a text needs quotes in a field: it holds a comma, a quote or a
 * line break, or it is empty. Looked at here rather than by strcspn():
 * most texts are a few letters (a library, a kind, a data type), and a
 * call's arguments have a comma within the first few. */
static inline bool needs_quotes(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			return true;
	return !n;
}

/* A field as RFC 4180 has it: quoted when it holds a comma, a quote or a
 * line break, quotes doubled; an empty string quoted, so that it differs
 * from NULL, which is an empty field. A text a spreadsheet would run as a
 * formula is quoted with a ' before it, as OWASP advises. */
static size_t put_text(char *p, const char *s, size_t n)
{
	bool formula = dt_csv_formula(s, n);

	if (!formula && !needs_quotes(s, n)) {
		memcpy(p, s, n);
		return n;
	}
	size_t k = 0;
	p[k++] = '"';
	if (formula)
		p[k++] = '\'';
	for (const char *end = s + n, *q; s < end; s = q + 1) {
		q = memchr(s, '"', (size_t)(end - s));
		size_t run = q ? (size_t)(q - s) + 1 : (size_t)(end - s);
		memcpy(p + k, s, run);
		k += run;
		if (!q)
			break;
		p[k++] = '"';
	}
	p[k++] = '"';
	return k;
}

/* A row of a batch (at row, size bytes, of table t) as a line of its
 * file, its cells read where the batch holds them. */
static int csv_row(struct exporter *x, enum xt_table_id t, const uint8_t *row,
		   size_t size)
{
	unsigned n = xt_tables[t].n_cols;
	const struct cell *cells =
		(const struct cell *)(row + sizeof(struct row_head));
	struct pb *o = &x->csv_out[t];
	/* the most the line takes: 32 bytes a number, a text's every byte a
	 * doubled quote and two more, a comma or line end each (the row's
	 * size is more than its text) */
	size_t most = 35 * (size_t)n + 2 * size;

	if (o->len + most > o->cap) {
		if (csv_write(x, t) < 0)
			return -1;
		if (!pb_room(o, most)) {
			snprintf(x->err, sizeof(x->err), "out of memory");
			return -1;
		}
	}
	char *p = (char *)o->b + o->len, *start = p;
	for (unsigned c = 0; c < n; c++) {
		const struct cell *v = &cells[c];
		if (c)
			*p++ = ',';
		switch (v->kind) {
		case CELL_NULL:
			break;
		case CELL_INT:
			p += put_int_again(p, v->i, &x->csv_last[t][c]);
			break;
		case CELL_REAL:
			p += put_real(p, v->f);
			break;
		case CELL_TEXT:
			p += put_text(p, (const char *)row + v->at, v->n);
			break;
		}
	}
	*p++ = '\n';
	o->len += (size_t)(p - start);
	return o->len >= CSV_WRITE ? csv_write(x, t) : 0;
}

static int csv_rows(struct exporter *x, const uint8_t *b, size_t len)
{
	for (size_t at = 0; at < len;) {
		struct row_head h;
		memcpy(&h, b + at, sizeof(h));
		if (csv_row(x, (enum xt_table_id)h.table, b + at, h.size) < 0)
			return -1;
		at += h.size;
	}
	return 0;
}

static void csv_discard(struct exporter *x)
{
	for (int t = 0; t < XT_N_TABLES; t++) {
		if (x->csv[t] >= 0)
			close(x->csv[t]);
		x->csv[t] = -1;
		pb_free(&x->csv_out[t]);
		if (x->csv_made[t])
			xt_remove_output(x, x->csv_tmp[t] ? x->csv_tmp[t]
						       : csv_path(x, t));
		free(x->csv_tmp[t]);
		x->csv_tmp[t] = NULL;
	}
	if (x->made_dir)
		rmdir(x->o->output);
}

static int csv_finish(struct exporter *x)
{
	for (int t = 0; t < XT_N_TABLES; t++) {
		/* a full disk shows when the last lines are written, or when
		 * the file is closed */
		int fd = x->csv[t];
		if (!x->failed && csv_write(x, t) < 0)
			x->failed = true;
		x->csv[t] = -1;
		if (close(fd) && !x->failed) {
			csv_error(x, t);
			x->failed = true;
		}
		pb_free(&x->csv_out[t]);
	}
	for (int t = 0; t < XT_N_TABLES && !x->failed; t++)
		if (xt_put_in_place(x, &x->csv_tmp[t], csv_path(x, t)))
			x->failed = true;
	return x->failed ? xt_export_failed(x) : 0;
}

static const struct sink csv_sink = { csv_open, csv_rows, csv_finish,
				      csv_discard };

int dt_export_csv(const struct dt_export_opts *o)
{
	if (!o->output)
		return dt_usage_error("export",
				      "--format csv writes a folder of tables: "
				      "name it with -o");
	return xt_export(o, &csv_sink);
}
