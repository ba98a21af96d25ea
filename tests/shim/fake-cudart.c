/*
 * fake-cudart.c - a stand-in for the CUDA runtime's kernel registration,
 * with its symbol version (fake-cudart.map): what a library built against
 * the shared runtime calls as it loads, one call per kernel. It counts the
 * calls and keeps the last one's arguments, for register-fn.c to check
 * that the shim's wrapper passes every call on, unchanged.
 */
#include <string.h>

static int calls;
static const void *last_host;
static char last_name[256];

__attribute__((visibility("default"))) void
__cudaRegisterFunction(void **fatbin, const char *host_fn, char *device_fn,
			    const char *device_name, int thread_limit,
			    void *tid, void *bid, void *block, void *grid,
			    int *wsize)
{
	(void)fatbin;
	(void)device_fn;
	(void)thread_limit;
	(void)tid;
	(void)bid;
	(void)block;
	(void)grid;
	(void)wsize;
	calls++;
	last_host = host_fn;
	strncpy(last_name, device_name ? device_name : "", sizeof(last_name) - 1);
}

__attribute__((visibility("default"))) int fake_cudart_calls(void)
{
	return calls;
}

__attribute__((visibility("default"))) const char *
fake_cudart_last(const void **host)
{
	*host = last_host;
	return last_name;
}
