/*
 * test-restore-graph.c - a plan restored from its JSON gives replay the
 * graph the program built: for each restored plan of a trace, a plan
 * built in the same trace whose kept graph (struct dt_cudnn_graph) is the
 * same, attribute by attribute. Descriptors are compared by what they
 * hold, not where they sit: the same type, the same attributes with the
 * same bytes (a handle by its presence: a program may restore with
 * another), what they point to the same in turn; a graph's operations in
 * any order (the JSON lists them in its own).
 *
 * Usage: test-restore-graph TRACE (one with built and restored plans)
 */
#include <inttypes.h>
#include <string.h>

#include "dt-analyzer.h"
#include "trace-test-util.h"

#define PLANS_MAX 64

struct plans {
	const struct dt_cudnn_graph *built[PLANS_MAX], *restored[PLANS_MAX];
	size_t n_built, n_restored;
};

static int64_t t_desc, t_handle, a_graph_ops;

static bool same_desc(const struct dt_cudnn_graph *a, uint32_t da,
		      const struct dt_cudnn_graph *b, uint32_t db);

static int64_t ref(const struct dt_cudnn_attr *x, uint32_t e)
{
	int64_t v;

	memcpy(&v, x->data + 8 * e, 8);
	return v;
}

/* Descriptor-typed attributes: each element the same; a graph's
 * operations matched in any order. */
static bool same_refs(const struct dt_cudnn_graph *a,
		      const struct dt_cudnn_attr *x,
		      const struct dt_cudnn_graph *b,
		      const struct dt_cudnn_attr *y)
{
	uint32_t n = x->bytes / 8;
	bool used[256] = { false };

	if (x->bytes != y->bytes || n > 256)
		return false;
	bool any_order = x->name == a_graph_ops;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = any_order ? 0 : i, end = any_order ? n : i + 1;
		for (; j < end; j++)
			if (!used[j] && ref(x, i) >= 0 && ref(y, j) >= 0 &&
			    same_desc(a, (uint32_t)ref(x, i), b,
				      (uint32_t)ref(y, j)))
				break;
		if (j == end)
			return false;
		used[j] = true;
	}
	return true;
}

static bool same_attr(const struct dt_cudnn_graph *a,
		      const struct dt_cudnn_attr *x,
		      const struct dt_cudnn_graph *b,
		      const struct dt_cudnn_attr *y)
{
	if (x->type != y->type)
		return false;
	if (x->type == t_desc)
		return same_refs(a, x, b, y);
	if (x->type == t_handle)
		return true;
	return x->bytes == y->bytes && !memcmp(x->data, y->data, x->bytes);
}

static bool same_desc(const struct dt_cudnn_graph *a, uint32_t da,
		      const struct dt_cudnn_graph *b, uint32_t db)
{
	const struct dt_cudnn_desc *x = &a->descs[da], *y = &b->descs[db];

	if (x->type != y->type || x->n_attrs != y->n_attrs)
		return false;
	for (uint32_t i = 0; i < x->n_attrs; i++) {
		const struct dt_cudnn_attr *o =
			dt_cudnn_attr_find(b, db, x->attrs[i].name);
		if (!o || !same_attr(a, &x->attrs[i], b, o))
			return false;
	}
	return true;
}

/* Each attribute of each descriptor of g in words, for a failure. */
static void print(const char *what, const struct dt_cudnn_graph *g)
{
	char n[96];

	printf("%s: %u descriptors\n", what, g->n_descs);
	for (uint32_t d = 0; d < g->n_descs; d++) {
		printf("  %u %s:", d,
		       dt_enum_short("cudnnBackendDescriptorType_t",
				     g->descs[d].type, "CUDNN_BACKEND_", n,
				     sizeof(n)));
		for (uint32_t k = 0; k < g->descs[d].n_attrs; k++)
			printf(" %s",
			       dt_enum_short("cudnnBackendAttributeName_t",
					     g->descs[d].attrs[k].name,
					     "CUDNN_ATTR_", n, sizeof(n)));
		printf("\n");
	}
}

static void on_plan(void *arg, const struct dt_plan_build *b)
{
	struct plans *p = arg;

	if (!b->build)
		return;
	if (b->restored && p->n_restored < PLANS_MAX)
		p->restored[p->n_restored++] = b->build;
	else if (!b->restored && p->n_built < PLANS_MAX)
		p->built[p->n_built++] = b->build;
}

int main(int argc, char **argv)
{
	struct plans p = { 0 };
	char err[256];

	if (argc != 2)
		return 2;
	t_desc = dt_enum_value("cudnnBackendAttributeType_t",
			       "CUDNN_TYPE_BACKEND_DESCRIPTOR", -1);
	t_handle = dt_enum_value("cudnnBackendAttributeType_t",
				 "CUDNN_TYPE_HANDLE", -1);
	a_graph_ops = dt_enum_value("cudnnBackendAttributeName_t",
				    "CUDNN_ATTR_OPERATIONGRAPH_OPS", -1);
	struct dt_session *ss =
		dt_session_open(argv[1], NULL, NULL, err, sizeof(err));
	CHECK(ss != NULL);
	if (!ss)
		return 1;
	struct dt_consumer c = { .arg = &p, .plan = on_plan };
	dt_session_add(ss, &c);
	dt_session_run(ss);
	CHECK(p.n_restored > 0);
	CHECK(p.n_built > 0);
	for (size_t r = 0; r < p.n_restored; r++) {
		const struct dt_cudnn_graph *g = p.restored[r];
		size_t b = 0;
		while (b < p.n_built &&
		       !same_desc(g, g->root, p.built[b], p.built[b]->root))
			b++;
		printf("restored plan %zu: %s\n", r + 1,
		       b < p.n_built ? "the graph of a built plan"
				     : "no built plan has its graph");
		if (b == p.n_built) {
			print("restored", g);
			for (size_t k = 0; k < p.n_built; k++)
				print("built", p.built[k]);
		}
		CHECK(b < p.n_built);
	}
	dt_session_close(ss);
	return dt_test_failures ? 1 : 0;
}
