/*
 * shim-plans.c - what a backend execution plan runs, asked once per plan.
 *
 * Programs built on cuDNN's frontend read a plan's workspace size, engine
 * and knobs back themselves, and the trace has those answers. A program
 * that does not leaves them unknown; so right after an execution plan is
 * finalized, the shim asks cuDNN once (workspace size, engine, numerical
 * notes, knob choices), through the wrappers, with the calls
 * marked as its own (DT_CALL_BY_DNNTRACE). Never per execution.
 * DNNTRACE_PLAN_QUERY=0 switches this off.
 */
#define _GNU_SOURCE
#include <cudnn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dt-api.h"
#include "shim-runtime.h"
#include "shim-internal.h"

#define MAX_KNOBS 64
#define SLOTS                                                          \
	4096 /* plans alive at once; a collision forgets the older one \
	      */

/* Descriptors created as execution plans, direct-mapped by address. */
static _Atomic uint64_t plans[SLOTS];
static int enabled = -1;

static _Atomic uint64_t *slot(uint64_t desc)
{
	return &plans[(desc >> 4) % SLOTS];
}

/* The argument bytes of the hooked calls are read at fixed offsets: check,
 * once, that the signatures are the ones this code was written for. */
static void plans_init(void)
{
	const char *env = getenv("DNNTRACE_PLAN_QUERY");

	enabled = !(env && !strcmp(env, "0")) &&
		  !strcmp(dt_api_sigs[DT_API_cudnnBackendCreateDescriptor],
			  "descriptorType:e=cudnnBackendDescriptorType_t,"
			  "descriptor:>p") &&
		  !strcmp(dt_api_sigs[DT_API_cudnnBackendFinalize],
			  "descriptor:p") &&
		  !strcmp(dt_api_sigs[DT_API_cudnnBackendDestroyDescriptor],
			  "descriptor:p");
}

static void get(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
		cudnnBackendAttributeType_t type, int64_t n, void *out,
		int64_t *count)
{
	int64_t c = 0;

	if (cudnnBackendGetAttribute(d, name, type, n, count ? count : &c, out))
		if (count)
			*count = 0;
}

static void query_plan(cudnnBackendDescriptor_t plan)
{
	cudnnBackendDescriptor_t cfg = NULL, eng = NULL, knobs[MAX_KNOBS];
	int64_t ws, index, n = 0;

	get(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
	    &ws, NULL);
	if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
					 &cfg))
		return;
	get(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
	    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg, &n);
	if (n == 1 && !cudnnBackendCreateDescriptor(
			      CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng)) {
		get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
		    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &eng, &n);
		if (n == 1) {
			cudnnBackendNumericalNote_t
				notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
			get(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
			    CUDNN_TYPE_INT64, 1, &index, NULL);
			get(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
			    CUDNN_TYPE_NUMERICAL_NOTE,
			    CUDNN_NUMERICAL_NOTE_TYPE_COUNT, notes, NULL);
		}
	}
	/* cuDNN does not say how many knobs a config has without descriptors
	 * to fill: make one per knob type there is (as the frontend does) */
	int64_t made = 0;
	for (; made < CUDNN_KNOB_TYPE_COUNTS && made < MAX_KNOBS; made++)
		if (cudnnBackendCreateDescriptor(
			    CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[made]))
			break;
	if (made) {
		get(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
		    CUDNN_TYPE_BACKEND_DESCRIPTOR, made, knobs, &n);
		for (int64_t i = 0; i < n && i < made; i++) {
			cudnnBackendKnobType_t type;
			int64_t value;
			get(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
			    CUDNN_TYPE_KNOB_TYPE, 1, &type, NULL);
			get(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
			    CUDNN_TYPE_INT64, 1, &value, NULL);
		}
	}
	/* the config first: the analyzer takes its knobs when it goes */
	cudnnBackendDestroyDescriptor(cfg);
	if (eng)
		cudnnBackendDestroyDescriptor(eng);
	for (int64_t i = 0; i < made; i++)
		cudnnBackendDestroyDescriptor(knobs[i]);
}

void dt_plan_hook(struct dt_thread *t)
{
	uint64_t desc;
	int32_t type;

	if (enabled < 0)
		plans_init();
	if (!enabled || t->status != CUDNN_STATUS_SUCCESS || t->by_dnntrace)
		return;
	switch (t->api) {
	case DT_API_cudnnBackendCreateDescriptor:
		memcpy(&type, t->args, 4);
		memcpy(&desc, t->args + 4, 8);
		if (type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
			atomic_store(slot(desc), desc);
		break;
	case DT_API_cudnnBackendDestroyDescriptor:
		memcpy(&desc, t->args, 8);
		atomic_compare_exchange_strong(slot(desc), &desc, 0);
		break;
	case DT_API_cudnnBackendFinalize:
		memcpy(&desc, t->args, 8);
		if (atomic_load(slot(desc)) != desc)
			break;
		/* the calls go through the wrappers, recorded as our own */
		unsigned depth = t->depth;
		t->depth = 0;
		t->by_dnntrace = true;
		query_plan((cudnnBackendDescriptor_t)(uintptr_t)desc);
		t->by_dnntrace = false;
		t->depth = depth;
		break;
	}
}
