/*
 * dt-kernels.h - what a kernel's name says: the library it belongs to, its
 * operation family, what fusion chains of it, its precision. Part of
 * analyzer/'s public interface; dt-analyzer.h includes every part.
 */
#ifndef DT_KERNELS_H
#define DT_KERNELS_H

#include "dt-cost.h"

/* The library that launched a kernel, copy or set: cuDNN when a cuDNN call
 * did (a fact of the trace), otherwise what the kernel's name says
 * (dt_lib_of). Copies and sets outside cuDNN calls are the program's own
 * CUDA runtime calls. */
/* What says which library GPU work belongs to. */
enum dt_owner_by {
	DT_BY_CALL,     /* the cuDNN call that launched it */
	DT_BY_RUNTIME,  /* a copy or set the program asked of the runtime */
	DT_BY_MODULE,   /* the library that registered the kernel */
	DT_BY_NAME,     /* the kernel's name */
	DT_BY_NONE,     /* nothing: not attributed */
	DT_BY_COUNT
};
const char *dt_owner_by_key(enum dt_owner_by b); /* "module" */

enum dt_lib {
	DT_LIB_CUDNN,
	DT_LIB_CUBLAS, /* cuBLAS and cuBLASLt, their CUTLASS kernels too */
	DT_LIB_CUTLASS,
	DT_LIB_FLASH,  /* FlashAttention (Dao-AILab) */
	DT_LIB_NCCL,
	DT_LIB_GGML,   /* ggml's CUDA back end (llama.cpp, whisper.cpp) */
	DT_LIB_ATEN,   /* PyTorch's own kernels */
	DT_LIB_TRITON, /* Triton kernels, TorchInductor's among them */
	DT_LIB_XLA,    /* XLA's generated kernels and its runtime's */
	DT_LIB_CUB,    /* CUB and Thrust */
	DT_LIB_RUNTIME, /* copies and sets the program asked of the runtime */
	DT_LIB_OTHER,
	DT_LIB_COUNT
};
const char *dt_lib_name(enum dt_lib l); /* "cuBLAS (cuBLASLt)" */
const char *dt_lib_key(enum dt_lib l);  /* "cublas" */
/* The library a kernel's name (len bytes) says it belongs to. */
enum dt_lib dt_lib_of(const char *name, size_t len);
/* The library a loaded file is (its path, len bytes): libggml-cuda.so is
 * ggml, libtorch_cuda.so ATen...; DT_LIB_OTHER when not known. */
enum dt_lib dt_lib_of_path(const char *path, size_t len);
/* The library GPU work launched inside a call of library (as the trace
 * names it: "cudnn") counts under; DT_LIB_OTHER for one the analyzer does
 * not know. */
enum dt_lib dt_lib_of_library(const char *library);

/* What kind of operation a kernel, copy or set does, as far as its name
 * says: coarser than enum dt_kernel_op, for every library. */
enum dt_opfam {
	DT_OPF_MATMUL,
	DT_OPF_CONV,
	DT_OPF_ATTENTION,
	DT_OPF_NORM,
	DT_OPF_ELEMENTWISE,
	DT_OPF_ROPE,
	DT_OPF_SOFTMAX,
	DT_OPF_COPY,   /* copies, type conversions, layouts, (de)quantizing */
	DT_OPF_GATHER, /* embedding lookups, indexing, scatter */
	DT_OPF_REDUCTION,
	DT_OPF_POOLING,
	DT_OPF_RNN,
	DT_OPF_OPTIMIZER,
	DT_OPF_LOSS,   /* cross entropy, CTC, ... */
	DT_OPF_COMM,   /* collectives and point-to-point */
	DT_OPF_FILL,   /* fills, sets, random numbers */
	DT_OPF_SYNC,   /* waits, delays, an autotuner's checks */
	DT_OPF_OTHER,
	DT_OPF_COUNT
};
const char *dt_opfam_name(enum dt_opfam f); /* "matrix multiplication" */
const char *dt_opfam_key(enum dt_opfam f);  /* "matmul" */
/* The operation family a cuDNN op kind belongs to. */
enum dt_opfam dt_opfam_of_kind(enum dt_op_kind k);
/* The operation family a kernel's name (a NUL-terminated string) says. */
enum dt_opfam dt_opfam_of(const char *name);

/* What a kernel outside cuDNN computes, as far as its name says: the
 * operations the fusion analysis chains. */
enum dt_kernel_op {
	DT_KOP_OTHER,
	DT_KOP_FILL, /* bookkeeping: neither part of a chain nor its end */
	DT_KOP_GEMM,
	DT_KOP_GEMM_TAIL, /* a split-K reduction: part of the GEMM before it */
	DT_KOP_ADD,
	DT_KOP_MUL,
	DT_KOP_RELU,
	DT_KOP_GELU,
	DT_KOP_SILU,
	DT_KOP_SIGMOID,
	DT_KOP_TANH,
	DT_KOP_RELU_BWD,
	DT_KOP_GELU_BWD,
	DT_KOP_SILU_BWD,
	DT_KOP_COPY,
	DT_KOP_BN_STATS,
	DT_KOP_BN_UPDATE,
	DT_KOP_BN_APPLY,
	DT_KOP_BN_BWD_REDUCE,
	DT_KOP_BN_BWD_ELEMT,
	DT_KOP_LAYER_NORM, /* a layer norm's forward, row by row */
	DT_KOP_COUNT
};

/* What a kernel's name says, worked out once per name
 * (analyzer-kernels.c): the one kernel classifier. */
struct dt_kernel_class {
	enum dt_lib lib;
	enum dt_opfam opfam;
	bool matvec; /* a matrix-vector product (one token, one row) */
	enum dt_kernel_op op;
	const char *op_needle; /* the part of the name that says op, or NULL */
	bool layout;           /* converts a layout: dt_layout_kernel() */
	bool tuner;            /* an autotuner's own: dt_tuner_kernel() */
	int tc;          /* runs on tensor cores: 1 yes, 0 no, -1 unknown */
	int8_t dtype;    /* the data type its template arguments name, -1 */
	bool nhwc;       /* "channels_last" in the name */
	bool vectorized; /* PyTorch's vectorized elementwise kernel: whole
			    tensors, no broadcast operand */
	uint32_t per, threads; /* PyTorch's elementwise kernels: items per
				  thread, threads per block (0 unknown) */
	/* set by the model, which keeps one entry per name */
	const char *module; /* the file that registered the kernel with the
			       CUDA runtime (KERNEL_LIB records), NULL when
			       none did */
	bool lib_by_module; /* lib is that file's library, no longer what
			       the name says */
	uint32_t id;      /* the name's number in its model, from 0 */
	uint64_t hash;    /* of the whole name */
	const char *name; /* the name (len bytes and a NUL) */
	uint32_t len;
	/* the name as C++ writes it (_Z11scal_kernelIfEvPT_i ->
	 * "void scal_kernel<float>(float*, int)"): the C++ runtime's
	 * demangler's, or name itself when it is not mangled; NUL-ended */
	const char *demangled;
};

/* Classify a kernel by its name (len bytes; a NUL ends it): everything but
 * the fields the model sets. */
void dt_kernel_classify(const char *name, size_t len,
			struct dt_kernel_class *kc);

/* Whether a kernel is an autotuner's own (XLA's redzone checks and result
 * comparisons). */
bool dt_tuner_kernel(const char *name, size_t len);

/* A mangled name (NUL-ended) as C++ writes it, by the C++ runtime's
 * demangler (libstdc++'s __cxa_demangle): a string to free(), or NULL
 * when the name is not a mangled C++ name. */
char *dt_demangle(const char *name);

/* The function's own name in a kernel's (mangled) name: the last
 * component of its qualified name, without template arguments
 * (_ZN5cudnn16nchwToNhwcKernelIf... -> nchwToNhwcKernel); the whole name
 * when it is not mangled. Points into name; *n gets its length. */
const char *dt_kernel_function(const char *name, size_t len, size_t *n);

/* Whether a kernel's name (len bytes) says it converts a layout: cuDNN's
 * nchwToNhwc and nhwcToNchw, channel padding (nhwcAddPadding), transposes
 * and permutations. */
bool dt_layout_kernel(const char *name, size_t len);

/* Estimated elements a kernel outside cuDNN writes, from its name and
 * launch shape (PyTorch's elementwise kernels); 0 unknown. *granule gets
 * the launch's rounding: the true count is at most that much smaller. */
uint64_t dt_kernel_elems(const char *name, size_t len, int32_t grid_x,
			 int32_t block_x, uint64_t *granule);
/* The same from a kernel's class. */
uint64_t dt_kernel_class_elems(const struct dt_kernel_class *kc, int32_t grid_x,
			       int32_t block_x, uint64_t *granule);

#endif /* DT_KERNELS_H */
