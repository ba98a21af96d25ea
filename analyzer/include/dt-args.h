/*
 * dt-args.h - decoding a call's argument bytes with the signature its trace
 * recorded (trace/FORMAT.md, "Call arguments"), and printing them and other
 * values: for the model, `dump` and the exports. Part of analyzer/'s public
 * interface; dt-analyzer.h includes every part.
 */
#ifndef DT_ARGS_H
#define DT_ARGS_H

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
				'x' bytes; 'k' host scalar; 'm' scalar
				under a pointer mode; 's' string */
	char elem;           /* for 'a': the element's code */
	uint8_t width;       /* scalar or array element width in bytes */
	uint64_t u;          /* scalar value, zero-extended; 'm': pointer */
	int64_t i;           /* scalar value, sign-extended; 'm': the pointer
				mode, -1 when unknown */
	double f;            /* 'f' scalars; 'k' 'm': the float reading */
	const uint8_t *data; /* 'a' 'x' 'k' 'm' 's': the bytes */
	uint32_t count;      /* 'a': elements; 'x' 'k' 'm' 's': bytes */
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

/* A 'k' (or 'm') argument's value for display when the call's data type is not at
 * hand: the double reading when the bytes look like a double, else the
 * float reading. Analyses that know the data type pick it themselves. */
double dt_hostscalar_guess(const struct dt_arg *a);

/* A scalar of type dtype (enum dt_dtype: FLOAT, DOUBLE, HALF, BFLOAT16,
 * INT32, COMPLEX_FP32, COMPLEX_FP64) from its n bytes at p: its real part
 * in *re, its imaginary part in *im (0 for a real type). False when n is
 * short of the type, or the type is none of those. */
bool dt_scalar_value(const uint8_t *p, uint32_t n, int64_t dtype, double *re,
		     double *im);

/* The argument of those n (decoded) named name, or NULL: decoders read
 * calls by their parameters' names. */
const struct dt_arg *dt_arg_named(const struct dt_arg *args, int n,
				  const char *name);

/* Element i of an 'a' argument, as signed or unsigned 64-bit. */
int64_t dt_arg_elem_i(const struct dt_arg *a, uint32_t i);
uint64_t dt_arg_elem_u(const struct dt_arg *a, uint32_t i);

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

/* Bytes of one element of a cudnnBackendAttributeType_t's payload, 0 for
 * a type not known. */
uint32_t dt_backend_type_size(int64_t type);

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

#endif /* DT_ARGS_H */
