/*
 * bench-shim.c - the cost of one cheap real cuDNN call, as seen by the
 * application: cudnnBackendSetAttribute on a backend tensor descriptor
 * (no GPU needed), or with "execute" cudnnBackendExecute given no plan, a
 * call that can launch work (so the shim ties GPU work to it when CUPTI
 * records), on a real handle where there is a GPU. Prints the median and
 * 90th percentile of the per-call time over batches. bench-shim.sh runs it
 * without the shim, with the shim forwarding only (DNNTRACE_DISABLE=1) and
 * with the shim recording.
 *
 * usage: bench-shim [execute] [BATCHES]
 */
#include <cudnn.h>
#include <stdlib.h>
#include <string.h>

#include "bench-batches.h"

#define BATCH 1000

static cudnnBackendDescriptor_t desc;
static cudnnHandle_t handle; /* NULL without a GPU */

static void set_attribute(void)
{
	int64_t uid = 7;

	cudnnBackendSetAttribute(desc, CUDNN_ATTR_TENSOR_UNIQUE_ID,
				 CUDNN_TYPE_INT64, 1, &uid);
}

static void execute(void)
{
	cudnnBackendExecute(handle, NULL, NULL); /* rejected: no plan */
}

int main(int argc, char **argv)
{
	int exec = argc > 1 && !strcmp(argv[1], "execute");
	void (*call)(void) = exec ? execute : set_attribute;
	int batches = argc > 1 + exec ? atoi(argv[1 + exec]) : 2000;

	if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR,
					 &desc))
		return 1;
	if (exec && cudnnCreate(&handle))
		handle = NULL;
	if (time_batches(call, batches, BATCH))
		return 1;
	cudnnBackendDestroyDescriptor(desc);
	return 0;
}
