/*
 * export-perfetto-packets.c - the packets of `dnntrace export --format
 * perfetto`'s one sequence: their fields and sequence flags, the strings
 * interned into them (names, argument names and values, written once,
 * then referred to by number), and the debug annotations that refer to
 * those strings.
 *
 * It writes packets; which tracks and events they hold is
 * export-perfetto-tracks.c's and export-perfetto.c's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export-perfetto.h"
#include "tools.h"

/* dt_hash, never 0 (0 marks a free entry) */
uint64_t pf_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	uint64_t h = dt_hash(p, n, seed);
	return h ? h : 1;
}

uint64_t pf_rel_ns(const struct pf *x, uint64_t mono)
{
	return dt_export_ns(x->t, mono);
}

/* The sequence flags of the packet written next: the first after a
 * clear says so, one using interned data needs the state. */
uint32_t pf_seq_flags(struct pf *x, bool needs_state)
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
void pf_packet_fields(struct pf *x, uint64_t ts, uint32_t flags)
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
void pf_packet_done(struct pf *x)
{
	if (x->o.len >= (1u << 20))
		dt_handoff_give(&x->w, &x->o);
}

/* Start a packet whose length is not known yet; ts is a host time of the
 * trace, or UINT64_MAX for none. Returns its pb_open mark. */
size_t pf_packet_open(struct pf *x, uint64_t ts, bool needs_state)
{
	size_t at = pb_open(&x->o, TRACE_PACKET);

	pf_packet_fields(x, ts == UINT64_MAX ? ts : pf_rel_ns(x, ts),
			 pf_seq_flags(x, needs_state));
	return at;
}

void pf_packet_close(struct pf *x, size_t at)
{
	pb_close(&x->o, at);
	pf_packet_done(x);
}

/* The number of a string of one kind (ID_EVENT_NAMES, ...), added to the
 * next packet's interned data the first time. */
uint64_t pf_intern(struct pf *x, uint32_t kind, const char *s, size_t n)
{
	uint64_t h = pf_hash_bytes(s, n, kind);

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
uint64_t pf_intern_sn(struct pf *x, uint32_t kind, const char *s, size_t n)
{
	uintptr_t k = (uintptr_t)s ^ kind;
	struct lit *l = &x->lits[(k >> 3 ^ k >> 13) % LITS];

	if (l->s == s && l->kind == kind && l->clears == x->clears)
		return l->iid;
	*l = (struct lit){ s, kind, x->clears, pf_intern(x, kind, s, n) };
	return l->iid;
}

uint64_t pf_intern_s(struct pf *x, uint32_t kind, const char *s)
{
	uintptr_t k = (uintptr_t)s ^ kind;
	const struct lit *l = &x->lits[(k >> 3 ^ k >> 13) % LITS];

	if (l->s == s && l->kind == kind && l->clears == x->clears)
		return l->iid;
	return pf_intern_sn(x, kind, s, strlen(s));
}

/* Debug annotations (TrackEvent.debug_annotations) into pb. */
void pf_ann_uint(struct pf *x, struct pb *pb, const char *name, uint64_t v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, pf_intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_UINT, v);
	pb_close(pb, at);
}

void pf_ann_int(struct pf *x, struct pb *pb, const char *name, int64_t v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, pf_intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_INT, (uint64_t)v);
	pb_close(pb, at);
}

void pf_ann_double(struct pf *x, struct pb *pb, const char *name, double v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, pf_intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_double(pb, DA_DOUBLE, v);
	pb_close(pb, at);
}

void pf_ann_bool(struct pf *x, struct pb *pb, const char *name)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, pf_intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_BOOL, 1);
	pb_close(pb, at);
}

/* A string value, interned: for values that repeat. */
void pf_ann_stri(struct pf *x, struct pb *pb, const char *name, size_t name_len,
		 const char *v, size_t n)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID,
		  pf_intern(x, ID_ANNOTATION_NAMES, name, name_len));
	pb_varint(pb, DA_STRING_IID, pf_intern(x, ID_STRING_VALUES, v, n));
	pb_close(pb, at);
}

/* A string value that lives as long as the export, interned by its
 * address. */
void pf_ann_lit(struct pf *x, struct pb *pb, const char *name, const char *v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, pf_intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_STRING_IID, pf_intern_s(x, ID_STRING_VALUES, v));
	pb_close(pb, at);
}

void pf_ann_str(struct pf *x, struct pb *pb, const char *name, const char *v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, pf_intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_varint(pb, DA_STRING_IID,
		  pf_intern(x, ID_STRING_VALUES, v, strlen(v)));
	pb_close(pb, at);
}

/* A string value written out: for one-off values. */
void pf_ann_text(struct pf *x, struct pb *pb, const char *name, const char *v)
{
	size_t at = pb_open(pb, TE_DEBUG_ANNOTATIONS);
	pb_varint(pb, DA_NAME_IID, pf_intern_s(x, ID_ANNOTATION_NAMES, name));
	pb_str(pb, DA_STRING, v);
	pb_close(pb, at);
}
