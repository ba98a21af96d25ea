/*
 * analyzer-diff.c - two runs compared: the whole program per step, and
 * problem by problem.
 *
 * Per step (dt-steps.h): the step time, the GPU time, and the GPU time of
 * each library, operation family and kernel launched outside cuDNN calls.
 * A change counts when it passes the relative threshold and an absolute
 * floor per step; a step time's is noise while the runs' steps overlap
 * (p10 to p90), and so is as much of a quantity's change as its
 * communication's (collectives wait for the other ranks: their time moves
 * with the step's).
 *
 * A problem is what an op computed: its function and the description of
 * its tensors, parameters or graph, with the tensors' uids left out (the
 * same graph built twice may number them differently). Per execution, the
 * GPU time of the engine configuration each run settled on is compared;
 * a change counts when it passes the threshold and, over the executions
 * of a step, the floor, and is called noise when each run's median lies
 * within the other's range of executions.
 *
 * Replays (dt-replayed.h), when both runs' traces have their results
 * beside them: per problem measured, the recorded engine's replayed time
 * and the best engine found, each run's; the recorded engine's time
 * compared as an op's is, noise being the larger spread of its two
 * replays' runs.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-util.h"
#include "dt-analyzer.h"
#include "dt-replayed.h"
#include "dt-steps.h"

const char *dt_verdict_key(enum dt_verdict v)
{
	static const char *const keys[] = {
		[DT_SAME] = "same",       [DT_NOISE] = "noise",
		[DT_SLOWER] = "slower",   [DT_FASTER] = "faster",
		[DT_ADDED] = "added",     [DT_REMOVED] = "removed",
		[DT_UNTIMED] = "untimed",
	};
	return (unsigned)v < sizeof(keys) / sizeof(keys[0]) ? keys[v] : "?";
}

/* The problem without its uids: "X=#101[8,16]" -> "X=[8,16]". */
static char *normalize(const char *key)
{
	char *out = malloc(strlen(key) + 1), *o = out;

	if (!out)
		return NULL;
	for (const char *p = key; *p;) {
		if (*p == '#' && p[1] >= '0' && p[1] <= '9') {
			p++;
			while (*p >= '0' && *p <= '9')
				p++;
			continue;
		}
		*o++ = *p++;
	}
	*o = 0;
	return out;
}

static bool same_str(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static void side_of(struct dt_diff_side *d, const struct dt_summary *s,
		    const struct dt_sum_problem *p)
{
	struct dt_rates r;
	const struct dt_sum_engine *e =
		p->n_engines ? &p->engines[p->last_choice] : NULL;
	const char *knobs = e ? e->knobs : NULL;
	int64_t workspace = e ? e->workspace : p->workspace;

	dt_problem_rates(s, p, &r);
	if (!d->present) {
		*d = (struct dt_diff_side){
			.present = true,
			.count = p->count,
			.timed = p->count - p->unsampled,
			.gpu_ns = p->gpu_ns,
			.median_ns = p->median_ns,
			.min_ns = p->min_ns,
			.max_ns = p->max_ns,
			.engine = p->last_engine,
			.knobs = knobs,
			.workspace = workspace,
			.flops_per_s = r.flops_per_s,
			.bytes_per_s = r.bytes_per_s,
		};
		return;
	}
	/* a second problem of the run with the same description: the one
	 * that ran more says the median and the engine */
	if (p->count > d->count) {
		d->median_ns = p->median_ns;
		d->engine = p->last_engine;
		d->knobs = knobs;
		d->flops_per_s = r.flops_per_s;
		d->bytes_per_s = r.bytes_per_s;
	}
	if (p->settled_count && (!d->min_ns || p->min_ns < d->min_ns))
		d->min_ns = p->min_ns;
	if (p->max_ns > d->max_ns)
		d->max_ns = p->max_ns;
	if (workspace > d->workspace)
		d->workspace = workspace;
	d->count += p->count;
	d->timed += p->count - p->unsampled;
	d->gpu_ns += p->gpu_ns;
}

/* Find or add the op of (api, normalized key). */
struct table {
	struct dt_diff *d;
	uint32_t *slot; /* op index + 1 */
	uint64_t *hash;
	size_t cap, cap_ops;
};

static struct dt_diff_op *op_of(struct table *t, const struct dt_sum_problem *p)
{
	char *key = normalize(p->key);
	if (!key)
		return NULL;
	uint64_t h =
		dt_hash(key, strlen(key), dt_hash(p->api, strlen(p->api), 9));
	size_t k = h & (t->cap - 1);

	for (; t->slot[k]; k = (k + 1) & (t->cap - 1)) {
		struct dt_diff_op *o = &t->d->ops[t->slot[k] - 1];
		if (t->hash[k] == h && !strcmp(o->key, key) &&
		    !strcmp(o->api, p->api)) {
			free(key);
			return o;
		}
	}
	if (t->d->n_ops == t->cap_ops) {
		size_t cap = t->cap_ops ? t->cap_ops * 2 : 64;
		struct dt_diff_op *v = realloc(t->d->ops, cap * sizeof(*v));
		if (!v) {
			free(key);
			return NULL;
		}
		t->d->ops = v;
		t->cap_ops = cap;
	}
	struct dt_diff_op *o = &t->d->ops[t->d->n_ops];
	memset(o, 0, sizeof(*o));
	o->key = key;
	o->api = p->api;
	o->brief = p->brief;
	o->kind = p->kind;
	t->slot[k] = (uint32_t)++t->d->n_ops;
	t->hash[k] = h;
	return o;
}

/* Steps of a run, start-up's included (ops are counted over the run). */
static double steps_of(const struct dt_summary *s)
{
	const struct dt_step_stats *st = s->steps;
	uint64_t n = st ? st->steps + st->startup_steps : 1;
	return n ? (double)n : 1.0;
}

static void judge(const struct dt_diff *d, struct dt_diff_op *o)
{
	const struct dt_diff_side *b = &o->base, *n = &o->next;

	if (!b->present || !n->present) {
		o->verdict = b->present ? DT_REMOVED : DT_ADDED;
		return;
	}
	o->engine_changed =
		b->engine != n->engine || !same_str(b->knobs, n->knobs);
	o->workspace_changed = b->workspace >= 0 && n->workspace >= 0 &&
			       b->workspace != n->workspace;
	if (!b->median_ns || !n->median_ns) {
		o->verdict = DT_UNTIMED;
		return;
	}
	o->delta_ns = (int64_t)n->median_ns - (int64_t)b->median_ns;
	o->change = (double)o->delta_ns / (double)b->median_ns;
	uint64_t mag = (uint64_t)(o->delta_ns < 0 ? -o->delta_ns : o->delta_ns);
	/* the floor is per step: the change over a step's executions */
	double per_step = fmax((double)b->count / steps_of(d->base),
			       (double)n->count / steps_of(d->next));
	if ((double)mag * per_step < (double)d->opts.min_ns ||
	    (o->change < 0 ? -o->change : o->change) < d->opts.threshold) {
		o->verdict = DT_SAME;
		return;
	}
	/* each median within the other run's executions: noise */
	if (n->median_ns >= b->min_ns && n->median_ns <= b->max_ns &&
	    b->median_ns >= n->min_ns && b->median_ns <= n->max_ns) {
		o->verdict = DT_NOISE;
		return;
	}
	o->verdict = o->delta_ns > 0 ? DT_SLOWER : DT_FASTER;
}

/* How much an op's difference weighs: its change per execution over its
 * executions, or all its GPU time when only one run has it. */
static uint64_t weight(const struct dt_diff_op *o)
{
	uint64_t n =
		o->base.count > o->next.count ? o->base.count : o->next.count;
	switch (o->verdict) {
	case DT_ADDED:
		return o->next.gpu_ns;
	case DT_REMOVED:
		return o->base.gpu_ns;
	default:
		return (uint64_t)(o->delta_ns < 0 ? -o->delta_ns
						  : o->delta_ns) *
		       n;
	}
}

static int by_weight(const void *a, const void *b)
{
	const struct dt_diff_op *x = a, *y = b;
	uint64_t wx = weight(x), wy = weight(y);

	if (wx != wy)
		return wx < wy ? 1 : -1;
	int c = strcmp(x->api, y->api);
	return c ? c : strcmp(x->key, y->key);
}

/* ------------------------------------------------- the whole program */

const char *dt_qty_key(enum dt_qty_kind k)
{
	static const char *const keys[] = {
		[DT_Q_STEP] = "step",       [DT_Q_GPU] = "gpu",
		[DT_Q_LIBRARY] = "library", [DT_Q_FAMILY] = "family",
		[DT_Q_KERNEL] = "kernel",
	};
	return (unsigned)k < sizeof(keys) / sizeof(keys[0]) ? keys[k] : "?";
}

static void qty_judge(const struct dt_diff *d, struct dt_diff_qty *q)
{
	double delta = q->next - q->base, mag = fabs(delta);

	q->verdict = DT_SAME;
	if (q->base <= 0 || q->next <= 0) {
		if (fmax(q->base, q->next) >= q->floor_ns)
			q->verdict = q->base > 0 ? DT_REMOVED : DT_ADDED;
		return;
	}
	q->change = delta / q->base;
	if (mag < q->floor_ns || fabs(q->change) < d->opts.threshold)
		return;
	/* a part of the GPU time: what its noise leaves must count alone */
	double rest = mag - q->noise_ns;
	bool noise = rest <= 0 ||
		     (q->kind != DT_Q_STEP &&
		      (rest < q->floor_ns || rest < d->opts.threshold * q->base));
	q->verdict = noise ? DT_NOISE : delta > 0 ? DT_SLOWER : DT_FASTER;
}

/* How far the step time must move to leave the steps' spread: slower
 * when the new run's p10 passes the base's p90, faster when its p90 falls
 * under the base's p10 (a host-bound program's steps vary that much from
 * run to run); never less than the histogram tells apart (6%). */
static double step_noise_ns(const struct dt_step_dist *b,
			    const struct dt_step_dist *n)
{
	double bm = (double)b->median_ns, nm = (double)n->median_ns;
	double w = nm > bm ? ((double)b->p90_ns - bm) + (nm - (double)n->p10_ns)
			   : (bm - (double)b->p10_ns) + ((double)n->p90_ns - nm);
	return fmax(w, 0.06 * fmax(bm, nm));
}

struct qtys {
	struct dt_diff *d;
	size_t cap;
	double floor_ns; /* for the parts of the GPU time */
	double comm_noise_ns; /* how far communication moves as noise */
};

static void qty_add(struct qtys *q, enum dt_qty_kind kind, const char *name,
		    double b, double n, double noise_ns, double floor_ns)
{
	struct dt_diff *d = q->d;
	if (b <= 0 && n <= 0)
		return;
	struct dt_diff_qty *v =
		dt_grow_array(d->qty, &q->cap, d->n_qty + 1, sizeof(*v));
	if (!v)
		return;
	d->qty = v;
	struct dt_diff_qty *x = &d->qty[d->n_qty++];
	*x = (struct dt_diff_qty){ .kind = kind,
				   .name = name,
				   .base = b,
				   .next = n,
				   .noise_ns = noise_ns,
				   .floor_ns = floor_ns };
	qty_judge(d, x);
	d->qty_slower += x->verdict == DT_SLOWER;
	d->qty_faster += x->verdict == DT_FASTER;
	d->qty_noise += x->verdict == DT_NOISE;
}

/* A collective's GPU time holds its wait for the other ranks, which moves
 * with their skew, from step to step as the step time does: of a
 * quantity's change, as much as its communication (cb, cn) moved, up to
 * the step time's spread, is noise. */
static double comm_noise(const struct qtys *q, double cb, double cn)
{
	return fmin(fabs(cn - cb), q->comm_noise_ns);
}

/* A part of the GPU time per step, cb and cn of it communication. */
static void qty_part(struct qtys *q, enum dt_qty_kind kind, const char *name,
		     double b, double n, double cb, double cn)
{
	qty_add(q, kind, name, b, n, comm_noise(q, cb, cn), q->floor_ns);
}

/* Library l's communication per step: its GPU time per step times the
 * share of its kernels' time that is collectives'. */
static double lib_comm(const struct dt_step_stats *s, int l)
{
	double comm = 0, all = 0;
	for (size_t i = 0; s->kernels_known && i < s->n_kernels; i++)
		if ((int)s->kernels[i].lib == l) {
			all += s->kernels[i].per_step_ns;
			if (s->kernels[i].fam == DT_OPF_COMM)
				comm += s->kernels[i].per_step_ns;
		}
	return all > 0 ? s->lib_ns[l] * comm / all : 0;
}

static int by_name(const void *a, const void *b)
{
	const struct dt_step_kernel *const *x = a, *const *y = b;
	return strcmp((*x)->name, (*y)->name);
}

static const struct dt_step_kernel **
kernels_by_name(const struct dt_step_stats *s)
{
	const struct dt_step_kernel **v = calloc(s->n_kernels + 1, sizeof(*v));
	for (size_t i = 0; v && i < s->n_kernels; i++)
		v[i] = &s->kernels[i];
	if (v)
		qsort(v, s->n_kernels, sizeof(*v), by_name);
	return v;
}

/* Kernels matched by name, both lists in name order. */
static void qty_kernels(struct qtys *q, const struct dt_step_stats *b,
			const struct dt_step_stats *n)
{
	const struct dt_step_kernel **x = kernels_by_name(b),
				    **y = kernels_by_name(n);
	size_t i = 0, j = 0;
	while (x && y && (i < b->n_kernels || j < n->n_kernels)) {
		int c = i == b->n_kernels   ? 1
			: j == n->n_kernels ? -1
					    : strcmp(x[i]->name, y[j]->name);
		const char *name = c <= 0 ? x[i]->name : y[j]->name;
		double kb = c <= 0 ? x[i]->per_step_ns : 0,
		       kn = c >= 0 ? y[j]->per_step_ns : 0;
		bool comm = (c <= 0 ? x[i] : y[j])->fam == DT_OPF_COMM;
		qty_part(q, DT_Q_KERNEL, name, kb, kn, comm ? kb : 0,
			 comm ? kn : 0);
		i += c <= 0;
		j += c >= 0;
	}
	free(x);
	free(y);
}

static int by_delta(const void *a, const void *b)
{
	const struct dt_diff_qty *x = a, *y = b;
	double dx = fabs(x->next - x->base), dy = fabs(y->next - y->base);
	if (x->kind <= DT_Q_GPU || y->kind <= DT_Q_GPU)
		return (int)x->kind - (int)y->kind;
	return dx < dy ? 1 : dx > dy ? -1 : strcmp(x->name, y->name);
}

/* Both runs' steps, quantity by quantity. */
static void compare_steps(struct dt_diff *d)
{
	const struct dt_step_stats *b = d->base->steps, *n = d->next->steps;
	/* sampled GPU activity: times only inside windows, per step none */
	if (!b || !n || b->found != n->found || d->base->sampling.one_in ||
	    d->next->sampling.one_in)
		return;
	/* GPU time per step is a mean over the steady state: the
	 * threshold and the floor judge it, it has no spread of its own */
	double step_noise = step_noise_ns(&b->time, &n->time),
	       cb = b->fam_ns[DT_OPF_COMM], cn = n->fam_ns[DT_OPF_COMM];
	struct qtys q = {
		.d = d,
		.floor_ns = fmax((double)d->opts.min_ns, 0.01 * b->gpu_ns),
		.comm_noise_ns = step_noise,
	};
	qty_add(&q, DT_Q_STEP, "step time", (double)b->time.median_ns,
		(double)n->time.median_ns, step_noise, (double)d->opts.min_ns);
	qty_add(&q, DT_Q_GPU, "GPU time per step", b->gpu_ns, n->gpu_ns,
		comm_noise(&q, cb, cn), (double)d->opts.min_ns);
	for (int l = 0; l < DT_LIB_COUNT; l++)
		qty_part(&q, DT_Q_LIBRARY, dt_lib_name(l), b->lib_ns[l],
			 n->lib_ns[l], lib_comm(b, l), lib_comm(n, l));
	for (int f = 0; f < DT_OPF_COUNT; f++)
		qty_part(&q, DT_Q_FAMILY, dt_opfam_name(f), b->fam_ns[f],
			 n->fam_ns[f], f == DT_OPF_COMM ? cb : 0,
			 f == DT_OPF_COMM ? cn : 0);
	if (b->kernels_known && n->kernels_known)
		qty_kernels(&q, b, n);
	if (d->n_qty)
		qsort(d->qty, d->n_qty, sizeof(*d->qty), by_delta);
}

/* ---------------------------------------------------------- replays */

static struct dt_diff_replay *replay_of(struct dt_diff *d, const char *key,
					size_t *cap)
{
	char *k = normalize(key);

	if (!k)
		return NULL;
	for (size_t i = 0; i < d->n_replays; i++)
		if (!strcmp(d->replays[i].key, k)) {
			free(k);
			return &d->replays[i];
		}
	struct dt_diff_replay *v =
		dt_grow_array(d->replays, cap, d->n_replays + 1, sizeof(*v));
	if (!v) {
		free(k);
		return NULL;
	}
	d->replays = v;
	v[d->n_replays].key = k; /* the rest zeroed as it grew */
	return &v[d->n_replays++];
}

/* A measured problem as one run's side; the first of a key (a rank of
 * the job) stands for the run. */
static void replay_side(struct dt_diff_replay_side *s,
			const struct dt_replayed_problem *p)
{
	const struct dt_replayed_cand *c =
		p->chosen >= 0 ? &p->cands[p->chosen] : NULL;
	const struct dt_replayed_cand *b =
		p->best >= 0 ? &p->cands[p->best] : NULL;

	if (s->present)
		return;
	*s = (struct dt_diff_replay_side){
		.present = true,
		.engine = c ? c->engine : -1,
		.knobs = c ? c->knobs : NULL,
		.median_ns = c ? c->median_ns : 0,
		.spread = c ? c->spread : 0,
		.best = b ? b->engine : -1,
		.best_knobs = b ? b->knobs : NULL,
		.best_ns = b ? b->median_ns : 0,
	};
}

static void replay_judge(const struct dt_diff *d, struct dt_diff_replay *r)
{
	const struct dt_diff_replay_side *b = &r->base, *n = &r->next;

	if (!b->present || !n->present) {
		r->verdict = b->present ? DT_REMOVED : DT_ADDED;
		return;
	}
	r->best_changed =
		b->best != n->best || !same_str(b->best_knobs, n->best_knobs);
	if (!b->median_ns || !n->median_ns) {
		r->verdict = DT_UNTIMED;
		return;
	}
	r->change = (double)n->median_ns / (double)b->median_ns - 1;
	double mag = fabs(r->change);
	r->verdict = mag < d->opts.threshold             ? DT_SAME
		     : mag <= fmax(b->spread, n->spread) ? DT_NOISE
		     : r->change > 0                     ? DT_SLOWER
							 : DT_FASTER;
}

/* The problems measured by the replays beside both runs' traces. */
static void compare_replays(struct dt_diff *d)
{
	size_t cap = 0;

	if (!d->base->n_replayed || !d->next->n_replayed)
		return;
	for (int run = 0; run < 2; run++) {
		const struct dt_summary *s = run ? d->next : d->base;
		for (size_t f = 0; f < s->n_replayed; f++)
			for (size_t i = 0; i < s->replayed[f]->n_problems;
			     i++) {
				const struct dt_replayed_problem *p =
					&s->replayed[f]->problems[i];
				struct dt_diff_replay *r;
				if (strcmp(p->status, "measured") ||
				    !(r = replay_of(d, p->problem, &cap)))
					continue;
				r->brief = r->brief ? r->brief : p->brief;
				r->legacy = p->legacy || p->gemm;
				replay_side(run ? &r->next : &r->base, p);
			}
	}
	for (size_t i = 0; i < d->n_replays; i++) {
		struct dt_diff_replay *r = &d->replays[i];
		replay_judge(d, r);
		d->replay_moves +=
			r->verdict == DT_SLOWER || r->verdict == DT_FASTER;
		d->best_changes += r->best_changed;
	}
}

struct dt_diff *dt_diff_new(const struct dt_summary *base,
			    const struct dt_summary *next,
			    const struct dt_diff_opts *opts)
{
	struct dt_diff *d = calloc(1, sizeof(*d));
	struct table t = { d, NULL, NULL, 0, 0 };
	size_t n = base->n_problems + next->n_problems;

	if (!d)
		return NULL;
	d->base = base;
	d->next = next;
	d->opts.threshold =
		opts && opts->threshold > 0 ? opts->threshold : 0.05;
	d->opts.min_ns = opts && opts->min_ns ? opts->min_ns : 10000;
	t.cap = 64;
	while (t.cap < 2 * n + 2)
		t.cap *= 2;
	t.slot = calloc(t.cap, sizeof(*t.slot));
	t.hash = calloc(t.cap, sizeof(*t.hash));
	if (!t.slot || !t.hash) {
		free(t.slot);
		free(t.hash);
		free(d);
		return NULL;
	}
	for (int run = 0; run < 2; run++) {
		const struct dt_summary *s = run ? next : base;
		for (size_t i = 0; i < s->n_problems; i++) {
			struct dt_diff_op *o = op_of(&t, &s->problems[i]);
			if (o)
				side_of(run ? &o->next : &o->base, s,
					&s->problems[i]);
		}
	}
	free(t.slot);
	free(t.hash);
	for (size_t i = 0; i < d->n_ops; i++) {
		struct dt_diff_op *o = &d->ops[i];
		judge(d, o);
		d->slower += o->verdict == DT_SLOWER;
		d->faster += o->verdict == DT_FASTER;
		d->noise += o->verdict == DT_NOISE;
		d->added += o->verdict == DT_ADDED;
		d->removed += o->verdict == DT_REMOVED;
		d->engine_changes += o->engine_changed;
		d->workspace_changes += o->workspace_changed;
	}
	if (d->n_ops)
		qsort(d->ops, d->n_ops, sizeof(*d->ops), by_weight);
	compare_steps(d);
	compare_replays(d);
	if (base->n_devices && next->n_devices)
		d->other_gpu = strcmp(base->devices[0].name,
				      next->devices[0].name) != 0;
	if (base->n_files && next->n_files)
		d->other_cudnn = !same_str(base->files[0].cudnn_version,
					   next->files[0].cudnn_version);
	return d;
}

void dt_diff_free(struct dt_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_ops; i++)
		free(d->ops[i].key);
	free(d->ops);
	free(d->qty);
	for (size_t i = 0; i < d->n_replays; i++)
		free(d->replays[i].key);
	free(d->replays);
	free(d);
}
