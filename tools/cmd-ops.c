/*
 * cmd-ops.c - `dnntrace ops`: every operation the program executed on the
 * GPU through cuDNN, as the analyzer's model decodes it: what it computed
 * (tensors, parameters, graph), what cuDNN chose (engine or algorithm,
 * workspace) and what it cost (host time, kernels, GPU time).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "dt-tools.h"

#define OPS_SCHEMA_VERSION 1

enum format { TEXT, JSON };

static void ops_help(FILE *f)
{
	fprintf(f,
		"usage: dnntrace ops [--format text|json] [--plans] [--call N] "
		"FILE\n\n"
		"Lists every cuDNN call that executed work on the GPU, in call "
		"order: the\noperation with its tensors ([dims]:type:layout) "
		"and "
		"parameters, the engine\n(backend plans) or algorithm (legacy "
		"calls), the workspace, the host time, and\nthe kernels it "
		"launched with their GPU time.\n\n"
		"  --format F  text (default) or json (schema dnntrace.ops, "
		"version %d)\n"
		"  --plans     list each distinct problem (operation and "
		"shapes, or backend\n"
		"              graph) once, with its executions and GPU time\n"
		"  --call N    show call N (its seq) in full, with its "
		"kernels\n"
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

	fprintf(out, "%8" PRIu64 " %11.6f %9s %9s %4u %-8s %9s %s %s%s\n",
		op->seq, (double)(op->t_begin - fi->hdr.start_mono) / 1e9,
		dt_fmt_ns(op->t_end - op->t_begin, h, sizeof(h)),
		op->kernels ? dt_fmt_ns(op->gpu_ns, g, sizeof(g)) : "-",
		op->kernels, engine_str(op, e, sizeof(e)),
		op->workspace >= 0
			? dt_fmt_bytes((uint64_t)op->workspace, w, sizeof(w))
			: "?",
		op->api + 5, op->desc, op->status ? " FAILED" : "");
}

static void print_tensor_json(FILE *out, const struct dt_op_tensor *ot,
			      bool first)
{
	const struct dt_tensor *t = &ot->t;
	char dt[48];

	fprintf(out, "%s{\"role\": \"%s\", \"uid\": %" PRId64 ", \"dims\": [",
		first ? "" : ", ", ot->role, t->uid);
	for (int i = 0; i < t->nb; i++)
		fprintf(out, "%s%" PRId64, i ? ", " : "", t->dims[i]);
	fputs("], \"strides\": [", out);
	for (int i = 0; i < t->nb; i++)
		fprintf(out, "%s%" PRId64, i ? ", " : "", t->strides[i]);
	fprintf(out, "], \"dtype\": \"%s\", \"virtual\": %s, \"by_value\": %s}",
		dt_enum_short("cudnnDataType_t", t->dtype, "CUDNN_DATA_", dt,
			      sizeof(dt)),
		t->is_virtual ? "true" : "false",
		t->by_value ? "true" : "false");
}

static void print_op_json(FILE *out, const struct dt_file_info *fi,
			  const struct dt_op *op, bool first)
{
	fprintf(out,
		"%s\n    {\"seq\": %" PRIu64 ", \"tid\": %u, \"t\": %" PRIu64
		", \"host_ns\": %" PRIu64 ", \"api\": ",
		first ? "" : ",", op->seq, op->tid,
		op->t_begin - fi->hdr.start_mono, op->t_end - op->t_begin);
	dt_json_str(out, op->api);
	fprintf(out,
		", \"status\": %d, \"plan\": %u, \"engine\": %" PRId64
		", \"workspace\": %" PRId64
		", \"kernels\": %u, \"gpu_ns\": %" PRIu64 ", \"desc\": ",
		op->status, op->plan, op->engine, op->workspace, op->kernels,
		op->gpu_ns);
	dt_json_str(out, op->desc);
	fprintf(out, ", \"knobs\": {");
	/* "A=1 B=2" -> "A": 1, "B": 2 */
	for (const char *k = op->knobs; k && *k;) {
		const char *eq = strchr(k, '='), *sp = strchr(k, ' ');
		if (!eq)
			break;
		fprintf(out, "%s\"%.*s\": %lld", k == op->knobs ? "" : ", ",
			(int)(eq - k), k, strtoll(eq + 1, NULL, 10));
		k = sp ? sp + 1 : "";
	}
	fprintf(out, "}, \"notes\": [");
	for (const char *n = op->notes; n && *n;) {
		const char *sp = strchr(n, ' ');
		int l = sp ? (int)(sp - n) : (int)strlen(n);
		fprintf(out, "%s\"%.*s\"", n == op->notes ? "" : ", ", l, n);
		n = sp ? sp + 1 : "";
	}
	fprintf(out,
		"], \"stream\": \"0x%" PRIx64
		"\", \"workspace_ptr\": \"0x%" PRIx64 "\", \"pointers\": {",
		op->stream, op->workspace_ptr);
	for (uint32_t i = 0; i < op->n_ptrs; i++) {
		const struct dt_op_ptr *p = &op->ptrs[i];
		if (p->uid >= 0)
			fprintf(out, "%s\"%" PRId64 "\": \"0x%" PRIx64 "\"",
				i ? ", " : "", p->uid, p->value);
		else
			fprintf(out, "%s\"%.*s\": \"0x%" PRIx64 "\"",
				i ? ", " : "",
				(int)(p->name_len < 40 ? p->name_len : 40),
				p->name, p->value);
	}
	fputs("}, \"tensors\": [", out);
	for (uint32_t i = 0; i < op->n_tensors; i++)
		print_tensor_json(out, &op->tensors[i], i == 0);
	fputs("], \"first_kernel\": ", out);
	if (op->first_kernel)
		dt_json_str(out, op->first_kernel);
	else
		fputs("null", out);
	fprintf(out,
		", \"kind\": \"%s\", \"flops\": %.0f, \"bytes\": %" PRIu64
		", \"math\": \"%s\", \"tensor_cores\": %s, \"device\": %d}",
		dt_op_kind_key(op->cost.kind), op->cost.flops, op->cost.bytes,
		dt_math_name(op->math),
		op->tensor_cores < 0 ? "null"
		: op->tensor_cores   ? "true"
				     : "false",
		op->device);
}

/* Distinct problems: the op's function and description. */
struct problem {
	char *key;
	const char *api;
	uint32_t plan;
	int64_t engine, workspace;
	uint64_t count, gpu_ns, host_ns, kernels;
};

struct problems {
	struct problem *v;
	size_t n, cap;
};

static void add_problem(struct problems *ps, const struct dt_op *op)
{
	for (size_t i = 0; i < ps->n; i++) {
		struct problem *p = &ps->v[i];
		if (p->api == op->api && !strcmp(p->key, op->desc)) {
			p->count++;
			p->gpu_ns += op->gpu_ns;
			p->host_ns += op->t_end - op->t_begin;
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
	ps->v[ps->n++] = (struct problem){
		strdup(op->desc), op->api, op->plan,   op->engine,
		op->workspace,    1,       op->gpu_ns, op->t_end - op->t_begin,
		op->kernels
	};
}

static int by_gpu(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static void print_problems(FILE *out, struct problems *ps, enum format fmt)
{
	char g[32], h[32], w[32];

	if (ps->n)
		qsort(ps->v, ps->n, sizeof(*ps->v), by_gpu);
	if (fmt == TEXT)
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
		if (fmt == TEXT) {
			fprintf(out, "%8" PRIu64 " %10s %10s %8s %9s  %s %s\n",
				p->count, dt_fmt_ns(p->gpu_ns, g, sizeof(g)),
				dt_fmt_ns(p->host_ns, h, sizeof(h)), e,
				p->workspace >= 0
					? dt_fmt_bytes((uint64_t)p->workspace,
						       w, sizeof(w))
					: "?",
				p->api + 5, p->key);
		} else {
			fprintf(out, "%s\n    {\"api\": ", i ? "," : "");
			dt_json_str(out, p->api);
			fprintf(out,
				", \"count\": %" PRIu64 ", \"gpu_ns\": %" PRIu64
				", \"host_ns\": %" PRIu64
				", \"kernels\": %" PRIu64
				", \"engine\": %" PRId64
				", \"workspace\": %" PRId64 ", \"desc\": ",
				p->count, p->gpu_ns, p->host_ns, p->kernels,
				p->engine, p->workspace);
			dt_json_str(out, p->key);
			fputc('}', out);
		}
		free(p->key);
	}
	free(ps->v);
}

/* What `ops` prints as the session hands it events. */
struct ops_out {
	FILE *out;
	const struct dt_file_info *fi;
	enum format fmt;
	bool plans, first;
	int64_t call; /* --call N, or -1 */
	bool call_seen;
	struct problems ps;
};

/* --call N: the call, decoded. */
static void on_call(void *arg, const struct dt_call *c)
{
	struct ops_out *o = arg;
	char buf[16384];

	if (c->seq != (uint64_t)o->call || !c->name)
		return;
	o->call_seen = true;
	dt_call_format(c->name, c->sig, c->args, c->args_len, buf, sizeof(buf));
	const char *st = dt_status_name(c->status);
	fprintf(o->out,
		"call %" PRIu64 " (thread %u, %.6f s, %" PRIu64
		" ns):\n  %s(%s) = %s\n",
		c->seq, c->tid,
		(double)(c->t_begin - o->fi->hdr.start_mono) / 1e9,
		c->t_end - c->t_begin, c->name, buf, st ? st : "?");
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
	fprintf(o->out,
		"  kernel %.*s: %" PRIu64 " ns, grid [%d,%d,%d] "
		"block [%d,%d,%d]\n",
		(int)len, name, k->end - k->start, k->grid_x, k->grid_y,
		k->grid_z, k->block_x, k->block_y, k->block_z);
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
				op->desc, engine_str(op, e, sizeof(e)),
				op->workspace >= 0
					? dt_fmt_bytes((uint64_t)op->workspace,
						       w, sizeof(w))
					: "?",
				op->kernels, op->gpu_ns);
	} else if (o->plans) {
		add_problem(&o->ps, op);
	} else if (o->fmt == JSON) {
		print_op_json(o->out, o->fi, op, o->first);
		o->first = false;
	} else {
		print_op_text(o->out, o->fi, op);
	}
}

int cmd_ops(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "plans", no_argument, NULL, 'p' },
		{ "call", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum format fmt = TEXT;
	bool plans = false;
	int64_t call = -1;
	int c;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "text"))
				fmt = TEXT;
			else if (!strcmp(optarg, "json"))
				fmt = JSON;
			else
				return dt_usage_error(
					"ops", "--format takes text or json");
			break;
		case 'p':
			plans = true;
			break;
		case 'c':
			call = strtoll(optarg, &end, 10);
			if (*end || end == optarg || call < 1)
				return dt_usage_error(
					"ops",
					"--call takes a call's seq number");
			break;
		case 'h':
			ops_help(stdout);
			return 0;
		default:
			return dt_usage_error("ops", "unknown option");
		}
	}
	if (argc - optind != 1)
		return dt_usage_error("ops", "expected one trace file");

	const char *path = argv[optind];
	struct dt_session_opts so = { .pointers = true };
	struct dt_session *ss = dt_open_session(path, &so);
	if (!ss)
		return EXIT_USAGE;
	struct ops_out o = { .out = stdout,
			     .fi = dt_session_info(ss),
			     .fmt = fmt,
			     .plans = plans,
			     .first = true,
			     .call = call };
	struct dt_consumer cons = { .arg = &o, .op = on_op };
	if (call > 0) {
		cons.call = on_call;
		cons.activity = on_activity;
	}
	dt_session_add(ss, &cons);

	if (fmt == JSON) {
		printf("{\"schema\": \"dnntrace.ops\", \"version\": %d, "
		       "\"file\": ",
		       OPS_SCHEMA_VERSION);
		dt_json_str(stdout, path);
		printf(", \"%s\": [", plans ? "problems" : "ops");
	} else if (!plans && call < 0) {
		printf("%8s %11s %9s %9s %4s %-8s %9s %s\n", "seq", "t (s)",
		       "host", "GPU", "kern", "engine", "workspace",
		       "operation");
	}
	dt_session_run(ss);
	if (plans)
		print_problems(stdout, &o.ps, fmt);
	const struct dt_model_stats *ms = dt_session_stats(ss);
	const struct dt_file_stats *st = dt_session_file(ss);
	if (fmt == JSON) {
		printf("\n  ], \"stats\": {\"ops\": %" PRIu64
		       ", \"undecoded_calls\": %" PRIu64
		       ", \"other_kernels\": %" PRIu64
		       ", \"late_kernels\": %" PRIu64 ", \"file_end\": ",
		       ms->ops, ms->undecoded, ms->other_kernels,
		       ms->late_kernels);
		dt_json_str(stdout, dt_file_end_name(st->end));
		printf("}}\n");
	} else if (call < 0) {
		printf("# %" PRIu64 " operations; %" PRIu64
		       " kernels ran outside cuDNN "
		       "calls%s\n",
		       ms->ops, ms->other_kernels,
		       ms->undecoded ? "; some calls could not be decoded"
				     : "");
	}
	if (ms->late_kernels)
		dt_error("warning: %" PRIu64
			 " kernels arrived too late to be added to "
			 "their operation",
			 ms->late_kernels);
	if (st->end != DT_FILE_CLEAN)
		dt_error("warning: %s: %s%s%s; decoded what is there", path,
			 dt_file_end_name(st->end), st->error[0] ? ": " : "",
			 st->error);
	dt_session_close(ss);
	return 0;
}
