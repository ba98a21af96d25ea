/*
 * dt-gemm-build.h - what the cuBLAS and cuBLASLt decoders keep of a matrix
 * product to build it again on a GPU through cuBLASLt (replay/ does): the
 * product as cublasLtMatmul takes it (its matmul descriptor's attributes,
 * the four matrix layouts, the scalars) and the algorithm the program ran
 * (cuBLASLt's own, or, for a cuBLAS call, that of the cuBLASLt matmul it
 * ran through). An op's recipe holds one in build when its library is
 * cuBLAS or cuBLASLt and it is a GEMM (D = alpha op(A) op(B) + beta C,
 * with an epilogue); their other calls (gemv, trsm, syrk) keep none.
 * Values are the libraries' own numbers (cudaDataType_t,
 * cublasComputeType_t, cublasOperation_t, cublasLtEpilogue_t): no CUDA
 * header is included. Part of analyzer/'s public interface; dt-analyzer.h
 * includes every part.
 */
#ifndef DT_GEMM_BUILD_H
#define DT_GEMM_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A cuBLASLt algorithm's documented attributes, by their
 * cublasLtMatmulAlgoConfigAttributes_t value (CUBLASLT_ALGO_CONFIG_ID is
 * 0, ..., CLUSTER_SHAPE_ID 8); DT_GEMM_ALGO_UNKNOWN where the trace does
 * not hold one. */
#define DT_GEMM_ALGO_UNKNOWN INT64_MIN
enum dt_gemm_algo_attr {
	DT_GEMM_ALGO_ID,
	DT_GEMM_ALGO_TILE,
	DT_GEMM_ALGO_SPLITK,
	DT_GEMM_ALGO_REDUCTION,
	DT_GEMM_ALGO_SWIZZLE,
	DT_GEMM_ALGO_CUSTOM,
	DT_GEMM_ALGO_STAGES,
	DT_GEMM_ALGO_INNER_SHAPE,
	DT_GEMM_ALGO_CLUSTER_SHAPE,
	DT_GEMM_ALGO_ATTRS
};

/* The matrices, in cublasLtMatmul's order. */
enum { DT_GEMM_A, DT_GEMM_B, DT_GEMM_C, DT_GEMM_D, DT_GEMM_MATS };

/* cublasLtEpilogue_t's bits: what each adds after the product. */
#define DT_GEMM_EPI_RELU   2u
#define DT_GEMM_EPI_BIAS   4u
#define DT_GEMM_EPI_DRELU  8u
#define DT_GEMM_EPI_BGRAD  16u
#define DT_GEMM_EPI_GELU   32u
#define DT_GEMM_EPI_DGELU  64u
#define DT_GEMM_EPI_AUX    128u
#define DT_GEMM_EPI_BGRADA 256u
#define DT_GEMM_EPI_BGRADB 512u

/* A matrix as a cuBLASLt layout describes it: column-major, as stored
 * (before its transpose). */
struct dt_gemm_matrix {
	int32_t type; /* cudaDataType_t, -1 unknown */
	int64_t rows, cols, ld;
	/* elements between the matrices of a strided batch: 0 one matrix
	 * for the whole batch, -1 an array of pointers (cuBLAS's
	 * *Batched calls) */
	int64_t stride;
};

struct dt_gemm_build {
	const char *library; /* whose call it was: "cublas" or "cublaslt" */
	int32_t trans_a, trans_b; /* cublasOperation_t */
	int64_t m, n, k;          /* -1 where the trace lacks a layout */
	int64_t batch;            /* 1 when not batched */
	/* A, B, C, D; a cuBLAS call writes C in place: its D is C's
	 * layout again, in_place set */
	struct dt_gemm_matrix mat[DT_GEMM_MATS];
	bool in_place;
	/* cublasComputeType_t, as cuBLASLt takes it: a cuBLAS call's
	 * FP32 product under the handle's TF32 math mode is
	 * 32F_FAST_TF32 */
	int32_t compute;
	int32_t scale;               /* cudaDataType_t of alpha and beta */
	uint32_t epilogue;           /* cublasLtEpilogue_t; 1: none */
	int32_t bias_type, aux_type; /* cudaDataType_t; -1: D's */
	bool scaled; /* FP8 scale factors of A, B or D were given */
	bool amax;   /* the absolute maximum of D was asked for */
	/* alpha's and beta's real parts as the program passed them on the
	 * host; has_*: false where they were in device memory (not
	 * recorded) */
	bool has_alpha, has_beta;
	double alpha, beta;
	int64_t workspace; /* bytes the program gave, -1 unknown */
	/* the algorithm the program ran: cublasLtMatmul's, or that of
	 * the cuBLASLt matmul a cuBLAS call ran through */
	int64_t algo[DT_GEMM_ALGO_ATTRS];
};

/* The analyzer's type (enum dt_dtype) of a real cudaDataType_t; -1 for
 * a complex one, or one it does not know. */
int64_t dt_gemm_dtype(int32_t type);

/* An algorithm's configuration in the notation ops show its knobs in:
 * "TILE_ID=20 STAGES_ID=35", every attribute known and not 0 but the ID
 * (0 is none, auto or undefined for each), into buf ("" for none). */
const char *dt_gemm_knobs(const int64_t algo[DT_GEMM_ALGO_ATTRS], char *buf,
			  size_t size);

#endif /* DT_GEMM_BUILD_H */
