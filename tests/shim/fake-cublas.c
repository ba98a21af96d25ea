/*
 * fake-cublas.c - a stand-in for libcublas.so.13 (its soname and symbol
 * version, fake-cublas.map) whose handles work without a GPU, for
 * test-cublas-mode.sh and test-cublas-stream.sh: how the shim follows a
 * handle's pointer mode and stream, and how many bytes of a scalar it
 * reads, can be checked on the CPU. A handle holds its pointer mode (host
 * at first) and its stream (NULL at first); cublasGemmEx succeeds on any
 * handle it made, reads nothing, and launches on the handle's stream
 * (fake-capture.c's fake_capture_launch, where it is loaded); the times a
 * handle's mode and its stream were asked are counted
 * (fake_cublas_mode_asks, fake_cublas_stream_asks). fake_cublas_handle
 * makes a handle as cublasCreate_v2 does, unseen by the shim, as one made
 * before it was loaded. After fake_cublas_use_lt, a handle's GEMMs run
 * as cuBLAS runs its own through cuBLASLt: on a descriptor given, its
 * pointer mode set to the handle's where no wrapper sees it
 * (fake-cublaslt.c's fake_cublaslt_set_mode), then cublasLtTSTMatmul with
 * the GEMM's alpha and beta.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

struct cublasContext {
	cublasPointerMode_t mode;
	cudaStream_t stream;
	cublasLtMatmulDesc_t lt; /* its GEMMs' descriptor, or NULL */
};

static int asks, stream_asks;

EXPORT int fake_cublas_mode_asks(void)
{
	return asks;
}

EXPORT int fake_cublas_stream_asks(void)
{
	return stream_asks;
}

EXPORT cublasHandle_t fake_cublas_handle(cudaStream_t stream)
{
	cublasHandle_t handle = calloc(1, sizeof(*handle));

	if (handle)
		handle->stream = stream;
	return handle;
}

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
	*handle = calloc(1, sizeof(**handle));
	return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
	free(handle);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT void fake_cublas_use_lt(cublasHandle_t handle, cublasLtMatmulDesc_t desc)
{
	handle->lt = desc;
}

EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle,
					 cudaStream_t stream)
{
	if (!handle)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->stream = stream;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle,
					 cudaStream_t *stream)
{
	if (!handle)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	stream_asks++;
	*stream = handle->stream;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle,
					      cublasPointerMode_t mode)
{
	if (!handle || (mode != CUBLAS_POINTER_MODE_HOST &&
			mode != CUBLAS_POINTER_MODE_DEVICE))
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle,
					      cublasPointerMode_t *mode)
{
	if (!handle)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	asks++;
	*mode = handle->mode;
	return CUBLAS_STATUS_SUCCESS;
}

/* A GEMM run as cuBLAS runs its own through cuBLASLt. */
static cublasStatus_t through_lt(cublasHandle_t handle, const void *alpha,
				 const void *beta)
{
	void (*set_mode)(cublasLtMatmulDesc_t, int32_t) =
		(void (*)(cublasLtMatmulDesc_t, int32_t))dlsym(
			RTLD_DEFAULT, "fake_cublaslt_set_mode");
	/* it takes cublasLtMatmul's parameters */
	__typeof__(&cublasLtMatmul) matmul = (__typeof__(&cublasLtMatmul))dlsym(
		RTLD_DEFAULT, "cublasLtTSTMatmul");

	if (!set_mode || !matmul)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	set_mode(handle->lt, handle->mode == CUBLAS_POINTER_MODE_DEVICE
				     ? CUBLASLT_POINTER_MODE_DEVICE
				     : CUBLASLT_POINTER_MODE_HOST);
	return matmul((cublasLtHandle_t)handle, handle->lt, alpha, NULL, NULL,
		      NULL, NULL, beta, NULL, NULL, NULL, NULL, NULL, NULL, 0,
		      handle->stream);
}

EXPORT cublasStatus_t cublasGemmEx(
	cublasHandle_t handle, cublasOperation_t transa,
	cublasOperation_t transb, int m, int n, int k, const void *alpha,
	const void *A, cudaDataType Atype, int lda, const void *B,
	cudaDataType Btype, int ldb, const void *beta, void *C,
	cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
	cublasGemmAlgo_t algo)
{
	(void)transa, (void)transb, (void)m, (void)n, (void)k, (void)alpha;
	(void)A, (void)Atype, (void)lda, (void)B, (void)Btype, (void)ldb;
	(void)beta, (void)C, (void)Ctype, (void)ldc, (void)computeType;
	(void)algo;
	if (!handle)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (handle->lt)
		return through_lt(handle, alpha, beta);
	void (*launch)(cudaStream_t) = (void (*)(cudaStream_t))dlsym(
		RTLD_DEFAULT, "fake_capture_launch");
	if (launch)
		launch(handle->stream);
	return CUBLAS_STATUS_SUCCESS;
}
