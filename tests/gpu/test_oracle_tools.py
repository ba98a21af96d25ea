#!/usr/bin/env python3
"""CPU unit tests for the oracle tools: cudnn_log_calls.py, dnntrace_calls.py, compare_calls.py.

The log records below copy the shapes cuDNN 9.19 wrote on CPU and H200 runs (header, `i!` body,
trailer; entry and exit records of backend calls; W/E annotations; pseudo-functions; the internal
cudnnSetTensor4dDescriptorEx; calls made inside cudnnBackendFinalize). Runs anywhere with
Python 3.9+: `python3 tests/gpu/test_oracle_tools.py`.
"""

import io
import json
import os
import stat
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import calib_table  # noqa: E402
import check_cublas_ops  # noqa: E402
import check_ops  # noqa: E402
import compare_calls  # noqa: E402
import cudnn_log_calls  # noqa: E402
import dnntrace_calls  # noqa: E402


def record(func, fields=(), sev="I", pid=100, tid=100, status=None):
    """One record in the 9.19 format; fields are (name, value) or (name, value, [sub-lines])."""
    lines = ["%s! CuDNN (v91900 56) function %s() called:" % (sev, func)]
    p = sev.lower() + "!"
    for field in fields:
        lines.append("%s     %s: %s" % (p, field[0], field[1]))
        for sub in (field[2] if len(field) > 2 else ()):
            lines.append("%s         %s" % (p, sub))
    if status is not None:
        lines.append("%s     status: type=cudnnStatus_t; val=%s;" % (p, status))
    lines.append("%s Time: 2026-11-21T09:23:55.458102 (0d+0h+0m+0s since start)" % p)
    lines.append("%s Process=%d; Thread=%d; GPU=NULL; Handle=NULL; StreamId=NULL." % (p, pid, tid))
    return "\n".join(lines) + "\n\n\n"


def t4(func, n, extra=(), **kw):
    """A SetTensor4dDescriptor(-Ex) record with dims n,3,4,5."""
    fields = [("dataType", "type=cudnnDataType_t; val=CUDNN_DATA_FLOAT (0);")]
    if func == "cudnnSetTensor4dDescriptor":
        fields.insert(0, ("format", "type=cudnnTensorFormat_t; val=CUDNN_TENSOR_NCHW (0);"))
    fields += [(k, "type=int; val=%d;" % v) for k, v in (("n", n), ("c", 3), ("h", 4), ("w", 5))]
    return record(func, fields + list(extra), **kw)


EX_STRIDES = [("nStride", "type=int; val=60;"), ("cStride", "type=int; val=20;")]
SUCCESS = "CUDNN_STATUS_SUCCESS (0)"
DESC = ("descriptor", "type=CUDNN_BACKEND_TENSOR_DESCRIPTOR:",
        ["type: type=cudnnDataType_t; val=CUDNN_DATA_FLOAT (0);", "nbDims: type=int; val=4;"])


def count(text):
    counter = cudnn_log_calls.CallCounter()
    for rec in cudnn_log_calls.read_records(io.StringIO(text)):
        counter.add(rec)
    return counter.result(), counter


class LogCallsTest(unittest.TestCase):
    def test_backend_entry_and_exit_count_once(self):
        log = (record("cudnnBackendCreateDescriptor",
                      [("descriptorType", "type=cudnnBackendDescriptorType_t; val=CUDNN_BACKEND_TENSOR_DESCRIPTOR (17);")])
               + record("cudnnBackendCreateDescriptor", status=SUCCESS)
               + record("cudnnBackendSetAttribute", [DESC]) + record("cudnnBackendSetAttribute", status=SUCCESS))
        self.assertEqual(count(log)[0], {"cudnnBackendCreateDescriptor": 1, "cudnnBackendSetAttribute": 1})

    def test_create_exit_with_outputs_pseudo_and_error_record(self):
        log = (record("cudnnCreate", [("handle", "location=host; addr=0x7fff610fade0;")])
               + record("cudnnGraphLibraryConfigInit", [("apiLog", "type=cudnnLibConfig_t; val=AUTO;")])
               + record("cudnnCreate", [("compute_capability_major", "type=int; val=0;")],
                        status="CUDNN_STATUS_NOT_INITIALIZED (1001)")
               + record("cudnnCreate", [("Info", "Traceback contains 1 message(s)")], sev="E"))
        result, counter = count(log)
        self.assertEqual(result, {"cudnnCreate": 1})
        self.assertEqual(counter.stats["warning/error records"], 1)

    def test_get_error_string_status_argument_is_not_an_exit(self):
        log = record("cudnnGetErrorString", status="CUDNN_STATUS_BAD_PARAM (2000)") * 3
        self.assertEqual(count(log)[0], {"cudnnGetErrorString": 3})

    def test_pseudo_functions_dropped(self):
        log = "".join(record(name) for name in (
            "cudnnBackendExecuteInternal", "cudnnBackendFinalizeGraphVisualize",
            "cudnnBackendFinalizeEngineCfgVisualize", "cudnnBackendExecuteGraphVisualize",
            "cudnnBackendGetAttribute_CUDNN_ATTR_ENGINEHEUR_RESULTS_engine_config_support_checks",
            "cudnnGraphLibraryConfigInit"))
        self.assertEqual(count(log)[0], {})

    def test_internal_set_tensor_4d_ex_dropped(self):
        log = t4("cudnnSetTensor4dDescriptor", 2) + t4("cudnnSetTensor4dDescriptorEx", 2, EX_STRIDES)
        self.assertEqual(count(log)[0], {"cudnnSetTensor4dDescriptor": 1})

    def test_application_ex_after_internal_one_counts(self):
        log = (t4("cudnnSetTensor4dDescriptor", 2) + t4("cudnnSetTensor4dDescriptorEx", 2, EX_STRIDES)
               + t4("cudnnSetTensor4dDescriptorEx", 2, EX_STRIDES))
        self.assertEqual(count(log)[0], {"cudnnSetTensor4dDescriptor": 1, "cudnnSetTensor4dDescriptorEx": 1})

    def test_failed_parent_logs_no_callee(self):
        log = (t4("cudnnSetTensor4dDescriptor", -1)
               + record("cudnnSetTensor4dDescriptor", [("Info", "Traceback contains 1 message(s)")], sev="E")
               + t4("cudnnSetTensor4dDescriptorEx", 2, EX_STRIDES))
        self.assertEqual(count(log)[0], {"cudnnSetTensor4dDescriptor": 1, "cudnnSetTensor4dDescriptorEx": 1})

    def test_callee_with_other_values_counts(self):
        log = t4("cudnnSetTensor4dDescriptor", 2) + t4("cudnnSetTensor4dDescriptorEx", 9, EX_STRIDES)
        self.assertEqual(count(log)[0], {"cudnnSetTensor4dDescriptor": 1, "cudnnSetTensor4dDescriptorEx": 1})

    def test_nesting_is_per_thread(self):
        log = (t4("cudnnSetTensor4dDescriptor", 2, tid=1)
               + t4("cudnnSetTensor4dDescriptor", 7, tid=2)
               + t4("cudnnSetTensor4dDescriptorEx", 2, EX_STRIDES, tid=1)
               + record("cudnnGetVersion", tid=2)
               + t4("cudnnSetTensor4dDescriptorEx", 7, EX_STRIDES, tid=2))
        self.assertEqual(count(log)[0], {"cudnnSetTensor4dDescriptor": 2, "cudnnSetTensor4dDescriptorEx": 1,
                                         "cudnnGetVersion": 1})

    def test_calls_inside_a_backend_call_are_internal(self):
        inner = (record("cudnnBackendGetMetadataFromGraph")
                 + record("cudnnBackendCreateDescriptor") + record("cudnnBackendCreateDescriptor", status=SUCCESS)
                 + record("cudnnBackendFinalize", [DESC]) + record("cudnnBackendFinalize", status=SUCCESS)
                 + record("cudnnCreate") + record("cudnnCreate", status=SUCCESS)
                 + record("cudnnSetStream") + record("cudnnGetStream")
                 + record("cudnnBackendExecute") + record("cudnnBackendExecuteInternal")
                 + record("cudnnBackendExecute", status=SUCCESS))
        other_thread = record("cudnnGetVersion", tid=7)
        log = (record("cudnnBackendFinalize", [DESC]) + record("cudnnBackendFinalizeEngineCfgVisualize")
               + inner + other_thread + record("cudnnBackendFinalize", status=SUCCESS)
               + record("cudnnBackendFinalize", [("Info", "Traceback contains 1 message(s)")], sev="W")
               + record("cudnnSetStream"))
        result, counter = count(log)
        self.assertEqual(result, {"cudnnBackendFinalize": 1, "cudnnGetVersion": 1, "cudnnSetStream": 1})
        self.assertEqual(counter.dropped[("bracket", "cudnnBackendFinalize", "cudnnBackendFinalize")], 1)

    def test_exit_without_entry_is_reported(self):
        result, counter = count(record("cudnnBackendFinalize", status=SUCCESS))
        self.assertEqual(result, {})
        self.assertEqual(counter.stats["exit records without an entry"], 1)

    def test_older_documented_format(self):
        log = ("cuDNN (v90000) function cudnnSetActivationDescriptor() called:\n"
               "    mode: type=cudnnActivationMode_t; val=CUDNN_ACTIVATION_RELU (1);\n"
               "    reluNanOpt: type=cudnnNanPropagation_t; val=CUDNN_NOT_PROPAGATE_NAN (0);\n"
               "    coef: type=double; val=1000.000000;\n"
               "Time: 2017-11-21T14:14:21.366171 (0d+0h+1m+5s since start)\n"
               "Process: 21264, Thread: 21264, cudnn_handle: NULL, cudnn_stream: NULL.\n\n"
               "cuDNN (v90000) function cudnnBackendFinalize() called:\n"
               "    status: type=cudnnStatus_t; val=CUDNN_STATUS_SUCCESS (0);\n"
               "Time: 2017-11-21T14:14:21.366180 (0d+0h+1m+5s since start)\n"
               "Process: 21264, Thread: 21264, cudnn_handle: NULL, cudnn_stream: NULL.\n")
        recs = list(cudnn_log_calls.read_records(io.StringIO(log)))
        self.assertEqual(recs[0].thread(), ("21264", "21264"))
        self.assertEqual(count(log)[0], {"cudnnSetActivationDescriptor": 1})

    def test_main_writes_json_and_fails_on_empty_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            log, out, empty = (os.path.join(tmp, n) for n in ("a.log", "a.json", "empty.log"))
            with open(log, "w") as f:
                f.write(t4("cudnnSetTensor4dDescriptor", 2) + t4("cudnnSetTensor4dDescriptorEx", 2, EX_STRIDES))
            open(empty, "w").close()
            self.assertEqual(cudnn_log_calls.main([log, "-o", out]), 0)
            with open(out) as f:
                self.assertEqual(json.load(f), {"cudnnSetTensor4dDescriptor": 1})
            with redirect_stderr(io.StringIO()):
                self.assertEqual(cudnn_log_calls.main([empty]), 2)


    def test_internal_names_count_as_the_public_function(self):
        host = ("labels", "location=host; addr=0x3501f780;")
        dev = ("labels", "location=dev; addr=0x7f840be32200;")
        log = (record("cudnnGetCTCLossWorkspaceSizeInternal",
                      [("isLabelDataOnDevice", "type=bool; val=false;")])
               + record("cudnnCTCLossInternal", [host])
               + record("cudnnGetCTCLossWorkspaceSizeInternal",
                        [("isLabelDataOnDevice", "type=bool; val=true;")])
               + record("cudnnCTCLossInternal", [dev]) + record("cudnnCTCLossInternal", [dev]))
        self.assertEqual(count(log)[0], {"cudnnGetCTCLossWorkspaceSize": 1, "cudnnCTCLoss": 1,
                                         "cudnnGetCTCLossWorkspaceSize_v8": 1,
                                         "cudnnCTCLoss_v8": 2})


class CheckOpsTest(unittest.TestCase):
    def test_legacy_tensors_by_name_or_by_place(self):
        ours = {"xDesc": ((1, 2), (2, 1)), "yDesc": ((1, 3), (3, 1))}
        self.assertTrue(check_ops.compare_legacy_tensors(ours, {"xDesc": ((1, 2), (2, 1))}))
        # cuDNN 7 names, in parameter order
        self.assertTrue(check_ops.compare_legacy_tensors(
            ours, {"srcDesc": ((1, 2), (2, 1)), "destDesc": ((1, 3), (3, 1))}))
        self.assertFalse(check_ops.compare_legacy_tensors(
            ours, {"srcDesc": ((1, 3), (3, 1)), "destDesc": ((1, 2), (2, 1))}))
        self.assertTrue(check_ops.compare_legacy_tensors(ours, {"wDesc": ((), None)}))

    def test_dropout_seed_and_offset(self):
        seed = (6, (1, 1, 1, 1), (1, 1, 1, 1), "INT64", False)
        offset = (7, (1, 1, 1, 1), (1, 1, 1, 1), "INT64", False)
        self.assertTrue(check_ops.rng_tensors({seed, offset}))
        self.assertFalse(check_ops.rng_tensors({(6, (4, 1), (1, 1), "INT64", False)}))
        self.assertFalse(check_ops.rng_tensors({(6, (1,), (1,), "FLOAT", False)}))


    def test_empty_tensor_slots_are_no_tensors(self):
        # the unified SDPA forward operation, run for inference: Q and an unset stats slot
        def tensor(name, dtype, nb, dims, uid):
            return ["    %s: type=CUDNN_BACKEND_TENSOR_DESCRIPTOR:" % name,
                    "        type: type=cudnnDataType_t; val=CUDNN_DATA_%s (0);" % dtype,
                    "        nbDims: type=int; val=%d;" % nb,
                    "        dimA: type=int; val=[%s];" % dims,
                    "        strideA: type=int; val=[%s];" % dims,
                    "        uid: type=int64_t; val=%d;" % uid,
                    "        isVirtual: type=bool; val=false;",
                    "        isByVal: type=bool; val=false;"]
        op = (["operation: type=CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:"] +
              tensor("qDesc", "HALF", 4, "4,16,1,64", 0) + tensor("statsDesc", "FLOAT", -1, "", -1))
        text = record("cudnnBackendExecute", [
            ("executionPlan", "type=CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:", op),
            ("engine_id", "type=int; val=8;")])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cudnn.log")
            with open(path, "w") as f:
                f.write(text + record("cudnnBackendExecute", status=SUCCESS))
            execs, _ = check_ops.from_log([path], set())
        self.assertEqual(len(execs), 1)
        self.assertEqual(execs[0][2], {(0, (4, 16, 1, 64), (4, 16, 1, 64), "HALF", False)})


class DnntraceCallsTest(unittest.TestCase):
    def test_call_name(self):
        line = ("API_CALL seq=12 tid=4242 t=0.001234567 dur=850ns cudnnSetTensor4dDescriptor("
                "tensorDesc=0x5581, format=0, dims=(1,2)) -> CUDNN_STATUS_SUCCESS")
        self.assertEqual(dnntrace_calls.call_name(line), "cudnnSetTensor4dDescriptor")
        self.assertEqual(dnntrace_calls.call_name("API_CALL cudnnGetVersion() -> 91900"), "cudnnGetVersion")
        self.assertIsNone(dnntrace_calls.call_name("API_CALL seq=1 no paren"))
        self.assertIsNone(dnntrace_calls.call_name("API_CALL (x)"))

    def test_count_dump(self):
        counts = dnntrace_calls.collections.Counter()
        lines = ["HEADER pid=1\n", "API_CALL seq=1 a=1 cudnnCreate(handle=0x1) -> X\n",
                 "  API_CALL indented is not a record\n", "STRING id=1 cudnnCreate(\n",
                 "API_CALL seq=2 broken\n", "LOSS t=1 count=3\n", "API_CALL seq=3 a=1 cudnnCreate(h) -> X\n",
                 "API_CALL seq=4 a=1 cublasGemmEx(handle=0x2) -> X\n"]
        self.assertEqual(dnntrace_calls.count_dump(lines, counts), (1, 1))
        self.assertEqual(counts, {"cudnnCreate": 2})

    def test_main_with_a_fake_dnntrace(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "dnntrace")
            with open(fake, "w") as f:
                f.write('#!/bin/sh\n[ "$1" = dump ] || exit 2\ncat "$2"\n')
            os.chmod(fake, stat.S_IRWXU)
            traces = []
            for i, body in enumerate(("API_CALL seq=1 t=0 cudnnSetStream(h, s) -> OK\n",
                                      "API_CALL seq=1 t=0 cudnnSetStream(h, s) -> OK\n"
                                      "API_CALL seq=2 t=0 cudnnBackendExecute(h, p, v) -> OK\n")):
                traces.append(os.path.join(tmp, "%d.dnnt" % i))
                with open(traces[-1], "w") as f:
                    f.write(body)
            out = os.path.join(tmp, "c.json")
            self.assertEqual(dnntrace_calls.main([fake] + traces + ["-o", out]), 0)
            with open(out) as f:
                self.assertEqual(json.load(f), {"cudnnBackendExecute": 1, "cudnnSetStream": 2})
            with redirect_stderr(io.StringIO()):
                self.assertEqual(dnntrace_calls.main([os.path.join(tmp, "missing")] + traces), 2)


class CompareCallsTest(unittest.TestCase):
    def run_main(self, a, b, *flags):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name, data in (("a.json", a), ("b.json", b)):
                paths.append(os.path.join(tmp, name))
                with open(paths[-1], "w") as f:
                    f.write(data if isinstance(data, str) else json.dumps(data))
            out = io.StringIO()
            with redirect_stdout(out), redirect_stderr(io.StringIO()):
                rc = compare_calls.main(list(flags) + paths)
            return rc, out.getvalue()

    def test_all_match(self):
        rc, out = self.run_main({"cudnnCreate": 2, "cudnnSetStream": 5}, {"cudnnSetStream": 5, "cudnnCreate": 2})
        self.assertEqual(rc, 0)
        self.assertIn("calls: 2 functions, 2 match, 0 differ", out)

    def test_difference_and_missing_function(self):
        rc, out = self.run_main({"cudnnCreate": 2, "cudnnSetStream": 4}, {"cudnnSetStream": 5, "cudnnGetVersion": 1})
        self.assertEqual(rc, 1)
        self.assertIn("calls: 3 functions, 0 match, 3 differ", out)
        self.assertRegex(out, r"cudnnSetStream\s+4\s+5\s+NO\s+\(-1\)")

    def test_ignore(self):
        rc, out = self.run_main({"cudnnCreate": 2}, {"cudnnCreate": 2, "cudnnGetVersion": 1},
                                "--ignore", "cudnnGetVersion")
        self.assertEqual(rc, 0)
        self.assertIn("calls: 1 functions, 1 match, 0 differ", out)
        self.assertIn("ignored: cudnnGetVersion", out)

    def test_bad_input_and_nothing_to_compare(self):
        self.assertEqual(self.run_main("[1, 2]", {})[0], 2)
        self.assertEqual(self.run_main("{not json", {})[0], 2)
        self.assertEqual(self.run_main({"cudnnCreate": "2"}, {})[0], 2)
        self.assertEqual(self.run_main({}, {})[0], 1)


class CheckCublasOpsTest(unittest.TestCase):
    """check_cublas_ops.py: GEMM ops against cuBLAS's and cuBLASLt's logs."""

    BLAS_LOG = """I! cuBLAS (v13.1.0) function cublasStatus_t cublasSgemm_v2(cublasHandle_t, ...) called:
i!  transa: type=cublasOperation_t; val=CUBLAS_OP_N(0)
i!  transb: type=cublasOperation_t; val=CUBLAS_OP_T(1)
i!  m: type=int; val=64
i!  n: type=int; val=32
i!  k: type=int; val=16
i!  lda: type=int; val=64
i!Process=1; Thread=2; GPU=0
"""
    # cuBLASLt 13.1's lines for a matmul: the Api line names the descriptors by address, the
    # Trace line (as it runs) gives their contents
    LT_LOG = ("[2026-11-27 05:53:34][cublasLt][1][Api][cublasLtMatmul] A=0X7F00 Adesc=0X45A0 "
              "B=0X7F40 Bdesc=0X45B0 C=0X7F80 Cdesc=0X45C0 D=0X7F80 Ddesc=0X45C0 "
              "computeDesc=0X4490 algo=0X7FFD workSpace=0X0 workSpaceSizeInBytes=0 stream=0X0\n"
              "[2026-11-27 05:53:34][cublasLt][1][Trace][cublasLtMatmul] A=0X7F00 "
              "Adesc=[type=R_16BF rows=768 cols=512 ld=768] B=0X7F40 "
              "Bdesc=[type=R_16BF rows=768 cols=256 ld=768] C=0X7F80 "
              "Cdesc=[type=R_16BF rows=512 cols=256 ld=512] D=0X7F80 "
              "Ddesc=[type=R_16BF rows=512 cols=256 ld=512] "
              "computeDesc=[computeType=COMPUTE_32F scaleType=R_32F transa=OP_T "
              "epilogue=EPILOGUE_GELU_BIAS biasPointer=0x7f5f69f86800] "
              "algo=[algoId=66 tile=20 stages=18] workSpace=0X0 workSpaceSizeInBytes=0 beta=0 "
              "outOfPlace=0 stream=0X0\n")

    def run_main(self, m, more=()):
        ops = [{"seq": 3, "api": "cublasSgemm_v2", "kind": "matmul",
                "params": {"transa": 0, "transb": 1, "m": m, "n": 32, "k": 16, "lda": 64}},
               {"seq": 9, "api": "cublasLtMatmul", "kind": "matmul",
                "knobs": {"ID": 66, "TILE_ID": 20, "STAGES_ID": 18},
                "params": {"transa": 1, "m": 512, "n": 256, "k": 768, "Atype": 14,
                           "computeType": 68, "epilogue": 36}}] + list(more)
        with tempfile.TemporaryDirectory() as d:
            paths = [os.path.join(d, n) for n in ("ops.json", "blas.log", "lt.log")]
            for path, text in zip(paths, (json.dumps({"ops": ops}), self.BLAS_LOG,
                                          self.LT_LOG)):
                with open(path, "w") as f:
                    f.write(text)
            out = io.StringIO()
            with redirect_stdout(out):
                sys.argv = ["check_cublas_ops.py"] + paths
                rc = check_cublas_ops.main()
        return rc, out.getvalue()

    def test_shapes_types_epilogue_algorithm(self):
        rc, out = self.run_main(64)
        self.assertEqual(rc, 0, out)
        self.assertIn("cuBLAS arguments: 1 calls, 6 numbers compared, 0 differ", out)
        self.assertIn("cuBLASLt shapes, types, epilogue: 1 calls, 7 numbers compared", out)
        self.assertIn("cuBLASLt algorithms: 1 calls, 3 numbers compared, 0 differ", out)

    def test_lt_descriptors_are_read_from_the_trace_line_of_the_same_matrices(self):
        # two threads' matmuls, interleaved: the second one's Trace line comes first
        first = self.LT_LOG.splitlines()
        second = self.LT_LOG.replace("0X7F00", "0X9F00").replace("rows=768", "rows=96")
        second = second.splitlines()
        text = "\n".join([first[0], second[0], second[1], first[1]]) + "\n"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "lt.log")
            with open(path, "w") as f:
                f.write(text)
            x, t = check_cublas_ops.logs.lt_log(path)
        logged = check_cublas_ops.lt_matmuls([a for _, a in x], [a for _, a in t])
        op = {"seq": 9, "api": "cublasLtMatmul", "params": {"m": 511, "k": 768, "Btype": 14}}
        first = {n: (o, t) for n, o, t in check_cublas_ops.lt_fields(op, logged[0])}
        second = {n: (o, t) for n, o, t in check_cublas_ops.lt_fields(op, logged[1])}
        self.assertEqual((first["m"], first["k"], first["Btype"]), ((511, 512), (768, 768),
                                                                     (14, 14)))
        self.assertEqual(second["k"], (768, 96))

    def test_captured_calls_count_once_and_replays_not_at_all(self):
        # a call captured into a CUDA graph is logged once, at the call; its replays are not
        # calls of cuBLAS
        captured = {"seq": 12, "api": "cublasSgemm_v2", "kind": "matmul", "origin": "captured",
                    "params": {"transa": 0, "transb": 1, "m": 64, "n": 32, "k": 16, "lda": 64}}
        replays = [dict(captured, origin="replay", graph_launch=g) for g in (14, 15, 16)]
        rc, out = self.run_main(64, [captured] + replays)
        self.assertIn("cuBLAS: 2 ops, 1 logged calls of their functions", out)
        self.BLAS_LOG = CheckCublasOpsTest.BLAS_LOG * 2
        rc, out = self.run_main(64, [captured] + replays)
        self.assertEqual(rc, 0, out)
        self.assertIn("cuBLAS arguments: 2 calls, 12 numbers compared, 0 differ", out)

    def test_compute_type_by_name(self):
        self.assertEqual(check_cublas_ops.value("COMPUTE_32F"), 68)
        self.assertEqual(check_cublas_ops.value("COMPUTE_32F_FAST_TF32"), 77)
        self.assertEqual(check_cublas_ops.value("COMPUTE_32F(68)"), 68)

    def test_a_shape_that_differs(self):
        rc, out = self.run_main(65)
        self.assertEqual(rc, 1)
        self.assertIn("call 3 cublasSgemm_v2 m: ops 65, log 64", out)


class CalibTableTest(unittest.TestCase):
    """A continued replay appends a problem's line again: the last counts."""

    def test_last_line_of_a_problem_counts(self):
        head = {"schema": "dnntrace.replay", "version": 1}
        cut = {"problem": "conv A", "api": "cudnnBackendExecute", "status": "failed",
               "reason": "budget", "executions": 3, "recorded_ns": 3000}
        again = dict(cut, status="measured", uncertain=False, replayed_ns=2000)
        other = {"problem": "conv B", "api": "cudnnBackendExecute", "status": "measured",
                 "uncertain": True, "executions": 1, "recorded_ns": 1000, "replayed_ns": 2000}
        gemm = {"problem": "gemm", "api": "cublasGemmEx", "status": "measured",
                "uncertain": False, "executions": 9, "recorded_ns": 9000}
        probs = calib_table.problems([head, cut, other, again, gemm])
        self.assertEqual([p["status"] for p in probs], ["measured", "measured"])
        ok, ok_events = calib_table.within(probs)
        self.assertAlmostEqual(ok, 0.9)         # A: 9000 of 10000 ns, calibrated
        self.assertAlmostEqual(ok_events, 0.0)  # A's events 0.67x, B's 2x
        self.assertEqual(len(calib_table.problems([head, gemm], "cublas")), 1)


if __name__ == "__main__":
    unittest.main()
