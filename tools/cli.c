/*
 * cli.c - the command-line plumbing the reading commands share: --format,
 * --top, rates with SI prefixes, and usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

int dt_parse_format(const char *cmd, const char *arg, unsigned allowed,
		    enum dt_format *f)
{
	static const char *const names[] = { [DT_TEXT] = "text",
					     [DT_MARKDOWN] = "markdown",
					     [DT_JSON] = "json",
					     [DT_HTML] = "html" };
	const int n_names = (int)(sizeof(names) / sizeof(names[0]));
	char list[64] = "";
	size_t len = 0;
	int n = 0, k = 0;

	for (int i = 0; i < n_names; i++) {
		if (!(allowed & (1u << i)))
			continue;
		if (!strcmp(arg, names[i]) ||
		    (i == DT_MARKDOWN && !strcmp(arg, "md"))) {
			*f = (enum dt_format)i;
			return 0;
		}
		n++;
	}
	for (int i = 0; i < n_names; i++) {
		if (!(allowed & (1u << i)))
			continue;
		k++;
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					k == 1   ? ""
					: k == n ? " or "
						 : ", ",
					names[i]);
	}
	return dt_usage_error(cmd, "--format takes %s", list);
}

/* "4.8T", "900G", "1.2e12", "67 TFLOP/s" -> a number; -1 when malformed. */
double dt_parse_rate(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v <= 0)
		return -1;
	while (*end == ' ')
		end++;
	switch (*end) {
	case 'k':
	case 'K':
		v *= 1e3, end++;
		break;
	case 'M':
		v *= 1e6, end++;
		break;
	case 'G':
		v *= 1e9, end++;
		break;
	case 'T':
		v *= 1e12, end++;
		break;
	case 'P':
		v *= 1e15, end++;
		break;
	}
	/* an optional unit after the prefix */
	if (*end && strcmp(end, "B/s") && strcmp(end, "FLOP/s") &&
	    strcmp(end, "FLOPS") && strcmp(end, "B"))
		return -1;
	return v;
}

int dt_parse_top(const char *cmd, const char *arg, long *n)
{
	char *end;

	*n = strtol(arg, &end, 10);
	if (*end || end == arg || *n < 0)
		return dt_usage_error(cmd, "--top takes a number");
	return 0;
}

const char *dt_fmt_rate(double bytes, uint64_t ns, char *buf, size_t size)
{
	double r = ns ? bytes * 1e9 / (double)ns : 0;

	if (bytes <= 0 || !ns)
		snprintf(buf, size, "-");
	else if (r >= 1e12)
		snprintf(buf, size, "%.2f TB/s", r / 1e12);
	else if (r >= 1e9)
		snprintf(buf, size, "%.1f GB/s", r / 1e9);
	else
		snprintf(buf, size, "%.1f MB/s", r / 1e6);
	return buf;
}
