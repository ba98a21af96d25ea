/*
 * analyzer-model.c - the model's library-neutral core: it replays a
 * trace's records, joins the kernels CUPTI recorded to the calls that
 * launched them, and hands the session's consumers every event, ops in
 * call order once their kernels are in.
 *
 * What a call means is its library's decoder's part (analyzer-decoder.h,
 * listed in analyzer-decoders.c): the core decodes each call's
 * arguments once, remembers the call for launches that come before or
 * after its record, and hands it to the decoder of the library it names
 * (dt_api_def.library). A call that made no op but launched work becomes
 * an op of its own library, described or not. CUDA-graph replays are
 * analyzer-graphs.c's. Nothing here knows a library, and nothing here
 * includes a CUDA header.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyzer-decoder.h"

/* Every consumer's cb with ev. */
#define EMIT(m, cb, ev)                                                  \
	do {                                                             \
		for (int i_ = 0; i_ < (m)->n_cons; i_++)                 \
			if ((m)->cons[i_].cb)                            \
				(m)->cons[i_].cb((m)->cons[i_].arg, ev); \
	} while (0)

/* The low bits of seq: ops are queued and leave in seq order, so the
 * slots they use are neighbours (a scattering hash made every lookup a
 * cache miss); a window of seqs wider than the table only lengthens
 * probes a little. */
/* Sequence numbers are dense in a sound trace but anything in a damaged
 * one: scatter them so that no stride lines them up on one slot. */
static size_t seq_slot(const struct dt_model *m, uint64_t seq)
{
	seq *= 0x9e3779b97f4a7c15ull;
	return (size_t)(seq ^ seq >> 32) & (m->by_seq_cap - 1);
}

static struct pending *pending_of(struct dt_model *m, uint64_t seq)
{
	if (!m->by_seq_cap)
		return NULL;
	for (size_t i = seq_slot(m, seq);; i = (i + 1) & (m->by_seq_cap - 1)) {
		struct seq_slot *e = &m->by_seq[i];
		if (!e->p || e->seq == seq)
			return e->p;
	}
}

/* Twice as many slots; false when memory is short. */
static bool index_grow(struct dt_model *m)
{
	size_t cap = m->by_seq_cap ? m->by_seq_cap * 2 : 1024;
	struct seq_slot *old = m->by_seq, *v = calloc(cap, sizeof(*v));
	size_t ocap = m->by_seq_cap;

	if (!v)
		return false;
	m->by_seq = v;
	m->by_seq_cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].p) {
			size_t k = seq_slot(m, old[i].seq);
			while (v[k].p)
				k = (k + 1) & (cap - 1);
			v[k] = old[i];
		}
	free(old);
	return true;
}

static void index_put(struct dt_model *m, struct pending *p)
{
	/* at most half full; the op stays queued when memory is short, it
	 * just cannot be found by its sequence number */
	if ((m->n_pending + 1) * 2 > m->by_seq_cap && !index_grow(m))
		return;
	size_t k = seq_slot(m, p->op.seq);
	while (m->by_seq[k].p) {
		/* a repeated number (a damaged trace): the first one keeps it */
		if (m->by_seq[k].seq == p->op.seq)
			return;
		k = (k + 1) & (m->by_seq_cap - 1);
	}
	m->by_seq[k] = (struct seq_slot){ p->op.seq, p };
	m->n_pending++;
}

/* Remove p, shifting back the entries of its probe run that follow. */
static void index_drop(struct dt_model *m, struct pending *p)
{
	size_t mask = m->by_seq_cap - 1, i;

	if (!m->by_seq_cap)
		return;
	for (i = seq_slot(m, p->op.seq); m->by_seq[i].p != p;
	     i = (i + 1) & mask)
		if (!m->by_seq[i].p)
			return;
	m->n_pending--;
	for (size_t j = (i + 1) & mask; m->by_seq[j].p; j = (j + 1) & mask) {
		size_t k = seq_slot(m, m->by_seq[j].seq);
		/* j's entry may fill the hole at i unless its home lies
		 * cyclically in (i, j] */
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			m->by_seq[i] = m->by_seq[j];
			i = j;
		}
	}
	m->by_seq[i] = (struct seq_slot){ 0, NULL };
}

/* Keep the queue in call order (an op found late, through its launches,
 * goes before later calls that are already queued). */
static void insert_pending(struct dt_model *m, struct pending *p)
{
	if (!m->tail || m->tail->op.seq < p->op.seq) {
		if (m->tail)
			m->tail->next = p;
		else
			m->head = p;
		m->tail = p;
	} else {
		struct pending **pp = &m->head;
		while (*pp && (*pp)->op.seq < p->op.seq)
			pp = &(*pp)->next;
		p->next = *pp;
		*pp = p;
	}
	if (m->head == p)
		m->head_t_end = p->op.t_end;
}

struct pending *m_pending_new(struct dt_model *m)
{
	struct pending *p = m->spare;

	if (p) {
		struct dt_op_ptr *buf = p->ptr_buf;
		uint32_t cap = p->ptr_cap;
		m->spare = p->next;
		memset(p, 0, sizeof(*p));
		p->ptr_buf = buf;
		p->ptr_cap = cap;
	} else {
		p = calloc(1, sizeof(*p));
	}
	return p;
}

void m_pending_release(struct dt_model *m, struct pending *p)
{
	p->next = m->spare;
	m->spare = p;
}

struct pending *m_pending_of(struct dt_model *m, uint64_t seq)
{
	return pending_of(m, seq);
}

struct pending *m_op_new(struct dt_model *m, const struct dt_rec_api_call *c,
			 const char *name, const char *desc)
{
	struct pending *p;

	/* a library's call inside another's call is part of the outer
	 * call's work (its kernels are the outer call's): no op of its own,
	 * or the execution would be counted twice (a library may run some
	 * of its work through another's) */
	if (c->flags & DT_CALL_NESTED)
		return NULL;
	if (!(p = m_pending_new(m)))
		return NULL;
	p->op.seq = c->seq;
	p->op.exec = c->seq;
	p->op.tid = c->tid;
	p->op.t_begin = c->t_begin;
	p->op.t_end = c->t_end;
	p->op.api = name;
	if (c->api < m->fi->n_apis) {
		uint8_t d = m->api[c->api].dec;
		p->op.library = m->fi->apis[c->api].library;
		p->dec = d == DEC_UNKNOWN ? 0 : d;
	}
	p->op.status = c->status;
	p->op.engine = -1;
	p->op.workspace = -1;
	p->op.tensor_cores = -1;
	p->tc_hint = -1;
	p->op.device = -1;
	p->op.cost.dtype = -1;
	p->op.unsampled = c->flags & DT_CALL_UNSAMPLED;
	p->desc = desc;
	/* launches that came before the call's record */
	struct orphan *o = &m->orphans[c->seq % (sizeof(m->orphans) /
						 sizeof(m->orphans[0]))];
	if (o->call == c->seq && o->kernels) {
		p->op.kernels = o->kernels;
		p->op.gpu_ns = o->gpu_ns;
		p->op.gpu_start = o->start;
		p->op.gpu_end = o->end;
		p->op.device = o->device;
		p->op.gpu_stream = o->stream;
		p->op.converts = o->converts;
		p->op.convert_ns = o->convert_ns;
		p->first_kernel = o->first_kernel;
		o->first_kernel = NULL;
		o->call = 0;
	}
	insert_pending(m, p);
	index_put(m, p);
	m->ops_made++;
	return p;
}

void m_nested_note(struct dt_model *m, const struct dt_rec_api_call *c,
		   const void *note, uint32_t size)
{
	struct nested_note *s = &m->notes[c->tid % M_NOTE_SLOTS];

	if (size > sizeof(s->data))
		return;
	s->tid = c->tid;
	s->api = c->api;
	s->t_begin = c->t_begin;
	s->t_end = c->t_end;
	s->size = size;
	memcpy(s->data, note, size);
}

const void *m_nested_of(const struct dt_model *m,
			const struct dt_rec_api_call *c, const char *library,
			uint32_t *size)
{
	const struct nested_note *s = &m->notes[c->tid % M_NOTE_SLOTS];

	if (s->tid != c->tid || s->t_end == 0 || s->t_begin < c->t_begin ||
	    s->t_end > c->t_end || s->api >= m->fi->n_apis ||
	    !m->fi->apis[s->api].library ||
	    strcmp(m->fi->apis[s->api].library, library))
		return NULL;
	*size = s->size;
	return s->data;
}

bool m_op_ptrs_room(struct pending *p, uint32_t n)
{
	if (n > p->ptr_cap) {
		void *v = realloc(p->ptr_buf, n * sizeof(*p->ptr_buf));
		if (!v)
			return false;
		p->ptr_buf = v;
		p->ptr_cap = n;
	}
	p->ptrs = p->ptr_buf;
	p->n_ptrs = n;
	return true;
}

void m_op_wait(struct dt_model *m, struct pending *p, uint64_t key)
{
	if (!p->wait)
		m->n_waiting++;
	p->wait = key;
}

void m_ops_waited(struct dt_model *m, uint64_t key, uint64_t seq,
		  void (*fn)(void *arg, struct pending *p), void *arg)
{
	for (struct pending *p = m->head; p && m->n_waiting; p = p->next)
		if (p->wait == key && p->op.seq > seq) {
			p->wait = 0;
			m->n_waiting--;
			fn(arg, p);
		}
}

void m_emit_plan(struct dt_model *m, const struct dt_plan_build *b)
{
	EMIT(m, plan, b);
}

struct dt_model_stats *m_stats(struct dt_model *m)
{
	return &m->stats;
}

bool m_pointers(const struct dt_model *m)
{
	return m->pointers;
}

/* Strings ops may point to stay until the model is freed. */
const char *m_keep(struct dt_model *m, char *s)
{
	if (!s)
		return NULL;
	if (m->n_kept == m->cap_kept) {
		size_t cap = m->cap_kept ? m->cap_kept * 2 : 64;
		char **v = realloc(m->kept, cap * sizeof(*v));
		if (!v)
			return s; /* leaked rather than freed early */
		m->kept = v;
		m->cap_kept = cap;
	}
	m->kept[m->n_kept++] = s;
	return s;
}

/* Stands for a signature that does not parse. */
static struct dt_sig bad_sig;

/* The decoder of a function's library, with its state; NULL for a
 * library with none (or whose decoder could not start). */
static struct dec_slot *decoder_of(struct dt_model *m, uint16_t api)
{
	struct api_info *ai = &m->api[api];

	if (ai->dec == DEC_UNKNOWN) {
		const struct dt_api_def *d = &m->fi->apis[api];
		const struct dt_decoder *dec =
			dt_decoder_find(d->library ? d->library : "");
		int i = 0;
		while (i < m->n_decs && m->decs[i].d != dec)
			i++;
		if (dec && i == m->n_decs && i < DECODERS_MAX) {
			m->decs[i] =
				(struct dec_slot){ dec, dec->create(m, m->fi) };
			m->n_decs++;
		}
		ai->dec = dec && i < m->n_decs && m->decs[i].state
				  ? (uint8_t)(i + 1)
				  : 0;
	}
	return ai->dec ? &m->decs[ai->dec - 1] : NULL;
}

/* A call: remembered for the launches that may come before or after it,
 * its arguments decoded once for every consumer, and handed to its
 * library's decoder. */
static void on_call_inner(struct dt_model *m, const struct dt_rec_api_call *c)
{
	const struct dt_file_info *fi = m->fi;
	const struct dt_api_def *api =
		c->api < fi->n_apis ? &fi->apis[c->api] : NULL;
	uint32_t len;
	const uint8_t *data = dt_rec_tail(&c->hdr, &len);
	int n = -1;

	if (c->t_end > m->now)
		m->now = c->t_end;
	if (c->seq > m->max_seq)
		m->max_seq = c->seq;
	if (!api || !api->name)
		return;
	struct recent *rc_ =
		&m->recent[c->seq % (sizeof(m->recent) / sizeof(m->recent[0]))];
	*rc_ = (struct recent){ c->seq,	   c->t_begin, c->t_end, c->tid,
				c->status, c->api,     api->name };
	struct api_info *ai = &m->api[c->api];
	if (!ai->sig) {
		ai->sig = dt_sig_parse(api->sig);
		if (!ai->sig)
			ai->sig = &bad_sig;
	}
	/* the names and types of the API's arguments stay from one call to
	 * the next: only the values are decoded */
	const struct dt_sig *sig = ai->sig;
	struct dt_arg *args = ai->args;
	if (!args && sig != &bad_sig && sig->n <= 40 &&
	    (args = malloc(((size_t)sig->n + 1) * sizeof(*args)))) {
		memcpy(args, sig->proto, (size_t)sig->n * sizeof(*args));
		ai->args = args;
	}
	if (args)
		n = dt_sig_decode_values(sig, data, len, args);
	if (n < 0) {
		m->stats.undecoded++;
		return;
	}
	m->call_args = args;
	m->call_argc = n;
	struct dec_slot *d = decoder_of(m, c->api);
	if (d)
		d->d->call(d->state, c, api, args, n);
}

/* A call that made no op launched work: the op it is, for its decoder
 * to say what it can of. */
static void launch_op(struct dt_model *m, const struct dt_rec_api_call *c,
		      uint16_t api, const char *name)
{
	/* its decoder first, so that the op knows it */
	struct dec_slot *d = api < m->fi->n_apis ? decoder_of(m, api) : NULL;
	struct pending *p = m_op_new(m, c, name, "");

	if (p && d && d->d->launched)
		d->d->launched(d->state, p, api);
}

static void on_call(struct dt_model *m, const struct dt_rec_api_call *c)
{
	m->call_argc = -1;
	uint64_t ops = m->ops_made;

	on_call_inner(m, c);
	/* a call that made no op but launched work before its record came
	 * (a handle created, say, or any call of a library with no
	 * decoder) is listed too */
	struct orphan *o = &m->orphans[c->seq % (sizeof(m->orphans) /
						 sizeof(m->orphans[0]))];
	const struct dt_file_info *fi = m->fi;
	if (m->ops_made != ops || o->call != c->seq || !o->kernels ||
	    c->api >= fi->n_apis || !fi->apis[c->api].name)
		return;
	launch_op(m, c, c->api, fi->apis[c->api].name);
}

/* ----------------------------------------------------------- kernels */

/* Call `seq` launched GPU work: make sure it is an op. */
static void launched(struct dt_model *m, uint64_t seq)
{
	const struct recent *r =
		&m->recent[seq % (sizeof(m->recent) / sizeof(m->recent[0]))];

	if (pending_of(m, seq) || r->seq != seq || !r->name)
		return;
	if (seq <= m->last_out) {
		m->stats.late_kernels++;
		return;
	}
	struct dt_rec_api_call c = { .seq = r->seq,
				     .api = r->api,
				     .tid = r->tid,
				     .t_begin = r->t_begin,
				     .t_end = r->t_end,
				     .status = r->status };
	launch_op(m, &c, r->api, r->name);
}


/* The library of call seq: its API's, or, when its record is not read
 * yet (a long call's kernels come first), the one library of the trace
 * if it has one. NULL when not known. */
static const char *library_of_call(struct dt_model *m, uint64_t seq)
{
	const struct recent *r =
		&m->recent[seq % (sizeof(m->recent) / sizeof(m->recent[0]))];

	if (r->seq == seq && r->name)
		return m->fi->apis[r->api].library;
	if (m->sole_library_apis != m->fi->n_apis) {
		const char *one = NULL;
		bool several = false;
		for (uint32_t i = 0; i < m->fi->n_apis && !several; i++) {
			const char *l = m->fi->apis[i].library;
			if (!l || !m->fi->apis[i].name)
				continue;
			several = one && strcmp(one, l);
			one = one ? one : l;
		}
		m->sole_library = several ? NULL : one;
		m->sole_library_apis = m->fi->n_apis;
	}
	return m->sole_library;
}

/* The call whose launch had CUPTI correlation id corr, 0 when none. */
static uint64_t call_of(const struct dt_model *m, uint32_t corr)
{
	size_t slot = corr % (sizeof(m->corr) / sizeof(m->corr[0]));

	return corr && m->corr[slot].corr == corr ? m->corr[slot].call : 0;
}

/* Timed GPU work goes to the op of its call. */
static void on_kernel(struct dt_model *m, const struct dt_activity *a)
{
	const struct dt_kernel_class *ki = a->kc;
	uint64_t call = a->call, s = a->start, e = a->end;
	uint64_t d = a->gpu_end > a->gpu_start ? a->gpu_end - a->gpu_start : 0;

	if (!call) {
		m->stats.other_kernels++;
		return;
	}
	bool layout = ki && ki->layout;
	struct pending *p = pending_of(m, call);
	if (!p && call > m->max_seq) {
		/* its call is still running: keep the kernel for it */
		struct orphan *o = &m->orphans[call % (sizeof(m->orphans) /
						       sizeof(m->orphans[0]))];
		if (o->call != call) {
			memset(o, 0, sizeof(*o));
			o->call = call;
		}
		if (!o->kernels || s < o->start)
			o->start = s;
		if (!o->kernels) {
			o->device = (int32_t)a->device;
			o->stream = a->stream;
		}
		if (e > o->end)
			o->end = e;
		o->kernels++;
		o->gpu_ns += d;
		if (layout) {
			o->converts++;
			o->convert_ns += d;
		}
		if (!o->first_kernel && ki)
			o->first_kernel = ki->name;
		return;
	}
	if (!p) {
		m->stats.late_kernels++;
		return;
	}
	m_op_add_kernel(p, a);
}

void m_op_add_kernel(struct pending *p, const struct dt_activity *a)
{
	const struct dt_kernel_class *ki = a->kc;
	struct dt_op *op = &p->op;
	uint64_t s = a->start, e = a->end;
	uint64_t d = a->gpu_end > a->gpu_start ? a->gpu_end - a->gpu_start : 0;

	if (!op->kernels || s < op->gpu_start)
		op->gpu_start = s;
	if (op->device < 0) {
		op->device = (int32_t)a->device;
		op->gpu_stream = a->stream;
	}
	if (e > op->gpu_end)
		op->gpu_end = e;
	op->kernels++;
	op->gpu_ns += d;
	if (ki && ki->layout) {
		op->converts++;
		op->convert_ns += d;
	}
	/* which kernels ran says whether tensor cores did, when the engine's
	 * notes are not known: one that did settles it */
	if (ki && ki->tc > p->tc_hint)
		p->tc_hint = ki->tc;
	if (!p->first_kernel && ki)
		p->first_kernel = ki->name;
}

/* ------------------------------------------------------------- public */

struct dt_model *dt_model_new(const struct dt_file_info *fi)
{
	struct dt_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->fi = fi;
	m->pointers = true;
	m->api = calloc(fi->n_apis + 1, sizeof(*m->api));
	if (!m->api) {
		free(m);
		return NULL;
	}
	for (uint32_t i = 0; i <= fi->n_apis; i++)
		m->api[i].dec = DEC_UNKNOWN;
	const char *gpu = dt_info_get(fi, "gpu");
	snprintf(m->stats.gpu_state, sizeof(m->stats.gpu_state), "%s",
		 gpu ? gpu : "");
	m->gpu_unknown = gpu && !strncmp(gpu, "unknown", 7);
	m->cupti_to_mono = (int64_t)(fi->hdr.start_mono - fi->hdr.start_real);
	return m;
}

static void seen(struct dt_model *m, uint64_t t)
{
	if (!m->stats.t_first || t < m->stats.t_first)
		m->stats.t_first = t;
	if (t > m->stats.t_last)
		m->stats.t_last = t;
}

static void emit_call(struct dt_model *m, const struct dt_rec_api_call *c)
{
	const struct dt_file_info *fi = m->fi;
	const struct dt_api_def *api =
		c->api < fi->n_apis ? &fi->apis[c->api] : NULL;
	struct dt_call e = { .seq = c->seq,
			     .tid = c->tid,
			     .api = c->api,
			     .flags = c->flags,
			     .name = api ? api->name : NULL,
			     .library = api && api->name ? api->library : NULL,
			     .sig = api && api->name ? api->sig : NULL,
			     .t_begin = c->t_begin,
			     .t_end = c->t_end,
			     .status = c->status,
			     .rec = &c->hdr };

	e.args = dt_rec_tail(&c->hdr, &e.args_len);
	e.argv = m->call_argc >= 0 ? m->call_args : NULL;
	e.argc = m->call_argc;
	m->stats.calls++;
	m->stats.own_calls += !!(c->flags & DT_CALL_BY_DNNTRACE);
	seen(m, c->t_begin);
	seen(m, c->t_end);
	EMIT(m, call, &e);
}

static const struct dt_op *model_next(struct dt_model *m);

/* Hand out the ops whose kernels are in: calls' own in call order, and
 * replays from CUDA graphs as their kernels come. */
static void emit_ops(struct dt_model *m)
{
	const struct dt_op *op;

	for (;;) {
		if (!(op = m_graph_next(m, m->head)) && !(op = model_next(m)))
			break;
		/* counted as handed out: a call that turned out to capture
		 * into a graph ran nothing itself, its replays are the
		 * executions */
		bool ran = op->origin != DT_OP_CAPTURED;
		m->stats.ops += ran;
		m->stats.sampling.unsampled_ops += op->unsampled && ran;
		EMIT(m, op, op);
	}
}

/* Replayed kernels held until the trace showed their executable made
 * (analyzer-graphs.c), handed out now that they are tied; `all` at the
 * end of the trace. */
static void graph_kernels_released(struct dt_model *m, bool all)
{
	const struct dt_activity *a;
	enum m_graph_tie tie;

	while ((a = m_graph_released(m, all, &tie))) {
		struct dt_activity placed = *a;
		m->stats.other_kernels += tie == M_GRAPH_NONE;
		if (placed.timed)
			placed.placed = dt_place_work(&m->placed, a);
		EMIT(m, activity, &placed);
	}
}

static void emit_activity(struct dt_model *m, const struct dt_rec_hdr *h)
{
	struct dt_activity a = { .rec = h };
	uint32_t len;
	const uint8_t *tail;

	switch (h->type) {
	case DT_REC_KERNEL: {
		const struct dt_rec_kernel *k = (const void *)h;
		tail = dt_rec_tail(h, &len);
		a = (struct dt_activity){
			.kind = DT_ACT_KERNEL,
			.timed = !(k->flags & DT_KERNEL_NO_TIME),
			.gpu_start = k->start,
			.gpu_end = k->end,
			.corr = k->corr,
			.device = k->device,
			.context = k->context,
			.stream = k->stream,
			.kc = m_kernel_class(m, (const char *)tail, len),
			.kernel = k,
			.rec = h,
		};
		m->stats.kernels++;
		m->stats.untimed += !a.timed;
		break;
	}
	/* copies and sets share the fields an activity takes */
#define COPY_ACTIVITY(KIND, r)                                            \
	(struct dt_activity)                                              \
	{                                                                 \
		.kind = (KIND), .timed = true, .gpu_start = (r)->start,   \
		.gpu_end = (r)->end, .corr = (r)->corr,                   \
		.device = (r)->device, .context = (r)->context,           \
		.stream = (r)->stream, .bytes = (r)->bytes, .rec = h      \
	}
	case DT_REC_MEMCPY:
		a = COPY_ACTIVITY(DT_ACT_MEMCPY,
				  (const struct dt_rec_memcpy *)(const void *)h);
		a.copy_kind = ((const struct dt_rec_memcpy *)(const void *)h)
				      ->copy_kind;
		m->stats.copies++;
		break;
	case DT_REC_MEMSET:
		a = COPY_ACTIVITY(DT_ACT_MEMSET,
				  (const struct dt_rec_memset *)(const void *)h);
		m->stats.copies++;
		break;
#undef COPY_ACTIVITY
	}
	a.call = call_of(m, a.corr);
	a.exec = a.call;
	a.start = a.gpu_start + (uint64_t)m->cupti_to_mono;
	a.end = a.gpu_end + (uint64_t)m->cupti_to_mono;
	if (a.timed) {
		/* between sampling windows nothing more comes */
		m->gpu_live = !m->stats.sampling.one_in || m->window_open;
		if (a.end > m->gpu_now)
			m->gpu_now = a.end;
	}
	/* how long recording lasted: calls and kernels (copies carry no
	 * sign of the end) */
	if (a.kind == DT_ACT_KERNEL && a.gpu_end && a.end > m->stats.t_last)
		m->stats.t_last = a.end;
	/* replayed from a CUDA graph: no call launched it */
	if (a.kind == DT_ACT_KERNEL && a.kernel->graph_id && !a.call) {
		enum m_graph_tie tie =
			a.timed ? m_graph_kernel(m, &a) : M_GRAPH_NONE;
		if (tie == M_GRAPH_HELD) {
			graph_kernels_released(m, false); /* too many held? */
			return;
		}
		m->stats.other_kernels += a.timed && tie == M_GRAPH_NONE;
	} else if (a.timed) {
		on_kernel(m, &a);
	}
	if (a.call && !a.library)
		a.library = library_of_call(m, a.call);
	if (a.timed)
		a.placed = dt_place_work(&m->placed, &a);
	EMIT(m, activity, &a);
}

/* What the GPU is sampled for: the metrics' names, kept for the model's
 * life; or why it is not, or what sampling lost. */
static void on_gpu_metrics(struct dt_model *m, const struct dt_rec_gpu_metrics *r)
{
	uint32_t len;
	const char *text = (const char *)dt_rec_tail(&r->hdr, &len);
	struct dt_model_stats *st = &m->stats;
	struct dt_gpu_metrics e = { .device = r->device,
				    .interval_ns = r->interval,
				    .names = m->metric_names,
				    .text = text,
				    .text_len = len,
				    .rec = &r->hdr };

	if (r->code == -2) { /* at the end: samples dropped */
		snprintf(st->gpu_metrics_lost, sizeof(st->gpu_metrics_lost),
			 "%.*s", (int)len, text);
		EMIT(m, gpu_metrics, &e);
		return;
	}
	if (!r->metrics) {
		snprintf(st->gpu_metrics, sizeof(st->gpu_metrics), "%.*s",
			 (int)len, text);
		EMIT(m, gpu_metrics, &e);
		return;
	}
	m->n_metric_names = 0;
	for (uint32_t i = 0, from = 0; i <= len && m->n_metric_names <
			     sizeof(m->metric_names) / sizeof(*m->metric_names);
	     i++) {
		if (i < len && text[i] != '\n')
			continue;
		char buf[128], *name;
		snprintf(buf, sizeof(buf), "%.*s", (int)(i - from), text + from);
		from = i + 1;
		if (!(name = strdup(buf)))
			break;
		m->metric_names[m->n_metric_names++] = m_keep(m, name);
	}
	int n = snprintf(st->gpu_metrics, sizeof(st->gpu_metrics), "on:");
	for (size_t i = 0; i < m->n_metric_names && n > 0 &&
			   (size_t)n < sizeof(st->gpu_metrics);
	     i++)
		n += snprintf(st->gpu_metrics + n, sizeof(st->gpu_metrics) - (size_t)n,
			      "%s %s", i ? "," : "", m->metric_names[i]);
	if (n > 0 && (size_t)n < sizeof(st->gpu_metrics))
		snprintf(st->gpu_metrics + n, sizeof(st->gpu_metrics) - (size_t)n,
			 " every %u us on GPU %u", r->interval / 1000,
			 r->device);
	e.n = (uint32_t)m->n_metric_names;
	e.text = NULL;
	e.text_len = 0;
	EMIT(m, gpu_metrics, &e);
}

static void on_gpu_sample(struct dt_model *m, const struct dt_rec_gpu_sample *r)
{
	uint32_t len;
	const uint8_t *tail = dt_rec_tail(&r->hdr, &len);
	double v[8];
	uint32_t n = len / sizeof(double);

	if (n > m->n_metric_names)
		n = (uint32_t)m->n_metric_names;
	if (n > 8)
		n = 8;
	memcpy(v, tail, n * sizeof(double));
	m->stats.gpu_samples++;
	struct dt_gpu_sample s = {
		.start = r->start + (uint64_t)m->cupti_to_mono,
		.end = r->end + (uint64_t)m->cupti_to_mono,
		.device = r->device,
		.n = n,
		.v = v,
		.names = m->metric_names,
		.rec = &r->hdr,
	};
	EMIT(m, gpu_sample, &s);
}

int dt_gpu_sample_metric(const struct dt_gpu_sample *s, const char *name)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return (int)i;
	return -1;
}

static void emit_device(struct dt_model *m, const struct dt_rec_device *d)
{
	uint32_t len;
	const uint8_t *name = dt_rec_tail(&d->hdr, &len);
	struct dt_device *v = dt_grow_array(m->devices, &m->cap_devices,
					    m->n_devices + 1, sizeof(*v));

	if (!v)
		return;
	m->devices = v;
	v = &m->devices[m->n_devices];
	*v = (struct dt_device){ .id = d->id,
				 .cc_major = d->cc_major,
				 .cc_minor = d->cc_minor,
				 .sms = d->sms,
				 .clock_khz = d->core_clock,
				 .mem_bandwidth_kBps = d->mem_bandwidth,
				 .global_mem = d->global_mem,
				 .l2_size = d->l2_size,
				 .rec = &d->hdr };
	snprintf(v->name, sizeof(v->name), "%.*s", (int)len, name);
	/* a copy each time: a pointer into the array would move */
	struct dt_device e = *v;
	EMIT(m, device, &e);
}

/* What the model keeps of the records that are no event of their own. */
static void other_record(struct dt_model *m, const struct dt_rec_hdr *h)
{
	switch (h->type) {
	case DT_REC_CORR: {
		const struct dt_rec_corr *c = (const void *)h;
		size_t slot = c->corr % (sizeof(m->corr) / sizeof(m->corr[0]));
		m->corr[slot].corr = c->corr;
		m->corr[slot].call = c->call;
		m->stats.launches++;
		launched(m, c->call);
		break;
	}
	case DT_REC_CLOCK: {
		const struct dt_rec_clock *c = (const void *)h;
		if (c->clock == DT_CLOCK_CUPTI)
			m->cupti_to_mono = (int64_t)(c->mono - c->other);
		break;
	}
	case DT_REC_THREAD: {
		const struct dt_rec_thread *r = (const void *)h;
		uint32_t len;
		const char *name = (const char *)dt_rec_tail(h, &len);
		struct dt_thread e = { r->t, r->tid, len, name, h };
		m->stats.threads++;
		EMIT(m, thread, &e);
		break;
	}
	case DT_REC_LOSS: {
		const struct dt_rec_loss *l = (const void *)h;
		struct dt_loss e = { l->t, l->count, l->tid, l->reason, h };
		if (l->reason <= DT_LOSS_CUPTI)
			m->stats.lost_by[l->reason] += l->count;
		EMIT(m, loss, &e);
		break;
	}
	}
}

/* Sampled recording: the windows, and the host time they covered; their
 * words say the sampling ("one window of 100 ms in 10"). A window open
 * when another profiler took CUPTI ends there. */
static void sample_window(struct dt_model *m, const struct dt_gpu_change *g)
{
	struct dt_gpu_sampling *sm = &m->stats.sampling;
	char text[64];

	if (g->state == DT_GPU_WINDOW_OPEN || g->state == DT_GPU_WINDOW_CLOSE) {
		snprintf(text, sizeof(text), "%.*s", (int)g->why_len, g->why);
		sscanf(text, "one window of %u ms", &sm->window_ms);
		sm->one_in = (uint32_t)g->code;
	}
	if (g->state == DT_GPU_WINDOW_OPEN) {
		sm->windows++;
		if (!m->window_open)
			m->window_open = g->t ? g->t : 1;
	} else if (m->window_open && !g->recording) {
		if (g->t > m->window_open)
			sm->window_ns += g->t - m->window_open;
		m->window_open = 0;
	}
}

void dt_model_feed(struct dt_model *m, const struct dt_rec_hdr *h)
{
	switch (h->type) {
	case DT_REC_API_CALL:
		on_call(m, (const void *)h);
		emit_call(m, (const void *)h);
		break;
	case DT_REC_KERNEL:
	case DT_REC_MEMCPY:
	case DT_REC_MEMSET:
		emit_activity(m, h);
		break;
	case DT_REC_DEVICE:
		emit_device(m, (const void *)h);
		break;
	case DT_REC_GPU_STATE: {
		const struct dt_rec_gpu_state *g = (const void *)h;
		struct dt_gpu_change e = {
			.t = g->t,
			.state = g->state,
			.recording = g->state == DT_GPU_ON ||
				     g->state == DT_GPU_RESUMED ||
				     g->state == DT_GPU_WINDOW_OPEN,
			.code = g->code,
					   .dropped = g->dropped,
					   .rec = h };
		e.why = (const char *)dt_rec_tail(h, &e.why_len);
		/* recording stopped or taken: ops no longer wait for the GPU's
		 * records to pass them */
		if (!e.recording)
			m->gpu_live = false;
		sample_window(m, &e);
		/* the header's state was not known yet: this is it, in the
		 * header's words ("on: CUPTI ...", "off: ...") */
		if (m->gpu_unknown &&
		    (g->state == DT_GPU_ON || g->state == DT_GPU_OFF)) {
			snprintf(m->stats.gpu_state, sizeof(m->stats.gpu_state),
				 "%.*s", (int)e.why_len, e.why);
					m->gpu_unknown = false;
		}
		EMIT(m, gpu_state, &e);
		break;
	}
	case DT_REC_GRAPH_NODE:
		m_graph_record(m, h);
		EMIT(m, record, h);
		break;
	case DT_REC_GRAPH_LINK:
		m_graph_record(m, h);
		EMIT(m, record, h);
		graph_kernels_released(m, false);
		break;
	case DT_REC_GPU_METRICS:
		on_gpu_metrics(m, (const void *)h);
		break;
	case DT_REC_GPU_SAMPLE:
		on_gpu_sample(m, (const void *)h);
		break;
	case DT_REC_KERNEL_LIB:
		m_kernel_lib(m, (const void *)h);
		EMIT(m, record, h);
		break;
	case DT_REC_GRAPH_LAUNCH: {
		const struct dt_rec_graph_launch *r = (const void *)h;
		struct dt_graph_launch l = {
			.start = r->start + (uint64_t)m->cupti_to_mono,
			.end = r->end + (uint64_t)m->cupti_to_mono,
			.corr = r->corr,
			.cupti_tid = r->tid,
			.rec = h,
		};
		m_graph_record(m, h);
		EMIT(m, graph_launch, &l);
		break;
	}
	default:
		other_record(m, h);
		EMIT(m, record, h);
		break;
	}
	/* ops come out as host time passes (calls move it), or as a call
	 * that was no op launches work */
	emit_ops(m);
}

void dt_model_finish(struct dt_model *m)
{
	if (m->window_open && m->stats.t_last > m->window_open)
		m->stats.sampling.window_ns +=
			m->stats.t_last - m->window_open;
	m->window_open = 0;
	m->now = UINT64_MAX;
	graph_kernels_released(m, true);
	m_graph_finish(m);
	emit_ops(m);
}

static const struct dt_op *model_next(struct dt_model *m)
{
	struct pending *p = m->head;

	if (m->out) {
		m->out->next = m->spare;
		m->spare = m->out;
		m->out = NULL;
	}
	if (!p)
		return NULL;
	if (m->now != UINT64_MAX &&
	    (m->head_t_end + HORIZON_NS > m->now ||
	     (m->gpu_live && m->head_t_end + HORIZON_NS > m->gpu_now &&
	      m->head_t_end + HORIZON_MAX_NS > m->now)))
		return NULL;
	m->head = p->next;
	if (!m->head) {
		m->tail = NULL;
	} else {
		m->head_t_end = m->head->op.t_end;
		/* the queue is long (ops wait seconds of host time for their
		 * kernels): fetch the op after the head before it is needed */
		const char *n = (const char *)m->head->next;
		for (size_t i = 0; n && i < sizeof(struct pending); i += 64)
			__builtin_prefetch(n + i);
	}
	index_drop(m, p);
	if (p->wait) { /* what its decoder waited for never came */
		p->wait = 0;
		m->n_waiting--;
		struct dec_slot *d = p->dec ? &m->decs[p->dec - 1] : NULL;
		if (d && d->d->unresolved)
			d->d->unresolved(d->state, p);
	}
	m->out = p;
	m->last_out = p->op.seq;
	m_op_finish(p);
	return &p->op;
}

void m_op_finish(struct pending *p)
{
	struct dt_op *op = &p->op;
	op->desc = p->desc;
	op->problem = p->problem ? p->problem : p->desc;
	op->problem_id = (uint64_t)(uintptr_t)op->problem;
	op->brief = p->brief ? p->brief : op->problem;
	op->tensors = p->tensors ? p->tensors->v : NULL;
	op->n_tensors = p->tensors ? p->tensors->n : 0;
	op->ptrs = p->ptrs;
	op->n_ptrs = p->n_ptrs;
	op->first_kernel = p->first_kernel;
	op->recipe = p->recipe.n_nodes || p->recipe.n_knobs ||
				     p->recipe.n_notes || p->recipe.n_params
			     ? &p->recipe
			     : NULL;
	if (op->tensor_cores < 0 && op->cost.tensor_op)
		op->tensor_cores = p->tc_hint;
	op->math = dt_math_of(&op->cost, op->tensor_cores);
}

void dt_model_consumers(struct dt_model *m, const struct dt_consumer *c, int n)
{
	m->cons = c;
	m->n_cons = n;
}

void dt_model_set_pointers(struct dt_model *m, bool on)
{
	m->pointers = on;
}

uint64_t dt_op_tensor_ptr(const struct dt_op *op, uint32_t i)
{
	const struct dt_op_tensor *t =
		i < op->n_tensors ? &op->tensors[i] : NULL;

	if (!t || !op->ptrs)
		return 0;
	if (t->ptr >= 0)
		return (uint32_t)t->ptr < op->n_ptrs ? op->ptrs[t->ptr].value
						     : 0;
	for (uint32_t k = 0; k < op->n_ptrs; k++)
		if (op->ptrs[k].uid >= 0 && op->ptrs[k].uid == t->t.uid)
			return op->ptrs[k].value;
	return 0;
}

const struct dt_model_stats *dt_model_stats(const struct dt_model *m)
{
	return &m->stats;
}

void dt_model_free(struct dt_model *m)
{
	if (!m)
		return;
	m_graph_free(m);
	m->now = UINT64_MAX;
	while (model_next(m))
		;
	while (m->spare) {
		struct pending *p = m->spare;
		m->spare = p->next;
		free(p->ptr_buf);
		free(p);
	}
	free(m->by_seq);
	for (uint32_t i = 0; i <= m->fi->n_apis; i++) {
		if (m->api[i].sig != &bad_sig)
			free(m->api[i].sig);
		free(m->api[i].args);
	}
	free(m->api);
	m_knames_free(m);
	for (int i = 0; i < m->n_decs; i++)
		if (m->decs[i].state)
			m->decs[i].d->destroy(m->decs[i].state);
	for (size_t i = 0; i < m->n_kept; i++)
		free(m->kept[i]);
	free(m->kept);
	free(m->devices);
	free(m);
}
