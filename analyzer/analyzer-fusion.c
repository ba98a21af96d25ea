/*
 * analyzer-fusion.c - chains of GPU work that one cuDNN graph could run
 * fused (dt-analyzer.h, "fusion"; the rules are in analyzer/FUSION.md).
 *
 * Every kernel becomes a node of its stream; the kernels of one cuDNN call
 * make one node, which the model's op for that call describes. Nodes are
 * kept in start order per stream, and once a few seconds of GPU time lie
 * after them, each is tried as the anchor of a chain: a convolution or
 * matmul with the pointwise kernels after it, a matmul with those before
 * it that wrote its input, a batch norm with its add and
 * ReLU, a ReLU backward with the batch norm backward after it, a run of
 * cuDNN pointwise calls. Chains that match a pattern are checked against
 * its limits and added up by their steps.
 *
 * Of a trace's steady state by default, as the summary's numbers are: the
 * summary hands over its cut points as it makes and drops them, and each
 * chain's occurrences (and each fused problem's executions) are counted
 * between them, by the time of the chain's first step, however late the
 * analysis comes to it; once the trace is read, those before the cut are
 * left out (dt_fusion_end_file).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-fusion.h"
#include "analyzer-pipe.h"
#include "analyzer-place.h"

/* GPU time (ns) a node waits after its start before it is looked at, so
 * that the kernels after it are in; nodes held per stream at most before
 * the oldest are looked at anyway. */
#define HORIZON_NS (2ull * 1000 * 1000 * 1000)
#define MAX_HELD   8192
/* nodes held at most while an op is awaited (the model holds ops for 3 s
 * of host time): past that, chains through it are not followed */
#define MAX_WAITING (1u << 20)

struct device_cc {
	uint32_t id;
	int cc; /* major * 10 + minor */
};

struct priv {
	struct opinfo *free_ops;
	bool finished; /* dt_fusion_finish() ran: nothing more comes in */
	/* a file's records and ops go to the thread behind this, when it
	 * could be started: the analysis runs beside the model */
	struct dt_pipe *pipe;
	/* per file */
	/* the highest execution id of an op handed in: of calls' own, and
	 * of replays from CUDA graphs (DT_EXEC_REPLAY and up), which come in
	 * order each, but not with each other */
	uint64_t delivered[2];
	struct shape **shapes; /* by problem id */
	size_t n_shapes, cap_shapes;
	/* per file */
	struct stream *streams;
	size_t n_streams;
	struct waiting {
		uint64_t seq;      /* the op's execution id */
		struct opinfo *op; /* NULL once taken */
	} * ops; /* waiting for their node, by execution id */
	size_t n_ops, cap_ops, ops_head;
	struct device_cc devs[64];
	int n_devs;
	struct fz_steady steady;
	/* results */
	uint32_t *opp_idx; /* chain_hash() -> index + 1 */
	uint64_t *opp_h;   /* each opportunity's chain_hash() */
	size_t cap_opp_idx, cap_opps;
	size_t cap_fused;
};

#define P(fz) ((struct priv *)(fz)->priv)

const char *dt_fz_link_name(enum dt_fz_link l)
{
	switch (l) {
	case DT_LINK_POINTER:
		return "pointer";
	case DT_LINK_SIZE:
		return "size+order";
	case DT_LINK_ORDER:
		return "order";
	default:
		return "";
	}
}

struct dt_fusion *dt_fusion_new(void)
{
	struct dt_fusion *fz = calloc(1, sizeof(*fz));
	if (fz && !(fz->priv = calloc(1, sizeof(struct priv)))) {
		free(fz);
		fz = NULL;
	}
	return fz;
}

/* The kernel's function and, for PyTorch's generic elementwise kernels,
 * the operation inside: "vectorized_elementwise_kernel[CUDAFunctor_add]". */
static char *kernel_detail(const struct dt_kernel_class *kc)
{
	const char *name = kc ? kc->name : "";
	size_t n;
	const char *f = dt_kernel_function(name, strlen(name), &n);

	if (kc && kc->op_needle && strstr(name, "elementwise_kernel"))
		return dt_xasprintf("%.*s[%s]", (int)n, f, kc->op_needle);
	return strndup(f, n);
}

int dt_fz_cc_of(const struct dt_fusion *fz, int32_t device)
{
	const struct priv *pv = P(fz);

	for (int i = 0; i < pv->n_devs; i++)
		if ((int32_t)pv->devs[i].id == device)
			return pv->devs[i].cc;
	return 0;
}

/* ---------------------------------------------------- cuDNN ops' data */

/* The value after "key": in a JSON object's text, up to its end. */
/* Roles whose tensor an operation writes: backend attribute roles, and
 * legacy descriptor arguments (without their "Desc"). */
static bool output_role(const char *role, size_t n)
{
	static const char *const outs[] = {
		"Y",  "DX", "DW", "C",  "O",  "DQ",  "DK",  "DV", "y",
		"dx", "dw", "c",  "hy", "cy", "dhx", "dcx", "dB", "db",
	};
	for (size_t i = 0; i < sizeof(outs) / sizeof(*outs); i++)
		if (strlen(outs[i]) == n && !strncmp(outs[i], role, n))
			return true;
	return false;
}

/* Roles of an operation's second operand: a matmul's B. */
static bool operand_role(const char *role, size_t n)
{
	return n == 1 && *role == 'B';
}

/* Roles of an operation's main input. */
static bool input_role(const char *role, size_t n)
{
	static const char *const ins[] = {
		"X", "A", "DY", "x", "dy", "Q", "a"
	};
	for (size_t i = 0; i < sizeof(ins) / sizeof(*ins); i++)
		if (strlen(ins[i]) == n && !strncmp(ins[i], role, n))
			return true;
	return false;
}

/* What every execution of one problem shares: its tensors, read once, and
 * which of them it writes first, reads as its main input, and reads. */
#define MAX_KEYS 12

struct shape {
	uint64_t id; /* dt_op.problem_id */
	struct opinfo proto;
	struct dt_tensor out, in, in2; /* what it writes first, its main
					  input, a matmul's B */
	int out_key, in_key, in2_key;  /* their index in the op's tensors,
					  -1 */
	int keys[MAX_KEYS];       /* what it reads */
	int n_keys;
	uint64_t virt; /* bytes of the intermediates a graph keeps virtual */
	int32_t fused; /* its entry in dt_fusion.fused, -1 none */
	uint64_t hash; /* of its op's api and brief: the same in every file */
};

/* Whether an op's pointer i (p) is the data of its tensor `key`: a legacy
 * tensor's argument, or a backend tensor's uid. */
static bool key_is(const struct dt_op *op, int key, const struct dt_op_ptr *p,
		   uint32_t i)
{
	const struct dt_op_tensor *t;

	if (key < 0 || (uint32_t)key >= op->n_tensors)
		return false;
	t = &op->tensors[key];
	if (t->ptr >= 0)
		return (uint32_t)t->ptr == i;
	return p->uid >= 0 && p->uid == t->t.uid;
}

/* Read an op's tensors into sh; the intermediates a graph keeps virtual
 * add up in sh->virt. */
static void shape_tensors(struct shape *sh, const struct dt_op *op)
{
	struct opinfo *o = &sh->proto;
	bool legacy = op->plan == 0;

	for (uint32_t i = 0; i < op->n_tensors; i++) {
		const struct dt_op_tensor *ot = &op->tensors[i];
		struct dt_tensor t = ot->t;
		const char *role = ot->role;
		if (!dt_enum_name("cudnnDataType_t", 15, t.dtype))
			t.dtype = -1;
		t.by_value = false;
		if (t.is_virtual) {
			uint64_t n = tensor_elems(&t);
			sh->virt += n * dsize(t.dtype);
			if (n > o->largest_virtual)
				o->largest_virtual = n;
			continue;
		}
		/* legacy roles are descriptor arguments without "Desc" (x);
		 * backend ones attribute names, whole ("MATMUL_ADESC") or
		 * short ("X") */
		size_t base = strlen(role);
		if (legacy && base > 4 && !strncmp(role + base - 4, "Desc", 4))
			base -= 4;
		if (!legacy) {
			if (base > 4 && !strncmp(role + base - 4, "DESC", 4))
				base -= 4;
			if (base > 1 && role[base - 1] == '_')
				base--;
			const char *us = memrchr(role, '_', base);
			if (us) {
				base -= (size_t)(us + 1 - role);
				role = us + 1;
			}
		}
		bool reads = true;
		if (output_role(role, base)) {
			if (!sh->out.valid) {
				sh->out = t;
				sh->out_key = (int)i;
			}
			/* cudnnAddTensor's C is read too (beta, in place) */
			reads = legacy && base == 1 && (*role | 0x20) == 'c';
		} else if (input_role(role, base) && !sh->in.valid) {
			sh->in = t;
			sh->in_key = (int)i;
		} else if (operand_role(role, base) && !sh->in2.valid) {
			sh->in2 = t;
			sh->in2_key = (int)i;
		}
		if (reads && sh->n_keys < MAX_KEYS)
			sh->keys[sh->n_keys++] = (int)i;
	}
	/* legacy pointwise calls name their tensors a, b, c or x, y */
	if (!sh->in.valid && sh->out.valid) {
		sh->in = sh->out;
		if (sh->n_keys)
			sh->in_key = sh->keys[0];
	}
}

/* An execution's pointers, by its problem's keys. */
static void op_pointers(struct opinfo *o, const struct shape *sh,
			const struct dt_op *op)
{
	for (uint32_t i = 0; i < op->n_ptrs; i++) {
		const struct dt_op_ptr *p = &op->ptrs[i];
		if (key_is(op, sh->out_key, p, i))
			o->out_ptr = p->value;
		if (key_is(op, sh->in_key, p, i))
			o->in_ptr = p->value;
		if (key_is(op, sh->in2_key, p, i))
			o->in2_ptr = p->value;
		for (int k = 0; k < sh->n_keys && o->n_ptrs < MAX_KEYS; k++)
			if (key_is(op, sh->keys[k], p, i))
				o->ptrs[o->n_ptrs++] = p->value;
	}
}

/* --------------------------------------------------------------- nodes */

static struct stream *stream_of(struct priv *pv, uint32_t device, uint32_t id)
{
	for (size_t i = 0; i < pv->n_streams; i++)
		if (pv->streams[i].device == device && pv->streams[i].id == id)
			return &pv->streams[i];
	struct stream *v =
		realloc(pv->streams, (pv->n_streams + 1) * sizeof(*v));
	if (!v)
		return NULL;
	pv->streams = v;
	v += pv->n_streams++;
	memset(v, 0, sizeof(*v));
	v->device = device;
	v->id = id;
	return v;
}

static uint64_t *delivered_of(struct priv *pv, uint64_t exec)
{
	return &pv->delivered[exec >= DT_EXEC_REPLAY];
}

/* The op of execution seq, taken out of the waiting list; NULL when
 * none. */
static struct opinfo *opinfo_take(struct priv *pv, uint64_t seq)
{
	size_t lo = pv->ops_head, hi = pv->n_ops;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pv->ops[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < pv->n_ops && pv->ops[lo].seq == seq) {
		struct opinfo *o = pv->ops[lo].op;
		pv->ops[lo].op = NULL;
		return o;
	}
	return NULL;
}

/* Op records come and go by the thousand: a free list keeps them. */
static struct opinfo *opinfo_new(struct priv *pv)
{
	struct opinfo *o = pv->free_ops;

	if (o)
		pv->free_ops = o->next_free;
	else
		o = malloc(sizeof(*o));
	return o;
}

static void opinfo_free(struct priv *pv, struct opinfo *o)
{
	if (o) {
		o->next_free = pv->free_ops;
		pv->free_ops = o;
	}
}

static void process(struct dt_fusion *fz, struct stream *s, bool final);

/* What the analysis reads of a kernel. */
struct kernel {
	uint64_t start, end; /* on the GPU's clock: only their order counts */
	uint64_t t;          /* the time the cut places it by */
	uint64_t seq;        /* the op execution (dt_activity.exec), 0 for
				kernels outside cuDNN */
	uint32_t device, stream;
	int32_t grid_x, block_x;
	const struct dt_kernel_class *kc; /* the model's */
};

static void add_kernel(struct dt_fusion *fz, const struct kernel *k)
{
	const struct dt_kernel_class *kc = k->kc;
	struct priv *pv = P(fz);
	struct stream *s = stream_of(pv, k->device, k->stream);
	uint64_t seq = k->seq;
	uint64_t d = k->end > k->start ? k->end - k->start : 0;

	if (!s || !kc)
		return;
	/* the kernels of one cuDNN call, and a split-K GEMM's reduction,
	 * make one node */
	for (size_t i = s->n; i > s->next && i + 2 > s->n; i--) {
		struct node *n = &s->v[i - 1];
		if ((seq && n->seq == seq) ||
		    (!seq && !n->seq && i == s->n && n->cls == DT_KOP_GEMM &&
		     kc->op == DT_KOP_GEMM_TAIL)) {
			n->end = k->end > n->end ? k->end : n->end;
			n->ns += d;
			n->kernels++;
			return;
		}
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct node *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return;
		s->v = v;
		s->cap = cap;
	}
	struct node n = { .start = k->start,
			  .end = k->end,
			  .t = k->t,
			  .seq = seq,
			  .ns = d,
			  .kernels = 1,
			  .device = (int32_t)k->device,
			  .grid_x = k->grid_x,
			  .block_x = k->block_x,
			  .kc = kc };
	n.dtype = kc->dtype;
	n.nhwc = kc->nhwc;
	n.cls = seq ? K_CUDNN : (uint8_t)kc->op;
	if (!seq) {
		n.elems = dt_kernel_class_elems(kc, k->grid_x, k->block_x,
						&n.granule);
		n.full = kc->vectorized;
	}
	/* the run's streaming bandwidth: unary elementwise kernels, and
	 * binary ones over whole tensors, large enough not to be launch
	 * bound */
	uint64_t ds = n.dtype >= 0 ? dsize(n.dtype) : 0;
	int arrays = n.cls == DT_KOP_RELU || n.cls == DT_KOP_GELU ||
				     n.cls == DT_KOP_SILU ||
				     n.cls == DT_KOP_SIGMOID ||
				     n.cls == DT_KOP_TANH
			     ? 2
		     : (n.cls == DT_KOP_ADD || n.cls == DT_KOP_MUL ||
			binary_bwd(n.cls)) &&
				     n.full
			     ? 3
			     : 0;
	if (arrays && ds && n.elems * ds >= (4u << 20) && d) {
		fz->stream_bytes += (uint64_t)arrays * n.elems * ds;
		fz->stream_ns += d;
		fz->stream_kernels++;
	}
	/* in start order (they nearly always come so) */
	size_t at = s->n;
	while (at > s->next && s->v[at - 1].start > n.start)
		at--;
	memmove(&s->v[at + 1], &s->v[at], (s->n - at) * sizeof(*s->v));
	s->v[at] = n;
	if (at < s->attached)
		s->attached = at;
	s->n++;
	if (n.start > s->last_start)
		s->last_start = n.start;
	fz->nodes++;
	/* look at nodes in batches: each look moves the held ones down */
	if (s->n - s->next > MAX_HELD && s->n >= s->looked + MAX_HELD / 4) {
		s->looked = s->n;
		process(fz, s, false);
		s->looked = s->n;
	}
}

static void on_message(void *arg, uint32_t kind, void *msg, size_t n);

/* Let the thread finish what it was given, and stop it. */
static void stop_thread(struct priv *pv)
{
	dt_pipe_free(pv->pipe);
	pv->pipe = NULL;
}

static void on_device_now(struct dt_fusion *fz, const struct dt_device *d)
{
	struct priv *pv = P(fz);

	if (pv->n_devs < 64)
		pv->devs[pv->n_devs++] = (struct device_cc){
			d->id, (int)(d->cc_major * 10 + d->cc_minor)
		};
	if (!fz->peak_bandwidth && d->mem_bandwidth_kBps)
		fz->peak_bandwidth = (double)d->mem_bandwidth_kBps * 1e3;
}

/* ------------------------------------------------------- already fused */

/* A problem that already runs fused: its entry in fz->fused, made with
 * its first execution; -1 when it is none. */
static int32_t fused_entry(struct dt_fusion *fz, const struct dt_op *op,
			   const struct shape *sh)
{
	struct priv *pv = P(fz);
	const struct opinfo *o = &sh->proto;
	bool attn = o->kind == DT_KIND_ATTN_FWD || o->kind == DT_KIND_ATTN_BWD;
	bool cba = !strcmp(op->api, "cudnnConvolutionBiasActivationForward");
	/* a GEMM call with its epilogue: the product and each step's result
	 * before the next, kept as virtual tensors */
	bool epi = o->one_call && o->kind == DT_KIND_MATMUL && o->epi;
	uint64_t kept = sh->virt * 2;

	if (o->graph_ops < 2 && !attn && !cba)
		return -1;
	/* the legacy fused call keeps two intermediates (the convolution's
	 * result, and that plus bias) as large as its output */
	if (cba)
		kept = 4 * tensor_elems(o->out) * dsize(o->out->dtype);
	if (attn) {
		/* the B*H*Sq*Skv scores, written and read back once had they
		 * left the chip: the graph's largest intermediate, else Sq^2 */
		uint64_t scores = o->largest_virtual;
		if (!scores && o->in->valid && o->in->nb == 4) {
			struct dt_tensor q = *o->in;
			q.nb = 3; /* B, H, Sq */
			scores = tensor_elems(&q);
			scores *= q.dims[2] > 0 ? (uint64_t)q.dims[2] : 0;
		}
		kept = 2 * scores *
		       dsize(o->in->valid ? o->in->dtype : DT_DTYPE_HALF);
	}
	for (size_t i = 0; i < fz->n_fused; i++)
		if (!strcmp(fz->fused[i].key, op->problem))
			return (int32_t)i;
	if (fz->n_fused == pv->cap_fused) {
		size_t cap = pv->cap_fused ? pv->cap_fused * 2 : 16;
		void *v = realloc(fz->fused, cap * sizeof(*fz->fused));
		if (!v)
			return -1;
		fz->fused = v;
		pv->cap_fused = cap;
	}
	struct dt_fz_fused *f = &fz->fused[fz->n_fused];
	memset(f, 0, sizeof(*f));
	f->key = dt_xstrdup(op->problem);
	f->what = attn  ? dt_xasprintf("%s (flash attention)",
				       dt_op_kind_name(o->kind))
		  : cba ? dt_xstrdup("convolution + bias + activation "
				     "(cudnnConvolutionBiasActivationForward)")
		  : epi ? dt_xasprintf("%s with its epilogue (%s)",
				       dt_op_kind_name(o->kind), o->api)
			: dt_xasprintf("%s graph of %u operations",
				       dt_op_kind_name(o->kind), o->graph_ops);
	f->brief = dt_xstrdup(op->brief);
	f->graph_ops = cba ? 3 : o->graph_ops;
	f->bytes_kept = kept;
	return (int32_t)fz->n_fused++;
}

/* What the op's recipe says of it: how many operations its graph runs,
 * whether one runs in training mode or convolves with a stride. */
static void recipe_facts(struct opinfo *o, const struct dt_op *op)
{
	const struct dt_recipe *r = op->recipe;

	o->graph_ops = r && r->n_nodes ? r->n_nodes : 1;
	o->one_call = r && !op->plan;
	o->lib = (uint8_t)dt_lib_of_library(op->library);
	o->library = op->library;
	for (uint32_t i = 0; r && i < r->n_nodes; i++) {
		const char *name = r->nodes[i].name;
		o->training |= r->nodes[i].training;
		o->strided |= r->nodes[i].stride > 1;
		/* a GEMM call's epilogue, after its product */
		if (i && name && r->nodes[0].kind == DT_KIND_MATMUL)
			o->epi |= !strcmp(name, "bias")	  ? EPI_BIAS
				  : !strcmp(name, "relu") ? EPI_RELU
				  : !strcmp(name, "gelu") ? EPI_GELU
							  : 0;
	}
}

/* The shape of op's problem: made with its first execution. */
static struct shape *shape_of(struct dt_fusion *fz, const struct dt_op *op)
{
	struct priv *pv = P(fz);
	uint64_t id = op->problem_id;

	if (pv->n_shapes * 2 >= pv->cap_shapes) {
		size_t cap = pv->cap_shapes ? pv->cap_shapes * 2 : 256;
		struct shape **v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < pv->cap_shapes; i++)
			if (pv->shapes[i]) {
				size_t k = dt_hash(&pv->shapes[i]->id, 8, 5) &
					   (cap - 1);
				while (v[k])
					k = (k + 1) & (cap - 1);
				v[k] = pv->shapes[i];
			}
		free(pv->shapes);
		pv->shapes = v;
		pv->cap_shapes = cap;
	}
	size_t k = dt_hash(&id, 8, 5) & (pv->cap_shapes - 1);
	for (; pv->shapes[k]; k = (k + 1) & (pv->cap_shapes - 1))
		if (pv->shapes[k]->id == id)
			return pv->shapes[k];

	struct shape *sh = calloc(1, sizeof(*sh));
	if (!sh)
		return NULL;
	struct opinfo *o = &sh->proto;
	sh->id = id;
	/* none: matches no pointer */
	sh->out_key = sh->in_key = sh->in2_key = -1;
	o->kind = op->cost.kind;
	o->out = &sh->out;
	o->in = &sh->in;
	o->in2 = &sh->in2;
	o->api = dt_xstrdup(op->api);
	o->brief = dt_xstrdup(op->brief && *op->brief ? op->brief : op->desc);
	o->dtype = op->cost.dtype;
	o->bytes = op->cost.bytes;
	recipe_facts(o, op);
	shape_tensors(sh, op);
	o->shape = sh;
	sh->hash = dt_hash(o->brief, strlen(o->brief),
			   dt_hash(o->api, strlen(o->api), 7));
	sh->fused = fused_entry(fz, op, sh);
	pv->shapes[k] = sh;
	pv->n_shapes++;
	return sh;
}

static void shapes_free(struct priv *pv)
{
	for (size_t i = 0; i < pv->cap_shapes; i++)
		if (pv->shapes[i]) {
			free(pv->shapes[i]->proto.api);
			free(pv->shapes[i]->proto.brief);
			free(pv->shapes[i]);
		}
	free(pv->shapes);
	pv->shapes = NULL;
	pv->n_shapes = pv->cap_shapes = 0;
}

/* An op handed over, placed at t (dt_place_op). */
static void op_now(struct dt_fusion *fz, const struct dt_op *op, uint64_t t)
{
	struct priv *pv = P(fz);

	if (!op->kernels || pv->finished)
		return;
	const struct shape *sh = shape_of(fz, op);
	struct opinfo *o = sh ? opinfo_new(pv) : NULL;
	if (!o)
		return;
	*o = sh->proto;
	o->seq = op->seq;
	o->problem = op->problem;
	op_pointers(o, sh, op);
	if (sh->fused >= 0)
		fz_steady_fused(&pv->steady, fz, sh->fused, t, op->gpu_ns);

	uint64_t *delivered = delivered_of(pv, o->seq);
	if (o->seq <= *delivered) {
		opinfo_free(pv, o); /* ops come in order; a trace's own fault */
		return;
	}
	*delivered = o->seq;
	if (pv->n_ops == pv->cap_ops) {
		/* drop what was taken before growing */
		size_t k = 0;
		for (size_t i = pv->ops_head; i < pv->n_ops; i++)
			if (pv->ops[i].op)
				pv->ops[k++] = pv->ops[i];
		pv->n_ops = k;
		pv->ops_head = 0;
		if (pv->n_ops * 2 >= pv->cap_ops) {
			size_t cap = pv->cap_ops ? pv->cap_ops * 2 : 1024;
			void *v = realloc(pv->ops, cap * sizeof(*pv->ops));
			if (!v) {
				opinfo_free(pv, o);
				return;
			}
			pv->ops = v;
			pv->cap_ops = cap;
		}
	}
	/* a call's own op goes before the replays waiting */
	size_t at = pv->n_ops;
	while (at > pv->ops_head && pv->ops[at - 1].seq > o->seq)
		at--;
	memmove(pv->ops + at + 1, pv->ops + at,
		(pv->n_ops - at) * sizeof(*pv->ops));
	pv->ops[at] = (struct waiting){ o->seq, o };
	pv->n_ops++;
	while (pv->ops_head < pv->n_ops && !pv->ops[pv->ops_head].op)
		pv->ops_head++;
}

/* ------------------------------------------------- the second thread */

/* What goes through the pipe: what the analysis reads of a kernel, a
 * device, or what it reads of an op. Kernel classes and the strings and
 * tensors an op points to are the model's, kept as long as the session
 * lives, which is past dt_fusion_end_file(); an op's pointers are
 * copied. */
enum { MSG_DEVICE = 1, MSG_KERNEL, MSG_OP, MSG_MARK, MSG_UNMARK };

struct msg_op {
	uint64_t seq, gpu_ns, problem_id, bytes;
	uint64_t t; /* where it is placed in time */
	int64_t dtype;
	enum dt_op_kind kind;
	uint32_t kernels, plan, n_ptrs;
	const char *api, *desc, *brief, *problem, *library;
	const struct dt_op_tensor *tensors;
	uint32_t n_tensors;
	bool has_recipe;
	struct dt_recipe recipe; /* the op's own moves on: a copy */
	/* n_ptrs struct dt_op_ptr follow */
};

static void on_message(void *arg, uint32_t kind, void *msg, size_t n)
{
	struct dt_fusion *fz = arg;
	(void)n;

	if (kind == MSG_KERNEL) {
		add_kernel(fz, msg);
	} else if (kind == MSG_DEVICE) {
		on_device_now(fz, msg);
	} else if (kind == MSG_MARK) {
		fz_steady_mark(&P(fz)->steady, *(const uint64_t *)msg);
	} else if (kind == MSG_UNMARK) {
		fz_steady_unmark(&P(fz)->steady, fz, *(const uint64_t *)msg);
	} else if (kind == MSG_OP) {
		const struct msg_op *m = msg;
		struct dt_op op = {
			.seq = m->seq,
			.gpu_ns = m->gpu_ns,
			.problem_id = m->problem_id,
			.cost = { .kind = m->kind,
				  .bytes = m->bytes,
				  .dtype = m->dtype },
			.kernels = m->kernels,
			.plan = m->plan,
			.n_ptrs = m->n_ptrs,
			.ptrs = (const struct dt_op_ptr *)(m + 1),
			.api = m->api,
			.desc = m->desc,
			.brief = m->brief,
			.problem = m->problem,
			.library = m->library,
			.tensors = m->tensors,
			.n_tensors = m->n_tensors,
			.recipe = m->has_recipe ? &m->recipe : NULL,
		};
		op_now(fz, &op, m->t);
	}
}

/* Room in the pipe for a message to the thread, or NULL when its work is
 * to be done now: no thread, or no room (the thread has caught up first,
 * so that the order holds). */
static inline void *put(struct priv *pv, uint32_t kind, size_t n)
{
	void *m = pv->pipe ? dt_pipe_put(pv->pipe, kind, n) : NULL;

	if (!m && pv->pipe)
		dt_pipe_drain(pv->pipe);
	return m;
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct dt_fusion *fz = arg;
	struct priv *pv = P(fz);

	if (a->kind != DT_ACT_KERNEL || !a->timed || !a->kc || pv->finished)
		return;
	struct kernel k = { a->gpu_start,
			    a->gpu_end,
			    a->placed,
			    a->exec,
			    a->device,
			    a->stream,
			    a->kernel->grid_x,
			    a->kernel->block_x,
			    a->kc };
	struct kernel *m = put(pv, MSG_KERNEL, sizeof(*m));
	if (m)
		*m = k;
	else
		add_kernel(fz, &k);
}

static void on_device(void *arg, const struct dt_device *d)
{
	struct dt_fusion *fz = arg;
	struct priv *pv = P(fz);

	if (pv->finished)
		return;
	struct dt_device *m = put(pv, MSG_DEVICE, sizeof(*m));
	if (m)
		*m = *d;
	else
		on_device_now(fz, d);
}

/* A cut point of the summary's made (MSG_MARK) or dropped. */
static void point(struct dt_fusion *fz, uint32_t kind, uint64_t t)
{
	struct priv *pv = P(fz);
	uint64_t *m;

	if (pv->finished)
		return;
	if ((m = put(pv, kind, sizeof(*m))))
		*m = t;
	else if (kind == MSG_MARK)
		fz_steady_mark(&pv->steady, t);
	else
		fz_steady_unmark(&pv->steady, fz, t);
}

void dt_fusion_mark(struct dt_fusion *fz, uint64_t t)
{
	point(fz, MSG_MARK, t);
}

void dt_fusion_unmark(struct dt_fusion *fz, uint64_t t)
{
	point(fz, MSG_UNMARK, t);
}

static void on_op(void *arg, const struct dt_op *op)
{
	struct dt_fusion *fz = arg;
	struct priv *pv = P(fz);
	size_t ptrs = op->ptrs ? op->n_ptrs * sizeof(*op->ptrs) : 0;

	if (!op->kernels)
		return;
	/* none: too many pointers for a message */
	struct msg_op *m = put(pv, MSG_OP, sizeof(*m) + ptrs);
	if (!m) {
		op_now(fz, op, dt_place_op(op));
		return;
	}
	*m = (struct msg_op){
		.seq = op->exec,
		.gpu_ns = op->gpu_ns,
		.t = dt_place_op(op),
		.problem_id = op->problem_id,
		.bytes = op->cost.bytes,
		.dtype = op->cost.dtype,
		.kind = op->cost.kind,
		.kernels = op->kernels,
		.plan = op->plan,
		.n_ptrs = ptrs ? op->n_ptrs : 0,
		.api = op->api,
		.desc = op->desc,
		.brief = op->brief,
		.problem = op->problem,
		.library = op->library,
		.tensors = op->tensors,
		.n_tensors = op->n_tensors,
		.has_recipe = op->recipe != NULL,
		.recipe = op->recipe ? *op->recipe : (struct dt_recipe){ 0 },
	};
	if (ptrs)
		memcpy(m + 1, op->ptrs, ptrs);
}

void dt_fusion_begin_file(struct dt_fusion *fz, struct dt_session *ss)
{
	struct priv *pv = P(fz);
	struct dt_consumer c = { .arg = fz,
				 .activity = on_activity,
				 .device = on_device,
				 .op = on_op };

	stop_thread(pv);
	pv->pipe = pv->finished ? NULL : dt_pipe_new(on_message, fz);
	pv->delivered[0] = pv->delivered[1] = 0;
	pv->n_devs = 0;
	pv->steady.n_marks = 0;
	pv->steady.from = 0;
	dt_session_add(ss, &c);
}

/* Look at the nodes old enough (all of them when final), then let go of
 * those no chain can reach any more. */
static void process(struct dt_fusion *fz, struct stream *s, bool final)
{
	struct priv *pv = P(fz);
	uint64_t mark =
		s->last_start > HORIZON_NS ? s->last_start - HORIZON_NS : 0;
	size_t i = s->next;

	for (; i < s->n; i++) {
		struct node *n = &s->v[i];
		if (!final && s->n - i <= MAX_HELD / 2 && n->start > mark)
			break;
		if (!final && i + LOOKAHEAD >= s->n)
			break;
		/* ops come out of the model once their kernels are in and
		 * host time has moved on: wait for them, unless too much is
		 * held already */
		bool waiting = false;
		if (s->attached < i)
			s->attached = i;
		for (; s->attached < s->n && s->attached <= i + LOOKAHEAD;
		     s->attached++) {
			struct node *k = &s->v[s->attached];
			/* the model hands ops over in seq order: one not in
			 * by now never comes (no op, or another node of the
			 * call took it) */
			if (k->seq && !k->op &&
			    !(k->op = opinfo_take(pv, k->seq)) &&
			    k->seq > *delivered_of(pv, k->seq)) {
				waiting = true;
				break;
			}
		}
		if (waiting && !final && s->n - i < MAX_WAITING)
			break;
		dt_fz_look_at(fz, s, (long)i);
	}
	s->next = i;
	size_t drop = s->next > KEEP_BEHIND ? s->next - KEEP_BEHIND : 0;
	if (!final && drop < s->n / 2)
		return; /* move the held nodes down only when it pays */
	for (size_t k = 0; k < drop; k++)
		opinfo_free(pv, s->v[k].op);
	memmove(s->v, s->v + drop, (s->n - drop) * sizeof(*s->v));
	s->n -= drop;
	s->next -= drop;
	s->attached = s->attached > drop ? s->attached - drop : 0;
}

void dt_fusion_cut(struct dt_fusion *fz, uint64_t from)
{
	P(fz)->steady.from = from;
}

void dt_fusion_end_file(struct dt_fusion *fz)
{
	struct priv *pv = P(fz);

	stop_thread(pv);
	if (pv->finished)
		return;
	for (size_t i = 0; i < pv->n_streams; i++) {
		struct stream *s = &pv->streams[i];
		process(fz, s, true);
		for (size_t k = 0; k < s->n; k++)
			opinfo_free(pv, s->v[k].op);
		free(s->v);
	}
	fz_steady_settle(&pv->steady, fz);
	free(pv->streams);
	pv->streams = NULL;
	pv->n_streams = 0;
	for (size_t i = pv->ops_head; i < pv->n_ops; i++)
		opinfo_free(pv, pv->ops[i].op);
	pv->n_ops = pv->ops_head = 0;
	shapes_free(pv);
}

/* ------------------------------------------------------------- results */

/* What tells chains apart, hashed: the pattern, what blocks it, and each
 * step's role, op problem or kernel name and launch width, size, type and
 * link. */
static uint64_t chain_hash(const struct chain *c)
{
	uint64_t h = dt_hash(c->pattern, strlen(c->pattern), 0xc4a1);

	for (int f = 0; f < c->n_facts; f++) {
		const struct fact *x = &c->facts[f];
		uint64_t v[4] = { x->id, x->ok, (uint64_t)x->a,
				  (uint64_t)x->b };
		h = dt_hash(v, sizeof(v), h);
		if (x->s)
			h = dt_hash(x->s, strlen(x->s), h);
	}
	for (int m = 0; m < c->n; m++) {
		const struct dt_fz_step *s = &c->steps[m];
		const struct node *n = c->nodes[m];
		uint64_t v[6] = { n->op   ? n->op->shape->hash
				  : n->kc ? n->kc->hash
					  : 0,
				  (uint64_t)s->grid_x,
				  s->elems,
				  (uint64_t)s->dtype,
				  (uint64_t)s->link,
				  s->removed };
		h = dt_hash(s->what, strlen(s->what), h);
		h = dt_hash(v, sizeof(v), h);
	}
	return h | 1;
}

/* Strings of a chain's first occurrence, kept with its opportunity. */
static void own_steps(struct dt_fz_opp *o, const struct chain *c)
{
	o->n_steps = c->n;
	for (int m = 0; m < c->n; m++) {
		const struct node *n = c->nodes[m];
		struct dt_fz_step *s = &o->steps[m];
		*s = c->steps[m];
		s->ns = s->kernels = 0; /* counted with the occurrences */
		s->what = dt_xstrdup(c->steps[m].what);
		if (n->op) {
			s->detail =
				dt_xasprintf("%s %s", n->op->api, n->op->brief);
			s->library =
				dt_xstrdup(dt_library_display(n->op->library));
			s->problem = dt_xstrdup(n->op->problem);
		} else {
			s->detail = kernel_detail(n->kc);
			s->kernel = dt_xstrdup(name_of(n));
		}
	}
}

void dt_fz_record(struct dt_fusion *fz, struct chain *c)
{
	struct priv *pv = P(fz);
	uint64_t h;

	for (int m = 0; m < c->n; m++)
		((struct node *)c->nodes[m])->used = true;
	c->steps[0].link = DT_LINK_NONE;
	h = chain_hash(c);

	if (fz->n_opps * 2 >= pv->cap_opp_idx) {
		size_t cap = pv->cap_opp_idx ? pv->cap_opp_idx * 2 : 256;
		uint32_t *v = calloc(cap, sizeof(*v));
		if (!v)
			return;
		for (size_t k = 0; k < pv->cap_opp_idx; k++)
			if (pv->opp_idx[k]) {
				size_t q = pv->opp_h[pv->opp_idx[k] - 1] &
					   (cap - 1);
				while (v[q])
					q = (q + 1) & (cap - 1);
				v[q] = pv->opp_idx[k];
			}
		free(pv->opp_idx);
		pv->opp_idx = v;
		pv->cap_opp_idx = cap;
	}
	size_t q = h & (pv->cap_opp_idx - 1);
	for (; pv->opp_idx[q]; q = (q + 1) & (pv->cap_opp_idx - 1)) {
		uint32_t at = pv->opp_idx[q] - 1;
		struct dt_fz_opp *o = &fz->opps[at];
		if (pv->opp_h[at] == h && o->n_steps == c->n &&
		    !strcmp(o->pattern, c->pattern)) {
			fz_steady_chain(&pv->steady, fz, at, c);
			return;
		}
	}
	if (fz->n_opps == pv->cap_opps) {
		size_t cap = pv->cap_opps ? pv->cap_opps * 2 : 64;
		void *v = realloc(fz->opps, cap * sizeof(*fz->opps));
		uint64_t *vh = realloc(pv->opp_h, cap * sizeof(*vh));
		if (v)
			fz->opps = v;
		if (vh)
			pv->opp_h = vh;
		if (!v || !vh)
			return;
		pv->cap_opps = cap;
	}
	struct dt_fz_opp *o = &fz->opps[fz->n_opps];
	memset(o, 0, sizeof(*o));
	o->pattern = dt_xstrdup(c->pattern);
	o->cover = dt_xstrdup(c->cover);
	struct dt_sbuf checks = { 0 }, blocked = { 0 }, note = { 0 };
	for (int f = 0; f < c->n_facts; f++)
		dt_fz_fact_text(&c->facts[f], &checks, &blocked, &note);
	o->status = c->blocked ? DT_FZ_BLOCKED : DT_FZ_FUSABLE;
	o->checks = dt_sb_take(&checks);
	o->note = note.len ? dt_sb_take(&note) : NULL;
	free(note.p);
	o->device = c->device;
	o->bytes_saved = c->bytes_saved;
	o->bytes_added = c->bytes_added;
	own_steps(o, c);
	/* the key: for a stable order among equal savings */
	struct dt_sbuf key = { 0 };
	dt_sb_printf(&key, "%s|%s", o->pattern, blocked.p ? blocked.p : "");
	for (int m = 0; m < o->n_steps; m++)
		dt_sb_printf(&key, "|%s %s %" PRIu64 " %d", o->steps[m].what,
			     o->steps[m].detail ? o->steps[m].detail : "",
			     o->steps[m].elems, o->steps[m].grid_x);
	o->key = dt_sb_take(&key);
	o->blocked = c->blocked ? dt_sb_take(&blocked) : NULL;
	free(blocked.p);
	pv->opp_h[fz->n_opps] = h;
	pv->opp_idx[q] = (uint32_t)++fz->n_opps;
	fz_steady_chain(&pv->steady, fz, fz->n_opps - 1, c);
}

static int by_saving(const void *a, const void *b)
{
	const struct dt_fz_opp *x = a, *y = b;
	if (x->status != y->status)
		return x->status < y->status ? -1 : 1;
	if (x->saving_ns != y->saving_ns)
		return x->saving_ns > y->saving_ns ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int by_ns(const void *a, const void *b)
{
	const struct dt_fz_fused *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->key, y->key);
}

void dt_fusion_finish(struct dt_fusion *fz)
{
	struct priv *pv = P(fz);
	double bw;

	/* a file not ended: what its thread was given is worked on first */
	stop_thread(pv);
	fz_steady_settle(&pv->steady, fz);
	fz_drop_startups(fz);

	if (fz->bandwidth_override > 0) {
		bw = fz->bandwidth_override;
		snprintf(fz->bandwidth_source, sizeof(fz->bandwidth_source),
			 "given on the command line");
	} else if (fz->stream_ns && fz->stream_kernels) {
		bw = (double)fz->stream_bytes * 1e9 / (double)fz->stream_ns;
		snprintf(fz->bandwidth_source, sizeof(fz->bandwidth_source),
			 "achieved by the run's %" PRIu64
			 " streaming elementwise kernels",
			 fz->stream_kernels);
	} else if (fz->peak_bandwidth > 0) {
		bw = fz->peak_bandwidth;
		snprintf(fz->bandwidth_source, sizeof(fz->bandwidth_source),
			 "the device's peak (no streaming kernel to measure)");
	} else {
		bw = 0;
		snprintf(fz->bandwidth_source, sizeof(fz->bandwidth_source),
			 "unknown (no device record): byte savings not timed");
	}
	fz->bandwidth = bw;
	for (size_t i = 0; i < fz->n_opps; i++) {
		struct dt_fz_opp *o = &fz->opps[i];
		o->removed_kernels = o->removed_ns = 0;
		for (int m = 0; m < o->n_steps; m++)
			if (o->steps[m].removed) {
				o->removed_kernels += o->steps[m].kernels;
				o->removed_ns += o->steps[m].ns;
			}
		double added = bw > 0 ? (double)o->count *
						(double)o->bytes_added * 1e9 /
						bw
				      : 0;
		o->saving_ns = (double)o->removed_ns - added;
		o->bytes_ns = bw > 0 ? (double)o->count *
					       (double)o->bytes_saved * 1e9 / bw
				     : 0;
	}
	if (fz->n_opps)
		qsort(fz->opps, fz->n_opps, sizeof(*fz->opps), by_saving);
	for (size_t i = 0; i < fz->n_fused; i++)
		fz->fused[i].bytes_ns =
			bw > 0 ? (double)fz->fused[i].count *
					 (double)fz->fused[i].bytes_kept * 1e9 /
					 bw
			       : 0;
	if (fz->n_fused)
		qsort(fz->fused, fz->n_fused, sizeof(*fz->fused), by_ns);
	/* the index points at places the sort moved */
	free(pv->opp_idx);
	free(pv->opp_h);
	pv->opp_idx = NULL;
	pv->opp_h = NULL;
	pv->cap_opp_idx = 0;
	pv->finished = true;
}

void dt_fusion_free(struct dt_fusion *fz)
{
	if (!fz)
		return;
	struct priv *pv = P(fz);
	pv->finished = false; /* let go of what a file left */
	dt_fusion_end_file(fz);
	for (size_t i = 0; i < fz->n_opps; i++)
		fz_opp_free(&fz->opps[i]);
	free(fz->opps);
	for (size_t i = 0; i < fz->n_fused; i++)
		fz_fused_free(&fz->fused[i]);
	free(fz->fused);
	free(pv->opp_idx);
	free(pv->opp_h);
	free(pv->ops);
	fz_steady_free(&pv->steady);
	while (pv->free_ops) {
		struct opinfo *o = pv->free_ops;
		pv->free_ops = o->next_free;
		free(o);
	}
	free(pv);
	free(fz);
}
