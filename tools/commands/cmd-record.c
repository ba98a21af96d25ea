/*
 * cmd-record.c - `dnntrace record`: run a program with libdnntrace.so
 * preloaded, then say where its traces went.
 *
 * Every process of the program that calls cuDNN writes its own file; each
 * says which, and what went wrong, through a pipe this command reads while
 * the program runs (the manifest).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dt-config.h"
#include "tools.h"

/* Where libdnntrace.so is looked for beside this program: the build
 * tree's shim/, then the folder it is installed in. */
static const char *const shim_dirs[] = { "../shim", DT_BIN_TO_LIBDIR };

/* libdnntrace.so: $DNNTRACE_LIB, else found beside this program. */
static const char *find_shim(char *buf)
{
	const char *env = getenv("DNNTRACE_LIB");

	if (env && *env)
		return access(env, R_OK) == 0 ? realpath(env, buf) : NULL;
	return dt_find_beside(shim_dirs, sizeof(shim_dirs) / sizeof(*shim_dirs),
			      "libdnntrace.so", R_OK, buf);
}

static void record_help(FILE *f)
{
	char shim[PATH_MAX];
	const char *lib = find_shim(shim);

	fprintf(f,
		"usage: dnntrace record [options] [--] COMMAND [ARGS...]\n\n"
		"Runs COMMAND with every cuDNN call recorded. Each process "
		"that "
		"calls cuDNN\nwrites one trace file; the paths are printed at "
		"the end.\n\n"
		"  -o, --output TEMPLATE  trace file names (default %s):\n"
		"                         %%p pid, %%h host, %%t start time, "
		"%%q{VAR} environment\n"
		"                         variable, %%%% a percent sign; "
		"missing "
		"folders are created;\n"
		"                         a folder (or a name ending in /) "
		"gets the default name\n"
		"      --buffer-size N    buffer per recording thread, 64K to "
		"1G (default 1M),\n"
		"                         rounded up to a power of two\n"
		"      --flush-ms N       longest time records wait in memory, "
		"ms (default 500)\n"
		"      --disable          preload the shim but record nothing "
		"(overhead baseline)\n"
		"      --gpu KINDS        GPU activity to record: any of "
		"kernel,"
		"memcpy,memset,\n"
		"                         or none (default: all three)\n"
		"      --gpu-metrics[=US] also sample the GPU's DRAM traffic\n"
		"                         every US microseconds (default 100; "
		"needs access to\n"
		"                         the GPU's performance counters)\n"
		"      --gpu-sample N[:MS] record GPU activity in one window of "
		"MS ms (default\n"
		"                         100) in N, placed at random, CUPTI "
		"off in between:\n"
		"                         per-op GPU times come from the "
		"executions timed\n"
		"                         (experimental; refused on CUPTI "
		"13.0.1 and older,\n"
		"                         which can crash doing it)\n"
		"  -q, --quiet            do not print where the traces went\n"
		"  -h, --help             show this help\n\n"
		"The same settings work without this command:\n"
		"  LD_PRELOAD=%s%s \\\n"
		"  DNNTRACE_OUTPUT=TEMPLATE COMMAND [ARGS...]\n"
		"(also DNNTRACE_BUFFER_SIZE, DNNTRACE_FLUSH_MS, "
		"DNNTRACE_DISABLE=1, DNNTRACE_CUPTI=0, "
		"DNNTRACE_GPU_METRICS=US,\n"
		"DNNTRACE_GPU_SAMPLE=N[:MS], "
		"DNNTRACE_VERBOSE=1). GPU kernels are recorded through CUPTI, "
		"from the first\nkernel when CUDA_INJECTION64_PATH names the "
		"library too (record sets it, unless\nanother tool injects "
		"itself: Nsight Systems, Nsight Compute), else from the\n"
		"first cuDNN call.\n",
		DT_DEFAULT_TEMPLATE, lib ? lib : "/path/to/libdnntrace.so",
		lib ? "" : " (not found here: set DNNTRACE_LIB)");
}

/* A relative template is taken from here, not from each process's own
 * working directory (programs change it). */
static int absolute_template(const char *tmpl, char *buf, size_t size)
{
	char cwd[PATH_MAX];

	if (tmpl[0] == '/')
		return snprintf(buf, size, "%s", tmpl) >= (int)size ? -1 : 0;
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	return snprintf(buf, size, "%s/%s", cwd, tmpl) >= (int)size ? -1 : 0;
}

/* Append a copy of s to a growing array of strings. */
static void push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return;
	*v = nv;
	if ((nv[*n] = strdup(s)))
		(*n)++;
}

/*
 * What the processes say, through a pipe named in DNNTRACE_MANIFEST: a
 * trace's path per line, or '!' and a sentence about something that went
 * wrong. A pipe, read while the program runs, takes a line where a file
 * could not: on a full disk, or under a file size limit of 0, which is
 * when it has the most to say.
 */
struct manifest {
	char dir[32];
	char path[64];
	int fd;
	char line[PATH_MAX + 256]; /* a line not yet whole */
	size_t len;
};

/* A private folder holding the pipe, which this process opens for reading
 * and writing: it then never reads an end of file between two writers. */
static int manifest_open(struct manifest *m)
{
	snprintf(m->dir, sizeof(m->dir), "/tmp/dnntrace-XXXXXX");
	m->len = 0;
	m->fd = -1;
	if (!mkdtemp(m->dir))
		return -1;
	snprintf(m->path, sizeof(m->path), "%s/manifest", m->dir);
	if (mkfifo(m->path, 0600) == 0 &&
	    (m->fd = open(m->path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) >= 0)
		return 0;
	int err = errno;
	unlink(m->path);
	rmdir(m->dir);
	errno = err;
	return -1;
}

static void manifest_close(struct manifest *m)
{
	close(m->fd);
	unlink(m->path);
	rmdir(m->dir);
}

/* A line of the manifest. A trace made again after it was removed is
 * listed again, maybe under the same name: listed once. */
static void manifest_take(struct dt_record_result *res, const char *line)
{
	if (line[0] == '!') {
		push(&res->notes, &res->n_notes, line + 1);
		return;
	}
	for (size_t i = 0; i < res->n_paths; i++)
		if (!strcmp(res->paths[i], line))
			return;
	if (line[0])
		push(&res->paths, &res->n_paths, line);
}

/* Read what is there now, line by line. */
static void manifest_read(struct manifest *m, struct dt_record_result *res)
{
	ssize_t k;

	while ((k = read(m->fd, m->line + m->len,
			 sizeof(m->line) - 1 - m->len)) > 0) {
		char *p = m->line, *nl;
		m->len += (size_t)k;
		m->line[m->len] = 0;
		while ((nl = memchr(p, '\n', m->len - (size_t)(p - m->line)))) {
			*nl = 0;
			manifest_take(res, p);
			p = nl + 1;
		}
		m->len -= (size_t)(p - m->line);
		memmove(m->line, p, m->len);
		if (m->len == sizeof(m->line) - 1)
			m->len = 0; /* no line is that long: drop it */
	}
}

/* Whether a note speaks of path. */
static bool noted(const struct dt_record_result *res, const char *path)
{
	for (size_t i = 0; i < res->n_notes; i++)
		if (strstr(res->notes[i], path))
			return true;
	return false;
}

/* A trace listed but removed since is not listed as written: its process
 * says what was lost with it, or, where it could not, this does. */
static void drop_missing(struct dt_record_result *res)
{
	size_t kept = 0;
	struct stat st;

	for (size_t i = 0; i < res->n_paths; i++) {
		char *p = res->paths[i];
		if (stat(p, &st) == 0) {
			res->paths[kept++] = p;
			continue;
		}
		if (!noted(res, p)) {
			char note[PATH_MAX + 64];
			snprintf(note, sizeof(note),
				 "%s was written, and removed since", p);
			push(&res->notes, &res->n_notes, note);
		}
		free(p);
	}
	res->n_paths = kept;
}

static void on_child(int sig)
{
	(void)sig; /* only to wake ppoll() */
}

/* Wait for the child, reading the manifest meanwhile. SIGCHLD is blocked
 * but while in ppoll(), so an exit is never missed between the two. */
static int wait_child(pid_t pid, struct manifest *m,
		      struct dt_record_result *res)
{
	struct sigaction sa = { .sa_handler = on_child };
	sigset_t chld, old;
	int status = 1 << 8;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	for (;;) {
		struct pollfd pfd = { .fd = m->fd, .events = POLLIN };
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			dt_error("waitpid: %s", strerror(errno));
			status = 1 << 8;
			break;
		}
		ppoll(&pfd, 1, NULL, &old);
		manifest_read(m, res);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	manifest_read(m, res);
	drop_missing(res);
	return status;
}

/* Whether the program runs under Nsight Compute, which injects itself
 * without CUDA_INJECTION64_PATH and leaves NV_NSIGHT_INJECTION_* in the
 * environment (ncu 2025.3). */
static bool nsight_compute_injecting(void)
{
	extern char **environ;

	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "NV_NSIGHT_INJECTION_", 20))
			return true;
	return false;
}

/*
 * Refuse, before anything runs, an output where no trace can go: a device
 * or a pipe, or a folder that cannot be written. Where the name depends on
 * the process (%p, or %q{RANK} in a folder's name), what is fixed before
 * the first % is checked: the nearest folder that exists must be writable.
 * Returns 0, or says why and returns EXIT_USAGE.
 */

static int check_output(const char *tmpl)
{
	const char *pct = strchr(tmpl, '%');
	char dir[PATH_MAX];
	struct stat st;
	int err = 0;

	snprintf(dir, sizeof(dir), "%.*s",
		 (int)(pct ? (size_t)(pct - tmpl) : strlen(tmpl)), tmpl);
	if (!pct && stat(dir, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode)) {
		dt_error("%s is a device or a pipe, not a trace file or a "
			 "folder",
			 tmpl);
		return EXIT_USAGE;
	}
	/* the folder the files go in: the template itself when it names one,
	 * else up to its last '/' (it is absolute) */
	if (pct || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		*strrchr(dir, '/') = 0;
	/* missing folders are created: the nearest one that exists decides */
	while (dir[0] && stat(dir, &st) != 0 && errno == ENOENT)
		*strrchr(dir, '/') = 0;
	if (!dir[0])
		strcpy(dir, "/");
	if (stat(dir, &st))
		err = errno;
	else if (!S_ISDIR(st.st_mode))
		err = ENOTDIR;
	else if (access(dir, W_OK | X_OK))
		err = errno;
	if (err) {
		dt_error("cannot write traces in %s: %s", dir, strerror(err));
		return EXIT_USAGE;
	}
	return 0;
}

/* A comma-separated list of GPU activity kinds, each known. */
static bool gpu_kinds_ok(const char *list)
{
	static const char *const kinds[] = { "kernel", "memcpy", "memset" };
	const char *p = list;

	for (;;) {
		size_t n = strcspn(p, ","), i;
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (n == strlen(kinds[i]) && !strncmp(p, kinds[i], n))
				break;
		if (i == sizeof(kinds) / sizeof(kinds[0]))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

/* --gpu-sample N[:MS]: N from 2, MS from 1 ms to an hour */
static bool gpu_sample_ok(const char *arg)
{
	const char *colon = strchr(arg, ':');
	char n[32];
	long v;

	if (!colon)
		return !dt_parse_int(arg, 2, 1000000, &v);
	if ((size_t)(colon - arg) >= sizeof(n))
		return false;
	snprintf(n, sizeof(n), "%.*s", (int)(colon - arg), arg);
	return !dt_parse_int(n, 2, 1000000, &v) &&
	       !dt_parse_int(colon + 1, 1, 3600000, &v);
}

static pid_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "flush-ms", required_argument, NULL, 'f' },
		{ "disable", no_argument, NULL, 'd' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "gpu-metrics", optional_argument, NULL, 'm' },
		{ "gpu-sample", required_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tmpl = DT_DEFAULT_TEMPLATE;
	bool quiet = false;
	uint64_t size;
	long ms;
	struct dt_record_result res;
	int c, rc;

	optind = 1;
	/* '+': options end at the command, whose own options are its own */
	while ((c = dt_getopt("record", argc, argv, "+o:qh", opts)) != -1) {
		switch (c) {
		case 'o':
			tmpl = optarg;
			break;
		case 'b':
			if (dt_parse_size(optarg, &size) ||
			    size < DT_RING_MIN || size > DT_RING_MAX)
				return dt_usage_error(
					"record", "--buffer-size takes a size "
						  "from 64K to 1G, like 256K "
						  "or 4M");
			setenv("DNNTRACE_BUFFER_SIZE", optarg, 1);
			break;
		case 'f':
			if (dt_parse_int(optarg, 1, DT_FLUSH_MS_MAX, &ms))
				return dt_usage_error(
					"record", "--flush-ms takes a number "
						  "of milliseconds from 1 to "
						  "3600000");
			setenv("DNNTRACE_FLUSH_MS", optarg, 1);
			break;
		case 'd':
			setenv("DNNTRACE_DISABLE", "1", 1);
			break;
		case 'g':
			if (!strcmp(optarg, "none"))
				setenv("DNNTRACE_CUPTI", "0", 1);
			else if (!gpu_kinds_ok(optarg))
				return dt_usage_error(
					"record", "--gpu takes kernel, memcpy "
						  "and memset, separated by "
						  "commas, or none");
			else
				setenv("DNNTRACE_CUPTI_KINDS", optarg, 1);
			break;
		case 'm':
			if (optarg &&
			    dt_parse_int(optarg, 1, 1000000, &ms))
				return dt_usage_error(
					"record", "--gpu-metrics takes an "
						  "interval in microseconds "
						  "from 1 to 1000000");
			setenv("DNNTRACE_GPU_METRICS", optarg ? optarg : "100",
			       1);
			break;
		case 's':
			if (!gpu_sample_ok(optarg))
				return dt_usage_error(
					"record", "--gpu-sample takes N or "
						  "N:MS, one window of MS "
						  "milliseconds in N, N from "
						  "2");
			setenv("DNNTRACE_GPU_SAMPLE", optarg, 1);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			record_help(stdout);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind == argc)
		return dt_usage_error("record", "expected a command to run");
	rc = dt_record_run(argv + optind, tmpl, &res);
	if (rc < 0)
		return EXIT_USAGE;
	dt_record_say(&res, quiet);
	dt_record_free(&res);
	return rc;
}

void dt_record_say(const struct dt_record_result *res, bool quiet)
{
	for (size_t i = 0; i < res->n_paths && !quiet; i++)
		fprintf(stderr, "%s %s\n", i ? "         " : "dnntrace: trace",
			dt_text(res->paths[i]));
	for (size_t i = 0; i < res->n_notes; i++)
		dt_error("%s", res->notes[i]);
	if (!res->n_paths && !res->n_notes && res->ran && !quiet)
		dt_error("no trace written: no process of the program called "
			 "a library dnntrace records or ran work on a GPU");
}

void dt_record_free(struct dt_record_result *res)
{
	for (size_t i = 0; i < res->n_paths; i++)
		free(res->paths[i]);
	for (size_t i = 0; i < res->n_notes; i++)
		free(res->notes[i]);
	free(res->paths);
	free(res->notes);
	memset(res, 0, sizeof(*res));
}

/* Start cmd; returns its pid, or -1 with errno from exec (ENOENT,
 * EACCES, ENOEXEC, ...) when it could not be run. The child reports a
 * failed exec through a pipe that a successful exec closes. */
static pid_t spawn(char **cmd)
{
	int pfd[2], err = 0;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		execvp(cmd[0], cmd);
		err = errno;
		(void)!write(pfd[1], &err, sizeof(err));
		_exit(127);
	}
	close(pfd[1]);
	if (pid > 0) {
		ssize_t k;
		while ((k = read(pfd[0], &err, sizeof(err))) < 0 &&
		       errno == EINTR)
			;
		if (k == (ssize_t)sizeof(err)) {
			waitpid(pid, NULL, 0);
			pid = -1;
			errno = err;
		}
	}
	close(pfd[0]);
	return pid;
}

int dt_record_run(char **cmd, const char *tmpl, struct dt_record_result *res)
{
	char shim[PATH_MAX], abs_tmpl[PATH_MAX], test[PATH_MAX];
	struct manifest m;
	int status;

	memset(res, 0, sizeof(*res));
	if (dt_expand_template(tmpl, test, sizeof(test)))
		return -dt_usage_error("record",
				       "bad output template '%s' "
				       "(known: %%p %%h %%t %%q{VAR} %%%%)",
				       tmpl);
	if (absolute_template(tmpl, abs_tmpl, sizeof(abs_tmpl)))
		return -dt_usage_error("record", "output template too long");
	if (check_output(abs_tmpl))
		return -EXIT_USAGE;
	if (!find_shim(shim)) {
		dt_error("cannot find libdnntrace.so (looked in %s/%s; set "
			 "DNNTRACE_LIB)",
			 dt_self_dir(), DT_BIN_TO_LIBDIR);
		return -1;
	}
	if (manifest_open(&m)) {
		dt_error("cannot create a pipe in /tmp: %s", strerror(errno));
		return 1;
	}
	/* The CUDA driver then starts GPU recording at cuInit, from the first
	 * kernel on, also in processes that never call cuDNN. Another tool's
	 * injection is left in place: Nsight Systems' in the variable, Nsight
	 * Compute's without it, which refuses to profile when it is set. */
	if (!getenv("CUDA_INJECTION64_PATH") && !nsight_compute_injecting())
		setenv("CUDA_INJECTION64_PATH", shim, 1);
	/* The program's NVTX ranges come to the shim the same way; a tool
	 * that holds NVTX already keeps it, and the trace says so. */
	if (!getenv("NVTX_INJECTION64_PATH"))
		setenv("NVTX_INJECTION64_PATH", shim, 1);
	if (dt_record_preload(shim, cmd[0]) ||
	    setenv("DNNTRACE_OUTPUT", abs_tmpl, 1) ||
	    setenv("DNNTRACE_MANIFEST", m.path, 1)) {
		dt_error("cannot set the environment: %s", strerror(errno));
		manifest_close(&m);
		return 1;
	}

	child_pid = spawn(cmd);
	if (child_pid < 0) {
		int err = errno;
		manifest_close(&m);
		if (err == ENOENT && !strchr(cmd[0], '/'))
			dt_error("cannot run %s: no such command in PATH",
				 cmd[0]);
		else
			dt_error("cannot run %s: %s", cmd[0], strerror(err));
		/* as shells do: 127 not found, 126 found but not runnable */
		return err == ENOENT || err == ENOTDIR ? 127 : 126;
	}
	res->ran = true;
	/* The terminal's ^C reaches the child by itself; a SIGTERM sent to
	 * this process is passed on, and either way we wait for the child so
	 * its traces are complete before we print them. */
	struct sigaction sa = { .sa_handler = forward_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	status = wait_child(child_pid, &m, res);
	manifest_close(&m);
	if (WIFSIGNALED(status)) {
		dt_error("%s was killed by signal %d", cmd[0],
			 WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
