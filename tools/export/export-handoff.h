/*
 * export-handoff.h - a second thread for an export: one thread fills a
 * buffer, hands it over, and fills the next while the other thread works
 * on the one handed over (writes it to a file, or turns it into rows of
 * tables). Two buffers, no queue: the filler waits while the worker is
 * still busy. Private to tools/.
 */
#ifndef EXPORT_HANDOFF_H
#define EXPORT_HANDOFF_H

#include <pthread.h>
#include <stdbool.h>

#include "pb.h"

/* What the worker does with a buffer handed over; false when it failed,
 * after which it is given no more. */
typedef bool (*dt_handoff_work)(void *arg, const uint8_t *b, size_t len);

struct dt_handoff {
	dt_handoff_work work;
	void *arg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pb full; /* handed over, being worked on while len > 0 */
	bool stop, failed, started;
};

/* Start the worker; when no thread can be started, the work is done in
 * dt_handoff_give() instead. */
void dt_handoff_start(struct dt_handoff *h, dt_handoff_work work, void *arg);

/* Hand what *pb holds to the worker, taking back in *pb the buffer it is
 * done with (empty, perhaps with no memory yet). Waits while the worker
 * is busy with the one before. False once the work failed. */
bool dt_handoff_give(struct dt_handoff *h, struct pb *pb);

/* Wait for the worker to finish what it was given, and free its buffer:
 * whether all the work succeeded. */
bool dt_handoff_stop(struct dt_handoff *h);

#endif /* EXPORT_HANDOFF_H */
