/*
 * driver-lookups.c - reaches a driver (FAKE, linked as libcuda.so.1 in a
 * scratch folder, where no other test sees it) the way the
 * CUDA runtime does: dlopen with RTLD_LOCAL, dlsym of cuGetProcAddress_v2,
 * then the graph functions through it, and through dlsym too. Exits 0
 * when every call reached the library and returned what it gave.
 * usage: driver-lookups FAKE
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*gpa_t)(const char *, void **, int, uint64_t, int *);
typedef int (*inst_t)(void **, void *, unsigned long long);
typedef int (*clone_t)(void **, void *);

int main(int argc, char **argv)
{
	char path[4096];
	void *exec = NULL, *copy = NULL, *fp = NULL;
	int status = -1, fail = 0;

	if (argc != 2)
		return 2;
	char dir[] = "/tmp/driver-lookups.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/libcuda.so.1", dir);
	if (symlink(argv[1], path))
		return 1;
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	unlink(path);
	rmdir(dir);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	int *calls = dlsym(h, "fake_calls");
	gpa_t gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
	if (!calls || !gpa)
		return 1;
	if (gpa("cuGraphInstantiate", &fp, 13000, 0, &status) || !fp ||
	    ((inst_t)fp)(&exec, (void *)0x99, 0) || exec != (void *)0x1234) {
		fprintf(stderr, "FAIL: instantiate through cuGetProcAddress\n");
		fail = 1;
	}
	fp = NULL;
	if (gpa("cuGraphClone", &fp, 13000, 0, &status) || !fp ||
	    ((clone_t)fp)(&copy, (void *)0x77) || copy != (void *)0x77) {
		fprintf(stderr, "FAIL: clone through cuGetProcAddress\n");
		fail = 1;
	}
	inst_t inst = (inst_t)dlsym(h, "cuGraphInstantiateWithFlags");
	exec = NULL;
	if (!inst || inst(&exec, (void *)0x99, 0) || exec != (void *)0x1234) {
		fprintf(stderr, "FAIL: instantiate through dlsym\n");
		fail = 1;
	}
	if (*calls != 5) {
		fprintf(stderr, "FAIL: %d calls reached the driver, not 5\n",
			*calls);
		fail = 1;
	}
	return fail;
}
