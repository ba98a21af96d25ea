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
	size_t fill; /* bytes in the block being filled */
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
	if (p->fill) {
		p->len[p->handed % BLOCKS] = p->fill;
		p->handed++;
		p->fill = 0;
		pthread_cond_broadcast(&p->cond);
	}
	while (all ? p->done != p->handed : p->handed - p->done == BLOCKS)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void *dt_pipe_put(struct dt_pipe *p, uint32_t kind, size_t n)
{
	size_t size = (n + 7) & ~(size_t)7;

	if (size > DT_PIPE_MAX)
		return NULL;
	if (p->fill + sizeof(struct msg_hdr) + size > BLOCK)
		hand_over(p, false);
	uint8_t *b = p->block[p->handed % BLOCKS] + p->fill;
	struct msg_hdr h = { kind, (uint32_t)size };
	memcpy(b, &h, sizeof(h));
	p->fill += sizeof(h) + size;
	return b + sizeof(h);
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
