/*
 * test-replay-fuse-cudnn.c - the fusion what-ifs' fused graphs given to
 * the real cuDNN, no GPU needed: for each fusable chain of a trace whose
 * what-if can be built, every descriptor of the fused graph replay builds
 * (replay-fuse.c: the head's, the steps' nodes) is created, set and
 * finalized with libcudnn, up to the operation graph, which needs a
 * handle and so a GPU. cuDNN checks each tensor, convolution, matmul and
 * pointwise descriptor and each operation's shapes and types as it
 * finalizes them, which the stand-in GPU (fake-gpu.c) does not.
 *
 * usage: test-replay-fuse-cudnn TRACE CHAINS [TRACE CHAINS]...: CHAINS
 * what-ifs of TRACE must be built and finalized.
 */
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay-fuse.h"
#include "test-util.h"

/* Every descriptor of g before its operation graph made with cuDNN;
 * false, said, at the first it refuses. */
static bool finalize_all(const char *chain, const struct dt_cudnn_graph *g)
{
	void *d[SYN_DESCS] = { 0 };
	bool ok = true;
	char n[96], err[512];

	for (uint32_t i = 0; ok && i < g->root; i++) {
		const struct dt_cudnn_desc *x = &g->descs[i];
		cudnnStatus_t rc = cudnnBackendCreateDescriptor(
			(cudnnBackendDescriptorType_t)x->type, &d[i]);
		for (uint32_t k = 0; !rc && k < x->n_attrs; k++) {
			const struct dt_cudnn_attr *a = &x->attrs[k];
			uint32_t es = dt_backend_type_size(a->type);
			void *refs[64];
			const void *v = a->data;
			if (a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
				for (uint32_t e = 0; e < a->bytes / 8 && e < 64;
				     e++) {
					int64_t r;
					memcpy(&r, a->data + 8 * e, 8);
					refs[e] = r >= 0 ? d[r] : NULL;
				}
				v = refs;
			}
			rc = cudnnBackendSetAttribute(
				d[i], (cudnnBackendAttributeName_t)a->name,
				(cudnnBackendAttributeType_t)a->type,
				es ? a->bytes / es : 0, v);
		}
		if (!rc)
			rc = cudnnBackendFinalize(d[i]);
		if (rc) {
			cudnnGetLastErrorString(err, sizeof(err));
			fprintf(stderr, "%s: %s refused: %s: %s\n", chain,
				dt_enum_short("cudnnBackendDescriptorType_t",
					      x->type, "CUDNN_BACKEND_", n,
					      sizeof(n)),
				cudnnGetErrorString(rc), err);
			ok = false;
		}
	}
	for (uint32_t i = g->root; i-- > 0;)
		if (d[i])
			cudnnBackendDestroyDescriptor(d[i]);
	return ok;
}

/* The what-ifs of the trace at path that can be built, each finalized:
 * how many were. */
static int check_trace(const char *path)
{
	struct problems ps;
	struct fuse_chains fc;
	struct syn *s = malloc(sizeof(*s)), *hs = malloc(sizeof(*hs));
	char err[256], why[256];
	int built = 0;

	CHECK(s && hs && !problems_read(path, 0, &ps, err, sizeof(err)) &&
	      !fuse_read(path, &fc, err, sizeof(err)));
	for (size_t i = 0; s && hs && i < fc.n; i++) {
		const struct fuse_chain *c = &fc.v[i];
		if (fuse_why_not(c, &ps, why, sizeof(why)))
			continue;
		memset(s, 0, sizeof(*s));
		memset(hs, 0, sizeof(*hs));
		const struct problem *head =
			problems_find(&ps, c->steps[fuse_head_at(c)].problem);
		CHECK(fuse_fused_graph(s, hs, c, head, why, sizeof(why)));
		if (finalize_all(c->pattern, &s->g))
			built++;
	}
	fuse_free(&fc);
	problems_free(&ps);
	free(s);
	free(hs);
	return built;
}

int main(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		int built = check_trace(argv[i]);
		if (built != atoi(argv[i + 1]))
			fprintf(stderr, "%s: %d what-ifs finalized, not %s\n",
				argv[i], built, argv[i + 1]);
		CHECK_EQ_U(built, atoi(argv[i + 1]));
	}
	TEST_DONE();
}
