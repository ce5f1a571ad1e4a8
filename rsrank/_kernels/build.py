"""How the kernels are compiled: variants of a kernel with constants of their
own, serial and parallel twins cached on disk, and whether the cache holds
a kernel."""

import types
from numba import njit
from pathlib import Path


def variant(function, suffix, **constants):
    """A copy of ``function`` named with ``suffix`` whose globals hold
    ``constants`` in place of the module's: numba reads a global as a
    constant and drops the branches it rules out before compiling, so each
    variant compiles only its own code (the linear epoch never compiles the
    additive model's table lookups). The name keeps the variants apart in
    numba's on-disk cache. Without ``constants`` the copy shares the
    module's globals."""
    namespace = dict(function.__globals__, **constants) if constants else function.__globals__
    copy = types.FunctionType(function.__code__, namespace, function.__name__ + suffix,
                              function.__defaults__, function.__closure__)
    copy.__qualname__ = function.__qualname__ + suffix
    copy.__module__ = function.__module__
    return copy


def twins(function):
    """``(serial, parallel)`` builds of one kernel, both cached on disk.

    numba's cache indexes a kernel by its qualified name, line and argument
    types, not by ``parallel=True``: two builds of one Python function share
    cache entries, and whichever compiled first is loaded for both. The
    parallel build is therefore made from a copy of the function with its
    own name (:func:`variant`)."""
    return (njit(cache=True)(function),
            njit(cache=True, parallel=True)(variant(function, "_parallel")))


def cached(kernel):
    """Whether numba's on-disk cache holds ``kernel`` (a dispatcher) as this
    source defines it, or this process compiled it already; True when the
    cache cannot tell (numba found no directory it can use)."""
    from numba.core.caching import FunctionCache

    if kernel.signatures:
        return True
    code = kernel.py_func.__code__
    try:
        directory = Path(FunctionCache(kernel.py_func).cache_path)
    except RuntimeError:
        return True
    stem = f"{Path(code.co_filename).stem}.{kernel.py_func.__qualname__}-{code.co_firstlineno}"
    return any(directory.glob(f"{stem}.py*.nbi"))
