/*
 * analyzer-kernels.c - what a GPU kernel's name says: the library it comes
 * from, the operation it runs (as far as the fusion analysis tells them
 * apart), whether it converts a layout, runs on tensor cores or belongs to
 * an autotuner, and, for PyTorch's elementwise kernels, how many elements
 * a launch covers. The one place kernel names are read; the model works
 * each name out once (dt_kernel_classify) and every view reads the result.
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

#include "dt-analyzer.h"

/* ----------------------------------------------------------- libraries */

static const struct {
	const char *key, *name;
	const char *needles[6];
} families[DT_FAM_COUNT] = {
	[DT_FAM_GEMM] = { "gemm",
			  "GEMM (cuBLAS, cuBLASLt, CUTLASS)",
			  { "gemm", "nvjet", "cutlass", "cublas", "Gemm",
			    NULL } },
	[DT_FAM_NCCL] = { "nccl", "NCCL", { "nccl", NULL } },
	[DT_FAM_GGML] = { "ggml", "ggml", { "ggml", NULL } },
	[DT_FAM_ATEN] = { "aten",
			  "PyTorch (ATen)",
			  { "at6native", "at::native", "_ZN2at", NULL } },
	[DT_FAM_XLA] = { "xla",
			 "XLA (and its autotuner)",
			 { "xla", "fusion", "stream_executor", NULL } },
	[DT_FAM_OTHER] = { "other", "other kernels", { NULL } },
};

const char *dt_family_name(enum dt_family f)
{
	return (unsigned)f < DT_FAM_COUNT ? families[f].name : "?";
}

const char *dt_family_key(enum dt_family f)
{
	return (unsigned)f < DT_FAM_COUNT ? families[f].key : "?";
}

enum dt_family dt_family_of(const char *name, size_t len)
{
	for (int f = 0; f < DT_FAM_OTHER; f++)
		for (const char *const *n = families[f].needles; *n; n++)
			if (memmem(name, len, *n, strlen(*n)))
				return (enum dt_family)f;
	return DT_FAM_OTHER;
}

bool dt_tuner_kernel(const char *name, size_t len)
{
	return memmem(name, len, "RedzoneAllocator", 16) ||
	       memmem(name, len, "xla_fp_comparison", 17) ||
	       memmem(name, len, "xla_int_comparison", 18);
}

/* ----------------------------------------------------------- functions */

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

void dt_kernel_classify(const char *name, size_t len,
			struct dt_kernel_class *kc)
{
	/* a NUL in a name ends it */
	char *s = strndup(name, len);

	memset(kc, 0, sizeof(*kc));
	kc->op = DT_KOP_OTHER;
	kc->dtype = -1;
	kc->tc = -1;
	if (!s)
		return;
	len = strlen(s);
	kc->family = dt_family_of(s, len);
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
	if (kc->op == DT_KOP_OTHER && kc->family == DT_FAM_GEMM)
		kc->op = DT_KOP_GEMM;
	free(s);
}
