/*
 * export-perfetto.c - `dnntrace export --format perfetto`: traces as
 * Perfetto's own protobuf trace (TracePacket after TracePacket), which
 * ui.perfetto.dev and trace_processor open. It is the compact timeline:
 * names, argument names and argument values are interned (written once,
 * then referred to by number), so a call repeated a million times costs
 * its times and a few small numbers. `--format chrome` writes the same
 * timeline as Trace Event JSON (export-events.c).
 *
 * It encodes the timeline export-timeline.c lays out (analyzer/EXPORT.md),
 * as the JSON does: a process per trace; its
 * host threads with the cuDNN calls as slices; a track per GPU stream
 * with kernels, copies and sets, one beside it with the cuDNN op
 * executions; tracks for CUDA graph launches, GPU recording gaps and
 * dnntrace's own marks; a counter track of DRAM GB/s read and written per
 * GPU (record --gpu-metrics); flow arrows from a call (or a graph launch)
 * to each kernel it launched; the program's NVTX ranges.
 *
 * Every packet is on one sequence, whose interned data grows as new
 * strings come and is cleared (and written again as needed) when it holds
 * too many, so memory stays bounded. Times are ns after the export's base
 * on the trace's default clock, with a snapshot tying it to the wall
 * clock. The trace processor sorts packets by time, which lets a call's
 * slice be written a little after it was read: once the kernels it
 * launched are known, their arrows start on it.
 *
 * This file is what each event becomes, and the file's beginning and end;
 * the packets and their interned strings are export-perfetto-packets.c's,
 * the tracks and the slices held export-perfetto-tracks.c's.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-config.h"
#include "dt-records.h"
#include "export-perfetto.h"
#include "tools.h"

/* -------------------------------------------------------------- events */

/* A call's arguments as annotations, appended to enc. Pointers and
 * numbers are written as numbers; names, enums and the rest as interned
 * text (as `dnntrace dump` prints them). */
static void call_args(struct pf *x, struct pb *enc, const struct dt_call *c)
{
	char val[4096];

	if (c->argc < 0)
		pf_ann_str(x, enc, "arguments", "(do not match the signature)");
	for (int i = 0; i < c->argc; i++) {
		const struct dt_arg *a = &c->argv[i];
		/* names point into the trace's signatures, enum names into
		 * a table: both interned by their address */
		uint64_t name = pf_intern_sn(x, ID_ANNOTATION_NAMES, a->name,
					  a->name_len);
		size_t at = pb_open(enc, TE_DEBUG_ANNOTATIONS);
		pb_varint(enc, DA_NAME_IID, name);
		switch (a->code) {
		case 'p':
			pb_varint(enc, DA_POINTER, a->u);
			break;
		case 'i':
			pb_varint(enc, DA_INT, (uint64_t)a->i);
			break;
		case 'u':
			pb_varint(enc, DA_UINT, a->u);
			break;
		case 'f':
			pb_double(enc, DA_DOUBLE, a->f);
			break;
		default: {
			struct scalar *k = NULL;
			uint64_t iid;
			if (a->code == 'e' && a->type) {
				uintptr_t h = (uintptr_t)a->type ^
					      (uintptr_t)a->i * 0x9e3779b1u;
				struct enum_entry *en =
					&x->enums[(h ^ h >> 15) % ENUMS];
				if (en->type == a->type && en->value == a->i &&
				    en->clears == x->clears + 1) {
					pb_varint(enc, DA_STRING_IID, en->iid);
					break;
				}
				const char *e = dt_enum_name(a->type,
							     a->type_len, a->i);
				if (e) {
					*en = (struct enum_entry){
						a->type, a->i, x->clears + 1,
						pf_intern_s(x, ID_STRING_VALUES, e)
					};
					pb_varint(enc, DA_STRING_IID, en->iid);
					break;
				}
			}
			if (a->code == 'k' && a->count <= 8) {
				uint64_t bits = 0;
				memcpy(&bits, a->data, a->count);
				k = &x->scalars[(bits ^ bits >> 29 ^ a->count) %
						SCALARS];
				if (k->bits == bits && k->count == a->count &&
				    k->clears == x->clears && k->iid) {
					pb_varint(enc, DA_STRING_IID, k->iid);
					break;
				}
				*k = (struct scalar){ bits, a->count,
						      x->clears, 0 };
			}
			int n = dt_arg_value_format(c->name, c->argv, c->argc,
						    i, val, sizeof(val));
			if (n < 0)
				n = 0;
			if ((size_t)n >= sizeof(val))
				n = sizeof(val) - 1;
			iid = pf_intern(x, ID_STRING_VALUES, val, (size_t)n);
			if (k)
				k->iid = iid;
			pb_varint(enc, DA_STRING_IID, iid);
		}
		}
		pb_close(enc, at);
	}
}

static void on_call(void *arg, const struct dt_call *c, bool shown)
{
	struct pf *x = arg;
	struct held *h = &x->calls[c->seq % CALL_RING];

	pf_maybe_clear(x);
	/* the slots are read back in order, long after they were written:
	 * ask for the next ones early */
	const struct held *next = &x->calls[(c->seq + 4) % CALL_RING];
	__builtin_prefetch(next);
	for (size_t i = 0; i < next->body.len; i += 64)
		__builtin_prefetch(next->body.b + i);
	pf_held_take(x, h, c->seq, c->t_begin, c->t_end);
	if (c->seq > x->last_seq)
		x->last_seq = c->seq;
	if (shown) {
		h->track = pf_track(x, c->tid, c->tid, false, "thread %u", c->tid);
		const char *name = c->name ? c->name : "(unknown function)";
		pf_event_head(x, &h->body, TYPE_SLICE_BEGIN, h->track, name);
		pf_ann_uint(x, &h->body, "seq", c->seq);
		char st[64];
		if (c->status)
			pf_ann_str(x, &h->body, "status",
				   dt_library_status(c->library, c->status, st,
						     sizeof(st)));
		if (c->library && strcmp(c->library, "cudnn")) /* cuDNN's:
								 unsaid */
			pf_ann_str(x, &h->body, "library", c->library);
		if (c->flags & DT_CALL_NESTED)
			pf_ann_bool(x, &h->body, "nested");
		if (c->flags & DT_CALL_BY_DNNTRACE)
			pf_ann_bool(x, &h->body, "by dnntrace");
		call_args(x, &h->body, c);
	}
	if (x->n_pending)
		pf_flow_pending(x, h, false);
}

/* The name and the annotations a kernel of this class and shape always
 * has, from the cache when it had them. */
static const struct kernel_entry *kernel_const(struct pf *x,
					       const struct dt_activity *a)
{
	const struct dt_rec_kernel *k = a->kernel;
	struct kernel_key key;

	/* hashed and compared whole: no padding left unset */
	memset(&key, 0, sizeof(key));
	key.kc = a->kc;
	/* a kernel a call launched is its library's, whatever its name */
	key.lib = a->call ? dt_lib_of_library(a->library)
		  : a->kc ? a->kc->lib
			  : 0;
	char dims[64];

	if (k) {
		key.grid[0] = k->grid_x, key.grid[1] = k->grid_y;
		key.grid[2] = k->grid_z;
		key.block[0] = k->block_x, key.block[1] = k->block_y;
		key.block[2] = k->block_z;
		key.registers = k->registers;
		key.smem = k->static_smem + k->dynamic_smem;
	}
	struct kernel_entry *e =
		&x->kernel_cache[pf_hash_bytes(&key, sizeof(key), 0) %
				 KERNEL_CACHE];
	if (e->used && !memcmp(&e->k, &key, sizeof(key)))
		return e;
	e->used = true;
	e->k = key;
	e->enc.len = 0;
	if (a->kc) {
		size_t n = 0;
		const char *f = dt_kernel_function(a->kc->name, a->kc->len, &n);
		e->name_iid = pf_intern(x, ID_EVENT_NAMES, f, n);
		pf_ann_stri(x, &e->enc, "kernel", 6, a->kc->name, a->kc->len);
		pf_ann_str(x, &e->enc, "library", dt_lib_key(key.lib));
		pf_ann_str(x, &e->enc, "family", dt_opfam_key(a->kc->opfam));
	} else {
		e->name_iid = pf_intern_s(x, ID_EVENT_NAMES, "kernel");
	}
	if (k) {
		snprintf(dims, sizeof(dims), "[%d, %d, %d]", k->grid_x,
			 k->grid_y, k->grid_z);
		pf_ann_str(x, &e->enc, "grid", dims);
		snprintf(dims, sizeof(dims), "[%d, %d, %d]", k->block_x,
			 k->block_y, k->block_z);
		pf_ann_str(x, &e->enc, "block", dims);
		pf_ann_uint(x, &e->enc, "registers per thread", k->registers);
		pf_ann_uint(x, &e->enc, "shared memory", key.smem);
	}
	return e;
}

static void on_activity(void *arg, const struct dt_activity *a, uint32_t key)
{
	struct pf *x = arg;
	struct pb *ev = &x->scratch;
	uint64_t flow = 0;

	pf_maybe_clear(x);
	uint64_t uuid = pf_lane(x, pf_track_of(x, key, "GPU %u stream %u", a->device,
					 a->stream),
			     a->start, a->end);
	if (a->kernel && a->kernel->graph_id)
		flow = pf_flow_to(x, a->corr, true);
	else if (a->call)
		flow = pf_flow_to(x, a->call, false);
	if (a->kind == DT_ACT_KERNEL) {
		const struct kernel_entry *k = kernel_const(x, a);
		ev->len = 0;
		pb_varint(ev, TE_TYPE, TYPE_SLICE_BEGIN);
		pb_varint(ev, TE_TRACK_UUID, uuid);
		pb_varint(ev, TE_NAME_IID, k->name_iid);
		x->events++;
		pf_ann_uint(x, ev, "correlation", a->corr);
		if (a->call)
			pf_ann_uint(x, ev, dt_export_call_key(a->library),
				    a->call);
		if (pb_room(ev, k->enc.len)) {
			memcpy(ev->b + ev->len, k->enc.b, k->enc.len);
			ev->len += k->enc.len;
		}
		if (a->kernel && a->kernel->graph_id)
			pf_ann_uint(x, ev, "graph", a->kernel->graph_id);
	} else {
		pf_event_head(x, ev, TYPE_SLICE_BEGIN, uuid,
			   a->kind == DT_ACT_MEMCPY
				   ? dt_export_copy_name(a->copy_kind)
				   : "Memset");
		pf_ann_uint(x, ev, "correlation", a->corr);
		if (a->call)
			pf_ann_uint(x, ev, dt_export_call_key(a->library),
				    a->call);
		pf_ann_uint(x, ev, "bytes", a->bytes);
		if (a->end > a->start)
			pf_ann_double(x, ev, "memory bandwidth (GB/s)",
				   (double)a->bytes /
					   (double)(a->end - a->start));
	}
	pf_event_write(x, a->start, ev, TE_TERMINATING_FLOW_IDS, &flow,
		    flow ? 1 : 0);
	pf_slice_end(x, uuid, a->end);
}

/* The annotations of an op's function, origin, problem, plan, engine and
 * knobs, from the cache when it had them. */
static const struct pb *op_const(struct pf *x, const struct dt_op *op)
{
	struct op_key k = {
		.problem_id = op->problem_id,
		.engine = op->engine,
		.plan = op->plan,
		.origin = op->origin,
		.api = op->api,
		.brief = op->brief,
		.desc = op->desc,
		.knobs = op->knobs,
	};
	struct op_entry *e =
		&x->op_cache[pf_hash_bytes(&k, sizeof(k), 0) % OP_CACHE];
	char buf[64];

	if (e->clears == x->clears + 1 && !memcmp(&e->k, &k, sizeof(k)))
		return &e->enc;
	e->k = k;
	e->clears = x->clears + 1;
	e->enc.len = 0;
	pf_ann_str(x, &e->enc, "function", op->api ? op->api : "?");
	pf_ann_lit(x, &e->enc, "origin",
		op->origin == DT_OP_REPLAY ? "CUDA graph replay" : "call");
	pf_ann_str(x, &e->enc, "problem", op->brief  ? op->brief
				       : op->desc ? op->desc
						  : "");
	if (op->plan) {
		pf_ann_uint(x, &e->enc, "plan", op->plan);
		snprintf(buf, sizeof(buf), "eng%" PRId64, op->engine);
	} else {
		snprintf(buf, sizeof(buf), "algo%" PRId64, op->engine);
	}
	pf_ann_str(x, &e->enc, "engine", op->engine >= 0 ? buf : "unknown");
	if (op->knobs)
		pf_ann_str(x, &e->enc, "knobs", op->knobs);
	return &e->enc;
}

static void on_op(void *arg, const struct dt_op *op, uint32_t key)
{
	struct pf *x = arg;
	struct pb *ev = &x->scratch;

	pf_maybe_clear(x);
	uint64_t uuid = pf_lane(x, pf_track_of(x, key, "GPU %d stream %u: %s ops",
					 op->device, op->gpu_stream,
					 dt_export_callers(x->t)),
			     op->gpu_start, op->gpu_end);
	pf_event_head(x, ev, TYPE_SLICE_BEGIN, uuid,
		   dt_op_kind_name(op->cost.kind));
	pf_ann_lit(x, ev, "kind", dt_op_kind_key(op->cost.kind));
	pf_ann_uint(x, ev, dt_export_call_key(op->library), op->seq);
	const struct pb *c = op_const(x, op);
	if (pb_room(ev, c->len)) {
		memcpy(ev->b + ev->len, c->b, c->len);
		ev->len += c->len;
	}
	if (op->workspace >= 0)
		pf_ann_int(x, ev, "workspace bytes", op->workspace);
	pf_ann_uint(x, ev, "kernels", op->kernels);
	pf_ann_uint(x, ev, "GPU ns", op->gpu_ns);
	if (op->cost.flops > 0)
		pf_ann_double(x, ev, "FLOP", op->cost.flops);
	if (op->cost.bytes)
		pf_ann_uint(x, ev, "bytes", op->cost.bytes);
	pf_event_write(x, op->gpu_start, ev, 0, NULL, 0);
	pf_slice_end(x, uuid, op->gpu_end);
}

static void on_graph_launch(void *arg, const struct dt_graph_launch *l,
			    bool shown)
{
	struct pf *x = arg;
	struct held *h = &x->launches[l->corr % LAUNCH_RING];

	pf_maybe_clear(x);
	pf_held_take(x, h, l->corr, l->start, l->end);
	if (shown) {
		h->track = pf_lane(x, pf_track_of(x, DT_TL_LAUNCHES,
					    "CUDA graph launches"),
				l->start, l->end);
		pf_event_head(x, &h->body, TYPE_SLICE_BEGIN, h->track,
			   "graph launch");
		pf_ann_uint(x, &h->body, "correlation", l->corr);
		pf_ann_uint(x, &h->body, "CUPTI thread", l->cupti_tid);
	}
	if (x->n_pending)
		pf_flow_pending(x, h, true);
}

/* A GPU's DRAM GB/s: counter tracks of them read and written. */
static void on_dram(void *arg, uint64_t t, uint32_t device,
		    const double gbps[2])
{
	struct pf *x = arg;

	for (int i = 0; i < 2; i++) {
		uint64_t uuid =
			pf_track(x, DT_TL_DRAM + 2 * (device & 0xffff) + i, -1,
			      true, "GPU %u DRAM %s", device,
			      i ? "written" : "read");
		size_t p = pf_packet_open(x, t, false);
		size_t e = pb_open(&x->o, PKT_TRACK_EVENT);
		pb_varint(&x->o, TE_TYPE, TYPE_COUNTER);
		pb_varint(&x->o, TE_TRACK_UUID, uuid);
		pb_double(&x->o, TE_DOUBLE_COUNTER_VALUE, gbps[i]);
		pb_close(&x->o, e);
		pf_packet_close(x, p);
		x->events++;
	}
}

/* An instant on dnntrace's own track, for what went missing. */
static void mark(void *arg, uint64_t t, const char *name, const char *what)
{
	struct pf *x = arg;
	struct pb *ev = &x->scratch;
	uint64_t uuid = pf_track(x, DT_TL_MARKS, -1, false, "dnntrace");

	pf_event_head(x, ev, TYPE_INSTANT, uuid, name);
	pf_ann_text(x, ev, "what", what);
	pf_event_write(x, t, ev, 0, NULL, 0);
}

/* An NVTX range: a push range a slice on its thread's track, nested with
 * the calls made in it; a start/end range, which may end on another
 * thread, a slice on the process's track of them (in lanes where they
 * overlap); a mark an instant on its thread's track. The trace processor
 * sorts packets by time. */
static void range(void *arg, const struct dt_range *r, size_t i)
{
	struct pf *x = arg;
	struct pb *ev = &x->scratch;
	uint64_t uuid =
		r->kind != DT_RANGE_START
			? pf_track(x, r->tid, r->tid, false, "thread %u", r->tid)
			: pf_lane(x, pf_track_of(x, DT_TL_RANGES, "NVTX ranges"),
			       r->t_begin, r->t_end);

	(void)i;
	pf_event_head(x, ev,
		   r->kind == DT_RANGE_MARK ? TYPE_INSTANT : TYPE_SLICE_BEGIN,
		   uuid, r->name);
	if (r->domain)
		pf_ann_str(x, ev, "domain", r->domain);
	pf_event_write(x, r->t_begin, ev, 0, NULL, 0);
	if (r->kind != DT_RANGE_MARK)
		pf_slice_end(x, uuid, r->t_end);
}

/* GPU recording off (or taken by another profiler): a slice on a track
 * of its own. */
static void gpu_gap(void *arg, uint64_t from, uint64_t until, const char *why)
{
	struct pf *x = arg;
	struct pb *ev = &x->scratch;
	uint64_t uuid = pf_lane(x, pf_track_of(x, DT_TL_GPU_STATE, "GPU recording"),
			     from, until);

	pf_event_head(x, ev, TYPE_SLICE_BEGIN, uuid, "GPU not recorded");
	pf_ann_text(x, ev, "why", why);
	pf_event_write(x, from, ev, 0, NULL, 0);
	pf_slice_end(x, uuid, until);
}

static void on_thread(void *arg, uint32_t tid, const char *s, size_t len)
{
	struct pf *x = arg;
	char name[sizeof(((struct track *)0)->name)];

	snprintf(name, sizeof(name), "%.*s", (int)len, s);
	uint64_t uuid = pf_track(x, tid, tid, false, "%s", name);
	bool fresh;
	struct track *t = pf_track_find(x, tid, &fresh);
	/* a thread seen before its name: described again */
	if (t && strcmp(t->name, name)) {
		snprintf(t->name, sizeof(t->name), "%s", name);
		pf_describe(x, uuid, name, tid, false);
	}
}

/* ----------------------------------------------------------- the file */

/* The writer's work: the packets handed over, into the file. */
static bool write_out(void *arg, const uint8_t *b, size_t len)
{
	return fwrite(b, 1, len, arg) == len;
}

static void process_meta(struct pf *x)
{
	const char *cmd = dt_info_get(dt_session_info(x->t->s), "cmdline");
	char name[256];
	size_t p = pf_packet_open(x, UINT64_MAX, false);
	size_t d = pb_open(&x->o, PKT_TRACK_DESCRIPTOR);

	dt_export_process_name(x->t, name, sizeof(name));
	pb_varint(&x->o, TD_UUID, pf_process_uuid(x));
	size_t pd = pb_open(&x->o, TD_PROCESS);
	pb_varint(&x->o, PD_PID, x->pid);
	if (cmd)
		pb_str(&x->o, PD_CMDLINE, cmd);
	pb_str(&x->o, PD_PROCESS_NAME, name);
	pb_close(&x->o, pd);
	pb_close(&x->o, d);
	pf_packet_close(x, p);
}

/* The first packet: clears the sequence's state and ties the trace's
 * clock (ns after base) to the wall clock. */
static void clock_snapshot(struct pf *x, uint64_t base)
{
	size_t p = pf_packet_open(x, UINT64_MAX, false);
	size_t s = pb_open(&x->o, PKT_CLOCK_SNAPSHOT);
	size_t c = pb_open(&x->o, CLOCKS);

	pb_varint(&x->o, CLOCK_ID, BUILTIN_CLOCK_BOOTTIME);
	pb_varint(&x->o, CLOCK_TIMESTAMP, 0);
	pb_close(&x->o, c);
	c = pb_open(&x->o, CLOCKS);
	pb_varint(&x->o, CLOCK_ID, BUILTIN_CLOCK_REALTIME);
	pb_varint(&x->o, CLOCK_TIMESTAMP, base);
	pb_close(&x->o, c);
	pb_close(&x->o, s);
	pf_packet_close(x, p);
}

static void trace_begin(void *arg, const struct dt_export_trace *t,
			uint32_t pid, size_t i)
{
	struct pf *x = arg;

	x->t = t;
	x->pid = pid;
	x->trace_no = (uint32_t)i;
	x->last_seq = 0;
	/* the caches are by the trace's kernel table and problems */
	for (size_t k = 0; k < KERNEL_CACHE; k++)
		x->kernel_cache[k].used = false;
	for (size_t k = 0; k < OP_CACHE; k++)
		x->op_cache[k].clears = 0;
	process_meta(x);
}

/* The held slices written out; arrows still waiting for their launch
 * never get it. */
static void trace_end(void *arg)
{
	struct pf *x = arg;

	pf_held_all(x);
	x->no_flow += x->n_pending;
	x->n_pending = 0;
}

static const struct dt_tl_encoder encoder = {
	.trace_begin = trace_begin,
	.trace_end = trace_end,
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

static void pf_free(struct pf *x)
{
	if (!x)
		return;
	dt_handoff_stop(&x->w);
	pb_free(&x->o);
	pb_free(&x->interned);
	pb_free(&x->scratch);
	free(x->tracks);
	for (size_t i = 0; i < x->strs_cap; i++)
		free(x->strs[i].s);
	free(x->strs);
	if (x->kernel_cache)
		for (size_t i = 0; i < KERNEL_CACHE; i++)
			pb_free(&x->kernel_cache[i].enc);
	free(x->kernel_cache);
	if (x->op_cache)
		for (size_t i = 0; i < OP_CACHE; i++)
			pb_free(&x->op_cache[i].enc);
	free(x->op_cache);
	if (x->calls)
		for (size_t i = 0; i < CALL_RING; i++) {
			pb_free(&x->calls[i].body);
			free(x->calls[i].flows);
		}
	if (x->launches)
		for (size_t i = 0; i < LAUNCH_RING; i++) {
			pb_free(&x->launches[i].body);
			free(x->launches[i].flows);
		}
	free(x->held_block);
	free(x->calls);
	free(x->launches);
	free(x->pending);
	free(x);
}

int dt_export_perfetto(const struct dt_export_opts *o)
{
	size_t n;
	struct dt_export_trace *t = dt_export_open(o, &n);
	if (!t)
		return EXIT_USAGE;
	struct dt_output dest;
	FILE *out = dt_open_output(&dest, o->output, o->force);
	struct pf *x = out ? calloc(1, sizeof(*x)) : NULL;
	struct dt_export_note *notes = calloc(n, sizeof(*notes));
	uint32_t *pids = calloc(n, sizeof(*pids));
	int rc = 0;

	if (x) {
		const char *max = getenv("DNNTRACE_PERFETTO_INTERN_MAX");
		x->cleared = true; /* the first packet clears the state */
		x->strs_max = max && atol(max) > 0 ? (size_t)atol(max)
						   : INTERN_MAX;
		dt_handoff_start(&x->w, write_out, out);
		x->kernel_cache =
			calloc(KERNEL_CACHE, sizeof(*x->kernel_cache));
		x->calls = calloc(CALL_RING, sizeof(*x->calls));
		x->launches = calloc(LAUNCH_RING, sizeof(*x->launches));
		x->pending = calloc(PENDING_MAX, sizeof(*x->pending));
		x->held_block = malloc((size_t)CALL_RING * HELD_BYTES);
		x->op_cache = calloc(OP_CACHE, sizeof(*x->op_cache));
	}
	if (!out || !x || !notes || !pids || !x->kernel_cache || !x->calls || !x->launches || !x->pending ||
	    !x->held_block || !x->op_cache) {
		if (out)
			dt_error("out of memory");
		rc = out ? 1 : EXIT_USAGE;
		goto done;
	}
	for (size_t i = 0; i < CALL_RING; i++)
		x->calls[i].body = (struct pb){ .b = x->held_block +
						     i * HELD_BYTES,
						.cap = HELD_BYTES,
						.lent = true };
	const struct dt_file_header *h0 = &dt_session_info(t[0].s)->hdr;
	/* offset = start_real - base - start_mono */
	uint64_t line0 = (uint64_t)dt_export_line(&t[0], h0->start_mono);
	clock_snapshot(x, h0->start_real - line0);
	rc = dt_tl_export(&encoder, x, t, n, pids, notes);
	dt_handoff_give(&x->w, &x->o);
	/* a write that failed leaves the file in error: dt_close_output()
	 * says so and removes it */
	dt_handoff_stop(&x->w);
	if (x->o.oom || x->interned.oom || x->scratch.oom) {
		dt_error("out of memory");
		rc = 1;
	}
	dt_export_warn(t, notes, n, x->no_flow);
	if (x->no_flow_cleared)
		dt_error("note: %" PRIu64 " kernels have no arrow: their call "
			 "was written out when the %" PRIu64 " interned strings "
			 "were cleared (%" PRIu64 " times)",
			 x->no_flow_cleared, (uint64_t)x->strs_max, x->clears);
	if (x->overlaps)
		dt_error("note: %" PRIu64 " GPU slices overlap more than %d "
			 "others on their stream and nest wrongly",
			 x->overlaps, LANES);
done:
	/* a file cut short by a failed write is no timeline: not left */
	if (out && dt_close_output(&dest, !rc))
		rc = EXIT_USAGE;
	pf_free(x);
	free(notes);
	free(pids);
	dt_export_close(t, n);
	return rc;
}
