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

/* What the user asked for. */
struct dt_export_opts {
	char **paths; /* the traces (files; folders already expanded) */
	size_t n_paths;
	const char *output; /* -o: a file, or a folder (csv); NULL stdout */
	/* the window: ns after the earliest trace's recording began (on the
	 * wall clock, which lines traces of several processes up);
	 * to_ns is UINT64_MAX when open */
	uint64_t from_ns, to_ns;
	int64_t pid; /* only this process; -1 every one */
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

/* The formats; each returns an exit code. */
int dt_export_trace_events(const struct dt_export_opts *o); /* perfetto */
int dt_export_sqlite(const struct dt_export_opts *o);
int dt_export_csv(const struct dt_export_opts *o);

#endif /* EXPORT_H */
