/*
 * cupti-floor.c - the least a CUPTI client can do to time every kernel: the
 * floor that dnntrace's GPU recording is measured against.
 *
 * Loaded by the CUDA driver through CUDA_INJECTION64_PATH. Enables
 * concurrent-kernel activity records and nothing else (no launch API
 * records, no correlation, no copies), hands CUPTI 4 MiB buffers, and counts
 * the records in them; at exit it flushes and says on stderr how many
 * kernels it saw. It writes no file: what it costs is CUPTI's instrumentation
 * and the walk over the records, which any client pays.
 *
 * CUPTI_FLOOR_SAMPLE=ON:OFF (milliseconds) switches the kernel records on
 * for ON ms and off for OFF ms, over and over, from a thread of its own:
 * what sampling by cuptiActivityDisable costs, and whether CUPTI survives
 * it, with no dnntrace code in the process.
 *
 * Not part of dnntrace; tests/bench/overhead-peers.sh uses it.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BUFFER_SIZE (4u << 20)

static struct {
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
					  CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*flush)(uint32_t);
} cu;

static _Atomic uint64_t kernels, busy_ns, switches;

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
	uint64_t n = 0, ns = 0;

	(void)ctx;
	(void)stream;
	(void)size;
	while (valid && cu.next(buf, valid, &rec) == CUPTI_SUCCESS)
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			const CUpti_ActivityKernel10 *k = (const void *)rec;
			ns += k->end - k->start;
			n++;
		}
	atomic_fetch_add(&kernels, n);
	atomic_fetch_add(&busy_ns, ns);
	free(buf);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static unsigned on_ms, off_ms;

static void *switcher(void *arg)
{
	(void)arg;
	for (;;) {
		sleep_ms(on_ms);
		cu.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		sleep_ms(off_ms);
		cu.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		atomic_fetch_add(&switches, 1);
	}
	return NULL;
}

static void at_exit(void)
{
	cu.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr,
		"cupti-floor: %llu kernels, %.3f ms of kernel time, "
		"switched off and on %llu times\n",
		(unsigned long long)atomic_load(&kernels),
		(double)atomic_load(&busy_ns) / 1e6,
		(unsigned long long)atomic_load(&switches));
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	/* the CUPTI the process already has (PyTorch's), else the toolkit's */
	void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		h = dlopen("libcupti.so.13", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "cupti-floor: %s\n", dlerror());
		return 1;
	}
	*(void **)&cu.register_callbacks =
		dlsym(h, "cuptiActivityRegisterCallbacks");
	*(void **)&cu.enable = dlsym(h, "cuptiActivityEnable");
	*(void **)&cu.disable = dlsym(h, "cuptiActivityDisable");
	*(void **)&cu.next = dlsym(h, "cuptiActivityGetNextRecord");
	*(void **)&cu.flush = dlsym(h, "cuptiActivityFlushAll");
	if (!cu.register_callbacks || !cu.enable || !cu.disable || !cu.next ||
	    !cu.flush ||
	    cu.register_callbacks(requested, completed) != CUPTI_SUCCESS ||
	    cu.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti-floor: CUPTI refused kernel records\n");
		return 1;
	}
	atexit(at_exit);
	const char *sample = getenv("CUPTI_FLOOR_SAMPLE");
	pthread_t t;
	if (sample && sscanf(sample, "%u:%u", &on_ms, &off_ms) == 2 &&
	    on_ms && off_ms && !pthread_create(&t, NULL, switcher, NULL))
		pthread_detach(t);
	return 1;
}
