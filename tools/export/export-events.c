/*
 * export-events.c - `dnntrace export --format chrome`: traces as Chrome
 * Trace Event JSON, the format ui.perfetto.dev, chrome://tracing and
 * PyTorch's tools (Kineto, HTA) open. It streams: each event of the
 * session is written as it comes, so memory does not grow with a trace.
 *
 * It encodes the timeline export-timeline.c lays out (analyzer/EXPORT.md),
 * which decides what goes where: a process per trace; its host threads with
 * the cuDNN calls as slices; a track per GPU stream with kernels, copies
 * and sets, and one beside it with the cuDNN op executions; a track for
 * CUDA graph launches and one for GPU recording gaps; flow arrows from a
 * call (or a graph launch) to each kernel it launched; the program's NVTX
 * ranges.
 *
 * Categories, argument names and the fields beside traceEvents are
 * Kineto's (PyTorch's profiler), so that what reads its traces (HTA keeps
 * only events with a category) reads these: a call is a "cpu_op" whose
 * "External id" the work it launched carries, kernels "kernel", copies
 * "gpu_memcpy", sets "gpu_memset", ops "gpu_user_annotation", graph
 * launches "cuda_runtime", arrows "ac2g", NVTX ranges "user_annotation"
 * (as PyTorch's profiler writes its record_function ranges).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-analyzer.h"
#include "dt-config.h"
#include "dt-records.h"
#include "export-timeline.h"
#include "export.h"
#include "tools.h"

/* The last calls, by seq (dense from 1): where a flow to a kernel
 * starts. A kernel whose call fell out of it gets no arrow (counted). */
#define CALL_RING 65536
struct call_slot {
	uint64_t seq;
	uint64_t t;
	uint32_t tid;
};

/* Graph launches by correlation id. */
#define LAUNCH_RING 4096
struct launch_slot {
	uint32_t corr;
	uint64_t t;
};

/* Kernels read before what launched them (a graph launch's record comes
 * after its kernels; a thread's calls can reach the file after the GPU
 * records of their kernels): their arrows wait for it. */
#define PENDING_MAX 8192
struct pending_flow {
	uint64_t key; /* the call's seq, or the graph launch's correlation
			 id */
	bool graph;
	uint32_t tid;
	uint64_t t;
};

/* Tracks named so far (their thread_name metadata written). */
#define TRACKS_MAX 4096

struct tev {
	struct dt_json j;
	const struct dt_export_trace *t;
	uint32_t pid; /* as exported: unique within the file */
	uint64_t events, flows;
	uint64_t flow_id;
	uint64_t no_flow; /* kernels whose launch is not known: their call
			     left the ring, or their graph launch was not
			     recorded */
	struct call_slot *calls;
	struct launch_slot *launches;
	struct pending_flow *pending;
	size_t n_pending;
	uint64_t last_seq; /* the highest call seq read */
	uint32_t tracks[TRACKS_MAX];
	size_t n_tracks;
	bool tracks_full;
	/* the GPUs, for Kineto's deviceProperties */
	struct dt_device devices[16];
	size_t n_devices;
};

/* ts in microseconds with nanosecond digits: Perfetto and Kineto read
 * "%.3f"; a double would round times of long runs. */
static void put_ts(struct tev *x, const char *key, uint64_t mono)
{
	uint64_t ns = dt_export_ns(x->t, mono);

	dt_json_key(&x->j, key);
	dt_json_milli(&x->j, ns);
}

static void put_dur(struct tev *x, uint64_t begin, uint64_t end)
{
	uint64_t ns = end > begin ? end - begin : 0;

	dt_json_key(&x->j, "dur");
	dt_json_milli(&x->j, ns);
}


/* Kineto's categories (libkineto's ActivityType names), and dnntrace's
 * own marks: "Trace", which HTA leaves out as it does Kineto's span of
 * the profiler itself. */
#define CAT_CALL "cpu_op"
#define CAT_KERNEL "kernel"
#define CAT_MEMCPY "gpu_memcpy"
#define CAT_MEMSET "gpu_memset"
#define CAT_OP "gpu_user_annotation"
#define CAT_LAUNCH "cuda_runtime"
#define CAT_FLOW "ac2g"
#define CAT_MARK "Trace"
#define CAT_COUNTER "gpu_metrics"

/* Start an event: {"ph": ph, "cat": cat, "pid": .., "tid": .., "ts": .. */
static void event_open(struct tev *x, const char *ph, const char *cat,
		       uint32_t tid, uint64_t t)
{
	dt_json_open(&x->j, '{', -1);
	dt_json_key(&x->j, "ph");
	dt_json_str(&x->j, ph);
	dt_json_ks(&x->j, "cat", cat);
	dt_json_key(&x->j, "pid");
	dt_json_u64(&x->j, x->pid);
	dt_json_key(&x->j, "tid");
	dt_json_u64(&x->j, tid);
	put_ts(x, "ts", t);
	x->events++;
}


/* A metadata event naming the process or a thread, and its place. */
static void meta(struct tev *x, const char *what, uint32_t tid,
		 const char *name, int64_t sort)
{
	char sort_key[32];

	snprintf(sort_key, sizeof(sort_key), "%.*s_sort_index",
		 (int)(strchr(what, '_') - what), what);
	for (int k = 0; k < 2; k++) {
		dt_json_open(&x->j, '{', -1);
		dt_json_ks(&x->j, "ph", "M");
		dt_json_ks(&x->j, "name", k ? sort_key : what);
		dt_json_ku(&x->j, "pid", x->pid);
		dt_json_ku(&x->j, "tid", tid);
		dt_json_key(&x->j, "args");
		dt_json_open(&x->j, '{', -1);
		if (k) {
			dt_json_ki(&x->j, "sort_index", sort);
		} else {
			dt_json_ks(&x->j, "name", name);
		}
		dt_json_close(&x->j, -1);
		dt_json_close(&x->j, -1);
	}
}

/* Name a track the first time it is used. */
static void track(struct tev *x, uint32_t tid, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void track(struct tev *x, uint32_t tid, const char *fmt, ...)
{
	char name[128];
	va_list ap;

	for (size_t i = 0; i < x->n_tracks; i++)
		if (x->tracks[i] == tid)
			return;
	if (x->n_tracks == TRACKS_MAX) {
		x->tracks_full = true; /* unnamed, but there */
		return;
	}
	x->tracks[x->n_tracks++] = tid;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	meta(x, "thread_name", tid, name, tid);
}

/* -------------------------------------------------------------- events */

static void flow_pending(struct tev *x, uint64_t key, bool graph, uint32_t tid,
			 uint64_t t);

static void on_call(void *arg, const struct dt_call *c, bool shown)
{
	struct tev *x = arg;
	char val[4096];

	x->calls[c->seq % CALL_RING] =
		(struct call_slot){ c->seq, c->t_begin, c->tid };
	if (c->seq > x->last_seq)
		x->last_seq = c->seq;
	if (x->n_pending)
		flow_pending(x, c->seq, false, c->tid, c->t_begin);
	if (!shown)
		return;
	track(x, c->tid, "thread %u", c->tid);
	event_open(x, "X", CAT_CALL, c->tid, c->t_begin);
	put_dur(x, c->t_begin, c->t_end);
	dt_json_ks(&x->j, "name", c->name ? c->name : "(unknown function)");
	dt_json_key(&x->j, "args");
	dt_json_open(&x->j, '{', -1);
	dt_json_ku(&x->j, "seq", c->seq);
	dt_json_ku(&x->j, "External id", c->seq);
	char st[64];
	if (c->status) /* CUDNN_STATUS_SUCCESS is 0 */
		dt_json_ks(&x->j, "status",
			   dt_library_status(c->library, c->status, st,
					     sizeof(st)));
	if (c->library && strcmp(c->library, "cudnn")) /* cuDNN's: unsaid */
		dt_json_ks(&x->j, "library", c->library);
	if (c->flags & DT_CALL_NESTED)
		dt_json_key(&x->j, "nested"), dt_json_bool(&x->j, true);
	if (c->flags & DT_CALL_BY_DNNTRACE)
		dt_json_key(&x->j, "by dnntrace"), dt_json_bool(&x->j, true);
	if (c->argc < 0)
		dt_json_ks(&x->j, "arguments", "(do not match the signature)");
	for (int i = 0; i < c->argc; i++) {
		const struct dt_arg *a = &c->argv[i];
		dt_arg_value_format(c->name, c->argv, c->argc, i, val,
				    sizeof(val));
		dt_json_keyn(&x->j, a->name, a->name_len);
		dt_json_str(&x->j, val);
	}
	dt_json_close(&x->j, -1);
	dt_json_close(&x->j, -1);
}

/* A flow from (tid, t) to the GPU slice being written next. */
static void flow(struct tev *x, uint32_t tid, uint64_t t, uint32_t to_tid,
		 uint64_t to_t)
{
	uint64_t id = ++x->flow_id;

	event_open(x, "s", CAT_FLOW, tid, t);
	dt_json_ks(&x->j, "name", CAT_FLOW);
	dt_json_ku(&x->j, "id", id);
	dt_json_close(&x->j, -1);
	event_open(x, "f", CAT_FLOW, to_tid, to_t);
	dt_json_ks(&x->j, "name", CAT_FLOW);
	dt_json_ku(&x->j, "id", id);
	dt_json_ks(&x->j, "bp", "e");
	dt_json_close(&x->j, -1);
	x->flows++;
}

/* An arrow to (tid, t) from what launched it once that is read. */
static void flow_later(struct tev *x, uint64_t key, bool graph, uint32_t tid,
		       uint64_t t)
{
	if (x->n_pending < PENDING_MAX)
		x->pending[x->n_pending++] =
			(struct pending_flow){ key, graph, tid, t };
	else
		x->no_flow++;
}

/* The arrows waiting for a launch just read, from (tid, t). */
static void flow_pending(struct tev *x, uint64_t key, bool graph, uint32_t tid,
			 uint64_t t)
{
	size_t kept = 0;

	for (size_t i = 0; i < x->n_pending; i++) {
		const struct pending_flow *p = &x->pending[i];
		if (p->key == key && p->graph == graph)
			flow(x, tid, t, p->tid, p->t);
		else
			x->pending[kept++] = *p;
	}
	x->n_pending = kept;
}

static void flow_from_call(struct tev *x, uint64_t seq, uint32_t tid,
			   uint64_t t)
{
	const struct call_slot *c = &x->calls[seq % CALL_RING];

	if (c->seq == seq)
		flow(x, c->tid, c->t, tid, t);
	else if (seq > x->last_seq)
		flow_later(x, seq, false, tid, t);
	else
		x->no_flow++;
}

static void flow_from_launch(struct tev *x, uint32_t corr, uint32_t tid,
			     uint64_t t)
{
	const struct launch_slot *l = &x->launches[corr % LAUNCH_RING];

	if (l->corr == corr)
		flow(x, DT_TL_LAUNCHES, l->t, tid, t);
	else
		flow_later(x, corr, true, tid, t);
}

/* "key": [x, y, z], as Kineto writes grid and block */
static void put_dim3(struct tev *x, const char *key, int32_t dx, int32_t dy,
		     int32_t dz)
{
	dt_json_key(&x->j, key);
	dt_json_open(&x->j, '[', -1);
	dt_json_i64(&x->j, dx);
	dt_json_i64(&x->j, dy);
	dt_json_i64(&x->j, dz);
	dt_json_close(&x->j, -1);
}

static void kernel_args(struct tev *x, const struct dt_activity *a)
{
	const struct dt_rec_kernel *k = a->kernel;

	if (a->kc) {
		dt_json_key(&x->j, "kernel");
		dt_json_strn(&x->j, a->kc->name, a->kc->len);
		/* a kernel a call launched is its library's, whatever its
		 * name */
		dt_json_ks(&x->j, "library",
			   dt_lib_key(a->call ? dt_lib_of_library(a->library)
					      : a->kc->lib));
		dt_json_ks(&x->j, "family", dt_opfam_key(a->kc->opfam));
	}
	if (!k)
		return;
	put_dim3(x, "grid", k->grid_x, k->grid_y, k->grid_z);
	put_dim3(x, "block", k->block_x, k->block_y, k->block_z);
	dt_json_ku(&x->j, "registers per thread", k->registers);
	dt_json_ku(&x->j, "shared memory", (uint64_t)k->static_smem +
					    (uint64_t)k->dynamic_smem);
	if (k->graph_id)
		dt_json_ku(&x->j, "graph", k->graph_id);
}

static void on_activity(void *arg, const struct dt_activity *a, uint32_t tid)
{
	struct tev *x = arg;
	static const char *const cats[] = { [DT_ACT_KERNEL] = CAT_KERNEL,
					    [DT_ACT_MEMCPY] = CAT_MEMCPY,
					    [DT_ACT_MEMSET] = CAT_MEMSET };
	char name[256];

	track(x, tid, "GPU %u stream %u", a->device, a->stream);
	/* the arrow first: its end binds to the slice that follows */
	if (a->kernel && a->kernel->graph_id)
		flow_from_launch(x, a->corr, tid, a->start);
	else if (a->call)
		flow_from_call(x, a->call, tid, a->start);
	event_open(x, "X", cats[a->kind], tid, a->start);
	put_dur(x, a->start, a->end);
	switch (a->kind) {
	case DT_ACT_KERNEL: {
		size_t n = 0;
		const char *f = a->kc ? dt_kernel_function(a->kc->name,
							   a->kc->len, &n)
				      : "kernel";
		if (!a->kc)
			n = strlen(f);
		snprintf(name, sizeof(name), "%.*s", (int)n, f);
		break;
	}
	case DT_ACT_MEMCPY:
		snprintf(name, sizeof(name), "%s",
			 dt_export_copy_name(a->copy_kind));
		break;
	case DT_ACT_MEMSET:
		snprintf(name, sizeof(name), "Memset");
		break;
	}
	dt_json_ks(&x->j, "name", name);
	dt_json_key(&x->j, "args");
	dt_json_open(&x->j, '{', -1);
	dt_json_ku(&x->j, "device", a->device);
	dt_json_ku(&x->j, "context", a->context);
	dt_json_ku(&x->j, "stream", a->stream);
	dt_json_ku(&x->j, "correlation", a->corr);
	if (a->call) {
		dt_json_ku(&x->j, "External id", a->call);
		dt_json_ku(&x->j, dt_export_call_key(a->library), a->call);
	}
	if (a->kind == DT_ACT_KERNEL) {
		kernel_args(x, a);
	} else {
		dt_json_ku(&x->j, "bytes", a->bytes);
		if (a->end > a->start) {
			dt_json_kg(&x->j, "memory bandwidth (GB/s)", (double)a->bytes /
						 (double)(a->end - a->start));
		}
	}
	dt_json_close(&x->j, -1);
	dt_json_close(&x->j, -1);
}

static void on_op(void *arg, const struct dt_op *op, uint32_t tid)
{
	struct tev *x = arg;
	char buf[64];

	track(x, tid, "GPU %d stream %u: %s ops", op->device, op->gpu_stream,
	      dt_export_callers(x->t));
	event_open(x, "X", CAT_OP, tid, op->gpu_start);
	put_dur(x, op->gpu_start, op->gpu_end);
	dt_json_ks(&x->j, "name", dt_op_kind_name(op->cost.kind));
	dt_json_key(&x->j, "args");
	dt_json_open(&x->j, '{', -1);
	dt_json_ks(&x->j, "kind", dt_op_kind_key(op->cost.kind));
	dt_json_ku(&x->j, "External id", op->seq);
	dt_json_ku(&x->j, dt_export_call_key(op->library), op->seq);
	dt_json_ks(&x->j, "function", op->api);
	dt_json_ks(&x->j, "origin", op->origin == DT_OP_REPLAY ? "CUDA graph replay"
						       : "call");
	dt_json_ks(&x->j, "problem", op->brief ? op->brief : op->desc);
	if (op->plan) {
		dt_json_ku(&x->j, "plan", op->plan);
		snprintf(buf, sizeof(buf), "eng%" PRId64, op->engine);
	} else {
		snprintf(buf, sizeof(buf), "algo%" PRId64, op->engine);
	}
	dt_json_ks(&x->j, "engine", op->engine >= 0 ? buf : "unknown");
	if (op->knobs)
		dt_json_ks(&x->j, "knobs", op->knobs);
	if (op->workspace >= 0)
		dt_json_ku(&x->j, "workspace bytes", (uint64_t)op->workspace);
	dt_json_ku(&x->j, "kernels", op->kernels);
	dt_json_ku(&x->j, "GPU ns", op->gpu_ns);
	if (op->cost.flops > 0) {
		dt_json_kn(&x->j, "FLOP", op->cost.flops);
	}
	if (op->cost.bytes)
		dt_json_ku(&x->j, "bytes", op->cost.bytes);
	dt_json_close(&x->j, -1);
	dt_json_close(&x->j, -1);
}

static void on_graph_launch(void *arg, const struct dt_graph_launch *l,
			    bool shown)
{
	struct tev *x = arg;

	x->launches[l->corr % LAUNCH_RING] =
		(struct launch_slot){ l->corr, l->start };
	if (x->n_pending)
		flow_pending(x, l->corr, true, DT_TL_LAUNCHES, l->start);
	if (!shown)
		return;
	track(x, DT_TL_LAUNCHES, "CUDA graph launches");
	event_open(x, "X", CAT_LAUNCH, DT_TL_LAUNCHES, l->start);
	put_dur(x, l->start, l->end);
	dt_json_ks(&x->j, "name", "graph launch");
	dt_json_key(&x->j, "args");
	dt_json_open(&x->j, '{', -1);
	dt_json_ku(&x->j, "correlation", l->corr);
	dt_json_ku(&x->j, "CUPTI thread", l->cupti_tid);
	dt_json_close(&x->j, -1);
	dt_json_close(&x->j, -1);
}

/* A GPU's DRAM GB/s: one counter track of them read and written. */
static void on_dram(void *arg, uint64_t t, uint32_t device,
		    const double gbps[2])
{
	struct tev *x = arg;
	char name[48];

	snprintf(name, sizeof(name), "GPU %u DRAM GB/s", device);
	event_open(x, "C", CAT_COUNTER, 0, t);
	dt_json_ks(&x->j, "name", name);
	dt_json_key(&x->j, "args");
	dt_json_open(&x->j, '{', -1);
	dt_json_kg(&x->j, "read", gbps[0]);
	dt_json_kg(&x->j, "write", gbps[1]);
	dt_json_close(&x->j, -1);
	dt_json_close(&x->j, -1);
}

/* An instant on the process's own track, for what went missing. */
static void mark(void *arg, uint64_t t, const char *name, const char *what)
{
	struct tev *x = arg;

	event_open(x, "i", CAT_MARK, 0, t);
	dt_json_ks(&x->j, "s", "p");
	dt_json_ks(&x->j, "name", name);
	dt_json_key(&x->j, "args");
	dt_json_open(&x->j, '{', -1);
	dt_json_ks(&x->j, "what", what);
	dt_json_close(&x->j, -1);
	dt_json_close(&x->j, -1);
}

/* GPU recording off (or taken by another profiler): a slice on a track
 * of its own. */
static void gpu_gap(void *arg, uint64_t from, uint64_t until, const char *why)
{
	struct tev *x = arg;

	track(x, DT_TL_GPU_STATE, "GPU recording");
	event_open(x, "X", CAT_MARK, DT_TL_GPU_STATE, from);
	put_dur(x, from, until);
	dt_json_ks(&x->j, "name", "GPU not recorded");
	dt_json_key(&x->j, "args");
	dt_json_open(&x->j, '{', -1);
	dt_json_ks(&x->j, "why", why);
	dt_json_close(&x->j, -1);
	dt_json_close(&x->j, -1);
}

static void on_device(void *arg, const struct dt_device *d)
{
	struct tev *x = arg;

	/* once per GPU model and id: the ranks of a job see the same */
	for (size_t i = 0; i < x->n_devices; i++)
		if (x->devices[i].id == d->id &&
		    !strcmp(x->devices[i].name, d->name))
			return;
	if (x->n_devices < sizeof(x->devices) / sizeof(x->devices[0]))
		x->devices[x->n_devices++] = *d;
}

static void on_thread(void *arg, uint32_t tid, const char *name,
		      size_t len)
{
	track(arg, tid, "%.*s (%u)", (int)len, name, tid);
}

/* An NVTX range: a push range a slice on its thread, nested with the
 * calls made in it; a start/end range, which may end on another thread,
 * an async slice on the thread that started it; a mark an instant on its
 * thread. */
static void range(void *arg, const struct dt_range *r, size_t i)
{
	struct tev *x = arg;

	track(x, r->tid, "thread %u", r->tid);
	for (int end = 0; end <= (r->kind == DT_RANGE_START); end++) {
		static const char *const ph[] = { "X", "b", "i" };
		event_open(x, end ? "e" : ph[r->kind], "user_annotation",
			   r->tid, end ? r->t_end : r->t_begin);
		if (r->kind == DT_RANGE_PUSH)
			put_dur(x, r->t_begin, r->t_end);
		else if (r->kind == DT_RANGE_START)
			dt_json_ku(&x->j, "id", i + 1);
		else
			dt_json_ks(&x->j, "s", "t");
		dt_json_ks(&x->j, "name", r->name);
		if (r->domain && !end) {
			dt_json_key(&x->j, "args");
			dt_json_open(&x->j, '{', -1);
			dt_json_ks(&x->j, "domain", r->domain);
			dt_json_close(&x->j, -1);
		}
		dt_json_close(&x->j, -1);
	}
}

/* ----------------------------------------------------------- the file */

static void trace_begin(void *arg, const struct dt_export_trace *t,
			uint32_t pid, size_t i)
{
	struct tev *x = arg;
	char name[256];

	(void)i;
	x->t = t;
	x->pid = pid;
	x->n_tracks = 0;
	x->last_seq = 0;
	memset(x->calls, 0, CALL_RING * sizeof(*x->calls));
	memset(x->launches, 0, LAUNCH_RING * sizeof(*x->launches));
	dt_export_process_name(t, name, sizeof(name));
	meta(x, "process_name", 0, name, (int64_t)pid);
}

/* Arrows still waiting for their launch never get it. */
static void trace_end(void *arg)
{
	struct tev *x = arg;

	x->no_flow += x->n_pending;
	x->n_pending = 0;
}

static const struct dt_tl_encoder encoder = {
	.trace_begin = trace_begin,
	.trace_end = trace_end,
	.device = on_device,
	.thread = on_thread,
	.call = on_call,
	.launch = on_graph_launch,
	.gpu = on_activity,
	.op = on_op,
	.dram = on_dram,
	.mark = mark,
	.gap = gpu_gap,
	.range = range,
};

static void device_props(struct tev *x)
{
	dt_json_key_nl(&x->j, "deviceProperties", 0);
	dt_json_open(&x->j, '[', 2);
	for (size_t i = 0; i < x->n_devices; i++) {
		const struct dt_device *d = &x->devices[i];
		dt_json_open(&x->j, '{', -1);
		dt_json_ku(&x->j, "id", d->id);
		dt_json_ks(&x->j, "name", d->name);
		dt_json_ku(&x->j, "totalGlobalMem", d->global_mem);
		dt_json_ku(&x->j, "computeMajor", d->cc_major);
		dt_json_ku(&x->j, "computeMinor", d->cc_minor);
		dt_json_ku(&x->j, "numSms", d->sms);
		dt_json_ku(&x->j, "clockRate", d->clock_khz);
		dt_json_ku(&x->j, "memoryBandwidthKBps", d->mem_bandwidth_kBps);
		dt_json_close(&x->j, -1);
	}
	dt_json_close(&x->j, 0);
}

/* The first of vars the trace's environment set, as a number; -1 when
 * none did. */
static long env_number(const struct dt_export_trace *t,
		       const char *const *vars, size_t n)
{
	const struct dt_file_info *fi = dt_session_info(t->s);
	char key[64], *end;

	for (size_t i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "env.%s", vars[i]);
		const char *v = dt_info_get(fi, key);
		long k = v ? strtol(v, &end, 10) : -1;
		if (v && end != v && !*end && k >= 0)
			return k;
	}
	return -1;
}

/* Kineto's "distributedInfo" (rank, world_size): what HTA reads a trace's
 * rank from. Kineto writes a file per rank; so is it here for an export of
 * one trace of a job. */
static void distributed_info(struct tev *x, const struct dt_export_trace *t,
			     size_t n)
{
	static const char *const sizes[] = { "WORLD_SIZE",
					     "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
					     "SLURM_NTASKS" };
	const char *eq = n == 1 && t->rank ? strchr(t->rank, '=') : NULL;
	char *end;
	long rank = eq ? strtol(eq + 1, &end, 10) : -1;

	if (!eq || end == eq + 1 || *end || rank < 0)
		return;
	dt_json_key_nl(&x->j, "distributedInfo", 0);
	dt_json_open(&x->j, '{', -1);
	dt_json_ku(&x->j, "rank", (uint64_t)rank);
	long size = env_number(t, sizes, sizeof(sizes) / sizeof(sizes[0]));
	if (size > 0)
		dt_json_ku(&x->j, "world_size", (uint64_t)size);
	dt_json_close(&x->j, -1);
}

static void traces_meta(struct tev *x, const struct dt_export_trace *t,
			const struct dt_export_note *notes, const uint32_t *pids,
			size_t n)
{
	dt_json_key_nl(&x->j, "otherData", 0);
	dt_json_open(&x->j, '{', -1);
	dt_json_ks(&x->j, "generator", "dnntrace " DT_VERSION);
	dt_json_key(&x->j, "traces");
	dt_json_open(&x->j, '[', 2);
	for (size_t i = 0; i < n; i++) {
		dt_json_open(&x->j, '{', -1);
		dt_json_ks(&x->j, "path", t[i].path);
		dt_json_ku(&x->j, "pid", t[i].pid);
		dt_json_ku(&x->j, "exported_pid", pids[i]);
		dt_json_ks(&x->j, "rank", t[i].rank);
		dt_json_key(&x->j, "complete");
		dt_json_bool(&x->j, notes[i].complete);
		dt_json_ks(&x->j, "ended", notes[i].ended);
		dt_json_ks(&x->j, "lost", notes[i].lost);
		dt_json_ku(&x->j, "gpu_dropped", notes[i].gpu_dropped);
		dt_json_close(&x->j, -1);
	}
	dt_json_close(&x->j, 0);
	dt_json_ku(&x->j, "events", x->events);
	dt_json_ku(&x->j, "flows", x->flows);
	dt_json_ku(&x->j, "kernels_without_flow", x->no_flow);
	dt_json_close(&x->j, -1);
}

int dt_export_trace_events(const struct dt_export_opts *o)
{
	size_t n;
	struct dt_export_trace *t = dt_export_open(o, &n);
	if (!t)
		return EXIT_USAGE;
	struct dt_output dest;
	FILE *out = dt_open_output(&dest, o->output, o->force);
	struct tev *x = out ? calloc(1, sizeof(*x)) : NULL;
	struct dt_export_note *notes = calloc(n, sizeof(*notes));
	uint32_t *pids = calloc(n, sizeof(*pids));
	int rc = 0;

	if (x) {
		x->calls = calloc(CALL_RING, sizeof(*x->calls));
		x->launches = calloc(LAUNCH_RING, sizeof(*x->launches));
		x->pending = calloc(PENDING_MAX, sizeof(*x->pending));
	}
	if (!out || !x || !notes || !pids || !x->calls ||
	    !x->launches || !x->pending) {
		if (out)
			dt_error("out of memory");
		rc = out ? 1 : EXIT_USAGE;
		goto done;
	}
	dt_json_init(&x->j, out);
	x->j.compact = true;
	dt_json_open(&x->j, '{', -1);
	dt_json_ku(&x->j, "schemaVersion", 1);
	dt_json_ks(&x->j, "displayTimeUnit", "ms");
	dt_json_key_nl(&x->j, "traceEvents", 0);
	dt_json_open(&x->j, '[', 0);
	rc = dt_tl_export(&encoder, x, t, n, pids, notes);
	dt_json_close(&x->j, 0);
	const struct dt_file_header *h = &dt_session_info(t[0].s)->hdr;
	/* offset = start_real - base - start_mono */
	uint64_t base =
		h->start_real - (uint64_t)dt_export_line(&t[0], h->start_mono);
	dt_json_key_nl(&x->j, "baseTimeNanoseconds", 0);
	dt_json_u64(&x->j, base);
	device_props(x);
	distributed_info(x, t, n);
	traces_meta(x, t, notes, pids, n);
	dt_json_close(&x->j, 0);
	fputc('\n', out);
	dt_export_warn(t, notes, n, x->no_flow);
	if (x->tracks_full)
		dt_error("note: more than %d tracks; later ones are unnamed",
			 TRACKS_MAX);
	if (x->events > 1000000)
		dt_error("note: %" PRIu64 " events: chrome://tracing stops "
			 "near a million; ui.perfetto.dev opens more",
			 x->events);
done:
	/* a file cut short by a failed write is no timeline: not left */
	if (out && dt_close_output(&dest, !rc))
		rc = EXIT_USAGE;
	if (x) {
		free(x->calls);
		free(x->launches);
		free(x->pending);
	}
	free(x);
	free(notes);
	free(pids);
	dt_export_close(t, n);
	return rc;
}
