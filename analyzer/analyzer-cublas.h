/*
 * analyzer-cublas.h - what the cuBLAS and cuBLASLt decoders share: a
 * matrix product (or another BLAS call that computes) as both libraries'
 * calls describe it, and the problems such calls make, each with its
 * description, tensors, recipe and cost. Private to the two decoders
 * (analyzer-cublas.c, analyzer-cublaslt.c); the GEMM itself is
 * analyzer-cublas-gemm.c's. Values are the libraries' own numbers
 * (cudaDataType_t, cublasComputeType_t, cublasLtEpilogue_t), read from
 * the trace: no CUDA header is included.
 */
#ifndef DT_ANALYZER_CUBLAS_H
#define DT_ANALYZER_CUBLAS_H

#include "analyzer-decoder.h"
#include "dt-gemm-build.h"

/* The matrices of a product, in the order of the tables below. */
enum { MAT_A, MAT_B, MAT_C, MAT_D, MATS };

/* What a call computes. */
enum gemm_op {
	GEMM_GEMM, /* D = alpha op(A) op(B) + beta C, with an epilogue */
	GEMM_GEMV, /* y = alpha op(A) x + beta y */
	GEMM_TRSM, /* op(A) X = alpha B (or X op(A)), X over B */
	GEMM_SYRK, /* C = alpha op(A) op(A)^T + beta C, one triangle */
};

/* One call's product, as its decoder read it. Types are cudaDataType_t
 * values, -1 unknown. */
struct gemm {
	enum gemm_op op;
	int32_t trans_a, trans_b; /* cublasOperation_t; trans_b -1: none */
	int32_t side, uplo;       /* trsm, syrk: cublasSideMode_t,
				     cublasFillMode_t; -1 none */
	int64_t m, n, k;
	int64_t batch;        /* 1 when not batched */
	int64_t ld[MATS];     /* 0: none */
	int64_t stride[MATS]; /* elements between the matrices of a
				 strided batch; 0 none, -1 an array of
				 pointers */
	int32_t type[MATS];
	int32_t compute;   /* cublasComputeType_t, -1 unknown */
	int32_t scale;     /* cudaDataType_t of alpha and beta */
	int32_t math;      /* the handle's cublasMath_t, -1 none (a
			      cuBLASLt call) */
	uint32_t epilogue; /* cublasLtEpilogue_t; 0 or 1: none */
	int32_t bias_type; /* -1: D's */
	int32_t aux_type;  /* -1: D's */
	bool scaled;       /* FP8 scale factors for A, B or D given */
	bool amax;         /* the absolute maximum of D computed */
	bool has_alpha, has_beta;
	double alpha, beta; /* their real parts, where recorded */
	/* the algorithm: cublasGemmAlgo_t for cuBLAS (algo[DT_GEMM_ALGO_ID],
	 * -1 its default), or cuBLASLt's attributes */
	int64_t algo[DT_GEMM_ALGO_ATTRS];
	/* a cuBLAS call: the attributes of the algorithm of the cuBLASLt
	 * matmul it ran through (struct gemm_chosen) */
	int64_t lt_algo[DT_GEMM_ALGO_ATTRS];
	uint64_t lt_key; /* that algorithm, while its attributes are not
			    known yet (they may follow: the cuBLASLt
			    decoder's key); 0 otherwise */
	bool from_heuristic;    /* the algorithm came from a heuristic
				   query's results */
	int64_t workspace;      /* bytes given, -1 unknown */
	int64_t workspace_used; /* bytes the algorithm needs, as the
				   heuristic result it came from said; -1 */
};

/* What cuBLASLt chose for a cuBLAS call: the algorithm of a matmul nested
 * in it, the note the cuBLASLt decoder leaves of it for the cuBLAS decoder
 * (m_nested_note()). */
struct gemm_chosen {
	/* DT_GEMM_ALGO_UNKNOWN where not known */
	int64_t algo[DT_GEMM_ALGO_ATTRS];
	uint64_t key; /* the algorithm, for m_op_wait() while not known */
	int64_t workspace_used;   /* as in struct gemm */
	bool from_heuristic;
};

/* A blank product: nothing known. */
void gemm_init(struct gemm *g, enum gemm_op op);

/* The problems of one model: descriptions, tensors, recipes and costs,
 * kept for its life and shared by every op of a problem. */
struct gemm_table;

/* What each decoder's state starts with: the core, the trace, what it
 * worked out of each function of the trace (api: fi->n_apis + 1
 * elements of its own type) and its problems. */
struct gemm_decoder {
	struct dt_model *core;
	const struct dt_file_info *fi;
	void *api;
	struct gemm_table *problems;
};

/* A decoder's state of size bytes (a struct starting with a struct
 * gemm_decoder), zeroed, with api_size bytes per function; NULL when
 * memory is short. Freed with gemm_decoder_free(). */
void *gemm_decoder_new(size_t size, size_t api_size, struct dt_model *core,
		       const struct dt_file_info *fi);
void gemm_decoder_free(void *state);

/* Make call c an op of g: described, costed, grouped with the ops of
 * the same problem (shapes, types, scalars, epilogue) and with those of
 * the same algorithm. ptrs are the call's device pointers of A, B, C and
 * D (0 unknown; D's is C's for cuBLAS); stream its handle's or the
 * call's. NULL when out of memory. */
struct pending *gemm_op_new(struct dt_model *core, struct gemm_table *t,
			    const struct dt_rec_api_call *c, const char *api,
			    const struct gemm *g, const uint64_t ptrs[MATS],
			    uint64_t stream);

/* The product op p was made of: p must be an op gemm_op_new() made. */
const struct gemm *gemm_of(const struct pending *p);
/* Describe p again as g (its algorithm became known since). */
void gemm_op_redo(struct gemm_table *t, struct pending *p,
		  const struct gemm *g);

/* An integer argument's value, or def when it is not there. */
int64_t gemm_arg_i(const struct dt_arg *args, int n, const char *name,
		   int64_t def);
/* The analyzer's type (enum dt_dtype) of a scale type (cudaDataType_t),
 * complex ones included; -1 when it is none it knows. */
int64_t gemm_scale_dtype(int32_t scale);

/* A scalar's real part, read in the scale type (cudaDataType_t; -1
 * unknown): a host scalar ('k'), or one under a host pointer mode ('m');
 * false when its value was not recorded (in device memory). */
bool gemm_scalar(const struct dt_arg *a, int32_t scale, double *v);
/* A cudaDataType_t value's element size in bits, 0 unknown. */
int gemm_type_bits(int32_t type);

#endif /* DT_ANALYZER_CUBLAS_H */
