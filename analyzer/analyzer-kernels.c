/*
 * analyzer-kernels.c - what a GPU kernel's name says: the library it comes
 * from, its operation family (matmul, attention, normalization, ...), the
 * operation it runs (as far as the fusion analysis tells them apart), whether it converts a layout, runs on tensor cores or belongs to
 * an autotuner, and, for PyTorch's elementwise kernels, how many elements
 * a launch covers. The one place kernel names are read; the model works
 * each name out once (dt_kernel_classify) and every view reads the result.
 *
 * Also the names a kernel is shown by (demangled), and the directions of
 * copies by CUPTI's values.
 *
 * Names are matched by fragments, most specific first. They are evidence,
 * not facts: a kernel whose call is known (cuDNN's) is attributed by that
 * call, never by its name.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dt-kernels.h"

/* ----------------------------------------------------------- libraries */

/* A fragment of a name, and whether it must be where the function's own
 * name starts (dt_kernel_function) rather than anywhere in the name. */
struct needle {
	const char *s;
	bool head;
};

/* Libraries by fragments of their kernels' names, tried in this order:
 * cuDNN ships CUTLASS and cuBLAS-like kernels of its own ("_5x_cudnn"),
 * cuBLAS CUTLASS ones (cutlass::Kernel2<cutlass_80_...>). */
static const struct {
	enum dt_lib lib;
	const char *key, *name;
	struct needle needles[12];
} libs[] = {
	{ DT_LIB_CUDNN, "cudnn", "cuDNN", { { "cudnn" }, { NULL } } },
	{ DT_LIB_NCCL, "nccl", "NCCL", { { "nccl" }, { NULL } } },
	{ DT_LIB_CUBLAS,
	  "cublas",
	  "cuBLAS (cuBLASLt)",
	  { { "cublas" },
	    { "nvjet" },
	    { "Kernel2I" }, /* with "cutlass_": cuBLAS's CUTLASS kernels */
	    { "gemv", true },
	    { "gemmk1", true },
	    { "gemmSN", true },
	    { "sgemm", true },
	    { "dgemm", true },
	    { "hgemm", true },
	    { "scal_kernel", true },
	    { "dot_kernel", true },
	    { NULL } } },
	{ DT_LIB_ATEN,
	  "aten",
	  "PyTorch (ATen)",
	  { { "at6native" },
	    { "at::native" },
	    { "_ZN2at" },
	    { "_ZN3c10" },
	    { "softmax_warp_", true }, /* PersistentSoftmax.cuh's */
	    { "cunn_", true },
	    { NULL } } },
	{ DT_LIB_TRITON,
	  "triton",
	  "Triton",
	  { { "triton_", true }, { "triton" }, { NULL } } },
	{ DT_LIB_XLA,
	  "xla",
	  "XLA",
	  { { "xla" },
	    { "stream_executor" },
	    { "fusion" },
	    { "wrapped_", true },
	    { "loop_", true },
	    { "input_", true },
	    { NULL } } },
	{ DT_LIB_FLASH,
	  "flash_attn",
	  "FlashAttention",
	  { { "N5flash" }, { "flash_fwd", true }, { "flash_bwd", true },
	    { NULL } } },
	{ DT_LIB_CUTLASS, "cutlass", "CUTLASS", { { "cutlass" }, { NULL } } },
	{ DT_LIB_CUB,
	  "cub",
	  "CUB and Thrust",
	  { { "_ZN3cub" }, { "cub::" }, { "thrust" }, { "CUB_" }, { NULL } } },
	/* ggml's kernels are functions of the global namespace whose names
	 * say little on their own: those of ggml-cuda's sources */
	{ DT_LIB_GGML,
	  "ggml",
	  "ggml",
	  { { "ggml" }, { NULL } } },
};

static const char *const ggml_functions[] = {
	"mul_mat_", "k_bin_bcast", "rms_norm_f32", "norm_f32",
	"group_norm_f32", "l2_norm_f32", "rope_", "cpy_", "convert_unary",
	"dequantize_", "quantize_q8_1", "quantize_mmq", "k_get_rows",
	"soft_max_f32", "soft_max_back_f32", "flash_attn_", "silu_f32",
	"silu_back_f32", "gelu_f32", "gelu_quick_f32", "tanh_f32", "relu_f32",
	"sigmoid_f32", "hardsigmoid_f32", "hardswish_f32", "exp_f32",
	"leaky_relu_f32", "sqr_f32", "sqrt_f32", "sin_f32", "cos_f32",
	"neg_f32", "step_f32", "scale_f32", "clamp_f32", "diag_mask_inf_f32",
	"argsort_f32_i32", "sum_rows_f32", "argmax_f32", "k_sum_rows",
	"im2col_kernel", "pool2d_nchw_kernel", "concat_f32", "pad_f32",
	"upscale_f32", "arange_f32", "timestep_embedding_f32", "acc_f32",
	"k_repeat_back", "count_equal", "cross_entropy_loss",
	"opt_step_adamw_f32", "ssm_conv_f32", "ssm_scan_f32", "rwkv_wkv",
	"k_compute_batched_ptrs", "mul_mat_vec", "dequantize_block",
	NULL
};

static const char *lib_field(enum dt_lib l, bool name)
{
	if (l == DT_LIB_RUNTIME)
		return name ? "copies and sets (CUDA runtime)" : "runtime";
	if (l == DT_LIB_OTHER)
		return name ? "other kernels" : "other";
	for (size_t i = 0; i < sizeof(libs) / sizeof(*libs); i++)
		if (libs[i].lib == l)
			return name ? libs[i].name : libs[i].key;
	return "?";
}

const char *dt_lib_name(enum dt_lib l)
{
	return lib_field(l, true);
}

const char *dt_lib_key(enum dt_lib l)
{
	return lib_field(l, false);
}

/* Whether the fragment is in the name (len bytes), or starts the
 * function's own name (fn, fn_n bytes) when it must. */
static bool has(const struct needle *n, const char *name, size_t len,
		const char *fn, size_t fn_n)
{
	size_t k = strlen(n->s);

	if (n->head)
		return fn_n >= k && !memcmp(fn, n->s, k);
	return memmem(name, len, n->s, k) != NULL;
}

const char *dt_owner_by_key(enum dt_owner_by b)
{
	static const char *const keys[] = {
		[DT_BY_CALL] = "cudnn_call", [DT_BY_RUNTIME] = "runtime",
		[DT_BY_MODULE] = "module",   [DT_BY_NAME] = "name",
		[DT_BY_NONE] = "none",
	};
	return b < DT_BY_COUNT ? keys[b] : "?";
}

enum dt_lib dt_lib_of_path(const char *path, size_t len)
{
	static const struct {
		const char *s; /* in the file's name */
		enum dt_lib lib;
	} files[] = {
		{ "libggml-cuda", DT_LIB_GGML },   { "libtorch_cuda", DT_LIB_ATEN },
		{ "libc10_cuda", DT_LIB_ATEN },    { "libtorch", DT_LIB_ATEN },
		{ "libcublas", DT_LIB_CUBLAS },    { "libcudnn", DT_LIB_CUDNN },
		{ "libnccl", DT_LIB_NCCL },	   { "flash_attn", DT_LIB_FLASH },
		{ "xla_extension", DT_LIB_XLA },   { "jaxlib", DT_LIB_XLA },
		{ "xla_cuda", DT_LIB_XLA },	   { "triton", DT_LIB_TRITON },
	};
	const char *base = memrchr(path, '/', len);

	base = base ? base + 1 : path;
	len -= (size_t)(base - path);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (memmem(base, len, files[i].s, strlen(files[i].s)))
			return files[i].lib;
	return DT_LIB_OTHER;
}

enum dt_lib dt_lib_of(const char *name, size_t len)
{
	size_t fn_n;
	const char *fn = dt_kernel_function(name, len, &fn_n);

	for (size_t i = 0; i < sizeof(libs) / sizeof(*libs); i++)
		for (const struct needle *n = libs[i].needles; n->s; n++) {
			if (!has(n, name, len, fn, fn_n))
				continue;
			/* Kernel2 is cuBLAS's only with its CUTLASS names */
			if (!strcmp(n->s, "Kernel2I") &&
			    !memmem(name, len, "cutlass_", 8))
				continue;
			return libs[i].lib;
		}
	/* ggml names its functions by what they do: a mangled name in the
	 * global namespace ("_Z11mul_mat_vec...") whose function is one of
	 * ggml-cuda's */
	if (len > 3 && !memcmp(name, "_Z", 2) && name[2] >= '1' &&
	    name[2] <= '9')
		for (const char *const *g = ggml_functions; *g; g++)
			if (fn_n >= strlen(*g) && !memcmp(fn, *g, strlen(*g)))
				return DT_LIB_GGML;
	return DT_LIB_OTHER;
}

/* ---------------------------------------------------- operation families */

static const struct {
	const char *key, *name;
} opfams[DT_OPF_COUNT] = {
	[DT_OPF_MATMUL] = { "matmul", "matrix multiplication" },
	[DT_OPF_CONV] = { "conv", "convolution" },
	[DT_OPF_ATTENTION] = { "attention", "attention" },
	[DT_OPF_NORM] = { "normalization", "normalization" },
	[DT_OPF_ELEMENTWISE] = { "elementwise", "elementwise" },
	[DT_OPF_ROPE] = { "rope", "rotary embedding (RoPE)" },
	[DT_OPF_SOFTMAX] = { "softmax", "softmax" },
	[DT_OPF_COPY] = { "copy", "copy and convert" },
	[DT_OPF_GATHER] = { "gather", "gather and scatter" },
	[DT_OPF_REDUCTION] = { "reduction", "reduction" },
	[DT_OPF_POOLING] = { "pooling", "pooling and resampling" },
	[DT_OPF_RNN] = { "rnn", "recurrent cells" },
	[DT_OPF_OPTIMIZER] = { "optimizer", "optimizer step" },
	[DT_OPF_LOSS] = { "loss", "loss functions" },
	[DT_OPF_COMM] = { "communication", "communication" },
	[DT_OPF_FILL] = { "fill", "fill, set and random" },
	[DT_OPF_SYNC] = { "tuning", "autotuning, checks and waits" },
	[DT_OPF_OTHER] = { "other", "other" },
};

const char *dt_opfam_name(enum dt_opfam f)
{
	return (unsigned)f < DT_OPF_COUNT ? opfams[f].name : "?";
}

const char *dt_opfam_key(enum dt_opfam f)
{
	return (unsigned)f < DT_OPF_COUNT ? opfams[f].key : "?";
}

enum dt_opfam dt_opfam_of_kind(enum dt_op_kind k)
{
	static const enum dt_opfam of[DT_KIND_COUNT] = {
		[DT_KIND_OTHER] = DT_OPF_OTHER,
		[DT_KIND_CONV_FWD] = DT_OPF_CONV,
		[DT_KIND_CONV_BWD_DATA] = DT_OPF_CONV,
		[DT_KIND_CONV_BWD_FILTER] = DT_OPF_CONV,
		[DT_KIND_MATMUL] = DT_OPF_MATMUL,
		[DT_KIND_ATTN_FWD] = DT_OPF_ATTENTION,
		[DT_KIND_ATTN_BWD] = DT_OPF_ATTENTION,
		[DT_KIND_NORM_FWD] = DT_OPF_NORM,
		[DT_KIND_NORM_BWD] = DT_OPF_NORM,
		[DT_KIND_POINTWISE] = DT_OPF_ELEMENTWISE,
		[DT_KIND_REDUCTION] = DT_OPF_REDUCTION,
		[DT_KIND_SOFTMAX] = DT_OPF_SOFTMAX,
		[DT_KIND_POOLING] = DT_OPF_POOLING,
		[DT_KIND_RNN_FWD] = DT_OPF_RNN,
		[DT_KIND_RNN_BWD_DATA] = DT_OPF_RNN,
		[DT_KIND_RNN_BWD_WEIGHTS] = DT_OPF_RNN,
		[DT_KIND_TRANSFORM] = DT_OPF_COPY,
		[DT_KIND_DROPOUT] = DT_OPF_ELEMENTWISE,
		[DT_KIND_CTC] = DT_OPF_LOSS,
		[DT_KIND_SEARCH] = DT_OPF_SYNC,
		[DT_KIND_SETUP] = DT_OPF_FILL,
	};
	return (unsigned)k < DT_KIND_COUNT ? of[k] : DT_OPF_OTHER;
}

/* Operation families by fragments of the lower-cased name, tried in this
 * order: the first that matches decides. Inductor's names list every op
 * it fused ("triton_poi_fused_native_batch_norm_..._relu_0"): their
 * prefix says what the kernel is (pointwise, reduction, persistent
 * reduction, template), so it is tried first; XLA's name the fusion's
 * root after "loop_" or "input_". */
static const struct {
	const char *needle;
	enum dt_opfam fam;
} opfam_names[] = {
	{ "triton_poi", DT_OPF_ELEMENTWISE },
	{ "triton_red", DT_OPF_REDUCTION },
	{ "triton_per", DT_OPF_REDUCTION },
	{ "triton_tem", DT_OPF_MATMUL },
	{ "nccl", DT_OPF_COMM },
	{ "allreduce", DT_OPF_COMM },
	{ "all_reduce", DT_OPF_COMM },
	{ "allgather", DT_OPF_COMM },
	{ "all_gather", DT_OPF_COMM },
	{ "reduce_scatter", DT_OPF_COMM },
	{ "redzone", DT_OPF_SYNC },
	{ "xla_fp_comparison", DT_OPF_SYNC },
	{ "xla_int_comparison", DT_OPF_SYNC },
	{ "delaykernel", DT_OPF_SYNC },
	{ "semaphore", DT_OPF_SYNC },
	{ "ctcloss", DT_OPF_LOSS },
	{ "ctc_loss", DT_OPF_LOSS },
	{ "nll_loss", DT_OPF_LOSS },
	{ "cross_entropy", DT_OPF_LOSS },
	{ "splitkreduce", DT_OPF_MATMUL },
	{ "reduce_fusion", DT_OPF_REDUCTION },
	{ "fprop", DT_OPF_CONV }, /* cuDNN's implicit GEMMs, "indexed" too */
	{ "dgrad", DT_OPF_CONV },
	{ "wgrad", DT_OPF_CONV },
	{ "flash_attn", DT_OPF_ATTENTION },
	{ "flash_fwd", DT_OPF_ATTENTION },
	{ "flash_bwd", DT_OPF_ATTENTION },
	{ "fmha", DT_OPF_ATTENTION },
	{ "sdpa", DT_OPF_ATTENTION },
	{ "attention", DT_OPF_ATTENTION },
	{ "attn", DT_OPF_ATTENTION },
	{ "compute_dot_do_o", DT_OPF_ATTENTION },
	{ "softmax", DT_OPF_SOFTMAX },
	{ "soft_max", DT_OPF_SOFTMAX },
	{ "rope", DT_OPF_ROPE },
	{ "rotary", DT_OPF_ROPE },
	{ "distribution", DT_OPF_FILL },
	{ "fillfunctor", DT_OPF_FILL },
	{ "fill_kernel", DT_OPF_FILL },
	{ "arange", DT_OPF_FILL },
	{ "philox", DT_OPF_FILL },
	{ "multi_tensor_apply", DT_OPF_OPTIMIZER },
	{ "opt_step", DT_OPF_OPTIMIZER },
	{ "adam", DT_OPF_OPTIMIZER },
	{ "lstm", DT_OPF_RNN },
	{ "rnn", DT_OPF_RNN },
	{ "gru_", DT_OPF_RNN },
	{ "norm", DT_OPF_NORM },
	{ "invstd", DT_OPF_NORM },
	{ "bn_fw", DT_OPF_NORM }, /* cuDNN's legacy batch norm */
	{ "bn_bw", DT_OPF_NORM },
	{ "mul_mat", DT_OPF_MATMUL },
	{ "compute_batched_ptrs", DT_OPF_MATMUL },
	{ "copy", DT_OPF_COPY },
	{ "cpy_", DT_OPF_COPY },
	{ "convert", DT_OPF_COPY },
	{ "quantize", DT_OPF_COPY },
	{ "transpose", DT_OPF_COPY },
	{ "permute", DT_OPF_COPY },
	{ "nchwtonhwc", DT_OPF_COPY },
	{ "nhwctonchw", DT_OPF_COPY },
	{ "addpadding", DT_OPF_COPY },
	{ "concat", DT_OPF_COPY },
	{ "cat_array", DT_OPF_COPY },
	{ "pad_f32", DT_OPF_COPY },
	{ "repeat", DT_OPF_COPY },
	{ "get_rows", DT_OPF_GATHER },
	{ "embedding", DT_OPF_GATHER },
	{ "gather", DT_OPF_GATHER },
	{ "scatter", DT_OPF_GATHER },
	{ "index", DT_OPF_GATHER },
	{ "pool", DT_OPF_POOLING },
	{ "upsample", DT_OPF_POOLING },
	{ "upscale", DT_OPF_POOLING },
	{ "interpolat", DT_OPF_POOLING },
	{ "conv2d", DT_OPF_CONV },
	{ "conv1d", DT_OPF_CONV },
	{ "conv3d", DT_OPF_CONV },
	{ "convolution", DT_OPF_CONV },
	{ "convolve", DT_OPF_CONV },
	{ "im2col", DT_OPF_CONV },
	{ "winograd", DT_OPF_CONV },
	{ "depthwise", DT_OPF_CONV },
	{ "gemm", DT_OPF_MATMUL },
	{ "gemv", DT_OPF_MATMUL },
	{ "nvjet", DT_OPF_MATMUL },
	{ "matmul", DT_OPF_MATMUL },
	{ "dot_kernel", DT_OPF_MATMUL },
	{ "bmm", DT_OPF_MATMUL },
	{ "reduce", DT_OPF_REDUCTION },
	{ "sum_rows", DT_OPF_REDUCTION },
	{ "argmax", DT_OPF_REDUCTION },
	{ "argsort", DT_OPF_REDUCTION },
	{ "sort", DT_OPF_REDUCTION },
	{ "scan", DT_OPF_REDUCTION },
	{ "count_equal", DT_OPF_REDUCTION },
	{ "elementwise", DT_OPF_ELEMENTWISE },
	{ "bin_bcast", DT_OPF_ELEMENTWISE },
	{ "unary", DT_OPF_ELEMENTWISE },
	{ "binary", DT_OPF_ELEMENTWISE },
	{ "functor", DT_OPF_ELEMENTWISE },
	{ "silu", DT_OPF_ELEMENTWISE },
	{ "gelu", DT_OPF_ELEMENTWISE },
	{ "relu", DT_OPF_ELEMENTWISE },
	{ "sigmoid", DT_OPF_ELEMENTWISE },
	{ "tanh", DT_OPF_ELEMENTWISE },
	{ "threshold", DT_OPF_ELEMENTWISE },
	{ "clamp", DT_OPF_ELEMENTWISE },
	{ "scale", DT_OPF_ELEMENTWISE },
	{ "diag_mask", DT_OPF_ELEMENTWISE },
	{ "dropout", DT_OPF_ELEMENTWISE },
	{ "pointwise", DT_OPF_ELEMENTWISE },
	{ "loop_", DT_OPF_ELEMENTWISE },
	{ "_f32", DT_OPF_ELEMENTWISE },
};

enum dt_opfam dt_opfam_of(const char *s)
{
	char low[512];
	size_t n = strlen(s);

	if (n > sizeof(low) - 1)
		n = sizeof(low) - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a'
							   : s[i]);
	low[n] = 0;
	for (size_t i = 0; i < sizeof(opfam_names) / sizeof(*opfam_names); i++)
		if (strstr(low, opfam_names[i].needle))
			return opfam_names[i].fam;
	return DT_OPF_OTHER;
}

/* A matrix product with one vector operand: what a model generating one
 * token (or one row) at a time runs. */
static bool matvec_of(const char *s, enum dt_opfam fam)
{
	return fam == DT_OPF_MATMUL &&
	       (strstr(s, "mul_mat_vec") || strstr(s, "gemv") ||
		strstr(s, "Gemv") || strstr(s, "dot_kernel"));
}

bool dt_tuner_kernel(const char *name, size_t len)
{
	return memmem(name, len, "RedzoneAllocator", 16) ||
	       memmem(name, len, "xla_fp_comparison", 17) ||
	       memmem(name, len, "xla_int_comparison", 18);
}

/* ----------------------------------------------------------- functions */

/* The C++ ABI's demangler, from the C++ runtime (libstdc++): the one that
 * knows every corner of the Itanium mangling, declared here for C. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len,
			    int *status);

char *dt_demangle(const char *name)
{
	int status = 0;

	/* __cxa_demangle also reads a bare type name ("i" is "int"): only
	 * what mangles a function or an object is a kernel's name */
	if (!name || strncmp(name, "_Z", 2))
		return NULL;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (status) {
		free(d);
		return NULL;
	}
	return d;
}

/* The last component of an Itanium-mangled name (_Z11scal_kernelIf... ->
 * scal_kernel, _ZN5cudnn16nchwToNhwcKernelI... -> nchwToNhwcKernel), or the
 * whole name when it is not mangled. Template arguments are not part of it:
 * a type named cublasTransposeParams does not make a kernel a transpose. */
const char *dt_kernel_function(const char *name, size_t len, size_t *n)
{
	const char *p = name, *end = name + len, *last = name;
	size_t last_n = len;

	if (len < 3 || memcmp(name, "_Z", 2)) {
		*n = len;
		return name;
	}
	p += 2;
	if (p < end && *p == 'N')
		p++;
	last_n = 0;
	while (p < end && *p >= '0' && *p <= '9') {
		size_t k = 0;
		while (p < end && *p >= '0' && *p <= '9')
			k = k * 10 + (size_t)(*p++ - '0');
		if (k > (size_t)(end - p))
			break;
		last = p;
		last_n = k;
		p += k;
	}
	if (!last_n) {
		*n = len;
		return name;
	}
	*n = last_n;
	return last;
}

bool dt_layout_kernel(const char *name, size_t len)
{
	static const char *const pats[] = { "nchwtonhwc", "nhwctonchw",
					    "transpose",  "permute",
					    "addpadding", NULL };
	char low[256];
	size_t n;

	if (!name)
		return false;
	name = dt_kernel_function(name, len, &n);
	if (n > sizeof(low) - 1)
		n = sizeof(low) - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z'
					? name[i] - 'A' + 'a'
					: name[i]);
	low[n] = 0;
	for (const char *const *p = pats; *p; p++)
		if (strstr(low, *p))
			return true;
	return false;
}

/* Whether a kernel's name says it runs on tensor cores (1), says it does
 * not (0), or says nothing (-1): for legacy calls, whose engine's notes
 * are not at hand. */
static int tensor_core_kernel(const char *name)
{
	static const char *const cuda_cores[] = {
		"ffma",  "sgemm", "implicit_convolve", "fft", "winograd",
		"dgemm", NULL
	};
	static const char *const tc[] = { "xmma",  "hmma",     "gmma",
					  "imma",  "tf32",     "1688",
					  "16816", "tensorop", NULL };

	/* xmma kernels exist in FFMA flavours: look for those first */
	for (const char *const *n = cuda_cores; *n; n++)
		if (strcasestr(name, *n))
			return 0;
	for (const char *const *n = tc; *n; n++)
		if (strcasestr(name, *n))
			return 1;
	return -1;
}

/* ---------------------------------------------------------- operations */

/* Fragments of PyTorch's (and cuBLAS's) kernel names, most specific
 * first. */
static const struct {
	const char *needle;
	enum dt_kernel_op op;
} op_names[] = {
	{ "FillFunctor", DT_KOP_FILL },
	{ "splitKreduce", DT_KOP_GEMM_TAIL },
	{ "batch_norm_collect_statistics", DT_KOP_BN_STATS },
	{ "batch_norm_reduce_statistics", DT_KOP_BN_STATS },
	{ "batch_norm_update_stats", DT_KOP_BN_UPDATE },
	{ "batch_norm_transform_input", DT_KOP_BN_APPLY },
	{ "batch_norm_elementwise", DT_KOP_BN_APPLY },
	{ "batch_norm_backward_reduce", DT_KOP_BN_BWD_REDUCE },
	{ "batch_norm_backward_elemt", DT_KOP_BN_BWD_ELEMT },
	/* not "layer_norm_kernel": its backward's kernels are in that file */
	{ "vectorized_layer_norm_kernel", DT_KOP_LAYER_NORM },
	{ "LayerNormForwardCUDAKernel", DT_KOP_LAYER_NORM },
	{ "threshold_kernel", DT_KOP_RELU_BWD },
	{ "GeluBackward", DT_KOP_GELU_BWD },
	{ "silu_backward", DT_KOP_SILU_BWD },
	{ "launch_clamp_scalar", DT_KOP_RELU },
	{ "clamp_min", DT_KOP_RELU },
	{ "GeluCUDAKernelImpl", DT_KOP_GELU },
	{ "silu_kernel", DT_KOP_SILU },
	{ "sigmoid_kernel", DT_KOP_SIGMOID },
	{ "tanh_kernel", DT_KOP_TANH },
	{ "CUDAFunctor_add", DT_KOP_ADD },
	{ "AddFunctor", DT_KOP_ADD },
	{ "MulFunctor", DT_KOP_MUL },
	{ "copy_kernel", DT_KOP_COPY },
};

/* The data type a kernel's template arguments name. */
static int8_t dtype_of_name(const char *name)
{
	if (strstr(name, "BFloat16") || strstr(name, "bfloat16"))
		return DT_DTYPE_BFLOAT16;
	if (strstr(name, "Half") || strstr(name, "__half"))
		return DT_DTYPE_HALF;
	if (strstr(name, "IdE") || strstr(name, "Iddd"))
		return DT_DTYPE_DOUBLE;
	if (strstr(name, "IfE") || strstr(name, "Ifff"))
		return DT_DTYPE_FLOAT;
	return -1;
}

/* The number after "ILi" at p ("ILi8E..."), 0 when there is none. */
static uint64_t template_int(const char *p)
{
	if (!p || strncmp(p, "ILi", 3))
		return 0;
	return strtoull(p + 3, NULL, 10);
}

/* Items per thread and, when the template fixes it, threads per block of
 * PyTorch's elementwise kernels (the name's first 160 bytes say); *per 0
 * when the name is none of them. */
static void elementwise_shape(const char *name, size_t len, uint64_t *per,
			      uint64_t *threads)
{
	char buf[160];
	const char *p;

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 159 ? len : 159), name);
	*per = *threads = 0;
	if ((p = strstr(buf, "vectorized_elementwise_kernel"))) {
		*per = template_int(p + 29);
	} else if ((p = strstr(buf, "unrolled_elementwise_kernel"))) {
		*per = 4; /* PyTorch's unroll factor for these */
	} else if ((p = strstr(buf, "elementwise_kernel"))) {
		/* elementwise_kernel<nt, vt>: nt threads, vt items each */
		*threads = template_int(p + 18);
		/* template_int() read "ILi<digits>" there: what follows is
		 * within the string */
		const char *q = *threads ? strstr(p + 21, "ELi") : NULL;
		*per = q ? strtoull(q + 3, NULL, 10) : 0;
	}
}

static uint64_t launch_elems(uint64_t per, uint64_t threads, int32_t grid_x,
			     int32_t block_x, uint64_t *granule)
{
	uint64_t g = grid_x > 0 ? (uint64_t)grid_x : 0;
	uint64_t b = threads ? threads : block_x > 0 ? (uint64_t)block_x : 0;

	if (granule)
		*granule = b * per;
	return g * b * per;
}

uint64_t dt_kernel_elems(const char *name, size_t len, int32_t grid_x,
			 int32_t block_x, uint64_t *granule)
{
	uint64_t per, threads;

	elementwise_shape(name, len, &per, &threads);
	return launch_elems(per, threads, grid_x, block_x, granule);
}

uint64_t dt_kernel_class_elems(const struct dt_kernel_class *kc, int32_t grid_x,
			       int32_t block_x, uint64_t *granule)
{
	return launch_elems(kc->per, kc->threads, grid_x, block_x, granule);
}

/* A GEMM by name, of any library: the operation the fusion analysis
 * chains (cuDNN's implicit GEMMs outside its calls among them). */
static bool gemm_name(const char *s)
{
	static const char *const needles[] = { "gemm", "nvjet", "cutlass",
					       "cublas", "Gemm", NULL };
	for (const char *const *n = needles; *n; n++)
		if (strstr(s, *n))
			return true;
	return false;
}

void dt_kernel_classify(const char *name, size_t len,
			struct dt_kernel_class *kc)
{
	/* a NUL in a name ends it */
	char *s = strndup(name, len);

	memset(kc, 0, sizeof(*kc));
	kc->lib = DT_LIB_OTHER;
	kc->opfam = DT_OPF_OTHER;
	kc->op = DT_KOP_OTHER;
	kc->dtype = -1;
	kc->tc = -1;
	if (!s)
		return;
	len = strlen(s);
	kc->lib = dt_lib_of(s, len);
	kc->opfam = dt_opfam_of(s);
	kc->matvec = matvec_of(s, kc->opfam);
	kc->layout = dt_layout_kernel(s, len);
	kc->tuner = dt_tuner_kernel(s, len);
	kc->tc = tensor_core_kernel(s);
	kc->dtype = dtype_of_name(s);
	kc->nhwc = strstr(s, "channels_last") != NULL;
	kc->vectorized = strstr(s, "vectorized_elementwise_kernel") != NULL;
	uint64_t per, threads;
	elementwise_shape(s, len, &per, &threads);
	kc->per = (uint32_t)per;
	kc->threads = (uint32_t)threads;
	for (size_t i = 0; i < sizeof(op_names) / sizeof(*op_names); i++)
		if (strstr(s, op_names[i].needle)) {
			kc->op = op_names[i].op;
			kc->op_needle = op_names[i].needle;
			break;
		}
	if (kc->op == DT_KOP_OTHER && gemm_name(s))
		kc->op = DT_KOP_GEMM;
	free(s);
}

/* -------------------------------------------------------------- copies */

const char *dt_copy_kind_name(uint32_t kind)
{
	/* CUpti_ActivityMemcpyKind (cupti_activity.h), A an array */
	static const char *const names[] = {
		[1] = "HtoD", [2] = "DtoH", [3] = "HtoA",  [4] = "AtoH",
		[5] = "AtoA", [6] = "AtoD", [7] = "DtoA",  [8] = "DtoD",
		[9] = "HtoH", [10] = "PtoP",
	};
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : NULL;
}
