"""Thread counts: n_jobs="auto" follows the work and the cores left free."""

import os

import numba
import numpy as np
import pytest

from rsrank import RSRank
from rsrank.learning import _threads
from rsrank.learning._threads import WORK_PER_THREAD, free_cores, threads


@pytest.fixture
def fresh_reading(monkeypatch):
    """No reading of the free cores kept from an earlier call."""
    monkeypatch.setitem(_threads._FREE, "when", -1e9)


def test_auto_gives_one_thread_to_small_work_and_one_per_free_core(monkeypatch):
    available = numba.config.NUMBA_NUM_THREADS
    for free in (1, 2, 64):
        monkeypatch.setattr(_threads, "free_cores", lambda free=free: free)
        assert threads("auto", work=WORK_PER_THREAD - 1) == 1
        assert threads("auto", work=10**12) == min(free, available)
        assert threads("auto", work=3 * WORK_PER_THREAD) == min(free, available, 3)
        assert threads("auto") == min(free, available)
    assert threads(None) == 1 and threads(1) == 1 and threads(-1) == available


def test_free_cores_counts_the_idle_share_of_the_machine(monkeypatch, fresh_reading):
    total = os.cpu_count()
    usable = len(os.sched_getaffinity(0))
    # this process used nothing meanwhile (an earlier test's BLAS or numba threads
    # still waiting busily would be counted as its own use)
    monkeypatch.setattr(_threads, "time", _Clock(0))
    # two readings of /proc/stat: the machine was half idle in between
    readings = iter([(1000, 0), (1000 + 100 * total, 50 * total)])
    monkeypatch.setattr(_threads, "_cpu_times", lambda: next(readings))
    assert free_cores() == max(1, min(usable, round(total / 2)))
    # every core busy still leaves this process one
    monkeypatch.setitem(_threads._FREE, "when", -1e9)
    readings = iter([(1000, 0), (2000, 0)])
    monkeypatch.setattr(_threads, "_cpu_times", lambda: next(readings))
    assert free_cores() == 1


class _Clock:
    """A clock for free_cores: each reading a step later; this process's
    CPU time grows by ``own`` cores per second of it."""

    def __init__(self, own):
        self.now, self.own = 0.0, own

    def sleep(self, seconds):
        self.now += seconds

    def perf_counter(self):
        return self.now

    def monotonic(self):
        return self.now

    def process_time(self):
        return self.now * self.own


@pytest.mark.parametrize("own", [0, 1, 2])
def test_free_cores_leaves_out_what_this_process_used(monkeypatch, fresh_reading, own):
    """The threads of this process's last parallel loop, still waiting
    busily, are not another process's load."""
    total = os.cpu_count()
    usable = len(os.sched_getaffinity(0))
    own = min(own, total)
    clock = _Clock(own)
    monkeypatch.setattr(_threads, "time", clock)
    # the whole machine busy over the 0.03 s reading (100 jiffies a second)
    readings = iter([(1000, 0), (1000 + 3 * total, 0)])
    monkeypatch.setattr(_threads, "_cpu_times", lambda: next(readings))
    assert free_cores() == max(1, min(usable, own))


def test_free_cores_reads_the_machine(fresh_reading):
    assert 1 <= free_cores() <= len(os.sched_getaffinity(0))


def test_an_auto_fit_equals_a_one_thread_fit_on_small_data(monkeypatch):
    monkeypatch.setattr(_threads, "free_cores", lambda: 2)
    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(300, 6)), rng.integers(0, 3, 300), np.repeat(np.arange(30), 10)
    one = RSRank(max_iter=5, n_jobs=1, random_state=0).fit(X, y, qid=qid)
    auto = RSRank(max_iter=5, n_jobs="auto", random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(auto.coef_, one.coef_)
    np.testing.assert_array_equal(auto.predict(X), one.predict(X))


@pytest.mark.parametrize("bad", [0, "all", 1.5, True])
def test_n_jobs_refuses(bad):
    with pytest.raises(ValueError, match="n_jobs"):
        RSRank(n_jobs=bad).fit(np.ones((4, 2)), [0, 1, 0, 1], qid=[1, 1, 2, 2])


def test_a_deferred_parallel_build_runs_serially_until_a_child_process_compiled_it():
    import time

    from rsrank.learning import _compile
    from rsrank import _kernels

    rng = np.random.default_rng(0)
    # Fortran-ordered float32 rows: a signature no other call compiles
    X = np.asfortranarray(rng.normal(size=(64, 3)).astype(np.float32))
    empty = np.zeros(0, dtype=np.float32)
    args = (empty, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), X,
            rng.normal(size=3), np.empty(64))
    serial, parallel = _kernels.linear_scores_serial, _kernels.linear_scores_parallel
    assert _compile.choose(serial, parallel, 1, args) is serial
    assert _compile.choose(serial, parallel, 2, args) is parallel  # not deferred
    parallel(*args)  # compiled here
    with _compile.deferred():
        assert _compile.choose(serial, parallel, 2, args) is parallel  # compiled already
        fresh = (empty, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), X,
                 args[4], np.empty(64))
        assert _compile.choose(serial, parallel, 2, fresh) is serial
        deadline = time.monotonic() + 300
        while _compile.choose(serial, parallel, 2, fresh) is serial:
            assert time.monotonic() < deadline, "the child process never finished"
            time.sleep(0.1)
    expected = serial(*fresh).copy()
    np.testing.assert_array_equal(parallel(*fresh), expected)
    np.testing.assert_allclose(expected, X.astype(np.float64) @ args[4], rtol=1e-12)


@pytest.mark.slow  # a fresh process compiles every kernel of a fit
def test_the_pair_kernels_compiled_aside_are_those_a_fit_calls(tmp_path):
    import subprocess
    import sys

    # an empty cache: the fit compiles every kernel it calls and lists each signature
    probe = (
        "import numpy as np\n"
        "from rsrank import RSRank\n"
        "from rsrank.learning._compile import lambda_kernels\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(300, 4)).astype(np.float32)\n"
        "RSRank(max_iter=1).fit(X, rng.integers(0, 3, 300), qid=np.repeat(np.arange(5), 60))\n"
        "print([kernel.py_func.__name__ for kernel, signature in lambda_kernels()\n"
        "       if signature not in kernel.signatures])\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}, check=True)
    assert out.stdout.strip() == "[]"  # none that the fit did not call with those types


def test_thread_count_blocks_nest_and_restore():
    # a block inside one that holds the same count leaves numba alone; any
    # other count is set for the block and the outer one's comes back after
    from rsrank.learning._threads import numba_threads

    every = numba.config.NUMBA_NUM_THREADS
    start = numba.get_num_threads()
    with numba_threads(1):
        assert numba.get_num_threads() == 1
        with numba_threads(1):
            assert numba.get_num_threads() == 1
        with numba_threads(every):
            assert numba.get_num_threads() == every
            with numba_threads(1):
                assert numba.get_num_threads() == 1
            assert numba.get_num_threads() == every
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == start
    with numba_threads(start):
        assert numba.get_num_threads() == start
    assert numba.get_num_threads() == start


def test_a_command_runs_with_blas_on_one_thread(monkeypatch):
    # the command line holds BLAS at one thread for the whole command, between
    # its fits too (rsrank.learning._blas), and gives its threads back after
    import argparse

    from threadpoolctl import threadpool_limits

    from conftest import blas_threads

    from rsrank.cli import _edge

    seen = []
    args = argparse.Namespace(run=lambda _: seen.append(blas_threads()) or 0, debug=False,
                              command="probe")
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() != {2}:
            pytest.skip("no BLAS here that takes two threads")
        assert _edge.run(args) == 0
        assert seen == [{1}]
        assert blas_threads() == {2}
