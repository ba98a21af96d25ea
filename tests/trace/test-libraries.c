/*
 * test-libraries.c - a trace names the library of each API (LIBRARY
 * records, format 1.8): a writer given two libraries writes them, and
 * the reader gives every defined API its library's short name and lists
 * the libraries; a writer given none (as every file before 1.8) reads as
 * one library, cuDNN, holding every API. A library's INFO facts are
 * lib.<name>.<what>, and cuDNN's are also found under 1.7's cudnn.<what>.
 */
#define _GNU_SOURCE
#include "trace-test-util.h"

static const char *const names[] = { "cudnnCreate", "cudnnDestroy", "dttCreate",
				     "dttScale", "dttZ" };
static const char *const sigs[] = { "handle:>p", "handle:p", "handle:>p",
				    "handle:p,alpha:k", "" };

/* Write a trace of the five APIs with libs (n of them) and facts; read
 * it back (the caller closes the reader). */
static struct dt_reader *write_read(const char *dir, const char *file,
				    const struct dt_library_def *libs,
				    uint32_t n, const struct dt_kv *info,
				    size_t n_info)
{
	char tmpl[512], path[512];

	snprintf(tmpl, sizeof(tmpl), "%s/%s", dir, file);
	struct dt_writer_config cfg = { .path_template = tmpl,
					.host = "h",
					.cmdline = "c",
					.info = info,
					.n_info = n_info,
					.api_names = names,
					.api_sigs = sigs,
					.api_count = 5,
					.libraries = libs,
					.n_libraries = n };
	struct dt_writer *w = dt_writer_open(&cfg);
	CHECK(w != NULL);
	if (!w)
		return NULL;
	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);
	struct dt_reader *rd = dt_reader_open(path, NULL, NULL, 0);
	CHECK(rd != NULL);
	return rd;
}

static void two_libraries(const char *dir)
{
	/* dttZ (id 4) is in no library's range: it is taken as cuDNN's */
	static const struct dt_library_def libs[] = {
		{ "cudnn", "cuDNN", 0, 2 },
		{ "dtt", "DTT", 2, 2 },
	};
	static const struct dt_kv info[] = {
		{ "lib.cudnn.version", "91900" },
		{ "lib.dtt.path", "/lib/libdtt.so.1" },
	};
	struct dt_reader *rd = write_read(dir, "two.dnnt", libs, 2, info, 2);
	if (!rd)
		return;
	const struct dt_file_info *fi = dt_reader_info(rd);
	CHECK_EQ_U(fi->hdr.minor, DT_FORMAT_MINOR);
	CHECK_EQ_U(fi->n_apis, 5);
	CHECK_EQ_U(fi->n_libraries, 2);
	if (fi->n_libraries == 2) {
		CHECK(!strcmp(fi->libraries[1].name, "dtt"));
		CHECK(!strcmp(fi->libraries[1].display, "DTT"));
		CHECK_EQ_U(fi->libraries[1].first_api, 2);
		CHECK_EQ_U(fi->libraries[1].n_apis, 2);
	}
	const char *want[] = { "cudnn", "cudnn", "dtt", "dtt", "cudnn" };
	for (uint32_t i = 0; i < 5 && i < fi->n_apis; i++)
		CHECK(fi->apis[i].library &&
		      !strcmp(fi->apis[i].library, want[i]));
	const char *v = dt_library_info_get(fi, "cudnn", "version");
	CHECK(v && !strcmp(v, "91900"));
	v = dt_library_info_get(fi, "dtt", "path");
	CHECK(v && !strcmp(v, "/lib/libdtt.so.1"));
	CHECK(dt_library_info_get(fi, "dtt", "version") == NULL);
	dt_reader_close(rd);
}

static void no_library(const char *dir)
{
	static const struct dt_kv info[] = {
		{ "cudnn.version", "90100" }, /* 1.7's key */
		{ "cudnn.path", "/lib/libcudnn.so.9" },
	};
	struct dt_reader *rd = write_read(dir, "none.dnnt", NULL, 0, info, 2);
	if (!rd)
		return;
	const struct dt_file_info *fi = dt_reader_info(rd);
	CHECK_EQ_U(fi->n_libraries, 1);
	if (fi->n_libraries == 1) {
		CHECK(!strcmp(fi->libraries[0].name, "cudnn"));
		CHECK(!strcmp(fi->libraries[0].display, "cuDNN"));
		CHECK_EQ_U(fi->libraries[0].first_api, 0);
		CHECK_EQ_U(fi->libraries[0].n_apis, 5);
	}
	for (uint32_t i = 0; i < fi->n_apis; i++)
		CHECK(fi->apis[i].library &&
		      !strcmp(fi->apis[i].library, "cudnn"));
	const char *v = dt_library_info_get(fi, "cudnn", "version");
	CHECK(v && !strcmp(v, "90100"));
	v = dt_library_info_get(fi, "cudnn", "path");
	CHECK(v && !strcmp(v, "/lib/libcudnn.so.9"));
	/* only cuDNN's facts had keys of their own before 1.8 */
	CHECK(dt_library_info_get(fi, "dtt", "version") == NULL);
	dt_reader_close(rd);
}

int main(void)
{
	const char *dir = dt_test_tmpdir();

	two_libraries(dir);
	no_library(dir);
	TEST_DONE();
}
