/*
 * analyzer-summary-cut.c - a trace's start-up taken back out of the
 * summary once its steps are known (struct dt_sum_startup): what the
 * report's GPU time, findings, problems and functions are of by default.
 *
 * Steps are known only once the trace is read, and the summary adds up as
 * it streams; reading the trace again would double the cost. But the
 * counters the summary cuts only grow, so their values at a time T say
 * what came before T: while a trace is read, they are copied at cut
 * points, and once the steady state's first step is known, what they held
 * at the first point at or after it (less what they held when the trace
 * began) is taken out. Nothing is added per event but a comparison or two.
 *
 * Events reach a trace in three streams, each about in its own time order
 * and late next to the others: GPU work (buffer by buffer), op executions
 * (once their kernels are in) and calls (thread by thread). Each stream
 * copies its own counters (struct part) when its first event at or past a
 * point arrives, so that a point holds, of each, what happened before it.
 * An event of GPU work or an op that arrives after its stream took points
 * later than it ran is added to those points' copies too (sum_cut_credit,
 * sum_cut_settle): GPU work is on the side of the cut its time is, however
 * late CUPTI handed it over, and nothing is held back to wait for it.
 * GPU work and its ops share their points (an op's GPU time is its
 * kernels'; a call's kernels count at its first kernel's start, as its op
 * does); calls have points of their own, as they run far ahead of the GPU
 * work CUPTI delivers. Copies and sets come in buffers of their own, out
 * of the kernels' order: they pass points but make none.
 *
 * A point is made at each of the first SPACING events, then every 1/SPACING
 * of the events read so far; CUTS are kept: when one more is made, the one
 * whose loss widens the gap around it least, next to its distance from the
 * newest, goes. Points are dense near the trace's end, where the steady
 * state is: the cut falls a few percent of the events after the steady
 * state's first step at most (what lies between is said:
 * dt_sum_startup.late_ns). Memory: per point, the counters of every
 * problem, engine, function, plan build and conversion kernel, about 200
 * bytes for each problem and 40 for the others.
 *
 * Not here: finding the steps (analyzer-steps.c), adding up
 * (analyzer-summary.c).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-summary-internal.h"
#include "analyzer-util.h"
#include "dt-steps.h"

#define CUTS    128 /* points kept */
#define SPACING 32  /* a point every 1/SPACING of the events read */
#define EVERY   1   /* events between points, at least */

/* ------------------------------------------------ what each stream cuts */

/* A counter: where it is and how wide. */
enum width { W64, W32, WDBL };
struct counter {
	void *p;
	enum width w;
};

/* A table of counters: its rows and, per row, its counters, into c[0,
 * fields) (p NULL: none yet; it counts as 0). A row at a time: a copy
 * reads every counter of every row. */
#define MAX_FIELDS 15
struct table {
	size_t (*rows)(const struct dt_summary *s);
	size_t fields;
	void (*row)(struct dt_summary *s, size_t row, struct counter *c);
};

/* Arrays of counters of the summary's own (or its private state's), read
 * and taken out whole. */
struct span {
	bool priv;
	size_t off, n; /* in the struct, uint64_t's */
};
#define SPAN(f)                                                 \
	{                                                       \
		false, offsetof(struct dt_summary, f),          \
			sizeof(((struct dt_summary *)0)->f) / 8 \
	}
#define PSPAN(f)                                          \
	{                                                 \
		true, offsetof(struct priv, f),           \
			sizeof(((struct priv *)0)->f) / 8 \
	}

static const struct span gpu_spans[] = {
	SPAN(gpu_ns), SPAN(cudnn_ns),   SPAN(lib_ns),      SPAN(lib_count),
	SPAN(by_ns),  SPAN(other_ns),   SPAN(other_count), SPAN(copy_ns),
	SPAN(copies), SPAN(copy_bytes), SPAN(tuner_ns),    SPAN(tuner_kernels),
	SPAN(work),   PSPAN(file_gpu), PSPAN(file_comm), PSPAN(file_kernels),
	{ 0, 0, 0 },
};
/* what ops add to lib_ns and lib_count: there once the trace is read (GPU
 * work adds there as it streams, cut with the GPU work) */
static const struct span op_spans[] = {
	SPAN(kind_ns),       SPAN(kind_count), PSPAN(op_lib_ns),
	PSPAN(op_lib_count), { 0, 0, 0 },
};
static const struct span host_spans[] = { SPAN(host_ns),
					  SPAN(host_calls),
					  { 0, 0, 0 } };
static const struct span *const spans[SUM_STREAMS] = {
	[SUM_GPU] = gpu_spans, [SUM_OP] = op_spans, [SUM_HOST] = host_spans
};

static uint64_t *span_base(struct dt_summary *s, const struct span *sp)
{
	return (uint64_t *)((char *)(sp->priv ? (void *)P(s) : (void *)s) +
			    sp->off);
}

static size_t spans_len(int stream)
{
	size_t n = 0;
	for (const struct span *sp = spans[stream]; sp->n; sp++)
		n += sp->n;
	return n;
}

static size_t libs_rows(const struct dt_summary *s)
{
	return s->n_libs;
}

static void lib_gpu_at(struct dt_summary *s, size_t row, struct counter *c)
{
	struct dt_sum_lib *l = &s->libs[row];
	c[0] = (struct counter){ &l->gpu_ns, W64 };
	c[1] = (struct counter){ &l->work, W64 };
}

static void lib_host_at(struct dt_summary *s, size_t row, struct counter *c)
{
	c[0] = (struct counter){ &s->libs[row].host_ns, W64 };
}

static void lib_op_at(struct dt_summary *s, size_t row, struct counter *c)
{
	c[0] = (struct counter){ &s->libs[row].runs, W64 };
}

static size_t converts_rows(const struct dt_summary *s)
{
	return s->n_converts;
}

static void convert_at(struct dt_summary *s, size_t row, struct counter *c)
{
	struct dt_sum_convert *v = &s->converts[row];
	c[0] = (struct counter){ &v->count, W64 };
	c[1] = (struct counter){ &v->ns, W64 };
}

static size_t problems_rows(const struct dt_summary *s)
{
	return s->n_problems;
}

#define PROBLEM_FIELDS 15
static void problem_at(struct dt_summary *s, size_t row, struct counter *c)
{
	struct dt_sum_problem *p = &s->problems[row];
	uint32_t file = P(s)->file;
	struct dt_sum_share *sh =
		file < p->cap_per_file ? &p->per_file[file] : NULL;
	uint64_t *u[] = { &p->count,           &p->failed,
			  &p->gpu_ns,          &p->host_ns,
			  &p->kernels,         &p->unsampled,
			  &p->replays,         &p->captured,
			  &p->convert_ns,      &p->pushed,
			  sh ? &sh->ns : NULL, sh ? &sh->count : NULL };
	uint32_t *w[] = { &p->converts, &p->engine_changes, &p->tune_rounds };

	for (size_t k = 0; k < 12; k++)
		c[k] = (struct counter){ u[k], W64 };
	for (size_t k = 0; k < 3; k++)
		c[12 + k] = (struct counter){ w[k], W32 };
}

static size_t engines_rows(const struct dt_summary *s)
{
	return P(s)->n_engine_rows;
}

static void engine_at(struct dt_summary *s, size_t row, struct counter *c)
{
	const struct priv *pv = P(s);
	struct dt_sum_engine *e =
		&s->problems[pv->engine_rows[row].problem]
			 .engines[pv->engine_rows[row].engine];
	c[0] = (struct counter){ &e->count, W64 };
	c[1] = (struct counter){ &e->gpu_ns, W64 };
	c[2] = (struct counter){ &e->timed, W64 };
	c[3] = (struct counter){ &e->sq_ns, WDBL };
}

static size_t builds_rows(const struct dt_summary *s)
{
	return s->n_builds;
}

static void build_op_at(struct dt_summary *s, size_t row, struct counter *c)
{
	struct dt_sum_build *b = &s->builds[row];
	c[0] = (struct counter){ &b->repeats, W32 };
	c[1] = (struct counter){ &b->repeat_ns, W64 };
}

static void build_host_at(struct dt_summary *s, size_t row, struct counter *c)
{
	struct dt_sum_build *b = &s->builds[row];
	c[0] = (struct counter){ &b->builds, W32 };
	c[1] = (struct counter){ &b->host_ns, W64 };
}

static size_t apis_rows(const struct dt_summary *s)
{
	return s->n_apis;
}

static void api_at(struct dt_summary *s, size_t row, struct counter *c)
{
	struct dt_sum_api *a = &s->apis[row];
	c[0] = (struct counter){ &a->calls, W64 };
	c[1] = (struct counter){ &a->failed, W64 };
	c[2] = (struct counter){ &a->ns, W64 };
	c[3] = (struct counter){ &a->failed_ns, W64 };
}

/* Each stream's tables of rows, besides its spans. */
#define MAX_TABLES 5
static const struct table streams[SUM_STREAMS][MAX_TABLES] = {
	[SUM_GPU] = {
		{ libs_rows, 2, lib_gpu_at },
		{ converts_rows, 2, convert_at },
	},
	[SUM_OP] = {
		{ problems_rows, PROBLEM_FIELDS, problem_at },
		{ engines_rows, 4, engine_at },
		{ builds_rows, 2, build_op_at },
		{ libs_rows, 1, lib_op_at },
	},
	[SUM_HOST] = {
		{ libs_rows, 1, lib_host_at },
		{ apis_rows, 4, api_at },
		{ builds_rows, 2, build_host_at },
	},
};

/* ------------------------------------------------------------- copies */

/* One stream's counters at one time: per table, its rows then; and, the
 * calls', each function's shortest and longest call since the point
 * before (the same can't be taken back out). */
struct part {
	bool taken;
	uint64_t *flat; /* the spans' */
	size_t rows[MAX_TABLES];
	uint64_t *v[MAX_TABLES];
	struct sum_minmax *mm;
	size_t n_mm;
};

struct cut {
	uint64_t t;
	struct part p[SUM_STREAMS];
	uint64_t busy; /* the GPUs' busy time before t (with SUM_GPU's) */
};

/* A group's points, oldest first (pointers: one goes from the middle at
 * each point made). */
struct points {
	struct cut *cut[CUTS + 1];
	size_t n;
};

struct sum_cuts {
	struct dt_fusion *fz; /* counts its chains between the GPU work's
				 points (dt_fusion_mark), or NULL */
	struct cut start; /* when the trace began */
	struct points g[SUM_GROUPS];
	size_t next[SUM_STREAMS]; /* each stream's first point not taken */
};

static uint64_t get(struct counter c)
{
	uint64_t v = 0;
	if (!c.p)
		return 0;
	if (c.w == W64)
		return *(uint64_t *)c.p;
	if (c.w == W32)
		return *(uint32_t *)c.p;
	memcpy(&v, c.p, sizeof(v)); /* a double's bits */
	return v;
}

static void part_free(struct part *p)
{
	for (int t = 0; t < MAX_TABLES; t++)
		free(p->v[t]);
	free(p->flat);
	free(p->mm);
	memset(p, 0, sizeof(*p));
}

static void minmax_add(struct sum_minmax *to, const struct sum_minmax *m)
{
	if (!m->n)
		return;
	if (!to->n || m->min < to->min)
		to->min = m->min;
	if (m->max > to->max)
		to->max = m->max;
	to->n += m->n;
}

/* The calls' shortest and longest since the last point, into p; the next
 * ones start afresh. */
static void take_minmax(struct priv *pv, struct part *p)
{
	p->mm = pv->api_mm;
	p->n_mm = pv->cap_api_mm;
	pv->api_mm = NULL;
	pv->cap_api_mm = 0;
}

/* Those of the apis as they stand (what the traces before gave). */
static void take_api_minmax(const struct dt_summary *s, struct part *p)
{
	p->n_mm = s->n_apis;
	p->mm = calloc(s->n_apis + 1, sizeof(*p->mm));
	for (size_t i = 0; p->mm && i < s->n_apis; i++)
		p->mm[i] = (struct sum_minmax){ s->apis[i].min, s->apis[i].max,
						s->apis[i].calls };
}

/* m's into *to (n of them), grown as needed. */
static void minmax_merge(struct sum_minmax **to, size_t *n,
			 const struct sum_minmax *m, size_t n_m)
{
	if (n_m > *n) {
		struct sum_minmax *v = dt_grow_array(*to, n, n_m, sizeof(**to));
		if (!v)
			return;
		*to = v;
	}
	for (size_t i = 0; i < n_m; i++)
		minmax_add(&(*to)[i], &m[i]);
}

/* The GPUs' busy time in what they were given so far: the GPU work
 * before the point the GPU stream takes. */
static uint64_t busy_so_far(struct priv *pv)
{
	uint64_t ns = 0;
	for (int d = 0; d < 64; d++)
		if (pv->merge[d].hist)
			ns += sum_merger_busy(&pv->merge[d]);
	return ns;
}

/* The stream's counters now into p, its spans' and its tables'. */
static void take_counters(struct dt_summary *s, int stream, struct part *p)
{
	uint64_t *flat = malloc(spans_len(stream) * sizeof(*flat));
	if ((p->flat = flat))
		for (const struct span *sp = spans[stream]; sp->n; sp++) {
			memcpy(flat, span_base(s, sp), sp->n * sizeof(*flat));
			flat += sp->n;
		}
	for (int t = 0; t < MAX_TABLES && streams[stream][t].row; t++) {
		const struct table *tb = &streams[stream][t];
		size_t rows = tb->rows(s), k = tb->fields;
		uint64_t *v = malloc((rows * k + 1) * sizeof(*v));
		struct counter c[MAX_FIELDS];
		if (!v)
			continue; /* counts as nothing before it */
		for (size_t r = 0; r < rows; r++) {
			tb->row(s, r, c);
			for (size_t f = 0; f < k; f++)
				v[r * k + f] = get(c[f]);
		}
		p->v[t] = v;
		p->rows[t] = rows;
	}
}

/* The stream's counters now into the point's copy (replaced). */
static void take(struct dt_summary *s, int stream, struct cut *at)
{
	struct part *p = &at->p[stream];

	part_free(p);
	p->taken = true;
	if (stream == SUM_GPU)
		at->busy = busy_so_far(P(s));
	if (stream == SUM_HOST)
		take_minmax(P(s), p);
	take_counters(s, stream, p);
}

static uint64_t held(const struct part *p, int t, size_t row, size_t k,
		     size_t f)
{
	return p->v[t] && row < p->rows[t] ? p->v[t][row * k + f] : 0;
}

/* The stream's tables' counters one after another, from { 0 }: c, of
 * table t, and where a copy holds it, i (its row * k, its fields, + its
 * field). */
struct walk {
	int t;
	size_t row, field, k, i;
	struct counter c, cs[MAX_FIELDS];
};

static bool walk_next(struct dt_summary *s, int stream, struct walk *w)
{
	for (; w->t < MAX_TABLES && streams[stream][w->t].row;
	     w->t++, w->row = w->field = 0) {
		const struct table *tb = &streams[stream][w->t];
		if (w->field == tb->fields) {
			w->field = 0;
			w->row++;
		}
		if (w->row >= tb->rows(s))
			continue;
		if (!w->field)
			tb->row(s, w->row, w->cs);
		w->k = tb->fields;
		w->i = w->row * w->k + w->field;
		w->c = w->cs[w->field++];
		return true;
	}
	return false;
}

/* What p holds of the counter w is at. */
static uint64_t held_at(const struct part *p, const struct walk *w)
{
	return held(p, w->t, w->row, w->k, w->field - 1);
}

/* Counter c less what it gained from a to b. */
static void counter_sub(struct counter c, uint64_t a, uint64_t b)
{
	double x, y;

	if (!c.p)
		return;
	if (c.w == W64) {
		*(uint64_t *)c.p -= b - a;
	} else if (c.w == W32) {
		*(uint32_t *)c.p -= (uint32_t)(b - a);
	} else {
		memcpy(&x, &a, sizeof(x));
		memcpy(&y, &b, sizeof(y));
		*(double *)c.p -= y - x;
	}
}

/* The counters less what they gained from `from` to `to`. */
static void take_out(struct dt_summary *s, int stream, const struct part *from,
		     const struct part *to)
{
	const uint64_t *was = from->flat, *then = to->flat;
	for (const struct span *sp = spans[stream]; was && then && sp->n;
	     sp++) {
		uint64_t *now = span_base(s, sp);
		for (size_t i = 0; i < sp->n; i++)
			now[i] -= then[i] - was[i];
		was += sp->n;
		then += sp->n;
	}
	for (struct walk w = { 0 }; walk_next(s, stream, &w);)
		counter_sub(w.c, held_at(from, &w), held_at(to, &w));
}

/* ------------------------------------------------------------- points */

/* Group g's point i goes (the points are cumulative: any may). */
static void drop(struct priv *pv, int g, size_t i)
{
	struct points *c = &pv->cuts->g[g];
	size_t *next = pv->cuts->next;

	/* its calls' shortest and longest go on with the next point's */
	struct part *h = &c->cut[i]->p[SUM_HOST],
		    *after = i + 1 < c->n ? &c->cut[i + 1]->p[SUM_HOST] : NULL;
	if (after && after->taken)
		minmax_merge(&after->mm, &after->n_mm, h->mm, h->n_mm);
	else
		minmax_merge(&pv->api_mm, &pv->cap_api_mm, h->mm, h->n_mm);
	for (int k = 0; k < SUM_STREAMS; k++) {
		part_free(&c->cut[i]->p[k]);
		if (sum_group(k) == g && next[k] > i)
			next[k]--;
	}
	if (g == SUM_DEVICE && pv->cuts->fz)
		dt_fusion_unmark(pv->cuts->fz, c->cut[i]->t);
	free(c->cut[i]);
	memmove(&c->cut[i], &c->cut[i + 1], (c->n - i - 1) * sizeof(c->cut[0]));
	c->cut[--c->n] = NULL;
}

/* The point of group g whose loss widens the gap around it least, next
 * to how far it is from the newest (never the first nor the newest). */
static void thin(struct priv *pv, int g)
{
	struct points *c = &pv->cuts->g[g];
	size_t worst = 1;
	double best = -1;
	uint64_t now = c->cut[c->n - 1]->t;

	for (size_t i = 1; i + 1 < c->n; i++) {
		double gap = (double)(c->cut[i + 1]->t - c->cut[i - 1]->t) /
			     (double)(now - c->cut[i]->t + 1);
		if (best < 0 || gap < best) {
			best = gap;
			worst = i;
		}
	}
	drop(pv, g, worst);
}

/* Each stream's next point's time: its events reach sum_cut_reach from
 * there on. */
static void thresholds(struct priv *pv)
{
	struct sum_cuts *c = pv->cuts;
	for (int k = 0; k < SUM_STREAMS; k++) {
		const struct points *g = &c->g[sum_group(k)];
		pv->cut_at[k] =
			c->next[k] < g->n ? g->cut[c->next[k]]->t : UINT64_MAX;
		pv->cut_taken[k] = c->next[k] ? g->cut[c->next[k] - 1]->t : 0;
	}
}

/* Whether t makes no point: not after the last one. The last one goes
 * when it is further past t than t is past the first (a clock read wrong:
 * it would keep any other from being made, points being in time order). */
static bool behind(struct priv *pv, int g, uint64_t t)
{
	struct points *c = &pv->cuts->g[g];

	while (c->n > 1 && c->cut[c->n - 1]->t > t &&
	       c->cut[c->n - 1]->t - t > t - c->cut[0]->t)
		drop(pv, g, c->n - 1);
	return c->n && t <= c->cut[c->n - 1]->t;
}

void sum_cut_reach(struct dt_summary *s, int stream, uint64_t t, bool make)
{
	struct priv *pv = P(s);
	int g = sum_group(stream);
	struct points *c = &pv->cuts->g[g];

	if (make && pv->cut_events[g] >= pv->cut_every[g]) {
		/* a point at this event: each of the group's streams takes
		 * it at its first event past it (a stream comes in about its
		 * time order, ops just after their kernels) */
		uint64_t n = pv->cut_events[g] / SPACING;
		pv->cut_every[g] = pv->cut_events[g] + (n > EVERY ? n : EVERY);
		if (t && !behind(pv, g, t) &&
		    (c->cut[c->n] = calloc(1, sizeof(*c->cut[0])))) {
			c->cut[c->n++]->t = t;
			if (g == SUM_DEVICE && pv->cuts->fz)
				dt_fusion_mark(pv->cuts->fz, t);
		}
		if (c->n > CUTS)
			thin(pv, g);
	}
	size_t *next = &pv->cuts->next[stream];
	while (*next < c->n && c->cut[*next]->t <= t)
		take(s, stream, c->cut[(*next)++]);
	thresholds(pv);
}

/* ------------------------------------------------ late events credited */

/* d more in slot i of table t of p (t < 0: its spans'), a counter of
 * width w; a row the copy has not is made, from nothing. */
static void part_add(int stream, struct part *p, int t, size_t i,
		     enum width w, uint64_t d)
{
	uint64_t *v;

	if (t < 0) {
		v = p->flat ? &p->flat[i] : NULL;
	} else {
		const struct table *tb = &streams[stream][t];
		size_t k = tb->fields, rows = i / k + 1;
		if (rows > p->rows[t]) {
			size_t cap = p->v[t] ? p->rows[t] * k + 1 : 0;
			uint64_t *g = dt_grow_array(p->v[t], &cap, rows * k + 1,
						    sizeof(*g));
			if (!g)
				return; /* it counts as steady */
			memset(g + p->rows[t] * k, 0,
			       (rows - p->rows[t]) * k * sizeof(*g));
			p->v[t] = g;
			p->rows[t] = rows;
		}
		v = &p->v[t][i];
	}
	if (!v)
		return;
	if (w == WDBL) {
		double x, y;
		memcpy(&x, v, sizeof(x));
		memcpy(&y, &d, sizeof(y));
		x += y;
		memcpy(v, &x, sizeof(x));
	} else {
		*v += d;
	}
}

/* d more in that slot of every copy the stream took at a point after t. */
static void credit(struct dt_summary *s, int stream, uint64_t t, int table,
		   size_t i, enum width w, uint64_t d)
{
	struct points *c = &P(s)->cuts->g[sum_group(stream)];

	for (size_t k = P(s)->cuts->next[stream]; k-- > 0 && c->cut[k]->t > t;)
		part_add(stream, &c->cut[k]->p[stream], table, i, w, d);
}

/* Where the stream's copies keep counter c: in its spans (*table -1) or
 * a table's row and field (*i); false when c is none of its. */
static bool slot_of(struct dt_summary *s, int stream, const uint64_t *c,
		    int *table, size_t *i)
{
	uintptr_t at = (uintptr_t)c;
	size_t flat = 0;

	for (const struct span *sp = spans[stream]; sp->n; sp++) {
		uintptr_t b = (uintptr_t)span_base(s, sp);
		if (at >= b && at < b + sp->n * sizeof(*c)) {
			*table = -1;
			*i = flat + (at - b) / sizeof(*c);
			return true;
		}
		flat += sp->n;
	}
	for (struct walk w = { 0 }; walk_next(s, stream, &w);)
		if (w.c.p == c) {
			*table = w.t;
			*i = w.i;
			return true;
		}
	return false;
}

void sum_cut_credit(struct dt_summary *s, int stream, uint64_t t,
		    uint64_t *c, uint64_t n)
{
	int table;
	size_t i;

	if (P(s)->cuts && slot_of(s, stream, c, &table, &i))
		credit(s, stream, t, table, i, W64, n);
}

void sum_cut_credit_busy(struct dt_summary *s, uint64_t t, uint64_t ns)
{
	struct priv *pv = P(s);
	struct points *c;

	if (!pv->cuts)
		return;
	c = &pv->cuts->g[SUM_DEVICE];
	for (size_t k = pv->cuts->next[SUM_GPU]; k-- > 0 && c->cut[k]->t > t;)
		c->cut[k]->busy += ns;
}

/* A stream's counters before a late event. */
struct sum_held {
	struct part p;
};

struct sum_held *sum_cut_hold(struct dt_summary *s, int stream)
{
	struct sum_held *h = P(s)->cuts ? calloc(1, sizeof(*h)) : NULL;

	if (h)
		take_counters(s, stream, &h->p);
	return h;
}

/* What counter c of width w gained from a to b. */
static uint64_t gain(enum width w, uint64_t a, uint64_t b)
{
	double x, y;

	if (w != WDBL)
		return b - a;
	memcpy(&x, &a, sizeof(x));
	memcpy(&y, &b, sizeof(y));
	y -= x;
	memcpy(&b, &y, sizeof(b));
	return b;
}

void sum_cut_settle(struct dt_summary *s, int stream, uint64_t t,
		    struct sum_held *held_before)
{
	struct part *was = held_before ? &held_before->p : NULL, now = { 0 };

	/* a problem's exact GPU times are numbered as they arrive: the late
	 * op's stays among the steady state's and the first of those leaves
	 * in its place (the median may move by that one) */
	if (!was)
		return;
	take_counters(s, stream, &now);
	for (size_t i = 0; was->flat && now.flat && i < spans_len(stream); i++)
		if (now.flat[i] != was->flat[i])
			credit(s, stream, t, -1, i, W64,
			       now.flat[i] - was->flat[i]);
	for (struct walk w = { 0 }; walk_next(s, stream, &w);) {
		uint64_t a = held_at(was, &w), b = held_at(&now, &w);
		if (a != b)
			credit(s, stream, t, w.t, w.i, w.c.w, gain(w.c.w, a, b));
	}
	part_free(&now);
	part_free(was);
	free(held_before);
}

/* No point to make or reach: events pass with a comparison or two. */
static void cuts_idle(struct priv *pv)
{
	for (int k = 0; k < SUM_STREAMS; k++) {
		pv->cut_at[k] = UINT64_MAX;
		pv->cut_taken[k] = 0;
	}
	for (int g = 0; g < SUM_GROUPS; g++)
		pv->cut_every[g] = UINT64_MAX;
}

void sum_cut_begin(struct dt_summary *s)
{
	struct priv *pv = P(s);

	cuts_idle(pv);
	memset(pv->cut_events, 0, sizeof(pv->cut_events));
	free(pv->api_mm);
	pv->api_mm = NULL;
	pv->cap_api_mm = 0;
	if (s->opts.whole || !(pv->cuts = calloc(1, sizeof(*pv->cuts))))
		return;
	pv->cuts->fz = s->fusion;
	for (int k = 0; k < SUM_STREAMS; k++)
		take(s, k, &pv->cuts->start);
	free(pv->cuts->start.p[SUM_HOST].mm);
	take_api_minmax(s, &pv->cuts->start.p[SUM_HOST]);
	for (int g = 0; g < SUM_GROUPS; g++)
		pv->cut_every[g] = 0; /* a point at the first event */
}

static void cuts_free(struct priv *pv)
{
	struct sum_cuts *c = pv->cuts;
	if (!c)
		return;
	for (int g = 0; g < SUM_GROUPS; g++)
		for (size_t i = 0; i < c->g[g].n; i++) {
			for (int k = 0; k < SUM_STREAMS; k++)
				part_free(&c->g[g].cut[i]->p[k]);
			free(c->g[g].cut[i]);
		}
	for (int k = 0; k < SUM_STREAMS; k++)
		part_free(&c->start.p[k]);
	free(c);
	pv->cuts = NULL;
	cuts_idle(pv);
}

/* ------------------------------------------ what a view places by time */

uint64_t dt_sum_op_t(const struct dt_op *op)
{
	return dt_place_op(op);
}

uint64_t dt_sum_cut_t(const struct dt_summary *s)
{
	return P(s)->cut_t;
}

/* ---------------------------------------------------------- the cut */

/* A problem's exact times from before the cut taken out: times[] holds
 * the timed executions [pushed - n_times, pushed); those numbered [a, b)
 * were start-up's. Where some of them went into the histogram, it goes:
 * the steady state's median is then of the exact ones (the latest). */
static void problem_times(struct dt_sum_problem *p, uint64_t a, uint64_t b,
			  uint64_t pushed)
{
	uint64_t first = pushed - p->n_times;
	if (b <= a)
		return;
	if (a < first && p->hist) {
		free(p->hist);
		p->hist = NULL;
		p->hist_n = 0;
	}
	uint64_t lo = a > first ? a : first, hi = b > first ? b : first;
	size_t i = (size_t)(lo - first), j = (size_t)(hi - first);
	memmove(p->times + i, p->times + j,
		(p->n_times - j) * sizeof(*p->times));
	p->n_times -= j - i;
	/* min and max of what is left */
	for (uint32_t e = 0; e < p->n_engines; e++)
		p->engines[e].min_ns = p->engines[e].max_ns = 0;
	for (size_t k = 0; k < p->n_times; k++) {
		struct dt_sum_engine *e = &p->engines[p->times[k].choice];
		uint64_t ns = p->times[k].ns;
		if (!e->min_ns || ns < e->min_ns)
			e->min_ns = ns;
		if (ns > e->max_ns)
			e->max_ns = ns;
	}
}

/* Each function's shortest and longest call: the traces' before, and this
 * one's after the calls' cut point at (NULL: none after it). */
static void cut_minmax(struct dt_summary *s, const struct cut *at)
{
	struct priv *pv = P(s);
	struct points *c = &pv->cuts->g[SUM_CALLS];
	struct part *start = &pv->cuts->start.p[SUM_HOST];
	size_t i = 0;

	while (i < c->n && c->cut[i] != at)
		i++;
	if (at && at->p[SUM_HOST].taken) {
		for (i++; i < c->n; i++)
			minmax_merge(&start->mm, &start->n_mm,
				     c->cut[i]->p[SUM_HOST].mm,
				     c->cut[i]->p[SUM_HOST].n_mm);
		minmax_merge(&start->mm, &start->n_mm, pv->api_mm,
			     pv->cap_api_mm);
	}
	for (size_t a = 0; a < s->n_apis; a++) {
		struct sum_minmax m = a < start->n_mm
					      ? start->mm[a]
					      : (struct sum_minmax){ 0 };
		s->apis[a].min = m.min;
		s->apis[a].max = m.max;
	}
}

static void cut_problems(struct dt_summary *s, const struct part *from,
			 const struct part *to, uint64_t *pushed)
{
	for (size_t r = 0; r < s->n_problems; r++) {
		uint64_t a = held(from, 0, r, PROBLEM_FIELDS, 9),
			 b = held(to, 0, r, PROBLEM_FIELDS, 9);
		problem_times(&s->problems[r], a, b, pushed[r]);
	}
}

/* What the start-up held, from the counters before and after the cut. */
static void startup_add(struct dt_summary *s, const struct dt_summary *was,
			uint64_t builds)
{
	struct dt_sum_startup *u = &s->startup;

	u->gpu_ns += was->gpu_ns - s->gpu_ns;
	u->tune_ns += was->kind_ns[DT_KIND_SEARCH] + was->tuner_ns -
		      s->kind_ns[DT_KIND_SEARCH] - s->tuner_ns;
	u->calls += was->host_calls - s->host_calls;
	u->host_ns += was->host_ns - s->host_ns;
	for (size_t b = 0; b < s->n_builds; b++)
		builds -= s->builds[b].builds;
	u->builds += builds;
}

/* Group g's first point at or after t, or NULL. */
static struct cut *point_at(struct sum_cuts *c, int g, uint64_t t)
{
	for (size_t i = 0; i < c->g[g].n; i++)
		if (c->g[g].cut[i]->t >= t)
			return c->g[g].cut[i];
	return NULL;
}

/* Takes out what each stream counted before its group's point (at, NULL
 * for none: all of it, into end). */
static void take_out_all(struct dt_summary *s, struct cut *const *at,
			 struct cut *end)
{
	struct sum_cuts *c = P(s)->cuts;
	uint64_t *pushed = calloc(s->n_problems + 1, sizeof(*pushed));
	const struct part *p[SUM_STREAMS];

	for (size_t r = 0; pushed && r < s->n_problems; r++)
		pushed[r] = s->problems[r].pushed;
	for (int k = 0; k < SUM_STREAMS; k++) {
		struct cut *to = at[sum_group(k)] ? at[sum_group(k)] : end;
		/* no event of the stream past the point: all came before */
		if (!to->p[k].taken) {
			take(s, k, to);
			to->p[k].taken = to == end;
		}
		p[k] = &to->p[k];
	}
	for (int k = 0; k < SUM_STREAMS; k++)
		take_out(s, k, &c->start.p[k], p[k]);
	cut_minmax(s, at[SUM_CALLS]);
	if (pushed)
		cut_problems(s, &c->start.p[SUM_OP], p[SUM_OP], pushed);
	free(pushed);
}

void sum_cut_finish(struct dt_summary *s, const struct dt_step_stats *st)
{
	struct priv *pv = P(s);
	struct sum_cuts *c = pv->cuts;
	struct cut end = { 0 }, *at[SUM_GROUPS];

	pv->cut_t = 0;
	if (!st || !st->found || !st->startup_ns) {
		cuts_free(pv);
		return;
	}
	for (int g = 0; c && g < SUM_GROUPS; g++)
		at[g] = point_at(c, g, st->t_steady);
	if (!c || (!at[SUM_DEVICE] && !at[SUM_CALLS])) {
		/* whole, or no point in the steady state */
		s->startup.kept++;
		cuts_free(pv);
		return;
	}
	/* where the cut fell: the GPU work's, else the calls' */
	const struct cut *cut =
		at[SUM_DEVICE] && at[SUM_DEVICE]->p[SUM_GPU].taken
			? at[SUM_DEVICE]
		: at[SUM_CALLS] ? at[SUM_CALLS]
				: at[SUM_DEVICE];
	struct dt_summary was = *s;
	uint64_t builds = 0, kernels = pv->file_kernels;
	for (size_t b = 0; b < s->n_builds; b++)
		builds += s->builds[b].builds;
	take_out_all(s, at, &end);
	startup_add(s, &was, builds);
	s->startup.kernels += kernels - pv->file_kernels;

	struct dt_sum_startup *u = &s->startup;
	uint64_t t_first = st->t_steady - st->startup_ns,
		 t_last = t_first + st->span_ns;
	u->traces++;
	u->steps += st->startup_steps;
	u->ns += cut->t - t_first;
	u->late_ns += cut->t - st->t_steady;
	u->steady_ns += t_last > cut->t ? t_last - cut->t : 0;
	/* the GPU's busy time and span from its point on */
	pv->cut_t = at[SUM_DEVICE] ? at[SUM_DEVICE]->t : UINT64_MAX;
	pv->cut_busy = at[SUM_DEVICE] ? at[SUM_DEVICE]->busy : end.busy;
	for (int k = 0; k < SUM_STREAMS; k++)
		part_free(&end.p[k]);
	cuts_free(pv);
}

void sum_cut_file(struct dt_summary *s, struct dt_sum_file *f,
		  uint64_t gpu_span)
{
	const struct priv *pv = P(s);
	uint64_t from = f->t_begin;

	/* the calls' span from the cut on (none cut: UINT64_MAX, 0), or
	 * the GPU's, the longer */
	if (pv->cut_t && pv->cut_t > from)
		from = pv->cut_t;
	f->steady.gpu_ns = pv->file_gpu;
	f->steady.comm_ns = pv->file_comm;
	f->steady.span_ns = f->t_end > from ? f->t_end - from : 0;
	if (gpu_span > f->steady.span_ns)
		f->steady.span_ns = gpu_span;
}

uint64_t sum_cut_busy(struct dt_summary *s, uint64_t busy)
{
	const struct priv *pv = P(s);
	uint64_t before = pv->cut_busy < busy ? pv->cut_busy : busy;

	if (!pv->cut_t)
		return busy;
	s->startup.busy_ns += before;
	return busy - before;
}

void sum_engine_row(struct dt_summary *s, uint32_t problem, uint32_t engine)
{
	struct priv *pv = P(s);
	struct engine_row *v =
		dt_grow_array(pv->engine_rows, &pv->cap_engine_rows,
			      pv->n_engine_rows + 1, sizeof(*v));
	if (!v)
		return; /* its counters stay the whole run's */
	pv->engine_rows = v;
	v[pv->n_engine_rows++] = (struct engine_row){ problem, engine };
}

int dt_sum_startup_text(const struct dt_summary *s, char *buf, size_t size)
{
	const struct dt_sum_startup *u = &s->startup;
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32];

	*buf = 0;
	if (!u->traces)
		return u->kept ? snprintf(buf, size, "kept in what follows: %s",
					  s->opts.whole
						  ? "the whole run "
						    "(--with-warmup)"
						  : "its steady state is "
						    "too short to cut apart")
			       : 0;
	return snprintf(
		buf, size,
		"%s before the steady state%s, %" PRIu64 " step%s: %s of GPU "
		"time (busy %s), %s of it searching and autotuning; %" PRIu64
		" call%s (%s of host time), %" PRIu64 " plan%s built; left out "
		"of what follows, which covers the last %s (from %s after the "
		"steady state's first step%s); --with-warmup keeps it",
		dt_fmt_ns(u->ns, a, sizeof(a)),
		u->traces > 1 ? "s of the traces, summed" : "", u->steps,
		u->steps == 1 ? "" : "s", dt_fmt_ns(u->gpu_ns, b, sizeof(b)),
		dt_fmt_ns(u->busy_ns, c, sizeof(c)),
		dt_fmt_ns(u->tune_ns, d, sizeof(d)), u->calls,
		u->calls == 1 ? "" : "s", dt_fmt_ns(u->host_ns, e, sizeof(e)),
		u->builds, u->builds == 1 ? "" : "s",
		dt_fmt_ns(u->steady_ns, f, sizeof(f)),
		dt_fmt_ns(u->late_ns, g, sizeof(g)),
		u->kept ? "; some traces' start-ups are kept" : "");
}

/* ------------------------------------------------------ what is left */

/* A problem's engines that ran in the steady state, in their order. */
static void compact_engines(struct dt_sum_problem *p)
{
	uint32_t map[DT_SUM_ENGINES], n = 0;

	for (uint32_t e = 0; e < p->n_engines; e++) {
		map[e] = p->engines[e].count ? n : UINT32_MAX;
		if (!p->engines[e].count) {
			free(p->engines[e].knobs);
			continue;
		}
		p->engines[n++] = p->engines[e];
	}
	if (n == p->n_engines)
		return;
	p->n_engines = n;
	for (size_t k = 0; k < p->n_times; k++)
		p->times[k].choice = map[p->times[k].choice];
	p->last_choice =
		map[p->last_choice] == UINT32_MAX ? 0 : map[p->last_choice];
	if (p->hist && map[p->hist_choice] == UINT32_MAX) {
		free(p->hist);
		p->hist = NULL;
		p->hist_n = 0;
	} else if (p->hist) {
		p->hist_choice = map[p->hist_choice];
	}
}

void sum_cut_compact(struct dt_summary *s)
{
	struct priv *pv = P(s);
	size_t n = 0;

	if (!s->startup.traces)
		return;
	for (size_t i = 0; i < s->n_problems; i++) {
		struct dt_sum_problem *p = &s->problems[i];
		compact_engines(p);
		if (!p->count && !p->captured) {
			sum_problem_free(p);
			continue;
		}
		s->problems[n++] = *p;
	}
	s->n_problems = n;
	n = 0;
	for (size_t i = 0; i < s->n_apis; i++) {
		if (!s->apis[i].calls) {
			free(s->apis[i].name);
			continue;
		}
		s->apis[n++] = s->apis[i];
	}
	s->n_apis = n;
	n = 0;
	for (size_t i = 0; i < s->n_builds; i++) {
		struct dt_sum_build *b = &s->builds[i];
		/* built in the start-up: what ran again of it too */
		if (!b->builds) {
			free(b->key);
			free(b->brief);
			free(pv->seen[i]);
			continue;
		}
		if (b->repeats > b->builds)
			b->repeats = b->builds;
		pv->seen[n] = pv->seen[i];
		pv->n_seen[n] = pv->n_seen[i];
		s->builds[n++] = *b;
	}
	s->n_builds = n;
	n = 0;
	for (size_t i = 0; i < s->n_converts; i++) {
		if (!s->converts[i].count) {
			free(s->converts[i].name);
			continue;
		}
		s->converts[n++] = s->converts[i];
	}
	s->n_converts = n;
}

uint64_t dt_sum_ops(const struct dt_summary *s)
{
	uint64_t n = 0;
	for (int k = 0; k < DT_KIND_COUNT; k++)
		n += s->kind_count[k];
	return n;
}
