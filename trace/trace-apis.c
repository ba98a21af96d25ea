/*
 * trace-apis.c - the API table of a trace: which functions its calls name
 * (APIDEF records) and which wrapped library each belongs to (LIBRARY
 * records, 1.8 on), as the writer puts them in the file header and the
 * reader makes them into dt_file_info's apis and libraries. Not the
 * calls themselves, nor the rest of the header.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-trace.h"
#include "trace-util.h"

void dt_apis_write(const struct dt_writer_config *cfg, dt_rec_add_fn add,
		   void *b)
{
	for (uint32_t i = 0; i < cfg->n_libraries; i++) {
		const struct dt_library_def *l = &cfg->libraries[i];
		uint32_t nl = (uint32_t)strlen(l->name),
			 dl = (uint32_t)strlen(l->display);
		struct dt_rec_library *lr = add(b, DT_REC_LIBRARY, sizeof(*lr),
						l->name, nl, l->display, dl);
		if (lr) {
			lr->first_api = l->first_api;
			lr->n_apis = l->n_apis;
			lr->name_len = nl;
			lr->len = nl + dl;
		}
	}
	for (uint32_t i = 0; i < cfg->api_count; i++) {
		const char *name = cfg->api_names[i];
		const char *sig = cfg->api_sigs ? cfg->api_sigs[i] : "";
		uint32_t nl = (uint32_t)strlen(name),
			 sl = (uint32_t)strlen(sig);
		struct dt_rec_apidef *a =
			add(b, DT_REC_APIDEF, sizeof(*a), name, nl, sig, sl);
		if (a) {
			a->api = (uint16_t)i;
			a->flags = cfg->api_flags ? cfg->api_flags[i] : 0;
			a->name_len = nl;
			a->len = nl + sl;
		}
	}
}

int dt_apis_add_def(struct dt_file_info *fi, const struct dt_rec_apidef *rec)
{
	uint32_t len;
	const uint8_t *t = dt_rec_tail(&rec->hdr, &len);

	if (rec->name_len > len)
		return -1;
	if (rec->api >= fi->n_apis) {
		uint32_t n = (uint32_t)rec->api + 1;
		struct dt_api_def *a = realloc(fi->apis, n * sizeof(*a));
		if (!a)
			return -1;
		memset(a + fi->n_apis, 0, (n - fi->n_apis) * sizeof(*a));
		fi->apis = a;
		fi->n_apis = n;
	}
	struct dt_api_def *a = &fi->apis[rec->api];
	free((void *)a->name);
	free((void *)a->sig);
	a->name = dt_dup_n(t, rec->name_len);
	a->sig = dt_dup_n(t + rec->name_len, len - rec->name_len);
	a->flags = rec->flags;
	return 0;
}

int dt_apis_add_library(struct dt_file_info *fi,
			const struct dt_rec_library *rec)
{
	uint32_t len;
	const uint8_t *t = dt_rec_tail(&rec->hdr, &len);
	struct dt_library_def *l;

	if (rec->name_len == 0 || rec->name_len > len)
		return -1;
	l = realloc(fi->libraries, (fi->n_libraries + 1) * sizeof(*l));
	if (!l)
		return -1;
	fi->libraries = l;
	l += fi->n_libraries;
	l->name = dt_dup_n(t, rec->name_len);
	l->display = dt_dup_n(t + rec->name_len, len - rec->name_len);
	l->first_api = rec->first_api;
	l->n_apis = rec->n_apis;
	if (!l->name || !l->display) {
		free((void *)l->name);
		free((void *)l->display);
		return -1;
	}
	fi->n_libraries++;
	return 0;
}

/* Each defined API's library: the LIBRARY whose range holds it, else (a
 * file before 1.8, or an id no LIBRARY covers) cuDNN, which a file that
 * names no library gets as its one. */
int dt_apis_assign_libraries(struct dt_file_info *fi)
{
	if (!fi->n_libraries) {
		fi->libraries = malloc(sizeof(*fi->libraries));
		if (!fi->libraries)
			return -1;
		fi->libraries[0] =
			(struct dt_library_def){ dt_dup_n("cudnn", 5),
						 dt_dup_n("cuDNN", 5), 0,
						 fi->n_apis };
		fi->n_libraries = 1;
		if (!fi->libraries[0].name || !fi->libraries[0].display)
			return -1;
	}
	for (uint32_t i = 0; i < fi->n_apis; i++) {
		if (!fi->apis[i].name)
			continue;
		fi->apis[i].library = "cudnn";
		for (uint32_t k = 0; k < fi->n_libraries; k++) {
			const struct dt_library_def *l = &fi->libraries[k];
			if (i >= l->first_api && i - l->first_api < l->n_apis) {
				fi->apis[i].library = l->name;
				break;
			}
		}
	}
	return 0;
}

void dt_apis_free(struct dt_file_info *fi)
{
	for (uint32_t i = 0; i < fi->n_apis; i++) {
		free((void *)fi->apis[i].name);
		free((void *)fi->apis[i].sig);
	}
	free(fi->apis);
	for (uint32_t i = 0; i < fi->n_libraries; i++) {
		free((void *)fi->libraries[i].name);
		free((void *)fi->libraries[i].display);
	}
	free(fi->libraries);
}

const char *dt_library_info_get(const struct dt_file_info *fi,
				const char *library, const char *what)
{
	char key[128];
	const char *v;

	snprintf(key, sizeof(key), "lib.%s.%s", library, what);
	if ((v = dt_info_get(fi, key)) || strcmp(library, "cudnn"))
		return v;
	snprintf(key, sizeof(key), "cudnn.%s", what); /* before 1.8 */
	return dt_info_get(fi, key);
}
