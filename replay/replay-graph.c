/*
 * replay-graph.c - a recorded backend operation graph built again on the
 * GPU and its engines timed: every descriptor the trace kept (struct
 * dt_cudnn_graph) created, set and finalized in the program's order with
 * this process's handle; its tensors given device memory of their
 * recorded shapes, strides and types, filled with seeded random data
 * (replay-data.c); the recorded engine and knobs made into a plan and
 * timed, then the configs cuDNN's heuristics offer (modes A, B and
 * fallback) and, when asked, every engine the graph supports, each
 * engine's knobs moved alone, then in combinations; each timed
 * (replay-gpu.c) and its outputs compared with the recorded engine's.
 * Legacy calls are replay-legacy.c's; the graphs of fusion what-ifs,
 * replay-fuse.c's.
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
		bt_knob, bt_knob_info;
	int64_t a_t_dtype, a_t_dims, a_t_strides, a_t_uid, a_t_virtual,
		a_t_by_value;
	int64_t a_eng_graph, a_eng_index, a_cfg_engine, a_cfg_knobs,
		a_knob_type, a_knob_value, a_heur_graph, a_heur_mode,
		a_heur_results, a_plan_handle, a_plan_cfg, a_plan_ws, a_vp_uids,
		a_vp_ptrs, a_vp_ws, a_graph_count, a_eng_knob_info, a_info_type,
		a_info_max, a_info_min, a_info_stride;
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
	E.bt_knob_info = ev(D, "CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR");
	E.a_eng_knob_info = ev(A, "CUDNN_ATTR_ENGINE_KNOB_INFO");
	E.a_info_type = ev(A, "CUDNN_ATTR_KNOB_INFO_TYPE");
	E.a_info_max = ev(A, "CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE");
	E.a_info_min = ev(A, "CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE");
	E.a_info_stride = ev(A, "CUDNN_ATTR_KNOB_INFO_STRIDE");
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
/* The graph as built, and what its runs need. */
struct built {
	struct gpu *g;
	const struct dt_cudnn_graph *bp;
	void *descs[256];
	void *graph;
	struct data data;
	void *plan, *varpack;
	uint64_t ws;
	size_t ws_bytes;
	int status;                      /* of the last execution that failed */
	void *made[3 * CANDS_MAX + 256]; /* engines, knob choices and
					    configs made for candidates */
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
	int64_t v = attr_i64(bp, d, E.a_t_dtype, -1);
	const char *n = dt_enum_name("cudnnDataType_t", 15, v);

	return n ? dt_dtype_by_name(n, strlen(n)) : -1;
}

/* Whether the graph's tensors already have data of uid: operations that
 * share a tensor each kept it, at its own address when the program made
 * it twice. */
static bool has_uid(const struct data *d, int64_t uid)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->bufs[i].uid == uid)
			return true;
	return false;
}

/* Memory and data for every non-virtual tensor of the graph. */
static bool tensors(struct built *b, char *why, size_t whylen)
{
	const struct dt_cudnn_graph *bp = b->bp;

	b->data.g = b->g;
	for (uint32_t d = 0; d < bp->n_descs; d++) {
		int64_t uid = attr_i64(bp, d, E.a_t_uid, -1);
		if (bp->descs[d].type == E.bt_tensor &&
		    !attr_i64(bp, d, E.a_t_virtual, 0) &&
		    !has_uid(&b->data, uid) &&
		    !data_add(&b->data, uid, tensor_dtype(bp, d),
			      tensor_span(bp, d),
			      attr_i64(bp, d, E.a_t_by_value, 0) != 0, why,
			      whylen))
			return false;
	}
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
	int made_k = 0;

	out[0] = 0;
	while (made_k < 32 &&
	       !g->cudnnBackendCreateDescriptor(E.bt_knob, &k[made_k]))
		made_k++;
	if (made_k == 32 && !g->cudnnBackendGetAttribute(cfg, E.a_cfg_knobs,
							 E.t_desc, 32, &n, k))
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
	while (made_k > 0)
		g->cudnnBackendDestroyDescriptor(k[--made_k]);
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

/* A plan finalized: the longest that took is what the budget keeps free
 * for the next (one that compiles its kernel takes seconds). */
static int finalize_timed(struct gpu *g, void *plan)
{
	double t0 = dt_replay_now_s();
	int rc = g->cudnnBackendFinalize(plan);
	double took = dt_replay_now_s() - t0;

	if (took > g->build_s)
		g->build_s = took;
	return rc;
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
	    (rc = finalize_timed(g, b->plan))) {
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
	const struct data *d = &b->data;
	for (size_t i = 0; i < d->n; i++) {
		uids[i] = d->bufs[i].uid;
		ptrs[i] = d->bufs[i].by_value
				  ? d->bufs[i].host
				  : (void *)(uintptr_t)d->bufs[i].dev;
	}
	void *wsp = (void *)(uintptr_t)b->ws;
	if ((rc = g->cudnnBackendCreateDescriptor(E.bt_varpack, &b->varpack)) ||
	    (rc = g->cudnnBackendSetAttribute(b->varpack, E.a_vp_uids,
					      E.t_int64, (int64_t)d->n,
					      uids)) ||
	    (rc = g->cudnnBackendSetAttribute(b->varpack, E.a_vp_ptrs,
					      E.t_void_ptr, (int64_t)d->n,
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

/* Time the config cfg as candidate c (its outputs compared with ref,
 * when given; taken as ref, when *take), one of left candidates still to
 * time within bud: not built when the longest plan build seen would not
 * fit in it, timed within its share of what the build left. The
 * recorded engine is built whenever its problem's share has begun: the
 * longest build seen is another engine's (one that compiled its kernel,
 * which would leave every later problem without its calibration). */
static void measure(struct built *b, void *cfg, struct cand *c,
		    const struct dt_replay_opts *opts, struct budget *bud,
		    size_t left, const uint8_t *ref, uint8_t **take)
{
	bool recorded = !strcmp(c->source, "recorded");

	c->error = -1;
	c->agrees = -1;
	c->workspace = -1;
	if (!cfg) {
		snprintf(c->status, sizeof(c->status),
			 "cuDNN refused the engine config");
		return;
	}
	if (!budget_allows(bud, recorded ? 0 : b->g->build_s)) {
		budget_skip(c);
		return;
	}
	b->status = 0;
	if (make_plan(b, cfg, c))
		data_time(&b->data, run_plan, b, &b->status, opts,
			  budget_share(bud->until, left), c, ref, take);
	drop_plan(b);
}

/* The candidate of c (n of them) that is engine with knobs, or NULL. */
static const struct cand *same_cand(const struct cand *c, size_t n,
				    int64_t engine, const char *knobs)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].engine == engine && !strcmp(c[i].knobs, knobs))
			return &c[i];
	return NULL;
}

static void free_built(struct built *b)
{
	drop_plan(b);
	while (b->n_made)
		b->g->cudnnBackendDestroyDescriptor(b->made[--b->n_made]);
	for (uint32_t i = b->bp ? b->bp->n_descs : 0; i-- > 0;)
		if (b->descs[i])
			b->g->cudnnBackendDestroyDescriptor(b->descs[i]);
	data_free(&b->data);
}

/* The knobs an engine of the graph has, with their ranges. */
struct knob_range {
	int32_t type;
	int64_t min, max, stride;
};

#define KNOBS_MAX 64 /* cuDNN 9 has 44 knob types */

/* An engine that runs the graph, and its knobs. */
struct engine_knobs {
	int64_t idx;
	int n;
	struct knob_range k[KNOBS_MAX];
	uint64_t ns; /* with its default knobs, 0 not timed */
};

/* The knobs of engine idx into k (at most KNOBS_MAX); -1 when the engine
 * does not run the graph. */
static int engine_knobs(struct built *b, int64_t idx, struct knob_range *k)
{
	struct gpu *g = b->g;
	void *e, *info[KNOBS_MAX];
	int64_t n = 0, c;
	int made_i = 0;

	if (g->cudnnBackendCreateDescriptor(E.bt_engine, &e))
		return -1;
	made(b, e);
	if (!set_attr(g, e, E.a_eng_graph, E.t_desc, 1, &b->graph) ||
	    !set_attr(g, e, E.a_eng_index, E.t_int64, 1, &idx) ||
	    g->cudnnBackendFinalize(e))
		return -1;
	while (made_i < KNOBS_MAX &&
	       !g->cudnnBackendCreateDescriptor(E.bt_knob_info, &info[made_i]))
		made_i++;
	if (made_i == KNOBS_MAX &&
	    g->cudnnBackendGetAttribute(e, E.a_eng_knob_info, E.t_desc,
					KNOBS_MAX, &n, info))
		n = 0;
	if (n > made_i)
		n = made_i;
	for (int64_t i = 0; i < n; i++) {
		k[i] = (struct knob_range){ .stride = 1 };
		g->cudnnBackendGetAttribute(info[i], E.a_info_type, E.t_knob, 1,
					    &c, &k[i].type);
		g->cudnnBackendGetAttribute(info[i], E.a_info_min, E.t_int64, 1,
					    &c, &k[i].min);
		g->cudnnBackendGetAttribute(info[i], E.a_info_max, E.t_int64, 1,
					    &c, &k[i].max);
		g->cudnnBackendGetAttribute(info[i], E.a_info_stride, E.t_int64,
					    1, &c, &k[i].stride);
		if (k[i].stride < 1)
			k[i].stride = 1;
	}
	while (made_i > 0)
		g->cudnnBackendDestroyDescriptor(info[--made_i]);
	return (int)n;
}

/* Values of a knob tried, at most: spread over its range. */
#define KNOB_VALUES 8

/* Values of each knob of a pair tried together: the ones that did best
 * alone (the product of two knobs' values is up to 64 configs a pair,
 * and an engine has up to a few dozen pairs). */
#define PAIR_VALUES 2

/* The values of a knob tried alone, and the median each gave. */
struct tried {
	int n;
	int64_t v[KNOB_VALUES];
	uint64_t ns[KNOB_VALUES]; /* 0: it did not run, or its outputs did
				     not agree */
};

/* A problem's search: its graph built, the configs made and not yet
 * timed, the candidates timed. */
struct search {
	struct built *b;
	const struct dt_replay_opts *opts;
	struct budget *bud;
	struct cand *c; /* the recorded engine first */
	size_t *n;
	size_t total; /* candidates expected, for progress */
	uint8_t *ref; /* the reference's outputs */
	void *cfg[CANDS_MAX];
	const char *source[CANDS_MAX];
	int64_t engine[CANDS_MAX]; /* what cfg was made of: said when cuDNN
				      refused it */
	size_t n_cfg;
	struct engine_knobs *e; /* with every engine: those that run the
				   graph, as far as they were listed */
	size_t ne;
	int64_t engines;  /* the graph's */
	int64_t unlisted; /* engines whose configs were not all made */
	/* the engine in hand's knobs: their names, and their values tried
	 * alone (what its combinations are made of) */
	char names[KNOBS_MAX][64];
	struct tried tried[KNOBS_MAX];
};

static void add_cfg(struct search *s, void *cfg, const char *source,
		    int64_t engine)
{
	s->cfg[s->n_cfg] = cfg;
	s->engine[s->n_cfg] = engine;
	s->source[s->n_cfg++] = source;
}

/* Every engine of the graph that runs it, with its default knobs, made
 * until until (a wall time: making an engine config can take a while,
 * and there may be hundreds); each one's knobs kept for later. */
static void engine_defaults(struct search *s, double until)
{
	struct built *b = s->b;
	int64_t got = 0, i = 0;

	if (b->g->cudnnBackendGetAttribute(b->graph, E.a_graph_count, E.t_int64,
					   1, &got, &s->engines) ||
	    s->engines <= 0 ||
	    !(s->e = calloc((size_t)s->engines, sizeof(*s->e)))) {
		s->engines = 0;
		return;
	}
	s->unlisted = s->engines;
	for (; i < s->engines && s->n_cfg < CANDS_MAX &&
	       dt_replay_now_s() < until;
	     i++) {
		struct engine_knobs *e = &s->e[s->ne];
		e->idx = i;
		e->n = engine_knobs(b, i, e->k);
		if (e->n < 0) {
			s->unlisted--; /* it does not run the graph */
			continue;
		}
		add_cfg(s, make_cfg(b, i, NULL, 0), "all", i);
		s->ne++;
	}
}

/* The configs to time besides the recorded one, in the order they are
 * timed: the heuristics' (modes A, B and fallback), then with
 * all_engines every engine's with its default knobs. Made until until;
 * heuristics not asked are counted in s->bud. */
static void others(struct search *s, double until)
{
	int64_t modes[] = { E.heur_a, E.heur_b, E.heur_fallback };
	const char *names[] = { "heuristic_a", "heuristic_b", "fallback" };

	for (int m = 0; m < 3; m++) {
		size_t before = s->n_cfg;
		if (dt_replay_now_s() >= until) {
			s->bud->modes_left = (uint32_t)(3 - m);
			return;
		}
		heuristic(s->b, modes[m], s->cfg, &s->n_cfg, CANDS_MAX);
		for (size_t i = before; i < s->n_cfg; i++) {
			s->source[i] = names[m];
			s->engine[i] = -1; /* cuDNN's own configs */
		}
	}
	if (s->opts->all_engines)
		engine_defaults(s, until);
}

/* Candidate x made of cfg, or of engine and knobs where cuDNN refused
 * to make it. */
static void new_cand(struct gpu *g, void *cfg, const char *source,
		     int64_t engine, const char *knobs, struct cand *x)
{
	memset(x, 0, sizeof(*x));
	x->engine = cfg ? cfg_engine(g, cfg) : engine;
	x->source = source;
	if (cfg)
		cfg_knobs(g, cfg, x->knobs, sizeof(x->knobs));
	else
		snprintf(x->knobs, sizeof(x->knobs), "%s", knobs);
}

/* Config cfg (made of engine and knobs) timed as the next candidate, one
 * of left still to time, unless an earlier one is the same. The
 * recorded engine refused, the first that runs is the reference the
 * others are held against. Returns the candidate timed, or the earlier
 * same one. */
static const struct cand *time_cfg(struct search *s, void *cfg,
				   const char *source, int64_t engine,
				   const char *knobs, size_t left)
{
	struct cand *x = &s->c[*s->n];
	double t = dt_replay_now_s();

	new_cand(s->b->g, cfg, source, engine, knobs, x);
	const struct cand *same = same_cand(s->c, *s->n, x->engine, x->knobs);
	if (same)
		return same;
	(*s->n)++;
	measure(s->b, cfg, x, s->opts, s->bud, left, s->ref,
		s->ref ? NULL : &s->ref);
	progress_cand(s->opts, *s->n, s->total, x, false,
		      dt_replay_now_s() - t);
	return x;
}

/* A candidate's median where it ran and its outputs agree with the
 * reference's (or are the reference), else 0: what the search for
 * better knobs goes by. */
static uint64_t usable_ns(const struct cand *x)
{
	return x && x->t.runs && x->agrees != 0 ? x->t.median_ns : 0;
}

/* Whether one more candidate may be made: the candidates' limit and the
 * budget allow it (the longest plan build seen still fits). */
static bool room(struct search *s)
{
	if (*s->n >= CANDS_MAX) {
		s->bud->full = true;
		return false;
	}
	return budget_allows(s->bud, s->b->g->build_s);
}

/* The values of a knob of range k tried alone: up to KNOB_VALUES of its
 * steps, spread over the range, its minimum first. */
static int64_t knob_steps(const struct knob_range *k, int64_t *every)
{
	int64_t steps = (k->max - k->min) / k->stride + 1;

	*every = 1;
	if (steps <= 0) /* a range cuDNN gives upside down: none */
		return 0;
	*every = (steps + KNOB_VALUES - 1) / KNOB_VALUES;
	return steps;
}

/* The candidates expected of engine e's knobs: each knob moved away from
 * its default alone, over up to KNOB_VALUES values of its range (a knob
 * at a time, since their product has no end), then their combinations:
 * the best value of each, and each pair of knobs' best values
 * together. */
static size_t knob_values(const struct engine_knobs *e)
{
	size_t n = 0;
	int64_t every;

	for (int i = 0; i < e->n; i++) {
		int64_t steps = knob_steps(&e->k[i], &every);
		n += (size_t)((steps + every - 1) / every);
	}
	if (e->n > 1)
		n += 1 + (size_t)(e->n * (e->n - 1) / 2) * PAIR_VALUES *
				 PAIR_VALUES;
	return n;
}

/* The median of engine idx with its default knobs (a heuristic's config
 * may have been it), 0 when it did not run. */
static uint64_t default_ns(const struct search *s, int64_t idx)
{
	for (size_t i = 0; i < *s->n; i++)
		if (s->c[i].engine == idx && !s->c[i].knobs[0])
			return s->c[i].t.runs ? s->c[i].t.median_ns : 0;
	return 0;
}

static int by_default_ns(const void *a, const void *b)
{
	uint64_t x = ((const struct engine_knobs *)a)->ns,
		 y = ((const struct engine_knobs *)b)->ns;

	/* one that did not run last */
	return (x == 0) - (y == 0) ? (x == 0) - (y == 0) : (x > y) - (x < y);
}

/* ------------------------------------------------- knob combinations */

/* A config of an engine: a value for each of its knobs set, the others
 * at their defaults, and its median (0: none yet). */
struct point {
	bool set[KNOBS_MAX];
	int64_t v[KNOBS_MAX];
	uint64_t ns;
};

/* A median to beat: none is beaten by any. */
static uint64_t to_beat(uint64_t ns)
{
	return ns ? ns : UINT64_MAX;
}

/* Point q of engine e made and timed as a candidate, one of left still
 * to time, while the candidates and the budget allow one more: its
 * median into q->ns (0 when it did not run), and p moved to it when it
 * beats p. A knob alone that cuDNN refuses is a candidate, said with
 * why; a combination it refuses is none: no such config exists. False
 * when no more candidates may be made. */
static bool try_point(struct search *s, const struct engine_knobs *e,
		      struct point *q, bool combination, struct point *p,
		      size_t *left)
{
	struct dt_recipe_kv kv[KNOBS_MAX];
	char knobs[256] = "";
	uint32_t n = 0;
	size_t len = 0;

	if (!room(s))
		return false;
	for (int i = 0; i < e->n; i++) {
		if (!q->set[i])
			continue;
		kv[n++] = (struct dt_recipe_kv){ s->names[i], q->v[i] };
		if (len < sizeof(knobs))
			len += (size_t)snprintf(
				knobs + len, sizeof(knobs) - len, "%s%s=%lld",
				len ? " " : "", s->names[i],
				(long long)q->v[i]);
	}
	void *cfg = make_cfg(s->b, e->idx, kv, n);
	q->ns = 0;
	if (cfg || !combination)
		q->ns = usable_ns(
			time_cfg(s, cfg, combination ? "combination" : "all",
				 e->idx, knobs, *left ? (*left)-- : 1));
	if (q->ns && q->ns < to_beat(p->ns))
		*p = *q;
	return true;
}

/* The index of the fastest of knob t's values tried alone after skip
 * of them (skip: a bit per value), -1 none. */
static int fastest(const struct tried *t, unsigned skip)
{
	int best = -1;

	for (int j = 0; j < t->n; j++)
		if (t->ns[j] && !(skip >> j & 1) &&
		    (best < 0 || t->ns[j] < t->ns[best]))
			best = j;
	return best;
}

/* Knob t's PAIR_VALUES fastest values alone into v; how many. */
static int fastest_values(const struct tried *t, int64_t *v)
{
	unsigned skip = 0;
	int n = 0, j;

	while (n < PAIR_VALUES && (j = fastest(t, skip)) >= 0) {
		v[n++] = t->v[j];
		skip |= 1u << j;
	}
	return n;
}

static int by_fastest_knob(const void *a, const void *b, void *arg)
{
	const struct tried *t = arg;
	int x = *(const int *)a, y = *(const int *)b;
	uint64_t nx = t[x].ns[fastest(&t[x], 0)],
		 ny = t[y].ns[fastest(&t[y], 0)];

	return (nx > ny) - (nx < ny);
}

/* Knobs i and j of engine e moved together from p, each over its
 * PAIR_VALUES best values alone; p moves to any that beats it. False
 * when no more candidates may be made. */
static bool try_pair(struct search *s, const struct engine_knobs *e, int i,
		     int j, struct point *p, size_t *left)
{
	int64_t vi[PAIR_VALUES], vj[PAIR_VALUES];
	int ni = fastest_values(&s->tried[i], vi);
	int nj = fastest_values(&s->tried[j], vj);

	for (int x = 0; x < ni; x++)
		for (int y = 0; y < nj; y++) {
			struct point q = *p;
			if (q.set[i] && q.set[j] && q.v[i] == vi[x] &&
			    q.v[j] == vj[y])
				continue; /* p itself */
			q.set[i] = q.set[j] = true;
			q.v[i] = vi[x];
			q.v[j] = vj[y];
			if (!try_point(s, e, &q, true, p, left))
				return false;
		}
	return true;
}

/* After engine e's knobs were moved alone: their combinations, from p
 * (the fastest of its defaults, def their median, and its knobs alone).
 * Each knob at the value it did best at alone, where that beat the
 * defaults, all together; then, greedily, each pair of knobs (those that
 * did best alone first) moved together over each one's best values
 * alone, around the fastest point found so far: what two knobs do
 * together that neither does alone. False when no more candidates may
 * be made. */
static bool combine(struct search *s, const struct engine_knobs *e,
		    uint64_t def, struct point *p, size_t *left)
{
	struct point q = { 0 };
	int order[KNOBS_MAX], n = 0, moved = 0;

	for (int i = 0; i < e->n; i++) {
		int j = fastest(&s->tried[i], 0);
		if (j < 0)
			continue;
		order[n++] = i;
		if (s->tried[i].ns[j] < to_beat(def)) {
			q.set[i] = true;
			q.v[i] = s->tried[i].v[j];
			moved++;
		}
	}
	if (moved > 1 && !try_point(s, e, &q, true, p, left))
		return false;
	qsort_r(order, (size_t)n, sizeof(*order), by_fastest_knob, s->tried);
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (!try_pair(s, e, order[a], order[b], p, left))
				return false;
	return true;
}

/* Engine e's knob values, each made and timed in turn while the budget
 * and the candidates last (left: those still to time), then their
 * combinations. False when they ended first. */
static bool engine_knob_search(struct search *s, const struct engine_knobs *e,
			       size_t *left)
{
	/* the point combinations start from: the engine's defaults, or
	 * the knob value alone that beat them most */
	uint64_t def = usable_ns(same_cand(s->c, *s->n, e->idx, ""));
	struct point p = { .ns = def };

	for (int i = 0; i < e->n; i++) {
		const struct knob_range *k = &e->k[i];
		struct tried *t = &s->tried[i];
		int64_t every, steps = knob_steps(k, &every);
		dt_enum_short("cudnnBackendKnobType_t", k->type,
			      "CUDNN_KNOB_TYPE_", s->names[i],
			      sizeof(s->names[i]));
		t->n = 0;
		for (int64_t v = 0; v < steps; v += every) {
			struct point q = { 0 };
			q.set[i] = true;
			q.v[i] = k->min + v * k->stride;
			if (!try_point(s, e, &q, false, &p, left))
				return false;
			t->v[t->n] = q.v[i];
			t->ns[t->n++] = q.ns;
		}
	}
	return e->n < 2 || combine(s, e, def, &p, left);
}

/* With every engine, after each was timed with its defaults: the knobs
 * of the fastest engines first, so that what the budget leaves out is
 * the slowest's. */
static void knob_search(struct search *s)
{
	size_t left = 0;

	for (size_t j = 0; j < s->ne; j++) {
		s->e[j].ns = default_ns(s, s->e[j].idx);
		left += knob_values(&s->e[j]);
	}
	/* no more than the candidates' limit lets be timed: each one's
	 * share of the budget counts those alone */
	if (left > CANDS_MAX - *s->n)
		left = CANDS_MAX - *s->n;
	s->total = *s->n + left;
	qsort(s->e, s->ne, sizeof(*s->e), by_default_ns);
	for (size_t j = 0; j < s->ne && engine_knob_search(s, &s->e[j], &left);
	     j++)
		s->unlisted--;
}

int graph_measure(struct gpu *g, const struct problem *p,
		  const struct dt_replay_opts *opts, struct budget *bud,
		  struct cand *c, size_t *n, char *why, size_t whylen)
{
	struct built b = { .g = g, .bp = p->graph };
	struct search *s = calloc(1, sizeof(*s));

	enums();
	*n = 0;
	if (!s) {
		snprintf(why, whylen, "out of host memory");
		return -1;
	}
	*s = (struct search){ .b = &b,
			      .opts = opts,
			      .bud = bud,
			      .c = c,
			      .n = n };
	if (!tensors(&b, why, whylen) || !build_graph(&b, why, whylen)) {
		free_built(&b);
		free(s);
		return -1;
	}
	/* the recorded engine first, before the others are listed (the
	 * first heuristic asked may take longer than a small problem's
	 * share): the others are held against it, and it calibrates the
	 * problem; up to half of the problem's share, which it leaves as
	 * soon as its median holds still */
	if (p->engine >= 0) {
		struct cand *rec = &c[(*n)++];
		memset(rec, 0, sizeof(*rec));
		rec->engine = p->engine;
		rec->source = "recorded";
		snprintf(rec->knobs, sizeof(rec->knobs), "%s",
			 p->knobs ? p->knobs : "");
		double t = dt_replay_now_s();
		measure(&b, make_cfg(&b, p->engine, p->knob_kv, p->n_knob_kv),
			rec, opts, bud, p->alone ? 1 : 2, NULL, &s->ref);
		budget_recorded(bud, rec);
		/* how many others is not known yet, but when it is alone */
		progress_cand(opts, 1, p->alone ? 1 : 0, rec, false,
			      dt_replay_now_s() - t);
	}
	double t0 = dt_replay_now_s();
	/* half of what is left at most to list them, the rest to time them */
	if (!p->alone)
		others(s, budget_share(bud->until, 2));
	if (!opts->quiet && s->n_cfg)
		fprintf(stderr,
			"replay:   %zu engine configs besides the recorded "
			"one, made in %.2f s\n",
			s->n_cfg, dt_replay_now_s() - t0);
	s->total = s->n_cfg + *n;
	for (size_t i = 0; i < s->n_cfg && *n < CANDS_MAX; i++)
		time_cfg(s, s->cfg[i], s->source[i], s->engine[i], "",
			 s->n_cfg - i);
	if (s->ne)
		knob_search(s);
	bud->engines_left = (uint32_t)s->unlisted;
	free(s->ref);
	free(s->e);
	free_built(&b);
	free(s);
	return 0;
}

/* The configs to run the graph with, into cfgs: engine p->engine with
 * its knobs, or those cuDNN's heuristics offer (modes A, then
 * fallback). */
static size_t run_cfgs(struct built *b, const struct problem *p, void **cfgs)
{
	size_t n = 0;

	if (p->engine >= 0) {
		cfgs[0] = make_cfg(b, p->engine, p->knob_kv, p->n_knob_kv);
		return cfgs[0] != NULL;
	}
	heuristic(b, E.heur_a, cfgs, &n, CANDS_MAX);
	heuristic(b, E.heur_fallback, cfgs, &n, CANDS_MAX);
	return n;
}

int graph_run(struct gpu *g, const struct problem *p, struct tensor_io *io,
	      size_t n_io, char *why, size_t whylen)
{
	struct built b = { .g = g, .bp = p->graph };
	void **cfgs = calloc(CANDS_MAX, sizeof(*cfgs));
	int rc = -1;

	enums();
	if (!cfgs)
		snprintf(why, whylen, "out of host memory");
	else if (tensors(&b, why, whylen) && build_graph(&b, why, whylen)) {
		size_t n = run_cfgs(&b, p, cfgs);
		snprintf(why, whylen, "cuDNN offers no engine that runs it");
		for (size_t i = 0; rc && i < n; i++) {
			struct cand c = { 0 };
			b.status = 0;
			if (!make_plan(&b, cfgs[i], &c))
				snprintf(why, whylen, "%s", c.status);
			else if (data_run_io(&b.data, run_plan, &b, &b.status,
					     io, n_io, why, whylen))
				rc = 0;
			drop_plan(&b);
		}
	}
	free_built(&b);
	free(cfgs);
	return rc;
}
