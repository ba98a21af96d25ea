/*
 * cupti-none.c - dt-cupti.h for builds without the CUPTI headers: GPU
 * activity is never recorded, and every trace's header says why.
 */
#include <stddef.h>

#include "dt-cupti.h"

volatile int dt_cupti_tagging;

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
