/*
 * cupti-kernels.c - which library each kernel came from, as a fact: every
 * library built against the shared CUDA runtime registers each of its
 * kernels with __cudaRegisterFunction as it loads (PyTorch's ATen,
 * llama.cpp's ggml, most extensions). The wrapper notes the kernel's name
 * (hashed) and the library holding its host stub, and KERNEL_LIB records
 * carry them once the program's GPU work is seen, so that a process that
 * never uses the GPU gets no trace from it. Libraries with the runtime
 * linked in (cuBLAS, cuDNN, NCCL) and code compiled at run time (Triton,
 * XLA) register nothing here; their kernels keep what their names say.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti-internal.h"
#include "dt-records.h"
#include "dt-trace.h"

#define DT_EXPORT __attribute__((visibility("default")))

/* What has been registered, per library; `emitted` of a library's
 * hashes are in the trace already. */
struct reg_lib {
	char *path;
	const void *base; /* the library's load address, its identity */
	uint64_t *hashes;
	uint32_t n, cap, emitted;
};

static struct {
	pthread_mutex_t lock;
	struct reg_lib *libs;
	size_t n_libs;
	/* a translation unit registers its kernels one after the other
	 * under one handle: the library is looked up once for them */
	void **last_fatbin;
	size_t last_lib;
	_Atomic bool pending; /* hashes not yet emitted */
	uint64_t dropped;     /* registrations not kept: out of memory */
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct reg_lib *lib_of(const void *host_fn)
{
	Dl_info info;
	char exe[PATH_MAX];

	if (!dladdr(host_fn, &info))
		return NULL;
	for (size_t i = 0; i < reg.n_libs; i++)
		if (reg.libs[i].base == info.dli_fbase)
			return &reg.libs[i];
	const char *path = info.dli_fname;
	if (!path || !path[0]) { /* the program itself */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
		path = exe;
	}
	struct reg_lib *libs =
		realloc(reg.libs, (reg.n_libs + 1) * sizeof(*libs));
	if (!libs)
		return NULL;
	reg.libs = libs;
	struct reg_lib *l = &libs[reg.n_libs];
	*l = (struct reg_lib){ .path = strdup(path), .base = info.dli_fbase };
	if (!l->path)
		return NULL;
	reg.n_libs++;
	return l;
}

static void registered(void **fatbin, const void *host_fn, const char *name)
{
	if (!host_fn || !name)
		return;
	uint64_t h = dt_hash(name, strlen(name), 0);
	pthread_mutex_lock(&reg.lock);
	struct reg_lib *l = fatbin && fatbin == reg.last_fatbin
				    ? &reg.libs[reg.last_lib]
				    : lib_of(host_fn);
	if (l) {
		reg.last_fatbin = fatbin;
		reg.last_lib = (size_t)(l - reg.libs);
	}
	if (l && l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 256;
		uint64_t *p = realloc(l->hashes, cap * sizeof(*p));
		if (p) {
			l->hashes = p;
			l->cap = cap;
		}
	}
	if (l && l->n < l->cap) {
		l->hashes[l->n++] = h;
		atomic_store(&reg.pending, true);
	} else {
		reg.dropped++;
	}
	pthread_mutex_unlock(&reg.lock);
}

/* A KERNEL_LIB record: at most this many hashes each. */
#define PER_RECORD 1024

void cupti_kernels_flush(void)
{
	uint8_t buf[sizeof(struct dt_rec_kernel_lib) + PER_RECORD * 8 + 4096 +
		    8] __attribute__((aligned(8)));

	if (!atomic_exchange(&reg.pending, false))
		return;
	/* a record at a time, made under the lock and emitted without it:
	 * the sink may wait for room, and a library loading meanwhile must
	 * not */
	for (;;) {
		struct dt_rec_kernel_lib r;
		bool found = false;
		pthread_mutex_lock(&reg.lock);
		for (size_t i = 0; i < reg.n_libs && !found; i++) {
			struct reg_lib *l = &reg.libs[i];
			if (l->emitted == l->n)
				continue;
			uint32_t path_len = (uint32_t)strnlen(l->path, 4096);
			uint32_t n = l->n - l->emitted;
			if (n > PER_RECORD)
				n = PER_RECORD;
			REC_INIT(r, DT_REC_KERNEL_LIB);
			r.count = n;
			r.path_len = path_len;
			r.len = n * 8 + path_len;
			r.hdr.size = dt_rec_align(sizeof(r) + r.len);
			memset(buf, 0, r.hdr.size);
			memcpy(buf, &r, sizeof(r));
			memcpy(buf + sizeof(r), l->hashes + l->emitted,
			       (size_t)n * 8);
			memcpy(buf + sizeof(r) + (size_t)n * 8, l->path,
			       path_len);
			l->emitted += n; /* a record the sink loses, it counts */
			found = true;
		}
		pthread_mutex_unlock(&reg.lock);
		if (!found)
			break;
		cupti_emit(buf, r.hdr.size);
	}
}

typedef void (*register_fn)(void **, const char *, char *, const char *, int,
			    void *, void *, void *, void *, int *);

/* One wrapper per runtime version the program may have been built
 * against; each calls that runtime's own. */
#define REGISTER(tag, version)                                               \
	static register_fn _Atomic real_##tag;                               \
	DT_EXPORT void dt_##tag##_register(void **fatbin, const char *host_fn, \
					   char *device_fn,                  \
					   const char *device_name,          \
					   int thread_limit, void *tid,      \
					   void *bid, void *block,           \
					   void *grid, int *wsize)           \
	{                                                                    \
		register_fn real = atomic_load(&real_##tag);                 \
		if (!real) {                                                 \
			*(void **)&real = cupti_next_fn("__cudaRegisterFunction", version);            \
			if ((void *)real == (void *)dt_##tag##_register)     \
				real = NULL;                                 \
			atomic_store(&real_##tag, real);                     \
		}                                                            \
		if (real)                                                    \
			real(fatbin, host_fn, device_fn, device_name,        \
			     thread_limit, tid, bid, block, grid, wsize);    \
		registered(fatbin, host_fn, device_name);                    \
	}
REGISTER(rt12, "libcudart.so.12")
REGISTER(rt13, "libcudart.so.13")
__asm__(".symver dt_rt12_register,__cudaRegisterFunction@libcudart.so.12");
__asm__(".symver dt_rt13_register,__cudaRegisterFunction@@libcudart.so.13");
