/*
 * dt-steps.h - a program's steps (its iterations) as one trace shows them:
 * how many, what start-up cost before the steady state, and per step the
 * time, the GPU time and that time by library, operation family and
 * kernel (analyzer/REPORT.md, "Steps"). Found from the repeating structure
 * of the trace itself, without annotations: analyzer-steps.c.
 *
 * Not the finding of steps (analyzer-steps.c), nor what a diff makes of
 * them (dt-analyzer.h, dt_diff).
 */
#ifndef DT_STEPS_H
#define DT_STEPS_H

#include "dt-analyzer.h"

/* A kernel launched outside cuDNN calls, by name, over the steady state. */
struct dt_step_kernel {
	char *name;
	enum dt_lib lib;
	enum dt_opfam fam;
	double per_step_ns; /* GPU time per step */
	double per_step;    /* launches per step */
};

/* Spread of a per-step quantity over the steady steps. */
struct dt_step_dist {
	uint64_t median_ns, p10_ns, p90_ns;
	uint64_t mean_ns; /* what a program that times its loop measures */
};

struct dt_step_stats {
	bool found;   /* a repeating structure; else the run is one step */
	char *anchor; /* what begins a step: a kernel's name, "CUDA graph
			 launch" or a function; NULL when not found */
	const char *anchor_kind;  /* "kernel", "graph launch", "call" */
	uint64_t steps;           /* steady steps (the last one's end is
				     the trace's: time is over the others) */
	uint64_t startup_steps;   /* steps before the steady state */
	uint64_t startup_ns;      /* the first event to the steady state */
	uint64_t t_steady;        /* its first step (host clock); one trace's */
	uint64_t span_ns;         /* the first event to the last */
	struct dt_step_dist time; /* step time (start to next start) */
	/* per step, the steady state's mean (GPU work is delivered in
	 * batches, not in the order it ran: sums over a stretch of steps
	 * are what it tells, not each step's) */
	double gpu_ns; /* kernels, copies and sets, summed */
	double lib_ns[DT_LIB_COUNT];
	double fam_ns[DT_OPF_COUNT];
	/* kernels, most per step first: known when 4 or more of the 64
	 * slices kernels are summed in lie wholly in the steady state (a
	 * steady state short next to its start-up, a compiled program's,
	 * has none) */
	struct dt_step_kernel *kernels;
	size_t n_kernels;
	bool kernels_known;
	uint32_t traces; /* merged from this many (dt_steps_merge) */
	/* each trace's, when merged from several (dt_steps_collect) */
	struct dt_step_stats **each;
	size_t n_each;
};

/* Steps found while a session runs: a consumer of its events. */
struct dt_stepper;
struct dt_stepper *dt_stepper_new(void);
/* Its consumer (calls, activities, graph launches), to dt_session_add(). */
void dt_stepper_consumer(struct dt_stepper *st, struct dt_consumer *c);
/* What was found; the stepper is spent. Returns NULL out of memory. */
struct dt_step_stats *dt_stepper_finish(struct dt_stepper *st);
void dt_stepper_free(struct dt_stepper *st);

/* A stepper consuming the session's events (before dt_session_run). */
struct dt_stepper *dt_steps_watch(struct dt_session *ss);
/* What its consumer takes, for a consumer of the same events to hand on
 * (the summary): one consumer fewer for the session to call at every
 * event. A call: false once calls no longer mark steps (GPU work was
 * seen); the caller may then keep the latest call's start itself and
 * hand it over before dt_stepper_finish (dt_stepper_calls_until). A
 * record: those that dt_stepper_reads() alone need be. */
bool dt_stepper_call(struct dt_stepper *st, const struct dt_call *c);
void dt_stepper_calls_until(struct dt_stepper *st, uint64_t t_begin);
void dt_stepper_activity(struct dt_stepper *st, const struct dt_activity *a);
void dt_stepper_record(struct dt_stepper *st, const struct dt_rec_hdr *h);
static inline bool dt_stepper_reads(const struct dt_rec_hdr *h)
{
	return h->type == DT_REC_NVTX || h->type == DT_REC_STRING;
}
void dt_stepper_graph_launch(struct dt_stepper *st,
			     const struct dt_graph_launch *l);
/* Its steps, once the session ran, with those in *all (a job's ranks as
 * one program: dt_steps_merge); the stepper is freed. */
void dt_steps_collect(struct dt_step_stats **all, struct dt_stepper *st);
/* The same for one trace's steps already found (dt_stepper_finish):
 * one is *all's now. */
void dt_steps_add(struct dt_step_stats **all, struct dt_step_stats *one);

/* Several traces (a job's ranks) as one program: steps the fewest, step
 * time the slowest rank's, GPU time per step summed. */
struct dt_step_stats *dt_steps_merge(const struct dt_step_stats *const *v,
				     size_t n);
void dt_steps_free(struct dt_step_stats *s);

/* The steps in one line of words (snprintf's return). */
int dt_steps_text(const struct dt_step_stats *s, char *buf, size_t size);

#endif /* DT_STEPS_H */
