/*
 * analyzer-summary-internal.h - what the summary's files share: its
 * private state and the tables it keys by name (analyzer-summary-tables.c).
 * Private to analyzer-summary*.c.
 */
#ifndef DT_ANALYZER_SUMMARY_INTERNAL_H
#define DT_ANALYZER_SUMMARY_INTERNAL_H

#include "dt-summary.h"

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
};

static inline struct priv *P(const struct dt_summary *s)
{
	return s->priv;
}

/* ------------------------------------------ analyzer-summary-tables.c */

void sum_index_free(struct index *x);
/* Add [s, e) (on the device's clock) to the union of g's intervals. */
void sum_merger_add(struct merger *g, uint64_t s, uint64_t e);
/* Every interval of g settled into its histogram. */
void sum_merger_finish(struct merger *g);
/* The problem of op (made on its first execution), or NULL. */
struct dt_sum_problem *sum_problem_of(struct dt_summary *s,
				      const struct dt_op *op);
/* The function of that name (made when first seen): its index + 1, 0
 * when out of memory. */
uint32_t sum_api_of(struct dt_summary *s, const char *name);
/* The plan build of that graph (made when first seen), or -1. */
int32_t sum_build_of(struct dt_summary *s, const char *key, const char *brief,
		     enum dt_op_kind kind);
/* The summary's entry of the kernel name the model classified as kc. */
struct kname *sum_kname_by_model(struct dt_summary *s,
				 const struct dt_kernel_class *kc);
/* A layout conversion of d ns, inside a call or not. */
void sum_add_convert(struct dt_summary *s, struct kname *n, bool in_call,
		     uint64_t d);
/* The summary's device for the file's device d (added when new). */
int32_t sum_device_of(struct dt_summary *s, const struct dt_device *d);
/* The summary's device of the file's device id, -1 none. */
int32_t sum_map_device(const struct priv *pv, int32_t id);

#endif /* DT_ANALYZER_SUMMARY_INTERNAL_H */
