/*
 * analyzer-cudnn.c - what the analyzer knows of cuDNN's vocabulary: enum
 * names (from the generated table), and how backend attribute payloads are
 * laid out, by cudnnBackendAttributeType_t value (those values are ABI and
 * never change).
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-cudnn.h"
#include "analyzer-decoder.h"
#include "analyzer-util.h"

static int cmp_value(const void *key, const void *elem)
{
	int64_t v = *(const int64_t *)key;
	const struct dt_enum_name *e = elem;

	return v < e->value ? -1 : v > e->value;
}

/* Where each enum type's values start in the table (sorted by type, then
 * value), built once: a name is looked up once per argument dumped, and
 * comparing type names was most of the work. */
#define MAX_TYPES 256
static struct type_range {
	const char *type;
	size_t len;
	size_t start, end;
} types[MAX_TYPES];
static size_t n_types;
static pthread_once_t types_once = PTHREAD_ONCE_INIT;

static void index_types(void)
{
	for (size_t i = 0; i < dt_cudnn_enums_count && n_types < MAX_TYPES;
	     i++) {
		if (n_types &&
		    !strcmp(types[n_types - 1].type, dt_cudnn_enums[i].type)) {
			types[n_types - 1].end = i + 1;
			continue;
		}
		types[n_types++] =
			(struct type_range){ dt_cudnn_enums[i].type,
					     strlen(dt_cudnn_enums[i].type), i,
					     i + 1 };
	}
}

const char *dt_enum_name(const char *type, size_t type_len, int64_t value)
{
	size_t lo = 0, hi;

	if (!type)
		return NULL;
	pthread_once(&types_once, index_types);
	hi = n_types;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct type_range *t = &types[mid];
		size_t n = t->len < type_len ? t->len : type_len;
		int c = memcmp(t->type, type, n);
		if (!c)
			c = t->len < type_len ? -1 : t->len > type_len;
		if (!c) {
			const struct dt_enum_name *e =
				bsearch(&value, dt_cudnn_enums + t->start,
					t->end - t->start,
					sizeof(dt_cudnn_enums[0]), cmp_value);
			return e ? e->name : NULL;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *dt_enum_short(const char *type, int64_t value, const char *strip,
			  char *buf, size_t size)
{
	const char *n = dt_enum_name(type, strlen(type), value);

	if (!n) {
		snprintf(buf, size, "%" PRId64, value);
		return buf;
	}
	if (strip && !strncmp(n, strip, strlen(strip)))
		n += strlen(strip);
	snprintf(buf, size, "%s", n);
	return buf;
}

int64_t dt_enum_value(const char *type, const char *name, int64_t def)
{
	for (size_t i = 0; i < dt_cudnn_enums_count; i++)
		if (!strcmp(dt_cudnn_enums[i].type, type) &&
		    !strcmp(dt_cudnn_enums[i].name, name))
			return dt_cudnn_enums[i].value;
	return def;
}

/* The one table of cuDNN's data types, by value: the bits of an element.
 * Their names are the generated table's. */
static const unsigned char dtype_bits[DT_DTYPE_COUNT] = {
	[DT_DTYPE_FLOAT] = 32,
	[DT_DTYPE_DOUBLE] = 64,
	[DT_DTYPE_HALF] = 16,
	[DT_DTYPE_INT8] = 8,
	[DT_DTYPE_INT32] = 32,
	/* vectorized types: a dimension counts the scalars */
	[DT_DTYPE_INT8x4] = 8,
	[DT_DTYPE_UINT8] = 8,
	[DT_DTYPE_UINT8x4] = 8,
	[DT_DTYPE_INT8x32] = 8,
	[DT_DTYPE_BFLOAT16] = 16,
	[DT_DTYPE_INT64] = 64,
	[DT_DTYPE_BOOLEAN] = 1, /* packed, eight to a byte */
	[DT_DTYPE_FP8_E4M3] = 8,
	[DT_DTYPE_FP8_E5M2] = 8,
	[DT_DTYPE_FAST_FLOAT_FOR_FP8] = 32, /* a compute type */
	[DT_DTYPE_FP8_E8M0] = 8,
	[DT_DTYPE_FP4_E2M1] = 4,
	[DT_DTYPE_INT4] = 4,
	[DT_DTYPE_UINT4] = 4,
	[DT_DTYPE_UINT32] = 32,
	[DT_DTYPE_COMPLEX_FP32] = 64,
	[DT_DTYPE_COMPLEX_FP64] = 128,
};

const char *dt_dtype_name(int64_t dtype, char *buf, size_t size)
{
	if (dtype < 0)
		return "?";
	return dt_enum_short("cudnnDataType_t", dtype, "CUDNN_DATA_", buf,
			     size);
}

int dt_dtype_bits(int64_t dtype)
{
	return dtype >= 0 && dtype < DT_DTYPE_COUNT ? dtype_bits[dtype] : 0;
}

int64_t dt_dtype_by_name(const char *name, size_t len)
{
	char full[64];

	if (len > 40)
		return -1;
	snprintf(full, sizeof(full), "%s%.*s",
		 len > 11 && !memcmp(name, "CUDNN_DATA_", 11) ? ""
							      : "CUDNN_DATA_",
		 (int)len, name);
	return dt_enum_value("cudnnDataType_t", full, -1);
}

const char *dt_status_name(int64_t status)
{
	return dt_enum_name("cudnnStatus_t", 13, status);
}

const char *dt_status_str(int64_t status, char *buf, size_t size)
{
	return dt_enum_short("cudnnStatus_t", status, NULL, buf, size);
}

const char *dt_api_short(const char *name)
{
	return strncmp(name, "cudnn", 5) ? name : name + 5;
}

/* Element layout of each cudnnBackendAttributeType_t, by value. */
static const struct {
	char code; /* 'p' pointer, 'e' enum, 'i'/'u' int, 'f' float,
		      'b' bool, 'c' char, 'r' fraction */
	uint8_t size;
	const char *type; /* the enum's type, for 'e' */
} backend_types[] = {
	[0] = { 'p', 8, NULL }, /* HANDLE */
	[1] = { 'e', 4, "cudnnDataType_t" },
	[2] = { 'b', 1, NULL }, /* BOOLEAN */
	[3] = { 'i', 8, NULL }, /* INT64 */
	[4] = { 'f', 4, NULL }, /* FLOAT */
	[5] = { 'f', 8, NULL }, /* DOUBLE */
	[6] = { 'p', 8, NULL }, /* VOID_PTR */
	[7] = { 'e', 4, "cudnnConvolutionMode_t" },
	[8] = { 'e', 4, "cudnnBackendHeurMode_t" },
	[9] = { 'e', 4, "cudnnBackendKnobType_t" },
	[10] = { 'e', 4, "cudnnNanPropagation_t" },
	[11] = { 'e', 4, "cudnnBackendNumericalNote_t" },
	[12] = { 'e', 4, "cudnnBackendLayoutType_t" },
	[13] = { 'e', 4, "cudnnBackendAttributeName_t" },
	[14] = { 'e', 4, "cudnnPointwiseMode_t" },
	[15] = { 'p', 8, NULL }, /* BACKEND_DESCRIPTOR */
	[16] = { 'e', 4, "cudnnGenStatsMode_t" },
	[17] = { 'e', 4, "cudnnBnFinalizeStatsMode_t" },
	[18] = { 'e', 4, "cudnnReduceTensorOp_t" },
	[19] = { 'e', 4, "cudnnBackendBehaviorNote_t" },
	[20] = { 'e', 4, "cudnnBackendTensorReordering_t" },
	[21] = { 'e', 4, "cudnnResampleMode_t" },
	[22] = { 'e', 4, "cudnnPaddingMode_t" },
	[23] = { 'i', 4, NULL }, /* INT32 */
	[24] = { 'c', 1, NULL }, /* CHAR */
	[25] = { 'e', 4, "cudnnSignalMode_t" },
	[26] = { 'r', 16, NULL }, /* FRACTION */
	[27] = { 'e', 4, "cudnnBackendNormMode_t" },
	[28] = { 'e', 4, "cudnnBackendNormFwdPhase_t" },
	[29] = { 'e', 4, "cudnnRngDistribution_t" },
	[30] = { 'e', 4, "cudnnMoeGroupedMatmulMode_t" },
};

uint32_t dt_backend_type_size(int64_t type)
{
	if (type < 0 ||
	    (size_t)type >= sizeof(backend_types) / sizeof(backend_types[0]))
		return 0;
	return backend_types[type].size;
}

int dt_backend_payload_format(int64_t type, const uint8_t *p, uint32_t n,
			      char *buf, size_t size)
{
	int len = 0;

	if (type < 0 ||
	    (size_t)type >= sizeof(backend_types) / sizeof(backend_types[0]) ||
	    !backend_types[type].size || n % backend_types[type].size)
		return -1;
	uint32_t es = backend_types[type].size, count = n / es;
	char code = backend_types[type].code;
	if (code == 'c') {
		APPEND("\"%.*s\"", (int)strnlen((const char *)p, n), p);
		return len;
	}
	if (count != 1)
		dt_put(buf, size, &len, "[", 1);
	for (uint32_t i = 0; i < count; i++, p += es) {
		int64_t iv = 0;
		uint64_t uv = 0;
		const char *name;

		if (i)
			dt_put(buf, size, &len, ",", 1);
		memcpy(&uv, p, es < 8 ? es : 8);
		iv = es == 4 ? (int32_t)uv : (int64_t)uv;
		switch (code) {
		case 'p':
			if (uv)
				dt_put_hex(buf, size, &len, uv);
			else
				dt_put(buf, size, &len, "NULL", 4);
			break;
		case 'e':
			name = dt_enum_name(backend_types[type].type,
					    strlen(backend_types[type].type),
					    iv);
			if (name)
				dt_put_s(buf, size, &len, name);
			else
				dt_put_i64(buf, size, &len, iv);
			break;
		case 'b':
			dt_put_s(buf, size, &len, uv ? "true" : "false");
			break;
		case 'f':
			if (es == 4) {
				float f;
				memcpy(&f, p, 4);
				dt_put_g(buf, size, &len, f);
			} else {
				double d;
				memcpy(&d, p, 8);
				dt_put_g(buf, size, &len, d);
			}
			break;
		case 'r': {
			int64_t num, den;
			memcpy(&num, p, 8);
			memcpy(&den, p + 8, 8);
			APPEND("%" PRId64 "/%" PRId64, num, den);
			break;
		}
		default:
			dt_put_i64(buf, size, &len, iv);
		}
	}
	if (count != 1)
		dt_put(buf, size, &len, "]", 1);
	return len;
}

/*
 * The algorithm search results of cudnnFind... and cudnnGet..._v7: arrays of
 * cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t, which share one
 * layout (part of cuDNN's ABI): int algo, int status, float time (ms),
 * size_t memory, int determinism, int mathType, int reserved[3].
 */
#define PERF_SIZE 48
static int format_perf(const char *type, size_t type_len, const uint8_t *p,
		       uint32_t n, char *buf, size_t size)
{
	static const char *const algo_types[][2] = {
		{ "cudnnConvolutionFwdAlgoPerf_t",
		  "cudnnConvolutionFwdAlgo_t" },
		{ "cudnnConvolutionBwdDataAlgoPerf_t",
		  "cudnnConvolutionBwdDataAlgo_t" },
		{ "cudnnConvolutionBwdFilterAlgoPerf_t",
		  "cudnnConvolutionBwdFilterAlgo_t" },
	};
	const char *algo_type = NULL;
	int len = 0;

	for (size_t i = 0; i < 3; i++)
		if (strlen(algo_types[i][0]) == type_len &&
		    !memcmp(type, algo_types[i][0], type_len))
			algo_type = algo_types[i][1];
	if (!algo_type || n % PERF_SIZE)
		return -1;
	APPEND("[");
	for (uint32_t i = 0; i < n / PERF_SIZE; i++, p += PERF_SIZE) {
		int32_t algo, status, det, math;
		float time;
		uint64_t mem;
		const char *an, *sn;
		char ab[64], sb[64];

		memcpy(&algo, p, 4);
		memcpy(&status, p + 4, 4);
		memcpy(&time, p + 8, 4);
		memcpy(&mem, p + 16, 8);
		memcpy(&det, p + 24, 4);
		memcpy(&math, p + 28, 4);
		an = dt_enum_short(algo_type, algo, NULL, ab, sizeof(ab));
		sn = dt_status_str(status, sb, sizeof(sb));
		APPEND("%s{algo=%s status=%s time=%gms workspace=%" PRIu64
		       " deterministic=%d math=%d}",
		       i ? " " : "", an, sn, time, mem, det, math);
	}
	APPEND("]");
	return len;
}

int dt_call_format(const char *api_name, const char *sig, const uint8_t *args,
		   uint32_t arglen, char *buf, size_t size)
{
	struct dt_args_iter it;
	struct dt_arg a[64];
	int n = 0, rc;

	if (size)
		buf[0] = 0;
	dt_args_begin(&it, sig, args, arglen);
	while (n < 64 && (rc = dt_args_next(&it, &a[n])) == 1)
		n++;
	if (n == 64 || rc < 0)
		return -1;
	return dt_args_format(api_name, a, n, buf, size);
}

int dt_arg_value_format(const char *api_name, const struct dt_arg *args,
			int n, int i, char *buf, size_t size)
{
	const struct dt_arg *a = &args[i];
	const char *name = a->code == 'e'
				   ? dt_enum_name(a->type, a->type_len, a->i)
				   : NULL;
	int len = 0;

	if (size)
		buf[0] = 0;
	if (name) {
		dt_put_s(buf, size, &len, name);
		return len;
	}
	/* a backend attribute's payload, decoded by the attributeType
	 * argument before it */
	if (a->code == 'x' && api_name &&
	    (!strcmp(api_name, "cudnnBackendSetAttribute") ||
	     !strcmp(api_name, "cudnnBackendGetAttribute")))
		for (int k = 0; k < i && k < n; k++)
			if (args[k].name_len == 13 &&
			    !memcmp(args[k].name, "attributeType", 13)) {
				int l = dt_backend_payload_format(
					args[k].i, a->data, a->count, buf, size);
				if (l >= 0)
					return l;
			}
	if (a->code == 'x' && a->type) {
		int l = format_perf(a->type, a->type_len, a->data, a->count,
				    buf, size);
		if (l >= 0)
			return l;
	}
	/* a scalar read as raw bytes, in the type its library's decoder
	 * says the call gives it */
	double re, im;
	if (a->code == 'm' && a->count &&
	    dt_scalar_value(a->data, a->count,
			    dt_scalar_dtype(api_name, args, n, i), &re, &im)) {
		dt_put_g(buf, size, &len, re);
		if (im != 0) {
			dt_put_s(buf, size, &len, im < 0 ? "-" : "+");
			dt_put_g(buf, size, &len, fabs(im));
			dt_put_s(buf, size, &len, "i");
		}
		return len;
	}
	dt_arg_put(a, buf, size, &len);
	return len;
}

/* The most of one value dt_args_format() prints, with its NUL. */
#define VALUE_MAX 2048

int dt_args_format(const char *api_name, const struct dt_arg *args, int n,
		   char *buf, size_t size)
{
	int len = 0;

	if (size)
		buf[0] = 0;
	for (int i = 0; i < n; i++) {
		const struct dt_arg *a = &args[i];
		if (i)
			dt_put(buf, size, &len, ", ", 2);
		dt_put(buf, size, &len, a->name, a->name_len);
		dt_put(buf, size, &len, a->out ? "=>" : "=", a->out ? 2 : 1);
		/* formatted in place, and cut as a value of its own would be */
		char none;
		size_t room = (size_t)len < size ? size - (size_t)len : 0;
		int k = dt_arg_value_format(api_name, args, n, i,
					    room ? buf + len : &none,
					    room < VALUE_MAX ? room : VALUE_MAX);
		if (k >= VALUE_MAX) {
			k = VALUE_MAX - 1;
			if (room > VALUE_MAX - 1)
				buf[len + k] = 0;
		}
		len += k;
	}
	return len;
}

const char *dt_fmt_bytes(uint64_t n, char *buf, size_t size)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, size, "%.1f %s", v, unit[u]);
	return buf;
}

const char *dt_fmt_ns(uint64_t ns, char *buf, size_t size)
{
	if (ns < 10000)
		snprintf(buf, size, "%llu ns", (unsigned long long)ns);
	else if (ns < 10000000)
		snprintf(buf, size, "%.1f us", ns / 1e3);
	else if (ns < 10000000000ull)
		snprintf(buf, size, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.2f s", ns / 1e9);
	return buf;
}

const char *dt_fmt_cudnn_version(const char *v, char *buf, size_t size)
{
	char *end;
	long n = v ? strtol(v, &end, 10) : 0;

	if (!v || *end || end == v || n <= 0)
		snprintf(buf, size, "%s", v ? v : "?");
	else if (n >= 90000) /* 9.x: major * 10000 + minor * 100 + patch */
		snprintf(buf, size, "%ld.%ld.%ld", n / 10000, n / 100 % 100,
			 n % 100);
	else /* 8.x and before: major * 1000 + minor * 100 + patch */
		snprintf(buf, size, "%ld.%ld.%ld", n / 1000, n / 100 % 10,
			 n % 100);
	return buf;
}

const char *dt_fmt_cuda_version(const char *v, char *buf, size_t size)
{
	char *end;
	long n = v ? strtol(v, &end, 10) : 0;

	if (!v || *end || end == v || n <= 0)
		snprintf(buf, size, "%s", v ? v : "?");
	else /* major * 1000 + minor * 10 */
		snprintf(buf, size, "%ld.%ld", n / 1000, n % 1000 / 10);
	return buf;
}
