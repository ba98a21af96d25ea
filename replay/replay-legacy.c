/*
 * replay-legacy.c - a recorded legacy convolution (forward, backward data
 * or backward filter) made again on the GPU and its algorithms timed: its
 * tensor, filter and convolution descriptors set from what the trace kept
 * of the call (struct dt_cudnn_call), its data seeded (replay-data.c); the
 * recorded algorithm first, then every one cudnnGet*Algorithm_v7 offers
 * for it, each with the math type it names. Other legacy calls (pooling,
 * activations, softmax, batch norm) are replay-legacy-ops.c's, RNNs
 * replay-rnn.c's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-internal.h"

/* The three convolutions share one shape: exec(handle, alpha, d1, p1, d2,
 * p2, conv, algo, ws, ws_size, beta, d3, p3), get_v7(handle, d1, d2,
 * conv, d3, requested, &returned, perf), ws_size(handle, d1, d2, conv, d3,
 * algo, &size); their descriptors' names differ. */
static const struct conv_api {
	const char *exec, *get, *ws;
	const char *desc[3]; /* d1, d2, d3 as the call names them */
} convs[] = {
	{ "cudnnConvolutionForward",
	  "cudnnGetConvolutionForwardAlgorithm_v7",
	  "cudnnGetConvolutionForwardWorkspaceSize",
	  { "xDesc", "wDesc", "yDesc" } },
	{ "cudnnConvolutionBackwardData",
	  "cudnnGetConvolutionBackwardDataAlgorithm_v7",
	  "cudnnGetConvolutionBackwardDataWorkspaceSize",
	  { "wDesc", "dyDesc", "dxDesc" } },
	{ "cudnnConvolutionBackwardFilter",
	  "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
	  "cudnnGetConvolutionBackwardFilterWorkspaceSize",
	  { "xDesc", "dyDesc", "dwDesc" } },
};

/* cudnnConvolution*AlgoPerf_t: the three are laid out alike */
struct perf {
	int algo, status;
	float time;
	size_t memory;
	int determinism, math, reserved[3];
};

struct fns {
	int (*exec)(void *, const void *, void *, const void *, void *,
		    const void *, void *, int, void *, size_t, const void *,
		    void *, void *);
	int (*get)(void *, void *, void *, void *, void *, int, int *,
		   struct perf *);
	int (*ws)(void *, void *, void *, void *, void *, int, size_t *);
	struct tensor_fns tensor;
	int (*create_filter)(void **), (*create_conv)(void **);
	int (*destroy_filter)(void *), (*destroy_conv)(void *);
	int (*set_filter)(void *, int, int, int, const int *);
	int (*set_conv2d)(void *, int, int, int, int, int, int, int, int);
	int (*set_convnd)(void *, int, const int *, const int *, const int *,
			  int, int);
	int (*set_math)(void *, int);
	int (*set_groups)(void *, int);
};

bool legacy_tensor_fns(struct gpu *g, struct tensor_fns *f)
{
	return gpu_cudnn_fn(g, &f->create, "cudnnCreateTensorDescriptor") &&
	       gpu_cudnn_fn(g, &f->destroy, "cudnnDestroyTensorDescriptor") &&
	       gpu_cudnn_fn(g, &f->set, "cudnnSetTensorNdDescriptor");
}

int legacy_tensor(const struct tensor_fns *f, void **d, int dtype, int nb,
		  const int *dims, const int *strides)
{
	int rc = f->create(d);

	return rc ? rc : f->set(*d, dtype, nb, dims, strides);
}

static bool load(struct gpu *g, const struct conv_api *api, struct fns *f)
{
	return gpu_cudnn_fn(g, &f->exec, api->exec) &&
	       gpu_cudnn_fn(g, &f->get, api->get) &&
	       gpu_cudnn_fn(g, &f->ws, api->ws) &&
	       legacy_tensor_fns(g, &f->tensor) &&
	       gpu_cudnn_fn(g, &f->create_filter,
			    "cudnnCreateFilterDescriptor") &&
	       gpu_cudnn_fn(g, &f->create_conv,
			    "cudnnCreateConvolutionDescriptor") &&
	       gpu_cudnn_fn(g, &f->destroy_filter,
			    "cudnnDestroyFilterDescriptor") &&
	       gpu_cudnn_fn(g, &f->destroy_conv,
			    "cudnnDestroyConvolutionDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_filter, "cudnnSetFilterNdDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_conv2d,
			    "cudnnSetConvolution2dDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_convnd,
			    "cudnnSetConvolutionNdDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_math, "cudnnSetConvolutionMathType") &&
	       gpu_cudnn_fn(g, &f->set_groups, "cudnnSetConvolutionGroupCount");
}

/* The convolution function api is, NULL none. */
static const struct conv_api *conv_api_of(const char *api)
{
	for (size_t i = 0; i < sizeof(convs) / sizeof(convs[0]); i++)
		if (!strcmp(api, convs[i].exec))
			return &convs[i];
	return NULL;
}

const char *legacy_why_not(const struct dt_cudnn_call *c)
{
	if (c && (conv_api_of(c->api) || legacy_op_known(c->api) ||
		  rnn_known(c->api)))
		return NULL;
	return "legacy API call: convolutions, pooling, activations, "
	       "softmax, batch normalization and RNNs are rebuilt";
}

/* The call as made again, and what its runs need. */
struct remade {
	struct gpu *g;
	struct fns f;
	const struct dt_cudnn_call *call;
	void *d[3], *conv;
	bool filter[3]; /* d[i] is a filter descriptor */
	struct data data;
	int algo;
	uint64_t ws;
	size_t ws_bytes;
	const void *alpha, *beta;
	int status;
};

static int64_t field(const struct dt_cudnn_arg *a, const char *name,
		     int64_t def)
{
	const struct dt_cudnn_field *f = dt_cudnn_field_find(a, name);

	return f ? f->v[0] : def;
}

/* n ints of a field's array into v; false when it has fewer. */
static bool field_ints(const struct dt_cudnn_arg *a, const char *name, int *v,
		       uint32_t n)
{
	const struct dt_cudnn_field *f = dt_cudnn_field_find(a, name);

	if (!f || f->code != 'a' || f->count < n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		v[i] = (int)f->v[i];
	return true;
}

/* A tensor or filter descriptor set as the call's was, its data added. */
static bool make_desc(struct remade *r, int i, const struct dt_cudnn_arg *a,
		      char *why, size_t whylen)
{
	const struct dt_tensor *t = a ? a->t : NULL;
	int dims[DT_MAX_DIMS], strides[DT_MAX_DIMS];
	size_t span = 1;

	if (!t || t->nb < 1 || t->nb > DT_MAX_DIMS) {
		snprintf(why, whylen, "%s: not in the trace",
			 a ? "a descriptor's shape" : "a descriptor");
		return false;
	}
	r->filter[i] =
		a->kind && a->kind_len == 6 && !memcmp(a->kind, "Filter", 6);
	for (int k = 0; k < t->nb; k++) {
		dims[k] = (int)t->dims[k];
		strides[k] = (int)t->strides[k];
		/* a filter's elements are packed, whatever its layout */
		span = r->filter[i] ? span * (size_t)dims[k]
				    : span + (size_t)(dims[k] - 1) *
						      (size_t)strides[k];
	}
	int rc = r->filter[i]
			 ? r->f.create_filter(&r->d[i]) ||
				   r->f.set_filter(r->d[i], (int)t->dtype,
						   (int)field(a, "format", 0),
						   t->nb, dims)
			 : legacy_tensor(&r->f.tensor, &r->d[i], (int)t->dtype,
					 t->nb, dims, strides);
	if (rc) {
		snprintf(why, whylen, "%.*s cannot be set again",
			 (int)a->name_len, a->name);
		return false;
	}
	return data_add(&r->data, i, t->dtype, span, false, why, whylen);
}

static bool make_conv(struct remade *r, const struct dt_cudnn_arg *a, char *why,
		      size_t whylen)
{
	int n = (int)field(a, "arrayLength", 0), pad[DT_MAX_DIMS],
	    stride[DT_MAX_DIMS], dil[DT_MAX_DIMS];
	int rc = !a || r->f.create_conv(&r->conv);

	if (!rc && n > 0 && n <= DT_MAX_DIMS)
		rc = !field_ints(a, "padA", pad, (uint32_t)n) ||
		     !field_ints(a, "filterStrideA", stride, (uint32_t)n) ||
		     !field_ints(a, "dilationA", dil, (uint32_t)n) ||
		     r->f.set_convnd(r->conv, n, pad, stride, dil,
				     (int)field(a, "mode", 0),
				     (int)field(a, "computeType", 0));
	else if (!rc)
		rc = r->f.set_conv2d(
			r->conv, (int)field(a, "pad_h", 0),
			(int)field(a, "pad_w", 0), (int)field(a, "u", 1),
			(int)field(a, "v", 1), (int)field(a, "dilation_h", 1),
			(int)field(a, "dilation_w", 1),
			(int)field(a, "mode", 0),
			(int)field(a, "computeType", 0));
	if (!rc)
		rc = r->f.set_groups(r->conv, (int)field(a, "groupCount", 1));
	if (rc)
		snprintf(why, whylen,
			 "the convolution descriptor cannot be "
			 "set again from the trace");
	return !rc;
}

static bool run_call(void *arg)
{
	struct remade *r = arg;
	int rc = r->f.exec(r->g->handle, r->alpha, r->d[0],
			   (void *)(uintptr_t)r->data.bufs[0].dev, r->d[1],
			   (void *)(uintptr_t)r->data.bufs[1].dev, r->conv,
			   r->algo, (void *)(uintptr_t)r->ws, r->ws_bytes,
			   r->beta, r->d[2],
			   (void *)(uintptr_t)r->data.bufs[2].dev);

	if (rc)
		r->status = rc;
	return !rc;
}

/* Time algorithm algo with math type math as candidate c, one of left
 * still to time within bud, in its share of it. */
static void measure(struct remade *r, int algo, int math, struct cand *c,
		    const struct dt_replay_opts *opts, struct budget *bud,
		    size_t left, const uint8_t *ref, uint8_t **take)
{
	size_t ws = 0;
	char err[160];
	int rc;

	c->error = -1;
	c->agrees = -1;
	c->workspace = -1;
	if (!budget_allows(bud, 0)) {
		budget_skip(c);
		return;
	}
	r->algo = algo;
	r->status = 0;
	if ((rc = r->f.set_math(r->conv, math)) ||
	    (rc = r->f.ws(r->g->handle, r->d[0], r->d[1], r->conv, r->d[2],
			  algo, &ws))) {
		snprintf(c->status, sizeof(c->status), "refused: %s",
			 gpu_cudnn_error(r->g, rc, err, sizeof(err)));
		return;
	}
	c->workspace = (int64_t)ws;
	r->ws_bytes = ws;
	r->ws = ws ? gpu_alloc(r->g, ws) : 0;
	if (ws && !r->ws) {
		snprintf(c->status, sizeof(c->status),
			 "its workspace (%zu bytes) is more than replay may "
			 "take",
			 ws);
		return;
	}
	data_time(&r->data, run_call, r, &r->status, opts,
		  budget_share(bud->until, left), c, ref, take);
	gpu_free(r->g, r->ws, ws);
	r->ws = 0;
}

static void math_words(int math, char *buf, size_t size)
{
	dt_enum_short("cudnnMathType_t", math, "CUDNN_", buf, size);
}

static void free_remade(struct remade *r)
{
	for (int i = 0; i < 3; i++)
		if (r->d[i])
			(r->filter[i] ? r->f.destroy_filter
				      : r->f.tensor.destroy)(r->d[i]);
	if (r->conv)
		r->f.destroy_conv(r->conv);
	data_free(&r->data);
}

static bool remake(struct remade *r, const struct conv_api *api, char *why,
		   size_t whylen)
{
	const struct dt_cudnn_arg *alpha = dt_cudnn_arg_find(r->call, "alpha"),
				  *beta = dt_cudnn_arg_find(r->call, "beta");

	if (!load(r->g, api, &r->f)) {
		snprintf(why, whylen, "this cuDNN lacks %s", api->exec);
		return false;
	}
	if (!alpha || !beta || !alpha->width || !beta->width) {
		snprintf(why, whylen,
			 "its alpha and beta are not in the trace");
		return false;
	}
	r->alpha = alpha->host;
	r->beta = beta->host;
	r->data.g = r->g;
	for (int i = 0; i < 3; i++)
		if (!make_desc(r, i, dt_cudnn_arg_find(r->call, api->desc[i]),
			       why, whylen))
			return false;
	return make_conv(r, dt_cudnn_arg_find(r->call, "convDesc"), why,
			 whylen);
}

int legacy_measure(struct gpu *g, const struct problem *p,
		   const struct dt_replay_opts *opts, struct budget *b,
		   struct cand *c, size_t *n, char *why, size_t whylen)
{
	struct remade r = { .g = g, .call = p->call };
	const struct conv_api *api = conv_api_of(p->call->api);
	uint8_t *ref = NULL;

	*n = 0;
	if (!api && legacy_op_known(p->call->api))
		return legacy_op_measure(g, p, opts, b, c, n, why, whylen);
	if (!api && rnn_known(p->call->api))
		return rnn_measure(g, p, opts, b, c, n, why, whylen);
	if (!api || !remake(&r, api, why, whylen)) {
		if (!api)
			snprintf(why, whylen, "not a convolution");
		free_remade(&r);
		return -1;
	}
	const struct dt_cudnn_arg *conv =
		dt_cudnn_arg_find(p->call, "convDesc");
	int math = (int)field(conv, "mathType", 0);
	struct perf perf[CANDS_MAX];
	int got = 0;
	/* the recorded algorithm, with the recorded math type, first, in
	 * up to half of the problem's share (all of it alone: a fusion
	 * what-if's head), before cuDNN is asked for the others (as
	 * replay-graph.c's) */
	struct cand *rec = &c[(*n)++];
	memset(rec, 0, sizeof(*rec));
	rec->engine = p->engine;
	rec->source = "recorded";
	math_words(math, rec->knobs, sizeof(rec->knobs));
	double t = dt_replay_now_s();
	measure(&r, (int)p->engine, math, rec, opts, b, p->alone ? 1 : 2, NULL,
		&ref);
	budget_recorded(b, rec);
	progress_cand(opts, 1, p->alone ? 1 : 0, rec, true,
		      dt_replay_now_s() - t);
	/* a fusion what-if's head: its recorded algorithm alone */
	if (p->alone || r.f.get(g->handle, r.d[0], r.d[1], r.conv, r.d[2],
				CANDS_MAX, &got, perf))
		got = 0;
	size_t total = (size_t)got + 1;
	for (int i = 0; i < got && *n < CANDS_MAX; i++) {
		struct cand *x = &c[*n];
		if (perf[i].status)
			continue;
		memset(x, 0, sizeof(*x));
		x->engine = perf[i].algo;
		x->source = "heuristic";
		math_words(perf[i].math, x->knobs, sizeof(x->knobs));
		bool dup = false;
		for (size_t k = 0; k < *n; k++)
			dup |= c[k].engine == x->engine &&
			       !strcmp(c[k].knobs, x->knobs);
		if (dup)
			continue;
		(*n)++;
		t = dt_replay_now_s();
		measure(&r, perf[i].algo, perf[i].math, x, opts, b,
			(size_t)(got - i), ref,
			ref ? NULL : &ref); /* as replay-graph.c's */
		progress_cand(opts, *n, total, x, true, dt_replay_now_s() - t);
	}
	free(ref);
	free_remade(&r);
	return 0;
}

int legacy_run(struct gpu *g, const struct problem *p, struct tensor_io *io,
	       size_t n_io, char *why, size_t whylen)
{
	struct remade r = { .g = g, .call = p->call };
	const struct conv_api *api = conv_api_of(p->call->api);
	size_t ws = 0;
	int rc = -1;

	if (!api)
		snprintf(why, whylen, "not a convolution");
	else if (remake(&r, api, why, whylen)) {
		r.algo = (int)p->engine;
		if (r.f.set_math(
			    r.conv,
			    (int)field(dt_cudnn_arg_find(p->call, "convDesc"),
				       "mathType", 0)) ||
		    r.f.ws(g->handle, r.d[0], r.d[1], r.conv, r.d[2], r.algo,
			   &ws))
			snprintf(why, whylen,
				 "cuDNN refused its recorded algorithm");
		else if (data_scratch(g, &r.ws, ws, "workspace", why, whylen)) {
			r.ws_bytes = ws;
			if (data_run_io(&r.data, run_call, &r, &r.status, io,
					n_io, why, whylen))
				rc = 0;
			gpu_free(g, r.ws, ws);
		}
	}
	free_remade(&r);
	return rc;
}
