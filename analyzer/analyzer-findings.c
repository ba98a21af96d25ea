/*
 * analyzer-findings.c - what a summary found worth a user's attention,
 * each finding with its evidence and what it costs: autotuning, plans
 * built again, layout conversions, FP32 without tensor cores, ops far
 * below the roofline, failed calls, a rank the others wait for, and
 * engines a replay measured faster (analyzer-replayed.c). Largest cost
 * first.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-findings.h"
#include "analyzer-util.h"
#include "dt-summary.h"

const char *dt_finding_key(enum dt_finding_type t)
{
	static const char *const keys[DT_FIND_COUNT] = {
		[DT_FIND_AUTOTUNE] = "autotune",
		[DT_FIND_REBUILD] = "plan_rebuild",
		[DT_FIND_LAYOUT] = "layout_conversion",
		[DT_FIND_FP32] = "fp32_without_tensor_cores",
		[DT_FIND_LOW_ROOF] = "far_below_roofline",
		[DT_FIND_FAILED] = "failed_calls",
		[DT_FIND_COPIES] = "copies_conversions",
		[DT_FIND_IDLE] = "gpu_idle",
		[DT_FIND_LOW_BANDWIDTH] = "far_below_bandwidth",
		[DT_FIND_STRAGGLER] = "straggler",
		[DT_FIND_ENGINE_CHOICE] = "engine_choice",
	};
	return (unsigned)t < DT_FIND_COUNT ? keys[t] : "?";
}

static void add_finding(struct dt_summary *s, enum dt_finding_type type,
			uint64_t cost, bool host, char *title, char *evidence)
{
	struct dt_finding *v =
		realloc(s->findings, (s->n_findings + 1) * sizeof(*v));
	if (!v || !title) {
		free(title);
		free(evidence);
		return;
	}
	s->findings = v;
	s->findings[s->n_findings++] =
		(struct dt_finding){ type, cost, host, title,
				     evidence ? evidence : strdup("") };
}

void dt_finding_add(struct dt_summary *s, enum dt_finding_type type,
		    uint64_t cost, bool host, char *title, char *evidence)
{
	add_finding(s, type, cost, host, title, evidence);
}

/* What a finding sorts problems by: 0 leaves a problem out. */
typedef uint64_t (*problem_key)(const struct dt_summary *s,
				const struct dt_sum_problem *p);
/* The same for any of the summary's tables (builds, conversions); arg is
 * the caller's. */
typedef uint64_t (*row_key)(const struct dt_summary *s, const void *row,
			    const void *arg);

/* Each problem's key, worked out once, for sorting. */
struct keyed {
	uint64_t key;
	uint32_t index;
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The rows of a table (rows elements of `size` bytes) with a key,
 * largest first, for evidence lists: their indexes, *n of them. */
static uint32_t *rows_by(const struct dt_summary *s, const void *table,
			 size_t rows, size_t size, row_key key,
			 const void *arg, size_t *n)
{
	struct keyed *k = malloc((rows + 1) * sizeof(*k));
	uint32_t *ix = malloc((rows + 1) * sizeof(*ix));

	*n = 0;
	if (!k || !ix) {
		free(k);
		free(ix);
		return NULL;
	}
	for (size_t i = 0; i < rows; i++) {
		uint64_t v = key(s, (const char *)table + i * size, arg);
		if (v)
			k[(*n)++] = (struct keyed){ v, (uint32_t)i };
	}
	qsort(k, *n, sizeof(*k), by_key);
	for (size_t i = 0; i < *n; i++)
		ix[i] = k[i].index;
	free(k);
	return ix;
}

struct problem_arg {
	problem_key key;
};

static uint64_t problem_row(const struct dt_summary *s, const void *row,
			    const void *arg)
{
	return ((const struct problem_arg *)arg)->key(s, row);
}

static uint32_t *problems_by(const struct dt_summary *s, problem_key key,
			     size_t *n)
{
	struct problem_arg a = { key };

	return rows_by(s, s->problems, s->n_problems, sizeof(*s->problems),
		       problem_row, &a, n);
}

#define EVIDENCE_ROWS 5

static uint64_t tune_key(const struct dt_summary *s,
			 const struct dt_sum_problem *p)
{
	(void)s;
	return p->tune_count ? p->tune_ns + 1 : 0;
}

static uint64_t search_key(const struct dt_summary *s,
			   const struct dt_sum_problem *p)
{
	(void)s;
	return p->kind == DT_KIND_SEARCH ? p->gpu_ns + 1 : 0;
}

static void find_autotune(struct dt_summary *s)
{
	struct dt_sbuf ev = { 0 };
	uint64_t cost = 0, runs = 0, search_ns = 0, search_host = 0,
		 searches = 0;
	size_t n_tuned = 0, n_search = 0, repeated = 0;
	char t1[32], t2[32];
	size_t n;
	uint32_t *ix = problems_by(s, tune_key, &n);

	for (size_t i = 0; ix && i < n; i++) {
		struct dt_sum_problem *p = &s->problems[ix[i]];
		cost += p->tune_ns;
		runs += p->tune_count;
		n_tuned++;
		repeated += p->tune_rounds > 1;
		if (i < EVIDENCE_ROWS) {
			dt_fmt_ns(p->tune_ns, t1, sizeof(t1));
			dt_sb_item(&ev, "\n",
				   "%s %s: %" PRIu64 " run%s with %u other "
				   "engine configuration%s (%s), then engine "
				   "%" PRId64 "%s",
				   dt_op_kind_key(p->kind), p->brief,
				   p->tune_count, p->tune_count == 1 ? "" : "s",
				   p->n_engines - 1,
				   p->n_engines == 2 ? "" : "s", t1,
				   p->last_engine,
				   p->tune_rounds > 1 ? "; tuned again later"
						      : "");
		}
	}
	free(ix);
	ix = problems_by(s, search_key, &n);
	for (size_t i = 0; ix && i < n; i++) {
		struct dt_sum_problem *p = &s->problems[ix[i]];
		search_ns += p->gpu_ns;
		search_host += p->host_ns;
		searches += p->count;
		n_search++;
		repeated += p->count > 1;
		if (i < EVIDENCE_ROWS) {
			dt_fmt_ns(p->gpu_ns, t1, sizeof(t1));
			dt_fmt_ns(p->host_ns, t2, sizeof(t2));
			dt_sb_item(&ev, "\n",
				   "%s %s: %" PRIu64 " call%s, %s GPU, %s host",
				   p->api, p->brief, p->count,
				   p->count == 1 ? "" : "s", t1, t2);
		}
	}
	free(ix);
	if (s->tuner_kernels) {
		dt_fmt_ns(s->tuner_ns, t1, sizeof(t1));
		dt_sb_item(&ev, "\n",
			   "the autotuner's own checking kernels (redzone "
			   "checks, result comparisons): %" PRIu64 ", %s",
			   s->tuner_kernels, t1);
	}
	if (!n_tuned && !n_search) {
		free(ev.p);
		return;
	}
	char what[512];
	size_t w = 0;
	what[0] = 0;
	if (n_tuned) {
		dt_fmt_ns(cost, t1, sizeof(t1));
		w += (size_t)snprintf(what + w, sizeof(what) - w,
				      "%" PRIu64 " run%s of %zu problem%s with "
				      "engine configurations not kept (%s)",
				      runs, runs == 1 ? "" : "s", n_tuned,
				      n_tuned == 1 ? "" : "s", t1);
	}
	if (searches && w < sizeof(what)) {
		dt_fmt_ns(search_ns, t1, sizeof(t1));
		dt_fmt_ns(search_host, t2, sizeof(t2));
		w += (size_t)snprintf(what + w, sizeof(what) - w,
				      "%s%" PRIu64
				      " cudnnFind* call%s (%s GPU, %s host)",
				      w ? "; " : "", searches,
				      searches == 1 ? "" : "s", t1, t2);
	}
	if (s->tuner_kernels && w < sizeof(what)) {
		dt_fmt_ns(s->tuner_ns, t1, sizeof(t1));
		snprintf(what + w, sizeof(what) - w,
			 "%sthe autotuner's own kernels (%s)", w ? "; " : "",
			 t1);
	}
	cost += search_ns + s->tuner_ns;
	dt_fmt_ns(cost, t1, sizeof(t1));
	char *title = dt_xasprintf(
		"autotuning: %s of GPU time benchmarking candidates: %s; %s",
		t1, what,
		repeated ? "paid more than once for some problems"
			 : "paid once per problem");
	add_finding(s, DT_FIND_AUTOTUNE, cost, false, title, ev.p);
}

static uint64_t repeat_key(const struct dt_summary *s, const void *row,
			   const void *arg)
{
	(void)s, (void)arg;
	return ((const struct dt_sum_build *)row)->repeat_ns;
}

static void find_rebuilds(struct dt_summary *s)
{
	struct dt_sbuf ev = { 0 };
	uint64_t cost = 0, repeats = 0, builds = 0, build_ns = 0;
	size_t graphs = 0;
	char t1[32], t2[32];

	for (size_t i = 0; i < s->n_builds; i++) {
		struct dt_sum_build *b = &s->builds[i];
		builds += b->builds;
		build_ns += b->host_ns;
		if (!b->repeats)
			continue;
		cost += b->repeat_ns;
		repeats += b->repeats;
		graphs++;
	}
	if (!repeats)
		return;
	/* the worst graphs first */
	size_t n;
	uint32_t *ix = rows_by(s, s->builds, s->n_builds, sizeof(*s->builds),
			       repeat_key, NULL, &n);
	for (size_t i = 0; ix && i < n && i < EVIDENCE_ROWS; i++) {
		struct dt_sum_build *b = &s->builds[ix[i]];
		dt_fmt_ns(b->host_ns, t1, sizeof(t1));
		dt_sb_item(
			&ev, "\n",
			"%s %s: %u plans built (%s), %u of them again for an "
			"engine configuration already built",
			dt_op_kind_key(b->kind), b->brief, b->builds, t1,
			b->repeats);
	}
	free(ix);
	dt_fmt_ns(cost, t1, sizeof(t1));
	dt_fmt_ns(build_ns, t2, sizeof(t2));
	char *title = dt_xasprintf(
		"plans rebuilt: %" PRIu64 " execution plan%s built again "
		"for a graph and engine configuration already built (%zu "
		"graph%s; %s of host time; all %" PRIu64 " builds took %s): "
		"keep plans, keyed by shape",
		repeats, repeats == 1 ? " was" : "s were", graphs,
		graphs == 1 ? "" : "s", t1, builds, t2);
	add_finding(s, DT_FIND_REBUILD, cost, true, title, ev.p);
}

static uint64_t convert_key(const struct dt_summary *s, const void *row,
			    const void *arg)
{
	(void)s, (void)arg;
	return ((const struct dt_sum_convert *)row)->ns;
}

static void find_layout(struct dt_summary *s)
{
	struct dt_sbuf ev = { 0 };
	uint64_t cost = 0, pad_ns = 0, pads = 0, moves = 0, transform_ns = 0;
	char t1[32], t2[32], what[256];

	/* cudnnTransformTensor and the like, for what their kernels' names
	 * did not already count */
	for (size_t i = 0; i < s->n_problems; i++)
		if (s->problems[i].kind == DT_KIND_TRANSFORM)
			transform_ns += s->problems[i].gpu_ns -
					s->problems[i].convert_ns;
	for (size_t i = 0; i < s->n_converts; i++) {
		struct dt_sum_convert *c = &s->converts[i];
		size_t fn;
		const char *f =
			dt_kernel_function(c->name, strlen(c->name), &fn);
		cost += c->ns;
		if (memmem(f, fn, "AddPadding", 10) ||
		    memmem(f, fn, "addPadding", 10)) {
			pad_ns += c->ns;
			pads += c->count;
		} else {
			moves += c->count;
		}
	}
	size_t n;
	uint32_t *ix = rows_by(s, s->converts, s->n_converts,
			       sizeof(*s->converts), convert_key, NULL, &n);
	for (size_t i = 0; ix && i < n && i < EVIDENCE_ROWS; i++) {
		struct dt_sum_convert *c = &s->converts[ix[i]];
		dt_fmt_ns(c->ns, t1, sizeof(t1));
		size_t fn;
		const char *f =
			dt_kernel_function(c->name, strlen(c->name), &fn);
		dt_sb_item(&ev, "\n",
			   "%.*s: %" PRIu64 " launches, %s, %s %s calls",
			   (int)(fn < 100 ? fn : 100), f, c->count, t1,
			   c->in_cudnn ? "inside" : "outside",
			   dt_sum_callers(s));
	}
	free(ix);
	if (s->kind_count[DT_KIND_TRANSFORM]) {
		dt_fmt_ns(s->kind_ns[DT_KIND_TRANSFORM], t1, sizeof(t1));
		dt_sb_item(&ev, "\n",
			   "cudnnTransformTensor and the like: %" PRIu64
			   " calls, %s (their own kernels above included)",
			   s->kind_count[DT_KIND_TRANSFORM], t1);
		cost += transform_ns;
	}
	if (!cost) {
		free(ev.p);
		return;
	}
	/* what to do differs: transposes go with channels-last tensors,
	 * channel padding with channel counts the engines take as they are */
	size_t w = 0;
	what[0] = 0;
	if (moves || s->kind_count[DT_KIND_TRANSFORM]) {
		dt_fmt_ns(cost - pad_ns, t2, sizeof(t2));
		w += (size_t)snprintf(
			what + w, sizeof(what) - w,
			"%s in %" PRIu64 " transposes%s: keep tensors in "
			"the layout the engines want (channels-last, NHWC, "
			"for tensor cores)",
			t2, moves,
			s->kind_count[DT_KIND_TRANSFORM]
				? ", cudnnTransformTensor calls among them"
				: "");
	}
	if (pads && w < sizeof(what)) {
		dt_fmt_ns(pad_ns, t2, sizeof(t2));
		snprintf(what + w, sizeof(what) - w,
			 "%s%s in %" PRIu64
			 " channel paddings: channel counts that are not a "
			 "multiple of 8 are padded at every call (pad them "
			 "once, beforehand)",
			 w ? "; " : "", t2, pads);
	}
	dt_fmt_ns(cost, t1, sizeof(t1));
	char *title = dt_xasprintf("layout conversions: %s of GPU time: %s", t1,
				   what);
	add_finding(s, DT_FIND_LAYOUT, cost, false, title, ev.p);
}

static uint64_t fp32_key(const struct dt_summary *s,
			 const struct dt_sum_problem *p)
{
	(void)s;
	bool tc_kind = dt_math_of(&(struct dt_cost){ .dtype = p->dtype,
						     .tensor_op = true },
				  1) == DT_MATH_TF32;
	switch (p->kind) {
	case DT_KIND_CONV_FWD:
	case DT_KIND_CONV_BWD_DATA:
	case DT_KIND_CONV_BWD_FILTER:
	case DT_KIND_MATMUL:
	case DT_KIND_ATTN_FWD:
	case DT_KIND_ATTN_BWD:
	case DT_KIND_RNN_FWD:
	case DT_KIND_RNN_BWD_DATA:
	case DT_KIND_RNN_BWD_WEIGHTS:
		break;
	default:
		return 0;
	}
	return tc_kind && p->tensor_cores == 0 ? p->gpu_ns + 1 : 0;
}

static void find_fp32(struct dt_summary *s)
{
	struct dt_sbuf ev = { 0 };
	uint64_t cost = 0;
	char t1[32];
	size_t n;
	uint32_t *ix = problems_by(s, fp32_key, &n);

	for (size_t i = 0; ix && i < n; i++) {
		struct dt_sum_problem *p = &s->problems[ix[i]];
		struct dt_rates r;
		cost += p->gpu_ns;
		if (i >= EVIDENCE_ROWS)
			continue;
		dt_problem_rates(s, p, &r);
		dt_fmt_ns(p->gpu_ns, t1, sizeof(t1));
		dt_sb_item(&ev, "\n",
			   "%s %s: %" PRIu64 " runs, %s, %.1f TFLOP/s",
			   dt_op_kind_key(p->kind), p->brief, p->count, t1,
			   r.flops_per_s / 1e12);
	}
	free(ix);
	if (!cost) {
		free(ev.p);
		return;
	}
	dt_fmt_ns(cost, t1, sizeof(t1));
	char *title = dt_xasprintf(
		"FP32 without tensor cores: %s of GPU time in %zu problem%s "
		"whose engines use CUDA cores only; TF32 (torch: "
		"allow_tf32; cuDNN: CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) or "
		"BF16 data would run them on tensor cores",
		t1, n, n == 1 ? "" : "s");
	add_finding(s, DT_FIND_FP32, cost, false, title, ev.p);
}

/* Below this share of what the roofline allows, an op is far below both
 * roofs; only ops worth at least MIN_SHARE of the libraries' GPU time
 * (cuDNN's where it is wrapped alone) count. */
#define LOW_ROOF_PCT 10.0
#define MIN_SHARE    0.01

static uint64_t low_roof_key(const struct dt_summary *s,
			     const struct dt_sum_problem *p)
{
	struct dt_rates r;
	dt_problem_rates(s, p, &r);
	if (r.roof_pct < 0 || r.roof_pct >= LOW_ROOF_PCT ||
	    (double)p->gpu_ns < MIN_SHARE * (double)dt_sum_share_ns(s))
		return 0;
	/* GPU time beyond what the roofline needs */
	return (uint64_t)((double)p->gpu_ns * (1 - r.roof_pct / 100)) + 1;
}

static void find_low_roof(struct dt_summary *s)
{
	struct dt_sbuf ev = { 0 };
	uint64_t cost = 0;
	char t1[32];
	size_t n;

	uint32_t *ix = problems_by(s, low_roof_key, &n);
	for (size_t i = 0; ix && i < n; i++) {
		struct dt_sum_problem *p = &s->problems[ix[i]];
		struct dt_rates r;
		uint64_t lost = low_roof_key(s, p) - 1;
		cost += lost;
		if (i >= EVIDENCE_ROWS)
			continue;
		dt_problem_rates(s, p, &r);
		dt_fmt_ns(p->gpu_ns, t1, sizeof(t1));
		dt_sb_item(&ev, "\n",
			   "%s %s: %s, %.1f%% of the roofline (%.2f TFLOP/s, "
			   "%.0f GB/s, %.1f FLOP/B, %s-bound)",
			   dt_op_kind_key(p->kind), p->brief, t1, r.roof_pct,
			   r.flops_per_s / 1e12, r.bytes_per_s / 1e9,
			   r.intensity, r.bound == 1 ? "compute" : "memory");
	}
	free(ix);
	if (!cost) {
		free(ev.p);
		return;
	}
	dt_fmt_ns(cost, t1, sizeof(t1));
	char *title = dt_xasprintf(
		"far below both roofs: %zu problem%s ran under %.0f%% of what "
		"the roofline allows; %s of GPU time above what the peaks "
		"need (small shapes, launch-bound, or a poor engine)",
		n, n == 1 ? "" : "s", LOW_ROOF_PCT, t1);
	add_finding(s, DT_FIND_LOW_ROOF, cost, false, title, ev.p);
}

static void find_failed(struct dt_summary *s)
{
	struct dt_sbuf ev = { 0 };
	uint64_t cost = 0, failed = 0;
	size_t funcs = 0;
	char t1[32];

	for (size_t i = 0; i < s->n_apis; i++) {
		struct dt_sum_api *a = &s->apis[i];
		if (!a->failed)
			continue;
		cost += a->failed_ns;
		failed += a->failed;
		funcs++;
		if (funcs <= EVIDENCE_ROWS * 2) {
			char sb[64];
			const char *st = dt_status_str(a->last_failure, sb,
						       sizeof(sb));
			dt_fmt_ns(a->failed_ns, t1, sizeof(t1));
			dt_sb_item(&ev, "\n",
				   "%s: %" PRIu64 " of %" PRIu64
				   " calls failed (last: %s), %s",
				   a->name, a->failed, a->calls,
				   st, t1);
		}
	}
	if (!failed)
		return;
	dt_fmt_ns(cost, t1, sizeof(t1));
	/* "cuDNN call", or "library call" when the traces recorded several */
	const char *whose =
		s->n_libs == 1 ? dt_library_display(s->libs[0].library)
			       : "library";
	char *title = dt_xasprintf("failed calls: %" PRIu64
				   " %s call%s returned an error, in %zu "
				   "function%s (%s of host time)",
				   failed, whose, failed == 1 ? "" : "s", funcs,
				   funcs == 1 ? "" : "s", t1);
	add_finding(s, DT_FIND_FAILED, cost, true, title, ev.p);
}

/* Copies and conversions worth a look: this share of all GPU time. */
#define COPIES_PCT 10

/* GPU time spent moving or converting data rather than computing: the
 * copy family, any library (type conversions, layout changes, (de)
 * quantizing, the program's memory copies). */
static void find_copies(struct dt_summary *s)
{
	struct dt_sbuf ev = { 0 };
	/* loading before the first matrix product is paid once */
	uint64_t setup = s->phases[DT_PHASE_SETUP].fam_ns[DT_OPF_COPY];
	uint64_t all = dt_sum_lib_ns(s, -1, DT_OPF_COPY, NULL);
	/* phases go by kernel names, cuDNN's work in families by its ops'
	 * kinds: the two need not agree */
	uint64_t cost = all > setup ? all - setup : 0;
	char t1[32];

	if (!s->gpu_ns || cost * 100 < s->gpu_ns * COPIES_PCT)
		return;
	if (setup)
		dt_sb_item(&ev, "\n",
			   "not counted: %s before the first matrix product "
			   "(loading)",
			   dt_fmt_ns(setup, t1, sizeof(t1)));
	for (int l = 0; l < DT_LIB_COUNT; l++) {
		uint64_t ns = s->lib_ns[l][DT_OPF_COPY];
		if (!ns)
			continue;
		dt_sb_item(&ev, "\n", "%s: %s in %" PRIu64 " %s",
			   dt_lib_name(l), dt_fmt_ns(ns, t1, sizeof(t1)),
			   s->lib_count[l][DT_OPF_COPY],
			   l == DT_LIB_RUNTIME  ? "copies"
			   : l == DT_LIB_CUDNN ? "ops"
					       : "kernels");
	}
	if (s->copy_ns && s->copy_bytes)
		dt_sb_item(&ev, "\n",
			   "memory copies and sets moved %s at %.1f GB/s",
			   dt_fmt_bytes(s->copy_bytes, t1, sizeof(t1)),
			   (double)s->copy_bytes / (double)s->copy_ns);
	for (int p = DT_PHASE_BATCH; p < DT_PHASE_COUNT; p++) {
		const struct dt_sum_phase *ph = &s->phases[p];
		if (!ph->fam_count[DT_OPF_MATMUL] ||
		    !s->phases[DT_PHASE_TOKEN].fam_count[DT_OPF_MATMUL])
			continue;
		dt_sb_item(&ev, "\n", "%s: %s, %.0f%% of the phase",
			   dt_phase_name(p),
			   dt_fmt_ns(ph->fam_ns[DT_OPF_COPY], t1, sizeof(t1)),
			   ph->ns ? 100.0 * (double)ph->fam_ns[DT_OPF_COPY] /
					    (double)ph->ns
				  : 0);
	}
	dt_fmt_ns(cost, t1, sizeof(t1));
	char *title = dt_xasprintf(
		"copies and conversions: %s (%.0f%% of GPU time) copy, convert "
		"or re-lay data rather than compute; keeping data in the type "
		"and place the next kernel reads (a KV cache in the compute "
		"type, weights converted once) saves it",
		t1, 100.0 * (double)cost / (double)s->gpu_ns);
	add_finding(s, DT_FIND_COPIES, cost, false, title, ev.p);
}

/* The GPU idle this much of the time between its first and last
 * activity: the program is bound by its host or its launches. */
#define IDLE_PCT 50

static void find_idle(struct dt_summary *s)
{
	struct dt_sbuf ev = { 0 };
	uint64_t idle = s->span_ns > s->busy_ns ? s->span_ns - s->busy_ns : 0;
	uint64_t launches = s->graphs.launches ? s->graphs.launches
					       : s->graphs.launched;
	char t1[32], t2[32];

	if (!s->span_ns || idle * 100 < s->span_ns * IDLE_PCT || !s->work)
		return;
	dt_sb_item(&ev, "\n",
		   "%" PRIu64 " kernels, copies and sets, %s of GPU work "
		   "each on average",
		   s->work, dt_fmt_ns(s->gpu_ns / s->work, t1, sizeof(t1)));
	if (launches)
		dt_sb_item(&ev, "\n",
			   "%" PRIu64 " CUDA graph launches ran %" PRIu64
			   " of the kernels%s",
			   launches, s->graphs.kernels,
			   s->startup.traces ? " (the whole run's)" : "");
	else
		dt_sb_item(&ev, "\n",
			   "no CUDA graph: every kernel was launched on its "
			   "own");
	dt_fmt_ns(idle, t1, sizeof(t1));
	dt_fmt_ns(s->span_ns, t2, sizeof(t2));
	char *title = dt_xasprintf(
		"GPU idle: the GPU ran nothing for %s of the %s %s (%.0f%%): "
		"the host, synchronization or kernel launches set the pace, "
		"not the GPU; larger batches, CUDA graphs and fewer, fused "
		"kernels keep it busy",
		t1, t2,
		s->sampling.one_in  ? "of the sampling windows"
		: s->startup.traces ? "of the steady state, from its start to "
				      "the GPU's last activity"
				    : "between its first and last activity",
		100.0 * (double)idle / (double)s->span_ns);
	add_finding(s, DT_FIND_IDLE, idle, true, title, ev.p);
}

/* record --gpu-metrics: work that moved data far below what the GPU's
 * memory can (measured, not modelled): a family of this share of GPU time
 * or more, under this share of the peak. */
#define LOW_BW_TIME_PCT 5
#define LOW_BW_PEAK_PCT 30

static void find_low_bandwidth(struct dt_summary *s)
{
	const struct dt_sum_dram *d = &s->dram;
	double peak = dt_sum_peak_bandwidth(s);
	struct dt_sbuf ev = { 0 };
	uint64_t cost = 0, ns_all = 0;
	double bytes_all = 0;
	char t1[32], t3[32];

	if (!d->samples || peak <= 0 || !s->gpu_ns)
		return;
	for (int l = 0; l < DT_LIB_COUNT; l++)
		for (int m = 0; m < DT_OPF_COUNT; m++) {
			uint64_t ns = d->ns_by[l][m];
			double bytes = d->read_by[l][m] + d->write_by[l][m];
			if (m == DT_OPF_SYNC || m == DT_OPF_OTHER ||
			    ns * 100 < s->gpu_ns * LOW_BW_TIME_PCT)
				continue;
			double bw = bytes * 1e9 / (double)ns;
			if (bw * 100 >= peak * LOW_BW_PEAK_PCT)
				continue;
			uint64_t n = s->lib_count[l][m];
			/* the time it would take at the roof is saved */
			cost += (uint64_t)((double)ns * (1 - bw / peak));
			ns_all += ns;
			bytes_all += bytes;
			dt_sb_item(&ev, "\n",
				   "%s, %s: %s at %.1f GB/s, %.1f%% of the peak; "
				   "%" PRIu64 " %s, %s each on average",
				   dt_lib_name(l), dt_opfam_name(m),
				   dt_fmt_ns(ns, t1, sizeof(t1)), bw / 1e9,
				   100 * bw / peak, n,
				   l == DT_LIB_RUNTIME ? "copies and sets"
				   : l == DT_LIB_CUDNN ? "ops"
						       : "kernels",
				   dt_fmt_ns(n ? s->lib_ns[l][m] / n : 0, t3,
					     sizeof(t3)));
		}
	if (!ns_all) {
		free(ev.p);
		return;
	}
	dt_sb_item(&ev, "\n",
		   "measured by the GPU's DRAM counters (record --gpu-metrics), "
		   "%" PRIu64 " samples; the peak is %.0f GB/s",
		   d->samples, peak / 1e9);
	dt_fmt_ns(ns_all, t1, sizeof(t1));
	char *title = dt_xasprintf(
		"far below the bandwidth roof: %s (%.0f%% of GPU time) moved "
		"data at %.1f GB/s, %.1f%% of what the GPU's memory can; work this "
		"light does not fill the GPU (one token, small tensors, short "
		"kernels): more tokens or sequences per step, fused kernels or "
		"CUDA graphs move it closer to the roof",
		t1, 100.0 * (double)ns_all / (double)s->gpu_ns,
		bytes_all / (double)ns_all,
		100 * bytes_all * 1e9 / (double)ns_all / peak);
	add_finding(s, DT_FIND_LOW_BANDWIDTH, cost, false, title, ev.p);
}

/* A rank the others wait for: in a job whose ranks meet in collectives
 * (all-reduce, ...), the ranks that arrive first wait there, in the
 * communication kernels, for the last. One rank spending this share of
 * the longest trace's time less in them than every other rank does, with
 * the next-lowest closer to the others than to it, is that last rank.
 * Traces without communication kernels (a launcher, a data loader) are
 * no ranks of it. */
#define STRAGGLER_PCT 10
#define STRAGGLER_TOP 8 /* ranks listed in the evidence */

static void find_straggler(struct dt_summary *s)
{
	size_t lo = SIZE_MAX, ranks = 0;
	uint64_t span = 0, hi = 0, next = UINT64_MAX, waited = 0;
	struct dt_sbuf ev = { 0 };
	char t1[32], t2[32], r[64];

	/* each trace's steady state (the whole trace when not cut) */
	for (size_t i = 0; i < s->n_files; i++) {
		const struct dt_sum_file *f = &s->files[i];
		if (!f->steady.comm_ns)
			continue;
		ranks++;
		if (f->steady.span_ns > span)
			span = f->steady.span_ns;
		if (lo == SIZE_MAX ||
		    f->steady.comm_ns < s->files[lo].steady.comm_ns)
			lo = i;
		if (f->steady.comm_ns > hi)
			hi = f->steady.comm_ns;
	}
	if (ranks < 2 || !span)
		return;
	uint64_t least = s->files[lo].steady.comm_ns;
	for (size_t i = 0; i < s->n_files; i++)
		if (i != lo && s->files[i].steady.comm_ns) {
			waited += s->files[i].steady.comm_ns - least;
			if (s->files[i].steady.comm_ns < next)
				next = s->files[i].steady.comm_ns;
		}
	waited /= ranks - 1; /* what each other rank waited, on average */
	if (waited * 100 < span * STRAGGLER_PCT ||
	    (next - least) * 2 < hi - least)
		return;
	for (size_t i = 0, n = 0; i < s->n_files; i++) {
		const struct dt_sum_file *f = &s->files[i];
		if (!f->steady.comm_ns || n++ >= STRAGGLER_TOP)
			continue;
		dt_sb_item(&ev, "\n", "%s%s: %s in communication kernels, of "
			   "%s of GPU time%s%s",
			   f->rank ? "rank " : "", dt_rank_label(f, r, sizeof(r)),
			   dt_fmt_ns(f->steady.comm_ns, t1, sizeof(t1)),
			   dt_fmt_ns(f->steady.gpu_ns, t2, sizeof(t2)),
			   i == lo ? " (the straggler)" : "",
			   f->complete ? ""
				       : "; its trace is incomplete: what it "
					 "lacks is not counted");
	}
	if (ranks > STRAGGLER_TOP)
		dt_sb_item(&ev, "\n", "%zu more ranks", ranks - STRAGGLER_TOP);
	dt_fmt_ns(waited, t1, sizeof(t1));
	dt_fmt_ns(span, t2, sizeof(t2));
	char *title = dt_xasprintf(
		"straggler: %s%s keeps the others waiting; each other rank "
		"spent %s more in communication kernels than it did (%.0f%% of "
		"the %s %s): its steps take longer (more data or work on that "
		"rank, a slower GPU or host, its own pauses)",
		s->files[lo].rank ? "rank " : "",
		dt_rank_label(&s->files[lo], r, sizeof(r)), t1,
		100.0 * (double)waited / (double)span, t2,
		s->startup.traces ? "steady state" : "run");
	add_finding(s, DT_FIND_STRAGGLER, waited, false, title, ev.p);
}

static int by_cost(const void *a, const void *b)
{
	const struct dt_finding *x = a, *y = b;
	if (x->cost_ns != y->cost_ns)
		return x->cost_ns < y->cost_ns ? 1 : -1;
	return (int)x->type - (int)y->type;
}

void dt_summary_find(struct dt_summary *s)
{
	find_autotune(s);
	find_rebuilds(s);
	find_layout(s);
	find_fp32(s);
	find_low_roof(s);
	find_failed(s);
	find_copies(s);
	find_idle(s);
	find_low_bandwidth(s);
	find_straggler(s);
	dt_find_engine_choice(s);
	if (s->n_findings)
		qsort(s->findings, s->n_findings, sizeof(*s->findings),
		      by_cost);
}
