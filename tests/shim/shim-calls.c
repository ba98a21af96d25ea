/*
 * shim-calls.c - a program that drives the real libcudnn through its
 * descriptor API (no GPU needed), for the shim's tests. Each mode makes a
 * known set of calls; test-shim.sh checks the trace against them.
 *
 *   shim-calls calls          one of each kind of argument the shim captures
 *   shim-calls threads N M    N threads making M calls each
 *   shim-calls fork           calls before and after fork(), in both processes
 *   shim-calls sigterm        calls, then a SIGTERM to itself
 *   shim-calls exec           calls, then exec of `true`
 *   shim-calls sleep          calls, then sleeps (for a SIGKILL)
 *   shim-calls ret3           calls, then returns 3 from main
 *   shim-calls vfork          a vfork child execs `true`, then calls
 *   shim-calls exitrace       threads keep calling while main exits
 *   shim-calls workers N      N forked children call, then end with _exit()
 *   shim-calls segv HOW WHEN  calls, then a crash (SIGSEGV) in a program with
 *                             its own handler, installed WHEN: ctor (in a
 *                             constructor, before any call), before (the
 *                             calls) or after (the first calls); HOW it
 *                             ends: reraise (restore SIG_DFL, raise again,
 *                             as Catch2), previous (put back what it found,
 *                             SA_SIGINFO and SA_NODEFER, as faulthandler),
 *                             resethand (SA_RESETHAND, return: the fault
 *                             repeats), exit (_exit(3) in the handler)
 *   shim-calls sigint         a SIGINT handler that returns; then more calls
 *   shim-calls sigign         SIGTERM ignored, raised; then more calls
 *   shim-calls gone PATH M    M calls, then waits (up to 20 s) for PATH to be
 *                             removed, then M calls more
 *   shim-calls handled SIG    as sigint, with signal SIG (a number)
 *   shim-calls mainexit       calls; main ends with pthread_exit while a
 *                             thread makes more calls, then returns
 *   shim-calls rss N          N threads make one call each and wait: prints
 *                             the resident memory they added, per thread
 *   shim-calls fds HOW FILE   calls; then, as a daemon does, closes every
 *                             descriptor but 0-2 (HOW: closefrom,
 *                             close_range, close: each one open, dup2: a
 *                             file put over each one, raw: the same with
 *                             the dup2 system call), opens FILE and writes
 *                             22 bytes to it; 2 000 calls; checks that FILE
 *                             holds its 22 bytes only
 *   shim-calls limit N        limits open files to N (soft and hard), then
 *                             makes 300 calls; prints how many failed
 *   shim-calls raise SIG      calls, then signal SIG (a number; RTMIN+N and
 *                             RTMAX-N too) at its default action
 */
#define _GNU_SOURCE
#include <cudnn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Checked call: these are all calls that succeed without a GPU. */
#define OK(call)                                                               \
	do {                                                                   \
		cudnnStatus_t s_ = (call);                                     \
		if (s_ != CUDNN_STATUS_SUCCESS) {                              \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, \
				#call, cudnnGetErrorString(s_));               \
			exit(1);                                               \
		}                                                              \
	} while (0)

static void tensor_calls(void)
{
	cudnnTensorDescriptor_t t;
	int dims[4] = { 2, 3, 4, 5 }, strides[4] = { 60, 20, 5, 1 };
	int nb = 0, gd[4] = { 0 }, gs[4] = { 0 };
	cudnnDataType_t dt;

	OK(cudnnCreateTensorDescriptor(&t));
	OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 8,
				      16, 32, 64));
	OK(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, dims, strides));
	OK(cudnnGetTensorNdDescriptor(t, 4, &dt, &nb, gd, gs));
	/* fails: negative size; recorded with its status */
	if (cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
				       -1, 1, 1, 1) == CUDNN_STATUS_SUCCESS)
		exit(1);
	OK(cudnnDestroyTensorDescriptor(t));
}

static void conv_calls(void)
{
	cudnnConvolutionDescriptor_t c;
	int pad[2] = { 1, 2 }, stride[2] = { 3, 4 }, dil[2] = { 1, 1 };

	OK(cudnnCreateConvolutionDescriptor(&c));
	OK(cudnnSetConvolutionNdDescriptor(c, 2, pad, stride, dil,
					   CUDNN_CROSS_CORRELATION,
					   CUDNN_DATA_FLOAT));
	OK(cudnnSetConvolutionGroupCount(c, 4));
	OK(cudnnDestroyConvolutionDescriptor(c));
}

static void backend_calls(void)
{
	cudnnBackendDescriptor_t d;
	int64_t dims[4] = { 1, 8, 16, 16 }, strides[4] = { 2048, 1, 128, 8 };
	int64_t uid = 42, align = 16, got[4] = { 0 }, n = 0;
	cudnnDataType_t dt = CUDNN_DATA_BFLOAT16;

	OK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &d));
	OK(cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_DATA_TYPE,
				    CUDNN_TYPE_DATA_TYPE, 1, &dt));
	OK(cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_DIMENSIONS,
				    CUDNN_TYPE_INT64, 4, dims));
	OK(cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_STRIDES,
				    CUDNN_TYPE_INT64, 4, strides));
	OK(cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_UNIQUE_ID,
				    CUDNN_TYPE_INT64, 1, &uid));
	OK(cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
				    CUDNN_TYPE_INT64, 1, &align));
	OK(cudnnBackendFinalize(d));
	OK(cudnnBackendGetAttribute(d, CUDNN_ATTR_TENSOR_DIMENSIONS,
				    CUDNN_TYPE_INT64, 4, &n, got));
	OK(cudnnBackendDestroyDescriptor(d));

	/* a plan's JSON representation, as a restoring program sets it:
	 * 100 000 characters that do not compress, recorded whole (cuDNN
	 * refuses them: they are no plan) */
	static char json[100001];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(json) - 1; i++) {
		x = x * 1103515245u + 12345u;
		json[i] = (char)('A' + (x >> 16) % 26);
	}
	OK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
					&d));
	cudnnBackendSetAttribute(d, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
				 CUDNN_TYPE_CHAR, sizeof(json) - 1, json);
	OK(cudnnBackendDestroyDescriptor(d));
}

static void *thread_main(void *arg)
{
	long m = (long)arg;

	for (long i = 0; i < m; i++) {
		cudnnTensorDescriptor_t t;
		OK(cudnnCreateTensorDescriptor(&t));
		OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW,
					      CUDNN_DATA_FLOAT, 1, 1, 1,
					      (int)i + 1));
		OK(cudnnDestroyTensorDescriptor(t));
	}
	return NULL;
}

static void *later_calls(void *arg)
{
	(void)arg;
	usleep(100000); /* after main's end */
	conv_calls();
	return NULL;
}

static pthread_barrier_t all_called;

static void *one_call(void *arg)
{
	(void)arg;
	thread_main((void *)1L);
	pthread_barrier_wait(&all_called); /* every thread has called */
	pthread_barrier_wait(&all_called); /* memory read: end */
	return NULL;
}

static long rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = atol(line + 6);
	if (f)
		fclose(f);
	return kib;
}

/* RSS added by n threads alive at once, each after one call, per thread. */
static int rss_per_thread(int n)
{
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	long before;

	thread_main((void *)1L); /* cuDNN loaded, the trace open */
	before = rss_kib();
	pthread_barrier_init(&all_called, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, one_call, NULL))
			return 1;
	pthread_barrier_wait(&all_called);
	printf("%ld KiB per thread\n", (rss_kib() - before) / n);
	pthread_barrier_wait(&all_called);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}

/* ------------------------------------- a program that closes descriptors */

/* The descriptors from 3 on this process has open, at most n. */
static int open_fds(int *fds, int n)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int k = 0, self = d ? dirfd(d) : -1;

	while (d && (e = readdir(d)) && k < n) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd > 2 && fd != self)
			fds[k++] = fd;
	}
	if (d)
		closedir(d);
	return k;
}

/* Put file at every descriptor from 3 on, but its own, then close them. */
static void put_over_all(int file, bool raw)
{
	int fds[256], n = open_fds(fds, 256);

	for (int i = 0; i < n; i++)
		if (fds[i] != file) {
			if (raw)
				syscall(SYS_dup2, file, fds[i]);
			else
				dup2(file, fds[i]);
		}
	for (int i = 0; i < n; i++)
		if (fds[i] != file)
			close(fds[i]);
}

static int foreign_fds(const char *how, const char *path)
{
	static const char text[] = "the program's 22 bytes";
	struct stat st;
	int fd, fds[256], n;

	tensor_calls();
	if (!strcmp(how, "closefrom")) {
		closefrom(3);
	} else if (!strcmp(how, "close_range")) {
		close_range(3, ~0u, 0);
	} else if (!strcmp(how, "close")) {
		n = open_fds(fds, 256);
		for (int i = 0; i < n; i++)
			close(fds[i]);
	} else if (!strcmp(how, "dup2") || !strcmp(how, "raw")) {
		int null = open("/dev/null", O_RDONLY);
		put_over_all(null, !strcmp(how, "raw"));
		close(null);
	} else {
		return 2;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, sizeof(text) - 1) != sizeof(text) - 1)
		return 1;
	if (!strcmp(how, "raw"))
		put_over_all(fd, true); /* its file at every number */
	thread_main((void *)2000L);
	if (stat(path, &st) || st.st_size != sizeof(text) - 1) {
		fprintf(stderr, "FAIL: %s holds %lld bytes, written %zu\n",
			path, (long long)st.st_size, sizeof(text) - 1);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------ programs with handlers */

static struct sigaction previous; /* what the handler found installed */
static const char *segv_how = "";

static void say(const char *s)
{
	(void)!write(2, s, strlen(s));
}

static void on_segv(int sig)
{
	say("handler ran\n");
	if (!strcmp(segv_how, "exit"))
		_exit(3);
	if (!strcmp(segv_how, "reraise")) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	/* resethand: return, and the fault repeats */
}

static void on_segv_info(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	say(info->si_signo == sig ? "handler ran\n" : "bad siginfo\n");
	sigaction(sig, &previous, NULL);
	raise(sig);
}

static void install_segv(void)
{
	struct sigaction sa, now;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (!strcmp(segv_how, "previous")) {
		sa.sa_sigaction = on_segv_info;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	} else {
		sa.sa_handler = on_segv;
		sa.sa_flags = !strcmp(segv_how, "resethand") ? SA_RESETHAND : 0;
	}
	if (sigaction(SIGSEGV, &sa, &previous) ||
	    previous.sa_handler != SIG_DFL)
		say("FAIL: the previous SIGSEGV action is not SIG_DFL\n");
	/* the program sees its own handler, not the recorder's */
	int flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
	if (sigaction(SIGSEGV, NULL, &now) ||
	    now.sa_sigaction != sa.sa_sigaction ||
	    (now.sa_flags & flags) != (sa.sa_flags & flags))
		say("FAIL: sigaction does not return the handler installed\n");
}

/* glibc passes main's arguments to constructors */
__attribute__((constructor)) static void early(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "segv") && !strcmp(argv[3], "ctor")) {
		segv_how = argv[2];
		install_segv();
	}
}

static int *volatile nowhere;

static void crash(void)
{
	*nowhere = 1;
}

static volatile sig_atomic_t got_int;

static void on_int(int sig)
{
	got_int = sig;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "calls";

	if (!strcmp(mode, "calls")) {
		size_t v = cudnnGetVersion();
		printf("version %zu: %s\n", v,
		       cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM));
		tensor_calls();
		conv_calls();
		backend_calls();
	} else if (!strcmp(mode, "threads") && argc == 4) {
		int n = atoi(argv[2]);
		pthread_t th[64];
		for (int i = 0; i < n && i < 64; i++)
			pthread_create(&th[i], NULL, thread_main,
				       (void *)atol(argv[3]));
		for (int i = 0; i < n && i < 64; i++)
			pthread_join(th[i], NULL);
	} else if (!strcmp(mode, "fork")) {
		tensor_calls();
		pid_t pid = fork();
		if (pid == 0) {
			conv_calls();
			conv_calls();
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		backend_calls();
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	} else if (!strcmp(mode, "sigterm")) {
		tensor_calls();
		raise(SIGTERM);
		pause();
	} else if (!strcmp(mode, "ret3")) {
		conv_calls();
		return 3;
	} else if (!strcmp(mode, "vfork")) {
		tensor_calls();
		pid_t pid = vfork();
		if (pid == 0) {
			execlp("true", "true", (char *)NULL);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
		conv_calls();
	} else if (!strcmp(mode, "exitrace")) {
		pthread_t th;
		for (int i = 0; i < 4; i++)
			pthread_create(&th, NULL, thread_main, (void *)100000L);
		usleep(50000);
		exit(0);
	} else if (!strcmp(mode, "workers") && argc == 3) {
		int n = atoi(argv[2]), bad = 0;
		for (int i = 0; i < n; i++)
			if (fork() == 0) {
				conv_calls();
				conv_calls();
				if (i % 2)
					_Exit(0);
				_exit(0);
			}
		for (int i = 0; i < n; i++) {
			int st;
			wait(&st);
			bad |= !WIFEXITED(st) || WEXITSTATUS(st);
		}
		tensor_calls();
		return bad;
	} else if (!strcmp(mode, "segv") && argc == 4) {
		segv_how = argv[2];
		if (!strcmp(argv[3], "before"))
			install_segv();
		tensor_calls();
		if (!strcmp(argv[3], "after"))
			install_segv();
		conv_calls();
		crash();
		return 1;
	} else if (!strcmp(mode, "sigint")) {
		tensor_calls();
		signal(SIGINT, on_int);
		raise(SIGINT);
		conv_calls();
		return got_int == SIGINT ? 0 : 1;
	} else if (!strcmp(mode, "handled") && argc == 3) {
		int sig = atoi(argv[2]);
		tensor_calls();
		signal(sig, on_int);
		raise(sig);
		conv_calls();
		return got_int == sig ? 0 : 1;
	} else if (!strcmp(mode, "sigign")) {
		tensor_calls();
		signal(SIGTERM, SIG_IGN);
		raise(SIGTERM);
		conv_calls();
		return signal(SIGTERM, SIG_DFL) == SIG_IGN ? 0 : 1;
	} else if (!strcmp(mode, "mainexit")) {
		pthread_t th;
		tensor_calls();
		pthread_create(&th, NULL, later_calls, NULL);
		pthread_exit(NULL);
	} else if (!strcmp(mode, "fds") && argc == 4) {
		return foreign_fds(argv[2], argv[3]);
	} else if (!strcmp(mode, "limit") && argc == 3) {
		struct rlimit rl = { atoi(argv[2]), atoi(argv[2]) };
		int failed = 0;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			return 2;
		for (int i = 0; i < 100; i++) {
			cudnnTensorDescriptor_t t;
			failed += cudnnCreateTensorDescriptor(&t) != 0;
			failed += cudnnSetTensor4dDescriptor(
					  t, CUDNN_TENSOR_NCHW,
					  CUDNN_DATA_FLOAT, 1, 1, 1, 1) != 0;
			failed += cudnnDestroyTensorDescriptor(t) != 0;
		}
		printf("%d failed\n", failed);
	} else if (!strcmp(mode, "rss") && argc == 3) {
		return rss_per_thread(atoi(argv[2]));
	} else if (!strcmp(mode, "raise") && argc == 3) {
		int sig = atoi(argv[2]);
		if (!strncmp(argv[2], "RTMIN+", 6))
			sig = SIGRTMIN + atoi(argv[2] + 6);
		else if (!strncmp(argv[2], "RTMAX-", 6))
			sig = SIGRTMAX - atoi(argv[2] + 6);
		tensor_calls();
		raise(sig);
		return 1;
	} else if (!strcmp(mode, "sleep")) {
		tensor_calls();
		sleep(30);
	} else if (!strcmp(mode, "gone") && argc == 4) {
		thread_main((void *)atol(argv[3]));
		for (int i = 0; i < 2000 && access(argv[2], F_OK) == 0; i++)
			usleep(10000);
		thread_main((void *)atol(argv[3]));
	} else if (!strcmp(mode, "exec")) {
		conv_calls();
		execlp("true", "true", (char *)NULL);
		return 1;
	} else {
		fprintf(stderr,
			"usage: %s calls | threads N M | fork | sigterm | "
			"exec\n",
			argv[0]);
		return 2;
	}
	return 0;
}
