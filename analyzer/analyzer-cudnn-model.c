/*
 * analyzer-cudnn-model.c - the cuDNN decoder: replays a trace's cuDNN
 * calls to rebuild what cuDNN held, and makes ops of the calls that
 * compute.
 *
 * Legacy descriptors are rebuilt generically: every argument of a setter
 * (cudnnSet*, first parameter a descriptor) is kept on the descriptor it
 * sets, under the parameter's name; tensors and filters are also put in a
 * common shape (dims, strides, data type). Backend descriptors keep every
 * attribute set on them and every attribute read back from them. An
 * operation graph is described when it is finalized (programs destroy the
 * graph before they execute its plan), and that description follows the
 * engine config and plan built from it. A call that can launch GPU work
 * becomes an op through the model's core, which adds the kernels CUPTI
 * tied to it before handing it out (analyzer-decoder.h). The backend
 * API's calls are analyzer-cudnn-backend.c's; how things are put into
 * words is analyzer-describe.c's. Nothing here includes a CUDA header.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyzer-cudnn-model.h"

static int64_t enum_value(const char *type, const char *name)
{
	return dt_enum_value(type, name, -12345); /* matches nothing a trace
						     holds */
}

struct cfg_info *m_new_cfg(struct cudnn_model *m)
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
void m_copy_graph(struct cudnn_model *m, struct cfg_info *c,
		  const struct obj *g)
{
	if (!c || !g || !g->graph)
		return;
	c->graph = strdup(g->graph);
	m_tlist_append(&c->tensors, &g->graph_tensors);
	c->brief = g->brief ? strdup(g->brief) : NULL;
	c->cost = g->cost;
	free(c->bp);
	c->bp = m_blueprint_copy(g->bp);
	/* ops handed out may still point to the old ones */
	m_keep(m->core, (char *)c->nodes);
	c->nodes = g->n_nodes ? malloc(g->n_nodes * sizeof(*c->nodes)) : NULL;
	c->n_nodes = c->nodes ? g->n_nodes : 0;
	if (c->nodes)
		memcpy(c->nodes, g->nodes, g->n_nodes * sizeof(*c->nodes));
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
static void obj_release(struct cudnn_model *m, struct obj *o)
{
	for (uint32_t i = 0; i < o->n_fields; i++)
		free(o->fields[i].all);
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
	free(o->nodes);
	free(o->brief);
	free(o->bp);
}

/* Twice as many slots (at most half are used). */
static bool grow(struct cudnn_model *m)
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
struct obj *m_obj_find(struct cudnn_model *m, uint64_t ptr, bool create)
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
void m_obj_remove(struct cudnn_model *m, struct obj *o)
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
struct obj *m_obj_new(struct cudnn_model *m, uint64_t ptr)
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

static void set_field(struct cudnn_model *m, struct obj *o,
		      const struct dt_arg *a)
{
	struct field *f = NULL;

	for (uint32_t i = 0; i < o->n_fields; i++)
		if (o->fields[i].name_len == a->name_len &&
		    !memcmp(o->fields[i].name, a->name, a->name_len))
			f = &o->fields[i];
	if (f) {
		free(f->all);
	} else {
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
		if (a->count > MAX_DIMS && a->count <= FIELD_ALL_MAX &&
		    (f->all = malloc(a->count * sizeof(*f->all)))) {
			f->n_all = a->count;
			for (uint32_t i = 0; i < a->count; i++)
				f->all[i] = dt_arg_elem_i(a, i);
		}
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

/* A cudnnDataType_t as the analyzer's data type (enum dt_dtype); a type
 * newer than the map keeps its number, for views to print. */
static int64_t cudnn_dtype(const struct cudnn_model *m, int64_t v)
{
	return v >= 0 && v < DT_CUDNN_DTYPES && m->dtypes[v] >= 0 ? m->dtypes[v]
								  : v;
}

/* What each cudnnDataType_t is among the analyzer's data types, by name:
 * CUDNN_DATA_BFLOAT16 is BFLOAT16. */
static void map_dtypes(struct cudnn_model *m)
{
	char name[DT_DTYPE_NAME_SIZE], full[64];

	for (int i = 0; i < DT_CUDNN_DTYPES; i++)
		m->dtypes[i] = -1;
	for (int d = 0; d < DT_DTYPE_COUNT; d++) {
		snprintf(full, sizeof(full), "CUDNN_DATA_%s",
			 dt_dtype_name(d, name, sizeof(name)));
		int64_t v = enum_value("cudnnDataType_t", full);
		if (v >= 0 && v < DT_CUDNN_DTYPES)
			m->dtypes[v] = (int8_t)d;
	}
}

/* What normalize_legacy() needs to know of a setter, by its name. */
enum {
	SETTER_KNOWN = 1,
	SETTER_4D = 2,    /* cudnnSet*4dDescriptor* */
	SETTER_4D_EX = 4, /* ... with strides */
	SETTER_ND_EX = 8, /* cudnnSet*NdDescriptorEx: strides derived */
};

static uint8_t setter_flags(struct cudnn_model *m, uint16_t api,
			    const char *name)
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
static void normalize_legacy(const struct cudnn_model *m, struct obj *o,
			     uint8_t setter)
{
	struct dt_tensor *t = &o->t;
	const struct field *dims;
	bool nhwc = m_fval(o, "format", 0) == 1; /* CUDNN_TENSOR_NHWC */

	memset(t, 0, sizeof(*t));
	t->dtype = cudnn_dtype(m, m_fval(o, "dataType", -1));
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

void m_set_battr(struct cudnn_model *m, struct obj *o, int64_t name,
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

void m_backend_tensor(struct cudnn_model *m, struct obj *o)
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
	t->dtype = cudnn_dtype(m, m_battr_i64(o, m->a_t_dtype, -1));
	t->uid = m_battr_i64(o, m->a_t_uid, -1);
	t->is_virtual = m_battr_i64(o, m->a_t_virtual, 0) != 0;
	t->by_value = m_battr_i64(o, m->a_t_by_value, 0) != 0;
	t->valid = true;
}

/* ------------------------------------------------------------- the ops */

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
		if (f->all)
			h = mix_bytes(h, f->all, f->n_all * sizeof(*f->all));
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
static const uint8_t *arg_roles(struct cudnn_model *m, uint32_t api,
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
static void legacy_op(struct cudnn_model *m, const struct dt_rec_api_call *c,
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
			if (m_pointers(m->core) && !a->out &&
			    n_ptr < LEGACY_PTRS)
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
		e->call = m_call_blueprint(m, &m->fi->apis[c->api], args, n);
		e->next = m->legacy[slot];
		m->legacy[slot] = e;
	}
	struct pending *p = m_op_new(m->core, c, api->name, e ? e->desc : "");
	if (!p || !e)
		return;
	p->op.engine = e->algo;
	p->op.workspace = e->workspace;
	p->op.stream = stream;
	p->op.tensor_cores = e->tensor_cores;
	p->op.cost = e->cost;
	p->problem = e->problem;
	p->tensors = &e->tensors;
	p->recipe = (struct dt_recipe){ &e->node, 1, NULL, 0 };
	p->recipe.build = e->call;
	if (n_ptr && m_op_ptrs_room(p, n_ptr))
		memcpy(p->ptrs, ptr, n_ptr * sizeof(*ptr));
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

static void derive_bn(struct cudnn_model *m, const struct dt_arg *args);

/* One cuDNN call: what it does to the descriptors, and the op it is when
 * it computes. */
static void cudnn_call(void *state, const struct dt_rec_api_call *c,
		       const struct dt_api_def *api, struct dt_arg *args, int n)
{
	struct cudnn_model *m = state;
	struct cudnn_api *ai = &m->api[c->api];
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
		m_backend_call(m, c, (enum api_class) * cls, args, n);
		return;
	case API_BK_EXECUTE:
	case API_BK_POPULATE:
		m_backend_execute(m, c, api, args, n, *cls == API_BK_POPULATE);
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
			normalize_legacy(m, o, setter_flags(m, c->api, name));
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
static void derive_bn(struct cudnn_model *m, const struct dt_arg *args)
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

/* ------------------------------------------------------- the decoder */

/* The enum values the decoder compares attributes and descriptor types
 * with, looked up by name in the generated table. */
#define BT "cudnnBackendDescriptorType_t"
#define AN "cudnnBackendAttributeName_t"
static const struct {
	size_t at; /* an int64_t of struct cudnn_model */
	const char *type, *name;
} constants[] = {
	{ offsetof(struct cudnn_model, bt_tensor), BT,
	  "CUDNN_BACKEND_TENSOR_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, bt_graph), BT,
	  "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, bt_engine), BT,
	  "CUDNN_BACKEND_ENGINE_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, bt_cfg), BT,
	  "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, bt_heur), BT,
	  "CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, bt_plan), BT,
	  "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, bt_varpack), BT,
	  "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, bt_knob_choice), BT,
	  "CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, a_norm_phase), AN,
	  "CUDNN_ATTR_OPERATION_NORM_FWD_PHASE" },
	{ offsetof(struct cudnn_model, bt_pointwise), BT,
	  "CUDNN_BACKEND_POINTWISE_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, a_pw_mode), AN,
	  "CUDNN_ATTR_POINTWISE_MODE" },
	{ offsetof(struct cudnn_model, bt_conv), BT,
	  "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR" },
	{ offsetof(struct cudnn_model, a_conv_pre), AN,
	  "CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS" },
	{ offsetof(struct cudnn_model, a_conv_post), AN,
	  "CUDNN_ATTR_CONVOLUTION_POST_PADDINGS" },
	{ offsetof(struct cudnn_model, a_conv_stride), AN,
	  "CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES" },
	{ offsetof(struct cudnn_model, a_conv_dil), AN,
	  "CUDNN_ATTR_CONVOLUTION_DILATIONS" },
	{ offsetof(struct cudnn_model, a_graph_ops), AN,
	  "CUDNN_ATTR_OPERATIONGRAPH_OPS" },
	{ offsetof(struct cudnn_model, a_heur_graph), AN,
	  "CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH" },
	{ offsetof(struct cudnn_model, a_heur_results), AN,
	  "CUDNN_ATTR_ENGINEHEUR_RESULTS" },
	{ offsetof(struct cudnn_model, a_cfg_engine), AN,
	  "CUDNN_ATTR_ENGINECFG_ENGINE" },
	{ offsetof(struct cudnn_model, a_engine_graph), AN,
	  "CUDNN_ATTR_ENGINE_OPERATION_GRAPH" },
	{ offsetof(struct cudnn_model, a_engine_index), AN,
	  "CUDNN_ATTR_ENGINE_GLOBAL_INDEX" },
	{ offsetof(struct cudnn_model, a_plan_cfg), AN,
	  "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG" },
	{ offsetof(struct cudnn_model, a_plan_ws), AN,
	  "CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE" },
	{ offsetof(struct cudnn_model, a_plan_json), AN,
	  "CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION" },
	{ offsetof(struct cudnn_model, a_plan_handle), AN,
	  "CUDNN_ATTR_EXECUTION_PLAN_HANDLE" },
	{ offsetof(struct cudnn_model, a_t_dtype), AN,
	  "CUDNN_ATTR_TENSOR_DATA_TYPE" },
	{ offsetof(struct cudnn_model, a_t_dims), AN,
	  "CUDNN_ATTR_TENSOR_DIMENSIONS" },
	{ offsetof(struct cudnn_model, a_t_strides), AN,
	  "CUDNN_ATTR_TENSOR_STRIDES" },
	{ offsetof(struct cudnn_model, a_t_uid), AN,
	  "CUDNN_ATTR_TENSOR_UNIQUE_ID" },
	{ offsetof(struct cudnn_model, a_t_virtual), AN,
	  "CUDNN_ATTR_TENSOR_IS_VIRTUAL" },
	{ offsetof(struct cudnn_model, a_t_by_value), AN,
	  "CUDNN_ATTR_TENSOR_IS_BY_VALUE" },
	{ offsetof(struct cudnn_model, a_cfg_knobs), AN,
	  "CUDNN_ATTR_ENGINECFG_KNOB_CHOICES" },
	{ offsetof(struct cudnn_model, a_knob_type), AN,
	  "CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE" },
	{ offsetof(struct cudnn_model, a_knob_value), AN,
	  "CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE" },
	{ offsetof(struct cudnn_model, a_engine_notes), AN,
	  "CUDNN_ATTR_ENGINE_NUMERICAL_NOTE" },
	{ offsetof(struct cudnn_model, a_vp_uids), AN,
	  "CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS" },
	{ offsetof(struct cudnn_model, a_vp_ptrs), AN,
	  "CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS" },
	{ offsetof(struct cudnn_model, a_vp_ws), AN,
	  "CUDNN_ATTR_VARIANT_PACK_WORKSPACE" },
};
#undef BT
#undef AN

static void *cudnn_create(struct dt_model *core, const struct dt_file_info *fi)
{
	struct cudnn_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->core = core;
	m->fi = fi;
	m->api = calloc(fi->n_apis + 1, sizeof(*m->api));
	if (!m->api) {
		free(m);
		return NULL;
	}
	m->bn_per_activation = enum_value("cudnnBatchNormMode_t",
					  "CUDNN_BATCHNORM_PER_ACTIVATION");
	map_dtypes(m);
	m->norm_training = enum_value("cudnnBackendNormFwdPhase_t",
				      "CUDNN_NORM_FWD_TRAINING");
	for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
		*(int64_t *)(void *)((char *)m + constants[i].at) =
			enum_value(constants[i].type, constants[i].name);
	return m;
}

static void cudnn_destroy(void *state)
{
	struct cudnn_model *m = state;

	while (m->cfgs) {
		struct cfg_list *n = m->cfgs->next;
		free(m->cfgs->info.graph);
		m_tlist_free(&m->cfgs->info.tensors);
		free(m->cfgs->info.brief);
		free(m->cfgs->info.nodes);
		free(m->cfgs->info.bp);
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
	for (uint32_t i = 0; i <= m->fi->n_apis; i++)
		free(m->api[i].roles);
	free(m->api);
	for (size_t i = 0; i < LEGACY_BUCKETS; i++)
		while (m->legacy[i]) {
			struct legacy_entry *e = m->legacy[i];
			m->legacy[i] = e->next;
			free(e->desc);
			free(e->problem);
			free(e->call);
			m_tlist_free(&e->tensors);
			free(e);
		}
	while (m->plans) {
		struct plan_info *n = m->plans->next;
		free(m->plans);
		m->plans = n;
	}
	free(m);
}

/* A call that computes nothing launched work (cudnnCreate, a dropout
 * setter): what its name says it costs. */
static void cudnn_launched(void *state, struct pending *p, uint16_t api)
{
	struct cudnn_model *m = state;
	struct dt_recipe_node *n = &m->api[api].node;

	dt_cost_legacy(&p->op.cost, p->op.api, NULL, 0, NULL);
	*n = (struct dt_recipe_node){
		.kind = p->op.cost.kind,
		.training = strstr(p->op.api, "Training") != NULL,
	};
	p->recipe = (struct dt_recipe){ n, 1, NULL, 0 };
}

/* An execution of a plan the trace never finalized. */
static void cudnn_unresolved(void *state, struct pending *p)
{
	struct cudnn_model *m = state;

	(void)p;
	m_stats(m->core)->plans.unknown_runs++;
}

const struct dt_decoder dt_decoder_cudnn = {
	.library = "cudnn",
	.create = cudnn_create,
	.destroy = cudnn_destroy,
	.call = cudnn_call,
	.launched = cudnn_launched,
	.unresolved = cudnn_unresolved,
};
