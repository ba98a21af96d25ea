/*
 * gpu-check.h - what the GPU test programs share: a failed cuDNN or CUDA
 * call ends the program with one line naming it, and a backend attribute
 * is set in one call that checks.
 */
#ifndef GPU_CHECK_H
#define GPU_CHECK_H

#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                           \
	do {                                                               \
		cudnnStatus_t s_ = (call);                                 \
		if (s_ != CUDNN_STATUS_SUCCESS) {                          \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__,       \
				__LINE__, #call, cudnnGetErrorString(s_)); \
			exit(1);                                           \
		}                                                          \
	} while (0)
#define CU(call)                                                           \
	do {                                                               \
		cudaError_t e_ = (call);                                   \
		if (e_ != cudaSuccess) {                                   \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__,       \
				__LINE__, #call, cudaGetErrorString(e_));  \
			exit(1);                                           \
		}                                                          \
	} while (0)

/* A backend descriptor of type, made as the program makes them (one keeps
 * them to destroy at its end): each program defines it. */
static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type);

static inline void set(cudnnBackendDescriptor_t d,
		       cudnnBackendAttributeName_t a,
		       cudnnBackendAttributeType_t t, int64_t n, const void *v)
{
	CK(cudnnBackendSetAttribute(d, a, t, n, v));
}

/* A finalized tensor descriptor: its uid, type, n dims and strides,
 * 16-byte aligned; virtual (never in memory) when virt. */
static inline cudnnBackendDescriptor_t
tensor_desc(int64_t uid, cudnnDataType_t dt, int64_t n, const int64_t *dims,
	    const int64_t *strides, bool virt)
{
	cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
	int64_t align = 16;

	set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
	set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, n, dims);
	set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, n, strides);
	set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
	set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
	if (virt)
		set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1,
		    &virt);
	CK(cudnnBackendFinalize(t));
	return t;
}

/* The engine configs cuDNN's heuristics (in mode, in heur, a descriptor
 * the caller made) propose for graph, into cfgs: max config descriptors
 * the caller made. Returns how many. */
static inline int64_t heuristic_configs(cudnnBackendDescriptor_t heur,
					cudnnBackendDescriptor_t graph,
					cudnnBackendHeurMode_t mode,
					cudnnBackendDescriptor_t *cfgs,
					int64_t max)
{
	int64_t n = 0;

	set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
	set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
	CK(cudnnBackendFinalize(heur));
	CK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
				    CUDNN_TYPE_BACKEND_DESCRIPTOR, max, &n,
				    cfgs));
	return n;
}

/* Build plan (an execution plan descriptor the caller made) from cfg on
 * h; whether it built. */
static inline int plan_builds(cudnnBackendDescriptor_t plan, cudnnHandle_t h,
			      cudnnBackendDescriptor_t cfg)
{
	set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
	set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
	return cudnnBackendFinalize(plan) == CUDNN_STATUS_SUCCESS;
}

/* The plan of the first config heuristics in mode propose for graph that
 * builds on h; exits saying so when none does. */
static inline cudnnBackendDescriptor_t
first_plan(cudnnHandle_t h, cudnnBackendDescriptor_t graph,
	   cudnnBackendHeurMode_t mode)
{
	enum { MAXCFG = 16 };
	cudnnBackendDescriptor_t cfgs[MAXCFG];

	for (int i = 0; i < MAXCFG; i++)
		cfgs[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	int64_t n = heuristic_configs(make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR),
				      graph, mode, cfgs, MAXCFG);
	for (int64_t i = 0; i < n; i++) {
		cudnnBackendDescriptor_t plan =
			make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
		if (plan_builds(plan, h, cfgs[i]))
			return plan;
	}
	fprintf(stderr, "none of %lld engine configs (heuristics mode %d) "
		"builds\n", (long long)n, (int)mode);
	exit(1);
}

/* The workspace a finalized plan needs, in bytes. */
static inline int64_t plan_workspace(cudnnBackendDescriptor_t plan)
{
	int64_t ws = 0, n = 0;

	CK(cudnnBackendGetAttribute(plan,
				    CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
				    CUDNN_TYPE_INT64, 1, &n, &ws));
	return ws;
}

#endif
