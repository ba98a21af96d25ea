/*
 * analyzer-summary-tables.c - the summary's tables keyed by name:
 * problems by their signature, functions by name, plan builds by graph,
 * kernels by name, devices; open-addressed hash indexes over growing
 * arrays, so the report's cost per record stays flat however long the
 * trace. And the union of a device's busy intervals, as GPU work comes.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-summary-internal.h"
#include "analyzer-util.h"

/* ----------------------------------------------------------- helpers */

static uint64_t mix64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	return v ^ (v >> 33);
}

static bool index_grow(struct index *x)
{
	size_t cap = x->cap ? x->cap * 2 : 256;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	uint64_t *hash = calloc(cap, sizeof(*hash));

	if (!slot || !hash) {
		free(slot);
		free(hash);
		return false;
	}
	for (size_t i = 0; i < x->cap; i++) {
		if (!x->slot[i])
			continue;
		size_t k = x->hash[i] & (cap - 1);
		while (slot[k])
			k = (k + 1) & (cap - 1);
		slot[k] = x->slot[i];
		hash[k] = x->hash[i];
	}
	free(x->slot);
	free(x->hash);
	x->slot = slot;
	x->hash = hash;
	x->cap = cap;
	return true;
}

/* Find the position whose key matches (eq(arg, pos) true), or return the
 * slot to fill: *fresh is then set and the caller stores pos + 1 there. */
static uint32_t *index_find(struct index *x, uint64_t h,
			    bool (*eq)(const void *arg, uint32_t pos),
			    const void *arg, bool *fresh)
{
	*fresh = false;
	if ((x->used + 1) * 2 > x->cap && !index_grow(x))
		return NULL;
	for (size_t k = h & (x->cap - 1);; k = (k + 1) & (x->cap - 1)) {
		if (!x->slot[k]) {
			x->hash[k] = h;
			x->used++;
			*fresh = true;
			return &x->slot[k];
		}
		if (x->hash[k] == h && eq(arg, x->slot[k] - 1))
			return &x->slot[k];
	}
}

void sum_index_free(struct index *x)
{
	free(x->slot);
	free(x->hash);
}

#define BUSY_MIN_WIDTH 1000         /* ns */
#define BUSY_MAX_SPAN  (1ull << 50) /* ns */

/* Pairs of bins merged: the histogram covers twice the time. */
static void busy_widen(struct dt_busy_hist *h)
{
	dt_bins_fold(h->bins, DT_BUSY_BINS);
	h->width_ns *= 2;
	h->n_bins = (h->n_bins + 1) / 2;
}

/* A settled busy interval, host clock. Intervals come in time order per
 * GPU, not across GPUs: what starts before the first bin, which another
 * GPU's first activity placed, is counted in it. */
static void busy_add(struct dt_busy_hist *h, uint64_t s, uint64_t e)
{
	if (!h->width_ns)
		h->width_ns = BUSY_MIN_WIDTH;
	if (e <= h->t0) {
		h->bins[0] += e - s;
		h->busy_ns += e - s;
		return;
	}
	if (s < h->t0) {
		h->bins[0] += h->t0 - s;
		h->busy_ns += h->t0 - s;
		s = h->t0;
	}
	/* a damaged trace's times: the bins span 13 days at most, so that
	 * their width cannot overflow */
	if (e - h->t0 > BUSY_MAX_SPAN)
		e = h->t0 + BUSY_MAX_SPAN;
	if (s > e)
		s = e;
	while (e - h->t0 > DT_BUSY_BINS * h->width_ns)
		busy_widen(h);
	uint64_t i = (s - h->t0) / h->width_ns;
	for (;; i++) {
		uint64_t bs = h->t0 + i * h->width_ns, be = bs + h->width_ns;
		h->bins[i] += (e < be ? e : be) - (s > bs ? s : bs);
		if (e <= be)
			break;
	}
	if (i + 1 > h->n_bins)
		h->n_bins = (uint32_t)(i + 1);
	h->busy_ns += e - s;
}

/* The interval being merged is settled. */
static void merger_close(struct merger *g)
{
	g->busy += g->cur_e - g->cur_s;
	if (g->hist)
		busy_add(g->hist, (uint64_t)((int64_t)g->cur_s + g->to_host),
			 (uint64_t)((int64_t)g->cur_e + g->to_host));
}

static void merge_out(struct merger *g, size_t n)
{
	uint64_t was = g->busy + g->known_ns;

	for (size_t i = 0; i < n; i++) {
		uint64_t s = g->iv[i][0], e = g->iv[i][1];
		if (s < g->done)
			s = g->done;
		if (e <= s)
			continue;
		if (g->open && s <= g->cur_e) {
			if (e > g->cur_e)
				g->cur_e = e;
			continue;
		}
		if (g->open) {
			merger_close(g);
			g->done = g->cur_e;
		}
		g->open = true;
		g->cur_s = s < g->done ? g->done : s;
		g->cur_e = e;
	}
	memmove(g->iv, g->iv + n, (g->n - n) * sizeof(g->iv[0]));
	g->n -= n;
	/* the union of what was walked (sum_merger_busy) is of the same
	 * intervals, some of them settled now: it stands, less what busy
	 * took, and the walk goes on where it was (walking the window again
	 * after each merge was most of the cut's cost in busy time) */
	if (g->known >= n) {
		g->known -= n;
		g->known_ns = was - g->busy;
	} else {
		g->known = 0;
	}
}

void sum_merger_add(struct merger *g, uint64_t s, uint64_t e)
{
	if (e <= s)
		return;
	if (!g->iv) {
		g->iv = malloc(MERGE_WINDOW * sizeof(g->iv[0]));
		if (!g->iv)
			return;
		g->first = s;
	}
	if (s < g->first)
		g->first = s;
	if (e > g->last)
		g->last = e;
	if (g->n == MERGE_WINDOW)
		merge_out(g, MERGE_WINDOW / 2);
	size_t i = g->n++;
	while (i && g->iv[i - 1][0] > s) {
		g->iv[i][0] = g->iv[i - 1][0];
		g->iv[i][1] = g->iv[i - 1][1];
		i--;
	}
	if (i < g->known)
		g->known = 0; /* the union so far is to be walked again */
	g->iv[i][0] = s;
	g->iv[i][1] = e;
}

/* [s, e) past what was counted up to *upto. */
static uint64_t past(uint64_t s, uint64_t e, uint64_t *upto)
{
	if (s < *upto)
		s = *upto;
	if (e <= s)
		return 0;
	*upto = e;
	return e - s;
}

uint64_t sum_merger_busy(struct merger *g)
{
	/* the union of the window so far, from where it was left: records
	 * come about in order, so a later call walks only the new ones */
	if (!g->known) {
		g->known_ns = 0;
		g->known_upto = g->done;
		if (g->open)
			g->known_ns = past(g->cur_s, g->cur_e, &g->known_upto);
	}
	for (; g->known < g->n; g->known++)
		g->known_ns += past(g->iv[g->known][0], g->iv[g->known][1],
				    &g->known_upto);
	return g->busy + g->known_ns;
}

void sum_merger_finish(struct merger *g)
{
	if (g->iv)
		merge_out(g, g->n);
	if (g->open)
		merger_close(g);
	g->open = false;
	free(g->iv);
	g->iv = NULL;
}

/* -------------------------------------------------------------- tables */

struct dt_sum_lib *sum_lib(struct dt_summary *s, const char *library)
{
	const char *name = library ? library : "?";
	struct priv *pv = P(s);
	/* the names come from the trace (its API table has one per function)
	 * or the model: a call's, an activity's, an op's finds its row by the
	 * pointer, without comparing strings */
	size_t h = ((uintptr_t)library >> 4) % SUM_LIB_SEEN, i = 0;

	if (library && pv->lib_seen[h].name == library)
		return &s->libs[pv->lib_seen[h].lib];
	while (i < s->n_libs && strcmp(s->libs[i].library, name))
		i++;
	if (i < s->n_libs) {
		pv->lib_seen[h].name = library;
		pv->lib_seen[h].lib = (uint32_t)i;
		return &s->libs[i];
	}
	if (s->n_libs == DT_SUM_LIBS)
		return &s->libs[DT_SUM_LIBS - 1];
	struct dt_sum_lib *l = &s->libs[s->n_libs];
	if (!(l->library = strdup(name)) ||
	    !(l->display = strdup(dt_library_display(name)))) {
		free(l->library);
		return &s->libs[s->n_libs ? s->n_libs - 1 : 0];
	}
	s->n_libs++;
	return l;
}

struct key_arg {
	const struct dt_summary *s;
	const char *key;
	const char *api;
};

static bool problem_eq(const void *arg, uint32_t pos)
{
	const struct key_arg *k = arg;
	const struct dt_sum_problem *p = &k->s->problems[pos];
	return !strcmp(p->api, k->api) && !strcmp(p->key, k->key);
}

static struct dt_sum_problem *problem_by_key(struct dt_summary *s,
					     const struct dt_op *op);

/* Ops of one problem carry the same id within a file: the key is hashed
 * once per problem and file, not once per op. */
struct dt_sum_problem *sum_problem_of(struct dt_summary *s,
				      const struct dt_op *op)
{
	struct priv *pv = P(s);
	size_t k;

	if ((pv->n_ids + 1) * 2 > pv->cap_ids) {
		size_t cap = pv->cap_ids ? pv->cap_ids * 2 : 1024;
		void *v = calloc(cap, sizeof(*pv->ids));
		if (!v)
			return problem_by_key(s, op);
		for (size_t i = 0; i < pv->cap_ids; i++) {
			if (!pv->ids[i].problem)
				continue;
			k = (size_t)mix64(pv->ids[i].id) & (cap - 1);
			while (((typeof(pv->ids))v)[k].problem)
				k = (k + 1) & (cap - 1);
			((typeof(pv->ids))v)[k] = pv->ids[i];
		}
		free(pv->ids);
		pv->ids = v;
		pv->cap_ids = cap;
	}
	for (k = (size_t)mix64(op->problem_id) & (pv->cap_ids - 1);
	     pv->ids[k].problem; k = (k + 1) & (pv->cap_ids - 1))
		if (pv->ids[k].id == op->problem_id)
			return &s->problems[pv->ids[k].problem - 1];
	struct dt_sum_problem *p = problem_by_key(s, op);
	if (p) {
		pv->ids[k].id = op->problem_id;
		pv->ids[k].problem = (uint32_t)(p - s->problems) + 1;
		pv->n_ids++;
	}
	return p;
}

static struct dt_sum_problem *problem_by_key(struct dt_summary *s,
					     const struct dt_op *op)
{
	struct priv *pv = P(s);
	struct key_arg k = { s, op->problem ? op->problem : "", op->api };
	bool fresh;
	uint32_t *slot = index_find(
		&pv->problems,
		dt_hash(k.key, strlen(k.key), dt_hash(k.api, strlen(k.api), 0)),
		problem_eq, &k, &fresh);

	if (!slot)
		return NULL;
	if (!fresh)
		return &s->problems[*slot - 1];
	struct dt_sum_problem *v = dt_grow_array(s->problems, &pv->cap_problems,
						 s->n_problems + 1, sizeof(*v));
	if (!v)
		return NULL;
	s->problems = v;
	struct dt_sum_problem *p = &s->problems[s->n_problems];
	p->key = strdup(k.key);
	p->brief = dt_xstrdup(op->brief ? op->brief : k.key);
	p->api = strdup(op->api);
	p->kind = op->cost.kind;
	p->math = op->math;
	p->dtype = op->cost.dtype;
	p->tensor_cores = op->tensor_cores;
	p->flops = op->cost.flops;
	p->bytes = op->cost.bytes;
	p->device = -1;
	p->workspace = -1;
	*slot = (uint32_t)++s->n_problems;
	return p;
}

static bool api_eq(const void *arg, uint32_t pos)
{
	const struct key_arg *k = arg;
	return !strcmp(k->s->apis[pos].name, k->key);
}

uint32_t sum_api_of(struct dt_summary *s, const char *name)
{
	struct priv *pv = P(s);
	struct key_arg k = { s, name, NULL };
	bool fresh;
	uint32_t *slot = index_find(&pv->apis, dt_hash(name, strlen(name), 1),
				    api_eq, &k, &fresh);

	if (!slot)
		return 0;
	if (!fresh)
		return *slot;
	struct dt_sum_api *v = dt_grow_array(s->apis, &pv->cap_apis,
					     s->n_apis + 1, sizeof(*v));
	if (!v)
		return 0;
	s->apis = v;
	s->apis[s->n_apis].name = strdup(name);
	*slot = (uint32_t)++s->n_apis;
	return *slot;
}

static bool build_eq(const void *arg, uint32_t pos)
{
	const struct key_arg *k = arg;
	return !strcmp(k->s->builds[pos].key, k->key);
}

int32_t sum_build_of(struct dt_summary *s, const char *key, const char *brief,
		     enum dt_op_kind kind)
{
	struct priv *pv = P(s);
	struct key_arg k = { s, key, NULL };
	bool fresh;
	uint32_t *slot = index_find(&pv->builds, dt_hash(key, strlen(key), 2),
				    build_eq, &k, &fresh);

	if (!slot)
		return -1;
	if (!fresh)
		return (int32_t)*slot - 1;
	size_t cap = pv->cap_builds;
	struct dt_sum_build *v = dt_grow_array(s->builds, &pv->cap_builds,
					       s->n_builds + 1, sizeof(*v));
	if (!v)
		return -1;
	s->builds = v;
	if (pv->cap_builds != cap) {
		struct plan_seen **ps =
			realloc(pv->seen, pv->cap_builds * sizeof(*ps));
		uint32_t *ns =
			realloc(pv->n_seen, pv->cap_builds * sizeof(*ns));
		if (ps)
			pv->seen = ps;
		if (ns)
			pv->n_seen = ns;
		if (!ps || !ns)
			return -1;
	}
	pv->seen[s->n_builds] = NULL;
	pv->n_seen[s->n_builds] = 0;
	struct dt_sum_build *b = &s->builds[s->n_builds];
	b->key = strdup(key);
	b->brief = dt_xstrdup(brief);
	b->kind = kind;
	*slot = (uint32_t)++s->n_builds;
	return (int32_t)s->n_builds - 1;
}

struct kn_arg {
	const struct priv *pv;
	const char *name;
	uint32_t len;
};

static bool kname_eq(const void *arg, uint32_t pos)
{
	const struct kn_arg *k = arg;
	const struct kname *n = &k->pv->kn[pos];
	return n->len == k->len && !memcmp(n->name, k->name, k->len);
}

static struct kname *kname_of(struct dt_summary *s, const char *name,
			      uint32_t len)
{
	struct priv *pv = P(s);
	struct kn_arg k = { pv, name, len };
	bool fresh;
	uint32_t *slot = index_find(&pv->knames, dt_hash(name, len, 3),
				    kname_eq, &k, &fresh);

	if (!slot)
		return NULL;
	if (!fresh)
		return &pv->kn[*slot - 1];
	struct kname *v =
		dt_grow_array(pv->kn, &pv->cap_kn, pv->n_kn + 1, sizeof(*v));
	if (!v)
		return NULL;
	pv->kn = v;
	struct kname *n = &pv->kn[pv->n_kn];
	n->name = strndup(name, len);
	n->len = len;
	*slot = (uint32_t)++pv->n_kn;
	return n;
}

/* The entry of the kernel name the model numbered kc->id in this file. */
struct kname *sum_kname_by_model(struct dt_summary *s,
				 const struct dt_kernel_class *kc)
{
	struct priv *pv = P(s);
	uint32_t *v = dt_grow_array(pv->kn_by_model, &pv->cap_kn_by_model,
				    (size_t)kc->id + 1, sizeof(*v));

	if (!v)
		return NULL;
	pv->kn_by_model = v;
	if (!v[kc->id]) {
		struct kname *n = kname_of(s, kc->name, kc->len);
		if (!n)
			return NULL;
		v[kc->id] = (uint32_t)(n - pv->kn) + 1;
	}
	return &pv->kn[v[kc->id] - 1];
}

struct dt_sum_convert *sum_convert_of(struct dt_summary *s, struct kname *n,
				      bool in_cudnn)
{
	struct priv *pv = P(s);
	int32_t *ix = &n->convert[in_cudnn];

	if (!*ix) {
		struct dt_sum_convert *v =
			dt_grow_array(s->converts, &pv->cap_converts,
				      s->n_converts + 1, sizeof(*v));
		if (!v)
			return NULL;
		s->converts = v;
		s->converts[s->n_converts].name = strdup(n->name);
		s->converts[s->n_converts].in_cudnn = in_cudnn;
		*ix = (int32_t)++s->n_converts;
	}
	return &s->converts[*ix - 1];
}

/* ------------------------------------------------------------- devices */

int32_t sum_device_of(struct dt_summary *s, const struct dt_device *d)
{
	struct priv *pv = P(s);
	struct dt_device dev = *d;

	dev.rec = NULL;
	/* one entry per kind of GPU: ranks on identical GPUs share it */
	for (size_t i = 0; i < s->n_devices; i++) {
		struct dt_device *o = &s->devices[i];
		if (!strcmp(o->name, dev.name) && o->sms == dev.sms &&
		    o->clock_khz == dev.clock_khz &&
		    o->mem_bandwidth_kBps == dev.mem_bandwidth_kBps &&
		    o->cc_major == dev.cc_major && o->cc_minor == dev.cc_minor)
			return (int32_t)i;
	}
	size_t cap = pv->cap_devices;
	struct dt_device *v =
		dt_grow_array(s->devices, &cap, s->n_devices + 1, sizeof(*v));
	if (!v)
		return -1;
	s->devices = v;
	size_t cap2 = pv->cap_devices;
	struct dt_peaks *pk =
		dt_grow_array(s->peaks, &cap2, s->n_devices + 1, sizeof(*pk));
	if (!pk)
		return -1;
	s->peaks = pk;
	pv->cap_devices = cap;
	s->devices[s->n_devices] = dev;
	return (int32_t)s->n_devices++;
}

int32_t sum_map_device(const struct priv *pv, int32_t id)
{
	return id >= 0 && id < 64 ? pv->dev_map[id] : -1;
}

void dt_graph_stats_add(struct dt_graph_stats *sum,
			const struct dt_graph_stats *g)
{
	sum->kernels += g->kernels;
	sum->attributed += g->attributed;
	sum->unknown += g->unknown;
	sum->mismatch += g->mismatch;
	sum->unresolved += g->unresolved;
	sum->captured += g->captured;
	sum->replays += g->replays;
	sum->partial += g->partial;
	sum->launches += g->launches;
	sum->launched += g->launched;
	sum->launch_ns += g->launch_ns;
	sum->nodes += g->nodes;
}
