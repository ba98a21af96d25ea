/*
 * shim-libs.c - finding each wrapped library in the process, and routing
 * lookups of its functions to the wrappers.
 *
 * What to look for comes from the generated table of libraries
 * (dt_libraries, one row per description under shim/libs/): sonames, the
 * library's file names, the prefix of its functions. The wrappers forward
 * to the library the application loaded itself (PyTorch's wheel copy of
 * cuDNN through its RPATH, say); the shim never loads one on its own.
 * Programs that dlopen a library and look functions up with
 * dlsym(handle, name), as XLA does, reach the wrappers through the dlsym
 * interposed here. Nothing here knows one library from another.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
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

/* What the shim has learnt of a wrapped library in this process. */
static struct found {
	_Atomic(void *) handle;
	_Atomic bool known; /* path is set */
	_Atomic int warned;
	char path[PATH_MAX];
} found[DT_LIBRARY_COUNT];

unsigned dt_library_of(unsigned api)
{
	unsigned lib = 0;

	while (lib + 1 < DT_LIBRARY_COUNT && api > dt_libraries[lib].last_api)
		lib++;
	return lib;
}

/* Whether the file name of path (no folders) starts with prefix. */
static bool file_name_starts(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, prefix, strlen(prefix)) == 0;
}

/* Whether path's file name is the library's own (libcudnn.so.9.19.0), not
 * one of its sub-libraries'. */
static bool is_library_file(const struct dt_library *lib, const char *path)
{
	return file_name_starts(path, lib->file_prefix);
}

/* What find_prefix() looks for, and finds. */
struct by_prefix {
	const char *prefix;
	char path[PATH_MAX];
};

/* dl_iterate_phdr: the first library whose file name starts with
 * want->prefix. */
static int find_prefix(struct dl_phdr_info *info, size_t size, void *data)
{
	struct by_prefix *want = data;

	(void)size;
	if (info->dlpi_name && file_name_starts(info->dlpi_name, want->prefix)) {
		snprintf(want->path, sizeof(want->path), "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* A handle on a library already in the process (by file name prefix), or
 * NULL. RTLD_NOLOAD guarantees no second copy is ever brought in. */
static void *loaded_by_prefix(const char *prefix)
{
	struct by_prefix want = { prefix, "" };

	if (!dl_iterate_phdr(find_prefix, &want))
		return NULL;
	return dlopen(want.path, RTLD_LAZY | RTLD_NOLOAD);
}

/* A handle on the library as loaded in the process, or NULL: by soname,
 * else by the file name of whatever copy is loaded. */
static void *loaded_library(unsigned lib)
{
	const struct dt_library *l = &dt_libraries[lib];
	void *h = atomic_load(&found[lib].handle);

	if (h)
		return h;
	for (const char *const *so = l->sonames; !h && *so; so++)
		h = dlopen(*so, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		h = loaded_by_prefix(l->file_prefix);
	if (h)
		atomic_store(&found[lib].handle, h);
	return h;
}

/* Remember which file the real functions come from, for the header (or,
 * when the file is open already, its body: dt_library_found). */
static void note_library(unsigned lib, void *fn)
{
	Dl_info info;

	if (!atomic_load_explicit(&found[lib].known, memory_order_acquire) &&
	    dladdr(fn, &info) && info.dli_fname)
		dt_library_found(lib, info.dli_fname);
}

bool dt_library_path_set(unsigned lib, const char *path)
{
	if (found[lib].path[0])
		return false;
	snprintf(found[lib].path, sizeof(found[lib].path), "%s", path);
	atomic_store_explicit(&found[lib].known, true, memory_order_release);
	return true;
}

void *dt_real_resolve(unsigned api)
{
	unsigned lib = dt_library_of(api);
	const struct dt_library *l = &dt_libraries[lib];
	void *h = loaded_library(lib);
	void *fn = h ? real_dlsym()(h, dt_api_names[api]) : NULL;

	if (!fn) {
		if (!atomic_exchange(&found[lib].warned, 1))
			dt_warn(h ? "%s is not in the loaded %s library; "
				    "calls to it fail"
				  : "no %2$s library is loaded in this "
				    "process "
				    "(first call: %1$s); %2$s calls fail with "
				    "%3$s",
				dt_api_names[api], l->display, l->not_loaded);
		return NULL;
	}
	note_library(lib, fn);
	dt_real_table[api] = fn;
	return fn;
}

void *dt_real_peek(unsigned api)
{
	void *fn = dt_real_table[api], *h;

	if (fn)
		return fn;
	h = loaded_library(dt_library_of(api));
	return h ? real_dlsym()(h, dt_api_names[api]) : NULL;
}

static int api_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

/* The API id of a function of lib by its name, or -1. */
static int api_lookup(const struct dt_library *lib, const char *name)
{
	const char *const *first = &dt_api_names[lib->first_api];
	const char *const *p =
		bsearch(name, first, lib->last_api - lib->first_api + 1,
			sizeof(dt_api_names[0]), api_cmp);
	return p ? (int)(p - dt_api_names) : -1;
}

/* The wrapped library whose functions' names start like name, or -1; of
 * two, the longer prefix (cublasLt before cublas). */
DT_NO_ASAN static int library_by_prefix(const char *name)
{
	size_t best = 0;
	int lib = -1;

	for (unsigned i = 0; i < DT_LIBRARY_COUNT; i++) {
		size_t n = strlen(dt_libraries[i].prefix);
		if (n > best && !strncmp(name, dt_libraries[i].prefix, n)) {
			best = n;
			lib = (int)i;
		}
	}
	return lib;
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
 * dlsym, interposed: a lookup of a wrapped function in the real library
 * returns the wrapper instead, and tells the wrapper where the real one
 * is. Lookups in a library's sub-libraries (which cuDNN's dispatcher makes
 * itself) and every other lookup pass through untouched.
 */
static void *library_dlsym(dlsym_fn next, unsigned lib, void *handle,
			   const char *name)
{
	void *p = next(handle, name);
	int api;
	Dl_info info;

	if (!p || (api = api_lookup(&dt_libraries[lib], name)) < 0)
		return p;
	if (!dladdr(p, &info) || !info.dli_fname ||
	    !is_library_file(&dt_libraries[lib], info.dli_fname))
		return p; /* already ours, or not the library's own */
	void *wrapper = own_wrapper(name);
	if (!wrapper || wrapper == p)
		return p;
	note_library(lib, p);
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
 * of names that are neither a wrapped library's nor cupti/'s (cu*), must
 * therefore leave through a sibling call (a jump, the caller's return
 * address intact): keep the `return next(...)` in tail position, and keep
 * this file compiled with optimization. (A lookup of a wrapped name in a
 * handle is made in that handle's library, whoever asks.) The
 * pass-through is not instrumented by AddressSanitizer: its runtime looks
 * functions up through here before its shadow memory exists.
 */
#define DLSYM_BODY(handle, name)                                         \
	dlsym_fn next = real_dlsym();                                    \
	int lib;                                                         \
	if (!next)                                                       \
		return NULL;                                             \
	if (handle == RTLD_NEXT || handle == RTLD_DEFAULT || !name)      \
		return next(handle, name);                               \
	if ((lib = library_by_prefix(name)) >= 0)                        \
		return library_dlsym(next, (unsigned)lib, handle, name); \
	if (name[0] != 'c' || name[1] != 'u')                            \
		return next(handle, name);                               \
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

/* A symbol of a library already in the process (by file name prefix),
 * or NULL: like the wrapped libraries, never loaded by the shim. */
static void *loaded_symbol(const char *prefix, const char *name)
{
	void *h = loaded_by_prefix(prefix), *fn;

	if (!h)
		return NULL;
	fn = real_dlsym()(h, name);
	dlclose(h); /* drops the reference NOLOAD took */
	return fn;
}

/* cuDNN loads the part that answers a call at its first use, and where it
 * cannot (no descriptor left under the program's limit on open files), a
 * call that has no status to return it in, cudnnGetVersion, aborts the
 * process. The shim asks a library's version only where a descriptor is
 * free. */
static bool descriptor_free(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* INFO keys lib.<name>.<what> (trace/FORMAT.md), in static storage. */
enum { KEY_PATH, KEY_FILE, KEY_VERSION, KEY_BUILT, KEYS };

static const char *lib_key(unsigned lib, int which)
{
	static const char *const what[KEYS] = { "path", "file", "version",
						"built" };
	static char keys[DT_LIBRARY_COUNT][KEYS][64];
	char *k = keys[lib][which];

	if (!k[0])
		snprintf(k, sizeof(keys[0][0]), "lib.%s.%s",
			 dt_libraries[lib].name, what[which]);
	return k;
}

size_t dt_library_info(unsigned lib, struct dt_kv *kv, size_t n)
{
	static char resolved[DT_LIBRARY_COUNT][PATH_MAX];
	static char loaded[DT_LIBRARY_COUNT][24];
	const struct dt_library *l = &dt_libraries[lib];
	size_t k = 0;

	if (!found[lib].path[0])
		return 0;
	if (k < n)
		kv[k++] = (struct dt_kv){ lib_key(lib, KEY_PATH),
					  found[lib].path };
	/* the versioned file name (libcudnn.so.9.19.0) says which */
	if (realpath(found[lib].path, resolved[lib]) && k < n)
		kv[k++] =
			(struct dt_kv){ lib_key(lib, KEY_FILE), resolved[lib] };
	/* the file name of a wheel's copy has no minor version: ask it (no
	 * handle, no GPU needed; not recorded as a call) */
	if (l->version && k < n && descriptor_free()) {
		uint64_t v = l->version();
		if (v) {
			snprintf(loaded[lib], sizeof(loaded[lib]), "%llu",
				 (unsigned long long)v);
			kv[k++] = (struct dt_kv){ lib_key(lib, KEY_VERSION),
						  loaded[lib] };
		}
	}
	return k;
}

size_t dt_shim_info(struct dt_kv *kv, size_t n)
{
	static char driver[16], runtime[16];
	size_t k = 0;

	if (k < n)
		kv[k++] = (struct dt_kv){ "dnntrace.version", DT_VERSION };
	for (unsigned lib = 0; lib < DT_LIBRARY_COUNT; lib++) {
		if (k < n)
			kv[k++] = (struct dt_kv){ lib_key(lib, KEY_BUILT),
						  dt_libraries[lib].built };
		k += dt_library_info(lib, kv + k, n - k);
	}
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
