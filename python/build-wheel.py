#!/usr/bin/env python3
"""build-wheel.py BUILD OUTDIR --version V --prefix P --bindir B --cuda-include DIR

Builds the dnntrace wheel from a meson build folder, offline: the files
meson installs with the tag `runtime` (the dnntrace command, libdnntrace.so,
the sample program and its trace), stripped, are put under dnntrace/prefix/ as they
lie under the install prefix, so that the command finds its shim relative
to itself exactly as in any installed tree; this folder's Python sources
go beside them; then the PEP 517 build runs without isolation, with the
setuptools and wheel of the Python running this script. Prints the
wheel's path.

Run by `ninja -C build wheel` (python/meson.build), which passes the
build's options.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["pyproject.toml", "setup.py", "README.md", "dnntrace"]


def stage_install(build, prefix, bindir, work):
    """The runtime files as meson installs them, moved under
    work/dnntrace/prefix/ with the layout they have under the prefix."""
    if os.path.isabs(bindir) or os.path.normpath(bindir) != "bin":
        sys.exit(f"build-wheel: bindir is {bindir}; the wheel's "
                 "dnntrace/__main__.py runs prefix/bin/dnntrace")
    stage = os.path.join(work, "stage")
    subprocess.run(["meson", "install", "-C", build, "--destdir", stage,
                    "--tags", "runtime", "--strip", "--no-rebuild",
                    "--quiet"], check=True)
    tree = os.path.join(work, "src", "dnntrace", "prefix")
    shutil.move(stage + prefix, tree)
    if not os.path.exists(os.path.join(tree, bindir, "dnntrace")):
        sys.exit("build-wheel: meson installed no dnntrace command")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("build")
    ap.add_argument("outdir")
    ap.add_argument("--version", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--cuda-include", required=True)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="dnntrace-wheel-") as work:
        src = os.path.join(work, "src")
        os.mkdir(src)
        for name in SOURCES:
            copy = shutil.copytree if name == "dnntrace" else shutil.copy
            copy(os.path.join(HERE, name), os.path.join(src, name))
        with open(os.path.join(src, "VERSION"), "w") as f:
            f.write(args.version + "\n")
        stage_install(os.path.abspath(args.build), args.prefix, args.bindir,
                      work)
        dist = os.path.join(work, "dist")
        env = dict(os.environ, DNNTRACE_CUDA_INCLUDE=args.cuda_include)
        subprocess.run([sys.executable, "-m", "build", "--wheel",
                        "--no-isolation", "--outdir", dist, src],
                       check=True, env=env, stdout=sys.stderr)
        (wheel,) = os.listdir(dist)
        os.makedirs(args.outdir, exist_ok=True)
        path = os.path.join(os.path.abspath(args.outdir), wheel)
        shutil.move(os.path.join(dist, wheel), path)
        print(path)


if __name__ == "__main__":
    main()
