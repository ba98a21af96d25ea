/*
 * bench-shim-gemm.c - the cost of one cheap real cuBLAS or cuBLASLt GEMM
 * call, as seen by the application, for bench-shim.sh beside the cuDNN
 * call of bench-shim.c: with no GPU the handle cannot be created, so the
 * call is rejected at once, and what remains is the wrapper's work,
 * recording included. cublasLtMatmul is given a real matmul descriptor
 * (host pointer mode, asked by the wrapper), host alpha and beta and an
 * algorithm (64 bytes recorded); cublasGemmEx, host alpha and beta.
 * ltmatmul-init is cublasLtMatmul with a descriptor initialized in the
 * program's memory (cublasLtMatmulDescInit).
 * On a GPU, the -gpu calls are given real handles and empty matrices: the
 * library checks them all and succeeds with nothing to launch, and the
 * wrapper asks the handle's pointer mode (and, after cublasLtMatmul, sees
 * an algorithm it has asked about already). Prints the median and 90th
 * percentile of the per-call time over batches; exits 77 where a -gpu
 * call finds no GPU.
 *
 * usage: bench-shim-gemm {ltmatmul|gemmex|ltmatmul-init}[-gpu] [BATCHES]
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench-batches.h"

#define BATCH  1000
#define DEV(x) ((void *)(uintptr_t)(x)) /* a device address, never read */

static const float alpha = 1.0f, beta = 0.0f;
static cublasLtMatmulDesc_t op;
static cublasLtMatmulDescOpaque_t op_here; /* ltmatmul-init's */
static cublasLtMatrixLayout_t layout;
static cublasLtMatmulAlgo_t algo;
static cublasHandle_t handle; /* NULL, or a real one (-gpu) */
static cublasLtHandle_t lt;   /* the same */
static int size = 4096;       /* of the matrices: 0 with real handles */

static void ltmatmul(void)
{
	cublasLtMatmul(lt, op, &alpha, DEV(0xa000), layout, DEV(0xb000), layout,
		       &beta, DEV(0xc000), layout, DEV(0xc000), layout, &algo,
		       DEV(0xe000), 1 << 22, NULL);
}

static void gemmex(void)
{
	cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, size, size, size, &alpha,
		     DEV(0xa000), CUDA_R_16BF, 4096, DEV(0xb000), CUDA_R_16BF,
		     4096, &beta, DEV(0xc000), CUDA_R_16BF, 4096,
		     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

/* Real handles, an algorithm the heuristic gives for a small problem,
 * then empty matrices. */
static int on_gpu(void)
{
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t result;
	int n = 0;

	size = 0;
	if (cublasCreate(&handle) || cublasLtCreate(&lt) ||
	    cublasLtMatmulPreferenceCreate(&pref))
		return 77;
	cublasLtMatrixLayoutDestroy(layout);
	if (cublasLtMatrixLayoutCreate(&layout, CUDA_R_16BF, 64, 64, 64) ||
	    cublasLtMatmulAlgoGetHeuristic(lt, op, layout, layout, layout,
					   layout, pref, 1, &result, &n) ||
	    n < 1)
		return 1;
	algo = result.algo;
	cublasLtMatrixLayoutDestroy(layout);
	cublasLtMatmulPreferenceDestroy(pref);
	return cublasLtMatrixLayoutCreate(&layout, CUDA_R_16BF, 0, 0, 64) ? 1
									  : 0;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "ltmatmul";
	void (*call)(void) = !strncmp(name, "gemmex", 6) ? gemmex : ltmatmul;
	int batches = argc > 2 ? atoi(argv[2]) : 2000;
	int rc;

	if (cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F) ||
	    cublasLtMatrixLayoutCreate(&layout, CUDA_R_16BF, 4096, 4096, 4096))
		return 1;
	if (!strncmp(name, "ltmatmul-init", 13)) {
		cublasLtMatmulDescDestroy(op);
		op = &op_here;
		if (cublasLtMatmulDescInit(op, CUBLAS_COMPUTE_32F, CUDA_R_32F))
			return 1;
	}
	if (strstr(name, "-gpu") && (rc = on_gpu()))
		return rc;
	if (time_batches(call, batches, BATCH))
		return 1;
	cublasLtMatrixLayoutDestroy(layout);
	if (op != &op_here)
		cublasLtMatmulDescDestroy(op);
	return 0;
}
