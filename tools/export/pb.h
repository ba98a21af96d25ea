/*
 * pb.h - the protocol buffer wire format, written by hand into a growing
 * buffer: varints, fixed64, length-delimited fields. Enough for the
 * messages `dnntrace export --format perfetto` writes; nothing is read.
 * Private to tools/.
 *
 * A nested message is opened with one byte kept for its length and closed
 * by writing the length there, moving the message up on the rare occasion
 * it needs more than one byte (128 bytes or more): most of the messages
 * written are shorter.
 */
#ifndef PB_H
#define PB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pb {
	uint8_t *b;
	size_t len, cap;
	bool oom;  /* a growth failed: what was asked since is lost */
	bool lent; /* b is the owner's memory, not the heap's: moved to the
		      heap when it grows (pb_free() then frees it) */
};

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2 };

/* Room for n more bytes; false (and pb->oom) when there is none. */
static inline bool pb_room(struct pb *pb, size_t n)
{
	if (pb->len + n <= pb->cap)
		return true;
	size_t cap = pb->cap ? pb->cap : 64;
	while (cap < pb->len + n)
		cap *= 2;
	uint8_t *b = pb->lent ? malloc(cap) : realloc(pb->b, cap);
	if (!b) {
		pb->oom = true;
		return false;
	}
	if (pb->lent)
		memcpy(b, pb->b, pb->len);
	pb->lent = false;
	pb->b = b;
	pb->cap = cap;
	return true;
}

static inline void pb_free(struct pb *pb)
{
	if (!pb->lent)
		free(pb->b);
	*pb = (struct pb){ 0 };
}

static inline size_t pb_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80)
		v >>= 7, n++;
	return n;
}

/* Unchecked: the caller made room (at most 10 bytes). */
static inline void pb_put_varint(struct pb *pb, uint64_t v)
{
	uint8_t *p = pb->b + pb->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	pb->len = (size_t)(p - pb->b);
}

static inline void pb_varint(struct pb *pb, uint32_t field, uint64_t v)
{
	if (pb_room(pb, 20)) {
		pb_put_varint(pb, (uint64_t)field << 3 | PB_VARINT);
		pb_put_varint(pb, v);
	}
}

static inline void pb_fixed64(struct pb *pb, uint32_t field, uint64_t v)
{
	if (pb_room(pb, 18)) {
		pb_put_varint(pb, (uint64_t)field << 3 | PB_I64);
		for (int i = 0; i < 8; i++)
			pb->b[pb->len++] = (uint8_t)(v >> (8 * i));
	}
}

static inline void pb_double(struct pb *pb, uint32_t field, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	pb_fixed64(pb, field, v);
}

static inline void pb_bytes(struct pb *pb, uint32_t field, const void *p,
			    size_t n)
{
	if (pb_room(pb, 20 + n)) {
		pb_put_varint(pb, (uint64_t)field << 3 | PB_LEN);
		pb_put_varint(pb, n);
		memcpy(pb->b + pb->len, p, n);
		pb->len += n;
	}
}

static inline void pb_str(struct pb *pb, uint32_t field, const char *s)
{
	pb_bytes(pb, field, s, strlen(s));
}

/* Open a nested message: returns where its length goes (for pb_close). */
static inline size_t pb_open(struct pb *pb, uint32_t field)
{
	if (!pb_room(pb, 11))
		return 0;
	pb_put_varint(pb, (uint64_t)field << 3 | PB_LEN);
	pb->b[pb->len++] = 0;
	return pb->len - 1;
}

static inline void pb_close(struct pb *pb, size_t at)
{
	if (pb->oom)
		return;
	size_t n = pb->len - at - 1;
	size_t k = pb_varint_len(n);
	if (k > 1) {
		if (!pb_room(pb, k - 1))
			return;
		memmove(pb->b + at + k, pb->b + at + 1, n);
	}
	size_t end = pb->len + k - 1;
	pb->len = at;
	pb_put_varint(pb, n);
	pb->len = end;
}

#endif /* PB_H */
