/*
 * cupti-pm.c - the GPU's performance counters sampled over time (CUPTI's PM
 * sampling), for `record --gpu-metrics`: DRAM bytes read and written,
 * device-wide, every DNNTRACE_GPU_METRICS microseconds. The samples go
 * into the trace as they are (GPU_SAMPLE records); the analyzer attributes
 * them to the work that ran during them, by time. This is not a per-kernel
 * profiler: a sample holds whatever ran on the GPU during its window.
 *
 * The sequence is CUPTI's (cupti_pmsampling.h, cupti_profiler_host.h): a
 * host object describing the metrics for this chip, a config image, PM
 * sampling enabled on the device with it, started once the program uses
 * the GPU; then the CUPTI flusher thread decodes the hardware buffer into a
 * counter data image every 10 ms and evaluates each sample it completed.
 * Measured on an H100 (CUPTI 13.0): the availability and config images
 * must outlive the session, and nothing may be torn down at exit.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti-internal.h"
#include "dt-cupti.h"
#include "dt-trace.h"

#define PM_FUNCTIONS(X)                                                  \
	X(cuptiProfilerInitialize, CUpti_Profiler_Initialize_Params)     \
	X(cuptiProfilerDeInitialize, CUpti_Profiler_DeInitialize_Params) \
	X(cuptiDeviceGetChipName, CUpti_Device_GetChipName_Params)       \
	X(cuptiPmSamplingGetCounterAvailability,                         \
	  CUpti_PmSampling_GetCounterAvailability_Params)                \
	X(cuptiProfilerHostInitialize, CUpti_Profiler_Host_Initialize_Params) \
	X(cuptiProfilerHostDeinitialize,                                 \
	  CUpti_Profiler_Host_Deinitialize_Params)                       \
	X(cuptiProfilerHostConfigAddMetrics,                             \
	  CUpti_Profiler_Host_ConfigAddMetrics_Params)                   \
	X(cuptiProfilerHostGetConfigImageSize,                           \
	  CUpti_Profiler_Host_GetConfigImageSize_Params)                 \
	X(cuptiProfilerHostGetConfigImage,                               \
	  CUpti_Profiler_Host_GetConfigImage_Params)                     \
	X(cuptiProfilerHostGetNumOfPasses,                               \
	  CUpti_Profiler_Host_GetNumOfPasses_Params)                     \
	X(cuptiProfilerHostEvaluateToGpuValues,                          \
	  CUpti_Profiler_Host_EvaluateToGpuValues_Params)                \
	X(cuptiPmSamplingEnable, CUpti_PmSampling_Enable_Params)         \
	X(cuptiPmSamplingDisable, CUpti_PmSampling_Disable_Params)       \
	X(cuptiPmSamplingSetConfig, CUpti_PmSampling_SetConfig_Params)   \
	X(cuptiPmSamplingGetCounterDataSize,                             \
	  CUpti_PmSampling_GetCounterDataSize_Params)                    \
	X(cuptiPmSamplingCounterDataImageInitialize,                     \
	  CUpti_PmSampling_CounterDataImage_Initialize_Params)           \
	X(cuptiPmSamplingStart, CUpti_PmSampling_Start_Params)           \
	X(cuptiPmSamplingStop, CUpti_PmSampling_Stop_Params)             \
	X(cuptiPmSamplingDecodeData, CUpti_PmSampling_DecodeData_Params) \
	X(cuptiPmSamplingGetCounterDataInfo,                             \
	  CUpti_PmSampling_GetCounterDataInfo_Params)                    \
	X(cuptiPmSamplingCounterDataGetSampleInfo,                       \
	  CUpti_PmSampling_CounterData_GetSampleInfo_Params)

static struct {
#define FN_PTR_(name, params) CUptiResult (*name)(params *);
	PM_FUNCTIONS(FN_PTR_)
#undef FN_PTR_
	CUptiResult (*result)(CUptiResult, const char **);
} pm;

/* The metrics: DRAM traffic, in one pass. (CUPTI 13.0 crashed in a
 * second cuptiProfilerHostInitialize after a configuration it refused: so
 * one configuration, no fallback.) */
static const char *metric_names[] = {
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
};
#define MAX_METRICS (sizeof(metric_names) / sizeof(metric_names[0]))

/* Samples decoded at a time: the counter data image holds this many. */
#define IMAGE_SAMPLES 2000

static struct {
	bool on;
	size_t n_metrics;
	uint32_t device;
	uint64_t interval_ns;
	CUpti_Profiler_Host_Object *host;
	CUpti_PmSampling_Object *obj;
	uint8_t *image;
	size_t image_size;
	/* the counter availability and config images: CUPTI's host and
	 * sampling objects keep pointers to them for their whole life */
	uint8_t *avail, *config;
	bool first; /* the first sample spans enable to start: dropped */
	uint64_t overflows;
} s;

#define PARAMS(type, var) type var = { .structSize = type##_STRUCT_SIZE }

static const char *why(CUptiResult r)
{
	const char *str = NULL;

	if (!pm.result || pm.result(r, &str) != CUPTI_SUCCESS || !str)
		return "?";
	return str;
}

/* GPU_METRICS: the names sampled, or why nothing is. */
static void emit_metrics(int code, const char *text)
{
	struct dt_rec_gpu_metrics r;

	REC_INIT(r, DT_REC_GPU_METRICS);
	r.t = cupti_mono_ns();
	r.device = s.device;
	r.interval = (uint32_t)s.interval_ns;
	r.metrics = code ? 0 : (uint32_t)s.n_metrics;
	r.code = code;
	cupti_emit_tail(&r, sizeof(r), text, (uint32_t)strnlen(text, 512),
			false);
}

static void emit_sample(uint64_t start, uint64_t end, const double *v)
{
	struct dt_rec_gpu_sample r;

	REC_INIT(r, DT_REC_GPU_SAMPLE);
	r.start = start;
	r.end = end;
	r.device = s.device;
	cupti_emit_tail(&r, sizeof(r), v,
			(uint32_t)(s.n_metrics * sizeof(double)), false);
}

/* Decode what the hardware buffer holds; write every completed sample. */
static void drain(void)
{
	PARAMS(CUpti_PmSampling_DecodeData_Params, dec);
	dec.pPmSamplingObject = s.obj;
	dec.pCounterDataImage = s.image;
	dec.counterDataImageSize = s.image_size;
	if (pm.cuptiPmSamplingDecodeData(&dec) != CUPTI_SUCCESS)
		return;
	if (dec.overflow)
		s.overflows++;

	PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params, info);
	info.pCounterDataImage = s.image;
	info.counterDataImageSize = s.image_size;
	if (pm.cuptiPmSamplingGetCounterDataInfo(&info) != CUPTI_SUCCESS)
		return;
	for (size_t i = 0; i < info.numCompletedSamples; i++) {
		PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params, si);
		si.pPmSamplingObject = s.obj;
		si.pCounterDataImage = s.image;
		si.counterDataImageSize = s.image_size;
		si.sampleIndex = i;
		if (pm.cuptiPmSamplingCounterDataGetSampleInfo(&si) !=
		    CUPTI_SUCCESS)
			continue;
		double v[MAX_METRICS] = { 0 };
		PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, ev);
		ev.pHostObject = s.host;
		ev.pCounterDataImage = s.image;
		ev.counterDataImageSize = s.image_size;
		ev.rangeIndex = i;
		ev.ppMetricNames = metric_names;
		ev.numMetrics = s.n_metrics;
		ev.pMetricValues = v;
		if (pm.cuptiProfilerHostEvaluateToGpuValues(&ev) !=
		    CUPTI_SUCCESS)
			continue;
		if (s.first) {
			s.first = false;
			continue;
		}
		emit_sample(si.startTimestamp, si.endTimestamp, v);
	}
	/* the image is read: ready for the next decode */
	PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params, init);
	init.pPmSamplingObject = s.obj;
	init.counterDataSize = s.image_size;
	init.pCounterData = s.image;
	pm.cuptiPmSamplingCounterDataImageInitialize(&init);
}

void cupti_pm_poll(void)
{
	if (s.on) {
		drain();
	}
}

/* Configure the host object and PM sampling for the metrics of the first
 * n names; 0 or the failing call's result, its name in *fn. */
static CUptiResult configure(const char *chip, const uint8_t *avail,
			     size_t n, const char **fn)
{
	CUptiResult r;

#define TRY(call, p)                  \
	do {                          \
		*fn = #call;          \
		r = pm.call(&(p));    \
		if (r != CUPTI_SUCCESS) \
			return r;     \
	} while (0)
	PARAMS(CUpti_Profiler_Host_Initialize_Params, hi);
	hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	hi.pChipName = chip;
	hi.pCounterAvailabilityImage = avail;
	TRY(cuptiProfilerHostInitialize, hi);
	s.host = hi.pHostObject;
	PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, add);
	add.pHostObject = s.host;
	add.ppMetricNames = metric_names;
	add.numMetrics = n;
	TRY(cuptiProfilerHostConfigAddMetrics, add);
	PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, sz);
	sz.pHostObject = s.host;
	TRY(cuptiProfilerHostGetConfigImageSize, sz);
	uint8_t *config = calloc(1, sz.configImageSize);
	if (!config)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	s.config = config;
	PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, img);
	img.pHostObject = s.host;
	img.configImageSize = sz.configImageSize;
	img.pConfigImage = config;
	PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params, passes);
	passes.configImageSize = sz.configImageSize;
	passes.pConfigImage = config;
	PARAMS(CUpti_PmSampling_SetConfig_Params, cfg);
	cfg.pPmSamplingObject = s.obj;
	cfg.configSize = sz.configImageSize;
	cfg.pConfig = config;
	cfg.hardwareBufferSize = 256u << 20;
	cfg.samplingInterval = s.interval_ns;
	cfg.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
	cfg.hwBufferAppendMode =
		CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
	if ((r = pm.cuptiProfilerHostGetConfigImage(&img)) != CUPTI_SUCCESS ||
	    (r = pm.cuptiProfilerHostGetNumOfPasses(&passes)) !=
		    CUPTI_SUCCESS) {
		*fn = "cuptiProfilerHostGetConfigImage";
	} else if (passes.numOfPasses != 1) {
		*fn = "one pass";
		r = CUPTI_ERROR_NOT_SUPPORTED;
	} else {
		*fn = "cuptiPmSamplingSetConfig";
		r = pm.cuptiPmSamplingSetConfig(&cfg);
	}
	if (r != CUPTI_SUCCESS) {
		PARAMS(CUpti_Profiler_Host_Deinitialize_Params, hd);
		hd.pHostObject = s.host;
		pm.cuptiProfilerHostDeinitialize(&hd);
		s.host = NULL;
		return r;
	}
	s.n_metrics = n;
	return CUPTI_SUCCESS;
#undef TRY
}

static void pm_off(const char *fn, CUptiResult r)
{
	char text[256];

	snprintf(text, sizeof(text), "off: %s: %s (%d)", fn, why(r), (int)r);
	emit_metrics(r ? (int)r : -1, text);
}

void cupti_pm_start(void *cupti, const char *arg)
{
	char *end;
	double us = arg && *arg ? strtod(arg, &end) : 100;
	const char *fn = "dlsym";
	CUptiResult r;

	s.interval_ns = us >= 1 && us <= 1e6 ? (uint64_t)(us * 1000) : 100000;
#define FN_LOAD_(name, params)                                   \
	if (!(*(void **)&pm.name = cupti_dlsym(cupti, #name))) { \
		emit_metrics(-1, "off: this CUPTI lacks " #name);  \
		return;                                            \
	}
	PM_FUNCTIONS(FN_LOAD_)
#undef FN_LOAD_
	*(void **)&pm.result = cupti_dlsym(cupti, "cuptiGetResultString");

	PARAMS(CUpti_Profiler_Initialize_Params, pi);
	if ((r = pm.cuptiProfilerInitialize(&pi)) != CUPTI_SUCCESS)
		return pm_off("cuptiProfilerInitialize", r);
	PARAMS(CUpti_Device_GetChipName_Params, chip);
	chip.deviceIndex = s.device;
	if ((r = pm.cuptiDeviceGetChipName(&chip)) != CUPTI_SUCCESS)
		return pm_off("cuptiDeviceGetChipName", r);
	PARAMS(CUpti_PmSampling_GetCounterAvailability_Params, av);
	av.deviceIndex = s.device;
	if ((r = pm.cuptiPmSamplingGetCounterAvailability(&av)) !=
	    CUPTI_SUCCESS)
		return pm_off("cuptiPmSamplingGetCounterAvailability", r);
	uint8_t *avail = calloc(1, av.counterAvailabilityImageSize);
	if (!avail)
		return pm_off("calloc", CUPTI_ERROR_OUT_OF_MEMORY);
	av.pCounterAvailabilityImage = avail;
	if ((r = pm.cuptiPmSamplingGetCounterAvailability(&av)) !=
	    CUPTI_SUCCESS) {
		free(avail);
		return pm_off("cuptiPmSamplingGetCounterAvailability", r);
	}
	PARAMS(CUpti_PmSampling_Enable_Params, en);
	en.deviceIndex = s.device;
	if ((r = pm.cuptiPmSamplingEnable(&en)) != CUPTI_SUCCESS) {
		free(avail);
		return pm_off("cuptiPmSamplingEnable", r);
	}
	s.obj = en.pPmSamplingObject;
	s.avail = avail;
	r = configure(chip.pChipName, avail, MAX_METRICS, &fn);
	if (r != CUPTI_SUCCESS)
		goto disable;

	PARAMS(CUpti_PmSampling_GetCounterDataSize_Params, ds);
	ds.pPmSamplingObject = s.obj;
	ds.pMetricNames = metric_names;
	ds.numMetrics = s.n_metrics;
	ds.maxSamples = IMAGE_SAMPLES;
	fn = "cuptiPmSamplingGetCounterDataSize";
	if ((r = pm.cuptiPmSamplingGetCounterDataSize(&ds)) != CUPTI_SUCCESS)
		goto disable;
	s.image_size = ds.counterDataSize;
	if (!(s.image = calloc(1, s.image_size))) {
		r = CUPTI_ERROR_OUT_OF_MEMORY;
		goto disable;
	}
	PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params, init);
	init.pPmSamplingObject = s.obj;
	init.counterDataSize = s.image_size;
	init.pCounterData = s.image;
	fn = "cuptiPmSamplingCounterDataImageInitialize";
	if ((r = pm.cuptiPmSamplingCounterDataImageInitialize(&init)) !=
	    CUPTI_SUCCESS)
		goto disable;
	PARAMS(CUpti_PmSampling_Start_Params, st);
	st.pPmSamplingObject = s.obj;
	fn = "cuptiPmSamplingStart";
	if ((r = pm.cuptiPmSamplingStart(&st)) != CUPTI_SUCCESS)
		goto disable;
	s.first = true;
	s.on = true;
	char names[256] = "";
	for (size_t i = 0; i < s.n_metrics; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
			 "%s%s", i ? "\n" : "", metric_names[i]);
	emit_metrics(0, names);
	return;

disable:
	free(s.image);
	s.image = NULL;
	PARAMS(CUpti_PmSampling_Disable_Params, dis);
	dis.pPmSamplingObject = s.obj;
	pm.cuptiPmSamplingDisable(&dis);
	if (s.host) {
		PARAMS(CUpti_Profiler_Host_Deinitialize_Params, hd);
		hd.pHostObject = s.host;
		pm.cuptiProfilerHostDeinitialize(&hd);
		s.host = NULL;
	}
	free(s.config);
	free(s.avail);
	s.config = s.avail = NULL;
	pm_off(fn, r);
}

void cupti_pm_stop(void)
{
	if (!s.on)
		return;
	s.on = false;
	PARAMS(CUpti_PmSampling_Stop_Params, st);
	st.pPmSamplingObject = s.obj;
	pm.cuptiPmSamplingStop(&st);
	drain();
	/* No cuptiPmSamplingDisable nor host deinitialization: this runs as
	 * the process exits, after the CUDA runtime has torn its context
	 * down, and there CUPTI 13.0 corrupts the heap (glibc aborted with
	 * "double free or corruption"). The process's end frees it all. */
	if (s.overflows) {
		char text[128];
		snprintf(text, sizeof(text),
			 "lost: the hardware buffer overflowed %llu times: "
			 "samples were dropped",
			 (unsigned long long)s.overflows);
		emit_metrics(-2, text);
	}
}
