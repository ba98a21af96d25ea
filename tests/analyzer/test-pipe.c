/*
 * test-pipe.c - the pipe that hands the fusion analysis its work: every
 * message arrives once, whole and in order, across many blocks; a drain
 * leaves the consumer idle with everything done; a message larger than a
 * block is refused, not cut.
 */
#define _GNU_SOURCE
#include <stdatomic.h>

#include "analyzer-pipe.h"
#include "test-util.h"

struct seen {
	uint64_t next;  /* the sequence number expected next */
	uint64_t bytes; /* payload bytes checked */
	int bad;
	atomic_int busy; /* set while the consumer works on a message */
};

/* A message: its sequence number, then (seq % 251) bytes of its low
 * byte. kind is seq % 7 + 1. */
static size_t msg_size(uint64_t seq)
{
	return 8 + (size_t)(seq * 2654435761u % 4001);
}

static void consume(void *arg, uint32_t kind, void *msg, size_t n)
{
	struct seen *s = arg;
	uint64_t seq;

	if (kind == 99) /* the largest message: its size is what counts */
		return;
	atomic_store(&s->busy, 1);
	memcpy(&seq, msg, 8);
	if (seq != s->next || kind != seq % 7 + 1 ||
	    n != ((msg_size(seq) + 7) & ~(size_t)7))
		s->bad++;
	for (size_t i = 8; i < msg_size(seq); i++)
		if (((uint8_t *)msg)[i] != (uint8_t)seq)
			s->bad++;
	s->bytes += msg_size(seq);
	s->next = seq + 1;
	atomic_store(&s->busy, 0);
}

int main(void)
{
	struct seen s = { 0 };
	struct dt_pipe *p = dt_pipe_new(consume, &s);
	uint64_t sent = 0, bytes = 0;

	CHECK(p != NULL);
	if (!p)
		return 1;
	/* about 400 MB: many times the blocks in flight */
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 50000; i++, sent++) {
			size_t n = msg_size(sent);
			uint8_t *m =
				dt_pipe_put(p, (uint32_t)(sent % 7 + 1), n);
			CHECK(m != NULL);
			if (!m)
				break;
			memcpy(m, &sent, 8);
			memset(m + 8, (uint8_t)sent, n - 8);
			bytes += n;
		}
		dt_pipe_drain(p);
		/* drained: the consumer has seen everything, and works on
		 * nothing */
		CHECK_EQ_U(s.next, sent);
		CHECK_EQ_U(s.bytes, bytes);
		CHECK_EQ_U(atomic_load(&s.busy), 0);
	}
	CHECK(dt_pipe_put(p, 99, DT_PIPE_MAX + 1) == NULL);
	CHECK(dt_pipe_put(p, 99, DT_PIPE_MAX) != NULL);
	dt_pipe_free(p);
	CHECK_EQ_U(s.bad, 0);
	return dt_test_failures ? 1 : 0;
}
