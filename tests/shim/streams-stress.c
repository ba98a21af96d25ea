/*
 * streams-stress.c - shim-streams.c's table of handles' streams, written
 * and read from several threads at once: eight handles that share one
 * bucket of three, each one's stream a function of its address, learned
 * and forgotten by two threads while two others read them. A reader must
 * get each handle's own stream, from the table or from the library (a
 * stub that answers the same), never another handle's.
 * Exits 0 when none was wrong, after printing how many reads were made.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

/* the table itself, its buckets included */
#include "shim-streams.c"

#define HANDLES 16384u /* candidates */
#define SHARED  8u     /* handles that share a bucket */
#define ROUNDS  2000000u

static char candidates[HANDLES * 16]; /* addresses only */
static void *handles[SHARED];
static _Atomic unsigned long asked, wrong, reads;
static _Atomic int writers_done;

static void *stream_for(const void *handle)
{
	return (void *)((uintptr_t)handle ^ 0x5a5a0000u);
}

static bool ask(void *handle, void **stream)
{
	atomic_fetch_add_explicit(&asked, 1, memory_order_relaxed);
	*stream = stream_for(handle);
	return true;
}

const struct dt_library dt_libraries[1] = { { .name = "stress",
					      .get_stream = ask } };

/* Handles that share the first one's bucket. */
static unsigned share_a_bucket(void)
{
	unsigned n = 1;

	handles[0] = &candidates[0];
	for (unsigned i = 1; i < HANDLES && n < SHARED; i++)
		if (bucket_of(&candidates[i * 16]) == bucket_of(handles[0]))
			handles[n++] = &candidates[i * 16];
	return n;
}

static void *pick(uint32_t *seed)
{
	*seed = *seed * 1664525u + 1013904223u;
	return handles[(*seed >> 8) % SHARED];
}

static void *writer(void *arg)
{
	uint32_t seed = (uint32_t)(uintptr_t)arg;

	for (unsigned i = 0; i < ROUNDS; i++) {
		void *h = pick(&seed);
		if (seed & 0x10000)
			dt_stream_learn(0, h, stream_for(h));
		else
			dt_stream_forget(0, h);
	}
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

static void *reader(void *arg)
{
	uint32_t seed = (uint32_t)(uintptr_t)arg;
	unsigned long n = 0;

	while (atomic_load_explicit(&writers_done, memory_order_relaxed) < 2) {
		void *h = pick(&seed), *s = NULL;
		if (!dt_stream_of(0, h, &s) || s != stream_for(h))
			atomic_fetch_add(&wrong, 1);
		n++;
	}
	atomic_fetch_add(&reads, n);
	return NULL;
}

int main(void)
{
	pthread_t w[2], r[2];

	if (share_a_bucket() < SHARED) {
		printf("no %u handles share a bucket\n", SHARED);
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		pthread_create(&w[i], NULL, writer, (void *)(uintptr_t)(i + 1));
		pthread_create(&r[i], NULL, reader, (void *)(uintptr_t)(i + 7));
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(w[i], NULL);
		pthread_join(r[i], NULL);
	}
	printf("%lu reads, %lu asked of the library, %lu wrong\n",
	       atomic_load(&reads), atomic_load(&asked), atomic_load(&wrong));
	return atomic_load(&wrong) ? 1 : 0;
}
