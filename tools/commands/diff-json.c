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
	static const struct {
		const char *key;
		size_t offset;
	} counts[] = {
		{ "slower", offsetof(struct dt_diff, slower) },
		{ "faster", offsetof(struct dt_diff, faster) },
		{ "noise", offsetof(struct dt_diff, noise) },
		{ "engine_changes", offsetof(struct dt_diff, engine_changes) },
		{ "workspace_changes",
		  offsetof(struct dt_diff, workspace_changes) },
		{ "added", offsetof(struct dt_diff, added) },
		{ "removed", offsetof(struct dt_diff, removed) },
		{ "ops", offsetof(struct dt_diff, n_ops) },
		{ "quantities_slower", offsetof(struct dt_diff, qty_slower) },
		{ "quantities_faster", offsetof(struct dt_diff, qty_faster) },
		{ "quantities_noise", offsetof(struct dt_diff, qty_noise) },
		{ "quantities", offsetof(struct dt_diff, n_qty) },
	};

	dt_json_init(&j, c->out);
	dt_json_open(&j, '{', -1);
	dt_json_key(&j, "schema");
	dt_json_str(&j, "dnntrace.diff");
	dt_json_key(&j, "version");
	dt_json_u64(&j, DIFF_SCHEMA_VERSION);
	json_run(&j, "base", c->base_name, d->base);
	json_run(&j, "new", c->next_name, d->next);
	dt_json_key_nl(&j, "thresholds", 1);
	dt_json_open(&j, '{', -1);
	dt_json_kg(&j, "relative", d->opts.threshold);
	dt_json_key(&j, "min_ns");
	dt_json_u64(&j, d->opts.min_ns);
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
		dt_json_key(&j, "verdict");
		dt_json_str(&j, dt_verdict_key(o->verdict));
		dt_json_key(&j, "api");
		dt_json_str(&j, o->api);
		dt_json_key(&j, "kind");
		dt_json_str(&j, dt_op_kind_key(o->kind));
		dt_json_key(&j, "brief");
		dt_json_str(&j, o->brief);
		dt_json_key(&j, "problem");
		dt_json_str(&j, o->key);
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
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		dt_json_key(&j, counts[i].key);
		dt_json_u64(&j, *(const size_t *)((const char *)d +
						  counts[i].offset));
	}
	if (d->n_replays) {
		dt_json_ku(&j, "replays", d->n_replays);
		dt_json_ku(&j, "replay_moves", d->replay_moves);
		dt_json_ku(&j, "best_changes", d->best_changes);
	}
	dt_json_close(&j, -1);
	dt_json_key_nl(&j, "gate", 1);
	dt_json_open(&j, '{', -1);
	dt_json_key(&j, "fail_on");
	dt_json_str(&j, diff_gate_names[g]);
	dt_json_key(&j, "tripped");
	dt_json_bool(&j, diff_gate_tripped(d, g, c->incomplete));
	dt_json_key(&j, "incomplete_input");
	dt_json_bool(&j, diff_incomplete(d));
	dt_json_key(&j, "on_incomplete");
	dt_json_str(&j, diff_incomplete_names[c->incomplete]);
	dt_json_close(&j, -1);
	dt_json_close(&j, -1);
	fputc('\n', c->out);
}
