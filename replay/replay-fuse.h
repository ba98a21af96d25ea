/*
 * replay-fuse.h - what the fusion what-if's files share (replay-fuse.c,
 * replay-fuse-syn.c, replay-fuse-heads.c, replay-fuse-check.c): a cuDNN
 * backend graph made here as data, as the cuDNN decoder keeps a recorded
 * one (struct dt_cudnn_graph), so that replay-graph.c builds and runs it
 * as it does those; the head graphs made from what is not one (a legacy
 * convolution call, a GEMM op); and the unfused chain run on the fused
 * graph's data. Private to replay/.
 */
#ifndef DT_REPLAY_FUSE_H
#define DT_REPLAY_FUSE_H

#include "replay-internal.h"

/* ---------------------------------------------------- replay-fuse-syn.c */

/* The enumerators every graph made here uses, looked up by name once
 * (fz_enums_init). */
struct fz_enums {
	bool done;
	int64_t t_handle, t_desc, t_int64, t_bool, t_dtype, t_pw_mode;
	int64_t bt_tensor, bt_pw, bt_op_pw, bt_graph;
	int64_t a_t_dtype, a_t_dims, a_t_strides, a_t_uid, a_t_virtual,
		a_t_align;
	int64_t a_pw_mode, a_pw_prec, a_op_pw, a_op_x, a_op_b, a_op_y;
	int64_t a_graph_ops, a_graph_handle;
	int64_t float_type;
};
extern struct fz_enums fz_e;
void fz_enums_init(void);

/* cuDNN's enumerators by their names without the prefix: an attribute
 * (CUDNN_ATTR_), a descriptor type (CUDNN_BACKEND_), an attribute type
 * (CUDNN_TYPE_), a data type (CUDNN_DATA_); -1 when cuDNN has none. */
int64_t fz_attr(const char *name);
int64_t fz_desc(const char *name);
int64_t fz_type(const char *name);
int64_t fz_data(const char *name);

#define SYN_DESCS 96
#define SYN_ATTRS 768
#define SYN_BYTES (32u << 10)

/* A graph made here: its descriptors in order, each after those it
 * points to, the operation graph last (syn_graph). */
struct syn {
	struct dt_cudnn_desc descs[SYN_DESCS];
	struct dt_cudnn_attr attrs[SYN_ATTRS];
	uint8_t data[SYN_BYTES];
	uint32_t n_attrs, used;
	struct dt_cudnn_graph g;
	bool full; /* out of room: the graph is not whole */
};

/* A descriptor of type begun, its index returned (-1: out of room); its
 * attributes follow with syn_attr and syn_i64. */
int64_t syn_desc(struct syn *s, int64_t type);
/* An attribute of the descriptor begun last: count elements of type
 * (bytes in all) at v; a descriptor's are indices into the graph's. */
void syn_attr(struct syn *s, int64_t name, int64_t type, const void *v,
	      uint32_t bytes);
/* One value of type, as wide as type is. */
void syn_i64(struct syn *s, int64_t name, int64_t type, int64_t v);
/* A copy of tensor t of bp: of type dtype, uid, virtual or not, and of
 * dims and strides (n of them) where given, its own otherwise. */
int64_t syn_tensor(struct syn *s, const struct dt_cudnn_graph *bp, uint32_t t,
		   int64_t dtype, int64_t uid, bool virt, const int64_t *dims,
		   const int64_t *strides, uint32_t n);
/* A tensor: type dtype (cudnnDataType_t), uid, virtual or not, n dims
 * and strides; its byte alignment 16 (replay aligns its memory to 256).
 * Its index, -1 out of room. */
int64_t syn_tensor_new(struct syn *s, int64_t dtype, int64_t uid, bool virt,
		       const int64_t *dims, const int64_t *strides, uint32_t n);
/* A pointwise descriptor of mode (cudnnPointwiseMode_t), computing in
 * FLOAT, and its operation: x (and b, -1 none) in, y out. The
 * operation's index. */
int64_t syn_pointwise_op(struct syn *s, int64_t mode, int64_t x, int64_t b,
			 int64_t y);
/* The operation graph over ops (n of them), last; its handle replay's. */
void syn_graph(struct syn *s, const int64_t *ops, uint32_t n);

/* The cuDNN data type (cudnnDataType_t) of the analyzer's dtype. */
int64_t fz_cudnn_dtype(int64_t dtype);

/* ------------------------------------------------------ replay-fuse.c */

/* Chain c's fused graph as a what-if builds it, of its head's problem
 * (its graph made into hs where the program built none), into s; false
 * with why. No GPU needed: the graphs are data. */
bool fuse_fused_graph(struct syn *s, struct syn *hs, const struct fuse_chain *c,
		      const struct problem *head, char *why, size_t whylen);

/* ------------------------------------------------ replay-fuse-heads.c */

/* A chain's head made a backend graph into s, its tensors' uids 1 to 3
 * (in the order the call names its descriptors, or A, B and D): a
 * legacy convolution call (forward or backward data) from its
 * descriptors; a GEMM op (cuBLAS, cuBLASLt) from its recipe and tensors,
 * its own epilogue (bias, ReLU, GELU) a pointwise node each. False with
 * why. */
bool fuse_legacy_head(struct syn *s, const struct dt_cudnn_call *c, char *why,
		      size_t whylen);
bool fuse_gemm_head(struct syn *s, const struct problem *p, char *why,
		    size_t whylen);
/* Whether problem p is a GEMM op fuse_gemm_head builds from. */
bool fuse_is_gemm(const struct problem *p);
/* The legacy call that runs a convolution, a bias add and an activation
 * fused, when chain c is those steps after a legacy convolution forward;
 * NULL otherwise. */
const char *fuse_legacy_fused_call(const struct fuse_chain *c,
				   const struct problem *head);

/* ------------------------------------------------ replay-fuse-check.c */

/* What the comparison runs: the head's graph (built by replay-fuse.c),
 * the fused graph, and each step's alone, with the uids they share. */
struct fuse_graphs {
	const struct problem *head; /* its problem: a legacy call's is run
				       as replay runs it */
	const struct dt_cudnn_graph *head_graph;
	int64_t head_engine; /* the head graph's engine to run, -1 the
				heuristics' first */
	const char *head_knobs;
	int64_t head_out_uid;
	int head_at;    /* the head's step: 0, or a prologue's last */
	int64_t in_uid; /* the matmul's input a prologue writes, -1 none */
	const struct dt_cudnn_graph *fused;
	/* but head_at; each run with the heuristics' first config that
	 * runs */
	const struct dt_cudnn_graph *steps[DT_FZ_STEPS];
	int64_t step_x_uid, step_y_uid;
	int n_steps;
};

/* The fused graph's final output (engine and knobs: its fastest) held
 * against the unfused chain's, run on the same seeded inputs: into
 * r->outputs_agree and r->outputs_error, or r->outputs_why. */
void fuse_check(struct gpu *g, const struct fuse_graphs *fg,
		const struct cand *fused, struct fuse_result *r);

#endif /* DT_REPLAY_FUSE_H */
