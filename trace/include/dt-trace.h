/*
 * dt-trace.h - the dnntrace trace file: its writer and its reader.
 *
 * This is the only public header of trace/. It depends on libzstd and libc
 * alone, never on CUDA. The byte layout is documented in trace/FORMAT.md.
 *
 * Writing: a process opens one dt_writer; every recording thread attaches a
 * dt_ring (a single-producer ring buffer) and appends records to it without
 * locks or system calls; a background thread drains the rings, compresses
 * chunks of records into independent zstd frames and writes them. When a
 * ring is full, records are counted as lost, never waited for.
 *
 * Reading: dt_reader streams a file frame by frame with bounded memory and
 * tells how the file ended.
 */
#ifndef DT_TRACE_H
#define DT_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "dt-records.h"

/* A 64-bit hash of n bytes, eight at a time: kernel names are hashed for
 * every kernel record read, and KERNEL_LIB records hold the hashes of
 * kernel names (seed 0, trace/FORMAT.md). Not for adversarial input. */
static inline uint64_t dt_hash(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull), v;

	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&v, s, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	v = 0;
	memcpy(&v, s, n);
	h = (h ^ v) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

#define DT_FORMAT_MAJOR 1
#define DT_FORMAT_MINOR 10

/* The file header, first thing in the first (skippable) frame. */
#define DT_FILE_MAGIC "DNNTRACE"
struct dt_file_header {
	char magic[8];
	uint16_t major;
	uint16_t minor;
	uint32_t flags;
	uint64_t start_mono; /* CLOCK_MONOTONIC ns when recording began */
	uint64_t start_real; /* CLOCK_REALTIME ns, read right after */
	uint32_t pid;
	uint32_t ppid;
};

/* zstd skippable frame magics used by the format. */
#define DT_FRAME_HEADER      0x184D2A50u /* file header + identity records */
#define DT_FRAME_META        0x184D2A51u /* metadata records, end summary */
#define DT_FRAME_SEEK        0x184D2A5Eu /* zstd seekable-format seek table */
#define DT_SEEK_FOOTER_MAGIC 0x8F92EAB1u

/* Largest record the format allows (header included). */
#define DT_REC_MAX (1u << 20)

static inline uint32_t dt_rec_align(uint32_t n)
{
	return (n + 7u) & ~7u;
}

/* ---------------------------------------------------------------- writer */

struct dt_writer;

/* A thread's ring buffer. The owning thread is the only producer, the
 * writer thread the only consumer. Positions count bytes since the start
 * and never wrap; the buffer index is position & mask. */
struct dt_ring {
	/* producer side, written by the owning thread only */
	uint64_t head_local;       /* reserved, not yet published */
	uint64_t tail_cache;       /* last tail seen */
	_Atomic uint64_t head;     /* published: records below are complete */
	_Atomic uint64_t lost;     /* records dropped, ring full */
	_Atomic uint64_t lost_big; /* records too large for the ring */
	uint8_t *buf;
	uint32_t mask;
	uint32_t tid;
	struct dt_writer *writer;
	uint32_t kick_mark; /* fill level above which the writer is woken */
	uint32_t reserved;
	char pad_[64];
	/* consumer side, written by the writer thread only */
	_Atomic uint64_t tail;
	uint64_t lost_seen;
	uint64_t lost_big_seen;
	_Atomic int detached; /* the owning thread is gone */
	struct dt_ring *next;
};

struct dt_kv {
	const char *key;
	const char *value;
};

struct dt_writer_config {
	/* Output file name template: %p pid, %h host, %t start time
	 * (YYYYmmdd-HHMMSS), %q{VAR} environment value, %% a percent sign.
	 * NULL means DT_DEFAULT_TEMPLATE. */
	const char *path_template;
	uint32_t ring_size;  /* bytes per thread, power of two; 0: 1 MiB */
	uint32_t chunk_size; /* uncompressed bytes per frame; 0: 1 MiB */
	uint32_t flush_ms;   /* longest time data waits in memory; 0: 500 */
	int level;           /* zstd level; 0: 1 */
	mode_t mode;         /* file mode; 0: 0600 */
	/* When recording began (CLOCK_MONOTONIC and CLOCK_REALTIME ns, read
	 * together); 0: when the file is created. */
	uint64_t start_mono;
	uint64_t start_real;
	uint32_t proc_event; /* DT_PROC_*: how this process came to be */
	/* Identity facts for the header (beyond those the writer gathers
	 * itself: host, command line, rank variables, clocks). */
	const struct dt_kv *info;
	size_t n_info;
	/* Another process's identity, for traces written on its behalf
	 * (converters, synthetic traces). When host or cmdline is set, none
	 * of this process's identity is gathered (host, command line,
	 * executable, cwd, boot id, rank variables): these and `info` are
	 * all the header holds. pid and ppid 0: this process's. */
	const char *host;
	const char *cmdline;
	uint32_t pid, ppid;
	/* API table: names and argument signatures, indexed by API id. */
	const char *const *api_names;
	const char *const *api_sigs;
	const uint16_t *api_flags;
	uint32_t api_count;
	/* The libraries the APIs belong to, each a range of ids (LIBRARY
	 * records); none: every API is cuDNN's, as before 1.8. */
	const struct dt_library_def *libraries;
	uint32_t n_libraries;
	/* Asked by the writer's thread at each wake-up, when set: true once
	 * every thread of the program has ended but the writer's own, which
	 * alone would keep the process alive (its main thread ended with
	 * pthread_exit). The writer then finishes the file as for exit(0),
	 * and its thread ends: the C library ends the process with status 0
	 * when its last thread does. */
	bool (*orphaned)(void);
};

#define DT_DEFAULT_TEMPLATE "dnntrace-%h-%p.dnnt"

/* The ring sizes a writer takes: a power of two (positions are masked)
 * from 64 KiB to 1 GiB; other sizes are rounded up to the next one. */
#define DT_RING_MIN (64u << 10)
#define DT_RING_MAX (1u << 30)
/* The longest flush interval a writer takes, in milliseconds (an hour). */
#define DT_FLUSH_MS_MAX 3600000

/* Parse a byte count: decimal digits with an optional K, M or G (powers of
 * 1024; "KiB" and "KB" are read the same). Returns 0 and sets *out, or -1
 * for anything else (a sign, a fraction, an overflow, trailing text). */
int dt_parse_size(const char *s, uint64_t *out);

/* Parse a decimal integer from min to max, nothing else. Returns 0 and sets
 * *out, or -1. */
int dt_parse_int(const char *s, long min, long max, long *out);

/* Whether environment variable name is set to a yes: anything but empty,
 * 0, false, no or off (any case). */
bool dt_env_true(const char *name);

/* Expand a file name template into buf. A value (%p, %h, %t, %q{VAR}) never
 * adds or climbs a folder: its '/' are written '_', and so are the dots of
 * a component it makes "." or "..". Returns 0, or -1 with errno set (EINVAL
 * for a malformed template, ENAMETOOLONG). */
int dt_expand_template(const char *tmpl, char *buf, size_t size);

/* Names tried for one trace: NAME.dnnt, NAME.1.dnnt, ... NAME.9999.dnnt. */
#define DT_NAMES_MAX 10000

/* Create the trace file (never overwriting one: a name taken already gets
 * a .1, .2, ... suffix; a template naming a folder, or ending in '/', gets
 * DT_DEFAULT_TEMPLATE's name inside it), write its header and start the
 * writer thread. Returns NULL with errno set on failure: ENODEV when the
 * name is a device or a pipe, ELOOP when it is a link to a file, EEXIST
 * when every name is taken, EPERM when the folder or a link at the name is
 * another user's (dt_writer_why). */
struct dt_writer *dt_writer_open(const struct dt_writer_config *cfg);

/* Why dt_writer_open() could not create the file at `path` (the expanded
 * template), as a phrase in buf: the errno values it gives a meaning,
 * strerror() for the others. Returns buf. */
const char *dt_writer_why(int err, const char *path, char *buf, size_t size);

/* Path of the file being written. */
const char *dt_writer_path(const struct dt_writer *w);

/* The descriptor w writes to (-1 once closed). It is put at or above the
 * soft limit on open files when the hard limit allows, out of the range a
 * program uses; before each write the writer checks that it still is the
 * file, and opens the file again by its path when the program replaced it
 * (with a note in the file). */
int dt_writer_fd(const struct dt_writer *w);

/* The program is about to put another file at w's descriptor number
 * (dup2): give the file another descriptor first. Returns 0, or -1 when
 * none could be had (then the writer's checks find the number replaced). */
int dt_writer_move_fd(struct dt_writer *w);

/* Give the calling thread a ring. Allocates; call once per thread. Returns
 * NULL if memory is short. */
struct dt_ring *dt_writer_attach(struct dt_writer *w, uint32_t tid,
				 const char *thread_name);

/* The thread owning r is done with it; the writer drains and frees it. */
void dt_ring_detach(struct dt_ring *r);

/* Drain every ring, write the end summary and the seek table, close the
 * file and free w's buffers. Safe to call from one thread while others may
 * still append: what they commit after the final drain is not in the file
 * (stop them first), and their rings and w itself stay allocated. */
void dt_writer_close(struct dt_writer *w, enum dt_end_reason reason, int code);

/* Free w and the rings still attached to it, once it is closed and no
 * thread can touch it or its rings again: for programs that own every
 * thread that records (a library inside someone else's process keeps w
 * instead, since its threads may outlive the close). */
void dt_writer_free(struct dt_writer *w);

/* dt_writer_close() for a signal handler: asks the writer thread to finish
 * the file and waits at most timeout_ms for it, without freeing anything.
 * Returns 0 when the file is complete. */
int dt_writer_close_async(struct dt_writer *w, enum dt_end_reason reason,
			  int code, unsigned timeout_ms);

/* A fact learnt after the header was written (the cuDNN library a process
 * loaded later), as an INFO record in the body: readers add it to the
 * header's facts unless the header has the key. */
int dt_writer_info(struct dt_writer *w, const char *key, const char *value);

/* Write out everything recorded so far (a frame), waiting at most
 * timeout_ms for the writer thread. Returns 0 when done in time. */
int dt_writer_flush(struct dt_writer *w, unsigned timeout_ms);

/* After fork(), in the child: forget w without touching its thread, lock
 * or file (they belong to the parent). Leaks its memory on purpose. */
void dt_writer_abandon(struct dt_writer *w);

/* Total records lost so far (all rings). */
uint64_t dt_writer_lost(struct dt_writer *w);

/* After closing: whether the file was removed while being written (its
 * folder deleted, say). Returns 0 when it never was; 1 when it was, and was
 * made again with everything it held, at dt_writer_path(); -1 when it could
 * not be: *err says why, *records and *calls what was lost with it. */
int dt_writer_removed(const struct dt_writer *w, int *err, uint64_t *records,
		      uint64_t *calls);

/* After closing: why the file could not take every frame (an errno value
 * such as ENOSPC or EFBIG), or 0 when it took them all; *lost gets how many
 * records were left out for that reason. */
int dt_writer_io_error(const struct dt_writer *w, uint64_t *lost);

/* dt_ring_reserve() for a caller that may retry: a full ring is not
 * counted as a loss; call dt_ring_count_lost() when giving up. */
void *dt_ring_try_reserve(struct dt_ring *r, uint32_t size);
void dt_ring_count_lost(struct dt_ring *r);

/* A record dropped where no ring could take it (reason DT_LOSS_NOBUF, say):
 * counted, and reported in a LOSS record and in END. */
void dt_writer_count_lost(struct dt_writer *w, enum dt_loss_reason why);

/* Slow path of dt_ring_reserve, out of line. */
void *dt_ring_reserve_slow(struct dt_ring *r, uint32_t size);
void dt_ring_commit_slow(struct dt_ring *r);

/*
 * Reserve `size` bytes (a multiple of 8, at most DT_REC_MAX) for one record
 * and return where it goes, or NULL when the ring is full (the record is
 * counted as lost). Fill in the record, then call dt_ring_commit().
 */
static inline void *dt_ring_reserve(struct dt_ring *r, uint32_t size)
{
	uint64_t head = r->head_local;
	uint32_t off = (uint32_t)head & r->mask;

	if (__builtin_expect(off + size > r->mask + 1u ||
				     head + size - r->tail_cache > r->mask + 1u,
			     0))
		return dt_ring_reserve_slow(r, size);
	r->head_local = head + size;
	/* The lines a record as large will take 512 bytes on, for writing:
	 * each line once, as records follow one another (the lines that
	 * begin within this record's span; the buffer is page-aligned). They
	 * were last touched a lap ago, by the writer reading them; a record
	 * that waits for its lines cost a call 10 to 30 ns, by its size, on
	 * the VM measured (tests/bench/BENCHMARKS.md). */
	for (uint32_t a = (off + 512u + 63u) & ~63u; a < off + size + 512u;
	     a += 64u)
		__builtin_prefetch(r->buf + (a & r->mask), 1, 3);
	return r->buf + off;
}

/* Publish every record reserved so far to the writer thread. */
static inline void dt_ring_commit(struct dt_ring *r)
{
	atomic_store_explicit(&r->head, r->head_local, memory_order_release);
	if (__builtin_expect(r->head_local - r->tail_cache > r->kick_mark, 0))
		dt_ring_commit_slow(r);
}

/* ---------------------------------------------------------------- reader */

enum dt_read_error {
	DT_OK = 0,
	DT_ERR_IO = -1,        /* the file could not be read (errno), or is
				  no regular file (a directory, a device, a
				  pipe): the sentence names the path */
	DT_ERR_NOT_TRACE = -2, /* not a dnntrace file (empty, or no header) */
	DT_ERR_VERSION = -3,   /* written by a newer, incompatible format */
	DT_ERR_CORRUPT = -4,   /* the file header is malformed or cut short */
	DT_ERR_NOMEM = -5,
};

/* How a file ended, known once dt_reader_next() returned 0. Whatever the
 * end, frames_skipped in dt_file_stats says whether frames in the middle
 * were damaged and skipped. */
enum dt_file_end {
	DT_FILE_CLEAN,     /* the END summary was read (then the seek table,
			      when have_index), nothing was skipped, and
			      the file is what was written: its seals (1.6)
			      and END's counts agree with what was read */
	DT_FILE_NO_END,    /* no END: the process died or is still writing;
			      every frame up to the end of the file was read
			      or skipped */
	DT_FILE_TRUNCATED, /* the file is cut short inside its last frame:
			      bytes_lost bytes at the end could not be read */
	DT_FILE_CORRUPT,   /* reading stopped before the end: a read error or
			      no memory (error says which); bytes_lost bytes
			      were not read */
	DT_FILE_DAMAGED,   /* the file was finished (END or seek table read)
			      but is not what was written: damaged frames
			      were skipped, frames are missing, repeated or
			      from another file, its header or END does not
			      match its checksum, or END's counts differ
			      from what was read (error says which); the
			      rest was read */
};

/* Why a range of the file was skipped: what was wrong with the frame that
 * starts it. */
enum dt_skip_reason {
	DT_SKIP_NO_FRAME,   /* no frame starts here (unknown magic number) */
	DT_SKIP_BAD_HEADER, /* the frame header is malformed or unusable */
	DT_SKIP_BAD_BLOCK,  /* a compressed block is malformed, or runs past
			       the next frame */
	DT_SKIP_CHECKSUM,   /* the content does not match its checksum */
	DT_SKIP_BAD_SIZE,   /* the content is not the size its header says */
	DT_SKIP_BAD_RECORD, /* decoded, but a record in it is malformed */
};

/* A range of the file the reader skipped: damaged frames between readable
 * ones. None of their records is returned. */
struct dt_skip {
	uint64_t offset; /* first byte skipped */
	uint64_t size;   /* bytes skipped; the next frame starts at
			    offset + size, or the file ends there */
	/* Bytes of records the skipped frames held, decompressed: from the
	 * seek table, from a frame that decoded but failed its record check,
	 * or else from the frame headers (which the damage may have hit);
	 * DT_SKIP_UNKNOWN when not known. */
	uint64_t record_bytes;
	uint32_t frames; /* frames in the range: exact when `exact`, else at
			    least this many */
	bool exact;      /* the range is known to be exactly `frames` whole
			    frames (from the seek table or the frames' own
			    structure); record_bytes is then known unless
			    the frame header gave no size */
	enum dt_skip_reason reason;
};

#define DT_SKIP_UNKNOWN UINT64_MAX
/* Ranges dt_reader_skips() lists; more are counted in dt_file_stats. */
#define DT_SKIPS_MAX 64

/* A wrapped library: its short name ("cudnn"), the name people know it
 * by ("cuDNN"), and its API ids, first_api to first_api + n_apis - 1. */
struct dt_library_def {
	const char *name;
	const char *display;
	uint32_t first_api;
	uint32_t n_apis;
};

struct dt_api_def {
	const char *name;
	const char *sig;
	/* the library the function belongs to, by its short name ("cudnn");
	 * never NULL for a defined API. Files before 1.8 wrap cuDNN alone. */
	const char *library;
	uint16_t flags;
};

struct dt_file_info {
	struct dt_file_header hdr;
	/* INFO records of the header, in file order, then those of the body
	 * as dt_reader_next() reads them (the array grows: keep no pointer
	 * into it; its strings last until the reader is closed) */
	struct dt_kv *info;
	size_t n_info;
	/* API table from the APIDEF records, indexed by API id; an entry
	 * with a NULL name was not defined */
	struct dt_api_def *apis;
	uint32_t n_apis;
	/* The wrapped libraries, from the LIBRARY records; a file before 1.8
	 * (or one that names none) has one, cuDNN, holding every API. */
	struct dt_library_def *libraries;
	uint32_t n_libraries;
};

/*
 * What was read, and what was not. Counts grow while reading; the end, the
 * missing records, lost_exact and error are set once dt_reader_next()
 * returned 0.
 *
 * A tool says what is missing from these: records the writer dropped
 * (`lost`, exact only when `lost_exact`), records written but not read
 * (`records_missing`, known only when `records_missing_known`), damaged
 * frames skipped in the middle (`frames_skipped`, `bytes_skipped`,
 * `record_bytes_skipped`, and dt_reader_skips() for the ranges), and bytes
 * cut off at the end (`bytes_lost`).
 */
struct dt_file_stats {
	enum dt_file_end end;
	uint64_t file_size;
	uint64_t frames;       /* data frames decoded */
	uint64_t records;      /* records returned (all frames) */
	uint64_t data_records; /* of which in data frames: END's `records`
				  counts these */
	uint64_t calls;        /* API_CALL records among them */
	uint64_t unknown;      /* records of types this reader does not know */
	uint64_t bytes_lost;   /* trailing bytes that could not be decoded
				  (the frame cut short, or what a read error
				  left unread) */

	/* Damaged frames skipped, reading going on after them. */
	uint64_t skips;          /* ranges skipped (dt_reader_skips) */
	uint64_t frames_skipped; /* frames in them: exact when skips_exact,
				    else a lower bound */
	uint64_t bytes_skipped;  /* bytes of the file in them, exact */
	uint64_t record_bytes_skipped; /* decompressed bytes of records
					  they held, summed over the ranges
					  whose size is known */
	bool skips_exact; /* every range's frame count and record bytes are
			     known (true when nothing was skipped) */

	/* Records written to data frames but not returned: END's `records`
	 * minus data_records. Known only with an END record (a file whose
	 * process died cannot say how many records it wrote) that counts
	 * at least the records read (error says when it does not); 0 when
	 * not known. */
	uint64_t records_missing;
	bool records_missing_known;

	/* Records the writer dropped (buffers full, disk full): END's `lost`
	 * when END was read and counts at least what the LOSS records read
	 * count, which is then exact; otherwise the larger of the two, a lower
	 * bound (lost_exact false), since LOSS records after a cut or in
	 * skipped frames are gone. loss_counted is the sum of the LOSS
	 * records read. */
	uint64_t lost;
	bool lost_exact;
	uint64_t loss_counted;

	/* What the frames' seals prove (format 1.6 on): every frame ends with
	 * a FRAME record giving its file and place, and a checksum where zstd
	 * has none (the header, END's frame). `sealed` false: the file is
	 * older, and only END's counts can show a frame missing or repeated.
	 * Frames repeated, from another file or after END are not returned. */
	bool sealed;
	bool header_damaged;      /* the header fails its checksum, or its
				     seal is missing: names may be wrong */
	uint64_t frames_missing;  /* places no frame was read for (damaged
				     frames skipped included) */
	uint64_t frames_repeated; /* frames of a place read already */
	uint64_t frames_foreign;  /* frames of another file */
	uint64_t frames_after_end; /* frames with records after END's */
	uint64_t joined_at;       /* another trace starts here (files joined):
				     not read; 0: none */
	uint64_t gpu_dropped; /* GPU activity records CUPTI dropped, from
				 LOSS records: a lower bound when frames were
				 skipped or the file ended early */
	bool have_end;
	struct dt_rec_end end_rec; /* valid when have_end */
	bool have_index;
	uint32_t index_frames;
	/* One sentence: why the file ended early, what was skipped and how
	 * many records are missing, if anything is; empty for a clean file
	 * and for DT_FILE_NO_END with nothing skipped. */
	char error[256];
};

struct dt_reader;

/* Open a trace and read its header. Only regular files are read (the
 * reader seeks); anything else is refused at once, without blocking (a
 * pipe with no writer included). On failure returns NULL and, when err is
 * non-NULL, stores a dt_read_error; errbuf gets one sentence. */
struct dt_reader *dt_reader_open(const char *path, int *err, char *errbuf,
				 size_t errlen);
/* Same on a memory buffer (not copied: keep it alive while reading). */
struct dt_reader *dt_reader_open_mem(const void *data, size_t size, int *err,
				     char *errbuf, size_t errlen);
void dt_reader_close(struct dt_reader *r);

/* The value of INFO key of a trace (its header's, and its body's once
 * read), or NULL. */
const char *dt_info_get(const struct dt_file_info *fi, const char *key);
/* A wrapped library's INFO fact `what` ("path", "file", "version",
 * "built"): lib.<library>.<what>, or for cuDNN in a file before 1.8,
 * cudnn.<what>; NULL when the file has none. */
const char *dt_library_info_get(const struct dt_file_info *fi,
				const char *library, const char *what);

const struct dt_file_info *dt_reader_info(const struct dt_reader *r);

/* Next record of the body, in file order. Returns 1 and sets *rec (valid
 * until the next call), or 0 at the end of what can be read; then
 * dt_reader_stats() says how the file ended. Every record of a frame is
 * checked before the first is returned: a frame that fails to decode or
 * holds a malformed record is skipped whole, and reading goes on with the
 * next frame. The record's fixed fields are checked against its size; its
 * tail is rec + fixed size, `len` bytes. */
int dt_reader_next(struct dt_reader *r, const struct dt_rec_hdr **rec);

/* Statistics so far; a caller that compares `skips` between records knows
 * where in the stream a gap is (it grows just before the first record
 * after the gap). */
const struct dt_file_stats *dt_reader_stats(const struct dt_reader *r);

/* The ranges skipped so far, in file order: *n of them, at most
 * DT_SKIPS_MAX (stats->skips counts them all). Owned by the reader. */
const struct dt_skip *dt_reader_skips(const struct dt_reader *r, size_t *n);

/* What a dt_skip_reason means, in a few words. */
const char *dt_skip_reason_str(enum dt_skip_reason why);

/* Bytes of the file consumed so far (for progress reports). */
uint64_t dt_reader_offset(const struct dt_reader *r);

/* ------------------------------------------------ record descriptions */

/* One fixed field of a record type, for generic printers and tests. */
struct dt_field_desc {
	const char *name;
	const char *type; /* "u16", "u64", ... */
	uint16_t offset;
	uint16_t size;
};

struct dt_rec_desc {
	uint16_t type;
	const char *name; /* "API_CALL" */
	uint32_t fixed;   /* size of the fixed part, header included */
	enum dt_tail_kind tail;
	const struct dt_field_desc *fields;
	uint32_t n_fields;
};

/* Description of a record type, or NULL if unknown. */
const struct dt_rec_desc *dt_rec_describe(uint16_t type);

/* Read a fixed field's value as an unsigned/signed 64-bit number. */
uint64_t dt_field_get(const void *rec, const struct dt_field_desc *f);

/* Where the tail of each record type starts, and where its `len` field
 * is (0: no tail), for the inline dt_rec_tail(). */
extern uint16_t dt_rec_tail_at[DT_REC_TYPE_COUNT];
extern uint16_t dt_rec_len_at[DT_REC_TYPE_COUNT];

/* Tail of a record (bytes after the fixed fields) and its length; NULL and
 * 0 for a type without one or unknown. Readers call this for every
 * record, more than once. */
static inline const uint8_t *dt_rec_tail(const struct dt_rec_hdr *rec,
					 uint32_t *len)
{
	if (rec->type >= DT_REC_TYPE_COUNT || !dt_rec_len_at[rec->type]) {
		*len = 0;
		return NULL;
	}
	memcpy(len, (const uint8_t *)rec + dt_rec_len_at[rec->type], 4);
	return (const uint8_t *)rec + dt_rec_tail_at[rec->type];
}

#endif /* DT_TRACE_H */
