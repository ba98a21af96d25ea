/*
 * cublas-prog.c - a program linked against the real libcublas and
 * libcublasLt that makes their GEMM calls on a machine without a GPU, for
 * test-cublas.sh. Without a GPU, cublasCreate and cublasLtCreate fail: the
 * calls given those handles fail too (and are recorded, with their
 * arguments), while cuBLASLt's descriptors, layouts, preferences and
 * algorithm attributes are host-only and work. cuBLAS's status strings
 * come from cuBLASLt: a call of one library made inside the other's.
 *
 * Pointers to matrices are made-up device addresses: nothing reads them.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdint.h>
#include <stdio.h>

#define DEV(x) ((void *)(uintptr_t)(x)) /* a device address, never read */

/* cublas_api.h declares cublasHgemm for C++ only (__half is a C++ class):
 * a C program declares it with a stand-in of __half's size. */
typedef struct {
	unsigned short bits;
} half;
cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
			   cublasOperation_t transb, int m, int n, int k,
			   const half *alpha, const half *A, int lda,
			   const half *B, int ldb, const half *beta, half *C,
			   int ldc);

static int gemms(cublasHandle_t h)
{
	const float alpha = 1.5f, beta = 0.25f;
	const double dalpha = 2.5, dbeta = -1.0;
	const half halpha = { 0x3800 }, hbeta = { 0x4000 }; /* 0.5, 2 */
	const float *a[2] = { DEV(0xa000), DEV(0xa100) };
	const float *b[2] = { DEV(0xb000), DEV(0xb100) };
	float *c[2] = { DEV(0xc000), DEV(0xc100) };
	const cublasOperation_t ta[2] = { CUBLAS_OP_N, CUBLAS_OP_T };
	const cublasOperation_t tb[2] = { CUBLAS_OP_T, CUBLAS_OP_N };
	const int m[2] = { 64, 32 }, n[2] = { 16, 8 }, k[2] = { 128, 4 };
	const int group_size[2] = { 3, 1 };
	const float galpha[2] = { 1, 2 }, gbeta[2] = { 0, 0 };
	int fails = 0;

	/* the arrays of device pointers that batched calls take live in
	 * device memory: here, made-up addresses */
	const float *const *da = DEV(0xaa00), *const *db = DEV(0xbb00);
	float *const *dc = DEV(0xcc00);
	fails += cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 64, 32, 16, &alpha,
			     DEV(0xa000), 64, DEV(0xb000), 32, &beta,
			     DEV(0xc000), 64) != CUBLAS_STATUS_SUCCESS;
	fails += cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 8, 8, 8, &dalpha,
			     DEV(0xa000), 8, DEV(0xb000), 8, &dbeta,
			     DEV(0xc000), 8) != CUBLAS_STATUS_SUCCESS;
	fails += cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &halpha,
			     DEV(0xa000), 16, DEV(0xb000), 16, &hbeta,
			     DEV(0xc000), 16) != CUBLAS_STATUS_SUCCESS;
	fails += cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 64, &alpha,
			      DEV(0xa000), CUDA_R_16BF, 256, DEV(0xb000),
			      CUDA_R_16BF, 64, &beta, DEV(0xc000), CUDA_R_16BF,
			      256, CUBLAS_COMPUTE_32F,
			      CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS;
	fails += cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 32, 32, 32,
				    &alpha, da, 32, db, 32, &beta, dc, 32,
				    2) != CUBLAS_STATUS_SUCCESS;
	fails +=
		cublasGemmBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 32, 32, 32,
				    &alpha, (const void *const *)da, CUDA_R_16F,
				    32, (const void *const *)db, CUDA_R_16F, 32,
				    &beta, (void *const *)dc, CUDA_R_16F, 32, 2,
				    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) !=
		CUBLAS_STATUS_SUCCESS;
	fails += cublasGemmStridedBatchedEx(
			 h, CUBLAS_OP_N, CUBLAS_OP_T, 128, 64, 32, &alpha,
			 DEV(0xa000), CUDA_R_16BF, 128, 128 * 32, DEV(0xb000),
			 CUDA_R_16BF, 64, 64 * 32, &beta, DEV(0xc000),
			 CUDA_R_16BF, 128, 128 * 64, 12, CUBLAS_COMPUTE_32F,
			 CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS;
	fails += cublasSgemmGroupedBatched(h, ta, tb, m, n, k, galpha, a, m, b,
					   k, gbeta, c, m, 2,
					   group_size) != CUBLAS_STATUS_SUCCESS;
	return fails;
}

static void set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
		const void *v, size_t n)
{
	if (cublasLtMatmulDescSetAttribute(d, attr, v, n))
		fprintf(stderr, "cublasLtMatmulDescSetAttribute %d failed\n",
			(int)attr);
}

/* A matmul with a bias and GELU epilogue: descriptors, the heuristic, and
 * the matmul under the host and the device pointer modes. */
static int matmul(cublasLtHandle_t lt)
{
	cublasLtMatmulDesc_t op, opdev;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t results[4];
	cublasLtMatmulAlgo_t algo = { { 0 } };
	const cublasOperation_t trans = CUBLAS_OP_T;
	const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
	const void *bias = DEV(0xd000);
	const cublasLtPointerMode_t device = CUBLASLT_POINTER_MODE_DEVICE;
	const uint64_t workspace = 1 << 22;
	const int32_t splitk = 4;
	const float alpha = 2.0f, beta = 0.5f;
	int returned = 0;
	int32_t got = -1;
	size_t written = 0;

	if (cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) ||
	    cublasLtMatmulDescCreate(&opdev, CUBLAS_COMPUTE_32F, CUDA_R_32F) ||
	    cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, 768, 512, 768) ||
	    cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, 768, 256, 768) ||
	    cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, 512, 256, 512) ||
	    cublasLtMatmulPreferenceCreate(&pref))
		return 1;
	set(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans));
	set(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
	set(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
	set(opdev, CUBLASLT_MATMUL_DESC_POINTER_MODE, &device, sizeof(device));
	cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &got,
				       sizeof(got), &written);
	cublasLtMatmulPreferenceSetAttribute(
		pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
		sizeof(workspace));
	cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 4, results,
				       &returned);
	/* an algorithm of the program's own making: split-k 4 */
	cublasLtMatmulAlgoConfigSetAttribute(&algo,
					     CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
					     &splitk, sizeof(splitk));
	cublasLtMatmul(lt, op, &alpha, DEV(0xa000), la, DEV(0xb000), lb, &beta,
		       DEV(0xc000), lc, DEV(0xc000), lc, &algo, DEV(0xe000),
		       workspace, NULL);
	cublasLtMatmul(lt, opdev, DEV(0xf000), DEV(0xa000), la, DEV(0xb000), lb,
		       DEV(0xf004), DEV(0xc000), lc, DEV(0xc000), lc, NULL,
		       NULL, 0, NULL);
	cublasLtMatmulPreferenceDestroy(pref);
	cublasLtMatrixLayoutDestroy(lc);
	cublasLtMatrixLayoutDestroy(lb);
	cublasLtMatrixLayoutDestroy(la);
	cublasLtMatmulDescDestroy(opdev);
	cublasLtMatmulDescDestroy(op);
	printf("transa %d (%zu bytes), %d algorithms\n", got, written,
	       returned);
	return 0;
}

int main(void)
{
	cublasHandle_t h = NULL;
	cublasLtHandle_t lt = NULL;
	cublasStatus_t st = cublasCreate(&h);
	cublasStatus_t lst = cublasLtCreate(&lt);
	int failed = gemms(h);

	if (matmul(lt))
		return 1;
	/* cuBLAS asks cuBLASLt for the string */
	printf("cublasCreate: %s; cublasLtCreate: %d; %d GEMM calls failed\n",
	       cublasGetStatusString(st), (int)lst, failed);
	if (h)
		cublasDestroy(h);
	if (lt)
		cublasLtDestroy(lt);
	return 0;
}
