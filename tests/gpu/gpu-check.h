/*
 * gpu-check.h - what the GPU test programs share: a failed cuDNN or CUDA
 * call ends the program with one line naming it, and a backend attribute
 * is set in one call that checks.
 */
#ifndef GPU_CHECK_H
#define GPU_CHECK_H

#include <cuda_runtime.h>
#include <cudnn.h>
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

static inline void set(cudnnBackendDescriptor_t d,
		       cudnnBackendAttributeName_t a,
		       cudnnBackendAttributeType_t t, int64_t n, const void *v)
{
	CK(cudnnBackendSetAttribute(d, a, t, n, v));
}

#endif
