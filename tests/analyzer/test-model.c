/*
 * test-model.c - the model on synthetic traces, for the paths that need a
 * GPU: kernels tied to their call through CORR records, also when CUPTI
 * delivers them before the call's own record (a long call is recorded when
 * it returns); kernels of no call; ops handed out in call order; threads
 * and losses handed out as events of their own.
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

/* What the session handed out. */
struct seen {
	uint64_t events, events_at_first_op;
	int n;
	uint64_t seqs[4], kernels[4], gpu[4];
	char first[4][8];
	int n_kernels;
	uint64_t calls_of_kernels[8];
	char thread[16];
	uint32_t thread_tid, loss_tid, loss_reason;
	uint64_t lost, loss_t;
	int copy_kind; /* of the copy, -1 none */
};

static void on_call(void *arg, const struct dt_call *c)
{
	(void)c;
	((struct seen *)arg)->events++;
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct seen *s = arg;

	s->events++;
	if (a->kind == DT_ACT_MEMCPY)
		s->copy_kind = a->copy_kind;
	if (s->n_kernels < 8)
		s->calls_of_kernels[s->n_kernels++] = a->call;
}

static void on_record(void *arg, const struct dt_rec_hdr *h)
{
	(void)h;
	((struct seen *)arg)->events++;
}

static void on_thread(void *arg, const struct dt_thread *t)
{
	struct seen *s = arg;

	snprintf(s->thread, sizeof(s->thread), "%.*s", (int)t->name_len,
		 t->name);
	s->thread_tid = t->tid;
}

static void on_loss(void *arg, const struct dt_loss *l)
{
	struct seen *s = arg;

	s->lost += l->count;
	s->loss_t = l->t;
	s->loss_tid = l->tid;
	s->loss_reason = l->reason;
}

static void on_op(void *arg, const struct dt_op *op)
{
	struct seen *s = arg;

	if (!s->n)
		s->events_at_first_op = s->events;
	if (s->n == 4)
		return;
	s->seqs[s->n] = op->seq;
	s->kernels[s->n] = op->kernels;
	s->gpu[s->n] = op->gpu_ns;
	snprintf(s->first[s->n], sizeof(s->first[0]), "%s",
		 op->first_kernel ? op->first_kernel : "");
	s->n++;
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
	/* a copy device to host, launched outside cuDNN */
	struct dt_rec_memcpy cp = { .start = 6200, .end = 6300, .bytes = 64,
				    .corr = 100, .copy_kind = 2 };
	CHECK(test_put(r, DT_REC_MEMCPY, &cp, sizeof(cp), NULL, 0));
	struct dt_rec_loss loss = { .t = 7000, .count = 12, .tid = 7,
				    .reason = DT_LOSS_CUPTI };
	CHECK(test_put(r, DT_REC_LOSS, &loss, sizeof(loss), NULL, 0));
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);

	struct dt_session *ss = dt_session_open(tmpl, NULL, NULL, NULL, 0);
	CHECK(ss != NULL);
	if (!ss)
		TEST_DONE();
	struct seen seen = { .copy_kind = -1 };
	struct dt_consumer c = { .arg = &seen,
				 .call = on_call,
				 .activity = on_activity,
				 .record = on_record,
				 .thread = on_thread,
				 .loss = on_loss,
				 .op = on_op };
	CHECK(dt_session_add(ss, &c) == 0);
	dt_session_run(ss);
	/* nothing was ready before the end: the trace is short */
	CHECK_EQ_U(seen.events_at_first_op, seen.events);
	CHECK_EQ_U(seen.n, 2);
	CHECK_EQ_U(seen.seqs[0], 5);
	CHECK_EQ_U(seen.kernels[0], 2);
	CHECK_EQ_U(seen.gpu[0], 3000);
	CHECK_EQ_S(seen.first[0], "k1");
	CHECK_EQ_U(seen.seqs[1], 6);
	CHECK_EQ_U(seen.kernels[1], 1);
	CHECK_EQ_U(seen.gpu[1], 500);
	/* the kernels, on the host clock, with their calls */
	CHECK_EQ_U(seen.calls_of_kernels[0], 5);
	CHECK_EQ_U(seen.calls_of_kernels[2], 6);
	CHECK_EQ_U(seen.calls_of_kernels[3], 0);
	/* a copy's direction, from its record */
	CHECK_EQ_U(seen.copy_kind, 2);
	/* the ring's thread by its name, the loss as recorded */
	CHECK_EQ_S(seen.thread, "t");
	CHECK_EQ_U(seen.thread_tid, 7);
	CHECK_EQ_U(seen.lost, 12);
	CHECK_EQ_U(seen.loss_t, 7000);
	CHECK_EQ_U(seen.loss_tid, 7);
	CHECK_EQ_U(seen.loss_reason, DT_LOSS_CUPTI);
	const struct dt_model_stats *st = dt_session_stats(ss);
	CHECK_EQ_U(st->ops, 2);
	CHECK_EQ_U(st->calls, 2);
	CHECK_EQ_U(st->kernels, 4);
	CHECK_EQ_U(st->launches, 2);
	CHECK_EQ_U(st->other_kernels, 2); /* the kernel and the copy */
	CHECK_EQ_U(st->late_kernels, 0);
	dt_session_close(ss);
	TEST_DONE();
}
