/*
 * fuzz-main.c - runs fuzz targets on the files named on the command line,
 * so that the seed corpus is also an ordinary regression test.
 */
#include <stdio.h>
#include <stdlib.h>

#include "trace-test-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
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
