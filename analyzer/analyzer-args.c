/*
 * analyzer-args.c - decodes the argument bytes of an API_CALL record with
 * the API's signature string. Trusts neither: every length is checked
 * against the bytes that remain.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-args.h"
#include "dt-cudnn.h"
#include "analyzer-util.h"

void dt_args_begin(struct dt_args_iter *it, const char *sig,
		   const uint8_t *args, uint32_t len)
{
	it->sig = sig ? sig : "";
	it->p = args;
	it->end = args + len;
}

static int scalar_width(char c, const char **s)
{
	switch (c) {
	case 'e':
		return 4;
	case 'p':
		return 8;
	case 'f': /* float or double only */
		if (**s == '4' || **s == '8')
			return *(*s)++ - '0';
		return -1;
	case 'i':
	case 'u':
		if (**s == '1' || **s == '2' || **s == '4' || **s == '8')
			return *(*s)++ - '0';
		return -1;
	default:
		return -1;
	}
}

static bool take(struct dt_args_iter *it, void *dst, size_t n)
{
	if ((size_t)(it->end - it->p) < n)
		return false;
	memcpy(dst, it->p, n);
	it->p += n;
	return true;
}

static inline __attribute__((always_inline)) void set_scalar(struct dt_arg *a,
							     const uint8_t *src)
{
	uint64_t v = 0;

	if (a->code == 'p') { /* most arguments */
		memcpy(&a->u, src, 8);
		a->i = (int64_t)a->u;
		return;
	}

	/* widths are 1, 2, 4 or 8: fixed-size loads, not a memcpy call */
	switch (a->width) {
	case 1:
		v = src[0];
		break;
	case 2: {
		uint16_t x;
		memcpy(&x, src, 2);
		v = x;
		break;
	}
	case 4: {
		uint32_t x;
		memcpy(&x, src, 4);
		v = x;
		break;
	}
	default:
		memcpy(&v, src, 8);
	}
	a->u = v;
	a->i = (int64_t)v;
	if (a->width < 8 && (v >> (a->width * 8 - 1)) & 1)
		a->i = (int64_t)(v | ~0ull << (a->width * 8));
	if (a->code == 'u' || a->code == 'p')
		a->i = (int64_t)v;
	if (a->code == 'f') {
		if (a->width == 4) {
			float f;
			memcpy(&f, src, 4);
			a->f = f;
		} else {
			memcpy(&a->f, src, 8);
		}
	}
}

/* A scalar under a pointer mode ('m'): its pointer (u), the mode (i), the
 * bytes read from host memory (data, count; f: their float reading). */
static bool take_modal(const uint8_t **pp, const uint8_t *end, struct dt_arg *a)
{
	const uint8_t *p = *pp;
	int32_t mode;
	uint32_t n;

	if (end - p < 16)
		return false;
	memcpy(&a->u, p, 8);
	memcpy(&mode, p + 8, 4);
	memcpy(&n, p + 12, 4);
	p += 16;
	if (n > (uint64_t)(end - p))
		return false;
	a->i = mode;
	a->count = n;
	a->data = p;
	a->f = 0;
	if (n >= 4) {
		float f;
		memcpy(&f, p, 4);
		a->f = f;
	}
	*pp = p + n;
	return true;
}

int dt_args_next(struct dt_args_iter *it, struct dt_arg *a)
{
	const char *s = it->sig;
	const char *colon;
	uint8_t buf[8];
	uint32_t n;

	if (*s == 0)
		return it->p == it->end ? 0 : -1;
	memset(a, 0, sizeof(*a));
	colon = strchr(s, ':');
	if (!colon)
		return -1;
	a->name = s;
	a->name_len = (uint32_t)(colon - s);
	s = colon + 1;
	if (*s == '>') {
		a->out = true;
		s++;
	}
	a->code = *s++;
	switch (a->code) {
	case 'a': {
		a->elem = *s++;
		int w = scalar_width(a->elem, &s);
		if (w < 0 || !take(it, &n, 4) ||
		    (uint64_t)n * (uint32_t)w > (uint64_t)(it->end - it->p))
			return -1;
		a->width = (uint8_t)w;
		a->count = n;
		a->data = it->p;
		it->p += (size_t)n * (uint32_t)w;
		break;
	}
	case 'x':
	case 'k':
	case 's':
		if (!take(it, &n, 4) || n > (uint64_t)(it->end - it->p))
			return -1;
		a->count = n;
		a->data = it->p;
		it->p += n;
		if (a->code == 'k' && n >= 4) {
			/* the float reading; 'f' holds the double one */
			float f;
			memcpy(&f, a->data, 4);
			a->f = f;
		}
		break;
	case 'm':
		if (!take_modal(&it->p, it->end, a))
			return -1;
		break;
	default: {
		int w = scalar_width(a->code, &s);
		if (w < 0 || !take(it, buf, (size_t)w))
			return -1;
		a->width = (uint8_t)w;
		set_scalar(a, buf);
	}
	}
	if (*s == '=') {
		a->type = ++s;
		while (*s && *s != ',')
			s++;
		a->type_len = (uint32_t)(s - a->type);
	}
	if (*s == ',')
		s++;
	else if (*s)
		return -1;
	it->sig = s;
	return 1;
}

struct dt_sig *dt_sig_parse(const char *sig)
{
	struct dt_args_iter it;
	struct dt_arg a;
	int n = 0, rc;
	/* walk the signature with bytes that always suffice: a count field
	 * of 0 for every variable-length argument */
	static const uint8_t zeros[16 * 64];

	if (!sig)
		return NULL;
	for (const char *p = sig; *p; p++)
		n += *p == ',';
	n += *sig != 0;
	if (n > 64)
		return NULL;
	struct dt_sig *s = malloc(sizeof(*s) + (size_t)n * sizeof(s->proto[0]));
	if (!s)
		return NULL;
	s->n = 0;
	dt_args_begin(&it, sig, zeros, sizeof(zeros));
	while (s->n < n && (rc = dt_args_next(&it, &a)) == 1) {
		a.u = 0;
		a.i = 0;
		a.f = 0;
		a.data = NULL;
		a.count = 0;
		s->proto[s->n++] = a;
	}
	if (s->n != n || *it.sig) {
		free(s);
		return NULL;
	}
	return s;
}

int dt_sig_decode(const struct dt_sig *s, const uint8_t *p, uint32_t len,
		  struct dt_arg *out, int max)
{
	if (s->n > max)
		return -1;
	memcpy(out, s->proto, (size_t)s->n * sizeof(*out));
	return dt_sig_decode_values(s, p, len, out);
}

int dt_sig_decode_values(const struct dt_sig *s, const uint8_t *p, uint32_t len,
			 struct dt_arg *out)
{
	const uint8_t *end = p + len;
	uint32_t n;

	for (int i = 0; i < s->n; i++) {
		struct dt_arg *a = &out[i];
		switch (a->code) {
		case 'p': /* most arguments */
			if (end - p < 8)
				return -1;
			memcpy(&a->u, p, 8);
			a->i = (int64_t)a->u;
			p += 8;
			break;
		case 'a':
			if (end - p < 4)
				return -1;
			memcpy(&n, p, 4);
			p += 4;
			if ((uint64_t)n * a->width > (uint64_t)(end - p))
				return -1;
			a->count = n;
			a->data = p;
			p += (size_t)n * a->width;
			break;
		case 'x':
		case 'k':
		case 's':
			if (end - p < 4)
				return -1;
			memcpy(&n, p, 4);
			p += 4;
			if (n > (uint64_t)(end - p))
				return -1;
			a->count = n;
			a->data = p;
			p += n;
			a->f = 0;
			if (a->code == 'k' && n >= 4) {
				float f;
				memcpy(&f, a->data, 4);
				a->f = f;
			}
			break;
		case 'm':
			if (!take_modal(&p, end, a))
				return -1;
			break;
		default:
			if (end - p < a->width)
				return -1;
			set_scalar(a, p);
			p += a->width;
		}
	}
	return p == end ? s->n : -1;
}

double dt_hostscalar_guess(const struct dt_arg *a)
{
	double d;

	if (a->count < 8)
		return a->f;
	memcpy(&d, a->data, 8);
	/* A double's low half read as a float is 0 or vanishingly small; a
	 * float followed by anything reads as a tiny or huge double. */
	if (fabs(a->f) < 1e-20 &&
	    (d == 0 || (fabs(d) >= 1e-20 && fabs(d) <= 1e20)))
		return d;
	return a->f;
}

uint64_t dt_arg_elem_u(const struct dt_arg *a, uint32_t i)
{
	uint64_t v = 0;

	if (i < a->count)
		memcpy(&v, a->data + (size_t)i * a->width, a->width);
	return v;
}

int64_t dt_arg_elem_i(const struct dt_arg *a, uint32_t i)
{
	uint64_t v = dt_arg_elem_u(a, i);

	if (a->width < 8 && (v >> (a->width * 8 - 1)) & 1)
		v |= ~0ull << (a->width * 8);
	return (int64_t)v;
}

/* Element i of an array, appended to buf. */
static void put_elem(char code, const struct dt_arg *a, uint32_t i, char *buf,
		     size_t size, int *plen)
{
	int len = *plen;

	if (code == 'p')
		dt_put_hex(buf, size, &len, dt_arg_elem_u(a, i));
	else if (code == 'u')
		dt_put_u64(buf, size, &len, dt_arg_elem_u(a, i));
	else if (code == 'f') {
		double d;
		if (a->width == 4) {
			float f;
			memcpy(&f, a->data + (size_t)i * 4, 4);
			d = f;
		} else {
			memcpy(&d, a->data + (size_t)i * 8, 8);
		}
		dt_put_g(buf, size, &len, d);
	} else
		dt_put_i64(buf, size, &len, dt_arg_elem_i(a, i));
	*plen = len;
}

/* An IEEE half (a cuBLAS __half scalar) as a double. */
static double half_value(const uint8_t *p)
{
	uint16_t h = (uint16_t)(p[0] | p[1] << 8);
	int exp = (h >> 10) & 31, man = h & 1023;
	double v = exp == 0    ? ldexp(man, -24)
		   : exp == 31 ? (man ? NAN : INFINITY)
			       : ldexp(man + 1024, exp - 25);

	return h & 0x8000 ? -v : v;
}

/* A bfloat16: a float's upper half. */
static double bf16_value(const uint8_t *p)
{
	uint32_t u = (uint32_t)(p[0] | p[1] << 8) << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

bool dt_scalar_value(const uint8_t *p, uint32_t n, int64_t dtype, double *re,
		     double *im)
{
	float f[2];
	int32_t i;

	*im = 0;
	switch (dtype) {
	case DT_DTYPE_HALF:
		if (n < 2)
			return false;
		*re = half_value(p);
		return true;
	case DT_DTYPE_BFLOAT16:
		if (n < 2)
			return false;
		*re = bf16_value(p);
		return true;
	case DT_DTYPE_INT32:
		if (n < 4)
			return false;
		memcpy(&i, p, 4);
		*re = i;
		return true;
	case DT_DTYPE_FLOAT:
	case DT_DTYPE_COMPLEX_FP32:
		if (n < (dtype == DT_DTYPE_FLOAT ? 4u : 8u))
			return false;
		memcpy(f, p, dtype == DT_DTYPE_FLOAT ? 4 : 8);
		*re = f[0];
		*im = dtype == DT_DTYPE_FLOAT ? 0 : f[1];
		return true;
	case DT_DTYPE_DOUBLE:
	case DT_DTYPE_COMPLEX_FP64:
		if (n < (dtype == DT_DTYPE_DOUBLE ? 8u : 16u))
			return false;
		memcpy(re, p, 8);
		if (dtype == DT_DTYPE_COMPLEX_FP64)
			memcpy(im, p + 8, 8);
		return true;
	default:
		return false;
	}
}

int dt_arg_format(const struct dt_arg *a, char *buf, size_t size)
{
	int len = 0;

	if (size)
		buf[0] = 0;
	dt_arg_put(a, buf, size, &len);
	return len;
}

void dt_arg_put(const struct dt_arg *a, char *buf, size_t size, int *plen)
{
	int len = *plen;

	switch (a->code) {
	case 'p':
		if (a->u)
			dt_put_hex(buf, size, &len, a->u);
		else
			dt_put(buf, size, &len, "NULL", 4);
		break;
	case 'u':
		dt_put_u64(buf, size, &len, a->u);
		break;
	case 'i':
	case 'e':
		dt_put_i64(buf, size, &len, a->i);
		break;
	case 'f':
		dt_put_g(buf, size, &len, a->f);
		break;
	case 'a':
		dt_put(buf, size, &len, "[", 1);
		for (uint32_t i = 0; i < a->count; i++) {
			if (i)
				dt_put(buf, size, &len, ",", 1);
			put_elem(a->elem, a, i, buf, size, &len);
		}
		dt_put(buf, size, &len, "]", 1);
		break;
	case 'k':
		if (a->count == 0)
			APPEND("NULL");
		else
			dt_put_g(buf, size, &len, dt_hostscalar_guess(a));
		break;
	case 'm': /* read on the host; else where it points, in which mode */
		if (a->count == 2)
			dt_put_g(buf, size, &len, half_value(a->data));
		else if (a->count >= 4)
			dt_put_g(buf, size, &len, dt_hostscalar_guess(a));
		else if (!a->u)
			APPEND("NULL");
		else if (a->i >= 0)
			APPEND("0x%" PRIx64 " (mode %" PRId64 ")", a->u, a->i);
		else
			APPEND("0x%" PRIx64, a->u);
		break;
	case 's':
		APPEND("\"");
		for (uint32_t i = 0; i < a->count; i++) {
			unsigned char c = a->data[i];
			if (c == '"' || c == '\\')
				APPEND("\\%c", c);
			else if (c < 32 || c >= 127)
				APPEND("\\x%02x", c);
			else
				APPEND("%c", c);
		}
		APPEND("\"");
		break;
	case 'x':
		APPEND("<%u bytes", a->count);
		for (uint32_t i = 0; i < a->count && i < 64; i++)
			APPEND("%s%02x", i ? "" : ": ", a->data[i]);
		APPEND("%s>", a->count > 64 ? "..." : "");
		break;
	}
	*plen = len;
}

const struct dt_arg *dt_arg_named(const struct dt_arg *args, int n,
				  const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < n; i++)
		if (args[i].name_len == len && !memcmp(args[i].name, name, len))
			return &args[i];
	return NULL;
}
