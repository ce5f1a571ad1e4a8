"""numba's on-disk cache of the kernels shared by processes that compile at
once: every build saved, each under its own argument types."""

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNEL = textwrap.dedent("""
    from rsrank._kernels.build import njit

    @njit(cache=True)
    def total(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * 2 + 1
        return s
    """)

#: compile ``total`` for one dtype, starting at a given time
COMPILE = textwrap.dedent("""
    import sys, time
    import numpy as np
    sys.path[:0] = sys.argv[1:3]
    import kernel
    while time.time() < float(sys.argv[4]):
        time.sleep(0.001)
    kernel.total(np.arange(5).astype(sys.argv[3]))
    """)

#: load ``total`` for every dtype: its results, cache hits and misses
LOAD = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path[:0] = sys.argv[1:3]
    import kernel
    print([kernel.total(np.arange(5).astype(t)) for t in sys.argv[3:]],
          sum(kernel.total.stats.cache_hits.values()),
          sum(kernel.total.stats.cache_misses.values()))
    """)

DTYPES = ["float64", "float32", "int64", "int32", "int16", "uint8"]


def test_builds_compiled_at_once_by_several_processes_are_each_loaded_for_their_own_types(tmp_path):
    """Six processes compile six argument types of one kernel at the same
    moment into an empty cache. numba alone gives every one of them data
    file 1: a later process then misses most builds, or loads one compiled
    for other types ("can't unbox array", or wrong sums). Under the
    cache's lock a fresh process loads all six and each sums right."""
    (tmp_path / "kernel.py").write_text(KERNEL)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    start = time.time() + 2
    children = [subprocess.Popen([sys.executable, "-c", COMPILE, str(tmp_path), REPO, dtype,
                                  str(start)], env=env) for dtype in DTYPES]
    assert [child.wait(timeout=300) for child in children] == [0] * len(DTYPES)
    loaded = subprocess.run([sys.executable, "-c", LOAD, str(tmp_path), REPO, *DTYPES], env=env,
                            capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split("] ")[1].split() == [str(len(DTYPES)), "0"]
    assert loaded.stdout.startswith("[" + ", ".join(["25.0"] * len(DTYPES)))



def fits():
    """Scores of fits by every kind of kernel: dense and CSR rows, float64
    and float32, one thread and two, the additive epoch with a pair."""
    import scipy.sparse as sp

    from conftest import small_queries
    from rsrank import RSRank

    X, y, qid = small_queries(6, 8)
    cases = [(X, {}), (sp.csr_matrix(X.astype(np.float32)), {"batch_size": None, "n_jobs": 2}),
             (X, {"additive": True, "interactions": 1, "max_bins": 8})]
    return [RSRank(max_iter=3, **params).fit(data, y, qid=qid).predict(data).tolist()
            for data, params in cases]


def test_the_kernels_run_as_python_with_numbas_compiler_off_and_agree_with_their_builds():
    """With ``NUMBA_DISABLE_JIT=1`` (numba's switch for debugging a kernel
    as Python) the package imports and fits, and every kind of fit gives the
    scores of the compiled kernels: the builds do what their Python says."""
    here = os.path.dirname(os.path.abspath(__file__))
    child = ("import json, sys, numba; assert numba.config.DISABLE_JIT; "
             "sys.path[:0] = sys.argv[1:3]; from test_kernel_cache import fits; "
             "print(json.dumps(fits()))")
    run = subprocess.run([sys.executable, "-c", child, os.path.dirname(here), here],
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NUMBA_DISABLE_JIT": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    python, compiled = json.loads(run.stdout), fits()
    assert len(python) == len(compiled) == 3
    for as_python, as_built in zip(python, compiled):
        assert len(as_python) == 48 and np.ptp(as_built) > 0
        np.testing.assert_allclose(as_python, as_built, rtol=1e-9, atol=1e-12)
