/*
 * test-full-disk.c - a file that cannot grow (the file size limit stands in
 * for a full disk): the frames that do not fit are left out whole, every
 * record the file cannot take is counted as lost, and the file still ends
 * with its END summary and index. The write that would cross the limit is
 * never made, so SIGXFSZ, which would end the process, is never raised.
 */
#define _GNU_SOURCE
#include <sys/resource.h>

#include "trace-test-util.h"

#define RECORDS 300000
#define LIMIT   (192u << 10)

int main(void)
{
	const char *dir = dt_test_tmpdir();
	struct dt_writer *w = test_writer(dir, "full.dnnt", 64u << 20);
	struct dt_ring *r = dt_writer_attach(w, 1, "main");
	struct rlimit rl = { LIMIT, RLIM_INFINITY };
	uint64_t got = 0, lost_full = 0, lost_io = 0, x = 88172645463325252ull;
	char path[512];
	struct stat st;
	const struct dt_rec_hdr *h;

	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	for (int i = 0; i < RECORDS; i++) {
		/* arguments that do not compress: frames fill the limit soon */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		while (!test_put_call(r, (uint64_t)i + 1, (int32_t)x))
			usleep(100); /* the ring is full: let the writer drain
				      */
		if (i % 20000 == 0)
			usleep(20000); /* several frames, not one */
	}
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);

	CHECK(stat(path, &st) == 0 && st.st_size <= LIMIT);
	struct dt_reader *rd = dt_reader_open(path, NULL, NULL, 0);
	CHECK(rd != NULL);
	if (!rd)
		TEST_DONE();
	while (dt_reader_next(rd, &h) == 1) {
		if (h->type == DT_REC_API_CALL) {
			got++;
		} else if (h->type == DT_REC_LOSS) {
			const struct dt_rec_loss *l = (const void *)h;
			if (l->reason == DT_LOSS_IO)
				lost_io += l->count;
			else
				lost_full += l->count;
		}
	}
	const struct dt_file_stats *s = dt_reader_stats(rd);
	CHECK_EQ_U(s->end, DT_FILE_CLEAN);
	CHECK(s->have_index);
	CHECK(got > 0);
	CHECK(lost_io > 0);
	CHECK_EQ_U(s->lost, lost_full + lost_io);
	/* Every call is in the file or counted; the IO count also holds the
	 * other records of the frames left out (one CLOCK per frame, ...). */
	CHECK(got + lost_full + lost_io >= RECORDS);
	CHECK(got + lost_full + lost_io <= RECORDS + 100);
	printf("%" PRIu64 " calls in %lld bytes, %" PRIu64
	       " records the file could not take\n",
	       got, (long long)st.st_size, lost_io);
	dt_reader_close(rd);
	TEST_DONE();
}
