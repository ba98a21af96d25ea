/*
 * cublas-stream-prog.c - GEMMs on fake-cublas.c's cuBLAS while a stream
 * is captured into a CUDA graph (fake-capture.c, loaded from the path
 * given first), for test-cublas-stream.sh: a handle created (on the
 * default stream, not captured), set to the captured stream, eight GEMMs
 * on it; eight on a handle the shim did not see created, already on that
 * stream; one more on the first handle set to another stream, not
 * captured. Prints, after each part, how many times cuBLAS was asked a
 * handle's stream (the program never asks) and how many nodes the graph
 * holds.
 */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#define FAKE(x)  ((void *)(uintptr_t)(x)) /* never read by the fakes */
#define CAPTURED ((cudaStream_t)FAKE(0x5000))
#define OTHER    ((cudaStream_t)FAKE(0x6000))
#define GEMMS    8

int fake_cublas_stream_asks(void);
cublasHandle_t fake_cublas_handle(cudaStream_t stream);

static struct {
	void (*begin)(const void *stream);
	void (*end)(void);
	size_t (*nodes)(void);
} capture;

static int gemms(cublasHandle_t h, int n)
{
	static const float alpha = 1.0f, beta = 0.0f;
	int failed = 0;

	for (int i = 0; i < n; i++)
		failed += cublasGemmEx(
				  h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &alpha,
				  FAKE(0xa000), CUDA_R_32F, 8, FAKE(0xb000),
				  CUDA_R_32F, 8, &beta, FAKE(0xc000),
				  CUDA_R_32F, 8, CUBLAS_COMPUTE_32F,
				  CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS;
	return failed;
}

static void report(const char *what, int failed)
{
	printf("%s: %d calls failed, stream asked %d times, %zu nodes\n", what,
	       failed, fake_cublas_stream_asks(), capture.nodes());
}

int main(int argc, char **argv)
{
	void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL) : NULL;
	cublasHandle_t h, unseen;
	int failed = 0;

	if (!lib ||
	    !(*(void **)&capture.begin = dlsym(lib, "fake_capture_begin")) ||
	    !(*(void **)&capture.end = dlsym(lib, "fake_capture_end")) ||
	    !(*(void **)&capture.nodes = dlsym(lib, "fake_capture_nodes"))) {
		fprintf(stderr, "usage: cublas-stream-prog FAKE-CAPTURE.so\n");
		return 2;
	}
	capture.begin(CAPTURED);
	failed += cublasCreate_v2(&h);
	failed += gemms(h, 1);
	report("created", failed);
	failed += cublasSetStream_v2(h, CAPTURED);
	failed += gemms(h, GEMMS);
	report("set to the captured stream", failed);
	if (!(unseen = fake_cublas_handle(CAPTURED)))
		return 1;
	failed += gemms(unseen, GEMMS);
	report("not seen created", failed);
	failed += cublasSetStream_v2(h, OTHER);
	failed += gemms(h, 1);
	report("set to another stream", failed);
	capture.end();
	failed += cublasDestroy_v2(h);
	return 0;
}
