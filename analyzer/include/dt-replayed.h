/*
 * dt-replayed.h - what `dnntrace replay` measured, read back from its
 * results file (replay/REPLAY.md has the format): per problem of a trace,
 * the recorded engine and every candidate timed on a GPU, for the report's
 * engine-choice findings; per fusable chain, its fused graph timed
 * against its steps unfused, for `fusion`. Part of analyzer/'s public
 * interface (it reads files and calls no GPU library); replay/ writes
 * them.
 */
#ifndef DT_REPLAYED_H
#define DT_REPLAYED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The version of the results format this build writes and reads. */
#define DT_REPLAYED_VERSION 1

/* One engine configuration timed for a problem. */
struct dt_replayed_cand {
	int64_t engine;     /* global engine index */
	char *knobs;        /* "TILE_SIZE=4 KBLOCK=3", or NULL none */
	char *source;       /* "recorded", "heuristic_a", "heuristic_b",
			       "fallback", "all", "combination" */
	char *status;       /* "ok", or why it was not timed */
	uint64_t median_ns; /* per execution; 0 not timed */
	double spread;      /* (p90 - p10) / median of its runs */
	uint32_t runs;
	int64_t workspace; /* bytes, -1 unknown */
	double error;      /* its outputs against the recorded engine's:
			      the largest difference over the largest
			      magnitude; <0 not compared */
	int agrees;        /* within its data type's tolerance: 1, 0, -1
			      not compared */
};

/* One problem of the trace, as replay found it. */
struct dt_replayed_problem {
	char *problem; /* the problem's key (dt_op.problem) */
	char *brief;
	char *status;         /* "measured", "not_rebuilt", "failed" */
	char *reason;         /* why not measured; NULL */
	uint64_t executions;  /* in the trace */
	uint64_t recorded_ns; /* the recorded engine's median GPU time per
				 execution, from the trace; 0 none */
	uint64_t replayed_ns; /* the recorded engine's, replayed; 0 none */
	bool uncertain;       /* the replay of the recorded engine is more than
				 15 % off the trace's time */
	bool legacy;          /* a legacy call: engines are its algorithms, a
				 candidate's knobs its math type */
	bool knobs_unknown;   /* the trace lacks the recorded engine's knob
				 choices: it was replayed with cuDNN's
				 defaults */
	/* a GEMM built through cuBLASLt: the library of the call ("cublas"
	 * or "cublaslt"; engines are cuBLASLt's algorithm IDs, knobs their
	 * configuration), NULL for cuDNN's problems */
	char *gemm;
	bool scalars_unknown; /* a GEMM's alpha or beta was in device memory:
				 replayed as 1 */
	/* the recorded engine's kernels' time, replayed, as the trace's
	 * (CUPTI), which calibration then holds against recorded_ns; 0
	 * none: replayed_ns is */
	uint64_t replayed_kernels_ns;
	struct dt_replayed_cand *cands;
	size_t n_cands;
	int chosen; /* index of the recorded engine in cands, -1 none */
	int best;   /* the fastest that agrees with it, -1 none */
	bool cut_short; /* its budget was spent before every candidate was
			   timed */
};

/* One step of a fusable chain as replay timed it unfused. */
struct dt_replayed_fstep {
	char *what;
	char *source;      /* "replayed" (the head, its recorded engine) or
			      "recorded" (its kernels' time in the trace) */
	uint64_t ns;       /* per occurrence */
	uint64_t graph_ns; /* the step alone as a cuDNN pointwise graph (a
			      GEMM head as a matmul graph); 0 none, why
			      says why */
	char *why;
	bool head; /* the chain's head (its first step, or a prologue's
		      last) */
};

/* A fusion what-if: a chain `fusion` calls fusable, built as one cuDNN
 * graph and timed against its steps unfused. */
struct dt_replayed_fusion {
	char *chain; /* the chain's key (dt_fz_opp.key) */
	char *pattern;
	char *status; /* "measured", "not_built", "failed" */
	char *reason; /* why not measured; NULL */
	uint64_t count;
	int64_t priced_ns; /* the fusion analysis's saving per occurrence */
	struct dt_replayed_fstep *steps;
	size_t n_steps;
	struct dt_replayed_cand fused; /* the fused graph's fastest engine */
	uint64_t unfused_ns, fused_ns; /* per occurrence; 0 not measured */
	int64_t saving_ns;             /* unfused less fused */
	/* the fused output against the unfused chain's: 1 within its
	 * type's tolerance, 0 not, -1 not compared; error their largest
	 * difference over the largest magnitude */
	int outputs_agree;
	double outputs_error;
	char *head_from;   /* "graph", "legacy call", "GEMM"; NULL unknown */
	char *legacy_call; /* the legacy API's fused call that would run the
			      chain too, NULL none */
};

struct dt_replayed {
	char *trace;        /* as named when replayed */
	char *gpu;          /* the GPU it ran on */
	char *recorded_gpu; /* the trace's GPU */
	bool any_gpu;       /* run on another model than the recorded one */
	bool cold_cache;
	char *engines; /* "heuristic" or "all" */
	struct dt_replayed_problem *problems;
	size_t n_problems;
	struct dt_replayed_fusion *fusions;
	size_t n_fusions;
	/* the file's bytes up to the end of its last whole line (a replay
	 * stopped while writing leaves a line cut short after them) */
	uint64_t complete_bytes;
};

/* The results file of trace: beside it, its name with ".dnnt" (when it
 * ends so) replaced by ".replay.jsonl"; into buf, which it returns. */
const char *dt_replayed_path(const char *trace, char *buf, size_t size);

/* Read a results file (a last line cut short left out). Returns 0 with
 * *out set (free it with dt_replayed_free), 1 when there is no such
 * file, -1 with a sentence in err when it cannot be read or is not a
 * results file of a version this build reads. */
int dt_replayed_read(const char *path, struct dt_replayed **out, char *err,
		     size_t errlen);

void dt_replayed_free(struct dt_replayed *r);

struct dt_summary;
/* The fusion what-if of chain key in the results files the summary read
 * (the first that has it, into *from when from is given), or NULL. */
const struct dt_replayed_fusion *
dt_replayed_fusion_find(const struct dt_summary *s, const char *key,
			const struct dt_replayed **from);

#endif /* DT_REPLAYED_H */
