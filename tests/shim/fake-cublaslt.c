/*
 * fake-cublaslt.c - a stand-in for libcublasLt.so.13 (its soname and
 * symbol version, fake-cublaslt.map) whose matmuls succeed without a GPU,
 * for test-cublaslt-algo.sh, test-cublaslt-mode.sh and
 * test-cublaslt-scale.sh: what the shim asks after a matmul given an
 * algorithm, and how it follows a descriptor's pointer mode and scale
 * type, can be checked on the CPU. cublasLtTSTMatmul, one of the typed
 * matmuls the real library exports for cuBLAS (not in cublasLt.h), is
 * cublasLtMatmul here. The descriptors it creates or initializes hold
 * their pointer mode (host at first) and scale type (as created), set by
 * cublasLtMatmulDescSetAttribute, which refuses a value of another size
 * than 4 bytes; any other descriptor is in the host pointer mode, of
 * scale type CUDA_R_32F; the times the mode and the scale type were asked
 * are counted (fake_cublaslt_mode_asks, fake_cublaslt_scale_asks);
 * fake_cublaslt_set_mode sets a mode as cuBLAS does, unseen. Its
 * matrix transform descriptors hold their scale type and pointer mode
 * alike, and its transforms succeed. An
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

/* The descriptors made here, their modes and scale types. */
static cublasLtMatmulDesc_t made[16];
static int32_t modes[16], scales[16];
static int n_made, asks, scale_asks;

EXPORT int fake_cublaslt_mode_asks(void)
{
	return asks;
}

EXPORT int fake_cublaslt_scale_asks(void)
{
	return scale_asks;
}

static int32_t *mode_of(cublasLtMatmulDesc_t desc)
{
	for (int i = 0; i < n_made; i++)
		if (made[i] == desc)
			return &modes[i];
	return NULL;
}

static cublasStatus_t made_here(cublasLtMatmulDesc_t desc, cudaDataType_t scale)
{
	if (n_made == 16)
		return CUBLAS_STATUS_ALLOC_FAILED;
	made[n_made] = desc;
	scales[n_made] = scale;
	modes[n_made++] = CUBLASLT_POINTER_MODE_HOST;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
					       cublasComputeType_t compute,
					       cudaDataType_t scale)
{
	(void)compute;
	*desc = calloc(1, sizeof(**desc));
	return *desc ? made_here(*desc, scale) : CUBLAS_STATUS_ALLOC_FAILED;
}

EXPORT cublasStatus_t cublasLtMatmulDescInit_internal(
	cublasLtMatmulDesc_t desc, size_t size, cublasComputeType_t compute,
	cudaDataType_t scale)
{
	(void)compute;
	if (size < sizeof(*desc))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!mode_of(desc))
		return made_here(desc, scale);
	*mode_of(desc) = CUBLASLT_POINTER_MODE_HOST;
	scales[mode_of(desc) - modes] = scale;
	return CUBLAS_STATUS_SUCCESS;
}

/* What cuBLAS does to the descriptors it makes: set their pointer mode
 * without cublasLtMatmulDescSetAttribute (its library imports none of
 * cuBLASLt's descriptor functions). */
EXPORT void fake_cublaslt_set_mode(cublasLtMatmulDesc_t desc, int32_t mode)
{
	int32_t *held = mode_of(desc);

	if (held)
		*held = mode;
}

EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
	int32_t *mode = mode_of(desc);

	if (mode) {
		n_made--;
		made[mode - modes] = made[n_made];
		scales[mode - modes] = scales[n_made];
		*mode = modes[n_made];
	}
	free(desc);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(
	cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
	const void *buf, size_t size)
{
	int32_t *mode = mode_of(desc), *to;

	if (!mode || size != sizeof(*mode))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (attr == CUBLASLT_MATMUL_DESC_SCALE_TYPE)
		to = &scales[mode - modes];
	else if (attr == CUBLASLT_MATMUL_DESC_POINTER_MODE)
		to = mode;
	else
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(to, buf, sizeof(*to));
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(
	cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
	void *buf, size_t size, size_t *written)
{
	int32_t host = CUBLASLT_POINTER_MODE_HOST, *mode = mode_of(desc);
	int32_t fp32 = CUDA_R_32F;

	if (!desc || size != sizeof(host))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (attr == CUBLASLT_MATMUL_DESC_SCALE_TYPE) {
		scale_asks++;
		memcpy(buf, mode ? &scales[mode - modes] : &fp32, sizeof(fp32));
	} else if (attr == CUBLASLT_MATMUL_DESC_POINTER_MODE) {
		asks++;
		memcpy(buf, mode ? mode : &host, sizeof(host));
	} else {
		return CUBLAS_STATUS_INVALID_VALUE;
	}
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

/* A matrix transform descriptor: its scale type, then its pointer mode. */
EXPORT cublasStatus_t
cublasLtMatrixTransformDescCreate(cublasLtMatrixTransformDesc_t *desc,
				  cudaDataType scale)
{
	int32_t *held = calloc(1, sizeof(**desc));

	*desc = (cublasLtMatrixTransformDesc_t)held;
	if (!held)
		return CUBLAS_STATUS_ALLOC_FAILED;
	held[0] = scale;
	held[1] = CUBLASLT_POINTER_MODE_HOST;
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t
cublasLtMatrixTransformDescDestroy(cublasLtMatrixTransformDesc_t desc)
{
	free(desc);
	return CUBLAS_STATUS_SUCCESS;
}

static int32_t *transform_attr(cublasLtMatrixTransformDesc_t desc,
			       cublasLtMatrixTransformDescAttributes_t attr,
			       size_t size)
{
	int32_t *held = (int32_t *)desc;

	if (!desc || size != sizeof(*held))
		return NULL;
	if (attr == CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE)
		return &held[0];
	if (attr == CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE)
		return &held[1];
	return NULL;
}

EXPORT cublasStatus_t cublasLtMatrixTransformDescSetAttribute(
	cublasLtMatrixTransformDesc_t desc,
	cublasLtMatrixTransformDescAttributes_t attr, const void *buf,
	size_t size)
{
	int32_t *to = transform_attr(desc, attr, size);

	if (!to)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(to, buf, sizeof(*to));
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixTransformDescGetAttribute(
	cublasLtMatrixTransformDesc_t desc,
	cublasLtMatrixTransformDescAttributes_t attr, void *buf, size_t size,
	size_t *written)
{
	int32_t *from = transform_attr(desc, attr, size);

	if (!from)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(buf, from, sizeof(*from));
	*written = sizeof(*from);
	return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t
cublasLtMatrixTransform(cublasLtHandle_t handle,
			cublasLtMatrixTransformDesc_t desc, const void *alpha,
			const void *A, cublasLtMatrixLayout_t Adesc,
			const void *beta, const void *B,
			cublasLtMatrixLayout_t Bdesc, void *C,
			cublasLtMatrixLayout_t Cdesc, cudaStream_t stream)
{
	(void)desc, (void)alpha, (void)A, (void)Adesc, (void)beta, (void)B;
	(void)Bdesc, (void)C, (void)Cdesc, (void)stream;
	return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
