/*
 * analyzer-steps.c - a program's steps, found from what repeats in its
 * trace (dt-steps.h): a consumer of the session's events, like the other
 * views (the summary hands them on to it), that needs no annotation.
 *
 * Every NVTX range's message, kernel name, the CUDA graph launch and
 * every function is a token; each time a token recurs, the time since its
 * last occurrence is one of its intervals. A training or inference loop
 * makes some tokens recur once per iteration, at a regular interval,
 * until the program ends.
 *
 * A token's intervals form runs: an interval within 1.5x of the run's
 * typical one continues it, a lone one outside does too (a slow step is
 * still a step), three in a row outside begin a new run (a new regime:
 * compiling gave way to running); an erratic stretch after a long run
 * stays in it. The steady state is a token's last run, when it lasts to
 * the end of the trace; the step's token is the one whose last run covers
 * the most time in regular steps, the one of longest period among those
 * that cover nearly as much (a kernel run once per layer recurs regularly
 * too, but within a step). The program's NVTX ranges and marks come
 * first (its own word) unless they recur faster than the kernels and graph
 * launches do (their times are the GPU's): those ranges are a layer's, or
 * a library's around each of its calls. Functions count only where no GPU
 * work is. Everything before the
 * steady state is start-up: loading, compiling, autotuning, the first
 * steps.
 *
 * Memory does not grow with the trace: per token the histogram of its
 * last run's intervals on a log scale (at most MAX_TRACKS tokens keep
 * one), the GPU time by start time in rings of slices (struct ring), and
 * per kernel name its GPU time over 64 slices of the run that double in
 * width as it goes on.
 *
 * Not here: what is printed (tools/), what a diff makes of steps
 * (analyzer-diff.c).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-util.h"
#include "dt-steps.h"

/* Intervals on a log scale: 12 buckets per octave (6% wide) from 1 us,
 * up to about 2^(320/12) us = 107 s. */
#define BUCKETS       320
#define PER_OCTAVE    12.0
#define MIN_STEPS     8  /* a steady state has as many steps, when it can */
#define STREAK        3  /* intervals outside a run in a row begin another */
#define SLICES        64 /* slices of the run, for the steady state's sums */
#define MAX_TRACKS    2048
#define KERNEL_SLICES 4   /* slices wholly in a steady state, for kernels */
#define REGULAR       1.5 /* an interval within this of the median is regular */

/* GPU time: summed, by library, by family; the same as one array. */
#define SUMS_WORDS (1 + DT_LIB_COUNT + DT_OPF_COUNT)
struct sums {
	union {
		struct {
			uint64_t gpu, lib[DT_LIB_COUNT], fam[DT_OPF_COUNT];
		};
		uint64_t v[SUMS_WORDS];
	};
};

/* GPU time by start time: GPU work reaches a trace in batches, not in
 * the order it ran, so what ran between two times is summed by time.
 * SCALES rings of RING slices, 2^19 ns (524 us) wide in the first, each
 * ring's four times the last's: work goes to the first ring's slice, and
 * a slice the ring needs again for a later one moves to the next ring's
 * (coarser) slice. Each piece of work is in one slice; the recent ones are
 * fine, the older ones coarse. A slice a time range covers in part counts
 * in proportion. */
#define RING       256
#define SCALES     8
#define RING_SHIFT 19
struct ring {
	uint64_t q[RING]; /* which slice (start >> shift) a slot holds, + 1 */
	struct sums s[RING];
};

/* A run of regular intervals: its histogram, where it began. What every
 * interval reads and writes comes first, in one cache line with the
 * track's own (struct track). */
struct run {
	uint64_t n;     /* intervals */
	uint64_t sum;   /* their time */
	uint64_t start; /* the occurrence that began it */
	uint64_t index; /* its number, from 0 */
	uint64_t calls; /* calls seen up to that occurrence (call tokens) */
	uint32_t iv[BUCKETS];
};

/* A token seen twice or more keeps its last run of intervals and, while
 * that one is short, the last long one (MIN_STEPS) before it: a loop that
 * turns erratic near its end (the machine busy with something else) is
 * still its steady state, those steps slow ones. */
struct track {
	double ref; /* the run's typical interval */
	int streak;
	bool has_prev;
	struct run cur;
	/* intervals outside the run, in a row: each one's start and length,
	 * its occurrence's number */
	uint64_t streak_t[STREAK], streak_iv[STREAK];
	uint64_t streak_index[STREAK], streak_calls[STREAK];
	struct run prev;
};

struct token {
	uint64_t count, last;
	uint64_t last_calls; /* calls seen up to its last occurrence */
	struct track *tr;
	const struct dt_kernel_class *kc; /* a kernel's */
};

/* A kernel name's GPU time per slice, launched outside cuDNN calls. */
struct kname {
	const struct dt_kernel_class *kc;
	struct {
		uint64_t ns, n; /* together: a kernel adds to both */
	} at[SLICES];
};

enum space { SP_RANGE, SP_KERNEL, SP_CALL, SP_COUNT };

/* NVTX ranges and marks by their message's STRING id, up to this many. */
#define MAX_STRINGS 65536

struct dt_stepper {
	struct token *tok[SP_COUNT];
	size_t cap[SP_COUNT];
	struct token graph;      /* CUDA graph launches: one token */
	const char **call_names; /* by api id */
	size_t cap_names;
	char **strings; /* NVTX messages by STRING id */
	size_t cap_strings;
	uint64_t t_last_range;
	size_t tracks;
	uint64_t calls; /* calls followed (where there is no GPU work) */

	uint64_t t_first, t_last;
	uint64_t t_last_gpu, t_last_call; /* the last kernel, graph launch,
					     call */
	/* the slices: SLICES of width ns from t_first; [slice_lo, slice_hi)
	 * is slice's, the last one an event fell in: most events fall in it
	 * again, and need no division */
	uint64_t width;
	uint64_t slice_lo, slice_hi;
	int slice;
	struct sums sums;
	struct ring rings[SCALES];
	uint64_t gpu[SLICES]; /* for the kernels' shares */
	struct kname **kn;    /* by the kernel class's id */
	size_t cap_kn;
	/* the library of the last call whose work was seen, and its
	 * kernels' (most work is the same library's as the work before) */
	const char *library;
	enum dt_lib lib;
};

/* ------------------------------------------------------ histograms */

/* floor(12 * log2(1 + i / 256)): the twelfth of an octave of the eight
 * bits under a value's highest. */
static const uint8_t twelfth[256] = {
	0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  1,  1,
	1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  2,  2,  2,  2,
	2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  2,  3,  3,  3,  3,  3,
	3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  3,  4,  4,  4,  4,  4,
	4,  4,  4,  4,  4,  4,  4,  4,  4,  4,  4,  4,  4,  4,  5,  5,  5,  5,
	5,  5,  5,  5,  5,  5,  5,  5,  5,  5,  5,  5,  5,  5,  5,  5,  5,  6,
	6,  6,  6,  6,  6,  6,  6,  6,  6,  6,  6,  6,  6,  6,  6,  6,  6,  6,
	6,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,
	7,  7,  7,  7,  7,  7,  7,  8,  8,  8,  8,  8,  8,  8,  8,  8,  8,  8,
	8,  8,  8,  8,  8,  8,  8,  8,  8,  8,  8,  8,  8,  9,  9,  9,  9,  9,
	9,  9,  9,  9,  9,  9,  9,  9,  9,  9,  9,  9,  9,  9,  9,  9,  9,  9,
	9,  9,  9,  10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10,
	10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11,
	11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11,
	11, 11, 11, 11,
};

/* Without a logarithm (an interval is one per token's occurrence): the
 * octave from the highest bit, the twelfth from the next eight. */
static int bucket_of(uint64_t ns)
{
	uint64_t us1024 = ns * 1024 / 1000; /* 1 us is 1024 of these */
	if (us1024 < 1024)
		return 0;
	int msb = 63 - __builtin_clzll(us1024);
	uint64_t frac = (us1024 >> (msb - 8)) & 255; /* msb >= 10 */
	int b = (msb - 10) * (int)PER_OCTAVE + twelfth[frac];
	return b >= BUCKETS ? BUCKETS - 1 : b;
}

/* The bucket's middle (geometric), in ns. */
static double bucket_mid(int b)
{
	return 1000.0 * exp2((b + 0.5) / PER_OCTAVE);
}

static uint64_t hist_total(const uint32_t *h)
{
	uint64_t n = 0;
	for (int b = 0; b < BUCKETS; b++)
		n += h[b];
	return n;
}

/* The q-quantile (0..1) of a histogram, 0 when empty. */
static uint64_t hist_quantile(const uint32_t *h, double q)
{
	uint64_t n = hist_total(h), want, seen = 0;
	if (!n)
		return 0;
	want = (uint64_t)(q * (double)(n - 1));
	for (int b = 0; b < BUCKETS; b++) {
		seen += h[b];
		if (seen > want)
			return (uint64_t)bucket_mid(b);
	}
	return (uint64_t)bucket_mid(BUCKETS - 1);
}

static void dist_of(const uint32_t *h, struct dt_step_dist *d)
{
	d->median_ns = hist_quantile(h, 0.5);
	d->p10_ns = hist_quantile(h, 0.1);
	d->p90_ns = hist_quantile(h, 0.9);
}

/* ----------------------------------------------------------- rings */

static int ring_shift(int k)
{
	return RING_SHIFT + 2 * k;
}

/* from added to to (NULL: dropped), and emptied: a ring's slice moving
 * on to the next ring, every few pieces of work in a sparse trace. In
 * one unrolled pass: the loops were two thirds of a move. */
static void sums_move(struct sums *to, struct sums *from)
{
	if (!to) {
		memset(from, 0, sizeof(*from));
		return;
	}
#pragma GCC unroll 64
	for (size_t i = 0; i < SUMS_WORDS; i++) {
		to->v[i] += from->v[i];
		from->v[i] = 0;
	}
}

/* from, times w (0 to 1), added to to. */
static void sums_add_part(struct sums *to, const struct sums *from, double w)
{
	to->gpu += (uint64_t)((double)from->gpu * w);
	for (int l = 0; l < DT_LIB_COUNT; l++)
		to->lib[l] += (uint64_t)((double)from->lib[l] * w);
	for (int f = 0; f < DT_OPF_COUNT; f++)
		to->fam[f] += (uint64_t)((double)from->fam[f] * w);
}

/* The slot of ring k for slice q (start >> shift, + 1), made that slice's:
 * what it held moves on to the next ring. NULL when the slice is older
 * than ring k holds (the caller tries the next) or than any does. */
static struct sums *ring_slot(struct ring *rings, int k, uint64_t q)
{
	struct ring *r = &rings[k];
	size_t i = q % RING;

	if (r->q[i] > q)
		return k + 1 < SCALES ? ring_slot(rings, k + 1, (q - 1) / 4 + 1)
				      : NULL;
	if (r->q[i] < q) {
		sums_move(r->q[i] && k + 1 < SCALES
				  ? ring_slot(rings, k + 1, (r->q[i] - 1) / 4 + 1)
				  : NULL,
			  &r->s[i]);
		r->q[i] = q;
	}
	return &r->s[i];
}

static void ring_add(struct ring *rings, uint64_t t, enum dt_lib lib,
		     enum dt_opfam fam, uint64_t d)
{
	uint64_t q = (t >> RING_SHIFT) + 1;
	/* most work lands in the slice the last one did */
	struct sums *s = rings[0].q[q % RING] == q ? &rings[0].s[q % RING]
						   : ring_slot(rings, 0, q);
	if (!s)
		return;
	s->gpu += d;
	s->lib[lib] += d;
	s->fam[fam] += d;
}

/* The GPU time that started in [a, b], to the slice: false when some of
 * it is older than the rings hold. */
static bool ring_sum(const struct ring *rings, uint64_t a, uint64_t b,
		     struct sums *out)
{
	memset(out, 0, sizeof(*out));
	for (int k = 0; k < SCALES; k++) {
		const struct ring *r = &rings[k];
		int sh = ring_shift(k);
		uint64_t qa = (a >> sh) + 1, qb = (b >> sh) + 1;
		for (size_t i = 0; i < RING; i++) {
			if (r->q[i] < qa || r->q[i] > qb)
				continue;
			/* the slice's part inside [a, b] */
			uint64_t lo = (r->q[i] - 1) << sh, hi = r->q[i] << sh;
			uint64_t from = lo > a ? lo : a, to = hi < b ? hi : b;
			sums_add_part(out, &r->s[i],
				      (double)(to - from) / (double)(hi - lo));
		}
	}
	/* the last ring's oldest slice is its newest less RING: one older
	 * than a has been dropped */
	const struct ring *last = &rings[SCALES - 1];
	uint64_t newest = 0;
	for (size_t i = 0; i < RING; i++)
		if (last->q[i] > newest)
			newest = last->q[i];
	return newest < RING ||
	       newest - RING < (a >> ring_shift(SCALES - 1)) + 1;
}

/* ---------------------------------------------------------- slices */

/* A kernel name's slices, twice as wide (dt_bins_fold's, for pairs). */
static void kname_fold(struct kname *kn)
{
	for (size_t i = 0; i < SLICES / 2; i++) {
		kn->at[i].ns = kn->at[2 * i].ns + kn->at[2 * i + 1].ns;
		kn->at[i].n = kn->at[2 * i].n + kn->at[2 * i + 1].n;
	}
	memset(kn->at + SLICES / 2, 0, (SLICES / 2) * sizeof(kn->at[0]));
}

/* The slice of t, the first time in the last slice's bounds: the slices
 * widened as needed. */
static int slice_find(struct dt_stepper *st, uint64_t t)
{
	if (!st->t_first || t < st->t_first)
		return 0;
	while (t - st->t_first >= st->width * SLICES) {
		dt_bins_fold(st->gpu, SLICES);
		for (size_t i = 0; i < st->cap_kn; i++)
			if (st->kn[i]) {
				kname_fold(st->kn[i]);
			}
		st->width *= 2;
	}
	st->slice = (int)((t - st->t_first) / st->width);
	st->slice_lo = st->t_first + (uint64_t)st->slice * st->width;
	st->slice_hi = st->slice_lo + st->width;
	return st->slice;
}

static inline int slice_of(struct dt_stepper *st, uint64_t t)
{
	if (t >= st->slice_lo && t < st->slice_hi)
		return st->slice;
	return slice_find(st, t);
}

/* An event at t; one earlier than the first joins the first slice. */
static void saw(struct dt_stepper *st, uint64_t t)
{
	if (!st->t_first)
		st->t_first = t;
	if (t > st->t_last)
		st->t_last = t;
}

/* ---------------------------------------------------------- tokens */

static struct token *token_at(struct dt_stepper *st, enum space sp, size_t i)
{
	if (i >= st->cap[sp]) {
		struct token *v = dt_grow_array(st->tok[sp], &st->cap[sp],
						i + 1, sizeof(*v));
		if (!v)
			return NULL;
		st->tok[sp] = v;
	}
	return &st->tok[sp][i];
}

static bool regular(double ref, uint64_t iv)
{
	return (double)iv <= ref * REGULAR && (double)iv * REGULAR >= ref;
}

static void run_add(struct track *tr, uint64_t iv)
{
	struct run *r = &tr->cur;
	r->iv[bucket_of(iv)]++;
	r->sum += iv;
	if (++r->n == MIN_STEPS)
		tr->has_prev = false; /* a new regime, established */
	/* the typical interval follows the run slowly; past 16 intervals by
	 * a sixteenth, a product as exact as the quotient and cheaper */
	double dv = (double)iv - tr->ref;
	tr->ref += r->n < 16 ? dv / (double)r->n : dv * (1.0 / 16);
}

/* The intervals of a short run, and those of the streak before first,
 * join the long run before it: erratic steps after a steady state. */
static void absorb(struct track *tr, int first)
{
	for (int b = 0; b < BUCKETS; b++)
		tr->prev.iv[b] += tr->cur.iv[b];
	tr->prev.n += tr->cur.n;
	tr->prev.sum += tr->cur.sum;
	for (int i = 0; i < first; i++) {
		tr->prev.iv[bucket_of(tr->streak_iv[i])]++;
		tr->prev.n++;
		tr->prev.sum += tr->streak_iv[i];
	}
}

/* Three intervals in a row outside the run begin a new one, from those
 * of them that agree with the last. */
static void run_restart(struct track *tr)
{
	int last = tr->streak - 1, first = last;
	while (first > 0 &&
	       regular((double)tr->streak_iv[last], tr->streak_iv[first - 1]))
		first--;
	if (tr->cur.n >= MIN_STEPS) {
		tr->prev = tr->cur;
		tr->has_prev = true;
	} else if (tr->has_prev) {
		absorb(tr, first);
	}
	memset(&tr->cur, 0, sizeof(tr->cur));
	tr->ref = (double)tr->streak_iv[first];
	tr->cur.start = tr->streak_t[first];
	tr->cur.index = tr->streak_index[first];
	tr->cur.calls = tr->streak_calls[first];
	for (int i = first; i <= last; i++)
		run_add(tr, tr->streak_iv[i]);
	tr->streak = 0;
}

/* One more interval, from the occurrence `index` at `from`, when `calls`
 * calls had been seen. */
static void interval(struct track *tr, uint64_t from, uint64_t index,
		     uint64_t calls, uint64_t iv)
{
	if (!tr->cur.n || regular(tr->ref, iv)) {
		if (!tr->cur.n) {
			tr->cur.start = from;
			tr->cur.index = index;
			tr->cur.calls = calls;
			tr->ref = (double)iv;
		}
		/* a lone interval outside the run stays in it */
		for (int i = 0; i < tr->streak; i++)
			run_add(tr, tr->streak_iv[i]);
		tr->streak = 0;
		run_add(tr, iv);
		return;
	}
	tr->streak_t[tr->streak] = from;
	tr->streak_iv[tr->streak] = iv;
	tr->streak_index[tr->streak] = index;
	tr->streak_calls[tr->streak] = calls;
	if (++tr->streak == STREAK)
		run_restart(tr);
}

/* The steady state a track ends with: its last run and the streak after
 * it, or the long run before a short last one, with all that followed. */
static void last_run(struct track *tr)
{
	for (int i = 0; i < tr->streak; i++) {
		tr->cur.iv[bucket_of(tr->streak_iv[i])]++;
		tr->cur.n++;
		tr->cur.sum += tr->streak_iv[i];
	}
	tr->streak = 0;
	if (tr->cur.n < MIN_STEPS && tr->has_prev) {
		absorb(tr, 0);
		tr->cur = tr->prev;
		tr->has_prev = false;
	}
}

/* The token seen again (or first) at t, when not simply one regular
 * interval more (hit). */
static void hit_other(struct dt_stepper *st, struct token *k, uint64_t t)
{
	if (k->count && t < k->last)
		return; /* out of order: not an interval */
	if (k->count) {
		if (!k->tr && st->tracks < MAX_TRACKS &&
		    (k->tr = calloc(1, sizeof(*k->tr))))
			st->tracks++;
		if (k->tr)
			interval(k->tr, k->last, k->count - 1, k->last_calls,
				 t - k->last);
	}
	k->count++;
	k->last = t;
	k->last_calls = st->calls;
}

/* The token seen again (or first) at t. Most of the time, a track's run
 * goes on with one more regular interval: that, without calls. */
static inline void hit(struct dt_stepper *st, struct token *k, uint64_t t)
{
	struct track *tr = k->tr;

	if (!tr || t < k->last || tr->streak || !tr->cur.n ||
	    !regular(tr->ref, t - k->last)) {
		hit_other(st, k, t);
		return;
	}
	run_add(tr, t - k->last);
	k->count++;
	k->last = t;
	k->last_calls = st->calls;
}

void dt_stepper_activity(struct dt_stepper *st, const struct dt_activity *a)
{
	const struct dt_kernel_class *kc = a->kc;

	if (!a->timed)
		return;
	uint64_t d = a->gpu_end > a->gpu_start ? a->gpu_end - a->gpu_start : 0;
	/* a call's work is its library's, whatever its kernels' names */
	if (a->call && a->library != st->library) {
		st->library = a->library;
		st->lib = dt_lib_of_library(a->library);
	}
	enum dt_lib lib = a->call		     ? st->lib
			  : a->kind != DT_ACT_KERNEL ? DT_LIB_RUNTIME
			  : kc			     ? kc->lib
						     : DT_LIB_OTHER;
	enum dt_opfam fam = a->kind == DT_ACT_MEMSET   ? DT_OPF_FILL
			    : a->kind == DT_ACT_MEMCPY ? DT_OPF_COPY
			    : kc                       ? kc->opfam
						       : DT_OPF_OTHER;

	saw(st, a->start);
	if (a->start > st->t_last_gpu)
		st->t_last_gpu = a->start;
	int s = slice_of(st, a->start);
	st->gpu[s] += d;
	st->sums.gpu += d;
	st->sums.lib[lib] += d;
	st->sums.fam[fam] += d;
	ring_add(st->rings, a->start, lib, fam, d);
	if (a->kind != DT_ACT_KERNEL || !kc)
		return;
	if (!a->call) { /* a call's kernels are judged by its op */
		if (kc->id >= st->cap_kn) {
			struct kname **v = dt_grow_array(
				st->kn, &st->cap_kn, kc->id + 1, sizeof(*v));
			if (!v)
				return;
			st->kn = v;
		}
		struct kname *n = st->kn[kc->id];
		if (!n && (n = st->kn[kc->id] = calloc(1, sizeof(*n))))
			n->kc = kc;
		if (n) {
			n->at[s].ns += d;
			n->at[s].n++;
		}
	}
	struct token *k = token_at(st, SP_KERNEL, kc->id);
	if (k) {
		k->kc = kc;
		hit(st, k, a->start);
	}
}

/* Whether any kernel or graph launch has been seen: calls mark steps only
 * in a program without GPU work. */
static bool gpu_seen(const struct dt_stepper *st)
{
	return st->cap[SP_KERNEL] || st->graph.count;
}

void dt_stepper_calls_until(struct dt_stepper *st, uint64_t t_begin)
{
	if (t_begin > st->t_last_call)
		st->t_last_call = t_begin;
}

bool dt_stepper_call(struct dt_stepper *st, const struct dt_call *c)
{
	/* calls are steps only where no GPU work is: not followed once a
	 * kernel is seen (one token per call costs a report its time), only
	 * the latest one's time kept, for the run's span (saw, at the end) */
	if (gpu_seen(st)) {
		dt_stepper_calls_until(st, c->t_begin);
		return false;
	}
	saw(st, c->t_begin);
	st->t_last_call = c->t_begin;
	if (c->api >= st->cap_names) {
		const char **v = dt_grow_array(st->call_names, &st->cap_names,
					       (size_t)c->api + 1, sizeof(*v));
		if (!v)
			return true;
		st->call_names = v;
	}
	st->call_names[c->api] = c->name;
	struct token *k = token_at(st, SP_CALL, c->api);
	st->calls++;
	if (k)
		hit(st, k, c->t_begin);
	return true;
}

/* The program's own marks: a range opened or a mark, by its message. */
static void on_nvtx(struct dt_stepper *st, const struct dt_rec_nvtx *n)
{
	if (n->event != DT_NVTX_PUSH && n->event != DT_NVTX_START &&
	    n->event != DT_NVTX_MARK)
		return;
	if (!n->name || n->name >= MAX_STRINGS)
		return;
	struct token *k = token_at(st, SP_RANGE, n->name);
	if (!k)
		return;
	/* not the run's span: records pass a range filter as they are */
	if (n->t > st->t_last_range)
		st->t_last_range = n->t;
	hit(st, k, n->t);
}

/* A STRING record: kept when it may name an NVTX range. */
static void on_string(struct dt_stepper *st, const struct dt_rec_string *r)
{
	if (r->id >= MAX_STRINGS)
		return;
	if (r->id >= st->cap_strings) {
		char **v = dt_grow_array(st->strings, &st->cap_strings,
					 (size_t)r->id + 1, sizeof(*v));
		if (!v)
			return;
		st->strings = v;
	}
	free(st->strings[r->id]);
	st->strings[r->id] = strndup((const char *)(r + 1), r->len);
}

void dt_stepper_record(struct dt_stepper *st, const struct dt_rec_hdr *h)
{
	if (h->type == DT_REC_NVTX && h->size >= sizeof(struct dt_rec_nvtx))
		on_nvtx(st, (const void *)h);
	else if (h->type == DT_REC_STRING &&
		 h->size >= sizeof(struct dt_rec_string) &&
		 ((const struct dt_rec_string *)h)->len <=
			 h->size - sizeof(struct dt_rec_string))
		on_string(st, (const void *)h);
}

void dt_stepper_graph_launch(struct dt_stepper *st,
			     const struct dt_graph_launch *l)
{
	saw(st, l->start);
	if (l->start > st->t_last_gpu)
		st->t_last_gpu = l->start;
	hit(st, &st->graph, l->start);
}

static void on_call(void *arg, const struct dt_call *c)
{
	(void)dt_stepper_call(arg, c);
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	dt_stepper_activity(arg, a);
}

static void on_record(void *arg, const struct dt_rec_hdr *h)
{
	dt_stepper_record(arg, h);
}

static void on_graph_launch(void *arg, const struct dt_graph_launch *l)
{
	dt_stepper_graph_launch(arg, l);
}

struct dt_stepper *dt_stepper_new(void)
{
	struct dt_stepper *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->width = 1000000; /* 1 ms to begin with */
	st->lib = dt_lib_of_library(NULL);
	return st;
}

void dt_stepper_consumer(struct dt_stepper *st, struct dt_consumer *c)
{
	*c = (struct dt_consumer){ .arg = st,
				   .call = on_call,
				   .activity = on_activity,
				   .graph_launch = on_graph_launch,
				   .record = on_record };
}

/* ------------------------------------------------- finding the step */

struct pick {
	struct token *k;
	const char *name, *kind;
	uint64_t median;
	double cover;
};

/* A token whose last run lasts to the end (t_end, its kind's last event):
 * how much it covers. */
static void consider(struct pick *best, struct pick *all, size_t *n,
		     struct token *k, const char *name, const char *kind,
		     uint64_t t_end, uint64_t min_run)
{
	const struct track *tr = k->tr;
	if (!tr || tr->cur.n < min_run)
		return;
	uint64_t m = hist_quantile(tr->cur.iv, 0.5), regular_n = 0;
	for (int b = 0; b < BUCKETS; b++) {
		double mid = bucket_mid(b);
		if (mid * REGULAR >= (double)m && mid <= (double)m * REGULAR)
			regular_n += tr->cur.iv[b];
	}
	/* regular steps times their typical time: slow steps do not make a
	 * short run cover much; a run mostly erratic is no loop's */
	uint64_t cover = regular_n * m;
	if (3 * regular_n < 2 * tr->cur.n)
		return;
	/* after the loop, a program may still tear down, check results or
	 * compile what does: no longer than the run itself */
	uint64_t slack = 2 * m > cover ? 2 * m : cover;
	if (t_end > k->last + slack)
		return;
	all[(*n)++] = (struct pick){ k, name, kind, m, (double)cover };
	if ((double)cover > best->cover)
		*best = all[*n - 1];
}

/* Whether a call's steps hold other calls too, two calls a step or more:
 * a function called over and over with nothing between (a teardown
 * destroying its descriptors in a row) is no loop of the program's. */
static bool steps_hold_more(const struct token *k)
{
	const struct track *tr = k->tr;
	return tr && k->last_calls - tr->cur.calls >= 2 * tr->cur.n;
}

/* Of the tokens covering nearly as much as the best, the longest period. */
static struct pick choose(struct pick *all, size_t n, const struct pick *best)
{
	struct pick p = *best;
	for (size_t i = 0; i < n; i++)
		if (all[i].cover >= 0.9 * best->cover &&
		    all[i].median > p.median)
			p = all[i];
	return p;
}

/* The best token of those whose runs have min_run intervals or more. */
static bool find_in(struct dt_stepper *st, struct pick *all, struct pick *out,
		    uint64_t min_run)
{
	struct pick best = { 0 }, range = { 0 };
	size_t n = 0;
	/* the program's own word first: NVTX ranges and marks */
	for (size_t i = 0; i < st->cap[SP_RANGE]; i++)
		consider(&best, all, &n, &st->tok[SP_RANGE][i],
			 i < st->cap_strings ? st->strings[i] : NULL,
			 "NVTX range", st->t_last_range, min_run);
	if (best.k)
		range = choose(all, n, &best);
	best = (struct pick){ 0 };
	n = 0;
	for (size_t i = 0; i < st->cap[SP_KERNEL]; i++) {
		const struct dt_kernel_class *kc = st->tok[SP_KERNEL][i].kc;
		consider(&best, all, &n, &st->tok[SP_KERNEL][i],
			 kc ? kc->demangled : NULL, "kernel", st->t_last_gpu,
			 min_run);
	}
	consider(&best, all, &n, &st->graph, "CUDA graph launch",
		 "graph launch", st->t_last_gpu, min_run);
	/* unless they recur within the step the GPU's work makes: a layer's
	 * ranges, or a library's around each of its calls (a communication
	 * library's around each collective of a step), which may be the only
	 * ranges in the trace */
	if (best.k)
		*out = choose(all, n, &best);
	if (range.k && (!best.k || (double)range.median * REGULAR >=
					   (double)out->median))
		*out = range;
	if (range.k || best.k)
		return true;
	/* the host's calls only where there is no GPU work at all: in a
	 * program with GPU work whose kernels do not repeat, a call that does
	 * (a teardown's destroys, after the GPU work reached the trace in
	 * one batch) is no step of it; and only in long runs: a few calls
	 * at nearly regular intervals are as often a program building its
	 * descriptors one after another as its loop */
	if (!gpu_seen(st) && min_run >= MIN_STEPS)
		for (size_t i = 0; i < st->cap[SP_CALL]; i++)
			if (steps_hold_more(&st->tok[SP_CALL][i]))
				consider(&best, all, &n, &st->tok[SP_CALL][i],
					 i < st->cap_names ? st->call_names[i]
							   : NULL,
					 "call", st->t_last_call, min_run);
	if (best.k)
		*out = choose(all, n, &best);
	return best.k != NULL;
}

/* An autotuner tries a kernel a few times, at regular intervals too, and
 * may take longer than the steady state: runs of MIN_STEPS first. */
static bool find_anchor(struct dt_stepper *st, struct pick *out)
{
	for (int sp = 0; sp < SP_COUNT; sp++)
		for (size_t i = 0; i < st->cap[sp]; i++)
			if (st->tok[sp][i].tr)
				last_run(st->tok[sp][i].tr);
	if (st->graph.tr)
		last_run(st->graph.tr);

	size_t cap =
		st->cap[SP_RANGE] + st->cap[SP_KERNEL] + st->cap[SP_CALL] + 1;
	struct pick *all = calloc(cap, sizeof(*all));
	bool found = all && (find_in(st, all, out, MIN_STEPS) ||
			     find_in(st, all, out, 3));
	free(all);
	return found;
}

/* The steady state's GPU time per step: what started from its first
 * step to its last, over the steps between; the whole run's over n steps
 * when the rings no longer hold its start. */
static void steady_sums(struct dt_stepper *st, struct dt_step_stats *r,
			uint64_t a, uint64_t b, uint64_t n)
{
	struct sums w;
	double d = n ? (double)n : 1.0;
	if (!ring_sum(st->rings, a, b, &w))
		w = st->sums;
	r->gpu_ns = (double)w.gpu / d;
	for (int l = 0; l < DT_LIB_COUNT; l++)
		r->lib_ns[l] = (double)w.lib[l] / d;
	for (int f = 0; f < DT_OPF_COUNT; f++)
		r->fam_ns[f] = (double)w.fam[f] / d;
}

/* Kernels per step: their share of the GPU time in the slices from the
 * steady state's start on (the first may hold some start-up), of the
 * steady state's GPU time per step. */
static void steady_kernels(struct dt_stepper *st, struct dt_step_stats *r,
			   uint64_t t_steady, uint64_t t_end)
{
	/* from the first slice wholly in the steady state */
	int k0 = slice_of(st, t_steady) + (t_steady > st->t_first),
	    k1 = slice_of(st, t_end) + 1;
	uint64_t gpu = 0;
	size_t n = 0;

	for (int s = k0; s < k1; s++)
		gpu += st->gpu[s];
	for (size_t i = 0; i < st->cap_kn; i++)
		n += st->kn[i] != NULL;
	r->kernels = calloc(n ? n : 1, sizeof(*r->kernels));
	/* the slices wholly in the steady state, if enough: slices wide next
	 * to it (a compiled program's, its start-up long) are not told */
	if (!r->kernels || !gpu || k1 - k0 < KERNEL_SLICES)
		return;
	r->kernels_known = true;
	double per_ns = r->gpu_ns / (double)gpu;
	for (size_t i = 0; i < st->cap_kn; i++) {
		const struct kname *kn = st->kn[i];
		uint64_t ns = 0, count = 0;
		if (!kn)
			continue;
		for (int s = k0; s < k1; s++) {
			ns += kn->at[s].ns;
			count += kn->at[s].n;
		}
		if (!count)
			continue;
		struct dt_step_kernel *k = &r->kernels[r->n_kernels++];
		k->name = strdup(kn->kc->demangled ? kn->kc->demangled
						   : kn->kc->name);
		k->lib = kn->kc->lib;
		k->fam = kn->kc->opfam;
		k->per_step_ns = (double)ns * per_ns;
		k->per_step = (double)count * per_ns;
	}
}

static int by_time(const void *a, const void *b)
{
	const struct dt_step_kernel *x = a, *y = b;
	return x->per_step_ns < y->per_step_ns   ? 1
	       : x->per_step_ns > y->per_step_ns ? -1
						 : strcmp(x->name, y->name);
}

struct dt_step_stats *dt_stepper_finish(struct dt_stepper *st)
{
	struct dt_step_stats *r = calloc(1, sizeof(*r));
	struct pick p;
	if (!r)
		return NULL;
	r->traces = 1;
	saw(st, st->t_last_call); /* calls after the first kernel's */
	r->span_ns = st->t_last - st->t_first;
	if (find_anchor(st, &p)) {
		struct track *tr = p.k->tr;
		r->found = true;
		r->anchor = strdup(p.name ? p.name : "?");
		r->anchor_kind = p.kind;
		/* the run's intervals, and the step after its last
		 * occurrence, whose end no occurrence marks */
		r->steps = tr->cur.n + 1;
		r->startup_steps = tr->cur.index;
		r->t_steady = tr->cur.start;
		r->startup_ns = tr->cur.start > st->t_first
					? tr->cur.start - st->t_first
					: 0;
		dist_of(tr->cur.iv, &r->time);
		r->time.mean_ns = tr->cur.sum / tr->cur.n;
		steady_sums(st, r, tr->cur.start, p.k->last, tr->cur.n);
		steady_kernels(st, r, tr->cur.start, p.k->last);
	} else {
		r->steps = 1;
		r->time.median_ns = r->time.p10_ns = r->time.p90_ns =
			r->span_ns;
		r->time.mean_ns = r->span_ns;
		steady_sums(st, r, st->t_first, st->t_last, 1);
		steady_kernels(st, r, st->t_first, st->t_last);
	}
	qsort(r->kernels, r->n_kernels, sizeof(*r->kernels), by_time);
	return r;
}

void dt_stepper_free(struct dt_stepper *st)
{
	if (!st)
		return;
	for (int sp = 0; sp < SP_COUNT; sp++) {
		for (size_t i = 0; i < st->cap[sp]; i++)
			free(st->tok[sp][i].tr);
		free(st->tok[sp]);
	}
	free(st->graph.tr);
	for (size_t i = 0; i < st->cap_kn; i++)
		free(st->kn[i]);
	free(st->kn);
	free(st->call_names);
	for (size_t i = 0; i < st->cap_strings; i++)
		free(st->strings[i]);
	free(st->strings);
	free(st);
}

struct dt_stepper *dt_steps_watch(struct dt_session *ss)
{
	struct dt_stepper *st = dt_stepper_new();
	struct dt_consumer c;

	if (st) {
		dt_stepper_consumer(st, &c);
		dt_session_add(ss, &c);
	}
	return st;
}

void dt_steps_collect(struct dt_step_stats **all, struct dt_stepper *st)
{
	struct dt_step_stats *one = st ? dt_stepper_finish(st) : NULL;

	dt_stepper_free(st);
	dt_steps_add(all, one);
}

void dt_steps_add(struct dt_step_stats **all, struct dt_step_stats *one)
{
	struct dt_step_stats *prev = *all;

	if (!one)
		return;
	if (!prev) {
		*all = one;
		return;
	}
	/* the traces so far: prev itself, or those it was merged from */
	size_t n = prev->n_each ? prev->n_each : 1;
	struct dt_step_stats **v = calloc(n + 1, sizeof(*v));
	if (!v) {
		dt_steps_free(one);
		return;
	}
	if (prev->n_each)
		memcpy(v, prev->each, n * sizeof(*v));
	else
		v[0] = prev;
	v[n] = one;
	struct dt_step_stats *m =
		dt_steps_merge((const struct dt_step_stats *const *)v, n + 1);
	if (!m) {
		free(v);
		dt_steps_free(one);
		return;
	}
	m->each = v;
	m->n_each = n + 1;
	if (prev->n_each) {
		prev->n_each = 0; /* its traces are m's now */
		free(prev->each);
		prev->each = NULL;
	}
	if (prev != v[0])
		dt_steps_free(prev);
	*all = m;
}

void dt_steps_free(struct dt_step_stats *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_each; i++)
		dt_steps_free(s->each[i]);
	free(s->each);
	for (size_t i = 0; i < s->n_kernels; i++)
		free(s->kernels[i].name);
	free(s->kernels);
	free(s->anchor);
	free(s);
}

/* ---------------------------------------------------------- merging */

static struct dt_step_kernel *kernel_in(struct dt_step_stats *r,
					const char *name)
{
	for (size_t i = 0; i < r->n_kernels; i++)
		if (!strcmp(r->kernels[i].name, name))
			return &r->kernels[i];
	return NULL;
}

struct dt_step_stats *dt_steps_merge(const struct dt_step_stats *const *v,
				     size_t n)
{
	struct dt_step_stats *r = calloc(1, sizeof(*r));
	size_t total = 0;
	if (!r || !n)
		return r;
	for (size_t i = 0; i < n; i++)
		total += v[i]->n_kernels;
	r->kernels = calloc(total ? total : 1, sizeof(*r->kernels));
	if (!r->kernels) {
		free(r);
		return NULL;
	}
	r->found = true;
	r->kernels_known = true;
	r->steps = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		const struct dt_step_stats *s = v[i];
		r->found &= s->found;
		r->kernels_known &= s->kernels_known;
		r->traces += s->traces;
		if (s->steps < r->steps)
			r->steps = s->steps;
		if (s->startup_steps > r->startup_steps)
			r->startup_steps = s->startup_steps;
		if (s->startup_ns > r->startup_ns)
			r->startup_ns = s->startup_ns;
		if (s->span_ns > r->span_ns)
			r->span_ns = s->span_ns;
		if (s->time.median_ns > r->time.median_ns) {
			r->time = s->time;
			free(r->anchor);
			r->anchor = dt_xstrdup(s->anchor);
			r->anchor_kind = s->anchor_kind;
		}
		r->gpu_ns += s->gpu_ns;
		for (int l = 0; l < DT_LIB_COUNT; l++)
			r->lib_ns[l] += s->lib_ns[l];
		for (int f = 0; f < DT_OPF_COUNT; f++)
			r->fam_ns[f] += s->fam_ns[f];
		for (size_t k = 0; k < s->n_kernels; k++) {
			const struct dt_step_kernel *sk = &s->kernels[k];
			struct dt_step_kernel *rk = kernel_in(r, sk->name);
			if (!rk) {
				rk = &r->kernels[r->n_kernels++];
				*rk = (struct dt_step_kernel){
					.name = strdup(sk->name),
					.lib = sk->lib,
					.fam = sk->fam
				};
			}
			rk->per_step_ns += sk->per_step_ns;
			rk->per_step += sk->per_step;
		}
	}
	qsort(r->kernels, r->n_kernels, sizeof(*r->kernels), by_time);
	return r;
}

/* ------------------------------------------------------------ words */

#define ANCHOR_WIDTH 72 /* of a kernel's name, in words; JSON has it all */

int dt_steps_text(const struct dt_step_stats *s, char *buf, size_t size)
{
	char a[32], b[32], c[32], d[32], e[32], f[32];

	if (!s->found)
		return snprintf(buf, size,
				"no repeating structure: the run is one step "
				"of %s, %s of GPU time",
				dt_fmt_ns(s->span_ns, a, sizeof(a)),
				dt_fmt_ns((uint64_t)s->gpu_ns, b, sizeof(b)));
	return snprintf(
		buf, size,
		"%" PRIu64 " steady, %s each (median; p10 %s, p90 %s), "
		"%s of GPU time per step (%.0f%% of its mean time, %s); "
		"after %" PRIu64 " start-up step%s, "
		"%s (%.0f%% of the run); a step begins with %s %.*s%s",
		s->steps, dt_fmt_ns(s->time.median_ns, a, sizeof(a)),
		dt_fmt_ns(s->time.p10_ns, b, sizeof(b)),
		dt_fmt_ns(s->time.p90_ns, c, sizeof(c)),
		dt_fmt_ns((uint64_t)s->gpu_ns, d, sizeof(d)),
		s->time.mean_ns ? 100.0 * s->gpu_ns / (double)s->time.mean_ns
				: 0.0,
		dt_fmt_ns(s->time.mean_ns, f, sizeof(f)), s->startup_steps,
		s->startup_steps == 1 ? "" : "s",
		dt_fmt_ns(s->startup_ns, e, sizeof(e)),
		s->span_ns ? 100.0 * (double)s->startup_ns / (double)s->span_ns
			   : 0.0,
		s->anchor_kind, ANCHOR_WIDTH, s->anchor,
		strlen(s->anchor) > ANCHOR_WIDTH ? "..." : "");
}
