/*
 * analyzer-replayed.c - a replay's results file read back (JSON lines:
 * a header line, then a line per problem or fusion what-if;
 * replay/REPLAY.md), and the engine-choice findings made of it: a
 * problem another engine ran faster beyond noise, with outputs that
 * agree. A replay continuing an earlier
 * one reads the file too; writing it is replay/'s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/types.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "analyzer-findings.h"
#include "analyzer-util.h"
#include "dt-replayed.h"
#include "dt-steps.h"
#include "dt-summary.h"

const char *dt_replayed_path(const char *trace, char *buf, size_t size)
{
	size_t n = strlen(trace);

	if (n > 5 && !strcmp(trace + n - 5, ".dnnt"))
		n -= 5;
	snprintf(buf, size, "%.*s.replay.jsonl", (int)n, trace);
	return buf;
}

static char *str_of(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return strdup(json_object_get_string(v));
}

/* The number at key, or NULL. */
static json_object *number_of(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    (!json_object_is_type(v, json_type_int) &&
	     !json_object_is_type(v, json_type_double)))
		return NULL;
	return v;
}

static int64_t int_of(json_object *o, const char *key, int64_t def)
{
	json_object *v = number_of(o, key);

	return v ? json_object_get_int64(v) : def;
}

static double double_of(json_object *o, const char *key, double def)
{
	json_object *v = number_of(o, key);

	return v ? json_object_get_double(v) : def;
}

static bool bool_of(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) &&
	       json_object_get_boolean(v);
}

static void read_cand(json_object *o, struct dt_replayed_cand *c)
{
	json_object *v;

	c->engine = int_of(o, "engine", -1);
	c->knobs = str_of(o, "knobs");
	c->source = str_of(o, "source");
	c->status = str_of(o, "status");
	c->median_ns = (uint64_t)int_of(o, "median_ns", 0);
	c->spread = double_of(o, "spread", 0);
	c->runs = (uint32_t)int_of(o, "runs", 0);
	c->workspace = int_of(o, "workspace", -1);
	c->error = double_of(o, "error", -1);
	c->agrees = json_object_object_get_ex(o, "agrees", &v) &&
				    json_object_is_type(v, json_type_boolean)
			    ? json_object_get_boolean(v)
			    : -1;
}

static void problem_free(struct dt_replayed_problem *p);

/* Problem p, read after the others: a problem measured again by a later
 * run (one an earlier run left unmeasured or cut short) takes the place
 * of what was read of it before. */
static void keep_last(struct dt_replayed *r, struct dt_replayed_problem *p)
{
	for (size_t i = 0; i < r->n_problems; i++)
		if (!strcmp(r->problems[i].problem, p->problem)) {
			problem_free(&r->problems[i]);
			r->problems[i] = *p;
			return;
		}
	r->n_problems++;
}

/* A problem line into p; false when it is none. */
static bool read_problem(json_object *o, struct dt_replayed_problem *p)
{
	json_object *cands;

	p->problem = str_of(o, "problem");
	if (!p->problem)
		return false;
	p->brief = str_of(o, "brief");
	p->status = str_of(o, "status");
	p->reason = str_of(o, "reason");
	p->executions = (uint64_t)int_of(o, "executions", 0);
	p->recorded_ns = (uint64_t)int_of(o, "recorded_ns", 0);
	p->replayed_ns = (uint64_t)int_of(o, "replayed_ns", 0);
	p->replayed_kernels_ns = (uint64_t)int_of(o, "replayed_kernels_ns", 0);
	p->uncertain = bool_of(o, "uncertain");
	p->legacy = bool_of(o, "legacy");
	json_object *v;
	/* a legacy call has no knobs to miss */
	p->knobs_unknown = !p->legacy &&
			   json_object_object_get_ex(o, "knobs_recorded", &v) &&
			   !json_object_get_boolean(v);
	p->gemm = str_of(o, "gemm");
	p->scalars_unknown =
		p->gemm &&
		json_object_object_get_ex(o, "scalars_recorded", &v) &&
		!json_object_get_boolean(v);
	p->chosen = (int)int_of(o, "chosen", -1);
	p->best = (int)int_of(o, "best", -1);
	/* cut short by the budget (not by the most candidates kept) */
	json_object *cut;
	p->cut_short = json_object_object_get_ex(o, "cut_short", &cut) &&
		       json_object_object_get_ex(cut, "reason", &v) &&
		       !strcmp(json_object_get_string(v), "budget");
	if (json_object_object_get_ex(o, "candidates", &cands) &&
	    json_object_is_type(cands, json_type_array)) {
		size_t n = json_object_array_length(cands);
		p->cands = n ? calloc(n, sizeof(*p->cands)) : NULL;
		for (size_t i = 0; p->cands && i < n; i++)
			read_cand(json_object_array_get_idx(cands, i),
				  &p->cands[p->n_cands++]);
	}
	if (p->chosen >= (int)p->n_cands)
		p->chosen = -1;
	if (p->best >= (int)p->n_cands)
		p->best = -1;
	return true;
}

/* A fusion what-if's line into f; false when it is none. */
static bool read_fusion(json_object *o, struct dt_replayed_fusion *f)
{
	json_object *v, *steps;

	f->chain = str_of(o, "fusion");
	if (!f->chain)
		return false;
	f->pattern = str_of(o, "pattern");
	f->status = str_of(o, "status");
	f->reason = str_of(o, "reason");
	f->count = (uint64_t)int_of(o, "count", 0);
	f->priced_ns = int_of(o, "priced_ns", 0);
	f->unfused_ns = (uint64_t)int_of(o, "unfused_ns", 0);
	f->fused_ns = (uint64_t)int_of(o, "fused_ns", 0);
	f->saving_ns = int_of(o, "saving_ns", 0);
	f->outputs_agree = number_of(o, "outputs_error")
				   ? bool_of(o, "outputs_agree")
				   : -1;
	f->outputs_error = double_of(o, "outputs_error", -1);
	f->head_from = str_of(o, "head_from");
	f->legacy_call = str_of(o, "legacy_fused_call");
	f->fused.engine = -1;
	f->fused.error = -1;
	f->fused.agrees = -1;
	if (json_object_object_get_ex(o, "fused", &v) &&
	    json_object_is_type(v, json_type_object))
		read_cand(v, &f->fused);
	if (json_object_object_get_ex(o, "steps", &steps) &&
	    json_object_is_type(steps, json_type_array)) {
		size_t n = json_object_array_length(steps);
		f->steps = n ? calloc(n, sizeof(*f->steps)) : NULL;
		for (size_t i = 0; f->steps && i < n; i++) {
			json_object *s = json_object_array_get_idx(steps, i);
			struct dt_replayed_fstep *st = &f->steps[f->n_steps++];
			st->what = str_of(s, "what");
			st->source = str_of(s, "source");
			st->why = str_of(s, "why");
			st->ns = (uint64_t)int_of(s, "ns", 0);
			st->graph_ns = (uint64_t)int_of(s, "graph_ns", 0);
			st->head = bool_of(s, "head");
		}
	}
	return true;
}

/* Room for one more element of *v (n of them, *cap allocated). */
static bool room(void **v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(*v, c * size);
	if (!p)
		return false;
	*v = p;
	*cap = c;
	return true;
}

/* The header line into r; a sentence in err when it is none. */
static bool read_header(json_object *o, struct dt_replayed *r, char *err,
			size_t errlen)
{
	char *schema = str_of(o, "schema");
	int64_t version = int_of(o, "version", -1);
	bool ok = schema && !strcmp(schema, "dnntrace.replay");

	free(schema);
	if (!ok) {
		snprintf(err, errlen, "it is no dnntrace replay results file");
		return false;
	}
	if (version != DT_REPLAYED_VERSION) {
		snprintf(err, errlen,
			 "its version %lld is not %d, the one this dnntrace "
			 "reads",
			 (long long)version, DT_REPLAYED_VERSION);
		return false;
	}
	r->trace = str_of(o, "trace");
	r->gpu = str_of(o, "gpu");
	r->recorded_gpu = str_of(o, "recorded_gpu");
	r->any_gpu = bool_of(o, "any_gpu");
	r->cold_cache = bool_of(o, "cold_cache");
	r->engines = str_of(o, "engines");
	return true;
}

/* One line of the file: the header (line 1), a problem or a fusion
 * what-if; cap[0] problems and cap[1] what-ifs allocated. */
static bool read_line(struct dt_replayed *r, const char *line, size_t lineno,
		      size_t *cap, char *err, size_t errlen)
{
	json_object *o = json_tokener_parse(line);
	json_object *v;
	bool ok = o && json_object_is_type(o, json_type_object);

	if (!ok) {
		snprintf(err, errlen, "line %zu is not a JSON object", lineno);
	} else if (lineno == 1) {
		ok = read_header(o, r, err, errlen);
	} else if (json_object_object_get_ex(o, "fusion", &v)) {
		ok = room((void **)&r->fusions, r->n_fusions, &cap[1],
			  sizeof(*r->fusions));
		if (ok) {
			struct dt_replayed_fusion *f =
				&r->fusions[r->n_fusions];
			memset(f, 0, sizeof(*f));
			if (read_fusion(o, f))
				r->n_fusions++;
		}
	} else {
		ok = room((void **)&r->problems, r->n_problems, &cap[0],
			  sizeof(*r->problems));
		if (ok) {
			struct dt_replayed_problem *p =
				&r->problems[r->n_problems];
			memset(p, 0, sizeof(*p));
			if (read_problem(o, p))
				keep_last(r, p);
		}
	}
	json_object_put(o);
	return ok;
}

int dt_replayed_read(const char *path, struct dt_replayed **out, char *err,
		     size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, why[256] = "";
	size_t len = 0, lineno = 0, cap[2] = { 0, 0 };
	bool ok = true;

	*out = NULL;
	if (!f && errno == ENOENT)
		return 1;
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path,
			 strerror(errno));
		return -1;
	}
	struct dt_replayed *r = calloc(1, sizeof(*r));
	ssize_t n;
	ok = r != NULL;
	while (ok && (n = getline(&line, &len, f)) > 0) {
		/* a line without its newline is one a replay was stopped
		 * writing: what it measured ends before it */
		if (line[n - 1] != '\n' && lineno)
			break;
		lineno++;
		if (line[strspn(line, " \t\r\n")])
			ok = read_line(r, line, lineno, cap, why, sizeof(why));
		r->complete_bytes += (uint64_t)n;
	}
	free(line);
	fclose(f);
	if (ok && !lineno)
		snprintf(why, sizeof(why), "it is empty");
	if (!ok || !lineno) {
		snprintf(err, errlen, "cannot read the replay results %s: %s",
			 path, r ? why : "out of memory");
		dt_replayed_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

static void cand_free(struct dt_replayed_cand *c)
{
	free(c->knobs);
	free(c->source);
	free(c->status);
}

static void problem_free(struct dt_replayed_problem *p)
{
	for (size_t k = 0; k < p->n_cands; k++)
		cand_free(&p->cands[k]);
	free(p->cands);
	free(p->problem);
	free(p->brief);
	free(p->status);
	free(p->reason);
	free(p->gemm);
}

void dt_replayed_free(struct dt_replayed *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_problems; i++)
		problem_free(&r->problems[i]);
	free(r->problems);
	for (size_t i = 0; i < r->n_fusions; i++) {
		struct dt_replayed_fusion *f = &r->fusions[i];
		for (size_t k = 0; k < f->n_steps; k++) {
			free(f->steps[k].what);
			free(f->steps[k].source);
			free(f->steps[k].why);
		}
		free(f->steps);
		free(f->chain);
		free(f->pattern);
		free(f->status);
		free(f->reason);
		free(f->head_from);
		free(f->legacy_call);
		cand_free(&f->fused);
	}
	free(r->fusions);
	free(r->trace);
	free(r->gpu);
	free(r->recorded_gpu);
	free(r->engines);
	free(r);
}

void dt_summary_add_replayed(struct dt_summary *s, struct dt_replayed *r)
{
	struct dt_replayed **v =
		r ? realloc(s->replayed, (s->n_replayed + 1) * sizeof(*v))
		  : NULL;

	if (!v) {
		dt_replayed_free(r);
		return;
	}
	s->replayed = v;
	s->replayed[s->n_replayed++] = r;
}

const struct dt_replayed_fusion *
dt_replayed_fusion_find(const struct dt_summary *s, const char *key,
			const struct dt_replayed **from)
{
	for (size_t i = 0; i < s->n_replayed; i++)
		for (size_t k = 0; k < s->replayed[i]->n_fusions; k++)
			if (!strcmp(s->replayed[i]->fusions[k].chain, key)) {
				if (from)
					*from = s->replayed[i];
				return &s->replayed[i]->fusions[k];
			}
	return NULL;
}

/* ------------------------------------------------ engine-choice findings */

/* Below this, a faster engine is within noise: the saving must be more
 * than this share of the recorded engine's time and more than the spread
 * of both candidates' samples. */
#define CHOICE_MIN 0.05

/* The candidate's engine and knobs in words: "eng70 (TILE_SIZE=12)",
 * a legacy call's "algo1 (TENSOR_OP_MATH)". */
static const char *engine_words(const struct dt_replayed_problem *rp,
				const struct dt_replayed_cand *c, char *buf,
				size_t size)
{
	const char *what = rp->legacy || rp->gemm ? "algo" : "eng";

	if (c->knobs && c->knobs[0])
		snprintf(buf, size, "%s%lld (%s)", what, (long long)c->engine,
			 c->knobs);
	else
		snprintf(buf, size, "%s%lld", what, (long long)c->engine);
	return buf;
}

/* The problem of the summary replay problem rp is of: its executions,
 * not an algorithm search of the same problem (a row of its own); NULL
 * none. */
static const struct dt_sum_problem *
sum_problem(const struct dt_summary *s, const struct dt_replayed_problem *rp)
{
	const struct dt_sum_problem *found = NULL;

	for (size_t i = 0; i < s->n_problems; i++)
		if (s->problems[i].kind != DT_KIND_SEARCH &&
		    !strcmp(s->problems[i].key, rp->problem) &&
		    (!found || s->problems[i].count > found->count))
			found = &s->problems[i];
	return found;
}

/* Whether best beats chosen beyond noise; the saving per execution. */
static uint64_t beyond_noise(const struct dt_replayed_cand *chosen,
			     const struct dt_replayed_cand *best)
{
	if (!chosen->median_ns || !best->median_ns ||
	    best->median_ns >= chosen->median_ns || best->agrees != 1)
		return 0;
	double saving = (double)(chosen->median_ns - best->median_ns);
	double noise = (chosen->spread > best->spread ? chosen->spread
						      : best->spread) *
		       (double)chosen->median_ns;
	if (saving < CHOICE_MIN * (double)chosen->median_ns || saving <= noise)
		return 0;
	return chosen->median_ns - best->median_ns;
}

/* How to have a GEMM's faster algorithm: a cuBLASLt caller passes it to
 * cublasLtMatmul; cuBLAS takes none (its algo argument has chosen
 * nothing since CUDA 11), so a cuBLAS call has it through cuBLASLt. In
 * PyTorch, TunableOp times the algorithms of each GEMM and keeps the
 * fastest. */
static void gemm_knob(struct dt_sbuf *ev, const struct dt_replayed_problem *rp,
		      const struct dt_replayed_cand *b)
{
	bool knobs = b->knobs && b->knobs[0];
	bool cublas = !strcmp(rp->gemm, "cublas");

	dt_sb_item(ev, "\n",
		   "to choose it: %s cublasLtMatmul algorithm ID %lld with %s "
		   "(%scublasLtMatmulAlgoInit%s); PyTorch: TunableOp "
		   "(PYTORCH_TUNABLEOP_ENABLED=1) times each GEMM's "
		   "algorithms and keeps the fastest",
		   cublas ? "call" : "pass", (long long)b->engine,
		   knobs ? b->knobs : "its default config",
		   cublas ? "cuBLAS takes none since CUDA 11; " : "",
		   knobs ? ", then cublasLtMatmulAlgoConfigSetAttribute" : "");
}

/* The evidence of one finding: executions times saving, per step when
 * the program's steps are known, numerics, workspace, calibration and
 * what to change. */
static char *choice_evidence(const struct dt_summary *s,
			     const struct dt_replayed_problem *rp,
			     uint64_t executions, uint64_t saving)
{
	const struct dt_replayed_cand *c = &rp->cands[rp->chosen],
				      *b = &rp->cands[rp->best];
	struct dt_sbuf ev = { 0 };
	char t1[32], t2[32], t3[32], w1[32], w2[32], eng[300];

	dt_sb_item(&ev, "\n", "%" PRIu64 " executions x %s saved = %s",
		   executions, dt_fmt_ns(saving, t1, sizeof(t1)),
		   dt_fmt_ns(saving * executions, t2, sizeof(t2)));
	const struct dt_step_stats *st = s->steps;
	uint64_t steps = st ? st->steps + st->startup_steps : 0;
	/* per step where it runs at least once a step: steps found in a
	 * program's layers would spread it thinner than it runs */
	if (st && st->found && steps && executions >= steps)
		dt_sb_printf(
			&ev, " (%s per step over %" PRIu64 " steps)",
			dt_fmt_ns(saving * executions / steps, t3, sizeof(t3)),
			steps);
	dt_sb_item(&ev, "\n",
		   "numerics: its outputs agree with the recorded engine's "
		   "(largest difference %.2g of the largest value)",
		   b->error > 0 ? b->error : 0);
	dt_sb_item(&ev, "\n", "workspace: %s (the recorded engine: %s)",
		   b->workspace >= 0 ? dt_fmt_bytes((uint64_t)b->workspace, w1,
						    sizeof(w1))
				     : "?",
		   c->workspace >= 0 ? dt_fmt_bytes((uint64_t)c->workspace, w2,
						    sizeof(w2))
				     : "?");
	/* calibration holds like against like: the kernels' time where the
	 * replay had it, as the trace's is */
	uint64_t cal = rp->replayed_kernels_ns ? rp->replayed_kernels_ns
					       : rp->replayed_ns;
	if (rp->recorded_ns && cal)
		dt_sb_item(&ev, "\n",
			   "calibration: the recorded engine replayed in %s%s, "
			   "%s in the trace (%.2fx)%s",
			   dt_fmt_ns(cal, t1, sizeof(t1)),
			   rp->replayed_kernels_ns ? " of kernels" : "",
			   dt_fmt_ns(rp->recorded_ns, t2, sizeof(t2)),
			   (double)cal / (double)rp->recorded_ns,
			   rp->uncertain ? ": more than 15% off, the verdict "
					   "is uncertain"
					 : "");
	if (rp->knobs_unknown)
		dt_sb_item(&ev, "\n",
			   rp->gemm
				   ? "the trace does not hold every "
				     "attribute of the algorithm the program "
				     "ran: those missing were left at "
				     "cuBLASLt's defaults"
				   : "the trace does not hold the knob choices "
				     "the program ran: its engine was "
				     "replayed with cuDNN's defaults");
	if (rp->scalars_unknown)
		dt_sb_item(&ev, "\n",
			   "its alpha and beta were in device memory, not in "
			   "the trace: replayed as 1");
	if (rp->gemm)
		gemm_knob(&ev, rp, b);
	else if (rp->legacy)
		dt_sb_item(&ev, "\n",
			   "to choose it: the call's algo argument and "
			   "cudnnSetConvolutionMathType: %s; or "
			   "cudnnFind*Algorithm's fastest",
			   engine_words(rp, b, eng, sizeof(eng)));
	else
		dt_sb_item(&ev, "\n",
			   "to choose it: cudnn-frontend: engine %s; PyTorch: "
			   "torch.backends.cudnn.benchmark = True (not with "
			   "deterministic = True); XLA: "
			   "--xla_gpu_autotune_level=4",
			   engine_words(rp, b, eng, sizeof(eng)));
	return ev.p;
}

static void choice(struct dt_summary *s, const struct dt_replayed *r,
		   const struct dt_replayed_problem *rp)
{
	if (rp->chosen < 0 || rp->best < 0 || rp->best == rp->chosen)
		return;
	const struct dt_replayed_cand *c = &rp->cands[rp->chosen],
				      *b = &rp->cands[rp->best];
	uint64_t saving = beyond_noise(c, b);
	if (!saving)
		return;
	const struct dt_sum_problem *p = sum_problem(s, rp);
	uint64_t executions = p ? p->count : rp->executions;
	char t1[32], t2[32], e1[300], e2[300];
	char *title = dt_xasprintf(
		"engine choice%s: %s %s ran %s in %s; %s took %s (%.2fx), "
		"measured by replay on an %s",
		rp->uncertain ? " (uncertain)" : "",
		p ? dt_op_kind_key(p->kind) : "problem",
		rp->brief ? rp->brief : rp->problem,
		engine_words(rp, c, e1, sizeof(e1)),
		dt_fmt_ns(c->median_ns, t1, sizeof(t1)),
		engine_words(rp, b, e2, sizeof(e2)),
		dt_fmt_ns(b->median_ns, t2, sizeof(t2)),
		(double)b->median_ns / (double)c->median_ns,
		r->gpu ? r->gpu : "unnamed GPU");
	dt_finding_add(s, DT_FIND_ENGINE_CHOICE, saving * executions, false,
		       title, choice_evidence(s, rp, executions, saving));
}

/* Whether an earlier results file than the i-th has problem key: ranks
 * of one job run the same problems, and a finding counts them all. */
static bool replayed_before(const struct dt_summary *s, size_t i,
			    const char *key)
{
	for (size_t j = 0; j < i; j++)
		for (size_t k = 0; k < s->replayed[j]->n_problems; k++)
			if (!strcmp(s->replayed[j]->problems[k].problem, key))
				return true;
	return false;
}

void dt_find_engine_choice(struct dt_summary *s)
{
	for (size_t i = 0; i < s->n_replayed; i++)
		for (size_t k = 0; k < s->replayed[i]->n_problems; k++) {
			const struct dt_replayed_problem *rp =
				&s->replayed[i]->problems[k];
			if (!replayed_before(s, i, rp->problem))
				choice(s, s->replayed[i], rp);
		}
}
