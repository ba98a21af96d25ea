/*
 * test-open.c - what is not a trace file is refused at once, in one
 * sentence that says what it is: /dev/null, a pipe with no writer (which
 * must not wait for one), a directory, a missing file, an empty file, a
 * file too short, text, a plain zstd stream, a skippable frame that is no
 * header, a header frame too short, without the magic, or cut short.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "trace-test-util.h"

static void expect(const char *path, int want_err, const char *want_text)
{
	char why[512] = "";
	int err = 0;
	struct dt_reader *r = dt_reader_open(path, &err, why, sizeof(why));

	CHECK(r == NULL);
	dt_reader_close(r);
	if (err != want_err || !strstr(why, want_text)) {
		fprintf(stderr, "%s: error %d \"%s\", expected %d and \"%s\"\n",
			path, err, why, want_err, want_text);
		dt_test_failures++;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	const char *dir = dt_test_tmpdir();
	char path[600], expect_text[700];

	expect("/dev/null", DT_ERR_IO,
	       "cannot read /dev/null: it is a character device, not a "
	       "regular file");

	/* a pipe nobody writes to: refused at once, not waited on (the
	 * alarm ends a test that hangs) */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(mkfifo(path, 0600) == 0);
	alarm(10);
	double t0 = now();
	snprintf(expect_text, sizeof(expect_text),
		 "cannot read %s: it is a pipe, not a regular file", path);
	expect(path, DT_ERR_IO, expect_text);
	CHECK(now() - t0 < 2);
	alarm(0);

	expect(dir, DT_ERR_IO, "it is a directory, not a regular file");
	snprintf(path, sizeof(path), "%s/missing.dnnt", dir);
	expect(path, DT_ERR_IO, "No such file or directory");

	snprintf(path, sizeof(path), "%s/empty.dnnt", dir);
	CHECK(test_write_file(path, "", 0));
	expect(path, DT_ERR_NOT_TRACE, "not a dnntrace file: it is empty");

	snprintf(path, sizeof(path), "%s/short.dnnt", dir);
	CHECK(test_write_file(path, "abc", 3));
	expect(path, DT_ERR_NOT_TRACE, "only 3 bytes long");

	snprintf(path, sizeof(path), "%s/text.dnnt", dir);
	CHECK(test_write_file(path, "not a trace, just text\n", 23));
	expect(path, DT_ERR_NOT_TRACE,
	       "not a dnntrace file: it does not start with a dnntrace "
	       "header");

	uint8_t z[64];
	size_t zn = ZSTD_compress(z, sizeof(z), "hello", 5, 1);
	snprintf(path, sizeof(path), "%s/plain.zst", dir);
	CHECK(test_write_file(path, z, zn));
	expect(path, DT_ERR_NOT_TRACE, "a plain zstd stream");

	static const uint8_t meta[] = { 0x51, 0x2A, 0x4D, 0x18, 4,   0,
					0,    0,    'A',  'B',  'C', 'D' };
	snprintf(path, sizeof(path), "%s/meta.dnnt", dir);
	CHECK(test_write_file(path, meta, sizeof(meta)));
	expect(path, DT_ERR_NOT_TRACE,
	       "its first frame is not a dnntrace header");

	static const uint8_t small[] = { 0x50, 0x2A, 0x4D, 0x18, 4,   0,
					 0,    0,    'A',  'B',  'C', 'D' };
	snprintf(path, sizeof(path), "%s/small.dnnt", dir);
	CHECK(test_write_file(path, small, sizeof(small)));
	expect(path, DT_ERR_NOT_TRACE, "its header frame is too short");

	uint8_t hdr[8 + sizeof(struct dt_file_header)] = { 0x50, 0x2A, 0x4D,
							   0x18 };
	hdr[4] = sizeof(struct dt_file_header);
	memcpy(hdr + 8, "DNNTRACX", 8);
	snprintf(path, sizeof(path), "%s/magic.dnnt", dir);
	CHECK(test_write_file(path, hdr, sizeof(hdr)));
	expect(path, DT_ERR_NOT_TRACE,
	       "its header frame does not start with DNNTRACE");

	memcpy(hdr + 8, "DNNTRACE", 8);
	snprintf(path, sizeof(path), "%s/cut.dnnt", dir);
	CHECK(test_write_file(path, hdr, sizeof(hdr) - 1));
	expect(path, DT_ERR_CORRUPT, "the file ends inside its header");
	TEST_DONE();
}
