/*
 * export-handoff.c - the second thread of an export (export-handoff.h).
 */
#include "export-handoff.h"

static void *worker_main(void *arg)
{
	struct dt_handoff *h = arg;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->full.len && !h->stop)
			pthread_cond_wait(&h->cond, &h->lock);
		if (!h->full.len)
			break;
		bool failed = h->failed;
		pthread_mutex_unlock(&h->lock);
		bool ok = failed || h->work(h->arg, h->full.b, h->full.len);
		pthread_mutex_lock(&h->lock);
		h->failed |= !ok;
		h->full.len = 0;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

void dt_handoff_start(struct dt_handoff *h, dt_handoff_work work, void *arg)
{
	*h = (struct dt_handoff){ .work = work, .arg = arg };
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	h->started = !pthread_create(&h->thread, NULL, worker_main, h);
}

bool dt_handoff_give(struct dt_handoff *h, struct pb *pb)
{
	if (!pb->len)
		return !h->failed;
	if (!h->started) {
		if (!h->failed && !h->work(h->arg, pb->b, pb->len))
			h->failed = true;
		pb->len = 0;
		return !h->failed;
	}
	pthread_mutex_lock(&h->lock);
	while (h->full.len)
		pthread_cond_wait(&h->cond, &h->lock);
	struct pb empty = h->full;
	h->full = *pb;
	*pb = empty;
	bool ok = !h->failed;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	return ok;
}

bool dt_handoff_stop(struct dt_handoff *h)
{
	if (h->started) {
		pthread_mutex_lock(&h->lock);
		h->stop = true;
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
		h->started = false;
	}
	if (h->work) {
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->cond);
		h->work = NULL;
	}
	pb_free(&h->full);
	return !h->failed;
}
