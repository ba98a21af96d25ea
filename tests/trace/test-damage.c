/*
 * test-damage.c - damaged frames in the middle of a trace are skipped and
 * the rest is read: bytes flipped in a middle frame, in the first, in the
 * last, in two adjacent ones, in a frame's magic number; a frame whose
 * checksum passes but whose last record is malformed; a frame written half
 * before the later ones (a full disk that freed up). Each with the seek
 * table, without it, and without the END record too. Every record of every
 * other frame comes back, none of a damaged frame, and the reader says
 * which bytes it skipped and how many records are missing; read from
 * memory and from a file.
 *
 * `test-damage DIR` writes these files into DIR instead (the fuzz corpus).
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "trace-test-util.h"

#define NDATA   6  /* data frames */
#define NFRAMES 16 /* header, data frames, END, seek table, and room */
#define MAXSEQ  512

/* The undamaged file: where each frame is, what it holds. */
static uint8_t *base;
static size_t base_size;
static size_t start[NFRAMES], end[NFRAMES], n_frames;
static uint64_t records[NFRAMES], dsize[NFRAMES], calls[NFRAMES];
static int frame_of_seq[MAXSEQ];
static size_t meta_i, seek_i; /* the END frame, the seek table */
static const char *out_dir;   /* where variants are written */
static bool corpus;           /* out_dir is the fuzz corpus: keep some */

/* A variant: a copy of the base file, changed. */
struct file {
	uint8_t *p;
	size_t n;
};

static struct file copy_of(size_t n)
{
	struct file f = { malloc(n), n };

	memcpy(f.p, base, n);
	return f;
}

/* Three bytes flipped in the middle of frame i (inside its block). */
static void flip(struct file *f, size_t i)
{
	size_t mid = start[i] + (end[i] - start[i]) / 2;

	f->p[mid] ^= 0x5a;
	f->p[mid + 1] ^= 0xa5;
	f->p[mid + 5] ^= 0x01;
}

static void write_base(void)
{
	char path[600];
	uint64_t seq = 0;

	snprintf(path, sizeof(path), "%s/base-%%p.dnnt", dt_test_tmpdir());
	struct dt_writer *w = test_writer_as(path, "test-damage", 50);
	struct dt_ring *r = dt_writer_attach(w, 7, "t");
	for (int f = 0; f < NDATA; f++) {
		for (int i = 0; i < 8 + f * 3; i++)
			test_put_call(r, ++seq, i * 31 + f);
		CHECK(dt_writer_flush(w, 5000) == 0);
	}
	dt_ring_detach(r);
	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);
	base = test_slurp(path, &base_size);
	CHECK(base != NULL);
	unlink(path);

	struct test_frame fr[NFRAMES];
	n_frames = test_frames_of(base, base_size, fr, NFRAMES);
	CHECK_EQ_U(n_frames, NDATA + 3);
	if (n_frames != NDATA + 3)
		exit(1);
	for (size_t i = 0; i < n_frames; i++) {
		start[i] = i ? end[i - 1] : 0;
		end[i] = fr[i].end;
		records[i] = fr[i].records;
		if (i >= 1 && i <= NDATA)
			dsize[i] = ZSTD_getFrameContentSize(base + start[i],
							    end[i] - start[i]);
	}
	meta_i = NDATA + 1;
	seek_i = NDATA + 2;

	/* which frame holds each call */
	struct dt_reader *rd =
		dt_reader_open_mem(base, base_size, NULL, NULL, 0);
	const struct dt_rec_hdr *h;
	CHECK(rd != NULL);
	while (rd && dt_reader_next(rd, &h) == 1) {
		const struct dt_rec_api_call *c = (const void *)h;
		if (h->type != DT_REC_API_CALL || c->seq >= MAXSEQ)
			continue;
		for (size_t i = 1; i <= NDATA; i++)
			if (end[i] == dt_reader_offset(rd)) {
				frame_of_seq[c->seq] = (int)i;
				calls[i]++;
			}
	}
	CHECK_EQ_U(dt_reader_stats(rd)->end, DT_FILE_CLEAN);
	CHECK_EQ_U(dt_reader_stats(rd)->skips, 0);
	CHECK_EQ_U(dt_reader_stats(rd)->records_missing, 0);
	CHECK(dt_reader_stats(rd)->records_missing_known);
	CHECK(dt_reader_stats(rd)->lost_exact);
	dt_reader_close(rd);
}

/* The seek table for frames 0..n-1 of sizes c[] (decompressed d[]). */
static size_t put_seek_table(uint8_t *out, const uint32_t *c, const uint32_t *d,
			     uint32_t n)
{
	uint32_t len = n * 8 + 9, magic = DT_FRAME_SEEK,
		 foot = DT_SEEK_FOOTER_MAGIC;

	memcpy(out, &magic, 4);
	memcpy(out + 4, &len, 4);
	for (uint32_t i = 0; i < n; i++) {
		memcpy(out + 8 + i * 8, &c[i], 4);
		memcpy(out + 12 + i * 8, &d[i], 4);
	}
	memcpy(out + 8 + n * 8, &n, 4);
	out[8 + n * 8 + 4] = 0;
	memcpy(out + 8 + n * 8 + 5, &foot, 4);
	return 8 + len;
}

/* Frame i replaced by its records with the last one's `len` overrunning
 * its size, recompressed with a sound checksum; the seek table rebuilt. */
static struct file bad_record(size_t i, bool with_index, size_t *zsize)
{
	size_t d = dsize[i], cap = ZSTD_compressBound(d);
	uint8_t *raw = malloc(d), *z = malloc(cap);
	size_t last = 0;

	CHECK_EQ_U(ZSTD_decompress(raw, d, base + start[i], end[i] - start[i]),
		   d);
	/* the last call, before the frame's seal */
	for (size_t p = 0; p < d; p += ((struct dt_rec_hdr *)(raw + p))->size)
		if (((struct dt_rec_hdr *)(raw + p))->type == DT_REC_API_CALL)
			last = p;
	CHECK_EQ_U(((struct dt_rec_hdr *)(raw + last))->type, DT_REC_API_CALL);
	((struct dt_rec_api_call *)(raw + last))->len = 0xFFFF;

	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	size_t zn = ZSTD_compress2(cc, z, cap, raw, d);
	ZSTD_freeCCtx(cc);
	CHECK(!ZSTD_isError(zn));

	struct file f = { malloc(base_size + zn + 1024), 0 };
	uint32_t c[NFRAMES], dd[NFRAMES];
	memcpy(f.p, base, start[i]);
	memcpy(f.p + start[i], z, zn);
	f.n = start[i] + zn;
	memcpy(f.p + f.n, base + end[i], start[seek_i] - end[i]);
	f.n += start[seek_i] - end[i];
	for (size_t k = 0; k < seek_i; k++) {
		c[k] = (uint32_t)(k == i ? zn : end[k] - start[k]);
		dd[k] = (uint32_t)(k >= 1 && k <= NDATA ? dsize[k] : 0);
	}
	if (with_index)
		f.n += put_seek_table(f.p + f.n, c, dd, (uint32_t)seek_i);
	*zsize = zn;
	free(raw);
	free(z);
	return f;
}

/* The first half of frame i written before it, as a write that failed
 * half way leaves it when later writes succeed; the seek table (if kept)
 * does not list it, so it no longer adds up. */
static struct file half_frame(size_t i, size_t upto, size_t *half)
{
	struct file f = { malloc(upto + end[i] - start[i]), 0 };

	*half = (end[i] - start[i]) / 2;
	memcpy(f.p, base, start[i]);
	memcpy(f.p + start[i], base + start[i], *half);
	memcpy(f.p + start[i] + *half, base + start[i], upto - start[i]);
	f.n = upto + *half;
	return f;
}

/* What reading a variant must give. */
struct want {
	bool gone[NFRAMES]; /* frames whose records are missing */
	size_t n_skips;
	uint64_t skip_off[4], skip_size[4];
	bool exact;      /* frame counts and record bytes known */
	uint64_t frames; /* frames skipped (exact) or at least */
	bool have_end;   /* the END record is in the file */
	enum dt_file_end end;
	enum dt_skip_reason why; /* of the first range */
	bool check_why;
};

static void check_stats(const char *name, struct dt_reader *rd,
			const struct want *w)
{
	const struct dt_rec_hdr *h;
	uint64_t seen[NFRAMES] = { 0 }, want_missing = 0, want_bytes = 0;
	int failures = dt_test_failures;

	while (dt_reader_next(rd, &h) == 1) {
		const struct dt_rec_api_call *c = (const void *)h;
		if (h->type != DT_REC_API_CALL)
			continue;
		CHECK(c->seq < MAXSEQ && frame_of_seq[c->seq]);
		if (c->seq < MAXSEQ)
			seen[frame_of_seq[c->seq]]++;
	}
	for (size_t i = 1; i <= NDATA; i++) {
		CHECK_EQ_U(seen[i], w->gone[i] ? 0 : calls[i]);
		if (w->gone[i]) {
			want_missing += records[i];
			want_bytes += dsize[i];
		}
	}

	const struct dt_file_stats *st = dt_reader_stats(rd);
	size_t n;
	const struct dt_skip *s = dt_reader_skips(rd, &n);
	CHECK_EQ_U(st->end, w->end);
	CHECK_EQ_U(st->skips, w->n_skips);
	CHECK_EQ_U(n, w->n_skips);
	for (size_t k = 0; k < n && k < w->n_skips; k++) {
		CHECK_EQ_U(s[k].offset, w->skip_off[k]);
		CHECK_EQ_U(s[k].size, w->skip_size[k]);
	}
	if (n && w->check_why)
		CHECK_EQ_U(s[0].reason, w->why);
	uint64_t bytes = 0;
	for (size_t k = 0; k < w->n_skips; k++)
		bytes += w->skip_size[k];
	CHECK_EQ_U(st->bytes_skipped, bytes);
	CHECK_EQ_U(st->bytes_lost, 0);
	if (w->exact) {
		CHECK(st->skips_exact);
		CHECK_EQ_U(st->frames_skipped, w->frames);
		CHECK_EQ_U(st->record_bytes_skipped, want_bytes);
	} else {
		CHECK(st->frames_skipped >= w->frames);
	}
	CHECK_EQ_U(st->have_end, w->have_end);
	CHECK_EQ_U(st->records_missing_known, w->have_end);
	CHECK_EQ_U(st->records_missing, w->have_end ? want_missing : 0);
	CHECK_EQ_U(st->lost_exact, w->have_end);
	if (w->n_skips)
		CHECK(strstr(st->error, "damaged frame") != NULL);
	if (dt_test_failures != failures)
		fprintf(stderr, "  in %s: %s\n", name, st->error);
}

/* Variants kept in the fuzz corpus: one of each kind of damage. */
static bool keep(const char *name)
{
	static const char *const kept[] = {
		"damaged-frame3-index",     "damaged-frame6-noend",
		"damaged-adjacent-noindex", "damaged-magic-noend",
		"damaged-record-index",     "damaged-half-noindex",
	};
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (!strcmp(name, kept[i]))
			return true;
	return false;
}

/* Read the variant from memory and from a file, and check both. */
static void check(const char *name, struct file f, const struct want *w)
{
	char path[600];
	struct dt_reader *rd = dt_reader_open_mem(f.p, f.n, NULL, NULL, 0);

	CHECK(rd != NULL);
	if (rd)
		check_stats(name, rd, w);
	dt_reader_close(rd);

	snprintf(path, sizeof(path), "%s/%s.dnnt", out_dir, name);
	CHECK(test_write_file(path, f.p, f.n));
	rd = dt_reader_open(path, NULL, NULL, 0);
	CHECK(rd != NULL);
	if (rd)
		check_stats(name, rd, w);
	dt_reader_close(rd);
	if (!corpus || !keep(name))
		unlink(path);
	free(f.p);
}

/* The three ways a file may end: seek table, END only, neither. */
enum ending { INDEX, NO_INDEX, NO_END };

static size_t length_for(enum ending e)
{
	return e == INDEX      ? base_size
	       : e == NO_INDEX ? start[seek_i]
			       : start[meta_i];
}

static struct want want_for(enum ending e)
{
	return (struct want){ .have_end = e != NO_END,
			      .end = e == NO_END ? DT_FILE_NO_END
						 : DT_FILE_DAMAGED };
}

static void gone(struct want *w, size_t i, bool exact)
{
	w->gone[i] = true;
	w->skip_off[w->n_skips] = start[i];
	w->skip_size[w->n_skips] = end[i] - start[i];
	w->n_skips++;
	w->frames++;
	w->exact = exact;
}

int main(int argc, char **argv)
{
	static const char *const endings[] = { "index", "noindex", "noend" };
	char name[64];

	write_base();
	out_dir = dt_test_dir;
	if (argc > 1) {
		out_dir = argv[1];
		corpus = true;
	}

	for (enum ending e = INDEX; e <= NO_END; e++) {
		size_t len = length_for(e);
		struct file f;
		struct want w;

		/* bytes flipped in a middle frame, the first, the last */
		static const size_t one[] = { 3, 1, NDATA };
		for (size_t k = 0; k < 3; k++) {
			f = copy_of(len);
			flip(&f, one[k]);
			w = want_for(e);
			gone(&w, one[k], true);
			snprintf(name, sizeof(name), "damaged-frame%zu-%s",
				 one[k], endings[e]);
			check(name, f, &w);
		}

		/* two adjacent frames */
		f = copy_of(len);
		flip(&f, 3);
		flip(&f, 4);
		w = want_for(e);
		gone(&w, 3, true);
		gone(&w, 4, true);
		snprintf(name, sizeof(name), "damaged-adjacent-%s", endings[e]);
		check(name, f, &w);

		/* a frame's magic number: found again by scanning, unless
		 * the seek table says where the next frame is */
		f = copy_of(len);
		f.p[start[2]] ^= 0xff;
		w = want_for(e);
		gone(&w, 2, e == INDEX);
		w.why = DT_SKIP_NO_FRAME;
		w.check_why = true;
		snprintf(name, sizeof(name), "damaged-magic-%s", endings[e]);
		check(name, f, &w);
	}

	/* a sound frame, checksum and all, with a malformed last record:
	 * none of its records is returned */
	for (int with_index = 1; with_index >= 0; with_index--) {
		size_t zn;
		struct file f = bad_record(4, with_index, &zn);
		struct want w = want_for(with_index ? INDEX : NO_INDEX);
		gone(&w, 4, true);
		w.skip_size[0] = zn;
		w.why = DT_SKIP_BAD_RECORD;
		w.check_why = true;
		check(with_index ? "damaged-record-index"
				 : "damaged-record-noindex",
		      f, &w);
	}

	/* half a frame left before the rest: nothing is missing */
	for (enum ending e = INDEX; e <= NO_END; e++) {
		size_t half;
		struct file f = half_frame(3, length_for(e), &half);
		struct want w = want_for(e);
		w.n_skips = 1;
		w.skip_off[0] = start[3];
		w.skip_size[0] = half;
		w.frames = 1;
		snprintf(name, sizeof(name), "damaged-half-%s", endings[e]);
		check(name, f, &w);
	}
	free(base);
	TEST_DONE();
}
