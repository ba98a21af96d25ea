/*
 * fake-capture.c - a stand-in for the CUDA driver (its soname,
 * libcuda.so.1) and CUPTI (DNNTRACE_CUPTI_PATH names it) with what the
 * shim needs to follow CUDA graph capture on the CPU, for
 * test-cublas-stream.sh: CUPTI starts (it records no kernel and gives no
 * callback), and one stream at a time is captured into one graph
 * (fake_capture_begin, fake_capture_end), to which fake_capture_launch
 * adds a kernel node when given that stream. A program loads it with
 * dlopen(RTLD_GLOBAL) before its first wrapped call, so that the shim
 * finds it loaded when it starts CUPTI.
 */
#include <stdint.h>
#include <stddef.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

#define MAX_NODES 64

static char graph, nodes[MAX_NODES]; /* addresses only */
static size_t n_nodes;
static const void *captured; /* the stream being captured, or NULL */
static int capturing;

EXPORT void fake_capture_begin(const void *stream)
{
	captured = stream;
	capturing = 1;
}

EXPORT void fake_capture_end(void)
{
	capturing = 0;
}

EXPORT size_t fake_capture_nodes(void)
{
	return n_nodes;
}

EXPORT void fake_capture_launch(const void *stream)
{
	if (capturing && stream == captured && n_nodes < MAX_NODES)
		n_nodes++;
}

/* ------------------------------------------------------------- driver */

enum { CAPTURE_NONE = 0, CAPTURE_ACTIVE = 1, NOT_FOUND = 500 };

EXPORT int cuStreamIsCapturing(const void *stream, int *status)
{
	*status =
		capturing && stream == captured ? CAPTURE_ACTIVE : CAPTURE_NONE;
	return 0;
}

EXPORT int cuStreamGetCaptureInfo_v2(const void *stream, int *status,
				     uint64_t *id, void **g, const void **deps,
				     size_t *n_deps)
{
	cuStreamIsCapturing(stream, status);
	*id = 1;
	*g = *status == CAPTURE_ACTIVE ? &graph : NULL;
	*deps = NULL;
	*n_deps = 0;
	return 0;
}

EXPORT int cuGraphGetNodes(void *g, void **out, size_t *n)
{
	if (g != &graph)
		return NOT_FOUND;
	for (size_t i = 0; out && i < n_nodes && i < *n; i++)
		out[i] = &nodes[i];
	*n = n_nodes;
	return 0;
}

EXPORT int cuGraphNodeGetType(void *node, int *type)
{
	(void)node;
	*type = 0; /* CU_GRAPH_NODE_TYPE_KERNEL */
	return 0;
}

EXPORT int cuGraphChildGraphNodeGetGraph(void *node, void **g)
{
	(void)node, (void)g;
	return NOT_FOUND;
}

/* -------------------------------------------------------------- CUPTI */

enum { CUPTI_OK = 0, CUPTI_REFUSED = 1, CUPTI_NO_MORE = 12 };

EXPORT int cuptiGetVersion(uint32_t *v)
{
	*v = 130000;
	return CUPTI_OK;
}

EXPORT int cuptiGetResultString(int r, const char **s)
{
	*s = r ? "refused" : "success";
	return CUPTI_OK;
}

EXPORT int cuptiGetTimestamp(uint64_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	*t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return CUPTI_OK;
}

/* no callback has a name: no launch is tied to a call */
EXPORT int cuptiGetCallbackName(int domain, uint32_t id, const char **name)
{
	(void)domain, (void)id, (void)name;
	return CUPTI_REFUSED;
}

EXPORT int cuptiSubscribe_v2(void **subscriber, void *fn, void *data,
			     void *params)
{
	(void)subscriber, (void)fn, (void)data, (void)params;
	return CUPTI_REFUSED;
}

EXPORT int cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec)
{
	(void)buf, (void)valid, (void)rec;
	return CUPTI_NO_MORE;
}

EXPORT int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream,
					     size_t *dropped)
{
	(void)ctx, (void)stream;
	*dropped = 0;
	return CUPTI_OK;
}

EXPORT int cuptiActivityPopExternalCorrelationId(int kind, uint64_t *id)
{
	(void)kind;
	*id = 0;
	return CUPTI_OK;
}

EXPORT int cuptiGetGraphId(void *g, uint32_t *id)
{
	*id = g == &graph ? 7 : 0;
	return g == &graph ? CUPTI_OK : CUPTI_REFUSED;
}

EXPORT int cuptiGetGraphNodeId(void *node, uint64_t *id)
{
	*id = (uint64_t)((char *)node - nodes) + 1;
	return CUPTI_OK;
}

/* What needs no answer succeeds, its arguments unread. */
#define ACCEPT(name, ...)             \
	EXPORT int name(__VA_ARGS__); \
	EXPORT int name(__VA_ARGS__)  \
	{                             \
		return CUPTI_OK;      \
	}
ACCEPT(cuptiActivityRegisterCallbacks, void *, void *)
ACCEPT(cuptiActivityEnable, int)
ACCEPT(cuptiActivityDisable, int)
ACCEPT(cuptiActivityEnableAndDump, int)
ACCEPT(cuptiActivityEnableRuntimeApi, uint32_t, uint8_t)
ACCEPT(cuptiActivityEnableDriverApi, uint32_t, uint8_t)
ACCEPT(cuptiActivityFlushAll, uint32_t)
ACCEPT(cuptiActivityPushExternalCorrelationId, int, uint64_t)
ACCEPT(cuptiActivityRegisterTimestampCallback, void *)
ACCEPT(cuptiUnsubscribe, void *)
ACCEPT(cuptiEnableCallback, uint32_t, void *, int, uint32_t)
ACCEPT(cuptiGetGraphExecId, void *, uint32_t *)
ACCEPT(cuptiFinalize, void)
