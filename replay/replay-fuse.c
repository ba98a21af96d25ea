/*
 * replay-fuse.c - the fusion what-if, measured: for each chain the fusion
 * analysis calls fusable (analyzer/FUSION.md, asked through dt-fusion.h),
 * the fused cuDNN graph is built from the chain's head (the graph its
 * decoder kept, struct dt_cudnn_graph, of one operation or several; or
 * one replay-fuse-heads.c makes of a legacy convolution or a GEMM) with
 * a pointwise node per other step (a bias of the output's innermost
 * dimension, a whole residual, activations, casts), after it or, a
 * prologue's, on its matmul's input, and virtual intermediates, in the
 * recorded layout and types; the engines cuDNN's heuristics offer for it
 * are timed as a problem's are (replay-graph.c), and so are the unfused
 * steps: the head as replay runs it (or, a GEMM, by its time in the
 * trace), each other kernel by its recorded time, and alone as a
 * pointwise-only graph where cuDNN runs one; then the fused output is
 * held against the unfused chain's (replay-fuse-check.c). What it is
 * not: a GEMM run through cuBLAS.
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

/* The head's step: the first, or the last when the steps before it are
 * its matmul's prologue (they wrote its input; the chain's first step is
 * no op's). */
int fuse_head_at(const struct fuse_chain *c)
{
	return !c->steps[0].problem && c->steps[c->n_steps - 1].problem
		       ? c->n_steps - 1
		       : 0;
}

/* ------------------------------------------ operations and pointwise modes */

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

/* ------------------------------------------------------ the head */

/* The most operations a head's graph may have here. */
#define HEAD_OPS 8

/* What the head's graph is made of: its operations, the one tensor they
 * write (the others are virtual), its largest uid; and where the chain's
 * other steps go: after it (an epilogue), or before its matmul, on the
 * input they write (a prologue's, the head the chain's last step). */
struct head {
	const struct dt_cudnn_graph *bp;
	int64_t ops[HEAD_OPS];
	uint32_t n_ops;
	uint32_t out;
	int64_t max_uid;
	int at;     /* the head's step in the chain */
	uint32_t t; /* the tensor whose shape the other steps have: out, or
		       the matmul's input a prologue writes */
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
		if (!attr_i64(bp, (uint32_t)y, fz_e.a_t_virtual)) {
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

static uint64_t tensor_elems(const struct dt_cudnn_graph *bp, uint32_t t)
{
	const struct dt_cudnn_attr *d =
		dt_cudnn_attr_find(bp, t, fz_e.a_t_dims);
	uint64_t n = 1;

	for (uint32_t i = 0; d && i < d->bytes / 8; i++)
		n *= (uint64_t)desc_ref(d, i);
	return d ? n : 0;
}

/* A prologue's head: its matmul's input the prologue writes, the one of
 * as many elements as the step before the head wrote (A when both are),
 * into h->t. False with why. */
static bool prologue_input(struct head *h, const struct fuse_chain *c,
			   char *why, size_t whylen)
{
	static const char *const ins[] = { "OPERATION_MATMUL_ADESC",
					   "OPERATION_MATMUL_BDESC" };
	uint64_t e = c->steps[h->at - 1].elems;

	for (uint32_t i = 0; i < h->n_ops; i++) {
		uint32_t op = (uint32_t)h->ops[i];
		if (h->bp->descs[op].type !=
		    fz_desc("OPERATION_MATMUL_DESCRIPTOR"))
			continue;
		for (int k = 0; k < 2; k++) {
			int64_t x = desc_ref(
				dt_cudnn_attr_find(h->bp, op, fz_attr(ins[k])),
				0);
			if (x >= 0 && (uint32_t)x < op &&
			    !attr_i64(h->bp, (uint32_t)x, fz_e.a_t_virtual) &&
			    tensor_elems(h->bp, (uint32_t)x) == e) {
				h->t = (uint32_t)x;
				return true;
			}
		}
	}
	snprintf(why, whylen,
		 "no input of its matmul is as large as its prologue's "
		 "output (%llu elements)",
		 (unsigned long long)e);
	return false;
}

static bool head_of(const struct dt_cudnn_graph *bp, const struct fuse_chain *c,
		    struct head *h, char *why, size_t whylen)
{
	const struct dt_cudnn_attr *ops =
		dt_cudnn_attr_find(bp, bp->root, fz_e.a_graph_ops);

	*h = (struct head){ .bp = bp, .at = fuse_head_at(c) };
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
		if (bp->descs[d].type == fz_e.bt_tensor &&
		    attr_i64(bp, d, fz_e.a_t_uid) > h->max_uid)
			h->max_uid = attr_i64(bp, d, fz_e.a_t_uid);
	h->t = h->out;
	return !h->at || prologue_input(h, c, why, whylen);
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
	return h->max_uid + DT_FZ_STEPS + 1 + m;
}

static int64_t uid_step_x(const struct head *h)
{
	return h->max_uid + 2 * DT_FZ_STEPS + 2;
}

static int64_t uid_step_y(const struct head *h)
{
	return h->max_uid + 2 * DT_FZ_STEPS + 3;
}

/* The cuDNN type of what step m writes: h->t's (the head's output's)
 * for the head, the step's own where the analysis knows it, else the
 * type of what the step before wrote. A prologue's first step reads,
 * and its last writes, the matmul's input in its type (-1: what the
 * first reads). */
static int64_t step_dtype(const struct head *h, const struct fuse_chain *c,
			  int m)
{
	if (m == h->at || m < 0 || (h->at && m == h->at - 1))
		return attr_i64(h->bp, h->t, fz_e.a_t_dtype);
	return c->steps[m].dtype >= 0 ? fz_cudnn_dtype(c->steps[m].dtype)
				      : step_dtype(h, c, m - 1);
}

/* A bias's shape for output tensor t: its innermost dimension (the
 * channels of an NHWC convolution's output, a matmul's columns) kept,
 * the others 1. False when t has no dimension of stride 1. */
static bool bias_shape(const struct dt_cudnn_graph *bp, uint32_t t,
		       int64_t *dims, int64_t *strides, uint32_t *n)
{
	const struct dt_cudnn_attr *dd =
		dt_cudnn_attr_find(bp, t, fz_e.a_t_dims);
	const struct dt_cudnn_attr *sd =
		dt_cudnn_attr_find(bp, t, fz_e.a_t_strides);
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
		if (bias && !bias_shape(h->bp, h->t, dims, strides, &n)) {
			snprintf(why, whylen,
				 "the output has no dimension of stride 1 for "
				 "its %s",
				 st->what);
			return -1;
		}
		b = syn_tensor(s, h->bp, h->t, step_dtype(h, c, m),
			       uid_operand(h, m + 1), false, bias ? dims : NULL,
			       bias ? strides : NULL, n);
	}
	return syn_pointwise_op(s, mode, x, b, y);
}

/* Whether descriptor i of the head is one of its operations. */
static bool head_op(const struct head *h, uint32_t i)
{
	for (uint32_t k = 0; k < h->n_ops; k++)
		if (h->ops[k] == (int64_t)i)
			return true;
	return false;
}

/* The head's descriptors copied but for its graph, its operations'
 * indices here into ops. An epilogue's: the tensor the operations write
 * becomes a virtual FLOAT one, which the first step's node reads
 * (returned). A prologue's: the matmul reads a virtual tensor of its
 * input's type (*in) in place of its input, which the input's copy, read
 * by the prologue's first node, is (returned). */
static int64_t copy_head(struct syn *s, const struct head *h, int64_t *ops,
			 int64_t *in)
{
	const struct dt_cudnn_graph *bp = h->bp;
	int64_t map[SYN_DESCS], virt = -1, to = -1;

	if (bp->n_descs > SYN_DESCS) {
		s->full = true;
		return -1;
	}
	for (uint32_t i = 0; i < bp->root; i++) {
		const struct dt_cudnn_desc *d = &bp->descs[i];
		if (i == h->t && !h->at) {
			map[i] = virt = syn_tensor(s, bp, h->t, fz_e.float_type,
						   uid_virtual(h, 0), true,
						   NULL, NULL, 0);
			continue;
		}
		map[i] = syn_desc(s, d->type);
		for (uint32_t k = 0; k < d->n_attrs; k++) {
			const struct dt_cudnn_attr *a = &d->attrs[k];
			if (a->type != fz_e.t_desc) {
				syn_attr(s, a->name, a->type, a->data,
					 a->bytes);
				continue;
			}
			int64_t refs[64];
			uint32_t n = a->bytes / 8 < 64 ? a->bytes / 8 : 64;
			for (uint32_t e = 0; e < n; e++) {
				int64_t x = desc_ref(a, e);
				refs[e] = x < 0 || (uint32_t)x >= i  ? -1
					  : x == to && head_op(h, i) ? *in
								     : map[x];
			}
			syn_attr(s, a->name, a->type, refs, n * 8);
		}
		if (i == h->t && h->at) {
			to = i;
			virt = map[i];
			*in = syn_tensor(
				s, bp, h->t, attr_i64(bp, h->t, fz_e.a_t_dtype),
				uid_virtual(h, 0), true, NULL, NULL, 0);
		}
	}
	for (uint32_t i = 0; i < h->n_ops; i++)
		ops[i] = map[h->ops[i]];
	return virt;
}

/* The fused graph: the head, then each step after it as a pointwise
 * node, the intermediates virtual FLOAT, the last writing the head's
 * output tensor (its uid, shape and layout) in the last step's type; or
 * a prologue's steps as nodes on the matmul's input, the last writing
 * what the matmul reads in the input's place. */
static bool fused_graph(struct syn *s, const struct head *h,
			const struct fuse_chain *c, char *why, size_t whylen)
{
	int64_t ops[HEAD_OPS + DT_FZ_STEPS], x, in = -1;
	uint32_t n = h->n_ops;
	int first = h->at ? 0 : 1, end = h->at ? h->at : c->n_steps;

	x = copy_head(s, h, ops, &in);
	if (x < 0 || s->full) {
		snprintf(why, whylen, "its graph is too large to extend here");
		return false;
	}
	for (int m = first; m < end; m++) {
		bool last = m == end - 1;
		int64_t y = last && h->at
				    ? in
				    : syn_tensor(s, h->bp, h->t,
						 last ? step_dtype(h, c, m)
						      : fz_e.float_type,
						 last ? attr_i64(h->bp, h->t,
								 fz_e.a_t_uid)
						      : uid_virtual(h, m + 1),
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
	int64_t x = syn_tensor(s, h->bp, h->t, step_dtype(h, c, m - 1),
			       uid_step_x(h), false, NULL, NULL, 0);
	int64_t y = syn_tensor(s, h->bp, h->t, step_dtype(h, c, m),
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
	fz_enums_init();
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

const char *fuse_why_not(const struct fuse_chain *c, const struct problems *ps,
			 char *buf, size_t size)
{
	int at = fuse_head_at(c);
	const struct problem *head = problems_find(ps, c->steps[at].problem);
	bool binary;

	if (!c->steps[at].problem)
		return "its head is a kernel no recorded call launched: the "
		       "trace holds no operands of it";
	if (!head)
		return "its head is not among the trace's problems";
	for (int m = 0; m < c->n_steps; m++) {
		const struct fuse_step *st = &c->steps[m];
		if (m == at)
			continue;
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
	const char *why = NULL;
	if (!hs || !fs)
		why = "out of host memory";
	else if (!fuse_fused_graph(fs, hs, c, head, buf, size))
		why = buf;
	free(hs);
	free(fs);
	return why;
}

bool fuse_fused_graph(struct syn *s, struct syn *hs, const struct fuse_chain *c,
		      const struct problem *head, char *why, size_t whylen)
{
	const struct dt_cudnn_graph *bp;
	const char *from;
	struct head h;

	return (bp = head_graph(head, hs, &from, why, whylen)) &&
	       head_of(bp, c, &h, why, whylen) &&
	       fused_graph(s, &h, c, why, whylen);
}

/* A what-if's graphs, kept for the outputs' comparison, and the fastest
 * candidates of the head's (a GEMM's matmul graph: the comparison runs
 * it so) and the steps' own graphs. */
struct work {
	struct syn *head, *fused, *steps[DT_FZ_STEPS];
	struct cand *cands;
	struct cand head_best, step_best[DT_FZ_STEPS];
	struct fuse_graphs fg;
};

/* The head as replay runs it (a rebuilt problem, its recorded engine
 * alone), into its part of r; a GEMM, which replay does not run, by its
 * time in the trace, and its cuDNN matmul graph timed beside it. False
 * with why in r->why. */
static bool time_head(struct gpu *g, const struct problem *head,
		      const struct head *h, const struct dt_replay_opts *opts,
		      struct budget *b, struct work *w, struct fuse_result *r)
{
	struct fuse_part *pt = &r->parts[h->at];
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

/* The unfused steps: the head (time_head); each other step (after it,
 * or a prologue's before it), a kernel the program ran outside cuDNN, by its
 * time in the trace (what replay cannot run again: another library's kernel,
 * which a cuDNN graph of the step does not stand for, being faster or slower),
 * its pointwise-only graph made (time_steps times it) for the outputs'
 * comparison. The head in its share of what is left before until. */
static bool time_unfused(struct gpu *g, const struct fuse_chain *c,
			 const struct head *h, const struct problem *head,
			 const struct dt_replay_opts *opts, double until,
			 struct work *w, struct fuse_result *r)
{
	struct budget b = { .until = budget_share(until, (size_t)c->n_steps) };

	if (!time_head(g, head, h, opts, &b, w, r))
		return false;
	r->unfused_ns = r->parts[h->at].ns;
	for (int m = 0; m < c->n_steps; m++) {
		struct fuse_part *pt = &r->parts[m];
		if (m == h->at)
			continue;
		struct syn *s = w->steps[m] = calloc(1, sizeof(*s));
		*pt = (struct fuse_part){ .source = "recorded",
					  .ns = c->steps[m].ns };
		if (s && step_graph(s, h, c, m, pt->why, sizeof(pt->why)))
			w->fg.steps[m] = &s->g;
		r->unfused_ns += pt->ns;
	}
	return true;
}

/* Beside each step's time in the trace, the step alone as its pointwise
 * graph, what cuDNN would take for it, each in its share of what is left
 * before until: after the outputs' comparison, which needs no more than
 * the graphs made, and which these timings, kept for the reader, must
 * not crowd out. */
static void time_steps(struct gpu *g, const struct fuse_chain *c,
		       const struct head *h, const struct dt_replay_opts *opts,
		       double until, struct work *w, struct fuse_result *r)
{
	for (int m = 0; m < c->n_steps; m++) {
		struct fuse_part *pt = &r->parts[m];
		size_t tried = 0;
		if (m == h->at || !w->fg.steps[m])
			continue;
		if (time_graph(g, w->fg.steps[m], opts,
			       budget_share(until, (size_t)(c->n_steps - m -
							    (m < h->at))),
			       w->cands, &w->step_best[m], &tried, pt->why,
			       sizeof(pt->why)))
			pt->graph_ns = w->step_best[m].t.median_ns;
	}
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
	fg->head_out_uid = attr_i64(h->bp, h->out, fz_e.a_t_uid);
	fg->head_at = h->at;
	fg->in_uid = h->at ? attr_i64(h->bp, h->t, fz_e.a_t_uid) : -1;
	fg->fused = &w->fused->g;
	fg->step_x_uid = uid_step_x(h);
	fg->step_y_uid = uid_step_y(h);
	fg->n_steps = c->n_steps;
}

void fuse_measure(struct gpu *g, const struct fuse_chain *c,
		  const struct problems *ps, const struct dt_replay_opts *opts,
		  double until, struct fuse_result *r)
{
	const struct problem *head =
		problems_find(ps, c->steps[fuse_head_at(c)].problem);
	const char *not = fuse_why_not(c, ps, r->why, sizeof(r->why));
	const struct dt_cudnn_graph *bp = NULL;
	struct work w = { .fg = { .head_engine = -1 } };
	struct head h = { 0 };

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
		   head_of(bp, c, &h, r->why, sizeof(r->why)) &&
		   fused_graph(w.fused, &h, c, r->why, sizeof(r->why))) {
		char why[200];
		/* the fused graph, then the head, each its share; the rest
		 * for the outputs' comparison and the steps' own graphs */
		double timed = until - budget_left(until) / 2;
		r->legacy_call = fuse_legacy_fused_call(c, head);
		if (!time_graph(g, &w.fused->g, opts,
				budget_share(timed, (size_t)c->n_steps + 1),
				w.cands, &r->fused, &r->tried, why,
				sizeof(why)))
			snprintf(r->why, sizeof(r->why), "the fused graph: %s",
				 why);
		else if (time_unfused(g, c, &h, head, opts, timed, &w, r))
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
		time_steps(g, c, &h, opts, until, &w, r);
	}
	if (r->why[0] && strcmp(r->status, "measured"))
		r->reason = r->why;
	for (int m = 0; m < DT_FZ_STEPS; m++)
		free(w.steps[m]);
	free(w.head);
	free(w.fused);
	free(w.cands);
}
