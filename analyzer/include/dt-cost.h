/*
 * dt-cost.h - what an op must compute and move (analyzer/COSTS.md), and the
 * math it is held against. Part of analyzer/'s public interface;
 * dt-analyzer.h includes every part.
 */
#ifndef DT_COST_H
#define DT_COST_H

#include "dt-cudnn.h"

#define DT_MAX_DIMS 8

/* A tensor as the model rebuilt it (legacy descriptor or backend). */
struct dt_tensor {
	bool valid;
	int64_t dtype; /* enum dt_dtype, -1 unknown */
	int nb;
	int64_t dims[DT_MAX_DIMS];
	int64_t strides[DT_MAX_DIMS];
	int64_t uid;
	bool is_virtual;
	bool by_value; /* a host scalar passed by value (e.g. a scale) */
};

/* What an op computes, in the words the report groups GPU time by. */
enum dt_op_kind {
	DT_KIND_OTHER,
	DT_KIND_CONV_FWD,
	DT_KIND_CONV_BWD_DATA,
	DT_KIND_CONV_BWD_FILTER,
	DT_KIND_MATMUL,
	DT_KIND_ATTN_FWD,
	DT_KIND_ATTN_BWD,
	DT_KIND_NORM_FWD,
	DT_KIND_NORM_BWD,
	DT_KIND_POINTWISE,
	DT_KIND_REDUCTION,
	DT_KIND_SOFTMAX,
	DT_KIND_POOLING, /* pooling and resampling */
	DT_KIND_RNN_FWD,
	DT_KIND_RNN_BWD_DATA,
	DT_KIND_RNN_BWD_WEIGHTS,
	DT_KIND_TRANSFORM, /* layout and type conversions, reshapes */
	DT_KIND_DROPOUT,
	DT_KIND_CTC,
	DT_KIND_SEARCH, /* cudnnFind*: every algorithm run and timed */
	DT_KIND_SETUP,  /* not a computation (handle, dropout states) */
	DT_KIND_COUNT
};

/* Which peak rate an op is held against. */
enum dt_math {
	DT_MATH_UNKNOWN,
	DT_MATH_FP64,
	DT_MATH_FP32, /* CUDA cores */
	DT_MATH_TF32, /* FP32 data on tensor cores */
	DT_MATH_FP16,
	DT_MATH_BF16,
	DT_MATH_FP8,
	DT_MATH_INT8,
	DT_MATH_COUNT
};

/* What one execution must compute and move, by the conventions of
 * analyzer/COSTS.md. */
struct dt_cost {
	enum dt_op_kind kind;
	double flops;   /* 0: not counted for this kind */
	uint64_t bytes; /* each non-virtual tensor once; 0: unknown */
	int64_t dtype;  /* its main input's enum dt_dtype, -1 unknown */
	bool tensor_op; /* a kind tensor cores can run */
};

/* Bytes a tensor occupies: its distinct elements (a dimension of stride 0
 * is broadcast, read once) times the element size. 0 for virtual and
 * by-value tensors. */
uint64_t dt_tensor_bytes(const struct dt_tensor *t);

/* The peak an op is held against: tensor-core math by data type for the
 * kinds tensor cores run (FP32 data: TF32 when tensor_cores is 1), else
 * the CUDA cores' rate (FP64 or FP32). tensor_cores: 1 yes, 0 no, -1
 * unknown (taken as no). */
enum dt_math dt_math_of(const struct dt_cost *c, int tensor_cores);

const char *dt_op_kind_name(enum dt_op_kind k); /* "convolution forward" */
const char *dt_op_kind_key(enum dt_op_kind k);  /* "conv_fwd" */
const char *dt_math_name(enum dt_math m);       /* "bf16" */

#endif /* DT_COST_H */
