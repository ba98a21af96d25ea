/*
 * replay-fuse-check.c - a fusion what-if's fused output held against the
 * unfused chain's. Both run once on the same seeded inputs (tensors of
 * one uid are seeded alike, replay-data.c): the fused graph with its
 * fastest engine; then the head as replay runs it (a rebuilt graph with
 * its recorded engine, a legacy convolution with its recorded algorithm
 * on the fused graph's inputs, a GEMM as its cuDNN matmul graph), and
 * each step after it as its pointwise-only graph, reading what the step
 * before wrote, in that step's type, as the program had it in memory.
 * The last output of each is compared as candidates' outputs are, at the
 * tolerance of its type. Nothing here is timed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-fuse.h"

/* An engine with its knobs, as a candidate gives them ("TILE_SIZE=3
 * IDX_MODE=0"), made a problem to run graph with. */
struct engine_run {
	struct problem p;
	struct dt_recipe_kv kv[32];
	char names[256];
};

static void engine_run(struct engine_run *e, const struct dt_cudnn_graph *graph,
		       int64_t engine, const char *knobs)
{
	char *save = NULL;

	memset(e, 0, sizeof(*e));
	e->p = (struct problem){ .graph = graph, .engine = engine };
	snprintf(e->names, sizeof(e->names), "%s", knobs ? knobs : "");
	for (char *t = strtok_r(e->names, " ", &save); t && e->p.n_knob_kv < 32;
	     t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');
		if (!eq)
			continue;
		*eq = 0;
		e->kv[e->p.n_knob_kv++] =
			(struct dt_recipe_kv){ t, strtoll(eq + 1, NULL, 10) };
	}
	e->p.knob_kv = e->kv;
}

static int run_graph(struct gpu *g, const struct dt_cudnn_graph *graph,
		     int64_t engine, const char *knobs, struct tensor_io *io,
		     size_t n, char *why, size_t whylen)
{
	struct engine_run *e = malloc(sizeof(*e));
	int rc = -1;

	if (!e) {
		snprintf(why, whylen, "out of host memory");
		return -1;
	}
	engine_run(e, graph, engine, knobs);
	rc = graph_run(g, &e->p, io, n, why, whylen);
	free(e);
	return rc;
}

/* The head run as replay runs it, its output into *out. A legacy call
 * runs on the inputs the fused graph read (ins, its places 0 and 1). */
static bool run_head(struct gpu *g, const struct fuse_graphs *fg,
		     struct tensor_io *ins, struct tensor_io *out, char *why,
		     size_t whylen)
{
	if (!fg->head->call) {
		*out = (struct tensor_io){ .uid = fg->head_out_uid };
		return !run_graph(g, fg->head_graph, fg->head_engine,
				  fg->head_knobs, out, 1, why, whylen);
	}
	struct tensor_io io[3] = {
		{ .uid = 0, .in = true, .bytes = ins[0].bytes, .n = ins[0].n },
		{ .uid = 1, .in = true, .bytes = ins[1].bytes, .n = ins[1].n },
		{ .uid = 2 },
	};
	bool ok = !legacy_run(g, fg->head, io, 3, why, whylen);
	*out = io[2];
	return ok;
}

/* The unfused chain's last output into *last, from the head's: each step
 * reads what the one before wrote. */
static bool run_steps(struct gpu *g, const struct fuse_graphs *fg,
		      struct tensor_io *last, char *why, size_t whylen)
{
	for (int m = 1; m < fg->n_steps; m++) {
		struct tensor_io io[2] = {
			{ .uid = fg->step_x_uid,
			  .in = true,
			  .bytes = last->bytes,
			  .n = last->n },
			{ .uid = fg->step_y_uid },
		};
		char w[160];
		bool ok = fg->steps[m] &&
			  !run_graph(g, fg->steps[m], fg->step_engine[m],
				     fg->step_knobs[m], io, 2, w, sizeof(w));
		free(last->bytes);
		*last = io[1];
		if (!ok) {
			snprintf(why, whylen, "step %d alone: %s", m + 1,
				 fg->steps[m] ? w : "its graph was not built");
			return false;
		}
	}
	return true;
}

void fuse_check(struct gpu *g, const struct fuse_graphs *fg,
		const struct cand *fused, struct fuse_result *r)
{
	/* the fused output, and (a legacy head's) the inputs it read */
	struct tensor_io io[3] = { { .uid = fg->head_out_uid },
				   { .uid = 1 },
				   { .uid = 2 } };
	struct tensor_io unfused = { 0 };
	size_t n_io = fg->head->call ? 3 : 1;
	char why[160];

	r->outputs_agree = -1;
	if (run_graph(g, fg->fused, fused->engine, fused->knobs, io, n_io, why,
		      sizeof(why)))
		snprintf(r->outputs_why, sizeof(r->outputs_why),
			 "the fused graph did not run again: %s", why);
	else if (!run_head(g, fg, io + 1, &unfused, why, sizeof(why)))
		snprintf(r->outputs_why, sizeof(r->outputs_why),
			 "the head did not run again: %s", why);
	else if (!run_steps(g, fg, &unfused, r->outputs_why,
			    sizeof(r->outputs_why)))
		;
	else if (unfused.n != io[0].n || unfused.dtype != io[0].dtype)
		snprintf(r->outputs_why, sizeof(r->outputs_why),
			 "the unfused chain wrote %zu bytes, the fused graph "
			 "%zu",
			 unfused.n, io[0].n);
	else {
		r->outputs_error = data_error(io[0].dtype, unfused.bytes,
					      io[0].bytes, io[0].n);
		r->outputs_agree = data_within(io[0].dtype, r->outputs_error);
	}
	free(unfused.bytes);
	for (size_t i = 0; i < n_io; i++)
		free(io[i].bytes);
}
