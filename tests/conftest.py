import os
from pathlib import Path


def _blas_threads_per_worker():
    """Under pytest-xdist, BLAS threads shared out among the workers, as
    scikit-learn's own tests do: each process's OpenBLAS otherwise starts a
    thread per core, whose busy waiting after every call takes the cores
    from the other workers (on 2 cores a click test ran 5x slower beside a
    second worker). Set before NumPy loads its BLAS, and inherited by the
    processes the tests start; None outside xdist."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not workers:
        return None
    allowed = max(1, (os.cpu_count() or 1) // int(workers))
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(allowed))
    return allowed


BLAS_THREADS = _blas_threads_per_worker()

import numpy as np  # noqa: E402 (after the BLAS threads are set)
import pytest  # noqa: E402
import scipy.sparse as sp  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def ohsumed_root():
    root = SHARED_DATA / "OHSUMED"
    if not (root / "Fold1").is_dir():
        pytest.skip("OHSUMED folds not present in ../shared/data")
    return root


@pytest.fixture(scope="session")
def lightgbm_example():
    root = SHARED_DATA / "LightGBM-lambdarank-example"
    if not (root / "rank.train.gz").is_file():
        pytest.skip("LightGBM lambdarank example not present in ../shared/data")
    return root


@pytest.fixture
def data_dir(tmp_path):
    """``tmp_path/data/train.txt``: 12 queries of 6 documents, 2 features."""
    directory = tmp_path / "data"
    directory.mkdir()
    rows = [f"{(d + q) % 3} qid:{q} 1:{d / 6:.3f} 2:{(q * d) % 5 / 5:.3f}\n"
            for q in range(12) for d in range(6)]
    (directory / "train.txt").write_text("".join(rows))
    return directory


@pytest.fixture(scope="session")
def bundled_root():
    return REPO / "rsrank" / "data" / "synthetic"


def run_cli(argv, capsys):
    """Exit code and stderr lines of ``rsrank argv`` run in this process
    (argparse's errors included)."""
    from rsrank.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.err.strip().splitlines()


def check_codes_against_indicators(X, y, qid, encoding, pair_weight):
    """An encoding's loss, gradient and scores through the kernels' tables
    and histograms equal the linear model's on its explicit 0/1 step
    indicators (the same function, computed without them)."""
    from rsrank import _kernels as K
    from rsrank.learning.objective import Objective
    from rsrank.reading.querydata import QueryData

    data = QueryData(X, y, qid)
    steps = QueryData(encoding.indicators(X), y, qid)
    objective = Objective(pair_weight=pair_weight)
    w = np.random.default_rng(2).normal(size=encoding.n_steps)
    coded = objective.loss_and_gradient(data, w, view=encoding)
    linear = objective.loss_and_gradient(steps, w)
    assert coded[0] == pytest.approx(linear[0], rel=1e-12)
    np.testing.assert_allclose(coded[1], linear[1], rtol=1e-10, atol=1e-12)
    rows = data.rows(encoding)
    out = K.coded_scores_all(rows, w, np.zeros(K.table_size(rows)), np.zeros(data.n_rows))
    np.testing.assert_allclose(out, steps.X @ w, rtol=1e-12, atol=1e-12)
    return rows


def blas_threads():
    """The thread count of every BLAS library the process has loaded that
    threadpoolctl can read, as a set (what rsrank.learning._blas holds)."""
    from threadpoolctl import threadpool_info

    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def small_queries(n_queries=24, n_docs=12, seed=0):
    """Five features (two informative), graded labels, qids from 100."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n_queries * n_docs, 5))
    latent = X @ np.array([2.0, -1.0, 0.0, 0.5, 0.0]) + 0.5 * rng.normal(size=len(X))
    y = np.digitize(latent, np.quantile(latent, [0.6, 0.85]))
    qid = np.repeat(np.arange(100, 100 + n_queries), n_docs)
    return X, y, qid


@pytest.fixture(scope="session", autouse=True)
def warm_kernels(tmp_path_factory):
    """Load (or compile) every kernel variant once per session, before any
    test: dense and CSR, float64 and float32, one thread and two, so that
    no test's run time includes it. Under pytest-xdist the workers share
    the work: each takes the variants in its own order, one variant at a
    time under a lock, so that a variant one worker compiles the others
    load from numba's cache instead of compiling it again."""
    import fcntl
    import os

    from rsrank import RSRank

    X, y, qid = small_queries(3, 4)
    variants = [(data, params) for data in (X, sp.csr_matrix(X), X.astype(np.float32),
                                            sp.csr_matrix(X.astype(np.float32)))
                for params in ({}, {"batch_size": None, "n_jobs": 2})]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    shift = int(worker[2:]) if worker[2:].isdigit() else 0
    locks = tmp_path_factory.getbasetemp().parent  # shared by the session's workers
    for i in range(len(variants)):
        index = (i + shift * len(variants) // 2) % len(variants)
        data, params = variants[index]
        with open(locks / f"warm-kernels-{index}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            RSRank(max_iter=1, **params).fit(data, y, qid=qid)


def weights_and_view(X, y, qid, rng, additive):
    """Random weights and the view of the rows a model of them reads: the
    rows as they are, or (``additive``) the bin steps of a small additive
    fit, with random weights of its length."""
    w = rng.normal(size=X.shape[1])
    if not additive:
        return w, "none"
    from rsrank import RSRank

    model = RSRank(additive=True, max_bins=4, max_iter=2).fit(X, y, qid=qid).model_
    return rng.normal(size=len(model.coef)), model.view


def pytest_collection_modifyitems(config, items):
    """The slow tests first (in their order), so that the workers of ``-n
    auto`` start on them and the short ones fill in around them, instead of
    one worker finishing a long test alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def ranked_queries(n_queries=3, n_docs=15, seed=0):
    """``(y, qid, scores)`` of ``n_queries`` of ``n_docs`` documents (qids
    from 10 on), grades 0 to 3 and a ranker's random scores: what the click
    simulators and readers are tried on."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, size=n_queries * n_docs)
    qid = np.repeat(np.arange(10, 10 + n_queries), n_docs)
    scores = rng.normal(size=len(y))
    return y, qid, scores


def pytest_configure(config):
    """The BLAS threads of a worker, for the libraries already loaded when
    the environment was set (a plugin may import NumPy first)."""
    if BLAS_THREADS is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(BLAS_THREADS, user_api="blas")
