/*
 * test-full-disk.c - a file that cannot grow (the file size limit stands in
 * for a full disk): the frames that do not fit are left out whole, every
 * record the file cannot take is counted as lost, and the file still ends
 * with its END summary and index. The write that would cross the limit is
 * never made, so SIGXFSZ, which would end the process, is never raised.
 * And wherever the limit falls after the last frame that fits, the room
 * kept for the end holds END and the index: limits a few bytes apart are
 * tried one by one.
 */
#define _GNU_SOURCE
#include <sys/resource.h>

#include "trace-test-util.h"

#define RECORDS 300000
#define LIMIT   (192u << 10)
/* calls a frame holds: several frames fit in the limit, then none */
#define FRAME_CALLS 5000

/* A frame too large for the file, then a small one, with the file size
 * limit `room` bytes past the header: false when the small frame went in
 * and took the room kept for the end (END, with a LOSS record for the
 * large frame, and the index). */
static bool end_fits(const char *dir, int i, rlim_t room)
{
	struct rlimit none = { RLIM_INFINITY, RLIM_INFINITY };
	uint64_t x = 88172645463325252ull, seq = 0;
	char name[32], path[512];
	struct stat st;
	bool ok;

	snprintf(name, sizeof(name), "sweep-%d.dnnt", i);
	struct dt_writer *w = test_writer(dir, name, 1u << 20);
	struct dt_ring *r = dt_writer_attach(w, 1, "main");
	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	CHECK(stat(path, &st) == 0);
	struct rlimit rl = { (rlim_t)st.st_size + room, RLIM_INFINITY };
	setrlimit(RLIMIT_FSIZE, &rl);
	for (int k = 0; k < 1000; k++) { /* arguments that do not compress */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		test_put_call(r, ++seq, (int32_t)x);
	}
	dt_writer_flush(w, 1000);
	for (int k = 0; k < 8; k++)
		test_put_call(r, ++seq, k);
	dt_writer_flush(w, 1000);
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);
	setrlimit(RLIMIT_FSIZE, &none);

	struct dt_reader *rd = dt_reader_open(path, NULL, NULL, 0);
	const struct dt_rec_hdr *h;
	int calls = 0;
	if (!rd)
		return false;
	while (dt_reader_next(rd, &h) == 1)
		calls += h->type == DT_REC_API_CALL;
	const struct dt_file_stats *s = dt_reader_stats(rd);
	ok = !calls || (s->end == DT_FILE_CLEAN && s->have_index);
	if (!ok)
		fprintf(stderr, "%llu bytes past the header: ended %d, index %d\n",
			(unsigned long long)room, (int)s->end, s->have_index);
	dt_reader_close(rd);
	unlink(path);
	return ok;
}

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
		/* several frames, not one: on a loaded machine the writer may
		 * not wake before a first frame alone outgrows the limit */
		if (i % FRAME_CALLS == FRAME_CALLS - 1)
			dt_writer_flush(w, 1000);
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
	CHECK(got + lost_full + lost_io <= RECORDS + 2 * RECORDS / FRAME_CALLS + 100);
	printf("%" PRIu64 " calls in %lld bytes, %" PRIu64
	       " records the file could not take\n",
	       got, (long long)st.st_size, lost_io);
	dt_reader_close(rd);

	/* every limit from too small for anything to well past the small
	 * frame and the end, a byte apart */
	int bad = 0;
	for (int i = 0; i < 600; i++)
		bad += !end_fits(dir, i, (rlim_t)i);
	CHECK_EQ_U(bad, 0);
	TEST_DONE();
}
