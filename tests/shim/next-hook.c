/*
 * next-hook.c - a preloaded library that wraps puts() the usual way, with
 * dlsym(RTLD_NEXT, "puts"). Preloaded after libdnntrace.so, whose dlsym it
 * then calls: RTLD_NEXT must still mean "after this library", not "after
 * libdnntrace.so" (which would find this very puts, and recurse).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((visibility("default"))) int puts(const char *s)
{
	static int (*next)(const char *);

	if (!next)
		next = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
	if (!next || next == puts) {
		static const char msg[] =
			"next-hook: dlsym(RTLD_NEXT) found the hook itself\n";
		(void)!write(2, msg, sizeof(msg) - 1);
		_exit(3);
	}
	fputs("[hooked] ", stdout);
	return next(s);
}
