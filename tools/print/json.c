/*
 * json.c - the one JSON writer of the dnntrace commands: values escaped
 * and numbers formatted one way, separators and nesting kept by the
 * writer. Layout stays the caller's choice (which members start a line),
 * so the schemas keep the shape analyzer/REPORT.md and DIFF.md show.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tools.h"

/* Output goes through the writer's own buffer, out to its FILE when full
 * and when the top-level value is closed: exports write gigabytes in
 * pieces of a few bytes, which stdio's per-call work would dominate. */
static void flush(struct dt_json *j)
{
	if (j->len)
		fwrite(j->buf, 1, j->len, j->out);
	j->len = 0;
}

static void put(struct dt_json *j, const char *s, size_t n)
{
	if (j->len + n > sizeof(j->buf)) {
		flush(j);
		if (n > sizeof(j->buf)) {
			fwrite(s, 1, n, j->out);
			return;
		}
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

/* After a value: a value at the top level is the whole document. */
static void done(struct dt_json *j)
{
	if (!j->depth)
		flush(j);
}

static void putc_j(struct dt_json *j, char c)
{
	if (j->len == sizeof(j->buf))
		flush(j);
	j->buf[j->len++] = c;
}

static void puts_j(struct dt_json *j, const char *s)
{
	put(j, s, strlen(s));
}

static void printf_j(struct dt_json *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void vprintf_j(struct dt_json *j, const char *fmt, va_list ap)
{
	char tmp[512];
	va_list aq;

	va_copy(aq, ap);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		put(j, tmp, (size_t)n);
		return;
	}
	flush(j);
	vfprintf(j->out, fmt, ap);
}

static void printf_j(struct dt_json *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf_j(j, fmt, ap);
	va_end(ap);
}

void dt_json_init(struct dt_json *j, FILE *out)
{
	memset(j, 0, sizeof(*j) - sizeof(j->buf));
	j->out = out;
}

static void indent(struct dt_json *j, int n)
{
	putc_j(j, '\n');
	while (n-- > 0)
		putc_j(j, ' ');
}

/* The comma after the open container's last item, then a new line
 * indented by nl, or (nl < 0) a space. */
static void comma(struct dt_json *j, int nl)
{
	struct dt_json_level *l = &j->lv[j->depth];

	if (l->any)
		putc_j(j, ',');
	if (nl >= 0)
		indent(j, nl);
	else if (l->any && !j->compact)
		putc_j(j, ' ');
	l->any = true;
}

/* What comes before the next value: nothing after a key, else what comes
 * before the open container's next element. */
static void separate(struct dt_json *j, int nl)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth)
		comma(j, nl < 0 ? j->lv[j->depth].items : nl);
}

void dt_json_open(struct dt_json *j, char bracket, int items)
{
	separate(j, -1);
	putc_j(j, bracket);
	if (j->depth + 1 < DT_JSON_DEPTH)
		j->depth++;
	j->lv[j->depth] =
		(struct dt_json_level){ .items = items, .bracket = bracket };
}

void dt_json_close(struct dt_json *j, int nl)
{
	char bracket = j->lv[j->depth].bracket;

	if (nl >= 0)
		indent(j, nl);
	putc_j(j, bracket == '[' ? ']' : '}');
	if (j->depth)
		j->depth--;
	done(j); /* the document may be whole: callers write after it */
}

void dt_json_key(struct dt_json *j, const char *key)
{
	dt_json_key_nl(j, key, -1);
}

int dt_utf8_len(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	int len;
	uint32_t min, c;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, min = 0x80, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, min = 0x800, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, min = 0x10000, c = s[0] & 0x07;
	else
		return 0;
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and beyond Unicode are not UTF-8 */
	if (c < min || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return len;
}

static void quote_n(struct dt_json *j, const char *s, size_t n)
{
	size_t i, from = 0; /* s[from..i) needs no escape: written at once */

	/* what needs a look: control characters, '"' and '\\' (0 ends the
	 * string), and bytes that must start valid UTF-8 (names come from the
	 * traced process and are bytes, not text) */
	static const bool special[256] = {
		[0 ... 0x1f] = true, ['"'] = true, ['\\'] = true,
		[0x7f ... 0xff] = true,
	};

	putc_j(j, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!special[c])
			continue;
		if (!c)
			break;
		if (c > 0x7f) {
			int len = dt_utf8_len(s + i, n - i);
			/* C1 controls as \u0080..\u009f: a terminal that shows
			 * the JSON would act on them */
			if (len && !dt_char_shown(s + i, n - i)) {
				put(j, s + from, i - from);
				from = i + (size_t)len;
				printf_j(j, "\\u%04x", (unsigned char)s[i + 1]);
				i += (size_t)len - 1;
				continue;
			}
			if (len) {
				i += (size_t)len - 1;
				continue;
			}
			put(j, s + from, i - from);
			from = i + 1;
			puts_j(j, "\\ufffd");
			continue;
		}
		put(j, s + from, i - from);
		from = i + 1;
		if (c == '"' || c == '\\')
			printf_j(j, "\\%c", c);
		else
			printf_j(j, "\\u%04x", c);
	}
	put(j, s + from, i - from);
	putc_j(j, '"');
}

static void put_key(struct dt_json *j, const char *k, size_t n, int nl)
{
	comma(j, nl);
	quote_n(j, k, n);
	puts_j(j, j->compact ? ":" : ": ");
	j->after_key = true;
}

void dt_json_key_nl(struct dt_json *j, const char *k, int nl)
{
	put_key(j, k, strlen(k), nl);
}

void dt_json_keyn(struct dt_json *j, const char *k, size_t n)
{
	put_key(j, k, n, -1);
}

static void quote_or_null(struct dt_json *j, const char *s)
{
	if (s)
		quote_n(j, s, strlen(s));
	else
		puts_j(j, "null");
}

void dt_json_quote(FILE *out, const char *s)
{
	struct dt_json j;

	dt_json_init(&j, out);
	quote_or_null(&j, s);
	flush(&j);
}

void dt_json_str(struct dt_json *j, const char *s)
{
	separate(j, -1);
	quote_or_null(j, s);
	done(j);
}

void dt_json_strn(struct dt_json *j, const char *s, size_t n)
{
	separate(j, -1);
	quote_n(j, s, n);
	done(j);
}

/* v in decimal, without printf: exports write millions of numbers */
static void put_u64(struct dt_json *j, uint64_t v)
{
	char buf[20], *p = buf + sizeof(buf);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	put(j, p, (size_t)(buf + sizeof(buf) - p));
}

void dt_json_u64(struct dt_json *j, uint64_t v)
{
	separate(j, -1);
	put_u64(j, v);
	done(j);
}

void dt_json_milli(struct dt_json *j, uint64_t v)
{
	char frac[4] = { '.', (char)('0' + v / 100 % 10),
			 (char)('0' + v / 10 % 10), (char)('0' + v % 10) };

	separate(j, -1);
	put_u64(j, v / 1000);
	put(j, frac, 4);
	done(j);
}

void dt_json_i64(struct dt_json *j, int64_t v)
{
	separate(j, -1);
	if (v < 0)
		putc_j(j, '-');
	put_u64(j, v < 0 ? -(uint64_t)v : (uint64_t)v);
	done(j);
}

void dt_json_num(struct dt_json *j, double v)
{
	separate(j, -1);
	if (!isfinite(v))
		puts_j(j, "null");
	else if (v == floor(v) && fabs(v) < 1e18)
		printf_j(j, "%.0f", v);
	else
		printf_j(j, "%.6g", v);
	done(j);
}

void dt_json_g(struct dt_json *j, double v)
{
	separate(j, -1);
	if (!isfinite(v))
		puts_j(j, "null");
	else
		printf_j(j, "%.6g", v);
	done(j);
}

void dt_json_opt(struct dt_json *j, double v)
{
	if (v < 0)
		dt_json_null(j);
	else
		dt_json_num(j, v);
}

void dt_json_bool(struct dt_json *j, bool v)
{
	separate(j, -1);
	puts_j(j, v ? "true" : "false");
	done(j);
}

void dt_json_tri(struct dt_json *j, int v)
{
	if (v < 0)
		dt_json_null(j);
	else
		dt_json_bool(j, v != 0);
}

void dt_json_null(struct dt_json *j)
{
	separate(j, -1);
	puts_j(j, "null");
	done(j);
}

void dt_json_raw(struct dt_json *j, const char *fmt, ...)
{
	va_list ap;

	separate(j, -1);
	va_start(ap, fmt);
	vprintf_j(j, fmt, ap);
	va_end(ap);
	done(j);
}

void dt_json_hex(struct dt_json *j, uint64_t v)
{
	separate(j, -1);
	printf_j(j, "\"0x%" PRIx64 "\"", v);
	done(j);
}

void dt_json_ku(struct dt_json *j, const char *key, uint64_t v)
{
	dt_json_key(j, key);
	dt_json_u64(j, v);
}

void dt_json_ks(struct dt_json *j, const char *key, const char *v)
{
	dt_json_key(j, key);
	dt_json_str(j, v);
}

void dt_json_ki(struct dt_json *j, const char *key, int64_t v)
{
	dt_json_key(j, key);
	dt_json_i64(j, v);
}

void dt_json_kn(struct dt_json *j, const char *key, double v)
{
	dt_json_key(j, key);
	dt_json_num(j, v);
}

void dt_json_kg(struct dt_json *j, const char *key, double v)
{
	dt_json_key(j, key);
	dt_json_g(j, v);
}
