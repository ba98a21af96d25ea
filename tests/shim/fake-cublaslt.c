/*
 * fake-cublaslt.c - a stand-in for libcublasLt.so.13 (its soname and
 * symbol version, fake-cublaslt.map) whose matmuls succeed without a GPU,
 * for test-cublaslt-algo.sh and test-cublaslt-mode.sh: what the shim
 * asks after a matmul given an algorithm, and how it follows a
 * descriptor's pointer mode, can be checked on the CPU.
 * cublasLtTSTMatmul, one of the typed matmuls the real library exports
 * for cuBLAS (not in cublasLt.h), is cublasLtMatmul here. The descriptors
 * it creates or initializes hold their pointer mode (host at first, set by
 * cublasLtMatmulDescSetAttribute, which refuses a value of another size
 * than 4 bytes); any other descriptor is in the host pointer mode; the
 * times the mode was asked are counted (fake_cublaslt_mode_asks). An
 * algorithm's configuration attribute N is N * 100 plus the algorithm's
 * first byte, and is refused (CUBLAS_STATUS_INVALID_VALUE) when asked with
 * another size than the real library's.
 */
#include <cublasLt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT size_t cublasLtGetVersion(void)
{
	return CUBLAS_VERSION;
}

#define MATMUL_PARAMS                                                        \
	cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, \
		const void *A, cublasLtMatrixLayout_t Adesc, const void *B,    \
		cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C, \
		cublasLtMatrixLayout_t Cdesc, void *D,                         \
		cublasLtMatrixLayout_t Ddesc,                                  \
		const cublasLtMatmulAlgo_t *algo, void *workspace,             \
		size_t size, cudaStream_t stream
#define MATMUL_ARGS                                                          \
	handle, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc,     \
		algo, workspace, size, stream

static cublasStatus_t matmul(MATMUL_PARAMS)
{
	(void)desc, (void)alpha, (void)A, (void)Adesc, (void)B, (void)Bdesc;
	(void)beta, (void)C, (void)Cdesc, (void)D, (void)Ddesc, (void)algo;
	(void)workspace, (void)size, (void)stream;
	return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

EXPORT cublasStatus_t cublasLtMatmul(MATMUL_PARAMS)
{
	return matmul(MATMUL_ARGS);
}

EXPORT cublasStatus_t cublasLtTSTMatmul(MATMUL_PARAMS);
EXPORT cublasStatus_t cublasLtTSTMatmul(MATMUL_PARAMS)
{
	return matmul(MATMUL_ARGS);
}

/* The descriptors made here, and their modes. */
static cublasLtMatmulDesc_t made[16];
static int32_t modes[16];
static int n_made, asks;

EXPORT int fake_cublaslt_mode_asks(void)
{
	return asks;
}

static int32_t *mode_of(cublasLtMatmulDesc_t desc)
{
	for (int i = 0; i < n_made; i++)
		if (made[i] == desc)
			return &modes[i];
	return NULL;
}

static cublasStatus_t made_here(cublasLtMatmulDesc_t desc)
{
	if (n_made == 16)
		return CUBLAS_STATUS_ALLOC_FAILED;
	made[n_made] = desc;
	modes[n_made++] = CUBLASLT_POINTER_MODE_HOST;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
					       cublasComputeType_t compute,
					       cudaDataType_t scale)
{
	(void)compute, (void)scale;
	*desc = calloc(1, sizeof(**desc));
	return *desc ? made_here(*desc) : CUBLAS_STATUS_ALLOC_FAILED;
}

EXPORT cublasStatus_t cublasLtMatmulDescInit_internal(
	cublasLtMatmulDesc_t desc, size_t size, cublasComputeType_t compute,
	cudaDataType_t scale)
{
	(void)compute, (void)scale;
	if (size < sizeof(*desc))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!mode_of(desc))
		return made_here(desc);
	*mode_of(desc) = CUBLASLT_POINTER_MODE_HOST;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
	int32_t *mode = mode_of(desc);

	if (mode) {
		n_made--;
		made[mode - modes] = made[n_made];
		*mode = modes[n_made];
	}
	free(desc);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(
	cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
	const void *buf, size_t size)
{
	int32_t *mode = mode_of(desc);

	if (!mode || attr != CUBLASLT_MATMUL_DESC_POINTER_MODE ||
	    size != sizeof(*mode))
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(mode, buf, sizeof(*mode));
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(
	cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
	void *buf, size_t size, size_t *written)
{
	int32_t host = CUBLASLT_POINTER_MODE_HOST, *mode = mode_of(desc);

	if (!desc || attr != CUBLASLT_MATMUL_DESC_POINTER_MODE ||
	    size != sizeof(host))
		return CUBLAS_STATUS_INVALID_VALUE;
	asks++;
	memcpy(buf, mode ? mode : &host, sizeof(host));
	*written = sizeof(host);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t
cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo,
				     cublasLtMatmulAlgoConfigAttributes_t attr,
				     void *buf, size_t size, size_t *written)
{
	size_t want =
		attr == CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID ||
				attr == CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID
			? 2
			: 4;
	uint32_t value = (uint32_t)attr * 100 + (uint8_t)algo->data[0];

	if (attr > CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID || size != want)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(buf, &value, size); /* little-endian: the low bytes */
	*written = size;
	return CUBLAS_STATUS_SUCCESS;
}
