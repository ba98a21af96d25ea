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
		       const struct dt_call *c)
{
	uint32_t len = c->args_len;
	const uint8_t *args = c->args;

	fprintf(out, "API_CALL seq=%" PRIu64 " tid=%u", c->seq, c->tid);
	print_time(out, "t", c->t_begin, fi->hdr.start_mono);
	fprintf(out, " dur=%" PRIu64 "ns ", c->t_end - c->t_begin);
	const char *status = dt_status_name(c->status);
	char buf[16384];

	if (!c->name)
		fprintf(out, "api#%u(<%u bytes>", c->api, len);
	else if (dt_call_format(c->name, c->sig, args, len, buf, sizeof(buf)) <
		 0)
		fprintf(out,
			"%s(<%u argument bytes do not match the signature>",
			c->name, len);
	else
		fprintf(out, "%s(%s", c->name, buf);
	if (status)
		fprintf(out, ") = %s", status);
	else
		fprintf(out, ") = %d", c->status);
	/* asked by dnntrace itself, not the program (once per plan) */
	fputs(c->flags & DT_CALL_BY_DNNTRACE ? " [dnntrace]\n" : "\n", out);
}

static void print_span(FILE *out, const struct dt_file_info *fi,
		       const struct dt_activity *a)
{
	print_time(out, "t", a->start, fi->hdr.start_mono);
	fprintf(out, " dur=%" PRIu64 "ns", a->gpu_end - a->gpu_start);
	if (a->call)
		fprintf(out, " call=%" PRIu64, a->call);
	else
		fprintf(out, " corr=%u", a->corr);
}

static void print_gpu(FILE *out, const struct dt_file_info *fi,
		      const struct dt_activity *a)
{
	uint32_t len;
	const uint8_t *tail = dt_rec_tail(a->rec, &len);

	if (a->kind == DT_ACT_KERNEL) {
		const struct dt_rec_kernel *k = a->kernel;
		fputs("KERNEL", out);
		print_span(out, fi, a);
		fprintf(out,
			" dev=%u stream=%u grid=[%d,%d,%d] block=[%d,%d,%d] "
			"smem=%d+%d regs=%u%s ",
			k->device, k->stream, k->grid_x, k->grid_y, k->grid_z,
			k->block_x, k->block_y, k->block_z, k->static_smem,
			k->dynamic_smem, k->registers,
			k->flags & DT_KERNEL_NO_TIME ? " untimed" : "");
		print_escaped(out, tail, len);
	} else if (a->kind == DT_ACT_MEMCPY) {
		const struct dt_rec_memcpy *m = (const void *)a->rec;
		fputs("MEMCPY", out);
		print_span(out, fi, a);
		fprintf(out, " dev=%u stream=%u bytes=%" PRIu64 " kind=%u",
			m->device, m->stream, m->bytes, m->copy_kind);
	} else {
		const struct dt_rec_memset *m = (const void *)a->rec;
		fputs("MEMSET", out);
		print_span(out, fi, a);
		fprintf(out, " dev=%u stream=%u bytes=%" PRIu64 " value=%u",
			m->device, m->stream, m->bytes, m->value);
	}
	fputc('\n', out);
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

/* What dump prints as the session hands it events: every record, in file
 * order. */
struct dump {
	FILE *out;
	const struct dt_file_info *fi;
	bool raw;
};

static void on_call(void *arg, const struct dt_call *c)
{
	struct dump *d = arg;

	print_call(d->out, d->fi, c);
	if (d->raw)
		print_raw(d->out, c->rec);
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct dump *d = arg;

	print_gpu(d->out, d->fi, a);
	if (d->raw)
		print_raw(d->out, a->rec);
}

static void on_record(void *arg, const struct dt_rec_hdr *h)
{
	struct dump *d = arg;

	print_generic(d->out, d->fi, h);
	if (d->raw)
		print_raw(d->out, h);
}

static void on_device(void *arg, const struct dt_device *dev)
{
	on_record(arg, dev->rec);
}

static void on_gpu_state(void *arg, const struct dt_gpu_change *g)
{
	on_record(arg, g->rec);
}

int dt_dump_file(const char *path, bool raw)
{
	struct dt_session *ss = dt_open_session(path, NULL);
	if (!ss)
		return EXIT_USAGE;
	struct dump d = { stdout, dt_session_info(ss), raw };
	struct dt_consumer c = { .arg = &d,
				 .call = on_call,
				 .activity = on_activity,
				 .device = on_device,
				 .gpu_state = on_gpu_state,
				 .record = on_record };
	dt_session_add(ss, &c);
	dt_session_run(ss);
	const struct dt_file_stats *st = dt_session_file(ss);
	if (st->end != DT_FILE_CLEAN)
		dt_error("warning: %s: %s%s%s", path, dt_file_end_name(st->end),
			 st->error[0] ? ": " : "", st->error);
	dt_session_close(ss);
	return 0;
}
