"""Synthetic traces for the output checks: synth-trace.c run into folders
of one temporary directory, removed with it."""
import contextlib
import os
import subprocess
import tempfile


@contextlib.contextmanager
def synth_jobs(synth, api):
    """Yields (tmp, gen): gen(NAME, ARGS...) writes synth-trace's traces
    into tmp/NAME and returns that folder."""
    with tempfile.TemporaryDirectory() as tmp:
        def gen(sub, *args):
            d = os.path.join(tmp, sub)
            subprocess.run([synth, api, d, *args], check=True,
                           stdout=subprocess.DEVNULL)
            return d
        yield tmp, gen
