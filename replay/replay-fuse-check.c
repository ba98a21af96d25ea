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
 * runs on the inputs the fused graph read (ins, its places 0 and 1); a
 * prologue's head on what its last step wrote (*in), in its input's
 * place. */
static bool run_head(struct gpu *g, const struct fuse_graphs *fg,
		     struct tensor_io *ins, const struct tensor_io *in,
		     struct tensor_io *out, char *why, size_t whylen)
{
	if (!fg->head->call) {
		struct tensor_io io[2] = {
			{ .uid = fg->head_out_uid },
			{ .uid = fg->in_uid,
			  .in = true,
			  .bytes = in ? in->bytes : NULL,
			  .n = in ? in->n : 0 },
		};
		bool ok =
			!run_graph(g, fg->head_graph, fg->head_engine,
				   fg->head_knobs, io, in ? 2 : 1, why, whylen);
		*out = io[0];
		return ok;
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

/* Steps from to end (not the head) run on *last, each on what the one
 * before wrote; the last one's output into *last. */
static bool run_steps(struct gpu *g, const struct fuse_graphs *fg, int from,
		      int end, struct tensor_io *last, char *why, size_t whylen)
{
	for (int m = from; m < end; m++) {
		struct tensor_io io[2] = {
			{ .uid = fg->step_x_uid,
			  .in = true,
			  .bytes = last->bytes,
			  .n = last->n },
			{ .uid = fg->step_y_uid },
		};
		char w[160];
		bool ok = fg->steps[m] && !run_graph(g, fg->steps[m], -1, NULL,
						     io, 2, w, sizeof(w));
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

/* The unfused chain run on the fused graph's inputs (io: its output,
 * then the inputs it read), its last output into *last. */
static bool run_unfused(struct gpu *g, const struct fuse_graphs *fg,
			struct tensor_io *io, struct tensor_io *last, char *why,
			size_t whylen)
{
	char w[160];

	if (fg->head_at) { /* a prologue: from the input it writes */
		struct tensor_io in = { .bytes = malloc(io[1].n),
					.n = io[1].n };
		if (!in.bytes) {
			snprintf(why, whylen, "out of host memory");
			return false;
		}
		memcpy(in.bytes, io[1].bytes, in.n);
		bool ok = run_steps(g, fg, 0, fg->head_at, &in, why, whylen);
		if (ok && !run_head(g, fg, NULL, &in, last, w, sizeof(w))) {
			snprintf(why, whylen, "the head did not run again: %s",
				 w);
			ok = false;
		}
		free(in.bytes);
		return ok;
	}
	if (!run_head(g, fg, io + 1, NULL, last, w, sizeof(w))) {
		snprintf(why, whylen, "the head did not run again: %s", w);
		return false;
	}
	return run_steps(g, fg, 1, fg->n_steps, last, why, whylen);
}

void fuse_check(struct gpu *g, const struct fuse_graphs *fg,
		const struct cand *fused, struct fuse_result *r)
{
	/* the fused output, and the inputs it read that the unfused chain
	 * is given: a legacy head's two, the input a prologue writes */
	struct tensor_io io[3] = { { .uid = fg->head_out_uid },
				   { .uid = fg->head_at ? fg->in_uid : 1 },
				   { .uid = 2 } };
	struct tensor_io unfused = { 0 };
	size_t n_io = fg->head->call ? 3 : fg->head_at ? 2 : 1;
	char why[160];

	r->outputs_agree = -1;
	if (run_graph(g, fg->fused, fused->engine, fused->knobs, io, n_io, why,
		      sizeof(why)))
		snprintf(r->outputs_why, sizeof(r->outputs_why),
			 "the fused graph did not run again: %s", why);
	else if (!run_unfused(g, fg, io, &unfused, r->outputs_why,
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
