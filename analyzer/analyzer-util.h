/*
 * analyzer-util.h - helpers shared by analyzer/'s printers. Private.
 */
#ifndef DT_ANALYZER_UTIL_H
#define DT_ANALYZER_UTIL_H

#include <stdio.h>

/* Append to buf (size bytes) with snprintf semantics; `len` is the length
 * written so far, or that would have been written had buf been large
 * enough. Needs `buf`, `size` and an int `len` in scope. */
#define APPEND(...)                                                          \
	do {                                                                 \
		int k_ = snprintf(buf + (len < (int)size ? len : (int)size), \
				  len < (int)size ? size - (size_t)len : 0,  \
				  __VA_ARGS__);                              \
		if (k_ > 0)                                                  \
			len += k_;                                           \
	} while (0)

#endif /* DT_ANALYZER_UTIL_H */
