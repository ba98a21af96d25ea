/*
 * cupti-lookups.c - finds CUPTI's functions the way XLA does (dlopen, then
 * dlsym on the handle) in a stand-in CUPTI (FAKE, linked as libcupti.so.13
 * in a scratch folder), and in a second copy of it.
 *
 * Under the shim, the functions by which a program hands CUPTI over must
 * come back as the shim's wrappers (so that it sees the program take
 * CUPTI), and each must still reach the library once and return what the
 * library returned; every other function, and every function of the second
 * copy (a CUPTI the wrappers do not forward to), must come back untouched.
 * Without the shim, everything is untouched. Exits 0 when all holds, 1
 * otherwise, 77 under a shim built without CUPTI's headers (no wrappers
 * to find).
 * usage: cupti-lookups FAKE
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const wrapped[] = {
	"cuptiSubscribe",
	"cuptiSubscribe_v2",
	"cuptiActivityRegisterCallbacks",
	"cuptiActivityDisable",
	"cuptiFinalize",
};
enum { N_WRAPPED = sizeof(wrapped) / sizeof(wrapped[0]) };

/* The file that defines address p. */
static const char *file_of(void *p)
{
	Dl_info info;

	return p && dladdr(p, &info) && info.dli_fname ? info.dli_fname : "?";
}

/* Copy file from to to; 0 when done. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	size_t n;
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	int err = !in || !out;

	while (!err && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		err = fwrite(buf, 1, n, out) != n;
	err |= in && ferror(in);
	if (in)
		fclose(in);
	if (out)
		err |= fclose(out) != 0;
	return err;
}

/* dlopen FAKE as DIR/libcupti.so.13 (copied when copy is set: a file of
 * its own, so a second library). */
static void *open_as_cupti(const char *fake, bool copy)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], path[4200];
	void *h = NULL;

	snprintf(dir, sizeof(dir), "%s/cupti-lookups.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return NULL;
	snprintf(path, sizeof(path), "%s/libcupti.so.13", dir);
	if (copy ? copy_file(fake, path) == 0 : symlink(fake, path) == 0) {
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			fprintf(stderr, "%s\n", dlerror());
	}
	unlink(path);
	rmdir(dir);
	return h;
}

/* dl_iterate_phdr: whether the shim is in the process. */
static int find_shim(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	return info->dlpi_name && strstr(info->dlpi_name, "libdnntrace");
}

/* Look every function up in h and call it; routed: whether the wrapped
 * ones must come back as the shim's. Returns the failures. */
static int check(void *h, bool routed, const char *shim, const char *what)
{
	int *calls = dlsym(h, "fake_calls"), fail = 0;
	const char *lib = file_of(calls);

	for (int i = 0; i <= N_WRAPPED; i++) {
		const char *name =
			i < N_WRAPPED ? wrapped[i] : "cuptiGetVersion";
		int (*fn)(void *, void *, void *, void *) =
			(int (*)(void *, void *, void *, void *))dlsym(h, name);
		const char *want = routed && i < N_WRAPPED ? shim : lib;
		int before = *calls;
		int code = fn ? fn(NULL, NULL, NULL, NULL) : -1;

		if (!fn || strcmp(file_of((void *)fn), want)) {
			fprintf(stderr, "FAIL: %s: %s in %s, not %s\n", what,
				name, file_of((void *)fn), want);
			fail++;
		} else if (code != 101 + i || *calls != before + 1) {
			fprintf(stderr,
				"FAIL: %s: %s returned %d (library: %d), "
				"reached the library %d times\n",
				what, name, code, 101 + i, *calls - before);
			fail++;
		}
	}
	return fail;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	/* the shim's wrappers, where it is preloaded and has them */
	void *own = dlsym(RTLD_DEFAULT, "cuptiSubscribe");
	const char *shim = own ? file_of(own) : NULL;
	if (dl_iterate_phdr(find_shim, NULL) && !own) {
		printf("SKIP: the shim has no CUPTI wrappers (built without "
		       "CUPTI's headers)\n");
		return 77;
	}
	char fake[4096];
	if (!realpath(argv[1], fake))
		return 2;
	void *first = open_as_cupti(fake, false);
	void *second = open_as_cupti(fake, true);
	if (!first || !second || first == second) {
		fprintf(stderr, "FAIL: could not load the stand-in twice\n");
		return 1;
	}
	int fail = check(first, own != NULL, shim, "the CUPTI in use") +
		   check(second, false, shim, "a second CUPTI");
	if (!fail)
		printf("ok: %s\n", own ? "hand-over functions wrapped, all "
					 "reached"
				       : "no shim: all untouched");
	return fail != 0;
}
