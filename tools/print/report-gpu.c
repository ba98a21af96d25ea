/*
 * report-gpu.c - the report's sections on all GPU work, cuDNN's or not:
 * GPU time by the library that launched it and by operation family, and
 * split into batches and token generation. Text, Markdown and HTML
 * tables; the JSON of the same numbers is report-json.c's.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "tools.h"

static const char *indent(enum dt_format f)
{
	/* HTML keeps no blanks: no-break spaces */
	return f == DT_MARKDOWN ? "&nbsp;&nbsp;" : f == DT_HTML ? "\u00a0\u00a0"
								: "  ";
}

static void row(struct dt_table *t, const char *ind, const char *what,
		uint64_t ns, uint64_t whole, uint64_t count)
{
	char b1[32], b2[32];

	dt_table_cell(t, "%s%s", ind, what);
	dt_table_cell(t, "%s", dt_fmt_ns(ns, b1, sizeof(b1)));
	dt_table_cell(t, "%s",
		      dt_fmt_pct(dt_pct_of((double)ns, (double)whole), b2,
				 sizeof(b2)));
	dt_table_cell(t, "%" PRIu64, count);
}

/* Indexes 0..n-1 sorted by ns[], largest first. */
static void order(int *ix, int n, const uint64_t *ns)
{
	for (int i = 0; i < n; i++)
		ix[i] = i;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && ns[ix[j]] > ns[ix[j - 1]]; j--) {
			int x = ix[j];
			ix[j] = ix[j - 1];
			ix[j - 1] = x;
		}
}

void dt_report_libraries(FILE *out, const struct dt_summary *s,
			 enum dt_format f, bool color)
{
	static const char *const hdr[] = { "library, operation", "time",
					   "share", "count", NULL };
	const char *ind = indent(f);
	uint64_t lib_ns[DT_LIB_COUNT], fam_ns[DT_OPF_COUNT], n;
	int libs[DT_LIB_COUNT], fams[DT_OPF_COUNT];
	struct dt_table *t;
	char b1[32], b2[32];

	if (!s->gpu_ns)
		return;
	dt_heading(out, f, "##", color, "GPU time by library and operation");
	if (!(t = dt_table_new(hdr, "lrrr")))
		return;
	for (int l = 0; l < DT_LIB_COUNT; l++)
		lib_ns[l] = dt_sum_lib_ns(s, l, -1, NULL);
	order(libs, DT_LIB_COUNT, lib_ns);
	for (int i = 0; i < DT_LIB_COUNT; i++) {
		int l = libs[i];
		dt_sum_lib_ns(s, l, -1, &n);
		if (!n)
			continue;
		row(t, "", dt_lib_name(l), lib_ns[l], s->gpu_ns, n);
		order(fams, DT_OPF_COUNT, s->lib_ns[l]);
		for (int k = 0; k < DT_OPF_COUNT; k++)
			if (s->lib_count[l][fams[k]])
				row(t, ind, dt_opfam_name(fams[k]),
				    s->lib_ns[l][fams[k]], s->gpu_ns,
				    s->lib_count[l][fams[k]]);
	}
	dt_table_print(t, out, f, color);
	dt_table_free(t);
	dt_sum_lib_ns(s, DT_LIB_OTHER, -1, &n);
	dt_para(out, f, NULL,
		"not attributed to a library: %s (%s of GPU time, %" PRIu64
		" kernels); counts are kernels, copies and sets, cuDNN's "
		"are op executions\n",
		dt_fmt_ns(lib_ns[DT_LIB_OTHER], b1, sizeof(b1)),
		dt_fmt_pct(dt_pct_of((double)lib_ns[DT_LIB_OTHER],
				     (double)s->gpu_ns),
			   b2,
			   sizeof(b2)),
		n);
	/* a blank line after it, or Markdown runs the two tables together */
	char by[DT_BY_COUNT][32];
	for (int b = 0; b < DT_BY_COUNT; b++)
		dt_fmt_pct(dt_pct_of((double)s->by_ns[b], (double)s->gpu_ns),
			   by[b], sizeof(by[b]));
	dt_para(out, f, NULL,
		"what told the library, by GPU time: the %s call that "
		"launched it %s, the runtime's copies and sets %s, the library "
		"that registered the kernel %s, the kernel's name %s\n\n",
		dt_sum_cudnn_only(s) ? "cuDNN" : "library's", by[DT_BY_CALL],
		by[DT_BY_RUNTIME], by[DT_BY_MODULE], by[DT_BY_NAME]);

	static const char *const fhdr[] = { "operation, any library", "time",
					    "share", "count", NULL };
	if (!(t = dt_table_new(fhdr, "lrrr")))
		return;
	for (int k = 0; k < DT_OPF_COUNT; k++)
		fam_ns[k] = dt_sum_lib_ns(s, -1, k, NULL);
	order(fams, DT_OPF_COUNT, fam_ns);
	for (int i = 0; i < DT_OPF_COUNT; i++) {
		dt_sum_lib_ns(s, -1, fams[i], &n);
		if (n)
			row(t, "", dt_opfam_name(fams[i]), fam_ns[fams[i]],
			    s->gpu_ns, n);
	}
	dt_table_print(t, out, f, color);
	dt_table_free(t);
}

void dt_report_phases(FILE *out, const struct dt_summary *s, enum dt_format f,
		      bool color)
{
	static const char *const hdr[] = { "phase, operation", "time",
					   "share", "count", NULL };
	const struct dt_sum_phase *tok = &s->phases[DT_PHASE_TOKEN];
	const char *ind = indent(f);
	struct dt_table *t;
	int fams[DT_OPF_COUNT];
	char b1[32], b2[32], b3[32];

	/* only where some matrix products were matrix-vector ones */
	if (!s->gpu_ns || !tok->fam_count[DT_OPF_MATMUL])
		return;
	dt_heading(out, f, "##", color, "GPU time by phase");
	if (!(t = dt_table_new(hdr, "lrrr")))
		return;
	for (int p = 0; p < DT_PHASE_COUNT; p++) {
		const struct dt_sum_phase *ph = &s->phases[p];
		if (!ph->count)
			continue;
		row(t, "", dt_phase_name(p), ph->ns, s->gpu_ns, ph->count);
		order(fams, DT_OPF_COUNT, ph->fam_ns);
		for (int k = 0; k < DT_OPF_COUNT; k++)
			if (ph->fam_count[fams[k]])
				row(t, ind, dt_opfam_name(fams[k]),
				    ph->fam_ns[fams[k]], s->gpu_ns,
				    ph->fam_count[fams[k]]);
	}
	dt_table_print(t, out, f, color);
	dt_table_free(t);
	for (int p = 0; p < DT_PHASE_COUNT; p++) {
		const struct dt_sum_phase *ph = &s->phases[p];
		uint64_t cp = ph->fam_ns[DT_OPF_COPY];
		char line[256];
		int n;

		if (!ph->count)
			continue;
		n = snprintf(line, sizeof(line),
			     "%s: %s in copies and conversions (%s of the "
			     "phase)",
			     p == DT_PHASE_TOKEN   ? "token generation"
			     : p == DT_PHASE_BATCH ? "batches"
						   : "setup",
			     dt_fmt_ns(cp, b1, sizeof(b1)),
			     dt_fmt_pct(dt_pct_of((double)cp, (double)ph->ns),
					b2, sizeof(b2)));
		if (ph->copy_bytes && n > 0 && (size_t)n < sizeof(line))
			n += snprintf(line + n, sizeof(line) - (size_t)n,
				      "; memory copies and sets: %s at %s",
				      dt_fmt_bytes(ph->copy_bytes, b1,
						   sizeof(b1)),
				      dt_fmt_rate((double)ph->copy_bytes, ph->copy_ns, b3,
					   sizeof(b3)));
		if (ph->steps && n > 0 && (size_t)n < sizeof(line))
			snprintf(line + n, sizeof(line) - (size_t)n,
				 "; %" PRIu64 " CUDA graph launches, %s of "
				 "GPU work each",
				 ph->steps,
				 dt_fmt_ns(ph->ns / ph->steps, b2, sizeof(b2)));
		dt_para(out, f, NULL, "%s\n", line);
	}
}
