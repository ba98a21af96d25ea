/*
 * dt-cudnn-build.h - what the cuDNN decoder keeps of a problem to build it
 * again on a GPU (replay/ does): a backend graph's descriptors with the
 * attributes the program set, or a legacy call's arguments with what its
 * descriptors were set to. An op's recipe holds one in build. Part of
 * analyzer/'s public interface; dt-analyzer.h includes every part.
 */
#ifndef DT_CUDNN_BUILD_H
#define DT_CUDNN_BUILD_H

#include "dt-cost.h"

/* A backend operation graph as the program built it, kept as data so it
 * can be built again (replay/ does, on a GPU): every descriptor it
 * reaches (operations, tensors, pointwise and convolution descriptors,
 * the graph itself), a descriptor after those it points to, the graph
 * last. What an op's recipe holds in build for a backend execution whose
 * graph the trace built (not one restored from JSON). */
struct dt_cudnn_attr {
	int64_t name; /* cudnnBackendAttributeName_t */
	int64_t type; /* cudnnBackendAttributeType_t */
	uint32_t bytes;
	/* the elements as set; CUDNN_TYPE_BACKEND_DESCRIPTOR's are int64
	 * indices into the graph's descs instead (-1: one the trace lacks) */
	const uint8_t *data;
};
struct dt_cudnn_desc {
	uint64_t ptr; /* the address the program had for it */
	int64_t type; /* cudnnBackendDescriptorType_t */
	const struct dt_cudnn_attr *attrs; /* set on it (or read back from
					      it), in that order */
	uint32_t n_attrs;
};
struct dt_cudnn_graph {
	const struct dt_cudnn_desc *descs;
	uint32_t n_descs;
	uint32_t root; /* the OPERATIONGRAPH's index */
	bool complete; /* every descriptor it points to is here */
};

/* A legacy API call as the program made it, kept as data so it can be
 * made again: what an op's recipe holds in build for a legacy call (an op
 * with plan 0). Every argument but the handle and the device pointers:
 * scalars by value, host scalars (alpha, beta) by their bytes, and each
 * descriptor as its kind with what its setters were given, by parameter
 * name (tensors and filters also in the common shape). A descriptor one
 * of those was set to point to (an RNN descriptor's dropoutDesc) follows
 * the call's arguments as one more, named as that field. Names point into
 * the trace's signatures: name_len bytes, not NUL-terminated. */
struct dt_cudnn_field {
	const char *name; /* "pad_h", "padA", "mathType" */
	uint32_t name_len;
	char code;              /* 'i' 'u' 'e' 'f' a scalar, 'a' an array */
	uint32_t count;         /* 'a': elements in v */
	int64_t v[DT_MAX_DIMS]; /* a scalar in v[0] */
	double f;
	/* 'a' longer than v (an RNN data descriptor's sequence lengths):
	 * every element, n_all of them; NULL when v holds them all */
	const int64_t *all;
	uint32_t n_all;
};
struct dt_cudnn_arg {
	const char *name; /* "xDesc", "algo", "alpha" */
	uint32_t name_len;
	char code;       /* as struct dt_arg's */
	int64_t i;       /* a scalar */
	double f;        /* 'f' */
	uint8_t host[8]; /* 'k': the bytes the program pointed to, width of
			    them (a float's or a double's, which cuDNN
			    reads by the compute type) */
	uint8_t width;
	/* a descriptor: its kind as its create function names it
	 * ("Convolution", kind_len bytes), NULL for other arguments */
	const char *kind;
	uint32_t kind_len;
	const struct dt_tensor *t; /* a tensor or filter, normalized; NULL */
	const struct dt_cudnn_field *fields;
	uint32_t n_fields;
};
struct dt_cudnn_call {
	const char *api; /* "cudnnConvolutionForward" */
	const struct dt_cudnn_arg *args;
	uint32_t n_args;
};

/* The argument of c called name, or NULL; the field of arg a called
 * name, or NULL. */
const struct dt_cudnn_arg *dt_cudnn_arg_find(const struct dt_cudnn_call *c,
					     const char *name);
const struct dt_cudnn_field *dt_cudnn_field_find(const struct dt_cudnn_arg *a,
						 const char *name);

/* Attribute name of descriptor desc of g, or NULL. */
const struct dt_cudnn_attr *dt_cudnn_attr_find(const struct dt_cudnn_graph *g,
					       uint32_t desc, int64_t name);

#endif /* DT_CUDNN_BUILD_H */
