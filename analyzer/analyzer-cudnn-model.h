/*
 * analyzer-cudnn-model.h - the cuDNN decoder's state: descriptors and
 * backend objects by handle, engine configs and plans, legacy problems
 * described once. Shared by the decoder's files (analyzer-cudnn-model.c
 * replays calls and keeps descriptors, analyzer-cudnn-backend.c the
 * backend API's, analyzer-describe.c puts them into words,
 * analyzer-restore.c reads plans back from JSON); private to them. The
 * model's core sees none of it: only the decoder (analyzer-decoder.h).
 */
#ifndef DT_ANALYZER_CUDNN_MODEL_H
#define DT_ANALYZER_CUDNN_MODEL_H

#include "analyzer-decoder.h"
#include "dt-cudnn-build.h"

#define MAX_DIMS DT_MAX_DIMS
/* A graph's description stops growing here: a descriptor may list itself,
 * or list others many times over (a crafted trace would make it explode). */
#define DESC_MAX (64u << 10)
/* A graph's tensors stop here, as its description does at DESC_MAX. */
#define TENSORS_MAX 512

/* One argument kept from a legacy setter. */
struct field {
	const char *name; /* into the file's signature strings */
	uint32_t name_len;
	const char *type;
	uint32_t type_len;
	char code;
	uint32_t count; /* arrays: elements kept in v */
	int64_t v[MAX_DIMS];
	double f;
	/* an array longer than v (an RNN's sequence lengths, one per batch
	 * entry): every element, n_all of them; NULL otherwise */
	int64_t *all;
	uint32_t n_all;
};

/* The longest array kept whole. */
#define FIELD_ALL_MAX (1u << 16)

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
	struct dt_recipe_node *nodes; /* its graph's operations */
	uint32_t n_nodes;
	char *knobs; /* "TILE_SIZE=4 KBLOCK=3", once known */
	const struct dt_recipe_kv *knob_kv; /* the same, by name (kept) */
	uint32_t n_knob_kv;
	char *notes; /* numerical notes: "TENSOR_CORE ...", once known */
	const struct dt_recipe_kv *note_kv; /* the same, by name (kept) */
	uint32_t n_note_kv;
	struct dt_cost cost;       /* what one execution computes and moves */
	struct dt_cudnn_graph *bp; /* its graph, to build again; NULL none */
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
	struct dt_recipe_node node; /* operations: what ops show of them */
	struct dt_cudnn_graph *bp;  /* operations and graphs: what they were
				       made of when finalized */
	struct dt_recipe_node *nodes; /* OPERATIONGRAPH: its operations' */
	uint32_t n_nodes;
	char *brief; /* operations: their tensors, compactly; graphs: all of
			their operations' */
	struct cfg_info *cfg; /* ENGINECFG, and ENGINE read back from one */
	uint64_t stream;      /* a cuDNN handle: its stream (0: default) */
	struct plan_info *plan;
	struct obj *next_free; /* when destroyed */
};

#define LEGACY_BUCKETS 4096
/* cudnnDataType_t values the decoder maps. */
#define DT_CUDNN_DTYPES 64
/* The first size of a descriptor's arrays of fields and attributes. */
#define OBJ_ARRAY 8

/* The decoder's state for one model. */
struct cudnn_model {
	struct dt_model *core; /* the model it makes ops for */
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
		a_conv_stride, a_conv_dil, a_plan_json, a_plan_handle;
	int64_t bn_per_activation, norm_training;
	int8_t dtypes[DT_CUDNN_DTYPES]; /* cudnnDataType_t -> enum dt_dtype,
					   -1 none */
	/* arrays of OBJ_ARRAY fields and attributes that destroyed
	 * descriptors left, for the next ones: descriptors come and go by
	 * the million, their arrays need not */
	struct field *free_fields[64];
	struct battr *free_attrs[64];
	int n_free_fields, n_free_attrs;
	/* what is worked out once per function of the trace, by API id */
	struct cudnn_api {
		uint8_t cls;      /* enum api_class, 0 until classified */
		uint8_t setter;   /* SETTER_*, 0 until known */
		uint8_t kind_len; /* a create call: its descriptor kind's
				     length, in the function's name */
		uint8_t *roles;   /* legacy_op(): each argument's role */
		struct dt_recipe_node node; /* a call that launched work
					       but made no op */
	} * api;
	struct legacy_entry *legacy[LEGACY_BUCKETS];
};

/* What calls of one legacy problem share: described once. */
struct legacy_entry {
	uint64_t key;
	char *desc, *problem;
	struct tlist tensors;
	struct dt_cost cost;
	struct dt_recipe_node node;
	int64_t algo, workspace;
	int tensor_cores;
	struct dt_cudnn_call *call; /* the call, to be made again */
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

/* What a function does to the model's state, by its name: worked out
 * once per API of the file. */
enum api_class {
	API_UNKNOWN, /* not classified yet */
	API_OTHER,
	API_BK_CREATE,
	API_BK_DESTROY,
	API_BK_SET,
	API_BK_GET,
	API_BK_FINALIZE,
	API_BK_EXECUTE,
	API_BK_POPULATE, /* an execution put into a CUDA graph */
	API_BK_OTHER,
	API_CREATE_HANDLE,
	API_SET_STREAM,
	API_CREATE_DESC,
	API_DESTROY,
	API_DERIVE_BN,
	API_SETTER,
	API_LAUNCH,
};

/* ------------------------------- descriptors (analyzer-cudnn-model.c) */

struct obj *m_obj_find(struct cudnn_model *m, uint64_t ptr, bool create);
struct battr *m_battr(struct obj *o, int64_t name);
int64_t m_battr_i64(struct obj *o, int64_t name, int64_t def);
uint64_t m_battr_ptr(struct obj *o, int64_t name, uint32_t i);
const struct field *m_field(const struct obj *o, const char *name);
int64_t m_fval(const struct obj *o, const char *name, int64_t def);
/* The descriptor a create call made at ptr (emptied if ptr was in use);
 * m_obj_remove() takes it out, as a destroy call does. */
struct obj *m_obj_new(struct cudnn_model *m, uint64_t ptr);
void m_obj_remove(struct cudnn_model *m, struct obj *o);
/* Set attribute name of o, as cudnnBackendSetAttribute does. */
void m_set_battr(struct cudnn_model *m, struct obj *o, int64_t name,
		 int64_t type, const uint8_t *data, uint32_t bytes);
/* A finalized tensor normalized, an operation or graph described; false
 * for the descriptors finalizing does not describe. */
bool m_finalize_desc(struct cudnn_model *m, struct obj *o);
/* A new engine config's knowledge, owned by the model; what it runs: the
 * graph of g as described at its finalize. */
struct cfg_info *m_new_cfg(struct cudnn_model *m);
void m_copy_graph(struct cudnn_model *m, struct cfg_info *c,
		  const struct obj *g);

/* ------------------------------------------- describing (analyzer-describe.c)
 */

void m_tlist_append(struct tlist *l, const struct tlist *from);
void m_tlist_free(struct tlist *l);
/* Which backend descriptors are described when finalized. */
bool m_snapshot_type(const struct cudnn_model *m, int64_t btype);
/* TYPE(attr=value ...) of a backend descriptor, nested ones inline; its
 * tensors also go to j when j is given. */
void m_describe_battrs(struct cudnn_model *m, struct dt_sbuf *b,
		       struct tlist *j, struct obj *o, int depth);
/* The operation graph as it is when finalized: its operations, its
 * tensors (into j) and its cost. */
char *m_describe_graph(struct cudnn_model *m, struct obj *g, struct tlist *j,
		       struct dt_cost *cost);
/* The graph's operations' briefs merged. */
char *m_graph_brief(struct cudnn_model *m, struct obj *g);
/* An operation's cost (and its brief), from the tensors it points to. */
struct dt_cost_part *m_cost_part(struct cudnn_model *m, struct obj *o);
/* A legacy call's problem: its descriptors and scalars, keyed by key. */
struct legacy_entry *m_legacy_describe(struct cudnn_model *m,
				       const struct dt_api_def *api,
				       const struct dt_arg *args, int n,
				       uint64_t key);
/* The knob choices of the engine config at cfg_ptr, once known, into
 * c: "TILE_SIZE=4 KBLOCK=3" and the same by name. */
void m_knobs_read(struct cudnn_model *m, struct cfg_info *c, uint64_t cfg_ptr);
/* Names and values being listed (knob choices, numerical notes):
 * m_kv_add() each; m_kv_keep() returns them as an array and in words
 * (*text: "TILE_SIZE=4 KBLOCK=3", or "TENSOR_CORE FFT" for words), both
 * kept (ops may point to them), and empties the list. */
struct kv_list {
	bool words; /* the text lists names only */
	struct dt_sbuf text, names;
	uint32_t n, at[32];
	int64_t v[32];
};
void m_kv_add(struct kv_list *k, const char *name, int64_t value);
const struct dt_recipe_kv *m_kv_keep(struct cudnn_model *m, struct kv_list *k,
				     char **text, uint32_t *n);
/* An engine's numerical notes, read back into c. */
void m_notes_read(struct cudnn_model *m, struct cfg_info *c, struct obj *o,
		  int64_t attr);
/* "plan=3 <graph> knobs{...} notes{...}", kept. */
const char *m_plan_desc(struct cudnn_model *m, struct plan_info *pi);

/* ------------------------------------ analyzer-cudnn-blueprint.c */

/* What o (a finalized operation or graph) is made of, from what it
 * points to now or what they kept when finalized; and a copy of g. Both
 * malloc'd (one block), NULL when out of memory. */
struct dt_cudnn_graph *m_blueprint(struct cudnn_model *m, const struct obj *o);
struct dt_cudnn_graph *m_blueprint_copy(const struct dt_cudnn_graph *g);
/* A legacy call's arguments and the descriptors they name, as they are
 * now (malloc'd, one block); NULL when out of memory. */
struct dt_cudnn_call *m_call_blueprint(struct cudnn_model *m,
				       const struct dt_api_def *api,
				       const struct dt_arg *args, int n);

/* ----------------------------------------------- analyzer-restore.c */

/* Fill cfg from a plan's JSON representation (len bytes, maybe cut
 * short): its graph described as the built plan's, its engine and
 * knobs. handle: the handle the plan was set with (0 none), which its
 * graph gets as a built graph has its own. NULL when the graph came out;
 * otherwise why not, in words, in why. */
const char *m_restore_plan(struct cudnn_model *m, struct cfg_info *cfg,
			   const uint8_t *json, uint32_t len, uint64_t handle,
			   char *why, size_t size);

/* A finalized backend tensor in the common shape. */
void m_backend_tensor(struct cudnn_model *m, struct obj *o);

/* ------------------------------------------ analyzer-cudnn-backend.c */

/* A cudnnBackend* call other than an execution, classified as cls. */
void m_backend_call(struct cudnn_model *m, const struct dt_rec_api_call *c,
		    enum api_class cls, struct dt_arg *args, int n);
/* An execution of a plan (captured: put into a CUDA graph), as an op. */
void m_backend_execute(struct cudnn_model *m, const struct dt_rec_api_call *c,
		       const struct dt_api_def *api, const struct dt_arg *args,
		       int n, bool captured);

#endif /* DT_ANALYZER_CUDNN_MODEL_H */
