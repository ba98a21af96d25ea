/*
 * report-roofline.c - the roofline picture of `dnntrace report --format
 * html`: each problem as a marker at its FLOP per byte and achieved
 * FLOP/s on log scales, sized by its GPU time and shaped by its math,
 * under the roofs of the device's bandwidth and compute peaks; with the
 * table of the same points, and the problems left out for want of FLOPs
 * or bytes.
 *
 * It draws the summary's numbers; it works out none but the plot's
 * scales. The report's other pictures are report-html.c's.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "tools.h"

#define RF_W  720
#define RF_H  440
#define RF_L  78 /* plot area: left, top, width, height */
#define RF_T  24
#define RF_PW 600
#define RF_PH 340

/* A marker per math, so that roofs and points pair up without colour. */
static void marker(FILE *out, enum dt_math m, double x, double y, double r)
{
	switch (m % 4) {
	case 0:
		fprintf(out,
			"<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" "
			"r=\"%.1f\"/>",
			x, y, r);
		break;
	case 1:
		fprintf(out,
			"<rect class=\"pt\" x=\"%.1f\" y=\"%.1f\" "
			"width=\"%.1f\" height=\"%.1f\"/>",
			x - r, y - r, 2 * r, 2 * r);
		break;
	case 2:
		fprintf(out,
			"<polygon class=\"pt\" points=\"%.1f,%.1f %.1f,%.1f "
			"%.1f,%.1f\"/>",
			x, y - 1.2 * r, x + 1.1 * r, y + 0.8 * r, x - 1.1 * r,
			y + 0.8 * r);
		break;
	default:
		fprintf(out,
			"<polygon class=\"pt\" points=\"%.1f,%.1f %.1f,%.1f "
			"%.1f,%.1f %.1f,%.1f\"/>",
			x, y - 1.3 * r, x + 1.3 * r, y, x, y + 1.3 * r,
			x - 1.3 * r, y);
	}
}

static const char *marker_name(enum dt_math m)
{
	static const char *const names[] = { "circle", "square", "triangle",
					     "diamond" };
	return names[m % 4];
}

struct plot {
	double lx0, lx1, ly0, ly1; /* log10 of the axes' ends */
};

static double px(const struct plot *p, double x)
{
	return RF_L + (log10(x) - p->lx0) / (p->lx1 - p->lx0) * RF_PW;
}

static double py(const struct plot *p, double y)
{
	return RF_T + RF_PH - (log10(y) - p->ly0) / (p->ly1 - p->ly0) * RF_PH;
}

static void roof_axes(FILE *out, const struct plot *p)
{
	char b[32];

	for (int e = (int)p->lx0; e <= (int)p->lx1; e++) {
		double x = px(p, pow(10, e));
		fprintf(out,
			"<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" "
			"x2=\"%.1f\" y2=\"%d\"/>\n",
			x, RF_T, x, RF_T + RF_PH);
		dt_svg_text(out, x, RF_T + RF_PH + 16, "middle", "mute", "%g",
			    pow(10, e));
	}
	for (int e = (int)p->ly0; e <= (int)p->ly1; e++) {
		double y = py(p, pow(10, e));
		fprintf(out,
			"<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
			"y2=\"%.1f\"/>\n",
			RF_L, y, RF_L + RF_PW, y);
		dt_svg_text(out, RF_L - 6, y + 4, "end", "mute", "%s",
			    dt_fmt_si(pow(10, e), b, sizeof(b)));
	}
	fprintf(out,
		"<rect class=\"axis\" x=\"%d\" y=\"%d\" width=\"%d\" "
		"height=\"%d\"/>\n",
		RF_L, RF_T, RF_PW, RF_PH);
	dt_svg_text(out, RF_L + RF_PW / 2.0, RF_T + RF_PH + 36, "middle",
		    NULL, "arithmetic intensity, FLOP per byte (log scale)");
	fprintf(out,
		"<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 16 %.1f)\">achieved FLOP/s (log "
		"scale)</text>\n",
		RF_T + RF_PH / 2.0, RF_T + RF_PH / 2.0);
}

/* The bandwidth roof up to the highest compute roof, and a compute roof
 * per math plotted, each labelled. */
static void roofs(FILE *out, const struct plot *p, const struct dt_peaks *pk,
		  const bool *maths)
{
	static const char *const dash[] = { "", "8 4", "3 3", "10 3 2 3" };
	double top = 0;
	char b[32];

	for (int m = 1; m < DT_MATH_COUNT; m++)
		if (maths[m] && pk->flops[m] > top)
			top = pk->flops[m];
	for (int m = 1; m < DT_MATH_COUNT; m++) {
		if (!maths[m] || !(pk->flops[m] > 0))
			continue;
		double x0 = pk->bandwidth > 0 ? pk->flops[m] / pk->bandwidth
					      : pow(10, p->lx0);
		if (x0 < pow(10, p->lx0))
			x0 = pow(10, p->lx0);
		double y = py(p, pk->flops[m]);
		fprintf(out,
			"<line class=\"roof\" x1=\"%.1f\" y1=\"%.1f\" "
			"x2=\"%d\" y2=\"%.1f\" stroke-dasharray=\"%s\"/>\n",
			px(p, x0), y, RF_L + RF_PW, y, dash[m % 4]);
		dt_svg_text(out, RF_L + RF_PW - 4, y - 4, "end", NULL,
			    "%s roof %sFLOP/s (%s)", dt_math_name(m),
			    dt_fmt_si(pk->flops[m], b, sizeof(b)),
			    marker_name(m));
	}
	if (!(pk->bandwidth > 0) || !(top > 0))
		return;
	double x0 = pow(10, p->lx0), y0 = pk->bandwidth * x0;
	if (y0 < pow(10, p->ly0)) {
		y0 = pow(10, p->ly0);
		x0 = y0 / pk->bandwidth;
	}
	double x1 = top / pk->bandwidth;
	if (x1 > pow(10, p->lx1))
		x1 = pow(10, p->lx1);
	if (x1 <= x0)
		return;
	fprintf(out,
		"<line class=\"roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		"y2=\"%.1f\"/>\n",
		px(p, x0), py(p, y0), px(p, x1), py(p, pk->bandwidth * x1));
	dt_svg_text(out, px(p, x0) + 6, py(p, y0) - 8, "start", NULL,
		    "memory roof %sB/s", dt_fmt_si(pk->bandwidth, b, sizeof(b)));
}

static bool plottable(const struct dt_rates *r)
{
	return r->intensity > 0 && r->flops_per_s > 0;
}

/* The axes' ends: whole decades around the points and the roofs' ridge. */
static void plot_range(struct plot *p, const struct dt_summary *s,
		       const uint32_t *sel, size_t n, const struct dt_peaks *pk,
		       const bool *maths)
{
	double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = 0;

	for (size_t i = 0; i < n; i++) {
		struct dt_rates r;
		dt_problem_rates(s, &s->problems[sel[i]], &r);
		x0 = fmin(x0, r.intensity);
		x1 = fmax(x1, r.intensity);
		y0 = fmin(y0, r.flops_per_s);
		y1 = fmax(y1, r.flops_per_s);
	}
	for (int m = 1; m < DT_MATH_COUNT; m++) {
		if (!maths[m] || !(pk->flops[m] > 0))
			continue;
		y1 = fmax(y1, pk->flops[m]);
		if (pk->bandwidth > 0) {
			x0 = fmin(x0, pk->flops[m] / pk->bandwidth);
			x1 = fmax(x1, pk->flops[m] / pk->bandwidth);
		}
	}
	p->lx0 = floor(log10(x0));
	p->lx1 = ceil(log10(x1));
	p->ly0 = floor(log10(y0));
	p->ly1 = ceil(log10(y1));
	if (p->lx1 - p->lx0 < 2)
		p->lx1 = p->lx0 + 2;
	if (p->ly1 - p->ly0 < 2)
		p->ly0 = p->ly1 - 2;
}

static void roof_points(FILE *out, const struct plot *p,
			const struct dt_summary *s, const uint32_t *sel,
			size_t n)
{
	uint64_t max = 0;
	char b[3][32];

	for (size_t i = 0; i < n; i++)
		if (s->problems[sel[i]].gpu_ns > max)
			max = s->problems[sel[i]].gpu_ns;
	/* the largest last, so that the small stay visible beneath */
	for (size_t k = n; k-- > 0;) {
		const struct dt_sum_problem *q = &s->problems[sel[k]];
		struct dt_rates r;
		dt_problem_rates(s, q, &r);
		double x = px(p, r.intensity), y = py(p, r.flops_per_s);
		double rad = 3 + 9 * sqrt((double)q->gpu_ns / (double)max);
		fputs("<g><title>", out);
		fprintf(out, "%zu: ", k + 1);
		dt_html_escape(out, dt_op_kind_key(q->kind));
		fprintf(out, " %s, %.3g FLOP/B, %sFLOP/s, %s GPU time",
			dt_math_name(q->math), r.intensity,
			dt_fmt_si(r.flops_per_s, b[0], sizeof(b[0])),
			dt_fmt_ns(q->gpu_ns, b[1], sizeof(b[1])));
		fputs("</title>", out);
		marker(out, q->math, x, y, rad);
		fputs("</g>\n", out);
		dt_svg_text(out, x + rad + 2, y - rad / 2, "start", NULL,
			    "%zu", k + 1);
	}
}

/* The points in numbers: the picture's table. */
static void roof_table(FILE *out, const struct dt_summary *s,
		       const uint32_t *sel, size_t n)
{
	static const char *const hdr[] = { "#",      "FLOP/B", "FLOP/s",
					   "%peak",  "%roof",  "bound",
					   "GPU time", "operation", NULL };
	struct dt_table *t = dt_table_new(hdr, "rrrrrlrl");
	char b[3][32];

	if (!t)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct dt_sum_problem *q = &s->problems[sel[i]];
		struct dt_rates r;
		dt_problem_rates(s, q, &r);
		dt_table_cell(t, "%zu", i + 1);
		dt_table_cell(t, "%.3g", r.intensity);
		dt_table_cell(t, "%s", dt_fmt_si(r.flops_per_s, b[0],
						 sizeof(b[0])));
		dt_table_cell(t, "%s", dt_fmt_pct(r.pct_flops, b[1],
						  sizeof(b[1])));
		dt_table_cell(t, "%s", dt_fmt_pct(r.roof_pct, b[2],
						  sizeof(b[2])));
		dt_table_cell(t, "%s",
			      r.bound == 1   ? "compute"
			      : r.bound == 0 ? "memory"
					     : "-");
		dt_table_cell(t, "%s", dt_fmt_ns(q->gpu_ns, b[0], sizeof(b[0])));
		dt_table_cell(t, "%s %s %.100s%s", dt_op_kind_key(q->kind),
			      dt_math_name(q->math), q->brief,
			      strlen(q->brief) > 100 ? "..." : "");
	}
	dt_table_print(t, out, DT_HTML, false);
	dt_table_free(t);
}

/* The problems without a point, and how much GPU time they hold. */
static void roof_missing(FILE *out, const struct dt_summary *s,
			 const uint32_t *ix, size_t n, size_t plotted,
			 long top)
{
	static const char *const hdr[] = { "count", "GPU time", "operation",
					   NULL };
	struct dt_table *t;
	uint64_t ns = 0;
	size_t missing = 0, shown = 0;
	char b[32];

	for (size_t i = 0; i < n; i++) {
		struct dt_rates r;
		dt_problem_rates(s, &s->problems[ix[i]], &r);
		if (!plottable(&r)) {
			missing++;
			ns += s->problems[ix[i]].gpu_ns;
		}
	}
	dt_para(out, DT_HTML, NULL,
		"%zu of %zu problems plotted; %zu not plotted (%s of GPU "
		"time): no FLOP or byte count for them, or no timed "
		"kernel.",
		plotted, n, missing, dt_fmt_ns(ns, b, sizeof(b)));
	if (!missing || !(t = dt_table_new(hdr, "rrl")))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct dt_sum_problem *q = &s->problems[ix[i]];
		struct dt_rates r;
		dt_problem_rates(s, q, &r);
		if (plottable(&r) || (top > 0 && shown >= (size_t)top))
			continue;
		dt_table_cell(t, "%" PRIu64, q->count);
		dt_table_cell(t, "%s", dt_fmt_ns(q->gpu_ns, b, sizeof(b)));
		dt_table_cell(t, "%s %.100s%s", dt_op_kind_key(q->kind),
			      q->brief, strlen(q->brief) > 100 ? "..." : "");
		shown++;
	}
	dt_table_print(t, out, DT_HTML, false);
	if (shown < missing)
		dt_para(out, DT_HTML, NULL,
			"(%zu more not plotted; --top 0 lists all)",
			missing - shown);
	dt_table_free(t);
}

void dt_html_roofline(FILE *out, const struct dt_summary *s,
		      const uint32_t *ix, size_t n, long top)
{
	const struct dt_peaks *pk = dt_summary_peaks(s, -1);
	uint32_t *sel = malloc((n + 1) * sizeof(*sel));
	bool maths[DT_MATH_COUNT] = { false };
	size_t plotted = 0, shown = 0;

	if (!sel || !n) {
		free(sel);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct dt_rates r;
		dt_problem_rates(s, &s->problems[ix[i]], &r);
		if (!plottable(&r))
			continue;
		plotted++;
		if (top > 0 && shown >= (size_t)top)
			continue;
		sel[shown++] = ix[i];
		maths[s->problems[ix[i]].math] = true;
	}
	dt_heading(out, DT_HTML, NULL, false, "Roofline");
	if (shown) {
		struct plot p;
		plot_range(&p, s, sel, shown, pk, maths);
		fputs("<figure>\n", out);
		dt_svg_open(out, RF_W, RF_H,
			    "The problems against the roofline",
			    "Each numbered marker is a problem: achieved "
			    "FLOP/s against FLOP per byte, on log scales, "
			    "sized by GPU time; its shape says its math, as "
			    "the roof of the same shape does. The rising "
			    "line is the memory bandwidth roof, the level "
			    "lines the compute roofs. The table below lists "
			    "the same points.");
		roof_axes(out, &p);
		roofs(out, &p, pk, maths);
		roof_points(out, &p, s, sel, shown);
		dt_svg_close(out);
		fputs("<figcaption>Numbers are those of the table below; "
		      "a marker's area grows with the problem's GPU "
		      "time.</figcaption>\n</figure>\n",
		      out);
		roof_table(out, s, sel, shown);
		if (shown < plotted)
			dt_para(out, DT_HTML, NULL,
				"(%zu more problems with FLOP counts; --top 0 "
				"plots all)",
				plotted - shown);
	}
	roof_missing(out, s, ix, n, plotted, top);
	free(sel);
}
