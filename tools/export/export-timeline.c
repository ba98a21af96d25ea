/*
 * export-timeline.c - the timeline's layout (analyzer/EXPORT.md): what of
 * a trace's session goes on the timeline, on which track, in what order,
 * handed to an encoder (export-events.c: Chrome JSON; export-perfetto.c:
 * Perfetto's protobuf). It is the session's one consumer for a timeline
 * export; it writes nothing itself and spells no format.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "export-timeline.h"
#include "tools.h"

struct layout {
	const struct dt_tl_encoder *e;
	void *enc;
	const struct dt_export_trace *t;
	uint64_t gpu_off_since; /* host time GPU recording stopped, or 0 */
	char *gpu_off_why;
};

static void on_call(void *arg, const struct dt_call *c)
{
	struct layout *l = arg;

	l->e->call(l->enc, c, dt_export_in(l->t, c->t_begin, c->t_end));
}

static void on_graph_launch(void *arg, const struct dt_graph_launch *g)
{
	struct layout *l = arg;

	l->e->launch(l->enc, g, dt_export_in(l->t, g->start, g->end));
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct layout *l = arg;

	if (a->timed && dt_export_in(l->t, a->start, a->end))
		l->e->gpu(l->enc, a, dt_tl_stream(a->device, a->stream));
}

/* Ops that ran on the GPU, on a track beside their first kernel's
 * stream. */
static void on_op(void *arg, const struct dt_op *op)
{
	struct layout *l = arg;

	if (!op->kernels || op->device < 0 || op->gpu_end <= op->gpu_start ||
	    !dt_export_in(l->t, op->gpu_start, op->gpu_end))
		return;
	l->e->op(l->enc, op,
		 dt_tl_stream((uint32_t)op->device, op->gpu_stream) |
			 DT_TL_OPS);
}

/* A sample of the GPU's DRAM counters (record --gpu-metrics): GB/s read
 * and written, per GPU. */
static void on_gpu_sample(void *arg, const struct dt_gpu_sample *gs)
{
	struct layout *l = arg;
	int m[2] = { dt_gpu_sample_metric(gs, "dram__bytes_read.sum"),
		     dt_gpu_sample_metric(gs, "dram__bytes_write.sum") };
	double ns = (double)(gs->end - gs->start);

	if (ns <= 0 || (m[0] < 0 && m[1] < 0) ||
	    !dt_export_in(l->t, gs->start, gs->end))
		return;
	double gbps[2] = { m[0] >= 0 ? gs->v[m[0]] / ns : 0,
			   m[1] >= 0 ? gs->v[m[1]] / ns : 0 };
	l->e->dram(l->enc, gs->start, gs->device, gbps);
}

/* GPU recording off (or taken by another profiler) until it resumes: a
 * slice on a track of its own. */
static void gpu_gap(struct layout *l, uint64_t until)
{
	if (!l->gpu_off_since)
		return;
	uint64_t from = l->gpu_off_since;
	l->gpu_off_since = 0;
	if (dt_export_in(l->t, from, until))
		l->e->gap(l->enc, from, until,
			  l->gpu_off_why ? l->gpu_off_why : "");
}

static void on_gpu_state(void *arg, const struct dt_gpu_change *g)
{
	struct layout *l = arg;

	if (g->recording) {
		gpu_gap(l, g->t);
		return;
	}
	if (l->gpu_off_since)
		return;
	l->gpu_off_since = g->t ? g->t : 1;
	free(l->gpu_off_why);
	l->gpu_off_why = strndup(g->why, g->why_len);
}

static void on_device(void *arg, const struct dt_device *d)
{
	struct layout *l = arg;

	if (l->e->device)
		l->e->device(l->enc, d);
}

static void on_thread(void *arg, const struct dt_thread *th)
{
	struct layout *l = arg;

	l->e->thread(l->enc, th->tid, th->name, th->name_len);
}

static void on_loss(void *arg, const struct dt_loss *loss)
{
	struct layout *l = arg;
	char what[160];

	if (!dt_export_in(l->t, loss->t, loss->t))
		return;
	dt_export_loss_text(loss, what, sizeof(what));
	l->e->mark(l->enc, loss->t, "records lost", what);
}

/* The program's NVTX ranges, once the session has read them. */
static void ranges(struct layout *l)
{
	size_t n;
	const struct dt_range *r = dt_session_ranges(l->t->s, &n);

	for (size_t i = 0; i < n; i++, r++)
		if (dt_export_in(l->t, r->t_begin, r->t_end))
			l->e->range(l->enc, r, i);
}

static int trace(struct layout *l, struct dt_export_note *note)
{
	struct dt_consumer c = {
		.arg = l,
		.call = on_call,
		.activity = on_activity,
		.op = on_op,
		.graph_launch = on_graph_launch,
		.gpu_sample = on_gpu_sample,
		.gpu_state = on_gpu_state,
		.device = on_device,
		.thread = on_thread,
		.loss = on_loss,
	};

	if (dt_session_add(l->t->s, &c) < 0) {
		dt_error("out of memory");
		return 1;
	}
	dt_session_run(l->t->s);
	l->e->trace_end(l->enc);
	ranges(l);
	dt_export_note(l->t, note);
	gpu_gap(l, note->last);
	/* at its end, where a reader of the timeline sees it */
	if (!note->complete)
		l->e->mark(l->enc, note->last, "trace incomplete", note->why);
	return 0;
}

int dt_tl_export(const struct dt_tl_encoder *e, void *enc,
		 const struct dt_export_trace *t, size_t n, uint32_t *pids,
		 struct dt_export_note *notes)
{
	struct layout l = { .e = e, .enc = enc };
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		l.t = &t[i];
		e->trace_begin(enc, &t[i], dt_export_pid(t, i, pids), i);
		rc = trace(&l, &notes[i]);
	}
	free(l.gpu_off_why);
	return rc;
}
