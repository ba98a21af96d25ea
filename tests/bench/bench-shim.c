/*
 * bench-shim.c - the cost of one cheap real cuDNN call, as seen by the
 * application: cudnnBackendSetAttribute on a backend tensor descriptor
 * (no GPU needed). Prints the median and 90th percentile of the per-call
 * time over batches. bench-shim.sh runs it without the shim, with the shim
 * forwarding only (DNNTRACE_DISABLE=1) and with the shim recording.
 */
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench-batches.h"

#define BATCH 1000

int main(int argc, char **argv)
{
	int batches = argc > 1 ? atoi(argv[1]) : 2000;
	double *per_call = malloc(sizeof(double) * (size_t)batches);
	cudnnBackendDescriptor_t d;
	int64_t uid = 7;

	if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &d))
		return 1;
	for (int i = 0; i < 10000;
	     i++) /* warm up: first calls resolve symbols */
		cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_UNIQUE_ID,
					 CUDNN_TYPE_INT64, 1, &uid);
	for (int b = 0; b < batches; b++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_UNIQUE_ID,
						 CUDNN_TYPE_INT64, 1, &uid);
		per_call[b] = (double)(now_ns() - t0) / BATCH;
	}
	print_median_p90(per_call, batches);
	cudnnBackendDestroyDescriptor(d);
	return 0;
}
