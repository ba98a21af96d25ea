/*
 * dtt-decoder.c - the decoder of the test library dtt (dtt.h), linked
 * into the tests' own dnntrace by the build's table of decoders: a
 * library's decoder added with no change to the analyzer.
 *
 * dttScale is an op: a pointwise scale of n elements by alpha, its
 * problem the pair with the data type, its stream the one dttSetStream
 * gave its handle, and its workspace what dttGetWorkspaceSize said for
 * its n. It is a test's decoder: small tables, searched in full.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-decoder.h"

#define DTT_HANDLES 16 /* handles whose stream is kept */
#define DTT_SIZES   16 /* workspace sizes kept, by n */

/* One problem: every op of it points to these. */
struct dtt_problem {
	struct dtt_problem *next;
	int64_t n, dtype;
	double alpha;
	char *key; /* the problem, as ops show it */
	struct dt_recipe_node node;
	struct dt_recipe_param params[2];
};

struct dtt_model {
	struct dt_model *core;
	struct dtt_problem *problems;
	struct {
		uint64_t handle, stream;
	} streams[DTT_HANDLES];
	struct {
		int64_t n, bytes;
	} sizes[DTT_SIZES];
	unsigned next_stream, next_size; /* the slots written next when
					    full: the oldest */
};

/* dttScale's problem: n elements of its data type (dtt.h: float, the
 * one it has; its pointers are recorded untyped) scaled by alpha. */
static struct dtt_problem *problem_of(struct dtt_model *m, int64_t n,
				      double alpha)
{
	const int64_t dtype = DT_DTYPE_FLOAT;
	struct dtt_problem *p;
	char key[128];

	for (p = m->problems; p; p = p->next)
		if (p->n == n && !memcmp(&p->alpha, &alpha, sizeof(alpha)))
			return p;
	snprintf(key, sizeof(key), "scale n=%lld alpha=%g float", (long long)n,
		 alpha);
	p = calloc(1, sizeof(*p));
	if (!p || !(p->key = strdup(key))) {
		free(p);
		return NULL;
	}
	p->n = n;
	p->dtype = dtype;
	p->alpha = alpha;
	p->node = (struct dt_recipe_node){ .kind = DT_KIND_POINTWISE,
					   .name = "scale" };
	p->params[0] = (struct dt_recipe_param){ "n", (double)n };
	p->params[1] = (struct dt_recipe_param){ "alpha", alpha };
	p->next = m->problems;
	m->problems = p;
	return p;
}

static uint64_t stream_of(const struct dtt_model *m, uint64_t handle)
{
	for (int i = 0; i < DTT_HANDLES; i++)
		if (m->streams[i].handle == handle)
			return m->streams[i].stream;
	return 0;
}

static void set_stream(struct dtt_model *m, uint64_t handle, uint64_t stream)
{
	int i = 0;

	while (i < DTT_HANDLES && m->streams[i].handle != handle)
		i++;
	if (i == DTT_HANDLES)
		i = (int)(m->next_stream++ % DTT_HANDLES);
	m->streams[i].handle = handle;
	m->streams[i].stream = stream;
}

static int64_t size_of(const struct dtt_model *m, int64_t n)
{
	for (int i = 0; i < DTT_SIZES; i++)
		if (m->sizes[i].bytes && m->sizes[i].n == n)
			return m->sizes[i].bytes;
	return -1;
}

static void set_size(struct dtt_model *m, int64_t n, int64_t bytes)
{
	int i = 0;

	while (i < DTT_SIZES && m->sizes[i].bytes && m->sizes[i].n != n)
		i++;
	if (i == DTT_SIZES)
		i = (int)(m->next_size++ % DTT_SIZES);
	m->sizes[i].n = n;
	m->sizes[i].bytes = bytes;
}

static void scale(struct dtt_model *m, const struct dt_rec_api_call *c,
		  const struct dt_api_def *api, const struct dt_arg *args,
		  int n)
{
	const struct dt_arg *h = dt_arg_named(args, n, "handle"),
			    *count = dt_arg_named(args, n, "n"),
			    *alpha = dt_arg_named(args, n, "alpha");
	struct dtt_problem *pb;
	struct pending *p;

	if (!count || !alpha)
		return;
	pb = problem_of(m, count->i, dt_hostscalar_guess(alpha));
	if (!pb || !(p = m_op_new(m->core, c, api->name, pb->key)))
		return;
	p->recipe = (struct dt_recipe){ .nodes = &pb->node,
					.n_nodes = 1,
					.params = pb->params,
					.n_params = 2 };
	p->op.stream = h ? stream_of(m, h->u) : 0;
	p->op.workspace = size_of(m, pb->n);
	p->op.cost.kind = DT_KIND_POINTWISE;
	p->op.cost.dtype = pb->dtype;
	if (pb->n > 0) { /* one multiply an element; x read, y written */
		p->op.cost.flops = (double)pb->n;
		p->op.cost.bytes = 2 * (uint64_t)pb->n * sizeof(float);
	}
}

static void *dtt_create(struct dt_model *core, const struct dt_file_info *fi)
{
	struct dtt_model *m = calloc(1, sizeof(*m));

	(void)fi;
	if (m)
		m->core = core;
	return m;
}

static void dtt_destroy(void *state)
{
	struct dtt_model *m = state;

	while (m->problems) {
		struct dtt_problem *p = m->problems;
		m->problems = p->next;
		free(p->key);
		free(p);
	}
	free(m);
}

static void dtt_call(void *state, const struct dt_rec_api_call *c,
		     const struct dt_api_def *api, struct dt_arg *args, int n)
{
	struct dtt_model *m = state;
	const struct dt_arg *a, *b;

	if (c->status)
		return;
	if (!strcmp(api->name, "dttScale")) {
		scale(m, c, api, args, n);
	} else if (!strcmp(api->name, "dttSetStream")) {
		if ((a = dt_arg_named(args, n, "handle")) &&
		    (b = dt_arg_named(args, n, "stream")))
			set_stream(m, a->u, b->u);
	} else if (!strcmp(api->name, "dttGetWorkspaceSize")) {
		if ((a = dt_arg_named(args, n, "n")) &&
		    (b = dt_arg_named(args, n, "size")))
			set_size(m, a->i, (int64_t)b->u);
	}
}

const struct dt_decoder dt_decoder_dtt = {
	.library = "dtt",
	.create = dtt_create,
	.destroy = dtt_destroy,
	.call = dtt_call,
};
