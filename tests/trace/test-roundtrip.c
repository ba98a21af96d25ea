/*
 * test-roundtrip.c - every record type written through the writer comes
 * back from the reader with the same fields and tail; the header carries
 * the identity and API table; the end summary counts what was lost.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "trace-test-util.h"

int main(void)
{
	const char *dir = dt_test_tmpdir();
	struct dt_writer *w = test_writer(dir, "rt-%p.dnnt", 0);
	struct dt_ring *r = dt_writer_attach(w, 4242, "worker");
	char path[512];

	snprintf(path, sizeof(path), "%s", dt_writer_path(w));
	CHECK(r != NULL);

	/* one of each type, by hand */
	CHECK(test_put_call(r, 1, 7));
	struct dt_rec_string s = { .id = 3, .len = 5 };
	CHECK(test_put(r, DT_REC_STRING, &s, sizeof(s), "hello", 5));
	struct dt_rec_process p = { .t = 11,
				    .pid = 12,
				    .ppid = 13,
				    .event = DT_PROC_FORK,
				    .len = 6 };
	CHECK(test_put(r, DT_REC_PROCESS, &p, sizeof(p), "a\0b\0c", 6));
	struct dt_rec_clock c = { .mono = 21,
				  .other = 22,
				  .clock = DT_CLOCK_REALTIME };
	CHECK(test_put(r, DT_REC_CLOCK, &c, sizeof(c), NULL, 0));
	struct dt_rec_info in = { .key_len = 1, .len = 3 };
	CHECK(test_put(r, DT_REC_INFO, &in, sizeof(in), "kvv", 3));
	struct dt_rec_apidef ad = { .api = 9,
				    .flags = 1,
				    .name_len = 1,
				    .len = 4 };
	CHECK(test_put(r, DT_REC_APIDEF, &ad, sizeof(ad), "fsig", 4));
	struct dt_rec_library lib = { .first_api = 7,
				      .n_apis = 3,
				      .name_len = 3,
				      .len = 6 };
	CHECK(test_put(r, DT_REC_LIBRARY, &lib, sizeof(lib), "dttDTT", 6));
	struct dt_rec_kernel k = { .start = 100,
				   .end = 250,
				   .corr = 77,
				   .grid_x = 4,
				   .block_x = 128,
				   .len = 6 };
	CHECK(test_put(r, DT_REC_KERNEL, &k, sizeof(k), "kernel", 6));
	struct dt_rec_memcpy mc = { .start = 1,
				    .end = 2,
				    .bytes = 4096,
				    .copy_kind = 1 };
	CHECK(test_put(r, DT_REC_MEMCPY, &mc, sizeof(mc), NULL, 0));
	struct dt_rec_memset ms = { .start = 3, .end = 4, .bytes = 512 };
	CHECK(test_put(r, DT_REC_MEMSET, &ms, sizeof(ms), NULL, 0));
	struct dt_rec_corr co = { .call = 1, .corr = 77 };
	CHECK(test_put(r, DT_REC_CORR, &co, sizeof(co), NULL, 0));
	struct dt_rec_device dv = { .mem_bandwidth = 4800000000ull,
				    .sms = 132,
				    .cc_major = 9,
				    .len = 4 };
	CHECK(test_put(r, DT_REC_DEVICE, &dv, sizeof(dv), "H200", 4));
	struct dt_rec_gpu_state gs = { .state = DT_GPU_TAKEN,
				       .code = 39,
				       .len = 3 };
	CHECK(test_put(r, DT_REC_GPU_STATE, &gs, sizeof(gs), "why", 3));
	struct dt_rec_graph_node gn = { .call = 1,
					.node = (5ull << 32) | 2,
					.graph = 5,
					.how = DT_GRAPH_CAPTURED,
					.len = 2 };
	CHECK(test_put(r, DT_REC_GRAPH_NODE, &gn, sizeof(gn), "kk", 2));
	struct dt_rec_graph_link gl = { .from = 5,
					.to = 6,
					.how = DT_GRAPH_INSTANTIATED };
	CHECK(test_put(r, DT_REC_GRAPH_LINK, &gl, sizeof(gl), NULL, 0));
	struct dt_rec_graph_launch gla = { .start = 10, .end = 20, .corr = 88 };
	CHECK(test_put(r, DT_REC_GRAPH_LAUNCH, &gla, sizeof(gla), NULL, 0));
	struct dt_rec_gpu_metrics gm = { .interval = 100000, .metrics = 1,
					 .len = 4 };
	CHECK(test_put(r, DT_REC_GPU_METRICS, &gm, sizeof(gm), "dram", 4));
	const double sv[2] = { 1.5e9, 2.5e8 };
	struct dt_rec_gpu_sample smp = { .start = 30, .end = 40,
					.len = sizeof(sv) };
	CHECK(test_put(r, DT_REC_GPU_SAMPLE, &smp, sizeof(smp), sv, sizeof(sv)));
	uint8_t kl[2 * 8 + 9];
	uint64_t kh[2] = { dt_hash("k1", 2, 0), dt_hash("k2", 2, 0) };
	memcpy(kl, kh, sizeof(kh));
	memcpy(kl + sizeof(kh), "/lib/x.so", 9);
	struct dt_rec_kernel_lib klr = { .count = 2, .path_len = 9,
					 .len = sizeof(kl) };
	CHECK(test_put(r, DT_REC_KERNEL_LIB, &klr, sizeof(klr), kl, sizeof(kl)));
	struct dt_rec_nvtx nv = { .t = 12,
				  .range = 5,
				  .tid = 7,
				  .event = DT_NVTX_END,
				  .domain = 3 };
	CHECK(test_put(r, DT_REC_NVTX, &nv, sizeof(nv), NULL, 0));
	struct dt_rec_hdr unknown = { 0 };
	CHECK(test_put(r, 999, &unknown, sizeof(unknown), "zzzzzzzz", 8));
	/* a record larger than half the ring is refused and counted */
	static uint8_t big[1 << 20];
	struct dt_rec_string bs = { .id = 1, .len = sizeof(big) };
	CHECK(!test_put(r, DT_REC_STRING, &bs, sizeof(bs), big, sizeof(big)));
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 3);
	dt_writer_free(w);

	struct dt_reader *rd = dt_reader_open(path, NULL, NULL, 0);
	CHECK(rd != NULL);
	if (!rd)
		TEST_DONE();
	const struct dt_file_info *fi = dt_reader_info(rd);
	CHECK(!memcmp(fi->hdr.magic, "DNNTRACE", 8));
	CHECK_EQ_U(fi->hdr.major, DT_FORMAT_MAJOR);
	CHECK_EQ_U(fi->hdr.pid, getpid());
	CHECK_EQ_U(fi->hdr.ppid, getppid());
	CHECK_EQ_S(dt_info_get(fi, "test.key"), "test value");
	CHECK(dt_info_get(fi, "host") != NULL);
	CHECK(dt_info_get(fi, "cmdline") != NULL);
	CHECK_EQ_U(fi->n_apis, 2);
	CHECK_EQ_S(fi->apis[0].name, "cudnnAlpha");
	CHECK_EQ_S(fi->apis[1].sig, "data:ai4,alpha:k");
	CHECK_EQ_U(fi->apis[1].flags, DT_APIDEF_DEPRECATED);

	const struct dt_rec_hdr *h;
	int seen[DT_REC_TYPE_COUNT] = { 0 }, unknowns = 0;
	while (dt_reader_next(rd, &h) == 1) {
		uint32_t len;
		const uint8_t *t = dt_rec_tail(h, &len);

		if (h->type >= DT_REC_TYPE_COUNT) {
			CHECK_EQ_U(h->type, 999);
			unknowns++;
			continue;
		}
		seen[h->type]++;
		switch (h->type) {
		case DT_REC_API_CALL: {
			const struct dt_rec_api_call *a = (const void *)h;
			int32_t n;
			CHECK_EQ_U(a->tid, 4242);
			CHECK_EQ_U(a->seq, 1);
			CHECK_EQ_U(a->t_end, 15);
			CHECK_EQ_U(len, 12);
			memcpy(&n, t, 4);
			CHECK_EQ_U(n, 7);
			break;
		}
		case DT_REC_STRING:
			CHECK_EQ_U(((const struct dt_rec_string *)h)->id, 3);
			CHECK(len == 5 && !memcmp(t, "hello", 5));
			break;
		case DT_REC_PROCESS:
			CHECK_EQ_U(((const struct dt_rec_process *)h)->ppid,
				   13);
			CHECK_EQ_U(((const struct dt_rec_process *)h)->event,
				   DT_PROC_FORK);
			CHECK(len == 6 && !memcmp(t, "a\0b\0c", 6));
			break;
		case DT_REC_CLOCK:
			/* each frame starts with one of the writer's own */
			if (((const struct dt_rec_clock *)h)->mono == 21)
				CHECK_EQ_U(
					((const struct dt_rec_clock *)h)->other,
					22);
			break;
		case DT_REC_INFO:
			CHECK(len == 3 && !memcmp(t, "kvv", 3));
			break;
		case DT_REC_APIDEF:
			CHECK_EQ_U(((const struct dt_rec_apidef *)h)->api, 9);
			CHECK(len == 4 && !memcmp(t, "fsig", 4));
			break;
		case DT_REC_LIBRARY: {
			const struct dt_rec_library *l = (const void *)h;
			CHECK_EQ_U(l->first_api, 7);
			CHECK_EQ_U(l->n_apis, 3);
			CHECK(len == 6 && !memcmp(t, "dttDTT", 6));
			break;
		}
		case DT_REC_THREAD:
			CHECK_EQ_U(((const struct dt_rec_thread *)h)->tid,
				   4242);
			CHECK(len == 6 && !memcmp(t, "worker", 6));
			break;
		case DT_REC_KERNEL:
			CHECK_EQ_U(((const struct dt_rec_kernel *)h)->end, 250);
			CHECK_EQ_U(((const struct dt_rec_kernel *)h)->block_x,
				   128);
			CHECK(len == 6 && !memcmp(t, "kernel", 6));
			break;
		case DT_REC_MEMCPY:
			CHECK_EQ_U(((const struct dt_rec_memcpy *)h)->bytes,
				   4096);
			CHECK_EQ_U(((const struct dt_rec_memcpy *)h)->copy_kind,
				   1);
			break;
		case DT_REC_MEMSET:
			CHECK_EQ_U(((const struct dt_rec_memset *)h)->bytes,
				   512);
			break;
		case DT_REC_CORR:
			CHECK_EQ_U(((const struct dt_rec_corr *)h)->corr, 77);
			break;
		case DT_REC_DEVICE:
			CHECK_EQ_U(((const struct dt_rec_device *)h)->sms, 132);
			CHECK(len == 4 && !memcmp(t, "H200", 4));
			break;
		case DT_REC_GPU_STATE:
			CHECK_EQ_U(((const struct dt_rec_gpu_state *)h)->code,
				   39);
			CHECK(len == 3 && !memcmp(t, "why", 3));
			break;
		case DT_REC_GRAPH_NODE:
			CHECK_EQ_U(((const struct dt_rec_graph_node *)h)->node,
				   (5ull << 32) | 2);
			CHECK(len == 2 && !memcmp(t, "kk", 2));
			break;
		case DT_REC_GRAPH_LINK:
			CHECK_EQ_U(((const struct dt_rec_graph_link *)h)->to, 6);
			break;
		case DT_REC_GRAPH_LAUNCH:
			CHECK_EQ_U(((const struct dt_rec_graph_launch *)h)->corr,
				   88);
			break;
		case DT_REC_GPU_METRICS:
			CHECK_EQ_U(((const struct dt_rec_gpu_metrics *)h)->interval,
				   100000);
			CHECK(len == 4 && !memcmp(t, "dram", 4));
			break;
		case DT_REC_GPU_SAMPLE: {
			double v[2];
			CHECK(len == sizeof(v));
			memcpy(v, t, sizeof(v));
			CHECK(v[0] == 1.5e9 && v[1] == 2.5e8);
			CHECK_EQ_U(((const struct dt_rec_gpu_sample *)h)->end, 40);
			break;
		}
		case DT_REC_KERNEL_LIB: {
			uint64_t kv[2];
			CHECK(len == 25);
			memcpy(kv, t, sizeof(kv));
			CHECK(kv[1] == dt_hash("k2", 2, 0));
			CHECK(!memcmp((const char *)t + 16, "/lib/x.so", 9));
			CHECK_EQ_U(((const struct dt_rec_kernel_lib *)h)->count, 2);
			break;
		}
		case DT_REC_NVTX: {
			const struct dt_rec_nvtx *n = (const void *)h;
			CHECK(n->range == 5 && n->event == DT_NVTX_END &&
			      n->domain == 3 && n->tid == 7);
			break;
		}
		case DT_REC_LOSS:
			CHECK_EQ_U(((const struct dt_rec_loss *)h)->count, 1);
			CHECK_EQ_U(((const struct dt_rec_loss *)h)->tid, 4242);
			break;
		case DT_REC_END: {
			const struct dt_rec_end *e = (const void *)h;
			CHECK_EQ_U(e->reason, DT_END_EXIT);
			CHECK_EQ_U(e->code, 3);
			CHECK_EQ_U(e->lost, 1);
			CHECK_EQ_U(e->calls, 1);
			break;
		}
		}
	}
	/* FRAME seals frames: the reader checks them and returns none */
	for (int t = 1; t < DT_REC_TYPE_COUNT; t++)
		if (!seen[t] && t != DT_REC_FRAME)
			fprintf(stderr, "record type %d never read back\n", t),
				dt_test_failures++;
	CHECK_EQ_U(unknowns, 1);
	const struct dt_file_stats *st = dt_reader_stats(rd);
	CHECK_EQ_U(st->end, DT_FILE_CLEAN);
	CHECK(st->have_index);
	CHECK_EQ_U(st->lost, 1);
	CHECK_EQ_U(st->calls, 1);
	CHECK_EQ_U(st->unknown, 1);
	CHECK_EQ_U(st->bytes_lost, 0);
	dt_reader_close(rd);

	/* the file was created 0600 and is never overwritten */
	struct dt_writer *w2 = test_writer(dir, "rt-%p.dnnt", 0);
	CHECK(strcmp(dt_writer_path(w2), path) != 0);
	CHECK(strstr(dt_writer_path(w2), ".1.dnnt") != NULL);
	dt_writer_close(w2, DT_END_CLOSE, 0);
	dt_writer_free(w2);
	TEST_DONE();
}
