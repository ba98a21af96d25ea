/*
 * analyzer-session.c - one trace opened for analysis: the reader, the
 * model that replays it, and the consumers its events go to (dt-analyzer.h,
 * "the session"). The loop that reads a trace is here and nowhere else.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-model.h"
#include "analyzer-ranges.h"
#include "analyzer-util.h"
#include "dt-session.h"

#define MAX_CONSUMERS 8

struct dt_session;

/* A consumer behind the range filter (opts.range). */
struct filtered {
	struct dt_session *s;
	struct dt_consumer c;
};

struct dt_session {
	struct dt_reader *reader;
	struct dt_model *model;
	struct dt_ranges *ranges;
	struct dt_session_opts opts;
	struct dt_consumer cons[MAX_CONSUMERS];
	int n_cons;
	/* what the model hands events to: the ranges first, then cons, or
	 * filters in front of them */
	struct dt_consumer to_model[MAX_CONSUMERS + 1];
	struct filtered filters[MAX_CONSUMERS];
	bool ran;
	char *path;
};

/* ------------------------------------------------------- NVTX ranges */

static void ranges_call(void *arg, const struct dt_call *c)
{
	struct dt_session *s = arg;

	dt_ranges_call(s->ranges, c->seq, c->tid, c->t_begin);
}

static void ranges_activity(void *arg, const struct dt_activity *a)
{
	struct dt_session *s = arg;

	dt_ranges_activity(s->ranges, a);
}

/* The filter: a call inside the ranges, its ops and its GPU work pass;
 * whatever is not tied to a call (devices, states, other records) too. */
static void filter_call(void *arg, const struct dt_call *c)
{
	const struct filtered *f = arg;

	if (f->c.call && dt_ranges_kept(f->s->ranges, c->seq))
		f->c.call(f->c.arg, c);
}

static void filter_activity(void *arg, const struct dt_activity *a)
{
	const struct filtered *f = arg;

	if (f->c.activity && a->call && dt_ranges_kept(f->s->ranges, a->call))
		f->c.activity(f->c.arg, a);
}

static void filter_op(void *arg, const struct dt_op *op)
{
	const struct filtered *f = arg;

	if (f->c.op && dt_ranges_kept(f->s->ranges, op->seq))
		f->c.op(f->c.arg, op);
}

/* What is not tied to a call passes the filter as it is. */
#define FILTER_PASS(cb, type)                              \
	static void filter_##cb(void *arg, const type *ev) \
	{                                                  \
		const struct filtered *f = arg;            \
		if (f->c.cb)                               \
			f->c.cb(f->c.arg, ev);             \
	}
FILTER_PASS(device, struct dt_device)
FILTER_PASS(gpu_state, struct dt_gpu_change)
FILTER_PASS(thread, struct dt_thread)
FILTER_PASS(loss, struct dt_loss)
FILTER_PASS(record, struct dt_rec_hdr)
FILTER_PASS(plan, struct dt_plan_build)
FILTER_PASS(graph_launch, struct dt_graph_launch)
FILTER_PASS(gpu_metrics, struct dt_gpu_metrics)
FILTER_PASS(gpu_sample, struct dt_gpu_sample)
#undef FILTER_PASS

static void consumers_changed(struct dt_session *s)
{
	s->to_model[0] = (struct dt_consumer){ .arg = s,
					       .call = ranges_call,
					       .activity = ranges_activity };
	for (int i = 0; i < s->n_cons; i++) {
		struct dt_consumer c = s->cons[i];
		if (s->opts.range) {
			s->filters[i] = (struct filtered){ s, s->cons[i] };
			c = (struct dt_consumer){
				.arg = &s->filters[i],
				.call = filter_call,
				.activity = filter_activity,
				.device = filter_device,
				.gpu_state = filter_gpu_state,
				.thread = filter_thread,
				.loss = filter_loss,
				.record = filter_record,
				.op = filter_op,
				.plan = filter_plan,
				.graph_launch = filter_graph_launch,
				.gpu_metrics = filter_gpu_metrics,
				.gpu_sample = filter_gpu_sample,
			};
		}
		s->to_model[i + 1] = c;
	}
	dt_model_consumers(s->model, s->to_model, s->n_cons + 1);
}

const struct dt_range *dt_session_ranges(const struct dt_session *s, size_t *n)
{
	return dt_ranges_list(s->ranges, n);
}

const struct dt_range_stat *dt_session_range_stats(const struct dt_session *s,
						   size_t *n)
{
	return dt_ranges_stats(s->ranges, n);
}

/* ------------------------------------------------------------ session */

static struct dt_session *session_new(struct dt_reader *r, const char *path,
				      const struct dt_session_opts *opts,
				      int *code, char *err, size_t errlen)
{
	struct dt_session *s = calloc(1, sizeof(*s));

	if (s) {
		s->model = dt_model_new(dt_reader_info(r));
		s->ranges = dt_ranges_new(opts ? opts->range : NULL);
	}
	if (!s || !s->model || !s->ranges || !(s->path = strdup(path))) {
		if (s) {
			dt_model_free(s->model);
			dt_ranges_free(s->ranges);
		}
		free(s);
		dt_reader_close(r);
		if (code)
			*code = DT_ERR_NOMEM;
		if (err)
			snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	s->reader = r;
	if (opts)
		s->opts = *opts;
	dt_model_set_pointers(s->model, s->opts.pointers);
	consumers_changed(s);
	return s;
}

struct dt_session *dt_session_open(const char *path,
				   const struct dt_session_opts *opts,
				   int *code, char *err, size_t errlen)
{
	char why[256];
	int c = 0;
	struct dt_reader *r = dt_reader_open(path, &c, why, sizeof(why));

	if (!r) {
		if (code)
			*code = c;
		/* the reader names the file in what it says of I/O */
		if (err && c == DT_ERR_IO)
			snprintf(err, errlen, "%s", why);
		else if (err)
			snprintf(err, errlen, "%s: %s", path, why);
		return NULL;
	}
	return session_new(r, path, opts, code, err, errlen);
}

struct dt_session *dt_session_open_mem(const void *data, size_t size,
				       const struct dt_session_opts *opts,
				       int *code, char *err, size_t errlen)
{
	struct dt_reader *r = dt_reader_open_mem(data, size, code, err, errlen);

	return r ? session_new(r, "(memory)", opts, code, err, errlen) : NULL;
}

int dt_session_add(struct dt_session *s, const struct dt_consumer *c)
{
	if (s->n_cons == MAX_CONSUMERS)
		return -1;
	s->cons[s->n_cons++] = *c;
	consumers_changed(s);
	return 0;
}

void dt_session_run(struct dt_session *s)
{
	const struct dt_rec_hdr *h;
	uint64_t n = 0;

	if (s->ran)
		return;
	s->ran = true;
	while (dt_reader_next(s->reader, &h) == 1) {
		dt_ranges_feed(s->ranges, h);
		dt_model_feed(s->model, h);
		if (s->opts.progress && !(++n & 0xfffff))
			s->opts.progress(s->opts.progress_arg,
					 dt_reader_offset(s->reader),
					 dt_reader_stats(s->reader)->file_size);
	}
	dt_model_finish(s->model);
	dt_ranges_finish(s->ranges);
	if (s->opts.progress) {
		uint64_t size = dt_reader_stats(s->reader)->file_size;
		s->opts.progress(s->opts.progress_arg, size, size);
	}
}

const struct dt_file_info *dt_session_info(const struct dt_session *s)
{
	return dt_reader_info(s->reader);
}

const struct dt_file_stats *dt_session_file(const struct dt_session *s)
{
	return dt_reader_stats(s->reader);
}

const struct dt_model_stats *dt_session_stats(const struct dt_session *s)
{
	return dt_model_stats(s->model);
}

const struct dt_skip *dt_session_skips(const struct dt_session *s, size_t *n)
{
	return dt_reader_skips(s->reader, n);
}

const char *dt_session_path(const struct dt_session *s)
{
	return s->path;
}

void dt_session_close(struct dt_session *s)
{
	if (!s)
		return;
	dt_model_free(s->model);
	dt_ranges_free(s->ranges);
	dt_reader_close(s->reader);
	free(s->path);
	free(s);
}

/* ------------------------------------------------------------ identity */

const char *dt_file_end_name(enum dt_file_end end)
{
	switch (end) {
	case DT_FILE_CLEAN:
		return "clean";
	case DT_FILE_NO_END:
		return "incomplete (the process ended without finishing the "
		       "file)";
	case DT_FILE_TRUNCATED:
		return "truncated";
	case DT_FILE_CORRUPT:
		return "corrupt";
	case DT_FILE_DAMAGED:
		return "damaged (not all as written: the rest read)";
	}
	return "unknown";
}

const char *dt_file_end_key(enum dt_file_end end)
{
	switch (end) {
	case DT_FILE_CLEAN:
		return "clean";
	case DT_FILE_NO_END:
		return "no_end";
	case DT_FILE_TRUNCATED:
		return "truncated";
	case DT_FILE_CORRUPT:
		return "corrupt";
	case DT_FILE_DAMAGED:
		return "damaged";
	}
	return "unknown";
}

const char *dt_file_end_text(const struct dt_file_stats *st, char *buf,
			     size_t size)
{
	char b[32];
	int n = snprintf(buf, size, "%s", dt_file_end_name(st->end));

	if (st->bytes_lost && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n,
			      ", last %s unreadable",
			      dt_fmt_bytes(st->bytes_lost, b, sizeof(b)));
	if (st->error[0] && st->end != DT_FILE_CLEAN && n >= 0 &&
	    (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ": %s", st->error);
	return buf;
}

bool dt_trace_complete(const struct dt_file_stats *st)
{
	return st->end == DT_FILE_CLEAN && st->lost_exact && !st->lost &&
	       !st->gpu_dropped;
}

const char *dt_lost_text(const struct dt_file_stats *st,
			 const struct dt_model_stats *ms, const char *verb,
			 char *buf, size_t size)
{
	static const char *const why[] = {
		[DT_LOSS_FULL] = "buffers full",
		[DT_LOSS_TOO_BIG] = "records too large for a buffer",
		[DT_LOSS_NOBUF] = "no buffer for a thread",
		[DT_LOSS_IO] = "the file could not take them: disk full or "
			       "size limit",
	};
	int n = !st->lost_exact && !st->lost
			? snprintf(buf, size, "records%s: unknown", verb)
			: snprintf(buf, size, "%s%" PRIu64 " record%s%s",
				   st->lost_exact ? "" : "at least ", st->lost,
				   st->lost == 1 ? "" : "s", verb);
	int parts = 0;
	uint64_t told = 0;

	for (int r = DT_LOSS_FULL; ms && r <= DT_LOSS_IO; r++) {
		told += ms->lost_by[r];
		if (!ms->lost_by[r] || n < 0 || (size_t)n >= size)
			continue;
		n += snprintf(buf + n, size - (size_t)n, "%s%" PRIu64 " %s",
			      parts++ ? "; " : " (", ms->lost_by[r], why[r]);
	}
	/* the loss records that said why can be lost too (a full disk
	 * takes them with the rest) */
	if (parts && st->lost_exact && st->lost > told && n >= 0 &&
	    (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n,
			      "; %" PRIu64 " for reasons lost with them",
			      st->lost - told);
	if (parts && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ")");
	if (!st->lost_exact && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "%s",
			 st->have_end
				 ? " (its end summary counts fewer: the loss "
				   "records read are taken)"
				 : " (the file has no end summary: losses "
				   "after its last loss record are not known)");
	return buf;
}

const char *dt_cuda_text(const struct dt_file_info *fi, char *buf,
			 size_t size)
{
	const char *drv = dt_info_get(fi, "cuda.driver"),
		   *rt = dt_info_get(fi, "cuda.runtime");
	char v1[32], v2[32];

	if (!drv && !rt)
		return NULL;
	snprintf(buf, size, "driver %s, runtime %s",
		 drv ? dt_fmt_cuda_version(drv, v1, sizeof(v1)) : "none loaded",
		 rt ? dt_fmt_cuda_version(rt, v2, sizeof(v2)) : "none loaded");
	return buf;
}

char *dt_rank_of(const struct dt_file_info *fi)
{
	static const char *const vars[] = {
		"RANK",        "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
		"PMI_RANK",    "SLURM_PROCID",         "MV2_COMM_WORLD_RANK",
		"PALS_RANKID", "ALPS_APP_PE",          "LOCAL_RANK",
	};
	char key[64];

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		snprintf(key, sizeof(key), "env.%s", vars[i]);
		const char *v = dt_info_get(fi, key);
		if (v)
			return dt_xasprintf("%s=%s", vars[i], v);
	}
	return NULL;
}
