/*
 * analyzer-pipe.c - messages from one thread to a second, a block at a
 * time (analyzer-pipe.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-pipe.h"

#define BLOCK  (512u << 10)
#define BLOCKS 8

struct msg_hdr {
	uint32_t kind;
	uint32_t size; /* of the message after this header, 8-aligned */
};

struct dt_pipe {
	struct dt_pipe_window w; /* first: dt_pipe_put() reads it */
	dt_pipe_fn fn;
	void *arg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* any change of `handed` or `done` */
	uint8_t *block[BLOCKS];
	size_t len[BLOCKS];
	/* blocks handed to the consumer, and blocks it has finished, since
	 * the start; the producer fills block[handed % BLOCKS] */
	unsigned handed, done;
	bool quit;
};

static void consume(struct dt_pipe *p, uint8_t *b, size_t len)
{
	size_t at = 0;

	while (at < len) {
		struct msg_hdr *h = (struct msg_hdr *)(b + at);
		at += sizeof(*h);
		p->fn(p->arg, h->kind, b + at, h->size);
		at += h->size;
	}
}

static void *pipe_main(void *arg)
{
	struct dt_pipe *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->done == p->handed && !p->quit)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->done == p->handed)
			break;
		unsigned i = p->done % BLOCKS;
		pthread_mutex_unlock(&p->lock);
		consume(p, p->block[i], p->len[i]);
		pthread_mutex_lock(&p->lock);
		p->done++;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct dt_pipe *dt_pipe_new(dt_pipe_fn fn, void *arg)
{
	struct dt_pipe *p = calloc(1, sizeof(*p));
	int i;

	if (!p)
		return NULL;
	p->fn = fn;
	p->arg = arg;
	for (i = 0; i < BLOCKS; i++)
		if (!(p->block[i] = malloc(BLOCK)))
			goto fail;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->w.at = p->block[0];
	p->w.end = p->block[0] + BLOCK;
	if (pthread_create(&p->thread, NULL, pipe_main, p) == 0)
		return p;
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
fail:
	for (i = 0; i < BLOCKS; i++)
		free(p->block[i]);
	free(p);
	return NULL;
}

/* Give the block being filled to the consumer (if it holds anything) and
 * wait for the next one to be free; with `all`, for every block. */
static void hand_over(struct dt_pipe *p, bool all)
{
	pthread_mutex_lock(&p->lock);
	uint8_t *b = p->block[p->handed % BLOCKS];
	if (p->w.at > b) {
		p->len[p->handed % BLOCKS] = (size_t)(p->w.at - b);
		p->handed++;
		pthread_cond_broadcast(&p->cond);
	}
	while (all ? p->done != p->handed : p->handed - p->done == BLOCKS)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	p->w.at = p->block[p->handed % BLOCKS];
	p->w.end = p->w.at + BLOCK;
}

void *dt_pipe_put_slow(struct dt_pipe *p, uint32_t kind, size_t n)
{
	if (((n + 7) & ~(size_t)7) > DT_PIPE_MAX)
		return NULL;
	hand_over(p, false);
	return dt_pipe_put(p, kind, n);
}

void dt_pipe_drain(struct dt_pipe *p)
{
	hand_over(p, true);
}

void dt_pipe_free(struct dt_pipe *p)
{
	if (!p)
		return;
	hand_over(p, true);
	pthread_mutex_lock(&p->lock);
	p->quit = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	for (int i = 0; i < BLOCKS; i++)
		free(p->block[i]);
	free(p);
}
