/*
 * register-fn.c - registers kernels as a library built against the shared
 * CUDA runtime does (here the stand-in fake-cudart.c), under the shim or
 * not: every registration must reach the runtime with its arguments.
 * Exits 0 when they all did.
 */
#include <stdio.h>
#include <string.h>

void __cudaRegisterFunction(void **fatbin, const char *host_fn, char *device_fn,
			    const char *device_name, int thread_limit,
			    void *tid, void *bid, void *block, void *grid,
			    int *wsize);
int fake_cudart_calls(void);
const char *fake_cudart_last(const void **host);

static void stub(void)
{
}

int main(void)
{
	static void *fatbin[2];
	char name[64];
	const void *host = NULL;

	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "_Z6kernel%dPf", i);
		/* a handle per translation unit: ten kernels each */
		__cudaRegisterFunction(i % 20 < 10 ? &fatbin[0] : &fatbin[1],
				       (const char *)stub, name, name, -1, NULL,
				       NULL, NULL, NULL, NULL);
	}
	const char *last = fake_cudart_last(&host);
	if (fake_cudart_calls() != 5000 || strcmp(last, "_Z6kernel4999Pf") ||
	    host != (const void *)stub) {
		fprintf(stderr, "the runtime got %d registrations, the last %s\n",
			fake_cudart_calls(), last);
		return 1;
	}
	printf("5000 registrations reached the runtime\n");
	return 0;
}
