/*
 * trace-writer.c - writes a dnntrace file from per-thread ring buffers.
 *
 * Recording threads only append to their own ring (dt-trace.h, inline). A
 * background thread drains the rings into a chunk, compresses each full or
 * old enough chunk into one independent zstd frame, and writes it with one
 * write(2), so a killed process leaves every finished frame readable. The
 * file opens with a skippable header frame and, on a clean close, ends with a
 * skippable END frame and a zstd seekable-format seek table. This file knows
 * nothing of cuDNN: the API table and identity facts come from the caller.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "dt-trace.h"
#include "trace-util.h"

#define RING_DEFAULT     (1u << 20)
#define CHUNK_DEFAULT    (1u << 20)
#define FLUSH_MS_DEFAULT 500u

struct seek_entry {
	uint32_t csize;
	uint32_t dsize;
};

struct dt_writer {
	_Atomic int fd; /* read by the recorder in the program's close() */
	dev_t dev;      /* the file's identity, to know the descriptor */
	ino_t ino;      /* still names it before each write */
	uint64_t size;     /* bytes of whole frames in the file */
	uint64_t reserved; /* blocks allocated up to here (fallocate) */
	bool can_reserve;  /* the file system can reserve blocks */
	char path[PATH_MAX];
	uint64_t file_id; /* in every frame's FRAME record */
	uint32_t ring_size;
	uint32_t flush_ms;
	bool (*orphaned)(void); /* dt_writer_config's */

	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;       /* the chunk and the file */
	pthread_mutex_t rings_lock; /* the list of rings: attach and unlink */
	pthread_mutex_t late_lock;  /* late_info */
	struct recbuf *late_info;   /* INFO records for the body, waiting */
	struct dt_ring *rings;

	_Atomic uint32_t wake; /* futex word the writer thread sleeps on */
	_Atomic int sleeping;
	_Atomic int closing; /* dt_writer_close* called (once) */
	_Atomic int stop;    /* close requested, reason set */
	_Atomic int closed;  /* the file is complete */
	enum dt_end_reason end_reason;
	int end_code;
	_Atomic uint64_t flush_req;
	_Atomic uint64_t flush_done;

	/* chunk being filled, then compressed (writer thread or closer) */
	uint8_t *chunk;
	size_t chunk_len;
	size_t chunk_cap;
	uint64_t chunk_t0; /* when the chunk got its first record */
	ZSTD_CCtx *cctx;
	uint8_t *zbuf;
	size_t zcap;

	struct seek_entry *seek;
	size_t n_seek;
	size_t seek_cap;

	uint64_t records;
	uint64_t calls;
	uint64_t chunk_records; /* in the chunk being filled */
	uint64_t chunk_calls;
	_Atomic uint64_t lost_total;
	/* records dropped outside any ring, by reason (DT_LOSS_*) */
	_Atomic uint64_t lost_other[DT_LOSS_CUPTI + 1];
	uint64_t lost_other_seen[DT_LOSS_CUPTI + 1];
	int io_errno;     /* why the file could not take a frame, first time */
	uint64_t lost_io; /* records of the frames it could not take */
	int removed;      /* dt_writer_removed()'s answer */
	int remake_errno; /* why it could not be made again, last time */
};

/* ------------------------------------------------------------ utilities */

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void futex_wait(_Atomic uint32_t *word, uint32_t val, unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static int write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Room for one more index entry, taken before the frame is written: a frame
 * in the file but not in the index would make the index lie. */
static int seek_grow(struct dt_writer *w)
{
	if (w->n_seek == w->seek_cap) {
		size_t cap = w->seek_cap ? w->seek_cap * 2 : 64;
		struct seek_entry *s = realloc(w->seek, cap * sizeof(*s));
		if (!s)
			return -1;
		w->seek = s;
		w->seek_cap = cap;
	}
	return 0;
}

/*
 * Every frame is appended whole or not at all: a frame cut short by a full
 * disk would make the rest of the file unreadable, the END summary with
 * it. So room for the end of the file (END and the seek table) is held back
 * all along: blocks are reserved past the end of the file where the file
 * system can (fallocate), and the file size limit (RLIMIT_FSIZE) is never
 * crossed, which would also raise SIGXFSZ in the application. A frame that
 * does not fit is not written; its records are counted as lost (DT_LOSS_IO)
 * and the END summary says how many.
 */
#define PAGE           4096u
#define RESERVE_STEP   (64u << 10)
#define ROUND_UP(n, a) (((n) + (a)-1) / (a) * (a))

/* Bytes the end of the file takes: a meta frame with LOSS, END and its
 * seal, and the seek table with entries for the frames so far, one more
 * and END's. */
static uint64_t end_room(const struct dt_writer *w)
{
	return 8 + sizeof(struct dt_rec_loss) + sizeof(struct dt_rec_end) +
	       sizeof(struct dt_rec_frame) + 8 + (w->n_seek + 2) * 8 + 9;
}

/* Reserve the blocks from where the last reservation ended up to `to`:
 * whole pages, so that a failed call, which gives back what it took, gives
 * back nothing older. */
static int reserve(struct dt_writer *w, uint64_t to)
{
	return fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)w->reserved,
			 (off_t)(to - w->reserved));
}

/* Make sure n more bytes fit, and after them the end of the file unless
 * these are the end. Returns 0, or -1 with errno (ENOSPC, EFBIG, ...). */
static int make_room(struct dt_writer *w, uint64_t n, bool last)
{
	uint64_t want = w->size + n + (last ? 0 : end_room(w));
	uint64_t to = ROUND_UP(want, RESERVE_STEP);
	struct rlimit rl;
	int rc;

	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    want > rl.rlim_cur)
		return errno = EFBIG, -1;
	if (!w->can_reserve || want <= w->reserved)
		return 0;
	rc = reserve(w, to);
	if (rc && (errno == ENOSPC || errno == EDQUOT) &&
	    ROUND_UP(want, PAGE) < to)
		rc = reserve(w, to = ROUND_UP(want, PAGE)); /* the last pages */
	if (rc && (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL)) {
		w->can_reserve = false; /* then a full disk may cut a frame */
		return 0;
	}
	if (rc)
		return -1;
	w->reserved = to;
	return 0;
}

/* The file is complete: give back the blocks reserved past its end (a
 * truncation to the same size does, on ext4, XFS and tmpfs). */
static void release_room(struct dt_writer *w)
{
	if (w->reserved > w->size)
		(void)!ftruncate(w->fd, (off_t)w->size);
}

static int own_fd(struct dt_writer *w, struct stat *st);

/* Append a frame made of two pieces, whole or not at all. */
static int append(struct dt_writer *w, const void *a, size_t na, const void *b,
		  size_t nb, bool last)
{
	struct stat st;

	errno = 0;
	if (own_fd(w, &st) || make_room(w, na + nb, last))
		return -1;
	if (write_all(w->fd, a, na) || (nb && write_all(w->fd, b, nb))) {
		int err = errno;
		/* cut off what was written of it (and what was reserved) */
		if (ftruncate(w->fd, (off_t)w->size) == 0)
			w->reserved = w->size / PAGE * PAGE;
		errno = err;
		return -1;
	}
	w->size += na + nb;
	return 0;
}

/* The file could not take a frame: say so once, on the first time. */
static void note_io_error(struct dt_writer *w, const char *why)
{
	if (w->io_errno)
		return;
	w->io_errno = errno ? errno : EIO;
	fprintf(stderr,
		"dnntrace: cannot write %s: %s; the records that do not fit "
		"are counted as lost\n",
		w->path, why ? why : strerror(w->io_errno));
}

/* The FRAME record that ends every frame, at payload + len: which file it
 * belongs to, its place in it (the frames written before it: a frame the
 * file could not take leaves no gap), and for a skippable frame (payload
 * given), the checksum zstd does not make: of every byte before `hash`. */
static void seal(const struct dt_writer *w, uint8_t *payload, size_t len,
		 bool checked)
{
	struct dt_rec_frame f = { .hdr = { DT_REC_FRAME, 0, sizeof(f) } };

	f.file_id = w->file_id;
	f.seq = w->n_seek;
	memcpy(payload + len, &f, sizeof(f));
	if (checked)
		f.hash = dt_frame_hash(
			payload, len + offsetof(struct dt_rec_frame, hash));
	memcpy(payload + len, &f, sizeof(f));
}

/* Write one skippable frame (magic, size, payload) and index it. */
static int write_skippable(struct dt_writer *w, uint32_t magic,
			   const void *payload, uint32_t len, bool last)
{
	uint8_t hdr[8];

	put_le32(hdr, magic);
	put_le32(hdr + 4, len);
	if (seek_grow(w) || append(w, hdr, 8, payload, len, last))
		return -1;
	w->seek[w->n_seek++] = (struct seek_entry){ len + 8, 0 };
	return 0;
}

/* --------------------------------------------------- building records */

/* A growable byte buffer of records, for the header and END frames. */
struct recbuf {
	uint8_t *p;
	size_t len;
	size_t cap;
	bool oom;
};

static void *recbuf_add(struct recbuf *b, uint16_t type, uint32_t fixed,
			const void *tail1, uint32_t len1, const void *tail2,
			uint32_t len2)
{
	uint32_t size = dt_rec_align(fixed + len1 + len2);
	uint8_t *rec;

	if (b->len + size > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + size)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	rec = b->p + b->len;
	memset(rec, 0, size);
	((struct dt_rec_hdr *)rec)->type = type;
	((struct dt_rec_hdr *)rec)->size = size;
	if (len1)
		memcpy(rec + fixed, tail1, len1);
	if (len2)
		memcpy(rec + fixed + len1, tail2, len2);
	b->len += size;
	return rec;
}

/* recbuf_add for trace-apis.c, which knows no recbuf */
static void *recbuf_add_any(void *b, uint16_t type, uint32_t fixed,
			    const void *tail1, uint32_t len1, const void *tail2,
			    uint32_t len2)
{
	return recbuf_add(b, type, fixed, tail1, len1, tail2, len2);
}

static void add_info(struct recbuf *b, const char *key, const char *value,
		     size_t vlen)
{
	uint32_t klen = (uint32_t)strlen(key);
	struct dt_rec_info *r;

	if (vlen > 65536)
		vlen = 65536;
	r = recbuf_add(b, DT_REC_INFO, sizeof(*r), key, klen, value,
		       (uint32_t)vlen);
	if (r) {
		r->key_len = klen;
		r->len = klen + (uint32_t)vlen;
	}
}

static void add_info_str(struct recbuf *b, const char *key, const char *value)
{
	if (value)
		add_info(b, key, value, strlen(value));
}

/* Environment variables that say which rank of a job this process is. */
static const char *const rank_vars[] = {
	"RANK",
	"LOCAL_RANK",
	"WORLD_SIZE",
	"LOCAL_WORLD_SIZE",
	"GROUP_RANK",
	"TORCHELASTIC_RUN_ID",
	"OMPI_COMM_WORLD_RANK",
	"OMPI_COMM_WORLD_LOCAL_RANK",
	"OMPI_COMM_WORLD_SIZE",
	"PMIX_RANK",
	"PMI_RANK",
	"PMI_SIZE",
	"MPI_LOCALRANKID",
	"MV2_COMM_WORLD_RANK",
	"MV2_COMM_WORLD_LOCAL_RANK",
	"SLURM_PROCID",
	"SLURM_LOCALID",
	"SLURM_NTASKS",
	"SLURM_JOB_ID",
	"SLURM_STEP_ID",
	"PALS_RANKID",
	"PALS_LOCAL_RANKID",
	"ALPS_APP_PE",
	"PBS_JOBID",
	"LSB_JOBID",
	"CUDA_VISIBLE_DEVICES",
};

/* The identity a caller gave for another process. */
static void add_given_identity(struct recbuf *b, const struct dt_file_header *h,
			       const struct dt_writer_config *cfg)
{
	size_t n = cfg->cmdline ? strlen(cfg->cmdline) : 0;

	add_info_str(b, "host", cfg->host);
	if (!n)
		return;
	struct dt_rec_process *p =
		recbuf_add(b, DT_REC_PROCESS, sizeof(*p), cfg->cmdline,
			   (uint32_t)n, NULL, 0);
	if (p) {
		p->t = h->start_mono;
		p->pid = h->pid;
		p->ppid = h->ppid;
		p->event = cfg->proc_event;
		p->len = (uint32_t)n;
	}
	add_info(b, "cmdline", cfg->cmdline, n);
}

static void add_identity(struct recbuf *b, const struct dt_file_header *h,
			 uint32_t proc_event)
{
	char buf[PATH_MAX];
	size_t n;

	if (gethostname(buf, sizeof(buf)) == 0) {
		buf[sizeof(buf) - 1] = 0;
		add_info_str(b, "host", buf);
	}
	n = dt_read_small_file("/proc/self/cmdline", buf, sizeof(buf));
	if (n) {
		struct dt_rec_process *p =
			recbuf_add(b, DT_REC_PROCESS, sizeof(*p), buf,
				   (uint32_t)n, NULL, 0);
		if (p) {
			p->t = h->start_mono;
			p->pid = h->pid;
			p->ppid = h->ppid;
			p->event = proc_event;
			p->len = (uint32_t)n;
		}
		for (size_t i = 0; i + 1 < n; i++)
			if (buf[i] == 0)
				buf[i] = ' ';
		add_info(b, "cmdline", buf, strnlen(buf, n));
	}
	ssize_t k = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (k > 0)
		add_info(b, "exe", buf, (size_t)k);
	if (getcwd(buf, sizeof(buf)))
		add_info_str(b, "cwd", buf);
	n = dt_read_small_file("/proc/sys/kernel/random/boot_id", buf,
			       sizeof(buf));
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == 0))
		n--;
	if (n)
		add_info(b, "boot_id", buf, n);
	for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		const char *v = getenv(rank_vars[i]);
		if (v) {
			snprintf(buf, sizeof(buf), "env.%s", rank_vars[i]);
			add_info_str(b, buf, v);
		}
	}
}

static int write_header(struct dt_writer *w, const struct dt_writer_config *cfg,
			const struct dt_file_header *h)
{
	struct recbuf b = { 0 };
	int rc;

	/* The fixed header is not a record; it is 8-byte sized like one. */
	struct dt_rec_hdr *room =
		recbuf_add(&b, DT_REC_PAD, sizeof(*h), NULL, 0, NULL, 0);
	if (!room)
		return -1;
	memcpy(room, h, sizeof(*h));
	if (cfg->host || cfg->cmdline)
		add_given_identity(&b, h, cfg);
	else
		add_identity(&b, h, cfg->proc_event);
	for (size_t i = 0; i < cfg->n_info; i++)
		add_info_str(&b, cfg->info[i].key, cfg->info[i].value);
	dt_apis_write(cfg, recbuf_add_any, &b);
	struct dt_rec_clock *c =
		recbuf_add(&b, DT_REC_CLOCK, sizeof(*c), NULL, 0, NULL, 0);
	if (c) {
		c->mono = h->start_mono;
		c->other = h->start_real;
		c->clock = DT_CLOCK_REALTIME;
	}
	struct dt_rec_frame *s =
		recbuf_add(&b, DT_REC_FRAME, sizeof(*s), NULL, 0, NULL, 0);
	if (s)
		seal(w, b.p, b.len - sizeof(*s), true);
	rc = b.oom ? -1
		   : write_skippable(w, DT_FRAME_HEADER, b.p, (uint32_t)b.len,
				     false);
	free(b.p);
	return rc;
}

/* ------------------------------------------------------------ the file */

static int mkdirs_for(const char *path)
{
	char dir[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(dir))
		return -1;
	memcpy(dir, path, n + 1);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(dir, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

/*
 * Who may be trusted with the trace: the user and root. A folder someone
 * else owns and anyone may write in (one made in a shared /tmp under the
 * name the trace expects, say) is refused, and so is a symbolic link
 * someone else owns at the name the template gives: its owner would choose
 * where the trace goes, or take it away.
 */
static bool owner_trusted(uid_t uid)
{
	return uid == geteuid() || uid == 0;
}

/* Whether the folder `dir` may receive the trace; else errno is EPERM. */
static bool folder_trusted(const char *dir)
{
	struct stat st;

	if (!lstat(dir, &st) && S_ISLNK(st.st_mode) &&
	    !owner_trusted(st.st_uid))
		return errno = EPERM, false;
	if (!stat(dir, &st) && !owner_trusted(st.st_uid) &&
	    (st.st_mode & S_IWOTH))
		return errno = EPERM, false;
	return true;
}

/* A path naming a folder (one that exists, or any ending in '/') gets the
 * default file name inside it. A link at the path is followed only where
 * it may be trusted. */
static int name_in_folder(char *path, size_t size)
{
	size_t n = strlen(path);
	struct stat st;
	char name[PATH_MAX];

	if (n && path[n - 1] != '/') {
		if (lstat(path, &st))
			return 0; /* a new file */
		if (S_ISLNK(st.st_mode) && !owner_trusted(st.st_uid))
			return errno = EPERM, -1;
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			return 0;
	}
	if (dt_expand_template(DT_DEFAULT_TEMPLATE, name, sizeof(name)))
		return -1;
	if (snprintf(path + n, size - n, "%s%s",
		     n && path[n - 1] == '/' ? "" : "/",
		     name) >= (int)(size - n))
		return errno = ENAMETOOLONG, -1;
	return 0;
}

/* Whether the folder `path` goes in may receive it, made if missing. */
static bool folder_ready(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		return folder_trusted(".");
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	return mkdirs_for(path) == 0 && folder_trusted(dir[0] ? dir : "/");
}

/* Length of a name without its .dnnt extension, where .1, .2, ... go. */
static size_t name_stem(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && !strcmp(name + n - 5, ".dnnt") ? n - 5 : n;
}

/* Open a new file at `path`, or at path with .1, .2, ... inserted before
 * its .dnnt extension when taken. Never overwrites, never follows a
 * symbolic link at the last component, never writes in a folder that may
 * not be trusted (EPERM). A device or a pipe at `path`, or a link to one,
 * is refused (ENODEV): never /dev/null.1 next to it; so is a link to a
 * file (ELOOP). EEXIST when every name up to .9999 is taken. */
static int create_file(char *path, size_t size, mode_t mode)
{
	char base[PATH_MAX];
	size_t n = strlen(path), stem = name_stem(path);
	const char *ext = n > stem ? ".dnnt" : "";
	struct stat st;

	if (n >= sizeof(base))
		return errno = ENAMETOOLONG, -1;
	memcpy(base, path, stem);
	base[stem] = 0;
	if (!stat(path, &st)) {
		struct stat link;
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return errno = ENODEV, -1;
		/* a file reached through a link (/dev/stderr, stderr into a
		 * file) is no name to number: never /dev/stderr.1 */
		if (S_ISREG(st.st_mode) && !lstat(path, &link) &&
		    S_ISLNK(link.st_mode))
			return errno = ELOOP, -1;
	}
	if (!folder_ready(path))
		return -1;
	for (int i = 0; i < DT_NAMES_MAX; i++) {
		if (i &&
		    snprintf(path, size, "%s.%d%s", base, i, ext) >= (int)size)
			return errno = ENAMETOOLONG, -1;
		/* read too: a file removed while written is copied from */
		int fd = open(path,
			      O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
				      O_CLOEXEC | O_APPEND,
			      mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return errno = EEXIST, -1;
}

/* -------------------------------------------------------- the descriptor */

/*
 * The file's descriptor is the writer's, in a program that may close or
 * reuse descriptors it did not open (daemons and launchers close all but
 * 0-2; a recorder, like LTTng-UST's fd tracker, keeps its own out of their
 * reach). It is put out of the way, at or above the soft limit on open
 * files, so a program near its limit never finds one fewer: the limit is
 * raised for that moment where the hard limit allows. Where it does not,
 * the highest free descriptor below a limit of at least FD_LIMIT_SPARE
 * serves; under a smaller limit the program would be short of one, and
 * no file is made (EMFILE).
 */
#define FD_LIMIT_SPARE 1024u
#define FD_LIMIT_ROOM  16u /* raised by: the file, and a file read at once */

/* The soft limit on open files while the writer raises it. */
struct fd_limit {
	struct rlimit old; /* the program's */
	rlim_t raised_to;  /* 0: not raised */
};

/* Raise the soft limit on open files by FD_LIMIT_ROOM where the hard limit
 * allows; l keeps what to put back. */
static void raise_fd_limit(struct fd_limit *l)
{
	struct rlimit up;

	l->raised_to = 0;
	if (getrlimit(RLIMIT_NOFILE, &l->old))
		l->old.rlim_cur = l->old.rlim_max = INT_MAX;
	if (l->old.rlim_cur >= INT_MAX - FD_LIMIT_ROOM)
		return;
	up = l->old;
	up.rlim_cur = l->old.rlim_max == RLIM_INFINITY ||
				      l->old.rlim_max - l->old.rlim_cur >
					      FD_LIMIT_ROOM
			      ? l->old.rlim_cur + FD_LIMIT_ROOM
			      : l->old.rlim_max;
	if (up.rlim_cur > l->old.rlim_cur &&
	    setrlimit(RLIMIT_NOFILE, &up) == 0)
		l->raised_to = up.rlim_cur;
}

/* Put the program's limit back, unless it set one of its own meanwhile
 * (another thread's setrlimit stands). */
static void restore_fd_limit(const struct fd_limit *l)
{
	struct rlimit now;

	if (l->raised_to && getrlimit(RLIMIT_NOFILE, &now) == 0 &&
	    now.rlim_cur == l->raised_to)
		setrlimit(RLIMIT_NOFILE, &l->old);
}

/* A descriptor for fd's file out of the program's range: at or above
 * `limit`, the soft limit the program lives with (raised meanwhile), or
 * else the highest free below it, or fd itself where that is no higher.
 * The caller closes fd when another is returned. -1 (EMFILE): only under a
 * limit below FD_LIMIT_SPARE, which has none to spare. */
static int fd_out_of_reach(int fd, const struct fd_limit *l)
{
	rlim_t limit = l->old.rlim_cur;
	int top = limit < INT_MAX ? (int)limit : INT_MAX;
	int to = l->raised_to ? fcntl(fd, F_DUPFD_CLOEXEC, top) : -1;

	/* downwards: the first free one is the highest */
	for (int n = top - 1; to < 0 && limit >= FD_LIMIT_SPARE && n > fd &&
			      n >= top - (int)FD_LIMIT_ROOM;
	     n--)
		to = fcntl(fd, F_DUPFD_CLOEXEC, n);
	if (to < 0 && limit < FD_LIMIT_SPARE)
		return errno = EMFILE, -1;
	return to >= 0 ? to : fd;
}

/* A file just opened as fd, moved out of reach: the low descriptor closed
 * when another was taken; -1 with errno when none would do. */
static int settle_fd(int fd, const struct fd_limit *l)
{
	if (fd < 0)
		return fd;
	int high = fd_out_of_reach(fd, l);
	if (high != fd) {
		int err = errno;
		close(fd);
		errno = err;
	}
	return high;
}

/* Remember which file fd is, to know it again. */
static int note_identity(struct dt_writer *w, int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -1;
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	return 0;
}

/* Whether fd is the trace file (its state in *st). */
static bool is_the_file(const struct dt_writer *w, int fd, struct stat *st)
{
	return fd >= 0 && fstat(fd, st) == 0 && st->st_dev == w->dev &&
	       st->st_ino == w->ino;
}

/* A note for the body of the file, in the next frame. */
static void queue_info(struct dt_writer *w, const char *key,
		       const char *value);

/*
 * Before the writer touches its descriptor: that it still is the file. A
 * program can close or replace it behind the recorder's back (raw system
 * calls); then the number may be the program's own file, which is left
 * alone (never written, truncated or closed), and the file is opened again
 * by its path, without following links, if it still is there, with a note
 * in it. Returns 0, or -1 with errno: the frame is not written (counted as
 * lost) and `record` says so.
 */
static int own_fd(struct dt_writer *w, struct stat *st)
{
	int fd = atomic_load(&w->fd);
	struct fd_limit l;
	char note[96];

	if (is_the_file(w, fd, st))
		return 0;
	if (fd < 0)
		return errno = EBADF, -1;
	raise_fd_limit(&l);
	int again = open(w->path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (again >= 0 && !is_the_file(w, again, st)) {
		close(again); /* the name is another file's now */
		again = -1;
		errno = ESTALE;
	}
	again = settle_fd(again, &l);
	restore_fd_limit(&l);
	if (again < 0)
		return -1;
	atomic_store(&w->fd, again);
	snprintf(note, sizeof(note),
		 "%d was closed or replaced by the program; the file was "
		 "opened again",
		 fd);
	queue_info(w, "trace.fd", note);
	return 0;
}

/* Copy the first n bytes of the file `from` into `to`. */
static int copy_file(int from, int to, uint64_t n)
{
	char buf[1 << 16];

	for (uint64_t at = 0; at < n;) {
		size_t want =
			n - at < sizeof(buf) ? (size_t)(n - at) : sizeof(buf);
		ssize_t k = pread(from, buf, want, (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return errno = k ? errno : EIO, -1;
		if (write_all(to, buf, (size_t)k))
			return -1;
		at += (size_t)k;
	}
	return 0;
}

/*
 * The file was removed while being written (its folder deleted, say): the
 * frames would go on into a file no one can open, and be lost with it at
 * the end. So the file is made again at its name (its folders too), with
 * what it holds so far, and the frames go on there. Where that cannot be
 * done, it is tried again at the next flush.
 */
static void keep_linked(struct dt_writer *w, const struct stat *st)
{
	char path[PATH_MAX];
	struct fd_limit l;
	int fd, old_fd = atomic_load(&w->fd);

	if (st->st_nlink > 0)
		return;
	memcpy(path, w->path, sizeof(path));
	raise_fd_limit(&l);
	fd = settle_fd(create_file(path, sizeof(path), st->st_mode & 07777),
		       &l);
	restore_fd_limit(&l);
	if (fd >= 0 && copy_file(old_fd, fd, w->size) == 0 &&
	    note_identity(w, fd) == 0) {
		atomic_store(&w->fd, fd);
		close(old_fd);
		w->reserved = w->size / PAGE * PAGE;
		memcpy(w->path, path, sizeof(path));
		w->removed = 1;
		return;
	}
	w->remake_errno = errno ? errno : EIO;
	w->removed = -1;
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

/* Before the writer touches its file: its descriptor still the file's
 * (own_fd), and the file still where it can be read (keep_linked). */
static int check_file(struct dt_writer *w)
{
	struct stat st;

	if (own_fd(w, &st))
		return -1;
	keep_linked(w, &st);
	return 0;
}

/* -------------------------------------------------------------- chunks */

static int write_frame(struct dt_writer *w)
{
	size_t c, len;
	int rc = 0;

	if (!w->chunk_len)
		return 0;
	/* zstd checks the content: the seal says only where the frame goes */
	seal(w, w->chunk, w->chunk_len, false);
	len = w->chunk_len + sizeof(struct dt_rec_frame);
	c = ZSTD_compress2(w->cctx, w->zbuf, w->zcap, w->chunk, len);
	if (ZSTD_isError(c)) {
		errno = EINVAL;
		note_io_error(w, ZSTD_getErrorName(c));
		rc = -1;
	} else if (seek_grow(w) || append(w, w->zbuf, c, NULL, 0, false)) {
		note_io_error(w, NULL);
		rc = -1;
	} else {
		w->seek[w->n_seek++] =
			(struct seek_entry){ (uint32_t)c, (uint32_t)len };
	}
	if (rc) {
		/* the chunk's records are not in the file: they are lost */
		w->records -= w->chunk_records;
		w->calls -= w->chunk_calls;
		w->lost_io += w->chunk_records;
		atomic_fetch_add(&w->lost_total, w->chunk_records);
	}
	w->chunk_len = 0;
	w->chunk_records = w->chunk_calls = 0;
	return rc;
}

/* Append one record to the chunk. Every chunk starts with a CLOCK record
 * so that each frame can be put on the wall clock on its own, and keeps
 * room for its seal. */
static void chunk_add(struct dt_writer *w, const void *rec, uint32_t size)
{
	if (w->chunk_len + size + sizeof(struct dt_rec_frame) > w->chunk_cap)
		write_frame(w);
	if (w->chunk_len == 0) {
		struct dt_rec_clock c = { .hdr = { DT_REC_CLOCK, 0,
						   sizeof(c) } };
		c.mono = dt_clock_mono();
		c.other = dt_clock_real();
		c.clock = DT_CLOCK_REALTIME;
		memcpy(w->chunk, &c, sizeof(c));
		w->chunk_len = sizeof(c);
		w->chunk_t0 = c.mono;
		w->records++;
		w->chunk_records++;
	}
	memcpy(w->chunk + w->chunk_len, rec, size);
	w->chunk_len += size;
	w->records++;
	w->chunk_records++;
	if (((const struct dt_rec_hdr *)rec)->type == DT_REC_API_CALL) {
		w->calls++;
		w->chunk_calls++;
	}
}

static void emit_loss(struct dt_writer *w, uint32_t tid, uint64_t count,
		      uint32_t reason)
{
	struct dt_rec_loss l = { .hdr = { DT_REC_LOSS, 0, sizeof(l) } };

	l.t = dt_clock_mono();
	l.count = count;
	l.tid = tid;
	l.reason = reason;
	chunk_add(w, &l, sizeof(l));
}

/* The facts learnt late (dt_writer_info), into the chunk between the
 * rings' records. */
static void chunk_late_info(struct dt_writer *w)
{
	pthread_mutex_lock(&w->late_lock);
	struct recbuf *b = w->late_info;
	w->late_info = NULL;
	pthread_mutex_unlock(&w->late_lock);
	if (!b)
		return;
	for (size_t pos = 0; pos < b->len;) {
		const struct dt_rec_hdr *h = (const void *)(b->p + pos);
		chunk_add(w, h, h->size);
		pos += h->size;
	}
	free(b->p);
	free(b);
}

/* Move every complete record of r into the chunk. Returns true when r is
 * detached and empty, so it can be freed. */
static bool drain_ring(struct dt_writer *w, struct dt_ring *r)
{
	int detached = atomic_load_explicit(&r->detached, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	while (tail < head) {
		const struct dt_rec_hdr *h =
			(const void *)(r->buf + ((uint32_t)tail & r->mask));
		uint32_t size = h->size;

		if (size < sizeof(*h) || size % 8 || size > head - tail) {
			/* cannot happen unless memory was overwritten */
			atomic_fetch_add(&r->lost, 1);
			tail = head;
			break;
		}
		if (h->type != DT_REC_PAD)
			chunk_add(w, h, size);
		tail += size;
	}
	atomic_store_explicit(&r->tail, tail, memory_order_release);

	uint64_t lost = atomic_load_explicit(&r->lost, memory_order_relaxed);
	if (lost != r->lost_seen) {
		emit_loss(w, r->tid, lost - r->lost_seen, DT_LOSS_FULL);
		atomic_fetch_add(&w->lost_total, lost - r->lost_seen);
		r->lost_seen = lost;
	}
	lost = atomic_load_explicit(&r->lost_big, memory_order_relaxed);
	if (lost != r->lost_big_seen) {
		emit_loss(w, r->tid, lost - r->lost_big_seen, DT_LOSS_TOO_BIG);
		atomic_fetch_add(&w->lost_total, lost - r->lost_big_seen);
		r->lost_big_seen = lost;
	}
	return detached && tail == head;
}

/*
 * A ring's memory is mapped, not allocated, and not touched here: its pages
 * are paid for as the thread's records first reach them. A thread that
 * makes a few calls then costs a page or two, not the whole ring (1 000
 * such threads held 1 GB when each ring was zeroed at once). A busy thread
 * pays one page fault per 4 KiB of records, on the ring's first lap only.
 */
static uint8_t *ring_map(uint32_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void ring_free(struct dt_ring *r)
{
	munmap(r->buf, r->mask + 1u);
	free(r);
}

/* Drain every ring. The list lock is held only to read the list's head and
 * to unlink finished rings: a thread attaching never waits for compression
 * or for the disk. New rings are pushed at the head; only this thread
 * changes the links of rings already in the list. */
static void drain_all(struct dt_writer *w)
{
	struct dt_ring *r, *next, *dead = NULL;

	pthread_mutex_lock(&w->rings_lock);
	r = w->rings;
	pthread_mutex_unlock(&w->rings_lock);
	for (; r; r = next) {
		next = r->next;
		if (drain_ring(w, r)) {
			pthread_mutex_lock(&w->rings_lock);
			struct dt_ring **pp = &w->rings;
			while (*pp != r)
				pp = &(*pp)->next;
			*pp = r->next;
			pthread_mutex_unlock(&w->rings_lock);
			r->next = dead;
			dead = r;
		}
	}
	for (; dead; dead = next) {
		next = dead->next;
		ring_free(dead);
	}
	for (uint32_t why = 1; why <= DT_LOSS_CUPTI; why++) {
		uint64_t n = atomic_load(&w->lost_other[why]);
		if (n != w->lost_other_seen[why]) {
			emit_loss(w, 0, n - w->lost_other_seen[why], why);
			atomic_fetch_add(&w->lost_total,
					 n - w->lost_other_seen[why]);
			w->lost_other_seen[why] = n;
		}
	}
}

/* The meta frame holding END (and the count of records the file could not
 * take), then the seek table, in one piece. Where that does not fit, END
 * alone: a file with END and no index is still complete. */
static void write_end(struct dt_writer *w)
{
	struct dt_rec_loss l = { .hdr = { DT_REC_LOSS, 0, sizeof(l) } };
	struct dt_rec_end e = { .hdr = { DT_REC_END, 0, sizeof(e) } };
	uint8_t meta[8 + sizeof(l) + sizeof(e) + sizeof(struct dt_rec_frame)];
	uint8_t *p = meta + 8, *buf;
	size_t n, len, meta_len;

	write_frame(w);
	if (w->lost_io) {
		l.t = dt_clock_mono();
		l.count = w->lost_io;
		l.reason = DT_LOSS_IO;
		memcpy(p, &l, sizeof(l));
		p += sizeof(l);
	}
	e.t = dt_clock_mono();
	e.records = w->records;
	e.calls = w->calls;
	e.lost = atomic_load(&w->lost_total);
	e.reason = w->end_reason;
	e.code = w->end_code;
	memcpy(p, &e, sizeof(e));
	p += sizeof(e);
	seal(w, meta + 8, (size_t)(p - meta - 8), true);
	meta_len = (size_t)(p + sizeof(struct dt_rec_frame) - meta);
	put_le32(meta, DT_FRAME_META);
	put_le32(meta + 4, (uint32_t)(meta_len - 8));

	/* Seek table: one entry per frame written (END's too), the footer. */
	if (seek_grow(w))
		goto end_only;
	w->seek[w->n_seek++] = (struct seek_entry){ (uint32_t)meta_len, 0 };
	n = w->n_seek;
	len = n * 8 + 9;
	buf = malloc(meta_len + 8 + len);
	if (!buf) {
		w->n_seek--;
		goto end_only;
	}
	memcpy(buf, meta, meta_len);
	uint8_t *tbl = buf + meta_len + 8;
	put_le32(tbl - 8, DT_FRAME_SEEK);
	put_le32(tbl - 4, (uint32_t)len);
	for (size_t i = 0; i < n; i++) {
		put_le32(tbl + i * 8, w->seek[i].csize);
		put_le32(tbl + i * 8 + 4, w->seek[i].dsize);
	}
	put_le32(tbl + n * 8, (uint32_t)n);
	tbl[n * 8 + 4] = 0; /* descriptor: no checksums */
	put_le32(tbl + n * 8 + 5, DT_SEEK_FOOTER_MAGIC);
	int rc = append(w, buf, meta_len + 8 + len, NULL, 0, true);
	free(buf);
	if (rc == 0)
		return;
	w->n_seek--;
end_only:
	if (append(w, meta, meta_len, NULL, 0, true))
		note_io_error(w, NULL);
}

/* The program's threads are all gone: end the file as the process is
 * about to end, with exit(0), unless another thread is closing it. */
static bool stop_orphaned(struct dt_writer *w)
{
	if (!atomic_exchange(&w->closing, 1)) {
		w->end_reason = DT_END_EXIT;
		w->end_code = 0;
		atomic_store(&w->stop, 1);
	}
	return atomic_load(&w->stop);
}

static void *writer_main(void *arg)
{
	struct dt_writer *w = arg;
	sigset_t all;

	/* Signals go to the application's threads, never to this one: a
	 * handler that ends the process must find this thread free to write. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "dnntrace-wr");

	for (;;) {
		uint32_t seen = atomic_load(&w->wake);
		bool stopping = atomic_load(&w->stop);

		if (!stopping && w->orphaned && w->orphaned())
			stopping = stop_orphaned(w);

		/* the request is read first: all it asks for is committed */
		uint64_t req = atomic_load(&w->flush_req);
		pthread_mutex_lock(&w->lock);
		/* replaced or removed: the note goes in the next frame */
		(void)check_file(w);
		drain_all(w);
		chunk_late_info(w);
		if (stopping) {
			struct stat st;
			drain_all(w); /* what arrived while draining */
			(void)check_file(w);
			chunk_late_info(w);
			write_end(w);
			/* never the program's own, put at its number */
			if (is_the_file(w, atomic_load(&w->fd), &st)) {
				release_room(w);
				close(atomic_exchange(&w->fd, -1));
			}
			pthread_mutex_unlock(&w->lock);
			atomic_store(&w->closed, 1);
			return NULL;
		}
		if (w->chunk_len &&
		    (req != atomic_load(&w->flush_done) ||
		     dt_clock_mono() - w->chunk_t0 >= w->flush_ms * 1000000ull))
			write_frame(w);
		atomic_store(&w->flush_done, req);
		pthread_mutex_unlock(&w->lock);

		atomic_store(&w->sleeping, 1);
		futex_wait(&w->wake, seen, w->flush_ms / 4 + 1);
		atomic_store(&w->sleeping, 0);
	}
}

/* --------------------------------------------------------- public API */

static void kick(struct dt_writer *w)
{
	atomic_fetch_add(&w->wake, 1);
	futex_wake(&w->wake);
}

/* Queue an INFO record for the writer thread, which puts it in the next
 * frame. Returns whether it was queued. */
static bool queue_info_ok(struct dt_writer *w, const char *key,
			  const char *value)
{
	pthread_mutex_lock(&w->late_lock);
	if (!w->late_info)
		w->late_info = calloc(1, sizeof(*w->late_info));
	if (w->late_info)
		add_info_str(w->late_info, key, value);
	bool ok = w->late_info && !w->late_info->oom;
	pthread_mutex_unlock(&w->late_lock);
	return ok;
}

static void queue_info(struct dt_writer *w, const char *key, const char *value)
{
	(void)queue_info_ok(w, key, value);
}

int dt_writer_info(struct dt_writer *w, const char *key, const char *value)
{
	if (!w || atomic_load(&w->stop))
		return -1;
	/* queued for the writer thread: the caller, an application thread,
	 * never waits for compression or the disk */
	bool ok = queue_info_ok(w, key, value);
	kick(w);
	return ok ? 0 : -1;
}

int dt_writer_fd(const struct dt_writer *w)
{
	return atomic_load(&w->fd);
}

int dt_writer_move_fd(struct dt_writer *w)
{
	struct fd_limit l;
	int fd, to;

	pthread_mutex_lock(&w->lock); /* not while a frame is written */
	fd = atomic_load(&w->fd);
	raise_fd_limit(&l);
	to = fd < 0 ? fd : fd_out_of_reach(fd, &l);
	if (to == fd && fd >= 0) /* no room above: any other will do */
		to = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	restore_fd_limit(&l);
	if (to >= 0 && to != fd) {
		atomic_store(&w->fd, to);
		close(fd); /* after: the program's close() refuses the writer's */
	}
	pthread_mutex_unlock(&w->lock);
	return to >= 0 || fd < 0 ? 0 : -1;
}

void dt_ring_commit_slow(struct dt_ring *r)
{
	r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (r->head_local - r->tail_cache > r->kick_mark &&
	    dt_take_flag(&r->writer->sleeping))
		kick(r->writer);
}

static void *reserve_slow(struct dt_ring *r, uint32_t size, bool count)
{
	uint32_t cap = r->mask + 1;
	uint64_t head = r->head_local;
	uint32_t off = (uint32_t)head & r->mask;
	uint32_t pad = off + size > cap ? cap - off : 0;

	if (size > cap / 2) {
		atomic_fetch_add_explicit(&r->lost_big, 1,
					  memory_order_relaxed);
		return NULL;
	}
	r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (head + pad + size - r->tail_cache > cap) {
		if (count)
			atomic_fetch_add_explicit(&r->lost, 1,
						  memory_order_relaxed);
		if (dt_take_flag(&r->writer->sleeping))
			kick(r->writer);
		return NULL;
	}
	if (pad) {
		struct dt_rec_hdr *h = (void *)(r->buf + off);
		h->type = DT_REC_PAD;
		h->reserved = 0;
		h->size = pad;
		head += pad;
	}
	r->head_local = head + size;
	return r->buf + ((uint32_t)head & r->mask);
}

void *dt_ring_reserve_slow(struct dt_ring *r, uint32_t size)
{
	return reserve_slow(r, size, true);
}

void *dt_ring_try_reserve(struct dt_ring *r, uint32_t size)
{
	uint64_t head = r->head_local;
	uint32_t off = (uint32_t)head & r->mask;

	if (off + size > r->mask + 1u ||
	    head + size - r->tail_cache > r->mask + 1u)
		return reserve_slow(r, size, false);
	r->head_local = head + size;
	return r->buf + off;
}

void dt_ring_count_lost(struct dt_ring *r)
{
	atomic_fetch_add_explicit(&r->lost, 1, memory_order_relaxed);
}

void dt_writer_count_lost(struct dt_writer *w, enum dt_loss_reason why)
{
	if (why <= DT_LOSS_CUPTI)
		atomic_fetch_add(&w->lost_other[why], 1);
}

struct dt_ring *dt_writer_attach(struct dt_writer *w, uint32_t tid,
				 const char *thread_name)
{
	struct dt_ring *r = calloc(1, sizeof(*r));

	if (!r || !(r->buf = ring_map(w->ring_size))) {
		free(r);
		return NULL;
	}
	r->mask = w->ring_size - 1;
	r->tid = tid;
	r->writer = w;
	r->kick_mark = w->ring_size / 2;

	uint32_t nl = thread_name ? (uint32_t)strnlen(thread_name, 64) : 0;
	uint32_t size = dt_rec_align(sizeof(struct dt_rec_thread) + nl);
	struct dt_rec_thread *t = dt_ring_reserve(r, size);
	memset(t, 0, size); /* an empty ring always has room */
	t->hdr.type = DT_REC_THREAD;
	t->hdr.size = size;
	t->t = dt_clock_mono();
	t->tid = tid;
	t->len = nl;
	if (nl)
		memcpy(t + 1, thread_name, nl);
	dt_ring_commit(r);

	pthread_mutex_lock(&w->rings_lock);
	r->next = w->rings;
	w->rings = r;
	pthread_mutex_unlock(&w->rings_lock);
	return r;
}

void dt_ring_detach(struct dt_ring *r)
{
	atomic_store_explicit(&r->detached, 1, memory_order_release);
}

const char *dt_writer_path(const struct dt_writer *w)
{
	return w->path;
}

uint64_t dt_writer_lost(struct dt_writer *w)
{
	uint64_t n = 0;

	pthread_mutex_lock(&w->rings_lock);
	for (struct dt_ring *r = w->rings; r; r = r->next)
		n += atomic_load(&r->lost) - r->lost_seen;
	pthread_mutex_unlock(&w->rings_lock);
	return n + atomic_load(&w->lost_total);
}

const char *dt_writer_why(int err, const char *path, char *buf, size_t size)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int stem = (int)name_stem(name);

	switch (err) {
	case ENODEV:
		snprintf(buf, size,
			 "it is a device or a pipe, not a file or a folder");
		break;
	case EEXIST:
		snprintf(buf, size, "every name from %s to %.*s.%d%s is taken",
			 name, stem, name, DT_NAMES_MAX - 1, name + stem);
		break;
	case ELOOP:
		snprintf(buf, size,
			 "it is a link to a file, not a file or a folder");
		break;
	case EPERM:
		snprintf(buf, size,
			 "the folder, or a link at that name, is another "
			 "user's, who may change it");
		break;
	case EMFILE:
		snprintf(buf, size, "the limit on open files (ulimit -n) "
				    "leaves the program none to spare");
		break;
	default:
		snprintf(buf, size, "%s", strerror(err));
	}
	return buf;
}

int dt_writer_removed(const struct dt_writer *w, int *err, uint64_t *records,
		      uint64_t *calls)
{
	*err = w->remake_errno;
	*records = w->records;
	*calls = w->calls;
	return w->removed;
}

int dt_writer_io_error(const struct dt_writer *w, uint64_t *lost)
{
	*lost = w->lost_io;
	return w->io_errno;
}

/* A number that tells this file's frames from any other file's (a file
 * appended to another, a frame copied in from another recording). */
static uint64_t new_file_id(const void *salt)
{
	uint64_t id, t = dt_clock_mono() ^ dt_clock_real() ^ (uint64_t)getpid();

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) == sizeof(id))
		return id;
	return dt_hash(&t, sizeof(t), (uint64_t)(uintptr_t)salt);
}

static uint32_t pow2_at_least(uint32_t v, uint32_t min)
{
	uint32_t p = min;

	while (p < v && p < DT_RING_MAX)
		p <<= 1;
	return p;
}

static void free_writer_buffers(struct dt_writer *w)
{
	ZSTD_freeCCtx(w->cctx);
	free(w->chunk);
	free(w->zbuf);
	free(w->seek);
	w->cctx = NULL;
	w->chunk = w->zbuf = NULL;
	w->seek = NULL;
}

struct dt_writer *dt_writer_open(const struct dt_writer_config *cfg)
{
	struct dt_writer *w = calloc(1, sizeof(*w));
	struct dt_file_header h = { .major = DT_FORMAT_MAJOR,
				    .minor = DT_FORMAT_MINOR };
	struct fd_limit limit = { .raised_to = 0 };
	int err, fd;

	if (!w)
		return NULL;
	w->fd = -1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->rings_lock, NULL);
	pthread_mutex_init(&w->late_lock, NULL);
	w->ring_size = pow2_at_least(
		cfg->ring_size ? cfg->ring_size : RING_DEFAULT, DT_RING_MIN);
	w->flush_ms = cfg->flush_ms ? cfg->flush_ms : FLUSH_MS_DEFAULT;
	w->orphaned = cfg->orphaned;
	w->chunk_cap = cfg->chunk_size ? cfg->chunk_size : CHUNK_DEFAULT;
	if (w->chunk_cap < 2 * DT_REC_MAX)
		w->chunk_cap = 2 * DT_REC_MAX; /* any record fits a chunk */
	w->zcap = ZSTD_compressBound(w->chunk_cap);
	w->chunk = malloc(w->chunk_cap);
	w->zbuf = malloc(w->zcap);
	w->cctx = ZSTD_createCCtx();
	if (!w->chunk || !w->zbuf || !w->cctx) {
		errno = ENOMEM;
		goto fail;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel,
			       cfg->level ? cfg->level : 1);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);

	if (dt_expand_template(cfg->path_template ? cfg->path_template
						  : DT_DEFAULT_TEMPLATE,
			       w->path, sizeof(w->path)) ||
	    name_in_folder(w->path, sizeof(w->path)))
		goto fail;
	raise_fd_limit(&limit);
	fd = create_file(w->path, sizeof(w->path),
			 cfg->mode ? cfg->mode : 0600);
	if (fd >= 0 && note_identity(w, fd)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0 && (fd = settle_fd(fd, &limit)) < 0) {
		err = errno;
		unlink(w->path);
		errno = err;
	}
	atomic_store(&w->fd, fd);
	if (fd < 0)
		goto fail;
	w->can_reserve = true;
	w->file_id = new_file_id(&h);

	memcpy(h.magic, DT_FILE_MAGIC, 8);
	h.start_mono = cfg->start_mono ? cfg->start_mono : dt_clock_mono();
	h.start_real = cfg->start_real ? cfg->start_real : dt_clock_real();
	h.pid = cfg->pid ? cfg->pid : (uint32_t)getpid();
	h.ppid = cfg->ppid ? cfg->ppid : (uint32_t)getppid();
	if (write_header(w, cfg, &h)) {
		err = errno ? errno : EIO;
		unlink(w->path);
		errno = err;
		goto fail;
	}
	if (pthread_create(&w->thread, NULL, writer_main, w)) {
		unlink(w->path);
		errno = EAGAIN;
		goto fail;
	}
	w->thread_started = true;
	restore_fd_limit(&limit); /* the header's files were read with it raised */
	return w;
fail:
	err = errno;
	if (w->fd >= 0)
		close(atomic_exchange(&w->fd, -1));
	restore_fd_limit(&limit);
	free_writer_buffers(w);
	free(w);
	errno = err;
	return NULL;
}

int dt_writer_flush(struct dt_writer *w, unsigned timeout_ms)
{
	uint64_t req = atomic_fetch_add(&w->flush_req, 1) + 1;

	kick(w);
	for (unsigned waited = 0; atomic_load(&w->flush_done) < req; waited++) {
		if (waited >= timeout_ms || atomic_load(&w->closed))
			return -1;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

void dt_writer_close(struct dt_writer *w, enum dt_end_reason reason, int code)
{
	if (atomic_exchange(&w->closing, 1))
		return; /* someone else is closing it */
	w->end_reason = reason;
	w->end_code = code;
	atomic_store(&w->stop, 1); /* after the reason: the writer reads it */
	kick(w);
	if (w->thread_started)
		pthread_join(w->thread, NULL);
	/* Rings of threads that are still running stay allocated, and so does
	 * w: such a thread may still append (its records are lost). */
	pthread_mutex_lock(&w->lock);
	free_writer_buffers(w);
	pthread_mutex_unlock(&w->lock);
}

int dt_writer_close_async(struct dt_writer *w, enum dt_end_reason reason,
			  int code, unsigned timeout_ms)
{
	if (!atomic_exchange(&w->closing, 1)) {
		w->end_reason = reason;
		w->end_code = code;
		atomic_store(&w->stop, 1);
	}
	kick(w);
	for (unsigned waited = 0; !atomic_load(&w->closed); waited++) {
		if (waited >= timeout_ms)
			return -1;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

void dt_writer_free(struct dt_writer *w)
{
	if (!w)
		return;
	for (struct dt_ring *r = w->rings, *next; r; r = next) {
		next = r->next;
		ring_free(r);
	}
	free_writer_buffers(w);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->rings_lock);
	pthread_mutex_destroy(&w->late_lock);
	if (w->late_info)
		free(w->late_info->p);
	free(w->late_info);
	free(w);
}

void dt_writer_abandon(struct dt_writer *w)
{
	/* its thread did not survive the fork; the child's copy of the
	 * descriptor is of no use to it */
	int fd = atomic_exchange(&w->fd, -1);

	if (fd >= 0)
		close(fd);
}
