/*
 * cublas-mode-prog.c - cublasGemmEx on fake-cublas.c's cuBLAS, for
 * test-cublas-mode.sh: float scalars under CUBLAS_COMPUTE_32F, each
 * followed in memory by another float (beta 0 by 1.0f, which read as the
 * low half of a double is 0.0078125), in the host mode; in the device
 * mode, addresses that must never be read (nothing is mapped there); host
 * again; then a double complex's worth under CUDA_C_64F. Prints how many
 * times cuBLAS was asked a handle's mode (the program never asks).
 */
#include <cublas_v2.h>
#include <stdint.h>
#include <stdio.h>

#define FAKE(x)  ((void *)(uintptr_t)(x)) /* never read by the fake */
#define UNMAPPED FAKE(0x10)               /* never to be read at all */

int fake_cublas_mode_asks(void);

static int gemm(cublasHandle_t h, const void *alpha, const void *beta,
		cudaDataType type, cublasComputeType_t compute)
{
	return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, alpha,
			    FAKE(0xa000), type, 8, FAKE(0xb000), type, 8, beta,
			    FAKE(0xc000), type, 8, compute,
			    CUBLAS_GEMM_DEFAULT);
}

int main(void)
{
	static const float scalars[] = { 2.0f, 1.0f, 0.0f, 1.0f };
	static const double complex[] = { 0.25, 0.0, 0.5, 0.0 };
	cublasHandle_t h;
	int failed = 0;

	failed += cublasCreate_v2(&h);
	failed += gemm(h, &scalars[0], &scalars[2], CUDA_R_16F,
		       CUBLAS_COMPUTE_32F);
	failed += cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE);
	failed += gemm(h, UNMAPPED, UNMAPPED, CUDA_R_16F, CUBLAS_COMPUTE_32F);
	failed += cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST);
	failed += gemm(h, &scalars[0], &scalars[2], CUDA_R_16F,
		       CUBLAS_COMPUTE_32F);
	failed += gemm(h, &complex[0], &complex[2], CUDA_C_64F,
		       CUBLAS_COMPUTE_64F);
	failed += cublasDestroy_v2(h);
	printf("%d calls failed, mode asked %d times\n", failed,
	       fake_cublas_mode_asks());
	return 0;
}
