/*
 * shim-runtime.h - what the generated wrappers need from the shim, and the
 * table of wrapped libraries the shim reads.
 *
 * Private to shim/. The wrappers (generated into dt-wrappers-<library>.c
 * from each library's description and headers; a file defines DT_LIBRARY,
 * its row in dt_libraries, before including this) resolve the real
 * function, time the call, and encode the arguments into one API_CALL
 * record with the helpers below. The argument encoding is specified in
 * trace/FORMAT.md ("Call arguments").
 */
#ifndef SHIM_RUNTIME_H
#define SHIM_RUNTIME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dt-cupti.h"
#include "dt-records.h"

#define DT_EXPORT      __attribute__((visibility("default")))
#define DT_HIDDEN      __attribute__((visibility("hidden")))
#define DT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define DT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* For code that may run before AddressSanitizer's runtime has set up its
 * shadow memory (its own start-up looks functions up through the shim's
 * dlsym), in a shim built with -Db_sanitize=address. */
#define DT_NO_ASAN __attribute__((no_sanitize_address))

/* Largest number of bytes one variable-length argument may take in a record. */
#define DT_MAX_BLOB 16384u
/* Largest input string recorded, in bytes. */
#define DT_MAX_STRING 4096u

/*
 * A wrapped library, as its description (shim/libs/) gives it: one row of
 * the generated dt_libraries (dt-api.h), which the shim iterates to find
 * each library in the process, to route dlsym, to ask a handle's stream.
 */
struct dt_library {
	const char *name;    /* short name, in the trace: "cudnn" */
	const char *display; /* in messages: "cuDNN" */
	const char *prefix;  /* every wrapped function's name starts with it */
	const char *const *sonames; /* NULL-terminated, tried in order */
	/* the library's own file names (not its sub-libraries') start with
	 * it: libcudnn.so, libcudnn.so.9, libcudnn.so.9.19.0 */
	const char *file_prefix;
	const char *version_node;     /* its symbols' ELF version; NULL: none */
	unsigned first_api, last_api; /* its API ids */
	const char *built;      /* version number of the headers wrapped */
	const char *not_loaded; /* what calls return without the library */
	/* a handle's stream (NULL: it has no handles) and the loaded
	 * library's version (NULL: it cannot say), asked without recording */
	bool (*get_stream)(void *handle, void **stream);
	uint64_t (*version)(void);
};

/* One row per library, DT_LIBRARY_COUNT (dt-api.h) in all; generated
 * into dt-api.c. */
DT_HIDDEN extern const struct dt_library dt_libraries[];

/* A recording thread's state (shim-core.c owns it). */
struct dt_thread {
	struct dt_ring *ring;
	uint64_t seq; /* the current call's sequence number */
	uint32_t tid;
	/* 1 inside a wrapped call; 2 inside a call of another library made
	 * from it (recorded nested: DT_CALL_NESTED) */
	uint32_t depth;
	/* the library of the call being recorded; at depth 2, the outer
	 * call's library and number */
	unsigned library, outer_library;
	uint64_t outer_seq;
	unsigned epoch;      /* the process epoch its ring belongs to */
	bool broken;         /* no ring could be had for this thread */
	uint8_t gpu_tagged;  /* how this call's launches are tied to it:
				DT_TIE_*, 0: not */
	bool gpu_sampling;   /* GPU recording is sampled: gpu_window holds
				(until dt_call_begin) */
	unsigned gpu_window; /* dt_cupti_window before the call */
	bool by_dnntrace;    /* calls made now are the recorder's own */
	unsigned api;        /* the call being recorded */
	const uint8_t *args; /* its argument bytes, once recorded */
	int32_t status;      /* and what it returned */
	struct dt_graph_scope graph; /* the CUDA graph the call adds to */
};

DT_HIDDEN void dt_gpu_push(struct dt_thread *t);
DT_HIDDEN void dt_gpu_pop(struct dt_thread *t);

/* Before a call that can launch work: note the nodes of the CUDA graph
 * its handle's stream is being captured into, or of the graph it is given
 * (how: DT_GRAPH_POPULATED, _UPDATED); dt_leave() then records the nodes
 * the call added. Nothing but a flag test when graphs are not tracked. */
DT_HIDDEN void dt_graph_begin_slow(struct dt_thread *t, void *handle);
DT_HIDDEN void dt_graph_begin_graph_slow(struct dt_thread *t, void *graph,
					 uint32_t how);
DT_HIDDEN void dt_graph_begin_stream_slow(struct dt_thread *t, void *stream);
static inline void dt_graph_begin_graph(struct dt_thread *t, void *graph,
					uint32_t how)
{
	if (DT_UNLIKELY(dt_cupti_graphs))
		dt_graph_begin_graph_slow(t, graph, how);
}

/* The same, for a call given its stream (cublasLtMatmul). */
static inline void dt_graph_begin_stream(struct dt_thread *t, void *stream)
{
	if (DT_UNLIKELY(dt_cupti_graphs))
		dt_graph_begin_stream_slow(t, stream);
}

static inline void dt_gpu_begin(struct dt_thread *t)
{
	if (DT_UNLIKELY(dt_cupti_tagging | dt_cupti_sampled))
		dt_gpu_push(t);
}

static inline void dt_gpu_end(struct dt_thread *t)
{
	if (DT_UNLIKELY(t->gpu_tagged))
		dt_gpu_pop(t);
}

/* The real function for an API id, resolved on first use; NULL (after one
 * message on stderr) when its library is not loaded in the process. */
DT_HIDDEN extern void *volatile dt_real_table[];
DT_HIDDEN void *dt_real_resolve(unsigned api);
/* The same without noting which file its library is (dt_library_found):
 * for what the shim asks while it holds its lock. */
DT_HIDDEN void *dt_real_peek(unsigned api);
static inline void *dt_real(unsigned api)
{
	void *fn = dt_real_table[api];
	return DT_LIKELY(fn != NULL) ? fn : dt_real_resolve(api);
}

/* Enter a wrapper of a function of `library`. Returns the calling thread's
 * recorder, or NULL when this call is not to be recorded (recording off or
 * failed, or the call was made from inside a wrapped call of the same
 * library, or two deep). A call made from inside a call of another library
 * is recorded nested. A non-NULL result must be passed to dt_leave() once
 * the record is written. */
DT_HIDDEN struct dt_thread *dt_enter_library(unsigned library);
DT_HIDDEN void dt_leave(struct dt_thread *t);

#ifdef DT_LIBRARY
/* In a library's wrappers: enter a call of it; open a CUDA-graph scope on
 * its handle's stream. */
static inline struct dt_thread *dt_enter(void)
{
	return dt_enter_library(DT_LIBRARY);
}
static inline void dt_graph_begin(struct dt_thread *t, void *handle)
{
	if (DT_UNLIKELY(dt_cupti_graphs))
		dt_graph_begin_slow(t, handle);
}
#endif

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t dt_now(void);

/* Reserve an API_CALL record with `len` argument bytes; returns where the
 * arguments go, or NULL when the record was lost (then skip dt_call_end). */
DT_HIDDEN uint8_t *dt_call_begin(struct dt_thread *t, unsigned api, uint64_t t0,
				 uint64_t t1, int32_t status, uint32_t len);
DT_HIDDEN void dt_call_end(struct dt_thread *t);

/* Where the argument `name` of the call just recorded in t lies in its
 * record (as its signature lays it out), or NULL: for the hooks run after
 * a call (dt_after_call). */
DT_HIDDEN const uint8_t *dt_call_arg(const struct dt_thread *t,
				     const char *name);

/* Bytes of a backend attribute payload of count elements of attr_type at
 * ptr to record: within DT_MAX_BLOB, or a larger bound for text. */
DT_HIDDEN uint32_t dt_backend_payload_bytes(const void *ptr, int64_t count,
					    int64_t attr_type);

/* Elements of an array argument to record: 0 for a NULL pointer or a count
 * below 1, otherwise count capped so the array fits in DT_MAX_BLOB bytes. */
static inline uint32_t dt_count(const void *ptr, int64_t count, uint32_t elem)
{
	if (!ptr || count <= 0)
		return 0;
	if ((uint64_t)count > DT_MAX_BLOB / elem)
		return DT_MAX_BLOB / elem;
	return (uint32_t)count;
}

/* Bytes of a host scalar (alpha, beta) to record: the scalar may be a float
 * or a double depending on the call's data type, which is only known
 * offline; read 8 bytes unless that would cross into the next page. */
static inline uint32_t dt_hostscalar_len(const void *p)
{
	if (!p)
		return 0;
	return ((uintptr_t)p & 4095u) <= 4088u ? 8u : 4u;
}

/* Bytes of a scalar under a pointer mode (alpha, beta of cuBLAS) to read,
 * in host memory: its size, `most`, or for one of unknown type the most it
 * can be, but never past the page its first byte lies in. */
static inline uint32_t dt_scalar_len(const void *p, uint32_t most)
{
	uint32_t left = 4096u - ((uintptr_t)p & 4095u);

	if (!p)
		return 0;
	return most < left ? most : left;
}

/*
 * What a call's scalars depend on, per object (shim-modes.c): the pointer
 * mode, and the scale type where an object holds it, learned from the
 * calls that create, set and destroy the object. `kind` tells one
 * `[[pointer_mode]]` or `[[scale_type]]` from another (the generator
 * numbers them, below 256), each value from 0 to 254. dt_mode_cached is
 * -1 for an object not held: the library must be asked.
 */
#define DT_MODE_SLOTS 4096u
#define DT_MODE_MASK  0xffu /* the mode + 1, under the kind and address */
DT_HIDDEN extern _Atomic uint64_t dt_mode_slots[DT_MODE_SLOTS];
DT_HIDDEN void dt_mode_learn(unsigned kind, const void *obj, int32_t mode);
DT_HIDDEN void dt_mode_update(unsigned kind, const void *obj, int32_t mode);
DT_HIDDEN void dt_mode_forget(unsigned kind, const void *obj);

/* The slot's key for obj of kind: 0 for an address of more than 48 bits
 * (never held) or a kind above 255. */
static inline uint64_t dt_mode_key(unsigned kind, const void *obj)
{
	uint64_t a = (uint64_t)(uintptr_t)obj;

	if (!a || a >> 48 || kind > 255)
		return 0;
	return a << 16 | (uint64_t)kind << 8;
}

/* One object's pointer mode and its scale type take two slots. */
static inline _Atomic uint64_t *dt_mode_slot(unsigned kind, const void *obj)
{
	uint64_t a = (uint64_t)(uintptr_t)obj;

	return &dt_mode_slots[(((a >> 4) ^ (uint64_t)kind << 44) *
			       0x9e3779b97f4a7c15u) >>
			      52];
}

static inline int32_t dt_mode_cached(unsigned kind, const void *obj)
{
	uint64_t key = dt_mode_key(kind, obj);
	uint64_t e = atomic_load_explicit(dt_mode_slot(kind, obj),
					  memory_order_acquire);

	if (!key || (e & ~(uint64_t)DT_MODE_MASK) != key)
		return -1;
	return (int32_t)(e & 0xff) - 1;
}

/*
 * The CUDA stream of a library's handle (shim-streams.c), learned from the
 * calls that create it (NULL: the default stream), set its stream and
 * destroy it. dt_stream_of gives a handle's stream, asking the library
 * (struct dt_library's get_stream) only for one not held, which is then
 * held; false when the library cannot say.
 */
DT_HIDDEN void dt_stream_learn(unsigned library, const void *handle,
			       void *stream);
DT_HIDDEN void dt_stream_forget(unsigned library, const void *handle);
DT_HIDDEN bool dt_stream_of(unsigned library, void *handle, void **stream);

/* Length of an input string to record. */
static inline uint32_t dt_strlen(const char *s, size_t max)
{
	if (!s)
		return 0;
	if (max > DT_MAX_STRING)
		max = DT_MAX_STRING;
	return (uint32_t)strnlen(s, max);
}

/* Little-endian stores (the shim runs on little-endian hosts only). */
static inline uint8_t *dt_put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}
static inline uint8_t *dt_put_i32(uint8_t *p, int32_t v)
{
	return dt_put(p, &v, 4);
}
static inline uint8_t *dt_put_u32(uint8_t *p, uint32_t v)
{
	return dt_put(p, &v, 4);
}
static inline uint8_t *dt_put_i64(uint8_t *p, int64_t v)
{
	return dt_put(p, &v, 8);
}
static inline uint8_t *dt_put_u64(uint8_t *p, uint64_t v)
{
	return dt_put(p, &v, 8);
}
static inline uint8_t *dt_put_f32(uint8_t *p, float v)
{
	return dt_put(p, &v, 4);
}
static inline uint8_t *dt_put_f64(uint8_t *p, double v)
{
	return dt_put(p, &v, 8);
}
static inline uint8_t *dt_put_ptr(uint8_t *p, const void *v)
{
	uint64_t u = (uint64_t)(uintptr_t)v;
	return dt_put(p, &u, 8);
}
/* A variable-length field: u32 count, then count elements of elem bytes. */
static inline uint8_t *dt_put_array(uint8_t *p, const void *src, uint32_t count,
				    uint32_t elem)
{
	p = dt_put_u32(p, count);
	if (count)
		p = dt_put(p, src, (size_t)count * elem);
	return p;
}

/* A scalar under a pointer mode (code m): its pointer, the mode the
 * library reported (-1: unknown), then n bytes read from host memory (0
 * unless the mode says host). */
static inline uint8_t *dt_put_modal(uint8_t *p, const void *ptr, int32_t mode,
				    uint32_t n)
{
	p = dt_put_ptr(p, ptr);
	p = dt_put_i32(p, mode);
	return dt_put_array(p, ptr, n, 1);
}

#include <stdatomic.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/* CLOCK_MONOTONIC from the CPU's time-stamp counter: a call's two clock
 * reads were most of what recording it costs (20 ns each through the
 * vDSO on the VMs measured, 9 ns for the counter). The counter is read
 * against CLOCK_MONOTONIC again at `next` (up to every 100 ms), by
 * whichever thread gets there, with the rate of the interval just over,
 * so the clock's slewing is followed (shim-core.c, dt_tsc_rebase). Until
 * the first rate is known (calibrating, 2 ms), dt_now is clock_gettime's
 * (dt_tsc_calibrate). Used only
 * where the kernel keeps its own time with the counter (clocksource
 * "tsc": invariant, the same on every CPU); clock_gettime otherwise. */
struct dt_tsc_clock {
	_Atomic uint32_t seq; /* odd while being rebased */
	_Atomic bool on;    /* calibrated: dt_now reads the counter */
	_Atomic bool armed; /* the counter may be used: calibrating */
	/* relaxed atomics: a seqlock's fields, read while being written */
	_Atomic uint64_t tsc0, ns0; /* a reading of both */
	_Atomic uint64_t mult;      /* ns per cycle, << 32 */
	_Atomic uint64_t next;      /* when (in cycles) to rebase */
};
#define DT_RELAXED(x) atomic_load_explicit(&(x), memory_order_relaxed)
DT_HIDDEN extern struct dt_tsc_clock dt_tsc;
DT_HIDDEN uint64_t dt_tsc_rebase(uint64_t tsc);
DT_HIDDEN uint64_t dt_tsc_calibrate(void);

static inline uint64_t dt_clock_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t dt_now(void)
{
#if defined(__x86_64__)
	if (DT_LIKELY(atomic_load_explicit(&dt_tsc.on, memory_order_relaxed))) {
		uint32_t seq = atomic_load_explicit(&dt_tsc.seq,
						    memory_order_acquire);
		uint64_t tsc = __rdtsc();
		uint64_t tsc0 = DT_RELAXED(dt_tsc.tsc0);
		uint64_t ns0 = DT_RELAXED(dt_tsc.ns0);
		uint64_t mult = DT_RELAXED(dt_tsc.mult);
		uint64_t next = DT_RELAXED(dt_tsc.next);
		atomic_thread_fence(memory_order_acquire);
		if (DT_LIKELY(!(seq & 1) &&
			      seq == atomic_load_explicit(&dt_tsc.seq,
							  memory_order_relaxed) &&
			      tsc >= tsc0 && tsc < next))
			return ns0 + (uint64_t)(((unsigned __int128)(tsc - tsc0) *
						 mult) >> 32);
		return dt_tsc_rebase(tsc);
	}
	if (DT_UNLIKELY(atomic_load_explicit(&dt_tsc.armed,
					     memory_order_relaxed)))
		return dt_tsc_calibrate();
#endif
	return dt_clock_mono();
}

#endif /* SHIM_RUNTIME_H */
