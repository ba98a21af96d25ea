"""Regions of a Python program, named in what dnntrace records.

    import dnntrace

    with dnntrace.region("step"):
        loss = model(batch)

    @dnntrace.region("evaluate")
    def evaluate(model): ...

A region is an NVTX range (CUDA's standard annotation), pushed where it
starts and popped where it ends, so Nsight Systems shows it too. Where no
NVTX tool is loaded, NVTX's functions do nothing, and a region costs what
a `with threading.Lock()` does. dnntrace.recording() tells whether
dnntrace records this process. The dnntrace command itself is installed
with this package: `dnntrace record -- python train.py`, or
`python -m dnntrace record -- python train.py`.
"""
import functools

from ._nvtx import Region as _Region
from ._nvtx import recording

__all__ = ["region", "recording"]


class region(_Region):
    """region(name): a context manager and a decorator marking an NVTX
    range of that name, around the block or each call of the function.

    One object may be entered by several threads at once, or again by a
    recursive call: NVTX keeps the ranges open per thread."""

    __slots__ = ()

    def __call__(self, func):
        @functools.wraps(func)
        def marked(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return marked

    def __repr__(self):
        return f"dnntrace.region({self.name!r})"
