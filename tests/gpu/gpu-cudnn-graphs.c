/*
 * gpu-cudnn-graphs.c - one cuDNN matrix product (fp16, 4 x 128x64 times
 * 64x128, fp32 compute) run every way a CUDA graph can run it, for the
 * check that each replayed kernel is tied to the call that put it in the
 * graph:
 *
 *   eager     cudnnBackendExecute, N times;
 *   capture   one cudnnBackendExecute captured from a stream, the graph
 *             instantiated and launched N times;
 *   populate  cudnnBackendPopulateCudaGraph into an empty graph, launched
 *             N times;
 *   child     that graph as the child node of a larger one (which clones
 *             it), launched N times; then cudnnBackendUpdateCudaGraph with
 *             a second output buffer and the executable graph updated,
 *             launched N times more.
 *
 * The plan is one whose engine has the behavior note
 * SUPPORTS_CUDA_GRAPH_NATIVE_API (when none has, populate and child are
 * skipped and said so). Every result is checked (all ones times all ones:
 * each output is K). Prints one line per mode with its executions and
 * launches; the trace says which kernels ran. Exits 77 without a GPU.
 */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-check.h"

enum { B = 4, M = 128, N = 128, K = 64 };
enum { UID_A = 1, UID_B = 2, UID_D = 3 };
#define HALF_ONE 0x3c00u

static int failed;

static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type)
{
	cudnnBackendDescriptor_t d;
	CK(cudnnBackendCreateDescriptor(type, &d));
	return d;
}

static cudnnBackendDescriptor_t tensor(int64_t uid, int64_t rows,
				       int64_t cols)
{
	int64_t dims[3] = { B, rows, cols };
	int64_t strides[3] = { rows * cols, cols, 1 };

	return tensor_desc(uid, CUDNN_DATA_HALF, 3, dims, strides, false);
}

/* Whether the engine of config cfg says it can populate CUDA graphs. */
static int native_graph(cudnnBackendDescriptor_t cfg)
{
	cudnnBackendDescriptor_t engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
	cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
	int64_t n = 0;
	int yes = 0;

	CK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
				    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
				    &engine));
	if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
				     CUDNN_TYPE_BEHAVIOR_NOTE,
				     CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n,
				     notes) == CUDNN_STATUS_SUCCESS)
		for (int64_t i = 0; i < n; i++)
			yes |= notes[i] ==
			       CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API;
	cudnnBackendDestroyDescriptor(engine);
	return yes;
}

static cudnnBackendDescriptor_t pack(void *a, void *b, void *d, void *ws)
{
	cudnnBackendDescriptor_t p = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
	void *ptrs[3] = { a, b, d };
	int64_t uids[3] = { UID_A, UID_B, UID_D };

	set(p, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3,
	    ptrs);
	set(p, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
	set(p, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
	CK(cudnnBackendFinalize(p));
	return p;
}

static void check(const char *mode, uint16_t *d)
{
	static uint16_t host[B * M * N];
	const uint16_t want = 0x5400; /* 64.0 in fp16 */

	CU(cudaDeviceSynchronize());
	CU(cudaMemcpy(host, d, sizeof(host), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		if (host[i] != want) {
			fprintf(stderr, "%s: D[%zu] = 0x%04x, want 0x%04x\n",
				mode, i, host[i], want);
			failed = 1;
			break;
		}
	CU(cudaMemset(d, 0, sizeof(host)));
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 5, devices = 0;

	if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
		fprintf(stderr, "no usable GPU\n");
		return 77;
	}
	cudaStream_t stream;
	cudnnHandle_t h;
	CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	CK(cudnnCreate(&h));
	CK(cudnnSetStream(h, stream));

	/* D = A x B */
	cudnnBackendDescriptor_t a = tensor(UID_A, M, K), b = tensor(UID_B, K, N),
				 d = tensor(UID_D, M, N);
	cudnnBackendDescriptor_t mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
	cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
	CK(cudnnBackendFinalize(mm));
	cudnnBackendDescriptor_t op =
		make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
	set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
	set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
	set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
	set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm);
	CK(cudnnBackendFinalize(op));
	cudnnBackendDescriptor_t graph =
		make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
	set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
	CK(cudnnBackendFinalize(graph));

	enum { MAXCFG = 32 };
	cudnnBackendDescriptor_t cfgs[MAXCFG];
	for (int i = 0; i < MAXCFG; i++)
		cfgs[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	cudnnBackendDescriptor_t heur =
		make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
	int64_t ncfg = heuristic_configs(heur, graph, CUDNN_HEUR_MODE_A, cfgs, MAXCFG);

	/* the first config that builds, preferring one that populates
	 * graphs */
	cudnnBackendDescriptor_t plan = NULL;
	int native = 0;
	for (int pass = 0; pass < 2 && !plan; pass++)
		for (int64_t i = 0; i < ncfg && !plan; i++) {
			if (pass == 0 && !native_graph(cfgs[i]))
				continue;
			cudnnBackendDescriptor_t p =
				make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
			if (plan_builds(p, h, cfgs[i])) {
				plan = p;
				native = pass == 0;
			} else {
				cudnnBackendDestroyDescriptor(p);
			}
		}
	if (!plan) {
		fprintf(stderr, "no engine config builds a plan\n");
		return 1;
	}
	int64_t ws_size = plan_workspace(plan);

	uint16_t *da, *db, *dd, *dd2;
	void *ws = NULL;
	static uint16_t ones[B * M * K > B * K * N ? B * M * K : B * K * N];
	for (size_t i = 0; i < sizeof(ones) / sizeof(ones[0]); i++)
		ones[i] = HALF_ONE;
	CU(cudaMalloc((void **)&da, sizeof(uint16_t) * B * M * K));
	CU(cudaMalloc((void **)&db, sizeof(uint16_t) * B * K * N));
	CU(cudaMalloc((void **)&dd, sizeof(uint16_t) * B * M * N));
	CU(cudaMalloc((void **)&dd2, sizeof(uint16_t) * B * M * N));
	CU(cudaMemcpy(da, ones, sizeof(uint16_t) * B * M * K,
		      cudaMemcpyHostToDevice));
	CU(cudaMemcpy(db, ones, sizeof(uint16_t) * B * K * N,
		      cudaMemcpyHostToDevice));
	if (ws_size)
		CU(cudaMalloc(&ws, (size_t)ws_size));
	cudnnBackendDescriptor_t vp = pack(da, db, dd, ws);

	/* eager */
	for (int i = 0; i < runs; i++)
		CK(cudnnBackendExecute(h, plan, vp));
	check("eager", dd);
	printf("eager: %d executions\n", runs);

	/* capture */
	cudaGraph_t cg;
	cudaGraphExec_t ce;
	CU(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
	CK(cudnnBackendExecute(h, plan, vp));
	CU(cudaStreamEndCapture(stream, &cg));
	CU(cudaGraphInstantiate(&ce, cg, 0));
	for (int i = 0; i < runs; i++)
		CU(cudaGraphLaunch(ce, stream));
	check("capture", dd);
	printf("capture: 1 captured execution, %d launches\n", runs);

	if (!native) {
		printf("populate, child: skipped (no engine config with "
		       "SUPPORTS_CUDA_GRAPH_NATIVE_API)\n");
		return failed;
	}
	/* populate */
	cudaGraph_t pg;
	cudaGraphExec_t pe;
	CU(cudaGraphCreate(&pg, 0));
	CK(cudnnBackendPopulateCudaGraph(h, plan, vp, pg));
	CU(cudaGraphInstantiate(&pe, pg, 0));
	for (int i = 0; i < runs; i++)
		CU(cudaGraphLaunch(pe, stream));
	check("populate", dd);
	printf("populate: %d launches\n", runs);

	/* child, then updated to write dd2 */
	cudaGraph_t mg, child;
	cudaGraphNode_t node;
	cudaGraphExec_t me;
	CU(cudaGraphCreate(&mg, 0));
	CU(cudaGraphAddChildGraphNode(&node, mg, NULL, 0, pg));
	CU(cudaGraphInstantiate(&me, mg, 0));
	for (int i = 0; i < runs; i++)
		CU(cudaGraphLaunch(me, stream));
	check("child", dd);
	CU(cudaGraphChildGraphNodeGetGraph(node, &child));
	cudnnBackendDescriptor_t vp2 = pack(da, db, dd2, ws);
	CK(cudnnBackendUpdateCudaGraph(h, plan, vp2, child));
	CU(cudaGraphExecChildGraphNodeSetParams(me, node, child));
	for (int i = 0; i < runs; i++)
		CU(cudaGraphLaunch(me, stream));
	check("child updated", dd2);
	printf("child: %d launches, then %d after the update\n", runs, runs);

	CU(cudaGraphExecDestroy(me));
	CU(cudaGraphExecDestroy(pe));
	CU(cudaGraphExecDestroy(ce));
	CU(cudaGraphDestroy(mg));
	CU(cudaGraphDestroy(pg));
	CU(cudaGraphDestroy(cg));
	cudnnBackendDestroyDescriptor(vp2);
	cudnnBackendDestroyDescriptor(vp);
	cudnnBackendDestroyDescriptor(plan);
	for (int i = 0; i < MAXCFG; i++)
		cudnnBackendDestroyDescriptor(cfgs[i]);
	cudnnBackendDestroyDescriptor(heur);
	cudnnBackendDestroyDescriptor(graph);
	cudnnBackendDestroyDescriptor(op);
	cudnnBackendDestroyDescriptor(mm);
	cudnnBackendDestroyDescriptor(a);
	cudnnBackendDestroyDescriptor(b);
	cudnnBackendDestroyDescriptor(d);
	CK(cudnnDestroy(h));
	printf("%s\n", failed ? "FAILED" : "all results right");
	return failed;
}
