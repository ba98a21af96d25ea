/*
 * shim-cublaslt.c - what a cuBLASLt matmul algorithm is, asked once per
 * algorithm.
 *
 * A cublasLtMatmulAlgo_t is 64 opaque bytes: a trace records them, but
 * only cuBLASLt can say what they mean (algorithm id, tile, stages,
 * split-k, reduction scheme, CTA swizzling, custom option, inner shape,
 * cluster shape). So right after a cublasLtMatmul that was given an
 * algorithm (or a typed matmul, cublasLtTSTMatmul, that cuBLAS calls
 * inside a call of its own: recorded nested, with the same parameters),
 * the shim asks each of those once per distinct algorithm (by its bytes),
 * through the wrappers, with the calls marked as its own
 * (DT_CALL_BY_DNNTRACE): the trace holds them as
 * cublasLtMatmulAlgoConfigGetAttribute calls, each with the algorithm's
 * bytes, which a decoder reads as it would the program's own queries.
 * Never per execution. DNNTRACE_PLAN_QUERY=0 switches this off, as it
 * does cuDNN's plan queries (shim-plans.c).
 */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dt-api.h"
#include "shim-runtime.h"

/* algorithms remembered at once; a collision forgets the older one, which
 * is then asked again */
#define SLOTS 1024

static _Atomic uint64_t seen[SLOTS];
static int enabled = -1;

/* The attributes asked, with their sizes as cublasLt.h documents them:
 * cuBLASLt refuses a buffer of any other size. */
static const struct {
	cublasLtMatmulAlgoConfigAttributes_t attr;
	size_t size;
} config[] = {
	{ CUBLASLT_ALGO_CONFIG_ID, sizeof(int32_t) },
	{ CUBLASLT_ALGO_CONFIG_TILE_ID, sizeof(uint32_t) },
	{ CUBLASLT_ALGO_CONFIG_SPLITK_NUM, sizeof(int32_t) },
	{ CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, sizeof(uint32_t) },
	{ CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, sizeof(uint32_t) },
	{ CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, sizeof(uint32_t) },
	{ CUBLASLT_ALGO_CONFIG_STAGES_ID, sizeof(uint32_t) },
	{ CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, sizeof(uint16_t) },
	{ CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, sizeof(uint16_t) },
};

/* A hash of an algorithm's bytes, a word at a time (read by memcpy: the
 * bytes lie unaligned in a record); never 0 (an empty slot). */
static uint64_t algo_hash(const uint8_t *bytes)
{
	uint64_t h = 0xcbf29ce484222325u, w;

	for (size_t i = 0; i < sizeof(cublasLtMatmulAlgo_t); i += 8) {
		memcpy(&w, bytes + i, 8);
		h = (h ^ w) * 0x100000001b3u;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/* Whether the algorithm is new (then remembered). A thread's matmuls
 * mostly run the algorithm its previous one ran: that one is compared
 * first, without hashing. */
static bool first_seen(const uint8_t *bytes)
{
	/* per thread: compared without a lock */
	static __thread uint8_t last[sizeof(cublasLtMatmulAlgo_t)];
	static __thread bool have_last;

	if (have_last && !memcmp(bytes, last, sizeof(last)))
		return false;
	memcpy(last, bytes, sizeof(last));
	have_last = true;
	uint64_t h = algo_hash(bytes);
	_Atomic uint64_t *s = &seen[h % SLOTS];

	if (atomic_load_explicit(s, memory_order_relaxed) == h)
		return false;
	atomic_store_explicit(s, h, memory_order_relaxed);
	return true;
}

/* The algorithm's configuration, asked through the wrappers (recorded). */
static void query_algo(const cublasLtMatmulAlgo_t *algo)
{
	uint64_t value;
	size_t written;

	for (size_t i = 0; i < sizeof(config) / sizeof(config[0]); i++) {
		value = 0;
		cublasLtMatmulAlgoConfigGetAttribute(
			algo, config[i].attr, &value, config[i].size, &written);
	}
}

static bool query_enabled(void)
{
	if (enabled < 0) {
		const char *env = getenv("DNNTRACE_PLAN_QUERY");
		enabled = !(env && !strcmp(env, "0"));
	}
	return enabled;
}

void dt_cublaslt_matmul_hook(struct dt_thread *t)
{
	const uint8_t *arg;
	uint32_t n;
	cublasLtMatmulAlgo_t algo;

	if (t->status != CUBLAS_STATUS_SUCCESS || t->by_dnntrace ||
	    !query_enabled() || !(arg = dt_call_arg(t, "algo")))
		return;
	memcpy(&n, arg, 4);
	if (n != sizeof(algo))
		return; /* none given: cuBLASLt chose, and does not say */
	if (!first_seen(arg + 4))
		return;
	memcpy(&algo, arg + 4, sizeof(algo));
	/* the calls go through the wrappers, recorded as our own, as
	 * top-level calls, outside the CUDA graph the matmul may be adding
	 * to (their ends would close its scope); then the matmul's state is
	 * the thread's again */
	struct dt_thread saved = *t;
	t->depth = 0;
	t->by_dnntrace = true;
	t->graph.graph = NULL;
	query_algo(&algo);
	t->by_dnntrace = false;
	t->depth = saved.depth;
	t->seq = saved.seq;
	t->library = saved.library;
	t->outer_seq = saved.outer_seq;
	t->outer_library = saved.outer_library;
	t->graph = saved.graph;
}
