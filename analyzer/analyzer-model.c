/*
 * analyzer-model.c - replays a trace's cuDNN calls to rebuild what cuDNN
 * held, and lists the operations the program executed.
 *
 * Legacy descriptors are rebuilt generically: every argument of a setter
 * (cudnnSet*, first parameter a descriptor) is kept on the descriptor it
 * sets, under the parameter's name; tensors and filters are also put in a
 * common shape (dims, strides, data type). Backend descriptors keep every
 * attribute set on them and every attribute read back from them. An
 * operation graph is described when it is finalized (programs destroy the
 * graph before they execute its plan), and that description follows the
 * engine config and plan built from it. A call that can launch GPU work
 * becomes an op execution; the kernels CUPTI tied to it are added before
 * it is handed out. Every record ends up as an event for the session's
 * consumers. How things are put into words is analyzer-describe.c's part.
 * Nothing here includes a CUDA header.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyzer-model-internal.h"

/* Every consumer's cb with ev. */
#define EMIT(m, cb, ev)                                                  \
	do {                                                             \
		for (int i_ = 0; i_ < (m)->n_cons; i_++)                 \
			if ((m)->cons[i_].cb)                            \
				(m)->cons[i_].cb((m)->cons[i_].arg, ev); \
	} while (0)

static int64_t enum_value(const char *type, const char *name)
{
	return dt_enum_value(type, name, -12345); /* matches nothing a trace
						     holds */
}

struct cfg_info *m_new_cfg(struct dt_model *m)
{
	struct cfg_list *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->info.engine = -1;
	c->info.cost.dtype = -1;
	c->next = m->cfgs;
	m->cfgs = c;
	return &c->info;
}

/* What an engine config runs: the graph of g, as described at finalize. */
void m_copy_graph(struct cfg_info *c, const struct obj *g)
{
	if (!c || !g || !g->graph)
		return;
	c->graph = strdup(g->graph);
	m_tlist_append(&c->tensors, &g->graph_tensors);
	c->brief = g->brief ? strdup(g->brief) : NULL;
	c->cost = g->cost;
}

static uint64_t hash_ptr(uint64_t p)
{
	p ^= p >> 33;
	p *= 0xff51afd7ed558ccdull;
	return p ^ (p >> 33);
}

/* An array of OBJ_ARRAY elements of a freed descriptor, or a new one. */
static void *array_get(void **free_list, int *n, size_t elem)
{
	return *n ? free_list[--*n] : malloc(OBJ_ARRAY * elem);
}

static void array_put(void **free_list, int *n, void *v, uint32_t cap)
{
	if (v && cap == OBJ_ARRAY && *n < 64)
		free_list[(*n)++] = v;
	else
		free(v);
}

/* Let go of what a descriptor holds. */
static void obj_release(struct dt_model *m, struct obj *o)
{
	array_put((void **)m->free_fields, &m->n_free_fields, o->fields,
		  o->cap_fields);
	for (uint32_t i = 0; i < o->n_attrs; i++)
		free(o->attrs[i].data);
	array_put((void **)m->free_attrs, &m->n_free_attrs, o->attrs,
		  o->cap_attrs);
	free(o->graph);
	m_tlist_free(&o->graph_tensors);
	free(o->snap);
	m_tlist_free(&o->snap_tensors);
	free(o->part);
	free(o->brief);
}

/* Twice as many slots (at most half are used). */
static bool grow(struct dt_model *m)
{
	struct objslot *old = m->objs;
	size_t ocap = m->cap, cap = ocap ? ocap * 2 : 1024;
	struct objslot *v = calloc(cap, sizeof(*v));

	if (!v)
		return false;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].ptr) {
			size_t k = hash_ptr(old[i].ptr) & (cap - 1);
			while (v[k].ptr)
				k = (k + 1) & (cap - 1);
			v[k] = old[i];
		}
	free(old);
	m->objs = v;
	m->cap = cap;
	return true;
}

/* The descriptors alive, by address: open addressing, linear probing, at
 * most half full, each slot pointing to its descriptor (which stays where
 * it is while it lives). */
struct obj *m_obj_find(struct dt_model *m, uint64_t ptr, bool create)
{
	if (!ptr)
		return NULL;
	if (create && (m->used + 1) * 2 > m->cap && !grow(m))
		return NULL;
	if (!m->cap)
		return NULL;
	for (size_t i = hash_ptr(ptr) & (m->cap - 1);;
	     i = (i + 1) & (m->cap - 1)) {
		if (m->objs[i].ptr == ptr)
			return m->objs[i].o;
		if (!m->objs[i].ptr) {
			if (!create)
				return NULL;
			/* descriptors come and go by the million: those
			 * destroyed are used again */
			struct obj *o = m->free_objs;
			if (o)
				m->free_objs = o->next_free;
			else if (!(o = malloc(sizeof(*o))))
				return NULL;
			memset(o, 0, sizeof(*o));
			o->ptr = ptr;
			o->btype = -1;
			m->objs[i] = (struct objslot){ ptr, o };
			m->used++;
			return o;
		}
	}
}

/* A destroyed descriptor leaves the table: what the model keeps of it
 * (snapshots, plans, configs) lives elsewhere, and memory stays bounded
 * by the descriptors alive. Backward-shift deletion keeps probing valid. */
void m_obj_remove(struct dt_model *m, struct obj *o)
{
	size_t mask = m->cap - 1, i = hash_ptr(o->ptr) & mask;

	while (m->objs[i].o != o) {
		if (!m->objs[i].ptr)
			return;
		i = (i + 1) & mask;
	}
	obj_release(m, o);
	o->next_free = m->free_objs;
	m->free_objs = o;
	m->used--;
	for (size_t j = (i + 1) & mask; m->objs[j].ptr; j = (j + 1) & mask) {
		size_t k = hash_ptr(m->objs[j].ptr) & mask;
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			m->objs[i] = m->objs[j];
			i = j;
		}
	}
	m->objs[i] = (struct objslot){ 0, NULL };
}

/* The descriptor a create call made at ptr: new, or one at an address
 * the program used before without destroying it, emptied. */
struct obj *m_obj_new(struct dt_model *m, uint64_t ptr)
{
	size_t used = m->used;
	struct obj *o = m_obj_find(m, ptr, true);

	if (o && m->used == used) {
		obj_release(m, o);
		memset(o, 0, sizeof(*o));
		o->ptr = ptr;
		o->btype = -1;
	}
	return o;
}

/* ------------------------------------------------------ legacy setters */

static void set_field(struct dt_model *m, struct obj *o, const struct dt_arg *a)
{
	struct field *f = NULL;

	for (uint32_t i = 0; i < o->n_fields; i++)
		if (o->fields[i].name_len == a->name_len &&
		    !memcmp(o->fields[i].name, a->name, a->name_len))
			f = &o->fields[i];
	if (!f) {
		if (o->n_fields == o->cap_fields) {
			struct field *nf =
				o->cap_fields
					? realloc(o->fields,
						  2 * o->cap_fields *
							  sizeof(*nf))
					: array_get((void **)m->free_fields,
						    &m->n_free_fields,
						    sizeof(*nf));
			if (!nf)
				return;
			o->fields = nf;
			o->cap_fields =
				o->cap_fields ? 2 * o->cap_fields : OBJ_ARRAY;
		}
		f = &o->fields[o->n_fields++];
	}
	memset(f, 0, sizeof(*f));
	f->name = a->name;
	f->name_len = a->name_len;
	f->type = a->type;
	f->type_len = a->type_len;
	f->code = a->code;
	f->f = a->f;
	if (a->code == 'a') {
		f->count = a->count < MAX_DIMS ? a->count : MAX_DIMS;
		for (uint32_t i = 0; i < f->count; i++)
			f->v[i] = dt_arg_elem_i(a, i);
	} else {
		f->v[0] = a->i;
	}
}

const struct field *m_field(const struct obj *o, const char *name)
{
	size_t n = strlen(name);

	for (uint32_t i = 0; i < o->n_fields; i++)
		if (o->fields[i].name_len == n &&
		    !memcmp(o->fields[i].name, name, n))
			return &o->fields[i];
	return NULL;
}

int64_t m_fval(const struct obj *o, const char *name, int64_t def)
{
	const struct field *f = m_field(o, name);
	return f ? f->v[0] : def;
}

/* Fully packed strides for dims in order (NCHW...). The products are
 * taken modulo 2^64: a crafted trace's dimensions may overflow them, and
 * such a tensor's strides mean nothing anyway. */
static void packed(struct dt_tensor *t)
{
	uint64_t s = 1;
	for (int i = t->nb - 1; i >= 0; i--) {
		t->strides[i] = (int64_t)s;
		s *= (uint64_t)t->dims[i];
	}
}

/* Channels-last strides for dims given as N, C, spatial... */
static void packed_nhwc(struct dt_tensor *t)
{
	uint64_t s = 1;

	if (t->nb < 3)
		return packed(t);
	t->strides[1] = (int64_t)s;
	s *= (uint64_t)t->dims[1];
	for (int i = t->nb - 1; i >= 2; i--) {
		t->strides[i] = (int64_t)s;
		s *= (uint64_t)t->dims[i];
	}
	t->strides[0] = (int64_t)s;
}

/* What normalize_legacy() needs to know of a setter, by its name. */
enum {
	SETTER_KNOWN = 1,
	SETTER_4D = 2,    /* cudnnSet*4dDescriptor* */
	SETTER_4D_EX = 4, /* ... with strides */
	SETTER_ND_EX = 8, /* cudnnSet*NdDescriptorEx: strides derived */
};

static uint8_t setter_flags(struct dt_model *m, uint16_t api, const char *name)
{
	uint8_t *f = &m->api[api].setter;

	if (!*f)
		*f = SETTER_KNOWN |
		     (strstr(name, "4dDescriptor") ? SETTER_4D : 0) |
		     (strstr(name, "4dDescriptorEx") ? SETTER_4D_EX : 0) |
		     (strstr(name, "NdDescriptorEx") ? SETTER_ND_EX : 0);
	return *f;
}

/* Put a legacy tensor or filter descriptor's setter arguments into the
 * common shape, whichever setter was used. */
static void normalize_legacy(struct obj *o, uint8_t setter)
{
	struct dt_tensor *t = &o->t;
	const struct field *dims;
	bool nhwc = m_fval(o, "format", 0) == 1; /* CUDNN_TENSOR_NHWC */

	memset(t, 0, sizeof(*t));
	t->dtype = m_fval(o, "dataType", -1);
	if (setter & SETTER_4D) {
		static const char *const names[2][4] = { { "n", "c", "h", "w" },
							 { "k", "c", "h",
							   "w" } };
		bool filter = m_field(o, "k") != NULL;
		t->nb = 4;
		for (int i = 0; i < 4; i++)
			t->dims[i] = m_fval(o, names[filter][i], 0);
		if (setter & SETTER_4D_EX) {
			static const char *const st[4] = { "nStride", "cStride",
							   "hStride",
							   "wStride" };
			for (int i = 0; i < 4; i++)
				t->strides[i] = m_fval(o, st[i], 0);
		} else if (nhwc) {
			packed_nhwc(t);
		} else {
			packed(t);
		}
	} else if ((dims = m_field(o, "dimA")) ||
		   (dims = m_field(o, "filterDimA"))) {
		const struct field *str = m_field(o, "strideA");
		t->nb = (int)dims->count;
		memcpy(t->dims, dims->v, sizeof(int64_t) * dims->count);
		if (str && str->count == dims->count &&
		    !(setter & SETTER_ND_EX))
			memcpy(t->strides, str->v,
			       sizeof(int64_t) * str->count);
		else if (nhwc)
			packed_nhwc(t);
		else
			packed(t);
	} else {
		return;
	}
	t->valid = true;
}

/* ----------------------------------------------------- backend objects */

struct battr *m_battr(struct obj *o, int64_t name)
{
	for (uint32_t i = 0; i < o->n_attrs; i++)
		if (o->attrs[i].name == name)
			return &o->attrs[i];
	return NULL;
}

void m_set_battr(struct dt_model *m, struct obj *o, int64_t name,
		      int64_t type, const uint8_t *data, uint32_t bytes)
{
	struct battr *a = m_battr(o, name);

	if (!a) {
		if (o->n_attrs == o->cap_attrs) {
			struct battr *na =
				o->cap_attrs
					? realloc(o->attrs, 2 * o->cap_attrs *
								    sizeof(*na))
					: array_get((void **)m->free_attrs,
						    &m->n_free_attrs,
						    sizeof(*na));
			if (!na)
				return;
			o->attrs = na;
			o->cap_attrs =
				o->cap_attrs ? 2 * o->cap_attrs : OBJ_ARRAY;
		}
		a = &o->attrs[o->n_attrs++];
		a->data = NULL;
	}
	free(a->data);
	a->data = NULL;
	a->name = name;
	a->type = type;
	a->bytes = bytes;
	if (bytes > sizeof(a->inl)) {
		a->data = malloc(bytes);
		if (!a->data) {
			a->bytes = 0;
			return;
		}
	}
	if (bytes)
		memcpy(bytes > sizeof(a->inl) ? a->data : a->inl, data, bytes);
}

int64_t m_battr_i64(struct obj *o, int64_t name, int64_t def)
{
	struct battr *a = m_battr(o, name);
	int64_t v = 0;

	if (!a || !a->bytes)
		return def;
	memcpy(&v, bdata(a), a->bytes < 8 ? a->bytes : 8);
	if (a->bytes == 4)
		v = (int32_t)v;
	else if (a->bytes == 1)
		v = (int8_t)v;
	return v;
}

/* Element i of a descriptor-array attribute (a handle). */
uint64_t m_battr_ptr(struct obj *o, int64_t name, uint32_t i)
{
	struct battr *a = m_battr(o, name);
	uint64_t v = 0;

	if (a && (i + 1) * 8 <= a->bytes)
		memcpy(&v, bdata(a) + i * 8, 8);
	return v;
}

static void backend_tensor(struct dt_model *m, struct obj *o)
{
	struct dt_tensor *t = &o->t;
	struct battr *d = m_battr(o, m->a_t_dims),
		     *s = m_battr(o, m->a_t_strides);

	memset(t, 0, sizeof(*t));
	if (!d || !s || d->bytes != s->bytes || d->bytes > MAX_DIMS * 8)
		return;
	t->nb = (int)(d->bytes / 8);
	memcpy(t->dims, bdata(d), d->bytes);
	memcpy(t->strides, bdata(s), s->bytes);
	t->dtype = m_battr_i64(o, m->a_t_dtype, -1);
	t->uid = m_battr_i64(o, m->a_t_uid, -1);
	t->is_virtual = m_battr_i64(o, m->a_t_virtual, 0) != 0;
	t->by_value = m_battr_i64(o, m->a_t_by_value, 0) != 0;
	t->valid = true;
}

/* ------------------------------------------------------------- the ops */

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

static struct pending *add_op(struct dt_model *m,
			      const struct dt_rec_api_call *c, const char *name,
			      const char *desc)
{
	struct pending *p = m_pending_new(m);

	if (!p)
		return NULL;
	p->op.seq = c->seq;
	p->op.exec = c->seq;
	p->op.tid = c->tid;
	p->op.t_begin = c->t_begin;
	p->op.t_end = c->t_end;
	p->op.api = name;
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

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t v;

	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&v, b, 8);
		h = mix(h, v);
	}
	v = n;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | b[i];
	return mix(h, v);
}

/* A legacy descriptor's content, hashed: calls on descriptors that hold
 * the same values share one description however often the program
 * creates and sets them again. */
static void rehash(struct obj *o)
{
	uint64_t h = mix_bytes(0x1234, o->kind ? o->kind : "", o->kind_len);

	for (uint32_t i = 0; i < o->n_fields; i++) {
		const struct field *f = &o->fields[i];
		if (f->code == 'p') /* other descriptors, state buffers */
			continue;
		h = mix_bytes(h, f->name, f->name_len);
		h = mix(h, (uint64_t)f->code << 32 | f->count);
		h = mix_bytes(h, f->v,
			      sizeof(f->v[0]) * (f->count ? f->count : 1));
		h = mix_bytes(h, &f->f, sizeof(f->f));
	}
	if (o->t.valid)
		h = mix_bytes(h, &o->t, sizeof(o->t));
	o->chash = h | 1; /* 0 stays "not hashed yet" */
}

/* The descriptor's content hashed, once after each change. */
static uint64_t obj_chash(struct obj *o)
{
	if (!o->chash)
		rehash(o);
	return o->chash;
}

enum { ROLE_OTHER, ROLE_HANDLE, ROLE_DESC };

/* What each argument of an API is to legacy_op(), worked out on its first
 * call: the same for every call, as the signature is. */
static const uint8_t *arg_roles(struct dt_model *m, uint32_t api,
				const struct dt_arg *args, int n)
{
	if (m->api[api].roles)
		return m->api[api].roles;
	uint8_t *r = calloc((size_t)n + 1, 1);
	if (!r)
		return NULL;
	for (int i = 0; i < n; i++)
		r[i] = is_handle(&args[i]) ? ROLE_HANDLE
		       : is_desc(&args[i]) ? ROLE_DESC
					   : ROLE_OTHER;
	return m->api[api].roles = r;
}

/* A legacy call that can launch work. */
/* Room for an op's n pointers, in a buffer its pending entry keeps from
 * one use to the next: p->ptrs and p->n_ptrs are set. */
static bool ptrs_room(struct pending *p, uint32_t n)
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

static void legacy_op(struct dt_model *m, const struct dt_rec_api_call *c,
		      const struct dt_api_def *api, const struct dt_arg *args,
		      int n)
{
	uint64_t stream = 0, key = mix(0x5eed, c->api);
	struct dt_op_ptr ptr[LEGACY_PTRS];
	uint32_t n_ptr = 0;

	const uint8_t *role = arg_roles(m, c->api, args, n);
	if (!role)
		return;
	/* the problem's key: the descriptors' contents and the scalars;
	 * data pointers are the execution's (a tensor's follows its
	 * descriptor) */
	for (int i = 0; i < n; i++) {
		const struct dt_arg *a = &args[i];
		if (role[i] == ROLE_HANDLE) {
			struct obj *h = m_obj_find(m, a->u, false);
			stream = h ? h->stream : 0;
		} else if (role[i] == ROLE_DESC) {
			struct obj *o = m_obj_find(m, a->u, false);
			key = mix(key, o ? obj_chash(o) : 0);
		} else if (a->code == 'p') {
			if (m->pointers && !a->out && n_ptr < LEGACY_PTRS)
				ptr[n_ptr++] =
					(struct dt_op_ptr){ -1, a->name,
							    a->name_len, a->u };
		} else if (a->data) {
			key = mix_bytes(mix(key, a->count), a->data,
					a->code == 'a' ? a->count * a->width
						       : a->count);
		} else {
			key = mix(key, a->u);
		}
	}
	size_t slot = key & (LEGACY_BUCKETS - 1);
	struct legacy_entry *e = m->legacy[slot];
	while (e && e->key != key)
		e = e->next;
	if (!e &&
	    (e = m_legacy_describe(m, &m->fi->apis[c->api], args, n, key))) {
		e->next = m->legacy[slot];
		m->legacy[slot] = e;
	}
	struct pending *p = add_op(m, c, api->name, e ? e->desc : "");
	if (!p || !e)
		return;
	p->op.engine = e->algo;
	p->op.workspace = e->workspace;
	p->op.stream = stream;
	p->op.tensor_cores = e->tensor_cores;
	p->op.cost = e->cost;
	p->problem = e->problem;
	p->tensors = &e->tensors;
	if (n_ptr && ptrs_room(p, n_ptr))
		memcpy(p->ptrs, ptr, n_ptr * sizeof(*ptr));
}

/* The variant pack's data pointers into p->ptrs, by uid; *ws its
 * workspace. */
static void varpack_pointers(struct dt_model *m, uint64_t varpack,
			     struct pending *p, uint64_t *ws)
{
	struct obj *vp = m_obj_find(m, varpack, false);
	struct battr *uids = vp ? m_battr(vp, m->a_vp_uids) : NULL;
	uint32_t n = uids ? uids->bytes / 8 : 0;

	*ws = vp ? m_battr_ptr(vp, m->a_vp_ws, 0) : 0;
	if (!n || !ptrs_room(p, n))
		return;
	for (uint32_t i = 0; i < n; i++) {
		int64_t uid;
		memcpy(&uid, bdata(uids) + i * 8, 8);
		p->ptrs[i] =
			(struct dt_op_ptr){ uid, NULL, 0,
					    m_battr_ptr(vp, m->a_vp_ptrs, i) };
	}
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

static void plan_op(struct dt_model *m, struct pending *p,
		    struct plan_info *pi);

static void backend_execute(struct dt_model *m, const struct dt_rec_api_call *c,
			    const struct dt_api_def *api,
			    const struct dt_arg *args, int n, bool captured)
{
	uint64_t plan = 0, varpack = 0, stream = 0;

	for (int i = 0; i < n; i++) {
		const struct dt_arg *a = &args[i];
		if (a->name_len == 13 && !memcmp(a->name, "executionPlan", 13))
			plan = a->u;
		else if (a->name_len == 11 &&
			 !memcmp(a->name, "variantPack", 11))
			varpack = a->u;
		else if (is_handle(a)) {
			struct obj *h = m_obj_find(m, a->u, false);
			stream = h ? h->stream : 0;
		}
	}
	struct obj *po = m_obj_find(m, plan, false);
	struct plan_info *pi = po ? po->plan : NULL;
	struct pending *p = add_op(m, c, api->name,
				   "plan=? (not finalized in this trace)");
	if (!p)
		return;
	p->op.stream = stream;
	/* cudnnBackendPopulateCudaGraph, UpdateCudaGraph: graph nodes */
	if (captured) {
		p->op.origin = DT_OP_CAPTURED;
		m->stats.graphs.captured++;
	}
	if (m->pointers)
		varpack_pointers(m, varpack, p, &p->op.workspace_ptr);
	if (pi) {
		plan_op(m, p, pi);
	} else {
		/* finalized on another thread, whose records may come later */
		p->plan_ptr = plan;
		m->n_unplanned++;
	}
}

/* The plan of a backend execution: its description, engine, workspace,
 * graph and cost. */
static void plan_op(struct dt_model *m, struct pending *p,
		    struct plan_info *pi)
{
	struct cfg_info *cfg = pi->cfg;

	pi->executions++;
	/* the program may have read the knobs after building the plan */
	if (cfg && !cfg->knobs)
		cfg->knobs = (char *)m_keep(m, m_knobs_of(m, pi->cfg_ptr));
	if (!cfg || !cfg->graph)
		m->stats.plans.unknown_runs++;
	p->desc = m_plan_desc(m, pi);
	p->op.plan = pi->id;
	p->op.workspace = pi->workspace;
	if (!cfg)
		return;
	p->op.knobs = cfg->knobs;
	p->op.notes = cfg->notes;
	p->op.engine = cfg->engine;
	p->op.cost = cfg->cost;
	p->problem = cfg->graph;
	p->brief = cfg->brief;
	p->tensors = &cfg->tensors;
	if (cfg->notes)
		p->op.tensor_cores = strstr(cfg->notes, "TENSOR_CORE") != NULL;
}

/* A plan finalized at seq: executions of its address that were called
 * after that but read before it (another thread's records) are its. */
static void plan_late(struct dt_model *m, uint64_t ptr, uint64_t seq,
		      struct plan_info *pi)
{
	for (struct pending *p = m->head; p && m->n_unplanned; p = p->next)
		if (p->plan_ptr == ptr && p->op.seq > seq) {
			p->plan_ptr = 0;
			m->n_unplanned--;
			plan_op(m, p, pi);
		}
}

/* --------------------------------------------------------------- calls */

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Can this call launch GPU work? The same rule the shim uses to tag
 * launches: it takes a handle by value and is not a query. */
static bool launches(const struct dt_api_def *api)
{
	return (strstr(api->sig, "handle:p,") == api->sig ||
		strstr(api->sig, ",handle:p")) &&
	       !strstr(api->name, "Get") && !strstr(api->name, "Query") &&
	       strcmp(api->name, "cudnnDestroy") &&
	       strcmp(api->name, "cudnnSetStream");
}

/* What a function does to the model's state, by its name: worked out
 * once per API of the file. */
enum api_class {
	API_UNKNOWN, /* not classified yet */
	API_OTHER,
	API_BK_CREATE,
	API_BK_DESTROY,
	API_BK_SET,
	API_BK_GET,
	API_BK_FINALIZE,
	API_BK_EXECUTE,
	API_BK_POPULATE, /* an execution put into a CUDA graph */
	API_BK_OTHER,
	API_CREATE_HANDLE,
	API_SET_STREAM,
	API_CREATE_DESC,
	API_DESTROY,
	API_DERIVE_BN,
	API_SETTER,
	API_LAUNCH,
};

static enum api_class classify(const struct dt_api_def *api)
{
	static const struct {
		const char *name;
		enum api_class c;
	} exact[] = {
		{ "cudnnBackendCreateDescriptor", API_BK_CREATE },
		{ "cudnnBackendDestroyDescriptor", API_BK_DESTROY },
		{ "cudnnBackendSetAttribute", API_BK_SET },
		{ "cudnnBackendGetAttribute", API_BK_GET },
		{ "cudnnBackendFinalize", API_BK_FINALIZE },
		{ "cudnnBackendExecute", API_BK_EXECUTE },
		/* ops too, which only put their work into a CUDA graph */
		{ "cudnnBackendPopulateCudaGraph", API_BK_POPULATE },
		{ "cudnnBackendUpdateCudaGraph", API_BK_POPULATE },
		{ "cudnnCreate", API_CREATE_HANDLE },
		{ "cudnnSetStream", API_SET_STREAM },
		{ "cudnnDeriveBNTensorDescriptor", API_DERIVE_BN },
		{ "cudnnSetCallback", API_OTHER },
	};
	const char *name = api->name;

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i].name))
			return exact[i].c;
	if (starts(name, "cudnnBackend"))
		return API_BK_OTHER;
	if (starts(name, "cudnnCreate") && strstr(name, "Descriptor"))
		return API_CREATE_DESC;
	if (starts(name, "cudnnDestroy"))
		return API_DESTROY;
	if (starts(name, "cudnnSet"))
		return API_SETTER;
	return launches(api) ? API_LAUNCH : API_OTHER;
}

/* A plan restored from its JSON representation (or whose JSON was read
 * back): what the JSON says becomes the plan's, as if it had been built. */
static void restore(struct dt_model *m, struct plan_info *pi,
		    const struct battr *json)
{
	char why[256];

	if (!pi->cfg && !(pi->cfg = m_new_cfg(m)))
		return;
	if (!m_restore_plan(m, pi->cfg, bdata(json), json->bytes, why,
			    sizeof(why))) {
		m->stats.plans.restored++;
		pi->no_graph = NULL;
	} else {
		m->stats.plans.opaque++;
		pi->no_graph = m_keep(m, strdup(why));
	}
}

/* What finalizing a tensor, an operation (or what it points to) or an
 * operation graph makes of it: the tensor normalized, the others
 * described as they are now. False for other descriptors. */
bool m_finalize_desc(struct dt_model *m, struct obj *o)
{
	if (o->btype == m->bt_tensor) {
		backend_tensor(m, o);
	} else if (m_snapshot_type(m, o->btype)) {
		struct dt_sbuf b = { 0 };
		struct tlist j = { 0 };
		free(o->snap);
		m_tlist_free(&o->snap_tensors);
		free(o->part);
		o->snap = NULL; /* describe what it points to, not this */
		m_describe_battrs(m, &b, &j, o, 1);
		o->snap = dt_sb_take(&b);
		o->snap_tensors = j;
		o->part = m_cost_part(m, o);
	} else if (o->btype == m->bt_graph) {
		free(o->graph);
		m_tlist_free(&o->graph_tensors);
		o->graph = m_describe_graph(m, o, &o->graph_tensors, &o->cost);
		free(o->brief);
		o->brief = m_graph_brief(m, o);
	} else {
		return false;
	}
	return true;
}

static void on_backend_call(struct dt_model *m, const struct dt_rec_api_call *c,
			    enum api_class cls, struct dt_arg *args, int n)
{
	bool ok = c->status == 0;

	if (cls == API_BK_CREATE && n == 2 && ok) {
		struct obj *o = m_obj_new(m, args[1].u);
		if (o) {
			o->btype = args[0].i;
		}
	} else if (cls == API_BK_DESTROY && n == 1) {
		struct obj *o = m_obj_find(m, args[0].u, false);
		/* an engine config read back from a plan: keep its knobs */
		if (o && o->btype == m->bt_cfg && o->cfg && !o->cfg->knobs)
			o->cfg->knobs =
				(char *)m_keep(m, m_knobs_of(m, o->ptr));
		if (o)
			m_obj_remove(m, o);
	} else if (cls == API_BK_SET && n == 5 && ok) {
		struct obj *o = m_obj_find(m, args[0].u, false);
		if (o && o->btype >= 0)
			m_set_battr(m, o, args[1].i, args[2].i, args[4].data,
				  args[4].count);
	} else if (cls == API_BK_GET && n == 6 && ok) {
		struct obj *o = m_obj_find(m, args[0].u, false);
		if (!o || o->btype < 0)
			return;
		m_set_battr(m, o, args[1].i, args[2].i, args[5].data,
			  args[5].count);
		int64_t attr = args[1].i;
		if (attr == m->a_cfg_knobs) {
			/* the knob descriptors cuDNN filled in belong to this
			 * config: reading their values completes its knobs */
			for (uint32_t i = 0; i < args[5].count / 8; i++) {
				struct obj *k = m_obj_find(
					m, m_battr_ptr(o, attr, i), false);
				if (k)
					k->owner = o->ptr;
			}
		} else if ((attr == m->a_knob_value ||
			    attr == m->a_knob_type) &&
			   o->owner) {
			struct obj *cfg = m_obj_find(m, o->owner, false);
			if (cfg && cfg->cfg)
				cfg->cfg->knobs = (char *)m_keep(
					m, m_knobs_of(m, cfg->ptr));
		} else if (attr == m->a_heur_results) {
			/* engine configs cuDNN filled in: they run this graph
			 */
			struct obj *g = m_obj_find(
				m, m_battr_ptr(o, m->a_heur_graph, 0), false);
			for (uint32_t i = 0; i < args[5].count / 8; i++) {
				struct obj *cfg = m_obj_find(
					m, m_battr_ptr(o, attr, i), false);
				if (!cfg)
					continue;
				cfg->cfg = m_new_cfg(m);
				m_copy_graph(cfg->cfg, g);
			}
		} else if (attr == m->a_cfg_engine) {
			/* the engine read back shares the config's knowledge */
			struct obj *e =
				m_obj_find(m, m_battr_ptr(o, attr, 0), false);
			if (e)
				e->cfg = o->cfg;
		} else if (attr == m->a_engine_index && o->cfg) {
			o->cfg->engine = m_battr_i64(o, attr, -1);
		} else if (attr == m->a_engine_notes && o->cfg) {
			/* ops may point to the old notes: they stay */
			o->cfg->notes = (char *)m_keep(m, m_notes_of(o, attr));
		} else if (attr == m->a_plan_json && o->plan &&
			   !o->plan->no_graph &&
			   (!o->plan->cfg || !o->plan->cfg->graph)) {
			/* the JSON of a plan whose graph the trace lacks */
			restore(m, o->plan, m_battr(o, attr));
		} else if (attr == m->a_plan_ws && o->plan) {
			o->plan->workspace = m_battr_i64(o, attr, -1);
		} else if (attr == m->a_plan_cfg && o->plan) {
			/* the plan's engine config, read back (dnntrace does
			 * this once per plan): what is learned through it is
			 * the plan's */
			struct obj *cfg =
				m_obj_find(m, m_battr_ptr(o, attr, 0), false);
			if (cfg && !o->plan->cfg)
				o->plan->cfg = m_new_cfg(m);
			if (cfg)
				cfg->cfg = o->plan->cfg;
		}
	} else if (cls == API_BK_FINALIZE && n == 1 && ok) {
		struct obj *o = m_obj_find(m, args[0].u, false);
		if (!o || o->btype < 0)
			return;
		if (m_finalize_desc(m, o)) {
			/* a tensor, an operation or a graph: described */
		} else if (o->btype == m->bt_engine) {
			struct obj *g = m_obj_find(
				m, m_battr_ptr(o, m->a_engine_graph, 0), false);
			o->cfg = m_new_cfg(m);
			if (o->cfg)
				o->cfg->engine =
					m_battr_i64(o, m->a_engine_index, -1);
			m_copy_graph(o->cfg, g);
		} else if (o->btype == m->bt_cfg) {
			struct obj *e = m_obj_find(
				m, m_battr_ptr(o, m->a_cfg_engine, 0), false);
			if (e && e->cfg)
				o->cfg = e->cfg;
			/* its knob choices, while they are alive */
			if (o->cfg && !o->cfg->knobs)
				o->cfg->knobs = (char *)m_keep(
					m, m_knobs_of(m, o->ptr));
		} else if (o->btype == m->bt_plan) {
			struct obj *cfg = m_obj_find(
				m, m_battr_ptr(o, m->a_plan_cfg, 0), false);
			struct plan_info *pi = calloc(1, sizeof(*pi));
			if (!pi)
				return;
			pi->id = ++m->n_plans;
			pi->cfg = cfg ? cfg->cfg : NULL;
			pi->cfg_ptr = cfg ? cfg->ptr : 0;
			pi->workspace = m_battr_i64(o, m->a_plan_ws, -1);
			pi->next = m->plans;
			m->plans = pi;
			o->plan = pi;
			if (cfg)
				m->stats.plans.built++;
			else if (m_battr(o, m->a_plan_json))
				restore(m, pi, m_battr(o, m->a_plan_json));
			if (m->n_unplanned)
				plan_late(m, o->ptr, c->seq, pi);
			struct dt_plan_build b = {
				.plan = pi->id,
				.problem = pi->cfg ? pi->cfg->graph : NULL,
				.brief = pi->cfg ? pi->cfg->brief : NULL,
				.kind = pi->cfg ? pi->cfg->cost.kind
						: DT_KIND_OTHER,
				.t = c->t_begin,
				.host_ns = c->t_end - c->t_begin,
			};
			EMIT(m, plan, &b);
		}
	}
}

static void derive_bn(struct dt_model *m, const struct dt_arg *args);

/* Stands for a signature that does not parse. */
static struct dt_sig bad_sig;

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
	*rc_ = (struct recent){ c->seq, c->t_begin, c->t_end,
				c->tid, c->status,  api->name };
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
	const char *name = api->name;
	bool ok = c->status == 0;
	uint8_t *cls = &ai->cls;

	if (*cls == API_UNKNOWN)
		*cls = (uint8_t)classify(api);
	switch ((enum api_class) * cls) {
	case API_BK_CREATE:
	case API_BK_DESTROY:
	case API_BK_SET:
	case API_BK_GET:
	case API_BK_FINALIZE:
	case API_BK_OTHER:
		on_backend_call(m, c, (enum api_class) * cls, args, n);
		return;
	case API_BK_EXECUTE:
	case API_BK_POPULATE:
		backend_execute(m, c, api, args, n, *cls == API_BK_POPULATE);
		return;
	case API_CREATE_HANDLE: /* handles and the stream each works on */
		if (n == 1 && ok)
			m_obj_new(m, args[0].u);
		return;
	case API_SET_STREAM:
		if (n == 2 && ok) {
			struct obj *o = m_obj_find(m, args[0].u, true);
			if (o)
				o->stream = args[1].u;
		}
		return;
	case API_CREATE_DESC: /* cudnnCreate<Kind>Descriptor(&d) */
		if (n == 1 && args[0].out && ok) {
			struct obj *o = m_obj_new(m, args[0].u);
			if (o) {
				/* cudnnCreate<Kind>Descriptor */
				if (!ai->kind_len)
					ai->kind_len =
						(uint8_t)(strstr(name + 11,
								 "Descriptor") -
							  name - 11);
				o->kind = name + 11;
				o->kind_len = ai->kind_len;
			}
		}
		return;
	case API_DESTROY:
		if (n == 1) {
			struct obj *o = m_obj_find(m, args[0].u, false);
			if (o)
				m_obj_remove(m, o);
		}
		return;
	case API_DERIVE_BN:
		if (n == 3 && ok)
			derive_bn(m, args);
		return;
	case API_SETTER:
		/* its arguments describe the descriptor it is given first */
		if (n > 1 && args[0].code == 'p' && ok) {
			struct obj *o = m_obj_find(m, args[0].u, false);
			if (!o)
				return;
			for (int i = 1; i < n; i++)
				set_field(m, o, &args[i]);
			normalize_legacy(o, setter_flags(m, c->api, name));
			o->chash = 0;
		}
		return;
	case API_LAUNCH:
		legacy_op(m, c, api, args, n);
		return;
	case API_OTHER:
	case API_UNKNOWN:
		return;
	}
}

/* The scale/bias/mean/variance tensor batch norm derives from x: 1xCx1x1
 * (spatial modes) or 1xCxHxW (per activation), in float for half and
 * bfloat16 data, as cuDNN documents it. */
static void derive_bn(struct dt_model *m, const struct dt_arg *args)
{
	struct obj *d = m_obj_find(m, args[0].u, false);
	struct obj *x = m_obj_find(m, args[1].u, false);

	if (!d || !x || !x->t.valid)
		return;
	d->t = x->t;
	d->t.dims[0] = 1;
	for (int i = 2; i < d->t.nb; i++)
		if (args[2].i != m->bn_per_activation)
			d->t.dims[i] = 1;
	if (x->t.dtype == DT_DTYPE_HALF || x->t.dtype == DT_DTYPE_BFLOAT16)
		d->t.dtype = DT_DTYPE_FLOAT;
	packed(&d->t);
	d->chash = 0;
}
static void on_call(struct dt_model *m, const struct dt_rec_api_call *c)
{
	m->call_argc = -1;
	uint64_t ops = m->ops_made;

	on_call_inner(m, c);
	/* a call that is no computation but launched work before its record
	 * came (cudnnCreate, say) is listed too */
	struct orphan *o = &m->orphans[c->seq % (sizeof(m->orphans) /
						 sizeof(m->orphans[0]))];
	const struct dt_file_info *fi = m->fi;
	if (m->ops_made != ops || o->call != c->seq || !o->kernels ||
	    c->api >= fi->n_apis || !fi->apis[c->api].name)
		return;
	struct pending *p = add_op(m, c, fi->apis[c->api].name, "");
	if (p)
		dt_cost_legacy(&p->op.cost, p->op.api, NULL, 0, NULL);
}

/* ----------------------------------------------------------- kernels */

/* Call `seq` launched GPU work: make sure it is an op. */
static void launched(struct dt_model *m, uint64_t seq)
{
	const struct recent *r =
		&m->recent[seq % (sizeof(m->recent) / sizeof(m->recent[0]))];

	if (pending_of(m, seq) || r->seq != seq || !r->api)
		return;
	if (seq <= m->last_out) {
		m->stats.late_kernels++;
		return;
	}
	struct dt_rec_api_call c = { .seq = r->seq,
				     .tid = r->tid,
				     .t_begin = r->t_begin,
				     .t_end = r->t_end,
				     .status = r->status };
	struct pending *p = add_op(m, &c, r->api, "");
	if (p)
		dt_cost_legacy(&p->op.cost, r->api, NULL, 0, NULL);
}

/* A kernel name's hash: names differ in their template arguments, late
 * in long names, so the ends, the middle and the length are enough to
 * pick a slot; a comparison confirms. */
static uint64_t kname_hash(const char *name, uint32_t len)
{
	uint64_t a = 0, b = 0, c = 0;

	memcpy(&a, name, len < 8 ? len : 8);
	if (len > 8)
		memcpy(&b, name + len - 8, 8);
	if (len > 16)
		memcpy(&c, name + len / 2 - 4, 8);
	uint64_t h = (a ^ len) * 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 29) ^ b) * 0xff51afd7ed558ccdull;
	h = (h ^ (h >> 32) ^ c) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

static bool kname_grow(struct dt_model *m)
{
	void *v = dt_grow_array(m->knames, &m->cap_knames, m->n_knames + 1,
				sizeof(*m->knames));
	if (!v)
		return false;
	m->knames = v;
	if ((m->n_knames + 1) * 2 <= m->cap_kname_idx)
		return true;
	uint32_t cap = m->cap_kname_idx ? m->cap_kname_idx * 2 : 1024;
	uint32_t *idx = calloc(cap, sizeof(*idx));
	if (!idx)
		return false;
	for (uint32_t i = 0; i < m->n_knames; i++) {
		const struct dt_kernel_class *k = m->knames[i];
		uint32_t j = (uint32_t)kname_hash(k->name, k->len) & (cap - 1);
		while (idx[j])
			j = (j + 1) & (cap - 1);
		idx[j] = i + 1;
	}
	free(m->kname_idx);
	m->kname_idx = idx;
	m->cap_kname_idx = cap;
	return true;
}

/* The library that registered the kernel named name (len bytes), or
 * NULL. */
static const char *kreg_find(const struct dt_model *m, const char *name,
			     uint32_t len)
{
	if (!m->cap_kregs)
		return NULL;
	uint64_t h = dt_hash(name, len, 0);
	h = h ? h : 1; /* as kreg_add keeps it: 0 marks a free entry */
	for (size_t j = h & (m->cap_kregs - 1); m->kregs[j].hash;
	     j = (j + 1) & (m->cap_kregs - 1))
		if (m->kregs[j].hash == h)
			return m->kreg_paths[m->kregs[j].path];
	return NULL;
}

/* What the registering library says of a kernel, over what its name
 * says. */
static void kreg_apply(struct dt_kernel_class *k, const char *module)
{
	k->module = module;
	enum dt_lib lib = dt_lib_of_path(module, strlen(module));
	if (lib != DT_LIB_OTHER) {
		k->lib = lib;
		k->lib_by_module = true;
	}
}

static bool kreg_add(struct dt_model *m, uint64_t h, uint32_t path)
{
	if (!h)
		h = 1;
	if (2 * (m->n_kregs + 1) > m->cap_kregs) {
		size_t cap = m->cap_kregs ? 2 * m->cap_kregs : 1024;
		struct kreg *t = calloc(cap, sizeof(*t));
		if (!t)
			return false;
		for (size_t i = 0; i < m->cap_kregs; i++) {
			if (!m->kregs[i].hash)
				continue;
			size_t j = m->kregs[i].hash & (cap - 1);
			while (t[j].hash)
				j = (j + 1) & (cap - 1);
			t[j] = m->kregs[i];
		}
		free(m->kregs);
		m->kregs = t;
		m->cap_kregs = cap;
	}
	size_t j = h & (m->cap_kregs - 1);
	for (; m->kregs[j].hash; j = (j + 1) & (m->cap_kregs - 1))
		if (m->kregs[j].hash == h)
			return true; /* the first library to register it */
	m->kregs[j] = (struct kreg){ h, path };
	m->n_kregs++;
	return true;
}

/* KERNEL_LIB: the kernels a library registered; names seen already take
 * it too. */
static void on_kernel_lib(struct dt_model *m, const struct dt_rec_kernel_lib *r)
{
	uint32_t len;
	const uint8_t *t = dt_rec_tail(&r->hdr, &len);

	if ((uint64_t)r->count * 8 + r->path_len > len || !r->path_len)
		return;
	const char *path = (const char *)t + (size_t)r->count * 8;
	uint32_t p;
	for (p = 0; p < m->n_kreg_paths; p++)
		if (strlen(m->kreg_paths[p]) == r->path_len &&
		    !memcmp(m->kreg_paths[p], path, r->path_len))
			break;
	if (p == m->n_kreg_paths) {
		char **paths = realloc(m->kreg_paths,
				       (p + 1) * sizeof(*paths));
		if (!paths)
			return;
		m->kreg_paths = paths;
		if (!(paths[p] = strndup(path, r->path_len)))
			return;
		m->n_kreg_paths++;
	}
	for (uint32_t i = 0; i < r->count; i++) {
		uint64_t h;
		memcpy(&h, t + (size_t)i * 8, 8);
		if (!kreg_add(m, h, p))
			return;
	}
	m->stats.kernel_registrations += r->count;
	for (uint32_t i = 0; i < m->n_knames; i++) {
		struct dt_kernel_class *k = m->knames[i];
		const char *module = k->module ? NULL
					       : kreg_find(m, k->name, k->len);
		if (module)
			kreg_apply(k, module);
	}
}

/* What a kernel's name says: its entry, made the first time the name
 * is seen. NULL only when out of memory. */
const struct dt_kernel_class *m_kernel_class(struct dt_model *m,
					     const char *name, uint32_t len)
{
	uint32_t mask = m->cap_kname_idx - 1, j;

	if (m->cap_kname_idx) {
		for (j = (uint32_t)kname_hash(name, len) & mask;
		     m->kname_idx[j]; j = (j + 1) & mask) {
			const struct dt_kernel_class *k =
				m->knames[m->kname_idx[j] - 1];
			if (k->len == len && !memcmp(k->name, name, len))
				return k;
		}
	}
	if (!kname_grow(m))
		return NULL;
	/* the demangled name beside the name, in one block: the entry is
	 * freed as one */
	char *nul = strndup(name, len);
	char *d = nul ? dt_demangle(nul) : NULL;
	size_t d_n = d ? strlen(d) + 1 : 0;
	struct dt_kernel_class *k =
		nul ? malloc(sizeof(*k) + len + 1 + d_n) : NULL;
	free(nul);
	if (!k) {
		free(d);
		return NULL;
	}
	char *copy = (char *)(k + 1);
	memcpy(copy, name, len);
	copy[len] = 0;
	if (d)
		memcpy(copy + len + 1, d, d_n);
	free(d);
	dt_kernel_classify(name, len, k);
	k->demangled = d_n ? copy + len + 1 : copy;
	k->module = NULL;
	k->lib_by_module = false;
	const char *module = kreg_find(m, name, len);
	if (module)
		kreg_apply(k, module);
	k->id = m->n_knames;
	k->hash = dt_hash(name, len, 0xf05e);
	k->name = copy;
	k->len = len;
	mask = m->cap_kname_idx - 1;
	for (j = (uint32_t)kname_hash(name, len) & mask; m->kname_idx[j];
	     j = (j + 1) & mask)
		;
	m->kname_idx[j] = m->n_knames + 1;
	m->knames[m->n_knames++] = k;
	return k;
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
	const char *bt = "cudnnBackendDescriptorType_t";
	const char *an = "cudnnBackendAttributeName_t";

	if (!m)
		return NULL;
	m->fi = fi;
	m->pointers = true;
	m->api = calloc(fi->n_apis + 1, sizeof(*m->api));
	if (!m->api) {
		free(m);
		return NULL;
	}
	const char *gpu = dt_info_get(fi, "gpu");
	snprintf(m->stats.gpu_state, sizeof(m->stats.gpu_state), "%s",
		 gpu ? gpu : "");
	m->gpu_unknown = gpu && !strncmp(gpu, "unknown", 7);
	m->bn_per_activation = enum_value("cudnnBatchNormMode_t",
					  "CUDNN_BATCHNORM_PER_ACTIVATION");
	m->cupti_to_mono = (int64_t)(fi->hdr.start_mono - fi->hdr.start_real);
	m->bt_tensor = enum_value(bt, "CUDNN_BACKEND_TENSOR_DESCRIPTOR");
	m->bt_graph = enum_value(bt, "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR");
	m->bt_engine = enum_value(bt, "CUDNN_BACKEND_ENGINE_DESCRIPTOR");
	m->bt_cfg = enum_value(bt, "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR");
	m->bt_heur = enum_value(bt, "CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR");
	m->bt_plan = enum_value(bt, "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR");
	m->bt_varpack = enum_value(bt, "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR");
	m->bt_knob_choice =
		enum_value(bt, "CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR");
	m->a_norm_phase = enum_value(an, "CUDNN_ATTR_OPERATION_NORM_FWD_PHASE");
	m->bt_pointwise = enum_value(bt, "CUDNN_BACKEND_POINTWISE_DESCRIPTOR");
	m->a_pw_mode = enum_value(an, "CUDNN_ATTR_POINTWISE_MODE");
	m->bt_conv = enum_value(bt, "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR");
	m->a_conv_pre = enum_value(an, "CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS");
	m->a_conv_post = enum_value(an, "CUDNN_ATTR_CONVOLUTION_POST_PADDINGS");
	m->a_conv_stride =
		enum_value(an, "CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES");
	m->a_conv_dil = enum_value(an, "CUDNN_ATTR_CONVOLUTION_DILATIONS");
	m->a_graph_ops = enum_value(an, "CUDNN_ATTR_OPERATIONGRAPH_OPS");
	m->a_heur_graph =
		enum_value(an, "CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH");
	m->a_heur_results = enum_value(an, "CUDNN_ATTR_ENGINEHEUR_RESULTS");
	m->a_cfg_engine = enum_value(an, "CUDNN_ATTR_ENGINECFG_ENGINE");
	m->a_engine_graph = enum_value(an, "CUDNN_ATTR_ENGINE_OPERATION_GRAPH");
	m->a_engine_index = enum_value(an, "CUDNN_ATTR_ENGINE_GLOBAL_INDEX");
	m->a_plan_cfg =
		enum_value(an, "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG");
	m->a_plan_ws =
		enum_value(an, "CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE");
	m->a_plan_json =
		enum_value(an, "CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION");
	m->a_t_dtype = enum_value(an, "CUDNN_ATTR_TENSOR_DATA_TYPE");
	m->a_t_dims = enum_value(an, "CUDNN_ATTR_TENSOR_DIMENSIONS");
	m->a_t_strides = enum_value(an, "CUDNN_ATTR_TENSOR_STRIDES");
	m->a_t_uid = enum_value(an, "CUDNN_ATTR_TENSOR_UNIQUE_ID");
	m->a_t_virtual = enum_value(an, "CUDNN_ATTR_TENSOR_IS_VIRTUAL");
	m->a_t_by_value = enum_value(an, "CUDNN_ATTR_TENSOR_IS_BY_VALUE");
	m->a_cfg_knobs = enum_value(an, "CUDNN_ATTR_ENGINECFG_KNOB_CHOICES");
	m->a_knob_type = enum_value(an, "CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE");
	m->a_knob_value = enum_value(an, "CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE");
	m->a_engine_notes = enum_value(an, "CUDNN_ATTR_ENGINE_NUMERICAL_NOTE");
	m->a_vp_uids = enum_value(an, "CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS");
	m->a_vp_ptrs = enum_value(an, "CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS");
	m->a_vp_ws = enum_value(an, "CUDNN_ATTR_VARIANT_PACK_WORKSPACE");
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
		m->stats.other_kernels += tie == M_GRAPH_NONE;
		EMIT(m, activity, a);
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
		on_kernel_lib(m, (const void *)h);
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
	if (p->plan_ptr) { /* its plan never came */
		p->plan_ptr = 0;
		m->n_unplanned--;
		m->stats.plans.unknown_runs++;
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
	while (m->cfgs) {
		struct cfg_list *n = m->cfgs->next;
		free(m->cfgs->info.graph);
		m_tlist_free(&m->cfgs->info.tensors);
		free(m->cfgs->info.brief);
		/* knobs and notes are kept */
		free(m->cfgs);
		m->cfgs = n;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->objs[i].ptr) {
			obj_release(m, m->objs[i].o);
			free(m->objs[i].o);
		}
	free(m->objs);
	while (m->free_objs) {
		struct obj *o = m->free_objs;
		m->free_objs = o->next_free;
		free(o);
	}
	while (m->n_free_fields)
		free(m->free_fields[--m->n_free_fields]);
	while (m->n_free_attrs)
		free(m->free_attrs[--m->n_free_attrs]);
	free(m->by_seq);
	for (uint32_t i = 0; i <= m->fi->n_apis; i++) {
		if (m->api[i].sig != &bad_sig)
			free(m->api[i].sig);
		free(m->api[i].roles);
		free(m->api[i].args);
	}
	free(m->api);
	for (uint32_t i = 0; i < m->n_knames; i++)
		free(m->knames[i]);
	free(m->knames);
	free(m->kname_idx);
	free(m->kregs);
	for (size_t i = 0; i < m->n_kreg_paths; i++)
		free(m->kreg_paths[i]);
	free(m->kreg_paths);
	for (size_t i = 0; i < LEGACY_BUCKETS; i++)
		while (m->legacy[i]) {
			struct legacy_entry *e = m->legacy[i];
			m->legacy[i] = e->next;
			free(e->desc);
			free(e->problem);
			m_tlist_free(&e->tensors);
			free(e);
		}
	for (size_t i = 0; i < m->n_kept; i++)
		free(m->kept[i]);
	free(m->kept);
	free(m->devices);
	while (m->plans) {
		struct plan_info *n = m->plans->next;
		free(m->plans);
		m->plans = n;
	}
	free(m);
}
