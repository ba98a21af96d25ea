/*
 * gpu-cublas-calls.c - GEMMs of cuBLAS and cuBLASLt of every shape the
 * shim records differently, for check_cublas.py to compare dnntrace's
 * trace with cuBLAS's and cuBLASLt's own logs: cublasSgemm_v2 under the
 * host and the device pointer modes, cublasGemmEx, cublasGemmStridedBatchedEx,
 * cublasGemmBatchedEx with its arrays of matrix pointers in device memory,
 * and cublasLtMatmul with a bias and GELU epilogue on the heuristic's first
 * algorithm (twice: its configuration is asked once); then a cublasGemmEx
 * and a cublasLtMatmul on the heuristic's second algorithm (asked about
 * then) captured into a CUDA graph, replayed 3 times, as PyTorch captures
 * its GEMMs. Prints "CAPTURED calls=2
 * replays=3". Exits 77 when no GPU is usable.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>

#define N 256

#define CHECK(x)                                                        \
	do {                                                            \
		if (x) {                                                \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__, \
				__LINE__, #x);                          \
			return 1;                                       \
		}                                                       \
	} while (0)

static void *a, *b, *c, *bias, *workspace;

static int cublas_calls(cublasHandle_t h)
{
	const float alpha = 1.5f, beta = 0.25f, one = 1.0f, zero = 0.0f;
	float *dscalars;
	void **arrays;
	void *host_arrays[6];

	CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, N, N / 2, N / 4, &alpha,
			  a, N, b, N, &beta, c, N));
	/* alpha and beta in device memory */
	CHECK(cudaMalloc((void **)&dscalars, 2 * sizeof(float)));
	CHECK(cudaMemcpy(dscalars, (float[]){ 2.0f, 0.0f }, 2 * sizeof(float),
			 cudaMemcpyHostToDevice));
	CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
	CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N / 2, N, N / 2,
			  dscalars, a, N, b, N, dscalars + 1, c, N));
	CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
	CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a,
			   CUDA_R_16BF, N, b, CUDA_R_16BF, N, &zero, c,
			   CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
			   CUBLAS_GEMM_DEFAULT));
	CHECK(cublasGemmStridedBatchedEx(
		h, CUBLAS_OP_T, CUBLAS_OP_N, 64, 64, 32, &alpha, a, CUDA_R_16F,
		32, 64 * 32, b, CUDA_R_16F, 32, 64 * 32, &beta, c, CUDA_R_16F,
		64, 64 * 64, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	/* three matrices of each in one allocation; the arrays of their
	 * pointers in device memory, as cuBLAS requires */
	for (int i = 0; i < 3; i++) {
		host_arrays[i] = (char *)a + i * 64 * 64 * 2;
		host_arrays[3 + i] = (char *)c + i * 64 * 64 * 2;
	}
	CHECK(cudaMalloc((void **)&arrays, sizeof(host_arrays)));
	CHECK(cudaMemcpy(arrays, host_arrays, sizeof(host_arrays),
			 cudaMemcpyHostToDevice));
	CHECK(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one,
				  (const void *const *)arrays, CUDA_R_16F, 64,
				  (const void *const *)arrays, CUDA_R_16F, 64,
				  &zero, arrays + 3, CUDA_R_16F, 64, 3,
				  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	CHECK(cudaDeviceSynchronize());
	cudaFree(arrays);
	cudaFree(dscalars);
	return 0;
}

/* A GEMM of each library captured on a stream into a graph, replayed. */
static int capture(cublasHandle_t h, cublasLtHandle_t lt,
		   cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
		   cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc,
		   const cublasLtMatmulAlgo_t *algo)
{
	const float one = 1.0f, zero = 0.0f;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t x;

	CHECK(cudaStreamCreate(&s));
	CHECK(cublasSetStream(h, s));
	CHECK(cublasSetWorkspace(h, workspace, 1 << 22));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a,
			   CUDA_R_16BF, N, b, CUDA_R_16BF, N, &zero, c,
			   CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
			   CUBLAS_GEMM_DEFAULT));
	CHECK(cublasLtMatmul(lt, op, &one, a, la, b, lb, &zero, c, lc, c, lc,
			     algo, workspace, 1 << 22, s));
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&x, g, 0));
	for (int i = 0; i < 3; i++)
		CHECK(cudaGraphLaunch(x, s));
	CHECK(cudaStreamSynchronize(s));
	puts("CAPTURED calls=2 replays=3");
	cudaGraphExecDestroy(x);
	cudaGraphDestroy(g);
	cublasSetStream(h, 0);
	cudaStreamDestroy(s);
	return 0;
}

static int lt_calls(cublasHandle_t h)
{
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t results[8];
	const cublasOperation_t trans = CUBLAS_OP_T;
	const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
	const uint64_t wsize = 1 << 22;
	const float alpha = 1.0f, beta = 0.0f;
	int returned = 0;

	CHECK(cublasLtCreate(&lt));
	CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA,
					     &trans, sizeof(trans)));
	CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE,
					     &epilogue, sizeof(epilogue)));
	CHECK(cublasLtMatmulDescSetAttribute(
		op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
	/* D (N x N/2) = gelu(A^T (N x N) B (N x N/2) + bias), bf16 */
	CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, N, N, N));
	CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, N, N / 2, N));
	CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, N, N / 2, N));
	CHECK(cublasLtMatmulPreferenceCreate(&pref));
	CHECK(cublasLtMatmulPreferenceSetAttribute(
		pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsize,
		sizeof(wsize)));
	CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 8,
					     results, &returned));
	CHECK(returned < 1);
	for (int i = 0; i < 2; i++)
		CHECK(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, c, lc,
				     c, lc, &results[0].algo, workspace, wsize,
				     0));
	CHECK(cudaDeviceSynchronize());
	printf("cuBLASLt: %d algorithms, ran the first twice\n", returned);
	/* the heuristic's second algorithm: asked about inside the capture */
	CHECK(capture(h, lt, op, la, lb, lc, &results[returned > 1].algo));
	cublasLtMatmulPreferenceDestroy(pref);
	cublasLtMatrixLayoutDestroy(lc);
	cublasLtMatrixLayoutDestroy(lb);
	cublasLtMatrixLayoutDestroy(la);
	cublasLtMatmulDescDestroy(op);
	cublasLtDestroy(lt);
	return 0;
}

int main(void)
{
	int devices = 0;
	cublasHandle_t h;

	if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
		fprintf(stderr, "no usable GPU\n");
		return 77;
	}
	CHECK(cudaMalloc(&a, N * N * 4) || cudaMalloc(&b, N * N * 4) ||
	      cudaMalloc(&c, N * N * 4) || cudaMalloc(&bias, N * 4) ||
	      cudaMalloc(&workspace, 1 << 22));
	CHECK(cudaMemset(a, 0, N * N * 4) || cudaMemset(b, 0, N * N * 4) ||
	      cudaMemset(bias, 0, N * 4));
	CHECK(cublasCreate(&h));
	if (cublas_calls(h) || lt_calls(h))
		return 1;
	cublasDestroy(h);
	puts("cuBLAS: 6 GEMM calls done");
	return 0;
}
