/*
 * dt-replay.h - replay/'s interface: rebuild a trace's problems on a GPU
 * from what its decoder kept of them, time the engine the program ran and
 * the others cuDNN offers, and write what was measured beside the trace
 * (analyzer/include/dt-replayed.h reads it back). The only part of
 * dnntrace that loads CUDA and cuDNN, at run time: without them, it says
 * so and nothing else changes.
 */
#ifndef DT_REPLAY_H
#define DT_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The exit status of a replay that cannot run on this machine: no GPU,
 * no CUDA driver or cuDNN to load, or a GPU of another model than the
 * trace's (without any_gpu). */
#define DT_REPLAY_NO_GPU 3

struct dt_replay_opts {
	const char *results; /* NULL: beside the trace (dt_replayed_path) */
	uint32_t top;        /* the N problems with the most GPU time; 0 all */
	uint64_t op;         /* only the problem of the op of this seq; 0 */
	double budget_s;     /* time for the whole replay */
	bool all_engines;    /* every engine the graph supports, not only
				the heuristics' */
	bool cold_cache;     /* L2 flushed before each timed run */
	bool any_gpu;        /* run on a GPU of another model */
	bool list;           /* only list the problems and whether they can
				be rebuilt: no GPU needed */
	bool quiet;          /* no progress on stderr */
};

/* Replay the trace at path. Returns 0; 2 with a sentence in err for
 * input or output that cannot be read or written; DT_REPLAY_NO_GPU with
 * a sentence in err when this machine cannot replay. */
int dt_replay(const char *path, const struct dt_replay_opts *opts, char *err,
	      size_t errlen);

/* A monotonic clock, in seconds: replay's budgets are times of it. */
double dt_replay_now_s(void);

#endif /* DT_REPLAY_H */
