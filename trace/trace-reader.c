/*
 * trace-reader.c - streams a dnntrace file, frame by frame.
 *
 * Memory stays bounded by a few frames whatever the file's size. No length
 * field is trusted: every size is checked against what is left of the frame
 * or file before it is used, and every record of a frame is checked before
 * the first is returned. A damaged frame is skipped whole and reading goes
 * on with the next frame, found through the seek table of a finished file
 * when it is sound, else through the damaged frame's own structure, else by
 * scanning for the next frame that decodes. A file cut short yields every
 * record before the cut. In a file whose frames are sealed (format 1.6), a
 * frame's FRAME record places it: frames missing, read twice or from
 * another file are found, and those read twice or from another file are
 * not returned. dt_reader_stats() and dt_reader_skips() say what was not
 * read and why. The reader never writes: it repairs nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "dt-trace.h"
#include "trace-util.h"

/* Decompressed frames and skippable payloads larger than this are taken as
 * damaged (the writer makes 1 to 2 MiB chunks). */
#define FRAME_MAX (256u << 20)
#define IN_STEP   (128u << 10)
#define HEAD_MAX  18 /* ZSTD_FRAMEHEADERSIZE_MAX, not in the stable API */

/* One frame, decoded: its records (or nothing for frames that hold none),
 * or where and why the file ends; and the damaged bytes skipped before it,
 * if any. */
struct frame {
	enum {
		FRAME_RECORDS, /* a data or metadata frame: buf[0..len) */
		FRAME_NONE,    /* a frame without records (a seek table), or
				  a skipped range alone */
		FRAME_EOF,     /* the end of the file */
		FRAME_STOP, /* the file ends here for `end`: error says why */
	} kind;
	uint8_t *buf;
	size_t cap, len;
	uint64_t off; /* where the next frame starts */
	bool counted; /* a data frame (stats.frames) */
	bool index;   /* a valid seek table, of index_frames entries */
	uint32_t index_frames;
	bool sealed; /* ends with a FRAME record: `seal` */
	struct dt_rec_frame seal;
	uint64_t at;  /* where the frame starts */
	bool skipped; /* `skip` was skipped before this frame */
	struct dt_skip skip;
	enum dt_file_end end;
	uint64_t from; /* FRAME_STOP: the bytes from here on are lost */
	char error[160];
};

/* What an attempt to read one frame found. */
struct attempt {
	enum {
		TRY_GOOD, /* the frame is whole and sound, in the slot */
		TRY_CUT,  /* it runs past the end of the file */
		TRY_BAD,  /* it is damaged, for `why` */
		TRY_STOP, /* reading cannot go on: the slot says why */
	} result;
	enum dt_skip_reason why; /* also for TRY_CUT, should more follow */
	bool skippable;
	uint64_t end;     /* where its own structure says it ends; 0: unknown */
	uint64_t dsize;   /* its records' size; DT_SKIP_UNKNOWN: unknown */
	bool dsize_exact; /* decoded or read, not just taken from a header */
};

/* The seek table of a finished file, looked at only once a frame is
 * damaged. Entry k holds the size of the k-th frame, so the next frame is
 * found without guessing. Entries are read a batch at a time, and a cursor
 * only moves forward: finding every frame costs one pass over the table. */
#define INDEX_BATCH 340 /* entries of at most 12 bytes: about 4 KiB */
struct seek_index {
	int state;        /* 0: not looked for yet, 1: sound, -1: none */
	uint64_t entries; /* offset of entry 0 */
	uint64_t end;     /* offset of the seek table frame */
	uint32_t n, esize;
	uint32_t k; /* cursor: entry k describes the frame at pos */
	uint64_t pos;
	uint32_t first, count; /* entries held in buf */
	uint8_t buf[INDEX_BATCH * 12];
};

/* Frames are decoded ahead by a second thread in files larger than this
 * (the reader then costs its consumer little more than the records). */
#define PREFETCH_MIN (8u << 20)
#define SLOTS        4

struct dt_reader {
	int fd; /* -1 when reading from memory */
	const uint8_t *mem;
	uint64_t size;
	uint64_t off;  /* the end of the frame being read */
	uint64_t body; /* where the frames after the header start */

	struct dt_file_info info;
	unsigned body_infos; /* INFO records read after the header */
	/* info[] by key: slot k holds an index + 1, 0 when free */
	uint32_t *info_slots;
	size_t info_cap;
	size_t info_alloc; /* entries info.info has room for */
	/* the frames' places (sealed files): the next one expected */
	bool sealed;
	bool id_known; /* file_id from the header, or the first frame */
	uint64_t file_id;
	uint64_t next_seq;
	struct dt_file_stats stats;
	struct dt_skip skips[DT_SKIPS_MAX];

	/* the decoder: its next frame starts at dec_off */
	uint64_t dec_off;
	ZSTD_DCtx *dctx;
	uint8_t *in;       /* compressed bytes read for the decoder */
	size_t in_cap;     /* IN_STEP at least */
	size_t last_csize; /* the last frame's compressed size */
	struct seek_index index;
	uint8_t *scan; /* a window of the file, scanned for a frame */
	uint64_t scan_at;
	size_t scan_len;
	struct frame slots[SLOTS];
	unsigned produced, consumed; /* frames decoded, frames taken */

	/* the frame being read */
	struct frame *cur;
	const uint8_t *out;
	size_t out_len;
	size_t out_pos;
	bool done;

	/* the second thread, when there is one */
	bool threaded, quit;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t filled, freed;
};

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static int read_at(struct dt_reader *r, uint64_t off, void *buf, size_t n)
{
	if (off > r->size || n > r->size - off)
		return -1;
	if (r->fd < 0) {
		memcpy(buf, r->mem + off, n);
		return 0;
	}
	while (n) {
		ssize_t k = pread(r->fd, buf, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		buf = (uint8_t *)buf + k;
		off += (uint64_t)k;
		n -= (size_t)k;
	}
	return 0;
}

static bool is_frame_magic(uint32_t m)
{
	return m == ZSTD_MAGICNUMBER ||
	       (m & 0xFFFFFFF0u) == ZSTD_MAGIC_SKIPPABLE_START;
}

/* Whether a frame may start at `at`: the end of the file, too few bytes
 * left for a magic number (a file cut there), or a magic number. */
static bool frame_may_start(struct dt_reader *r, uint64_t at)
{
	uint8_t b[4];

	if (at > r->size)
		return false;
	if (r->size - at < 4)
		return true;
	return !read_at(r, at, b, 4) && is_frame_magic(get_le32(b));
}

/* The file ends at this frame, for the reason given. */
static void frame_stop(struct frame *f, enum dt_file_end end, uint64_t from,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void frame_stop(struct frame *f, enum dt_file_end end, uint64_t from,
		       const char *fmt, ...)
{
	va_list ap;

	f->kind = FRAME_STOP;
	f->end = end;
	f->from = from;
	va_start(ap, fmt);
	vsnprintf(f->error, sizeof(f->error), fmt, ap);
	va_end(ap);
}

/* The record types this reader knows, without a call per record. */
#define KNOWN(num, upper, lower, tail) [num] = true,
static const bool rec_known[DT_REC_TYPE_COUNT] = { DT_RECORD_TYPES(KNOWN) };
#undef KNOWN

/* Size of the record at p if it is well formed within avail bytes, else 0. */
static uint32_t check_record(const uint8_t *p, size_t avail)
{
	const struct dt_rec_hdr *h = (const void *)p;
	const struct dt_rec_desc *d;
	uint32_t len;

	if (avail < sizeof(*h) || h->size < sizeof(*h) || h->size % 8 ||
	    h->size > avail)
		return 0;
	d = dt_rec_describe(h->type);
	if (!d)
		return h->size; /* unknown types are skipped by size */
	if (h->size < d->fixed)
		return 0;
	dt_rec_tail(h, &len);
	if (len > h->size - d->fixed)
		return 0;
	return h->size;
}

/* Whether buf[0..len) is whole, well-formed records; *last gets where the
 * last starts (len when there is none). */
static bool check_records(const uint8_t *buf, size_t len, size_t *last)
{
	size_t pos = 0;
	uint32_t size;

	*last = len;
	while (pos < len && (size = check_record(buf + pos, len - pos))) {
		*last = pos;
		pos += size;
	}
	return pos == len;
}

static int ensure_buf(struct frame *f, size_t n)
{
	if (n <= f->cap)
		return 0;
	uint8_t *p = realloc(f->buf, n);
	if (!p)
		return -1;
	f->buf = p;
	f->cap = n;
	return 0;
}

const char *dt_info_get(const struct dt_file_info *fi, const char *key)
{
	for (size_t i = 0; i < fi->n_info; i++)
		if (!strcmp(fi->info[i].key, key))
			return fi->info[i].value;
	return NULL;
}

/* Where key k (n bytes) is in the index of INFO keys, or the free slot
 * where it goes. A key is compared as the C string it was read into, as
 * dt_info_get() compares it. */
static uint32_t *info_slot(struct dt_reader *r, const void *k, size_t n)
{
	size_t mask = r->info_cap - 1;

	for (size_t i = dt_hash(k, n, 0) & mask;; i = (i + 1) & mask) {
		uint32_t *s = &r->info_slots[i];
		if (!*s)
			return s;
		const char *key = r->info.info[*s - 1].key;
		if (strlen(key) == n && !memcmp(key, k, n))
			return s;
	}
}

/* Index fact i by its key, unless a fact before it has that key. */
static void index_info(struct dt_reader *r, size_t i)
{
	const char *key = r->info.info[i].key;
	uint32_t *slot = info_slot(r, key, strlen(key));

	if (!*slot)
		*slot = (uint32_t)i + 1;
}

/* Room for one more INFO fact: the array and its index grow by doubling,
 * so that reading n facts costs O(n), whatever a header holds. */
static int info_room(struct dt_reader *r)
{
	struct dt_file_info *fi = &r->info;

	if (fi->n_info == r->info_alloc) {
		size_t n = r->info_alloc ? 2 * r->info_alloc : 32;
		struct dt_kv *kv = realloc(fi->info, n * sizeof(*kv));
		if (!kv)
			return -1;
		fi->info = kv;
		r->info_alloc = n;
	}
	if (2 * (fi->n_info + 1) <= r->info_cap)
		return 0;
	size_t cap = r->info_cap ? 2 * r->info_cap : 64;
	uint32_t *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	free(r->info_slots);
	r->info_slots = slots;
	r->info_cap = cap;
	for (size_t i = 0; i < fi->n_info; i++)
		index_info(r, i);
	return 0;
}

static int add_info(struct dt_reader *r, const struct dt_rec_info *rec)
{
	struct dt_file_info *fi = &r->info;
	uint32_t len;
	const uint8_t *t = dt_rec_tail(&rec->hdr, &len);
	struct dt_kv *kv;

	if (rec->key_len > len)
		return -1;
	if (info_room(r))
		return -1;
	/* the first word on a key stands: a body's INFO only adds what the
	 * header lacked (a key holding a NUL is read up to it, and is never
	 * the same as one before it) */
	if (!memchr(t, 0, rec->key_len) && *info_slot(r, t, rec->key_len))
		return 0;
	kv = fi->info;
	kv[fi->n_info].key = dt_dup_n(t, rec->key_len);
	kv[fi->n_info].value = dt_dup_n(t + rec->key_len, len - rec->key_len);
	if (!kv[fi->n_info].key || !kv[fi->n_info].value) {
		free((void *)kv[fi->n_info].key);
		free((void *)kv[fi->n_info].value);
		return -1;
	}
	index_info(r, fi->n_info++);
	return 0;
}

/* Why a file without a dnntrace header is not a trace, in words. */
static int not_trace(struct dt_reader *r, const uint8_t *hdr8, char *errbuf,
		     size_t errlen)
{
	uint32_t magic = r->size >= 4 ? get_le32(hdr8) : 0;

	if (r->size == 0)
		snprintf(errbuf, errlen, "not a dnntrace file: it is empty");
	else if (r->size < 8)
		snprintf(errbuf, errlen,
			 "not a dnntrace file: it is only %" PRIu64
			 " bytes long",
			 r->size);
	else if (magic == ZSTD_MAGICNUMBER)
		snprintf(errbuf, errlen,
			 "not a dnntrace file: it is a plain zstd stream, "
			 "without a dnntrace header");
	else if ((magic & 0xFFFFFFF0u) == ZSTD_MAGIC_SKIPPABLE_START &&
		 magic != DT_FRAME_HEADER)
		snprintf(errbuf, errlen,
			 "not a dnntrace file: its first frame is not a "
			 "dnntrace header");
	else if (magic == DT_FRAME_HEADER)
		snprintf(errbuf, errlen,
			 "not a dnntrace file: its header frame is too short "
			 "or too large (%u bytes)",
			 get_le32(hdr8 + 4));
	else
		snprintf(errbuf, errlen,
			 "not a dnntrace file: it does not start with a "
			 "dnntrace header");
	return DT_ERR_NOT_TRACE;
}

/* What the seal at p + last of a skippable frame's payload checks: every
 * byte before its `hash`. */
static uint64_t seal_hash(const uint8_t *p, size_t last)
{
	return dt_frame_hash(p, last + offsetof(struct dt_rec_frame, hash));
}

/* The header's seal, its last record: its place (first) and the checksum
 * of every byte before it. A file from before seals has none; one that
 * says it has (1.6 on) but lacks it, or whose bytes do not match, was
 * damaged, and its names and facts may be wrong; its file id is then
 * taken from its first frame. */
static void check_header_seal(struct dt_reader *r, const uint8_t *p,
			      uint32_t len, uint32_t last)
{
	const struct dt_rec_frame *s = (const void *)(p + last);

	r->sealed = last < len && s->hdr.type == DT_REC_FRAME;
	r->stats.sealed = r->sealed;
	r->next_seq = 1;
	if (!r->sealed) {
		r->stats.header_damaged = r->info.hdr.minor >= 6;
		return;
	}
	r->stats.header_damaged = s->seq != 0 || s->hash != seal_hash(p, last);
	r->id_known = !r->stats.header_damaged;
	r->file_id = s->file_id;
}

static int parse_header(struct dt_reader *r, char *errbuf, size_t errlen)
{
	uint8_t hdr8[8] = { 0 };
	uint32_t len;
	uint8_t *p;

	if (read_at(r, 0, hdr8, r->size < 8 ? (size_t)r->size : 8) ||
	    r->size < 8 || get_le32(hdr8) != DT_FRAME_HEADER)
		return not_trace(r, hdr8, errbuf, errlen);
	len = get_le32(hdr8 + 4);
	if (len < sizeof(struct dt_file_header) || len > FRAME_MAX)
		return not_trace(r, hdr8, errbuf, errlen);
	p = malloc(len);
	if (!p)
		return DT_ERR_NOMEM;
	if (read_at(r, 8, p, len)) {
		free(p);
		snprintf(errbuf, errlen,
			 "the file ends inside its header (%" PRIu64
			 " of %u bytes)",
			 r->size, len + 8);
		return DT_ERR_CORRUPT;
	}
	memcpy(&r->info.hdr, p, sizeof(r->info.hdr));
	if (memcmp(r->info.hdr.magic, DT_FILE_MAGIC, 8) != 0) {
		free(p);
		snprintf(errbuf, errlen,
			 "not a dnntrace file: its header frame does not "
			 "start with " DT_FILE_MAGIC);
		return DT_ERR_NOT_TRACE;
	}
	if (r->info.hdr.major != DT_FORMAT_MAJOR) {
		free(p);
		snprintf(errbuf, errlen,
			 "format version %u.%u is not supported (this reader "
			 "reads %u.x)",
			 r->info.hdr.major, r->info.hdr.minor, DT_FORMAT_MAJOR);
		return DT_ERR_VERSION;
	}
	uint32_t last = len;
	for (uint32_t pos = sizeof(struct dt_file_header); pos < len;) {
		const struct dt_rec_hdr *h = (const void *)(p + pos);
		uint32_t size = check_record(p + pos, len - pos);
		int rc = 0;

		if (!size) {
			free(p);
			snprintf(errbuf, errlen,
				 "malformed record in the file header");
			return DT_ERR_CORRUPT;
		}
		if (h->type == DT_REC_INFO)
			rc = add_info(r, (const void *)h);
		else if (h->type == DT_REC_APIDEF)
			rc = dt_apis_add_def(&r->info, (const void *)h);
		else if (h->type == DT_REC_LIBRARY)
			rc = dt_apis_add_library(&r->info, (const void *)h);
		if (rc) {
			free(p);
			snprintf(errbuf, errlen,
				 "malformed record in the file header");
			return DT_ERR_CORRUPT;
		}
		last = pos;
		pos += size;
	}
	if (dt_apis_assign_libraries(&r->info)) {
		free(p);
		snprintf(errbuf, errlen, "out of memory");
		return DT_ERR_NOMEM;
	}
	check_header_seal(r, p, len, last);
	free(p);
	r->off = r->dec_off = r->body = 8 + (uint64_t)len;
	return DT_OK;
}

static void *decoder_main(void *arg);

static struct dt_reader *open_common(struct dt_reader *r, int *err,
				     char *errbuf, size_t errlen)
{
	char dummy[8];
	int rc;

	if (!errbuf) {
		errbuf = dummy;
		errlen = sizeof(dummy);
	}
	r->stats.file_size = r->size;
	r->stats.skips_exact = true;
	r->dctx = ZSTD_createDCtx();
	r->in = malloc(IN_STEP);
	r->in_cap = IN_STEP;
	if (!r->dctx || !r->in) {
		rc = DT_ERR_NOMEM;
		snprintf(errbuf, errlen, "out of memory");
	} else {
		rc = parse_header(r, errbuf, errlen);
	}
	if (err)
		*err = rc;
	if (rc != DT_OK) {
		dt_reader_close(r);
		return NULL;
	}
	/* a big file is decoded ahead, on a second thread; a failure to start
	 * it only makes reading slower */
	if (r->fd >= 0 && r->size >= PREFETCH_MIN) {
		pthread_mutex_init(&r->lock, NULL);
		pthread_cond_init(&r->filled, NULL);
		pthread_cond_init(&r->freed, NULL);
		r->threaded =
			pthread_create(&r->thread, NULL, decoder_main, r) == 0;
		if (!r->threaded) {
			pthread_cond_destroy(&r->freed);
			pthread_cond_destroy(&r->filled);
			pthread_mutex_destroy(&r->lock);
		}
	}
	return r;
}

/* What a file that is no regular file is, in words. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a pipe";
	if (S_ISSOCK(mode))
		return "a socket";
	return "a special file";
}

struct dt_reader *dt_reader_open(const char *path, int *err, char *errbuf,
				 size_t errlen)
{
	struct dt_reader *r = calloc(1, sizeof(*r));
	struct stat st;
	int e = 0;

	if (!r) {
		if (err)
			*err = DT_ERR_NOMEM;
		return NULL;
	}
	/* O_NONBLOCK: a pipe with no writer is opened at once (and refused
	 * below) instead of waiting for a writer; regular files ignore it */
	r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (r->fd < 0 || fstat(r->fd, &st))
		e = errno;
	if (e || !S_ISREG(st.st_mode)) {
		/* the reader seeks, so it reads regular files only */
		if (errbuf && e)
			snprintf(errbuf, errlen, "cannot read %s: %s", path,
				 strerror(e));
		else if (errbuf)
			snprintf(errbuf, errlen,
				 "cannot read %s: it is %s, not a regular "
				 "file%s",
				 path, file_kind(st.st_mode),
				 S_ISFIFO(st.st_mode)
					 ? " (save the trace to a file first)"
					 : "");
		if (err)
			*err = DT_ERR_IO;
		if (r->fd >= 0)
			close(r->fd);
		free(r);
		return NULL;
	}
	r->size = (uint64_t)st.st_size;
	return open_common(r, err, errbuf, errlen);
}

struct dt_reader *dt_reader_open_mem(const void *data, size_t size, int *err,
				     char *errbuf, size_t errlen)
{
	struct dt_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		if (err)
			*err = DT_ERR_NOMEM;
		return NULL;
	}
	r->fd = -1;
	r->mem = data;
	r->size = size;
	return open_common(r, err, errbuf, errlen);
}

void dt_reader_close(struct dt_reader *r)
{
	if (!r)
		return;
	if (r->threaded) {
		pthread_mutex_lock(&r->lock);
		r->quit = true;
		pthread_cond_signal(&r->freed);
		pthread_mutex_unlock(&r->lock);
		pthread_join(r->thread, NULL);
		pthread_cond_destroy(&r->freed);
		pthread_cond_destroy(&r->filled);
		pthread_mutex_destroy(&r->lock);
	}
	if (r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; i < r->info.n_info; i++) {
		free((void *)r->info.info[i].key);
		free((void *)r->info.info[i].value);
	}
	dt_apis_free(&r->info);
	free(r->info.info);
	free(r->info_slots);
	ZSTD_freeDCtx(r->dctx);
	free(r->in);
	free(r->scan);
	for (int i = 0; i < SLOTS; i++)
		free(r->slots[i].buf);
	free(r);
}

const struct dt_file_info *dt_reader_info(const struct dt_reader *r)
{
	return &r->info;
}

uint64_t dt_reader_offset(const struct dt_reader *r)
{
	return r->off;
}

const struct dt_file_stats *dt_reader_stats(const struct dt_reader *r)
{
	return &r->stats;
}

const struct dt_skip *dt_reader_skips(const struct dt_reader *r, size_t *n)
{
	*n = r->stats.skips < DT_SKIPS_MAX ? (size_t)r->stats.skips
					   : DT_SKIPS_MAX;
	return r->skips;
}

const char *dt_skip_reason_str(enum dt_skip_reason why)
{
	switch (why) {
	case DT_SKIP_NO_FRAME:
		return "no frame starts there";
	case DT_SKIP_BAD_HEADER:
		return "bad frame header";
	case DT_SKIP_BAD_BLOCK:
		return "bad compressed block";
	case DT_SKIP_CHECKSUM:
		return "checksum mismatch";
	case DT_SKIP_BAD_SIZE:
		return "content size differs from its header";
	case DT_SKIP_BAD_RECORD:
		return "malformed record";
	}
	return "damaged";
}

/* ------------------------------------------------------- one frame */

static void try_result(struct attempt *a, int result, enum dt_skip_reason why,
		       uint64_t end)
{
	a->result = result;
	a->why = why;
	a->end = end;
}

/* Reading cannot go on at `at` (a read error, no memory). */
static void try_stop(struct frame *f, struct attempt *a, uint64_t at,
		     const char *what)
{
	a->result = TRY_STOP;
	frame_stop(f, DT_FILE_CORRUPT, at, "%s at offset %" PRIu64, what, at);
}

/* The frame's content is in f->buf: sound if its records are, and in a
 * sealed file, if it ends with its seal, which for a skippable frame
 * (zstd checks the content of the others) matches the bytes before it. */
static void records_frame(const struct dt_reader *r, struct frame *f,
			  struct attempt *a, size_t len, uint64_t end,
			  bool data)
{
	size_t last;

	a->dsize = len;
	a->dsize_exact = true;
	if (!check_records(f->buf, len, &last))
		return try_result(a, TRY_BAD, DT_SKIP_BAD_RECORD, end);
	f->sealed = last < len &&
		    ((const struct dt_rec_hdr *)(f->buf + last))->type ==
			    DT_REC_FRAME;
	if (f->sealed)
		memcpy(&f->seal, f->buf + last, sizeof(f->seal));
	if (r->sealed && !f->sealed)
		return try_result(a, TRY_BAD, DT_SKIP_BAD_RECORD, end);
	if (r->sealed && !data && f->seal.hash != seal_hash(f->buf, last))
		return try_result(a, TRY_BAD, DT_SKIP_CHECKSUM, end);
	f->kind = FRAME_RECORDS;
	f->len = len;
	f->off = end;
	f->counted = data;
	a->result = TRY_GOOD;
}

static enum dt_skip_reason zstd_reason(size_t code)
{
	switch (ZSTD_getErrorCode(code)) {
	case ZSTD_error_checksum_wrong:
		return DT_SKIP_CHECKSUM;
	case ZSTD_error_dstSize_tooSmall:
		return DT_SKIP_BAD_SIZE;
	case ZSTD_error_prefix_unknown:
	case ZSTD_error_version_unsupported:
	case ZSTD_error_frameParameter_unsupported:
	case ZSTD_error_frameParameter_windowTooLarge:
	case ZSTD_error_memory_allocation: /* a window too large to hold */
		return DT_SKIP_BAD_HEADER;
	default:
		return DT_SKIP_BAD_BLOCK;
	}
}

/* The whole compressed frame at `at`, when its blocks are all there: in the
 * mapped file, or read into r->in. Sets *csize; NULL when the frame is cut
 * short, its blocks are malformed, or it is unreadable. */
static const uint8_t *whole_frame(struct dt_reader *r, uint64_t at,
				  size_t *csize)
{
	uint64_t left = r->size - at;
	size_t have, want;

	if (r->fd < 0) {
		*csize =
			ZSTD_findFrameCompressedSize(r->mem + at, (size_t)left);
		return ZSTD_isError(*csize) ? NULL : r->mem + at;
	}
	/* frames of one file are alike: read a little more than the last */
	want = r->last_csize + r->last_csize / 8 + 4096;
	if (want < IN_STEP)
		want = IN_STEP;
	for (have = 0;;) {
		if (want > left)
			want = (size_t)left;
		if (want > r->in_cap) {
			uint8_t *p = realloc(r->in, want);
			if (!p)
				return NULL;
			r->in = p;
			r->in_cap = want;
		}
		if (read_at(r, at + have, r->in + have, want - have))
			return NULL;
		have = want;
		*csize = ZSTD_findFrameCompressedSize(r->in, have);
		if (!ZSTD_isError(*csize))
			return r->in;
		/* more bytes help only a frame that ran out of them */
		if (ZSTD_getErrorCode(*csize) != ZSTD_error_srcSize_wrong ||
		    have == left || have >= FRAME_MAX)
			return NULL;
		want = have * 2;
	}
}

/* Decode the zstd frame at `at` through the streaming decoder, which reads
 * a frame that is not whole (or too large to read at once) and says how it
 * ends: cut short, or damaged. */
static void stream_zstd(struct dt_reader *r, struct frame *f, uint64_t at,
			size_t content, struct attempt *a)
{
	ZSTD_outBuffer ob = { f->buf, content, 0 };
	uint64_t pos = at;

	ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
	for (;;) {
		size_t n = IN_STEP, ret;

		if (n > r->size - pos)
			n = (size_t)(r->size - pos);
		if (n == 0)
			return try_result(a, TRY_CUT, DT_SKIP_BAD_BLOCK, 0);
		if (read_at(r, pos, r->in, n))
			return try_stop(f, a, pos, "read error");
		ZSTD_inBuffer ib = { r->in, n, 0 };
		ret = ZSTD_decompressStream(r->dctx, &ob, &ib);
		if (ZSTD_isError(ret))
			return try_result(a, TRY_BAD, zstd_reason(ret), 0);
		pos += ib.pos;
		if (ret == 0)
			break;
		if (ib.pos == 0 && ob.pos == ob.size)
			return try_result(a, TRY_BAD, DT_SKIP_BAD_SIZE, 0);
	}
	if (ob.pos != content)
		return try_result(a, TRY_BAD, DT_SKIP_BAD_SIZE, pos);
	records_frame(r, f, a, ob.pos, pos, true);
}

/* Decode the zstd frame at `at` into f: in one pass when the whole frame is
 * at hand (no copy through the decoder's window), else streamed. A frame
 * that must be whole (a candidate found by scanning) is never streamed. */
static void try_zstd(struct dt_reader *r, struct frame *f, uint64_t at,
		     bool whole, struct attempt *a)
{
	uint8_t head[HEAD_MAX];
	size_t hn = sizeof(head), csize;
	unsigned long long content;

	if (hn > r->size - at)
		hn = (size_t)(r->size - at);
	if (read_at(r, at, head, hn))
		return try_stop(f, a, at, "read error");
	content = ZSTD_getFrameContentSize(head, hn);
	if (content == ZSTD_CONTENTSIZE_ERROR)
		return try_result(a, hn < sizeof(head) ? TRY_CUT : TRY_BAD,
				  DT_SKIP_BAD_HEADER, 0);
	const uint8_t *src = whole_frame(r, at, &csize);
	if (content == ZSTD_CONTENTSIZE_UNKNOWN || content > FRAME_MAX)
		return try_result(a, TRY_BAD, DT_SKIP_BAD_HEADER,
				  src ? at + csize : 0);
	a->dsize = content;
	if (!src && whole)
		return try_result(a, TRY_BAD, DT_SKIP_BAD_BLOCK, 0);
	if (ensure_buf(f, content ? (size_t)content : 1))
		return try_stop(f, a, at, "out of memory for the frame");
	if (src) {
		size_t got = ZSTD_decompressDCtx(r->dctx, f->buf,
						 (size_t)content, src, csize);
		if (ZSTD_isError(got))
			return try_result(a, TRY_BAD, zstd_reason(got),
					  at + csize);
		if (got != content)
			return try_result(a, TRY_BAD, DT_SKIP_BAD_SIZE,
					  at + csize);
		r->last_csize = csize;
		return records_frame(r, f, a, got, at + csize, true);
	}
	stream_zstd(r, f, at, (size_t)content, a);
}

static void decode_seek_table(struct dt_reader *r, struct frame *f, uint64_t at,
			      uint32_t len)
{
	uint8_t foot[9];

	if (len < 9 || read_at(r, at + 8 + len - 9, foot, 9))
		return;
	uint32_t n = get_le32(foot);
	uint8_t desc = foot[4];
	uint32_t entry = (desc & 0x80) ? 12 : 8;

	if (get_le32(foot + 5) != DT_SEEK_FOOTER_MAGIC ||
	    (uint64_t)n * entry + 9 != len)
		return;
	f->index = true;
	f->index_frames = n;
}

/* Whether the skippable frame at `at`, `len` bytes, is a file header. */
static bool is_header(struct dt_reader *r, uint64_t at, uint32_t len)
{
	char magic[8];

	return len >= sizeof(struct dt_file_header) &&
	       !read_at(r, at + 8, magic, 8) &&
	       !memcmp(magic, DT_FILE_MAGIC, 8);
}

/* A skippable frame at `at`: metadata records, a seek table, or someone
 * else's frame. A candidate found by scanning must prove itself: metadata
 * that holds records, a seek table with its footer. */
static void try_skippable(struct dt_reader *r, struct frame *f, uint64_t at,
			  uint32_t magic, bool strict, struct attempt *a)
{
	uint8_t h[8];
	uint32_t len;
	uint64_t end;

	a->skippable = true;
	if (r->size - at < 8)
		return try_result(a, TRY_CUT, DT_SKIP_BAD_HEADER, 0);
	if (read_at(r, at, h, 8))
		return try_stop(f, a, at, "read error");
	len = get_le32(h + 4);
	if (len > r->size - at - 8)
		return try_result(a, TRY_CUT, DT_SKIP_BAD_HEADER, 0);
	/* a size that leads nowhere is damage, not a frame */
	end = at + 8 + len;
	if (!frame_may_start(r, end))
		return try_result(a, TRY_BAD, DT_SKIP_BAD_HEADER, 0);
	if (magic == DT_FRAME_HEADER && is_header(r, at, len)) {
		/* a file never holds a second header: another trace was
		 * appended to this one */
		a->result = TRY_STOP;
		return frame_stop(f, DT_FILE_DAMAGED, at,
				  "another trace starts at offset %" PRIu64
				  " (files joined): not read",
				  at);
	}
	if (magic == DT_FRAME_META) {
		if (len > FRAME_MAX || (strict && len == 0))
			return try_result(a, TRY_BAD, DT_SKIP_BAD_HEADER, end);
		if (ensure_buf(f, len ? len : 1))
			return try_stop(f, a, at,
					"out of memory for the frame");
		if (read_at(r, at + 8, f->buf, len))
			return try_stop(f, a, at, "read error");
		return records_frame(r, f, a, len, end, false);
	}
	a->dsize = 0;
	if (magic == DT_FRAME_SEEK) {
		decode_seek_table(r, f, at, len);
		if (strict && !f->index)
			return try_result(a, TRY_BAD, DT_SKIP_BAD_HEADER, end);
	}
	/* other skippable frames belong to someone else: skip them */
	f->kind = FRAME_NONE;
	f->off = end;
	a->result = TRY_GOOD;
}

/* Read the frame at `at` into f and check all of it. `strict` for a
 * candidate found by scanning: it must be whole and prove itself. */
static void try_frame(struct dt_reader *r, struct frame *f, uint64_t at,
		      bool strict, struct attempt *a)
{
	uint8_t b[4];
	uint32_t magic;

	*a = (struct attempt){ .dsize = DT_SKIP_UNKNOWN };
	f->kind = FRAME_NONE;
	f->len = 0;
	f->counted = f->index = f->sealed = false;
	f->off = f->at = at;
	if (r->size - at < 4)
		return try_result(a, TRY_CUT, DT_SKIP_NO_FRAME, 0);
	if (read_at(r, at, b, 4))
		return try_stop(f, a, at, "read error");
	magic = get_le32(b);
	if (magic == ZSTD_MAGICNUMBER)
		return try_zstd(r, f, at, strict, a);
	if ((magic & 0xFFFFFFF0u) == ZSTD_MAGIC_SKIPPABLE_START)
		return try_skippable(r, f, at, magic, strict, a);
	try_result(a, TRY_BAD, DT_SKIP_NO_FRAME, 0);
}

/* ------------------------------------------------------ resynchronising */

/* Entry k of the seek table: a frame's compressed and decompressed sizes. */
static int index_entry(struct dt_reader *r, uint32_t k, uint32_t *csize,
		       uint32_t *dsize)
{
	struct seek_index *x = &r->index;

	if (k < x->first || k - x->first >= x->count) {
		uint32_t n = x->n - k;
		if (n > sizeof(x->buf) / x->esize)
			n = (uint32_t)(sizeof(x->buf) / x->esize);
		if (read_at(r, x->entries + (uint64_t)k * x->esize, x->buf,
			    (size_t)n * x->esize))
			return -1;
		x->first = k;
		x->count = n;
	}
	const uint8_t *e = x->buf + (size_t)(k - x->first) * x->esize;
	*csize = get_le32(e);
	*dsize = get_le32(e + 4);
	return 0;
}

/* Find the seek table and keep it only if it describes this file: its
 * frames' sizes add up to where it starts, the first being the header. */
static void index_load(struct dt_reader *r)
{
	struct seek_index *x = &r->index;
	uint8_t foot[9], h[8];
	uint64_t len, sum = 0;

	x->state = -1;
	if (r->size - r->body < 8 + 9 || read_at(r, r->size - 9, foot, 9) ||
	    get_le32(foot + 5) != DT_SEEK_FOOTER_MAGIC || (foot[4] & 0x7C))
		return;
	x->n = get_le32(foot);
	x->esize = (foot[4] & 0x80) ? 12 : 8;
	len = (uint64_t)x->n * x->esize + 9;
	if (len > r->size - r->body - 8)
		return;
	x->end = r->size - 8 - len;
	if (read_at(r, x->end, h, 8) || get_le32(h) != DT_FRAME_SEEK ||
	    get_le32(h + 4) != len)
		return;
	x->entries = x->end + 8;
	x->first = x->count = 0;
	for (uint32_t k = 0; k < x->n; k++) {
		uint32_t c, d;
		if (index_entry(r, k, &c, &d) || c < 8 ||
		    (k == 0 && c != r->body))
			return;
		sum += c;
	}
	if (sum != x->end)
		return;
	x->k = 0;
	x->pos = 0;
	x->state = 1;
}

/* Where the frame holding offset `at` ends, by the seek table. Returns true
 * when a frame starts exactly at `at` (and sets *dsize to its size). */
static bool index_find(struct dt_reader *r, uint64_t at, uint64_t *next,
		       uint64_t *dsize)
{
	struct seek_index *x = &r->index;
	uint32_t c = 0, d = 0;

	for (;;) {
		/* the frames add up to the table, which starts after `at` */
		if (x->k >= x->n || index_entry(r, x->k, &c, &d)) {
			x->state = -1;
			return false;
		}
		if (x->pos + c > at)
			break;
		x->pos += c;
		x->k++;
	}
	*next = x->pos + c;
	*dsize = d;
	return x->pos == at;
}

/* The first offset from `from` on where a frame's magic number is; the end
 * of the file when there is none, UINT64_MAX when the file cannot be read.
 * A file is read a window at a time, kept for the next call: candidates
 * that fail close together cost no rereading. */
static uint64_t find_magic(struct dt_reader *r, uint64_t from)
{
	while (from <= r->size && r->size - from >= 4) {
		const uint8_t *p = r->mem + from;
		size_t n = (size_t)(r->size - from);

		if (r->fd >= 0) {
			if (from < r->scan_at ||
			    from - r->scan_at + 4 > r->scan_len) {
				size_t want = n < IN_STEP ? n : IN_STEP;
				if (!r->scan && !(r->scan = malloc(IN_STEP)))
					return UINT64_MAX;
				if (read_at(r, from, r->scan, want))
					return UINT64_MAX;
				r->scan_at = from;
				r->scan_len = want;
			}
			p = r->scan + (from - r->scan_at);
			n = r->scan_len - (size_t)(from - r->scan_at);
		}
		for (size_t i = 0; i + 4 <= n; i++)
			if ((p[i + 3] == 0xFD || p[i + 3] == 0x18) &&
			    is_frame_magic(get_le32(p + i)))
				return from + i;
		from += n - 3;
	}
	return r->size;
}

/* Skip to `next`, where the frame after the damaged one starts. */
static void skip_to(struct dt_reader *r, struct frame *f, uint64_t next)
{
	f->kind = FRAME_NONE;
	f->len = 0;
	f->counted = f->index = false;
	f->skipped = true;
	f->skip.size = next - f->skip.offset;
	f->off = r->dec_off = next;
}

/* The frame at `at` is damaged, or runs past the end of the file: skip it
 * and find the next frame. The seek table knows where it starts; else the
 * damaged frame's own structure, if it leads to where a frame may start;
 * else the next frame that decodes, scanning forward. When none follows,
 * a frame that ran past the end was cut short: the file is truncated. */
static void resync(struct dt_reader *r, struct frame *f, uint64_t at,
		   const struct attempt *a)
{
	struct dt_skip *s = &f->skip;
	uint64_t next, dsize;

	*s = (struct dt_skip){ .offset = at,
			       .frames = 1,
			       .record_bytes = DT_SKIP_UNKNOWN,
			       .reason = a->why };
	if (r->index.state == 0)
		index_load(r);
	if (r->index.state == 1 && at >= r->body && at < r->index.end) {
		s->exact = index_find(r, at, &next, &dsize);
		if (r->index.state == 1) {
			if (s->exact)
				s->record_bytes = a->dsize_exact ? a->dsize
						  : a->skippable ? next - at - 8
								 : dsize;
			return skip_to(r, f, next);
		}
	}
	if (a->end > at && frame_may_start(r, a->end)) {
		s->exact = true;
		s->record_bytes = a->dsize;
		return skip_to(r, f, a->end);
	}
	for (uint64_t c = at + 1;; c++) {
		struct attempt b;

		c = find_magic(r, c);
		if (c == UINT64_MAX)
			return frame_stop(f, DT_FILE_CORRUPT, at,
					  "cannot search for a frame after "
					  "offset %" PRIu64
					  " (read error or no memory)",
					  at);
		if (c >= r->size)
			break;
		try_frame(r, f, c, true, &b);
		if (b.result == TRY_STOP)
			return;
		if (b.result == TRY_GOOD) {
			f->skipped = true;
			s->size = c - at;
			r->dec_off = f->off;
			return;
		}
	}
	if (a->result == TRY_CUT)
		return frame_stop(f, DT_FILE_TRUNCATED, at,
				  "the last frame, at offset %" PRIu64
				  ", is cut short",
				  at);
	skip_to(r, f, r->size);
	f->kind = FRAME_EOF;
}

/* Decode the frame at r->dec_off into f, and move past it; or past the
 * damaged bytes there and the frame after them. */
static void decode_frame(struct dt_reader *r, struct frame *f)
{
	uint64_t at = r->dec_off;
	struct attempt a;

	f->skipped = false;
	if (at >= r->size) {
		f->kind = FRAME_EOF;
		f->off = at;
		return;
	}
	try_frame(r, f, at, false, &a);
	if (a.result == TRY_GOOD)
		r->dec_off = f->off;
	else if (a.result != TRY_STOP)
		resync(r, f, at, &a);
}

/* ------------------------------------------------------ the consumer */

/* The second thread: decodes frames into free slots until the last. */
static void *decoder_main(void *arg)
{
	struct dt_reader *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (r->produced - r->consumed >= SLOTS - 1 && !r->quit)
			pthread_cond_wait(&r->freed, &r->lock);
		if (r->quit)
			break;
		struct frame *f = &r->slots[r->produced % SLOTS];
		pthread_mutex_unlock(&r->lock);
		decode_frame(r, f);
		pthread_mutex_lock(&r->lock);
		r->produced++;
		pthread_cond_signal(&r->filled);
		if (f->kind == FRAME_EOF || f->kind == FRAME_STOP)
			break;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* The next decoded frame: from the second thread, or decoded here. The
 * slot of the frame read before is free again (SLOTS - 1 are decoded ahead
 * at most, so the one being read is never written). */
static struct frame *next_frame(struct dt_reader *r)
{
	struct frame *f;

	if (!r->threaded) {
		f = &r->slots[0];
		decode_frame(r, f);
		return f;
	}
	pthread_mutex_lock(&r->lock);
	if (r->cur) {
		r->consumed++;
		pthread_cond_signal(&r->freed);
	}
	while (r->produced == r->consumed)
		pthread_cond_wait(&r->filled, &r->lock);
	f = &r->slots[r->consumed % SLOTS];
	pthread_mutex_unlock(&r->lock);
	return f;
}

static void add_skip(struct dt_reader *r, const struct dt_skip *s)
{
	struct dt_file_stats *st = &r->stats;

	if (st->skips < DT_SKIPS_MAX)
		r->skips[st->skips] = *s;
	st->skips++;
	st->frames_skipped += s->frames;
	st->bytes_skipped += s->size;
	if (s->record_bytes != DT_SKIP_UNKNOWN)
		st->record_bytes_skipped += s->record_bytes;
	if (!s->exact || s->record_bytes == DT_SKIP_UNKNOWN)
		st->skips_exact = false;
}

static size_t say(char *buf, size_t size, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static size_t say(char *buf, size_t size, size_t at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (at >= size)
		return at;
	va_start(ap, fmt);
	n = vsnprintf(buf + at, size - at, fmt, ap);
	va_end(ap);
	return n < 0 ? at : at + (size_t)n;
}

/* "N frames are <what>", a clause of the sentence, when count is not 0:
 * `one` and `many` are the verb for one frame and for more. */
static size_t say_frames(char *e, size_t n, size_t k, uint64_t count,
			 const char *one, const char *many, const char *what)
{
	if (!count)
		return k;
	return say(e, n, k, "%s%" PRIu64 " frame%s %s %s", k ? "; " : "", count,
		   count == 1 ? "" : "s", count == 1 ? one : many, what);
}

/* What the seals found: the header's checksum, frames missing, read
 * twice, from another file, after END. */
static size_t say_sequence(const struct dt_file_stats *st, char *e, size_t n,
			   size_t k)
{
	if (st->header_damaged)
		k = say(e, n, k,
			"%sthe header %s: names and facts may be wrong",
			k ? "; " : "",
			st->sealed ? "does not match its checksum"
				   : "says it is sealed but has no seal");
	if (st->frames_missing > st->frames_skipped)
		k = say_frames(e, n, k, st->frames_missing - st->frames_skipped,
			       "is", "are", "missing from the file");
	k = say_frames(e, n, k, st->frames_repeated, "was", "were",
		       "read once already (not read again)");
	k = say_frames(e, n, k, st->frames_foreign, "is", "are",
		       "of another file (not read)");
	return say_frames(e, n, k, st->frames_after_end, "is", "are",
			  "after the END record (not read)");
}

/* What END says that the records read do not: calls, records lost. */
static size_t say_end_counts(const struct dt_file_stats *st, char *e, size_t n,
			     size_t k)
{
	if (!st->have_end)
		return k;
	if (st->end_rec.calls != st->calls &&
	    (st->end_rec.calls < st->calls || !st->records_missing))
		k = say(e, n, k,
			"%sthe END record counts %" PRIu64 " calls, %" PRIu64
			" were read",
			k ? "; " : "", st->end_rec.calls, st->calls);
	if (st->end_rec.lost < st->loss_counted)
		k = say(e, n, k,
			"%sthe END record counts %" PRIu64
			" records lost, fewer than the %" PRIu64
			" its LOSS records count: those are taken",
			k ? "; " : "", st->end_rec.lost, st->loss_counted);
	return k;
}

/* One sentence: why the file ended early, what was skipped, how many
 * records are missing. */
static void describe(struct dt_reader *r, const char *why)
{
	struct dt_file_stats *st = &r->stats;
	char *e = st->error;
	size_t n = sizeof(st->error), k = 0;

	e[0] = 0;
	if (why && why[0])
		k = say(e, n, k, "%s", why);
	if (st->skips) {
		const struct dt_skip *s = &r->skips[0];
		k = say(e, n, k,
			"%s%s%" PRIu64 " damaged frame%s skipped (%" PRIu64
			" bytes",
			k ? "; " : "", st->skips_exact ? "" : "at least ",
			st->frames_skipped, st->frames_skipped == 1 ? "" : "s",
			st->bytes_skipped);
		if (st->skips == 1)
			k = say(e, n, k, " at offset %" PRIu64, s->offset);
		else
			k = say(e, n, k,
				" in %" PRIu64 " places, the first at offset "
				"%" PRIu64,
				st->skips, s->offset);
		k = say(e, n, k, ": %s)", dt_skip_reason_str(s->reason));
	}
	k = say_sequence(st, e, n, k);
	if (st->records_missing_known && st->records_missing)
		k = say(e, n, k,
			"%s%" PRIu64 " of the %" PRIu64
			" records written are missing",
			k ? "; " : "", st->records_missing,
			st->end_rec.records);
	else if (st->have_end && !st->records_missing_known)
		k = say(e, n, k,
			"%sthe END record counts %" PRIu64
			" records written, fewer than the %" PRIu64 " read",
			k ? "; " : "", st->end_rec.records, st->data_records);
	else if (st->skips && !st->have_end)
		k = say(e, n, k,
			"; how many records they held is unknown (no END "
			"record)");
	k = say_end_counts(st, e, n, k);
}

/* Whether what was read is what the file says was written: its header
 * matches its checksum, its frames are all there once and all its own, and
 * END's counts are those of the records read. */
static bool consistent(const struct dt_file_stats *st)
{
	if (st->header_damaged || st->frames_missing || st->frames_repeated ||
	    st->frames_foreign || st->frames_after_end || st->joined_at)
		return false;
	if (!st->have_end)
		return true;
	return st->records_missing_known && !st->records_missing &&
	       st->end_rec.calls == st->calls &&
	       st->end_rec.lost >= st->loss_counted;
}

/* Reading is over: say how the file ended and what is missing. */
static void finish(struct dt_reader *r, enum dt_file_end end, uint64_t from,
		   const char *why)
{
	struct dt_file_stats *st = &r->stats;

	r->done = true;
	st->end = end;
	if (end == DT_FILE_DAMAGED && from < r->size)
		st->joined_at = from; /* what follows is another trace's */
	else
		st->bytes_lost = r->size > from ? r->size - from : 0;
	st->records_missing_known =
		st->have_end && st->end_rec.records >= st->data_records;
	st->records_missing = st->records_missing_known
				      ? st->end_rec.records - st->data_records
				      : 0;
	/* END's count is final only if it covers the LOSS records read */
	st->lost_exact = st->have_end && st->end_rec.lost >= st->loss_counted;
	st->lost = st->lost_exact ? st->end_rec.lost : st->loss_counted;
	if (st->end == DT_FILE_CLEAN && !consistent(st))
		st->end = DT_FILE_DAMAGED;
	describe(r, why);
}

/* Whether the frame's records are to be read: nothing follows END in a
 * file; in a sealed file, a frame of another file or of a place read
 * already is not this file's content, and places passed over are frames
 * missing. */
static bool frame_belongs(struct dt_reader *r, const struct frame *f)
{
	struct dt_file_stats *st = &r->stats;

	if (st->have_end) {
		st->frames_after_end++;
		return false;
	}
	if (!r->sealed)
		return true;
	if (!r->id_known) {
		r->id_known = true;
		r->file_id = f->seal.file_id;
	}
	if (f->seal.file_id != r->file_id) {
		st->frames_foreign++;
		return false;
	}
	if (f->seal.seq < r->next_seq) {
		st->frames_repeated++;
		return false;
	}
	st->frames_missing += f->seal.seq - r->next_seq;
	r->next_seq = f->seal.seq + 1;
	return true;
}

/* Make the next frame's records current, or finish. */
static void load_frame(struct dt_reader *r)
{
	struct frame *f = next_frame(r);
	struct dt_file_stats *st = &r->stats;

	r->cur = f;
	r->out = f->buf;
	r->out_len =
		f->kind == FRAME_RECORDS && frame_belongs(r, f) ? f->len : 0;
	r->out_pos = 0;
	r->off = f->off;
	st->frames += r->out_len && f->counted;
	if (f->skipped)
		add_skip(r, &f->skip);
	if (f->index) {
		st->have_index = true;
		st->index_frames = f->index_frames;
	}
	if (f->kind == FRAME_EOF)
		/* damaged, but finished: END or the seek table came last */
		finish(r,
		       st->skips && (st->have_end || st->have_index)
			       ? DT_FILE_DAMAGED
		       : st->have_end ? DT_FILE_CLEAN
				      : DT_FILE_NO_END,
		       r->size, NULL);
	else if (f->kind == FRAME_STOP)
		finish(r, f->end, f->from, f->error);
}

/* CUPTI's drops are not the writer's: END does not count them. */
static void count_loss(struct dt_reader *r, const struct dt_rec_loss *l)
{
	if (l->reason == DT_LOSS_CUPTI)
		r->stats.gpu_dropped += l->count;
	else
		r->stats.loss_counted += l->count;
}

int dt_reader_next(struct dt_reader *r, const struct dt_rec_hdr **rec)
{
	for (;;) {
		if (r->out_pos < r->out_len) {
			/* every record of the frame was checked when it was
			 * decoded */
			const struct dt_rec_hdr *h =
				(const void *)(r->out + r->out_pos);

			r->out_pos += h->size;
			/* a frame's seal is the file's, not a record */
			if (h->type == DT_REC_PAD || h->type == DT_REC_FRAME)
				continue;
			r->stats.records++;
			r->stats.data_records += r->cur->counted;
			if (h->type >= DT_REC_TYPE_COUNT || !rec_known[h->type])
				r->stats.unknown++;
			else if (h->type == DT_REC_API_CALL)
				r->stats.calls++;
			else if (h->type == DT_REC_LOSS)
				count_loss(r, (const void *)h);
			else if (h->type == DT_REC_INFO && r->body_infos < 64) {
				/* what the process learnt after the header was
				 * written (the cuDNN it loaded): a few facts */
				r->body_infos++;
				add_info(r, (const void *)h);
			} else if (h->type == DT_REC_END) {
				r->stats.have_end = true;
				memcpy(&r->stats.end_rec, h,
				       sizeof(r->stats.end_rec));
			}
			r->stats.lost =
				r->stats.have_end &&
						r->stats.end_rec.lost >
							r->stats.loss_counted
					? r->stats.end_rec.lost
					: r->stats.loss_counted;
			*rec = h;
			return 1;
		}
		if (r->done)
			return 0;
		load_frame(r);
	}
}
