/*
 * gpu-engine-choice.c - a backend convolution run with the engine its
 * command line names, timed by itself: the program replay's engine
 * choice is checked against. Without arguments it runs the first engine
 * config cuDNN's FALLBACK heuristics give that builds (a slow, safe
 * choice, as a program that never asks for better would run); with
 * ENGINE [KNOB=VALUE...] it runs that engine with those knob choices
 * (names as cudnnBackendKnobType_t's without CUDNN_KNOB_TYPE_).
 *
 * The convolution: x [32,64,56,56] fp16 NHWC, w [64,64,3,3], padding 1,
 * fp32 compute. After 5 warm-up runs, 11 batches of 20 runs, each batch
 * between two events; prints "engine=E knobs=K median_us=T" (the median
 * batch over 20). Exits 77 without a GPU.
 *
 * usage: gpu-engine-choice [ENGINE [KNOB=VALUE...]]
 */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-check.h"

enum { N = 32, C = 64, H = 56, W = 56, K = 64, R = 3, S = 3 };
enum { UID_X = 1, UID_W = 2, UID_Y = 3 };
enum { WARMUP = 5, BATCHES = 11, PER_BATCH = 20 };

static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type)
{
	cudnnBackendDescriptor_t d;
	CK(cudnnBackendCreateDescriptor(type, &d));
	return d;
}

/* An NHWC fp16 tensor of dims n, c, h, w. */
static cudnnBackendDescriptor_t tensor(int64_t uid, int64_t n, int64_t c,
				       int64_t h, int64_t w)
{
	int64_t dims[4] = { n, c, h, w };
	int64_t strides[4] = { c * h * w, 1, w * c, c };

	return tensor_desc(uid, CUDNN_DATA_HALF, 4, dims, strides, false);
}

static cudnnBackendDescriptor_t graph_of(cudnnHandle_t h)
{
	cudnnBackendDescriptor_t x = tensor(UID_X, N, C, H, W),
				 w = tensor(UID_W, K, C, R, S),
				 y = tensor(UID_Y, N, K, H, W);
	cudnnBackendDescriptor_t conv =
		make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
	cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
	int64_t dims = 2, pad[2] = { 1, 1 }, one[2] = { 1, 1 };

	set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
	    &f32);
	set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE,
	    1, &mode);
	set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1,
	    &dims);
	set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2,
	    pad);
	set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2,
	    pad);
	set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one);
	set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2,
	    one);
	CK(cudnnBackendFinalize(conv));

	cudnnBackendDescriptor_t op =
		make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
	float alpha = 1, beta = 0;
	set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
	set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
	set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
	set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
	    CUDNN_TYPE_FLOAT, 1, &alpha);
	set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT,
	    1, &beta);
	CK(cudnnBackendFinalize(op));

	cudnnBackendDescriptor_t g =
		make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
	    &op);
	set(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
	CK(cudnnBackendFinalize(g));
	return g;
}

/* The knob type named name ("TILE_SIZE"), or -1. */
static int knob_type(const char *name)
{
	static const struct {
		const char *name;
		cudnnBackendKnobType_t type;
	} knobs[] = {
		{ "SPLIT_K", CUDNN_KNOB_TYPE_SPLIT_K },
		{ "SWIZZLE", CUDNN_KNOB_TYPE_SWIZZLE },
		{ "TILE_SIZE", CUDNN_KNOB_TYPE_TILE_SIZE },
		{ "EDGE", CUDNN_KNOB_TYPE_EDGE },
		{ "KBLOCK", CUDNN_KNOB_TYPE_KBLOCK },
		{ "LDGA", CUDNN_KNOB_TYPE_LDGA },
		{ "LDGB", CUDNN_KNOB_TYPE_LDGB },
		{ "CHUNK_K", CUDNN_KNOB_TYPE_CHUNK_K },
		{ "SPLIT_H", CUDNN_KNOB_TYPE_SPLIT_H },
		{ "WINO_TILE", CUDNN_KNOB_TYPE_WINO_TILE },
		{ "MULTIPLY", CUDNN_KNOB_TYPE_MULTIPLY },
		{ "SPLIT_K_BUF", CUDNN_KNOB_TYPE_SPLIT_K_BUF },
		{ "TILEK", CUDNN_KNOB_TYPE_TILEK },
		{ "STAGES", CUDNN_KNOB_TYPE_STAGES },
		{ "REDUCTION_MODE", CUDNN_KNOB_TYPE_REDUCTION_MODE },
		{ "CTA_SPLIT_K_MODE", CUDNN_KNOB_TYPE_CTA_SPLIT_K_MODE },
		{ "SPLIT_K_SLC", CUDNN_KNOB_TYPE_SPLIT_K_SLC },
		{ "IDX_MODE", CUDNN_KNOB_TYPE_IDX_MODE },
		{ "SPECFILT", CUDNN_KNOB_TYPE_SPECFILT },
		{ "KERNEL_CFG", CUDNN_KNOB_TYPE_KERNEL_CFG },
		{ "WORKSPACE", CUDNN_KNOB_TYPE_WORKSPACE },
		{ "TILE_CGA_M", CUDNN_KNOB_TYPE_TILE_CGA_M },
		{ "TILE_CGA_N", CUDNN_KNOB_TYPE_TILE_CGA_N },
		{ "BLOCK_SIZE", CUDNN_KNOB_TYPE_BLOCK_SIZE },
		{ "OCCUPANCY", CUDNN_KNOB_TYPE_OCCUPANCY },
		{ "ARRAY_SIZE_PER_THREAD",
		  CUDNN_KNOB_TYPE_ARRAY_SIZE_PER_THREAD },
		{ "SPLIT_COLS", CUDNN_KNOB_TYPE_SPLIT_COLS },
		{ "TILE_ROWS", CUDNN_KNOB_TYPE_TILE_ROWS },
		{ "TILE_COLS", CUDNN_KNOB_TYPE_TILE_COLS },
		{ "LOAD_SIZE", CUDNN_KNOB_TYPE_LOAD_SIZE },
		{ "CTA_COUNT", CUDNN_KNOB_TYPE_CTA_COUNT },
		{ "STREAM_K", CUDNN_KNOB_TYPE_STREAM_K },
		{ "SPLIT_P_SLC", CUDNN_KNOB_TYPE_SPLIT_P_SLC },
		{ "TILE_M", CUDNN_KNOB_TYPE_TILE_M },
		{ "TILE_N", CUDNN_KNOB_TYPE_TILE_N },
		{ "WARP_SPEC_CFG", CUDNN_KNOB_TYPE_WARP_SPEC_CFG },
		{ "SWAP_AB", CUDNN_KNOB_TYPE_SWAP_AB },
	};
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (!strcmp(knobs[i].name, name))
			return knobs[i].type;
	return -1;
}

/* The config of engine idx with the knobs "NAME=VALUE" of argv. */
static cudnnBackendDescriptor_t config(cudnnBackendDescriptor_t g, int64_t idx,
				       char **argv, int argc)
{
	cudnnBackendDescriptor_t e = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR),
				 cfg = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
				 k[32];
	int nk = 0;

	set(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR,
	    1, &g);
	set(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &idx);
	CK(cudnnBackendFinalize(e));
	for (int i = 0; i < argc && nk < 32; i++) {
		char name[64];
		long long v;
		if (sscanf(argv[i], "%63[A-Z_]=%lld", name, &v) != 2 ||
		    knob_type(name) < 0) {
			fprintf(stderr, "not a knob choice: %s\n", argv[i]);
			exit(2);
		}
		cudnnBackendKnobType_t t =
			(cudnnBackendKnobType_t)knob_type(name);
		int64_t value = v;
		k[nk] = make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
		set(k[nk], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
		    CUDNN_TYPE_KNOB_TYPE, 1, &t);
		set(k[nk], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64,
		    1, &value);
		CK(cudnnBackendFinalize(k[nk]));
		nk++;
	}
	set(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
	    &e);
	if (nk)
		set(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
		    CUDNN_TYPE_BACKEND_DESCRIPTOR, nk, k);
	CK(cudnnBackendFinalize(cfg));
	return cfg;
}

/* The first config the FALLBACK heuristics give that builds a plan. */
static int by_value(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int devices = 0;
	cudnnHandle_t h;
	cudaStream_t stream;

	if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
		fprintf(stderr, "no GPU\n");
		return 77;
	}
	CK(cudnnCreate(&h));
	CU(cudaStreamCreate(&stream));
	CK(cudnnSetStream(h, stream));
	cudnnBackendDescriptor_t g = graph_of(h), plan;
	if (argc > 1) {
		plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
		if (!plan_builds(
			    plan, h,
			    config(g, atoll(argv[1]), argv + 2, argc - 2))) {
			fprintf(stderr, "engine %s does not build\n", argv[1]);
			return 1;
		}
	} else {
		plan = first_plan(h, g, CUDNN_HEUR_MODE_FALLBACK);
	}

	size_t bytes[3] = { (size_t)N * C * H * W * 2,
			    (size_t)K * C * R * S * 2,
			    (size_t)N * K * H * W * 2 };
	void *ptrs[3], *ws = NULL;
	int64_t uids[3] = { UID_X, UID_W, UID_Y }, size = plan_workspace(plan);
	for (int i = 0; i < 3; i++) {
		CU(cudaMalloc(&ptrs[i], bytes[i]));
		CU(cudaMemset(ptrs[i], 0, bytes[i]));
	}
	if (size > 0)
		CU(cudaMalloc(&ws, (size_t)size));
	cudnnBackendDescriptor_t vp =
		make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
	set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3,
	    ptrs);
	set(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
	set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
	CK(cudnnBackendFinalize(vp));

	cudaEvent_t ev[2];
	float ms[BATCHES];
	CU(cudaEventCreate(&ev[0]));
	CU(cudaEventCreate(&ev[1]));
	for (int i = 0; i < WARMUP; i++)
		CK(cudnnBackendExecute(h, plan, vp));
	for (int b = 0; b < BATCHES; b++) {
		CU(cudaEventRecord(ev[0], stream));
		for (int i = 0; i < PER_BATCH; i++)
			CK(cudnnBackendExecute(h, plan, vp));
		CU(cudaEventRecord(ev[1], stream));
		CU(cudaEventSynchronize(ev[1]));
		CU(cudaEventElapsedTime(&ms[b], ev[0], ev[1]));
	}
	qsort(ms, BATCHES, sizeof(ms[0]), by_value);

	/* the engine and knobs the plan runs, as the program chose them */
	cudnnBackendDescriptor_t cfg = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
				 e = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
	int64_t n = 0, idx = -1;
	CK(cudnnBackendGetAttribute(
		plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
		CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg));
	CK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
				    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e));
	CK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
				    CUDNN_TYPE_INT64, 1, &n, &idx));
	printf("engine=%lld workspace=%lld median_us=%.3f\n", (long long)idx,
	       (long long)size, 1e3 * ms[BATCHES / 2] / PER_BATCH);
	return 0;
}
