/*
 * replay-gemm.c - a recorded GEMM (a cuBLAS or cuBLASLt call) made again
 * through cuBLASLt and its algorithms timed: its matmul descriptor, four
 * matrix layouts and preference made from what the decoders kept (struct
 * dt_gemm_build), its matrices, bias and auxiliary buffer seeded
 * (replay-data.c); the algorithm the program ran timed first (initialized
 * by its ID, each recorded configuration attribute set on it), then those
 * cublasLtMatmulAlgoGetHeuristic offers, and with --engines all each
 * algorithm ID the library has for these types, over the tiles it lists
 * for it. A candidate's engine is its algorithm ID, its knobs its other
 * configuration attributes, written as ops show them (dt_gemm_knobs).
 * What it is not: a replay of cuBLAS itself (cuBLAS has had no choice of
 * algorithm since CUDA 11: its calls run through cuBLASLt's matmul, whose
 * algorithm the trace holds), nor of gemv, trsm or syrk.
 *
 * cuBLASLt is loaded with dlopen (replay-gpu.c); no CUDA header is
 * included: its structs and values are cublasLt.h's, written out here.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-internal.h"

/* cublasLtMatmulDescAttributes_t values set. */
enum {
	MD_TRANSA = 3,
	MD_TRANSB = 4,
	MD_EPILOGUE = 7,
	MD_BIAS_POINTER = 8,
	MD_AUX_POINTER = 11,
	MD_AUX_LD = 12,
	MD_AUX_BATCH_STRIDE = 13,
	MD_AUX_DATA_TYPE = 22,
	MD_BIAS_DATA_TYPE = 26,
};

/* cublasLtMatrixLayoutAttribute_t values set. */
enum { ML_BATCH_COUNT = 5, ML_STRIDED_BATCH_OFFSET = 6 };

/* CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES; CUBLASLT_ALGO_CAP_TILE_IDS */
#define PREF_MAX_WORKSPACE 1
#define CAP_TILE_IDS       6

/* cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t */
struct lt_algo {
	uint64_t data[8];
};
struct lt_heur {
	struct lt_algo algo;
	size_t workspace;
	int state;
	float waves;
	int reserved[4];
};

/* Heuristic results asked for; algorithm IDs listed, at most. */
#define HEURISTICS 32
#define IDS        128
/* Tiles of one algorithm ID tried with --engines all, at most. */
#define TILES 8

struct fns {
	int (*desc_create)(void **, int, int);
	int (*desc_set)(void *, int, const void *, size_t);
	int (*desc_destroy)(void *);
	int (*layout_create)(void **, int, uint64_t, uint64_t, int64_t);
	int (*layout_set)(void *, int, const void *, size_t);
	int (*layout_destroy)(void *);
	int (*pref_create)(void **);
	int (*pref_set)(void *, int, const void *, size_t);
	int (*pref_destroy)(void *);
	int (*heuristic)(void *, void *, void *, void *, void *, void *, void *,
			 int, struct lt_heur *, int *);
	int (*ids)(void *, int, int, int, int, int, int, int, int *, int *);
	int (*init)(void *, int, int, int, int, int, int, int,
		    struct lt_algo *);
	int (*check)(void *, void *, void *, void *, void *, void *,
		     const struct lt_algo *, struct lt_heur *);
	int (*config_set)(struct lt_algo *, int, const void *, size_t);
	int (*config_get)(const struct lt_algo *, int, void *, size_t,
			  size_t *);
	int (*cap_get)(const struct lt_algo *, int, void *, size_t, size_t *);
	int (*matmul)(void *, void *, const void *, const void *, void *,
		      const void *, void *, const void *, const void *, void *,
		      void *, void *, const struct lt_algo *, void *, size_t,
		      cu_ptr_t);
};

static bool load(struct gpu *g, struct fns *f)
{
#define LT(field, name) gpu_cublaslt_fn(g, &f->field, name)
	return LT(desc_create, "cublasLtMatmulDescCreate") &&
	       LT(desc_set, "cublasLtMatmulDescSetAttribute") &&
	       LT(desc_destroy, "cublasLtMatmulDescDestroy") &&
	       LT(layout_create, "cublasLtMatrixLayoutCreate") &&
	       LT(layout_set, "cublasLtMatrixLayoutSetAttribute") &&
	       LT(layout_destroy, "cublasLtMatrixLayoutDestroy") &&
	       LT(pref_create, "cublasLtMatmulPreferenceCreate") &&
	       LT(pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
	       LT(pref_destroy, "cublasLtMatmulPreferenceDestroy") &&
	       LT(heuristic, "cublasLtMatmulAlgoGetHeuristic") &&
	       LT(ids, "cublasLtMatmulAlgoGetIds") &&
	       LT(init, "cublasLtMatmulAlgoInit") &&
	       LT(check, "cublasLtMatmulAlgoCheck") &&
	       LT(config_set, "cublasLtMatmulAlgoConfigSetAttribute") &&
	       LT(config_get, "cublasLtMatmulAlgoConfigGetAttribute") &&
	       LT(cap_get, "cublasLtMatmulAlgoCapGetAttribute") &&
	       LT(matmul, "cublasLtMatmul");
#undef LT
}

/* ------------------------------------------------- what can be rebuilt */

bool gemm_library(const char *library)
{
	return library &&
	       (!strcmp(library, "cublas") || !strcmp(library, "cublaslt"));
}

/* Whether every size is one cuBLAS's int arguments can hold, so that
 * the memory's spans (a leading dimension times columns, a stride times
 * the batch) cannot overflow: the trace is untrusted. */
static bool sizes_fit(const struct dt_gemm_build *b)
{
	const int64_t big = INT32_MAX;

	if (b->m < 1 || b->n < 1 || b->k < 1 || b->batch < 1 || b->m > big ||
	    b->n > big || b->k > big || b->batch > big)
		return false;
	for (int i = 0; i < DT_GEMM_MATS; i++) {
		const struct dt_gemm_matrix *m = &b->mat[i];
		if (m->rows < 1 || m->cols < 1 || m->ld < m->rows ||
		    m->rows > big || m->cols > big || m->ld > big ||
		    m->stride > big)
			return false;
	}
	return true;
}

const char *gemm_why_not(const struct dt_gemm_build *b)
{
	if (!b)
		return "not a GEMM (a gemv, trsm or syrk): replay rebuilds "
		       "cuBLAS's and cuBLASLt's GEMMs";
	if (b->scaled || b->amax)
		return "an FP8 product with scale factors or an absolute "
		       "maximum: their device scalars are not in the trace";
	for (int i = 0; i < DT_GEMM_MATS; i++) {
		if (b->mat[i].stride < 0)
			return "a batch given as arrays of pointers: replay "
			       "rebuilds strided batches";
		if (dt_gemm_dtype(b->mat[i].type) < 0)
			return "a matrix of a type replay does not fill "
			       "(complex, or not in the trace)";
	}
	if (b->m < 0 || b->n < 0 || b->k < 0 || b->compute < 0 || b->scale < 0)
		return "the trace lacks the matmul's descriptor or a layout";
	if (!sizes_fit(b))
		return "a dimension, leading dimension, batch or stride "
		       "outside 1 to 2^31: replay does not size its memory";
	if (b->algo[DT_GEMM_ALGO_ID] < 0)
		return strcmp(b->library, "cublas")
			       ? "the algorithm the program ran is not in the "
				 "trace"
			       : "the algorithm cuBLAS ran through (its "
				 "cuBLASLt matmul) is not in the trace";
	return NULL;
}

/* ----------------------------------------------------- the GEMM remade */

/* The data's places. */
enum { BUF_A, BUF_B, BUF_C, BUF_D, BUF_BIAS, BUF_AUX };

struct remade {
	struct gpu *g;
	struct fns f;
	const struct dt_gemm_build *b;
	void *desc, *layout[DT_GEMM_MATS], *pref;
	struct data data;
	int place[BUF_AUX + 1]; /* each one's index in data, -1 none */
	uint8_t alpha[8], beta[8];
	struct lt_algo algo; /* the candidate's */
	uint64_t ws;
	size_t ws_bytes;
	int status;
};

static uint64_t dev(const struct remade *r, int which)
{
	return r->place[which] < 0 ? 0 : r->data.bufs[r->place[which]].dev;
}

static bool run_call(void *arg)
{
	struct remade *r = arg;
	int d = r->b->in_place ? BUF_C : BUF_D;
	int rc = r->f.matmul(
		r->g->cublaslt_handle, r->desc, r->alpha,
		(void *)(uintptr_t)dev(r, BUF_A), r->layout[DT_GEMM_A],
		(void *)(uintptr_t)dev(r, BUF_B), r->layout[DT_GEMM_B], r->beta,
		(void *)(uintptr_t)dev(r, BUF_C), r->layout[DT_GEMM_C],
		(void *)(uintptr_t)dev(r, d), r->layout[DT_GEMM_D], &r->algo,
		(void *)(uintptr_t)r->ws, r->ws_bytes, r->g->stream);

	if (rc)
		r->status = rc;
	return !rc;
}

/* A scalar's bytes in the scale type: the recorded value, or 1 where the
 * program's was in device memory. False for a scale type replay does not
 * write. */
static bool scalar(int32_t scale, bool has, double v, uint8_t out[8])
{
	float f = (float)(has ? v : 1);
	double d = has ? v : 1;
	int32_t i = (int32_t)d;

	switch (scale) {
	case 0: /* R_32F */
		memcpy(out, &f, 4);
		return true;
	case 1: /* R_64F */
		memcpy(out, &d, 8);
		return true;
	case 2: { /* R_16F */
		uint16_t h = data_half(f);
		memcpy(out, &h, 2);
		return true;
	}
	case 10: /* R_32I */
		memcpy(out, &i, 4);
		return true;
	default:
		return false;
	}
}

/* Elements a matrix spans, its batch included (sizes_fit holds). */
static size_t span_of(const struct dt_gemm_matrix *m, int64_t batch)
{
	size_t one = (size_t)(m->ld * (m->cols - 1) + m->rows);

	return m->stride > 0 ? one + (size_t)((batch - 1) * m->stride) : one;
}

static bool add(struct remade *r, int which, int64_t dtype, size_t span,
		char *why, size_t whylen)
{
	r->place[which] = (int)r->data.n;
	return data_add(&r->data, which, dtype, span, false, why, whylen);
}

static bool layouts(struct remade *r, char *why, size_t whylen)
{
	const struct dt_gemm_build *b = r->b;
	int32_t batch = (int32_t)b->batch;

	for (int i = 0; i < DT_GEMM_MATS; i++) {
		const struct dt_gemm_matrix *m = &b->mat[i];
		if (r->f.layout_create(&r->layout[i], m->type,
				       (uint64_t)m->rows, (uint64_t)m->cols,
				       m->ld) ||
		    (batch > 1 &&
		     (r->f.layout_set(r->layout[i], ML_BATCH_COUNT, &batch,
				      sizeof(batch)) ||
		      r->f.layout_set(r->layout[i], ML_STRIDED_BATCH_OFFSET,
				      &m->stride, sizeof(m->stride))))) {
			snprintf(why, whylen,
				 "cuBLASLt refused matrix %c's layout",
				 "ABCD"[i]);
			return false;
		}
		if (i == DT_GEMM_D && b->in_place)
			continue;
		if (!add(r, i, dt_gemm_dtype(m->type), span_of(m, b->batch),
			 why, whylen))
			return false;
	}
	return true;
}

/* Buffer which's device pointer set as the descriptor's attribute. */
static bool desc_ptr(struct remade *r, int attr, int which)
{
	uint64_t p = dev(r, which);

	return !r->f.desc_set(r->desc, attr, &p, sizeof(p));
}

/* The epilogue's buffers: a bias of D's rows (a gradient of A's: rows;
 * of B's: columns), an auxiliary matrix of D's shape (ReLU's as a bit
 * mask), its leading dimension rounded up to 128 as cuBLASLt wants. */
static bool epilogue(struct remade *r, char *why, size_t whylen)
{
	const struct dt_gemm_build *b = r->b;
	uint32_t e = b->epilogue;
	int32_t d_type = b->mat[DT_GEMM_D].type;
	int32_t bias = b->bias_type >= 0 ? b->bias_type : d_type;
	int32_t aux = b->aux_type >= 0 ? b->aux_type : d_type;
	bool relu = e & (DT_GEMM_EPI_RELU | DT_GEMM_EPI_DRELU);

	if (r->f.desc_set(r->desc, MD_EPILOGUE, &e, sizeof(e))) {
		snprintf(why, whylen, "cuBLASLt refused its epilogue (0x%x)",
			 e);
		return false;
	}
	if (e & (DT_GEMM_EPI_BIAS | DT_GEMM_EPI_BGRAD | DT_GEMM_EPI_BGRADA |
		 DT_GEMM_EPI_BGRADB)) {
		size_t n = (size_t)(e & DT_GEMM_EPI_BGRADB ? b->n : b->m);
		if (!add(r, BUF_BIAS, dt_gemm_dtype(bias), n, why, whylen) ||
		    !desc_ptr(r, MD_BIAS_POINTER, BUF_BIAS) ||
		    (b->bias_type >= 0 &&
		     r->f.desc_set(r->desc, MD_BIAS_DATA_TYPE, &bias,
				   sizeof(bias))))
			return false;
	}
	if (e & DT_GEMM_EPI_AUX) {
		int64_t ld = (b->m + 127) / 128 * 128, stride = ld * b->n, all;
		if (__builtin_mul_overflow(stride, b->batch, &all)) {
			snprintf(why, whylen,
				 "its auxiliary matrices' size overflows");
			return false;
		}
		size_t n = (size_t)all;
		if (!add(r, BUF_AUX, relu ? DT_DTYPE_UINT8 : dt_gemm_dtype(aux),
			 relu ? n / 8 : n, why, whylen) ||
		    !desc_ptr(r, MD_AUX_POINTER, BUF_AUX) ||
		    r->f.desc_set(r->desc, MD_AUX_LD, &ld, sizeof(ld)) ||
		    (b->aux_type >= 0 &&
		     r->f.desc_set(r->desc, MD_AUX_DATA_TYPE, &aux,
				   sizeof(aux))) ||
		    (b->batch > 1 && r->f.desc_set(r->desc, MD_AUX_BATCH_STRIDE,
						   &stride, sizeof(stride))))
			return false;
	}
	return true;
}

static bool remake(struct remade *r, char *why, size_t whylen)
{
	const struct dt_gemm_build *b = r->b;
	uint64_t max_ws = b->workspace > 0 ? (uint64_t)b->workspace : 0;

	memset(r->place, -1, sizeof(r->place));
	r->data.g = r->g;
	if (!load(r->g, &r->f)) {
		snprintf(why, whylen,
			 "this cuBLASLt lacks a function replay calls");
		return false;
	}
	if (!scalar(b->scale, b->has_alpha, b->alpha, r->alpha) ||
	    !scalar(b->scale, b->has_beta, b->beta, r->beta)) {
		snprintf(why, whylen,
			 "its scale type (%d) is not one replay writes",
			 (int)b->scale);
		return false;
	}
	if (r->f.desc_create(&r->desc, b->compute, b->scale) ||
	    r->f.desc_set(r->desc, MD_TRANSA, &b->trans_a,
			  sizeof(b->trans_a)) ||
	    r->f.desc_set(r->desc, MD_TRANSB, &b->trans_b,
			  sizeof(b->trans_b))) {
		snprintf(why, whylen,
			 "cuBLASLt refused its matmul descriptor (compute "
			 "type %d, scale type %d)",
			 (int)b->compute, (int)b->scale);
		return false;
	}
	if (!layouts(r, why, whylen))
		return false;
	if (!epilogue(r, why, whylen)) {
		/* data_add said why, where it was the one that failed */
		if (!why[0])
			snprintf(why, whylen,
				 "cuBLASLt refused its epilogue's buffers");
		return false;
	}
	if (r->f.pref_create(&r->pref) ||
	    r->f.pref_set(r->pref, PREF_MAX_WORKSPACE, &max_ws,
			  sizeof(max_ws))) {
		snprintf(why, whylen, "cuBLASLt refused its preference");
		return false;
	}
	return true;
}

static void free_remade(struct remade *r)
{
	for (int i = 0; i < DT_GEMM_MATS; i++)
		if (r->layout[i])
			r->f.layout_destroy(r->layout[i]);
	if (r->desc)
		r->f.desc_destroy(r->desc);
	if (r->pref)
		r->f.pref_destroy(r->pref);
	data_free(&r->data);
}

/* ------------------------------------------------------- the algorithms */

/* A configuration attribute's width: INNER_SHAPE_ID and CLUSTER_SHAPE_ID
 * are uint16_t, the others 32 bits. */
static size_t attr_bytes(int i)
{
	return i >= DT_GEMM_ALGO_INNER_SHAPE ? 2 : 4;
}

/* An algorithm's attributes read back into v (unknown where cuBLASLt
 * does not say). */
static void config_of(const struct remade *r, const struct lt_algo *a,
		      int64_t v[DT_GEMM_ALGO_ATTRS])
{
	for (int i = 0; i < DT_GEMM_ALGO_ATTRS; i++) {
		uint32_t x = 0; /* little-endian: a uint16_t in its low half */
		size_t n = 0;
		if (r->f.config_get(a, i, &x, attr_bytes(i), &n))
			v[i] = DT_GEMM_ALGO_UNKNOWN;
		else
			v[i] = attr_bytes(i) == 2 ? (uint16_t)x : (int32_t)x;
	}
}

/* Algorithm id initialized for the problem's types, with the attributes
 * of v that are known set on it (v NULL: its defaults). cuBLASLt's
 * status, 0 when it took them all. */
static int algo_make(struct remade *r, int id, const int64_t *v,
		     struct lt_algo *a)
{
	const struct dt_gemm_build *b = r->b;
	int rc = r->f.init(r->g->cublaslt_handle, b->compute, b->scale,
			   b->mat[0].type, b->mat[1].type, b->mat[2].type,
			   b->mat[3].type, id, a);

	for (int i = DT_GEMM_ALGO_ID + 1; v && !rc && i < DT_GEMM_ALGO_ATTRS;
	     i++) {
		uint32_t x = (uint32_t)v[i]; /* as config_of reads it */
		if (v[i] != DT_GEMM_ALGO_UNKNOWN)
			rc = r->f.config_set(a, i, &x, attr_bytes(i));
	}
	return rc;
}

/* One candidate before it is timed. */
struct pick {
	struct lt_algo algo;
	int64_t workspace; /* as cuBLASLt says it needs, -1 unknown */
	int status;        /* cuBLASLt's refusal, 0 none */
};

struct picks {
	struct remade *r;
	struct cand *c;
	struct pick *pk;
	size_t *n;
	struct budget *bud;
};

/* Candidate a, from source, added unless one of the same ID and
 * configuration is there; its workspace from cublasLtMatmulAlgoCheck
 * (a refusal there is its status). */
static void pick(struct picks *s, const struct lt_algo *a, int status,
		 const char *source)
{
	struct remade *r = s->r;
	int64_t v[DT_GEMM_ALGO_ATTRS];
	struct cand *c = &s->c[*s->n];
	struct lt_heur h = { 0 };

	if (*s->n == CANDS_MAX) {
		s->bud->full = true;
		return;
	}
	config_of(r, a, v);
	memset(c, 0, sizeof(*c));
	c->engine = v[DT_GEMM_ALGO_ID];
	c->source = source;
	dt_gemm_knobs(v, c->knobs, sizeof(c->knobs));
	for (size_t k = 0; k < *s->n; k++)
		if (s->c[k].engine == c->engine &&
		    !strcmp(s->c[k].knobs, c->knobs))
			return;
	struct pick *p = &s->pk[(*s->n)++];
	p->algo = *a;
	p->status = status ? status
			   : r->f.check(r->g->cublaslt_handle, r->desc,
					r->layout[0], r->layout[1],
					r->layout[2], r->layout[3], a, &h);
	p->workspace = p->status ? -1 : (int64_t)h.workspace;
}

/* The recorded algorithm: its ID and every recorded attribute. Its
 * knobs are written as the trace holds them, whatever cuBLASLt made of
 * them. */
static void pick_recorded(struct picks *s, const struct problem *p)
{
	struct lt_algo a = { 0 };
	int rc = algo_make(s->r, (int)p->engine, s->r->b->algo, &a);
	size_t at = *s->n;

	pick(s, &a, rc, "recorded");
	s->c[at].engine = p->engine;
	dt_gemm_knobs(s->r->b->algo, s->c[at].knobs, sizeof(s->c[at].knobs));
}

static void pick_heuristics(struct picks *s)
{
	struct remade *r = s->r;
	struct lt_heur h[HEURISTICS];
	int got = 0;

	if (!budget_allows(s->bud, 0)) {
		s->bud->modes_left = 1;
		return;
	}
	if (r->f.heuristic(r->g->cublaslt_handle, r->desc, r->layout[0],
			   r->layout[1], r->layout[2], r->layout[3], r->pref,
			   HEURISTICS, h, &got))
		got = 0;
	for (int i = 0; i < got && i < HEURISTICS; i++)
		if (!h[i].state)
			pick(s, &h[i].algo, 0, "heuristic");
}

/* With --engines all: every algorithm ID cuBLASLt has for the problem's
 * types, each over up to TILES of the tiles it lists (spread over them),
 * its other attributes at their defaults; its defaults alone where it
 * lists none. */
static void pick_all(struct picks *s)
{
	struct remade *r = s->r;
	const struct dt_gemm_build *b = r->b;
	int ids[IDS], got = 0;

	if (r->f.ids(r->g->cublaslt_handle, b->compute, b->scale,
		     b->mat[0].type, b->mat[1].type, b->mat[2].type,
		     b->mat[3].type, IDS, ids, &got))
		got = 0;
	for (int i = 0; i < got && i < IDS; i++) {
		struct lt_algo a = { 0 };
		uint32_t tiles[64];
		size_t bytes = 0;
		if (!budget_allows(s->bud, 0)) {
			s->bud->engines_left = (uint32_t)(got - i);
			return;
		}
		int rc = algo_make(r, ids[i], NULL, &a);
		if (rc || r->f.cap_get(&a, CAP_TILE_IDS, tiles, sizeof(tiles),
				       &bytes))
			bytes = 0;
		size_t nt = bytes / sizeof(tiles[0]);
		if (!nt) {
			pick(s, &a, rc, "all");
			continue;
		}
		for (size_t t = 0; t < (nt < TILES ? nt : TILES); t++) {
			struct lt_algo at = a;
			uint32_t tile =
				tiles[nt <= TILES ? t
						  : t * (nt - 1) / (TILES - 1)];
			pick(s, &at,
			     r->f.config_set(&at, DT_GEMM_ALGO_TILE, &tile,
					     sizeof(tile)),
			     "all");
		}
	}
}

/* Time candidate c (its pick p), one of left still to time within bud. */
static void measure(struct remade *r, const struct pick *p, struct cand *c,
		    const struct dt_replay_opts *opts, struct budget *bud,
		    size_t left, const uint8_t *ref, uint8_t **take)
{
	char err[160];

	c->error = -1;
	c->agrees = -1;
	c->workspace = p->workspace;
	if (p->status) {
		snprintf(c->status, sizeof(c->status), "refused: %s",
			 gpu_cublaslt_error(r->g, p->status, err, sizeof(err)));
		return;
	}
	if (!budget_allows(bud, 0)) {
		budget_skip(c);
		return;
	}
	r->algo = p->algo;
	r->status = 0;
	r->ws_bytes = (size_t)p->workspace;
	if (!data_scratch(r->g, &r->ws, r->ws_bytes, "workspace", c->status,
			  sizeof(c->status)))
		return;
	data_time(&r->data, run_call, r, &r->status, opts,
		  budget_share(bud->until, left), c, ref, take);
	gpu_free(r->g, r->ws, r->ws_bytes);
	r->ws = 0;
}

int gemm_measure(struct gpu *g, const struct problem *p,
		 const struct dt_replay_opts *opts, struct budget *b,
		 struct cand *c, size_t *n, char *why, size_t whylen)
{
	struct remade r = { .g = g, .b = p->gemm };
	struct pick *pk = calloc(CANDS_MAX, sizeof(*pk));
	struct picks s = { &r, c, pk, n, b };
	uint8_t *ref = NULL;

	*n = 0;
	why[0] = 0;
	r.data.errors = gpu_cublaslt_error;
	if (!pk || !remake(&r, why, whylen)) {
		if (!pk)
			snprintf(why, whylen, "out of host memory");
		free(pk);
		free_remade(&r);
		return -1;
	}
	/* the recorded algorithm timed first, in half the problem's share
	 * at most, as a legacy call's: what the trace is held against */
	pick_recorded(&s, p);
	double t = dt_replay_now_s();
	measure(&r, &pk[0], &c[0], opts, b, 2, NULL, &ref);
	budget_recorded(b, &c[0]);
	progress_cand(opts, 1, 0, &c[0], true, dt_replay_now_s() - t);
	pick_heuristics(&s);
	if (opts->all_engines)
		pick_all(&s);
	for (size_t i = 1; i < *n; i++) {
		t = dt_replay_now_s();
		/* the first that ran is the others' reference, as
		 * replay-graph.c's */
		measure(&r, &pk[i], &c[i], opts, b, *n - i, ref,
			ref ? NULL : &ref);
		progress_cand(opts, i + 1, *n, &c[i], true,
			      dt_replay_now_s() - t);
	}
	free(ref);
	free(pk);
	free_remade(&r);
	return 0;
}
