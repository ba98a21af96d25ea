/*
 * replay-fuse-heads.c - a fusion what-if's head made a cuDNN backend
 * graph where the program ran none: a legacy convolution (forward or
 * backward data) from the descriptors its call was given (struct
 * dt_cudnn_call: shapes, strides and types, padding, strides, dilation,
 * mode, compute type), a cuBLAS or cuBLASLt GEMM from its op's recipe
 * and tensors as a cuDNN matmul (its own epilogue a pointwise node per
 * operation). replay-fuse.c extends either with the chain's steps as it
 * does a recorded graph. Not the call made again: replay-legacy.c makes
 * a legacy call again, and a GEMM is not run through cuBLAS here.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "replay-fuse.h"

/* ---------------------------------------------------- legacy calls */

/* A legacy convolution as a backend operation: the call's three
 * descriptors (uids 1, 2 and 3, in the call's order) and the operation's
 * attributes for them, after CUDNN_ATTR_OPERATION_<prefix>. */
static const struct legacy_conv {
	const char *api, *op, *prefix;
	const char *desc[3], *attr[3];
} legacy_convs[] = {
	{ "cudnnConvolutionForward",
	  "OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR",
	  "CONVOLUTION_FORWARD_",
	  { "xDesc", "wDesc", "yDesc" },
	  { "X", "W", "Y" } },
	{ "cudnnConvolutionBackwardData",
	  "OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR",
	  "CONVOLUTION_BWD_DATA_",
	  { "wDesc", "dyDesc", "dxDesc" },
	  { "W", "DY", "DX" } },
};

static int64_t op_attr(const struct legacy_conv *lc, const char *what)
{
	char n[96];

	snprintf(n, sizeof(n), "OPERATION_%s%s", lc->prefix, what);
	return fz_attr(n);
}

static int64_t field(const struct dt_cudnn_arg *a, const char *name,
		     int64_t def)
{
	const struct dt_cudnn_field *f = dt_cudnn_field_find(a, name);

	return f ? f->v[0] : def;
}

/* The convolution descriptor's spatial values, from either setter: n of
 * them (2 for a 2-D setter's). False when the trace lacks them. */
static bool conv_values(const struct dt_cudnn_arg *a, int64_t *n, int64_t pad[],
			int64_t stride[], int64_t dil[])
{
	static const char *const nd[3] = { "padA", "filterStrideA",
					   "dilationA" };
	static const char *const two[3][2] = { { "pad_h", "pad_w" },
					       { "u", "v" },
					       { "dilation_h", "dilation_w" } };
	int64_t *out[3] = { pad, stride, dil };

	*n = field(a, "arrayLength", 0);
	if (*n <= 0) {
		*n = 2;
		for (int k = 0; k < 3; k++)
			for (int i = 0; i < 2; i++)
				out[k][i] = field(a, two[k][i], k ? 1 : 0);
		return true;
	}
	for (int k = 0; k < 3; k++) {
		const struct dt_cudnn_field *f = dt_cudnn_field_find(a, nd[k]);
		if (!f || f->code != 'a' || f->count < *n || *n > DT_MAX_DIMS)
			return false;
		memcpy(out[k], f->v, (size_t)*n * 8);
	}
	return true;
}

/* The convolution descriptor made from the call's; its index. */
static int64_t legacy_conv_desc(struct syn *s, const struct dt_cudnn_arg *a,
				char *why, size_t whylen)
{
	int64_t n, pad[DT_MAX_DIMS], stride[DT_MAX_DIMS], dil[DT_MAX_DIMS];
	int64_t i64 = fz_type("INT64");

	if (!a || !conv_values(a, &n, pad, stride, dil)) {
		snprintf(why, whylen,
			 "its head's convolution descriptor is not in the "
			 "trace");
		return -1;
	}
	int64_t d = syn_desc(s, fz_desc("CONVOLUTION_DESCRIPTOR"));
	syn_i64(s, fz_attr("CONVOLUTION_COMP_TYPE"), fz_type("DATA_TYPE"),
		field(a, "computeType", 0));
	syn_i64(s, fz_attr("CONVOLUTION_CONV_MODE"),
		fz_type("CONVOLUTION_MODE"), field(a, "mode", 0));
	syn_i64(s, fz_attr("CONVOLUTION_SPATIAL_DIMS"), i64, n);
	syn_attr(s, fz_attr("CONVOLUTION_DILATIONS"), i64, dil,
		 (uint32_t)n * 8);
	syn_attr(s, fz_attr("CONVOLUTION_FILTER_STRIDES"), i64, stride,
		 (uint32_t)n * 8);
	syn_attr(s, fz_attr("CONVOLUTION_PRE_PADDINGS"), i64, pad,
		 (uint32_t)n * 8);
	syn_attr(s, fz_attr("CONVOLUTION_POST_PADDINGS"), i64, pad,
		 (uint32_t)n * 8);
	return d;
}

/* alpha or beta as the program passed it: a double's 8 bytes, else a
 * float's. */
static void legacy_scale(struct syn *s, const struct legacy_conv *lc,
			 const struct dt_cudnn_arg *a, const char *what)
{
	bool dbl = a->width == 8;

	syn_attr(s, op_attr(lc, what), fz_type(dbl ? "DOUBLE" : "FLOAT"),
		 a->host, dbl ? 8 : 4);
}

bool fuse_legacy_head(struct syn *s, const struct dt_cudnn_call *c, char *why,
		      size_t whylen)
{
	const struct legacy_conv *lc = NULL;
	int64_t t[3];

	for (size_t i = 0; i < sizeof(legacy_convs) / sizeof(legacy_convs[0]);
	     i++)
		if (!strcmp(c->api, legacy_convs[i].api))
			lc = &legacy_convs[i];
	if (!lc) {
		snprintf(why, whylen,
			 "its head is a legacy %s: a fused graph is built "
			 "from a convolution forward or backward data",
			 c->api);
		return false;
	}
	const struct dt_cudnn_arg *alpha = dt_cudnn_arg_find(c, "alpha"),
				  *beta = dt_cudnn_arg_find(c, "beta");
	if (!alpha || !beta || !alpha->width || !beta->width) {
		snprintf(why, whylen,
			 "its head's alpha and beta are not in the trace");
		return false;
	}
	for (int i = 0; i < 3; i++) {
		const struct dt_cudnn_arg *a =
			dt_cudnn_arg_find(c, lc->desc[i]);
		const struct dt_tensor *x = a ? a->t : NULL;
		if (!x || x->nb < 3 || x->nb > DT_MAX_DIMS) {
			snprintf(why, whylen,
				 "its head's %s is not in the trace",
				 lc->desc[i]);
			return false;
		}
		t[i] = syn_tensor_new(s, fz_cudnn_dtype(x->dtype), i + 1, false,
				      x->dims, x->strides, (uint32_t)x->nb);
	}
	int64_t conv = legacy_conv_desc(s, dt_cudnn_arg_find(c, "convDesc"),
					why, whylen);
	if (conv < 0)
		return false;
	int64_t op = syn_desc(s, fz_desc(lc->op));
	legacy_scale(s, lc, alpha, "ALPHA");
	legacy_scale(s, lc, beta, "BETA");
	syn_attr(s, op_attr(lc, "CONV_DESC"), fz_type("BACKEND_DESCRIPTOR"),
		 &conv, 8);
	for (int i = 0; i < 3; i++)
		syn_attr(s, op_attr(lc, lc->attr[i]),
			 fz_type("BACKEND_DESCRIPTOR"), &t[i], 8);
	syn_graph(s, &op, 1);
	if (s->full)
		snprintf(why, whylen, "its head's graph is too large here");
	return !s->full;
}

const char *fuse_legacy_fused_call(const struct fuse_chain *c,
				   const struct problem *head)
{
	/* y = act(conv(x) + bias): a bias of the channels, then an
	 * activation the call's descriptor names */
	static const uint8_t acts[] = { DT_KOP_RELU, DT_KOP_SIGMOID,
					DT_KOP_TANH };
	bool act = false;

	if (!head || !head->call ||
	    strcmp(head->call->api, "cudnnConvolutionForward") ||
	    c->n_steps != 3 || c->steps[1].op != DT_KOP_ADD || c->steps[1].full)
		return NULL;
	for (size_t i = 0; i < sizeof(acts); i++)
		act |= c->steps[2].op == acts[i];
	return act ? "cudnnConvolutionBiasActivationForward" : NULL;
}

/* ------------------------------------------------------------ GEMMs */

static bool param(const struct problem *p, const char *name, int64_t *v)
{
	for (uint32_t i = 0; i < p->recipe.n_params; i++)
		if (!strcmp(p->recipe.params[i].name, name)) {
			*v = (int64_t)p->recipe.params[i].value;
			return true;
		}
	return false;
}

static const struct dt_tensor *matrix(const struct problem *p, const char *role)
{
	for (uint32_t i = 0; i < p->n_tensors; i++)
		if (!strcmp(p->tensors[i].role, role) &&
		    !p->tensors[i].t.is_virtual && p->tensors[i].t.nb == 3)
			return &p->tensors[i].t;
	return NULL;
}

bool fuse_is_gemm(const struct problem *p)
{
	int64_t v;

	return !p->graph && !p->call && p->recipe.n_nodes &&
	       p->recipe.nodes[0].kind == DT_KIND_MATMUL &&
	       param(p, "transa", &v) && matrix(p, "A") && matrix(p, "B");
}

/* A stored (column-major) matrix as the logical operand cuDNN's matmul
 * reads, [batch, rows, cols] of op(X): transposed, its two strides
 * swap. */
static int64_t operand(struct syn *s, const struct dt_tensor *t, bool trans,
		       int64_t uid)
{
	int64_t dims[3] = { t->dims[0], trans ? t->dims[2] : t->dims[1],
			    trans ? t->dims[1] : t->dims[2] };
	int64_t strides[3] = { t->strides[0],
			       trans ? t->strides[2] : t->strides[1],
			       trans ? t->strides[1] : t->strides[2] };

	return syn_tensor_new(s, fz_cudnn_dtype(t->dtype), uid, false, dims,
			      strides, 3);
}

/* The pointwise mode of a GEMM epilogue's operation; -1 one no pointwise
 * node computes (a gradient's). */
static int64_t epilogue_mode(const char *name)
{
	static const char *const modes[][2] = {
		{ "bias", "CUDNN_POINTWISE_ADD" },
		{ "relu", "CUDNN_POINTWISE_RELU_FWD" },
		/* cuBLASLt's GELU is the tanh approximation */
		{ "gelu", "CUDNN_POINTWISE_GELU_APPROX_TANH_FWD" },
	};

	for (size_t i = 0; name && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(name, modes[i][0]))
			return dt_enum_value("cudnnPointwiseMode_t",
					     modes[i][1], -1);
	return -1;
}

/* The epilogue's operations after the product c (a virtual FLOAT
 * tensor), the last writing d; their indices appended to ops. */
static bool gemm_epilogue(struct syn *s, const struct problem *p,
			  const struct dt_tensor *dt, int64_t c, int64_t d,
			  int64_t *ops, uint32_t *n, char *why, size_t whylen)
{
	int64_t x = c, next_uid = 4;

	for (uint32_t i = 1; i < p->recipe.n_nodes; i++) {
		const char *name = p->recipe.nodes[i].name;
		int64_t mode = epilogue_mode(name), b = -1;
		if (mode < 0) {
			snprintf(why, whylen,
				 "its head's epilogue (%s) is no pointwise "
				 "operation",
				 name ? name : "?");
			return false;
		}
		if (!strcmp(name, "bias")) {
			/* a vector of D's rows, as cuBLASLt's (in D's type:
			 * the trace keeps the bias's own type only where
			 * it was set) */
			int64_t dims[3] = { 1, dt->dims[1], 1 };
			int64_t strides[3] = { dt->dims[1], 1, dt->dims[1] };
			b = syn_tensor_new(s, fz_cudnn_dtype(dt->dtype),
					   next_uid++, false, dims, strides, 3);
		}
		int64_t y = i + 1 == p->recipe.n_nodes
				    ? d
				    : syn_tensor_new(s, fz_data("FLOAT"),
						     next_uid++, true, dt->dims,
						     dt->strides, 3);
		ops[(*n)++] = syn_pointwise_op(s, mode, x, b, y);
		x = y;
	}
	return true;
}

bool fuse_gemm_head(struct syn *s, const struct problem *p, char *why,
		    size_t whylen)
{
	const struct dt_tensor *a = matrix(p, "A"), *b = matrix(p, "B"),
			       *d = matrix(p, "D");
	int64_t ta = 0, tb = 0, ops[4];
	uint32_t n = 0;

	if (!d)
		d = matrix(p, "C"); /* cuBLAS writes C in place */
	param(p, "transa", &ta);
	param(p, "transb", &tb);
	if (!fuse_is_gemm(p) || !d || p->recipe.n_nodes > 3) {
		snprintf(why, whylen,
			 "its head is no GEMM whose matrices the trace "
			 "holds");
		return false;
	}
	if (fz_cudnn_dtype(a->dtype) < 0 || fz_cudnn_dtype(b->dtype) < 0 ||
	    fz_cudnn_dtype(d->dtype) < 0) {
		snprintf(why, whylen,
			 "its head's matrices are of types cuDNN's matmul "
			 "does not take");
		return false;
	}
	bool dbl = d->dtype == DT_DTYPE_DOUBLE;
	int64_t ad = operand(s, a, ta != 0, 1), bd = operand(s, b, tb != 0, 2);
	int64_t dd = syn_tensor_new(s, fz_cudnn_dtype(d->dtype), 3, false,
				    d->dims, d->strides, 3);
	/* with an epilogue, the product is an intermediate on chip */
	int64_t cd = p->recipe.n_nodes > 1
			     ? syn_tensor_new(s, fz_data("FLOAT"), 10, true,
					      d->dims, d->strides, 3)
			     : dd;
	int64_t mm = syn_desc(s, fz_desc("MATMUL_DESCRIPTOR"));
	syn_i64(s, fz_attr("MATMUL_COMP_TYPE"), fz_type("DATA_TYPE"),
		fz_data(dbl ? "DOUBLE" : "FLOAT"));
	ops[n++] = syn_desc(s, fz_desc("OPERATION_MATMUL_DESCRIPTOR"));
	syn_attr(s, fz_attr("OPERATION_MATMUL_ADESC"),
		 fz_type("BACKEND_DESCRIPTOR"), &ad, 8);
	syn_attr(s, fz_attr("OPERATION_MATMUL_BDESC"),
		 fz_type("BACKEND_DESCRIPTOR"), &bd, 8);
	syn_attr(s, fz_attr("OPERATION_MATMUL_CDESC"),
		 fz_type("BACKEND_DESCRIPTOR"), &cd, 8);
	syn_attr(s, fz_attr("OPERATION_MATMUL_DESC"),
		 fz_type("BACKEND_DESCRIPTOR"), &mm, 8);
	if (!gemm_epilogue(s, p, d, cd, dd, ops, &n, why, whylen))
		return false;
	syn_graph(s, ops, n);
	if (s->full)
		snprintf(why, whylen, "its head's graph is too large here");
	return !s->full;
}
