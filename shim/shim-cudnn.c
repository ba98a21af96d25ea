/*
 * shim-cudnn.c - finding the real cuDNN, and what the shim must know of it.
 *
 * The wrappers forward to the libcudnn.so.9 the application loaded itself
 * (PyTorch's wheel copy through its RPATH, say); the shim never loads one on
 * its own. Programs that dlopen cuDNN and look functions up with
 * dlsym(handle, name), as XLA does, reach the wrappers through the dlsym
 * interposed here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-api.h"
#include "dt-config.h"
#include "shim-runtime.h"
#include "shim-internal.h"

void *volatile dt_real_table[DT_API_COUNT];

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn real_dlsym_ptr;

DT_NO_ASAN static dlsym_fn real_dlsym(void)
{
	if (!real_dlsym_ptr) {
		void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!p)
			p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		real_dlsym_ptr = (dlsym_fn)p;
	}
	return real_dlsym_ptr;
}

void *dt_dlsym_next(void *handle, const char *name)
{
	dlsym_fn next = real_dlsym();

	return next ? next(handle, name) : NULL;
}

/* True when the file name is the cuDNN dispatcher library (libcudnn.so,
 * libcudnn.so.9, libcudnn.so.9.19.0), not one of its sub-libraries. */
static bool is_cudnn_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "libcudnn.so", 11) == 0;
}

/* dl_iterate_phdr: the first library whose file name starts with
 * want->prefix. */
static int find_prefix(struct dl_phdr_info *info, size_t size, void *data)
{
	struct {
		const char *prefix;
		char path[PATH_MAX];
	} *want = data;
	const char *base =
		info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (base && !strncmp(base, want->prefix, strlen(want->prefix))) {
		snprintf(want->path, sizeof(want->path), "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (info->dlpi_name && is_cudnn_name(info->dlpi_name)) {
		snprintf(data, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static _Atomic(void *) cudnn_handle;
static char cudnn_path[PATH_MAX];

/* A handle on the cuDNN already in the process, or NULL. RTLD_NOLOAD
 * guarantees no second copy is ever brought in. */
static void *loaded_cudnn(void)
{
	void *h = atomic_load(&cudnn_handle);
	char path[PATH_MAX] = "";

	if (h)
		return h;
	h = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_NOLOAD);
	if (!h && dl_iterate_phdr(find_loaded, path))
		h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (h)
		atomic_store(&cudnn_handle, h);
	return h;
}

static _Atomic bool cudnn_known; /* cudnn_path is set */

/* Remember which file the real functions come from, for the header (or,
 * when the file is open already, its body: dt_cudnn_found). */
static void note_library(void *fn)
{
	Dl_info info;

	if (!atomic_load_explicit(&cudnn_known, memory_order_acquire) &&
	    dladdr(fn, &info) && info.dli_fname)
		dt_cudnn_found(info.dli_fname);
}

bool dt_cudnn_path_set(const char *path)
{
	if (cudnn_path[0])
		return false;
	snprintf(cudnn_path, sizeof(cudnn_path), "%s", path);
	atomic_store_explicit(&cudnn_known, true, memory_order_release);
	return true;
}

void *dt_real_resolve(unsigned api)
{
	static _Atomic int warned;
	void *h = loaded_cudnn();
	void *fn = h ? real_dlsym()(h, dt_api_names[api]) : NULL;

	if (!fn) {
		if (!atomic_exchange(&warned, 1))
			dt_warn(h ? "%s is not in the loaded cuDNN library; "
				    "calls to it fail"
				  : "no cuDNN library is loaded in this "
				    "process "
				    "(first call: %s); cuDNN calls fail with "
				    "CUDNN_STATUS_NOT_INITIALIZED",
				dt_api_names[api]);
		return NULL;
	}
	note_library(fn);
	dt_real_table[api] = fn;
	return fn;
}

static int api_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

static int api_lookup(const char *name)
{
	const char *const *p = bsearch(name, dt_api_names, DT_API_COUNT,
				       sizeof(dt_api_names[0]), api_cmp);
	return p ? (int)(p - dt_api_names) : -1;
}

/* The shim's own definition of a wrapped function. */
static void *own_wrapper(const char *name)
{
	static void *self;

	if (!self) {
		Dl_info info;
		if (!dladdr((void *)own_wrapper, &info))
			return NULL;
		self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
		if (!self)
			return NULL;
	}
	return real_dlsym()(self, name);
}

/*
 * dlsym, interposed: a lookup of a wrapped cuDNN function in the real
 * libcudnn.so returns the wrapper instead, and tells the wrapper where the
 * real one is. Lookups in cuDNN's sub-libraries (which cuDNN's dispatcher
 * makes itself) and every other lookup pass through untouched.
 */
static void *cudnn_dlsym(dlsym_fn next, void *handle, const char *name)
{
	void *p = next(handle, name);
	int api;
	Dl_info info;

	if (!p || (api = api_lookup(name)) < 0)
		return p;
	if (!dladdr(p, &info) || !info.dli_fname ||
	    !is_cudnn_name(info.dli_fname))
		return p; /* already ours, or not the dispatcher's */
	void *wrapper = own_wrapper(name);
	if (!wrapper || wrapper == p)
		return p;
	note_library(p);
	if (!dt_real_table[api])
		dt_real_table[api] = p;
	return wrapper;
}

/* The wrappers of cupti/: the CUDA driver's graph functions (and
 * cuGetProcAddress) looked up in libcuda, which tie replayed kernels to
 * calls; the CUPTI functions by which a program hands CUPTI over, looked
 * up in the CUPTI they forward to. */
static void *cupti_side_dlsym(dlsym_fn next, void *handle, const char *name)
{
	void *p = next(handle, name), *w;

	if (!p)
		return p;
	w = strncmp(name, "cupti", 5) == 0 ? dt_cupti_client_wrapper(name, p)
					   : dt_cupti_driver_wrapper(name, p);
	return w ? w : p;
}

/*
 * glibc's dlsym resolves RTLD_NEXT and RTLD_DEFAULT relative to the object
 * that called it, found from its return address. Those lookups, and those
 * of names not starting with "cu", must therefore leave through a sibling
 * call (a jump, the caller's return address intact): keep the
 * `return next(...)` in tail position, and keep this file compiled with
 * optimization. (A lookup of a cu* name in a handle is made in that
 * handle's library, whoever asks.) The
 * pass-through is not instrumented by AddressSanitizer: its runtime looks
 * functions up through here before its shadow memory exists.
 */
#define DLSYM_BODY(handle, name)                                      \
	dlsym_fn next = real_dlsym();                                 \
	if (!next)                                                    \
		return NULL;                                          \
	if (handle == RTLD_NEXT || handle == RTLD_DEFAULT || !name || \
	    name[0] != 'c' || name[1] != 'u')                         \
		return next(handle, name);                            \
	if (strncmp(name, "cudnn", 5) == 0)                           \
		return cudnn_dlsym(next, handle, name);               \
	return cupti_side_dlsym(next, handle, name)

/* Programs built against glibc >= 2.34 ask for dlsym@GLIBC_2.34, older
 * ones (manylinux wheels) for dlsym@GLIBC_2.2.5: answer both. */
DT_EXPORT DT_NO_ASAN void *dt_dlsym_v34(void *handle, const char *name)
{
	DLSYM_BODY(handle, name);
}
DT_EXPORT DT_NO_ASAN void *dt_dlsym_v225(void *handle, const char *name)
{
	DLSYM_BODY(handle, name);
}
__asm__(".symver dt_dlsym_v34, dlsym@@GLIBC_2.34");
__asm__(".symver dt_dlsym_v225, dlsym@GLIBC_2.2.5");

/* Sizes of the cudnnBackendAttributeType_t element types, by value (the
 * values are ABI: they never change between cuDNN releases). */
static uint32_t backend_type_size(int64_t type)
{
	static const uint8_t size[] = {
		[0] = sizeof(void *),  /* HANDLE */
		[1] = 4,               /* DATA_TYPE */
		[2] = sizeof(_Bool),   /* BOOLEAN */
		[3] = 8,               /* INT64 */
		[4] = 4,               /* FLOAT */
		[5] = 8,               /* DOUBLE */
		[6] = sizeof(void *),  /* VOID_PTR */
		[7 ... 14] = 4,        /* CONVOLUTION_MODE .. POINTWISE_MODE */
		[15] = sizeof(void *), /* BACKEND_DESCRIPTOR */
		[16 ... 23] = 4,       /* GENSTATS_MODE .. INT32 */
		[24] = 1,              /* CHAR */
		[25] = 4,              /* SIGNAL_MODE */
		[26] = 16,             /* FRACTION: two int64_t */
		[27 ... 30] = 4, /* NORM_MODE .. MOE_GROUPED_MATMUL_MODE */
	};

	if (type < 0 || (uint64_t)type >= sizeof(size))
		return 0;
	return size[type];
}

/* Text (CUDNN_TYPE_CHAR) is recorded up to this many bytes: an execution
 * plan's JSON representation, set once per restored plan, is all a trace
 * knows of that plan's graph, and runs to hundreds of KiB (a ring drops
 * records over half its size). */
#define BACKEND_TYPE_CHAR 24
#define MAX_TEXT (256u << 10)

uint32_t dt_backend_payload_bytes(const void *ptr, int64_t count, int64_t type)
{
	uint32_t elem = backend_type_size(type);
	uint64_t cap = type == BACKEND_TYPE_CHAR ? MAX_TEXT : DT_MAX_BLOB;

	if (!ptr || count <= 0 || !elem)
		return 0;
	return (uint64_t)count > cap / elem ? (uint32_t)(cap / elem * elem)
					    : (uint32_t)count * elem;
}

/* A symbol of a library already in the process (by file name prefix),
 * or NULL: like cuDNN, never loaded by the shim. */
static void *loaded_symbol(const char *prefix, const char *name)
{
	struct {
		const char *prefix;
		char path[PATH_MAX];
	} want = { prefix, "" };
	void *h, *fn;

	if (!dl_iterate_phdr(find_prefix, &want))
		return NULL;
	h = dlopen(want.path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	fn = real_dlsym()(h, name);
	dlclose(h); /* drops the reference NOLOAD took */
	return fn;
}

/* cuDNN loads the part that answers a call at its first use, and where it
 * cannot (no descriptor left under the program's limit on open files), a
 * call that has no status to return it in, cudnnGetVersion, aborts the
 * process. The shim asks it only where a descriptor is free. */
static bool descriptor_free(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

size_t dt_cudnn_info(struct dt_kv *kv, size_t n)
{
	static char resolved[PATH_MAX], loaded[24];
	size_t k = 0;

	if (!cudnn_path[0])
		return 0;
	if (k < n)
		kv[k++] = (struct dt_kv){ "cudnn.path", cudnn_path };
	/* the versioned file name (libcudnn.so.9.19.0) says which */
	if (realpath(cudnn_path, resolved) && k < n)
		kv[k++] = (struct dt_kv){ "cudnn.file", resolved };
	/* the file name of a wheel's copy has no minor version: ask it (no
	 * handle, no GPU needed; not recorded as a call) */
	size_t (*get_version)(void) =
		(size_t(*)(void))dt_real(DT_API_cudnnGetVersion);
	if (get_version && k < n && descriptor_free()) {
		snprintf(loaded, sizeof(loaded), "%zu", get_version());
		kv[k++] = (struct dt_kv){ "cudnn.version", loaded };
	}
	return k;
}

size_t dt_shim_info(struct dt_kv *kv, size_t n)
{
	static char header_version[16], driver[16], runtime[16];
	size_t k = 0;

	snprintf(header_version, sizeof(header_version), "%d",
		 DT_CUDNN_HEADER_VERSION);
	if (k < n)
		kv[k++] = (struct dt_kv){ "dnntrace.version", DT_VERSION };
	if (k < n)
		kv[k++] = (struct dt_kv){ "cudnn.built", header_version };
	k += dt_cudnn_info(kv + k, n - k);
	if (k < n)
		kv[k++] = (struct dt_kv){ "nvtx", dt_nvtx_state() };
	/* the CUDA driver and runtime the process uses, when loaded */
	int (*drv)(int *) = (int (*)(int *))loaded_symbol("libcuda.so",
							  "cuDriverGetVersion");
	int (*rt)(int *) = (int (*)(int *))loaded_symbol(
		"libcudart.so", "cudaRuntimeGetVersion");
	int v;
	if (drv && drv(&v) == 0 && k < n) {
		snprintf(driver, sizeof(driver), "%d", v);
		kv[k++] = (struct dt_kv){ "cuda.driver", driver };
	}
	if (rt && rt(&v) == 0 && k < n) {
		snprintf(runtime, sizeof(runtime), "%d", v);
		kv[k++] = (struct dt_kv){ "cuda.runtime", runtime };
	}
	return k;
}
