/*
 * cli.c - the command-line plumbing the commands share: options and what
 * they say about a bad one, --format, --top, rates with SI prefixes and
 * their sane ranges, and usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

/* Long options of which name is a prefix, "--" and "=VALUE" left off. */
static int prefix_matches(const struct option *longopts, const char *name,
			  size_t n)
{
	int k = 0;

	for (const struct option *o = longopts; o->name; o++)
		if (!strncmp(o->name, name, n))
			k += strlen(o->name) == n ? 100 : 1;
	return k;
}

/* What is wrong with the option getopt_long just refused: it prints one
 * sentence, where getopt's own message would have been a second. */
static void option_error(const char *cmd, int c, char **argv,
			 const struct option *longopts)
{
	const char *word = argv[optind - 1];

	if (strncmp(word, "--", 2)) {
		dt_usage_error(cmd,
			       c == ':' ? "-%c needs a value"
					: "unknown option '-%c'",
			       optopt);
		return;
	}
	int n = (int)strcspn(word, "=");
	if (c == ':')
		dt_usage_error(cmd, "%.*s needs a value", n, word);
	else if (optopt)
		dt_usage_error(cmd, "%.*s takes no value", n, word);
	else if (prefix_matches(longopts, word + 2, (size_t)n - 2) > 1)
		dt_usage_error(cmd, "'%.*s' is ambiguous", n, word);
	else
		dt_usage_error(cmd, "unknown option '%.*s'", n, word);
}

int dt_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	      const struct option *longopts)
{
	/* a leading ':' (after '+') tells a missing value from an unknown
	 * option */
	int order = shortopts[0] == '+' || shortopts[0] == '-';
	char spec[64];
	int c;

	snprintf(spec, sizeof(spec), "%.*s:%s", order, shortopts,
		 shortopts + order);
	opterr = 0;
	c = getopt_long(argc, argv, spec, longopts, NULL);
	if (c == '?' || c == ':') {
		option_error(cmd, c, argv, longopts);
		return '?';
	}
	return c;
}

int dt_parse_format(const char *cmd, const char *arg, unsigned allowed,
		    enum dt_format *f)
{
	static const char *const names[] = { [DT_TEXT] = "text",
					     [DT_MARKDOWN] = "markdown",
					     [DT_JSON] = "json",
					     [DT_HTML] = "html",
					     [DT_CSV] = "csv" };
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

int dt_parse_rate_in(const char *cmd, const char *opt, const char *arg,
		     const struct dt_rate_range *r, double *v)
{
	*v = dt_parse_rate(arg);
	if (*v >= r->min && *v <= r->max)
		return 0;
	return dt_usage_error(cmd, "%s takes %s from %s to %s, like %s", opt,
			      r->what, r->min_text, r->max_text, r->example);
}

const struct dt_rate_range dt_bandwidth_range = {
	.what = "bytes per second",
	.min = 1e9,
	.max = 1e15,
	.min_text = "1G",
	.max_text = "1P",
	.example = "4.8T or 900e9",
};
const struct dt_rate_range dt_flops_range = {
	.what = "FLOP/s",
	.min = 1e9,
	.max = 1e18,
	.min_text = "1G",
	.max_text = "1000P",
	.example = "989T",
};

int dt_parse_top(const char *cmd, const char *arg, long *n)
{
	if (dt_parse_int(arg, 0, INT_MAX, n))
		return dt_usage_error(cmd, "--top takes a number from 0 to %d",
				      INT_MAX);
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
