/*
 * gpu-plan-restore.c - a cuDNN plan serialized, forgotten and restored,
 * as programs with a plan cache do (XLA, cudnn-frontend's
 * deserialize()):
 *
 *   1. build a graph D = relu(A x B + bias) (fp16, fp32 compute, one
 *      matmul and two pointwise operations), a plan from the first engine
 *      config the heuristics give that builds, and execute it once;
 *   2. read the plan back as JSON (CUDNN_ATTR_EXECUTION_PLAN_JSON_
 *      REPRESENTATION), then destroy every descriptor, the handle too;
 *   3. with a new handle, restore a plan from that JSON alone (set it on
 *      a new plan descriptor, then finalize) and execute it N times.
 *
 * Every result is checked: A and B all ones, bias all -32, so each
 * output is relu(K - 32) = 32. Whoever traces this sees the restored
 * plan's graph only in its JSON. Exits 77 without a GPU.
 */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu-check.h"

enum { B = 4, M = 128, N = 128, K = 64 };
enum { UID_A = 1, UID_B = 2, UID_BIAS = 3, UID_D = 4, UID_T1 = 5, UID_T2 = 6 };
#define HALF_ONE   0x3c00u
#define HALF_M32   0xd000u /* -32.0 */
#define HALF_32    0x5000u /* 32.0 */

/* Every descriptor made, destroyed together before the restore. */
static cudnnBackendDescriptor_t made[256];
static int n_made;

static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type)
{
	cudnnBackendDescriptor_t d;
	CK(cudnnBackendCreateDescriptor(type, &d));
	if (n_made < (int)(sizeof(made) / sizeof(made[0])))
		made[n_made++] = d;
	return d;
}

static cudnnBackendDescriptor_t tensor(int64_t uid, int64_t rows,
				       int64_t cols, int virt)
{
	int64_t dims[3] = { B, rows, cols };
	int64_t strides[3] = { rows * cols, cols, 1 };

	/* the bias broadcasts over the batch and the rows */
	if (rows == 1)
		dims[0] = 1, strides[0] = cols;
	return tensor_desc(uid, virt ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF, 3,
			   dims, strides, virt);
}

static cudnnBackendDescriptor_t pointwise(cudnnPointwiseMode_t mode,
					  cudnnBackendDescriptor_t x,
					  cudnnBackendDescriptor_t b,
					  cudnnBackendDescriptor_t y)
{
	cudnnBackendDescriptor_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
	cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
	set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f32);
	CK(cudnnBackendFinalize(pw));
	cudnnBackendDescriptor_t op =
		make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
	set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
	set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
	if (b)
		set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
		    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
	set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	CK(cudnnBackendFinalize(op));
	return op;
}

/* The plan of the first engine config the heuristics give that builds. */
static cudnnBackendDescriptor_t build_plan(cudnnHandle_t h)
{
	cudnnBackendDescriptor_t a = tensor(UID_A, M, K, 0),
				 b = tensor(UID_B, K, N, 0),
				 bias = tensor(UID_BIAS, 1, N, 0),
				 t1 = tensor(UID_T1, M, N, 1),
				 t2 = tensor(UID_T2, M, N, 1),
				 d = tensor(UID_D, M, N, 0);
	cudnnBackendDescriptor_t mm = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
	cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
	CK(cudnnBackendFinalize(mm));
	cudnnBackendDescriptor_t ops[3];
	ops[0] = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
	set(ops[0], CUDNN_ATTR_OPERATION_MATMUL_ADESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
	set(ops[0], CUDNN_ATTR_OPERATION_MATMUL_BDESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
	set(ops[0], CUDNN_ATTR_OPERATION_MATMUL_CDESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t1);
	set(ops[0], CUDNN_ATTR_OPERATION_MATMUL_DESC,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm);
	CK(cudnnBackendFinalize(ops[0]));
	ops[1] = pointwise(CUDNN_POINTWISE_ADD, t1, bias, t2);
	ops[2] = pointwise(CUDNN_POINTWISE_RELU_FWD, t2, NULL, d);

	cudnnBackendDescriptor_t graph =
		make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, ops);
	set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
	CK(cudnnBackendFinalize(graph));

	return first_plan(h, graph, CUDNN_HEUR_MODE_A);
}

static int run(cudnnHandle_t h, cudnnBackendDescriptor_t plan, void **bufs,
	       int times)
{
	static uint16_t host[B * M * N];
	void *ws = NULL;
	int64_t size = plan_workspace(plan);
	if (size > 0)
		CU(cudaMalloc(&ws, (size_t)size));
	cudnnBackendDescriptor_t p;
	void *ptrs[4] = { bufs[0], bufs[1], bufs[2], bufs[3] };
	int64_t uids[4] = { UID_A, UID_B, UID_BIAS, UID_D };
	CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
					&p));
	set(p, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 4,
	    ptrs);
	set(p, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 4, uids);
	set(p, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
	CK(cudnnBackendFinalize(p));
	for (int i = 0; i < times; i++) {
		CU(cudaMemset(bufs[3], 0, sizeof(host)));
		CK(cudnnBackendExecute(h, plan, p));
	}
	CK(cudnnBackendDestroyDescriptor(p));
	CU(cudaDeviceSynchronize());
	CU(cudaFree(ws));
	CU(cudaMemcpy(host, bufs[3], sizeof(host), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++)
		if (host[i] != HALF_32) {
			fprintf(stderr, "D[%zu] = 0x%04x, want 0x%04x\n", i,
				host[i], HALF_32);
			return 1;
		}
	return 0;
}

static void fill(void *dev, size_t n, uint16_t v)
{
	uint16_t *h = malloc(n * sizeof(*h));
	if (!h)
		exit(1);
	for (size_t i = 0; i < n; i++)
		h[i] = v;
	CU(cudaMemcpy(dev, h, n * sizeof(*h), cudaMemcpyHostToDevice));
	free(h);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 5, devices = 0, failed = 0;
	size_t sizes[4] = { B * M * K, B * K * N, N, B * M * N };
	uint16_t values[4] = { HALF_ONE, HALF_ONE, HALF_M32, 0 };
	void *bufs[4];

	if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
		fprintf(stderr, "no usable GPU\n");
		return 77;
	}
	for (int i = 0; i < 4; i++) {
		CU(cudaMalloc(&bufs[i], sizes[i] * 2));
		fill(bufs[i], sizes[i], values[i]);
	}

	cudnnHandle_t h;
	CK(cudnnCreate(&h));
	cudnnBackendDescriptor_t plan = build_plan(h);
	failed |= run(h, plan, bufs, 1);
	int64_t len = 0;
	CK(cudnnBackendGetAttribute(plan,
				    CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
				    CUDNN_TYPE_CHAR, 0, &len, NULL));
	char *json = calloc((size_t)len + 1, 1);
	if (!json)
		return 1;
	CK(cudnnBackendGetAttribute(plan,
				    CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
				    CUDNN_TYPE_CHAR, len, &len, json));
	for (int i = n_made - 1; i >= 0; i--)
		CK(cudnnBackendDestroyDescriptor(made[i]));
	n_made = 0;
	CK(cudnnDestroy(h));

	CK(cudnnCreate(&h));
	cudnnBackendDescriptor_t restored =
		make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
	set(restored, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
	    &h);
	set(restored, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
	    CUDNN_TYPE_CHAR, len, json);
	CK(cudnnBackendFinalize(restored));
	failed |= run(h, restored, bufs, runs);
	printf("built: 1 execution; restored from %lld bytes of JSON: %d "
	       "executions; %s\n",
	       (long long)len, runs, failed ? "WRONG RESULTS" : "results ok");
	CK(cudnnBackendDestroyDescriptor(restored));
	CK(cudnnDestroy(h));
	for (int i = 0; i < 4; i++)
		CU(cudaFree(bufs[i]));
	free(json);
	return failed;
}
