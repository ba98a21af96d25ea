/*
 * dt-records.h - every record type of the dnntrace file format, declared once.
 *
 * Each type is one line of DT_RECORD_TYPES and one DT_FIELDS_<name> list. They
 * expand into the C structs below, the reader's size checks, `dnntrace dump`'s
 * printer and the test that keeps trace/FORMAT.md in step with the code. This
 * header holds declarations only; it needs <stdint.h> and nothing from CUDA.
 */
#ifndef DT_RECORDS_H
#define DT_RECORDS_H

#include <stdint.h>

/*
 * X(id, NAME, name, tail): tail says what the bytes after the fixed fields
 * are (their count is the field `len`):
 *   NONE  no tail;   TEXT  UTF-8 text;   BYTES  opaque bytes;
 *   ARGS  a call's arguments, laid out by the signature of its API (APIDEF).
 */
#define DT_RECORD_TYPES(X)                                                     \
	X(0, PAD, pad, NONE)              /* filler, skipped by readers */     \
	X(1, API_CALL, api_call, ARGS)    /* a call into a wrapped library */  \
	X(2, STRING, string, TEXT)        /* an interned string */             \
	X(3, THREAD, thread, TEXT)        /* a thread and its name */          \
	X(4, PROCESS, process, TEXT)      /* process start, fork, exec */      \
	X(5, CLOCK, clock, NONE)          /* two clocks read together */       \
	X(6, LOSS, loss, NONE)            /* records dropped by a thread */    \
	X(7, END, end, NONE)              /* how and when recording ended */   \
	X(8, INFO, info, TEXT)            /* key = value identity fact */      \
	X(9, APIDEF, apidef, TEXT)        /* an API id, its name, signature */ \
	X(10, KERNEL, kernel, TEXT)       /* a GPU kernel and its name */      \
	X(11, MEMCPY, memcpy, NONE)       /* a GPU memory copy */              \
	X(12, MEMSET, memset, NONE)       /* a GPU memory set */               \
	X(13, CORR, corr, NONE)           /* a launch's call, for kernels */   \
	X(14, DEVICE, device, TEXT)       /* a GPU and its peak rates */       \
	X(15, GPU_STATE, gpu_state, TEXT) /* GPU recording on, off, why */    \
	X(16, GRAPH_NODE, graph_node, TEXT) /* a call's node in a CUDA graph */ \
	X(17, GRAPH_LINK, graph_link, NONE) /* a graph made from another */   \
	X(18, GRAPH_LAUNCH, graph_launch, NONE) /* a CUDA graph launched */  \
	X(19, GPU_METRICS, gpu_metrics, TEXT) /* what the GPU is sampled for */ \
	X(20, GPU_SAMPLE, gpu_sample, BYTES)  /* one sample of those metrics */ \
	X(21, KERNEL_LIB, kernel_lib, BYTES)  /* kernels a library registered */ \
	X(22, FRAME, frame, NONE)             /* a frame's place and checksum */ \
	X(23, NVTX, nvtx, NONE)               /* an NVTX range or mark */ \
	X(24, LIBRARY, library, TEXT)         /* a wrapped library's API ids */

/* F(R, type, name) with type one of u8 u16 u32 u64 i32 i64; R is passed
 * through unchanged so expansions can name the record. */
#define DT_FIELDS_pad(F, R)
#define DT_FIELDS_api_call(F, R)                                             \
	F(R, u16, api)     /* index into the APIDEF table of this file */    \
	F(R, u16, flags)   /* DT_CALL_* */                                   \
	F(R, u32, tid)     /* kernel thread id */                            \
	F(R, u64, seq)     /* process-wide call order, from 1 */             \
	F(R, u64, t_begin) /* CLOCK_MONOTONIC ns before the call */          \
	F(R, u64, t_end)   /* CLOCK_MONOTONIC ns after it returned */        \
	F(R, i32, status)  /* the status returned, 0 for other returns */   \
	F(R, u32, len)
#define DT_FIELDS_string(F, R) \
	F(R, u32, id)          \
	F(R, u32, len)
#define DT_FIELDS_thread(F, R)                            \
	F(R, u64, t) /* when the thread was first seen */ \
	F(R, u32, tid)                                    \
	F(R, u32, len) /* name */
#define DT_FIELDS_process(F, R)          \
	F(R, u64, t)                     \
	F(R, u32, pid)                   \
	F(R, u32, ppid)                  \
	F(R, u32, event) /* DT_PROC_* */ \
	F(R, u32, len)   /* command line, arguments separated by NUL */
#define DT_FIELDS_clock(F, R)                                     \
	F(R, u64, mono)  /* CLOCK_MONOTONIC ns */                 \
	F(R, u64, other) /* the other clock, read right after */  \
	F(R, u32, clock) /* DT_CLOCK_*: which clock `other` is */ \
	F(R, u32, reserved)
#define DT_FIELDS_loss(F, R)                                              \
	F(R, u64, t)                                                      \
	F(R, u64, count) /* records dropped since the last LOSS of tid */ \
	F(R, u32, tid)                                                    \
	F(R, u32, reason) /* DT_LOSS_* */
#define DT_FIELDS_end(F, R)                                       \
	F(R, u64, t)                                              \
	F(R, u64, records) /* records written to the file body */ \
	F(R, u64, calls)   /* API_CALL records among them */      \
	F(R, u64, lost)    /* records dropped, all threads */     \
	F(R, u32, reason)  /* DT_END_* */                         \
	F(R, i32, code)    /* exit status or signal number */
#define DT_FIELDS_info(F, R)                                             \
	F(R, u32, key_len) /* the tail is key bytes, then value bytes */ \
	F(R, u32, len)
#define DT_FIELDS_library(F, R)                                         \
	F(R, u32, first_api) /* its API ids: first_api .. + n_apis - 1 */  \
	F(R, u32, n_apis)                                               \
	F(R, u32, name_len) /* the tail is the short name, then the     \
			       display name */                          \
	F(R, u32, len)
#define DT_FIELDS_apidef(F, R)                                             \
	F(R, u16, api)                                                     \
	F(R, u16, flags)    /* DT_APIDEF_* */                              \
	F(R, u32, name_len) /* the tail is the name, then the signature */ \
	F(R, u32, len)

/* GPU activity (from CUPTI). Times are on the CUPTI clock: CLOCK records
 * with clock DT_CLOCK_CUPTI map it to CLOCK_MONOTONIC. */
#define DT_FIELDS_kernel(F, R)                                       \
	F(R, u64, start)                                             \
	F(R, u64, end)                                               \
	F(R, u32, corr) /* CUPTI correlation id of the launch */     \
	F(R, u32, device)                                            \
	F(R, u32, context)                                           \
	F(R, u32, stream)                                            \
	F(R, i32, grid_x)                                            \
	F(R, i32, grid_y)                                            \
	F(R, i32, grid_z)                                            \
	F(R, i32, block_x)                                           \
	F(R, i32, block_y)                                           \
	F(R, i32, block_z)                                           \
	F(R, i32, static_smem)                                       \
	F(R, i32, dynamic_smem)                                      \
	F(R, u32, registers) /* per thread */                        \
	F(R, u32, graph_id)  /* 0 unless launched by a CUDA graph */ \
	F(R, u64, graph_node)                                        \
	F(R, u32, flags) /* DT_KERNEL_* */                           \
	F(R, u32, len)   /* the kernel's (mangled) name */
#define DT_FIELDS_memcpy(F, R)                                             \
	F(R, u64, start)                                                   \
	F(R, u64, end)                                                     \
	F(R, u64, bytes)                                                   \
	F(R, u32, corr)                                                    \
	F(R, u32, device)                                                  \
	F(R, u32, context)                                                 \
	F(R, u32, stream)                                                  \
	F(R, u8, copy_kind) /* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 8 \
			       DtoD, ... */                                \
	F(R, u8, src_kind)  /* CUpti_ActivityMemoryKind */                 \
	F(R, u8, dst_kind)                                                 \
	F(R, u8, flags) /* CUpti_ActivityFlag bits: 1 async */             \
	F(R, u32, reserved)
#define DT_FIELDS_memset(F, R) \
	F(R, u64, start)       \
	F(R, u64, end)         \
	F(R, u64, bytes)       \
	F(R, u32, corr)        \
	F(R, u32, device)      \
	F(R, u32, context)     \
	F(R, u32, stream)      \
	F(R, u32, value)       \
	F(R, u32, mem_kind)
#define DT_FIELDS_corr(F, R)                                     \
	F(R, u64, call) /* seq of the API_CALL that launched */  \
	F(R, u32, corr) /* CUPTI correlation id of the launch */ \
	F(R, u32, reserved)
#define DT_FIELDS_device(F, R)                             \
	F(R, u64, global_mem)    /* bytes */               \
	F(R, u64, mem_bandwidth) /* global memory, kB/s */ \
	F(R, u32, id)                                      \
	F(R, u32, cc_major)                                \
	F(R, u32, cc_minor)                                \
	F(R, u32, sms)                                     \
	F(R, u32, core_clock) /* kHz */                    \
	F(R, u32, l2_size)    /* bytes */                  \
	F(R, u32, max_threads_per_sm)                      \
	F(R, u32, len) /* device name */
#define DT_FIELDS_gpu_state(F, R)                               \
	F(R, u64, t)                                            \
	F(R, u32, state)   /* DT_GPU_* */                       \
	F(R, i32, code)    /* CUptiResult or errno behind it */ \
	F(R, u64, dropped) /* records CUPTI dropped so far */   \
	F(R, u32, reserved)                                     \
	F(R, u32, len) /* why, in words */

/* CUDA graphs. Ids are CUPTI's (cuptiGetGraphId, cuptiGetGraphNodeId,
 * cuptiGetGraphExecId), the ones KERNEL records carry for work a graph
 * launched. */
#define DT_FIELDS_graph_node(F, R)                                           \
	F(R, u64, t)                                                         \
	F(R, u64, call)   /* seq of the API_CALL that made or updated it */  \
	F(R, u64, node)   /* the node's id */                                \
	F(R, u64, graph_handle) /* the graph (cudaGraph_t) as the program    \
				   holds it, to match later calls */        \
	F(R, u32, graph)  /* the graph's id */                               \
	F(R, u32, how)    /* DT_GRAPH_CAPTURED, _POPULATED, _UPDATED */     \
	F(R, u32, node_type) /* CUgraphNodeType: 0 kernel, 4 child graph */  \
	F(R, u32, len)    /* a kernel node's function name, or empty */
#define DT_FIELDS_graph_link(F, R)                                          \
	F(R, u64, t)                                                        \
	F(R, u64, node)  /* DT_GRAPH_CHILD: the child node in `parent` */   \
	F(R, u32, from)  /* the graph it was made from */                   \
	F(R, u32, to)    /* the graph (clone, child) or executable graph */ \
	F(R, u32, how)   /* DT_GRAPH_INSTANTIATED, _EXEC_UPDATED, ... */    \
	F(R, u32, parent) /* DT_GRAPH_CHILD: the graph holding the node */ \
	F(R, u32, first) /* DT_GRAPH_EXEC_CHILD: the executable's index of \
			    the child graph's first node */                \
	F(R, u32, reserved)
#define DT_FIELDS_graph_launch(F, R)                                    \
	F(R, u64, start) /* the launch call, on the CUPTI clock */      \
	F(R, u64, end)                                                  \
	F(R, u32, corr)  /* CUPTI correlation id: its kernels carry it */ \
	F(R, u32, tid)   /* CUPTI's thread id of the caller */          \
	F(R, u32, cbid)  /* CUPTI's driver API callback id */           \
	F(R, u32, reserved)
#define DT_FIELDS_gpu_metrics(F, R)                                      \
	F(R, u64, t)         /* CLOCK_MONOTONIC ns */                     \
	F(R, u32, device)    /* the GPU sampled (CUDA's device index) */  \
	F(R, u32, interval)  /* ns between samples */                     \
	F(R, u32, metrics)   /* how many: 0 when sampling is off */       \
	F(R, i32, code)      /* CUptiResult behind that, or 0 */          \
	F(R, u32, reserved)                                               \
	F(R, u32, len) /* the metrics' names, one a line; or why it is off */
#define DT_FIELDS_kernel_lib(F, R)                                       \
	F(R, u32, count)    /* kernels: the tail's first count * 8 bytes */ \
	F(R, u32, path_len) /* then the library's path */                  \
	F(R, u32, reserved)                                               \
	F(R, u32, len)
#define DT_FIELDS_frame(F, R)                                             \
	F(R, u64, file_id) /* the same in every frame of one file, random */ \
	F(R, u64, seq)     /* the frame's place in the file: header 0 */     \
	F(R, u64, hash)    /* skippable frames: XXH64 of the payload before \
			      this record; data frames: 0 (zstd's) */
#define DT_FIELDS_gpu_sample(F, R)                                       \
	F(R, u64, start)  /* the sample's window, on the CUPTI clock */   \
	F(R, u64, end)                                                    \
	F(R, u32, device)                                                 \
	F(R, u32, len) /* the values: len / 8 IEEE doubles, in the order \
			  GPU_METRICS named them */

/* NVTX, the program's own names for regions of its run. Names are STRING
 * ids: a string is written once per thread that uses it, before the first
 * record that refers to it from that thread (a registered string or a
 * domain's name: by the thread that registered it). */
#define DT_FIELDS_nvtx(F, R)                                                \
	F(R, u64, t)                                                        \
	F(R, u64, range)  /* START, END: the range's id (nvtxRangeId_t);   \
			     THREAD_NAME: the thread named; 0 otherwise */ \
	F(R, u32, tid)    /* the calling thread */                          \
	F(R, u32, event)  /* DT_NVTX_* */                                   \
	F(R, u32, name)   /* STRING id of its message, 0: none */           \
	F(R, u32, domain) /* STRING id of its domain's name, 0: default */  \
	F(R, u32, category) /* the program's category number, 0: none */    \
	F(R, u32, reserved)

enum dt_nvtx_event {
	DT_NVTX_PUSH = 1,  /* a range opened on this thread (nvtxRangePush) */
	DT_NVTX_POP = 2,   /* this thread's innermost range of `domain` closed */
	DT_NVTX_START = 3, /* range `range` started (nvtxRangeStart) */
	DT_NVTX_END = 4,   /* range `range` ended, maybe on another thread */
	DT_NVTX_MARK = 5,  /* an instant (nvtxMark) */
	DT_NVTX_CATEGORY = 6,    /* `category` of `domain` is called `name` */
	DT_NVTX_THREAD_NAME = 7, /* thread `range` is called `name` */
};

enum dt_graph_how {
	/* GRAPH_NODE */
	DT_GRAPH_CAPTURED = 1,  /* launched by the call into a stream being
				   captured */
	DT_GRAPH_POPULATED = 2, /* added by cudnnBackendPopulateCudaGraph */
	DT_GRAPH_UPDATED = 3,   /* updated by cudnnBackendUpdateCudaGraph */
	/* GRAPH_LINK */
	DT_GRAPH_INSTANTIATED = 16, /* executable `to` made from graph `from` */
	DT_GRAPH_EXEC_UPDATED = 17, /* executable `to` now runs graph `from` */
	DT_GRAPH_CLONED = 18,       /* graph `to` is a copy of `from` */
	DT_GRAPH_CHILD = 19,        /* graph `to`, a copy of `from`, is the
				       child graph of node `node` of `parent` */
	DT_GRAPH_EXEC_CHILD = 20,   /* executable `to` runs child graph `from`
				       (of node `node` of `parent`) as its
				       nodes `first`, `first` + 1, ... */
};

enum dt_kernel_flags {
	DT_KERNEL_NO_TIME =
		1 << 0, /* CUPTI could not time it (start = end = 0) */
};

enum dt_gpu_state {
	DT_GPU_ON = 1,      /* recording GPU activity */
	DT_GPU_OFF = 2,     /* not recording: no GPU, no CUPTI, switched off */
	DT_GPU_TAKEN = 3,   /* another profiler took CUPTI over */
	DT_GPU_RESUMED = 4, /* it let go; recording again */
	/* sampled recording (record --gpu-sample): `code` is N, one window
	 * in N */
	DT_GPU_WINDOW_OPEN = 5,  /* a window began: recording */
	DT_GPU_WINDOW_CLOSE = 6, /* it ended: CUPTI collects nothing */
};

enum dt_call_flags {
	/* made from inside a call of another wrapped library on the same
	 * thread (cuDNN calling cuBLASLt): shown under that call, not one of
	 * the program's own */
	DT_CALL_NESTED = 1 << 0,
	DT_CALL_BY_DNNTRACE = 1 << 1, /* the recorder asked cuDNN itself */
	/* GPU activity was sampled and this call, which can launch work, ran
	 * wholly or in part outside a window: what it launched was not (all)
	 * recorded */
	DT_CALL_UNSAMPLED = 1 << 2,
};

enum dt_apidef_flags {
	DT_APIDEF_DEPRECATED = 1 << 0,
};

enum dt_proc_event {
	DT_PROC_START = 0,
	DT_PROC_FORK = 1, /* this process is the child of a fork */
};

enum dt_clock_id {
	DT_CLOCK_REALTIME = 1,
	DT_CLOCK_CUPTI = 2, /* cuptiGetTimestamp(): kernel and copy times */
};

enum dt_loss_reason {
	DT_LOSS_FULL = 1,    /* the thread's buffer was full */
	DT_LOSS_TOO_BIG = 2, /* one record larger than a buffer can hold */
	DT_LOSS_NOBUF = 3,   /* no buffer could be allocated for the thread */
	DT_LOSS_IO = 4,      /* the writer could not write the file */
	DT_LOSS_CUPTI = 5,   /* CUPTI dropped activity records */
};

enum dt_end_reason {
	DT_END_EXIT = 0,   /* normal process exit */
	DT_END_SIGNAL = 1, /* a fatal signal (code) */
	DT_END_EXEC = 2,   /* the process image was replaced */
	DT_END_CLOSE = 3,  /* recording was stopped explicitly */
};

/* Every record starts with this; size counts the header and is a multiple of 8.
 */
struct dt_rec_hdr {
	uint16_t type;
	uint16_t reserved;
	uint32_t size;
};

typedef uint8_t dt_u8;
typedef uint16_t dt_u16;
typedef uint32_t dt_u32;
typedef uint64_t dt_u64;
typedef int32_t dt_i32;
typedef int64_t dt_i64;

#define DT_FIELD_DECL_(R, type, name) dt_##type name;
#define DT_REC_STRUCT_(id, NAME, name, tail)           \
	struct dt_rec_##name {                         \
		struct dt_rec_hdr hdr;                 \
		DT_FIELDS_##name(DT_FIELD_DECL_, name) \
	};
DT_RECORD_TYPES(DT_REC_STRUCT_)
#undef DT_REC_STRUCT_

enum dt_rec_type {
#define DT_REC_ENUM_(id, NAME, name, tail) DT_REC_##NAME = id,
	DT_RECORD_TYPES(DT_REC_ENUM_)
#undef DT_REC_ENUM_
		DT_REC_TYPE_COUNT
};

enum dt_tail_kind { DT_TAIL_NONE, DT_TAIL_TEXT, DT_TAIL_BYTES, DT_TAIL_ARGS };

#endif /* DT_RECORDS_H */
