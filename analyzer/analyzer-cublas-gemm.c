/*
 * analyzer-cublas-gemm.c - (cuBLAS and cuBLASLt decoders) a matrix
 * product made an op: its problem in words, its tensors, its recipe (the
 * product and its epilogue, the algorithm's attributes, the parameters by
 * the libraries' names) and what it must compute and move
 * (analyzer/COSTS.md). How a call is read into a struct gemm is each
 * decoder's; this file knows no function of either library.
 *
 * Descriptions are kept once per distinct text for the model's life, so
 * that every op of a problem points to the same strings, as the cuDNN
 * decoder's legacy problems do.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-cublas.h"

#define GEMM_BUCKETS 1024

/* cudaDataType_t: the name cuBLAS's logs give, the analyzer's type of
 * one element (a complex type: of its real part), the size in bits. */
static const struct type_def {
	int32_t v;
	const char *name;
	int64_t dtype;
	int bits;
	bool complex;
} types[] = {
	{ 0, "R_32F", DT_DTYPE_FLOAT, 32, false },
	{ 1, "R_64F", DT_DTYPE_DOUBLE, 64, false },
	{ 2, "R_16F", DT_DTYPE_HALF, 16, false },
	{ 3, "R_8I", DT_DTYPE_INT8, 8, false },
	{ 4, "C_32F", DT_DTYPE_FLOAT, 64, true },
	{ 5, "C_64F", DT_DTYPE_DOUBLE, 128, true },
	{ 6, "C_16F", DT_DTYPE_HALF, 32, true },
	{ 7, "C_8I", DT_DTYPE_INT8, 16, true },
	{ 8, "R_8U", DT_DTYPE_UINT8, 8, false },
	{ 10, "R_32I", DT_DTYPE_INT32, 32, false },
	{ 12, "R_32U", DT_DTYPE_UINT32, 32, false },
	{ 14, "R_16BF", DT_DTYPE_BFLOAT16, 16, false },
	{ 15, "C_16BF", DT_DTYPE_BFLOAT16, 32, true },
	{ 16, "R_4I", DT_DTYPE_INT4, 4, false },
	{ 18, "R_4U", DT_DTYPE_UINT4, 4, false },
	{ 24, "R_64I", DT_DTYPE_INT64, 64, false },
	{ 28, "R_8F_E4M3", DT_DTYPE_FP8_E4M3, 8, false },
	{ 29, "R_8F_E5M2", DT_DTYPE_FP8_E5M2, 8, false },
	{ 30, "R_8F_UE8M0", DT_DTYPE_FP8_E8M0, 8, false },
	{ 33, "R_4F_E2M1", DT_DTYPE_FP4_E2M1, 4, false },
};

static const struct type_def *type_of(int32_t v)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].v == v)
			return &types[i];
	return NULL;
}

int gemm_type_bits(int32_t type)
{
	const struct type_def *t = type_of(type);

	return t ? t->bits : 0;
}

int64_t dt_gemm_dtype(int32_t type)
{
	const struct type_def *t = type_of(type);

	return t && !t->complex ? t->dtype : -1;
}

static const char *type_name(int32_t v, char *buf, size_t size)
{
	const struct type_def *t = type_of(v);

	if (t)
		return t->name;
	snprintf(buf, size, "type%d", v);
	return buf;
}

/* cublasComputeType_t, without CUBLAS_COMPUTE_. */
static const char *compute_name(int32_t v, char *buf, size_t size)
{
	static const struct {
		int32_t v;
		const char *name;
	} names[] = {
		{ 64, "16F" },
		{ 65, "16F_PEDANTIC" },
		{ 68, "32F" },
		{ 69, "32F_PEDANTIC" },
		{ 70, "64F" },
		{ 71, "64F_PEDANTIC" },
		{ 72, "32I" },
		{ 73, "32I_PEDANTIC" },
		{ 74, "32F_FAST_16F" },
		{ 75, "32F_FAST_16BF" },
		{ 77, "32F_FAST_TF32" },
		{ 78, "32F_EMULATED_16BFX9" },
		{ 79, "64F_EMULATED_FIXEDPOINT" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].v == v)
			return names[i].name;
	snprintf(buf, size, "compute%d", v);
	return buf;
}

/* cublasMath_t, without CUBLAS_ and _MATH; its flag
 * CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (16) apart. */
static const char *math_name(int32_t v)
{
	switch (v & ~16) {
	case 0:
		return "DEFAULT";
	case 1:
		return "TENSOR_OP";
	case 2:
		return "PEDANTIC";
	case 3:
		return "TF32_TENSOR_OP";
	case 4:
		return "FP32_EMULATED_BF16X9";
	case 8:
		return "FP64_EMULATED_FIXEDPOINT";
	default:
		return "?";
	}
}

/* The epilogue as cuBLASLt names it, without CUBLASLT_EPILOGUE_. */
static const char *epilogue_name(uint32_t e, char *buf, size_t size)
{
	static const struct {
		uint32_t v;
		const char *name;
	} names[] = {
		{ 1, "DEFAULT" },        { 2, "RELU" },
		{ 2 | 128, "RELU_AUX" }, { 4, "BIAS" },
		{ 2 | 4, "RELU_BIAS" },  { 2 | 128 | 4, "RELU_AUX_BIAS" },
		{ 8 | 128, "DRELU" },    { 8 | 128 | 16, "DRELU_BGRAD" },
		{ 32, "GELU" },          { 32 | 128, "GELU_AUX" },
		{ 32 | 4, "GELU_BIAS" }, { 32 | 128 | 4, "GELU_AUX_BIAS" },
		{ 64 | 128, "DGELU" },   { 64 | 128 | 16, "DGELU_BGRAD" },
		{ 256, "BGRADA" },       { 512, "BGRADB" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].v == e)
			return names[i].name;
	snprintf(buf, size, "0x%x", e);
	return buf;
}

static char op_char(int32_t t)
{
	return t == 0 ? 'N' : t == 1 ? 'T' : t == 2 ? 'C' : '?';
}

void gemm_init(struct gemm *g, enum gemm_op op)
{
	*g = (struct gemm){ .op = op,
			    .trans_a = 0,
			    .trans_b = -1,
			    .side = -1,
			    .uplo = -1,
			    .batch = 1,
			    .compute = -1,
			    .scale = -1,
			    .math = -1,
			    .bias_type = -1,
			    .aux_type = -1,
			    .workspace = -1,
			    .workspace_used = -1 };
	for (int i = 0; i < MATS; i++)
		g->type[i] = -1;
	for (int i = 0; i < DT_GEMM_ALGO_ATTRS; i++)
		g->algo[i] = g->lt_algo[i] = DT_GEMM_ALGO_UNKNOWN;
}

/* ------------------------------------------------------------- reading */

int64_t gemm_arg_i(const struct dt_arg *args, int n, const char *name,
		   int64_t def)
{
	const struct dt_arg *a = dt_arg_named(args, n, name);

	if (!a || !strchr("iue", a->code))
		return def;
	return a->code == 'u' ? (int64_t)a->u : a->i;
}

int64_t gemm_scale_dtype(int32_t scale)
{
	const struct type_def *t = type_of(scale);

	if (!t || !t->complex)
		return t ? t->dtype : -1;
	return t->dtype == DT_DTYPE_DOUBLE  ? DT_DTYPE_COMPLEX_FP64
	       : t->dtype == DT_DTYPE_FLOAT ? DT_DTYPE_COMPLEX_FP32
					    : -1;
}

bool gemm_scalar(const struct dt_arg *a, int32_t scale, double *v)
{
	double im;

	if (!a)
		return false;
	if (a->code == 'f') {
		*v = a->f;
		return true;
	}
	/* 'm': a scalar under a pointer mode, its bytes there only when
	 * read on the host */
	if ((a->code != 'k' && a->code != 'm') || !a->count || !a->data)
		return false;
	if (!dt_scalar_value(a->data, a->count, gemm_scale_dtype(scale), v,
			     &im))
		*v = dt_hostscalar_guess(a);
	return true;
}

/* ----------------------------------------------------------- the table */

/* One description: every op of it points to these. */
struct gemm_entry {
	struct gemm_entry *next;
	const char *problem; /* the problem's entry's desc */
	struct tlist tensors;
	struct dt_recipe_node nodes[4];
	uint32_t n_nodes;
	struct dt_recipe_kv knobs[DT_GEMM_ALGO_ATTRS + 1];
	uint32_t n_knobs;
	struct dt_recipe_param params[28];
	uint32_t n_params;
	char *knob_text; /* the algorithm's choices but its id, as ops carry
			them ("TILE_ID=20 STAGES_ID=18"); NULL none */
	struct dt_cost cost;
	int tensor_cores;
	int64_t engine;
	struct dt_gemm_build build; /* a GEMM's, for replay/; library NULL
				       none */
	struct gemm g;              /* the product it was made of */
	char desc[];                /* the key: the problem and the algorithm */
};

struct gemm_table {
	struct gemm_entry *buckets[GEMM_BUCKETS];
};

static void gemm_table_free(struct gemm_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < GEMM_BUCKETS; i++)
		while (t->buckets[i]) {
			struct gemm_entry *e = t->buckets[i];
			t->buckets[i] = e->next;
			free(e->knob_text);
			free(e->tensors.v);
			free(e);
		}
	free(t);
}

void *gemm_decoder_new(size_t size, size_t api_size, struct dt_model *core,
		       const struct dt_file_info *fi)
{
	struct gemm_decoder *d = calloc(1, size);

	if (!d)
		return NULL;
	d->core = core;
	d->fi = fi;
	d->api = calloc(fi->n_apis + 1, api_size);
	d->problems = calloc(1, sizeof(struct gemm_table));
	if (!d->api || !d->problems) {
		gemm_decoder_free(d);
		return NULL;
	}
	return d;
}

void gemm_decoder_free(void *state)
{
	struct gemm_decoder *d = state;

	gemm_table_free(d->problems);
	free(d->api);
	free(d);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

/* The entry of text s, made (empty but for its key) when new. */
static struct gemm_entry *entry_of(struct gemm_table *t, const char *s,
				   bool *made)
{
	struct gemm_entry **b = &t->buckets[hash_str(s) & (GEMM_BUCKETS - 1)];
	struct gemm_entry *e;

	*made = false;
	for (e = *b; e; e = e->next)
		if (!strcmp(e->desc, s))
			return e;
	if (!(e = calloc(1, sizeof(*e) + strlen(s) + 1)))
		return NULL;
	strcpy(e->desc, s);
	e->next = *b;
	*b = e;
	*made = true;
	return e;
}

/* ---------------------------------------------------------- describing */

/* Rows and columns of matrix i as stored (column-major, before its
 * transpose). */
static void mat_shape(const struct gemm *g, int i, int64_t *rows, int64_t *cols)
{
	bool ta = g->trans_a != 0, tb = g->trans_b > 0;

	switch (g->op) {
	case GEMM_GEMM:
		if (i == MAT_A) {
			*rows = ta ? g->k : g->m;
			*cols = ta ? g->m : g->k;
		} else if (i == MAT_B) {
			*rows = tb ? g->n : g->k;
			*cols = tb ? g->k : g->n;
		} else {
			*rows = g->m;
			*cols = g->n;
		}
		return;
	case GEMM_GEMV: /* A m x n; B is x, C (and D) y */
		*rows = i == MAT_A   ? g->m
			: i == MAT_B ? (ta ? g->m : g->n)
				     : (ta ? g->n : g->m);
		*cols = i == MAT_A ? g->n : 1;
		return;
	case GEMM_TRSM: /* A triangular, B solved in place */
		if (i == MAT_A) {
			*rows = *cols = g->side == 1 ? g->n : g->m;
		} else {
			*rows = g->m;
			*cols = g->n;
		}
		return;
	case GEMM_SYRK: /* A n x k (k x n transposed), C n x n */
		if (i == MAT_A) {
			*rows = ta ? g->k : g->n;
			*cols = ta ? g->n : g->k;
		} else {
			*rows = *cols = g->n;
		}
		return;
	}
}

static const char *const op_names[] = { "gemm", "gemv", "trsm", "syrk" };
static const char *const mat_names[] = { "A", "B", "C", "D" };

/* Which matrices a call has: gemv's B and C are x and y; trsm has A and
 * B; syrk A and C; D is cuBLASLt's alone (cuBLAS writes C). */
static bool has_mat(const struct gemm *g, int i)
{
	switch (g->op) {
	case GEMM_TRSM:
		return i == MAT_A || i == MAT_B;
	case GEMM_SYRK:
		return i == MAT_A || i == MAT_C;
	default:
		return i != MAT_D || g->ld[MAT_D];
	}
}

/* Matrix i's name: gemv's B and C are its vectors x and y. */
static const char *mat_role(const struct gemm *g, int i)
{
	if (g->op == GEMM_GEMV && (i == MAT_B || i == MAT_C))
		return i == MAT_B ? "x" : "y";
	return mat_names[i];
}

static bool beta_reads(const struct gemm *g)
{
	return !g->has_beta || g->beta != 0;
}

static void put_scalar(char *buf, size_t size, int *len, const char *name,
		       bool has, double v)
{
	dt_put_s(buf, size, len, name);
	if (has)
		dt_put_g(buf, size, len, v);
	else
		dt_put_s(buf, size, len, "?");
}

static void put_dim(char *buf, size_t size, int *len, const char *name,
		    int64_t v)
{
	dt_put_s(buf, size, len, name);
	if (v >= 0)
		dt_put_i64(buf, size, len, v);
	else
		dt_put_s(buf, size, len, "?");
}

/* Whether the handle's math mode changes what runs: FP32 data, whose
 * products it lets run on tensor cores (TF32, BF16x9), or not. */
static bool math_matters(const struct gemm *g)
{
	return g->op == GEMM_GEMM && g->math > 0 &&
	       (g->type[MAT_A] == 0 || g->type[MAT_A] == 4);
}

/* The problem: what it computes, without the algorithm. */
static void describe_problem(const struct gemm *g, char *buf, size_t size)
{
	char tb[24];
	int len = 0;

	APPEND("%s %c", op_names[g->op], op_char(g->trans_a));
	if (g->trans_b >= 0)
		APPEND(",%c", op_char(g->trans_b));
	if (g->side >= 0)
		APPEND(" side=%s", g->side ? "R" : "L");
	if (g->uplo >= 0)
		APPEND(" uplo=%s", g->uplo == 0   ? "L"
				   : g->uplo == 1 ? "U"
						  : "F");
	/* a cuBLASLt matmul's layouts not seen: its shape unknown */
	put_dim(buf, size, &len, " m=", g->m);
	put_dim(buf, size, &len, " n=", g->n);
	if (g->op == GEMM_GEMM || g->op == GEMM_SYRK)
		put_dim(buf, size, &len, " k=", g->k);
	if (g->batch != 1)
		APPEND(" batch=%" PRId64, g->batch);
	for (int i = 0; i < MATS; i++) {
		if (!has_mat(g, i))
			continue;
		APPEND(" %s=%s", mat_role(g, i),
		       g->type[i] >= 0 ? type_name(g->type[i], tb, sizeof(tb))
				       : "?");
		if (g->ld[i])
			APPEND(":ld%" PRId64, g->ld[i]);
		if (g->stride[i] > 0)
			APPEND(":stride%" PRId64, g->stride[i]);
		else if (g->stride[i] < 0)
			APPEND(":array");
	}
	if (g->compute >= 0)
		APPEND(" compute=%s", compute_name(g->compute, tb, sizeof(tb)));
	if (g->scale >= 0)
		APPEND(" scale=%s", type_name(g->scale, tb, sizeof(tb)));
	if (math_matters(g))
		APPEND(" math=%s", math_name(g->math));
	if (g->epilogue > 1) {
		APPEND(" epilogue=%s",
		       epilogue_name(g->epilogue, tb, sizeof(tb)));
		if ((g->epilogue & (DT_GEMM_EPI_BIAS | DT_GEMM_EPI_BGRAD |
				    DT_GEMM_EPI_BGRADA | DT_GEMM_EPI_BGRADB)) &&
		    g->bias_type >= 0)
			APPEND(" bias=%s",
			       type_name(g->bias_type, tb, sizeof(tb)));
		if ((g->epilogue & DT_GEMM_EPI_AUX) && g->aux_type >= 0)
			APPEND(" aux=%s",
			       type_name(g->aux_type, tb, sizeof(tb)));
	}
	if (g->scaled)
		APPEND(" scaled");
	if (g->amax)
		APPEND(" amax");
	put_scalar(buf, size, &len, " alpha=", g->has_alpha, g->alpha);
	if (g->op != GEMM_TRSM)
		put_scalar(buf, size, &len, " beta=", g->has_beta, g->beta);
}

/* CUBLASLT_ALGO_CONFIG_* names, without the prefix, by enum
 * dt_gemm_algo_attr. */
static const char *const algo_names[DT_GEMM_ALGO_ATTRS] = {
	"ID",
	"TILE_ID",
	"SPLITK_NUM",
	"REDUCTION_SCHEME",
	"CTA_SWIZZLING",
	"CUSTOM_OPTION",
	"STAGES_ID",
	"INNER_SHAPE_ID",
	"CLUSTER_SHAPE_ID",
};

/* Whether attribute i of a cuBLASLt algorithm is shown: known, and the
 * id or not 0 (none, auto, undefined). */
static bool shown(const int64_t algo[DT_GEMM_ALGO_ATTRS], int i)
{
	return algo[i] != DT_GEMM_ALGO_UNKNOWN && (!i || algo[i]);
}

const char *dt_gemm_knobs(const int64_t algo[DT_GEMM_ALGO_ATTRS], char *buf,
			  size_t size)
{
	int len = 0;

	buf[0] = 0;
	for (int i = DT_GEMM_ALGO_ID + 1; i < DT_GEMM_ALGO_ATTRS; i++)
		if (shown(algo, i))
			APPEND("%s%s=%" PRId64, len ? " " : "", algo_names[i],
			       algo[i]);
	return buf;
}

/* A cuBLASLt algorithm as " name{ID=66 TILE_ID=20 ...}", or
 * " name{heuristic}" when only that a heuristic chose it is known. */
static void put_algo(char *buf, size_t size, int *plen, const char *name,
		     const int64_t algo[DT_GEMM_ALGO_ATTRS],
		     bool from_heuristic)
{
	bool any = false;
	int len = *plen;

	for (int i = 0; i < DT_GEMM_ALGO_ATTRS; i++)
		if (shown(algo, i)) {
			if (any)
				APPEND(" ");
			else
				APPEND(" %s{", name);
			APPEND("%s=%" PRId64, algo_names[i], algo[i]);
			any = true;
		}
	if (any)
		APPEND("}");
	else if (from_heuristic)
		APPEND(" %s{heuristic}", name);
	*plen = len;
}

/* The problem and what was chosen for it: cuBLAS's cublasGemmAlgo_t and,
 * when the call ran through a cuBLASLt matmul, that one's algorithm
 * (lt{...}); or the attributes of cuBLASLt's algorithm (or that a
 * heuristic chose it, when they are not known). */
static void describe(const struct gemm *g, const char *problem, char *buf,
		     size_t size)
{
	int len = 0;

	APPEND("%s", problem);
	if (g->math >= 0) {
		/* -1 is CUBLAS_GEMM_DEFAULT: what a call without one runs */
		if (g->algo[DT_GEMM_ALGO_ID] != DT_GEMM_ALGO_UNKNOWN &&
		    g->algo[DT_GEMM_ALGO_ID] != -1)
			APPEND(" algo=%" PRId64, g->algo[DT_GEMM_ALGO_ID]);
		put_algo(buf, size, &len, "lt", g->lt_algo, g->from_heuristic);
		return;
	}
	put_algo(buf, size, &len, "algo", g->algo, g->from_heuristic);
}

/* ---------------------------------------------------------------- cost */

static uint64_t mat_bytes(const struct gemm *g, int i, int32_t type)
{
	int64_t rows, cols;
	int bits = gemm_type_bits(type);
	uint64_t n;

	mat_shape(g, i, &rows, &cols);
	if (rows <= 0 || cols <= 0 || bits <= 0)
		return 0;
	n = (uint64_t)rows * (uint64_t)cols;
	/* a triangle of a square matrix */
	if ((g->op == GEMM_TRSM && i == MAT_A) ||
	    (g->op == GEMM_SYRK && i == MAT_C))
		n = (uint64_t)rows * ((uint64_t)rows + 1) / 2;
	/* a stride of 0 is one matrix for the whole batch */
	if (g->batch > 1 && g->stride[i] != 0)
		n *= (uint64_t)g->batch;
	return (n * (uint64_t)bits + 7) / 8;
}

/* Shapes are the trace's, untrusted: products saturate rather than
 * overflow. */
static int64_t mul_sat(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static uint64_t to_u64(double v)
{
	return v >= 1.8e19 ? UINT64_MAX : v > 0 ? (uint64_t)v : 0;
}

/* The epilogue's pointwise work per element of D, and the vectors and
 * matrices it reads or writes. */
static void epilogue_cost(const struct gemm *g, double *flops, uint64_t *bytes)
{
	uint32_t e = g->epilogue > 1 ? g->epilogue : 0;
	double elems = (double)g->m * (double)g->n * (double)g->batch;
	int32_t d = g->type[MAT_D] >= 0 ? g->type[MAT_D] : g->type[MAT_C];
	int bias = gemm_type_bits(g->bias_type >= 0 ? g->bias_type : d);
	int aux = gemm_type_bits(g->aux_type >= 0 ? g->aux_type : d);
	int steps = !!(e & (DT_GEMM_EPI_RELU | DT_GEMM_EPI_DRELU)) +
		    !!(e & (DT_GEMM_EPI_GELU | DT_GEMM_EPI_DGELU)) +
		    !!(e & DT_GEMM_EPI_BIAS) +
		    !!(e & (DT_GEMM_EPI_BGRAD | DT_GEMM_EPI_BGRADA |
			    DT_GEMM_EPI_BGRADB));

	*flops += steps * elems;
	if (e & DT_GEMM_EPI_BIAS) /* a vector of m, read */
		*bytes += (uint64_t)g->m * (uint64_t)bias / 8;
	if (e & (DT_GEMM_EPI_BGRAD | DT_GEMM_EPI_BGRADA |
		 DT_GEMM_EPI_BGRADB)) /* written */
		*bytes += (uint64_t)(e & DT_GEMM_EPI_BGRADB ? g->n : g->m) *
			  (uint64_t)bias / 8;
	if (e & DT_GEMM_EPI_AUX) /* written forward, read by DRELU/DGELU */
		*bytes += to_u64(elems * aux / 8);
}

/* What one execution computes and moves, and the math it runs on. */
static void cost(const struct gemm *g, struct dt_cost *c, int *tensor_cores)
{
	const struct type_def *a = type_of(g->type[MAT_A]);
	double m = (double)g->m, n = (double)g->n, k = (double)g->k,
	       b = (double)g->batch, f = 0;

	*c = (struct dt_cost){ .kind = DT_KIND_MATMUL, .dtype = -1 };
	*tensor_cores = -1;
	if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 1)
		return;
	switch (g->op) {
	case GEMM_GEMM:
		f = 2 * m * n * k * b;
		break;
	case GEMM_GEMV:
		f = 2 * m * n * b;
		break;
	case GEMM_TRSM: /* a triangle of the side's order, per column */
		f = g->side == 1 ? n * n * m : m * m * n;
		break;
	case GEMM_SYRK: /* one triangle of n x n, each k long */
		f = n * (n + 1) * k;
		break;
	}
	if (a && a->complex) /* a complex multiply-add is four real ones */
		f *= 4;
	epilogue_cost(g, &f, &c->bytes);
	c->flops = f;
	for (int i = 0; i < MATS; i++) {
		if (!has_mat(g, i))
			continue;
		/* C is read when beta may be nonzero; the result written */
		bool out =
			i == MAT_D ||
			(i == MAT_C && !g->ld[MAT_D] && g->op != GEMM_TRSM) ||
			(i == MAT_B && g->op == GEMM_TRSM);
		bool in = i != MAT_D && (i != MAT_C || beta_reads(g));
		if (g->op == GEMM_TRSM && i == MAT_B)
			in = true;
		uint64_t one = mat_bytes(g, i, g->type[i]);
		c->bytes += (in ? one : 0) + (out ? one : 0);
	}
	c->dtype = a ? a->dtype : -1;
	/* GEMMs run on tensor cores by their types; the other calls are
	 * held against the CUDA cores */
	c->tensor_op = g->op == GEMM_GEMM;
	switch (g->compute) {
	case 77: /* 32F_FAST_TF32 */
		*tensor_cores = 1;
		break;
	case 74: /* 32F_FAST_16F: FP32 data computed in FP16 */
		c->dtype = DT_DTYPE_HALF;
		*tensor_cores = 1;
		break;
	case 75: /* 32F_FAST_16BF */
		c->dtype = DT_DTYPE_BFLOAT16;
		*tensor_cores = 1;
		break;
	case 68: /* 32F, 32F_PEDANTIC: FP32 data on the CUDA cores unless
		    the handle allows TF32 */
	case 69:
		if (c->dtype == DT_DTYPE_FLOAT)
			*tensor_cores =
				(g->math & ~16) == 3 && g->compute == 68;
		break;
	default:
		break;
	}
	if (c->dtype == DT_DTYPE_FP8_E4M3 || c->dtype == DT_DTYPE_FP8_E5M2)
		*tensor_cores = 1; /* no other unit multiplies FP8 */
	if (!c->tensor_op)         /* not a question for them */
		*tensor_cores = -1;
}

/* ------------------------------------------------------------- recipe */

static void tlist_push(struct tlist *l, const struct dt_op_tensor *o)
{
	struct dt_op_tensor *v = realloc(l->v, (l->n + 1) * sizeof(*v));

	if (!v)
		return;
	l->v = v;
	l->v[l->n++] = *o;
	l->cap = l->n;
}

static struct dt_op_tensor mat_tensor(const struct gemm *g, int i,
				      const struct type_def *t)
{
	int64_t rows, cols;
	struct dt_op_tensor o = { .ptr = i };

	mat_shape(g, i, &rows, &cols);
	o.t = (struct dt_tensor){
		.valid = true,
		.dtype = !t->complex                   ? t->dtype
			 : t->dtype == DT_DTYPE_DOUBLE ? DT_DTYPE_COMPLEX_FP64
			 : t->dtype == DT_DTYPE_FLOAT  ? DT_DTYPE_COMPLEX_FP32
						       : -1,
		.nb = 3,
		/* column-major, batch outermost */
		.dims = { g->batch, rows, cols },
		.strides = { g->stride[i] > 0 ? g->stride[i]
					      : mul_sat(rows, cols),
			     1, g->ld[i] ? g->ld[i] : rows },
	};
	snprintf(o.role, sizeof(o.role), "%s", mat_role(g, i));
	return o;
}

/* The matrices, the result first of those written (D, else C); then the
 * intermediates an epilogue keeps on chip, each as large as D: the
 * product before its bias, and before its activation. */
static void tensors(const struct gemm *g, struct tlist *l)
{
	static const int order[MATS] = { MAT_A, MAT_B, MAT_D, MAT_C };
	uint32_t e = g->epilogue > 1 ? g->epilogue : 0;
	int out = has_mat(g, MAT_D) ? MAT_D : MAT_C;
	int steps = !!(e & DT_GEMM_EPI_BIAS) +
		    !!(e & (DT_GEMM_EPI_RELU | DT_GEMM_EPI_GELU));

	for (int k = 0; k < MATS; k++) {
		const struct type_def *t = type_of(g->type[order[k]]);
		if (has_mat(g, order[k]) && t) {
			struct dt_op_tensor o = mat_tensor(g, order[k], t);
			tlist_push(l, &o);
		}
	}
	for (int k = 0; k < steps && type_of(g->type[out]); k++) {
		struct dt_op_tensor o =
			mat_tensor(g, out, type_of(g->type[out]));
		o.t.is_virtual = true;
		o.ptr = -1;
		snprintf(o.role, sizeof(o.role), "%s",
			 k == steps - 1 && steps == 2 ? "biased" : "product");
		tlist_push(l, &o);
	}
}

static void node(struct gemm_entry *e, enum dt_op_kind kind, const char *name)
{
	e->nodes[e->n_nodes++] =
		(struct dt_recipe_node){ .kind = kind, .name = name };
}

static void param(struct gemm_entry *e, const char *name, double v)
{
	if (e->n_params < sizeof(e->params) / sizeof(e->params[0]))
		e->params[e->n_params++] = (struct dt_recipe_param){ name, v };
}

static void recipe(const struct gemm *g, struct gemm_entry *e)
{
	static const char *const ld_names[] = { "lda", "ldb", "ldc", "ldd" };
	static const char *const stride_names[] = { "strideA", "strideB",
						    "strideC", "strideD" };
	static const char *const type_names[] = { "Atype", "Btype", "Ctype",
						  "Dtype" };
	uint32_t ep = g->epilogue > 1 ? g->epilogue : 0;

	node(e, DT_KIND_MATMUL, op_names[g->op]);
	if (ep & DT_GEMM_EPI_BIAS)
		node(e, DT_KIND_POINTWISE, "bias");
	if (ep & (DT_GEMM_EPI_RELU | DT_GEMM_EPI_DRELU))
		node(e, DT_KIND_POINTWISE,
		     ep & DT_GEMM_EPI_DRELU ? "drelu" : "relu");
	if (ep & (DT_GEMM_EPI_GELU | DT_GEMM_EPI_DGELU))
		node(e, DT_KIND_POINTWISE,
		     ep & DT_GEMM_EPI_DGELU ? "dgelu" : "gelu");
	if (ep & (DT_GEMM_EPI_BGRAD | DT_GEMM_EPI_BGRADA | DT_GEMM_EPI_BGRADB))
		node(e, DT_KIND_REDUCTION, "bgrad");
	param(e, "transa", g->trans_a);
	if (g->trans_b >= 0)
		param(e, "transb", g->trans_b);
	if (g->side >= 0)
		param(e, "side", g->side);
	if (g->uplo >= 0)
		param(e, "uplo", g->uplo);
	param(e, "m", (double)g->m);
	param(e, "n", (double)g->n);
	if (g->op == GEMM_GEMM || g->op == GEMM_SYRK)
		param(e, "k", (double)g->k);
	param(e, "batch", (double)g->batch);
	for (int i = 0; i < MATS; i++) {
		if (g->ld[i])
			param(e, ld_names[i], (double)g->ld[i]);
		if (g->stride[i] > 0)
			param(e, stride_names[i], (double)g->stride[i]);
		if (has_mat(g, i) && g->type[i] >= 0)
			param(e, type_names[i], g->type[i]);
	}
	if (g->compute >= 0)
		param(e, "computeType", g->compute);
	if (g->scale >= 0)
		param(e, "scaleType", g->scale);
	if (g->math >= 0)
		param(e, "mathMode", g->math);
	if (ep)
		param(e, "epilogue", ep);
	param(e, "alpha", g->has_alpha ? g->alpha : NAN);
	if (g->op != GEMM_TRSM)
		param(e, "beta", g->has_beta ? g->beta : NAN);
	if (g->workspace_used >= 0)
		param(e, "workspaceNeeded", (double)g->workspace_used);
	/* as the description has them: those at 0 left out; a cuBLAS
	 * call's cublasGemmAlgo_t as ALGO, then cuBLASLt's choice */
	for (int i = 0; i < DT_GEMM_ALGO_ATTRS; i++)
		if (shown(g->algo, i))
			e->knobs[e->n_knobs++] = (struct dt_recipe_kv){
				g->math >= 0 ? "ALGO" : algo_names[i],
				g->algo[i]
			};
	for (int i = 0; i < DT_GEMM_ALGO_ATTRS; i++)
		if (shown(g->lt_algo, i))
			e->knobs[e->n_knobs++] =
				(struct dt_recipe_kv){ algo_names[i],
						       g->lt_algo[i] };
}

/* The knob choices as one text, for views that compare them whole (a
 * change of tile or stages is an engine change, as a cuDNN knob's is):
 * the configuration of the cuBLASLt algorithm that ran. */
static char *knobs_text(const struct gemm *g)
{
	char buf[256];

	dt_gemm_knobs(g->math >= 0 ? g->lt_algo : g->algo, buf, sizeof(buf));
	return buf[0] ? strdup(buf) : NULL;
}

/* cuBLAS's FP32 product under the handle's TF32 math mode is what
 * cuBLASLt calls 32F_FAST_TF32 (77). */
static int32_t lt_compute(const struct gemm *g)
{
	return math_matters(g) && (g->math & ~16) == 3 && g->compute == 68
		       ? 77
		       : g->compute;
}

/* What replay builds the GEMM again from: the product as cuBLASLt takes
 * it, and the cuBLASLt algorithm that ran. */
static void build(const struct gemm *g, struct gemm_entry *e)
{
	struct dt_gemm_build *b = &e->build;
	bool cublas = g->math >= 0;

	*b = (struct dt_gemm_build){
		.library = cublas ? "cublas" : "cublaslt",
		.trans_a = g->trans_a,
		.trans_b = g->trans_b,
		.m = g->m,
		.n = g->n,
		.k = g->k,
		.batch = g->batch,
		.in_place = !has_mat(g, MAT_D),
		.compute = lt_compute(g),
		.scale = g->scale,
		.epilogue = g->epilogue > 1 ? g->epilogue : 1,
		.bias_type = g->bias_type,
		.aux_type = g->aux_type,
		.scaled = g->scaled,
		.amax = g->amax,
		.has_alpha = g->has_alpha,
		.has_beta = g->has_beta,
		.alpha = g->alpha,
		.beta = g->beta,
		.workspace = g->workspace,
	};
	for (int i = 0; i < MATS; i++) {
		/* D written in place is C's layout again */
		int from = i == MAT_D && b->in_place ? MAT_C : i;
		struct dt_gemm_matrix *mt = &b->mat[i];
		mat_shape(g, from, &mt->rows, &mt->cols);
		mt->type = g->type[from];
		mt->ld = g->ld[from] ? g->ld[from] : mt->rows;
		mt->stride = g->stride[from];
	}
	memcpy(b->algo, cublas ? g->lt_algo : g->algo, sizeof(b->algo));
}

static void fill(const struct gemm *g, struct gemm_entry *e,
		 const char *problem)
{
	e->problem = problem;
	e->g = *g;
	tensors(g, &e->tensors);
	recipe(g, e);
	cost(g, &e->cost, &e->tensor_cores);
	/* what ran: cuBLASLt's algorithm, when a cuBLAS call ran through
	 * one */
	e->engine = g->lt_algo[DT_GEMM_ALGO_ID] >= 0
			    ? g->lt_algo[DT_GEMM_ALGO_ID]
		    : g->algo[DT_GEMM_ALGO_ID] >= 0 ? g->algo[DT_GEMM_ALGO_ID]
						    : -1;
	e->knob_text = knobs_text(g);
	if (g->op == GEMM_GEMM)
		build(g, e);
}

/* The entry of g's description, made with its problem's when new. */
static struct gemm_entry *entry_for(struct gemm_table *t, const struct gemm *g)
{
	char problem[768], desc[1024];
	struct gemm_entry *pe, *e;
	bool made;

	describe_problem(g, problem, sizeof(problem));
	if (!(pe = entry_of(t, problem, &made)))
		return NULL;
	if (made)
		fill(g, pe, pe->desc);
	describe(g, problem, desc, sizeof(desc));
	if (!(e = entry_of(t, desc, &made)))
		return NULL;
	if (made)
		fill(g, e, pe->desc);
	return e;
}

/* Op p is e's. */
static void apply(struct pending *p, const struct gemm_entry *e)
{
	p->desc = e->desc;
	p->problem = e->problem;
	p->tensors = &e->tensors;
	p->recipe = (struct dt_recipe){ .nodes = e->nodes,
					.n_nodes = e->n_nodes,
					.knobs = e->knobs,
					.n_knobs = e->n_knobs,
					.params = e->params,
					.n_params = e->n_params,
					.build = e->build.library ? &e->build
								  : NULL };
	p->op.cost = e->cost;
	p->op.tensor_cores = e->tensor_cores;
	p->op.engine = e->engine;
	p->op.knobs = e->knob_text;
}

struct pending *gemm_op_new(struct dt_model *core, struct gemm_table *t,
			    const struct dt_rec_api_call *c, const char *api,
			    const struct gemm *g, const uint64_t ptrs[MATS],
			    uint64_t stream)
{
	struct gemm_entry *e = entry_for(t, g);
	struct pending *p;

	if (!e || !(p = m_op_new(core, c, api, e->desc)))
		return NULL;
	apply(p, e);
	p->op.workspace = g->workspace;
	p->op.stream = stream;
	if (m_pointers(core) && m_op_ptrs_room(p, MATS))
		for (int i = 0; i < MATS; i++)
			p->ptrs[i] = (struct dt_op_ptr){ -1, mat_role(g, i), 1,
							 ptrs[i] };
	return p;
}

const struct gemm *gemm_of(const struct pending *p)
{
	return &((const struct gemm_entry *)(p->desc -
					     offsetof(struct gemm_entry, desc)))
			->g;
}

void gemm_op_redo(struct gemm_table *t, struct pending *p, const struct gemm *g)
{
	const struct gemm_entry *e = entry_for(t, g);

	if (e)
		apply(p, e);
}
