/*
 * analyzer-fusion-rules.c - the fusion patterns cuDNN documents and their
 * limits, as rules over a stream's nodes (analyzer/FUSION.md): a
 * convolution or matmul with its pointwise epilogue, a matmul with the
 * pointwise ops that wrote its A or B (its prologue), a batch norm with its
 * add and ReLU (NormAddRelu), a ReLU backward with the batch norm backward
 * (DReluForkDNorm), a run of cuDNN pointwise calls. Each rule builds the
 * chain that starts (a prologue's: ends) at a node, checks the limits that
 * could block it and hands it to the chain search (analyzer-fusion.c) to
 * be counted.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-fusion.h"

const char *const dt_fz_cls_what[DT_KOP_COUNT + 1] = {
	[DT_KOP_OTHER] = "kernel",
	[DT_KOP_FILL] = "kernel",
	[K_CUDNN] = "cuDNN",
	[DT_KOP_GEMM] = "matmul (GEMM kernel)",
	[DT_KOP_GEMM_TAIL] = "split-K reduction",
	[DT_KOP_ADD] = "add",
	[DT_KOP_MUL] = "multiply",
	[DT_KOP_RELU] = "ReLU",
	[DT_KOP_GELU] = "GELU",
	[DT_KOP_SILU] = "SiLU",
	[DT_KOP_SIGMOID] = "sigmoid",
	[DT_KOP_TANH] = "tanh",
	[DT_KOP_RELU_BWD] = "ReLU backward",
	[DT_KOP_GELU_BWD] = "GELU backward",
	[DT_KOP_SILU_BWD] = "SiLU backward",
	[DT_KOP_COPY] = "copy/cast",
	[DT_KOP_BN_STATS] = "batch norm statistics",
	[DT_KOP_BN_UPDATE] = "batch norm running stats",
	[DT_KOP_BN_APPLY] = "batch norm apply",
	[DT_KOP_BN_BWD_REDUCE] = "batch norm backward reduce",
	[DT_KOP_BN_BWD_ELEMT] = "batch norm backward apply",
	[DT_KOP_LAYER_NORM] = "layer norm",
};

static void chain_init(struct chain *c, int32_t device)
{
	c->n = c->n_facts = 0;
	c->blocked = false;
	c->bytes_saved = c->bytes_added = 0;
	c->device = device;
}

static void fact(struct chain *c, enum fact_id id, bool ok, int64_t a,
		 int64_t b, const char *s)
{
	if (c->n_facts < MAX_FACTS)
		c->facts[c->n_facts++] =
			(struct fact){ (uint8_t)id, ok, a, b, s };
	if (!ok)
		c->blocked = true;
}

/* A step of the chain being built: nothing allocated until record() finds
 * the chain new; what points to static text or the op's shape. */
static void add_step(struct chain *c, const struct node *n,
		     enum dt_fz_link link, uint64_t elems, int64_t dtype,
		     bool removed, const char *what)
{
	if (c->n >= DT_FZ_STEPS)
		return;
	struct dt_fz_step *s = &c->steps[c->n];
	memset(s, 0, sizeof(*s));
	c->nodes[c->n++] = n;
	/* a library call's kernels are cuDNN's only when its op says so */
	s->cudnn = n->op ? n->op->lib == DT_LIB_CUDNN : n->cls == K_CUDNN;
	if (!what && n->op && n->op->kind == DT_KIND_POINTWISE &&
	    n->op->one_call)
		what = dt_api_short(n->op->api); /* AddTensor */
	else if (!what && n->op)
		what = dt_op_kind_name(n->op->kind);
	else if (!what)
		what = dt_fz_cls_what[n->cls];
	s->what = (char *)what;
	s->op = n->op ? 0 : n->cls;
	s->full = n->full;
	s->grid_x = n->op ? 0 : n->grid_x;
	s->block_x = n->op ? 0 : n->block_x;
	s->dtype = dtype;
	s->elems = elems;
	s->link = link;
	s->removed = removed;
	s->kernels = n->kernels;
	s->ns = n->ns;
}

static bool same_size(const struct node *n, uint64_t e, uint64_t granule)
{
	uint64_t g = n->granule > granule ? n->granule : granule;
	if (!n->elems || !e)
		return false;
	return (n->elems > e ? n->elems - e : e - n->elems) <= g;
}

/* Whether a chain over a tensor of e elements passes over node n: fills,
 * running-stat updates and bookkeeping kernels far smaller than it. */
static bool passed_over(const struct node *n, uint64_t e)
{
	return n->cls == DT_KOP_FILL || n->cls == DT_KOP_BN_UPDATE ||
	       (!n->seq && e && n->elems && n->elems * 16 < e);
}

/* The next node after j that a chain can go on with or must end at; -1 at
 * the end. */
static long next_node(const struct stream *s, long j, uint64_t e)
{
	for (long k = j + 1; k < (long)s->n && k <= j + LOOKAHEAD; k++)
		if (!passed_over(&s->v[k], e))
			return k;
	return -1;
}

static const char *pw_what(const struct node *n)
{
	if (n->cls == DT_KOP_ADD)
		return n->full ? "residual add" : "bias add";
	if (n->cls == DT_KOP_MUL)
		return n->full ? "multiply" : "scale";
	return dt_fz_cls_what[n->cls];
}

/* Whether a pointwise kernel reads a whole second tensor (a residual, the
 * saved tensor of a backward activation), which a fused kernel must read
 * in its place. */
static bool second_operand(const struct node *n)
{
	return binary_bwd(n->cls) ||
	       ((n->cls == DT_KOP_ADD || n->cls == DT_KOP_MUL) && n->full);
}

/* Whether cuDNN op o reads pointer p. */
static bool reads(const struct opinfo *o, uint64_t p)
{
	for (int i = 0; p && o && i < o->n_ptrs; i++)
		if (o->ptrs[i] == p)
			return true;
	return false;
}

static void check_cc(struct chain *c, int cc, int min, int max,
		     const char *what)
{
	if (!cc)
		fact(c, F_CC_NONE, true, 0, 0, NULL);
	else
		fact(c, F_CC, cc >= min && (!max || cc <= max), cc,
		     min * 1000 + max, what);
}

/* The runtime fusion engines' input and output types (SS90's list). */
static void check_dtype(struct chain *c, int64_t dt)
{
	fact(c, F_DTYPE,
	     dt < 0 || dt == DT_DTYPE_FLOAT || dt == DT_DTYPE_HALF ||
		     dt == DT_DTYPE_BFLOAT16 || dt == DT_DTYPE_INT8 ||
		     dt == DT_DTYPE_INT32 || dt == DT_DTYPE_FP8_E4M3 ||
		     dt == DT_DTYPE_FP8_E5M2,
	     dt, 0, NULL);
}

void dt_fz_fact_text(const struct fact *f, struct dt_sbuf *checks,
		     struct dt_sbuf *blocked, struct dt_sbuf *note)
{
	const char *why = NULL;
	char label[64], buf[240], ty[DT_DTYPE_NAME_SIZE];
	int min = (int)(f->b / 1000), max = (int)(f->b % 1000), cc = (int)f->a;

	label[0] = 0;
	switch ((enum fact_id)f->id) {
	case F_LAYOUT_CONV:
		snprintf(label, sizeof(label), "layout NHWC");
		why = "the convolution's tensors are not NHWC: cuDNN's fused "
		      "convolution graphs need NHWC (channels_last)";
		break;
	case F_LAYOUT_NORM:
		snprintf(label, sizeof(label), "layout NHWC");
		snprintf(buf, sizeof(buf),
			 "the batch norm runs on NCHW tensors: %s needs NHWC "
			 "(channels_last)%s",
			 f->s,
			 strcmp(f->s, "NormAddRelu") ? " for batch norm" : "");
		why = buf;
		break;
	case F_DTYPE:
		snprintf(label, sizeof(label), "data type %s",
			 dt_dtype_name(f->a, ty, sizeof(ty)));
		snprintf(buf, sizeof(buf),
			 "runtime fusion takes FLOAT, HALF, BFLOAT16, INT8, "
			 "INT32 and FP8 tensors, not %s",
			 dt_dtype_name(f->a, ty, sizeof(ty)));
		why = buf;
		break;
	case F_NORM_DTYPE:
		snprintf(label, sizeof(label), "data type %s",
			 dt_dtype_name(f->a, ty, sizeof(ty)));
		why = "NormAddRelu takes FLOAT, HALF and BFLOAT16 tensors";
		break;
	case F_CHANNELS:
		snprintf(label, sizeof(label),
			 "channels %" PRId64 " %% %" PRId64, f->a, f->b);
		snprintf(buf, sizeof(buf),
			 "NormAddRelu needs the channels to be a multiple of "
			 "%" PRId64 " for %s; there are %" PRId64,
			 f->b, f->s, f->a);
		why = buf;
		break;
	case F_CHANNELS_NONE:
		dt_sb_item(checks, "; ", "channels: unknown, not checked");
		return;
	case F_CC:
		snprintf(label, sizeof(label), "cc %d.%d", cc / 10, cc % 10);
		if (max)
			snprintf(buf, sizeof(buf),
				 "%s need%s compute capability %d.%d to %d.%d; "
				 "this GPU is %d.%d",
				 f->s, strchr(f->s, ' ') ? "" : "s", min / 10,
				 min % 10, max / 10, max % 10, cc / 10,
				 cc % 10);
		else
			snprintf(buf, sizeof(buf),
				 "%s need%s compute capability %d.%d or newer; "
				 "this GPU is %d.%d",
				 f->s, strchr(f->s, ' ') ? "" : "s", min / 10,
				 min % 10, cc / 10, cc % 10);
		why = buf;
		break;
	case F_CC_NONE:
		dt_sb_item(checks, "; ",
			   "compute capability: unknown (no device "
			   "record), not checked");
		return;
	case F_STRIDED_DGRAD:
		snprintf(label, sizeof(label), "strided dgrad");
		why = "a strided backward-data convolution takes an epilogue "
		      "only on the SS70 engines (compute capability 7.0 to "
		      "9.0)";
		break;
	case F_ALIGN:
		snprintf(label, sizeof(label), "alignment");
		why = "the SS70 engines need 32-bit aligned tensors; the "
		      "output "
		      "is not";
		break;
	case N_GEMM:
		dt_sb_item(note, "; ", "the matmul ran in %s",
			   f->s);
		return;
	case N_NO_EPILOGUE:
		dt_sb_item(note, "; ",
			   "no cuBLASLt epilogue computes %s: the matmul would "
			   "move to a cuDNN graph",
			   f->s);
		return;
	case F_LT_DTYPE:
		snprintf(label, sizeof(label), "output type %s",
			 dt_dtype_name(f->a, ty, sizeof(ty)));
		snprintf(buf, sizeof(buf),
			 "cuBLASLt's bias and activation epilogues write "
			 "FLOAT, HALF, BFLOAT16 or FP8 outputs, not %s",
			 dt_dtype_name(f->a, ty, sizeof(ty)));
		why = buf;
		break;
	case N_CONV_KEPT:
		dt_sb_item(
			note, "; ", "the convolution stays as it is%s",
			f->a ? "; in FP16, ConvBNfprop would also compute the "
			       "statistics in its epilogue"
			     : "; ConvBNfprop, which would also take the "
			       "statistics into its epilogue, is FP16 only");
		return;
	case N_ALSO_READ:
		dt_sb_item(
			note, "; ",
			"the output of step %" PRId64 " is also read by %s: it "
			"stays in memory as a second output, saving only its "
			"read",
			f->a, f->s);
		return;
	case N_NO_PROLOGUE:
		dt_sb_item(note, "; ",
			   "cuBLASLt has no prologue (it applies nothing to A "
			   "or B as it loads them): the matmul would move to a "
			   "cuDNN graph");
		return;
	case N_COPY_LAYOUT:
		dt_sb_item(
			note, "; ",
			"step %" PRId64 " copies without a cast: the graph "
			"could read its source only as a row- or column-major "
			"matrix with its leading dimension packed (the "
			"source's strides are not recorded)",
			f->a);
		return;
	case N_NEXT_READS:
		dt_sb_item(note, "; ",
			   "the matmul right after it (%s) has an input as "
			   "large: where it reads the same tensor (a backward "
			   "pass's two products of one gradient), that tensor "
			   "stays in memory, saving only one read",
			   f->s);
		return;
	case F_PROLOGUE_OP:
		snprintf(label, sizeof(label), "%s in a prologue", f->s);
		snprintf(buf, sizeof(buf),
			 "no library fuses a %s into the matmul after it: "
			 "cuDNN's g1 (mainloop) fusion takes pointwise ops "
			 "only, and cuBLASLt has no prologue",
			 f->s);
		why = buf;
		break;
	}
	dt_sb_item(checks, "; ", "%s: %s", label, f->ok ? "ok" : "no");
	if (!f->ok)
		dt_sb_item(blocked, "; ", "%s", why);
}

/* What a cuBLASLt epilogue would compute of a GEMM's chain, on top of
 * what the GEMM computes already (have, EPI_*): a residual added first
 * (as C, beta 1), a bias, then ReLU or GELU, then a cast (D's type).
 * False when a step is none of these: *why names the first. */
struct lt_cover {
	unsigned epi;
	bool residual, cast;
	int64_t out_dtype; /* what D is written as */
	const char *why;
};

static bool lt_epilogue(const struct chain *c, unsigned have,
			struct lt_cover *lt)
{
	*lt = (struct lt_cover){ .epi = have, .out_dtype = c->steps[0].dtype };
	for (int m = 1; m < c->n; m++) {
		const struct node *n = c->nodes[m];
		unsigned act = lt->epi & (EPI_RELU | EPI_GELU);
		bool ok = !n->op && !lt->cast;
		if (!ok) {
		} else if (n->cls == DT_KOP_ADD && n->full) {
			ok = !lt->epi && !lt->residual;
			lt->residual = true;
		} else if (n->cls == DT_KOP_ADD) {
			ok = !(lt->epi & EPI_BIAS) && !act;
			lt->epi |= EPI_BIAS;
		} else if (n->cls == DT_KOP_RELU || n->cls == DT_KOP_GELU) {
			ok = !act;
			lt->epi |= n->cls == DT_KOP_RELU ? EPI_RELU : EPI_GELU;
		} else if (n->cls == DT_KOP_COPY) {
			lt->cast = true;
			lt->out_dtype = c->steps[m].dtype;
		} else {
			ok = false;
		}
		if (!ok) {
			lt->why = c->steps[m].what;
			return false;
		}
	}
	return true;
}

/* The fix for a GEMM's chain in cuBLASLt's words: "cuBLASLt matmul with
 * CUBLASLT_EPILOGUE_GELU_BIAS". */
static const char *lt_cover_text(const struct lt_cover *lt, char *buf,
				 size_t size)
{
	static const char *const names[8] = {
		[0] = "DEFAULT",
		[EPI_BIAS] = "BIAS",
		[EPI_RELU] = "RELU",
		[EPI_GELU] = "GELU",
		[EPI_BIAS | EPI_RELU] = "RELU_BIAS",
		[EPI_BIAS | EPI_GELU] = "GELU_BIAS",
	};
	char ty[DT_DTYPE_NAME_SIZE];
	int len = 0;

	APPEND("cuBLASLt matmul with CUBLASLT_EPILOGUE_%s",
	       names[lt->epi & 7] ? names[lt->epi & 7] : "?");
	if (lt->residual)
		APPEND(", the residual as C with beta = 1");
	if (lt->cast)
		APPEND(", D written as %s",
		       dt_dtype_name(lt->out_dtype, ty, sizeof(ty)));
	APPEND(" (or a cuDNN graph Matmul -> pointwise ops)");
	return buf;
}

/* The words and limits of a GEMM's chain, outside cuDNN (a cuBLAS or
 * cuBLASLt call's op, or a GEMM kernel no recorded call launched): the
 * cuBLASLt epilogue that computes it, else a cuDNN graph, whose limits
 * the caller checks. True when cuBLASLt's covers it. */
static bool gemm_cover(struct chain *c, const struct node *a, int64_t dt,
		       char *buf, size_t size)
{
	const struct opinfo *o = a->op;
	struct lt_cover lt;

	if (o)
		fact(c, N_GEMM, true, 0, 0, o->api);
	else
		fact(c, N_GEMM, true, 0, 0,
		     name_of(a)[0] == 'n' ? "cuBLAS (nvjet)"
					  : "another library");
	if (!lt_epilogue(c, o ? o->epi : 0, &lt)) {
		fact(c, N_NO_EPILOGUE, true, 0, 0, lt.why);
		return false;
	}
	c->cover = lt_cover_text(&lt, buf, size);
	dt = lt.out_dtype >= 0 ? lt.out_dtype : dt;
	fact(c, F_LT_DTYPE,
	     dt < 0 || dt == DT_DTYPE_FLOAT || dt == DT_DTYPE_HALF ||
		     dt == DT_DTYPE_BFLOAT16 || dt == DT_DTYPE_FP8_E4M3 ||
		     dt == DT_DTYPE_FP8_E5M2,
	     dt, 0, NULL);
	return true;
}

/* A convolution or matmul (cuDNN's, cuBLAS's or a GEMM kernel) and the
 * pointwise ops after it: one graph with a g2 epilogue, or a cuBLASLt
 * epilogue for a GEMM's. */
static bool try_epilogue(struct dt_fusion *fz, struct stream *s, long i)
{
	struct node *a = &s->v[i];
	const struct opinfo *o = a->op;
	struct chain c;
	char cover[200];

	chain_init(&c, a->device);
	uint64_t e = 0, ptr = 0;
	int64_t dt = -1;
	bool gemm = a->cls == DT_KOP_GEMM;

	if (o) {
		e = tensor_elems(o->out);
		dt = o->out->dtype;
		ptr = o->out_ptr;
	}
	add_step(&c, a, DT_LINK_NONE, e, dt, false, NULL);
	long j = i;
	while (c.n < DT_FZ_STEPS) {
		long k = next_node(s, j, e);
		if (k < 0)
			break;
		struct node *n = &s->v[k];
		enum dt_fz_link link;
		if (n->used)
			break;
		if (!n->seq && pointwise(n->cls)) {
			if (e && n->elems && !same_size(n, e, 0))
				break;
			/* a cast the graph's output type could do; not to FP64
			 * or an unknown type */
			if (n->cls == DT_KOP_COPY &&
			    n->dtype != DT_DTYPE_FLOAT &&
			    n->dtype != DT_DTYPE_HALF &&
			    n->dtype != DT_DTYPE_BFLOAT16)
				break;
			link = e && n->elems ? DT_LINK_SIZE : DT_LINK_ORDER;
			if (!e)
				e = n->elems;
			if (dt < 0)
				dt = n->dtype;
			ptr = 0;
			add_step(&c, n, link, e, n->dtype >= 0 ? n->dtype : dt,
				 true, pw_what(n));
			if (second_operand(n))
				c.bytes_added += e * dsize(dt);
		} else if (n->op && n->op->kind == DT_KIND_POINTWISE &&
			   n->op->graph_ops == 1) {
			if (ptr && reads(n->op, ptr))
				link = DT_LINK_POINTER;
			else if (e && tensor_elems(n->op->out) == e)
				link = DT_LINK_SIZE;
			else
				break;
			add_step(&c, n, link, tensor_elems(n->op->out),
				 n->op->out->dtype, true, NULL);
			ptr = n->op->out_ptr;
		} else {
			break;
		}
		c.bytes_saved += 2 * e * dsize(dt);
		j = k;
	}
	if (c.n < 2) {
		return false;
	}
	if (!c.steps[0].elems) { /* a GEMM kernel writes what the next reads */
		c.steps[0].elems = e;
		c.steps[0].dtype = dt;
	}
	int cc = dt_fz_cc_of(fz, a->device);
	enum dt_op_kind kind = o ? o->kind : DT_KIND_MATMUL;
	switch (kind) {
	case DT_KIND_CONV_FWD:
		c.pattern = "convolution forward + pointwise epilogue";
		c.cover =
			"cuDNN graph ConvolutionFwd -> pointwise ops (generic "
			"runtime fusion, g2 epilogue; ConvBiasAct for "
			"bias + activation)";
		break;
	case DT_KIND_CONV_BWD_DATA:
		c.pattern = "convolution backward data + pointwise epilogue";
		c.cover = "cuDNN graph ConvolutionBwdData -> pointwise ops "
			  "(generic runtime fusion, g2 epilogue)";
		break;
	case DT_KIND_CONV_BWD_FILTER:
		c.pattern = "convolution backward filter + pointwise epilogue";
		c.cover = "cuDNN graph ConvolutionBwdFilter -> pointwise ops "
			  "(generic runtime fusion, g2 epilogue)";
		break;
	default:
		c.pattern = "matmul + pointwise epilogue";
		c.cover = "cuDNN graph Matmul -> pointwise ops (generic "
			  "runtime fusion, g2 epilogue)";
		break;
	}
	bool lt = (gemm || o->lib != DT_LIB_CUDNN) &&
		  kind == DT_KIND_MATMUL &&
		  gemm_cover(&c, a, dt, cover, sizeof(cover));
	if (kind == DT_KIND_CONV_FWD || kind == DT_KIND_CONV_BWD_DATA ||
	    kind == DT_KIND_CONV_BWD_FILTER) {
		const struct dt_tensor *t = o->in->valid ? o->in : o->out;
		fact(&c, F_LAYOUT_CONV, tensor_nhwc(t), 0, 0, NULL);
	}
	if (!lt) {
		check_dtype(&c, dt);
		if (kind == DT_KIND_CONV_BWD_DATA && o->strided && cc > 90)
			fact(&c, F_STRIDED_DGRAD, false, 0, 0, NULL);
		else
			check_cc(&c, cc, 70, 0,
				 "cuDNN's runtime fusion engines");
		if (cc && cc < 80 && o && o->out_ptr % 4)
			fact(&c, F_ALIGN, false, 0, 0, NULL);
	}
	bool by_pointer = o && o->out_ptr;
	for (int m = 1; m < c.n; m++)
		by_pointer &= c.steps[m].link == DT_LINK_POINTER;
	if (by_pointer) {
		/* a cuDNN op after the chain reads an intermediate: it must
		 * stay in memory (a second output of the graph). Only when
		 * every step's buffers are known: kernels outside cuDNN may
		 * have written the buffer in place (PyTorch's add_, relu_) */
		for (int m = 0; m < c.n - 1; m++) {
			uint64_t p =
				c.nodes[m]->op ? c.nodes[m]->op->out_ptr : 0;
			for (int q = m + 1; q < c.n; q++)
				if (c.nodes[q]->op &&
				    c.nodes[q]->op->out_ptr == p)
					p = 0; /* a later step writes it in
						  place */
			for (long k = j + 1;
			     p && k < (long)s->n && k <= j + LOOKAHEAD; k++) {
				if (s->v[k].op && s->v[k].op->out_ptr == p &&
				    !reads(s->v[k].op, p))
					break; /* written anew */
				if (reads(s->v[k].op, p)) {
					fact(&c, N_ALSO_READ, true, m + 1, 0,
					     s->v[k].op->api);
					c.bytes_saved -= e * dsize(dt);
					break;
				}
			}
		}
	}
	dt_fz_record(fz, &c);
	return true;
}

/* The statistics, apply, add and ReLU kernels of a training batch norm (or
 * cuDNN's batch norm and the ops after it): NormAddRelu. */
static bool try_norm_add_relu(struct dt_fusion *fz, struct stream *s, long i)
{
	struct node *a = &s->v[i];
	struct chain c;

	chain_init(&c, a->device);
	const struct dt_tensor *t = NULL;
	uint64_t e = 0;
	int64_t dt = a->dtype;
	char ty[DT_DTYPE_NAME_SIZE];
	bool nhwc = a->nhwc, add = false, relu = false;
	const struct node *conv = NULL;
	long j = i;

	if (a->op) {
		t = a->op->out;
		e = tensor_elems(t);
		dt = t->dtype;
		nhwc = tensor_nhwc(t);
		add_step(&c, a, DT_LINK_NONE, e, dt, true,
			 "batch norm (training)");
	} else {
		/* the convolution before it, when cuDNN's, gives the shape */
		for (long k = i - 1; k >= 0 && k >= i - KEEP_BEHIND; k--) {
			const struct node *b = &s->v[k];
			if (b->op && b->op->kind == DT_KIND_CONV_FWD &&
			    b->op->out->valid && !b->used) {
				t = b->op->out;
				e = tensor_elems(t);
				dt = t->dtype;
				conv = b;
				add_step(&c, b, DT_LINK_NONE, e, dt, false,
					 NULL);
				break;
			}
			if (b->seq || (b->cls != DT_KOP_FILL &&
				       (!b->elems || b->elems >= 65536)))
				break;
		}
		add_step(&c, a, conv ? DT_LINK_ORDER : DT_LINK_NONE, e,
			 a->dtype >= 0 ? a->dtype : dt, true, NULL);
		int stats = c.n - 1;
		long k = next_node(s, j, e);
		if (k < 0 || s->v[k].cls != DT_KOP_BN_APPLY || s->v[k].used) {
			return false;
		}
		/* the running-stat updates between them go too */
		for (long u = i + 1; u < k; u++)
			if (s->v[u].cls == DT_KOP_BN_UPDATE) {
				c.steps[stats].ns += s->v[u].ns;
				c.steps[stats].kernels += s->v[u].kernels;
			}
		add_step(&c, &s->v[k], DT_LINK_ORDER, e, dt, true, NULL);
		j = k;
	}
	for (int want = 0; want < 2 && c.n < DT_FZ_STEPS; want++) {
		long k = next_node(s, j, e);
		if (k < 0 || s->v[k].used)
			break;
		struct node *n = &s->v[k];
		bool is_add = n->cls == DT_KOP_ADD && n->full && !add && !relu;
		bool is_relu = n->cls == DT_KOP_RELU && !relu;
		bool cudnn_act = n->op && n->op->kind == DT_KIND_POINTWISE &&
				 n->op->graph_ops == 1 &&
				 (!e || tensor_elems(n->op->out) == e);
		if (!is_add && !is_relu && !cudnn_act)
			break;
		if (!n->op && e && n->elems && !same_size(n, e, 0))
			break;
		if (!e && n->elems)
			e = n->elems;
		if (dt < 0)
			dt = n->dtype;
		add_step(&c, n,
			 n->op           ? DT_LINK_SIZE
			 : e && n->elems ? DT_LINK_SIZE
					 : DT_LINK_ORDER,
			 e, dt, true, n->op ? NULL : pw_what(n));
		add |= is_add;
		relu |= is_relu || cudnn_act;
		j = k;
	}
	if (!add && !relu) {
		return false;
	}
	/* elements: fill in the steps that did not know them */
	for (int m = 0; m < c.n; m++) {
		if (!c.steps[m].elems)
			c.steps[m].elems = e;
		if (c.steps[m].dtype < 0)
			c.steps[m].dtype = dt;
	}
	uint64_t b = e * dsize(dt);
	/* separate: statistics read X, apply reads X and writes Y, add reads
	 * two and writes one, ReLU reads and writes; fused: X twice (the
	 * statistics, then the apply), Z, and Y once */
	uint64_t before = 3 * b + (add ? 3 * b : 0) + (relu ? 2 * b : 0);
	c.bytes_added = 2 * b + (add ? b : 0) + b;
	c.bytes_saved = before > c.bytes_added ? before - c.bytes_added : 0;
	c.pattern = conv  ? (add ? "convolution + batch norm + add + ReLU"
				 : "convolution + batch norm + ReLU")
		    : add ? "batch norm + add + ReLU"
			  : "batch norm + ReLU";
	c.cover = "cuDNN graph NormForward(training) -> ADD -> RELU_FWD "
		  "(NormAddRelu runtime fusion engine)";
	int cc = dt_fz_cc_of(fz, a->device);
	fact(&c, F_LAYOUT_NORM, nhwc, 0, 0, "NormAddRelu");
	fact(&c, F_NORM_DTYPE,
	     dt < 0 || dt == DT_DTYPE_FLOAT || dt == DT_DTYPE_HALF ||
		     dt == DT_DTYPE_BFLOAT16,
	     dt, 0, NULL);
	if (t && t->valid && t->nb >= 2) {
		int64_t ch = t->dims[1], mult = dsize(dt) == 2 ? 8 : 4;
		fact(&c, F_CHANNELS, ch % mult == 0, ch, mult,
		     dt_dtype_name(dt, ty, sizeof(ty)));
	} else {
		fact(&c, F_CHANNELS_NONE, true, 0, 0, NULL);
	}
	check_cc(&c, cc, 80, 0, "NormAddRelu");
	if (conv)
		fact(&c, N_CONV_KEPT, true,
		     dt == DT_DTYPE_HALF && cc >= 80 && cc != 89, 0, NULL);
	dt_fz_record(fz, &c);
	return true;
}

/* A ReLU backward and the batch norm backward after it: DReluForkDNorm. */
static bool try_drelu_dnorm(struct dt_fusion *fz, struct stream *s, long i)
{
	struct node *a = &s->v[i];
	struct chain c;

	chain_init(&c, a->device);
	uint64_t e = a->elems;
	int64_t dt = a->dtype;

	add_step(&c, a, DT_LINK_NONE, e, dt, true, NULL);
	long k = next_node(s, i, e);
	if (k < 0 || s->v[k].cls != DT_KOP_BN_BWD_REDUCE || s->v[k].used) {
		return false;
	}
	add_step(&c, &s->v[k], DT_LINK_ORDER, e, dt, true, NULL);
	bool nhwc = s->v[k].nhwc;
	k = next_node(s, k, e);
	if (k < 0 || s->v[k].cls != DT_KOP_BN_BWD_ELEMT || s->v[k].used) {
		return false;
	}
	add_step(&c, &s->v[k], DT_LINK_ORDER, e, dt, true, NULL);
	uint64_t b = e * dsize(dt);
	/* separate: dReLU reads dY and Y, writes dZ; the reduction reads dZ
	 * and X; the apply reads dZ and X, writes dX. Fused: two passes over
	 * dY, Y and X, one write of dX */
	c.bytes_added = 7 * b;
	c.bytes_saved = 8 * b - c.bytes_added;
	c.pattern = "ReLU backward + batch norm backward";
	c.cover = "cuDNN graph RELU_BWD -> NormBackward (DReluForkDNorm "
		  "runtime fusion engine)";
	fact(&c, F_LAYOUT_NORM, nhwc, 0, 0, "DReluForkDNorm");
	check_dtype(&c, dt);
	check_cc(&c, dt_fz_cc_of(fz, a->device), 80, 0, "DReluForkDNorm");
	dt_fz_record(fz, &c);
	return true;
}

/* cuDNN pointwise calls back to back on one buffer: one pointwise graph. */
static bool try_pointwise_chain(struct dt_fusion *fz, struct stream *s, long i)
{
	struct node *a = &s->v[i];
	struct chain c;

	chain_init(&c, a->device);
	uint64_t e = tensor_elems(a->op->out), ptr = a->op->out_ptr,
		 total = a->op->bytes;
	int64_t dt = a->op->out->dtype;
	long j = i;

	add_step(&c, a, DT_LINK_NONE, e, dt, true, NULL);
	while (c.n < DT_FZ_STEPS) {
		long k = next_node(s, j, e);
		if (k < 0 || s->v[k].used || !s->v[k].op ||
		    s->v[k].op->kind != DT_KIND_POINTWISE ||
		    s->v[k].op->graph_ops != 1 || !reads(s->v[k].op, ptr))
			break;
		add_step(&c, &s->v[k], DT_LINK_POINTER,
			 tensor_elems(s->v[k].op->out), s->v[k].op->out->dtype,
			 true, NULL);
		total += s->v[k].op->bytes;
		c.bytes_saved += 2 * e * dsize(dt);
		ptr = s->v[k].op->out_ptr;
		j = k;
	}
	if (c.n < 2) {
		return false;
	}
	c.bytes_added = total > c.bytes_saved ? total - c.bytes_saved : 0;
	check_dtype(&c, dt);
	c.pattern = "pointwise chain";
	c.cover = "one cuDNN pointwise graph (generic runtime fusion, "
		  "pointwise-only: SS70 engines)";
	check_cc(&c, dt_fz_cc_of(fz, a->device), 70, 90,
		 "pointwise-only graphs (SS70 engines)");
	dt_fz_record(fz, &c);
	return true;
}

/* The node before j that a prologue can go back to or must end at; -1
 * past the nodes kept behind. */
static long prev_node(const struct stream *s, long j, uint64_t e)
{
	for (long k = j - 1; k >= 0 && k >= j - KEEP_BEHIND; k--)
		if (!passed_over(&s->v[k], e))
			return k;
	return -1;
}

/* The input of matmul o (0: A, 1: B) that node n writes: a cuDNN op's by
 * its pointer, a kernel's by its element count; a kernel whose count is
 * not known (a layer norm: one row a block) is taken to write the
 * smaller. *both: A and B are as large, and a kernel could be writing
 * either. -1 when n writes neither. */
static int operand_of(const struct opinfo *o, const struct node *n, bool *both)
{
	uint64_t e[2] = { tensor_elems(o->in), tensor_elems(o->in2) };
	uint64_t p[2] = { o->in_ptr, o->in2_ptr };
	int which = -1;

	*both = false;
	for (int k = 0; k < 2; k++) {
		if (n->op ? p[k] && n->op->out_ptr == p[k]
			  : n->elems && same_size(n, e[k], 0)) {
			*both = which >= 0;
			which = which < 0 ? k : which;
		}
	}
	if (!n->op && !n->elems && e[0] && e[1]) {
		which = e[1] < e[0];
		*both = e[0] == e[1];
	}
	return which >= 0 && e[which] ? which : -1;
}

/* The op of the matmul right after node i on the stream (bookkeeping
 * passed over), or NULL when the next node is none. */
static const struct opinfo *next_matmul(const struct stream *s, long i)
{
	long k = next_node(s, i, 0);
	const struct opinfo *o = k >= 0 ? s->v[k].op : NULL;

	return o && o->kind == DT_KIND_MATMUL ? o : NULL;
}

/* What a prologue step is to cuDNN's g1 (mainloop) fusion: a pointwise
 * op (a kernel, or a single-op cuDNN call), or a layer norm, which ends
 * the chain going back and blocks it. */
enum pro_step { PRO_NONE, PRO_POINTWISE, PRO_CUDNN, PRO_NORM };

static enum pro_step prologue_step(const struct node *n)
{
	if (n->used)
		return PRO_NONE;
	if (n->op)
		return n->op->kind == DT_KIND_POINTWISE && n->op->graph_ops == 1
			       ? PRO_CUDNN
			       : PRO_NONE;
	if (n->seq)
		return PRO_NONE;
	return pointwise(n->cls)	    ? PRO_POINTWISE
	       : n->cls == DT_KOP_LAYER_NORM ? PRO_NORM
					     : PRO_NONE;
}

/* The steps before a matmul that wrote its input, nearest first: each
 * one's link to the step after it, which input they end at, its elements
 * and type. */
struct prologue {
	const struct node *back[DT_FZ_STEPS - 1];
	enum dt_fz_link links[DT_FZ_STEPS - 1];
	int n;
	int which; /* 0: A, 1: B */
	bool both; /* A and B are as large: either */
	bool norm; /* its first step is a layer norm */
	uint64_t e;
	int64_t dt;
};

/* Go back from matmul node i over the steps that wrote its input; false
 * when none did. */
static bool prologue_walk(const struct stream *s, long i, struct prologue *p)
{
	const struct opinfo *o = s->v[i].op;

	*p = (struct prologue){ .which = -1, .dt = -1 };
	for (long j = i; p->n < DT_FZ_STEPS - 1 && !p->norm;) {
		long k = prev_node(s, j, p->e);
		const struct node *n = k >= 0 ? &s->v[k] : NULL;
		enum pro_step st = n ? prologue_step(n) : PRO_NONE;
		/* the first step back must say which input it writes: by its
		 * pointer or its size (a layer norm's is not known) */
		if (st == PRO_NONE || (st == PRO_NORM && p->n) ||
		    (st == PRO_POINTWISE && !p->n && !n->elems))
			break;
		if (!p->n) {
			p->which = operand_of(o, n, &p->both);
			if (p->which < 0)
				break;
			const struct dt_tensor *t = p->which ? o->in2 : o->in;
			p->e = tensor_elems(t);
			p->dt = t->dtype;
		} else if (st == PRO_CUDNN
				   ? !reads(p->back[p->n - 1]->op,
					    n->op->out_ptr)
				   : n->elems && !same_size(n, p->e, 0)) {
			break;
		}
		p->links[p->n] = st == PRO_CUDNN ? DT_LINK_POINTER
				 : st == PRO_POINTWISE && n->elems
					 ? DT_LINK_SIZE
					 : DT_LINK_ORDER;
		p->norm = st == PRO_NORM;
		p->back[p->n++] = n;
		j = k;
	}
	return p->n > 0;
}

/* The fix for a prologue's chain, its notes and the limits checked. */
static void prologue_words(struct dt_fusion *fz, const struct stream *s, long i,
			   const struct prologue *p, struct chain *c, bool cast,
			   int copy, char *cover, size_t size)
{
	static const char *const names[2][2] = { { "A", "B" },
						 { "A or B", "A or B" } };
	const struct node *mm = &s->v[i];
	const struct opinfo *o = mm->op, *next = next_matmul(s, i);

	c->pattern =
		p->norm ? "layer norm + matmul" : "pointwise prologue + matmul";
	if (p->norm) {
		c->cover = "none: a normalization is no pointwise op";
	} else {
		snprintf(cover, size,
			 "cuDNN graph pointwise ops on %s -> Matmul (generic "
			 "runtime fusion, g1 mainloop fusion%s)",
			 names[p->both][p->which],
			 cast ? "; a mixed-input-precision matmul" : "");
		c->cover = cover;
	}
	if (o->lib != DT_LIB_CUDNN) {
		fact(c, N_GEMM, true, 0, 0, o->api);
		fact(c, N_NO_PROLOGUE, true, 0, 0, NULL);
	}
	if (copy)
		fact(c, N_COPY_LAYOUT, true, copy, 0, NULL);
	if (next &&
	    (tensor_elems(next->in) == p->e || tensor_elems(next->in2) == p->e))
		fact(c, N_NEXT_READS, true, 0, 0, next->api);
	if (p->norm) {
		fact(c, F_PROLOGUE_OP, false, 0, 0, "layer norm");
	} else {
		check_dtype(c, p->dt);
		check_cc(c, dt_fz_cc_of(fz, mm->device), 80, 0,
			 "cuDNN's g1 (mainloop) fusion");
	}
}

/* Pointwise ops whose output a matmul reads as A or B (a cuBLAS or
 * cuBLASLt call's op, or cuDNN's): one cuDNN graph with those ops in its
 * g1 (mainloop) fusion, on that input; a cast there makes it a
 * mixed-input-precision matmul. cuBLASLt has no prologue. The saving is
 * priced with the matmul's own input: each step's output written and read
 * back. */
static bool try_prologue(struct dt_fusion *fz, struct stream *s, long i)
{
	const struct node *mm = &s->v[i];
	struct prologue p;
	struct chain c;
	bool cast = false;
	int copy = 0; /* the step that copies without a cast */
	char cover[200];

	if (!prologue_walk(s, i, &p))
		return false;
	chain_init(&c, mm->device);
	for (int m = p.n - 1; m >= 0; m--) {
		const struct node *n = p.back[m];
		/* what feeds the matmul is its input; before that, what the
		 * kernel's name says */
		uint64_t se = n->op ? tensor_elems(n->op->out) : p.e;
		int64_t sdt = n->op		      ? n->op->out->dtype
			      : m && n->dtype >= 0 ? n->dtype
						   : p.dt;
		/* PyTorch's same-type copy (a layout's, .contiguous()) */
		if (n->cls == DT_KOP_COPY && strstr(name_of(n), "direct_copy"))
			copy = p.n - m;
		else
			cast |= n->cls == DT_KOP_COPY;
		add_step(&c, n, m + 1 < p.n ? p.links[m + 1] : DT_LINK_NONE, se,
			 sdt, true, n->op ? NULL : pw_what(n));
		c.bytes_saved += 2 * se * dsize(sdt);
		if (!n->op && second_operand(n))
			c.bytes_added += se * dsize(sdt);
	}
	add_step(&c, mm, p.links[0], tensor_elems(mm->op->out),
		 mm->op->out->dtype, false, NULL);
	prologue_words(fz, s, i, &p, &c, cast, copy, cover, sizeof(cover));
	dt_fz_record(fz, &c);
	return true;
}

void dt_fz_look_at(struct dt_fusion *fz, struct stream *s, long i)
{
	struct node *n = &s->v[i];
	const struct opinfo *o = n->op;
	bool done = false;

	if (n->used)
		return;
	if (o) {
		/* a GEMM call's own epilogue may be taken further */
		uint32_t epi = (o->epi & EPI_BIAS ? 1 : 0) +
			       (o->epi & (EPI_RELU | EPI_GELU) ? 1 : 0);
		if ((o->kind == DT_KIND_CONV_FWD ||
		     o->kind == DT_KIND_CONV_BWD_DATA ||
		     o->kind == DT_KIND_CONV_BWD_FILTER ||
		     o->kind == DT_KIND_MATMUL) &&
		    o->graph_ops == 1 + epi)
			done = try_epilogue(fz, s, i);
		/* and its inputs what ops before it wrote: the matmul may be
		 * in an epilogue's chain and a prologue's */
		if (o->kind == DT_KIND_MATMUL && o->graph_ops == 1 + epi)
			done |= try_prologue(fz, s, i);
		else if (o->kind == DT_KIND_NORM_FWD && o->training)
			done = try_norm_add_relu(fz, s, i);
		else if (o->kind == DT_KIND_POINTWISE && o->graph_ops == 1)
			done = try_pointwise_chain(fz, s, i);
	} else if (n->cls == DT_KOP_GEMM) {
		done = try_epilogue(fz, s, i);
	} else if (n->cls == DT_KOP_BN_STATS) {
		done = try_norm_add_relu(fz, s, i);
	} else if (n->cls == DT_KOP_RELU_BWD) {
		done = try_drelu_dnorm(fz, s, i);
	}
	(void)done;
}
