/*
 * export-table-rows.c - the rows of `dnntrace export --format sqlite|csv`:
 * what each event of a trace's session becomes in the tables of
 * export-schema.h (calls, kernels, copies, sets, GPUs and their recording
 * state, threads, losses, ops with their tensors, plans built), and each
 * trace's PROCESSES row and the export's META.
 *
 * It fills cells and emits rows; it knows nothing of SQL or CSV, nor of
 * how rows reach a back end (export-tables.c).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-config.h"
#include "export-tables.h"
#include "tools.h"

/* A data type's name (its number when cuDNN defines none), NULL when not
 * known. */
static const char *dtype_name(int64_t dtype, char *buf, size_t size)
{
	return dtype >= 0 ? dt_dtype_name(dtype, buf, size) : NULL;
}

/* A CLOCK_MONOTONIC time of the trace being read, on the time line. */
static inline int64_t line_time(const struct exporter *x, uint64_t mono)
{
	return dt_export_line(x->t, mono);
}

static void put_process(struct exporter *x, unsigned gpid_col, unsigned pid_col)
{
	put_i(x, gpid_col, x->gpid);
	put_i(x, pid_col, x->t->pid);
}

_Static_assert((int)XT_cublas_n_cols == (int)XT_call_n_cols &&
		       (int)XT_cublas_args == (int)XT_call_args,
	       "CUBLAS_EVENTS has CUDNN_EVENTS's columns");

static void on_call(void *arg, const struct dt_call *c)
{
	struct exporter *x = arg;

	if (!dt_export_in(x->t, c->t_begin, c->t_end))
		return;
	int len = -1;
	if (c->argc >= 0) {
		len = dt_args_format(c->name, c->argv, c->argc, x->args,
				     x->args_cap);
		if (len >= 0 && (size_t)len >= x->args_cap)
			len = xt_grow(&x->args, &x->args_cap, (size_t)len + 1,
				      1)
				      ? dt_args_format(c->name, c->argv,
						       c->argc, x->args,
						       x->args_cap)
				      : -1;
	}
	put_i(x, XT_call_start, line_time(x, c->t_begin));
	put_i(x, XT_call_end, line_time(x, c->t_end));
	put_i(x, XT_call_globalTid, x->gpid + c->tid);
	put_process(x, XT_call_globalPid, XT_call_pid);
	put_i(x, XT_call_tid, c->tid);
	put_i(x, XT_call_seq, (int64_t)c->seq);
	put_id(x, XT_call_nameId, xt_intern_kept(x, c->name));
	put_s(x, XT_call_library, c->library); /* NULL: not known */
	put_i(x, XT_call_status, c->status);
	put_i(x, XT_call_nested, !!(c->flags & DT_CALL_NESTED));
	put_i(x, XT_call_byDnntrace, !!(c->flags & DT_CALL_BY_DNNTRACE));
	if (len >= 0)
		put_sn(x, XT_call_args, x->args, (size_t)len);
	else
		put_null(x, XT_call_args);
	/* cuBLAS's and cuBLASLt's calls in the table Nsight Systems puts
	 * them in, its columns numbered as CUDNN_EVENTS's */
	emit(x, dt_lib_of_library(c->library) == DT_LIB_CUBLAS ? XT_cublas
							       : XT_call);
	/* a library's call inside another's is neither (COUNTS.md) */
	if (c->flags & DT_CALL_BY_DNNTRACE)
		x->own_calls++;
	else if (!(c->flags & DT_CALL_NESTED))
		x->calls++;
}

/* A kernel's mangled and short names, interned once per name and trace. */
static void kernel_names(struct exporter *x, const struct dt_kernel_class *kc,
			 uint32_t *mangled, uint32_t *shortname)
{
	if (!xt_grow(&x->kernel_names, &x->cap_kernel_names,
		     2 * ((size_t)kc->id + 1), sizeof(*x->kernel_names))) {
		*mangled = *shortname = 0;
		return;
	}
	uint32_t *slot = &x->kernel_names[2 * (size_t)kc->id];
	if (!slot[0]) {
		size_t n;
		const char *f = dt_kernel_function(kc->name, kc->len, &n);
		slot[0] = xt_intern(x, kc->name, kc->len);
		slot[1] = xt_intern(x, f, n);
	}
	*mangled = slot[0];
	*shortname = slot[1];
}

/* The columns every activity table shares (XT_ACTIVITY). */
#define PUT_ACTIVITY(x, t, a)                                               \
	do {                                                                \
		if ((a)->timed) {                                           \
			put_i(x, XT_##t##_start, line_time(x, (a)->start)); \
			put_i(x, XT_##t##_end, line_time(x, (a)->end));     \
		} else {                                                    \
			put_null(x, XT_##t##_start);                        \
			put_null(x, XT_##t##_end);                          \
		}                                                           \
		put_i(x, XT_##t##_deviceId, (a)->device);                   \
		put_i(x, XT_##t##_contextId, (a)->context);                 \
		put_i(x, XT_##t##_streamId, (a)->stream);                   \
		put_i(x, XT_##t##_correlationId, (a)->corr);                \
		put_process(x, XT_##t##_globalPid, XT_##t##_pid);           \
		if ((a)->call)                                              \
			put_i(x, XT_##t##_callSeq, (int64_t)(a)->call);     \
		else                                                        \
			put_null(x, XT_##t##_callSeq);                      \
		if ((a)->exec)                                              \
			put_i(x, XT_##t##_exec, (int64_t)(a)->exec);        \
		else                                                        \
			put_null(x, XT_##t##_exec);                         \
	} while (0)

static void put_kernel(struct exporter *x, const struct dt_activity *a)
{
	const struct dt_rec_kernel *k = a->kernel;
	const struct dt_kernel_class *kc = a->kc;
	uint32_t mangled = 0, shortname = 0;

	if (kc)
		kernel_names(x, kc, &mangled, &shortname);
	PUT_ACTIVITY(x, kernel, a);
	put_id(x, XT_kernel_shortName, shortname);
	put_id(x, XT_kernel_mangledName, mangled);
	put_i(x, XT_kernel_gridX, k->grid_x);
	put_i(x, XT_kernel_gridY, k->grid_y);
	put_i(x, XT_kernel_gridZ, k->grid_z);
	put_i(x, XT_kernel_blockX, k->block_x);
	put_i(x, XT_kernel_blockY, k->block_y);
	put_i(x, XT_kernel_blockZ, k->block_z);
	put_i(x, XT_kernel_staticSharedMemory, k->static_smem);
	put_i(x, XT_kernel_dynamicSharedMemory, k->dynamic_smem);
	put_i(x, XT_kernel_registersPerThread, k->registers);
	if (k->graph_id) {
		put_i(x, XT_kernel_graphId, k->graph_id);
		put_i(x, XT_kernel_graphNodeId, (int64_t)k->graph_node);
	} else {
		put_null(x, XT_kernel_graphId);
		put_null(x, XT_kernel_graphNodeId);
	}
	if (kc) {
		put_s(x, XT_kernel_library, dt_lib_key(kc->lib));
		put_s(x, XT_kernel_opFamily, dt_opfam_key(kc->opfam));
		put_i(x, XT_kernel_layout, kc->layout);
		put_i(x, XT_kernel_tuner, kc->tuner);
		put_tri(x, XT_kernel_tensorCores, kc->tc);
	} else {
		put_null(x, XT_kernel_library);
		put_null(x, XT_kernel_opFamily);
		put_null(x, XT_kernel_layout);
		put_null(x, XT_kernel_tuner);
		put_null(x, XT_kernel_tensorCores);
	}
	emit(x, XT_kernel);
}

static void on_activity(void *arg, const struct dt_activity *a)
{
	struct exporter *x = arg;

	/* work CUPTI could not time is in only when the whole trace is */
	if (a->timed ? !dt_export_in(x->t, a->start, a->end) : !x->open_window)
		return;
	switch (a->kind) {
	case DT_ACT_KERNEL:
		put_kernel(x, a);
		break;
	case DT_ACT_MEMCPY: {
		const struct dt_rec_memcpy *r = (const void *)a->rec;
		PUT_ACTIVITY(x, memcpy, a);
		put_i(x, XT_memcpy_bytes, (int64_t)a->bytes);
		put_i(x, XT_memcpy_copyKind, r->copy_kind);
		put_i(x, XT_memcpy_srcKind, r->src_kind);
		put_i(x, XT_memcpy_dstKind, r->dst_kind);
		emit(x, XT_memcpy);
		break;
	}
	case DT_ACT_MEMSET: {
		const struct dt_rec_memset *r = (const void *)a->rec;
		PUT_ACTIVITY(x, memset, a);
		put_i(x, XT_memset_bytes, (int64_t)a->bytes);
		put_i(x, XT_memset_value, r->value);
		put_i(x, XT_memset_memKind, r->mem_kind);
		emit(x, XT_memset);
		break;
	}
	}
}

static void on_device(void *arg, const struct dt_device *d)
{
	static const struct {
		unsigned col;
		enum dt_math math;
	} peaks[] = {
		{ XT_gpu_peakFp64, DT_MATH_FP64 },
		{ XT_gpu_peakFp32, DT_MATH_FP32 },
		{ XT_gpu_peakTf32, DT_MATH_TF32 },
		{ XT_gpu_peakFp16, DT_MATH_FP16 },
		{ XT_gpu_peakBf16, DT_MATH_BF16 },
		{ XT_gpu_peakFp8, DT_MATH_FP8 },
		{ XT_gpu_peakInt8, DT_MATH_INT8 },
	};
	struct exporter *x = arg;
	struct dt_peaks p;

	dt_peaks_for_device(&p, d);
	put_process(x, XT_gpu_globalPid, XT_gpu_pid);
	put_i(x, XT_gpu_id, d->id);
	put_s(x, XT_gpu_name, d->name);
	put_i(x, XT_gpu_computeMajor, d->cc_major);
	put_i(x, XT_gpu_computeMinor, d->cc_minor);
	put_i(x, XT_gpu_smCount, d->sms);
	put_i(x, XT_gpu_clockRate, d->clock_khz);
	put_i(x, XT_gpu_memoryBandwidth,
	      d->mem_bandwidth_kBps > INT64_MAX / 1000
		      ? INT64_MAX
		      : (int64_t)d->mem_bandwidth_kBps * 1000);
	put_i(x, XT_gpu_totalMemory, (int64_t)d->global_mem);
	put_i(x, XT_gpu_l2CacheSize, d->l2_size);
	put_f(x, XT_gpu_peakBandwidth, p.bandwidth);
	for (size_t i = 0; i < sizeof(peaks) / sizeof(peaks[0]); i++)
		put_f(x, peaks[i].col, p.flops[peaks[i].math]);
	put_s(x, XT_gpu_peakSource, p.source);
	emit(x, XT_gpu);
}

static void on_gpu_state(void *arg, const struct dt_gpu_change *g)
{
	static const char *const state[] = { [DT_GPU_ON] = "on",
					     [DT_GPU_OFF] = "off",
					     [DT_GPU_TAKEN] = "taken",
					     [DT_GPU_RESUMED] = "resumed",
					     [DT_GPU_WINDOW_OPEN] = "window",
					     [DT_GPU_WINDOW_CLOSE] = "paused" };
	struct exporter *x = arg;

	if (!dt_export_in(x->t, g->t, g->t))
		return;
	put_i(x, XT_gpustate_start, line_time(x, g->t));
	put_process(x, XT_gpustate_globalPid, XT_gpustate_pid);
	put_s(x, XT_gpustate_state,
	      g->state < sizeof(state) / sizeof(state[0]) ? state[g->state]
							  : NULL);
	put_i(x, XT_gpustate_code, g->code);
	put_i(x, XT_gpustate_dropped, (int64_t)g->dropped);
	put_sn(x, XT_gpustate_why, g->why ? g->why : "", g->why_len);
	emit(x, XT_gpustate);
}

static void on_thread(struct exporter *x, const struct dt_rec_thread *r)
{
	uint32_t len;
	const char *name = (const char *)dt_rec_tail(&r->hdr, &len);
	uint32_t id = xt_intern(x, name ? name : "", name ? len : 0);

	put_i(x, XT_thread_globalTid, x->gpid + r->tid);
	put_process(x, XT_thread_globalPid, XT_thread_pid);
	put_i(x, XT_thread_tid, r->tid);
	put_id(x, XT_thread_nameId, id);
	put_i(x, XT_thread_start, line_time(x, r->t));
	emit(x, XT_thread);
}

static void on_loss(struct exporter *x, const struct dt_rec_loss *r)
{
	static const char *const why[] = {
		[DT_LOSS_FULL] = "buffer full",
		[DT_LOSS_TOO_BIG] = "record too large for a buffer",
		[DT_LOSS_NOBUF] = "no buffer for the thread",
		[DT_LOSS_IO] = "the file could not take them",
		[DT_LOSS_CUPTI] = "CUPTI dropped GPU records",
	};

	put_i(x, XT_loss_start, line_time(x, r->t));
	put_process(x, XT_loss_globalPid, XT_loss_pid);
	put_i(x, XT_loss_tid, r->tid);
	put_i(x, XT_loss_count, (int64_t)r->count);
	put_s(x, XT_loss_reason,
	      r->reason < sizeof(why) / sizeof(why[0]) ? why[r->reason] : NULL);
	emit(x, XT_loss);
}

/* Threads and losses: the records no event carries. Every thread is
 * listed, whatever the window; losses are said whatever the window too,
 * since what they dropped may have been in it. */
static void on_record(void *arg, const struct dt_rec_hdr *rec)
{
	struct exporter *x = arg;

	if (rec->type == DT_REC_THREAD)
		on_thread(x, (const void *)rec);
	else if (rec->type == DT_REC_LOSS)
		on_loss(x, (const void *)rec);
}

/* "[8,64,56,56]" */
static size_t json_ints(char *buf, size_t size, const int64_t *v, int n)
{
	int len = 0;

	dt_put(buf, size, &len, "[", 1);
	for (int i = 0; i < n; i++) {
		if (i)
			dt_put(buf, size, &len, ",", 1);
		dt_put_i64(buf, size, &len, v[i]);
	}
	dt_put(buf, size, &len, "]", 1);
	return (size_t)len < size ? (size_t)len : size - 1;
}

/* The tensors of op's problem, the first time the export meets it. */
static void put_tensors(struct exporter *x, const struct dt_op *op,
			uint32_t problem)
{
	if (!problem ||
	    !xt_grow(&x->tensors_done, &x->cap_tensors_done, problem + 1, 1) ||
	    x->tensors_done[problem])
		return;
	x->tensors_done[problem] = 1;
	for (uint32_t i = 0; i < op->n_tensors; i++) {
		const struct dt_op_tensor *ot = &op->tensors[i];
		const struct dt_tensor *t = &ot->t;
		char dims[DT_MAX_DIMS * 21 + 2], strides[DT_MAX_DIMS * 21 + 2];
		char ty[DT_DTYPE_NAME_SIZE];
		int nb = t->nb < 0             ? 0
			 : t->nb > DT_MAX_DIMS ? DT_MAX_DIMS
					       : t->nb;

		put_i(x, XT_tensor_problemId, problem);
		put_i(x, XT_tensor_ord, i);
		put_s(x, XT_tensor_role, ot->role);
		put_i(x, XT_tensor_uid, t->uid);
		put_s(x, XT_tensor_dtype,
		      dtype_name(t->dtype, ty, sizeof(ty)));
		put_i(x, XT_tensor_nbDims, nb);
		put_sn(x, XT_tensor_dims, dims,
		       json_ints(dims, sizeof(dims), t->dims, nb));
		put_sn(x, XT_tensor_strides, strides,
		       json_ints(strides, sizeof(strides), t->strides, nb));
		put_i(x, XT_tensor_isVirtual, t->is_virtual);
		put_i(x, XT_tensor_byValue, t->by_value);
		put_i(x, XT_tensor_bytes, (int64_t)dt_tensor_bytes(t));
		emit(x, XT_tensor);
	}
}

static void on_op(void *arg, const struct dt_op *op)
{
	static const char *const origin[] = { [DT_OP_CALL] = "call",
					      [DT_OP_CAPTURED] = "captured",
					      [DT_OP_REPLAY] = "replay" };
	struct exporter *x = arg;
	char ty[DT_DTYPE_NAME_SIZE];
	uint64_t end = op->kernels && op->gpu_end > op->t_end ? op->gpu_end
							      : op->t_end;

	/* in when the call or its GPU work meets the window */
	if (!dt_export_in(x->t, op->t_begin, end))
		return;
	/* strings first: a new one is a row of its own */
	uint32_t problem = xt_intern_kept(x, op->problem),
		 brief = xt_intern_kept(x, op->brief),
		 desc = xt_intern_kept(x, op->desc),
		 api = xt_intern_kept(x, op->api),
		 knobs = xt_intern_kept(x, op->knobs),
		 notes = xt_intern_kept(x, op->notes),
		 first = xt_intern_kept(x, op->first_kernel);
	put_tensors(x, op, problem);

	put_i(x, XT_op_start, line_time(x, op->t_begin));
	put_i(x, XT_op_end, line_time(x, op->t_end));
	put_process(x, XT_op_globalPid, XT_op_pid);
	put_i(x, XT_op_tid, op->tid);
	put_i(x, XT_op_exec, (int64_t)op->exec);
	put_i(x, XT_op_seq, (int64_t)op->seq);
	put_s(x, XT_op_origin,
	      op->origin <= DT_OP_REPLAY ? origin[op->origin] : NULL);
	if (op->origin == DT_OP_REPLAY)
		put_i(x, XT_op_graphLaunch, op->graph_launch);
	else
		put_null(x, XT_op_graphLaunch);
	put_id(x, XT_op_nameId, api);
	put_s(x, XT_op_library, op->library);
	put_i(x, XT_op_status, op->status);
	put_s(x, XT_op_kind, dt_op_kind_key(op->cost.kind));
	put_id(x, XT_op_problemId, problem);
	put_id(x, XT_op_briefId, brief);
	put_id(x, XT_op_descId, desc);
	put_i(x, XT_op_plan, op->plan);
	put_i(x, XT_op_engine, op->engine);
	put_id(x, XT_op_knobsId, knobs);
	put_id(x, XT_op_notesId, notes);
	put_i(x, XT_op_streamHandle, (int64_t)op->stream);
	put_i(x, XT_op_workspace, op->workspace);
	put_i(x, XT_op_kernels, op->kernels);
	put_i(x, XT_op_gpuNs, (int64_t)op->gpu_ns);
	if (op->kernels) {
		put_i(x, XT_op_gpuStart, line_time(x, op->gpu_start));
		put_i(x, XT_op_gpuEnd, line_time(x, op->gpu_end));
	} else {
		put_null(x, XT_op_gpuStart);
		put_null(x, XT_op_gpuEnd);
	}
	put_id(x, XT_op_firstKernelId, first);
	put_i(x, XT_op_converts, op->converts);
	put_i(x, XT_op_convertNs, (int64_t)op->convert_ns);
	put_f(x, XT_op_flops, op->cost.flops);
	put_i(x, XT_op_bytes, (int64_t)op->cost.bytes);
	put_s(x, XT_op_dtype, dtype_name(op->cost.dtype, ty, sizeof(ty)));
	put_s(x, XT_op_math,
	      op->math != DT_MATH_UNKNOWN ? dt_math_name(op->math) : NULL);
	put_tri(x, XT_op_tensorCores, op->tensor_cores);
	if (op->device >= 0)
		put_i(x, XT_op_deviceId, op->device);
	else
		put_null(x, XT_op_deviceId);
	emit(x, XT_op);
}

static void on_plan(void *arg, const struct dt_plan_build *b)
{
	struct exporter *x = arg;

	if (!dt_export_in(x->t, b->t, b->t))
		return;
	uint32_t problem = xt_intern_kept(x, b->problem),
		 brief = xt_intern_kept(x, b->brief);
	put_i(x, XT_plan_start, line_time(x, b->t));
	put_process(x, XT_plan_globalPid, XT_plan_pid);
	put_i(x, XT_plan_plan, b->plan);
	put_s(x, XT_plan_kind, dt_op_kind_key(b->kind));
	put_id(x, XT_plan_problemId, problem);
	put_id(x, XT_plan_briefId, brief);
	put_i(x, XT_plan_hostNs, (int64_t)b->host_ns);
	emit(x, XT_plan);
}

/* The trace's row of PROCESSES, once it has been read. */
void xt_put_trace(struct exporter *x, struct dt_session *s)
{
	const struct dt_file_info *fi = x->fi;
	const struct dt_file_stats *st = dt_session_file(s);
	const struct dt_model_stats *ms = dt_session_stats(s);
	const struct dt_graph_stats *g = &ms->graphs;
	char ended[512], lost[512], cudnn[32], cuda[96];
	const char *rank = x->t->rank ? strchr(x->t->rank, '=') : NULL;
	const char *version = dt_library_info_get(fi, "cudnn", "version");

	put_process(x, XT_proc_globalPid, XT_proc_pid);
	put_i(x, XT_proc_ppid, fi->hdr.ppid);
	if (rank)
		put_i(x, XT_proc_rank, strtoll(rank + 1, NULL, 10));
	else
		put_null(x, XT_proc_rank);
	put_s(x, XT_proc_host, dt_info_get(fi, "host"));
	put_s(x, XT_proc_name, dt_info_get(fi, "cmdline"));
	put_s(x, XT_proc_path, x->t->path);
	put_s(x, XT_proc_cudnnVersion,
	      version ? dt_fmt_cudnn_version(version, cudnn, sizeof(cudnn))
		      : NULL);
	put_s(x, XT_proc_cuda, dt_cuda_text(fi, cuda, sizeof(cuda)));
	put_s(x, XT_proc_gpuRecording, ms->gpu_state[0] ? ms->gpu_state : NULL);
	put_i(x, XT_proc_startMono, (int64_t)fi->hdr.start_mono);
	put_i(x, XT_proc_startReal, (int64_t)fi->hdr.start_real);
	put_i(x, XT_proc_monoOffset, x->t->offset);
	put_i(x, XT_proc_complete, dt_trace_complete(st));
	put_s(x, XT_proc_ended, dt_file_end_key(st->end));
	put_s(x, XT_proc_endedText, dt_file_end_text(st, ended, sizeof(ended)));
	put_i(x, XT_proc_records, (int64_t)st->records);
	if (st->records_missing_known)
		put_i(x, XT_proc_recordsMissing, (int64_t)st->records_missing);
	else
		put_null(x, XT_proc_recordsMissing);
	put_i(x, XT_proc_skippedBytes, (int64_t)st->bytes_skipped);
	put_i(x, XT_proc_lost, (int64_t)st->lost);
	put_i(x, XT_proc_lostExact, st->lost_exact);
	put_s(x, XT_proc_lostText,
	      dt_lost_text(st, ms, " lost", lost, sizeof(lost)));
	put_i(x, XT_proc_gpuDropped, (int64_t)st->gpu_dropped);
	put_i(x, XT_proc_calls, (int64_t)x->calls);
	put_i(x, XT_proc_ownCalls, (int64_t)x->own_calls);
	put_i(x, XT_proc_undecoded, (int64_t)ms->undecoded);
	put_i(x, XT_proc_graphLaunches, (int64_t)g->launches);
	put_i(x, XT_proc_graphLaunchNs, (int64_t)g->launch_ns);
	put_i(x, XT_proc_graphLaunched, (int64_t)g->launched);
	put_i(x, XT_proc_graphCaptured, (int64_t)g->captured);
	put_i(x, XT_proc_graphReplays, (int64_t)g->replays);
	put_i(x, XT_proc_graphPartial, (int64_t)g->partial);
	put_i(x, XT_proc_graphKernels, (int64_t)g->kernels);
	put_i(x, XT_proc_graphAttributed, (int64_t)g->attributed);
	put_i(x, XT_proc_graphUnknown, (int64_t)g->unknown);
	put_i(x, XT_proc_graphMismatch, (int64_t)g->mismatch);
	put_i(x, XT_proc_graphUnresolved, (int64_t)g->unresolved);
	emit(x, XT_proc);
}

static void put_meta(struct exporter *x, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put_meta(struct exporter *x, const char *name, const char *fmt, ...)
{
	char value[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	put_s(x, XT_meta_name, name);
	put_s(x, XT_meta_value, value);
	emit(x, XT_meta);
}

/* What the whole export is: its time line and window. */
void xt_put_export(struct exporter *x, const struct dt_export_trace *t,
		   size_t n)
{
	const struct dt_file_header *h = &dt_session_info(t[0].s)->hdr;
	/* offset = start_real - base - start_mono, for any trace */
	int64_t base = (int64_t)(h->start_real - h->start_mono -
				 (uint64_t)t[0].offset);

	put_meta(x, "dnntrace", "%s", DT_VERSION);
	put_meta(x, "schema", "%d", XT_SCHEMA_VERSION);
	put_meta(x, "timeBase", "%" PRId64, base);
	put_meta(x, "from", "%" PRIu64, x->o->from_ns);
	if (x->o->to_ns != UINT64_MAX)
		put_meta(x, "to", "%" PRIu64, x->o->to_ns);
	if (x->o->pid >= 0)
		put_meta(x, "pid", "%" PRId64, x->o->pid);
	put_meta(x, "traces", "%zu", n);
}

void xt_rows_consumer(struct exporter *x, struct dt_consumer *c)
{
	*c = (struct dt_consumer){ .arg = x,
				   .call = on_call,
				   .activity = on_activity,
				   .device = on_device,
				   .gpu_state = on_gpu_state,
				   .record = on_record,
				   .op = on_op,
				   .plan = on_plan };
}
