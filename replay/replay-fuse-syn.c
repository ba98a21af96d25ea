/*
 * replay-fuse-syn.c - a cuDNN backend graph made as data, as the cuDNN
 * decoder keeps a recorded one (struct dt_cudnn_graph): descriptors and
 * their attributes appended in order, each after those it points to, the
 * operation graph last, so that replay-graph.c builds and runs it as it
 * does those; and cuDNN's enumerators those graphs are made of, by name.
 * What the graphs are made of is replay-fuse.c's and
 * replay-fuse-heads.c's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "replay-fuse.h"

/* ------------------------------------------------ cuDNN's enumerators */

static int64_t ev(const char *type, const char *prefix, const char *name)
{
	char n[128];

	snprintf(n, sizeof(n), "%s%s", prefix, name);
	return dt_enum_value(type, n, -1);
}

int64_t fz_attr(const char *name)
{
	return ev("cudnnBackendAttributeName_t", "CUDNN_ATTR_", name);
}

int64_t fz_desc(const char *name)
{
	return ev("cudnnBackendDescriptorType_t", "CUDNN_BACKEND_", name);
}

int64_t fz_type(const char *name)
{
	return ev("cudnnBackendAttributeType_t", "CUDNN_TYPE_", name);
}

int64_t fz_data(const char *name)
{
	return ev("cudnnDataType_t", "CUDNN_DATA_", name);
}

struct fz_enums fz_e;

void fz_enums_init(void)
{
	if (fz_e.done)
		return;
	fz_e.t_handle = fz_type("HANDLE");
	fz_e.t_desc = fz_type("BACKEND_DESCRIPTOR");
	fz_e.t_int64 = fz_type("INT64");
	fz_e.t_bool = fz_type("BOOLEAN");
	fz_e.t_dtype = fz_type("DATA_TYPE");
	fz_e.t_pw_mode = fz_type("POINTWISE_MODE");
	fz_e.bt_tensor = fz_desc("TENSOR_DESCRIPTOR");
	fz_e.bt_pw = fz_desc("POINTWISE_DESCRIPTOR");
	fz_e.bt_op_pw = fz_desc("OPERATION_POINTWISE_DESCRIPTOR");
	fz_e.bt_graph = fz_desc("OPERATIONGRAPH_DESCRIPTOR");
	fz_e.a_t_dtype = fz_attr("TENSOR_DATA_TYPE");
	fz_e.a_t_dims = fz_attr("TENSOR_DIMENSIONS");
	fz_e.a_t_strides = fz_attr("TENSOR_STRIDES");
	fz_e.a_t_uid = fz_attr("TENSOR_UNIQUE_ID");
	fz_e.a_t_virtual = fz_attr("TENSOR_IS_VIRTUAL");
	fz_e.a_t_align = fz_attr("TENSOR_BYTE_ALIGNMENT");
	fz_e.a_pw_mode = fz_attr("POINTWISE_MODE");
	fz_e.a_pw_prec = fz_attr("POINTWISE_MATH_PREC");
	fz_e.a_op_pw = fz_attr("OPERATION_POINTWISE_PW_DESCRIPTOR");
	fz_e.a_op_x = fz_attr("OPERATION_POINTWISE_XDESC");
	fz_e.a_op_b = fz_attr("OPERATION_POINTWISE_BDESC");
	fz_e.a_op_y = fz_attr("OPERATION_POINTWISE_YDESC");
	fz_e.a_graph_ops = fz_attr("OPERATIONGRAPH_OPS");
	fz_e.a_graph_handle = fz_attr("OPERATIONGRAPH_HANDLE");
	fz_e.float_type = fz_data("FLOAT");
	fz_e.done = true;
}

int64_t fz_cudnn_dtype(int64_t dtype)
{
	char ty[DT_DTYPE_NAME_SIZE];

	return dtype < 0 ? -1 : fz_data(dt_dtype_name(dtype, ty, sizeof(ty)));
}

/* --------------------------------------------------- a graph as data */

int64_t syn_desc(struct syn *s, int64_t type)
{
	if (s->g.n_descs == SYN_DESCS || type < 0) {
		s->full = true;
		return -1;
	}
	struct dt_cudnn_desc *d = &s->descs[s->g.n_descs];
	*d = (struct dt_cudnn_desc){ .type = type,
				     .attrs = &s->attrs[s->n_attrs] };
	return s->g.n_descs++;
}

void syn_attr(struct syn *s, int64_t name, int64_t type, const void *v,
	      uint32_t bytes)
{
	if (!s->g.n_descs || s->n_attrs == SYN_ATTRS ||
	    bytes > SYN_BYTES - s->used || name < 0) {
		s->full = true;
		return;
	}
	memcpy(s->data + s->used, v, bytes);
	s->attrs[s->n_attrs++] =
		(struct dt_cudnn_attr){ .name = name,
					.type = type,
					.bytes = bytes,
					.data = s->data + s->used };
	s->descs[s->g.n_descs - 1].n_attrs++;
	s->used += bytes;
}

void syn_i64(struct syn *s, int64_t name, int64_t type, int64_t v)
{
	uint32_t es = dt_backend_type_size(type);

	syn_attr(s, name, type, &v, es ? es : 8); /* little endian */
}

int64_t syn_tensor_new(struct syn *s, int64_t dtype, int64_t uid, bool virt,
		       const int64_t *dims, const int64_t *strides, uint32_t n)
{
	int64_t i = syn_desc(s, fz_e.bt_tensor);
	uint8_t yes = virt;

	syn_i64(s, fz_e.a_t_dtype, fz_e.t_dtype, dtype);
	syn_attr(s, fz_e.a_t_dims, fz_e.t_int64, dims, n * 8);
	syn_attr(s, fz_e.a_t_strides, fz_e.t_int64, strides, n * 8);
	syn_attr(s, fz_e.a_t_uid, fz_e.t_int64, &uid, 8);
	syn_attr(s, fz_e.a_t_virtual, fz_e.t_bool, &yes, 1);
	syn_i64(s, fz_e.a_t_align, fz_e.t_int64, 16);
	return i;
}

/* A copy of tensor t of bp: of type dtype, uid, virtual or not, and of
 * dims and strides (n of them) where given, its own otherwise. */
int64_t syn_tensor(struct syn *s, const struct dt_cudnn_graph *bp, uint32_t t,
		   int64_t dtype, int64_t uid, bool virt, const int64_t *dims,
		   const int64_t *strides, uint32_t n)
{
	const struct dt_cudnn_desc *d = &bp->descs[t];
	int64_t i = syn_desc(s, fz_e.bt_tensor);
	uint8_t yes = virt;

	if (i < 0)
		return -1;
	for (uint32_t k = 0; k < d->n_attrs; k++) {
		const struct dt_cudnn_attr *a = &d->attrs[k];
		if (a->name != fz_e.a_t_dtype && a->name != fz_e.a_t_uid &&
		    a->name != fz_e.a_t_virtual &&
		    (!dims ||
		     (a->name != fz_e.a_t_dims && a->name != fz_e.a_t_strides)))
			syn_attr(s, a->name, a->type, a->data, a->bytes);
	}
	syn_i64(s, fz_e.a_t_dtype, fz_e.t_dtype, dtype);
	syn_attr(s, fz_e.a_t_uid, fz_e.t_int64, &uid, 8);
	syn_attr(s, fz_e.a_t_virtual, fz_e.t_bool, &yes, 1);
	if (dims) {
		syn_attr(s, fz_e.a_t_dims, fz_e.t_int64, dims, n * 8);
		syn_attr(s, fz_e.a_t_strides, fz_e.t_int64, strides, n * 8);
	}
	return i;
}

int64_t syn_pointwise_op(struct syn *s, int64_t mode, int64_t x, int64_t b,
			 int64_t y)
{
	int64_t pw = syn_desc(s, fz_e.bt_pw);

	syn_i64(s, fz_e.a_pw_mode, fz_e.t_pw_mode, mode);
	syn_i64(s, fz_e.a_pw_prec, fz_e.t_dtype, fz_e.float_type);
	int64_t op = syn_desc(s, fz_e.bt_op_pw);
	syn_attr(s, fz_e.a_op_pw, fz_e.t_desc, &pw, 8);
	syn_attr(s, fz_e.a_op_x, fz_e.t_desc, &x, 8);
	if (b >= 0)
		syn_attr(s, fz_e.a_op_b, fz_e.t_desc, &b, 8);
	syn_attr(s, fz_e.a_op_y, fz_e.t_desc, &y, 8);
	return op;
}

void syn_graph(struct syn *s, const int64_t *ops, uint32_t n)
{
	int64_t none = 0;
	int64_t i = syn_desc(s, fz_e.bt_graph);

	syn_attr(s, fz_e.a_graph_handle, fz_e.t_handle, &none, 8);
	syn_attr(s, fz_e.a_graph_ops, fz_e.t_desc, ops, n * 8);
	s->g.descs = s->descs;
	s->g.root = i < 0 ? 0 : (uint32_t)i;
	s->g.complete = !s->full;
}
