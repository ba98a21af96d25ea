/*
 * dt-analyzer.h - turning raw trace records into meaning.
 *
 * Public header of analyzer/. For now: decoding a call's argument bytes
 * with the signature its trace file recorded for the API (trace/FORMAT.md,
 * "Call arguments"). Includes no CUDA header: a trace is analyzed with
 * only what the trace itself says.
 */
#ifndef DT_ANALYZER_H
#define DT_ANALYZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The cudnnStatus_t's name, or NULL for a value cuDNN does not define. */
const char *dt_status_name(int64_t status);

/*
 * Print a call's arguments as `dnntrace dump` shows them: name=value,
 * enums by name, and the payloads of cudnnBackendSetAttribute and
 * cudnnBackendGetAttribute decoded by their attribute type. Returns the
 * length snprintf would have written, or -1 when the bytes do not match the
 * signature.
 */
int dt_call_format(const char *api_name, const char *sig, const uint8_t *args,
		   uint32_t len, char *buf, size_t size);

#endif /* DT_ANALYZER_H */
