/*
 * analyzer-findings.h - the summary's findings (analyzer-findings.c).
 * Private to analyzer/.
 */
#ifndef DT_ANALYZER_FINDINGS_H
#define DT_ANALYZER_FINDINGS_H

#include "dt-summary.h"

/* A finding added to s; title and evidence (lines, or NULL) malloc'd,
 * owned by s from now on. */
void dt_finding_add(struct dt_summary *s, enum dt_finding_type type,
		    uint64_t cost, bool host, char *title, char *evidence);

/* The engine-choice findings: problems a replay measured faster with
 * another engine (analyzer-replayed.c). */
void dt_find_engine_choice(struct dt_summary *s);

/* Work out s->findings, once every problem is settled. */
void dt_summary_find(struct dt_summary *s);

#endif /* DT_ANALYZER_FINDINGS_H */
