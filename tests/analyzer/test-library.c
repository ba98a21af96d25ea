/*
 * test-library.c - calls of a library the analyzer has no decoder for
 * ("dtt") are still calls: counted, timed, and an op of their library
 * once they launch work, with their kernels; never described as another
 * library's, never dropped. A cuDNN call in the same trace stays cuDNN's.
 *
 * The trace's API table names each function's library (dt_api_def.library);
 * the writer names "cudnn" for all until the format carries libraries, so
 * the test names dtt's after opening, where the reader would. The summary
 * counts the calls and the GPU work inside them by library: cuDNN's only
 * what cuDNN's calls launched.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "dt-analyzer.h"
#include "trace-test-util.h"

static const char *const names[] = { "dttGemm", "cudnnBackendExecute" };
static const char *const sigs[] = { "handle:p,a:p",
				    "handle:p,executionPlan:p,variantPack:p" };

static void put_call(struct dt_ring *r, uint16_t api, uint64_t seq)
{
	struct dt_rec_api_call c = { .api = api,
				     .tid = r->tid,
				     .seq = seq,
				     .t_begin = seq * 1000,
				     .t_end = seq * 1000 + 500,
				     .len = api ? 24 : 16 };
	uint64_t args[3] = { 0x10, 0x20 + seq, 0x30 };

	CHECK(test_put(r, DT_REC_API_CALL, &c, sizeof(c), args, c.len));
}

static void put_kernel(struct dt_ring *r, uint64_t call, uint32_t corr,
		       uint64_t start, uint64_t end, const char *name)
{
	struct dt_rec_corr c = { .call = call, .corr = corr };
	struct dt_rec_kernel k = { .start = start,
				   .end = end,
				   .corr = corr,
				   .len = (uint32_t)strlen(name) };

	CHECK(test_put(r, DT_REC_CORR, &c, sizeof(c), NULL, 0));
	CHECK(test_put(r, DT_REC_KERNEL, &k, sizeof(k), name, k.len));
}

struct seen {
	char call_library[3][8];
	int n_calls;
	char kernel_library[2][8];
	int n_kernels;
	int n;
	uint64_t seq[4], kernels[4], gpu[4];
	char library[4][8], desc[4][8];
};

static void on_op(void *arg, const struct dt_op *op)
{
	struct seen *s = arg;

	if (s->n == 4)
		return;
	s->seq[s->n] = op->seq;
	s->kernels[s->n] = op->kernels;
	s->gpu[s->n] = op->gpu_ns;
	snprintf(s->library[s->n], sizeof(s->library[0]), "%s",
		 op->library ? op->library : "");
	snprintf(s->desc[s->n], sizeof(s->desc[0]), "%s",
		 op->desc ? op->desc : "");
	s->n++;
}

static void on_call(void *arg, const struct dt_call *c)
{
	struct seen *s = arg;

	if (s->n_calls < 3)
		snprintf(s->call_library[s->n_calls++],
			 sizeof(s->call_library[0]), "%s",
			 c->library ? c->library : "");
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct seen *s = arg;

	if (s->n_kernels < 2)
		snprintf(s->kernel_library[s->n_kernels++],
			 sizeof(s->kernel_library[0]), "%s",
			 a->library ? a->library : "");
}

/* The trace at path, opened with dtt's function named as dtt's. */
static struct dt_session *open_dtt(const char *path)
{
	struct dt_session *ss = dt_session_open(path, NULL, NULL, NULL, 0);
	const struct dt_file_info *fi = ss ? dt_session_info(ss) : NULL;

	CHECK(fi && fi->n_apis == 2);
	if (!fi || fi->n_apis != 2) {
		dt_session_close(ss);
		return NULL;
	}
	((struct dt_api_def *)fi->apis)[0].library = "dtt";
	return ss;
}

static const struct dt_sum_lib *lib_of(const struct dt_summary *s,
				       const char *name)
{
	for (size_t i = 0; i < s->n_libs; i++)
		if (!strcmp(s->libs[i].library, name))
			return &s->libs[i];
	return NULL;
}

/* The summary's count by library. */
static void check_summary(const char *path)
{
	struct dt_summary_opts so = { 0 };
	struct dt_summary *s = dt_summary_new(&so);
	struct dt_session *ss = open_dtt(path);
	char err[256];

	CHECK(s && ss);
	if (!s || !ss)
		return;
	CHECK(dt_summary_read(s, ss, err, sizeof(err)) == 0);
	dt_session_close(ss);
	dt_summary_finish(s);
	const struct dt_sum_lib *dtt = lib_of(s, "dtt");
	const struct dt_sum_lib *cudnn = lib_of(s, "cudnn");
	CHECK_EQ_U(s->n_libs, 2);
	CHECK(dtt && cudnn);
	if (dtt && cudnn) {
		CHECK_EQ_U(dtt->calls, 2);
		CHECK_EQ_U(dtt->ops, 1);
		CHECK_EQ_U(dtt->gpu_ns, 2000);
		CHECK_EQ_U(dtt->work, 1);
		CHECK_EQ_U(cudnn->calls, 1);
		CHECK_EQ_U(cudnn->ops, 1);
		CHECK_EQ_U(cudnn->gpu_ns, 500);
	}
	/* GPU time "in cuDNN operations" is cuDNN's alone */
	CHECK_EQ_U(s->cudnn_ns, 500);
	CHECK_EQ_U(dt_sum_lib_ns(s, DT_LIB_CUDNN, -1, NULL), 500);
	CHECK_EQ_U(s->calls, 3);
	/* labels name whose calls they were */
	CHECK_EQ_S(dt_sum_callers(s), "the libraries'");
	dt_summary_free(s);
}

int main(void)
{
	const char *dir = dt_test_tmpdir();
	char tmpl[512];
	snprintf(tmpl, sizeof(tmpl), "%s/library.dnnt", dir);
	struct dt_writer_config cfg = { .path_template = tmpl,
					.api_names = names,
					.api_sigs = sigs,
					.api_count = 2 };
	struct dt_writer *w = dt_writer_open(&cfg);
	CHECK(w != NULL);
	if (!w)
		TEST_DONE();
	struct dt_ring *r = dt_writer_attach(w, 7, "t");

	put_call(r, 0, 1); /* dttGemm: a kernel of 2000 ns */
	put_kernel(r, 1, 11, 1000, 3000, "dtt_gemm_kernel");
	put_call(r, 0, 2); /* dttGemm, launching nothing */
	put_call(r, 1, 3); /* cudnnBackendExecute: 500 ns */
	put_kernel(r, 3, 13, 4000, 4500, "cudnn_conv_kernel");
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);

	struct dt_session *ss = open_dtt(tmpl);
	if (!ss)
		TEST_DONE();

	struct seen seen = { 0 };
	struct dt_consumer c = { .arg = &seen,
				 .call = on_call,
				 .activity = on_activity,
				 .op = on_op };
	CHECK(dt_session_add(ss, &c) == 0);
	dt_session_run(ss);

	/* the dtt call that launched work is an op of dtt, with its kernel,
	 * undescribed: no decoder says what it computed */
	CHECK_EQ_U(seen.n, 2);
	CHECK_EQ_U(seen.seq[0], 1);
	CHECK_EQ_S(seen.library[0], "dtt");
	CHECK_EQ_U(seen.kernels[0], 1);
	CHECK_EQ_U(seen.gpu[0], 2000);
	CHECK_EQ_S(seen.desc[0], "");
	/* the cuDNN call beside it stays cuDNN's, described by its decoder */
	CHECK_EQ_U(seen.seq[1], 3);
	CHECK_EQ_S(seen.library[1], "cudnn");
	CHECK_EQ_U(seen.kernels[1], 1);
	CHECK(seen.desc[1][0] != 0);
	/* every call counted, the one that launched nothing too */
	const struct dt_model_stats *st = dt_session_stats(ss);
	CHECK_EQ_U(st->calls, 3);
	CHECK_EQ_U(st->ops, 2);
	CHECK_EQ_U(st->other_kernels, 0);
	/* each call carries its library, each kernel its call's */
	CHECK_EQ_S(seen.call_library[0], "dtt");
	CHECK_EQ_S(seen.call_library[1], "dtt");
	CHECK_EQ_S(seen.call_library[2], "cudnn");
	CHECK_EQ_S(seen.kernel_library[0], "dtt");
	CHECK_EQ_S(seen.kernel_library[1], "cudnn");
	/* views name libraries from the analyzer's table, or as the trace
	 * does */
	CHECK_EQ_S(dt_library_display("cudnn"), "cuDNN");
	CHECK_EQ_S(dt_library_display("dtt"), "dtt");
	dt_session_close(ss);
	check_summary(tmpl);
	TEST_DONE();
}
