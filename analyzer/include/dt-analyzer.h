/*
 * dt-analyzer.h - turning trace records into meaning: analyzer/'s public
 * interface, all of it. Each part has a header of its own, for a source
 * to include what it uses:
 *
 *   dt-args.h     decoding a call's arguments with its recorded signature
 *   dt-cudnn.h    cuDNN's names, the analyzer's data types, versions
 *   dt-cudnn-build.h  what cuDNN's decoder keeps to build a problem again
 *   dt-gemm-build.h   what the cuBLAS decoders keep to build a GEMM again
 *   dt-cost.h     what an op computes and moves; peaks
 *   dt-kernels.h  what kernel names say
 *   dt-ops.h      ops, their recipes, libraries' display names
 *   dt-session.h  the session, through which every view reads a trace
 *   dt-fusion.h   fusion opportunities
 *   dt-summary.h  the summary behind `report`, and its findings
 *   dt-diff.h     two runs compared
 *   dt-steps.h    a program's steps
 *   dt-replayed.h what a replay on a GPU measured, read back
 *
 * analyzer/README.md says how these fit together. Includes no CUDA
 * header: a trace is analyzed with only what the trace itself says.
 */
#ifndef DT_ANALYZER_H
#define DT_ANALYZER_H

#include "dt-args.h"
#include "dt-cudnn.h"
#include "dt-cost.h"
#include "dt-cudnn-build.h"
#include "dt-gemm-build.h"
#include "dt-kernels.h"
#include "dt-ops.h"
#include "dt-session.h"
#include "dt-fusion.h"
#include "dt-summary.h"
#include "dt-diff.h"
#include "dt-steps.h"
#include "dt-replayed.h"

#endif /* DT_ANALYZER_H */
