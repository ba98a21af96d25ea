/*
 * dt-summary.h - the summary behind `report` and `diff`: time by library,
 * problem, engine, function and kernel, rates against peaks, findings
 * (analyzer/REPORT.md). Part of analyzer/'s public interface; dt-analyzer.h
 * includes every part.
 */
#ifndef DT_SUMMARY_H
#define DT_SUMMARY_H

#include "dt-fusion.h"

struct dt_replayed;

/*
 * One or more traces summed up: where the GPU time went, the operations
 * grouped by problem with their rates against the device's peaks, host
 * time per cuDNN function, and findings with their cost.
 *
 * `dnntrace report` prints it; `dnntrace diff` compares two of them. A
 * summary streams its traces (memory grows with the distinct problems,
 * functions and kernel names, not with the trace) and is of each trace's
 * steady state unless opts.whole (struct dt_sum_startup).
 */

/* Peak rates an op is held against. */
struct dt_peaks {
	double bandwidth;            /* bytes/s; 0 unknown */
	double flops[DT_MATH_COUNT]; /* FLOP/s by math; 0 unknown */
	char source[240];            /* where they came from, in words */
};

/* Bandwidth from the device record; FLOP rates from the per-architecture
 * table times SMs times clock. */
void dt_peaks_for_device(struct dt_peaks *p, const struct dt_device *d);

/* When a trace's GPU was busy, for a picture of the run: the union of its
 * kernels, copies and sets in DT_BUSY_BINS bins of equal width from its
 * first activity, on the host clock. The width starts at 1 us and doubles,
 * pairs of bins merged, whenever the run outgrows the bins: the memory is
 * fixed however long the trace. */
#define DT_BUSY_BINS 128

struct dt_busy_hist {
	uint64_t t0;       /* host clock: the first activity's start */
	uint64_t width_ns; /* of a bin; 0 when the trace has no activity */
	uint32_t n_bins;   /* in use: up to the last activity */
	uint32_t devices;  /* GPUs with activity: a bin holds up to
			      width_ns times this */
	uint64_t busy_ns;  /* the bins summed */
	uint64_t span_ns;  /* first start to last end, per GPU, summed */
	uint64_t bins[DT_BUSY_BINS]; /* busy ns in each */
};

struct dt_sum_file {
	char *path;
	char *host, *program, *cudnn, *gpu_state;
	char *cudnn_version; /* "9.19.0", or NULL */
	/* its GPU counters: NULL not sampled, "on: ..." or "off: why"
	 * (dt_model_stats.gpu_metrics); what sampling lost, or NULL */
	char *gpu_metrics, *gpu_metrics_lost;
	uint64_t gpu_samples;
	char *cuda;          /* "driver 13.0, runtime 13.0", or NULL */
	char *rank;          /* "RANK=3" from the rank variables, or NULL */
	uint32_t pid;
	enum dt_file_end end;
	bool complete;   /* dt_trace_complete() */
	bool sealed;     /* its frames carry their place and checksums
			    (format 1.6): complete is proven, not only
			    END's counts checked */
	char *ended;     /* how it ended, in one line (dt_file_end_text) */
	char *lost_text; /* what the writer lost, in words (dt_lost_text) */
	bool lost_exact; /* lost is the writer's count (else a lower bound) */
	uint64_t lost_io; /* of which the file could not take (disk full) */
	uint64_t records_missing; /* written but not read (skipped frames) */
	bool records_missing_known;
	uint64_t skipped_bytes; /* of damaged frames skipped */
	uint64_t records, lost, gpu_dropped, undecoded;
	uint64_t calls;                /* the program's (analyzer/COUNTS.md) */
	uint64_t own_calls;            /* dnntrace's own, not in calls */
	uint64_t kernels, copies, ops; /* copies: copies and sets */
	uint64_t t_begin, t_end; /* first and last host timestamps seen */
	struct dt_gpu_sampling sampling;
	uint64_t gpu_ns;         /* kernels, copies and sets, summed */
	uint64_t cudnn_gpu_ns;   /* of which launched by cuDNN calls */
	uint64_t comm_ns;        /* of which collectives and point-to-point
				    (NCCL's): a rank waiting for the others
				    waits in them */
	struct dt_graph_stats graphs;
	bool graph_records; /* the format has CUDA graph records (1.1) */
	struct dt_busy_hist busy;
	/* what findings weigh of it: its steady state's (the whole trace's
	 * when it was not cut: struct dt_sum_startup) GPU time, of which
	 * communication, and calls' span */
	struct {
		uint64_t gpu_ns, comm_ns, span_ns;
	} steady;
};

struct dt_sum_api {
	char *name;
	uint64_t calls, failed, ns, min, max;
	uint64_t failed_ns;
	int32_t last_failure; /* cudnnStatus_t of the last failed call */
	size_t lib;           /* its library: an index in dt_summary.libs */
};

/* What cuDNN ran a problem with: an engine and its knob choices
 * (backend), or an algorithm (legacy). */
struct dt_sum_engine {
	int64_t engine;
	char *knobs; /* "TILE_SIZE=4 KBLOCK=3", or NULL */
	uint64_t count, gpu_ns;
	uint64_t timed, min_ns, max_ns; /* the executions with kernels */
	double sq_ns;                   /* their times squared, summed */
	int64_t workspace;              /* -1 unknown */
};

#define DT_SUM_ENGINES 64
#define DT_SUM_EXACT   1024

struct dt_sum_problem {
	char *key;   /* the problem signature (dt_op.problem) */
	char *brief; /* its tensors and parameters, compactly */
	char *api;
	enum dt_op_kind kind;
	enum dt_math math;
	int64_t dtype;    /* its main input's enum dt_dtype, -1 unknown */
	int tensor_cores; /* 1 yes, 0 no, -1 unknown */
	double flops;     /* one execution */
	uint64_t bytes;   /* one execution */
	int32_t device;
	uint64_t count, failed, gpu_ns, host_ns, kernels;
	/* of count: ran outside the windows of sampled GPU recording, so
	 * not timed (gpu_ns, kernels and the times below leave them out) */
	uint64_t unsampled;
	uint64_t replays;  /* of count: replayed from CUDA graphs */
	uint64_t captured; /* calls that put it into a CUDA graph (not in
			      count: they ran nothing) */
	uint64_t convert_ns; /* layout conversion kernels inside it */
	uint32_t converts;
	int64_t workspace;          /* the largest, -1 unknown */
	char *notes, *first_kernel; /* of the last execution */
	struct dt_sum_engine engines[DT_SUM_ENGINES];
	uint32_t n_engines;
	int64_t last_engine;     /* the engine of the last execution */
	uint32_t last_choice;    /* its entry in engines[] */
	uint32_t engine_changes; /* executions whose engine or knobs differ
				    from the one before */
	uint64_t streak;         /* executions in a row with last_choice */
	/* GPU time of the executions with kernels, for medians: the latest
	 * DT_SUM_EXACT / 2 to DT_SUM_EXACT exactly, older ones (of one
	 * engine configuration) in a histogram of 1% wide buckets, so memory
	 * stays bounded and the steady state's are the exact ones */
	struct dt_sum_time {
		uint64_t ns;
		uint32_t choice; /* index into engines[] */
	} * times;
	size_t n_times, cap_times;
	uint64_t pushed; /* times ever kept: times[] holds the last ones */
	uint32_t *hist;
	uint64_t hist_n;
	uint32_t hist_choice;
	struct dt_sum_share {
		uint64_t ns, count;
	} * per_file; /* by file of the summary */
	size_t cap_per_file;
	/* filled by dt_summary_finish(): the executions (with kernels) of
	 * the engine it settled on, which the rates are computed from */
	uint64_t settled_ns, settled_count;
	double settled_sq;    /* their times squared, summed */
	uint64_t settled_all; /* executions of that engine, timed or not */
	uint64_t min_ns, median_ns, max_ns;
	uint64_t tune_ns; /* executions with engines it did not settle on */
	uint64_t tune_count;
	uint32_t tune_rounds; /* separate rounds of such executions */
};

/* A plan built for a graph: how often, with which engines. */
struct dt_sum_build {
	char *key; /* the graph's description */
	char *brief;
	enum dt_op_kind kind;
	uint32_t builds;
	uint32_t repeats; /* builds of an engine already built for it */
	uint64_t host_ns; /* in the finalize calls */
	uint64_t repeat_ns;
};

/* A kernel that converts a layout, by name. */
struct dt_sum_convert {
	char *name;
	bool in_cudnn; /* launched by a cuDNN call */
	uint64_t count, ns;
};

enum dt_finding_type {
	DT_FIND_AUTOTUNE,
	DT_FIND_REBUILD,
	DT_FIND_LAYOUT,
	DT_FIND_FP32,
	DT_FIND_LOW_ROOF,
	DT_FIND_FAILED,
	DT_FIND_COPIES,
	DT_FIND_IDLE,
	DT_FIND_LOW_BANDWIDTH,
	DT_FIND_STRAGGLER,
	DT_FIND_ENGINE_CHOICE,
	DT_FIND_COUNT
};
const char *dt_finding_key(enum dt_finding_type t); /* "autotune" */

struct dt_finding {
	enum dt_finding_type type;
	uint64_t cost_ns; /* what it costs, on the clock below */
	bool host;        /* cost in host time (else GPU time) */
	char *title;      /* one line */
	char *evidence;   /* lines of evidence, '\n'-separated */
};

struct dt_summary_opts {
	double peak_bandwidth;            /* bytes/s override; 0 none */
	double peak_flops[DT_MATH_COUNT]; /* FLOP/s overrides; 0 none */
	/* called now and then while reading: bytes of path read so far */
	void (*progress)(void *arg, const char *path, uint64_t done,
			 uint64_t total);
	void *progress_arg;
	/* look for fusion opportunities (struct dt_summary's fusion): ops
	 * then carry their pointers, which costs some speed */
	bool fusion;
	double fusion_bandwidth; /* bytes/s to price byte savings at; 0: the
				    run's achieved streaming bandwidth */
	/* only the work inside these NVTX ranges (dt_session_opts.range) */
	const char *range;
	/* the whole run: start-up (before each trace's steady state) left
	 * in; else it is left out of everything but the traces' totals
	 * (struct dt_sum_startup) */
	bool whole;
};

/* What the traces' start-ups held: left out of the GPU time, findings,
 * problems and functions, where the run has a steady state and the
 * summary is not of the whole run (analyzer/REPORT.md, "STEADY STATE").
 * Each trace is cut at the first of its cut points (up to SUM_CUTS, more
 * of them the closer to its end) at or after its steady state's first
 * step: what lies between is steady time the summary leaves out too. */
struct dt_sum_startup {
	uint32_t traces;  /* traces cut: their start-up left out */
	uint32_t kept;    /* traces with a start-up kept in: a steady state
			     shorter than the cut points' spacing, or
			     opts.whole */
	uint64_t ns;      /* from each trace's first event to its cut */
	uint64_t steps;   /* start-up steps (dt_step_stats.startup_steps) */
	uint64_t gpu_ns;  /* kernels, copies and sets before the cuts */
	uint64_t kernels; /* of those, timed kernels */
	uint64_t busy_ns; /* the union of those, per device */
	uint64_t tune_ns; /* of gpu_ns, cuDNN's algorithm searches and an
			     autotuner's kernels */
	uint64_t calls, host_ns; /* the program's calls before the cuts */
	uint64_t builds;         /* plans built before the cuts */
	uint64_t late_ns;        /* steady time before the cuts (rounding) */
	uint64_t steady_ns;      /* from each cut to its trace's last event */
};

/* GPU work split by the matrix products it runs between: matrix-vector
 * products are what a model generating one token at a time runs (a
 * language model's token generation), matrix-matrix ones a batch (its
 * prompt processing, training, ...). Work between two products goes with
 * the next one; work before the first product (loading weights) is setup. */
enum dt_phase { DT_PHASE_SETUP, DT_PHASE_BATCH, DT_PHASE_TOKEN, DT_PHASE_COUNT };
const char *dt_phase_name(enum dt_phase p); /* "token generation ..." */
const char *dt_phase_key(enum dt_phase p);  /* "token" */

struct dt_sum_phase {
	uint64_t ns, count; /* kernels, copies and sets */
	uint64_t fam_ns[DT_OPF_COUNT], fam_count[DT_OPF_COUNT];
	uint64_t copy_ns, copy_bytes; /* of its copies and sets */
	uint64_t steps; /* CUDA graph launches whose matrix products it ran */
};

/* DRAM traffic from the GPU's sampled counters (record --gpu-metrics),
 * every trace's summed (analyzer-dram.c). */
#define DT_DRAM_BINS 64
struct dt_sum_dram {
	uint64_t samples;
	uint64_t sampled_ns; /* their windows, summed */
	double read, write;  /* bytes */
	double peak_Bps;     /* the busiest sample's read + write rate */
	/* by the library and family of the work that covered each sample's
	 * window, in proportion to the time it covered */
	double read_by[DT_LIB_COUNT][DT_OPF_COUNT];
	double write_by[DT_LIB_COUNT][DT_OPF_COUNT];
	uint64_t ns_by[DT_LIB_COUNT][DT_OPF_COUNT]; /* that time */
	double idle_read, idle_write; /* in windows' parts no work covered */
	/* bytes over time: bin i from t0 + i * bin_ns (host clock, the first
	 * trace's) */
	uint64_t t0, bin_ns;
	uint64_t bins[DT_DRAM_BINS];
};

struct dt_dram;
struct dt_dram *dt_dram_new(struct dt_sum_dram *out);
void dt_dram_sample(struct dt_dram *d, const struct dt_gpu_sample *s);
void dt_dram_work(struct dt_dram *d, uint32_t device, uint64_t start,
		  uint64_t end, int lib, int fam);
void dt_dram_finish(struct dt_dram *d); /* every sample counted */
void dt_dram_free(struct dt_dram *d);

/* One library the program called, as its traces name it: its calls, and
 * the GPU work launched inside them. */
struct dt_sum_lib {
	char *library; /* "cudnn"; "?" for work of a call not known */
	/* as the (first) trace names it ("DTT"; dt_library_display() where
	 * it names none), its version in words and the file loaded, or NULL
	 * (what info prints of it) */
	char *display, *version, *file;
	uint64_t calls, failed, host_ns;
	uint64_t ops;          /* op executions */
	uint64_t runs;         /* of them, the steady states' (ops: all) */
	uint64_t gpu_ns, work; /* kernels, copies and sets inside its calls */
};
/* Libraries a summary tells apart; more are counted under the last. */
#define DT_SUM_LIBS 8

struct dt_summary {
	struct dt_summary_opts opts;
	struct dt_sum_file *files;
	size_t n_files;
	struct dt_device *devices;
	size_t n_devices;
	struct dt_peaks *peaks;        /* per device, then overridden */
	struct dt_peaks default_peaks; /* for ops whose device is unknown */

	uint64_t gpu_ns;   /* kernels, copies and sets, summed */
	uint64_t busy_ns;  /* the union of their intervals, per device */
	uint64_t span_ns;  /* first start to last end, per device, summed */
	uint64_t cudnn_ns; /* launched by cuDNN calls */
	/* by the library of the call that launched them, in the order the
	 * libraries were first seen */
	struct dt_sum_lib libs[DT_SUM_LIBS];
	size_t n_libs;
	uint64_t kind_ns[DT_KIND_COUNT], kind_count[DT_KIND_COUNT];
	/* every kernel, copy and set by the library that launched it and
	 * its operation family (cuDNN's by its ops' kinds) */
	uint64_t lib_ns[DT_LIB_COUNT][DT_OPF_COUNT];
	uint64_t lib_count[DT_LIB_COUNT][DT_OPF_COUNT];
	/* and what told the library: facts first */
	uint64_t by_ns[DT_BY_COUNT];
	struct dt_sum_phase phases[DT_PHASE_COUNT];
	/* kernels outside cuDNN calls, by library */
	uint64_t other_ns[DT_LIB_COUNT], other_count[DT_LIB_COUNT];
	uint64_t copy_ns, copies, copy_bytes; /* outside cuDNN calls */
	uint64_t tuner_ns, tuner_kernels;     /* an autotuner's own kernels
						 (XLA's redzone checks and result
						 comparisons) */
	uint64_t host_ns;                     /* inside cuDNN calls */
	uint64_t host_calls; /* the calls host_ns sums (calls: every one) */
	uint64_t calls, failed, ops, kernels; /* calls: the program's */
	uint64_t own_calls; /* dnntrace's own (not in calls) */
	uint64_t work;      /* kernels, copies and sets, every one timed */
	/* sampled GPU recording, over every trace (one_in: the largest,
	 * window_ms unused), and the host time of the sampled traces */
	struct dt_gpu_sampling sampling;
	uint64_t sampled_traces_ns;
	struct dt_graph_stats graphs; /* every trace's, summed */
	struct dt_plan_stats plans;   /* likewise */
	struct dt_sum_dram dram;      /* likewise */

	struct dt_sum_api *apis;
	size_t n_apis;
	struct dt_sum_problem *problems;
	size_t n_problems;
	struct dt_sum_build *builds;
	size_t n_builds;
	struct dt_sum_convert *converts;
	size_t n_converts;
	struct dt_finding *findings; /* by cost, largest first */
	size_t n_findings;
	struct dt_fusion *fusion; /* when opts.fusion */
	/* what replays of the traces measured on a GPU (dt-replayed.h),
	 * owned: the engine-choice findings' evidence */
	struct dt_replayed **replayed;
	size_t n_replayed;
	/* NVTX ranges by name and domain, every trace's summed, most GPU
	 * time first */
	struct dt_range_stat *ranges;
	size_t n_ranges;
	/* the program's steps (dt-steps.h): every trace's as one, or NULL */
	struct dt_step_stats *steps;
	struct dt_sum_startup startup; /* left out (opts.whole: none) */

	void *priv; /* indexes and scratch */
};

struct dt_summary *dt_summary_new(const struct dt_summary_opts *opts);

/* Whose calls the traces recorded, for labels: the one library's display
 * name ("cuDNN"), or "the libraries'" when there are several. */
const char *dt_sum_callers(const struct dt_summary *s);

/* The traces wrapped cuDNN alone (work of calls not known aside): views
 * word what they print as they always have, cuDNN by name. */
bool dt_sum_cudnn_only(const struct dt_summary *s);

/* The GPU time an op's share is of: cuDNN's (cudnn_ns), or where the
 * traces wrapped other libraries, the work inside every library's
 * calls. */
uint64_t dt_sum_share_ns(const struct dt_summary *s);

/* The time the steady state's cut places an op by: its GPU work's (its
 * first kernel's start), else its call's. A view that lists ops keeps
 * those at or after dt_sum_cut_t() to list the ops the summary counts;
 * GPU work, those whose dt_activity.placed is. */
uint64_t dt_sum_op_t(const struct dt_op *op);
/* Where the trace read last was cut (host clock): its ops and GPU work
 * from then on are its steady state's; 0 when nothing was cut, UINT64_MAX
 * when all of them were start-up's. */
uint64_t dt_sum_cut_t(const struct dt_summary *s);

/* Read one trace into the summary. Returns 0, or -1 with a sentence in
 * err when the file cannot be read at all (a damaged file still counts
 * for what could be read; its dt_sum_file says how it ended). */
int dt_summary_add(struct dt_summary *s, const char *path, char *err,
		   size_t errlen);

/* The same from a session not run yet (opened with pointers on when the
 * summary looks for fusion opportunities); it is run, not closed. */
int dt_summary_read(struct dt_summary *s, struct dt_session *ss, char *err,
		    size_t errlen);

/* The rank label of a file: "3" from RANK=3, else "pid 1234". */
const char *dt_rank_label(const struct dt_sum_file *f, char *buf,
			  size_t size);

/* The device's peak DRAM bandwidth (bytes/s) that measured traffic is
 * set against: the first GPU's, else the default peaks'. */
double dt_sum_peak_bandwidth(const struct dt_summary *s);

/* GPU time (and *count, when not NULL, kernels, copies and sets) of a
 * library, any family; of a family, any library; lib or fam -1 for any. */
uint64_t dt_sum_lib_ns(const struct dt_summary *s, int lib, int fam,
		       uint64_t *count);

/* A replay's results for the findings, owned by s from now on (freed
 * with it). Before dt_summary_finish. */
void dt_summary_add_replayed(struct dt_summary *s, struct dt_replayed *r);

/* Every trace is in: settle medians, peaks and findings. */
void dt_summary_finish(struct dt_summary *s);

void dt_summary_free(struct dt_summary *s);

/* Op executions summed up: of the steady states (ops: every one). */
uint64_t dt_sum_ops(const struct dt_summary *s);

/* What the start-up held and whether it is left out, in one line of
 * words (snprintf's return); 0 with "" when no trace has a steady state
 * after a start-up. */
int dt_sum_startup_text(const struct dt_summary *s, char *buf, size_t size);

/* Whether every trace is complete (dt_trace_complete()). */
bool dt_summary_complete(const struct dt_summary *s);

/* The peaks a problem is held against (its device's, or the default). */
const struct dt_peaks *dt_summary_peaks(const struct dt_summary *s,
					int32_t device);

/* Rates of a problem over its executions with kernels. */
struct dt_rates {
	double flops_per_s, bytes_per_s; /* achieved; 0 unknown */
	double intensity;                /* FLOP per byte; 0 unknown */
	double pct_flops, pct_bandwidth; /* of the peaks; <0 unknown */
	int bound;                       /* 1 compute, 0 memory, -1 ? */
	double roof_pct; /* of what the roofline allows; <0 unknown */
};
void dt_problem_rates(const struct dt_summary *s,
		      const struct dt_sum_problem *p, struct dt_rates *r);

/* How far a problem's mean GPU time per execution (settled_ns /
 * settled_count) may be from that of all its executions of that engine,
 * when only some were timed (sampled recording): the half width of the
 * 95% confidence interval, as a fraction of the mean, taking the timed
 * executions as a random sample of them all. 0 when all were timed; -1
 * when fewer than two were. */
double dt_problem_spread(const struct dt_sum_problem *p);

#endif /* DT_SUMMARY_H */
