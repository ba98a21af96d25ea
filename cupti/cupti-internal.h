/*
 * cupti-internal.h - what the files of cupti/ share. Private to cupti/.
 */
#ifndef CUPTI_INTERNAL_H
#define CUPTI_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "dt-trace.h"

static inline uint64_t cupti_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A record without a tail, zeroed, its type and size set. */
#define REC_INIT(rec, TYPE)                                 \
	do {                                                \
		memset(&(rec), 0, sizeof(rec));             \
		(rec).hdr.type = (TYPE);                    \
		(rec).hdr.size = dt_rec_align(sizeof(rec)); \
	} while (0)

/* Hand a record to the sink recording started with: from CUPTI's and the
 * flusher's threads, and from the program's (which never wait). */
int cupti_emit(const void *rec, uint32_t size);
int cupti_emit_now(const void *rec, uint32_t size);

/* A record of fixed_size bytes (its type and fields set; its last field is
 * the tail's length) with len bytes of tail (at most 4096 are kept), to
 * the sink: cupti_emit_now's way when now. */
int cupti_emit_tail(void *fixed, uint32_t fixed_size, const void *tail,
		    uint32_t len, bool now);

/* dlsym() itself, as the host handed it (dt_cupti_init); NULL before. */
void *cupti_dlsym(void *handle, const char *name);

/* cupti-graphs.c: the next definition of a function the shim wraps (of
 * that version, when given): in the global scope, else in the loaded
 * library whose name holds `version` (or libcuda.so.1), which a library
 * loaded with RTLD_LOCAL needs. */
void *cupti_next_fn(const char *name, const char *version);

/* cupti-kernels.c: the kernels libraries registered since the last call,
 * as KERNEL_LIB records; called where GPU work is seen. */
void cupti_kernels_flush(void);

/* cupti-graphs.c: look up what graph tracking needs, once CUPTI (the
 * library handle) is on; sets dt_cupti_graphs when it can work. */
void cupti_graphs_start(void *cupti);

/* Whether the driver or runtime function CUPTI names `name` launches a
 * graph. */
bool cupti_graphs_is_launch(const char *name);

/* A driver (or runtime) API callback id that CUPTI names `name`, whose
 * API records are enabled: graph launches among them get GRAPH_LAUNCH
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
