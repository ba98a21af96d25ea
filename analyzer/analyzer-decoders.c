/*
 * analyzer-decoders.c - the libraries the analyzer knows: each one's
 * name as views print it and what its GPU work counts under; and the
 * decoders, found in the program's table (decoder-table.c.in, which the
 * build writes). A library missing here is still read, counted and
 * shown, by the name its trace gives it; one with no decoder, left
 * undescribed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyzer-decoder.h"

/* The program's decoders, NULL-terminated: the build's table. */
extern const struct dt_decoder *const dt_decoders[];

static const struct library {
	const char *name;    /* dt_api_def.library */
	const char *display; /* as views print it */
	enum dt_lib kernels; /* what its calls' GPU work counts under */
} libraries[] = {
	{ "cudnn", "cuDNN", DT_LIB_CUDNN },
	{ "cublas", "cuBLAS", DT_LIB_CUBLAS },
	{ "cublaslt", "cuBLASLt", DT_LIB_CUBLAS },
};

static const struct library *library_of(const char *name)
{
	for (size_t i = 0; name && i < sizeof(libraries) / sizeof(libraries[0]);
	     i++)
		if (!strcmp(libraries[i].name, name))
			return &libraries[i];
	return NULL;
}

const struct dt_decoder *dt_decoder_find(const char *library)
{
	for (size_t i = 0; library && dt_decoders[i]; i++)
		if (!strcmp(dt_decoders[i]->library, library))
			return dt_decoders[i];
	return NULL;
}

int64_t dt_scalar_dtype(const char *api, const struct dt_arg *args, int n,
			int i)
{
	for (size_t k = 0; api && dt_decoders[k]; k++) {
		const struct dt_decoder *d = dt_decoders[k];
		int64_t t =
			d->scalar_dtype ? d->scalar_dtype(api, args, n, i) : -1;
		if (t >= 0)
			return t;
	}
	return -1;
}

const char *dt_library_display(const char *library)
{
	const struct library *l = library_of(library);

	return l ? l->display : library && *library ? library : "?";
}

const char *dt_library_version(const char *library, const char *v, char *buf,
			       size_t size)
{
	if (library && !strcmp(library, "cudnn"))
		return dt_fmt_cudnn_version(v, buf, size);
	return v ? v : "?";
}

enum dt_lib dt_lib_of_library(const char *library)
{
	const struct library *l = library_of(library);

	return l ? l->kernels : DT_LIB_OTHER;
}

const char *dt_static_text(const char *library, uint64_t ns, uint64_t kernels,
			   char *buf, size_t size)
{
	const struct library *l = library_of(library);
	const char *name = l ? l->display : library;
	char t[32];

	if (!kernels)
		return NULL;
	snprintf(buf, size,
		 "not loaded, yet its kernels ran (%s of GPU time, %" PRIu64
		 " kernel%s) and none of its calls was recorded: the program "
		 "links %s statically, so its work shows as kernels only, "
		 "without shapes, FLOPs or algorithms",
		 dt_fmt_ns(ns, t, sizeof(t)), kernels, kernels == 1 ? "" : "s",
		 name);
	return buf;
}

const char *dt_library_status(const char *library, int64_t status, char *buf,
			      size_t size)
{
	if (!library || !strcmp(library, "cudnn"))
		return dt_status_str(status, buf, size);
	snprintf(buf, size, "%" PRId64, status);
	return buf;
}
