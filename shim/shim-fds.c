/*
 * shim-fds.c - the trace's descriptor is the recorder's, not the program's.
 *
 * Daemons and launchers close every descriptor but 0-2 (closefrom(3), a
 * loop of close(), close_range) or dup2() over them, then open their own
 * files, which would get the trace's number and the trace's frames. So the
 * calls that close or replace descriptors are interposed: the trace's is
 * skipped, as if the program had never had it (close() of it fails with
 * EBADF, as of any number the program has not opened), and a dup2() onto
 * it first moves the trace elsewhere. What the shim cannot see (the raw
 * system calls, the C library's own closes) the writer finds before its
 * next write (dt_writer_fd()). Nothing else changes: every other
 * descriptor goes to the C library.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "shim-internal.h"

/* The C library's functions, looked up at load (dt_fds_init()): close()
 * is async-signal-safe, and a signal handler's may be the program's first,
 * where dlsym must not be. A call made before the shim's constructor ran
 * looks its function up then. */
static struct {
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
} libc;

#define LIBC(name)                                                   \
	(libc.name ? libc.name                                       \
		   : (*(void **)&libc.name = dlsym(RTLD_NEXT, #name), \
		      libc.name))

void dt_fds_init(void)
{
	(void)LIBC(close);
	(void)LIBC(close_range); /* NULL before glibc 2.34 */
	(void)LIBC(dup2);
	(void)LIBC(dup3);
}

DT_EXPORT int close(int fd)
{
	if (DT_UNLIKELY(dt_owns_fd(fd)))
		return errno = EBADF, -1;
	return LIBC(close)(fd);
}

/* Close the open descriptors in [first, last], as read from /proc/self/fd
 * (how the C library's own closefrom() does without close_range). */
static int close_listed(unsigned first, unsigned last)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *end;
		unsigned long fd = strtoul(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd < first || fd > last ||
		    (int)fd == dirfd(d))
			continue;
		close((int)fd);
	}
	closedir(d);
	return 0;
}

/* Close [first, last] with the C library's close_range, or one by one
 * where the kernel has none (before Linux 5.9). */
static int close_span(unsigned first, unsigned last, int flags)
{
	int (*real)(unsigned, unsigned, int) = LIBC(close_range);
	int rc = real ? real(first, last, flags) : (errno = ENOSYS, -1);

	if (!rc || errno != ENOSYS || flags)
		return rc;
	if (close_listed(first, last)) /* no /proc */
		for (unsigned fd = first; fd <= last && fd < INT_MAX; fd++)
			if (close((int)fd) && errno == EBADF && fd > 65536)
				break; /* past what the program can have */
	return 0;
}

/* [first, last] but the trace's descriptor. */
static int close_around(unsigned first, unsigned last, int flags)
{
	int t = dt_trace_fd();
	int rc = 0;

	if (t < 0 || (unsigned)t < first || (unsigned)t > last)
		return close_span(first, last, flags);
	if ((unsigned)t > first)
		rc = close_span(first, (unsigned)t - 1, flags);
	if ((unsigned)t < last && close_span((unsigned)t + 1, last, flags))
		rc = -1;
	return rc;
}

DT_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (first > last)
		return errno = EINVAL, -1;
	return close_around(first, last, flags);
}

DT_EXPORT void closefrom(int lowfd)
{
	if (lowfd >= 0)
		close_around((unsigned)lowfd, ~0u, 0);
}

/* A descriptor the program puts a file at: the trace moves out first. */
static int before_dup(int oldfd, int newfd)
{
	if (dt_owns_fd(oldfd))
		return errno = EBADF, -1; /* not the program's to copy */
	if (dt_owns_fd(newfd))
		dt_move_trace_fd();
	return 0;
}

DT_EXPORT int dup2(int oldfd, int newfd)
{
	if (before_dup(oldfd, newfd))
		return -1;
	return LIBC(dup2)(oldfd, newfd);
}

DT_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (before_dup(oldfd, newfd))
		return -1;
	return LIBC(dup3)(oldfd, newfd, flags);
}
