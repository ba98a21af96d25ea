/*
 * dt-cupti.h - GPU activity through CUPTI: kernels, copies and sets, with
 * each kernel tied to the cuDNN call that launched it.
 *
 * Public header of cupti/. CUPTI is loaded at run time (never linked): the
 * copy the process already has (PyTorch's) when there is one. Records are
 * handed to a sink as dnntrace records (trace/include/dt-records.h); this component
 * knows nothing of files or of cuDNN.
 */
#ifndef DT_CUPTI_H
#define DT_CUPTI_H

#include <stdint.h>

struct dt_cupti_sink {
	/* Store one record (header filled in, size a multiple of 8). Called
	 * from CUPTI's threads and from the flusher; may wait a little for
	 * room, never for long. Returns 0 when the record was dropped. */
	int (*emit)(const void *rec, uint32_t size);
};

/*
 * Start recording GPU activity, once per process (later calls return the
 * first result). flush_ms bounds how long finished activity waits in
 * CUPTI's buffers. Returns 1 when recording; 0 when not, with the reason
 * in dt_cupti_state(). Never fails the application.
 */
int dt_cupti_start(const struct dt_cupti_sink *sink, unsigned flush_ms);

/* One line saying whether GPU activity is recorded, and with what or why
 * not ("on: CUPTI 13.0.1 from /path", "off: no CUPTI library found"). */
const char *dt_cupti_state(void);

/* Nonzero while launches can be tied to calls: callers then bracket calls
 * that launch work with dt_cupti_push/pop. */
extern volatile int dt_cupti_tagging;

/* Tag work launched by this thread from now on with id / stop tagging.
 * About 0.2 us for the pair. */
void dt_cupti_push(uint64_t id);
void dt_cupti_pop(void);

/* Hand every finished record to the sink (forced: also unfinished ones,
 * which then carry no times). Also writes a clock calibration record. */
void dt_cupti_flush(int forced);

/* dt_cupti_flush(1) for a signal handler: the flusher thread does it
 * (CUPTI may not be called from a handler); waits at most timeout_ms.
 * Returns 0 when done. Recording stops with it. */
int dt_cupti_flush_async(unsigned timeout_ms);

/* Stop the flusher and flush everything, before the process exits. */
void dt_cupti_stop(void);

/* After fork(), in the child: CUPTI does not follow a fork; forget it. */
void dt_cupti_forget(void);

#endif /* DT_CUPTI_H */
