/*
 * bench-batches.h - what the per-call benchmarks (bench-shim, bench-nvtx)
 * share: the clock, timing a call in batches, and the median and 90th
 * percentile of per-item times over batches, printed as "MEDIAN P90" for
 * their scripts.
 */
#ifndef BENCH_BATCHES_H
#define BENCH_BATCHES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Sorts t (n batches' per-item times) and prints its median and p90. */
static inline void print_median_p90(double *t, int n)
{
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	printf("%.1f %.1f\n", t[n / 2], t[n * 9 / 10]);
}

/* Busy for BENCH_PAUSE_US microseconds (none when unset): the thread keeps
 * its CPU and caches, as a program between two calls would, while the
 * shim's writer thread, on another, drains what the last batch recorded. */
static inline void pause_between_batches(void)
{
	static int64_t pause = -1;

	if (pause < 0) {
		const char *env = getenv("BENCH_PAUSE_US");
		pause = env ? atoll(env) * 1000 : 0;
	}
	for (uint64_t t0 = now_ns(); (int64_t)(now_ns() - t0) < pause;)
		;
}

/* Times call() in batches of `batch` calls, after 10 000 to warm up (the
 * first calls resolve symbols), each batch after a pause (above), and
 * prints the median and p90 per call. */
static inline int time_batches(void (*call)(void), int batches, int batch)
{
	double *per_call = malloc(sizeof(double) * (size_t)batches);

	if (!per_call)
		return 1;
	for (int i = 0; i < 10000; i++)
		call();
	for (int b = 0; b < batches; b++) {
		pause_between_batches();
		uint64_t t0 = now_ns();
		for (int i = 0; i < batch; i++)
			call();
		per_call[b] = (double)(now_ns() - t0) / batch;
	}
	print_median_p90(per_call, batches);
	free(per_call);
	return 0;
}

#endif /* BENCH_BATCHES_H */
