/*
 * trace-util.c - file name templates, the numbers a writer is configured
 * with, small file reads for the writer, and the checksum of the frames
 * zstd does not check.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "dt-trace.h"
#include "trace-util.h"

uint64_t dt_frame_hash(const void *p, size_t n)
{
	return XXH64(p, n, 0);
}

size_t dt_read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return 0;
	while (n < size) {
		ssize_t k = read(fd, buf + n, size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	return n;
}

/* The expansion so far, and where its last component began and whether a
 * value (not the template's own text) is part of it. */
struct expansion {
	char *buf;
	size_t size, n;
	size_t component;
	bool from_value;
};

/* Append s to the output, with '/' replaced: a value never adds a folder. */
static int put_value(struct expansion *x, const char *s, size_t len)
{
	if (x->n + len >= x->size)
		return -1;
	for (size_t i = 0; i < len; i++)
		x->buf[x->n++] = s[i] == '/' ? '_' : s[i];
	x->from_value |= len > 0;
	return 0;
}

/* The last component is complete: one that a value made "." or ".." gets
 * '_' for each dot, so that a value never climbs a folder either. */
static void end_component(struct expansion *x)
{
	char *c = x->buf + x->component;
	size_t len = x->n - x->component;

	if (x->from_value && len && len <= 2 && !strncmp(c, "..", len))
		memset(c, '_', len);
	x->component = x->n + 1;
	x->from_value = false;
}

int dt_expand_template(const char *tmpl, char *buf, size_t size)
{
	struct expansion x = { .buf = buf, .size = size };
	char tmp[256];

	for (const char *p = tmpl; *p; p++) {
		int rc = 0;

		if (*p != '%') {
			if (x.n + 1 >= size)
				return errno = ENAMETOOLONG, -1;
			if (*p == '/')
				end_component(&x);
			buf[x.n++] = *p;
			continue;
		}
		switch (*++p) {
		case '%':
			rc = put_value(&x, "%", 1);
			break;
		case 'p':
			snprintf(tmp, sizeof(tmp), "%d", (int)getpid());
			rc = put_value(&x, tmp, strlen(tmp));
			break;
		case 'h':
			if (gethostname(tmp, sizeof(tmp)))
				strcpy(tmp, "localhost");
			tmp[sizeof(tmp) - 1] = 0;
			rc = put_value(&x, tmp, strlen(tmp));
			break;
		case 't': {
			time_t now = time(NULL);
			struct tm tm;
			localtime_r(&now, &tm);
			strftime(tmp, sizeof(tmp), "%Y%m%d-%H%M%S", &tm);
			rc = put_value(&x, tmp, strlen(tmp));
			break;
		}
		case 'q': {
			const char *end;
			if (p[1] != '{' || !(end = strchr(p + 2, '}')) ||
			    end == p + 2 ||
			    (size_t)(end - p - 2) >= sizeof(tmp))
				return errno = EINVAL, -1;
			memcpy(tmp, p + 2, (size_t)(end - p - 2));
			tmp[end - p - 2] = 0;
			const char *v = getenv(tmp);
			if (v)
				rc = put_value(&x, v, strlen(v));
			p = end;
			break;
		}
		default:
			return errno = EINVAL, -1;
		}
		if (rc)
			return errno = ENAMETOOLONG, -1;
	}
	if (x.n == 0)
		return errno = EINVAL, -1;
	end_component(&x);
	buf[x.n] = 0;
	return 0;
}

bool dt_env_true(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0 &&
	       strcasecmp(v, "no") != 0 && strcasecmp(v, "off") != 0;
}

int dt_parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int dt_parse_size(const char *s, uint64_t *out)
{
	unsigned shift = 0;
	unsigned long long n;
	char *end;

	/* strtoull would take "-5" as a huge number: only digits may start */
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	}
	if (shift) {
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	} else if (!strcmp(end, "B")) {
		end++;
	}
	if (*end || n > (ULLONG_MAX >> shift))
		return -1;
	*out = (uint64_t)n << shift;
	return 0;
}

char *dt_dup_n(const void *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}
