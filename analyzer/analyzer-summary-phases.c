/*
 * analyzer-summary-phases.c - the summary's GPU work by phase: the matrix
 * products it runs between say whether a model generates tokens one at a
 * time (matrix-vector) or runs batches (matrix-matrix); work before the
 * first product is setup (dt_phase, dt_sum_phase).
 *
 * Not here: the rest of the summary (analyzer-summary.c).
 */
#include <string.h>

#include "analyzer-summary-internal.h"

static const struct {
	const char *key, *name;
} phases[DT_PHASE_COUNT] = {
	[DT_PHASE_SETUP] = { "setup",
			     "before the first matrix product (loading)" },
	[DT_PHASE_BATCH] = { "batch",
			     "batches (matrix-matrix products: prompt, "
			     "training)" },
	[DT_PHASE_TOKEN] = { "token",
			     "token generation (matrix-vector products)" },
};

const char *dt_phase_name(enum dt_phase p)
{
	return (unsigned)p < DT_PHASE_COUNT ? phases[p].name : "?";
}

const char *dt_phase_key(enum dt_phase p)
{
	return (unsigned)p < DT_PHASE_COUNT ? phases[p].key : "?";
}

void sum_phase_merge(struct dt_sum_phase *to, struct dt_sum_phase *from)
{
	to->ns += from->ns;
	to->count += from->count;
	to->copy_ns += from->copy_ns;
	to->copy_bytes += from->copy_bytes;
	for (int f = 0; f < DT_OPF_COUNT; f++) {
		to->fam_ns[f] += from->fam_ns[f];
		to->fam_count[f] += from->fam_count[f];
	}
	memset(from, 0, sizeof(*from));
}

/* An activity into its phase: a matrix product says it, for itself and
 * for the work waiting before it. */
void sum_phase_add(struct dt_summary *s, const struct dt_activity *a,
		   enum dt_opfam fam, uint64_t d)
{
	struct priv *pv = P(s);
	struct dt_sum_phase *to = &pv->pending;
	const struct dt_kernel_class *kc = a->kc;

	/* a convolution is a matrix-matrix product too */
	if (kc && a->kind == DT_ACT_KERNEL &&
	    (kc->opfam == DT_OPF_MATMUL || kc->opfam == DT_OPF_CONV)) {
		bool first = pv->phase < 0;
		pv->phase = kc->matvec ? DT_PHASE_TOKEN : DT_PHASE_BATCH;
		to = &s->phases[pv->phase];
		sum_phase_merge(first ? &s->phases[DT_PHASE_SETUP] : to,
			    &pv->pending);
		if (a->kernel && a->kernel->graph_id &&
		    a->corr != pv->last_launch) {
			to->steps++;
			pv->last_launch = a->corr;
		}
	}
	to->ns += d;
	to->count++;
	to->fam_ns[fam] += d;
	to->fam_count[fam]++;
	if (a->kind != DT_ACT_KERNEL) {
		to->copy_ns += d;
		to->copy_bytes += a->bytes;
	}
}
