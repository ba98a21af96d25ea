/*
 * analyzer-ranges.c - the program's NVTX ranges in a trace: which are open
 * when each call is made, what work those calls did, and the filter that
 * keeps only the work inside ranges of a name (the session's `range`).
 *
 * Push ranges belong to their thread: a call is inside one when its thread
 * made it between the push and its pop. Start/end ranges belong to no
 * thread: a call of any thread is inside one when it begins after the
 * start, before the end was read; calls another thread made after the
 * start but that were read before it (the file interleaves threads a
 * buffer at a time) are looked back for among the last RECENT calls. Names are
 * STRING ids until the file is read through (a registered string may come from
 * another thread, later), so ranges are told apart by id while reading and
 * merged by name after. Not a view: the session hands its results to every
 * view.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer-ranges.h"
#include "analyzer-util.h"

/* Ids, as read; more than this many strings is not a trace of ours. */
#define MAX_STRING_ID (1u << 24)

/* uint64 to uint32, open addressing; a key is stored plus one, so that 0
 * marks a free slot. */
struct map {
	uint64_t *k;
	uint32_t *v;
	size_t cap, n;
};

static size_t map_slot(const struct map *m, uint64_t key)
{
	uint64_t h = (key + 1) * 0x9e3779b97f4a7c15u;
	size_t i = (size_t)(h >> 17) & (m->cap - 1);

	while (m->k[i] && m->k[i] != key + 1)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static bool map_get(const struct map *m, uint64_t key, uint32_t *v)
{
	if (!m->cap)
		return false;
	size_t i = map_slot(m, key);
	if (!m->k[i])
		return false;
	*v = m->v[i];
	return true;
}

static bool map_put(struct map *m, uint64_t key, uint32_t v)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct map b = { calloc(m->cap ? m->cap * 2 : 64, 8),
				 calloc(m->cap ? m->cap * 2 : 64, 4),
				 m->cap ? m->cap * 2 : 64, m->n };
		if (!b.k || !b.v) {
			free(b.k);
			free(b.v);
			return false;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->k[i]) {
				size_t j = map_slot(&b, m->k[i] - 1);
				b.k[j] = m->k[i];
				b.v[j] = m->v[i];
			}
		free(m->k);
		free(m->v);
		*m = b;
	}
	size_t i = map_slot(m, key);
	m->n += !m->k[i];
	m->k[i] = key + 1;
	m->v[i] = v;
	return true;
}

/* A range as read: a name and domain by STRING id; what it covered. */
struct key {
	uint32_t name, domain;
	int match; /* the filter's pattern: -1 not known yet, 0 no, 1 yes */
	struct dt_range_stat st;
};

struct open {
	uint64_t id; /* START: nvtxRangeId_t */
	uint64_t t;
	uint32_t key, domain, category, tid;
};

/* The last calls read, for a START read after them. */
#define RECENT 4096
struct recent {
	uint64_t seq, t;
};

struct thread {
	uint32_t tid;
	struct open *stack;
	size_t n, cap;
};

struct dt_ranges {
	char *pattern;
	bool seen; /* any NVTX record */
	char **str;
	size_t n_str;
	struct key *keys;
	size_t n_keys, cap_keys;
	struct map key_of; /* name << 32 | domain */
	struct thread *threads;
	size_t n_threads, cap_threads;
	struct open *started; /* open START ranges */
	size_t n_started, cap_started;
	struct open *ended; /* ENDs read before their START */
	size_t n_ended, cap_ended;
	struct dt_range *list; /* closed ranges and marks */
	size_t n_list, cap_list;
	uint32_t *list_key;
	size_t cap_list_key;
	/* a call's ranges: seq to an offset in pool, where a count (bit
	 * 31: kept by the filter) is followed by that many keys */
	struct map of_call;
	uint32_t *pool;
	size_t n_pool, cap_pool;
	struct dt_range_stat *stats;
	size_t n_stats;
	struct recent recent[RECENT];
	uint64_t n_recent; /* calls read */
};

struct dt_ranges *dt_ranges_new(const char *pattern)
{
	struct dt_ranges *r = calloc(1, sizeof(*r));

	if (r && pattern && !(r->pattern = strdup(pattern))) {
		free(r);
		return NULL;
	}
	return r;
}

void dt_ranges_free(struct dt_ranges *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_str; i++)
		free(r->str[i]);
	for (size_t i = 0; i < r->n_threads; i++)
		free(r->threads[i].stack);
	for (size_t i = 0; i < r->n_stats; i++) {
		free((char *)r->stats[i].name);
		free((char *)r->stats[i].domain);
	}
	for (size_t i = 0; i < r->n_list; i++) {
		free((char *)r->list[i].name);
		free((char *)r->list[i].domain);
	}
	free(r->str);
	free(r->keys);
	free(r->key_of.k);
	free(r->key_of.v);
	free(r->threads);
	free(r->started);
	free(r->ended);
	free(r->list);
	free(r->list_key);
	free(r->of_call.k);
	free(r->of_call.v);
	free(r->pool);
	free(r->stats);
	free(r->pattern);
	free(r);
}

/* ------------------------------------------------------------ reading */

static void on_string(struct dt_ranges *r, const struct dt_rec_hdr *h)
{
	const struct dt_rec_string *s = (const void *)h;
	uint32_t len;
	const char *text = (const char *)dt_rec_tail(h, &len);

	if (!text || s->id >= MAX_STRING_ID)
		return;
	char **p = dt_grow_array(r->str, &r->n_str, s->id + 1, sizeof(*p));
	if (!p)
		return;
	r->str = p;
	free(p[s->id]);
	p[s->id] = strndup(text, len);
}

static const char *string(const struct dt_ranges *r, uint32_t id)
{
	return id < r->n_str ? r->str[id] : NULL;
}

static uint32_t key_of(struct dt_ranges *r, uint32_t name, uint32_t domain)
{
	uint64_t k = (uint64_t)name << 32 | domain;
	uint32_t i;

	if (map_get(&r->key_of, k, &i))
		return i;
	struct key *p =
		dt_grow_array(r->keys, &r->cap_keys, r->n_keys + 1, sizeof(*p));
	if (!p || !map_put(&r->key_of, k, (uint32_t)r->n_keys))
		return UINT32_MAX;
	r->keys = p;
	p[r->n_keys] =
		(struct key){ .name = name, .domain = domain, .match = -1 };
	return (uint32_t)r->n_keys++;
}

static struct thread *thread_of(struct dt_ranges *r, uint32_t tid, bool make)
{
	for (size_t i = 0; i < r->n_threads; i++)
		if (r->threads[i].tid == tid)
			return &r->threads[i];
	if (!make)
		return NULL;
	struct thread *t = dt_grow_array(r->threads, &r->cap_threads,
					 r->n_threads + 1, sizeof(*t));
	if (!t)
		return NULL;
	r->threads = t;
	t[r->n_threads].tid = tid;
	return &t[r->n_threads++];
}

static bool push_open(struct open **v, size_t *n, size_t *cap,
		      const struct open *o)
{
	struct open *p = dt_grow_array(*v, cap, *n + 1, sizeof(*p));

	if (!p)
		return false;
	*v = p;
	p[(*n)++] = *o;
	return true;
}

/* A range closed (or a mark): counted, and kept for the timeline. */
static void closed(struct dt_ranges *r, enum dt_range_kind kind,
		   const struct open *o, uint64_t t_end, uint32_t end_tid,
		   uint32_t depth)
{
	if (o->key == UINT32_MAX)
		return;
	if (kind != DT_RANGE_MARK) {
		r->keys[o->key].st.count++;
		r->keys[o->key].st.host_ns += t_end > o->t ? t_end - o->t : 0;
	}
	struct dt_range *l =
		dt_grow_array(r->list, &r->cap_list, r->n_list + 1, sizeof(*l));
	if (!l)
		return;
	r->list = l;
	uint32_t *lk = dt_grow_array(r->list_key, &r->cap_list_key,
				     r->n_list + 1, sizeof(*lk));
	if (!lk)
		return;
	r->list_key = lk;
	lk[r->n_list] = o->key;
	l[r->n_list++] = (struct dt_range){ .kind = kind,
					    .category = o->category,
					    .tid = o->tid,
					    .end_tid = end_tid,
					    .depth = depth,
					    .t_begin = o->t,
					    .t_end = t_end };
}

/* Take the open range with id `id` out of v; false if none. */
static bool take_open(struct open *v, size_t *n, uint64_t id, struct open *o)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i].id == id) {
			*o = v[i];
			v[i] = v[--*n];
			return true;
		}
	return false;
}

static void look_back(struct dt_ranges *r, uint32_t key, uint64_t t0,
		      uint64_t t1);

static void on_nvtx(struct dt_ranges *r, const struct dt_rec_nvtx *n)
{
	struct open o = { .id = n->range,
			  .t = n->t,
			  .domain = n->domain,
			  .category = n->category,
			  .tid = n->tid,
			  .key = UINT32_MAX };
	struct open s;
	struct thread *th;

	r->seen = true;
	if (n->event == DT_NVTX_PUSH || n->event == DT_NVTX_START ||
	    n->event == DT_NVTX_MARK)
		o.key = key_of(r, n->name, n->domain);
	switch (n->event) {
	case DT_NVTX_PUSH:
		if ((th = thread_of(r, n->tid, true)))
			push_open(&th->stack, &th->n, &th->cap, &o);
		break;
	case DT_NVTX_POP:
		/* NVTX keeps a stack per domain: the innermost of this one */
		th = thread_of(r, n->tid, false);
		for (size_t i = th ? th->n : 0; i-- > 0;)
			if (th->stack[i].domain == n->domain) {
				s = th->stack[i];
				memmove(&th->stack[i], &th->stack[i + 1],
					(th->n - i - 1) * sizeof(s));
				th->n--;
				closed(r, DT_RANGE_PUSH, &s, n->t, n->tid,
				       (uint32_t)i);
				break;
			}
		break;
	case DT_NVTX_START: {
		bool ended = take_open(r->ended, &r->n_ended, n->range, &s);
		look_back(r, o.key, o.t, ended ? s.t : UINT64_MAX);
		if (ended)
			closed(r, DT_RANGE_START, &o, s.t, s.tid, 0);
		else
			push_open(&r->started, &r->n_started, &r->cap_started,
				  &o);
		break;
	}
	case DT_NVTX_END:
		if (take_open(r->started, &r->n_started, n->range, &s))
			closed(r, DT_RANGE_START, &s, n->t, n->tid, 0);
		else
			push_open(&r->ended, &r->n_ended, &r->cap_ended, &o);
		break;
	case DT_NVTX_MARK:
		th = thread_of(r, n->tid, false);
		closed(r, DT_RANGE_MARK, &o, n->t, n->tid,
		       th ? (uint32_t)th->n : 0);
		break;
	}
}

void dt_ranges_feed(struct dt_ranges *r, const struct dt_rec_hdr *h)
{
	if (h->type == DT_REC_STRING)
		on_string(r, h);
	else if (h->type == DT_REC_NVTX &&
		 h->size >= sizeof(struct dt_rec_nvtx))
		on_nvtx(r, (const void *)h);
}

/* Whether key k's name matches the pattern; not known (-1) until its
 * name is. */
static int matches(struct dt_ranges *r, struct key *k)
{
	if (k->match < 0 && string(r, k->name))
		k->match = !fnmatch(r->pattern, string(r, k->name), 0);
	return k->match;
}

static bool add_key(uint32_t *set, uint32_t *n, uint32_t max, uint32_t k)
{
	if (k == UINT32_MAX)
		return false;
	for (uint32_t i = 0; i < *n; i++)
		if (set[i] == k)
			return false;
	if (*n < max)
		set[(*n)++] = k;
	return true;
}

#define MAX_DEPTH 256 /* ranges one call is counted in */

/* Call seq is in the ranges of set (n keys): written to the pool, in
 * place of what it had. */
static void set_call(struct dt_ranges *r, uint64_t seq, const uint32_t *set,
		     uint32_t n, bool keep)
{
	uint32_t *p = dt_grow_array(r->pool, &r->cap_pool, r->n_pool + n + 1,
				    sizeof(*p));

	if (!p)
		return;
	r->pool = p;
	if (!map_put(&r->of_call, seq, (uint32_t)r->n_pool))
		return;
	p[r->n_pool] = n | (keep ? 1u << 31 : 0);
	memmove(&p[r->n_pool + 1], set, n * sizeof(*set));
	r->n_pool += n + 1;
}

bool dt_ranges_call(struct dt_ranges *r, uint64_t seq, uint32_t tid, uint64_t t)
{
	uint32_t set[MAX_DEPTH], n = 0;
	struct thread *th;
	bool keep = !r->pattern;

	r->recent[r->n_recent++ % RECENT] = (struct recent){ seq, t };
	if (!r->seen)
		return keep;
	if ((th = thread_of(r, tid, false)))
		for (size_t i = 0; i < th->n; i++)
			add_key(set, &n, MAX_DEPTH, th->stack[i].key);
	for (size_t i = 0; i < r->n_started; i++)
		if (r->started[i].t <= t)
			add_key(set, &n, MAX_DEPTH, r->started[i].key);
	for (uint32_t i = 0; i < n; i++) {
		r->keys[set[i]].st.calls++;
		keep = keep || matches(r, &r->keys[set[i]]) > 0;
	}
	if (n)
		set_call(r, seq, set, n, keep);
	return keep;
}

/* A START read after calls made inside its range: they are in it too.
 * Their calls were handed out already; their ops and GPU work, which come
 * later, pass the filter if the range's name matches. */
static void look_back(struct dt_ranges *r, uint32_t key, uint64_t t0,
		      uint64_t t1)
{
	uint64_t n = r->n_recent < RECENT ? r->n_recent : RECENT;

	if (key == UINT32_MAX)
		return;
	for (uint64_t i = r->n_recent - n; i < r->n_recent; i++) {
		const struct recent *c = &r->recent[i % RECENT];
		uint32_t set[MAX_DEPTH], k = 0, off;
		bool keep = !r->pattern;
		if (c->t < t0 || c->t > t1)
			continue;
		if (map_get(&r->of_call, c->seq, &off)) {
			k = r->pool[off] & ~(1u << 31);
			keep = r->pool[off] >> 31;
			memcpy(set, &r->pool[off + 1], k * sizeof(*set));
		}
		if (!add_key(set, &k, MAX_DEPTH, key))
			continue; /* in it already */
		r->keys[key].st.calls++;
		keep = keep || matches(r, &r->keys[key]) > 0;
		set_call(r, c->seq, set, k, keep);
	}
}

/* The ranges of call seq (count in *n), and whether it was kept. */
static const uint32_t *call_keys(const struct dt_ranges *r, uint64_t seq,
				 uint32_t *n, bool *keep)
{
	uint32_t off;

	if (!map_get(&r->of_call, seq, &off)) {
		*n = 0;
		*keep = !r->pattern;
		return NULL;
	}
	*n = r->pool[off] & ~(1u << 31);
	*keep = r->pool[off] >> 31;
	return &r->pool[off + 1];
}

bool dt_ranges_kept(const struct dt_ranges *r, uint64_t seq)
{
	uint32_t n;
	bool keep;

	call_keys(r, seq, &n, &keep);
	return keep;
}

void dt_ranges_activity(struct dt_ranges *r, const struct dt_activity *a)
{
	uint32_t n;
	bool keep;

	/* a CUDA graph's replay of a call's work ran when the graph was
	 * launched, not inside the call's ranges */
	if (!a->call || (a->exec && a->exec != a->call))
		return;
	const uint32_t *set = call_keys(r, a->call, &n, &keep);
	for (uint32_t i = 0; i < n; i++) {
		r->keys[set[i]].st.kernels++;
		if (a->timed && a->end > a->start)
			r->keys[set[i]].st.gpu_ns += a->end - a->start;
	}
}

/* ------------------------------------------------------------ results */

static char *name_text(const struct dt_ranges *r, uint32_t id)
{
	const char *s = string(r, id);

	if (s)
		return strdup(s);
	return dt_xasprintf("(string %u, not in the trace)", id);
}

static int by_name(const void *a, const void *b)
{
	const struct dt_range_stat *x = a, *y = b;
	int c = strcmp(x->domain ? x->domain : "", y->domain ? y->domain : "");

	return c ? c : strcmp(x->name, y->name);
}

static int by_cost(const void *a, const void *b)
{
	const struct dt_range_stat *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	if (x->host_ns != y->host_ns)
		return x->host_ns < y->host_ns ? 1 : -1;
	return by_name(a, b);
}

void dt_ranges_finish(struct dt_ranges *r)
{
	/* what the trace never closed */
	for (size_t i = 0; i < r->n_threads; i++)
		for (size_t j = 0; j < r->threads[i].n; j++)
			if (r->threads[i].stack[j].key != UINT32_MAX)
				r->keys[r->threads[i].stack[j].key].st.open++;
	for (size_t i = 0; i < r->n_started; i++)
		if (r->started[i].key != UINT32_MAX)
			r->keys[r->started[i].key].st.open++;
	for (size_t i = 0; i < r->n_list; i++) {
		const struct key *k = &r->keys[r->list_key[i]];
		r->list[i].name = name_text(r, k->name);
		r->list[i].domain = k->domain ? name_text(r, k->domain) : NULL;
	}
	/* one line per name and domain: a name is a string per thread */
	struct dt_range_stat *st = calloc(r->n_keys + 1, sizeof(*st));
	if (!st)
		return;
	size_t n = 0;
	for (size_t i = 0; i < r->n_keys; i++) {
		const struct key *k = &r->keys[i];
		if (!k->st.count && !k->st.open)
			continue; /* marks */
		st[n] = k->st;
		st[n].name = name_text(r, k->name);
		st[n].domain = k->domain ? name_text(r, k->domain) : NULL;
		n++;
	}
	if (n > 1)
		qsort(st, n, sizeof(*st), by_name);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !by_name(&st[m - 1], &st[i])) {
			dt_range_stat_add(&st[m - 1], &st[i]);
			free((char *)st[i].name);
			free((char *)st[i].domain);
			continue;
		}
		st[m++] = st[i];
	}
	dt_range_stats_sort(st, m);
	r->stats = st;
	r->n_stats = m;
}

void dt_range_stat_add(struct dt_range_stat *to,
		       const struct dt_range_stat *from)
{
	to->count += from->count;
	to->open += from->open;
	to->host_ns += from->host_ns;
	to->calls += from->calls;
	to->kernels += from->kernels;
	to->gpu_ns += from->gpu_ns;
}

const struct dt_range *dt_ranges_list(const struct dt_ranges *r, size_t *n)
{
	*n = r->n_list;
	return r->list;
}

const struct dt_range_stat *dt_ranges_stats(const struct dt_ranges *r,
					    size_t *n)
{
	*n = r->n_stats;
	return r->stats;
}

void dt_range_stats_sort(struct dt_range_stat *st, size_t n)
{
	if (n > 1)
		qsort(st, n, sizeof(*st), by_cost);
}
