"""BLAS on the calling thread while RSRank's own threads work.

NumPy's OpenBLAS runs a vector product or a norm of more than a few thousand
values on all cores, and its worker threads then wait busily for more work
for about a tenth of a second before they sleep. A parallel kernel that
starts meanwhile shares its cores with them: in the level steps' bound of
``rsrank train --additive --interactions 10`` (a norm between two gradient
passes) each pass took twice as long, and the whole run 1.07x as long as with
``OPENBLAS_NUM_THREADS=1`` (``results/serial_blas.md``). RSRank's own BLAS
calls are small, so one thread loses nothing there. This module imports no
numerical library: the command line's edge holds it too.
"""

import contextlib
import threading

from threadpoolctl import ThreadpoolController

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
    main one (a fit in a Dask worker's thread) leaves it as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _STATE["depth"] > 0:
        limiter = contextlib.nullcontext()
    else:
        if _STATE["controller"] is None:
            _STATE["controller"] = ThreadpoolController()
        limiter = _STATE["controller"].limit(limits=1, user_api="blas")
    _STATE["depth"] += 1
    try:
        with limiter:
            yield
    finally:
        _STATE["depth"] -= 1
