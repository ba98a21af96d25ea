/*
 * export-tables.c - `dnntrace export --format sqlite|csv`: the traces as
 * tables, one SQLite database or one CSV file per table.
 *
 * The tables are those of export-schema.h. A consumer of each trace's
 * session fills rows as events arrive and hands them, 2 MiB at a time, to
 * a back end working on a thread of its own: nothing is held but those
 * two batches, the strings interned so far (StringIds) and a few
 * per-trace lookups, so memory does not grow with the trace. The back
 * ends know nothing of traces; the consumer knows nothing of SQL or CSV.
 *
 * Neither back end overwrites what exists unless forced, and then only
 * with a whole file; an export that fails to write (a full disk) removes
 * what it wrote rather than leave part of it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dt-config.h"
#include "export-handoff.h"
#include "export-schema.h"
#include "export.h"
#include "tools.h"

/* ------------------------------------------------------------- rows */

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

/* A data type's name (its number when cuDNN defines none), NULL when not
 * known. */
static const char *dtype_name(int64_t dtype, char *buf, size_t size)
{
	return dtype >= 0 ? dt_dtype_name(dtype, buf, size) : NULL;
}

/* A CLOCK_MONOTONIC time of the trace being read, on the time line. */
static inline int64_t line_time(const struct exporter *x, uint64_t mono)
{
	return dt_export_line(x->t, mono);
}

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
static void write_cells(struct exporter *x, enum xt_table_id t,
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

/* Hand the row filled to the back end; every column must have been put. */
static void emit(struct exporter *x, enum xt_table_id t)
{
	write_cells(x, t, x->row);
}

/* *p, an array of *cap elements of elem bytes, grown to hold need, the
 * new ones zeroed; false when memory is short (*p is kept). */
static bool grow(void *p, size_t *cap, size_t need, size_t elem)
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
static uint32_t intern(struct exporter *x, const char *s, size_t n)
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
	write_cells(x, XT_str, row);
	return id;
}

static inline size_t addr_slot(const void *p, size_t cap)
{
	return (size_t)(((uintptr_t)p >> 3) * 0x9e3779b97f4a7c15ull >> 20) &
	       (cap - 1);
}

/* The id of a string the session keeps as long as it lives: looked up by
 * its address, hashed only the first time. 0 for NULL. */
static uint32_t intern_kept(struct exporter *x, const char *s)
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
			return intern(x, s, strlen(s));
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
	uint32_t id = intern(x, s, strlen(s));
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

/* ------------------------------------------------------------ events */

static void put_process(struct exporter *x, unsigned gpid_col, unsigned pid_col)
{
	put_i(x, gpid_col, x->gpid);
	put_i(x, pid_col, x->t->pid);
}

static void on_call(void *arg, const struct dt_call *c)
{
	struct exporter *x = arg;

	if (!dt_export_in(x->t, c->t_begin, c->t_end))
		return;
	int len = -1;
	if (c->argc >= 0) {
		len = dt_args_format(c->name, c->argv, c->argc, x->args,
				     x->args_cap);
		if (len >= 0 && (size_t)len >= x->args_cap)
			len = grow(&x->args, &x->args_cap, (size_t)len + 1, 1)
				      ? dt_args_format(c->name, c->argv,
						       c->argc, x->args,
						       x->args_cap)
				      : -1;
	}
	put_i(x, XT_call_start, line_time(x, c->t_begin));
	put_i(x, XT_call_end, line_time(x, c->t_end));
	put_i(x, XT_call_globalTid, x->gpid + c->tid);
	put_process(x, XT_call_globalPid, XT_call_pid);
	put_i(x, XT_call_tid, c->tid);
	put_i(x, XT_call_seq, (int64_t)c->seq);
	put_id(x, XT_call_nameId, intern_kept(x, c->name));
	put_i(x, XT_call_status, c->status);
	put_i(x, XT_call_nested, !!(c->flags & DT_CALL_NESTED));
	put_i(x, XT_call_byDnntrace, !!(c->flags & DT_CALL_BY_DNNTRACE));
	if (len >= 0)
		put_sn(x, XT_call_args, x->args, (size_t)len);
	else
		put_null(x, XT_call_args);
	emit(x, XT_call);
	if (c->flags & DT_CALL_BY_DNNTRACE)
		x->own_calls++;
	else
		x->calls++;
}

/* A kernel's mangled and short names, interned once per name and trace. */
static void kernel_names(struct exporter *x, const struct dt_kernel_class *kc,
			 uint32_t *mangled, uint32_t *shortname)
{
	if (!grow(&x->kernel_names, &x->cap_kernel_names,
		  2 * ((size_t)kc->id + 1), sizeof(*x->kernel_names))) {
		*mangled = *shortname = 0;
		return;
	}
	uint32_t *slot = &x->kernel_names[2 * (size_t)kc->id];
	if (!slot[0]) {
		size_t n;
		const char *f = dt_kernel_function(kc->name, kc->len, &n);
		slot[0] = intern(x, kc->name, kc->len);
		slot[1] = intern(x, f, n);
	}
	*mangled = slot[0];
	*shortname = slot[1];
}

/* The columns every activity table shares (XT_ACTIVITY). */
#define PUT_ACTIVITY(x, t, a)                                               \
	do {                                                                \
		if ((a)->timed) {                                           \
			put_i(x, XT_##t##_start, line_time(x, (a)->start)); \
			put_i(x, XT_##t##_end, line_time(x, (a)->end));     \
		} else {                                                    \
			put_null(x, XT_##t##_start);                        \
			put_null(x, XT_##t##_end);                          \
		}                                                           \
		put_i(x, XT_##t##_deviceId, (a)->device);                   \
		put_i(x, XT_##t##_contextId, (a)->context);                 \
		put_i(x, XT_##t##_streamId, (a)->stream);                   \
		put_i(x, XT_##t##_correlationId, (a)->corr);                \
		put_process(x, XT_##t##_globalPid, XT_##t##_pid);           \
		if ((a)->call)                                              \
			put_i(x, XT_##t##_callSeq, (int64_t)(a)->call);     \
		else                                                        \
			put_null(x, XT_##t##_callSeq);                      \
		if ((a)->exec)                                              \
			put_i(x, XT_##t##_exec, (int64_t)(a)->exec);        \
		else                                                        \
			put_null(x, XT_##t##_exec);                         \
	} while (0)

static void put_kernel(struct exporter *x, const struct dt_activity *a)
{
	const struct dt_rec_kernel *k = a->kernel;
	const struct dt_kernel_class *kc = a->kc;
	uint32_t mangled = 0, shortname = 0;

	if (kc)
		kernel_names(x, kc, &mangled, &shortname);
	PUT_ACTIVITY(x, kernel, a);
	put_id(x, XT_kernel_shortName, shortname);
	put_id(x, XT_kernel_mangledName, mangled);
	put_i(x, XT_kernel_gridX, k->grid_x);
	put_i(x, XT_kernel_gridY, k->grid_y);
	put_i(x, XT_kernel_gridZ, k->grid_z);
	put_i(x, XT_kernel_blockX, k->block_x);
	put_i(x, XT_kernel_blockY, k->block_y);
	put_i(x, XT_kernel_blockZ, k->block_z);
	put_i(x, XT_kernel_staticSharedMemory, k->static_smem);
	put_i(x, XT_kernel_dynamicSharedMemory, k->dynamic_smem);
	put_i(x, XT_kernel_registersPerThread, k->registers);
	if (k->graph_id) {
		put_i(x, XT_kernel_graphId, k->graph_id);
		put_i(x, XT_kernel_graphNodeId, (int64_t)k->graph_node);
	} else {
		put_null(x, XT_kernel_graphId);
		put_null(x, XT_kernel_graphNodeId);
	}
	if (kc) {
		put_s(x, XT_kernel_library, dt_lib_key(kc->lib));
		put_s(x, XT_kernel_opFamily, dt_opfam_key(kc->opfam));
		put_i(x, XT_kernel_layout, kc->layout);
		put_i(x, XT_kernel_tuner, kc->tuner);
		put_tri(x, XT_kernel_tensorCores, kc->tc);
	} else {
		put_null(x, XT_kernel_library);
		put_null(x, XT_kernel_opFamily);
		put_null(x, XT_kernel_layout);
		put_null(x, XT_kernel_tuner);
		put_null(x, XT_kernel_tensorCores);
	}
	emit(x, XT_kernel);
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct exporter *x = arg;

	/* work CUPTI could not time is in only when the whole trace is */
	if (a->timed ? !dt_export_in(x->t, a->start, a->end) : !x->open_window)
		return;
	switch (a->kind) {
	case DT_ACT_KERNEL:
		put_kernel(x, a);
		break;
	case DT_ACT_MEMCPY: {
		const struct dt_rec_memcpy *r = (const void *)a->rec;
		PUT_ACTIVITY(x, memcpy, a);
		put_i(x, XT_memcpy_bytes, (int64_t)a->bytes);
		put_i(x, XT_memcpy_copyKind, r->copy_kind);
		put_i(x, XT_memcpy_srcKind, r->src_kind);
		put_i(x, XT_memcpy_dstKind, r->dst_kind);
		emit(x, XT_memcpy);
		break;
	}
	case DT_ACT_MEMSET: {
		const struct dt_rec_memset *r = (const void *)a->rec;
		PUT_ACTIVITY(x, memset, a);
		put_i(x, XT_memset_bytes, (int64_t)a->bytes);
		put_i(x, XT_memset_value, r->value);
		put_i(x, XT_memset_memKind, r->mem_kind);
		emit(x, XT_memset);
		break;
	}
	}
}

static void on_device(void *arg, const struct dt_device *d)
{
	static const struct {
		unsigned col;
		enum dt_math math;
	} peaks[] = {
		{ XT_gpu_peakFp64, DT_MATH_FP64 },
		{ XT_gpu_peakFp32, DT_MATH_FP32 },
		{ XT_gpu_peakTf32, DT_MATH_TF32 },
		{ XT_gpu_peakFp16, DT_MATH_FP16 },
		{ XT_gpu_peakBf16, DT_MATH_BF16 },
		{ XT_gpu_peakFp8, DT_MATH_FP8 },
		{ XT_gpu_peakInt8, DT_MATH_INT8 },
	};
	struct exporter *x = arg;
	struct dt_peaks p;

	dt_peaks_for_device(&p, d);
	put_process(x, XT_gpu_globalPid, XT_gpu_pid);
	put_i(x, XT_gpu_id, d->id);
	put_s(x, XT_gpu_name, d->name);
	put_i(x, XT_gpu_computeMajor, d->cc_major);
	put_i(x, XT_gpu_computeMinor, d->cc_minor);
	put_i(x, XT_gpu_smCount, d->sms);
	put_i(x, XT_gpu_clockRate, d->clock_khz);
	put_i(x, XT_gpu_memoryBandwidth,
	      d->mem_bandwidth_kBps > INT64_MAX / 1000
		      ? INT64_MAX
		      : (int64_t)d->mem_bandwidth_kBps * 1000);
	put_i(x, XT_gpu_totalMemory, (int64_t)d->global_mem);
	put_i(x, XT_gpu_l2CacheSize, d->l2_size);
	put_f(x, XT_gpu_peakBandwidth, p.bandwidth);
	for (size_t i = 0; i < sizeof(peaks) / sizeof(peaks[0]); i++)
		put_f(x, peaks[i].col, p.flops[peaks[i].math]);
	put_s(x, XT_gpu_peakSource, p.source);
	emit(x, XT_gpu);
}

static void on_gpu_state(void *arg, const struct dt_gpu_change *g)
{
	static const char *const state[] = { [DT_GPU_ON] = "on",
					     [DT_GPU_OFF] = "off",
					     [DT_GPU_TAKEN] = "taken",
					     [DT_GPU_RESUMED] = "resumed",
					     [DT_GPU_WINDOW_OPEN] = "window",
					     [DT_GPU_WINDOW_CLOSE] = "paused" };
	struct exporter *x = arg;

	if (!dt_export_in(x->t, g->t, g->t))
		return;
	put_i(x, XT_gpustate_start, line_time(x, g->t));
	put_process(x, XT_gpustate_globalPid, XT_gpustate_pid);
	put_s(x, XT_gpustate_state,
	      g->state < sizeof(state) / sizeof(state[0]) ? state[g->state]
							  : NULL);
	put_i(x, XT_gpustate_code, g->code);
	put_i(x, XT_gpustate_dropped, (int64_t)g->dropped);
	put_sn(x, XT_gpustate_why, g->why ? g->why : "", g->why_len);
	emit(x, XT_gpustate);
}

static void on_thread(struct exporter *x, const struct dt_rec_thread *r)
{
	uint32_t len;
	const char *name = (const char *)dt_rec_tail(&r->hdr, &len);
	uint32_t id = intern(x, name ? name : "", name ? len : 0);

	put_i(x, XT_thread_globalTid, x->gpid + r->tid);
	put_process(x, XT_thread_globalPid, XT_thread_pid);
	put_i(x, XT_thread_tid, r->tid);
	put_id(x, XT_thread_nameId, id);
	put_i(x, XT_thread_start, line_time(x, r->t));
	emit(x, XT_thread);
}

static void on_loss(struct exporter *x, const struct dt_rec_loss *r)
{
	static const char *const why[] = {
		[DT_LOSS_FULL] = "buffer full",
		[DT_LOSS_TOO_BIG] = "record too large for a buffer",
		[DT_LOSS_NOBUF] = "no buffer for the thread",
		[DT_LOSS_IO] = "the file could not take them",
		[DT_LOSS_CUPTI] = "CUPTI dropped GPU records",
	};

	put_i(x, XT_loss_start, line_time(x, r->t));
	put_process(x, XT_loss_globalPid, XT_loss_pid);
	put_i(x, XT_loss_tid, r->tid);
	put_i(x, XT_loss_count, (int64_t)r->count);
	put_s(x, XT_loss_reason,
	      r->reason < sizeof(why) / sizeof(why[0]) ? why[r->reason] : NULL);
	emit(x, XT_loss);
}

/* Threads and losses: the records no event carries. Every thread is
 * listed, whatever the window; losses are said whatever the window too,
 * since what they dropped may have been in it. */
static void on_record(void *arg, const struct dt_rec_hdr *rec)
{
	struct exporter *x = arg;

	if (rec->type == DT_REC_THREAD)
		on_thread(x, (const void *)rec);
	else if (rec->type == DT_REC_LOSS)
		on_loss(x, (const void *)rec);
}

/* "[8,64,56,56]" */
static size_t json_ints(char *buf, size_t size, const int64_t *v, int n)
{
	int len = 0;

	dt_put(buf, size, &len, "[", 1);
	for (int i = 0; i < n; i++) {
		if (i)
			dt_put(buf, size, &len, ",", 1);
		dt_put_i64(buf, size, &len, v[i]);
	}
	dt_put(buf, size, &len, "]", 1);
	return (size_t)len < size ? (size_t)len : size - 1;
}

/* The tensors of op's problem, the first time the export meets it. */
static void put_tensors(struct exporter *x, const struct dt_op *op,
			uint32_t problem)
{
	if (!problem ||
	    !grow(&x->tensors_done, &x->cap_tensors_done, problem + 1, 1) ||
	    x->tensors_done[problem])
		return;
	x->tensors_done[problem] = 1;
	for (uint32_t i = 0; i < op->n_tensors; i++) {
		const struct dt_op_tensor *ot = &op->tensors[i];
		const struct dt_tensor *t = &ot->t;
		char dims[DT_MAX_DIMS * 21 + 2], strides[DT_MAX_DIMS * 21 + 2];
		char ty[DT_DTYPE_NAME_SIZE];
		int nb = t->nb < 0             ? 0
			 : t->nb > DT_MAX_DIMS ? DT_MAX_DIMS
					       : t->nb;

		put_i(x, XT_tensor_problemId, problem);
		put_i(x, XT_tensor_ord, i);
		put_s(x, XT_tensor_role, ot->role);
		put_i(x, XT_tensor_uid, t->uid);
		put_s(x, XT_tensor_dtype,
		      dtype_name(t->dtype, ty, sizeof(ty)));
		put_i(x, XT_tensor_nbDims, nb);
		put_sn(x, XT_tensor_dims, dims,
		       json_ints(dims, sizeof(dims), t->dims, nb));
		put_sn(x, XT_tensor_strides, strides,
		       json_ints(strides, sizeof(strides), t->strides, nb));
		put_i(x, XT_tensor_isVirtual, t->is_virtual);
		put_i(x, XT_tensor_byValue, t->by_value);
		put_i(x, XT_tensor_bytes, (int64_t)dt_tensor_bytes(t));
		emit(x, XT_tensor);
	}
}

static void on_op(void *arg, const struct dt_op *op)
{
	static const char *const origin[] = { [DT_OP_CALL] = "call",
					      [DT_OP_CAPTURED] = "captured",
					      [DT_OP_REPLAY] = "replay" };
	struct exporter *x = arg;
	char ty[DT_DTYPE_NAME_SIZE];
	uint64_t end = op->kernels && op->gpu_end > op->t_end ? op->gpu_end
							      : op->t_end;

	/* in when the call or its GPU work meets the window */
	if (!dt_export_in(x->t, op->t_begin, end))
		return;
	/* strings first: a new one is a row of its own */
	uint32_t problem = intern_kept(x, op->problem),
		 brief = intern_kept(x, op->brief),
		 desc = intern_kept(x, op->desc), api = intern_kept(x, op->api),
		 knobs = intern_kept(x, op->knobs),
		 notes = intern_kept(x, op->notes),
		 first = intern_kept(x, op->first_kernel);
	put_tensors(x, op, problem);

	put_i(x, XT_op_start, line_time(x, op->t_begin));
	put_i(x, XT_op_end, line_time(x, op->t_end));
	put_process(x, XT_op_globalPid, XT_op_pid);
	put_i(x, XT_op_tid, op->tid);
	put_i(x, XT_op_exec, (int64_t)op->exec);
	put_i(x, XT_op_seq, (int64_t)op->seq);
	put_s(x, XT_op_origin,
	      op->origin <= DT_OP_REPLAY ? origin[op->origin] : NULL);
	if (op->origin == DT_OP_REPLAY)
		put_i(x, XT_op_graphLaunch, op->graph_launch);
	else
		put_null(x, XT_op_graphLaunch);
	put_id(x, XT_op_nameId, api);
	put_i(x, XT_op_status, op->status);
	put_s(x, XT_op_kind, dt_op_kind_key(op->cost.kind));
	put_id(x, XT_op_problemId, problem);
	put_id(x, XT_op_briefId, brief);
	put_id(x, XT_op_descId, desc);
	put_i(x, XT_op_plan, op->plan);
	put_i(x, XT_op_engine, op->engine);
	put_id(x, XT_op_knobsId, knobs);
	put_id(x, XT_op_notesId, notes);
	put_i(x, XT_op_streamHandle, (int64_t)op->stream);
	put_i(x, XT_op_workspace, op->workspace);
	put_i(x, XT_op_kernels, op->kernels);
	put_i(x, XT_op_gpuNs, (int64_t)op->gpu_ns);
	if (op->kernels) {
		put_i(x, XT_op_gpuStart, line_time(x, op->gpu_start));
		put_i(x, XT_op_gpuEnd, line_time(x, op->gpu_end));
	} else {
		put_null(x, XT_op_gpuStart);
		put_null(x, XT_op_gpuEnd);
	}
	put_id(x, XT_op_firstKernelId, first);
	put_i(x, XT_op_converts, op->converts);
	put_i(x, XT_op_convertNs, (int64_t)op->convert_ns);
	put_f(x, XT_op_flops, op->cost.flops);
	put_i(x, XT_op_bytes, (int64_t)op->cost.bytes);
	put_s(x, XT_op_dtype, dtype_name(op->cost.dtype, ty, sizeof(ty)));
	put_s(x, XT_op_math,
	      op->math != DT_MATH_UNKNOWN ? dt_math_name(op->math) : NULL);
	put_tri(x, XT_op_tensorCores, op->tensor_cores);
	if (op->device >= 0)
		put_i(x, XT_op_deviceId, op->device);
	else
		put_null(x, XT_op_deviceId);
	emit(x, XT_op);
}

static void on_plan(void *arg, const struct dt_plan_build *b)
{
	struct exporter *x = arg;

	if (!dt_export_in(x->t, b->t, b->t))
		return;
	uint32_t problem = intern_kept(x, b->problem),
		 brief = intern_kept(x, b->brief);
	put_i(x, XT_plan_start, line_time(x, b->t));
	put_process(x, XT_plan_globalPid, XT_plan_pid);
	put_i(x, XT_plan_plan, b->plan);
	put_s(x, XT_plan_kind, dt_op_kind_key(b->kind));
	put_id(x, XT_plan_problemId, problem);
	put_id(x, XT_plan_briefId, brief);
	put_i(x, XT_plan_hostNs, (int64_t)b->host_ns);
	emit(x, XT_plan);
}

/* The trace's row of PROCESSES, once it has been read. */
static void put_trace(struct exporter *x, struct dt_session *s)
{
	const struct dt_file_info *fi = x->fi;
	const struct dt_file_stats *st = dt_session_file(s);
	const struct dt_model_stats *ms = dt_session_stats(s);
	const struct dt_graph_stats *g = &ms->graphs;
	char ended[512], lost[512], cudnn[32], cuda[96];
	const char *rank = x->t->rank ? strchr(x->t->rank, '=') : NULL;
	const char *version = dt_library_info_get(fi, "cudnn", "version");

	put_process(x, XT_proc_globalPid, XT_proc_pid);
	put_i(x, XT_proc_ppid, fi->hdr.ppid);
	if (rank)
		put_i(x, XT_proc_rank, strtoll(rank + 1, NULL, 10));
	else
		put_null(x, XT_proc_rank);
	put_s(x, XT_proc_host, dt_info_get(fi, "host"));
	put_s(x, XT_proc_name, dt_info_get(fi, "cmdline"));
	put_s(x, XT_proc_path, x->t->path);
	put_s(x, XT_proc_cudnnVersion,
	      version ? dt_fmt_cudnn_version(version, cudnn, sizeof(cudnn))
		      : NULL);
	put_s(x, XT_proc_cuda, dt_cuda_text(fi, cuda, sizeof(cuda)));
	put_s(x, XT_proc_gpuRecording, ms->gpu_state[0] ? ms->gpu_state : NULL);
	put_i(x, XT_proc_startMono, (int64_t)fi->hdr.start_mono);
	put_i(x, XT_proc_startReal, (int64_t)fi->hdr.start_real);
	put_i(x, XT_proc_monoOffset, x->t->offset);
	put_i(x, XT_proc_complete, dt_trace_complete(st));
	put_s(x, XT_proc_ended, dt_file_end_key(st->end));
	put_s(x, XT_proc_endedText, dt_file_end_text(st, ended, sizeof(ended)));
	put_i(x, XT_proc_records, (int64_t)st->records);
	if (st->records_missing_known)
		put_i(x, XT_proc_recordsMissing, (int64_t)st->records_missing);
	else
		put_null(x, XT_proc_recordsMissing);
	put_i(x, XT_proc_skippedBytes, (int64_t)st->bytes_skipped);
	put_i(x, XT_proc_lost, (int64_t)st->lost);
	put_i(x, XT_proc_lostExact, st->lost_exact);
	put_s(x, XT_proc_lostText,
	      dt_lost_text(st, ms, " lost", lost, sizeof(lost)));
	put_i(x, XT_proc_gpuDropped, (int64_t)st->gpu_dropped);
	put_i(x, XT_proc_calls, (int64_t)x->calls);
	put_i(x, XT_proc_ownCalls, (int64_t)x->own_calls);
	put_i(x, XT_proc_undecoded, (int64_t)ms->undecoded);
	put_i(x, XT_proc_graphLaunches, (int64_t)g->launches);
	put_i(x, XT_proc_graphLaunchNs, (int64_t)g->launch_ns);
	put_i(x, XT_proc_graphLaunched, (int64_t)g->launched);
	put_i(x, XT_proc_graphCaptured, (int64_t)g->captured);
	put_i(x, XT_proc_graphReplays, (int64_t)g->replays);
	put_i(x, XT_proc_graphPartial, (int64_t)g->partial);
	put_i(x, XT_proc_graphKernels, (int64_t)g->kernels);
	put_i(x, XT_proc_graphAttributed, (int64_t)g->attributed);
	put_i(x, XT_proc_graphUnknown, (int64_t)g->unknown);
	put_i(x, XT_proc_graphMismatch, (int64_t)g->mismatch);
	put_i(x, XT_proc_graphUnresolved, (int64_t)g->unresolved);
	emit(x, XT_proc);
}

static void put_meta(struct exporter *x, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put_meta(struct exporter *x, const char *name, const char *fmt, ...)
{
	char value[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	put_s(x, XT_meta_name, name);
	put_s(x, XT_meta_value, value);
	emit(x, XT_meta);
}

/* What the whole export is: its time line and window. */
static void put_export(struct exporter *x, const struct dt_export_trace *t,
		       size_t n)
{
	const struct dt_file_header *h = &dt_session_info(t[0].s)->hdr;
	/* offset = start_real - base - start_mono, for any trace */
	int64_t base = (int64_t)(h->start_real - h->start_mono -
				 (uint64_t)t[0].offset);

	put_meta(x, "dnntrace", "%s", DT_VERSION);
	put_meta(x, "schema", "%d", XT_SCHEMA_VERSION);
	put_meta(x, "timeBase", "%" PRId64, base);
	put_meta(x, "from", "%" PRIu64, x->o->from_ns);
	if (x->o->to_ns != UINT64_MAX)
		put_meta(x, "to", "%" PRIu64, x->o->to_ns);
	if (x->o->pid >= 0)
		put_meta(x, "pid", "%" PRId64, x->o->pid);
	put_meta(x, "traces", "%zu", n);
}

/* Writing failed: remove what was written, say so in one sentence; the
 * exit code. */
static int export_failed(struct exporter *x)
{
	x->sink->discard(x);
	dt_error("%s%s", x->err,
		 x->left ? "" : "; what was written is removed");
	return EXIT_USAGE;
}

/* Read every trace into the tables; an exit code. */
static int export_tables(const struct dt_export_opts *o, const struct sink *sk)
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
	put_export(x, t, n);
	for (size_t i = 0; i < n && !x->failed; i++) {
		struct dt_consumer c = { .arg = x,
					 .call = on_call,
					 .activity = on_activity,
					 .device = on_device,
					 .gpu_state = on_gpu_state,
					 .record = on_record,
					 .op = on_op,
					 .plan = on_plan };
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
		put_trace(x, t[i].s);
		/* what the model kept goes now, not with the last trace */
		dt_session_close(t[i].s);
		t[i].s = NULL;
	}
	hand_rows(x);
	if (!dt_handoff_stop(&x->worker))
		x->failed = true;
	pb_free(&x->rows);
	int rc = x->failed ? export_failed(x) : sk->finish(x);
	dt_export_close(t, n);
	free_strings(x);
	free(x->args);
	free(x);
	return rc;
}

/* ----------------------------------------------------------- SQLite */

/* One sentence for what SQLite said went wrong; -1. */
static int sqlite_error(struct exporter *x, int rc)
{
	snprintf(x->err, sizeof(x->err), "cannot write %s: %s", x->o->output,
		 x->db ? sqlite3_errmsg(x->db) : sqlite3_errstr(rc));
	return -1;
}

/* Create the file, refusing one that exists: nsys export refuses too,
 * unless told to overwrite. With --force a file there (never a symbolic
 * link) stays until the export is complete: the new one is written under
 * a temporary name beside it, *tmp, which put_in_place() renames over it.
 * The descriptor, or -1 with a sentence. */
static int create_new(struct exporter *x, const char *path, char **tmp)
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
	int fd = create_new(x, x->o->output, &x->db_tmp), rc;
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

/* A file written under the temporary name tmp (create_new()), put over
 * the one at path: 0, or -1 with a sentence. */
static int put_in_place(struct exporter *x, char **tmp, const char *path)
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
static void remove_output(struct exporter *x, const char *path)
{
	size_t n = strlen(x->err);

	if (unlink(path) && errno != ENOENT) {
		snprintf(x->err + n, sizeof(x->err) - n,
			 "; %s is incomplete and could not be removed: %s",
			 path, strerror(errno));
		x->left = true;
	}
}

static void sqlite_discard(struct exporter *x)
{
	sqlite_release(x);
	sqlite3_close(x->db);
	x->db = NULL;
	if (x->db_made)
		remove_output(x, x->db_tmp ? x->db_tmp : x->o->output);
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
		return export_failed(x);
	}
	x->db = NULL;
	if (put_in_place(x, &x->db_tmp, x->o->output))
		return export_failed(x);
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
	return export_tables(o, &sqlite_sink);
}

/* -------------------------------------------------------------- CSV */

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
		int fd = create_new(x, csv_path(x, t), &x->csv_tmp[t]);
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
			remove_output(x, x->csv_tmp[t] ? x->csv_tmp[t]
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
		if (put_in_place(x, &x->csv_tmp[t], csv_path(x, t)))
			x->failed = true;
	return x->failed ? export_failed(x) : 0;
}

static const struct sink csv_sink = { csv_open, csv_rows, csv_finish,
				      csv_discard };

int dt_export_csv(const struct dt_export_opts *o)
{
	if (!o->output)
		return dt_usage_error("export",
				      "--format csv writes a folder of tables: "
				      "name it with -o");
	return export_tables(o, &csv_sink);
}
