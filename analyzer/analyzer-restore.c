/*
 * analyzer-restore.c - an execution plan restored from its JSON
 * representation (CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION), turned
 * into what a built plan gives the model.
 *
 * Programs with a plan cache (XLA, cudnn-frontend's deserialize()) never
 * build the graph of a plan they restore: its tensors, operations, engine
 * and knobs are only in the JSON document cuDNN wrote when the plan was
 * serialized. This file reads that document (schema version 4, cuDNN 9)
 * with json-c and replays it as the calls a program would have made:
 * tensor descriptors, operations with their parameter descriptors, an
 * operation graph, each finalized through the model's own code and then
 * destroyed. So a restored plan is described, costed and fused exactly as
 * the built one. It is not a general JSON reader, nor does it read the
 * frontend's own serialization (which embeds this document).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-cudnn-model.h"

/* The schema this file reads: cuDNN 9's. */
#define SCHEMA_VERSION 4
/* Descriptors made here live at addresses no program has (above the
 * 57-bit user address space), for as long as one restore. */
#define SYNTH_BASE 0xd700000000000000ull

/* How a JSON value becomes an attribute's payload. */
enum vkind {
	V_ENUM,  /* a name of enum ctype, 4 bytes */
	V_INT64, /* a number */
	V_INTS,  /* an array of numbers, int64 each */
	V_NDIMS, /* the length of an array, as int64 */
	V_FLOAT, /* a number, as float */
	V_BOOL,  /* true or false, one byte */
};

/* One key of a node, as an attribute. */
struct param {
	const char *key;
	const char *attr;  /* cudnnBackendAttributeName_t */
	const char *atype; /* cudnnBackendAttributeType_t */
	enum vkind kind;
	const char *ctype; /* V_ENUM: the C enum */
};

#define P_ENUM(k, a, t, c)                       \
	{                                        \
		k, a, "CUDNN_TYPE_" t, V_ENUM, c \
	}
#define P_DTYPE(k, a) P_ENUM(k, a, "DATA_TYPE", "cudnnDataType_t")
#define P_INTS(k, a)                                   \
	{                                              \
		k, a, "CUDNN_TYPE_INT64", V_INTS, NULL \
	}

static const struct param pointwise_desc[] = {
	P_ENUM("pointwiseMode", "CUDNN_ATTR_POINTWISE_MODE", "POINTWISE_MODE",
	       "cudnnPointwiseMode_t"),
	P_DTYPE("mathPrec", "CUDNN_ATTR_POINTWISE_MATH_PREC"),
	{ "axis", "CUDNN_ATTR_POINTWISE_AXIS", "CUDNN_TYPE_INT64", V_INT64,
	  NULL },
	{ NULL, NULL, NULL, V_INT64, NULL },
};
static const struct param pointwise_op[] = {
	{ "alpha1", "CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1", "CUDNN_TYPE_FLOAT",
	  V_FLOAT, NULL },
	{ "alpha2", "CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2", "CUDNN_TYPE_FLOAT",
	  V_FLOAT, NULL },
	{ NULL, NULL, NULL, V_INT64, NULL },
};
static const struct param matmul_desc[] = {
	P_DTYPE("mathPrec", "CUDNN_ATTR_MATMUL_COMP_TYPE"),
	{ NULL, NULL, NULL, V_INT64, NULL },
};
static const struct param reduction_desc[] = {
	P_DTYPE("mathPrec", "CUDNN_ATTR_REDUCTION_COMP_TYPE"),
	P_ENUM("reductionOp", "CUDNN_ATTR_REDUCTION_OPERATOR",
	       "REDUCTION_OPERATOR_TYPE", "cudnnReduceTensorOp_t"),
	{ "isDeterministic", "CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC",
	  "CUDNN_TYPE_BOOLEAN", V_BOOL, NULL },
	{ NULL, NULL, NULL, V_INT64, NULL },
};
static const struct param conv_desc[] = {
	P_DTYPE("mathPrec", "CUDNN_ATTR_CONVOLUTION_COMP_TYPE"),
	P_ENUM("mode", "CUDNN_ATTR_CONVOLUTION_CONV_MODE", "CONVOLUTION_MODE",
	       "cudnnConvolutionMode_t"),
	{ "pad", "CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS", "CUDNN_TYPE_INT64",
	  V_NDIMS, NULL },
	P_INTS("pad", "CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS"),
	P_INTS("pad", "CUDNN_ATTR_CONVOLUTION_POST_PADDINGS"),
	P_INTS("dilation", "CUDNN_ATTR_CONVOLUTION_DILATIONS"),
	P_INTS("stride", "CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES"),
	{ NULL, NULL, NULL, V_INT64, NULL },
};
#define CONV_OP(dir)                                                         \
	{                                                                    \
		{ "alpha", "CUDNN_ATTR_OPERATION_CONVOLUTION_" dir "_ALPHA", \
		  "CUDNN_TYPE_FLOAT", V_FLOAT, NULL },                       \
			{ "beta",                                            \
			  "CUDNN_ATTR_OPERATION_CONVOLUTION_" dir "_BETA",   \
			  "CUDNN_TYPE_FLOAT", V_FLOAT, NULL },               \
		{                                                            \
			NULL, NULL, NULL, V_INT64, NULL                      \
		}                                                            \
	}
static const struct param conv_fwd_op[] = CONV_OP("FORWARD");
static const struct param conv_bwd_data_op[] = CONV_OP("BWD_DATA");
static const struct param conv_bwd_filter_op[] = CONV_OP("BWD_FILTER");

/* How the nodes of one operation type are laid out: the prefix of its
 * attributes, the parameter descriptor that some of its keys go to and
 * where it is set (before the tensors, or after them), its own scalars.
 * The order is the one cudnn-frontend sets them in, so that a restored
 * plan reads as the same plan built. Types not listed get their tensors
 * only. */
static const struct op_rule {
	const char *op; /* CUDNN_BACKEND_OPERATION_<op>_DESCRIPTOR */
	const char *prefix;
	const char *desc; /* cudnnBackendDescriptorType_t, or NULL */
	const char *desc_attr;
	bool desc_first;
	const struct param *desc_params, *params;
} rules[] = {
	{ "POINTWISE", "POINTWISE_", "CUDNN_BACKEND_POINTWISE_DESCRIPTOR",
	  "CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR", true, pointwise_desc,
	  pointwise_op },
	{ "MATMUL", "MATMUL_", "CUDNN_BACKEND_MATMUL_DESCRIPTOR",
	  "CUDNN_ATTR_OPERATION_MATMUL_DESC", false, matmul_desc, NULL },
	{ "REDUCTION", "REDUCTION_", "CUDNN_BACKEND_REDUCTION_DESCRIPTOR",
	  "CUDNN_ATTR_OPERATION_REDUCTION_DESC", true, reduction_desc, NULL },
	{ "CONVOLUTION_FORWARD", "CONVOLUTION_FORWARD_",
	  "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR",
	  "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC", false,
	  conv_desc, conv_fwd_op },
	{ "CONVOLUTION_BACKWARD_DATA", "CONVOLUTION_BWD_DATA_",
	  "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR",
	  "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC", false,
	  conv_desc, conv_bwd_data_op },
	{ "CONVOLUTION_BACKWARD_FILTER", "CONVOLUTION_BWD_FILTER_",
	  "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR",
	  "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC", false,
	  conv_desc, conv_bwd_filter_op },
	{ "NORM_FORWARD", "NORM_FWD_", NULL, NULL, false, NULL, NULL },
	{ "NORM_BACKWARD", "NORM_BWD_", NULL, NULL, false, NULL, NULL },
};

/* One restore: the descriptors it made, to be destroyed at its end. */
struct restore {
	struct cudnn_model *m;
	struct obj **made;
	size_t n_made, cap_made;
	json_object *tensors; /* the graph's, by name */
	uint64_t handle;      /* the plan's, 0 none */
	const char *why;      /* set when a node could not be made */
	char buf[160];
};

static int64_t enum_of(const char *type, const char *name)
{
	return name ? dt_enum_value(type, name, -1) : -1;
}

static int64_t attr_of(const char *name)
{
	return enum_of("cudnnBackendAttributeName_t", name);
}

static int64_t atype_of(const char *name)
{
	return enum_of("cudnnBackendAttributeType_t", name);
}

static struct obj *make(struct restore *r, int64_t btype)
{
	struct cudnn_model *m = r->m;

	if (r->n_made == r->cap_made) {
		size_t cap = r->cap_made ? 2 * r->cap_made : 64;
		struct obj **v = realloc(r->made, cap * sizeof(*v));
		if (!v)
			return NULL;
		r->made = v;
		r->cap_made = cap;
	}
	struct obj *o = m_obj_new(m, SYNTH_BASE + 16 * (r->n_made + 1));
	if (o) {
		o->btype = btype;
		r->made[r->n_made++] = o;
	}
	return o;
}

static void set_bytes(struct restore *r, struct obj *o, const char *attr,
		      const char *atype, const void *data, uint32_t bytes)
{
	int64_t a = attr_of(attr), t = atype_of(atype);

	if (a >= 0 && t >= 0)
		m_set_battr(r->m, o, a, t, data, bytes);
}

/* The value of key as p says, set on o; false when it has another shape
 * (an enum name this build does not know, a string for a number). */
static bool set_param(struct restore *r, struct obj *o, const struct param *p,
		      json_object *v)
{
	int64_t ints[DT_MAX_DIMS];
	size_t n;

	switch (p->kind) {
	case V_ENUM: {
		int64_t e = enum_of(p->ctype, json_object_get_string(v));
		int32_t e32 = (int32_t)e;
		if (e < 0 || !json_object_is_type(v, json_type_string))
			return false;
		set_bytes(r, o, p->attr, p->atype, &e32, 4);
		return true;
	}
	case V_INT64:
		ints[0] = json_object_get_int64(v);
		set_bytes(r, o, p->attr, p->atype, ints, 8);
		return json_object_is_type(v, json_type_int);
	case V_INTS:
	case V_NDIMS:
		if (!json_object_is_type(v, json_type_array))
			return false;
		n = json_object_array_length(v);
		if (n > DT_MAX_DIMS)
			return false;
		for (size_t i = 0; i < n; i++)
			ints[i] = json_object_get_int64(
				json_object_array_get_idx(v, i));
		if (p->kind == V_NDIMS) {
			ints[0] = (int64_t)n;
			n = 1;
		}
		set_bytes(r, o, p->attr, p->atype, ints, (uint32_t)(8 * n));
		return true;
	case V_FLOAT: {
		float f = (float)json_object_get_double(v);
		set_bytes(r, o, p->attr, p->atype, &f, 4);
		return true;
	}
	case V_BOOL: {
		uint8_t b = json_object_get_boolean(v);
		set_bytes(r, o, p->attr, p->atype, &b, 1);
		return true;
	}
	}
	return false;
}

static void set_params(struct restore *r, struct obj *o, const struct param *ps,
		       json_object *node)
{
	for (const struct param *p = ps; p && p->key; p++) {
		json_object *v;
		if (json_object_object_get_ex(node, p->key, &v) &&
		    !set_param(r, o, p, v) && !r->why) {
			snprintf(r->buf, sizeof(r->buf),
				 "its JSON's %s is %.60s, unknown to this "
				 "build",
				 p->key, json_object_to_json_string(v));
			r->why = r->buf;
		}
	}
}

static void set_desc(struct restore *r, struct obj *o, const char *attr,
		     const struct obj *d)
{
	uint64_t p = d->ptr;
	set_bytes(r, o, attr, "CUDNN_TYPE_BACKEND_DESCRIPTOR", &p, 8);
}

/* A tensor descriptor from one entry of the graph's "tensors". */
static struct obj *tensor(struct restore *r, json_object *t)
{
	static const struct {
		const char *key, *attr, *atype;
		enum vkind kind;
	} keys[] = {
		{ "dataType", "CUDNN_ATTR_TENSOR_DATA_TYPE", "DATA_TYPE",
		  V_ENUM },
		{ "dim", "CUDNN_ATTR_TENSOR_DIMENSIONS", "INT64", V_INTS },
		{ "stride", "CUDNN_ATTR_TENSOR_STRIDES", "INT64", V_INTS },
		{ "ptrAlignment", "CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT", "INT64",
		  V_INT64 },
		{ "isVirtual", "CUDNN_ATTR_TENSOR_IS_VIRTUAL", "BOOLEAN",
		  V_BOOL },
		{ "isByValue", "CUDNN_ATTR_TENSOR_IS_BY_VALUE", "BOOLEAN",
		  V_BOOL },
	};
	struct obj *o = make(r, r->m->bt_tensor);
	json_object *v;
	char atype[48];

	if (!o)
		return NULL;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!json_object_object_get_ex(t, keys[i].key, &v))
			continue;
		/* false is the default: left unset, as a program leaves it */
		if (keys[i].kind == V_BOOL && !json_object_get_boolean(v))
			continue;
		snprintf(atype, sizeof(atype), "CUDNN_TYPE_%s", keys[i].atype);
		struct param p = { keys[i].key, keys[i].attr, atype,
				   keys[i].kind, "cudnnDataType_t" };
		set_param(r, o, &p, v);
	}
	/* its name is its unique id */
	const char *name = json_object_object_get_ex(t, "name", &v)
				   ? json_object_get_string(v)
				   : NULL;
	char *end;
	int64_t uid = name ? strtoll(name, &end, 10) : 0;
	if (name && *name && !*end)
		set_bytes(r, o, "CUDNN_ATTR_TENSOR_UNIQUE_ID",
			  "CUDNN_TYPE_INT64", &uid, 8);
	m_finalize_desc(r->m, o);
	return o;
}

/* The attribute of a node's tensor key: <prefix>KEY, KEYDESC or KEY_DESC
 * (matA -> MATMUL_ADESC). */
static int64_t tensor_attr(const char *prefix, const char *key)
{
	static const char *const forms[] = { "%s%s", "%s%sDESC", "%s%s_DESC" };
	char name[128];

	if (!strncmp(key, "mat", 3) && key[3])
		key += 3;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char full[160];
		snprintf(name, sizeof(name), forms[i], prefix, key);
		snprintf(full, sizeof(full), "CUDNN_ATTR_OPERATION_%s", name);
		int64_t a = attr_of(full);
		if (a >= 0)
			return a;
	}
	return -1;
}

static const struct op_rule *rule_of(const char *op, char *kind, size_t size)
{
	const char *pre = "CUDNN_BACKEND_OPERATION_", *suf = "_DESCRIPTOR";
	size_t n = strlen(op), np = strlen(pre), ns = strlen(suf);

	kind[0] = 0;
	if (n <= np + ns || strncmp(op, pre, np) || strcmp(op + n - ns, suf))
		return NULL;
	snprintf(kind, size, "%.*s", (int)(n - np - ns), op + np);
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (!strcmp(rules[i].op, kind))
			return &rules[i];
	return NULL;
}

/* An operation from one of the graph's "nodes", finalized. */
static struct obj *operation(struct restore *r, json_object *node)
{
	json_object *v;
	const char *op = json_object_object_get_ex(node, "operation", &v)
				 ? json_object_get_string(v)
				 : "";
	int64_t btype = enum_of("cudnnBackendDescriptorType_t", op);
	char kind[96], prefix[112];
	const struct op_rule *rule = rule_of(op, kind, sizeof(kind));
	struct obj *o, *desc = NULL;

	if (btype < 0 || !*kind) {
		snprintf(r->buf, sizeof(r->buf),
			 "its JSON has operation %.80s, unknown to this build",
			 op);
		r->why = r->buf;
		return NULL;
	}
	if (!(o = make(r, btype)))
		return NULL;
	snprintf(prefix, sizeof(prefix), "%s", rule ? rule->prefix : kind);
	if (!rule)
		strcat(prefix, "_");
	if (rule && rule->desc) {
		desc = make(
			r, enum_of("cudnnBackendDescriptorType_t", rule->desc));
		if (!desc)
			return NULL;
		set_params(r, desc, rule->desc_params, node);
		m_finalize_desc(r->m, desc);
		if (rule->desc_first)
			set_desc(r, o, rule->desc_attr, desc);
	}
	json_object_object_foreach(node, key, val)
	{
		json_object *t;
		int64_t a;
		if (!json_object_is_type(val, json_type_string) ||
		    !json_object_object_get_ex(r->tensors,
					       json_object_get_string(val), &t))
			continue;
		if ((a = tensor_attr(prefix, key)) < 0) {
			if (!r->why) {
				snprintf(r->buf, sizeof(r->buf),
					 "its JSON's %.40s tensor %.40s has no "
					 "attribute in this build",
					 kind, key);
				r->why = r->buf;
			}
			continue;
		}
		uint64_t p = (uint64_t)json_object_get_int64(t);
		m_set_battr(r->m, o, a,
			    atype_of("CUDNN_TYPE_BACKEND_DESCRIPTOR"),
			    (const uint8_t *)&p, 8);
	}
	if (desc && !rule->desc_first)
		set_desc(r, o, rule->desc_attr, desc);
	if (rule)
		set_params(r, o, rule->params, node);
	m_finalize_desc(r->m, o);
	return o;
}

/* The operation graph of og ({"tensors": [...], "nodes": [...]}),
 * described into cfg. */
static void graph(struct restore *r, json_object *og, struct cfg_info *cfg)
{
	json_object *ts, *nodes;
	uint64_t ops[64];
	size_t n_ops = 0;

	if (!json_object_object_get_ex(og, "tensors", &ts) ||
	    !json_object_object_get_ex(og, "nodes", &nodes) ||
	    !json_object_is_type(ts, json_type_array) ||
	    !json_object_is_type(nodes, json_type_array)) {
		r->why = "its JSON's operation graph has no tensors or nodes";
		return;
	}
	/* name -> the address of its descriptor */
	r->tensors = json_object_new_object();
	for (size_t i = 0; r->tensors && i < json_object_array_length(ts);
	     i++) {
		json_object *t = json_object_array_get_idx(ts, i), *name;
		struct obj *o = tensor(r, t);
		if (o && json_object_object_get_ex(t, "name", &name))
			json_object_object_add(
				r->tensors, json_object_get_string(name),
				json_object_new_int64((int64_t)o->ptr));
	}
	if (json_object_array_length(nodes) > sizeof(ops) / sizeof(ops[0])) {
		/* a graph is never cut: it is said unknown, with why */
		snprintf(r->buf, sizeof(r->buf),
			 "its JSON's operation graph has %zu nodes, more than "
			 "the %zu this build reads",
			 json_object_array_length(nodes),
			 sizeof(ops) / sizeof(ops[0]));
		r->why = r->buf;
		return;
	}
	for (size_t i = 0; i < json_object_array_length(nodes); i++) {
		struct obj *o =
			operation(r, json_object_array_get_idx(nodes, i));
		if (!o)
			return;
		ops[n_ops++] = o->ptr;
	}
	struct obj *g = make(r, r->m->bt_graph);
	if (!g)
		return;
	m_set_battr(r->m, g, r->m->a_graph_ops,
		    atype_of("CUDNN_TYPE_BACKEND_DESCRIPTOR"),
		    (const uint8_t *)ops, (uint32_t)(8 * n_ops));
	/* the plan's handle, as a program sets one on the graph it builds:
	 * a graph without one runs on no device (replay/ builds it again) */
	if (r->handle)
		set_bytes(r, g, "CUDNN_ATTR_OPERATIONGRAPH_HANDLE",
			  "CUDNN_TYPE_HANDLE", &r->handle, 8);
	m_finalize_desc(r->m, g);
	m_copy_graph(r->m, cfg, g);
}

/* The engine and its knobs: {"engineId": 2, "knobChoices": {...}}. */
static void engine(struct restore *r, json_object *e, struct cfg_info *cfg)
{
	json_object *v, *knobs;
	struct kv_list k = { 0 };
	const char *strip = "CUDNN_KNOB_TYPE_";

	if (json_object_object_get_ex(e, "engineId", &v) &&
	    json_object_is_type(v, json_type_int))
		cfg->engine = json_object_get_int64(v);
	if (cfg->knobs ||
	    !json_object_object_get_ex(e, "knobChoices", &knobs) ||
	    !json_object_is_type(knobs, json_type_object))
		return;
	json_object_object_foreach(knobs, key, val)
	{
		int64_t value = json_object_get_int64(val);
		if (value == -1) /* left at its default */
			continue;
		m_kv_add(&k,
			 strncmp(key, strip, strlen(strip))
				 ? key
				 : key + strlen(strip),
			 value);
	}
	cfg->knob_kv = m_kv_keep(r->m, &k, &cfg->knobs, &cfg->n_knob_kv);
}

/* The value of the document's key at its top level, parsed from where
 * the key is: for a document cut short, whose whole does not parse. */
static json_object *value_after(const char *text, size_t len, const char *key,
				enum json_tokener_error *err)
{
	char quoted[64];
	int n = snprintf(quoted, sizeof(quoted), "\"%s\"", key);
	const char *at = memmem(text, len, quoted, (size_t)n);
	json_tokener *tok;
	json_object *v;

	*err = json_tokener_success;
	if (!at)
		return NULL;
	at += n;
	while (at < text + len && (*at == ' ' || *at == ':'))
		at++;
	if (!(tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH)))
		return NULL;
	v = json_tokener_parse_ex(tok, at, (int)(text + len - at));
	*err = json_tokener_get_error(tok);
	json_tokener_free(tok);
	return v;
}

const char *m_restore_plan(struct cudnn_model *m, struct cfg_info *cfg,
			   const uint8_t *json, uint32_t len, uint64_t handle,
			   char *why, size_t size)
{
	const char *text = (const char *)json;
	struct restore r = { .m = m, .handle = handle };
	json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	json_object *doc = NULL, *og = NULL, *v;
	enum json_tokener_error err = json_tokener_error_parse_eof;
	int64_t version = -1;

	/* a C string's NUL may be in the payload */
	while (len && !text[len - 1])
		len--;
	if (tok) {
		doc = json_tokener_parse_ex(tok, text, (int)len);
		err = json_tokener_get_error(tok);
		json_tokener_free(tok);
	}
	if (doc) {
		if (json_object_object_get_ex(doc, "schemaVersion", &v))
			version = json_object_get_int64(v);
		if (json_object_object_get_ex(doc, "operationGraph", &og))
			og = json_object_get(og);
	} else {
		/* cut short (an older recorder kept 16 KiB): its graph may
		 * be whole all the same */
		json_object *sv = value_after(text, len, "schemaVersion", &err);
		version = sv ? json_object_get_int64(sv) : -1;
		json_object_put(sv);
		og = value_after(text, len, "operationGraph", &err);
	}
	if (version != SCHEMA_VERSION) {
		if (version < 0)
			snprintf(why, size, "JSON with no schema version (%s)",
				 json_tokener_error_desc(err));
		else
			snprintf(why, size,
				 "JSON of schema version %" PRId64
				 ", which this build does not read",
				 version);
	} else if (!og) {
		if (err == json_tokener_continue)
			snprintf(why, size,
				 "JSON cut at %" PRIu32
				 " bytes, before its graph ended",
				 len);
		else if (err != json_tokener_success)
			snprintf(why, size, "JSON unreadable: %s",
				 json_tokener_error_desc(err));
		else
			snprintf(why, size, "JSON with no operation graph");
	} else {
		graph(&r, og, cfg);
		if (!cfg->graph)
			snprintf(why, size, "%s",
				 r.why ? r.why
				       : "JSON whose graph did not decode");
		else if (doc && json_object_object_get_ex(doc, "engine", &v))
			engine(&r, v, cfg);
	}
	bool ok = cfg->graph != NULL;
	for (size_t i = r.n_made; i-- > 0;)
		m_obj_remove(m, r.made[i]);
	free(r.made);
	json_object_put(r.tensors);
	json_object_put(og);
	json_object_put(doc);
	return ok ? NULL : why;
}
