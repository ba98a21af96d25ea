/*
 * dt-diff.h - two runs compared (analyzer-diff.c, analyzer/DIFF.md): the
 * whole program per step, and problem by problem. Part of dt-analyzer.h,
 * which includes it; not the printing of a diff (tools/commands).
 */
#ifndef DT_DIFF_H
#define DT_DIFF_H

#include "dt-analyzer.h"

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

/* A quantity of the whole program per step, compared (analyzer/DIFF.md). */
enum dt_qty_kind {
	DT_Q_STEP,    /* step time */
	DT_Q_GPU,     /* GPU time per step */
	DT_Q_LIBRARY, /* GPU time per step of a library */
	DT_Q_FAMILY,  /* of an operation family */
	DT_Q_KERNEL,  /* of a kernel launched outside cuDNN calls */
};
const char *dt_qty_key(enum dt_qty_kind k); /* "library" */

struct dt_diff_qty {
	enum dt_qty_kind kind;
	const char *name;  /* "step time", the library, family or kernel */
	double base, next; /* ns per step: the median step or the mean */
	double change;     /* (next - base) / base */
	double noise_ns;   /* how far the steps' spread lets it move (step
			      time; 0 for GPU times, means) */
	double floor_ns;   /* the smallest change per step that counts */
	enum dt_verdict verdict;
};

/* One run's replay of a problem (dt-replayed.h): the engine it ran, as
 * replayed, and the best engine replay found. */
struct dt_diff_replay_side {
	bool present;       /* measured in this run's replay */
	int64_t engine;     /* the recorded one (a legacy call's algorithm) */
	const char *knobs;  /* its knob choices, NULL none */
	uint64_t median_ns; /* its replayed median, 0 not timed */
	double spread;      /* (p90 - p10) / median of its runs */
	int64_t best;       /* the best engine, -1 none */
	const char *best_knobs;
	uint64_t best_ns;
};

/* A problem both or either run's replay measured, compared. */
struct dt_diff_replay {
	char *key; /* the problem, uids left out */
	const char *brief;
	bool legacy; /* engines are algorithms */
	struct dt_diff_replay_side base, next;
	double change; /* of the recorded engine's replayed median, new over
			  base minus 1 */
	enum dt_verdict verdict; /* of that change: same, noise (within
				    the larger spread of the two), slower,
				    faster; added or removed */
	bool best_changed;       /* the best engine or its knobs differ */
};

struct dt_diff_opts {
	double threshold; /* relative; 0: 5% */
	uint64_t min_ns;  /* absolute, per step; 0: 10 us */
};

struct dt_diff {
	struct dt_diff_opts opts;
	const struct dt_summary *base, *next;
	struct dt_diff_op *ops; /* by the size of the change, largest first */
	size_t n_ops;
	size_t slower, faster, noise, engine_changes, workspace_changes, added,
		removed;
	bool other_gpu, other_cudnn; /* the runs' GPUs or cuDNN differ */
	/* the whole program, per step: when both runs have steps */
	struct dt_diff_qty *qty; /* step time and GPU time first, then the
				    largest change first */
	size_t n_qty;
	size_t qty_slower, qty_faster, qty_noise;
	/* what replays beside both runs' traces measured, problem by
	 * problem: when both runs have one; in the base run's order */
	struct dt_diff_replay *replays;
	size_t n_replays;
	size_t replay_moves, best_changes; /* slower or faster; best
					      engine changes */
};

/* Compare two finished summaries; they must outlive the diff. */
struct dt_diff *dt_diff_new(const struct dt_summary *base,
			    const struct dt_summary *next,
			    const struct dt_diff_opts *opts);
void dt_diff_free(struct dt_diff *d);

#endif /* DT_DIFF_H */
