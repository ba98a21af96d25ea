/*
 * dt-summary.h - one or more traces summed up: where the GPU time went,
 * the operations grouped by problem with their rates against the device's
 * peaks, host time per cuDNN function, and findings with their cost.
 *
 * `dnntrace report` prints it; `dnntrace diff` compares two of them. A
 * summary streams its traces (memory grows with the distinct problems,
 * functions and kernel names, and 8 bytes per op execution for medians).
 */
#ifndef DT_SUMMARY_H
#define DT_SUMMARY_H

#include "dt-analyzer.h"
#include "dt-fusion.h"

/* Peak rates an op is held against. */
struct dt_peaks {
	double bandwidth;            /* bytes/s; 0 unknown */
	double flops[DT_MATH_COUNT]; /* FLOP/s by math; 0 unknown */
	char source[240];            /* where they came from, in words */
};

/* Bandwidth from the device record; FLOP rates from the per-architecture
 * table times SMs times clock. */
void dt_peaks_for_device(struct dt_peaks *p, const struct dt_device *d);

struct dt_sum_file {
	char *path;
	char *host, *program, *cudnn, *gpu_state;
	char *cudnn_version; /* "9.19.0", or NULL */
	char *cuda;          /* "driver 13.0, runtime 13.0", or NULL */
	char *rank;          /* "RANK=3" from the rank variables, or NULL */
	uint32_t pid;
	enum dt_file_end end;
	char error[160];
	uint64_t records, calls, lost, gpu_dropped, undecoded;
	uint64_t kernels, ops;
	uint64_t t_begin, t_end; /* first and last host timestamps seen */
	uint64_t gpu_ns;         /* kernels, copies and sets, summed */
	uint64_t cudnn_gpu_ns;   /* of which launched by cuDNN calls */
};

struct dt_sum_api {
	char *name;
	uint64_t calls, failed, ns, min, max;
	uint64_t failed_ns;
	int32_t last_failure; /* cudnnStatus_t of the last failed call */
};

/* What cuDNN ran a problem with: an engine and its knob choices
 * (backend), or an algorithm (legacy). */
struct dt_sum_engine {
	int64_t engine;
	char *knobs; /* "TILE_SIZE=4 KBLOCK=3", or NULL */
	uint64_t count, gpu_ns;
	uint64_t timed, min_ns, max_ns; /* the executions with kernels */
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
	int64_t dtype;    /* its main input's cudnnDataType_t, -1 unknown */
	int tensor_cores; /* 1 yes, 0 no, -1 unknown */
	double flops;     /* one execution */
	uint64_t bytes;   /* one execution */
	int32_t device;
	uint64_t count, failed, gpu_ns, host_ns, kernels;
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
	/* GPU time of the executions with kernels, for medians: the first
	 * DT_SUM_EXACT exactly, later ones (of one engine configuration) in
	 * a histogram of 1% wide buckets, so memory stays bounded */
	struct dt_sum_time {
		uint64_t ns;
		uint32_t choice; /* index into engines[] */
	} * times;
	size_t n_times, cap_times;
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
};

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
	uint64_t kind_ns[DT_KIND_COUNT], kind_count[DT_KIND_COUNT];
	uint64_t fam_ns[DT_FAM_COUNT], fam_count[DT_FAM_COUNT];
	uint64_t copy_ns, copies, copy_bytes; /* outside cuDNN calls */
	uint64_t tuner_ns, tuner_kernels;     /* an autotuner's own kernels
						 (XLA's redzone checks and result
						 comparisons) */
	uint64_t host_ns;                     /* inside cuDNN calls */
	uint64_t calls, failed, ops, kernels;

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

	void *priv; /* indexes and scratch */
};

struct dt_summary *dt_summary_new(const struct dt_summary_opts *opts);

/* Read one trace into the summary. Returns 0, or -1 with a sentence in
 * err when the file cannot be read at all (a damaged file still counts
 * for what could be read; its dt_sum_file says how it ended). */
int dt_summary_add(struct dt_summary *s, const char *path, char *err,
		   size_t errlen);

/* The same from a session not run yet (opened with pointers on when the
 * summary looks for fusion opportunities); it is run, not closed. */
int dt_summary_read(struct dt_summary *s, struct dt_session *ss, char *err,
		    size_t errlen);

/* Every trace is in: settle medians, peaks and findings. */
void dt_summary_finish(struct dt_summary *s);

void dt_summary_free(struct dt_summary *s);

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

#endif /* DT_SUMMARY_H */
