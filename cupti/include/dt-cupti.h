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

/*
 * What this component needs from the library it is built into, handed to
 * it by dt_cupti_init() before any other call (from that library's
 * constructor): nothing here names a function defined above it.
 */
struct dt_cupti_host {
	/* dlsym() itself, not one interposed by the host: for the lookups of
	 * CUPTI's and the driver's functions, which must never get the
	 * wrappers below (dt_cupti_driver_wrapper, dt_cupti_client_wrapper).
	 * Until it is given, no such function is found. */
	void *(*dlsym_next)(void *handle, const char *name);
};

void dt_cupti_init(const struct dt_cupti_host *host);

struct dt_cupti_sink {
	/* Store one record (header filled in, size a multiple of 8). Called
	 * from CUPTI's threads and from the flusher; may wait a little for
	 * room, never for long. Returns 0 when the record was dropped. */
	int (*emit)(const void *rec, uint32_t size);
	/* The same from the program's own threads (CUDA graph records made
	 * around its calls): never waits; no room costs a counted loss. */
	int (*emit_now)(const void *rec, uint32_t size);
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

/*
 * Nonzero while launches can be tied to calls, and how. Callers bracket a
 * call that launches work: with DT_TIE_RECORDS by dt_cupti_push/pop (CUPTI's
 * external correlation, carried by its launch records); with
 * DT_TIE_CALLBACK by setting dt_cupti_call to the call's id, and to 0
 * after it (CUPTI's launch callbacks read it). It can change between a
 * call's start and end: each call ends the way it started.
 */
enum dt_tie { DT_TIE_NONE = 0, DT_TIE_RECORDS = 1, DT_TIE_CALLBACK = 2 };
extern volatile int dt_cupti_tagging;
extern __thread uint64_t dt_cupti_call
	__attribute__((tls_model("initial-exec")));

/* Tag work launched by this thread from now on with id / stop tagging.
 * About 0.2 us for the pair. */
void dt_cupti_push(uint64_t id);
void dt_cupti_pop(void);

/*
 * Sampled recording (DNNTRACE_GPU_SAMPLE=N[:MS]): CUPTI collects for one
 * window of MS milliseconds in N and is switched off in between, so that
 * launches outside the windows cost what they cost untraced.
 * dt_cupti_sampled is nonzero then; dt_cupti_window counts the windows'
 * openings and closings (odd: a window is open). A call's launches were
 * all recorded when the count read before it is odd and equal to the
 * count read after it.
 */
extern volatile int dt_cupti_sampled;
extern _Atomic unsigned dt_cupti_window;

/*
 * CUDA graphs: the nodes a call puts into a graph, so that the kernels an
 * executable graph replays can be traced back to it (cupti-graphs.c). A
 * scope is opened before the call and closed after its record is written;
 * closing writes a GRAPH_NODE record per node the call added.
 */
extern volatile int dt_cupti_graphs; /* nonzero while graphs are tracked */

struct dt_graph_scope {
	void *graph; /* the CUgraph; NULL: no scope open */
	uint32_t graph_id;
	uint32_t how; /* DT_GRAPH_CAPTURED, _POPULATED, _UPDATED */
	size_t n;     /* nodes there before the call, sorted */
	void **nodes;
};

/* Before a call that can launch work on stream: 1 (and the scope open)
 * when the stream is being captured into a graph. About 30 ns when not. */
int dt_cupti_graph_begin_stream(struct dt_graph_scope *s, void *stream);

/* Before a call that adds nodes to graph itself (how: DT_GRAPH_POPULATED)
 * or updates its nodes (DT_GRAPH_UPDATED). */
int dt_cupti_graph_begin(struct dt_graph_scope *s, void *graph, uint32_t how);

/* After the call whose seq is call: its nodes, then the scope is closed. */
void dt_cupti_graph_end(struct dt_graph_scope *s, uint64_t call);

/* The wrapper of a CUDA driver function that makes graphs from graphs
 * (or of cuGetProcAddress), for a program that looked `name` up with
 * dlsym() and got `real`, which the wrapper then calls; NULL for every
 * other name. */
void *dt_cupti_driver_wrapper(const char *name, void *real);

/* The shim's wrapper of a CUPTI function by which a program hands CUPTI
 * over to dnntrace or takes it (cuptiSubscribe, cuptiActivityRegister-
 * Callbacks, ...), for a program that looked `name` up with dlsym() and got
 * `real` from the CUPTI the wrappers forward to; NULL for every other name
 * and for another CUPTI. */
void *dt_cupti_client_wrapper(const char *name, void *real);

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
