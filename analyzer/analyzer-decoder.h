/*
 * analyzer-decoder.h - what a library's decoder is to the model. Private
 * to analyzer/.
 *
 * The model's core joins calls to the kernels they launched, queues ops
 * until their kernels are in, replays CUDA graphs and converts clocks,
 * for every library alike. What a library's calls mean (which of them
 * compute, on what tensors, with which engine) is its decoder's: the core
 * hands it each call of its library (dt_api_def.library), arguments
 * decoded, and the decoder makes ops through m_op_new(). A library with no
 * decoder still has its calls counted and timed, and a call of it that
 * launched work becomes an op of that library, kernels and all: it is
 * only left undescribed.
 */
#ifndef DT_ANALYZER_DECODER_H
#define DT_ANALYZER_DECODER_H

#include "analyzer-model-internal.h"

struct dt_decoder {
	const char *library; /* the dt_api_def.library it decodes */
	/* Its state for one model (fi outlives it), or NULL when out of
	 * memory (its library's calls are then left undecoded). */
	void *(*create)(struct dt_model *m, const struct dt_file_info *fi);
	void (*destroy)(void *state);
	/* One call of its library, in file order; args holds the n
	 * arguments decoded (n >= 0). */
	void (*call)(void *state, const struct dt_rec_api_call *c,
		     const struct dt_api_def *api, struct dt_arg *args, int n);
	/* A call of function api of its library launched work but made no
	 * op: p is the op the core made of it, for the decoder to say what
	 * it can (NULL: nothing). */
	void (*launched)(void *state, struct pending *p, uint16_t api);
	/* Op p is handed out still waiting (m_op_wait()): what the decoder
	 * waited for never came (NULL: nothing to do). */
	void (*unresolved)(void *state, struct pending *p);
	/* The type (enum dt_dtype) of scalar argument i of a call of
	 * function api, from the call's other arguments alone (no state):
	 * -1 when not known, or api is not its library's (NULL: never
	 * known). */
	int64_t (*scalar_dtype)(const char *api, const struct dt_arg *args,
				int n, int i);
};

/* The decoder of library, or NULL when it has none. The table is the
 * program's, written by the build from its list of decoders: a decoder is
 * a `const struct dt_decoder dt_decoder_<library>` in files of its own,
 * added to that list (analyzer/meson.build), with no change here. */
const struct dt_decoder *dt_decoder_find(const char *library);

/* The type of scalar argument i of a call of function api, as the
 * decoder of its library says (dt_decoder.scalar_dtype); -1 unknown. */
int64_t dt_scalar_dtype(const char *api, const struct dt_arg *args, int n,
			int i);

#endif /* DT_ANALYZER_DECODER_H */
