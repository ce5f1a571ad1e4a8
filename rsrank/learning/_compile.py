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
builds give the same weights bit for bit (:data:`rsrank.learning.objective.GRADIENT_ROWS`),
so only the time depends on which ran. Another child compiles the pair
kernels meanwhile, whose argument types are known before the data is read.

The child reads a list of ``(module, name, signature)`` pickled on
standard input and compiles those kernels.
"""

import contextlib
import pickle
import subprocess
import sys
from pathlib import Path

import numba

__all__ = ["choose", "deferred"]

_STATE = {"defer": False, "children": {}}


@contextlib.contextmanager
def deferred():
    """Within it, :func:`choose` compiles parallel builds in child processes,
    and a child compiles the pair kernels (:func:`lambda_kernels`) while
    this process reads the data and compiles the rest; :func:`settle` waits
    for it before they are first called. Nothing is deferred when numba
    compiles nothing (``NUMBA_DISABLE_JIT=1``)."""
    if numba.config.DISABLE_JIT:
        yield
        return
    before = _STATE["defer"]
    _STATE["defer"] = True
    if _STATE.get("pairs") is None:
        _STATE["pairs"] = _spawn(lambda_kernels()[:_CHILD_SHARE])
    try:
        yield
    finally:
        _STATE["defer"] = before


def lambda_kernels():
    """``(kernel, signature)`` of the per-query pair kernels an epoch calls,
    whose argument types do not depend on the data's (float64 and int64
    arrays and numbers; ``tests/end_to_end/test_threads.py`` checks them against a
    fit's): the child's share first, then this process's (:func:`settle`).
    :func:`~rsrank._kernels.query_lambdas_from` calls them all."""
    from .. import _kernels

    floats = numba.types.Array(numba.float64, 1, "C")
    ints = numba.types.Array(numba.int64, 1, "C")
    labels = numba.types.Array(numba.int64, 1, "C", readonly=True)  # a view (read_only)
    i, f, b = numba.int64, numba.float64, numba.boolean
    ahead = numba.types.UniTuple(i, 2)
    steps = numba.typeof(_kernels.Steps(0.0, 0.0, 0.0, 1, 0.0, False))
    return [
        (_kernels.ranked_lambdas, (ints, floats, floats, ints, i, floats, i, f, i, b, floats,
                                   ahead)),
        (_kernels.ranked_order_from, (floats, ints)),
        (_kernels.take_step, (floats, numba.types.Array(numba.float64, 2, "C"), i, floats, steps,
                              floats, i)),
        # this process's share
        (_kernels.pair_loop_lambdas, (floats, floats, labels, floats, i, f, i, b, floats, ints,
                                      ahead)),
        (_kernels.query_lambdas_from, (floats, floats, labels, floats, i, f, i, b, floats, ints,
                                       ints, i, ahead)),
    ]


#: How many of :func:`lambda_kernels` the child compiles
_CHILD_SHARE = 3


def settle():
    """Before the first epoch: compile this process's share of the pair
    kernels, then wait for the child compiling the rest, if one is at work
    (at most two minutes: then this process compiles them itself)."""
    child = _STATE.get("pairs")
    if child is None or _STATE.get("settled"):
        return
    _STATE["settled"] = True
    own = lambda_kernels()[_CHILD_SHARE:]
    for kernel, signature in own[:-1]:
        kernel.compile(signature)
    if child.poll() is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=120)


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
        _STATE["children"][key] = _spawn([(parallel, signature)])
        return serial
    return serial if child.poll() is None else parallel


def _spawn(work):
    """A child process compiling each ``(kernel, signature)`` of ``work`` into
    numba's cache."""
    jobs = []
    for kernel, signature in work:
        module = sys.modules[kernel.py_func.__module__]
        name = next(name for name, value in vars(module).items() if value is kernel)
        jobs.append((module.__name__, name, signature))
    package_root = str(Path(__file__).resolve().parents[2])
    child = subprocess.Popen([sys.executable, "-c", _CHILD, package_root], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with contextlib.suppress(OSError):
        child.stdin.write(pickle.dumps(jobs))
    with contextlib.suppress(OSError):
        child.stdin.close()
    return child


#: The child's program: this very package (its directory goes first on the
#: path only when the interpreter would find another rsrank or none), then
#: :func:`_compile_all` on standard input
_CHILD = """import importlib.util, sys
from pathlib import Path
spec = importlib.util.find_spec("rsrank")
if spec is None or Path(spec.origin).resolve().parents[1] != Path(sys.argv[1]):
    sys.path.insert(0, sys.argv[1])
from rsrank.learning._compile import _compile_all
_compile_all(sys.stdin.buffer)
"""


def _compile_all(stream):
    import importlib

    jobs = pickle.load(stream)
    for module, name, signature in jobs:
        getattr(importlib.import_module(module), name).compile(signature)
