/*
 * shim-core.c - the recording side of libdnntrace.so.
 *
 * Per-thread state, the process's one trace writer (opened at the first
 * recorded call), configuration from DNNTRACE_* variables, and the process
 * lifecycle: fork, exec and exit; what signals and _exit() need to finish
 * the file. The wrappers themselves are generated (dt-wrappers-<library>.c);
 * finding the real libraries is shim-libs.c's job, handling signals
 * shim-signals.c's. Nothing here knows which libraries are wrapped, and
 * nothing here may change what the application sees from them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dt-api.h"
#include "dt-config.h"
#include "dt-cupti.h"
#include "shim-runtime.h"
#include "dt-trace.h"
#include "shim-internal.h"

enum rec_state { ST_UNSET, ST_ON, ST_OFF };

static struct {
	_Atomic int state;      /* enum rec_state */
	_Atomic unsigned epoch; /* bumped by fork and exec: threads re-attach */
	_Atomic(struct dt_writer *) writer;
	pthread_mutex_t lock; /* opening and closing the writer */
	_Atomic uint64_t seq;
	pthread_key_t key; /* thread exit: detach the ring */
	bool key_ok;
	bool open_failed; /* do not retry until fork/exec */
	bool closing;     /* exit or exec: no new file */
	pid_t writer_pid; /* the process the writer belongs to */
	struct dt_writer_config cfg;
	char template_buf[PATH_MAX];
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* initial-exec: the shim is preloaded, so its TLS is static and every
 * wrapper reaches it with one instruction instead of a __tls_get_addr call. */
static __thread struct dt_thread tls __attribute__((tls_model("initial-exec")));

/* 0: GPU recording not started; 1: being started; 2: started or refused,
 * dt_cupti_state() says which */
static _Atomic int gpu_started;
/* This thread is starting it: CUPTI may call back into the shim (with
 * records, or through the driver's injection entry), which must not wait
 * for itself. */
static __thread bool gpu_starting __attribute__((tls_model("initial-exec")));
/* A file was created before the start was over, so its header could not
 * say whether GPU activity is in it. */
static _Atomic int gpu_state_unknown;

/*
 * write(2) that never raises a signal in the program: a file size limit
 * reached (SIGXFSZ, which ends the process) or a reader gone (SIGPIPE)
 * only fail the write, with EFBIG or EPIPE. Both are blocked in this
 * thread around it, and one the write raised is taken back before they
 * are unblocked, unless one was pending already: the program's own.
 */
static ssize_t write_quietly(int fd, const void *buf, size_t n)
{
	sigset_t quiet, old, pending, one;
	struct timespec now = { 0, 0 };
	ssize_t k;
	int err;

	sigemptyset(&quiet);
	sigaddset(&quiet, SIGXFSZ);
	sigaddset(&quiet, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	sigpending(&pending);
	k = write(fd, buf, n);
	err = errno;
	if (k < 0 && (err == EFBIG || err == EPIPE)) {
		int sig = err == EFBIG ? SIGXFSZ : SIGPIPE;
		sigemptyset(&one);
		sigaddset(&one, sig);
		if (!sigismember(&pending, sig))
			sigtimedwait(&one, NULL, &now);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return k;
}

void dt_warn(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "dnntrace: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write_quietly(STDERR_FILENO, buf, (size_t)n);
}

/* ------------------------------------------------- the last thread's end */

/* The main thread ended with pthread_exit(): from then on the writer's
 * thread asks, at each wake-up, whether any of the program's threads is
 * left (one not a zombie in /proc/self/task, its own aside). */
static _Atomic bool main_exited;

void dt_main_thread_exits(void)
{
	atomic_store(&main_exited, true);
}

/* Whether thread tid (a name in /proc/self/task) is still running: its
 * state, the field after the command name in parentheses, is not Z or X. */
static bool task_alive(const char *tid)
{
	char path[64], stat[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%s/stat", tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false; /* gone */
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return false;
	stat[n] = 0;
	const char *p = strrchr(stat, ')');
	return !p || (p[1] == ' ' && p[2] != 'Z' && p[2] != 'X');
}

static bool orphaned(void)
{
	char self[16];
	struct dirent *e;
	bool alone = true;
	DIR *d;

	if (!atomic_load(&main_exited) || !(d = opendir("/proc/self/task")))
		return false;
	snprintf(self, sizeof(self), "%ld", (long)syscall(SYS_gettid));
	while (alone && (e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, self))
			alone = !task_alive(e->d_name);
	closedir(d);
	return alone;
}

/* ---------------------------------------------------------- configuration */

/* A DNNTRACE_* ring size within the writer's bounds; 0 (the writer's
 * default) when unset or bad. */
static uint32_t env_ring_size(const char *name)
{
	const char *v = getenv(name);
	uint64_t n;

	if (!v || !*v)
		return 0;
	if (dt_parse_size(v, &n) || n == 0) {
		dt_warn("ignoring %s=%s: not a size (like 256K or 4M)", name,
			v);
		return 0;
	}
	if (n < DT_RING_MIN || n > DT_RING_MAX) {
		n = n < DT_RING_MIN ? DT_RING_MIN : DT_RING_MAX;
		dt_warn("%s=%s is out of range (64K to 1G); using %uK", name, v,
			(unsigned)(n >> 10));
	}
	return (uint32_t)n;
}

/* A DNNTRACE_* integer from min to max; def when unset or bad. */
static long env_int(const char *name, long min, long max, long def)
{
	const char *v = getenv(name);
	long n;

	if (!v || !*v)
		return def;
	if (dt_parse_int(v, min, max, &n)) {
		dt_warn("ignoring %s=%s: not a number from %ld to %ld", name, v,
			min, max);
		return def;
	}
	return n;
}

/* The writer's view of the wrapped libraries: what the trace says of
 * each (trace/FORMAT.md, LIBRARY). */
static const struct dt_library_def *libraries(void)
{
	static struct dt_library_def defs[DT_LIBRARY_COUNT];

	for (unsigned i = 0; i < DT_LIBRARY_COUNT; i++)
		defs[i] = (struct dt_library_def){
			.name = dt_libraries[i].name,
			.display = dt_libraries[i].display,
			.first_api = dt_libraries[i].first_api,
			.n_apis = dt_libraries[i].last_api -
				  dt_libraries[i].first_api + 1,
		};
	return defs;
}

static void load_config(void)
{
	const char *out = getenv("DNNTRACE_OUTPUT");

	memset(&g.cfg, 0, sizeof(g.cfg));
	if (out && *out) {
		snprintf(g.template_buf, sizeof(g.template_buf), "%s", out);
		g.cfg.path_template = g.template_buf;
	}
	g.cfg.ring_size = env_ring_size("DNNTRACE_BUFFER_SIZE");
	g.cfg.flush_ms =
		(uint32_t)env_int("DNNTRACE_FLUSH_MS", 1, DT_FLUSH_MS_MAX, 0);
	g.cfg.level = (int)env_int("DNNTRACE_ZSTD_LEVEL", -7, 19, 0);
	g.cfg.api_names = dt_api_names;
	g.cfg.api_sigs = dt_api_sigs;
	g.cfg.api_flags = dt_api_flags;
	g.cfg.api_count = DT_API_COUNT;
	g.cfg.libraries = libraries();
	g.cfg.n_libraries = DT_LIBRARY_COUNT;
	g.cfg.orphaned = orphaned;
	/* the trace starts now, though its file is created at the first event
	 */
	struct timespec m, r;
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	g.cfg.start_mono =
		(uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec;
	g.cfg.start_real =
		(uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec;
}

/* ------------------------------------------------------------ the clock */

struct dt_tsc_clock dt_tsc;
static _Atomic bool tsc_busy; /* a thread is rebasing */

#define TSC_REBASE_NS 100000000u  /* 100 ms between rebases */
#define TSC_CALIBRATE_NS 2000000u /* the first rate: over 2 ms */

/* A reading of the counter and CLOCK_MONOTONIC together: the counter's
 * midpoint around the clock's reading. */
static uint64_t tsc_pair(uint64_t *ns)
{
#if defined(__x86_64__)
	uint64_t a, b, best = UINT64_MAX, mid = 0;
	/* the narrowest of a few: a thread preempted between the readings
	 * would pair them microseconds apart */
	for (int i = 0; i < 4; i++) {
		uint64_t n;
		a = __rdtsc();
		n = dt_clock_mono();
		b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			mid = a + (b - a) / 2;
			*ns = n;
		}
	}
	return mid;
#else
	*ns = dt_clock_mono();
	return 0;
#endif
}

#define SET(field, v) \
	atomic_store_explicit(&dt_tsc.field, (v), memory_order_relaxed)

uint64_t dt_tsc_rebase(uint64_t tsc)
{
	uint64_t ns, t1;

	if (tsc < DT_RELAXED(dt_tsc.tsc0) || atomic_exchange(&tsc_busy, true))
		return dt_clock_mono(); /* another CPU a little behind, or
					   another thread rebasing */
	t1 = tsc_pair(&ns);
	uint64_t dt = t1 - DT_RELAXED(dt_tsc.tsc0);
	uint64_t dns = ns - DT_RELAXED(dt_tsc.ns0);
	uint64_t mult = DT_RELAXED(dt_tsc.mult);
	bool on = atomic_load(&dt_tsc.on);
	/* the rate of the interval just over: CLOCK_MONOTONIC is slewed by
	 * NTP, and this follows it */
	if (dt > 0 && dns > 0)
		mult = (uint64_t)(((unsigned __int128)dns << 32) / dt);
	/* the first intervals grow from the calibration's: a rate measured
	 * over 2 ms is not trusted for 100 */
	uint64_t next_ns = dns * 8 < TSC_REBASE_NS ? dns * 8 : TSC_REBASE_NS;
	uint64_t next = mult ? t1 + (uint64_t)(((unsigned __int128)next_ns
						<< 32) /
					       mult)
			     : t1;
	uint32_t seq = atomic_load_explicit(&dt_tsc.seq, memory_order_relaxed);
	atomic_store_explicit(&dt_tsc.seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	SET(mult, mult);
	SET(tsc0, t1);
	SET(ns0, ns);
	SET(next, next);
	atomic_store_explicit(&dt_tsc.seq, seq + 2, memory_order_release);
	if (!on && mult) {
		atomic_store(&dt_tsc.on, true);
		atomic_store(&dt_tsc.armed, false);
	}
	atomic_store(&tsc_busy, false);
	return ns;
}

/* dt_now while calibrating: the clock's own reading, and the first rate
 * once TSC_CALIBRATE_NS have passed since tsc_start's pair. A call costs
 * one clock read here, as without the counter. */
uint64_t dt_tsc_calibrate(void)
{
	uint64_t ns = dt_clock_mono();

#if defined(__x86_64__)
	if (ns - DT_RELAXED(dt_tsc.ns0) >= TSC_CALIBRATE_NS)
		return dt_tsc_rebase(__rdtsc());
#endif
	return ns;
}

/* Whether the kernel keeps time with the counter: then it is invariant
 * and the same on every CPU, as dt_now needs. */
static bool tsc_usable(void)
{
#if defined(__x86_64__)
	char src[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/"
			"current_clocksource", "re");
	if (f) {
		if (!fgets(src, sizeof(src), f))
			src[0] = 0;
		fclose(f);
	}
	return !strcmp(src, "tsc\n") && !dt_env_true("DNNTRACE_NO_TSC");
#else
	return false;
#endif
}

static void tsc_start(void)
{
	uint64_t ns;

	if (atomic_load(&dt_tsc.on) || atomic_load(&dt_tsc.armed) ||
	    !tsc_usable())
		return;
	SET(tsc0, tsc_pair(&ns));
	SET(ns0, ns);
	atomic_store(&dt_tsc.armed, true);
}

/* Decide, once, whether this process records. */
static int init_state(void)
{
	int st = atomic_load(&g.state);

	if (st != ST_UNSET)
		return st;
	pthread_mutex_lock(&g.lock);
	st = atomic_load(&g.state);
	if (st == ST_UNSET) {
		load_config();
		if (!g.key_ok)
			g.key_ok =
				pthread_key_create(&g.key, dt_thread_exit) == 0;
		st = dt_env_true("DNNTRACE_DISABLE") ? ST_OFF : ST_ON;
		if (st == ST_ON)
			tsc_start();
		atomic_store(&g.state, st);
	}
	pthread_mutex_unlock(&g.lock);
	return st;
}

/* ------------------------------------------------------------ exit status */

/* The status the process exits with, whether main returned it or exit()
 * was called: on_exit handlers get it. Registered when the first file is
 * opened, after the C library registered the loader's own exit work, so
 * that it runs before the destructors that finish the file. */
static int exit_status;

static void note_exit_status(int status, void *arg)
{
	(void)arg;
	exit_status = status;
}

static void watch_exit_status(void)
{
	static bool done; /* copied by fork, as the registration is */

	if (!done)
		done = on_exit(note_exit_status, NULL) == 0;
}

/* ---------------------------------------------------------------- writer */

/*
 * `dnntrace record` learns what each process did from a pipe it names in
 * DNNTRACE_MANIFEST and reads while the program runs: one line per trace
 * written (its path), and one line starting with '!' per problem (a
 * sentence). One write of at most PIPE_BUF per line, so lines of processes
 * never mix; never blocking (record gone: no reader, nothing said; the
 * pipe full: a little wait); async-signal-safe but for the formatting.
 */
static void manifest_line(const char *fmt, ...)
{
	const char *manifest = getenv("DNNTRACE_MANIFEST");
	char line[PIPE_BUF];
	va_list ap;
	int n, fd;

	if (!manifest || !*manifest)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	fd = open(manifest, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	for (int tries = 0; tries < 100; tries++) {
		struct timespec ms = { 0, 1000000 };
		if (write_quietly(fd, line, (size_t)n) >= 0 || errno != EAGAIN)
			break;
		nanosleep(&ms, NULL);
	}
	close(fd);
}

static void announce(struct dt_writer *w)
{
	manifest_line("%s", dt_writer_path(w));
	if (dt_env_true("DNNTRACE_VERBOSE"))
		dt_warn("recording pid %d to %s", (int)getpid(),
			dt_writer_path(w));
}

/* The file could not be created: say so here and to `dnntrace record`. */
static void report_open_failure(int err)
{
	const char *tmpl =
		g.cfg.path_template ? g.cfg.path_template : DT_DEFAULT_TEMPLATE;
	char path[PATH_MAX], buf[256];

	if (dt_expand_template(tmpl, path, sizeof(path)))
		snprintf(path, sizeof(path), "%s", tmpl);
	const char *why = dt_writer_why(err, path, buf, sizeof(buf));
	dt_warn("cannot create the trace file %s: %s; recording is off", path,
		why);
	manifest_line("!pid %d: cannot create %s: %s; its calls were not "
		      "recorded",
		      (int)getpid(), path, why);
}

/* After the file was closed: the records it could not take, if any, or
 * all of them when it was removed and could not be made again. */
static void report_io_error(struct dt_writer *w)
{
	uint64_t lost, records, calls;
	int err, removed = dt_writer_removed(w, &err, &records, &calls);
	char what[PATH_MAX + 128];

	if (removed < 0)
		snprintf(what, sizeof(what),
			 "%s was removed while recording and could not be made "
			 "again (%s): %llu records, %llu calls, lost",
			 dt_writer_path(w), strerror(err),
			 (unsigned long long)records,
			 (unsigned long long)calls);
	else if (removed > 0)
		snprintf(what, sizeof(what),
			 "%s was removed while recording: made again, whole",
			 dt_writer_path(w));
	if (removed) {
		dt_warn("%s", what);
		if (removed > 0) /* under a name that may differ */
			manifest_line("%s", dt_writer_path(w));
		manifest_line("!pid %d: %s", (int)getpid(), what);
		if (removed < 0)
			return;
	}
	err = dt_writer_io_error(w, &lost);
	if (err)
		manifest_line("!pid %d: %s could not take every record (%s): "
			      "%llu records lost, counted in the file",
			      (int)getpid(), dt_writer_path(w), strerror(err),
			      (unsigned long long)lost);
}

static struct dt_writer *open_writer(void)
{
	struct dt_writer *w = atomic_load(&g.writer);

	if (w || g.open_failed || g.closing)
		return w;
	pthread_mutex_lock(&g.lock);
	w = atomic_load(&g.writer);
	if (!w && !g.open_failed && !g.closing) {
		struct dt_kv info[8 + 4 * DT_LIBRARY_COUNT];
		size_t n =
			dt_shim_info(info, sizeof(info) / sizeof(info[0]) - 1);

		/* known unless this thread is starting CUPTI, or another one
		 * did not finish in time: then a GPU_STATE record follows */
		bool known = atomic_load(&gpu_started) == 2;
		info[n++] = (struct dt_kv){
			"gpu", known ? dt_cupti_state()
				     : "unknown: GPU recording was starting "
				       "(see the GPU_STATE record)"
		};
		if (!known)
			atomic_store(&gpu_state_unknown, 1);

		g.cfg.info = info;
		g.cfg.n_info = n;
		w = dt_writer_open(&g.cfg);
		g.cfg.info = NULL;
		g.cfg.n_info = 0;
		if (w) {
			g.writer_pid = getpid();
			atomic_store(&g.writer, w);
			dt_signals_take();
			watch_exit_status();
			announce(w);
		} else {
			g.open_failed = true;
			report_open_failure(errno);
		}
	}
	pthread_mutex_unlock(&g.lock);
	return w;
}

/* Finish the file. Only the process that opened it may: a vfork child,
 * or one made with a raw clone, shares or copies the parent's writer but
 * not its thread. No new file is opened meanwhile (threads still calling
 * cuDNN would otherwise start one); `reopen` allows it again after. */
static void close_writer(enum dt_end_reason reason, int code, bool reopen)
{
	struct dt_writer *w;

	if (g.writer_pid && g.writer_pid != getpid())
		return;
	/* under the lock: another thread may be opening the file right now
	 * (the program exits while its threads make their first calls) */
	pthread_mutex_lock(&g.lock);
	if (g.writer_pid != getpid()) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	g.closing = true;
	w = atomic_exchange(&g.writer, NULL);
	atomic_fetch_add(&g.epoch, 1);
	pthread_mutex_unlock(&g.lock);
	if (w) {
		dt_writer_close(w, reason, code);
		report_io_error(w);
	}
	if (reopen) {
		pthread_mutex_lock(&g.lock);
		g.closing = false;
		atomic_fetch_add(&g.epoch,
				 1); /* threads that failed try again */
		pthread_mutex_unlock(&g.lock);
	}
}

/* The trace's descriptor in this process, or -1; not a vfork child's,
 * whose descriptors are its own copy. */
int dt_trace_fd(void)
{
	struct dt_writer *w = atomic_load(&g.writer);
	int fd = w ? dt_writer_fd(w) : -1;

	return fd >= 0 && g.writer_pid == getpid() ? fd : -1;
}

bool dt_owns_fd(int fd)
{
	struct dt_writer *w = atomic_load(&g.writer);

	/* the process is asked last: getpid() is a system call */
	return fd >= 0 && w && dt_writer_fd(w) == fd &&
	       g.writer_pid == getpid();
}

void dt_move_trace_fd(void)
{
	struct dt_writer *w = atomic_load(&g.writer);

	if (w && g.writer_pid == getpid())
		dt_writer_move_fd(w);
}

/* Finish the file at once, for a signal handler or _exit(): the writer's
 * and CUPTI's threads do the work, this only asks and waits. Not in a
 * vfork child, whose parent's the writer is; but where no file was opened
 * yet, kernels still in CUPTI's buffers may create one. */
void dt_finish_now(enum dt_end_reason reason, int code, unsigned timeout_ms)
{
	struct dt_writer *w;

	if (g.writer_pid && g.writer_pid != getpid())
		return;
	dt_cupti_flush_async(1000);
	w = atomic_load(&g.writer);
	if (w && !dt_writer_close_async(w, reason, code, timeout_ms))
		report_io_error(w);
}

void dt_flush_now(unsigned timeout_ms)
{
	struct dt_writer *w = atomic_load(&g.writer);

	if (w && g.writer_pid == getpid())
		dt_writer_flush(w, timeout_ms);
}

void dt_before_exit(int status)
{
	if (atomic_load(&g.state) == ST_ON)
		dt_finish_now(DT_END_EXIT, status, 10000);
}

/* ------------------------------------------------------------ GPU activity */

static struct dt_thread *current_thread(void);

void dt_library_found(unsigned lib, const char *path)
{
	/* the shim's lock: open_writer() reads the path under it for the
	 * header, so a header and these records never both miss it */
	pthread_mutex_lock(&g.lock);
	struct dt_writer *w = atomic_load(&g.writer);
	if (dt_library_path_set(lib, path) && w && g.writer_pid == getpid()) {
		struct dt_kv kv[DT_LIBRARY_KV];
		size_t n = dt_library_info(lib, kv, DT_LIBRARY_KV);
		for (size_t i = 0; i < n; i++)
			dt_writer_info(w, kv[i].key, kv[i].value);
	}
	pthread_mutex_unlock(&g.lock);
}

/* The sink for CUPTI's records: they go to the ring of whichever thread
 * hands them over (CUPTI's own, the flusher, or one at exit). Those are not
 * the application's threads, so waiting a little for room is allowed. */
static int emit_activity(const void *rec, uint32_t size)
{
	struct dt_thread *t = current_thread();

	if (!t)
		return 0;
	for (int tries = 0; tries < 200; tries++) {
		void *p = dt_ring_try_reserve(t->ring, size);
		if (p) {
			memcpy(p, rec, size);
			dt_ring_commit(t->ring);
			return 1;
		}
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	dt_ring_count_lost(t->ring); /* given up after 200 ms: one lost */
	return 0;
}

/* The sink for records the program's threads make around their calls
 * (CUDA graph nodes and links): like a call's record, they never wait. */
static int emit_now(const void *rec, uint32_t size)
{
	struct dt_thread *t = current_thread();
	void *p;

	if (!t)
		return 0;
	if (!(p = dt_ring_reserve(t->ring, size)))
		return 0; /* the ring counts it lost */
	memcpy(p, rec, size);
	dt_ring_commit(t->ring);
	return 1;
}

static const struct dt_cupti_sink gpu_sink = { emit_activity, emit_now };

static void gpu_atexit(void)
{
	dt_cupti_stop();
}

/* Tell a file whose header could not say whether GPU activity is recorded
 * what came of it (a GPU_STATE record). */
static void emit_gpu_state(bool on)
{
	const char *why = dt_cupti_state();
	uint32_t len = (uint32_t)strnlen(why, 1024);
	uint32_t size = dt_rec_align(sizeof(struct dt_rec_gpu_state) + len);
	uint8_t buf[sizeof(struct dt_rec_gpu_state) + 1032]
		__attribute__((aligned(8))) = { 0 };
	struct dt_rec_gpu_state *r = (void *)buf;

	r->hdr.type = DT_REC_GPU_STATE;
	r->hdr.size = size;
	r->t = dt_now();
	r->state = on ? DT_GPU_ON : DT_GPU_OFF;
	r->len = len;
	memcpy(r + 1, why, len);
	emit_activity(buf, size);
}

/*
 * Start recording GPU activity, once, before the trace file exists, so that
 * its header can say whether GPU activity is in it: a thread that finds
 * another one starting it waits (`wait`: the application's threads, never
 * CUPTI's or the driver's, which the starting thread may be waiting for),
 * at most a few seconds.
 */
static void start_gpu(bool wait)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&gpu_started, &expected, 1)) {
		gpu_starting = true;
		bool on = dt_cupti_start(&gpu_sink, g.cfg.flush_ms);
		gpu_starting = false;
		atomic_store(&gpu_started, 2);
		if (on) {
			/* registered now, after the CUDA runtime's own
			 * handlers, so it runs before them: CUPTI is flushed
			 * while CUDA still works */
			atexit(gpu_atexit);
			dt_signals_take();
		}
		if (atomic_exchange(&gpu_state_unknown, 0))
			emit_gpu_state(on);
		return;
	}
	for (int ms = 0; wait && !gpu_starting && ms < 5000 &&
			 atomic_load(&gpu_started) == 1;
	     ms++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

/* Before a call that can launch work: its launches tagged with its seq,
 * and, when GPU recording is sampled, the window count read (dt-cupti.h;
 * dt_call_begin reads it again); the count is read first, so that a
 * window opening in between leaves the call marked (it was not tagged). */
/* A nested call's launches are its outer call's: it ties none to itself,
 * nor opens a graph scope of its own. */
void dt_gpu_push(struct dt_thread *t)
{
	if (t->depth > 1)
		return;
	if (dt_cupti_sampled) {
		t->gpu_window = atomic_load(&dt_cupti_window);
		t->gpu_sampling = true;
	}
	int tie = dt_cupti_tagging;
	if (tie == DT_TIE_CALLBACK)
		dt_cupti_call = t->seq;
	else if (tie == DT_TIE_RECORDS)
		dt_cupti_push(t->seq);
	t->gpu_tagged = (uint8_t)tie;
}

void dt_gpu_pop(struct dt_thread *t)
{
	if (t->depth > 1)
		return;
	if (t->gpu_tagged == DT_TIE_CALLBACK)
		dt_cupti_call = 0;
	else
		dt_cupti_pop();
	t->gpu_tagged = 0;
}

/* The CUDA driver calls this when CUDA_INJECTION64_PATH names this library
 * (`dnntrace record` sets it): GPU activity is then recorded from the
 * first kernel, also in processes that never call a wrapped library. */
DT_EXPORT int InitializeInjection(void)
{
	if (init_state() == ST_ON)
		start_gpu(false);
	return 1;
}

/* Whether this process records, for a program that asks (the Python
 * module's dnntrace.recording(), which finds it by name): what
 * DNNTRACE_DISABLE decided, and no longer once the process is exiting. */
DT_EXPORT int dnntrace_recording(void)
{
	return init_state() == ST_ON;
}

/* ------------------------------------------------------ per-thread state */

static uint32_t gettid_cached(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

void dt_thread_exit(void *arg)
{
	struct dt_thread *t = arg;

	if (t->ring && t->epoch == atomic_load(&g.epoch))
		dt_ring_detach(t->ring);
	t->ring = NULL;
}

/* First recorded call of this thread (or first since fork or exec); `app`:
 * the thread is the application's, making a wrapped call. */
static bool attach_thread(struct dt_thread *t, bool app)
{
	/* the epoch first: a writer closed after it makes this ring stale */
	unsigned epoch = atomic_load(&g.epoch);
	start_gpu(app);
	struct dt_writer *w = open_writer();
	char name[17] = "";

	if (!w)
		return false;
	t->tid = gettid_cached();
	prctl(PR_GET_NAME, name, 0, 0, 0);
	t->ring = dt_writer_attach(w, t->tid, name);
	t->epoch = epoch;
	if (!t->ring) {
		dt_warn("no memory for thread %u's buffer; its calls are "
			"not recorded (counted as lost)",
			t->tid);
		return false;
	}
	if (g.key_ok)
		pthread_setspecific(g.key, t);
	return true;
}

/* Give t a ring of the current epoch; false if none can be had (tried
 * once per thread and epoch). */
static bool ensure_ring(struct dt_thread *t, bool app)
{
	unsigned epoch = atomic_load_explicit(&g.epoch, memory_order_relaxed);

	if (DT_LIKELY(t->epoch == epoch && t->ring))
		return true;
	if (t->broken && t->epoch == epoch)
		return false;
	t->broken = !attach_thread(t, app);
	if (t->broken)
		t->epoch = epoch;
	return !t->broken;
}

static struct dt_thread *current_thread(void)
{
	return init_state() == ST_ON && ensure_ring(&tls, false) ? &tls : NULL;
}

/*
 * A call made from inside a wrapped call of the same library is the
 * library's own business (cuDNN's dispatcher calling itself) and is not
 * recorded. One made from inside a call of another library (cuDNN calling
 * cuBLASLt) is recorded, flagged nested, so that readers show it under the
 * outer call and do not count it as the program's; one level only.
 */
struct dt_thread *dt_enter_library(unsigned library)
{
	struct dt_thread *t;

	if (tls.depth > 1 || (tls.depth && tls.library == library))
		return NULL;
	if (!(t = dt_thread_now()))
		return NULL;
	if (t->depth) {
		t->outer_seq = t->seq;
		t->outer_library = t->library;
		t->depth = 2;
	} else {
		t->depth = 1;
	}
	t->library = library;
	t->seq = atomic_fetch_add_explicit(&g.seq, 1, memory_order_relaxed) + 1;
	return t;
}

struct dt_thread *dt_thread_now(void)
{
	struct dt_thread *t = &tls;

	if (DT_UNLIKELY(atomic_load_explicit(&g.state, memory_order_relaxed) !=
			ST_ON) &&
	    init_state() != ST_ON)
		return NULL;
	if (DT_UNLIKELY(!ensure_ring(t, true))) {
		struct dt_writer *w = atomic_load(&g.writer);
		if (w)
			dt_writer_count_lost(w, DT_LOSS_NOBUF);
		return NULL;
	}
	return t;
}

void dt_leave(struct dt_thread *t)
{
	if (t->depth > 1) {
		/* back in the outer call, which is of the other library */
		t->seq = t->outer_seq;
		t->library = t->outer_library;
		t->depth = 1;
		return;
	}
	if (DT_UNLIKELY(t->graph.graph))
		dt_cupti_graph_end(&t->graph, t->seq);
	t->depth = 0;
}

void dt_graph_begin_slow(struct dt_thread *t, void *handle)
{
	void *stream = NULL;

	if (t->depth == 1 && handle &&
	    dt_stream_of(t->library, handle, &stream))
		dt_cupti_graph_begin_stream(&t->graph, stream);
}

void dt_graph_begin_stream_slow(struct dt_thread *t, void *stream)
{
	if (t->depth == 1)
		dt_cupti_graph_begin_stream(&t->graph, stream);
}

void dt_graph_begin_graph_slow(struct dt_thread *t, void *graph, uint32_t how)
{
	if (t->depth == 1)
		dt_cupti_graph_begin(&t->graph, graph, how);
}

uint8_t *dt_call_begin(struct dt_thread *t, unsigned api, uint64_t t0,
		       uint64_t t1, int32_t status, uint32_t len)
{
	uint32_t size =
		dt_rec_align((uint32_t)sizeof(struct dt_rec_api_call) + len);
	struct dt_rec_api_call *r;
	uint16_t flags = t->by_dnntrace ? DT_CALL_BY_DNNTRACE : 0;

	if (DT_UNLIKELY(t->depth > 1))
		flags |= DT_CALL_NESTED; /* the outer call's sampling stands */
	else if (DT_UNLIKELY(t->gpu_sampling)) {
		/* ran wholly or partly outside a sampling window: none open
		 * when it began, or one opened or closed since */
		if (!(t->gpu_window & 1) ||
		    atomic_load(&dt_cupti_window) != t->gpu_window)
			flags |= DT_CALL_UNSAMPLED;
		t->gpu_sampling = false;
	}
	if (DT_UNLIKELY(len > DT_REC_MAX - sizeof(*r)))
		return NULL;
	r = dt_ring_reserve(t->ring, size);
	if (DT_UNLIKELY(!r))
		return NULL;
	/* zero the alignment padding so files are reproducible: the padding
	 * is less than the record's last word, zeroed first by one store
	 * (not a call to memset), then written over by what comes before it */
	memset((uint8_t *)r + size - 8, 0, 8);
	r->hdr.type = DT_REC_API_CALL;
	r->hdr.reserved = 0;
	r->hdr.size = size;
	r->api = (uint16_t)api;
	r->flags = flags;
	r->tid = t->tid;
	r->seq = t->seq;
	r->t_begin = t0;
	r->t_end = t1;
	r->status = status;
	r->len = len;
	t->api = api;
	t->args = (const uint8_t *)(r + 1);
	t->status = status;
	return (uint8_t *)(r + 1);
}

void dt_call_end(struct dt_thread *t)
{
	dt_ring_commit(t->ring);
	if (DT_UNLIKELY(dt_after_call[t->api] != NULL))
		dt_after_call[t->api](t);
}

/* -------------------------------------------------------------- lifecycle */

static void after_fork_child(void)
{
	/* The writer, its thread and every other thread's ring belong to the
	 * parent; the child starts over with a file of its own. */
	pthread_mutex_init(&g.lock, NULL);
	atomic_store(&tsc_busy, false); /* a thread rebasing did not follow */
	atomic_store(&main_exited, false); /* this thread is the child's main */
	dt_cupti_forget(); /* CUPTI does not follow a fork */
	/* nor does a thread that was starting it: then the child never will */
	int starting = 1;
	atomic_compare_exchange_strong(&gpu_started, &starting, 2);
	atomic_store(&gpu_state_unknown, 0);
	struct dt_writer *w = atomic_exchange(&g.writer, NULL);
	if (w)
		dt_writer_abandon(w);
	g.open_failed = false;
	g.closing = false;
	atomic_fetch_add(&g.epoch, 1);
	tls.ring = NULL;
	dt_signals_after_fork();
	dt_streams_after_fork();
	/* the child's trace starts now, and says it is a fork's child */
	load_config();
	g.cfg.proc_event = DT_PROC_FORK;
}

void dt_before_exec(void)
{
	if (!atomic_load(&g.writer) || g.writer_pid != getpid())
		return;
	dt_cupti_flush_async(1000); /* kernels still in CUPTI's buffers */
	close_writer(DT_END_EXEC, 0, true);
	g.open_failed = false;
}

static const struct dt_cupti_host cupti_host = { dt_dlsym_next };

__attribute__((constructor)) static void shim_init(void)
{
	dt_cupti_init(&cupti_host); /* first: its CUPTI wrappers need it */
	dt_signals_init();
	dt_process_init();
	pthread_atfork(NULL, NULL, after_fork_child);
	init_state();
}

__attribute__((destructor)) static void shim_fini(void)
{
	if (g.writer_pid && g.writer_pid != getpid())
		return; /* a raw clone's child: the writer is the parent's */
	gpu_atexit();
	/* calls made from now on (other threads, later destructors) are
	 * forwarded without recording */
	atomic_store(&g.state, ST_OFF);
	close_writer(DT_END_EXIT, exit_status, false);
}
