/*
 * test-model.c - the model on synthetic traces, for the paths that need a
 * GPU: kernels tied to their call through CORR records, also when CUPTI
 * delivers them before the call's own record (a long call is recorded when
 * it returns); kernels of no call; ops handed out in call order.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "dt-analyzer.h"
#include "trace-test-util.h"

static const char *const names[] = { "cudnnBackendExecute" };
static const char *const sigs[] = { "handle:p,executionPlan:p,variantPack:p" };

static void put_execute(struct dt_ring *r, uint64_t seq)
{
	struct dt_rec_api_call c = { .api = 0,
				     .tid = r->tid,
				     .seq = seq,
				     .t_begin = seq * 1000,
				     .t_end = seq * 1000 + 500,
				     .len = 24 };
	uint64_t args[3] = { 0x10, 0x20 + seq, 0x30 };

	CHECK(test_put(r, DT_REC_API_CALL, &c, sizeof(c), args, sizeof(args)));
}

static void put_corr(struct dt_ring *r, uint64_t call, uint32_t corr)
{
	struct dt_rec_corr c = { .call = call, .corr = corr };
	CHECK(test_put(r, DT_REC_CORR, &c, sizeof(c), NULL, 0));
}

static void put_kernel(struct dt_ring *r, uint32_t corr, uint64_t start,
		       uint64_t end, const char *name)
{
	struct dt_rec_kernel k = { .start = start,
				   .end = end,
				   .corr = corr,
				   .len = (uint32_t)strlen(name) };
	CHECK(test_put(r, DT_REC_KERNEL, &k, sizeof(k), name, k.len));
}

int main(void)
{
	const char *dir = dt_test_tmpdir();
	char tmpl[512];
	snprintf(tmpl, sizeof(tmpl), "%s/model.dnnt", dir);
	struct dt_writer_config cfg = { .path_template = tmpl,
					.api_names = names,
					.api_sigs = sigs,
					.api_count = 1 };
	struct dt_writer *w = dt_writer_open(&cfg);
	CHECK(w != NULL);
	if (!w)
		TEST_DONE();
	struct dt_ring *r = dt_writer_attach(w, 7, "t");

	/* call 5's launches and kernels come before its record */
	put_corr(r, 5, 77);
	put_kernel(r, 77, 1000, 3000, "k1");
	put_kernel(r, 77, 3000, 4000, "k2");
	put_execute(r, 5);
	/* call 6: the usual order */
	put_execute(r, 6);
	put_corr(r, 6, 78);
	put_kernel(r, 78, 5000, 5500, "k3");
	/* a kernel launched outside any cuDNN call */
	put_kernel(r, 99, 6000, 6100, "other");
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);

	struct dt_reader *rd = dt_reader_open(tmpl, NULL, NULL, 0);
	CHECK(rd != NULL);
	if (!rd)
		TEST_DONE();
	struct dt_model *m = dt_model_new(dt_reader_info(rd));
	const struct dt_rec_hdr *h;
	struct dt_op op;
	uint64_t seqs[4], kernels[4], gpu[4];
	char first[4][8];
	int n = 0;

	while (dt_reader_next(rd, &h) == 1) {
		dt_model_feed(m, h);
		while (n < 4 && dt_model_next_op(m, &op))
			n++; /* nothing is ready before the end: the trace is
				short */
	}
	CHECK_EQ_U(n, 0);
	dt_model_finish(m);
	while (n < 4 && dt_model_next_op(m, &op)) {
		seqs[n] = op.seq;
		kernels[n] = op.kernels;
		gpu[n] = op.gpu_ns;
		snprintf(first[n], sizeof(first[n]), "%s",
			 op.first_kernel ? op.first_kernel : "");
		n++;
	}
	CHECK_EQ_U(n, 2);
	CHECK_EQ_U(seqs[0], 5);
	CHECK_EQ_U(kernels[0], 2);
	CHECK_EQ_U(gpu[0], 3000);
	CHECK_EQ_S(first[0], "k1");
	CHECK_EQ_U(seqs[1], 6);
	CHECK_EQ_U(kernels[1], 1);
	CHECK_EQ_U(gpu[1], 500);
	const struct dt_model_stats *st = dt_model_stats(m);
	CHECK_EQ_U(st->ops, 2);
	CHECK_EQ_U(st->other_kernels, 1);
	CHECK_EQ_U(st->late_kernels, 0);
	dt_model_free(m);
	dt_reader_close(rd);
	TEST_DONE();
}
