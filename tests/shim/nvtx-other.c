/*
 * nvtx-other.c - a stand-in for another NVTX tool (Nsight Systems): an
 * injection library that counts the ranges pushed and says how many at
 * exit, on stderr. A program under it and dnntrace must still reach it.
 */
#include <stdio.h>
#include <stdlib.h>

#define NVTX_NO_IMPL /* a tool: NVTX's own code is the program's */
#include <nvtx3/nvToolsExt.h>

static int pushes;

static int push_a(const char *m)
{
	(void)m;
	return pushes++;
}

static void report(void)
{
	fprintf(stderr, "nvtx-other: %d ranges pushed\n", pushes);
}

__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable t;
	unsigned size;

	if (!cb ||
	    !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &size) ||
	    size < NVTX_CBID_CORE_RangePushA)
		return 0;
	*t[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)push_a;
	atexit(report);
	return 1;
}
