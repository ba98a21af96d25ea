/*
 * dt-ops.h - an op: one execution of what a call (or a graph replay)
 * computed, with its library, recipe, tensors, engine and kernels; and how
 * views name a library. Part of analyzer/'s public interface; dt-analyzer.h
 * includes every part.
 */
#ifndef DT_OPS_H
#define DT_OPS_H

#include "dt-kernels.h"

/* A device pointer an op reads or writes: a backend variant pack's, by
 * uid, or a legacy call's, by its argument's name. */
struct dt_op_ptr {
	int64_t uid;      /* backend; -1 for legacy */
	const char *name; /* legacy: the argument's name, name_len bytes */
	uint32_t name_len;
	uint64_t value;
};

/* A tensor of an op: its shape and type, its role, and where its data
 * is (dt_op_tensor_ptr()). */
struct dt_op_tensor {
	struct dt_tensor t;
	/* a legacy descriptor argument's name without "Desc" ("x", "dy"),
	 * or a backend tensor attribute's name without its prefix ("X",
	 * "MATMUL_ADESC") */
	char role[64];
	int32_t ptr; /* legacy: its data in the op's ptrs, -1 none; backend:
			-1 (its pointer goes by uid) */
};

/* Where an op's GPU work came from. */
enum dt_op_origin {
	DT_OP_CALL = 0,     /* the call ran it */
	DT_OP_CAPTURED = 1, /* the call put it into a CUDA graph (stream
			       capture, cudnnBackendPopulateCudaGraph or
			       UpdateCudaGraph) and ran nothing itself */
	DT_OP_REPLAY = 2,   /* a launch of such a graph ran it again */
};

/* Execution ids of replays start here; below it, an execution's id is its
 * call's seq. */
#define DT_EXEC_REPLAY (1ull << 62)

/* One operation the program executed: a call that can launch GPU work,
 * or a replay of what such a call captured into a CUDA graph. */
/* One operation of an op's recipe. */
struct dt_recipe_node {
	enum dt_op_kind kind;
	bool training;   /* runs in training mode: a normalization's
			    training phase, a *Training call */
	uint32_t stride; /* a convolution's largest stride, 0 none */
	const char *name; /* its library's name for it ("scale"), where
			     the library's decoder gives one; NULL: its
			     kind says what it is */
};

/* A name and its value: one of an engine's knob choices. */
struct dt_recipe_kv {
	const char *name; /* "TILE_SIZE" */
	int64_t value;
};

/* A parameter of a problem, by the name its library gives it. */
struct dt_recipe_param {
	const char *name; /* "alpha" */
	double value;
};

/* What an op is made of, as its library's decoder read it from the
 * calls: views read this, never the op's description text. */
struct dt_recipe {
	const struct dt_recipe_node *nodes; /* a graph's operations, in its
					       order; a call's one */
	uint32_t n_nodes;
	const struct dt_recipe_kv *knobs; /* the engine's knob choices, as
					     op->knobs lists them */
	uint32_t n_knobs;
	const struct dt_recipe_kv *notes; /* its numerical notes, as
					     op->notes lists them (value:
					     the library's number) */
	uint32_t n_notes;
	const struct dt_recipe_param *params; /* the problem's parameters, as
						 its library names them (a
						 scale's n and alpha) */
	uint32_t n_params;
	/* what its library's decoder keeps to build the problem again on a
	 * GPU (replay/), the struct told by the op's library: cuDNN's,
	 * struct dt_cudnn_graph for a backend execution, struct
	 * dt_cudnn_call for a legacy call (dt-cudnn-build.h); cuBLAS's and
	 * cuBLASLt's, struct dt_gemm_build for a GEMM (dt-gemm-build.h);
	 * NULL where it keeps nothing */
	const void *build;
};

struct dt_op {
	uint64_t seq; /* the API_CALL's seq (a replay: the capturing call's) */
	uint64_t exec; /* this execution: seq for a call's own,
			  DT_EXEC_REPLAY + n for the n-th replay */
	enum dt_op_origin origin;
	uint32_t graph_launch; /* a replay: CUPTI's correlation id of the graph
				  launch, which its kernels carry */
	uint32_t tid;
	uint64_t t_begin; /* host, CLOCK_MONOTONIC ns */
	uint64_t t_end;
	const char *api; /* function name */
	const char *library; /* the library it belongs to ("cudnn"), as the
				trace's API table names it; NULL unknown */
	int32_t status;
	const char *desc;  /* what it computed: tensors, parameters, graph */
	uint32_t plan;     /* backend plan id (1, 2, ... in this trace), 0 for
			      legacy */
	int64_t engine;    /* backend: global engine index; legacy: algo; -1
			      unknown */
	const char *knobs; /* backend: the engine's knob choices, "TILE_SIZE=4
			      KBLOCK=3", or NULL */
	const char *notes; /* backend: numerical notes, "TENSOR_CORE ...", or
			      NULL */
	uint64_t stream;   /* the stream of the handle it ran on (0: default) */
	uint64_t workspace_ptr; /* backend: the variant pack's workspace */
	int64_t workspace;      /* bytes, -1 unknown */
	uint32_t kernels;       /* GPU kernels, copies and sets it launched */
	uint64_t gpu_ns;        /* their summed durations */
	uint64_t gpu_start; /* first start and last end, CLOCK_MONOTONIC ns */
	uint64_t gpu_end;
	const char *first_kernel; /* name of its first kernel, or NULL */
	const struct dt_op_tensor *tensors; /* n_tensors of them, shared by
					       the ops of its problem */
	uint32_t n_tensors;
	const struct dt_op_ptr *ptrs; /* device pointers, in the call's order
					 or the variant pack's; n_ptrs */
	uint32_t n_ptrs;
	const char *problem; /* what it computed, without what cuDNN chose
				(plan, engine, algorithm): ops of one problem
				share it */
	uint64_t problem_id; /* the same for every op of a problem, within
				one model */
	const char *brief;   /* the problem's tensors and parameters,
				compactly */
	const struct dt_recipe *recipe; /* what it is made of; NULL when its
					   library has no decoder or the
					   decoder could not tell */
	uint32_t converts;   /* its layout conversion kernels (by name) */
	uint64_t convert_ns; /* and their summed durations */
	struct dt_cost cost; /* what it must compute and move */
	int tensor_cores;    /* its engine uses them: 1 yes, 0 no, -1 unknown */
	enum dt_math math;   /* the peak it is held against */
	int32_t device;      /* the GPU its first kernel ran on, -1 none */
	uint32_t gpu_stream; /* and CUPTI's id of that kernel's stream */
	/* GPU recording was sampled and this execution ran outside a window
	 * (wholly or in part): its GPU work was not (all) recorded, so its
	 * kernels and times say nothing of it */
	bool unsampled;
};

/* An execution plan was built (a successful finalize). */
struct dt_plan_build {
	uint32_t plan;       /* the id its executions will carry */
	const char *problem; /* its graph, as ops of it will show it; NULL
				unknown */
	const char *brief;
	enum dt_op_kind kind;
	uint64_t t;        /* when (host, CLOCK_MONOTONIC ns) */
	uint64_t host_ns;  /* the finalize call's duration */
	bool restored;     /* from its serialized form, not built from a
			      config */
	const void *build; /* what its library's decoder keeps to build it
			      again, as struct dt_recipe's build; NULL none */
};

/* The device pointer of op's tensor i: the legacy argument that holds its
 * data, or the variant pack's pointer of its uid; 0 when not known. */
uint64_t dt_op_tensor_ptr(const struct dt_op *op, uint32_t i);

/* How views name a library the trace names (dt_api_def.library):
 * "cudnn" -> "cuDNN"; a library the analyzer does not know goes by the
 * trace's name. */
const char *dt_library_display(const char *library);

/* A library's version number v in words, as its INFO key
 * lib.<library>.version holds it: cuDNN's 91900 as 9.19.0, others' as
 * they are ("?" for NULL). */
const char *dt_library_version(const char *library, const char *v, char *buf,
			       size_t size);

/* A call's status in words: cuDNN's by its name (library NULL: a trace
 * of cuDNN alone), another library's as its number. */
const char *dt_library_status(const char *library, int64_t status, char *buf,
			      size_t size);

/* A library the trace wraps (library, as dt_library_display() takes it)
 * that was not loaded and made no recorded call, while kernels of it ran
 * (ns of GPU time in `kernels` kernels, by their names, outside any
 * call): why, in one sentence into buf, as info and report print it
 * after the library's name. NULL when no kernel of it ran. */
const char *dt_static_text(const char *library, uint64_t ns, uint64_t kernels,
			   char *buf, size_t size);

#endif /* DT_OPS_H */
