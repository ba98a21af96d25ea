/*
 * cupti-graphs.c - what ties the kernels a CUDA graph replays to the calls
 * that put them there.
 *
 * A kernel replayed from an executable graph reaches CUPTI's activity
 * records with the executable's id and a node id, and no call: the
 * launches the call made were turned into nodes while a stream was being
 * captured (or cuDNN added them itself). Three kinds of records close the
 * gap, none needing CUPTI's callback API (whose one subscriber the
 * program, PyTorch's profiler, may ask for at any time):
 *
 *   GRAPH_NODE    the nodes a call added, found by listing the graph's
 *                 nodes before and after it;
 *   GRAPH_LINK    executables instantiated or updated from a graph, clones,
 *                 child graphs: the program's own calls to the CUDA runtime
 *                 and driver, interposed here;
 *   GRAPH_LAUNCH  graph launches, from CUPTI's API records of them (kept
 *                 however other launches are tied to calls).
 *
 * Nothing here knows cuDNN; the shim says when a call starts and ends.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti-internal.h"
#include "dt-cupti.h"
#include "dt-trace.h"

volatile int dt_cupti_graphs;

/* Driver and CUPTI functions, looked up once CUPTI is on. */
static struct {
	CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*capture_info)(CUstream, CUstreamCaptureStatus *,
				 cuuint64_t *, CUgraph *, const CUgraphNode **,
				 size_t *);
	CUresult (*get_nodes)(CUgraph, CUgraphNode *, size_t *);
	CUresult (*node_type)(CUgraphNode, CUgraphNodeType *);
	CUresult (*kernel_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS *);
	CUresult (*func_name)(const char **, CUfunction);
	CUresult (*kernel_name)(const char **, CUkernel);
	CUresult (*child_graph)(CUgraphNode, CUgraph *);
	CUptiResult (*graph_id)(CUgraph, uint32_t *);
	CUptiResult (*node_id)(CUgraphNode, uint64_t *);
	CUptiResult (*exec_id)(CUgraphExec, uint32_t *);
} fn;


void cupti_graphs_start(void *cupti)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (!cuda || !cupti)
		return;
#define LOAD_(field, lib, name) *(void **)&fn.field = cupti_dlsym(lib, name)
	LOAD_(is_capturing, cuda, "cuStreamIsCapturing");
	LOAD_(capture_info, cuda, "cuStreamGetCaptureInfo_v2");
	LOAD_(get_nodes, cuda, "cuGraphGetNodes");
	LOAD_(node_type, cuda, "cuGraphNodeGetType");
	LOAD_(kernel_params, cuda, "cuGraphKernelNodeGetParams_v2");
	LOAD_(func_name, cuda, "cuFuncGetName");
	LOAD_(kernel_name, cuda, "cuKernelGetName");
	LOAD_(child_graph, cuda, "cuGraphChildGraphNodeGetGraph");
	LOAD_(graph_id, cupti, "cuptiGetGraphId");
	LOAD_(node_id, cupti, "cuptiGetGraphNodeId");
	LOAD_(exec_id, cupti, "cuptiGetGraphExecId");
#undef LOAD_
	/* names are a check, not a need */
	dt_cupti_graphs = fn.is_capturing && fn.capture_info && fn.get_nodes &&
			  fn.node_type && fn.child_graph && fn.graph_id &&
			  fn.node_id && fn.exec_id;
}

/* ----------------------------------------------- graphs of interest
 *
 * Graphs that hold nodes cuDNN calls made, or child graphs the program
 * added: their layout is written when an executable is made from them.
 * Others (a language model's decoding graph, instantiated every token)
 * cost nothing more than the lookup.
 */

#define INTEREST_SLOTS 4096
static _Atomic uint32_t interest[INTEREST_SLOTS];
static _Atomic int interest_full;

static void note_graph(uint32_t id)
{
	if (!id)
		return;
	for (uint32_t i = 0, k = id * 2654435761u; i < INTEREST_SLOTS;
	     i++, k++) {
		_Atomic uint32_t *slot = &interest[k % INTEREST_SLOTS];
		uint32_t cur = atomic_load(slot);
		if (cur == id)
			return;
		if (!cur && atomic_compare_exchange_strong(slot, &cur, id))
			return;
		if (cur == id)
			return;
	}
	atomic_store(&interest_full, 1); /* then every graph is */
}

static bool of_interest(uint32_t id)
{
	if (atomic_load(&interest_full))
		return true;
	for (uint32_t i = 0, k = id * 2654435761u; i < INTEREST_SLOTS;
	     i++, k++) {
		uint32_t cur = atomic_load(&interest[k % INTEREST_SLOTS]);
		if (cur == id)
			return true;
		if (!cur)
			return false;
	}
	return false;
}

/* ------------------------------------------------------------ nodes */

static uint32_t graph_id_of(void *g)
{
	uint32_t id = 0;
	return g && fn.graph_id(g, &id) == CUPTI_SUCCESS ? id : 0;
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a,
		  y = (uintptr_t) * (void *const *)b;
	return x < y ? -1 : x > y;
}

/* The graph's nodes, malloc'ed (*n of them); NULL when it has none or
 * memory is short. */
static CUgraphNode *list_nodes(CUgraph g, size_t *n)
{
	CUgraphNode *v = NULL;

	*n = 0;
	if (fn.get_nodes(g, NULL, n) != CUDA_SUCCESS || !*n)
		return NULL;
	/* room for a few more: another thread may be adding to it */
	size_t cap = *n + 16;
	if (!(v = malloc(cap * sizeof(*v))))
		return NULL;
	*n = cap;
	if (fn.get_nodes(g, v, n) != CUDA_SUCCESS) {
		free(v);
		*n = 0;
		return NULL;
	}
	if (*n > cap)
		*n = cap;
	return v;
}

static void scope_open(struct dt_graph_scope *s, CUgraph g, uint32_t how)
{
	memset(s, 0, sizeof(*s));
	s->graph = g;
	s->how = how;
	s->graph_id = graph_id_of(g);
	if (how == DT_GRAPH_UPDATED)
		return; /* every node is reported after the call */
	s->nodes = (void **)list_nodes(g, &s->n);
	if (s->nodes)
		qsort(s->nodes, s->n, sizeof(*s->nodes), by_address);
}

int dt_cupti_graph_begin_stream(struct dt_graph_scope *s, void *stream)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUgraph g = NULL;
	const CUgraphNode *deps = NULL;
	cuuint64_t id = 0;
	size_t nd = 0;

	s->graph = NULL;
	if (!dt_cupti_graphs ||
	    fn.is_capturing((CUstream)stream, &st) != CUDA_SUCCESS ||
	    st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return 0;
	if (fn.capture_info((CUstream)stream, &st, &id, &g, &deps, &nd) !=
		    CUDA_SUCCESS ||
	    !g)
		return 0;
	scope_open(s, g, DT_GRAPH_CAPTURED);
	return 1;
}

int dt_cupti_graph_begin(struct dt_graph_scope *s, void *graph, uint32_t how)
{
	s->graph = NULL;
	if (!dt_cupti_graphs || !graph)
		return 0;
	scope_open(s, graph, how);
	return 1;
}

static const char *kernel_node_name(CUgraphNode node)
{
	CUDA_KERNEL_NODE_PARAMS p;
	const char *name = NULL;

	memset(&p, 0, sizeof(p));
	if (!fn.kernel_params || fn.kernel_params(node, &p) != CUDA_SUCCESS)
		return NULL;
	if (p.func && fn.func_name && fn.func_name(&name, p.func) == 0)
		return name;
	if (p.kern && fn.kernel_name && fn.kernel_name(&name, p.kern) == 0)
		return name;
	return NULL;
}

static void emit_node(CUgraph g, uint32_t graph_id, CUgraphNode node,
		      CUgraphNodeType type, uint32_t how, uint64_t call)
{
	struct dt_rec_graph_node r;
	const char *name = NULL;

	REC_INIT(r, DT_REC_GRAPH_NODE);
	r.t = cupti_mono_ns();
	r.call = call;
	r.graph_handle = (uint64_t)(uintptr_t)g;
	r.graph = graph_id;
	r.how = how;
	if (fn.node_id(node, &r.node) != CUPTI_SUCCESS)
		return;
	r.node_type = (uint32_t)type;
	if (type == CU_GRAPH_NODE_TYPE_KERNEL)
		name = kernel_node_name(node);
	cupti_emit_tail(&r, sizeof(r), name,
			name ? (uint32_t)strnlen(name, 4096) : 0, true);
	note_graph(graph_id);
}

static void emit_link_at(uint32_t how, uint32_t from, uint32_t to,
			 uint64_t node, uint32_t parent, uint32_t first)
{
	struct dt_rec_graph_link r;

	REC_INIT(r, DT_REC_GRAPH_LINK);
	r.t = cupti_mono_ns();
	r.from = from;
	r.to = to;
	r.how = how;
	r.node = node;
	r.parent = parent;
	r.first = first;
	cupti_emit_now(&r, sizeof(r));
	if (how == DT_GRAPH_CHILD)
		note_graph(parent);
}

static void emit_link(uint32_t how, uint32_t from, uint32_t to,
		      uint64_t node, uint32_t parent)
{
	emit_link_at(how, from, to, node, parent, 0);
}

/* A node of graph g the call made (or updated), and what a child graph
 * node holds: the child graph's nodes are the call's too. */
static void emit_made(CUgraph g, uint32_t graph_id, CUgraphNode node,
		      uint32_t how, uint64_t call, int depth)
{
	CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
	CUgraph child = NULL;
	uint32_t child_id;
	uint64_t node_id = 0;
	size_t n;

	fn.node_type(node, &type);
	emit_node(g, graph_id, node, type, how, call);
	if (depth > 4 || type != CU_GRAPH_NODE_TYPE_GRAPH ||
	    fn.child_graph(node, &child) != CUDA_SUCCESS ||
	    !(child_id = graph_id_of(child)))
		return;
	fn.node_id(node, &node_id);
	emit_link(DT_GRAPH_CHILD, 0, child_id, node_id, graph_id);
	CUgraphNode *v = list_nodes(child, &n);
	for (size_t i = 0; v && i < n; i++)
		emit_made(child, child_id, v[i], how, call, depth + 1);
	free(v);
}

void dt_cupti_graph_end(struct dt_graph_scope *s, uint64_t call)
{
	size_t n;
	CUgraphNode *now;

	if (!s->graph)
		return;
	now = list_nodes(s->graph, &n);
	for (size_t i = 0; now && i < n; i++) {
		void *key = now[i];
		if (s->how != DT_GRAPH_UPDATED && s->nodes &&
		    bsearch(&key, s->nodes, s->n, sizeof(*s->nodes),
			    by_address))
			continue; /* there before the call */
		emit_made(s->graph, s->graph_id, now[i], s->how, call, 0);
	}
	free(now);
	free(s->nodes);
	s->nodes = NULL;
	s->graph = NULL;
}

/* ------------------------------------------------- graph launches */

/* a bit per callback id below 1024, for the driver's and the runtime's
 * graph launch functions */
static _Atomic uint64_t launch_cbids[2][16];

bool cupti_graphs_is_launch(const char *name)
{
	return !strncmp(name, "cuGraphLaunch", 13) ||
	       !strncmp(name, "cudaGraphLaunch", 15);
}

void cupti_graphs_launch_api(int runtime, uint32_t cbid, const char *name)
{
	if (cbid < 1024 && cupti_graphs_is_launch(name))
		atomic_fetch_or(&launch_cbids[!!runtime][cbid / 64],
				1ull << (cbid % 64));
}

void cupti_graphs_api_record(const void *rec)
{
	const CUpti_ActivityAPI *a = rec;
	int runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
	struct dt_rec_graph_launch r;

	if (a->cbid >= 1024 ||
	    !(atomic_load(&launch_cbids[runtime][a->cbid / 64]) &
	      (1ull << (a->cbid % 64))))
		return;
	memset(&r, 0, sizeof(r));
	r.hdr.type = DT_REC_GRAPH_LAUNCH;
	r.hdr.size = dt_rec_align(sizeof(r));
	r.start = a->start;
	r.end = a->end;
	r.corr = a->correlationId;
	r.tid = a->threadId;
	r.cbid = a->cbid;
	cupti_emit(&r, sizeof(r));
}

/* ------------------------------------------- the program's graph calls
 *
 * Executables made from graphs, clones and child graphs, interposed where
 * the program calls the CUDA runtime (libcudart.so.12 and .13, whose
 * symbols carry those versions) or the driver (unversioned). A runtime
 * linked statically into the program is out of reach: its replays are then
 * reported as not tied to their calls.
 */

#define DT_EXPORT __attribute__((visibility("default")))

static int find_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	const char **want = data;

	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, want[0])) {
		want[1] = info->dlpi_name;
		return 1;
	}
	return 0;
}

/* The real function: the next definition in the global scope, else the
 * one in the loaded library itself (a library loaded with RTLD_LOCAL is
 * out of RTLD_NEXT's reach; the program calling it reached us all the
 * same). Never a reason for the program's call to fail when the function
 * exists. */
void *cupti_next_fn(const char *name, const char *version)
{
	void *p = version ? dlvsym(RTLD_NEXT, name, version)
			  : dlsym(RTLD_NEXT, name);
	const char *want[2] = { version ? version : "libcuda.so.1", NULL };
	void *h;

	if (p || !dl_iterate_phdr(find_lib, want) || !want[1] ||
	    !(h = dlopen(want[1], RTLD_LAZY | RTLD_NOLOAD)))
		return p;
	p = version ? dlvsym(h, name, version) : dlsym(h, name);
	dlclose(h);
	return p;
}

/* A wrapper's next function, once: never the wrapper itself (the lookup
 * that found it may have come back through the shim's dlsym). */
static void set_real(void *_Atomic *slot, void *p, void *mine)
{
	void *none = NULL;

	if (p && p != mine)
		atomic_compare_exchange_strong(slot, &none, p);
}

static int by_node_id(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
	return x < y ? -1 : x > y;
}

/* Where executable `exec` puts the nodes of graph g's child graphs, g's
 * own nodes starting at index `base`: after g's nodes, child after child
 * in the order of their nodes (measured), each child's own children
 * after its nodes. Returns how many nodes g stands for, children
 * included. */
static uint32_t exec_layout(CUgraph g, uint32_t exec, uint32_t base,
			    int depth)
{
	size_t n;
	CUgraphNode *v = list_nodes(g, &n);
	uint32_t gid = graph_id_of(g), next = base + (uint32_t)n;
	struct {
		uint64_t id;
		CUgraph child;
	} *kids = NULL;
	size_t nk = 0;

	for (size_t i = 0; v && i < n && depth < 4; i++) {
		CUgraphNodeType type;
		CUgraph child = NULL;
		if (fn.node_type(v[i], &type) != CUDA_SUCCESS ||
		    type != CU_GRAPH_NODE_TYPE_GRAPH ||
		    fn.child_graph(v[i], &child) != CUDA_SUCCESS || !child)
			continue;
		void *k = realloc(kids, (nk + 1) * sizeof(*kids));
		if (!k)
			break;
		kids = k;
		kids[nk].id = 0;
		fn.node_id(v[i], &kids[nk].id);
		kids[nk++].child = child;
	}
	qsort(kids, nk, sizeof(*kids), by_node_id);
	for (size_t i = 0; i < nk; i++) {
		emit_link_at(DT_GRAPH_EXEC_CHILD, graph_id_of(kids[i].child),
			     exec, kids[i].id, gid, next);
		next += exec_layout(kids[i].child, exec, next, depth + 1);
	}
	free(kids);
	free(v);
	return next - base;
}

static void exec_made(uint32_t how, void *graph, void *exec)
{
	uint32_t e = 0, g;

	if (!dt_cupti_graphs || !exec || fn.exec_id(exec, &e) != CUPTI_SUCCESS)
		return;
	g = graph_id_of(graph);
	emit_link(how, g, e, 0, 0);
	if (of_interest(g))
		exec_layout(graph, e, 0, 0);
}

static void graph_cloned(void *orig, void *clone)
{
	if (dt_cupti_graphs && clone)
		emit_link(DT_GRAPH_CLONED, graph_id_of(orig),
			  graph_id_of(clone), 0, 0);
}

static void child_added(void *parent, void *node, void *child)
{
	CUgraph copy = NULL;
	uint64_t node_id = 0;

	if (!dt_cupti_graphs || !node ||
	    fn.child_graph(node, &copy) != CUDA_SUCCESS)
		return;
	fn.node_id(node, &node_id);
	emit_link(DT_GRAPH_CHILD, graph_id_of(child), graph_id_of(copy),
		  node_id, graph_id_of(parent));
}

/* One wrapper per function and library version: W(ret, name, version,
 * fail, params, args, after) defines the function `name` with the given
 * version, which calls the next definition and then runs `after` when it
 * succeeded. */
/* The next definition: looked up when first needed, or given by the
 * lookup (dlsym on the driver's handle, cuGetProcAddress) that handed out
 * the wrapper, which is the only way to a driver loaded with RTLD_LOCAL,
 * as the CUDA runtime loads it. */
#define W(ret, sym, tag, version, fail, params, args, after)               \
	static void *_Atomic real_##tag##_##sym;                          \
	DT_EXPORT ret dt_##tag##_##sym params                             \
	{                                                                 \
		ret(*real) params = atomic_load(&real_##tag##_##sym);     \
		if (!real) {                                              \
			set_real(&real_##tag##_##sym, cupti_next_fn(#sym, version), \
				 (void *)dt_##tag##_##sym);               \
			*(void **)&real = atomic_load(&real_##tag##_##sym); \
		}                                                         \
		if (!real)                                                \
			return fail;                                      \
		ret r = real args;                                        \
		if (r == 0)                                               \
			after;                                            \
		return r;                                                 \
	}

#define RUNTIME(X, tag, version)                                               \
	X(cudaError_t, cudaGraphInstantiate, tag, version, cudaErrorUnknown,   \
	  (cudaGraphExec_t * e, cudaGraph_t g, unsigned long long f), (e, g, f), \
	  exec_made(DT_GRAPH_INSTANTIATED, g, *e))                             \
	X(cudaError_t, cudaGraphInstantiateWithFlags, tag, version,            \
	  cudaErrorUnknown,                                                    \
	  (cudaGraphExec_t * e, cudaGraph_t g, unsigned long long f), (e, g, f), \
	  exec_made(DT_GRAPH_INSTANTIATED, g, *e))                             \
	X(cudaError_t, cudaGraphInstantiateWithParams, tag, version,           \
	  cudaErrorUnknown,                                                    \
	  (cudaGraphExec_t * e, cudaGraph_t g, cudaGraphInstantiateParams * p), \
	  (e, g, p), exec_made(DT_GRAPH_INSTANTIATED, g, *e))                  \
	X(cudaError_t, cudaGraphInstantiateWithParams_ptsz, tag, version,      \
	  cudaErrorUnknown,                                                    \
	  (cudaGraphExec_t * e, cudaGraph_t g, cudaGraphInstantiateParams * p), \
	  (e, g, p), exec_made(DT_GRAPH_INSTANTIATED, g, *e))                  \
	X(cudaError_t, cudaGraphExecUpdate, tag, version, cudaErrorUnknown,    \
	  (cudaGraphExec_t e, cudaGraph_t g, cudaGraphExecUpdateResultInfo * i), \
	  (e, g, i), exec_made(DT_GRAPH_EXEC_UPDATED, g, e))                   \
	X(cudaError_t, cudaGraphClone, tag, version, cudaErrorUnknown,         \
	  (cudaGraph_t * c, cudaGraph_t g), (c, g), graph_cloned(g, *c))       \
	X(cudaError_t, cudaGraphAddChildGraphNode, tag, version,               \
	  cudaErrorUnknown,                                                    \
	  (cudaGraphNode_t * n, cudaGraph_t g, const cudaGraphNode_t *d,       \
	   size_t nd, cudaGraph_t child),                                      \
	  (n, g, d, nd, child), child_added(g, *n, child))

#define DRIVER(X)                                                              \
	X(CUresult, cuGraphInstantiateWithFlags, drv, NULL, CUDA_ERROR_UNKNOWN, \
	  (CUgraphExec * e, CUgraph g, unsigned long long f), (e, g, f),       \
	  exec_made(DT_GRAPH_INSTANTIATED, g, *e))                             \
	X(CUresult, cuGraphInstantiateWithParams, drv, NULL,                   \
	  CUDA_ERROR_UNKNOWN,                                                  \
	  (CUgraphExec * e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS * p),     \
	  (e, g, p), exec_made(DT_GRAPH_INSTANTIATED, g, *e))                  \
	X(CUresult, cuGraphInstantiateWithParams_ptsz, drv, NULL,              \
	  CUDA_ERROR_UNKNOWN,                                                  \
	  (CUgraphExec * e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS * p),     \
	  (e, g, p), exec_made(DT_GRAPH_INSTANTIATED, g, *e))                  \
	X(CUresult, cuGraphExecUpdate_v2, drv, NULL, CUDA_ERROR_UNKNOWN,       \
	  (CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo * i),         \
	  (e, g, i), exec_made(DT_GRAPH_EXEC_UPDATED, g, e))                   \
	X(CUresult, cuGraphClone, drv, NULL, CUDA_ERROR_UNKNOWN,               \
	  (CUgraph * c, CUgraph g), (c, g), graph_cloned(g, *c))               \
	X(CUresult, cuGraphAddChildGraphNode, drv, NULL, CUDA_ERROR_UNKNOWN,   \
	  (CUgraphNode * n, CUgraph g, const CUgraphNode *d, size_t nd,        \
	   CUgraph child),                                                     \
	  (n, g, d, nd, child), child_added(g, *n, child))

RUNTIME(W, rt12, "libcudart.so.12")
RUNTIME(W, rt13, "libcudart.so.13")
DRIVER(W)

/* Programs that find the driver's functions with dlsym() (the shim passes
 * those lookups here) or cuGetProcAddress() get the wrappers too, which
 * then call what the lookup found. A name whose function changed over the
 * driver's versions ("cuGraphInstantiate", "cuGraphExecUpdate") is wrapped
 * only where the version asked for is the one wrapped. version < 0: an
 * exported name looked up with dlsym. */
static void *driver_wrapper(const char *name, int version, uint64_t flags,
			    void *real)
{
	bool ptsz = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	void *_Atomic *slot = NULL;
	void *w = NULL;

	if (!strcmp(name, "cuGraphInstantiateWithFlags") ||
	    (version >= 12000 && !strcmp(name, "cuGraphInstantiate"))) {
		slot = &real_drv_cuGraphInstantiateWithFlags;
		w = (void *)dt_drv_cuGraphInstantiateWithFlags;
	} else if ((!strcmp(name, "cuGraphInstantiateWithParams") && ptsz) ||
		   !strcmp(name, "cuGraphInstantiateWithParams_ptsz")) {
		slot = &real_drv_cuGraphInstantiateWithParams_ptsz;
		w = (void *)dt_drv_cuGraphInstantiateWithParams_ptsz;
	} else if (!strcmp(name, "cuGraphInstantiateWithParams")) {
		slot = &real_drv_cuGraphInstantiateWithParams;
		w = (void *)dt_drv_cuGraphInstantiateWithParams;
	} else if (!strcmp(name, "cuGraphExecUpdate_v2") ||
		   (version >= 12000 && !strcmp(name, "cuGraphExecUpdate"))) {
		slot = &real_drv_cuGraphExecUpdate_v2;
		w = (void *)dt_drv_cuGraphExecUpdate_v2;
	} else if (!strcmp(name, "cuGraphClone")) {
		slot = &real_drv_cuGraphClone;
		w = (void *)dt_drv_cuGraphClone;
	} else if (!strcmp(name, "cuGraphAddChildGraphNode")) {
		slot = &real_drv_cuGraphAddChildGraphNode;
		w = (void *)dt_drv_cuGraphAddChildGraphNode;
	}
	if (!slot || real == w)
		return NULL;
	set_real(slot, real, w);
	return w;
}

typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t,
			   CUdriverProcAddressQueryResult *);
static void *_Atomic real_gpa1, *_Atomic real_gpa2;

static void *real_or_next(void *_Atomic *slot, const char *name, void *mine)
{
	if (!atomic_load(slot))
		set_real(slot, cupti_next_fn(name, NULL), mine);
	return atomic_load(slot);
}

/* What cuGetProcAddress found, with the wrappers in place of the
 * functions they wrap. */
static CUresult substituted(CUresult r, const char *symbol, void **pfn,
			    int version, cuuint64_t flags)
{
	void *w;

	if (r == CUDA_SUCCESS && symbol && pfn && *pfn &&
	    (w = driver_wrapper(symbol, version, flags, *pfn)))
		*pfn = w;
	return r;
}

DT_EXPORT CUresult dt_drv_gpa1(const char *symbol, void **pfn, int version,
			       cuuint64_t flags)
{
	gpa1_t real = (gpa1_t)real_or_next(&real_gpa1, "cuGetProcAddress",
					   (void *)dt_drv_gpa1);
	if (!real)
		return CUDA_ERROR_NOT_FOUND;
	return substituted(real(symbol, pfn, version, flags), symbol, pfn,
			   version, flags);
}

DT_EXPORT CUresult dt_drv_gpa2(const char *symbol, void **pfn, int version,
			       cuuint64_t flags,
			       CUdriverProcAddressQueryResult *status)
{
	gpa2_t real = (gpa2_t)real_or_next(&real_gpa2, "cuGetProcAddress_v2",
					   (void *)dt_drv_gpa2);
	if (!real)
		return CUDA_ERROR_NOT_FOUND;
	return substituted(real(symbol, pfn, version, flags, status), symbol,
			   pfn, version, flags);
}
__asm__(".symver dt_drv_gpa1,cuGetProcAddress@@DNNTRACE_0");
__asm__(".symver dt_drv_gpa2,cuGetProcAddress_v2@@DNNTRACE_0");

void *dt_cupti_driver_wrapper(const char *name, void *real)
{
	if (!real)
		return NULL;
	if (!strcmp(name, "cuGetProcAddress")) {
		set_real(&real_gpa1, real, (void *)dt_drv_gpa1);
		return (void *)dt_drv_gpa1;
	}
	if (!strcmp(name, "cuGetProcAddress_v2")) {
		set_real(&real_gpa2, real, (void *)dt_drv_gpa2);
		return (void *)dt_drv_gpa2;
	}
	return driver_wrapper(name, -1, 0, real);
}

/* the names the program's references bind to */
#define SYMVER_(ret, sym, tag, version, ...) \
	__asm__(".symver dt_" #tag "_" #sym "," #sym "@" version);
#define SYMVER_DEFAULT_(ret, sym, tag, version, ...) \
	__asm__(".symver dt_" #tag "_" #sym "," #sym "@@" version);
#define SYMVER_DRIVER_(ret, sym, tag, version, ...) \
	__asm__(".symver dt_" #tag "_" #sym "," #sym "@@DNNTRACE_0");
RUNTIME(SYMVER_, rt12, "libcudart.so.12")
RUNTIME(SYMVER_DEFAULT_, rt13, "libcudart.so.13")
DRIVER(SYMVER_DRIVER_)
