/*
 * export-tables.c - `dnntrace export --format sqlite|csv`: the traces as
 * tables, one SQLite database or one CSV file per table; the writer that
 * runs the export.
 *
 * The tables are those of export-schema.h. A consumer of each trace's
 * session (export-table-rows.c) fills rows as events arrive; this file
 * hands them, 2 MiB at a time, to a back end (export-sqlite.c,
 * export-csv.c) working on a thread of its own: nothing is held but those
 * two batches, the strings interned so far (StringIds) and a few
 * per-trace lookups, so memory does not grow with the trace. The back
 * ends know nothing of traces; the consumer knows nothing of SQL or CSV.
 *
 * Neither back end overwrites what exists unless forced, and then only
 * with a whole file; an export that fails to write (a full disk) removes
 * what it wrote rather than leave part of it. The files they write are
 * created, put in place and removed here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export-tables.h"
#include "tools.h"

/* ------------------------------------------------------------- rows */

/* The back end's thread: the rows of a batch, into its tables. */
static bool put_rows(void *arg, const uint8_t *b, size_t len)
{
	struct exporter *x = arg;

	return x->sink->rows(x, b, len) == 0;
}

/* Hand the rows made so far to the back end. */
static void hand_rows(struct exporter *x)
{
	if (!dt_handoff_give(&x->worker, &x->rows))
		x->failed = true;
}

/* A row of table t, copied into the batch with its text. */
void xt_write_cells(struct exporter *x, enum xt_table_id t,
		    const struct cell *cells)
{
	unsigned n = xt_tables[t].n_cols;
	size_t size = sizeof(struct row_head) + n * sizeof(*cells);

	for (unsigned c = 0; c < n; c++)
		if (cells[c].kind == CELL_TEXT)
			size += cells[c].n;
	size = (size + 7) & ~(size_t)7;
	if (x->rows.len + size > ROWS_BATCH)
		hand_rows(x);
	if (x->failed)
		return;
	if (!pb_room(&x->rows, size)) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		x->failed = true;
		return;
	}
	uint8_t *row = x->rows.b + x->rows.len;
	struct cell *held = (struct cell *)(row + sizeof(struct row_head));
	size_t text = sizeof(struct row_head) + n * sizeof(*cells);
	memcpy(row, &(struct row_head){ t, (uint32_t)size },
	       sizeof(struct row_head));
	memcpy(held, cells, n * sizeof(*cells));
	for (unsigned c = 0; c < n; c++) {
		if (cells[c].kind != CELL_TEXT)
			continue;
		memcpy(row + text, cells[c].s, cells[c].n);
		held[c].at = text;
		text += cells[c].n;
	}
	x->rows.len += size;
}

/* *p, an array of *cap elements of elem bytes, grown to hold need, the
 * new ones zeroed; false when memory is short (*p is kept). */
bool xt_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	void **v = p;

	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap : 1024;
	while (n < need)
		n *= 2;
	char *nv = realloc(*v, n * elem);
	if (!nv)
		return false;
	memset(nv + *cap * elem, 0, (n - *cap) * elem);
	*v = nv;
	*cap = n;
	return true;
}

/* ---------------------------------------------------------- strings */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static bool grow_table(void **v, size_t *cap, size_t elem)
{
	size_t n = *cap ? *cap * 2 : 1024;
	void *nv = calloc(n, elem);

	if (!nv)
		return false;
	free(*v);
	*v = nv;
	*cap = n;
	return true;
}

static bool grow_strs(struct exporter *x)
{
	struct interned *old = x->strs;
	size_t cap = x->cap_strs;

	x->strs = NULL;
	if (!grow_table((void **)&x->strs, &x->cap_strs, sizeof(*x->strs))) {
		x->strs = old;
		return false;
	}
	for (size_t i = 0; i < cap; i++) {
		if (!old[i].s)
			continue;
		size_t k = old[i].hash & (x->cap_strs - 1);
		while (x->strs[k].s)
			k = (k + 1) & (x->cap_strs - 1);
		x->strs[k] = old[i];
	}
	free(old);
	return true;
}

/* The id of s (n bytes) in StringIds, written there when new; 0 when
 * memory is short (the columns that refer to it are NULL then). */
uint32_t xt_intern(struct exporter *x, const char *s, size_t n)
{
	if ((x->n_strs + 1) * 2 > x->cap_strs && !grow_strs(x))
		return 0;
	uint64_t h = hash_bytes(s, n);
	size_t k = h & (x->cap_strs - 1);
	for (; x->strs[k].s; k = (k + 1) & (x->cap_strs - 1))
		if (x->strs[k].hash == h && x->strs[k].len == n &&
		    !memcmp(x->strs[k].s, s, n))
			return x->strs[k].id;
	char *copy = malloc(n + 1);
	if (!copy || n > UINT32_MAX) {
		free(copy);
		return 0;
	}
	memcpy(copy, s, n);
	copy[n] = 0;
	uint32_t id = (uint32_t)++x->n_strs;
	x->strs[k] = (struct interned){ h, id, (uint32_t)n, copy };

	struct cell row[XT_str_n_cols] = {
		[XT_str_id] = { .kind = CELL_INT, .i = id },
		[XT_str_value] = { .kind = CELL_TEXT,
				   .n = (uint32_t)n,
				   .s = copy },
	};
	xt_write_cells(x, XT_str, row);
	return id;
}

static inline size_t addr_slot(const void *p, size_t cap)
{
	return (size_t)(((uintptr_t)p >> 3) * 0x9e3779b97f4a7c15ull >> 20) &
	       (cap - 1);
}

/* The id of a string the session keeps as long as it lives: looked up by
 * its address, hashed only the first time. 0 for NULL. */
uint32_t xt_intern_kept(struct exporter *x, const char *s)
{
	if (!s)
		return 0;
	if ((x->n_addrs + 1) * 2 > x->cap_addrs) {
		struct by_addr *old = x->addrs;
		size_t cap = x->cap_addrs;
		x->addrs = NULL;
		if (!grow_table((void **)&x->addrs, &x->cap_addrs,
				sizeof(*x->addrs))) {
			x->addrs = old;
			return xt_intern(x, s, strlen(s));
		}
		for (size_t i = 0; i < cap; i++) {
			if (!old[i].p)
				continue;
			size_t k = addr_slot(old[i].p, x->cap_addrs);
			while (x->addrs[k].p)
				k = (k + 1) & (x->cap_addrs - 1);
			x->addrs[k] = old[i];
		}
		free(old);
	}
	size_t k = addr_slot(s, x->cap_addrs);
	for (; x->addrs[k].p; k = (k + 1) & (x->cap_addrs - 1))
		if (x->addrs[k].p == s)
			return x->addrs[k].id;
	uint32_t id = xt_intern(x, s, strlen(s));
	if (id) {
		x->addrs[k] = (struct by_addr){ s, id };
		x->n_addrs++;
	}
	return id;
}

static void free_strings(struct exporter *x)
{
	for (size_t i = 0; i < x->cap_strs; i++)
		free(x->strs[i].s);
	free(x->strs);
	free(x->addrs);
	free(x->kernel_names);
	free(x->tensors_done);
}

/* ----------------------------------------------------------- export */

/* Writing failed: remove what was written, say so in one sentence; the
 * exit code. */
int xt_export_failed(struct exporter *x)
{
	x->sink->discard(x);
	dt_error("%s%s", x->err,
		 x->left ? "" : "; what was written is removed");
	return EXIT_USAGE;
}

/* Read every trace into the tables; an exit code. */
int xt_export(const struct dt_export_opts *o, const struct sink *sk)
{
	struct exporter *x = calloc(1, sizeof(*x));
	size_t n;

	if (!x) {
		dt_error("out of memory");
		return 1;
	}
	x->o = o;
	x->sink = sk;
	x->open_window = !o->from_ns && o->to_ns == UINT64_MAX;
	struct dt_export_trace *t = dt_export_open(o, &n);
	if (!t) {
		free(x);
		return EXIT_USAGE;
	}
	if (sk->open(x) < 0) {
		sk->discard(x);
		dt_error("%s", x->err);
		dt_export_close(t, n);
		free(x);
		return EXIT_USAGE;
	}
	dt_handoff_start(&x->worker, put_rows, x);
	xt_put_export(x, t, n);
	for (size_t i = 0; i < n && !x->failed; i++) {
		struct dt_consumer c;
		xt_rows_consumer(x, &c);
		x->t = &t[i];
		x->fi = dt_session_info(t[i].s);
		x->gpid = (int64_t)i << 48 | (int64_t)t[i].pid << 24;
		x->n_addrs = 0;
		x->calls = x->own_calls = 0;
		if (x->addrs)
			memset(x->addrs, 0, x->cap_addrs * sizeof(*x->addrs));
		if (x->kernel_names)
			memset(x->kernel_names, 0,
			       x->cap_kernel_names * sizeof(*x->kernel_names));
		dt_session_add(t[i].s, &c);
		dt_session_run(t[i].s);
		xt_put_trace(x, t[i].s);
		/* what the model kept goes now, not with the last trace */
		dt_session_close(t[i].s);
		t[i].s = NULL;
	}
	hand_rows(x);
	if (!dt_handoff_stop(&x->worker))
		x->failed = true;
	pb_free(&x->rows);
	int rc = x->failed ? xt_export_failed(x) : sk->finish(x);
	dt_export_close(t, n);
	free_strings(x);
	free(x->args);
	free(x);
	return rc;
}

/* ------------------------------------------------------------ files */

/* Create the file, refusing one that exists: nsys export refuses too,
 * unless told to overwrite. With --force a file there (never a symbolic
 * link) stays until the export is complete: the new one is written under
 * a temporary name beside it, *tmp, which xt_put_in_place() renames over
 * it. The descriptor, or -1 with a sentence. */
int xt_create_new(struct exporter *x, const char *path, char **tmp)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	struct stat st;

	*tmp = NULL;
	if (fd < 0 && errno == EEXIST && x->o->force && !lstat(path, &st) &&
	    S_ISREG(st.st_mode))
		fd = dt_output_temp(path, tmp);
	if (fd >= 0)
		return fd;
	x->exists = errno == EEXIST;
	snprintf(x->err, sizeof(x->err),
		 x->exists ? "%s exists; dnntrace export does not overwrite "
			     "it unless told to (--force)"
			   : "cannot create %s: %s",
		 path, strerror(errno));
	return -1;
}

/* A file written under the temporary name tmp (xt_create_new()), put over
 * the one at path: 0, or -1 with a sentence. */
int xt_put_in_place(struct exporter *x, char **tmp, const char *path)
{
	if (!*tmp)
		return 0;
	int rc = rename(*tmp, path);
	if (rc)
		snprintf(x->err, sizeof(x->err), "cannot replace %s: %s", path,
			 strerror(errno));
	else
		free(*tmp), *tmp = NULL;
	return rc;
}

/* Remove what an export that failed wrote, and say so. */
void xt_remove_output(struct exporter *x, const char *path)
{
	size_t n = strlen(x->err);

	if (unlink(path) && errno != ENOENT) {
		snprintf(x->err + n, sizeof(x->err) - n,
			 "; %s is incomplete and could not be removed: %s",
			 path, strerror(errno));
		x->left = true;
	}
}
