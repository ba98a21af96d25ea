/*
 * print-fusion.c - the fusion section of `dnntrace report`: the chains
 * one cuDNN graph could run fused, shortly, in text, Markdown, HTML and
 * the report's JSON. `dnntrace fusion` prints them in detail (cmd-fusion.c).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dt-analyzer.h"
#include "tools.h"

/* The chain in one line: "convolution forward (51380224 x BFLOAT16) ->
 * bias add -> ReLU". */
static void chain_line(const struct dt_fz_opp *o, char *buf, size_t size)
{
	char ty[DT_DTYPE_NAME_SIZE];
	size_t len = 0;

	buf[0] = 0;
	for (int m = 0; m < o->n_steps && len < size; m++) {
		const struct dt_fz_step *s = &o->steps[m];
		int k = snprintf(buf + len, size - len, "%s%s", m ? " -> " : "",
				 s->what);
		len += k > 0 ? (size_t)k : 0;
		if (!m && s->elems && len < size) {
			k = snprintf(buf + len, size - len,
				     " (%" PRIu64 " x %s)", s->elems,
				     dt_dtype_name(s->dtype, ty, sizeof(ty)));
			len += k > 0 ? (size_t)k : 0;
		}
	}
}

/* The section's first words: how many chains could run fused and what
 * that saves, how many a limit blocks, and the price of a byte. */
static void fusion_summary(FILE *out, const struct dt_summary *s,
			   enum dt_format f)
{
	const struct dt_fusion *fz = s->fusion;
	char b1[32], b2[32], b3[32], line[600];
	size_t fusable = 0, blocked = 0;
	double total = 0, blocked_ns = 0;
	int n = 0;

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
	if (fusable)
		n = snprintf(
			line, sizeof(line),
			"%zu chain%s could run fused, saving about %s of "
			"GPU time (%s)",
			fusable, fusable == 1 ? "" : "s",
			dt_fmt_ns((uint64_t)total, b1, sizeof(b1)),
			dt_fmt_pct(dt_pct_of(total, s->gpu_ns), b2,
				   sizeof(b2)));
	else
		n = snprintf(line, sizeof(line),
			     "No chain can run fused on this GPU as it is");
	if (blocked && n >= 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n,
			 "; %zu %sblocked by a limit (%s in the kernels "
			 "fusion would remove)",
			 blocked, fusable ? "more " : "",
			 dt_fmt_ns((uint64_t)blocked_ns, b3, sizeof(b3)));
	dt_para(out, f, NULL, "%s.\nByte savings are priced at %sB/s, %s.\n",
		line, dt_fmt_si(fz->bandwidth, b1, sizeof(b1)),
		fz->bandwidth_source);
}

/* The chains (the first top, 0 all) as a table, what blocks the first
 * blocked one, and in HTML their pictures. */
static void fusion_chains(FILE *out, const struct dt_summary *s,
			  enum dt_format f, bool color, long top)
{
	static const char *const hdr[] = { "saving",         "share",
					   "count",          "removed",
					   "DRAM not moved", "status",
					   "chain",          NULL };
	const struct dt_fusion *fz = s->fusion;
	struct dt_table *t = dt_table_new(hdr, "rrrrrll");
	char b1[32], b2[32], b3[32], b4[32], line[600];
	long shown = 0;

	for (size_t i = 0; i < fz->n_opps && (top <= 0 || shown < top);
	     i++, shown++) {
		const struct dt_fz_opp *o = &fz->opps[i];
		dt_table_cell(
			t, "%s",
			dt_fmt_ns(o->saving_ns > 0 ? (uint64_t)o->saving_ns : 0,
				  b1, sizeof(b1)));
		dt_table_cell(
			t, "%s",
			dt_fmt_pct(
				dt_pct_of(o->saving_ns > 0 ? o->saving_ns : 0,
					  s->gpu_ns),
				b2, sizeof(b2)));
		dt_table_cell(t, "%" PRIu64, o->count);
		dt_table_cell(t, "%" PRIu64 " (%s)", o->removed_kernels,
			      dt_fmt_ns(o->removed_ns, b3, sizeof(b3)));
		dt_table_cell(
			t, "%sB (%s)",
			dt_fmt_si((double)o->bytes_saved * (double)o->count, b4,
				  sizeof(b4)),
			dt_fmt_ns((uint64_t)o->bytes_ns, b1, sizeof(b1)));
		dt_table_cell(t, "%s",
			      o->status == DT_FZ_FUSABLE ? "fusable"
							 : "blocked");
		chain_line(o, line, sizeof(line));
		dt_table_cell(t, "%s", line);
	}
	dt_table_print(t, out, f, color);
	dt_table_free(t);
	for (size_t i = 0; i < fz->n_opps && (top <= 0 || (long)i < top); i++)
		if (fz->opps[i].status == DT_FZ_BLOCKED) {
			dt_para(out, f, NULL, "%sblocked (%s): %s\n",
				f == DT_MARKDOWN ? "- " : "  ",
				fz->opps[i].pattern, fz->opps[i].blocked);
			break;
		}
	if (f == DT_HTML)
		dt_html_chains(out, s, top);
}

/* What cuDNN already ran fused, added up. */
static void fusion_fused(FILE *out, const struct dt_summary *s,
			 enum dt_format f)
{
	const struct dt_fusion *fz = s->fusion;
	uint64_t runs = 0, ns = 0;
	double kept = 0;
	char b1[32], b2[32];

	for (size_t i = 0; i < fz->n_fused; i++) {
		runs += fz->fused[i].count;
		ns += fz->fused[i].ns;
		kept += (double)fz->fused[i].bytes_kept *
			(double)fz->fused[i].count;
	}
	dt_para(out, f, NULL,
		"%sAlready fused: %" PRIu64 " executions of %zu "
		"problem%s (%s GPU time) keep %sB of intermediates "
		"on chip, e.g. %s.\n",
		f == DT_MARKDOWN ? "\n" : "", runs, fz->n_fused,
		fz->n_fused == 1 ? "" : "s", dt_fmt_ns(ns, b1, sizeof(b1)),
		dt_fmt_si(kept, b2, sizeof(b2)), fz->fused[0].what);
}

void dt_fusion_text(FILE *out, const struct dt_summary *s, enum dt_format f,
		    bool color, long top)
{
	const struct dt_fusion *fz = s->fusion;

	if (!fz)
		return;
	dt_heading(out, f, "##", color, "%s",
		   "Fusion opportunities, largest saving first");
	if (!fz->n_opps && !fz->n_fused) {
		dt_para(out, f, NULL,
			"none: no chain of operations that one cuDNN graph "
			"could run fused was found\n");
		return;
	}
	fusion_summary(out, s, f);
	if (fz->n_opps)
		fusion_chains(out, s, f, color, top);
	if (fz->n_fused)
		fusion_fused(out, s, f);
	dt_para(out, f, NULL,
		"%sSee `dnntrace fusion` for each chain's steps, "
		"limits and arithmetic.\n",
		f == DT_MARKDOWN ? "\n" : "");
}

/* What a replay measured of the chain (replay/REPLAY.md), when one has
 * it: no key otherwise. */
static void measured_json(struct dt_json *j, const struct dt_summary *s,
			  const struct dt_fz_opp *o)
{
	const struct dt_replayed *r = NULL;
	const struct dt_replayed_fusion *f =
		dt_replayed_fusion_find(s, o->key, &r);

	if (!f)
		return;
	dt_json_key(j, "measured");
	dt_json_open(j, '{', -1);
	dt_json_ks(j, "status", f->status);
	dt_json_ks(j, "reason", f->reason);
	dt_json_ks(j, "gpu", r->gpu);
	if (f->status && !strcmp(f->status, "measured")) {
		dt_json_ki(j, "saving_ns", f->saving_ns);
		dt_json_ku(j, "unfused_ns", f->unfused_ns);
		dt_json_ku(j, "fused_ns", f->fused_ns);
		dt_json_ki(j, "fused_engine", f->fused.engine);
		dt_json_ks(j, "fused_knobs", f->fused.knobs);
		dt_json_ks(j, "head_from", f->head_from);
		dt_json_ks(j, "legacy_fused_call", f->legacy_call);
		dt_json_key(j, "outputs_agree");
		dt_json_tri(j, f->outputs_agree);
		if (f->outputs_agree >= 0)
			dt_json_kg(j, "outputs_error", f->outputs_error);
		dt_json_key(j, "steps");
		dt_json_open(j, '[', -1);
		for (size_t m = 0; m < f->n_steps; m++) {
			dt_json_open(j, '{', -1);
			dt_json_ks(j, "what", f->steps[m].what);
			dt_json_ks(j, "source", f->steps[m].source);
			dt_json_ku(j, "ns", f->steps[m].ns);
			dt_json_ku(j, "graph_ns", f->steps[m].graph_ns);
			dt_json_close(j, -1);
		}
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
}

void dt_fusion_json(struct dt_json *j, const struct dt_summary *s)
{
	const struct dt_fusion *fz = s->fusion;

	if (!fz) {
		dt_json_null(j);
		return;
	}
	dt_json_open(j, '{', -1);
	dt_json_kn(j, "bandwidth", fz->bandwidth);
	dt_json_ks(j, "bandwidth_source", fz->bandwidth_source);
	dt_json_key_nl(j, "opportunities", 2);
	dt_json_open(j, '[', 3);
	for (size_t i = 0; i < fz->n_opps; i++) {
		const struct dt_fz_opp *o = &fz->opps[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "pattern", o->pattern);
		dt_json_ks(j, "cover", o->cover);
		dt_json_key(j, "status");
		dt_json_str(j,
			    o->status == DT_FZ_FUSABLE ? "fusable" : "blocked");
		dt_json_ks(j, "blocked_by", o->blocked);
		dt_json_ks(j, "checks", o->checks);
		dt_json_ks(j, "note", o->note);
		dt_json_ki(j, "device", o->device);
		dt_json_ku(j, "count", o->count);
		dt_json_ku(j, "removed_kernels", o->removed_kernels);
		dt_json_ku(j, "removed_ns", o->removed_ns);
		dt_json_ku(j, "bytes_saved", o->bytes_saved);
		dt_json_ku(j, "bytes_added", o->bytes_added);
		dt_json_kn(j, "saving_ns", round(o->saving_ns));
		dt_json_kn(j, "bytes_ns", round(o->bytes_ns));
		measured_json(j, s, o);
		dt_json_key(j, "steps");
		dt_json_open(j, '[', 5);
		for (int m = 0; m < o->n_steps; m++) {
			const struct dt_fz_step *st = &o->steps[m];
			char ty[DT_DTYPE_NAME_SIZE];
			dt_json_open(j, '{', -1);
			dt_json_ks(j, "what", st->what);
			dt_json_ks(j, "detail", st->detail);
			dt_json_key(j, "cudnn");
			dt_json_bool(j, st->cudnn);
			dt_json_ku(j, "elements", st->elems);
			dt_json_ks(j, "dtype",
				   st->dtype >= 0 ? dt_dtype_name(st->dtype, ty,
								  sizeof(ty))
						  : NULL);
			dt_json_ks(j, "link", m ? dt_fz_link_name(st->link) : NULL);
			dt_json_key(j, "removed");
			dt_json_bool(j, st->removed);
			dt_json_ku(j, "kernels", st->kernels);
			dt_json_ku(j, "gpu_ns", st->ns);
			dt_json_ks(j, "kernel", st->kernel);
			if (st->kernel) {
				dt_json_ki(j, "grid_x", st->grid_x);
				dt_json_ki(j, "block_x", st->block_x);
			}
			dt_json_close(j, -1);
		}
		dt_json_close(j, -1);
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_key_nl(j, "already_fused", 2);
	dt_json_open(j, '[', 3);
	for (size_t i = 0; i < fz->n_fused; i++) {
		const struct dt_fz_fused *f = &fz->fused[i];
		dt_json_open(j, '{', -1);
		dt_json_ks(j, "what", f->what);
		dt_json_ks(j, "brief", f->brief);
		dt_json_ku(j, "graph_ops", f->graph_ops);
		dt_json_ku(j, "count", f->count);
		dt_json_ku(j, "gpu_ns", f->ns);
		dt_json_ku(j, "bytes_kept", f->bytes_kept);
		dt_json_kn(j, "bytes_ns", round(f->bytes_ns));
		dt_json_close(j, -1);
	}
	dt_json_close(j, -1);
	dt_json_close(j, -1);
}
