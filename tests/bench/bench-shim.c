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

#define BATCH 1000

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

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
	qsort(per_call, (size_t)batches, sizeof(double), cmp);
	printf("%.1f %.1f\n", per_call[batches / 2],
	       per_call[batches * 9 / 10]);
	cudnnBackendDestroyDescriptor(d);
	return 0;
}
