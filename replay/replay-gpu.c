/*
 * replay-gpu.c - the GPU as replay uses it: CUDA's driver API, cuDNN and
 * CUPTI loaded with dlopen (dnntrace links none, so every other command
 * runs where they are missing; replay, where CUPTI alone is), cuBLASLt
 * too where a trace has GEMMs (replay runs without it), the first
 * device and its primary context (the one cuDNN's runtime uses), device
 * memory within a bound, and timing of one way to run a problem: with
 * CUDA events until its median holds still, and, for calibration, by the
 * kernels CUPTI saw of each run, as the trace timed them. What to run is
 * replay-graph.c's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay-internal.h"

/* CUDA's driver API values used here (cuda.h's) */
#define CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE 38
#define CU_STREAM_NON_BLOCKING            1
#define CU_STREAM_WAIT_VALUE_GEQ          0
#define CU_EVENT_DEFAULT                  0

/* CUPTI's values used here (cupti_activity.h's): the work a trace counts
 * in an execution's time, and where a record of it keeps its kind, start
 * and end (the same in CUpti_ActivityKernel4 to Kernel10, Memcpy6 and
 * Memset4: records are read by that prefix, whatever their version). */
#define CUPTI_KIND_MEMCPY            1
#define CUPTI_KIND_MEMSET            2
#define CUPTI_KIND_CONCURRENT_KERNEL 10
#define CUPTI_FLUSH_FORCED           1
#define REC_KIND                     0
#define REC_START                    16
#define REC_END                      24

/* Device memory replay may hold at once, at most: the rest is the
 * machine's (another job's, or the driver's). */
#define MEM_FRACTION 0.8

/* A symbol of lib into *fn: first of the names that it exports. */
static bool sym(void *lib, void *fn, const char *const *names)
{
	for (; *names; names++) {
		void *p = dlsym(lib, *names);
		if (p) {
			memcpy(fn, &p, sizeof(p));
			return true;
		}
	}
	return false;
}

bool gpu_cudnn_fn(struct gpu *g, void *fn, const char *name)
{
	return sym(g->cudnn, fn, (const char *const[]){ name, NULL });
}

bool gpu_cublaslt_fn(struct gpu *g, void *fn, const char *name)
{
	return g->cublaslt &&
	       sym(g->cublaslt, fn, (const char *const[]){ name, NULL });
}

#define SYM(lib, field, ...) \
	sym(g->lib, &g->field, (const char *const[]){ __VA_ARGS__, NULL })

static bool load_cuda(struct gpu *g)
{
	return SYM(cuda, cuInit, "cuInit") &&
	       SYM(cuda, cuDeviceGet, "cuDeviceGet") &&
	       SYM(cuda, cuDeviceGetCount, "cuDeviceGetCount") &&
	       SYM(cuda, cuDeviceGetName, "cuDeviceGetName") &&
	       SYM(cuda, cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
	       SYM(cuda, cuDevicePrimaryCtxRetain,
		   "cuDevicePrimaryCtxRetain") &&
	       SYM(cuda, cuCtxSetCurrent, "cuCtxSetCurrent") &&
	       SYM(cuda, cuMemAlloc, "cuMemAlloc_v2") &&
	       SYM(cuda, cuMemFree, "cuMemFree_v2") &&
	       SYM(cuda, cuMemGetInfo, "cuMemGetInfo_v2") &&
	       SYM(cuda, cuMemcpyHtoD, "cuMemcpyHtoD_v2") &&
	       SYM(cuda, cuMemcpyDtoH, "cuMemcpyDtoH_v2") &&
	       SYM(cuda, cuMemsetD8Async, "cuMemsetD8Async") &&
	       SYM(cuda, cuStreamCreate, "cuStreamCreate") &&
	       SYM(cuda, cuStreamSynchronize, "cuStreamSynchronize") &&
	       SYM(cuda, cuEventCreate, "cuEventCreate") &&
	       SYM(cuda, cuEventRecord, "cuEventRecord") &&
	       SYM(cuda, cuEventSynchronize, "cuEventSynchronize") &&
	       SYM(cuda, cuEventElapsedTime, "cuEventElapsedTime_v2",
		   "cuEventElapsedTime");
}

static bool load_cudnn(struct gpu *g)
{
	/* optional: cuDNN before 9 lacks it */
	SYM(cudnn, cudnnGetLastErrorString, "cudnnGetLastErrorString");
	return SYM(cudnn, cudnnGetVersion, "cudnnGetVersion") &&
	       SYM(cudnn, cudnnCreate, "cudnnCreate") &&
	       SYM(cudnn, cudnnSetStream, "cudnnSetStream") &&
	       SYM(cudnn, cudnnGetErrorString, "cudnnGetErrorString") &&
	       SYM(cudnn, cudnnBackendCreateDescriptor,
		   "cudnnBackendCreateDescriptor") &&
	       SYM(cudnn, cudnnBackendDestroyDescriptor,
		   "cudnnBackendDestroyDescriptor") &&
	       SYM(cudnn, cudnnBackendFinalize, "cudnnBackendFinalize") &&
	       SYM(cudnn, cudnnBackendSetAttribute,
		   "cudnnBackendSetAttribute") &&
	       SYM(cudnn, cudnnBackendGetAttribute,
		   "cudnnBackendGetAttribute") &&
	       SYM(cudnn, cudnnBackendExecute, "cudnnBackendExecute");
}

/* ------------------------------------------------------------- CUPTI */

/* The GPU work CUPTI reported: CUPTI hands its buffers to callbacks that
 * take no argument of ours, hence one collector for the process. */
struct work {
	uint64_t start, end;
};

static struct {
	pthread_mutex_t mu;
	int (*next)(uint8_t *, size_t, void **);
	struct work *v;
	size_t n, cap;
	bool lost; /* a record or a buffer for them was not had */
} seen = { .mu = PTHREAD_MUTEX_INITIALIZER };

#define CUPTI_BUFFER (1 << 20)

static void buffer_requested(uint8_t **buf, size_t *size, size_t *max)
{
	/* CUPTI wants them 8-byte aligned */
	*buf = aligned_alloc(8, CUPTI_BUFFER);
	*size = *buf ? CUPTI_BUFFER : 0;
	*max = 0; /* as many records as fit */
	/* none: CUPTI drops the records */
	if (!*buf) {
		pthread_mutex_lock(&seen.mu);
		seen.lost = true;
		pthread_mutex_unlock(&seen.mu);
	}
}

static void keep(uint64_t start, uint64_t end)
{
	if (seen.n == seen.cap) {
		size_t cap = seen.cap ? 2 * seen.cap : 1024;
		struct work *v = realloc(seen.v, cap * sizeof(*v));
		if (!v) {
			seen.lost = true; /* its run would be timed short */
			return;
		}
		seen.v = v;
		seen.cap = cap;
	}
	seen.v[seen.n++] = (struct work){ start, end };
}

static void buffer_completed(cu_ptr_t ctx, uint32_t stream, uint8_t *buf,
			     size_t size, size_t valid)
{
	void *rec = NULL;

	(void)ctx, (void)stream, (void)size;
	pthread_mutex_lock(&seen.mu);
	while (seen.next && !seen.next(buf, valid, &rec)) {
		uint32_t kind;
		uint64_t start, end;
		memcpy(&kind, (uint8_t *)rec + REC_KIND, sizeof(kind));
		memcpy(&start, (uint8_t *)rec + REC_START, sizeof(start));
		memcpy(&end, (uint8_t *)rec + REC_END, sizeof(end));
		/* start == end == 0: CUPTI could not time it */
		if ((kind == CUPTI_KIND_CONCURRENT_KERNEL ||
		     kind == CUPTI_KIND_MEMCPY || kind == CUPTI_KIND_MEMSET) &&
		    end > start)
			keep(start, end);
	}
	pthread_mutex_unlock(&seen.mu);
	free(buf);
}

/* CUPTI where libcupti.so.13 loads and takes the callbacks; else
 * g->cupti stays NULL, and calibration compares the events' times. */
static void load_cupti(struct gpu *g)
{
#define CUPTI(fn) SYM(cupti, fn, #fn) /* no versioned names */
	g->cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
	if (g->cupti && CUPTI(cuptiActivityRegisterCallbacks) &&
	    CUPTI(cuptiActivityEnable) && CUPTI(cuptiActivityDisable) &&
	    CUPTI(cuptiActivityFlushAll) && CUPTI(cuptiActivityGetNextRecord) &&
	    CUPTI(cuptiGetTimestamp) &&
	    !g->cuptiActivityRegisterCallbacks(buffer_requested,
					       buffer_completed)) {
		seen.next = g->cuptiActivityGetNextRecord;
		return;
	}
#undef CUPTI
	if (g->cupti)
		dlclose(g->cupti);
	g->cupti = NULL;
}

/* ---------------------------------------------------------- cuBLASLt */

bool gpu_load_cublaslt(struct gpu *g)
{
	int (*create)(void **) = NULL;

	g->cublaslt = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
	if (g->cublaslt && gpu_cublaslt_fn(g, &create, "cublasLtCreate") &&
	    SYM(cublaslt, cublasLtGetVersion, "cublasLtGetVersion") &&
	    SYM(cublaslt, cublasLtGetStatusString, "cublasLtGetStatusString") &&
	    !create(&g->cublaslt_handle))
		return true;
	if (g->cublaslt)
		dlclose(g->cublaslt);
	g->cublaslt = NULL;
	return false;
}

const char *gpu_cublaslt_error(struct gpu *g, int status, char *buf,
			       size_t size)
{
	const char *s = g->cublasLtGetStatusString(status);

	snprintf(buf, size, "%s", s ? s : "?");
	return buf;
}

/* The stream the timed work runs on is held by a word it waits for, so
 * that a batch of runs is queued before the GPU starts it: the runs then
 * follow each other on the GPU as fast as it goes, not as fast as the
 * host launches them. Without stream memory operations, runs are timed
 * as they are launched. */
static void gate_open(struct gpu *g)
{
	SYM(cuda, cuStreamWaitValue32, "cuStreamWaitValue32_v2",
	    "cuStreamWaitValue32");
	SYM(cuda, cuStreamWriteValue32, "cuStreamWriteValue32_v2",
	    "cuStreamWriteValue32");
	g->gated = g->cuStreamWaitValue32 && g->cuStreamWriteValue32 &&
		   !g->cuStreamCreate(&g->release, CU_STREAM_NON_BLOCKING) &&
		   !g->cuMemAlloc(&g->gate, 4) &&
		   !g->cuMemcpyHtoD(g->gate, &(uint32_t){ 0 }, 4);
}

int gpu_open(struct gpu *g, char *err, size_t errlen)
{
	int n = 0, rc;

	memset(g, 0, sizeof(*g));
	g->cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!g->cuda) {
		snprintf(err, errlen,
			 "no CUDA driver here (libcuda.so.1 cannot be loaded): "
			 "replay needs a GPU");
		return -1;
	}
	if (!load_cuda(g)) {
		snprintf(err, errlen,
			 "libcuda.so.1 lacks a function replay "
			 "needs: the driver is too old");
		return -1;
	}
	if ((rc = g->cuInit(0)) || (rc = g->cuDeviceGetCount(&n)) || !n) {
		snprintf(err, errlen,
			 "no GPU here (the CUDA driver says %s): replay needs "
			 "one",
			 rc ? "it cannot start" : "there is none");
		return -1;
	}
	cu_ptr_t ctx;
	if (g->cuDeviceGet(&g->device, 0) ||
	    g->cuDeviceGetName(g->name, sizeof(g->name), g->device) ||
	    g->cuDevicePrimaryCtxRetain(&ctx, g->device) ||
	    g->cuCtxSetCurrent(ctx) ||
	    g->cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING)) {
		snprintf(err, errlen,
			 "the GPU cannot be used (its context "
			 "or a stream cannot be made)");
		return -1;
	}
	g->cuDeviceGetAttribute(&g->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
				g->device);
	g->cudnn = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
	if (!g->cudnn || !load_cudnn(g)) {
		snprintf(err, errlen,
			 "cuDNN 9 cannot be loaded (libcudnn.so.9 is not on "
			 "the loader's path: LD_LIBRARY_PATH)");
		return -1;
	}
	if ((rc = g->cudnnCreate(&g->handle)) ||
	    (rc = g->cudnnSetStream(g->handle, g->stream))) {
		snprintf(err, errlen, "cuDNN cannot start on the GPU: %s",
			 g->cudnnGetErrorString(rc));
		return -1;
	}
	gate_open(g);
	load_cupti(g);
	return 0;
}

void gpu_close(struct gpu *g)
{
	/* the process ends right after: the driver frees the rest */
	if (g->flush)
		g->cuMemFree(g->flush);
	if (g->gate)
		g->cuMemFree(g->gate);
	pthread_mutex_lock(&seen.mu);
	free(seen.v);
	seen.v = NULL;
	seen.n = seen.cap = 0;
	pthread_mutex_unlock(&seen.mu);
	memset(g, 0, sizeof(*g));
}

const char *gpu_cudnn_error(struct gpu *g, int status, char *buf, size_t size)
{
	char last[256] = "";

	if (g->cudnnGetLastErrorString)
		g->cudnnGetLastErrorString(last, sizeof(last));
	last[strcspn(last, "\n")] = 0;
	snprintf(buf, size, "%s%s%s", g->cudnnGetErrorString(status),
		 last[0] ? ": " : "", last);
	return buf;
}

uint64_t gpu_alloc(struct gpu *g, size_t bytes)
{
	size_t free_b = 0, total = 0;
	uint64_t p = 0;

	if (g->cuMemGetInfo(&free_b, &total))
		return 0;
	/* what must stay free: the machine's, not replay's */
	size_t keep = (size_t)((1 - MEM_FRACTION) * (double)total);
	if (free_b < keep || bytes > free_b - keep ||
	    g->cuMemAlloc(&p, bytes ? bytes : 1))
		return 0;
	return p;
}

void gpu_free(struct gpu *g, uint64_t p, size_t bytes)
{
	(void)bytes;
	if (p)
		g->cuMemFree(p);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Runs per batch, warm-up runs, the most samples of one candidate and
 * the fewest. */
#define BATCH       16
#define WARMUP      3
#define SAMPLES_MAX 256
#define SAMPLES_MIN 8

/* A launch that waits for its stream (an engine that synchronizes)
 * would wait for the gate forever: a watchdog opens it after wait_s (a
 * second, or what is left of the budget), and the candidate's later
 * batches go ungated. */
struct watchdog {
	struct gpu *g;
	uint32_t round;
	double wait_s;
	atomic_bool done, opened;
};

static void *watch(void *arg)
{
	struct watchdog *w = arg;
	double end = dt_replay_now_s() + w->wait_s;

	while (!atomic_load(&w->done) && dt_replay_now_s() < end)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (!atomic_load(&w->done)) {
		atomic_store(&w->opened, true);
		w->g->cuStreamWriteValue32(w->g->release, w->g->gate, w->round,
					   0);
	}
	return NULL;
}

/* The L2 cache overwritten on g->stream before cold run i (with a byte
 * other than the last run's); nothing where the L2's size is unknown.
 * Returns CUDA's status. */
static int flush_l2(struct gpu *g, int i)
{
	return g->flush ? g->cuMemsetD8Async(g->flush, (unsigned char)i,
					     2 * (size_t)g->l2_bytes, g->stream)
			: 0;
}

/* A batch of runs, how it is run and what came of it. */
struct batch {
	bool (*run)(void *);
	void *arg;
	bool cold, gated; /* gated: queued behind the gate */
	int runs;         /* at most BATCH */
	double wait_s;    /* the watchdog's */
	bool opened;      /* the watchdog opened the gate */
};

/* One batch of runs queued behind the gate, when there is one. Warm,
 * the batch between two events is one sample: the mean of its runs,
 * which leaves the events' own cost out of a short kernel's time. Cold,
 * each run is a sample between two events, the L2 cache flushed before
 * it (outside them). Returns the samples written to ns, 0 when a run
 * failed. */
static int batch(struct gpu *g, struct batch *b, cu_ptr_t *ev, uint64_t *ns)
{
	static uint32_t round;
	struct watchdog w = { .g = g, .wait_s = b->wait_s };
	pthread_t th;
	bool ok = true, watched = false;
	int samples = b->cold ? b->runs : 1;

	if (b->gated) {
		w.round = ++round;
		g->cuStreamWaitValue32(g->stream, g->gate, round,
				       CU_STREAM_WAIT_VALUE_GEQ);
		watched = !pthread_create(&th, NULL, watch, &w);
	}
	if (!b->cold)
		g->cuEventRecord(ev[0], g->stream);
	for (int i = 0; i < b->runs && ok; i++) {
		if (b->cold) {
			flush_l2(g, i);
			g->cuEventRecord(ev[2 * i], g->stream);
		}
		ok = b->run(b->arg);
		if (b->cold)
			g->cuEventRecord(ev[2 * i + 1], g->stream);
	}
	if (!b->cold)
		g->cuEventRecord(ev[1], g->stream);
	if (b->gated)
		g->cuStreamWriteValue32(g->release, g->gate, round, 0);
	atomic_store(&w.done, true);
	if (watched)
		pthread_join(th, NULL);
	b->opened = atomic_load(&w.opened);
	if (g->cuStreamSynchronize(g->stream))
		return 0;
	for (int i = 0; i < samples && ok; i++) {
		float ms = 0;
		ok = !g->cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
		ns[i] = (uint64_t)llround((double)ms * 1e6 /
					  (b->cold ? 1 : b->runs));
	}
	return ok ? samples : 0;
}

static uint64_t median_of(uint64_t *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(size_t)((double)(n - 1) * q + 0.5)];
}

/* Runs of the next batch: BATCH, or as many as fit before until at
 * run_s a run (one at least); 0 when samples are in and a batch does not
 * fit. */
static int batch_runs(double until, double run_s, size_t samples)
{
	double left = budget_left(until);
	double fit = run_s > 0 ? left / run_s : BATCH;

	if (samples)
		return fit >= BATCH ? BATCH : 0;
	return fit >= BATCH ? BATCH : fit >= 1 ? (int)fit : 1;
}

bool gpu_time(struct gpu *g, bool (*run)(void *arg), void *arg, bool cold,
	      double until, struct timing *t)
{
	static cu_ptr_t ev[2 * BATCH];
	uint64_t ns[SAMPLES_MAX], sorted[SAMPLES_MAX];
	size_t n = 0;
	uint64_t last_median = 0;
	struct batch b = { .run = run,
			   .arg = arg,
			   .cold = cold,
			   .gated = g->gated };

	memset(t, 0, sizeof(*t));
	for (int i = 0; !ev[2 * BATCH - 1] && i < 2 * BATCH; i++)
		if (!ev[i] && g->cuEventCreate(&ev[i], CU_EVENT_DEFAULT))
			return false;
	if (cold && !g->flush && g->l2_bytes > 0)
		g->flush = gpu_alloc(g, 2 * (size_t)g->l2_bytes);
	/* the first warm-up run's wall time bounds a run's, launch
	 * included, until a batch says better: the others are made when
	 * they and a run more fit (a run may take seconds) */
	double t0 = dt_replay_now_s();
	if (!run(arg) || g->cuStreamSynchronize(g->stream))
		return false;
	double run_s = dt_replay_now_s() - t0;
	for (int i = 1; i < WARMUP && budget_left(until) > 2 * run_s; i++)
		if (!run(arg))
			return false;
	if (g->cuStreamSynchronize(g->stream))
		return false;
	/* batches until the median moves less than 1 % from one to the
	 * next, the samples are used up or the time is */
	uint32_t runs = 0;
	while (n + BATCH <= SAMPLES_MAX &&
	       (b.runs = batch_runs(until, run_s, n))) {
		b.wait_s = fmin(1.0, fmax(0.01, budget_left(until)));
		double start = dt_replay_now_s();
		int k = batch(g, &b, ev, ns + n);
		if (!k)
			return false;
		/* what a run took, as the next batch will */
		run_s = (dt_replay_now_s() - start) / b.runs;
		b.gated &= !b.opened;
		n += (size_t)k;
		runs += (uint32_t)b.runs;
		memcpy(sorted, ns, n * sizeof(*ns));
		uint64_t m = median_of(sorted, n, 0.5);
		bool still =
			last_median && fabs((double)m - (double)last_median) <
					       0.01 * (double)last_median;
		last_median = m;
		if (still && n >= SAMPLES_MIN)
			break;
	}
	memcpy(sorted, ns, n * sizeof(*ns));
	t->median_ns = median_of(sorted, n, 0.5);
	t->p10_ns = median_of(sorted, n, 0.1);
	t->p90_ns = median_of(sorted, n, 0.9);
	t->runs = runs;
	return true;
}

/* ----------------------------------------------- timed by its kernels */

/* Runs timed by their kernels, at most. */
#define KERNEL_RUNS 16

/* A run's window on CUPTI's clock: from before its launch to after its
 * stream synchronized. Nothing else runs meanwhile, so the work that
 * started in it is the run's. */
struct window {
	uint64_t from, to;
};

/* What the work of window w took, as a trace times an execution; 0 when
 * CUPTI saw none. */
static uint64_t run_ns(const struct window *w)
{
	uint64_t sum = 0, first = UINT64_MAX, last = 0;

	for (size_t i = 0; i < seen.n; i++) {
		const struct work *k = &seen.v[i];
		if (k->start < w->from || k->start >= w->to)
			continue;
		sum += k->end - k->start;
		first = k->start < first ? k->start : first;
		last = k->end > last ? k->end : last;
	}
	return sum ? kernels_ns(sum, first, last) : 0;
}

/* Up to KERNEL_RUNS runs, each alone: launched, then waited for (the
 * L2 cache overwritten before, cold); their windows into w. Returns the
 * runs made, 0 when one failed. */
static int kernel_runs(struct gpu *g, bool (*run)(void *), void *arg, bool cold,
		       double until, struct window *w)
{
	double run_s = 0;
	int n = 0;

	while (n < KERNEL_RUNS && (!n || budget_left(until) > run_s)) {
		if (cold &&
		    (flush_l2(g, n) || g->cuStreamSynchronize(g->stream)))
			return 0;
		double t0 = dt_replay_now_s();
		if (g->cuptiGetTimestamp(&w[n].from) || !run(arg) ||
		    g->cuStreamSynchronize(g->stream) ||
		    g->cuptiGetTimestamp(&w[n].to))
			return 0;
		run_s = dt_replay_now_s() - t0;
		n++;
	}
	return n;
}

bool gpu_time_kernels(struct gpu *g, bool (*run)(void *arg), void *arg,
		      bool cold, double until, struct timing *t)
{
	static const int kinds[] = { CUPTI_KIND_CONCURRENT_KERNEL,
				     CUPTI_KIND_MEMCPY, CUPTI_KIND_MEMSET };
	const int n_kinds = (int)(sizeof(kinds) / sizeof(kinds[0]));
	struct window w[KERNEL_RUNS];
	uint64_t ns[KERNEL_RUNS];
	int on = 0, n = 0;

	t->kernels_ns = 0;
	if (!g->cupti)
		return false;
	pthread_mutex_lock(&seen.mu);
	seen.n = 0;
	seen.lost = false;
	pthread_mutex_unlock(&seen.mu);
	while (on < n_kinds && !g->cuptiActivityEnable(kinds[on]))
		on++;
	if (on == n_kinds)
		n = kernel_runs(g, run, arg, cold, until, w);
	/* off again: the other candidates are timed without CUPTI's cost */
	while (on)
		g->cuptiActivityDisable(kinds[--on]);
	g->cuptiActivityFlushAll(CUPTI_FLUSH_FORCED);
	pthread_mutex_lock(&seen.mu);
	/* a run whose work was not all seen: none counts */
	if (seen.lost)
		n = 0;
	for (int i = 0; i < n; i++)
		if (!(ns[i] = run_ns(&w[i])))
			n = 0;
	pthread_mutex_unlock(&seen.mu);
	if (!n)
		return false;
	t->kernels_ns = median_of(ns, (size_t)n, 0.5);
	return true;
}
