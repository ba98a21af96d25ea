/*
 * shim-process.c - process events the trace must not miss: exec replaces
 * the image, _exit() ends the process without running exit handlers
 * (forked workers, Python's os._exit): finish the file first. Each wrapper
 * does its small part and calls the C library's own function; nothing else
 * changes. A process that ends with the raw exit_group system call is not
 * seen. pthread_exit() in the main thread leaves the process to its other
 * threads, of which the writer's must not be the last.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim-internal.h"

/* The C library's _exit and _Exit, looked up at load: _exit may be called
 * from a signal handler, where dlsym must not be. */
static void (*real_exit)(int), (*real_Exit)(int);

void dt_process_init(void)
{
	*(void **)&real_exit = dlsym(RTLD_NEXT, "_exit");
	*(void **)&real_Exit = dlsym(RTLD_NEXT, "_Exit");
	dt_fds_init();
}

/* dt_before_exit() takes no lock, and leaves alone a file that is not this
 * process's (a vfork child's parent's, a fork child's that recorded
 * nothing). */
static __attribute__((noreturn)) void leave(void (*real)(int), int status)
{
	dt_before_exit(status);
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

DT_EXPORT void _exit(int status)
{
	leave(real_exit, status);
}

DT_EXPORT void _Exit(int status)
{
	leave(real_Exit, status);
}

/* Under both of the C library's versions of the name: programs linked
 * against libpthread before glibc 2.34 ask for the older one. */
DT_EXPORT __attribute__((noreturn)) void dt_pthread_exit(void *value)
{
	static void (*real)(void *);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_exit");
	if (syscall(SYS_gettid) == getpid())
		dt_main_thread_exits();
	real(value);
	__builtin_unreachable();
}
DT_EXPORT __attribute__((noreturn, alias("dt_pthread_exit"))) void
dt_pthread_exit_2_2_5(void *value);
__asm__(".symver dt_pthread_exit, pthread_exit@@GLIBC_2.34");
__asm__(".symver dt_pthread_exit_2_2_5, pthread_exit@GLIBC_2.2.5");

DT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	NEXT(execve);
	dt_before_exec();
	return real_(path, argv, envp);
}

DT_EXPORT int execv(const char *path, char *const argv[])
{
	NEXT(execv);
	dt_before_exec();
	return real_(path, argv);
}

DT_EXPORT int execvp(const char *file, char *const argv[])
{
	NEXT(execvp);
	dt_before_exec();
	return real_(file, argv);
}

DT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	NEXT(execvpe);
	dt_before_exec();
	return real_(file, argv, envp);
}

DT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	NEXT(fexecve);
	dt_before_exec();
	return real_(fd, argv, envp);
}

/* The execl family is variadic: gather the list into an argv array (on the
 * stack, as the C library does) and go through the wrappers above. */
#define GATHER_ARGS(first, ap, argv)        \
	size_t n_ = 1;                      \
	va_list count_;                     \
	va_copy(count_, ap);                \
	while (va_arg(count_, char *))      \
		n_++;                       \
	va_end(count_);                     \
	char *argv[n_ + 1];                 \
	argv[0] = (char *)(first);          \
	for (size_t i_ = 1; i_ <= n_; i_++) \
	argv[i_] = va_arg(ap, char *)

DT_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	GATHER_ARGS(arg, ap, argv);
	va_end(ap);
	return execv(path, argv);
}

DT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	GATHER_ARGS(arg, ap, argv);
	va_end(ap);
	return execvp(file, argv);
}

DT_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	GATHER_ARGS(arg, ap, argv);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
