/*
 * cublas-nested-prog.c - cublasGemmEx on fake-cublas.c's cuBLAS run
 * through fake-cublaslt.c's cublasLtTSTMatmul, as cuBLAS runs its GEMMs,
 * for test-cublas-nested.sh: on a descriptor in memory where the program
 * initialized one before (cuBLAS's lie on its stack, where the program's
 * may have lain), whose pointer mode cuBLAS sets where no wrapper sees
 * it. Host scalars (alpha 2, beta 0.5) in the host mode; in the device
 * mode, addresses that must never be read (nothing is mapped there).
 * Prints how many times cuBLASLt was asked the descriptor's mode.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdint.h>
#include <stdio.h>

#define FAKE(x)  ((void *)(uintptr_t)(x)) /* never read by the fakes */
#define UNMAPPED FAKE(0x10)               /* never to be read at all */

int fake_cublaslt_mode_asks(void);
void fake_cublas_use_lt(cublasHandle_t handle, cublasLtMatmulDesc_t desc);

static int gemm(cublasHandle_t h, const void *alpha, const void *beta)
{
	return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, alpha,
			    FAKE(0xa000), CUDA_R_16BF, 8, FAKE(0xb000),
			    CUDA_R_16BF, 8, beta, FAKE(0xc000), CUDA_R_16BF, 8,
			    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

int main(void)
{
	static const float alpha = 2.0f, beta = 0.5f;
	static cublasLtMatmulDescOpaque_t desc;
	cublasHandle_t h;
	int failed = 0;

	/* the program's descriptor, initialized in host mode */
	failed += cublasLtMatmulDescInit(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
	/* then the same memory is cuBLAS's */
	failed += cublasCreate_v2(&h);
	fake_cublas_use_lt(h, &desc);
	failed += gemm(h, &alpha, &beta);
	failed += cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE);
	failed += gemm(h, UNMAPPED, UNMAPPED);
	failed += cublasDestroy_v2(h);
	printf("%d calls failed, mode asked %d times\n", failed,
	       fake_cublaslt_mode_asks());
	return 0;
}
