/*
 * launch-cost.c - what CUPTI adds to one kernel launch, by the way a
 * launch is tied to the call that made it.
 *
 *   launch-cost MODE [LAUNCHES [INSIDE]]
 *
 * Launches LAUNCHES empty kernels (default 200 000) through cuLaunchKernel,
 * one stream, no synchronization until the end, and prints the host time
 * per launch. INSIDE (0 or 1, default 1) says whether each launch is made
 * inside a "call" (what a cuDNN call is to dnntrace). MODE:
 *
 *   none      no CUPTI
 *   kernel    concurrent-kernel records only (the floor)
 *   records   kernel records, launch API records of cuLaunchKernel and
 *             external correlation records, the call's id pushed before
 *             and popped after it (dnntrace's way)
 *   callback  kernel records and a CUPTI callback on cuLaunchKernel that,
 *             inside a call, keeps the launch's correlation id with the
 *             call's id in a per-thread array (no API records)
 *
 * Each mode runs in a process of its own (CUPTI does not go back to
 * nothing); tests/bench/launch-cost.sh runs them interleaved.
 * Needs a GPU; links the driver and CUPTI.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUFFER_SIZE (8u << 20)

static const char ptx[] = ".version 7.0\n"
			  ".target sm_75\n"
			  ".address_size 64\n"
			  ".visible .entry empty()\n"
			  "{\n"
			  "\tret;\n"
			  "}\n";

static uint64_t kernels, pairs;
static uint8_t seen[1u << 22]; /* kernels' correlation ids */

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
	if (posix_memalign((void **)buf, 8, BUFFER_SIZE))
		*buf = NULL;
	*size = BUFFER_SIZE;
	*max = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
			       size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (valid &&
	       cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			const CUpti_ActivityKernel10 *k = (const void *)rec;
			kernels++;
			if (k->correlationId < sizeof(seen))
				seen[k->correlationId] = 1;
		}
		else if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
			pairs++;
	}
	free(buf);
}

/* The callback mode's state: the call open now (per thread, as in the
 * shim), and where the launches' correlation ids go (one thread launches
 * here; CUPTI's own threads never launch). */
static __thread uint64_t call_id;
static struct {
	uint32_t corr;
	uint64_t call;
} kept[1 << 18];
static unsigned nkept;

static void CUPTIAPI on_launch(void *arg, CUpti_CallbackDomain domain,
			       CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;

	(void)arg;
	(void)domain;
	(void)cbid;
	if (!call_id || cb->callbackSite != CUPTI_API_ENTER)
		return;
	kept[nkept & 0x3ffff].corr = cb->correlationId;
	kept[nkept & 0x3ffff].call = call_id;
	nkept++;
}

#define CHECK(x)                                                               \
	do {                                                                   \
		int r_ = (int)(x);                                             \
		if (r_) {                                                      \
			fprintf(stderr, "launch-cost: %s: %d\n", #x, r_);       \
			exit(1);                                               \
		}                                                              \
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	long n = argc > 2 ? atol(argv[2]) : 200000;
	int inside = argc > 3 ? atoi(argv[3]) : 1;
	CUpti_SubscriberHandle sub;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUstream s;

	if (strcmp(mode, "none") && strcmp(mode, "kernel") &&
	    strcmp(mode, "records") && strcmp(mode, "callback")) {
		fprintf(stderr, "usage: launch-cost none|kernel|records|callback "
				"[LAUNCHES [INSIDE]]\n");
		return 2;
	}
	if (strcmp(mode, "none")) {
		CHECK(cuptiActivityRegisterCallbacks(requested, completed));
		CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	}
	if (!strcmp(mode, "records")) {
		CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
		CHECK(cuptiActivityEnableDriverApi(
			CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1));
	}
	if (!strcmp(mode, "callback")) {
		CHECK(cuptiSubscribe(&sub, on_launch, NULL));
		CHECK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
					  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
	}
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoadData(&mod, ptx));
	CHECK(cuModuleGetFunction(&fn, mod, "empty"));
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

	/* warm up: the module, CUPTI's instrumentation, the queue */
	for (int i = 0; i < 2000; i++)
		CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
	CHECK(cuStreamSynchronize(s));

	const int records = !strcmp(mode, "records");
	uint64_t t0 = now_ns();
	for (long i = 0; i < n; i++) {
		if (inside) {
			call_id = (uint64_t)i + 1;
			if (records)
				cuptiActivityPushExternalCorrelationId(
					CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2,
					call_id);
		}
		cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
		if (inside) {
			if (records) {
				uint64_t last;
				cuptiActivityPopExternalCorrelationId(
					CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2,
					&last);
			}
			call_id = 0;
		}
	}
	uint64_t t1 = now_ns();
	CHECK(cuStreamSynchronize(s));
	uint64_t t2 = now_ns();
	if (strcmp(mode, "none"))
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	unsigned matched = 0;
	for (unsigned i = 0; i < nkept && i < (1u << 18); i++)
		matched += kept[i].corr < sizeof(seen) && seen[kept[i].corr];
	printf("%s inside=%d launches=%ld host_ns_per_launch=%.1f "
	       "total_ns_per_launch=%.1f kernels=%llu corr=%llu kept=%u "
	       "kept_matched=%u\n",
	       mode, inside, n, (double)(t1 - t0) / (double)n,
	       (double)(t2 - t0) / (double)n, (unsigned long long)kernels,
	       (unsigned long long)pairs, nkept, matched);
	return 0;
}
