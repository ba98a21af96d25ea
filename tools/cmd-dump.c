/*
 * cmd-dump.c - `dnntrace dump`: every record of a trace, one line each, in
 * file order; calls with their decoded arguments. --raw adds the bytes.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "dt-tools.h"

static void print_escaped(FILE *out, const uint8_t *p, uint32_t n)
{
	fputc('"', out);
	for (uint32_t i = 0; i < n; i++) {
		if (p[i] == '"' || p[i] == '\\')
			fprintf(out, "\\%c", p[i]);
		else if (p[i] == 0)
			fputs("\\0", out);
		else if (p[i] < 32 || p[i] >= 127)
			fprintf(out, "\\x%02x", p[i]);
		else
			fputc(p[i], out);
	}
	fputc('"', out);
}

static void print_time(FILE *out, const char *name, uint64_t t, uint64_t t0)
{
	int64_t d = (int64_t)(t - t0);
	uint64_t a = d < 0 ? (uint64_t)-d : (uint64_t)d;

	fprintf(out, " %s=%s%" PRIu64 ".%09" PRIu64, name, d < 0 ? "-" : "",
		a / 1000000000u, a % 1000000000u);
}

static void print_call(FILE *out, const struct dt_file_info *fi,
		       const struct dt_rec_api_call *c)
{
	const struct dt_api_def *api =
		c->api < fi->n_apis ? &fi->apis[c->api] : NULL;
	uint32_t len;
	const uint8_t *args = dt_rec_tail(&c->hdr, &len);

	fprintf(out, "API_CALL seq=%" PRIu64 " tid=%u", c->seq, c->tid);
	print_time(out, "t", c->t_begin, fi->hdr.start_mono);
	fprintf(out, " dur=%" PRIu64 "ns ", c->t_end - c->t_begin);
	const char *status = dt_status_name(c->status);
	char buf[16384];

	if (!api || !api->name)
		fprintf(out, "api#%u(<%u bytes>", c->api, len);
	else if (dt_call_format(api->name, api->sig, args, len, buf,
				sizeof(buf)) < 0)
		fprintf(out,
			"%s(<%u argument bytes do not match the signature>",
			api->name, len);
	else
		fprintf(out, "%s(%s", api->name, buf);
	if (status)
		fprintf(out, ") = %s", status);
	else
		fprintf(out, ") = %d", c->status);
	/* asked by dnntrace itself, not the program (once per plan) */
	fputs(c->flags & DT_CALL_BY_DNNTRACE ? " [dnntrace]\n" : "\n", out);
}

/* What dump remembers while it streams: where the CUPTI clock stands
 * against the monotonic one, and which call each recent launch belongs to
 * (CUPTI correlation ids grow; kernels finish soon after their launch, so
 * a direct-mapped table of recent ids is enough). */
#define CORR_SLOTS (1u << 16)
struct dump_state {
	int64_t cupti_to_mono; /* add to a CUPTI time to get a monotonic one */
	struct {
		uint32_t corr;
		uint64_t call;
	} corr[CORR_SLOTS];
};

static uint64_t call_of(const struct dump_state *ds, uint32_t corr)
{
	return ds->corr[corr % CORR_SLOTS].corr == corr
		       ? ds->corr[corr % CORR_SLOTS].call
		       : 0;
}

static void print_span(FILE *out, const struct dt_file_info *fi,
		       const struct dump_state *ds, uint64_t start,
		       uint64_t end, uint32_t corr)
{
	uint64_t call = call_of(ds, corr);

	print_time(out, "t", start + (uint64_t)ds->cupti_to_mono,
		   fi->hdr.start_mono);
	fprintf(out, " dur=%" PRIu64 "ns", end - start);
	if (call)
		fprintf(out, " call=%" PRIu64, call);
	else
		fprintf(out, " corr=%u", corr);
}

static void print_gpu(FILE *out, const struct dt_file_info *fi,
		      const struct dump_state *ds, const struct dt_rec_hdr *h)
{
	uint32_t len;
	const uint8_t *tail = dt_rec_tail(h, &len);

	if (h->type == DT_REC_KERNEL) {
		const struct dt_rec_kernel *k = (const void *)h;
		fputs("KERNEL", out);
		print_span(out, fi, ds, k->start, k->end, k->corr);
		fprintf(out,
			" dev=%u stream=%u grid=[%d,%d,%d] block=[%d,%d,%d] "
			"smem=%d+%d regs=%u%s ",
			k->device, k->stream, k->grid_x, k->grid_y, k->grid_z,
			k->block_x, k->block_y, k->block_z, k->static_smem,
			k->dynamic_smem, k->registers,
			k->flags & DT_KERNEL_NO_TIME ? " untimed" : "");
		print_escaped(out, tail, len);
	} else if (h->type == DT_REC_MEMCPY) {
		const struct dt_rec_memcpy *m = (const void *)h;
		fputs("MEMCPY", out);
		print_span(out, fi, ds, m->start, m->end, m->corr);
		fprintf(out, " dev=%u stream=%u bytes=%" PRIu64 " kind=%u",
			m->device, m->stream, m->bytes, m->copy_kind);
	} else {
		const struct dt_rec_memset *m = (const void *)h;
		fputs("MEMSET", out);
		print_span(out, fi, ds, m->start, m->end, m->corr);
		fprintf(out, " dev=%u stream=%u bytes=%" PRIu64 " value=%u",
			m->device, m->stream, m->bytes, m->value);
	}
	fputc('\n', out);
}

/* Keep what later records need to be printed well. */
static void track(struct dump_state *ds, const struct dt_rec_hdr *h)
{
	if (h->type == DT_REC_CORR) {
		const struct dt_rec_corr *c = (const void *)h;
		ds->corr[c->corr % CORR_SLOTS].corr = c->corr;
		ds->corr[c->corr % CORR_SLOTS].call = c->call;
	} else if (h->type == DT_REC_CLOCK) {
		const struct dt_rec_clock *c = (const void *)h;
		if (c->clock == DT_CLOCK_CUPTI)
			ds->cupti_to_mono = (int64_t)(c->mono - c->other);
	}
}

static void print_generic(FILE *out, const struct dt_file_info *fi,
			  const struct dt_rec_hdr *h)
{
	const struct dt_rec_desc *d = dt_rec_describe(h->type);
	uint32_t len;
	const uint8_t *tail;

	if (!d) {
		fprintf(out, "UNKNOWN type=%u size=%u\n", h->type, h->size);
		return;
	}
	fputs(d->name, out);
	for (uint32_t i = 3; i < d->n_fields;
	     i++) { /* after type/reserved/size */
		const struct dt_field_desc *f = &d->fields[i];
		uint64_t v = dt_field_get(h, f);

		if (!strcmp(f->name, "len") || !strcmp(f->name, "reserved"))
			continue;
		if (f->name[0] == 't' && (f->name[1] == 0 || f->name[1] == '_'))
			print_time(out, f->name, v, fi->hdr.start_mono);
		else if (f->type[0] == 'i')
			fprintf(out, " %s=%" PRId64, f->name, (int64_t)v);
		else
			fprintf(out, " %s=%" PRIu64, f->name, v);
	}
	tail = dt_rec_tail(h, &len);
	if (tail && len) {
		fputc(' ', out);
		print_escaped(out, tail, len);
	}
	fputc('\n', out);
}

static void print_raw(FILE *out, const struct dt_rec_hdr *h)
{
	const uint8_t *p = (const uint8_t *)h;

	for (uint32_t i = 0; i < h->size; i += 16) {
		fprintf(out, "    %06x ", i);
		for (uint32_t j = i; j < i + 16 && j < h->size; j++)
			fprintf(out, " %02x", p[j]);
		fputc('\n', out);
	}
}

static void dump_help(FILE *f)
{
	fprintf(f, "usage: dnntrace dump [--raw] FILE\n\n"
		   "Prints every record of a trace in file order, one line "
		   "each. Calls show their\ndecoded arguments (outputs marked "
		   "'>') and returned status.\n\n"
		   "  --raw       also print each record's bytes in hex\n"
		   "  -h, --help  show this help\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "raw", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool raw = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'r')
			raw = true;
		else if (c == 'h')
			return dump_help(stdout), 0;
		else
			return dt_usage_error("dump", "unknown option");
	}
	if (argc - optind != 1)
		return dt_usage_error("dump", "expected one trace file");

	return dt_dump_file(argv[optind], raw);
}

int dt_dump_file(const char *path, bool raw)
{
	struct dt_reader *r = dt_open_trace(path);
	if (!r)
		return EXIT_USAGE;
	const struct dt_file_info *fi = dt_reader_info(r);
	const struct dt_rec_hdr *h;
	struct dump_state *ds = calloc(1, sizeof(*ds));
	if (!ds) {
		dt_reader_close(r);
		dt_error("out of memory");
		return 1;
	}
	/* until a calibration says otherwise, CUPTI's clock is the realtime
	 * clock (its default) */
	ds->cupti_to_mono = (int64_t)(fi->hdr.start_mono - fi->hdr.start_real);
	while (dt_reader_next(r, &h) == 1) {
		track(ds, h);
		if (h->type == DT_REC_API_CALL)
			print_call(stdout, fi, (const void *)h);
		else if (h->type == DT_REC_KERNEL || h->type == DT_REC_MEMCPY ||
			 h->type == DT_REC_MEMSET)
			print_gpu(stdout, fi, ds, h);
		else
			print_generic(stdout, fi, h);
		if (raw)
			print_raw(stdout, h);
	}
	const struct dt_file_stats *st = dt_reader_stats(r);
	if (st->end != DT_FILE_CLEAN)
		dt_error("warning: %s: %s%s%s", path, dt_file_end_name(st->end),
			 st->error[0] ? ": " : "", st->error);
	free(ds);
	dt_reader_close(r);
	return 0;
}
