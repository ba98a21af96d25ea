/*
 * analyzer-fusion.c - chains of GPU work that one cuDNN graph could run
 * fused (dt-fusion.h; the rules are in analyzer/FUSION.md).
 *
 * Every kernel becomes a node of its stream; the kernels of one cuDNN call
 * make one node, which the model's op for that call describes. Nodes are
 * kept in start order per stream, and once a few seconds of GPU time lie
 * after them, each is tried as the anchor of a chain: a convolution or
 * matmul with the pointwise kernels after it, a batch norm with its add and
 * ReLU, a ReLU backward with the batch norm backward after it, a run of
 * cuDNN pointwise calls. Chains that match a pattern are checked against
 * its limits and added up by their steps.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-pipe.h"
#include "analyzer-util.h"
#include "dt-fusion.h"

/* GPU time (ns) a node waits after its start before it is looked at, so
 * that the kernels after it are in; nodes held per stream at most before
 * the oldest are looked at anyway; nodes a chain may look ahead. */
#define HORIZON_NS  (2ull * 1000 * 1000 * 1000)
#define MAX_HELD    8192
#define LOOKAHEAD   24
#define KEEP_BEHIND 8
/* nodes held at most while an op is awaited (the model holds ops for 3 s
 * of host time): past that, chains through it are not followed */
#define MAX_WAITING (1u << 20)

/* ------------------------------------------------------ kernel classes */

/* A node's class: what the classifier says of its kernel's name, or a
 * cuDNN call's kernels. */
#define K_CUDNN DT_KOP_COUNT

static const char *const cls_what[DT_KOP_COUNT + 1] = {
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
};

static bool pointwise(int c)
{
	return c >= DT_KOP_ADD && c <= DT_KOP_COPY;
}

/* Backward pointwise ops read a saved tensor as well as the gradient. */
static bool binary_bwd(int c)
{
	return c == DT_KOP_RELU_BWD || c == DT_KOP_GELU_BWD ||
	       c == DT_KOP_SILU_BWD;
}

static uint64_t dsize(int64_t dtype)
{
	int bits = dtype >= 0 ? dt_dtype_bits(dtype) : 0;
	return bits >= 8 ? (uint64_t)bits / 8 : 0;
}

/* -------------------------------------------------------------- state */

/* What fusion keeps of a cuDNN op until its node has been looked at. */
struct opinfo {
	uint64_t seq;
	enum dt_op_kind kind;
	char *api;
	char *brief;
	int64_t dtype;
	uint32_t graph_ops;
	bool training; /* a normalization's training phase */
	bool strided;  /* a convolution with a stride other than 1 */
	const struct dt_tensor *out, *in; /* its shape's */
	uint64_t out_ptr, in_ptr;
	uint64_t ptrs[12]; /* every device pointer it reads */
	const struct shape *shape;
	struct opinfo *next_free; /* in the free list */
	int n_ptrs;
	uint64_t bytes;           /* what it must move */
	uint64_t largest_virtual; /* elements of its largest intermediate */
};

struct node {
	uint64_t start, end;
	uint64_t seq; /* the cuDNN call, 0 for kernels outside cuDNN */
	uint64_t elems, granule;
	uint64_t ns;
	uint32_t kernels;
	int32_t grid_x, block_x;
	const struct dt_kernel_class *kc; /* its (first) kernel's, the
					     model's */
	int32_t device;
	int8_t dtype;
	uint8_t cls;
	bool nhwc; /* its name says channels_last */
	bool full; /* elementwise with no broadcast operand (vectorized) */
	bool used; /* taken by a chain */
	struct opinfo *op;
};

struct stream {
	uint32_t device, id;
	struct node *v;
	size_t n, cap;
	size_t next;     /* the first node not looked at */
	size_t looked;   /* nodes held when last looked at */
	size_t attached; /* nodes before it have their op, if any */
	uint64_t last_start;
};

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
	uint64_t delivered;    /* the highest seq of an op handed in */
	struct shape **shapes; /* by problem id */
	size_t n_shapes, cap_shapes;
	/* per file */
	struct stream *streams;
	size_t n_streams;
	struct waiting {
		uint64_t seq;
		struct opinfo *op; /* NULL once taken */
	} * ops;                   /* waiting for their node, in seq order */
	size_t n_ops, cap_ops, ops_head;
	struct device_cc devs[64];
	int n_devs;
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

static const char *name_of(const struct node *n)
{
	return n->kc ? n->kc->name : "";
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

static int cc_of(const struct priv *pv, int32_t device)
{
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

static uint64_t tensor_elems(const struct dt_tensor *t)
{
	uint64_t n = t->valid && t->nb ? 1 : 0;
	for (int i = 0; i < t->nb; i++)
		n *= t->dims[i] > 0 ? (uint64_t)t->dims[i] : 0;
	return n;
}

/* NHWC: the channel dimension (1) is the innermost. */
static bool tensor_nhwc(const struct dt_tensor *t)
{
	return t->valid && t->nb >= 3 && t->strides[1] == 1 && t->dims[1] > 1;
}

/* What every execution of one problem shares: its tensors, read once, and
 * which of them it writes first, reads as its main input, and reads. */
#define MAX_KEYS 12

struct shape {
	uint64_t id; /* dt_op.problem_id */
	struct opinfo proto;
	struct dt_tensor out, in; /* what it writes first, its main input */
	int out_key, in_key;      /* their index in the op's tensors, -1 */
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

/* The op of call seq, taken out of the waiting list; NULL when none. */
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
	uint64_t seq;        /* the cuDNN call, 0 for kernels outside cuDNN */
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
			: dt_xasprintf("%s graph of %u operations",
				       dt_op_kind_name(o->kind), o->graph_ops);
	f->brief = dt_xstrdup(op->brief);
	f->graph_ops = cba ? 3 : o->graph_ops;
	f->bytes_kept = kept;
	return (int32_t)fz->n_fused++;
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
	sh->out_key = sh->in_key = -1; /* none: matches no pointer */
	o->kind = op->cost.kind;
	o->out = &sh->out;
	o->in = &sh->in;
	o->api = dt_xstrdup(op->api);
	o->brief = dt_xstrdup(op->brief && *op->brief ? op->brief : op->desc);
	o->dtype = op->cost.dtype;
	o->bytes = op->cost.bytes;
	o->graph_ops = 1;
	if (op->plan && op->desc)
		for (const char *p = op->desc; (p = strstr(p, " ; ")); p += 3)
			o->graph_ops++;
	o->training = (op->desc && strstr(op->desc, "TRAINING")) ||
		      strstr(op->api, "Training");
	/* a stride other than 1: backend "STRIDES=[1,2]", legacy 2-d
	 * descriptors' u and v, Nd ones' "stride=[...]" */
	const char *st = op->desc ? strstr(op->desc, "STRIDES=[") : NULL;
	if (!st && op->desc)
		st = strstr(op->desc, "stride=[");
	if (st)
		for (st = strchr(st, '[') + 1; *st && *st != ']'; st++)
			if (*st >= '2' && *st <= '9' &&
			    (st[-1] == '[' || st[-1] == ','))
				o->strided = true;
	for (const char *uv = op->desc; uv && *uv; uv++)
		if ((uv[0] == 'u' || uv[0] == 'v') && uv[1] == '=' &&
		    uv > op->desc && uv[-1] == ' ' &&
		    strtol(uv + 2, NULL, 10) > 1)
			o->strided = true;
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

static void op_now(struct dt_fusion *fz, const struct dt_op *op)
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
	op_pointers(o, sh, op);
	if (sh->fused >= 0) {
		fz->fused[sh->fused].count++;
		fz->fused[sh->fused].ns += op->gpu_ns;
	}

	if (o->seq > pv->delivered)
		pv->delivered = o->seq;
	if (pv->n_ops && pv->ops[pv->n_ops - 1].seq >= o->seq) {
		opinfo_free(pv,
			    o); /* ops come in seq order; a trace's own fault */
		return;
	}
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
	pv->ops[pv->n_ops++] = (struct waiting){ o->seq, o };
	while (pv->ops_head < pv->n_ops && !pv->ops[pv->ops_head].op)
		pv->ops_head++;
}

/* ------------------------------------------------- the second thread */

/* What goes through the pipe: what the analysis reads of a kernel, a
 * device, or what it reads of an op. Kernel classes and the strings and
 * tensors an op points to are the model's, kept as long as the session
 * lives, which is past dt_fusion_end_file(); an op's pointers are
 * copied. */
enum { MSG_DEVICE = 1, MSG_KERNEL, MSG_OP };

struct msg_op {
	uint64_t seq, gpu_ns, problem_id, bytes;
	int64_t dtype;
	enum dt_op_kind kind;
	uint32_t kernels, plan, n_ptrs;
	const char *api, *desc, *brief, *problem;
	const struct dt_op_tensor *tensors;
	uint32_t n_tensors;
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
			.tensors = m->tensors,
			.n_tensors = m->n_tensors,
		};
		op_now(fz, &op);
	}
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct dt_fusion *fz = arg;
	struct priv *pv = P(fz);

	if (a->kind != DT_ACT_KERNEL || !a->timed || !a->kc || pv->finished)
		return;
	struct kernel k = { a->gpu_start,       a->gpu_end, a->call,
			    a->device,          a->stream,  a->kernel->grid_x,
			    a->kernel->block_x, a->kc };
	struct kernel *m =
		pv->pipe ? dt_pipe_put(pv->pipe, MSG_KERNEL, sizeof(*m)) : NULL;
	if (m) {
		*m = k;
		return;
	}
	if (pv->pipe)
		dt_pipe_drain(pv->pipe);
	add_kernel(fz, &k);
}

static void on_device(void *arg, const struct dt_device *d)
{
	struct dt_fusion *fz = arg;
	struct priv *pv = P(fz);

	if (pv->finished)
		return;
	struct dt_device *m =
		pv->pipe ? dt_pipe_put(pv->pipe, MSG_DEVICE, sizeof(*m)) : NULL;
	if (m) {
		*m = *d;
		return;
	}
	if (pv->pipe)
		dt_pipe_drain(pv->pipe);
	on_device_now(fz, d);
}

static void on_op(void *arg, const struct dt_op *op)
{
	struct dt_fusion *fz = arg;
	struct priv *pv = P(fz);
	size_t ptrs = op->ptrs ? op->n_ptrs * sizeof(*op->ptrs) : 0;

	if (!op->kernels)
		return;
	struct msg_op *m =
		pv->pipe ? dt_pipe_put(pv->pipe, MSG_OP, sizeof(*m) + ptrs)
			 : NULL;
	if (!m) {
		/* too many pointers for a message: the thread catches up
		 * first, so that the order holds */
		if (pv->pipe)
			dt_pipe_drain(pv->pipe);
		op_now(fz, op);
		return;
	}
	*m = (struct msg_op){
		.seq = op->seq,
		.gpu_ns = op->gpu_ns,
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
		.tensors = op->tensors,
		.n_tensors = op->n_tensors,
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
	pv->delivered = 0;
	pv->n_devs = 0;
	dt_session_add(ss, &c);
}

/* ---------------------------------------------------------------- chains */

/* A limit checked, or a note, kept as its values: the words are written
 * only for a chain seen the first time (fact_text). */
enum fact_id {
	F_LAYOUT_CONV,   /* convolution tensors NHWC */
	F_LAYOUT_NORM,   /* batch norm kernels NHWC; s: the engine */
	F_DTYPE,         /* a: the data type, runtime fusion's list */
	F_NORM_DTYPE,    /* a: the data type, NormAddRelu's list */
	F_CHANNELS,      /* a: channels, b: the multiple; s: the type */
	F_CHANNELS_NONE, /* not known */
	F_CC,            /* a: cc, b: min * 1000 + max; s: what needs it */
	F_CC_NONE,       /* no device record */
	F_STRIDED_DGRAD, /* a strided dgrad past the SS70 engines */
	F_ALIGN,         /* an output not 32-bit aligned for SS70 */
	N_GEMM,          /* s: the library the matmul ran in */
	N_CONV_KEPT,     /* a: whether FP16 ConvBNfprop could run */
	N_ALSO_READ,     /* a: the step, s: the function that reads it */
};

struct fact {
	uint8_t id;
	bool ok;
	int64_t a, b;
	const char *s;
};

#define MAX_FACTS 12

struct chain {
	const char *pattern, *cover;
	struct dt_fz_step steps[DT_FZ_STEPS];
	const struct node *nodes[DT_FZ_STEPS];
	int n;
	struct fact facts[MAX_FACTS];
	int n_facts;
	bool blocked;
	uint64_t bytes_saved, bytes_added;
	int32_t device;
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
	s->cudnn = n->op != NULL || n->cls == K_CUDNN;
	if (!what && n->op && n->op->kind == DT_KIND_POINTWISE &&
	    !strncmp(n->op->api, "cudnn", 5) && n->op->api[5] != 'B')
		what = n->op->api + 5; /* AddTensor */
	else if (!what && n->op)
		what = dt_op_kind_name(n->op->kind);
	else if (!what)
		what = cls_what[n->cls];
	s->what = (char *)what;
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

/* The next node after j that a chain can go on with or must end at:
 * fills, running-stat updates and bookkeeping kernels far smaller than the
 * chain's tensor (e elements) are passed over. -1 at the end. */
static long next_node(const struct stream *s, long j, uint64_t e)
{
	for (long k = j + 1; k < (long)s->n && k <= j + LOOKAHEAD; k++) {
		const struct node *n = &s->v[k];
		if (n->cls == DT_KOP_FILL || n->cls == DT_KOP_BN_UPDATE)
			continue;
		if (!n->seq && e && n->elems && n->elems * 16 < e)
			continue;
		return k;
	}
	return -1;
}

static const char *pw_what(const struct node *n)
{
	if (n->cls == DT_KOP_ADD)
		return n->full ? "residual add" : "bias add";
	if (n->cls == DT_KOP_MUL)
		return n->full ? "multiply" : "scale";
	return cls_what[n->cls];
}

/* Whether cuDNN op o reads pointer p. */
static bool reads(const struct opinfo *o, uint64_t p)
{
	for (int i = 0; p && o && i < o->n_ptrs; i++)
		if (o->ptrs[i] == p)
			return true;
	return false;
}

static void record(struct dt_fusion *fz, struct chain *c);

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

/* A fact in words: the limit and its outcome into checks, why it blocks
 * into blocked, a note into note. */
static void fact_text(const struct fact *f, struct dt_sbuf *checks,
		      struct dt_sbuf *blocked, struct dt_sbuf *note)
{
	const char *why = NULL;
	char label[64], buf[240];
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
			 dt_dtype_name(f->a));
		snprintf(buf, sizeof(buf),
			 "runtime fusion takes FLOAT, HALF, BFLOAT16, INT8, "
			 "INT32 and FP8 tensors, not %s",
			 dt_dtype_name(f->a));
		why = buf;
		break;
	case F_NORM_DTYPE:
		snprintf(label, sizeof(label), "data type %s",
			 dt_dtype_name(f->a));
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
		dt_sb_item(note, "; ", "the matmul ran in %s, outside cuDNN",
			   f->s);
		return;
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
	}
	dt_sb_item(checks, "; ", "%s: %s", label, f->ok ? "ok" : "no");
	if (!f->ok)
		dt_sb_item(blocked, "; ", "%s", why);
}

/* A convolution or matmul (cuDNN's, or a GEMM kernel) and the pointwise
 * ops after it: one graph with a g2 epilogue. */
static bool try_epilogue(struct dt_fusion *fz, struct stream *s, long i)
{
	struct priv *pv = P(fz);
	struct node *a = &s->v[i];
	const struct opinfo *o = a->op;
	struct chain c;

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
			if (binary_bwd(n->cls) ||
			    ((n->cls == DT_KOP_ADD || n->cls == DT_KOP_MUL) &&
			     n->full))
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
	int cc = cc_of(pv, a->device);
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
	if (gemm)
		fact(&c, N_GEMM, true, 0, 0,
		     name_of(a)[0] == 'n' ? "cuBLAS (nvjet)"
					  : "another library");
	if (kind == DT_KIND_CONV_FWD || kind == DT_KIND_CONV_BWD_DATA ||
	    kind == DT_KIND_CONV_BWD_FILTER) {
		const struct dt_tensor *t = o->in->valid ? o->in : o->out;
		fact(&c, F_LAYOUT_CONV, tensor_nhwc(t), 0, 0, NULL);
	}
	check_dtype(&c, dt);
	if (kind == DT_KIND_CONV_BWD_DATA && o->strided && cc > 90) {
		fact(&c, F_STRIDED_DGRAD, false, 0, 0, NULL);
	} else {
		check_cc(&c, cc, 70, 0, "cuDNN's runtime fusion engines");
	}
	if (cc && cc < 80 && o && o->out_ptr % 4)
		fact(&c, F_ALIGN, false, 0, 0, NULL);
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
	record(fz, &c);
	return true;
}

/* The statistics, apply, add and ReLU kernels of a training batch norm (or
 * cuDNN's batch norm and the ops after it): NormAddRelu. */
static bool try_norm_add_relu(struct dt_fusion *fz, struct stream *s, long i)
{
	struct priv *pv = P(fz);
	struct node *a = &s->v[i];
	struct chain c;

	chain_init(&c, a->device);
	const struct dt_tensor *t = NULL;
	uint64_t e = 0;
	int64_t dt = a->dtype;
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
	int cc = cc_of(pv, a->device);
	fact(&c, F_LAYOUT_NORM, nhwc, 0, 0, "NormAddRelu");
	fact(&c, F_NORM_DTYPE,
	     dt < 0 || dt == DT_DTYPE_FLOAT || dt == DT_DTYPE_HALF ||
		     dt == DT_DTYPE_BFLOAT16,
	     dt, 0, NULL);
	if (t && t->valid && t->nb >= 2) {
		int64_t ch = t->dims[1], mult = dsize(dt) == 2 ? 8 : 4;
		fact(&c, F_CHANNELS, ch % mult == 0, ch, mult,
		     dt_dtype_name(dt));
	} else {
		fact(&c, F_CHANNELS_NONE, true, 0, 0, NULL);
	}
	check_cc(&c, cc, 80, 0, "NormAddRelu");
	if (conv)
		fact(&c, N_CONV_KEPT, true,
		     dt == DT_DTYPE_HALF && cc >= 80 && cc != 89, 0, NULL);
	record(fz, &c);
	return true;
}

/* A ReLU backward and the batch norm backward after it: DReluForkDNorm. */
static bool try_drelu_dnorm(struct dt_fusion *fz, struct stream *s, long i)
{
	struct priv *pv = P(fz);
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
	check_cc(&c, cc_of(pv, a->device), 80, 0, "DReluForkDNorm");
	record(fz, &c);
	return true;
}

/* cuDNN pointwise calls back to back on one buffer: one pointwise graph. */
static bool try_pointwise_chain(struct dt_fusion *fz, struct stream *s, long i)
{
	struct priv *pv = P(fz);
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
	check_cc(&c, cc_of(pv, a->device), 70, 90,
		 "pointwise-only graphs (SS70 engines)");
	record(fz, &c);
	return true;
}

static void look_at(struct dt_fusion *fz, struct stream *s, long i)
{
	struct node *n = &s->v[i];
	const struct opinfo *o = n->op;
	bool done = false;

	if (n->used)
		return;
	if (o) {
		if ((o->kind == DT_KIND_CONV_FWD ||
		     o->kind == DT_KIND_CONV_BWD_DATA ||
		     o->kind == DT_KIND_CONV_BWD_FILTER ||
		     o->kind == DT_KIND_MATMUL) &&
		    o->graph_ops == 1)
			done = try_epilogue(fz, s, i);
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
			    k->seq > pv->delivered) {
				waiting = true;
				break;
			}
		}
		if (waiting && !final && s->n - i < MAX_WAITING)
			break;
		look_at(fz, s, (long)i);
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
		s->what = dt_xstrdup(c->steps[m].what);
		if (n->op) {
			s->detail =
				dt_xasprintf("%s %s", n->op->api, n->op->brief);
		} else {
			s->detail = kernel_detail(n->kc);
			s->kernel = dt_xstrdup(name_of(n));
		}
	}
}

static void record(struct dt_fusion *fz, struct chain *c)
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
			o->count++;
			for (int m = 0; m < c->n; m++) {
				o->steps[m].ns += c->steps[m].ns;
				o->steps[m].kernels += c->steps[m].kernels;
			}
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
		fact_text(&c->facts[f], &checks, &blocked, &note);
	o->status = c->blocked ? DT_FZ_BLOCKED : DT_FZ_FUSABLE;
	o->checks = dt_sb_take(&checks);
	o->note = note.len ? dt_sb_take(&note) : NULL;
	free(note.p);
	o->device = c->device;
	o->count = 1;
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
	for (size_t i = 0; i < fz->n_opps; i++) {
		struct dt_fz_opp *o = &fz->opps[i];
		free(o->key);
		free(o->pattern);
		free(o->cover);
		free(o->blocked);
		free(o->checks);
		free(o->note);
		for (int m = 0; m < o->n_steps; m++) {
			free(o->steps[m].what);
			free(o->steps[m].detail);
			free(o->steps[m].kernel);
		}
	}
	free(fz->opps);
	for (size_t i = 0; i < fz->n_fused; i++) {
		free(fz->fused[i].key);
		free(fz->fused[i].what);
		free(fz->fused[i].brief);
	}
	free(fz->fused);
	free(pv->opp_idx);
	free(pv->opp_h);
	free(pv->ops);
	while (pv->free_ops) {
		struct opinfo *o = pv->free_ops;
		pv->free_ops = o->next_free;
		free(o);
	}
	free(pv);
	free(fz);
}
