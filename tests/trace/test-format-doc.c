/*
 * test-format-doc.c - trace/FORMAT.md must describe the records exactly as
 * the code declares them. With --print, writes the tables the document
 * must contain; otherwise checks the document given as argument.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace-test-util.h"

static const char *const tail_name[] = { "none", "text", "bytes",
					 "arguments (see Call arguments)" };

static void table(const struct dt_rec_desc *d, char *buf, size_t size)
{
	size_t n = 0;

	n += (size_t)snprintf(buf + n, size - n,
			      "#### %s (type %u, %u bytes before the tail)\n\n"
			      "| offset | size | type | field |\n"
			      "|---:|---:|---|---|\n",
			      d->name, d->type, d->fixed);
	for (uint32_t i = 0; i < d->n_fields; i++)
		n += (size_t)snprintf(buf + n, size - n,
				      "| %u | %u | %s | `%s` |\n",
				      d->fields[i].offset, d->fields[i].size,
				      d->fields[i].type, d->fields[i].name);
	snprintf(buf + n, size - n, "\nTail: %s.\n", tail_name[d->tail]);
}

int main(int argc, char **argv)
{
	bool print = argc > 1 && !strcmp(argv[1], "--print");
	size_t size = 0;
	char *doc = NULL;

	if (!print) {
		if (argc != 2) {
			fprintf(stderr, "usage: %s FORMAT.md | --print\n",
				argv[0]);
			return 2;
		}
		doc = (char *)test_slurp(argv[1], &size);
		if (!doc) {
			perror(argv[1]);
			return 1;
		}
		doc = realloc(doc, size + 1);
		doc[size] = 0;
	}
	for (uint16_t t = 0; t < DT_REC_TYPE_COUNT; t++) {
		const struct dt_rec_desc *d = dt_rec_describe(t);
		char expect[4096];

		table(d, expect, sizeof(expect));
		/* readers find a tail's length in the last field */
		if (d->tail != DT_TAIL_NONE &&
		    (strcmp(d->fields[d->n_fields - 1].name, "len") ||
		     strcmp(d->fields[d->n_fields - 1].type, "u32"))) {
			fprintf(stderr,
				"%s has a tail but its last field is "
				"not `len` (u32)\n",
				d->name);
			return 1;
		}
		if (print) {
			printf("%s\n", expect);
		} else if (!strstr(doc, expect)) {
			fprintf(stderr,
				"FORMAT.md lacks or differs from this "
				"table (regenerate with --print):\n%s\n",
				expect);
			dt_test_failures++;
		}
	}
	free(doc);
	TEST_DONE();
}
