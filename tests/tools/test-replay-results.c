/*
 * test-replay-results.c - the results file replay writes is the one the
 * analyzer reads back, and the one replay/REPLAY.md describes: problems
 * measured, not rebuilt and failed written with made-up candidates (no
 * GPU is needed), read with dt_replayed_read, each field as written; the
 * best candidate the fastest whose outputs agree (with the first that ran
 * when cuDNN refused the recorded engine); a recorded engine replayed
 * 30 % slower than the trace uncertain; what a problem's budget left
 * out said in cut_short; fusion what-ifs, measured and not; every key of
 * every line named in REPLAY.md; the budget shared by the items' weight,
 * with its floor.
 *
 * Usage: test-replay-results REPLAY.md
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "dt-replayed.h"
#include "replay-internal.h"
#include "test-util.h"

static struct cand cand(int64_t engine, const char *knobs, const char *source,
			uint64_t median, int agrees, double error)
{
	struct cand c = { .engine = engine,
			  .source = source,
			  .t = { median, median - 10, median + 10, 64 },
			  .workspace = 1024 * engine,
			  .error = error,
			  .agrees = agrees };

	snprintf(c.knobs, sizeof(c.knobs), "%s", knobs);
	snprintf(c.status, sizeof(c.status), "ok");
	return c;
}

/* Three fusion what-ifs: one measured whose outputs disagree, one cuDNN
 * would not build, one of a GEMM head. */
static void write_fusions(FILE *f)
{
	struct fuse_chain ch = {
		.key = "conv + bias + ReLU|",
		.pattern = "convolution forward + pointwise epilogue",
		.count = 4,
		.priced_ns = 30.4,
		.steps = { { .what = "convolution forward",
			     .problem = "GRAPH(A)" },
			   { .what = "bias add", .op = DT_KOP_ADD },
			   { .what = "ReLU", .op = DT_KOP_RELU } },
		.n_steps = 3,
	};
	struct fuse_result r = {
		.c = &ch,
		.status = "measured",
		.fused = cand(41, "TILE_SIZE=4", "heuristic_a", 60, -1, -1),
		.tried = 12,
		.parts = { { .source = "replayed", .ns = 50 },
			   { .source = "recorded", .ns = 25, .graph_ns = 20 },
			   { .source = "recorded", .ns = 15 } },
		.unfused_ns = 90,
		.head_from = "legacy call",
		.legacy_call = "cudnnConvolutionBiasActivationForward",
		.outputs_agree = 0,
		.outputs_error = 0.5,
	};

	snprintf(r.parts[2].why, sizeof(r.parts[2].why), "no engine");
	CHECK(results_fusion(f, &r));
	struct fuse_result no = { .c = &ch,
				  .status = "not_built",
				  .reason = "the fused graph: refused" };
	CHECK(results_fusion(f, &no));
	/* a GEMM's: its time in the trace, and as a cuDNN matmul graph;
	 * outputs not compared */
	struct fuse_result gemm = r;
	gemm.head_from = "GEMM";
	gemm.legacy_call = NULL;
	gemm.outputs_agree = -1;
	snprintf(gemm.outputs_why, sizeof(gemm.outputs_why), "no time left");
	gemm.parts[0] = (struct fuse_part){ .source = "recorded",
					    .ns = 70,
					    .graph_ns = 40 };
	CHECK(results_fusion(f, &gemm));
}

/* Write a header, three problems and three fusion what-ifs to path. */
static void write_file(const char *path)
{
	FILE *f = fopen(path, "w");
	/* three executions in the trace, of 95, 100 and 105 ns */
	struct problem p = { .key = "GRAPH(A)",
			     .brief = "A",
			     .api = "cudnnBackendExecute",
			     .executions = 3,
			     .engine = 7,
			     .knobs = "TILE_SIZE=2",
			     .recorded_ns = 100 };
	struct cand c[3] = {
		cand(7, "TILE_SIZE=2", "recorded", 100, -1, -1),
		cand(9, "", "heuristic_a", 80, 1, 0.001),
		/* faster, but its outputs are not the recorded engine's */
		cand(4, "TILE_SIZE=1", "fallback", 50, 0, 0.5),
	};
	struct results_header h = { .trace = "t.dnnt",
				    .gpu = "NVIDIA H200",
				    .cudnn = 91900 };

	CHECK(f != NULL);
	if (!f)
		return;
	/* its kernels, as the trace times them, 4 % slower than its
	 * events: calibration by them */
	c[0].t.kernels_ns = 104;
	CHECK(results_header(f, &h));
	CHECK(results_problem(f, &p, "measured", NULL, c, 3, NULL));
	struct problem legacy = { .key = "softmax",
				  .engine = 1,
				  .legacy = true };
	CHECK(results_problem(f, &legacy, "not_rebuilt", "not yet", NULL, 0,
			      NULL));
	/* replayed 30 % slower than the trace: uncertain */
	struct problem slow = p;
	slow.key = "GRAPH(B)";
	slow.knobs = NULL;
	c[0].t.median_ns = 130;
	c[0].t.kernels_ns = 0; /* no CUPTI: by the events */
	/* and its search cut short by the budget */
	struct budget cut = { .engines_left = 5 };
	CHECK(results_problem(f, &slow, "measured", NULL, c, 1, &cut));
	write_fusions(f);
	fclose(f);
}

static void check_read(const char *path)
{
	struct dt_replayed *r;
	char err[256];

	CHECK_EQ_U(dt_replayed_read(path, &r, err, sizeof(err)), 0);
	if (!r)
		return;
	CHECK_EQ_S(r->gpu, "NVIDIA H200");
	CHECK(!r->recorded_gpu && !r->any_gpu && !r->cold_cache);
	CHECK_EQ_S(r->engines, "heuristic");
	CHECK_EQ_U(r->n_problems, 3);
	if (r->n_problems == 3) {
		const struct dt_replayed_problem *a = &r->problems[0],
						 *b = &r->problems[1],
						 *s = &r->problems[2];
		CHECK_EQ_S(a->status, "measured");
		CHECK_EQ_U(a->recorded_ns, 100);
		CHECK_EQ_U(a->replayed_ns, 100);
		CHECK_EQ_U(a->replayed_kernels_ns, 104);
		CHECK(!a->uncertain && !a->legacy && !a->knobs_unknown);
		CHECK_EQ_U(a->n_cands, 3);
		CHECK_EQ_U(a->chosen, 0);
		CHECK_EQ_U(a->best, 1);
		if (a->n_cands == 3) {
			CHECK(!a->cands[1].knobs); /* none: left out */
			CHECK_EQ_S(a->cands[2].knobs, "TILE_SIZE=1");
			CHECK_EQ_S(a->cands[1].source, "heuristic_a");
			CHECK_EQ_U(a->cands[1].median_ns, 80);
			CHECK_EQ_U(a->cands[1].workspace, 9 * 1024);
			CHECK_EQ_U(a->cands[1].agrees, 1);
			CHECK_EQ_U(a->cands[2].agrees, 0);
			CHECK_EQ_U(a->cands[0].agrees, (uint64_t)-1);
			CHECK(a->cands[1].spread > 0.24 &&
			      a->cands[1].spread < 0.26);
		}
		CHECK_EQ_S(b->status, "not_rebuilt");
		CHECK_EQ_S(b->reason, "not yet");
		CHECK(b->legacy && !b->knobs_unknown && !b->n_cands);
		CHECK_EQ_U(b->best, (uint64_t)-1);
		CHECK(s->uncertain && s->knobs_unknown &&
		      !s->replayed_kernels_ns);
	}
	CHECK_EQ_U(r->n_fusions, 3);
	if (r->n_fusions == 3) {
		const struct dt_replayed_fusion *m = &r->fusions[0],
						*no = &r->fusions[1];
		CHECK_EQ_S(m->chain, "conv + bias + ReLU|");
		CHECK_EQ_S(m->status, "measured");
		CHECK(!m->reason);
		CHECK_EQ_U(m->count, 4);
		CHECK_EQ_U(m->priced_ns, 30);
		CHECK_EQ_U(m->unfused_ns, 90);
		CHECK_EQ_U(m->fused_ns, 60);
		CHECK_EQ_U(m->saving_ns, 30);
		CHECK_EQ_U(m->fused.engine, 41);
		CHECK_EQ_S(m->fused.knobs, "TILE_SIZE=4");
		CHECK_EQ_U(m->n_steps, 3);
		if (m->n_steps == 3) {
			CHECK_EQ_S(m->steps[0].source, "replayed");
			CHECK_EQ_U(m->steps[0].ns, 50);
			CHECK_EQ_S(m->steps[1].what, "bias add");
			CHECK_EQ_U(m->steps[1].graph_ns, 20);
			CHECK(!m->steps[1].why);
			CHECK_EQ_U(m->steps[2].graph_ns, 0);
			CHECK_EQ_S(m->steps[2].why, "no engine");
		}
		/* outputs that disagree, read as such */
		CHECK(m->outputs_agree == 0 && m->outputs_error == 0.5);
		CHECK_EQ_S(m->head_from, "legacy call");
		CHECK_EQ_S(m->legacy_call,
			   "cudnnConvolutionBiasActivationForward");
		CHECK_EQ_S(no->status, "not_built");
		CHECK_EQ_S(no->reason, "the fused graph: refused");
		CHECK(!no->n_steps && !no->fused_ns);
		CHECK(no->outputs_agree < 0);
		const struct dt_replayed_fusion *g = &r->fusions[2];
		CHECK(g->outputs_agree < 0 && g->n_steps == 3);
		if (g->n_steps == 3) {
			CHECK_EQ_S(g->steps[0].source, "recorded");
			CHECK_EQ_U(g->steps[0].graph_ns, 40);
		}
	}
	dt_replayed_free(r);
}

/* cuDNN refused the recorded engine: the first candidate that ran is
 * the reference, and the best unless one that agrees with it is
 * faster. */
static void check_refused(void)
{
	struct cand c[4] = {
		cand(7, "KERNEL_CFG=41", "recorded", 0, -1, -1),
		cand(9, "", "heuristic_a", 80, -1, -1),
		cand(4, "", "heuristic_b", 60, 1, 0.001),
		cand(5, "", "fallback", 40, 0, 0.5),
	};

	c[0].t.runs = 0;
	snprintf(c[0].status, sizeof(c[0].status),
		 "cuDNN refused the engine config");
	CHECK_EQ_U(results_best(c, 2), 1);
	CHECK_EQ_U(results_best(c, 4), 2);
	CHECK_EQ_U(results_best(c, 1), (uint64_t)-1);
}

/* The line of a problem measured with budget b (NULL: none), parsed. */
static json_object *problem_line(struct cand *c, size_t n,
				 const struct budget *b)
{
	struct problem p = { .key = "GRAPH(C)", .engine = 7 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f && results_problem(f, &p, "measured", NULL, c, n, b));
	if (f)
		fclose(f);
	json_object *o = buf ? json_tokener_parse(buf) : NULL;
	free(buf);
	return o;
}

static int64_t cut_field(json_object *o, const char *key)
{
	json_object *cut, *v;

	if (!json_object_object_get_ex(o, "cut_short", &cut) ||
	    !json_object_object_get_ex(cut, key, &v))
		return -1;
	return json_object_get_int64(v);
}

/* What a problem's budget left out is said: candidates not timed,
 * engines not listed, heuristics not asked; nothing when it left out
 * nothing. */
static void check_cut(void)
{
	struct cand c[3] = {
		cand(7, "", "recorded", 100, -1, -1),
		cand(9, "", "all", 80, 1, 0.001),
		cand(4, "", "all", 0, -1, -1),
	};
	struct budget b = { .until = 0 };
	json_object *o, *cut, *reason;

	o = problem_line(c, 3, &b);
	CHECK(o && !json_object_object_get_ex(o, "cut_short", &cut));
	json_object_put(o);

	budget_skip(&c[2]);
	c[2].t.runs = 0;
	b.engines_left = 12;
	b.modes_left = 1;
	o = problem_line(c, 3, &b);
	CHECK_EQ_U(cut_field(o, "not_timed"), 1);
	CHECK_EQ_U(cut_field(o, "engines_not_listed"), 12);
	CHECK_EQ_U(cut_field(o, "heuristics_not_asked"), 1);
	CHECK(json_object_object_get_ex(o, "cut_short", &cut) &&
	      json_object_object_get_ex(cut, "reason", &reason));
	CHECK_EQ_S(json_object_get_string(reason), "budget");
	CHECK_EQ_S(c[2].status, "budget");
	json_object_put(o);

	/* the candidates' limit alone */
	struct budget full = { .full = true, .engines_left = 3 };
	o = problem_line(c, 2, &full);
	CHECK(json_object_object_get_ex(o, "cut_short", &cut) &&
	      json_object_object_get_ex(cut, "reason", &reason));
	CHECK_EQ_S(json_object_get_string(reason), "256 candidates at most");
	json_object_put(o);
}

/* Every key of every line of path is named in the doc, as `key`. */
static void check_doc(const char *path, const char *doc_path)
{
	FILE *f = fopen(path, "r"), *d = fopen(doc_path, "r");
	char *doc = NULL, *line = NULL;
	size_t size = 0, len = 0;

	CHECK(f && d);
	if (!f || !d)
		return;
	CHECK(getdelim(&doc, &size, 0, d) > 0);
	while (getline(&line, &len, f) > 0) {
		json_object *o = json_tokener_parse(line), *cands;
		json_object_object_foreach(o, key, val)
		{
			char want[80];
			(void)val;
			snprintf(want, sizeof(want), "`%s`", key);
			if (!strstr(doc, want)) {
				fprintf(stderr, "REPLAY.md does not name %s\n",
					want);
				CHECK(!"a key undocumented");
			}
		}
		/* the keys of a candidate, a what-if's fused graph and its
		 * steps */
		json_object *inner[3] = { NULL, NULL, NULL };
		if (json_object_object_get_ex(o, "candidates", &cands) &&
		    json_object_array_length(cands))
			inner[0] = json_object_array_get_idx(cands, 0);
		json_object_object_get_ex(o, "fused", &inner[1]);
		if (json_object_object_get_ex(o, "steps", &cands) &&
		    json_object_array_length(cands) > 1)
			inner[2] = json_object_array_get_idx(cands, 1);
		for (int i = 0; i < 3; i++) {
			if (!inner[i])
				continue;
			json_object_object_foreach(inner[i], ckey, cval)
			{
				char want[80];
				(void)cval;
				snprintf(want, sizeof(want), "`%s`", ckey);
				if (!strstr(doc, want))
					fprintf(stderr,
						"REPLAY.md does not name %s\n",
						want);
				CHECK(strstr(doc, want) != NULL);
			}
		}
		json_object_put(o);
	}
	free(line);
	free(doc);
	fclose(f);
	fclose(d);
}

/* Whether the share that ends at end lasts secs (within 10 ms). */
static bool lasts(double end, double secs)
{
	double d = end - dt_replay_now_s() - secs;

	return d > -0.01 && d < 0.01;
}

/* The budget shared by weight: an item's share is its weight's part of
 * what is left, at least the floor (the lower median of what the
 * recorded engines took: the first one's, slow, is not the floor for
 * long), never more than what is left; the last item has all of it;
 * items of no weight at all, equal parts. */
static void check_shares(void)
{
	struct shares s = { 0 };
	double until = dt_replay_now_s() + 100;

	shares_add(&s, 600);
	shares_add(&s, 1);
	shares_add(&s, 1);
	shares_add(&s, 398);
	CHECK(lasts(shares_next(&s, until, 600), 60));
	shares_took(&s, 5);
	CHECK(lasts(shares_next(&s, until, 1), 5)); /* not 0.25 s */
	shares_took(&s, 1);
	CHECK(lasts(shares_next(&s, until, 1), 1));
	CHECK(lasts(shares_next(&s, until, 398), 100));
	CHECK(lasts(shares_next(&s, dt_replay_now_s() + 0.5, 1), 0.5));
	shares_free(&s);

	shares_add(&s, 0);
	shares_add(&s, 0);
	CHECK(lasts(shares_next(&s, until, 0), 50));
	shares_free(&s);
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/replay-results-XXXXXX";
	int fd = mkstemp(path);

	CHECK(argc == 2 && fd >= 0);
	if (argc != 2 || fd < 0)
		return 1;
	write_file(path);
	check_read(path);
	check_doc(path, argv[1]);
	check_refused();
	check_cut();
	check_shares();
	unlink(path);
	return dt_test_failures ? 1 : 0;
}
