/*
 * trace-util.h - small helpers shared by trace/'s writer and reader.
 * Private to trace/.
 */
#ifndef DT_TRACE_UTIL_H
#define DT_TRACE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t dt_clock_read(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline uint64_t dt_clock_mono(void)
{
	return dt_clock_read(CLOCK_MONOTONIC);
}
static inline uint64_t dt_clock_real(void)
{
	return dt_clock_read(CLOCK_REALTIME);
}

/* The checksum of a skippable frame's payload (FRAME's `hash`): XXH64,
 * seed 0, as zstd's frames use for their content. */
uint64_t dt_frame_hash(const void *p, size_t n);

/* Read up to size bytes of a small file (such as one under /proc); returns
 * the number of bytes read, 0 on any error. */
size_t dt_read_small_file(const char *path, char *buf, size_t size);

#endif /* DT_TRACE_UTIL_H */
