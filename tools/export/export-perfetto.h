/*
 * export-perfetto.h - the parts of `dnntrace export --format perfetto`,
 * private to tools/export/: Perfetto's field numbers, the exporter's
 * state, the packets of its one sequence with their interned strings and
 * debug annotations (export-perfetto-packets.c), and the tracks and the
 * slices held until their arrows are known (export-perfetto-tracks.c).
 * What each event becomes is export-perfetto.c's; the protobuf encoding
 * itself is pb.h's.
 */
#ifndef EXPORT_PERFETTO_H
#define EXPORT_PERFETTO_H

#include <stdbool.h>
#include <stdint.h>

#include "dt-analyzer.h"
#include "export-handoff.h"
#include "export-timeline.h"
#include "export.h"
#include "pb.h"


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

/* -------------------------------- packets (export-perfetto-packets.c) */

/* dt_hash, never 0 (0 marks a free entry) */
uint64_t pf_hash_bytes(const void *p, size_t n, uint64_t seed);
/* A host time of the trace being written, ns after the export's base. */
uint64_t pf_rel_ns(const struct pf *x, uint64_t mono);
/* The sequence flags of the packet written next. */
uint32_t pf_seq_flags(struct pf *x, bool needs_state);
/* A packet's fields before its data. */
void pf_packet_fields(struct pf *x, uint64_t ts, uint32_t flags);
/* Write out a MiB once there is one. */
void pf_packet_done(struct pf *x);
/* A packet whose length is not known yet: opened at ts (UINT64_MAX:
 * none), its pb_open mark returned; and closed. */
size_t pf_packet_open(struct pf *x, uint64_t ts, bool needs_state);
void pf_packet_close(struct pf *x, size_t at);

/* The number of a string of one kind (ID_EVENT_NAMES, ...), added to the
 * next packet's interned data the first time; _sn and _s for strings
 * that live as long as the export, remembered by their address. */
uint64_t pf_intern(struct pf *x, uint32_t kind, const char *s, size_t n);
uint64_t pf_intern_sn(struct pf *x, uint32_t kind, const char *s, size_t n);
uint64_t pf_intern_s(struct pf *x, uint32_t kind, const char *s);

/* Debug annotations (TrackEvent.debug_annotations) into pb, their names
 * interned: numbers, a flag, and strings interned (_stri: given their
 * lengths; _lit: one that lives as long as the export), or written out
 * (_text: one-off values). */
void pf_ann_uint(struct pf *x, struct pb *pb, const char *name, uint64_t v);
void pf_ann_int(struct pf *x, struct pb *pb, const char *name, int64_t v);
void pf_ann_double(struct pf *x, struct pb *pb, const char *name, double v);
void pf_ann_bool(struct pf *x, struct pb *pb, const char *name);
void pf_ann_stri(struct pf *x, struct pb *pb, const char *name,
		 size_t name_len, const char *v, size_t n);
void pf_ann_lit(struct pf *x, struct pb *pb, const char *name, const char *v);
void pf_ann_str(struct pf *x, struct pb *pb, const char *name, const char *v);
void pf_ann_text(struct pf *x, struct pb *pb, const char *name,
		 const char *v);

/* ---------------------------------- tracks (export-perfetto-tracks.c) */

/* The track of the layout's key tid (DT_TL_*) in the trace being
 * written; *fresh when it is new. NULL when memory is short. */
struct track *pf_track_find(struct pf *x, uint32_t tid, bool *fresh);
/* A TrackDescriptor: a named track of the process, or a thread's (tid,
 * else -1); a counter track's unit is GB/s. */
void pf_describe(struct pf *x, uint64_t uuid, const char *name, int64_t tid,
		 bool counter);
/* The uuid of the process's track, described by the file's writer. */
uint64_t pf_process_uuid(struct pf *x);
/* A track named (printf) the first time it is used; pf_track() gives its
 * uuid, for a host thread (tid) or a counter too. */
struct track *pf_track_of(struct pf *x, uint32_t key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint64_t pf_track(struct pf *x, uint32_t key, int64_t tid, bool counter,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The uuid of the lane of a GPU track that [start, end] fits on. */
uint64_t pf_lane(struct pf *x, struct track *t, uint64_t start,
		 uint64_t end);

/* The TrackEvent opening a slice (or an instant) named name on uuid,
 * into pb; annotations follow. */
void pf_event_head(struct pf *x, struct pb *pb, int type, uint64_t uuid,
		   const char *name);
/* A slice's end on uuid at t. */
void pf_slice_end(struct pf *x, uint64_t uuid, uint64_t t);
/* Write the event in ev (its flows after it) at time t. */
void pf_event_write(struct pf *x, uint64_t t, const struct pb *ev,
		    uint32_t flow_field, const uint64_t *flows, size_t n);

/* Slot h for the held slice of key from t0 to t1, written out first if
 * it held another; pf_held_all() writes out every one. */
void pf_held_take(struct pf *x, struct held *h, uint64_t key, uint64_t t0,
		  uint64_t t1);
void pf_held_all(struct pf *x);
/* Clear the interned state when it holds too much. */
void pf_maybe_clear(struct pf *x);
/* A new arrow ending on a kernel launched by key (a call's seq, a graph
 * launch's correlation id); 0 when it gets none. The arrows waiting for
 * the slice just held, to it. */
uint64_t pf_flow_to(struct pf *x, uint64_t key, bool graph);
void pf_flow_pending(struct pf *x, struct held *h, bool graph);

#endif /* EXPORT_PERFETTO_H */
