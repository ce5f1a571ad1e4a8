"""Thread counts: ``n_jobs`` as scikit-learn spells it, ``"auto"`` by the work
and the free cores, and numba's pool."""

import os
import threading
import time

import numba

from ._blas import serial_blas

#: Stored feature values per thread below which an epoch gains nothing from
#: threads (``scripts/bench_threads.py``, ``results/threads.md``)
WORK_PER_THREAD = 10_000
#: ... and below which one scoring pass (``X @ w``) does: two threads save
#: about half of a pass, which is under half a millisecond below a million
#: values, less than a first run spends compiling the threaded build
SCORING_WORK_PER_THREAD = 1_000_000

_FREE = {"when": -1.0, "cores": 1}


def threads(n_jobs, work=None, per_thread=WORK_PER_THREAD):
    """The number of threads ``n_jobs`` asks for: None is 1, -1 every core
    numba may use, -2 all but one, and so on; never more than numba has.

    ``"auto"``: one thread per free core (:func:`free_cores`), and only as
    many as ``work`` (stored feature values, when known) keeps busy, at
    least :data:`WORK_PER_THREAD` each; data too small gets one thread."""
    if n_jobs is None:
        return 1
    available = numba.config.NUMBA_NUM_THREADS
    if isinstance(n_jobs, str):  # "auto", checked by the caller
        if work is not None:
            available = min(available, int(work // per_thread))
        return max(1, min(free_cores(), available)) if available > 1 else 1
    if n_jobs < 0:
        return max(1, available + 1 + n_jobs)
    return max(1, min(int(n_jobs), available))


def free_cores(interval=0.03, max_age=2.0):
    """Cores this process may use that other processes leave idle: the idle
    share of all CPUs over ``interval`` seconds (``/proc/stat``), plus what
    this process itself used meanwhile (the threads of its last parallel
    loop wait busily for a moment after it ends: counted as another
    process's, they halved the threads of the fit after them), else the
    one-minute load average. A reading younger than ``max_age`` seconds is
    reused."""
    now = time.monotonic()
    if now - _FREE["when"] < max_age:
        return _FREE["cores"]
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 1
    total = os.cpu_count() or usable
    try:
        first, own, wall = _cpu_times(), time.process_time(), time.perf_counter()
        time.sleep(interval)
        second = _cpu_times()
        own = (time.process_time() - own) / max(time.perf_counter() - wall, 1e-9)
        busy_share = 1.0 - (second[1] - first[1]) / max(second[0] - first[0], 1)
        busy = max(busy_share * total - own, 0.0)
    except OSError:
        busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    cores = max(1, min(usable, int(round(total - busy))))
    _FREE.update(when=time.monotonic(), cores=cores)
    return cores


def _cpu_times():
    """(all jiffies, idle jiffies) of the machine, from ``/proc/stat``."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields[:8]), idle


#: the count the innermost :class:`numba_threads` of this thread holds (numba's
#: count is per thread)
_HELD = threading.local()


def held_threads():
    """The thread count the innermost :class:`numba_threads` block of this
    thread holds (a fit's, a scoring's), or 1 outside any: work that runs
    inside a fit or a scoring (bin codes and thresholds) takes as many
    threads as the fit's ``n_jobs`` gives it, and one when nothing asked
    for more."""
    return getattr(_HELD, "n", None) or 1


class numba_threads:
    """Temporarily set numba's thread count. Inside a block that holds the
    same count already (a fit's epochs inside the fit's block) it does
    nothing: asking numba for its count and setting it back and forth
    costs microseconds, a tenth of a small query set's epoch. A block of
    more than one thread holds BLAS to one (:func:`~rsrank.learning._blas.serial_blas`):
    its threads would wait busily on the cores the block's kernels use."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.outer = getattr(_HELD, "n", None)
        if self.outer == self.n:
            return
        self.previous = numba.get_num_threads()
        if self.n != self.previous:
            numba.set_num_threads(self.n)
        _HELD.n = self.n
        self.blas = serial_blas() if self.n > 1 else None
        if self.blas is not None:
            self.blas.__enter__()

    def __exit__(self, *exc):
        if self.outer == self.n:
            return
        if self.blas is not None:
            self.blas.__exit__(None, None, None)
        if self.n != self.previous:
            numba.set_num_threads(self.previous)
        _HELD.n = self.outer


def coding_threads(n_jobs, values):
    """The :class:`numba_threads` block of work that codes rows into bins
    (a fit's start, a scoring): the threads ``n_jobs`` gives ``values``
    stored values at :data:`SCORING_WORK_PER_THREAD` each."""
    return numba_threads(threads(n_jobs, values, SCORING_WORK_PER_THREAD))
