/*
 * export.h - `dnntrace export`: what its formats share. Private to tools/.
 *
 * Every format is a consumer of the analyzer's session (one per trace),
 * like every other view: it never reads records itself.
 */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "dt-analyzer.h"
#include "dt-records.h"

/* What the user asked for. */
struct dt_export_opts {
	char **paths; /* the traces (files; folders already expanded) */
	size_t n_paths;
	const char *output; /* -o: a file, or a folder (csv); NULL stdout */
	bool force;         /* --force: replace an existing output */
	/* the window: ns after the earliest trace's recording began (on the
	 * wall clock, which lines traces of several processes up);
	 * to_ns is UINT64_MAX when open */
	uint64_t from_ns, to_ns;
	int64_t pid; /* only this process; -1 every one */
	const char *range; /* only the work inside these NVTX ranges
			      (dt_session_opts.range); NULL all */
};

/* One trace of an export: its place on the common time line. */
struct dt_export_trace {
	const char *path;
	struct dt_session *s;
	uint32_t pid;
	char *rank;       /* "RANK=3" or NULL (dt_rank_of) */
	int64_t offset;   /* add to a CLOCK_MONOTONIC time of this trace to get
			     ns after the export's base */
	uint64_t from, to; /* the window on this trace's CLOCK_MONOTONIC */
};

/* Open the traces of o (dropping those of other processes when o->pid is
 * set) and place them on one time line; *n gets how many. NULL, with one
 * sentence on stderr per unreadable trace, when none could be opened. */
struct dt_export_trace *dt_export_open(const struct dt_export_opts *o,
				       size_t *n);
void dt_export_close(struct dt_export_trace *t, size_t n);

/* Whether [begin, end] (CLOCK_MONOTONIC ns of t) meets t's window. */
static inline bool dt_export_in(const struct dt_export_trace *t,
				uint64_t begin, uint64_t end)
{
	return end >= t->from && begin <= t->to;
}

/* A CLOCK_MONOTONIC time of t on the export's time line: ns after its
 * base, negative before it. Worked out modulo 2^64, as the clocks are: a
 * damaged trace's times may be anything, and a difference of two times
 * near 2^63 is still right where a signed sum would overflow. */
static inline int64_t dt_export_line(const struct dt_export_trace *t,
				     uint64_t mono)
{
	return (int64_t)(mono + (uint64_t)t->offset);
}

/* The same, 0 for a time before the base. */
static inline uint64_t dt_export_ns(const struct dt_export_trace *t,
				    uint64_t mono)
{
	int64_t rel = dt_export_line(t, mono);

	return rel > 0 ? (uint64_t)rel : 0;
}

/* How a trace of an export ended, and what it lost: marked at its end in
 * the timeline, and said on stderr (dt_export_warn). */
struct dt_export_note {
	bool complete;
	char ended[256];
	char lost[512];
	uint64_t gpu_dropped;
	uint64_t last; /* its last host time (CLOCK_MONOTONIC ns) */
	char why[1024]; /* all of it in one line, for the mark */
};
/* After the trace's session ran. */
void dt_export_note(const struct dt_export_trace *t,
		    struct dt_export_note *note);
/* The warnings for incomplete traces, and for kernels without an arrow. */
void dt_export_warn(const struct dt_export_trace *t,
		    const struct dt_export_note *notes, size_t n,
		    uint64_t no_flow);

/* The pid trace i gets in the export: its own, unless an earlier one has
 * it (pids are per host), then one above any a kernel hands out. pids
 * holds those of the traces before it and gets this one's. */
uint32_t dt_export_pid(const struct dt_export_trace *t, size_t i,
		       uint32_t *pids);

/* A process's name in the timeline: rank, command line, pid, host. */
void dt_export_process_name(const struct dt_export_trace *t, char *buf,
			    size_t size);

/* A loss in words, for its mark. */
void dt_export_loss_text(const struct dt_loss *l, char *buf, size_t size);

/* "Memcpy HtoD" ... by CUPTI's copy kind; a string that lives on. */
const char *dt_export_copy_name(uint8_t kind);

/* The argument that names the call an op or a kernel came from, by the
 * call's library: "cuDNN call", "cuBLAS call"; a string that lives on. */
const char *dt_export_call_key(const char *library);

/* Whose ops the timeline's op tracks hold: "cuDNN" where the trace wraps
 * cuDNN alone, else "the libraries'". */
const char *dt_export_callers(const struct dt_export_trace *t);

/* The formats; each returns an exit code. */
int dt_export_perfetto(const struct dt_export_opts *o);
int dt_export_trace_events(const struct dt_export_opts *o); /* chrome */
int dt_export_sqlite(const struct dt_export_opts *o);
int dt_export_csv(const struct dt_export_opts *o);

#endif /* EXPORT_H */
