/*
 * cmd-report.c - `dnntrace report`: where the time went. A first version:
 * the trace's identity, GPU time by kind (cuDNN operations, other kernels by
 * library, copies and sets), host time in each cuDNN function, and the
 * operations grouped by problem with their GPU time statistics. Bandwidth,
 * FLOP rates, findings and several files at once are not done yet.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "dt-tools.h"

#define CORR_SLOTS (1u << 16)

/* Kernels outside cuDNN calls, grouped by the library their name shows. */
static const struct {
	const char *family;
	const char *needles[6];
} families[] = {
	{ "GEMM (cuBLAS, cuBLASLt, CUTLASS)",
	  { "gemm", "nvjet", "cutlass", "cublas", "Gemm", NULL } },
	{ "NCCL", { "nccl", NULL } },
	{ "ggml", { "ggml", NULL } },
	{ "PyTorch (ATen)", { "at6native", "at::native", "_ZN2at", NULL } },
	{ "XLA", { "xla", "fusion", NULL } },
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

static size_t family_of(const uint8_t *name, uint32_t len)
{
	for (size_t f = 0; f < N_FAMILIES; f++)
		for (const char *const *n = families[f].needles; *n; n++)
			if (memmem(name, len, *n, strlen(*n)))
				return f;
	return N_FAMILIES; /* other */
}

struct api_row {
	uint64_t calls, failed, ns, min, max;
};

struct problem {
	char *key;
	const char *api;
	int64_t engine;
	uint64_t count, gpu_ns, kernels;
	uint64_t *times; /* GPU ns of each execution, for the median */
	size_t n_times, cap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int by_gpu(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;
	return x->gpu_ns < y->gpu_ns ? 1 : x->gpu_ns > y->gpu_ns ? -1 : 0;
}

static void add_op(struct problem **ps, size_t *n, size_t *cap,
		   const struct dt_op *op)
{
	struct problem *p = NULL;

	for (size_t i = 0; i < *n; i++)
		if ((*ps)[i].api == op->api && !strcmp((*ps)[i].key, op->desc))
			p = &(*ps)[i];
	if (!p) {
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 64;
			struct problem *v = realloc(*ps, c * sizeof(*v));
			if (!v)
				return;
			*ps = v;
			*cap = c;
		}
		p = &(*ps)[(*n)++];
		memset(p, 0, sizeof(*p));
		p->key = strdup(op->desc);
		p->api = op->api;
		p->engine = op->engine;
	}
	p->count++;
	p->gpu_ns += op->gpu_ns;
	p->kernels += op->kernels;
	if (op->engine != p->engine)
		p->engine = -2;
	if (p->n_times == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 16;
		uint64_t *t = realloc(p->times, c * sizeof(*t));
		if (!t)
			return;
		p->times = t;
		p->cap = c;
	}
	p->times[p->n_times++] = op->gpu_ns;
}

static void report_help(FILE *f)
{
	fprintf(f, "usage: dnntrace report [--top N] FILE\n\n"
		   "Where the time went: GPU time in cuDNN operations, in "
		   "other kernels (by\nlibrary) and in copies and sets; host "
		   "time in each cuDNN function; and the\noperations grouped "
		   "by problem (operation, shapes, types, layout, parameters)\n"
		   "with their engine and GPU time.\n\n"
		   "  --top N     rows per table (default 15, 0 for all)\n"
		   "  -h, --help  show this help\n");
}

static const char *pct(uint64_t part, uint64_t whole, char *buf, size_t size)
{
	snprintf(buf, size, "%5.1f%%",
		 whole ? 100.0 * (double)part / (double)whole : 0.0);
	return buf;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long top = 15;
	int c;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 't') {
			top = strtol(optarg, &end, 10);
			if (*end || end == optarg || top < 0)
				return dt_usage_error("report",
						      "--top takes a number");
		} else if (c == 'h') {
			return report_help(stdout), 0;
		} else {
			return dt_usage_error("report", "unknown option");
		}
	}
	if (argc - optind != 1)
		return dt_usage_error("report", "expected one trace file");

	const char *path = argv[optind];
	struct dt_reader *r = dt_open_trace(path);
	if (!r)
		return EXIT_USAGE;
	const struct dt_file_info *fi = dt_reader_info(r);
	struct dt_model *m = dt_model_new(fi);
	struct api_row *apis =
		calloc(fi->n_apis ? fi->n_apis : 1, sizeof(*apis));
	uint32_t *corr = calloc(CORR_SLOTS, sizeof(*corr));
	uint64_t fam_ns[N_FAMILIES + 1] = { 0 }, fam_n[N_FAMILIES + 1] = { 0 };
	uint64_t cudnn_ns = 0, copy_ns = 0, copies = 0, host_ns = 0;
	struct problem *ps = NULL;
	size_t n_ps = 0, cap_ps = 0;
	const struct dt_rec_hdr *h;
	struct dt_op op;
	bool done = false;

	if (!m || !apis || !corr) {
		dt_error("out of memory");
		return 1;
	}
	while (!done) {
		done = dt_reader_next(r, &h) != 1;
		if (done) {
			dt_model_finish(m);
		} else {
			dt_model_feed(m, h);
			if (h->type == DT_REC_API_CALL) {
				const struct dt_rec_api_call *a =
					(const void *)h;
				uint64_t d = a->t_end - a->t_begin;
				if (a->api < fi->n_apis &&
				    !(a->flags & DT_CALL_BY_DNNTRACE)) {
					struct api_row *row = &apis[a->api];
					if (!row->calls || d < row->min)
						row->min = d;
					if (d > row->max)
						row->max = d;
					row->calls++;
					row->failed += a->status != 0;
					row->ns += d;
					host_ns += d;
				}
			} else if (h->type == DT_REC_CORR) {
				const struct dt_rec_corr *k = (const void *)h;
				corr[k->corr % CORR_SLOTS] = k->corr;
			} else if (h->type == DT_REC_KERNEL) {
				const struct dt_rec_kernel *k = (const void *)h;
				uint32_t len;
				const uint8_t *name = dt_rec_tail(h, &len);
				uint64_t d = k->end > k->start
						     ? k->end - k->start
						     : 0;
				if (corr[k->corr % CORR_SLOTS] == k->corr) {
					cudnn_ns += d;
				} else {
					size_t f = family_of(name, len);
					fam_ns[f] += d;
					fam_n[f]++;
				}
			} else if (h->type == DT_REC_MEMCPY ||
				   h->type == DT_REC_MEMSET) {
				const struct dt_rec_memcpy *k = (const void *)h;
				/* start and end sit at the same place in both
				 */
				copy_ns += k->end > k->start ? k->end - k->start
							     : 0;
				copies++;
			}
		}
		while (dt_model_next_op(m, &op))
			add_op(&ps, &n_ps, &cap_ps, &op);
	}

	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	uint64_t other_ns = 0;
	for (size_t f = 0; f <= N_FAMILIES; f++)
		other_ns += fam_ns[f];
	uint64_t gpu_ns = cudnn_ns + other_ns + copy_ns;

	const struct dt_file_stats *st = dt_reader_stats(r);
	const char *v;
	printf("trace:    %s\n", path);
	if ((v = dt_info_get(fi, "cmdline")))
		printf("program:  %s\n", v);
	printf("process:  %s, pid %u\n",
	       (v = dt_info_get(fi, "host")) ? v : "?", fi->hdr.pid);
	if ((v = dt_info_get(fi, "cudnn.file")) ||
	    (v = dt_info_get(fi, "cudnn.path")))
		printf("cuDNN:    %s\n", v);
	if ((v = dt_info_get(fi, "gpu")))
		printf("GPU:      %s\n", v);
	printf("ended:    %s; %" PRIu64 " calls, %" PRIu64 " records lost\n",
	       dt_file_end_name(st->end), st->calls, st->lost);
	if (!gpu_ns)
		printf("\nno GPU activity in this trace (the GPU line says "
		       "why)\n");
	else
		printf("\nGPU time (kernels, copies and sets, summed)   %s\n",
		       dt_fmt_ns(gpu_ns, b1, sizeof(b1)));
	if (gpu_ns)
		printf("  %-40s %10s %s\n", "in cuDNN operations",
		       dt_fmt_ns(cudnn_ns, b1, sizeof(b1)),
		       pct(cudnn_ns, gpu_ns, b2, sizeof(b2)));
	for (size_t f = 0; f <= N_FAMILIES; f++)
		if (fam_n[f])
			printf("  %-40s %10s %s  (%" PRIu64 " kernels)\n",
			       f < N_FAMILIES ? families[f].family
					      : "other kernels",
			       dt_fmt_ns(fam_ns[f], b1, sizeof(b1)),
			       pct(fam_ns[f], gpu_ns, b2, sizeof(b2)),
			       fam_n[f]);
	if (copies)
		printf("  %-40s %10s %s  (%" PRIu64 ")\n",
		       "memory copies and sets",
		       dt_fmt_ns(copy_ns, b1, sizeof(b1)),
		       pct(copy_ns, gpu_ns, b2, sizeof(b2)), copies);
	printf("host time inside cuDNN calls                  %s\n",
	       dt_fmt_ns(host_ns, b1, sizeof(b1)));

	/* operations by problem */
	qsort(ps, n_ps, sizeof(*ps), by_gpu);
	if (!n_ps)
		printf("\nno operation ran on the GPU through cuDNN\n");
	else
		printf("\n%8s %10s %7s %10s %10s %10s %10s %8s  %s\n", "count",
		       "GPU time", "share", "mean", "median", "min", "max",
		       "engine", "operation");
	for (size_t i = 0; i < n_ps; i++) {
		struct problem *p = &ps[i];
		char e[32];
		if (top == 0 || i < (size_t)top) {
			qsort(p->times, p->n_times, sizeof(uint64_t), cmp_u64);
			if (p->engine == -2)
				snprintf(e, sizeof(e), "varies");
			else if (p->engine < 0)
				snprintf(e, sizeof(e), "?");
			else
				snprintf(e, sizeof(e), "%" PRId64, p->engine);
			printf("%8" PRIu64
			       " %10s %7s %10s %10s %10s %10s %8s  %s %.160s\n",
			       p->count, dt_fmt_ns(p->gpu_ns, b1, sizeof(b1)),
			       pct(p->gpu_ns, cudnn_ns, b2, sizeof(b2)),
			       dt_fmt_ns(p->gpu_ns / p->count, b3, sizeof(b3)),
			       dt_fmt_ns(p->times[p->n_times / 2], b4,
					 sizeof(b4)),
			       dt_fmt_ns(p->times[0], b5, sizeof(b5)),
			       dt_fmt_ns(p->times[p->n_times - 1], b6,
					 sizeof(b6)),
			       e, p->api + 5, p->key);
		}
		free(p->key);
		free(p->times);
	}
	if (top && n_ps > (size_t)top)
		printf("%8s (%zu more problems; --top 0 lists all)\n", "",
		       n_ps - (size_t)top);

	/* host time by function */
	printf("\n%10s %8s %12s %10s %10s %10s  %s\n", "calls", "failed",
	       "host time", "avg", "min", "max", "function");
	for (long shown = 0; top == 0 || shown < top; shown++) {
		uint32_t best = UINT32_MAX;
		for (uint32_t i = 0; i < fi->n_apis; i++)
			if (apis[i].calls &&
			    (best == UINT32_MAX || apis[i].ns > apis[best].ns))
				best = i;
		if (best == UINT32_MAX)
			break;
		struct api_row *row = &apis[best];
		printf("%10" PRIu64 " %8" PRIu64 " %12s %10s %10s %10s  %s\n",
		       row->calls, row->failed,
		       dt_fmt_ns(row->ns, b1, sizeof(b1)),
		       dt_fmt_ns(row->ns / row->calls, b2, sizeof(b2)),
		       dt_fmt_ns(row->min, b3, sizeof(b3)),
		       dt_fmt_ns(row->max, b4, sizeof(b4)),
		       fi->apis[best].name);
		row->calls = 0;
	}
	free(ps);
	free(apis);
	free(corr);
	dt_model_free(m);
	dt_reader_close(r);
	return 0;
}
