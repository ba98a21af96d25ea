/*
 * test-replay-legacy-ops.c - a legacy batch normalization made again and
 * timed, on the stand-in GPU (fake-gpu.c, which test-replay-fake.sh puts
 * where replay loads CUDA and cuDNN from): a call as the cuDNN decoder
 * keeps it (struct dt_cudnn_call), cudnnBatchNormalizationForwardTraining
 * with its two doubles (the stand-in refuses the call unless they arrive
 * as the program passed them), measured as its one candidate; a call
 * replay does not make again (local response normalization) said to be
 * so, with why; with its budget spent, the call not run and its status
 * "budget".
 *
 * Usage: test-replay-legacy-ops (LD_LIBRARY_PATH: the stand-in's)
 */
#include <stdio.h>
#include <string.h>

#include "replay-internal.h"
#include "test-util.h"

#define ARG(n) .name = n, .name_len = sizeof(n) - 1

static struct dt_tensor nchw(int64_t n, int64_t c, int64_t h, int64_t w)
{
	struct dt_tensor t = { .valid = true,
			       .dtype = DT_DTYPE_FLOAT,
			       .nb = 4,
			       .dims = { n, c, h, w },
			       .strides = { c * h * w, h * w, w, 1 } };
	return t;
}

int main(void)
{
	struct dt_tensor x = nchw(8, 16, 4, 4), p = nchw(1, 16, 1, 1);
	float one = 1, zero = 0;
	struct dt_cudnn_arg args[] = {
		{ ARG("mode"), .code = 'e', .i = 1 },
		{ ARG("alpha"), .code = 'k', .width = 4 },
		{ ARG("beta"), .code = 'k', .width = 4 },
		{ ARG("xDesc"), .code = 'p', .t = &x, .kind = "Tensor",
		  .kind_len = 6 },
		{ ARG("yDesc"), .code = 'p', .t = &x, .kind = "Tensor",
		  .kind_len = 6 },
		{ ARG("bnScaleBiasMeanVarDesc"), .code = 'p', .t = &p,
		  .kind = "Tensor", .kind_len = 6 },
		{ ARG("exponentialAverageFactor"), .code = 'f', .f = 0.1 },
		{ ARG("epsilon"), .code = 'f', .f = 1e-5 },
	};
	memcpy(args[1].host, &one, 4);
	memcpy(args[2].host, &zero, 4);
	struct dt_cudnn_call call = { "cudnnBatchNormalizationForwardTraining",
				      args, sizeof(args) / sizeof(args[0]) };
	struct problem pr = { .key = "bn",
			      .engine = -1,
			      .legacy = true,
			      .call = &call };
	struct dt_replay_opts opts = { .budget_s = 5, .quiet = true };
	struct cand c[CANDS_MAX];
	struct gpu g;
	size_t n = 0;
	char why[256] = "";

	CHECK(legacy_why_not(&call) == NULL);
	struct dt_cudnn_call lrn = call;
	lrn.api = "cudnnLRNCrossChannelForward";
	CHECK(legacy_why_not(&lrn) != NULL);
	if (gpu_open(&g, why, sizeof(why))) {
		printf("no stand-in GPU: %s\n", why);
		return 1;
	}
	struct budget b = { .until = dt_replay_now_s() + 5 };
	CHECK_EQ_U(legacy_measure(&g, &pr, &opts, &b, c, &n, why, sizeof(why)),
		   0);
	printf("%zu candidate(s): %s, %llu ns %s\n", n, n ? c[0].status : "-",
	       n ? (unsigned long long)c[0].t.median_ns : 0ull, why);
	CHECK_EQ_U(n, 1);
	CHECK_EQ_S(c[0].status, "ok");
	CHECK_EQ_U(c[0].t.median_ns, 10000);
	CHECK_EQ_U(results_best(c, n), 0);
	/* its budget spent: said, not run */
	b.until = dt_replay_now_s();
	CHECK_EQ_U(legacy_measure(&g, &pr, &opts, &b, c, &n, why, sizeof(why)),
		   0);
	CHECK_EQ_U(n, 1);
	CHECK_EQ_S(c[0].status, "budget");
	CHECK_EQ_U(c[0].t.runs, 0);
	CHECK(budget_cut(&b, c, n));
	gpu_close(&g);
	return dt_test_failures ? 1 : 0;
}
