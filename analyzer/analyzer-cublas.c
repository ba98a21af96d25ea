/*
 * analyzer-cublas.c - the cuBLAS decoder: its matrix products (every
 * gemm of every type, Ex, batched, strided and 64-bit variant), and the
 * level-2 and level-3 calls that are cheap to price (gemv, trsm, syrk and
 * herk), made ops with their shapes, types, scalars and algorithm, and
 * the algorithm cuBLASLt chose when the call ran through a cuBLASLt
 * matmul (recorded nested in it, noted by the cuBLASLt decoder); and what
 * each handle holds that they depend on: its stream, its math mode, the
 * workspace given to it.
 *
 * A call is read by its parameters' names, as the headers give them
 * (transa, m, lda, Atype, strideA, batchCount, ...), and its types by
 * its name's letter (cublasSgemm: float; cublasHSHgemvBatched: half in,
 * float compute, half out) where it takes none. Other calls that launch
 * work stay calls, ops of cuBLAS left undescribed by the core. The
 * product itself is described and costed by analyzer-cublas-gemm.c.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-cublas.h"

#define CUBLAS_HANDLES 64 /* handles whose state is kept */

/* What a function of the trace is to the decoder, worked out once. */
enum api_class {
	C_UNKNOWN,
	C_OTHER,
	C_COMPUTE, /* a product or solve: family and letters below */
	C_SET_MATH,
	C_SET_STREAM,
	C_SET_WORKSPACE,
	C_DESTROY,
};

struct api_class_info {
	uint8_t cls;
	uint8_t op;      /* enum gemm_op */
	char letters[4]; /* the type letters before the family, "s",
			    "hsh"; "" none (the Ex calls) */
};

struct handle {
	uint64_t handle, stream;
	int64_t workspace; /* bytes given with cublasSetWorkspace, -1 */
	int32_t math;      /* cublasMath_t */
};

struct cublas_model {
	struct gemm_decoder d; /* api: struct api_class_info, by API id */
	struct handle handles[CUBLAS_HANDLES];
	unsigned next_handle; /* the slot taken next when full: the oldest */
};

/* ----------------------------------------------------------- handles */

/* Handle h's state; with create, a new one when it has none (the oldest
 * slot when every slot is taken). */
static struct handle *handle_of(struct cublas_model *m, uint64_t h, bool create)
{
	struct handle *s = NULL;

	if (!h)
		return NULL;
	for (int i = 0; i < CUBLAS_HANDLES; i++)
		if (m->handles[i].handle == h)
			return &m->handles[i];
		else if (!s && !m->handles[i].handle)
			s = &m->handles[i];
	if (!create)
		return NULL;
	if (!s)
		s = &m->handles[m->next_handle++ % CUBLAS_HANDLES];
	*s = (struct handle){ .handle = h, .workspace = -1 };
	return s;
}

static void handle_set(struct cublas_model *m, const struct dt_arg *args, int n,
		       enum api_class cls)
{
	const struct dt_arg *h = dt_arg_named(args, n, "handle");
	struct handle *s = h ? handle_of(m, h->u, cls != C_DESTROY) : NULL;
	const struct dt_arg *a;

	if (!s)
		return;
	switch (cls) {
	case C_SET_MATH:
		s->math = (int32_t)gemm_arg_i(args, n, "mode", s->math);
		break;
	case C_SET_STREAM:
		if ((a = dt_arg_named(args, n, "streamId")) && a->code == 'p')
			s->stream = a->u;
		break;
	case C_SET_WORKSPACE:
		s->workspace = gemm_arg_i(args, n, "workspaceSizeInBytes", -1);
		break;
	case C_DESTROY:
		memset(s, 0, sizeof(*s));
		break;
	default:
		break;
	}
}

/* -------------------------------------------------------- classifying */

/* The families priced, as the names spell them after their letters. */
static const struct family {
	const char *name;
	enum gemm_op op;
} families[] = {
	{ "gemm", GEMM_GEMM }, { "gemv", GEMM_GEMV }, { "trsm", GEMM_TRSM },
	{ "syrk", GEMM_SYRK }, { "herk", GEMM_SYRK },
};

/* cublas<letters><family><rest>: cublasSgemm_v2, cublasGemmEx,
 * cublasHSHgemvBatched. Grouped batches (an array of shapes) are not
 * one problem: they stay calls. */
static bool compute_call(const char *name, struct api_class_info *ai)
{
	char low[64];
	size_t len;

	if (strncmp(name, "cublas", 6))
		return false;
	name += 6;
	for (len = 0; name[len] && len < sizeof(low) - 1; len++)
		low[len] = (char)tolower((unsigned char)name[len]);
	low[len] = 0;
	if (strstr(low, "grouped"))
		return false;
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		const char *at = strstr(low, families[f].name);
		size_t nl = at ? (size_t)(at - low) : 0;
		if (!at || (nl != 0 && nl != 1 && nl != 3) ||
		    strspn(low, "sdhczt") < nl)
			continue;
		ai->op = (uint8_t)families[f].op;
		memcpy(ai->letters, low, nl);
		ai->letters[nl] = 0;
		return true;
	}
	return false;
}

static void classify(const struct dt_api_def *api, struct api_class_info *ai)
{
	const char *name = api->name;

	ai->cls = C_OTHER;
	if (!strcmp(name, "cublasSetMathMode"))
		ai->cls = C_SET_MATH;
	else if (!strncmp(name, "cublasSetStream", 15))
		ai->cls = C_SET_STREAM;
	else if (!strncmp(name, "cublasSetWorkspace", 18))
		ai->cls = C_SET_WORKSPACE;
	else if (!strncmp(name, "cublasDestroy", 13))
		ai->cls = C_DESTROY;
	else if (compute_call(name, ai))
		ai->cls = C_COMPUTE;
}

/* ------------------------------------------------------------ reading */

/* A type letter's data type (cudaDataType_t), compute type
 * (cublasComputeType_t) and scale type. */
static void letter_types(char l, int32_t *type, int32_t *compute,
			 int32_t *scale)
{
	static const struct {
		char l;
		int32_t type, compute, scale;
	} letters[] = {
		{ 's', 0, 68, 0 }, { 'd', 1, 70, 1 }, { 'h', 2, 64, 2 },
		{ 'c', 4, 68, 4 }, { 'z', 5, 70, 5 }, { 't', 14, 68, 0 },
	};

	for (size_t i = 0; i < sizeof(letters) / sizeof(letters[0]); i++)
		if (letters[i].l == l) {
			*type = letters[i].type;
			*compute = letters[i].compute;
			*scale = letters[i].scale;
		}
}

/* The scale type a compute type implies (cublasGemmEx's documented
 * pairs); C's type decides between real and complex. */
static int32_t scale_of(int32_t compute, int32_t c_type)
{
	bool complex = c_type == 4 || c_type == 5 || c_type == 6;

	switch (compute) {
	case 64:
	case 65:
		return 2; /* R_16F */
	case 70:
	case 71:
	case 79:
		return complex ? 5 : 1;
	case 72:
	case 73:
		return 10; /* R_32I */
	case -1:
		return -1;
	default:
		return complex ? 4 : 0;
	}
}

/* The name of matrix i's argument in each spelling of the calls. */
static const char *const ptr_names[MATS][3] = {
	{ "A", "Aarray", NULL },
	{ "B", "Barray", "x" },
	{ "C", "Carray", "y" },
	{ NULL, NULL, NULL },
};

static const struct dt_arg *mat_arg(const struct dt_arg *args, int n, int i,
				    bool *array)
{
	static const char *const arrays[] = { "xarray", "yarray" };
	const struct dt_arg *a;

	*array = false;
	for (int k = 0; k < 3; k++)
		if (ptr_names[i][k] &&
		    (a = dt_arg_named(args, n, ptr_names[i][k]))) {
			*array = k == 1;
			return a;
		}
	if (i == MAT_B || i == MAT_C) {
		*array = true;
		return dt_arg_named(args, n, arrays[i - MAT_B]);
	}
	return NULL;
}

static void read_shape(struct gemm *g, const struct dt_arg *args, int n)
{
	static const char *const lds[MATS] = { "lda", "ldb", "ldc", NULL };
	static const char *const strides[MATS][2] = {
		{ "strideA", NULL },
		{ "strideB", "stridex" },
		{ "strideC", "stridey" },
		{ NULL, NULL },
	};

	g->trans_a = (int32_t)gemm_arg_i(
		args, n, g->op == GEMM_GEMM ? "transa" : "trans", 0);
	if (g->op == GEMM_GEMM)
		g->trans_b = (int32_t)gemm_arg_i(args, n, "transb", 0);
	g->side = (int32_t)gemm_arg_i(args, n, "side", -1);
	g->uplo = (int32_t)gemm_arg_i(args, n, "uplo", -1);
	g->m = gemm_arg_i(args, n, "m", -1);
	g->n = gemm_arg_i(args, n, "n", -1);
	g->k = gemm_arg_i(args, n, "k", g->op == GEMM_GEMM ? -1 : 0);
	if (g->op == GEMM_SYRK)
		g->m = g->n;
	g->batch = gemm_arg_i(args, n, "batchCount", 1);
	for (int i = 0; i < MAT_D; i++) {
		bool array;
		g->ld[i] = lds[i] ? gemm_arg_i(args, n, lds[i], 0) : 0;
		g->stride[i] = gemm_arg_i(args, n, strides[i][0], 0);
		if (!g->stride[i] && strides[i][1])
			g->stride[i] = gemm_arg_i(args, n, strides[i][1], 0);
		if (mat_arg(args, n, i, &array) && array)
			g->stride[i] = -1;
	}
}

/* Types: the letters' (one for all, or A's, compute's and C's), then
 * the Ex calls' arguments. */
static void read_types(struct gemm *g, const struct api_class_info *ai,
		       const struct dt_arg *args, int n)
{
	static const char *const names[MATS] = { "Atype", "Btype", "Ctype",
						 NULL };
	const char *l = ai->letters;
	int32_t t = -1, compute = -1, scale = -1, unused;

	if (*l)
		letter_types(l[0], &t, &compute, &scale);
	for (int i = 0; i < MAT_D; i++)
		g->type[i] = t;
	if (strlen(l) == 3) { /* HSH: half data, float compute, half out */
		letter_types(l[1], &unused, &compute, &scale);
		letter_types(l[2], &g->type[MAT_C], &unused, &unused);
	}
	for (int i = 0; i < MAT_D; i++)
		g->type[i] = (int32_t)gemm_arg_i(args, n, names[i], g->type[i]);
	if (g->op == GEMM_SYRK && g->type[MAT_C] < 0)
		g->type[MAT_C] = g->type[MAT_A];
	g->compute = (int32_t)gemm_arg_i(args, n, "computeType", compute);
	/* cublasSgemmEx and the like compute in their letter's type */
	g->scale = dt_arg_named(args, n, "computeType")
			   ? scale_of(g->compute, g->type[MAT_C])
			   : scale;
	if (g->scale < 0)
		g->scale = scale_of(g->compute, g->type[MAT_C]);
}

/* What cuBLASLt chose, when the call ran through a cuBLASLt matmul. */
static void read_chosen(struct cublas_model *m, const struct dt_rec_api_call *c,
			struct gemm *g)
{
	uint32_t size;
	const struct gemm_chosen *ch =
		m_nested_of(m->d.core, c, "cublaslt", &size);

	if (!ch || size != sizeof(*ch))
		return;
	memcpy(g->lt_algo, ch->algo, sizeof(g->lt_algo));
	g->lt_key = ch->key;
	g->from_heuristic = ch->from_heuristic;
	g->workspace_used = ch->workspace_used;
}

static void compute_op(struct cublas_model *m, const struct dt_rec_api_call *c,
		       const struct dt_api_def *api,
		       const struct api_class_info *ai,
		       const struct dt_arg *args, int n)
{
	const struct dt_arg *h = dt_arg_named(args, n, "handle");
	const struct handle *s = h ? handle_of(m, h->u, false) : NULL;
	uint64_t ptrs[MATS] = { 0 };
	struct gemm g;

	gemm_init(&g, (enum gemm_op)ai->op);
	read_shape(&g, args, n);
	read_types(&g, ai, args, n);
	g.math = s ? s->math : 0;
	g.workspace = s ? s->workspace : -1;
	g.algo[DT_GEMM_ALGO_ID] =
		gemm_arg_i(args, n, "algo", DT_GEMM_ALGO_UNKNOWN);
	read_chosen(m, c, &g);
	g.has_alpha =
		gemm_scalar(dt_arg_named(args, n, "alpha"), g.scale, &g.alpha);
	g.has_beta =
		gemm_scalar(dt_arg_named(args, n, "beta"), g.scale, &g.beta);
	for (int i = 0; i < MAT_D; i++) {
		bool array;
		const struct dt_arg *a = mat_arg(args, n, i, &array);
		ptrs[i] = a && a->code == 'p' ? a->u : 0;
	}
	struct pending *p = gemm_op_new(m->d.core, m->d.problems, c,
					api->name, &g, ptrs, s ? s->stream : 0);
	/* the algorithm's attributes may come later (asked on another
	 * thread): the cuBLASLt decoder describes the op again then */
	if (p && g.lt_key)
		m_op_wait(m->d.core, p, g.lt_key);
}

/* The type of a compute call's scalars (alpha, beta), from its letters
 * and types alone: what dump and the exports print them in. */
static int64_t cublas_scalar_dtype(const char *api, const struct dt_arg *args,
				   int n, int i)
{
	struct api_class_info ai = { 0 };
	struct gemm g;

	(void)i;
	if (!compute_call(api, &ai))
		return -1;
	gemm_init(&g, (enum gemm_op)ai.op);
	read_types(&g, &ai, args, n);
	return gemm_scale_dtype(g.scale);
}

/* ------------------------------------------------------- the decoder */

static void *cublas_create(struct dt_model *core, const struct dt_file_info *fi)
{
	return gemm_decoder_new(sizeof(struct cublas_model),
				sizeof(struct api_class_info), core, fi);
}

static void cublas_call(void *state, const struct dt_rec_api_call *c,
			const struct dt_api_def *api, struct dt_arg *args,
			int n)
{
	struct cublas_model *m = state;
	struct api_class_info *ai;

	if (c->api > m->d.fi->n_apis)
		return;
	ai = &((struct api_class_info *)m->d.api)[c->api];
	if (ai->cls == C_UNKNOWN)
		classify(api, ai);
	switch ((enum api_class)ai->cls) {
	case C_COMPUTE:
		compute_op(m, c, api, ai, args, n);
		return;
	case C_SET_MATH:
	case C_SET_STREAM:
	case C_SET_WORKSPACE:
	case C_DESTROY:
		if (!c->status)
			handle_set(m, args, n, (enum api_class)ai->cls);
		return;
	case C_UNKNOWN:
	case C_OTHER:
		return;
	}
}

const struct dt_decoder dt_decoder_cublas = {
	.library = "cublas",
	.create = cublas_create,
	.destroy = gemm_decoder_free,
	.call = cublas_call,
	.scalar_dtype = cublas_scalar_dtype,
};
