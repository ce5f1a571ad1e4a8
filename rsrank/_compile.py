"""A kernel's serial or parallel build, and the parallel builds compiled in a
child process during a first run.

On the first run after an install numba compiles every kernel the run
calls, and the ``parallel=True`` builds of the epoch and of the scoring
take about as long again as their serial twins (``results/cold.md``).
Within :func:`deferred` (``rsrank train`` and ``rsrank path`` on an empty
cache), a parallel build that this process has not compiled yet for the
arguments at hand is handed to a child process, which compiles it into
numba's on-disk cache, and the serial build runs meanwhile; the next call
after the child is done loads the parallel build from the cache. Both
builds give the same weights bit for bit (:data:`rsrank.objective.GRADIENT_ROWS`),
so only the time depends on which ran.

``python -m rsrank._compile`` is that child: it reads ``(module, name,
signature)`` pickled on standard input and compiles the one kernel.
"""

import contextlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numba

__all__ = ["choose", "deferred"]

_STATE = {"defer": False, "children": {}}


@contextlib.contextmanager
def deferred():
    """Within it, :func:`choose` compiles parallel builds in child processes."""
    before = _STATE["defer"]
    _STATE["defer"] = True
    try:
        yield
    finally:
        _STATE["defer"] = before


def choose(serial, parallel, n_threads, args):
    """The build of a kernel to call with ``args`` on ``n_threads`` threads:
    ``serial`` for one thread, else ``parallel``, unless compiling it is
    deferred (:func:`deferred`) and not done yet."""
    if n_threads <= 1:
        return serial
    if not _STATE["defer"]:
        return parallel
    signature = tuple(numba.typeof(a) for a in args)
    if signature in parallel.signatures:
        return parallel
    key = (id(parallel), signature)
    child = _STATE["children"].get(key)
    if child is None:
        _STATE["children"][key] = _spawn(parallel, signature)
        return serial
    return serial if child.poll() is None else parallel


def _spawn(kernel, signature):
    """A child process compiling ``kernel`` for ``signature`` into numba's cache."""
    module = sys.modules[kernel.py_func.__module__]
    name = next(name for name, value in vars(module).items() if value is kernel)
    package_root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [package_root,
                                                       os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen([sys.executable, "-m", "rsrank._compile"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    with contextlib.suppress(OSError):
        child.stdin.write(pickle.dumps((module.__name__, name, signature)))
    with contextlib.suppress(OSError):
        child.stdin.close()
    return child


def _compile_one(stream):
    import importlib

    module, name, signature = pickle.load(stream)
    with contextlib.suppress(AttributeError, OSError):
        os.nice(5)  # the run that waits for it comes first
    getattr(importlib.import_module(module), name).compile(signature)


if __name__ == "__main__":
    _compile_one(sys.stdin.buffer)
