/*
 * cmd-ops.c - `dnntrace ops`: every operation the program executed on the
 * GPU through the wrapped libraries (cuDNN; cuBLAS's and cuBLASLt's GEMMs),
 * as the analyzer's model decodes it: what it computed (tensors,
 * parameters, graph), what the library chose (engine or algorithm,
 * workspace) and what it cost (host time, kernels, GPU time). Of the
 * steady state, as report's (steady.c), unless --with-warmup.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "tools.h"

#define OPS_SCHEMA_VERSION 3

static void ops_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace ops [--format text|json] [--plans] [--call N] "
		"[--range NAME]\n                   [--with-warmup] FILE\n\n"
		"Lists every cuDNN call that executed work on the GPU, in call "
		"order: the\noperation with its tensors ([dims]:type:layout) "
		"and "
		"parameters, the engine\n(backend plans) or algorithm (legacy "
		"calls), the workspace, the host time, and\nthe kernels it "
		"launched with their GPU time; and every cuBLAS and cuBLASLt "
		"call\nthat computes (GEMMs: shapes, types, epilogue, "
		"algorithm).\n\n"
		"Only the steady state's, as report's: the start-up before "
		"it (loading,\ncompiling, autotuning, the first steps) is "
		"said in one line.\n\n"
		"  --format F  text (default) or json (schema dnntrace.ops, "
		"version %d)\n"
		"  --plans     list each distinct problem (operation and "
		"shapes, or backend\n"
		"              graph) once, with its executions and GPU time\n"
		"  --call N    show call N (its seq) in full, with its "
		"kernels\n"
		"  --range NAME  only the work inside the program's NVTX "
		"ranges NAME\n"
		"              (every one; a shell pattern: 'layer*')\n"
		"  --with-warmup  the whole run, start-up included\n"
		"  -h, --help  show this help\n",
		OPS_SCHEMA_VERSION);
}

static const char *engine_str(const struct dt_op *op, char *buf, size_t size)
{
	if (op->engine < 0)
		return "?";
	snprintf(buf, size, "%s%" PRId64, op->plan ? "eng" : "algo",
		 op->engine);
	return buf;
}

static void print_op_text(FILE *out, const struct dt_file_info *fi,
			  const struct dt_op *op)
{
	char h[32], g[32], e[32], w[32];

	/* a replay's host time is its graph launch's; a captured call ran
	 * nothing on the GPU; an unsampled one ran outside sampled
	 * recording's windows, untimed */
	fprintf(out, "%8" PRIu64 " %11.6f %9s %9s %4u %-8s %9s %s %s%s\n",
		op->seq, (double)(op->t_begin - fi->hdr.start_mono) / 1e9,
		op->origin == DT_OP_REPLAY
			? "replay"
			: dt_fmt_ns(op->t_end - op->t_begin, h, sizeof(h)),
		op->kernels		       ? dt_fmt_ns(op->gpu_ns, g, sizeof(g))
		: op->origin == DT_OP_CAPTURED ? "captured"
		: op->unsampled		       ? "unsampled"
					       : "-",
		op->kernels, engine_str(op, e, sizeof(e)),
		op->workspace >= 0
			? dt_fmt_bytes((uint64_t)op->workspace, w, sizeof(w))
			: "?",
		dt_text(dt_api_short(op->api)), dt_text(op->desc),
		op->status ? " FAILED" : "");
}

static void json_ints(struct dt_json *j, const char *key, const int64_t *v,
		      int n)
{
	dt_json_key(j, key);
	dt_json_open(j, '[', -1);
	for (int i = 0; i < n; i++)
		dt_json_i64(j, v[i]);
	dt_json_close(j, -1);
}

static void json_tensor(struct dt_json *j, const struct dt_op_tensor *ot)
{
	const struct dt_tensor *t = &ot->t;
	char dt[48];

	dt_json_open(j, '{', -1);
	dt_json_ks(j, "role", ot->role);
	dt_json_ki(j, "uid", t->uid);
	json_ints(j, "dims", t->dims, t->nb);
	json_ints(j, "strides", t->strides, t->nb);
	dt_json_ks(j, "dtype", dt_enum_short("cudnnDataType_t", t->dtype, "CUDNN_DATA_",
				     dt, sizeof(dt)));
	dt_json_key(j, "virtual");
	dt_json_bool(j, t->is_virtual);
	dt_json_key(j, "by_value");
	dt_json_bool(j, t->by_value);
	dt_json_close(j, -1);
}

/* The engine's knob choices: {"TILE_SIZE": 4, "KBLOCK": 3} */
static void json_knobs(struct dt_json *j, const struct dt_recipe *r)
{
	dt_json_key(j, "knobs");
	dt_json_open(j, '{', -1);
	for (uint32_t i = 0; r && i < r->n_knobs; i++) {
		dt_json_key(j, r->knobs[i].name);
		dt_json_i64(j, r->knobs[i].value);
	}
	dt_json_close(j, -1);
}

/* The engine's numerical notes: ["TENSOR_CORE", ...] */
static void json_notes(struct dt_json *j, const struct dt_recipe *r)
{
	dt_json_key(j, "notes");
	dt_json_open(j, '[', -1);
	for (uint32_t i = 0; r && i < r->n_notes; i++)
		dt_json_str(j, r->notes[i].name);
	dt_json_close(j, -1);
}

/* What the library calls the op and its parameters, where its decoder
 * says: "operation": "scale", "params": {"n": 4, "alpha": 2} (neither
 * for an op whose kind and tensors say it all). */
static void json_params(struct dt_json *j, const struct dt_recipe *r)
{
	if (r && r->n_nodes == 1 && r->nodes[0].name)
		dt_json_ks(j, "operation", r->nodes[0].name);
	if (!r || !r->n_params)
		return;
	dt_json_key(j, "params");
	dt_json_open(j, '{', -1);
	for (uint32_t i = 0; i < r->n_params; i++) {
		dt_json_key(j, r->params[i].name);
		if (isfinite(r->params[i].value))
			dt_json_raw(j, "%.17g", r->params[i].value);
		else
			dt_json_raw(j, "null");
	}
	dt_json_close(j, -1);
}

static void json_pointers(struct dt_json *j, const struct dt_op *op)
{
	char uid[24];

	dt_json_key(j, "pointers");
	dt_json_open(j, '{', -1);
	for (uint32_t i = 0; i < op->n_ptrs; i++) {
		const struct dt_op_ptr *p = &op->ptrs[i];
		if (p->uid >= 0) {
			snprintf(uid, sizeof(uid), "%" PRId64, p->uid);
			dt_json_key(j, uid);
		} else {
			dt_json_keyn(j, p->name,
				     p->name_len < 40 ? p->name_len : 40);
		}
		dt_json_hex(j, p->value);
	}
	dt_json_close(j, -1);
}

static void print_op_json(struct dt_json *j, const struct dt_file_info *fi,
			  const struct dt_op *op)
{
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "seq", op->seq);
	if (op->origin != DT_OP_CALL) {
		dt_json_ks(j, "origin", op->origin == DT_OP_REPLAY ? "replay"
							  : "captured");
	}
	if (op->origin == DT_OP_REPLAY) {
		dt_json_ku(j, "graph_launch", op->graph_launch);
	}
	dt_json_ku(j, "tid", op->tid);
	dt_json_ku(j, "t", op->t_begin - fi->hdr.start_mono);
	dt_json_ku(j, "host_ns", op->t_end - op->t_begin);
	dt_json_ks(j, "api", op->api);
	dt_json_ki(j, "status", op->status);
	dt_json_ku(j, "plan", op->plan);
	dt_json_ki(j, "engine", op->engine);
	dt_json_ki(j, "workspace", op->workspace);
	dt_json_ku(j, "kernels", op->kernels);
	dt_json_ku(j, "gpu_ns", op->gpu_ns);
	if (op->unsampled) { /* outside sampled recording's windows */
		dt_json_key(j, "unsampled");
		dt_json_bool(j, true);
	}
	dt_json_ks(j, "desc", op->desc);
	json_knobs(j, op->recipe);
	json_notes(j, op->recipe);
	json_params(j, op->recipe);
	dt_json_key(j, "stream");
	dt_json_hex(j, op->stream);
	dt_json_key(j, "workspace_ptr");
	dt_json_hex(j, op->workspace_ptr);
	json_pointers(j, op);
	dt_json_key(j, "tensors");
	dt_json_open(j, '[', -1);
	for (uint32_t i = 0; i < op->n_tensors; i++)
		json_tensor(j, &op->tensors[i]);
	dt_json_close(j, -1);
	dt_json_ks(j, "first_kernel", op->first_kernel);
	dt_json_ks(j, "kind", dt_op_kind_key(op->cost.kind));
	dt_json_key(j, "flops");
	dt_json_raw(j, "%.0f", op->cost.flops);
	dt_json_ku(j, "bytes", op->cost.bytes);
	dt_json_ks(j, "math", dt_math_name(op->math));
	dt_json_key(j, "tensor_cores");
	dt_json_tri(j, op->tensor_cores);
	dt_json_ki(j, "device", op->device);
	dt_json_close(j, -1);
}

/* What --plans keeps of an op: add_problem's, its description after. */
struct plan_entry {
	const char *api;
	uint32_t plan;
	bool captured;
	int64_t engine, workspace;
	uint64_t gpu_ns, host_ns, kernels;
};

/* Distinct problems: the op's function and description. */
struct problem {
	char *key;
	const char *api;
	uint32_t plan;
	int64_t engine, workspace;
	uint64_t count; /* executions: replays in, captures out */
	uint64_t captured, gpu_ns, host_ns, kernels;
};

struct problems {
	struct problem *v;
	size_t n, cap;
};

static void add_problem(struct problems *ps, const struct plan_entry *op,
			const char *desc)
{
	/* a capture ran nothing: its replays are the executions */
	bool captured = op->captured;

	for (size_t i = 0; i < ps->n; i++) {
		struct problem *p = &ps->v[i];
		if (p->api == op->api && !strcmp(p->key, desc)) {
			p->count += captured ? 0 : 1;
			p->captured += captured;
			p->gpu_ns += op->gpu_ns;
			p->host_ns += op->host_ns;
			p->kernels += op->kernels;
			if (op->engine != p->engine)
				p->engine = -2; /* changed */
			return;
		}
	}
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 64;
		struct problem *v = realloc(ps->v, cap * sizeof(*v));
		if (!v)
			return;
		ps->v = v;
		ps->cap = cap;
	}
	ps->v[ps->n++] = (struct problem){ .key = strdup(desc),
					   .api = op->api,
					   .plan = op->plan,
					   .engine = op->engine,
					   .workspace = op->workspace,
					   .count = !captured,
					   .captured = captured,
					   .gpu_ns = op->gpu_ns,
					   .host_ns = op->host_ns,
					   .kernels = op->kernels };
}

static int by_gpu(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static void print_problems(FILE *out, struct dt_json *j, struct problems *ps,
			   enum dt_format fmt)
{
	char g[32], h[32], w[32];

	if (ps->n)
		qsort(ps->v, ps->n, sizeof(*ps->v), by_gpu);
	if (fmt == DT_TEXT)
		printf("%8s %10s %10s %8s %9s  %s\n", "count", "GPU time",
		       "host time", "engine", "workspace", "problem");
	for (size_t i = 0; i < ps->n; i++) {
		struct problem *p = &ps->v[i];
		char e[32];
		if (p->engine == -2)
			snprintf(e, sizeof(e), "varies");
		else if (p->engine < 0)
			snprintf(e, sizeof(e), "?");
		else
			snprintf(e, sizeof(e), "%s%" PRId64,
				 p->plan ? "eng" : "algo", p->engine);
		if (fmt == DT_TEXT) {
			fprintf(out, "%8" PRIu64 " %10s %10s %8s %9s  %s %s\n",
				p->count, dt_fmt_ns(p->gpu_ns, g, sizeof(g)),
				dt_fmt_ns(p->host_ns, h, sizeof(h)), e,
				p->workspace >= 0
					? dt_fmt_bytes((uint64_t)p->workspace,
						       w, sizeof(w))
					: "?",
				dt_text(dt_api_short(p->api)),
				dt_text(p->key));
		} else {
			dt_json_open(j, '{', -1);
			dt_json_ks(j, "api", p->api);
			dt_json_ku(j, "count", p->count);
			dt_json_ku(j, "captured", p->captured);
			dt_json_ku(j, "gpu_ns", p->gpu_ns);
			dt_json_ku(j, "host_ns", p->host_ns);
			dt_json_ku(j, "kernels", p->kernels);
			dt_json_ki(j, "engine", p->engine);
			dt_json_ki(j, "workspace", p->workspace);
			dt_json_ks(j, "desc", p->key);
			dt_json_close(j, -1);
		}
		free(p->key);
	}
	free(ps->v);
}

/* What `ops` prints as the session hands it events. */
struct ops_out {
	FILE *out;
	struct dt_json j;
	const struct dt_file_info *fi;
	enum dt_format fmt;
	bool plans;
	int64_t call; /* --call N, or -1 */
	bool call_seen;
	uint64_t first_seq, last_seq; /* of the calls seen */
	struct problems ps;
	/* the listing, kept until the steady state is known: each op
	 * written to mem (an element of its own, the JSON's by ej) */
	struct dt_steady *st;
	FILE *mem;
	char *mem_buf;
	size_t mem_len;
	struct dt_json ej;
	uint64_t listed; /* op executions listed (captures not) */
};

/* --call N: the call, decoded. */
static void on_call(void *arg, const struct dt_call *c)
{
	struct ops_out *o = arg;
	char buf[16384];

	if (!o->first_seq || c->seq < o->first_seq)
		o->first_seq = c->seq;
	if (c->seq > o->last_seq)
		o->last_seq = c->seq;
	if (c->seq != (uint64_t)o->call || !c->name)
		return;
	o->call_seen = true;
	dt_call_format(c->name, c->sig, c->args, c->args_len, buf, sizeof(buf));
	char st[64];
	fprintf(o->out,
		"call %" PRIu64 " (thread %u, %.6f s, %" PRIu64
		" ns):\n  %s(%s) = %s\n",
		c->seq, c->tid,
		(double)(c->t_begin - o->fi->hdr.start_mono) / 1e9,
		c->t_end - c->t_begin, dt_text(c->name), dt_text(buf),
		dt_library_status(c->library, c->status, st, sizeof(st)));
}

/* --call N: its kernels. */
static void on_activity(void *arg, const struct dt_activity *a)
{
	struct ops_out *o = arg;
	const struct dt_rec_kernel *k = a->kernel;
	uint32_t len;
	const uint8_t *name = dt_rec_tail(a->rec, &len);

	if (a->call != (uint64_t)o->call || a->kind != DT_ACT_KERNEL)
		return;
	fputs("  kernel ", o->out);
	dt_put_textn(o->out, (const char *)name, len);
	fprintf(o->out,
		": %" PRIu64 " ns, grid [%d,%d,%d] block [%d,%d,%d]\n",
		k->end - k->start, k->grid_x, k->grid_y,
		k->grid_z, k->block_x, k->block_y, k->block_z);
}

/* An op as it is listed, kept with its time. */
static void keep_op(struct ops_out *o, const struct dt_op *op)
{
	long len;

	rewind(o->mem);
	/* whether it ran anything: a capture is no execution */
	fputc(op->origin == DT_OP_CAPTURED ? 'c' : 'x', o->mem);
	if (o->fmt == DT_JSON) {
		dt_json_init(&o->ej, o->mem); /* an element alone: no comma */
		print_op_json(&o->ej, o->fi, op);
	} else {
		print_op_text(o->mem, o->fi, op);
	}
	fflush(o->mem);
	if ((len = ftell(o->mem)) >= 0)
		dt_steady_keep(o->st, dt_sum_op_t(op), o->mem_buf, (size_t)len);
}

/* What --plans adds up of an op, kept with its time. */
static void keep_plan(struct ops_out *o, const struct dt_op *op)
{
	struct plan_entry e = { .api = op->api,
				.plan = op->plan,
				.captured = op->origin == DT_OP_CAPTURED,
				.engine = op->engine,
				.workspace = op->workspace,
				.gpu_ns = op->gpu_ns,
				.host_ns = op->t_end - op->t_begin,
				.kernels = op->kernels };
	size_t n = strlen(op->desc ? op->desc : "");

	rewind(o->mem);
	if (fwrite(&e, sizeof(e), 1, o->mem) == 1 &&
	    fwrite(op->desc ? op->desc : "", 1, n, o->mem) == n &&
	    !fflush(o->mem))
		dt_steady_keep(o->st, dt_sum_op_t(op), o->mem_buf,
			       sizeof(e) + n);
}

/* An op of the steady state, kept: listed, or added to its problem. */
static void list_op(void *arg, const void *p, size_t len)
{
	struct ops_out *o = arg;
	struct plan_entry e;

	if (!o->plans) {
		const char *text = (const char *)p + 1;
		o->listed += *(const char *)p != 'c';
		if (o->fmt == DT_JSON)
			dt_json_raw(&o->j, "%s", text);
		else
			fwrite(text, 1, len - 1, o->out);
		return;
	}
	memcpy(&e, p, sizeof(e));
	o->listed += !e.captured;
	add_problem(&o->ps, &e, (const char *)p + sizeof(e));
}

static void on_op(void *arg, const struct dt_op *op)
{
	struct ops_out *o = arg;
	char e[32], w[32];

	if (o->call > 0) {
		if (op->seq == (uint64_t)o->call)
			fprintf(o->out,
				"  operation: %s\n  engine: %s, workspace: "
				"%s, %u kernels, GPU %" PRIu64 " ns\n",
				dt_text(op->desc), engine_str(op, e, sizeof(e)),
				op->workspace >= 0
					? dt_fmt_bytes((uint64_t)op->workspace,
						       w, sizeof(w))
					: "?",
				op->kernels, op->gpu_ns);
	} else if (o->plans) {
		keep_plan(o, op);
	} else {
		keep_op(o, op);
	}
}

/* What the command line asks for. */
struct ops_args {
	enum dt_format fmt;
	bool plans;
	int64_t call; /* --call N, or -1 */
	const char *range;
	bool whole; /* --with-warmup */
};

/* The options into a: -1, or the exit status when the command ends here
 * (--help, a value it does not take). */
static int ops_options(int argc, char **argv, struct ops_args *a)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "plans", no_argument, NULL, 'p' },
		{ "call", required_argument, NULL, 'c' },
		{ "range", required_argument, NULL, 'R' },
		{ "with-warmup", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c;

	optind = 1;
	while ((c = dt_getopt("ops", argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'f':
			if (dt_parse_format("ops", optarg, DT_FORMATS_PLAIN,
					    &a->fmt))
				return EXIT_USAGE;
			break;
		case 'p':
			a->plans = true;
			break;
		case 'c':
			if (dt_parse_int(optarg, 1, LONG_MAX, &v))
				return dt_usage_error(
					"ops",
					"--call takes a call's seq number");
			a->call = v;
			break;
		case 'R':
			a->range = optarg;
			break;
		case 'W':
			a->whole = true;
			break;
		case 'h':
			ops_help(stdout);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return dt_usage_error("ops", "expected one trace file");
	return -1;
}

/* The listing's beginning: the JSON document up to its array of ops (or
 * problems), or the text's column heads. */
static void ops_begin(struct ops_out *o, const char *path)
{
	if (o->fmt == DT_JSON) {
		dt_json_open(&o->j, '{', -1);
		dt_json_key(&o->j, "schema");
		dt_json_str(&o->j, "dnntrace.ops");
		dt_json_key(&o->j, "version");
		dt_json_u64(&o->j, OPS_SCHEMA_VERSION);
		dt_json_key(&o->j, "file");
		dt_json_str(&o->j, path);
		dt_json_key(&o->j, o->plans ? "problems" : "ops");
		dt_json_open(&o->j, '[', 4);
	} else if (!o->plans && o->call < 0) {
		printf("%8s %11s %9s %9s %4s %-8s %9s %s\n", "seq", "t (s)",
		       "host", "GPU", "kern", "engine", "workspace",
		       "operation");
	}
}

/* The JSON's end: its "stats", what the model decoded and how the trace
 * ended. */
static void ops_json_end(struct ops_out *o, const struct dt_model_stats *ms,
			 const struct dt_file_stats *st)
{
	struct dt_json *j = &o->j;

	dt_json_close(j, 2);
	if (o->st)
		dt_json_startup(j, dt_steady_summary(o->st));
	dt_json_key(j, "stats");
	dt_json_open(j, '{', -1);
	dt_json_ku(j, "ops", o->st ? o->listed : ms->ops);
	dt_json_ku(j, "undecoded_calls", ms->undecoded);
	dt_json_ku(j, "other_kernels", ms->other_kernels);
	dt_json_ku(j, "late_kernels", ms->late_kernels);
	dt_json_key(j, "graphs");
	dt_json_graphs(j, &ms->graphs);
	dt_json_key(j, "plans");
	dt_json_plans(j, &ms->plans);
	dt_json_key(j, "complete");
	dt_json_bool(j, dt_trace_complete(st));
	dt_json_ks(j, "file_end", dt_file_end_name(st->end));
	if (st->end != DT_FILE_CLEAN) {
		char how[512];
		dt_json_ks(j, "file_end_how",
			   dt_file_end_text(st, how, sizeof(how)));
	}
	dt_json_ku(j, "lost", st->lost);
	dt_json_key(j, "lost_exact");
	dt_json_bool(j, st->lost_exact);
	dt_json_ku(j, "gpu_dropped", st->gpu_dropped);
	dt_json_close(j, -1);
	dt_json_close(j, -1);
	putchar('\n');
}

/* The text's closing "# " lines: the totals, sampling, CUDA graphs, and
 * what an incomplete trace lacks. */
static void ops_text_end(const struct ops_out *o,
			 const struct dt_model_stats *ms,
			 const struct dt_file_stats *st)
{
	const struct dt_summary *s = dt_steady_summary(o->st);
	/* a trace of cuDNN alone (or before LIBRARY records) says cuDNN */
	bool several = !dt_sum_cudnn_only(s);
	bool cut = s->startup.traces > 0;
	char up[1024];

	if (dt_sum_startup_text(s, up, sizeof(up)))
		printf("# start-up: %s\n", up);
	printf("# %" PRIu64 " op executions%s; %" PRIu64
	       " kernels ran outside %s calls%s%s\n",
	       o->listed, cut ? " in the steady state" : "", ms->other_kernels,
	       several ? "the libraries'" : "cuDNN",
	       cut ? " in the whole run" : "",
	       ms->undecoded ? "; some calls could not be decoded" : "");
	if (ms->sampling.one_in)
		printf("# GPU activity sampled: %" PRIu64 " windows, "
		       "one in %u; %" PRIu64 " operations ran outside "
		       "them, untimed (\"unsampled\")\n",
		       ms->sampling.windows, ms->sampling.one_in,
		       ms->sampling.unsampled_ops);
	const struct dt_graph_stats *g = &ms->graphs;
	if (g->captured || g->kernels)
		printf("# CUDA graphs: %" PRIu64 " calls put work into "
		       "graphs, %" PRIu64 " replays of it listed; %" PRIu64
		       " kernels replayed, %" PRIu64 " of them %s%s\n",
		       g->captured, g->replays, g->kernels, g->attributed,
		       several ? "the libraries' calls'" : "cuDNN's",
		       g->unknown ? " (some from graphs whose making "
				    "the trace does not show)"
				  : "");
	if (!dt_trace_complete(st)) {
		char how[512], lost[512];
		printf("# the trace is incomplete: ended %s; %s; %" PRIu64
		       " GPU records dropped by CUPTI; the operations "
		       "it lacks are not listed\n",
		       dt_file_end_text(st, how, sizeof(how)),
		       dt_lost_text(st, ms, " lost", lost, sizeof(lost)),
		       st->gpu_dropped);
	}
}

/* --call N named no call of the trace: say which calls it holds. */
static void no_such_call(const char *path, const struct ops_out *o,
			 const struct dt_file_stats *st)
{
	if (o->last_seq)
		dt_error("%s: no call %" PRId64 " in this trace (its "
			 "calls go from %" PRIu64 " to %" PRIu64 ")%s",
			 path, o->call, o->first_seq, o->last_seq,
			 st->end != DT_FILE_CLEAN
				 ? ", as far as it could be read"
				 : "");
	else
		dt_error("%s: no call %" PRId64 " in this trace: it holds none",
			 path, o->call);
}

/* What the listing may lack, on stderr: kernels too late for their
 * operation, a trace that ended badly. */
static void ops_warnings(const char *path, const struct dt_model_stats *ms,
			 const struct dt_file_stats *st)
{
	if (ms->late_kernels)
		dt_error("warning: %" PRIu64
			 " kernels arrived too late to be added to "
			 "their operation",
			 ms->late_kernels);
	if (st->end != DT_FILE_CLEAN)
		dt_error("warning: %s: %s%s%s; decoded what is there", path,
			 dt_file_end_name(st->end), st->error[0] ? ": " : "",
			 st->error);
}

/* The listing kept until the steady state is known (not for --call):
 * false, said, when it cannot be. */
static bool ops_steady(struct ops_out *o, bool whole)
{
	if (o->call > 0)
		return true;
	o->st = dt_steady_new(whole);
	o->mem = open_memstream(&o->mem_buf, &o->mem_len);
	if (o->st && o->mem)
		return true;
	if (o->st)
		dt_error("out of memory");
	return false;
}

static void ops_free(struct ops_out *o)
{
	dt_steady_free(o->st);
	if (o->mem)
		fclose(o->mem);
	free(o->mem_buf);
}

/* The session run: the ops listed, those of the steady state unless
 * --with-warmup. */
static int ops_run(struct ops_out *o, struct dt_session *ss)
{
	if (!o->st) {
		dt_session_run(ss);
		return 0;
	}
	if (dt_steady_read(o->st, ss) < 0)
		return -1;
	return dt_steady_each(o->st, list_op, o);
}

int cmd_ops(int argc, char **argv)
{
	struct ops_args a = { .fmt = DT_TEXT, .call = -1 };
	int rc = ops_options(argc, argv, &a);

	if (rc >= 0)
		return rc;
	const char *path = argv[optind];
	struct dt_session_opts so = { .pointers = true, .range = a.range };
	struct dt_session *ss = dt_open_session(path, &so);
	if (!ss)
		return EXIT_USAGE;
	struct ops_out o = { .out = stdout,
			     .fi = dt_session_info(ss),
			     .fmt = a.fmt,
			     .plans = a.plans,
			     .call = a.call };
	dt_json_init(&o.j, stdout);
	struct dt_consumer cons = { .arg = &o, .op = on_op };
	if (a.call > 0) {
		cons.call = on_call;
		cons.activity = on_activity;
	}
	if (!ops_steady(&o, a.whole) || dt_session_add(ss, &cons) < 0) {
		ops_free(&o);
		dt_session_close(ss);
		return 1;
	}
	ops_begin(&o, path);
	rc = ops_run(&o, ss) < 0 ? 1 : 0;
	if (a.plans)
		print_problems(stdout, &o.j, &o.ps, a.fmt);
	const struct dt_model_stats *ms = dt_session_stats(ss);
	const struct dt_file_stats *st = dt_session_file(ss);
	if (a.fmt == DT_JSON) {
		ops_json_end(&o, ms, st);
	} else if (a.call < 0) {
		ops_text_end(&o, ms, st);
	} else if (!o.call_seen) {
		no_such_call(path, &o, st);
		rc = EXIT_USAGE;
	}
	if (rc != EXIT_USAGE)
		ops_warnings(path, ms, st);
	ops_free(&o);
	dt_session_close(ss);
	return rc;
}
