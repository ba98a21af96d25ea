/*
 * export-schema.h - the tables of `dnntrace export --format sqlite|csv`,
 * declared once. Private to tools/.
 *
 * Each table is one line of XT_TABLES and one XT_COLUMNS_<id> list. They
 * expand into the column numbers the exporter fills rows by, the
 * descriptions both back ends create their tables from (CREATE TABLE and
 * INSERT for SQLite, a file and its header line for CSV), and the
 * section of analyzer/EXPORT.md a test keeps in step with them. Names
 * follow Nsight Systems' export (StringIds, CUPTI_ACTIVITY_KIND_KERNEL,
 * globalPid, correlationId, ...) where the meaning is the same, so SQL
 * written for nsys finds what it expects.
 *
 * Times are integer ns on the export's time line: after the earliest
 * trace's start, on the wall clock (struct dt_export_trace).
 */
#ifndef EXPORT_SCHEMA_H
#define EXPORT_SCHEMA_H

#include <stdint.h>

/* The version of these tables, in META_DATA_EXPORT: it grows when a
 * column changes meaning or goes; new columns and tables keep it. */
#define XT_SCHEMA_VERSION 1

/* T(NAME, id, what) */
#define XT_TABLES(T)                                                           \
	T(META_DATA_EXPORT, meta,                                              \
	  "what was exported: one row per fact, as name and value")            \
	T(PROCESSES, proc,                                                     \
	  "one row per trace: the process that wrote it, and how the trace "   \
	  "ended")                                                             \
	T(StringIds, str,                                                      \
	  "every name and description the other tables refer to by id")        \
	T(ThreadNames, thread, "one row per thread a trace saw")               \
	T(TARGET_INFO_GPU, gpu,                                                \
	  "one row per GPU a process used, as CUPTI described it")             \
	T(CUDNN_EVENTS, call,                                                  \
	  "one row per call of cuDNN (or of a library other than cuBLAS)")     \
	T(CUBLAS_EVENTS, cublas,                                               \
	  "one row per cuBLAS or cuBLASLt call, as CUDNN_EVENTS")              \
	T(CUDNN_OPS, op,                                                       \
	  "one row per op execution: a call that ran work on the GPU, a call " \
	  "that captured it into a CUDA graph, or a replay of that graph")     \
	T(CUDNN_OP_TENSORS, tensor,                                            \
	  "the tensors of each problem (CUDNN_OPS.problemId), once")           \
	T(CUDNN_PLAN_BUILDS, plan, "one row per execution plan built")         \
	T(CUPTI_ACTIVITY_KIND_KERNEL, kernel, "one row per GPU kernel")        \
	T(CUPTI_ACTIVITY_KIND_MEMCPY, memcpy, "one row per GPU memory copy")   \
	T(CUPTI_ACTIVITY_KIND_MEMSET, memset, "one row per GPU memory set")    \
	T(GPU_RECORDING, gpustate,                                             \
	  "GPU recording switched on, off, taken by another profiler, "        \
	  "resumed")                                                           \
	T(LOSSES, loss, "records a process's recorder dropped, as it said so")

/* C(id, column, TYPE, what), TYPE one of INTEGER REAL TEXT */
#define XT_COLUMNS_meta(C)                       \
	C(meta, name, TEXT, "what the value is") \
	C(meta, value, TEXT, "its value")

#define XT_GLOBAL_PID(C, t)                                                \
	C(t, globalPid, INTEGER,                                           \
	  "the process, in PROCESSES: its trace's number times 2^48 plus " \
	  "pid times 2^24, as nsys packs it")                              \
	C(t, pid, INTEGER, "its process id")

#define XT_COLUMNS_proc(C)                                                     \
	XT_GLOBAL_PID(C, proc)                                                 \
	C(proc, ppid, INTEGER, "its parent's process id")                      \
	C(proc, rank, INTEGER,                                                 \
	  "its rank from RANK, OMPI_COMM_WORLD_RANK, ...; NULL when none")     \
	C(proc, host, TEXT, "the host it ran on")                              \
	C(proc, name, TEXT, "its command line")                                \
	C(proc, path, TEXT, "the trace file")                                  \
	C(proc, cudnnVersion, TEXT, "the cuDNN it loaded (\"9.19.0\")")        \
	C(proc, cuda, TEXT, "CUDA driver and runtime versions")                \
	C(proc, gpuRecording, TEXT, "whether and how GPU work was recorded")   \
	C(proc, startMono, INTEGER, "CLOCK_MONOTONIC ns when recording began") \
	C(proc, startReal, INTEGER,                                            \
	  "wall clock ns since 1970 when recording began")                     \
	C(proc, monoOffset, INTEGER,                                           \
	  "add to a CLOCK_MONOTONIC time of the process to get the time line") \
	C(proc, complete, INTEGER,                                             \
	  "1 when the trace holds everything the process did, 0 when not")     \
	C(proc, ended, TEXT,                                                   \
	  "how the file ended: clean, no_end, truncated, corrupt, damaged")    \
	C(proc, endedText, TEXT,                                               \
	  "the same in words, with what was skipped or cut")                   \
	C(proc, records, INTEGER, "records read")                              \
	C(proc, recordsMissing, INTEGER,                                       \
	  "records written but not read (damaged, cut); NULL when unknown")    \
	C(proc, skippedBytes, INTEGER, "bytes of damaged frames skipped")      \
	C(proc, lost, INTEGER, "records the recorder dropped")                 \
	C(proc, lostExact, INTEGER,                                            \
	  "1 when lost is the recorder's count, 0 when a lower bound")         \
	C(proc, lostText, TEXT, "what was lost, and why, in words")            \
	C(proc, gpuDropped, INTEGER, "GPU records CUPTI dropped")              \
	C(proc, calls, INTEGER,                                                \
	  "the program's calls (CUDNN_EVENTS and CUBLAS_EVENTS rows)")         \
	C(proc, ownCalls, INTEGER,                                             \
	  "dnntrace's own calls, not in calls (byDnntrace rows)")              \
	C(proc, undecoded, INTEGER,                                            \
	  "calls whose arguments did not match their signature")               \
	C(proc, graphLaunches, INTEGER, "CUDA graph launches")                 \
	C(proc, graphLaunchNs, INTEGER, "their host time")                     \
	C(proc, graphLaunched, INTEGER,                                        \
	  "graph launches the kernels show, when launches were not recorded")  \
	C(proc, graphCaptured, INTEGER,                                        \
	  "cuDNN calls that put work into graphs")                             \
	C(proc, graphReplays, INTEGER, "op executions replayed from graphs")   \
	C(proc, graphPartial, INTEGER, "of which some kernels never came")     \
	C(proc, graphKernels, INTEGER, "kernels launched by CUDA graphs")      \
	C(proc, graphAttributed, INTEGER,                                      \
	  "of which traced to the cuDNN call that made their node")            \
	C(proc, graphUnknown, INTEGER,                                         \
	  "of which from graphs whose origin the trace does not hold")         \
	C(proc, graphMismatch, INTEGER,                                        \
	  "of which traced to a node of another kernel name")                  \
	C(proc, graphUnresolved, INTEGER,                                      \
	  "of which in child graphs the trace does not tie to calls")

#define XT_COLUMNS_str(C)                              \
	C(str, id, INTEGER, "the id other tables use") \
	C(str, value, TEXT, "the string")

#define XT_COLUMNS_thread(C)                                            \
	C(thread, globalTid, INTEGER, "the thread: globalPid plus tid") \
	XT_GLOBAL_PID(C, thread)                                        \
	C(thread, tid, INTEGER, "its kernel thread id")                 \
	C(thread, nameId, INTEGER, "its name (StringIds)")              \
	C(thread, start, INTEGER, "when the recorder first saw it")

#define XT_COLUMNS_gpu(C)                                                    \
	XT_GLOBAL_PID(C, gpu)                                                \
	C(gpu, id, INTEGER, "CUPTI's device id: deviceId in other tables")   \
	C(gpu, name, TEXT, "the GPU's name")                                 \
	C(gpu, computeMajor, INTEGER, "compute capability, major")           \
	C(gpu, computeMinor, INTEGER, "compute capability, minor")           \
	C(gpu, smCount, INTEGER, "streaming multiprocessors")                \
	C(gpu, clockRate, INTEGER, "core clock, kHz")                        \
	C(gpu, memoryBandwidth, INTEGER, "global memory bandwidth, bytes/s") \
	C(gpu, totalMemory, INTEGER, "global memory, bytes")                 \
	C(gpu, l2CacheSize, INTEGER, "L2 cache, bytes")                      \
	C(gpu, peakBandwidth, REAL,                                          \
	  "the bandwidth ops are held against, bytes/s; 0 unknown")          \
	C(gpu, peakFp64, REAL, "peak FP64 FLOP/s; 0 unknown")                \
	C(gpu, peakFp32, REAL, "peak FP32 FLOP/s on CUDA cores")             \
	C(gpu, peakTf32, REAL, "peak TF32 FLOP/s on tensor cores")           \
	C(gpu, peakFp16, REAL, "peak FP16 FLOP/s")                           \
	C(gpu, peakBf16, REAL, "peak BF16 FLOP/s")                           \
	C(gpu, peakFp8, REAL, "peak FP8 FLOP/s")                             \
	C(gpu, peakInt8, REAL, "peak INT8 op/s")                             \
	C(gpu, peakSource, TEXT, "where the peaks come from")

/* The calls' tables: cuDNN's (and other libraries'), and cuBLAS's and
 * cuBLASLt's under the name Nsight Systems gives them; the same columns,
 * numbered alike (a row is filled by XT_call_*). */
#define XT_CALL_COLUMNS(C, t)                                                \
	C(t, start, INTEGER, "when it was called")                           \
	C(t, end, INTEGER, "when it returned")                               \
	C(t, globalTid, INTEGER, "the calling thread: globalPid + tid")      \
	XT_GLOBAL_PID(C, t)                                                  \
	C(t, tid, INTEGER, "the calling thread's id")                        \
	C(t, seq, INTEGER, "the process's call order, from 1")               \
	C(t, nameId, INTEGER, "the function (StringIds)")                    \
	C(t, library, TEXT,                                                  \
	  "its library's short name (\"cudnn\"); NULL not known")            \
	C(t, status, INTEGER,                                                \
	  "the status returned (cudnnStatus_t, cublasStatus_t); 0 success")  \
	C(t, nested, INTEGER,                                                \
	  "1 when made while another call was in progress")                  \
	C(t, byDnntrace, INTEGER,                                            \
	  "1 when the recorder asked the library itself: dnntrace's own "    \
	  "calls, which no command counts with the program's "               \
	  "([COUNTS.md](COUNTS.md))")                                        \
	C(t, args, TEXT,                                                     \
	  "its arguments, as dnntrace dump shows them; NULL when they do not " \
	  "match the signature")

#define XT_COLUMNS_call(C)   XT_CALL_COLUMNS(C, call)
#define XT_COLUMNS_cublas(C) XT_CALL_COLUMNS(C, cublas)

#define XT_COLUMNS_op(C)                                                       \
	C(op, start, INTEGER,                                                  \
	  "the call's start (a replay: its graph launch's)")                   \
	C(op, end, INTEGER, "the call's end (a replay: its graph launch's)")   \
	XT_GLOBAL_PID(C, op)                                                   \
	C(op, tid, INTEGER, "the calling thread's id")                         \
	C(op, exec, INTEGER,                                                   \
	  "the execution: seq for a call's own, 2^62 + n for the n-th replay") \
	C(op, seq, INTEGER,                                                    \
	  "the call (CUDNN_EVENTS.seq, CUBLAS_EVENTS.seq); a replay: the "     \
	  "capturing call")                                                    \
	C(op, origin, TEXT, "call, captured (ran nothing itself) or replay")   \
	C(op, graphLaunch, INTEGER,                                            \
	  "a replay: the correlationId of its graph launch; else NULL")        \
	C(op, nameId, INTEGER, "the function (StringIds)")                     \
	C(op, library, TEXT,                                                   \
	  "its library's short name (\"cudnn\"); NULL not known")              \
	C(op, status, INTEGER, "cudnnStatus_t the call returned")              \
	C(op, kind, TEXT, "what it computes: conv_fwd, matmul, ...")           \
	C(op, problemId, INTEGER,                                              \
	  "what it computed, without what cuDNN chose (StringIds): ops of "    \
	  "one problem share it")                                              \
	C(op, briefId, INTEGER,                                                \
	  "the problem's tensors, compactly (StringIds)")                      \
	C(op, descId, INTEGER, "this execution's description (StringIds)")     \
	C(op, plan, INTEGER, "backend plan (1, 2, ... per trace); 0 legacy")   \
	C(op, engine, INTEGER,                                                 \
	  "backend: global engine index; legacy: algorithm; -1 unknown")       \
	C(op, knobsId, INTEGER,                                                \
	  "the engine's knob choices (StringIds); NULL none")                  \
	C(op, notesId, INTEGER,                                                \
	  "the engine's numerical notes (StringIds); NULL none")               \
	C(op, streamHandle, INTEGER,                                           \
	  "the cudaStream_t of its handle; 0 default")                         \
	C(op, workspace, INTEGER, "workspace bytes; -1 unknown")               \
	C(op, kernels, INTEGER, "kernels, copies and sets it ran")             \
	C(op, gpuNs, INTEGER, "their summed GPU time")                         \
	C(op, gpuStart, INTEGER, "its first kernel's start; NULL none")        \
	C(op, gpuEnd, INTEGER, "its last kernel's end; NULL none")             \
	C(op, firstKernelId, INTEGER, "its first kernel's name (StringIds)")   \
	C(op, converts, INTEGER, "layout conversion kernels among them")       \
	C(op, convertNs, INTEGER, "their GPU time")                            \
	C(op, flops, REAL, "FLOPs one execution must compute; 0 not counted")  \
	C(op, bytes, INTEGER, "bytes it must move; 0 unknown")                 \
	C(op, dtype, TEXT,                                                     \
	  "its main input's data type (BFLOAT16, ...); NULL unknown")          \
	C(op, math, TEXT,                                                      \
	  "the peak it is held against: fp32, tf32, bf16, ...; NULL unknown")  \
	C(op, tensorCores, INTEGER,                                            \
	  "its engine uses tensor cores; NULL unknown")                        \
	C(op, deviceId, INTEGER, "the GPU its first kernel ran on; NULL none")

#define XT_COLUMNS_tensor(C)                                                  \
	C(tensor, problemId, INTEGER, "the problem (CUDNN_OPS.problemId)")    \
	C(tensor, ord, INTEGER,                                               \
	  "its place among the problem's tensors, from 0")                    \
	C(tensor, role, TEXT,                                                 \
	  "its argument (x, dy) or backend attribute (X, MATMUL_ADESC)")      \
	C(tensor, uid, INTEGER, "backend uid; legacy: 0")                     \
	C(tensor, dtype, TEXT, "its data type; NULL unknown")                 \
	C(tensor, nbDims, INTEGER, "dimensions")                              \
	C(tensor, dims, TEXT, "its dimensions, as a JSON array")              \
	C(tensor, strides, TEXT, "its strides, as a JSON array")              \
	C(tensor, isVirtual, INTEGER, "1 for a backend graph's intermediate") \
	C(tensor, byValue, INTEGER, "1 for a host scalar passed by value")    \
	C(tensor, bytes, INTEGER, "bytes it occupies; 0 virtual or by value")

#define XT_COLUMNS_plan(C)                                                     \
	C(plan, start, INTEGER, "when it was built")                           \
	XT_GLOBAL_PID(C, plan)                                                 \
	C(plan, plan, INTEGER, "the id its executions carry (CUDNN_OPS.plan)") \
	C(plan, kind, TEXT, "what its graph computes")                         \
	C(plan, problemId, INTEGER,                                            \
	  "its graph as its ops show it (StringIds); NULL unknown")            \
	C(plan, briefId, INTEGER, "the same, compactly (StringIds)")           \
	C(plan, hostNs, INTEGER, "the finalize call's duration")

#define XT_ACTIVITY(C, t)                                                     \
	C(t, start, INTEGER, "when it began on the GPU; NULL untimed")        \
	C(t, end, INTEGER, "when it ended; NULL untimed")                     \
	C(t, deviceId, INTEGER, "the GPU (TARGET_INFO_GPU.id)")               \
	C(t, contextId, INTEGER, "CUDA context")                              \
	C(t, streamId, INTEGER, "CUDA stream")                                \
	C(t, correlationId, INTEGER, "CUPTI's correlation id of the launch")  \
	XT_GLOBAL_PID(C, t)                                                   \
	C(t, callSeq, INTEGER,                                                \
	  "the call that launched it (CUDNN_EVENTS.seq, CUBLAS_EVENTS.seq); " \
	  "NULL outside the libraries' calls")                                \
	C(t, exec, INTEGER, "its op execution (CUDNN_OPS.exec); NULL none")

#define XT_COLUMNS_kernel(C)                                                  \
	XT_ACTIVITY(C, kernel)                                                \
	C(kernel, shortName, INTEGER, "the function's own name (StringIds)")  \
	C(kernel, mangledName, INTEGER, "the whole name (StringIds)")         \
	C(kernel, gridX, INTEGER, "grid size, x")                             \
	C(kernel, gridY, INTEGER, "grid size, y")                             \
	C(kernel, gridZ, INTEGER, "grid size, z")                             \
	C(kernel, blockX, INTEGER, "block size, x")                           \
	C(kernel, blockY, INTEGER, "block size, y")                           \
	C(kernel, blockZ, INTEGER, "block size, z")                           \
	C(kernel, staticSharedMemory, INTEGER, "static shared memory, bytes") \
	C(kernel, dynamicSharedMemory, INTEGER,                               \
	  "dynamic shared memory, bytes")                                     \
	C(kernel, registersPerThread, INTEGER, "registers per thread")        \
	C(kernel, graphId, INTEGER,                                           \
	  "the executable CUDA graph that launched it; NULL none")            \
	C(kernel, graphNodeId, INTEGER, "its node there; NULL none")          \
	C(kernel, library, TEXT,                                              \
	  "the library its name says (analyzer/REPORT.md, LIBRARIES)")        \
	C(kernel, opFamily, TEXT,                                             \
	  "the operation its name says: matmul, attention, ...")              \
	C(kernel, layout, INTEGER, "1 when it converts a layout")             \
	C(kernel, tuner, INTEGER, "1 for an autotuner's own kernel")          \
	C(kernel, tensorCores, INTEGER,                                       \
	  "its name says tensor cores; NULL unknown")

#define XT_COLUMNS_memcpy(C)                                       \
	XT_ACTIVITY(C, memcpy)                                     \
	C(memcpy, bytes, INTEGER, "bytes copied")                  \
	C(memcpy, copyKind, INTEGER,                               \
	  "CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 DtoD, ...") \
	C(memcpy, srcKind, INTEGER, "CUpti_ActivityMemoryKind")    \
	C(memcpy, dstKind, INTEGER, "CUpti_ActivityMemoryKind")

#define XT_COLUMNS_memset(C)                   \
	XT_ACTIVITY(C, memset)                 \
	C(memset, bytes, INTEGER, "bytes set") \
	C(memset, value, INTEGER, "the value") \
	C(memset, memKind, INTEGER, "CUpti_ActivityMemoryKind")

#define XT_COLUMNS_gpustate(C)                                            \
	C(gpustate, start, INTEGER, "when")                               \
	XT_GLOBAL_PID(C, gpustate)                                        \
	C(gpustate, state, TEXT,                                          \
	  "on, off, taken, resumed; sampled: window, paused")             \
	C(gpustate, code, INTEGER, "the CUptiResult or errno behind it")  \
	C(gpustate, dropped, INTEGER, "GPU records CUPTI dropped so far") \
	C(gpustate, why, TEXT, "in words")

#define XT_COLUMNS_loss(C)                                             \
	C(loss, start, INTEGER, "when it was said")                    \
	XT_GLOBAL_PID(C, loss)                                         \
	C(loss, tid, INTEGER, "the thread whose records were dropped") \
	C(loss, count, INTEGER, "records dropped since its last word") \
	C(loss, reason, TEXT, "why, in words")

enum xt_type { XT_INTEGER, XT_REAL, XT_TEXT };

struct xt_column {
	const char *name;
	enum xt_type type;
	const char *what; /* one line */
};

struct xt_table {
	const char *name;
	const char *what;
	const struct xt_column *cols;
	unsigned n_cols;
};

/* Tables, in the order they are created and documented. */
#define XT_TABLE_ID(NAME, id, what) XT_##id,
enum xt_table_id { XT_TABLES(XT_TABLE_ID) XT_N_TABLES };
#undef XT_TABLE_ID

/* Column numbers: XT_<table id>_<column>, from 0 in each table. */
#define XT_COLUMN_ID(t, name, type, what) XT_##t##_##name,
#define XT_TABLE_COLUMNS(NAME, id, what) \
	enum { XT_COLUMNS_##id(XT_COLUMN_ID) XT_##id##_n_cols };
XT_TABLES(XT_TABLE_COLUMNS)
#undef XT_TABLE_COLUMNS
#undef XT_COLUMN_ID

/* The most columns a table has (a row's size). */
#define XT_MAX_COLUMNS 48

extern const struct xt_table xt_tables[XT_N_TABLES];

#endif /* EXPORT_SCHEMA_H */
