/*
 * dnntrace-sample: a small program that drives the real cuDNN so that
 * `dnntrace record -- dnntrace-sample` has something to show. It builds one
 * fp32 NCHW 3x3 convolution (8x16x32x32 input, 32 filters, pad 1) twice:
 * through the legacy API, with algorithm search, ReLU, 2x2 max pooling and
 * softmax after it, and as a backend graph built by hand (heuristics, execution
 * plan, variant pack, execute); each runs -n times. Without a usable GPU it
 * still makes every call that needs no device (descriptors, the graph,
 * heuristics, variant packs), says which calls it skipped, and exits 0, so
 * CPU-only tests can trace it too. It is not a benchmark and not a test of
 * cuDNN's numerics: it checks one or two output values per path only to catch a
 * broken setup.
 */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* cuDNN 9 marks the legacy convolution, filter, activation and pooling API
 * deprecated, and also the graph's and plan's HANDLE attributes. Applications
 * such as PyTorch still make these calls, and showing them in a trace is the
 * point of this program. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* The problem: input BATCH x IN_CH x IN_H x IN_W, OUT_CH filters of FILTER x
 * FILTER. */
enum { BATCH = 8, IN_CH = 16, IN_H = 32, IN_W = 32, OUT_CH = 32, FILTER = 3 };
enum { PAD = 1, STRIDE = 1, DILATION = 1, POOL = 2 };
enum { OUT_H = (IN_H + 2 * PAD - DILATION * (FILTER - 1) - 1) / STRIDE + 1 };
enum { OUT_W = (IN_W + 2 * PAD - DILATION * (FILTER - 1) - 1) / STRIDE + 1 };
/* Backend tensor ids: the variant pack binds device pointers to them. */
enum { UID_X = 101, UID_W = 102, UID_Y = 103 };
enum { MAX_ENGINE_CONFIGS = 16 };
/* Inputs are constant and exact in TF32, so every interior output is IN_CH * 9
 * * 1 * 0.125 = 18 whatever engine runs, and softmax over identical channels
 * gives 1 / OUT_CH. */
#define X_VALUE    1.0f
#define W_VALUE    0.125f
#define Y_INTERIOR ((float)(IN_CH * FILTER * FILTER) * X_VALUE * W_VALUE)

struct sample {
	int iterations;
	bool gpu; /* false: handle-taking calls are skipped, buffers stay NULL
		   */
	cudnnHandle_t handle; /* NULL without a GPU */
	cudaStream_t stream;
	float *x, *w;       /* device input and filters, shared by both paths */
	char no_gpu[256];   /* why no GPU is usable */
	char skipped[1024]; /* calls not made for lack of a GPU, comma-separated
			     */
};

static bool cudnn_ok(cudnnStatus_t status, const char *call, int line)
{
	if (status == CUDNN_STATUS_SUCCESS)
		return true;
	char detail[512];
	cudnnGetLastErrorString(detail, sizeof detail);
	fprintf(stderr, "dnntrace-sample:%d: %s: %s%s%s\n", line, call,
		cudnnGetErrorString(status), detail[0] ? ": " : "", detail);
	return false;
}

static bool cuda_ok(cudaError_t err, const char *call, int line)
{
	if (err == cudaSuccess)
		return true;
	fprintf(stderr, "dnntrace-sample:%d: %s: %s (%s)\n", line, call,
		cudaGetErrorName(err), cudaGetErrorString(err));
	return false;
}

/* Reading cuDNN's last error message clears it; a successful legacy call does
 * not. Clear it after an expected failure so that it cannot be shown later next
 * to an unrelated error. */
static void forget_last_error(void)
{
	char discard[256];
	cudnnGetLastErrorString(discard, sizeof discard);
}

/* For calls that fail by design without a GPU, where the handle is NULL:
 * cuDNN 9.19 was checked to return an error for each of them rather than crash.
 */
static bool ok_unless_no_gpu(bool gpu, cudnnStatus_t status, const char *call,
			     int line)
{
	if (gpu)
		return cudnn_ok(status, call, line);
	if (status != CUDNN_STATUS_SUCCESS)
		forget_last_error();
	return true;
}

/* One-line checks; a function using them has an `out:` label that releases what
 * it holds. */
// clang-format off
#define CHECK(call) do { if (!cudnn_ok((call), #call, __LINE__)) goto out; } while (0)
#define CHECK_CUDA(call) do { if (!cuda_ok((call), #call, __LINE__)) goto out; } while (0)
#define CHECK_IF_GPU(s, call) \
	do { if (!ok_unless_no_gpu((s)->gpu, (call), #call, __LINE__)) goto out; } while (0)
/* Release a descriptor or buffer if it was made, keeping `ok` false on any failure. */
#define DESTROY(fn, d) do { if ((d) && !cudnn_ok(fn(d), #fn, __LINE__)) ok = false; } while (0)
#define FREE(p) \
	do { if ((p) && !cuda_ok(cudaFree(p), "cudaFree(" #p ")", __LINE__)) ok = false; } while (0)
// clang-format on

static void skip(struct sample *s, const char *calls)
{
	size_t len = strlen(s->skipped);
	snprintf(s->skipped + len, sizeof s->skipped - len, "%s%s",
		 len ? ", " : "", calls);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void report(const char *stage, double start_ms, const char *what)
{
	printf("  %-8s %9.3f ms  %s\n", stage, now_ms() - start_ms, what);
}

static bool close_to(float got, float want)
{
	float d = got - want;
	return d <= 1e-3f * want && d >= -1e-3f * want;
}

static cudaError_t upload_filled(float **dev, size_t count, float value)
{
	float *host = malloc(count * sizeof *host);
	if (!host)
		return cudaErrorMemoryAllocation;
	for (size_t i = 0; i < count; i++)
		host[i] = value;
	cudaError_t err = cudaMalloc((void **)dev, count * sizeof *host);
	if (err == cudaSuccess)
		err = cudaMemcpy(*dev, host, count * sizeof *host,
				 cudaMemcpyHostToDevice);
	free(host);
	return err;
}

/* Handle, stream and inputs. Without a GPU, cudnnCreate returns
 * CUDNN_STATUS_NOT_INITIALIZED. */
static bool stage_handle(struct sample *s)
{
	double t0 = now_ms();
	char what[256];
	cudnnStatus_t status = cudnnCreate(&s->handle);
	if (status != CUDNN_STATUS_SUCCESS) {
		int count = 0;
		cudaError_t err = cudaGetDeviceCount(&count);
		if (err == cudaSuccess &&
		    count > 0) /* a GPU is there: this is a real failure */
			return cudnn_ok(status, "cudnnCreate(&s->handle)",
					__LINE__);
		s->handle = NULL;
		forget_last_error();
		snprintf(s->no_gpu, sizeof s->no_gpu,
			 "cudnnCreate: %s; cudaGetDeviceCount: %s",
			 cudnnGetErrorString(status), cudaGetErrorName(err));
		skip(s, "cudaStreamCreate, cudnnSetStream, cudaMalloc");
		report("handle", t0, s->no_gpu);
		return true;
	}
	s->gpu = true;
	int dev;
	struct cudaDeviceProp prop;
	CHECK_CUDA(cudaGetDevice(&dev));
	CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
	CHECK_CUDA(cudaStreamCreate(&s->stream));
	CHECK(cudnnSetStream(s->handle, s->stream));
	CHECK_CUDA(upload_filled(&s->x, (size_t)BATCH * IN_CH * IN_H * IN_W,
				 X_VALUE));
	CHECK_CUDA(upload_filled(
		&s->w, (size_t)OUT_CH * IN_CH * FILTER * FILTER, W_VALUE));
	snprintf(what, sizeof what,
		 "cudnnCreate, cudnnSetStream on GPU %d (%.64s, sm_%d%d)", dev,
		 prop.name, prop.major, prop.minor);
	report("handle", t0, what);
	return true;
out:
	return false;
}

static const char *fwd_algo_name(cudnnConvolutionFwdAlgo_t algo)
{
	static const char *const names[] = {
		"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM",
		"GEMM",          "DIRECT",
		"FFT",           "FFT_TILING",
		"WINOGRAD",      "WINOGRAD_NONFUSED",
	};
	return (unsigned)algo < sizeof names / sizeof names[0] ? names[algo]
							       : "?";
}

/* Legacy API: conv (algorithm from cudnnFind), ReLU in place, 2x2 max pooling,
 * channel softmax. */
static bool stage_legacy(struct sample *s)
{
	const float one = 1.0f, zero = 0.0f;
	cudnnTensorDescriptor_t xd = NULL, yd = NULL, pd = NULL;
	cudnnFilterDescriptor_t wd = NULL;
	cudnnConvolutionDescriptor_t cd = NULL;
	cudnnActivationDescriptor_t ad = NULL;
	cudnnPoolingDescriptor_t pool = NULL;
	cudnnConvolutionFwdAlgoPerf_t heur[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
	cudnnConvolutionFwdAlgoPerf_t found[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
	int y[4], p[4], nheur = 0, nfound = 0, pick = -1;
	float *ydev = NULL, *pdev = NULL, *prob = NULL, y_mid = 0, prob0 = 0;
	void *ws = NULL;
	size_t ws_size = 0;
	bool ok = false;
	char what[512];
	double t0 = now_ms();

	CHECK(cudnnCreateTensorDescriptor(&xd));
	CHECK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW,
					 CUDNN_DATA_FLOAT, BATCH, IN_CH, IN_H,
					 IN_W));
	CHECK(cudnnCreateFilterDescriptor(&wd));
	CHECK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT,
					 CUDNN_TENSOR_NCHW, OUT_CH, IN_CH,
					 FILTER, FILTER));
	CHECK(cudnnCreateConvolutionDescriptor(&cd));
	CHECK(cudnnSetConvolution2dDescriptor(
		cd, PAD, PAD, STRIDE, STRIDE, DILATION, DILATION,
		CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
	CHECK(cudnnSetConvolutionMathType(cd, CUDNN_DEFAULT_MATH));
	CHECK(cudnnGetConvolutionNdForwardOutputDim(cd, xd, wd, 4, y));
	CHECK(cudnnCreateTensorDescriptor(&yd));
	CHECK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW,
					 CUDNN_DATA_FLOAT, y[0], y[1], y[2],
					 y[3]));
	CHECK(cudnnCreateActivationDescriptor(&ad));
	CHECK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU,
					   CUDNN_NOT_PROPAGATE_NAN, 0.0));
	CHECK(cudnnCreatePoolingDescriptor(&pool));
	CHECK(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX,
					  CUDNN_NOT_PROPAGATE_NAN, POOL, POOL,
					  0, 0, POOL, POOL));
	CHECK(cudnnGetPooling2dForwardOutputDim(pool, yd, &p[0], &p[1], &p[2],
						&p[3]));
	CHECK(cudnnCreateTensorDescriptor(&pd));
	CHECK(cudnnSetTensor4dDescriptor(pd, CUDNN_TENSOR_NCHW,
					 CUDNN_DATA_FLOAT, p[0], p[1], p[2],
					 p[3]));
	int n = snprintf(what, sizeof what,
			 "conv %dx%dx%dx%d * %dx%dx%dx%d -> %dx%dx%dx%d", BATCH,
			 IN_CH, IN_H, IN_W, OUT_CH, IN_CH, FILTER, FILTER, y[0],
			 y[1], y[2], y[3]);

	if (!s->gpu) {
		/* cuDNN 9.19 crashes in cudnnGetConvolutionForwardAlgorithm_v7
		 * on a NULL handle */
		skip(s, "cudnnGetConvolutionForwardAlgorithm_v7, "
			"cudnnFindConvolutionForwardAlgorithm, "
			"cudnnGetConvolutionForwardWorkspaceSize, "
			"cudnnConvolutionForward, "
			"cudnnActivationForward, cudnnPoolingForward, "
			"cudnnSoftmaxForward");
		snprintf(what + n, sizeof what - n,
			 ", relu, maxpool -> %dx%dx%dx%d, softmax: descriptors "
			 "only",
			 p[0], p[1], p[2], p[3]);
		ok = true;
		goto out;
	}

	CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
		s->handle, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
		&nheur, heur));
	CHECK(cudnnFindConvolutionForwardAlgorithm(
		s->handle, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
		&nfound, found));
	for (int i = 0; i < nfound && pick < 0; i++)
		if (found[i].status == CUDNN_STATUS_SUCCESS)
			pick = i;
	if (pick < 0 || nheur < 1) {
		fprintf(stderr,
			"dnntrace-sample: no usable forward algorithm (%d "
			"heuristic, %d found)\n",
			nheur, nfound);
		goto out;
	}
	cudnnConvolutionFwdAlgo_t algo = found[pick].algo;
	CHECK(cudnnGetConvolutionForwardWorkspaceSize(s->handle, xd, wd, cd, yd,
						      algo, &ws_size));
	size_t ycount = (size_t)y[0] * y[1] * y[2] * y[3],
	       pcount = (size_t)p[0] * p[1] * p[2] * p[3];
	CHECK_CUDA(cudaMalloc((void **)&ydev, ycount * sizeof(float)));
	CHECK_CUDA(cudaMalloc((void **)&pdev, pcount * sizeof(float)));
	CHECK_CUDA(cudaMalloc((void **)&prob, pcount * sizeof(float)));
	if (ws_size > 0)
		CHECK_CUDA(cudaMalloc(&ws, ws_size));

	for (int i = 0; i < s->iterations; i++) {
		CHECK(cudnnConvolutionForward(s->handle, &one, xd, s->x, wd,
					      s->w, cd, algo, ws, ws_size,
					      &zero, yd, ydev));
		CHECK(cudnnActivationForward(s->handle, ad, &one, yd, ydev,
					     &zero, yd, ydev));
		CHECK(cudnnPoolingForward(s->handle, pool, &one, yd, ydev,
					  &zero, pd, pdev));
		CHECK(cudnnSoftmaxForward(s->handle, CUDNN_SOFTMAX_ACCURATE,
					  CUDNN_SOFTMAX_MODE_CHANNEL, &one, pd,
					  pdev, &zero, pd, prob));
	}
	CHECK_CUDA(cudaStreamSynchronize(s->stream));
	/* Image 0, channel 0, centre pixel; and the first softmax output. */
	CHECK_CUDA(cudaMemcpy(&y_mid, ydev + (y[2] / 2) * y[3] + y[3] / 2,
			      sizeof y_mid, cudaMemcpyDeviceToHost));
	CHECK_CUDA(
		cudaMemcpy(&prob0, prob, sizeof prob0, cudaMemcpyDeviceToHost));
	if (!close_to(y_mid, Y_INTERIOR) ||
	    !close_to(prob0, 1.0f / (float)p[1])) {
		fprintf(stderr,
			"dnntrace-sample: legacy path gave y=%g, softmax=%g; "
			"want %g, %g\n",
			y_mid, prob0, Y_INTERIOR, 1.0f / (float)p[1]);
		goto out;
	}
	snprintf(what + n, sizeof what - n,
		 " by %s (heuristic %s, find %.3f ms, workspace %zu B), relu, "
		 "maxpool -> %dx%dx%dx%d, softmax; runs: %d, y=%g, softmax=%g",
		 fwd_algo_name(algo), fwd_algo_name(heur[0].algo),
		 found[pick].time, ws_size, p[0], p[1], p[2], p[3],
		 s->iterations, y_mid, prob0);
	ok = true;
out:
	FREE(ws);
	FREE(prob);
	FREE(pdev);
	FREE(ydev);
	DESTROY(cudnnDestroyTensorDescriptor, pd);
	DESTROY(cudnnDestroyPoolingDescriptor, pool);
	DESTROY(cudnnDestroyActivationDescriptor, ad);
	DESTROY(cudnnDestroyTensorDescriptor, yd);
	DESTROY(cudnnDestroyConvolutionDescriptor, cd);
	DESTROY(cudnnDestroyFilterDescriptor, wd);
	DESTROY(cudnnDestroyTensorDescriptor, xd);
	if (ok)
		report("legacy", t0, what);
	return ok;
}

/* A finalized, packed NCHW fp32 backend tensor. */
static bool make_tensor(cudnnBackendDescriptor_t *t, int64_t uid,
			const int64_t dims[4])
{
	const int64_t strides[4] = { dims[1] * dims[2] * dims[3],
				     dims[2] * dims[3], dims[3], 1 };
	const cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
	const int64_t alignment = 16;

	CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, t));
	CHECK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_DATA_TYPE,
				       CUDNN_TYPE_DATA_TYPE, 1, &dtype));
	CHECK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_DIMENSIONS,
				       CUDNN_TYPE_INT64, 4, dims));
	CHECK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_STRIDES,
				       CUDNN_TYPE_INT64, 4, strides));
	CHECK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID,
				       CUDNN_TYPE_INT64, 1, &uid));
	CHECK(cudnnBackendSetAttribute(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
				       CUDNN_TYPE_INT64, 1, &alignment));
	CHECK(cudnnBackendFinalize(*t));
	return true;
out:
	return false;
}

/* Try to finalize a plan from one engine config. Failure is normal for some
 * configs: the caller tries the next one, so it is not reported as an error. */
static bool try_plan(struct sample *s, cudnnBackendDescriptor_t cfg,
		     cudnnBackendDescriptor_t *plan)
{
	bool ok = false;
	CHECK(cudnnBackendCreateDescriptor(
		CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan));
	CHECK(cudnnBackendSetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
				       CUDNN_TYPE_HANDLE, 1, &s->handle));
	CHECK(cudnnBackendSetAttribute(*plan,
				       CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
				       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg));
	ok = cudnnBackendFinalize(*plan) == CUDNN_STATUS_SUCCESS;
out:
	if (!ok)
		forget_last_error();
	if (!ok && *plan) {
		cudnnBackendDestroyDescriptor(*plan);
		*plan = NULL;
	}
	return ok;
}

/* Backend API: y = conv(x, w) as a one-node graph, the way cudnn-frontend
 * builds it. */
static bool stage_backend(struct sample *s)
{
	const int64_t xdims[4] = { BATCH, IN_CH, IN_H, IN_W };
	const int64_t wdims[4] = { OUT_CH, IN_CH, FILTER, FILTER };
	const int64_t ydims[4] = { BATCH, OUT_CH, OUT_H, OUT_W };
	const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
	const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
	const int64_t spatial = 2, pads[2] = { PAD, PAD },
		      strides[2] = { STRIDE, STRIDE };
	const int64_t dilations[2] = { DILATION, DILATION };
	const float alpha = 1.0f,
		    beta = 0.0f; /* FLOAT, matching the fp32 compute type */
	const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
	const int64_t uids[3] = { UID_X, UID_W, UID_Y };
	cudnnBackendDescriptor_t x = NULL, w = NULL, y = NULL, conv = NULL,
				 op = NULL, graph = NULL;
	cudnnBackendDescriptor_t heur = NULL, plan = NULL, engine = NULL,
				 pack = NULL;
	cudnnBackendDescriptor_t cfgs[MAX_ENGINE_CONFIGS] = { NULL };
	int64_t nresults = 0, ncfgs = 0, chosen = -1, engine_id = -1,
		ws_size = 0, got = 0;
	float *ydev = NULL, y_mid = 0;
	void *ws = NULL;
	bool ok = false;
	char what[512];
	double t0 = now_ms();

	if (!make_tensor(&x, UID_X, xdims) || !make_tensor(&w, UID_W, wdims) ||
	    !make_tensor(&y, UID_Y, ydims))
		goto out;

	CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR,
					   &conv));
	CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
				       CUDNN_TYPE_DATA_TYPE, 1, &compute));
	CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
				       CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
	CHECK(cudnnBackendSetAttribute(conv,
				       CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS,
				       CUDNN_TYPE_INT64, 1, &spatial));
	CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS,
				       CUDNN_TYPE_INT64, 2, dilations));
	CHECK(cudnnBackendSetAttribute(conv,
				       CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
				       CUDNN_TYPE_INT64, 2, strides));
	CHECK(cudnnBackendSetAttribute(conv,
				       CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
				       CUDNN_TYPE_INT64, 2, pads));
	CHECK(cudnnBackendSetAttribute(conv,
				       CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
				       CUDNN_TYPE_INT64, 2, pads));
	CHECK(cudnnBackendFinalize(conv));

	CHECK(cudnnBackendCreateDescriptor(
		CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op));
	CHECK(cudnnBackendSetAttribute(
		op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
		CUDNN_TYPE_FLOAT, 1, &alpha));
	CHECK(cudnnBackendSetAttribute(
		op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
		CUDNN_TYPE_FLOAT, 1, &beta));
	CHECK(cudnnBackendSetAttribute(
		op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
		CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x));
	CHECK(cudnnBackendSetAttribute(
		op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
		CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w));
	CHECK(cudnnBackendSetAttribute(
		op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
		CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y));
	CHECK(cudnnBackendSetAttribute(
		op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
		CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
	CHECK(cudnnBackendFinalize(op));

	/* With a NULL handle cuDNN 9.19 answers BAD_PARAM_NULL_POINTER here;
	 * the attribute is deprecated and the graph finalizes without it. */
	CHECK(cudnnBackendCreateDescriptor(
		CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
	CHECK(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
				       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op));
	CHECK_IF_GPU(s, cudnnBackendSetAttribute(
				graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
				CUDNN_TYPE_HANDLE, 1, &s->handle));
	CHECK(cudnnBackendFinalize(graph));

	/* Heuristics run without a GPU too (9.19 counts 12 results there but
	 * hands out none), so their failure is only an error when a GPU is
	 * present. */
	CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
					   &heur));
	CHECK(cudnnBackendSetAttribute(
		heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
		CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph));
	CHECK(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE,
				       CUDNN_TYPE_HEUR_MODE, 1, &heur_mode));
	CHECK_IF_GPU(s, cudnnBackendFinalize(heur));
	CHECK_IF_GPU(s, cudnnBackendGetAttribute(heur,
						 CUDNN_ATTR_ENGINEHEUR_RESULTS,
						 CUDNN_TYPE_BACKEND_DESCRIPTOR,
						 0, &nresults, NULL));
	int64_t want =
		nresults < MAX_ENGINE_CONFIGS ? nresults : MAX_ENGINE_CONFIGS;
	for (int64_t i = 0; i < want; i++)
		CHECK(cudnnBackendCreateDescriptor(
			CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]));
	if (want > 0)
		CHECK_IF_GPU(s, cudnnBackendGetAttribute(
					heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
					CUDNN_TYPE_BACKEND_DESCRIPTOR, want,
					&ncfgs, cfgs));

	if (s->gpu) {
		for (int64_t i = 0; i < ncfgs && chosen < 0; i++)
			if (try_plan(s, cfgs[i], &plan))
				chosen = i;
		if (chosen < 0) {
			fprintf(stderr,
				"dnntrace-sample: none of %lld engine configs "
				"finalized a plan\n",
				(long long)ncfgs);
			goto out;
		}
		CHECK(cudnnBackendGetAttribute(
			plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
			CUDNN_TYPE_INT64, 1, &got, &ws_size));
		CHECK(cudnnBackendCreateDescriptor(
			CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine));
		CHECK(cudnnBackendGetAttribute(
			cfgs[chosen], CUDNN_ATTR_ENGINECFG_ENGINE,
			CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &engine));
		CHECK(cudnnBackendGetAttribute(
			engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
			CUDNN_TYPE_INT64, 1, &got, &engine_id));
		CHECK_CUDA(cudaMalloc((void **)&ydev, sizeof(float) * BATCH *
							      OUT_CH * OUT_H *
							      OUT_W));
		if (ws_size > 0)
			CHECK_CUDA(cudaMalloc(&ws, (size_t)ws_size));
	} else {
		skip(s, "EXECUTION_PLAN create/set/finalize (heuristics give "
			"no engine config), "
			"cudnnBackendExecute");
	}

	/* One variant pack per execute, as PyTorch does. Without a GPU the
	 * pointers are NULL, which cuDNN accepts until execute time, so a
	 * CPU-only trace still shows these calls. */
	for (int i = 0; i < s->iterations; i++) {
		void *ptrs[3] = { s->x, s->w, ydev };
		CHECK(cudnnBackendCreateDescriptor(
			CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
		CHECK(cudnnBackendSetAttribute(
			pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
			CUDNN_TYPE_VOID_PTR, 3, ptrs));
		CHECK(cudnnBackendSetAttribute(
			pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
			CUDNN_TYPE_INT64, 3, uids));
		CHECK(cudnnBackendSetAttribute(
			pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
			CUDNN_TYPE_VOID_PTR, 1, &ws));
		CHECK(cudnnBackendFinalize(pack));
		if (s->gpu)
			CHECK(cudnnBackendExecute(s->handle, plan, pack));
		CHECK(cudnnBackendDestroyDescriptor(pack));
		pack = NULL;
	}

	int n = snprintf(
		what, sizeof what,
		"conv graph, heuristics mode A: %lld of %lld engine configs",
		(long long)ncfgs, (long long)nresults);
	if (s->gpu) {
		CHECK_CUDA(cudaStreamSynchronize(s->stream));
		CHECK_CUDA(cudaMemcpy(&y_mid,
				      ydev + (OUT_H / 2) * OUT_W + OUT_W / 2,
				      sizeof y_mid, cudaMemcpyDeviceToHost));
		if (!close_to(y_mid, Y_INTERIOR)) {
			fprintf(stderr,
				"dnntrace-sample: backend path computed y=%g "
				"(want %g)\n",
				y_mid, Y_INTERIOR);
			goto out;
		}
		snprintf(what + n, sizeof what - n,
			 ", plan from config %lld (engine %lld, workspace %lld "
			 "B); runs: %d, y=%g",
			 (long long)chosen, (long long)engine_id,
			 (long long)ws_size, s->iterations, y_mid);
	} else {
		snprintf(what + n, sizeof what - n,
			 "; %d variant packs built, no plan", s->iterations);
	}
	ok = true;
out:
	FREE(ws);
	FREE(ydev);
	DESTROY(cudnnBackendDestroyDescriptor, pack);
	DESTROY(cudnnBackendDestroyDescriptor, engine);
	DESTROY(cudnnBackendDestroyDescriptor, plan);
	for (int i = 0; i < MAX_ENGINE_CONFIGS; i++)
		DESTROY(cudnnBackendDestroyDescriptor, cfgs[i]);
	DESTROY(cudnnBackendDestroyDescriptor, heur);
	DESTROY(cudnnBackendDestroyDescriptor, graph);
	DESTROY(cudnnBackendDestroyDescriptor, op);
	DESTROY(cudnnBackendDestroyDescriptor, conv);
	DESTROY(cudnnBackendDestroyDescriptor, y);
	DESTROY(cudnnBackendDestroyDescriptor, w);
	DESTROY(cudnnBackendDestroyDescriptor, x);
	if (ok)
		report("backend", t0, what);
	return ok;
}

/* Wait for the GPU, then release what stage_handle made; safe after a partial
 * stage_handle. */
static bool stage_teardown(struct sample *s)
{
	bool ok = true;
	double t0 = now_ms();
	if (!s->gpu)
		return true;
	if (!cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize()",
		     __LINE__))
		ok = false;
	FREE(s->x);
	FREE(s->w);
	DESTROY(cudnnDestroy, s->handle);
	if (s->stream && !cuda_ok(cudaStreamDestroy(s->stream),
				  "cudaStreamDestroy", __LINE__))
		ok = false;
	if (ok)
		report("teardown", t0,
		       "cudaDeviceSynchronize, cudnnDestroy, "
		       "cudaStreamDestroy");
	return ok;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: dnntrace-sample [-n N]\n"
		"Run a small convolution network through cuDNN's legacy and "
		"backend APIs, to be\n"
		"traced with `dnntrace record -- dnntrace-sample`. Without a "
		"GPU, "
		"make the calls\n"
		"that need none and exit 0.\n\n"
		"  -n, --iterations N  run the compute calls N times (default "
		"3)\n"
		"  -h, --help          print this help\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "iterations", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sample s = { .iterations = 3 };
	int opt;
	while ((opt = getopt_long(argc, argv, "n:h", options, NULL)) != -1) {
		char *end;
		long n;
		switch (opt) {
		case 'n':
			n = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || n < 1 ||
			    n > 1000000) {
				fprintf(stderr,
					"dnntrace-sample: bad -n '%s' (1 to "
					"1000000)\n",
					optarg);
				return 2;
			}
			s.iterations = (int)n;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dnntrace-sample: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}

	size_t version = cudnnGetVersion();
	printf("dnntrace-sample: cuDNN %zu.%zu.%zu, %d iteration%s\n",
	       version / 10000, version / 100 % 100, version % 100,
	       s.iterations, s.iterations == 1 ? "" : "s");
	bool ok = stage_handle(&s) && stage_legacy(&s) && stage_backend(&s);
	ok = stage_teardown(&s) && ok;
	if (!ok)
		return 1;
	if (!s.gpu)
		printf("dnntrace-sample: no usable GPU (%s): made only the "
		       "calls that need "
		       "none; skipped %s\n",
		       s.no_gpu, s.skipped);
	return 0;
}
