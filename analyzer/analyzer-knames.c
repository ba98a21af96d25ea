/*
 * analyzer-knames.c - what kernel names say, worked out once per name for
 * the model (the names are few, their records many), and the libraries
 * that registered kernels (KERNEL_LIB), which say more of a kernel than
 * its name. Part of the model's core: no library's calls are read here.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer-model-internal.h"

/* A kernel name's hash: names differ in their template arguments, late
 * in long names, so the ends, the middle and the length are enough to
 * pick a slot; a comparison confirms. */
static uint64_t kname_hash(const char *name, uint32_t len)
{
	uint64_t a = 0, b = 0, c = 0;

	memcpy(&a, name, len < 8 ? len : 8);
	if (len > 8)
		memcpy(&b, name + len - 8, 8);
	if (len > 16)
		memcpy(&c, name + len / 2 - 4, 8);
	uint64_t h = (a ^ len) * 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 29) ^ b) * 0xff51afd7ed558ccdull;
	h = (h ^ (h >> 32) ^ c) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

static bool kname_grow(struct dt_model *m)
{
	void *v = dt_grow_array(m->knames, &m->cap_knames, m->n_knames + 1,
				sizeof(*m->knames));
	if (!v)
		return false;
	m->knames = v;
	if ((m->n_knames + 1) * 2 <= m->cap_kname_idx)
		return true;
	uint32_t cap = m->cap_kname_idx ? m->cap_kname_idx * 2 : 1024;
	uint32_t *idx = calloc(cap, sizeof(*idx));
	if (!idx)
		return false;
	for (uint32_t i = 0; i < m->n_knames; i++) {
		const struct dt_kernel_class *k = m->knames[i];
		uint32_t j = (uint32_t)kname_hash(k->name, k->len) & (cap - 1);
		while (idx[j])
			j = (j + 1) & (cap - 1);
		idx[j] = i + 1;
	}
	free(m->kname_idx);
	m->kname_idx = idx;
	m->cap_kname_idx = cap;
	return true;
}

/* The library that registered the kernel named name (len bytes), or
 * NULL. */
static const char *kreg_find(const struct dt_model *m, const char *name,
			     uint32_t len)
{
	if (!m->cap_kregs)
		return NULL;
	uint64_t h = dt_hash(name, len, 0);
	h = h ? h : 1; /* as kreg_add keeps it: 0 marks a free entry */
	for (size_t j = h & (m->cap_kregs - 1); m->kregs[j].hash;
	     j = (j + 1) & (m->cap_kregs - 1))
		if (m->kregs[j].hash == h)
			return m->kreg_paths[m->kregs[j].path];
	return NULL;
}

/* What the registering library says of a kernel, over what its name
 * says. */
static void kreg_apply(struct dt_kernel_class *k, const char *module)
{
	k->module = module;
	enum dt_lib lib = dt_lib_of_path(module, strlen(module));
	if (lib != DT_LIB_OTHER) {
		k->lib = lib;
		k->lib_by_module = true;
	}
}

static bool kreg_add(struct dt_model *m, uint64_t h, uint32_t path)
{
	if (!h)
		h = 1;
	if (2 * (m->n_kregs + 1) > m->cap_kregs) {
		size_t cap = m->cap_kregs ? 2 * m->cap_kregs : 1024;
		struct kreg *t = calloc(cap, sizeof(*t));
		if (!t)
			return false;
		for (size_t i = 0; i < m->cap_kregs; i++) {
			if (!m->kregs[i].hash)
				continue;
			size_t j = m->kregs[i].hash & (cap - 1);
			while (t[j].hash)
				j = (j + 1) & (cap - 1);
			t[j] = m->kregs[i];
		}
		free(m->kregs);
		m->kregs = t;
		m->cap_kregs = cap;
	}
	size_t j = h & (m->cap_kregs - 1);
	for (; m->kregs[j].hash; j = (j + 1) & (m->cap_kregs - 1))
		if (m->kregs[j].hash == h)
			return true; /* the first library to register it */
	m->kregs[j] = (struct kreg){ h, path };
	m->n_kregs++;
	return true;
}

/* KERNEL_LIB: the kernels a library registered; names seen already take
 * it too. */
void m_kernel_lib(struct dt_model *m, const struct dt_rec_kernel_lib *r)
{
	uint32_t len;
	const uint8_t *t = dt_rec_tail(&r->hdr, &len);

	if ((uint64_t)r->count * 8 + r->path_len > len || !r->path_len)
		return;
	const char *path = (const char *)t + (size_t)r->count * 8;
	uint32_t p;
	for (p = 0; p < m->n_kreg_paths; p++)
		if (strlen(m->kreg_paths[p]) == r->path_len &&
		    !memcmp(m->kreg_paths[p], path, r->path_len))
			break;
	if (p == m->n_kreg_paths) {
		char **paths = realloc(m->kreg_paths, (p + 1) * sizeof(*paths));
		if (!paths)
			return;
		m->kreg_paths = paths;
		if (!(paths[p] = strndup(path, r->path_len)))
			return;
		m->n_kreg_paths++;
	}
	for (uint32_t i = 0; i < r->count; i++) {
		uint64_t h;
		memcpy(&h, t + (size_t)i * 8, 8);
		if (!kreg_add(m, h, p))
			return;
	}
	m->stats.kernel_registrations += r->count;
	for (uint32_t i = 0; i < m->n_knames; i++) {
		struct dt_kernel_class *k = m->knames[i];
		const char *module =
			k->module ? NULL : kreg_find(m, k->name, k->len);
		if (module)
			kreg_apply(k, module);
	}
}

/* What a kernel's name says: its entry, made the first time the name
 * is seen. NULL only when out of memory. */
const struct dt_kernel_class *m_kernel_class(struct dt_model *m,
					     const char *name, uint32_t len)
{
	uint32_t mask = m->cap_kname_idx - 1, j;

	if (m->cap_kname_idx) {
		for (j = (uint32_t)kname_hash(name, len) & mask;
		     m->kname_idx[j]; j = (j + 1) & mask) {
			const struct dt_kernel_class *k =
				m->knames[m->kname_idx[j] - 1];
			if (k->len == len && !memcmp(k->name, name, len))
				return k;
		}
	}
	if (!kname_grow(m))
		return NULL;
	/* the demangled name beside the name, in one block: the entry is
	 * freed as one */
	char *nul = strndup(name, len);
	char *d = nul ? dt_demangle(nul) : NULL;
	size_t d_n = d ? strlen(d) + 1 : 0;
	struct dt_kernel_class *k =
		nul ? malloc(sizeof(*k) + len + 1 + d_n) : NULL;
	free(nul);
	if (!k) {
		free(d);
		return NULL;
	}
	char *copy = (char *)(k + 1);
	memcpy(copy, name, len);
	copy[len] = 0;
	if (d)
		memcpy(copy + len + 1, d, d_n);
	free(d);
	dt_kernel_classify(name, len, k);
	k->demangled = d_n ? copy + len + 1 : copy;
	k->module = NULL;
	k->lib_by_module = false;
	const char *module = kreg_find(m, name, len);
	if (module)
		kreg_apply(k, module);
	k->id = m->n_knames;
	k->hash = dt_hash(name, len, 0xf05e);
	k->name = copy;
	k->len = len;
	mask = m->cap_kname_idx - 1;
	for (j = (uint32_t)kname_hash(name, len) & mask; m->kname_idx[j];
	     j = (j + 1) & mask)
		;
	m->kname_idx[j] = m->n_knames + 1;
	m->knames[m->n_knames++] = k;
	return k;
}

void m_knames_free(struct dt_model *m)
{
	for (uint32_t i = 0; i < m->n_knames; i++)
		free(m->knames[i]);
	free(m->knames);
	free(m->kname_idx);
	free(m->kregs);
	for (size_t i = 0; i < m->n_kreg_paths; i++)
		free(m->kreg_paths[i]);
	free(m->kreg_paths);
}
