/*
 * shim-internal.h - declarations shared by the shim's hand-written files.
 * Private to shim/.
 */
#ifndef DT_SHIM_INTERNAL_H
#define DT_SHIM_INTERNAL_H

#include <stddef.h>

#include "dt-shim.h"
#include "dt-trace.h"

/* One line on stderr, prefixed "dnntrace: "; async-signal-safe. */
DT_HIDDEN void dt_warn(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* pthread key destructor: the thread's ring goes back to the writer. */
DT_HIDDEN void dt_thread_exit(void *arg);

/* Identity facts about cuDNN for the trace header: fills up to n entries
 * (static storage) and returns how many. */
DT_HIDDEN size_t dt_shim_info(struct dt_kv *kv, size_t n);

/* Finish the trace before the process image is replaced. */
DT_HIDDEN void dt_before_exec(void);

#endif /* DT_SHIM_INTERNAL_H */
