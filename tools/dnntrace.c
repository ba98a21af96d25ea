/*
 * dnntrace.c - the dnntrace command: dispatches to one subcommand per
 * source file (cmd-*.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-config.h"
#include "tools.h"

static const struct dt_cmd commands[] = {
	{ "record", cmd_record, "run a program and record its cuDNN calls" },
	{ "info", cmd_info,
	  "show a trace's identity, totals and how it ended" },
	{ "dump", cmd_dump, "print every record of a trace, one per line" },
	{ "ops", cmd_ops,
	  "list the operations the program executed on the GPU" },
	{ "report", cmd_report,
	  "where the time went: GPU time, operations, calls" },
	{ "diff", cmd_diff,
	  "compare two runs; with --fail-on, gate CI on the changes" },
	{ "kernels", cmd_kernels,
	  "the GPU kernels: count, total, mean, median, min, max" },
	{ "fusion", cmd_fusion,
	  "chains of GPU work that one cuDNN graph could run fused" },
	{ "export", cmd_export,
	  "write traces out for Perfetto, SQLite or CSV" },
	{ "replay", cmd_replay,
	  "time a trace's problems again on a GPU, with every engine" },
	{ "demo", cmd_demo,
	  "record the bundled cuDNN sample and show the trace" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: dnntrace <command> [options] [arguments]\n\n"
		   "Records every cuDNN call of a program, and analyzes the "
		   "traces.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(f, "\n'dnntrace <command> --help' describes a command; "
		   "'dnntrace --version'\n(-V) prints the version.\n");
}

void dt_error(const char *fmt, ...)
{
	va_list ap;

	fputs("dnntrace: ", stderr);
	va_start(ap, fmt);
	dt_vprint_text(stderr, false, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int dt_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dnntrace %s: ", cmd);
	va_start(ap, fmt);
	dt_vprint_text(stderr, false, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'dnntrace %s --help'.\n", cmd);
	return EXIT_USAGE;
}

struct dt_session *dt_open_session(const char *path,
				   const struct dt_session_opts *opts)
{
	char why[512];
	struct dt_session *s =
		dt_session_open(path, opts, NULL, why, sizeof(why));

	if (!s)
		dt_error("%s", why);
	return s;
}

const char *dt_self_dir(void)
{
	static char dir[PATH_MAX];

	if (!dir[0]) {
		ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
		if (n <= 0)
			return ".";
		dir[n] = 0;
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
	}
	return dir;
}

const char *dt_find_beside(const char *const *dirs, size_t n_dirs,
			   const char *name, int mode, char *buf)
{
	for (size_t i = 0; i < n_dirs; i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%s/%s", dt_self_dir(), dirs[i],
			 name);
		if (access(p, mode) == 0 && realpath(p, buf))
			return buf;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!name) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(name, "-h") || !strcmp(name, "--help") ||
	    !strcmp(name, "help")) {
		if (argc > 2 && strcmp(name, "help") == 0) {
			char *sub[] = { argv[2], "--help", NULL };
			for (size_t i = 0;
			     i < sizeof(commands) / sizeof(commands[0]); i++)
				if (!strcmp(commands[i].name, argv[2]))
					return commands[i].run(2, sub);
		}
		usage(stdout);
		return 0;
	}
	if (!strcmp(name, "-V") || !strcmp(name, "--version") ||
	    !strcmp(name, "version")) {
		printf("dnntrace %s\n", DT_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return dt_finish(commands[i].run(argc - 1, argv + 1));
	dt_error("'%s' is not a dnntrace command", name);
	usage(stderr);
	return EXIT_USAGE;
}
