/*
 * bench-writer.c - what recording costs the application thread, and how
 * fast one writer thread drains and compresses.
 *
 *   append:  ns to reserve, fill and commit one 64-byte API_CALL record
 *            (ring large enough that nothing is dropped);
 *   writer:  records per second the writer thread sustains, with one
 *            producer that retries when its ring is full (so the writer is
 *            the bottleneck), on records shaped like real calls.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt-trace.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *const names[] = { "cudnnBackendSetAttribute" };
static const char *const sigs[] = {
	"descriptor:p,attributeName:e,attributeType:e"
};

static struct dt_writer *open_writer(const char *dir, const char *name,
				     uint32_t ring)
{
	char tmpl[512];
	struct dt_writer_config cfg = { .path_template = tmpl,
					.ring_size = ring,
					.api_names = names,
					.api_sigs = sigs,
					.api_count = 1 };

	snprintf(tmpl, sizeof(tmpl), "%s/%s", dir, name);
	struct dt_writer *w = dt_writer_open(&cfg);
	if (!w) {
		perror("dt_writer_open");
		exit(1);
	}
	return w;
}

/* A 64-byte call record: 48 fixed + 16 bytes of arguments. */
static inline int put_call(struct dt_ring *r, uint64_t i, uint64_t t)
{
	struct dt_rec_api_call *c = dt_ring_reserve(r, 64);

	if (!c)
		return 0;
	c->hdr.type = DT_REC_API_CALL;
	c->hdr.reserved = 0;
	c->hdr.size = 64;
	c->api = 0;
	c->flags = 0;
	c->tid = r->tid;
	c->seq = i;
	c->t_begin = t;
	c->t_end = t + 90 + (i & 63);
	c->status = 0;
	c->len = 16;
	uint64_t args[2] = { 0x55e8c64c2140 + (i & 0xff) * 0x70,
			     900 + (i % 7) };
	memcpy(c + 1, args, 16);
	dt_ring_commit(r);
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 4000000;
	char dir[] = "/tmp/dnntrace-bench-XXXXXX";
	char path[600];

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;

	/* append cost: 256 MiB ring holds all n records, nothing waits */
	struct dt_writer *w = open_writer(dir, "append.dnnt", 256u << 20);
	struct dt_ring *r = dt_writer_attach(w, 1, "bench");
	uint64_t m =
		n < (256u << 20) / 64 - 1024 ? n : (256u << 20) / 64 - 1024;
	uint64_t t0 = now_ns(), dropped = 0;
	for (uint64_t i = 0; i < m; i++)
		dropped += !put_call(r, i, t0 + i * 100);
	uint64_t t1 = now_ns();
	printf("append:  %.2f ns per 64-byte record (%llu records, %llu "
	       "dropped)\n",
	       (double)(t1 - t0) / (double)m, (unsigned long long)m,
	       (unsigned long long)dropped);
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_CLOSE, 0);
	dt_writer_free(w);

	/* writer throughput: a 4 MiB ring, the producer retries when full */
	w = open_writer(dir, "writer.dnnt", 4u << 20);
	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	r = dt_writer_attach(w, 1, "bench");
	t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		while (!put_call(r, i, t0 + i * 100))
			sched_yield();
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_CLOSE, 0);
	t1 = now_ns();
	dt_writer_free(w);
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fclose(f);
	printf("writer:  %.2f M records/s (%llu records in %.3f s, file %.1f "
	       "MiB, "
	       "%.1f bytes per record)\n",
	       (double)n / ((double)(t1 - t0) / 1e9) / 1e6,
	       (unsigned long long)n, (double)(t1 - t0) / 1e9, size / 1048576.0,
	       (double)size / (double)n);

	/* read it back: the reader's speed, and a check that all arrived */
	struct dt_reader *rd = dt_reader_open(path, NULL, NULL, 0);
	const struct dt_rec_hdr *h;
	uint64_t calls = 0;
	t0 = now_ns();
	while (dt_reader_next(rd, &h) == 1)
		calls += h->type == DT_REC_API_CALL;
	t1 = now_ns();
	/* each failed reservation counts as lost, though this producer retried
	 */
	printf("reader:  %.2f M records/s (%llu calls read back; %llu "
	       "reservations "
	       "retried)\n",
	       (double)calls / ((double)(t1 - t0) / 1e9) / 1e6,
	       (unsigned long long)calls,
	       (unsigned long long)dt_reader_stats(rd)->lost);
	dt_reader_close(rd);
	unlink(path);
	snprintf(path, sizeof(path), "%s/append.dnnt", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}
