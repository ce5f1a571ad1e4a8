"""rsrank._kernels.epoch: the objective's gradient is X transpose lambda and
matches finite differences; threads change no bit."""

import numpy as np
import pytest

from kernel_reference import discount_table
from rsrank import _kernels as K
from rsrank._kernels import epoch
from rsrank.evaluation import metrics as M


@pytest.mark.parametrize("dense", [True, False])
def test_objective_gradient_is_x_transpose_lambda_and_matches_finite_differences(dense):
    import scipy.sparse as sp

    rng = np.random.default_rng(11)
    sizes = np.array([6, 9, 4])
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n, d = offsets[-1], 4
    X = rng.uniform(size=(n, d))
    X[X < 0.3] = 0.0
    y = rng.integers(0, 3, n)
    gains = M.gain_values(y)
    table, cut = discount_table(sizes.max(), "log2", 5)
    inv = 1.0 / K.ideal_dcg(gains, offsets, table)
    w = rng.normal(size=d)
    levels = np.zeros(n, dtype=np.int64)
    pairs = epoch.Pairs(gains, y, inv, table, cut, 0, False, levels, np.full(3, -1))

    def rows_of(X):
        csr = sp.csr_matrix(X)
        if dense:
            return epoch.Rows(np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int32), X, offsets)
        return epoch.Rows(csr.data, csr.indices, csr.indptr, np.zeros((0, 0)), offsets)

    def work():
        return epoch.Work(np.zeros(n), np.zeros(n), np.zeros((1, d)), np.full(n, -1), np.zeros(d))

    def objective(v, scale=np.zeros(0), X=X, parallel=False):
        grad = np.zeros(d)
        rows = rows_of(X)
        value = epoch.objective(rows, pairs, scale, v, work(), grad,
                                epoch.epoch_kernels(rows)[int(parallel)])
        return value, grad

    value, grad = objective(w)
    # the gradient is X^T lambda with the per-query lambdas
    lam = np.zeros(n)
    for q in range(3):
        lo, hi = offsets[q], offsets[q + 1]
        K.query_lambdas(X[lo:hi] @ w, gains[lo:hi], y[lo:hi], table, cut, inv[q], 0, False,
                        lam[lo:hi])
    np.testing.assert_allclose(grad, X.T @ lam, rtol=1e-12)
    h = 1e-6  # small enough that no two documents change order
    for c in range(d):
        step = np.zeros(d)
        step[c] = h
        fd = (objective(w + step)[0] - objective(w - step)[0]) / (2 * h)
        assert grad[c] == pytest.approx(fd, rel=1e-5, abs=1e-8)
    parallel = objective(w, parallel=True)[1]
    np.testing.assert_allclose(parallel, grad, rtol=1e-12)
    # a per-feature scale is the objective of the scaled columns X * scale
    scale = rng.uniform(0.1, 10, size=d)
    value_scaled, grad_scaled = objective(w, scale)
    value_copy, grad_copy = objective(w, X=np.ascontiguousarray(X * scale))
    assert value_scaled == pytest.approx(value_copy, rel=1e-12)
    np.testing.assert_allclose(grad_scaled, grad_copy, rtol=1e-11)


@pytest.mark.parametrize("batch_size", [None, 3, 7])
def test_threads_share_the_gradient_rows_and_change_no_bit(batch_size):
    """The batch's t-th query goes to gradient row t % rows; however many
    threads share the 8 rows, each row adds its queries in batch order, so
    every split gives the serial build's weights bit for bit, and every
    query is counted once (the loss is the sum of the queries')."""
    import numba

    from rsrank import QueryData
    from rsrank.learning.objective import Objective, workspace

    rng = np.random.default_rng(5)
    sizes = rng.integers(2, 30, 41)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(len(qid), 5))
    data = QueryData(X, rng.integers(0, 4, len(qid)), qid)
    pairs, rows = Objective().pairs(data), data.rows()
    order = rng.permutation(data.n_queries).astype(np.int64)
    batch = data.n_queries if batch_size is None else batch_size
    steps = epoch.Steps(0.05, 0.0, 0.01, 1, 0.5, False)

    def run_epoch(kernel, threads):
        w = rng.normal(size=5) if threads is None else start.copy()
        loss, _ = kernel(rows, pairs, steps, np.zeros(0), order, batch, w, np.zeros(6), 0,
                         workspace(data, threads or 1))
        return loss, w

    start = run_epoch(epoch.epoch_serial, None)[1]
    loss, w = run_epoch(epoch.epoch_serial, 1)
    lam = np.zeros(data.n_rows)
    if batch_size is None:  # one step: the loss is the queries' at the start
        scores = X[data.order] @ start
        factors = Objective().query_factors(data)
        expected = sum(K.query_lambdas(scores[lo:hi], pairs.gains[lo:hi], pairs.labels[lo:hi],
                                       pairs.discount, pairs.cutoff, factors[q], pairs.loss,
                                       False, lam[lo:hi])
                       for q, (lo, hi) in enumerate(zip(data.offsets[:-1], data.offsets[1:])))
        assert loss == pytest.approx(expected, rel=1e-12)
    was = numba.get_num_threads()
    try:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        for threads in (1, 2, 3, 5, 8):  # up to the 8 rows: beyond, a row per thread
            got_loss, got = run_epoch(epoch.epoch_parallel, threads)
            np.testing.assert_array_equal(got, w)
            assert got_loss == loss
    finally:
        numba.set_num_threads(was)
