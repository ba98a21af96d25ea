/*
 * trace-test-util.h - writing traces for the trace/ tests: a writer with a
 * small fake API table, and raw records of any type.
 */
#ifndef TRACE_TEST_UTIL_H
#define TRACE_TEST_UTIL_H

#include <stdio.h>
#include <string.h>
#include <zstd.h>

#include "test-util.h"
#include "dt-trace.h"

static const char *const test_api_names[] = { "cudnnAlpha", "cudnnBeta" };
static const char *const test_api_sigs[] = { "n:i4,desc:>p",
					     "data:ai4,alpha:k" };
static const uint16_t test_api_flags[] = { 0, DT_APIDEF_DEPRECATED };

static inline struct dt_writer *test_writer(const char *dir, const char *name,
					    uint32_t ring_size)
{
	static const struct dt_kv info[] = { { "test.key", "test value" } };
	char tmpl[512];
	struct dt_writer_config cfg = {
		.path_template = tmpl,
		.ring_size = ring_size,
		.flush_ms = 50,
		.info = info,
		.n_info = 1,
		.api_names = test_api_names,
		.api_sigs = test_api_sigs,
		.api_flags = test_api_flags,
		.api_count = 2,
	};

	snprintf(tmpl, sizeof(tmpl), "%s/%s", dir, name);
	struct dt_writer *w = dt_writer_open(&cfg);
	if (!w) {
		perror("dt_writer_open");
		exit(1);
	}
	return w;
}

/* A writer on the file template tmpl, recording for a process it names
 * (host "host", command line cmdline) with the test API table; frames are
 * written every flush_ms and where flushed. */
static inline struct dt_writer *
test_writer_as(const char *tmpl, const char *cmdline, uint32_t flush_ms)
{
	struct dt_writer_config cfg = {
		.path_template = tmpl,
		.flush_ms = flush_ms,
		.host = "host",
		.cmdline = cmdline,
		.api_names = test_api_names,
		.api_sigs = test_api_sigs,
		.api_flags = test_api_flags,
		.api_count = 2,
	};
	struct dt_writer *w = dt_writer_open(&cfg);

	if (!w) {
		perror("dt_writer_open");
		exit(1);
	}
	return w;
}

/* Append one record: a fixed part (whose header is filled in here) and a
 * tail of len bytes. Returns false when the ring had no room. */
static inline bool test_put(struct dt_ring *r, uint16_t type, void *fixed,
			    uint32_t fixed_size, const void *tail, uint32_t len)
{
	uint32_t size = dt_rec_align(fixed_size + len);
	uint8_t *p = dt_ring_reserve(r, size);

	if (!p)
		return false;
	memset(p, 0, size);
	memcpy(p, fixed, fixed_size);
	((struct dt_rec_hdr *)p)->type = type;
	((struct dt_rec_hdr *)p)->size = size;
	if (len)
		memcpy(p + fixed_size, tail, len);
	dt_ring_commit(r);
	return true;
}

/* An API_CALL of test API 0 whose argument n is `n`. */
static inline bool test_put_call(struct dt_ring *r, uint64_t seq, int32_t n)
{
	struct dt_rec_api_call c = { .api = 0,
				     .tid = r->tid,
				     .seq = seq,
				     .t_begin = seq * 10,
				     .t_end = seq * 10 + 5,
				     .len = 12 };
	uint8_t args[12];
	uint64_t desc = 0x1000 + (uint64_t)n;

	memcpy(args, &n, 4);
	memcpy(args + 4, &desc, 8);
	return test_put(r, DT_REC_API_CALL, &c, sizeof(c), args, sizeof(args));
}

/* Read a whole file into memory. */
static inline uint8_t *test_slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return buf;
}

/* Write n bytes to a new file at path; false on failure. */
static inline bool test_write_file(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(buf, 1, n, f) == n;

	if (f && fclose(f))
		ok = false;
	return ok;
}

/* The frames of a complete file: where each ends, the records it holds. */
struct test_frame {
	size_t end;       /* offset just past the frame */
	uint64_t records; /* records it holds (PAD and the seal excluded) */
};

/* Walk the frames of a complete file, counting records in each. */
static inline size_t test_frames_of(const uint8_t *buf, size_t size,
				    struct test_frame *fr, size_t max)
{
	size_t off = 0, n = 0;

	while (off < size && n < max) {
		uint32_t magic, len;
		uint64_t recs = 0;
		memcpy(&magic, buf + off, 4);
		if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {
			memcpy(&len, buf + off + 4, 4);
			if (magic == DT_FRAME_META)
				for (size_t p = 0; p < len;) {
					/* frames are not 8-aligned in the file
					 */
					struct dt_rec_hdr h;
					memcpy(&h, buf + off + 8 + p,
					       sizeof(h));
					recs += h.type != DT_REC_FRAME;
					p += h.size;
				}
			off += 8 + len;
		} else {
			size_t c = ZSTD_findFrameCompressedSize(buf + off,
								size - off);
			unsigned long long d =
				ZSTD_getFrameContentSize(buf + off, size - off);
			uint8_t *out = malloc(d);
			ZSTD_decompress(out, d, buf + off, c);
			for (size_t p = 0; p < d;) {
				const struct dt_rec_hdr *h =
					(const void *)(out + p);
				recs += h->type != DT_REC_PAD &&
					h->type != DT_REC_FRAME;
				p += h->size;
			}
			free(out);
			off += c;
		}
		fr[n++] = (struct test_frame){ off, recs };
	}
	return n;
}

#endif /* TRACE_TEST_UTIL_H */
