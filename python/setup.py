"""The dnntrace wheel's C extension: NVTX ranges for dnntrace.region,
built against Python's stable ABI, so that the wheel's tag is cp38-abi3
and one wheel serves every Python 3.8 and later (the command, the shim
and the sample program, its other binaries, do not use Python at all).
Everything else is declared in pyproject.toml."""
import os
import sys

from setuptools import Extension, setup

if not os.path.exists("dnntrace/prefix/bin/dnntrace"):
    sys.exit("dnntrace: the wheel is built from a meson build, with its "
             "command and shim: ninja -C build wheel (python/build-wheel.py)")

setup(
    ext_modules=[
        Extension(
            "dnntrace._nvtx",
            ["dnntrace/_nvtx.c"],
            # NVTX v3 is header-only, shipped with the CUDA toolkit
            include_dirs=[os.environ["DNNTRACE_CUDA_INCLUDE"]],
            libraries=["dl"],
            py_limited_api=True,
        )
    ],
    options={"bdist_wheel": {"py_limited_api": "cp38"}},
)
