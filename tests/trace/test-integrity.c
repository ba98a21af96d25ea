/*
 * test-integrity.c - a trace that is not what was written is never called
 * complete. From a sealed trace (written here, format 1.6) and from an
 * older one (the 1.5 trace in tests/data), mutants: a data frame removed,
 * one copied, two files joined, END counting other records, calls or
 * losses than the file holds or its frame claiming a later place (frames
 * missing before it), every single bit of the header and of END's frame
 * flipped; and a sound trace that must read as complete, with API names
 * shorter than cuDNN's prefix and call statuses no cuDNN has named. Each
 * is read, and how it ended, whether it is complete and what was read are
 * checked.
 *
 * usage: test-integrity OLD_TRACE            the checks
 *        test-integrity OLD_TRACE --write DIR  the mutants into DIR too (the
 *                                            fuzz corpus), named
 *                                            integrity-<case>.<end>.dnnt
 *        test-integrity --check FILE...      each such file read and held
 *                                            to the end its name gives
 */
#define _GNU_SOURCE
#define XXH_INLINE_ALL /* the writer's checksum, header only */
#include <xxhash.h>

#include "dt-analyzer.h"
#include "trace-test-util.h"

#define DATA_FRAMES 4
#define MAX_FRAMES  16

/* A trace in memory and where its frames are: frame k spans
 * [at[k], at[k + 1]); the last is the seek table. */
struct trace {
	uint8_t *p;
	size_t n;
	size_t at[MAX_FRAMES + 1];
	size_t frames;
};

/* What reading a trace found. */
struct verdict {
	bool opened;
	enum dt_file_end end;
	bool complete;
	struct dt_file_stats st;
};

static struct verdict read_mem(const uint8_t *p, size_t n)
{
	struct verdict v = { 0 };
	const struct dt_rec_hdr *h;
	struct dt_reader *r = dt_reader_open_mem(p, n, NULL, NULL, 0);

	if (!r)
		return v;
	while (dt_reader_next(r, &h) > 0)
		;
	v.opened = true;
	v.st = *dt_reader_stats(r);
	v.end = v.st.end;
	v.complete = dt_trace_complete(&v.st);
	dt_reader_close(r);
	return v;
}

static void find_frames(struct trace *t)
{
	struct test_frame fr[MAX_FRAMES];

	t->frames = test_frames_of(t->p, t->n, fr, MAX_FRAMES);
	t->at[0] = 0;
	for (size_t k = 0; k < t->frames; k++)
		t->at[k + 1] = fr[k].end;
}

/* A sealed trace: DATA_FRAMES data frames of calls; `lossy`: records
 * counted lost in the first. */
static struct trace write_sealed(const char *name, bool lossy)
{
	char tmpl[600], path[600];
	struct trace t = { 0 };
	uint64_t seq = 0;

	snprintf(tmpl, sizeof(tmpl), "%s/%s", dt_test_tmpdir(), name);
	/* frames only where flushed: none on a timer */
	struct dt_writer *w =
		test_writer_as(tmpl, "test-integrity", DT_FLUSH_MS_MAX);
	struct dt_ring *r = dt_writer_attach(w, 7, "t");
	for (int f = 0; f < DATA_FRAMES; f++) {
		for (int i = 0; i < 5 + f; i++)
			test_put_call(r, ++seq, i);
		if (lossy && f == 0)
			for (int i = 0; i < 5; i++)
				dt_writer_count_lost(w, DT_LOSS_NOBUF);
		CHECK_EQ_U(dt_writer_flush(w, 5000), 0);
	}
	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);
	t.p = test_slurp(path, &t.n);
	CHECK(t.p != NULL);
	if (!t.p)
		exit(1);
	find_frames(&t);
	return t;
}

/* ------------------------------------------------------------ mutants */

struct mutant {
	uint8_t *p;
	size_t n;
};

/* t with frame k removed, or written twice. */
static struct mutant frame_removed(const struct trace *t, size_t k)
{
	struct mutant m = { malloc(t->n), 0 };

	memcpy(m.p, t->p, t->at[k]);
	memcpy(m.p + t->at[k], t->p + t->at[k + 1], t->n - t->at[k + 1]);
	m.n = t->n - (t->at[k + 1] - t->at[k]);
	return m;
}

static struct mutant frame_repeated(const struct trace *t, size_t k)
{
	size_t len = t->at[k + 1] - t->at[k];
	struct mutant m = { malloc(t->n + len), t->n + len };

	memcpy(m.p, t->p, t->at[k + 1]);
	memcpy(m.p + t->at[k + 1], t->p + t->at[k], t->n - t->at[k]);
	return m;
}

static struct mutant joined(const struct trace *a, const struct trace *b)
{
	struct mutant m = { malloc(a->n + b->n), a->n + b->n };

	memcpy(m.p, a->p, a->n);
	memcpy(m.p + a->n, b->p, b->n);
	return m;
}

/* The frame before the seek table: END's. */
static size_t end_frame(const struct trace *t)
{
	return t->frames - 2;
}

/* t with END's record and its frame's seal changed by `edit`, the seal's
 * checksum made to match again when the trace is sealed (the seal is then
 * zeros when edit sees it otherwise): END lying, not damaged. */
static struct mutant end_lying(const struct trace *t,
			       void (*edit)(struct dt_rec_end *,
					    struct dt_rec_frame *))
{
	struct mutant m = { malloc(t->n), t->n };
	size_t at = t->at[end_frame(t)] + 8, len = t->at[end_frame(t) + 1] - at;
	size_t pos = 0, end = len, seal = len;
	struct dt_rec_end e = { 0 };
	struct dt_rec_frame f = { 0 };
	struct dt_rec_hdr h;

	memcpy(m.p, t->p, t->n);
	for (; pos < len; pos += h.size) {
		memcpy(&h, m.p + at + pos, sizeof(h));
		if (h.type == DT_REC_END)
			memcpy(&e, m.p + at + (end = pos), sizeof(e));
		else if (h.type == DT_REC_FRAME)
			memcpy(&f, m.p + at + (seal = pos), sizeof(f));
	}
	CHECK(end < len);
	edit(&e, &f);
	memcpy(m.p + at + end, &e, sizeof(e));
	if (seal < len) {
		memcpy(m.p + at + seal, &f, sizeof(f));
		f.hash = XXH64(m.p + at,
			       seal + offsetof(struct dt_rec_frame, hash), 0);
		memcpy(m.p + at + seal, &f, sizeof(f));
	}
	return m;
}

static void records_huge(struct dt_rec_end *e, struct dt_rec_frame *f)
{
	(void)f;
	e->records = 1ull << 62;
}

static void calls_more(struct dt_rec_end *e, struct dt_rec_frame *f)
{
	(void)f;
	e->calls++;
}

static void nothing_lost(struct dt_rec_end *e, struct dt_rec_frame *f)
{
	(void)f;
	e->lost = 0;
}

/* END's frame placed one further: as many frames as that are missing */
static void frame_after(struct dt_rec_end *e, struct dt_rec_frame *f)
{
	(void)e;
	f->seq++;
}

/* ------------------------------------------------------------ verdicts */

static const char *out_dir;
static bool keep = true; /* expect() writes into out_dir */

static const char *end_key(enum dt_file_end end)
{
	static const char *const keys[] = {
		[DT_FILE_CLEAN] = "clean",
		[DT_FILE_NO_END] = "no_end",
		[DT_FILE_TRUNCATED] = "truncated",
		[DT_FILE_CORRUPT] = "corrupt",
		[DT_FILE_DAMAGED] = "damaged",
	};
	return keys[end];
}

/* Read m, check it ended `want` (complete only when clean), and keep it in
 * the corpus when asked. */
static struct verdict expect(const char *name, const struct mutant *m,
			     enum dt_file_end want)
{
	struct verdict v = read_mem(m->p, m->n);

	if (!v.opened || v.end != want || v.complete != (want == DT_FILE_CLEAN))
		fprintf(stderr, "%s: ended %s%s, want %s (%s)\n", name,
			v.opened ? end_key(v.end) : "unopened",
			v.complete ? ", complete" : "", end_key(want),
			v.st.error),
			dt_test_failures++;
	if (out_dir && keep) {
		char path[700];
		snprintf(path, sizeof(path), "%s/integrity-%s.%s.dnnt", out_dir,
			 name, end_key(want));
		CHECK(test_write_file(path, m->p, m->n));
	}
	return v;
}

static uint64_t calls_of(const struct trace *t)
{
	struct mutant m = { t->p, t->n };
	return read_mem(m.p, m.n).st.calls;
}

/* The same mutants, sealed or not: a frame removed, copied, a file joined
 * to itself, END lying. `tag` names the trace in the corpus. */
static void common_mutants(const struct trace *t, const char *tag)
{
	char name[64];
	uint64_t calls = calls_of(t);
	struct mutant m;
	struct verdict v;

	snprintf(name, sizeof(name), "%s-frame-removed", tag);
	m = frame_removed(t, 2);
	v = expect(name, &m, DT_FILE_DAMAGED);
	CHECK(v.st.calls < calls);
	free(m.p);

	snprintf(name, sizeof(name), "%s-frame-repeated", tag);
	m = frame_repeated(t, 1);
	v = expect(name, &m, DT_FILE_DAMAGED);
	if (v.st.sealed)
		CHECK_EQ_U(v.st.calls, calls); /* the copy is not read */
	free(m.p);

	snprintf(name, sizeof(name), "%s-joined", tag);
	m = joined(t, t);
	v = expect(name, &m, DT_FILE_DAMAGED);
	CHECK_EQ_U(v.st.calls, calls);
	CHECK_EQ_U(v.st.joined_at, t->n);
	free(m.p);

	/* END lying: a sealed trace's mutants are enough for the corpus */
	keep = !strcmp(tag, "sealed");
	snprintf(name, sizeof(name), "%s-end-records", tag);
	m = end_lying(t, records_huge);
	expect(name, &m, DT_FILE_DAMAGED);
	free(m.p);

	snprintf(name, sizeof(name), "%s-end-calls", tag);
	m = end_lying(t, calls_more);
	expect(name, &m, DT_FILE_DAMAGED);
	free(m.p);
	keep = true;
}

/* Every bit of frame k flipped, one at a time: none reads as complete. */
static void flips(const struct trace *t, size_t k, const char *name)
{
	struct mutant m = { malloc(t->n), t->n };
	unsigned complete = 0, tried = 0;

	for (size_t i = t->at[k]; i < t->at[k + 1]; i++)
		for (int b = 0; b < 8; b++) {
			memcpy(m.p, t->p, t->n);
			m.p[i] ^= (uint8_t)(1u << b);
			struct verdict v = read_mem(m.p, m.n);
			complete += v.opened && v.complete;
			if (v.opened && v.complete)
				fprintf(stderr, "%s: byte %zu bit %d\n", name,
					i - t->at[k], b);
			tried++;
		}
	if (complete)
		fprintf(stderr, "%s: %u of %u bit flips read as complete\n",
			name, complete, tried),
			dt_test_failures++;
	if (out_dir) {
		memcpy(m.p, t->p, t->n);
		m.p[(t->at[k] + t->at[k + 1]) / 2] ^= 0x10;
		expect(name, &m, DT_FILE_DAMAGED);
	}
	free(m.p);
}

/* A sound trace the analyzer must read whatever the names and statuses:
 * APIs named shorter than "cudnn" that take a handle (so that they make
 * operations), calls returning statuses cuDNN never named. */
static void odd_but_sound(void)
{
	static const char *const names[] = { "cu", "X", "cudn" };
	static const char *const sigs[] = { "handle:p,n:i4", "handle:p",
					    "handle:p,x:p" };
	char tmpl[600], path[600];
	struct dt_writer_config cfg = {
		.path_template = tmpl,
		.host = "host",
		.cmdline = "test-integrity",
		.api_names = names,
		.api_sigs = sigs,
		.api_count = 3,
	};
	static const int32_t status[] = { 0, 9999, -1, 2000000000 };

	snprintf(tmpl, sizeof(tmpl), "%s/odd-%%p.dnnt", dt_test_tmpdir());
	struct dt_writer *w = dt_writer_open(&cfg);
	CHECK(w != NULL);
	if (!w)
		return;
	struct dt_ring *r = dt_writer_attach(w, 9, "t");
	for (uint64_t seq = 1; seq <= 12; seq++) {
		struct dt_rec_api_call c = { .api = (uint16_t)(seq % 3),
					     .tid = 9,
					     .seq = seq,
					     .t_begin = seq * 100,
					     .t_end = seq * 100 + 50,
					     .status = status[seq % 4],
					     .len = 16 };
		uint8_t args[16] = { 0x10, 0x20 };
		test_put(r, DT_REC_API_CALL, &c, sizeof(c), args, 16);
	}
	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);

	struct mutant m;
	m.p = test_slurp(path, &m.n);
	CHECK(m.p != NULL);
	if (!m.p)
		return;
	struct verdict v = expect("odd-names-statuses", &m, DT_FILE_CLEAN);
	CHECK_EQ_U(v.st.calls, 12);
	free(m.p);
}

/* --check: each file ends as its name (integrity-<case>.<end>.dnnt) says. */
static int check_files(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *base = strrchr(argv[i], '/');
		char want[32] = "";
		struct mutant m;

		base = base ? base + 1 : argv[i];
		const char *dot = strchr(base, '.');
		if (dot)
			sscanf(dot + 1, "%31[a-z_]", want);
		m.p = test_slurp(argv[i], &m.n);
		CHECK(m.p != NULL);
		if (!m.p)
			continue;
		struct verdict v = read_mem(m.p, m.n);
		const char *got = v.opened ? end_key(v.end) : "unopened";
		if (strcmp(got, want) || v.complete != !strcmp(want, "clean"))
			fprintf(stderr, "%s: ended %s%s, its name says %s\n",
				argv[i], got, v.complete ? ", complete" : "",
				want),
				dt_test_failures++;
		free(m.p);
	}
	TEST_DONE();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--check"))
		return check_files(argc - 2, argv + 2);
	if (argc < 2) {
		fprintf(stderr, "usage: %s OLD_TRACE [--write DIR]\n", argv[0]);
		return 2;
	}
	if (argc > 3 && !strcmp(argv[2], "--write"))
		out_dir = argv[3];

	struct trace sealed = write_sealed("sealed-%p.dnnt", false);
	struct mutant m = { sealed.p, sealed.n };
	CHECK_EQ_U(sealed.frames, DATA_FRAMES + 3);
	struct verdict v = read_mem(m.p, m.n);
	CHECK(v.st.sealed);
	CHECK(v.complete);
	common_mutants(&sealed, "sealed");
	flips(&sealed, 0, "sealed-header-flip");
	flips(&sealed, end_frame(&sealed), "sealed-end-flip");

	/* END's frame saying a frame before it is missing */
	m = end_lying(&sealed, frame_after);
	v = expect("sealed-end-place", &m, DT_FILE_DAMAGED);
	CHECK_EQ_U(v.st.frames_missing, 1);
	free(m.p);

	/* END saying nothing was lost, its LOSS records saying 5 were */
	struct trace lossy = write_sealed("lossy-%p.dnnt", true);
	m = end_lying(&lossy, nothing_lost);
	v = expect("sealed-end-lost", &m, DT_FILE_DAMAGED);
	CHECK_EQ_U(v.st.lost, 5);
	CHECK(!v.st.lost_exact);
	free(m.p);

	/* the older format: END's counts and the file's shape still tell */
	struct trace old = { 0 };
	old.p = test_slurp(argv[1], &old.n);
	CHECK(old.p != NULL);
	if (old.p) {
		find_frames(&old);
		v = read_mem(old.p, old.n);
		CHECK(!v.st.sealed);
		CHECK(v.complete);
		common_mutants(&old, "unsealed");
	}

	odd_but_sound();
	free(sealed.p);
	free(lossy.p);
	free(old.p);
	TEST_DONE();
}
