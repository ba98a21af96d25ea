/*
 * test-recipe.c - an op's recipe says what its description says: as many
 * nodes as its graph has operations (one for a call), the engine's knob
 * choices by name with their values and its numerical notes by name,
 * training mode where a node runs in it. Views read the recipe; this test
 * alone reads the text, to hold the two together on recorded traces.
 *
 * Usage: test-recipe TRACE...
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "test-util.h"

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
	TEST_DONE();
}
