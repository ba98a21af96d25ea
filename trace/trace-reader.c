/*
 * trace-reader.c - streams a dnntrace file, frame by frame.
 *
 * Memory stays bounded by one frame whatever the file's size. No length
 * field is trusted: every size is checked against what is left of the frame
 * or file before it is used. A file cut short or damaged yields every record
 * of the frames before the damage, and dt_reader_stats() says what happened.
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

#include "dt-trace.h"

/* Decompressed frames and skippable payloads larger than this are taken as
 * corrupt (the writer makes 1 to 2 MiB chunks). */
#define FRAME_MAX (256u << 20)
#define IN_STEP   (128u << 10)

/* One frame, decoded: its records (or nothing for frames that hold none),
 * or where and why the file ends. */
struct frame {
	enum {
		FRAME_RECORDS, /* a data or metadata frame: buf[0..len) */
		FRAME_NONE,    /* a frame without records (a seek table) */
		FRAME_EOF,     /* the end of the file, where a frame starts */
		FRAME_STOP, /* the file ends here for `end`: error says why */
	} kind;
	uint8_t *buf;
	size_t cap, len;
	uint64_t off;   /* where the next frame starts */
	bool counted;   /* a zstd frame (stats.frames) */
	size_t checked; /* buf[0..checked) holds whole, well-formed records */
	bool index;     /* a valid seek table, of index_frames entries */
	uint32_t index_frames;
	enum dt_file_end end;
	uint64_t from; /* FRAME_STOP: the bytes from here on are lost */
	char error[160];
};

/* Frames are decoded ahead by a second thread in files larger than this
 * (the reader then costs its consumer little more than the records). */
#define PREFETCH_MIN (8u << 20)
#define SLOTS        4

struct dt_reader {
	int fd; /* -1 when reading from memory */
	const uint8_t *mem;
	uint64_t size;
	uint64_t off; /* the end of the frame being read */

	struct dt_file_info info;
	struct dt_file_stats stats;
	uint64_t loss_sum; /* counts of LOSS records seen */

	/* the decoder: its next frame starts at dec_off */
	uint64_t dec_off;
	ZSTD_DCtx *dctx;
	uint8_t *in;       /* compressed bytes read for the decoder */
	size_t in_cap;     /* IN_STEP at least */
	size_t last_csize; /* the last frame's compressed size */
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

/* Stop reading: the file ends here, for the reason given. */
static void stop(struct dt_reader *r, enum dt_file_end end, uint64_t from,
		 const char *error)
{
	r->done = true;
	r->stats.end = end;
	r->stats.bytes_lost = r->size > from ? r->size - from : 0;
	snprintf(r->stats.error, sizeof(r->stats.error), "%s", error);
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

static char *dup_n(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

static int add_info(struct dt_file_info *fi, const struct dt_rec_info *rec)
{
	uint32_t len;
	const uint8_t *t = dt_rec_tail(&rec->hdr, &len);
	struct dt_kv *kv;

	if (rec->key_len > len)
		return -1;
	kv = realloc(fi->info, (fi->n_info + 1) * sizeof(*kv));
	if (!kv)
		return -1;
	fi->info = kv;
	kv[fi->n_info].key = dup_n(t, rec->key_len);
	kv[fi->n_info].value = dup_n(t + rec->key_len, len - rec->key_len);
	fi->n_info++;
	return 0;
}

static int add_api(struct dt_file_info *fi, const struct dt_rec_apidef *rec)
{
	uint32_t len;
	const uint8_t *t = dt_rec_tail(&rec->hdr, &len);

	if (rec->name_len > len)
		return -1;
	if (rec->api >= fi->n_apis) {
		uint32_t n = (uint32_t)rec->api + 1;
		struct dt_api_def *a = realloc(fi->apis, n * sizeof(*a));
		if (!a)
			return -1;
		memset(a + fi->n_apis, 0, (n - fi->n_apis) * sizeof(*a));
		fi->apis = a;
		fi->n_apis = n;
	}
	struct dt_api_def *a = &fi->apis[rec->api];
	free((void *)a->name);
	free((void *)a->sig);
	a->name = dup_n(t, rec->name_len);
	a->sig = dup_n(t + rec->name_len, len - rec->name_len);
	a->flags = rec->flags;
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
	for (size_t pos = sizeof(struct dt_file_header); pos < len;) {
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
			rc = add_info(&r->info, (const void *)h);
		else if (h->type == DT_REC_APIDEF)
			rc = add_api(&r->info, (const void *)h);
		if (rc) {
			free(p);
			snprintf(errbuf, errlen,
				 "malformed record in the file header");
			return DT_ERR_CORRUPT;
		}
		pos += size;
	}
	free(p);
	r->off = r->dec_off = 8 + (uint64_t)len;
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
	for (uint32_t i = 0; i < r->info.n_apis; i++) {
		free((void *)r->info.apis[i].name);
		free((void *)r->info.apis[i].sig);
	}
	free(r->info.info);
	free(r->info.apis);
	ZSTD_freeDCtx(r->dctx);
	free(r->in);
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

/* The whole compressed frame at `at`, when it is all there: in the mapped
 * file, or read into r->in. Sets *csize; NULL when the frame is cut short,
 * damaged or unreadable (the streaming decoder then says which). */
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
		if (have == left || have >= FRAME_MAX)
			return NULL;
		want = have * 2;
	}
}

/* Decode the zstd frame at r->dec_off into f: in one pass when the whole
 * frame is at hand (no copy through the decoder's window), else streamed,
 * which also names what is wrong with a bad frame. */
static void decode_zstd(struct dt_reader *r, struct frame *f)
{
	uint8_t head[18]; /* ZSTD_FRAMEHEADERSIZE_MAX, not in the stable API */
	size_t hn = sizeof(head);
	unsigned long long content;
	uint64_t at = r->dec_off, pos = at;

	if (hn > r->size - at)
		hn = (size_t)(r->size - at);
	if (read_at(r, at, head, hn))
		return frame_stop(f, DT_FILE_CORRUPT, at, "read error");
	content = ZSTD_getFrameContentSize(head, hn);
	if (content == ZSTD_CONTENTSIZE_ERROR) {
		if (hn < sizeof(head))
			return frame_stop(f, DT_FILE_TRUNCATED, at,
					  "the last frame is cut short");
		return frame_stop(f, DT_FILE_CORRUPT, at,
				  "bad frame header at offset %llu",
				  (unsigned long long)at);
	}
	if (content == ZSTD_CONTENTSIZE_UNKNOWN || content > FRAME_MAX)
		return frame_stop(f, DT_FILE_CORRUPT, at,
				  "frame at offset %llu has no usable size",
				  (unsigned long long)at);
	if (ensure_buf(f, (size_t)content ? (size_t)content : 1))
		return frame_stop(f, DT_FILE_CORRUPT, at, "out of memory");

	size_t csize;
	const uint8_t *src = whole_frame(r, at, &csize);
	if (src) {
		size_t got = ZSTD_decompressDCtx(r->dctx, f->buf,
						 (size_t)content, src, csize);
		if (got == content) {
			r->last_csize = csize;
			f->kind = FRAME_RECORDS;
			f->len = got;
			f->off = at + csize;
			f->counted = true;
			return;
		}
	}

	ZSTD_outBuffer ob = { f->buf, (size_t)content, 0 };
	ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
	for (;;) {
		size_t n = IN_STEP, ret;

		if (n > r->size - pos)
			n = (size_t)(r->size - pos);
		if (n == 0)
			return frame_stop(f, DT_FILE_TRUNCATED, at,
					  "the last frame is cut short");
		if (read_at(r, pos, r->in, n))
			return frame_stop(f, DT_FILE_CORRUPT, at, "read error");
		ZSTD_inBuffer ib = { r->in, n, 0 };
		ret = ZSTD_decompressStream(r->dctx, &ob, &ib);
		if (ZSTD_isError(ret))
			return frame_stop(f, DT_FILE_CORRUPT, at,
					  "frame at offset %llu: %s",
					  (unsigned long long)at,
					  ZSTD_getErrorName(ret));
		pos += ib.pos;
		if (ret == 0)
			break;
		if (ib.pos == 0 && ob.pos == ob.size)
			return frame_stop(f, DT_FILE_CORRUPT, at,
					  "frame at offset %llu is larger than "
					  "it says",
					  (unsigned long long)at);
	}
	if (ob.pos != content)
		return frame_stop(f, DT_FILE_CORRUPT, at,
				  "frame at offset %llu is smaller than it "
				  "says",
				  (unsigned long long)at);
	f->kind = FRAME_RECORDS;
	f->len = ob.pos;
	f->off = pos;
	f->counted = true;
}

static void decode_seek_table(struct dt_reader *r, struct frame *f,
			      uint32_t len)
{
	uint8_t foot[9];

	if (len < 9 || read_at(r, r->dec_off + 8 + len - 9, foot, 9))
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

/* Decode the frame at r->dec_off into f, and move past it. */
static void decode_frame(struct dt_reader *r, struct frame *f)
{
	uint8_t h[8];
	uint64_t at = r->dec_off, left = r->size - at;
	uint32_t magic, len;

	f->kind = FRAME_NONE;
	f->len = 0;
	f->checked = 0;
	f->counted = f->index = false;
	f->off = at;
	if (left == 0) {
		f->kind = FRAME_EOF;
		return;
	}
	if (left < 4 || read_at(r, at, h, left < 8 ? 4 : 8))
		return frame_stop(f, DT_FILE_TRUNCATED, at,
				  "the last frame is cut short");
	magic = get_le32(h);
	if (magic == ZSTD_MAGICNUMBER) {
		decode_zstd(r, f);
		if (f->kind == FRAME_RECORDS)
			r->dec_off = f->off;
		return;
	}
	if ((magic & 0xFFFFFFF0u) != ZSTD_MAGIC_SKIPPABLE_START)
		return frame_stop(f, DT_FILE_CORRUPT, at,
				  "unknown frame at offset %llu",
				  (unsigned long long)at);
	if (left < 8 || (len = get_le32(h + 4)) > left - 8)
		return frame_stop(f, DT_FILE_TRUNCATED, at,
				  "the last frame is cut short");
	if (magic == DT_FRAME_META) {
		if (len > FRAME_MAX || ensure_buf(f, len ? len : 1) ||
		    read_at(r, at + 8, f->buf, len))
			return frame_stop(f, DT_FILE_CORRUPT, at,
					  "unreadable metadata frame at offset "
					  "%llu",
					  (unsigned long long)at);
		f->kind = FRAME_RECORDS;
		f->len = len;
	} else if (magic == DT_FRAME_SEEK) {
		decode_seek_table(r, f, len);
	}
	/* other skippable frames belong to someone else: skip them */
	r->dec_off = at + 8 + (uint64_t)len;
	f->off = r->dec_off;
}

static bool last_frame(const struct frame *f)
{
	return f->kind == FRAME_EOF || f->kind == FRAME_STOP;
}

/* How far the frame's records are well formed: checked once, by the
 * thread that decoded it. */
static void check_frame(struct frame *f)
{
	size_t pos = 0;
	uint32_t size;

	if (f->kind == FRAME_RECORDS)
		while (pos < f->len &&
		       (size = check_record(f->buf + pos, f->len - pos)))
			pos += size;
	f->checked = pos;
}

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
		check_frame(f);
		pthread_mutex_lock(&r->lock);
		r->produced++;
		pthread_cond_signal(&r->filled);
		if (last_frame(f))
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

/* Make the next frame's records current, or finish. */
static void load_frame(struct dt_reader *r)
{
	struct frame *f = next_frame(r);

	r->cur = f;
	r->out = f->buf;
	r->out_len = f->kind == FRAME_RECORDS ? f->len : 0;
	r->out_pos = 0;
	r->off = f->off;
	r->stats.frames += f->counted;
	if (f->index) {
		r->stats.have_index = true;
		r->stats.index_frames = f->index_frames;
	}
	if (f->kind == FRAME_EOF) {
		r->done = true;
		r->stats.end =
			r->stats.have_end ? DT_FILE_CLEAN : DT_FILE_NO_END;
	} else if (f->kind == FRAME_STOP) {
		stop(r, f->end, f->from, f->error);
	}
}

/* CUPTI's drops are not the writer's: END does not count them. */
static void count_loss(struct dt_reader *r, const struct dt_rec_loss *l)
{
	if (l->reason == DT_LOSS_CUPTI)
		r->stats.gpu_dropped += l->count;
	else
		r->loss_sum += l->count;
}

int dt_reader_next(struct dt_reader *r, const struct dt_rec_hdr **rec)
{
	for (;;) {
		if (r->out_pos < r->out_len) {
			const struct dt_rec_hdr *h =
				(const void *)(r->out + r->out_pos);
			/* a frame the second thread decoded is checked */
			uint32_t size =
				r->out_pos < r->cur->checked
					? h->size
					: check_record(r->out + r->out_pos,
						       r->out_len - r->out_pos);

			if (!size) {
				char why[160];
				snprintf(why, sizeof(why),
					 "malformed record in the frame ending "
					 "at offset %llu",
					 (unsigned long long)r->off);
				r->out_len = 0;
				stop(r, DT_FILE_CORRUPT, r->off, why);
				continue;
			}
			r->out_pos += size;
			if (h->type == DT_REC_PAD)
				continue;
			r->stats.records++;
			if (h->type >= DT_REC_TYPE_COUNT || !rec_known[h->type])
				r->stats.unknown++;
			else if (h->type == DT_REC_API_CALL)
				r->stats.calls++;
			else if (h->type == DT_REC_LOSS)
				count_loss(r, (const void *)h);
			else if (h->type == DT_REC_END) {
				r->stats.have_end = true;
				memcpy(&r->stats.end_rec, h,
				       sizeof(r->stats.end_rec));
			}
			r->stats.lost = r->stats.have_end
						? r->stats.end_rec.lost
						: r->loss_sum;
			*rec = h;
			return 1;
		}
		if (r->done)
			return 0;
		load_frame(r);
	}
}
