/*
 * replay-run.c - one replay of a trace from start to end: its problems
 * read, the ones asked for chosen (--top, --op), the GPU checked against
 * the trace's, each problem measured within its share of the budget (by
 * its recorded GPU time: replay-budget.c's shares) and its line written
 * to the results file as soon as it is known (a replay stopped half way
 * keeps what it measured, and the next one continues from there), each
 * followed alike by the fusion what-ifs of the chains it heads
 * (replay-fuse.c), progress on stderr. The trace itself is only
 * read. The file's format is replay/REPLAY.md's; reading it back,
 * analyzer-replayed.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-replayed.h"
#include "replay-internal.h"

/* ------------------------------------------------------- which problems */

static bool wanted(const struct problems *ps, size_t i,
		   const struct dt_replay_opts *o)
{
	if (o->op)
		return ps->v[i].asked;
	return !o->top || i < o->top;
}

/* Whether an earlier replay (prev) has problem key as well as it can:
 * one it left unmeasured for want of time (failed when none of its
 * engines was timed) or cut short is measured again. */
static bool done_before(const struct dt_replayed *prev, const char *key)
{
	for (size_t i = 0; prev && i < prev->n_problems; i++) {
		const struct dt_replayed_problem *p = &prev->problems[i];
		if (!strcmp(p->problem, key))
			return !p->cut_short;
	}
	return false;
}

/* Whether an earlier replay already has the fusion what-if of chain
 * key. */
static bool fused_before(const struct dt_replayed *prev, const char *key)
{
	for (size_t i = 0; prev && i < prev->n_fusions; i++)
		if (!strcmp(prev->fusions[i].chain, key))
			return true;
	return false;
}

/* A chain is measured with its head's problem; one whose head is no
 * problem of the trace, only when every problem is. */
static bool chain_wanted(const struct problems *ps, const char *head,
			 const struct dt_replay_opts *o)
{
	for (size_t i = 0; head && i < ps->n; i++)
		if (!strcmp(ps->v[i].key, head))
			return wanted(ps, i, o);
	return !o->op && !o->top;
}

/* The fusable chains, each with whether its what-if can be built. */
static void list_chains(const struct problems *ps, const struct fuse_chains *fc,
			const struct dt_replay_opts *o)
{
	char buf[256];
	size_t k = 0;

	for (size_t i = 0; i < fc->n; i++) {
		const struct fuse_chain *c = &fc->v[i];
		const char *why = fuse_why_not(c, ps, buf, sizeof(buf));
		if (!chain_wanted(ps, c->steps[fuse_head_at(c)].problem, o))
			continue;
		if (!k++)
			printf("\nfusion what-ifs (the chains `dnntrace "
			       "fusion` calls fusable):\n");
		printf("%5zu  %llu times, %s:", k, (unsigned long long)c->count,
		       c->pattern);
		for (int m = 0; m < c->n_steps; m++)
			printf("%s%s", m ? " -> " : " ", c->steps[m].what);
		printf("\n%5s  %s\n", "", why ? why : "can be built fused");
	}
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
				 p->legacy || p->gemm ? "algo" : "eng",
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
	struct fuse_chains fc; /* the fusable chains, each measured after
				  its head's problem */
	struct dt_replayed *prev;
	struct gpu g;
	FILE *out;
	double until;         /* the end of the budget */
	struct shares shares; /* of what is left before until */
	struct stall *stall;
};

/* How long after the budget's end a call that has not returned is taken
 * to be stalled: a few seconds and a tenth of the budget (a plan that
 * compiles its kernel, started just in time, is not one). */
#define GRACE_S     5.0
#define GRACE_SHARE 0.1

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
	struct results_header h = {
		.trace = r->path,
		.gpu = r->g.name,
		.recorded_gpu = r->ps.gpu[0] ? r->ps.gpu : NULL,
		.any_gpu = r->o->any_gpu,
		.cold_cache = r->o->cold_cache,
		.all_engines = r->o->all_engines,
		.cudnn = r->g.cudnnGetVersion(),
		.cublaslt = r->g.cublaslt ? r->g.cublasLtGetVersion() : 0,
	};
	if (!results_header(r->out, &h)) {
		snprintf(err, errlen, "cannot write %s", r->results);
		return 2;
	}
	return 0;
}

/* Why a GEMM is not rebuilt where cuBLASLt does not load. */
#define NO_CUBLASLT                                                     \
	"cuBLASLt cannot be loaded (libcublasLt.so.13 on the loader's " \
	"path), through which GEMMs are built again"

/* Measure problem i before until and write its line. */
static bool replay_one(struct run *r, size_t i, size_t k, size_t n,
		       double until)
{
	const struct problem *p = &r->ps.v[i];
	struct cand c[CANDS_MAX];
	struct budget b = { .until = until };
	size_t nc = 0;
	char why[256];
	const char *status = "measured", *reason = NULL;
	double t0 = dt_replay_now_s();

	if (!r->o->quiet)
		fprintf(stderr, "replay: [%zu/%zu] %.90s (%.1f s)\n", k, n,
			p->brief ? p->brief : p->key, budget_left(until));
	stall_hold(r->stall, p, c, &nc, &b);
	if (p->why || (p->gemm && !r->g.cublaslt)) {
		status = "not_rebuilt";
		reason = p->why ? p->why : NO_CUBLASLT;
	} else if ((p->gemm    ? gemm_measure
		    : p->graph ? graph_measure
			       : legacy_measure)(&r->g, p, r->o, &b, c, &nc,
						 why, sizeof(why))) {
		status = "failed";
		reason = why;
		if (!r->o->quiet)
			fprintf(stderr, "replay:   not measured: %s\n", why);
	}
	if (b.recorded_at)
		shares_took(&r->shares, b.recorded_at - t0);
	int best = nc ? results_best(c, nc) : -1;
	const char *algo = p->legacy || p->gemm ? "algo" : "eng";
	char kernels[64] = "";
	if (best >= 0 && c[0].t.kernels_ns)
		snprintf(kernels, sizeof(kernels), " (its kernels %.1f us)",
			 (double)c[0].t.kernels_ns / 1e3);
	if (!r->o->quiet && best >= 0)
		fprintf(stderr,
			"replay:   %zu candidates; recorded %s%lld %.1f us%s "
			"against %.1f us in the trace, best %s%lld %.1f us\n",
			nc, algo, (long long)c[0].engine,
			(double)c[0].t.median_ns / 1e3, kernels,
			(double)p->recorded_ns / 1e3, algo,
			(long long)c[best].engine,
			(double)c[best].t.median_ns / 1e3);
	if (!r->o->quiet && budget_cut(&b, c, nc))
		fprintf(stderr,
			"replay:   its budget was spent before every engine "
			"was timed (cut_short in the results)\n");
	stall_lock(r->stall);
	bool ok = results_problem(r->out, p, status, reason, c, nc, &b);
	stall_unlock(r->stall);
	return ok;
}

/* Measure chain i's fusion what-if before until and write its line. */
static bool fuse_one(struct run *r, size_t i, size_t k, size_t n, double until)
{
	const struct fuse_chain *c = &r->fc.v[i];
	struct fuse_result res = { 0 };

	if (!r->o->quiet)
		fprintf(stderr, "replay: [%zu/%zu] fusion what-if: %s\n", k, n,
			c->pattern);
	fuse_measure(&r->g, c, &r->ps, r->o, until, &res);
	if (!r->o->quiet && res.reason)
		fprintf(stderr, "replay:   not measured: %s\n", res.reason);
	else if (!r->o->quiet)
		fprintf(stderr,
			"replay:   unfused %.1f us, fused %.1f us (eng%lld), "
			"outputs %s\n",
			(double)res.unfused_ns / 1e3,
			(double)res.fused.t.median_ns / 1e3,
			(long long)res.fused.engine,
			res.outputs_agree > 0 ? "agree"
			: !res.outputs_agree  ? "disagree"
					      : "not compared");
	stall_lock(r->stall);
	bool ok = results_fusion(r->out, &res);
	stall_unlock(r->stall);
	return ok;
}

/* Whether item i is to be measured: items are the problems, then the
 * chains. */
static bool todo_item(const struct run *r, size_t i)
{
	if (i < r->ps.n)
		return wanted(&r->ps, i, r->o) &&
		       !done_before(r->prev, r->ps.v[i].key);
	const struct fuse_chain *c = &r->fc.v[i - r->ps.n];
	return chain_wanted(&r->ps, c->steps[fuse_head_at(c)].problem, r->o) &&
	       !fused_before(r->prev, c->key);
}

/* What item i weighs in the budget's shares: a problem, its recorded GPU
 * time (the median of its recorded engine's executions times their
 * count, or all of its executions' time where none was timed); a fusion
 * what-if, its chain's (each step's time per occurrence times the
 * occurrences). One that is not measured, none: it takes no time. */
static double item_weight(const struct run *r, size_t i)
{
	char buf[256];

	if (i < r->ps.n) {
		const struct problem *p = &r->ps.v[i];
		if (p->why)
			return 0;
		return p->recorded_ns
			       ? (double)p->recorded_ns * (double)p->executions
			       : (double)p->gpu_ns;
	}
	const struct fuse_chain *c = &r->fc.v[i - r->ps.n];
	double ns = 0;
	if (fuse_why_not(c, &r->ps, buf, sizeof(buf)))
		return 0;
	for (int m = 0; m < c->n_steps; m++)
		ns += (double)c->steps[m].ns;
	return ns * (double)c->count;
}

/* The order items are measured in: each problem, then the chains it is
 * the head of (the largest problems' what-ifs are not left to the end of
 * the budget), then the chains whose head is no problem. NULL when out
 * of memory. */
static size_t *item_order(const struct run *r)
{
	size_t n = 0, *order = malloc((r->ps.n + r->fc.n + 1) * sizeof(*order));
	bool *taken = calloc(r->fc.n + 1, sizeof(*taken));

	if (!order || !taken) {
		free(order);
		free(taken);
		return NULL;
	}
	for (size_t i = 0; i < r->ps.n; i++) {
		order[n++] = i;
		for (size_t j = 0; j < r->fc.n; j++) {
			const struct fuse_chain *c = &r->fc.v[j];
			const char *head = c->steps[fuse_head_at(c)].problem;
			if (!taken[j] && head &&
			    !strcmp(head, r->ps.v[i].key)) {
				taken[j] = true;
				order[n++] = r->ps.n + j;
			}
		}
	}
	for (size_t j = 0; j < r->fc.n; j++)
		if (!taken[j])
			order[n++] = r->ps.n + j;
	free(taken);
	return order;
}

/* Each item measured in its share of what is left before r->until. */
static int run_all(struct run *r, char *err, size_t errlen)
{
	size_t todo = 0, k = 0, items = r->ps.n + r->fc.n;
	size_t *order = item_order(r);

	if (!order) {
		snprintf(err, errlen, "out of memory");
		return 2;
	}
	for (size_t i = 0; i < items; i++)
		if (todo_item(r, i)) {
			todo++;
			shares_add(&r->shares, item_weight(r, i));
		}
	r->stall = stall_start(
		r->out, r->until + GRACE_S + GRACE_SHARE * r->o->budget_s,
		r->o->quiet);
	if (!r->o->quiet && r->prev)
		fprintf(stderr,
			"replay: continuing %s: %zu problems measured before\n",
			r->results, r->prev->n_problems);
	for (size_t at = 0; at < items; at++) {
		size_t i = order[at];
		if (!todo_item(r, i))
			continue;
		if (!budget_left(r->until)) {
			if (!r->o->quiet)
				fprintf(stderr,
					"replay: the budget is spent: %zu "
					"problems left for the next run\n",
					todo - k);
			break;
		}
		k++;
		double until =
			shares_next(&r->shares, r->until, item_weight(r, i));
		if (!(i < r->ps.n ? replay_one(r, i, k, todo, until)
				  : fuse_one(r, i - r->ps.n, k, todo, until))) {
			snprintf(err, errlen, "cannot write %s", r->results);
			stall_stop(r->stall);
			shares_free(&r->shares);
			free(order);
			return 2;
		}
	}
	stall_stop(r->stall);
	shares_free(&r->shares);
	free(order);
	if (!r->o->quiet)
		fprintf(stderr, "replay: results in %s\n", r->results);
	return 0;
}

/* Whether a problem of ps that o asks for is a GEMM replay can build. */
static bool has_gemms(const struct problems *ps, const struct dt_replay_opts *o)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].gemm && !ps->v[i].why && wanted(ps, i, o))
			return true;
	return false;
}

int dt_replay(const char *path, const struct dt_replay_opts *o, char *err,
	      size_t errlen)
{
	/* reading the trace and opening the GPU count too */
	struct run r = { .path = path,
			 .o = o,
			 .until = dt_replay_now_s() + o->budget_s };
	char buf[4096], why[256];
	int rc;

	r.results = o->results ? o->results
			       : dt_replayed_path(path, buf, sizeof(buf));
	if (problems_read(path, o->op, &r.ps, err, errlen))
		return 2;
	if (fuse_read(path, &r.fc, err, errlen)) {
		problems_free(&r.ps);
		return 2;
	}
	if (o->list) {
		list(&r.ps, o);
		list_chains(&r.ps, &r.fc, o);
		fuse_free(&r.fc);
		problems_free(&r.ps);
		return 0;
	}
	if (gpu_open(&r.g, why, sizeof(why))) {
		snprintf(err, errlen, "cannot replay here: %s", why);
		fuse_free(&r.fc);
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
		if (!r.g.cupti && !o->quiet)
			fprintf(stderr,
				"replay: CUPTI cannot be loaded "
				"(libcupti.so.13 on the loader's path): "
				"calibration compares the events' times, not "
				"the kernels' as the trace timed them "
				"(calibration_by)\n");
		if (has_gemms(&r.ps, o) && !gpu_load_cublaslt(&r.g) &&
		    !o->quiet)
			fprintf(stderr,
				"replay: %s: GEMMs are listed not rebuilt\n",
				NO_CUBLASLT);
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
	fuse_free(&r.fc);
	problems_free(&r.ps);
	return rc;
}
