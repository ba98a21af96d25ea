/*
 * test-cost.c - FLOPs, bytes and peaks, against numbers worked out by hand
 * (the arithmetic is in the comments) for shapes the GPU workloads run.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>

#include "analyzer-cost.h"
#include "dt-analyzer.h"
#include "test-util.h"

enum { FLOAT = 0, HALF = 2, BF16 = 9 }; /* cudnnDataType_t */

static struct dt_tensor tensor(int64_t dtype, int nb, const int64_t *dims)
{
	struct dt_tensor t = { .valid = true, .dtype = dtype, .nb = nb };
	int64_t s = 1;

	for (int i = nb - 1; i >= 0; i--) {
		t.dims[i] = dims[i];
		t.strides[i] = s;
		s *= dims[i];
	}
	return t;
}

#define T(dtype, ...)                                                \
	tensor(dtype, (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / 8), \
	       (int64_t[]){ __VA_ARGS__ })

#define CHECK_NEAR(a, b)                                                  \
	do {                                                              \
		double a_ = (a), b_ = (b);                                \
		if (fabs(a_ - b_) > 1e-9 * fabs(b_)) {                    \
			fprintf(stderr, "%s:%d: %s = %.17g, not %.17g\n", \
				__FILE__, __LINE__, #a, a_, b_);          \
			dt_test_failures++;                               \
		}                                                         \
	} while (0)

static const char *const conv_fwd =
	"CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR";

static void test_bytes(void)
{
	struct dt_tensor t = T(FLOAT, 2, 3, 4);
	CHECK_EQ_U(dt_tensor_bytes(&t), 2 * 3 * 4 * 4);
	t = T(BF16, 64, 3, 224, 224);
	CHECK_EQ_U(dt_tensor_bytes(&t), 64ull * 3 * 224 * 224 * 2);
	/* a bias broadcast over N, H and W: C elements */
	t = T(HALF, 8, 64, 56, 56);
	t.strides[0] = t.strides[2] = t.strides[3] = 0;
	t.strides[1] = 1;
	CHECK_EQ_U(dt_tensor_bytes(&t), 64 * 2);
	t.is_virtual = true;
	CHECK_EQ_U(dt_tensor_bytes(&t), 0);
}

static void test_convolutions(void)
{
	/* the sample's convolution: Y 8x32x32x32, W 32x16x3x3:
	 * 2 * 262144 * (16 * 9) = 75 497 472 */
	struct dt_tensor x = T(FLOAT, 8, 16, 32, 32),
			 w = T(FLOAT, 32, 16, 3, 3),
			 y = T(FLOAT, 8, 32, 32, 32);
	struct dt_role_tensor ts[] = {
		{ "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X", &x },
		{ "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W", &w },
		{ "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y", &y },
	};
	struct dt_cost_part p;
	dt_cost_backend_op(&p, conv_fwd, ts, 3, 1, NULL);
	CHECK_EQ_U(p.kind, DT_KIND_CONV_FWD);
	CHECK_NEAR(p.flops, 75497472.0);
	CHECK_EQ_U(p.dtype, FLOAT);

	/* ResNet-50's first layer: Y 64x64x112x112 (51 380 224), W
	 * 64x3x7x7 (147 per output): 2 * 51380224 * 147 = 15 105 785 856;
	 * bytes: X 19 267 584 + W 18 816 + Y 102 760 448 in bf16 */
	x = T(BF16, 64, 3, 224, 224);
	w = T(BF16, 64, 3, 7, 7);
	y = T(BF16, 64, 64, 112, 112);
	x.uid = 1, w.uid = 2, y.uid = 3; /* bytes count once per uid */
	dt_cost_backend_op(&p, conv_fwd, ts, 3, 1, NULL);
	const struct dt_cost_part *parts[] = { &p };
	struct dt_cost c;
	dt_cost_graph(&c, parts, 1);
	CHECK_NEAR(c.flops, 15105785856.0);
	CHECK_EQ_U(c.bytes, 19267584 + 18816 + 102760448);
	CHECK(c.tensor_op);
	CHECK_EQ_U(dt_math_of(&c, 1), DT_MATH_BF16);
	CHECK_EQ_U(dt_math_of(&c, 0), DT_MATH_FP32);

	/* backward filter of a 3x3 on 64x256x14x14: dY 64x256x14x14
	 * (3 211 264), dW 256x256x3x3 (2304 per output): 14 797 504 512 */
	struct dt_tensor dy = T(BF16, 64, 256, 14, 14),
			 dw = T(BF16, 256, 256, 3, 3);
	struct dt_role_tensor bf[] = {
		{ "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY", &dy },
		{ "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW", &dw },
	};
	dt_cost_backend_op(&p,
			   "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_"
			   "FILTER_DESCRIPTOR",
			   bf, 2, 1, NULL);
	CHECK_EQ_U(p.kind, DT_KIND_CONV_BWD_FILTER);
	CHECK_NEAR(p.flops, 14797504512.0);
}

/* Attention as PyTorch builds it (a matrix product, the softmax's
 * reductions and pointwise operations, a causal mask from two index
 * generators, and a second product), b=4 h=16 s=1024 d=64: each product
 * is 2 * 4*16*1024*1024 * 64 = 8 589 934 592; the mask halves them. */
static void test_attention(void)
{
	struct dt_tensor q = T(BF16, 4, 16, 1024, 64),
			 kt = T(BF16, 4, 16, 64, 1024),
			 s = T(FLOAT, 4, 16, 1024, 1024),
			 red = T(FLOAT, 4, 16, 1024, 1),
			 v = T(BF16, 4, 16, 1024, 64),
			 o = T(BF16, 4, 16, 1024, 64);
	s.is_virtual = red.is_virtual = true;
	s.uid = 10;
	red.uid = 11;
	q.uid = 1, kt.uid = 2, v.uid = 3, o.uid = 4;
	const char *mm = "CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR";
	const char *pw = "CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR";
	struct dt_role_tensor qk[] = {
		{ "CUDNN_ATTR_OPERATION_MATMUL_ADESC", &q },
		{ "CUDNN_ATTR_OPERATION_MATMUL_BDESC", &kt },
		{ "CUDNN_ATTR_OPERATION_MATMUL_CDESC", &s }
	};
	struct dt_role_tensor pv[] = {
		{ "CUDNN_ATTR_OPERATION_MATMUL_ADESC", &s },
		{ "CUDNN_ATTR_OPERATION_MATMUL_BDESC", &v },
		{ "CUDNN_ATTR_OPERATION_MATMUL_CDESC", &o }
	};
	struct dt_role_tensor rd[] = {
		{ "CUDNN_ATTR_OPERATION_REDUCTION_XDESC", &s },
		{ "CUDNN_ATTR_OPERATION_REDUCTION_YDESC", &red }
	};
	struct dt_role_tensor gi[] = {
		{ "CUDNN_ATTR_OPERATION_POINTWISE_XDESC", &s },
		{ "CUDNN_ATTR_OPERATION_POINTWISE_YDESC", &s }
	};
	struct dt_cost_part p[5];
	dt_cost_backend_op(&p[0], mm, qk, 3, 1, NULL);
	dt_cost_backend_op(&p[1], pw, gi, 2, 1, "CUDNN_POINTWISE_GEN_INDEX");
	dt_cost_backend_op(&p[2], pw, gi, 2, 1, "CUDNN_POINTWISE_GEN_INDEX");
	dt_cost_backend_op(&p[3],
			   "CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR", rd,
			   2, 1, NULL);
	/* P V: S is 1024 wide, so k = 1024 and the product is
	 * 2 * (4*16*1024*64) * 1024, the same 8 589 934 592 */
	dt_cost_backend_op(&p[4], mm, pv, 3, 1, NULL);
	CHECK_NEAR(p[0].flops, 8589934592.0);
	CHECK_NEAR(p[4].flops, 8589934592.0);
	const struct dt_cost_part *parts[] = { &p[0], &p[1], &p[2], &p[3],
					       &p[4] };
	struct dt_cost c;
	dt_cost_graph(&c, parts, 5);
	CHECK_EQ_U(c.kind, DT_KIND_ATTN_FWD);
	/* products halved; 2 x 67 108 864 pointwise and 67 108 864 reduced
	 * elements counted as they are */
	CHECK_NEAR(c.flops, 8589934592.0 + 3 * 67108864.0);
	/* Q, K, V, O once each: 4 x 8 388 608 bytes */
	CHECK_EQ_U(c.bytes, 4 * 8388608);
	CHECK_EQ_U(dt_math_of(&c, 1), DT_MATH_BF16);

	/* cuDNN's own SDPA operation: 2 b h sq skv (d + dv) forward =
	 * 17 179 869 184, 2 b h sq skv (3d + 2dv) backward = 42 949 672 960 */
	struct dt_tensor k = T(BF16, 4, 16, 1024, 64);
	struct dt_role_tensor sd[] = {
		{ "CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC", &q },
		{ "CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC", &k },
		{ "CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC", &v },
	};
	dt_cost_backend_op(&p[0], "CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR",
			   sd, 3, 1, NULL);
	CHECK_EQ_U(p[0].kind, DT_KIND_ATTN_FWD);
	CHECK_NEAR(p[0].flops, 17179869184.0);
	sd[0].attr = "CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC";
	sd[1].attr = "CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC";
	sd[2].attr = "CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC";
	dt_cost_backend_op(&p[0], "CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR",
			   sd, 3, 1, NULL);
	CHECK_EQ_U(p[0].kind, DT_KIND_ATTN_BWD);
	CHECK_NEAR(p[0].flops, 42949672960.0);
}

static void test_normalization(void)
{
	struct dt_tensor x = T(HALF, 32, 256, 56, 56); /* 25 690 112 */
	struct dt_role_tensor ts[] = {
		{ "CUDNN_ATTR_OPERATION_NORM_FWD_XDESC", &x },
	};
	struct dt_cost_part p;
	dt_cost_backend_op(&p,
			   "CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR",
			   ts, 1, 1, NULL);
	CHECK_EQ_U(p.kind, DT_KIND_NORM_FWD);
	CHECK_NEAR(p.flops, 8 * 25690112.0);
	dt_cost_backend_op(&p,
			   "CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR",
			   ts, 1, 0, NULL);
	CHECK_NEAR(p.flops, 4 * 25690112.0);
	const struct dt_cost_part *parts[] = { &p };
	struct dt_cost c;
	dt_cost_graph(&c, parts, 1);
	CHECK(!c.tensor_op);
	CHECK_EQ_U(dt_math_of(&c, 1), DT_MATH_FP32);
}

/* An LSTM through the legacy API: input 256, hidden 512, 2 layers, one
 * direction, 35 steps of 16: per step 2*4*512*(256+512) = 3 145 728 for
 * the first layer and 2*4*512*(512+512) = 4 194 304 for the second;
 * 7 340 032 * 35 * 16 = 4 110 417 920. */
struct fake_desc {
	const char *names[8];
	int64_t values[8];
};

static int64_t fake_field(const void *desc, const char *name, int64_t def)
{
	const struct fake_desc *d = desc;
	for (int i = 0; i < 8 && d->names[i]; i++)
		if (!strcmp(d->names[i], name))
			return d->values[i];
	return def;
}

static void test_rnn(void)
{
	struct fake_desc rnn = {
		{ "cellMode", "inputSize", "hiddenSize", "projSize",
		  "numLayers", "dirMode", "dataType" },
		{ 2, 256, 512, 512, 2, 0, FLOAT },
	};
	struct fake_desc x = { { "maxSeqLength", "batchSize", "vectorSize",
				 "dataType" },
			       { 35, 16, 256, FLOAT } };
	struct fake_desc y = { { "maxSeqLength", "batchSize", "vectorSize",
				 "dataType" },
			       { 35, 16, 512, FLOAT } };
	struct dt_legacy_arg args[] = {
		{ .name = "rnnDesc", .name_len = 7, .desc = &rnn },
		{ .name = "xDesc", .name_len = 5, .desc = &x },
		{ .name = "yDesc", .name_len = 5, .desc = &y },
		{ .name = "weightSpaceSize", .name_len = 15, .value = 1000 },
	};
	struct dt_cost c;
	dt_cost_legacy(&c, "cudnnRNNForward", args, 4, fake_field);
	CHECK_EQ_U(c.kind, DT_KIND_RNN_FWD);
	CHECK_NEAR(c.flops, 4110417920.0);
	/* x 35*16*256 and y 35*16*512 floats, and the weights */
	CHECK_EQ_U(c.bytes, 35 * 16 * 256 * 4 + 35 * 16 * 512 * 4 + 1000);
	CHECK_EQ_U(dt_math_of(&c, 1), DT_MATH_TF32);
}

static void test_peaks(void)
{
	/* A100 SXM: 108 SMs at 1.41 GHz are the datasheet's 312 TFLOP/s
	 * fp16, 156 tf32, 19.5 fp32 */
	struct dt_device a100 = { .cc_major = 8,
				  .sms = 108,
				  .clock_khz = 1410000,
				  .mem_bandwidth_kBps = 2039000000 };
	struct dt_peaks pk;
	dt_peaks_for_device(&pk, &a100);
	CHECK_NEAR(pk.flops[DT_MATH_FP16], 2048.0 * 108 * 1.41e9);
	CHECK(fabs(pk.flops[DT_MATH_FP16] / 1e12 - 311.9) < 0.1);
	CHECK(fabs(pk.flops[DT_MATH_TF32] / 1e12 - 155.9) < 0.1);
	CHECK(fabs(pk.flops[DT_MATH_FP32] / 1e12 - 19.5) < 0.1);
	CHECK_NEAR(pk.bandwidth, 2.039e12);
	/* sm_87 has no row: Ampere's sm_86 one, and its missing fp8 falls
	 * back to fp32 */
	struct dt_device orin = { .cc_major = 8,
				  .cc_minor = 7,
				  .sms = 16,
				  .clock_khz = 1300000 };
	dt_peaks_for_device(&pk, &orin);
	CHECK_NEAR(pk.flops[DT_MATH_FP32], 256.0 * 16 * 1.3e9);
	CHECK_NEAR(pk.flops[DT_MATH_FP8], pk.flops[DT_MATH_FP32]);
	CHECK(pk.bandwidth == 0);
	/* an unknown architecture: no FLOP rates, and the reason */
	struct dt_device future = { .cc_major = 15, .sms = 1, .clock_khz = 1 };
	dt_peaks_for_device(&pk, &future);
	CHECK(pk.flops[DT_MATH_BF16] == 0);
	CHECK(strstr(pk.source, "no FLOP table") != NULL);
}

/* Elements PyTorch's elementwise kernels write, from their launch; the
 * shapes are the H200's for ResNet-50 (batch 64) and the MLP workload. */
static void test_kernel_elems(void)
{
	static const char relu[] =
		"_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_49_"
		"GLOB"
		"AL__N__d2ba64fb_16_TensorCompare_cu_71e06f4e19launch_clamp_"
		"scal"
		"arERNS_18TensorIteratorBaseEN3c106ScalarES6_NS0_"
		"6detail11ClampL";
	static const char bias[] = "_ZN2at6native18elementwise_"
				   "kernelILi128ELi4EZNS0_22gpu_kernel_i"
				   "mpl_nocastINS0_15CUDAFunctor_"
				   "addIN3c108BFloat16EEEEEvRNS_18Tens";
	static const char copy[] =
		"_ZN2at6native27unrolled_elementwise_kernelIZZZNS0_23direct_"
		"copy"
		"_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE4_"
		"clEv";
	uint64_t g;

	/* [64,256,56,56] = 51 380 224: grid 50176 x 128 threads x 8 */
	CHECK(dt_kernel_elems(relu, sizeof(relu) - 1, 50176, 128, &g) ==
	      51380224);
	CHECK(g == 1024);
	/* [32,128,56,56] = 12 845 056: grid 25088 x 128 (template) x 4, the
	 * launch's block not used */
	CHECK(dt_kernel_elems(bias, sizeof(bias) - 1, 25088, 64, &g) ==
	      12845056);
	CHECK(g == 512);
	/* [8192,1024] as doubles: grid 16384 x 128 x 4 (unrolled) = 8 388 608
	 */
	CHECK(dt_kernel_elems(copy, sizeof(copy) - 1, 16384, 128, &g) ==
	      8388608);
	/* not an elementwise kernel: unknown */
	CHECK(dt_kernel_elems("nvjet_sm90_tst_256x128", 22, 2, 384, &g) == 0);
}

/* The table of data types agrees with the names generated from cuDNN's
 * headers, and the classifier reads what the fusion analysis needs. */
static void test_tables(void)
{
	for (int64_t d = 0; d < DT_DTYPE_COUNT; d++) {
		char buf[DT_DTYPE_NAME_SIZE];
		const char *n = dt_dtype_name(d, buf, sizeof(buf));
		CHECK(strcmp(n, "?") != 0 && !isdigit((unsigned char)n[0]));
		CHECK(dt_dtype_by_name(n, strlen(n)) == d);
		CHECK(dt_dtype_bits(d) > 0);
	}
	/* a type of a newer cuDNN is shown as its number */
	char buf[DT_DTYPE_NAME_SIZE];
	CHECK(!strcmp(dt_dtype_name(999, buf, sizeof(buf)), "999"));
	CHECK(!strcmp(dt_dtype_name(-1, buf, sizeof(buf)), "?"));
	CHECK(dt_dtype_by_name("CUDNN_DATA_BFLOAT16", 19) == DT_DTYPE_BFLOAT16);
	CHECK(dt_dtype_bits(DT_DTYPE_HALF) == 16);
	CHECK(dt_dtype_bits(DT_DTYPE_COUNT) == 0);

	static const char bias[] = "_ZN2at6native18elementwise_"
				   "kernelILi128ELi4EZNS0_22gpu_kernel_i"
				   "mpl_nocastINS0_15CUDAFunctor_"
				   "addIN3c108BFloat16EEEEEvRNS_18Tens";
	struct dt_kernel_class kc;
	dt_kernel_classify(bias, sizeof(bias) - 1, &kc);
	CHECK(kc.lib == DT_LIB_ATEN && kc.opfam == DT_OPF_ELEMENTWISE);
	CHECK(kc.op == DT_KOP_ADD);
	CHECK(kc.dtype == DT_DTYPE_BFLOAT16);
	CHECK(kc.threads == 128 && kc.per == 4);
	CHECK(!kc.vectorized && !kc.layout && !kc.tuner);
	dt_kernel_classify("nvjet_sm90_tst_256x128_splitKreduce", 35, &kc);
	CHECK(kc.lib == DT_LIB_CUBLAS && kc.op == DT_KOP_GEMM_TAIL);
	dt_kernel_classify("_ZN5cudnn16nchwToNhwcKernelIfEEv", 32, &kc);
	CHECK(kc.layout && kc.op == DT_KOP_OTHER);
}

int main(void)
{
	test_tables();
	test_kernel_elems();
	test_bytes();
	test_convolutions();
	test_attention();
	test_normalization();
	test_rnn();
	test_peaks();
	TEST_DONE();
}
