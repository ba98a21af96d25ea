/*
 * analyzer-pipe.h - hands messages from one thread to a second, which
 * works on them in order. Private to analyzer/.
 *
 * The producer writes messages into a block; a full block goes to the
 * consumer thread whole, so the two meet once a block, not once a
 * message. A few blocks are in flight at most: a producer that gets ahead
 * waits, and memory stays bounded.
 */
#ifndef DT_ANALYZER_PIPE_H
#define DT_ANALYZER_PIPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct dt_pipe;

/* Called on the consumer thread for each message, in the order written:
 * `kind` and the n bytes given to dt_pipe_put(), 8-aligned. */
typedef void (*dt_pipe_fn)(void *arg, uint32_t kind, void *msg, size_t n);

/* Start the consumer thread; NULL when it cannot be started (the caller
 * then does the work itself). */
struct dt_pipe *dt_pipe_new(dt_pipe_fn fn, void *arg);

/* Room for a message of n bytes, to be filled before the next call; NULL
 * when n is larger than a block (DT_PIPE_MAX). */
#define DT_PIPE_MAX (128u << 10)
void *dt_pipe_put_slow(struct dt_pipe *p, uint32_t kind, size_t n);

/* The producer's window into the block it fills: a dt_pipe starts with
 * it, so that most messages are written without a call. */
struct dt_pipe_window {
	uint8_t *at, *end;
};

static inline void *dt_pipe_put(struct dt_pipe *p, uint32_t kind, size_t n)
{
	struct dt_pipe_window *w = (struct dt_pipe_window *)p;
	size_t size = (n + 7) & ~(size_t)7;

	if (size > DT_PIPE_MAX || size + 8 > (size_t)(w->end - w->at))
		return dt_pipe_put_slow(p, kind, n);
	uint32_t h[2] = { kind, (uint32_t)size };
	memcpy(w->at, h, 8);
	w->at += 8 + size;
	return w->at - size;
}

/* Hand over what is written and wait until the consumer has worked on
 * all of it. The consumer is idle when this returns, until the next
 * dt_pipe_put(). */
void dt_pipe_drain(struct dt_pipe *p);

/* Drain, stop the thread and free. */
void dt_pipe_free(struct dt_pipe *p);

#endif /* DT_ANALYZER_PIPE_H */
