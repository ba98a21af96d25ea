/*
 * cupti-internal.h - what the files of cupti/ share. Private to cupti/.
 */
#ifndef CUPTI_INTERNAL_H
#define CUPTI_INTERNAL_H

#include <stdint.h>

/* Hand a record to the sink recording started with: from CUPTI's and the
 * flusher's threads, and from the program's (which never wait). */
int cupti_emit(const void *rec, uint32_t size);
int cupti_emit_now(const void *rec, uint32_t size);

/* cupti-graphs.c: look up what graph tracking needs, once CUPTI (the
 * library handle) is on; sets dt_cupti_graphs when it can work. */
void cupti_graphs_start(void *cupti);

/* A driver (or runtime) API callback id that CUPTI names `name`, enabled
 * as a launch carrier: graph launches among them get GRAPH_LAUNCH
 * records. */
void cupti_graphs_launch_api(int runtime, uint32_t cbid, const char *name);

/* cupti-pm.c: sample the GPU's counters every `interval` microseconds
 * (a number; empty: 100) with CUPTI (the library handle) while recording,
 * for `record --gpu-metrics`; a GPU_METRICS record says what, or why not.
 * Stop: the last samples written, the counters given back. */
void cupti_pm_start(void *cupti, const char *interval);
void cupti_pm_stop(void);
/* Decode the samples taken so far; from the thread that started it. */
void cupti_pm_poll(void);

/* A CUpti_ActivityAPI record of the driver or runtime layer. */
void cupti_graphs_api_record(const void *rec);

#endif /* CUPTI_INTERNAL_H */
