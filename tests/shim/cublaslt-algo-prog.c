/*
 * cublaslt-algo-prog.c - matmuls on fake-cublaslt.c's cuBLASLt, which
 * succeed without a GPU: algorithm 1 twice, algorithm 2, algorithm 1
 * again, one with no algorithm, and one refused (no handle) with
 * algorithm 3; then the typed matmul cuBLAS calls, cublasLtTSTMatmul, with
 * algorithm 4, for test-cublaslt-algo.sh.
 */
#include <cublasLt.h>
#include <stdint.h>
#include <stdio.h>

#define FAKE(x) ((void *)(uintptr_t)(x)) /* never read by the fake */

/* not in cublasLt.h: cublasLtMatmul's parameters */
cublasStatus_t cublasLtTSTMatmul(
	cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
	cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t,
	const void *, const void *, cublasLtMatrixLayout_t, void *,
	cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *, void *, size_t,
	cudaStream_t);

static int matmul(cublasLtHandle_t h, const cublasLtMatmulAlgo_t *algo)
{
	const float alpha = 2.0f, beta = 0.0f;

	return cublasLtMatmul(h, FAKE(0xd0), &alpha, FAKE(0xa000), FAKE(0xa0),
			      FAKE(0xb000), FAKE(0xb0), &beta, FAKE(0xc000),
			      FAKE(0xc0), FAKE(0xc000), FAKE(0xc0), algo, NULL,
			      0, NULL) != CUBLAS_STATUS_SUCCESS;
}

int main(void)
{
	cublasLtHandle_t h = FAKE(0x1);
	const float alpha = 1.0f, beta = 0.0f;
	cublasLtMatmulAlgo_t one = { { 1 } }, two = { { 2 } },
			     three = { { 3 } }, four = { { 4 } };
	int failed = matmul(h, &one) + matmul(h, &one) + matmul(h, &two) +
		     matmul(h, &one) + matmul(h, NULL) + matmul(NULL, &three);

	failed += cublasLtTSTMatmul(h, FAKE(0xd0), &alpha, FAKE(0xa000),
				    FAKE(0xa0), FAKE(0xb000), FAKE(0xb0),
				    &beta, FAKE(0xc000), FAKE(0xc0),
				    FAKE(0xc000), FAKE(0xc0), &four, NULL, 0,
				    NULL) != CUBLAS_STATUS_SUCCESS;

	printf("%d matmuls failed\n", failed);
	return 0;
}
