/*
 * bench-nvtx.c - the cost of one NVTX range to the program: a push and its
 * pop (nvtxRangePushA, nvtxRangePop), with one name every time or cycling
 * through 64 ("aten::op_N"), as PyTorch's emit_nvtx names every op. Prints
 * the median and 90th percentile of the per-range time over batches.
 * bench-nvtx.sh runs it with no NVTX tool and with the shim as the tool.
 * usage: bench-nvtx [same|cycle] [BATCHES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-batches.h"

#include <nvtx3/nvToolsExt.h>

#define BATCH 1000
#define NAMES 64

int main(int argc, char **argv)
{
	int cycle = argc > 1 && !strcmp(argv[1], "cycle");
	int batches = argc > 2 ? atoi(argv[2]) : 2000;
	double *per_range = malloc(sizeof(double) * (size_t)batches);
	char names[NAMES][32];

	for (int i = 0; i < NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "aten::op_%d", i);
	for (int i = 0; i < 10000; i++) { /* NVTX loads its tool */
		nvtxRangePushA(names[i % NAMES]);
		nvtxRangePop();
	}
	for (int b = 0; b < batches; b++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < BATCH; i++) {
			nvtxRangePushA(names[cycle ? i % NAMES : 0]);
			nvtxRangePop();
		}
		per_range[b] = (double)(now_ns() - t0) / BATCH;
	}
	print_median_p90(per_range, batches);
	free(per_range);
	return 0;
}
