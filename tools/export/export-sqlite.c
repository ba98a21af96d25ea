/*
 * export-sqlite.c - `dnntrace export --format sqlite`: the back end that
 * writes the tables' rows into one SQLite database, in one transaction,
 * through a virtual table over each batch of rows.
 *
 * It knows the rows (export-tables.h), never the traces they came from.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export-tables.h"
#include "tools.h"

/* One sentence for what SQLite said went wrong; -1. */
static int sqlite_error(struct exporter *x, int rc)
{
	snprintf(x->err, sizeof(x->err), "cannot write %s: %s", x->o->output,
		 x->db ? sqlite3_errmsg(x->db) : sqlite3_errstr(rc));
	return -1;
}

/*
 * Rows go into SQLite by "INSERT INTO <table> SELECT * FROM
 * temp.rows_<n>", once for each table a batch has rows of: rows_<n> is a
 * virtual table whose rows are those of table n in the batch. SQLite
 * takes the values from the cells as it builds its records, which costs
 * it 40% less than binding them to an INSERT's parameters row by row.
 */
struct rows_vtab {
	sqlite3_vtab base;
	const struct exporter *x;
	enum xt_table_id t;
};

struct rows_cursor {
	sqlite3_vtab_cursor base;
	size_t i;           /* the current row, of the table's in the batch */
	const uint8_t *row; /* where it starts: its cells are read there */
};

static int rows_connect(sqlite3 *db, void *aux, int argc,
			const char *const *argv, sqlite3_vtab **vt, char **err)
{
	struct rows_vtab *v;
	int t = argc > 3 ? atoi(argv[3]) : -1;
	char decl[4096];
	int n = snprintf(decl, sizeof(decl), "CREATE TABLE x(");

	(void)err;
	if (t < 0 || t >= XT_N_TABLES)
		return SQLITE_ERROR;
	for (unsigned c = 0; c < xt_tables[t].n_cols; c++)
		n += snprintf(decl + n, sizeof(decl) - (size_t)n, "%s\"%s\"",
			      c ? ", " : "", xt_tables[t].cols[c].name);
	snprintf(decl + n, sizeof(decl) - (size_t)n, ")");
	int rc = sqlite3_declare_vtab(db, decl);
	if (rc != SQLITE_OK)
		return rc;
	if (!(v = sqlite3_malloc(sizeof(*v))))
		return SQLITE_NOMEM;
	*v = (struct rows_vtab){ .x = aux, .t = (enum xt_table_id)t };
	*vt = &v->base;
	return SQLITE_OK;
}

static int rows_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	info->estimatedCost = 1e6;
	return SQLITE_OK;
}

static int rows_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int rows_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **cur)
{
	struct rows_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*cur = &c->base;
	return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

/* The row of the cursor's table in the batch the cursor is at, if any. */
static void rows_at(struct rows_cursor *c)
{
	const struct rows_vtab *v = (const struct rows_vtab *)c->base.pVtab;
	const struct pb *at = &v->x->batch_rows[v->t];
	uint32_t o;

	if (c->i >= at->len / sizeof(o))
		return;
	memcpy(&o, at->b + c->i * sizeof(o), sizeof(o));
	c->row = v->x->batch + o;
}

static int rows_next(sqlite3_vtab_cursor *cur)
{
	struct rows_cursor *c = (struct rows_cursor *)cur;

	c->i++;
	rows_at(c);
	return SQLITE_OK;
}

static int rows_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_s,
		       int argc, sqlite3_value **argv)
{
	struct rows_cursor *c = (struct rows_cursor *)cur;

	(void)idx, (void)idx_s, (void)argc, (void)argv;
	c->i = 0;
	rows_at(c);
	return SQLITE_OK;
}

static int rows_eof(sqlite3_vtab_cursor *cur)
{
	const struct rows_cursor *c = (const struct rows_cursor *)cur;
	const struct rows_vtab *v = (const struct rows_vtab *)cur->pVtab;

	return c->i >= v->x->batch_rows[v->t].len / sizeof(uint32_t);
}

static int rows_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	const uint8_t *row = ((struct rows_cursor *)cur)->row;
	const struct cell *v =
		(const struct cell *)(row + sizeof(struct row_head)) + i;

	switch (v->kind) {
	case CELL_NULL:
		sqlite3_result_null(ctx);
		break;
	case CELL_INT:
		sqlite3_result_int64(ctx, v->i);
		break;
	case CELL_REAL:
		sqlite3_result_double(ctx, v->f);
		break;
	case CELL_TEXT:
		sqlite3_result_text64(ctx, (const char *)row + v->at, v->n,
				      SQLITE_STATIC, SQLITE_UTF8);
		break;
	}
	return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *id)
{
	*id = (sqlite3_int64)((struct rows_cursor *)cur)->i + 1;
	return SQLITE_OK;
}

static const sqlite3_module rows_module = {
	.xCreate = rows_connect,
	.xConnect = rows_connect,
	.xBestIndex = rows_best_index,
	.xDisconnect = rows_disconnect,
	.xDestroy = rows_disconnect,
	.xOpen = rows_open,
	.xClose = rows_close,
	.xFilter = rows_filter,
	.xNext = rows_next,
	.xEof = rows_eof,
	.xColumn = rows_column,
	.xRowid = rows_rowid,
};

static int sqlite_open(struct exporter *x)
{
	/* one transaction and no journal: a failed export is removed whole,
	 * so there is nothing to roll back to */
	static const char pragmas[] = "PRAGMA page_size = 65536;"
				      "PRAGMA journal_mode = OFF;"
				      "PRAGMA synchronous = OFF;"
				      "PRAGMA locking_mode = EXCLUSIVE;"
				      "PRAGMA cache_size = -65536;"
				      "BEGIN;";
	static const char *const type[] = { [XT_INTEGER] = "INTEGER",
					    [XT_REAL] = "REAL",
					    [XT_TEXT] = "TEXT" };
	int fd = xt_create_new(x, x->o->output, &x->db_tmp), rc;
	const char *path = x->db_tmp ? x->db_tmp : x->o->output;

	if (fd < 0)
		return -1;
	x->db_made = true;
	close(fd);
	/* one thread at a time uses SQLite: no lock around each call, and
	 * no memory statistics that take one for each allocation */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	rc = sqlite3_open_v2(path, &x->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK ||
	    (rc = sqlite3_exec(x->db, pragmas, NULL, NULL, NULL)) != SQLITE_OK ||
	    (rc = sqlite3_create_module(x->db, "dnntrace_rows", &rows_module,
					x)) != SQLITE_OK)
		return sqlite_error(x, rc);
	for (int t = 0; t < XT_N_TABLES; t++) {
		const struct xt_table *tb = &xt_tables[t];
		char create[4096], insert[256];
		int nc = snprintf(create, sizeof(create), "CREATE TABLE %s (",
				  tb->name);
		for (unsigned c = 0; c < tb->n_cols; c++)
			/* quoted: some names (end) are keywords elsewhere */
			nc += snprintf(create + nc, sizeof(create) - (size_t)nc,
				       "%s\"%s\" %s", c ? ", " : "",
				       tb->cols[c].name,
				       type[tb->cols[c].type]);
		snprintf(create + nc, sizeof(create) - (size_t)nc,
			 "); CREATE VIRTUAL TABLE temp.rows_%d USING "
			 "dnntrace_rows(%d)",
			 t, t);
		snprintf(insert, sizeof(insert),
			 "INSERT INTO %s SELECT * FROM temp.rows_%d", tb->name,
			 t);
		if ((rc = sqlite3_exec(x->db, create, NULL, NULL, NULL)) !=
			    SQLITE_OK ||
		    (rc = sqlite3_prepare_v3(x->db, insert, -1,
					     SQLITE_PREPARE_PERSISTENT,
					     &x->insert[t], NULL)) != SQLITE_OK)
			return sqlite_error(x, rc);
	}
	return 0;
}

static int sqlite_rows(struct exporter *x, const uint8_t *b, size_t len)
{
	_Static_assert(ROWS_BATCH <= UINT32_MAX, "a row's place is 32 bits");
	for (int t = 0; t < XT_N_TABLES; t++)
		x->batch_rows[t].len = 0;
	for (size_t at = 0; at < len;) {
		struct row_head h;
		memcpy(&h, b + at, sizeof(h));
		struct pb *rows = &x->batch_rows[h.table];
		uint32_t o = (uint32_t)at;
		if (!pb_room(rows, sizeof(o))) {
			snprintf(x->err, sizeof(x->err), "out of memory");
			return -1;
		}
		memcpy(rows->b + rows->len, &o, sizeof(o));
		rows->len += sizeof(o);
		at += h.size;
	}
	x->batch = b;
	for (int t = 0; t < XT_N_TABLES; t++) {
		if (!x->batch_rows[t].len)
			continue;
		int rc = sqlite3_step(x->insert[t]);
		if (rc != SQLITE_DONE)
			sqlite_error(x, rc); /* before the reset forgets it */
		sqlite3_reset(x->insert[t]);
		if (rc != SQLITE_DONE)
			return -1;
	}
	return 0;
}

static void sqlite_release(struct exporter *x)
{
	for (int t = 0; t < XT_N_TABLES; t++) {
		sqlite3_finalize(x->insert[t]);
		x->insert[t] = NULL;
		pb_free(&x->batch_rows[t]);
	}
}

static void sqlite_discard(struct exporter *x)
{
	sqlite_release(x);
	sqlite3_close(x->db);
	x->db = NULL;
	if (x->db_made)
		xt_remove_output(x, x->db_tmp ? x->db_tmp : x->o->output);
	free(x->db_tmp);
	x->db_tmp = NULL;
}

static int sqlite_finish(struct exporter *x)
{
	int rc;

	sqlite_release(x);
	if ((rc = sqlite3_exec(x->db, "COMMIT", NULL, NULL, NULL)) !=
		    SQLITE_OK ||
	    (rc = sqlite3_close(x->db)) != SQLITE_OK) {
		sqlite_error(x, rc);
		return xt_export_failed(x);
	}
	x->db = NULL;
	if (xt_put_in_place(x, &x->db_tmp, x->o->output))
		return xt_export_failed(x);
	return 0;
}

static const struct sink sqlite_sink = { sqlite_open, sqlite_rows,
					 sqlite_finish, sqlite_discard };

int dt_export_sqlite(const struct dt_export_opts *o)
{
	if (!o->output)
		return dt_usage_error("export",
				      "--format sqlite writes a file: name it "
				      "with -o");
	return xt_export(o, &sqlite_sink);
}
