/*
 * dt-analyzer.h - turning trace records into meaning: the one public
 * header of analyzer/.
 *
 * In order: decoding a call's arguments with the signature its trace
 * recorded (trace/FORMAT.md, "Call arguments"); cuDNN's names and data
 * types; costs; what kernel names say; ops; the session, through which
 * every view reads a trace; and the views the analyzer computes for the
 * commands: the summary (`report`), fusion opportunities and the diff of
 * two runs. analyzer/README.md says how these fit together. Includes no
 * CUDA header: a trace is analyzed with only what the trace itself says.
 */
#ifndef DT_ANALYZER_H
#define DT_ANALYZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dt-trace.h"

/* One decoded argument. */
struct dt_arg {
	const char *name; /* points into the signature; name_len bytes */
	uint32_t name_len;
	const char *type; /* element type after '=', or NULL; type_len bytes */
	uint32_t type_len;
	bool out;            /* value stored by the callee ('>') */
	char code;           /* 'i' 'u' 'f' 'e' 'p' scalars; 'a' array;
				'x' bytes; 'k' host scalar; 's' string */
	char elem;           /* for 'a': the element's code */
	uint8_t width;       /* scalar or array element width in bytes */
	uint64_t u;          /* scalar value, zero-extended */
	int64_t i;           /* scalar value, sign-extended */
	double f;            /* 'f' scalars */
	const uint8_t *data; /* 'a' 'x' 'k' 's': the bytes */
	uint32_t count;      /* 'a': elements; 'x' 'k' 's': bytes */
};

struct dt_args_iter {
	const char *sig;
	const uint8_t *p;
	const uint8_t *end;
};

void dt_args_begin(struct dt_args_iter *it, const char *sig,
		   const uint8_t *args, uint32_t len);

/* Decode the next argument: 1 with *a filled, 0 after the last one, -1
 * when the signature or the bytes are malformed (bytes left over, or too
 * few for the signature). */
int dt_args_next(struct dt_args_iter *it, struct dt_arg *a);

/* A signature parsed once, for decoding many calls of one API quickly:
 * each argument's name, type and layout, without values. */
struct dt_sig {
	int n;
	struct dt_arg proto[];
};

/* Parse sig; NULL when it is malformed (or memory is short). Free with
 * free(). */
struct dt_sig *dt_sig_parse(const char *sig);

/* Decode a call's argument bytes with s into out[0..n): returns n, or -1
 * when the bytes do not match (too few, or some left over) or max < n. */
int dt_sig_decode(const struct dt_sig *s, const uint8_t *args, uint32_t len,
		  struct dt_arg *out, int max);

/* The same into out[0..n) that an earlier dt_sig_decode() with s filled:
 * names and types are there already, only the values are decoded. */
int dt_sig_decode_values(const struct dt_sig *s, const uint8_t *args,
			 uint32_t len, struct dt_arg *out);

/* Print a's value the way `dnntrace dump` shows it (no name). Returns the
 * length snprintf would have written. */
int dt_arg_format(const struct dt_arg *a, char *buf, size_t size);

/* A 'k' argument's value for display when the call's data type is not at
 * hand: the double reading when the bytes look like a double, else the
 * float reading. Analyses that know the data type pick it themselves. */
double dt_hostscalar_guess(const struct dt_arg *a);

/* Element i of an 'a' argument, as signed or unsigned 64-bit. */
int64_t dt_arg_elem_i(const struct dt_arg *a, uint32_t i);
uint64_t dt_arg_elem_u(const struct dt_arg *a, uint32_t i);

/* ----------------------------------------------------- cuDNN's names */

/* One enumerator of a cuDNN enum type; the table (cudnn-enums.c) is
 * generated from the cuDNN headers and sorted by type, then value. */
struct dt_enum_name {
	const char *type;
	const char *name;
	int64_t value;
};
extern const struct dt_enum_name dt_cudnn_enums[];
extern const size_t dt_cudnn_enums_count;

/* The name of value in enum `type` (type_len bytes), or NULL. */
const char *dt_enum_name(const char *type, size_t type_len, int64_t value);

/* The name of value in enum `type` without the prefix `strip` (when it
 * has it) into buf, or the number when the enum has no such value;
 * returns buf. */
const char *dt_enum_short(const char *type, int64_t value, const char *strip,
			  char *buf, size_t size);

/* The value of enumerator `name` of enum `type`, or def when there is
 * none. */
int64_t dt_enum_value(const char *type, const char *name, int64_t def);

/* cuDNN's data types: cudnnDataType_t values, which are part of cuDNN's
 * ABI. The analyzer's one table of them (analyzer-cudnn.c) holds each
 * type's name and size; a test checks it against the generated table of
 * enum names. */
enum dt_dtype {
	DT_DTYPE_FLOAT = 0,
	DT_DTYPE_DOUBLE = 1,
	DT_DTYPE_HALF = 2,
	DT_DTYPE_INT8 = 3,
	DT_DTYPE_INT32 = 4,
	DT_DTYPE_INT8x4 = 5,
	DT_DTYPE_UINT8 = 6,
	DT_DTYPE_UINT8x4 = 7,
	DT_DTYPE_INT8x32 = 8,
	DT_DTYPE_BFLOAT16 = 9,
	DT_DTYPE_INT64 = 10,
	DT_DTYPE_BOOLEAN = 11,
	DT_DTYPE_FP8_E4M3 = 12,
	DT_DTYPE_FP8_E5M2 = 13,
	DT_DTYPE_FAST_FLOAT_FOR_FP8 = 14,
	DT_DTYPE_FP8_E8M0 = 15,
	DT_DTYPE_FP4_E2M1 = 16,
	DT_DTYPE_INT4 = 17,
	DT_DTYPE_UINT4 = 18,
	DT_DTYPE_UINT32 = 19,
	DT_DTYPE_COMPLEX_FP32 = 20,
	DT_DTYPE_COMPLEX_FP64 = 21,
	DT_DTYPE_COUNT
};

/* A data type's name without CUDNN_DATA_ ("BFLOAT16") in buf, or its
 * number when cuDNN defines no such type (a newer cuDNN's); "?" for a
 * negative one (not known). Returns buf or a static string. */
#define DT_DTYPE_NAME_SIZE 40
const char *dt_dtype_name(int64_t dtype, char *buf, size_t size);

/* The data type of that name ("BFLOAT16", or "CUDNN_DATA_BFLOAT16"), or -1. */
int64_t dt_dtype_by_name(const char *name, size_t len);

/* Bits of one element, 0 for an unknown type. */
int dt_dtype_bits(int64_t dtype);

/* The cudnnStatus_t's name, or NULL for a value cuDNN does not define. */
const char *dt_status_name(int64_t status);
/* The same for printing: its name, or the number for a status cuDNN
 * does not define (a newer cuDNN's) in buf; returns one or the other. */
const char *dt_status_str(int64_t status, char *buf, size_t size);

/* A function's name without "cudnn" ("ConvolutionForward"), or the
 * name itself when it has no such prefix (a trace may name anything). */
const char *dt_api_short(const char *name);

/*
 * Print a call's arguments as `dnntrace dump` shows them: name=value,
 * enums by name, and the payloads of cudnnBackendSetAttribute and
 * cudnnBackendGetAttribute decoded by their attribute type. Returns the
 * length snprintf would have written, or -1 when the bytes do not match the
 * signature.
 */
int dt_call_format(const char *api_name, const char *sig, const uint8_t *args,
		   uint32_t len, char *buf, size_t size);

/* The same from arguments decoded already (n of them). */
int dt_args_format(const char *api_name, const struct dt_arg *args, int n,
		   char *buf, size_t size);

/* The value of argument i of those (no name), as dt_args_format() prints
 * it: enums by name, backend attribute payloads decoded. Returns the length
 * snprintf would have written. */
int dt_arg_value_format(const char *api_name, const struct dt_arg *args,
			int n, int i, char *buf, size_t size);

/* A backend attribute payload of n bytes, decoded by its
 * cudnnBackendAttributeType_t (enums by name, arrays in brackets). Returns
 * the length snprintf would have written, -1 for an unknown type or a size
 * that is not a whole number of elements. */
int dt_backend_payload_format(int64_t type, const uint8_t *p, uint32_t n,
			      char *buf, size_t size);

/* Appends with snprintf's semantics but without printf, for the printers
 * that run once per record (dump): s (n bytes), a number in decimal, or in
 * hex with "0x". `len` counts what was written, or would have been. */
static inline void dt_put(char *buf, size_t size, int *len, const char *s,
			  size_t n)
{
	if ((size_t)*len + 1 < size) {
		size_t room = size - (size_t)*len - 1;
		size_t k = n < room ? n : room;
		memcpy(buf + *len, s, k);
		buf[*len + (int)k] = 0;
	}
	*len += (int)n;
}

static inline void dt_put_s(char *buf, size_t size, int *len, const char *s)
{
	dt_put(buf, size, len, s, strlen(s));
}

static inline void dt_put_u64(char *buf, size_t size, int *len, uint64_t v)
{
	char tmp[20];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	dt_put(buf, size, len, tmp + i, sizeof(tmp) - i);
}

static inline void dt_put_i64(char *buf, size_t size, int *len, int64_t v)
{
	if (v < 0) {
		dt_put(buf, size, len, "-", 1);
		dt_put_u64(buf, size, len, (uint64_t)0 - (uint64_t)v);
	} else {
		dt_put_u64(buf, size, len, (uint64_t)v);
	}
}

static inline void dt_put_hex(char *buf, size_t size, int *len, uint64_t v)
{
	char tmp[18];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	dt_put(buf, size, len, tmp + i, sizeof(tmp) - i);
}

/* Human-readable byte count ("1.5 MiB") and duration ("12.3 us"), into
 * buf; returns buf. */
const char *dt_fmt_bytes(uint64_t n, char *buf, size_t size);
const char *dt_fmt_ns(uint64_t ns, char *buf, size_t size);

/* A version number as cuDNN (91900 -> "9.19.0", 8907 -> "8.9.7") or CUDA
 * (13000 -> "13.0") gives it; the text itself when it is no number. */
const char *dt_fmt_cudnn_version(const char *v, char *buf, size_t size);
const char *dt_fmt_cuda_version(const char *v, char *buf, size_t size);

/* ----------------------------------------------------------- costs */

#define DT_MAX_DIMS 8

/* A tensor as the model rebuilt it (legacy descriptor or backend). */
struct dt_tensor {
	bool valid;
	int64_t dtype; /* cudnnDataType_t, -1 unknown */
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
	int64_t dtype;  /* its main input's cudnnDataType_t, -1 unknown */
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

/* ------------------------------------------------------------ kernels */

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

/* --------------------------------------------------------------- ops */

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
	uint64_t t;       /* when (host, CLOCK_MONOTONIC ns) */
	uint64_t host_ns; /* the finalize call's duration */
};

/* The device pointer of op's tensor i: the legacy argument that holds its
 * data, or the variant pack's pointer of its uid; 0 when not known. */
uint64_t dt_op_tensor_ptr(const struct dt_op *op, uint32_t i);

/* --------------------------------------------------------- the session */

/*
 * A session is one trace opened for analysis: its reader, the model that
 * replays its cuDNN calls, and the conversion of GPU times to the host's
 * clock. dt_session_run() reads the trace once and hands every consumer
 * the same structured events: calls, GPU activity, devices, GPU-state
 * changes and other records in file order, and op executions (with their
 * tensors, engine and kernels) in call order once their kernels are in.
 * The model is the only code that reads records; every view (report,
 * fusion, diff, ops, info, dump) is a consumer. analyzer/README.md says
 * more.
 */

/* One call into cuDNN. */
struct dt_call {
	uint64_t seq; /* process-wide call order, from 1 */
	uint32_t tid;
	uint16_t api;     /* its id in the trace's API table */
	uint16_t flags;   /* DT_CALL_* */
	const char *name; /* the function, NULL when the table lacks it */
	const char *sig;  /* its argument signature (trace/FORMAT.md) */
	uint64_t t_begin, t_end; /* host, CLOCK_MONOTONIC ns */
	int32_t status;          /* cudnnStatus_t returned */
	const uint8_t *args;     /* the argument bytes (dt_call_format()) */
	uint32_t args_len;
	const struct dt_arg *argv;    /* the same decoded (dt_args_format()), */
	int argc;                     /* argc of them; -1 when they do not
					 match the signature */
	const struct dt_rec_hdr *rec; /* the record */
};

enum dt_activity_kind { DT_ACT_KERNEL, DT_ACT_MEMCPY, DT_ACT_MEMSET };

/* GPU work: a kernel, a copy or a set. */
struct dt_activity {
	enum dt_activity_kind kind;
	bool timed; /* CUPTI gave it times (start and end are 0 if not) */
	uint64_t start, end;         /* host clock (CLOCK_MONOTONIC ns) */
	uint64_t gpu_start, gpu_end; /* as recorded, on CUPTI's clock */
	uint64_t call; /* the cuDNN call that launched it (its seq), 0 for
			  work launched outside cuDNN; a kernel replayed
			  from a CUDA graph: the call that made its node */
	uint64_t exec; /* the op execution it belongs to (dt_op.exec), 0 for
			  none */
	uint32_t corr; /* CUPTI's correlation id of the launch */
	uint32_t device, context, stream;
	uint64_t bytes; /* copies and sets */
	uint8_t copy_kind; /* copies: CUPTI's direction (dt_copy_kind_name) */
	/* kernels: what the name says (NULL only when memory is short),
	 * and the record, for the launch shape */
	const struct dt_kernel_class *kc;
	const struct dt_rec_kernel *kernel;
	const struct dt_rec_hdr *rec; /* the record */
};

/* A copy's direction (CUPTI's CUpti_ActivityMemcpyKind, as MEMCPY records
 * carry it): "HtoD", "DtoH", "DtoD", "PtoP", ...; NULL for a value CUPTI
 * does not name (0 is its "unknown"). */
const char *dt_copy_kind_name(uint32_t kind);

/* A GPU as CUPTI described it. */
struct dt_device {
	uint32_t id;
	char name[96];
	uint32_t cc_major, cc_minor;
	uint32_t sms;
	uint32_t clock_khz;
	uint64_t mem_bandwidth_kBps;
	uint64_t global_mem;
	uint32_t l2_size;
	const struct dt_rec_hdr *rec; /* the record */
};

/* GPU recording switched on, off, taken by another profiler, resumed. */
struct dt_gpu_change {
	uint64_t t;       /* host, CLOCK_MONOTONIC ns */
	uint32_t state;   /* DT_GPU_* */
	bool recording;   /* GPU activity is recorded from here on: on,
			     resumed, or a sampling window opened */
	int32_t code;     /* CUptiResult or errno behind it */
	uint64_t dropped; /* records CUPTI dropped so far */
	const char *why;  /* in words, why_len bytes */
	uint32_t why_len;
	const struct dt_rec_hdr *rec; /* the record */
};

/* A host thread, named (the shim's THREAD record). */
struct dt_thread {
	uint64_t t;       /* when it was first seen, CLOCK_MONOTONIC ns */
	uint32_t tid;
	uint32_t name_len;
	const char *name; /* name_len bytes, not terminated */
	const struct dt_rec_hdr *rec; /* the record */
};

/* Records a thread (or CUPTI) dropped since its last loss (a LOSS
 * record). */
struct dt_loss {
	uint64_t t;       /* host, CLOCK_MONOTONIC ns */
	uint64_t count;
	uint32_t tid;
	uint32_t reason;  /* DT_LOSS_* */
	const struct dt_rec_hdr *rec; /* the record */
};

/* A CUDA graph launched (recorded with CUPTI's launch API records): its
 * kernels carry its correlation id. */
struct dt_graph_launch {
	uint64_t start, end; /* host clock (CLOCK_MONOTONIC ns) */
	uint32_t corr;       /* CUPTI's correlation id */
	uint32_t cupti_tid;  /* CUPTI's id of the launching thread (not the
				system's thread id calls carry) */
	const struct dt_rec_hdr *rec; /* the record */
};

/* One sample of the GPU's counters (record --gpu-metrics): device-wide,
 * over [start, end). */
struct dt_gpu_sample {
	uint64_t start, end; /* host clock (CLOCK_MONOTONIC ns) */
	uint32_t device;
	uint32_t n;               /* values, as many as names */
	const double *v;          /* valid during the call */
	const char *const *names; /* "dram__bytes_read.sum", ...: live as
				     long as the session */
	const struct dt_rec_hdr *rec; /* the record */
};

/* What the GPU's counters are sampled for (record --gpu-metrics), or why
 * they are not; or, at the end, what sampling lost. */
struct dt_gpu_metrics {
	uint32_t device;
	uint32_t interval_ns;
	uint32_t n;               /* metrics sampled: 0 when off (or lost) */
	const char *const *names; /* n of them, living as long as the session */
	const char *text;         /* "off: why" or "lost: ..." when n is 0 */
	uint32_t text_len;
	const struct dt_rec_hdr *rec; /* the record */
};

/* Index of metric `name` in a sample, or -1. */
int dt_gpu_sample_metric(const struct dt_gpu_sample *s, const char *name);

/* What a view is called with. Any callback may be NULL; arg is passed
 * back. Pointers in an event are valid during the call only, but for the
 * strings and tensors of an op, its kernel class and the device, which
 * live as long as the session. */
struct dt_consumer {
	void *arg;
	void (*call)(void *arg, const struct dt_call *c);
	void (*activity)(void *arg, const struct dt_activity *a);
	void (*device)(void *arg, const struct dt_device *d);
	void (*gpu_state)(void *arg, const struct dt_gpu_change *g);
	/* a thread named; records lost */
	void (*thread)(void *arg, const struct dt_thread *t);
	void (*loss)(void *arg, const struct dt_loss *l);
	/* every other record (threads and losses too, processes, clocks,
	 * correlations, strings, the end summary, unknown types), as it is */
	void (*record)(void *arg, const struct dt_rec_hdr *rec);
	/* an op execution, once its kernels are in, in call order */
	void (*op)(void *arg, const struct dt_op *op);
	/* an execution plan built */
	void (*plan)(void *arg, const struct dt_plan_build *b);
	/* a CUDA graph launched */
	void (*graph_launch)(void *arg, const struct dt_graph_launch *l);
	/* what the GPU's counters are sampled for, and each sample */
	void (*gpu_metrics)(void *arg, const struct dt_gpu_metrics *g);
	void (*gpu_sample)(void *arg, const struct dt_gpu_sample *s);
};

/* CUDA graphs in a trace (or in several, summed). */
struct dt_graph_stats {
	uint64_t kernels;    /* kernels launched by CUDA graphs */
	uint64_t attributed; /* of which traced to the cuDNN call that made
				their node */
	uint64_t unknown;    /* of which from executable graphs whose origin
				the trace does not hold, while cuDNN calls did
				make graph nodes: cuDNN's among them are
				unattributed */
	uint64_t mismatch;   /* traced to a node whose kernel had another
				name: left unattributed */
	uint64_t unresolved; /* ran in a child graph whose nodes the trace
				does not tie to calls (copied before the
				trace saw them): cuDNN's among them are
				unattributed */
	uint64_t captured;   /* calls that put work into graphs */
	uint64_t replays;    /* op executions replayed from graphs */
	uint64_t partial;    /* of which some kernels never came */
	uint64_t launches;   /* graph launches (GRAPH_LAUNCH) */
	uint64_t launched;   /* graph launches their kernels show (distinct
				correlation ids), when launches were not
				recorded */
	uint64_t launch_ns;  /* their host time */
	uint64_t nodes;      /* GRAPH_NODE records */
};

/* sum += g */
void dt_graph_stats_add(struct dt_graph_stats *sum,
			const struct dt_graph_stats *g);

/* What the model made of a trace, beside its events. */
/* Execution plans: built from an engine config, or restored from their
 * JSON representation (a program's plan cache). */
struct dt_plan_stats {
	uint64_t built;        /* finalized from an engine config */
	uint64_t restored;     /* restored, their graph read from the JSON */
	uint64_t opaque;       /* restored, but the JSON gave no graph (cut
				  short, another schema version,
				  unreadable): their executions say why */
	uint64_t unknown_runs; /* executions of plans whose graph the trace
				  does not hold (opaque ones' too) */
};

/* Sampled GPU recording (record --gpu-sample): one window of window_ms
 * in one_in (0: not sampled), the windows seen, the host time they
 * covered, and the op executions that ran outside them. */
struct dt_gpu_sampling {
	uint32_t one_in, window_ms;
	uint64_t windows, window_ns, unsampled_ops;
};

struct dt_model_stats {
	uint64_t calls;           /* API calls, dnntrace's own too */
	uint64_t own_calls;       /* of which dnntrace's own (its plan
				     queries, DT_CALL_BY_DNNTRACE) */
	uint64_t ops;             /* op executions */
	uint64_t undecoded;       /* calls whose arguments did not decode */
	uint64_t kernels;         /* kernel records (untimed ones too) */
	uint64_t untimed;         /* kernels CUPTI could not time */
	uint64_t copies;          /* copies and sets */
	uint64_t launches;        /* CUDA calls tied to cuDNN calls (CORR) */
	uint64_t threads;         /* threads seen (THREAD records) */
	uint64_t other_kernels;   /* kernels launched outside any cuDNN call */
	uint64_t late_kernels;    /* kernels that came after their op was out */
	uint64_t t_first, t_last; /* first and last host time seen (calls,
				     GPU work on the host clock) */
	struct dt_graph_stats graphs;
	struct dt_plan_stats plans;
	/* records lost by why (DT_LOSS_*), from the LOSS records read: what
	 * the file ended with (dt_file_stats.lost) is the total */
	uint64_t lost_by[DT_LOSS_CUPTI + 1];
	/* the GPU recording state once it was known: the header's "gpu",
	 * or the first GPU_STATE record's words when the header's said
	 * "unknown" (the file was opened before CUPTI was started) */
	char gpu_state[512];
	/* the GPU's counters sampled (record --gpu-metrics): "" not asked,
	 * "on: <metrics> every <interval>", or "off: why"; and what the
	 * sampling lost ("" nothing) */
	char gpu_metrics[256];
	char gpu_metrics_lost[160];
	uint64_t gpu_samples;
	uint64_t kernel_registrations; /* kernels libraries registered with
					  the CUDA runtime (KERNEL_LIB) */
	struct dt_gpu_sampling sampling;
};

/* The program's NVTX ranges and marks (trace/FORMAT.md, "NVTX ranges"). */
enum dt_range_kind {
	DT_RANGE_PUSH,  /* push/pop: a range of one thread, nested */
	DT_RANGE_START, /* start/end: may end on another thread */
	DT_RANGE_MARK,  /* an instant */
};

/* One range, once closed, or a mark. */
struct dt_range {
	enum dt_range_kind kind;
	const char *name;   /* its message ("(string N, not in the trace)"
			       when the trace lacks it) */
	const char *domain; /* its domain's name; NULL: the default domain */
	uint32_t category;  /* the program's number, 0 for none */
	uint32_t tid;       /* the thread that opened it */
	uint32_t end_tid;   /* the thread that closed it */
	uint32_t depth;     /* PUSH, MARK: ranges open around it on its
			       thread; START: 0 */
	uint64_t t_begin, t_end; /* host, CLOCK_MONOTONIC ns; equal for a
				    mark */
};

/* Ranges of one name and domain, and the work done inside them: by calls
 * made inside an instance (a push range's on its thread, a start/end
 * range's on any thread), and the GPU work tied to those calls (kernels,
 * copies and sets they launched; not a CUDA graph's later replays of
 * it). Work launched outside the recorded library calls is not tied to
 * calls, nor to ranges. A call inside nested instances of one name counts
 * once for it. */
struct dt_range_stat {
	const char *name, *domain;
	uint64_t count;   /* instances closed */
	uint64_t open;    /* instances the trace never closed */
	uint64_t host_ns; /* the closed instances' durations, summed */
	uint64_t calls;
	uint64_t kernels; /* GPU work of those calls */
	uint64_t gpu_ns;  /* its durations, summed */
};

struct dt_session_opts {
	/* ops carry their device pointers (ptrs, workspace_ptr): what an
	 * analysis of the dataflow, or the op listing, needs */
	bool pointers;
	/* hand consumers only the work inside NVTX ranges whose name matches
	 * this shell pattern (fnmatch; a plain name matches every range of
	 * that name): the calls made inside them, their ops and the GPU
	 * work tied to those calls. Other records are handed out whole.
	 * NULL: everything. */
	const char *range;
	/* called now and then while reading: bytes read, and in all */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

struct dt_session;

/* Open the trace at path (or in memory: not copied, keep it alive) and
 * read its header. NULL on failure, with a dt_read_error in *code (when
 * code is not NULL) and a sentence naming the file in err. */
struct dt_session *dt_session_open(const char *path,
				   const struct dt_session_opts *opts,
				   int *code, char *err, size_t errlen);
struct dt_session *dt_session_open_mem(const void *data, size_t size,
				       const struct dt_session_opts *opts,
				       int *code, char *err, size_t errlen);

/* Add a consumer (copied); at most 8. Returns 0, -1 when full. */
int dt_session_add(struct dt_session *s, const struct dt_consumer *c);

/* Read the trace through, handing out events. Once. */
void dt_session_run(struct dt_session *s);

/* Who wrote the trace: the header's identity facts and API table. */
const struct dt_file_info *dt_session_info(const struct dt_session *s);

/* How the file ended, what was read and lost: complete after run. */
const struct dt_file_stats *dt_session_file(const struct dt_session *s);

/* What the model counted: complete after run. */
const struct dt_model_stats *dt_session_stats(const struct dt_session *s);

/* The damaged ranges the reader skipped, in file order (*n of them; the
 * first 64, dt_session_file()'s skips counts them all). */
const struct dt_skip *dt_session_skips(const struct dt_session *s, size_t *n);

/* The path it was opened with ("(memory)" for a buffer). */
const char *dt_session_path(const struct dt_session *s);

/* After run: the NVTX ranges and marks, in the order they closed; and the
 * ranges by name and domain, most GPU time first. Owned by the session. */
const struct dt_range *dt_session_ranges(const struct dt_session *s, size_t *n);
const struct dt_range_stat *dt_session_range_stats(const struct dt_session *s,
						   size_t *n);

/* Close; the events' strings go with it. */
void dt_session_close(struct dt_session *s);

/* "RANK=3": the first rank variable (RANK, OMPI_COMM_WORLD_RANK, ...) the
 * process had, malloc'ed; NULL when none. */
char *dt_rank_of(const struct dt_file_info *fi);

/* How a file ended, as a phrase ("clean", "truncated", ...), and as a
 * key for JSON ("clean", "no_end", "truncated", "corrupt", "damaged"). */
const char *dt_file_end_name(enum dt_file_end end);
const char *dt_file_end_key(enum dt_file_end end);

/* Whether a trace holds everything its process did: read to its end with
 * nothing skipped or cut short, and no record lost by the writer or
 * dropped by CUPTI. What every view calls complete, and what a CI gate
 * asks of its inputs before it judges them. */
bool dt_trace_complete(const struct dt_file_stats *st);

/* How a trace ended, in one line: its end, what was skipped or cut and
 * how many records are missing ("clean", "truncated: ..."). Returns
 * buf. */
const char *dt_file_end_text(const struct dt_file_stats *st, char *buf,
			     size_t size);

/* What the writer lost, in words: "0 records", "1234 records (1000 the
 * file could not take them: disk full or size limit; 234 buffers full)",
 * with "at least" when the count is a lower bound (the file has no end
 * summary); verb (" lost", or "") follows the count. ms may be NULL (no
 * reasons then). Returns buf. */
const char *dt_lost_text(const struct dt_file_stats *st,
			 const struct dt_model_stats *ms, const char *verb,
			 char *buf, size_t size);

/* "driver 13.0, runtime 13.0" from a trace's header; the driver is "none
 * loaded" when the process had no CUDA driver. NULL when the header says
 * nothing of CUDA. */
const char *dt_cuda_text(const struct dt_file_info *fi, char *buf,
			 size_t size);

/* ---------------------------------------------------------- fusion */

/*
 * Chains of GPU work that one cuDNN graph could run fused.
 *
 * A run's dataflow, rebuilt per stream from what the trace holds: cuDNN
 * operations (linked through their device pointers) and the kernels of
 * other libraries between them (linked by their order on the stream and the
 * element counts their launch shapes give). Chains are matched against the
 * fusion patterns cuDNN documents, checked against their limits (layout,
 * data type, compute capability, alignment), and priced: the GPU time of
 * the kernels that would disappear, and the DRAM bytes no longer moved, as
 * time at the run's achieved streaming bandwidth. analyzer/FUSION.md
 * describes the rules.
 *
 * Streams the trace: memory holds the nodes of the last few seconds of GPU
 * time per stream and the distinct chains found.
 */

/* How a step is tied to the step before it. */
enum dt_fz_link {
	DT_LINK_NONE,    /* the chain's first step */
	DT_LINK_POINTER, /* it reads the buffer the step before wrote */
	DT_LINK_SIZE,    /* next on the stream, same element count */
	DT_LINK_ORDER,   /* next on the stream; its size is not known */
};
const char *dt_fz_link_name(enum dt_fz_link l); /* "pointer" */

#define DT_FZ_STEPS 8

struct dt_fz_step {
	char *what;     /* "convolution forward", "bias/residual add", "ReLU" */
	char *detail;   /* the cuDNN op's tensors, or the kernel's function */
	int64_t dtype;  /* cudnnDataType_t of what it writes, -1 unknown */
	uint64_t elems; /* elements it writes, 0 unknown */
	enum dt_fz_link link;
	bool cudnn;   /* a cuDNN operation (else another library's kernel) */
	bool removed; /* its kernels disappear when the chain is fused */
	char *kernel; /* outside cuDNN: the kernel's whole name, else NULL */
	int32_t grid_x, block_x; /* and its launch shape */
	uint64_t kernels, ns;    /* over every occurrence */
};

enum dt_fz_status {
	DT_FZ_FUSABLE,
	DT_FZ_BLOCKED, /* a documented limit rules it out: see blocked */
};

struct dt_fz_opp {
	char *key;     /* pattern and steps: occurrences of one chain */
	char *pattern; /* "convolution + pointwise epilogue" */
	char *cover;   /* the cuDNN graph or engine that runs it fused */
	enum dt_fz_status status;
	char *blocked; /* why not, when blocked */
	char *checks;  /* the limits checked, "layout NHWC: ok; ..." */
	char *note;    /* what else to know, or NULL */
	int32_t device;
	uint64_t count; /* occurrences */
	struct dt_fz_step steps[DT_FZ_STEPS];
	int n_steps;
	/* one occurrence: bytes no longer moved, and bytes the fused kernel
	 * moves that the kernels it replaces did not */
	uint64_t bytes_saved, bytes_added;
	/* totals over the occurrences, settled by dt_fusion_finish() */
	uint64_t removed_kernels, removed_ns;
	double saving_ns; /* removed_ns less bytes_added at the bandwidth */
	double bytes_ns;  /* bytes_saved at the bandwidth */
};

/* Work that already runs fused: cuDNN graphs of several operations, and
 * attention, whose score matrix never leaves the chip. */
struct dt_fz_fused {
	char *key; /* its problem */
	char *what;
	char *brief;
	uint32_t graph_ops; /* operations in its graph */
	uint64_t count, ns;
	uint64_t bytes_kept; /* one execution: intermediates kept on chip */
	double bytes_ns;     /* all executions', at the bandwidth */
};

struct dt_fusion {
	/* the bandwidth savings are priced at: the run's streaming kernels'
	 * (bytes over time), else the device's peak, else an override */
	double bandwidth;
	char bandwidth_source[200];
	double bandwidth_override; /* bytes/s; 0 none */
	uint64_t stream_bytes, stream_ns, stream_kernels;
	double peak_bandwidth; /* of the first device seen, 0 unknown */
	uint64_t nodes;        /* kernels and cuDNN ops looked at */

	struct dt_fz_opp *opps; /* by saving, largest first, once finished */
	size_t n_opps;
	struct dt_fz_fused *fused; /* by GPU time, largest first */
	size_t n_fused;

	void *priv;
};

struct dt_fusion *dt_fusion_new(void);
void dt_fusion_free(struct dt_fusion *fz);

/* A trace begins: the analysis adds itself to the session's consumers (the
 * session must give ops their pointers: dt_session_opts.pointers), and
 * dt_fusion_end_file() closes it once the session has run. */
void dt_fusion_begin_file(struct dt_fusion *fz, struct dt_session *ss);
void dt_fusion_end_file(struct dt_fusion *fz);

/* Every trace is in: price the chains and sort them. */
void dt_fusion_finish(struct dt_fusion *fz);

/* --------------------------------------------------------- summary */

/*
 * One or more traces summed up: where the GPU time went, the operations
 * grouped by problem with their rates against the device's peaks, host
 * time per cuDNN function, and findings with their cost.
 *
 * `dnntrace report` prints it; `dnntrace diff` compares two of them. A
 * summary streams its traces (memory grows with the distinct problems,
 * functions and kernel names, and 8 bytes per op execution for medians).
 */

/* Peak rates an op is held against. */
struct dt_peaks {
	double bandwidth;            /* bytes/s; 0 unknown */
	double flops[DT_MATH_COUNT]; /* FLOP/s by math; 0 unknown */
	char source[240];            /* where they came from, in words */
};

/* Bandwidth from the device record; FLOP rates from the per-architecture
 * table times SMs times clock. */
void dt_peaks_for_device(struct dt_peaks *p, const struct dt_device *d);

/* When a trace's GPU was busy, for a picture of the run: the union of its
 * kernels, copies and sets in DT_BUSY_BINS bins of equal width from its
 * first activity, on the host clock. The width starts at 1 us and doubles,
 * pairs of bins merged, whenever the run outgrows the bins: the memory is
 * fixed however long the trace. */
#define DT_BUSY_BINS 128

struct dt_busy_hist {
	uint64_t t0;       /* host clock: the first activity's start */
	uint64_t width_ns; /* of a bin; 0 when the trace has no activity */
	uint32_t n_bins;   /* in use: up to the last activity */
	uint32_t devices;  /* GPUs with activity: a bin holds up to
			      width_ns times this */
	uint64_t busy_ns;  /* the bins summed */
	uint64_t span_ns;  /* first start to last end, per GPU, summed */
	uint64_t bins[DT_BUSY_BINS]; /* busy ns in each */
};

struct dt_sum_file {
	char *path;
	char *host, *program, *cudnn, *gpu_state;
	char *cudnn_version; /* "9.19.0", or NULL */
	/* its GPU counters: NULL not sampled, "on: ..." or "off: why"
	 * (dt_model_stats.gpu_metrics); what sampling lost, or NULL */
	char *gpu_metrics, *gpu_metrics_lost;
	uint64_t gpu_samples;
	char *cuda;          /* "driver 13.0, runtime 13.0", or NULL */
	char *rank;          /* "RANK=3" from the rank variables, or NULL */
	uint32_t pid;
	enum dt_file_end end;
	bool complete;   /* dt_trace_complete() */
	bool sealed;     /* its frames carry their place and checksums
			    (format 1.6): complete is proven, not only
			    END's counts checked */
	char *ended;     /* how it ended, in one line (dt_file_end_text) */
	char *lost_text; /* what the writer lost, in words (dt_lost_text) */
	bool lost_exact; /* lost is the writer's count (else a lower bound) */
	uint64_t lost_io; /* of which the file could not take (disk full) */
	uint64_t records_missing; /* written but not read (skipped frames) */
	bool records_missing_known;
	uint64_t skipped_bytes; /* of damaged frames skipped */
	uint64_t records, lost, gpu_dropped, undecoded;
	uint64_t calls;                /* the program's (analyzer/COUNTS.md) */
	uint64_t own_calls;            /* dnntrace's own, not in calls */
	uint64_t kernels, copies, ops; /* copies: copies and sets */
	uint64_t t_begin, t_end; /* first and last host timestamps seen */
	struct dt_gpu_sampling sampling;
	uint64_t gpu_ns;         /* kernels, copies and sets, summed */
	uint64_t cudnn_gpu_ns;   /* of which launched by cuDNN calls */
	uint64_t comm_ns;        /* of which collectives and point-to-point
				    (NCCL's): a rank waiting for the others
				    waits in them */
	struct dt_graph_stats graphs;
	bool graph_records; /* the format has CUDA graph records (1.1) */
	struct dt_busy_hist busy;
};

struct dt_sum_api {
	char *name;
	uint64_t calls, failed, ns, min, max;
	uint64_t failed_ns;
	int32_t last_failure; /* cudnnStatus_t of the last failed call */
};

/* What cuDNN ran a problem with: an engine and its knob choices
 * (backend), or an algorithm (legacy). */
struct dt_sum_engine {
	int64_t engine;
	char *knobs; /* "TILE_SIZE=4 KBLOCK=3", or NULL */
	uint64_t count, gpu_ns;
	uint64_t timed, min_ns, max_ns; /* the executions with kernels */
	double sq_ns;                   /* their times squared, summed */
	int64_t workspace;              /* -1 unknown */
};

#define DT_SUM_ENGINES 64
#define DT_SUM_EXACT   1024

struct dt_sum_problem {
	char *key;   /* the problem signature (dt_op.problem) */
	char *brief; /* its tensors and parameters, compactly */
	char *api;
	enum dt_op_kind kind;
	enum dt_math math;
	int64_t dtype;    /* its main input's cudnnDataType_t, -1 unknown */
	int tensor_cores; /* 1 yes, 0 no, -1 unknown */
	double flops;     /* one execution */
	uint64_t bytes;   /* one execution */
	int32_t device;
	uint64_t count, failed, gpu_ns, host_ns, kernels;
	/* of count: ran outside the windows of sampled GPU recording, so
	 * not timed (gpu_ns, kernels and the times below leave them out) */
	uint64_t unsampled;
	uint64_t replays;  /* of count: replayed from CUDA graphs */
	uint64_t captured; /* calls that put it into a CUDA graph (not in
			      count: they ran nothing) */
	uint64_t convert_ns; /* layout conversion kernels inside it */
	uint32_t converts;
	int64_t workspace;          /* the largest, -1 unknown */
	char *notes, *first_kernel; /* of the last execution */
	struct dt_sum_engine engines[DT_SUM_ENGINES];
	uint32_t n_engines;
	int64_t last_engine;     /* the engine of the last execution */
	uint32_t last_choice;    /* its entry in engines[] */
	uint32_t engine_changes; /* executions whose engine or knobs differ
				    from the one before */
	uint64_t streak;         /* executions in a row with last_choice */
	/* GPU time of the executions with kernels, for medians: the first
	 * DT_SUM_EXACT exactly, later ones (of one engine configuration) in
	 * a histogram of 1% wide buckets, so memory stays bounded */
	struct dt_sum_time {
		uint64_t ns;
		uint32_t choice; /* index into engines[] */
	} * times;
	size_t n_times, cap_times;
	uint32_t *hist;
	uint64_t hist_n;
	uint32_t hist_choice;
	struct dt_sum_share {
		uint64_t ns, count;
	} * per_file; /* by file of the summary */
	size_t cap_per_file;
	/* filled by dt_summary_finish(): the executions (with kernels) of
	 * the engine it settled on, which the rates are computed from */
	uint64_t settled_ns, settled_count;
	double settled_sq;    /* their times squared, summed */
	uint64_t settled_all; /* executions of that engine, timed or not */
	uint64_t min_ns, median_ns, max_ns;
	uint64_t tune_ns; /* executions with engines it did not settle on */
	uint64_t tune_count;
	uint32_t tune_rounds; /* separate rounds of such executions */
};

/* A plan built for a graph: how often, with which engines. */
struct dt_sum_build {
	char *key; /* the graph's description */
	char *brief;
	enum dt_op_kind kind;
	uint32_t builds;
	uint32_t repeats; /* builds of an engine already built for it */
	uint64_t host_ns; /* in the finalize calls */
	uint64_t repeat_ns;
};

/* A kernel that converts a layout, by name. */
struct dt_sum_convert {
	char *name;
	bool in_cudnn; /* launched by a cuDNN call */
	uint64_t count, ns;
};

enum dt_finding_type {
	DT_FIND_AUTOTUNE,
	DT_FIND_REBUILD,
	DT_FIND_LAYOUT,
	DT_FIND_FP32,
	DT_FIND_LOW_ROOF,
	DT_FIND_FAILED,
	DT_FIND_COPIES,
	DT_FIND_IDLE,
	DT_FIND_LOW_BANDWIDTH,
	DT_FIND_STRAGGLER,
	DT_FIND_COUNT
};
const char *dt_finding_key(enum dt_finding_type t); /* "autotune" */

struct dt_finding {
	enum dt_finding_type type;
	uint64_t cost_ns; /* what it costs, on the clock below */
	bool host;        /* cost in host time (else GPU time) */
	char *title;      /* one line */
	char *evidence;   /* lines of evidence, '\n'-separated */
};

struct dt_summary_opts {
	double peak_bandwidth;            /* bytes/s override; 0 none */
	double peak_flops[DT_MATH_COUNT]; /* FLOP/s overrides; 0 none */
	/* called now and then while reading: bytes of path read so far */
	void (*progress)(void *arg, const char *path, uint64_t done,
			 uint64_t total);
	void *progress_arg;
	/* look for fusion opportunities (struct dt_summary's fusion): ops
	 * then carry their pointers, which costs some speed */
	bool fusion;
	double fusion_bandwidth; /* bytes/s to price byte savings at; 0: the
				    run's achieved streaming bandwidth */
	/* only the work inside these NVTX ranges (dt_session_opts.range) */
	const char *range;
};

/* GPU work split by the matrix products it runs between: matrix-vector
 * products are what a model generating one token at a time runs (a
 * language model's token generation), matrix-matrix ones a batch (its
 * prompt processing, training, ...). Work between two products goes with
 * the next one; work before the first product (loading weights) is setup. */
enum dt_phase { DT_PHASE_SETUP, DT_PHASE_BATCH, DT_PHASE_TOKEN, DT_PHASE_COUNT };
const char *dt_phase_name(enum dt_phase p); /* "token generation ..." */
const char *dt_phase_key(enum dt_phase p);  /* "token" */

struct dt_sum_phase {
	uint64_t ns, count; /* kernels, copies and sets */
	uint64_t fam_ns[DT_OPF_COUNT], fam_count[DT_OPF_COUNT];
	uint64_t copy_ns, copy_bytes; /* of its copies and sets */
	uint64_t steps; /* CUDA graph launches whose matrix products it ran */
};

/* DRAM traffic from the GPU's sampled counters (record --gpu-metrics),
 * every trace's summed (analyzer-dram.c). */
#define DT_DRAM_BINS 64
struct dt_sum_dram {
	uint64_t samples;
	uint64_t sampled_ns; /* their windows, summed */
	double read, write;  /* bytes */
	double peak_Bps;     /* the busiest sample's read + write rate */
	/* by the library and family of the work that covered each sample's
	 * window, in proportion to the time it covered */
	double read_by[DT_LIB_COUNT][DT_OPF_COUNT];
	double write_by[DT_LIB_COUNT][DT_OPF_COUNT];
	uint64_t ns_by[DT_LIB_COUNT][DT_OPF_COUNT]; /* that time */
	double idle_read, idle_write; /* in windows' parts no work covered */
	/* bytes over time: bin i from t0 + i * bin_ns (host clock, the first
	 * trace's) */
	uint64_t t0, bin_ns;
	uint64_t bins[DT_DRAM_BINS];
};

struct dt_dram;
struct dt_dram *dt_dram_new(struct dt_sum_dram *out);
void dt_dram_sample(struct dt_dram *d, const struct dt_gpu_sample *s);
void dt_dram_work(struct dt_dram *d, uint32_t device, uint64_t start,
		  uint64_t end, int lib, int fam);
void dt_dram_finish(struct dt_dram *d); /* every sample counted */
void dt_dram_free(struct dt_dram *d);

struct dt_summary {
	struct dt_summary_opts opts;
	struct dt_sum_file *files;
	size_t n_files;
	struct dt_device *devices;
	size_t n_devices;
	struct dt_peaks *peaks;        /* per device, then overridden */
	struct dt_peaks default_peaks; /* for ops whose device is unknown */

	uint64_t gpu_ns;   /* kernels, copies and sets, summed */
	uint64_t busy_ns;  /* the union of their intervals, per device */
	uint64_t span_ns;  /* first start to last end, per device, summed */
	uint64_t cudnn_ns; /* launched by cuDNN calls */
	uint64_t kind_ns[DT_KIND_COUNT], kind_count[DT_KIND_COUNT];
	/* every kernel, copy and set by the library that launched it and
	 * its operation family (cuDNN's by its ops' kinds) */
	uint64_t lib_ns[DT_LIB_COUNT][DT_OPF_COUNT];
	uint64_t lib_count[DT_LIB_COUNT][DT_OPF_COUNT];
	/* and what told the library: facts first */
	uint64_t by_ns[DT_BY_COUNT];
	struct dt_sum_phase phases[DT_PHASE_COUNT];
	/* kernels outside cuDNN calls, by library */
	uint64_t other_ns[DT_LIB_COUNT], other_count[DT_LIB_COUNT];
	uint64_t copy_ns, copies, copy_bytes; /* outside cuDNN calls */
	uint64_t tuner_ns, tuner_kernels;     /* an autotuner's own kernels
						 (XLA's redzone checks and result
						 comparisons) */
	uint64_t host_ns;                     /* inside cuDNN calls */
	uint64_t calls, failed, ops, kernels; /* calls: the program's */
	uint64_t own_calls; /* dnntrace's own (not in calls) */
	uint64_t work;      /* kernels, copies and sets, every one timed */
	/* sampled GPU recording, over every trace (one_in: the largest,
	 * window_ms unused), and the host time of the sampled traces */
	struct dt_gpu_sampling sampling;
	uint64_t sampled_traces_ns;
	struct dt_graph_stats graphs; /* every trace's, summed */
	struct dt_plan_stats plans;   /* likewise */
	struct dt_sum_dram dram;      /* likewise */

	struct dt_sum_api *apis;
	size_t n_apis;
	struct dt_sum_problem *problems;
	size_t n_problems;
	struct dt_sum_build *builds;
	size_t n_builds;
	struct dt_sum_convert *converts;
	size_t n_converts;
	struct dt_finding *findings; /* by cost, largest first */
	size_t n_findings;
	struct dt_fusion *fusion; /* when opts.fusion */
	/* NVTX ranges by name and domain, every trace's summed, most GPU
	 * time first */
	struct dt_range_stat *ranges;
	size_t n_ranges;
	/* the program's steps (dt-steps.h): every trace's as one, or NULL */
	struct dt_step_stats *steps;

	void *priv; /* indexes and scratch */
};

struct dt_summary *dt_summary_new(const struct dt_summary_opts *opts);

/* Read one trace into the summary. Returns 0, or -1 with a sentence in
 * err when the file cannot be read at all (a damaged file still counts
 * for what could be read; its dt_sum_file says how it ended). */
int dt_summary_add(struct dt_summary *s, const char *path, char *err,
		   size_t errlen);

/* The same from a session not run yet (opened with pointers on when the
 * summary looks for fusion opportunities); it is run, not closed. */
int dt_summary_read(struct dt_summary *s, struct dt_session *ss, char *err,
		    size_t errlen);

/* The rank label of a file: "3" from RANK=3, else "pid 1234". */
const char *dt_rank_label(const struct dt_sum_file *f, char *buf,
			  size_t size);

/* The device's peak DRAM bandwidth (bytes/s) that measured traffic is
 * set against: the first GPU's, else the default peaks'. */
double dt_sum_peak_bandwidth(const struct dt_summary *s);

/* GPU time (and *count, when not NULL, kernels, copies and sets) of a
 * library, any family; of a family, any library; lib or fam -1 for any. */
uint64_t dt_sum_lib_ns(const struct dt_summary *s, int lib, int fam,
		       uint64_t *count);

/* Every trace is in: settle medians, peaks and findings. */
void dt_summary_finish(struct dt_summary *s);

void dt_summary_free(struct dt_summary *s);

/* Whether every trace is complete (dt_trace_complete()). */
bool dt_summary_complete(const struct dt_summary *s);

/* The peaks a problem is held against (its device's, or the default). */
const struct dt_peaks *dt_summary_peaks(const struct dt_summary *s,
					int32_t device);

/* Rates of a problem over its executions with kernels. */
struct dt_rates {
	double flops_per_s, bytes_per_s; /* achieved; 0 unknown */
	double intensity;                /* FLOP per byte; 0 unknown */
	double pct_flops, pct_bandwidth; /* of the peaks; <0 unknown */
	int bound;                       /* 1 compute, 0 memory, -1 ? */
	double roof_pct; /* of what the roofline allows; <0 unknown */
};
void dt_problem_rates(const struct dt_summary *s,
		      const struct dt_sum_problem *p, struct dt_rates *r);

/* How far a problem's mean GPU time per execution (settled_ns /
 * settled_count) may be from that of all its executions of that engine,
 * when only some were timed (sampled recording): the half width of the
 * 95% confidence interval, as a fraction of the mean, taking the timed
 * executions as a random sample of them all. 0 when all were timed; -1
 * when fewer than two were. */
double dt_problem_spread(const struct dt_sum_problem *p);

/* ------------------------------------------------------------ diff */

/* Two runs compared: dt-diff.h. A program's steps: dt-steps.h. */
#include "dt-diff.h"
#include "dt-steps.h"

#endif /* DT_ANALYZER_H */
