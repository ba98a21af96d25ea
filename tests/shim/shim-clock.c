/*
 * shim-clock.c - cuDNN calls bracketed by the program's own readings of
 * CLOCK_MONOTONIC, for test-clock.sh to hold the times the shim records
 * against: the shim reads the CPU's counter, and must agree with the
 * clock. Calls come in bursts with sleeps between, over about 450 ms, so
 * the shim's calibration and several of its rebases fall among them.
 * Prints "before after" (ns) per call.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <cudnn.h>

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	static const int sleeps_us[] = { 0, 500, 1000, 3000, 10000, 30000,
					  60000, 120000, 150000, 80000 };

	for (size_t i = 0; i < sizeof(sleeps_us) / sizeof(*sleeps_us); i++) {
		usleep((useconds_t)sleeps_us[i]);
		for (int k = 0; k < 50; k++) {
			cudnnTensorDescriptor_t d;
			uint64_t a = mono();
			if (cudnnCreateTensorDescriptor(&d) !=
			    CUDNN_STATUS_SUCCESS)
				return 1;
			uint64_t b = mono();
			printf("%llu %llu\n", (unsigned long long)a,
			       (unsigned long long)b);
			cudnnDestroyTensorDescriptor(d);
		}
	}
	return 0;
}
