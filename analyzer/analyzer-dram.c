/*
 * analyzer-dram.c - DRAM traffic sampled from the GPU's counters (record
 * --gpu-metrics), attributed to the work that ran during each sample.
 *
 * A sample is device-wide: the bytes every kernel, copy and set moved in
 * its window. Its bytes go to the work that overlapped the window, each in
 * proportion to the time it covered; the part of the window no work
 * covered keeps its share as "no work recorded" (other processes, work
 * launched before recording began, writes draining from L2). Samples and
 * work reach the summary in separate streams, each in about time order:
 * each side is kept for a while in a ring, and a pair is counted when the
 * second of the two arrives. A sample is settled when it leaves its ring
 * (or at the end), which bounds memory whatever the length of the run.
 *
 * This is a time-overlap estimate, not a per-kernel measurement: exact for
 * work longer than a few samples, a share of the window for shorter work.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer-util.h"
#include "dt-summary.h"

/* Samples wait for the work that ran during them: a recorder decodes
 * samples every few milliseconds but hands kernels over every flush (half
 * a second by default): at 20 us, 65536 samples are 1.3 s. */
#define SAMPLES 65536
#define WORKS 16384
#define KEYS 6       /* kinds of work a sample keeps apart */

struct work {
	uint64_t start, end;
	uint32_t device;
	uint16_t key; /* lib * DT_OPF_COUNT + family */
};

struct sample {
	uint64_t start, end;
	uint32_t device;
	double read, write;
	uint16_t key[KEYS];
	uint64_t ns[KEYS]; /* time each kind of work covered */
	uint64_t rest_ns;  /* and work of more kinds than the slots hold */
	int n;
};

struct dt_dram {
	struct sample *s; /* ring, oldest at s_head */
	size_t s_head, s_n;
	struct work *w;
	size_t w_head, w_n;
	int read_ix, write_ix;
	struct dt_sum_dram *out;
};

static uint16_t key_of(int lib, int fam)
{
	return (uint16_t)(lib * DT_OPF_COUNT + fam);
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static void add_cover(struct sample *s, uint16_t key, uint64_t ns)
{
	int i = 0;

	while (i < s->n && s->key[i] != key)
		i++;
	if (i == s->n) {
		if (s->n == KEYS) {
			s->rest_ns += ns; /* credited to "other" */
			return;
		}
		s->key[s->n++] = key;
	}
	s->ns[i] += ns;
}

/* Into the timeline: bins whose width doubles as the run outgrows them. */
static void timeline_add(struct dt_sum_dram *d, uint64_t t, double bytes)
{
	if (!d->bin_ns) {
		d->t0 = t;
		d->bin_ns = 1000000; /* 1 ms */
	}
	uint64_t rel = t > d->t0 ? t - d->t0 : 0;
	while (rel / d->bin_ns >= DT_DRAM_BINS) {
		dt_bins_fold(d->bins, DT_DRAM_BINS);
		d->bin_ns *= 2;
	}
	d->bins[rel / d->bin_ns] += bytes > 0 ? (uint64_t)(bytes + 0.5) : 0;
}

/* A sample leaves: its bytes to the work that covered it. */
static void settle(struct dt_dram *d, const struct sample *s)
{
	struct dt_sum_dram *o = d->out;
	uint64_t win = s->end > s->start ? s->end - s->start : 0;
	uint64_t covered = 0;

	for (int i = 0; i < s->n; i++)
		covered += s->ns[i];
	covered += s->rest_ns;
	/* concurrent work shares the window; idle parts are nobody's */
	double denom = (double)(covered > win ? covered : win);
	o->samples++;
	o->sampled_ns += win;
	o->read += s->read;
	o->write += s->write;
	if (win && (s->read + s->write) / (double)win * 1e9 > o->peak_Bps)
		o->peak_Bps = (s->read + s->write) / (double)win * 1e9;
	timeline_add(o, s->start, s->read + s->write);
	if (denom <= 0)
		return;
	for (int i = 0; i < s->n; i++) {
		int lib = s->key[i] / DT_OPF_COUNT, fam = s->key[i] % DT_OPF_COUNT;
		double share = (double)s->ns[i] / denom;
		o->read_by[lib][fam] += s->read * share;
		o->write_by[lib][fam] += s->write * share;
		o->ns_by[lib][fam] += s->ns[i];
	}
	if (s->rest_ns) {
		double share = (double)s->rest_ns / denom;
		o->read_by[DT_LIB_OTHER][DT_OPF_OTHER] += s->read * share;
		o->write_by[DT_LIB_OTHER][DT_OPF_OTHER] += s->write * share;
		o->ns_by[DT_LIB_OTHER][DT_OPF_OTHER] += s->rest_ns;
	}
	if (covered < win) {
		double share = (double)(win - covered) / denom;
		o->idle_read += s->read * share;
		o->idle_write += s->write * share;
	}
}

struct dt_dram *dt_dram_new(struct dt_sum_dram *out)
{
	struct dt_dram *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->s = calloc(SAMPLES, sizeof(*d->s));
	d->w = calloc(WORKS, sizeof(*d->w));
	if (!d->s || !d->w) {
		dt_dram_free(d);
		return NULL;
	}
	d->out = out;
	d->read_ix = d->write_ix = -1;
	return d;
}

void dt_dram_sample(struct dt_dram *d, const struct dt_gpu_sample *gs)
{
	if (!d)
		return;
	/* looked up each time: a sample may carry fewer values, and the
	 * names can change */
	d->read_ix = dt_gpu_sample_metric(gs, "dram__bytes_read.sum");
	d->write_ix = dt_gpu_sample_metric(gs, "dram__bytes_write.sum");
	if (d->s_n == SAMPLES) {
		settle(d, &d->s[d->s_head]);
		d->s_head = (d->s_head + 1) % SAMPLES;
		d->s_n--;
	}
	struct sample *s = &d->s[(d->s_head + d->s_n++) % SAMPLES];
	memset(s, 0, sizeof(*s));
	s->start = gs->start;
	s->end = gs->end;
	s->device = gs->device;
	s->read = d->read_ix >= 0 ? gs->v[d->read_ix] : 0;
	s->write = d->write_ix >= 0 ? gs->v[d->write_ix] : 0;
	/* the work read before it, newest first, until a run of work that
	 * ended before the window says the rest did too (work comes in
	 * about time order, stream by stream) */
	int before = 0;
	for (size_t i = d->w_n; i-- > 0 && before < 64;) {
		const struct work *w = &d->w[(d->w_head + i) % WORKS];
		uint64_t ns = w->device == s->device
				      ? overlap(w->start, w->end, s->start, s->end)
				      : 0;
		if (ns)
			add_cover(s, w->key, ns);
		before = w->end <= s->start ? before + 1 : 0;
	}
}

void dt_dram_work(struct dt_dram *d, uint32_t device, uint64_t start,
		  uint64_t end, int lib, int fam)
{
	if (!d || end <= start)
		return;
	uint16_t key = key_of(lib, fam);
	/* the samples read before it (in time order): from the first that
	 * ends after it starts */
	size_t lo = 0, hi = d->s_n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->s[(d->s_head + mid) % SAMPLES].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < d->s_n; i++) {
		struct sample *s = &d->s[(d->s_head + i) % SAMPLES];
		if (s->start >= end)
			break;
		if (s->device != device)
			continue;
		uint64_t ns = overlap(start, end, s->start, s->end);
		if (ns)
			add_cover(s, key, ns);
	}
	if (d->w_n == WORKS) {
		d->w_head = (d->w_head + 1) % WORKS;
		d->w_n--;
	}
	d->w[(d->w_head + d->w_n++) % WORKS] =
		(struct work){ start, end, device, key };
}

void dt_dram_finish(struct dt_dram *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->s_n; i++)
		settle(d, &d->s[(d->s_head + i) % SAMPLES]);
	d->s_n = 0;
	d->w_n = 0;
}

void dt_dram_free(struct dt_dram *d)
{
	if (!d)
		return;
	free(d->s);
	free(d->w);
	free(d);
}
