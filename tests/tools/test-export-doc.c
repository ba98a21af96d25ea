/*
 * test-export-doc.c - analyzer/EXPORT.md must list the tables of
 * `dnntrace export --format sqlite|csv` exactly as export-schema.h
 * declares them: each table with each column, its type and its meaning,
 * and no table the code does not create. With --print, writes the part of
 * the document the tables make; otherwise checks the document given.
 */
#include <ctype.h>
#include <stdbool.h>

#include "export-schema.h"
#include "test-util.h"

#define SECTION "## SQLite and CSV"

static const char *const type_name[] = {
	[XT_INTEGER] = "INTEGER", [XT_REAL] = "REAL", [XT_TEXT] = "TEXT"
};

/* The table's part of the document. */
static void table(const struct xt_table *t, char *buf, size_t size)
{
	size_t n = 0;

	n += (size_t)snprintf(buf + n, size - n,
			      "#### %s\n\n%c%s.\n\n"
			      "| column | type | meaning |\n"
			      "|---|---|---|\n",
			      t->name, toupper((unsigned char)t->what[0]),
			      t->what + 1);
	for (unsigned i = 0; i < t->n_cols && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "| `%s` | %s | %s |\n",
				      t->cols[i].name,
				      type_name[t->cols[i].type],
				      t->cols[i].what);
}

/* Tables the section documents: its "#### " headings. */
static int headings(const char *doc)
{
	const char *s = strstr(doc, "\n" SECTION "\n");
	int n = 0;

	if (!s)
		return -1;
	s += strlen(SECTION) + 2;
	for (const char *l = s; l && strncmp(l, "## ", 3);) {
		n += !strncmp(l, "#### ", 5);
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	return n;
}

int main(int argc, char **argv)
{
	bool print = argc > 1 && !strcmp(argv[1], "--print");
	char *doc = NULL;

	if (!print) {
		FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
		size_t size = 0;
		if (!f) {
			fprintf(stderr, "usage: %s EXPORT.md | --print\n",
				argv[0]);
			return 2;
		}
		if (getdelim(&doc, &size, 0, f) < 0) {
			perror(argv[1]);
			return 1;
		}
		fclose(f);
	}
	for (int t = 0; t < XT_N_TABLES; t++) {
		char expect[16384];

		table(&xt_tables[t], expect, sizeof(expect));
		CHECK(strlen(expect) + 1 < sizeof(expect));
		for (unsigned i = 0; i < xt_tables[t].n_cols; i++)
			CHECK(xt_tables[t].cols[i].what[0]);
		if (print) {
			printf("%s\n", expect);
		} else if (!strstr(doc, expect)) {
			fprintf(stderr,
				"EXPORT.md lacks or differs from this table "
				"(regenerate with --print):\n%s\n",
				expect);
			dt_test_failures++;
		}
	}
	if (!print) {
		int n = headings(doc);
		if (n != XT_N_TABLES) {
			fprintf(stderr,
				"EXPORT.md's section \"%s\" has %d tables, the "
				"export creates %d\n",
				SECTION + 3, n, XT_N_TABLES);
			dt_test_failures++;
		}
	}
	free(doc);
	TEST_DONE();
}
