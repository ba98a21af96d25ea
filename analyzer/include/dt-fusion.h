/*
 * dt-fusion.h - fusion opportunities: chains of GPU work one fused graph
 * could run (analyzer/FUSION.md). Part of analyzer/'s public interface;
 * dt-analyzer.h includes every part.
 */
#ifndef DT_FUSION_H
#define DT_FUSION_H

#include "dt-session.h"

/*
 * Chains of GPU work that one cuDNN graph could run fused.
 *
 * A run's dataflow, rebuilt per stream from what the trace holds: cuDNN
 * operations (linked through their device pointers) and the kernels of
 * other libraries between them (linked by their order on the stream and the
 * element counts their launch shapes give). Chains are matched against the
 * fusion patterns cuDNN documents, checked against their limits (layout,
 * data type, compute capability, alignment), and priced: the GPU time of
 * the kernels that would disappear, and the DRAM bytes no longer moved, as
 * time at the run's achieved streaming bandwidth. analyzer/FUSION.md
 * describes the rules.
 *
 * Streams the trace: memory holds the nodes of the last few seconds of GPU
 * time per stream and the distinct chains found.
 */

/* How a step is tied to the step before it. */
enum dt_fz_link {
	DT_LINK_NONE,    /* the chain's first step */
	DT_LINK_POINTER, /* it reads the buffer the step before wrote */
	DT_LINK_SIZE,    /* next on the stream, same element count */
	DT_LINK_ORDER,   /* next on the stream; its size is not known */
};
const char *dt_fz_link_name(enum dt_fz_link l); /* "pointer" */

#define DT_FZ_STEPS 8

struct dt_fz_step {
	char *what;     /* "convolution forward", "bias/residual add", "ReLU" */
	char *detail;   /* the cuDNN op's tensors, or the kernel's function */
	int64_t dtype;  /* enum dt_dtype of what it writes, -1 unknown */
	uint64_t elems; /* elements it writes, 0 unknown */
	enum dt_fz_link link;
	bool cudnn;   /* a cuDNN operation (else another library's kernel) */
	char *library; /* the library whose call it is ("cuBLAS"), NULL for
			  kernels outside any recorded call */
	bool removed; /* its kernels disappear when the chain is fused */
	char *kernel; /* outside cuDNN: the kernel's whole name, else NULL */
	int32_t grid_x, block_x; /* and its launch shape */
	char *problem; /* a cuDNN op's problem key (dt_op.problem), else NULL */
	uint8_t op;    /* outside cuDNN: what its kernel computes (enum
			  dt_kop), what a graph's pointwise node is built
			  from (replay/) */
	bool full;     /* an elementwise kernel with no broadcast operand: a
			  residual add, not a bias add */
	uint64_t kernels, ns; /* over every occurrence */
};

enum dt_fz_status {
	DT_FZ_FUSABLE,
	DT_FZ_BLOCKED, /* a documented limit rules it out: see blocked */
};

struct dt_fz_opp {
	char *key;     /* pattern and steps: occurrences of one chain */
	char *pattern; /* "convolution + pointwise epilogue" */
	char *cover;   /* the cuDNN graph or engine that runs it fused */
	enum dt_fz_status status;
	char *blocked; /* why not, when blocked */
	char *checks;  /* the limits checked, "layout NHWC: ok; ..." */
	char *note;    /* what else to know, or NULL */
	int32_t device;
	uint64_t count; /* occurrences (in the steady states: dt_fusion_cut) */
	struct dt_fz_step steps[DT_FZ_STEPS];
	int n_steps;
	/* one occurrence: bytes no longer moved, and bytes the fused kernel
	 * moves that the kernels it replaces did not */
	uint64_t bytes_saved, bytes_added;
	/* totals over the occurrences, settled by dt_fusion_finish() */
	uint64_t removed_kernels, removed_ns;
	double saving_ns; /* removed_ns less bytes_added at the bandwidth */
	double bytes_ns;  /* bytes_saved at the bandwidth */
};

/* Work that already runs fused: cuDNN graphs of several operations, and
 * attention, whose score matrix never leaves the chip. */
struct dt_fz_fused {
	char *key; /* its problem */
	char *what;
	char *brief;
	uint32_t graph_ops; /* operations in its graph */
	uint64_t count, ns;
	uint64_t bytes_kept; /* one execution: intermediates kept on chip */
	double bytes_ns;     /* all executions', at the bandwidth */
};

struct dt_fusion {
	/* the bandwidth savings are priced at: the run's streaming kernels'
	 * (bytes over time), else the device's peak, else an override */
	double bandwidth;
	char bandwidth_source[200];
	double bandwidth_override; /* bytes/s; 0 none */
	uint64_t stream_bytes, stream_ns, stream_kernels;
	double peak_bandwidth; /* of the first device seen, 0 unknown */
	uint64_t nodes;        /* kernels and cuDNN ops looked at */

	struct dt_fz_opp *opps; /* by saving, largest first, once finished */
	size_t n_opps;
	struct dt_fz_fused *fused; /* by GPU time, largest first */
	size_t n_fused;

	void *priv;
};

struct dt_fusion *dt_fusion_new(void);
void dt_fusion_free(struct dt_fusion *fz);

/* A trace begins: the analysis adds itself to the session's consumers (the
 * session must give ops their pointers: dt_session_opts.pointers), and
 * dt_fusion_end_file() closes it once the session has run. */
void dt_fusion_begin_file(struct dt_fusion *fz, struct dt_session *ss);
void dt_fusion_end_file(struct dt_fusion *fz);

/*
 * The steady state. While the trace is read, the summary hands over its
 * cut points as it makes them (each later than the one before) and drops
 * them (analyzer-summary-cut.c); the analysis counts each chain's
 * occurrences, and each fused problem's executions, between them, by the
 * time the cut places the chain's first step at (host clock), however
 * late it comes to it. Once the trace is read, dt_fusion_cut() says where
 * its steady state begins (one of the points; 0: the whole trace,
 * UINT64_MAX: none of it), and dt_fusion_end_file() leaves out what came
 * before. Without points or a cut, the counts are the whole trace's.
 * Memory: per chain and fused problem, its counters per point (at most
 * the summary's 128), for the trace being read.
 */
void dt_fusion_mark(struct dt_fusion *fz, uint64_t t);
void dt_fusion_unmark(struct dt_fusion *fz, uint64_t t);
void dt_fusion_cut(struct dt_fusion *fz, uint64_t from);

/* Every trace is in: price the chains and sort them. */
void dt_fusion_finish(struct dt_fusion *fz);

#endif /* DT_FUSION_H */
