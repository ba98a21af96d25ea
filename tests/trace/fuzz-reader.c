/*
 * fuzz-reader.c - libFuzzer target for the trace reader and everything the
 * commands drive through a session: the model, the argument decoder (as
 * `dump` and `ops --call` print calls), the ops' tensors and pointers (as
 * `ops --format json` prints them), the summary behind `report` and
 * `diff` with the fusion analysis. Any input must be read without
 * crashing, leaking or reading out of bounds, in bounded time. Built as a
 * fuzzer with clang (-Dfuzz=enabled); otherwise fuzz-main.c runs the seed
 * corpus through it as an ordinary test.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dt-analyzer.h"
#include "dt-trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_call(void *arg, const struct dt_call *c)
{
	char buf[256];
	struct dt_args_iter it;
	struct dt_arg a;

	(void)arg;
	if (!c->name)
		return;
	dt_args_begin(&it, c->sig, c->args, c->args_len);
	while (dt_args_next(&it, &a) == 1)
		dt_arg_format(&a, buf, sizeof(buf));
	dt_call_format(c->name, c->sig, c->args, c->args_len, buf, sizeof(buf));
}

static void on_op(void *arg, const struct dt_op *op)
{
	uint64_t *sum = arg;
	char buf[64];

	for (uint32_t i = 0; i < op->n_tensors; i++) {
		*sum += dt_op_tensor_ptr(op, i);
		dt_enum_short("cudnnDataType_t", op->tensors[i].t.dtype,
			      "CUDNN_DATA_", buf, sizeof(buf));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_session_opts o = { .pointers = true };
	struct dt_session *ss =
		dt_session_open_mem(data, size, &o, NULL, NULL, 0);
	struct dt_summary_opts so = { .fusion = true };
	struct dt_summary *s = dt_summary_new(&so);
	char err[256];
	uint64_t sum = 0;

	if (!ss || !s) {
		dt_session_close(ss);
		dt_summary_free(s);
		return 0;
	}
	struct dt_consumer c = { .arg = &sum, .call = on_call, .op = on_op };
	dt_session_add(ss, &c);
	dt_summary_read(s, ss, err, sizeof(err));
	dt_summary_finish(s);
	struct dt_diff *d = dt_diff_new(s, s, NULL);
	dt_diff_free(d);
	dt_summary_free(s);
	dt_session_close(ss);
	return 0;
}
