"""Thread counts: ``n_jobs`` as scikit-learn spells it, and numba's pool."""

import numba


def threads(n_jobs):
    """The number of threads ``n_jobs`` asks for: None is 1, -1 every core
    numba may use, -2 all but one, and so on; never more than numba has."""
    if n_jobs is None:
        return 1
    available = numba.config.NUMBA_NUM_THREADS
    if n_jobs < 0:
        return max(1, available + 1 + n_jobs)
    return max(1, min(int(n_jobs), available))


class numba_threads:
    """Temporarily set numba's thread count."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.previous = numba.get_num_threads()
        if self.n != self.previous:
            numba.set_num_threads(self.n)

    def __exit__(self, *exc):
        if self.n != self.previous:
            numba.set_num_threads(self.previous)
