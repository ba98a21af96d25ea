/*
 * replay-budget.c - replay's time: the clock budgets are kept on, a
 * budget shared out (a replay's among its problems by their recorded GPU
 * time, with a floor), what one did not reach said (replay/REPLAY.md's
 * "Budget"), the stall of a call that does not return, and progress on
 * stderr. Where the budget is checked is its callers': before each
 * heuristic asked, each engine config made, each plan built and each
 * batch timed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "replay-internal.h"

double dt_replay_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double budget_left(double until)
{
	double left = until - dt_replay_now_s();

	return left > 0 ? left : 0;
}

double budget_share(double until, size_t n)
{
	return dt_replay_now_s() + budget_left(until) / (double)(n ? n : 1);
}

bool budget_allows(const struct budget *b, double need_s)
{
	double left = budget_left(b->until);

	return left > 0 && left >= need_s;
}

/* The status of a candidate the budget did not reach. */
static const char not_timed[] = "budget";

void budget_skip(struct cand *c)
{
	c->error = -1;
	c->agrees = -1;
	c->workspace = -1;
	snprintf(c->status, sizeof(c->status), "%s", not_timed);
}

bool budget_skipped(const struct cand *c)
{
	return !strncmp(c->status, not_timed, sizeof(not_timed) - 1);
}

void budget_recorded(struct budget *b, const struct cand *c)
{
	if (c->t.runs)
		b->recorded_at = dt_replay_now_s();
}

bool budget_cut(const struct budget *b, const struct cand *c, size_t n)
{
	if (b->modes_left || b->engines_left || b->full)
		return true;
	for (size_t i = 0; i < n; i++)
		if (budget_skipped(&c[i]))
			return true;
	return false;
}

void progress_cand(const struct dt_replay_opts *opts, size_t i, size_t n,
		   const struct cand *c, bool legacy, double secs)
{
	if (opts->quiet)
		return;
	if (n)
		fprintf(stderr, "replay:   [%zu/%zu] ", i, n);
	else
		fprintf(stderr, "replay:   [%zu] ", i);
	fprintf(stderr, "%s%lld%s%s (%s): ", legacy ? "algo" : "eng",
		(long long)c->engine, c->knobs[0] ? " " : "", c->knobs,
		c->source);
	if (c->t.runs)
		fprintf(stderr, "%.1f us", (double)c->t.median_ns / 1e3);
	else
		fprintf(stderr, "%s", c->status);
	fprintf(stderr, ", %.2f s\n", secs);
}

/* ------------------------------------------------------------ shares */

void shares_add(struct shares *s, double weight)
{
	s->weight += weight;
	s->items++;
}

/* What the recorded engines took, their median (the lower one of an
 * even count: the first problem's, which loads cuDNN's modules, is no
 * floor for the second); 0 before any. */
static double shares_floor(const struct shares *s)
{
	return s->n ? s->took[(s->n - 1) / 2] : 0;
}

double shares_next(struct shares *s, double until, double weight)
{
	double left = budget_left(until);
	double part = s->items <= 1   ? 1
		      : s->weight > 0 ? weight / s->weight
				      : 1 / (double)s->items;
	double share = fmax(left * part, shares_floor(s));

	s->weight = fmax(s->weight - weight, 0);
	if (s->items)
		s->items--;
	return dt_replay_now_s() + fmin(share, left);
}

void shares_took(struct shares *s, double secs)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		double *v = realloc(s->took, cap * sizeof(*v));
		if (!v)
			return; /* the floor stays as it was */
		s->took = v;
		s->cap = cap;
	}
	size_t i = s->n++;
	for (; i > 0 && s->took[i - 1] > secs; i--)
		s->took[i] = s->took[i - 1];
	s->took[i] = secs;
}

void shares_free(struct shares *s)
{
	free(s->took);
	*s = (struct shares){ 0 };
}

/* ------------------------------------------------------------ the stall */

/* The last resort of the bound: a call into cuDNN or CUDA that does not
 * return (a kernel that never ends, a lock never given back) cannot be
 * cut short. A thread waits for the budget's end and a grace after it;
 * should the replay not be done by then, it writes the problem in hand
 * with the candidates measured (the one in hand said not to have ended)
 * and ends the process. The threads take turns at the results file: a
 * line is written holding the lock, and the stalled replay never gets it
 * back. */
struct stall {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	bool done;
	struct timespec at; /* CLOCK_MONOTONIC */
	FILE *out;
	bool quiet;
	/* the problem in hand, its candidates as far as measured */
	const struct problem *p;
	const struct cand *c;
	const size_t *n;
	const struct budget *b;
};

/* The problem in hand's line, the candidate in hand (its status still
 * empty) said to have stalled. */
static void stall_write(struct stall *s)
{
	size_t n = *s->n;
	struct cand *c = calloc(n ? n : 1, sizeof(*c));

	if (!c)
		return;
	memcpy(c, s->c, n * sizeof(*c));
	for (size_t i = 0; i < n; i++)
		if (!c[i].status[0]) {
			budget_skip(&c[i]);
			snprintf(c[i].status, sizeof(c[i].status),
				 "%s: it had not ended when the budget was "
				 "spent",
				 not_timed);
		}
	if (n)
		results_problem(s->out, s->p, "measured", NULL, c, n, s->b);
	else
		results_problem(s->out, s->p, "failed",
				"a call into cuDNN or CUDA had not returned "
				"when the budget was spent",
				NULL, 0, s->b);
	free(c);
}

static void *stall_watch(void *arg)
{
	struct stall *s = arg;

	pthread_mutex_lock(&s->mu);
	while (!s->done &&
	       pthread_cond_timedwait(&s->cv, &s->mu, &s->at) != ETIMEDOUT)
		;
	if (s->done) {
		pthread_mutex_unlock(&s->mu);
		return NULL;
	}
	/* the lock is kept: the replay writes nothing more */
	if (s->p)
		stall_write(s);
	fflush(s->out);
	if (!s->quiet)
		fprintf(stderr,
			"replay: a call into cuDNN or CUDA had not returned "
			"when the budget was spent: what was measured is "
			"written, the replay stopped\n");
	_exit(0);
}

struct stall *stall_start(FILE *out, double at, bool quiet)
{
	struct stall *s = calloc(1, sizeof(*s));
	pthread_condattr_t attr;

	if (!s)
		return NULL;
	s->out = out;
	s->quiet = quiet;
	s->at.tv_sec = (time_t)at;
	s->at.tv_nsec = (long)((at - (double)s->at.tv_sec) * 1e9);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&s->th, NULL, stall_watch, s)) {
		free(s);
		return NULL;
	}
	return s;
}

void stall_hold(struct stall *s, const struct problem *p, const struct cand *c,
		const size_t *n, const struct budget *b)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->p = p;
	s->c = c;
	s->n = n;
	s->b = b;
	pthread_mutex_unlock(&s->mu);
}

void stall_lock(struct stall *s)
{
	if (s)
		pthread_mutex_lock(&s->mu);
}

void stall_unlock(struct stall *s)
{
	if (!s)
		return;
	s->p = NULL; /* written */
	pthread_mutex_unlock(&s->mu);
}

void stall_stop(struct stall *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->done = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->th, NULL);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
