/*
 * test-truncate.c - a trace cut at every byte offset (as a killed process
 * or a full disk leaves it) reads cleanly up to its last complete frame,
 * and says how it ended: a cut is never taken for damage in the middle,
 * and the count of lost records is exact only when END was read.
 */
#define _GNU_SOURCE
#include "trace-test-util.h"

int main(void)
{
	const char *dir = dt_test_tmpdir();
	struct dt_writer *w = test_writer(dir, "cut.dnnt", 0);
	struct dt_ring *r = dt_writer_attach(w, 1, "t");
	char path[512];
	uint64_t seq = 0;
	struct test_frame fr[64];

	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	for (int f = 0; f < 4; f++) {
		for (int i = 0; i < 20 + f * 7; i++)
			test_put_call(r, ++seq, i);
		CHECK(dt_writer_flush(w, 5000) == 0);
	}
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);

	size_t size = 0;
	uint8_t *full = test_slurp(path, &size);
	CHECK(full != NULL);
	size_t nf = test_frames_of(full, size, fr, 64);
	CHECK(nf >= 6); /* header, 4 data frames, end, index */
	CHECK_EQ_U(fr[nf - 1].end, size);

	for (size_t cut = 0; cut <= size; cut++) {
		uint8_t *copy = malloc(
			cut ? cut : 1); /* exact size: overreads trip ASan */
		memcpy(copy, full, cut);
		int err = 0;
		struct dt_reader *rd =
			dt_reader_open_mem(copy, cut, &err, NULL, 0);
		uint64_t expect = 0;
		size_t whole = 0;

		for (size_t i = 1; i < nf && fr[i].end <= cut; i++) {
			expect += fr[i].records;
			whole = i;
		}
		if (cut < fr[0].end) {
			CHECK(rd == NULL);
			CHECK(err == DT_ERR_NOT_TRACE || err == DT_ERR_CORRUPT);
			free(copy);
			continue;
		}
		CHECK(rd != NULL);
		if (!rd) {
			free(copy);
			continue;
		}
		const struct dt_rec_hdr *h;
		uint64_t got = 0;
		while (dt_reader_next(rd, &h) == 1)
			got++;
		const struct dt_file_stats *st = dt_reader_stats(rd);
		if (got != expect) {
			fprintf(stderr,
				"cut at %zu: %" PRIu64
				" records, expected %" PRIu64 "\n",
				cut, got, expect);
			dt_test_failures++;
		}
		if (cut == size)
			CHECK_EQ_U(st->end, DT_FILE_CLEAN);
		else if (fr[whole].end == cut && whole < nf - 2)
			CHECK_EQ_U(st->end, DT_FILE_NO_END);
		else if (fr[whole].end != cut)
			CHECK_EQ_U(st->end, DT_FILE_TRUNCATED);
		CHECK_EQ_U(st->bytes_lost, cut - fr[whole].end);
		CHECK_EQ_U(st->skips, 0);
		CHECK_EQ_U(st->frames_skipped, 0);
		/* END is in the frame before the seek table */
		bool end_read = whole >= nf - 2;
		CHECK_EQ_U(st->have_end, end_read);
		CHECK_EQ_U(st->lost_exact, end_read);
		CHECK_EQ_U(st->records_missing_known, end_read);
		CHECK_EQ_U(st->records_missing, 0);
		if (st->end == DT_FILE_TRUNCATED)
			CHECK(strstr(st->error, "cut short") != NULL);
		dt_reader_close(rd);
		free(copy);
	}
	free(full);
	TEST_DONE();
}
