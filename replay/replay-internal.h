/*
 * replay-internal.h - what replay/'s files share: the GPU libraries as
 * loaded at run time (libcuda's driver API, libcudnn), the problems taken
 * from a trace, and the measurements made of them. Private to replay/.
 * No CUDA or cuDNN header is included: the functions are declared here
 * with the types their ABI has, and cuDNN's enumerators are looked up by
 * name in the analyzer's table of them.
 */
#ifndef DT_REPLAY_INTERNAL_H
#define DT_REPLAY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dt-analyzer.h"
#include "dt-replay.h"

/* ------------------------------------------------------- replay-gpu.c */

typedef void *cu_ptr_t; /* CUstream, CUevent, CUcontext: opaque handles */

/* The functions replay calls, found with dlsym in libcuda.so.1,
 * libcudnn.so.9 (the one the loader finds, as the program's was) and,
 * where it loads, libcupti.so.13. */
struct gpu {
	void *cuda, *cudnn, *cupti; /* dlopen handles; cupti NULL: none */
	int (*cuInit)(unsigned);
	int (*cuDeviceGet)(int *, int);
	int (*cuDeviceGetCount)(int *);
	int (*cuDeviceGetName)(char *, int, int);
	int (*cuDeviceGetAttribute)(int *, int, int);
	int (*cuDevicePrimaryCtxRetain)(cu_ptr_t *, int);
	int (*cuCtxSetCurrent)(cu_ptr_t);
	int (*cuMemAlloc)(uint64_t *, size_t);
	int (*cuMemFree)(uint64_t);
	int (*cuMemGetInfo)(size_t *, size_t *);
	int (*cuMemcpyHtoD)(uint64_t, const void *, size_t);
	int (*cuMemcpyDtoH)(void *, uint64_t, size_t);
	int (*cuMemsetD8Async)(uint64_t, unsigned char, size_t, cu_ptr_t);
	int (*cuStreamCreate)(cu_ptr_t *, unsigned);
	int (*cuStreamSynchronize)(cu_ptr_t);
	int (*cuStreamWaitValue32)(cu_ptr_t, uint64_t, uint32_t, unsigned);
	int (*cuStreamWriteValue32)(cu_ptr_t, uint64_t, uint32_t, unsigned);
	int (*cuEventCreate)(cu_ptr_t *, unsigned);
	int (*cuEventRecord)(cu_ptr_t, cu_ptr_t);
	int (*cuEventSynchronize)(cu_ptr_t);
	int (*cuEventElapsedTime)(float *, cu_ptr_t, cu_ptr_t);

	size_t (*cudnnGetVersion)(void);
	int (*cudnnCreate)(void **);
	int (*cudnnSetStream)(void *, cu_ptr_t);
	const char *(*cudnnGetErrorString)(int);
	void (*cudnnGetLastErrorString)(char *, size_t);
	int (*cudnnBackendCreateDescriptor)(int64_t, void **);
	int (*cudnnBackendDestroyDescriptor)(void *);
	int (*cudnnBackendFinalize)(void *);
	int (*cudnnBackendSetAttribute)(void *, int64_t, int64_t, int64_t,
					const void *);
	int (*cudnnBackendGetAttribute)(void *, int64_t, int64_t, int64_t,
					int64_t *, void *);
	int (*cudnnBackendExecute)(void *, void *, void *);

	/* CUPTI's activity API (cupti_activity.h), for the recorded
	 * engine's runs timed as the trace timed them */
	int (*cuptiActivityRegisterCallbacks)(
		void (*)(uint8_t **, size_t *, size_t *),
		void (*)(cu_ptr_t, uint32_t, uint8_t *, size_t, size_t));
	int (*cuptiActivityEnable)(int);
	int (*cuptiActivityDisable)(int);
	int (*cuptiActivityFlushAll)(uint32_t);
	int (*cuptiActivityGetNextRecord)(uint8_t *, size_t, void **);
	int (*cuptiGetTimestamp)(uint64_t *);

	/* cuBLASLt (libcublasLt.so.13), where it loads and makes a
	 * handle: GEMMs are built again through it (replay-gemm.c); NULL
	 * none */
	void *cublaslt, *cublaslt_handle;
	size_t (*cublasLtGetVersion)(void);
	const char *(*cublasLtGetStatusString)(int);

	int device;
	char name[128];
	int l2_bytes;
	cu_ptr_t stream, release; /* timed work; the stream that releases it */
	void *handle;             /* cuDNN's */
	uint64_t gate;            /* a word the timed stream waits on */
	bool gated;               /* stream memory operations work */
	uint64_t flush;           /* 2 x L2 bytes, written between runs for a
				     cold cache; 0 none */
	double build_s;           /* the longest a plan took to build */
};

/* Load the libraries and take the first GPU. 0, or -1 with why in err. */
int gpu_open(struct gpu *g, char *err, size_t errlen);
void gpu_close(struct gpu *g);
/* The last error cuDNN set, in words, into buf. */
const char *gpu_cudnn_error(struct gpu *g, int status, char *buf, size_t size);
/* cuDNN's function name into *fn (a function pointer's address); false
 * when this cuDNN lacks it. */
bool gpu_cudnn_fn(struct gpu *g, void *fn, const char *name);
/* cuBLASLt loaded (libcublasLt.so.13, a large library: only for a trace
 * with GEMMs to build) and its handle made; false, g->cublaslt NULL,
 * where it cannot be. */
bool gpu_load_cublaslt(struct gpu *g);
/* The same as gpu_cudnn_fn of cuBLASLt (g->cublaslt loaded), and a
 * status of its in words into buf. */
bool gpu_cublaslt_fn(struct gpu *g, void *fn, const char *name);
const char *gpu_cublaslt_error(struct gpu *g, int status, char *buf,
			       size_t size);

/* Times of one way to run a problem: run(arg) launches one execution
 * on g->stream. Batches are timed until the median holds still or until
 * (dt_replay_now_s's time) comes: the first batch is made as short as the
 * warm-up runs say fits, one run at least. Returns false when a run
 * failed. */
struct timing {
	uint64_t median_ns, p10_ns, p90_ns;
	uint32_t runs;
	uint64_t kernels_ns; /* gpu_time_kernels's median, 0 none */
};
bool gpu_time(struct gpu *g, bool (*run)(void *arg), void *arg, bool cold,
	      double until, struct timing *t);
/* The same runs timed as a trace times an execution (kernels_ns), from
 * the kernels, copies and memsets CUPTI saw of each: up to 16 runs, each
 * alone on the GPU, the first one at least, the others while they fit
 * before until; their median into t->kernels_ns. False (t->kernels_ns
 * 0) where CUPTI is missing or saw no work of a run. */
bool gpu_time_kernels(struct gpu *g, bool (*run)(void *arg), void *arg,
		      bool cold, double until, struct timing *t);

/* Device memory, bounded: NULL past the replay's limit or out of
 * memory. */
uint64_t gpu_alloc(struct gpu *g, size_t bytes);
void gpu_free(struct gpu *g, uint64_t p, size_t bytes);

/* ---------------------------------------------------- replay-budget.c */

struct cand;

/* What one problem (or fusion what-if) may spend, and what it left out
 * for it. Work is started only before until: each heuristic asked, each
 * engine config made, each plan built (when the longest build seen so
 * far still fits), each batch timed; a plan build or a batch already
 * started is not cut. What the budget did not reach is written with the
 * reason "budget": candidates made but not timed by their status, the
 * rest counted here. */
struct budget {
	double until;
	uint32_t modes_left;   /* heuristic modes not asked */
	uint32_t engines_left; /* engines whose configs were not all made
				  (--engines all) */
	bool full;             /* CANDS_MAX candidates were made: the
				  others were not */
	double recorded_at;    /* when the recorded engine had been timed
				  (dt_replay_now_s), 0 when it was not */
};

/* The time left before until, 0 when it has come. */
double budget_left(double until);
/* The end of an equal share of what is left before until, for one of n
 * parts still to do. */
double budget_share(double until, size_t n);
/* Whether work of need_s seconds can start before b's end. */
bool budget_allows(const struct budget *b, double need_s);
/* Whether b left anything out (candidates c, n of them, included). */
bool budget_cut(const struct budget *b, const struct cand *c, size_t n);
/* Candidate c's status: not timed, for the budget ("budget"). */
void budget_skip(struct cand *c);
/* Whether the budget left candidate c out. */
bool budget_skipped(const struct cand *c);
/* The recorded engine, candidate c, measured: when, kept in b where it
 * ran (what the next problems' floor is made of). */
void budget_recorded(struct budget *b, const struct cand *c);

/* The budget shared out among the items of a replay (its problems and
 * fusion what-ifs), in the order they are measured: each item's share of
 * what is left is its weight's part of the weight left (an item's weight:
 * its recorded GPU time; all of them none: equal parts), and at least
 * the floor, the median of what the recorded engines measured so far
 * took from their problem's start, so that a small problem's recorded
 * engine is timed as well as the others' were. What an item leaves
 * unused is shared by the ones after it. */
struct shares {
	double weight; /* of the items not started */
	size_t items;  /* not started */
	double *took;  /* seconds each recorded engine took, ascending */
	size_t n, cap;
};

/* An item of weight counted in s, before any is started. */
void shares_add(struct shares *s, double weight);
/* The next item, of weight, started: the end of its share of what is
 * left before until. */
double shares_next(struct shares *s, double until, double weight);
/* A problem's recorded engine measured secs after the problem started. */
void shares_took(struct shares *s, double secs);
void shares_free(struct shares *s);

/* The last resort of the bound: should a call into cuDNN or CUDA not
 * return by at (dt_replay_now_s's time), the problem in hand is written to
 * out with what was measured of it, and the process ends. NULL when no
 * thread could wait (nothing is bounded then). */
struct stall;
struct problem;
struct stall *stall_start(FILE *out, double at, bool quiet);
/* The problem in hand: p with its candidates c, *n of them as they are
 * measured, and its budget b; p NULL: none (a fusion what-if). */
void stall_hold(struct stall *s, const struct problem *p, const struct cand *c,
		const size_t *n, const struct budget *b);
/* Around each line written to out; the problem in hand is then
 * written, and no longer in hand. */
void stall_lock(struct stall *s);
void stall_unlock(struct stall *s);
/* The replay done: the thread ends. */
void stall_stop(struct stall *s);

/* One line of progress on stderr (not with opts->quiet): candidate i of
 * n timed, in secs of wall time. */
void progress_cand(const struct dt_replay_opts *opts, size_t i, size_t n,
		   const struct cand *c, bool legacy, double secs);

/* -------------------------------------------------- replay-problems.c */

/* A distinct problem of a trace, from its ops. */
struct problem {
	char *key, *brief, *api;
	enum dt_op_kind kind;
	uint64_t executions;
	int64_t engine; /* the recorded one (the last execution's): a
			   backend engine, or a legacy call's algorithm */
	bool legacy;    /* a legacy API call's */
	char *knobs;    /* its knob choices, "TILE_SIZE=4" */
	struct dt_recipe_kv *knob_kv; /* the same by name (the session's) */
	uint32_t n_knob_kv;
	int64_t workspace;
	uint64_t *times; /* GPU ns of executions with that engine */
	size_t n_times, cap_times;
	uint64_t recorded_ns; /* their median, 0 none */
	uint64_t gpu_ns;      /* of every execution */
	uint64_t first_seq;
	bool asked; /* one of its executions is the op asked for (--op) */
	const struct dt_cudnn_graph *graph; /* a backend graph (the
					       session's), or */
	const struct dt_cudnn_call *call;   /* a legacy call; both NULL: not
					       rebuildable */
	const struct dt_gemm_build *gemm;   /* or a GEMM (cuBLAS's or
					       cuBLASLt's), built through
					       cuBLASLt; set where why says
					       it cannot be too */
	const char *why;                    /* when graph is NULL */
	bool alone; /* only the recorded engine timed (a fusion what-if's
		       head); engine < 0: only the heuristics' (a graph
		       made by replay, which no program ran) */
	/* the op's recipe (its arrays the session's, all 0 none) and
	 * tensors (the session's): what a fusion what-if builds a GEMM
	 * head's cuDNN matmul graph from */
	struct dt_recipe recipe;
	const struct dt_op_tensor *tensors;
	uint32_t n_tensors;
};

struct problems {
	struct problem *v;
	size_t n, cap;
	char gpu[96];          /* the trace's first GPU, "" none */
	struct dt_session *ss; /* open while the problems are used */
};

/* Every problem of the trace at path, largest recorded GPU time first;
 * the one of the op of call op (not 0) marked asked. 0, or -1 with why
 * in err. */
int problems_read(const char *path, uint64_t op, struct problems *ps, char *err,
		  size_t errlen);
void problems_free(struct problems *ps);
/* The problem of ps whose key is key, NULL none (or key NULL). */
const struct problem *problems_find(const struct problems *ps, const char *key);
/* What an execution took on the GPU, as a trace times it: the summed
 * time of its kernels (sum_ns), or the span from the first one's start
 * to the last one's end where that is shorter. */
uint64_t kernels_ns(uint64_t sum_ns, uint64_t first, uint64_t last);

/* ------------------------------------------------------ replay-data.c */

/* A tensor of a rebuilt problem. */
struct buf {
	int64_t uid;   /* a backend tensor's; a legacy call's: its place */
	int64_t dtype; /* enum dt_dtype */
	size_t bytes;
	uint64_t dev; /* device memory; 0 for a by-value scalar */
	void *host;   /* the seeded data (a by-value scalar's value) */
	bool by_value;
};

#define BUFS_MAX 64

/* The tensors of a rebuilt problem. */
struct data {
	struct gpu *g;
	struct buf bufs[BUFS_MAX];
	size_t n;
	/* a failed run's status in words: its library's (NULL: cuDNN's) */
	const char *(*errors)(struct gpu *, int, char *, size_t);
};

struct cand;

/* A tensor of span elements of dtype added, with memory and seeded data
 * (a by-value scalar: 1 of its type, on the host). False with why. */
bool data_add(struct data *d, int64_t uid, int64_t dtype, size_t span,
	      bool by_value, char *why, size_t whylen);
void data_free(struct data *d);
/* The seeded data again in every tensor (outputs the runs before wrote
 * included), so that a candidate's outputs compare with another's, and
 * so that a pass run before the timed one reads it. False when it could
 * not be copied. */
bool data_refill(struct data *d);

/* Time candidate c, run(arg) launching one execution (*status: the
 * library's status of one that failed): its status, times, and its
 * outputs against ref (when given), or taken as the reference into *take
 * (when take is given). */
void data_time(struct data *d, bool (*run)(void *), void *arg,
	       const int *status, const struct dt_replay_opts *opts,
	       double until, struct cand *c, const uint8_t *ref,
	       uint8_t **take);
/* A call with no algorithm to choose (a legacy call other than a
 * convolution): the recorded call timed as the one candidate, c[0] (*n
 * 1), with the workspace it took, within budget b (not run, its status
 * "budget", when b is spent). */
void data_time_recorded(struct data *d, bool (*run)(void *), void *arg,
			const int *status, const struct problem *p,
			int64_t workspace, const struct dt_replay_opts *opts,
			struct budget *b, struct cand *c, size_t *n);
/* Device memory of bytes into *p, none for 0 bytes (a workspace, a
 * reserve space: no data of its own); false with why, what naming it. */
bool data_scratch(struct gpu *g, uint64_t *p, size_t bytes, const char *what,
		  char *why, size_t whylen);
/* A float as FP16's bits (small values flushed to zero). */
uint16_t data_half(float f);

/* A tensor's bytes given to one run, or read back after it: a chain's
 * steps run one after the other on what the step before wrote. */
struct tensor_io {
	int64_t uid; /* as struct buf's */
	bool in;     /* given: bytes (n of them) copied in before the run;
			else read: bytes malloc'd (the caller frees them),
			n and dtype set */
	void *bytes;
	size_t n;
	int64_t dtype;
};

/* One run, run(arg), on d's seeded data, the tensors io names given or
 * read back (n_io of them). False with why (*status: the library's
 * status of a run that failed). */
bool data_run_io(struct data *d, bool (*run)(void *), void *arg,
		 const int *status, struct tensor_io *io, size_t n_io,
		 char *why, size_t whylen);
/* The largest difference of two tensors of bytes of type dtype over
 * ref's largest magnitude, and whether that is within the type's
 * tolerance (as candidates' outputs are compared). */
double data_error(int64_t dtype, const void *ref, const void *mine,
		  size_t bytes);
bool data_within(int64_t dtype, double error);

/* ----------------------------------------------------- replay-graph.c */

/* A candidate and what came of it (struct dt_replayed_cand's fields). */
struct cand {
	int64_t engine;
	char knobs[256];
	const char *source;
	char status[160];
	struct timing t;
	int64_t workspace;
	double error;
	int agrees;
};

/* Candidates of one problem, at most: the heuristics' configs and, with
 * every engine, each engine's knob values. */
#define CANDS_MAX 256

/* Rebuild problem p on the GPU and time its recorded engine and the
 * others opts asks for, the recorded one first, into c (*n of them),
 * within budget b. 0, or -1 with why the graph could not be built in
 * why. */
int graph_measure(struct gpu *g, const struct problem *p,
		  const struct dt_replay_opts *opts, struct budget *b,
		  struct cand *c, size_t *n, char *why, size_t whylen);
/* Problem p's graph run once, untimed, as data_run_io runs it: with
 * engine p->engine and knobs p->knob_kv, or (engine < 0) the first
 * configuration cuDNN's heuristics offer that runs. 0, or -1 with why. */
int graph_run(struct gpu *g, const struct problem *p, struct tensor_io *io,
	      size_t n_io, char *why, size_t whylen);

/* --------------------------------------------------- replay-results.c */

/* What the results file's header says. */
struct results_header {
	const char *trace, *gpu, *recorded_gpu; /* recorded_gpu: NULL none */
	bool any_gpu, cold_cache, all_engines;
	size_t cudnn;    /* cudnnGetVersion() */
	size_t cublaslt; /* cublasLtGetVersion(), 0: not loaded */
};

/* The header line into f; false when it could not be written. */
bool results_header(FILE *f, const struct results_header *h);
/* Problem p's line into f, flushed: status "measured" with its
 * candidates c (n of them, the recorded engine first) and what its
 * budget b left out (NULL: nothing), or "not_rebuilt" or "failed" with
 * reason and none. False when it could not be written. */
bool results_problem(FILE *f, const struct problem *p, const char *status,
		     const char *reason, const struct cand *c, size_t n,
		     const struct budget *b);
/* The fastest of n candidates whose outputs agree with the recorded
 * engine's (c[0], itself when none is faster; when it did not run, the
 * first that did stands for it), or -1. */
int results_best(const struct cand *c, size_t n);

/* ---------------------------------------------------- replay-legacy.c */

/* cuDNN's tensor descriptor functions, which every legacy call uses. */
struct tensor_fns {
	int (*create)(void **), (*destroy)(void *);
	int (*set)(void *, int, int, const int *, const int *);
};
bool legacy_tensor_fns(struct gpu *g, struct tensor_fns *f);
/* A tensor descriptor made into *d and set; cuDNN's status, 0 when
 * both took. */
int legacy_tensor(const struct tensor_fns *f, void **d, int dtype, int nb,
		  const int *dims, const int *strides);

/* Why a legacy call cannot be made again, or NULL when it can. */
const char *legacy_why_not(const struct dt_cudnn_call *c);
/* Whether the legacy function api (not a convolution) is made again;
 * legacy_measure's for those (replay-legacy-ops.c): the recorded call,
 * the one candidate. */
bool legacy_op_known(const char *api);
int legacy_op_measure(struct gpu *g, const struct problem *p,
		      const struct dt_replay_opts *opts, struct budget *b,
		      struct cand *c, size_t *n, char *why, size_t whylen);
/* Field name of a legacy call's descriptor argument a (NULL when a is
 * NULL or lacks it), and its value as an int (def when missing). */
const struct dt_cudnn_field *legacy_field_of(const struct dt_cudnn_arg *a,
					     const char *name);
int legacy_field(const struct dt_cudnn_arg *a, const char *name, int def);

/* The same as graph_measure for a legacy call: its recorded algorithm,
 * then those cuDNN's cudnnGet*Algorithm_v7 offers, each with its math
 * type (candidates' knobs). */
int legacy_measure(struct gpu *g, const struct problem *p,
		   const struct dt_replay_opts *opts, struct budget *b,
		   struct cand *c, size_t *n, char *why, size_t whylen);
/* A legacy convolution run once, untimed, with its recorded algorithm
 * and math type, as data_run_io runs it: its tensors' uids are the
 * places of its three descriptors (0, 1, 2). 0, or -1 with why. */
int legacy_run(struct gpu *g, const struct problem *p, struct tensor_io *io,
	       size_t n_io, char *why, size_t whylen);

/* ------------------------------------------------------- replay-rnn.c */

/* Whether api is an RNN call replay-rnn.c makes again; legacy_measure's
 * for those: the recorded call, the one candidate. */
bool rnn_known(const char *api);
int rnn_measure(struct gpu *g, const struct problem *p,
		const struct dt_replay_opts *opts, struct budget *b,
		struct cand *c, size_t *n, char *why, size_t whylen);

/* ------------------------------------------------------ replay-fuse.c */

/* A step of a chain the fusion analysis calls fusable (struct
 * dt_fz_step's fields replay builds from). */
struct fuse_step {
	char *what;    /* "bias add", "ReLU" */
	char *problem; /* a cuDNN op's problem key, else NULL */
	uint8_t op;    /* a kernel's class (enum dt_kop) */
	bool full, cudnn;
	int64_t dtype;  /* of what it writes */
	uint64_t ns;    /* its recorded GPU time per occurrence */
	uint64_t elems; /* elements it writes, 0 unknown */
};

struct fuse_chain {
	char *key, *pattern; /* as dt_fz_opp's */
	uint64_t count;
	double priced_ns; /* the analysis's saving per occurrence */
	struct fuse_step steps[DT_FZ_STEPS];
	int n_steps;
};

struct fuse_chains {
	struct fuse_chain *v;
	size_t n;
};

/* The step of chain c that is its head: the first, or the last when the
 * steps before it are its matmul's prologue. */
int fuse_head_at(const struct fuse_chain *c);

/* The fusable chains of the trace at path, from the fusion analysis.
 * 0, or -1 with why in err. */
int fuse_read(const char *path, struct fuse_chains *fc, char *err,
	      size_t errlen);
void fuse_free(struct fuse_chains *fc);

/* What one step of the unfused chain took. */
struct fuse_part {
	const char *source; /* "replayed" (the head, its recorded engine)
			       or "recorded" (its kernels' time in the
			       trace) */
	uint64_t ns;
	uint64_t graph_ns; /* the step alone as a cuDNN pointwise graph, 0
			      none (why says why) */
	char why[200];
};

struct fuse_result {
	const struct fuse_chain *c;
	const char *status; /* "measured", "not_built", "failed" */
	const char *reason; /* why not measured, NULL when it was */
	char why[256];
	struct cand fused; /* the fused graph's fastest engine */
	size_t tried;      /* engines tried for it */
	struct fuse_part parts[DT_FZ_STEPS];
	uint64_t unfused_ns;
	/* what the head's graph was built from: "graph" (the recorded
	 * one), "legacy call", "GEMM"; NULL not built */
	const char *head_from;
	const char *legacy_call; /* the legacy API's own fused call that
				    would run the chain too, NULL none */
	/* the fused graph's final output against the unfused chain's: 1
	 * within the output type's tolerance, 0 not, -1 not compared
	 * (outputs_why says why) */
	int outputs_agree;
	double outputs_error;
	char outputs_why[200];
};

/* Why chain c cannot be measured, or NULL: its head must be a problem of
 * ps that replay rebuilds from a backend graph, its other steps kernels
 * a pointwise node computes. The words are static or in buf. */
const char *fuse_why_not(const struct fuse_chain *c, const struct problems *ps,
			 char *buf, size_t size);

/* Build chain c's fused graph from its head's problem in ps, time it and
 * the unfused steps before until, into r. */
void fuse_measure(struct gpu *g, const struct fuse_chain *c,
		  const struct problems *ps, const struct dt_replay_opts *opts,
		  double until, struct fuse_result *r);

/* Chain r's line into f, flushed; false when it could not be written. */
bool results_fusion(FILE *f, const struct fuse_result *r);

/* ------------------------------------------------------ replay-gemm.c */

/* Whether library (an op's) is one whose GEMMs replay builds through
 * cuBLASLt: cuBLAS's or cuBLASLt's. */
bool gemm_library(const char *library);
/* Why the GEMM the decoders kept as b (NULL: a call that is no GEMM)
 * cannot be built again, or NULL when it can. */
const char *gemm_why_not(const struct dt_gemm_build *b);
/* The same as graph_measure for a GEMM (p->gemm) through cuBLASLt: its
 * recorded algorithm, then cublasLtMatmulAlgoGetHeuristic's, and with
 * --engines all every algorithm ID over its tiles. */
int gemm_measure(struct gpu *g, const struct problem *p,
		 const struct dt_replay_opts *opts, struct budget *b,
		 struct cand *c, size_t *n, char *why, size_t whylen);

#endif /* DT_REPLAY_INTERNAL_H */
