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
#include "export-handoff.h"
#include "export-timeline.h"
#include "export.h"
#include "pb.h"
#include "tools.h"

/* Field numbers, from Perfetto's protos/perfetto/trace/ (trace.proto,
 * trace_packet.proto, the track_event and interned_data folders,
 * clock_snapshot.proto).
 */
enum {
	TRACE_PACKET = 1,

	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TIMESTAMP = 8,
	PKT_SEQUENCE_ID = 10,
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_TRACK_DESCRIPTOR = 60,
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,

	CLOCKS = 1, /* ClockSnapshot.clocks */
	CLOCK_ID = 1,
	CLOCK_TIMESTAMP = 2,
	BUILTIN_CLOCK_REALTIME = 1,
	BUILTIN_CLOCK_BOOTTIME = 6,

	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	TD_COUNTER = 8,
	PD_PID = 1,
	PD_CMDLINE = 2,
	PD_PROCESS_NAME = 6,
	THD_PID = 1,
	THD_TID = 2,
	THD_THREAD_NAME = 5,
	CD_UNIT_NAME = 6,

	TE_DEBUG_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_DOUBLE_COUNTER_VALUE = 44,
	TE_FLOW_IDS = 47,
	TE_TERMINATING_FLOW_IDS = 48,
	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,

	DA_NAME_IID = 1,
	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	DA_POINTER = 7,
	DA_STRING_IID = 17,

	ID_EVENT_NAMES = 2,
	ID_ANNOTATION_NAMES = 3,
	ID_STRING_VALUES = 29,
	ID_IID = 1,
	ID_NAME = 2, /* EventName.name, DebugAnnotationName.name,
			InternedString.str */
};

/* Slices of a GPU track that overlap (ops whose kernels span streams,
 * clocks a few ns apart) go to lanes beside it, which the trace processor
 * needs: its slices on one track nest. */
#define LANES 8

struct track {
	uint64_t key; /* 0: a free entry; the layout's key (DT_TL_*), the
			 trace's number above bit 40 */
	uint64_t uuid[LANES];
	uint64_t lane_end[LANES];
	uint32_t lanes; /* described so far */
	char name[128];
};

/* Calls (and graph launches) are held until what they launched is known;
 * the last CALL_RING calls by seq, LAUNCH_RING launches by correlation id.
 */
#define CALL_RING 65536
#define LAUNCH_RING 4096
#define HELD_BYTES 256 /* a held event's room in one block: it is read
			  back in the order it was written */
struct held {
	bool used;
	bool early; /* written already: the interned state was cleared */
	uint64_t key; /* seq, or correlation id */
	uint64_t t0, t1;
	uint64_t track;
	struct pb body; /* the TrackEvent of the slice's beginning */
	uint64_t *flows;
	uint32_t n_flows, cap_flows;
};

/* Arrows whose start is read after their kernel. */
#define PENDING_MAX 8192
struct pending {
	uint64_t key;
	bool graph;
	uint64_t flow;
};

/* Interned strings: one table for the three kinds. */
struct istr {
	uint64_t hash; /* 0: free */
	uint64_t iid;
	uint32_t kind, len;
	char *s;
};
#define INTERN_MAX (1u << 20)       /* strings, then the state is cleared */
#define INTERN_BYTES (64u << 20)
/* DNNTRACE_PERFETTO_INTERN_MAX sets a lower count, for the tests of
 * clearing. */

#define LITS 4096
struct lit {
	const char *s;
	uint32_t kind;
	uint64_t clears; /* the interned state it was seen in */
	uint64_t iid;
};

/* A host scalar (alpha, beta: 'k' arguments) of at most 8 bytes, whose
 * text printf would make for every call. */
#define SCALARS 256
struct scalar {
	uint64_t bits;
	uint32_t count;
	uint64_t clears;
	uint64_t iid;
};

/* The constant part of a kernel's annotations, by its class and launch
 * shape. */
#define KERNEL_CACHE 4096
struct kernel_key {
	const struct dt_kernel_class *kc;
	uint32_t lib;
	int32_t grid[3], block[3];
	uint32_t registers, smem;
};
struct kernel_entry {
	struct kernel_key k;
	bool used;
	uint64_t name_iid;
	struct pb enc;
};

/* What an op's annotations say of its problem and engine, by the
 * problem's id and its plan and engine (the strings' addresses, too: a
 * string made again is a miss, never a wrong hit). */
#define OP_CACHE 4096
struct op_key {
	uint64_t problem_id;
	int64_t engine;
	uint32_t plan, origin;
	const char *api, *brief, *desc, *knobs;
};
struct op_entry {
	struct op_key k;
	uint64_t clears; /* the interned state it was made in, +1 */
	struct pb enc;
};

/* An enum argument's value, by its type (an address in the trace's
 * signatures) and value. */
#define ENUMS 1024
struct enum_entry {
	const char *type;
	int64_t value;
	uint64_t clears; /* +1 */
	uint64_t iid;
};

struct pf {
	/* a thread of its own writes the packets out, a MiB at a time, while
	 * the next MiB is made: the copy into the file is a tenth of the
	 * work */
	struct dt_handoff w;
	struct pb o; /* packets, handed to the writer at 1 MiB */
	struct pb interned; /* InternedData for the next packet */
	struct pb scratch;
	bool cleared; /* the first packet, or one after a clear, comes next */

	const struct dt_export_trace *t;
	uint32_t trace_no;
	uint32_t pid; /* as exported: unique within the file */
	uint64_t next_uuid, next_iid, flow_id;
	uint64_t events, flows, no_flow, overlaps;
	uint64_t no_flow_cleared; /* arrows not drawn: their start was
				     written when the interned state was
				     cleared */

	struct track *tracks;
	size_t tracks_cap, n_tracks;

	struct istr *strs;
	size_t strs_cap, n_strs, str_bytes, strs_max;
	uint64_t clears;
	struct lit lits[LITS];

	struct scalar scalars[SCALARS];
	struct enum_entry enums[ENUMS];
	struct op_entry *op_cache;
	struct kernel_entry *kernel_cache;

	struct held *calls, *launches;
	uint8_t *held_block;
	uint64_t last_seq;
	struct pending *pending;
	size_t n_pending;

};

/* ------------------------------------------------------------ helpers */

/* dt_hash, never 0 (0 marks a free entry) */
static uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
	uint64_t h = dt_hash(p, n, seed);
	return h ? h : 1;
}

static uint64_t rel_ns(const struct pf *x, uint64_t mono)
{
	return dt_export_ns(x->t, mono);
}

/* The writer's work: the packets handed over, into the file. */
static bool write_out(void *arg, const uint8_t *b, size_t len)
{
	return fwrite(b, 1, len, arg) == len;
}

/* The sequence flags of the packet written next: the first after a
 * clear says so, one using interned data needs the state. */
static uint32_t seq_flags(struct pf *x, bool needs_state)
{
	uint32_t f = x->cleared ? SEQ_INCREMENTAL_STATE_CLEARED |
					  SEQ_NEEDS_INCREMENTAL_STATE
		     : needs_state ? SEQ_NEEDS_INCREMENTAL_STATE
				   : 0;
	x->cleared = false;
	return f;
}

/* A packet's fields before its data: time (UINT64_MAX: none), sequence,
 * flags, and the interned data made since the last packet. */
static void packet_fields(struct pf *x, uint64_t ts, uint32_t flags)
{
	if (ts != UINT64_MAX)
		pb_varint(&x->o, PKT_TIMESTAMP, ts);
	pb_varint(&x->o, PKT_SEQUENCE_ID, 1);
	if (flags)
		pb_varint(&x->o, PKT_SEQUENCE_FLAGS, flags);
	if (x->interned.len) {
		pb_bytes(&x->o, PKT_INTERNED_DATA, x->interned.b,
			 x->interned.len);
		x->interned.len = 0;
	}
}

/* Write out a MiB once there is one. */
static void packet_done(struct pf *x)
{
	if (x->o.len >= (1u << 20))
		dt_handoff_give(&x->w, &x->o);
}

/* Start a packet whose length is not known yet; ts is a host time of the
 * trace, or UINT64_MAX for none. Returns its pb_open mark. */
static size_t packet_open(struct pf *x, uint64_t ts, bool needs_state)
{
	size_t at = pb_open(&x->o, TRACE_PACKET);

	packet_fields(x, ts == UINT64_MAX ? ts : rel_ns(x, ts),
		      seq_flags(x, needs_state));
	return at;
}

static void packet_close(struct pf *x, size_t at)
{
	pb_close(&x->o, at);
	packet_done(x);
}

/* The number of a string of one kind (ID_EVENT_NAMES, ...), added to the
 * next packet's interned data the first time. */
static uint64_t intern(struct pf *x, uint32_t kind, const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n, kind);

	if (x->n_strs * 2 >= x->strs_cap) {
		size_t cap = x->strs_cap ? x->strs_cap * 2 : 4096;
		struct istr *t = calloc(cap, sizeof(*t));
		if (!t) {
			x->o.oom = true;
			return 0;
		}
		for (size_t i = 0; i < x->strs_cap; i++) {
			struct istr *e = &x->strs[i];
			if (!e->hash)
				continue;
			size_t j = e->hash & (cap - 1);
			while (t[j].hash)
				j = (j + 1) & (cap - 1);
			t[j] = *e;
		}
		free(x->strs);
		x->strs = t;
		x->strs_cap = cap;
	}
	size_t j = h & (x->strs_cap - 1);
	for (; x->strs[j].hash; j = (j + 1) & (x->strs_cap - 1)) {
		const struct istr *e = &x->strs[j];
		if (e->hash == h && e->kind == kind && e->len == n &&
		    !memcmp(e->s, s, n))
			return e->iid;
	}
	char *copy = malloc(n + 1);
	if (!copy) {
		x->o.oom = true;
		return 0;
	}
	memcpy(copy, s, n);
	copy[n] = 0;
	x->strs[j] = (struct istr){ h, ++x->next_iid, kind, (uint32_t)n, copy };
	x->n_strs++;
	x->str_bytes += n;
	size_t at = pb_open(&x->interned, kind);
	pb_varint(&x->interned, ID_IID, x->next_iid);
	pb_bytes(&x->interned, ID_NAME, s, n);
	pb_close(&x->interned, at);
	return x->next_iid;
}

/* The same for a string that lives as long as the export (a literal, a
 * name from a table), remembered by its address. */
static uint64_t intern_sn(struct pf *x, uint32_t kind, const char *s,
			  size_t n)
{
	uintptr_t k = (uintptr_t)s ^ kind;
	struct lit *l = &x->lits[(k >> 3 ^ k >> 13) % LITS];

	if (l->s == s && l->kind == kind && l->clears == x->clears)
		return l->iid;
	*l = (struct lit){ s, kind, x->clears, intern(x, kind, s, n) };
	return l->iid;
}

static uint64_t intern_s(struct pf *x, uint32_t kind, const char *s)
{
	uintptr_t k = (uintptr_t)s ^ kind;
	const struct lit *l = &x->lits[(k >> 3 ^ k >> 13) % LITS];

	if (l->s == s && l->kind == kind && l->clears == x->clears)
		return l->iid;
	return intern_sn(x, kind, s, strlen(s));
}

/* Debug annotations (TrackEvent.debug_annotations) into pb. */
static void ann_uint(struct pf *x, struct pb *pb, const char *name,
		     uint64_t v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_UINT, v);
	pb_close(pb, at);
}

static void ann_int(struct pf *x, struct pb *pb, const char *name, int64_t v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_INT, (uint64_t)v);
	pb_close(pb, at);
}

static void ann_double(struct pf *x, struct pb *pb, const char *name,
		       double v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_double(pb, DA_DOUBLE, v);
	pb_close(pb, at);
}

static void ann_bool(struct pf *x, struct pb *pb, const char *name)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_BOOL, 1);
	pb_close(pb, at);
}

/* A string value, interned: for values that repeat. */
static void ann_stri(struct pf *x, struct pb *pb, const char *name,
		     size_t name_len, const char *v, size_t n)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID,
		  intern(x, ID_ANNOTATION_NAMES, name, name_len));
	pb_varint(pb, DA_STRING_IID, intern(x, ID_STRING_VALUES, v, n));
	pb_close(pb, at);
}

/* A string value that lives as long as the export, interned by its
 * address. */
static void ann_lit(struct pf *x, struct pb *pb, const char *name,
		    const char *v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_STRING_IID, intern_s(x, ID_STRING_VALUES, v));
	pb_close(pb, at);
}

static void ann_str(struct pf *x, struct pb *pb, const char *name,
		    const char *v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_STRING_IID, intern(x, ID_STRING_VALUES, v, strlen(v)));
	pb_close(pb, at);
}

/* A string value written out: for one-off values. */
static void ann_text(struct pf *x, struct pb *pb, const char *name,
		     const char *v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_str(pb, DA_STRING, v);
	pb_close(pb, at);
}

/* ------------------------------------------------------------- tracks */

static struct track *track_find(struct pf *x, uint32_t tid, bool *fresh)
{
	uint64_t key = (uint64_t)(x->trace_no + 1) << 40 | tid;

	*fresh = false;
	if (x->n_tracks * 2 >= x->tracks_cap) {
		size_t cap = x->tracks_cap ? x->tracks_cap * 2 : 256;
		struct track *t = calloc(cap, sizeof(*t));
		if (!t) {
			x->o.oom = true;
			return NULL;
		}
		for (size_t i = 0; i < x->tracks_cap; i++) {
			if (!x->tracks[i].key)
				continue;
			size_t j = hash_bytes(&x->tracks[i].key, 8, 0) &
				   (cap - 1);
			while (t[j].key)
				j = (j + 1) & (cap - 1);
			t[j] = x->tracks[i];
		}
		free(x->tracks);
		x->tracks = t;
		x->tracks_cap = cap;
	}
	size_t j = hash_bytes(&key, 8, 0) & (x->tracks_cap - 1);
	for (; x->tracks[j].key; j = (j + 1) & (x->tracks_cap - 1))
		if (x->tracks[j].key == key)
			return &x->tracks[j];
	x->tracks[j] = (struct track){ .key = key };
	x->n_tracks++;
	*fresh = true;
	return &x->tracks[j];
}

static uint64_t process_uuid(struct pf *x);

/* A TrackDescriptor: a named track of the process, or a thread's. */
static void describe(struct pf *x, uint64_t uuid, const char *name,
		     int64_t tid, bool counter)
{
	size_t p = packet_open(x, UINT64_MAX, false);
	size_t d = pb_open(&x->o, PKT_TRACK_DESCRIPTOR);

	pb_varint(&x->o, TD_UUID, uuid);
	pb_varint(&x->o, TD_PARENT_UUID, process_uuid(x));
	if (tid >= 0) {
		size_t th = pb_open(&x->o, TD_THREAD);
		pb_varint(&x->o, THD_PID, x->pid);
		pb_varint(&x->o, THD_TID, (uint64_t)tid);
		pb_str(&x->o, THD_THREAD_NAME, name);
		pb_close(&x->o, th);
	} else {
		pb_str(&x->o, TD_NAME, name);
	}
	if (counter) {
		size_t c = pb_open(&x->o, TD_COUNTER);
		pb_str(&x->o, CD_UNIT_NAME, "GB/s");
		pb_close(&x->o, c);
	}
	pb_close(&x->o, d);
	packet_close(x, p);
}

static uint64_t process_uuid(struct pf *x)
{
	bool fresh;
	struct track *t = track_find(x, DT_TL_PROCESS, &fresh);

	if (!t)
		return 0;
	if (fresh)
		t->uuid[0] = ++x->next_uuid; /* described by process_meta */
	return t->uuid[0];
}

/* A track named (printf) the first time it is used; for a host thread,
 * tid is its id, else -1. */
static struct track *vtrack(struct pf *x, uint32_t key, int64_t tid,
			    bool counter, const char *fmt, va_list ap)
{
	bool fresh;
	struct track *t = track_find(x, key, &fresh);

	if (t && fresh) {
		t->uuid[0] = ++x->next_uuid;
		t->lanes = 1;
		vsnprintf(t->name, sizeof(t->name), fmt, ap);
		describe(x, t->uuid[0], t->name, tid, counter);
	}
	return t;
}

static struct track *track_of(struct pf *x, uint32_t key, const char *fmt,
			      ...) __attribute__((format(printf, 3, 4)));
static struct track *track_of(struct pf *x, uint32_t key, const char *fmt,
			      ...)
{
	va_list ap;

	va_start(ap, fmt);
	struct track *t = vtrack(x, key, -1, false, fmt, ap);
	va_end(ap);
	return t;
}

/* Its uuid. */
static uint64_t track(struct pf *x, uint32_t key, int64_t tid, bool counter,
		      const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static uint64_t track(struct pf *x, uint32_t key, int64_t tid, bool counter,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	struct track *t = vtrack(x, key, tid, counter, fmt, ap);
	va_end(ap);
	return t ? t->uuid[0] : 0;
}

/* The uuid of the lane of a GPU track that [start, end] fits on: the
 * first whose last slice ended by start. */
static uint64_t lane(struct pf *x, struct track *t, uint64_t start,
		     uint64_t end)
{
	uint32_t i;

	if (!t)
		return 0;
	for (i = 0; i < t->lanes; i++)
		if (start >= t->lane_end[i])
			break;
	if (i == t->lanes) {
		if (t->lanes == LANES) {
			i = LANES - 1; /* nests wrongly: counted */
			x->overlaps++;
		} else {
			char name[160];
			t->uuid[i] = ++x->next_uuid;
			t->lanes++;
			snprintf(name, sizeof(name), "%s (overlapping, %u)",
				 t->name, i + 1);
			describe(x, t->uuid[i], name, -1, false);
		}
	}
	if (end > t->lane_end[i])
		t->lane_end[i] = end;
	return t->uuid[i];
}

/* ------------------------------------------------------------- slices */

/* The TrackEvent opening a slice (or an instant) named name on uuid,
 * into pb; annotations follow. The name lives as long as the export. */
static void event_head(struct pf *x, struct pb *pb, int type, uint64_t uuid,
		       const char *name)
{
	pb->len = 0;
	pb_varint(pb, TE_TYPE, (uint64_t)type);
	pb_varint(pb, TE_TRACK_UUID, uuid);
	pb_varint(pb, TE_NAME_IID, intern_s(x, ID_EVENT_NAMES, name));
	x->events++;
}

/* Start a packet at time t whose track event is ev_len bytes: the
 * packet's length is worked out first, so that nothing is moved to make
 * room for it. */
static bool packet_head(struct pf *x, uint64_t t, bool needs_state,
			size_t ev_len)
{
	uint64_t ts = rel_ns(x, t);
	uint32_t flags = seq_flags(x, needs_state);
	size_t len = 1 + pb_varint_len(ts) + 2 + (flags ? 2 : 0) + 1 +
		     pb_varint_len(ev_len) + ev_len;

	if (x->interned.len)
		len += 1 + pb_varint_len(x->interned.len) + x->interned.len;
	if (!pb_room(&x->o, len + 16))
		return false;
	pb_put_varint(&x->o, (uint64_t)TRACE_PACKET << 3 | PB_LEN);
	pb_put_varint(&x->o, len);
	packet_fields(x, ts, flags);
	pb_put_varint(&x->o, (uint64_t)PKT_TRACK_EVENT << 3 | PB_LEN);
	pb_put_varint(&x->o, ev_len);
	return true;
}

static void slice_end(struct pf *x, uint64_t uuid, uint64_t t)
{
	if (!packet_head(x, t, false, 2 + 1 + pb_varint_len(uuid)))
		return;
	pb_varint(&x->o, TE_TYPE, TYPE_SLICE_END);
	pb_varint(&x->o, TE_TRACK_UUID, uuid);
	packet_done(x);
}

/* Write the event in ev (its flows after it) at time t. */
static void event_write(struct pf *x, uint64_t t, const struct pb *ev,
			uint32_t flow_field, const uint64_t *flows, size_t n)
{
	size_t flows_len = n * (pb_varint_len((uint64_t)flow_field << 3) + 8);

	if (!packet_head(x, t, true, ev->len + flows_len))
		return;
	memcpy(x->o.b + x->o.len, ev->b, ev->len);
	x->o.len += ev->len;
	for (size_t i = 0; i < n; i++)
		pb_fixed64(&x->o, flow_field, flows[i]);
	packet_done(x);
}

/* A held slice written out, with the arrows that start on it. */
static void held_write(struct pf *x, struct held *h)
{
	if (!h->used)
		return;
	h->used = false;
	if (!h->body.len || h->early)
		return; /* outside the window, or written */
	event_write(x, h->t0, &h->body, TE_FLOW_IDS, h->flows, h->n_flows);
	slice_end(x, h->track, h->t1);
}

/* Slot h for the slice of key from t0 to t1, written out first if it
 * held another. */
static void held_take(struct pf *x, struct held *h, uint64_t key, uint64_t t0,
		      uint64_t t1)
{
	held_write(x, h);
	h->used = true;
	h->early = false;
	h->key = key;
	h->t0 = t0;
	h->t1 = t1;
	h->n_flows = 0;
	h->body.len = 0;
}

static void held_flow(struct pf *x, struct held *h, uint64_t flow)
{
	if (h->n_flows == h->cap_flows) {
		uint32_t cap = h->cap_flows ? h->cap_flows * 2 : 4;
		uint64_t *f = realloc(h->flows, cap * sizeof(*f));
		if (!f) {
			x->o.oom = true;
			return;
		}
		h->flows = f;
		h->cap_flows = cap;
	}
	h->flows[h->n_flows++] = flow;
	x->flows++;
}

static void held_all(struct pf *x)
{
	for (size_t i = 0; i < CALL_RING; i++)
		held_write(x, &x->calls[i]);
	for (size_t i = 0; i < LAUNCH_RING; i++)
		held_write(x, &x->launches[i]);
}

/* Write what is held before the interned state it refers to is cleared;
 * it stays known as written, so that the arrows it can no longer get are
 * counted. */
static void held_early(struct pf *x, struct held *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!h[i].used || h[i].early)
			continue;
		held_write(x, &h[i]);
		h[i].used = h[i].early = true;
	}
}

/* Clear the interned state when it holds too much: what refers to it is
 * written first. */
static void maybe_clear(struct pf *x)
{
	if (x->n_strs < x->strs_max && x->str_bytes < INTERN_BYTES)
		return;
	held_early(x, x->calls, CALL_RING);
	held_early(x, x->launches, LAUNCH_RING);
	for (size_t i = 0; i < x->strs_cap; i++)
		free(x->strs[i].s);
	memset(x->strs, 0, x->strs_cap * sizeof(*x->strs));
	x->n_strs = x->str_bytes = 0;
	for (size_t i = 0; i < KERNEL_CACHE; i++)
		x->kernel_cache[i].used = false;
	x->interned.len = 0;
	x->cleared = true;
	x->clears++;
}

/* A new arrow ending on a kernel: from the held slice of what launched
 * it, or from what is read later. 0 when it gets none. */
static uint64_t flow_to(struct pf *x, uint64_t key, bool graph)
{
	struct held *h = graph ? &x->launches[key % LAUNCH_RING]
			       : &x->calls[key % CALL_RING];
	uint64_t flow = x->flow_id + 1;

	if (h->used && h->key == key) {
		if (!h->body.len)
			return 0; /* outside the window */
		if (h->early) {
			x->no_flow_cleared++;
			return 0;
		}
		x->flow_id++;
		held_flow(x, h, flow);
		return flow;
	}
	if ((graph || key > x->last_seq) && x->n_pending < PENDING_MAX) {
		x->flow_id++;
		x->pending[x->n_pending++] =
			(struct pending){ key, graph, flow };
		return flow;
	}
	x->no_flow++;
	return 0;
}

/* The arrows waiting for the slice just held. */
static void flow_pending(struct pf *x, struct held *h, bool graph)
{
	size_t kept = 0;

	for (size_t i = 0; i < x->n_pending; i++) {
		const struct pending *p = &x->pending[i];
		if (p->key == h->key && p->graph == graph) {
			if (h->body.len)
				held_flow(x, h, p->flow);
		} else {
			x->pending[kept++] = *p;
		}
	}
	x->n_pending = kept;
}

/* -------------------------------------------------------------- events */

/* A call's arguments as annotations, appended to enc. Pointers and
 * numbers are written as numbers; names, enums and the rest as interned
 * text (as `dnntrace dump` prints them). */
static void call_args(struct pf *x, struct pb *enc, const struct dt_call *c)
{
	char val[4096];

	if (c->argc < 0)
		ann_str(x, enc, "arguments", "(do not match the signature)");
	for (int i = 0; i < c->argc; i++) {
		const struct dt_arg *a = &c->argv[i];
		/* names point into the trace's signatures, enum names into
		 * a table: both interned by their address */
		uint64_t name = intern_sn(x, ID_ANNOTATION_NAMES, a->name,
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
						intern_s(x, ID_STRING_VALUES, e)
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
			iid = intern(x, ID_STRING_VALUES, val, (size_t)n);
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

	maybe_clear(x);
	/* the slots are read back in order, long after they were written:
	 * ask for the next ones early */
	const struct held *next = &x->calls[(c->seq + 4) % CALL_RING];
	__builtin_prefetch(next);
	for (size_t i = 0; i < next->body.len; i += 64)
		__builtin_prefetch(next->body.b + i);
	held_take(x, h, c->seq, c->t_begin, c->t_end);
	if (c->seq > x->last_seq)
		x->last_seq = c->seq;
	if (shown) {
		h->track = track(x, c->tid, c->tid, false, "thread %u", c->tid);
		const char *name = c->name ? c->name : "(unknown function)";
		event_head(x, &h->body, TYPE_SLICE_BEGIN, h->track, name);
		ann_uint(x, &h->body, "seq", c->seq);
		char st[64];
		if (c->status)
			ann_str(x, &h->body, "status",
				dt_status_str(c->status, st, sizeof(st)));
		if (c->flags & DT_CALL_NESTED)
			ann_bool(x, &h->body, "nested");
		if (c->flags & DT_CALL_BY_DNNTRACE)
			ann_bool(x, &h->body, "by dnntrace");
		call_args(x, &h->body, c);
	}
	if (x->n_pending)
		flow_pending(x, h, false);
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
		&x->kernel_cache[hash_bytes(&key, sizeof(key), 0) %
				 KERNEL_CACHE];
	if (e->used && !memcmp(&e->k, &key, sizeof(key)))
		return e;
	e->used = true;
	e->k = key;
	e->enc.len = 0;
	if (a->kc) {
		size_t n = 0;
		const char *f = dt_kernel_function(a->kc->name, a->kc->len, &n);
		e->name_iid = intern(x, ID_EVENT_NAMES, f, n);
		ann_stri(x, &e->enc, "kernel", 6, a->kc->name, a->kc->len);
		ann_str(x, &e->enc, "library", dt_lib_key(key.lib));
		ann_str(x, &e->enc, "family", dt_opfam_key(a->kc->opfam));
	} else {
		e->name_iid = intern_s(x, ID_EVENT_NAMES, "kernel");
	}
	if (k) {
		snprintf(dims, sizeof(dims), "[%d, %d, %d]", k->grid_x,
			 k->grid_y, k->grid_z);
		ann_str(x, &e->enc, "grid", dims);
		snprintf(dims, sizeof(dims), "[%d, %d, %d]", k->block_x,
			 k->block_y, k->block_z);
		ann_str(x, &e->enc, "block", dims);
		ann_uint(x, &e->enc, "registers per thread", k->registers);
		ann_uint(x, &e->enc, "shared memory", key.smem);
	}
	return e;
}

static void on_activity(void *arg, const struct dt_activity *a, uint32_t key)
{
	struct pf *x = arg;
	struct pb *ev = &x->scratch;
	uint64_t flow = 0;

	maybe_clear(x);
	uint64_t uuid = lane(x, track_of(x, key, "GPU %u stream %u", a->device,
					 a->stream),
			     a->start, a->end);
	if (a->kernel && a->kernel->graph_id)
		flow = flow_to(x, a->corr, true);
	else if (a->call)
		flow = flow_to(x, a->call, false);
	if (a->kind == DT_ACT_KERNEL) {
		const struct kernel_entry *k = kernel_const(x, a);
		ev->len = 0;
		pb_varint(ev, TE_TYPE, TYPE_SLICE_BEGIN);
		pb_varint(ev, TE_TRACK_UUID, uuid);
		pb_varint(ev, TE_NAME_IID, k->name_iid);
		x->events++;
		ann_uint(x, ev, "correlation", a->corr);
		if (a->call)
			ann_uint(x, ev, "cuDNN call", a->call);
		if (pb_room(ev, k->enc.len)) {
			memcpy(ev->b + ev->len, k->enc.b, k->enc.len);
			ev->len += k->enc.len;
		}
		if (a->kernel && a->kernel->graph_id)
			ann_uint(x, ev, "graph", a->kernel->graph_id);
	} else {
		event_head(x, ev, TYPE_SLICE_BEGIN, uuid,
			   a->kind == DT_ACT_MEMCPY
				   ? dt_export_copy_name(a->copy_kind)
				   : "Memset");
		ann_uint(x, ev, "correlation", a->corr);
		if (a->call)
			ann_uint(x, ev, "cuDNN call", a->call);
		ann_uint(x, ev, "bytes", a->bytes);
		if (a->end > a->start)
			ann_double(x, ev, "memory bandwidth (GB/s)",
				   (double)a->bytes /
					   (double)(a->end - a->start));
	}
	event_write(x, a->start, ev, TE_TERMINATING_FLOW_IDS, &flow,
		    flow ? 1 : 0);
	slice_end(x, uuid, a->end);
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
		&x->op_cache[hash_bytes(&k, sizeof(k), 0) % OP_CACHE];
	char buf[64];

	if (e->clears == x->clears + 1 && !memcmp(&e->k, &k, sizeof(k)))
		return &e->enc;
	e->k = k;
	e->clears = x->clears + 1;
	e->enc.len = 0;
	ann_str(x, &e->enc, "function", op->api ? op->api : "?");
	ann_lit(x, &e->enc, "origin",
		op->origin == DT_OP_REPLAY ? "CUDA graph replay" : "call");
	ann_str(x, &e->enc, "problem", op->brief  ? op->brief
				       : op->desc ? op->desc
						  : "");
	if (op->plan) {
		ann_uint(x, &e->enc, "plan", op->plan);
		snprintf(buf, sizeof(buf), "eng%" PRId64, op->engine);
	} else {
		snprintf(buf, sizeof(buf), "algo%" PRId64, op->engine);
	}
	ann_str(x, &e->enc, "engine", op->engine >= 0 ? buf : "unknown");
	if (op->knobs)
		ann_str(x, &e->enc, "knobs", op->knobs);
	return &e->enc;
}

static void on_op(void *arg, const struct dt_op *op, uint32_t key)
{
	struct pf *x = arg;
	struct pb *ev = &x->scratch;

	maybe_clear(x);
	uint64_t uuid = lane(x, track_of(x, key, "GPU %d stream %u: cuDNN ops",
					 op->device, op->gpu_stream),
			     op->gpu_start, op->gpu_end);
	event_head(x, ev, TYPE_SLICE_BEGIN, uuid,
		   dt_op_kind_name(op->cost.kind));
	ann_lit(x, ev, "kind", dt_op_kind_key(op->cost.kind));
	ann_uint(x, ev, "cuDNN call", op->seq);
	const struct pb *c = op_const(x, op);
	if (pb_room(ev, c->len)) {
		memcpy(ev->b + ev->len, c->b, c->len);
		ev->len += c->len;
	}
	if (op->workspace >= 0)
		ann_int(x, ev, "workspace bytes", op->workspace);
	ann_uint(x, ev, "kernels", op->kernels);
	ann_uint(x, ev, "GPU ns", op->gpu_ns);
	if (op->cost.flops > 0)
		ann_double(x, ev, "FLOP", op->cost.flops);
	if (op->cost.bytes)
		ann_uint(x, ev, "bytes", op->cost.bytes);
	event_write(x, op->gpu_start, ev, 0, NULL, 0);
	slice_end(x, uuid, op->gpu_end);
}

static void on_graph_launch(void *arg, const struct dt_graph_launch *l,
			    bool shown)
{
	struct pf *x = arg;
	struct held *h = &x->launches[l->corr % LAUNCH_RING];

	maybe_clear(x);
	held_take(x, h, l->corr, l->start, l->end);
	if (shown) {
		h->track = lane(x, track_of(x, DT_TL_LAUNCHES,
					    "CUDA graph launches"),
				l->start, l->end);
		event_head(x, &h->body, TYPE_SLICE_BEGIN, h->track,
			   "graph launch");
		ann_uint(x, &h->body, "correlation", l->corr);
		ann_uint(x, &h->body, "CUPTI thread", l->cupti_tid);
	}
	if (x->n_pending)
		flow_pending(x, h, true);
}

/* A GPU's DRAM GB/s: counter tracks of them read and written. */
static void on_dram(void *arg, uint64_t t, uint32_t device,
		    const double gbps[2])
{
	struct pf *x = arg;

	for (int i = 0; i < 2; i++) {
		uint64_t uuid =
			track(x, DT_TL_DRAM + 2 * (device & 0xffff) + i, -1,
			      true, "GPU %u DRAM %s", device,
			      i ? "written" : "read");
		size_t p = packet_open(x, t, false);
		size_t e = pb_open(&x->o, PKT_TRACK_EVENT);
		pb_varint(&x->o, TE_TYPE, TYPE_COUNTER);
		pb_varint(&x->o, TE_TRACK_UUID, uuid);
		pb_double(&x->o, TE_DOUBLE_COUNTER_VALUE, gbps[i]);
		pb_close(&x->o, e);
		packet_close(x, p);
		x->events++;
	}
}

/* An instant on dnntrace's own track, for what went missing. */
static void mark(void *arg, uint64_t t, const char *name, const char *what)
{
	struct pf *x = arg;
	struct pb *ev = &x->scratch;
	uint64_t uuid = track(x, DT_TL_MARKS, -1, false, "dnntrace");

	event_head(x, ev, TYPE_INSTANT, uuid, name);
	ann_text(x, ev, "what", what);
	event_write(x, t, ev, 0, NULL, 0);
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
			? track(x, r->tid, r->tid, false, "thread %u", r->tid)
			: lane(x, track_of(x, DT_TL_RANGES, "NVTX ranges"),
			       r->t_begin, r->t_end);

	(void)i;
	event_head(x, ev,
		   r->kind == DT_RANGE_MARK ? TYPE_INSTANT : TYPE_SLICE_BEGIN,
		   uuid, r->name);
	if (r->domain)
		ann_str(x, ev, "domain", r->domain);
	event_write(x, r->t_begin, ev, 0, NULL, 0);
	if (r->kind != DT_RANGE_MARK)
		slice_end(x, uuid, r->t_end);
}

/* GPU recording off (or taken by another profiler): a slice on a track
 * of its own. */
static void gpu_gap(void *arg, uint64_t from, uint64_t until, const char *why)
{
	struct pf *x = arg;
	struct pb *ev = &x->scratch;
	uint64_t uuid = lane(x, track_of(x, DT_TL_GPU_STATE, "GPU recording"),
			     from, until);

	event_head(x, ev, TYPE_SLICE_BEGIN, uuid, "GPU not recorded");
	ann_text(x, ev, "why", why);
	event_write(x, from, ev, 0, NULL, 0);
	slice_end(x, uuid, until);
}

static void on_thread(void *arg, uint32_t tid, const char *s, size_t len)
{
	struct pf *x = arg;
	char name[sizeof(((struct track *)0)->name)];

	snprintf(name, sizeof(name), "%.*s", (int)len, s);
	uint64_t uuid = track(x, tid, tid, false, "%s", name);
	bool fresh;
	struct track *t = track_find(x, tid, &fresh);
	/* a thread seen before its name: described again */
	if (t && strcmp(t->name, name)) {
		snprintf(t->name, sizeof(t->name), "%s", name);
		describe(x, uuid, name, tid, false);
	}
}

/* ----------------------------------------------------------- the file */

static void process_meta(struct pf *x)
{
	const char *cmd = dt_info_get(dt_session_info(x->t->s), "cmdline");
	char name[256];
	size_t p = packet_open(x, UINT64_MAX, false);
	size_t d = pb_open(&x->o, PKT_TRACK_DESCRIPTOR);

	dt_export_process_name(x->t, name, sizeof(name));
	pb_varint(&x->o, TD_UUID, process_uuid(x));
	size_t pd = pb_open(&x->o, TD_PROCESS);
	pb_varint(&x->o, PD_PID, x->pid);
	if (cmd)
		pb_str(&x->o, PD_CMDLINE, cmd);
	pb_str(&x->o, PD_PROCESS_NAME, name);
	pb_close(&x->o, pd);
	pb_close(&x->o, d);
	packet_close(x, p);
}

/* The first packet: clears the sequence's state and ties the trace's
 * clock (ns after base) to the wall clock. */
static void clock_snapshot(struct pf *x, uint64_t base)
{
	size_t p = packet_open(x, UINT64_MAX, false);
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
	packet_close(x, p);
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

	held_all(x);
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
