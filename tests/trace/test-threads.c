/*
 * test-threads.c - many threads append at once: every record is either in
 * the file, in its thread's order, or counted as lost; none is duplicated
 * or torn. Small rings make losses likely, large ones make them absent.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "trace-test-util.h"

#define THREADS    8
#define PER_THREAD 200000

struct worker {
	struct dt_writer *w;
	uint32_t tid;
};

static void *run(void *arg)
{
	struct worker *wk = arg;
	struct dt_ring *r = dt_writer_attach(wk->w, wk->tid, "w");

	for (int32_t i = 0; i < PER_THREAD; i++)
		test_put_call(r, (uint64_t)wk->tid << 32 | (uint32_t)i, i);
	dt_ring_detach(r);
	return NULL;
}

static void check_file(const char *path, bool expect_lossless)
{
	struct dt_reader *rd = dt_reader_open(path, NULL, NULL, 0);
	uint64_t got[THREADS] = { 0 }, lost[THREADS] = { 0 };
	int64_t last[THREADS];
	const struct dt_rec_hdr *h;

	CHECK(rd != NULL);
	if (!rd)
		return;
	for (int i = 0; i < THREADS; i++)
		last[i] = -1;
	while (dt_reader_next(rd, &h) == 1) {
		if (h->type == DT_REC_API_CALL) {
			const struct dt_rec_api_call *c = (const void *)h;
			uint32_t t = c->tid - 1, len;
			int32_t n;
			memcpy(&n, dt_rec_tail(h, &len), 4);
			if (t >= THREADS || (uint32_t)n != (uint32_t)c->seq) {
				dt_test_failures++;
				continue;
			}
			/* in order, no duplicates (gaps are losses) */
			if (n <= last[t])
				dt_test_failures++;
			last[t] = n;
			got[t]++;
		} else if (h->type == DT_REC_LOSS) {
			const struct dt_rec_loss *l = (const void *)h;
			if (l->tid - 1 < THREADS)
				lost[l->tid - 1] += l->count;
		}
	}
	const struct dt_file_stats *st = dt_reader_stats(rd);
	uint64_t total_lost = 0;
	for (int t = 0; t < THREADS; t++) {
		CHECK_EQ_U(got[t] + lost[t], PER_THREAD);
		total_lost += lost[t];
	}
	CHECK_EQ_U(st->end, DT_FILE_CLEAN);
	CHECK_EQ_U(st->lost, total_lost);
	if (expect_lossless)
		CHECK_EQ_U(total_lost, 0);
	printf("%s: %" PRIu64 " records lost of %d\n", path, total_lost,
	       THREADS * PER_THREAD);
	dt_reader_close(rd);
}

static void run_round(const char *dir, const char *name, uint32_t ring,
		      bool lossless)
{
	struct dt_writer *w = test_writer(dir, name, ring);
	struct worker wk[THREADS];
	pthread_t th[THREADS];
	char path[512];

	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	for (int i = 0; i < THREADS; i++) {
		wk[i] = (struct worker){ w, (uint32_t)i + 1 };
		pthread_create(&th[i], NULL, run, &wk[i]);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);
	check_file(path, lossless);
}

int main(void)
{
	const char *dir = dt_test_tmpdir();

	/* 64 KiB rings: the writer cannot keep up with 8 busy threads */
	run_round(dir, "small.dnnt", 64 << 10, false);
	/* 64 MiB rings hold everything: nothing may be lost */
	run_round(dir, "large.dnnt", 64 << 20, true);
	TEST_DONE();
}
