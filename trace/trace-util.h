/*
 * trace-util.h - small helpers shared by trace/'s writer and reader.
 * Private to trace/.
 */
#ifndef DT_TRACE_UTIL_H
#define DT_TRACE_UTIL_H

#include <stdatomic.h>
#include <stdbool.h>
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

/* Whether a flag another thread sets before it sleeps (the writer's) was
 * set, clearing it. It is read first: a producer over its ring's kick mark
 * asks on every record while the writer drains, and a load of a line the
 * writer seldom writes costs nothing, where a locked exchange would take
 * the line from every other producer in turn. */
static inline bool dt_take_flag(_Atomic int *flag)
{
	return atomic_load_explicit(flag, memory_order_relaxed) &&
	       atomic_exchange(flag, 0);
}

/* The checksum of a skippable frame's payload (FRAME's `hash`): XXH64,
 * seed 0, as zstd's frames use for their content. */
uint64_t dt_frame_hash(const void *p, size_t n);

/* Read up to size bytes of a small file (such as one under /proc); returns
 * the number of bytes read, 0 on any error. */
size_t dt_read_small_file(const char *path, char *buf, size_t size);

/* n bytes at p as a C string (malloc'ed), or NULL without memory. */
char *dt_dup_n(const void *p, size_t n);

/* trace-apis.c: the API table (APIDEF and LIBRARY records). The writer
 * adds the records of cfg's table to a header through add (a record of
 * type with fixed bytes and two tails; returns its fixed part or NULL);
 * the reader adds each record to fi, gives every API its library once
 * the header is read, and frees them. The readers' functions return 0,
 * or -1 (malformed, or no memory). */
struct dt_writer_config;
struct dt_file_info;
struct dt_rec_apidef;
struct dt_rec_library;
typedef void *(*dt_rec_add_fn)(void *b, uint16_t type, uint32_t fixed,
			       const void *tail1, uint32_t len1,
			       const void *tail2, uint32_t len2);
void dt_apis_write(const struct dt_writer_config *cfg, dt_rec_add_fn add,
		   void *b);
int dt_apis_add_def(struct dt_file_info *fi, const struct dt_rec_apidef *rec);
int dt_apis_add_library(struct dt_file_info *fi,
			const struct dt_rec_library *rec);
int dt_apis_assign_libraries(struct dt_file_info *fi);
void dt_apis_free(struct dt_file_info *fi);

#endif /* DT_TRACE_UTIL_H */
