/*
 * replay-run.c - one replay of a trace from start to end: its problems
 * read, the ones asked for chosen (--top, --op), the GPU checked against
 * the trace's, each problem measured within its share of the budget and
 * its line written to the results file as soon as it is known (a replay
 * stopped half way keeps what it measured, and the next one continues
 * from there), progress on stderr. The trace itself is only read. The
 * file's format is replay/REPLAY.md's; reading it back,
 * analyzer-replayed.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "dt-replayed.h"
#include "replay-internal.h"

/* The calibration tolerance: a replayed time of the recorded engine
 * further than this from the trace's makes the verdict uncertain. */
#define CALIBRATION 0.15

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void put_str(json_object *o, const char *k, const char *v)
{
	if (v)
		json_object_object_add(o, k, json_object_new_string(v));
}

static void put_int(json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

/* One line of JSON into f, flushed: what is measured stays. */
static bool put_line(FILE *f, json_object *o)
{
	bool ok = fprintf(f, "%s\n",
			  json_object_to_json_string_ext(
				  o, JSON_C_TO_STRING_PLAIN)) > 0 &&
		  !fflush(f);
	json_object_put(o);
	return ok;
}

static json_object *cand_json(const struct cand *c)
{
	json_object *o = json_object_new_object();

	put_int(o, "engine", c->engine);
	if (c->knobs[0])
		put_str(o, "knobs", c->knobs);
	put_str(o, "source", c->source);
	put_str(o, "status", c->status);
	if (c->t.runs) {
		put_int(o, "median_ns", (int64_t)c->t.median_ns);
		put_int(o, "p10_ns", (int64_t)c->t.p10_ns);
		put_int(o, "p90_ns", (int64_t)c->t.p90_ns);
		json_object_object_add(
			o, "spread",
			json_object_new_double(
				c->t.median_ns
					? (double)(c->t.p90_ns - c->t.p10_ns) /
						  (double)c->t.median_ns
					: 0));
		put_int(o, "runs", c->t.runs);
	}
	put_int(o, "workspace", c->workspace);
	if (c->error >= 0)
		json_object_object_add(o, "error",
				       json_object_new_double(c->error));
	if (c->agrees >= 0)
		json_object_object_add(o, "agrees",
				       json_object_new_boolean(c->agrees));
	return o;
}

/* The fastest candidate that agrees with the recorded engine (the
 * recorded one itself when none is faster), or -1. */
static int best_of(const struct cand *c, size_t n)
{
	int best = c[0].t.runs ? 0 : -1;

	for (size_t i = 1; i < n; i++)
		if (c[i].t.runs && c[i].agrees == 1 &&
		    (best < 0 || c[i].t.median_ns < c[best].t.median_ns))
			best = (int)i;
	return best;
}

static json_object *problem_json(const struct problem *p, const char *status,
				 const char *reason)
{
	json_object *o = json_object_new_object();

	put_str(o, "problem", p->key);
	put_str(o, "brief", p->brief);
	put_str(o, "api", p->api);
	put_str(o, "status", status);
	put_str(o, "reason", reason);
	put_int(o, "executions", (int64_t)p->executions);
	put_int(o, "recorded_ns", (int64_t)problem_recorded_ns(p));
	put_int(o, "engine", p->engine);
	if (p->knobs)
		put_str(o, "knobs", p->knobs);
	/* a legacy call has no knobs: its algorithm is all there is */
	json_object_object_add(
		o, "knobs_recorded",
		json_object_new_boolean(p->knobs != NULL || p->legacy));
	json_object_object_add(o, "legacy", json_object_new_boolean(p->legacy));
	return o;
}

static void measured_json(json_object *o, uint64_t recorded,
			  const struct cand *c, size_t n)
{
	json_object *a = json_object_new_array();
	uint64_t replayed = c[0].t.runs ? c[0].t.median_ns : 0;

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, cand_json(&c[i]));
	json_object_object_add(o, "candidates", a);
	put_int(o, "replayed_ns", (int64_t)replayed);
	if (recorded && replayed)
		json_object_object_add(
			o, "calibration",
			json_object_new_double((double)replayed /
					       (double)recorded));
	json_object_object_add(
		o, "uncertain",
		json_object_new_boolean(
			!recorded || !replayed ||
			(double)replayed >
				(1 + CALIBRATION) * (double)recorded ||
			(double)replayed <
				(1 - CALIBRATION) * (double)recorded));
	put_int(o, "chosen", c[0].t.runs ? 0 : -1);
	put_int(o, "best", best_of(c, n));
}

/* ------------------------------------------------------- which problems */

static bool wanted(const struct problems *ps, size_t i,
		   const struct dt_replay_opts *o)
{
	if (o->op)
		return ps->v[i].asked;
	return !o->top || i < o->top;
}

/* Whether an earlier replay (prev) already has problem key. */
static bool done_before(const struct dt_replayed *prev, const char *key)
{
	for (size_t i = 0; prev && i < prev->n_problems; i++)
		if (!strcmp(prev->problems[i].problem, key))
			return true;
	return false;
}

static void list(const struct problems *ps, const struct dt_replay_opts *o)
{
	printf("%5s  %12s  %8s  %-8s %s\n", "#", "GPU time", "count", "engine",
	       "problem");
	for (size_t i = 0; i < ps->n; i++) {
		const struct problem *p = &ps->v[i];
		char eng[24];
		if (!wanted(ps, i, o))
			continue;
		if (p->engine >= 0)
			snprintf(eng, sizeof(eng), "%s%lld",
				 p->legacy ? "algo" : "eng",
				 (long long)p->engine);
		else
			snprintf(eng, sizeof(eng), "?");
		printf("%5zu  %10.1f us  %8llu  %-8s %.100s\n", i + 1,
		       (double)p->gpu_ns / 1e3,
		       (unsigned long long)p->executions, eng,
		       p->brief && p->brief[0] ? p->brief : p->key);
		printf("%5s  %s\n", "", p->why ? p->why : "can be rebuilt");
	}
}

/* ------------------------------------------------------------ the run */

struct run {
	const char *path, *results;
	const struct dt_replay_opts *o;
	struct problems ps;
	struct dt_replayed *prev;
	struct gpu g;
	FILE *out;
};

/* The results file opened: continued when an earlier replay on this GPU
 * wrote it, else written anew with its header. */
static int open_results(struct run *r, char *err, size_t errlen)
{
	char why[256];
	int rc = dt_replayed_read(r->results, &r->prev, why, sizeof(why));

	if (rc < 0) {
		snprintf(err, errlen, "%s (move it away to replay again)", why);
		return 2;
	}
	if (r->prev && (!r->prev->gpu || strcmp(r->prev->gpu, r->g.name) ||
			r->prev->cold_cache != r->o->cold_cache ||
			strcmp(r->prev->engines ? r->prev->engines : "",
			       r->o->all_engines ? "all" : "heuristic"))) {
		/* measured otherwise: not continued */
		dt_replayed_free(r->prev);
		r->prev = NULL;
	}
	/* continued after its last whole line: one cut short goes */
	if (r->prev && truncate(r->results, (off_t)r->prev->complete_bytes)) {
		snprintf(err, errlen, "cannot write %s: %s", r->results,
			 strerror(errno));
		return 2;
	}
	r->out = fopen(r->results, r->prev ? "a" : "w");
	if (!r->out) {
		snprintf(err, errlen, "cannot write %s: %s", r->results,
			 strerror(errno));
		return 2;
	}
	if (r->prev)
		return 0;
	json_object *h = json_object_new_object();
	char v[32];
	put_str(h, "schema", "dnntrace.replay");
	put_int(h, "version", DT_REPLAYED_VERSION);
	put_str(h, "trace", r->path);
	put_str(h, "gpu", r->g.name);
	put_str(h, "recorded_gpu", r->ps.gpu[0] ? r->ps.gpu : NULL);
	json_object_object_add(h, "any_gpu",
			       json_object_new_boolean(r->o->any_gpu));
	json_object_object_add(h, "cold_cache",
			       json_object_new_boolean(r->o->cold_cache));
	put_str(h, "engines", r->o->all_engines ? "all" : "heuristic");
	snprintf(v, sizeof(v), "%zu", r->g.cudnnGetVersion());
	put_str(h, "cudnn", v);
	if (!put_line(r->out, h)) {
		snprintf(err, errlen, "cannot write %s", r->results);
		return 2;
	}
	return 0;
}

/* Measure problem i and write its line. */
static bool replay_one(struct run *r, size_t i, size_t k, size_t n,
		       double budget)
{
	const struct problem *p = &r->ps.v[i];
	struct cand c[CANDS_MAX];
	size_t nc = 0;
	char why[256];
	json_object *o;

	if (!r->o->quiet)
		fprintf(stderr, "replay: [%zu/%zu] %.90s\n", k, n,
			p->brief ? p->brief : p->key);
	if (p->why) {
		o = problem_json(p, "not_rebuilt", p->why);
	} else if ((p->graph ? graph_measure : legacy_measure)(
			   &r->g, p, r->o, budget, c, &nc, why, sizeof(why))) {
		o = problem_json(p, "failed", why);
	} else {
		o = problem_json(p, "measured", NULL);
		measured_json(o, problem_recorded_ns(p), c, nc);
		int best = best_of(c, nc);
		if (!r->o->quiet && best >= 0)
			fprintf(stderr,
				"replay:   %zu candidates; recorded eng%lld "
				"%.1f us, best eng%lld %.1f us\n",
				nc, (long long)c[0].engine,
				(double)c[0].t.median_ns / 1e3,
				(long long)c[best].engine,
				(double)c[best].t.median_ns / 1e3);
	}
	if (!r->o->quiet && !p->why && nc == 0)
		fprintf(stderr, "replay:   not measured: %s\n", why);
	return put_line(r->out, o);
}

static int run_all(struct run *r, char *err, size_t errlen)
{
	size_t todo = 0, k = 0;
	double t0 = now_s();

	for (size_t i = 0; i < r->ps.n; i++)
		todo += wanted(&r->ps, i, r->o) &&
			!done_before(r->prev, r->ps.v[i].key);
	if (!r->o->quiet && r->prev)
		fprintf(stderr,
			"replay: continuing %s: %zu problems measured before\n",
			r->results, r->prev->n_problems);
	for (size_t i = 0; i < r->ps.n; i++) {
		if (!wanted(&r->ps, i, r->o) ||
		    done_before(r->prev, r->ps.v[i].key))
			continue;
		double left = r->o->budget_s - (now_s() - t0);
		if (left <= 0) {
			if (!r->o->quiet)
				fprintf(stderr,
					"replay: the budget is spent: %zu "
					"problems left for the next run\n",
					todo - k);
			break;
		}
		k++;
		if (!replay_one(r, i, k, todo, left / (double)(todo - k + 1))) {
			snprintf(err, errlen, "cannot write %s", r->results);
			return 2;
		}
	}
	if (!r->o->quiet)
		fprintf(stderr, "replay: results in %s\n", r->results);
	return 0;
}

int dt_replay(const char *path, const struct dt_replay_opts *o, char *err,
	      size_t errlen)
{
	struct run r = { .path = path, .o = o };
	char buf[4096], why[256];
	int rc;

	r.results = o->results ? o->results
			       : dt_replayed_path(path, buf, sizeof(buf));
	if (problems_read(path, o->op, &r.ps, err, errlen))
		return 2;
	if (o->list) {
		list(&r.ps, o);
		problems_free(&r.ps);
		return 0;
	}
	if (gpu_open(&r.g, why, sizeof(why))) {
		snprintf(err, errlen, "cannot replay here: %s", why);
		problems_free(&r.ps);
		return DT_REPLAY_NO_GPU;
	}
	if (r.ps.gpu[0] && strcmp(r.ps.gpu, r.g.name) && !o->any_gpu) {
		snprintf(err, errlen,
			 "the trace was recorded on an %s, this GPU is an %s: "
			 "its times would not compare (--any-gpu to replay "
			 "anyway)",
			 r.ps.gpu, r.g.name);
		rc = DT_REPLAY_NO_GPU;
	} else {
		if (r.ps.gpu[0] && strcmp(r.ps.gpu, r.g.name) && !o->quiet)
			fprintf(stderr,
				"replay: recorded on an %s, replayed on an %s "
				"(--any-gpu): calibration says how far apart\n",
				r.ps.gpu, r.g.name);
		rc = open_results(&r, err, errlen);
		if (!rc)
			rc = run_all(&r, err, errlen);
	}
	if (r.out && fclose(r.out) && !rc) {
		snprintf(err, errlen, "cannot write %s", r.results);
		rc = 2;
	}
	dt_replayed_free(r.prev);
	gpu_close(&r.g);
	problems_free(&r.ps);
	return rc;
}
