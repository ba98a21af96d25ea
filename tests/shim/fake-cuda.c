/*
 * fake-cuda.c - a stand-in libcuda.so.1 with the few graph functions the
 * shim interposes, for the check that a program reaching the driver the
 * way the CUDA runtime does (dlopen with RTLD_LOCAL, dlsym, then
 * cuGetProcAddress) still reaches it under the shim.
 */
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int fake_calls; /* calls that arrived here */

EXPORT int cuGraphInstantiateWithFlags(void **exec, void *graph,
				unsigned long long flags)
{
	(void)graph;
	(void)flags;
	fake_calls++;
	*exec = (void *)0x1234;
	return 0;
}

EXPORT int cuGraphClone(void **clone, void *graph)
{
	fake_calls++;
	*clone = graph;
	return 0;
}

EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
			uint64_t flags, int *status)
{
	(void)version;
	(void)flags;
	fake_calls++;
	if (status)
		*status = 0;
	if (!strcmp(symbol, "cuGraphInstantiateWithFlags") ||
	    !strcmp(symbol, "cuGraphInstantiate"))
		*pfn = (void *)cuGraphInstantiateWithFlags;
	else if (!strcmp(symbol, "cuGraphClone"))
		*pfn = (void *)cuGraphClone;
	else
		return 500; /* CUDA_ERROR_NOT_FOUND */
	return 0;
}
