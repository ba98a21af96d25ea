/*
 * cmd-info.c - `dnntrace info`: who wrote a trace, what it holds, and how
 * it ended. Reads the whole file (streaming) for the totals.
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt-analyzer.h"
#include "dt-steps.h"
#include "tools.h"

static void print_kv(const char *label, const char *value)
{
	if (value && *value)
		printf("%-12s %s\n", label, dt_text(value));
}

/* "cuDNN:  9.19.0, built against 9.19.0, loaded /path": what the file says
 * of a wrapped library, when it says anything. */
static void print_library(const struct dt_file_info *fi,
			  const struct dt_library_def *lib)
{
	const char *loaded = dt_library_info_get(fi, lib->name, "file");
	const char *built = dt_library_info_get(fi, lib->name, "built");
	const char *ver = dt_library_info_get(fi, lib->name, "version");
	char label[40], v1[32], v2[32], none[64];

	if (!loaded)
		loaded = dt_library_info_get(fi, lib->name, "path");
	if (!built && !loaded)
		return;
	snprintf(label, sizeof(label), "%s:", dt_text(lib->display));
	snprintf(none, sizeof(none), "none (no %s call)",
		 dt_text(lib->display));
	printf("%-12s %s%sbuilt against %s, loaded %s\n", label,
	       ver ? dt_library_version(lib->name, ver, v1, sizeof(v1)) : "",
	       ver ? ", " : "",
	       dt_library_version(lib->name, built, v2, sizeof(v2)),
	       loaded ? dt_text(loaded) : none);
}

struct api_count {
	uint32_t api;
	uint64_t calls;
	uint64_t failed;
	uint64_t ns;
};

static int by_calls(const void *a, const void *b)
{
	const struct api_count *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return x->api < y->api ? -1 : x->api > y->api;
}

static void info_help(FILE *f)
{
	fprintf(f, "usage: dnntrace info [--calls N] TRACE|FOLDER...\n\n"
		   "Shows who wrote each trace (program, host, pid, ranks, "
		   "cuDNN), what it holds\n(records, calls per function, "
		   "threads, the program's steps, records lost)\nand how it "
		   "ended.\n\n"
		   "  --calls N   list the N most called functions (default "
		   "10, 0 for none, -1 for all)\n"
		   "  -h, --help  show this help\n");
}

/* What info gathers as the session hands it events. */
#define INFO_DEVICES 16
struct info {
	struct api_count *counts; /* by API id */
	uint32_t n_apis;
	struct {
		uint32_t id;
		char text[160];
		uint64_t work; /* kernels, copies and sets that ran on it */
	} dev[INFO_DEVICES];   /* the GPUs recorded, by first sight */
	size_t n_dev;
	uint64_t nested; /* calls made inside another library's call */
	/* kernels outside any call, by the library their names say */
	uint64_t other_ns[DT_LIB_COUNT], other_n[DT_LIB_COUNT];
};

static void on_call(void *arg, const struct dt_call *c)
{
	struct info *in = arg;

	in->nested += !!(c->flags & DT_CALL_NESTED);
	/* the function table is the program's calls, as report's */
	if (in->counts && c->api < in->n_apis &&
	    !(c->flags & (DT_CALL_BY_DNNTRACE | DT_CALL_NESTED))) {
		in->counts[c->api].calls++;
		in->counts[c->api].failed += c->status != 0;
		in->counts[c->api].ns += c->t_end - c->t_begin;
	}
}

static void on_device(void *arg, const struct dt_device *d)
{
	struct info *in = arg;

	for (size_t i = 0; i < in->n_dev; i++)
		if (in->dev[i].id == d->id)
			return;
	if (in->n_dev == INFO_DEVICES)
		return;
	in->dev[in->n_dev].id = d->id;
	snprintf(in->dev[in->n_dev++].text, sizeof(in->dev[0].text),
		 "%s, %u SMs, sm_%u%u, %.0f GB/s, %.0f GiB", d->name, d->sms,
		 d->cc_major, d->cc_minor, d->mem_bandwidth_kBps / 1e6,
		 d->global_mem / 1073741824.0);
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct info *in = arg;

	for (size_t i = 0; i < in->n_dev; i++)
		if (in->dev[i].id == a->device)
			in->dev[i].work++;
	if (!a->call && a->kind == DT_ACT_KERNEL && a->kc && a->timed) {
		in->other_ns[a->kc->lib] += a->gpu_end - a->gpu_start;
		in->other_n[a->kc->lib]++;
	}
}

/* Whether a library whose kernels count as lib's was loaded or called. */
static bool lib_used(const struct dt_file_info *fi, const struct info *in,
		     enum dt_lib lib)
{
	for (uint32_t i = 0; i < fi->n_libraries; i++) {
		const char *name = fi->libraries[i].name;
		if (dt_lib_of_library(name) == lib &&
		    (dt_library_info_get(fi, name, "file") ||
		     dt_library_info_get(fi, name, "path")))
			return true;
	}
	for (uint32_t i = 0; in->counts && i < in->n_apis; i++)
		if (in->counts[i].calls &&
		    dt_lib_of_library(fi->apis[i].library) == lib)
			return true;
	return false;
}

/* A wrapped library not loaded and never called, while kernels of it
 * ran: linked statically (said once for the libraries whose kernels
 * count alike, cuBLAS's and cuBLASLt's). */
static void print_static(const struct dt_file_info *fi, const struct info *in)
{
	bool said[DT_LIB_COUNT] = { false };
	char label[40], text[320];

	for (uint32_t i = 0; i < fi->n_libraries; i++) {
		const struct dt_library_def *l = &fi->libraries[i];
		enum dt_lib k = dt_lib_of_library(l->name);
		if (k == DT_LIB_OTHER || said[k] || lib_used(fi, in, k))
			continue;
		said[k] = true;
		if (!dt_static_text(l->name, in->other_ns[k], in->other_n[k],
				    text, sizeof(text)))
			continue;
		snprintf(label, sizeof(label), "%s:", dt_text(l->display));
		printf("%-12s %s\n", label, text);
	}
}

/* The GPU, or with several, each with what ran on it: a process sees
 * every GPU of its machine, a job's rank works on one. */
static void print_devices(const struct info *in)
{
	if (in->n_dev <= 1) {
		print_kv("GPU:", in->n_dev ? in->dev[0].text : NULL);
		return;
	}
	for (size_t i = 0; i < in->n_dev; i++) {
		char work[64] = "no work recorded";
		if (in->dev[i].work)
			snprintf(work, sizeof(work),
				 "%" PRIu64 " kernels, copies and sets",
				 in->dev[i].work);
		printf("%-12s %u: %s; %s\n", i ? "" : "GPUs:", in->dev[i].id,
		       dt_text(in->dev[i].text), work);
	}
}

/* Who wrote the trace: the file, the program and its process, when and
 * for how long, the libraries, the environment dnntrace was given. */
static void print_writer(const char *path, const struct dt_file_info *fi,
			 const struct dt_file_stats *st, uint64_t last,
			 const struct info *in)
{
	char b1[64], b2[64], when[64];
	time_t secs = (time_t)(fi->hdr.start_real / 1000000000u);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	printf("%-12s %s (%s)\n", "file:", dt_text(path),
	       dt_fmt_bytes(st->file_size, b1, sizeof(b1)));
	printf("%-12s %u.%u\n", "format:", fi->hdr.major, fi->hdr.minor);
	print_kv("program:", dt_info_get(fi, "cmdline"));
	printf("%-12s %s, pid %u (parent %u)\n", "process:",
	       dt_info_get(fi, "host") ? dt_text(dt_info_get(fi, "host")) : "?",
	       fi->hdr.pid, fi->hdr.ppid);
	printf("%-12s %s, for %s\n", "started:", when,
	       dt_fmt_ns(last - fi->hdr.start_mono, b2, sizeof(b2)));
	for (uint32_t i = 0; i < fi->n_libraries; i++)
		print_library(fi, &fi->libraries[i]);
	print_static(fi, in);
	char cuda[96];
	print_kv("CUDA:", dt_cuda_text(fi, cuda, sizeof(cuda)));
	for (size_t i = 0; i < fi->n_info; i++)
		if (!strncmp(fi->info[i].key, "env.", 4))
			printf("%-12s %s=%s\n",
			       "environment:", dt_text(fi->info[i].key + 4),
			       dt_text(fi->info[i].value));
	print_kv("recorder:", dt_info_get(fi, "dnntrace.version"));
}

/* The GPUs and how their activity, ranges and metrics were recorded. */
static void print_gpu(const struct info *in, const struct dt_file_info *fi,
		      const struct dt_model_stats *ms)
{
	print_devices(in);
	print_kv("GPU trace:", ms->gpu_state);
	print_kv("NVTX ranges:", dt_info_get(fi, "nvtx"));
	if (ms->gpu_metrics[0]) {
		char metrics[512];
		snprintf(metrics, sizeof(metrics),
			 "%s; %" PRIu64 " samples%s%s", ms->gpu_metrics,
			 ms->gpu_samples, ms->gpu_metrics_lost[0] ? "; " : "",
			 ms->gpu_metrics_lost);
		print_kv("GPU metrics:", metrics);
	}
}

/* What the trace holds: records, calls, GPU work, and what was lost. */
static void print_contents(const struct dt_file_stats *st,
			   const struct dt_model_stats *ms, uint64_t nested,
			   const struct dt_step_stats *steps)
{
	printf("%-12s %" PRIu64 " in %" PRIu64 " frames (%" PRIu64
	       " calls, %" PRIu64 " threads)\n",
	       "records:", st->records, st->frames, st->calls, ms->threads);
	if (ms->own_calls && !nested)
		printf("%-12s %" PRIu64 " the program's, %" PRIu64
		       " dnntrace's own (its queries of plans and algorithms)\n",
		       "calls:", ms->calls - ms->own_calls, ms->own_calls);
	else if (nested)
		printf("%-12s %" PRIu64 " the program's, %" PRIu64
		       " made by one library inside another's call, %" PRIu64
		       " dnntrace's own (its queries of plans and algorithms)\n",
		       "calls:", ms->calls - ms->own_calls - nested, nested,
		       ms->own_calls);
	if (ms->kernels || ms->copies)
		printf("%-12s %" PRIu64 " kernels, %" PRIu64
		       " copies and sets; %" PRIu64
		       " CUDA calls tied to the cuDNN calls that made "
		       "them%s\n",
		       "GPU work:", ms->kernels, ms->copies, ms->launches,
		       ms->untimed ? "; some kernels untimed" : "");
	char lost[1024];
	/* report's steps line: what report and diff are of by default */
	if (steps && dt_steps_text(steps, lost, sizeof(lost)))
		printf("%-12s %s\n", "steps:", lost);
	printf("%-12s %s\n",
	       "lost:", dt_lost_text(st, ms, "", lost, sizeof(lost)));
	if (st->gpu_dropped)
		printf("%-12s %" PRIu64
		       " GPU activity records dropped by CUPTI\n",
		       "", st->gpu_dropped);
	if (st->unknown)
		printf("%-12s %" PRIu64 " records of types this version does "
		       "not know\n",
		       "skipped:", st->unknown);
}

/* How the file ended: why, whether its index and seals are there, and
 * the ranges the reader skipped. */
static void print_ending(struct dt_session *ss, const struct dt_file_info *fi,
			 const struct dt_file_stats *st)
{
	char b1[64];

	printf("%-12s %s", "ended:", dt_file_end_name(st->end));
	if (st->have_end) {
		static const char *const why[] = { "exit", "signal", "exec",
						   "closed" };
		const char *w =
			st->end_rec.reason < 4 ? why[st->end_rec.reason] : "?";
		printf(" (%s %d)", w, st->end_rec.code);
	}
	if (st->bytes_lost)
		printf(", last %s unreadable",
		       dt_fmt_bytes(st->bytes_lost, b1, sizeof(b1)));
	if (st->error[0] && st->end != DT_FILE_CLEAN)
		printf(": %s", dt_text(st->error));
	printf("\n%-12s %s\n", "index:", st->have_index ? "yes" : "no");
	printf("%-12s %s\n", "sealed:",
	       st->sealed ? "yes: every frame's place, the header's and END's "
			    "checksums checked"
			  : "no (format before 1.6): END's counts checked; the "
			    "header and END cannot be verified");
	/* the program took the file's descriptor; the recorder reopened it */
	print_kv("descriptor:", dt_info_get(fi, "trace.fd"));
	size_t n_skips;
	const struct dt_skip *skips = dt_session_skips(ss, &n_skips);
	for (size_t i = 0; i < n_skips; i++) {
		char rb[32];
		printf("%-12s %s at offset %" PRIu64 ", %s%u frame%s, %s of "
		       "records: %s\n",
		       i ? "" : "skipped:",
		       dt_fmt_bytes(skips[i].size, b1, sizeof(b1)),
		       skips[i].offset, skips[i].exact ? "" : "at least ",
		       skips[i].frames, skips[i].frames == 1 ? "" : "s",
		       skips[i].record_bytes == DT_SKIP_UNKNOWN
			       ? "an unknown size"
			       : dt_fmt_bytes(skips[i].record_bytes, rb,
					      sizeof(rb)),
		       dt_skip_reason_str(skips[i].reason));
	}
	if (st->skips > n_skips)
		printf("%-12s (%" PRIu64 " more ranges)\n", "",
		       st->skips - n_skips);
}

/* The top most called functions (all when top < 0), from the counts by
 * API id, which are sorted in place. */
static void print_functions(struct api_count *counts,
			    const struct dt_file_info *fi, long top)
{
	char b1[64];
	uint32_t n = 0;

	for (uint32_t i = 0; i < fi->n_apis; i++)
		if (counts[i].calls)
			counts[n++] = (struct api_count){ i, counts[i].calls,
							  counts[i].failed,
							  counts[i].ns };
	qsort(counts, n, sizeof(*counts), by_calls);
	printf("\n%10s %8s %12s  %s\n", "calls", "failed", "host time",
	       "function");
	for (uint32_t i = 0; i < n && (top < 0 || i < (uint32_t)top); i++)
		printf("%10" PRIu64 " %8" PRIu64 " %12s  %s\n", counts[i].calls,
		       counts[i].failed,
		       dt_fmt_ns(counts[i].ns, b1, sizeof(b1)),
		       dt_text(fi->apis[counts[i].api].name));
	if (top >= 0 && n > (uint32_t)top)
		printf("%10s (%u more functions; --calls -1 lists "
		       "all)\n",
		       "", n - (uint32_t)top);
}

int dt_info_file(const char *path, long top)
{
	struct dt_session *ss = dt_open_session(path, NULL);

	if (!ss)
		return EXIT_USAGE;
	const struct dt_file_info *fi = dt_session_info(ss);
	struct info in = { .counts = calloc(fi->n_apis ? fi->n_apis : 1,
					    sizeof(*in.counts)),
			   .n_apis = fi->n_apis };
	struct dt_consumer c = { .arg = &in,
				 .call = on_call,
				 .activity = on_activity,
				 .device = on_device };
	dt_session_add(ss, &c);
	struct dt_stepper *stepper = dt_steps_watch(ss);
	dt_session_run(ss);
	struct dt_step_stats *steps =
		stepper ? dt_stepper_finish(stepper) : NULL;
	dt_stepper_free(stepper);
	const struct dt_model_stats *ms = dt_session_stats(ss);
	const struct dt_file_stats *st = dt_session_file(ss);
	uint64_t last = ms->t_last > fi->hdr.start_mono ? ms->t_last
							: fi->hdr.start_mono;
	if (st->have_end && st->end_rec.t > last)
		last = st->end_rec.t;

	print_writer(path, fi, st, last, &in);
	print_gpu(&in, fi, ms);
	print_contents(st, ms, in.nested, steps);
	dt_steps_free(steps);
	print_ending(ss, fi, st);
	if (in.counts && top != 0 && st->calls)
		print_functions(in.counts, fi, top);
	free(in.counts);
	dt_session_close(ss);
	return 0;
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "calls", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long top = 10;
	int c, rc = 0;

	optind = 1;
	while ((c = dt_getopt("info", argc, argv, "h", opts)) != -1) {
		if (c == 'c') {
			if (dt_parse_int(optarg, -1, INT_MAX, &top))
				return dt_usage_error("info",
						      "--calls takes a number "
						      "(-1 for all)");
		} else if (c == 'h') {
			return info_help(stdout), 0;
		} else {
			return EXIT_USAGE;
		}
	}
	if (optind == argc)
		return dt_usage_error("info", "expected a trace file");
	/* folders of a job's traces, as report takes them */
	size_t n;
	char **paths = dt_collect_inputs(argv + optind, argc - optind, &n);
	if (n < (size_t)(argc - optind) && !n)
		rc = EXIT_USAGE;
	for (size_t i = 0; i < n; i++) {
		if (i)
			putchar('\n');
		int one = dt_info_file(paths[i], top);
		if (one > rc)
			rc = one;
		free(paths[i]);
	}
	free(paths);
	return rc;
}
