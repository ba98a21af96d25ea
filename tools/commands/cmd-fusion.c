/*
 * cmd-fusion.c - `dnntrace fusion`: the chains of a run that one cuDNN
 * graph could run fused, in detail. The chains come from the analyzer
 * (rules in analyzer/FUSION.md), and what a replay measured of them
 * (replay/REPLAY.md); this file lays them out. Of each trace's steady
 * state, as report's, unless --with-warmup. The short section `report`
 * prints is in print-fusion.c.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "tools.h"

/* ------------------------------------------------------------- details */

/* Print t with every line indented under its chain's heading. */
static void indented_table(FILE *out, struct dt_table *t)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);

	if (m) {
		dt_table_print(t, m, DT_TEXT, false);
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

/* A chain's heading: its pattern, saving and count, what covers it,
 * whether cuDNN can fuse it and what was checked. */
static void print_opp_head(FILE *out, const struct dt_summary *s,
			   const struct dt_fz_opp *o, size_t i, bool color)
{
	char b1[32], b2[32];

	fprintf(out,
		"\n%s%zu. %s%s: saving %s (%s of GPU time), %" PRIu64
		" time%s\n",
		color ? "\033[1m" : "", i + 1, dt_text(o->pattern),
		color ? "\033[0m" : "",
		dt_fmt_ns(o->saving_ns > 0 ? (uint64_t)o->saving_ns : 0, b1,
			  sizeof(b1)),
		dt_fmt_pct(dt_pct_of(o->saving_ns > 0 ? o->saving_ns : 0,
				     s->gpu_ns),
			   b2, sizeof(b2)),
		o->count, o->count == 1 ? "" : "s");
	fprintf(out, "   covered by: %s\n", dt_text(o->cover));
	if (o->status == DT_FZ_FUSABLE)
		fprintf(out, "   status:     fusable\n");
	else
		fprintf(out, "   status:     %sblocked%s: %s\n",
			color ? "\033[33m" : "", color ? "\033[0m" : "",
			dt_text(o->blocked));
	fprintf(out, "   limits:     %s\n", dt_text(o->checks));
}

/* A chain's steps as a table: what each is, how it links to the one
 * before, and what ran for it. */
static void print_opp_steps(FILE *out, const struct dt_fz_opp *o, bool wide)
{
	static const char *const hdr[] = { "#",        "step",  "link",
					   "elements", "type",  "GPU time",
					   "kernels",  "fused", "what ran",
					   NULL };
	struct dt_table *t = dt_table_new(hdr, "rlllrrrll");
	char b1[32], ty[DT_DTYPE_NAME_SIZE];

	for (int m = 0; m < o->n_steps; m++) {
		const struct dt_fz_step *st = &o->steps[m];
		dt_table_cell(t, "%d", m + 1);
		dt_table_cell(t, "%s", st->what);
		dt_table_cell(t, "%s", m ? dt_fz_link_name(st->link) : "");
		if (st->elems)
			dt_table_cell(t, "%" PRIu64, st->elems);
		else
			dt_table_cell(t, "?");
		dt_table_cell(t, "%s",
			      dt_dtype_name(st->dtype, ty, sizeof(ty)));
		dt_table_cell(t, "%s", dt_fmt_ns(st->ns, b1, sizeof(b1)));
		dt_table_cell(t, "%" PRIu64, st->kernels);
		dt_table_cell(t, "%s", st->removed ? "removed" : "kept");
		int max = wide ? 600 : 90;
		dt_table_cell(t, "%.*s%s", max, st->detail ? st->detail : "",
			      st->detail && (int)strlen(st->detail) > max
				      ? "..."
				      : "");
	}
	indented_table(out, t);
}

/* What fusing a chain saves: kernels and their GPU time, less the bytes
 * the fused kernel moves in their place, and the DRAM traffic. */
static void print_opp_saving(FILE *out, const struct dt_fusion *fz,
			     const struct dt_fz_opp *o)
{
	char b1[32], b2[32], b3[32], b4[32];
	double added = fz->bandwidth > 0
			       ? (double)o->bytes_added * (double)o->count *
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
			dt_fmt_si((double)o->bytes_added, b2, sizeof(b2)),
			dt_fmt_ns(o->saving_ns > 0 ? (uint64_t)o->saving_ns : 0,
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

/* What a replay measured of the chain, beside the price above: the
 * fused graph's time against its steps' unfused, per occurrence, or why
 * it was not measured. Nothing when no replay has the chain. */
static void print_opp_measured(FILE *out, const struct dt_summary *s,
			       const struct dt_fz_opp *o)
{
	const struct dt_replayed *r = NULL;
	const struct dt_replayed_fusion *f =
		dt_replayed_fusion_find(s, o->key, &r);
	char b1[32], b2[32], b3[32], b4[32];

	if (!f)
		return;
	if (!f->status || strcmp(f->status, "measured")) {
		fprintf(out, "   measured:   not measured: %s\n",
			f->reason ? f->reason : "the results give no reason");
		return;
	}
	uint64_t saving = f->saving_ns > 0 ? (uint64_t)f->saving_ns : 0;
	if (f->outputs_agree == 0) /* a time, not a saving */
		fprintf(out,
			"   measured:   no saving: the fused graph's output "
			"is not the unfused chain's (%.3g of its largest "
			"value apart), though %s %s per time",
			f->outputs_error,
			dt_fmt_ns(f->saving_ns > 0 ? saving
						   : (uint64_t)-f->saving_ns,
				  b1, sizeof(b1)),
			f->saving_ns > 0 ? "faster" : "slower");
	else if (f->saving_ns > 0)
		fprintf(out,
			"   measured:   saving %s per time (priced: %s), %s "
			"in all",
			dt_fmt_ns(saving, b1, sizeof(b1)),
			dt_fmt_ns(o->saving_ns > 0
					  ? (uint64_t)llround(o->saving_ns /
							      (double)o->count)
					  : 0,
				  b2, sizeof(b2)),
			dt_fmt_ns(saving * o->count, b3, sizeof(b3)));
	else
		fprintf(out,
			"   measured:   no saving: the fused graph is %s "
			"slower per time",
			dt_fmt_ns((uint64_t)-f->saving_ns, b1, sizeof(b1)));
	fprintf(out, ": unfused %s, fused %s, replayed on an %s\n",
		dt_fmt_ns(f->unfused_ns, b1, sizeof(b1)),
		dt_fmt_ns(f->fused_ns, b4, sizeof(b4)),
		r->gpu ? r->gpu : "unnamed GPU");
	fprintf(out, "   unfused:    ");
	for (size_t m = 0; m < f->n_steps; m++) {
		const struct dt_replayed_fstep *st = &f->steps[m];
		bool replayed = st->source && !strcmp(st->source, "replayed");
		fprintf(out, "%s%s %s (%s", m ? "; " : "",
			st->what ? st->what : "?",
			dt_fmt_ns(st->ns, b1, sizeof(b1)),
			replayed ? "its recorded engine, replayed"
				 : "in the trace");
		if (st->graph_ns) /* the head's: a GEMM's cuDNN matmul */
			fprintf(out, "; %s: %s",
				st->head ? "as a cuDNN graph"
					 : "a cuDNN pointwise graph",
				dt_fmt_ns(st->graph_ns, b2, sizeof(b2)));
		fprintf(out, ")");
	}
	fprintf(out, "\n   fused:      one cuDNN graph, engine %lld%s%s%s\n",
		(long long)f->fused.engine, f->fused.knobs ? " (" : "",
		f->fused.knobs ? f->fused.knobs : "",
		f->fused.knobs ? ")" : "");
	if (f->outputs_agree > 0)
		fprintf(out,
			"   outputs:    the fused graph's agrees with the "
			"unfused chain's (%.3g of its largest value apart)\n",
			f->outputs_error);
	if (f->legacy_call)
		fprintf(out,
			"   note:       the fused graph was built of the "
			"legacy call's descriptors; %s would run the chain "
			"too, not timed\n",
			f->legacy_call);
}

/* The chains cuDNN already ran fused, and what they kept on chip. */
static void print_fused(FILE *out, const struct dt_fusion *fz, bool color,
			bool wide)
{
	static const char *const hdr[] = { "count", "GPU time", "kept on chip",
					   "what",  "problem",  NULL };
	char b1[32], b2[32], b3[32], line[600];

	fprintf(out, "\nAlready fused:\n");
	struct dt_table *t = dt_table_new(hdr, "rrrll");
	for (size_t i = 0; i < fz->n_fused; i++) {
		const struct dt_fz_fused *f = &fz->fused[i];
		dt_table_cell(t, "%" PRIu64, f->count);
		dt_table_cell(t, "%s", dt_fmt_ns(f->ns, b1, sizeof(b1)));
		dt_table_cell(
			t, "%sB (%s)",
			dt_fmt_si((double)f->bytes_kept * (double)f->count, b2,
				  sizeof(b2)),
			dt_fmt_ns((uint64_t)f->bytes_ns, b3, sizeof(b3)));
		dt_table_cell(t, "%s", f->what);
		snprintf(line, sizeof(line), "%s", f->brief ? f->brief : "");
		dt_table_cell(t, "%.*s", wide ? 600 : 80, line);
	}
	dt_table_print(t, out, DT_TEXT, color);
	dt_table_free(t);
}

static void print_detail(FILE *out, const struct dt_summary *s, bool color,
			 bool wide, long top)
{
	const struct dt_fusion *fz = s->fusion;
	char b1[32], b2[32], up[1024];

	dt_print_unclean(out, DT_TEXT, s, "warning: ");
	if (dt_sum_startup_text(s, up, sizeof(up)))
		fprintf(out, "# start-up: %s\n", up);
	fprintf(out,
		"%zu trace%s, %s of GPU time%s; byte savings priced at "
		"%sB/s, %s.\n",
		s->n_files, s->n_files == 1 ? "" : "s",
		dt_fmt_ns(s->gpu_ns, b1, sizeof(b1)),
		s->startup.traces ? " in the steady state" : "",
		dt_fmt_si(fz->bandwidth, b2, sizeof(b2)), fz->bandwidth_source);
	if (!fz->n_opps)
		fprintf(out, "\nNo chain of operations that one cuDNN graph "
			     "could run fused was found.\n");
	for (size_t i = 0; i < fz->n_opps && (top <= 0 || (long)i < top); i++) {
		const struct dt_fz_opp *o = &fz->opps[i];
		print_opp_head(out, s, o, i, color);
		print_opp_steps(out, o, wide);
		print_opp_saving(out, fz, o);
		print_opp_measured(out, s, o);
	}
	if (fz->n_fused)
		print_fused(out, fz, color, wide);
}

/* The fusion section as `report --format json` writes it, with the
 * traces it comes from. */
static void print_json(FILE *out, const struct dt_summary *s)
{
	struct dt_json j;

	dt_json_init(&j, out);
	dt_json_open(&j, '{', -1);
	dt_json_key(&j, "schema");
	dt_json_str(&j, "dnntrace.report");
	dt_json_key(&j, "version");
	dt_json_u64(&j, DT_REPORT_SCHEMA_VERSION);
	dt_json_key(&j, "complete");
	dt_json_bool(&j, dt_summary_complete(s));
	dt_json_key(&j, "files");
	dt_json_open(&j, '[', -1);
	for (size_t i = 0; i < s->n_files; i++) {
		dt_json_open(&j, '{', -1);
		dt_json_key(&j, "path");
		dt_json_str(&j, s->files[i].path);
		dt_json_key(&j, "pid");
		dt_json_u64(&j, s->files[i].pid);
		dt_json_trace_end(&j, &s->files[i]);
		dt_json_close(&j, -1);
	}
	dt_json_close(&j, -1);
	dt_json_startup(&j, s);
	dt_json_key_nl(&j, "gpu_ns", 1);
	dt_json_u64(&j, s->gpu_ns);
	dt_json_key_nl(&j, "fusion", 1);
	dt_fusion_json(&j, s);
	dt_json_close(&j, -1);
	fputc('\n', out);
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
		"  -o, --output FILE    write there instead of stdout (\"-\")\n"
		"  --force              replace FILE when it exists\n"
		"  --wide               do not shorten what ran\n"
		"  --range NAME         only the work inside the program's "
		"NVTX ranges NAME\n"
		"                       (every one; a shell pattern: "
		"'layer*')\n"
		"  --with-warmup        the whole runs, start-up included\n"
		"  -h, --help           this help\n"
		"\n"
		"Only each trace's steady state's, as report's: the "
		"start-up before it (loading,\ncompiling, autotuning, the "
		"first steps) is left out, and said once.\n");
}

int cmd_fusion(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "bandwidth", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'O' },
		{ "wide", no_argument, NULL, 'w' },
		{ "range", required_argument, NULL, 'R' },
		{ "with-warmup", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dt_summary_opts so = { .fusion = true };
	const char *output = NULL;
	struct dt_output o;
	bool force = false;
	enum dt_format fmt = DT_TEXT;
	bool wide = false;
	double bandwidth = 0;
	long top = 0;
	int ch;

	optind = 1;
	while ((ch = dt_getopt("fusion", argc, argv, "ho:", opts)) != -1) {
		switch (ch) {
		case 't':
			if (dt_parse_top("fusion", optarg, &top))
				return EXIT_USAGE;
			break;
		case 'f':
			if (dt_parse_format("fusion", optarg, DT_FORMATS_PLAIN,
					    &fmt))
				return EXIT_USAGE;
			break;
		case 'b':
			if (dt_parse_rate_in("fusion", "--bandwidth", optarg,
					     &dt_bandwidth_range, &bandwidth))
				return EXIT_USAGE;
			break;
		case 'o':
			output = optarg;
			break;
		case 'O':
			force = true;
			break;
		case 'w':
			wide = true;
			break;
		case 'R':
			so.range = optarg;
			break;
		case 'W':
			so.whole = true;
			break;
		case 'h':
			return fusion_help(stdout), 0;
		default:
			return EXIT_USAGE;
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
	FILE *out = dt_open_output(&o, output, force);
	if (!out) {
		dt_summary_free(s);
		return EXIT_USAGE;
	}
	if (fmt == DT_JSON)
		print_json(out, s);
	else
		print_detail(out, s, !o.path && dt_colors(true), wide, top);
	if (dt_close_output(&o, true))
		rc = EXIT_USAGE;
	dt_summary_free(s);
	return rc;
}
