/*
 * test-replay-gemm-build.c - GEMMs made again through cuBLASLt from what
 * the decoders keep (struct dt_gemm_build) where no trace at hand has
 * them, on the stand-in GPU (fake-gpu.c, which test-replay-gemm.sh puts
 * where replay loads CUDA, cuDNN and cuBLASLt from): a batched cuBLASLt
 * matmul with a GELU, auxiliary output and bias epilogue (the stand-in
 * refuses it without a bias, an auxiliary buffer, or a leading dimension
 * of that buffer that is not a multiple of 128); a cuBLAS product in
 * FP16 written in place, its scalars in device memory (replayed as 1 of
 * FP16); and the products replay does not make again, said so: FP8 with
 * scale factors, a batch of pointer arrays, an algorithm not in the
 * trace.
 *
 * Usage: test-replay-gemm-build (LD_LIBRARY_PATH: the stand-in's)
 */
#include <stdio.h>
#include <string.h>

#include "replay-internal.h"
#include "test-util.h"

/* cudaDataType_t, cublasComputeType_t */
#define R_16F     2
#define R_32F     0
#define R_16BF    14
#define C_32F     4
#define COMPUTE16 64
#define COMPUTE32 68

/* Matrix rows x cols of type, leading dimension rows, stride to the
 * next of a batch (0 none). */
static struct dt_gemm_matrix mat(int32_t type, int64_t rows, int64_t cols,
				 int64_t stride)
{
	return (struct dt_gemm_matrix){ type, rows, cols, rows, stride };
}

/* D = A B of m x n x k, none transposed, in type, computed in compute,
 * with the algorithm the stand-in's heuristics also offer (ID 66). */
static struct dt_gemm_build product(const char *library, int32_t type,
				    int32_t compute, int32_t scale, int64_t m,
				    int64_t n, int64_t k, int64_t batch)
{
	static const int64_t algo[DT_GEMM_ALGO_ATTRS] = { 66, 15, 1, 0, 0,
							  1,  35, 0, 3 };
	struct dt_gemm_build b = {
		.library = library,
		.m = m,
		.n = n,
		.k = k,
		.batch = batch,
		.compute = compute,
		.scale = scale,
		.epilogue = 1,
		.bias_type = -1,
		.aux_type = -1,
		.has_alpha = true,
		.has_beta = true,
		.alpha = 1,
		.workspace = 4096,
	};

	b.mat[DT_GEMM_A] = mat(type, m, k, batch > 1 ? m * k : 0);
	b.mat[DT_GEMM_B] = mat(type, k, n, batch > 1 ? k * n : 0);
	b.mat[DT_GEMM_C] = mat(type, m, n, batch > 1 ? m * n : 0);
	b.mat[DT_GEMM_D] = b.mat[DT_GEMM_C];
	memcpy(b.algo, algo, sizeof(algo));
	return b;
}

/* Problem p measured in 5 s: its candidates into c, how many returned. */
static size_t measure(struct gpu *g, struct problem *p, struct cand *c)
{
	struct dt_replay_opts opts = { .budget_s = 5, .quiet = true };
	struct budget b = { .until = dt_replay_now_s() + 5 };
	char why[256] = "";
	size_t n = 0;

	CHECK(gemm_why_not(p->gemm) == NULL);
	CHECK_EQ_U(gemm_measure(g, p, &opts, &b, c, &n, why, sizeof(why)), 0);
	printf("%s: %zu candidate(s), the recorded one %s, %llu ns %s\n",
	       p->key, n, n ? c[0].status : "-",
	       n ? (unsigned long long)c[0].t.median_ns : 0ull, why);
	return n;
}

int main(void)
{
	struct cand c[CANDS_MAX];
	struct gpu g;
	char why[256] = "";

	/* what replay does not make again */
	struct dt_gemm_build fp8 =
		product("cublaslt", R_16BF, COMPUTE32, R_32F, 64, 64, 64, 1);
	fp8.scaled = true;
	CHECK(gemm_why_not(&fp8) && strstr(gemm_why_not(&fp8), "FP8"));
	struct dt_gemm_build arrays =
		product("cublas", R_16F, COMPUTE32, R_32F, 64, 64, 64, 3);
	arrays.mat[DT_GEMM_A].stride = -1;
	CHECK(gemm_why_not(&arrays) &&
	      strstr(gemm_why_not(&arrays), "arrays of pointers"));
	struct dt_gemm_build complex =
		product("cublas", C_32F, COMPUTE32, C_32F, 64, 64, 64, 1);
	CHECK(gemm_why_not(&complex) &&
	      strstr(gemm_why_not(&complex), "complex"));
	struct dt_gemm_build unknown =
		product("cublas", R_16F, COMPUTE32, R_32F, 64, 64, 64, 1);
	unknown.algo[DT_GEMM_ALGO_ID] = DT_GEMM_ALGO_UNKNOWN;
	CHECK(gemm_why_not(&unknown) &&
	      strstr(gemm_why_not(&unknown), "cuBLAS ran through"));
	CHECK(gemm_why_not(NULL) && strstr(gemm_why_not(NULL), "not a GEMM"));

	if (gpu_open(&g, why, sizeof(why)) || !gpu_load_cublaslt(&g)) {
		printf("no stand-in GPU or cuBLASLt: %s\n", why);
		return 1;
	}

	/* GELU_AUX_BIAS over a batch of 2, m not a multiple of 128 */
	struct dt_gemm_build epi =
		product("cublaslt", R_16BF, COMPUTE32, R_32F, 100, 64, 32, 2);
	epi.epilogue = DT_GEMM_EPI_GELU | DT_GEMM_EPI_AUX | DT_GEMM_EPI_BIAS;
	epi.bias_type = R_16BF;
	struct problem pe = { .key = "gelu_aux_bias",
			      .engine = 66,
			      .gemm = &epi };
	size_t n = measure(&g, &pe, c);
	CHECK(n >= 3);
	CHECK_EQ_S(c[0].status, "ok");
	CHECK_EQ_S(c[0].knobs,
		   "TILE_ID=15 SPLITK_NUM=1 CUSTOM_OPTION=1 STAGES_ID=35 "
		   "CLUSTER_SHAPE_ID=3");
	/* the heuristics' ID 66 is the recorded one: not timed twice */
	for (size_t i = 1; i < n; i++)
		CHECK(c[i].engine != 66);
	int best = results_best(c, n);
	CHECK(best > 0 && c[best].engine == 1 && c[best].agrees == 1);

	/* cuBLAS in FP16, written in place, its scalars not recorded */
	struct dt_gemm_build half =
		product("cublas", R_16F, COMPUTE16, R_16F, 64, 48, 16, 1);
	half.in_place = true;
	half.has_alpha = half.has_beta = false;
	struct problem ph = { .key = "fp16_in_place",
			      .engine = 66,
			      .gemm = &half };
	n = measure(&g, &ph, c);
	CHECK(n >= 1);
	CHECK_EQ_S(c[0].status, "ok");
	CHECK_EQ_U(c[0].t.median_ns, 10000);
	gpu_close(&g);
	return dt_test_failures ? 1 : 0;
}
