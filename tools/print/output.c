/*
 * output.c - where the reading commands write (-o): standard output, or a
 * file that appears whole or not at all. The file is written under a
 * temporary name in its folder and renamed into place once complete, so
 * a command that fails leaves no half-written file; an existing file is
 * replaced only when asked (--force), and a symbolic link is never
 * written through nor replaced. A device or a pipe
 * named (-o /dev/null) is written as it is. Not for the SQLite and CSV
 * exports, which make their own files (export-tables.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools.h"

/* A device or a pipe: written in place, never through a link. */
static FILE *open_in_place(struct dt_output *o)
{
	int fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		dt_error("cannot write %s: %s", o->path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

int dt_output_temp(const char *path, char **tmp)
{
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path) + 1 : 0;
	int fd = -1;

	if (asprintf(tmp, "%.*s.%s.XXXXXX", dir, path, path + dir) < 0) {
		*tmp = NULL;
		return errno = ENOMEM, -1;
	}
	mode_t mask = umask(0);
	umask(mask);
	if ((fd = mkostemp(*tmp, O_CLOEXEC)) < 0 || fchmod(fd, 0666 & ~mask)) {
		int err = errno;
		if (fd >= 0) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		return errno = err, -1;
	}
	return fd;
}

/* The temporary file beside o->path (dt_output_temp()), as a stream. */
static FILE *open_temporary(struct dt_output *o)
{
	int fd = dt_output_temp(o->path, &o->tmp);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		dt_error("cannot create %s: %s", o->path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		free(o->tmp);
		o->tmp = NULL;
	}
	return f;
}

FILE *dt_open_output(struct dt_output *o, const char *path, bool force)
{
	struct stat st;

	*o = (struct dt_output){ .path = path };
	if (!path || !strcmp(path, "-")) {
		o->path = NULL;
		return o->f = stdout;
	}
	if (lstat(path, &st) == 0) {
		/* not even with --force: /dev/stdout is a link */
		if (S_ISLNK(st.st_mode)) {
			dt_error("%s is a symbolic link: dnntrace writes "
				 "through none; name the file itself",
				 path);
			return NULL;
		}
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
			return o->f = open_in_place(o);
		if (S_ISDIR(st.st_mode)) {
			dt_error("%s is a folder: name a file to write", path);
			return NULL;
		}
		if (!force) {
			dt_error("%s exists: dnntrace does not overwrite it "
				 "unless told to (--force)",
				 path);
			return NULL;
		}
	} else if (errno != ENOENT) {
		dt_error("cannot write %s: %s", path, strerror(errno));
		return NULL;
	}
	o->force = force;
	return o->f = open_temporary(o);
}

/* The finished temporary file under its name: replacing what is there
 * only with --force (rename() replaces a link, not what it points to). */
static int publish(const struct dt_output *o)
{
	if (o->force)
		return rename(o->tmp, o->path);
	if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path,
		      RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* a file system without RENAME_NOREPLACE: a link fails the same
	 * way on an existing name */
	if (link(o->tmp, o->path))
		return -1;
	unlink(o->tmp);
	return 0;
}

int dt_close_output(struct dt_output *o, bool keep)
{
	FILE *f = o->f;
	int rc = 0;

	if (!f)
		return 0;
	o->f = NULL;
	if (f == stdout)
		return dt_flush_stdout();
	/* a write that failed (a full disk) fails the command */
	bool failed = ferror(f);
	errno = 0;
	if ((fclose(f) || failed) && keep) {
		dt_error("cannot write %s: %s", o->path,
			 strerror(errno ? errno : EIO));
		rc = EXIT_USAGE;
	}
	if (!o->tmp)
		return rc;
	if (!rc && keep && publish(o)) {
		dt_error("cannot write %s: %s", o->path,
			 errno == EEXIST ? "it was made meanwhile"
					 : strerror(errno));
		rc = EXIT_USAGE;
	}
	if (rc || !keep)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return rc;
}

int dt_flush_stdout(void)
{
	static bool said;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	/* once: main() asks again after a command that asked already */
	if (!said)
		dt_error("cannot write to standard output: %s",
			 strerror(errno ? errno : EIO));
	said = true;
	return EXIT_USAGE;
}

int dt_finish(int rc)
{
	int w = dt_flush_stdout();

	return w ? w : rc;
}
