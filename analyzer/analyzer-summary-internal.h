/*
 * analyzer-summary-internal.h - what the summary's files share: its
 * private state and the tables it keys by name (analyzer-summary-tables.c).
 * Private to analyzer-summary*.c.
 */
#ifndef DT_ANALYZER_SUMMARY_INTERNAL_H
#define DT_ANALYZER_SUMMARY_INTERNAL_H

#include "analyzer-place.h"
#include "analyzer-util.h"
#include "dt-summary.h"

#define SUM_LIB_SEEN 16

/* An index from keys to positions in an array: open addressing, the
 * array's position + 1 in each slot, 0 for empty. */
struct index {
	uint32_t *slot;
	uint64_t *hash;
	size_t cap, used;
};

/* The union of a device's busy intervals, from records that arrive
 * roughly in time order (CUPTI hands them over buffer by buffer): a window
 * of recent ones is kept sorted by start (an insertion from the end costs
 * nothing for records in order), the older half merged into the union. A
 * record older than what was merged counts only its newer part. */
#define MERGE_WINDOW 4096

struct merger {
	uint64_t (*iv)[2];
	size_t n;
	bool open;
	uint64_t cur_s, cur_e; /* the interval being merged */
	uint64_t done;         /* everything before this is settled */
	uint64_t busy, first, last;
	struct dt_busy_hist *hist; /* where settled intervals go, */
	int64_t to_host;           /* moved to the host clock by this */
	/* the union of the open interval and iv[0, known), past done:
	 * known_ns, up to known_upto (sum_merger_busy) */
	size_t known;
	uint64_t known_ns, known_upto;
};

/* A layout conversion kernel, by name. */
struct kname {
	char *name;
	uint32_t len;
	bool layout;
	bool tuner;         /* an autotuner's checking kernel */
	int32_t convert[2]; /* dt_sum_convert index + 1, outside/in cuDNN */
};

/* Plans of one graph with one engine, to spot the same plan built twice. */
struct plan_seen {
	uint32_t file, plan;
	int64_t engine;
	uint64_t knobs; /* a hash of the knob choices */
};

/* The streams a trace's events reach it in, each in its time order (the
 * start-up's cut: analyzer-summary-cut.c). */
enum { SUM_GPU, SUM_OP, SUM_HOST, SUM_STREAMS };
/* Streams cut at the same points: GPU work and its ops (an op's GPU time
 * is its kernels'); the calls apart, their counters their own (they run
 * ahead of the GPU work CUPTI hands over late). */
enum { SUM_DEVICE, SUM_CALLS, SUM_GROUPS };
static inline int sum_group(int stream)
{
	return stream == SUM_HOST ? SUM_CALLS : SUM_DEVICE;
}

/* A function's shortest and longest calls, of n. */
struct sum_minmax {
	uint64_t min, max, n;
};

/* An engine of a problem, in the order engines were first seen. */
struct engine_row {
	uint32_t problem, engine;
};

struct priv {
	size_t cap_ranges;
	struct index problems, apis, builds, knames;
	struct kname *kn;
	size_t n_kn, cap_kn;
	uint32_t *kn_by_model; /* this file's model's name id -> kn + 1 */
	size_t cap_kn_by_model;
	size_t cap_problems, cap_apis, cap_builds, cap_converts, cap_files;
	size_t cap_devices;
	/* per build: the plans executed, by engine */
	struct plan_seen **seen;
	uint32_t *n_seen;
	/* the file being read */
	uint32_t file;
	/* library names seen (sum_lib), by their pointer: the file's */
	struct {
		const char *name;
		uint32_t lib;
	} lib_seen[SUM_LIB_SEEN];
	uint32_t *api_map; /* its API ids -> summary apis + 1 */
	uint32_t n_api_map;
	int32_t dev_map[64]; /* its device ids -> summary devices, -1 */
	struct merger merge[64];
	uint64_t *plan_ns;   /* host time of each plan's build, by plan id */
	int32_t *plan_build; /* the build each plan belongs to, + 1 */
	size_t cap_plan;
	/* the file's problem ids -> problems + 1 (open addressing) */
	struct {
		uint64_t id;
		uint32_t problem;
	} * ids;
	size_t cap_ids, n_ids;
	/* work waiting for the next matrix product to say its phase */
	struct dt_sum_phase pending;
	int phase;            /* of the last matrix product, -1 none yet */
	uint32_t last_launch; /* correlation id of the last graph launch */
	struct dt_dram *dram; /* the file's GPU counter samples, when it has
				 them, being attributed */
	/* what the file's ops add to lib_ns and lib_count, added there once
	 * it is read (its start-up is cut apart from its GPU work's) */
	uint64_t op_lib_ns[DT_LIB_COUNT][DT_OPF_COUNT];
	uint64_t op_lib_count[DT_LIB_COUNT][DT_OPF_COUNT];
	/* the start-up's cut: each stream's next point, the points, where
	 * the file was cut (0: not) */
	uint64_t cut_at[SUM_STREAMS];  /* each stream's next point */
	uint64_t cut_taken[SUM_STREAMS]; /* and the newest it took, 0 */
	/* by group: events read, the next point's */
	uint64_t cut_events[SUM_GROUPS], cut_every[SUM_GROUPS];
	struct sum_cuts *cuts;
	uint64_t cut_t, cut_busy; /* and the GPUs' busy time before it */
	uint64_t file_gpu, file_comm; /* the file's, cut with the rest */
	uint64_t file_kernels;        /* its timed kernels, the same */
	bool cut_kernels; /* the file has kernels: they make the points */
	struct engine_row *engine_rows;
	size_t n_engine_rows, cap_engine_rows;
	/* by function, since the last cut point (when cutting) */
	struct sum_minmax *api_mm;
	size_t cap_api_mm;
};

static inline struct priv *P(const struct dt_summary *s)
{
	return s->priv;
}

/* ------------------------------------------ analyzer-summary-tables.c */

void sum_index_free(struct index *x);
/* Add [s, e) (on the device's clock) to the union of g's intervals. */
void sum_merger_add(struct merger *g, uint64_t s, uint64_t e);
/* Its busy time so far: the union of every interval it was given. */
uint64_t sum_merger_busy(struct merger *g);
/* Every interval of g settled into its histogram. */
void sum_merger_finish(struct merger *g);
/* The problem of op (made on its first execution), or NULL. */
struct dt_sum_problem *sum_problem_of(struct dt_summary *s,
				      const struct dt_op *op);
/* The entry of library (NULL: not known), made when first seen; past
 * DT_SUM_LIBS, the last one. */
struct dt_sum_lib *sum_lib(struct dt_summary *s, const char *library);
/* The function of that name (made when first seen): its index + 1, 0
 * when out of memory. */
uint32_t sum_api_of(struct dt_summary *s, const char *name);
/* The plan build of that graph (made when first seen), or -1. */
int32_t sum_build_of(struct dt_summary *s, const char *key, const char *brief,
		     enum dt_op_kind kind);
/* The summary's entry of the kernel name the model classified as kc. */
struct kname *sum_kname_by_model(struct dt_summary *s,
				 const struct dt_kernel_class *kc);
/* The conversion row of a layout conversion kernel, inside a call or not
 * (made when first seen), or NULL. */
struct dt_sum_convert *sum_convert_of(struct dt_summary *s, struct kname *n,
				      bool in_call);
/* The summary's device for the file's device d (added when new). */
int32_t sum_device_of(struct dt_summary *s, const struct dt_device *d);
/* The summary's device of the file's device id, -1 none. */
int32_t sum_map_device(const struct priv *pv, int32_t id);

/* ------------------------------------------ analyzer-summary-phases.c */

/* An activity of family fam, d ns, into its phase: a matrix product says
 * it, for itself and for the work waiting before it. */
void sum_phase_add(struct dt_summary *s, const struct dt_activity *a,
		   enum dt_opfam fam, uint64_t d);
/* from added to to, and emptied. */
void sum_phase_merge(struct dt_sum_phase *to, struct dt_sum_phase *from);

/* --------------------------------------------- analyzer-summary-cut.c */

struct dt_step_stats;
/* A trace begins: what the summary holds now is not its start-up's. */
void sum_cut_begin(struct dt_summary *s);
/* What a problem holds, freed (not the problem itself). */
void sum_problem_free(struct dt_sum_problem *p);
/* An event of the stream at t makes a cut point (when make) or passes
 * one. */
void sum_cut_reach(struct dt_summary *s, int stream, uint64_t t, bool make);
/* An event of the stream at t, before it is added: a cut point made every
 * so many events, the stream's counters copied at those it passes (two
 * comparisons, most of the time). */
static inline void sum_cut_at(struct dt_summary *s, int stream, uint64_t t)
{
	struct priv *pv = P(s);
	int g = sum_group(stream);
	if (++pv->cut_events[g] >= pv->cut_every[g] || t >= pv->cut_at[stream])
		sum_cut_reach(s, stream, t, true);
}
/* The same for an event that makes no point: one that may come out of
 * its stream's order (CUPTI hands copies and sets over in buffers of
 * their own, ahead of or behind the kernels). */
static inline void sum_cut_pass(struct dt_summary *s, int stream, uint64_t t)
{
	if (t >= P(s)->cut_at[stream])
		sum_cut_reach(s, stream, t, false);
}
/* Whether an event of the stream at t comes after the stream took a point
 * later than t: what it adds is credited to those points too. */
static inline bool sum_cut_late(const struct dt_summary *s, int stream,
				uint64_t t)
{
	return t < P(s)->cut_taken[stream];
}
/* n more of counter c (one of the stream's: uint64_t), of a late event at
 * t: the copies taken after t gain it too. */
void sum_cut_credit(struct dt_summary *s, int stream, uint64_t t,
		    uint64_t *c, uint64_t n);
/* The GPUs' busy time grew by ns with a late event at t. */
void sum_cut_credit_busy(struct dt_summary *s, uint64_t t, uint64_t ns);
/* A piece of GPU work being added: where it falls against the cut. */
struct sum_work {
	struct dt_summary *s;
	uint64_t t;
	bool late; /* after points later than t were taken (sum_cut_late) */
};

/* n more of one of the GPU work's counters (those the cut takes); a late
 * one's points gain it too, so that it counts on the side of its time. */
static inline void sum_work_add(const struct sum_work *w, uint64_t *c,
				uint64_t n)
{
	*c += n;
	if (w->late)
		sum_cut_credit(w->s, SUM_GPU, w->t, c, n);
}

/* [s, e) into the union of the device's busy intervals. */
static inline void sum_work_busy(const struct sum_work *w, struct merger *g,
				 uint64_t s, uint64_t e)
{
	uint64_t before = w->late ? sum_merger_busy(g) : 0;

	sum_merger_add(g, s, e);
	if (w->late)
		sum_cut_credit_busy(w->s, w->t, sum_merger_busy(g) - before);
}

/* For a late event that adds to many of the stream's counters (an op):
 * its counters before it is added (NULL: not cutting), then what it added
 * credited as by sum_cut_credit (held is freed). */
struct sum_held;
struct sum_held *sum_cut_hold(struct dt_summary *s, int stream);
void sum_cut_settle(struct dt_summary *s, int stream, uint64_t t,
		    struct sum_held *held);
/* The trace is read and its steps st found: its start-up taken out,
 * priv's cut_t set to where (0: nothing cut). */
void sum_cut_finish(struct dt_summary *s, const struct dt_step_stats *st);
/* What findings weigh of the file just read: its steady state's GPU time,
 * communication and span (f->steady; gpu_span: its GPUs' longest, from
 * the cut on). */
void sum_cut_file(struct dt_summary *s, struct dt_sum_file *f,
		  uint64_t gpu_span);
/* The file's busy time from priv's cut_t on, of its busy time; the rest
 * is the start-up's. */
uint64_t sum_cut_busy(struct dt_summary *s, uint64_t busy);
/* A call of the function (an index in apis) that took d ns. */
static inline void sum_cut_call(struct dt_summary *s, uint32_t api, uint64_t d)
{
	struct priv *pv = P(s);
	struct sum_minmax *m;

	if (!pv->cuts)
		return;
	if (api >= pv->cap_api_mm) {
		m = dt_grow_array(pv->api_mm, &pv->cap_api_mm, api + 1,
				  sizeof(*m));
		if (!m)
			return;
		pv->api_mm = m;
	}
	m = &pv->api_mm[api];
	if (!m->n++ || d < m->min)
		m->min = d;
	if (d > m->max)
		m->max = d;
}
/* Every trace is in: the problems, engines, functions, plan builds and
 * conversions that only the start-ups had are left out. */
void sum_cut_compact(struct dt_summary *s);
/* A problem's engine seen first: a row of counters the cut takes. */
void sum_engine_row(struct dt_summary *s, uint32_t problem, uint32_t engine);

#endif /* DT_ANALYZER_SUMMARY_INTERNAL_H */
