/*
 * test-blueprint.c - what the cuDNN decoder keeps of a backend graph to
 * build it again (struct dt_cudnn_graph, an op's recipe->build) holds what
 * the trace recorded: the graph last, every descriptor after those it
 * points to, an operation for each of the graph's, tensors with the uids,
 * dimensions and data types the op's tensors list, the program's handle
 * among the graph's attributes; a legacy call's arguments, with what its
 * descriptors were set to (struct dt_cudnn_call). On recorded traces.
 *
 * Usage: test-blueprint TRACE...
 */
#include <inttypes.h>
#include <string.h>

#include "dt-analyzer.h"
#include "trace-test-util.h"

struct seen {
	uint64_t graphs, tensors, calls, without;
};

static int64_t enum_of(const char *type, const char *name)
{
	return dt_enum_value(type, name, -1);
}

/* Descriptor d's attribute name as one integer of its size. */
static int64_t attr_int(const struct dt_cudnn_graph *g, uint32_t d,
			const char *name)
{
	const struct dt_cudnn_attr *a = dt_cudnn_attr_find(
		g, d, enum_of("cudnnBackendAttributeName_t", name));
	int64_t v = 0;

	if (!a || !a->bytes || a->bytes > 8)
		return -1;
	memcpy(&v, a->data, a->bytes);
	return a->bytes == 4 ? (int32_t)v : v;
}

/* A tensor of the graph matches the op tensor of its uid. */
static void check_tensor(const struct dt_op *op, const struct dt_cudnn_graph *g,
			 uint32_t d, struct seen *s)
{
	int64_t uid = attr_int(g, d, "CUDNN_ATTR_TENSOR_UNIQUE_ID");
	const struct dt_cudnn_attr *dims =
		dt_cudnn_attr_find(g, d,
				   enum_of("cudnnBackendAttributeName_t",
					   "CUDNN_ATTR_TENSOR_DIMENSIONS"));

	CHECK(dims != NULL);
	for (uint32_t i = 0; dims && i < op->n_tensors; i++) {
		const struct dt_tensor *t = &op->tensors[i].t;
		if (t->uid != uid)
			continue;
		CHECK_EQ_U(dims->bytes / 8, t->nb);
		for (int k = 0; k < t->nb && k < (int)(dims->bytes / 8); k++) {
			int64_t v;
			memcpy(&v, dims->data + 8 * k, 8);
			CHECK_EQ_U(v, t->dims[k]);
		}
		s->tensors++;
		return;
	}
	CHECK(!"a tensor of the graph is not among the op's");
}

/* A legacy convolution's call: its tensors as the op's, its filter's
 * layout, its convolution's fields by name, alpha as the
 * bytes the program pointed to (1.0f first). */
static void check_call(const struct dt_op *op, const struct dt_cudnn_call *c,
		       struct seen *s)
{
	CHECK_EQ_S(c->api, op->api);
	if (strcmp(c->api, "cudnnConvolutionForward"))
		return;
	const struct dt_cudnn_arg *x = dt_cudnn_arg_find(c, "xDesc"),
				  *w = dt_cudnn_arg_find(c, "wDesc"),
				  *conv = dt_cudnn_arg_find(c, "convDesc"),
				  *alpha = dt_cudnn_arg_find(c, "alpha");
	float one = 1;

	CHECK(x && x->t && x->kind && !memcmp(x->kind, "Tensor", 6));
	CHECK(w && w->t && dt_cudnn_field_find(w, "format"));
	CHECK(conv && !conv->t);
	CHECK(!dt_cudnn_arg_find(c, "handle") && !dt_cudnn_arg_find(c, "x"));
	if (!x || !x->t || !w || !w->t || !conv || !alpha)
		return;
	CHECK_EQ_U(x->t->dims[1], 16); /* the sample's [8,16,32,32] */
	CHECK_EQ_U(w->t->dims[0], 32); /* and [32,16,3,3] */
	CHECK_EQ_U(dt_cudnn_field_find(conv, "pad_h")->v[0], 1);
	CHECK(alpha->width >= 4); /* the bytes the program pointed to */
	CHECK(!memcmp(alpha->host, &one, 4));
	CHECK_EQ_U(dt_cudnn_arg_find(c, "algo")->i, op->engine);
	s->calls++;
}

static void on_op(void *arg, const struct dt_op *op)
{
	struct seen *s = arg;
	const struct dt_cudnn_graph *g = op->recipe ? op->recipe->build : NULL;
	int64_t t_graph = enum_of("cudnnBackendDescriptorType_t",
				  "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR");
	int64_t t_tensor = enum_of("cudnnBackendDescriptorType_t",
				   "CUDNN_BACKEND_TENSOR_DESCRIPTOR");
	int64_t t_desc = enum_of("cudnnBackendAttributeType_t",
				 "CUDNN_TYPE_BACKEND_DESCRIPTOR");

	if (!op->plan && op->recipe && op->recipe->build) {
		check_call(op, op->recipe->build, s);
		return;
	}
	if (!g) {
		s->without++;
		return;
	}
	CHECK(op->plan != 0);
	CHECK(g->complete);
	CHECK_EQ_U(g->root, g->n_descs - 1);
	CHECK_EQ_U(g->descs[g->root].type, t_graph);
	const struct dt_cudnn_attr *ops =
		dt_cudnn_attr_find(g, g->root,
				   enum_of("cudnnBackendAttributeName_t",
					   "CUDNN_ATTR_OPERATIONGRAPH_OPS"));
	CHECK(ops != NULL);
	CHECK_EQ_U(ops ? ops->bytes / 8 : 0, op->recipe->n_nodes);
	for (uint32_t d = 0; d < g->n_descs; d++) {
		const struct dt_cudnn_desc *x = &g->descs[d];
		for (uint32_t k = 0; k < x->n_attrs; k++) {
			const struct dt_cudnn_attr *a = &x->attrs[k];
			for (uint32_t e = 0;
			     a->type == t_desc && e < a->bytes / 8; e++) {
				int64_t to;
				memcpy(&to, a->data + 8 * e, 8);
				CHECK(to >= 0 && to < (int64_t)d);
			}
		}
		if (x->type == t_tensor)
			check_tensor(op, g, d, s);
	}
	s->graphs++;
}

int main(int argc, char **argv)
{
	struct seen all = { 0 };

	for (int i = 1; i < argc; i++) {
		struct seen s = { 0 };
		char err[256];
		struct dt_session *ss =
			dt_session_open(argv[i], NULL, NULL, err, sizeof(err));
		CHECK(ss != NULL);
		if (!ss)
			continue;
		struct dt_consumer c = { .arg = &s, .op = on_op };
		dt_session_add(ss, &c);
		dt_session_run(ss);
		dt_session_close(ss);
		printf("%s: %" PRIu64 " graph executions (%" PRIu64
		       " tensors checked), %" PRIu64
		       " legacy convolutions, %" PRIu64 " ops without\n",
		       argv[i], s.graphs, s.tensors, s.calls, s.without);
		all.graphs += s.graphs;
		all.tensors += s.tensors;
		all.calls += s.calls;
	}
	/* the sample's backend convolution, three times, three tensors */
	CHECK(all.graphs >= 3);
	CHECK(all.tensors >= 9);
	/* and its legacy one, three times */
	CHECK(all.calls >= 3);
	return dt_test_failures ? 1 : 0;
}
