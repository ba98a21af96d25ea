/*
 * analyzer-fusion-steady.c - the fusion analysis's counts of a trace's
 * steady state (dt-fusion.h, "The steady state"): each chain's
 * occurrences and each fused problem's executions counted between the
 * summary's cut points, by the time the cut places them at, and once the
 * trace is read, those before its cut left out. Not here: where the cut
 * falls (analyzer-summary-cut.c), finding the chains (analyzer-fusion.c).
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer-fusion.h"

/* Counts kept between the cut points: bucket b holds those of
 * [marks[b - 1], marks[b]) (the first from the trace's start, the last to
 * its end), width counters each. */
struct tally {
	uint64_t *v;
	size_t n; /* buckets held: those after are empty */
};

/* Counters per occurrence of an opportunity of n steps: its count, then
 * each step's GPU time and kernels; per execution of a fused problem: its
 * count and GPU time. */
#define OPP_WIDTH(n) (1 + 2 * (size_t)(n))
#define FUSED_WIDTH  2

/* The bucket of time t: how many cut points are at or before it. */
static size_t bucket_of(const struct fz_steady *st, uint64_t t)
{
	size_t lo = 0, hi = st->n_marks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (st->marks[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Row i of the tallies *rows (*cap of them, grown as needed), NULL when
 * memory is short. */
static struct tally *tally_row(struct tally **rows, size_t *cap, size_t i)
{
	struct tally *v = dt_grow_array(*rows, cap, i + 1, sizeof(*v));

	if (v)
		*rows = v;
	return v ? &v[i] : NULL;
}

/* d (width counters) more in bucket b of y; false when memory is short. */
static bool tally_add(struct tally *y, size_t width, size_t b,
		      const uint64_t *d)
{
	if (b >= y->n) {
		/* the buckets after the n held are made empty */
		size_t cap = y->n * width;
		uint64_t *v =
			dt_grow_array(y->v, &cap, (b + 1) * width, sizeof(*v));
		if (!v)
			return false;
		y->v = v;
		y->n = b + 1;
	}
	for (size_t k = 0; k < width; k++)
		y->v[b * width + k] += d[k];
	return true;
}

/* Buckets b and b + 1 of y made one: the point between them went. */
static void tally_join(struct tally *y, size_t width, size_t b)
{
	if (b + 1 >= y->n)
		return;
	for (size_t k = 0; k < width; k++)
		y->v[b * width + k] += y->v[(b + 1) * width + k];
	memmove(y->v + (b + 1) * width, y->v + (b + 2) * width,
		(y->n - b - 2) * width * sizeof(*y->v));
	y->n--;
}

/* What y holds from bucket first on, added into sum (width counters);
 * y emptied. */
static void tally_settle(struct tally *y, size_t width, size_t first,
			 uint64_t *sum)
{
	for (size_t b = first; b < y->n; b++)
		for (size_t k = 0; k < width; k++)
			sum[k] += y->v[b * width + k];
	free(y->v);
	*y = (struct tally){ 0 };
}

/* Counters d (OPP_WIDTH(o->n_steps) of them) into opportunity o. */
static void opp_add(struct dt_fz_opp *o, const uint64_t *d)
{
	o->count += d[0];
	for (int m = 0; m < o->n_steps; m++) {
		o->steps[m].ns += d[1 + 2 * m];
		o->steps[m].kernels += d[2 + 2 * m];
	}
}

/* Counters d (FUSED_WIDTH of them) into fused problem f. */
static void fused_add(struct dt_fz_fused *f, const uint64_t *d)
{
	f->count += d[0];
	f->ns += d[1];
}

/* An occurrence of chain c, opportunity i: counted by the time of its
 * first step (else, memory short, as the steady state's). */
void fz_steady_chain(struct fz_steady *st, struct dt_fusion *fz, size_t i,
		     const struct chain *c)
{
	struct tally *y = tally_row(&st->opp, &st->cap_opp, i);
	uint64_t d[OPP_WIDTH(DT_FZ_STEPS)], t = UINT64_MAX;
	struct dt_fz_opp *o = &fz->opps[i];

	d[0] = 1;
	for (int m = 0; m < c->n; m++) {
		d[1 + 2 * m] = c->steps[m].ns;
		d[2 + 2 * m] = c->steps[m].kernels;
		if (c->nodes[m]->t < t)
			t = c->nodes[m]->t;
	}
	if (!y || !tally_add(y, OPP_WIDTH(c->n), bucket_of(st, t), d))
		opp_add(o, d);
}

/* An execution of fused problem i at t, of ns of GPU time. */
void fz_steady_fused(struct fz_steady *st, struct dt_fusion *fz, int32_t i,
		     uint64_t t, uint64_t ns)
{
	struct tally *y = tally_row(&st->fused, &st->cap_fused, (size_t)i);
	uint64_t d[FUSED_WIDTH] = { 1, ns };

	if (!y || !tally_add(y, FUSED_WIDTH, bucket_of(st, t), d))
		fused_add(&fz->fused[i], d);
}

void fz_steady_mark(struct fz_steady *st, uint64_t t)
{
	uint64_t *v = dt_grow_array(st->marks, &st->cap_marks, st->n_marks + 1,
				    sizeof(*v));

	if (v) {
		st->marks = v;
		v[st->n_marks++] = t;
	}
}

void fz_steady_unmark(struct fz_steady *st, const struct dt_fusion *fz,
		      uint64_t t)
{
	size_t i = bucket_of(st, t);

	if (!i || st->marks[i - 1] != t)
		return;
	i--;
	for (size_t k = 0; k < fz->n_opps && k < st->cap_opp; k++)
		tally_join(&st->opp[k], OPP_WIDTH(fz->opps[k].n_steps), i);
	for (size_t k = 0; k < fz->n_fused && k < st->cap_fused; k++)
		tally_join(&st->fused[k], FUSED_WIDTH, i);
	memmove(st->marks + i, st->marks + i + 1,
		(st->n_marks - i - 1) * sizeof(*st->marks));
	st->n_marks--;
}

void fz_steady_settle(struct fz_steady *st, struct dt_fusion *fz)
{
	uint64_t from = st->from;
	size_t first = from == UINT64_MAX ? st->n_marks + 1
		       : from             ? bucket_of(st, from)
					  : 0;

	for (size_t i = 0; i < fz->n_opps && i < st->cap_opp; i++) {
		struct dt_fz_opp *o = &fz->opps[i];
		uint64_t sum[OPP_WIDTH(DT_FZ_STEPS)] = { 0 };
		tally_settle(&st->opp[i], OPP_WIDTH(o->n_steps), first, sum);
		opp_add(o, sum);
	}
	for (size_t i = 0; i < fz->n_fused && i < st->cap_fused; i++) {
		uint64_t sum[FUSED_WIDTH] = { 0 };
		tally_settle(&st->fused[i], FUSED_WIDTH, first, sum);
		fused_add(&fz->fused[i], sum);
	}
	st->n_marks = 0;
	st->from = 0;
}

void fz_steady_free(struct fz_steady *st)
{
	/* rows never used are zeroed (dt_grow_array) */
	for (size_t i = 0; i < st->cap_opp; i++)
		free(st->opp[i].v);
	for (size_t i = 0; i < st->cap_fused; i++)
		free(st->fused[i].v);
	free(st->marks);
	free(st->opp);
	free(st->fused);
	memset(st, 0, sizeof(*st));
}

void fz_opp_free(struct dt_fz_opp *o)
{
	free(o->key);
	free(o->pattern);
	free(o->cover);
	free(o->blocked);
	free(o->checks);
	free(o->note);
	for (int m = 0; m < o->n_steps; m++) {
		free(o->steps[m].what);
		free(o->steps[m].detail);
		free(o->steps[m].kernel);
		free(o->steps[m].library);
		free(o->steps[m].problem);
	}
}

void fz_fused_free(struct dt_fz_fused *f)
{
	free(f->key);
	free(f->what);
	free(f->brief);
}

void fz_drop_startups(struct dt_fusion *fz)
{
	size_t n = 0;

	for (size_t i = 0; i < fz->n_opps; i++)
		if (fz->opps[i].count)
			fz->opps[n++] = fz->opps[i];
		else
			fz_opp_free(&fz->opps[i]);
	fz->n_opps = n;
	n = 0;
	for (size_t i = 0; i < fz->n_fused; i++)
		if (fz->fused[i].count)
			fz->fused[n++] = fz->fused[i];
		else
			fz_fused_free(&fz->fused[i]);
	fz->n_fused = n;
}
