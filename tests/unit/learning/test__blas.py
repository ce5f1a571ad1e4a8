"""rsrank.learning._blas: BLAS held at one thread within the main thread's
blocks, and given back its threads when the outermost one leaves."""

import threading

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from conftest import blas_threads
from rsrank.learning._blas import serial_blas
from rsrank.learning._threads import numba_threads


@pytest.fixture
def two_blas_threads():
    """BLAS at two threads for the test, so that one thread is a change."""
    assert np.dot(np.ones(2), np.ones(2)) == 2.0  # NumPy's BLAS, loaded with it
    if not blas_threads():
        pytest.skip("no BLAS library that threadpoolctl can set is loaded")
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() != {2}:
            pytest.skip("this BLAS does not take two threads here")
        yield


def test_a_block_holds_blas_at_one_thread_and_gives_its_threads_back(two_blas_threads):
    with serial_blas():
        assert blas_threads() == {1}
        with serial_blas():  # blocks nest
            assert blas_threads() == {1}
        assert blas_threads() == {1}  # the outer block still holds it
    assert blas_threads() == {2}


def test_a_block_left_by_an_error_gives_the_threads_back(two_blas_threads):
    with pytest.raises(RuntimeError):
        with serial_blas():
            raise RuntimeError("stop")
    assert blas_threads() == {2}
    with serial_blas():  # and a later block holds it again
        assert blas_threads() == {1}


def test_where_threadpoolctl_cannot_read_the_libraries_a_block_leaves_them_alone(
        two_blas_threads, monkeypatch):
    import rsrank.learning._blas as blas

    def unreadable():
        raise OSError("cannot read the loaded libraries")

    monkeypatch.setitem(blas._STATE, "controller", None)
    monkeypatch.setattr(blas, "ThreadpoolController", unreadable)
    for _ in range(2):  # and it does not try again
        with serial_blas():
            assert blas_threads() == {2}
    assert blas._STATE["controller"] is False


def test_an_interrupt_that_threadpoolctl_wraps_still_ends_the_block(monkeypatch):
    # a Ctrl-C that lands while the libraries are read, wrapped by the code it
    # landed in, is not taken for a failure to read them
    import rsrank.learning._blas as blas

    def interrupted():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as error:
            raise RuntimeError("Error calling __set_name__") from error

    monkeypatch.setitem(blas._STATE, "controller", None)
    monkeypatch.setattr(blas, "ThreadpoolController", interrupted)
    with pytest.raises(RuntimeError) as caught:
        with serial_blas():
            pass
    assert isinstance(caught.value.__cause__, KeyboardInterrupt)
    assert blas._STATE["controller"] is None  # it will read them at the next block
    assert blas._STATE["depth"] == 0


def test_a_block_in_another_thread_leaves_blas_as_it_is(two_blas_threads):
    # BLAS's thread count is the process's, set by one thread: a fit in another
    # thread (a Dask worker's) neither limits it nor gives it back under the
    # main thread's block
    entered, release = threading.Event(), threading.Event()
    seen = []

    def other():
        with serial_blas():
            seen.append(blas_threads())
            entered.set()
            release.wait(10)
        seen.append(blas_threads())

    worker = threading.Thread(target=other)
    worker.start()
    assert entered.wait(10)
    with serial_blas():
        release.set()
        worker.join(10)
        assert blas_threads() == {1}
    assert seen == [{2}, {1}]
    assert blas_threads() == {2}


def test_a_block_of_numba_threads_holds_blas_when_it_runs_more_than_one(two_blas_threads):
    with numba_threads(1):
        assert blas_threads() == {2}  # one thread: nothing of its own waits on the cores
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here")
    with numba_threads(2):
        assert blas_threads() == {1}
        with numba_threads(1):
            assert blas_threads() == {1}
        with numba_threads(2):  # the same count: the block does nothing
            assert blas_threads() == {1}
        assert blas_threads() == {1}
    assert blas_threads() == {2}
