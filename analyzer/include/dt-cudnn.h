/*
 * dt-cudnn.h - cuDNN's names (its enums, statuses and functions, as the
 * generated table has them), the analyzer's data types (numbered as
 * cuDNN's), and how versions print. Part of analyzer/'s public interface;
 * dt-analyzer.h includes every part.
 */
#ifndef DT_CUDNN_H
#define DT_CUDNN_H

#include "dt-args.h"

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

/* The analyzer's data types, whatever library an op came from: each
 * decoder maps its library's numbering to these (the cuDNN decoder by
 * name, CUDNN_DATA_BFLOAT16 to BFLOAT16). They are numbered as
 * cudnnDataType_t was when the analyzer read cuDNN alone; the one table
 * of them (analyzer-cudnn.c) holds each type's name and size, and a test
 * checks it against the generated table of cuDNN's enum names. */
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

/* A version number as cuDNN (91900 -> "9.19.0", 8907 -> "8.9.7") or CUDA
 * (13000 -> "13.0") gives it; the text itself when it is no number. */
const char *dt_fmt_cudnn_version(const char *v, char *buf, size_t size);
const char *dt_fmt_cuda_version(const char *v, char *buf, size_t size);

#endif /* DT_CUDNN_H */
