"""How the kernels are compiled: cached on disk under a lock, variants of a
kernel with constants of their own, serial and parallel twins, whether the
cache holds a kernel, and builds forgotten when any kernel's source
changes."""

import contextlib
import hashlib
import os
import types
from pathlib import Path

import numba
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

try:
    import fcntl
except ImportError:  # not POSIX: numba's cache as it is
    fcntl = None

#: in each of numba's cache directories of the kernels: the file whose lock
#: :class:`LockedCache` takes
CACHE_LOCK = "rsrank-kernels.lock"

_HELD = {"depth": 0}


@contextlib.contextmanager
def cache_lock(directory, exclusive=True):
    """Hold the lock of numba's cache ``directory`` (shared for reading,
    exclusive for writing), taken once per process: a nested hold inside
    one already taken goes straight through. Where the lock cannot be had
    (no lock file can be made there, or its file system refuses locks, as
    some network file systems do) the cache stays unlocked, as numba has
    it."""
    with contextlib.ExitStack() as held:
        if fcntl is not None and not _HELD["depth"]:
            try:
                Path(directory).mkdir(parents=True, exist_ok=True)
                handle = held.enter_context(open(Path(directory) / CACHE_LOCK, "a"))
                fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            except OSError:
                pass
        _HELD["depth"] += 1
        try:
            yield
        finally:
            _HELD["depth"] -= 1


class LockedCache(FunctionCache):
    """numba's on-disk cache of one kernel, read and written under the lock
    of its directory (:func:`cache_lock`).

    numba saves a build by reading the kernel's index, taking the first
    free data file's number, and writing the index and then the data. Two
    processes compiling two argument types of one kernel at once (workers
    of a Dask cluster or of pytest-xdist on an empty cache) both take
    number 1: the index of one is left pointing at the data of the other,
    and the next process that loads it runs a build compiled for other
    types ("can't unbox array", or wrong numbers without a word). Under
    the lock a save sees the index of the save before it, and a load never
    sees an index whose data is not written yet."""

    def load_overload(self, sig, target_context):
        with cache_lock(self.cache_path, exclusive=False):
            return super().load_overload(sig, target_context)

    def save_overload(self, sig, data):
        with cache_lock(self.cache_path):
            super().save_overload(sig, data)


class LockedDispatcher(CPUDispatcher):
    """numba's dispatcher of a CPU kernel whose on-disk cache is a
    :class:`LockedCache`."""

    def enable_caching(self):
        self._cache = LockedCache(self.py_func)


def njit(function=None, **options):
    """numba's ``njit``, whose kernels are :class:`LockedDispatcher`: with
    ``cache=True`` their builds are saved and loaded under a lock. As a
    decorator with or without options."""
    if function is None:
        return lambda f: njit(f, **options)
    cache = options.pop("cache", False)
    plain = numba.njit(**options)(function)  # numba's reading of the options
    if numba.config.DISABLE_JIT:
        return plain
    dispatcher = LockedDispatcher(py_func=function, locals={}, targetoptions=plain.targetoptions)
    if cache:
        dispatcher.enable_caching()
    return dispatcher


def python_twin(twin):
    """A decorator of a numba intrinsic, which has no Python body: the
    intrinsic itself, or ``twin`` (a Python function of the same effect)
    when numba compiles nothing (``NUMBA_DISABLE_JIT=1``, the kernels run
    as Python)."""
    return lambda intrinsic: twin if numba.config.DISABLE_JIT else intrinsic


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
    cache cannot tell (numba found no directory it can use), and when
    numba compiles nothing (``NUMBA_DISABLE_JIT=1``: the kernels run as
    Python)."""
    if numba.config.DISABLE_JIT or kernel.signatures:
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
    be written is left alone, and so is the cache when numba compiles
    nothing (``NUMBA_DISABLE_JIT=1``)."""
    if numba.config.DISABLE_JIT:
        return
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
    with cache_lock(directory):
        return _forget(directory, sources, stamp, digest.hexdigest())


def _forget(directory, sources, stamp, digest):
    if stamp.is_file() and stamp.read_text().strip() == digest:
        return False  # another process did it while this one waited
    stems = tuple(f"{Path(source).stem}." for source in sources)
    for entry in directory.iterdir() if directory.is_dir() else ():
        if entry.name.startswith(stems) and entry.suffix in (".nbi", ".nbc"):
            entry.unlink(missing_ok=True)
    directory.mkdir(parents=True, exist_ok=True)
    staging = stamp.with_name(f".{stamp.name}.{os.getpid()}")
    staging.write_text(digest + "\n")
    os.replace(staging, stamp)
    return True
