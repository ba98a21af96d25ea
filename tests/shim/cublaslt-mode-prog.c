/*
 * cublaslt-mode-prog.c - matmuls on fake-cublaslt.c's cuBLASLt whose
 * descriptor's pointer mode changes between them, for
 * test-cublaslt-mode.sh: host scalars (alpha 2, beta 0.5) in the host
 * mode; in the device mode, addresses that must never be read (nothing is
 * mapped there: reading one kills the program); a setter that fails; a
 * descriptor initialized in the program's memory; a descriptor destroyed
 * and another created. Prints how many times cuBLASLt was asked a
 * descriptor's mode (the program never asks).
 */
#include <cublasLt.h>
#include <stdint.h>
#include <stdio.h>

#define FAKE(x)   ((void *)(uintptr_t)(x)) /* never read by the fake */
#define UNMAPPED  FAKE(0x10)               /* never to be read at all */

int fake_cublaslt_mode_asks(void);

static int matmul(cublasLtMatmulDesc_t desc, int on_host)
{
	static const float alpha = 2.0f, beta = 0.5f;

	return cublasLtMatmul(FAKE(0x1), desc, on_host ? &alpha : UNMAPPED,
			      FAKE(0xa000), FAKE(0xa0), FAKE(0xb000),
			      FAKE(0xb0), on_host ? &beta : UNMAPPED,
			      FAKE(0xc000), FAKE(0xc0), FAKE(0xc000),
			      FAKE(0xc0), NULL, NULL, 0, NULL);
}

static int set_mode(cublasLtMatmulDesc_t desc, int32_t mode, size_t size)
{
	int64_t value = mode;

	return cublasLtMatmulDescSetAttribute(
		desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &value, size);
}

int main(void)
{
	cublasLtMatmulDesc_t d, e;
	cublasLtMatmulDescOpaque_t mine;
	int failed = 0;

	failed += cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
	failed += matmul(d, 1);
	failed += set_mode(d, CUBLASLT_POINTER_MODE_DEVICE, 4);
	failed += matmul(d, 0);
	failed += set_mode(d, CUBLASLT_POINTER_MODE_HOST, 4);
	failed += matmul(d, 1);
	/* refused: the mode is what it was, but the shim cannot know */
	failed += !set_mode(d, CUBLASLT_POINTER_MODE_DEVICE, 8);
	failed += matmul(d, 1);
	failed += set_mode(d, CUBLASLT_POINTER_MODE_DEVICE, 4);
	failed += matmul(d, 0);
	failed += cublasLtMatmulDescDestroy(d);
	/* a new descriptor (perhaps at the same address) starts in host mode */
	failed += cublasLtMatmulDescCreate(&e, CUBLAS_COMPUTE_32F, CUDA_R_32F);
	failed += matmul(e, 1);
	failed += cublasLtMatmulDescDestroy(e);
	/* one in the program's memory: learned from its initialization, in
	 * host mode, then as set; initialized again, in host mode again */
	failed += cublasLtMatmulDescInit(&mine, CUBLAS_COMPUTE_32F, CUDA_R_32F);
	failed += matmul(&mine, 1);
	failed += set_mode(&mine, CUBLASLT_POINTER_MODE_DEVICE, 4);
	failed += matmul(&mine, 0);
	failed += matmul(&mine, 0);
	failed += cublasLtMatmulDescInit(&mine, CUBLAS_COMPUTE_32F, CUDA_R_32F);
	failed += matmul(&mine, 1);
	printf("%d calls failed, mode asked %d times\n", failed,
	       fake_cublaslt_mode_asks());
	return 0;
}
