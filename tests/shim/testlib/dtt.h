/*
 * dtt.h - a small library for the tests: what a wrapped GPU library
 * looks like to dnntrace (handles, a stream, host scalars and device
 * pointers, queries), with none of a GPU. dttCheckBackend calls cuDNN, so
 * one wrapped library's call made inside another's is exercised.
 */
#ifndef DTT_H
#define DTT_H

#include <stddef.h>

#define DTT_MAJOR      1
#define DTT_MINOR      2
#define DTT_PATCHLEVEL 0

typedef enum {
	DTT_STATUS_SUCCESS = 0,
	DTT_STATUS_NOT_INITIALIZED = 1,
	DTT_STATUS_BAD_PARAM = 2,
} dttStatus_t;

typedef struct dttContext *dttHandle_t;
typedef struct dttStream *dttStream_t;

dttStatus_t dttCreate(dttHandle_t *handle);
dttStatus_t dttDestroy(dttHandle_t handle);
dttStatus_t dttSetStream(dttHandle_t handle, dttStream_t stream);
dttStatus_t dttGetStream(dttHandle_t handle, dttStream_t *stream);
/* y = alpha * x over n elements: alpha on the host, x and y device
 * memory (here, any memory) */
dttStatus_t dttScale(dttHandle_t handle, int n, const void *alpha,
		     const float *x, float *y);
/* bytes of workspace dttScale takes for n elements */
dttStatus_t dttGetWorkspaceSize(dttHandle_t handle, int n, size_t *size);
/* the version of the cuDNN dtt runs on, asked of cuDNN */
dttStatus_t dttCheckBackend(dttHandle_t handle, size_t *backendVersion);
size_t dttGetVersion(void);

#endif /* DTT_H */
