/*
 * shim-internal.h - declarations shared by the shim's hand-written files.
 * Private to shim/.
 */
#ifndef DT_SHIM_INTERNAL_H
#define DT_SHIM_INTERNAL_H

#include <stddef.h>

#include "shim-runtime.h"
#include "dt-trace.h"

/* In a wrapper of a C library function: real_, the next definition of
 * `name` after the shim, looked up once (dlfcn.h). */
#define NEXT(name)                      \
	static __typeof__(&name) real_; \
	if (!real_)                     \
	real_ = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

/* One line on stderr, prefixed "dnntrace: "; async-signal-safe. */
DT_HIDDEN void dt_warn(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* pthread key destructor: the thread's ring goes back to the writer. */
DT_HIDDEN void dt_thread_exit(void *arg);

/* The calling thread's recorder, for a record that is not a call (an NVTX
 * range): NULL when recording is off or failed. Takes no call sequence
 * number; the first one of a thread opens the file as a call does. */
DT_HIDDEN struct dt_thread *dt_thread_now(void);

/* shim-nvtx.c: whether NVTX ranges are recorded, in words ("on", or
 * "off: " and why), for the trace's header. */
DT_HIDDEN const char *dt_nvtx_state(void);

/* shim-libs.c: dlsym() itself, the C library's, not the one interposed
 * there; handed to cupti/ for its lookups (dt_cupti_init). */
DT_HIDDEN void *dt_dlsym_next(void *handle, const char *name);

/* The wrapped library (its row in dt_libraries) an API id belongs to. */
DT_HIDDEN unsigned dt_library_of(unsigned api);

/* Identity facts about the shim and the wrapped libraries for the trace
 * header: fills up to n entries (static storage) and returns how many. */
DT_HIDDEN size_t dt_shim_info(struct dt_kv *kv, size_t n);
/* Of those, a loaded library's: lib.<name>.path, .file and .version (none
 * before its first function was resolved); at most DT_LIBRARY_KV. */
DT_HIDDEN size_t dt_library_info(unsigned lib, struct dt_kv *kv, size_t n);
#define DT_LIBRARY_KV 3

/* Library lib, whose calls go to path, was found: remembered, and a file
 * whose header was written before (GPU records came first) gets its facts
 * in the body. */
DT_HIDDEN void dt_library_found(unsigned lib, const char *path);

/* Under the shim's lock: remember path as lib's file, unless one is known
 * already. Returns whether it was new. */
DT_HIDDEN bool dt_library_path_set(unsigned lib, const char *path);

/* The trace's descriptor (-1: none in this process); whether fd is it;
 * move it elsewhere, before the program puts a file at its number. */
DT_HIDDEN int dt_trace_fd(void);
DT_HIDDEN bool dt_owns_fd(int fd);
DT_HIDDEN void dt_move_trace_fd(void);

/* Finish the trace before the process image is replaced. */
DT_HIDDEN void dt_before_exec(void);

/* shim-process.c: look the C library's _exit up (at load). */
DT_HIDDEN void dt_process_init(void);
/* The C library's close(), dup2() and kin, looked up at load. */
DT_HIDDEN void dt_fds_init(void);

/* The main thread is ending with pthread_exit(): the process ends when its
 * last thread does, which the writer's thread must not outlive. */
DT_HIDDEN void dt_main_thread_exits(void);

/* Finish the trace before _exit() ends the process with `status`. */
DT_HIDDEN void dt_before_exit(int status);

/* Finish the trace now, from a signal handler or _exit(): the writer's and
 * CUPTI's threads do the work; the caller only asks and waits (at most
 * timeout_ms for the file), takes no lock and frees nothing. Only in the
 * process that owns the file. */
DT_HIDDEN void dt_finish_now(enum dt_end_reason reason, int code,
			     unsigned timeout_ms);

/* Write out what is recorded so far, waiting at most timeout_ms; for a
 * signal handler. */
DT_HIDDEN void dt_flush_now(unsigned timeout_ms);

/* shim-signals.c: look the C library's sigaction up (at load); take the
 * fatal signals over once recording starts (once per process); after
 * fork, in the child. */
DT_HIDDEN void dt_signals_init(void);
DT_HIDDEN void dt_signals_take(void);
DT_HIDDEN void dt_signals_after_fork(void);

/* shim-streams.c: in a fork's child, before any other thread runs, empty
 * the slots a thread of the parent was writing. */
DT_HIDDEN void dt_streams_after_fork(void);

#endif /* DT_SHIM_INTERNAL_H */
