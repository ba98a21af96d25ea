/*
 * scale-trace.c - a copy of a trace whose chosen kernels ran slower (or
 * faster): what a regression would have recorded, for testing `dnntrace
 * diff`'s gate on real traces.
 *
 *   scale-trace IN OUT [--scale X] [--name TEXT]... [--lib KEY]... [--all]
 *
 * A kernel is chosen when its name contains one of the TEXTs, or the
 * library its name tells (dt_kernel_classify: "cudnn", "aten", ...) is one
 * of the KEYs, or with --all; none chosen without one of them. A chosen
 * kernel's duration is multiplied by X (default 2), and everything after
 * it on its stream (kernels, copies, sets) moves by the time it gained, as
 * a stream runs its work in order; other streams and the host's records
 * stay as they were. --scale 1 copies the trace record for record.
 *
 * The copy is written with the trace writer (trace/): the same identity,
 * API table and records, and an end of its own. Not a general editor: one
 * ring, the source's records in the source's order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "dt-trace.h"

#define MAX_PICKS   16
#define MAX_STREAMS 4096

struct picks {
	const char *names[MAX_PICKS], *libs[MAX_PICKS];
	int n_names, n_libs;
	bool all;
	double scale;
};

/* How far each (device, stream) has moved, in ns: a small open table. */
struct shift {
	uint64_t key[MAX_STREAMS];
	int64_t ns[MAX_STREAMS];
};

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "scale-trace: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static int64_t *shift_of(struct shift *s, uint32_t device, uint32_t stream)
{
	uint64_t key = ((uint64_t)device << 32 | stream) + 1;
	size_t k = (key * 0x9e3779b97f4a7c15ull) >> 52 & (MAX_STREAMS - 1);

	while (s->key[k] && s->key[k] != key)
		k = (k + 1) & (MAX_STREAMS - 1);
	s->key[k] = key;
	return &s->ns[k];
}

static bool chosen(const struct picks *p, const struct dt_rec_kernel *k)
{
	const char *name = (const char *)(k + 1);
	struct dt_kernel_class kc;

	if (p->all)
		return true;
	for (int i = 0; i < p->n_names; i++)
		if (memmem(name, k->len, p->names[i], strlen(p->names[i])))
			return true;
	if (!p->n_libs)
		return false;
	dt_kernel_classify(name, k->len, &kc);
	for (int i = 0; i < p->n_libs; i++)
		if (!strcmp(dt_lib_key(kc.lib), p->libs[i]))
			return true;
	return false;
}

/* A copy of an activity's record, moved and maybe stretched. */
static void move(const struct picks *p, struct shift *sh, struct dt_rec_hdr *h)
{
	uint64_t *start, *end;
	uint32_t device, stream;
	bool scale = false;

	if (h->type == DT_REC_KERNEL) {
		struct dt_rec_kernel *k = (void *)h;
		start = &k->start, end = &k->end;
		device = k->device, stream = k->stream;
		scale = chosen(p, k);
	} else if (h->type == DT_REC_MEMCPY) {
		struct dt_rec_memcpy *m = (void *)h;
		start = &m->start, end = &m->end;
		device = m->device, stream = m->stream;
	} else {
		struct dt_rec_memset *m = (void *)h;
		start = &m->start, end = &m->end;
		device = m->device, stream = m->stream;
	}
	if (!*start || *end < *start)
		return; /* untimed */
	int64_t *s = shift_of(sh, device, stream);
	uint64_t d = *end - *start;
	*start += (uint64_t)*s;
	*end = *start + (scale ? (uint64_t)((double)d * p->scale) : d);
	if (scale)
		*s += (int64_t)(*end - *start) - (int64_t)d;
}

static void parse(int argc, char **argv, struct picks *p)
{
	p->scale = 2;
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--all")) {
			p->all = true;
			continue;
		}
		if (!v)
			die("%s takes a value", a);
		i++;
		if (!strcmp(a, "--scale")) {
			char *e;
			p->scale = strtod(v, &e);
			if (*e || p->scale <= 0)
				die("--scale takes a number above 0, not %s",
				    v);
		} else if (!strcmp(a, "--name") && p->n_names < MAX_PICKS) {
			p->names[p->n_names++] = v;
		} else if (!strcmp(a, "--lib") && p->n_libs < MAX_PICKS) {
			p->libs[p->n_libs++] = v;
		} else {
			die("unknown option %s", a);
		}
	}
}

/* The writer of OUT, with IN's identity and API table. */
static struct dt_writer *open_copy(const struct dt_file_info *fi,
				   const char *out)
{
	const char **names = calloc(fi->n_apis + 1, sizeof(*names));
	const char **sigs = calloc(fi->n_apis + 1, sizeof(*sigs));
	uint16_t *flags = calloc(fi->n_apis + 1, sizeof(*flags));
	struct dt_kv *info = calloc(fi->n_info + 1, sizeof(*info));
	size_t n_info = 0;
	const char *host = NULL, *cmdline = NULL;

	if (!names || !sigs || !flags || !info)
		die("%s", "out of memory");
	for (uint32_t i = 0; i < fi->n_apis; i++) {
		names[i] = fi->apis[i].name;
		sigs[i] = fi->apis[i].sig;
		flags[i] = fi->apis[i].flags;
	}
	/* the writer writes host and command line from its own fields */
	for (size_t i = 0; i < fi->n_info; i++) {
		if (!strcmp(fi->info[i].key, "host"))
			host = fi->info[i].value;
		else if (!strcmp(fi->info[i].key, "cmdline"))
			cmdline = fi->info[i].value;
		else
			info[n_info++] = fi->info[i];
	}
	struct dt_writer_config cfg = {
		.path_template = out,
		.ring_size = 1u << 24,
		.start_mono = fi->hdr.start_mono,
		.start_real = fi->hdr.start_real,
		.info = info,
		.n_info = n_info,
		.host = host ? host : "?",
		.cmdline = cmdline ? cmdline : "?",
		.pid = fi->hdr.pid,
		.ppid = fi->hdr.ppid,
		.api_names = names,
		.api_sigs = sigs,
		.api_flags = flags,
		.api_count = fi->n_apis,
	};
	struct dt_writer *w = dt_writer_open(&cfg);
	if (!w)
		die("%s: cannot create", out);
	return w;
}

int main(int argc, char **argv)
{
	struct picks p = { 0 };
	static struct shift sh;
	char err[256];
	int code;

	if (argc < 3)
		die("%s", "usage: scale-trace IN OUT [--scale X] [--name TEXT]"
			  "... [--lib KEY]... [--all]");
	parse(argc, argv, &p);
	struct dt_reader *r = dt_reader_open(argv[1], &code, err, sizeof(err));
	if (!r)
		die("%s", err);
	struct dt_writer *w = open_copy(dt_reader_info(r), argv[2]);
	struct dt_ring *ring = dt_writer_attach(w, 1, "copy");
	const struct dt_rec_hdr *h;
	if (!ring)
		die("%s", "out of memory");
	while (dt_reader_next(r, &h) > 0) {
		uint8_t *o;
		if (h->type == DT_REC_END)
			continue; /* the writer ends the copy */
		while (!(o = dt_ring_try_reserve(ring, h->size)))
			dt_writer_flush(w, 1000);
		memcpy(o, h, h->size);
		if (h->type == DT_REC_KERNEL || h->type == DT_REC_MEMCPY ||
		    h->type == DT_REC_MEMSET)
			move(&p, &sh, (struct dt_rec_hdr *)o);
		dt_ring_commit(ring);
	}
	dt_ring_detach(ring);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);
	dt_reader_close(r);
	return 0;
}
