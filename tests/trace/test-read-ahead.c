/*
 * test-read-ahead.c - large traces are decoded ahead on a second thread:
 * a file of more than 8 MiB, whole and cut at frame boundaries and inside
 * frames, reads the records of its whole frames and says how it ended, as
 * test-truncate.c checks for small files (read in one thread); with a
 * damaged frame in the middle, it skips that frame and reads the rest, as
 * test-damage.c checks for small files.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "trace-test-util.h"

int main(void)
{
	const char *dir = dt_test_tmpdir();
	struct dt_writer *w = test_writer(dir, "big.dnnt", 1u << 22);
	struct dt_ring *r = dt_writer_attach(w, 1, "t");
	char path[512], cut_path[600];
	uint64_t seq = 0;

	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	snprintf(cut_path, sizeof(cut_path), "%s/cut.dnnt", dir);
	/* calls with varied arguments compress to some 10 bytes each */
	while (seq < 1000000) {
		if (!test_put_call(r, seq + 1, (int32_t)(seq * 2654435761u)))
			dt_writer_flush(w, 5000);
		else
			seq++;
	}
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);

	size_t size = 0;
	uint8_t *full = test_slurp(path, &size);
	CHECK(full != NULL);
	CHECK(size > (8u << 20)); /* big enough to be read ahead */
	if (!full)
		TEST_DONE();

	/* frame ends, and the records up to each */
	static struct test_frame fr[4096];
	size_t n = test_frames_of(full, size, fr, 4096);
	CHECK_EQ_U(fr[n - 1].end, size);

	/* whole, at the boundaries of a few late frames, and inside them */
	size_t cuts[16], nc = 0;
	cuts[nc++] = size;
	for (size_t i = n > 6 ? n - 6 : 1; i + 1 < n && nc < 14; i++) {
		cuts[nc++] = fr[i].end;
		cuts[nc++] = fr[i].end + (fr[i + 1].end - fr[i].end) / 2;
	}
	for (size_t c = 0; c < nc; c++) {
		size_t cut = cuts[c], whole = 0;
		uint64_t expect = 0;
		CHECK(test_write_file(cut_path, full, cut));
		for (size_t i = 1; i < n && fr[i].end <= cut; i++) {
			expect += fr[i].records;
			whole = i;
		}
		struct dt_reader *rd = dt_reader_open(cut_path, NULL, NULL, 0);
		CHECK(rd != NULL);
		if (!rd)
			continue;
		const struct dt_rec_hdr *h;
		uint64_t got = 0;
		while (dt_reader_next(rd, &h) == 1)
			got++;
		const struct dt_file_stats *st = dt_reader_stats(rd);
		CHECK_EQ_U(got, expect);
		if (cut == size)
			CHECK_EQ_U(st->end, DT_FILE_CLEAN);
		else if (fr[whole].end != cut)
			CHECK_EQ_U(st->end, DT_FILE_TRUNCATED);
		CHECK_EQ_U(st->bytes_lost, cut - fr[whole].end);
		dt_reader_close(rd);
	}
	/* bytes flipped in a frame in the middle, with and without the seek
	 * table: that frame is skipped, every other read */
	size_t bad = n / 2;
	uint8_t *copy = malloc(size);
	memcpy(copy, full, size);
	copy[fr[bad].end - 40] ^= 0x5a;
	copy[fr[bad].end - 41] ^= 0xa5;
	for (int with_index = 1; with_index >= 0; with_index--) {
		size_t len = with_index ? size : fr[n - 2].end;
		size_t got_n;
		CHECK(test_write_file(cut_path, copy, len));
		struct dt_reader *rd = dt_reader_open(cut_path, NULL, NULL, 0);
		CHECK(rd != NULL);
		if (!rd)
			continue;
		const struct dt_rec_hdr *h;
		uint64_t got = 0, expect = 0;
		while (dt_reader_next(rd, &h) == 1)
			got++;
		for (size_t i = 1; i < n; i++)
			expect += i == bad ? 0 : fr[i].records;
		const struct dt_file_stats *st = dt_reader_stats(rd);
		const struct dt_skip *s = dt_reader_skips(rd, &got_n);
		CHECK_EQ_U(got, expect);
		CHECK_EQ_U(st->end, DT_FILE_DAMAGED);
		CHECK_EQ_U(got_n, 1);
		CHECK_EQ_U(s[0].offset, fr[bad - 1].end);
		CHECK_EQ_U(s[0].size, fr[bad].end - fr[bad - 1].end);
		CHECK(s[0].exact);
		CHECK(st->records_missing_known);
		CHECK_EQ_U(st->records_missing, fr[bad].records);
		dt_reader_close(rd);
	}
	free(copy);

	/* closed before the end: the second thread is stopped and joined */
	struct dt_reader *rd = dt_reader_open(path, NULL, NULL, 0);
	const struct dt_rec_hdr *h;
	CHECK(rd != NULL);
	for (int i = 0; rd && i < 1000; i++)
		CHECK(dt_reader_next(rd, &h) == 1);
	dt_reader_close(rd);
	unlink(cut_path);
	free(full);
	TEST_DONE();
}
