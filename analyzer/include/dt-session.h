/*
 * dt-session.h - the session: one trace opened for analysis, read once, its
 * events handed to every consumer (the views). What views consume. Part of
 * analyzer/'s public interface; dt-analyzer.h includes every part.
 */
#ifndef DT_SESSION_H
#define DT_SESSION_H

#include "dt-ops.h"

/*
 * A session is one trace opened for analysis: its reader, the model that
 * replays its cuDNN calls, and the conversion of GPU times to the host's
 * clock. dt_session_run() reads the trace once and hands every consumer
 * the same structured events: calls, GPU activity, devices, GPU-state
 * changes and other records in file order, and op executions (with their
 * tensors, engine and kernels) in call order once their kernels are in.
 * The model is the only code that reads records; every view (report,
 * fusion, diff, ops, info, dump) is a consumer. analyzer/README.md says
 * more.
 */

/* One call into a recorded library. */
struct dt_call {
	uint64_t seq; /* process-wide call order, from 1 */
	uint32_t tid;
	uint16_t api;     /* its id in the trace's API table */
	uint16_t flags;   /* DT_CALL_* */
	const char *name; /* the function, NULL when the table lacks it */
	const char *library; /* its library ("cudnn"), NULL likewise */
	const char *sig;  /* its argument signature (trace/FORMAT.md) */
	uint64_t t_begin, t_end; /* host, CLOCK_MONOTONIC ns */
	int32_t status;          /* cudnnStatus_t returned */
	const uint8_t *args;     /* the argument bytes (dt_call_format()) */
	uint32_t args_len;
	const struct dt_arg *argv;    /* the same decoded (dt_args_format()), */
	int argc;                     /* argc of them; -1 when they do not
					 match the signature */
	const struct dt_rec_hdr *rec; /* the record */
};

enum dt_activity_kind { DT_ACT_KERNEL, DT_ACT_MEMCPY, DT_ACT_MEMSET };

/* GPU work: a kernel, a copy or a set. */
struct dt_activity {
	enum dt_activity_kind kind;
	bool timed; /* CUPTI gave it times (start and end are 0 if not) */
	uint64_t start, end;         /* host clock (CLOCK_MONOTONIC ns) */
	uint64_t gpu_start, gpu_end; /* as recorded, on CUPTI's clock */
	uint64_t call; /* the recorded call that launched it (its seq), 0
			  for work launched outside the calls; a kernel
			  replayed from a CUDA graph: the call that made its
			  node */
	const char *library; /* that call's library ("cudnn"); NULL when
				call is 0, or when the call's record is not
				read yet in a trace of several libraries */
	uint64_t exec; /* the op execution it belongs to (dt_op.exec), 0 for
			  none */
	/* timed work: the time the steady state's cut places it by, host
	 * clock: its op execution's first kernel's start (else its call's),
	 * so that an op's kernels are on its side; outside the calls, its
	 * own start. Every view that cuts places it by this. */
	uint64_t placed;
	uint32_t corr; /* CUPTI's correlation id of the launch */
	uint32_t device, context, stream;
	uint64_t bytes; /* copies and sets */
	uint8_t copy_kind; /* copies: CUPTI's direction (dt_copy_kind_name) */
	/* kernels: what the name says (NULL only when memory is short),
	 * and the record, for the launch shape */
	const struct dt_kernel_class *kc;
	const struct dt_rec_kernel *kernel;
	const struct dt_rec_hdr *rec; /* the record */
};

/* A copy's direction (CUPTI's CUpti_ActivityMemcpyKind, as MEMCPY records
 * carry it): "HtoD", "DtoH", "DtoD", "PtoP", ...; NULL for a value CUPTI
 * does not name (0 is its "unknown"). */
const char *dt_copy_kind_name(uint32_t kind);

/* A GPU as CUPTI described it. */
struct dt_device {
	uint32_t id;
	char name[96];
	uint32_t cc_major, cc_minor;
	uint32_t sms;
	uint32_t clock_khz;
	uint64_t mem_bandwidth_kBps;
	uint64_t global_mem;
	uint32_t l2_size;
	const struct dt_rec_hdr *rec; /* the record */
};

/* GPU recording switched on, off, taken by another profiler, resumed. */
struct dt_gpu_change {
	uint64_t t;       /* host, CLOCK_MONOTONIC ns */
	uint32_t state;   /* DT_GPU_* */
	bool recording;   /* GPU activity is recorded from here on: on,
			     resumed, or a sampling window opened */
	int32_t code;     /* CUptiResult or errno behind it */
	uint64_t dropped; /* records CUPTI dropped so far */
	const char *why;  /* in words, why_len bytes */
	uint32_t why_len;
	const struct dt_rec_hdr *rec; /* the record */
};

/* A host thread, named (the shim's THREAD record). */
struct dt_thread {
	uint64_t t;       /* when it was first seen, CLOCK_MONOTONIC ns */
	uint32_t tid;
	uint32_t name_len;
	const char *name; /* name_len bytes, not terminated */
	const struct dt_rec_hdr *rec; /* the record */
};

/* Records a thread (or CUPTI) dropped since its last loss (a LOSS
 * record). */
struct dt_loss {
	uint64_t t;       /* host, CLOCK_MONOTONIC ns */
	uint64_t count;
	uint32_t tid;
	uint32_t reason;  /* DT_LOSS_* */
	const struct dt_rec_hdr *rec; /* the record */
};

/* A CUDA graph launched (recorded with CUPTI's launch API records): its
 * kernels carry its correlation id. */
struct dt_graph_launch {
	uint64_t start, end; /* host clock (CLOCK_MONOTONIC ns) */
	uint32_t corr;       /* CUPTI's correlation id */
	uint32_t cupti_tid;  /* CUPTI's id of the launching thread (not the
				system's thread id calls carry) */
	const struct dt_rec_hdr *rec; /* the record */
};

/* One sample of the GPU's counters (record --gpu-metrics): device-wide,
 * over [start, end). */
struct dt_gpu_sample {
	uint64_t start, end; /* host clock (CLOCK_MONOTONIC ns) */
	uint32_t device;
	uint32_t n;               /* values, as many as names */
	const double *v;          /* valid during the call */
	const char *const *names; /* "dram__bytes_read.sum", ...: live as
				     long as the session */
	const struct dt_rec_hdr *rec; /* the record */
};

/* What the GPU's counters are sampled for (record --gpu-metrics), or why
 * they are not; or, at the end, what sampling lost. */
struct dt_gpu_metrics {
	uint32_t device;
	uint32_t interval_ns;
	uint32_t n;               /* metrics sampled: 0 when off (or lost) */
	const char *const *names; /* n of them, living as long as the session */
	const char *text;         /* "off: why" or "lost: ..." when n is 0 */
	uint32_t text_len;
	const struct dt_rec_hdr *rec; /* the record */
};

/* Index of metric `name` in a sample, or -1. */
int dt_gpu_sample_metric(const struct dt_gpu_sample *s, const char *name);

/* What a view is called with. Any callback may be NULL; arg is passed
 * back. Pointers in an event are valid during the call only, but for the
 * strings and tensors of an op, its kernel class and the device, which
 * live as long as the session. */
struct dt_consumer {
	void *arg;
	void (*call)(void *arg, const struct dt_call *c);
	void (*activity)(void *arg, const struct dt_activity *a);
	void (*device)(void *arg, const struct dt_device *d);
	void (*gpu_state)(void *arg, const struct dt_gpu_change *g);
	/* a thread named; records lost */
	void (*thread)(void *arg, const struct dt_thread *t);
	void (*loss)(void *arg, const struct dt_loss *l);
	/* every other record (threads and losses too, processes, clocks,
	 * correlations, strings, the end summary, unknown types), as it is */
	void (*record)(void *arg, const struct dt_rec_hdr *rec);
	/* an op execution, once its kernels are in, in call order */
	void (*op)(void *arg, const struct dt_op *op);
	/* an execution plan built */
	void (*plan)(void *arg, const struct dt_plan_build *b);
	/* a CUDA graph launched */
	void (*graph_launch)(void *arg, const struct dt_graph_launch *l);
	/* what the GPU's counters are sampled for, and each sample */
	void (*gpu_metrics)(void *arg, const struct dt_gpu_metrics *g);
	void (*gpu_sample)(void *arg, const struct dt_gpu_sample *s);
};

/* CUDA graphs in a trace (or in several, summed). */
struct dt_graph_stats {
	uint64_t kernels;    /* kernels launched by CUDA graphs */
	uint64_t attributed; /* of which traced to the cuDNN call that made
				their node */
	uint64_t unknown;    /* of which from executable graphs whose origin
				the trace does not hold, while cuDNN calls did
				make graph nodes: cuDNN's among them are
				unattributed */
	uint64_t mismatch;   /* traced to a node whose kernel had another
				name: left unattributed */
	uint64_t unresolved; /* ran in a child graph whose nodes the trace
				does not tie to calls (copied before the
				trace saw them): cuDNN's among them are
				unattributed */
	uint64_t captured;   /* calls that put work into graphs */
	uint64_t replays;    /* op executions replayed from graphs */
	uint64_t partial;    /* of which some kernels never came */
	uint64_t launches;   /* graph launches (GRAPH_LAUNCH) */
	uint64_t launched;   /* graph launches their kernels show (distinct
				correlation ids), when launches were not
				recorded */
	uint64_t launch_ns;  /* their host time */
	uint64_t nodes;      /* GRAPH_NODE records */
};

/* sum += g */
void dt_graph_stats_add(struct dt_graph_stats *sum,
			const struct dt_graph_stats *g);

/* What the model made of a trace, beside its events. */
/* Execution plans: built from an engine config, or restored from their
 * JSON representation (a program's plan cache). */
struct dt_plan_stats {
	uint64_t built;        /* finalized from an engine config */
	uint64_t restored;     /* restored, their graph read from the JSON */
	uint64_t opaque;       /* restored, but the JSON gave no graph (cut
				  short, another schema version,
				  unreadable): their executions say why */
	uint64_t unknown_runs; /* executions of plans whose graph the trace
				  does not hold (opaque ones' too) */
};

/* Sampled GPU recording (record --gpu-sample): one window of window_ms
 * in one_in (0: not sampled), the windows seen, the host time they
 * covered, and the op executions that ran outside them. */
struct dt_gpu_sampling {
	uint32_t one_in, window_ms;
	uint64_t windows, window_ns, unsampled_ops;
};

struct dt_model_stats {
	uint64_t calls;           /* API calls, dnntrace's own too */
	uint64_t own_calls;       /* of which dnntrace's own (its plan
				     queries, DT_CALL_BY_DNNTRACE) */
	uint64_t ops;             /* op executions */
	uint64_t undecoded;       /* calls whose arguments did not decode */
	uint64_t kernels;         /* kernel records (untimed ones too) */
	uint64_t untimed;         /* kernels CUPTI could not time */
	uint64_t copies;          /* copies and sets */
	uint64_t launches;        /* CUDA calls tied to cuDNN calls (CORR) */
	uint64_t threads;         /* threads seen (THREAD records) */
	uint64_t other_kernels;   /* kernels launched outside any cuDNN call */
	uint64_t late_kernels;    /* kernels that came after their op was out */
	uint64_t t_first, t_last; /* first and last host time seen (calls,
				     GPU work on the host clock) */
	struct dt_graph_stats graphs;
	struct dt_plan_stats plans;
	/* records lost by why (DT_LOSS_*), from the LOSS records read: what
	 * the file ended with (dt_file_stats.lost) is the total */
	uint64_t lost_by[DT_LOSS_CUPTI + 1];
	/* the GPU recording state once it was known: the header's "gpu",
	 * or the first GPU_STATE record's words when the header's said
	 * "unknown" (the file was opened before CUPTI was started) */
	char gpu_state[512];
	/* the GPU's counters sampled (record --gpu-metrics): "" not asked,
	 * "on: <metrics> every <interval>", or "off: why"; and what the
	 * sampling lost ("" nothing) */
	char gpu_metrics[256];
	char gpu_metrics_lost[160];
	uint64_t gpu_samples;
	uint64_t kernel_registrations; /* kernels libraries registered with
					  the CUDA runtime (KERNEL_LIB) */
	struct dt_gpu_sampling sampling;
};

/* The program's NVTX ranges and marks (trace/FORMAT.md, "NVTX ranges"). */
enum dt_range_kind {
	DT_RANGE_PUSH,  /* push/pop: a range of one thread, nested */
	DT_RANGE_START, /* start/end: may end on another thread */
	DT_RANGE_MARK,  /* an instant */
};

/* One range, once closed, or a mark. */
struct dt_range {
	enum dt_range_kind kind;
	const char *name;   /* its message ("(string N, not in the trace)"
			       when the trace lacks it) */
	const char *domain; /* its domain's name; NULL: the default domain */
	uint32_t category;  /* the program's number, 0 for none */
	uint32_t tid;       /* the thread that opened it */
	uint32_t end_tid;   /* the thread that closed it */
	uint32_t depth;     /* PUSH, MARK: ranges open around it on its
			       thread; START: 0 */
	uint64_t t_begin, t_end; /* host, CLOCK_MONOTONIC ns; equal for a
				    mark */
};

/* Ranges of one name and domain, and the work done inside them: by calls
 * made inside an instance (a push range's on its thread, a start/end
 * range's on any thread), and the GPU work tied to those calls (kernels,
 * copies and sets they launched; not a CUDA graph's later replays of
 * it). Work launched outside the recorded library calls is not tied to
 * calls, nor to ranges. A call inside nested instances of one name counts
 * once for it. */
struct dt_range_stat {
	const char *name, *domain;
	uint64_t count;   /* instances closed */
	uint64_t open;    /* instances the trace never closed */
	uint64_t host_ns; /* the closed instances' durations, summed */
	uint64_t calls;
	uint64_t kernels; /* GPU work of those calls */
	uint64_t gpu_ns;  /* its durations, summed */
};

struct dt_session_opts {
	/* ops carry their device pointers (ptrs, workspace_ptr): what an
	 * analysis of the dataflow, or the op listing, needs */
	bool pointers;
	/* hand consumers only the work inside NVTX ranges whose name matches
	 * this shell pattern (fnmatch; a plain name matches every range of
	 * that name): the calls made inside them, their ops and the GPU
	 * work tied to those calls. Other records are handed out whole.
	 * NULL: everything. */
	const char *range;
	/* called now and then while reading: bytes read, and in all */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

struct dt_session;

/* Open the trace at path (or in memory: not copied, keep it alive) and
 * read its header. NULL on failure, with a dt_read_error in *code (when
 * code is not NULL) and a sentence naming the file in err. */
struct dt_session *dt_session_open(const char *path,
				   const struct dt_session_opts *opts,
				   int *code, char *err, size_t errlen);
struct dt_session *dt_session_open_mem(const void *data, size_t size,
				       const struct dt_session_opts *opts,
				       int *code, char *err, size_t errlen);

/* Add a consumer (copied); at most 8. Returns 0, -1 when full. */
int dt_session_add(struct dt_session *s, const struct dt_consumer *c);

/* Read the trace through, handing out events. Once. */
void dt_session_run(struct dt_session *s);

/* Who wrote the trace: the header's identity facts and API table. */
const struct dt_file_info *dt_session_info(const struct dt_session *s);

/* How the file ended, what was read and lost: complete after run. */
const struct dt_file_stats *dt_session_file(const struct dt_session *s);

/* What the model counted: complete after run. */
const struct dt_model_stats *dt_session_stats(const struct dt_session *s);

/* The damaged ranges the reader skipped, in file order (*n of them; the
 * first 64, dt_session_file()'s skips counts them all). */
const struct dt_skip *dt_session_skips(const struct dt_session *s, size_t *n);

/* The path it was opened with ("(memory)" for a buffer). */
const char *dt_session_path(const struct dt_session *s);

/* After run: the NVTX ranges and marks, in the order they closed; and the
 * ranges by name and domain, most GPU time first. Owned by the session. */
const struct dt_range *dt_session_ranges(const struct dt_session *s, size_t *n);
const struct dt_range_stat *dt_session_range_stats(const struct dt_session *s,
						   size_t *n);

/* Close; the events' strings go with it. */
void dt_session_close(struct dt_session *s);

/* "RANK=3": the first rank variable (RANK, OMPI_COMM_WORLD_RANK, ...) the
 * process had, malloc'ed; NULL when none. */
char *dt_rank_of(const struct dt_file_info *fi);

/* How a file ended, as a phrase ("clean", "truncated", ...), and as a
 * key for JSON ("clean", "no_end", "truncated", "corrupt", "damaged"). */
const char *dt_file_end_name(enum dt_file_end end);
const char *dt_file_end_key(enum dt_file_end end);

/* Whether a trace holds everything its process did: read to its end with
 * nothing skipped or cut short, and no record lost by the writer or
 * dropped by CUPTI. What every view calls complete, and what a CI gate
 * asks of its inputs before it judges them. */
bool dt_trace_complete(const struct dt_file_stats *st);

/* How a trace ended, in one line: its end, what was skipped or cut and
 * how many records are missing ("clean", "truncated: ..."). Returns
 * buf. */
const char *dt_file_end_text(const struct dt_file_stats *st, char *buf,
			     size_t size);

/* What the writer lost, in words: "0 records", "1234 records (1000 the
 * file could not take them: disk full or size limit; 234 buffers full)",
 * with "at least" when the count is a lower bound (the file has no end
 * summary); verb (" lost", or "") follows the count. ms may be NULL (no
 * reasons then). Returns buf. */
const char *dt_lost_text(const struct dt_file_stats *st,
			 const struct dt_model_stats *ms, const char *verb,
			 char *buf, size_t size);

/* "driver 13.0, runtime 13.0" from a trace's header; the driver is "none
 * loaded" when the process had no CUDA driver. NULL when the header says
 * nothing of CUDA. */
const char *dt_cuda_text(const struct dt_file_info *fi, char *buf,
			 size_t size);

#endif /* DT_SESSION_H */
