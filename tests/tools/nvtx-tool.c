/*
 * nvtx-tool.c - the smallest NVTX tool, for the wheel's test: NVTX loads it
 * from NVTX_INJECTION64_PATH, as it loads Nsight Systems', and it says on
 * stderr each range pushed (with its name) and popped in NVTX's default
 * domain. It records nothing else.
 */
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

static int push(const char *message)
{
	fprintf(stderr, "nvtx-tool: push %s\n", message);
	return 0;
}

static int pop(void)
{
	fprintf(stderr, "nvtx-tool: pop\n");
	return 0;
}

/* NVTX's entry into its tool, called at the first NVTX call: the tool
 * fills the slots of the functions it implements. */
__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
	const NvtxExportTableCallbacks *callbacks =
		get_table(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable table;
	unsigned int size;

	if (!callbacks ||
	    !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table,
					       &size) ||
	    size <= NVTX_CBID_CORE_RangePop)
		return 0;
	*table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)push;
	*table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)pop;
	return 1;
}
