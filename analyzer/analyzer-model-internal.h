/*
 * analyzer-model-internal.h - the library-neutral core of the model: the
 * queue of ops waiting for their kernels, the calls and kernels joined,
 * CUDA-graph replays (analyzer-graphs.c), and what a library's decoder
 * may use of it (analyzer-decoder.h). Private to analyzer/'s model files;
 * no library's state is kept here.
 */
#ifndef DT_ANALYZER_MODEL_INTERNAL_H
#define DT_ANALYZER_MODEL_INTERNAL_H

#include "analyzer-cost.h"
#include "analyzer-model.h"
#include "analyzer-place.h"
#include "analyzer-util.h"
#include "dt-session.h"

/* Ops wait this long (host time) for their kernels before they are handed
 * out: CUPTI delivers kernel records some flushes after the launch. While
 * the GPU is recorded, the GPU's records must also have gone this far past
 * an op (a program's last calls, at exit, reach the file before the last
 * kernels CUPTI hands over then), up to HORIZON_MAX_NS of host time. */
#define HORIZON_NS     3000000000ull
#define HORIZON_MAX_NS 60000000000ull

/* A list of tensors, as ops show them; { 0 } is empty. */
struct tlist {
	struct dt_op_tensor *v;
	uint32_t n, cap;
};

/* An op waiting for its kernels. Its strings belong to the model or to the
 * decoder that made it (shared by every op of a problem), but for the
 * pointers and the kernel name. */
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
	uint64_t wait; /* the decoder is still to say what this op is (a
			  backend execution of a plan not finalized yet in
			  file order): the key it waits on, 0 none */
	uint8_t dec;   /* the decoder that made it: index + 1, 0 none */
	struct dt_recipe recipe; /* as its decoder filled it: the op's
				    when it holds anything */
	int tc_hint; /* what its kernels' names say of tensor cores */
};

/* The decoders a model uses: one per library its calls name. */
#define DECODERS_MAX 8

/* A note a decoder leaves of a nested call (m_nested_note()): its most
 * bytes, and the threads noted at once (a collision forgets the older). */
#define M_NOTE_MAX   128
#define M_NOTE_SLOTS 64

struct dt_model {
	const struct dt_file_info *fi;
	/* ops waiting for their kernels, in call order, and by seq (open
	 * addressing, linear probing; at most half full) */
	struct pending *head, *tail;
	uint64_t head_t_end; /* head->op.t_end, read for every record */
	struct seq_slot {
		uint64_t seq; /* here too, so probing reads no op */
		struct pending *p;
	} * by_seq;
	size_t by_seq_cap, n_pending;
	size_t n_waiting;      /* of them, ops a decoder is to say more of */
	struct pending *out;   /* last op handed out */
	struct pending *spare; /* handed out, for reuse */
	uint64_t last_out;     /* its seq */
	uint64_t now;          /* latest host time seen */
	int64_t cupti_to_mono;
	struct dt_place_calls placed; /* where timed work is placed */
	/* the most recent calls, by seq: a call that launched work but made
	 * no op (a handle created, a library with no decoder) becomes an op
	 * when its first launch shows up */
	struct recent {
		uint64_t seq;
		uint64_t t_begin, t_end;
		uint32_t tid;
		int32_t status;
		uint16_t api;
		const char *name;
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
	uint64_t max_seq;     /* the highest call seq seen */
	uint64_t gpu_now;     /* the latest end of GPU work read, host clock */
	bool gpu_live;        /* GPU work is being recorded: seen, and not
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
	} * kregs;
	size_t n_kregs, cap_kregs;
	char **kreg_paths;
	size_t n_kreg_paths;
	uint32_t *kname_idx; /* open addressing: id + 1 */
	uint32_t n_knames, cap_kname_idx;
	size_t cap_knames;
	const struct dt_consumer *cons; /* who gets the events */
	int n_cons;
	struct dt_device *devices; /* as DEVICE records described them */
	size_t n_devices, cap_devices;
	bool pointers; /* ops carry their device pointers */
	/* what is worked out once per function of the trace, by API id */
	struct api_info {
		uint8_t dec;         /* its library's decoder: index + 1, 0
					none, DEC_UNKNOWN until looked up */
		struct dt_sig *sig;  /* its signature, parsed */
		struct dt_arg *args; /* its last call, decoded */
	} * api;
	/* the decoders of the libraries the trace's calls name, each with
	 * its state, in the order they were first needed */
	struct dec_slot {
		const struct dt_decoder *d;
		void *state;
	} decs[DECODERS_MAX];
	int n_decs;
	bool gpu_unknown; /* the header could not say the GPU state */
	/* the library every API of the trace names, NULL for several;
	 * worked out again when the API table has grown since */
	const char *sole_library;
	uint32_t sole_library_apis; /* the table's size when worked out */
	/* the arguments of the call being replayed, decoded; argc -1 when
	 * they did not decode */
	const struct dt_arg *call_args;
	int call_argc;
	char **kept; /* strings ops may still point to, freed at the end */
	size_t n_kept, cap_kept;
	struct dt_graphs *graphs; /* CUDA graphs (analyzer-graphs.c) */
	/* what a decoder read of a thread's last nested call, for the
	 * decoder of the call it ran inside, by thread */
	struct nested_note {
		uint32_t tid;
		uint16_t api;
		uint64_t t_begin, t_end; /* 0, 0: none */
		uint32_t size;
		uint8_t data[M_NOTE_MAX];
	} notes[M_NOTE_SLOTS];
};

#define DEC_UNKNOWN 0xff

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

/* ------------------------------------------------ analyzer-knames.c */

/* What a kernel's name says (kept by the model). */
const struct dt_kernel_class *m_kernel_class(struct dt_model *m,
					     const char *name, uint32_t len);
/* A KERNEL_LIB record: the library that registered kernels. */
void m_kernel_lib(struct dt_model *m, const struct dt_rec_kernel_lib *r);
void m_knames_free(struct dt_model *m);

/* ------------------------- for decoders (analyzer-decoder.h says more) */

/* A new op for call c, called name, described as desc (kept by whoever
 * made it): queued for its kernels, with those that came before the
 * call's record. NULL when out of memory. */
struct pending *m_op_new(struct dt_model *m, const struct dt_rec_api_call *c,
			 const char *name, const char *desc);
/* Room for n device pointers in p->ptrs (p->n_ptrs set), in a buffer the
 * op keeps from one use to the next; false when out of memory. */
bool m_op_ptrs_room(struct pending *p, uint32_t n);
/* Op p waits for the decoder to say more of it, under key (not 0). */
void m_op_wait(struct dt_model *m, struct pending *p, uint64_t key);
/* Every waiting op of key called after seq: fn(arg, op), no longer
 * waiting. */
void m_ops_waited(struct dt_model *m, uint64_t key, uint64_t seq,
		  void (*fn)(void *arg, struct pending *p), void *arg);
/* What a decoder read of nested call c (DT_CALL_NESTED), size bytes (at
 * most M_NOTE_MAX), for the decoder of the call c ran inside, whose record
 * comes after c's: kept until a note of its thread's next nested call. */
void m_nested_note(struct dt_model *m, const struct dt_rec_api_call *c,
		   const void *note, uint32_t size);
/* The note of the last nested call of library that ran inside call c (on
 * its thread, within its time), *size its size; NULL when none. */
const void *m_nested_of(const struct dt_model *m,
			const struct dt_rec_api_call *c, const char *library,
			uint32_t *size);
/* Strings ops may point to stay until the model is freed. */
const char *m_keep(struct dt_model *m, char *s);
/* Hand every consumer a plan built. */
void m_emit_plan(struct dt_model *m, const struct dt_plan_build *b);
/* What the model counts, for a decoder to add to. */
struct dt_model_stats *m_stats(struct dt_model *m);
/* Whether ops carry their device pointers. */
bool m_pointers(const struct dt_model *m);

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
