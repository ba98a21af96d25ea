/*
 * analyzer-summary.c - traces summed up for `dnntrace report` and `diff`.
 *
 * Each trace streams through a model of its own; what comes out (op
 * executions, plan builds, kernels, copies, calls) is added into tables
 * keyed by name (analyzer-summary-tables.c): problems by their signature,
 * functions by name, kernels by name; GPU time by library and operation
 * family, and by phase. Once every trace is in, problems are settled:
 * medians, rates against peaks, findings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-findings.h"
#include "dt-replayed.h"
#include "analyzer-ranges.h"
#include "analyzer-summary-internal.h"
#include "analyzer-util.h"
#include "dt-steps.h"
#include "dt-summary.h"

/* --------------------------------------------------------------- reading */

/* A round of tuning ends when one configuration has run this many times
 * in a row. */
#define SETTLED_RUNS 8

/* Histogram buckets: 1% wide from 1 ns (up to 10^11 ns, 100 s). */
#define HIST_BUCKETS 2546

static uint32_t bucket_of(uint64_t ns)
{
	if (ns <= 1)
		return 0;
	double b = log((double)ns) / log(1.01);
	return b >= HIST_BUCKETS - 1 ? HIST_BUCKETS - 1 : (uint32_t)b;
}

/* The middle of a bucket (its geometric mean). */
static uint64_t bucket_ns(uint32_t b)
{
	return (uint64_t)(pow(1.01, b + 0.5) + 0.5);
}

static void hist_add(struct dt_sum_problem *p, uint32_t choice, uint64_t ns)
{
	if (!p->hist) {
		p->hist = calloc(HIST_BUCKETS, sizeof(*p->hist));
		if (!p->hist)
			return;
		p->hist_choice = choice;
	}
	/* the histogram follows the configuration running now: runs of an
	 * earlier one that came late are only in its engine's totals */
	if (choice != p->hist_choice) {
		memset(p->hist, 0, HIST_BUCKETS * sizeof(*p->hist));
		p->hist_n = 0;
		p->hist_choice = choice;
	}
	p->hist[bucket_of(ns)]++;
	p->hist_n++;
}

/* An execution's GPU time kept exactly: the older half of those kept goes
 * into the histogram when they are DT_SUM_EXACT. */
static void keep_time(struct dt_sum_problem *p, uint32_t choice, uint64_t ns)
{
	if (p->n_times == DT_SUM_EXACT) {
		size_t half = DT_SUM_EXACT / 2;
		for (size_t i = 0; i < half; i++)
			hist_add(p, p->times[i].choice, p->times[i].ns);
		memmove(p->times, p->times + half,
			(p->n_times - half) * sizeof(*p->times));
		p->n_times -= half;
	}
	struct dt_sum_time *t = p->times;
	if (p->n_times == p->cap_times &&
	    !(t = dt_grow_array(t, &p->cap_times, p->n_times + 1, sizeof(*t))))
		return;
	p->times = t;
	p->times[p->n_times++] = (struct dt_sum_time){ ns, choice };
	p->pushed++;
}

static bool same_knobs(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static void add_op_counts(struct dt_summary *s, struct dt_sum_file *f,
			  const struct dt_op *op)
{
	struct priv *pv = P(s);
	struct dt_sum_problem *p = sum_problem_of(s, op);
	if (op->origin == DT_OP_CAPTURED) {
		/* it ran nothing: its replays are its executions */
		if (p)
			p->captured++;
		return;
	}
	f->ops++;
	s->ops++;
	struct dt_sum_lib *l = sum_lib(s, op->library);
	l->ops++;
	l->runs++;
	s->kind_ns[op->cost.kind] += op->gpu_ns;
	s->kind_count[op->cost.kind]++;
	/* what its library ran, by the op's kind; its first kernel's name
	 * where the kind says nothing (a legacy batch norm) */
	enum dt_opfam fam = dt_opfam_of_kind(op->cost.kind);
	enum dt_lib lib = dt_lib_of_library(op->library);
	if (fam == DT_OPF_OTHER && op->first_kernel)
		fam = dt_opfam_of(op->first_kernel);
	pv->op_lib_ns[lib][fam] += op->gpu_ns;
	pv->op_lib_count[lib][fam]++;
	if (!p)
		return;
	p->count++;
	p->failed += op->status != 0;
	if (op->origin == DT_OP_REPLAY)
		p->replays++; /* its host time is the graph launch's */
	else
		p->host_ns += op->t_end - op->t_begin;
	/* outside a sampling window: what it ran on the GPU is unknown
	 * (the kernels of the window's edge are only in the totals) */
	bool timed = !op->unsampled;
	p->unsampled += !timed;
	if (timed) {
		p->gpu_ns += op->gpu_ns;
		p->kernels += op->kernels;
		p->convert_ns += op->convert_ns;
		p->converts += op->converts;
	}
	if (op->workspace > p->workspace)
		p->workspace = op->workspace;
	if (p->device < 0)
		p->device = sum_map_device(pv, op->device);
	/* the last execution says what the engine does now */
	if (op->tensor_cores >= 0)
		p->tensor_cores = op->tensor_cores;
	if (op->math != DT_MATH_UNKNOWN)
		p->math = op->math;
	if (op->notes && (!p->notes || strcmp(p->notes, op->notes))) {
		free(p->notes);
		p->notes = strdup(op->notes);
	}
	if (op->first_kernel && !p->first_kernel)
		p->first_kernel = strdup(op->first_kernel);

	/* engines, and stretches of executions with other engines than the
	 * one before (autotuning shows as a few of those, then one engine) */
	uint32_t choice = DT_SUM_ENGINES;
	for (uint32_t i = 0; i < p->n_engines && choice == DT_SUM_ENGINES; i++)
		if (p->engines[i].engine == op->engine &&
		    same_knobs(p->engines[i].knobs, op->knobs))
			choice = i;
	if (choice == DT_SUM_ENGINES && p->n_engines < DT_SUM_ENGINES) {
		choice = p->n_engines++;
		sum_engine_row(s, (uint32_t)(p - s->problems), choice);
		p->engines[choice].engine = op->engine;
		p->engines[choice].knobs = dt_xstrdup(op->knobs);
		p->engines[choice].workspace = -1;
	}
	if (choice == DT_SUM_ENGINES) /* too many: the last one absorbs */
		choice = DT_SUM_ENGINES - 1;
	p->engines[choice].count++;
	p->engines[choice].gpu_ns += timed ? op->gpu_ns : 0;
	if (op->workspace > p->engines[choice].workspace)
		p->engines[choice].workspace = op->workspace;
	/* a round of tuning starts with the first change of engine
	 * configuration, and with every change after a settled streak */
	if (p->count > 1 && choice != p->last_choice) {
		p->engine_changes++;
		if (!p->tune_rounds || p->streak >= SETTLED_RUNS)
			p->tune_rounds++;
		p->streak = 0;
	}
	p->streak++;
	p->last_engine = op->engine;
	p->last_choice = choice;

	if (op->kernels && timed) {
		struct dt_sum_engine *e = &p->engines[choice];
		if (!e->timed || op->gpu_ns < e->min_ns)
			e->min_ns = op->gpu_ns;
		if (op->gpu_ns > e->max_ns)
			e->max_ns = op->gpu_ns;
		e->timed++;
		e->sq_ns += (double)op->gpu_ns * (double)op->gpu_ns;
		keep_time(p, choice, op->gpu_ns);
	}
	struct dt_sum_share *sh = dt_grow_array(p->per_file, &p->cap_per_file,
						pv->file + 1, sizeof(*sh));
	if (sh) {
		p->per_file = sh;
		sh[pv->file].ns += timed ? op->gpu_ns : 0;
		sh[pv->file].count++;
	}

	/* the plan's build: the same engine built into another plan for the
	 * same graph is a repeat */
	if (!op->plan || op->plan >= pv->cap_plan || !pv->plan_build[op->plan])
		return;
	int32_t bi = pv->plan_build[op->plan] - 1;
	uint64_t knobs =
		op->knobs ? dt_hash(op->knobs, strlen(op->knobs), 4) : 0;
	struct plan_seen *seen = pv->seen[bi];
	uint32_t n = pv->n_seen[bi];
	bool same_plan = false, same_engine = false;
	for (uint32_t i = 0; i < n; i++) {
		if (seen[i].file != pv->file)
			continue;
		if (seen[i].plan == op->plan)
			same_plan = true;
		else if (seen[i].engine == op->engine && op->engine >= 0 &&
			 seen[i].knobs == knobs)
			same_engine = true;
	}
	if (same_plan || n >= 1024)
		return;
	struct plan_seen *v = realloc(seen, (n + 1) * sizeof(*v));
	if (!v)
		return;
	v[n] = (struct plan_seen){ pv->file, op->plan, op->engine, knobs };
	pv->seen[bi] = v;
	pv->n_seen[bi] = n + 1;
	if (same_engine) {
		s->builds[bi].repeats++;
		s->builds[bi].repeat_ns += pv->plan_ns[op->plan];
	}
}

static void add_op(struct dt_summary *s, struct dt_sum_file *f,
		   const struct dt_op *op)
{
	struct priv *pv = P(s);
	struct sum_held *held = NULL;

	/* ops come after their kernels, which make the points where there
	 * are any; a capture ran nothing, out of the ops' order. One that
	 * comes after points later than it were taken (its kernels came
	 * late) adds to them too: it is rare, and what it adds to is found
	 * by comparing the counters before and after */
	uint64_t t = dt_place_op(op);
	if (op->origin != DT_OP_CAPTURED && pv->cut_kernels)
		sum_cut_pass(s, SUM_OP, t);
	else if (op->origin != DT_OP_CAPTURED)
		sum_cut_at(s, SUM_OP, t);
	if (op->origin != DT_OP_CAPTURED && sum_cut_late(s, SUM_OP, t))
		held = sum_cut_hold(s, SUM_OP);
	add_op_counts(s, f, op);
	if (held)
		sum_cut_settle(s, SUM_OP, t, held);
}

static void on_build(struct dt_summary *s, const struct dt_plan_build *b)
{
	struct priv *pv = P(s);

	sum_cut_at(s, SUM_HOST, b->t);
	if (!b->problem)
		return;
	int32_t bi = sum_build_of(s, b->problem, b->brief, b->kind);
	if (bi < 0)
		return;
	s->builds[bi].builds++;
	s->builds[bi].host_ns += b->host_ns;
	size_t cap = pv->cap_plan, cap2 = pv->cap_plan;
	uint64_t *ns =
		dt_grow_array(pv->plan_ns, &cap, b->plan + 1, sizeof(*ns));
	if (!ns)
		return;
	pv->plan_ns = ns;
	int32_t *pb =
		dt_grow_array(pv->plan_build, &cap2, b->plan + 1, sizeof(*pb));
	if (!pb)
		return;
	pv->plan_build = pb;
	pv->cap_plan = cap;
	pv->plan_ns[b->plan] = b->host_ns;
	pv->plan_build[b->plan] = bi + 1;
}

/* The summary being added to, and its file. */
struct reading {
	struct dt_summary *s;
	struct dt_sum_file *f;
	const struct dt_file_info *fi;
	struct dt_stepper *steps; /* handed the events it reads */
	bool steps_calls;         /* and still calls (dt_stepper_call) */
	uint64_t last_call;       /* else the latest call's start */
};

/* A piece of GPU work added up; inlined twice, so that work on time (not
 * late: nearly all of it) adds without asking whether it is at each
 * counter. */
static inline __attribute__((always_inline)) void
add_work(struct reading *rd, const struct dt_activity *a,
	 const struct sum_work *w)
{
	struct dt_summary *s = rd->s;
	struct dt_sum_file *f = rd->f;
	struct priv *pv = P(s);
	const struct dt_kernel_class *kc = a->kc;
	uint64_t d = a->gpu_end > a->gpu_start ? a->gpu_end - a->gpu_start : 0;
	/* launched inside a recorded call: its library's */
	bool in_call = a->call != 0;
	enum dt_lib call_lib = dt_lib_of_library(a->library);

	f->gpu_ns += d;
	sum_work_add(w, &pv->file_gpu, d);
	sum_work_add(w, &s->gpu_ns, d);
	sum_work_add(w, &s->work, 1);
	/* the union of busy intervals does not care which clock, as long as
	 * it is one; the histogram's is the host's */
	if (!f->busy.width_ns && (!f->busy.t0 || a->start < f->busy.t0))
		f->busy.t0 = a->start;
	if (a->device < 64) {
		struct merger *g = &pv->merge[a->device];
		if (!g->hist) {
			g->hist = &f->busy;
			g->to_host = (int64_t)(a->start - a->gpu_start);
		}
		sum_work_busy(w, g, a->gpu_start, a->gpu_end);
	}
	if (in_call) {
		struct dt_sum_lib *l = sum_lib(s, a->library);
		sum_work_add(w, &l->gpu_ns, d);
		sum_work_add(w, &l->work, 1);
	}
	if (in_call && call_lib == DT_LIB_CUDNN) {
		f->cudnn_gpu_ns += d;
		sum_work_add(w, &s->cudnn_ns, d);
	}
	if (pv->dram)
		dt_dram_work(pv->dram, a->device, a->start, a->end,
			     in_call			  ? call_lib
			     : a->kind != DT_ACT_KERNEL ? DT_LIB_RUNTIME
			     : kc			  ? kc->lib
							  : DT_LIB_OTHER,
			     a->kind == DT_ACT_MEMSET	  ? DT_OPF_FILL
			     : a->kind == DT_ACT_MEMCPY ? DT_OPF_COPY
			     : kc			  ? kc->opfam
							  : DT_OPF_OTHER);
	sum_work_add(w,
		     &s->by_ns[in_call                          ? DT_BY_CALL
			       : a->kind != DT_ACT_KERNEL       ? DT_BY_RUNTIME
			       : !kc || kc->lib == DT_LIB_OTHER ? DT_BY_NONE
			       : kc->lib_by_module              ? DT_BY_MODULE
								: DT_BY_NAME],
		     d);
	if (a->kind != DT_ACT_KERNEL) {
		enum dt_opfam fam = a->kind == DT_ACT_MEMSET ? DT_OPF_FILL
							     : DT_OPF_COPY;
		f->copies++;
		sum_phase_add(s, a, fam, d);
		if (!in_call) {
			sum_work_add(w, &s->lib_ns[DT_LIB_RUNTIME][fam], d);
			sum_work_add(w, &s->lib_count[DT_LIB_RUNTIME][fam], 1);
			sum_work_add(w, &s->copy_ns, d);
			sum_work_add(w, &s->copies, 1);
			sum_work_add(w, &s->copy_bytes, a->bytes);
		}
		return;
	}
	f->kernels++;
	s->kernels++;
	sum_work_add(w, &pv->file_kernels, 1);
	if (kc && kc->opfam == DT_OPF_COMM) {
		f->comm_ns += d;
		sum_work_add(w, &pv->file_comm, d);
	}
	sum_phase_add(s, a, kc ? kc->opfam : DT_OPF_OTHER, d);
	if (!in_call) {
		enum dt_lib lib = kc ? kc->lib : DT_LIB_OTHER;
		enum dt_opfam fam = kc ? kc->opfam : DT_OPF_OTHER;
		sum_work_add(w, &s->lib_ns[lib][fam], d);
		sum_work_add(w, &s->lib_count[lib][fam], 1);
		sum_work_add(w, &s->other_ns[lib], d);
		sum_work_add(w, &s->other_count[lib], 1);
	}
	if (!kc)
		return;
	if (!in_call && kc->tuner) {
		sum_work_add(w, &s->tuner_ns, d);
		sum_work_add(w, &s->tuner_kernels, 1);
	}
	struct kname *n = kc->layout ? sum_kname_by_model(s, kc) : NULL;
	struct dt_sum_convert *cv = n ? sum_convert_of(s, n, in_call) : NULL;
	if (cv) {
		sum_work_add(w, &cv->count, 1);
		sum_work_add(w, &cv->ns, d);
	}
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct reading *rd = arg;
	struct dt_summary *s = rd->s;
	struct priv *pv = P(s);

	if (!a->timed)
		return;
	if (rd->steps)
		dt_stepper_activity(rd->steps, a);
	uint64_t t = a->placed;
	if (a->kind == DT_ACT_KERNEL && (pv->cut_kernels = true))
		sum_cut_at(s, SUM_GPU, t);
	else
		sum_cut_pass(s, SUM_GPU, t);
	if (sum_cut_late(s, SUM_GPU, t))
		add_work(rd, a, &(const struct sum_work){ s, t, true });
	else
		add_work(rd, a, &(const struct sum_work){ s, t, false });
}

double dt_sum_peak_bandwidth(const struct dt_summary *s)
{
	return s->peaks && s->n_devices ? s->peaks[0].bandwidth
					: s->default_peaks.bandwidth;
}

const char *dt_rank_label(const struct dt_sum_file *f, char *buf,
			  size_t size)
{
	const char *eq = f->rank ? strchr(f->rank, '=') : NULL;

	if (eq)
		snprintf(buf, size, "%s", eq + 1);
	else
		snprintf(buf, size, "pid %u", f->pid);
	return buf;
}

const char *dt_sum_callers(const struct dt_summary *s)
{
	return s->n_libs == 1 ? s->libs[0].display : "the libraries'";
}

bool dt_sum_cudnn_only(const struct dt_summary *s)
{
	for (size_t i = 0; i < s->n_libs; i++)
		if (strcmp(s->libs[i].library, "cudnn") &&
		    strcmp(s->libs[i].library, "?"))
			return false;
	return true;
}

uint64_t dt_sum_share_ns(const struct dt_summary *s)
{
	uint64_t ns = 0;

	if (dt_sum_cudnn_only(s))
		return s->cudnn_ns;
	for (size_t i = 0; i < s->n_libs; i++)
		ns += s->libs[i].gpu_ns;
	return ns;
}

/* What the first trace that says anything of a library says: its name,
 * version and file, as info prints them. */
static void sum_lib_facts(struct dt_summary *s, const struct dt_file_info *fi)
{
	for (uint32_t i = 0; i < fi->n_libraries; i++) {
		const struct dt_library_def *d = &fi->libraries[i];
		struct dt_sum_lib *l = sum_lib(s, d->name);
		const char *v = dt_library_info_get(fi, d->name, "version");
		const char *file = dt_library_info_get(fi, d->name, "file");
		char buf[32];

		if (!file)
			file = dt_library_info_get(fi, d->name, "path");
		if (l->version || l->file || strcmp(l->library, d->name))
			continue;
		if (d->display && *d->display) {
			free(l->display);
			l->display = dt_xstrdup(d->display);
		}
		if (v)
			l->version = dt_xstrdup(
				dt_library_version(d->name, v, buf, sizeof(buf)));
		l->file = dt_xstrdup(file);
	}
}

uint64_t dt_sum_lib_ns(const struct dt_summary *s, int lib, int fam,
		       uint64_t *count)
{
	uint64_t ns = 0, n = 0;

	for (int l = 0; l < DT_LIB_COUNT; l++)
		for (int f = 0; f < DT_OPF_COUNT; f++)
			if ((lib < 0 || l == lib) && (fam < 0 || f == fam)) {
				ns += s->lib_ns[l][f];
				n += s->lib_count[l][f];
			}
	if (count)
		*count = n;
	return ns;
}

/* What the summary reads of these, the steps alone do. */
static void on_record(void *arg, const struct dt_rec_hdr *h)
{
	struct reading *rd = arg;

	if (rd->steps && dt_stepper_reads(h))
		dt_stepper_record(rd->steps, h);
}

static void on_graph_launch(void *arg, const struct dt_graph_launch *l)
{
	struct reading *rd = arg;

	if (rd->steps)
		dt_stepper_graph_launch(rd->steps, l);
}

static void on_call(void *arg, const struct dt_call *a)
{
	struct reading *rd = arg;
	struct dt_summary *s = rd->s;
	struct dt_sum_file *f = rd->f;
	const struct dt_file_info *fi = rd->fi;
	struct priv *pv = P(s);
	uint64_t d = a->t_end - a->t_begin;

	if (rd->steps_calls)
		rd->steps_calls = dt_stepper_call(rd->steps, a);
	else if (a->t_begin > rd->last_call)
		rd->last_call = a->t_begin;
	sum_cut_at(s, SUM_HOST, a->t_begin);
	if (a->t_begin < f->t_begin || !f->t_begin)
		f->t_begin = a->t_begin;
	if (a->t_end > f->t_end)
		f->t_end = a->t_end;
	/* the recorder's own plan queries are no work of the program's, nor
	 * a library's call inside another's (the program made the outer) */
	if (a->flags & (DT_CALL_BY_DNNTRACE | DT_CALL_NESTED)) {
		f->own_calls += !(a->flags & DT_CALL_NESTED);
		s->own_calls += !(a->flags & DT_CALL_NESTED);
		return;
	}
	f->calls++;
	s->calls++;
	s->host_ns += d;
	s->host_calls++;
	s->failed += a->status != 0;
	struct dt_sum_lib *l = sum_lib(s, a->library);
	l->calls++;
	l->host_ns += d;
	l->failed += a->status != 0;
	if (a->api >= pv->n_api_map)
		return;
	if (!pv->api_map[a->api]) {
		const char *name = fi->apis[a->api].name;
		if (!name)
			return;
		pv->api_map[a->api] = sum_api_of(s, name);
		if (!pv->api_map[a->api])
			return;
	}
	struct dt_sum_api *r = &s->apis[pv->api_map[a->api] - 1];
	r->lib = (size_t)(l - s->libs);
	if (!r->calls || d < r->min)
		r->min = d;
	if (d > r->max)
		r->max = d;
	r->calls++;
	r->ns += d;
	sum_cut_call(s, pv->api_map[a->api] - 1, d);
	if (a->status != 0) {
		r->failed++;
		r->failed_ns += d;
		r->last_failure = a->status;
	}
}

static void on_device(void *arg, const struct dt_device *d)
{
	struct reading *rd = arg;
	struct priv *pv = P(rd->s);

	if (d->id < 64)
		pv->dev_map[d->id] = sum_device_of(rd->s, d);
}

/* A trace whose GPU is sampled says so before its samples: the work from
 * then on is kept for them (most traces have none). */
static void on_gpu_metrics(void *arg, const struct dt_gpu_metrics *g)
{
	struct reading *rd = arg;
	struct priv *pv = P(rd->s);

	if (g->n && !pv->dram)
		pv->dram = dt_dram_new(&rd->s->dram);
}

static void on_gpu_sample(void *arg, const struct dt_gpu_sample *gs)
{
	struct reading *rd = arg;
	struct priv *pv = P(rd->s);

	if (!pv->dram)
		pv->dram = dt_dram_new(&rd->s->dram);
	dt_dram_sample(pv->dram, gs);
}

static void on_op(void *arg, const struct dt_op *op)
{
	struct reading *rd = arg;

	add_op(rd->s, rd->f, op);
}

static void on_plan(void *arg, const struct dt_plan_build *b)
{
	struct reading *rd = arg;

	on_build(rd->s, b);
}

struct progress {
	const struct dt_summary *s;
	const char *path;
};

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
	const struct progress *p = arg;

	p->s->opts.progress(p->s->opts.progress_arg, p->path, done, total);
}

int dt_summary_add(struct dt_summary *s, const char *path, char *err,
		   size_t errlen)
{
	struct progress prog = { s, path };
	struct dt_session_opts o = { .pointers = s->fusion != NULL,
				     .range = s->opts.range };
	if (s->opts.progress) {
		o.progress = on_progress;
		o.progress_arg = &prog;
	}
	struct dt_session *ss = dt_session_open(path, &o, NULL, err, errlen);

	if (!ss)
		return -1;
	int rc = dt_summary_read(s, ss, err, errlen);
	dt_session_close(ss);
	return rc;
}

/* The trace's NVTX ranges into the summary's, merged by name and
 * domain. */
static int add_ranges(struct dt_summary *s, struct dt_session *ss, char *err,
		      size_t errlen)
{
	size_t n;
	const struct dt_range_stat *st = dt_session_range_stats(ss, &n);

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < s->n_ranges &&
		       (strcmp(s->ranges[j].name, st[i].name) ||
			strcmp(s->ranges[j].domain ? s->ranges[j].domain : "",
			       st[i].domain ? st[i].domain : "")))
			j++;
		if (j < s->n_ranges) {
			dt_range_stat_add(&s->ranges[j], &st[i]);
			continue;
		}
		struct dt_range_stat *v = dt_grow_array(
			s->ranges, &P(s)->cap_ranges, j + 1, sizeof(*v));
		if (!v) {
			snprintf(err, errlen, "%s: out of memory",
				 dt_session_path(ss));
			return -1;
		}
		s->ranges = v;
		v[j] = st[i];
		v[j].name = strdup(st[i].name);
		v[j].domain = dt_xstrdup(st[i].domain);
		s->n_ranges++;
	}
	dt_range_stats_sort(s->ranges, s->n_ranges);
	return 0;
}

int dt_summary_read(struct dt_summary *s, struct dt_session *ss, char *err,
		    size_t errlen)
{
	struct priv *pv = P(s);
	const char *path = dt_session_path(ss);
	const struct dt_file_info *fi = dt_session_info(ss);
	struct dt_sum_file *v = dt_grow_array(s->files, &pv->cap_files,
					      s->n_files + 1, sizeof(*v));
	uint32_t *map = calloc(fi->n_apis + 1, sizeof(*map));
	if (!v || !map) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(map);
		return -1;
	}
	s->files = v;
	struct dt_sum_file *f = &s->files[s->n_files];
	pv->file = (uint32_t)s->n_files++;
	f->path = strdup(path);
	f->host = dt_xstrdup(dt_info_get(fi, "host"));
	f->program = dt_xstrdup(dt_info_get(fi, "cmdline"));
	char cuda[96];
	f->cuda = dt_xstrdup(dt_cuda_text(fi, cuda, sizeof(cuda)));
	f->rank = dt_rank_of(fi);
	f->pid = fi->hdr.pid;

	pv->api_map = map;
	pv->n_api_map = fi->n_apis;
	for (int i = 0; i < 64; i++) {
		pv->dev_map[i] = -1;
		memset(&pv->merge[i], 0, sizeof(pv->merge[i]));
	}
	memset(pv->lib_seen, 0, sizeof(pv->lib_seen)); /* the last trace's */
	if (pv->ids)
		memset(pv->ids, 0, pv->cap_ids * sizeof(*pv->ids));
	pv->n_ids = 0;
	if (pv->kn_by_model)
		memset(pv->kn_by_model, 0,
		       pv->cap_kn_by_model * sizeof(*pv->kn_by_model));
	if (pv->plan_build)
		memset(pv->plan_build, 0,
		       pv->cap_plan * sizeof(*pv->plan_build));

	struct reading rd = { s, f, fi };
	struct dt_consumer c = { .arg = &rd,
				 .call = on_call,
				 .activity = on_activity,
				 .device = on_device,
				 .op = on_op,
				 .plan = on_plan,
				 .gpu_metrics = on_gpu_metrics,
				 .gpu_sample = on_gpu_sample,
				 .record = on_record,
				 .graph_launch = on_graph_launch };
	if (s->fusion)
		dt_fusion_begin_file(s->fusion, ss);
	dt_session_add(ss, &c);
	/* the steps (dt-steps.h), handed the events as they come here */
	struct dt_stepper *stepper = rd.steps = dt_stepper_new();
	rd.steps_calls = stepper != NULL;
	pv->phase = -1;
	pv->last_launch = 0;
	memset(pv->op_lib_ns, 0, sizeof(pv->op_lib_ns));
	memset(pv->op_lib_count, 0, sizeof(pv->op_lib_count));
	pv->file_gpu = pv->file_comm = pv->file_kernels = 0;
	pv->cut_kernels = false;
	sum_cut_begin(s);
	dt_session_run(ss);
	if (stepper)
		dt_stepper_calls_until(stepper, rd.last_call);
	struct dt_step_stats *steps =
		stepper ? dt_stepper_finish(stepper) : NULL;
	dt_stepper_free(stepper);
	sum_cut_finish(s, steps); /* the start-up out, unless opts.whole */
	dt_steps_add(&s->steps, steps);
	for (int l = 0; l < DT_LIB_COUNT; l++)
		for (int fam = 0; fam < DT_OPF_COUNT; fam++) {
			s->lib_ns[l][fam] += pv->op_lib_ns[l][fam];
			s->lib_count[l][fam] += pv->op_lib_count[l][fam];
		}
	/* the libraries the trace recorded, called or not */
	for (uint32_t i = 0; i < fi->n_apis; i++)
		if (fi->apis[i].name)
			sum_lib(s, fi->apis[i].library);
	sum_lib_facts(s, fi);
	dt_dram_finish(pv->dram);
	dt_dram_free(pv->dram);
	pv->dram = NULL;
	/* what followed the last matrix product goes with it */
	sum_phase_merge(&s->phases[pv->phase < 0 ? DT_PHASE_SETUP : pv->phase],
		    &pv->pending);
	if (s->fusion) {
		dt_fusion_cut(s->fusion, pv->cut_t); /* as the summary's */
		dt_fusion_end_file(s->fusion);
	}
	/* after the pass: a process that had not loaded cuDNN when its
	 * header was written says which one it loaded in the body */
	const char *file = dt_library_info_get(fi, "cudnn", "file"), *ver;
	f->cudnn = dt_xstrdup(
		file ? file : dt_library_info_get(fi, "cudnn", "path"));
	char v1[32];
	if ((ver = dt_library_info_get(fi, "cudnn", "version")))
		f->cudnn_version = strdup(dt_fmt_cudnn_version(ver, v1, sizeof v1));
	const struct dt_file_stats *st = dt_session_file(ss);
	const struct dt_model_stats *ms = dt_session_stats(ss);
	uint64_t busy = 0, longest = 0;
	for (int i = 0; i < 64; i++) {
		struct merger *g = &pv->merge[i];
		sum_merger_finish(g);
		uint64_t span = g->last > g->first ? g->last - g->first : 0;
		/* sampled: the GPU was watched in the windows only */
		if (ms->sampling.one_in && span > ms->sampling.window_ns)
			span = ms->sampling.window_ns;
		busy += g->busy;
		f->busy.span_ns += span;
		f->busy.devices += g->hist != NULL;
		/* from the cut on, when the start-up was left out */
		uint64_t from =
			pv->cut_t ? pv->cut_t - (uint64_t)g->to_host : 0;
		if (from > g->first && g->hist)
			span = g->last > from ? g->last - from : 0;
		s->span_ns += span;
		longest = span > longest ? span : longest;
	}
	sum_cut_file(s, f, longest);
	s->busy_ns += sum_cut_busy(s, busy);
	char text[512];
	f->end = st->end;
	f->complete = dt_trace_complete(st);
	f->sealed = st->sealed;
	f->ended = strdup(dt_file_end_text(st, text, sizeof(text)));
	f->lost_text =
		strdup(dt_lost_text(st, ms, " lost", text, sizeof(text)));
	f->lost_exact = st->lost_exact;
	f->lost_io = ms->lost_by[DT_LOSS_IO];
	f->records_missing = st->records_missing;
	f->records_missing_known = st->records_missing_known;
	f->skipped_bytes = st->bytes_skipped;
	f->records = st->records;
	f->lost = st->lost;
	f->gpu_dropped = st->gpu_dropped;
	f->undecoded = ms->undecoded;
	f->graphs = ms->graphs;
	f->graph_records = fi->hdr.major > 1 || fi->hdr.minor >= 1;
	dt_graph_stats_add(&s->graphs, &ms->graphs);
	s->plans.built += ms->plans.built;
	s->plans.restored += ms->plans.restored;
	s->plans.opaque += ms->plans.opaque;
	s->plans.unknown_runs += ms->plans.unknown_runs;
	f->gpu_state = ms->gpu_state[0] ? strdup(ms->gpu_state) : NULL;
	f->gpu_metrics = ms->gpu_metrics[0] ? strdup(ms->gpu_metrics) : NULL;
	f->gpu_metrics_lost = ms->gpu_metrics_lost[0]
				      ? strdup(ms->gpu_metrics_lost)
				      : NULL;
	f->gpu_samples = ms->gpu_samples;
	f->sampling = ms->sampling;
	if (f->sampling.one_in) {
		struct dt_gpu_sampling *sum = &s->sampling;
		if (f->sampling.one_in > sum->one_in)
			sum->one_in = f->sampling.one_in;
		sum->windows += f->sampling.windows;
		sum->window_ns += f->sampling.window_ns;
		sum->unsampled_ops += f->sampling.unsampled_ops;
		/* windows run from the file's start, before the first
		 * call too */
		uint64_t t0 = ms->t_first < fi->hdr.start_mono
				      ? ms->t_first
				      : fi->hdr.start_mono;
		if (ms->t_last > t0)
			s->sampled_traces_ns += ms->t_last - t0;
	}
	free(map);
	pv->api_map = NULL;
	pv->n_api_map = 0;
	return add_ranges(s, ss, err, errlen);
}

/* ------------------------------------------------------------ settling */

bool dt_summary_complete(const struct dt_summary *s)
{
	for (size_t i = 0; i < s->n_files; i++)
		if (!s->files[i].complete)
			return false;
	return s->n_files > 0;
}

const struct dt_peaks *dt_summary_peaks(const struct dt_summary *s,
					int32_t device)
{
	if (device >= 0 && (size_t)device < s->n_devices)
		return &s->peaks[device];
	return &s->default_peaks;
}

double dt_problem_spread(const struct dt_sum_problem *p)
{
	double n = (double)p->settled_count, all = (double)p->settled_all;

	if (p->settled_count < 2 || !p->settled_ns)
		return -1;
	if (p->settled_count >= p->settled_all)
		return 0;
	double mean = (double)p->settled_ns / n;
	double var = (p->settled_sq - n * mean * mean) / (n - 1);
	/* sampled without replacement from all of them */
	double se = sqrt((var > 0 ? var : 0) / n * (1 - n / all));
	return 1.96 * se / mean;
}

void dt_problem_rates(const struct dt_summary *s,
		      const struct dt_sum_problem *p, struct dt_rates *r)
{
	const struct dt_peaks *pk = dt_summary_peaks(s, p->device);
	double secs = (double)p->settled_ns / 1e9;
	double n = (double)p->settled_count;

	memset(r, 0, sizeof(*r));
	r->pct_flops = r->pct_bandwidth = r->roof_pct = -1;
	r->bound = -1;
	if (!p->settled_ns || !n)
		return;
	if (p->flops > 0)
		r->flops_per_s = p->flops * n / secs;
	if (p->bytes > 0)
		r->bytes_per_s = (double)p->bytes * n / secs;
	if (p->flops > 0 && p->bytes > 0)
		r->intensity = p->flops / (double)p->bytes;
	double pf = pk->flops[p->math], pb = pk->bandwidth;
	if (pf > 0 && r->flops_per_s > 0)
		r->pct_flops = 100 * r->flops_per_s / pf;
	if (pb > 0 && r->bytes_per_s > 0)
		r->pct_bandwidth = 100 * r->bytes_per_s / pb;
	if (pf > 0 && pb > 0 && r->intensity > 0) {
		r->bound = r->intensity >= pf / pb;
		double roof = r->intensity * pb < pf ? r->intensity * pb : pf;
		r->roof_pct = 100 * r->flops_per_s / roof;
	} else if (pb > 0 && r->bytes_per_s > 0 && p->flops <= 0) {
		/* nothing to compute: only the memory roof applies */
		r->bound = 0;
		r->roof_pct = r->pct_bandwidth;
	}
}

static int cmp_time(const void *a, const void *b)
{
	const struct dt_sum_time *x = a, *y = b;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* Per problem: the executions of the engine configuration it settled
 * on (the last it ran with), their median, and the GPU time of the runs
 * with others. When that configuration never ran with kernels, the
 * statistics are over all executions. */
static void settle_problem(struct dt_sum_problem *p)
{
	if (!p->n_engines)
		return;
	const struct dt_sum_engine *last = &p->engines[p->last_choice];
	bool all = !last->timed;
	uint64_t hist_n = p->hist && (all || p->hist_choice == p->last_choice)
				  ? p->hist_n
				  : 0;

	for (uint32_t i = 0; i < p->n_engines; i++) {
		const struct dt_sum_engine *e = &p->engines[i];
		if (i != p->last_choice) {
			p->tune_ns += e->gpu_ns;
			p->tune_count += e->count;
		}
		if ((!all && i != p->last_choice) || !e->timed)
			continue;
		if (!p->settled_count || e->min_ns < p->min_ns)
			p->min_ns = e->min_ns;
		if (e->max_ns > p->max_ns)
			p->max_ns = e->max_ns;
		p->settled_count += e->timed;
		p->settled_ns += e->gpu_ns;
		p->settled_sq += e->sq_ns;
		p->settled_all += e->count;
	}
	/* the settled executions kept exactly, first */
	size_t n = 0;
	for (size_t i = 0; i < p->n_times; i++)
		if (all || p->times[i].choice == p->last_choice) {
			struct dt_sum_time t = p->times[i];
			p->times[i] = p->times[n];
			p->times[n++] = t;
		}
	if (!n && !hist_n)
		return;
	qsort(p->times, n, sizeof(*p->times), cmp_time);
	if (!hist_n) {
		p->median_ns = p->times[n / 2].ns;
		return;
	}
	/* with the histogram: the bucket holding the middle execution */
	uint64_t want = (n + hist_n) / 2, seen = 0;
	size_t k = 0;
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		seen += p->hist[b];
		while (k < n && bucket_of(p->times[k].ns) == b)
			seen++, k++;
		if (seen > want) {
			uint64_t v = bucket_ns(b);
			p->median_ns = v < p->min_ns   ? p->min_ns
				       : v > p->max_ns ? p->max_ns
						       : v;
			return;
		}
	}
}

/* The peaks the user gave replace the device's. */
static bool override_peaks(const struct dt_summary *s, struct dt_peaks *pk)
{
	char which[128] = "";
	size_t w = 0;
	int all = 0;

	if (s->opts.peak_bandwidth > 0) {
		pk->bandwidth = s->opts.peak_bandwidth;
		w += (size_t)snprintf(which + w, sizeof(which) - w,
				      "bandwidth");
	}
	for (int m = 1; m < DT_MATH_COUNT; m++)
		if (s->opts.peak_flops[m] > 0) {
			pk->flops[m] = s->opts.peak_flops[m];
			all++;
		}
	for (int m = 1; m < DT_MATH_COUNT && w < sizeof(which); m++) {
		if (!(s->opts.peak_flops[m] > 0))
			continue;
		if (all == DT_MATH_COUNT - 1) {
			w += (size_t)snprintf(which + w, sizeof(which) - w,
					      "%sFLOP rates", w ? ", " : "");
			break;
		}
		w += (size_t)snprintf(which + w, sizeof(which) - w, "%s%s",
				      w ? ", " : "", dt_math_name(m));
	}
	if (w) {
		size_t n = strlen(pk->source);
		snprintf(pk->source + n, sizeof(pk->source) - n,
			 "%s%s from the command line", n ? "; " : "", which);
	}
	return w > 0;
}

void dt_summary_finish(struct dt_summary *s)
{
	if (s->fusion)
		dt_fusion_finish(s->fusion);
	sum_cut_compact(s);
	for (size_t i = 0; i < s->n_problems; i++)
		settle_problem(&s->problems[i]);
	/* peaks: each device's, then what the user said; ops whose device
	 * is not known are held against the first device's */
	for (size_t d = 0; d < s->n_devices; d++) {
		dt_peaks_for_device(&s->peaks[d], &s->devices[d]);
		override_peaks(s, &s->peaks[d]);
	}
	if (s->n_devices) {
		s->default_peaks = s->peaks[0];
	} else {
		snprintf(s->default_peaks.source,
			 sizeof(s->default_peaks.source),
			 "no device record in the trace");
		if (!override_peaks(s, &s->default_peaks))
			snprintf(s->default_peaks.source,
				 sizeof(s->default_peaks.source),
				 "no device record in the trace: give "
				 "--peak-bandwidth and --peak-flops");
	}
	dt_summary_find(s);
}

/* --------------------------------------------------------------- life */

struct dt_summary *dt_summary_new(const struct dt_summary_opts *opts)
{
	struct dt_summary *s = calloc(1, sizeof(*s));
	struct priv *pv = calloc(1, sizeof(*pv));

	if (!s || !pv) {
		free(s);
		free(pv);
		return NULL;
	}
	s->priv = pv;
	if (opts)
		s->opts = *opts;
	if (s->opts.fusion && !(s->fusion = dt_fusion_new())) {
		free(pv);
		free(s);
		return NULL;
	}
	if (s->fusion)
		s->fusion->bandwidth_override = s->opts.fusion_bandwidth;
	return s;
}

void sum_problem_free(struct dt_sum_problem *p)
{
	free(p->key);
	free(p->brief);
	free(p->api);
	for (uint32_t e = 0; e < p->n_engines; e++)
		free(p->engines[e].knobs);
	free(p->notes);
	free(p->first_kernel);
	free(p->times);
	free(p->hist);
	free(p->per_file);
}

void dt_summary_free(struct dt_summary *s)
{
	if (!s)
		return;
	struct priv *pv = P(s);
	dt_fusion_free(s->fusion);
	for (size_t i = 0; i < s->n_replayed; i++)
		dt_replayed_free(s->replayed[i]);
	free(s->replayed);
	for (size_t i = 0; i < s->n_libs; i++) {
		free(s->libs[i].library);
		free(s->libs[i].display);
		free(s->libs[i].version);
		free(s->libs[i].file);
	}
	for (size_t i = 0; i < s->n_files; i++) {
		struct dt_sum_file *f = &s->files[i];
		free(f->path);
		free(f->host);
		free(f->program);
		free(f->cudnn);
		free(f->gpu_state);
		free(f->gpu_metrics);
		free(f->gpu_metrics_lost);
		free(f->ended);
		free(f->lost_text);
		free(f->cudnn_version);
		free(f->cuda);
		free(f->rank);
	}
	dt_steps_free(s->steps);
	for (size_t i = 0; i < s->n_apis; i++)
		free(s->apis[i].name);
	for (size_t i = 0; i < s->n_ranges; i++) {
		free((char *)s->ranges[i].name);
		free((char *)s->ranges[i].domain);
	}
	free(s->ranges);
	for (size_t i = 0; i < s->n_problems; i++)
		sum_problem_free(&s->problems[i]);
	for (size_t i = 0; i < s->n_builds; i++) {
		free(s->builds[i].key);
		free(s->builds[i].brief);
		free(pv->seen[i]);
	}
	for (size_t i = 0; i < s->n_converts; i++)
		free(s->converts[i].name);
	for (size_t i = 0; i < s->n_findings; i++) {
		free(s->findings[i].title);
		free(s->findings[i].evidence);
	}
	for (size_t i = 0; i < pv->n_kn; i++)
		free(pv->kn[i].name);
	free(pv->kn);
	free(pv->kn_by_model);
	free(pv->seen);
	free(pv->n_seen);
	free(pv->plan_ns);
	free(pv->plan_build);
	free(pv->engine_rows);
	free(pv->api_mm);
	free(pv->ids);
	sum_index_free(&pv->problems);
	sum_index_free(&pv->apis);
	sum_index_free(&pv->builds);
	sum_index_free(&pv->knames);
	free(pv);
	free(s->files);
	free(s->devices);
	free(s->peaks);
	free(s->apis);
	free(s->problems);
	free(s->builds);
	free(s->converts);
	free(s->findings);
	free(s);
}
