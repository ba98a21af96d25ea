/*
 * analyzer-findings.h - the summary's findings (analyzer-findings.c).
 * Private to analyzer/.
 */
#ifndef DT_ANALYZER_FINDINGS_H
#define DT_ANALYZER_FINDINGS_H

#include "dt-summary.h"

/* Work out s->findings, once every problem is settled. */
void dt_summary_find(struct dt_summary *s);

#endif /* DT_ANALYZER_FINDINGS_H */
