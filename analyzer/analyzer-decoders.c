/*
 * analyzer-decoders.c - the libraries the analyzer knows: each one's
 * name as views print it, and its decoder where it has one. A library
 * missing here is still read, counted and shown, by the name its trace
 * gives it.
 */
#include <string.h>

#include "analyzer-decoder.h"

/* Each defined in its decoder's files. */
extern const struct dt_decoder dt_cudnn_decoder;

static const struct library {
	const char *name;    /* dt_api_def.library */
	const char *display; /* as views print it */
	enum dt_lib kernels; /* what its calls' GPU work counts under */
	const struct dt_decoder *decoder;
} libraries[] = {
	{ "cudnn", "cuDNN", DT_LIB_CUDNN, &dt_cudnn_decoder },
	{ "cublas", "cuBLAS", DT_LIB_CUBLAS, NULL },
	{ "cublasLt", "cuBLASLt", DT_LIB_CUBLAS, NULL },
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
	const struct library *l = library_of(library);

	return l ? l->decoder : NULL;
}

const char *dt_library_display(const char *library)
{
	const struct library *l = library_of(library);

	return l ? l->display : library && *library ? library : "?";
}

enum dt_lib dt_lib_of_library(const char *library)
{
	const struct library *l = library_of(library);

	return l ? l->kernels : DT_LIB_OTHER;
}
