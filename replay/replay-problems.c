/*
 * replay-problems.c - the problems a trace ran, as replay needs them: each
 * distinct problem once, with its executions, the engine and knobs the
 * program ran it with last, that engine's GPU times, and what its
 * decoder kept to build it again (or why there is nothing to build). Read
 * from the session's ops, never from text; nothing here touches a GPU.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-internal.h"

struct reader {
	struct problems *ps;
	uint64_t op; /* the op asked for, 0 none */
	size_t last; /* the problem of the op before, looked at first */
};

static struct problem *find(struct reader *r, const char *key)
{
	struct problems *ps = r->ps;

	if (r->last < ps->n && !strcmp(ps->v[r->last].key, key))
		return &ps->v[r->last];
	for (size_t i = 0; i < ps->n; i++)
		if (!strcmp(ps->v[i].key, key)) {
			r->last = i;
			return &ps->v[i];
		}
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 64;
		struct problem *v = realloc(ps->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		ps->v = v;
		ps->cap = cap;
	}
	struct problem *p = &ps->v[ps->n];
	memset(p, 0, sizeof(*p));
	p->key = strdup(key);
	if (!p->key)
		return NULL;
	r->last = ps->n++;
	p->engine = -2; /* no execution seen */
	return p;
}

/* Why an op's problem cannot be built again, or NULL when it can. */
static const char *why_not(const struct dt_op *op)
{
	const void *build = op->recipe ? op->recipe->build : NULL;
	const struct dt_cudnn_graph *g = build;

	if (gemm_library(op->library))
		return gemm_why_not(build);
	if (!op->library || strcmp(op->library, "cudnn"))
		return "not a cuDNN, cuBLAS or cuBLASLt operation: replay "
		       "rebuilds theirs";
	if (!op->plan)
		return build ? legacy_why_not(build)
			     : "the trace does not hold the call's arguments";
	if (!g)
		return "the trace holds no graph for its plan (built before "
		       "recording, or restored from JSON this build cannot "
		       "read)";
	if (!g->complete)
		return "the trace lacks a descriptor its graph points to";
	if (op->engine < 0)
		return "the engine the program ran is not in the trace";
	return NULL;
}

static void keep_engine(struct problem *p, const struct dt_op *op)
{
	free(p->knobs);
	free(p->knob_kv);
	p->knobs = op->knobs ? strdup(op->knobs) : NULL;
	p->engine = op->engine;
	free(p->api); /* a search's problem is run by another function */
	p->api = strdup(op->api);
	p->workspace = op->workspace;
	p->n_times = 0; /* the times of the engine it ran last */
	p->n_knob_kv = 0;
	p->knob_kv = NULL;
	if (!op->recipe || !op->recipe->n_knobs)
		return;
	p->knob_kv = calloc(op->recipe->n_knobs, sizeof(*p->knob_kv));
	for (uint32_t i = 0; p->knob_kv && i < op->recipe->n_knobs; i++)
		p->knob_kv[p->n_knob_kv++] = op->recipe->knobs[i];
}

/* The span is shorter where kernels ran side by side on other streams:
 * eng1 of a 3x3 convolution runs four of its nine so. Replay's runs of
 * the recorded engine are timed by this too (gpu_time_kernels), so that
 * calibration holds like against like. */
uint64_t kernels_ns(uint64_t sum_ns, uint64_t first, uint64_t last)
{
	uint64_t span = last > first ? last - first : 0;

	return span && span < sum_ns ? span : sum_ns;
}

static void on_op(void *arg, const struct dt_op *op)
{
	struct reader *r = arg;

	/* set-up work (a handle made, dropout states) computes nothing:
	 * there is no problem to build again */
	if (!op->problem || op->origin == DT_OP_CAPTURED || op->status ||
	    op->cost.kind == DT_KIND_SETUP)
		return;
	struct problem *p = find(r, op->problem);
	if (!p)
		return;
	if (!p->executions) {
		p->first_seq = op->seq;
		p->brief = op->brief ? strdup(op->brief) : NULL;
		p->kind = op->cost.kind;
		/* a GEMM has no plan, and is no legacy cuDNN call */
		p->legacy = !op->plan && !gemm_library(op->library);
	}
	p->executions++;
	p->asked |= r->op && op->seq == r->op;
	p->gpu_ns += op->gpu_ns;
	if (p->engine != op->engine ||
	    (p->knobs ? !op->knobs || strcmp(p->knobs, op->knobs)
		      : op->knobs != NULL))
		keep_engine(p, op);
	p->why = why_not(op);
	/* a GEMM's build even when it cannot be built (why says so): its
	 * chains are told apart by it */
	const void *build = op->recipe ? op->recipe->build : NULL;
	bool blas = gemm_library(op->library);
	p->gemm = blas ? build : NULL;
	p->graph = !blas && !p->why && op->plan ? build : NULL;
	p->call = !blas && !p->why && !op->plan ? build : NULL;
	if (op->recipe) /* the op's own, its arrays the session's */
		p->recipe = *op->recipe;
	p->tensors = op->tensors;
	p->n_tensors = op->n_tensors;
	if (!op->kernels || op->unsampled)
		return;
	if (p->n_times == p->cap_times) {
		size_t cap = p->cap_times ? p->cap_times * 2 : 16;
		uint64_t *v = realloc(p->times, cap * sizeof(*v));
		if (!v)
			return;
		p->times = v;
		p->cap_times = cap;
	}
	p->times[p->n_times++] =
		kernels_ns(op->gpu_ns, op->gpu_start, op->gpu_end);
}

static void on_device(void *arg, const struct dt_device *d)
{
	struct reader *r = arg;

	if (!r->ps->gpu[0])
		snprintf(r->ps->gpu, sizeof(r->ps->gpu), "%s", d->name);
}

static int by_gpu_time(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of its recorded engine's executions' times, once they are
 * all in (sorted in place), 0 none. */
static void set_recorded(struct problem *p)
{
	if (!p->n_times)
		return;
	qsort(p->times, p->n_times, sizeof(*p->times), cmp_u64);
	p->recorded_ns = p->times[p->n_times / 2];
}

int problems_read(const char *path, uint64_t op, struct problems *ps, char *err,
		  size_t errlen)
{
	struct dt_session_opts so = { 0 };
	struct reader r = { ps, op, 0 };
	struct dt_consumer c = { .arg = &r, .op = on_op, .device = on_device };

	memset(ps, 0, sizeof(*ps));
	ps->ss = dt_session_open(path, &so, NULL, err, errlen);
	if (!ps->ss)
		return -1;
	dt_session_add(ps->ss, &c);
	dt_session_run(ps->ss);
	for (size_t i = 0; i < ps->n; i++)
		set_recorded(&ps->v[i]);
	if (ps->n)
		qsort(ps->v, ps->n, sizeof(*ps->v), by_gpu_time);
	return 0;
}

const struct problem *problems_find(const struct problems *ps, const char *key)
{
	for (size_t i = 0; key && i < ps->n; i++)
		if (!strcmp(ps->v[i].key, key))
			return &ps->v[i];
	return NULL;
}

void problems_free(struct problems *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->v[i].key);
		free(ps->v[i].brief);
		free(ps->v[i].api);
		free(ps->v[i].knobs);
		free(ps->v[i].knob_kv);
		free(ps->v[i].times);
	}
	free(ps->v);
	/* the graphs were the session's */
	if (ps->ss)
		dt_session_close(ps->ss);
	memset(ps, 0, sizeof(*ps));
}
