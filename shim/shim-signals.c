/*
 * shim-signals.c - the trace survives fatal signals, whoever handles them.
 *
 * A process that dies of a signal must still finish its file. Many programs
 * install their own handlers for those signals (Catch2, Python's
 * faulthandler, servers), which later restore the default action and raise
 * the signal again. So once recording starts, the shim's handler sits in
 * the kernel for each fatal signal, and the application's disposition is
 * kept beside it: sigaction() and signal() are interposed, the application
 * sets and reads its own disposition as if the shim were not there, and the
 * shim's handler passes each signal on to it with the flags and mask the
 * application asked for. The file is finished only when the signal is about
 * to end the process, that is when the application's disposition is the
 * default one; SIG_IGN goes to the kernel as it is. Not covered: handlers
 * installed with the raw system call (Go's runtime) or by the C library
 * itself (abort()'s second raise, sigset()); those replace the shim's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim-internal.h"

/* Whether sig's default action ends the process: every signal but those
 * whose default is to be ignored, to stop or to continue, and those that
 * cannot be caught. The real-time signals below SIGRTMIN are glibc's own
 * (thread cancellation, setxid): left alone. */
static bool ends_by_default(int sig)
{
	switch (sig) {
	case SIGKILL:
	case SIGSTOP:
	case SIGCHLD:
	case SIGCONT:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
	case SIGURG:
	case SIGWINCH:
		return false;
	}
	return sig > 0 && sig < NSIG && (sig < 32 || sig >= SIGRTMIN);
}

/* The application's disposition of one signal, read by the handler on any
 * thread: a sequence lock (odd while it changes) instead of a mutex, which a
 * handler could not take. */
static struct {
	_Atomic unsigned seq;
	struct sigaction sa;
} app[NSIG];

static bool managed[NSIG]; /* ends the process by default; taken over */
static pid_t owner;        /* the process whose signals are taken */
static bool say_stack;     /* DNNTRACE_BACKTRACE: a crash prints its stack */

/* The C library's functions, looked up at load: a handler may need them,
 * and dlsym is no function to call in one. */
static struct {
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	__sighandler_t (*signal)(int, __sighandler_t);
	__sighandler_t (*bsd_signal)(int, __sighandler_t);
	__sighandler_t (*sysv_signal)(int, __sighandler_t);
} libc;

void dt_signals_init(void)
{
	*(void **)&libc.sigaction = dlsym(RTLD_NEXT, "sigaction");
	*(void **)&libc.signal = dlsym(RTLD_NEXT, "signal");
	*(void **)&libc.bsd_signal = dlsym(RTLD_NEXT, "bsd_signal");
	*(void **)&libc.sysv_signal = dlsym(RTLD_NEXT, "sysv_signal");
}

static void app_get(int sig, struct sigaction *out)
{
	unsigned s;

	do {
		while ((s = atomic_load_explicit(&app[sig].seq,
						 memory_order_acquire)) &
		       1)
			;
		memcpy(out, &app[sig].sa, sizeof(*out));
		atomic_thread_fence(memory_order_acquire);
	} while (atomic_load_explicit(&app[sig].seq, memory_order_relaxed) !=
		 s);
}

static unsigned app_lock(int sig)
{
	unsigned s;

	do
		s = atomic_load(&app[sig].seq) & ~1u;
	while (!atomic_compare_exchange_weak(&app[sig].seq, &s, s + 1));
	return s;
}

static void app_unlock(int sig, unsigned s)
{
	atomic_store_explicit(&app[sig].seq, s + 2, memory_order_release);
}

static void on_signal(int sig, siginfo_t *info, void *uc);

/* What the kernel gets for the application's disposition a: SIG_IGN as it
 * is; otherwise the shim's handler with the application's mask and flags
 * (SA_RESETHAND is done by the shim, which must see the signal first). */
static int install(int sig, const struct sigaction *a)
{
	struct sigaction k = *a;

	if (a->sa_handler == SIG_IGN)
		return libc.sigaction(sig, a, NULL);
	k.sa_sigaction = on_signal;
	if (a->sa_handler == SIG_DFL) {
		/* an alternate stack, where the program set one, lets the
		 * file be finished after a stack overflow */
		sigemptyset(&k.sa_mask);
		k.sa_flags = SA_SIGINFO | SA_ONSTACK;
	} else {
		k.sa_flags = (a->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
	}
	return libc.sigaction(sig, &k, NULL);
}

/* Set the application's disposition: the kernel's, then the copy. No
 * handler of this thread may run meanwhile: it would wait for the copy
 * forever. */
static int app_set(int sig, const struct sigaction *a)
{
	sigset_t all, mask;
	unsigned s;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &mask);
	s = app_lock(sig);
	rc = install(sig, a);
	if (rc == 0)
		app[sig].sa = *a;
	app_unlock(sig, s);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	return rc;
}

/* A crash's signal, address and thread, then (after the trace is
 * finished, should the unwinding fault) its stack, on stderr: for a crash
 * the program does not handle itself, where the shim's threads and
 * CUPTI's die without a Python or C++ handler to say where. Only write(),
 * and backtrace(), whose library was loaded when the signals were taken;
 * the line is made by hand, not by printf. */
static bool is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
	       sig == SIGFPE || sig == SIGABRT;
}

static size_t put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return n;
}

static size_t put_num(char *p, uint64_t v, unsigned base)
{
	char d[24];
	size_t n = 0, k = 0;

	do
		d[n++] = "0123456789abcdef"[v % base];
	while (v /= base);
	if (base == 16) {
		p[k++] = '0';
		p[k++] = 'x';
	}
	while (n)
		p[k++] = d[--n];
	return k;
}

static void say_crash_head(int sig, const siginfo_t *info)
{
	char line[200], name[17] = "";
	size_t n = 0;

	prctl(PR_GET_NAME, name);
	n += put_str(line + n, "dnntrace: SIG");
	n += put_str(line + n, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	if (info && info->si_code > 0) { /* raised by a fault */
		n += put_str(line + n, " at ");
		n += put_num(line + n, (uintptr_t)info->si_addr, 16);
	} else if (info) {
		n += put_str(line + n, " sent by pid ");
		n += put_num(line + n, (uint64_t)info->si_pid, 10);
	}
	n += put_str(line + n, " in thread ");
	n += put_num(line + n, (uint64_t)syscall(SYS_gettid), 10);
	n += put_str(line + n, " \"");
	n += put_str(line + n, name);
	n += put_str(line + n, "\"; its stack:\n");
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

static void say_crash_stack(void)
{
	void *pc[64];
	int n = backtrace(pc, 64);

	backtrace_symbols_fd(pc, n, STDERR_FILENO);
}

static void on_signal(int sig, siginfo_t *info, void *uc)
{
	struct sigaction a;

	app_get(sig, &a);
	if (a.sa_handler == SIG_DFL) {
		int saved = errno;
		struct sigaction dfl = { .sa_handler = SIG_DFL };

		bool stack = say_stack && is_crash(sig);
		if (stack)
			say_crash_head(sig, info);
		/* the signal ends the process: finish the file, then let
		 * the default action happen (the signal is blocked until this
		 * returns, unless the program asked for SA_NODEFER) */
		dt_finish_now(DT_END_SIGNAL, sig, 2000);
		if (stack)
			say_crash_stack();
		sigemptyset(&dfl.sa_mask);
		libc.sigaction(sig, &dfl, NULL);
		raise(sig);
		errno = saved;
		return;
	}
	if (a.sa_handler == SIG_IGN)
		return; /* changed while the signal was on its way */
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigemptyset(&dfl.sa_mask);
		app_set(sig, &dfl);
	}
	/* abort() resets SIGABRT behind the shim's back and raises it again
	 * when the handler returns: have the records on disk by then */
	if (sig == SIGABRT)
		dt_flush_now(1000);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, info, uc);
	else
		a.sa_handler(sig);
}

void dt_signals_take(void)
{
	static _Atomic int done;
	sigset_t all, old;

	if (atomic_exchange(&done, 1) || !libc.sigaction)
		return;
	/* no handler of this thread may see a half-made copy */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	owner = getpid();
	if (dt_env_true("DNNTRACE_BACKTRACE")) {
		void *pc[1];
		backtrace(pc, 1); /* loads the unwinder now, not in a handler */
		say_stack = true;
	}
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction cur;
		unsigned s;

		if (!ends_by_default(sig))
			continue;
		s = app_lock(sig);

		if (libc.sigaction(sig, NULL, &cur) == 0 &&
		    install(sig, &cur) == 0) {
			app[sig].sa = cur;
			managed[sig] = true;
		}
		app_unlock(sig, s);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void dt_signals_after_fork(void)
{
	owner = getpid(); /* the child inherited the handlers, and the copy */
}

/* Whether sig's disposition is the shim's to keep: taken over, and in the
 * process that took it (a vfork child shares the copy, not the kernel's). */
static bool is_managed(int sig)
{
	return sig > 0 && sig < NSIG && managed[sig] && owner == getpid();
}

DT_EXPORT int sigaction(int sig, const struct sigaction *act,
			struct sigaction *oldact)
{
	struct sigaction a, prev;
	int rc = 0;

	if (!libc.sigaction)
		dt_signals_init(); /* called before the shim's constructor */
	if (!libc.sigaction)
		return errno = ENOSYS, -1;
	if (!is_managed(sig))
		return libc.sigaction(sig, act, oldact);
	if (act)
		a = *act; /* act and oldact may be the same */
	app_get(sig, &prev);
	if (act)
		rc = app_set(sig, &a);
	if (rc == 0 && oldact)
		*oldact = prev;
	return rc;
}

/* signal() and its kin for a signal the shim keeps: through sigaction()
 * above, with the flags glibc gives them (signal(): the signal blocked in
 * its handler, system calls restarted). Others go to the C library. */
#define SET_HANDLER(name, sig, h, flags, mask_self)           \
	if (!libc.name)                                       \
		dt_signals_init();                            \
	if (!is_managed(sig))                                 \
		return libc.name ? libc.name(sig, h)          \
				 : (errno = ENOSYS, SIG_ERR); \
	return set_handler(sig, h, flags, mask_self)

static __sighandler_t set_handler(int sig, __sighandler_t h, int flags,
				  bool mask_self)
{
	struct sigaction a = { .sa_handler = h, .sa_flags = flags }, old;

	sigemptyset(&a.sa_mask);
	if (mask_self && sig > 0 && sig < NSIG)
		sigaddset(&a.sa_mask, sig);
	if (h == SIG_ERR || sigaction(sig, &a, &old))
		return errno = EINVAL, SIG_ERR;
	return old.sa_handler;
}

DT_EXPORT __sighandler_t signal(int sig, __sighandler_t h)
{
	SET_HANDLER(signal, sig, h, SA_RESTART, true);
}

DT_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t h)
{
	SET_HANDLER(bsd_signal, sig, h, SA_RESTART, true);
}

DT_EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t h)
{
	SET_HANDLER(sysv_signal, sig, h, SA_RESETHAND | SA_NODEFER, false);
}
