/*
 * analyzer-cudnn-blueprint.c - (cuDNN decoder) what a backend operation
 * graph was made of, kept as data so that it can be built again: every
 * descriptor the graph reaches, each with the attributes the program set
 * on it, descriptors pointing to each other by index (struct
 * dt_cudnn_graph, dt-cudnn-build.h). An operation keeps its own when it is
 * finalized, as its description is kept (programs destroy and reuse the
 * tensors it points to before building the graph); a graph's is made of
 * its operations' and follows the engine configs and plans built from it.
 * A legacy call is kept the same way: its arguments and what each
 * descriptor it names was set to (struct dt_cudnn_call). What builds
 * either again is replay/'s, on a GPU; nothing here calls cuDNN.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "analyzer-cudnn-model.h"

/* A graph's blueprint stops growing here (a crafted trace may point
 * descriptors at each other without end). */
#define BP_DESCS_MAX 256
#define BP_ATTRS_MAX 4096
#define BP_BYTES_MAX (1u << 20)
/* cudnnBackendAttributeType_t's CUDNN_TYPE_BACKEND_DESCRIPTOR, as the
 * rest of the decoder knows it */
#define TYPE_DESCRIPTOR 15

/* A blueprint being put together: descriptors, attributes and payload
 * bytes in arrays of their own, packed into one block at the end. A
 * descriptor comes after those it points to, so the root is last and
 * each descriptor's attributes are one run of the array. */
struct bp_build {
	struct dt_cudnn_desc descs[BP_DESCS_MAX];
	uint32_t first_attr[BP_DESCS_MAX];
	uint32_t n_descs;
	struct dt_cudnn_attr *attrs;
	uint32_t n_attrs, cap_attrs;
	uint8_t *bytes;
	uint32_t n_bytes, cap_bytes;
	bool cut; /* something did not fit, or was not in the trace */
};

static bool grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	uint32_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *v = realloc(*p, (size_t)c * elem);
	if (!v)
		return false;
	*p = v;
	*cap = c;
	return true;
}

/* An attribute appended; its payload's offset rides in data until the
 * block is packed. */
static void bp_attr(struct bp_build *b, int64_t name, int64_t type,
		    const void *data, uint32_t n)
{
	if (b->n_bytes + n > BP_BYTES_MAX || b->n_attrs >= BP_ATTRS_MAX ||
	    !grow((void **)&b->bytes, &b->cap_bytes, b->n_bytes + n, 1) ||
	    !grow((void **)&b->attrs, &b->cap_attrs, b->n_attrs + 1,
		  sizeof(*b->attrs))) {
		b->cut = true;
		return;
	}
	if (n)
		memcpy(b->bytes + b->n_bytes, data, n);
	b->attrs[b->n_attrs++] = (struct dt_cudnn_attr){
		name, type, n, (const uint8_t *)(uintptr_t)b->n_bytes
	};
	b->n_bytes += n;
}

/* A descriptor whose attributes were just appended from first on. */
static int64_t bp_desc(struct bp_build *b, uint64_t ptr, int64_t type,
		       uint32_t first)
{
	if (b->n_descs >= BP_DESCS_MAX) {
		b->cut = true;
		return -1;
	}
	b->first_attr[b->n_descs] = first;
	b->descs[b->n_descs] =
		(struct dt_cudnn_desc){ .ptr = ptr,
					.type = type,
					.n_attrs = b->n_attrs - first };
	return b->n_descs++;
}

/* A descriptor-typed attribute's elements, as indices (-1: not held). */
static void bp_ref_attr(struct bp_build *b, int64_t name, const int64_t *idx,
			uint32_t n)
{
	for (uint32_t e = 0; e < n; e++)
		if (idx[e] < 0)
			b->cut = true;
	bp_attr(b, name, TYPE_DESCRIPTOR, idx, n * 8);
}

/* The index of a descriptor of b with the same address, type and
 * attributes as d of g, one that points to no other; -1 none. */
static int64_t bp_same(const struct bp_build *b, const struct dt_cudnn_desc *d)
{
	for (uint32_t i = 0; i < d->n_attrs; i++)
		if (d->attrs[i].type == TYPE_DESCRIPTOR)
			return -1;
	for (uint32_t i = 0; i < b->n_descs; i++) {
		const struct dt_cudnn_desc *h = &b->descs[i];
		if (h->ptr != d->ptr || h->type != d->type ||
		    h->n_attrs != d->n_attrs)
			continue;
		uint32_t k = 0;
		for (; k < d->n_attrs; k++) {
			const struct dt_cudnn_attr *x =
				&b->attrs[b->first_attr[i] + k];
			const struct dt_cudnn_attr *y = &d->attrs[k];
			if (x->name != y->name || x->type != y->type ||
			    x->bytes != y->bytes ||
			    memcmp(b->bytes + (uintptr_t)x->data, y->data,
				   y->bytes))
				break;
		}
		if (k == d->n_attrs)
			return i;
	}
	return -1;
}

/* A kept blueprint (an operation's, taken at its finalize) merged in:
 * the descriptors b does not hold yet added, indices moved to b's.
 * Returns the index of its root in b. */
static int64_t bp_merge(struct bp_build *b, const struct dt_cudnn_graph *g)
{
	int64_t map[BP_DESCS_MAX];

	for (uint32_t i = 0; i < g->n_descs && i < BP_DESCS_MAX; i++) {
		const struct dt_cudnn_desc *d = &g->descs[i];
		map[i] = bp_same(b, d);
		if (map[i] >= 0)
			continue;
		uint32_t first = b->n_attrs;
		for (uint32_t k = 0; k < d->n_attrs; k++) {
			const struct dt_cudnn_attr *a = &d->attrs[k];
			if (a->type != TYPE_DESCRIPTOR) {
				bp_attr(b, a->name, a->type, a->data, a->bytes);
				continue;
			}
			int64_t idx[64];
			uint32_t n = a->bytes / 8 < 64 ? a->bytes / 8 : 64;
			for (uint32_t e = 0; e < n; e++) {
				int64_t v;
				memcpy(&v, a->data + e * 8, 8);
				/* g's descriptors point only backwards */
				idx[e] =
					v >= 0 && (uint32_t)v < i ? map[v] : -1;
			}
			bp_ref_attr(b, a->name, idx, n);
		}
		map[i] = bp_desc(b, d->ptr, d->type, first);
	}
	return g->n_descs && g->root < BP_DESCS_MAX ? map[g->root] : -1;
}

static int64_t bp_add_obj(struct cudnn_model *m, struct bp_build *b,
			  const struct obj *o, int depth);

/* The descriptor at ptr, as the blueprint it kept at its finalize or as
 * it is now. -1 when the trace does not hold it. */
static int64_t bp_add_ptr(struct cudnn_model *m, struct bp_build *b,
			  uint64_t ptr, int depth)
{
	struct obj *o = m_obj_find(m, ptr, false);

	if (!o || o->btype < 0 || depth > 8)
		return -1;
	if (o->bp)
		return bp_merge(b, o->bp);
	for (uint32_t i = 0; i < b->n_descs; i++)
		if (b->descs[i].ptr == ptr)
			return i; /* pointed to twice in one walk */
	return bp_add_obj(m, b, o, depth);
}

static int64_t bp_add_obj(struct cudnn_model *m, struct bp_build *b,
			  const struct obj *o, int depth)
{
	/* what it points to first, each element's index in refs */
	int64_t refs[256];
	uint32_t n_refs = 0;
	for (uint32_t i = 0; i < o->n_attrs; i++) {
		const struct battr *a = &o->attrs[i];
		for (uint32_t e = 0;
		     a->type == TYPE_DESCRIPTOR && e < a->bytes / 8; e++) {
			uint64_t p;
			memcpy(&p, bdata(a) + e * 8, 8);
			int64_t r = bp_add_ptr(m, b, p, depth + 1);
			if (n_refs < sizeof(refs) / sizeof(refs[0]))
				refs[n_refs++] = r;
		}
	}
	uint32_t first = b->n_attrs, r = 0;
	for (uint32_t i = 0; i < o->n_attrs; i++) {
		const struct battr *a = &o->attrs[i];
		if (a->type != TYPE_DESCRIPTOR) {
			bp_attr(b, a->name, a->type, bdata(a), a->bytes);
			continue;
		}
		uint32_t n = a->bytes / 8;
		if (r + n > n_refs) {
			b->cut = true;
			n = r < n_refs ? n_refs - r : 0;
		}
		bp_ref_attr(b, a->name, refs + r, n);
		r += n;
	}
	return bp_desc(b, o->ptr, o->btype, first);
}

/* b packed into one block: descriptors, attributes, payloads. */
static struct dt_cudnn_graph *bp_pack(struct bp_build *b, int64_t root)
{
	size_t sz = sizeof(struct dt_cudnn_graph) +
		    b->n_descs * sizeof(struct dt_cudnn_desc) +
		    b->n_attrs * sizeof(struct dt_cudnn_attr) + b->n_bytes;
	struct dt_cudnn_graph *g = root >= 0 ? calloc(1, sz) : NULL;

	if (!g)
		return NULL;
	struct dt_cudnn_desc *d = (struct dt_cudnn_desc *)(g + 1);
	struct dt_cudnn_attr *a = (struct dt_cudnn_attr *)(d + b->n_descs);
	uint8_t *bytes = (uint8_t *)(a + b->n_attrs);
	memcpy(bytes, b->bytes, b->n_bytes);
	for (uint32_t i = 0; i < b->n_attrs; i++) {
		a[i] = b->attrs[i];
		a[i].data = bytes + (uintptr_t)b->attrs[i].data;
	}
	for (uint32_t i = 0; i < b->n_descs; i++) {
		d[i] = b->descs[i];
		d[i].attrs = b->first_attr[i] < b->n_attrs
				     ? a + b->first_attr[i]
				     : NULL;
		if (!d[i].attrs)
			d[i].n_attrs = 0;
	}
	g->descs = d;
	g->n_descs = b->n_descs;
	g->root = (uint32_t)root;
	g->complete = !b->cut;
	return g;
}

/* A blueprint of o (m given) or a copy of g. */
static struct dt_cudnn_graph *bp_make(struct cudnn_model *m,
				      const struct obj *o,
				      const struct dt_cudnn_graph *g)
{
	struct bp_build *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	int64_t root = o ? bp_add_obj(m, b, o, 0) : bp_merge(b, g);
	b->cut |= g && !g->complete;
	struct dt_cudnn_graph *out = bp_pack(b, root);
	free(b->attrs);
	free(b->bytes);
	free(b);
	return out;
}

struct dt_cudnn_graph *m_blueprint(struct cudnn_model *m, const struct obj *o)
{
	return bp_make(m, o, NULL);
}

struct dt_cudnn_graph *m_blueprint_copy(const struct dt_cudnn_graph *g)
{
	return g ? bp_make(NULL, NULL, g) : NULL;
}

const struct dt_cudnn_attr *dt_cudnn_attr_find(const struct dt_cudnn_graph *g,
					       uint32_t desc, int64_t name)
{
	if (!g || desc >= g->n_descs)
		return NULL;
	for (uint32_t i = 0; i < g->descs[desc].n_attrs; i++)
		if (g->descs[desc].attrs[i].name == name)
			return &g->descs[desc].attrs[i];
	return NULL;
}

/* ------------------------------------------------------- legacy calls */

/* Whether a legacy call's argument is kept: all but the handle and the
 * data the device holds. */
static bool call_keeps(const struct dt_arg *a)
{
	return !is_handle(a) && !is_data_ptr(a);
}

/* A call's blueprint being put together: counted first (the arrays
 * NULL), then filled into one block sized by the count. */
struct call_build {
	struct dt_cudnn_arg *args;
	struct dt_cudnn_field *fields;
	struct dt_tensor *tensors;
	int64_t *values; /* long arrays' elements */
	uint32_t n_args, n_fields, n_tensors, n_values;
};

/* Descriptor o's kind, shape and fields into x (counted alone when b's
 * arrays are NULL). */
static void call_desc(struct call_build *b, struct dt_cudnn_arg *x,
		      const struct obj *o)
{
	if (x) {
		x->kind = o->kind;
		x->kind_len = o->kind_len;
		x->fields = b->fields + b->n_fields;
	}
	if (o->t.valid && x) {
		b->tensors[b->n_tensors] = o->t;
		x->t = &b->tensors[b->n_tensors];
	}
	b->n_tensors += o->t.valid;
	for (uint32_t k = 0; k < o->n_fields; k++) {
		const struct field *f = &o->fields[k];
		if (x) {
			struct dt_cudnn_field *y = &b->fields[b->n_fields];
			*y = (struct dt_cudnn_field){ .name = f->name,
						      .name_len = f->name_len,
						      .code = f->code,
						      .count = f->count,
						      .f = f->f };
			memcpy(y->v, f->v, sizeof(y->v));
			if (f->all) {
				y->all = b->values + b->n_values;
				y->n_all = f->n_all;
				memcpy(b->values + b->n_values, f->all,
				       f->n_all * sizeof(*f->all));
			}
			x->n_fields++;
		}
		b->n_fields++;
		b->n_values += f->all ? f->n_all : 0;
	}
}

/* A field that names another descriptor ("dropoutDesc"). */
static bool field_is_desc(const struct field *f)
{
	const char *e = f->name + f->name_len - 4;

	return f->code == 'p' && f->name_len > 4 && (e[0] | 32) == 'd' &&
	       !memcmp(e + 1, "esc", 3);
}

/* A new argument into b (counted alone when b's arrays are NULL). */
static struct dt_cudnn_arg *call_arg(struct call_build *b,
				     struct dt_cudnn_arg init)
{
	struct dt_cudnn_arg *x = b->args ? &b->args[b->n_args] : NULL;

	if (x)
		*x = init;
	b->n_args++;
	return x;
}

/* The call's arguments, then the descriptors its descriptors point to. */
static void call_fill(struct cudnn_model *m, struct call_build *b,
		      const struct dt_arg *args, int n)
{
	for (int i = 0; i < n; i++) {
		const struct dt_arg *a = &args[i];
		if (!call_keeps(a))
			continue;
		struct dt_cudnn_arg *x = call_arg(
			b, (struct dt_cudnn_arg){ .name = a->name,
						  .name_len = a->name_len,
						  .code = a->code,
						  .i = a->i,
						  .f = a->f });
		if (x && a->code == 'k' && a->data &&
		    a->count <= sizeof(x->host)) {
			memcpy(x->host, a->data, a->count);
			x->width = (uint8_t)a->count;
		}
		const struct obj *o =
			is_desc(a) ? m_obj_find(m, a->u, false) : NULL;
		if (o)
			call_desc(b, x, o);
	}
	for (int i = 0; i < n; i++) {
		const struct obj *o = call_keeps(&args[i]) && is_desc(&args[i])
					      ? m_obj_find(m, args[i].u, false)
					      : NULL;
		for (uint32_t k = 0; o && k < o->n_fields; k++) {
			const struct field *f = &o->fields[k];
			const struct obj *to =
				field_is_desc(f)
					? m_obj_find(m, (uint64_t)f->v[0],
						     false)
					: NULL;
			if (!to)
				continue;
			struct dt_cudnn_arg *x = call_arg(
				b,
				(struct dt_cudnn_arg){ .name = f->name,
						       .name_len = f->name_len,
						       .code = 'p',
						       .i = f->v[0] });
			call_desc(b, x, to);
		}
	}
}

struct dt_cudnn_call *m_call_blueprint(struct cudnn_model *m,
				       const struct dt_api_def *api,
				       const struct dt_arg *args, int n)
{
	struct call_build count = { 0 };

	call_fill(m, &count, args, n);
	struct dt_cudnn_call *c = calloc(
		1, sizeof(*c) + count.n_args * sizeof(struct dt_cudnn_arg) +
			   count.n_fields * sizeof(struct dt_cudnn_field) +
			   count.n_tensors * sizeof(struct dt_tensor) +
			   count.n_values * sizeof(int64_t));
	if (!c)
		return NULL;
	struct call_build b = { .args = (struct dt_cudnn_arg *)(c + 1) };
	b.fields = (struct dt_cudnn_field *)(b.args + count.n_args);
	b.tensors = (struct dt_tensor *)(b.fields + count.n_fields);
	b.values = (int64_t *)(b.tensors + count.n_tensors);
	call_fill(m, &b, args, n);
	c->api = api->name;
	c->args = b.args;
	c->n_args = b.n_args;
	return c;
}

static bool named(const char *s, uint32_t len, const char *name)
{
	return strlen(name) == len && !memcmp(s, name, len);
}

const struct dt_cudnn_arg *dt_cudnn_arg_find(const struct dt_cudnn_call *c,
					     const char *name)
{
	for (uint32_t i = 0; c && i < c->n_args; i++)
		if (named(c->args[i].name, c->args[i].name_len, name))
			return &c->args[i];
	return NULL;
}

const struct dt_cudnn_field *dt_cudnn_field_find(const struct dt_cudnn_arg *a,
						 const char *name)
{
	for (uint32_t i = 0; a && i < a->n_fields; i++)
		if (named(a->fields[i].name, a->fields[i].name_len, name))
			return &a->fields[i];
	return NULL;
}
