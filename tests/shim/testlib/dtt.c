/*
 * dtt.c - libdtt.so.1, the test library dtt.h declares. It links against
 * libcudnn, and dttCheckBackend calls cudnnGetVersion through the dynamic
 * linker, as cuDNN calls cuBLASLt.
 */
#include <cudnn.h>
#include <stdlib.h>

#include "dtt.h"

struct dttContext {
	dttStream_t stream;
};

dttStatus_t dttCreate(dttHandle_t *handle)
{
	if (!handle)
		return DTT_STATUS_BAD_PARAM;
	*handle = calloc(1, sizeof(**handle));
	return *handle ? DTT_STATUS_SUCCESS : DTT_STATUS_NOT_INITIALIZED;
}

dttStatus_t dttDestroy(dttHandle_t handle)
{
	free(handle);
	return DTT_STATUS_SUCCESS;
}

dttStatus_t dttSetStream(dttHandle_t handle, dttStream_t stream)
{
	if (!handle)
		return DTT_STATUS_BAD_PARAM;
	handle->stream = stream;
	return DTT_STATUS_SUCCESS;
}

dttStatus_t dttGetStream(dttHandle_t handle, dttStream_t *stream)
{
	if (!handle || !stream)
		return DTT_STATUS_BAD_PARAM;
	*stream = handle->stream;
	return DTT_STATUS_SUCCESS;
}

dttStatus_t dttScale(dttHandle_t handle, int n, const void *alpha,
		     const float *x, float *y)
{
	if (!handle || !alpha || n < 0 || (n && (!x || !y)))
		return DTT_STATUS_BAD_PARAM;
	for (int i = 0; i < n; i++)
		y[i] = *(const float *)alpha * x[i];
	return DTT_STATUS_SUCCESS;
}

dttStatus_t dttGetWorkspaceSize(dttHandle_t handle, int n, size_t *size)
{
	if (!handle || !size || n < 0)
		return DTT_STATUS_BAD_PARAM;
	*size = (size_t)n * sizeof(float);
	return DTT_STATUS_SUCCESS;
}

dttStatus_t dttCheckBackend(dttHandle_t handle, size_t *backendVersion)
{
	if (!handle || !backendVersion)
		return DTT_STATUS_BAD_PARAM;
	*backendVersion = cudnnGetVersion();
	return DTT_STATUS_SUCCESS;
}

size_t dttGetVersion(void)
{
	return DTT_MAJOR * 10000 + DTT_MINOR * 100 + DTT_PATCHLEVEL;
}
