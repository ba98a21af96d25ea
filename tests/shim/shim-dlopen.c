/*
 * shim-dlopen.c - uses cuDNN the way XLA does: dlopen the library, then
 * dlsym(handle, name) for every function. Not linked against cuDNN. The
 * shim must record these calls exactly like direct ones.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef int (*create_fn)(void **);
typedef int (*set4d_fn)(void *, int, int, int, int, int, int);
typedef int (*destroy_fn)(void *);

int main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "libcudnn.so.9",
			 RTLD_NOW | RTLD_LOCAL);
	void *t = NULL;

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 77;
	}
	create_fn create = (create_fn)dlsym(h, "cudnnCreateTensorDescriptor");
	set4d_fn set = (set4d_fn)dlsym(h, "cudnnSetTensor4dDescriptor");
	destroy_fn destroy =
		(destroy_fn)dlsym(h, "cudnnDestroyTensorDescriptor");
	if (!create || !set || !destroy)
		return 1;
	/* NCHW, FLOAT, 7x7x7x7: a shape nothing else uses */
	if (create(&t) || set(t, 0, 0, 7, 7, 7, 7) || destroy(t))
		return 1;
	/* lookups that are not cuDNN's pass through untouched */
	if (!dlsym(RTLD_DEFAULT, "printf") || dlsym(h, "cudnnNoSuchFunction"))
		return 1;
	puts("dlopen calls made");
	return 0;
}
