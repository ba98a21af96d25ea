/*
 * shim-cudnn.c - what the shim must know of cuDNN that its description
 * cannot say: the sizes of the backend API's attribute elements, by which
 * the generated wrappers record cudnnBackendSetAttribute and
 * cudnnBackendGetAttribute (the annotation roles payload and outpayload).
 * The plan queries made after cudnnBackendFinalize are shim-plans.c's.
 */
#include <stdbool.h>
#include <stdint.h>

#include "shim-runtime.h"

/* Sizes of the cudnnBackendAttributeType_t element types, by value (the
 * values are ABI: they never change between cuDNN releases). */
static uint32_t backend_type_size(int64_t type)
{
	static const uint8_t size[] = {
		[0] = sizeof(void *),  /* HANDLE */
		[1] = 4,               /* DATA_TYPE */
		[2] = sizeof(_Bool),   /* BOOLEAN */
		[3] = 8,               /* INT64 */
		[4] = 4,               /* FLOAT */
		[5] = 8,               /* DOUBLE */
		[6] = sizeof(void *),  /* VOID_PTR */
		[7 ... 14] = 4,        /* CONVOLUTION_MODE .. POINTWISE_MODE */
		[15] = sizeof(void *), /* BACKEND_DESCRIPTOR */
		[16 ... 23] = 4,       /* GENSTATS_MODE .. INT32 */
		[24] = 1,              /* CHAR */
		[25] = 4,              /* SIGNAL_MODE */
		[26] = 16,             /* FRACTION: two int64_t */
		[27 ... 30] = 4, /* NORM_MODE .. MOE_GROUPED_MATMUL_MODE */
	};

	if (type < 0 || (uint64_t)type >= sizeof(size))
		return 0;
	return size[type];
}

/* Text (CUDNN_TYPE_CHAR) is recorded up to this many bytes: an execution
 * plan's JSON representation, set once per restored plan, is all a trace
 * knows of that plan's graph, and runs to hundreds of KiB (a ring drops
 * records over half its size). */
#define BACKEND_TYPE_CHAR 24
#define MAX_TEXT (256u << 10)

uint32_t dt_backend_payload_bytes(const void *ptr, int64_t count, int64_t type)
{
	uint32_t elem = backend_type_size(type);
	uint64_t cap = type == BACKEND_TYPE_CHAR ? MAX_TEXT : DT_MAX_BLOB;

	if (!ptr || count <= 0 || !elem)
		return 0;
	return (uint64_t)count > cap / elem ? (uint32_t)(cap / elem * elem)
					    : (uint32_t)count * elem;
}
