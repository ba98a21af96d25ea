/*
 * analyzer-cublaslt.c - the cuBLASLt decoder: matmul descriptors and
 * matrix layouts rebuilt from their create and set-attribute calls, the
 * algorithms the program was given (by cublasLtMatmulAlgoInit, a
 * heuristic query, or read back attribute by attribute), and each
 * cublasLtMatmul made an op: the product of its layouts, its epilogue,
 * FP8 scaling, scalars and algorithm, described and costed by
 * analyzer-cublas-gemm.c. The typed matmuls cuBLAS calls inside its own
 * calls (cublasLtTSTMatmul: cublasLtMatmul's parameters, undeclared) make
 * no op: what they ran is noted for the cuBLAS call (struct gemm_chosen).
 *
 * Descriptors are kept by handle while they live (frameworks create and
 * destroy one per product: the table only holds those alive).
 * Algorithms are opaque structs the program passes by address; the trace
 * holds their bytes, by which the decoder knows them again.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer-cublas.h"

#define DESC_BUCKETS 4096
#define ALGOS        256 /* algorithms remembered, the oldest replaced */
#define ALGO_BYTES   64  /* sizeof(cublasLtMatmulAlgo_t) */
#define HEUR_BYTES   96  /* sizeof(cublasLtMatmulHeuristicResult_t) */

/* cublasLtMatmulDescAttributes_t values read. */
enum {
	MD_COMPUTE_TYPE = 0,
	MD_SCALE_TYPE = 1,
	MD_TRANSA = 3,
	MD_TRANSB = 4,
	MD_EPILOGUE = 7,
	MD_A_SCALE_POINTER = 17,
	MD_B_SCALE_POINTER = 18,
	MD_D_SCALE_POINTER = 20,
	MD_AMAX_D_POINTER = 21,
	MD_AUX_DATA_TYPE = 22,
	MD_BIAS_DATA_TYPE = 26,
};

/* cublasLtMatrixLayoutAttribute_t values read. */
enum {
	ML_TYPE = 0,
	ML_ROWS = 2,
	ML_COLS = 3,
	ML_LD = 4,
	ML_BATCH_COUNT = 5,
	ML_STRIDED_BATCH_OFFSET = 6,
};

/* A matmul descriptor or a matrix layout, while it lives. */
struct desc {
	struct desc *next;
	uint64_t ptr;
	/* matmul */
	int32_t compute, scale, trans_a, trans_b, bias_type, aux_type;
	uint32_t epilogue;
	bool a_scale, b_scale, d_scale, amax;
	/* layout */
	int32_t type;
	int64_t rows, cols, ld, batch, stride;
};

/* An algorithm the program was given, by its bytes. */
struct algo {
	uint64_t hash; /* 0: free */
	int64_t attr[DT_GEMM_ALGO_ATTRS];
	int64_t workspace; /* a heuristic's result says it needs this */
	bool heuristic;
};

enum api_class {
	L_UNKNOWN,
	L_OTHER,
	L_DESC_CREATE,
	L_LAYOUT_CREATE,
	L_DESC_SET,
	L_LAYOUT_SET,
	L_DESTROY,
	L_ALGO_INIT,
	L_ALGO_GET,
	L_HEURISTIC,
	L_MATMUL,
};

struct lt_model {
	struct gemm_decoder d; /* api: uint8_t enum api_class, by API id */
	const struct algo *resolving; /* the algorithm ops wait for now */
	struct desc *descs[DESC_BUCKETS];
	struct desc *free_descs;
	struct algo algos[ALGOS];
	unsigned next_algo;
	/* the last nested matmul noted, while its algorithm's attributes
	 * may still come (the shim asks them right after it) */
	struct dt_rec_api_call nested;
	const struct algo *nested_algo;
};

/* -------------------------------------------------------- descriptors */

static size_t bucket(uint64_t p)
{
	p ^= p >> 33;
	p *= 0xff51afd7ed558ccdull;
	return (p ^ (p >> 33)) & (DESC_BUCKETS - 1);
}

static struct desc *desc_find(struct lt_model *m, uint64_t ptr)
{
	for (struct desc *d = m->descs[bucket(ptr)]; d; d = d->next)
		if (d->ptr == ptr)
			return d;
	return NULL;
}

/* The descriptor a create call made at ptr, blank: an address used again
 * without a destroy starts over. */
static struct desc *desc_new(struct lt_model *m, uint64_t ptr)
{
	struct desc *d = desc_find(m, ptr), *next;

	if (!ptr)
		return NULL;
	if (!d) {
		if ((d = m->free_descs))
			m->free_descs = d->next;
		else if (!(d = malloc(sizeof(*d))))
			return NULL;
		d->next = m->descs[bucket(ptr)];
		m->descs[bucket(ptr)] = d;
	}
	next = d->next;
	*d = (struct desc){ .next = next,
			    .ptr = ptr,
			    .compute = -1,
			    .scale = -1,
			    .bias_type = -1,
			    .aux_type = -1,
			    .type = -1,
			    .batch = 1 };
	return d;
}

static void desc_remove(struct lt_model *m, uint64_t ptr)
{
	for (struct desc **p = &m->descs[bucket(ptr)]; *p; p = &(*p)->next)
		if ((*p)->ptr == ptr) {
			struct desc *d = *p;
			*p = d->next;
			d->next = m->free_descs;
			m->free_descs = d;
			return;
		}
}

/* An attribute's value: the integer its bytes hold (little-endian, up to
 * 8 of them). */
static bool attr_value(const struct dt_arg *buf, int64_t *v)
{
	uint8_t b[8] = { 0 };
	uint32_t n;

	if (!buf || (buf->code != 'x' && buf->code != 'a') || !buf->data)
		return false;
	n = buf->code == 'a' ? buf->count * buf->width : buf->count;
	if (!n)
		return false;
	memcpy(b, buf->data, n < 8 ? n : 8);
	if (n == 4) { /* an int32_t or an enum: its sign */
		int32_t i;
		memcpy(&i, b, 4);
		*v = i;
	} else {
		memcpy(v, b, 8);
	}
	return true;
}

static void desc_set(struct desc *d, int64_t attr, int64_t v)
{
	switch (attr) {
	case MD_COMPUTE_TYPE:
		d->compute = (int32_t)v;
		break;
	case MD_SCALE_TYPE:
		d->scale = (int32_t)v;
		break;
	case MD_TRANSA:
		d->trans_a = (int32_t)v;
		break;
	case MD_TRANSB:
		d->trans_b = (int32_t)v;
		break;
	case MD_EPILOGUE:
		d->epilogue = (uint32_t)v;
		break;
	case MD_A_SCALE_POINTER:
		d->a_scale = v != 0;
		break;
	case MD_B_SCALE_POINTER:
		d->b_scale = v != 0;
		break;
	case MD_D_SCALE_POINTER:
		d->d_scale = v != 0;
		break;
	case MD_AMAX_D_POINTER:
		d->amax = v != 0;
		break;
	case MD_AUX_DATA_TYPE:
		d->aux_type = (int32_t)v;
		break;
	case MD_BIAS_DATA_TYPE:
		d->bias_type = (int32_t)v;
		break;
	}
}

static void layout_set(struct desc *d, int64_t attr, int64_t v)
{
	switch (attr) {
	case ML_TYPE:
		d->type = (int32_t)v;
		break;
	case ML_ROWS:
		d->rows = v;
		break;
	case ML_COLS:
		d->cols = v;
		break;
	case ML_LD:
		d->ld = v;
		break;
	case ML_BATCH_COUNT:
		d->batch = v;
		break;
	case ML_STRIDED_BATCH_OFFSET:
		d->stride = v;
		break;
	}
}

/* --------------------------------------------------------- algorithms */

static uint64_t algo_hash(const uint8_t *p, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ? h : 1;
}

static struct algo *algo_at(struct lt_model *m, const uint8_t *p, uint32_t n,
			    bool create)
{
	uint64_t h;

	if (!p || n < ALGO_BYTES)
		return NULL;
	h = algo_hash(p, ALGO_BYTES);
	for (int i = 0; i < ALGOS; i++)
		if (m->algos[i].hash == h)
			return &m->algos[i];
	if (!create)
		return NULL;
	struct algo *a = &m->algos[m->next_algo++ % ALGOS];
	*a = (struct algo){ .hash = h, .workspace = -1 };
	for (int i = 0; i < DT_GEMM_ALGO_ATTRS; i++)
		a->attr[i] = DT_GEMM_ALGO_UNKNOWN;
	return a;
}

/* The algorithm argument of a call: its bytes. */
static struct algo *algo_arg(struct lt_model *m, const struct dt_arg *args,
			     int n, bool create)
{
	const struct dt_arg *a = dt_arg_named(args, n, "algo");

	return a && a->code == 'x' ? algo_at(m, a->data, a->count, create)
				   : NULL;
}

/* What matmul ops wait on while their algorithm's attributes are still
 * to come: its hash, marked as the cuBLASLt decoder's (the top bit: no
 * other decoder's key, a host address, has it). */
static uint64_t algo_key(const struct algo *a)
{
	return a->hash | 1ull << 63;
}

/* An op of an algorithm whose attributes came in since: described again,
 * and still listening for those that follow. */
static void algo_known(void *arg, struct pending *p)
{
	struct lt_model *m = arg;
	struct gemm g = *gemm_of(p);

	/* a cuBLAS call's op waits too when its nested matmul's algorithm
	 * was asked on another thread, recorded after it */
	memcpy(g.lt_key ? g.lt_algo : g.algo, m->resolving->attr,
	       sizeof(g.algo));
	g.from_heuristic = m->resolving->heuristic;
	gemm_op_redo(m->d.problems, p, &g);
	m_op_wait(m->d.core, p, algo_key(m->resolving));
}

/* What the last nested matmul ran, noted for the call it ran inside. */
static void note_nested(struct lt_model *m)
{
	const struct algo *a = m->nested_algo;
	struct gemm_chosen ch = { .workspace_used = a->workspace,
				  .from_heuristic = a->heuristic };

	if (a->attr[DT_GEMM_ALGO_ID] == DT_GEMM_ALGO_UNKNOWN)
		ch.key = algo_key(a);
	memcpy(ch.algo, a->attr, sizeof(ch.algo));
	m_nested_note(m->d.core, &m->nested, &ch, sizeof(ch));
}

/* An attribute read back from an algorithm (or set on it: the bytes the
 * trace holds are those after the call). The shim asks them after the
 * first matmul of an algorithm: that matmul's op, and any since, learn
 * them as they come. */
static void algo_attr(struct lt_model *m, const struct dt_arg *args, int n)
{
	struct algo *a = algo_arg(m, args, n, true);
	int64_t attr = gemm_arg_i(args, n, "attr", -1), v;

	if (!a || !attr_value(dt_arg_named(args, n, "buf"), &v))
		return;
	/* enum dt_gemm_algo_attr is cuBLASLt's numbering */
	if (attr >= 0 && attr < DT_GEMM_ALGO_ATTRS)
		a->attr[attr] = v;
	m->resolving = a;
	m_ops_waited(m->d.core, algo_key(a), 0, algo_known, m);
	if (a == m->nested_algo)
		note_nested(m);
	m->resolving = NULL;
}

/* A heuristic query's results: each one's algorithm, and the workspace
 * it needs. */
static void heuristic(struct lt_model *m, const struct dt_arg *args, int n)
{
	const struct dt_arg *r = dt_arg_named(args, n, "heuristicResultsArray");
	int64_t count = gemm_arg_i(args, n, "returnAlgoCount", 0);

	if (!r || r->code != 'x' || !r->data)
		return;
	for (int64_t i = 0; i < count && (i + 1) * HEUR_BYTES <= r->count;
	     i++) {
		const uint8_t *p = r->data + i * HEUR_BYTES;
		struct algo *a = algo_at(m, p, ALGO_BYTES, true);
		if (!a)
			continue;
		a->heuristic = true;
		memcpy(&a->workspace, p + ALGO_BYTES, 8);
	}
}

/* ------------------------------------------------------------ matmul */

/* The product of a matmul's layouts: m and n are D's (C's), k A's side
 * that op(A) does not keep. */
static void read_layouts(struct gemm *g, const struct desc *const l[MATS])
{
	const struct desc *out = l[MAT_D] ? l[MAT_D] : l[MAT_C];

	if (out) {
		g->m = out->rows;
		g->n = out->cols;
		g->batch = out->batch > 0 ? out->batch : 1;
	}
	if (l[MAT_A])
		g->k = g->trans_a ? l[MAT_A]->rows : l[MAT_A]->cols;
	else if (l[MAT_B])
		g->k = g->trans_b ? l[MAT_B]->cols : l[MAT_B]->rows;
	for (int i = 0; i < MATS; i++) {
		if (!l[i])
			continue;
		g->type[i] = l[i]->type;
		g->ld[i] = l[i]->ld ? l[i]->ld : l[i]->rows;
		g->stride[i] = l[i]->batch > 1 ? l[i]->stride : 0;
	}
	/* D given as C's layout again, in place: cuBLAS's form */
	if (l[MAT_D] && l[MAT_D] == l[MAT_C])
		g->ld[MAT_D] = g->ld[MAT_C] ? g->ld[MAT_C] : 1;
}

static void read_desc(struct gemm *g, const struct desc *d)
{
	g->compute = d->compute;
	g->scale = d->scale;
	g->trans_a = d->trans_a;
	g->trans_b = d->trans_b;
	g->epilogue = d->epilogue;
	g->bias_type = d->bias_type;
	g->aux_type = d->aux_type;
	g->scaled = d->a_scale || d->b_scale || d->d_scale;
	g->amax = d->amax;
}

/* The algorithm: the one passed, known by its bytes. */
static void read_algo(struct lt_model *m, struct gemm *g,
		      const struct dt_arg *args, int n)
{
	const struct algo *a = algo_arg(m, args, n, false);

	if (a) {
		memcpy(g->algo, a->attr, sizeof(g->algo));
		g->from_heuristic = a->heuristic;
		g->workspace_used = a->workspace;
	}
}

static void matmul(struct lt_model *m, const struct dt_rec_api_call *c,
		   const struct dt_api_def *api, const struct dt_arg *args,
		   int n)
{
	static const char *const descs[MATS] = { "Adesc", "Bdesc", "Cdesc",
						 "Ddesc" };
	static const char *const ptr_names[MATS] = { "A", "B", "C", "D" };
	const struct dt_arg *a = dt_arg_named(args, n, "computeDesc");
	const struct desc *d = a ? desc_find(m, a->u) : NULL;
	const struct desc *l[MATS];
	uint64_t ptrs[MATS] = { 0 };
	struct gemm g;

	gemm_init(&g, GEMM_GEMM);
	g.trans_b = 0;
	if (d)
		read_desc(&g, d);
	else /* the type the recorder was told, where it says (1.10 on) */
		g.scale = (int32_t)gemm_arg_i(args, n, "scaleType", -1);
	g.m = g.n = g.k = -1;
	for (int i = 0; i < MATS; i++) {
		a = dt_arg_named(args, n, descs[i]);
		l[i] = a ? desc_find(m, a->u) : NULL;
		a = dt_arg_named(args, n, ptr_names[i]);
		ptrs[i] = a && a->code == 'p' ? a->u : 0;
	}
	read_layouts(&g, l);
	g.has_alpha =
		gemm_scalar(dt_arg_named(args, n, "alpha"), g.scale, &g.alpha);
	g.has_beta =
		gemm_scalar(dt_arg_named(args, n, "beta"), g.scale, &g.beta);
	g.workspace = gemm_arg_i(args, n, "workspaceSizeInBytes", -1);
	read_algo(m, &g, args, n);
	if (c->flags & DT_CALL_NESTED) { /* no op: its outer call's note */
		if (!c->status &&
		    (m->nested_algo = algo_arg(m, args, n, true))) {
			m->nested = *c;
			note_nested(m);
		}
		return;
	}
	a = dt_arg_named(args, n, "stream");
	struct pending *p =
		gemm_op_new(m->d.core, m->d.problems, c, api->name, &g, ptrs,
			    a && a->code == 'p' ? a->u : 0);
	/* an algorithm not known yet: its attributes may follow */
	const struct algo *al = algo_arg(m, args, n, true);
	if (p && al && al->attr[DT_GEMM_ALGO_ID] == DT_GEMM_ALGO_UNKNOWN)
		m_op_wait(m->d.core, p, algo_key(al));
}

/* ------------------------------------------------------- the decoder */

/* Whether name is a typed variant of cuBLASLt's function "cublasLt" +
 * what: three letters of types between (cublasLtTSTMatmul). */
static bool typed(const char *name, const char *what)
{
	size_t n = strlen(name);

	return n == strlen("cublasLt") + 3 + strlen(what) &&
	       !strncmp(name, "cublasLt", 8) && !strcmp(name + 11, what);
}

static enum api_class classify(const char *name)
{
	static const struct {
		const char *name;
		enum api_class c;
	} exact[] = {
		{ "cublasLtMatmulDescCreate", L_DESC_CREATE },
		{ "cublasLtMatrixLayoutCreate", L_LAYOUT_CREATE },
		{ "cublasLtMatmulDescSetAttribute", L_DESC_SET },
		{ "cublasLtMatrixLayoutSetAttribute", L_LAYOUT_SET },
		{ "cublasLtMatmulDescDestroy", L_DESTROY },
		{ "cublasLtMatrixLayoutDestroy", L_DESTROY },
		{ "cublasLtMatmulAlgoInit", L_ALGO_INIT },
		{ "cublasLtMatmulAlgoConfigGetAttribute", L_ALGO_GET },
		{ "cublasLtMatmulAlgoConfigSetAttribute", L_ALGO_GET },
		{ "cublasLtMatmulAlgoGetHeuristic", L_HEURISTIC },
		{ "cublasLtMatmul", L_MATMUL },
	};

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i].name) ||
		    ((exact[i].c == L_MATMUL || exact[i].c == L_HEURISTIC) &&
		     typed(name, exact[i].name + 8)))
			return exact[i].c;
	return L_OTHER;
}

/* The handle a create call made (its first argument, an output). */
static struct desc *created(struct lt_model *m, const struct dt_arg *args,
			    int n)
{
	return n > 0 && args[0].code == 'p' ? desc_new(m, args[0].u) : NULL;
}

static void lt_call(void *state, const struct dt_rec_api_call *c,
		    const struct dt_api_def *api, struct dt_arg *args, int n)
{
	struct lt_model *m = state;
	uint8_t *cls_of = m->d.api;
	enum api_class cls;
	struct desc *d;
	struct algo *a;
	int64_t v;

	if (c->api > m->d.fi->n_apis)
		return;
	if (!cls_of[c->api])
		cls_of[c->api] = (uint8_t)classify(api->name);
	cls = (enum api_class)cls_of[c->api];
	if (cls == L_MATMUL) { /* an op, failed or not */
		matmul(m, c, api, args, n);
		return;
	}
	if (c->status)
		return;
	switch (cls) {
	case L_DESC_CREATE:
		if ((d = created(m, args, n))) {
			d->compute =
				(int32_t)gemm_arg_i(args, n, "computeType", -1);
			d->scale =
				(int32_t)gemm_arg_i(args, n, "scaleType", -1);
		}
		return;
	case L_LAYOUT_CREATE:
		if ((d = created(m, args, n))) {
			d->type = (int32_t)gemm_arg_i(args, n, "type", -1);
			d->rows = gemm_arg_i(args, n, "rows", 0);
			d->cols = gemm_arg_i(args, n, "cols", 0);
			d->ld = gemm_arg_i(args, n, "ld", 0);
		}
		return;
	case L_DESC_SET:
	case L_LAYOUT_SET:
		if (n > 0 && (d = desc_find(m, args[0].u)) &&
		    attr_value(dt_arg_named(args, n, "buf"), &v))
			(cls == L_DESC_SET ? desc_set : layout_set)(
				d, gemm_arg_i(args, n, "attr", -1), v);
		return;
	case L_DESTROY:
		if (n > 0)
			desc_remove(m, args[0].u);
		return;
	case L_ALGO_INIT:
		if ((a = algo_arg(m, args, n, true)))
			a->attr[DT_GEMM_ALGO_ID] =
				gemm_arg_i(args, n, "algoId", -1);
		return;
	case L_ALGO_GET:
		algo_attr(m, args, n);
		return;
	case L_HEURISTIC:
		heuristic(m, args, n);
		return;
	default:
		return;
	}
}

static void *lt_create(struct dt_model *core, const struct dt_file_info *fi)
{
	return gemm_decoder_new(sizeof(struct lt_model), 1, core, fi);
}

static void lt_destroy(void *state)
{
	struct lt_model *m = state;

	for (size_t i = 0; i < DESC_BUCKETS; i++)
		while (m->descs[i]) {
			struct desc *d = m->descs[i];
			m->descs[i] = d->next;
			free(d);
		}
	while (m->free_descs) {
		struct desc *d = m->free_descs;
		m->free_descs = d->next;
		free(d);
	}
	gemm_decoder_free(m);
}

/* The type of a call's scalars (alpha, beta): its descriptor's scale
 * type, which the recorder writes after the arguments (1.10 on); what dump
 * and the exports print them in. */
static int64_t lt_scalar_dtype(const char *api, const struct dt_arg *args,
			       int n, int i)
{
	(void)i;
	if (strncmp(api, "cublasLt", 8))
		return -1;
	return gemm_scale_dtype((int32_t)gemm_arg_i(args, n, "scaleType", -1));
}

const struct dt_decoder dt_decoder_cublaslt = {
	.library = "cublaslt",
	.create = lt_create,
	.destroy = lt_destroy,
	.call = lt_call,
	.scalar_dtype = lt_scalar_dtype,
};
