/*
 * cmd-fusion.c - `dnntrace fusion`: the chains of a run that one cuDNN
 * graph could run fused, in detail; and the fusion section `dnntrace
 * report` prints and puts in its JSON.
 *
 * The chains come from the analyzer (dt-fusion.h, rules in
 * analyzer/FUSION.md); this file lays them out.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-util.h"
#include "dt-analyzer.h"
#include "dt-summary.h"
#include "dt-tools.h"

static double pct(double part, uint64_t whole)
{
	return whole ? 100.0 * part / (double)whole : -1;
}

/* The chain in one line: "convolution forward [32,128,56,56] BFLOAT16 ->
 * bias add -> ReLU". */
static void chain_line(const struct dt_fz_opp *o, char *buf, size_t size)
{
	int len = 0;

	for (int m = 0; m < o->n_steps; m++) {
		const struct dt_fz_step *s = &o->steps[m];
		APPEND("%s%s", m ? " -> " : "", s->what);
		if (!m && s->elems)
			APPEND(" (%" PRIu64 " x %s)", s->elems,
			       dt_dtype_name(s->dtype));
	}
}

void dt_fusion_text(FILE *out, const struct dt_summary *s, bool markdown,
		    bool color, long top)
{
	const struct dt_fusion *fz = s->fusion;
	char b1[32], b2[32], b3[32], b4[32], line[600];
	size_t fusable = 0, blocked = 0;
	double total = 0, blocked_ns = 0;

	if (!fz)
		return;
	for (size_t i = 0; i < fz->n_opps; i++) {
		if (fz->opps[i].status == DT_FZ_FUSABLE) {
			fusable++;
			total += fz->opps[i].saving_ns > 0
					 ? fz->opps[i].saving_ns
					 : 0;
		} else {
			blocked++;
			blocked_ns += fz->opps[i].removed_ns;
		}
	}
	dt_heading(out, markdown ? "##" : NULL, color,
		   "Fusion opportunities, largest saving first");
	if (!fz->n_opps && !fz->n_fused) {
		fprintf(out,
			"none: no chain of operations that one cuDNN graph "
			"could run fused was found\n");
		return;
	}
	if (fusable)
		fprintf(out,
			"%zu chain%s could run fused, saving about %s of "
			"GPU time (%s)",
			fusable, fusable == 1 ? "" : "s",
			dt_fmt_ns((uint64_t)total, b1, sizeof(b1)),
			dt_fmt_pct(pct(total, s->gpu_ns), b2, sizeof(b2)));
	else
		fprintf(out, "No chain can run fused on this GPU as it is");
	if (blocked)
		fprintf(out,
			"; %zu %sblocked by a limit (%s in the kernels "
			"fusion would remove)",
			blocked, fusable ? "more " : "",
			dt_fmt_ns((uint64_t)blocked_ns, b3, sizeof(b3)));
	fputs(".\n", out);
	fprintf(out, "Byte savings are priced at %sB/s, %s.\n",
		dt_fmt_si(fz->bandwidth, b1, sizeof(b1)), fz->bandwidth_source);
	if (fz->n_opps) {
		static const char *const hdr[] = { "saving",         "share",
						   "count",          "removed",
						   "DRAM not moved", "status",
						   "chain",          NULL };
		struct dt_table *t = dt_table_new(hdr, "rrrrrll");
		long shown = 0;
		for (size_t i = 0; i < fz->n_opps && (top <= 0 || shown < top);
		     i++, shown++) {
			const struct dt_fz_opp *o = &fz->opps[i];
			dt_table_cell(t, "%s",
				      dt_fmt_ns(o->saving_ns > 0
							? (uint64_t)o->saving_ns
							: 0,
						b1, sizeof(b1)));
			dt_table_cell(
				t, "%s",
				dt_fmt_pct(
					pct(o->saving_ns > 0 ? o->saving_ns : 0,
					    s->gpu_ns),
					b2, sizeof(b2)));
			dt_table_cell(t, "%" PRIu64, o->count);
			dt_table_cell(t, "%" PRIu64 " (%s)", o->removed_kernels,
				      dt_fmt_ns(o->removed_ns, b3, sizeof(b3)));
			dt_table_cell(t, "%sB (%s)",
				      dt_fmt_si((double)o->bytes_saved *
							(double)o->count,
						b4, sizeof(b4)),
				      dt_fmt_ns((uint64_t)o->bytes_ns, b1,
						sizeof(b1)));
			dt_table_cell(t, "%s",
				      o->status == DT_FZ_FUSABLE ? "fusable"
								 : "blocked");
			chain_line(o, line, sizeof(line));
			dt_table_cell(t, "%s", line);
		}
		dt_table_print(t, out, markdown, color);
		dt_table_free(t);
		for (size_t i = 0;
		     i < fz->n_opps && (top <= 0 || (long)i < top); i++)
			if (fz->opps[i].status == DT_FZ_BLOCKED) {
				fprintf(out, "%sblocked (%s): %s\n",
					markdown ? "- " : "  ",
					fz->opps[i].pattern,
					fz->opps[i].blocked);
				break;
			}
	}
	if (fz->n_fused) {
		uint64_t n = 0, ns = 0;
		double kept = 0;
		for (size_t i = 0; i < fz->n_fused; i++) {
			n += fz->fused[i].count;
			ns += fz->fused[i].ns;
			kept += (double)fz->fused[i].bytes_kept *
				(double)fz->fused[i].count;
		}
		fprintf(out,
			"%sAlready fused: %" PRIu64 " executions of %zu "
			"problem%s (%s GPU time) keep %sB of intermediates "
			"on chip, e.g. %s.\n",
			markdown ? "\n" : "", n, fz->n_fused,
			fz->n_fused == 1 ? "" : "s",
			dt_fmt_ns(ns, b1, sizeof(b1)),
			dt_fmt_si(kept, b2, sizeof(b2)), fz->fused[0].what);
	}
	fprintf(out,
		"%sSee `dnntrace fusion` for each chain's steps, "
		"limits and arithmetic.\n",
		markdown ? "\n" : "");
}

void dt_fusion_json(FILE *out, const struct dt_summary *s)
{
	const struct dt_fusion *fz = s->fusion;

	if (!fz) {
		fputs("null", out);
		return;
	}
	fputs("{\"bandwidth\": ", out);
	dt_json_num(out, fz->bandwidth);
	fputs(", \"bandwidth_source\": ", out);
	dt_json_str(out, fz->bandwidth_source);
	fputs(",\n  \"opportunities\": [", out);
	for (size_t i = 0; i < fz->n_opps; i++) {
		const struct dt_fz_opp *o = &fz->opps[i];
		fprintf(out, "%s\n   {\"pattern\": ", i ? "," : "");
		dt_json_str(out, o->pattern);
		fputs(", \"cover\": ", out);
		dt_json_str(out, o->cover);
		fprintf(out, ", \"status\": \"%s\", \"blocked_by\": ",
			o->status == DT_FZ_FUSABLE ? "fusable" : "blocked");
		dt_json_str(out, o->blocked);
		fputs(", \"checks\": ", out);
		dt_json_str(out, o->checks);
		fputs(", \"note\": ", out);
		dt_json_str(out, o->note);
		fprintf(out,
			", \"device\": %d, \"count\": %" PRIu64
			", \"removed_kernels\": %" PRIu64
			", \"removed_ns\": %" PRIu64
			", \"bytes_saved\": %" PRIu64
			", \"bytes_added\": %" PRIu64 ", \"saving_ns\": ",
			o->device, o->count, o->removed_kernels, o->removed_ns,
			o->bytes_saved, o->bytes_added);
		dt_json_num(out, round(o->saving_ns));
		fputs(", \"bytes_ns\": ", out);
		dt_json_num(out, round(o->bytes_ns));
		fputs(", \"steps\": [", out);
		for (int m = 0; m < o->n_steps; m++) {
			const struct dt_fz_step *st = &o->steps[m];
			fprintf(out, "%s\n     {\"what\": ", m ? "," : "");
			dt_json_str(out, st->what);
			fputs(", \"detail\": ", out);
			dt_json_str(out, st->detail);
			fprintf(out,
				", \"cudnn\": %s, \"elements\": %" PRIu64
				", \"dtype\": ",
				st->cudnn ? "true" : "false", st->elems);
			if (st->dtype >= 0)
				dt_json_str(out, dt_dtype_name(st->dtype));
			else
				fputs("null", out);
			fputs(", \"link\": ", out);
			if (m)
				dt_json_str(out, dt_fz_link_name(st->link));
			else
				fputs("null", out);
			fprintf(out,
				", \"removed\": %s, \"kernels\": %" PRIu64
				", \"gpu_ns\": %" PRIu64 ", \"kernel\": ",
				st->removed ? "true" : "false", st->kernels,
				st->ns);
			dt_json_str(out, st->kernel);
			if (st->kernel)
				fprintf(out,
					", \"grid_x\": %d, \"block_x\": %d",
					st->grid_x, st->block_x);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputs("],\n  \"already_fused\": [", out);
	for (size_t i = 0; i < fz->n_fused; i++) {
		const struct dt_fz_fused *f = &fz->fused[i];
		fprintf(out, "%s\n   {\"what\": ", i ? "," : "");
		dt_json_str(out, f->what);
		fputs(", \"brief\": ", out);
		dt_json_str(out, f->brief);
		fprintf(out,
			", \"graph_ops\": %u, \"count\": %" PRIu64
			", \"gpu_ns\": %" PRIu64 ", \"bytes_kept\": %" PRIu64
			", \"bytes_ns\": ",
			f->graph_ops, f->count, f->ns, f->bytes_kept);
		dt_json_num(out, round(f->bytes_ns));
		fputc('}', out);
	}
	fputs("]}", out);
}

/* ------------------------------------------------------------- details */

/* Print t with every line indented under its chain's heading. */
static void indented_table(FILE *out, struct dt_table *t)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);

	if (m) {
		dt_table_print(t, m, false, false);
		fclose(m);
		for (const char *p = buf; p && *p;) {
			size_t n = strcspn(p, "\n");
			fprintf(out, "   %.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
		free(buf);
	}
	dt_table_free(t);
}

static void print_detail(FILE *out, const struct dt_summary *s, bool color,
			 bool wide, long top)
{
	const struct dt_fusion *fz = s->fusion;
	char b1[32], b2[32], b3[32], b4[32], line[600];

	fprintf(out,
		"%zu trace%s, %s of GPU time; byte savings priced at "
		"%sB/s, %s.\n",
		s->n_files, s->n_files == 1 ? "" : "s",
		dt_fmt_ns(s->gpu_ns, b1, sizeof(b1)),
		dt_fmt_si(fz->bandwidth, b2, sizeof(b2)), fz->bandwidth_source);
	if (!fz->n_opps)
		fprintf(out, "\nNo chain of operations that one cuDNN graph "
			     "could run fused was found.\n");
	for (size_t i = 0; i < fz->n_opps && (top <= 0 || (long)i < top); i++) {
		const struct dt_fz_opp *o = &fz->opps[i];
		fprintf(out,
			"\n%s%zu. %s%s: saving %s (%s of GPU time), %" PRIu64
			" time%s\n",
			color ? "\033[1m" : "", i + 1, o->pattern,
			color ? "\033[0m" : "",
			dt_fmt_ns(o->saving_ns > 0 ? (uint64_t)o->saving_ns : 0,
				  b1, sizeof(b1)),
			dt_fmt_pct(pct(o->saving_ns > 0 ? o->saving_ns : 0,
				       s->gpu_ns),
				   b2, sizeof(b2)),
			o->count, o->count == 1 ? "" : "s");
		fprintf(out, "   covered by: %s\n", o->cover);
		if (o->status == DT_FZ_FUSABLE)
			fprintf(out, "   status:     fusable\n");
		else
			fprintf(out, "   status:     %sblocked%s: %s\n",
				color ? "\033[33m" : "", color ? "\033[0m" : "",
				o->blocked);
		fprintf(out, "   limits:     %s\n", o->checks);
		static const char *const hdr[] = {
			"#",        "step",    "link",  "elements", "type",
			"GPU time", "kernels", "fused", "what ran", NULL
		};
		struct dt_table *t = dt_table_new(hdr, "rlllrrrll");
		for (int m = 0; m < o->n_steps; m++) {
			const struct dt_fz_step *st = &o->steps[m];
			dt_table_cell(t, "%d", m + 1);
			dt_table_cell(t, "%s", st->what);
			dt_table_cell(t, "%s",
				      m ? dt_fz_link_name(st->link) : "");
			if (st->elems)
				dt_table_cell(t, "%" PRIu64, st->elems);
			else
				dt_table_cell(t, "?");
			dt_table_cell(t, "%s", dt_dtype_name(st->dtype));
			dt_table_cell(t, "%s",
				      dt_fmt_ns(st->ns, b1, sizeof(b1)));
			dt_table_cell(t, "%" PRIu64, st->kernels);
			dt_table_cell(t, "%s",
				      st->removed ? "removed" : "kept");
			int max = wide ? 600 : 90;
			dt_table_cell(
				t, "%.*s%s", max, st->detail ? st->detail : "",
				st->detail && (int)strlen(st->detail) > max
					? "..."
					: "");
		}
		indented_table(out, t);
		double added = fz->bandwidth > 0 ? (double)o->bytes_added *
							   (double)o->count *
							   1e9 / fz->bandwidth
						 : 0;
		if (o->bytes_added)
			fprintf(out,
				"   saving:     %" PRIu64 " kernels removed, "
				"%s of GPU time, less %s for the %sB the "
				"fused kernel moves in their place each "
				"time: %s\n",
				o->removed_kernels,
				dt_fmt_ns(o->removed_ns, b1, sizeof(b1)),
				dt_fmt_ns((uint64_t)added, b3, sizeof(b3)),
				dt_fmt_si((double)o->bytes_added, b2,
					  sizeof(b2)),
				dt_fmt_ns(o->saving_ns > 0
						  ? (uint64_t)o->saving_ns
						  : 0,
					  b4, sizeof(b4)));
		else
			fprintf(out,
				"   saving:     %" PRIu64 " kernels removed, "
				"%s of GPU time\n",
				o->removed_kernels,
				dt_fmt_ns(o->removed_ns, b1, sizeof(b1)));
		fprintf(out,
			"   DRAM:       %sB not moved per time, %sB in "
			"all: %s at %sB/s\n",
			dt_fmt_si((double)o->bytes_saved, b1, sizeof(b1)),
			dt_fmt_si((double)o->bytes_saved * (double)o->count, b2,
				  sizeof(b2)),
			dt_fmt_ns((uint64_t)o->bytes_ns, b3, sizeof(b3)),
			dt_fmt_si(fz->bandwidth, b4, sizeof(b4)));
		if (o->note)
			fprintf(out, "   note:       %s\n", o->note);
	}
	if (fz->n_fused) {
		fprintf(out, "\nAlready fused:\n");
		static const char *const hdr[] = { "count",        "GPU time",
						   "kept on chip", "what",
						   "problem",      NULL };
		struct dt_table *t = dt_table_new(hdr, "rrrll");
		for (size_t i = 0; i < fz->n_fused; i++) {
			const struct dt_fz_fused *f = &fz->fused[i];
			dt_table_cell(t, "%" PRIu64, f->count);
			dt_table_cell(t, "%s",
				      dt_fmt_ns(f->ns, b1, sizeof(b1)));
			dt_table_cell(t, "%sB (%s)",
				      dt_fmt_si((double)f->bytes_kept *
							(double)f->count,
						b2, sizeof(b2)),
				      dt_fmt_ns((uint64_t)f->bytes_ns, b3,
						sizeof(b3)));
			dt_table_cell(t, "%s", f->what);
			snprintf(line, sizeof(line), "%s",
				 f->brief ? f->brief : "");
			dt_table_cell(t, "%.*s", wide ? 600 : 80, line);
		}
		dt_table_print(t, out, false, color);
		dt_table_free(t);
	}
}

static void fusion_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace fusion [options] TRACE|FOLDER...\n"
		"\n"
		"Find the chains of GPU work that one cuDNN graph could run "
		"fused: a convolution\n"
		"or matmul and the pointwise kernels after it, a batch norm "
		"with its add and\n"
		"ReLU, a ReLU backward with the batch norm backward, cuDNN "
		"pointwise calls back\n"
		"to back. For each: its steps with shapes and how they are "
		"linked, how often it\n"
		"ran, the cuDNN pattern that covers it, the limits checked, "
		"and the saving: the\n"
		"GPU time of the kernels that would go, and the DRAM bytes no "
		"longer moved, as\n"
		"time at the run's achieved bandwidth. Rules: "
		"analyzer/FUSION.md.\n"
		"\n"
		"options:\n"
		"  --top N              show the N largest (default: all; 0 "
		"all)\n"
		"  --format F           text (default) or json (the report's "
		"schema, fusion part)\n"
		"  --bandwidth RATE     price byte savings at RATE bytes/s "
		"(like 3.3T) instead of\n"
		"                       the run's achieved streaming "
		"bandwidth\n"
		"  -o, --output FILE    write there instead of stdout\n"
		"  --wide               do not shorten what ran\n"
		"  -h, --help           this help\n");
}

int cmd_fusion(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "bandwidth", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "wide", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dt_summary_opts so = { .fusion = true };
	const char *output = NULL;
	bool json = false, wide = false;
	double bandwidth = 0;
	long top = 0;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (dt_parse_top("fusion", optarg, &top))
				return EXIT_USAGE;
			break;
		case 'f':
			if (!strcmp(optarg, "json"))
				json = true;
			else if (strcmp(optarg, "text"))
				return dt_usage_error(
					"fusion",
					"--format takes text or json");
			break;
		case 'b':
			bandwidth = dt_parse_rate(optarg);
			if (bandwidth <= 0)
				return dt_usage_error(
					"fusion",
					"--bandwidth takes bytes per second, "
					"like 3.3T or 900e9");
			break;
		case 'o':
			output = optarg;
			break;
		case 'w':
			wide = true;
			break;
		case 'h':
			return fusion_help(stdout), 0;
		default:
			return dt_usage_error("fusion", "unknown option");
		}
	}
	if (optind >= argc)
		return dt_usage_error("fusion",
				      "expected a trace file or a folder");
	so.fusion_bandwidth = bandwidth;
	int rc = 0;
	struct dt_summary *s =
		dt_load_summary(argv + optind, argc - optind, &so, &rc);
	if (!s)
		return rc;
	FILE *out = dt_open_output(output);
	if (!out) {
		dt_summary_free(s);
		return EXIT_USAGE;
	}
	if (json) {
		fprintf(out,
			"{\"schema\": \"dnntrace.report\", \"version\": "
			"%d, \"files\": [",
			DT_REPORT_SCHEMA_VERSION);
		for (size_t i = 0; i < s->n_files; i++) {
			fprintf(out, "%s{\"path\": ", i ? ", " : "");
			dt_json_str(out, s->files[i].path);
			fprintf(out, ", \"pid\": %u}", s->files[i].pid);
		}
		fprintf(out, "],\n \"gpu_ns\": %" PRIu64 ",\n \"fusion\": ",
			s->gpu_ns);
		dt_fusion_json(out, s);
		fputs("}\n", out);
	} else {
		print_detail(out, s, !output && dt_colors(true), wide, top);
	}
	if (dt_close_output(out, output))
		rc = 1;
	dt_summary_free(s);
	return rc;
}
