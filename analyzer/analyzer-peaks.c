/*
 * analyzer-peaks.c - a GPU's peak rates: memory bandwidth as CUPTI's
 * device record gives it, and arithmetic rates from the architecture's
 * operations per clock per SM (dense, no sparsity) times the record's SM
 * count and clock. The clock is the highest the GPU reports, so these are
 * upper bounds a little above the datasheets' (which quote lower tensor
 * clocks): a percentage of them errs on the modest side.
 */
#include <stdio.h>
#include <string.h>

#include "dt-summary.h"

/* FLOP per clock per SM, dense; 0 where the architecture has no such
 * unit (the FP32 rate then applies). */
static const struct arch {
	uint32_t major, minor;
	const char *name;
	uint32_t rate[DT_MATH_COUNT];
} archs[] = {
	/* fp64 fp32 tf32 fp16 bf16 fp8 int8 */
	{ 7,
	  0,
	  "Volta",
	  { [DT_MATH_FP64] = 64,
	    [DT_MATH_FP32] = 128,
	    [DT_MATH_FP16] = 1024 } },
	{ 7,
	  5,
	  "Turing",
	  { [DT_MATH_FP64] = 4,
	    [DT_MATH_FP32] = 128,
	    [DT_MATH_FP16] = 1024,
	    [DT_MATH_INT8] = 2048 } },
	{ 8,
	  0,
	  "Ampere (A100)",
	  { [DT_MATH_FP64] = 64,
	    [DT_MATH_FP32] = 128,
	    [DT_MATH_TF32] = 1024,
	    [DT_MATH_FP16] = 2048,
	    [DT_MATH_BF16] = 2048,
	    [DT_MATH_INT8] = 4096 } },
	{ 8,
	  6,
	  "Ampere",
	  { [DT_MATH_FP64] = 4,
	    [DT_MATH_FP32] = 256,
	    [DT_MATH_TF32] = 512,
	    [DT_MATH_FP16] = 1024,
	    [DT_MATH_BF16] = 1024,
	    [DT_MATH_INT8] = 2048 } },
	{ 8,
	  9,
	  "Ada",
	  { [DT_MATH_FP64] = 4,
	    [DT_MATH_FP32] = 256,
	    [DT_MATH_TF32] = 512,
	    [DT_MATH_FP16] = 1024,
	    [DT_MATH_BF16] = 1024,
	    [DT_MATH_FP8] = 2048,
	    [DT_MATH_INT8] = 2048 } },
	{ 9,
	  0,
	  "Hopper",
	  { [DT_MATH_FP64] = 128,
	    [DT_MATH_FP32] = 256,
	    [DT_MATH_TF32] = 2048,
	    [DT_MATH_FP16] = 4096,
	    [DT_MATH_BF16] = 4096,
	    [DT_MATH_FP8] = 8192,
	    [DT_MATH_INT8] = 8192 } },
	{ 10,
	  0,
	  "Blackwell",
	  { [DT_MATH_FP64] = 128,
	    [DT_MATH_FP32] = 256,
	    [DT_MATH_TF32] = 4096,
	    [DT_MATH_FP16] = 8192,
	    [DT_MATH_BF16] = 8192,
	    [DT_MATH_FP8] = 16384,
	    [DT_MATH_INT8] = 16384 } },
	{ 12,
	  0,
	  "Blackwell (consumer)",
	  { [DT_MATH_FP64] = 4,
	    [DT_MATH_FP32] = 256,
	    [DT_MATH_TF32] = 512,
	    [DT_MATH_FP16] = 1024,
	    [DT_MATH_BF16] = 1024,
	    [DT_MATH_FP8] = 2048,
	    [DT_MATH_INT8] = 2048 } },
};

/* The row for a compute capability: its own, or the closest one below it
 * within the same major version. */
static const struct arch *arch_of(uint32_t major, uint32_t minor)
{
	const struct arch *best = NULL;

	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
		if (archs[i].major == major && archs[i].minor <= minor &&
		    (!best || archs[i].minor > best->minor))
			best = &archs[i];
	return best;
}

void dt_peaks_for_device(struct dt_peaks *p, const struct dt_device *d)
{
	const struct arch *a = arch_of(d->cc_major, d->cc_minor);
	int n = 0;

	memset(p, 0, sizeof(*p));
	p->bandwidth = (double)d->mem_bandwidth_kBps * 1e3;
	if (p->bandwidth > 0)
		n = snprintf(p->source, sizeof(p->source),
			     "bandwidth from CUPTI's device record");
	if (!a || !d->sms || !d->clock_khz) {
		snprintf(p->source + n, sizeof(p->source) - (size_t)n,
			 "%sno FLOP table for sm_%u%u", n ? "; " : "",
			 d->cc_major, d->cc_minor);
		return;
	}
	double clocks = (double)d->sms * (double)d->clock_khz * 1e3;
	for (int m = 0; m < DT_MATH_COUNT; m++) {
		uint32_t r = a->rate[m];
		if (!r && m != DT_MATH_UNKNOWN)
			r = a->rate[DT_MATH_FP32];
		p->flops[m] = (double)r * clocks;
	}
	p->flops[DT_MATH_UNKNOWN] = 0;
	snprintf(p->source + n, sizeof(p->source) - (size_t)n,
		 "%sFLOP rates: %s (sm_%u%u) per-SM rates x %u SMs x %.2f GHz",
		 n ? "; " : "", a->name, d->cc_major, d->cc_minor, d->sms,
		 (double)d->clock_khz / 1e6);
}
