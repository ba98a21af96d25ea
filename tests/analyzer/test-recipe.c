/*
 * test-recipe.c - an op's recipe says what its description says: as many
 * nodes as its graph has operations (one for a call), the engine's knob
 * choices by name with their values and its numerical notes by name,
 * training mode where a node runs in it. Views read the recipe; this test
 * alone reads the text, to hold the two together on recorded traces. And
 * a legacy N-d convolution's strides, which its description shows under
 * the parameter's name only (filterStrideA), reach the recipe.
 *
 * Usage: test-recipe TRACE...
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "trace-test-util.h"

struct seen {
	uint64_t ops, graphs, knobs, notes, training;
};

static uint32_t count(const char *s, const char *what)
{
	uint32_t n = 0;

	for (; s && (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

static void on_op(void *arg, const struct dt_op *op)
{
	struct seen *s = arg;
	const struct dt_recipe *r = op->recipe;
	bool graph = op->plan && op->desc &&
		     !strstr(op->desc, "(graph unknown)") &&
		     !strstr(op->desc, "(restored from");

	s->ops++;
	CHECK_EQ_S(op->library ? op->library : "", "cudnn");
	if (!graph && op->plan)
		return;
	CHECK(r != NULL);
	if (!r)
		return;
	/* a graph's operations are separated by " ; " */
	CHECK_EQ_U(r->n_nodes, graph ? 1 + count(op->desc, " ; ") : 1);
	s->graphs += graph;
	/* "TILE_SIZE=4 KBLOCK=3": each name=value, in order */
	CHECK_EQ_U(r->n_knobs, count(op->knobs, "="));
	for (uint32_t i = 0; i < r->n_knobs; i++) {
		char kv[96];
		snprintf(kv, sizeof(kv), "%s=%" PRId64, r->knobs[i].name,
			 r->knobs[i].value);
		CHECK(strstr(op->knobs, kv) != NULL);
		s->knobs++;
	}
	/* "TENSOR_CORE DOWN_CONVERT_INPUTS": each name, in order */
	const char *w = op->notes;
	for (uint32_t i = 0; i < r->n_notes; i++) {
		size_t l = strlen(r->notes[i].name);
		CHECK(w && !strncmp(w, r->notes[i].name, l) &&
		      (w[l] == ' ' || !w[l]));
		w = w && w[l] ? w + l + 1 : "";
		s->notes++;
	}
	CHECK(!w || !*w);
	bool training = false;
	for (uint32_t i = 0; i < r->n_nodes; i++)
		training |= r->nodes[i].training;
	CHECK_EQ_U(training, strstr(op->desc, "NORM_FWD_TRAINING") != NULL ||
				     strstr(op->api, "Training") != NULL);
	s->training += training;
}

static const char *const nd_names[] = {
	"cudnnCreateConvolutionDescriptor",
	"cudnnSetConvolutionNdDescriptor",
	"cudnnConvolutionBackwardData",
};
static const char *const nd_sigs[] = {
	"convDesc:>p",
	"convDesc:p,arrayLength:i4,padA:ai4,filterStrideA:ai4,dilationA:ai4,"
	"mode:e=cudnnConvolutionMode_t,computeType:e=cudnnDataType_t",
	"handle:p,alpha:k,wDesc:p,w:p,dyDesc:p,dy:p,convDesc:p,"
	"algo:e=cudnnConvolutionBwdDataAlgo_t,workSpace:p,"
	"workSpaceSizeInBytes:u8,beta:k,dxDesc:p,dx:p",
};

static void put_call(struct dt_ring *r, uint16_t api, uint64_t seq,
		     const void *args, uint32_t len)
{
	struct dt_rec_api_call c = { .api = api,
				     .tid = r->tid,
				     .seq = seq,
				     .t_begin = seq * 1000,
				     .t_end = seq * 1000 + 500,
				     .len = len };

	CHECK(test_put(r, DT_REC_API_CALL, &c, sizeof(c), (void *)args, len));
}

/* n bytes of v at p: where the next go. */
static uint8_t *put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

static void on_nd_op(void *arg, const struct dt_op *op)
{
	uint32_t *stride = arg;

	if (op->recipe && op->recipe->n_nodes == 1)
		*stride = op->recipe->nodes[0].stride;
}

/* A backward-data convolution on a descriptor set with strides 1 and 2:
 * its node's stride is 2. */
static void check_nd_stride(void)
{
	char tmpl[512];
	snprintf(tmpl, sizeof(tmpl), "%s/nd.dnnt", dt_test_tmpdir());
	struct dt_writer_config cfg = { .path_template = tmpl,
					.api_names = nd_names,
					.api_sigs = nd_sigs,
					.api_count = 3 };
	struct dt_writer *w = dt_writer_open(&cfg);
	CHECK(w != NULL);
	if (!w)
		return;
	struct dt_ring *r = dt_writer_attach(w, 7, "t");
	uint8_t b[256], *p;
	uint64_t conv = 0xc0;
	uint32_t two = 2;
	int32_t pad[2] = { 1, 1 }, stride[2] = { 1, 2 }, dil[2] = { 1, 1 };
	int32_t mode = 1, dtype = 0, algo = 1;

	put_call(r, 0, 1, &conv, 8);
	p = b;
	p = put(p, &conv, 8);
	p = put(p, &two, 4);
	p = put(p, &two, 4);
	p = put(p, pad, 8);
	p = put(p, &two, 4);
	p = put(p, stride, 8);
	p = put(p, &two, 4);
	p = put(p, dil, 8);
	p = put(p, &mode, 4);
	p = put(p, &dtype, 4);
	put_call(r, 1, 2, b, (uint32_t)(p - b));
	/* handle, alpha (none), w desc, w, dy desc, dy, conv, algo, workspace,
	 * its size, beta (none), dx desc, dx */
	uint64_t ptrs_a[] = { 0x10 }, ptrs_b[] = { 0, 0x20, 0, 0x30, conv };
	uint64_t ptrs_c[] = { 0, 0 }, ptrs_d[] = { 0, 0x40 };
	uint32_t none = 0;
	p = b;
	p = put(p, ptrs_a, 8);
	p = put(p, &none, 4);
	p = put(p, ptrs_b, 40);
	p = put(p, &algo, 4);
	p = put(p, ptrs_c, 16);
	p = put(p, &none, 4);
	p = put(p, ptrs_d, 16);
	put_call(r, 2, 3, b, (uint32_t)(p - b));
	dt_ring_detach(r);
	dt_writer_close(w, DT_END_EXIT, 0);
	dt_writer_free(w);

	struct dt_session *ss = dt_session_open(tmpl, NULL, NULL, NULL, 0);
	uint32_t seen = 0;
	struct dt_consumer c = { .arg = &seen, .op = on_nd_op };
	CHECK(ss != NULL);
	if (!ss)
		return;
	CHECK(dt_session_add(ss, &c) == 0);
	dt_session_run(ss);
	CHECK_EQ_U(dt_session_stats(ss)->undecoded, 0);
	CHECK_EQ_U(seen, 2);
	dt_session_close(ss);
}

int main(int argc, char **argv)
{
	struct seen total = { 0 };

	for (int i = 1; i < argc; i++) {
		struct dt_session *ss =
			dt_session_open(argv[i], NULL, NULL, NULL, 0);
		CHECK(ss != NULL);
		if (!ss)
			continue;
		struct dt_consumer c = { .arg = &total, .op = on_op };
		CHECK(dt_session_add(ss, &c) == 0);
		dt_session_run(ss);
		dt_session_close(ss);
	}
	/* the traces hold graphs and knob choices: the checks above ran */
	CHECK(total.ops > 0);
	CHECK(total.graphs > 0);
	CHECK(total.knobs > 0);
	CHECK(total.notes > 0);
	check_nd_stride();
	TEST_DONE();
}
