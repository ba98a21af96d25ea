/*
 * analyzer-model-internal.h - the model's state, shared by the replay of
 * calls (analyzer-model.c) and their description (analyzer-describe.c).
 * Private to those two files.
 */
#ifndef DT_ANALYZER_MODEL_INTERNAL_H
#define DT_ANALYZER_MODEL_INTERNAL_H

#include "analyzer-cost.h"
#include "analyzer-model.h"
#include "analyzer-util.h"
#include "dt-analyzer.h"

#define MAX_DIMS DT_MAX_DIMS
/* A graph's description stops growing here: a descriptor may list itself,
 * or list others many times over (a crafted trace would make it explode). */
#define DESC_MAX (64u << 10)
/* Ops wait this long (host time) for their kernels before they are handed
 * out: CUPTI delivers kernel records some flushes after the launch. While
 * the GPU is recorded, the GPU's records must also have gone this far past
 * an op (a program's last calls, at exit, reach the file before the last
 * kernels CUPTI hands over then), up to HORIZON_MAX_NS of host time. */
#define HORIZON_NS 3000000000ull
#define HORIZON_MAX_NS 60000000000ull

/* A graph's tensors stop here, as its description does at DESC_MAX. */
#define TENSORS_MAX 512

/* A list of tensors, as ops show them; { 0 } is empty. */
struct tlist {
	struct dt_op_tensor *v;
	uint32_t n, cap;
};

/* One argument kept from a legacy setter. */
struct field {
	const char *name; /* into the file's signature strings */
	uint32_t name_len;
	const char *type;
	uint32_t type_len;
	char code;
	uint32_t count; /* arrays: elements kept */
	int64_t v[MAX_DIMS];
	double f;
};

/* One backend attribute: as set, or as cuDNN returned it. */
struct battr {
	int64_t name;
	int64_t type;
	uint32_t bytes;
	uint8_t *data;   /* payloads larger than inl */
	uint8_t inl[64]; /* up to eight dimensions or strides */
};

/* Most payloads are a value or two: they stay in the attribute. */
static inline const uint8_t *bdata(const struct battr *a)
{
	return a->bytes <= sizeof(a->inl) ? a->inl : a->data;
}

/* What is known of an engine configuration: shared by the plans built
 * from it, and completed when the program asks cuDNN about it later. */
struct cfg_info {
	char *graph;          /* the operation graph, described */
	struct tlist tensors; /* its tensors */
	char *brief;          /* its tensors and parameters, compactly */
	int64_t engine;       /* global engine index, -1 unknown */
	char *knobs;          /* "TILE_SIZE=4 KBLOCK=3", once known */
	char *notes; /* numerical notes: "TENSOR_CORE ...", once known */
	struct dt_cost cost; /* what one execution computes and moves */
};

struct cfg_list {
	struct cfg_info info;
	struct cfg_list *next;
};

struct plan_info {
	uint32_t id; /* 1, 2, ... in finalize order */
	struct cfg_info *cfg;
	uint64_t cfg_ptr;  /* the engine config descriptor it was built from */
	int64_t workspace; /* -1 unknown */
	uint64_t executions;
	const char *desc; /* as its executions show it (kept) */
	const char *desc_knobs, *desc_notes; /* what desc was made from */
	const char *no_graph; /* restored: why its JSON gave no graph */
	struct plan_info *next;
};

struct obj {
	uint64_t ptr;
	const char *kind; /* legacy: from cudnnCreate<Kind>Descriptor */
	uint32_t kind_len;
	int64_t btype; /* backend descriptor type, -1 for legacy */
	struct field *fields;
	uint32_t n_fields, cap_fields;
	struct battr *attrs;
	uint32_t n_attrs, cap_attrs;
	struct dt_tensor t; /* tensors and filters, normalized */
	uint64_t chash;     /* legacy: its content, hashed; 0 until needed */
	uint64_t owner;     /* a knob choice: the config it belongs to */
	char *graph;        /* OPERATIONGRAPH: its description at finalize */
	struct tlist graph_tensors; /* and its tensors */
	struct dt_cost cost;        /* and its cost */
	char *snap;                 /* other descriptors: their description when
				       finalized (the program may destroy and reuse
				       what they point to before building a graph) */
	struct tlist snap_tensors;  /* and their tensors */
	struct dt_cost_part *part;  /* operations: their cost */
	char *brief; /* operations: their tensors, compactly; graphs: all of
			their operations' */
	struct cfg_info *cfg; /* ENGINECFG, and ENGINE read back from one */
	uint64_t stream;      /* a cuDNN handle: its stream (0: default) */
	struct plan_info *plan;
	struct obj *next_free; /* when destroyed */
};

/* An op waiting for its kernels. Its strings belong to the model (shared
 * by every op of a problem), but for the pointers and the kernel name. */
struct pending {
	/* next first: with the op's seq and times, one cache line holds what
	 * walking the queue reads */
	struct pending *next;
	struct dt_op op;
	const char *desc;
	const char *problem; /* NULL: the same as desc */
	const char *brief;   /* NULL: the same as problem */
	const struct tlist *tensors;
	struct dt_op_ptr *ptrs; /* ptr_buf, n_ptrs of it */
	uint32_t n_ptrs;
	struct dt_op_ptr *ptr_buf; /* kept when the op is used again */
	uint32_t ptr_cap;
	const char *first_kernel; /* the model's copy of the name */
	uint64_t plan_ptr; /* a backend execution of a plan not finalized
			      yet in file order (built on another thread,
			      whose records come later): its address */
	int tc_hint; /* what its kernels' names say of tensor cores */
};

#define LEGACY_BUCKETS 4096
/* The first size of a descriptor's arrays of fields and attributes. */
#define OBJ_ARRAY 8

struct dt_model {
	const struct dt_file_info *fi;
	struct objslot {
		uint64_t ptr; /* the descriptor's address, 0 for none */
		struct obj *o;
	} * objs; /* open addressing by ptr */
	size_t cap, used;
	struct obj *free_objs; /* destroyed, to be used again */
	struct plan_info *plans;
	uint32_t n_plans;
	struct cfg_list *cfgs; /* every cfg_info, owned here */
	/* constants looked up by name in the generated enum table */
	int64_t bt_tensor, bt_graph, bt_engine, bt_cfg, bt_heur, bt_plan,
		bt_varpack, bt_knob_choice, bt_pointwise, bt_conv;
	int64_t a_cfg_knobs, a_knob_type, a_knob_value, a_engine_notes,
		a_vp_uids, a_vp_ptrs, a_vp_ws;
	int64_t a_graph_ops, a_heur_graph, a_heur_results, a_cfg_engine,
		a_engine_graph, a_engine_index, a_plan_cfg, a_plan_ws,
		a_t_dtype, a_t_dims, a_t_strides, a_t_uid, a_t_virtual,
		a_t_by_value, a_norm_phase, a_pw_mode, a_conv_pre, a_conv_post,
		a_conv_stride, a_conv_dil, a_plan_json;
	/* ops waiting for their kernels, in call order, and by seq (open
	 * addressing, linear probing; at most half full) */
	struct pending *head, *tail;
	uint64_t head_t_end; /* head->op.t_end, read for every record */
	struct seq_slot {
		uint64_t seq; /* here too, so probing reads no op */
		struct pending *p;
	} * by_seq;
	size_t by_seq_cap, n_pending;
	size_t n_unplanned;    /* of them, executions of plans not seen yet */
	struct pending *out;   /* last op handed out */
	struct pending *spare; /* handed out, for reuse */
	uint64_t last_out;     /* its seq */
	uint64_t now;          /* latest host time seen */
	int64_t cupti_to_mono;
	/* the most recent calls, by seq: a call that launched work but is
	 * not a compute call (cudnnCreate, a dropout setter) becomes an op
	 * when its first launch shows up */
	struct recent {
		uint64_t seq;
		uint64_t t_begin, t_end;
		uint32_t tid;
		int32_t status;
		const char *api;
	} recent[1 << 16];
	/* CUPTI correlation id -> call, direct-mapped on recent ids */
	struct {
		uint32_t corr;
		uint64_t call;
	} corr[1 << 16];
	/* kernels of calls whose API_CALL record is still to come (a long
	 * call is recorded when it returns, its launches as CUPTI flushes) */
	/* the GPU metrics sampled (GPU_METRICS), in their samples' order */
	const char *metric_names[8];
	size_t n_metric_names;
	struct orphan {
		uint64_t call;
		uint32_t kernels;
		int32_t device;
		uint32_t stream;
		uint32_t converts;
		uint64_t convert_ns;
		uint64_t gpu_ns, start, end;
		const char *first_kernel;
	} orphans[1024];
	uint64_t max_seq; /* the highest call seq seen */
	uint64_t gpu_now;  /* the latest end of GPU work read, host clock */
	bool gpu_live;     /* GPU work is being recorded: seen, and not
			      stopped or taken since */
	uint64_t window_open; /* sampled: when the open window opened, 0
				 none is open */
	struct dt_model_stats stats;
	uint64_t ops_made; /* ops made from calls, captures too: tells
			      on_call whether its call made one */
	/* what kernel names say, worked out once per name: the names are
	 * few, their records many. Entries stay for the model's life. */
	struct dt_kernel_class **knames; /* by id */
	/* kernels libraries registered (KERNEL_LIB): name hash -> the
	 * library's path, kept in paths */
	struct kreg {
		uint64_t hash; /* 0: free */
		uint32_t path;
	} *kregs;
	size_t n_kregs, cap_kregs;
	char **kreg_paths;
	size_t n_kreg_paths;
	uint32_t *kname_idx;             /* open addressing: id + 1 */
	uint32_t n_knames, cap_kname_idx;
	size_t cap_knames;
	const struct dt_consumer *cons; /* who gets the events */
	int n_cons;
	struct dt_device *devices; /* as DEVICE records described them */
	size_t n_devices, cap_devices;
	bool pointers; /* ops carry their device pointers */
	/* arrays of OBJ_ARRAY fields and attributes that destroyed
	 * descriptors left, for the next ones: descriptors come and go by
	 * the million, their arrays need not */
	struct field *free_fields[64];
	struct battr *free_attrs[64];
	int n_free_fields, n_free_attrs;
	/* what is worked out once per function of the trace, by API id */
	struct api_info {
		uint8_t cls;         /* enum api_class, 0 until classified */
		uint8_t setter;      /* SETTER_*, 0 until known */
		uint8_t kind_len;    /* a create call: its descriptor kind's
					length, in the function's name */
		struct dt_sig *sig;  /* its signature, parsed */
		uint8_t *roles;      /* legacy_op(): each argument's role */
		struct dt_arg *args; /* its last call, decoded */
	} * api;
	int64_t bn_per_activation;
	bool gpu_unknown; /* the header could not say the GPU state */
	/* the arguments of the call being replayed, decoded; argc -1 when
	 * they did not decode */
	const struct dt_arg *call_args;
	int call_argc;
	struct legacy_entry *legacy[LEGACY_BUCKETS];
	char **kept; /* strings ops may still point to, freed at the end */
	size_t n_kept, cap_kept;
	struct dt_graphs *graphs; /* CUDA graphs (analyzer-graphs.c) */
};

/* What calls of one legacy problem share: described once. */
struct legacy_entry {
	uint64_t key;
	char *desc, *problem;
	struct tlist tensors;
	struct dt_cost cost;
	int64_t algo, workspace;
	int tensor_cores;
	struct legacy_entry *next;
};

static inline bool is_desc(const struct dt_arg *a)
{
	const char *e = a->name + a->name_len - 4;

	/* "...Desc" or "...desc", as cuDNN names them */
	return a->code == 'p' && a->name_len > 4 && (e[0] | 32) == 'd' &&
	       e[1] == 'e' && e[2] == 's' && e[3] == 'c';
}

static inline bool is_handle(const struct dt_arg *a)
{
	return a->name_len == 6 && !memcmp(a->name, "handle", 6);
}

/* A legacy call's device pointers: the arguments an op's ptrs list, in
 * the call's order. */
#define LEGACY_PTRS 64

static inline bool is_data_ptr(const struct dt_arg *a)
{
	return a->code == 'p' && !a->out && !is_handle(a) && !is_desc(a);
}

/* ------------------------------------------------------- the model's */

struct obj *m_obj_find(struct dt_model *m, uint64_t ptr, bool create);
struct battr *m_battr(struct obj *o, int64_t name);
int64_t m_battr_i64(struct obj *o, int64_t name, int64_t def);
uint64_t m_battr_ptr(struct obj *o, int64_t name, uint32_t i);
const struct field *m_field(const struct obj *o, const char *name);
int64_t m_fval(const struct obj *o, const char *name, int64_t def);
/* Strings ops may point to stay until the model is freed. */
const char *m_keep(struct dt_model *m, char *s);
/* The descriptor a create call made at ptr (emptied if ptr was in use);
 * m_obj_remove() takes it out, as a destroy call does. */
struct obj *m_obj_new(struct dt_model *m, uint64_t ptr);
void m_obj_remove(struct dt_model *m, struct obj *o);
/* Set attribute name of o, as cudnnBackendSetAttribute does. */
void m_set_battr(struct dt_model *m, struct obj *o, int64_t name, int64_t type,
		 const uint8_t *data, uint32_t bytes);
/* A finalized tensor normalized, an operation or graph described; false
 * for the descriptors finalizing does not describe. */
bool m_finalize_desc(struct dt_model *m, struct obj *o);
/* A new engine config's knowledge, owned by the model; what it runs: the
 * graph of g as described at its finalize. */
struct cfg_info *m_new_cfg(struct dt_model *m);
void m_copy_graph(struct cfg_info *c, const struct obj *g);

/* ------------------------------------------- describing (analyzer-describe.c)
 */

void m_tlist_append(struct tlist *l, const struct tlist *from);
void m_tlist_free(struct tlist *l);
/* Which backend descriptors are described when finalized. */
bool m_snapshot_type(const struct dt_model *m, int64_t btype);
/* TYPE(attr=value ...) of a backend descriptor, nested ones inline; its
 * tensors also go to j when j is given. */
void m_describe_battrs(struct dt_model *m, struct dt_sbuf *b, struct tlist *j,
		       struct obj *o, int depth);
/* The operation graph as it is when finalized: its operations, its
 * tensors (into j) and its cost. */
char *m_describe_graph(struct dt_model *m, struct obj *g, struct tlist *j,
		       struct dt_cost *cost);
/* The graph's operations' briefs merged. */
char *m_graph_brief(struct dt_model *m, struct obj *g);
/* An operation's cost (and its brief), from the tensors it points to. */
struct dt_cost_part *m_cost_part(struct dt_model *m, struct obj *o);
/* A legacy call's problem: its descriptors and scalars, keyed by key. */
struct legacy_entry *m_legacy_describe(struct dt_model *m,
				       const struct dt_api_def *api,
				       const struct dt_arg *args, int n,
				       uint64_t key);
/* The knob choices of an engine config: "TILE_SIZE=4 KBLOCK=3", or
 * NULL. */
char *m_knobs_of(struct dt_model *m, uint64_t cfg_ptr);
/* An engine's numerical notes, read back. */
char *m_notes_of(struct obj *o, int64_t attr);
/* "plan=3 <graph> knobs{...} notes{...}", kept. */
const char *m_plan_desc(struct dt_model *m, struct plan_info *pi);

/* ------------------------------------------------ analyzer-model.c */

/* The op of call seq while it waits for its kernels, or NULL. */
struct pending *m_pending_of(struct dt_model *m, uint64_t seq);
/* A blank op, from the spare list; m_pending_release() gives it back. */
struct pending *m_pending_new(struct dt_model *m);
void m_pending_release(struct dt_model *m, struct pending *p);
/* Add a timed kernel (or copy, set) to op p. */
void m_op_add_kernel(struct pending *p, const struct dt_activity *a);
/* Fill p's op with what views read, before it is handed out. */
void m_op_finish(struct pending *p);
/* What a kernel's name says (kept by the model). */
const struct dt_kernel_class *m_kernel_class(struct dt_model *m,
					     const char *name, uint32_t len);

/* ----------------------------------------------- analyzer-restore.c */

/* Fill cfg from a plan's JSON representation (len bytes, maybe cut
 * short): its graph described as the built plan's, its engine and
 * knobs. NULL when the graph came out; otherwise why not, in words, in
 * why. */
const char *m_restore_plan(struct dt_model *m, struct cfg_info *cfg,
			   const uint8_t *json, uint32_t len, char *why,
			   size_t size);

/* ------------------------------------------------ analyzer-graphs.c */

/* A GRAPH_NODE, GRAPH_LINK or GRAPH_LAUNCH record. */
void m_graph_record(struct dt_model *m, const struct dt_rec_hdr *h);
/* What became of a kernel a CUDA graph launched. */
enum m_graph_tie {
	M_GRAPH_NONE, /* tied to no call: another kernel */
	M_GRAPH_CALL, /* traced to the call that made its node (a->call,
			 a->exec set; it is then part of a replay op) */
	M_GRAPH_HELD, /* its executable's making is not read yet: kept, and
			 handed back by m_graph_released() */
};
/* A timed kernel a CUDA graph launched. */
enum m_graph_tie m_graph_kernel(struct dt_model *m, struct dt_activity *a);
/* The next held kernel tied as far as the trace now tells (*tied says
 * how), valid until the next call; NULL when none is due. Due: those
 * whose executable's making was read since, the oldest when too many
 * wait, every one when `all` (the trace ended). */
const struct dt_activity *m_graph_released(struct dt_model *m, bool all,
					   enum m_graph_tie *tied);
/* The next replay whose kernels are in and that began before `waiting`
 * (the first call op still waiting for kernels, NULL none), or NULL. */
const struct dt_op *m_graph_next(struct dt_model *m,
				 const struct pending *waiting);
/* The trace has ended: replays still collecting kernels are done. */
void m_graph_finish(struct dt_model *m);
void m_graph_free(struct dt_model *m);

#endif /* DT_ANALYZER_MODEL_INTERNAL_H */
