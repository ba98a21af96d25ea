/*
 * test-util.h - the few helpers the C tests share: checks that report the
 * file, line and values, and a scratch folder. Exit status follows meson:
 * 0 pass, 1 fail, 77 skip.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int dt_test_failures __attribute__((unused));

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			dt_test_failures++;                                    \
		}                                                              \
	} while (0)

#define CHECK_EQ_U(a, b)                                             \
	do {                                                         \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);     \
		if (a_ != b_) {                                      \
			fprintf(stderr,                              \
				"%s:%d: %s == %s failed: %" PRIu64   \
				" != %" PRIu64 "\n",                 \
				__FILE__, __LINE__, #a, #b, a_, b_); \
			dt_test_failures++;                          \
		}                                                    \
	} while (0)

#define CHECK_EQ_S(a, b)                                                 \
	do {                                                             \
		const char *a_ = (a), *b_ = (b);                         \
		if (!a_ || !b_ || strcmp(a_, b_)) {                      \
			fprintf(stderr,                                  \
				"%s:%d: %s == %s failed: \"%s\" != "     \
				"\"%s\"\n",                              \
				__FILE__, __LINE__, #a, #b,              \
				a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			dt_test_failures++;                              \
		}                                                        \
	} while (0)

#define TEST_DONE()                                             \
	do {                                                    \
		if (dt_test_failures)                           \
			fprintf(stderr, "%d check(s) failed\n", \
				dt_test_failures);              \
		return dt_test_failures ? 1 : 0;                \
	} while (0)

static char dt_test_dir[256];

/* The scratch folder goes when the test exits, unless DT_TEST_KEEP is set
 * (to look at what a failing test wrote). Tests write files there, not
 * folders. */
static void dt_test_cleanup(void)
{
	DIR *d;
	struct dirent *e;
	char path[512];

	if (!dt_test_dir[0] || getenv("DT_TEST_KEEP") ||
	    !(d = opendir(dt_test_dir)))
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dt_test_dir,
				 e->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(dt_test_dir);
}

/* The test's scratch folder under $TMPDIR, made on the first call and
 * removed at exit; the path is static storage. */
static inline const char *dt_test_tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	if (dt_test_dir[0])
		return dt_test_dir;
	snprintf(dt_test_dir, sizeof(dt_test_dir), "%s/dnntrace-test-XXXXXX",
		 base ? base : "/tmp");
	if (!mkdtemp(dt_test_dir)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(dt_test_cleanup);
	return dt_test_dir;
}

#endif /* TEST_UTIL_H */
