/*
 * analyzer-cost.c - what an op must compute and move: FLOPs by the
 * conventions of analyzer/COSTS.md, bytes from the tensors it names, the
 * kind of computation, and the peak rate it is held against.
 *
 * Everything here works on shapes the model already rebuilt; nothing is
 * measured. The FLOP counts are the textbook ones (a multiply-add is two
 * operations): exact for convolutions, matrix products and attention,
 * conventions for the memory-bound kinds, where the bytes matter more.
 */
#define _GNU_SOURCE
#include <string.h>

#include "analyzer-cost.h"

static double elements(const struct dt_tensor *t)
{
	double n = 1;

	if (!t || !t->valid)
		return 0;
	for (int i = 0; i < t->nb; i++)
		n *= (double)(t->dims[i] > 0 ? t->dims[i] : 0);
	return n;
}

/* Elements after the first dimension: a filter's C/groups x R x S. */
static double per_output(const struct dt_tensor *t)
{
	double n = 1;

	if (!t || !t->valid || t->nb < 2)
		return 0;
	for (int i = 1; i < t->nb; i++)
		n *= (double)(t->dims[i] > 0 ? t->dims[i] : 0);
	return n;
}

uint64_t dt_tensor_bytes(const struct dt_tensor *t)
{
	uint64_t n = 1;

	if (!t || !t->valid || t->is_virtual || t->by_value || t->nb <= 0)
		return 0;
	for (int i = 0; i < t->nb; i++) {
		if (t->dims[i] <= 0)
			return 0;
		if (t->strides[i] != 0)
			n *= (uint64_t)t->dims[i];
	}
	return (n * (uint64_t)dt_dtype_bits(t->dtype) + 7) / 8;
}

static bool tensor_kind(enum dt_op_kind k)
{
	return k == DT_KIND_CONV_FWD || k == DT_KIND_CONV_BWD_DATA ||
	       k == DT_KIND_CONV_BWD_FILTER || k == DT_KIND_MATMUL ||
	       k == DT_KIND_ATTN_FWD || k == DT_KIND_ATTN_BWD ||
	       k == DT_KIND_RNN_FWD || k == DT_KIND_RNN_BWD_DATA ||
	       k == DT_KIND_RNN_BWD_WEIGHTS;
}

enum dt_math dt_math_of(const struct dt_cost *c, int tensor_cores)
{
	if (c->dtype < 0)
		return DT_MATH_UNKNOWN;
	if (c->dtype == DT_DTYPE_DOUBLE)
		return DT_MATH_FP64;
	if (!c->tensor_op || tensor_cores == 0)
		return DT_MATH_FP32;
	switch (c->dtype) {
	case DT_DTYPE_HALF:
		return DT_MATH_FP16;
	case DT_DTYPE_BFLOAT16:
		return DT_MATH_BF16;
	case DT_DTYPE_FP8_E4M3:
	case DT_DTYPE_FP8_E5M2:
		return DT_MATH_FP8;
	case DT_DTYPE_INT8:
		return DT_MATH_INT8;
	case DT_DTYPE_FLOAT:
		return tensor_cores == 1 ? DT_MATH_TF32 : DT_MATH_FP32;
	default:
		return DT_MATH_FP32;
	}
}

static const struct {
	const char *key, *name;
} kinds[DT_KIND_COUNT] = {
	[DT_KIND_OTHER] = { "other", "other" },
	[DT_KIND_CONV_FWD] = { "conv_fwd", "convolution forward" },
	[DT_KIND_CONV_BWD_DATA] = { "conv_bwd_data",
				    "convolution backward data" },
	[DT_KIND_CONV_BWD_FILTER] = { "conv_bwd_filter",
				      "convolution backward filter" },
	[DT_KIND_MATMUL] = { "matmul", "matrix multiply" },
	[DT_KIND_ATTN_FWD] = { "attention_fwd", "attention forward" },
	[DT_KIND_ATTN_BWD] = { "attention_bwd", "attention backward" },
	[DT_KIND_NORM_FWD] = { "norm_fwd", "normalization forward" },
	[DT_KIND_NORM_BWD] = { "norm_bwd", "normalization backward" },
	[DT_KIND_POINTWISE] = { "pointwise", "pointwise" },
	[DT_KIND_REDUCTION] = { "reduction", "reduction" },
	[DT_KIND_SOFTMAX] = { "softmax", "softmax" },
	[DT_KIND_POOLING] = { "pooling", "pooling and resampling" },
	[DT_KIND_RNN_FWD] = { "rnn_fwd", "RNN forward" },
	[DT_KIND_RNN_BWD_DATA] = { "rnn_bwd_data", "RNN backward data" },
	[DT_KIND_RNN_BWD_WEIGHTS] = { "rnn_bwd_weights",
				      "RNN backward weights" },
	[DT_KIND_TRANSFORM] = { "transform", "layout and type conversion" },
	[DT_KIND_DROPOUT] = { "dropout", "dropout" },
	[DT_KIND_CTC] = { "ctc", "CTC loss" },
	[DT_KIND_SEARCH] = { "search", "algorithm search (cudnnFind*)" },
	[DT_KIND_SETUP] = { "setup", "setup (handles, dropout states)" },
};

const char *dt_op_kind_name(enum dt_op_kind k)
{
	return (unsigned)k < DT_KIND_COUNT ? kinds[k].name : "?";
}

const char *dt_op_kind_key(enum dt_op_kind k)
{
	return (unsigned)k < DT_KIND_COUNT ? kinds[k].key : "?";
}

const char *dt_math_name(enum dt_math m)
{
	static const char *const names[DT_MATH_COUNT] = {
		[DT_MATH_UNKNOWN] = "?", [DT_MATH_FP64] = "fp64",
		[DT_MATH_FP32] = "fp32", [DT_MATH_TF32] = "tf32",
		[DT_MATH_FP16] = "fp16", [DT_MATH_BF16] = "bf16",
		[DT_MATH_FP8] = "fp8",   [DT_MATH_INT8] = "int8",
	};
	return (unsigned)m < DT_MATH_COUNT ? names[m] : "?";
}

/* ------------------------------------------------------------- backend */

static bool ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

static const struct dt_tensor *role(const struct dt_role_tensor *ts, int n,
				    const char *suffix)
{
	for (int i = 0; i < n; i++)
		if (ts[i].t && ts[i].t->valid && ends(ts[i].attr, suffix))
			return ts[i].t;
	return NULL;
}

static int64_t dtype_of(const struct dt_tensor *t)
{
	return t && t->valid ? t->dtype : -1;
}

static int64_t dim(const struct dt_tensor *t, int i)
{
	if (!t || !t->valid || i >= t->nb)
		return 0;
	if (i < 0)
		i += t->nb;
	return i >= 0 ? t->dims[i] : 0;
}

/* Attention's matrix products: S = Q K^T and O = P V, each 2 b h sq skv d;
 * backward recomputes S and forms dV, dP, dQ and dK. */
static double sdpa_flops(const struct dt_tensor *q, const struct dt_tensor *k,
			 const struct dt_tensor *v, bool backward)
{
	double bhs = elements(q) / (double)(dim(q, -1) ? dim(q, -1) : 1);
	double skv = (double)dim(k, -2), d = (double)dim(q, -1),
	       dv = (double)(v ? dim(v, -1) : dim(q, -1));

	return 2 * bhs * skv * (backward ? 3 * d + 2 * dv : d + dv);
}

void dt_cost_backend_op(struct dt_cost_part *p, const char *op_type,
			const struct dt_role_tensor *ts, int n, int64_t phase,
			const char *pw_mode)
{
	const struct dt_tensor *t;

	memset(p, 0, sizeof(*p));
	p->dtype = -1;
	for (int i = 0; i < n && p->n < DT_PART_TENSORS; i++) {
		uint64_t b = dt_tensor_bytes(ts[i].t);
		if (!b)
			continue;
		p->t[p->n].uid = ts[i].t->uid;
		p->t[p->n].bytes = b;
		p->n++;
	}
	if (!op_type)
		return;
	if (strstr(op_type, "CONVOLUTION_FORWARD")) {
		p->kind = DT_KIND_CONV_FWD;
		p->flops = 2 * elements(role(ts, n, "_Y")) *
			   per_output(role(ts, n, "_W"));
		p->dtype = dtype_of(role(ts, n, "_X"));
	} else if (strstr(op_type, "CONVOLUTION_BACKWARD_DATA")) {
		p->kind = DT_KIND_CONV_BWD_DATA;
		p->flops = 2 * elements(role(ts, n, "_DY")) *
			   per_output(role(ts, n, "_W"));
		p->dtype = dtype_of(role(ts, n, "_DY"));
	} else if (strstr(op_type, "CONVOLUTION_BACKWARD_FILTER")) {
		p->kind = DT_KIND_CONV_BWD_FILTER;
		p->flops = 2 * elements(role(ts, n, "_DY")) *
			   per_output(role(ts, n, "_DW"));
		p->dtype = dtype_of(role(ts, n, "_X"));
	} else if (strstr(op_type, "OPERATION_MATMUL") ||
		   strstr(op_type, "MOE_GROUPED_MATMUL")) {
		const struct dt_tensor *a = role(ts, n, "_ADESC"),
				       *c = role(ts, n, "_CDESC");
		if (!a) /* grouped matmul: tokens x weights */
			a = role(ts, n, "_TOKEN_DESC");
		if (!c)
			c = role(ts, n, "_OUTPUT_DESC");
		p->kind = DT_KIND_MATMUL;
		p->matmuls = 1;
		p->flops = 2 * elements(c) * (double)dim(a, -1);
		p->dtype = dtype_of(a);
	} else if (strstr(op_type, "SDPA_FWD") || strstr(op_type, "SDPA_BWD")) {
		bool bwd = strstr(op_type, "SDPA_BWD") != NULL;
		const struct dt_tensor *q = role(ts, n, "_QDESC");
		p->kind = bwd ? DT_KIND_ATTN_BWD : DT_KIND_ATTN_FWD;
		p->flops = sdpa_flops(q, role(ts, n, "_KDESC"),
				      role(ts, n, "_VDESC"), bwd);
		p->dtype = dtype_of(q);
	} else if (strstr(op_type, "NORM_FORWARD")) {
		t = role(ts, n, "_XDESC");
		p->kind = DT_KIND_NORM_FWD;
		p->flops = (phase == 0 ? 4 : 8) * elements(t);
		p->dtype = dtype_of(t);
	} else if (strstr(op_type, "NORM_BACKWARD")) {
		t = role(ts, n, "_XDESC");
		p->kind = DT_KIND_NORM_BWD;
		p->flops = 12 * elements(t);
		p->dtype = dtype_of(t);
	} else if (strstr(op_type, "GEN_STATS")) {
		t = role(ts, n, "_XDESC");
		p->kind = DT_KIND_NORM_FWD;
		p->flops = 2 * elements(t);
		p->dtype = dtype_of(t);
	} else if (strstr(op_type, "BN_FINALIZE") ||
		   strstr(op_type, "BN_BWD_WEIGHTS")) {
		p->kind = strstr(op_type, "BWD") ? DT_KIND_NORM_BWD
						 : DT_KIND_NORM_FWD;
	} else if (strstr(op_type, "OPERATION_REDUCTION")) {
		t = role(ts, n, "_XDESC");
		p->kind = DT_KIND_REDUCTION;
		p->reductions = 1;
		p->flops = elements(t);
		p->dtype = dtype_of(t);
	} else if (strstr(op_type, "OPERATION_POINTWISE") ||
		   strstr(op_type, "BLOCK_SCALE")) {
		t = role(ts, n, "_YDESC");
		if (!t)
			t = role(ts, n, "_DXDESC");
		p->kind = DT_KIND_POINTWISE;
		p->flops = elements(t);
		p->dtype = dtype_of(role(ts, n, "_XDESC"));
		if (pw_mode && ends(pw_mode, "_GEN_INDEX"))
			p->index_gens = 1;
	} else if (strstr(op_type, "RESAMPLE")) {
		t = role(ts, n, "_YDESC");
		if (!t)
			t = role(ts, n, "_DXDESC");
		p->kind = DT_KIND_POOLING;
		p->flops = elements(t);
		p->dtype = dtype_of(t);
	} else if (strstr(op_type, "RESHAPE") || strstr(op_type, "CONCAT") ||
		   strstr(op_type, "BAND_MATRIX") ||
		   strstr(op_type, "PAGED_CACHE")) {
		p->kind = DT_KIND_TRANSFORM;
	} else if (strstr(op_type, "OPERATION_RNG")) {
		p->kind = DT_KIND_DROPOUT;
	}
}

/* Which kind names a graph: the heaviest operation in it. Attention built
 * from its parts (two matrix products around a softmax's reductions, five
 * and more going backward) is attention. */
static enum dt_op_kind graph_kind(const struct dt_cost_part *const *parts,
				  int n, uint32_t matmuls, uint32_t reductions)
{
	static const enum dt_op_kind rank[] = {
		DT_KIND_ATTN_BWD,        DT_KIND_ATTN_FWD,
		DT_KIND_CONV_FWD,        DT_KIND_CONV_BWD_DATA,
		DT_KIND_CONV_BWD_FILTER, DT_KIND_MATMUL,
		DT_KIND_NORM_FWD,        DT_KIND_NORM_BWD,
		DT_KIND_POOLING,         DT_KIND_REDUCTION,
		DT_KIND_POINTWISE,       DT_KIND_DROPOUT,
		DT_KIND_TRANSFORM,
	};

	if (matmuls >= 2 && reductions >= 1)
		return matmuls >= 3 ? DT_KIND_ATTN_BWD : DT_KIND_ATTN_FWD;
	for (size_t r = 0; r < sizeof(rank) / sizeof(rank[0]); r++)
		for (int i = 0; i < n; i++)
			if (parts[i] && parts[i]->kind == rank[r])
				return rank[r];
	return DT_KIND_OTHER;
}

void dt_cost_graph(struct dt_cost *c, const struct dt_cost_part *const *parts,
		   int n)
{
	uint32_t matmuls = 0, reductions = 0, index_gens = 0;
	double mm_flops = 0;
	/* distinct uids; a graph has a few dozen tensors at most */
	int64_t seen[256];
	int n_seen = 0;

	memset(c, 0, sizeof(*c));
	c->dtype = -1;
	for (int i = 0; i < n; i++) {
		const struct dt_cost_part *p = parts[i];
		if (!p)
			continue;
		c->flops += p->flops;
		matmuls += p->matmuls;
		reductions += p->reductions;
		index_gens += p->index_gens;
		if (p->matmuls)
			mm_flops += p->flops;
		for (uint32_t k = 0; k < p->n; k++) {
			bool dup = false;
			for (int s = 0; s < n_seen && !dup; s++)
				dup = seen[s] == p->t[k].uid;
			if (dup)
				continue;
			if (n_seen < (int)(sizeof(seen) / sizeof(seen[0])))
				seen[n_seen++] = p->t[k].uid;
			c->bytes += p->t[k].bytes;
		}
	}
	c->kind = graph_kind(parts, n, matmuls, reductions);
	/* attention masked by position (row and column indices compared: a
	 * causal mask) computes about half of its products; the kernels skip
	 * the masked blocks */
	if ((c->kind == DT_KIND_ATTN_FWD || c->kind == DT_KIND_ATTN_BWD) &&
	    index_gens >= 2)
		c->flops -= mm_flops / 2;
	/* the data type of the operation that named the kind; for attention
	 * built from parts, that of its first matrix product */
	enum dt_op_kind want =
		c->kind == DT_KIND_ATTN_FWD || c->kind == DT_KIND_ATTN_BWD
			? DT_KIND_MATMUL
			: c->kind;
	for (int i = 0; i < n && c->dtype < 0; i++)
		if (parts[i] &&
		    (parts[i]->kind == want || parts[i]->kind == c->kind))
			c->dtype = parts[i]->dtype;
	c->tensor_op = tensor_kind(c->kind);
}

/* -------------------------------------------------------------- legacy */

static const struct dt_legacy_arg *arg(const struct dt_legacy_arg *a, int n,
				       const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < n; i++)
		if (a[i].name_len == len && !strncmp(a[i].name, name, len))
			return &a[i];
	return NULL;
}

static const struct dt_tensor *tens(const struct dt_legacy_arg *a, int n,
				    const char *name)
{
	const struct dt_legacy_arg *x = arg(a, n, name);
	return x && x->t && x->t->valid ? x->t : NULL;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The RNN's matrix products: per time step, batch entry, layer and
 * direction, 2 x gates x hidden x (layer input + recurrent input). The
 * backward passes do the same products with the transposed weights. */
static double rnn_flops(const struct dt_legacy_arg *a, int n, dt_field_fn f)
{
	const struct dt_legacy_arg *rnn = arg(a, n, "rnnDesc"),
				   *x = arg(a, n, "xDesc");
	static const int gates[] = { 1, 1, 4, 3 }; /* RELU TANH LSTM GRU */

	if (!rnn || !rnn->desc || !x || !x->desc)
		return 0;
	int64_t cell = f(rnn->desc, "cellMode", -1);
	int64_t in = f(rnn->desc, "inputSize", 0);
	int64_t hid = f(rnn->desc, "hiddenSize", 0);
	int64_t proj = f(rnn->desc, "projSize", 0);
	int64_t layers = f(rnn->desc, "numLayers", 0);
	int64_t dirs = f(rnn->desc, "dirMode", 0) == 1 ? 2 : 1;
	int64_t steps = f(x->desc, "maxSeqLength", 0);
	int64_t batch = f(x->desc, "batchSize", 0);

	if (cell < 0 || cell > 3 || hid <= 0 || layers <= 0)
		return 0;
	int64_t out = proj > 0 && proj < hid ? proj : hid;
	double per_step = 0;
	for (int64_t l = 0; l < layers; l++) {
		int64_t lin = l ? out * dirs : in;
		per_step += (double)dirs * 2 * gates[cell] * (double)hid *
			    (double)(lin + out);
	}
	return per_step * (double)steps * (double)batch;
}

/* An RNN data descriptor's bytes: steps x batch x vector. */
static uint64_t rnn_data_bytes(const struct dt_legacy_arg *d, dt_field_fn f)
{
	if (!d || !d->desc)
		return 0;
	int64_t steps = f(d->desc, "maxSeqLength", 0);
	int64_t batch = f(d->desc, "batchSize", 0);
	int64_t vec = f(d->desc, "vectorSize", 0);
	int64_t bits = dt_dtype_bits(f(d->desc, "dataType", -1));
	if (steps <= 0 || batch <= 0 || vec <= 0)
		return 0;
	return ((uint64_t)steps * (uint64_t)batch * (uint64_t)vec *
			(uint64_t)bits +
		7) /
	       8;
}

static double window(const struct dt_legacy_arg *pool, dt_field_fn f)
{
	if (!pool || !pool->desc)
		return 1;
	int64_t h = f(pool->desc, "windowHeight", 0),
		w = f(pool->desc, "windowWidth", 0);
	if (h > 0 && w > 0)
		return (double)h * (double)w;
	/* Nd pooling keeps only the first window dimension here */
	int64_t d = f(pool->desc, "windowDimA", 0);
	return d > 0 ? (double)d : 1;
}

void dt_cost_legacy(struct dt_cost *c, const char *api,
		    const struct dt_legacy_arg *a, int n, dt_field_fn f)
{
	const char *s = api + (starts(api, "cudnn") ? 5 : 0);
	const struct dt_tensor *t;

	memset(c, 0, sizeof(*c));
	c->dtype = -1;
	/* bytes: every tensor argument once */
	for (int i = 0; i < n; i++)
		c->bytes += dt_tensor_bytes(a[i].t);

	if (starts(s, "Find") || strstr(s, "AlgorithmEx")) {
		c->kind = DT_KIND_SEARCH;
		c->bytes = 0;
	} else if (starts(s, "ConvolutionForward") ||
		   starts(s, "ConvolutionBiasActivationForward")) {
		t = tens(a, n, "yDesc");
		c->kind = DT_KIND_CONV_FWD;
		c->flops = 2 * elements(t) * per_output(tens(a, n, "wDesc"));
		if (starts(s, "ConvolutionBias"))
			c->flops += 2 * elements(t);
		c->dtype = dtype_of(tens(a, n, "xDesc"));
	} else if (starts(s, "ConvolutionBackwardData")) {
		c->kind = DT_KIND_CONV_BWD_DATA;
		c->flops = 2 * elements(tens(a, n, "dyDesc")) *
			   per_output(tens(a, n, "wDesc"));
		c->dtype = dtype_of(tens(a, n, "dyDesc"));
	} else if (starts(s, "ConvolutionBackwardFilter")) {
		c->kind = DT_KIND_CONV_BWD_FILTER;
		c->flops = 2 * elements(tens(a, n, "dyDesc")) *
			   per_output(tens(a, n, "dwDesc"));
		c->dtype = dtype_of(tens(a, n, "xDesc"));
	} else if (starts(s, "ConvolutionBackwardBias")) {
		t = tens(a, n, "dyDesc");
		c->kind = DT_KIND_REDUCTION;
		c->flops = elements(t);
		c->dtype = dtype_of(t);
	} else if (starts(s, "BatchNormalizationForward") ||
		   starts(s, "NormalizationForward")) {
		t = tens(a, n, "xDesc");
		c->kind = DT_KIND_NORM_FWD;
		c->flops = (strstr(s, "Inference") ? 4 : 8) * elements(t);
		c->dtype = dtype_of(t);
	} else if (starts(s, "BatchNormalizationBackward") ||
		   starts(s, "NormalizationBackward")) {
		t = tens(a, n, "xDesc");
		c->kind = DT_KIND_NORM_BWD;
		c->flops = 12 * elements(t);
		c->dtype = dtype_of(t);
	} else if (starts(s, "Activation")) {
		t = tens(a, n, strstr(s, "Backward") ? "dxDesc" : "yDesc");
		c->kind = DT_KIND_POINTWISE;
		c->flops = (strstr(s, "Backward") ? 2 : 1) * elements(t);
		c->dtype = dtype_of(t);
	} else if (starts(s, "Softmax")) {
		bool bwd = strstr(s, "Backward") != NULL;
		t = tens(a, n, bwd ? "dxDesc" : "yDesc");
		c->kind = DT_KIND_SOFTMAX;
		c->flops = (bwd ? 4 : 5) * elements(t);
		c->dtype = dtype_of(t);
	} else if (starts(s, "Pooling")) {
		bool bwd = strstr(s, "Backward") != NULL;
		t = tens(a, n, bwd ? "dyDesc" : "yDesc");
		c->kind = DT_KIND_POOLING;
		c->flops = elements(t) * window(arg(a, n, "poolingDesc"), f);
		c->dtype = dtype_of(t);
	} else if (starts(s, "AddTensor") || starts(s, "OpTensor") ||
		   starts(s, "ScaleTensor") || starts(s, "SetTensor")) {
		t = tens(a, n, "cDesc");
		if (!t)
			t = tens(a, n, "yDesc");
		c->kind = DT_KIND_POINTWISE;
		c->flops = elements(t);
		c->dtype = dtype_of(t);
	} else if (starts(s, "ReduceTensor")) {
		t = tens(a, n, "aDesc");
		c->kind = DT_KIND_REDUCTION;
		c->flops = elements(t);
		c->dtype = dtype_of(t);
	} else if (starts(s, "TransformTensor") ||
		   starts(s, "TransformFilter")) {
		c->kind = DT_KIND_TRANSFORM;
		c->dtype = dtype_of(tens(a, n, "xDesc"));
	} else if (starts(s, "RNNForward") || starts(s, "RNNBackward")) {
		const struct dt_legacy_arg *w = arg(a, n, "weightSpaceSize");
		c->kind = starts(s, "RNNForward") ? DT_KIND_RNN_FWD
			  : starts(s, "RNNBackwardData")
				  ? DT_KIND_RNN_BWD_DATA
				  : DT_KIND_RNN_BWD_WEIGHTS;
		c->flops = rnn_flops(a, n, f);
		c->bytes += rnn_data_bytes(arg(a, n, "xDesc"), f) +
			    rnn_data_bytes(arg(a, n, "yDesc"), f) +
			    (w && w->value > 0 ? (uint64_t)w->value : 0);
		const struct dt_legacy_arg *r = arg(a, n, "rnnDesc");
		c->dtype = r && r->desc ? f(r->desc, "dataType", -1) : -1;
	} else if (starts(s, "MultiHeadAttnForward")) {
		c->kind = DT_KIND_ATTN_FWD;
	} else if (starts(s, "MultiHeadAttnBackward")) {
		c->kind = DT_KIND_ATTN_BWD;
	} else if (starts(s, "Dropout")) {
		t = tens(a, n, "ydesc");
		c->kind = DT_KIND_DROPOUT;
		c->flops = elements(t);
		c->dtype = dtype_of(t);
	} else if (starts(s, "CTCLoss")) {
		c->kind = DT_KIND_CTC;
	} else if (starts(s, "Create") || starts(s, "SetDropout") ||
		   starts(s, "RestoreDropout") || starts(s, "Set") ||
		   starts(s, "Get")) {
		c->kind = DT_KIND_SETUP;
		c->bytes = 0;
	} else if (starts(s, "LRN") || starts(s, "DivisiveNormalization")) {
		t = tens(a, n, "xDesc");
		c->kind = DT_KIND_NORM_FWD;
		if (strstr(s, "Backward"))
			c->kind = DT_KIND_NORM_BWD;
		c->dtype = dtype_of(t);
	}
	c->tensor_op = tensor_kind(c->kind);
}
