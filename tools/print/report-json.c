/*
 * report-json.c - `dnntrace report --format json`: the whole report in
 * the versioned schema analyzer/REPORT.md documents (dnntrace.report):
 * the traces, GPUs, GPU time, operations by problem, functions, ranges,
 * findings and fusion.
 *
 * It writes the analyzer's summary as it is, in the report's order.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "report.h"
#include "tools.h"

static void json_ranges(struct dt_json *j, const struct dt_summary *s)
{
	if (!s->n_ranges)
		return;
	dt_json_key_nl(j, "ranges", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < s->n_ranges; i++) {
		const struct dt_range_stat *r = &s->ranges[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "name", r->name);
		dt_json_key(j, "domain");
		if (r->domain)
			dt_json_str(j, r->domain);
		else
			dt_json_null(j);
		dt_json_ku(j, "count", r->count);
		dt_json_ku(j, "open", r->open);
		dt_json_ku(j, "host_ns", r->host_ns);
		dt_json_ku(j, "calls", r->calls);
		dt_json_ku(j, "kernels", r->kernels);
		dt_json_ku(j, "gpu_ns", r->gpu_ns);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

static void json_peaks(struct dt_json *j, const struct dt_peaks *pk)
{
	dt_json_open(j, '{', -1);
	dt_json_kn(j, "bandwidth", pk->bandwidth);
	dt_json_key(j, "flops");
	dt_json_open(j, '{', -1);
	for (int m = 1; m < DT_MATH_COUNT; m++) {
		dt_json_key(j, dt_math_name(m));
		dt_json_num(j, pk->flops[m]);
	}
	dt_json_close(j, -1);
	dt_json_key(j, "source");
	dt_json_str(j, pk->source);
	dt_json_close(j, -1);
}

/* A member of an object, by type. */
static void json_files(struct dt_json *j, const struct dt_summary *s)
{
	dt_json_key_nl(j, "files", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < s->n_files; i++) {
		const struct dt_sum_file *f = &s->files[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "path", f->path);
		dt_json_ks(j, "host", f->host);
		dt_json_ku(j, "pid", f->pid);
		dt_json_ks(j, "rank", f->rank);
		dt_json_ks(j, "program", f->program);
		dt_json_ks(j, "cudnn", f->cudnn);
		dt_json_ks(j, "cudnn_version", f->cudnn_version);
		dt_json_ks(j, "cuda", f->cuda);
		dt_json_ks(j, "recording", f->gpu_state);
		dt_json_trace_end(j, f);
		dt_json_ku(j, "calls", f->calls);
		dt_json_ku(j, "own_calls", f->own_calls);
		dt_json_ku(j, "records", f->records);
		dt_json_ku(j, "ops", f->ops);
		dt_json_ku(j, "kernels", f->kernels);
		dt_json_ku(j, "copies", f->copies);
		dt_json_ku(j, "duration_ns",
			   f->t_end > f->t_begin ? f->t_end - f->t_begin : 0);
		dt_json_ku(j, "gpu_ns", f->gpu_ns);
		dt_json_ku(j, "cudnn_gpu_ns", f->cudnn_gpu_ns);
		dt_json_ku(j, "comm_ns", f->comm_ns);
		if (f->sampling.one_in) /* record --gpu-sample */
			dt_json_gpu_sample(j, &f->sampling);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

static void json_devices(struct dt_json *j, const struct dt_summary *s)
{
	char cc[16];

	dt_json_key_nl(j, "devices", 1);
	dt_json_open(j, '[', 2);
	for (size_t d = 0; d < s->n_devices; d++) {
		const struct dt_device *dv = &s->devices[d];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "name", dv->name);
		snprintf(cc, sizeof(cc), "%u.%u", dv->cc_major, dv->cc_minor);
		dt_json_ks(j, "cc", cc);
		dt_json_ku(j, "sms", dv->sms);
		dt_json_ku(j, "clock_khz", dv->clock_khz);
		dt_json_ku(j, "memory", dv->global_mem);
		dt_json_key(j, "peaks");
		json_peaks(j, &s->peaks[d]);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_key_nl(j, "peaks", 1);
	json_peaks(j, dt_summary_peaks(s, -1));
}

/* Version 1's "other_kernels": kernels outside cuDNN calls in its five
 * families (GEMM libraries, NCCL, ggml, ATen, XLA) and the rest (cuDNN's
 * own outside its calls and unknown ones among them). */
static void json_other_kernels(struct dt_json *j, const struct dt_summary *s)
{
	static const struct {
		const char *key;
		int lib[6]; /* ended by -1 */
	} v1[] = {
		{ "gemm", { DT_LIB_CUBLAS, DT_LIB_CUTLASS, -1 } },
		{ "nccl", { DT_LIB_NCCL, -1 } },
		{ "ggml", { DT_LIB_GGML, -1 } },
		{ "aten", { DT_LIB_ATEN, -1 } },
		{ "xla", { DT_LIB_XLA, -1 } },
		{ "other",
		  { DT_LIB_CUDNN, DT_LIB_FLASH, DT_LIB_TRITON, DT_LIB_CUB,
		    DT_LIB_OTHER, -1 } },
	};

	dt_json_key_nl(j, "other_kernels", 2);
	dt_json_open(j, '[', -1);
	for (size_t i = 0; i < sizeof(v1) / sizeof(*v1); i++) {
		uint64_t ns = 0, n = 0;
		for (const int *l = v1[i].lib; *l >= 0; l++) {
			ns += s->other_ns[*l];
			n += s->other_count[*l];
		}
		if (!n)
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "family", v1[i].key);
		dt_json_ku(j, "ns", ns);
		dt_json_ku(j, "kernels", n);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

/* All GPU time by library, each with its operation families, and by
 * operation family alone. */
static void json_libraries(struct dt_json *j, const struct dt_summary *s)
{
	uint64_t n, ns;

	dt_json_key_nl(j, "libraries", 2);
	dt_json_open(j, '[', -1);
	for (int l = 0; l < DT_LIB_COUNT; l++) {
		ns = dt_sum_lib_ns(s, l, -1, &n);
		if (!n)
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "library", dt_lib_key(l));
		dt_json_ku(j, "ns", ns);
		dt_json_ku(j, "count", n);
		dt_json_key(j, "families");
		dt_json_open(j, '[', -1);
		for (int f = 0; f < DT_OPF_COUNT; f++) {
			if (!s->lib_count[l][f])
				continue;
			dt_json_open(j, '{', -1);
			dt_json_ks(j, "family", dt_opfam_key(f));
			dt_json_ku(j, "ns", s->lib_ns[l][f]);
			dt_json_ku(j, "count", s->lib_count[l][f]);
			dt_json_close(j, -1);
		}
		dt_json_close(j, -1);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	/* what told each one's library, in ns of GPU time */
	dt_json_key_nl(j, "attributed_by", 2);
	dt_json_open(j, '{', -1);
	for (int b = 0; b < DT_BY_COUNT; b++)
		dt_json_ku(j, dt_owner_by_key(b), s->by_ns[b]);
	dt_json_close(j, -1);
	dt_json_key_nl(j, "families", 2);
	dt_json_open(j, '[', -1);
	for (int f = 0; f < DT_OPF_COUNT; f++) {
		ns = dt_sum_lib_ns(s, -1, f, &n);
		if (!n)
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "family", dt_opfam_key(f));
		dt_json_ku(j, "ns", ns);
		dt_json_ku(j, "count", n);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_key_nl(j, "phases", 2);
	dt_json_open(j, '[', -1);
	for (int p = 0; p < DT_PHASE_COUNT; p++) {
		const struct dt_sum_phase *ph = &s->phases[p];
		if (!ph->count)
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "phase", dt_phase_key(p));
		dt_json_ku(j, "ns", ph->ns);
		dt_json_ku(j, "count", ph->count);
		dt_json_ku(j, "copy_ns", ph->copy_ns);
		dt_json_ku(j, "copy_bytes", ph->copy_bytes);
		dt_json_ku(j, "graph_launches", ph->steps);
		dt_json_key(j, "families");
		dt_json_open(j, '[', -1);
		for (int f = 0; f < DT_OPF_COUNT; f++) {
			if (!ph->fam_count[f])
				continue;
			dt_json_open(j, '{', -1);
			dt_json_ks(j, "family", dt_opfam_key(f));
			dt_json_ku(j, "ns", ph->fam_ns[f]);
			dt_json_ku(j, "count", ph->fam_count[f]);
			dt_json_close(j, -1);
		}
		dt_json_close(j, -1);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

static void json_gpu(struct dt_json *j, const struct dt_summary *s)
{
	dt_json_key_nl(j, "gpu", 1);
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "total_ns", s->gpu_ns);
	dt_json_ku(j, "busy_ns", s->busy_ns);
	dt_json_ku(j, "span_ns", s->span_ns);
	dt_json_ku(j, "cudnn_ns", s->cudnn_ns);
	dt_json_ku(j, "copies_ns", s->copy_ns);
	dt_json_ku(j, "copies", s->copies);
	dt_json_ku(j, "copy_bytes", s->copy_bytes);
	dt_json_ku(j, "work", s->work);
	dt_json_key_nl(j, "cudnn_by_kind", 2);
	dt_json_open(j, '[', -1);
	for (int k = 0; k < DT_KIND_COUNT; k++) {
		if (!s->kind_count[k])
			continue;
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "kind", dt_op_kind_key(k));
		dt_json_ku(j, "ns", s->kind_ns[k]);
		dt_json_ku(j, "count", s->kind_count[k]);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	json_other_kernels(j, s);
	json_libraries(j, s);
	dt_json_close(j, -1);
	dt_json_key_nl(j, "host_cudnn_ns", 1);
	dt_json_u64(j, s->host_ns);
	dt_json_key_nl(j, "graphs", 1);
	dt_json_graphs(j, &s->graphs);
	dt_json_key_nl(j, "plans", 1);
	dt_json_plans(j, &s->plans);
	dt_json_dram(j, s);
}

static void json_problem(struct dt_json *j, const struct dt_summary *s,
			 const struct dt_sum_problem *p)
{
	struct dt_rates r;

	dt_problem_rates(s, p, &r);
	dt_json_open(j, '{', -1);
	dt_json_ks(j, "api", p->api);
	dt_json_ks(j, "kind", dt_op_kind_key(p->kind));
	dt_json_ks(j, "math", dt_math_name(p->math));
	dt_json_key(j, "tensor_cores");
	dt_json_tri(j, p->tensor_cores);
	dt_json_ks(j, "brief", p->brief);
	dt_json_ks(j, "problem", p->key);
	dt_json_ku(j, "count", p->count);
	dt_json_ku(j, "replays", p->replays);
	dt_json_ku(j, "captured", p->captured);
	dt_json_ku(j, "failed", p->failed);
	dt_json_ku(j, "gpu_ns", p->gpu_ns);
	dt_json_ku(j, "host_ns", p->host_ns);
	dt_json_ku(j, "kernels", p->kernels);
	uint64_t timed = p->count - p->unsampled;
	dt_json_ku(j, "mean_ns", timed ? p->gpu_ns / timed : 0);
	if (s->sampling.one_in) {
		double spread = dt_problem_spread(p);
		dt_json_ku(j, "timed", timed);
		dt_json_ku(j, "settled_mean_ns",
			   p->settled_count ? p->settled_ns / p->settled_count
					    : 0);
		dt_json_key(j, "spread");
		if (spread < 0)
			dt_json_null(j);
		else
			dt_json_num(j, spread);
	}
	dt_json_ku(j, "median_ns", p->median_ns);
	dt_json_ku(j, "min_ns", p->min_ns);
	dt_json_ku(j, "max_ns", p->max_ns);
	dt_json_kn(j, "share",
		   dt_report_share(p->gpu_ns, dt_sum_share_ns(s)) / 100);
	dt_json_ki(j, "engine", p->last_engine);
	dt_json_key(j, "engines");
	dt_json_open(j, '[', -1);
	for (uint32_t e = 0; e < p->n_engines; e++) {
		dt_json_open(j, '{', -1);
		dt_json_ki(j, "engine", p->engines[e].engine);
		dt_json_ks(j, "knobs", p->engines[e].knobs);
		dt_json_ku(j, "count", p->engines[e].count);
		dt_json_ku(j, "gpu_ns", p->engines[e].gpu_ns);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_ki(j, "workspace", p->workspace);
	dt_json_ks(j, "knobs",
		   p->n_engines ? p->engines[p->last_choice].knobs : NULL);
	dt_json_ks(j, "notes", p->notes);
	dt_json_kn(j, "flops", p->flops);
	dt_json_ku(j, "bytes", p->bytes);
	dt_json_kn(j, "achieved_flops", r.flops_per_s);
	dt_json_kn(j, "achieved_bandwidth", r.bytes_per_s);
	dt_json_kn(j, "intensity", r.intensity);
	dt_json_key(j, "pct_peak_flops");
	dt_json_opt(j, r.pct_flops);
	dt_json_key(j, "pct_peak_bandwidth");
	dt_json_opt(j, r.pct_bandwidth);
	dt_json_key(j, "pct_roofline");
	dt_json_opt(j, r.roof_pct);
	dt_json_ks(j, "bound",
		   r.bound == 1   ? "compute"
		   : r.bound == 0 ? "memory"
				  : NULL);
	dt_json_key(j, "tuning");
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "runs", p->tune_count);
	dt_json_ku(j, "gpu_ns", p->tune_ns);
	dt_json_ku(j, "rounds", p->tune_rounds);
	dt_json_close(j, -1);
	dt_json_ku(j, "layout_conversion_ns", p->convert_ns);
	dt_json_key(j, "per_file");
	dt_json_open(j, '[', -1);
	for (size_t f = 0; f < s->n_files; f++) {
		bool have = f < p->cap_per_file;
		dt_json_open(j, '{', -1);
		dt_json_ku(j, "gpu_ns", have ? p->per_file[f].ns : 0);
		dt_json_ku(j, "count", have ? p->per_file[f].count : 0);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_close(j, -1);
}

/* The wrapped libraries, where the traces hold others than cuDNN: what
 * info says of each, and its calls and op executions. */
static void json_wrapped(struct dt_json *j, const struct dt_summary *s)
{
	dt_json_key_nl(j, "wrapped", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < s->n_libs; i++) {
		const struct dt_sum_lib *l = &s->libs[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "library", l->library);
		dt_json_ks(j, "display", l->display);
		dt_json_ks(j, "version", l->version);
		dt_json_ks(j, "file", l->file);
		dt_json_ku(j, "calls", l->calls);
		dt_json_ku(j, "failed", l->failed);
		dt_json_ku(j, "host_ns", l->host_ns);
		dt_json_ku(j, "ops", l->ops);
		dt_json_ku(j, "gpu_ns", l->gpu_ns);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

/* The functions by host time; each with its library where the traces
 * hold others than cuDNN. */
static void json_apis(struct dt_json *j, const struct dt_summary *s)
{
	uint32_t *ix = dt_report_api_order(s);
	bool libs = !dt_sum_cudnn_only(s);

	dt_json_key_nl(j, "apis", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; ix && i < s->n_apis; i++) {
		const struct dt_sum_api *a = &s->apis[ix[i]];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "name", a->name);
		if (libs)
			dt_json_ks(j, "library", s->libs[a->lib].library);
		dt_json_ku(j, "calls", a->calls);
		dt_json_ku(j, "failed", a->failed);
		dt_json_ku(j, "total_ns", a->ns);
		dt_json_ku(j, "avg_ns", a->calls ? a->ns / a->calls : 0);
		dt_json_ku(j, "min_ns", a->min);
		dt_json_ku(j, "max_ns", a->max);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	free(ix);
}

static void json_findings(struct dt_json *j, const struct dt_summary *s)
{
	dt_json_key_nl(j, "findings", 1);
	dt_json_open(j, '[', 2);
	for (size_t i = 0; i < s->n_findings; i++) {
		const struct dt_finding *f = &s->findings[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "type", dt_finding_key(f->type));
		dt_json_ku(j, "cost_ns", f->cost_ns);
		dt_json_ks(j, "clock", f->host ? "host" : "gpu");
		dt_json_ks(j, "title", f->title);
		dt_json_key(j, "evidence");
		dt_json_open(j, '[', -1);
		for (const char *e = f->evidence; e && *e;) {
			size_t len = strcspn(e, "\n");
			dt_json_strn(j, e, len);
			e += len;
			if (*e)
				e++;
		}
		dt_json_close(j, -1);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

void dt_json_startup(struct dt_json *j, const struct dt_summary *s)
{
	const struct dt_sum_startup *u = &s->startup;

	dt_json_key_nl(j, "startup", 1);
	dt_json_open(j, '{', -1);
	dt_json_key(j, "left_out");
	dt_json_bool(j, u->traces > 0);
	dt_json_ku(j, "traces", u->traces);
	dt_json_ku(j, "kept", u->kept);
	dt_json_ku(j, "ns", u->ns);
	dt_json_ku(j, "steps", u->steps);
	dt_json_ku(j, "gpu_ns", u->gpu_ns);
	dt_json_ku(j, "kernels", u->kernels);
	dt_json_ku(j, "busy_ns", u->busy_ns);
	dt_json_ku(j, "tune_ns", u->tune_ns);
	dt_json_ku(j, "calls", u->calls);
	dt_json_ku(j, "host_ns", u->host_ns);
	dt_json_ku(j, "builds", u->builds);
	dt_json_ku(j, "late_ns", u->late_ns);
	/* GPU work that ran before a cut and reached its trace after it was
	 * counted as steady once; it is placed by its time now */
	dt_json_ku(j, "misplaced_ns", 0);
	dt_json_ku(j, "steady_ns", u->steady_ns);
	dt_json_close(j, -1);
}

void dt_report_json(const struct dt_report *c)
{
	const struct dt_summary *s = c->s;
	struct dt_json j;
	size_t n;

	dt_json_init(&j, c->out);
	dt_json_open(&j, '{', -1);
	dt_json_ks(&j, "schema", "dnntrace.report");
	dt_json_ku(&j, "version", DT_REPORT_SCHEMA_VERSION);
	/* every trace read to its end, nothing skipped or cut */
	dt_json_key(&j, "complete");
	dt_json_bool(&j, dt_summary_complete(s));
	json_files(&j, s);
	if (!dt_sum_cudnn_only(s))
		json_wrapped(&j, s);
	json_devices(&j, s);
	json_gpu(&j, s);
	dt_json_steps(&j, s->steps);
	dt_json_startup(&j, s);
	dt_json_key_nl(&j, "ops", 1);
	dt_json_open(&j, '[', 2);
	uint32_t *ix = dt_report_problem_order(c, &n);
	for (size_t i = 0; ix && i < n; i++)
		json_problem(&j, s, &s->problems[ix[i]]);
	free(ix);
	dt_json_close(&j, -1);
	json_apis(&j, s);
	json_ranges(&j, s);
	json_findings(&j, s);
	dt_json_key_nl(&j, "fusion", 1);
	dt_fusion_json(&j, s);
	dt_json_close(&j, -1);
	fputc('\n', c->out);
}
