/*
 * fake-cupti.c - a stand-in libcupti.so.13 with the functions by which a
 * program hands CUPTI over (the ones the shim interposes) and one it does
 * not, for the check that a program finding them with dlsym() reaches them
 * under the shim. Each returns its own code, 100 and up, and counts calls.
 */
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int fake_calls; /* calls that arrived here */

#define FAKE(name, code, ...)         \
	EXPORT int name(__VA_ARGS__); \
	EXPORT int name(__VA_ARGS__)  \
	{                             \
		fake_calls++;         \
		return code;          \
	}

/* the arguments are not looked at: unnamed */
FAKE(cuptiSubscribe, 101, void *, void *, void *)
FAKE(cuptiSubscribe_v2, 102, void *, void *, void *, void *)
FAKE(cuptiActivityRegisterCallbacks, 103, void *, void *)
FAKE(cuptiActivityDisable, 104, int)
FAKE(cuptiFinalize, 105, void)
FAKE(cuptiGetVersion, 106, uint32_t *)
