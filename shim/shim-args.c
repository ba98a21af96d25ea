/*
 * shim-args.c - a recorded call's arguments read back by name, for the
 * hooks run after some calls (a description's [after_call]: cuDNN's plan
 * queries, cuBLASLt's algorithm queries). Each API's signature
 * (trace/FORMAT.md, "Call arguments") is parsed once, on the first such
 * read; nothing here knows one library from another.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dt-api.h"
#include "shim-runtime.h"

/* An API's arguments as its signature lays them out, parsed once, for the
 * hooks that read a call's arguments by name (dt_call_arg). */
struct arg_layout {
	unsigned n;
	struct arg_field {
		const char *name; /* in the signature, name_len bytes */
		uint8_t name_len;
		char code;    /* FORMAT.md's: i u f e p a x k s m */
		uint8_t size; /* fixed bytes; for `a`, of an element */
	} field[];
};

static _Atomic(struct arg_layout *) layouts[DT_API_COUNT];

static uint8_t scalar_size(const char *code)
{
	return code[0] == 'p' || code[1] == '8' ? 8 : 4; /* i4 u4 f4 e */
}

static struct arg_layout *parse_layout(const char *sig)
{
	unsigned n = *sig != 0;
	struct arg_layout *l;

	for (const char *c = sig; *c; c++)
		n += *c == ',';
	if (!(l = malloc(sizeof(*l) + n * sizeof(l->field[0]))))
		return NULL;
	l->n = 0;
	while (*sig && l->n < n) {
		const char *colon = strchr(sig, ':');
		if (!colon)
			break;
		const char *code = colon + 1 + (colon[1] == '>');
		struct arg_field *f = &l->field[l->n++];
		f->name = sig;
		f->name_len = (uint8_t)(colon - sig);
		f->code = code[0];
		f->size = code[0] == 'a' ? scalar_size(code + 1)
					 : scalar_size(code);
		sig = strchr(code, ',');
		sig = sig ? sig + 1 : "";
	}
	return l;
}

/* Bytes field f takes at p. */
static uint32_t field_size(const struct arg_field *f, const uint8_t *p)
{
	uint32_t n;

	switch (f->code) {
	case 'a':
		memcpy(&n, p, 4);
		return 4 + n * f->size;
	case 'x':
	case 'k':
	case 's':
		memcpy(&n, p, 4);
		return 4 + n;
	case 'm':
		memcpy(&n, p + 12, 4);
		return 16 + n;
	default:
		return f->size;
	}
}

const uint8_t *dt_call_arg(const struct dt_thread *t, const char *name)
{
	struct arg_layout *l =
		atomic_load_explicit(&layouts[t->api], memory_order_acquire);
	const uint8_t *p = t->args;
	size_t len = strlen(name);

	if (!l) {
		struct arg_layout *none = NULL;
		if (!(l = parse_layout(dt_api_sigs[t->api])))
			return NULL;
		if (!atomic_compare_exchange_strong(&layouts[t->api], &none,
						    l)) {
			free(l); /* another thread's came first */
			l = none;
		}
	}
	for (unsigned i = 0; i < l->n; i++) {
		const struct arg_field *f = &l->field[i];
		if (f->name_len == len && !memcmp(f->name, name, len))
			return p;
		p += field_size(f, p);
	}
	return NULL;
}
