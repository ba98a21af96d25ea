/*
 * test-late-info.c - a fact learnt after the header was written (the cuDNN
 * library a process loads after its first GPU records opened the file)
 * reaches readers: dt_writer_info() puts an INFO record in the body, and
 * the reader adds it to the header's facts once read. The header's word
 * stands for a key it already has. A header of 100 000 facts is read in
 * time linear in their number, the first word on a key still standing.
 */
#define _GNU_SOURCE
#include <time.h>

#include "trace-test-util.h"

#define MANY 100000

/* A header of MANY facts, each key twice (the first value stands): read in
 * well under a second of CPU, where comparing each key with every one
 * before it took seconds. */
static void many_facts(const char *dir)
{
	struct dt_kv *kv = calloc(2 * MANY, sizeof(*kv));
	char (*keys)[16] = calloc(MANY, 16), path[512], tmpl[512];

	for (int i = 0; i < MANY; i++) {
		snprintf(keys[i], 16, "k%d", i);
		kv[i] = (struct dt_kv){ keys[i], "first" };
		kv[MANY + i] = (struct dt_kv){ keys[i], "second" };
	}
	snprintf(tmpl, sizeof(tmpl), "%s/many.dnnt", dir);
	struct dt_writer_config cfg = { .path_template = tmpl,
					.host = "h",
					.cmdline = "c",
					.info = kv,
					.n_info = 2 * MANY,
					.api_names = test_api_names,
					.api_sigs = test_api_sigs,
					.api_count = 2 };
	struct dt_writer *w = dt_writer_open(&cfg);
	CHECK(w != NULL);
	if (!w)
		return;
	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);

	clock_t t0 = clock();
	struct dt_reader *rd = dt_reader_open(path, NULL, NULL, 0);
	double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
	CHECK(rd != NULL);
	if (rd) {
		const struct dt_file_info *fi = dt_reader_info(rd);
		CHECK(fi->n_info >= MANY && fi->n_info < MANY + 16);
		CHECK(!strcmp(dt_info_get(fi, "k0"), "first"));
		CHECK(!strcmp(dt_info_get(fi, "k99999"), "first"));
		dt_reader_close(rd);
	}
	if (cpu > 1.0)
		fprintf(stderr, "%d facts read in %.1f s of CPU\n", 2 * MANY,
			cpu),
			dt_test_failures++;
	free(kv);
	free(keys);
}

int main(void)
{
	const char *dir = dt_test_tmpdir();
	struct dt_writer *w = test_writer(dir, "late.dnnt", 0);
	struct dt_ring *r = dt_writer_attach(w, 1, "t");
	char path[512];

	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	test_put_call(r, 1, 0);
	CHECK(dt_writer_info(w, "cudnn.path", "/opt/libcudnn.so.9") == 0);
	CHECK(dt_writer_info(w, "test.key", "not the header's") == 0);
	test_put_call(r, 2, 1);
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	CHECK(dt_writer_info(w, "cudnn.version", "91900") == -1);
	dt_writer_free(w);

	int err = 0;
	struct dt_reader *rd = dt_reader_open(path, &err, NULL, 0);
	CHECK(rd != NULL);
	if (!rd)
		TEST_DONE();
	const struct dt_file_info *fi = dt_reader_info(rd);
	CHECK(dt_info_get(fi, "cudnn.path") == NULL); /* not read yet */
	const struct dt_rec_hdr *h;
	uint64_t calls = 0, infos = 0;
	while (dt_reader_next(rd, &h) == 1) {
		calls += h->type == DT_REC_API_CALL;
		infos += h->type == DT_REC_INFO;
	}
	CHECK_EQ_U(calls, 2);
	CHECK_EQ_U(infos, 2); /* handed on as records too */
	CHECK(dt_info_get(fi, "cudnn.path") &&
	      !strcmp(dt_info_get(fi, "cudnn.path"), "/opt/libcudnn.so.9"));
	CHECK(dt_info_get(fi, "test.key") &&
	      !strcmp(dt_info_get(fi, "test.key"), "test value"));
	CHECK(dt_info_get(fi, "cudnn.version") == NULL);
	CHECK_EQ_U(dt_reader_stats(rd)->end, DT_FILE_CLEAN);
	dt_reader_close(rd);
	many_facts(dir);
	TEST_DONE();
}
