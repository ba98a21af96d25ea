/*
 * replay-results.c - the results file written (replay/REPLAY.md has its
 * format): its header line, a line per problem with its candidates, the
 * recorded engine's calibration against the trace (its kernels' time
 * where CUPTI gave it, else its events') and the best candidate,
 * and a line per fusion what-if. Each line is flushed when written, so
 * that a replay stopped half way keeps what it measured. Reading the file
 * back is the analyzer's (analyzer-replayed.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "dt-replayed.h"
#include "replay-internal.h"

/* The calibration tolerance: a replayed time of the recorded engine
 * further than this from the trace's makes the verdict uncertain. */
#define CALIBRATION 0.15

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

int results_best(const struct cand *c, size_t n)
{
	int best = -1;

	/* the first that ran is the reference (the recorded engine, unless
	 * cuDNN refused it): the others' outputs were held against its */
	for (size_t i = 0; i < n; i++)
		if (c[i].t.runs &&
		    (best < 0 || (c[i].agrees == 1 &&
				  c[i].t.median_ns < c[best].t.median_ns)))
			best = (int)i;
	return best;
}

/* Whether every attribute of a GEMM's algorithm is in the trace (those
 * that are not were left at cuBLASLt's defaults). */
static bool gemm_config_known(const struct dt_gemm_build *b)
{
	for (int i = 0; i < DT_GEMM_ALGO_ATTRS; i++)
		if (b->algo[i] == DT_GEMM_ALGO_UNKNOWN)
			return false;
	return true;
}

/* A GEMM's: whose call it was (the knob that acts on it differs), and
 * whether its scalars were the program's (else 1, as replay took them
 * where they were in device memory). */
static void gemm_json(json_object *o, const struct dt_gemm_build *b)
{
	put_str(o, "gemm", b->library);
	json_object_object_add(
		o, "scalars_recorded",
		json_object_new_boolean(b->has_alpha && b->has_beta));
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
	put_int(o, "recorded_ns", (int64_t)p->recorded_ns);
	put_int(o, "engine", p->engine);
	if (p->knobs)
		put_str(o, "knobs", p->knobs);
	/* a legacy call has no knobs: its algorithm is all there is */
	json_object_object_add(
		o, "knobs_recorded",
		json_object_new_boolean(p->gemm ? gemm_config_known(p->gemm)
						: p->knobs != NULL ||
							  p->legacy));
	json_object_object_add(o, "legacy", json_object_new_boolean(p->legacy));
	if (p->gemm)
		gemm_json(o, p->gemm);
	return o;
}

/* The recorded engine's replayed time that calibration holds against
 * the trace's, and by what it was measured: its kernels' times, as the
 * trace measured it, where CUPTI gave them; else the events'. */
static uint64_t calibrated_ns(const struct cand *c0, const char **by)
{
	*by = c0->t.kernels_ns ? "kernels" : "events";
	if (!c0->t.runs)
		return 0;
	return c0->t.kernels_ns ? c0->t.kernels_ns : c0->t.median_ns;
}

static void measured_json(json_object *o, uint64_t recorded,
			  const struct cand *c, size_t n)
{
	json_object *a = json_object_new_array();
	const char *by;
	uint64_t replayed = calibrated_ns(&c[0], &by);

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, cand_json(&c[i]));
	json_object_object_add(o, "candidates", a);
	put_int(o, "replayed_ns",
		(int64_t)(c[0].t.runs ? c[0].t.median_ns : 0));
	if (c[0].t.kernels_ns)
		put_int(o, "replayed_kernels_ns", (int64_t)c[0].t.kernels_ns);
	put_str(o, "calibration_by", by);
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
	put_int(o, "best", results_best(c, n));
}

bool results_header(FILE *f, const struct results_header *h)
{
	json_object *o = json_object_new_object();
	char v[32];

	put_str(o, "schema", "dnntrace.replay");
	put_int(o, "version", DT_REPLAYED_VERSION);
	put_str(o, "trace", h->trace);
	put_str(o, "gpu", h->gpu);
	put_str(o, "recorded_gpu", h->recorded_gpu);
	json_object_object_add(o, "any_gpu",
			       json_object_new_boolean(h->any_gpu));
	json_object_object_add(o, "cold_cache",
			       json_object_new_boolean(h->cold_cache));
	put_str(o, "engines", h->all_engines ? "all" : "heuristic");
	snprintf(v, sizeof(v), "%zu", h->cudnn);
	put_str(o, "cudnn", v);
	if (h->cublaslt) {
		snprintf(v, sizeof(v), "%zu", h->cublaslt);
		put_str(o, "cublaslt", v);
	}
	return put_line(f, o);
}

/* What the budget b of a problem left out (c: its n candidates). */
static void cut_json(json_object *o, const struct budget *b,
		     const struct cand *c, size_t n)
{
	json_object *cut = json_object_new_object();
	int64_t not_timed = 0;

	for (size_t i = 0; i < n; i++)
		not_timed += budget_skipped(&c[i]);
	put_str(cut, "reason",
		b->full && !not_timed ? "256 candidates at most" : "budget");
	put_int(cut, "not_timed", not_timed);
	put_int(cut, "engines_not_listed", b->engines_left);
	put_int(cut, "heuristics_not_asked", b->modes_left);
	json_object_object_add(o, "cut_short", cut);
}

bool results_problem(FILE *f, const struct problem *p, const char *status,
		     const char *reason, const struct cand *c, size_t n,
		     const struct budget *b)
{
	/* a problem none of whose candidates ran was not measured, whatever
	 * cut its search short */
	if (!strcmp(status, "measured") && results_best(c, n) < 0) {
		status = "failed";
		reason = "no engine was timed: its share of the budget was "
			 "spent first";
	}
	json_object *o = problem_json(p, status, reason);

	if (n)
		measured_json(o, p->recorded_ns, c, n);
	if (b && budget_cut(b, c, n))
		cut_json(o, b, c, n);
	return put_line(f, o);
}

/* What the fused graph was built from, and its output against the
 * unfused chain's. */
static void fusion_built_json(json_object *o, const struct fuse_result *r)
{
	put_str(o, "head_from", r->head_from);
	put_str(o, "legacy_fused_call", r->legacy_call);
	if (r->outputs_agree < 0) {
		put_str(o, "outputs_not_compared", r->outputs_why);
		return;
	}
	json_object_object_add(o, "outputs_agree",
			       json_object_new_boolean(r->outputs_agree));
	json_object_object_add(o, "outputs_error",
			       json_object_new_double(r->outputs_error));
}

bool results_fusion(FILE *f, const struct fuse_result *r)
{
	const struct fuse_chain *c = r->c;
	json_object *o = json_object_new_object();
	bool measured = !strcmp(r->status, "measured");

	put_str(o, "fusion", c->key);
	put_str(o, "pattern", c->pattern);
	put_str(o, "head", c->steps[fuse_head_at(c)].problem);
	put_str(o, "status", r->status);
	put_str(o, "reason", r->reason);
	put_int(o, "count", (int64_t)c->count);
	put_int(o, "priced_ns", (int64_t)(c->priced_ns + 0.5));
	if (!measured)
		return put_line(f, o);
	json_object *steps = json_object_new_array();
	for (int m = 0; m < c->n_steps; m++) {
		json_object *s = json_object_new_object();
		/* a time from the trace, and the step alone as a graph (a
		 * GEMM head's too) */
		bool graph = !strcmp(r->parts[m].source, "recorded");
		put_str(s, "what", c->steps[m].what);
		if (m == fuse_head_at(c))
			json_object_object_add(s, "head",
					       json_object_new_boolean(true));
		put_str(s, "source", r->parts[m].source);
		put_int(s, "ns", (int64_t)r->parts[m].ns);
		if (graph && r->parts[m].graph_ns)
			put_int(s, "graph_ns", (int64_t)r->parts[m].graph_ns);
		else if (graph)
			put_str(s, "why", r->parts[m].why);
		json_object_array_add(steps, s);
	}
	json_object_object_add(o, "steps", steps);
	json_object_object_add(o, "fused", cand_json(&r->fused));
	put_int(o, "engines_tried", (int64_t)r->tried);
	put_int(o, "unfused_ns", (int64_t)r->unfused_ns);
	put_int(o, "fused_ns", (int64_t)r->fused.t.median_ns);
	put_int(o, "saving_ns",
		(int64_t)r->unfused_ns - (int64_t)r->fused.t.median_ns);
	fusion_built_json(o, r);
	return put_line(f, o);
}
