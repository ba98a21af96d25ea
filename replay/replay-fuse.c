/*
 * replay-fuse.c - the fusion what-if, measured: for each chain the fusion
 * analysis calls fusable (analyzer/FUSION.md, asked through dt-fusion.h),
 * the fused cuDNN graph is built from the chain's head (the graph its
 * decoder kept, struct dt_cudnn_graph, of one operation or several; or
 * one replay-fuse-heads.c makes of a legacy convolution or a GEMM) with
 * a pointwise node per step after it (a bias of the output's innermost
 * dimension, a whole residual, activations, casts) and virtual
 * intermediates, in the recorded layout and types; the engines cuDNN's
 * heuristics offer for it are timed as a problem's are (replay-graph.c),
 * and so are the unfused steps: the head as replay runs it (or, a GEMM,
 * by its time in the trace), each kernel after it by its recorded time,
 * and alone as a pointwise-only graph where cuDNN runs one; then the
 * fused output is held against the unfused chain's (replay-fuse-check.c).
 * What it is not: a GEMM run through cuBLAS, or a prologue's chain.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-fuse.h"
/* ------------------------------------------------------ the chains */

static void keep_chain(struct fuse_chains *fc, const struct dt_fz_opp *o)
{
	struct fuse_chain *v = realloc(fc->v, (fc->n + 1) * sizeof(*v));

	if (!v)
		return;
	fc->v = v;
	struct fuse_chain *c = &v[fc->n++];
	memset(c, 0, sizeof(*c));
	c->key = strdup(o->key);
	c->pattern = strdup(o->pattern);
	c->count = o->count;
	c->priced_ns = o->count ? o->saving_ns / (double)o->count : 0;
	for (int m = 0; m < o->n_steps; m++) {
		const struct dt_fz_step *s = &o->steps[m];
		struct fuse_step *f = &c->steps[c->n_steps++];
		f->what = strdup(s->what);
		f->problem = s->problem ? strdup(s->problem) : NULL;
		f->op = s->op;
		f->full = s->full;
		f->cudnn = s->cudnn;
		f->dtype = s->dtype;
		f->elems = s->elems;
		f->ns = o->count ? s->ns / o->count : 0;
	}
}

int fuse_read(const char *path, struct fuse_chains *fc, char *err,
	      size_t errlen)
{
	struct dt_session_opts so = { .pointers = true };
	struct dt_fusion *fz = dt_fusion_new();
	struct dt_session *ss =
		fz ? dt_session_open(path, &so, NULL, err, errlen) : NULL;

	memset(fc, 0, sizeof(*fc));
	if (!ss) {
		if (!fz)
			snprintf(err, errlen, "out of memory");
		dt_fusion_free(fz);
		return -1;
	}
	dt_fusion_begin_file(fz, ss);
	dt_session_run(ss);
	dt_fusion_end_file(fz);
	dt_fusion_finish(fz);
	for (size_t i = 0; i < fz->n_opps; i++)
		if (fz->opps[i].status == DT_FZ_FUSABLE)
			keep_chain(fc, &fz->opps[i]);
	dt_session_close(ss);
	dt_fusion_free(fz);
	return 0;
}

void fuse_free(struct fuse_chains *fc)
{
	for (size_t i = 0; i < fc->n; i++) {
		free(fc->v[i].key);
		free(fc->v[i].pattern);
		for (int m = 0; m < fc->v[i].n_steps; m++) {
			free(fc->v[i].steps[m].what);
			free(fc->v[i].steps[m].problem);
		}
	}
	free(fc->v);
	memset(fc, 0, sizeof(*fc));
}

/* ------------------------------------------------ cuDNN's enumerators */

static int64_t ev(const char *type, const char *prefix, const char *name)
{
	char n[128];

	snprintf(n, sizeof(n), "%s%s", prefix, name);
	return dt_enum_value(type, n, -1);
}

int64_t fz_attr(const char *name)
{
	return ev("cudnnBackendAttributeName_t", "CUDNN_ATTR_", name);
}

int64_t fz_desc(const char *name)
{
	return ev("cudnnBackendDescriptorType_t", "CUDNN_BACKEND_", name);
}

int64_t fz_type(const char *name)
{
	return ev("cudnnBackendAttributeType_t", "CUDNN_TYPE_", name);
}

int64_t fz_data(const char *name)
{
	return ev("cudnnDataType_t", "CUDNN_DATA_", name);
}

/* Those used for every graph, looked up once. */
static struct {
	bool done;
	int64_t t_handle, t_desc, t_int64, t_bool, t_dtype, t_pw_mode;
	int64_t bt_tensor, bt_pw, bt_op_pw, bt_graph;
	int64_t a_t_dtype, a_t_dims, a_t_strides, a_t_uid, a_t_virtual,
		a_t_align;
	int64_t a_pw_mode, a_pw_prec, a_op_pw, a_op_x, a_op_b, a_op_y;
	int64_t a_graph_ops, a_graph_handle;
	int64_t float_type;
} E;

static void enums(void)
{
	if (E.done)
		return;
	E.t_handle = fz_type("HANDLE");
	E.t_desc = fz_type("BACKEND_DESCRIPTOR");
	E.t_int64 = fz_type("INT64");
	E.t_bool = fz_type("BOOLEAN");
	E.t_dtype = fz_type("DATA_TYPE");
	E.t_pw_mode = fz_type("POINTWISE_MODE");
	E.bt_tensor = fz_desc("TENSOR_DESCRIPTOR");
	E.bt_pw = fz_desc("POINTWISE_DESCRIPTOR");
	E.bt_op_pw = fz_desc("OPERATION_POINTWISE_DESCRIPTOR");
	E.bt_graph = fz_desc("OPERATIONGRAPH_DESCRIPTOR");
	E.a_t_dtype = fz_attr("TENSOR_DATA_TYPE");
	E.a_t_dims = fz_attr("TENSOR_DIMENSIONS");
	E.a_t_strides = fz_attr("TENSOR_STRIDES");
	E.a_t_uid = fz_attr("TENSOR_UNIQUE_ID");
	E.a_t_virtual = fz_attr("TENSOR_IS_VIRTUAL");
	E.a_t_align = fz_attr("TENSOR_BYTE_ALIGNMENT");
	E.a_pw_mode = fz_attr("POINTWISE_MODE");
	E.a_pw_prec = fz_attr("POINTWISE_MATH_PREC");
	E.a_op_pw = fz_attr("OPERATION_POINTWISE_PW_DESCRIPTOR");
	E.a_op_x = fz_attr("OPERATION_POINTWISE_XDESC");
	E.a_op_b = fz_attr("OPERATION_POINTWISE_BDESC");
	E.a_op_y = fz_attr("OPERATION_POINTWISE_YDESC");
	E.a_graph_ops = fz_attr("OPERATIONGRAPH_OPS");
	E.a_graph_handle = fz_attr("OPERATIONGRAPH_HANDLE");
	E.float_type = fz_data("FLOAT");
	E.done = true;
}

/* The attribute of an operation that names the tensor it writes; -1 for
 * an operation whose output is not followed here. */
static int64_t output_attr(int64_t op_type)
{
	static const char *const outs[][2] = {
		{ "CONVOLUTION_FORWARD", "CONVOLUTION_FORWARD_Y" },
		{ "CONVOLUTION_BACKWARD_DATA", "CONVOLUTION_BWD_DATA_DX" },
		{ "CONVOLUTION_BACKWARD_FILTER", "CONVOLUTION_BWD_FILTER_DW" },
		{ "MATMUL", "MATMUL_CDESC" },
		{ "POINTWISE", "POINTWISE_YDESC" },
	};
	char n[96];

	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		snprintf(n, sizeof(n), "OPERATION_%s_DESCRIPTOR", outs[i][0]);
		if (fz_desc(n) != op_type)
			continue;
		snprintf(n, sizeof(n), "OPERATION_%s", outs[i][1]);
		return fz_attr(n);
	}
	return -1;
}

/* The pointwise mode a kernel's class is, and whether it takes a second
 * operand; -1 for a class no pointwise node computes. */
static int64_t pw_mode(uint8_t op, bool *binary)
{
	static const struct {
		uint8_t op;
		const char *mode;
		bool binary;
	} modes[] = {
		{ DT_KOP_ADD, "CUDNN_POINTWISE_ADD", true },
		{ DT_KOP_MUL, "CUDNN_POINTWISE_MUL", true },
		{ DT_KOP_RELU, "CUDNN_POINTWISE_RELU_FWD", false },
		{ DT_KOP_GELU, "CUDNN_POINTWISE_GELU_FWD", false },
		{ DT_KOP_SILU, "CUDNN_POINTWISE_SWISH_FWD", false },
		{ DT_KOP_SIGMOID, "CUDNN_POINTWISE_SIGMOID_FWD", false },
		{ DT_KOP_TANH, "CUDNN_POINTWISE_TANH_FWD", false },
		{ DT_KOP_COPY, "CUDNN_POINTWISE_IDENTITY", false },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].op == op) {
			*binary = modes[i].binary;
			return dt_enum_value("cudnnPointwiseMode_t",
					     modes[i].mode, -1);
		}
	return -1;
}

int64_t fz_cudnn_dtype(int64_t dtype)
{
	char ty[DT_DTYPE_NAME_SIZE];

	return dtype < 0 ? -1 : fz_data(dt_dtype_name(dtype, ty, sizeof(ty)));
}

/* --------------------------------------------------- a graph as data */

int64_t syn_desc(struct syn *s, int64_t type)
{
	if (s->g.n_descs == SYN_DESCS || type < 0) {
		s->full = true;
		return -1;
	}
	struct dt_cudnn_desc *d = &s->descs[s->g.n_descs];
	*d = (struct dt_cudnn_desc){ .type = type,
				     .attrs = &s->attrs[s->n_attrs] };
	return s->g.n_descs++;
}

void syn_attr(struct syn *s, int64_t name, int64_t type, const void *v,
	      uint32_t bytes)
{
	if (!s->g.n_descs || s->n_attrs == SYN_ATTRS ||
	    bytes > SYN_BYTES - s->used || name < 0) {
		s->full = true;
		return;
	}
	memcpy(s->data + s->used, v, bytes);
	s->attrs[s->n_attrs++] =
		(struct dt_cudnn_attr){ .name = name,
					.type = type,
					.bytes = bytes,
					.data = s->data + s->used };
	s->descs[s->g.n_descs - 1].n_attrs++;
	s->used += bytes;
}

void syn_i64(struct syn *s, int64_t name, int64_t type, int64_t v)
{
	uint32_t es = dt_backend_type_size(type);

	syn_attr(s, name, type, &v, es ? es : 8); /* little endian */
}

int64_t syn_tensor_new(struct syn *s, int64_t dtype, int64_t uid, bool virt,
		       const int64_t *dims, const int64_t *strides, uint32_t n)
{
	int64_t i = syn_desc(s, E.bt_tensor);
	uint8_t yes = virt;

	syn_i64(s, E.a_t_dtype, E.t_dtype, dtype);
	syn_attr(s, E.a_t_dims, E.t_int64, dims, n * 8);
	syn_attr(s, E.a_t_strides, E.t_int64, strides, n * 8);
	syn_attr(s, E.a_t_uid, E.t_int64, &uid, 8);
	syn_attr(s, E.a_t_virtual, E.t_bool, &yes, 1);
	syn_i64(s, E.a_t_align, E.t_int64, 16);
	return i;
}

/* A copy of tensor t of bp: of type dtype, uid, virtual or not, and of
 * dims and strides (n of them) where given, its own otherwise. */
static int64_t syn_tensor(struct syn *s, const struct dt_cudnn_graph *bp,
			  uint32_t t, int64_t dtype, int64_t uid, bool virt,
			  const int64_t *dims, const int64_t *strides,
			  uint32_t n)
{
	const struct dt_cudnn_desc *d = &bp->descs[t];
	int64_t i = syn_desc(s, E.bt_tensor);
	uint8_t yes = virt;

	if (i < 0)
		return -1;
	for (uint32_t k = 0; k < d->n_attrs; k++) {
		const struct dt_cudnn_attr *a = &d->attrs[k];
		if (a->name != E.a_t_dtype && a->name != E.a_t_uid &&
		    a->name != E.a_t_virtual &&
		    (!dims ||
		     (a->name != E.a_t_dims && a->name != E.a_t_strides)))
			syn_attr(s, a->name, a->type, a->data, a->bytes);
	}
	syn_i64(s, E.a_t_dtype, E.t_dtype, dtype);
	syn_attr(s, E.a_t_uid, E.t_int64, &uid, 8);
	syn_attr(s, E.a_t_virtual, E.t_bool, &yes, 1);
	if (dims) {
		syn_attr(s, E.a_t_dims, E.t_int64, dims, n * 8);
		syn_attr(s, E.a_t_strides, E.t_int64, strides, n * 8);
	}
	return i;
}

int64_t syn_pointwise_op(struct syn *s, int64_t mode, int64_t x, int64_t b,
			 int64_t y)
{
	int64_t pw = syn_desc(s, E.bt_pw);

	syn_i64(s, E.a_pw_mode, E.t_pw_mode, mode);
	syn_i64(s, E.a_pw_prec, E.t_dtype, E.float_type);
	int64_t op = syn_desc(s, E.bt_op_pw);
	syn_attr(s, E.a_op_pw, E.t_desc, &pw, 8);
	syn_attr(s, E.a_op_x, E.t_desc, &x, 8);
	if (b >= 0)
		syn_attr(s, E.a_op_b, E.t_desc, &b, 8);
	syn_attr(s, E.a_op_y, E.t_desc, &y, 8);
	return op;
}

void syn_graph(struct syn *s, const int64_t *ops, uint32_t n)
{
	int64_t none = 0;
	int64_t i = syn_desc(s, E.bt_graph);

	syn_attr(s, E.a_graph_handle, E.t_handle, &none, 8);
	syn_attr(s, E.a_graph_ops, E.t_desc, ops, n * 8);
	s->g.descs = s->descs;
	s->g.root = i < 0 ? 0 : (uint32_t)i;
	s->g.complete = !s->full;
}

/* ------------------------------------------------------ the head */

/* The most operations a head's graph may have here. */
#define HEAD_OPS 8

/* What the head's graph is made of: its operations, the one tensor they
 * write (the others are virtual), its largest uid. */
struct head {
	const struct dt_cudnn_graph *bp;
	int64_t ops[HEAD_OPS];
	uint32_t n_ops;
	uint32_t out;
	int64_t max_uid;
};

static int64_t desc_ref(const struct dt_cudnn_attr *a, uint32_t i)
{
	int64_t x = -1;

	if (a && a->bytes >= 8 * (i + 1))
		memcpy(&x, a->data + 8 * i, 8);
	return x;
}

static int64_t attr_i64(const struct dt_cudnn_graph *bp, uint32_t d,
			int64_t name)
{
	const struct dt_cudnn_attr *a = dt_cudnn_attr_find(bp, d, name);
	int64_t v = 0;

	if (a && a->bytes && a->bytes <= 8)
		memcpy(&v, a->data, a->bytes);
	return v;
}

/* The tensor the head's operations write: the one that is not virtual.
 * False with why when there is none, or more than one. */
static bool head_output(struct head *h, char *why, size_t whylen)
{
	const struct dt_cudnn_graph *bp = h->bp;
	int outs = 0;

	for (uint32_t i = 0; i < h->n_ops; i++) {
		const struct dt_cudnn_desc *op = &bp->descs[h->ops[i]];
		int64_t y = desc_ref(dt_cudnn_attr_find(bp, (uint32_t)h->ops[i],
							output_attr(op->type)),
				     0);
		if (y < 0 || y >= h->ops[i]) {
			char tn[96];
			snprintf(why, whylen,
				 "its head's graph has an operation (%s) "
				 "whose output the trace does not give",
				 dt_enum_short("cudnnBackendDescriptorType_t",
					       op->type, "CUDNN_BACKEND_", tn,
					       sizeof(tn)));
			return false;
		}
		if (!attr_i64(bp, (uint32_t)y, E.a_t_virtual)) {
			h->out = (uint32_t)y;
			outs++;
		}
	}
	if (outs != 1)
		snprintf(why, whylen,
			 "its head's graph writes %d tensors: the steps after "
			 "it follow one",
			 outs);
	return outs == 1;
}

static bool head_of(const struct dt_cudnn_graph *bp, struct head *h, char *why,
		    size_t whylen)
{
	const struct dt_cudnn_attr *ops =
		dt_cudnn_attr_find(bp, bp->root, E.a_graph_ops);

	*h = (struct head){ .bp = bp };
	h->n_ops = ops ? ops->bytes / 8 : 0;
	if (bp->root + 1 != bp->n_descs || !h->n_ops || h->n_ops > HEAD_OPS) {
		snprintf(why, whylen,
			 "its head's graph is not of 1 to %d operations",
			 HEAD_OPS);
		return false;
	}
	for (uint32_t i = 0; i < h->n_ops; i++) {
		h->ops[i] = desc_ref(ops, i);
		if (h->ops[i] < 0 || (uint32_t)h->ops[i] >= bp->root) {
			snprintf(why, whylen,
				 "the trace lacks an operation of its head's "
				 "graph");
			return false;
		}
	}
	if (!head_output(h, why, whylen))
		return false;
	for (uint32_t d = 0; d < bp->n_descs; d++)
		if (bp->descs[d].type == E.bt_tensor &&
		    attr_i64(bp, d, E.a_t_uid) > h->max_uid)
			h->max_uid = attr_i64(bp, d, E.a_t_uid);
	return true;
}

/* The uids of the tensors made here, past the head's: step m's second
 * operand (the same in the fused graph and the step's own, so that both
 * are seeded alike), the fused graph's intermediates, and a step graph's
 * input and output. */
static int64_t uid_operand(const struct head *h, int m)
{
	return h->max_uid + m;
}

static int64_t uid_virtual(const struct head *h, int m)
{
	return h->max_uid + DT_FZ_STEPS + m;
}

static int64_t uid_step_x(const struct head *h)
{
	return h->max_uid + 2 * DT_FZ_STEPS + 1;
}

static int64_t uid_step_y(const struct head *h)
{
	return h->max_uid + 2 * DT_FZ_STEPS + 2;
}

/* The cuDNN type of what step m writes: the head's output's type for the
 * head, the step's own where the analysis knows it, else the type of
 * what the step before wrote. */
static int64_t step_dtype(const struct head *h, const struct fuse_chain *c,
			  int m)
{
	if (!m)
		return attr_i64(h->bp, h->out, E.a_t_dtype);
	return c->steps[m].dtype >= 0 ? fz_cudnn_dtype(c->steps[m].dtype)
				      : step_dtype(h, c, m - 1);
}

/* A bias's shape for output tensor t: its innermost dimension (the
 * channels of an NHWC convolution's output, a matmul's columns) kept,
 * the others 1. False when t has no dimension of stride 1. */
static bool bias_shape(const struct dt_cudnn_graph *bp, uint32_t t,
		       int64_t *dims, int64_t *strides, uint32_t *n)
{
	const struct dt_cudnn_attr *dd = dt_cudnn_attr_find(bp, t, E.a_t_dims);
	const struct dt_cudnn_attr *sd =
		dt_cudnn_attr_find(bp, t, E.a_t_strides);
	int inner = -1;

	if (!dd || !sd || dd->bytes != sd->bytes || dd->bytes > 8 * 8)
		return false;
	*n = dd->bytes / 8;
	memcpy(dims, dd->data, dd->bytes);
	memcpy(strides, sd->data, sd->bytes);
	for (uint32_t i = 0; i < *n; i++)
		if (strides[i] == 1 && dims[i] > 1)
			inner = (int)i;
	if (inner < 0)
		return false;
	for (uint32_t i = 0; i < *n; i++) {
		if ((int)i != inner)
			dims[i] = 1;
		strides[i] = (int)i == inner ? 1 : dims[inner];
	}
	return true;
}

/* A pointwise node of step m: x in, y out, and its second operand (a
 * bias of the head's output's shape reduced, or a whole tensor) made
 * here. Returns the operation's index, -1 with why. */
static int64_t step_node(struct syn *s, const struct head *h,
			 const struct fuse_chain *c, int m, int64_t x,
			 int64_t y, char *why, size_t whylen)
{
	const struct fuse_step *st = &c->steps[m];
	bool binary = false;
	int64_t mode = pw_mode(st->op, &binary), b = -1;

	if (mode < 0) {
		snprintf(why, whylen, "no pointwise mode computes its %s",
			 st->what);
		return -1;
	}
	if (binary) {
		int64_t dims[8], strides[8];
		uint32_t n = 0;
		bool bias = !st->full;
		if (bias && !bias_shape(h->bp, h->out, dims, strides, &n)) {
			snprintf(why, whylen,
				 "the output has no dimension of stride 1 for "
				 "its %s",
				 st->what);
			return -1;
		}
		b = syn_tensor(s, h->bp, h->out, step_dtype(h, c, m),
			       uid_operand(h, m), false, bias ? dims : NULL,
			       bias ? strides : NULL, n);
	}
	return syn_pointwise_op(s, mode, x, b, y);
}

/* The head's descriptors copied but for its graph: the tensor its
 * operations write becomes a virtual FLOAT one, which the first step's
 * node reads. Returns that tensor's index; the operations' indices here
 * into ops. */
static int64_t copy_head(struct syn *s, const struct head *h, int64_t *ops)
{
	const struct dt_cudnn_graph *bp = h->bp;
	int64_t map[SYN_DESCS], virt = -1;

	if (bp->n_descs > SYN_DESCS) {
		s->full = true;
		return -1;
	}
	for (uint32_t i = 0; i < bp->root; i++) {
		const struct dt_cudnn_desc *d = &bp->descs[i];
		if (i == h->out) {
			map[i] = virt = syn_tensor(s, bp, h->out, E.float_type,
						   uid_virtual(h, 0), true,
						   NULL, NULL, 0);
			continue;
		}
		map[i] = syn_desc(s, d->type);
		for (uint32_t k = 0; k < d->n_attrs; k++) {
			const struct dt_cudnn_attr *a = &d->attrs[k];
			if (a->type != E.t_desc) {
				syn_attr(s, a->name, a->type, a->data,
					 a->bytes);
				continue;
			}
			int64_t refs[64];
			uint32_t n = a->bytes / 8 < 64 ? a->bytes / 8 : 64;
			for (uint32_t e = 0; e < n; e++) {
				int64_t x = desc_ref(a, e);
				refs[e] =
					x >= 0 && (uint32_t)x < i ? map[x] : -1;
			}
			syn_attr(s, a->name, a->type, refs, n * 8);
		}
	}
	for (uint32_t i = 0; i < h->n_ops; i++)
		ops[i] = map[h->ops[i]];
	return virt;
}

/* The fused graph: the head, then each step after it as a pointwise
 * node, the intermediates virtual FLOAT, the last writing the head's
 * output tensor (its uid, shape and layout) in the last step's type. */
static bool fused_graph(struct syn *s, const struct head *h,
			const struct fuse_chain *c, char *why, size_t whylen)
{
	int64_t ops[HEAD_OPS + DT_FZ_STEPS], x;
	uint32_t n = h->n_ops;

	x = copy_head(s, h, ops);
	if (x < 0 || s->full) {
		snprintf(why, whylen, "its graph is too large to extend here");
		return false;
	}
	for (int m = 1; m < c->n_steps; m++) {
		bool last = m == c->n_steps - 1;
		int64_t y =
			syn_tensor(s, h->bp, h->out,
				   last ? step_dtype(h, c, m) : E.float_type,
				   last ? attr_i64(h->bp, h->out, E.a_t_uid)
					: uid_virtual(h, m),
				   !last, NULL, NULL, 0);
		int64_t op = step_node(s, h, c, m, x, y, why, whylen);
		if (op < 0)
			return false;
		ops[n++] = op;
		x = y;
	}
	syn_graph(s, ops, n);
	if (s->full)
		snprintf(why, whylen, "its graph is too large to extend here");
	return !s->full;
}

/* Step m alone as a pointwise-only graph: it reads what the step before
 * wrote (in that one's type) and writes its own. */
static bool step_graph(struct syn *s, const struct head *h,
		       const struct fuse_chain *c, int m, char *why,
		       size_t whylen)
{
	int64_t x = syn_tensor(s, h->bp, h->out, step_dtype(h, c, m - 1),
			       uid_step_x(h), false, NULL, NULL, 0);
	int64_t y = syn_tensor(s, h->bp, h->out, step_dtype(h, c, m),
			       uid_step_y(h), false, NULL, NULL, 0);
	int64_t op = step_node(s, h, c, m, x, y, why, whylen);

	if (op < 0)
		return false;
	syn_graph(s, &op, 1);
	return !s->full;
}

/* The chain's head as a backend graph: the one the program built, or
 * one made here (into s) of a legacy convolution or a GEMM; *from says
 * which. NULL with why. */
static const struct dt_cudnn_graph *head_graph(const struct problem *p,
					       struct syn *s, const char **from,
					       char *why, size_t whylen)
{
	enums();
	if (p->graph) {
		*from = "graph";
		return p->graph;
	}
	if (p->call) {
		*from = "legacy call";
		return fuse_legacy_head(s, p->call, why, whylen) ? &s->g : NULL;
	}
	if (fuse_is_gemm(p)) {
		*from = "GEMM";
		return fuse_gemm_head(s, p, why, whylen) ? &s->g : NULL;
	}
	snprintf(why, whylen, "%s",
		 p->why ? p->why
			: "its head is no convolution or GEMM a graph is "
			  "built of");
	return NULL;
}

/* ---------------------------------------------------------- timing */

/* The fastest candidate that ran, or -1. */
static int fastest(const struct cand *c, size_t n)
{
	int best = -1;

	for (size_t i = 0; i < n; i++)
		if (c[i].t.runs &&
		    (best < 0 ||
		     c[i].t.median_ns < c[(size_t)best].t.median_ns))
			best = (int)i;
	return best;
}

/* The engines cuDNN's heuristics offer for graph g timed; the fastest
 * into *out. False with why (the first refusal's words when none ran). */
static bool time_graph(struct gpu *g, const struct dt_cudnn_graph *graph,
		       const struct dt_replay_opts *opts, double until,
		       struct cand *cands, struct cand *out, size_t *tried,
		       char *why, size_t whylen)
{
	/* no recorded engine: heuristics only */
	struct problem p = { .graph = graph, .engine = -1 };
	struct budget b = { .until = until };
	size_t n = 0;

	if (graph_measure(g, &p, opts, &b, cands, &n, why, whylen))
		return false;
	*tried = n;
	int best = fastest(cands, n);
	if (best < 0) {
		if (n)
			snprintf(why, whylen,
				 "no engine cuDNN offers runs it: %s",
				 cands[0].status);
		else
			snprintf(why, whylen,
				 "cuDNN's heuristics offer no engine for it");
		return false;
	}
	*out = cands[best];
	return true;
}

static const struct problem *find_problem(const struct problems *ps,
					  const char *key)
{
	for (size_t i = 0; key && i < ps->n; i++)
		if (!strcmp(ps->v[i].key, key))
			return &ps->v[i];
	return NULL;
}

const char *fuse_why_not(const struct fuse_chain *c, const struct problems *ps,
			 char *buf, size_t size)
{
	const struct problem *head = find_problem(ps, c->steps[0].problem);
	bool binary;

	if (!c->steps[0].problem && c->steps[c->n_steps - 1].problem)
		return "a prologue's chain: the fused graph is built of a head "
		       "and the steps after it";
	if (!c->steps[0].problem)
		return "its head is a kernel no recorded call launched: the "
		       "trace holds no operands of it";
	if (!head)
		return "its head is not among the trace's problems";
	for (int m = 1; m < c->n_steps; m++) {
		const struct fuse_step *st = &c->steps[m];
		if (st->cudnn)
			snprintf(buf, size,
				 "step %d (%s) is a cuDNN call: pointwise "
				 "nodes are made of other libraries' kernels",
				 m + 1, st->what);
		else if (pw_mode(st->op, &binary) < 0)
			snprintf(buf, size,
				 "no pointwise mode computes step %d (%s)",
				 m + 1, st->what);
		else
			continue;
		return buf;
	}
	/* the graphs are data: made here, they say what cuDNN is not
	 * asked (no GPU needed) */
	struct syn *hs = calloc(1, sizeof(*hs)), *fs = calloc(1, sizeof(*fs));
	const struct dt_cudnn_graph *bp;
	const char *from, *why = NULL;
	struct head h;
	if (!hs || !fs)
		why = "out of host memory";
	else if (!(bp = head_graph(head, hs, &from, buf, size)) ||
		 !head_of(bp, &h, buf, size) ||
		 !fused_graph(fs, &h, c, buf, size))
		why = buf;
	free(hs);
	free(fs);
	return why;
}

/* What the outputs' comparison needs of what was timed: the graphs, kept
 * until then, and the engines each ran fastest with. */
struct work {
	struct syn *head, *fused, *steps[DT_FZ_STEPS];
	struct cand *cands;
	struct cand head_best, step_best[DT_FZ_STEPS];
	struct fuse_graphs fg;
};

/* The head as replay runs it (a rebuilt problem, its recorded engine
 * alone), into r->parts[0]; a GEMM, which replay does not run, by its
 * time in the trace, and its cuDNN matmul graph timed beside it. False
 * with why in r->why. */
static bool time_head(struct gpu *g, const struct problem *head,
		      const struct head *h, const struct dt_replay_opts *opts,
		      struct budget *b, struct work *w, struct fuse_result *r)
{
	struct fuse_part *pt = &r->parts[0];
	size_t n = 0, tried = 0;
	char why[160];

	if (!strcmp(r->head_from, "GEMM")) {
		*pt = (struct fuse_part){ .source = "recorded",
					  .ns = head->recorded_ns };
		if (!pt->ns) {
			snprintf(r->why, sizeof(r->why),
				 "its head's kernels were not timed in the "
				 "trace");
			return false;
		}
		if (time_graph(g, h->bp, opts, b->until, w->cands,
			       &w->head_best, &tried, pt->why,
			       sizeof(pt->why))) {
			pt->graph_ns = w->head_best.t.median_ns;
			w->fg.head_engine = w->head_best.engine;
			w->fg.head_knobs = w->head_best.knobs;
		}
		return true;
	}
	struct problem alone = *head;
	alone.alone = true;
	*pt = (struct fuse_part){ .source = "replayed" };
	int rc = head->graph ? graph_measure(g, &alone, opts, b, w->cands, &n,
					     why, sizeof(why))
			     : legacy_measure(g, &alone, opts, b, w->cands, &n,
					      why, sizeof(why));
	if (rc || !n || !w->cands[0].t.runs) {
		snprintf(r->why, sizeof(r->why),
			 "its head's recorded engine did not run: %s",
			 n ? w->cands[0].status : why);
		return false;
	}
	pt->ns = w->cands[0].t.median_ns;
	return true;
}

/* The unfused steps: the head (time_head); each step after it, a kernel
 * the program ran outside cuDNN, by its time in the trace (what replay
 * cannot run again: another library's kernel, which a cuDNN graph of the
 * step does not stand for, being faster or slower), and beside it the
 * step alone as a pointwise-only graph, what cuDNN would take for it.
 * Each in its share of what is left before until. */
static bool time_unfused(struct gpu *g, const struct fuse_chain *c,
			 const struct head *h, const struct problem *head,
			 const struct dt_replay_opts *opts, double until,
			 struct work *w, struct fuse_result *r)
{
	struct budget b = { .until = budget_share(until, (size_t)c->n_steps) };

	if (!time_head(g, head, h, opts, &b, w, r))
		return false;
	r->unfused_ns = r->parts[0].ns;
	for (int m = 1; m < c->n_steps; m++) {
		struct fuse_part *pt = &r->parts[m];
		struct syn *s = w->steps[m] = calloc(1, sizeof(*s));
		size_t tried = 0;
		*pt = (struct fuse_part){ .source = "recorded",
					  .ns = c->steps[m].ns };
		w->fg.step_engine[m] = -1;
		if (s && step_graph(s, h, c, m, pt->why, sizeof(pt->why))) {
			w->fg.steps[m] = &s->g;
			if (time_graph(g, &s->g, opts,
				       budget_share(until,
						    (size_t)(c->n_steps - m)),
				       w->cands, &w->step_best[m], &tried,
				       pt->why, sizeof(pt->why))) {
				pt->graph_ns = w->step_best[m].t.median_ns;
				w->fg.step_engine[m] = w->step_best[m].engine;
				w->fg.step_knobs[m] = w->step_best[m].knobs;
			}
		}
		r->unfused_ns += pt->ns;
	}
	return true;
}

/* What the comparison runs, from what was built. */
static void check_graphs(struct work *w, const struct head *h,
			 const struct problem *head, const struct fuse_chain *c)
{
	struct fuse_graphs *fg = &w->fg;

	fg->head = head;
	fg->head_graph = h->bp;
	if (head->graph) { /* its recorded engine, as replay runs it */
		fg->head_engine = head->engine;
		fg->head_knobs = head->knobs;
	}
	fg->head_out_uid = attr_i64(h->bp, h->out, E.a_t_uid);
	fg->fused = &w->fused->g;
	fg->step_x_uid = uid_step_x(h);
	fg->step_y_uid = uid_step_y(h);
	fg->n_steps = c->n_steps;
}

void fuse_measure(struct gpu *g, const struct fuse_chain *c,
		  const struct problems *ps, const struct dt_replay_opts *opts,
		  double until, struct fuse_result *r)
{
	const struct problem *head = find_problem(ps, c->steps[0].problem);
	const char *not = fuse_why_not(c, ps, r->why, sizeof(r->why));
	const struct dt_cudnn_graph *bp = NULL;
	struct work w = { .fg = { .head_engine = -1 } };
	struct head h;

	r->c = c;
	r->status = "not_built";
	r->outputs_agree = -1;
	w.cands = calloc(CANDS_MAX, sizeof(*w.cands));
	w.head = calloc(1, sizeof(*w.head));
	w.fused = calloc(1, sizeof(*w.fused));
	if (not ) {
		if (not != r->why)
			snprintf(r->why, sizeof(r->why), "%s", not );
	} else if (!w.cands || !w.head || !w.fused) {
		snprintf(r->why, sizeof(r->why), "out of host memory");
	} else if ((bp = head_graph(head, w.head, &r->head_from, r->why,
				    sizeof(r->why))) &&
		   head_of(bp, &h, r->why, sizeof(r->why)) &&
		   fused_graph(w.fused, &h, c, r->why, sizeof(r->why))) {
		char why[200];
		r->legacy_call = fuse_legacy_fused_call(c, head);
		/* the fused graph, then the head and each step after it,
		 * each its share */
		if (!time_graph(g, &w.fused->g, opts,
				budget_share(until, (size_t)c->n_steps + 1),
				w.cands, &r->fused, &r->tried, why,
				sizeof(why)))
			snprintf(r->why, sizeof(r->why), "the fused graph: %s",
				 why);
		else if (time_unfused(g, c, &h, head, opts, until, &w, r))
			r->status = "measured";
		else
			r->status = "failed";
	}
	if (!strcmp(r->status, "measured")) {
		check_graphs(&w, &h, head, c);
		if (budget_left(until) > g->build_s * (c->n_steps + 2))
			fuse_check(g, &w.fg, &r->fused, r);
		else
			snprintf(r->outputs_why, sizeof(r->outputs_why),
				 "the budget was spent before the outputs "
				 "were compared");
	}
	if (r->why[0] && strcmp(r->status, "measured"))
		r->reason = r->why;
	for (int m = 0; m < DT_FZ_STEPS; m++)
		free(w.steps[m]);
	free(w.head);
	free(w.fused);
	free(w.cands);
}
