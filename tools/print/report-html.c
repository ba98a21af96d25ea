/*
 * report-html.c - the pictures of `dnntrace report --format html`: GPU
 * time as bars, the GPU's busy time over each run, DRAM traffic, the ranks
 * side by side, and the fusion chains as boxes and arrows (the problems
 * against the roofline are report-roofline.c's). Each is drawn from the
 * summary the text report prints, and comes with a title, a description
 * and a table or the text saying the same; the report's tables themselves
 * come from report-sections.c.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "tools.h"

/* Bars with the texts they write, in one allocation. */
struct bars {
	struct dt_svg_bar *b;
	char (*text)[48];
	char (*label)[48];
	size_t n;
};

static bool bars_init(struct bars *v, size_t cap)
{
	v->n = 0;
	v->b = calloc(cap + 1, sizeof(*v->b));
	v->text = calloc(cap + 1, sizeof(*v->text));
	v->label = calloc(cap + 1, sizeof(*v->label));
	return v->b && v->text && v->label;
}

static void bars_free(struct bars *v)
{
	free(v->b);
	free(v->text);
	free(v->label);
}

/* A bar whose text is a time and its share of whole. */
static void bar_time(struct bars *v, const char *label, uint64_t ns,
		     uint64_t whole)
{
	char t[32], p[16];

	snprintf(v->text[v->n], sizeof(v->text[0]), "%s (%s)",
		 dt_fmt_ns(ns, t, sizeof(t)),
		 dt_fmt_pct(dt_pct_of((double)ns, (double)whole), p,
			    sizeof(p)));
	v->b[v->n] = (struct dt_svg_bar){ .label = label,
					  .text = v->text[v->n],
					  .value = (double)ns };
	v->n++;
}

static int by_value(const void *a, const void *b)
{
	const struct dt_svg_bar *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return strcmp(x->label, y->label);
}

static void figure(FILE *out, const char *caption, const char *title,
		   const char *desc, const struct bars *v)
{
	fputs("<figure>\n", out);
	dt_svg_bars(out, title, desc, v->b, v->n);
	fputs("<figcaption>", out);
	dt_html_escape(out, caption);
	fputs("</figcaption>\n</figure>\n", out);
}

void dt_html_time_bars(FILE *out, const struct dt_summary *s)
{
	struct bars v;

	if (!s->gpu_ns)
		return;
	if (!bars_init(&v, DT_KIND_COUNT + DT_LIB_COUNT + DT_OPF_COUNT + 2)) {
		bars_free(&v);
		return;
	}
	fputs("<div class=\"pics\">\n", out);
	for (int k = 0; k < DT_KIND_COUNT; k++)
		if (s->kind_count[k])
			bar_time(&v, dt_op_kind_name(k), s->kind_ns[k],
				 s->gpu_ns);
	qsort(v.b, v.n, sizeof(*v.b), by_value);
	if (v.n)
		figure(out,
		       "cuDNN's GPU time by kind of operation, with its share "
		       "of all GPU time: the table above, drawn",
		       "cuDNN GPU time by kind of operation",
		       "A horizontal bar per kind of cuDNN operation, as long "
		       "as its GPU time, which is written beside it.",
		       &v);
	/* all GPU time by library, then by family: one bar per row or
	 * column of the summary's library x family table */
	static const struct {
		bool by_lib;
		const char *caption, *title, *desc;
	} sums[] = {
		{ true, "All GPU time by the library that launched it, with its "
			"share",
		  "GPU time by library",
		  "A horizontal bar per library (cuDNN, cuBLAS, ggml, ...) or "
		  "copies, as long as its GPU time, which is written beside "
		  "it." },
		{ false, "All GPU time by operation family, any library, with "
			 "its share",
		  "GPU time by operation family",
		  "A horizontal bar per operation family (matrix "
		  "multiplication, attention, normalization, ...), as long as "
		  "its GPU time, which is written beside it." },
	};
	for (size_t i = 0; i < sizeof(sums) / sizeof(*sums); i++) {
		int n_keys = sums[i].by_lib ? DT_LIB_COUNT : DT_OPF_COUNT;
		v.n = 0;
		for (int k = 0; k < n_keys; k++) {
			uint64_t n, ns = sums[i].by_lib
						 ? dt_sum_lib_ns(s, k, -1, &n)
						 : dt_sum_lib_ns(s, -1, k, &n);
			if (n)
				bar_time(&v,
					 sums[i].by_lib ? dt_lib_name(k)
							: dt_opfam_name(k),
					 ns, s->gpu_ns);
		}
		qsort(v.b, v.n, sizeof(*v.b), by_value);
		figure(out, sums[i].caption, sums[i].title, sums[i].desc, &v);
	}
	fputs("</div>\n", out);
	bars_free(&v);
}

/* ------------------------------------------------------------ timeline */

#define TL_W     720
#define TL_LEFT  96  /* the strips start here */
#define TL_STRIP 540 /* and are this wide */
#define TL_ROW   34
#define TL_H     24 /* a strip's height: a full bin */

/* The longest stretch of bins without activity, in bins. */
static uint32_t longest_idle(const struct dt_busy_hist *h)
{
	uint32_t run = 0, best = 0;

	for (uint32_t i = 0; i < h->n_bins; i++) {
		run = h->bins[i] ? 0 : run + 1;
		if (run > best)
			best = run;
	}
	return best;
}

static void timeline_table(FILE *out, const struct dt_summary *s)
{
	static const char *const hdr[] = { "trace",      "GPU busy",
					   "of",         "busy share",
					   "bins",       "bin width",
					   "longest idle", NULL };
	struct dt_table *t = dt_table_new(hdr, "lrrrrrr");
	char b[3][32], r[24];

	if (!t)
		return;
	for (size_t i = 0; i < s->n_files; i++) {
		const struct dt_busy_hist *h = &s->files[i].busy;
		if (!h->width_ns)
			continue;
		dt_table_cell(t, "%s%s", s->n_files > 1 ? "rank " : "",
			      s->n_files > 1 ? dt_rank_label(&s->files[i], r,
							     sizeof(r))
					     : s->files[i].path);
		dt_table_cell(t, "%s", dt_fmt_ns(h->busy_ns, b[0], sizeof(b[0])));
		dt_table_cell(t, "%s", dt_fmt_ns(h->span_ns, b[1], sizeof(b[1])));
		dt_table_cell(t, "%s",
			      dt_fmt_pct(dt_pct_of((double)h->busy_ns,
						   (double)h->span_ns),
					 b[2], sizeof(b[2])));
		dt_table_cell(t, "%" PRIu32, h->n_bins);
		dt_table_cell(t, "%s", dt_fmt_ns(h->width_ns, b[0], sizeof(b[0])));
		dt_table_cell(t, "%s",
			      dt_fmt_ns(longest_idle(h) * h->width_ns, b[1],
					sizeof(b[1])));
	}
	dt_table_print(t, out, DT_HTML, false);
	dt_table_free(t);
}

static void timeline_strip(FILE *out, const struct dt_busy_hist *h,
			   double y, double scale)
{
	double cap = (double)h->width_ns * (h->devices ? h->devices : 1);

	fprintf(out,
		"<rect class=\"axis\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
		"height=\"%d\"/>\n",
		TL_LEFT, y, (double)h->n_bins * (double)h->width_ns * scale,
		TL_H);
	for (uint32_t i = 0; i < h->n_bins; i++) {
		double f = (double)h->bins[i] / cap;
		if (f <= 0)
			continue;
		if (f > 1)
			f = 1;
		/* any activity at all leaves a mark */
		if (f < 0.08)
			f = 0.08;
		fprintf(out,
			"<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" "
			"width=\"%.2f\" height=\"%.2f\"/>\n",
			TL_LEFT + (double)i * (double)h->width_ns * scale,
			y + TL_H * (1 - f), (double)h->width_ns * scale,
			TL_H * f);
	}
}

void dt_html_timeline(FILE *out, const struct dt_summary *s)
{
	uint64_t end = 0;
	size_t rows = 0;
	char b[32], r[24];

	for (size_t i = 0; i < s->n_files; i++) {
		const struct dt_busy_hist *h = &s->files[i].busy;
		if (!h->width_ns)
			continue;
		rows++;
		if (h->n_bins * h->width_ns > end)
			end = h->n_bins * h->width_ns;
	}
	if (!rows || !end)
		return;
	double scale = TL_STRIP / (double)end;
	int height = (int)rows * TL_ROW + 34;
	fputs("<figure>\n", out);
	dt_svg_open(out, TL_W, height, "GPU busy over the run",
		    "For each trace, a strip from its first GPU activity to "
		    "its last: the height of the filled part is the share "
		    "of each slice of time the GPU was busy, with a thin mark "
		    "at least where it was busy at all; empty stretches are "
		    "idle. The busy share is written at the right.");
	double y = 6;
	for (size_t i = 0; i < s->n_files; i++) {
		const struct dt_sum_file *f = &s->files[i];
		if (!f->busy.width_ns)
			continue;
		if (s->n_files > 1)
			dt_svg_text(out, TL_LEFT - 8, y + 17, "end", NULL,
				    "rank %s",
				    dt_rank_label(f, r, sizeof(r)));
		else
			dt_svg_text(out, TL_LEFT - 8, y + 17, "end", NULL,
				    "GPU");
		timeline_strip(out, &f->busy, y, scale);
		dt_svg_text(out, TL_LEFT + TL_STRIP + 8, y + 17, "start",
			    NULL, "%s busy",
			    dt_fmt_pct(dt_pct_of((double)f->busy.busy_ns,
						 (double)f->busy.span_ns),
				       b, sizeof(b)));
		y += TL_ROW;
	}
	/* a time axis, from each trace's first activity */
	fprintf(out,
		"<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
		"y2=\"%.1f\"/>\n",
		TL_LEFT, y, TL_LEFT + TL_STRIP, y);
	for (int k = 0; k <= 4; k++) {
		double x = TL_LEFT + TL_STRIP * k / 4.0;
		fprintf(out,
			"<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" "
			"x2=\"%.1f\" y2=\"%.1f\"/>\n",
			x, y, x, y + 4);
		dt_svg_text(out, x, y + 16, k ? "middle" : "start", "mute",
			    "%s", k ? dt_fmt_ns(end * (uint64_t)k / 4, b, sizeof(b))
				    : "0");
	}
	dt_svg_close(out);
	fputs("<figcaption>GPU busy over time since each trace's first GPU "
	      "activity; the same in numbers:</figcaption>\n</figure>\n",
	      out);
	timeline_table(out, s);
}

/* ------------------------------------------------------------ DRAM */

#define BW_H 150 /* the plot's height */

void dt_html_dram(FILE *out, const struct dt_summary *s)
{
	const struct dt_sum_dram *d = &s->dram;
	double peak = dt_sum_peak_bandwidth(s);
	int used = 0;
	char b[32];

	for (int i = 0; i < DT_DRAM_BINS; i++)
		if (d->bins[i] > 0)
			used = i + 1;
	if (!used || !d->bin_ns)
		return;
	/* GB/s per bin; the scale's top is the peak, or the busiest bin */
	double top = peak > 0 ? peak / 1e9 : 0, max = 0;
	for (int i = 0; i < used; i++) {
		double gbs = (double)d->bins[i] / (double)d->bin_ns;
		if (gbs > max)
			max = gbs;
	}
	if (max > top)
		top = max;
	/* work far below the peak would show no bars under it: the scale is
	 * the busiest slice's then, and the peak is said in words */
	bool off_scale = max > 0 && top > 4 * max;
	if (off_scale)
		top = max * 1.15;
	if (top <= 0)
		return;
	double w = (double)TL_STRIP / used, y0 = 18, y1 = y0 + BW_H;
	fputs("<figure>\n", out);
	dt_svg_open(out, TL_W, BW_H + 50, "DRAM bandwidth over the run",
		    "Bytes read and written per second, as the GPU's DRAM "
		    "counters measured them, in equal slices of time from "
		    "the first sample (bars), against the device's peak "
		    "bandwidth (the line at the top, when known). The same "
		    "in numbers is in the table below the picture.");
	if (peak > 0 && !off_scale) {
		double y = y1 - BW_H * (peak / 1e9) / top;
		fprintf(out,
			"<line class=\"roof\" x1=\"%d\" y1=\"%.1f\" "
			"x2=\"%d\" y2=\"%.1f\"/>\n",
			TL_LEFT, y, TL_LEFT + TL_STRIP, y);
		dt_svg_text(out, TL_LEFT + TL_STRIP, y - 4, "end", NULL,
			    "peak %.0f GB/s", peak / 1e9);
	} else if (peak > 0) {
		dt_svg_text(out, TL_LEFT + TL_STRIP, y0 + 4, "end", NULL,
			    "the peak, %.0f GB/s, is %.0f times the busiest "
			    "slice: off this scale",
			    peak / 1e9, peak / 1e9 / max);
	}
	for (int i = 0; i < used; i++) {
		double gbs = (double)d->bins[i] / (double)d->bin_ns;
		double h = BW_H * gbs / top;
		fprintf(out,
			"<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" "
			"width=\"%.1f\" height=\"%.1f\"><title>%.1f GB/s"
			"</title></rect>\n",
			TL_LEFT + i * w, y1 - h, w > 2 ? w - 1 : w, h, gbs);
	}
	for (int k = 0; k <= 2; k++) {
		double y = y1 - BW_H * k / 2.0;
		dt_svg_text(out, TL_LEFT - 8, y + 4, "end", "mute", "%.0f GB/s",
			    top * k / 2);
	}
	fprintf(out,
		"<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
		"y2=\"%.1f\"/>\n",
		TL_LEFT, y1, TL_LEFT + TL_STRIP, y1);
	dt_svg_text(out, TL_LEFT, y1 + 16, "start", "mute", "0");
	dt_svg_text(out, TL_LEFT + TL_STRIP, y1 + 16, "end", "mute", "%s",
		    dt_fmt_ns((uint64_t)used * d->bin_ns, b, sizeof(b)));
	dt_svg_close(out);
	fputs("<figcaption>DRAM bytes read and written per second over the "
	      "run, measured (record --gpu-metrics)</figcaption>\n"
	      "</figure>\n",
	      out);
}

/* ---------------------------------------------------------------- ranks */

void dt_html_ranks(FILE *out, const struct dt_summary *s)
{
	struct bars v;

	if (s->n_files < 2 || !bars_init(&v, s->n_files)) {
		if (s->n_files >= 2)
			bars_free(&v);
		return;
	}
	fputs("<div class=\"pics\">\n", out);
	for (size_t i = 0; i < s->n_files; i++) {
		char r[24];
		snprintf(v.label[i], sizeof(v.label[0]), "rank %s",
			 dt_rank_label(&s->files[i], r, sizeof(r)));
		v.b[i].label = v.label[i];
		v.b[i].text = v.text[i];
	}
	v.n = s->n_files;
	for (size_t i = 0; i < v.n; i++) {
		v.b[i].value = (double)s->files[i].gpu_ns;
		dt_fmt_ns(s->files[i].gpu_ns, v.text[i], sizeof(v.text[0]));
	}
	figure(out, "GPU time per rank: kernels, copies and sets, summed",
	       "GPU time per rank",
	       "A bar per rank, as long as its GPU time, written beside it.",
	       &v);
	for (size_t i = 0; i < v.n; i++) {
		const struct dt_busy_hist *h = &s->files[i].busy;
		double p = dt_pct_of((double)h->busy_ns, (double)h->span_ns);
		v.b[i].value = p > 0 ? p : 0;
		dt_fmt_pct(p, v.text[i], sizeof(v.text[0]));
	}
	figure(out,
	       "GPU busy per rank, as a share of its first to last activity",
	       "GPU busy share per rank",
	       "A bar per rank, as long as the share of time its GPU was "
	       "busy, written beside it.",
	       &v);
	for (size_t i = 0; i < v.n; i++) {
		v.b[i].value = (double)s->files[i].calls;
		snprintf(v.text[i], sizeof(v.text[0]), "%" PRIu64,
			 s->files[i].calls);
	}
	figure(out, "cuDNN calls per rank", "cuDNN calls per rank",
	       "A bar per rank, as long as its number of cuDNN calls, "
	       "written beside it.",
	       &v);
	fputs("</div>\n", out);
	bars_free(&v);
}

/* --------------------------------------------------------------- chains */

#define CH_BOX  172
#define CH_BH   58
#define CH_GAP  34
#define CH_ROW  3 /* boxes in a row, so that a narrow page keeps them legible */
#define CH_VGAP 30

static void arrow_head(FILE *out, double x, double y, int dir)
{
	/* dir 0: pointing right, 1: pointing down */
	if (dir == 0)
		fprintf(out,
			"<polygon class=\"tip\" points=\"%.1f,%.1f %.1f,%.1f "
			"%.1f,%.1f\"/>\n",
			x, y, x - 7, y - 4, x - 7, y + 4);
	else
		fprintf(out,
			"<polygon class=\"tip\" points=\"%.1f,%.1f %.1f,%.1f "
			"%.1f,%.1f\"/>\n",
			x, y, x - 4, y - 7, x + 4, y - 7);
}

static void chain_box(FILE *out, const struct dt_fz_step *st, double x,
		      double y)
{
	char b[32];

	fprintf(out,
		"<rect class=\"box%s\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" "
		"height=\"%d\" rx=\"4\"/>\n",
		st->removed ? " gone" : "", x, y, CH_BOX, CH_BH);
	if (strlen(st->what) > 26)
		dt_svg_text(out, x + CH_BOX / 2.0, y + 18, "middle", NULL,
			    "%.23s...", st->what);
	else
		dt_svg_text(out, x + CH_BOX / 2.0, y + 18, "middle", NULL, "%s",
			    st->what);
	dt_svg_text(out, x + CH_BOX / 2.0, y + 34, "middle", "mute",
		    "%s, %" PRIu64 " kernel%s",
		    st->library ? st->library : "other",
		    st->kernels, st->kernels == 1 ? "" : "s");
	dt_svg_text(out, x + CH_BOX / 2.0, y + 50, "middle", "mute", "%s, %s",
		    dt_fmt_ns(st->ns, b, sizeof(b)),
		    st->removed ? "removed if fused" : "kept");
}

static void chain_svg(FILE *out, const struct dt_fz_opp *o, size_t k)
{
	int rows = (o->n_steps + CH_ROW - 1) / CH_ROW;
	int cols = o->n_steps < CH_ROW ? o->n_steps : CH_ROW;
	int w = cols * CH_BOX + (cols - 1) * CH_GAP + 8;
	int h = rows * CH_BH + (rows - 1) * CH_VGAP + 8;
	char title[160], desc[700];
	size_t len = 0;

	snprintf(title, sizeof(title), "Chain %zu: %s, %s", k, o->pattern,
		 o->status == DT_FZ_FUSABLE ? "fusable" : "blocked");
	desc[0] = 0;
	for (int m = 0; m < o->n_steps && len < sizeof(desc); m++) {
		int c = snprintf(desc + len, sizeof(desc) - len, "%s%s%s",
				 m ? ", then " : "", o->steps[m].what,
				 o->steps[m].removed ? " (removed if fused)"
						     : "");
		len += c > 0 ? (size_t)c : 0;
	}
	dt_svg_open(out, w, h, title, desc);
	for (int m = 0; m < o->n_steps; m++) {
		double x = 4 + (m % CH_ROW) * (CH_BOX + CH_GAP);
		double y = 4 + (m / CH_ROW) * (CH_BH + CH_VGAP);
		chain_box(out, &o->steps[m], x, y);
		if (m + 1 == o->n_steps)
			break;
		if ((m + 1) % CH_ROW) {
			fprintf(out,
				"<line class=\"arrow\" x1=\"%.1f\" y1=\"%.1f\" "
				"x2=\"%.1f\" y2=\"%.1f\"/>\n",
				x + CH_BOX, y + CH_BH / 2.0, x + CH_BOX + CH_GAP - 2,
				y + CH_BH / 2.0);
			arrow_head(out, x + CH_BOX + CH_GAP - 1, y + CH_BH / 2.0,
				   0);
		} else {
			/* down to the next row's first box */
			double xs = x + CH_BOX / 2.0, ys = y + CH_BH;
			double xe = 4 + CH_BOX / 2.0, ye = ys + CH_VGAP;
			fprintf(out,
				"<polyline class=\"arrow\" points=\"%.1f,%.1f "
				"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
				xs, ys, xs, ys + CH_VGAP / 2.0, xe,
				ys + CH_VGAP / 2.0, xe, ye - 2);
			arrow_head(out, xe, ye - 1, 1);
		}
	}
	dt_svg_close(out);
}

void dt_html_chains(FILE *out, const struct dt_summary *s, long top)
{
	const struct dt_fusion *fz = s->fusion;
	char b[32];

	if (!fz)
		return;
	for (size_t i = 0; i < fz->n_opps && (top <= 0 || (long)i < top);
	     i++) {
		const struct dt_fz_opp *o = &fz->opps[i];
		if (!o->n_steps)
			continue;
		fputs("<figure>\n", out);
		chain_svg(out, o, i + 1);
		fputs("<figcaption>", out);
		fprintf(out, "Chain %zu, %s: ", i + 1,
			o->status == DT_FZ_FUSABLE ? "fusable" : "blocked");
		dt_html_escape(out, o->pattern);
		fprintf(out, "; %" PRIu64 " times; saving %s", o->count,
			dt_fmt_ns(o->saving_ns > 0 ? (uint64_t)o->saving_ns : 0,
				  b, sizeof(b)));
		if (o->blocked) {
			fputs("; blocked: ", out);
			dt_html_escape(out, o->blocked);
		}
		fputs(". Dashed boxes are removed when the chain runs "
		      "fused.</figcaption>\n</figure>\n",
		      out);
	}
}
