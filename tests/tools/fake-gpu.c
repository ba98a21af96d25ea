/*
 * fake-gpu.c - a stand-in for CUDA's driver (libcuda.so.1) and cuDNN
 * (libcudnn.so.9), both in one library, for `dnntrace replay` on a machine
 * without a GPU: host memory for device memory, a clock that only the
 * fake's executions move, and just enough of cuDNN's backend API and
 * legacy convolutions to build what a trace recorded and run it. It is
 * not cuDNN: it checks that descriptors point to finalized ones and that
 * a variant pack names every non-virtual tensor of its plan's graph, and
 * an execution takes a time chosen by the test, so that replay's choices
 * can be checked.
 *
 * Environment: FAKE_GPU_NAME (the device's name, "NVIDIA H200"),
 * FAKE_FAST (the engine, or a legacy convolution's algorithm, that runs
 * in 5 us; every other takes 10 us), FAKE_PLAN_US, FAKE_ENGINE_US and
 * FAKE_HEUR_US (the wall time a plan, an engine and a heuristic take to
 * finalize, 0 by default), FAKE_RUN_US (the wall time an execution
 * takes, beside its time on the fake's clock; 0), FAKE_HANG (an engine
 * whose executions never return, as a kernel that never ends would
 * hold a synchronization), FAKE_REFUSE_TILE (an engine config with its
 * TILE_SIZE at that value is refused), FAKE_NO_FUSION (a graph of more than one
 * operation is refused), FAKE_GAP_US (an engine's or algorithm's
 * execution runs as two kernels of half its time each, the GPU idle
 * that long between them: events see the gap, the kernels do not).
 * Every engine has one knob, TILE_SIZE, from 0 to 3; at 3 it runs in
 * 4 us. A graph of pointwise operations alone runs in 2 us an operation;
 * each pointwise operation after another kind adds 1 us.
 *
 * FAKE_HEUR_US holds a legacy convolution's heuristic too
 * (cudnnGetConvolutionForwardAlgorithm_v7). Engine FAKE_PAIR has a
 * second knob, STAGES, from 0 to 3, and times of its own: 8 us at its
 * defaults (0 or unset), 9 us with one knob at 2 and the other at its
 * default, 12 us otherwise, 3 us with both at 2: what two knobs do
 * together and neither alone.
 *
 * Linked as libcublasLt.so.13 too, it stands in for cuBLASLt's matmul
 * as replay calls it: descriptors and layouts checked against each other
 * (the product's shape with its transposes), algorithm IDs 1, 6, 21 and
 * 66, each with tiles 15 and 20 (an undefined tile is refused), ID 1
 * needing 1 KiB of workspace; the heuristics offer ID 1 (where the
 * preference allows its workspace), 66 with TILE_ID=15 SPLITK_NUM=1
 * CUSTOM_OPTION=1 STAGES_ID=35 CLUSTER_SHAPE_ID=3 and 21 with TILE_ID=20.
 * A matmul runs as a cuDNN engine of its ID does (FAKE_FAST's in 5 us);
 * it writes nothing (every algorithm's outputs agree), but FAKE_GEMM_WRONG
 * (an ID) writes 8 into D's bytes.
 *
 * Linked as libcupti.so.13 too, it stands in for CUPTI's activity API
 * as replay uses it: while kernel records are enabled, each kernel the
 * fake runs is a record (a CUpti_ActivityKernel10's size, its kind,
 * start and end where CUPTI puts them) on the fake's clock, which
 * cuptiGetTimestamp reads.
 */
/* cublasLt.h declares a function of no prototype */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop
#include <cudnn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------- driver */

static double clock_us; /* the fake GPU's time */

static void kernel_ran(double start_us, double end_us);

/* A kernel of us on the fake GPU. */
static void kernel(double us)
{
	kernel_ran(clock_us, clock_us + us);
	clock_us += us;
}

struct event {
	double t;
};

EXPORT int cuInit(unsigned flags)
{
	(void)flags;
	return 0;
}

EXPORT int cuDeviceGetCount(int *n)
{
	*n = 1;
	return 0;
}

EXPORT int cuDeviceGet(int *d, int i)
{
	*d = i;
	return 0;
}

EXPORT int cuDeviceGetName(char *name, int len, int d)
{
	const char *n = getenv("FAKE_GPU_NAME");

	(void)d;
	snprintf(name, (size_t)len, "%s", n ? n : "NVIDIA H200");
	return 0;
}

EXPORT int cuDeviceGetAttribute(int *v, int attr, int d)
{
	(void)attr;
	(void)d;
	*v = 1 << 20; /* the L2 cache: the only attribute asked */
	return 0;
}

EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int d)
{
	(void)d;
	*ctx = &clock_us;
	return 0;
}

EXPORT int cuCtxSetCurrent(void *ctx)
{
	(void)ctx;
	return 0;
}

EXPORT int cuMemAlloc_v2(uint64_t *p, size_t bytes)
{
	void *m = calloc(1, bytes);

	*p = (uint64_t)(uintptr_t)m;
	return m ? 0 : 2;
}

EXPORT int cuMemFree_v2(uint64_t p)
{
	free((void *)(uintptr_t)p);
	return 0;
}

EXPORT int cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	*free_b = (size_t)8 << 30;
	*total = (size_t)10 << 30;
	return 0;
}

EXPORT int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n)
{
	memcpy((void *)(uintptr_t)dst, src, n);
	return 0;
}

EXPORT int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n)
{
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return 0;
}

EXPORT int cuMemsetD8Async(uint64_t p, unsigned char v, size_t n, void *s)
{
	(void)s;
	memset((void *)(uintptr_t)p, v, n);
	return 0;
}

EXPORT int cuStreamCreate(void **s, unsigned flags)
{
	(void)flags;
	*s = &clock_us;
	return 0;
}

EXPORT int cuStreamSynchronize(void *s)
{
	(void)s;
	return 0;
}

EXPORT int cuStreamWaitValue32_v2(void *s, uint64_t addr, uint32_t v,
				  unsigned flags)
{
	(void)s, (void)addr, (void)v, (void)flags;
	return 0;
}

EXPORT int cuStreamWriteValue32_v2(void *s, uint64_t addr, uint32_t v,
				   unsigned flags)
{
	(void)s, (void)flags;
	memcpy((void *)(uintptr_t)addr, &v, 4);
	return 0;
}

EXPORT int cuEventCreate(void **e, unsigned flags)
{
	(void)flags;
	*e = calloc(1, sizeof(struct event));
	return *e ? 0 : 2;
}

EXPORT int cuEventRecord(void *e, void *s)
{
	(void)s;
	if (!e)
		return 400; /* CUDA_ERROR_INVALID_HANDLE */
	((struct event *)e)->t = clock_us;
	return 0;
}

EXPORT int cuEventSynchronize(void *e)
{
	(void)e;
	return 0;
}

EXPORT int cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
	if (!a || !b)
		return 400;
	*ms = (float)((((struct event *)b)->t - ((struct event *)a)->t) / 1e3);
	return 0;
}

/* -------------------------------------------------------------- cuDNN */

/* Wall time spent as the environment's variable name says, in us. */
static void take(const char *name)
{
	const char *us = getenv(name);

	if (us)
		usleep((useconds_t)atoi(us));
}

/* An execution: 5 us for FAKE_FAST, 10 us for every other; 4 us for
 * any engine with its TILE_SIZE knob at 3. */
static void run(int64_t engine, int64_t tile)
{
	const char *fast = getenv("FAKE_FAST"), *hang = getenv("FAKE_HANG");

	while (hang && atoll(hang) == engine)
		pause();
	double us = tile == 3 ? 4 : fast && atoll(fast) == engine ? 5 : 10;
	const char *gap = getenv("FAKE_GAP_US");

	take("FAKE_RUN_US");
	if (!gap) {
		kernel(us);
		return;
	}
	kernel(us / 2);
	clock_us += atof(gap);
	kernel(us / 2);
}

struct attr {
	cudnnBackendAttributeName_t name;
	cudnnBackendAttributeType_t type;
	int64_t count;
	uint8_t data[512];
};

struct desc {
	cudnnBackendDescriptorType_t type;
	bool final;
	struct attr attrs[32];
	int n;
};

static size_t size_of(cudnnBackendAttributeType_t t)
{
	switch (t) {
	case CUDNN_TYPE_BOOLEAN:
	case CUDNN_TYPE_CHAR:
		return 1;
	case CUDNN_TYPE_HANDLE:
	case CUDNN_TYPE_INT64:
	case CUDNN_TYPE_DOUBLE:
	case CUDNN_TYPE_VOID_PTR:
	case CUDNN_TYPE_BACKEND_DESCRIPTOR:
		return 8;
	case CUDNN_TYPE_FRACTION:
		return 16;
	default:
		return 4;
	}
}

static struct attr *find(struct desc *d, cudnnBackendAttributeName_t name)
{
	for (int i = 0; i < d->n; i++)
		if (d->attrs[i].name == name)
			return &d->attrs[i];
	return NULL;
}

static int64_t i64(struct desc *d, cudnnBackendAttributeName_t name)
{
	struct attr *a = find(d, name);
	int64_t v = 0;

	if (a)
		memcpy(&v, a->data, size_of(a->type) < 8 ? 4 : 8);
	return v;
}

static struct desc *ptr(struct desc *d, cudnnBackendAttributeName_t name, int i)
{
	struct attr *a = find(d, name);
	struct desc *p = NULL;

	if (a && i < a->count)
		memcpy(&p, a->data + 8 * i, 8);
	return p;
}

static void put(struct desc *d, cudnnBackendAttributeName_t name,
		cudnnBackendAttributeType_t type, int64_t count, const void *v)
{
	struct attr *a = find(d, name);

	if (!a && d->n < 32)
		a = &d->attrs[d->n++];
	if (!a)
		return;
	a->name = name;
	a->type = type;
	a->count = count;
	memcpy(a->data, v, (size_t)count * size_of(type));
}

EXPORT size_t cudnnGetVersion(void)
{
	return 91900;
}

EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
	*h = (cudnnHandle_t)&clock_us;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
	(void)h, (void)s;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT const char *cudnnGetErrorString(cudnnStatus_t s)
{
	return s ? "CUDNN_STATUS_BAD_PARAM (fake)" : "CUDNN_STATUS_SUCCESS";
}

EXPORT void cudnnGetLastErrorString(char *m, size_t n)
{
	snprintf(m, n, "the fake refused it");
}

EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(
	cudnnBackendDescriptorType_t t, cudnnBackendDescriptor_t *d)
{
	struct desc *x = calloc(1, sizeof(*x));

	if (!x)
		return CUDNN_STATUS_ALLOC_FAILED;
	x->type = t;
	*d = x;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d,
					      cudnnBackendAttributeName_t name,
					      cudnnBackendAttributeType_t type,
					      int64_t count, const void *v)
{
	struct desc *x = d;

	if (x->final || count < 0 ||
	    (size_t)count * size_of(type) > sizeof(x->attrs[0].data))
		return CUDNN_STATUS_BAD_PARAM;
	for (int64_t i = 0; type == CUDNN_TYPE_BACKEND_DESCRIPTOR && i < count;
	     i++) {
		struct desc *p;
		memcpy(&p, (const uint8_t *)v + 8 * i, 8);
		/* a descriptor pointed to is finalized first (a config an
		 * engine is read back into, and a heuristic's, are filled by
		 * cuDNN itself) */
		if (!p || (!p->final &&
			   x->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))
			return CUDNN_STATUS_BAD_PARAM;
	}
	put(x, name, type, count, v);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
	struct desc *x = d;

	if (x->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR &&
	    (!find(x, CUDNN_ATTR_OPERATIONGRAPH_OPS) ||
	     (getenv("FAKE_NO_FUSION") &&
	      find(x, CUDNN_ATTR_OPERATIONGRAPH_OPS)->count > 1)))
		return CUDNN_STATUS_BAD_PARAM;
	if (x->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR)
		take("FAKE_ENGINE_US");
	if (x->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
		take("FAKE_HEUR_US");
	if (x->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR &&
	    getenv("FAKE_REFUSE_TILE")) {
		struct desc *k = ptr(x, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, 0);
		if (k && i64(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE) ==
				 atoll(getenv("FAKE_REFUSE_TILE")))
			return CUDNN_STATUS_BAD_PARAM;
	}
	if (x->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) {
		/* a plan takes FAKE_PLAN_US of wall time to build, as one
		 * that compiles its kernel does */
		take("FAKE_PLAN_US");
		struct desc *cfg =
			ptr(x, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0);
		struct desc *e =
			cfg ? ptr(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, 0) : NULL;
		if (!e)
			return CUDNN_STATUS_BAD_PARAM;
		int64_t idx = i64(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
		int64_t ws = 256 * idx;
		put(x, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
		    CUDNN_TYPE_INT64, 1, &ws);
		/* the engine it runs and its first knob's value, kept
		 * where a plan has none */
		put(x, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
		    &idx);
		struct desc *k = ptr(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, 0);
		if (k) {
			int64_t v = i64(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE);
			put(x, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
			    CUDNN_TYPE_INT64, 1, &v);
		}
	}
	x->final = true;
	return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------- an engine of two knobs */

/* Whether engine idx is FAKE_PAIR's. */
static bool paired(int64_t idx)
{
	const char *pair = getenv("FAKE_PAIR");

	return pair && atoll(pair) == idx;
}

/* A knob's range, 0 to 3, into info. */
static void knob_info(struct desc *info, int32_t type)
{
	int64_t v[3] = { 3, 0, 1 };

	put(info, CUDNN_ATTR_KNOB_INFO_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type);
	put(info, CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE, CUDNN_TYPE_INT64, 1,
	    &v[0]);
	put(info, CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE, CUDNN_TYPE_INT64, 1,
	    &v[1]);
	put(info, CUDNN_ATTR_KNOB_INFO_STRIDE, CUDNN_TYPE_INT64, 1, &v[2]);
	info->final = true;
}

/* The value of knob type among cfg's choices, 0 (its default) when it
 * is not one. */
static int64_t knob_of(struct desc *cfg, int32_t type)
{
	struct attr *a = find(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES);

	for (int i = 0; a && i < a->count; i++) {
		struct desc *k = ptr(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, i);
		if (i64(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE) == type)
			return i64(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE);
	}
	return 0;
}

/* What an execution of FAKE_PAIR's engine with plan's knobs takes. */
static double pair_us(struct desc *plan)
{
	struct desc *cfg =
		ptr(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0);
	int64_t t = knob_of(cfg, CUDNN_KNOB_TYPE_TILE_SIZE),
		s = knob_of(cfg, CUDNN_KNOB_TYPE_STAGES);

	if (t == 2 && s == 2)
		return 3;
	if (!t && !s)
		return 8;
	return (t == 2 && !s) || (s == 2 && !t) ? 9 : 12;
}

/* The engines the fake offers for any graph. */
static const int64_t offered[] = { 70, 1, 28 };
#define OFFERED 3

/* A heuristic's results: configs of the offered engines. */
static cudnnStatus_t heur_results(struct desc *h, int64_t want, int64_t *n,
				  void *out)
{
	struct desc *g = ptr(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 0);

	*n = want < OFFERED ? want : OFFERED;
	if (!want)
		*n = OFFERED;
	for (int64_t i = 0; out && i < *n; i++) {
		struct desc *cfg, *e;
		memcpy(&cfg, (uint8_t *)out + 8 * i, 8);
		cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR,
					     (void **)&e);
		put(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
		    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
		put(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
		    &offered[i]);
		e->final = true;
		put(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
		    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e);
		cfg->final = true;
	}
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d,
					      cudnnBackendAttributeName_t name,
					      cudnnBackendAttributeType_t type,
					      int64_t want, int64_t *n,
					      void *out)
{
	struct desc *x = d;

	if (x->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR &&
	    name == CUDNN_ATTR_ENGINEHEUR_RESULTS)
		return heur_results(x, want, n, out);
	if (name == CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT) {
		*n = 1;
		*(int64_t *)out = 72;
		return CUDNN_STATUS_SUCCESS;
	}
	if (name == CUDNN_ATTR_ENGINE_KNOB_INFO) {
		/* every engine has one knob: TILE_SIZE, 0 to 3; FAKE_PAIR's
		 * STAGES too */
		struct desc *info[2];
		*n = paired(i64(x, CUDNN_ATTR_ENGINE_GLOBAL_INDEX)) ? 2 : 1;
		if (want < *n)
			return CUDNN_STATUS_BAD_PARAM;
		memcpy(info, out, (size_t)*n * 8);
		knob_info(info[0], CUDNN_KNOB_TYPE_TILE_SIZE);
		if (*n > 1)
			knob_info(info[1], CUDNN_KNOB_TYPE_STAGES);
		return CUDNN_STATUS_SUCCESS;
	}
	if (name == CUDNN_ATTR_ENGINECFG_ENGINE) {
		/* the engine copied into the one the caller made */
		struct desc *e = ptr(x, name, 0), *to;
		memcpy(&to, out, 8);
		if (!e || !to)
			return CUDNN_STATUS_BAD_PARAM;
		*to = *e;
		*n = 1;
		return CUDNN_STATUS_SUCCESS;
	}
	struct attr *a = find(x, name);
	if (!a || a->type != type)
		return CUDNN_STATUS_BAD_PARAM;
	*n = a->count < want ? a->count : want;
	if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR) {
		memcpy(out, a->data, (size_t)*n * size_of(type));
		return CUDNN_STATUS_SUCCESS;
	}
	/* descriptors are copied into those the caller made */
	for (int64_t i = 0; i < *n; i++) {
		struct desc *from = ptr(x, name, (int)i), *to;
		memcpy(&to, (uint8_t *)out + 8 * i, 8);
		if (!from || !to)
			return CUDNN_STATUS_BAD_PARAM;
		*to = *from;
	}
	return CUDNN_STATUS_SUCCESS;
}

/* Whether the variant pack names every non-virtual tensor its plan's
 * graph reaches (the descriptors the operations point to). */
static bool pack_complete(struct desc *plan, struct desc *vp)
{
	struct desc *cfg =
		ptr(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0);
	struct desc *e = ptr(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, 0);
	struct desc *g = ptr(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0);
	struct attr *ops = g ? find(g, CUDNN_ATTR_OPERATIONGRAPH_OPS) : NULL;
	struct attr *uids = find(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);

	for (int64_t i = 0; ops && i < ops->count; i++) {
		struct desc *op = ptr(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, (int)i);
		for (int k = 0; k < op->n; k++) {
			struct attr *a = &op->attrs[k];
			struct desc *t;
			if (a->type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
				continue;
			memcpy(&t, a->data, 8);
			if (t->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR ||
			    i64(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL))
				continue;
			int64_t uid = i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID);
			bool named = false;
			for (int64_t j = 0; uids && j < uids->count; j++)
				named |= !memcmp(uids->data + 8 * j, &uid, 8);
			if (!named)
				return false;
		}
	}
	return ops != NULL;
}

/* ------------------------------------------------------------- outputs */

/* What the fake writes, so that outputs compare as a GPU's would: a
 * convolution or a matmul (a graph with one, a legacy convolution)
 * writes zeros; a pointwise-only graph of one operation copies its input
 * to its output (the identity). With FAKE_FUSED_OFF, a graph of
 * pointwise operations after another kind writes 4 into the first
 * element of what its pointwise operations write, as a fused engine that
 * computed something else would. */

static size_t elem_size(int64_t dtype)
{
	switch (dtype) {
	case CUDNN_DATA_DOUBLE:
	case CUDNN_DATA_INT64:
		return 8;
	case CUDNN_DATA_FLOAT:
	case CUDNN_DATA_INT32:
		return 4;
	case CUDNN_DATA_HALF:
	case CUDNN_DATA_BFLOAT16:
		return 2;
	default:
		return 1;
	}
}

/* A backend tensor's bytes, as far as its strides reach. */
static size_t tensor_bytes(struct desc *t)
{
	struct attr *d = find(t, CUDNN_ATTR_TENSOR_DIMENSIONS),
		    *s = find(t, CUDNN_ATTR_TENSOR_STRIDES);
	size_t span = 1;

	for (int64_t i = 0; d && s && i < d->count && i < s->count; i++) {
		int64_t n, st;
		memcpy(&n, d->data + 8 * i, 8);
		memcpy(&st, s->data + 8 * i, 8);
		span += (size_t)(n - 1) * (size_t)st;
	}
	return span * elem_size(i64(t, CUDNN_ATTR_TENSOR_DATA_TYPE));
}

/* The memory the variant pack gives tensor t, NULL for a virtual one. */
static uint8_t *tensor_ptr(struct desc *vp, struct desc *t)
{
	struct attr *uids = find(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS),
		    *ptrs = find(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
	int64_t uid = i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID);

	for (int64_t j = 0; t && !i64(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL) &&
			    uids && ptrs && j < uids->count;
	     j++)
		if (!memcmp(uids->data + 8 * j, &uid, 8)) {
			uint8_t *p;
			memcpy(&p, ptrs->data + 8 * j, 8);
			return p;
		}
	return NULL;
}

/* The tensor an operation writes, NULL for one the fake does not know. */
static struct desc *op_output(struct desc *op)
{
	static const struct {
		cudnnBackendDescriptorType_t type;
		cudnnBackendAttributeName_t y;
	} outs[] = {
		{ CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
		  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y },
		{ CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
		  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX },
		{ CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
		  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW },
		{ CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
		  CUDNN_ATTR_OPERATION_MATMUL_CDESC },
		{ CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
		  CUDNN_ATTR_OPERATION_POINTWISE_YDESC },
	};

	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
		if (op->type == outs[i].type)
			return ptr(op, outs[i].y, 0);
	return NULL;
}

/* 4 in a tensor's first element, in its type. */
static void four(uint8_t *p, int64_t dtype)
{
	float f = 4;
	double d = 4;
	uint16_t h = dtype == CUDNN_DATA_HALF ? 0x4400 : 0x4080;

	if (dtype == CUDNN_DATA_DOUBLE)
		memcpy(p, &d, 8);
	else if (dtype == CUDNN_DATA_FLOAT)
		memcpy(p, &f, 4);
	else
		memcpy(p, &h, 2);
}

static void write_outputs(struct desc *g, struct desc *vp)
{
	struct attr *ops = find(g, CUDNN_ATTR_OPERATIONGRAPH_OPS);
	struct desc *last_pw = NULL;
	int64_t pw = 0;

	for (int64_t i = 0; i < ops->count; i++)
		pw += ptr(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, (int)i)->type ==
		      CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR;
	if (pw == 1 && ops->count == 1) {
		struct desc *op = ptr(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, 0);
		struct desc *x = ptr(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
				     0),
			    *y = ptr(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC,
				     0);
		uint8_t *px = tensor_ptr(vp, x), *py = tensor_ptr(vp, y);
		if (px && py && tensor_bytes(x) == tensor_bytes(y))
			memcpy(py, px, tensor_bytes(y));
		return;
	}
	for (int64_t i = 0; i < ops->count; i++) {
		struct desc *op = ptr(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, (int)i);
		struct desc *y = op_output(op);
		uint8_t *p = y ? tensor_ptr(vp, y) : NULL;
		if (!p)
			continue;
		memset(p, 0, tensor_bytes(y));
		if (op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
			last_pw = y;
	}
	if (last_pw && pw < ops->count && getenv("FAKE_FUSED_OFF"))
		four(tensor_ptr(vp, last_pw),
		     i64(last_pw, CUDNN_ATTR_TENSOR_DATA_TYPE));
}

/* The operations of a plan's graph, and how many are pointwise. */
static struct desc *plan_graph(struct desc *plan)
{
	struct desc *cfg =
		ptr(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0);
	struct desc *e = ptr(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, 0);

	return ptr(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0);
}

static int64_t plan_ops(struct desc *plan, int64_t *pointwise)
{
	struct desc *g = plan_graph(plan);
	struct attr *ops = g ? find(g, CUDNN_ATTR_OPERATIONGRAPH_OPS) : NULL;

	*pointwise = 0;
	for (int64_t i = 0; ops && i < ops->count; i++)
		*pointwise +=
			ptr(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, (int)i)->type ==
			CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR;
	return ops ? ops->count : 0;
}

EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h,
					 cudnnBackendDescriptor_t plan,
					 cudnnBackendDescriptor_t vp)
{
	int64_t pw, n;

	(void)h;
	if (!((struct desc *)plan)->final || !((struct desc *)vp)->final ||
	    !pack_complete(plan, vp))
		return CUDNN_STATUS_BAD_PARAM;
	n = plan_ops(plan, &pw);
	write_outputs(plan_graph(plan), vp);
	if (pw == n) { /* pointwise alone: 2 us an operation */
		kernel(2 * (double)n);
		return CUDNN_STATUS_SUCCESS;
	}
	if (paired(i64(plan, CUDNN_ATTR_ENGINE_GLOBAL_INDEX)))
		kernel(pair_us(plan));
	else
		run(i64(plan, CUDNN_ATTR_ENGINE_GLOBAL_INDEX),
		    find(plan, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)
			    ? i64(plan, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)
			    : -1);
	if (pw) /* 1 us an operation fused after it */
		kernel((double)pw);
	return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------ legacy convolutions */

EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d)
{
	*d = calloc(1, 64);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d)
{
	*d = calloc(1, 64);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t
cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d)
{
	*d = calloc(1, 64);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t
cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

/* A tensor descriptor keeps its dimensions (an RNN's h and c are
 * checked against its descriptor). */
struct fake_tensor {
	int n, dims[8];
	size_t bytes; /* as far as its strides reach */
};

EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d,
						cudnnDataType_t t, int n,
						const int *dims,
						const int *strides)
{
	struct fake_tensor *f = (struct fake_tensor *)d;

	if (n < 1 || n > 8)
		return CUDNN_STATUS_BAD_PARAM;
	f->n = n;
	memcpy(f->dims, dims, (size_t)n * sizeof(*dims));
	f->bytes = elem_size(t);
	for (int i = 0; i < n; i++)
		f->bytes += (size_t)(dims[i] - 1) * (size_t)strides[i] *
			    elem_size(t);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d,
						cudnnDataType_t t,
						cudnnTensorFormat_t f, int n,
						const int *dims)
{
	(void)d, (void)t, (void)f, (void)dims;
	return n > 0 && n <= 8 ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(
	cudnnConvolutionDescriptor_t d, int ph, int pw, int u, int v, int dh,
	int dw, cudnnConvolutionMode_t m, cudnnDataType_t t)
{
	(void)d, (void)ph, (void)pw, (void)m, (void)t;
	return u > 0 && v > 0 && dh > 0 && dw > 0 ? CUDNN_STATUS_SUCCESS
						  : CUDNN_STATUS_BAD_PARAM;
}

EXPORT cudnnStatus_t cudnnSetConvolutionNdDescriptor(
	cudnnConvolutionDescriptor_t d, int n, const int *pad,
	const int *stride, const int *dil, cudnnConvolutionMode_t m,
	cudnnDataType_t t)
{
	(void)d, (void)n, (void)pad, (void)stride, (void)dil, (void)m, (void)t;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d,
						 cudnnMathType_t m)
{
	(void)d, (void)m;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t
cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int g)
{
	(void)d;
	return g > 0 ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x,
	const cudnnFilterDescriptor_t w, const cudnnConvolutionDescriptor_t c,
	const cudnnTensorDescriptor_t y, const int want, int *n,
	cudnnConvolutionFwdAlgoPerf_t *perf)
{
	(void)h, (void)x, (void)w, (void)c, (void)y;
	take("FAKE_HEUR_US"); /* a heuristic, as a backend one */
	*n = want < 3 ? want : 3;
	for (int i = 0; i < *n; i++)
		perf[i] = (cudnnConvolutionFwdAlgoPerf_t){ .algo = i,
							   .status = 0 };
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
	cudnnHandle_t h, const cudnnTensorDescriptor_t x,
	const cudnnFilterDescriptor_t w, const cudnnConvolutionDescriptor_t c,
	const cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t a,
	size_t *ws)
{
	(void)h, (void)x, (void)w, (void)c, (void)y;
	*ws = 128 * (size_t)a;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnConvolutionForward(
	cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,
	const void *x, const cudnnFilterDescriptor_t wd, const void *w,
	const cudnnConvolutionDescriptor_t c, cudnnConvolutionFwdAlgo_t a,
	void *ws, size_t wss, const void *beta,
	const cudnnTensorDescriptor_t yd, void *y)
{
	(void)h, (void)xd, (void)wd, (void)c;
	if (!alpha || !beta || !x || !w || !y || (wss && !ws))
		return CUDNN_STATUS_BAD_PARAM;
	memset(y, 0, ((const struct fake_tensor *)yd)->bytes);
	run(a, -1);
	return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------- other legacy calls: 10 us each */

EXPORT cudnnStatus_t cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t *d)
{
	*d = calloc(1, 64);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t d,
						 cudnnPoolingMode_t m,
						 cudnnNanPropagation_t nan,
						 int wh, int ww, int vp, int hp,
						 int vs, int hs)
{
	(void)d, (void)m, (void)nan, (void)vp, (void)hp;
	return wh > 0 && ww > 0 && vs > 0 && hs > 0 ? CUDNN_STATUS_SUCCESS
						    : CUDNN_STATUS_BAD_PARAM;
}

EXPORT cudnnStatus_t cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t d,
						 cudnnPoolingMode_t m,
						 cudnnNanPropagation_t nan,
						 int n, const int *w,
						 const int *p, const int *s)
{
	(void)d, (void)m, (void)nan, (void)w, (void)p, (void)s;
	return n > 0 ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

EXPORT cudnnStatus_t
cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *d)
{
	*d = calloc(1, 64);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t
cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d,
						  cudnnActivationMode_t m,
						  cudnnNanPropagation_t nan,
						  double coef)
{
	(void)d, (void)m, (void)nan, (void)coef;
	return CUDNN_STATUS_SUCCESS;
}

/* A legacy call with its descriptor (when it has one), scalars and data
 * given: one run. */
static cudnnStatus_t legacy_run(bool ok)
{
	if (!ok)
		return CUDNN_STATUS_BAD_PARAM;
	run(-1, -1);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnPoolingForward(
	cudnnHandle_t h, const cudnnPoolingDescriptor_t p, const void *alpha,
	const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
	const cudnnTensorDescriptor_t yd, void *y)
{
	(void)h;
	return legacy_run(p && alpha && beta && xd && x && yd && y);
}

EXPORT cudnnStatus_t cudnnActivationForward(
	cudnnHandle_t h, cudnnActivationDescriptor_t a, const void *alpha,
	const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
	const cudnnTensorDescriptor_t yd, void *y)
{
	(void)h;
	return legacy_run(a && alpha && beta && xd && x && yd && y);
}

EXPORT cudnnStatus_t cudnnSoftmaxForward(
	cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
	const void *alpha, const cudnnTensorDescriptor_t xd, const void *x,
	const void *beta, const cudnnTensorDescriptor_t yd, void *y)
{
	(void)h, (void)mode;
	return legacy_run(algo <= CUDNN_SOFTMAX_LOG && alpha && beta && xd &&
			  x && yd && y);
}

/* Training: the doubles must arrive where the program put them (the
 * test's call sets 0.1 and 1e-5). */
EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTraining(
	cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *alpha,
	const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
	const cudnnTensorDescriptor_t yd, void *y,
	const cudnnTensorDescriptor_t pd, const void *scale, const void *bias,
	double factor, void *rmean, void *rvar, double eps, void *smean,
	void *sinv)
{
	(void)h, (void)mode;
	return legacy_run(alpha && beta && xd && x && yd && y && pd && scale &&
			  bias && rmean && rvar && smean && sinv &&
			  factor == 0.1 && eps == 1e-5);
}

/* ----------------------------------------- batch normalization's Ex */

/* What a forward in training leaves in a reserve space for the backward
 * to read: replay must run one before it times a backward. */
#define FAKE_BN_RESERVE 256
#define FAKE_BN_WRITTEN 0x424e4658u
#define FAKE_RNN_FWD    0x524e4e46u
#define FAKE_RNN_BWD    0x524e4e42u

static bool holds(const void *p, uint32_t magic)
{
	uint32_t v;

	if (!p)
		return false;
	memcpy(&v, p, 4);
	return v == magic;
}

EXPORT cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
	cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
	const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t z,
	const cudnnTensorDescriptor_t y, const cudnnTensorDescriptor_t p,
	const cudnnActivationDescriptor_t a, size_t *ws)
{
	(void)h, (void)mode, (void)ops, (void)z, (void)a;
	*ws = 512;
	return x && y && p ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

EXPORT cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
	cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
	const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t y,
	const cudnnTensorDescriptor_t dy, const cudnnTensorDescriptor_t dz,
	const cudnnTensorDescriptor_t dx, const cudnnTensorDescriptor_t p,
	const cudnnActivationDescriptor_t a, size_t *ws)
{
	(void)h, (void)mode, (void)ops, (void)y, (void)dz, (void)a;
	*ws = 768;
	return x && dy && dx && p ? CUDNN_STATUS_SUCCESS
				  : CUDNN_STATUS_BAD_PARAM;
}

EXPORT cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
	cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
	const cudnnActivationDescriptor_t a, const cudnnTensorDescriptor_t x,
	size_t *rs)
{
	(void)h, (void)mode, (void)ops, (void)a;
	*rs = FAKE_BN_RESERVE;
	return x ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

/* bnOps BN: no z and no activation, as the test's trace has it */
EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
	cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
	const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd,
	const void *x, const cudnnTensorDescriptor_t zd, const void *z,
	const cudnnTensorDescriptor_t yd, void *y,
	const cudnnTensorDescriptor_t pd, const void *scale, const void *bias,
	double factor, void *rmean, void *rvar, double eps, void *smean,
	void *sinv, cudnnActivationDescriptor_t a, void *ws, size_t wss,
	void *rs, size_t rss)
{
	(void)h, (void)mode, (void)factor;
	bool ok = alpha && beta && xd && x && yd && y && pd && scale && bias &&
		  rmean && rvar && smean && sinv && eps == 1e-5 &&
		  (ops != CUDNN_BATCHNORM_OPS_BN || (!zd && !z && !a)) && ws &&
		  wss == 512 && rs && rss == FAKE_BN_RESERVE;
	if (ok)
		memcpy(rs, &(uint32_t){ FAKE_BN_WRITTEN }, 4);
	return legacy_run(ok);
}

EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(
	cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
	const void *ad, const void *bd, const void *ap, const void *bp,
	const cudnnTensorDescriptor_t xd, const void *x,
	const cudnnTensorDescriptor_t yd, const void *y,
	const cudnnTensorDescriptor_t dyd, const void *dy,
	const cudnnTensorDescriptor_t dzd, void *dz,
	const cudnnTensorDescriptor_t dxd, void *dx,
	const cudnnTensorDescriptor_t pd, const void *scale, const void *bias,
	void *dscale, void *dbias, double eps, const void *smean,
	const void *sinv, cudnnActivationDescriptor_t a, void *ws, size_t wss,
	void *rs, size_t rss)
{
	(void)h, (void)mode, (void)yd, (void)y, (void)bias;
	return legacy_run(
		ad && bd && ap && bp && xd && x && dyd && dy && dxd && dx &&
		pd && scale && dscale && dbias && smean && sinv &&
		eps == 1e-5 &&
		(ops != CUDNN_BATCHNORM_OPS_BN || (!dzd && !dz && !a)) && ws &&
		wss == 768 && rss == FAKE_BN_RESERVE &&
		holds(rs, FAKE_BN_WRITTEN));
}

/* --------------------------------------------------------------- RNNs */

struct fake_dropout {
	float p;
	void *states;
	size_t bytes;
	unsigned long long seed;
};

struct fake_rnn_data {
	int steps, batch, vec, lengths[64];
};

struct fake_rnn {
	int cell, hidden, layers;
	bool dropped; /* its dropout descriptor set as the test recorded */
};

EXPORT cudnnStatus_t cudnnCreateDropoutDescriptor(cudnnDropoutDescriptor_t *d)
{
	*d = calloc(1, sizeof(struct fake_dropout));
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroyDropoutDescriptor(cudnnDropoutDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDropoutGetStatesSize(cudnnHandle_t h, size_t *n)
{
	(void)h;
	*n = 1024;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t d,
					       cudnnHandle_t h, float p,
					       void *states, size_t bytes,
					       unsigned long long seed)
{
	struct fake_dropout *f = (struct fake_dropout *)d;

	(void)h;
	if (p > 0 && (!states || bytes != 1024))
		return CUDNN_STATUS_BAD_PARAM;
	*f = (struct fake_dropout){ p, states, bytes, seed };
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t *d)
{
	*d = calloc(1, sizeof(struct fake_rnn));
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroyRNNDescriptor(cudnnRNNDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetRNNDescriptor_v8(
	cudnnRNNDescriptor_t d, cudnnRNNAlgo_t algo, cudnnRNNMode_t cell,
	cudnnRNNBiasMode_t bias, cudnnDirectionMode_t dir,
	cudnnRNNInputMode_t in, cudnnDataType_t t, cudnnDataType_t prec,
	cudnnMathType_t math, int32_t in_size, int32_t hidden, int32_t proj,
	int32_t layers, cudnnDropoutDescriptor_t drop, uint32_t aux)
{
	struct fake_rnn *r = (struct fake_rnn *)d;
	const struct fake_dropout *f = (const struct fake_dropout *)drop;

	(void)algo, (void)bias, (void)dir, (void)in, (void)t, (void)prec,
		(void)math, (void)aux;
	if (in_size < 1 || hidden < 1 || proj > hidden || layers < 1)
		return CUDNN_STATUS_BAD_PARAM;
	*r = (struct fake_rnn){ cell, hidden, layers,
				f && f->p == 0.25f && f->seed == 42 &&
					f->states };
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t *d)
{
	*d = calloc(1, sizeof(struct fake_rnn_data));
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroyRNNDataDescriptor(cudnnRNNDataDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t d,
					       cudnnDataType_t t,
					       cudnnRNNDataLayout_t layout,
					       int steps, int batch, int vec,
					       const int lengths[], void *fill)
{
	struct fake_rnn_data *r = (struct fake_rnn_data *)d;

	(void)t, (void)layout, (void)fill;
	if (batch < 1 || batch > 64 || steps < 1 || vec < 1)
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < batch; i++)
		if (lengths[i] < 1 || lengths[i] > steps)
			return CUDNN_STATUS_BAD_PARAM;
	r->steps = steps, r->batch = batch, r->vec = vec;
	memcpy(r->lengths, lengths, (size_t)batch * sizeof(*lengths));
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t h,
						cudnnRNNDescriptor_t d,
						size_t *n)
{
	(void)h, (void)d;
	*n = 4096;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t h,
					       cudnnRNNDescriptor_t d,
					       cudnnForwardMode_t mode,
					       cudnnRNNDataDescriptor_t x,
					       size_t *ws, size_t *rs)
{
	(void)h, (void)d, (void)x;
	*ws = 1024;
	*rs = mode == CUDNN_FWD_MODE_TRAINING ? 2048 : 0;
	return CUDNN_STATUS_SUCCESS;
}

/* h's or c's descriptor: [layers, batch, size] (then 1s, as PyTorch
 * gives them) */
static bool state_ok(cudnnTensorDescriptor_t d, const struct fake_rnn *r,
		     const struct fake_rnn_data *x)
{
	const struct fake_tensor *t = (const struct fake_tensor *)d;

	for (int i = 3; t && i < t->n; i++)
		if (t->dims[i] != 1)
			return false;
	return t && t->n >= 3 && t->dims[0] == r->layers &&
	       t->dims[1] == x->batch && t->dims[2] == r->hidden;
}

/* Every run checks what replay set from the trace: the dropout as
 * recorded, the sequence lengths on the device the x descriptor's, h
 * and c (when given) of the RNN's shape, the spaces of the sizes
 * asked. */
static bool rnn_ok(cudnnRNNDescriptor_t d, const int32_t *dev_lengths,
		   cudnnRNNDataDescriptor_t xd, cudnnTensorDescriptor_t hd,
		   cudnnTensorDescriptor_t cd, size_t wss, const void *w,
		   size_t ws_size, const void *ws)
{
	const struct fake_rnn *r = (const struct fake_rnn *)d;
	const struct fake_rnn_data *x = (const struct fake_rnn_data *)xd;

	return r && r->dropped && x && state_ok(hd, r, x) &&
	       (!cd || state_ok(cd, r, x)) && dev_lengths &&
	       !memcmp(dev_lengths, x->lengths,
		       (size_t)x->batch * sizeof(*dev_lengths)) &&
	       wss == 4096 && w && ws_size == 1024 && ws;
}

EXPORT cudnnStatus_t cudnnRNNForward(
	cudnnHandle_t h, cudnnRNNDescriptor_t d, cudnnForwardMode_t mode,
	const int32_t lengths[], cudnnRNNDataDescriptor_t xd, const void *x,
	cudnnRNNDataDescriptor_t yd, void *y, cudnnTensorDescriptor_t hd,
	const void *hx, void *hy, cudnnTensorDescriptor_t cd, const void *cx,
	void *cy, size_t wss, const void *w, size_t ws_size, void *ws,
	size_t rss, void *rs)
{
	bool training = mode == CUDNN_FWD_MODE_TRAINING;
	bool ok = rnn_ok(d, lengths, xd, hd, cd, wss, w, ws_size, ws) && x &&
		  yd && y && hx && hy && cd && cx && cy &&
		  (!training || (rs && rss == 2048));

	(void)h;
	if (ok && training)
		memcpy(rs, &(uint32_t){ FAKE_RNN_FWD }, 4);
	return legacy_run(ok);
}

EXPORT cudnnStatus_t cudnnRNNBackwardData_v8(
	cudnnHandle_t h, cudnnRNNDescriptor_t d, const int32_t lengths[],
	cudnnRNNDataDescriptor_t yd, const void *y, const void *dy,
	cudnnRNNDataDescriptor_t xd, void *dx, cudnnTensorDescriptor_t hd,
	const void *hx, const void *dhy, void *dhx, cudnnTensorDescriptor_t cd,
	const void *cx, const void *dcy, void *dcx, size_t wss, const void *w,
	size_t ws_size, void *ws, size_t rss, void *rs)
{
	bool ok = rnn_ok(d, lengths, xd, hd, cd, wss, w, ws_size, ws) && yd &&
		  y && dy && dx && hd && hx && dhy && dhx && cd && cx && dcy &&
		  dcx && rss == 2048 &&
		  (holds(rs, FAKE_RNN_FWD) || holds(rs, FAKE_RNN_BWD));

	(void)h;
	if (ok)
		memcpy(rs, &(uint32_t){ FAKE_RNN_BWD }, 4);
	return legacy_run(ok);
}

EXPORT cudnnStatus_t cudnnRNNBackwardWeights_v8(
	cudnnHandle_t h, cudnnRNNDescriptor_t d, cudnnWgradMode_t add,
	const int32_t lengths[], cudnnRNNDataDescriptor_t xd, const void *x,
	cudnnTensorDescriptor_t hd, const void *hx, cudnnRNNDataDescriptor_t yd,
	const void *y, size_t wss, void *dw, size_t ws_size, void *ws,
	size_t rss, void *rs)
{
	(void)h, (void)add;
	return legacy_run(
		rnn_ok(d, lengths, xd, hd, NULL, wss, dw, ws_size, ws) && x &&
		hd && hx && yd && y && rss == 2048 && holds(rs, FAKE_RNN_BWD));
}

/* ----------------------------------------------------------- cuBLASLt */

static int lt_handle;

struct lt_desc {
	cublasComputeType_t compute;
	cudaDataType_t scale;
	int32_t trans[2];
	uint32_t epilogue;
	uint64_t bias, aux;
	int64_t aux_ld;
};

struct lt_layout {
	cudaDataType_t type;
	uint64_t rows, cols;
	int64_t ld, stride;
	int32_t batch;
};

/* What the fake keeps in a cublasLtMatmulAlgo_t's bytes. */
struct lt_cfg {
	uint32_t magic;
	int32_t id;
	uint32_t attr[CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID + 1];
};
#define LT_MAGIC 0x4c54414c

static const int lt_ids[] = { 1, 6, 21, 66 };
static const uint32_t lt_tiles[] = { 15, 20 };

static bool lt_id_known(int id)
{
	for (size_t i = 0; i < sizeof(lt_ids) / sizeof(lt_ids[0]); i++)
		if (lt_ids[i] == id)
			return true;
	return false;
}

static struct lt_cfg *cfg_of(const cublasLtMatmulAlgo_t *a)
{
	struct lt_cfg *c = (struct lt_cfg *)(uintptr_t)a->data;

	return c->magic == LT_MAGIC ? c : NULL;
}

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
	*h = (cublasLtHandle_t)&lt_handle;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT size_t cublasLtGetVersion(void)
{
	return 130100;
}

EXPORT const char *cublasLtGetStatusString(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS:
		return "CUBLAS_STATUS_SUCCESS";
	case CUBLAS_STATUS_NOT_SUPPORTED:
		return "CUBLAS_STATUS_NOT_SUPPORTED";
	default:
		return "CUBLAS_STATUS_INVALID_VALUE";
	}
}

EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d,
					       cublasComputeType_t compute,
					       cudaDataType_t scale)
{
	struct lt_desc *m = calloc(1, sizeof(*m));

	m->compute = compute;
	m->scale = scale;
	m->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
	*d = (cublasLtMatmulDesc_t)m;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
	free(d);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(
	cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
	const void *buf, size_t size)
{
	struct lt_desc *m = (struct lt_desc *)d;

	switch (attr) {
	case CUBLASLT_MATMUL_DESC_TRANSA:
	case CUBLASLT_MATMUL_DESC_TRANSB:
		if (size != 4)
			break;
		memcpy(&m->trans[attr - CUBLASLT_MATMUL_DESC_TRANSA], buf, 4);
		return CUBLAS_STATUS_SUCCESS;
	case CUBLASLT_MATMUL_DESC_EPILOGUE:
		if (size != 4)
			break;
		memcpy(&m->epilogue, buf, 4);
		return CUBLAS_STATUS_SUCCESS;
	case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
	case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
		if (size != 8)
			break;
		memcpy(attr == CUBLASLT_MATMUL_DESC_BIAS_POINTER ? &m->bias
								 : &m->aux,
		       buf, 8);
		return CUBLAS_STATUS_SUCCESS;
	case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
		if (size != 8)
			break;
		memcpy(&m->aux_ld, buf, 8);
		return CUBLAS_STATUS_SUCCESS;
	case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE:
		return size == 8 ? CUBLAS_STATUS_SUCCESS
				 : CUBLAS_STATUS_INVALID_VALUE;
	case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
	case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
		return size == 4 ? CUBLAS_STATUS_SUCCESS
				 : CUBLAS_STATUS_INVALID_VALUE;
	default:
		break;
	}
	return CUBLAS_STATUS_INVALID_VALUE;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l,
						 cudaDataType type,
						 uint64_t rows, uint64_t cols,
						 int64_t ld)
{
	struct lt_layout *m;

	if (ld < (int64_t)rows)
		return CUBLAS_STATUS_INVALID_VALUE;
	m = calloc(1, sizeof(*m));
	*m = (struct lt_layout){ type, rows, cols, ld, 0, 1 };
	*l = (cublasLtMatrixLayout_t)m;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
	free(l);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(
	cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
	const void *buf, size_t size)
{
	struct lt_layout *m = (struct lt_layout *)l;

	if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && size == 4)
		memcpy(&m->batch, buf, 4);
	else if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET &&
		 size == 8)
		memcpy(&m->stride, buf, 8);
	else
		return CUBLAS_STATUS_INVALID_VALUE;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
	*p = (cublasLtMatmulPreference_t)calloc(1, sizeof(uint64_t));
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
	free(p);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
	cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr,
	const void *buf, size_t size)
{
	if (attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES || size != 8)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(p, buf, 8);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t h,
					     cublasComputeType_t compute,
					     cudaDataType_t scale,
					     cudaDataType_t a, cudaDataType_t b,
					     cudaDataType_t c, cudaDataType_t d,
					     int id, cublasLtMatmulAlgo_t *algo)
{
	struct lt_cfg cfg = { .magic = LT_MAGIC, .id = id };

	(void)compute, (void)scale, (void)a, (void)b, (void)c, (void)d;
	if (h != (cublasLtHandle_t)&lt_handle || !lt_id_known(id))
		return CUBLAS_STATUS_NOT_SUPPORTED;
	cfg.attr[CUBLASLT_ALGO_CONFIG_SPLITK_NUM] = 1;
	memset(algo, 0, sizeof(*algo));
	memcpy(algo->data, &cfg, sizeof(cfg));
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoGetIds(
	cublasLtHandle_t h, cublasComputeType_t compute, cudaDataType_t scale,
	cudaDataType_t a, cudaDataType_t b, cudaDataType_t c, cudaDataType_t d,
	int want, int ids[], int *got)
{
	int n = (int)(sizeof(lt_ids) / sizeof(lt_ids[0]));

	(void)h, (void)compute, (void)scale, (void)a, (void)b, (void)c, (void)d;
	*got = want < n ? want : n;
	memcpy(ids, lt_ids, (size_t)*got * sizeof(*ids));
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(
	cublasLtMatmulAlgo_t *a, cublasLtMatmulAlgoConfigAttributes_t attr,
	const void *buf, size_t size)
{
	struct lt_cfg *c = cfg_of(a);
	size_t want = attr >= CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID ? 2 : 4;
	uint32_t v = 0;

	if (!c || attr == CUBLASLT_ALGO_CONFIG_ID ||
	    attr > CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID || size != want)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(&v, buf, size); /* little-endian */
	c->attr[attr] = v;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t
cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *a,
				     cublasLtMatmulAlgoConfigAttributes_t attr,
				     void *buf, size_t size, size_t *written)
{
	const struct lt_cfg *c = cfg_of(a);
	size_t want = attr >= CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID ? 2 : 4;
	uint32_t v;

	if (!c || attr > CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID || size < want)
		return CUBLAS_STATUS_INVALID_VALUE;
	v = attr == CUBLASLT_ALGO_CONFIG_ID ? (uint32_t)c->id : c->attr[attr];
	memcpy(buf, &v, want);
	*written = want;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(
	const cublasLtMatmulAlgo_t *a, cublasLtMatmulAlgoCapAttributes_t attr,
	void *buf, size_t size, size_t *written)
{
	if (!cfg_of(a) || attr != CUBLASLT_ALGO_CAP_TILE_IDS)
		return CUBLAS_STATUS_INVALID_VALUE;
	*written = sizeof(lt_tiles);
	if (size >= sizeof(lt_tiles))
		memcpy(buf, lt_tiles, sizeof(lt_tiles));
	return CUBLAS_STATUS_SUCCESS;
}

/* Whether the layouts make one product with the descriptor's
 * transposes: op(A) m x k, op(B) k x n, C and D m x n, one batch. */
static bool lt_shapes(const struct lt_desc *m, const struct lt_layout *a,
		      const struct lt_layout *b, const struct lt_layout *c,
		      const struct lt_layout *d)
{
	uint64_t am = m->trans[0] ? a->cols : a->rows,
		 ak = m->trans[0] ? a->rows : a->cols,
		 bk = m->trans[1] ? b->cols : b->rows,
		 bn = m->trans[1] ? b->rows : b->cols;

	return am == d->rows && ak == bk && bn == d->cols &&
	       c->rows == d->rows && c->cols == d->cols &&
	       a->batch == d->batch && b->batch == d->batch &&
	       c->batch == d->batch;
}

/* The workspace algorithm c needs, or a refusal. */
static cublasStatus_t lt_check(const struct lt_desc *m,
			       const struct lt_layout *const l[4],
			       const struct lt_cfg *c, size_t *ws)
{
	if (!c || !lt_id_known(c->id) || !lt_shapes(m, l[0], l[1], l[2], l[3]))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!c->attr[CUBLASLT_ALGO_CONFIG_TILE_ID])
		return CUBLAS_STATUS_NOT_SUPPORTED;
	*ws = c->id == 1 ? 1024 : 0;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoCheck(
	cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
	cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
	cublasLtMatrixLayout_t dd, const cublasLtMatmulAlgo_t *algo,
	cublasLtMatmulHeuristicResult_t *r)
{
	const struct lt_layout *l[4] = { (struct lt_layout *)a,
					 (struct lt_layout *)b,
					 (struct lt_layout *)c,
					 (struct lt_layout *)dd };
	size_t ws = 0;
	cublasStatus_t s = lt_check((struct lt_desc *)d, l, cfg_of(algo), &ws);

	(void)h;
	memset(r, 0, sizeof(*r));
	r->algo = *algo;
	r->workspaceSize = ws;
	r->state = s;
	return s;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
	cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
	cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
	cublasLtMatrixLayout_t dd, cublasLtMatmulPreference_t p, int want,
	cublasLtMatmulHeuristicResult_t r[], int *got)
{
	static const struct {
		int id;
		uint32_t tile, splitk, custom, stages, cluster;
	} offer[] = { { 1, 20, 1, 0, 35, 0 },
		      { 66, 15, 1, 1, 35, 3 },
		      { 21, 20, 1, 0, 0, 0 } };
	uint64_t max_ws;

	memcpy(&max_ws, p, 8);
	*got = 0;
	for (size_t i = 0; i < sizeof(offer) / sizeof(offer[0]); i++) {
		cublasLtMatmulAlgo_t algo;
		struct lt_cfg *cfg;
		if (*got == want || cublasLtMatmulAlgoInit(h, 0, 0, 0, 0, 0, 0,
							   offer[i].id, &algo))
			break;
		cfg = cfg_of(&algo);
		cfg->attr[CUBLASLT_ALGO_CONFIG_TILE_ID] = offer[i].tile;
		cfg->attr[CUBLASLT_ALGO_CONFIG_SPLITK_NUM] = offer[i].splitk;
		cfg->attr[CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION] = offer[i].custom;
		cfg->attr[CUBLASLT_ALGO_CONFIG_STAGES_ID] = offer[i].stages;
		cfg->attr[CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID] =
			offer[i].cluster;
		if (cublasLtMatmulAlgoCheck(h, d, a, b, c, dd, &algo,
					    &r[*got]) ==
			    CUBLAS_STATUS_SUCCESS &&
		    r[*got].workspaceSize <= max_ws)
			++*got;
	}
	return *got ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
				     const void *alpha, const void *A,
				     cublasLtMatrixLayout_t a, const void *B,
				     cublasLtMatrixLayout_t b, const void *beta,
				     const void *C, cublasLtMatrixLayout_t c,
				     void *D, cublasLtMatrixLayout_t dd,
				     const cublasLtMatmulAlgo_t *algo, void *ws,
				     size_t ws_size, cudaStream_t stream)
{
	const struct lt_layout *l[4] = { (struct lt_layout *)a,
					 (struct lt_layout *)b,
					 (struct lt_layout *)c,
					 (struct lt_layout *)dd };
	const struct lt_desc *m = (struct lt_desc *)d;
	const struct lt_cfg *cfg = cfg_of(algo);
	const char *wrong = getenv("FAKE_GEMM_WRONG");
	size_t need = 0;
	cublasStatus_t s = lt_check(m, l, cfg, &need);

	(void)stream;
	if (s)
		return s;
	/* what the epilogue reads or writes is given */
	if (h != (cublasLtHandle_t)&lt_handle || !alpha || !beta || !A || !B ||
	    !C || !D || ws_size < need || (need && !ws) ||
	    ((m->epilogue & CUBLASLT_EPILOGUE_BIAS) && !m->bias) ||
	    ((m->epilogue & 128) && (!m->aux || m->aux_ld % 128)))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (wrong && atoi(wrong) == cfg->id)
		memset(D, 8, 16);
	run(cfg->id, 0);
	return CUBLAS_STATUS_SUCCESS;
}

/* -------------------------------------------------------------- CUPTI */

/* cupti_activity.h's values the fake knows */
#define CUPTI_KIND_CONCURRENT_KERNEL  10
#define CUPTI_ERROR_MAX_LIMIT_REACHED 12
#define CUPTI_ERROR_INVALID_PARAMETER 1
#define KERNEL_RECORD                 216 /* sizeof(CUpti_ActivityKernel10) */

static struct {
	void (*request)(uint8_t **, size_t *, size_t *);
	void (*complete)(void *, uint32_t, uint8_t *, size_t, size_t);
	bool kernels; /* CONCURRENT_KERNEL enabled */
	uint8_t *buf;
	size_t size, used;
} cupti;

/* The buffer handed back, filled or not. */
static void cupti_complete(void)
{
	if (cupti.buf)
		cupti.complete(NULL, 0, cupti.buf, cupti.size, cupti.used);
	cupti.buf = NULL;
}

static void kernel_ran(double start_us, double end_us)
{
	size_t max = 0;

	if (!cupti.kernels)
		return;
	if (cupti.buf && cupti.used + KERNEL_RECORD > cupti.size)
		cupti_complete();
	if (!cupti.buf)
		cupti.request(&cupti.buf, &cupti.size, &max);
	if (!cupti.buf || cupti.size < KERNEL_RECORD)
		return; /* dropped, as CUPTI drops it */
	uint8_t *r = cupti.buf + cupti.used;
	uint32_t kind = CUPTI_KIND_CONCURRENT_KERNEL;
	uint64_t start = (uint64_t)(start_us * 1e3),
		 end = (uint64_t)(end_us * 1e3);
	memset(r, 0, KERNEL_RECORD);
	memcpy(r, &kind, sizeof(kind));
	memcpy(r + 16, &start, sizeof(start));
	memcpy(r + 24, &end, sizeof(end));
	cupti.used += KERNEL_RECORD;
}

EXPORT int cuptiActivityRegisterCallbacks(
	void (*request)(uint8_t **, size_t *, size_t *),
	void (*complete)(void *, uint32_t, uint8_t *, size_t, size_t))
{
	if (!request || !complete)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cupti.request = request;
	cupti.complete = complete;
	return 0;
}

EXPORT int cuptiActivityEnable(int kind)
{
	if (!cupti.request)
		return CUPTI_ERROR_INVALID_PARAMETER;
	cupti.kernels |= kind == CUPTI_KIND_CONCURRENT_KERNEL;
	return 0;
}

EXPORT int cuptiActivityDisable(int kind)
{
	cupti.kernels &= kind != CUPTI_KIND_CONCURRENT_KERNEL;
	return 0;
}

EXPORT int cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	cupti_complete();
	return 0;
}

EXPORT int cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec)
{
	uint8_t *next = *rec ? (uint8_t *)*rec + KERNEL_RECORD : buf;

	if (next + KERNEL_RECORD > buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = next;
	return 0;
}

EXPORT int cuptiGetTimestamp(uint64_t *t)
{
	*t = (uint64_t)(clock_us * 1e3);
	return 0;
}
