/*
 * shim-streams.c - the CUDA stream of each library handle, as learned from
 * the calls that create it, set its stream and destroy it, for following
 * CUDA graph capture: a call that launches work on its handle's stream
 * adds to the graph that stream is being captured into (shim-core.c,
 * dt_graph_begin_slow). Not a pointer mode's table (shim-modes.c), though
 * kept alike.
 *
 * Asking the library (cudnnGetStream, cublasGetStream_v2) on every such
 * call cost time and showed in the library's own API log, the oracle the
 * traces are checked against; so the wrappers of the calls a description
 * names (`[stream]` `created_by`, `setter`, `forgotten_by`) keep the
 * stream here: a created handle's is the default stream (NULL), a
 * setter's success sets it, a failed setter or a destroy forgets it. A
 * handle not held (created before the shim was loaded, or evicted) is
 * asked of the library once, then held. These wrappers run whether or
 * not the call is recorded.
 *
 * A stream is a full pointer, so a handle takes two words, and a bucket
 * of them (one cache line: three handles and a version) is a seqlock: a
 * writer makes the version odd (by compare-and-swap), stores keys and
 * streams, and makes the version even again, two more than before; a
 * reader reads the version, the bucket, and the version again, and takes
 * what it read only when both versions are the same even number. It
 * never sees a key with another handle's stream, and never waits: a
 * bucket being written is a miss, and the library is asked. Writers of
 * one bucket wait for each other over a few stores; they are the calls
 * that create, set and destroy handles (a setter given the stream held
 * writes nothing), never a launching call, except one that fills the
 * bucket after asking, which gives up if the bucket changed meanwhile (a
 * setter's stream, newer than the answer, stays). A key is in one way of
 * its bucket at most. A fork's child empties the buckets a thread of the
 * parent was writing, which no thread of its own would finish.
 *
 * Buckets by the handle's address, three ways each: a fourth handle in a
 * bucket evicts one, which is then asked again.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "shim-internal.h"

#define STREAM_BUCKETS 512u /* the hash's top 9 bits */
#define STREAM_WAYS    3

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() ((void)0)
#endif

struct stream_bucket {
	_Alignas(64) _Atomic uint64_t version; /* odd while written */
	struct {
		_Atomic uint64_t key;    /* dt_mode_key(library, handle) */
		_Atomic uint64_t stream; /* the handle's, as a number */
	} way[STREAM_WAYS];              /* a key of 0: empty */
};

static struct stream_bucket buckets[STREAM_BUCKETS];

static struct stream_bucket *bucket_of(const void *handle)
{
	uint64_t a = (uint64_t)(uintptr_t)handle;

	return &buckets[((a >> 4) * 0x9e3779b97f4a7c15u) >> 55];
}

/* Whether b holds key, and then its stream. *version: the version read,
 * or 1 (odd: never taken) where b was being written. */
static bool bucket_read(struct stream_bucket *b, uint64_t key, void **stream,
			uint64_t *version)
{
	uint64_t v = atomic_load_explicit(&b->version, memory_order_acquire);
	uint64_t k[STREAM_WAYS], st[STREAM_WAYS];

	for (int i = 0; i < STREAM_WAYS; i++) {
		k[i] = atomic_load_explicit(&b->way[i].key,
					    memory_order_relaxed);
		st[i] = atomic_load_explicit(&b->way[i].stream,
					     memory_order_relaxed);
	}
	atomic_thread_fence(memory_order_acquire);
	if ((v & 1) ||
	    v != atomic_load_explicit(&b->version, memory_order_relaxed)) {
		*version = 1;
		return false;
	}
	*version = v;
	for (int i = 0; i < STREAM_WAYS; i++) {
		if (k[i] == key) {
			*stream = (void *)(uintptr_t)st[i];
			return true;
		}
	}
	return false;
}

/* Takes b for writing if its version is still v (even); false if not. */
static bool bucket_take_at(struct stream_bucket *b, uint64_t v)
{
	if ((v & 1) || !atomic_compare_exchange_strong_explicit(
			       &b->version, &v, v + 1, memory_order_relaxed,
			       memory_order_relaxed))
		return false;
	/* the odd version is seen before anything stored after it */
	atomic_thread_fence(memory_order_release);
	return true;
}

/* Takes b for writing, waiting for another writer to finish; returns the
 * version it had. */
static uint64_t bucket_take(struct stream_bucket *b)
{
	for (;;) {
		uint64_t v =
			atomic_load_explicit(&b->version, memory_order_relaxed);
		if (bucket_take_at(b, v))
			return v;
		cpu_relax();
	}
}

/* Ends a write of b begun at version v. */
static void bucket_release(struct stream_bucket *b, uint64_t v)
{
	atomic_store_explicit(&b->version, v + 2, memory_order_release);
}

/* In b, taken: the way that holds key, or -1. */
static int way_of(struct stream_bucket *b, uint64_t key)
{
	for (int i = 0; i < STREAM_WAYS; i++)
		if (atomic_load_explicit(&b->way[i].key,
					 memory_order_relaxed) == key)
			return i;
	return -1;
}

/* In b, taken at version v: key's stream is `stream`, in key's way, else
 * in an empty one, else in the one whose turn it is to be evicted. */
static void bucket_put(struct stream_bucket *b, uint64_t v, uint64_t key,
		       void *stream)
{
	int i = way_of(b, key);

	if (i < 0)
		i = way_of(b, 0);
	if (i < 0)
		i = (int)(v / 2 % STREAM_WAYS);
	atomic_store_explicit(&b->way[i].key, key, memory_order_relaxed);
	atomic_store_explicit(&b->way[i].stream, (uint64_t)(uintptr_t)stream,
			      memory_order_relaxed);
	bucket_release(b, v);
}

void dt_stream_learn(unsigned library, const void *handle, void *stream)
{
	uint64_t key = dt_mode_key(library, handle);
	struct stream_bucket *b = bucket_of(handle);
	void *held;
	uint64_t v;

	/* a program that sets the same stream before each call (PyTorch)
	 * writes nothing: the bucket's line stays shared */
	if (!key || (bucket_read(b, key, &held, &v) && held == stream))
		return;
	bucket_put(b, bucket_take(b), key, stream);
}

void dt_stream_forget(unsigned library, const void *handle)
{
	uint64_t key = dt_mode_key(library, handle);
	struct stream_bucket *b = bucket_of(handle);
	void *held;
	uint64_t v;

	/* only calls given the handle write its key, and the program makes
	 * none while destroying it */
	if (!key || (!bucket_read(b, key, &held, &v) && v != 1))
		return;
	v = bucket_take(b);
	int i = way_of(b, key);
	if (i >= 0)
		atomic_store_explicit(&b->way[i].key, 0, memory_order_relaxed);
	bucket_release(b, v);
}

bool dt_stream_of(unsigned library, void *handle, void **stream)
{
	const struct dt_library *lib = &dt_libraries[library];
	uint64_t key = dt_mode_key(library, handle);
	struct stream_bucket *b = bucket_of(handle);
	uint64_t v;

	if (key && bucket_read(b, key, stream, &v))
		return true;
	if (!lib->get_stream || !lib->get_stream(handle, stream))
		return false;
	/* held from now on, unless a writer came between the read and the
	 * answer: its stream may be newer */
	if (key && bucket_take_at(b, v))
		bucket_put(b, v, key, *stream);
	return true;
}

/* A bucket a thread of the parent was writing stays odd in the child,
 * whose writers would wait for it forever; what it holds may be half
 * written. */
void dt_streams_after_fork(void)
{
	for (unsigned n = 0; n < STREAM_BUCKETS; n++) {
		struct stream_bucket *b = &buckets[n];
		uint64_t v =
			atomic_load_explicit(&b->version, memory_order_relaxed);
		if (!(v & 1))
			continue;
		for (int i = 0; i < STREAM_WAYS; i++)
			atomic_store_explicit(&b->way[i].key, 0,
					      memory_order_relaxed);
		bucket_release(b, v - 1);
	}
}
