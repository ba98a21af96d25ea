/*
 * test-json.c - the JSON writer and the text escape on bytes that are not
 * text: control characters (C0, DEL, C1) escaped, invalid UTF-8 (a thread
 * name cut in the middle of a character, a crafted trace) replaced by
 * U+FFFD in JSON and written \xNN in text, valid UTF-8 kept.
 */
#include <stdio.h>
#include <string.h>

#include "tools.h"

int main(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "\"plain\"" },
		{ "q\"b\\\\", "\"q\\\"b\\\\\\\\\"" },
		{ "c\x01\n", "\"c\\u0001\\u000a\"" },
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"" },
		{ "a\xff" "b", "\"a\\ufffdb\"" },
		{ "cut\xe2\x82", "\"cut\\ufffd\\ufffd\"" },
		{ "over\xc0\xaf", "\"over\\ufffd\\ufffd\"" },
		{ "sur\xed\xa0\x80", "\"sur\\ufffd\\ufffd\\ufffd\"" },
		{ "del\x7f", "\"del\\u007f\"" },
		{ "csi\xc2\x9b" "2J\xc2\xa0", "\"csi\\u009b2J\xc2\xa0\"" },
	};
	static const struct {
		const char *in, *out;
	} text[] = {
		{ "plain \xc3\xa9", "plain \xc3\xa9" },
		{ "\x1b]0;title\x07", "\\x1b]0;title\\x07" },
		{ "a\nb\tc\x7f", "a\\x0ab\\x09c\\x7f" },
		{ "csi\xc2\x9b" "2J", "csi\\xc2\\x9b2J" },
		{ "raw\x9b" "cut\xe2\x82", "raw\\x9bcut\\xe2\\x82" },
	};
	int failed = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256] = "";
		FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
		dt_json_quote(f, cases[i].in);
		fclose(f);
		if (strcmp(buf, cases[i].out)) {
			printf("FAIL: case %zu: %s, expected %s\n", i, buf,
			       cases[i].out);
			failed++;
		}
	}
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		const char *got = dt_text(text[i].in);
		if (strcmp(got, text[i].out)) {
			printf("FAIL: text case %zu: %s, expected %s\n", i, got,
			       text[i].out);
			failed++;
		}
	}
	size_t n = sizeof(cases) / sizeof(cases[0]) +
		   sizeof(text) / sizeof(text[0]);
	printf("%zu cases, %d failed\n", n, failed);
	return failed != 0;
}
