/*
 * analyzer-ranges.h - NVTX ranges as the session reads them
 * (analyzer-ranges.c). Private to analyzer/.
 */
#ifndef DT_ANALYZER_RANGES_H
#define DT_ANALYZER_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dt-session.h"

/* pattern: keep only the work inside ranges whose name matches it
 * (fnmatch), or NULL to keep everything. NULL when memory is short. */
struct dt_ranges *dt_ranges_new(const char *pattern);
void dt_ranges_free(struct dt_ranges *r);

/* A record of the trace, in file order: STRING and NVTX ones are taken. */
void dt_ranges_feed(struct dt_ranges *r, const struct dt_rec_hdr *h);

/* The call seq made by tid at t: counted in the ranges open around it.
 * Returns whether the filter keeps it. */
bool dt_ranges_call(struct dt_ranges *r, uint64_t seq, uint32_t tid,
		    uint64_t t);

/* Whether the filter kept call seq (one dt_ranges_call saw). */
bool dt_ranges_kept(const struct dt_ranges *r, uint64_t seq);

/* GPU work: counted in the ranges of the call that launched it. */
void dt_ranges_activity(struct dt_ranges *r, const struct dt_activity *a);

/* After the last record: names resolved, ranges merged by name. */
void dt_ranges_finish(struct dt_ranges *r);

const struct dt_range *dt_ranges_list(const struct dt_ranges *r, size_t *n);
const struct dt_range_stat *dt_ranges_stats(const struct dt_ranges *r,
					    size_t *n);

/* Counts of `from` added to `to` (same name and domain). */
void dt_range_stat_add(struct dt_range_stat *to,
		       const struct dt_range_stat *from);
/* Largest GPU time first, then host time, then by name. */
void dt_range_stats_sort(struct dt_range_stat *st, size_t n);

#endif /* DT_ANALYZER_RANGES_H */
