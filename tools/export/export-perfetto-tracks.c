/*
 * export-perfetto-tracks.c - the tracks of `dnntrace export --format
 * perfetto` (a process's, its threads', a GPU stream's with lanes beside
 * it for slices that overlap) and the slices written on them: calls and
 * graph launches held until the kernels they launched are known, so that
 * their arrows start on them, and written out before the interned state
 * they refer to is cleared.
 *
 * Which events go on which track is export-perfetto.c's, the timeline's
 * layout export-timeline.c's.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export-perfetto.h"
#include "tools.h"

struct track *pf_track_find(struct pf *x, uint32_t tid, bool *fresh)
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
			size_t j = pf_hash_bytes(&x->tracks[i].key, 8, 0) &
				   (cap - 1);
			while (t[j].key)
				j = (j + 1) & (cap - 1);
			t[j] = x->tracks[i];
		}
		free(x->tracks);
		x->tracks = t;
		x->tracks_cap = cap;
	}
	size_t j = pf_hash_bytes(&key, 8, 0) & (x->tracks_cap - 1);
	for (; x->tracks[j].key; j = (j + 1) & (x->tracks_cap - 1))
		if (x->tracks[j].key == key)
			return &x->tracks[j];
	x->tracks[j] = (struct track){ .key = key };
	x->n_tracks++;
	*fresh = true;
	return &x->tracks[j];
}

/* A TrackDescriptor: a named track of the process, or a thread's. */
void pf_describe(struct pf *x, uint64_t uuid, const char *name, int64_t tid,
		 bool counter)
{
	size_t p = pf_packet_open(x, UINT64_MAX, false);
	size_t d = pb_open(&x->o, PKT_TRACK_DESCRIPTOR);

	pb_varint(&x->o, TD_UUID, uuid);
	pb_varint(&x->o, TD_PARENT_UUID, pf_process_uuid(x));
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
	pf_packet_close(x, p);
}

uint64_t pf_process_uuid(struct pf *x)
{
	bool fresh;
	struct track *t = pf_track_find(x, DT_TL_PROCESS, &fresh);

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
	struct track *t = pf_track_find(x, key, &fresh);

	if (t && fresh) {
		t->uuid[0] = ++x->next_uuid;
		t->lanes = 1;
		vsnprintf(t->name, sizeof(t->name), fmt, ap);
		pf_describe(x, t->uuid[0], t->name, tid, counter);
	}
	return t;
}

struct track *pf_track_of(struct pf *x, uint32_t key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	struct track *t = vtrack(x, key, -1, false, fmt, ap);
	va_end(ap);
	return t;
}

/* Its uuid. */
uint64_t pf_track(struct pf *x, uint32_t key, int64_t tid, bool counter,
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
uint64_t pf_lane(struct pf *x, struct track *t, uint64_t start, uint64_t end)
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
			pf_describe(x, t->uuid[i], name, -1, false);
		}
	}
	if (end > t->lane_end[i])
		t->lane_end[i] = end;
	return t->uuid[i];
}

/* ------------------------------------------------------------- slices */

/* The TrackEvent opening a slice (or an instant) named name on uuid,
 * into pb; annotations follow. The name lives as long as the export. */
void pf_event_head(struct pf *x, struct pb *pb, int type, uint64_t uuid,
		   const char *name)
{
	pb->len = 0;
	pb_varint(pb, TE_TYPE, (uint64_t)type);
	pb_varint(pb, TE_TRACK_UUID, uuid);
	pb_varint(pb, TE_NAME_IID, pf_intern_s(x, ID_EVENT_NAMES, name));
	x->events++;
}

/* Start a packet at time t whose track event is ev_len bytes: the
 * packet's length is worked out first, so that nothing is moved to make
 * room for it. */
static bool packet_head(struct pf *x, uint64_t t, bool needs_state,
			size_t ev_len)
{
	uint64_t ts = pf_rel_ns(x, t);
	uint32_t flags = pf_seq_flags(x, needs_state);
	size_t len = 1 + pb_varint_len(ts) + 2 + (flags ? 2 : 0) + 1 +
		     pb_varint_len(ev_len) + ev_len;

	if (x->interned.len)
		len += 1 + pb_varint_len(x->interned.len) + x->interned.len;
	if (!pb_room(&x->o, len + 16))
		return false;
	pb_put_varint(&x->o, (uint64_t)TRACE_PACKET << 3 | PB_LEN);
	pb_put_varint(&x->o, len);
	pf_packet_fields(x, ts, flags);
	pb_put_varint(&x->o, (uint64_t)PKT_TRACK_EVENT << 3 | PB_LEN);
	pb_put_varint(&x->o, ev_len);
	return true;
}

void pf_slice_end(struct pf *x, uint64_t uuid, uint64_t t)
{
	if (!packet_head(x, t, false, 2 + 1 + pb_varint_len(uuid)))
		return;
	pb_varint(&x->o, TE_TYPE, TYPE_SLICE_END);
	pb_varint(&x->o, TE_TRACK_UUID, uuid);
	pf_packet_done(x);
}

/* Write the event in ev (its flows after it) at time t. */
void pf_event_write(struct pf *x, uint64_t t, const struct pb *ev,
		    uint32_t flow_field, const uint64_t *flows, size_t n)
{
	size_t flows_len = n * (pb_varint_len((uint64_t)flow_field << 3) + 8);

	if (!packet_head(x, t, true, ev->len + flows_len))
		return;
	memcpy(x->o.b + x->o.len, ev->b, ev->len);
	x->o.len += ev->len;
	for (size_t i = 0; i < n; i++)
		pb_fixed64(&x->o, flow_field, flows[i]);
	pf_packet_done(x);
}

/* A held slice written out, with the arrows that start on it. */
static void held_write(struct pf *x, struct held *h)
{
	if (!h->used)
		return;
	h->used = false;
	if (!h->body.len || h->early)
		return; /* outside the window, or written */
	pf_event_write(x, h->t0, &h->body, TE_FLOW_IDS, h->flows, h->n_flows);
	pf_slice_end(x, h->track, h->t1);
}

/* Slot h for the slice of key from t0 to t1, written out first if it
 * held another. */
void pf_held_take(struct pf *x, struct held *h, uint64_t key, uint64_t t0,
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

void pf_held_all(struct pf *x)
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
void pf_maybe_clear(struct pf *x)
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
uint64_t pf_flow_to(struct pf *x, uint64_t key, bool graph)
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
void pf_flow_pending(struct pf *x, struct held *h, bool graph)
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
