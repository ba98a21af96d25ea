/*
 * cmd-dump.c - `dnntrace dump`: every record of a trace, one line each, in
 * file order; calls with their decoded arguments. --raw adds the bytes.
 *
 * Lines are built in one buffer without printf (dt_put and friends):
 * a trace has millions of records, and dump should keep up with reading
 * them.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "tools.h"

/* What dump prints as the session hands it events: every record, in file
 * order. */
struct dump {
	FILE *out;
	const struct dt_file_info *fi;
	bool raw;
	bool mangled; /* kernel names as recorded */
	int len;
	char buf[1 << 17];
};

/* Room for n more bytes in the buffer, writing it out first if need be;
 * the buffer is large enough for any line but a record's tail. */
static void room(struct dump *d, size_t n)
{
	if ((size_t)d->len + n >= sizeof(d->buf)) {
		fwrite(d->buf, 1, (size_t)d->len, d->out);
		d->len = 0;
	}
}

static void put(struct dump *d, const char *s, size_t n)
{
	room(d, n);
	if (n >= sizeof(d->buf)) {
		fwrite(s, 1, n, d->out);
		return;
	}
	memcpy(d->buf + d->len, s, n);
	d->len += (int)n;
}

static void put_s(struct dump *d, const char *s)
{
	put(d, s, strlen(s));
}

static void put_u64(struct dump *d, uint64_t v)
{
	room(d, 24);
	dt_put_u64(d->buf, sizeof(d->buf), &d->len, v);
}

static void put_i64(struct dump *d, int64_t v)
{
	room(d, 24);
	dt_put_i64(d->buf, sizeof(d->buf), &d->len, v);
}

/* " name=value" */
static void put_field(struct dump *d, const char *name, uint64_t v,
		      bool is_signed)
{
	put(d, " ", 1);
	put_s(d, name);
	put(d, "=", 1);
	if (is_signed)
		put_i64(d, (int64_t)v);
	else
		put_u64(d, v);
}

/* Bytes in quotes, escaped: runs of printable ones go out whole. */
static void put_escaped(struct dump *d, const uint8_t *p, uint32_t n)
{
	char esc[8];

	put(d, "\"", 1);
	for (uint32_t i = 0; i < n;) {
		uint32_t k = i;
		while (k < n && p[k] >= 32 && p[k] < 127 && p[k] != '"' &&
		       p[k] != '\\')
			k++;
		if (k > i)
			put(d, (const char *)p + i, k - i);
		if (k == n)
			break;
		if (p[k] == '"' || p[k] == '\\')
			snprintf(esc, sizeof(esc), "\\%c", p[k]);
		else if (p[k] == 0)
			snprintf(esc, sizeof(esc), "\\0");
		else
			snprintf(esc, sizeof(esc), "\\x%02x", p[k]);
		put_s(d, esc);
		i = k + 1;
	}
	put(d, "\"", 1);
}

/* " name=<seconds>.<nanoseconds>" relative to t0. */
static void put_time(struct dump *d, const char *name, uint64_t t, uint64_t t0)
{
	int64_t dt = (int64_t)(t - t0);
	uint64_t a = dt < 0 ? (uint64_t)-dt : (uint64_t)dt;
	char ns[10];

	put(d, " ", 1);
	put_s(d, name);
	put(d, dt < 0 ? "=-" : "=", dt < 0 ? 2 : 1);
	put_u64(d, a / 1000000000u);
	a %= 1000000000u;
	ns[0] = '.';
	for (int i = 9; i >= 1; i--, a /= 10)
		ns[i] = (char)('0' + a % 10);
	put(d, ns, 10);
}

/* What was put since from, as dt_text() shows it: a call's name and its
 * string arguments are the traced process's bytes. */
static void escape_since(struct dump *d, int from)
{
	room(d, 1);
	d->buf[d->len] = 0;
	const char *s = d->buf + from, *e = dt_text(s);
	if (e == s)
		return;
	d->len = from;
	put_s(d, e);
}

static void print_call(struct dump *d, const struct dt_call *c)
{
	/* the arguments are formatted straight into the buffer */
	const size_t args_max = 16384;
	char status[64];
	int k;

	put(d, "API_CALL seq=", 13);
	put_u64(d, c->seq);
	put(d, " tid=", 5);
	put_u64(d, c->tid);
	put_time(d, "t", c->t_begin, d->fi->hdr.start_mono);
	put(d, " dur=", 5);
	put_u64(d, c->t_end - c->t_begin);
	put(d, "ns ", 3);
	room(d, args_max + 256);
	int from = d->len;
	char *buf = d->buf + d->len;
	if (!c->name) {
		k = snprintf(buf, args_max, "api#%u(<%u bytes>", c->api,
			     c->args_len);
	} else {
		put_s(d, c->name);
		put(d, "(", 1);
		buf = d->buf + d->len;
		k = c->argc >= 0 ? dt_args_format(c->name, c->argv, c->argc,
						  buf, args_max)
				 : dt_call_format(c->name, c->sig, c->args,
						  c->args_len, buf, args_max);
		if (k < 0)
			k = snprintf(buf, args_max,
				     "<%u argument bytes do not match the "
				     "signature>",
				     c->args_len);
	}
	d->len += k < (int)args_max ? k : (int)args_max - 1;
	escape_since(d, from);
	put(d, ") = ", 4);
	/* statuses are named for cuDNN's calls; another library's is its
	 * number */
	put_s(d, dt_library_status(c->api < d->fi->n_apis
					   ? d->fi->apis[c->api].library
					   : NULL,
				   c->status, status, sizeof(status)));
	/* made by one library inside a call of another (the call after it
	 * on its thread whose time holds it) */
	if (c->flags & DT_CALL_NESTED)
		put_s(d, " [nested]");
	/* asked by dnntrace itself, not the program (once per plan) */
	put_s(d, c->flags & DT_CALL_BY_DNNTRACE ? " [dnntrace]\n" : "\n");
}

static void put_span(struct dump *d, const struct dt_activity *a)
{
	put_time(d, "t", a->start, d->fi->hdr.start_mono);
	put(d, " dur=", 5);
	put_u64(d, a->gpu_end - a->gpu_start);
	if (a->call) {
		put(d, "ns call=", 8);
		put_u64(d, a->call);
	} else {
		put(d, "ns corr=", 8);
		put_u64(d, a->corr);
	}
}

/* "[x,y,z]" */
static void put_dim3(struct dump *d, const char *name, int32_t x, int32_t y,
		     int32_t z)
{
	put(d, " ", 1);
	put_s(d, name);
	put(d, "=[", 2);
	put_i64(d, x);
	put(d, ",", 1);
	put_i64(d, y);
	put(d, ",", 1);
	put_i64(d, z);
	put(d, "]", 1);
}

/* " kind=HtoD"; the number when CUPTI gives it no name */
static void put_copy_kind(struct dump *d, uint8_t kind)
{
	const char *name = dt_copy_kind_name(kind);

	if (!name) {
		put_field(d, "kind", kind, false);
		return;
	}
	put(d, " kind=", 6);
	put_s(d, name);
}

/* A kernel's name: as C++ writes it, or as recorded (--mangled). */
static void put_kernel_name(struct dump *d, const struct dt_activity *a)
{
	uint32_t len;
	const uint8_t *tail = dt_rec_tail(a->rec, &len);

	if (a->kc && !d->mangled)
		put_escaped(d, (const uint8_t *)a->kc->demangled,
			    (uint32_t)strlen(a->kc->demangled));
	else
		put_escaped(d, tail, len);
}

static void print_gpu(struct dump *d, const struct dt_activity *a)
{
	if (a->kind == DT_ACT_KERNEL) {
		const struct dt_rec_kernel *k = a->kernel;
		put(d, "KERNEL", 6);
		put_span(d, a);
		put_field(d, "dev", k->device, false);
		put_field(d, "stream", k->stream, false);
		put_dim3(d, "grid", k->grid_x, k->grid_y, k->grid_z);
		put_dim3(d, "block", k->block_x, k->block_y, k->block_z);
		put_field(d, "smem", (uint64_t)(int64_t)k->static_smem, true);
		put(d, "+", 1);
		put_i64(d, k->dynamic_smem);
		put_field(d, "regs", k->registers, false);
		if (k->graph_id) {
			put_field(d, "graph", k->graph_id, false);
			put_field(d, "node", k->graph_node, false);
		}
		put_s(d, k->flags & DT_KERNEL_NO_TIME ? " untimed " : " ");
		put_kernel_name(d, a);
	} else if (a->kind == DT_ACT_MEMCPY) {
		const struct dt_rec_memcpy *m = (const void *)a->rec;
		put(d, "MEMCPY", 6);
		put_span(d, a);
		put_field(d, "dev", m->device, false);
		put_field(d, "stream", m->stream, false);
		put_field(d, "bytes", m->bytes, false);
		put_copy_kind(d, m->copy_kind);
	} else {
		const struct dt_rec_memset *m = (const void *)a->rec;
		put(d, "MEMSET", 6);
		put_span(d, a);
		put_field(d, "dev", m->device, false);
		put_field(d, "stream", m->stream, false);
		put_field(d, "bytes", m->bytes, false);
		put_field(d, "value", m->value, false);
	}
	put(d, "\n", 1);
}

/* Any other record, by its description: NAME field=value ... "tail". */
static void print_generic(struct dump *d, const struct dt_rec_hdr *h)
{
	const struct dt_rec_desc *desc = dt_rec_describe(h->type);
	uint32_t len;
	const uint8_t *tail;

	if (!desc) {
		put(d, "UNKNOWN", 7);
		put_field(d, "type", h->type, false);
		put_field(d, "size", h->size, false);
		put(d, "\n", 1);
		return;
	}
	put_s(d, desc->name);
	/* after type, reserved and size */
	for (uint32_t i = 3; i < desc->n_fields; i++) {
		const struct dt_field_desc *f = &desc->fields[i];
		uint64_t v = dt_field_get(h, f);

		if (!strcmp(f->name, "len") || !strcmp(f->name, "reserved"))
			continue;
		if (f->name[0] == 't' && (f->name[1] == 0 || f->name[1] == '_'))
			put_time(d, f->name, v, d->fi->hdr.start_mono);
		else
			put_field(d, f->name, v, f->type[0] == 'i');
	}
	tail = dt_rec_tail(h, &len);
	if (tail && len) {
		put(d, " ", 1);
		put_escaped(d, tail, len);
	}
	put(d, "\n", 1);
}

static void print_raw(struct dump *d, const struct dt_rec_hdr *h)
{
	const uint8_t *p = (const uint8_t *)h;
	char line[80];

	for (uint32_t i = 0; i < h->size; i += 16) {
		int n = snprintf(line, sizeof(line), "    %06x ", i);
		for (uint32_t j = i; j < i + 16 && j < h->size; j++)
			n += snprintf(line + n, sizeof(line) - (size_t)n,
				      " %02x", p[j]);
		line[n++] = '\n';
		put(d, line, (size_t)n);
	}
}

static void on_call(void *arg, const struct dt_call *c)
{
	struct dump *d = arg;

	print_call(d, c);
	if (d->raw)
		print_raw(d, c->rec);
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct dump *d = arg;

	print_gpu(d, a);
	if (d->raw)
		print_raw(d, a->rec);
}

static void on_record(void *arg, const struct dt_rec_hdr *h)
{
	struct dump *d = arg;

	print_generic(d, h);
	if (d->raw)
		print_raw(d, h);
}

static void on_device(void *arg, const struct dt_device *dev)
{
	on_record(arg, dev->rec);
}

static void on_gpu_state(void *arg, const struct dt_gpu_change *g)
{
	on_record(arg, g->rec);
}

static void on_graph_launch(void *arg, const struct dt_graph_launch *l)
{
	on_record(arg, l->rec);
}

static void on_gpu_sample(void *arg, const struct dt_gpu_sample *s)
{
	on_record(arg, s->rec);
}

static void on_gpu_metrics(void *arg, const struct dt_gpu_metrics *g)
{
	on_record(arg, g->rec);
}

int dt_dump_file(const char *path, bool raw, bool mangled)
{
	struct dt_session *ss = dt_open_session(path, NULL);
	struct dump *d = ss ? calloc(1, sizeof(*d)) : NULL;

	if (!ss)
		return EXIT_USAGE;
	if (!d) {
		dt_session_close(ss);
		dt_error("out of memory");
		return 1;
	}
	*d = (struct dump){ .out = stdout,
			    .fi = dt_session_info(ss),
			    .raw = raw,
			    .mangled = mangled };
	struct dt_consumer c = { .arg = d,
				 .call = on_call,
				 .activity = on_activity,
				 .device = on_device,
				 .gpu_state = on_gpu_state,
				 .graph_launch = on_graph_launch,
				 .gpu_metrics = on_gpu_metrics,
				 .gpu_sample = on_gpu_sample,
				 .record = on_record };
	dt_session_add(ss, &c);
	dt_session_run(ss);
	fwrite(d->buf, 1, (size_t)d->len, d->out);
	const struct dt_file_stats *st = dt_session_file(ss);
	if (st->end != DT_FILE_CLEAN)
		dt_error("warning: %s: %s%s%s", path, dt_file_end_name(st->end),
			 st->error[0] ? ": " : "", st->error);
	if (st->lost || !st->lost_exact) {
		char lost[512];
		dt_error("warning: %s: %s while recording", path,
			 dt_lost_text(st, dt_session_stats(ss), " lost", lost,
				      sizeof(lost)));
	}
	dt_session_close(ss);
	free(d);
	return 0;
}

static void dump_help(FILE *f)
{
	fprintf(f, "usage: dnntrace dump [--raw] [--mangled] FILE\n\n"
		   "Prints every record of a trace in file order, one line "
		   "each. Calls show their\ndecoded arguments (outputs marked "
		   "'>') and returned status; kernels their\nnames as C++ "
		   "writes them (demangled), copies their direction (HtoD, "
		   "...).\n\n"
		   "  --raw       also print each record's bytes in hex\n"
		   "  --mangled   kernel names as recorded (mangled)\n"
		   "  -h, --help  show this help\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "raw", no_argument, NULL, 'r' },
		{ "mangled", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool raw = false, mangled = false;
	int c;

	optind = 1;
	while ((c = dt_getopt("dump", argc, argv, "h", opts)) != -1) {
		if (c == 'r')
			raw = true;
		else if (c == 'm')
			mangled = true;
		else if (c == 'h')
			return dump_help(stdout), 0;
		else
			return EXIT_USAGE;
	}
	if (argc - optind != 1)
		return dt_usage_error("dump", "expected one trace file");

	return dt_dump_file(argv[optind], raw, mangled);
}
