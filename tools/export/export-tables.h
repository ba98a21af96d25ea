/*
 * export-tables.h - the parts of `dnntrace export --format sqlite|csv`,
 * private to tools/export/: a row and its cells, the exporter that fills
 * rows from each trace's session (export-table-rows.c) and hands them to a
 * back end on a thread of its own (export-tables.c), and what the two back
 * ends (export-sqlite.c, export-csv.c) share. What the tables and their
 * columns are is export-schema.h's.
 */
#ifndef EXPORT_TABLES_H
#define EXPORT_TABLES_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "export-handoff.h"
#include "export-schema.h"
#include "export.h"

enum cell_kind { CELL_NULL, CELL_INT, CELL_REAL, CELL_TEXT };

/* A value of a row. Every row's cells are copied into the batch and read
 * back on the back end's thread: they are kept to 16 bytes, a text's
 * length in 32 bits. */
struct cell {
	uint32_t kind; /* enum cell_kind */
	uint32_t n;    /* a text's length */
	union {
		int64_t i;
		double f;
		const char *s; /* a text */
		/* a text in a row handed over: at bytes after the row's
		 * start (struct row_head) */
		uint64_t at;
	};
};

/* A row handed to the back end's thread: this, its cells, and the text
 * they hold, the whole padded to 8 bytes. */
struct row_head {
	uint32_t table, size;
};

/* Rows are handed over this many bytes at a time, each batch made while
 * the one before is written: each handover wakes the other thread, and
 * 256 KiB batches cost 20% more CPU time than these. */
#define ROWS_BATCH (2u << 20)

struct exporter;

/* A back end: it creates the tables, takes rows a batch at a time (on
 * a thread of its own: a row is a struct row_head, its cells, and their
 * text, a text cell's at counted from the row's start), and either
 * finishes the output or removes it. open and rows return 0, or -1 with a
 * sentence in x->err; finish returns an exit code. */
struct sink {
	int (*open)(struct exporter *x);
	int (*rows)(struct exporter *x, const uint8_t *b, size_t len);
	int (*finish)(struct exporter *x);
	void (*discard)(struct exporter *x);
};

/* Strings interned: by content, and by address for the strings a session
 * keeps while it lives (op descriptions, function names). */
struct interned {
	uint64_t hash;
	uint32_t id, len;
	char *s;
};

struct by_addr {
	const void *p;
	uint32_t id;
};

struct exporter {
	const struct dt_export_opts *o;
	const struct sink *sink;
	/* the back end takes the rows on a thread of its own, while the
	 * session makes the next ones */
	struct dt_handoff worker;
	struct pb rows; /* being filled: struct row_head, cells, text */
	char err[512];  /* written by the back end, read once it stopped */
	bool failed; /* a write failed: rows are dropped from then on */
	bool left;   /* and what was written could not all be removed */
	bool exists; /* the output was there already: nothing was written */

	/* SQLite */
	sqlite3 *db;
	bool db_made; /* created: removed if the export fails */
	char *db_tmp; /* written under this name, replacing the file (--force) */
	sqlite3_stmt *insert[XT_N_TABLES];
	const uint8_t *batch; /* the rows being inserted */
	/* where each table's rows start in the batch (uint32_t each), found
	 * in one pass rather than once for each table */
	struct pb batch_rows[XT_N_TABLES];
	/* CSV */
	int csv[XT_N_TABLES];        /* open files, -1 when none */
	struct pb csv_out[XT_N_TABLES]; /* lines not yet written */
	bool csv_made[XT_N_TABLES]; /* created: removed if the export fails */
	char *csv_tmp[XT_N_TABLES]; /* as db_tmp */
	struct csv_last {
		int64_t v;
		uint64_t hi; /* v / 10^8 when v >= 10^8, else 0 */
		size_t n;
		char s[24];
	} csv_last[XT_N_TABLES][XT_MAX_COLUMNS]; /* each column's last number */
	bool made_dir;

	/* the row being filled */
	struct cell row[XT_MAX_COLUMNS];

	/* the trace being read */
	const struct dt_export_trace *t;
	const struct dt_file_info *fi;
	int64_t gpid;
	bool open_window; /* no --from or --to */
	/* the trace's CUDNN_EVENTS rows: the program's calls and dnntrace's
	 * own, for its PROCESSES row */
	uint64_t calls, own_calls;

	struct interned *strs;
	size_t cap_strs, n_strs;
	struct by_addr *addrs; /* per trace */
	size_t cap_addrs, n_addrs;
	uint32_t *kernel_names; /* per trace, by the model's kernel name id:
				   mangled and short name, 0 not yet */
	size_t cap_kernel_names;
	uint8_t *tensors_done; /* by problem string id */
	size_t cap_tensors_done;
	char *args;
	size_t args_cap;
};

/* ------------------------------------------------ the writer's side */

/* A row of table t, copied into the batch with its text. */
void xt_write_cells(struct exporter *x, enum xt_table_id t,
		    const struct cell *cells);

static inline void put_null(struct exporter *x, unsigned col)
{
	x->row[col].kind = CELL_NULL;
}

static inline void put_i(struct exporter *x, unsigned col, int64_t v)
{
	x->row[col].kind = CELL_INT;
	x->row[col].i = v;
}

static inline void put_f(struct exporter *x, unsigned col, double v)
{
	x->row[col].kind = CELL_REAL;
	x->row[col].f = v;
}

/* s (n bytes), NULL for a NULL s (or one longer than a cell says) */
static inline void put_sn(struct exporter *x, unsigned col, const char *s,
			  size_t n)
{
	if (!s || n > UINT32_MAX) {
		put_null(x, col);
		return;
	}
	x->row[col].kind = CELL_TEXT;
	x->row[col].s = s;
	x->row[col].n = (uint32_t)n;
}

static inline void put_s(struct exporter *x, unsigned col, const char *s)
{
	put_sn(x, col, s, s ? strlen(s) : 0);
}

/* a string id: NULL for 0 (no string) */
static inline void put_id(struct exporter *x, unsigned col, uint32_t id)
{
	if (id)
		put_i(x, col, id);
	else
		put_null(x, col);
}

/* -1, 0, 1 as NULL, 0, 1 */
static inline void put_tri(struct exporter *x, unsigned col, int v)
{
	if (v < 0)
		put_null(x, col);
	else
		put_i(x, col, v != 0);
}

/* Hand the row filled to the back end; every column must have been put. */
static inline void emit(struct exporter *x, enum xt_table_id t)
{
	xt_write_cells(x, t, x->row);
}

/* *p, an array of *cap elements of elem bytes, grown to hold need, the
 * new ones zeroed; false when memory is short (*p is kept). */
bool xt_grow(void *p, size_t *cap, size_t need, size_t elem);

/* The id of s (n bytes) in StringIds, written there when new; 0 when
 * memory is short (the columns that refer to it are NULL then). */
uint32_t xt_intern(struct exporter *x, const char *s, size_t n);

/* The id of a string the session keeps as long as it lives: looked up by
 * its address, hashed only the first time. 0 for NULL. */
uint32_t xt_intern_kept(struct exporter *x, const char *s);

/* Read every trace into the tables of back end sk; an exit code. */
int xt_export(const struct dt_export_opts *o, const struct sink *sk);

/* ----------------------------------- the rows (export-table-rows.c) */

/* The session's consumer that makes x's rows of each event. */
void xt_rows_consumer(struct exporter *x, struct dt_consumer *c);

/* The trace's row of PROCESSES, once it has been read. */
void xt_put_trace(struct exporter *x, struct dt_session *s);

/* What the whole export is (META): its time line and window. */
void xt_put_export(struct exporter *x, const struct dt_export_trace *t,
		   size_t n);

/* ------------------------------------ what the back ends share: files */

/* Create the file at path, refusing one that exists (unless --force:
 * then under a temporary name *tmp beside it); the descriptor, or -1
 * with a sentence in x->err. */
int xt_create_new(struct exporter *x, const char *path, char **tmp);

/* A file written under the temporary name *tmp put over the one at path:
 * 0, or -1 with a sentence. */
int xt_put_in_place(struct exporter *x, char **tmp, const char *path);

/* Remove what an export that failed wrote at path, and say so. */
void xt_remove_output(struct exporter *x, const char *path);

/* Writing failed: remove what was written, say so in one sentence; the
 * exit code. */
int xt_export_failed(struct exporter *x);

#endif /* EXPORT_TABLES_H */
