/*
 * cublaslt-scale-prog.c - matmuls on fake-cublaslt.c's cuBLASLt whose
 * descriptors have different scale types, for test-cublaslt-scale.sh:
 * alpha 2 and beta 0.5 as a half and as a double, 2 and 0 as floats with
 * another float after each, 2+1i and 0.5 as complex floats; a descriptor
 * whose scale type is set after its creation, and one initialized in the
 * program's memory; then a matrix transform (its descriptor holds its
 * scale type likewise) in double, then set to half. Prints how many times cuBLASLt was asked a
 * descriptor's scale type (the program never asks).
 */
#include <cublasLt.h>
#include <stdint.h>
#include <stdio.h>

#define FAKE(x) ((void *)(uintptr_t)(x)) /* never read by the fake */

int fake_cublaslt_scale_asks(void);

static int matmul(cublasLtMatmulDesc_t desc, const void *alpha,
		  const void *beta)
{
	return cublasLtMatmul(FAKE(0x1), desc, alpha, FAKE(0xa000), FAKE(0xa0),
			      FAKE(0xb000), FAKE(0xb0), beta, FAKE(0xc000),
			      FAKE(0xc0), FAKE(0xc000), FAKE(0xc0), NULL, NULL,
			      0, NULL);
}

static int transform(cublasLtMatrixTransformDesc_t desc, const void *alpha,
		     const void *beta)
{
	return cublasLtMatrixTransform(FAKE(0x1), desc, alpha, FAKE(0xa000),
				       FAKE(0xa0), beta, FAKE(0xb000),
				       FAKE(0xb0), FAKE(0xc000), FAKE(0xc0),
				       NULL);
}

static int transforms(void)
{
	static const uint16_t half[2] = { 0x4000, 0x3800 }; /* 2, 0.5 */
	static const double dbl[2] = { 2.0, 0.5 };
	cublasLtMatrixTransformDesc_t d;
	int32_t fp16 = CUDA_R_16F;
	int failed = 0;

	failed += cublasLtMatrixTransformDescCreate(&d, CUDA_R_64F);
	failed += transform(d, &dbl[0], &dbl[1]);
	failed += cublasLtMatrixTransformDescSetAttribute(
		d, CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, &fp16,
		sizeof(fp16));
	failed += transform(d, &half[0], &half[1]);
	return failed + cublasLtMatrixTransformDescDestroy(d);
}

int main(void)
{
	static const uint16_t half[2] = { 0x4000, 0x3800 }; /* 2, 0.5 */
	static const double dbl[2] = { 2.0, 0.5 };
	/* each followed by a float that must not be read with it */
	static const float flt[2][2] = { { 2.0f, 1.0f }, { 0.0f, 1.0f } };
	static const float cplx[2][2] = { { 2.0f, 1.0f }, { 0.5f, 0.0f } };
	cublasLtMatmulDesc_t d;
	cublasLtMatmulDescOpaque_t mine;
	int32_t fp64 = CUDA_R_64F;
	int failed = 0;

	failed += cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_16F, CUDA_R_16F);
	failed += matmul(d, &half[0], &half[1]);
	failed += cublasLtMatmulDescDestroy(d);
	failed += cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_64F, CUDA_R_64F);
	failed += matmul(d, &dbl[0], &dbl[1]);
	failed += cublasLtMatmulDescDestroy(d);
	failed += cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
	failed += matmul(d, flt[0], flt[1]);
	failed += cublasLtMatmulDescSetAttribute(
		d, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &fp64, sizeof(fp64));
	failed += matmul(d, &dbl[0], &dbl[1]);
	failed += cublasLtMatmulDescDestroy(d);
	failed += cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_C_32F);
	failed += matmul(d, cplx[0], cplx[1]);
	failed += cublasLtMatmulDescDestroy(d);
	/* in the program's memory: learned from its initialization */
	failed += cublasLtMatmulDescInit(&mine, CUBLAS_COMPUTE_16F, CUDA_R_16F);
	failed += matmul(&mine, &half[0], &half[1]);
	failed += transforms();
	printf("%d calls failed, scale type asked %d times\n", failed,
	       fake_cublaslt_scale_asks());
	return 0;
}
