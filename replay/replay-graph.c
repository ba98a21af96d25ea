/*
 * replay-graph.c - a recorded backend operation graph built again on the
 * GPU and its engines timed: every descriptor the trace kept (struct
 * dt_cudnn_graph) created, set and finalized in the program's order with
 * this process's handle; its tensors given device memory of their
 * recorded shapes, strides and types, filled with seeded random data; the
 * recorded engine and knobs made into a plan, then the configs cuDNN's
 * heuristics offer (modes A, B and fallback) and, when asked, every
 * engine the graph supports; each timed (replay-gpu.c) and its outputs
 * compared with the recorded engine's. Not here: legacy API calls (not
 * rebuilt yet), fusion what-ifs.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-internal.h"

/* cuDNN's enumerators, looked up by name once. */
static struct {
	bool done;
	int64_t t_handle, t_desc, t_int64, t_heur, t_knob, t_void_ptr;
	int64_t bt_tensor, bt_engine, bt_cfg, bt_heur, bt_plan, bt_varpack,
		bt_knob;
	int64_t a_t_dtype, a_t_dims, a_t_strides, a_t_uid, a_t_virtual,
		a_t_by_value;
	int64_t a_eng_graph, a_eng_index, a_cfg_engine, a_cfg_knobs,
		a_knob_type, a_knob_value, a_heur_graph, a_heur_mode,
		a_heur_results, a_plan_handle, a_plan_cfg, a_plan_ws, a_vp_uids,
		a_vp_ptrs, a_vp_ws, a_graph_count;
	int64_t heur_a, heur_b, heur_fallback;
} E;

static int64_t ev(const char *type, const char *name)
{
	return dt_enum_value(type, name, -1);
}

static void enums(void)
{
	const char *A = "cudnnBackendAttributeName_t";
	const char *T = "cudnnBackendAttributeType_t";
	const char *D = "cudnnBackendDescriptorType_t";

	if (E.done)
		return;
	E.t_handle = ev(T, "CUDNN_TYPE_HANDLE");
	E.t_desc = ev(T, "CUDNN_TYPE_BACKEND_DESCRIPTOR");
	E.t_int64 = ev(T, "CUDNN_TYPE_INT64");
	E.t_heur = ev(T, "CUDNN_TYPE_HEUR_MODE");
	E.t_knob = ev(T, "CUDNN_TYPE_KNOB_TYPE");
	E.t_void_ptr = ev(T, "CUDNN_TYPE_VOID_PTR");
	E.bt_tensor = ev(D, "CUDNN_BACKEND_TENSOR_DESCRIPTOR");
	E.bt_engine = ev(D, "CUDNN_BACKEND_ENGINE_DESCRIPTOR");
	E.bt_cfg = ev(D, "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR");
	E.bt_heur = ev(D, "CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR");
	E.bt_plan = ev(D, "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR");
	E.bt_varpack = ev(D, "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR");
	E.bt_knob = ev(D, "CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR");
	E.a_t_dtype = ev(A, "CUDNN_ATTR_TENSOR_DATA_TYPE");
	E.a_t_dims = ev(A, "CUDNN_ATTR_TENSOR_DIMENSIONS");
	E.a_t_strides = ev(A, "CUDNN_ATTR_TENSOR_STRIDES");
	E.a_t_uid = ev(A, "CUDNN_ATTR_TENSOR_UNIQUE_ID");
	E.a_t_virtual = ev(A, "CUDNN_ATTR_TENSOR_IS_VIRTUAL");
	E.a_t_by_value = ev(A, "CUDNN_ATTR_TENSOR_IS_BY_VALUE");
	E.a_eng_graph = ev(A, "CUDNN_ATTR_ENGINE_OPERATION_GRAPH");
	E.a_eng_index = ev(A, "CUDNN_ATTR_ENGINE_GLOBAL_INDEX");
	E.a_cfg_engine = ev(A, "CUDNN_ATTR_ENGINECFG_ENGINE");
	E.a_cfg_knobs = ev(A, "CUDNN_ATTR_ENGINECFG_KNOB_CHOICES");
	E.a_knob_type = ev(A, "CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE");
	E.a_knob_value = ev(A, "CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE");
	E.a_heur_graph = ev(A, "CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH");
	E.a_heur_mode = ev(A, "CUDNN_ATTR_ENGINEHEUR_MODE");
	E.a_heur_results = ev(A, "CUDNN_ATTR_ENGINEHEUR_RESULTS");
	E.a_plan_handle = ev(A, "CUDNN_ATTR_EXECUTION_PLAN_HANDLE");
	E.a_plan_cfg = ev(A, "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG");
	E.a_plan_ws = ev(A, "CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE");
	E.a_vp_uids = ev(A, "CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS");
	E.a_vp_ptrs = ev(A, "CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS");
	E.a_vp_ws = ev(A, "CUDNN_ATTR_VARIANT_PACK_WORKSPACE");
	E.a_graph_count =
		ev(A, "CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT");
	E.heur_a = ev("cudnnBackendHeurMode_t", "CUDNN_HEUR_MODE_A");
	E.heur_b = ev("cudnnBackendHeurMode_t", "CUDNN_HEUR_MODE_B");
	E.heur_fallback =
		ev("cudnnBackendHeurMode_t", "CUDNN_HEUR_MODE_FALLBACK");
	E.done = true;
}

/* ------------------------------------------------------------ tensors */

/* A non-virtual tensor of the graph: its memory and what it holds. */
struct buf {
	int64_t uid;
	int64_t dtype; /* enum dt_dtype */
	size_t bytes;
	uint64_t dev; /* device memory; 0 for a by-value scalar */
	void *host;   /* the seeded data (a by-value scalar's value) */
	bool by_value;
};

#define BUFS_MAX 64

/* The graph as built, and what its runs need. */
struct built {
	struct gpu *g;
	const struct dt_cudnn_graph *bp;
	void *descs[256];
	void *graph;
	struct buf bufs[BUFS_MAX];
	size_t n_bufs;
	void *plan, *varpack;
	uint64_t ws;
	size_t ws_bytes;
	int status;                     /* of the last execution that failed */
	void *made[4 * CANDS_MAX + 64]; /* engines, knob choices and configs
					   made for candidates */
	size_t n_made;
};

/* A descriptor made for a candidate, destroyed with the graph. */
static void *made(struct built *b, void *d)
{
	if (d && b->n_made < sizeof(b->made) / sizeof(b->made[0]))
		b->made[b->n_made++] = d;
	return d;
}

static int64_t attr_i64(const struct dt_cudnn_graph *bp, uint32_t d,
			int64_t name, int64_t def)
{
	const struct dt_cudnn_attr *a = dt_cudnn_attr_find(bp, d, name);
	int64_t v = 0;

	if (!a || !a->bytes || a->bytes > 8)
		return def;
	memcpy(&v, a->data, a->bytes);
	return a->bytes == 4 ? (int32_t)v : a->bytes == 1 ? (int8_t)v : v;
}

/* Elements a tensor's strides reach, one past the last. */
static size_t tensor_span(const struct dt_cudnn_graph *bp, uint32_t d)
{
	const struct dt_cudnn_attr *dims =
		dt_cudnn_attr_find(bp, d, E.a_t_dims);
	const struct dt_cudnn_attr *str =
		dt_cudnn_attr_find(bp, d, E.a_t_strides);
	size_t span = 1;

	if (!dims || !str || dims->bytes != str->bytes)
		return 0;
	for (uint32_t i = 0; i < dims->bytes / 8; i++) {
		int64_t n, s;
		memcpy(&n, dims->data + i * 8, 8);
		memcpy(&s, str->data + i * 8, 8);
		if (n <= 0 || s < 0)
			return 0;
		span += (size_t)(n - 1) * (size_t)s;
	}
	return span;
}

/* The cuDNN data type (cudnnDataType_t) as the analyzer's. */
static int64_t tensor_dtype(const struct dt_cudnn_graph *bp, uint32_t d)
{
	char name[DT_DTYPE_NAME_SIZE];
	int64_t v = attr_i64(bp, d, E.a_t_dtype, -1);
	const char *n = dt_enum_name("cudnnDataType_t", 15, v);

	(void)name;
	return n ? dt_dtype_by_name(n, strlen(n)) : -1;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint16_t to_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
	uint32_t m = x & 0x7fffff;
	if (e <= 0)
		return (uint16_t)sign; /* small values: zero */
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	return (uint16_t)(sign | (uint32_t)e << 10 | m >> 13);
}

static float from_half(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f,
		 m = h & 0x3ff, x;
	float f;
	if (!e) { /* zero or subnormal */
		f = ldexpf((float)m, -24);
		return sign ? -f : f;
	}
	x = sign | (e == 31 ? 0xff : e - 15 + 127) << 23 | m << 13;
	memcpy(&f, &x, 4);
	return f;
}

static uint16_t u16_at(const uint8_t *b, size_t i)
{
	uint16_t h;

	memcpy(&h, b + 2 * i, 2);
	return h;
}

/* Element i of a buffer of type dtype, as a double; NAN for a type not
 * compared. */
static double elem(const void *p, int64_t dtype, size_t i)
{
	const uint8_t *b = p;
	float f;
	uint32_t x;

	switch (dtype) {
	case DT_DTYPE_FLOAT:
		memcpy(&f, b + 4 * i, 4);
		return f;
	case DT_DTYPE_DOUBLE: {
		double d;
		memcpy(&d, b + 8 * i, 8);
		return d;
	}
	case DT_DTYPE_HALF:
		return from_half(u16_at(b, i));
	case DT_DTYPE_BFLOAT16:
		x = (uint32_t)u16_at(b, i) << 16;
		memcpy(&f, &x, 4);
		return f;
	case DT_DTYPE_INT8:
		return (int8_t)b[i];
	case DT_DTYPE_UINT8:
	case DT_DTYPE_BOOLEAN:
		return b[i];
	case DT_DTYPE_INT32: {
		int32_t v;
		memcpy(&v, b + 4 * i, 4);
		return v;
	}
	case DT_DTYPE_INT64: {
		int64_t v;
		memcpy(&v, b + 8 * i, 8);
		return (double)v;
	}
	default:
		return NAN;
	}
}

/* Seeded data of a sensible range for its type: [-1, 1) for floating
 * point, small integers (that may be lengths or indices) otherwise. */
static void fill(void *p, int64_t dtype, size_t bytes, uint64_t seed)
{
	uint8_t *b = p;
	int bits = dt_dtype_bits(dtype);
	size_t n = bits >= 8 ? bytes / (size_t)(bits / 8) : bytes;
	uint64_t s = seed | 1;

	for (size_t i = 0; i < n; i++) {
		uint64_t r = rng_next(&s);
		float f = (float)((double)(r >> 11) * 0x1p-53 * 2 - 1);
		switch (dtype) {
		case DT_DTYPE_FLOAT:
			memcpy(b + 4 * i, &f, 4);
			break;
		case DT_DTYPE_DOUBLE: {
			double d = f;
			memcpy(b + 8 * i, &d, 8);
			break;
		}
		case DT_DTYPE_HALF: {
			uint16_t h = to_half(f);
			memcpy(b + 2 * i, &h, 2);
			break;
		}
		case DT_DTYPE_BFLOAT16: {
			uint32_t x;
			memcpy(&x, &f, 4);
			uint16_t h = (uint16_t)(x >> 16);
			memcpy(b + 2 * i, &h, 2);
			break;
		}
		case DT_DTYPE_INT32: {
			int32_t v = (int32_t)(r % 8) + 1;
			memcpy(b + 4 * i, &v, 4);
			break;
		}
		case DT_DTYPE_INT64: {
			int64_t v = (int64_t)(r % 8) + 1;
			memcpy(b + 8 * i, &v, 8);
			break;
		}
		case DT_DTYPE_BOOLEAN:
			b[i] = r & 1;
			break;
		default: /* int8 and the 8-bit floats: small values */
			b[i] = (uint8_t)((r % 16) - 8);
			break;
		}
	}
}

/* A by-value scalar (a scale the program passed by value): the trace
 * keeps where it was, not its value, so it is 1 of its type. */
static void one(void *p, int64_t dtype)
{
	float f = 1;
	double d = 1;
	uint16_t h = dtype == DT_DTYPE_HALF ? 0x3c00 : 0x3f80;

	if (dtype == DT_DTYPE_DOUBLE)
		memcpy(p, &d, 8);
	else if (dtype == DT_DTYPE_HALF || dtype == DT_DTYPE_BFLOAT16)
		memcpy(p, &h, 2);
	else
		memcpy(p, &f, 4);
}

/* Memory and data for every non-virtual tensor of the graph. */
static bool tensors(struct built *b, char *why, size_t whylen)
{
	const struct dt_cudnn_graph *bp = b->bp;

	for (uint32_t d = 0; d < bp->n_descs; d++) {
		if (bp->descs[d].type != E.bt_tensor ||
		    attr_i64(bp, d, E.a_t_virtual, 0))
			continue;
		if (b->n_bufs == BUFS_MAX) {
			snprintf(why, whylen, "more than %d tensors", BUFS_MAX);
			return false;
		}
		struct buf *t = &b->bufs[b->n_bufs++];
		t->uid = attr_i64(bp, d, E.a_t_uid, -1);
		t->dtype = tensor_dtype(bp, d);
		t->by_value = attr_i64(bp, d, E.a_t_by_value, 0) != 0;
		int bits = dt_dtype_bits(t->dtype);
		size_t span = tensor_span(bp, d);
		if (!bits || !span) {
			snprintf(why, whylen,
				 "tensor #%lld: its type or shape is not in "
				 "the trace",
				 (long long)t->uid);
			return false;
		}
		t->bytes = (span * (size_t)bits + 7) / 8;
		t->host = calloc(1, t->bytes < 16 ? 16 : t->bytes);
		if (!t->host) {
			snprintf(why, whylen, "out of host memory");
			return false;
		}
		if (t->by_value) {
			one(t->host, t->dtype);
			continue;
		}
		fill(t->host, t->dtype, t->bytes,
		     0x9e3779b97f4a7c15ull ^ (uint64_t)t->uid);
		t->dev = gpu_alloc(b->g, t->bytes);
		if (!t->dev) {
			snprintf(why, whylen,
				 "tensor #%lld needs %zu bytes of GPU memory, "
				 "more than replay may take",
				 (long long)t->uid, t->bytes);
			return false;
		}
	}
	return true;
}

/* The seeded data again in every tensor (outputs the runs before wrote
 * included), so that a candidate's outputs compare with another's. */
static bool refill(struct built *b)
{
	for (size_t i = 0; i < b->n_bufs; i++)
		if (b->bufs[i].dev &&
		    b->g->cuMemcpyHtoD(b->bufs[i].dev, b->bufs[i].host,
				       b->bufs[i].bytes))
			return false;
	return true;
}

/* ------------------------------------------------------------- graph */

static bool set_attr(struct gpu *g, void *d, int64_t name, int64_t type,
		     int64_t count, const void *v)
{
	return !g->cudnnBackendSetAttribute(d, name, type, count, v);
}

/* The graph's descriptors made again, in order, each finalized. */
static bool build_graph(struct built *b, char *why, size_t whylen)
{
	const struct dt_cudnn_graph *bp = b->bp;
	struct gpu *g = b->g;
	char err[256];

	if (bp->n_descs > sizeof(b->descs) / sizeof(b->descs[0])) {
		snprintf(why, whylen, "its graph has %u descriptors",
			 bp->n_descs);
		return false;
	}
	for (uint32_t i = 0; i < bp->n_descs; i++) {
		const struct dt_cudnn_desc *d = &bp->descs[i];
		int rc = g->cudnnBackendCreateDescriptor(d->type, &b->descs[i]);
		for (uint32_t k = 0; !rc && k < d->n_attrs; k++) {
			const struct dt_cudnn_attr *a = &d->attrs[k];
			uint32_t es = dt_backend_type_size(a->type);
			if (a->type == E.t_handle) {
				set_attr(g, b->descs[i], a->name, a->type, 1,
					 &g->handle);
			} else if (a->type == E.t_desc) {
				void *refs[64];
				uint32_t n =
					a->bytes / 8 < 64 ? a->bytes / 8 : 64;
				for (uint32_t e = 0; e < n; e++) {
					int64_t x;
					memcpy(&x, a->data + e * 8, 8);
					refs[e] = x >= 0 && x < i ? b->descs[x]
								  : NULL;
				}
				set_attr(g, b->descs[i], a->name, a->type, n,
					 refs);
			} else if (es) {
				/* a value the program read back, set again,
				 * is refused: what finalize says counts */
				set_attr(g, b->descs[i], a->name, a->type,
					 a->bytes / es, a->data);
			}
		}
		if (!rc)
			rc = g->cudnnBackendFinalize(b->descs[i]);
		if (rc) {
			char tn[96];
			snprintf(why, whylen, "%s cannot be built again: %s",
				 dt_enum_short("cudnnBackendDescriptorType_t",
					       d->type, "CUDNN_BACKEND_", tn,
					       sizeof(tn)),
				 gpu_cudnn_error(g, rc, err, sizeof(err)));
			return false;
		}
	}
	b->graph = b->descs[bp->root];
	return true;
}

/* ------------------------------------------------------------ engines */

/* The knob choices of an engine config in words: "TILE_SIZE=4 ...". */
static void cfg_knobs(struct gpu *g, void *cfg, char *out, size_t size)
{
	void *k[32];
	int64_t n = 0;
	size_t len = 0;

	out[0] = 0;
	for (int i = 0; i < 32; i++)
		if (g->cudnnBackendCreateDescriptor(E.bt_knob, &k[i]))
			return;
	if (!g->cudnnBackendGetAttribute(cfg, E.a_cfg_knobs, E.t_desc, 32, &n,
					 k))
		for (int64_t i = 0; i < n && i < 32 && len < size; i++) {
			int64_t type = -1, value = -1, c;
			char tn[96];
			g->cudnnBackendGetAttribute(k[i], E.a_knob_type,
						    E.t_knob, 1, &c, &type);
			g->cudnnBackendGetAttribute(k[i], E.a_knob_value,
						    E.t_int64, 1, &c, &value);
			/* knob types are 4 bytes: the rest stays 0 */
			type = (int32_t)type;
			len += (size_t)snprintf(
				out + len, size - len, "%s%s=%lld",
				len ? " " : "",
				dt_enum_short("cudnnBackendKnobType_t", type,
					      "CUDNN_KNOB_TYPE_", tn,
					      sizeof(tn)),
				(long long)value);
		}
	for (int i = 0; i < 32; i++)
		g->cudnnBackendDestroyDescriptor(k[i]);
}

static int64_t cfg_engine(struct gpu *g, void *cfg)
{
	void *e;
	int64_t n = 0, idx = -1;

	if (g->cudnnBackendCreateDescriptor(E.bt_engine, &e))
		return -1;
	if (!g->cudnnBackendGetAttribute(cfg, E.a_cfg_engine, E.t_desc, 1, &n,
					 &e))
		g->cudnnBackendGetAttribute(e, E.a_eng_index, E.t_int64, 1, &n,
					    &idx);
	g->cudnnBackendDestroyDescriptor(e);
	return idx;
}

/* An engine config of engine idx with knobs (NULL: its defaults). */
static void *make_cfg(struct built *b, int64_t idx,
		      const struct dt_recipe_kv *knobs, uint32_t n_knobs)
{
	struct gpu *g = b->g;
	void *e = NULL, *cfg = NULL, *k[32];
	uint32_t nk = 0;
	char name[128];

	if (g->cudnnBackendCreateDescriptor(E.bt_engine, &e) || !made(b, e) ||
	    !set_attr(g, e, E.a_eng_graph, E.t_desc, 1, &b->graph) ||
	    !set_attr(g, e, E.a_eng_index, E.t_int64, 1, &idx) ||
	    g->cudnnBackendFinalize(e))
		return NULL;
	for (uint32_t i = 0; i < n_knobs && nk < 32; i++) {
		snprintf(name, sizeof(name), "CUDNN_KNOB_TYPE_%s",
			 knobs[i].name);
		int32_t type = (int32_t)dt_enum_value("cudnnBackendKnobType_t",
						      name, -1);
		if (type < 0 ||
		    g->cudnnBackendCreateDescriptor(E.bt_knob, &k[nk]))
			continue;
		made(b, k[nk]);
		if (set_attr(g, k[nk], E.a_knob_type, E.t_knob, 1, &type) &&
		    set_attr(g, k[nk], E.a_knob_value, E.t_int64, 1,
			     &knobs[i].value) &&
		    !g->cudnnBackendFinalize(k[nk]))
			nk++;
	}
	if (g->cudnnBackendCreateDescriptor(E.bt_cfg, &cfg) || !made(b, cfg) ||
	    !set_attr(g, cfg, E.a_cfg_engine, E.t_desc, 1, &e) ||
	    (nk && !set_attr(g, cfg, E.a_cfg_knobs, E.t_desc, nk, k)) ||
	    g->cudnnBackendFinalize(cfg))
		cfg = NULL;
	return cfg;
}

/* The configs a heuristic mode offers, into cfgs (*n grows). */
static void heuristic(struct built *b, int64_t mode, void **cfgs, size_t *n,
		      size_t max)
{
	struct gpu *g = b->g;
	void *h;
	int64_t count = 0;
	int32_t m = (int32_t)mode;

	if (g->cudnnBackendCreateDescriptor(E.bt_heur, &h))
		return;
	made(b, h);
	if (set_attr(g, h, E.a_heur_graph, E.t_desc, 1, &b->graph) &&
	    set_attr(g, h, E.a_heur_mode, E.t_heur, 1, &m) &&
	    !g->cudnnBackendFinalize(h) &&
	    !g->cudnnBackendGetAttribute(h, E.a_heur_results, E.t_desc, 0,
					 &count, NULL)) {
		void *v[CANDS_MAX];
		int64_t want = count < CANDS_MAX ? count : CANDS_MAX, got = 0;
		for (int64_t i = 0; i < want; i++)
			if (g->cudnnBackendCreateDescriptor(E.bt_cfg, &v[i]))
				want = i;
			else
				made(b, v[i]);
		if (!g->cudnnBackendGetAttribute(h, E.a_heur_results, E.t_desc,
						 want, &got, v))
			for (int64_t i = 0; i < got && *n < max; i++)
				cfgs[(*n)++] = v[i];
	}
}

/* ---------------------------------------------------------- candidates */

static bool run_plan(void *arg)
{
	struct built *b = arg;
	int rc = b->g->cudnnBackendExecute(b->g->handle, b->plan, b->varpack);

	if (rc)
		b->status = rc;
	return !rc;
}

/* The plan of cfg and its variant pack, workspace allocated. */
static bool make_plan(struct built *b, void *cfg, struct cand *c)
{
	struct gpu *g = b->g;
	int64_t ws = 0, n = 0;
	char err[200];
	int rc;

	b->plan = NULL;
	if ((rc = g->cudnnBackendCreateDescriptor(E.bt_plan, &b->plan)) ||
	    (rc = g->cudnnBackendSetAttribute(b->plan, E.a_plan_handle,
					      E.t_handle, 1, &g->handle)) ||
	    (rc = g->cudnnBackendSetAttribute(b->plan, E.a_plan_cfg, E.t_desc,
					      1, &cfg)) ||
	    (rc = g->cudnnBackendFinalize(b->plan))) {
		snprintf(c->status, sizeof(c->status), "no plan: %s",
			 gpu_cudnn_error(g, rc, err, sizeof(err)));
		return false;
	}
	g->cudnnBackendGetAttribute(b->plan, E.a_plan_ws, E.t_int64, 1, &n,
				    &ws);
	c->workspace = ws;
	b->ws_bytes = (size_t)ws;
	b->ws = ws ? gpu_alloc(g, (size_t)ws) : 0;
	if (ws && !b->ws) {
		snprintf(c->status, sizeof(c->status),
			 "its workspace (%lld bytes) is more than replay may "
			 "take",
			 (long long)ws);
		return false;
	}
	int64_t uids[BUFS_MAX];
	void *ptrs[BUFS_MAX];
	for (size_t i = 0; i < b->n_bufs; i++) {
		uids[i] = b->bufs[i].uid;
		ptrs[i] = b->bufs[i].by_value
				  ? b->bufs[i].host
				  : (void *)(uintptr_t)b->bufs[i].dev;
	}
	void *wsp = (void *)(uintptr_t)b->ws;
	if ((rc = g->cudnnBackendCreateDescriptor(E.bt_varpack, &b->varpack)) ||
	    (rc = g->cudnnBackendSetAttribute(b->varpack, E.a_vp_uids,
					      E.t_int64, (int64_t)b->n_bufs,
					      uids)) ||
	    (rc = g->cudnnBackendSetAttribute(b->varpack, E.a_vp_ptrs,
					      E.t_void_ptr, (int64_t)b->n_bufs,
					      ptrs)) ||
	    (rc = g->cudnnBackendSetAttribute(b->varpack, E.a_vp_ws,
					      E.t_void_ptr, 1, &wsp)) ||
	    (rc = g->cudnnBackendFinalize(b->varpack))) {
		snprintf(c->status, sizeof(c->status), "no variant pack: %s",
			 gpu_cudnn_error(g, rc, err, sizeof(err)));
		return false;
	}
	return true;
}

static void drop_plan(struct built *b)
{
	struct gpu *g = b->g;

	if (b->varpack)
		g->cudnnBackendDestroyDescriptor(b->varpack);
	if (b->plan)
		g->cudnnBackendDestroyDescriptor(b->plan);
	gpu_free(g, b->ws, b->ws_bytes);
	b->varpack = b->plan = NULL;
	b->ws = 0;
}

/* How far outputs of a type may be from the recorded engine's, as a
 * fraction of their largest magnitude. */
static double tolerance(int64_t dtype)
{
	switch (dtype) {
	case DT_DTYPE_DOUBLE:
		return 1e-9;
	case DT_DTYPE_FLOAT: /* TF32 engines among FP32 ones */
		return 1e-2;
	case DT_DTYPE_HALF:
		return 1e-2;
	case DT_DTYPE_BFLOAT16:
		return 4e-2;
	default:
		return dt_dtype_bits(dtype) == 8 ? 0.15 : 0;
	}
}

/* Most host memory an output snapshot may take. */
#define SNAP_MAX (512u << 20)

/* One run from the seeded data, every tensor read back into snap. */
static bool snapshot(struct built *b, uint8_t **snap)
{
	size_t total = 0;

	for (size_t i = 0; i < b->n_bufs; i++)
		total += b->bufs[i].dev ? b->bufs[i].bytes : 0;
	if (total > SNAP_MAX || !refill(b) || !run_plan(b) ||
	    b->g->cuStreamSynchronize(b->g->stream))
		return false;
	*snap = malloc(total ? total : 1);
	size_t at = 0;
	for (size_t i = 0; *snap && i < b->n_bufs; i++) {
		if (!b->bufs[i].dev)
			continue;
		if (b->g->cuMemcpyDtoH(*snap + at, b->bufs[i].dev,
				       b->bufs[i].bytes))
			return false;
		at += b->bufs[i].bytes;
	}
	return *snap != NULL;
}

/* c's outputs against the reference's: the largest difference over the
 * largest magnitude, per tensor, the worst. */
static void compare(struct built *b, const uint8_t *ref, struct cand *c)
{
	uint8_t *mine = NULL;

	c->error = -1;
	c->agrees = -1;
	if (!ref || !snapshot(b, &mine)) {
		free(mine);
		return;
	}
	size_t at = 0;
	c->error = 0;
	c->agrees = 1;
	for (size_t i = 0; i < b->n_bufs; i++) {
		const struct buf *t = &b->bufs[i];
		if (!t->dev)
			continue;
		int bits = dt_dtype_bits(t->dtype);
		size_t n = bits >= 8 ? t->bytes / (size_t)(bits / 8) : 0;
		double big = 0, diff = 0;
		for (size_t k = 0; k < n; k++) {
			double x = elem(ref + at, t->dtype, k);
			double y = elem(mine + at, t->dtype, k);
			if (isnan(x) && isnan(y))
				continue;
			big = fmax(big, fabs(x));
			diff = isnan(x) || isnan(y) ? INFINITY
						    : fmax(diff, fabs(x - y));
		}
		double e = big > 0 ? diff / big : diff;
		c->error = fmax(c->error, e);
		if (e > tolerance(t->dtype))
			c->agrees = 0;
		at += t->bytes;
	}
	free(mine);
}

/* Time the config cfg as candidate c (its outputs compared with ref,
 * when given; taken as ref, when *take). */
static void measure(struct built *b, void *cfg, struct cand *c,
		    const struct dt_replay_opts *opts, double max_s,
		    const uint8_t *ref, uint8_t **take)
{
	c->error = -1;
	c->agrees = -1;
	c->workspace = -1;
	if (!cfg) {
		snprintf(c->status, sizeof(c->status),
			 "cuDNN refused the engine config");
		return;
	}
	if (make_plan(b, cfg, c)) {
		char err[160];
		b->status = 0;
		if (!refill(b))
			snprintf(c->status, sizeof(c->status),
				 "its data could not be copied to the GPU");
		else if (!gpu_time(b->g, run_plan, b, opts->cold_cache, max_s,
				   &c->t))
			snprintf(c->status, sizeof(c->status),
				 "its runs failed: %s",
				 b->status ? gpu_cudnn_error(b->g, b->status,
							     err, sizeof(err))
					   : "the GPU refused its timing");
		else if (take && !snapshot(b, take))
			*take = NULL;
		else if (!take)
			compare(b, ref, c);
		if (!c->status[0])
			snprintf(c->status, sizeof(c->status), "ok");
	}
	drop_plan(b);
}

static bool seen(const struct cand *c, size_t n, int64_t engine,
		 const char *knobs)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].engine == engine && !strcmp(c[i].knobs, knobs))
			return true;
	return false;
}

static void free_built(struct built *b)
{
	drop_plan(b);
	while (b->n_made)
		b->g->cudnnBackendDestroyDescriptor(b->made[--b->n_made]);
	for (uint32_t i = b->bp ? b->bp->n_descs : 0; i-- > 0;)
		if (b->descs[i])
			b->g->cudnnBackendDestroyDescriptor(b->descs[i]);
	for (size_t i = 0; i < b->n_bufs; i++) {
		gpu_free(b->g, b->bufs[i].dev, b->bufs[i].bytes);
		free(b->bufs[i].host);
	}
}

/* The configs to time besides the recorded one: the heuristics', and
 * with all_engines every engine with its default knobs. */
static size_t others(struct built *b, const struct dt_replay_opts *opts,
		     void **cfgs, const char **source)
{
	size_t n = 0;
	int64_t modes[] = { E.heur_a, E.heur_b, E.heur_fallback };
	const char *names[] = { "heuristic_a", "heuristic_b", "fallback" };

	for (int m = 0; m < 3; m++) {
		size_t before = n;
		heuristic(b, modes[m], cfgs, &n, CANDS_MAX);
		for (size_t i = before; i < n; i++)
			source[i] = names[m];
	}
	int64_t count = 0, got = 0;
	if (opts->all_engines &&
	    !b->g->cudnnBackendGetAttribute(b->graph, E.a_graph_count,
					    E.t_int64, 1, &got, &count))
		for (int64_t i = 0; i < count && n < CANDS_MAX; i++) {
			cfgs[n] = make_cfg(b, i, NULL, 0);
			source[n++] = "all";
		}
	return n;
}

int graph_measure(struct gpu *g, const struct problem *p,
		  const struct dt_replay_opts *opts, double budget_s,
		  struct cand *c, size_t *n, char *why, size_t whylen)
{
	struct built b = { .g = g, .bp = p->graph };
	uint8_t *ref = NULL;

	enums();
	*n = 0;
	if (!tensors(&b, why, whylen) || !build_graph(&b, why, whylen)) {
		free_built(&b);
		return -1;
	}
	void *cfgs[CANDS_MAX];
	const char *source[CANDS_MAX];
	size_t n_other = others(&b, opts, cfgs, source);
	double each = budget_s / (double)(n_other + 1);

	/* the recorded engine first: the others are held against it */
	struct cand *rec = &c[(*n)++];
	memset(rec, 0, sizeof(*rec));
	rec->engine = p->engine;
	rec->source = "recorded";
	snprintf(rec->knobs, sizeof(rec->knobs), "%s",
		 p->knobs ? p->knobs : "");
	measure(&b, make_cfg(&b, p->engine, p->knob_kv, p->n_knob_kv), rec,
		opts, each, NULL, &ref);
	for (size_t i = 0; i < n_other && *n < CANDS_MAX; i++) {
		struct cand *x = &c[*n];
		memset(x, 0, sizeof(*x));
		x->engine = cfgs[i] ? cfg_engine(g, cfgs[i]) : -1;
		x->source = source[i];
		if (cfgs[i])
			cfg_knobs(g, cfgs[i], x->knobs, sizeof(x->knobs));
		if (seen(c, *n, x->engine, x->knobs))
			continue;
		(*n)++;
		measure(&b, cfgs[i], x, opts, each, ref, NULL);
	}
	free(ref);
	free_built(&b);
	return 0;
}
