/*
 * fuzz-reader.c - libFuzzer target for the trace reader, the argument
 * decoder, the model behind `dnntrace ops` and the fusion analysis (with
 * the op pointers it asks for): any input must be read
 * without crashing, leaking or reading out of bounds, in bounded time. Built as
 * a fuzzer with clang (-Dfuzz=enabled); otherwise fuzz-main.c runs the seed
 * corpus through it as an ordinary test.
 */
#include <stddef.h>
#include <stdint.h>

#include "dt-analyzer.h"
#include "dt-fusion.h"
#include "dt-trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_reader *r = dt_reader_open_mem(data, size, NULL, NULL, 0);
	const struct dt_rec_hdr *h;
	char buf[256];

	if (!r)
		return 0;
	const struct dt_file_info *fi = dt_reader_info(r);
	struct dt_model *m = dt_model_new(fi);
	struct dt_fusion *fz = dt_fusion_new();
	struct dt_op op;
	if (fz)
		dt_fusion_begin_file(fz);
	dt_model_set_pointers(m, true);
	while (dt_reader_next(r, &h) == 1) {
		const struct dt_rec_api_call *c = (const void *)h;
		struct dt_args_iter it;
		struct dt_arg a;
		uint32_t len;
		const uint8_t *t = dt_rec_tail(h, &len);

		dt_model_feed(m, h);
		if (fz)
			dt_fusion_feed(fz, h, dt_model_kernel(m));
		while (dt_model_next_op(m, &op))
			if (fz)
				dt_fusion_op(fz, &op);
		if (h->type != DT_REC_API_CALL || c->api >= fi->n_apis)
			continue;
		dt_args_begin(&it, fi->apis[c->api].sig, t, len);
		while (dt_args_next(&it, &a) == 1)
			dt_arg_format(&a, buf, sizeof(buf));
		dt_call_format(fi->apis[c->api].name, fi->apis[c->api].sig, t,
			       len, buf, sizeof(buf));
	}
	dt_model_finish(m);
	while (dt_model_next_op(m, &op))
		if (fz)
			dt_fusion_op(fz, &op);
	if (fz) {
		dt_fusion_end_file(fz);
		dt_fusion_finish(fz);
		dt_fusion_free(fz);
	}
	dt_model_free(m);
	dt_reader_stats(r);
	dt_reader_close(r);
	return 0;
}
