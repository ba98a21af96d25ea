/*
 * nvtx-prog.c - a program that names its regions with NVTX v3 (header-only)
 * around real cuDNN descriptor calls: nested push/pop ranges, a category
 * name, a domain with a registered string, a wide message, a start/end
 * range ended by another thread, and marks. What it prints does not depend
 * on whether a tool records NVTX. With the argument `fork`, it then forks,
 * and the child pushes a name the parent pushed before.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cudnn.h>
#include <nvtx3/nvToolsExt.h>

static nvtxRangeId_t async_range;

static void *worker(void *arg)
{
	(void)arg;
	nvtxNameOsThreadA(0, "worker");
	cudnnGetVersion();
	nvtxRangeEnd(async_range); /* started by the main thread */
	return NULL;
}

/* One tensor descriptor made, set and destroyed: three recorded calls. */
static int tensor(int n)
{
	cudnnTensorDescriptor_t t;
	int ok = cudnnCreateTensorDescriptor(&t) == CUDNN_STATUS_SUCCESS &&
		 cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW,
					    CUDNN_DATA_FLOAT, n, 3, 8,
					    8) == CUDNN_STATUS_SUCCESS;
	cudnnDestroyTensorDescriptor(t);
	return ok;
}

int main(int argc, char **argv)
{
	nvtxDomainHandle_t dom = nvtxDomainCreateA("mylib");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered");
	nvtxEventAttributes_t a = { 0 };
	int ok = 1;

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	nvtxNameCategoryA(7, "layers");
	nvtxMarkA("begin");

	nvtxRangePushA("warmup");
	ok &= cudnnGetVersion() > 0;
	nvtxRangePop();

	for (int step = 0; step < 3; step++) {
		nvtxRangePushA("step");
		a.category = 7;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = "conv";
		nvtxRangePushEx(&a);
		ok &= tensor(step + 1);
		nvtxRangePop();
		nvtxRangePop();
	}

	a.category = 0;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = reg;
	nvtxDomainRangePushEx(dom, &a);
	ok &= tensor(4);
	nvtxDomainMarkEx(dom, &a);
	nvtxDomainRangePop(dom);

	nvtxRangePushW(L"wide \u00e9t\u00e9");
	nvtxRangePop();

	pthread_t th;
	async_range = nvtxRangeStartA("async");
	if (pthread_create(&th, NULL, worker, NULL) == 0)
		pthread_join(th, NULL);
	nvtxMarkA("end");
	nvtxDomainDestroy(dom);
	if (argc > 1 && !strcmp(argv[1], "fork")) {
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			nvtxRangePushA("step");
			ok &= tensor(5);
			nvtxRangePop();
			_exit(!ok);
		}
		int st = 1;
		ok &= child > 0 && waitpid(child, &st, 0) == child && st == 0;
	}
	printf("nvtx-prog: %s\n", ok ? "ok" : "cuDNN failed");
	return !ok;
}
