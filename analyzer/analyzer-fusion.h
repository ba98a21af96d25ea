/*
 * analyzer-fusion.h - what the fusion analysis's chain search
 * (analyzer-fusion.c) and its rules (analyzer-fusion-rules.c) share: the
 * nodes of a stream, the chains built from them, the facts a rule checks.
 * Private to analyzer/.
 */
#ifndef DT_ANALYZER_FUSION_H
#define DT_ANALYZER_FUSION_H

#include "analyzer-util.h"
#include "dt-fusion.h"

/* Nodes a chain may look ahead; nodes kept behind the first not looked at
 * (a rule may look back at them). */
#define LOOKAHEAD   24
#define KEEP_BEHIND 8

/* A node's class: what the classifier says of its kernel's name, or a
 * cuDNN call's kernels. */
#define K_CUDNN DT_KOP_COUNT

static inline bool pointwise(int c)
{
	return c >= DT_KOP_ADD && c <= DT_KOP_COPY;
}

/* Backward pointwise ops read a saved tensor as well as the gradient. */
static inline bool binary_bwd(int c)
{
	return c == DT_KOP_RELU_BWD || c == DT_KOP_GELU_BWD ||
	       c == DT_KOP_SILU_BWD;
}

static inline uint64_t dsize(int64_t dtype)
{
	int bits = dtype >= 0 ? dt_dtype_bits(dtype) : 0;
	return bits >= 8 ? (uint64_t)bits / 8 : 0;
}

/* What a GEMM's epilogue computes, as its recipe's nodes name it. */
#define EPI_BIAS 1u
#define EPI_RELU 2u
#define EPI_GELU 4u

/* What a node's class is, in words. */
extern const char *const dt_fz_cls_what[DT_KOP_COUNT + 1];

/* What fusion keeps of a cuDNN op until its node has been looked at. */
struct opinfo {
	uint64_t seq;
	enum dt_op_kind kind;
	char *api;
	char *brief;
	const char *problem; /* the op's key: the model's, as long as the
				session lives */
	int64_t dtype;
	uint32_t graph_ops;
	bool training; /* a normalization's training phase */
	bool strided;  /* a convolution with a stride other than 1 */
	bool one_call; /* one call's work, not a graph's */
	uint8_t lib;   /* enum dt_lib of its library */
	const char *library; /* its library's name ("cublas"), the model's */
	uint8_t epi;   /* a GEMM's epilogue (EPI_*), from its recipe */
	const struct dt_tensor *out, *in; /* its shape's */
	const struct dt_tensor *in2;      /* a matmul's B, its shape's */
	uint64_t out_ptr, in_ptr, in2_ptr;
	uint64_t ptrs[12]; /* every device pointer it reads */
	const struct shape *shape;
	struct opinfo *next_free; /* in the free list */
	int n_ptrs;
	uint64_t bytes;           /* what it must move */
	uint64_t largest_virtual; /* elements of its largest intermediate */
};

struct node {
	uint64_t start, end;
	uint64_t t;   /* the time the cut places it by (analyzer-place.h) */
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

static inline uint64_t tensor_elems(const struct dt_tensor *t)
{
	uint64_t n = t->valid && t->nb ? 1 : 0;
	for (int i = 0; i < t->nb; i++)
		n *= t->dims[i] > 0 ? (uint64_t)t->dims[i] : 0;
	return n;
}

/* NHWC: the channel dimension (1) is the innermost. */
static inline bool tensor_nhwc(const struct dt_tensor *t)
{
	return t->valid && t->nb >= 3 && t->strides[1] == 1 && t->dims[1] > 1;
}

static inline const char *name_of(const struct node *n)
{
	return n->kc ? n->kc->name : "";
}

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
	N_NO_EPILOGUE,   /* s: the step no cuBLASLt epilogue computes */
	F_LT_DTYPE,      /* a: the output's type, cuBLASLt epilogues' */
	N_CONV_KEPT,     /* a: whether FP16 ConvBNfprop could run */
	N_ALSO_READ,     /* a: the step, s: the function that reads it */
	N_NO_PROLOGUE,   /* a GEMM outside cuDNN: cuBLASLt has no prologue */
	F_PROLOGUE_OP,   /* s: a step cuDNN's g1 fusion does not take */
	N_COPY_LAYOUT,   /* a: the step that copies without casting */
	N_NEXT_READS,    /* s: the next matmul, with an input as large */
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

/* What the analysis counts of a trace's steady state
 * (analyzer-fusion-steady.c): the summary's cut points so far, in time
 * order, and each opportunity's and fused problem's counts between them,
 * by index. */
struct tally;
struct fz_steady {
	uint64_t *marks;
	size_t n_marks, cap_marks;
	uint64_t from; /* where the steady state begins (dt_fusion_cut) */
	struct tally *opp, *fused;
	size_t cap_opp, cap_fused;
};

/* An occurrence of chain c, opportunity i of fz, placed by its first
 * step's time. */
void fz_steady_chain(struct fz_steady *st, struct dt_fusion *fz, size_t i,
		     const struct chain *c);
/* An execution of fused problem i of fz at t, of ns of GPU time. */
void fz_steady_fused(struct fz_steady *st, struct dt_fusion *fz, int32_t i,
		     uint64_t t, uint64_t ns);
/* A cut point made at t (later than the others), or dropped. */
void fz_steady_mark(struct fz_steady *st, uint64_t t);
void fz_steady_unmark(struct fz_steady *st, const struct dt_fusion *fz,
		      uint64_t t);
/* The trace is read: what came from st->from on (0: all of it,
 * UINT64_MAX: none) into fz's counts, the rest left out; st emptied for
 * the next trace. */
void fz_steady_settle(struct fz_steady *st, struct dt_fusion *fz);
void fz_steady_free(struct fz_steady *st);

/* What an opportunity and a fused problem hold, freed. */
void fz_opp_free(struct dt_fz_opp *o);
void fz_fused_free(struct dt_fz_fused *f);
/* The chains and fused problems seen only in start-ups left out. */
void fz_drop_startups(struct dt_fusion *fz);

/* The compute capability (major * 10 + minor) of a device of the file
 * being read, 0 when unknown. */
int dt_fz_cc_of(const struct dt_fusion *fz, int32_t device);

/* Try node i of s as the first step of a chain; a chain found goes to
 * dt_fz_record(). */
void dt_fz_look_at(struct dt_fusion *fz, struct stream *s, long i);

/* Count a chain found: the first time, with its words. */
void dt_fz_record(struct dt_fusion *fz, struct chain *c);

/* A fact in words: the limit and its outcome into checks, why it blocks
 * into blocked, a note into note. */
void dt_fz_fact_text(const struct fact *f, struct dt_sbuf *checks,
		     struct dt_sbuf *blocked, struct dt_sbuf *note);

#endif /* DT_ANALYZER_FUSION_H */
