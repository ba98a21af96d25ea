/*
 * gpu-cublas.c - a CUDA program that uses cuBLAS and no cuDNN at all, for
 * the check that dnntrace still records its kernels (and no call). With
 * "sigterm" it ends by a SIGTERM to itself, right after queuing work.
 * Exits 77 when no GPU is usable. Built twice: against the shared
 * libraries, and with cuBLAS and the CUDA runtime linked into it
 * (gpu-cublas-static), whose calls never reach the shim.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 1024

int main(int argc, char **argv)
{
	int devices = 0;
	float *a, *b, *c, one = 1.0f, zero = 0.0f;
	cublasHandle_t h;

	if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
		fprintf(stderr, "no usable GPU\n");
		return 77;
	}
	if (cudaMalloc((void **)&a, N * N * 4) ||
	    cudaMalloc((void **)&b, N * N * 4) ||
	    cudaMalloc((void **)&c, N * N * 4) || cudaMemset(a, 0, N * N * 4) ||
	    cudaMemset(b, 0, N * N * 4) || cublasCreate(&h))
		return 1;
	for (int i = 0; i < 10; i++)
		if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a,
				N, b, N, &zero, c, N))
			return 1;
	if (argc > 1 && !strcmp(argv[1], "sigterm")) {
		cudaDeviceSynchronize();
		raise(SIGTERM);
		pause();
	}
	cudaDeviceSynchronize();
	cublasDestroy(h);
	puts("10 SGEMMs done");
	return 0;
}
