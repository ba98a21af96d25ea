/*
 * fuzz-main.c - runs fuzz targets on the files named on the command line,
 * so that the seed corpus is also an ordinary regression test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "trace-test-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What libFuzzer's -rss_limit_mb does: a damaged trace that makes the
 * reader ask for gigabytes is a finding too. ASan reserves its shadow as
 * address space, so the limit is left to it there. */
static void limit_memory(void)
{
#if !defined(__SANITIZE_ADDRESS__)
	struct rlimit r = { 2ul << 30, 2ul << 30 };
	if (setrlimit(RLIMIT_AS, &r))
		perror("setrlimit");
#endif
}

int main(int argc, char **argv)
{
	limit_memory();
	for (int i = 1; i < argc; i++) {
		size_t size;
		uint8_t *buf = test_slurp(argv[i], &size);
		if (!buf) {
			perror(argv[i]);
			return 1;
		}
		LLVMFuzzerTestOneInput(buf, size);
		/* and every prefix of it, a cheap stand-in for mutation */
		for (size_t cut = 0; cut < size; cut += 1 + size / 512)
			LLVMFuzzerTestOneInput(buf, cut);
		free(buf);
	}
	printf("%d inputs\n", argc - 1);
	return 0;
}
