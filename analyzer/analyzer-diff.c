/*
 * analyzer-diff.c - two runs compared, problem by problem.
 *
 * A problem is what an op computed: its function and the description of
 * its tensors, parameters or graph, with the tensors' uids left out (the
 * same graph built twice may number them differently). Per execution, the
 * GPU time of the engine configuration each run settled on is compared;
 * a change counts when it passes both thresholds, and is called noise when
 * each run's median lies within the other's range of executions.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-util.h"
#include "dt-analyzer.h"

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
	if (mag < d->opts.min_ns ||
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
	free(d);
}
