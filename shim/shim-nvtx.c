/*
 * shim-nvtx.c - libdnntrace.so as the program's NVTX injection library.
 *
 * NVTX v3 is header-only: the program's first NVTX call dlopens the library
 * NVTX_INJECTION64_PATH names and calls its InitializeInjectionNvtx2, which
 * fills NVTX's callback tables. Filled here: the core and domain modules
 * (ranges, marks, domains, registered strings, category and thread names),
 * each call one NVTX record on the thread's ring, like a cuDNN call's. The
 * CUDA, OpenCL and sync modules stay no-ops. Nothing here changes what the
 * program sees but the values NVTX lets a tool return (nesting levels,
 * range ids, handles).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdio.h>
#include <wchar.h>

#define NVTX_NO_IMPL /* the types only: NVTX's own code is the program's */
#include <nvtx3/nvToolsExt.h>

#include "shim-internal.h"

/* STRING ids, range ids: process-wide, from 1 */
static _Atomic uint32_t next_string;
static _Atomic uint64_t next_range;

/* A thread's interned messages: a message's hash and length to its STRING
 * id, so that a name pushed a million times is written once. A slot taken
 * by another message is overwritten: that message is written again under
 * a new id when it comes back. Heap-allocated at the thread's first
 * message (the shim's static TLS stays small), freed when it exits, and
 * emptied when its ring belongs to another file than the ids (after fork,
 * the child's). */
#define INTERN_SLOTS 1024u
struct intern_slot {
	uint64_t hash;
	uint32_t len;
	uint32_t id;
};
struct nvtx_thread {
	struct intern_slot slot[INTERN_SLOTS];
	unsigned epoch; /* dt_thread's, when the ids were written */
	int depth;      /* ranges pushed and not popped, all domains */
};
/* initial-exec: see shim-core.c's tls */
static __thread struct nvtx_thread *nvtx_tls
	__attribute__((tls_model("initial-exec")));
static pthread_key_t nvtx_key;
static pthread_once_t nvtx_key_once = PTHREAD_ONCE_INIT;

static void nvtx_thread_exit(void *p)
{
	free(p);
	nvtx_tls = NULL;
}

static void nvtx_key_make(void)
{
	(void)pthread_key_create(&nvtx_key, nvtx_thread_exit);
}

static struct nvtx_thread *nvtx_thread(const struct dt_thread *t)
{
	struct nvtx_thread *n = nvtx_tls;

	if (DT_UNLIKELY(!n)) {
		if (!(n = nvtx_tls = calloc(1, sizeof(*n))))
			return NULL;
		pthread_once(&nvtx_key_once, nvtx_key_make);
		pthread_setspecific(nvtx_key, n);
		n->epoch = t->epoch;
	}
	if (DT_UNLIKELY(n->epoch != t->epoch)) {
		memset(n->slot, 0, sizeof(n->slot));
		n->epoch = t->epoch;
	}
	return n;
}

/* Write a STRING record of s (len bytes) on t's ring; its id, 0 if lost. */
static uint32_t emit_string(struct dt_thread *t, const char *s, uint32_t len)
{
	uint32_t size =
		dt_rec_align((uint32_t)sizeof(struct dt_rec_string) + len);
	struct dt_rec_string *r = dt_ring_reserve(t->ring, size);

	if (!r)
		return 0;
	r->hdr.type = DT_REC_STRING;
	r->hdr.reserved = 0;
	r->hdr.size = size;
	r->id = atomic_fetch_add_explicit(&next_string, 1,
					  memory_order_relaxed) +
		1;
	r->len = len;
	memcpy(r + 1, s, len);
	memset((uint8_t *)(r + 1) + len, 0, size - sizeof(*r) - len);
	uint32_t id = r->id;
	dt_ring_commit(t->ring);
	return id;
}

/* The STRING id of message s, written first if this thread has not yet. */
static uint32_t intern(struct dt_thread *t, const char *s)
{
	struct nvtx_thread *n = nvtx_thread(t);
	uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
	uint32_t len = 0;

	if (!s)
		return 0;
	for (; s[len] && len < DT_MAX_STRING; len++)
		h = (h ^ (uint8_t)s[len]) * 0x100000001b3u;
	if (!n)
		return emit_string(t, s, len);
	struct intern_slot *e = &n->slot[(h ^ (h >> 32)) & (INTERN_SLOTS - 1)];
	if (DT_LIKELY(e->id && e->hash == h && e->len == len))
		return e->id;
	*e = (struct intern_slot){ h, len, emit_string(t, s, len) };
	return e->id;
}

/* A wide string in UTF-8 (the C locale's wcrtomb knows ASCII only), cut
 * to DT_MAX_STRING bytes; returns buf. */
#define UTF8_MAX (DT_MAX_STRING + 1)
static const char *utf8(const wchar_t *w, char buf[UTF8_MAX])
{
	size_t k = 0;

	for (; *w && k + 4 < UTF8_MAX; w++) {
		uint32_t c = (uint32_t)*w;
		if (c < 0x80) {
			buf[k++] = (char)c;
			continue;
		}
		int more = c < 0x800 ? 1 : c < 0x10000 ? 2 : 3;
		/* the lead byte: 110xxxxx, 1110xxxx or 11110xxx */
		buf[k++] = (char)(((0xff00 >> (more + 1)) & 0xff) |
				  (c >> (6 * more)));
		while (more--)
			buf[k++] = (char)(0x80 | ((c >> (6 * more)) & 0x3f));
	}
	buf[k] = 0;
	return buf;
}

static uint32_t intern_wide(struct dt_thread *t, const wchar_t *w)
{
	char buf[UTF8_MAX];

	return w ? intern(t, utf8(w, buf)) : 0;
}

/* Handles NVTX hands back to the program are STRING ids: a domain's is
 * its name's, a registered string's its own. */
static uint32_t handle_id(const void *h)
{
	return (uint32_t)(uintptr_t)h;
}

/* The STRING id of an event's message, whatever its type. */
static uint32_t message_id(struct dt_thread *t, const nvtxEventAttributes_t *a)
{
	if (!a)
		return 0;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return intern(t, a->message.ascii);
	case NVTX_MESSAGE_TYPE_UNICODE:
		return intern_wide(t, a->message.unicode);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return handle_id(a->message.registered);
	default:
		return 0;
	}
}

/* One NVTX record on t's ring. */
static void emit(struct dt_thread *t, uint32_t event, uint32_t domain,
		 uint32_t name, uint32_t category, uint64_t range)
{
	struct dt_rec_nvtx *r;

	nvtx_thread(t); /* for pushed() and popped() */
	if (!(r = dt_ring_reserve(t->ring, sizeof(*r))))
		return; /* the ring counts it lost */
	r->hdr.type = DT_REC_NVTX;
	r->hdr.reserved = 0;
	r->hdr.size = sizeof(*r);
	r->t = dt_now();
	r->range = range;
	r->tid = t->tid;
	r->event = event;
	r->name = name;
	r->domain = domain;
	r->category = category;
	r->reserved = 0;
	dt_ring_commit(t->ring);
}

/* ------------------------------------------------------ the callbacks */

static void event_ex(uint32_t event, nvtxDomainHandle_t d,
		     const nvtxEventAttributes_t *a, uint64_t range)
{
	struct dt_thread *t = dt_thread_now();

	if (t)
		emit(t, event, handle_id(d), message_id(t, a),
		     a ? a->category : 0, range);
}

static void event_a(uint32_t event, const char *msg, uint64_t range)
{
	struct dt_thread *t = dt_thread_now();

	if (t)
		emit(t, event, 0, intern(t, msg), 0, range);
}

static void event_w(uint32_t event, const wchar_t *msg, uint64_t range)
{
	struct dt_thread *t = dt_thread_now();

	if (t)
		emit(t, event, 0, intern_wide(t, msg), 0, range);
}

static uint64_t new_range(void)
{
	return atomic_fetch_add_explicit(&next_range, 1, memory_order_relaxed) +
	       1;
}

/* NVTX's push returns the new range's level (0 for the outermost), its
 * pop the level of the range it closed; -1 when none was open. */
static int pushed(void)
{
	struct nvtx_thread *n = nvtx_tls;
	return n ? n->depth++ : 0;
}

static int popped(void)
{
	struct nvtx_thread *n = nvtx_tls;
	return n && n->depth > 0 ? --n->depth : -1;
}

static void mark_ex(const nvtxEventAttributes_t *a)
{
	event_ex(DT_NVTX_MARK, NULL, a, 0);
}
static void mark_a(const char *m)
{
	event_a(DT_NVTX_MARK, m, 0);
}
static void mark_w(const wchar_t *m)
{
	event_w(DT_NVTX_MARK, m, 0);
}
static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a)
{
	uint64_t id = new_range();
	event_ex(DT_NVTX_START, NULL, a, id);
	return id;
}
static nvtxRangeId_t start_a(const char *m)
{
	uint64_t id = new_range();
	event_a(DT_NVTX_START, m, id);
	return id;
}
static nvtxRangeId_t start_w(const wchar_t *m)
{
	uint64_t id = new_range();
	event_w(DT_NVTX_START, m, id);
	return id;
}
static void range_end(nvtxRangeId_t id)
{
	event_a(DT_NVTX_END, NULL, id);
}
static int push_ex(const nvtxEventAttributes_t *a)
{
	event_ex(DT_NVTX_PUSH, NULL, a, 0);
	return pushed();
}
static int push_a(const char *m)
{
	event_a(DT_NVTX_PUSH, m, 0);
	return pushed();
}
static int push_w(const wchar_t *m)
{
	event_w(DT_NVTX_PUSH, m, 0);
	return pushed();
}
static int pop(void)
{
	event_a(DT_NVTX_POP, NULL, 0);
	return popped();
}

static void name_category(nvtxDomainHandle_t d, uint32_t category,
			  uint32_t (*name)(struct dt_thread *, const void *),
			  const void *s)
{
	struct dt_thread *t = dt_thread_now();

	if (t)
		emit(t, DT_NVTX_CATEGORY, handle_id(d), name(t, s), category,
		     0);
}
static uint32_t name_a(struct dt_thread *t, const void *s)
{
	return intern(t, s);
}
static uint32_t name_w(struct dt_thread *t, const void *s)
{
	return intern_wide(t, s);
}
static void category_a(uint32_t c, const char *s)
{
	name_category(NULL, c, name_a, s);
}
static void category_w(uint32_t c, const wchar_t *s)
{
	name_category(NULL, c, name_w, s);
}
static void thread_a(uint32_t tid, const char *s)
{
	event_a(DT_NVTX_THREAD_NAME, s, tid);
}
static void thread_w(uint32_t tid, const wchar_t *s)
{
	event_w(DT_NVTX_THREAD_NAME, s, tid);
}

static void d_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	event_ex(DT_NVTX_MARK, d, a, 0);
}
static nvtxRangeId_t d_start(nvtxDomainHandle_t d,
			     const nvtxEventAttributes_t *a)
{
	uint64_t id = new_range();
	event_ex(DT_NVTX_START, d, a, id);
	return id;
}
static void d_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	event_ex(DT_NVTX_END, d, NULL, id);
}
static int d_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	event_ex(DT_NVTX_PUSH, d, a, 0);
	return pushed();
}
static int d_pop(nvtxDomainHandle_t d)
{
	event_ex(DT_NVTX_POP, d, NULL, 0);
	return popped();
}
static void d_category_a(nvtxDomainHandle_t d, uint32_t c, const char *s)
{
	name_category(d, c, name_a, s);
}
static void d_category_w(nvtxDomainHandle_t d, uint32_t c, const wchar_t *s)
{
	name_category(d, c, name_w, s);
}

/* A registered string or a domain: a STRING record of its own, written by
 * this thread, whose id is the handle. Not interned: NVTX gives each
 * registration a handle of its own. NULL when not recorded, which NVTX
 * takes as the default domain or no message. */
static void *registered(const char *s, const wchar_t *w)
{
	struct dt_thread *t = dt_thread_now();
	char buf[UTF8_MAX];

	if (!t || !(s = s ? s : w ? utf8(w, buf) : NULL))
		return NULL;
	return (void *)(uintptr_t)emit_string(
		t, s, (uint32_t)strnlen(s, DT_MAX_STRING));
}
static nvtxStringHandle_t d_register_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return registered(s, NULL);
}
static nvtxStringHandle_t d_register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	(void)d;
	return registered(NULL, s);
}
static nvtxDomainHandle_t domain_a(const char *s)
{
	return registered(s, NULL);
}
static nvtxDomainHandle_t domain_w(const wchar_t *s)
{
	return registered(NULL, s);
}
static void domain_destroy(nvtxDomainHandle_t d)
{
	(void)d;
}
static void initialize(const void *reserved)
{
	(void)reserved;
}

/* ------------------------------------------------------- registration */

#define FN(f) ((NvtxFunctionPointer)(f))

static const struct {
	NvtxCallbackModule module;
	unsigned cbid;
	NvtxFunctionPointer fn;
} callbacks[] = {
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkEx, FN(mark_ex) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkA, FN(mark_a) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_MarkW, FN(mark_w) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeStartEx, FN(start_ex) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeStartA, FN(start_a) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeStartW, FN(start_w) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangeEnd, FN(range_end) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushEx, FN(push_ex) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, FN(push_a) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushW, FN(push_w) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, FN(pop) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_NameCategoryA, FN(category_a) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_NameCategoryW, FN(category_w) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_NameOsThreadA, FN(thread_a) },
	{ NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_NameOsThreadW, FN(thread_w) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainMarkEx, FN(d_mark) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangeStartEx,
	  FN(d_start) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangeEnd, FN(d_end) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx, FN(d_push) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop, FN(d_pop) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainNameCategoryA,
	  FN(d_category_a) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainNameCategoryW,
	  FN(d_category_w) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringA,
	  FN(d_register_a) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringW,
	  FN(d_register_w) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateA, FN(domain_a) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateW, FN(domain_w) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainDestroy,
	  FN(domain_destroy) },
	{ NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_Initialize, FN(initialize) },
};

/* NVTX calls this once, at the program's first NVTX call, when
 * NVTX_INJECTION64_PATH names this library. Returns 0 (NVTX then stays
 * a no-op) when its tables cannot be had or recording is off. */
DT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb =
		get ? get(NVTX_ETID_CALLBACKS) : NULL;
	NvtxFunctionTable table[NVTX_CB_MODULE_SIZE] = { 0 };
	unsigned size[NVTX_CB_MODULE_SIZE] = { 0 };

	if (!cb || cb->struct_size < sizeof(*cb) || !dt_thread_now())
		return 0;
	for (size_t i = 0; i < sizeof(callbacks) / sizeof(callbacks[0]); i++) {
		NvtxCallbackModule m = callbacks[i].module;
		if (!table[m] &&
		    !cb->GetModuleFunctionTable(m, &table[m], &size[m]))
			return 0;
		/* an older NVTX may know fewer callbacks */
		if (callbacks[i].cbid <= size[m] && table[m][callbacks[i].cbid])
			*table[m][callbacks[i].cbid] = callbacks[i].fn;
	}
	return 1;
}

/* Whether NVTX_INJECTION64_PATH names this very library. */
static bool injected_here(const char *path)
{
	Dl_info self;
	struct stat a, b;

	return dladdr((void *)InitializeInjectionNvtx2, &self) &&
	       self.dli_fname && stat(self.dli_fname, &a) == 0 &&
	       stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

const char *dt_nvtx_state(void)
{
	static char buf[512];
	const char *path = getenv("NVTX_INJECTION64_PATH");

	if (!path || !*path)
		return "off: NVTX_INJECTION64_PATH is not set";
	if (injected_here(path))
		return "on";
	snprintf(buf, sizeof(buf),
		 "off: another tool holds NVTX (NVTX_INJECTION64_PATH=%s)",
		 path);
	return buf;
}
