/*
 * summary-io.c - what `dnntrace report` and `dnntrace diff` share: the
 * traces named on the command line (files, or folders of them) read into a
 * summary, with progress on a terminal, and numbers written with their
 * SI prefix.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dt-analyzer.h"
#include "dt-summary.h"
#include "dt-tools.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The traces named: files as they are, folders by their *.dnnt. */
static char **collect_inputs(char **args, int n, size_t *count)
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
				      cmp_str);
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
		fprintf(stderr, "\r\033[Kreading %s: %.0f%%", path,
			total ? 100.0 * (double)done / (double)total : 0.0);
	fflush(stderr);
}

struct dt_summary *dt_load_summary(char **args, int n,
				   const struct dt_summary_opts *opts, int *rc)
{
	struct dt_summary_opts o = *opts;
	struct timespec start;
	size_t n_inputs;
	char **inputs = collect_inputs(args, n, &n_inputs);

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
	}
	return s;
}

/* 1234e9 -> "1.23 T": three significant digits and an SI prefix. */
const char *dt_fmt_si(double v, char *buf, size_t size)
{
	static const char *const prefix[] = {
		"", "k", "M", "G", "T", "P", "E"
	};
	int p = 0;

	if (!(v > 0)) {
		snprintf(buf, size, "-");
		return buf;
	}
	while (v >= 1000 && p < 6) {
		v /= 1000;
		p++;
	}
	snprintf(buf, size,
		 v < 10    ? "%.2f %s"
		 : v < 100 ? "%.1f %s"
			   : "%.0f %s",
		 v, prefix[p]);
	return buf;
}

const char *dt_fmt_pct(double v, char *buf, size_t size)
{
	if (v < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, v < 10 ? "%.1f%%" : "%.0f%%", v);
	return buf;
}

/* "4.8T", "900G", "1.2e12", "67 TFLOP/s" -> a number; -1 when malformed. */
double dt_parse_rate(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v <= 0)
		return -1;
	while (*end == ' ')
		end++;
	switch (*end) {
	case 'k':
	case 'K':
		v *= 1e3, end++;
		break;
	case 'M':
		v *= 1e6, end++;
		break;
	case 'G':
		v *= 1e9, end++;
		break;
	case 'T':
		v *= 1e12, end++;
		break;
	case 'P':
		v *= 1e15, end++;
		break;
	}
	/* an optional unit after the prefix */
	if (*end && strcmp(end, "B/s") && strcmp(end, "FLOP/s") &&
	    strcmp(end, "FLOPS") && strcmp(end, "B"))
		return -1;
	return v;
}

int dt_parse_top(const char *cmd, const char *arg, long *n)
{
	char *end;

	*n = strtol(arg, &end, 10);
	if (*end || end == arg || *n < 0)
		return dt_usage_error(cmd, "--top takes a number");
	return 0;
}

FILE *dt_open_output(const char *path)
{
	FILE *f = path ? fopen(path, "w") : stdout;

	if (!f)
		dt_error("%s: %s", path, strerror(errno));
	return f;
}

int dt_close_output(FILE *out, const char *path)
{
	if (!path || fclose(out) == 0)
		return 0;
	dt_error("%s: %s", path, strerror(errno));
	return 1;
}

void dt_json_num(FILE *out, double v)
{
	if (!isfinite(v))
		fputs("null", out);
	else if (v == floor(v) && fabs(v) < 1e18)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.6g", v);
}
