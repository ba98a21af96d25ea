/*
 * analyzer-graphs.c - kernels replayed from CUDA graphs, traced back to
 * the calls that made their nodes.
 *
 * A call made on a stream being captured (or one that puts its work into
 * a graph, an op its decoder marks DT_OP_CAPTURED) runs nothing: its
 * launches become nodes of a graph, and every launch of an executable
 * graph made from it runs them again, with no call. The trace says which nodes each call made (GRAPH_NODE: graph
 * id, node id), which executable came from which graph, and which graphs
 * are clones or children of others (GRAPH_LINK). A replayed kernel carries
 * its executable's id and a node id whose low half is its index in the
 * executable: measured, the index the node has in the graph instantiated,
 * and for the nodes of child graphs, indexes after all of the graph's own,
 * child after child (the recorder writes where each child starts). From
 * there to the node a call
 * made, and from the call to its op: a replay is an execution of that op,
 * with the kernels one graph launch ran for it.
 *
 * Threads' records are interleaved in the file as the writer drained
 * them, so a replay's kernels (written by the thread that parses CUPTI's
 * buffers) can come before the records of the capture and instantiation
 * that explain them (written by the program's thread): a program that
 * replays right after capturing, then exits, has all of them drained
 * together. A kernel of an executable whose making is not read yet is
 * held until it is, and handed back to the model then.
 *
 * Where the trace cannot tell (an executable whose instantiation it did
 * not see), the kernels stay unattributed and are counted as such.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer-model-internal.h"

/* What one call captured: the op its replays execute. */
struct gtemplate {
	uint64_t call;
	struct pending proto; /* its op, as handed out; ptrs its own */
	bool have_op;
	uint32_t kernel_nodes; /* kernel nodes the call made */
	struct gtemplate *next;
};

/* What a node ran from a time on: a call's op, a kernel. */
struct gver {
	uint64_t t; /* host time it was made or updated */
	struct gtemplate *tp;
	const struct dt_kernel_class *kc; /* its kernel, NULL unknown */
	struct gver *older;
};

/* A node a call made, by graph and index. */
struct gnode {
	uint64_t key; /* graph << 32 | index; 0: empty slot */
	struct gver *v; /* newest first */
};

/* A graph (or executable) made from another. */
struct glink {
	uint64_t t;
	uint32_t to, from, how, parent;
	uint32_t first; /* DT_GRAPH_EXEC_CHILD: where its nodes start */
};

/* A graph launch's kernels for one template, being collected. */
struct replay {
	uint32_t corr;
	struct gtemplate *tp;
	struct pending *p;
	uint32_t got;
};

/* A graph launch, as GRAPH_LAUNCH told it. */
struct launch {
	uint32_t corr, tid;
	uint64_t start, end; /* host clock */
};

/* A replayed kernel read before its executable's making: the activity,
 * its record copied (a.rec and a.kernel point to it). */
struct held {
	struct dt_activity a;
	struct held *next;
	uint64_t rec[]; /* 8-aligned, as records are */
};

#define OPEN_MAX 64
/* Held kernels beyond this are given up, oldest first: an executable
 * whose making the trace never shows (a CUDA runtime linked statically)
 * would otherwise hold all of its replays to the end. It is more than the
 * kernel records a thread's ring holds at its default size (1 MiB): the
 * most that one drain can put before the records they wait for. */
#define HELD_MAX 65536

struct dt_graphs {
	struct gnode *nodes;
	size_t cap, used;
	struct glink *links;
	size_t n_links, cap_links;
	struct gtemplate *templates;
	struct gtemplate *last_tp; /* the last call's, found again quickly */
	struct replay open[OPEN_MAX];
	int n_open;
	struct pending *ready, *ready_tail; /* replays complete, to hand out */
	struct pending *out;                /* handed out last */
	struct launch launches[4096];       /* direct-mapped by corr */
	uint64_t n_replays;
	struct held *held, **held_tail;   /* waiting for their executable */
	struct held *freed, **freed_tail; /* whose executable was made */
	size_t n_held;                    /* on either list */
	struct held *given;               /* handed back last */
};

static uint64_t node_key(uint32_t graph, uint32_t index)
{
	return (uint64_t)graph << 32 | index;
}

static size_t node_slot(uint64_t key, size_t cap)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (size_t)(key ^ key >> 32) & (cap - 1);
}

static struct gnode *node_find(struct dt_graphs *g, uint64_t key)
{
	if (!g->cap || !key)
		return NULL;
	for (size_t i = node_slot(key, g->cap);; i = (i + 1) & (g->cap - 1)) {
		if (!g->nodes[i].key)
			return NULL;
		if (g->nodes[i].key == key)
			return &g->nodes[i];
	}
}

static struct gnode *node_put(struct dt_graphs *g, uint64_t key)
{
	struct gnode *n = node_find(g, key);

	if (n || !key)
		return n;
	if ((g->used + 1) * 2 > g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 256;
		struct gnode *v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < g->cap; i++) {
			if (!g->nodes[i].key)
				continue;
			size_t k = node_slot(g->nodes[i].key, cap);
			while (v[k].key)
				k = (k + 1) & (cap - 1);
			v[k] = g->nodes[i];
		}
		free(g->nodes);
		g->nodes = v;
		g->cap = cap;
	}
	size_t k = node_slot(key, g->cap);
	while (g->nodes[k].key)
		k = (k + 1) & (g->cap - 1);
	g->nodes[k].key = key;
	g->used++;
	return &g->nodes[k];
}

/* The link that made graph or executable `to` as it was at time t (0:
 * the latest). Executables are updated to run other graphs. */
static const struct glink *link_to(const struct dt_graphs *g, uint32_t to,
				   uint64_t t)
{
	const struct glink *any = NULL;

	for (size_t i = g->n_links; i-- > 0;) {
		/* layouts are no making */
		if (g->links[i].to != to ||
		    g->links[i].how == DT_GRAPH_EXEC_CHILD)
			continue;
		if (!t || g->links[i].t <= t)
			return &g->links[i];
		any = &g->links[i];
	}
	return any; /* all made later than t says: the clocks disagree */
}

/* The version of node n at time t (0: the newest); NULL when it was made
 * later (a clone's node updated: before that it ran its original's). */
static const struct gver *version_at(const struct gnode *n, uint64_t t)
{
	const struct gver *v = n->v;

	while (t && v && v->t > t)
		v = v->older;
	return v;
}

static struct dt_graphs *graphs_of(struct dt_model *m)
{
	struct dt_graphs *g = m->graphs;

	if (!g && (g = m->graphs = calloc(1, sizeof(*g)))) {
		g->held_tail = &g->held;
		g->freed_tail = &g->freed;
	}
	return g;
}

/* The template of call `call`, made from its op when it is still waiting
 * for kernels (it is: GRAPH_NODE records follow their call's record). */
static struct gtemplate *template_of(struct dt_model *m, struct dt_graphs *g,
				     uint64_t call)
{
	if (g->last_tp && g->last_tp->call == call)
		return g->last_tp;
	for (struct gtemplate *t = g->templates; t; t = t->next)
		if (t->call == call)
			return g->last_tp = t;
	struct gtemplate *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->call = call;
	struct pending *p = m_pending_of(m, call);
	if (p) {
		if (p->op.origin != DT_OP_CAPTURED)
			m->stats.graphs.captured++;
		p->op.origin = DT_OP_CAPTURED;
		t->proto = *p;
		t->proto.next = NULL;
		t->proto.ptr_buf = NULL;
		t->proto.ptr_cap = 0;
		t->proto.ptrs = NULL;
		t->proto.n_ptrs = 0;
		if (p->n_ptrs &&
		    (t->proto.ptrs = malloc(p->n_ptrs * sizeof(*p->ptrs)))) {
			memcpy(t->proto.ptrs, p->ptrs,
			       p->n_ptrs * sizeof(*p->ptrs));
			t->proto.n_ptrs = p->n_ptrs;
		}
		t->have_op = true;
	}
	t->next = g->templates;
	g->templates = t;
	return g->last_tp = t;
}

static void on_node(struct dt_model *m, const struct dt_rec_graph_node *r)
{
	struct dt_graphs *g = graphs_of(m);
	uint32_t len;
	const char *name = (const char *)dt_rec_tail(&r->hdr, &len);
	struct gtemplate *t;
	struct gnode *n;

	m->stats.graphs.nodes++;
	if (!g || !r->call || !(t = template_of(m, g, r->call)))
		return;
	if (!(n = node_put(g, node_key(r->graph, (uint32_t)r->node))))
		return;
	/* an update gives the node the updating call's operands from then
	 * on: launches before it ran the older ones */
	struct gver *v = malloc(sizeof(*v));
	if (!v)
		return;
	*v = (struct gver){ .t = r->t,
			    .tp = t,
			    .kc = len ? m_kernel_class(m, name, len) : NULL,
			    .older = n->v };
	n->v = v;
	if (r->node_type == 0)
		t->kernel_nodes++;
}

/* Kernels held for executable `exec`, now made: moved, in the order read,
 * to those m_graph_released() hands back. */
static void free_held(struct dt_graphs *g, uint32_t exec)
{
	for (struct held **pp = &g->held, *h; (h = *pp);) {
		if (h->a.kernel->graph_id != exec) {
			pp = &h->next;
			continue;
		}
		*pp = h->next;
		if (g->held_tail == &h->next)
			g->held_tail = pp;
		h->next = NULL;
		*g->freed_tail = h;
		g->freed_tail = &h->next;
	}
}

static void on_link(struct dt_model *m, const struct dt_rec_graph_link *r)
{
	struct dt_graphs *g = graphs_of(m);

	if (!g)
		return;
	struct glink *v = dt_grow_array(g->links, &g->cap_links,
					g->n_links + 1, sizeof(*v));
	if (!v)
		return;
	g->links = v;
	g->links[g->n_links++] =
		(struct glink){ .t = r->t,
				.to = r->to,
				.from = r->from,
				.how = r->how,
				.parent = r->parent,
				.first = r->first };
	if (r->how == DT_GRAPH_INSTANTIATED || r->how == DT_GRAPH_EXEC_UPDATED)
		free_held(g, r->to);
}

static void on_launch(struct dt_model *m, const struct dt_rec_graph_launch *r)
{
	struct dt_graphs *g = graphs_of(m);

	m->stats.graphs.launches++;
	if (r->end > r->start)
		m->stats.graphs.launch_ns += r->end - r->start;
	if (!g)
		return;
	struct launch *l =
		&g->launches[r->corr % (sizeof(g->launches) /
					sizeof(g->launches[0]))];
	*l = (struct launch){ r->corr, r->tid,
			      r->start + (uint64_t)m->cupti_to_mono,
			      r->end + (uint64_t)m->cupti_to_mono };
}

void m_graph_record(struct dt_model *m, const struct dt_rec_hdr *h)
{
	switch (h->type) {
	case DT_REC_GRAPH_NODE:
		on_node(m, (const void *)h);
		break;
	case DT_REC_GRAPH_LINK:
		on_link(m, (const void *)h);
		break;
	case DT_REC_GRAPH_LAUNCH:
		on_launch(m, (const void *)h);
		break;
	}
}

/* The node at index idx of graph `graph`, as the graph was when
 * instantiated: its own, its original's (a clone), or one of a child
 * graph's, whose nodes come after the child node. */
static const struct gver *node_in(struct dt_graphs *g, uint32_t graph,
				  uint32_t idx, uint64_t t, int depth)
{
	const struct gnode *n = node_find(g, node_key(graph, idx));
	const struct gver *v = n ? version_at(n, t) : NULL;

	if (v || depth > 4)
		return v;
	/* a copy's node is its original's until updated */
	const struct glink *l = link_to(g, graph, 0);
	if (l && (l->how == DT_GRAPH_CLONED || l->how == DT_GRAPH_CHILD) &&
	    l->from && (v = node_in(g, l->from, idx, t, depth + 1)))
		return v;
	return NULL;
}

/* What a kernel executable `exec` replayed at time t traces back to, or
 * NULL. */
static const struct gver *resolve(struct dt_graphs *g, uint32_t exec,
				  uint64_t node, uint64_t t, bool *in_child)
{
	const struct glink *l = link_to(g, exec, t);
	uint32_t idx = (uint32_t)node;

	if (!l || (l->how != DT_GRAPH_INSTANTIATED &&
		   l->how != DT_GRAPH_EXEC_UPDATED))
		return NULL;
	/* an executable numbers its graph's own nodes first, then each
	 * child graph's: the layout written when it was made says where */
	const struct glink *child = NULL;
	for (size_t i = (size_t)(l - g->links) + 1; i < g->n_links; i++) {
		const struct glink *c = &g->links[i];
		if (c->to != exec)
			continue;
		if (c->how != DT_GRAPH_EXEC_CHILD)
			break; /* made again */
		if (c->first <= idx && (!child || c->first > child->first))
			child = c;
	}
	*in_child = child != NULL;
	if (child)
		return node_in(g, child->from, idx - child->first, t, 0);
	return node_in(g, l->from, idx, t, 0);
}

/* Graph launch corr as GRAPH_LAUNCH told it, or NULL: not recorded (or
 * not read yet). */
static const struct launch *launch_of(const struct dt_graphs *g, uint32_t corr)
{
	const struct launch *l =
		&g->launches[corr % (sizeof(g->launches) /
				     sizeof(g->launches[0]))];
	return corr && l->corr == corr && l->start ? l : NULL;
}

static void ready(struct dt_graphs *g, int i)
{
	struct pending *p = g->open[i].p;

	p->next = NULL;
	if (g->ready_tail)
		g->ready_tail->next = p;
	else
		g->ready = p;
	g->ready_tail = p;
	g->open[i] = g->open[--g->n_open];
}

/* A new replay of template t by graph launch corr. */
static struct pending *replay_new(struct dt_model *m, struct dt_graphs *g,
				  struct gtemplate *t, uint32_t corr,
				  uint64_t start)
{
	if (g->n_open == OPEN_MAX) {
		/* the oldest has waited long enough */
		m->stats.graphs.partial++;
		ready(g, 0);
	}
	struct pending *p = m_pending_new(m);
	if (!p)
		return NULL;
	struct dt_op_ptr *buf = p->ptr_buf;
	uint32_t cap = p->ptr_cap;
	*p = t->proto;
	p->ptr_buf = buf;
	p->ptr_cap = cap;
	p->next = NULL;
	p->first_kernel = NULL;
	p->tc_hint = -1;
	struct dt_op *op = &p->op;
	op->origin = DT_OP_REPLAY;
	op->unsampled = false; /* m_graph_next() says */
	op->exec = DT_EXEC_REPLAY + ++g->n_replays;
	op->graph_launch = corr;
	op->kernels = 0;
	op->gpu_ns = op->gpu_start = op->gpu_end = 0;
	op->converts = 0;
	op->convert_ns = 0;
	op->device = -1;
	const struct launch *l = launch_of(g, corr);
	op->t_begin = l ? l->start : start;
	op->t_end = l ? l->end : start;
	m->stats.graphs.replays++;
	g->open[g->n_open++] = (struct replay){ corr, t, p, 0 };
	return p;
}

/* Kernel a, copied to be handed back once its executable is made; false
 * when memory is short. */
static bool hold(struct dt_graphs *g, const struct dt_activity *a)
{
	uint32_t size = a->rec->size;
	struct held *h = malloc(sizeof(*h) + size);

	if (!h)
		return false;
	memcpy(h->rec, a->rec, size);
	h->a = *a;
	h->a.rec = (const void *)h->rec;
	h->a.kernel = (const void *)h->rec;
	h->next = NULL;
	*g->held_tail = h;
	g->held_tail = &h->next;
	g->n_held++;
	return true;
}

/* Kernel a traced to the call that made its node, or held (may_hold)
 * when the executable that ran it is not known to have been made yet. */
static enum m_graph_tie tie(struct dt_model *m, struct dt_graphs *g,
			    struct dt_activity *a, bool may_hold)
{
	const struct dt_rec_kernel *k = a->kernel;
	/* the launch's time says which version of a node it ran; without
	 * it, the kernel's start is the closest bound */
	const struct launch *lt = launch_of(g, a->corr);
	uint64_t when = lt ? lt->start : a->start;
	bool in_child = false;
	const struct gver *n =
		resolve(g, k->graph_id, k->graph_node, when, &in_child);
	if (!n) {
		bool made = link_to(g, k->graph_id, 0) != NULL;
		if (!made && may_hold && hold(g, a))
			return M_GRAPH_HELD;
		if (g->used && !made)
			m->stats.graphs.unknown++;
		else if (in_child)
			m->stats.graphs.unresolved++;
		return M_GRAPH_NONE;
	}
	if (n->kc && a->kc && n->kc != a->kc) {
		m->stats.graphs.mismatch++;
		return M_GRAPH_NONE;
	}
	struct gtemplate *t = n->tp;
	a->call = t->call;
	a->library = t->have_op ? t->proto.op.library : NULL;
	m->stats.graphs.attributed++;
	if (!t->have_op)
		return M_GRAPH_CALL;
	int i = 0;
	while (i < g->n_open &&
	       (g->open[i].corr != a->corr || g->open[i].tp != t))
		i++;
	if (i == g->n_open && !replay_new(m, g, t, a->corr, a->start))
		return M_GRAPH_CALL;
	struct replay *r = &g->open[i];
	a->exec = r->p->op.exec;
	m_op_add_kernel(r->p, a);
	if (++r->got >= t->kernel_nodes)
		ready(g, i);
	return M_GRAPH_CALL;
}

enum m_graph_tie m_graph_kernel(struct dt_model *m, struct dt_activity *a)
{
	struct dt_graphs *g = graphs_of(m);

	m->stats.graphs.kernels++;
	if (!g)
		return M_GRAPH_NONE;
	/* launches seen through their kernels, for traces that lack the
	 * launches themselves */
	struct launch *l = &g->launches[a->corr % (sizeof(g->launches) /
						   sizeof(g->launches[0]))];
	if (l->corr != a->corr) {
		*l = (struct launch){ .corr = a->corr };
		m->stats.graphs.launched++;
	}
	/* a trace older than graph records (1.0) never shows the making */
	const struct dt_file_header *fh = &m->fi->hdr;
	return tie(m, g, a, fh->major > 1 || fh->minor >= 1);
}

const struct dt_activity *m_graph_released(struct dt_model *m, bool all,
					   enum m_graph_tie *tied)
{
	struct dt_graphs *g = m->graphs;
	struct held *h;

	if (!g)
		return NULL;
	free(g->given);
	g->given = NULL;
	if ((h = g->freed)) {
		if (!(g->freed = h->next))
			g->freed_tail = &g->freed;
	} else if ((h = g->held) && (all || g->n_held > HELD_MAX)) {
		if (!(g->held = h->next))
			g->held_tail = &g->held;
	} else {
		return NULL;
	}
	g->n_held--;
	g->given = h;
	*tied = tie(m, g, &h->a, false);
	return &h->a;
}

const struct dt_op *m_graph_next(struct dt_model *m,
				 const struct pending *waiting)
{
	struct dt_graphs *g = m->graphs;
	struct pending *p;

	if (!g)
		return NULL;
	if (g->out) {
		m_pending_release(m, g->out);
		g->out = NULL;
	}
	/* in time order with the calls' own ops */
	if (!(p = g->ready) || (waiting && waiting->op.t_begin < p->op.t_begin))
		return NULL;
	g->ready = p->next;
	if (!g->ready)
		g->ready_tail = NULL;
	g->out = p;
	m_op_finish(p);
	/* sampled recording: a replay launched between windows ran
	 * kernels nobody recorded (one inside a window has its graph's) */
	p->op.unsampled = m->stats.sampling.one_in && !p->op.kernels;
	return &p->op;
}

void m_graph_finish(struct dt_model *m)
{
	struct dt_graphs *g = m->graphs;

	while (g && g->n_open) {
		m->stats.graphs.partial++;
		ready(g, g->n_open - 1);
	}
}

static void free_held_list(struct held *h)
{
	for (struct held *next; h; h = next) {
		next = h->next;
		free(h);
	}
}

void m_graph_free(struct dt_model *m)
{
	struct dt_graphs *g = m->graphs;

	if (!g)
		return;
	for (struct gtemplate *t = g->templates, *next; t; t = next) {
		next = t->next;
		free(t->proto.ptrs);
		free(t);
	}
	for (int i = 0; i < g->n_open; i++)
		m_pending_release(m, g->open[i].p);
	for (struct pending *p = g->ready, *next; p; p = next) {
		next = p->next;
		m_pending_release(m, p);
	}
	if (g->out)
		m_pending_release(m, g->out);
	free_held_list(g->held);
	free_held_list(g->freed);
	free(g->given);
	for (size_t i = 0; i < g->cap; i++)
		for (struct gver *v = g->nodes[i].v, *older; v; v = older) {
			older = v->older;
			free(v);
		}
	free(g->nodes);
	free(g->links);
	free(g);
	m->graphs = NULL;
}
