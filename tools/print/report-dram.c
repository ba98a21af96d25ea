/*
 * report-dram.c - the report's section on DRAM traffic measured with the
 * GPU's counters (record --gpu-metrics): how much moved, how fast against
 * the device's peak, by the library and family of the work that ran while
 * it moved, and over time. Text, Markdown, HTML and JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools.h"

/* Whether any trace asked for the GPU's counters. */
static bool asked(const struct dt_summary *s)
{
	for (size_t i = 0; i < s->n_files; i++)
		if (s->files[i].gpu_metrics)
			return true;
	return false;
}

static const char *bytes_str(double b, char *buf, size_t size)
{
	return dt_fmt_bytes(b > 0 ? (uint64_t)(b + 0.5) : 0, buf, size);
}

void dt_report_dram(FILE *out, const struct dt_summary *s, enum dt_format f,
		    bool color, long top)
{
	static const char *const hdr[] = {
		"library, operation", "time sampled", "read", "written",
		"achieved",           "of peak",      NULL
	};
	const struct dt_sum_dram *d = &s->dram;
	double peak = dt_sum_peak_bandwidth(s);
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32];

	if (!asked(s))
		return;
	dt_heading(out, f, "##", color, "DRAM traffic, measured");
	if (f == DT_HTML)
		dt_html_dram(out, s);
	for (size_t i = 0; i < s->n_files; i++) {
		const struct dt_sum_file *fl = &s->files[i];
		if (fl->gpu_metrics && strncmp(fl->gpu_metrics, "on:", 3))
			dt_para(out, f, "warning",
				"%s: GPU counters not "
				"sampled: %s\n",
				fl->path,
				strncmp(fl->gpu_metrics, "off: ", 5)
					? fl->gpu_metrics
					: fl->gpu_metrics + 5);
		if (fl->gpu_metrics_lost)
			dt_para(out, f, "warning", "%s: GPU counters: %s\n",
				fl->path, fl->gpu_metrics_lost);
	}
	if (!d->samples)
		return;
	dt_para(out, f, NULL,
		"%" PRIu64 " samples of the GPU's counters over %s: %s read, "
		"%s written, %s on average while sampled, %s in the busiest "
		"sample (peak %s). A sample holds whatever ran on the GPU: its "
		"bytes go to the work that ran during it, by the time each "
		"covered; %s moved while no recorded work ran.\n",
		d->samples, dt_fmt_ns(d->sampled_ns, b1, sizeof(b1)),
		bytes_str(d->read, b2, sizeof(b2)),
		bytes_str(d->write, b3, sizeof(b3)),
		dt_fmt_rate(d->read + d->write, d->sampled_ns, b4, sizeof(b4)),
		dt_fmt_rate(d->peak_Bps, 1000000000, b5, sizeof(b5)),
		peak > 0 ? dt_fmt_rate(peak, 1000000000, b6, sizeof(b6))
			 : "unknown",
		bytes_str(d->idle_read + d->idle_write, b7, sizeof(b7)));

	struct dt_table *t = dt_table_new(hdr, "lrrrrr");
	if (!t)
		return;
	/* the work that moved most first */
	struct {
		int lib, fam;
		double bytes;
	} rows[DT_LIB_COUNT * DT_OPF_COUNT];
	int n = 0;
	for (int l = 0; l < DT_LIB_COUNT; l++)
		for (int m = 0; m < DT_OPF_COUNT; m++)
			if (d->ns_by[l][m]) {
				rows[n].lib = l;
				rows[n].fam = m;
				rows[n++].bytes =
					d->read_by[l][m] + d->write_by[l][m];
			}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && rows[j].bytes > rows[j - 1].bytes;
		     j--) {
			__typeof__(rows[0]) x = rows[j];
			rows[j] = rows[j - 1];
			rows[j - 1] = x;
		}
	for (int i = 0; i < n && (top <= 0 || i < top); i++) {
		int l = rows[i].lib, m = rows[i].fam;
		double bw = rows[i].bytes * 1e9 / (double)d->ns_by[l][m];
		dt_table_cell(t, "%s, %s", dt_lib_name(l), dt_opfam_name(m));
		dt_table_cell(t, "%s",
			      dt_fmt_ns(d->ns_by[l][m], b1, sizeof(b1)));
		dt_table_cell(t, "%s",
			      bytes_str(d->read_by[l][m], b2, sizeof(b2)));
		dt_table_cell(t, "%s",
			      bytes_str(d->write_by[l][m], b3, sizeof(b3)));
		dt_table_cell(t, "%s",
			      dt_fmt_rate(rows[i].bytes, d->ns_by[l][m], b4,
					  sizeof(b4)));
		dt_table_cell(
			t, "%s",
			peak > 0 ? dt_fmt_pct(100 * bw / peak, b5, sizeof(b5))
				 : "-");
	}
	dt_table_print(t, out, f, color);
	dt_table_free(t);
	if (top > 0 && n > top)
		dt_para(out, f, NULL, "(%d more; --top %d lists them)\n",
			n - (int)top, n);

	/* over time, in eight slices of the sampled span */
	uint64_t used = 0;
	for (int i = 0; i < DT_DRAM_BINS; i++)
		if (d->bins[i] > 0)
			used = (uint64_t)i + 1;
	if (!used || !d->bin_ns)
		return;
	uint64_t per = (used + 7) / 8;
	char line[512];
	int len = snprintf(line, sizeof(line), "over time (%s a slice):",
			   dt_fmt_ns(per * d->bin_ns, b1, sizeof(b1)));
	for (uint64_t i = 0; i < used && len > 0 && (size_t)len < sizeof(line);
	     i += per) {
		double b = 0;
		for (uint64_t k = i; k < i + per && k < DT_DRAM_BINS; k++)
			b += d->bins[k];
		len += snprintf(
			line + len, sizeof(line) - (size_t)len, " %s",
			dt_fmt_rate(b, per * d->bin_ns, b2, sizeof(b2)));
	}
	dt_para(out, f, NULL, "%s\n", line);
}

void dt_json_dram(struct dt_json *j, const struct dt_summary *s)
{
	const struct dt_sum_dram *d = &s->dram;

	if (!asked(s))
		return;
	dt_json_key_nl(j, "dram", 1);
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "samples", d->samples);
	dt_json_ku(j, "sampled_ns", d->sampled_ns);
	dt_json_kn(j, "read_bytes", d->read);
	dt_json_kn(j, "write_bytes", d->write);
	dt_json_kn(j, "peak_sample_Bps", d->peak_Bps);
	dt_json_kn(j, "unattributed_bytes", d->idle_read + d->idle_write);
	dt_json_key_nl(j, "by_family", 2);
	dt_json_open(j, '[', 4);
	for (int l = 0; l < DT_LIB_COUNT; l++)
		for (int m = 0; m < DT_OPF_COUNT; m++) {
			if (!d->ns_by[l][m])
				continue;
			dt_json_open(j, '{', -1);
			dt_json_ks(j, "library", dt_lib_key(l));
			dt_json_ks(j, "family", dt_opfam_key(m));
			dt_json_ku(j, "ns", d->ns_by[l][m]);
			dt_json_kn(j, "read_bytes", d->read_by[l][m]);
			dt_json_kn(j, "write_bytes", d->write_by[l][m]);
			dt_json_close(j, -1);
		}
	dt_json_close(j, 2);
	dt_json_key_nl(j, "timeline", 2);
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "bin_ns", d->bin_ns);
	dt_json_key(j, "bytes");
	dt_json_open(j, '[', -1);
	for (int i = 0; i < DT_DRAM_BINS; i++)
		dt_json_u64(j, d->bins[i]);
	dt_json_close(j, -1);
	dt_json_close(j, -1);
	dt_json_close(j, 1);
}
