/*
 * dt-diff.h - two summaries compared, with a verdict for CI
 * (analyzer/DIFF.md). Part of analyzer/'s public interface; dt-analyzer.h
 * includes every part.
 */
#ifndef DT_DIFF_H
#define DT_DIFF_H

#include "dt-summary.h"

/*
 * Two summaries compared: operations matched by what they computed (not
 * by call order), their GPU time per execution against the
 * noise of the executions, engine and workspace changes, operations added
 * and removed, and the totals. `dnntrace diff` prints it and gates CI on it.
 */

/* One run's view of a problem (several problems of a run that differ only
 * in their tensors' uids are one). */
struct dt_diff_side {
	bool present;
	uint64_t count, gpu_ns;
	uint64_t timed; /* of count: with GPU time (all but those that ran
			   outside sampled recording's windows) */
	uint64_t median_ns, min_ns, max_ns; /* per execution, settled engine */
	int64_t engine;
	const char *knobs;
	int64_t workspace; /* of the settled engine configuration */
	double flops_per_s, bytes_per_s;
};

enum dt_verdict {
	DT_SAME,    /* below the thresholds */
	DT_NOISE,   /* above them, but within the executions' spread */
	DT_SLOWER,  /* a regression */
	DT_FASTER,  /* an improvement */
	DT_ADDED,   /* only in the new run */
	DT_REMOVED, /* only in the base run */
	DT_UNTIMED, /* in both, without GPU time in one */
};
const char *dt_verdict_key(enum dt_verdict v); /* "slower" */

struct dt_diff_op {
	char *key; /* the problem, uids left out */
	const char *api, *brief;
	enum dt_op_kind kind;
	struct dt_diff_side base, next;
	int64_t delta_ns; /* median per execution, next - base */
	double change;    /* delta / base median, 0.05 for +5% */
	enum dt_verdict verdict;
	bool engine_changed;    /* engine or knobs */
	bool workspace_changed; /* the settled configuration's */
};

struct dt_diff_opts {
	double threshold; /* relative; 0: 5% */
	uint64_t min_ns;  /* absolute, per execution; 0: 10 us */
};

struct dt_diff {
	struct dt_diff_opts opts;
	const struct dt_summary *base, *next;
	struct dt_diff_op *ops; /* by the size of the change, largest first */
	size_t n_ops;
	size_t slower, faster, noise, engine_changes, workspace_changes, added,
		removed;
	bool other_gpu, other_cudnn; /* the runs' GPUs or cuDNN differ */
};

/* Compare two finished summaries; they must outlive the diff. */
struct dt_diff *dt_diff_new(const struct dt_summary *base,
			    const struct dt_summary *next,
			    const struct dt_diff_opts *opts);
void dt_diff_free(struct dt_diff *d);

#endif /* DT_DIFF_H */
