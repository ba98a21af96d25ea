/*
 * replay-data.c - the data a rebuilt problem runs on: device memory for
 * each of its tensors, of its recorded size and type, filled with seeded
 * random data in a sensible range; the same data again before a run whose
 * outputs are compared; every tensor read back after one run, and held
 * against the recorded engine's, with a tolerance by data type. And the
 * timing of one candidate on it. Whatever the problem is (a backend
 * graph, replay-graph.c; a legacy call, replay-legacy.c).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-internal.h"

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

uint16_t data_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
	uint32_t m = x & 0x7fffff;
	if (e <= 0)
		return (uint16_t)sign; /* small values: zero */
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	return (uint16_t)(sign | (uint32_t)e << 10 | m >> 13);
}

static float from_half(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f,
		 m = h & 0x3ff, x;
	float f;
	if (!e) { /* zero or subnormal */
		f = ldexpf((float)m, -24);
		return sign ? -f : f;
	}
	x = sign | (e == 31 ? 0xff : e - 15 + 127) << 23 | m << 13;
	memcpy(&f, &x, 4);
	return f;
}

static uint16_t u16_at(const uint8_t *b, size_t i)
{
	uint16_t h;

	memcpy(&h, b + 2 * i, 2);
	return h;
}

/* Element i of a buffer of type dtype, as a double; NAN for a type not
 * compared. */
static double elem(const void *p, int64_t dtype, size_t i)
{
	const uint8_t *b = p;
	float f;
	uint32_t x;

	switch (dtype) {
	case DT_DTYPE_FLOAT:
		memcpy(&f, b + 4 * i, 4);
		return f;
	case DT_DTYPE_DOUBLE: {
		double d;
		memcpy(&d, b + 8 * i, 8);
		return d;
	}
	case DT_DTYPE_HALF:
		return from_half(u16_at(b, i));
	case DT_DTYPE_BFLOAT16:
		x = (uint32_t)u16_at(b, i) << 16;
		memcpy(&f, &x, 4);
		return f;
	case DT_DTYPE_INT8:
		return (int8_t)b[i];
	case DT_DTYPE_UINT8:
	case DT_DTYPE_BOOLEAN:
		return b[i];
	case DT_DTYPE_INT32: {
		int32_t v;
		memcpy(&v, b + 4 * i, 4);
		return v;
	}
	case DT_DTYPE_INT64: {
		int64_t v;
		memcpy(&v, b + 8 * i, 8);
		return (double)v;
	}
	default:
		return NAN;
	}
}

/* Seeded data of a sensible range for its type: [-1, 1) for floating
 * point, small integers (that may be lengths or indices) otherwise. */
static void fill(void *p, int64_t dtype, size_t bytes, uint64_t seed)
{
	uint8_t *b = p;
	int bits = dt_dtype_bits(dtype);
	size_t n = bits >= 8 ? bytes / (size_t)(bits / 8) : bytes;
	uint64_t s = seed | 1;

	for (size_t i = 0; i < n; i++) {
		uint64_t r = rng_next(&s);
		float f = (float)((double)(r >> 11) * 0x1p-53 * 2 - 1);
		switch (dtype) {
		case DT_DTYPE_FLOAT:
			memcpy(b + 4 * i, &f, 4);
			break;
		case DT_DTYPE_DOUBLE: {
			double d = f;
			memcpy(b + 8 * i, &d, 8);
			break;
		}
		case DT_DTYPE_HALF: {
			uint16_t h = data_half(f);
			memcpy(b + 2 * i, &h, 2);
			break;
		}
		case DT_DTYPE_BFLOAT16: {
			uint32_t x;
			memcpy(&x, &f, 4);
			uint16_t h = (uint16_t)(x >> 16);
			memcpy(b + 2 * i, &h, 2);
			break;
		}
		case DT_DTYPE_INT32: {
			int32_t v = (int32_t)(r % 8) + 1;
			memcpy(b + 4 * i, &v, 4);
			break;
		}
		case DT_DTYPE_INT64: {
			int64_t v = (int64_t)(r % 8) + 1;
			memcpy(b + 8 * i, &v, 8);
			break;
		}
		case DT_DTYPE_BOOLEAN:
			b[i] = r & 1;
			break;
		default: /* int8 and the 8-bit floats: small values */
			b[i] = (uint8_t)((r % 16) - 8);
			break;
		}
	}
}

/* A by-value scalar (a scale the program passed by value): the trace
 * keeps where it was, not its value, so it is 1 of its type. */
static void one(void *p, int64_t dtype)
{
	float f = 1;
	double d = 1;
	uint16_t h = dtype == DT_DTYPE_HALF ? 0x3c00 : 0x3f80;

	if (dtype == DT_DTYPE_DOUBLE)
		memcpy(p, &d, 8);
	else if (dtype == DT_DTYPE_HALF || dtype == DT_DTYPE_BFLOAT16)
		memcpy(p, &h, 2);
	else
		memcpy(p, &f, 4);
}

bool data_add(struct data *d, int64_t uid, int64_t dtype, size_t span,
	      bool by_value, char *why, size_t whylen)
{
	if (d->n == BUFS_MAX) {
		snprintf(why, whylen, "more than %d tensors", BUFS_MAX);
		return false;
	}
	struct buf *t = &d->bufs[d->n++];
	int bits = dt_dtype_bits(dtype);
	*t = (struct buf){ .uid = uid, .dtype = dtype, .by_value = by_value };
	if (!bits || !span) {
		snprintf(why, whylen,
			 "tensor #%lld: its type or shape is not in the trace",
			 (long long)uid);
		return false;
	}
	t->bytes = (span * (size_t)bits + 7) / 8;
	t->host = calloc(1, t->bytes < 16 ? 16 : t->bytes);
	if (!t->host) {
		snprintf(why, whylen, "out of host memory");
		return false;
	}
	if (by_value) {
		one(t->host, dtype);
		return true;
	}
	fill(t->host, dtype, t->bytes, 0x9e3779b97f4a7c15ull ^ (uint64_t)uid);
	t->dev = gpu_alloc(d->g, t->bytes);
	if (!t->dev) {
		snprintf(why, whylen,
			 "tensor #%lld needs %zu bytes of GPU memory, more "
			 "than replay may take",
			 (long long)uid, t->bytes);
		return false;
	}
	return true;
}

void data_free(struct data *d)
{
	for (size_t i = 0; i < d->n; i++) {
		gpu_free(d->g, d->bufs[i].dev, d->bufs[i].bytes);
		free(d->bufs[i].host);
	}
	d->n = 0;
}

bool data_refill(struct data *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->bufs[i].dev &&
		    d->g->cuMemcpyHtoD(d->bufs[i].dev, d->bufs[i].host,
				       d->bufs[i].bytes))
			return false;
	return true;
}

/* How far outputs of a type may be from the recorded engine's, as a
 * fraction of their largest magnitude. */
static double tolerance(int64_t dtype)
{
	switch (dtype) {
	case DT_DTYPE_DOUBLE:
		return 1e-9;
	case DT_DTYPE_FLOAT: /* TF32 engines among FP32 ones */
		return 1e-2;
	case DT_DTYPE_HALF:
		return 1e-2;
	case DT_DTYPE_BFLOAT16:
		return 4e-2;
	default:
		return dt_dtype_bits(dtype) == 8 ? 0.15 : 0;
	}
}

/* Most host memory an output snapshot may take. */
#define SNAP_MAX (512u << 20)

/* One run from the seeded data, every tensor read back into snap. */
static bool snapshot(struct data *d, bool (*run)(void *), void *arg,
		     uint8_t **snap)
{
	size_t total = 0;

	for (size_t i = 0; i < d->n; i++)
		total += d->bufs[i].dev ? d->bufs[i].bytes : 0;
	if (total > SNAP_MAX || !data_refill(d) || !run(arg) ||
	    d->g->cuStreamSynchronize(d->g->stream))
		return false;
	*snap = malloc(total ? total : 1);
	size_t at = 0;
	for (size_t i = 0; *snap && i < d->n; i++) {
		if (!d->bufs[i].dev)
			continue;
		if (d->g->cuMemcpyDtoH(*snap + at, d->bufs[i].dev,
				       d->bufs[i].bytes))
			return false;
		at += d->bufs[i].bytes;
	}
	return *snap != NULL;
}

/* The largest difference of a tensor's elements over their largest
 * magnitude in ref. */
static double tensor_error(const struct buf *t, const uint8_t *ref,
			   const uint8_t *mine)
{
	int bits = dt_dtype_bits(t->dtype);
	size_t n = bits >= 8 ? t->bytes / (size_t)(bits / 8) : 0;
	double big = 0, diff = 0;

	for (size_t k = 0; k < n; k++) {
		double x = elem(ref, t->dtype, k), y = elem(mine, t->dtype, k);
		if (isnan(x) && isnan(y))
			continue;
		big = fmax(big, fabs(x));
		diff = isnan(x) || isnan(y) ? INFINITY
					    : fmax(diff, fabs(x - y));
	}
	return big > 0 ? diff / big : diff;
}

/* c's outputs against the reference's, the worst tensor's. */
static void compare(struct data *d, bool (*run)(void *), void *arg,
		    const uint8_t *ref, struct cand *c)
{
	uint8_t *mine = NULL;

	if (!ref || !snapshot(d, run, arg, &mine)) {
		free(mine);
		return;
	}
	size_t at = 0;
	c->error = 0;
	c->agrees = 1;
	for (size_t i = 0; i < d->n; i++) {
		const struct buf *t = &d->bufs[i];
		if (!t->dev)
			continue;
		/* inputs the engine only read are the same bytes: no need
		 * to look at each element */
		double e = memcmp(ref + at, mine + at, t->bytes)
				   ? tensor_error(t, ref + at, mine + at)
				   : 0;
		c->error = fmax(c->error, e);
		if (e > tolerance(t->dtype))
			c->agrees = 0;
		at += t->bytes;
	}
	free(mine);
}

void data_time(struct data *d, bool (*run)(void *), void *arg,
	       const int *status, const struct dt_replay_opts *opts,
	       double until, struct cand *c, const uint8_t *ref, uint8_t **take)
{
	char err[160];
	/* the recorded engine is held against the trace: timed as well as
	 * the trace timed it, by its kernels, after its batches and in an
	 * eighth of its time kept for that (events' times are the ones
	 * candidates compare by) */
	bool kernels =
		d->g->cupti && c->source && !strcmp(c->source, "recorded");
	double batches_until = kernels ? until - budget_left(until) / 8 : until;

	if (!data_refill(d))
		snprintf(c->status, sizeof(c->status),
			 "its data could not be copied to the GPU");
	else if (!gpu_time(d->g, run, arg, opts->cold_cache, batches_until,
			   &c->t))
		snprintf(c->status, sizeof(c->status), "its runs failed: %s",
			 !*status ? "the GPU refused its timing"
			 : d->errors
				 ? d->errors(d->g, *status, err, sizeof(err))
				 : gpu_cudnn_error(d->g, *status, err,
						   sizeof(err)));
	else if (take && !snapshot(d, run, arg, take))
		*take = NULL;
	else if (!take)
		compare(d, run, arg, ref, c);
	if (kernels && !c->status[0])
		gpu_time_kernels(d->g, run, arg, opts->cold_cache, until,
				 &c->t);
	if (!c->status[0])
		snprintf(c->status, sizeof(c->status), "ok");
}

void data_time_recorded(struct data *d, bool (*run)(void *), void *arg,
			const int *status, const struct problem *p,
			int64_t workspace, const struct dt_replay_opts *opts,
			struct budget *b, struct cand *c, size_t *n)
{
	memset(c, 0, sizeof(*c));
	c->engine = p->engine;
	c->source = "recorded";
	c->error = -1;
	c->agrees = -1;
	c->workspace = workspace;
	*n = 1;
	if (!budget_allows(b, 0)) {
		budget_skip(c);
		return;
	}
	/* no other candidate to compare with: its outputs are not taken */
	data_time(d, run, arg, status, opts, b->until, c, NULL, NULL);
	budget_recorded(b, c);
}

bool data_scratch(struct gpu *g, uint64_t *p, size_t bytes, const char *what,
		  char *why, size_t whylen)
{
	*p = bytes ? gpu_alloc(g, bytes) : 0;
	if (bytes && !*p)
		snprintf(why, whylen,
			 "its %s (%zu bytes) is more than replay may take",
			 what, bytes);
	return !bytes || *p;
}

/* ------------------------------------------------- one run, untimed */

static struct buf *buf_of(struct data *d, int64_t uid)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->bufs[i].uid == uid && d->bufs[i].dev)
			return &d->bufs[i];
	return NULL;
}

bool data_run_io(struct data *d, bool (*run)(void *), void *arg,
		 const int *status, struct tensor_io *io, size_t n_io,
		 char *why, size_t whylen)
{
	char err[160];

	for (size_t i = 0; i < n_io; i++) {
		struct buf *t = buf_of(d, io[i].uid);
		if (!t) {
			snprintf(why, whylen, "tensor #%lld has no memory",
				 (long long)io[i].uid);
			return false;
		}
		if (io[i].in && io[i].n != t->bytes) {
			snprintf(why, whylen,
				 "tensor #%lld is %zu bytes, the step before "
				 "wrote %zu",
				 (long long)io[i].uid, t->bytes, io[i].n);
			return false;
		}
		if (io[i].in)
			memcpy(t->host, io[i].bytes, t->bytes);
	}
	if (!data_refill(d)) {
		snprintf(why, whylen,
			 "its data could not be copied to the GPU");
		return false;
	}
	if (!run(arg) || d->g->cuStreamSynchronize(d->g->stream)) {
		snprintf(why, whylen, "its run failed: %s",
			 *status ? gpu_cudnn_error(d->g, *status, err,
						   sizeof(err))
				 : "the GPU refused it");
		return false;
	}
	for (size_t i = 0; i < n_io; i++) {
		struct buf *t = buf_of(d, io[i].uid);
		if (io[i].in)
			continue;
		free(io[i].bytes); /* an earlier try's */
		io[i].bytes = malloc(t->bytes);
		io[i].n = t->bytes;
		io[i].dtype = t->dtype;
		if (!io[i].bytes ||
		    d->g->cuMemcpyDtoH(io[i].bytes, t->dev, t->bytes)) {
			snprintf(why, whylen, "its output could not be read");
			return false;
		}
	}
	return true;
}

double data_error(int64_t dtype, const void *ref, const void *mine,
		  size_t bytes)
{
	struct buf t = { .dtype = dtype, .bytes = bytes };

	return tensor_error(&t, ref, mine);
}

bool data_within(int64_t dtype, double error)
{
	return error <= tolerance(dtype);
}
