/*
 * analyzer-cost.h - costing ops from what the model rebuilt. Private to
 * analyzer/: the model feeds it tensors and descriptor fields, and it
 * answers with a struct dt_cost (dt-analyzer.h).
 */
#ifndef DT_ANALYZER_COST_H
#define DT_ANALYZER_COST_H

#include "dt-cost.h"

#define DT_PART_TENSORS 16

/* One operation of a backend graph, costed when it is finalized (the
 * program may destroy and reuse its tensors before the graph is built). */
struct dt_cost_part {
	enum dt_op_kind kind;
	double flops;
	int64_t dtype;
	uint32_t matmuls, reductions;
	uint32_t index_gens; /* pointwise GEN_INDEX: a position-based mask */
	uint32_t n;          /* non-virtual tensors */
	struct {
		int64_t uid;
		uint64_t bytes;
	} t[DT_PART_TENSORS];
};

/* A tensor of a backend operation, under its attribute's enum name. */
struct dt_role_tensor {
	const char *attr; /* "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y" */
	const struct dt_tensor *t;
};

/* Cost one operation. op_type is the descriptor type's enum name; phase
 * is the normalization's forward phase (0 inference, 1 training); pw_mode
 * a pointwise operation's mode (enum name) or NULL. */
void dt_cost_backend_op(struct dt_cost_part *p, const char *op_type,
			const struct dt_role_tensor *ts, int n, int64_t phase,
			const char *pw_mode);

/* A graph of those: FLOPs added up, each tensor's bytes counted once, and
 * the kind of the operation that dominates. */
void dt_cost_graph(struct dt_cost *c, const struct dt_cost_part *const *parts,
		   int n);

/* One argument of a legacy call. */
struct dt_legacy_arg {
	const char *name;
	uint32_t name_len;
	const struct dt_tensor *t; /* a tensor or filter descriptor */
	const void *desc;          /* any other descriptor */
	int64_t value;             /* a scalar argument */
};

/* A descriptor's field, as the model kept it from the descriptor's
 * setter; def when it was never set. */
typedef int64_t (*dt_field_fn)(const void *desc, const char *name, int64_t def);

void dt_cost_legacy(struct dt_cost *c, const char *api,
		    const struct dt_legacy_arg *args, int n, dt_field_fn field);

#endif /* DT_ANALYZER_COST_H */
