/*
 * replay-fuse.c - the fusion what-if, measured: for each chain the fusion
 * analysis calls fusable (analyzer/FUSION.md, asked through dt-fusion.h),
 * the fused cuDNN graph is built from the chain's recorded head (the
 * convolution or matmul graph its decoder kept, struct dt_cudnn_graph)
 * with a pointwise node per step after it (a bias of the output's
 * innermost dimension, a whole residual, activations, casts) and virtual
 * intermediates, in the recorded layout and types; the engines cuDNN's
 * heuristics offer for it are timed as a problem's are (replay-graph.c),
 * and so are the unfused steps: the head with its recorded engine, each
 * kernel after it by its recorded time, and alone as a pointwise-only
 * graph where cuDNN runs one. What it is not: a check of the fused
 * graph's numbers against the unfused ones', nor a rebuild of a legacy
 * call or a cuBLAS GEMM as a head.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-internal.h"

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

static struct {
	bool done;
	int64_t t_handle, t_desc, t_int64, t_bool, t_dtype, t_pw_mode;
	int64_t bt_tensor, bt_pw, bt_op_pw, bt_graph;
	int64_t a_t_dtype, a_t_dims, a_t_strides, a_t_uid, a_t_virtual;
	int64_t a_pw_mode, a_pw_prec, a_op_pw, a_op_x, a_op_b, a_op_y;
	int64_t a_graph_ops, a_graph_handle;
	int64_t float_type;
} E;

static int64_t ev(const char *type, const char *name)
{
	return dt_enum_value(type, name, -1);
}

/* Looked up by name once: an attribute type (T), a descriptor type (D),
 * an attribute (A), a data type (F), each without its prefix. */
static void enums(void)
{
	static const struct {
		int64_t *at;
		char kind;
		const char *name;
	} names[] = {
		{ &E.t_handle, 'T', "HANDLE" },
		{ &E.t_desc, 'T', "BACKEND_DESCRIPTOR" },
		{ &E.t_int64, 'T', "INT64" },
		{ &E.t_bool, 'T', "BOOLEAN" },
		{ &E.t_dtype, 'T', "DATA_TYPE" },
		{ &E.t_pw_mode, 'T', "POINTWISE_MODE" },
		{ &E.bt_tensor, 'D', "TENSOR_DESCRIPTOR" },
		{ &E.bt_pw, 'D', "POINTWISE_DESCRIPTOR" },
		{ &E.bt_op_pw, 'D', "OPERATION_POINTWISE_DESCRIPTOR" },
		{ &E.bt_graph, 'D', "OPERATIONGRAPH_DESCRIPTOR" },
		{ &E.a_t_dtype, 'A', "TENSOR_DATA_TYPE" },
		{ &E.a_t_dims, 'A', "TENSOR_DIMENSIONS" },
		{ &E.a_t_strides, 'A', "TENSOR_STRIDES" },
		{ &E.a_t_uid, 'A', "TENSOR_UNIQUE_ID" },
		{ &E.a_t_virtual, 'A', "TENSOR_IS_VIRTUAL" },
		{ &E.a_pw_mode, 'A', "POINTWISE_MODE" },
		{ &E.a_pw_prec, 'A', "POINTWISE_MATH_PREC" },
		{ &E.a_op_pw, 'A', "OPERATION_POINTWISE_PW_DESCRIPTOR" },
		{ &E.a_op_x, 'A', "OPERATION_POINTWISE_XDESC" },
		{ &E.a_op_b, 'A', "OPERATION_POINTWISE_BDESC" },
		{ &E.a_op_y, 'A', "OPERATION_POINTWISE_YDESC" },
		{ &E.a_graph_ops, 'A', "OPERATIONGRAPH_OPS" },
		{ &E.a_graph_handle, 'A', "OPERATIONGRAPH_HANDLE" },
		{ &E.float_type, 'F', "FLOAT" },
	};
	char n[96];

	for (size_t i = 0; !E.done && i < sizeof(names) / sizeof(names[0]);
	     i++) {
		char k = names[i].kind;
		snprintf(n, sizeof(n), "CUDNN_%s%s",
			 k == 'T'   ? "TYPE_"
			 : k == 'D' ? "BACKEND_"
			 : k == 'A' ? "ATTR_"
				    : "DATA_",
			 names[i].name);
		*names[i].at = ev(k == 'T'   ? "cudnnBackendAttributeType_t"
				  : k == 'D' ? "cudnnBackendDescriptorType_t"
				  : k == 'A' ? "cudnnBackendAttributeName_t"
					     : "cudnnDataType_t",
				  n);
	}
	E.done = true;
}

/* The attribute of a head operation that names the tensor it writes. */
static int64_t output_attr(int64_t op_type)
{
	static const char *const outs[][2] = {
		{ "CONVOLUTION_FORWARD", "CONVOLUTION_FORWARD_Y" },
		{ "CONVOLUTION_BACKWARD_DATA", "CONVOLUTION_BWD_DATA_DX" },
		{ "CONVOLUTION_BACKWARD_FILTER", "CONVOLUTION_BWD_FILTER_DW" },
		{ "MATMUL", "MATMUL_CDESC" },
	};
	char n[96];

	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		snprintf(n, sizeof(n), "CUDNN_BACKEND_OPERATION_%s_DESCRIPTOR",
			 outs[i][0]);
		if (ev("cudnnBackendDescriptorType_t", n) != op_type)
			continue;
		snprintf(n, sizeof(n), "CUDNN_ATTR_OPERATION_%s", outs[i][1]);
		return ev("cudnnBackendAttributeName_t", n);
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
			return ev("cudnnPointwiseMode_t", modes[i].mode);
		}
	return -1;
}

/* The cuDNN data type (cudnnDataType_t) of the analyzer's dtype. */
static int64_t cudnn_dtype(int64_t dtype)
{
	char n[DT_DTYPE_NAME_SIZE + 16];
	char ty[DT_DTYPE_NAME_SIZE];

	snprintf(n, sizeof(n), "CUDNN_DATA_%s",
		 dt_dtype_name(dtype, ty, sizeof(ty)));
	return ev("cudnnDataType_t", n);
}

/* --------------------------------------------------- a graph as data */

/* A graph made here, as the decoder keeps a recorded one, so that
 * replay-graph.c builds and times it as it does those. */
#define SYN_DESCS 96
#define SYN_ATTRS 768
#define SYN_BYTES (32u << 10)

struct syn {
	struct dt_cudnn_desc descs[SYN_DESCS];
	struct dt_cudnn_attr attrs[SYN_ATTRS];
	uint8_t data[SYN_BYTES];
	uint32_t n_attrs, used;
	struct dt_cudnn_graph g;
	int64_t next_uid; /* past every uid of the head's */
	bool full;        /* out of room: the graph is not whole */
};

/* A descriptor begun; its attributes follow with syn_attr. */
static int64_t syn_desc(struct syn *s, int64_t type)
{
	if (s->g.n_descs == SYN_DESCS) {
		s->full = true;
		return -1;
	}
	struct dt_cudnn_desc *d = &s->descs[s->g.n_descs];
	*d = (struct dt_cudnn_desc){ .type = type,
				     .attrs = &s->attrs[s->n_attrs] };
	return s->g.n_descs++;
}

static void syn_attr(struct syn *s, int64_t name, int64_t type, const void *v,
		     uint32_t bytes)
{
	if (!s->g.n_descs || s->n_attrs == SYN_ATTRS ||
	    bytes > SYN_BYTES - s->used) {
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

static void syn_i64(struct syn *s, int64_t name, int64_t type, int64_t v)
{
	uint32_t es = dt_backend_type_size(type);

	syn_attr(s, name, type, &v, es ? es : 8); /* little endian */
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

/* A pointwise node of step st: x in, y out, and its second operand (a
 * bias of the recorded output's shape reduced, or a whole tensor) made
 * here. Returns the operation's index, -1 with why. */
static int64_t syn_pointwise(struct syn *s, const struct dt_cudnn_graph *bp,
			     uint32_t out, const struct fuse_step *st,
			     int64_t x, int64_t y, char *why, size_t whylen)
{
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
		if (bias && !bias_shape(bp, out, dims, strides, &n)) {
			snprintf(why, whylen,
				 "the output has no dimension of stride 1 for "
				 "its %s",
				 st->what);
			return -1;
		}
		b = syn_tensor(s, bp, out, cudnn_dtype(st->dtype),
			       s->next_uid++, false, bias ? dims : NULL,
			       bias ? strides : NULL, n);
	}
	int64_t pw = syn_desc(s, E.bt_pw);
	syn_i64(s, E.a_pw_mode, E.t_pw_mode, mode);
	syn_i64(s, E.a_pw_prec, E.t_dtype, E.float_type);
	int64_t op = syn_desc(s, E.bt_op_pw);
	syn_attr(s, E.a_op_pw, E.t_desc, &pw, 8);
	syn_attr(s, E.a_op_x, E.t_desc, &x, 8);
	if (binary)
		syn_attr(s, E.a_op_b, E.t_desc, &b, 8);
	syn_attr(s, E.a_op_y, E.t_desc, &y, 8);
	return op;
}

/* The operation graph over ops, last; its handle replay's own. */
static void syn_graph(struct syn *s, const int64_t *ops, uint32_t n)
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

/* What the head's graph is made of: its one operation, the tensor it
 * writes and the attribute that names it. */
struct head {
	const struct dt_cudnn_graph *bp;
	uint32_t op, out;
	int64_t out_attr;
	int64_t max_uid;
};

static int64_t desc_ref(const struct dt_cudnn_attr *a, uint32_t i)
{
	int64_t x = -1;

	if (a && a->bytes >= 8 * (i + 1))
		memcpy(&x, a->data + 8 * i, 8);
	return x;
}

static bool head_of(const struct dt_cudnn_graph *bp, struct head *h, char *why,
		    size_t whylen)
{
	const struct dt_cudnn_attr *ops =
		dt_cudnn_attr_find(bp, bp->root, E.a_graph_ops);

	int64_t op = desc_ref(ops, 0);

	*h = (struct head){ .bp = bp };
	if (bp->root + 1 != bp->n_descs || !ops || ops->bytes != 8 || op < 0 ||
	    (uint32_t)op >= bp->root) {
		snprintf(why, whylen, "its head's graph is not one operation");
		return false;
	}
	h->op = (uint32_t)op;
	h->out_attr = output_attr(bp->descs[op].type);
	int64_t out = desc_ref(dt_cudnn_attr_find(bp, h->op, h->out_attr), 0);
	if (h->out_attr < 0 || out < 0 || (uint32_t)out >= h->op) {
		snprintf(why, whylen,
			 "its head is no convolution or matmul whose output "
			 "the trace holds");
		return false;
	}
	h->out = (uint32_t)out;
	for (uint32_t d = 0; d < bp->n_descs; d++) {
		const struct dt_cudnn_attr *u =
			dt_cudnn_attr_find(bp, d, E.a_t_uid);
		int64_t v = 0;
		if (bp->descs[d].type == E.bt_tensor && u && u->bytes == 8) {
			memcpy(&v, u->data, 8);
			if (v > h->max_uid)
				h->max_uid = v;
		}
	}
	return true;
}

static int64_t tensor_uid(const struct dt_cudnn_graph *bp, uint32_t t)
{
	const struct dt_cudnn_attr *u = dt_cudnn_attr_find(bp, t, E.a_t_uid);
	int64_t v = -1;

	if (u && u->bytes == 8)
		memcpy(&v, u->data, 8);
	return v;
}

/* The head's descriptors copied but for its graph and output: the
 * operation (*op, its index here) writes a virtual FLOAT tensor instead,
 * which the first pointwise node reads. Returns that tensor's index. */
static int64_t copy_head(struct syn *s, const struct head *h, int64_t *op)
{
	const struct dt_cudnn_graph *bp = h->bp;
	int64_t map[SYN_DESCS], virt = -1;

	if (bp->n_descs > SYN_DESCS) {
		s->full = true;
		return -1;
	}
	for (uint32_t i = 0; i < bp->root; i++) {
		const struct dt_cudnn_desc *d = &bp->descs[i];
		map[i] = -1;
		if (i == h->out)
			continue;
		if (i == h->op)
			virt = syn_tensor(s, bp, h->out, E.float_type,
					  s->next_uid++, true, NULL, NULL, 0);
		map[i] = syn_desc(s, d->type);
		if (i == h->op)
			*op = map[i];
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
				refs[e] = i == h->op && a->name == h->out_attr
						  ? virt
					  : x >= 0 && (uint32_t)x < i ? map[x]
								      : -1;
			}
			syn_attr(s, a->name, a->type, refs, n * 8);
		}
	}
	return virt;
}

/* The fused graph: the head, then each step after it as a pointwise
 * node, the intermediates virtual FLOAT, the last writing the head's
 * output tensor (its uid, shape and layout) in the last step's type. */
static bool fused_graph(struct syn *s, const struct head *h,
			const struct fuse_chain *c, char *why, size_t whylen)
{
	int64_t ops[DT_FZ_STEPS], x;
	uint32_t n = 0;

	s->next_uid = h->max_uid + 1;
	x = copy_head(s, h, &ops[n++]);
	if (x < 0 || s->full) {
		snprintf(why, whylen, "its graph is too large to extend here");
		return false;
	}
	for (int m = 1; m < c->n_steps; m++) {
		const struct fuse_step *st = &c->steps[m];
		bool last = m == c->n_steps - 1;
		int64_t y =
			last ? syn_tensor(s, h->bp, h->out,
					  cudnn_dtype(st->dtype),
					  tensor_uid(h->bp, h->out), false,
					  NULL, NULL, 0)
			     : syn_tensor(s, h->bp, h->out, E.float_type,
					  s->next_uid++, true, NULL, NULL, 0);
		int64_t op =
			syn_pointwise(s, h->bp, h->out, st, x, y, why, whylen);
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

/* Step m alone as a pointwise-only graph: it reads the step before's
 * output (in that step's type) and writes its own. */
static bool step_graph(struct syn *s, const struct head *h,
		       const struct fuse_chain *c, int m, char *why,
		       size_t whylen)
{
	int64_t in = c->steps[m - 1].dtype >= 0 ? c->steps[m - 1].dtype
						: c->steps[m].dtype;

	s->next_uid = h->max_uid + 1;
	int64_t x = syn_tensor(s, h->bp, h->out, cudnn_dtype(in), s->next_uid++,
			       false, NULL, NULL, 0);
	int64_t y = syn_tensor(s, h->bp, h->out, cudnn_dtype(c->steps[m].dtype),
			       s->next_uid++, false, NULL, NULL, 0);
	int64_t op = syn_pointwise(s, h->bp, h->out, &c->steps[m], x, y, why,
				   whylen);
	if (op < 0)
		return false;
	syn_graph(s, &op, 1);
	return !s->full;
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

	if (!c->steps[0].problem)
		return "its head ran outside cuDNN: replay rebuilds cuDNN's "
		       "operations";
	if (!head)
		return "its head is not among the trace's problems";
	if (head->gemm)
		return "its head is a GEMM of cuBLAS or cuBLASLt: the fused "
		       "graph is built from a cuDNN backend graph";
	if (head->why)
		return head->why;
	if (!head->graph)
		return "its head is a legacy call: the fused graph is built "
		       "from a backend graph";
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
	return NULL;
}

/* The unfused steps: the head replayed with its recorded engine; each
 * step after it, a kernel the program ran outside cuDNN, by its time in
 * the trace (what replay cannot run again: another library's kernel,
 * which a cuDNN graph of the step does not stand for, being faster or
 * slower), and beside it the step alone as a pointwise-only graph, what
 * cuDNN would take for it. Each in its share of what is left before
 * until. */
static bool time_unfused(struct gpu *g, const struct fuse_chain *c,
			 const struct head *h, const struct problem *head,
			 const struct dt_replay_opts *opts, double until,
			 struct cand *cands, struct fuse_result *r)
{
	struct problem alone = *head;
	struct budget b = { .until = budget_share(until, (size_t)c->n_steps) };
	size_t n = 0;
	char why[160];

	alone.alone = true;
	r->parts[0] = (struct fuse_part){ .source = "replayed" };
	if (graph_measure(g, &alone, opts, &b, cands, &n, why, sizeof(why)) ||
	    !n || !cands[0].t.runs) {
		snprintf(r->why, sizeof(r->why),
			 "its head's recorded engine did not run: %s",
			 n ? cands[0].status : why);
		return false;
	}
	r->parts[0].ns = cands[0].t.median_ns;
	r->unfused_ns = r->parts[0].ns;
	for (int m = 1; m < c->n_steps; m++) {
		struct fuse_part *pt = &r->parts[m];
		struct syn *s = calloc(1, sizeof(*s));
		struct cand best;
		size_t tried = 0;
		*pt = (struct fuse_part){ .source = "recorded",
					  .ns = c->steps[m].ns };
		if (s && step_graph(s, h, c, m, pt->why, sizeof(pt->why)) &&
		    time_graph(g, &s->g, opts,
			       budget_share(until, (size_t)(c->n_steps - m)),
			       cands, &best, &tried, pt->why, sizeof(pt->why)))
			pt->graph_ns = best.t.median_ns;
		free(s);
		r->unfused_ns += pt->ns;
	}
	return true;
}

void fuse_measure(struct gpu *g, const struct fuse_chain *c,
		  const struct problems *ps, const struct dt_replay_opts *opts,
		  double until, struct fuse_result *r)
{
	const struct problem *head = find_problem(ps, c->steps[0].problem);
	struct cand *cands = calloc(CANDS_MAX, sizeof(*cands));
	struct syn *s = calloc(1, sizeof(*s));
	const char *not = fuse_why_not(c, ps, r->why, sizeof(r->why));
	struct head h;

	enums();
	r->c = c;
	r->status = "not_built";
	if (not ) {
		if (not != r->why)
			snprintf(r->why, sizeof(r->why), "%s", not );
	} else if (!cands || !s) {
		snprintf(r->why, sizeof(r->why), "out of host memory");
	} else if (head_of(head->graph, &h, r->why, sizeof(r->why)) &&
		   fused_graph(s, &h, c, r->why, sizeof(r->why))) {
		char why[200];
		/* the fused graph, then the head and each step after it,
		 * each its share */
		if (!time_graph(g, &s->g, opts,
				budget_share(until, (size_t)c->n_steps + 1),
				cands, &r->fused, &r->tried, why, sizeof(why)))
			snprintf(r->why, sizeof(r->why), "the fused graph: %s",
				 why);
		else if (time_unfused(g, c, &h, head, opts, until, cands, r))
			r->status = "measured";
		else
			r->status = "failed";
	}
	if (r->why[0] && strcmp(r->status, "measured"))
		r->reason = r->why;
	free(s);
	free(cands);
}
