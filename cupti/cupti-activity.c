/*
 * cupti-activity.c - records GPU activity with CUPTI's Activity API.
 *
 * Loads libcupti at run time, reusing the copy the process already has
 * (PyTorch links one; a second copy would be a second, conflicting CUPTI).
 * Enables concurrent kernel, memcpy and memset records; buffers are parsed
 * in CUPTI's completion callback into compact dnntrace records.
 *
 * A launch is tied to the call that made it in one of two ways. By
 * callback (the default): CUPTI's one callback subscriber, on the launch
 * functions only, notes the correlation id of each launch made inside a
 * call, and the tie is written just before its kernel's record. No launch
 * record, no external correlation: on an H100 a launch inside a call cost
 * what it costs with kernel records alone, against about 1 us more by
 * records (tests/bench/launch-cost.c). The subscriber is given up the moment the
 * program asks for one (PyTorch's profiler does, and fails for good when
 * it cannot have it), or never taken (DNNTRACE_CUPTI_SUBSCRIBE=0); then by
 * records: external correlation with CUSTOM2 ids (PyTorch's profiler uses
 * CUSTOM0/1) carried by the launch API records only.
 *
 * Sampled recording (DNNTRACE_GPU_SAMPLE) switches all of it on for one
 * window in N and off in between, from the flusher thread; the ties stay
 * as they are.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti-internal.h"
#include "dt-cupti.h"
#include "dt-trace.h"

#define BUFFER_SIZE  (4u << 20) /* CUPTI advises 1 to 10 MiB */
#define CUPTI_SONAME "libcupti.so.13"

/* The CUPTI functions used, looked up in the loaded library. */
#define CUPTI_FUNCTIONS(X)                                                     \
	X(cuptiGetVersion, (uint32_t *))                                       \
	X(cuptiGetResultString, (CUptiResult, const char **))                  \
	X(cuptiGetTimestamp, (uint64_t *))                                     \
	X(cuptiGetCallbackName,                                                \
	  (CUpti_CallbackDomain, uint32_t, const char **))                     \
	X(cuptiActivityRegisterCallbacks, (CUpti_BuffersCallbackRequestFunc,   \
					   CUpti_BuffersCallbackCompleteFunc)) \
	X(cuptiActivityEnable, (CUpti_ActivityKind))                           \
	X(cuptiActivityDisable, (CUpti_ActivityKind))                          \
	X(cuptiActivityEnableAndDump, (CUpti_ActivityKind))                    \
	X(cuptiActivityEnableRuntimeApi, (CUpti_CallbackId, uint8_t))          \
	X(cuptiActivityEnableDriverApi, (CUpti_CallbackId, uint8_t))           \
	X(cuptiActivityGetNextRecord, (uint8_t *, size_t, CUpti_Activity **))  \
	X(cuptiActivityFlushAll, (uint32_t))                                   \
	X(cuptiActivityGetNumDroppedRecords, (CUcontext, uint32_t, size_t *))  \
	X(cuptiActivityPushExternalCorrelationId,                              \
	  (CUpti_ExternalCorrelationKind, uint64_t))                           \
	X(cuptiActivityPopExternalCorrelationId,                               \
	  (CUpti_ExternalCorrelationKind, uint64_t *))                         \
	X(cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc)) \
	X(cuptiSubscribe_v2, (CUpti_SubscriberHandle *, CUpti_CallbackFunc,    \
			      void *, CUpti_SubscriberParams *))               \
	X(cuptiUnsubscribe, (CUpti_SubscriberHandle))                          \
	X(cuptiEnableCallback,                                                 \
	  (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,             \
	   CUpti_CallbackId))

static struct {
#define FN_PTR_(name, args) CUptiResult(*name) args;
	CUPTI_FUNCTIONS(FN_PTR_)
#undef FN_PTR_
} cu;

volatile int dt_cupti_tagging;
__thread uint64_t dt_cupti_call;
volatile int dt_cupti_sampled;
_Atomic unsigned dt_cupti_window;

static struct {
	pthread_once_t once;
	int on;
	bool starting; /* start_once() is running (in the parent, after fork) */
	_Atomic int yielded;       /* another CUPTI client has the callbacks */
	_Atomic uint64_t rearm_at; /* when to take them back (0: not yet) */
	char state[PATH_MAX + 96];
	struct dt_cupti_sink sink;
	unsigned flush_ms;
	pthread_t flusher;
	bool flusher_started;
	_Atomic int stopping;
	_Atomic uint64_t dropped;
	_Atomic uint64_t no_time;
	_Atomic int active;      /* some activity was recorded */
	_Atomic int final_flush; /* 1: asked of the flusher, 2: done */
	/* sampled recording: one window of window_ms in sample_n (0: all
	 * the time), the next one opening or closing at toggle_at */
	unsigned sample_n, window_ms;
	uint64_t toggle_at, period_end, rng;
	bool first_window; /* open since the start, until the GPU is used */
	enum dt_tie tie;   /* how launches are tied to calls */
	CUpti_SubscriberHandle subscriber; /* ties by callback */
	unsigned layers;   /* whose launch records: LAUNCH_* */
} c = { .once = PTHREAD_ONCE_INIT };

static const char *result_name(CUptiResult r)
{
	const char *s = NULL;

	if (cu.cuptiGetResultString && !cu.cuptiGetResultString(r, &s) && s)
		return s;
	return "unknown CUPTI error";
}

/* ------------------------------------------------------------- loading */

/* Written once by the host's constructor, before its first call here. */
static struct dt_cupti_host host;

void dt_cupti_init(const struct dt_cupti_host *h)
{
	host = *h;
}

void *cupti_dlsym(void *handle, const char *name)
{
	return host.dlsym_next ? host.dlsym_next(handle, name) : NULL;
}

static int find_cudart(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base;

	(void)size;
	if (!info->dlpi_name || !(base = strrchr(info->dlpi_name, '/')))
		return 0;
	if (strncmp(base + 1, "libcudart.so", 12) != 0)
		return 0;
	snprintf(data, PATH_MAX, "%.*s", (int)(base - info->dlpi_name),
		 info->dlpi_name);
	return 1;
}

/* The CUPTI the process has loaded already, or NULL (a reference taken). */
static void *loaded_cupti(void)
{
	void *h = dlopen(CUPTI_SONAME, RTLD_NOW | RTLD_NOLOAD);

	return h ? h : dlopen("libcupti.so", RTLD_NOW | RTLD_NOLOAD);
}

/* The CUPTI of this process: the one already loaded, else one next to the
 * CUDA runtime in use, else the toolkit's. *path gets where it came from. */
static void *load_cupti(char *path, size_t size)
{
	const char *env = getenv("DNNTRACE_CUPTI_PATH");
	char dir[PATH_MAX] = "";
	void *h = loaded_cupti();

	if (!h && env && *env && (h = dlopen(env, RTLD_NOW)))
		snprintf(path, size, "%s", env);
	if (!h && dl_iterate_phdr(find_cudart, dir)) {
		snprintf(path, size, "%s/%s", dir, CUPTI_SONAME);
		h = dlopen(path, RTLD_NOW);
	}
	const char *home = getenv("CUDA_HOME");
	if (!h && home && *home) {
		snprintf(path, size, "%s/lib64/%s", home, CUPTI_SONAME);
		h = dlopen(path, RTLD_NOW);
	}
	if (!h) {
		snprintf(path, size, "/usr/local/cuda/lib64/%s", CUPTI_SONAME);
		h = dlopen(path, RTLD_NOW);
	}
	if (!h)
		h = dlopen(CUPTI_SONAME, RTLD_NOW);
	if (h) {
		/* say which file it really is */
		struct link_map *lm;
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm->l_name)
			snprintf(path, size, "%s", lm->l_name);
	}
	return h;
}

/* ------------------------------------------------------------- records */


int cupti_emit_tail(void *fixed, uint32_t fixed_size, const void *tail,
		    uint32_t len, bool now)
{
	uint8_t buf[8192] __attribute__((aligned(8)));
	uint32_t size;

	if (len > 4096)
		len = 4096;
	size = dt_rec_align(fixed_size + len);
	memset(buf, 0, size);
	memcpy(buf, fixed, fixed_size);
	if (len)
		memcpy(buf + fixed_size, tail, len);
	((struct dt_rec_hdr *)buf)->size = size;
	/* `len` is the last fixed field of every record with a tail */
	memcpy(buf + fixed_size - 4, &len, 4);
	return now ? cupti_emit_now(buf, size) : cupti_emit(buf, size);
}

/* A record with a text tail. */
static void emit_with_text(void *fixed, uint32_t fixed_size, const char *text)
{
	cupti_emit_tail(fixed, fixed_size, text,
			text ? (uint32_t)strnlen(text, 4096) : 0, false);
}

/* A calibration pair for the CUPTI clock; only once there is activity, so
 * that a process with no GPU work gets no trace file from it. */
static void emit_clock(void)
{
	struct dt_rec_clock r;
	uint64_t ts = 0;

	if (!atomic_load(&c.active))
		return;
	REC_INIT(r, DT_REC_CLOCK);
	r.mono = cupti_mono_ns();
	if (cu.cuptiGetTimestamp(&ts) != CUPTI_SUCCESS)
		return;
	r.other = ts;
	r.clock = DT_CLOCK_CUPTI;
	c.sink.emit(&r, sizeof(r));
}

/* ------------------------------------------------ ties by callback
 *
 * The launch callback, on the launching thread, notes which call made a
 * launch: a slot per correlation id, modulo the table's size. The thread
 * that parses CUPTI's buffers finds a kernel's (copy's, set's) slot and
 * writes the tie (a CORR record, as external correlation gives) just
 * before the kernel, once per launch: a graph launch's kernels share it.
 * A slot is reused after TIE_SLOTS more correlation ids; a kernel whose
 * slot was taken by a later launch before its buffer was parsed may have
 * lost its tie, and is counted with CUPTI's dropped records.
 */
#define TIE_BITS  20
#define TIE_SLOTS (1u << TIE_BITS)
struct tie {
	_Atomic uint32_t corr; /* 0 while being written */
	_Atomic uint32_t said; /* the CORR record was written */
	_Atomic uint64_t call;
};
static struct tie *ties;
static _Atomic uint64_t ties_lost;

static void CUPTIAPI on_launch(void *arg, CUpti_CallbackDomain domain,
			       CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	uint64_t call = dt_cupti_call;

	(void)arg;
	(void)domain;
	(void)cbid;
	/* on the way in, before the kernel can run and its record be
	 * parsed; a launch that fails makes no activity record to tie */
	if (!call || cb->callbackSite != CUPTI_API_ENTER || !cb->correlationId)
		return;
	struct tie *t = &ties[cb->correlationId & (TIE_SLOTS - 1)];
	atomic_store_explicit(&t->corr, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&t->said, 0, memory_order_relaxed);
	atomic_store_explicit(&t->call, call, memory_order_relaxed);
	atomic_store_explicit(&t->corr, cb->correlationId,
			      memory_order_release);
}

/* Before an activity record of launch corr: its tie, the first time. */
static void tie_say(uint32_t corr)
{
	if (!ties || !corr)
		return;
	struct tie *t = &ties[corr & (TIE_SLOTS - 1)];
	uint32_t now = atomic_load_explicit(&t->corr, memory_order_acquire);
	if (now != corr) {
		if (now && (int32_t)(now - corr) > 0)
			atomic_fetch_add(&ties_lost, 1);
		return;
	}
	uint64_t call = atomic_load_explicit(&t->call, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&t->corr, memory_order_relaxed) != corr ||
	    atomic_exchange(&t->said, 1))
		return;
	struct dt_rec_corr r;
	REC_INIT(r, DT_REC_CORR);
	r.call = call;
	r.corr = corr;
	c.sink.emit(&r, sizeof(r));
}

static void on_kernel(const CUpti_ActivityKernel10 *k)
{
	struct dt_rec_kernel r;

	tie_say(k->correlationId);
	REC_INIT(r, DT_REC_KERNEL);
	r.start = k->start;
	r.end = k->end;
	r.corr = k->correlationId;
	r.device = k->deviceId;
	r.context = k->contextId;
	r.stream = k->streamId;
	r.grid_x = k->gridX;
	r.grid_y = k->gridY;
	r.grid_z = k->gridZ;
	r.block_x = k->blockX;
	r.block_y = k->blockY;
	r.block_z = k->blockZ;
	r.static_smem = k->staticSharedMemory;
	r.dynamic_smem = k->dynamicSharedMemory;
	r.registers = k->registersPerThread;
	r.graph_id = k->graphId;
	r.graph_node = k->graphNodeId;
	if (k->start == 0 && k->end == 0) {
		r.flags |= DT_KERNEL_NO_TIME;
		atomic_fetch_add(&c.no_time, 1);
	}
	emit_with_text(&r, sizeof(r), k->name);
}

static void on_memcpy(const CUpti_ActivityMemcpy6 *m)
{
	struct dt_rec_memcpy r;

	tie_say(m->correlationId);
	REC_INIT(r, DT_REC_MEMCPY);
	r.start = m->start;
	r.end = m->end;
	r.bytes = m->bytes;
	r.corr = m->correlationId;
	r.device = m->deviceId;
	r.context = m->contextId;
	r.stream = m->streamId;
	r.copy_kind = m->copyKind;
	r.src_kind = m->srcKind;
	r.dst_kind = m->dstKind;
	r.flags = m->flags;
	c.sink.emit(&r, sizeof(r));
}

static void on_memset(const CUpti_ActivityMemset4 *m)
{
	struct dt_rec_memset r;

	tie_say(m->correlationId);
	REC_INIT(r, DT_REC_MEMSET);
	r.start = m->start;
	r.end = m->end;
	r.bytes = m->bytes;
	r.corr = m->correlationId;
	r.device = m->deviceId;
	r.context = m->contextId;
	r.stream = m->streamId;
	r.value = m->value;
	r.mem_kind = m->memoryKind;
	c.sink.emit(&r, sizeof(r));
}

static void on_external(const CUpti_ActivityExternalCorrelation *e)
{
	struct dt_rec_corr r;

	if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2)
		return; /* someone else's (PyTorch's profiler uses 0 and 1) */
	REC_INIT(r, DT_REC_CORR);
	r.call = e->externalId;
	r.corr = e->correlationId;
	c.sink.emit(&r, sizeof(r));
}

static void on_device(const CUpti_ActivityDevice5 *d)
{
	struct dt_rec_device r;

	REC_INIT(r, DT_REC_DEVICE);
	r.global_mem = d->globalMemorySize;
	r.mem_bandwidth = d->globalMemoryBandwidth;
	r.id = d->id;
	r.cc_major = d->computeCapabilityMajor;
	r.cc_minor = d->computeCapabilityMinor;
	r.sms = d->numMultiprocessors;
	r.core_clock = d->coreClockRate;
	r.l2_size = d->l2CacheSize;
	r.max_threads_per_sm =
		d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
	emit_with_text(&r, sizeof(r), d->name);
}

/*
 * The buffers handed to CUPTI, so that only those are parsed and freed: when
 * another client gives CUPTI back, buffers it requested may still complete
 * through our callback, and they are its to free, not ours.
 */
#define OWNED_MAX 256
static struct {
	pthread_mutex_t lock;
	uint8_t *buf[OWNED_MAX];
} owned = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool own(uint8_t *b, bool add)
{
	bool found = false;

	pthread_mutex_lock(&owned.lock);
	for (int i = 0; i < OWNED_MAX && !found; i++) {
		if (add && !owned.buf[i]) {
			owned.buf[i] = b;
			found = true;
		} else if (!add && owned.buf[i] == b) {
			owned.buf[i] = NULL;
			found = true;
		}
	}
	pthread_mutex_unlock(&owned.lock);
	return found;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
				      size_t *max_records)
{
	*buffer = NULL;
	if (posix_memalign((void **)buffer, 8, BUFFER_SIZE))
		*buffer = NULL; /* CUPTI drops records and counts them */
	else if (!own(*buffer, true)) {
		free(*buffer); /* too many outstanding: let CUPTI drop */
		*buffer = NULL;
	}
	*size = BUFFER_SIZE;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
				      uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)ctx;
	(void)stream;
	(void)size;
	if (!buffer || !own(buffer, false))
		return; /* another client's buffer */
	if (valid && !atomic_exchange(&c.active, 1))
		emit_clock(); /* the first calibration goes before the first
				 kernel */
	if (valid)
		cupti_kernels_flush(); /* a kernel's library before it */
	while (valid && cu.cuptiActivityGetNextRecord(buffer, valid, &rec) ==
				CUPTI_SUCCESS) {
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		case CUPTI_ACTIVITY_KIND_KERNEL:
			on_kernel((const void *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			on_memcpy((const void *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			on_memset((const void *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
			on_external((const void *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_DEVICE:
			on_device((const void *)rec);
			break;
		case CUPTI_ACTIVITY_KIND_DRIVER:
		case CUPTI_ACTIVITY_KIND_RUNTIME:
			cupti_graphs_api_record(rec);
			break;
		default:
			break; /* launch API records: carriers only */
		}
	}
	free(buffer);
	if (cu.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) !=
	    CUPTI_SUCCESS)
		dropped = 0;
	dropped += atomic_exchange(&ties_lost, 0); /* ties are records too */
	if (dropped) {
		struct dt_rec_loss l;
		REC_INIT(l, DT_REC_LOSS);
		l.t = cupti_mono_ns();
		l.count = dropped;
		l.reason = DT_LOSS_CUPTI;
		c.sink.emit(&l, sizeof(l));
		atomic_fetch_add(&c.dropped, dropped);
	}
}

/* ------------------------------------------------------------ lifecycle */

/* Launch APIs (and asynchronous copies and sets) carry the external
 * correlation records; enable exactly those, by name. */
static bool is_launch_api(const char *name)
{
	static const char *const prefixes[] = {
		"cuLaunch",     "cuGraphLaunch",   "cudaLaunch",
		"__cudaLaunch", "cudaGraphLaunch",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return (!strncmp(name, "cuMem", 5) || !strncmp(name, "cudaMem", 7)) &&
	       strstr(name, "Async") &&
	       (strstr(name, "cpy") || strstr(name, "set"));
}

/*
 * Which layer's launch records: DNNTRACE_LAUNCH_API=driver (the default),
 * runtime or both. cuDNN launches through the driver: with the driver's
 * records alone, as much GPU time was tied to cuDNN calls as with both
 * (H100: SDPA 44%, a small CNN 51%, an LSTM 95%), with the runtime's alone
 * 0.4%, 51% and 37%; and every launch the runtime's records leave out is
 * a callback saved (the LSTM, per interleaved round, driver's alone over
 * both: 0.85, 0.90, 1.04, 0.88; 0.92, 0.98, 1.03, 0.86). The runtime's
 * graph launches are kept: a graph launched through it is tied to its
 * kernels by them.
 */
enum { LAUNCH_DRIVER = 1, LAUNCH_RUNTIME = 2 };
static unsigned launch_layers(void)
{
	const char *env = getenv("DNNTRACE_LAUNCH_API");

	if (!env || !*env || !strcmp(env, "driver"))
		return LAUNCH_DRIVER;
	if (!strcmp(env, "runtime"))
		return LAUNCH_RUNTIME;
	if (!strcmp(env, "both"))
		return LAUNCH_DRIVER | LAUNCH_RUNTIME;
	fprintf(stderr,
		"dnntrace: DNNTRACE_LAUNCH_API=%s is not driver, runtime or "
		"both: the driver's are recorded\n",
		env);
	return LAUNCH_DRIVER;
}

/* One launch function, callback id `id` of the runtime's layer or the
 * driver's, tied as `tie` says when `layer` is one of those chosen: its
 * callback, or its API records. Graph launches' records are enabled
 * either way: they tie a graph's replayed kernels to their launch
 * (cupti-graphs.c), and carry external correlation like any other.
 * Returns whether it ties. */
static bool enable_launch_api(enum dt_tie tie, bool runtime, uint32_t id,
			      const char *name, bool layer)
{
	bool by_callback = layer && tie == DT_TIE_CALLBACK,
	     by_records = layer && tie == DT_TIE_RECORDS;
	bool tied = false;

	if (by_callback)
		tied = cu.cuptiEnableCallback(1, c.subscriber,
					      runtime
						      ? CUPTI_CB_DOMAIN_RUNTIME_API
						      : CUPTI_CB_DOMAIN_DRIVER_API,
					      id) == CUPTI_SUCCESS;
	if (!by_records && !cupti_graphs_is_launch(name))
		return tied;
	CUptiResult r = runtime ? cu.cuptiActivityEnableRuntimeApi(id, 1)
				: cu.cuptiActivityEnableDriverApi(id, 1);
	if (r != CUPTI_SUCCESS)
		return tied;
	cupti_graphs_launch_api(runtime, id, name);
	return tied || tie == DT_TIE_RECORDS;
}

/* The launch functions of the layers chosen, tied as `tie` says; returns
 * how many tie. */
static int enable_launch_apis(enum dt_tie tie)
{
	int n = 0;

	for (int runtime = 0; runtime < 2; runtime++) {
		CUpti_CallbackDomain domain = runtime
						      ? CUPTI_CB_DOMAIN_RUNTIME_API
						      : CUPTI_CB_DOMAIN_DRIVER_API;
		uint32_t size = runtime ? CUPTI_RUNTIME_TRACE_CBID_SIZE
					: CUPTI_DRIVER_TRACE_CBID_SIZE;
		bool layer = c.layers & (runtime ? LAUNCH_RUNTIME : LAUNCH_DRIVER);
		for (uint32_t id = 1; id < size + 64; id++) {
			const char *name = NULL;
			if (cu.cuptiGetCallbackName(domain, id, &name) ==
				    CUPTI_SUCCESS &&
			    name && is_launch_api(name))
				n += enable_launch_api(tie, runtime, id, name,
						       layer);
		}
	}
	return n;
}

/* Which activity kinds to record: DNNTRACE_CUPTI_KINDS, a comma-separated
 * subset of kernel, memcpy, memset (all by default). */
enum { KIND_KERNEL = 1, KIND_MEMCPY = 2, KIND_MEMSET = 4 };
static unsigned wanted_kinds(void)
{
	const char *env = getenv("DNNTRACE_CUPTI_KINDS");
	unsigned k = 0;

	if (!env || !*env)
		return KIND_KERNEL | KIND_MEMCPY | KIND_MEMSET;
	k |= strstr(env, "kernel") ? KIND_KERNEL : 0;
	k |= strstr(env, "memcpy") ? KIND_MEMCPY : 0;
	k |= strstr(env, "memset") ? KIND_MEMSET : 0;
	return k;
}

/* The kinds of records wanted: kernels, copies, sets. */
static CUptiResult enable_kinds(void)
{
	unsigned kinds = wanted_kinds();
	CUptiResult r;

	if ((kinds & KIND_KERNEL) &&
	    (r = cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)))
		return r;
	if (kinds & KIND_MEMCPY)
		cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
	if (kinds & KIND_MEMSET)
		cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
	return CUPTI_SUCCESS;
}

static void emit_state(enum dt_gpu_state state, int code, const char *why);

/* CUPTI's one callback subscriber, for ties by callback: taken unless
 * DNNTRACE_CUPTI_SUBSCRIBE=0, or someone has it. */
static pthread_mutex_t subscriber_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int subscribed;

static bool subscribe(void)
{
	const char *env = getenv("DNNTRACE_CUPTI_SUBSCRIBE");
	CUpti_SubscriberParams params = {
		.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
		.subscriberName = "dnntrace",
	};

	if (atomic_load(&subscribed))
		return true; /* still ours: an activity client came and went */
	if ((env && !strcmp(env, "0")) ||
	    (!ties && !(ties = calloc(TIE_SLOTS, sizeof(*ties)))))
		return false;
	if (cu.cuptiSubscribe_v2(&c.subscriber, on_launch, NULL, &params) !=
	    CUPTI_SUCCESS)
		return false;
	/* correlation ids start again at 1 after cuptiFinalize: slots of
	 * a session before it would tie the new ids to old calls (a fresh
	 * table is left untouched: 16 MiB that no launch has used) */
	static bool used;
	if (used)
		memset(ties, 0, TIE_SLOTS * sizeof(*ties));
	used = true;
	atomic_store(&subscribed, 1);
	return true;
}

/* Under subscriber_lock: CUPTI's subscriber let go. */
static void unsubscribe(void)
{
	cu.cuptiUnsubscribe(c.subscriber);
	atomic_store(&subscribed, 0);
}

/* Launches tied by their records: external correlation, carried by the
 * launch API records. */
static enum dt_tie tie_by_records(void)
{
	if (cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) !=
		    CUPTI_SUCCESS ||
	    enable_launch_apis(DT_TIE_RECORDS) == 0)
		return DT_TIE_NONE;
	return DT_TIE_RECORDS;
}

/*
 * Our callbacks and kinds: at start, and again after another client let
 * CUPTI go. *tie: how launches are tied to calls (DT_TIE_*, 0: they
 * cannot be).
 *
 * Sampled recording switches the kinds off and on, never the ties:
 * switching the launch records too left every later window without
 * correlation records in one run of three (H100, CUPTI 13.0.1), and
 * launch records cost a callback per launch, not a GPU timestamp.
 */
static CUptiResult arm(enum dt_tie *tie)
{
	CUptiResult r;

	if ((r = cu.cuptiActivityRegisterCallbacks(buffer_requested,
						   buffer_completed)) ||
	    (r = enable_kinds()))
		return r;
	*tie = DT_TIE_NONE;
	pthread_mutex_lock(&subscriber_lock);
	if (subscribe()) {
		if (enable_launch_apis(DT_TIE_CALLBACK) > 0) {
			*tie = DT_TIE_CALLBACK;
		} else {
			unsubscribe();
		}
	}
	if (!*tie)
		*tie = tie_by_records();
	c.tie = *tie;
	dt_cupti_tagging = *tie;
	pthread_mutex_unlock(&subscriber_lock);
	return CUPTI_SUCCESS;
}

/* The program asks for CUPTI's subscriber: it gets it, and launches are
 * tied by their records from now on (a call running meanwhile may have
 * its later launches untied). */
static void give_up_subscriber(void)
{
	pthread_mutex_lock(&subscriber_lock);
	if (atomic_load(&subscribed)) {
		/* while another client has CUPTI, its session is left alone:
		 * taking CUPTI back ties by records */
		bool yielded = atomic_load(&c.yielded);
		bool recording = !yielded && (!c.sample_n ||
					      (atomic_load(&dt_cupti_window) & 1));
		enum dt_tie tie = yielded ? DT_TIE_NONE : tie_by_records();
		c.tie = tie;
		if (dt_cupti_tagging)
			dt_cupti_tagging = tie;
		unsubscribe();
		if (recording)
			emit_state(DT_GPU_ON, 0,
				   tie ? "on: the program took CUPTI's "
					 "callbacks; launches tied to calls "
					 "by their records from here"
				       : "on: the program took CUPTI's "
					 "callbacks; launches no longer tied "
					 "to calls");
	}
	pthread_mutex_unlock(&subscriber_lock);
}

static void disable_kinds(void)
{
	unsigned kinds = wanted_kinds();

	if (kinds & KIND_KERNEL)
		cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (kinds & KIND_MEMCPY)
		cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
	if (kinds & KIND_MEMSET)
		cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
}

static void emit_state(enum dt_gpu_state state, int code, const char *why)
{
	struct dt_rec_gpu_state r;

	REC_INIT(r, DT_REC_GPU_STATE);
	r.t = cupti_mono_ns();
	r.state = state;
	r.code = code;
	r.dropped = atomic_load(&c.dropped);
	emit_with_text(&r, sizeof(r), why);
}

/* ------------------------------------------------------------ sampling
 *
 * Time is cut into periods of sample_n windows; in each, one window, at a
 * random place so that a program's own period cannot line up with ours.
 * The flusher opens it (all kinds and launch records on, calls tagged) and
 * closes it (all off, calls untagged). dt_cupti_window is bumped after
 * everything is on and before anything goes off: a call that read the
 * same odd count before and after itself had every launch recorded.
 */

#define MS 1000000ull

/* A window opened or closed; its words say the sampling, which the
 * analyzer reads. */
static void emit_window(enum dt_gpu_state state)
{
	char why[64];

	snprintf(why, sizeof(why), "one window of %u ms in %u", c.window_ms,
		 c.sample_n);
	emit_state(state, (int)c.sample_n, why);
}

static uint64_t next_random(void)
{
	/* xorshift64*: enough to place windows */
	c.rng ^= c.rng >> 12;
	c.rng ^= c.rng << 25;
	c.rng ^= c.rng >> 27;
	return c.rng * 0x2545f4914f6cdd1dull;
}

/* Where the window of the period that starts now goes. */
static void plan_window(uint64_t period_start)
{
	uint64_t slack = (uint64_t)(c.sample_n - 1) * c.window_ms * MS;

	c.period_end = period_start + (uint64_t)c.sample_n * c.window_ms * MS;
	c.toggle_at = period_start + (slack ? next_random() % slack : 0);
}

static void window_open(void)
{
	CUptiResult r = enable_kinds();

	if (r != CUPTI_SUCCESS) {
		emit_state(DT_GPU_OFF, r, "could not open a sampling window");
		c.sample_n = 0; /* stays closed */
		return;
	}
	pthread_mutex_lock(&subscriber_lock);
	dt_cupti_tagging = c.tie;
	pthread_mutex_unlock(&subscriber_lock);
	atomic_fetch_add(&dt_cupti_window, 1);
	emit_window(DT_GPU_WINDOW_OPEN);
	c.toggle_at = cupti_mono_ns() + c.window_ms * MS;
}

static void window_close(void)
{
	emit_window(DT_GPU_WINDOW_CLOSE);
	atomic_fetch_add(&dt_cupti_window, 1);
	pthread_mutex_lock(&subscriber_lock);
	dt_cupti_tagging = 0;
	pthread_mutex_unlock(&subscriber_lock);
	disable_kinds();
	uint64_t now = cupti_mono_ns();
	plan_window(c.period_end > now ? c.period_end : now);
}

static bool gpu_in_use(void);

/* On the flusher thread: open or close a window when it is time. */
static void sample_tick(void)
{
	if (!c.sample_n || atomic_load(&c.yielded) ||
	    cupti_mono_ns() < c.toggle_at)
		return;
	if (c.first_window && !gpu_in_use())
		return;
	c.first_window = false;
	if (atomic_load(&dt_cupti_window) & 1)
		window_close();
	else
		window_open();
}

/* The CUPTI releases whose own worker thread was seen to crash (SIGSEGV)
 * when kernel records are switched off and on while a program runs: 13.0.1
 * did, in a client of 100 lines with no dnntrace in the process
 * (tests/bench/cupti-floor.c, CUPTI_FLOOR_SAMPLE). */
#define CUPTI_SWITCH_CRASHES(v) ((v) <= 130001)

/* DNNTRACE_GPU_SAMPLE=N[:MS]: one window of MS (100) in N; refused, with
 * a word in *refused, on a CUPTI that crashes doing it, unless
 * DNNTRACE_GPU_SAMPLE_UNSAFE=1 asks for it anyway. */
static void sample_config(uint32_t version, char *refused, size_t size)
{
	const char *v = getenv("DNNTRACE_GPU_SAMPLE");
	unsigned long n, ms = 100;
	char *end;

	if (!v || !*v)
		return;
	n = strtoul(v, &end, 10);
	if (*end == ':')
		ms = strtoul(end + 1, &end, 10);
	if (*end || n < 2 || n > 1000000 || ms < 1 || ms > 3600000) {
		fprintf(stderr,
			"dnntrace: DNNTRACE_GPU_SAMPLE=%s is not N[:MS] with "
			"N from 2 and MS from 1: every launch is recorded\n",
			v);
		return;
	}
	if (CUPTI_SWITCH_CRASHES(version) &&
	    !dt_env_true("DNNTRACE_GPU_SAMPLE_UNSAFE")) {
		snprintf(refused, size,
			 ", not sampled: CUPTI %u.%u.%u crashes switching "
			 "records",
			 version / 10000, version / 100 % 100, version % 100);
		fprintf(stderr,
			"dnntrace: GPU sampling refused: CUPTI %u.%u.%u can "
			"crash the program when kernel records are switched "
			"off and on; every launch is recorded "
			"(DNNTRACE_GPU_SAMPLE_UNSAFE=1 samples anyway)\n",
			version / 10000, version / 100 % 100, version % 100);
		return;
	}
	c.sample_n = (unsigned)n;
	c.window_ms = (unsigned)ms;
	c.rng = (cupti_mono_ns() ^ (uint64_t)getpid() << 32) | 1;
}

/* Recording just started with everything on: that is the first window,
 * closed once the GPU is in use and window_ms have passed (closing it
 * at once went with runs that had no correlation record at all). */
static void sample_start(void)
{
	atomic_store(&dt_cupti_window, 1);
	dt_cupti_sampled = 1;
	c.first_window = true;
	c.toggle_at = cupti_mono_ns() + c.window_ms * MS;
	emit_window(DT_GPU_WINDOW_OPEN);
}

/* CUPTI's default clock, put back after a client that changed it. */
static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Another client is done with CUPTI (it disabled kernel records or
 * finalized, and has been quiet since): take it back. */
static void rearm(void)
{
	enum dt_tie tie;
	CUptiResult r;

	cu.cuptiActivityRegisterTimestampCallback(realtime_ns);
	r = arm(&tie);
	atomic_store(&c.rearm_at, 0);
	if (r != CUPTI_SUCCESS) {
		emit_state(DT_GPU_OFF, r, "could not take CUPTI back");
		return;
	}
	atomic_store(&c.yielded, 0);
	emit_state(DT_GPU_RESUMED, 0, "the other CUPTI client let go");
	emit_clock();
	if (c.sample_n) {
		/* everything is on again: that is a window, closed on time */
		if (!(atomic_load(&dt_cupti_window) & 1))
			atomic_fetch_add(&dt_cupti_window, 1);
		emit_window(DT_GPU_WINDOW_OPEN);
		c.toggle_at = cupti_mono_ns() + c.window_ms * MS;
	}
}

/* record --gpu-metrics: what to start once there is GPU work. */
static struct {
	const char *arg; /* DNNTRACE_GPU_METRICS, or NULL */
	void *cupti;
	bool started;
} pm;

/* Whether the program's GPU 0 has a context yet (the driver's primary
 * one), or GPU work has been seen. */
static bool gpu_in_use(void)
{
	static CUresult (*state)(CUdevice, unsigned *, int *);
	unsigned flags;
	int active = 0;

	if (atomic_load(&c.active))
		return true;
	if (!state)
		*(void **)&state = dlsym(RTLD_DEFAULT,
					 "cuDevicePrimaryCtxGetState");
	return state && state(0, &flags, &active) == CUDA_SUCCESS && active;
}

/* Start sampling the counters once the GPU is in use; decode what they
 * sampled (every 10 ms: the flusher's slice). */
static void pm_tick(void)
{
	if (pm.arg && !pm.started && gpu_in_use()) {
		pm.started = true;
		cupti_pm_start(pm.cupti, pm.arg);
	}
	cupti_pm_poll();
}

static void *flusher_main(void *arg)
{
	sigset_t all;

	(void)arg;
	/* a fatal signal's handler waits for this thread: never run it here */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "dnntrace-cupti");
	while (!atomic_load(&c.stopping)) {
		/* sleep flush_ms in 10 ms slices, to answer a final flush soon
		 */
		for (unsigned slept = 0;
		     slept < c.flush_ms && !atomic_load(&c.final_flush);
		     slept += 10) {
			struct timespec ts = { 0, 10000000L };
			nanosleep(&ts, NULL);
			pm_tick();
			sample_tick();
		}
		if (atomic_load(&c.final_flush) == 1) {
			dt_cupti_flush(1);
			atomic_store(&c.final_flush, 2);
			break;
		}
		if (atomic_load(&c.stopping))
			break;
		if (!atomic_load(&c.yielded))
			dt_cupti_flush(0);
		else if (atomic_load(&c.rearm_at) &&
			 cupti_mono_ns() >= atomic_load(&c.rearm_at))
			rearm();
	}
	return NULL;
}

/*
 * Without a CUDA driver or a GPU, CUPTI only says CUPTI_ERROR_UNKNOWN: ask
 * the driver (the one CUPTI loaded, if any) whether it sees a GPU. Returns
 * true with the reason in words when it does not.
 */
static bool no_gpu(char *buf, size_t size)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	CUresult (*init)(unsigned) = NULL;
	CUresult (*count)(int *) = NULL;
	CUresult r;
	int n = 0;

	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		snprintf(buf, size,
			 "no GPU visible (no CUDA driver: "
			 "libcuda.so.1 not found)");
		return true;
	}
	*(void **)&init = dlsym(h, "cuInit");
	*(void **)&count = dlsym(h, "cuDeviceGetCount");
	if (!init || !count)
		return false;
	r = init(0);
	if (r == CUDA_SUCCESS && (count(&n) != CUDA_SUCCESS || n > 0))
		return false; /* a GPU (or no answer): CUPTI's reason stands */
	if (r == CUDA_SUCCESS || r == CUDA_ERROR_NO_DEVICE)
		snprintf(buf, size, "no GPU visible%s%s%s",
			 vis ? " (CUDA_VISIBLE_DEVICES=" : "", vis ? vis : "",
			 vis ? ")" : "");
	else if (r == CUDA_ERROR_STUB_LIBRARY)
		snprintf(buf, size,
			 "no GPU visible (libcuda.so.1 is the "
			 "toolkit's stub, not a driver)");
	else
		snprintf(buf, size,
			 "the CUDA driver cannot be used (cuInit: error %d)",
			 (int)r);
	return true;
}

static void set_off(const char *fmt, const char *detail)
{
	snprintf(c.state, sizeof(c.state), fmt, detail);
}

static void start_once(void)
{
	char path[PATH_MAX] = "";
	const char *env = getenv("DNNTRACE_CUPTI");
	uint32_t version = 0;
	void *h;
	CUptiResult r;

	if (env && !strcmp(env, "0"))
		return set_off("off: switched off (DNNTRACE_CUPTI=0)%s", "");
	if (!wanted_kinds())
		return set_off("off: DNNTRACE_CUPTI_KINDS names no kind "
			       "(kernel, memcpy, memset)%s",
			       "");
	if (!(h = load_cupti(path, sizeof(path))))
		return set_off("off: no CUPTI library found (%s)", dlerror());
#define FN_LOAD_(name, args)                               \
	if (!(*(void **)&cu.name = cupti_dlsym(h, #name))) \
		return set_off("off: CUPTI lacks " #name "%s", "");
	CUPTI_FUNCTIONS(FN_LOAD_)
#undef FN_LOAD_
	if ((r = cu.cuptiGetVersion(&version)) != CUPTI_SUCCESS)
		return set_off("off: cuptiGetVersion failed: %s",
			       result_name(r));
	if (version < 130000) { /* CUPTI 12 reports 19..28: other layouts */
		snprintf(c.state, sizeof(c.state),
			 "off: CUPTI %u from %s is older than 13.0", version,
			 path);
		return;
	}
	enum dt_tie tie;
	char sampled[80] = "";
	sample_config(version, sampled, sizeof(sampled));
	c.layers = launch_layers();
	if ((r = arm(&tie)) != CUPTI_SUCCESS) {
		char why[256];
		if (no_gpu(why, sizeof(why)))
			return set_off("off: %s", why);
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
			return set_off("off: another tool holds CUPTI (Nsight, "
				       "compute-sanitizer, a debugger): %s",
				       result_name(r));
		return set_off("off: CUPTI refused kernel records: %s",
			       result_name(r));
	}
	cu.cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE);
	cupti_graphs_start(h);
	c.on = 1;
	/* the counters are sampled from the flusher, once GPU work shows a
	 * device in use: CUPTI's profiler fails inside cuInit, where an
	 * injected recorder starts */
	pm.arg = getenv("DNNTRACE_GPU_METRICS");
	pm.cupti = h;
	unsigned k = wanted_kinds();
	if (c.sample_n) {
		sample_start();
		snprintf(sampled, sizeof(sampled),
			 ", sampled: one window of %u ms in %u", c.window_ms,
			 c.sample_n);
	}
	snprintf(c.state, sizeof(c.state),
		 "on: CUPTI %u.%u.%u from %s (%s%s%s)%s%s%s", version / 10000,
		 version / 100 % 100, version % 100, path,
		 k & KIND_KERNEL ? "kernels" : "",
		 k & KIND_MEMCPY ? " memcpy" : "",
		 k & KIND_MEMSET ? " memset" : "",
		 tie == DT_TIE_CALLBACK  ? ""
		 : tie == DT_TIE_RECORDS ? ", tied to calls by launch records"
					 : ", not attributed to calls",
		 c.layers == LAUNCH_DRIVER    ? ""
		 : c.layers == LAUNCH_RUNTIME ? ", launch records: runtime"
					    : ", launch records: both",
		 sampled);
	if (pthread_create(&c.flusher, NULL, flusher_main, NULL) == 0)
		c.flusher_started = true;
}

static const struct dt_cupti_sink *pending_sink;
static unsigned pending_flush_ms;

static void start_with_args(void)
{
	c.starting = true;
	c.sink = *pending_sink;
	c.flush_ms = pending_flush_ms ? pending_flush_ms : 500;
	start_once();
	c.starting = false;
}

int cupti_emit(const void *rec, uint32_t size)
{
	return c.sink.emit ? c.sink.emit(rec, size) : 0;
}

int cupti_emit_now(const void *rec, uint32_t size)
{
	return c.sink.emit_now ? c.sink.emit_now(rec, size) : 0;
}

int dt_cupti_start(const struct dt_cupti_sink *sink, unsigned flush_ms)
{
	pending_sink = sink;
	pending_flush_ms = flush_ms;
	pthread_once(&c.once, start_with_args);
	return c.on;
}

const char *dt_cupti_state(void)
{
	return c.state[0] ? c.state : "off: not started";
}

void dt_cupti_push(uint64_t id)
{
	cu.cuptiActivityPushExternalCorrelationId(
		CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id);
}

void dt_cupti_pop(void)
{
	uint64_t last;

	cu.cuptiActivityPopExternalCorrelationId(
		CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

void dt_cupti_flush(int forced)
{
	if (!c.on || atomic_load(&c.yielded))
		return;
	cu.cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	emit_clock();
}

void dt_cupti_stop(void)
{
	if (!c.on || atomic_exchange(&c.stopping, 1))
		return;
	if (c.flusher_started)
		pthread_join(c.flusher, NULL);
	cupti_pm_stop();
	dt_cupti_flush(1);
}

int dt_cupti_flush_async(unsigned timeout_ms)
{
	if (!c.on || !c.flusher_started)
		return -1;
	atomic_store(&c.final_flush, 1);
	for (unsigned waited = 0; atomic_load(&c.final_flush) != 2; waited++) {
		if (waited >= timeout_ms)
			return -1;
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	return 0;
}

void dt_cupti_forget(void)
{
	dt_cupti_tagging = 0;
	atomic_store(&subscribed, 0);
	dt_cupti_graphs = 0;
	dt_cupti_sampled = 0;
	if (c.on || c.starting)
		set_off("off: %s", "CUPTI does not follow fork(); this process "
				   "is a fork's child");
	c.on = 0;
	c.flusher_started = false;
}

/* ---------------------------------------------------- sharing CUPTI
 *
 * CUPTI has one set of activity callbacks per process. When another client
 * (PyTorch's profiler) registers its own, ours stop receiving records: hand
 * over cleanly (flush ours first, say so in the trace) and take CUPTI back
 * once that client has disabled kernel records or finalized. These are the
 * CUPTI functions the application's libraries call; the shim's own CUPTI
 * calls never come here (they go through `cu`).
 */

#define DT_EXPORT __attribute__((visibility("default")))
#define REARM_DELAY_NS \
	200000000ull /* let the other client finish tearing down */

/* A function of the CUPTI the program loaded. The handle is kept, once:
 * the wrappers keep the functions they found. */
static void *real_cupti(const char *name)
{
	static void *_Atomic loaded;
	void *h = atomic_load(&loaded), *none = NULL;

	if (!h) {
		if (!(h = loaded_cupti()))
			return NULL;
		if (!atomic_compare_exchange_strong(&loaded, &none, h)) {
			dlclose(h); /* another thread kept one */
			h = none;
		}
	}
	return cupti_dlsym(h, name);
}

#define REAL(name)                                            \
	static __typeof__(&name) real_;                       \
	if (!real_)                                           \
		real_ = (__typeof__(&name))real_cupti(#name); \
	if (!real_)                                           \
	return CUPTI_ERROR_NOT_INITIALIZED

DT_EXPORT CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
			       CUpti_BuffersCallbackCompleteFunc complete)
{
	REAL(cuptiActivityRegisterCallbacks);
	if (c.on && request != buffer_requested &&
	    !atomic_exchange(&c.yielded, 1)) {
		dt_cupti_tagging = 0;
		/* calls from now on are not sampled: no window is open */
		if (atomic_load(&dt_cupti_window) & 1)
			atomic_fetch_add(&dt_cupti_window, 1);
		cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		emit_state(DT_GPU_TAKEN, 0,
			   "another CUPTI client (a profiler) took over");
	}
	atomic_store(&c.rearm_at, 0);
	return real_(request, complete);
}

DT_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	REAL(cuptiActivityDisable);
	CUptiResult r = real_(kind);
	if (atomic_load(&c.yielded) &&
	    (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
	     kind == CUPTI_ACTIVITY_KIND_KERNEL))
		atomic_store(&c.rearm_at, cupti_mono_ns() + REARM_DELAY_NS);
	return r;
}

/* The program (PyTorch's profiler, which never asks twice; XLA's, which
 * finds CUPTI's functions with dlsym) wants CUPTI's one subscriber: ours
 * goes first. A program that links CUPTI statically is not seen asking
 * (DNNTRACE_CUPTI_SUBSCRIBE=0 is for it). */
DT_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
				     CUpti_CallbackFunc callback,
				     void *userdata)
{
	REAL(cuptiSubscribe);
	give_up_subscriber();
	return real_(subscriber, callback, userdata);
}

DT_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
					CUpti_CallbackFunc callback,
					void *userdata,
					CUpti_SubscriberParams *params)
{
	REAL(cuptiSubscribe_v2);
	give_up_subscriber();
	return real_(subscriber, callback, userdata, params);
}

DT_EXPORT CUptiResult cuptiFinalize(void)
{
	REAL(cuptiFinalize);
	CUptiResult r = real_();
	atomic_store(&subscribed, 0); /* it went with everything else */
	if (atomic_load(&c.yielded))
		atomic_store(&c.rearm_at, cupti_mono_ns() + REARM_DELAY_NS);
	return r;
}

/* The wrappers above, for a program that finds CUPTI's functions with
 * dlsym() (XLA does): only in the CUPTI they forward to. */
void *dt_cupti_client_wrapper(const char *name, void *real)
{
	static const struct {
		const char *name;
		void *wrapper;
	} wrapped[] = {
		{ "cuptiActivityRegisterCallbacks",
		  (void *)cuptiActivityRegisterCallbacks },
		{ "cuptiActivityDisable", (void *)cuptiActivityDisable },
		{ "cuptiSubscribe", (void *)cuptiSubscribe },
		{ "cuptiSubscribe_v2", (void *)cuptiSubscribe_v2 },
		{ "cuptiFinalize", (void *)cuptiFinalize },
	};

	for (size_t i = 0; i < sizeof(wrapped) / sizeof(wrapped[0]); i++)
		if (!strcmp(name, wrapped[i].name))
			return real == real_cupti(name) ? wrapped[i].wrapper
							: NULL;
	return NULL;
}
