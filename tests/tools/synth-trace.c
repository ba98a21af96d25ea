/*
 * synth-trace.c - writes synthetic traces with fixed times and identities,
 * for the golden tests of the reading commands and for benchmarks.
 *
 * usage: synth-trace API_LISTING OUT_DIR [--ranks N] [--steps N]
 *                    [--variant noise|changed] [--straggler R]
 *        synth-trace API_LISTING OUT_DIR --scenario fusion [--steps N]
 *        synth-trace API_LISTING OUT_DIR --scenario churn [--threads N]
 *                    [--steps N]
 *
 * Each rank's file (OUT_DIR/rank<r>.dnnt) holds what a small training job
 * records: a legacy FP32 convolution found with cudnnFind and run with
 * CUDA-core kernels and a layout conversion, an activation, a layout
 * transform, a failed setter, and a BF16 matrix product through the backend
 * API whose plans are autotuned (two engines tried) and then built again;
 * kernels outside cuDNN (PyTorch, cuBLAS, NCCL) and copies. Rank 1's matrix
 * products run 30% slower than rank 0's. Call arguments are encoded from
 * the signatures of shim/libs/cudnn-api.txt, as the shim would record them.
 *
 * Variants, for comparing runs: `noise` moves every kernel's time by up
 * to 3% either way (another run of the same job); `changed` makes the
 * convolution 20% slower, settles the matrix product on engine 3 instead
 * of 7 (slower, a smaller workspace), drops the activation and adds a
 * layout transform back to NCHW. `--straggler R` keeps every other rank
 * waiting for rank R in each step's all-reduce (20 ms more in it).
 *
 * The churn scenario (OUT_DIR/churn.dnnt) is descriptor traffic alone:
 * many threads creating, setting and destroying legacy and backend tensor
 * descriptors, for the benchmarks.
 *
 * The libraries scenario (OUT_DIR/libraries.dnnt) records two wrapped
 * libraries, cuDNN and a second one (dtt) whose APIs follow cuDNN's, one
 * of dtt's calls making a cuDNN call inside it (recorded nested).
 *
 * The gemm scenario (OUT_DIR/gemm.dnnt) makes its products through
 * cuBLAS and cuBLASLt (write_gemm() says which).
 *
 * The norm scenario (OUT_DIR/norm.dnnt) runs a layer normalization built
 * as a backend graph.
 *
 * The rnn scenario (OUT_DIR/rnn.dnnt) runs an LSTM and a batch
 * normalization through the legacy API, as PyTorch does.
 *
 * The startup scenario (OUT_DIR/startup.dnnt) compiles before its loop:
 * pauses of the host and one-off kernels, then steps that keep the GPU
 * busy.
 *
 * The ranges scenario (OUT_DIR/ranges.dnnt) names regions with NVTX: a
 * warm-up, then steps, each a forward and a backward range of calls that
 * launch kernels (and one kernel no call launched); a loader thread's
 * range in a domain of its own, and a start/end range the loader ends.
 * Its variant `collectives` marks no step: only a communication library's
 * ranges, four a step around its collectives.
 *
 * The fusion scenario writes one trace per case (OUT_DIR/fusion-*.dnnt):
 * PyTorch-like streams of cuDNN convolutions and PyTorch's own kernels
 * (bias, ReLU, batch norm forward and backward, GELU after a cuBLAS
 * matmul), cuDNN pointwise calls on one buffer, a backward-data
 * convolution followed by a ReLU backward, and a call that is already
 * fused; on an sm_90 GPU in NHWC BF16, then with one limit broken per
 * case: NCHW, compute capability 7.5 (with a misaligned output) and 10.0
 * (with a strided backward-data convolution), 12 channels, FP64.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt-analyzer.h"
#include "dt-trace.h"

#define MAX_APIS 1024

static char *api_names[MAX_APIS], *api_sigs[MAX_APIS];
static uint32_t n_apis;
/* the libraries the APIs belong to; none: all cuDNN's (as before 1.8) */
static const struct dt_library_def *libraries;
static uint32_t n_libraries;
static const char *variant = "";
/* records to count as lost (buffers full) before a rank's trace ends */
static int lose;
static int straggler = -1; /* --straggler R: the rank the others wait for */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("synth-trace: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* "name(sig) -> status ..." lines of the listing. */
static void load_listing(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) && n_apis < MAX_APIS) {
		char *open = strchr(line, '('), *close = strrchr(line, ')');
		if (line[0] == '#' || !open || !close || close < open)
			continue;
		/* the return part has no parentheses; the last ')' before
		 * " -> " closes the signature */
		char *arrow = strstr(line, ") -> ");
		if (arrow)
			close = arrow;
		api_names[n_apis] = strndup(line, (size_t)(open - line));
		api_sigs[n_apis] =
			strndup(open + 1, (size_t)(close - open - 1));
		n_apis++;
	}
	fclose(f);
}

/* An API the listing does not hold, after its last. */
static void add_api(const char *name, const char *sig)
{
	if (n_apis == MAX_APIS)
		die("more than %d APIs", MAX_APIS);
	api_names[n_apis] = strdup(name);
	api_sigs[n_apis++] = strdup(sig);
}

static uint16_t api_id(const char *name)
{
	for (uint32_t i = 0; i < n_apis; i++)
		if (!strcmp(api_names[i], name))
			return (uint16_t)i;
	die("%s is not in the listing", name);
	return 0;
}

static int64_t E(const char *type, const char *name)
{
	for (size_t i = 0; i < dt_cudnn_enums_count; i++)
		if (!strcmp(dt_cudnn_enums[i].type, type) &&
		    !strcmp(dt_cudnn_enums[i].name, name))
			return dt_cudnn_enums[i].value;
	die("no enum %s %s", type, name);
	return 0;
}

#define ATTR(n)  E("cudnnBackendAttributeName_t", "CUDNN_ATTR_" n)
#define ATYPE(n) E("cudnnBackendAttributeType_t", "CUDNN_TYPE_" n)
#define BTYPE(n) \
	E("cudnnBackendDescriptorType_t", "CUDNN_BACKEND_" n "_DESCRIPTOR")

/* One argument's value: scalars in u (or f), the rest as bytes. */
struct val {
	uint64_t u;
	double f;
	const void *data;
	uint32_t n; /* arrays: elements; 'x' 's': bytes; 'k': 4 or 8 */
};

#define U(v)      ((struct val){ .u = (uint64_t)(v) })
#define K(v)      ((struct val){ .f = (v), .n = 4 })
#define X(p, len) ((struct val){ .data = (p), .n = (uint32_t)(len) })

/* ------------------------------------------------------------ the trace */

struct gen {
	struct dt_writer *w;
	struct dt_ring *r;
	uint64_t t;   /* host clock, ns */
	uint64_t gpu; /* the GPU's clock: when it is free again */
	uint64_t seq;
	uint32_t corr;
	uint64_t next_ptr;
	int rank;
	double slow;  /* rank's slowdown of the matrix products */
	uint32_t tid; /* the thread calls are made on; 0: 100 */
	uint16_t call_flags; /* DT_CALL_* of the calls made now */
};

static void put(struct gen *g, uint16_t type, void *fixed, uint32_t size,
		const void *tail, uint32_t len)
{
	uint32_t total = dt_rec_align(size + len);
	uint8_t *p;

	/* a full ring waits for the writer: a generator loses nothing */
	while (!(p = dt_ring_try_reserve(g->r, total)))
		dt_writer_flush(g->w, 1000);
	memset(p, 0, total);
	memcpy(p, fixed, size);
	((struct dt_rec_hdr *)p)->type = type;
	((struct dt_rec_hdr *)p)->size = total;
	if (len)
		memcpy(p + size, tail, len);
	dt_ring_commit(g->r);
}

static size_t encode(uint8_t *buf, size_t cap, const char *sig,
		     const struct val *v, int n)
{
	size_t len = 0;
	int i = 0;

	for (const char *p = sig; *p && i < n; i++) {
		const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
		if (!colon)
			die("bad signature %s", sig);
		const char *c = colon + 1;
		if (*c == '>')
			c++;
		uint32_t w = 0;
		if (*c == 'p' || *c == 'e' || c[1] == '8' || c[1] == '4') {
			w = *c == 'p'   ? 8
			    : *c == 'e' ? 4
					: (uint32_t)(c[1] - '0');
			if (len + w > cap)
				die("arguments too long");
			if (*c == 'f' && w == 4) {
				float f = (float)v[i].f;
				memcpy(buf + len, &f, 4);
			} else if (*c == 'f') {
				memcpy(buf + len, &v[i].f, 8);
			} else {
				memcpy(buf + len, &v[i].u, w);
			}
			len += w;
		} else if (*c == 'k') {
			uint32_t k = v[i].n;
			memcpy(buf + len, &k, 4);
			len += 4;
			if (k == 4) {
				float f = (float)v[i].f;
				memcpy(buf + len, &f, 4);
			} else if (k == 8) {
				memcpy(buf + len, &v[i].f, 8);
			}
			len += k;
		} else if (*c == 'm') { /* pointer, mode, bytes (host) */
			int32_t mode = v[i].n ? 0 : 1;
			uint32_t k = v[i].n;
			uint8_t b[16] = { 0 };
			if (k == 4) {
				float f = (float)v[i].f;
				memcpy(b, &f, 4);
			} else if (k == 8) {
				memcpy(b, &v[i].f, 8);
			} else if (k == 16) { /* a void pointer's: FP32 here */
				float f = (float)v[i].f;
				memcpy(b, &f, 4);
			}
			if (v[i].data) /* the bytes as read */
				memcpy(b, v[i].data, k < 16 ? k : 16);
			memcpy(buf + len, &v[i].u, 8);
			memcpy(buf + len + 8, &mode, 4);
			memcpy(buf + len + 12, &k, 4);
			memcpy(buf + len + 16, b, k);
			len += 16 + k;
		} else if (*c == 'a') {
			uint32_t ew = c[1] == 'p'   ? 8
				      : c[1] == 'e' ? 4
						    : (uint32_t)(c[2] - '0');
			memcpy(buf + len, &v[i].n, 4);
			len += 4;
			memcpy(buf + len, v[i].data, v[i].n * ew);
			len += v[i].n * ew;
		} else { /* x s */
			memcpy(buf + len, &v[i].n, 4);
			len += 4;
			if (v[i].n)
				memcpy(buf + len, v[i].data, v[i].n);
			len += v[i].n;
		}
		p = comma ? comma + 1 : p + strlen(p);
	}
	if (i != n)
		die("%d arguments for %s", n, sig);
	return len;
}

/* A call of dur ns returning status; the host clock moves past it. */
static uint64_t call_s(struct gen *g, const char *name, uint64_t dur,
		       int32_t status, const struct val *v, int n)
{
	uint8_t args[4096];
	uint16_t id = api_id(name);
	size_t len = encode(args, sizeof(args), api_sigs[id], v, n);
	struct dt_rec_api_call c = { .api = id,
				     .tid = g->tid ? g->tid : 100,
				     .seq = ++g->seq,
				     .t_begin = g->t,
				     .t_end = g->t + dur,
				     .status = status,
				     .flags = g->call_flags,
				     .len = (uint32_t)len };

	put(g, DT_REC_API_CALL, &c, sizeof(c), args, (uint32_t)len);
	g->t += dur + 500;
	return c.seq;
}

#define CALL(g, name, dur, ...)                                      \
	call_s(g, name, dur, 0, (const struct val[]){ __VA_ARGS__ }, \
	       sizeof((const struct val[]){ __VA_ARGS__ }) /         \
		       sizeof(struct val))

static uint64_t ptr(struct gen *g)
{
	return g->next_ptr += 0x100;
}

/* A kernel with its launch shape: PyTorch's elementwise kernels give
 * their element count by it. */
/* Kernel k (times, correlation id, grid_x, block_x, registers, graph
 * set) on stream 7, with the rest of its launch shape; the GPU is busy
 * until it ends. */
static void put_kernel(struct gen *g, struct dt_rec_kernel *k,
		       const char *name)
{
	k->stream = 7;
	k->grid_y = k->grid_z = k->block_y = k->block_z = 1;
	k->len = (uint32_t)strlen(name);
	put(g, DT_REC_KERNEL, k, sizeof(*k), name, k->len);
	g->gpu = k->end;
}

static void kernel_grid(struct gen *g, uint64_t call, const char *name,
			uint64_t dur, int32_t grid_x, int32_t block_x,
			uint32_t registers, uint32_t corr)
{
	if (call) {
		struct dt_rec_corr c = { .call = call, .corr = corr };
		put(g, DT_REC_CORR, &c, sizeof(c), NULL, 0);
	}
	uint64_t start = g->gpu > g->t ? g->gpu : g->t;
	struct dt_rec_kernel k = { .start = start,
				   .end = start + dur,
				   .corr = corr,
				   .grid_x = grid_x,
				   .block_x = block_x,
				   .registers = registers };
	put_kernel(g, &k, name);
}

/* A kernel with its launch shape, of the fusion scenario. */
static void launch(struct gen *g, uint64_t call, const char *name, uint64_t dur,
		   int32_t grid_x, int32_t block_x)
{
	kernel_grid(g, call, name, dur, grid_x, block_x, 32, ++g->corr);
}

/* A kernel launched by call (0: none) taking dur ns on the GPU. */
static void kernel(struct gen *g, uint64_t call, const char *name, uint64_t dur)
{
	uint32_t corr = ++g->corr;

	if (!strcmp(variant, "noise")) {
		/* -3% .. +3%, the same sequence every time */
		static uint32_t x = 12345;
		x = x * 1103515245u + 12345u;
		dur = dur * (97 + (x >> 16) % 7) / 100;
	}

	kernel_grid(g, call, name, dur, 132, 256, 64, corr);
}

static void memcpy_htod(struct gen *g, uint64_t bytes, uint64_t dur)
{
	uint64_t start = g->gpu > g->t ? g->gpu : g->t;
	struct dt_rec_memcpy c = { .start = start,
				   .end = start + dur,
				   .bytes = bytes,
				   .corr = ++g->corr,
				   .stream = 7,
				   .copy_kind = 1 };
	put(g, DT_REC_MEMCPY, &c, sizeof(c), NULL, 0);
	g->gpu = start + dur;
}

/* ------------------------------------------------------------- backend */

static uint64_t bk_create(struct gen *g, int64_t type)
{
	uint64_t d = ptr(g);
	CALL(g, "cudnnBackendCreateDescriptor", 2000, U(type), U(d));
	return d;
}

static void bk_set(struct gen *g, uint64_t d, int64_t attr, int64_t type,
		   const void *data, uint32_t count, uint32_t elem)
{
	CALL(g, "cudnnBackendSetAttribute", 1000, U(d), U(attr), U(type),
	     U(count), X(data, count * elem));
}

static void bk_set1(struct gen *g, uint64_t d, int64_t attr, int64_t type,
		    int64_t value, uint32_t elem)
{
	bk_set(g, d, attr, type, &value, 1, elem);
}

static void bk_get(struct gen *g, uint64_t d, int64_t attr, int64_t type,
		   const void *data, uint32_t count, uint32_t elem)
{
	CALL(g, "cudnnBackendGetAttribute", 1500, U(d), U(attr), U(type),
	     U(count), U(count), X(data, count * elem));
}

static uint64_t bk_tensor(struct gen *g, int64_t uid, const int64_t *dims,
			  int nb, int64_t dtype)
{
	int64_t strides[8], s = 1;
	uint64_t t = bk_create(g, BTYPE("TENSOR"));

	for (int i = nb - 1; i >= 0; i--) {
		strides[i] = s;
		s *= dims[i];
	}
	bk_set1(g, t, ATTR("TENSOR_DATA_TYPE"), ATYPE("DATA_TYPE"), dtype, 4);
	bk_set(g, t, ATTR("TENSOR_DIMENSIONS"), ATYPE("INT64"), dims,
	       (uint32_t)nb, 8);
	bk_set(g, t, ATTR("TENSOR_STRIDES"), ATYPE("INT64"), strides,
	       (uint32_t)nb, 8);
	bk_set1(g, t, ATTR("TENSOR_UNIQUE_ID"), ATYPE("INT64"), uid, 8);
	bk_set1(g, t, ATTR("TENSOR_BYTE_ALIGNMENT"), ATYPE("INT64"), 16, 8);
	CALL(g, "cudnnBackendFinalize", 3000, U(t));
	return t;
}

/* The matrix product's graph: C = A B, BF16, [8,1024,1024] each. */
static uint64_t matmul_graph(struct gen *g, uint64_t handle)
{
	static const int64_t dims[] = { 8, 1024, 1024 };
	int64_t bf16 = E("cudnnDataType_t", "CUDNN_DATA_BFLOAT16");
	int64_t fp32 = E("cudnnDataType_t", "CUDNN_DATA_FLOAT");
	uint64_t a = bk_tensor(g, 1, dims, 3, bf16);
	uint64_t b = bk_tensor(g, 2, dims, 3, bf16);
	uint64_t c = bk_tensor(g, 3, dims, 3, bf16);
	uint64_t mm = bk_create(g, BTYPE("MATMUL"));

	bk_set1(g, mm, ATTR("MATMUL_COMP_TYPE"), ATYPE("DATA_TYPE"), fp32, 4);
	CALL(g, "cudnnBackendFinalize", 3000, U(mm));
	uint64_t op = bk_create(g, BTYPE("OPERATION_MATMUL"));
	bk_set(g, op, ATTR("OPERATION_MATMUL_ADESC"),
	       ATYPE("BACKEND_DESCRIPTOR"), &a, 1, 8);
	bk_set(g, op, ATTR("OPERATION_MATMUL_BDESC"),
	       ATYPE("BACKEND_DESCRIPTOR"), &b, 1, 8);
	bk_set(g, op, ATTR("OPERATION_MATMUL_CDESC"),
	       ATYPE("BACKEND_DESCRIPTOR"), &c, 1, 8);
	bk_set(g, op, ATTR("OPERATION_MATMUL_DESC"),
	       ATYPE("BACKEND_DESCRIPTOR"), &mm, 1, 8);
	CALL(g, "cudnnBackendFinalize", 4000, U(op));
	uint64_t graph = bk_create(g, BTYPE("OPERATIONGRAPH"));
	bk_set(g, graph, ATTR("OPERATIONGRAPH_HANDLE"), ATYPE("HANDLE"),
	       &handle, 1, 8);
	bk_set(g, graph, ATTR("OPERATIONGRAPH_OPS"),
	       ATYPE("BACKEND_DESCRIPTOR"), &op, 1, 8);
	CALL(g, "cudnnBackendFinalize", 20000, U(graph));
	/* programs free what the graph was built from */
	uint64_t freed[] = { a, b, c, mm, op };
	for (size_t i = 0; i < 5; i++)
		CALL(g, "cudnnBackendDestroyDescriptor", 1000, U(freed[i]));
	return graph;
}

/* A plan for the graph with one engine and a knob choice. */
static uint64_t matmul_plan(struct gen *g, uint64_t handle, uint64_t graph,
			    int64_t engine, int64_t split_k, int64_t ws)
{
	uint64_t e = bk_create(g, BTYPE("ENGINE"));
	bk_set(g, e, ATTR("ENGINE_OPERATION_GRAPH"),
	       ATYPE("BACKEND_DESCRIPTOR"), &graph, 1, 8);
	bk_set1(g, e, ATTR("ENGINE_GLOBAL_INDEX"), ATYPE("INT64"), engine, 8);
	CALL(g, "cudnnBackendFinalize", 50000, U(e));
	int32_t note = (int32_t)E("cudnnBackendNumericalNote_t",
				  "CUDNN_NUMERICAL_NOTE_TENSOR_CORE");
	bk_get(g, e, ATTR("ENGINE_NUMERICAL_NOTE"), ATYPE("NUMERICAL_NOTE"),
	       &note, 1, 4);
	uint64_t knob = bk_create(g, BTYPE("KNOB_CHOICE"));
	bk_set1(g, knob, ATTR("KNOB_CHOICE_KNOB_TYPE"), ATYPE("KNOB_TYPE"),
		E("cudnnBackendKnobType_t", "CUDNN_KNOB_TYPE_SPLIT_K"), 4);
	bk_set1(g, knob, ATTR("KNOB_CHOICE_KNOB_VALUE"), ATYPE("INT64"),
		split_k, 8);
	CALL(g, "cudnnBackendFinalize", 2000, U(knob));
	uint64_t cfg = bk_create(g, BTYPE("ENGINECFG"));
	bk_set(g, cfg, ATTR("ENGINECFG_ENGINE"), ATYPE("BACKEND_DESCRIPTOR"),
	       &e, 1, 8);
	bk_set(g, cfg, ATTR("ENGINECFG_KNOB_CHOICES"),
	       ATYPE("BACKEND_DESCRIPTOR"), &knob, 1, 8);
	CALL(g, "cudnnBackendFinalize", 5000, U(cfg));
	uint64_t plan = bk_create(g, BTYPE("EXECUTION_PLAN"));
	bk_set(g, plan, ATTR("EXECUTION_PLAN_HANDLE"), ATYPE("HANDLE"), &handle,
	       1, 8);
	bk_set(g, plan, ATTR("EXECUTION_PLAN_ENGINE_CONFIG"),
	       ATYPE("BACKEND_DESCRIPTOR"), &cfg, 1, 8);
	CALL(g, "cudnnBackendFinalize", 2000000, U(plan));
	bk_get(g, plan, ATTR("EXECUTION_PLAN_WORKSPACE_SIZE"), ATYPE("INT64"),
	       &ws, 1, 8);
	return plan;
}

static void matmul_run(struct gen *g, uint64_t handle, uint64_t plan,
		       uint64_t gpu_ns, const char *kname)
{
	static const int64_t uids[] = { 1, 2, 3 };
	uint64_t ptrs[] = { 0x7f0000000000, 0x7f0001000000, 0x7f0002000000 };
	uint64_t ws = 0x7f0003000000;
	uint64_t vp = bk_create(g, BTYPE("VARIANT_PACK"));

	bk_set(g, vp, ATTR("VARIANT_PACK_UNIQUE_IDS"), ATYPE("INT64"), uids, 3,
	       8);
	bk_set(g, vp, ATTR("VARIANT_PACK_DATA_POINTERS"), ATYPE("VOID_PTR"),
	       ptrs, 3, 8);
	bk_set(g, vp, ATTR("VARIANT_PACK_WORKSPACE"), ATYPE("VOID_PTR"), &ws, 1,
	       8);
	CALL(g, "cudnnBackendFinalize", 2000, U(vp));
	uint64_t seq =
		CALL(g, "cudnnBackendExecute", 8000, U(handle), U(plan), U(vp));
	kernel(g, seq, kname, (uint64_t)((double)gpu_ns * g->slow));
	CALL(g, "cudnnBackendDestroyDescriptor", 1000, U(vp));
}

/* -------------------------------------------------------------- legacy */

static uint64_t tensor4d(struct gen *g, int64_t fmt, int n, int c, int h, int w)
{
	uint64_t d = ptr(g);
	CALL(g, "cudnnCreateTensorDescriptor", 800, U(d));
	CALL(g, "cudnnSetTensor4dDescriptor", 900, U(d), U(fmt),
	     U(E("cudnnDataType_t", "CUDNN_DATA_FLOAT")), U(n), U(c), U(h),
	     U(w));
	return d;
}

#define K_SGEMM                                                             \
	"_Z23implicit_convolve_sgemmIffLi1024ELi5ELi5ELi3ELi3ELi3ELi1ELb0E" \
	"Lb0ELb1EEviiiPKT_iPT0_S2_18kernel_conv_paramsyiffiPKS3_S7_bbii"
#define K_NCHW2NHWC                                                       \
	"_ZN5cudnn19engines_precompiled16nchwToNhwcKernelIfffLb0ELb1EL21" \
	"cudnnKernelDataType_t0EEEvNS0_18nchw2nhwc_params_tIT1_EEPKT_PT0_"
#define K_NHWC2NCHW                                                       \
	"_ZN5cudnn19engines_precompiled16nhwcToNchwKernelIfffLb1ELb0EL21" \
	"cudnnKernelDataType_t0EEEvNS0_18nhwc2nchw_params_tIT1_EEPKT_PT0_"
#define K_RELU                                                                 \
	"_Z24op_generic_tensor_kernelILi1EfffLi256EL16cudnnGenericOp_t8EL21"   \
	"cudnnNanPropagation_t0ELi1EEv17cudnnTensorStructPT2_S2_PKT0_S2_S7_T1" \
	"_S8_S8_21cudnnActivationStruct19reducedDivisorArrayi"
#define K_GEMM_BF16                                                    \
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_" \
	"warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cudnn"
#define K_GEMM_BF16_SPLITK                                            \
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_" \
	"warpgroupsize1x1x1_execute_segment_k_on_kernel__5x_cudnn"
#define K_ATEN                                                                \
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorI" \
	"fEESt5arrayIPcLm1EEEEviT0_T1_"
#define K_NVJET "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTT"
#define K_SPLITK_REDUCE                                                 \
	"_ZN5cudnn6fusion22splitKreduction_kernelIfN7cutlass10bfloat16_tE" \
	"EEvNS0_14splitK_paramsE"
#define K_NCCL  "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"

/* Open g's writer on cfg (its file, clocks and identity; the ring 4 MiB
 * unless set) with the listing's API table, parent pid 1, and attach
 * thread 100, named thread. */
static void open_writer(struct gen *g, struct dt_writer_config *cfg,
			const char *thread)
{
	if (!cfg->ring_size)
		cfg->ring_size = 1u << 22;
	cfg->ppid = 1;
	cfg->api_names = (const char *const *)api_names;
	cfg->api_sigs = (const char *const *)api_sigs;
	cfg->api_count = n_apis;
	cfg->libraries = libraries;
	cfg->n_libraries = n_libraries;
	if (!(g->w = dt_writer_open(cfg)))
		die("%s: %s", cfg->path_template, strerror(errno));
	if (!(g->r = dt_writer_attach(g->w, 100, thread)))
		die("out of memory");
}

/* The settings of a trace of process 1000 on host, recording from
 * 2026-01-01 00:00:00 UTC (1 s on the host's clock), with these facts. */
static struct dt_writer_config
process_config(const char *path, const char *host, const char *cmdline,
	       const struct dt_kv *info, size_t n_info)
{
	return (struct dt_writer_config){
		.path_template = path,
		.start_mono = 1000000000,
		.start_real = 1767225600000000000ull,
		.info = info,
		.n_info = n_info,
		.host = host,
		.cmdline = cmdline,
		.pid = 1000,
	};
}

/* A trace's writer, the GPU and the clocks: CUPTI's is CLOCK_MONOTONIC
 * here. */
static void begin_trace(struct gen *g, const char *path, int rank, int ranks,
			const char *gpu_name, uint32_t cc_major,
			uint32_t cc_minor, uint64_t mem_bandwidth)
{
	static char rank_s[16], world[16];
	static struct dt_kv info[7];

	snprintf(rank_s, sizeof(rank_s), "%d", rank);
	snprintf(world, sizeof(world), "%d", ranks);
	info[0] = (struct dt_kv){ "env.RANK", rank_s };
	info[1] = (struct dt_kv){ "env.WORLD_SIZE", world };
	info[2] = (struct dt_kv){ "gpu", "on: CUPTI (synthetic trace)" };
	info[3] = (struct dt_kv){ "cudnn.file", "libcudnn.so.9.19.0" };
	info[4] = (struct dt_kv){ "cudnn.version", "91900" };
	info[5] = (struct dt_kv){ "cuda.driver", "13000" };
	info[6] = (struct dt_kv){ "cuda.runtime", "13000" };
	struct dt_writer_config cfg = {
		.path_template = path,
		.start_mono = 1000000000,
		.start_real = 1767225600000000000ull,
		.info = info,
		.n_info = 7,
		.host = rank ? "node2" : "node1",
		.cmdline = "python train.py --synthetic",
		.pid = 1000 + (uint32_t)rank,
	};
	open_writer(g, &cfg, "main");

	struct dt_rec_device dev = { .global_mem = 85520809984ull,
				     .mem_bandwidth = mem_bandwidth,
				     .cc_major = cc_major,
				     .cc_minor = cc_minor,
				     .sms = 132,
				     .core_clock = 1980000,
				     .l2_size = 52428800,
				     .max_threads_per_sm = 2048,
				     .len = (uint32_t)strlen(gpu_name) };
	put(g, DT_REC_DEVICE, &dev, sizeof(dev), gpu_name, dev.len);
	struct dt_rec_clock clk = { .mono = g->t,
				    .other = g->t,
				    .clock = DT_CLOCK_CUPTI };
	put(g, DT_REC_CLOCK, &clk, sizeof(clk), NULL, 0);
}

/* A one-file scenario's trace, OUT_DIR/NAME.dnnt, of one H100 process,
 * at t = 1 s; and its end. */
static void scenario_begin(struct gen *g, const char *dir, const char *name)
{
	char path[4096];

	*g = (struct gen){ .t = 1000000000, .next_ptr = 0x5000000, .slow = 1 };
	snprintf(path, sizeof(path), "%s/%s.dnnt", dir, name);
	begin_trace(g, path, 0, 1, "NVIDIA H100 80GB HBM3", 9, 0,
		    3352320000ull);
}

static void scenario_end(struct gen *g)
{
	dt_ring_detach(g->r);
	dt_writer_close(g->w, DT_END_EXIT, 0);
	dt_writer_free(g->w);
}

static void write_rank(const char *dir, int rank, int ranks, int steps)
{
	char path[4096];
	struct gen g = { .t = 1000000000,
			 .next_ptr = 0x5000000,
			 .rank = rank,
			 .slow = rank == 1 ? 1.3 : 1.0 };

	snprintf(path, sizeof(path), "%s/rank%d.dnnt", dir, rank);
	begin_trace(&g, path, rank, ranks, "NVIDIA H100 80GB HBM3", 9, 0,
		    3352320000ull);

	uint64_t handle = 0x1000;
	uint64_t seq = CALL(&g, "cudnnCreate", 300000000, U(handle));
	kernel(&g, seq, "cudnn::init_kernel", 2000);
	CALL(&g, "cudnnSetStream", 2000, U(handle), U(0x77));

	/* legacy: an FP32 convolution held to FMA math */
	int64_t nchw = E("cudnnTensorFormat_t", "CUDNN_TENSOR_NCHW");
	int64_t nhwc = E("cudnnTensorFormat_t", "CUDNN_TENSOR_NHWC");
	uint64_t x = tensor4d(&g, nchw, 32, 64, 56, 56);
	uint64_t y = tensor4d(&g, nchw, 32, 64, 56, 56);
	uint64_t xh = tensor4d(&g, nhwc, 32, 64, 56, 56);
	/* a setter that fails: a negative dimension */
	call_s(&g, "cudnnSetTensor4dDescriptor", 700,
	       (int32_t)E("cudnnStatus_t", "CUDNN_STATUS_BAD_PARAM"),
	       (const struct val[]){
		       U(y), U(nchw),
		       U(E("cudnnDataType_t", "CUDNN_DATA_FLOAT")), U(32),
		       U(-64), U(56), U(56) },
	       7);
	uint64_t w = ptr(&g);
	CALL(&g, "cudnnCreateFilterDescriptor", 800, U(w));
	CALL(&g, "cudnnSetFilter4dDescriptor", 900, U(w),
	     U(E("cudnnDataType_t", "CUDNN_DATA_FLOAT")), U(nchw), U(64), U(64),
	     U(3), U(3));
	uint64_t conv = ptr(&g);
	CALL(&g, "cudnnCreateConvolutionDescriptor", 800, U(conv));
	CALL(&g, "cudnnSetConvolution2dDescriptor", 900, U(conv), U(1), U(1),
	     U(1), U(1), U(1), U(1),
	     U(E("cudnnConvolutionMode_t", "CUDNN_CROSS_CORRELATION")),
	     U(E("cudnnDataType_t", "CUDNN_DATA_FLOAT")));
	CALL(&g, "cudnnSetConvolutionMathType", 500, U(conv),
	     U(E("cudnnMathType_t", "CUDNN_FMA_MATH")));
	uint64_t act = ptr(&g);
	CALL(&g, "cudnnCreateActivationDescriptor", 800, U(act));
	CALL(&g, "cudnnSetActivationDescriptor", 900, U(act),
	     U(E("cudnnActivationMode_t", "CUDNN_ACTIVATION_RELU")),
	     U(E("cudnnNanPropagation_t", "CUDNN_NOT_PROPAGATE_NAN")),
	     (struct val){ .f = 0 });
	/* the algorithm search runs every candidate */
	seq = CALL(&g, "cudnnFindConvolutionForwardAlgorithm", 40000000,
		   U(handle), U(x), U(w), U(conv), U(y), U(8), U(0),
		   X(NULL, 0));
	for (int i = 0; i < 4; i++)
		kernel(&g, seq, K_SGEMM, 400000 + 50000 * (uint64_t)i);

	/* backend: a BF16 matrix product, autotuned over two engines */
	uint64_t graph = matmul_graph(&g, handle);
	uint64_t p1 = matmul_plan(&g, handle, graph, 3, 1, 0);
	uint64_t p2 = matmul_plan(&g, handle, graph, 7, 4, 1 << 20);
	for (int i = 0; i < 2; i++) {
		matmul_run(&g, handle, p1, 61000, K_GEMM_BF16);
		matmul_run(&g, handle, p2, 40000, K_GEMM_BF16_SPLITK);
	}
	/* the winner's plan, built again from scratch */
	bool changed = !strcmp(variant, "changed");
	uint64_t p3 = changed ? matmul_plan(&g, handle, graph, 3, 1, 0)
			      : matmul_plan(&g, handle, graph, 7, 4, 1 << 20);

	for (int step = 0; step < steps; step++) {
		memcpy_htod(&g, 32 * 64 * 56 * 56 * 4, 80000);
		seq = CALL(&g, "cudnnTransformTensor", 9000, U(handle), K(1.0),
			   U(x), U(0x7e0000000000), K(0.0), U(xh),
			   U(0x7e0010000000));
		kernel(&g, seq, K_NCHW2NHWC, 30000);
		seq = CALL(&g, "cudnnConvolutionForward", 12000, U(handle),
			   K(1.0), U(x), U(0x7e0000000000), U(w),
			   U(0x7e0020000000), U(conv),
			   U(E("cudnnConvolutionFwdAlgo_t",
			       "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM")),
			   U(0), U(0), K(0.0), U(y), U(0x7e0030000000));
		kernel(&g, seq, K_NCHW2NHWC, 25000);
		kernel(&g, seq, K_SGEMM, changed ? 504000 : 420000);
		if (!changed) {
			seq = CALL(&g, "cudnnActivationForward", 7000,
				   U(handle), U(act), K(1.0), U(y),
				   U(0x7e0030000000), K(0.0), U(y),
				   U(0x7e0030000000));
			kernel(&g, seq, K_RELU, 45000);
		} else {
			seq = CALL(&g, "cudnnTransformTensor", 9000, U(handle),
				   K(1.0), U(xh), U(0x7e0010000000), K(0.0),
				   U(x), U(0x7e0000000000));
			kernel(&g, seq, K_NHWC2NCHW, 28000);
		}
		if (changed)
			matmul_run(&g, handle, p3, 61000, K_GEMM_BF16);
		else
			matmul_run(&g, handle, p3, 40000, K_GEMM_BF16_SPLITK);
		kernel(&g, 0, K_ATEN, 12000);
		kernel(&g, 0, K_NVJET, 90000);
		/* the all-reduce: the others wait there for a straggler */
		kernel(&g, 0, K_NCCL,
		       straggler >= 0 && rank != straggler ? 20150000 : 150000);
		g.t = g.gpu + 20000; /* the program waits for the GPU */
	}
	for (int i = 0; i < lose; i++)
		dt_writer_count_lost(g.w, DT_LOSS_FULL);
	scenario_end(&g);
}

/* ------------------------------------------------------------- fusion */

/* One trace of the fusion scenario: its GPU, and the limits it trips. */
struct fusion_case {
	const char *name;
	uint32_t cc_major, cc_minor;
	bool nhwc;
	bool fp64;         /* DOUBLE tensors (else BFLOAT16) */
	int c;             /* channels */
	int stride;        /* the backward-data convolution's */
	uint64_t misalign; /* added to the convolutions' output pointers */
};

static uint64_t tensor4d_t(struct gen *g, int64_t fmt, int64_t dtype, int n,
			   int c, int h, int w)
{
	uint64_t d = ptr(g);
	CALL(g, "cudnnCreateTensorDescriptor", 800, U(d));
	CALL(g, "cudnnSetTensor4dDescriptor", 900, U(d), U(fmt), U(dtype), U(n),
	     U(c), U(h), U(w));
	return d;
}

/* PyTorch's kernel names, with the element type T ("N3c108BFloat16E" or
 * "d") in them as its templates have it. */
static const char *kname(const char *fmt, const char *t)
{
	static char buf[8][400];
	static int k;
	char *b = buf[k++ % 8];
	snprintf(b, sizeof(buf[0]), fmt, t);
	return b;
}

#define K_FILL_BF16                                             \
	"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_" \
	"11FillFunctorIN3c"                                     \
	"108BFloat16EEESt5arrayIPcLm1EEEEviT0_T1_"
#define K_STEP_LONG                                                            \
	"_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_21CUDAFunctorOn" \
	"Self_addIlEESt5arrayIPcLm2EEEEviT0_T1_"
#define K_BIAS                                                                \
	"_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_" \
	"nocastINS0_15CUDAFunctor_addI%sEEEEvRNS_18TensorIteratorBaseERKT_EU" \
	"liE_EEviT1_"
#define K_ADDV                                                                \
	"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_" \
	"add"                                                                 \
	"I%sEESt5arrayIPcLm3EEEEviT0_T1_"
#define K_CLAMP                                                                \
	"_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_49_GLOBAL__"  \
	"N__"                                                                  \
	"d2ba64fb_16_TensorCompare_cu_71e06f4e19launch_clamp_scalarERNS_"      \
	"18Tens"                                                               \
	"orIteratorBaseEN3c106ScalarES6_NS0_6detail11ClampLimitsEENKUlvE_clEv" \
	"ENKUlvE5_clEvEUlI%sE_St5arrayIPcLm2EEEEviT0_T1_"
#define K_THRESHOLD                                                            \
	"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctor" \
	"I%sZNS0_67_GLOBAL__N__06c19b41_28_ActivationThresholdKernel_cu"       \
	"_751192d7_1581121threshold_kernel_implIS4_EEvRNS_18TensorIteratorBa"  \
	"seERKNS_6ScalarESB_EUlS4_S4_E_EESt5arrayIPcLm3EEEEviT0_T1_"
#define K_GELU                                                                 \
	"_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_"             \
	"18GeluCUDAKer"                                                        \
	"nelImplERNS_18TensorIteratorBaseENS0_8GeluTypeEENKUlvE0_clEvENKUlvE2" \
	"_clEvEUlI%sE_St5arrayIPcLm2EEEEviT0_T1_"
#define K_GEMM_BIAS "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"

static void write_fusion(const char *dir, const struct fusion_case *fc,
			 int steps)
{
	char path[4096], gpu[64];
	struct gen g = { .t = 1000000000, .next_ptr = 0x5000000, .slow = 1 };
	const char *T = fc->fp64 ? "d" : "N3c108BFloat16E";
	const char *T3 = fc->fp64 ? "ddd" : "N3c108BFloat16ES4_S4_";
	const char *cl = fc->nhwc ? "_channels_last" : "";
	int64_t dtype = E("cudnnDataType_t", fc->fp64 ? "CUDNN_DATA_DOUBLE"
						      : "CUDNN_DATA_BFLOAT16");
	int64_t fmt = E("cudnnTensorFormat_t",
			fc->nhwc ? "CUDNN_TENSOR_NHWC" : "CUDNN_TENSOR_NCHW");
	int32_t elems = 32 * fc->c * 56 * 56;
	char stats[200], apply[200], bwd_reduce[200], bwd_elemt[200];

	snprintf(path, sizeof(path), "%s/%s.dnnt", dir, fc->name);
	snprintf(gpu, sizeof(gpu), "synthetic GPU sm_%u%u", fc->cc_major,
		 fc->cc_minor);
	begin_trace(&g, path, 0, 1, gpu, fc->cc_major, fc->cc_minor,
		    3352320000ull);
	snprintf(stats, sizeof(stats),
		 "_ZN2at6native50batch_norm_collect_statistics%s_kernelINS0_"
		 "3VarEI%sEfLi4EEEvPKT0_PT1_S9_PVS8_PiiiS8_",
		 cl, T);
	snprintf(apply, sizeof(apply),
		 "_ZN2at6native47batch_norm_transform_input%s_kernelI%sEffLi4E"
		 "EEvPKT_S6_PKT0_S9_PKT1_SC_PS4_iib",
		 cl, T);
	snprintf(bwd_reduce, sizeof(bwd_reduce),
		 "_ZN2at6native47batch_norm_backward_reduce%s_kernelILi4EI%sE"
		 "ffEEvPKT0_S6_PKT1_S9_PS7_SA_PT2_SC_PVS7_Piii",
		 cl, T);
	snprintf(bwd_elemt, sizeof(bwd_elemt),
		 "_ZN2at6native46batch_norm_backward_elemt%s_kernelILi4EI%sEffE"
		 "EvPKT0_S6_PKT1_S9_PKT2_S9_S9_PS4_S7_ii",
		 cl, T);

	uint64_t handle = 0x1000;
	CALL(&g, "cudnnCreate", 1000000, U(handle));
	uint64_t x = tensor4d_t(&g, fmt, dtype, 32, fc->c, 56, 56);
	uint64_t y = tensor4d_t(&g, fmt, dtype, 32, fc->c, 56, 56);
	uint64_t dxd = tensor4d_t(&g, fmt, dtype, 32, fc->c, 56 * fc->stride,
				  56 * fc->stride);
	uint64_t bias = tensor4d_t(&g, fmt, dtype, 1, fc->c, 1, 1);
	uint64_t w = ptr(&g);
	CALL(&g, "cudnnCreateFilterDescriptor", 800, U(w));
	CALL(&g, "cudnnSetFilter4dDescriptor", 900, U(w), U(dtype), U(fmt),
	     U(fc->c), U(fc->c), U(3), U(3));
	uint64_t conv = ptr(&g), dconv = ptr(&g);
	int64_t xcorr = E("cudnnConvolutionMode_t", "CUDNN_CROSS_CORRELATION");
	int64_t comp = E("cudnnDataType_t",
			 fc->fp64 ? "CUDNN_DATA_DOUBLE" : "CUDNN_DATA_FLOAT");
	CALL(&g, "cudnnCreateConvolutionDescriptor", 800, U(conv));
	CALL(&g, "cudnnSetConvolution2dDescriptor", 900, U(conv), U(1), U(1),
	     U(1), U(1), U(1), U(1), U(xcorr), U(comp));
	CALL(&g, "cudnnCreateConvolutionDescriptor", 800, U(dconv));
	CALL(&g, "cudnnSetConvolution2dDescriptor", 900, U(dconv), U(1), U(1),
	     U(fc->stride), U(fc->stride), U(1), U(1), U(xcorr), U(comp));
	uint64_t act = ptr(&g);
	CALL(&g, "cudnnCreateActivationDescriptor", 800, U(act));
	CALL(&g, "cudnnSetActivationDescriptor", 900, U(act),
	     U(E("cudnnActivationMode_t", "CUDNN_ACTIVATION_RELU")),
	     U(E("cudnnNanPropagation_t", "CUDNN_NOT_PROPAGATE_NAN")),
	     (struct val){ .f = 0 });
	int64_t algo = E("cudnnConvolutionFwdAlgo_t",
			 "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM");
	uint64_t px = 0x7e0000000000, pw = 0x7e0010000000,
		 py = 0x7e0020000000 + fc->misalign,
		 py2 = 0x7e0030000000 + fc->misalign, pb = 0x7e0040000000,
		 pdy = 0x7e0050000000, pdx = 0x7e0060000000,
		 pp = 0x7e0070000000, pz = 0x7e0080000000;
	const char *kconv = "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_"
			    "f32_nhwckrsc_nhwc_kernel__5x_cudnn";

	for (int step = 0; step < steps; step++) {
		/* convolution, bias, ReLU: three kernels */
		uint64_t seq =
			CALL(&g, "cudnnConvolutionForward", 9000, U(handle),
			     K(1.0), U(x), U(px), U(w), U(pw), U(conv), U(algo),
			     U(0), U(0), K(0.0), U(y), U(py));
		launch(&g, seq, kconv, 46000, 15, 384);
		launch(&g, 0, K_FILL_BF16, 900, 1, 128);
		launch(&g, 0, kname(K_BIAS, T), 31000, elems / 512, 128);
		launch(&g, 0, kname(K_CLAMP, T), 11000, elems / 1024, 128);

		/* convolution, then PyTorch's batch norm, residual add, ReLU */
		seq = CALL(&g, "cudnnConvolutionForward", 9000, U(handle),
			   K(1.0), U(x), U(py), U(w), U(pw), U(conv), U(algo),
			   U(0), U(0), K(0.0), U(y), U(py2));
		launch(&g, seq, kconv, 46000, 15, 384);
		launch(&g, 0, K_STEP_LONG, 800, 1, 128);
		launch(&g, 0, K_FILL_BF16, 700, 1, 128);
		launch(&g, 0, stats, 40000, 132, 512);
		launch(&g, 0,
		       "_ZN2at6native49_GLOBAL__N__0edc5583_16_Normalizat"
		       "ion_cu_5c38458745unrolled_elementwise_kernel_for_m"
		       "ulti_outputsILi3EZZZNS1_34batch_norm_update_stats_"
		       "and_invert",
		       2000, 1, 128);
		launch(&g, 0, apply, 20000, 132, 512);
		launch(&g, 0, kname(K_ADDV, T), 16000, elems / 1024, 128);
		launch(&g, 0, kname(K_CLAMP, T), 11000, elems / 1024, 128);

		/* backward: ReLU backward, batch norm backward */
		launch(&g, 0, kname(K_THRESHOLD, T3), 16000, elems / 1024, 128);
		launch(&g, 0, bwd_reduce, 35000, 132, 512);
		launch(&g, 0, bwd_elemt, 37000, 132, 512);

		/* a cuBLAS matmul and GELU */
		launch(&g, 0, K_GEMM_BIAS, 99000, 2, 384);
		launch(&g, 0, kname(K_GELU, T), 45000, 32768, 128);

		/* cuDNN pointwise calls on one buffer */
		seq = CALL(&g, "cudnnAddTensor", 7000, U(handle), K(1.0),
			   U(bias), U(pb), K(1.0), U(y), U(pp));
		launch(&g, seq, K_RELU, 20000, elems / 1024, 128);
		seq = CALL(&g, "cudnnActivationForward", 7000, U(handle),
			   U(act), K(1.0), U(y), U(pp), K(0.0), U(y), U(pp));
		launch(&g, seq, K_RELU, 11000, elems / 1024, 128);

		/* backward data (strided or not), then ReLU backward */
		seq = CALL(&g, "cudnnConvolutionBackwardData", 9000, U(handle),
			   K(1.0), U(w), U(pw), U(y), U(pdy), U(dconv),
			   U(E("cudnnConvolutionBwdDataAlgo_t",
			       "CUDNN_CONVOLUTION_BWD_DATA_ALGO_1")),
			   U(0), U(0), K(0.0), U(dxd), U(pdx));
		launch(&g, seq,
		       "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_"
		       "nhwckrsc_nhwc_kernel__5x_cudnn",
		       50000, 15, 384);
		launch(&g, 0, kname(K_THRESHOLD, T3), 16000,
		       elems * fc->stride * fc->stride / 1024, 128);

		/* already fused: convolution, bias and ReLU in one call */
		seq = CALL(&g, "cudnnConvolutionBiasActivationForward", 9000,
			   U(handle), K(1.0), U(x), U(px), U(w), U(pw), U(conv),
			   U(algo), U(0), U(0), K(0.0), U(y), U(pz), U(bias),
			   U(pb), U(act), U(y), U(pz));
		launch(&g, seq, kconv, 52000, 15, 384);
		g.t = g.gpu + 20000;
	}
	scenario_end(&g);
}

/* Every fusion pattern, once where it may run fused and once for each
 * limit that blocks it. */
/* The churn scenario: many threads creating, setting and destroying
 * descriptors, legacy and backend, as a framework's dispatcher does; no
 * GPU work. Each thread's step is 11 calls. */
static void write_churn(const char *dir, int steps, int threads)
{
	char path[4096];
	struct gen g = { .t = 1000000000, .next_ptr = 0x5000000 };
	int64_t nchw = E("cudnnTensorFormat_t", "CUDNN_TENSOR_NCHW");
	int64_t flt = E("cudnnDataType_t", "CUDNN_DATA_FLOAT");
	int64_t bf16 = E("cudnnDataType_t", "CUDNN_DATA_BFLOAT16");
	int64_t tensor = BTYPE("TENSOR"), i64 = ATYPE("INT64");
	int64_t dims[4] = { 32, 64, 56, 56 },
		strides[4] = { 200704, 1, 3584, 64 };

	snprintf(path, sizeof(path), "%s/churn.dnnt", dir);
	begin_trace(&g, path, 0, 1, "NVIDIA H100 80GB HBM3", 9, 0,
		    3352320000ull);
	for (int s = 0; s < steps; s++)
		for (int t = 0; t < threads; t++) {
			/* each thread's descriptors come back to the same
			 * addresses, as malloc hands them out */
			uint64_t d = 0x7f0000000000ull + (uint64_t)t * 0x10000;
			g.tid = 2000 + (uint32_t)t;
			dims[0] = 1 + (s + t) % 64; /* a few shapes */
			CALL(&g, "cudnnCreateTensorDescriptor", 300, U(d));
			CALL(&g, "cudnnSetTensor4dDescriptor", 400, U(d),
			     U(nchw), U(flt), U(dims[0]), U(64), U(56), U(56));
			CALL(&g, "cudnnDestroyTensorDescriptor", 200, U(d));
			uint64_t b = d + 0x100;
			CALL(&g, "cudnnBackendCreateDescriptor", 500, U(tensor),
			     U(b));
			bk_set1(&g, b, ATTR("TENSOR_DATA_TYPE"),
				ATYPE("DATA_TYPE"), bf16, 4);
			bk_set(&g, b, ATTR("TENSOR_DIMENSIONS"), i64, dims, 4,
			       8);
			bk_set(&g, b, ATTR("TENSOR_STRIDES"), i64, strides, 4,
			       8);
			bk_set1(&g, b, ATTR("TENSOR_UNIQUE_ID"), i64, 100 + t,
				8);
			bk_set1(&g, b, ATTR("TENSOR_BYTE_ALIGNMENT"), i64, 16,
				8);
			CALL(&g, "cudnnBackendFinalize", 800, U(b));
			CALL(&g, "cudnnBackendDestroyDescriptor", 300, U(b));
		}
	scenario_end(&g);
}

/* --------------------------------------------------------- CUDA graphs */

/* A node call made in graph `graph` (index idx), the way the recorder
 * writes it right after the call's record. */
static void graph_node(struct gen *g, uint64_t call, uint32_t graph,
		       uint32_t idx, uint32_t how, const char *kname)
{
	struct dt_rec_graph_node r = { .t = g->t,
				       .call = call,
				       .node = (uint64_t)graph << 32 | idx,
				       .graph_handle = 0xa000 + graph,
				       .graph = graph,
				       .how = how,
				       .len = (uint32_t)strlen(kname) };
	put(g, DT_REC_GRAPH_NODE, &r, sizeof(r), kname, r.len);
}

static void put_link(struct gen *g, uint32_t how, uint32_t from, uint32_t to,
		     uint32_t parent, uint32_t idx, uint32_t first)
{
	struct dt_rec_graph_link r = { .t = g->t,
				       .node = (uint64_t)parent << 32 | idx,
				       .from = from,
				       .to = to,
				       .how = how,
				       .parent = parent,
				       .first = first };
	put(g, DT_REC_GRAPH_LINK, &r, sizeof(r), NULL, 0);
	g->t += 10000;
}

/* Graph or executable `to` made from `from` (a child graph: of node idx
 * of parent). */
static void graph_link(struct gen *g, uint32_t how, uint32_t from,
		       uint32_t to, uint32_t parent, uint32_t idx)
{
	put_link(g, how, from, to, parent, idx, 0);
}

/* Executable `exec` runs child graph `child` (of node idx of parent) as
 * its nodes first, first + 1, ... */
static void graph_layout(struct gen *g, uint32_t child, uint32_t exec,
			 uint32_t parent, uint32_t idx, uint32_t first)
{
	put_link(g, DT_GRAPH_EXEC_CHILD, child, exec, parent, idx, first);
}

/* A launch of executable `exec`: its GRAPH_LAUNCH record, then a kernel
 * for each of n nodes (index, name); returns its correlation id. */
static uint32_t graph_launch(struct gen *g, uint32_t exec, int n,
			     const uint32_t *idx, const char *const *names)
{
	struct dt_rec_graph_launch l = { .start = g->t,
					 .end = g->t + 4000,
					 .corr = ++g->corr,
					 .tid = 100,
					 .cbid = 311 };
	put(g, DT_REC_GRAPH_LAUNCH, &l, sizeof(l), NULL, 0);
	for (int i = 0; i < n; i++) {
		/* a GPU that idles starts the first kernel 3 us into the
		 * launch call */
		uint64_t start = g->gpu > g->t + 3000 ? g->gpu : g->t + 3000;
		struct dt_rec_kernel k = {
			.start = start,
			.end = start + 20000,
			.corr = l.corr,
			.grid_x = 132,
			.block_x = 256,
			.registers = 64,
			.graph_id = exec,
			.graph_node = (uint64_t)exec << 32 | idx[i],
		};
		put_kernel(g, &k, names[i]);
	}
	g->t += 50000;
	return l.corr;
}

/* A matrix product run, or put into a CUDA graph: the call with a fresh
 * variant pack (out: the output pointer), no kernel; returns its seq.
 * graph: 0 for cudnnBackendExecute, else the graph handle of
 * cudnnBackendPopulateCudaGraph / UpdateCudaGraph. */
static uint64_t matmul_call(struct gen *g, const char *api, uint64_t handle,
			    uint64_t plan, uint64_t out, uint64_t graph)
{
	static const int64_t uids[] = { 1, 2, 3 };
	uint64_t ptrs[] = { 0x7f0000000000, 0x7f0001000000, out };
	uint64_t ws = 0x7f0003000000;
	uint64_t vp = bk_create(g, BTYPE("VARIANT_PACK"));
	uint64_t seq;

	bk_set(g, vp, ATTR("VARIANT_PACK_UNIQUE_IDS"), ATYPE("INT64"), uids, 3,
	       8);
	bk_set(g, vp, ATTR("VARIANT_PACK_DATA_POINTERS"), ATYPE("VOID_PTR"),
	       ptrs, 3, 8);
	bk_set(g, vp, ATTR("VARIANT_PACK_WORKSPACE"), ATYPE("VOID_PTR"), &ws, 1,
	       8);
	CALL(g, "cudnnBackendFinalize", 2000, U(vp));
	if (graph)
		seq = CALL(g, api, 9000, U(handle), U(plan), U(vp), U(graph));
	else
		seq = CALL(g, api, 9000, U(handle), U(plan), U(vp));
	CALL(g, "cudnnBackendDestroyDescriptor", 1000, U(vp));
	return seq;
}

/*
 * Every way a cuDNN op gets into a CUDA graph and out again, for the
 * tests of replay attribution: stream capture; a clone; cuDNN populating
 * a graph; that graph as a child of another, then updated; one capture
 * with nodes from calls on two threads; an executable updated to run a
 * new capture; replays whose kernels come before the capture in the
 * file; and the cases that must stay unattributed (a node whose
 * kernel differs, an executable the trace never saw made) or partial (a
 * launch whose second kernel is missing).
 */
static void write_graphs(const char *dir, int steps, int threads)
{
	(void)steps, (void)threads;
	struct gen g;
	const uint32_t i0[] = { 0 }, i01[] = { 0, 1 }, i1[] = { 1 },
		       i012[] = { 0, 1, 2 };
	const char *const mm_aten[] = { K_GEMM_BF16, K_ATEN };
	const char *const mm[] = { K_GEMM_BF16 };
	const char *const mm_splitk[] = { K_GEMM_BF16, K_GEMM_BF16_SPLITK,
					  K_SPLITK_REDUCE };
	const char *const nvjet[] = { K_NVJET };

	scenario_begin(&g, dir, "graphs");
	uint64_t handle = 0x1000;
	uint64_t seq = CALL(&g, "cudnnCreate", 300000, U(handle));
	kernel(&g, seq, "cudnn::init_kernel", 2000);
	uint64_t graph = matmul_graph(&g, handle);
	uint64_t plan = matmul_plan(&g, handle, graph, 3, 1, 0);

	/* eagerly, twice */
	for (int i = 0; i < 2; i++)
		matmul_run(&g, handle, plan, 40000, K_GEMM_BF16);

	/* captured (graph 1: the product, then a framework kernel), made
	 * executable 2, launched 3 times */
	seq = matmul_call(&g, "cudnnBackendExecute", handle, plan,
			  0x7f0002000000, 0);
	graph_node(&g, seq, 1, 0, DT_GRAPH_CAPTURED, K_GEMM_BF16);
	graph_link(&g, DT_GRAPH_INSTANTIATED, 1, 2, 0, 0);
	for (int i = 0; i < 3; i++)
		graph_launch(&g, 2, 2, i01, mm_aten);
	/* a clone of it, made executable 4, launched once */
	graph_link(&g, DT_GRAPH_CLONED, 1, 3, 0, 0);
	graph_link(&g, DT_GRAPH_INSTANTIATED, 3, 4, 0, 0);
	graph_launch(&g, 4, 2, i01, mm_aten);

	/* populated by cuDNN (graph 5), executable 6, launched twice */
	seq = matmul_call(&g, "cudnnBackendPopulateCudaGraph", handle, plan,
			  0x7f0004000000, 0xa005);
	graph_node(&g, seq, 5, 0, DT_GRAPH_POPULATED, K_GEMM_BF16);
	graph_link(&g, DT_GRAPH_INSTANTIATED, 5, 6, 0, 0);
	for (int i = 0; i < 2; i++)
		graph_launch(&g, 6, 1, i0, mm);
	/* graph 5 as child 8 of graph 7 (node 0), executable 9, where the
	 * child's node comes after graph 7's one node; launched twice, then
	 * updated to another output and launched twice more */
	graph_link(&g, DT_GRAPH_CHILD, 5, 8, 7, 0);
	graph_link(&g, DT_GRAPH_INSTANTIATED, 7, 9, 0, 0);
	/* after the parent's one node */
	graph_layout(&g, 8, 9, 7, 0, 1);
	for (int i = 0; i < 2; i++)
		graph_launch(&g, 9, 1, i1, mm);
	seq = matmul_call(&g, "cudnnBackendUpdateCudaGraph", handle, plan,
			  0x7f0005000000, 0xa008);
	graph_node(&g, seq, 8, 0, DT_GRAPH_UPDATED, K_GEMM_BF16);
	for (int i = 0; i < 2; i++)
		graph_launch(&g, 9, 1, i1, mm);

	/* one capture (graph 10) with nodes from each of two threads (a
	 * split-K product has two kernels), executable 11, launched twice */
	g.tid = 200;
	seq = matmul_call(&g, "cudnnBackendExecute", handle, plan,
			  0x7f0006000000, 0);
	graph_node(&g, seq, 10, 0, DT_GRAPH_CAPTURED, K_GEMM_BF16);
	g.tid = 300;
	uint64_t plan2 = matmul_plan(&g, handle, graph, 5, 4, 1 << 20);
	seq = matmul_call(&g, "cudnnBackendExecute", handle, plan2,
			  0x7f0007000000, 0);
	graph_node(&g, seq, 10, 1, DT_GRAPH_CAPTURED, K_GEMM_BF16_SPLITK);
	graph_node(&g, seq, 10, 2, DT_GRAPH_CAPTURED, K_SPLITK_REDUCE);
	g.tid = 0;
	graph_link(&g, DT_GRAPH_INSTANTIATED, 10, 11, 0, 0);
	for (int i = 0; i < 2; i++)
		graph_launch(&g, 11, 3, i012, mm_splitk);

	/* executable 2 updated to run a new capture (graph 12) */
	seq = matmul_call(&g, "cudnnBackendExecute", handle, plan,
			  0x7f0008000000, 0);
	graph_node(&g, seq, 12, 0, DT_GRAPH_CAPTURED, K_GEMM_BF16);
	graph_link(&g, DT_GRAPH_EXEC_UPDATED, 12, 2, 0, 0);
	graph_launch(&g, 2, 1, i0, mm);

	/* a capture (graph 13, executable 14) replayed twice by a program
	 * that then exits: the file holds the replays' kernels (drained
	 * from CUPTI's thread) before the records of the capture and the
	 * instantiation (drained from the program's) */
	uint64_t t_capture = g.t;
	g.t += 1000000;
	for (int i = 0; i < 2; i++)
		graph_launch(&g, 14, 1, i0, mm);
	uint64_t t_replayed = g.t;
	g.t = t_capture;
	seq = matmul_call(&g, "cudnnBackendExecute", handle, plan,
			  0x7f0009000000, 0);
	graph_node(&g, seq, 13, 0, DT_GRAPH_CAPTURED, K_GEMM_BF16);
	graph_link(&g, DT_GRAPH_INSTANTIATED, 13, 14, 0, 0);
	g.t = t_replayed;

	/* what stays unattributed or partial */
	graph_launch(&g, 4, 1, i0, nvjet);  /* not the node's kernel */
	graph_launch(&g, 99, 1, i0, mm);    /* an executable never made */
	graph_launch(&g, 11, 2, i01, mm_splitk); /* a kernel lost */

	scenario_end(&g);
}

/* The threads scenario (OUT_DIR/threads.dnnt): a plan built on one
 * thread and executed on another, whose records reach the file first (each
 * thread writes its own buffer): the executions come before the finalize
 * that built their plan, in file order though not in time. */
static void write_threads(const char *dir, int steps, int threads)
{
	(void)steps, (void)threads;
	struct gen g;

	scenario_begin(&g, dir, "threads");
	uint64_t handle = 0x1000;
	uint64_t seq = CALL(&g, "cudnnCreate", 300000, U(handle));
	kernel(&g, seq, "cudnn::init_kernel", 2000);
	dt_writer_flush(g.w, 1000);

	/* the executing thread's calls, 10 ms and 1000 calls on, first; the
	 * plan will be the builder's tenth descriptor */
	uint64_t t0 = g.t, s0 = g.seq, plan = 0x7000000 + 10 * 0x100;
	struct dt_ring *builder = dt_writer_attach(g.w, 101, "builder");
	if (!builder)
		die("out of memory");
	g.t += 10000000;
	g.seq += 1000;
	for (int i = 0; i < 3; i++)
		matmul_run(&g, handle, plan, 400000, K_GEMM_BF16);
	dt_writer_flush(g.w, 1000);
	uint64_t t1 = g.t, s1 = g.seq;

	/* then the builder's, made before them */
	struct dt_ring *executor = g.r;
	g.r = builder;
	g.tid = 101;
	g.t = t0;
	g.seq = s0;
	g.next_ptr = 0x7000000;
	uint64_t graph = matmul_graph(&g, handle);
	uint64_t built = matmul_plan(&g, handle, graph, 3, 1, 0);
	if (built != plan || g.seq >= s0 + 1000 || g.t >= t0 + 10000000)
		die("threads: the plan is not where the executions expect it "
		    "(%#" PRIx64 ", seq %" PRIu64 ")", built, g.seq);
	g.r = executor;
	g.tid = 0;
	g.t = t1;
	g.seq = s1;
	CALL(&g, "cudnnDestroy", 1000, U(handle));

	dt_ring_detach(builder);
	scenario_end(&g);
}

static void metrics_kernels(struct gen *g, uint64_t t)
{
	struct dt_rec_kernel mm = { .start = t,
				    .end = t + 200000,
				    .corr = ++g->corr,
				    .grid_x = 132,
				    .block_x = 256,
				    .registers = 64 };
	put_kernel(g, &mm, K_NVJET);
	struct dt_rec_kernel fill = { .start = t + 200000,
				      .end = t + 300000,
				      .corr = ++g->corr,
				      .grid_x = 132,
				      .block_x = 256,
				      .registers = 32 };
	put_kernel(g, &fill, K_ATEN);
}

/* Four 100 us samples from t: bytes read and written. */
static void metrics_samples(struct gen *g, uint64_t t)
{
	static const double v[4][2] = {
		{ 1e8, 5e7 }, { 1e8, 5e7 }, { 0, 2.5e7 }, { 0, 0 }
	};
	for (int k = 0; k < 4; k++) {
		struct dt_rec_gpu_sample smp = {
			.start = t + (uint64_t)k * 100000,
			.end = t + (uint64_t)(k + 1) * 100000,
			.len = sizeof(v[k]),
		};
		put(g, DT_REC_GPU_SAMPLE, &smp, sizeof(smp), v[k],
		    sizeof(v[k]));
	}
}

/* The metrics scenario (OUT_DIR/metrics.dnnt): GPU counters sampled every
 * 100 us over `steps` steps of a 200 us matrix product (cuBLAS' name, no
 * cuDNN call) moving 1 GB/ms read and 0.5 GB/ms written, then a 100 us
 * ATen fill moving 0.25 GB/ms written, then 100 us of idle GPU that moves
 * nothing. Each step's product reads 2e8 bytes and writes 1e8, the fill
 * writes 2.5e7. */
static void write_metrics(const char *dir, int steps, int threads)
{
	(void)threads;
	struct gen g;
	const char names[] = "dram__bytes_read.sum\ndram__bytes_write.sum";

	scenario_begin(&g, dir, "metrics");
	uint64_t handle = 0x1000;
	CALL(&g, "cudnnCreate", 300000, U(handle));
	struct dt_rec_gpu_metrics m = { .t = g.t,
					.interval = 100000,
					.metrics = 2,
					.len = sizeof(names) - 1 };
	put(&g, DT_REC_GPU_METRICS, &m, sizeof(m), names, m.len);
	uint64_t t = g.t + 1000000;
	/* samples and kernels reach a trace in either order: odd steps
	 * have their samples first */
	for (int i = 0; i < steps; i++, t += 400000)
		for (int part = 0; part < 2; part++) {
			if (part == i % 2)
				metrics_kernels(&g, t);
			else
				metrics_samples(&g, t);
		}
	g.t = t;
	CALL(&g, "cudnnDestroy", 1000, U(handle));
	scenario_end(&g);
}

/* A KERNEL_LIB record: the kernels named (NULL-ended) registered by the
 * library at path. */
static void kernel_lib(struct gen *g, const char *path,
		       const char *const *names)
{
	uint8_t tail[8 * 8 + 256];
	struct dt_rec_kernel_lib r = { .path_len = (uint32_t)strlen(path) };

	for (; names[r.count]; r.count++) {
		uint64_t h = dt_hash(names[r.count], strlen(names[r.count]), 0);
		memcpy(tail + r.count * 8, &h, 8);
	}
	memcpy(tail + r.count * 8, path, r.path_len);
	r.len = r.count * 8 + r.path_len;
	put(g, DT_REC_KERNEL_LIB, &r, sizeof(r), tail, r.len);
}

/* The modules scenario (OUT_DIR/modules.dnnt): kernels whose library the
 * library that registered them says. Each step runs, for 100 us each: a
 * kernel whose name says nothing, registered by libggml-cuda.so (ggml, by
 * the library); ggml's rms_norm, registered by it too (ggml, by the
 * library); an ATen kernel registered by a library of no known name (ATen,
 * by the name); an unregistered kernel of no known name (not attributed);
 * and a kernel registered by libtorch_cuda.so only after its first step
 * (not attributed once, then ATen by the library). */
static void write_modules(const char *dir, int steps, int threads)
{
	(void)threads;
	static const char k_plain[] = "_Z13my_matvec_kernPKfPf";
	static const char k_rms[] = "_Z12rms_norm_f32ILi1024EEvPKfPfifff";
	static const char k_aten[] =
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
		"11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";
	static const char k_none[] = "_Z11mystery_onev";
	static const char k_late[] = "_Z9late_kernPf";
	static const char *const ggml[] = { k_plain, k_rms, NULL };
	static const char *const ext[] = { k_aten, NULL };
	static const char *const torch[] = { k_late, NULL };
	struct gen g;

	scenario_begin(&g, dir, "modules");
	uint64_t handle = 0x1000;
	CALL(&g, "cudnnCreate", 300000, U(handle));
	kernel_lib(&g, "/opt/llama/lib/libggml-cuda.so", ggml);
	kernel_lib(&g, "/opt/ext/libmyext.so", ext);
	for (int i = 0; i < steps; i++) {
		if (i == 1)
			kernel_lib(&g, "/opt/torch/lib/libtorch_cuda.so", torch);
		kernel(&g, 0, k_plain, 100000);
		kernel(&g, 0, k_rms, 100000);
		kernel(&g, 0, k_aten, 100000);
		kernel(&g, 0, k_none, 100000);
		kernel(&g, 0, k_late, 100000);
		g.t = g.gpu;
	}
	CALL(&g, "cudnnDestroy", 1000, U(handle));
	scenario_end(&g);
}

/* A handle (its creation's kernel too), a tensor and a ReLU's
 * descriptor, for the scenarios that run ReLUs. */
static void relu_setup(struct gen *g, uint64_t handle, uint64_t *y,
		       uint64_t *act)
{
	uint64_t seq = CALL(g, "cudnnCreate", 300000, U(handle));
	kernel(g, seq, "cudnn::init_kernel", 2000);
	int64_t nchw = E("cudnnTensorFormat_t", "CUDNN_TENSOR_NCHW");
	*y = tensor4d(g, nchw, 32, 64, 56, 56);
	*act = ptr(g);
	CALL(g, "cudnnCreateActivationDescriptor", 800, U(*act));
	CALL(g, "cudnnSetActivationDescriptor", 900, U(*act),
	     U(E("cudnnActivationMode_t", "CUDNN_ACTIVATION_RELU")),
	     U(E("cudnnNanPropagation_t", "CUDNN_NOT_PROPAGATE_NAN")),
	     (struct val){ .f = 0 });
}

/* The exit scenario (OUT_DIR/exit.dnnt): a program whose last calls, at
 * its exit 5 s after its last op, reach the file before that op's kernel,
 * as CUPTI's last records do: steps ReLUs of 45 us, each its own kernel;
 * the last kernel is read after cudnnDestroy. */
static void write_exit(const char *dir, int steps, int threads)
{
	(void)threads;
	struct gen g;

	scenario_begin(&g, dir, "exit");
	uint64_t handle = 0x1000, y, act, seq;
	relu_setup(&g, handle, &y, &act);
	struct dt_rec_kernel last = { 0 };
	for (int i = 0; i < steps; i++) {
		seq = CALL(&g, "cudnnActivationForward", 7000, U(handle),
			   U(act), K(1.0), U(y), U(0x7e0030000000), K(0.0),
			   U(y), U(0x7e0030000000));
		if (i < steps - 1) {
			kernel(&g, seq, K_RELU, 45000);
			g.t = g.gpu;
			continue;
		}
		struct dt_rec_corr c = { .call = seq, .corr = ++g.corr };
		put(&g, DT_REC_CORR, &c, sizeof(c), NULL, 0);
		uint64_t start = g.gpu > g.t ? g.gpu : g.t;
		last = (struct dt_rec_kernel){ .start = start,
					       .end = start + 45000,
					       .corr = c.corr,
					       .grid_x = 132,
					       .block_x = 256,
					       .registers = 64 };
	}
	g.t += 5000000000ull; /* the program's teardown */
	CALL(&g, "cudnnDestroy", 1000, U(handle));
	put_kernel(&g, &last, K_RELU);
	scenario_end(&g);
}

/* The startup scenario (OUT_DIR/startup.dnnt): a program that compiles
 * before it runs, as torch.compile does: weights loaded (a 2 ms copy),
 * then three 1 s pauses of the host, each followed by a one-off kernel of
 * 50 us (what it compiled, tried once); then its loop, steps of a ReLU
 * through cuDNN (45 us) and an ATen kernel (100 us) every 200 us. The
 * start-up's GPU time is 2152 us (the handle's kernel, the copy, the
 * one-off kernels), each step's 145 us. */
static void write_startup(const char *dir, int steps, int threads)
{
	(void)threads;
	static const char k_aten[] =
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
		"11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";
	static const char *const once[] = { "_Z14compiled_probe1Pf",
					    "_Z14compiled_probe2Pf",
					    "_Z14compiled_probe3Pf" };
	struct gen g;

	scenario_begin(&g, dir, "startup");
	uint64_t handle = 0x1000, y, act, seq;
	relu_setup(&g, handle, &y, &act);
	memcpy_htod(&g, 1 << 30, 2000000);
	for (int i = 0; i < 3; i++) {
		g.t = g.gpu + 1000000000ull; /* compiling */
		kernel(&g, 0, once[i], 50000);
	}
	g.t = g.gpu + 1000000;
	for (int i = 0; i < steps; i++) {
		uint64_t t0 = g.t;
		seq = CALL(&g, "cudnnActivationForward", 7000, U(handle),
			   U(act), K(1.0), U(y), U(0x7e0030000000), K(0.0),
			   U(y), U(0x7e0030000000));
		kernel(&g, seq, K_RELU, 45000);
		kernel(&g, 0, k_aten, 100000);
		g.t = t0 + 200000;
	}
	CALL(&g, "cudnnDestroy", 1000, U(handle));
	scenario_end(&g);
}

/* A sampling window opening or closing, in the recorder's words. */
static void window(struct gen *g, enum dt_gpu_state state, unsigned one_in,
		   unsigned ms)
{
	char why[64];
	struct dt_rec_gpu_state r = { .t = g->t,
				      .state = state,
				      .code = (int32_t)one_in };

	snprintf(why, sizeof(why), "one window of %u ms in %u", ms, one_in);
	r.len = (uint32_t)strlen(why);
	put(g, DT_REC_GPU_STATE, &r, sizeof(r), why, r.len);
}

/* The sampled scenario: OUT_DIR/sampled.dnnt, GPU activity recorded in
 * one window of 10 ms in 4 (record --gpu-sample 4:10), and the same
 * program recorded whole, OUT_DIR/full.dnnt. Three rounds of steps ReLUs
 * each, kernels of 40, 45 and 50 us; the sampled run's second round is
 * between its windows: calls marked unsampled, no kernel. */
static void write_sampled_run(const char *dir, const char *name, int steps,
			      bool sampled)
{
	struct gen g;

	scenario_begin(&g, dir, name);
	if (sampled)
		window(&g, DT_GPU_WINDOW_OPEN, 4, 10);
	uint64_t handle = 0x1000, y, act, seq;
	relu_setup(&g, handle, &y, &act);
	for (int round = 0; round < 3; round++) {
		bool timed = !sampled || round != 1;
		if (sampled && round == 1) {
			window(&g, DT_GPU_WINDOW_CLOSE, 4, 10);
			g.call_flags = DT_CALL_UNSAMPLED;
		} else if (sampled && round == 2) {
			window(&g, DT_GPU_WINDOW_OPEN, 4, 10);
			g.call_flags = 0;
		}
		for (int i = 0; i < steps; i++) {
			seq = CALL(&g, "cudnnActivationForward", 7000,
				   U(handle), U(act), K(1.0), U(y),
				   U(0x7e0030000000), K(0.0), U(y),
				   U(0x7e0030000000));
			if (timed)
				kernel(&g, seq, K_RELU,
				       40000 + 5000 * (uint64_t)round);
			g.t = g.gpu > g.t ? g.gpu : g.t + 50000;
		}
	}
	if (sampled)
		window(&g, DT_GPU_WINDOW_CLOSE, 4, 10);
	CALL(&g, "cudnnDestroy", 1000, U(handle));
	scenario_end(&g);
}

static void write_sampled(const char *dir, int steps, int threads)
{
	(void)threads;
	write_sampled_run(dir, "sampled", steps, true);
	write_sampled_run(dir, "full", steps, false);
}

static void write_fusion_scenario(const char *dir, int steps, int threads)
{
	(void)threads;
	static const struct fusion_case cases[] = {
		{ "fusion-h100", 9, 0, true, false, 128, 1, 0 },
		{ "fusion-nchw", 9, 0, false, false, 128, 1, 0 },
		{ "fusion-cc75", 7, 5, true, false, 128, 1, 2 },
		{ "fusion-cc100", 10, 0, true, false, 128, 2, 0 },
		{ "fusion-c12", 9, 0, true, false, 12, 1, 0 },
		{ "fusion-fp64", 9, 0, true, true, 128, 1, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		write_fusion(dir, &cases[i], steps);
}


/* The hostile scenario (OUT_DIR/hostile.dnnt): a process whose every
 * string carries a terminal's control sequences (a title change, a clear
 * screen, C1's CSI, bytes that are not UTF-8), Markdown's markup (a
 * cell's '|', a tag, emphasis, code, a link) and a spreadsheet formula:
 * its host, command line, RANK, GPU, thread, a
 * kernel, and two functions its API table names, one shorter than
 * "cudnn". Each runs a kernel, one named as a spreadsheet formula; one
 * returns a status cuDNN does not define. What the readers print of it
 * must reach no terminal raw. */
#define FORMULA "=HYPERLINK(\"http://example.com\",\"x\")"
#define HOSTILE "\x1b]0;owned\x07\x1b[2J\xc2\x9b" "31m\x9b\x7f|=1+2\n" \
	"<b>*em* _em_ `c` [l](x)</b>"
static void write_hostile(const char *dir, int steps, int threads)
{
	(void)threads;
	static const char *const extra[] = { "cu", "cudnn" HOSTILE "Forward" };
	static const struct dt_kv info[] = {
		{ "env.RANK", "0" HOSTILE },
		{ "gpu", "on: CUPTI (synthetic trace)" },
	};
	char path[4096];
	struct gen g = { .t = 1000000000, .next_ptr = 0x5000000, .slow = 1 };

	for (size_t i = 0; i < 2; i++)
		add_api(extra[i], "handle:p");
	snprintf(path, sizeof(path), "%s/hostile.dnnt", dir);
	struct dt_writer_config cfg = process_config(
		path, "node" HOSTILE, "python " HOSTILE " train.py", info,
		sizeof(info) / sizeof(info[0]));
	open_writer(&g, &cfg, "main" HOSTILE);
	static const char gpu[] = "NVIDIA H100" HOSTILE;
	struct dt_rec_device dev = { .global_mem = 85520809984ull,
				     .mem_bandwidth = 3352320000ull,
				     .cc_major = 9,
				     .sms = 132,
				     .core_clock = 1980000,
				     .len = sizeof(gpu) - 1 };
	put(&g, DT_REC_DEVICE, &dev, sizeof(dev), gpu, dev.len);
	struct dt_rec_clock clk = { .mono = g.t,
				    .other = g.t,
				    .clock = DT_CLOCK_CUPTI };
	put(&g, DT_REC_CLOCK, &clk, sizeof(clk), NULL, 0);

	uint64_t handle = 0x1000;
	CALL(&g, "cudnnCreate", 300000, U(handle));
	for (int i = 0; i < steps; i++) {
		for (size_t k = 0; k < 2; k++) {
			uint64_t seq = call_s(&g, extra[k], 5000,
					      k ? 9999 : 0, &U(handle), 1);
			kernel(&g, seq, k ? "kern" HOSTILE : FORMULA, 20000);
			g.t = g.gpu;
		}
	}
	CALL(&g, "cudnnDestroy", 1000, U(handle));
	scenario_end(&g);
}

/* The extreme scenario (OUT_DIR/extreme.dnnt): times at the ends of the
 * clocks, as a damaged or hostile trace may hold: a process started at
 * 2^63 ns on both clocks, one call and its kernel, then a kernel ending
 * at 2^64 - 1 ns and one before the process began. The readers' time
 * arithmetic must neither overflow nor wrap. */
static void write_extreme(const char *dir, int steps, int threads)
{
	(void)steps, (void)threads;
	char path[4096];
	const uint64_t t0 = 1ull << 63;
	struct gen g = { .t = t0, .next_ptr = 0x5000000, .slow = 1 };

	snprintf(path, sizeof(path), "%s/extreme.dnnt", dir);
	struct dt_writer_config cfg = { .path_template = path,
					.start_mono = t0,
					.start_real = t0,
					.host = "node1",
					.cmdline = "extreme",
					.pid = 1000 };
	open_writer(&g, &cfg, "main");
	uint64_t seq = CALL(&g, "cudnnCreate", 300000, U(0x1000));
	kernel(&g, seq, "cudnn::init_kernel", 2000);
	struct dt_rec_kernel late = { .start = UINT64_MAX - 1000,
				      .end = UINT64_MAX,
				      .corr = ++g.corr,
				      .grid_x = 1,
				      .block_x = 32 };
	put_kernel(&g, &late, "late_kernel");
	struct dt_rec_kernel early = { .start = 5,
				       .end = 10,
				       .corr = ++g.corr,
				       .grid_x = 1,
				       .block_x = 32 };
	put_kernel(&g, &early, "early_kernel");
	g.t += 1000;
	CALL(&g, "cudnnDestroy", 1000, U(0x1000));
	scenario_end(&g);
}

/* An NVTX record of the current thread, now. */
static void nvtx(struct gen *g, uint32_t event, uint32_t name, uint32_t domain,
		 uint64_t range)
{
	struct dt_rec_nvtx n = { .t = g->t,
				 .range = range,
				 .tid = g->tid ? g->tid : 100,
				 .event = event,
				 .name = name,
				 .domain = domain };
	put(g, DT_REC_NVTX, &n, sizeof(n), NULL, 0);
	g->t += 100;
}

static void string(struct gen *g, uint32_t id, const char *text)
{
	struct dt_rec_string s = { .id = id, .len = (uint32_t)strlen(text) };
	put(g, DT_REC_STRING, &s, sizeof(s), text, s.len);
}

/* A call on handle that launches a kernel of dur ns. */
static void launching(struct gen *g, uint64_t handle, const char *kern,
		      uint64_t dur)
{
	kernel(g, CALL(g, "cudnnSetStream", 2000, U(handle), U(0x77)), kern,
	       dur);
}

enum { S_WARMUP = 1, S_STEP, S_FWD, S_BWD, S_DOMAIN, S_LOAD, S_EPOCH, S_MARK };

static void write_ranges(const char *dir, int steps, int threads)
{
	(void)threads;
	struct gen g;

	scenario_begin(&g, dir, "ranges");
	uint64_t handle = 0x1000;
	string(&g, S_WARMUP, "warmup");
	string(&g, S_EPOCH, "epoch");
	nvtx(&g, DT_NVTX_START, S_EPOCH, 0, 1);
	nvtx(&g, DT_NVTX_PUSH, S_WARMUP, 0, 0);
	CALL(&g, "cudnnCreate", 300000, U(handle));
	nvtx(&g, DT_NVTX_POP, 0, 0, 0);
	string(&g, S_STEP, "step");
	string(&g, S_FWD, "forward");
	string(&g, S_BWD, "backward");
	string(&g, S_MARK, "checkpoint");
	/* variant collectives: no range marks the step; a communication
	 * library's ranges, in a domain of its own, wrap each of the four
	 * collectives the backward pass makes, evenly spaced */
	if (!strcmp(variant, "collectives")) {
		string(&g, S_DOMAIN, "comm");
		string(&g, S_LOAD, "allReduce");
		for (int i = 0; i < steps; i++) {
			launching(&g, handle, K_SGEMM, 40000);
			for (int c = 0; c < 4; c++) {
				nvtx(&g, DT_NVTX_PUSH, S_LOAD, S_DOMAIN, 0);
				kernel(&g, 0, "at::add_kernel", 3000);
				nvtx(&g, DT_NVTX_POP, 0, S_DOMAIN, 0);
				g.t += 50000;
			}
		}
		CALL(&g, "cudnnDestroy", 1000, U(handle));
		scenario_end(&g);
		return;
	}
	for (int i = 0; i < steps; i++) {
		nvtx(&g, DT_NVTX_PUSH, S_STEP, 0, 0);
		nvtx(&g, DT_NVTX_PUSH, S_FWD, 0, 0);
		launching(&g, handle, K_SGEMM, 40000);
		launching(&g, handle, "at::relu_kernel", 5000);
		nvtx(&g, DT_NVTX_POP, 0, 0, 0);
		nvtx(&g, DT_NVTX_PUSH, S_BWD, 0, 0);
		launching(&g, handle, K_SGEMM, 80000);
		kernel(&g, 0, "at::add_kernel", 3000); /* no call's */
		nvtx(&g, DT_NVTX_POP, 0, 0, 0);
		nvtx(&g, DT_NVTX_POP, 0, 0, 0);
		g.t += 200000;
	}
	nvtx(&g, DT_NVTX_MARK, S_MARK, 0, 0);

	/* the loader thread: a range of a domain, and the epoch's end; in
	 * the file after the main thread's records (flushed), as the
	 * writer's thread would put them */
	dt_writer_flush(g.w, 1000);
	struct dt_ring *main_ring = g.r;
	g.r = dt_writer_attach(g.w, 101, "loader");
	if (!g.r)
		die("out of memory");
	g.tid = 101;
	string(&g, S_DOMAIN, "data");
	string(&g, S_LOAD, "load");
	nvtx(&g, DT_NVTX_PUSH, S_LOAD, S_DOMAIN, 0);
	launching(&g, handle, "at::copy_kernel", 10000);
	nvtx(&g, DT_NVTX_POP, 0, S_DOMAIN, 0);
	nvtx(&g, DT_NVTX_END, 0, 0, 1);
	dt_writer_flush(g.w, 1000);
	dt_ring_detach(g.r);
	g.r = main_ring;
	g.tid = 0;
	CALL(&g, "cudnnDestroy", 1000, U(handle));
	scenario_end(&g);
}

/* Two wrapped libraries: cuDNN and a second one, dtt, whose functions
 * follow cuDNN's in the API table; dtt calls cuDNN inside one of its
 * calls (a nested call, as cuDNN calls cuBLASLt), and one of its calls
 * launches a kernel. */
static void write_libraries(const char *dir, int steps, int threads)
{
	(void)threads;
	static const char *const dtt[][2] = {
		{ "dttCheckBackend", "handle:p,backendVersion:>u8" },
		{ "dttScale", "handle:p,n:i4,alpha:k,x:p,y:p" },
	};
	static struct dt_library_def libs[2];
	static const struct dt_kv info[] = {
		{ "gpu", "on: CUPTI (synthetic trace)" },
		{ "lib.cudnn.built", "91900" },
		{ "lib.cudnn.file", "/usr/lib/libcudnn.so.9.19.0" },
		{ "lib.cudnn.version", "91900" },
		{ "lib.dtt.built", "10200" },
		{ "lib.dtt.file", "/usr/lib/libdtt.so.1.2.0" },
		{ "lib.dtt.version", "10200" },
	};
	char path[4096];
	struct gen g = { .t = 1000000000, .next_ptr = 0x5000000, .slow = 1 };

	libs[0] = (struct dt_library_def){ "cudnn", "cuDNN", 0, n_apis };
	libs[1] = (struct dt_library_def){ "dtt", "DTT", n_apis, 2 };
	for (size_t i = 0; i < 2; i++)
		add_api(dtt[i][0], dtt[i][1]);
	libraries = libs;
	n_libraries = 2;
	snprintf(path, sizeof(path), "%s/libraries.dnnt", dir);
	struct dt_writer_config cfg =
		process_config(path, "node1", "dtt-prog", info,
			       sizeof(info) / sizeof(info[0]));
	open_writer(&g, &cfg, "main");
	uint64_t handle = 0x1000, x = ptr(&g), y = ptr(&g);
	CALL(&g, "cudnnCreate", 300000, U(handle));
	for (int i = 0; i < steps; i++) {
		uint64_t seq = CALL(&g, "dttScale", 5000, U(handle), U(4),
				    K(2.0), U(x), U(y));
		kernel(&g, seq, "dtt_scale_kernel", 3000);
	}
	/* dttCheckBackend's cuDNN call, inside it: the outer call takes its
	 * number first, but the inner one's record is written first, as the
	 * shim commits it */
	uint64_t outer_t = g.t, outer_seq = g.seq;
	g.seq++;
	g.t += 1000;
	g.call_flags = DT_CALL_NESTED;
	CALL(&g, "cudnnGetVersion", 100, U(91900));
	g.call_flags = 0;
	uint64_t inner_end = g.t, last_seq = g.seq;
	g.t = outer_t;
	g.seq = outer_seq;
	CALL(&g, "dttCheckBackend", inner_end + 1000 - outer_t, U(handle),
	     U(91900));
	g.seq = last_seq;
	CALL(&g, "cudnnDestroy", 1000, U(handle));
	scenario_end(&g);
}

/* Where the API listings are: the directory of the one given (the shim's
 * listings of cuBLAS and cuBLASLt lie beside cuDNN's). */
static char listing_dir[4096] = ".";

/* A library's listing, its functions after the ones loaded: their
 * number. */
static uint32_t load_library(const char *file)
{
	char path[4200];
	uint32_t first = n_apis;

	snprintf(path, sizeof(path), "%s/%s", listing_dir, file);
	load_listing(path);
	return n_apis - first;
}

/* Scalars under a pointer mode ('m'), in host memory: a float or a
 * double; one of a void pointer is read as 16 bytes, as the shim does. */
#define M(v)   ((struct val){ .u = 0x7ffd00001000, .f = (v), .n = 4 })
#define MD(v)  ((struct val){ .u = 0x7ffd00001000, .f = (v), .n = 8 })
#define MV(v)  ((struct val){ .u = 0x7ffd00001000, .f = (v), .n = 16 })
/* the same as the bytes read there (n of them, up to 16) */
#define MB(p, len) ((struct val){ .u = 0x7ffd00001000, .data = (p), .n = (len) })

#define K_CUBLAS_TF32                                                     \
	"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_"       \
	"warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define K_CUBLAS_F16                                                      \
	"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_"        \
	"warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
#define K_CUBLAS_F64                                                      \
	"sm90_xmma_gemm_f64f64_f64f64_f64_nn_n_tilesize64x64x16_cublas"
#define K_NVJET_TN    "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNN"
#define K_NVJET_BIAS  "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"
#define K_NVJET_GELU  "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_gelu_TNT"
#define K_SILU                                                          \
	"_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_11silu_" \
	"kernelERNS_18TensorIteratorBaseEENKUlvE_clEvENKUlvE0_clEvEUlfE_"  \
	"St5arrayIPcLm2EEEEviT0_T1_"
#define K_GEMV        "_Z13gemv2T_kernelIiifffLi128ELi16ELi4ELi4ELb0ELb0EEvv"
#define K_TRSM        "trsm_left_kernel_double_64x64"
#define K_SYRK        "syrk_kernel_double_64x64"

#define K_CAST_BF16                                                      \
	"_ZN2at6native29vectorized_elementwise_kernelILi8EZNS0_24bfloat16_" \
	"copy_kernel_cudaERNS_18TensorIteratorBaseEEUlfE_St5arrayIPcLm2EEE" \
	"EviT0_T1_"
#define K_MUL_F32                                                          \
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunct" \
	"orIfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT" \
	"0_T1_"
#define K_LAYER_NORM                                                         \
	"_ZN2at6native53_GLOBAL__N__cd3a9e2c_20_layer_norm_kernel_cu_3b9d6a1d" \
	"28vectorized_layer_norm_kernelIN3c108BFloat16EfLb0EEEviT0_PKT_S8_S8_" \
	"PS5_S9_S9_"

/* cuBLASLt's descriptor attributes and layout attributes set by the
 * scenario (cublasLt.h's values). */
enum { LT_TRANSA = 3, LT_EPILOGUE = 7, LT_BIAS_POINTER = 8,
       LT_BIAS_DATA_TYPE = 26 };

static void lt_set(struct gen *g, uint64_t desc, int64_t attr, uint64_t v,
		   uint32_t size)
{
	CALL(g, "cublasLtMatmulDescSetAttribute", 300, U(desc), U(attr),
	     X(&v, size), U(size));
}

static uint64_t lt_layout(struct gen *g, int64_t type, uint64_t rows,
			  uint64_t cols)
{
	uint64_t l = ptr(g);
	CALL(g, "cublasLtMatrixLayoutCreate", 400, U(l), U(type), U(rows),
	     U(cols), U(rows));
	return l;
}

/* The algorithm a heuristic query returns: the variant `changed` gets
 * another (its bytes), and a smaller workspace. */
static void lt_algo(struct gen *g, uint64_t lt, uint64_t desc,
		    const uint64_t l[4], uint8_t algo[64])
{
	bool changed = !strcmp(variant, "changed");
	uint8_t res[96] = { 0 };
	uint64_t ws = changed ? 1u << 20 : 4u << 20;

	for (int i = 0; i < 64; i++)
		algo[i] = (uint8_t)(i * 7 + (changed ? 3 : 1));
	memcpy(res, algo, 64);
	memcpy(res + 64, &ws, 8);
	CALL(g, "cublasLtMatmulAlgoGetHeuristic", 90000, U(lt), U(desc),
	     U(l[0]), U(l[1]), U(l[2]), U(l[3]), U(0x9100), U(1),
	     X(res, sizeof(res)), U(1));
}

/* What the shim asks of an algorithm after the first matmul given it:
 * each documented attribute (CUBLASLT_ALGO_CONFIG_ID to
 * CLUSTER_SHAPE_ID), its value in values, as calls of its own, recorded
 * after the matmul's. */
static void lt_algo_query(struct gen *g, const uint8_t algo[64],
			  const int32_t values[9])
{
	g->call_flags = DT_CALL_BY_DNNTRACE;
	for (int i = 0; i < 9; i++)
		CALL(g, "cublasLtMatmulAlgoConfigGetAttribute", 200,
		     X(algo, 64), U(i), X(&values[i], 4), U(8), U(4));
	g->call_flags = 0;
}

/* cuBLAS's bf16 typed matmul of C = A B in the layouts l, given algo,
 * on its own descriptor: a call nested in a cuBLAS call's. */
static void typed_matmul(struct gen *g, uint64_t lt, uint64_t desc,
			 const uint64_t l[4], const uint8_t algo[64])
{
	CALL(g, "cublasLtTSTMatmul", 3000, U(lt), U(desc), M(1.0),
	     U(0x7e0000000000), U(l[0]), U(0x7e0010000000), U(l[1]), M(0.0),
	     U(0x7e0030000000), U(l[2]), U(0x7e0030000000), U(l[3]),
	     X(algo, 64), U(0), U(0), U(0x77), U(0));
}

/* The bf16 cublasGemmEx a typed matmul ran inside, of dur ns, recorded
 * after it (with A, B and C where typed_matmul has them): its seq. */
static uint64_t outer_gemmex(struct gen *g, uint64_t h, uint64_t dur,
			     int transa, uint64_t m, uint64_t n, uint64_t k,
			     uint64_t lda, uint64_t ldb, uint64_t ldc)
{
	return CALL(g, "cublasGemmEx", dur, U(h), U(transa), U(0), U(m), U(n),
		    U(k), MV(1.0), U(0x7e0000000000), U(14), U(lda),
		    U(0x7e0010000000), U(14), U(ldb), MV(0.0),
		    U(0x7e0030000000), U(14), U(ldc), U(68), U((uint64_t)-1));
}

/* A GemmEx that runs through cuBLASLt's typed bf16 matmul, as cuBLAS
 * does: its heuristic query and its matmul nested in it, then what the
 * shim asks of the algorithm (top-level calls of its own), then the
 * GemmEx's record, as the shim commits them. */
static void nested_typed(struct gen *g, uint64_t h, uint64_t lt,
			 const uint64_t l[4])
{
	static const int32_t values[9] = { 66, 18, 0, 0, 0, 0, 24, 0, 2 };
	/* cuBLAS's descriptors are on its stack */
	uint64_t desc = 0x7ffd84ba6c70;
	uint8_t algo[64], res[96] = { 0 };

	for (int i = 0; i < 64; i++)
		algo[i] = (uint8_t)(i * 5 + 2);
	memcpy(res, algo, 64);
	uint64_t outer_t = g->t, outer_seq = g->seq;
	g->seq++;
	g->t += 1000;
	g->call_flags = DT_CALL_NESTED;
	CALL(g, "cublasLtTSTMatmulAlgoGetHeuristic", 20000, U(lt), U(desc),
	     U(l[0]), U(l[1]), U(l[2]), U(l[3]), U(0x7ffd84ba6bd0), U(1),
	     X(res, sizeof(res)), U(1));
	typed_matmul(g, lt, desc, l, algo);
	lt_algo_query(g, algo, values);
	uint64_t inner_end = g->t, last_seq = g->seq;
	g->t = outer_t;
	g->seq = outer_seq;
	uint64_t seq = outer_gemmex(g, h, inner_end + 1000 - outer_t, 1, 1024,
				    512, 2048, 2048, 2048, 1024);
	kernel(g, seq, K_NVJET_TN, 40000);
	g->seq = last_seq;
}

/* A second GemmEx, on another thread, through a typed matmul whose
 * algorithm the shim asked of on the program's thread, after a
 * cublasLtMatmul given it there: the queries have the earlier times and
 * seqs, yet reach the file after the other thread's records (its buffer
 * was written out first), as in a PyTorch backward pass. */
static void nested_elsewhere(struct gen *g, uint64_t h, uint64_t lt,
			     uint64_t desc, const uint64_t l[4])
{
	static const int32_t values[9] = { 66, 20, 1, 0, 0, 1, 35, 0, 3 };
	uint64_t typed_desc = 0x7ffd84ba6d10;
	uint8_t algo[64];

	for (int i = 0; i < 64; i++)
		algo[i] = (uint8_t)(i * 11 + 5);
	uint64_t t0 = g->t, seq0 = g->seq;
	/* the other thread, later by the clock, written first */
	g->tid = 101;
	g->t = t0 + 100000;
	g->seq = seq0 + 20;
	uint64_t outer_t = g->t, outer_seq = g->seq;
	g->seq++;
	g->t += 1000;
	g->call_flags = DT_CALL_NESTED;
	typed_matmul(g, lt, typed_desc, l, algo);
	g->call_flags = 0;
	uint64_t inner_end = g->t, last_seq = g->seq;
	g->t = outer_t;
	g->seq = outer_seq;
	uint64_t seq = outer_gemmex(g, h, inner_end + 1000 - outer_t, 0, 2048,
				    1024, 512, 2048, 512, 2048);
	kernel(g, seq, K_NVJET_TN, 60000);
	uint64_t t_end = g->t;
	/* the program's thread: the first matmul given the algorithm, and
	 * what the shim asked of it */
	g->tid = 0;
	g->t = t0;
	g->seq = seq0;
	seq = CALL(g, "cublasLtMatmul", 3000, U(lt), U(desc), M(1.0),
		   U(0x7e0000000000), U(l[0]), U(0x7e0010000000), U(l[1]),
		   M(0.0), U(0x7e0030000000), U(l[2]), U(0x7e0030000000),
		   U(l[3]), X(algo, 64), U(0), U(0), U(0x77), U(0));
	kernel(g, seq, K_NVJET_TN, 30000);
	lt_algo_query(g, algo, values);
	g->seq = last_seq;
	g->t = t_end;
}

/* The gemm scenario's variant `prologue`: each step, PyTorch's kernels
 * write what a product then reads as A or B: SiLU and a multiply (a gated
 * unit) of Sgemm's B (1024 x 4096), a cast to BF16 of GemmEx's B
 * (1024 x 1024), a layer norm of the cuBLASLt matmul's B (1024 x 512), an
 * FP64 add of the small Dgemm's A or B (64 x 64, both), a second Dgemm
 * right after it; and between them a ReLU no product reads, of another
 * size. */
static void write_prologue(struct gen *g, uint64_t h, uint64_t lt,
			   uint64_t desc, const uint64_t l[4],
			   const uint8_t algo[64], int steps)
{
	uint64_t pa = 0x7e0000000000, pb = 0x7e0010000000,
		 pc = 0x7e0020000000, pe = 0x7e0040000000;

	for (int i = 0; i < steps; i++) {
		launch(g, 0, K_SILU, 24000, 4096 * 1024 / 512, 128);
		launch(g, 0, K_MUL_F32, 36000, 4096 * 1024 / 512, 128);
		uint64_t seq = CALL(g, "cublasSgemm_v2", 6000, U(h), U(0),
				    U(0), U(1024), U(4096), U(1024), M(1.0),
				    U(pa), U(1024), U(pb), U(1024), M(0.0),
				    U(pc), U(1024));
		launch(g, seq, K_CUBLAS_TF32, 150000, 64, 256);
		launch(g, 0, kname(K_CLAMP, "N3c108BFloat16E"), 2000, 100,
		       128);
		launch(g, 0, K_CAST_BF16, 3000, 1024 * 1024 / 1024, 128);
		seq = CALL(g, "cublasGemmEx", 7000, U(h), U(1), U(0), U(4096),
			   U(1024), U(1024), MV(1.0), U(pa), U(14), U(1024),
			   U(pb), U(14), U(1024), MV(0.0), U(pc), U(14),
			   U(4096), U(68), U((uint64_t)-1));
		launch(g, seq, K_NVJET_TN, 60000, 132, 384);
		launch(g, 0, K_LAYER_NORM, 5000, 512, 32);
		seq = CALL(g, "cublasLtMatmul", 9000, U(lt), U(desc), M(1.0),
			   U(pa), U(l[0]), U(pb), U(l[1]), M(0.0), U(pe),
			   U(l[2]), U(pe), U(l[3]), X(algo, 64), U(h),
			   U(4u << 20), U(0x77), U(0));
		kernel(g, seq, K_NVJET_GELU, 24000);
		launch(g, 0, kname(K_ADDV, "d"), 2000, 4, 128);
		for (int k = 0; k < 2; k++) {
			seq = CALL(g, "cublasDgemm_v2", 3000, U(h), U(k),
				   U(0), U(64), U(64), U(64), MD(1.0), U(pa),
				   U(64), U(pb), U(64), MD(0.0), U(pc), U(64));
			kernel(g, seq, K_CUBLAS_F64, 3000);
		}
		g->t = g->gpu + 20000;
	}
}

/* The gemm scenario's variant `scalars`: alpha and beta as the shim reads
 * them, each in its call's scale type: FP16 under a GemmEx computing in
 * FP16 (16 bytes read behind a void pointer, the half first), FP32 under
 * one computing in FP32, a __half of cublasHgemm's (2 bytes), a
 * cuComplex of cublasCgemm's (8 bytes). */
static void write_scalars(struct gen *g, uint64_t h)
{
	/* 1.5 and 0.25 as halves, then what lay after them in memory */
	static const uint8_t alpha[16] = { 0x00, 0x3e, 0x00, 0x34, 0x11, 0x22,
					   0x33, 0x44 },
			     beta[16] = { 0x00, 0x34, 0x00, 0x3e, 0x55, 0x66 };
	static const float calpha[2] = { 1, 2 }, cbeta[2] = { 0.5f, -1 };
	uint64_t pa = 0x7e0000000000, pb = 0x7e0010000000,
		 pc = 0x7e0020000000;

	uint64_t seq = CALL(g, "cublasGemmEx", 7000, U(h), U(0), U(0), U(512),
			    U(512), U(512), MB(alpha, 16), U(pa), U(2),
			    U(512), U(pb), U(2), U(512), MB(beta, 16), U(pc),
			    U(2), U(512), U(64), U((uint64_t)-1));
	kernel(g, seq, K_CUBLAS_F16, 10000);
	seq = CALL(g, "cublasGemmEx", 7000, U(h), U(0), U(0), U(512), U(512),
		   U(512), MV(0.75), U(pa), U(2), U(512), U(pb), U(2), U(512),
		   MV(0.0), U(pc), U(2), U(512), U(68), U((uint64_t)-1));
	kernel(g, seq, K_CUBLAS_F16, 10000);
	seq = CALL(g, "cublasHgemm", 7000, U(h), U(0), U(0), U(512), U(512),
		   U(512), MB(alpha, 2), U(pa), U(512), U(pb), U(512),
		   MB(beta, 2), U(pc), U(512));
	kernel(g, seq, K_CUBLAS_F16, 10000);
	seq = CALL(g, "cublasCgemm_v2", 7000, U(h), U(0), U(0), U(64), U(64),
		   U(64), MB(calpha, 8), U(pa), U(64), U(pb), U(64),
		   MB(cbeta, 8), U(pc), U(64));
	kernel(g, seq, K_CUBLAS_TF32, 10000);
}

/* The gemm scenario (OUT_DIR/gemm.dnnt): a process on an H100 making
 * its products through cuBLAS and cuBLASLt. Each step runs an FP32 GEMM
 * on a handle allowed TF32 and PyTorch's SiLU on its output (which no
 * cuBLASLt epilogue computes), a BF16 GemmEx whose output PyTorch's kernels
 * then add a bias to and pass through GELU (a chain a cuBLASLt epilogue
 * would fuse), a strided batch of FP16 products, a GEMV, a triangular
 * solve and a rank-k update in FP64, a product too small to matter
 * (FP64, 64 x 64 x 64), and a cuBLASLt BF16 matmul with
 * its bias and GELU as an epilogue, on an algorithm a heuristic query
 * chose (what it is, the shim asks after the first matmul), and again
 * with its bias alone as its epilogue and PyTorch's GELU after it; and a
 * cuBLAS kernel that no recorded call launched. Then a GemmEx captured
 * into a CUDA graph, launched three times. The
 * variant `changed` gives the cuBLASLt matmul another algorithm, slower,
 * and makes the GemmEx 20% slower; the variant `huge` is one product of
 * shapes no GPU holds (2^40 each way); the variant `static` is the program
 * with cuBLAS linked into it: its kernels run, no cuBLAS library is
 * loaded and none of its calls is recorded; the variants `prologue` and
 * `scalars`, write_prologue()'s and write_scalars()'s. */
static void write_gemm(const char *dir, int steps, int threads)
{
	(void)threads;
	static struct dt_library_def libs[3];
	static const struct dt_kv info[] = {
		{ "gpu", "on: CUPTI (synthetic trace)" },
		{ "lib.cudnn.built", "91900" },
		{ "lib.cudnn.file", "/usr/lib/libcudnn.so.9.19.0" },
		{ "lib.cudnn.version", "91900" },
		/* not there when cuBLAS is linked into the program */
		{ "lib.cublas.built", "130100" },
		{ "lib.cublas.file", "/usr/lib/libcublas.so.13.1.0.3" },
		{ "lib.cublas.version", "130100" },
		{ "lib.cublaslt.built", "130100" },
		{ "lib.cublaslt.file", "/usr/lib/libcublasLt.so.13.1.0.3" },
		{ "lib.cublaslt.version", "130100" },
	};
	bool changed = !strcmp(variant, "changed");
	/* cuBLAS linked into the program: wrapped, never loaded nor called;
	 * its kernels launched by no recorded call */
	bool statically = !strcmp(variant, "static");
	char path[4096];
	struct gen g = { .t = 1000000000, .next_ptr = 0x5000000, .slow = 1 };
	uint32_t first = n_apis;

	uint32_t n_cublas = load_library("cublas-api.txt");
	uint32_t n_cublaslt = load_library("cublaslt-api.txt");
	libs[0] = (struct dt_library_def){ "cudnn", "cuDNN", 0, first };
	libs[1] = (struct dt_library_def){ "cublas", "cuBLAS", first,
					   n_cublas };
	libs[2] = (struct dt_library_def){ "cublaslt", "cuBLASLt",
					   first + n_cublas, n_cublaslt };
	libraries = libs;
	n_libraries = 3;
	snprintf(path, sizeof(path), "%s/gemm.dnnt", dir);
	struct dt_writer_config cfg = process_config(
		path, "node1", "python train_mlp.py",
		info, statically ? 4 : sizeof(info) / sizeof(info[0]));
	open_writer(&g, &cfg, "main");
	struct dt_rec_device dev = { .global_mem = 85520809984ull,
				     .mem_bandwidth = 3352320000ull,
				     .cc_major = 9,
				     .sms = 132,
				     .core_clock = 1980000,
				     .l2_size = 52428800,
				     .max_threads_per_sm = 2048,
				     .len = 21 };
	put(&g, DT_REC_DEVICE, &dev, sizeof(dev), "NVIDIA H100 80GB HBM3",
	    dev.len);
	struct dt_rec_clock clk = { .mono = g.t,
				    .other = g.t,
				    .clock = DT_CLOCK_CUPTI };
	put(&g, DT_REC_CLOCK, &clk, sizeof(clk), NULL, 0);

	if (!strcmp(variant, "huge")) { /* shapes no GPU holds */
		uint64_t seq = CALL(&g, "cublasSgemm_v2_64", 6000, U(0x1000),
				    U(1), U(1), U(1ull << 40), U(1ull << 40),
				    U(1ull << 40), M(1.0), U(0x7e0000000000),
				    U(1ull << 40), U(0x7e0010000000),
				    U(1ull << 40), M(1.0), U(0x7e0020000000),
				    U(1ull << 40));
		kernel(&g, seq, K_CUBLAS_TF32, 40000);
		scenario_end(&g);
		return;
	}
	if (statically) {
		for (int i = 0; i < steps; i++) {
			kernel(&g, 0, K_CUBLAS_TF32, 40000);
			kernel(&g, 0, K_NVJET_TN, 250000);
			g.t = g.gpu + 20000;
		}
		scenario_end(&g);
		return;
	}
	/* cuBLAS's handle: its stream, TF32 allowed, a workspace */
	uint64_t h = 0x1000, stream = 0x77, ws = 0x7f0000000000;
	CALL(&g, "cublasCreate_v2", 200000, U(h));
	CALL(&g, "cublasSetStream_v2", 500, U(h), U(stream));
	CALL(&g, "cublasSetMathMode", 300, U(h), U(3));
	CALL(&g, "cublasSetWorkspace_v2", 300, U(h), U(ws), U(4u << 20));
	/* cuBLASLt: a BF16 product of A^T (2048 x 1024) and B, with a BF16
	 * bias and GELU as its epilogue */
	uint64_t lt = 0x2000, desc = ptr(&g), l[4];
	uint8_t algo[64];
	const int32_t lt_values[9] = { 66, changed ? 15 : 20, 1, 0, 0,
				       0,  changed ? 8 : 18,  0, 0 };
	CALL(&g, "cublasLtCreate", 1000, U(lt));
	CALL(&g, "cublasLtMatmulDescCreate", 500, U(desc), U(68), U(0));
	lt_set(&g, desc, LT_TRANSA, 1, 4);
	lt_set(&g, desc, LT_EPILOGUE, 32 | 4, 4);
	lt_set(&g, desc, LT_BIAS_POINTER, 0x7e00f0000000, 8);
	lt_set(&g, desc, LT_BIAS_DATA_TYPE, 14, 4);
	l[0] = lt_layout(&g, 14, 1024, 2048);
	l[1] = lt_layout(&g, 14, 1024, 512);
	l[2] = l[3] = lt_layout(&g, 14, 2048, 512);
	lt_algo(&g, lt, desc, l, algo);
	/* and the same product with its bias alone as its epilogue, GELU
	 * left to a kernel after it (cuBLASLt's heuristic picks its
	 * algorithm: none given) */
	uint64_t bdesc = ptr(&g);
	CALL(&g, "cublasLtMatmulDescCreate", 500, U(bdesc), U(68), U(0));
	lt_set(&g, bdesc, LT_TRANSA, 1, 4);
	lt_set(&g, bdesc, LT_EPILOGUE, 4, 4);
	lt_set(&g, bdesc, LT_BIAS_DATA_TYPE, 14, 4);

	if (!strcmp(variant, "scalars")) {
		write_scalars(&g, h);
		scenario_end(&g);
		return;
	}
	if (!strcmp(variant, "prologue")) {
		write_prologue(&g, h, lt, desc, l, algo, steps);
		scenario_end(&g);
		return;
	}
	uint64_t pa = 0x7e0000000000, pb = 0x7e0010000000,
		 pc = 0x7e0020000000, pd = 0x7e0030000000,
		 pe = 0x7e0040000000;
	int32_t elems = 4096 * 4096;
	for (int i = 0; i < steps; i++) {
		uint64_t seq = CALL(&g, "cublasSgemm_v2", 6000, U(h), U(0),
				    U(0), U(1024), U(1024), U(1024), M(1.0),
				    U(pa), U(1024), U(pb), U(1024), M(0.0),
				    U(pc), U(1024));
		launch(&g, seq, K_CUBLAS_TF32, 40000, 64, 256);
		/* SiLU on its output: no cuBLASLt epilogue computes it */
		launch(&g, 0, K_SILU, 6000, 1024 * 1024 / 512, 128);
		/* GemmEx, then PyTorch's bias add and GELU on its output */
		seq = CALL(&g, "cublasGemmEx", 7000, U(h), U(1), U(0),
			   U(4096), U(4096), U(1024), MV(1.0), U(pa), U(14),
			   U(1024), U(pb), U(14), U(1024), MV(0.0), U(pd),
			   U(14), U(4096), U(68), U((uint64_t)-1));
		launch(&g, seq, K_NVJET_TN, changed ? 300000 : 250000, 132,
		       384);
		launch(&g, 0, kname(K_BIAS, "N3c108BFloat16E"), 31000,
		       elems / 512, 128);
		launch(&g, 0, kname(K_GELU, "N3c108BFloat16E"), 45000,
		       elems / 1024, 128);
		seq = CALL(&g, "cublasGemmStridedBatchedEx", 8000, U(h), U(1),
			   U(0), U(512), U(512), U(64), MV(1.0), U(pa), U(2),
			   U(64), U(32768), U(pb), U(2), U(64), U(32768),
			   MV(0.0), U(pc), U(2), U(512), U(262144), U(16),
			   U(68), U(99));
		kernel(&g, seq, K_CUBLAS_F16, 30000);
		seq = CALL(&g, "cublasSgemv_v2", 5000, U(h), U(0), U(4096),
			   U(4096), M(1.0), U(pa), U(4096), U(pb), U(1),
			   M(1.0), U(pc), U(1));
		kernel(&g, seq, K_GEMV, 25000);
		seq = CALL(&g, "cublasDtrsm_v2", 5000, U(h), U(0), U(0), U(0),
			   U(0), U(512), U(256), MD(1.0), U(pa), U(512), U(pb),
			   U(512));
		kernel(&g, seq, K_TRSM, 35000);
		seq = CALL(&g, "cublasDsyrk_v2", 5000, U(h), U(0), U(0),
			   U(512), U(256), MD(1.0), U(pa), U(512), MD(0.0),
			   U(pc), U(512));
		kernel(&g, seq, K_SYRK, 20000);
		/* alpha and beta floats: their descriptor's scale type,
		 * CUDA_R_32F (0), recorded after the arguments */
		seq = CALL(&g, "cublasLtMatmul", 9000, U(lt), U(desc), M(1.0),
			   U(pa), U(l[0]), U(pb), U(l[1]), M(0.0), U(pe),
			   U(l[2]), U(pe), U(l[3]), X(algo, 64), U(ws),
			   U(changed ? 1u << 20 : 4u << 20), U(stream), U(0));
		if (!i)
			lt_algo_query(&g, algo, lt_values);
		kernel(&g, seq, K_NVJET_GELU, changed ? 36000 : 24000);
		seq = CALL(&g, "cublasLtMatmul", 9000, U(lt), U(bdesc), M(1.0),
			   U(pa), U(l[0]), U(pb), U(l[1]), M(0.0), U(pe),
			   U(l[2]), U(pe), U(l[3]), X(NULL, 0), U(ws),
			   U(4u << 20), U(stream), U(0));
		launch(&g, seq, K_NVJET_BIAS, 22000, 132, 384);
		launch(&g, 0, kname(K_GELU, "N3c108BFloat16E"), 4000,
		       2048 * 512 / 1024, 128);
		/* a product too small to matter (under 1% of GPU time) */
		seq = CALL(&g, "cublasDgemm_v2", 3000, U(h), U(0), U(0),
			   U(64), U(64), U(64), MD(1.0), U(pa), U(64), U(pb),
			   U(64), MD(0.0), U(pc), U(64));
		kernel(&g, seq, K_CUBLAS_F64, 3000);
		/* launched by no recorded call */
		kernel(&g, 0, K_CUBLAS_TF32, 15000);
		g.t = g.gpu + 20000;
	}
	/* a GemmEx captured into a CUDA graph (graph 1, executable 2), the
	 * graph launched 3 times */
	const uint32_t i0[] = { 0 };
	const char *const captured[] = { K_NVJET_TN };
	uint64_t seq = CALL(&g, "cublasGemmEx", 7000, U(h), U(1), U(0),
			    U(4096), U(4096), U(1024), MV(1.0), U(pa), U(14),
			    U(1024), U(pb), U(14), U(1024), MV(0.0), U(pd),
			    U(14), U(4096), U(68), U((uint64_t)-1));
	graph_node(&g, seq, 1, 0, DT_GRAPH_CAPTURED, K_NVJET_TN);
	graph_link(&g, DT_GRAPH_INSTANTIATED, 1, 2, 0, 0);
	for (int i = 0; i < 3; i++)
		graph_launch(&g, 2, 1, i0, captured);
	if (!strcmp(variant, "nested")) {
		/* a GemmEx that runs through cuBLASLt's public matmul: the
		 * inner call's record first, as the shim commits it; the
		 * kernel is the outer call's */
		uint64_t outer_t = g.t, outer_seq = g.seq;
		g.seq++;
		g.t += 1000;
		g.call_flags = DT_CALL_NESTED;
		CALL(&g, "cublasLtMatmul", 3000, U(lt), U(bdesc), M(1.0),
		     U(pa), U(l[0]), U(pb), U(l[1]), M(0.0), U(pe), U(l[2]),
		     U(pe), U(l[3]), X(NULL, 0), U(ws), U(4u << 20),
		     U(stream), U(0));
		g.call_flags = 0;
		uint64_t inner_end = g.t, last_seq = g.seq;
		g.t = outer_t;
		g.seq = outer_seq;
		seq = CALL(&g, "cublasGemmEx", inner_end + 1000 - outer_t,
			   U(h), U(1), U(0), U(4096), U(4096), U(1024),
			   MV(1.0), U(pa), U(14), U(1024), U(pb), U(14),
			   U(1024), MV(0.0), U(pd), U(14), U(4096), U(68),
			   U((uint64_t)-1));
		kernel(&g, seq, K_NVJET_TN, 250000);
		g.seq = last_seq;
		nested_typed(&g, h, lt, l);
		nested_elsewhere(&g, h, lt, desc, l);
	}
	CALL(&g, "cublasLtMatmulDescDestroy", 300, U(desc));
	CALL(&g, "cublasDestroy_v2", 50000, U(h));
	scenario_end(&g);
}

/* The norm scenario (OUT_DIR/norm.dnnt): a layer normalization built as
 * a backend graph (NORM_FORWARD, training phase: X [16,64,32,32] FP32,
 * scale and bias per channel, epsilon by value, Y, mean and inverse
 * variance per sample) and executed `steps` times. */
static uint64_t norm_tensor(struct gen *g, int64_t uid, int64_t c, int64_t hw,
			    int64_t n, bool by_value)
{
	int64_t dims[4] = { n, c, hw, hw },
		strides[4] = { c * hw * hw, hw * hw, hw, 1 };
	uint64_t t = bk_create(g, BTYPE("TENSOR"));
	uint8_t yes = 1;

	bk_set1(g, t, ATTR("TENSOR_DATA_TYPE"), ATYPE("DATA_TYPE"),
		E("cudnnDataType_t", "CUDNN_DATA_FLOAT"), 4);
	bk_set(g, t, ATTR("TENSOR_DIMENSIONS"), ATYPE("INT64"), dims, 4, 8);
	bk_set(g, t, ATTR("TENSOR_STRIDES"), ATYPE("INT64"), strides, 4, 8);
	bk_set1(g, t, ATTR("TENSOR_UNIQUE_ID"), ATYPE("INT64"), uid, 8);
	bk_set1(g, t, ATTR("TENSOR_BYTE_ALIGNMENT"), ATYPE("INT64"), 16, 8);
	if (by_value)
		bk_set(g, t, ATTR("TENSOR_IS_BY_VALUE"), ATYPE("BOOLEAN"), &yes,
		       1, 1);
	CALL(g, "cudnnBackendFinalize", 3000, U(t));
	return t;
}

static void write_norm(const char *dir, int steps, int threads)
{
	(void)threads;
	struct gen g;
	static const char *const roles[] = {
		"CUDNN_ATTR_OPERATION_NORM_FWD_XDESC",
		"CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC",
		"CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC",
		"CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC",
		"CUDNN_ATTR_OPERATION_NORM_FWD_YDESC",
		"CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC",
		"CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC",
	};
	uint64_t t[7];

	scenario_begin(&g, dir, "norm");
	uint64_t handle = 0x1000;
	uint64_t seq = CALL(&g, "cudnnCreate", 300000, U(handle));
	kernel(&g, seq, "cudnn::init_kernel", 2000);
	t[0] = norm_tensor(&g, 1, 64, 32, 16, false);
	t[1] = norm_tensor(&g, 2, 64, 1, 1, false);
	t[2] = norm_tensor(&g, 3, 64, 1, 1, false);
	t[3] = norm_tensor(&g, 4, 1, 1, 1, true);
	t[4] = norm_tensor(&g, 5, 64, 32, 16, false);
	t[5] = norm_tensor(&g, 6, 1, 1, 16, false);
	t[6] = norm_tensor(&g, 7, 1, 1, 16, false);
	uint64_t op = bk_create(&g, BTYPE("OPERATION_NORM_FORWARD"));
	bk_set1(&g, op, ATTR("OPERATION_NORM_FWD_MODE"), ATYPE("NORM_MODE"),
		E("cudnnBackendNormMode_t", "CUDNN_LAYER_NORM"), 4);
	bk_set1(&g, op, ATTR("OPERATION_NORM_FWD_PHASE"),
		ATYPE("NORM_FWD_PHASE"),
		E("cudnnBackendNormFwdPhase_t", "CUDNN_NORM_FWD_TRAINING"), 4);
	for (int i = 0; i < 7; i++)
		bk_set(&g, op, E("cudnnBackendAttributeName_t", roles[i]),
		       ATYPE("BACKEND_DESCRIPTOR"), &t[i], 1, 8);
	CALL(&g, "cudnnBackendFinalize", 4000, U(op));
	uint64_t graph = bk_create(&g, BTYPE("OPERATIONGRAPH"));
	bk_set(&g, graph, ATTR("OPERATIONGRAPH_HANDLE"), ATYPE("HANDLE"),
	       &handle, 1, 8);
	bk_set(&g, graph, ATTR("OPERATIONGRAPH_OPS"),
	       ATYPE("BACKEND_DESCRIPTOR"), &op, 1, 8);
	CALL(&g, "cudnnBackendFinalize", 20000, U(graph));
	uint64_t plan = matmul_plan(&g, handle, graph, 2, 1, 0);
	static const int64_t uids[] = { 1, 2, 3, 4, 5, 6, 7 };
	uint64_t ptrs[] = { 0x7f0000000000, 0x7f0001000000, 0x7f0002000000,
			    0x7ffc00001000, 0x7f0003000000, 0x7f0004000000,
			    0x7f0005000000 };
	uint64_t ws = 0;
	for (int i = 0; i < steps; i++) {
		uint64_t vp = bk_create(&g, BTYPE("VARIANT_PACK"));
		bk_set(&g, vp, ATTR("VARIANT_PACK_UNIQUE_IDS"), ATYPE("INT64"),
		       uids, 7, 8);
		bk_set(&g, vp, ATTR("VARIANT_PACK_DATA_POINTERS"),
		       ATYPE("VOID_PTR"), ptrs, 7, 8);
		bk_set(&g, vp, ATTR("VARIANT_PACK_WORKSPACE"),
		       ATYPE("VOID_PTR"), &ws, 1, 8);
		CALL(&g, "cudnnBackendFinalize", 2000, U(vp));
		seq = CALL(&g, "cudnnBackendExecute", 8000, U(handle), U(plan),
			   U(vp));
		kernel(&g, seq, "cudnn::norm_fwd_kernel", 10000);
		CALL(&g, "cudnnBackendDestroyDescriptor", 1000, U(vp));
	}
	scenario_end(&g);
}

/* The rnn scenario (OUT_DIR/rnn.dnnt): the legacy calls PyTorch's LSTM
 * and small CNN make, `steps` times: a 2-layer LSTM through the RNN API
 * v8 (FP32, input 256, hidden 512, 64 steps of a batch of 32, so more
 * sequence lengths than a descriptor's array keeps inline; dropout 0.25
 * with seed 42 between its layers), forward in training mode, backward
 * data and weights (h and c as PyTorch shapes them, [2,32,512,1,1]);
 * and a batch normalization's Ex variants, forward
 * training and backward (NCHW [8,16,14,14], spatial persistent, bnOps
 * BN: no z, no activation, backward without y), with workspace and
 * reserve space. */
static uint64_t tensor_nd(struct gen *g, int nb, const int32_t *dims)
{
	int32_t strides[8];
	uint64_t d = ptr(g);

	strides[nb - 1] = 1;
	for (int i = nb - 2; i >= 0; i--)
		strides[i] = strides[i + 1] * dims[i + 1];
	CALL(g, "cudnnCreateTensorDescriptor", 800, U(d));
	CALL(g, "cudnnSetTensorNdDescriptor", 900, U(d),
	     U(E("cudnnDataType_t", "CUDNN_DATA_FLOAT")), U(nb),
	     X(dims, (uint32_t)nb), X(strides, (uint32_t)nb));
	return d;
}

static uint64_t rnn_data(struct gen *g, int steps, int batch, int vec)
{
	int32_t lengths[32];
	uint64_t d = ptr(g);

	for (int i = 0; i < batch && i < 32; i++)
		lengths[i] = steps;
	CALL(g, "cudnnCreateRNNDataDescriptor", 800, U(d));
	CALL(g, "cudnnSetRNNDataDescriptor", 900, U(d),
	     U(E("cudnnDataType_t", "CUDNN_DATA_FLOAT")),
	     U(E("cudnnRNNDataLayout_t",
		 "CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED")),
	     U(steps), U(batch), U(vec), X(lengths, (uint32_t)batch), K(0));
	return d;
}

static void write_rnn(const char *dir, int steps, int threads)
{
	(void)threads;
	struct gen g;
	const int32_t hdims[5] = { 2, 32, 512, 1, 1 },
		      xdims[4] = { 8, 16, 14, 14 };
	uint64_t handle = 0x1000, drop = 0, rnn = 0, seq;

	scenario_begin(&g, dir, "rnn");
	seq = CALL(&g, "cudnnCreate", 300000, U(handle));
	kernel(&g, seq, "cudnn::init_kernel", 2000);
	drop = ptr(&g);
	CALL(&g, "cudnnCreateDropoutDescriptor", 800, U(drop));
	CALL(&g, "cudnnSetDropoutDescriptor", 50000, U(drop), U(handle),
	     ((struct val){ .f = 0.25 }), U(0x7f00f0000000), U(1024), U(42));
	rnn = ptr(&g);
	CALL(&g, "cudnnCreateRNNDescriptor", 800, U(rnn));
	CALL(&g, "cudnnSetRNNDescriptor_v8", 2000, U(rnn),
	     U(E("cudnnRNNAlgo_t", "CUDNN_RNN_ALGO_STANDARD")),
	     U(E("cudnnRNNMode_t", "CUDNN_LSTM")),
	     U(E("cudnnRNNBiasMode_t", "CUDNN_RNN_DOUBLE_BIAS")),
	     U(E("cudnnDirectionMode_t", "CUDNN_UNIDIRECTIONAL")),
	     U(E("cudnnRNNInputMode_t", "CUDNN_LINEAR_INPUT")),
	     U(E("cudnnDataType_t", "CUDNN_DATA_FLOAT")),
	     U(E("cudnnDataType_t", "CUDNN_DATA_FLOAT")),
	     U(E("cudnnMathType_t", "CUDNN_DEFAULT_MATH")), U(256), U(512),
	     U(512), U(2), U(drop), U(0));
	uint64_t x = rnn_data(&g, 64, 32, 256), y = rnn_data(&g, 64, 32, 512);
	uint64_t h = tensor_nd(&g, 5, hdims), c = tensor_nd(&g, 5, hdims);
	uint64_t bx = tensor_nd(&g, 4, xdims), bp = ptr(&g);
	CALL(&g, "cudnnCreateTensorDescriptor", 800, U(bp));
	int64_t mode =
		E("cudnnBatchNormMode_t", "CUDNN_BATCHNORM_SPATIAL_PERSISTENT");
	CALL(&g, "cudnnDeriveBNTensorDescriptor", 900, U(bp), U(bx), U(mode));
	uint64_t m = 0x7e0000000000, ws = 0x7e1000000000, w = 6299648 * 4,
		 train = E("cudnnForwardMode_t", "CUDNN_FWD_MODE_TRAINING");
	for (int i = 0; i < steps; i++) {
		seq = CALL(&g, "cudnnRNNForward", 30000, U(handle), U(rnn),
			   U(train), U(m), U(x), U(m + 0x1000), U(y),
			   U(m + 0x2000), U(h), U(m + 0x3000), U(m + 0x4000),
			   U(c), U(m + 0x5000), U(m + 0x6000), U(w),
			   U(m + 0x7000), U(1 << 20), U(ws), U(8 << 20),
			   U(ws + 0x100000));
		kernel(&g, seq, "RNN_blockPersist_fp_LSTM", 900000);
		seq = CALL(&g, "cudnnRNNBackwardData_v8", 30000, U(handle),
			   U(rnn), U(m), U(y), U(m + 0x2000), U(m + 0x8000),
			   U(x), U(m + 0x9000), U(h), U(m + 0x3000),
			   U(m + 0xa000), U(m + 0xb000), U(c), U(m + 0x5000),
			   U(m + 0xc000), U(m + 0xd000), U(w), U(m + 0x7000),
			   U(1 << 20), U(ws), U(8 << 20), U(ws + 0x100000));
		kernel(&g, seq, "RNN_blockPersist_bp_LSTM", 1100000);
		seq = CALL(&g, "cudnnRNNBackwardWeights_v8", 30000, U(handle),
			   U(rnn),
			   U(E("cudnnWgradMode_t", "CUDNN_WGRAD_MODE_ADD")),
			   U(m), U(x), U(m + 0x1000), U(h), U(m + 0x3000), U(y),
			   U(m + 0x2000), U(w), U(m + 0xe000), U(1 << 20),
			   U(ws), U(8 << 20), U(ws + 0x100000));
		kernel(&g, seq, "RNN_blockPersist_wgrad_LSTM", 700000);
		seq = CALL(&g, "cudnnBatchNormalizationForwardTrainingEx", 9000,
			   U(handle), U(mode), U(0), K(1), K(0), U(bx),
			   U(m + 0x10000), U(0), U(0), U(bx), U(m + 0x11000),
			   U(bp), U(m + 0x12000), U(m + 0x13000),
			   ((struct val){ .f = 0.1 }), U(m + 0x14000),
			   U(m + 0x15000), ((struct val){ .f = 1e-5 }),
			   U(m + 0x16000), U(m + 0x17000), U(0), U(ws), U(4096),
			   U(ws + 0x100000), U(8192));
		kernel(&g, seq, "bn_fw_tr_1C11_kernel_NCHW", 12000);
		seq = CALL(&g, "cudnnBatchNormalizationBackwardEx", 9000,
			   U(handle), U(mode), U(0), K(1), K(0), K(1), K(0),
			   U(bx), U(m + 0x10000), U(0), U(0), U(bx),
			   U(m + 0x18000), U(0), U(0), U(bx), U(m + 0x19000),
			   U(bp), U(m + 0x12000), U(0), U(m + 0x1a000),
			   U(m + 0x1b000), ((struct val){ .f = 1e-5 }),
			   U(m + 0x16000), U(m + 0x17000), U(0), U(ws), U(4096),
			   U(ws + 0x100000), U(8192));
		kernel(&g, seq, "bn_bw_1C11_kernel_new", 15000);
		g.t = g.gpu + 20000;
	}
	scenario_end(&g);
}

/* The scenarios, each writing its own traces into dir (what of steps and
 * threads it takes, its options say). */
static const struct scenario {
	const char *name, *options;
	void (*write)(const char *dir, int steps, int threads);
} scenarios[] = {
	{ "fusion", " [--steps N]", write_fusion_scenario },
	{ "churn", " [--threads N] [--steps N]", write_churn },
	{ "graphs", "", write_graphs },
	{ "threads", "", write_threads },
	{ "metrics", " [--steps N]", write_metrics },
	{ "modules", " [--steps N]", write_modules },
	{ "exit", " [--steps N]", write_exit },
	{ "sampled", " [--steps N]", write_sampled },
	{ "hostile", " [--steps N]", write_hostile },
	{ "extreme", "", write_extreme },
	{ "ranges", " [--steps N]", write_ranges },
	{ "libraries", " [--steps N]", write_libraries },
	{ "gemm", " [--steps N] [--variant changed|huge|static|nested|prologue|scalars]", write_gemm },
	{ "startup", " [--steps N]", write_startup },
	{ "norm", " [--steps N]", write_norm },
	{ "rnn", " [--steps N]", write_rnn },
};
#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

int main(int argc, char **argv)
{
	int ranks = 2, steps = 4, threads = 64;
	const struct scenario *scn = NULL;

	if (argc < 3) {
		fprintf(stderr,
			"usage: synth-trace API_LISTING OUT_DIR "
			"[--ranks N] [--steps N] [--variant noise|changed]\n"
			"       [--lose N]  (records counted as lost)\n"
			"       [--straggler R]  (the others wait for rank R)\n");
		for (size_t k = 0; k < N_SCENARIOS; k++)
			fprintf(stderr,
				"       synth-trace API_LISTING OUT_DIR "
				"--scenario %s%s\n",
				scenarios[k].name, scenarios[k].options);
		return 2;
	}
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--ranks"))
			ranks = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--steps"))
			steps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--variant"))
			variant = argv[i + 1];
		else if (!strcmp(argv[i], "--lose"))
			lose = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--straggler"))
			straggler = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--threads"))
			threads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--scenario")) {
			for (size_t k = 0; k < N_SCENARIOS && !scn; k++)
				if (!strcmp(argv[i + 1], scenarios[k].name))
					scn = &scenarios[k];
			if (!scn)
				die("unknown scenario %s", argv[i + 1]);
		} else {
			die("unknown option %s", argv[i]);
		}
	}
	load_listing(argv[1]);
	const char *slash = strrchr(argv[1], '/');
	if (slash)
		snprintf(listing_dir, sizeof(listing_dir), "%.*s",
			 (int)(slash - argv[1]), argv[1]);
	if (scn) {
		scn->write(argv[2], steps, threads);
		return 0;
	}
	for (int r = 0; r < ranks; r++)
		write_rank(argv[2], r, ranks, steps);
	return 0;
}
