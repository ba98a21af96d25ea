/*
 * json-steps.c - a program's steps (dt-steps.h) as JSON: the "steps"
 * object of `report --format json` and of each run in `diff --format
 * json` (analyzer/REPORT.md, analyzer/DIFF.md).
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "dt-steps.h"
#include "tools.h"

static void json_dist(struct dt_json *j, const char *key,
		      const struct dt_step_dist *d)
{
	dt_json_key(j, key);
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "median_ns", d->median_ns);
	dt_json_ku(j, "p10_ns", d->p10_ns);
	dt_json_ku(j, "p90_ns", d->p90_ns);
	dt_json_ku(j, "mean_ns", d->mean_ns);
	dt_json_close(j, -1);
}

void dt_json_steps(struct dt_json *j, const struct dt_step_stats *s)
{
	dt_json_key_nl(j, "steps", 1);
	if (!s) {
		dt_json_null(j);
		return;
	}
	dt_json_open(j, '{', -1);
	dt_json_key(j, "found");
	dt_json_bool(j, s->found);
	dt_json_ks(j, "anchor", s->anchor);
	dt_json_ks(j, "anchor_kind", s->found ? s->anchor_kind : NULL);
	dt_json_ku(j, "steps", s->steps);
	dt_json_ku(j, "startup_steps", s->startup_steps);
	dt_json_ku(j, "startup_ns", s->startup_ns);
	dt_json_ku(j, "span_ns", s->span_ns);
	json_dist(j, "time", &s->time);
	dt_json_kn(j, "gpu_ns_per_step", s->gpu_ns);
	dt_json_key(j, "kernels_known");
	dt_json_bool(j, s->kernels_known);
	dt_json_key(j, "libraries");
	dt_json_open(j, '{', -1);
	for (int l = 0; l < DT_LIB_COUNT; l++)
		if (s->lib_ns[l] > 0)
			dt_json_kn(j, dt_lib_key(l), s->lib_ns[l]);
	dt_json_close(j, -1);
	dt_json_close(j, -1);
}
