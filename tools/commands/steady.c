/*
 * steady.c - the steady state of the commands that list what they read
 * (ops, kernels): the same cut as report's, the summary's
 * (analyzer-summary-cut.c), read alongside in the same pass.
 *
 * Where a trace is cut is known only once it is read, and a listing goes
 * out as it streams: each entry is kept in a file (struct dt_steady's
 * spool) with the time the summary places it by, and once the trace is
 * read the entries from its cut on are handed back, in their order. Memory
 * does not grow with the trace; the file does, by what is listed.
 *
 * Not here: what is listed (cmd-ops.c, cmd-kernels.c), the cut itself.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt-analyzer.h"
#include "tools.h"

struct dt_steady {
	struct dt_summary *s;
	FILE *spool;
	bool failed; /* the spool could not be written */
};

/* An entry as the spool holds it: its time and length, then its bytes. */
struct entry {
	uint64_t t;
	uint64_t len;
};

struct dt_steady *dt_steady_new(bool whole)
{
	struct dt_summary_opts so = { .whole = whole };
	struct dt_steady *st = calloc(1, sizeof(*st));

	if (!st || !(st->s = dt_summary_new(&so)) || !(st->spool = tmpfile())) {
		dt_error("cannot keep the listing until the steady state is "
			 "known: %s",
			 st && st->s ? "no temporary file" : "out of memory");
		dt_steady_free(st);
		return NULL;
	}
	return st;
}

void dt_steady_free(struct dt_steady *st)
{
	if (!st)
		return;
	dt_summary_free(st->s);
	if (st->spool)
		fclose(st->spool);
	free(st);
}

int dt_steady_read(struct dt_steady *st, struct dt_session *ss)
{
	char err[512];

	if (dt_summary_read(st->s, ss, err, sizeof(err)) < 0) {
		dt_error("%s", err);
		return -1;
	}
	return 0;
}

void dt_steady_keep(struct dt_steady *st, uint64_t t, const void *p,
		    size_t len)
{
	struct entry e = { t, len };

	if (fwrite(&e, sizeof(e), 1, st->spool) != 1 ||
	    (len && fwrite(p, len, 1, st->spool) != 1))
		st->failed = true;
}

int dt_steady_each(struct dt_steady *st,
		   void (*fn)(void *arg, const void *p, size_t len), void *arg)
{
	uint64_t from = dt_sum_cut_t(st->s);
	struct entry e;
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	fflush(st->spool);
	rewind(st->spool);
	while (!st->failed && fread(&e, sizeof(e), 1, st->spool) == 1) {
		if (e.len + 1 > cap) {
			char *b = realloc(buf, e.len + 1);
			if (!b) {
				rc = -1;
				break;
			}
			buf = b;
			cap = e.len + 1;
		}
		if (e.len && fread(buf, e.len, 1, st->spool) != 1) {
			rc = -1;
			break;
		}
		buf[e.len] = 0;
		if (e.t >= from)
			fn(arg, buf, e.len);
	}
	free(buf);
	if (st->failed || ferror(st->spool))
		rc = -1;
	if (rc)
		dt_error("the listing kept until the steady state was known "
			 "could not be read back");
	/* emptied for the next trace */
	rewind(st->spool);
	if (ftruncate(fileno(st->spool), 0))
		rc = -1;
	return rc;
}

const struct dt_summary *dt_steady_summary(const struct dt_steady *st)
{
	return st->s;
}
