/*
 * diff-json.c - `dnntrace diff --format json`: both runs, the thresholds,
 * every operation and quantity compared and the gate, in the schema
 * dnntrace.diff (analyzer/DIFF.md).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "diff.h"
#include "dt-steps.h"

static void json_side(struct dt_json *j, const struct dt_diff_side *s)
{
	if (!s->present) {
		dt_json_null(j);
		return;
	}
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "count", s->count);
	dt_json_ku(j, "gpu_ns", s->gpu_ns);
	dt_json_ku(j, "timed", s->timed);
	dt_json_ku(j, "median_ns", s->median_ns);
	dt_json_ku(j, "min_ns", s->min_ns);
	dt_json_ku(j, "max_ns", s->max_ns);
	dt_json_ki(j, "engine", s->engine);
	dt_json_ks(j, "knobs", s->knobs);
	dt_json_ki(j, "workspace", s->workspace);
	dt_json_kg(j, "achieved_flops", s->flops_per_s);
	dt_json_kg(j, "achieved_bandwidth", s->bytes_per_s);
	dt_json_close(j, -1);
}

static void json_run(struct dt_json *j, const char *key, const char *name,
		     const struct dt_summary *s)
{
	const struct dt_sum_file *f = &s->files[0];

	dt_json_key_nl(j, key, 1);
	dt_json_open(j, '{', -1);
	dt_json_ks(j, "name", name);
	dt_json_ku(j, "traces", s->n_files);
	dt_json_ks(j, "program", f->program);
	dt_json_ks(j, "gpu", s->n_devices ? s->devices[0].name : NULL);
	dt_json_ks(j, "cudnn_version", f->cudnn_version);
	dt_json_ku(j, "cudnn_gpu_ns", s->cudnn_ns);
	dt_json_ku(j, "other_gpu_ns", diff_other_ns(s));
	dt_json_ku(j, "copies_ns", s->copy_ns);
	dt_json_ku(j, "host_cudnn_ns", s->host_ns);
	dt_json_ku(j, "calls", s->calls);
	dt_json_ku(j, "own_calls", s->own_calls);
	dt_json_ku(j, "ops", s->ops);
	dt_json_ku(j, "kernels", s->kernels);
	dt_json_ku(j, "work", s->work);
	dt_json_ku(j, "gpu_ns", s->gpu_ns);
	dt_json_ku(j, "timed_ops", s->ops - s->sampling.unsampled_ops);
	dt_json_key(j, "complete");
	dt_json_bool(j, dt_summary_complete(s));
	dt_json_steps(j, s->steps);
	dt_json_key(j, "files");
	dt_json_open(j, '[', -1);
	for (size_t i = 0; i < s->n_files; i++) {
		const struct dt_sum_file *fi = &s->files[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "path", fi->path);
		dt_json_trace_end(j, fi);
		if (fi->sampling.one_in)
			dt_json_gpu_sample(j, &fi->sampling);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_close(j, -1);
}

static void json_quantities(struct dt_json *j, const struct dt_diff *d)
{
	dt_json_key_nl(j, "quantities", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < d->n_qty; i++) {
		const struct dt_diff_qty *q = &d->qty[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "verdict", dt_verdict_key(q->verdict));
		dt_json_ks(j, "kind", dt_qty_key(q->kind));
		dt_json_ks(j, "name", q->name);
		dt_json_kn(j, "base_ns", q->base);
		dt_json_kn(j, "new_ns", q->next);
		dt_json_kg(j, "change", q->change);
		dt_json_kn(j, "noise_ns", q->noise_ns);
		dt_json_kn(j, "floor_ns", q->floor_ns);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

static void json_replay_side(struct dt_json *j,
			     const struct dt_diff_replay_side *s)
{
	if (!s->present) {
		dt_json_null(j);
		return;
	}
	dt_json_open(j, '{', -1);
	dt_json_ki(j, "engine", s->engine);
	dt_json_ks(j, "knobs", s->knobs);
	dt_json_ku(j, "median_ns", s->median_ns);
	dt_json_kg(j, "spread", s->spread);
	dt_json_ki(j, "best", s->best);
	dt_json_ks(j, "best_knobs", s->best_knobs);
	dt_json_ku(j, "best_ns", s->best_ns);
	dt_json_close(j, -1);
}

static void json_replays(struct dt_json *j, const struct dt_diff *d)
{
	if (!d->n_replays) /* neither run, or one alone, was replayed */
		return;
	dt_json_key_nl(j, "replays", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < d->n_replays; i++) {
		const struct dt_diff_replay *r = &d->replays[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "verdict", dt_verdict_key(r->verdict));
		dt_json_ks(j, "brief", r->brief);
		dt_json_ks(j, "problem", r->key);
		dt_json_key(j, "legacy");
		dt_json_bool(j, r->legacy);
		dt_json_kg(j, "change", r->change);
		dt_json_key(j, "best_changed");
		dt_json_bool(j, r->best_changed);
		dt_json_key(j, "base");
		json_replay_side(j, &r->base);
		dt_json_key(j, "new");
		json_replay_side(j, &r->next);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

void diff_json(const struct diff_ctx *c, enum gate g)
{
	const struct dt_diff *d = c->d;
	struct dt_json j;

	dt_json_init(&j, c->out);
	dt_json_open(&j, '{', -1);
	dt_json_ks(&j, "schema", "dnntrace.diff");
	dt_json_ku(&j, "version", DIFF_SCHEMA_VERSION);
	json_run(&j, "base", c->base_name, d->base);
	json_run(&j, "new", c->next_name, d->next);
	dt_json_key_nl(&j, "thresholds", 1);
	dt_json_open(&j, '{', -1);
	dt_json_kg(&j, "relative", d->opts.threshold);
	dt_json_ku(&j, "min_ns", d->opts.min_ns);
	dt_json_close(&j, -1);
	dt_json_key_nl(&j, "different_gpu", 1);
	dt_json_bool(&j, d->other_gpu);
	dt_json_key(&j, "different_cudnn");
	dt_json_bool(&j, d->other_cudnn);
	dt_json_key_nl(&j, "ops", 1);
	dt_json_open(&j, '[', 2);
	for (size_t i = 0; i < d->n_ops; i++) {
		const struct dt_diff_op *o = &d->ops[i];
		dt_json_open(&j, '{', -1);
		dt_json_ks(&j, "verdict", dt_verdict_key(o->verdict));
		dt_json_ks(&j, "api", o->api);
		dt_json_ks(&j, "kind", dt_op_kind_key(o->kind));
		dt_json_ks(&j, "brief", o->brief);
		dt_json_ks(&j, "problem", o->key);
		dt_json_ki(&j, "delta_ns", o->delta_ns);
		dt_json_kg(&j, "change", o->change);
		dt_json_key(&j, "engine_changed");
		dt_json_bool(&j, o->engine_changed);
		dt_json_key(&j, "workspace_changed");
		dt_json_bool(&j, o->workspace_changed);
		dt_json_key(&j, "base");
		json_side(&j, &o->base);
		dt_json_key(&j, "new");
		json_side(&j, &o->next);
		dt_json_close(&j, -1);
	}
	dt_json_close(&j, -1);
	json_quantities(&j, d);
	json_replays(&j, d);
	dt_json_key_nl(&j, "counts", 1);
	dt_json_open(&j, '{', -1);
	dt_json_ku(&j, "slower", d->slower);
	dt_json_ku(&j, "faster", d->faster);
	dt_json_ku(&j, "noise", d->noise);
	dt_json_ku(&j, "engine_changes", d->engine_changes);
	dt_json_ku(&j, "workspace_changes", d->workspace_changes);
	dt_json_ku(&j, "added", d->added);
	dt_json_ku(&j, "removed", d->removed);
	dt_json_ku(&j, "ops", d->n_ops);
	dt_json_ku(&j, "quantities_slower", d->qty_slower);
	dt_json_ku(&j, "quantities_faster", d->qty_faster);
	dt_json_ku(&j, "quantities_noise", d->qty_noise);
	dt_json_ku(&j, "quantities", d->n_qty);
	if (d->n_replays) {
		dt_json_ku(&j, "replays", d->n_replays);
		dt_json_ku(&j, "replay_moves", d->replay_moves);
		dt_json_ku(&j, "best_changes", d->best_changes);
	}
	dt_json_close(&j, -1);
	dt_json_key_nl(&j, "gate", 1);
	dt_json_open(&j, '{', -1);
	dt_json_ks(&j, "fail_on", diff_gate_names[g]);
	dt_json_key(&j, "tripped");
	dt_json_bool(&j, diff_gate_tripped(d, g, c->incomplete));
	dt_json_key(&j, "incomplete_input");
	dt_json_bool(&j, diff_incomplete(d));
	dt_json_ks(&j, "on_incomplete", diff_incomplete_names[c->incomplete]);
	dt_json_close(&j, -1);
	dt_json_close(&j, -1);
	fputc('\n', c->out);
}
