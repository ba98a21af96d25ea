/*
 * analyzer-describe.c - how the model puts what it rebuilt into words and
 * lists: tensors ([dims]:type:layout), legacy descriptors' fields,
 * backend descriptors with their attributes, operation graphs, a
 * problem's brief, an engine's knobs and notes, a legacy call's problem,
 * and the tensor lists ops carry.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyzer-cudnn-model.h"

static void tlist_add(struct tlist *l, const struct dt_tensor *t,
		      const char *role, size_t role_len, int32_t ptr)
{
	if (!l || !t->valid || l->n >= TENSORS_MAX)
		return;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 4;
		struct dt_op_tensor *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	struct dt_op_tensor *o = &l->v[l->n++];
	o->t = *t;
	if (role_len > sizeof(o->role) - 1)
		role_len = sizeof(o->role) - 1;
	memcpy(o->role, role, role_len);
	o->role[role_len] = 0;
	o->ptr = ptr;
}

void m_tlist_append(struct tlist *l, const struct tlist *from)
{
	for (uint32_t i = 0; l && from && i < from->n; i++)
		tlist_add(l, &from->v[i].t, from->v[i].role,
			  strlen(from->v[i].role), from->v[i].ptr);
}

void m_tlist_free(struct tlist *l)
{
	free(l->v);
	*l = (struct tlist){ 0 };
}

/* ---------------------------------------------------------- describing */

static const char *short_enum(const char *type, int64_t v, char *buf,
			      size_t size, const char *strip)
{
	return dt_enum_short(type, v, strip, buf, size);
}

/* NCHW-like when strides fall with the dimension order, NHWC-like when the
 * second dimension is the innermost; else plainly strided. */
static const char *layout(const struct dt_tensor *t)
{
	static const char *const nchw[] = {
		"", "", "", "NCW", "NCHW", "NCDHW"
	};
	static const char *const nhwc[] = {
		"", "", "", "NWC", "NHWC", "NDHWC"
	};
	bool dec = true, cl = t->nb >= 3 && t->strides[1] == 1;

	for (int i = 1; i < t->nb; i++)
		if (t->strides[i] > t->strides[i - 1])
			dec = false;
	for (int i = 2; cl && i < t->nb; i++)
		if (t->strides[i] < t->dims[1] ||
		    (i > 2 && t->strides[i] > t->strides[i - 1]))
			cl = false;
	if (dec)
		return t->nb <= 5 && t->nb >= 3 ? nchw[t->nb] : "packed";
	if (cl)
		return t->nb <= 5 ? nhwc[t->nb] : "channels-last";
	return "strided";
}

static void describe_tensor(struct dt_sbuf *b, const struct dt_tensor *t)
{
	char dt[48];

	if (!t->valid) {
		dt_sb_printf(b, "?");
		return;
	}
	if (t->uid >= 0 && t->uid != 0)
		dt_sb_printf(b, "#%" PRId64, t->uid);
	dt_sb_printf(b, "[");
	for (int i = 0; i < t->nb; i++)
		dt_sb_printf(b, "%s%" PRId64, i ? "," : "", t->dims[i]);
	dt_sb_printf(b, "]%s:%s",
		     t->is_virtual ? "virtual"
		     : t->by_value ? "byvalue"
				   : "",
		     short_enum("cudnnDataType_t", t->dtype, dt, sizeof(dt),
				"CUDNN_DATA_"));
	dt_sb_printf(b, ":%s", layout(t));
}

/* Whether an enumerator's name says training mode ("FWD_MODE_TRAINING"). */
static bool says_training(const char *enum_name)
{
	return strstr(enum_name, "TRAINING") != NULL;
}

/* A legacy descriptor's kept arguments, compactly; *training when one of
 * them selects training mode. */
static void describe_fields(struct dt_sbuf *b, const struct obj *o,
			    bool *training)
{
	dt_sb_printf(b, "{");
	for (uint32_t i = 0, n = 0; i < o->n_fields; i++) {
		const struct field *f = &o->fields[i];
		char tmp[96];
		if (f->code == 'p')
			continue;
		dt_sb_printf(b, "%s%.*s=", n++ ? " " : "", (int)f->name_len,
			     f->name);
		if (f->code == 'a') {
			dt_sb_printf(b, "[");
			for (uint32_t k = 0; k < f->count; k++)
				dt_sb_printf(b, "%s%" PRId64, k ? "," : "",
					     f->v[k]);
			dt_sb_printf(b, "]");
		} else if (f->code == 'e' && f->type) {
			char t[64];
			snprintf(t, sizeof(t), "%.*s", (int)f->type_len,
				 f->type);
			const char *e = short_enum(t, f->v[0], tmp, sizeof(tmp),
						   "CUDNN_");
			dt_sb_printf(b, "%s", e);
			*training |= says_training(e);
		} else if (f->code == 'f') {
			dt_sb_printf(b, "%g", f->f);
		} else {
			dt_sb_printf(b, "%" PRId64, f->v[0]);
		}
	}
	dt_sb_printf(b, "}");
}

/* An attribute name without its descriptor's prefix. */
static const char *attr_short(int64_t name, char *buf, size_t size)
{
	const char *n = dt_enum_name("cudnnBackendAttributeName_t", 27, name);
	static const char *const prefixes[] = {
		"CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_",
		"CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_",
		"CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_",
		"CUDNN_ATTR_OPERATION_",
		"CUDNN_ATTR_CONVOLUTION_",
		"CUDNN_ATTR_POINTWISE_",
		"CUDNN_ATTR_MATMUL_",
		"CUDNN_ATTR_REDUCTION_",
		"CUDNN_ATTR_RESAMPLE_",
		"CUDNN_ATTR_",
	};

	if (!n) {
		snprintf(buf, size, "attr%" PRId64, name);
		return buf;
	}
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(n, prefixes[i], strlen(prefixes[i]))) {
			n += strlen(prefixes[i]);
			break;
		}
	snprintf(buf, size, "%s", n);
	return buf;
}

static void describe_battr_value(struct cudnn_model *m, struct dt_sbuf *b,
				 struct tlist *j, const struct battr *a,
				 const char *role, int depth)
{
	if (b->len > DESC_MAX)
		return;
	if (a->type ==
	    15) { /* BACKEND_DESCRIPTOR: describe what it points to */
		uint32_t n = a->bytes / 8;
		if (n != 1)
			dt_sb_printf(b, "[");
		for (uint32_t i = 0; i < n; i++) {
			uint64_t p;
			memcpy(&p, bdata(a) + i * 8, 8);
			struct obj *d = m_obj_find(m, p, false);
			if (i)
				dt_sb_printf(b, ",");
			if (d && d->btype == m->bt_tensor && d->t.valid) {
				describe_tensor(b, &d->t);
				tlist_add(j, &d->t, role, strlen(role), -1);
			} else if (d && d->snap) {
				dt_sb_printf(b, "%s", d->snap);
				m_tlist_append(j, &d->snap_tensors);
			} else if (d && d->btype >= 0 && depth < 3) {
				m_describe_battrs(m, b, j, d, depth + 1);
			} else
				dt_sb_printf(b, "?");
		}
		if (n != 1)
			dt_sb_printf(b, "]");
		return;
	}
	char tmp[512];
	dt_backend_payload_format(a->type, bdata(a), a->bytes, tmp,
				  sizeof(tmp));
	dt_sb_printf(b, "%s", tmp);
}

/* TYPE(attr=value ...) of a backend descriptor, nested ones inline; its
 * tensors also go to j when j is given. */
void m_describe_battrs(struct cudnn_model *m, struct dt_sbuf *b,
		       struct tlist *j, struct obj *o, int depth)
{
	char name[96], tn[96];

	if (b->len > DESC_MAX || (j && j->n >= TENSORS_MAX)) {
		dt_sb_printf(b, "...");
		return;
	}
	dt_sb_printf(b, "%s(",
		     short_enum("cudnnBackendDescriptorType_t", o->btype, tn,
				sizeof(tn), "CUDNN_BACKEND_"));
	for (uint32_t i = 0; i < o->n_attrs; i++) {
		dt_sb_printf(b, "%s%s=", i ? " " : "",
			     attr_short(o->attrs[i].name, name, sizeof(name)));
		describe_battr_value(m, b, j, &o->attrs[i], name, depth);
	}
	dt_sb_printf(b, ")");
}

/* The operation graph as it is when finalized: its operations, its
 * tensors (into j) and its cost. */
char *m_describe_graph(struct cudnn_model *m, struct obj *g, struct tlist *j,
		       struct dt_cost *cost)
{
	struct battr *ops = m_battr(g, m->a_graph_ops);
	struct dt_sbuf b = { 0 };
	const struct dt_cost_part *parts[64];
	int n_parts = 0;
	uint32_t n_ops = ops ? ops->bytes / 8 : 0;

	free(g->nodes);
	g->n_nodes = 0;
	g->nodes = n_ops ? calloc(n_ops, sizeof(*g->nodes)) : NULL;

	for (uint32_t i = 0; ops && i < ops->bytes / 8 && b.len <= DESC_MAX;
	     i++) {
		struct obj *op =
			m_obj_find(m, m_battr_ptr(g, m->a_graph_ops, i), false);
		if (i)
			dt_sb_printf(&b, " ; ");
		if (op && op->snap) {
			dt_sb_printf(&b, "%s", op->snap);
			m_tlist_append(j, &op->snap_tensors);
		} else if (op && op->btype >= 0) {
			m_describe_battrs(m, &b, j, op, 1);
		} else {
			dt_sb_printf(&b, "?");
		}
		if (op && op->part &&
		    n_parts < (int)(sizeof(parts) / sizeof(parts[0])))
			parts[n_parts++] = op->part;
		if (g->nodes)
			g->nodes[g->n_nodes++] =
				op && op->part ? op->node
					       : (struct dt_recipe_node){
							 DT_KIND_OTHER
						 };
	}
	dt_cost_graph(cost, parts, n_parts);
	return dt_sb_take(&b);
}

/* The graph's operations' briefs merged: each tensor once (by what
 * follows its role), without the uids that told them apart. */
char *m_graph_brief(struct cudnn_model *m, struct obj *g)
{
	struct battr *ops = m_battr(g, m->a_graph_ops);
	struct dt_sbuf b = { 0 }, seen = { 0 };

	for (uint32_t i = 0; ops && i < ops->bytes / 8 && b.len < 4096; i++) {
		struct obj *op =
			m_obj_find(m, m_battr_ptr(g, m->a_graph_ops, i), false);
		for (const char *t = op ? op->brief : NULL; t && *t;) {
			size_t n = strcspn(t, " ");
			const char *eq = memchr(t, '=', n);
			const char *what = eq ? eq + 1 : t;
			size_t wn = n - (size_t)(what - t);
			char key[160];
			snprintf(key, sizeof(key), "|%.*s|", (int)wn, what);
			if (!seen.p || !strstr(seen.p, key)) {
				dt_sb_printf(&seen, "%s", key);
				/* ROLE=#uid[dims]... -> ROLE[dims]...; the
				 * parameters (pad=[1,1]) are lower case and
				 * stay as they are */
				const char *br = memchr(t, '[', n);
				if (eq && br && *t >= 'A' && *t <= 'Z')
					dt_sb_printf(
						&b, "%s%.*s%.*s",
						b.len ? " " : "", (int)(eq - t),
						t, (int)(n - (size_t)(br - t)),
						br);
				else
					dt_sb_printf(&b, "%s%.*s",
						     b.len ? " " : "", (int)n,
						     t);
			}
			t += n;
			while (*t == ' ')
				t++;
		}
	}
	free(seen.p);
	return dt_sb_take(&b);
}

/* Which backend descriptors are described when finalized: all but the
 * tensors (kept in their own form), graphs and what is built from them. */
bool m_snapshot_type(const struct cudnn_model *m, int64_t btype)
{
	return btype >= 0 && btype != m->bt_tensor && btype != m->bt_graph &&
	       btype != m->bt_engine && btype != m->bt_cfg &&
	       btype != m->bt_heur && btype != m->bt_plan &&
	       btype != m->bt_varpack && btype != m->bt_knob_choice;
}

/* A tensor's role in an operation, from its attribute's name:
 * CUDNN_ATTR_OPERATION_MATMUL_ADESC -> A, ..._CONVOLUTION_BWD_DATA_DX ->
 * DX. */
static const char *role_name(const char *attr, char *buf, size_t size)
{
	static const char *const kinds[] = {
		"CONVOLUTION_FORWARD_",
		"CONVOLUTION_BWD_DATA_",
		"CONVOLUTION_BWD_FILTER_",
		"MATMUL_",
		"POINTWISE_",
		"REDUCTION_",
		"NORM_FWD_",
		"NORM_BWD_",
		"SDPA_FWD_",
		"SDPA_BWD_",
		"RESAMPLE_FWD_",
		"RESAMPLE_BWD_",
		"GENSTATS_",
		"BN_FINALIZE_",
		"BN_BWD_WEIGHTS_",
		"RESHAPE_",
		"CONCAT_",
		"MOE_GROUPED_MATMUL_",
		"RNG_",
		NULL,
	};
	const char *r = attr;
	size_t n;

	if (!strncmp(r, "CUDNN_ATTR_OPERATION_", 21))
		r += 21;
	for (const char *const *k = kinds; *k; k++)
		if (!strncmp(r, *k, strlen(*k))) {
			r += strlen(*k);
			break;
		}
	n = strlen(r);
	if (n > 5 && !strcmp(r + n - 5, "_DESC"))
		n -= 5;
	else if (n > 4 && !strcmp(r + n - 4, "DESC"))
		n -= 4;
	snprintf(buf, size, "%.*s", (int)n, r);
	return buf;
}

/* A convolution descriptor's geometry: "pad=[1,1] stride=[1,1]
 * dilation=[1,1]" (and the padding after, when it differs). */
static void conv_brief(struct cudnn_model *m, struct dt_sbuf *b,
		       struct obj *conv, uint32_t *stride)
{
	static const char *const names[] = { "pad", "pad_post", "stride",
					     "dilation" };
	int64_t attrs[] = { m->a_conv_pre, m->a_conv_post, m->a_conv_stride,
			    m->a_conv_dil };
	struct battr *pre = m_battr(conv, m->a_conv_pre),
		     *post = m_battr(conv, m->a_conv_post);

	for (int i = 0; i < 4; i++) {
		struct battr *a = m_battr(conv, attrs[i]);
		if (!a || !a->bytes || a->bytes % 8)
			continue;
		if (i == 1 && pre && post && pre->bytes == post->bytes &&
		    !memcmp(bdata(pre), bdata(post), pre->bytes))
			continue;
		dt_sb_printf(b, "%s%s=[", b->len ? " " : "", names[i]);
		for (uint32_t k = 0; k < a->bytes / 8; k++) {
			int64_t v;
			memcpy(&v, bdata(a) + k * 8, 8);
			dt_sb_printf(b, "%s%" PRId64, k ? "," : "", v);
			if (attrs[i] == m->a_conv_stride && v > *stride)
				*stride = (uint32_t)v;
		}
		dt_sb_printf(b, "]");
	}
}

/* An operation's cost, from the tensors its attributes point to now. */
struct dt_cost_part *m_cost_part(struct cudnn_model *m, struct obj *o)
{
	const char *type =
		dt_enum_name("cudnnBackendDescriptorType_t", 28, o->btype);
	struct dt_role_tensor ts[DT_PART_TENSORS];
	const char *mode = NULL;
	struct dt_sbuf brief = { 0 };
	int n = 0;
	uint32_t stride = 0;

	if (!type || !strstr(type, "BACKEND_OPERATION_"))
		return NULL;
	for (uint32_t i = 0; i < o->n_attrs; i++) {
		const struct battr *a = &o->attrs[i];
		if (a->type != 15) /* BACKEND_DESCRIPTOR */
			continue;
		for (uint32_t k = 0; k < a->bytes / 8 && n < DT_PART_TENSORS;
		     k++) {
			struct obj *t = m_obj_find(
				m, m_battr_ptr(o, a->name, k), false);
			const char *attr = dt_enum_name(
				"cudnnBackendAttributeName_t", 27, a->name);
			if (t && t->btype == m->bt_tensor && t->t.valid && attr)
				ts[n++] =
					(struct dt_role_tensor){ attr, &t->t };
			else if (t && t->btype == m->bt_pointwise)
				mode = dt_enum_name(
					"cudnnPointwiseMode_t", 20,
					m_battr_i64(t, m->a_pw_mode, -1));
			else if (t && t->btype == m->bt_conv)
				conv_brief(m, &brief, t, &stride);
		}
	}
	for (int i = 0; i < n; i++) {
		char role[96];
		if (ts[i].t->is_virtual || ts[i].t->by_value)
			continue;
		dt_sb_printf(&brief, "%s%s=", brief.len ? " " : "",
			     role_name(ts[i].attr, role, sizeof(role)));
		describe_tensor(&brief, ts[i].t);
	}
	free(o->brief);
	o->brief = dt_sb_take(&brief);
	struct dt_cost_part *p = malloc(sizeof(*p));
	if (p)
		dt_cost_backend_op(p, type, ts, n,
				   m_battr_i64(o, m->a_norm_phase, 1), mode);
	o->node = (struct dt_recipe_node){
		.kind = p ? p->kind : DT_KIND_OTHER,
		.training =
			m_battr(o, m->a_norm_phase) &&
			m_battr_i64(o, m->a_norm_phase, -1) == m->norm_training,
		.stride = stride,
	};
	return p;
}

static int64_t field_of(const void *desc, const char *name, int64_t def)
{
	return m_fval(desc, name, def);
}

/* Which of a legacy op's ptrs holds the data of the tensor whose
 * descriptor is `role` ("x" for xDesc: the argument x, or X when the
 * function names its data so, as cudnnOpTensor does); -1 none. */
static int32_t legacy_ptr_index(const struct dt_arg *args, int n,
				const char *role, size_t len)
{
	char flipped[64];

	if (!len || len >= sizeof(flipped))
		return -1;
	memcpy(flipped, role, len);
	flipped[0] ^= 0x20;
	for (int pass = 0; pass < 2; pass++) {
		const char *want = pass ? flipped : role;
		int32_t k = 0;
		for (int i = 0; i < n && k < LEGACY_PTRS; i++) {
			if (!is_data_ptr(&args[i]))
				continue;
			if (args[i].name_len == len &&
			    !memcmp(args[i].name, want, len))
				return k;
			k++;
		}
	}
	return -1;
}
/* Describe a legacy call's problem: its descriptors and scalars. */
/* A legacy convolution descriptor's largest stride: 2-d ones' u and v,
 * N-d ones' filterStrideA. */
static void legacy_stride(const struct obj *o, uint32_t *stride)
{
	const struct field *nd = m_field(o, "filterStrideA");
	int64_t s = m_fval(o, "u", 0);

	if (m_fval(o, "v", 0) > s)
		s = m_fval(o, "v", 0);
	for (uint32_t i = 0; nd && nd->code == 'a' && i < nd->count; i++)
		if (nd->v[i] > s)
			s = nd->v[i];
	if (s > (int64_t)*stride)
		*stride = (uint32_t)s;
}

struct legacy_entry *m_legacy_describe(struct cudnn_model *m,
				       const struct dt_api_def *api,
				       const struct dt_arg *args, int n,
				       uint64_t key)
{
	struct legacy_entry *e = calloc(1, sizeof(*e));
	struct dt_sbuf b = { 0 };
	struct dt_legacy_arg la[40] = { 0 };
	int n_la = 0;
	size_t algo_at = 0, algo_len = 0; /* where desc names the algorithm */

	if (!e)
		return NULL;
	e->key = key;
	e->algo = -1;
	e->workspace = -1;
	e->tensor_cores = -1;
	for (int i = 0; i < n; i++) {
		const struct dt_arg *a = &args[i];
		char tmp[96], t[64];
		if (is_handle(a))
			continue;
		struct dt_legacy_arg *l = n_la < 40 ? &la[n_la++] : NULL;
		if (l)
			*l = (struct dt_legacy_arg){ .name = a->name,
						     .name_len = a->name_len,
						     .value = a->i };
		if (is_desc(a)) {
			struct obj *o = m_obj_find(m, a->u, false);
			dt_sb_printf(&b, "%s%.*s=", b.len ? " " : "",
				     (int)a->name_len - 4, a->name);
			if (!o) {
				dt_sb_printf(&b, "?");
			} else if (o->t.valid) {
				describe_tensor(&b, &o->t);
				tlist_add(&e->tensors, &o->t, a->name,
					  a->name_len - 4,
					  legacy_ptr_index(args, n, a->name,
							   a->name_len - 4));
				if (l)
					l->t = &o->t;
			} else {
				describe_fields(&b, o, &e->node.training);
				legacy_stride(o, &e->node.stride);
				if (l)
					l->desc = o;
				/* RNN calls carry their algorithm in the
				 * descriptor */
				if (e->algo < 0 && m_field(o, "algo"))
					e->algo = m_fval(o, "algo", -1);
				/* a convolution held to FMA math */
				if (m_fval(o, "mathType", -1) == 3)
					e->tensor_cores = 0;
			}
		} else if (a->code == 'e' && a->type) {
			size_t at = b.len;
			snprintf(t, sizeof(t), "%.*s", (int)a->type_len,
				 a->type);
			const char *v =
				short_enum(t, a->i, tmp, sizeof(tmp), "CUDNN_");
			dt_sb_printf(&b, "%s%.*s=%s", b.len ? " " : "",
				     (int)a->name_len, a->name, v);
			e->node.training |= says_training(v);
			if (a->name_len == 4 && !memcmp(a->name, "algo", 4)) {
				e->algo = a->i;
				algo_at = at;
				algo_len = b.len - at;
			}
		} else if (a->code == 'u' && a->name_len >= 13 &&
			   !strncasecmp(a->name, "workspacesize", 13)) {
			e->workspace = a->i;
		}
	}
	dt_cost_legacy(&e->cost, api->name, la, n_la, field_of);
	e->node.kind = e->cost.kind;
	e->node.training |= strstr(api->name, "Training") != NULL;
	e->desc = dt_sb_take(&b);
	/* a convolution's algorithm is cuDNN's answer (through Find or Get),
	 * not part of the problem; softmax's and RNNs' are the program's */
	if (algo_len && strstr(api->name, "Convolution")) {
		e->problem = strdup(e->desc);
		if (e->problem) {
			size_t len = strlen(e->problem);
			memmove(e->problem + algo_at,
				e->problem + algo_at + algo_len,
				len - algo_at - algo_len + 1);
			if (*e->problem == ' ')
				memmove(e->problem, e->problem + 1,
					strlen(e->problem));
		}
	}
	if (!e->problem)
		e->problem = strdup(e->desc);
	return e;
}

void m_kv_add(struct kv_list *k, const char *name, int64_t value)
{
	if (k->n == sizeof(k->at) / sizeof(k->at[0]))
		return;
	if (k->words)
		dt_sb_printf(&k->text, "%s%s", k->text.len ? " " : "", name);
	else
		dt_sb_printf(&k->text, "%s%s=%" PRId64, k->text.len ? " " : "",
			     name, value);
	k->at[k->n] = (uint32_t)k->names.len;
	k->v[k->n++] = value;
	dt_sb_printf(&k->names, "%s%c", name, 0);
}

const struct dt_recipe_kv *m_kv_keep(struct cudnn_model *m, struct kv_list *k,
				     char **text, uint32_t *n)
{
	size_t head = k->n * sizeof(struct dt_recipe_kv);
	struct dt_recipe_kv *kv = k->n ? malloc(head + k->names.len) : NULL;

	*text = k->n || k->words ? (char *)m_keep(m->core, dt_sb_take(&k->text))
				 : NULL;
	if (kv) {
		char *names = (char *)kv + head;
		memcpy(names, k->names.p, k->names.len);
		for (uint32_t i = 0; i < k->n; i++)
			kv[i] = (struct dt_recipe_kv){ names + k->at[i],
						       k->v[i] };
		m_keep(m->core, (char *)kv);
	}
	*n = kv ? k->n : 0;
	free(k->text.p);
	free(k->names.p);
	*k = (struct kv_list){ 0 };
	return kv;
}

/* The knob choices of an engine config, as the program set them or read
 * them back: "TILE_SIZE=4 KBLOCK=3"; none when none are known (yet). */
void m_knobs_read(struct cudnn_model *m, struct cfg_info *c, uint64_t cfg_ptr)
{
	struct obj *cfg = m_obj_find(m, cfg_ptr, false);
	struct battr *kc = cfg && cfg->btype == m->bt_cfg
				   ? m_battr(cfg, m->a_cfg_knobs)
				   : NULL;
	struct kv_list kl = { 0 };
	char tmp[96];

	for (uint32_t i = 0; kc && i < kc->bytes / 8; i++) {
		struct obj *k = m_obj_find(
			m, m_battr_ptr(cfg, m->a_cfg_knobs, i), false);
		int64_t type = k ? m_battr_i64(k, m->a_knob_type, -1) : -1;
		int64_t value = k ? m_battr_i64(k, m->a_knob_value, -1) : -1;
		if (type < 0 || value == -1) /* -1: left at its default */
			continue;
		m_kv_add(&kl,
			 short_enum("cudnnBackendKnobType_t", type, tmp,
				    sizeof(tmp), "CUDNN_KNOB_TYPE_"),
			 value);
	}
	c->knob_kv = m_kv_keep(m, &kl, &c->knobs, &c->n_knob_kv);
}
/* "plan=3 <graph> knobs{...} notes{...}": described again only when what
 * is known of its engine changed. */
const char *m_plan_desc(struct cudnn_model *m, struct plan_info *pi)
{
	struct cfg_info *cfg = pi->cfg;
	const char *knobs = cfg ? cfg->knobs : NULL;
	const char *notes = cfg ? cfg->notes : NULL;
	struct dt_sbuf b = { 0 };

	if (pi->desc && pi->desc_knobs == knobs && pi->desc_notes == notes)
		return pi->desc;
	if (cfg && cfg->graph)
		dt_sb_printf(&b, "plan=%u %s", pi->id, cfg->graph);
	else if (pi->no_graph)
		dt_sb_printf(&b, "plan=%u (restored from %s)", pi->id,
			     pi->no_graph);
	else
		dt_sb_printf(&b, "plan=%u (graph unknown)", pi->id);
	if (knobs)
		dt_sb_printf(&b, " knobs{%s}", knobs);
	if (notes && *notes)
		dt_sb_printf(&b, " notes{%s}", notes);
	pi->desc = m_keep(m->core, dt_sb_take(&b));
	pi->desc_knobs = knobs;
	pi->desc_notes = notes;
	return pi->desc;
}
/* An engine's numerical notes, read back into c: "TENSOR_CORE
 * DOWN_CONVERT_INPUTS", and each by name. */
void m_notes_read(struct cudnn_model *m, struct cfg_info *c, struct obj *o,
		  int64_t attr)
{
	struct battr *a = m_battr(o, attr);
	struct kv_list k = { .words = true };
	char tmp[96];

	for (uint32_t i = 0; a && i + 4 <= a->bytes; i += 4) {
		int32_t v;
		memcpy(&v, bdata(a) + i, 4);
		m_kv_add(&k,
			 short_enum("cudnnBackendNumericalNote_t", v, tmp,
				    sizeof(tmp), "CUDNN_NUMERICAL_NOTE_"),
			 v);
	}
	c->note_kv = m_kv_keep(m, &k, &c->notes, &c->n_note_kv);
}
