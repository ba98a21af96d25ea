/*
 * cupti-none.c - dt-cupti.h for builds without the CUPTI headers: GPU
 * activity is never recorded, and every trace's header says why.
 */
#include <stddef.h>

#include "dt-cupti.h"

volatile int dt_cupti_tagging;
__thread uint64_t dt_cupti_call;
volatile int dt_cupti_graphs;
volatile int dt_cupti_sampled;
_Atomic unsigned dt_cupti_window;

void dt_cupti_init(const struct dt_cupti_host *host)
{
	(void)host;
}

int dt_cupti_graph_begin_stream(struct dt_graph_scope *s, void *stream)
{
	(void)stream;
	s->graph = NULL;
	return 0;
}

int dt_cupti_graph_begin(struct dt_graph_scope *s, void *graph, uint32_t how)
{
	(void)graph;
	(void)how;
	s->graph = NULL;
	return 0;
}

void *dt_cupti_driver_wrapper(const char *name, void *real)
{
	(void)name;
	(void)real;
	return NULL;
}
void *dt_cupti_client_wrapper(const char *name, void *real)
	__attribute__((alias("dt_cupti_driver_wrapper")));

void dt_cupti_graph_end(struct dt_graph_scope *s, uint64_t call)
{
	(void)s;
	(void)call;
}

int dt_cupti_start(const struct dt_cupti_sink *sink, unsigned flush_ms)
{
	(void)sink;
	(void)flush_ms;
	return 0;
}

const char *dt_cupti_state(void)
{
	return "off: dnntrace was built without the CUPTI headers";
}

void dt_cupti_push(uint64_t id)
{
	(void)id;
}

void dt_cupti_pop(void)
{
}

void dt_cupti_flush(int forced)
{
	(void)forced;
}

int dt_cupti_flush_async(unsigned timeout_ms)
{
	(void)timeout_ms;
	return -1;
}

void dt_cupti_stop(void)
{
}

void dt_cupti_forget(void)
{
}
