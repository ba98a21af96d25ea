/*
 * summary-io.c - what `dnntrace report`, `diff` and `fusion` share: the
 * traces named on the command line (files, or folders of them) read into a
 * summary, with progress on a terminal.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dt-analyzer.h"
#include "tools.h"

/* rank2 before rank10: numbers in names compared as numbers */
static int cmp_path(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

char **dt_collect_inputs(char **args, int n, size_t *count)
{
	char **v = NULL;
	size_t len = 0, cap = 0;

	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(args[i]);
			struct dirent *e;
			size_t first = len;
			if (!d) {
				dt_error("%s: %s", args[i], strerror(errno));
				continue;
			}
			while ((e = readdir(d))) {
				size_t l = strlen(e->d_name);
				if (l < 6 || strcmp(e->d_name + l - 5, ".dnnt"))
					continue;
				if (len == cap) {
					cap = cap ? cap * 2 : 16;
					char **nv =
						realloc(v, cap * sizeof(*v));
					if (!nv)
						break;
					v = nv;
				}
				if (asprintf(&v[len], "%s/%s", args[i],
					     e->d_name) >= 0)
					len++;
			}
			closedir(d);
			if (len == first)
				dt_error("%s: no .dnnt files in this folder",
					 args[i]);
			else
				qsort(v + first, len - first, sizeof(*v),
				      cmp_path);
			continue;
		}
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[len++] = strdup(args[i]);
	}
	*count = len;
	return v;
}

static void progress(void *arg, const char *path, uint64_t done, uint64_t total)
{
	struct timespec *start = arg, now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	/* quiet for inputs read in under a second */
	if (now.tv_sec - start->tv_sec < 1 && done < total)
		return;
	if (done >= total)
		fprintf(stderr, "\r\033[K");
	else
		fprintf(stderr, "\r\033[Kreading %s: %.0f%%", dt_text(path),
			total ? 100.0 * (double)done / (double)total : 0.0);
	fflush(stderr);
}

/* --range that matched no range: the output is empty for a reason the
 * user should hear of. */
static void warn_no_range(const struct dt_summary *s)
{
	const char *pat = s->opts.range;

	if (!pat)
		return;
	for (size_t i = 0; i < s->n_ranges; i++)
		if (!fnmatch(pat, s->ranges[i].name, 0))
			return;
	fprintf(stderr,
		"dnntrace: no NVTX range is called '%s' in %s: nothing was "
		"kept\n",
		pat, s->n_files == 1 ? "this trace" : "these traces");
}

/* What a replay of the trace at path measured, when one is beside it. */
static void add_replayed(struct dt_summary *s, const char *path)
{
	struct dt_replayed *r;
	char buf[4096], err[512];
	int rc = dt_replayed_read(dt_replayed_path(path, buf, sizeof(buf)), &r,
				  err, sizeof(err));

	if (rc < 0)
		dt_error("%s: its engine choices are left out", err);
	else if (!rc)
		dt_summary_add_replayed(s, r);
}

struct dt_summary *dt_load_summary(char **args, int n,
				   const struct dt_summary_opts *opts, int *rc)
{
	struct dt_summary_opts o = *opts;
	struct timespec start;
	size_t n_inputs;
	char **inputs = dt_collect_inputs(args, n, &n_inputs);

	*rc = 0;
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (isatty(STDERR_FILENO)) {
		o.progress = progress;
		o.progress_arg = &start;
	}
	struct dt_summary *s = dt_summary_new(&o);
	if (!s) {
		dt_error("out of memory");
		*rc = 1;
	}
	for (size_t i = 0; i < n_inputs; i++) {
		char err[256];
		if (s && dt_summary_add(s, inputs[i], err, sizeof(err)) < 0) {
			dt_error("%s", err);
			*rc = EXIT_USAGE;
		} else if (s) {
			add_replayed(s, inputs[i]);
		}
		free(inputs[i]);
	}
	free(inputs);
	if (s && !s->n_files) {
		dt_summary_free(s);
		if (!*rc)
			*rc = EXIT_USAGE;
		return NULL;
	}
	if (s) {
		/* the progress callback's start is gone after this */
		s->opts.progress = NULL;
		dt_summary_finish(s);
		warn_no_range(s);
	}
	return s;
}

int dt_print_unclean(FILE *out, enum dt_format fmt, const struct dt_summary *s,
		     const char *lead)
{
	const char *cls = "warn";
	int n = 0;

	for (size_t i = 0; i < s->n_files; i++) {
		const struct dt_sum_file *f = &s->files[i];
		if (f->complete)
			continue;
		dt_para(out, fmt, cls,
			"%s%s is incomplete: ended %s; %s; %" PRIu64
			" GPU records dropped by CUPTI\n",
			lead, f->path, f->ended, f->lost_text, f->gpu_dropped);
		n++;
	}
	if (n)
		dt_para(out, fmt, cls,
			"%swhat %s lacks is not in the numbers below\n", lead,
			n == 1 ? "that trace" : "those traces");
	return n;
}

const char *dt_incomplete_why(const struct dt_sum_file *f)
{
	if (f->complete)
		return "complete";
	if (f->end != DT_FILE_CLEAN)
		return f->ended;
	if (f->lost || !f->lost_exact)
		return f->lost_text;
	return "GPU records dropped by CUPTI";
}

void dt_json_trace_end(struct dt_json *j, const struct dt_sum_file *f)
{
	dt_json_key(j, "complete");
	dt_json_bool(j, f->complete);
	dt_json_ks(j, "ended", dt_file_end_key(f->end));
	if (f->end != DT_FILE_CLEAN) {
		dt_json_ks(j, "ended_how", f->ended);
	}
	if (!f->sealed) {
		/* older than 1.6: its header and END cannot be verified */
		dt_json_key(j, "sealed");
		dt_json_bool(j, false);
	}
	dt_json_ku(j, "lost", f->lost);
	dt_json_key(j, "lost_exact");
	dt_json_bool(j, f->lost_exact);
	if (f->lost_io) {
		dt_json_ku(j, "lost_io", f->lost_io);
	}
	if (f->skipped_bytes || f->records_missing) {
		dt_json_ku(j, "skipped_bytes", f->skipped_bytes);
		dt_json_key(j, "records_missing");
		if (f->records_missing_known)
			dt_json_u64(j, f->records_missing);
		else
			dt_json_null(j);
	}
	dt_json_ku(j, "gpu_dropped", f->gpu_dropped);
}

void dt_json_gpu_sample(struct dt_json *j, const struct dt_gpu_sampling *sm)
{
	dt_json_key(j, "gpu_sample");
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "one_in", sm->one_in);
	dt_json_ku(j, "window_ms", sm->window_ms);
	dt_json_ku(j, "windows", sm->windows);
	dt_json_ku(j, "window_ns", sm->window_ns);
	dt_json_ku(j, "unsampled_ops", sm->unsampled_ops);
	dt_json_close(j, -1);
}

/* {"key": N, ...}: the uint64_t fields of a stats struct. */
struct u64_field {
	const char *key;
	size_t off;
};

static void json_u64_fields(struct dt_json *j, const void *base,
			    const struct u64_field *f, size_t n)
{
	dt_json_open(j, '{', -1);
	for (size_t i = 0; i < n; i++) {
		dt_json_key(j, f[i].key);
		dt_json_u64(j,
			    *(const uint64_t *)((const char *)base + f[i].off));
	}
	dt_json_close(j, -1);
}

void dt_json_graphs(struct dt_json *j, const struct dt_graph_stats *g)
{
	static const struct u64_field f[] = {
#define F_(k) { #k, offsetof(struct dt_graph_stats, k) }
		F_(launches), F_(launch_ns), F_(launched), F_(captured),
		F_(replays),  F_(partial),   F_(kernels),  F_(attributed),
		F_(unknown),  F_(mismatch),   F_(unresolved),
#undef F_
	};

	json_u64_fields(j, g, f, sizeof(f) / sizeof(f[0]));
}

void dt_json_plans(struct dt_json *j, const struct dt_plan_stats *p)
{
	static const struct u64_field f[] = {
#define F_(k) { #k, offsetof(struct dt_plan_stats, k) }
		F_(built), F_(restored), F_(opaque), F_(unknown_runs),
#undef F_
	};

	json_u64_fields(j, p, f, sizeof(f) / sizeof(f[0]));
}
