/*
 * test-late-info.c - a fact learnt after the header was written (the cuDNN
 * library a process loads after its first GPU records opened the file)
 * reaches readers: dt_writer_info() puts an INFO record in the body, and
 * the reader adds it to the header's facts once read. The header's word
 * stands for a key it already has.
 */
#define _GNU_SOURCE
#include "trace-test-util.h"

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
	TEST_DONE();
}
