"""BLAS on the calling thread while RSRank's own threads work.

NumPy's OpenBLAS runs a product of long vectors (a norm among them) on every
core, and its worker threads then wait busily for more work for about a
tenth of a second before they sleep. A parallel kernel that starts meanwhile
shares its cores with them: in the level steps' bound of ``rsrank train
--additive --interactions 10`` (a norm of 20,000 values between two gradient
passes) each pass took 60-75 ms against 35-38 ms, and with BLAS on one
thread the command took 0.90x-0.95x the time at a tenth and a quarter of
MSLR-WEB30K's shape (``results/serial_blas.md``). RSRank's own BLAS calls
are small, so one thread loses nothing there. This module imports no
numerical library: the command line's edge holds it too.
"""

import contextlib
import threading
import warnings

from threadpoolctl import ThreadpoolController

from ._interrupts import interruption

__all__ = ["serial_blas"]

#: the controller of the BLAS libraries loaded when it was first needed, and
#: how deep the main thread's blocks nest
_STATE = {"controller": None, "depth": 0}


@contextlib.contextmanager
def serial_blas():
    """Within it, the BLAS libraries the process has loaded (NumPy's and
    SciPy's OpenBLAS, or MKL) run on one thread, and their thread counts
    come back as the outermost block leaves. Blocks nest; the libraries are
    found once, at the first block (those loaded later are left as they
    are). A BLAS library's thread count is the process's, which
    threadpoolctl lets one thread set: a block in another thread than the
    main one (a fit in a Dask worker's thread) leaves it as it is, and
    within a block the BLAS work of the process's other threads runs on
    one thread too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    limiter = contextlib.nullcontext() if _STATE["depth"] > 0 else _one_thread()
    _STATE["depth"] += 1
    try:
        with limiter:
            yield
    finally:
        _STATE["depth"] -= 1


def _one_thread():
    """threadpoolctl's limiter of the loaded BLAS libraries at one thread, or
    a block that does nothing where threadpoolctl cannot find or set them:
    the limit only saves time, and no fit may fail for want of it. A Ctrl-C
    that lands meanwhile still ends the command, even wrapped in another
    error by the code it landed in (:func:`~rsrank.learning._interrupts.interruption`)."""
    if _STATE["controller"] is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its notes on OpenMP runtimes are not the user's
            try:
                _STATE["controller"] = ThreadpoolController()
            except Exception as error:  # any failure to read the libraries: leave them alone
                if interruption(error) is not None:
                    raise
                _STATE["controller"] = False
    if _STATE["controller"] is False:
        return contextlib.nullcontext()
    try:
        return _STATE["controller"].limit(limits=1, user_api="blas")
    except Exception as error:  # a library that refuses the limit: leave them alone from now on
        if interruption(error) is not None:
            raise
        _STATE["controller"] = False
        return contextlib.nullcontext()
