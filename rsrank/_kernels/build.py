"""How the kernels are compiled: variants of a kernel with constants of their
own, serial and parallel twins cached on disk, whether the cache holds a
kernel, and builds forgotten when any kernel's source changes."""

import hashlib
import os
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


def twins(function, **constants):
    """``(serial, parallel)`` builds of one kernel, both cached on disk; the
    parallel one with ``constants`` of its own (see :func:`variant`).

    numba's cache indexes a kernel by its qualified name, line and argument
    types, not by ``parallel=True``: two builds of one Python function share
    cache entries, and whichever compiled first is loaded for both. The
    parallel build is therefore made from a copy of the function with its
    own name (:func:`variant`)."""
    return (njit(cache=True)(function),
            njit(cache=True, parallel=True)(variant(function, "_parallel", **constants)))


def read_only(array):
    """A read-only view of ``array``, without a copy. numba's type of an
    array includes whether it may be written, and a kernel compiles once
    per type: inputs the kernels only read, passed as such views whatever
    their source (memory maps of the cache are read-only, arrays made here
    are not), compile one build."""
    view = array.view()
    view.flags.writeable = False
    return view


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


#: in numba's cache directory of the kernels: the SHA-256 of their sources
SOURCES_STAMP = "rsrank-kernel-sources.sha256"


def forget_stale_builds(kernel):
    """Remove numba's cached builds of this package's kernels when any of
    their source files changed since they were cached.

    numba checks a cached kernel against its own file only; a kernel that
    calls one in another file (every epoch calls the penalties, the scores
    and the pair weights) keeps its old build of the callee after that file
    changes, and would train with it. ``kernel`` (any dispatcher of the
    package) locates the cache (:func:`forget_builds`). A cache that cannot
    be written is left alone."""
    from numba.core.caching import FunctionCache

    try:
        directory = Path(FunctionCache(kernel.py_func).cache_path)
        forget_builds(directory, sorted(Path(__file__).parent.glob("*.py")))
    except (OSError, RuntimeError):
        pass


def forget_builds(directory, sources):
    """In numba's cache ``directory``: remove the builds (``.nbi``, ``.nbc``)
    of the kernels of ``sources`` (their files) unless the stamp
    :data:`SOURCES_STAMP` holds the hash of the sources as they are now;
    then write that stamp. Returns whether builds were forgotten."""
    digest = hashlib.sha256()
    for source in sources:
        digest.update(Path(source).name.encode() + b"\0" + Path(source).read_bytes())
    directory = Path(directory)
    stamp = directory / SOURCES_STAMP
    if stamp.is_file() and stamp.read_text().strip() == digest.hexdigest():
        return False
    stems = tuple(f"{Path(source).stem}." for source in sources)
    for entry in directory.iterdir() if directory.is_dir() else ():
        if entry.name.startswith(stems) and entry.suffix in (".nbi", ".nbc"):
            entry.unlink(missing_ok=True)
    directory.mkdir(parents=True, exist_ok=True)
    staging = stamp.with_name(f".{stamp.name}.{os.getpid()}")
    staging.write_text(digest.hexdigest() + "\n")
    os.replace(staging, stamp)
    return True
