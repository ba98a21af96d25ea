/*
 * replay-legacy-ops.c - recorded legacy calls other than convolutions
 * made again on the GPU and timed: pooling and activation (forward and
 * backward), softmax (forward and backward), batch normalization
 * (cudnnBatchNormalizationForwardTraining, ForwardInference, Backward,
 * and the Ex variants of training and backward, with their workspace,
 * reserve space, optional z tensor and fused activation). Each call's
 * tensor descriptors are set from what the trace kept of it (struct
 * dt_cudnn_call; a descriptor the program passed as NULL stays NULL), its
 * pooling or activation descriptor from what the program set it to,
 * every tensor (and batch norm's scale, bias, means and variances, shaped
 * as their descriptor) given seeded data (replay-data.c), its scalars the
 * bytes the program pointed to. These calls have no algorithm to choose
 * (a softmax's is part of what it computes): the recorded call is the one
 * candidate, timed against the trace. Convolutions are replay-legacy.c's,
 * RNNs replay-rnn.c's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-internal.h"

#define TENSORS_MAX 5

struct op;

/* A function made again: its tensor descriptors in the call's order,
 * the descriptor its buffers of parameters are shaped as (batch norm's)
 * and how many there are, the call itself, and what must be done before
 * it is timed (NULL nothing): the Ex variants' workspace and reserve
 * space. */
struct op_api {
	const char *exec;
	const char *tensors[TENSORS_MAX];
	const char *params; /* NULL none */
	int n_params;
	int (*call)(struct op *r);
	bool (*prepare)(struct op *r, char *why, size_t whylen);
};

/* The functions an op needs besides its own. */
struct op_fns {
	void *exec;
	struct tensor_fns tensor;
	int (*create_pool)(void **), (*destroy_pool)(void *);
	int (*set_pool2d)(void *, int, int, int, int, int, int, int, int);
	int (*set_poolnd)(void *, int, int, int, const int *, const int *,
			  const int *);
	int (*create_act)(void **), (*destroy_act)(void *);
	int (*set_act)(void *, int, int, double);
};

/* The call as made again. bufs of data: the tensors in the order of
 * api->tensors (those the program passed), then the parameters. */
struct op {
	struct gpu *g;
	const struct dt_cudnn_call *call;
	const struct op_api *api;
	struct op_fns f;
	void *t[TENSORS_MAX + 1]; /* tensor descriptors; the last: params';
				     NULL where the program passed none */
	int at[TENSORS_MAX + 1];  /* each one's first buffer in data, -1 */
	void *pool, *act;
	struct data data;
	uint64_t ws, reserve; /* device memory of the Ex variants, 0 none */
	size_t ws_bytes, reserve_bytes;
	int status;
};

/* ------------------------------------------------------------- calls */

static void *h(struct op *r)
{
	return r->g->handle;
}

/* Tensor i's memory, NULL when the program passed none. */
static void *dev(struct op *r, size_t i)
{
	return r->at[i] < 0 ? NULL
			    : (void *)(uintptr_t)r->data.bufs[r->at[i]].dev;
}

static void *mem(uint64_t p)
{
	return (void *)(uintptr_t)p;
}

static const void *scalar(struct op *r, const char *name)
{
	const struct dt_cudnn_arg *a = dt_cudnn_arg_find(r->call, name);
	return a && a->width ? a->host : NULL;
}

static int64_t enum_arg(struct op *r, const char *name)
{
	const struct dt_cudnn_arg *a = dt_cudnn_arg_find(r->call, name);
	return a ? a->i : 0;
}

static double double_arg(struct op *r, const char *name)
{
	const struct dt_cudnn_arg *a = dt_cudnn_arg_find(r->call, name);
	return a ? a->f : 0;
}

/* cuDNN's prototypes of the calls, descriptors as void * (no cuDNN header
 * here): an activation's are a pooling's, its descriptor in its place. */
typedef int (*pool_fwd_t)(void *, void *, const void *, void *, const void *,
			  const void *, void *, void *);
typedef int (*pool_bwd_t)(void *, void *, const void *, void *, const void *,
			  void *, const void *, void *, const void *,
			  const void *, void *, void *);
typedef int (*softmax_fwd_t)(void *, int, int, const void *, void *,
			     const void *, const void *, void *, void *);
typedef int (*softmax_bwd_t)(void *, int, int, const void *, void *,
			     const void *, void *, const void *, const void *,
			     void *, void *);
typedef int (*bn_inf_t)(void *, int, const void *, const void *, void *,
			const void *, void *, void *, void *, const void *,
			const void *, const void *, const void *, double);
typedef int (*bn_train_t)(void *, int, const void *, const void *, void *,
			  const void *, void *, void *, void *, const void *,
			  const void *, double, void *, void *, double, void *,
			  void *);
typedef int (*bn_bwd_t)(void *, int, const void *, const void *, const void *,
			const void *, void *, const void *, void *,
			const void *, void *, void *, void *, const void *,
			void *, void *, double, const void *, const void *);
typedef int (*bn_train_ex_t)(void *, int, int, const void *, const void *,
			     void *, const void *, void *, const void *, void *,
			     void *, void *, const void *, const void *, double,
			     void *, void *, double, void *, void *, void *,
			     void *, size_t, void *, size_t);
typedef int (*bn_bwd_ex_t)(void *, int, int, const void *, const void *,
			   const void *, const void *, void *, const void *,
			   void *, const void *, void *, const void *, void *,
			   void *, void *, void *, void *, const void *,
			   const void *, void *, void *, double, const void *,
			   const void *, void *, void *, size_t, void *,
			   size_t);
/* their workspace and reserve space sizes */
typedef int (*bn_train_ex_ws_t)(void *, int, int, void *, void *, void *,
				void *, void *, size_t *);
typedef int (*bn_bwd_ex_ws_t)(void *, int, int, void *, void *, void *, void *,
			      void *, void *, void *, size_t *);
typedef int (*bn_reserve_t)(void *, int, int, void *, void *, size_t *);

static size_t n_tensors(const struct op_api *api)
{
	size_t n = 0;
	while (n < TENSORS_MAX && api->tensors[n])
		n++;
	return n;
}

/* Parameter buffer i, after the call's tensors. */
static void *param(struct op *r, int i)
{
	int at = r->at[n_tensors(r->api)];

	return (void *)(uintptr_t)r->data.bufs[at + i].dev;
}

/* Pooling and activation: the call's own descriptor, the one it has. */
static void *own(struct op *r)
{
	return r->pool ? r->pool : r->act;
}

static int pool_fwd(struct op *r)
{
	return ((pool_fwd_t)r->f.exec)(h(r), own(r), scalar(r, "alpha"),
				       r->t[0], dev(r, 0), scalar(r, "beta"),
				       r->t[1], dev(r, 1));
}

static int pool_bwd(struct op *r)
{
	return ((pool_bwd_t)r->f.exec)(h(r), own(r), scalar(r, "alpha"),
				       r->t[0], dev(r, 0), r->t[1], dev(r, 1),
				       r->t[2], dev(r, 2), scalar(r, "beta"),
				       r->t[3], dev(r, 3));
}

static int softmax_fwd(struct op *r)
{
	return ((softmax_fwd_t)r->f.exec)(
		h(r), (int)enum_arg(r, "algo"), (int)enum_arg(r, "mode"),
		scalar(r, "alpha"), r->t[0], dev(r, 0), scalar(r, "beta"),
		r->t[1], dev(r, 1));
}

static int softmax_bwd(struct op *r)
{
	return ((softmax_bwd_t)r->f.exec)(
		h(r), (int)enum_arg(r, "algo"), (int)enum_arg(r, "mode"),
		scalar(r, "alpha"), r->t[0], dev(r, 0), r->t[1], dev(r, 1),
		scalar(r, "beta"), r->t[2], dev(r, 2));
}

static int bn_inference(struct op *r)
{
	return ((bn_inf_t)r->f.exec)(
		h(r), (int)enum_arg(r, "mode"), scalar(r, "alpha"),
		scalar(r, "beta"), r->t[0], dev(r, 0), r->t[1], dev(r, 1),
		r->t[2], param(r, 0), param(r, 1), param(r, 2), param(r, 3),
		double_arg(r, "epsilon"));
}

static int bn_training(struct op *r)
{
	return ((bn_train_t)r->f.exec)(
		h(r), (int)enum_arg(r, "mode"), scalar(r, "alpha"),
		scalar(r, "beta"), r->t[0], dev(r, 0), r->t[1], dev(r, 1),
		r->t[2], param(r, 0), param(r, 1),
		double_arg(r, "exponentialAverageFactor"), param(r, 2),
		param(r, 3), double_arg(r, "epsilon"), param(r, 4),
		param(r, 5));
}

static int bn_backward(struct op *r)
{
	return ((bn_bwd_t)r->f.exec)(
		h(r), (int)enum_arg(r, "mode"), scalar(r, "alphaDataDiff"),
		scalar(r, "betaDataDiff"), scalar(r, "alphaParamDiff"),
		scalar(r, "betaParamDiff"), r->t[0], dev(r, 0), r->t[1],
		dev(r, 1), r->t[2], dev(r, 2), r->t[3], param(r, 0),
		param(r, 1), param(r, 2), double_arg(r, "epsilon"), param(r, 3),
		param(r, 4));
}

/* The Ex variants: tensors x, z, y (forward) and x, y, dy, dz, dx
 * (backward), z and dz and the backward's y NULL unless bnOps adds or
 * activates; the parameters as the plain calls' plus the bias (forward:
 * scale, bias, running mean and variance, saved mean and inverse
 * variance; backward: scale, bias, their gradients, saved mean and
 * inverse variance). */
static int bn_training_ex(struct op *r)
{
	return ((bn_train_ex_t)r->f.exec)(
		h(r), (int)enum_arg(r, "mode"), (int)enum_arg(r, "bnOps"),
		scalar(r, "alpha"), scalar(r, "beta"), r->t[0], dev(r, 0),
		r->t[1], dev(r, 1), r->t[2], dev(r, 2), r->t[3], param(r, 0),
		param(r, 1), double_arg(r, "exponentialAverageFactor"),
		param(r, 2), param(r, 3), double_arg(r, "epsilon"), param(r, 4),
		param(r, 5), r->act, mem(r->ws), r->ws_bytes, mem(r->reserve),
		r->reserve_bytes);
}

static int bn_backward_ex(struct op *r)
{
	return ((bn_bwd_ex_t)r->f.exec)(
		h(r), (int)enum_arg(r, "mode"), (int)enum_arg(r, "bnOps"),
		scalar(r, "alphaDataDiff"), scalar(r, "betaDataDiff"),
		scalar(r, "alphaParamDiff"), scalar(r, "betaParamDiff"),
		r->t[0], dev(r, 0), r->t[1], dev(r, 1), r->t[2], dev(r, 2),
		r->t[3], dev(r, 3), r->t[4], dev(r, 4), r->t[5], param(r, 0),
		param(r, 1), param(r, 2), param(r, 3), double_arg(r, "epsilon"),
		param(r, 4), param(r, 5), r->act, mem(r->ws), r->ws_bytes,
		mem(r->reserve), r->reserve_bytes);
}

/* What a batch norm Ex call's workspace and reserve space take, asked of
 * cuDNN with the recorded descriptors; false with why. */
static bool ex_sizes(struct op *r, int status, const char *what, char *why,
		     size_t whylen)
{
	char err[160];

	if (status < 0)
		snprintf(why, whylen, "this cuDNN cannot size its %s", what);
	else if (status)
		snprintf(why, whylen, "cuDNN gives no %s size: %s", what,
			 gpu_cudnn_error(r->g, status, err, sizeof(err)));
	return !status;
}

static bool reserve_of(struct op *r, char *why, size_t whylen)
{
	bn_reserve_t size;

	if (!gpu_cudnn_fn(
		    r->g, &size,
		    "cudnnGetBatchNormalizationTrainingExReserveSpaceSize"))
		return ex_sizes(r, -1, "reserve space", why, whylen);
	return ex_sizes(r,
			size(h(r), (int)enum_arg(r, "mode"),
			     (int)enum_arg(r, "bnOps"), r->act, r->t[0],
			     &r->reserve_bytes),
			"reserve space", why, whylen) &&
	       data_scratch(r->g, &r->reserve, r->reserve_bytes,
			    "reserve space", why, whylen);
}

static bool prepare_training_ex(struct op *r, char *why, size_t whylen)
{
	bn_train_ex_ws_t size;

	if (!gpu_cudnn_fn(
		    r->g, &size,
		    "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize"))
		return ex_sizes(r, -1, "workspace", why, whylen);
	return ex_sizes(r,
			size(h(r), (int)enum_arg(r, "mode"),
			     (int)enum_arg(r, "bnOps"), r->t[0], r->t[1],
			     r->t[2], r->t[3], r->act, &r->ws_bytes),
			"workspace", why, whylen) &&
	       data_scratch(r->g, &r->ws, r->ws_bytes, "workspace", why,
			    whylen) &&
	       reserve_of(r, why, whylen);
}

/* The backward reads the reserve space a forward in training wrote: one
 * forward of the same problem (x, z as dz, y as the recorded y or dx,
 * the running statistics in the gradients' buffers, which the backward
 * writes over) is run first, untimed, with a workspace of its own. */
static bool forward_first(struct op *r, char *why, size_t whylen)
{
	bn_train_ex_t fwd;
	bn_train_ex_ws_t size;
	size_t bytes = 0;
	uint64_t ws = 0;
	char err[160];
	int rc = -1;

	if (!gpu_cudnn_fn(r->g, &fwd,
			  "cudnnBatchNormalizationForwardTrainingEx") ||
	    !gpu_cudnn_fn(r->g, &size,
			  "cudnnGetBatchNormalizationForwardTrainingExWorkspace"
			  "Size")) {
		snprintf(why, whylen,
			 "this cuDNN lacks the forward that writes its "
			 "reserve space");
		return false;
	}
	int mode = (int)enum_arg(r, "mode"), ops = (int)enum_arg(r, "bnOps"),
	    y = r->t[1] ? 1 : 4;
	if (!ex_sizes(r,
		      size(h(r), mode, ops, r->t[0], r->t[3], r->t[y], r->t[5],
			   r->act, &bytes),
		      "forward workspace", why, whylen) ||
	    !data_scratch(r->g, &ws, bytes, "forward's workspace", why, whylen))
		return false;
	if (data_refill(&r->data))
		rc = fwd(h(r), mode, ops, scalar(r, "alphaDataDiff"),
			 scalar(r, "betaDataDiff"), r->t[0], dev(r, 0), r->t[3],
			 dev(r, 3), r->t[y], dev(r, (size_t)y), r->t[5],
			 param(r, 0), param(r, 1), 0.1, param(r, 2),
			 param(r, 3), double_arg(r, "epsilon"), param(r, 4),
			 param(r, 5), r->act, mem(ws), bytes, mem(r->reserve),
			 r->reserve_bytes);
	if (!rc)
		rc = r->g->cuStreamSynchronize(r->g->stream) ? -1 : 0;
	gpu_free(r->g, ws, bytes);
	if (rc)
		snprintf(why, whylen,
			 "the forward that writes its reserve space failed: %s",
			 rc > 0 ? gpu_cudnn_error(r->g, rc, err, sizeof(err))
				: "the GPU did not finish it");
	return !rc;
}

static bool prepare_backward_ex(struct op *r, char *why, size_t whylen)
{
	bn_bwd_ex_ws_t size;

	if (!gpu_cudnn_fn(r->g, &size,
			  "cudnnGetBatchNormalizationBackwardExWorkspaceSize"))
		return ex_sizes(r, -1, "workspace", why, whylen);
	return ex_sizes(r,
			size(h(r), (int)enum_arg(r, "mode"),
			     (int)enum_arg(r, "bnOps"), r->t[0], r->t[1],
			     r->t[2], r->t[3], r->t[4], r->t[5], r->act,
			     &r->ws_bytes),
			"workspace", why, whylen) &&
	       data_scratch(r->g, &r->ws, r->ws_bytes, "workspace", why,
			    whylen) &&
	       reserve_of(r, why, whylen) && forward_first(r, why, whylen);
}

static const struct op_api ops[] = {
	{ "cudnnPoolingForward", { "xDesc", "yDesc" }, NULL, 0, pool_fwd },
	{ "cudnnPoolingBackward",
	  { "yDesc", "dyDesc", "xDesc", "dxDesc" },
	  NULL,
	  0,
	  pool_bwd },
	{ "cudnnActivationForward", { "xDesc", "yDesc" }, NULL, 0, pool_fwd },
	{ "cudnnActivationBackward",
	  { "yDesc", "dyDesc", "xDesc", "dxDesc" },
	  NULL,
	  0,
	  pool_bwd },
	{ "cudnnSoftmaxForward", { "xDesc", "yDesc" }, NULL, 0, softmax_fwd },
	{ "cudnnSoftmaxBackward",
	  { "yDesc", "dyDesc", "dxDesc" },
	  NULL,
	  0,
	  softmax_bwd },
	/* scale, bias, estimated mean and variance */
	{ "cudnnBatchNormalizationForwardInference",
	  { "xDesc", "yDesc" },
	  "bnScaleBiasMeanVarDesc",
	  4,
	  bn_inference },
	/* scale, bias, running mean and variance, saved mean and inverse
	 * variance */
	{ "cudnnBatchNormalizationForwardTraining",
	  { "xDesc", "yDesc" },
	  "bnScaleBiasMeanVarDesc",
	  6,
	  bn_training },
	/* scale, its gradient, the bias's; saved mean and inverse variance */
	{ "cudnnBatchNormalizationBackward",
	  { "xDesc", "dyDesc", "dxDesc" },
	  "dBnScaleBiasDesc",
	  5,
	  bn_backward },
	{ "cudnnBatchNormalizationForwardTrainingEx",
	  { "xDesc", "zDesc", "yDesc" },
	  "bnScaleBiasMeanVarDesc",
	  6,
	  bn_training_ex,
	  prepare_training_ex },
	{ "cudnnBatchNormalizationBackwardEx",
	  { "xDesc", "yDesc", "dyDesc", "dzDesc", "dxDesc" },
	  "dBnScaleBiasDesc",
	  6,
	  bn_backward_ex,
	  prepare_backward_ex },
};

static const struct op_api *api_of(const char *name)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i].exec, name))
			return &ops[i];
	return NULL;
}

bool legacy_op_known(const char *api)
{
	return api_of(api) != NULL;
}

/* ------------------------------------------------------ descriptors */

static bool load(struct gpu *g, const struct op_api *api, struct op_fns *f)
{
	return gpu_cudnn_fn(g, &f->exec, api->exec) &&
	       legacy_tensor_fns(g, &f->tensor) &&
	       gpu_cudnn_fn(g, &f->create_pool,
			    "cudnnCreatePoolingDescriptor") &&
	       gpu_cudnn_fn(g, &f->destroy_pool,
			    "cudnnDestroyPoolingDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_pool2d, "cudnnSetPooling2dDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_poolnd, "cudnnSetPoolingNdDescriptor") &&
	       gpu_cudnn_fn(g, &f->create_act,
			    "cudnnCreateActivationDescriptor") &&
	       gpu_cudnn_fn(g, &f->destroy_act,
			    "cudnnDestroyActivationDescriptor") &&
	       gpu_cudnn_fn(g, &f->set_act, "cudnnSetActivationDescriptor");
}

const struct dt_cudnn_field *legacy_field_of(const struct dt_cudnn_arg *a,
					     const char *name)
{
	return a ? dt_cudnn_field_find(a, name) : NULL;
}

int legacy_field(const struct dt_cudnn_arg *a, const char *name, int def)
{
	const struct dt_cudnn_field *f = legacy_field_of(a, name);
	return f ? (int)f->v[0] : def;
}

/* A descriptor the program passed as NULL (batch norm Ex's z, its
 * backward's y, an activation it does not fuse). */
static bool passed_null(const struct dt_cudnn_arg *a)
{
	return a && a->code == 'p' && !a->i && !a->kind;
}

/* A tensor descriptor set as the argument name's was, and its data:
 * count buffers of its shape (1 for a tensor, a batch norm's parameters
 * more); none where the program passed NULL. */
static bool tensor(struct op *r, int i, const char *name, int count, char *why,
		   size_t whylen)
{
	const struct dt_cudnn_arg *a = dt_cudnn_arg_find(r->call, name);
	const struct dt_tensor *t = a ? a->t : NULL;
	int dims[DT_MAX_DIMS], strides[DT_MAX_DIMS];
	size_t span = 1;

	r->at[i] = -1;
	if (passed_null(a))
		return true;
	if (!t || t->nb < 1 || t->nb > DT_MAX_DIMS) {
		snprintf(why, whylen, "its %s is not in the trace", name);
		return false;
	}
	for (int k = 0; k < t->nb; k++) {
		dims[k] = (int)t->dims[k];
		strides[k] = (int)t->strides[k];
		span += (size_t)(dims[k] - 1) * (size_t)strides[k];
	}
	if (legacy_tensor(&r->f.tensor, &r->t[i], (int)t->dtype, t->nb, dims,
			  strides)) {
		snprintf(why, whylen, "its %s cannot be set again", name);
		return false;
	}
	r->at[i] = (int)r->data.n;
	for (int k = 0; k < count; k++)
		if (!data_add(&r->data, (int64_t)r->data.n, t->dtype, span,
			      false, why, whylen))
			return false;
	return true;
}

/* The pooling or activation descriptor the call names, set as the
 * program set it. */
static bool own_desc(struct op *r, char *why, size_t whylen)
{
	const struct dt_cudnn_arg *p = dt_cudnn_arg_find(r->call,
							 "poolingDesc"),
				  *a = dt_cudnn_arg_find(r->call,
							 "activationDesc");
	const struct dt_cudnn_field *win = legacy_field_of(p, "windowDimA"),
				    *pad = legacy_field_of(p, "paddingA"),
				    *str = legacy_field_of(p, "strideA"),
				    *coef = legacy_field_of(a, "coef");
	int rc = 0;

	if (p && win && pad && str) {
		int n = legacy_field(p, "nbDims", 0), w[DT_MAX_DIMS],
		    q[DT_MAX_DIMS], s[DT_MAX_DIMS];
		for (int k = 0; k < n && k < DT_MAX_DIMS; k++)
			w[k] = (int)win->v[k], q[k] = (int)pad->v[k],
			s[k] = (int)str->v[k];
		rc = n < 1 || n > DT_MAX_DIMS || r->f.create_pool(&r->pool) ||
		     r->f.set_poolnd(r->pool, legacy_field(p, "mode", 0),
				     legacy_field(p, "maxpoolingNanOpt", 0), n,
				     w, q, s);
	} else if (p) {
		rc = !legacy_field_of(p, "windowHeight") ||
		     r->f.create_pool(&r->pool) ||
		     r->f.set_pool2d(r->pool, legacy_field(p, "mode", 0),
				     legacy_field(p, "maxpoolingNanOpt", 0),
				     legacy_field(p, "windowHeight", 1),
				     legacy_field(p, "windowWidth", 1),
				     legacy_field(p, "verticalPadding", 0),
				     legacy_field(p, "horizontalPadding", 0),
				     legacy_field(p, "verticalStride", 1),
				     legacy_field(p, "horizontalStride", 1));
	} else if (a && !passed_null(a)) {
		rc = !legacy_field_of(a, "mode") || r->f.create_act(&r->act) ||
		     r->f.set_act(r->act, legacy_field(a, "mode", 0),
				  legacy_field(a, "reluNanOpt", 0),
				  coef ? coef->f : 0);
	}
	if (rc)
		snprintf(why, whylen,
			 "its %s cannot be set again from the trace",
			 p ? "pooling descriptor" : "activation descriptor");
	return !rc;
}

static void free_op(struct op *r)
{
	for (size_t i = 0; i <= TENSORS_MAX; i++)
		if (r->t[i])
			r->f.tensor.destroy(r->t[i]);
	if (r->pool)
		r->f.destroy_pool(r->pool);
	if (r->act)
		r->f.destroy_act(r->act);
	gpu_free(r->g, r->ws, r->ws_bytes);
	gpu_free(r->g, r->reserve, r->reserve_bytes);
	data_free(&r->data);
}

static bool remake(struct op *r, char *why, size_t whylen)
{
	size_t n = n_tensors(r->api);

	if (!load(r->g, r->api, &r->f)) {
		snprintf(why, whylen, "this cuDNN lacks %s", r->api->exec);
		return false;
	}
	r->data.g = r->g;
	for (size_t i = 0; i < n; i++)
		if (!tensor(r, (int)i, r->api->tensors[i], 1, why, whylen))
			return false;
	if (r->api->params &&
	    !tensor(r, (int)n, r->api->params, r->api->n_params, why, whylen))
		return false;
	return own_desc(r, why, whylen) &&
	       (!r->api->prepare || r->api->prepare(r, why, whylen));
}

static bool run_op(void *arg)
{
	struct op *r = arg;
	int rc = r->api->call(r);

	if (rc)
		r->status = rc;
	return !rc;
}

int legacy_op_measure(struct gpu *g, const struct problem *p,
		      const struct dt_replay_opts *opts, struct budget *b,
		      struct cand *c, size_t *n, char *why, size_t whylen)
{
	struct op r = { .g = g, .call = p->call, .api = api_of(p->call->api) };
	*n = 0;
	if (!r.api || !remake(&r, why, whylen)) {
		if (!r.api)
			snprintf(why, whylen, "%s is not made again yet",
				 p->call->api);
		free_op(&r);
		return -1;
	}
	data_time_recorded(&r.data, run_op, &r, &r.status, p,
			   (int64_t)r.ws_bytes, opts, b, c, n);
	free_op(&r);
	return 0;
}
