/*
 * replay-rnn.c - a recorded RNN call (cudnnRNNForward,
 * cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8) made again on the
 * GPU and timed. Its RNN descriptor is set as cudnnSetRNNDescriptor_v8
 * was given it, with a dropout descriptor of the recorded probability and
 * seed (and states, when it drops anything); its RNN data descriptors (x,
 * y) and h and c tensors as the program set them (struct dt_cudnn_call),
 * the sequence lengths on the device as well; the weight space, workspace
 * and reserve space as large as cuDNN says for that descriptor and mode.
 * Inputs, outputs and weights get seeded data (replay-data.c). A backward
 * pass reads what a forward in training mode left in the reserve space
 * (and the weights' gradient, what the data's left there): those run once
 * first, untimed. An RNN has no algorithm to choose beside the one its
 * descriptor names: the recorded call is the one candidate. Other legacy
 * calls are replay-legacy.c's and replay-legacy-ops.c's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-internal.h"

enum rnn_api { RNN_FWD, RNN_BWD_DATA, RNN_BWD_WEIGHTS };

static const char *const apis[] = {
	[RNN_FWD] = "cudnnRNNForward",
	[RNN_BWD_DATA] = "cudnnRNNBackwardData_v8",
	[RNN_BWD_WEIGHTS] = "cudnnRNNBackwardWeights_v8",
};

/* cuDNN's prototypes, descriptors as void * (no cuDNN header here). */
struct rnn_fns {
	int (*fwd)(void *, void *, int, const void *, void *, const void *,
		   void *, void *, void *, const void *, void *, void *,
		   const void *, void *, size_t, const void *, size_t, void *,
		   size_t, void *);
	int (*bwd_data)(void *, void *, const void *, void *, const void *,
			const void *, void *, void *, void *, const void *,
			const void *, void *, void *, const void *,
			const void *, void *, size_t, const void *, size_t,
			void *, size_t, void *);
	int (*bwd_weights)(void *, void *, int, const void *, void *,
			   const void *, void *, const void *, void *,
			   const void *, size_t, void *, size_t, void *, size_t,
			   void *);
	int (*create_rnn)(void **), (*destroy_rnn)(void *);
	int (*set_rnn)(void *, int, int, int, int, int, int, int, int, int, int,
		       int, int, void *, unsigned);
	int (*create_data)(void **), (*destroy_data)(void *);
	int (*set_data)(void *, int, int, int, int, int, const int *, void *);
	int (*create_dropout)(void **), (*destroy_dropout)(void *);
	int (*set_dropout)(void *, void *, float, void *, size_t,
			   unsigned long long);
	int (*dropout_states)(void *, size_t *);
	struct tensor_fns tensor;
	int (*weight_space)(void *, void *, size_t *);
	int (*temp_space)(void *, void *, int, void *, size_t *, size_t *);
};

static bool load(struct gpu *g, struct rnn_fns *f)
{
	return gpu_cudnn_fn(g, &f->fwd, apis[RNN_FWD]) &&
	       gpu_cudnn_fn(g, &f->bwd_data, apis[RNN_BWD_DATA]) &&
	       gpu_cudnn_fn(g, &f->bwd_weights, apis[RNN_BWD_WEIGHTS]) &&
	       gpu_cudnn_fn(g, &f->create_rnn, "cudnnCreateRNNDescriptor") &&
	       gpu_cudnn_fn(g, &f->destroy_rnn, "cudnnDestroyRNNDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_rnn, "cudnnSetRNNDescriptor_v8") &&
	       gpu_cudnn_fn(g, &f->create_data,
			    "cudnnCreateRNNDataDescriptor") &&
	       gpu_cudnn_fn(g, &f->destroy_data,
			    "cudnnDestroyRNNDataDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_data, "cudnnSetRNNDataDescriptor") &&
	       gpu_cudnn_fn(g, &f->create_dropout,
			    "cudnnCreateDropoutDescriptor") &&
	       gpu_cudnn_fn(g, &f->destroy_dropout,
			    "cudnnDestroyDropoutDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_dropout, "cudnnSetDropoutDescriptor") &&
	       gpu_cudnn_fn(g, &f->dropout_states,
			    "cudnnDropoutGetStatesSize") &&
	       legacy_tensor_fns(g, &f->tensor) &&
	       gpu_cudnn_fn(g, &f->weight_space,
			    "cudnnGetRNNWeightSpaceSize") &&
	       gpu_cudnn_fn(g, &f->temp_space, "cudnnGetRNNTempSpaceSizes");
}

/* The buffers of data, in this order: sequence lengths, x, y, their
 * gradients, h and c in and out and their gradients, the weights and
 * their gradient. */
enum {
	B_SEQ,
	B_X,
	B_Y,
	B_DX,
	B_DY,
	B_HX,
	B_HY,
	B_DHX,
	B_DHY,
	B_CX,
	B_CY,
	B_DCX,
	B_DCY,
	B_W,
	B_DW,
	B_COUNT
};

/* The call as made again. */
struct rnn {
	struct gpu *g;
	const struct dt_cudnn_call *call;
	enum rnn_api api;
	struct rnn_fns f;
	void *rnn, *dropout, *x, *y, *h, *c; /* descriptors; c NULL none */
	struct data data;
	int at[B_COUNT]; /* each buffer's index in data, -1 none */
	uint64_t states, ws, reserve;
	size_t states_bytes, ws_bytes, reserve_bytes, w_bytes;
	int fwd_mode; /* the recorded forward's, or training */
	int status;
};

/* ---------------------------------------------------- from the trace */

static int64_t enum_arg(const struct rnn *r, const char *name, int64_t def)
{
	const struct dt_cudnn_arg *a = dt_cudnn_arg_find(r->call, name);

	return a ? a->i : def;
}

static void *mem(uint64_t p)
{
	return (void *)(uintptr_t)p;
}

static void *dev(const struct rnn *r, int b)
{
	return r->at[b] < 0 ? NULL : mem(r->data.bufs[r->at[b]].dev);
}

/* The dropout descriptor the RNN descriptor points to, set again: its
 * probability and seed as recorded, states of cuDNN's size when it drops
 * anything. */
static bool make_dropout(struct rnn *r, const struct dt_cudnn_arg *rnn,
			 char *why, size_t whylen)
{
	const struct dt_cudnn_arg *d =
		dt_cudnn_arg_find(r->call, "dropoutDesc");
	const struct dt_cudnn_field *p = legacy_field_of(d, "dropout"),
				    *seed = legacy_field_of(d, "seed"),
				    *to = legacy_field_of(rnn, "dropoutDesc");

	if (!to || !to->v[0])
		return true; /* none: no dropout */
	if (!p) {
		snprintf(why, whylen,
			 "its dropout descriptor is not in the trace");
		return false;
	}
	if (r->f.create_dropout(&r->dropout) ||
	    (p->f > 0 && r->f.dropout_states(r->g->handle, &r->states_bytes))) {
		snprintf(why, whylen,
			 "its dropout descriptor cannot be made again");
		return false;
	}
	if (!data_scratch(r->g, &r->states, r->states_bytes, "dropout states",
			  why, whylen))
		return false;
	if (r->f.set_dropout(r->dropout, r->g->handle, (float)p->f,
			     mem(r->states), r->states_bytes,
			     seed ? (unsigned long long)seed->v[0] : 0)) {
		snprintf(why, whylen,
			 "its dropout descriptor cannot be set again");
		return false;
	}
	return true;
}

static bool make_rnn(struct rnn *r, char *why, size_t whylen)
{
	const struct dt_cudnn_arg *a = dt_cudnn_arg_find(r->call, "rnnDesc");

	if (!legacy_field_of(a, "cellMode") ||
	    !legacy_field_of(a, "hiddenSize")) {
		snprintf(why, whylen, "its RNN descriptor is not in the trace");
		return false;
	}
	if (!make_dropout(r, a, why, whylen))
		return false;
	if (r->f.create_rnn(&r->rnn) ||
	    r->f.set_rnn(r->rnn, legacy_field(a, "algo", 0),
			 legacy_field(a, "cellMode", 0),
			 legacy_field(a, "biasMode", 0),
			 legacy_field(a, "dirMode", 0),
			 legacy_field(a, "inputMode", 0),
			 legacy_field(a, "dataType", 0),
			 legacy_field(a, "mathPrec", 0),
			 legacy_field(a, "mathType", 0),
			 legacy_field(a, "inputSize", 0),
			 legacy_field(a, "hiddenSize", 0),
			 legacy_field(a, "projSize", 0),
			 legacy_field(a, "numLayers", 0), r->dropout,
			 (unsigned)legacy_field(a, "auxFlags", 0))) {
		snprintf(why, whylen,
			 "its RNN descriptor cannot be set again from the "
			 "trace");
		return false;
	}
	return true;
}

/* Buffer b of span elements of dtype, seeded. */
static bool add(struct rnn *r, int b, int64_t dtype, size_t span, char *why,
		size_t whylen)
{
	r->at[b] = (int)r->data.n;
	return data_add(&r->data, b, dtype, span, false, why, whylen);
}

/* The sequence lengths on the device: the program's, not seeded ones
 * (the host copy is what every run's data is filled again from). */
static bool add_lengths(struct rnn *r, const int *lengths, int batch, char *why,
			size_t whylen)
{
	if (!add(r, B_SEQ, DT_DTYPE_INT32, (size_t)batch, why, whylen))
		return false;
	memcpy(r->data.bufs[r->at[B_SEQ]].host, lengths,
	       (size_t)batch * sizeof(*lengths));
	return true;
}

/* seqLengthArray's element i: the program gave one per batch entry. */
static int seq_length(const struct dt_cudnn_field *f, int i)
{
	return (int)(f->all ? f->all[i] : f->v[i]);
}

/* An RNN data descriptor set as the program set it, and its buffers (the
 * data and its gradient); the sequence lengths, x's, on the device. */
static bool make_data(struct rnn *r, void **d, const char *name, int b,
		      int grad, char *why, size_t whylen)
{
	const struct dt_cudnn_arg *a = dt_cudnn_arg_find(r->call, name);
	const struct dt_cudnn_field *len = legacy_field_of(a, "seqLengthArray"),
				    *fill = legacy_field_of(a, "paddingFill");
	int dtype = legacy_field(a, "dataType", -1),
	    steps = legacy_field(a, "maxSeqLength", 0),
	    batch = legacy_field(a, "batchSize", 0),
	    vec = legacy_field(a, "vectorSize", 0);
	uint8_t pad[8] = { 0 };

	if (!len || steps < 1 || batch < 1 || vec < 1 ||
	    (len->all ? len->n_all : len->count) < (uint32_t)batch) {
		snprintf(why, whylen, "its %s is not in the trace", name);
		return false;
	}
	int *lengths = malloc((size_t)batch * sizeof(*lengths));
	for (int i = 0; lengths && i < batch; i++)
		lengths[i] = seq_length(len, i);
	/* the fill is read as the data's type: float or double here */
	if (fill && dtype == DT_DTYPE_DOUBLE)
		memcpy(pad, &fill->f, 8);
	else if (fill && dtype == DT_DTYPE_FLOAT)
		memcpy(pad, &(float){ (float)fill->f }, 4);
	int rc = !lengths || r->f.create_data(d) ||
		 r->f.set_data(*d, dtype, legacy_field(a, "layout", 0), steps,
			       batch, vec, lengths, pad);
	if (rc) {
		free(lengths);
		snprintf(why, whylen, "its %s cannot be set again", name);
		return false;
	}
	bool ok = b != B_X || add_lengths(r, lengths, batch, why, whylen);
	free(lengths);
	size_t span = (size_t)steps * (size_t)batch * (size_t)vec;
	return ok && add(r, b, dtype, span, why, whylen) &&
	       add(r, grad, dtype, span, why, whylen);
}

/* A tensor descriptor of t ([layers x directions, batch, size], then
 * dimensions of 1; its size `size` when not 0), and four buffers of its
 * shape from b on: in, out, their gradients. */
static bool make_state(struct rnn *r, void **d, const struct dt_tensor *t,
		       int size, int b, char *why, size_t whylen)
{
	int dims[DT_MAX_DIMS], strides[DT_MAX_DIMS];
	size_t span = 1;

	if (!t || t->nb < 3 || t->nb > DT_MAX_DIMS) {
		snprintf(why, whylen, "its h or c tensor is not in the trace");
		return false;
	}
	for (int k = 0; k < t->nb; k++)
		dims[k] = (int)t->dims[k], strides[k] = (int)t->strides[k];
	if (size) { /* packed again around the new size */
		dims[2] = size;
		strides[t->nb - 1] = 1;
		for (int k = t->nb - 2; k >= 0; k--)
			strides[k] = strides[k + 1] * dims[k + 1];
	}
	for (int k = 0; k < t->nb; k++)
		span += (size_t)(dims[k] - 1) * (size_t)strides[k];
	if (legacy_tensor(&r->f.tensor, d, (int)t->dtype, t->nb, dims,
			  strides)) {
		snprintf(why, whylen, "its h or c tensor cannot be set again");
		return false;
	}
	for (int k = b; k < b + 4; k++)
		if (!add(r, k, t->dtype, span, why, whylen))
			return false;
	return true;
}

/* c's tensor: the call's cDesc; the weights' gradient has none, so h's
 * with the hidden size (an LSTM's; other cells have no c). */
static bool make_c(struct rnn *r, char *why, size_t whylen)
{
	const struct dt_cudnn_arg *c = dt_cudnn_arg_find(r->call, "cDesc"),
				  *h = dt_cudnn_arg_find(r->call, "hDesc"),
				  *rnn = dt_cudnn_arg_find(r->call, "rnnDesc");

	if (c && (c->i || c->kind))
		return make_state(r, &r->c, c->t, 0, B_CX, why, whylen);
	if (c || legacy_field(rnn, "cellMode", -1) !=
			 dt_enum_value("cudnnRNNMode_t", "CUDNN_LSTM", 2))
		return true;
	return make_state(r, &r->c, h ? h->t : NULL,
			  legacy_field(rnn, "hiddenSize", 0), B_CX, why,
			  whylen);
}

/* The weight space, workspace and reserve space cuDNN asks for. */
static bool spaces(struct rnn *r, char *why, size_t whylen)
{
	const struct dt_cudnn_arg *a = dt_cudnn_arg_find(r->call, "rnnDesc");
	int dtype = legacy_field(a, "dataType", -1),
	    bits = dt_dtype_bits(dtype);

	if (r->f.weight_space(r->g->handle, r->rnn, &r->w_bytes) ||
	    r->f.temp_space(r->g->handle, r->rnn, r->fwd_mode, r->x,
			    &r->ws_bytes, &r->reserve_bytes) ||
	    bits < 8) {
		snprintf(why, whylen,
			 "cuDNN gives no weight space or workspace size for "
			 "it");
		return false;
	}
	size_t span = r->w_bytes / (size_t)(bits / 8);
	return add(r, B_W, dtype, span, why, whylen) &&
	       add(r, B_DW, dtype, span, why, whylen) &&
	       data_scratch(r->g, &r->ws, r->ws_bytes, "workspace", why,
			    whylen) &&
	       data_scratch(r->g, &r->reserve, r->reserve_bytes,
			    "reserve space", why, whylen);
}

/* ------------------------------------------------------------- calls */

static int forward(struct rnn *r)
{
	return r->f.fwd(r->g->handle, r->rnn, r->fwd_mode, dev(r, B_SEQ), r->x,
			dev(r, B_X), r->y, dev(r, B_Y), r->h, dev(r, B_HX),
			dev(r, B_HY), r->c, dev(r, B_CX), dev(r, B_CY),
			r->w_bytes, dev(r, B_W), r->ws_bytes, mem(r->ws),
			r->reserve_bytes, mem(r->reserve));
}

static int backward_data(struct rnn *r)
{
	return r->f.bwd_data(r->g->handle, r->rnn, dev(r, B_SEQ), r->y,
			     dev(r, B_Y), dev(r, B_DY), r->x, dev(r, B_DX),
			     r->h, dev(r, B_HX), dev(r, B_DHY), dev(r, B_DHX),
			     r->c, dev(r, B_CX), dev(r, B_DCY), dev(r, B_DCX),
			     r->w_bytes, dev(r, B_W), r->ws_bytes, mem(r->ws),
			     r->reserve_bytes, mem(r->reserve));
}

static int backward_weights(struct rnn *r)
{
	return r->f.bwd_weights(
		r->g->handle, r->rnn, (int)enum_arg(r, "addGrad", 0),
		dev(r, B_SEQ), r->x, dev(r, B_X), r->h, dev(r, B_HX), r->y,
		dev(r, B_Y), r->w_bytes, dev(r, B_DW), r->ws_bytes, mem(r->ws),
		r->reserve_bytes, mem(r->reserve));
}

static int (*const calls[])(struct rnn *) = {
	[RNN_FWD] = forward,
	[RNN_BWD_DATA] = backward_data,
	[RNN_BWD_WEIGHTS] = backward_weights,
};

static bool run_rnn(void *arg)
{
	struct rnn *r = arg;
	int rc = calls[r->api](r);

	if (rc)
		r->status = rc;
	return !rc;
}

/* What a backward reads from the reserve space, written there untimed
 * from the seeded data: a forward in training mode, and for the
 * weights' gradient the data's after it. */
static bool passes_before(struct rnn *r, char *why, size_t whylen)
{
	char err[160];
	int rc = 0;

	if (r->api != RNN_FWD && !data_refill(&r->data))
		rc = -1;
	for (int k = RNN_FWD; !rc && k < (int)r->api; k++)
		rc = calls[k](r);
	if (!rc && r->api != RNN_FWD && r->g->cuStreamSynchronize(r->g->stream))
		rc = -1;
	if (rc)
		snprintf(why, whylen,
			 "the pass before it, which writes its reserve space, "
			 "failed: %s",
			 rc > 0 ? gpu_cudnn_error(r->g, rc, err, sizeof(err))
				: "the GPU did not finish it");
	return !rc;
}

/* ----------------------------------------------------------- the call */

static bool remake(struct rnn *r, char *why, size_t whylen)
{
	const struct dt_cudnn_arg *h = dt_cudnn_arg_find(r->call, "hDesc");

	if (!load(r->g, &r->f)) {
		snprintf(why, whylen, "this cuDNN lacks the RNN API v8");
		return false;
	}
	r->data.g = r->g;
	for (int k = 0; k < B_COUNT; k++)
		r->at[k] = -1;
	/* the backward passes read a training forward's reserve space */
	r->fwd_mode =
		r->api == RNN_FWD
			? (int)enum_arg(r, "fwdMode", 1)
			: (int)dt_enum_value("cudnnForwardMode_t",
					     "CUDNN_FWD_MODE_TRAINING", 1);
	return make_rnn(r, why, whylen) &&
	       make_data(r, &r->x, "xDesc", B_X, B_DX, why, whylen) &&
	       make_data(r, &r->y, "yDesc", B_Y, B_DY, why, whylen) &&
	       make_state(r, &r->h, h ? h->t : NULL, 0, B_HX, why, whylen) &&
	       make_c(r, why, whylen) && spaces(r, why, whylen) &&
	       passes_before(r, why, whylen);
}

static void free_rnn(struct rnn *r)
{
	void *d[] = { r->x, r->y };

	for (size_t i = 0; i < 2; i++)
		if (d[i])
			r->f.destroy_data(d[i]);
	if (r->h)
		r->f.tensor.destroy(r->h);
	if (r->c)
		r->f.tensor.destroy(r->c);
	if (r->rnn)
		r->f.destroy_rnn(r->rnn);
	if (r->dropout)
		r->f.destroy_dropout(r->dropout);
	gpu_free(r->g, r->states, r->states_bytes);
	gpu_free(r->g, r->ws, r->ws_bytes);
	gpu_free(r->g, r->reserve, r->reserve_bytes);
	data_free(&r->data);
}

bool rnn_known(const char *api)
{
	for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
		if (!strcmp(api, apis[i]))
			return true;
	return false;
}

int rnn_measure(struct gpu *g, const struct problem *p,
		const struct dt_replay_opts *opts, struct budget *b,
		struct cand *c, size_t *n, char *why, size_t whylen)
{
	struct rnn r = { .g = g, .call = p->call };
	*n = 0;
	while (r.api < RNN_BWD_WEIGHTS && strcmp(apis[r.api], p->call->api))
		r.api++;
	if (!rnn_known(p->call->api) || !remake(&r, why, whylen)) {
		if (!rnn_known(p->call->api))
			snprintf(why, whylen, "%s is not an RNN call",
				 p->call->api);
		free_rnn(&r);
		return -1;
	}
	data_time_recorded(&r.data, run_rnn, &r, &r.status, p,
			   (int64_t)r.ws_bytes, opts, b, c, n);
	free_rnn(&r);
	return 0;
}
